// Time this engine watched: the engine's deadlines that judge a peer (a
// sync request unanswered, pieces parked with no usable rail, both bounded
// by failover_timeout_ms) run on it instead of wall time.
//
// Why: a process that was not scheduled for seconds on a loaded host, or
// whose progress loop stalled, has no evidence about its peer for that
// time: the peer's answer may be waiting unread, or the peer may have been
// starved just as long. Measured in wall time, its first turn after such a
// gap gave the peer up ("peer unreachable") though nothing had been tried.
// Here a step between two turns longer than max_step (a running driver
// turns at least that often) counts as max_step, so a healthy but slow
// peer keeps its allowance, and a dead one is still given up, later by at
// most the time this process did not watch.
//
// Pure: told the wall time of each turn, asked for the watched time.
#pragma once

#include <algorithm>

#include "common/clock.h"

namespace tent {

class WatchedTime {
public:
    WatchedTime(Duration max_step, TimePoint start) : max_step_(max_step), last_look_(start), watched_(start) {}

    // A turn at wall time `now`: returns the watched time then.
    TimePoint look(TimePoint now) {
        watched_ = at(now);
        last_look_ = std::max(last_look_, now);
        return watched_;
    }
    // The watched time at `now` without recording a turn.
    TimePoint at(TimePoint now) const {
        return watched_ + std::clamp<Duration>(now - last_look_, Duration::zero(), max_step_);
    }
    // Wall time not counted so far.
    Duration unwatched() const { return last_look_ - watched_; }

private:
    Duration max_step_;
    TimePoint last_look_;
    TimePoint watched_;
};

} // namespace tent
