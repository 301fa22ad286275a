#include "common/rate_limiter.h"

#include <algorithm>

namespace tent {

RateLimiter::Decision RateLimiter::admit(TimePoint now) {
    if (per_second_ == 0) {
        // Unlimited, but still report what an earlier limit dropped.
        Decision d{true, suppressed_};
        suppressed_ = 0;
        return d;
    }
    if (!started_) {
        started_ = true;
        last_ = now;
    } else if (now > last_) {
        double secs = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min<double>(burst_, tokens_ + secs * per_second_);
        last_ = now;
    }
    if (tokens_ >= 1.0) {
        tokens_ -= 1.0;
        Decision d{true, suppressed_};
        suppressed_ = 0;
        return d;
    }
    ++suppressed_;
    return {false, 0};
}

void RateLimiter::reconfigure(std::uint32_t burst, std::uint32_t per_second) {
    burst_ = burst;
    per_second_ = per_second;
    tokens_ = started_ ? std::min<double>(tokens_, burst) : burst;
}

} // namespace tent
