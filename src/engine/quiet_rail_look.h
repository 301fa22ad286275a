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

// A turn whose look found every rail quiet may end right there: the rest
// of a turn (held pieces, rail care, timers, statistics) cost more than
// the look itself, and half of a spinning driver's turn is what an
// arriving message waits on average before it is read (8 B NetPIPE over
// btl tent on two TCP rails: three fifths of an idle turn's instructions
// were that rest). Rail care and the timers (probes, silence limits,
// re-arming, cooldowns: all in milliseconds) run at least every
// kCareInterval, and not more often on a busy driver: a turn that found a
// message hands it over without them.
inline constexpr Duration kCareInterval = std::chrono::microseconds(50);

struct TurnLook {
    bool rails_quiet = false;  // every rail idle and none readable
    bool found_work = false;   // new requests or connections, a service turn, receives changed
    bool work_waits = false;   // held, parked, deferred or queued requests, atomics, completions or stats to publish
    Duration since_care{};     // since rail care and the timers last ran
};

// Whether the turn ends after its look at the rails.
bool turn_ends_after_look(const TurnLook& turn);

} // namespace tent
