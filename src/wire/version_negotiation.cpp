#include "wire/version_negotiation.h"

#include <algorithm>
#include <string>

namespace tent::wire {

Result<uint8_t> negotiate_version(uint8_t local_min, uint8_t local_max, uint8_t peer_min, uint8_t peer_max) {
    const uint8_t lo = std::max(local_min, peer_min);
    const uint8_t hi = std::min(local_max, peer_max);
    if (peer_min == 0 || peer_min > peer_max || lo > hi)
        return Status(Code::Unsupported, "no common protocol version: this side speaks " +
                                             std::to_string(local_min) + ".." + std::to_string(local_max) +
                                             ", peer " + std::to_string(peer_min) + ".." +
                                             std::to_string(peer_max));
    return hi;
}

} // namespace tent::wire
