// Flow control of messages (engine/send_flow.h): the sender keeps within
// the window the receiver grants, the receiver owes a credit once the
// application took a quarter of it, and the two never wait on each other.
#include <criterion/criterion.h>

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "engine/send_flow.h"

using namespace tent;

Test(send_flow, one_message_at_a_time_before_the_first_credit) {
    SendWindow w;
    cr_assert(w.may_start());
    w.started(1, 10);
    cr_assert_not(w.may_start(), "the window is unknown: the second message waits");
    w.credited(0, 1 << 20);
    cr_assert(w.may_start(), "the first credit opens the window");
}

Test(send_flow, the_sender_stops_at_the_window_and_a_credit_reopens_it) {
    SendWindow w;
    w.credited(0, 4 * message_weight(1000));
    for (std::uint64_t seq = 1; seq <= 4; ++seq) {
        cr_assert(w.may_start(), "message %llu fits", (unsigned long long)seq);
        w.started(seq, 1000);
    }
    cr_assert_not(w.may_start(), "four messages fill the window");
    cr_assert_eq(w.outstanding_weight(), 4 * message_weight(1000));
    w.credited(1, w.window());
    cr_assert(w.may_start(), "message 1 taken: room for one more");
    cr_assert_eq(w.outstanding_messages(), 3u);
    w.credited(1, w.window());  // the same credit again changes nothing
    cr_assert_eq(w.outstanding_messages(), 3u);
    w.credited(4, w.window());
    cr_assert_eq(w.outstanding_weight(), 0u);
}

Test(send_flow, a_message_larger_than_the_window_goes_alone) {
    SendWindow w;
    w.credited(0, 4096);
    cr_assert(w.may_start());
    w.started(1, 1 << 20);
    cr_assert_not(w.may_start(), "nothing else while it is outstanding");
    w.credited(1, 4096);
    cr_assert(w.may_start());
}

Test(send_flow, empty_messages_weigh_their_overhead) {
    SendWindow w;
    w.credited(0, 10 * kMessageOverhead);
    int started = 0;
    for (std::uint64_t seq = 1; w.may_start() && seq < 1000; ++seq, ++started) w.started(seq, 0);
    cr_assert_eq(started, 10, "an unbounded number of empty messages would be an unbounded reassembly map (%d)", started);
}

Test(send_flow, a_credit_is_due_after_a_quarter_of_the_window) {
    CreditGrant g(4 * message_weight(1000));
    cr_assert_not(g.due());
    g.released(1000);
    cr_assert(g.due(), "a quarter of the window taken");
    g.reported();
    cr_assert_not(g.due());
    CreditGrant small(1);
    small.released(0);
    cr_assert(small.due(), "a tiny window owes a credit for every message");
}

// A sender and a receiver joined by a queue (the wire, in order) and an
// application that takes messages at its own pace: with every pace and
// message size drawn at random, the receiver never holds as much as the
// window plus one message, and every message arrives (no deadlock).
Test(send_flow, bounded_and_never_stuck_under_random_paces) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
        const std::uint64_t window = 1 + rng() % (1 << 16);
        const std::uint64_t max_len = 1 + rng() % (1 << 15);
        const int total = 200;
        SendWindow sender;
        CreditGrant grant(window);
        std::deque<std::uint64_t> wire;            // lengths of messages on their way, in order
        std::deque<std::pair<std::uint64_t, std::uint64_t>> credits;  // (delivered, window) on their way
        std::deque<std::uint64_t> held;            // at the receiver, not yet taken
        std::uint64_t held_weight = 0, largest = 0, delivered = 0;
        int sent = 0;
        credits.emplace_back(0, window);  // the initial announcement
        grant.reported();
        for (int step = 0; step < 100000 && delivered < static_cast<std::uint64_t>(total); ++step) {
            switch (rng() % 4) {
            case 0:  // the sender
                if (sent < total && sender.may_start()) {
                    const std::uint64_t len = rng() % (max_len + 1);
                    largest = std::max(largest, len);
                    sender.started(static_cast<std::uint64_t>(++sent), len);
                    wire.push_back(len);
                }
                break;
            case 1:  // the wire delivers a message to the receiver
                if (!wire.empty()) {
                    held.push_back(wire.front());
                    held_weight += message_weight(wire.front());
                    wire.pop_front();
                }
                break;
            case 2:  // the application takes one (slow: one step in four)
                if (!held.empty()) {
                    held_weight -= message_weight(held.front());
                    grant.released(held.front());
                    held.pop_front();
                    ++delivered;
                    if (grant.due()) {
                        credits.emplace_back(delivered, window);
                        grant.reported();
                    }
                }
                break;
            default:  // a credit arrives
                if (!credits.empty()) {
                    sender.credited(credits.front().first, credits.front().second);
                    credits.pop_front();
                }
            }
            // What the receiver holds or has coming, against the bound.
            std::uint64_t coming = held_weight;
            for (std::uint64_t len : wire) coming += message_weight(len);
            cr_assert_lt(coming, window + message_weight(largest), "round %d: %llu bytes held or coming, window %llu",
                         round, (unsigned long long)coming, (unsigned long long)window);
        }
        cr_assert_eq(delivered, static_cast<std::uint64_t>(total), "round %d: stuck after %llu of %d messages",
                     round, (unsigned long long)delivered, total);
    }
}

// A message whose planning failed (no rail allowed) never went out: its
// number and weight are withdrawn, so the next message takes the number
// (the peer would otherwise wait for it forever) and the window stays open.
Test(send_flow, a_message_that_never_went_out_is_withdrawn) {
    SendWindow w;
    w.credited(0, 2 * message_weight(1000));
    w.started(1, 1000);
    w.started(2, 1000);
    cr_assert_not(w.may_start());
    cr_expect_not(w.withdraw(1), "only the newest message can be withdrawn");
    cr_assert(w.withdraw(2));
    cr_expect_eq(w.outstanding_messages(), 1u);
    cr_expect_eq(w.outstanding_weight(), message_weight(1000));
    cr_expect(w.may_start(), "the withdrawn message no longer holds the window");
    w.started(2, 1000);  // the next message, under the same number
    w.credited(2, 2 * message_weight(1000));
    cr_expect_eq(w.outstanding_messages(), 0u);
    cr_expect_not(w.withdraw(2), "credited: nothing left to withdraw");
}
