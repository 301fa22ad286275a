// The metrics tent publishes, with their Prometheus names:
//
//   tent_transport_failover_total{from,to}        counter  requests moved to another transport
//   tent_rail_pauses_total{rail}                  counter  rails paused after errors or a fault event
//   tent_rail_recoveries_total{rail,reason}       counter  paused rails back in service, and why
//   tent_errors_total{class}                      counter  errors by class (caller, operation, rail, ...)
//   tent_qos_held_total{rail,priority}            counter  pieces held back by a rail's QoS window
//   tent_qos_waited_total{priority}               counter  requests that waited in the QoS queue to start
//   tent_rail_state{rail,state}                   gauge    1 for the rail's current state, 0 for the others
//   tent_rail_health{rail}                        gauge    health score
//   tent_rail_inflight_bytes{rail}                gauge    bytes posted and not yet completed
//   tent_rail_ewma_bandwidth_bytes_per_second{rail} gauge  smoothed observed bandwidth
//
// Each method looks the series up (a lock and a map lookup); the data path
// caches the Counter/Gauge references the *_series() methods return.
#pragma once

#include <string_view>

#include "common/status.h"
#include "health/rail_state.h"
#include "metrics/registry.h"

namespace tent {

// "caller", "operation", "rail", "endpoint", "process" (the Status scope), "none" for ok.
const char* error_class_name(Code code);

class TentMetrics {
public:
    // Registers tent's families in `registry`, which must outlive this object.
    static Result<TentMetrics> create(Registry& registry);

    void failover(std::string_view from, std::string_view to) { failover_series(from, to).inc(); }
    void rail_paused(std::string_view rail) { pauses_->with({rail}).inc(); }
    // reason: recovery_reason_name() of the health layer: "traffic", "probe",
    // "cooldown_expired", "port_active"
    void rail_recovered(std::string_view rail, std::string_view reason) {
        recoveries_->with({rail, reason}).inc();
    }
    void error(std::string_view error_class) { errors_->with({error_class}).inc(); }
    void error(Code code) { error(error_class_name(code)); }
    // Stable for the registry's life: a caller may keep it.
    Counter& qos_held_series(std::string_view rail, std::string_view priority) {
        return qos_held_->with({rail, priority});
    }

    void qos_waited(std::string_view priority) { qos_waited_->with({priority}).inc(); }

    void set_rail_state(std::string_view rail, RailState state);
    void set_rail_health(std::string_view rail, double health) { health_->with({rail}).set(health); }
    void set_ewma_bandwidth(std::string_view rail, double bytes_per_second) {
        bandwidth_->with({rail}).set(bytes_per_second);
    }

    Counter& failover_series(std::string_view from, std::string_view to) {
        return failovers_->with({from, to});
    }
    Gauge& inflight_bytes_series(std::string_view rail) { return inflight_->with({rail}); }
    // Drops every series of a rail that no longer exists (its connection
    // is gone), so that peers coming and going do not grow the metrics.
    void forget_rail(std::string_view rail) {
        failovers_->forget(rail);
        pauses_->forget(rail);
        recoveries_->forget(rail);
        qos_held_->forget(rail);
        state_->forget(rail);
        health_->forget(rail);
        inflight_->forget(rail);
        bandwidth_->forget(rail);
    }

private:
    TentMetrics() = default;
    CounterFamily<2>* failovers_ = nullptr;
    CounterFamily<1>* pauses_ = nullptr;
    CounterFamily<2>* recoveries_ = nullptr;
    CounterFamily<1>* errors_ = nullptr;
    CounterFamily<2>* qos_held_ = nullptr;
    CounterFamily<1>* qos_waited_ = nullptr;
    GaugeFamily<2>* state_ = nullptr;
    GaugeFamily<1>* health_ = nullptr;
    GaugeFamily<1>* inflight_ = nullptr;
    GaugeFamily<1>* bandwidth_ = nullptr;
};

} // namespace tent
