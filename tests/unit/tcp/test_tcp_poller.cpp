// A TCP rail's waiting contract (wait_fd, wants_write, next_timer,
// has_completions), the one the engine's drive loop polls by: one
// TcpPoller (tests/support) drives many rails from one thread by it alone;
// it wakes for input, for writability while bytes are queued, and for each
// rail's heartbeat timer, and hands back a closed rail until its failures
// are collected.
#include <criterion/criterion.h>

#include "tcp_pair.h"
#include "../../support/tcp_poller.h"

using namespace tcp_test;

namespace {

constexpr std::uint32_t kKey = 0x9011;

} // namespace

Test(tcp_poller, drives_several_rails_to_completion) {
    constexpr int kPairs = 3;
    constexpr std::size_t kOps = 40, kSize = 100000;
    std::vector<std::unique_ptr<RailPair>> pairs;
    std::vector<std::vector<std::uint8_t>> targets(kPairs, std::vector<std::uint8_t>(kOps * kSize));
    auto src = pattern(kOps * kSize, 8);
    auto poller = TcpPoller::create();
    cr_assert(poller.is_ok());
    for (int i = 0; i < kPairs; ++i) {
        pairs.push_back(make_pair(SteadyClock::instance(), 8192));
        cr_assert(pairs.back()->ok());
        pairs.back()->regions_b.add(kKey, targets[i].data(), targets[i].size(), wire::kAccessAll);
        cr_assert(poller->add(pairs.back()->a.get()).is_ok());
        cr_assert(poller->add(pairs.back()->b.get()).is_ok());
    }
    cr_expect_eq(poller->size(), 2u * kPairs);
    cr_expect_eq(poller->add(pairs[0]->a.get()).code(), Code::AlreadyExists);
    for (int i = 0; i < kPairs; ++i)
        for (std::size_t k = 0; k < kOps; ++k)
            cr_assert(pairs[i]->a->post(write_op(k, src.data() + k * kSize, kSize, addr(targets[i].data()) + k * kSize,
                                                 kKey)).is_ok());
    std::vector<RailCompletion> done;
    auto ignore = [](const RailMessage&) {};
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (int round = 0; round < 100000 && done.size() < kPairs * kOps && std::chrono::steady_clock::now() < deadline;
         ++round) {
        auto ready = poller->wait(100ms);
        cr_assert(ready.is_ok(), "%s", ready.status().to_string().c_str());
        for (TcpRail* r : *ready) r->progress(done, ignore);
    }
    cr_assert_eq(done.size(), kPairs * kOps);
    for (const auto& c : done) cr_expect_eq(c.outcome, RailOutcome::Success);
    for (int i = 0; i < kPairs; ++i)
        cr_expect_eq(first_difference(targets[i].data(), src.data(), src.size()), -1, "pair %d", i);
    for (auto& p : pairs) {
        poller->remove(p->a.get());
        poller->remove(p->b.get());
    }
    cr_expect_eq(poller->size(), 0u);
}

Test(tcp_poller, wakes_for_a_heartbeat_on_an_idle_rail) {
    // Rails with a 20 ms heartbeat, declared dead after 500 ms of silence.
    auto [fa, fb] = connected_sockets();
    cr_assert(fa.valid());
    TcpRailParams fast = test_params();
    fast.silence.interval = 20ms;
    fast.silence.dead_after = 25;
    auto a = TcpRail::create(std::move(fa), {kConnection, kRailId, "fast a"}, fast, nullptr, SteadyClock::instance());
    auto b = TcpRail::create(std::move(fb), {kConnection, kRailId, "fast b"}, fast, nullptr, SteadyClock::instance());
    cr_assert(a.is_ok() && b.is_ok());
    auto poller = TcpPoller::create();
    cr_assert(poller.is_ok());
    cr_assert(poller->add(a->get()).is_ok());
    cr_assert(poller->add(b->get()).is_ok());
    // Over 1 s of idling both rails keep each other alive (dead after
    // 500 ms of silence) only if the poller wakes them for heartbeats.
    std::vector<RailCompletion> done;
    const auto start = std::chrono::steady_clock::now();
    int wakeups = 0;
    for (int round = 0; round < 10000 && std::chrono::steady_clock::now() - start < 1000ms; ++round) {
        auto ready = poller->wait(1s);
        cr_assert(ready.is_ok());
        wakeups += !ready->empty();
        for (TcpRail* r : *ready) r->progress(done, nullptr);
    }
    cr_expect_lt(std::chrono::steady_clock::now() - start, 1400ms, "the poller slept past the heartbeat timers");
    cr_expect((*a)->is_open() && (*b)->is_open(), "idle rails declared dead: %s",
              (*a)->close_reason().to_string().c_str());
    cr_expect_gt(wakeups, 20);
    cr_expect_lt(wakeups, 5000, "the poller spins");
    poller->remove(a->get());
    poller->remove(b->get());
}

Test(tcp_poller, hands_back_a_closed_rail_until_its_failures_are_collected) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    auto poller = TcpPoller::create();
    cr_assert(poller.is_ok());
    cr_assert(poller->add(pair->a.get()).is_ok());
    cr_assert(pair->a->post(probe_op(1)).is_ok());
    pair->b.reset();
    std::vector<RailCompletion> done;
    for (int round = 0; round < 1000 && done.empty(); ++round) {
        auto ready = poller->wait(100ms);
        cr_assert(ready.is_ok());
        for (TcpRail* r : *ready) r->progress(done, nullptr);
    }
    cr_assert_eq(done.size(), 1u);
    cr_expect_eq(done[0].outcome, RailOutcome::ProbeFailed);
    // Closed and drained: no longer returned, and the wait does not spin.
    const auto start = std::chrono::steady_clock::now();
    auto ready = poller->wait(30ms);
    cr_assert(ready.is_ok());
    cr_expect(ready->empty());
    cr_expect_gt(std::chrono::steady_clock::now() - start, 20ms);
    poller->remove(pair->a.get());
}

// A rail whose socket is full (the peer does not read) is not woken for a
// heartbeat it cannot send: once it has looked at the kernel's counters of
// its silent peer (once per interval), the poller sleeps until the next
// look or the silence limit.
Test(tcp_poller, a_full_socket_does_not_spin_on_the_heartbeat_timer) {
    ManualClock clock;
    auto pair = make_pair(clock, 4096);
    cr_assert(pair->ok());
    auto poller = TcpPoller::create(clock);
    cr_assert(poller.is_ok());
    cr_assert(poller->add(pair->a.get()).is_ok());
    std::vector<std::uint8_t> src(1 << 20, 1);
    for (int i = 0; i < 16; ++i) cr_assert(pair->a->post(write_op(i, src.data(), src.size(), 0x1000, kKey)).is_ok());
    std::vector<RailCompletion> done;
    pair->a->progress(done, nullptr);
    cr_assert(pair->a->wants_write(), "16 MiB should not fit the socket");
    clock.advance(std::chrono::milliseconds(1500)); // heartbeat overdue, silence limit (5 s) not reached
    auto ready = poller->wait(30ms);
    cr_assert(ready.is_ok());
    cr_expect_leq(ready->size(), 1u);
    for (TcpRail* r : *ready) r->progress(done, nullptr); // the kernel sample, due after 1 s of silence
    cr_expect(pair->a->is_open());
    // The loopback kernel may still move bytes from a's socket to b's
    // buffer, making a writable again: that wake-up is work (progress
    // writes more). A poller spinning on the heartbeat timer would never
    // sleep; one that does not sleeps a whole wait once the socket is full.
    bool slept = false;
    for (int i = 0; i < 20 && !slept; ++i) {
        const auto start = std::chrono::steady_clock::now();
        ready = poller->wait(30ms);
        cr_assert(ready.is_ok());
        slept = ready->empty() && std::chrono::steady_clock::now() - start > 20ms;
        for (TcpRail* r : *ready) r->progress(done, nullptr);
    }
    cr_expect(slept, "woken with nothing to do in 20 waits: the poller spins on the heartbeat timer");
    cr_expect(pair->a->is_open());
    // Looked at once per interval (a gap between looks would not count as
    // the peer's silence): 1 s of the first 1.5 s, then 3 s more.
    for (int i = 0; i < 3; ++i) {
        clock.advance(std::chrono::seconds(1));
        pair->a->progress(done, nullptr);
    }
    cr_expect(pair->a->is_open());
    clock.advance(std::chrono::seconds(1));
    ready = poller->wait(30ms);
    cr_assert(ready.is_ok());
    cr_assert_eq(ready->size(), 1u, "the silence limit must wake the rail");
    (*ready)[0]->progress(done, nullptr);
    cr_expect_not(pair->a->is_open());
    cr_expect_eq(done.size(), 16u);
    poller->remove(pair->a.get());
}
