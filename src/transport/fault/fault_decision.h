// The fault decorator's decisions, as pure functions over its parameters and
// a small state (a random stream and a post counter): the same seed gives the
// same faults, and tests drive them without a rail.
#pragma once

#include <cstdint>

#include "transport/fault/fault_params.h"

namespace tent {

struct FaultState {
    std::uint64_t random = 1;  // splitmix64 state
    std::uint64_t posts = 0;   // posts seen so far
};

// The state of the rail with this ordinal (0, 1, ... in the order the engine
// added them): rails draw different streams from one seed.
FaultState fault_state_for(std::uint64_t seed, std::uint64_t rail_ordinal);

// A post arrives: true when it must fail at submit (past fail_after_n, or
// drawn at post_fail_rate).
bool post_fails(const FaultParams& params, FaultState& state);

// A completion with a good status arrives: true when it must report an error
// instead (drawn at status_error_rate).
bool status_corrupted(const FaultParams& params, FaultState& state);

} // namespace tent
