// The failover budget of one request: how many times it has failed over,
// where it stands in its fallback list, and which transports already failed
// for it. Pure functions; each request owns its own state, so one request's
// failures never spend another's budget.
//
// Submit-stage failures (Transport::submit returned an error) and completion
// failures go through the same next_transport(): both are per request.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "common/transport_kind.h"

namespace tent {

inline constexpr const char* kFailoverExhaustedMessage = "Failover limit exceeded, all transports exhausted";

struct FailoverParams {
    int max_attempts = 0;  // failovers allowed per request; 0 = the first failure is final
    static FailoverParams from_config(const Config& config);
};

struct FailoverState {
    int failover_count = 0;         // failovers taken so far
    std::size_t fallback_index = 0; // position of the current transport in the fallback list
    std::uint32_t failed = 0;       // bit per TransportKind that failed for this request

    bool has_failed(TransportKind k) const { return failed & (1u << static_cast<unsigned>(k)); }
};

// The first attempt: fallback[0]. FailoverExhausted if the list is empty
// (no usable transport at all).
Result<TransportKind> first_transport(const std::vector<TransportKind>& fallback, FailoverState& state);

// The current transport failed with `failure`. Returns the next transport in
// the list that has not failed for this request, or
// Status(FailoverExhausted, kFailoverExhaustedMessage) once max_attempts
// failovers were taken or no untried transport remains. A caller-scoped
// failure (bad argument) is returned unchanged: another transport would
// reject the request too.
Result<TransportKind> next_transport(const std::vector<TransportKind>& fallback, const FailoverParams& params,
                                     FailoverState& state, const Status& failure);

} // namespace tent
