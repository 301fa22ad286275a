// Liveness of a TCP rail from the traffic itself. TCP can sit for minutes on
// a dead path before the kernel gives up, so each side sends a Heartbeat
// when it has sent nothing for one interval, and declares the rail dead when
// it has received nothing (no frame of any kind) for `dead_after` intervals.
// Pure: it is told when frames go out and come in and asked about a time.
#pragma once

#include <algorithm>

#include "common/clock.h"

namespace tent::tcp {

struct SilenceParams {
    Duration interval{};    // tcp_heartbeat_interval_ms
    int dead_after = 3;     // tcp_silence_intervals
};

class SilenceDetector {
public:
    SilenceDetector(SilenceParams params, TimePoint start)
        : params_(params), last_sent_(start), last_received_(start) {}

    void on_sent(TimePoint now) { last_sent_ = now; }
    void on_received(TimePoint now) { last_received_ = now; }

    // Nothing went out for a whole interval: time for a heartbeat.
    bool heartbeat_due(TimePoint now) const { return now - last_sent_ >= params_.interval; }
    // Nothing came in for dead_after intervals: the path is gone.
    bool is_dead(TimePoint now) const { return now - last_received_ >= params_.interval * params_.dead_after; }
    // How long the peer has been silent (for the log line).
    Duration silent_for(TimePoint now) const { return now - last_received_; }
    // When each of the two events above becomes true, and the earlier of
    // them, so a caller can bound its wait.
    TimePoint heartbeat_deadline() const { return last_sent_ + params_.interval; }
    TimePoint dead_deadline() const { return last_received_ + params_.interval * params_.dead_after; }
    TimePoint next_deadline() const { return std::min(heartbeat_deadline(), dead_deadline()); }

private:
    SilenceParams params_;
    TimePoint last_sent_;
    TimePoint last_received_;
};

} // namespace tent::tcp
