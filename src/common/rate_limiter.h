// Token bucket deciding whether one more log line from a call site may be
// written; pure over an injected time so tests need no sleeps.
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
    void reconfigure(std::uint32_t burst, std::uint32_t per_second);

private:
    std::uint32_t burst_;
    std::uint32_t per_second_;
    double tokens_;
    TimePoint last_{};
    bool started_ = false;
    std::uint64_t suppressed_ = 0;
};

} // namespace tent
