#include "health/rail_events.h"

namespace tent {

const char* pause_cause_name(PauseCause cause) {
    switch (cause) {
    case PauseCause::Errors: return "errors";
    case PauseCause::LocalPortDown: return "local port down";
    case PauseCause::LocalDeviceFatal: return "local device fatal";
    case PauseCause::RemotePortDown: return "remote port down";
    }
    return "?";
}

const char* recovery_reason_name(RecoveryReason reason) {
    switch (reason) {
    case RecoveryReason::Traffic: return "traffic";
    case RecoveryReason::Probe: return "probe";
    case RecoveryReason::CooldownExpired: return "cooldown_expired";
    case RecoveryReason::PortActive: return "port_active";
    }
    return "?";
}

} // namespace tent
