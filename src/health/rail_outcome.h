// What happened to one operation or probe on a rail: a closed set, handled in
// one switch by the monitor (LNet's lnet_health_check() style), one counter each.
#pragma once

#include <cstddef>

namespace tent {

enum class RailOutcome {
    Success,          // a completion with a good status
    Timeout,          // no completion in time (tent's own timer)
    RetryExceeded,    // transport or RNR retries exhausted (IBV_WC_RETRY_EXC_ERR, ..._RNR_...)
    Flushed,          // flushed because the QP already failed (IBV_WC_WR_FLUSH_ERR)
    RemoteAccess,     // remote access / invalid request / operation error
    LocalProtection,  // local protection, length or QP operation error
    SubmitFailed,     // the post (ibv_post_send, send()) itself failed
    ProbeAnswered,    // a recovery probe came back
    ProbeFailed,      // a recovery probe failed or timed out
};
inline constexpr std::size_t kRailOutcomeCount = 9;

// Errors grouped the way metrics report them (tent_rail_errors_total{class}).
enum class ErrorClass {
    None,     // not an error
    Timeout,  // Timeout, RetryExceeded: the path did not answer
    Remote,   // the remote side refused the operation
    Local,    // the local HCA refused the operation
    Submit,   // posting failed
    Flush,    // a consequence of an earlier error, not a new fault
    Probe,    // a recovery probe failed
};
inline constexpr std::size_t kErrorClassCount = 7;

const char* rail_outcome_name(RailOutcome outcome);
const char* error_class_name(ErrorClass cls);
ErrorClass error_class_of(RailOutcome outcome);

} // namespace tent
