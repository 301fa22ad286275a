// The order of atomics to one peer: they execute at the target in the
// order they were started, as an adapter executes a queue pair's atomics,
// with several in flight. Pure; the engine keeps one AtomicOrder per
// connection and asks it before starting or replaying an atomic.
//
// A rail executes what it carries in order (a QP; a TCP socket whose target
// engine takes its frames in turn); rails keep no order among themselves.
// So while atomics are open (started, not finished) a new one goes on the
// rail the open ones went on, behind them, as long as all of them are
// plainly on their way there (posted, or held back in that rail's queue,
// which keeps its order). Once one is not -- an attempt failed, a post was
// refused for a while, it waits for a usable rail -- new atomics wait, in
// start order, until every open one has finished; and a failed one is sent
// again only once it is the oldest open one, so that no replay overtakes an
// atomic started before it. (A rail that dies fails what it carried in
// posting order: the replays then go one by one, oldest first.)
// Exactly-once is atomic_replay.h's; this keeps the order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace tent {

struct AtomicOrder {
    std::deque<std::uint64_t> open;     // op ids of the started, unfinished ones, in start order
    std::size_t rail = 0;               // the rail the open ones went on (while some are open)
    bool in_step = true;                // every open one is posted or held on `rail`, in order
    std::deque<std::uint64_t> waiting;  // op ids of atomics not yet started, in start order
};

// May the next atomic start now, behind those waiting (asked before it is
// counted open)? rail_usable: whether order.rail takes posts now.
bool atomic_may_start(const AtomicOrder& order, bool rail_usable);

// The rail a starting atomic goes on (asked once it is counted open):
// `chosen` (the device selector's pick) when no other is open, else the
// open ones' rail; nullopt when that rail is not among those the atomic may
// use (it must then wait until the others finished).
std::optional<std::size_t> atomic_rail(const AtomicOrder& order, std::size_t chosen, bool open_rail_allowed);

// May the open atomic `op` be sent again now? Only as the oldest open one.
bool atomic_may_replay(const AtomicOrder& order, std::uint64_t op);

} // namespace tent
