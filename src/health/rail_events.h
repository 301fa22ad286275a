// What the RailMonitor reports to the rest of tent: state-change events to an
// observer (the engine forwards them to metrics and traces) and per-rail
// counters (tent_rail_pauses_total, tent_rail_recoveries_total{reason},
// tent_rail_errors_total{class}, outcomes). The health layer does not depend
// on the metrics layer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/clock.h"
#include "health/rail_outcome.h"

namespace tent {

using RailId = std::uint32_t;

// Why a rail was paused.
enum class PauseCause {
    Errors,            // rail_error_threshold errors inside the window
    LocalPortDown,     // asynchronous port-error event on its local port
    LocalDeviceFatal,  // its local device reported a fatal error
    RemotePortDown,    // its remote port (or remote device) was reported down
};

// Why a paused rail came back.
enum class RecoveryReason {
    Traffic,          // a completion succeeded on it
    Probe,            // a recovery probe was answered
    CooldownExpired,  // its cooldown ran out
    PortActive,       // its port (local or remote) reported active again
};
inline constexpr std::size_t kRecoveryReasonCount = 4;

const char* pause_cause_name(PauseCause cause);
// Stable label values for metrics: traffic, probe, cooldown_expired, port_active.
const char* recovery_reason_name(RecoveryReason reason);

struct RailEvent {
    enum class Kind { Paused, Recovered, Degraded, Restored } kind;
    RailId rail = 0;
    TimePoint at{};
    PauseCause cause = PauseCause::Errors;              // Paused
    Duration cooldown{};                                // Paused
    unsigned pause_level = 0;                           // Paused: 1 = first pause in a row
    RecoveryReason reason = RecoveryReason::Traffic;    // Recovered
};

class RailObserver {
public:
    virtual ~RailObserver() = default;
    // Called synchronously from the monitor's mutators; must not call back into it.
    virtual void on_rail_event(const RailEvent& event) = 0;
};

struct RailCounters {
    std::uint64_t pauses = 0;
    std::uint64_t degradations = 0;
    std::array<std::uint64_t, kRecoveryReasonCount> recoveries{};
    std::array<std::uint64_t, kRailOutcomeCount> outcomes{};
    std::array<std::uint64_t, kErrorClassCount> errors{};

    std::uint64_t recoveries_by(RecoveryReason r) const { return recoveries[static_cast<std::size_t>(r)]; }
    std::uint64_t outcomes_of(RailOutcome o) const { return outcomes[static_cast<std::size_t>(o)]; }
    std::uint64_t errors_of(ErrorClass c) const { return errors[static_cast<std::size_t>(c)]; }
};

} // namespace tent
