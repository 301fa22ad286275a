// A verbs rail's tunables, built from the knob table (never typed twice).
#pragma once

#include <cstdint>

#include "common/status.h"

namespace tent {

class Config;

struct VerbsRailParams {
    std::uint8_t qp_timeout = 0;        // verbs_qp_timeout: 4.096 us * 2^n local ACK timeout
    std::uint8_t retry_cnt = 0;         // verbs_retry_cnt
    std::uint8_t rnr_retry = 0;         // verbs_rnr_retry (7 = forever)
    std::uint32_t max_send_wr = 0;      // verbs_max_send_wr: outstanding ops per rail
    std::uint32_t recv_buffers = 0;     // verbs_recv_buffers
    std::uint32_t recv_buffer_size = 0; // verbs_recv_buffer_size
    int gid_index = -1;                 // verbs_gid_index (-1 = first RoCE v2 IPv4 GID)

    static VerbsRailParams from_config(const Config& config);
};

} // namespace tent
