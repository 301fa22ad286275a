#include "policy/replay_decision.h"

namespace tent {

ReplayDecision decide_replay(const Status& failure, FailureKind kind, const ReplayHistory& history,
                             int max_attempts) {
    if (failure.is_ok()) return {ReplayVerdict::Fail, Status(Code::Internal, "decide_replay called without a failure")};
    if (failure.scope() == Scope::Caller || max_attempts <= 0) return {ReplayVerdict::Fail, failure};
    if (failure.code() == Code::RemoteAccess && history.remote_refusals >= 1) return {ReplayVerdict::Fail, failure};
    const bool spent = kind == FailureKind::Collateral ? history.collateral >= kMaxCollateralReplays
                                                       : history.failovers >= max_attempts;
    if (spent)
        return {ReplayVerdict::Fail, Status(Code::FailoverExhausted, std::string(kFailoverExhaustedMessage) +
                                                                         " (last error: " + failure.to_string() + ")")};
    return {ReplayVerdict::Replay, Status::ok()};
}

void note_replay(const Status& failure, FailureKind kind, ReplayHistory& history) {
    if (kind == FailureKind::Collateral) {
        ++history.collateral;
        return;
    }
    ++history.failovers;
    if (failure.code() == Code::RemoteAccess) ++history.remote_refusals;
}

} // namespace tent
