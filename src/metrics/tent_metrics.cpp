#include "metrics/tent_metrics.h"

namespace tent {
namespace {

template <typename F>
Status take(Result<F*> r, F** out) {
    if (!r) return r.status();
    *out = *r;
    return Status::ok();
}

constexpr RailState kAllStates[] = {RailState::Healthy, RailState::Degraded, RailState::Paused};

} // namespace

const char* error_class_name(Code code) {
    switch (scope_of(code)) {
    case Scope::None: return "none";
    case Scope::Caller: return "caller";
    case Scope::Operation: return "operation";
    case Scope::Rail: return "rail";
    case Scope::Endpoint: return "endpoint";
    case Scope::Process: return "process";
    }
    return "process";
}

Result<TentMetrics> TentMetrics::create(Registry& r) {
    TentMetrics m;
    Status s = take(r.counter<2>("tent_transport_failover_total",
                                 "Requests moved from one transport to another after a failure",
                                 {"from", "to"}),
                    &m.failovers_);
    if (s) s = take(r.counter<1>("tent_rail_pauses_total",
                                 "Times a rail was paused after repeated errors or a fault event",
                                 {"rail"}),
                    &m.pauses_);
    if (s) s = take(r.counter<2>("tent_rail_recoveries_total",
                                 "Times a paused rail returned to service, by what brought it back",
                                 {"rail", "reason"}),
                    &m.recoveries_);
    if (s) s = take(r.counter<1>("tent_errors_total",
                                 "Errors seen, by class: caller, operation, rail, endpoint, process",
                                 {"class"}),
                    &m.errors_);
    if (s) s = take(r.counter<2>("tent_qos_held_total",
                                 "Pieces of lower-priority requests a rail held back while higher-priority work was active",
                                 {"rail", "priority"}),
                    &m.qos_held_);
    if (s) s = take(r.counter<1>("tent_qos_waited_total",
                                 "Requests that could not start at once and waited in the QoS queue (higher-priority work filling the rails, "
                                 "or a shared slot excluding their level)",
                                 {"priority"}),
                    &m.qos_waited_);
    if (s) s = take(r.gauge<2>("tent_rail_state",
                               "1 for the state a rail is in (healthy, degraded, paused), 0 for the others",
                               {"rail", "state"}),
                    &m.state_);
    if (s) s = take(r.gauge<1>("tent_rail_health", "Health score of a rail", {"rail"}), &m.health_);
    if (s) s = take(r.gauge<1>("tent_rail_inflight_bytes",
                               "Bytes posted on a rail and not yet completed", {"rail"}),
                    &m.inflight_);
    if (s) s = take(r.gauge<1>("tent_rail_ewma_bandwidth_bytes_per_second",
                               "Exponentially weighted moving average of a rail's observed bandwidth",
                               {"rail"}),
                    &m.bandwidth_);
    if (!s) return s;
    return m;
}

void TentMetrics::set_rail_state(std::string_view rail, RailState state) {
    // One series per state, so alerts can match state="paused" directly.
    for (RailState each : kAllStates)
        state_->with({rail, rail_state_name(each)}).set(each == state ? 1.0 : 0.0);
}

} // namespace tent
