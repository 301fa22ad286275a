#include "policy/replay_decision.h"

namespace tent {

ReplayDecision decide_replay(const Status& failure, const ReplayHistory& history, int max_attempts) {
    if (failure.is_ok()) return {ReplayVerdict::Fail, Status(Code::Internal, "decide_replay called without a failure")};
    if (failure.scope() == Scope::Caller || max_attempts <= 0) return {ReplayVerdict::Fail, failure};
    if (failure.code() == Code::RemoteAccess && history.remote_refusals >= 1) return {ReplayVerdict::Fail, failure};
    if (history.failovers >= max_attempts)
        return {ReplayVerdict::Fail, Status(Code::FailoverExhausted, std::string(kFailoverExhaustedMessage) +
                                                                         " (last error: " + failure.to_string() + ")")};
    return {ReplayVerdict::Replay, Status::ok()};
}

void note_replay(const Status& failure, ReplayHistory& history) {
    ++history.failovers;
    if (failure.code() == Code::RemoteAccess) ++history.remote_refusals;
}

} // namespace tent
