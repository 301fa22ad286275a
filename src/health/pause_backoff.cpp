#include "health/pause_backoff.h"

#include <algorithm>

namespace tent {

Duration cooldown_for_level(unsigned level, Duration base, Duration cap) {
    unsigned doublings = std::min(level == 0 ? 0u : level - 1, kMaxPauseLevel);
    Duration d = base;
    for (unsigned i = 0; i < doublings && d < cap; ++i) d *= 2;
    return std::min(d, cap);
}

unsigned decay_pause_level(unsigned level, Duration quiet, Duration base) {
    if (base <= Duration::zero() || quiet <= Duration::zero()) return level;
    auto periods = quiet / base;
    if (periods >= 32) return 0;
    return level >> periods;
}

} // namespace tent
