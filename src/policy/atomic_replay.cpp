#include "policy/atomic_replay.h"

namespace tent {

AtomicReplayDecision decide_atomic_replay(const Status& failure, bool left_host, AtomicPath path,
                                          const AtomicTrail& trail, const ReplayHistory& history, int max_attempts) {
    // Every failure counts, flushes too: an atomic is never replayed blindly.
    ReplayDecision base = decide_replay(failure, FailureKind::Own, history, max_attempts);
    if (base.verdict == ReplayVerdict::Fail) return {AtomicVerdict::Fail, base.status};
    // A refusal by the target means it did not execute this attempt.
    const bool maybe_executed = left_host && failure.code() != Code::RemoteAccess;
    if (maybe_executed && path == AtomicPath::Hardware)
        return {AtomicVerdict::Fail, Status(Code::TransportError, std::string(kAtomicUnknownMessage) + " (" +
                                                                failure.to_string() + ")")};
    const bool on_ledger = trail.on_ledger || (maybe_executed && path == AtomicPath::Ledger);
    return {on_ledger ? AtomicVerdict::LedgerOnly : AtomicVerdict::AnyRail, Status::ok()};
}

void note_atomic_sent(AtomicPath path, AtomicTrail& trail) {
    if (path == AtomicPath::Ledger) trail.on_ledger = true;
}

} // namespace tent
