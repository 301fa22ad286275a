// How often a spinning driver reads a rail that only arriving bytes give
// work, and when its turn ends after that look (engine/quiet_rail_look.h):
// the decisions, then two engines over TCP rails only, where the
// receiver's application spins in poll() through a silence (its turns
// ending after the look) and must get each message that follows it, every
// byte checked, soon. Were the silent rails never read again, a message would wait for
// the rail's next own timer (the kernel counters' sample, every 250 ms;
// the test keeps heartbeats out of the way): most rounds would take over
// 100 ms, where a look every kQuietLookInterval takes well under.
#include <criterion/criterion.h>

#include <chrono>
#include <vector>

#include "../../support/tcp_engine_pair.h"
#include "engine/quiet_rail_look.h"

using namespace tent;
using namespace tent::test;
using namespace std::chrono_literals;

Test(quiet_rail_look, a_silent_rail_is_read_now_and_then_a_busy_one_every_turn) {
    const Duration silent = 10 * kRecentArrival;
    cr_expect(quiet_rail_due({.awaiting_replies = false, .silent_for = silent, .since_look = kQuietLookInterval}));
    cr_expect(quiet_rail_due({.awaiting_replies = false, .silent_for = silent, .since_look = 10 * kQuietLookInterval}));
    cr_expect_not(quiet_rail_due({.awaiting_replies = false, .silent_for = silent, .since_look = 0ns}));
    cr_expect_not(quiet_rail_due({.awaiting_replies = false, .silent_for = silent, .since_look = kQuietLookInterval / 2}));
    // Replies owed, or bytes arrived lately: every turn.
    cr_expect(quiet_rail_due({.awaiting_replies = true, .silent_for = silent, .since_look = 0ns}));
    cr_expect(quiet_rail_due({.awaiting_replies = false, .silent_for = kRecentArrival / 2, .since_look = 0ns}));
    cr_expect(quiet_rail_due({.awaiting_replies = false, .silent_for = 0ns, .since_look = 0ns}));
    cr_expect_not(quiet_rail_due({.awaiting_replies = false, .silent_for = kRecentArrival, .since_look = 0ns}));
    // The bound on a message's extra wait is far below a TCP round trip's
    // worth of turns being skipped for long.
    cr_expect_lt(kQuietLookInterval, kRecentArrival);
}

Test(quiet_rail_look, a_turn_ends_after_its_look_only_when_nothing_else_moves) {
    const TurnLook idle{.rails_quiet = true, .found_work = false, .work_waits = false, .since_care = 0ns};
    cr_expect(turn_ends_after_look(idle));
    cr_expect(turn_ends_after_look({.rails_quiet = true, .since_care = kCareInterval - 1ns}));
    // A rail to read, new work, or work only a turn moves: the whole turn.
    cr_expect_not(turn_ends_after_look({.rails_quiet = false, .since_care = 0ns}));
    cr_expect_not(turn_ends_after_look({.rails_quiet = true, .found_work = true, .since_care = 0ns}));
    cr_expect_not(turn_ends_after_look({.rails_quiet = true, .work_waits = true, .since_care = 0ns}));
    // Rail care and the timers run at least every kCareInterval.
    cr_expect_not(turn_ends_after_look({.rails_quiet = true, .since_care = kCareInterval}));
    cr_expect_not(turn_ends_after_look({.rails_quiet = true, .since_care = 1s}));
    // Far below the quickest of the timers it serves.
    cr_expect_lt(kCareInterval, kRecentArrival);
}

Test(quiet_rail_look, a_message_after_a_silence_reaches_a_receiver_spinning_in_poll, .timeout = 60) {
    Config config = tcp_pair_config();
    cr_assert(config.set(Knob::CallerProgress, "true", api_source()).is_ok());
    // No heartbeat within the test: only the now-and-then look reads a
    // silent rail (a heartbeat's arrival would make it recent).
    cr_assert(config.set(Knob::TcpHeartbeatIntervalMs, "30000", api_source()).is_ok());
    TcpPair p(config);
    std::vector<std::uint8_t> data(3000);
    fill(data, 11);
    constexpr int kRounds = 10;
    int slow_rounds = 0;
    for (int round = 0; round < kRounds; ++round) {
        std::vector<std::uint8_t> buffer(data.size(), 0);
        cr_assert(p.b->post_recv(buffer.data(), buffer.size(), 100 + round).is_ok());
        // The receiver spins through a silence well past kRecentArrival:
        // its rails are then read only now and then.
        std::vector<EngineCompletion> got;
        const auto silence_end = std::chrono::steady_clock::now() + 20 * kRecentArrival;
        while (std::chrono::steady_clock::now() < silence_end) p.b->poll(got, 8);
        cr_assert(got.empty(), "round %d: a completion before anything was sent", round);
        data[0] = static_cast<std::uint8_t>(round);
        cr_assert(p.a->post_send(p.peer, data.data(), data.size(), with_cookie(round)).is_ok());
        // Spinning, never sleeping: only this thread's turns read b's rails.
        const auto sent_at = std::chrono::steady_clock::now();
        const auto give_up = sent_at + 10s;
        while (got.empty() && std::chrono::steady_clock::now() < give_up) p.b->poll(got, 8);
        // A round may be slow when the machine deschedules a thread; not most.
        if (std::chrono::steady_clock::now() - sent_at > 100ms) ++slow_rounds;
        cr_assert_eq(got.size(), 1u, "round %d: the message did not reach the spinning receiver", round);
        cr_expect_eq(got[0].cookie, 100u + round);
        cr_expect(got[0].status.is_ok(), "%s", got[0].status.to_string().c_str());
        cr_expect_eq(got[0].length, data.size());
        cr_expect(buffer == data, "round %d: the message's bytes differ", round);
        auto sent = wait_completions(*p.a, 1);
        cr_assert_eq(sent.size(), 1u);
        cr_expect(sent[0].status.is_ok());
    }
    cr_expect_leq(slow_rounds, 2, "%d of %d messages waited over 100 ms for the silent rail to be read", slow_rounds,
                  kRounds);
}
