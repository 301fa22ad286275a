#include "health/rail_outcome.h"

namespace tent {

const char* rail_outcome_name(RailOutcome outcome) {
    switch (outcome) {
    case RailOutcome::Success: return "success";
    case RailOutcome::Timeout: return "timeout";
    case RailOutcome::RetryExceeded: return "retry_exceeded";
    case RailOutcome::Flushed: return "flushed";
    case RailOutcome::RemoteAccess: return "remote_access";
    case RailOutcome::LocalProtection: return "local_protection";
    case RailOutcome::SubmitFailed: return "submit_failed";
    case RailOutcome::ProbeAnswered: return "probe_answered";
    case RailOutcome::ProbeFailed: return "probe_failed";
    }
    return "?";
}

const char* error_class_name(ErrorClass cls) {
    switch (cls) {
    case ErrorClass::None: return "none";
    case ErrorClass::Timeout: return "timeout";
    case ErrorClass::Remote: return "remote";
    case ErrorClass::Local: return "local";
    case ErrorClass::Submit: return "submit";
    case ErrorClass::Flush: return "flush";
    case ErrorClass::Probe: return "probe";
    }
    return "?";
}

ErrorClass error_class_of(RailOutcome outcome) {
    switch (outcome) {
    case RailOutcome::Success:
    case RailOutcome::ProbeAnswered: return ErrorClass::None;
    case RailOutcome::Timeout:
    case RailOutcome::RetryExceeded: return ErrorClass::Timeout;
    case RailOutcome::Flushed: return ErrorClass::Flush;
    case RailOutcome::RemoteAccess: return ErrorClass::Remote;
    case RailOutcome::LocalProtection: return ErrorClass::Local;
    case RailOutcome::SubmitFailed: return ErrorClass::Submit;
    case RailOutcome::ProbeFailed: return ErrorClass::Probe;
    }
    return ErrorClass::None;
}

} // namespace tent
