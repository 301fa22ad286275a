// Helpers the TcpRail files share (tcp_rail*.cpp); not part of the interface.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <string>

#include "common/clock.h"

namespace tent::tcp::detail {

inline std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

// What one read into the receive buffer asks for beyond the frame being
// cut, and what the read that ends a directly received frame takes of what
// follows it (tcp_rail_receive.cpp, tcp_rail_direct.cpp).
inline constexpr std::size_t kReceiveChunk = 16 * 1024;

// recv() returned got bytes of room: the socket is empty and the read was
// small, so the rail stops reading until the next turn (tcp_rail_receive.cpp).
bool emptied_socket(std::size_t got, std::size_t room);
// The read that ended a read's data (its ReadResponse) got fewer bytes
// than it had room for: the socket was empty behind it. Unless data of
// another read on this rail is still due, nothing more comes until the
// rail sends again, so the rail stops reading until the next turn
// (tcp_rail_direct.cpp), whatever the size of that read.
bool read_data_ended_stream(std::size_t got, std::size_t room, bool more_read_data_due);

inline std::uint64_t timestamp_ns(TimePoint t) {
    return static_cast<std::uint64_t>(t.time_since_epoch().count());
}

} // namespace tent::tcp::detail
