// When a paused rail is probed (LNet's recovery pings): exponential backoff
// from probe_base_ms to probe_max_ms, so a rail comes back without waiting for
// traffic, and a dead one costs few probes.
//
// A rail paused for the n-th time in a row starts its probes n-1 doublings
// later, so a flapping rail that answers probes between flaps is damped too.
#pragma once

#include "common/clock.h"

namespace tent {

// Delay before probe number `attempt` (0-based): min(base * 2^attempt, cap).
Duration next_probe_delay(unsigned attempt, Duration base, Duration cap);

class ProbeSchedule {
public:
    ProbeSchedule() = default;
    ProbeSchedule(Duration base, Duration cap) : base_(base), cap_(cap) {}

    // A pause at `pause_level` (1 = first) began at `now`.
    void start(TimePoint now, unsigned pause_level);
    // No more probes (the rail recovered or may not be probed).
    void stop() { active_ = false; }
    // A probe was sent at `now`: the next one waits twice as long (capped).
    void sent(TimePoint now);

    bool active() const { return active_; }
    bool due(TimePoint now) const { return active_ && now >= next_at_; }
    TimePoint next_at() const { return next_at_; }
    unsigned attempt() const { return attempt_; }

private:
    Duration base_{};
    Duration cap_{};
    bool active_ = false;
    unsigned attempt_ = 0;  // exponent used for the next delay
    TimePoint next_at_{};
};

} // namespace tent
