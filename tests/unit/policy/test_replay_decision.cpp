// Replay decision of one failed piece: rail failures are replayed within the
// budget, each piece spending its own, and failures that were another
// piece's (flushes) spend none; caller errors and a second remote
// refusal end the request with their own status; exhaustion says so and
// keeps the last error.
#include <criterion/criterion.h>

#include <string>

#include "policy/replay_decision.h"

using namespace tent;

namespace {
const Status kRetryExceeded(Code::TransportError, "retry exceeded");
const Status kFlushed(Code::RailDown, "flushed");
const Status kRefused(Code::RemoteAccess, "remote access error");
const Status kBadArgument(Code::InvalidArgument, "length 0");
}  // namespace

Test(replay_decision, rail_failures_replay_until_the_budget_is_spent) {
    ReplayHistory h;
    for (int i = 0; i < 3; ++i) {
        const Status& why = i % 2 ? kFlushed : kRetryExceeded;
        ReplayDecision d = decide_replay(why, FailureKind::Own, h, 3);
        cr_assert_eq(d.verdict, ReplayVerdict::Replay, "failure %d", i);
        note_replay(why, FailureKind::Own, h);
    }
    cr_expect_eq(h.failovers, 3);
    ReplayDecision d = decide_replay(kRetryExceeded, FailureKind::Own, h, 3);
    cr_assert_eq(d.verdict, ReplayVerdict::Fail);
    cr_expect_eq(d.status.code(), Code::FailoverExhausted);
    std::string m = d.status.message();
    cr_expect(m.find("Failover limit exceeded, all transports exhausted") == 0, "%s", m.c_str());
    cr_expect(m.find("retry exceeded") != std::string::npos, "last error kept: %s", m.c_str());
}

Test(replay_decision, each_piece_has_its_own_budget) {
    // Eight pieces flushed by one dying rail: each may still move.
    for (int piece = 0; piece < 8; ++piece) {
        ReplayHistory h;
        cr_expect_eq(decide_replay(kFlushed, FailureKind::Collateral, h, 1).verdict, ReplayVerdict::Replay);
    }
}

Test(replay_decision, collateral_failures_spend_no_attempt) {
    // Flushed behind other pieces' errors again and again (a rail kept in
    // use under 1% errors): still one attempt of its own left, and that
    // attempt is spent only by a failure of its own.
    ReplayHistory h;
    for (int i = 0; i < 10; ++i) {
        cr_assert_eq(decide_replay(kFlushed, FailureKind::Collateral, h, 1).verdict, ReplayVerdict::Replay,
                     "flush %d", i);
        note_replay(kFlushed, FailureKind::Collateral, h);
    }
    cr_expect_eq(h.failovers, 0);
    cr_expect_eq(h.collateral, 10);
    cr_assert_eq(decide_replay(kRetryExceeded, FailureKind::Own, h, 1).verdict, ReplayVerdict::Replay);
    note_replay(kRetryExceeded, FailureKind::Own, h);
    cr_expect_eq(decide_replay(kRetryExceeded, FailureKind::Own, h, 1).verdict, ReplayVerdict::Fail);
    cr_expect_eq(decide_replay(kFlushed, FailureKind::Collateral, h, 1).verdict, ReplayVerdict::Replay,
                 "a flush after the attempts are spent is still no fault of the piece");
}

Test(replay_decision, collateral_replays_are_bounded_and_need_failover_on) {
    ReplayHistory h;
    h.collateral = kMaxCollateralReplays - 1;
    cr_expect_eq(decide_replay(kFlushed, FailureKind::Collateral, h, 3).verdict, ReplayVerdict::Replay);
    note_replay(kFlushed, FailureKind::Collateral, h);
    ReplayDecision d = decide_replay(kFlushed, FailureKind::Collateral, h, 3);
    cr_expect_eq(d.verdict, ReplayVerdict::Fail);
    cr_expect_eq(d.status.code(), Code::FailoverExhausted);
    cr_expect_eq(decide_replay(kFlushed, FailureKind::Collateral, ReplayHistory{}, 0).verdict, ReplayVerdict::Fail,
                 "max_failover_attempts 0 moves nothing");
}

Test(replay_decision, zero_attempts_disables_failover) {
    ReplayDecision d = decide_replay(kRetryExceeded, FailureKind::Own, ReplayHistory{}, 0);
    cr_assert_eq(d.verdict, ReplayVerdict::Fail);
    cr_expect_eq(d.status.code(), Code::TransportError, "the failure itself, not exhaustion");
}

Test(replay_decision, caller_errors_are_not_replayed) {
    ReplayDecision d = decide_replay(kBadArgument, FailureKind::Own, ReplayHistory{}, 3);
    cr_assert_eq(d.verdict, ReplayVerdict::Fail);
    cr_expect_eq(d.status.code(), Code::InvalidArgument);
}

Test(replay_decision, a_remote_refusal_gets_one_other_rail) {
    ReplayHistory h;
    cr_assert_eq(decide_replay(kRefused, FailureKind::Own, h, 3).verdict, ReplayVerdict::Replay);
    note_replay(kRefused, FailureKind::Own, h);
    cr_expect_eq(h.remote_refusals, 1);
    ReplayDecision d = decide_replay(kRefused, FailureKind::Own, h, 3);
    cr_assert_eq(d.verdict, ReplayVerdict::Fail);
    cr_expect_eq(d.status.code(), Code::RemoteAccess, "refused twice: the request is at fault");
    // A rail failure after one refusal is still replayed.
    cr_expect_eq(decide_replay(kRetryExceeded, FailureKind::Own, h, 3).verdict, ReplayVerdict::Replay);
}
