// What the fault-injecting transport does wrong. Its own struct, not global
// knobs: each decorated transport in a test gets its own faults.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace tent {

struct FaultSpec {
    double submit_failure_rate = 0.0;         // probability a submit fails, [0, 1]
    double completion_corruption_rate = 0.0;  // probability a good completion reports an error, [0, 1]
    std::int64_t fail_after_n_submits = -1;   // submits after the first N all fail; -1 = never
    bool fail_at_install = false;             // install() fails
    Duration added_delay{0};                  // completions held until submit time + delay
    std::uint64_t seed = 1;                   // same seed, same faults
};

} // namespace tent
