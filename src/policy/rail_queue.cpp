#include "policy/rail_queue.h"

namespace tent {

RailQueueParams RailQueueParams::from_config(const Config& config) {
    RailQueueParams p;
    p.bytes = static_cast<std::uint64_t>(config.get_int(Knob::RailQueueBytes));
    return p;
}

bool rail_queue_admits(std::uint64_t posted, const RailQueueParams& params) {
    return params.bytes == 0 || posted < params.bytes;
}

} // namespace tent
