// Token bucket deciding whether one more log line from a call site may be
// written; pure over an injected time so tests need no sleeps.
//
// A site may write `burst` lines at once, then `per_second` lines a second.
// Dropped lines are counted and the count travels with the next admitted
// line ("N similar messages suppressed"), so a storm stays visible without
// flooding the log.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace tent {

class RateLimiter {
public:
    // per_second == 0 means unlimited.
    RateLimiter(std::uint32_t burst, std::uint32_t per_second)
        : burst_(burst), per_second_(per_second), tokens_(burst) {}

    struct Decision {
        bool admit;
        // Lines dropped since the last admitted one (reported with it).
        std::uint64_t suppressed_before;
    };

    Decision admit(TimePoint now);
    // New limits. A limiter that has not admitted anything yet starts with a
    // full bucket of the new burst; a running one keeps what it has left (at
    // most the new burst), so reconfiguring cannot restart a storm.
    void reconfigure(std::uint32_t burst, std::uint32_t per_second);
    // Lines dropped since the last admitted one, not yet reported.
    std::uint64_t pending_suppressed() const { return suppressed_; }

private:
    std::uint32_t burst_;
    std::uint32_t per_second_;
    double tokens_;
    TimePoint last_{};
    bool started_ = false;
    std::uint64_t suppressed_ = 0;
};

} // namespace tent
