// The kernel's counters of one TCP connection (getsockopt TCP_INFO) that a
// rail's health decisions use: data segments sent and retransmitted (loss,
// loss_detector.h) and segments received of any kind (liveness while the
// stream is stalled, silence_detector.h).
#pragma once

#include <cstdint>

#include "common/status.h"

namespace tent::tcp {

struct TcpCounters {
    std::uint32_t data_segments_out = 0; // tcpi_data_segs_out
    std::uint32_t retransmitted = 0;     // tcpi_total_retrans
    std::uint32_t segments_in = 0;       // tcpi_segs_in
    std::uint32_t duplicates = 0;        // tcpi_dsack_dups (Linux 5.0; 0 before)
};

// Unsupported when the kernel's tcp_info is too old to have these fields
// (before Linux 4.6).
Result<TcpCounters> read_tcp_counters(int fd);

} // namespace tent::tcp
