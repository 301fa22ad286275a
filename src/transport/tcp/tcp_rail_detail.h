// Helpers the TcpRail files share (tcp_rail*.cpp); not part of the interface.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/clock.h"

namespace tent::tcp::detail {

inline std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

inline std::uint64_t timestamp_ns(TimePoint t) {
    return static_cast<std::uint64_t>(t.time_since_epoch().count());
}

} // namespace tent::tcp::detail
