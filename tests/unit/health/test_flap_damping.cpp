// Backoff memory decays instead of resetting (point 4), quantified:
// a rail flapping every second for ten minutes spends most of it paused with
// a growing cooldown; a rail failing once a day always gets the base cooldown.
#include <criterion/criterion.h>

#include "health/rail_monitor.h"
#include "health_test_util.h"

using namespace tent;
using namespace tent::test;

static const TimePoint T0{std::chrono::hours(1)};

static void burst(RailMonitor& m, RailId r, TimePoint at) {
    for (int i = 0; i < 3; ++i) m.record(r, RailOutcome::RetryExceeded, at);
}

// Runs `seconds_total` of simulated time in 100 ms steps and returns the
// fraction of samples in which the rail was paused. Each whole second the
// engine ticks the monitor, sends due probes and uses the rail if it is not
// paused. `link_up(s)` says whether the link works during second s.
template <typename LinkUp>
static double simulate(RailMonitor& m, RailId r, int seconds_total, LinkUp link_up) {
    int paused = 0, samples = 0;
    for (int step = 0; step < seconds_total * 10; ++step) {
        TimePoint t = T0 + milliseconds(100) * step;
        if (step % 10 == 0) {
            int s = step / 10;
            m.tick(t);
            for (RailId p : m.due_probes(t)) {
                m.probe_sent(p, t);
                m.record(p, link_up(s) ? RailOutcome::ProbeAnswered : RailOutcome::ProbeFailed, t);
            }
            if (m.state(r, t) != RailState::Paused) {
                if (link_up(s))
                    m.record(r, RailOutcome::Success, t);
                else
                    burst(m, r, t);
            }
        }
        paused += m.state(r, t) == RailState::Paused;
        ++samples;
    }
    return static_cast<double>(paused) / samples;
}

Test(flap_damping, error_burst_every_second_is_paused_most_of_ten_minutes) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    double fraction = simulate(m, r, 600, [](int) { return false; });
    TimePoint end = T0 + seconds(600);
    cr_log_info("error burst every second: paused %.3f of 600 s, %llu pauses", fraction,
                (unsigned long long)m.counters(r).pauses);
    cr_expect_gt(fraction, 0.95, "paused %.3f of the time", fraction);
    cr_expect(m.cooldown_of(r, end) > seconds(30));
    cr_expect(m.cooldown_of(r, end) == seconds(300));  // grew to the cap
    cr_expect_gt(m.counters(r).pauses, 4u);
    cr_expect_lt(m.counters(r).pauses, 10u);  // damped: not 600 pauses
}

Test(flap_damping, link_flapping_every_second_with_probes_is_damped) {
    // Down on even seconds, up on odd ones; probes and traffic see the same link.
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    double fraction = simulate(m, r, 600, [](int s) { return s % 2 == 1; });
    cr_log_info("link flapping every second: paused %.3f of 600 s, %llu pauses, %llu probe recoveries", fraction,
                (unsigned long long)m.counters(r).pauses,
                (unsigned long long)m.counters(r).recoveries_by(RecoveryReason::Probe));
    cr_expect_gt(fraction, 0.8, "paused %.3f of the time", fraction);
    cr_expect(m.cooldown_of(r, T0 + seconds(600)) > seconds(30));
    cr_expect_lt(m.counters(r).pauses, 60u, "%llu pauses", (unsigned long long)m.counters(r).pauses);
}

Test(flap_damping, failing_once_a_day_always_gets_base_cooldown) {
    LogCapture log;
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    for (int day = 0; day < 7; ++day) {
        TimePoint t = T0 + std::chrono::hours(24) * day;
        cr_expect_eq(m.pause_level(r, t), 0u, "day %d: memory not faded", day);
        burst(m, r, t);
        cr_assert(m.state(r, t) == RailState::Paused);
        cr_expect(m.cooldown_of(r, t) == seconds(30), "day %d: cooldown %lld s", day,
                  (long long)std::chrono::duration_cast<seconds>(m.cooldown_of(r, t)).count());
        m.tick(t + milliseconds(29999));
        cr_expect(m.state(r, t + milliseconds(29999)) == RailState::Paused);
        m.tick(t + seconds(30));
        cr_expect(m.state(r, t + seconds(30)) == RailState::Healthy, "day %d", day);
    }
    cr_expect_eq(m.counters(r).pauses, 7u);
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 7);
}

Test(flap_damping, memory_halves_per_quiet_period_not_reset) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    // Four pauses in a row: level 4 (cooldowns 30, 60, 120, 240).
    TimePoint t = T0;
    for (int i = 0; i < 4; ++i) {
        burst(m, r, t);
        t += m.cooldown_of(r, t);
        m.tick(t);
    }
    cr_expect_eq(m.pause_level(r, t), 4u);
    cr_expect(m.cooldown_of(r, t) == seconds(300));  // the next pause would be capped
    // One quiet base period halves the memory: level 2, next pause 120 s (not 30 s).
    cr_expect_eq(m.pause_level(r, t + seconds(30)), 2u);
    cr_expect(m.cooldown_of(r, t + seconds(30)) == seconds(120));
    cr_expect_eq(m.pause_level(r, t + seconds(60)), 1u);
    cr_expect_eq(m.pause_level(r, t + seconds(90)), 0u);
    burst(m, r, t + seconds(30));
    cr_expect(m.cooldown_of(r, t + seconds(30)) == seconds(120));
    cr_expect_eq(m.pause_level(r, t + seconds(30)), 3u);
}
