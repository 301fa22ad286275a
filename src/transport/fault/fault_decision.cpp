#include "transport/fault/fault_decision.h"

namespace tent {

namespace {

// splitmix64: small, well mixed, the same sequence everywhere (the standard
// distributions are not specified bit for bit).
std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// No draw at all for 0 and 1, so those rates cost nothing and are exact.
bool roll(double rate, std::uint64_t& state) {
    if (rate <= 0.0) return false;
    if (rate >= 1.0) return true;
    const double u = static_cast<double>(next_random(state) >> 11) * 0x1.0p-53;  // [0, 1)
    return u < rate;
}

} // namespace

FaultState fault_state_for(std::uint64_t seed, std::uint64_t rail_ordinal) {
    std::uint64_t s = seed ^ (rail_ordinal * 0xd1b54a32d192ed03ULL);
    return FaultState{next_random(s), 0};
}

bool post_fails(const FaultParams& params, FaultState& state) {
    ++state.posts;
    if (params.fail_after_n >= 0 && state.posts > static_cast<std::uint64_t>(params.fail_after_n)) return true;
    return roll(params.post_fail_rate, state.random);
}

bool status_corrupted(const FaultParams& params, FaultState& state) {
    return roll(params.status_error_rate, state.random);
}

} // namespace tent
