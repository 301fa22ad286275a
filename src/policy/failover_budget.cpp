#include "policy/failover_budget.h"

#include "common/log.h"

namespace tent {

namespace {

std::uint32_t bit(TransportKind k) { return 1u << static_cast<unsigned>(k); }

Status exhausted() { return Status(Code::FailoverExhausted, kFailoverExhaustedMessage); }

} // namespace

FailoverParams FailoverParams::from_config(const Config& config) {
    return FailoverParams{static_cast<int>(config.get_int(Knob::MaxFailoverAttempts))};
}

Result<TransportKind> first_transport(const std::vector<TransportKind>& fallback, FailoverState& state) {
    state = FailoverState{};
    if (fallback.empty()) return exhausted();
    return fallback.front();
}

Result<TransportKind> next_transport(const std::vector<TransportKind>& fallback, const FailoverParams& params,
                                     FailoverState& state, const Status& failure) {
    if (failure.scope() == Scope::Caller) return failure;
    if (state.fallback_index < fallback.size()) state.failed |= bit(fallback[state.fallback_index]);

    if (state.failover_count >= params.max_attempts) {
        TENT_DEBUG("failover budget spent", "%d of %d failovers used; last error: %s", state.failover_count,
                   params.max_attempts, failure.to_string().c_str());
        return exhausted();
    }
    std::size_t from = state.fallback_index;
    for (std::size_t i = from + 1; i < fallback.size(); ++i) {
        if (state.has_failed(fallback[i])) continue;
        state.fallback_index = i;
        ++state.failover_count;
        TENT_DEBUG("failover", "failover %d: %s -> %s after: %s", state.failover_count,
                   from < fallback.size() ? transport_kind_name(fallback[from]) : "?", transport_kind_name(fallback[i]),
                   failure.to_string().c_str());
        return fallback[i];
    }
    TENT_DEBUG("failover list spent", "no untried transport left; last error: %s", failure.to_string().c_str());
    return exhausted();
}

} // namespace tent
