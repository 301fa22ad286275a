// Replay decision of a failed atomic: never sent again where it may have
// executed without a ledger; sent again on ledger paths only once it went
// out on one; the replay budget and caller errors as for any piece.
#include <criterion/criterion.h>

#include <string>

#include "policy/atomic_replay.h"

using namespace tent;

namespace {
const Status kRetryExceeded(Code::TransportError, "retry exceeded");
const Status kFlushed(Code::RailDown, "flushed");
const Status kRefused(Code::RemoteAccess, "remote access error");
const Status kBadArgument(Code::InvalidArgument, "misaligned");
}  // namespace

Test(atomic_replay, a_post_refused_before_leaving_replays_anywhere) {
    AtomicTrail t;
    ReplayHistory h;
    for (AtomicPath p : {AtomicPath::Hardware, AtomicPath::Ledger}) {
        AtomicReplayDecision d = decide_atomic_replay(kRetryExceeded, false, p, t, h, 3);
        cr_expect_eq(d.verdict, AtomicVerdict::AnyRail);
    }
}

Test(atomic_replay, a_hardware_atomic_that_left_is_never_replayed) {
    AtomicTrail t;
    ReplayHistory h;
    for (const Status* why : {&kRetryExceeded, &kFlushed}) {
        AtomicReplayDecision d = decide_atomic_replay(*why, true, AtomicPath::Hardware, t, h, 3);
        cr_assert_eq(d.verdict, AtomicVerdict::Fail);
        cr_expect_eq(d.status.code(), Code::TransportError, "a rail error to the caller");
        std::string m = d.status.message();
        cr_expect(m.find(kAtomicUnknownMessage) == 0, "%s", m.c_str());
        cr_expect(m.find(why->message()) != std::string::npos, "names the failure: %s", m.c_str());
    }
}

Test(atomic_replay, a_ledger_atomic_that_left_replays_on_ledger_paths_only) {
    AtomicTrail t;
    ReplayHistory h;
    note_atomic_sent(AtomicPath::Ledger, t);
    AtomicReplayDecision d = decide_atomic_replay(kFlushed, true, AtomicPath::Ledger, t, h, 3);
    cr_expect_eq(d.verdict, AtomicVerdict::LedgerOnly);
    // Even a later attempt that never left stays on ledger paths: the first may have executed.
    note_replay(kFlushed, FailureKind::Own, h);
    d = decide_atomic_replay(kRetryExceeded, false, AtomicPath::Hardware, t, h, 3);
    cr_expect_eq(d.verdict, AtomicVerdict::LedgerOnly);
}

Test(atomic_replay, a_fresh_trail_becomes_ledger_bound_by_the_failed_attempt_itself) {
    AtomicTrail t;  // the caller notes the attempt only after the decision
    ReplayHistory h;
    cr_expect_eq(decide_atomic_replay(kRetryExceeded, true, AtomicPath::Ledger, t, h, 3).verdict,
                 AtomicVerdict::LedgerOnly);
}

Test(atomic_replay, a_refusal_by_the_target_did_not_execute) {
    AtomicTrail t;
    ReplayHistory h;
    AtomicReplayDecision d = decide_atomic_replay(kRefused, true, AtomicPath::Hardware, t, h, 3);
    cr_expect_eq(d.verdict, AtomicVerdict::AnyRail, "a stale key on one HCA: another rail may take it");
    note_replay(kRefused, FailureKind::Own, h);
    d = decide_atomic_replay(kRefused, true, AtomicPath::Hardware, t, h, 3);
    cr_expect_eq(d.verdict, AtomicVerdict::Fail, "a second refusal ends it");
    cr_expect_eq(d.status.code(), Code::RemoteAccess);
}

Test(atomic_replay, caller_errors_and_the_budget_end_it) {
    AtomicTrail t;
    ReplayHistory h;
    cr_expect_eq(decide_atomic_replay(kBadArgument, false, AtomicPath::Ledger, t, h, 3).verdict, AtomicVerdict::Fail);
    cr_expect_eq(decide_atomic_replay(kRetryExceeded, false, AtomicPath::Ledger, t, h, 0).verdict, AtomicVerdict::Fail,
                 "failover off");
    for (int i = 0; i < 3; ++i) note_replay(kRetryExceeded, FailureKind::Own, h);
    AtomicReplayDecision d = decide_atomic_replay(kRetryExceeded, true, AtomicPath::Ledger, t, h, 3);
    cr_expect_eq(d.verdict, AtomicVerdict::Fail);
    cr_expect_eq(d.status.code(), Code::FailoverExhausted);
}
