#include "health/probe_schedule.h"

#include <algorithm>

namespace tent {

Duration next_probe_delay(unsigned attempt, Duration base, Duration cap) {
    if (base <= Duration::zero()) return std::max(cap, Duration::zero());
    Duration d = base;
    for (unsigned i = 0; i < attempt && d < cap; ++i) d *= 2;
    return std::min(d, cap);
}

void ProbeSchedule::start(TimePoint now, unsigned pause_level) {
    active_ = true;
    attempt_ = pause_level == 0 ? 0 : pause_level - 1;
    next_at_ = now + next_probe_delay(attempt_, base_, cap_);
}

void ProbeSchedule::sent(TimePoint now) {
    if (!active_) return;
    // Stop doubling once capped, so the exponent cannot grow without bound.
    if (next_probe_delay(attempt_, base_, cap_) < cap_) ++attempt_;
    next_at_ = now + next_probe_delay(attempt_, base_, cap_);
}

} // namespace tent
