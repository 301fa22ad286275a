// Paused rails are probed with exponential backoff between probe_base_ms and
// probe_max_ms; the schedule is checked against a ManualClock (point 7).
#include <criterion/criterion.h>

#include "health/rail_monitor.h"
#include "health_test_util.h"

using namespace tent;
using namespace tent::test;

static const TimePoint T0{std::chrono::hours(1)};

static RailMonitorParams probe_params() {
    Config c;
    Source api = api_source();
    cr_assert(c.set(Knob::ProbeBaseMs, "500", api).is_ok());
    cr_assert(c.set(Knob::ProbeMaxMs, "4000", api).is_ok());
    cr_assert(c.set(Knob::RailCooldownSecs, "60", api).is_ok());
    cr_assert(c.set(Knob::RailMaxCooldownSecs, "600", api).is_ok());
    return RailMonitorParams::from_config(c).value();
}

// Polls every 10 ms, sends every due probe (which fails), and returns the
// times (ms after T0) at which probes were sent.
static std::vector<long long> probe_times(RailMonitor& m, RailId r, TimePoint from, int ms) {
    std::vector<long long> sent;
    for (int i = 0; i <= ms / 10; ++i) {
        TimePoint t = from + milliseconds(10) * i;
        for (RailId p : m.due_probes(t)) {
            cr_assert_eq(p, r);
            m.probe_sent(p, t);
            m.record(p, RailOutcome::ProbeFailed, t);
            sent.push_back(std::chrono::duration_cast<milliseconds>(t - T0).count());
        }
    }
    return sent;
}

Test(rail_probes, healthy_rails_are_never_probed) {
    RailMonitor m(probe_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    cr_expect(m.due_probes(T0 + seconds(100)).empty());
    cr_expect_not(m.next_probe_at(r).has_value());
}

Test(rail_probes, backoff_from_base_to_cap) {
    RailMonitor m(probe_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    for (int i = 0; i < 3; ++i) m.record(r, RailOutcome::Timeout, T0);
    cr_expect(*m.next_probe_at(r) == T0 + milliseconds(500));
    auto got = probe_times(m, r, T0, 30000);
    // 0.5 s, then +1, +2, +4 (cap), +4, ...
    const std::vector<long long> want = {500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500};
    cr_assert_eq(got.size(), want.size(), "%zu probes", got.size());
    for (std::size_t i = 0; i < want.size(); ++i) cr_expect_eq(got[i], want[i], "probe %zu", i);
}

Test(rail_probes, answered_probe_recovers_and_stops_probing) {
    RailMonitor m(probe_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    for (int i = 0; i < 3; ++i) m.record(r, RailOutcome::Timeout, T0);
    auto due = m.due_probes(T0 + milliseconds(500));
    cr_assert_eq(due.size(), 1u);
    m.probe_sent(r, T0 + milliseconds(500));
    m.record(r, RailOutcome::ProbeAnswered, T0 + milliseconds(520));
    cr_expect(m.state(r, T0 + milliseconds(520)) == RailState::Healthy);
    cr_expect(m.due_probes(T0 + seconds(100)).empty());
    cr_expect_not(m.next_probe_at(r).has_value());
}

Test(rail_probes, repeated_pause_probes_start_later) {
    RailMonitor m(probe_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    for (int i = 0; i < 3; ++i) m.record(r, RailOutcome::Timeout, T0);
    m.record(r, RailOutcome::ProbeAnswered, T0 + seconds(1));
    // Second pause in a row (no quiet period in between): first probe after 1 s.
    for (int i = 0; i < 3; ++i) m.record(r, RailOutcome::Timeout, T0 + seconds(2));
    cr_expect_eq(m.pause_level(r, T0 + seconds(2)), 2u);
    cr_expect(*m.next_probe_at(r) == T0 + seconds(3));
    m.record(r, RailOutcome::ProbeAnswered, T0 + seconds(3));
    for (int i = 0; i < 3; ++i) m.record(r, RailOutcome::Timeout, T0 + seconds(4));
    cr_expect(*m.next_probe_at(r) == T0 + seconds(6));  // third: 2 s
}

Test(rail_probes, several_rails_keep_separate_schedules) {
    RailMonitor m(probe_params());
    RailId a = m.add_rail(rail_ep("mlx5_0", 1), T0);
    RailId b = m.add_rail(rail_ep("mlx5_1", 1), T0);
    for (int i = 0; i < 3; ++i) m.record(a, RailOutcome::Timeout, T0);
    for (int i = 0; i < 3; ++i) m.record(b, RailOutcome::Timeout, T0 + milliseconds(200));
    cr_expect(m.due_probes(T0 + milliseconds(499)).empty());
    auto d1 = m.due_probes(T0 + milliseconds(500));
    cr_assert_eq(d1.size(), 1u);
    cr_expect_eq(d1[0], a);
    auto d2 = m.due_probes(T0 + milliseconds(700));
    cr_assert_eq(d2.size(), 2u);  // a not sent yet: still due
    m.probe_sent(a, T0 + milliseconds(700));
    m.probe_sent(b, T0 + milliseconds(700));
    cr_expect(*m.next_probe_at(a) == T0 + milliseconds(1700));
    cr_expect(*m.next_probe_at(b) == T0 + milliseconds(1700));
}
