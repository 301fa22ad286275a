// Slow rails are degraded, never paused for slowness (point 5).
#include <criterion/criterion.h>

#include "health/rail_monitor.h"
#include "health_test_util.h"

using namespace tent;
using namespace tent::test;
using std::chrono::microseconds;

static const TimePoint T0{std::chrono::hours(1)};

// Feeds `n` samples per rail over one second ending at `end`, then ticks.
static void feed(RailMonitor& m, const std::vector<std::pair<RailId, microseconds>>& lat, TimePoint end,
                 int n = 20) {
    for (int i = 0; i < n; ++i) {
        TimePoint t = end - milliseconds(1000) + milliseconds(1000 / n) * (i + 1);
        for (auto [r, l] : lat) m.record_latency(r, l, t);
    }
    m.tick(end);
}

struct FourRails {
    RailMonitor m{default_params()};
    RailId r0 = m.add_rail(rail_ep("mlx5_0", 1), T0);
    RailId r1 = m.add_rail(rail_ep("mlx5_1", 1), T0);
    RailId r2 = m.add_rail(rail_ep("mlx5_2", 1), T0);
    RailId r3 = m.add_rail(rail_ep("mlx5_3", 1), T0);
};

Test(rail_degraded, rail_well_above_peers_is_degraded_not_paused) {
    LogCapture log;
    EventLog events;
    FourRails f;
    f.m.set_observer(&events);
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(11)}, {f.r2, microseconds(12)}, {f.r3, microseconds(50)}},
         T0 + seconds(1));
    cr_expect(f.m.state(f.r3, T0 + seconds(1)) == RailState::Degraded);
    for (RailId r : {f.r0, f.r1, f.r2}) cr_expect(f.m.state(r, T0 + seconds(1)) == RailState::Healthy);
    cr_expect_eq(log.count("rail degraded"), 1);
    cr_expect_eq(events.count(RailEvent::Kind::Degraded), 1);
    cr_expect_eq(f.m.counters(f.r3).degradations, 1u);
    // Stays slow for an hour: degraded throughout, never paused.
    for (int s = 2; s <= 3600; s += 10)
        feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(11)}, {f.r2, microseconds(12)}, {f.r3, microseconds(1000)}},
             T0 + seconds(s));
    cr_expect(f.m.state(f.r3, T0 + seconds(3592)) == RailState::Degraded);
    cr_expect_eq(f.m.counters(f.r3).pauses, 0u);
    cr_expect_eq(events.count(RailEvent::Kind::Paused), 0);
    cr_expect_eq(events.count(RailEvent::Kind::Degraded), 1);
}

Test(rail_degraded, below_factor_stays_healthy) {
    FourRails f;
    // 3.9x the peers' median: not "well above" at factor 4.
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(39)}},
         T0 + seconds(1));
    cr_expect(f.m.state(f.r3, T0 + seconds(1)) == RailState::Healthy);
}

Test(rail_degraded, recovers_when_latency_falls_back) {
    LogCapture log;
    EventLog events;
    FourRails f;
    f.m.set_observer(&events);
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(80)}},
         T0 + seconds(1));
    cr_assert(f.m.state(f.r3, T0 + seconds(1)) == RailState::Degraded);
    // The slow samples age out of the 10 s window and fast ones replace them.
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(12)}},
         T0 + seconds(12));
    cr_expect(f.m.state(f.r3, T0 + seconds(12)) == RailState::Healthy);
    cr_expect_eq(log.count("rail restored"), 1);
    cr_expect_eq(events.count(RailEvent::Kind::Restored), 1);
}

Test(rail_degraded, too_few_samples_or_peers_decide_nothing) {
    RailMonitor m(default_params());
    RailId a = m.add_rail(rail_ep("mlx5_0", 1), T0);
    // Alone: nothing to compare with.
    feed(m, {{a, microseconds(1000)}}, T0 + seconds(1));
    cr_expect(m.state(a, T0 + seconds(1)) == RailState::Healthy);
    // Two rails but below slow_rail_min_samples (16).
    RailId b = m.add_rail(rail_ep("mlx5_1", 1), T0);
    feed(m, {{a, microseconds(1000)}, {b, microseconds(10)}}, T0 + seconds(20), 10);
    cr_expect(m.state(a, T0 + seconds(20)) == RailState::Healthy);
    // Enough samples on both: a is 100x slower than its only peer.
    feed(m, {{a, microseconds(1000)}, {b, microseconds(10)}}, T0 + seconds(21), 10);
    cr_expect(m.state(a, T0 + seconds(21)) == RailState::Degraded);
    cr_expect(m.state(b, T0 + seconds(21)) == RailState::Healthy);
}

Test(rail_degraded, peers_are_rails_to_the_same_remote_peer) {
    RailMonitor m(default_params());
    // A far peer is slow on every rail: compared with each other, none is slow.
    RailId far0 = m.add_rail(rail_ep("mlx5_0", 1, "far"), T0);
    RailId far1 = m.add_rail(rail_ep("mlx5_1", 1, "far"), T0);
    RailId near0 = m.add_rail(rail_ep("mlx5_0", 1, "near"), T0);
    RailId near1 = m.add_rail(rail_ep("mlx5_1", 1, "near"), T0);
    feed(m, {{far0, microseconds(100)}, {far1, microseconds(110)}, {near0, microseconds(5)}, {near1, microseconds(6)}},
         T0 + seconds(1));
    for (RailId r : {far0, far1, near0, near1}) cr_expect(m.state(r, T0 + seconds(1)) == RailState::Healthy);
}

Test(rail_degraded, peers_are_rails_of_the_same_kind) {
    RailMonitor m(default_params());
    // A TCP rail answers in tens of microseconds where HCAs answer in a few:
    // it is compared with the other TCP rail, not with them.
    RailId hca0 = m.add_rail(rail_ep("mlx5_0", 1), T0);
    RailId hca1 = m.add_rail(rail_ep("mlx5_1", 1), T0);
    RailEndpoints tcp_ep0 = rail_ep("10.0.0.1", 0), tcp_ep1 = rail_ep("10.0.1.1", 0);
    tcp_ep0.kind = tcp_ep1.kind = TransportKind::Tcp;
    RailId tcp0 = m.add_rail(tcp_ep0, T0);
    RailId tcp1 = m.add_rail(tcp_ep1, T0);
    feed(m, {{hca0, microseconds(3)}, {hca1, microseconds(3)}, {tcp0, microseconds(40)}, {tcp1, microseconds(45)}},
         T0 + seconds(1));
    for (RailId r : {hca0, hca1, tcp0, tcp1}) cr_expect(m.state(r, T0 + seconds(1)) == RailState::Healthy);
    // Among its own kind a slow rail is still found.
    feed(m, {{hca0, microseconds(3)}, {hca1, microseconds(3)}, {tcp0, microseconds(40)}, {tcp1, microseconds(400)}},
         T0 + seconds(12));
    cr_expect(m.state(tcp1, T0 + seconds(12)) == RailState::Degraded);
    cr_expect(m.state(tcp0, T0 + seconds(12)) == RailState::Healthy);
}

Test(rail_degraded, paused_rails_are_not_a_reference_and_pause_wins) {
    FourRails f;
    for (int i = 0; i < 3; ++i) f.m.record(f.r0, RailOutcome::Timeout, T0);  // r0 paused
    // r0's samples (1 us) would make everyone look slow if it counted.
    feed(f.m, {{f.r0, microseconds(1)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(10)}},
         T0 + seconds(1));
    cr_expect(f.m.state(f.r0, T0 + seconds(1)) == RailState::Paused);
    for (RailId r : {f.r1, f.r2, f.r3}) cr_expect(f.m.state(r, T0 + seconds(1)) == RailState::Healthy);
    // A degraded rail that gets paused reports Paused.
    feed(f.m, {{f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(100)}}, T0 + seconds(2));
    cr_assert(f.m.state(f.r3, T0 + seconds(2)) == RailState::Degraded);
    for (int i = 0; i < 3; ++i) f.m.record(f.r3, RailOutcome::Timeout, T0 + seconds(2));
    cr_expect(f.m.state(f.r3, T0 + seconds(2)) == RailState::Paused);
}

Test(rail_degraded, degraded_rail_without_recent_samples_gets_another_chance) {
    FourRails f;
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(100)}},
         T0 + seconds(1));
    cr_assert(f.m.state(f.r3, T0 + seconds(1)) == RailState::Degraded);
    // Used last, r3 gets no traffic; once its samples age out it is retried.
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}}, T0 + seconds(12));
    cr_expect(f.m.state(f.r3, T0 + seconds(12)) == RailState::Healthy);
}

// A degraded rail takes no traffic while others are healthy, so it has no
// fresh samples to be restored by: after a second without any it is tried
// again, its old samples dropped (not after a whole 10 s window).
Test(rail_degraded, starved_degraded_rail_is_tried_again_after_a_second) {
    LogCapture log;
    EventLog events;
    FourRails f;
    f.m.set_observer(&events);
    const std::vector<std::pair<RailId, microseconds>> others{
        {f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}};
    auto with_r3 = others;
    with_r3.push_back({f.r3, microseconds(100)});
    feed(f.m, with_r3, T0 + seconds(1));
    cr_assert(f.m.state(f.r3, T0 + seconds(1)) == RailState::Degraded);
    feed(f.m, others, T0 + milliseconds(1900));
    cr_expect(f.m.state(f.r3, T0 + milliseconds(1900)) == RailState::Degraded, "0.9 s without traffic: still degraded");
    feed(f.m, others, T0 + seconds(2));
    cr_expect(f.m.state(f.r3, T0 + seconds(2)) == RailState::Healthy, "1 s without traffic: tried again");
    cr_expect_eq(log.count("rail restored"), 1);
    cr_expect(log.text().find("tried again") != std::string::npos, "%s", log.text().c_str());
    cr_expect_eq(events.count(RailEvent::Kind::Restored), 1);
    // Its old samples are gone: fast ones alone now decide, even though the
    // slow ones would still be inside the window.
    feed(f.m, {{f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}, {f.r3, microseconds(12)}},
         T0 + seconds(3));
    cr_expect(f.m.state(f.r3, T0 + seconds(3)) == RailState::Healthy);
    cr_expect_eq(events.count(RailEvent::Kind::Degraded), 1);
}

// A rail that is really slow is degraded again by fresh samples each time
// it is tried, and tried less often: 1 s, 2 s, 4 s... up to the window; the
// count fades while the rail stays healthy.
Test(rail_degraded, retry_interval_doubles_while_slow_and_fades_when_not) {
    FourRails f;
    const std::vector<std::pair<RailId, microseconds>> others{
        {f.r0, microseconds(10)}, {f.r1, microseconds(10)}, {f.r2, microseconds(10)}};
    auto with_r3 = others;
    with_r3.push_back({f.r3, microseconds(100)});
    auto at = [&](int ms) { return T0 + milliseconds(ms); };
    auto state = [&](int ms) { return f.m.state(f.r3, at(ms)); };
    feed(f.m, with_r3, at(1000));
    cr_assert(state(1000) == RailState::Degraded);
    feed(f.m, others, at(2000));
    cr_assert(state(2000) == RailState::Healthy);  // first retry after 1 s
    feed(f.m, with_r3, at(3000));                  // still slow
    cr_assert(state(3000) == RailState::Degraded);
    feed(f.m, others, at(4900));
    cr_expect(state(4900) == RailState::Degraded, "second retry waits 2 s");
    feed(f.m, others, at(5000));
    cr_expect(state(5000) == RailState::Healthy);
    feed(f.m, with_r3, at(6000));
    cr_assert(state(6000) == RailState::Degraded);
    feed(f.m, others, at(9900));
    cr_expect(state(9900) == RailState::Degraded, "third retry waits 4 s");
    feed(f.m, others, at(10000));
    cr_expect(state(10000) == RailState::Healthy);
    // Three more rounds: 8 s, then the 10 s window caps it.
    int t = 10000;
    for (int wait_ms : {8000, 10000, 10000}) {
        t += 1000;
        feed(f.m, with_r3, at(t));
        cr_assert(state(t) == RailState::Degraded);
        // (A second earlier: its samples, a second's worth, start to leave the window.)
        feed(f.m, others, at(t + wait_ms - 1000));
        cr_expect(state(t + wait_ms - 1000) == RailState::Degraded, "waits %d ms", wait_ms);
        feed(f.m, others, at(t + wait_ms));
        cr_expect(state(t + wait_ms) == RailState::Healthy, "tried after %d ms", wait_ms);
        t += wait_ms;
    }
    // Healthy for a minute (six windows): the count has faded, 1 s again.
    t += 60000;
    feed(f.m, with_r3, at(t));
    cr_assert(state(t) == RailState::Degraded);
    feed(f.m, others, at(t + 1000));
    cr_expect(state(t + 1000) == RailState::Healthy, "after a quiet minute the first retry is 1 s again");
}

Test(rail_degraded, lossy_rail_is_degraded_never_paused_until_loss_ends) {
    LogCapture log;
    EventLog events;
    FourRails f;
    f.m.set_observer(&events);
    f.m.set_lossy(f.r1, true, T0);
    cr_expect(f.m.state(f.r1, T0) == RailState::Degraded);
    cr_expect(f.m.state(f.r0, T0) == RailState::Healthy);
    f.m.set_lossy(f.r1, true, T0 + seconds(1));  // no change: no second event
    f.m.tick(T0 + seconds(60));
    cr_expect(f.m.state(f.r1, T0 + seconds(60)) == RailState::Degraded, "lossy for a minute, still only degraded");
    cr_expect_eq(f.m.counters(f.r1).pauses, 0u);
    cr_expect_eq(f.m.counters(f.r1).degradations, 1u);
    cr_expect_eq(log.count("rail lossy"), 1);
    f.m.set_lossy(f.r1, false, T0 + seconds(61));
    cr_expect(f.m.state(f.r1, T0 + seconds(61)) == RailState::Healthy);
    cr_expect_eq(events.count(RailEvent::Kind::Degraded), 1);
    cr_expect_eq(events.count(RailEvent::Kind::Restored), 1);
}

Test(rail_degraded, lossy_rails_are_no_reference_for_slowness) {
    // Two lossy rails answering fast must not make the clean ones look slow.
    FourRails f;
    f.m.set_lossy(f.r0, true, T0);
    f.m.set_lossy(f.r2, true, T0);
    feed(f.m, {{f.r0, microseconds(1)}, {f.r1, microseconds(5)}, {f.r2, microseconds(1)}, {f.r3, microseconds(5)}},
         T0 + seconds(1));
    cr_expect(f.m.state(f.r1, T0 + seconds(1)) == RailState::Healthy);
    cr_expect(f.m.state(f.r3, T0 + seconds(1)) == RailState::Healthy);
}
