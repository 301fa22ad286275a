#include "transport/verbs/verbs_params.h"

#include "config/config.h"

namespace tent {

VerbsRailParams VerbsRailParams::from_config(const Config& c) {
    // The knob table's bounds already fit each field's type.
    VerbsRailParams p;
    p.qp_timeout = static_cast<std::uint8_t>(c.get_int(Knob::VerbsQpTimeout));
    p.retry_cnt = static_cast<std::uint8_t>(c.get_int(Knob::VerbsRetryCnt));
    p.rnr_retry = static_cast<std::uint8_t>(c.get_int(Knob::VerbsRnrRetry));
    p.max_send_wr = static_cast<std::uint32_t>(c.get_int(Knob::VerbsMaxSendWr));
    p.recv_buffers = static_cast<std::uint32_t>(c.get_int(Knob::VerbsRecvBuffers));
    p.recv_buffer_size = static_cast<std::uint32_t>(c.get_int(Knob::VerbsRecvBufferSize));
    p.gid_index = static_cast<int>(c.get_int(Knob::VerbsGidIndex));
    return p;
}

} // namespace tent
