// When a spinning driver reads a rail that only arriving bytes give work
// (Rail::idle_unless_readable: a TCP rail with nothing queued). Each look
// costs a system call that usually fails, and while RDMA rails carry the
// traffic the TCP rails stay idle: on one simulated HCA a failing recv()
// on every turn was most of what tent added to ib_send_lat's round trip.
//  - a rail that owes this engine replies (operations in flight on it) or
//    heard from its peer less than kRecentArrival ago is read every turn:
//    traffic on it is under way;
//  - any other is read once every kQuietLookInterval, which bounds the extra
//    wait of the first message after a silence. A sleeping driver polls
//    every rail and is not concerned.
// Pure: the engine (skip_quiet_rails) gathers the state.
#pragma once

#include "common/clock.h"

namespace tent {

inline constexpr Duration kRecentArrival = std::chrono::milliseconds(1);
inline constexpr Duration kQuietLookInterval = std::chrono::microseconds(50);

struct QuietRailView {
    bool awaiting_replies = false;  // operations of this engine in flight on the rail
    Duration silent_for{};          // since bytes last arrived on it
    Duration since_look{};          // since a driver last read it
};

// Whether this turn reads the rail.
bool quiet_rail_due(const QuietRailView& rail);

} // namespace tent
