// RailMonitor: sliding-window pauses, cooldown per pause, recovery and its
// log keywords, counters and events (points 1-3 and the metrics feed).
#include <criterion/criterion.h>

#include "health/health_score.h"
#include "health/rail_monitor.h"
#include "health_test_util.h"

using namespace tent;
using namespace tent::test;

static const TimePoint T0{std::chrono::hours(1)};

static void burst(RailMonitor& m, RailId r, TimePoint at, int n = 3, RailOutcome o = RailOutcome::RetryExceeded) {
    for (int i = 0; i < n; ++i) m.record(r, o, at);
}

Test(rail_monitor, params_from_default_config) {
    auto p = default_params();
    cr_expect_eq(p.error_threshold, 3u);
    cr_expect(p.error_window == seconds(10));
    cr_expect(p.cooldown == seconds(30));
    cr_expect(p.max_cooldown == seconds(300));
    cr_expect(p.probe_base == milliseconds(1000));
    cr_expect(p.probe_max == milliseconds(60000));
    cr_expect_float_eq(p.slow_rail_factor, 4.0, 1e-9);
    cr_expect(p.slow_rail_window == seconds(10));
    cr_expect_eq(p.slow_rail_min_samples, 16u);
}

Test(rail_monitor, params_follow_config_and_reject_cap_below_base) {
    Config c;
    Source api = api_source();
    cr_assert(c.set(Knob::RailCooldownSecs, "5", api).is_ok());
    cr_assert(c.set(Knob::ProbeBaseMs, "250", api).is_ok());
    auto p = RailMonitorParams::from_config(c);
    cr_assert(p.is_ok());
    cr_expect(p->cooldown == seconds(5));
    cr_expect(p->probe_base == milliseconds(250));

    cr_assert(c.set(Knob::RailMaxCooldownSecs, "4", api).is_ok());
    auto bad = RailMonitorParams::from_config(c);
    cr_assert_not(bad.is_ok());
    std::string msg = bad.status().message();
    cr_expect(msg.find("rail_max_cooldown_secs") != std::string::npos, "%s", msg.c_str());
    cr_expect(msg.find("rail_cooldown_secs") != std::string::npos, "%s", msg.c_str());

    Config c2;
    cr_assert(c2.set(Knob::ProbeMaxMs, "10", api).is_ok());
    auto bad2 = RailMonitorParams::from_config(c2);
    cr_assert_not(bad2.is_ok());
    std::string msg2 = bad2.status().message();
    cr_expect(msg2.find("probe_max_ms") != std::string::npos, "%s", msg2.c_str());
}

Test(rail_monitor, threshold_errors_in_window_pause) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    cr_expect(m.state(r, T0) == RailState::Healthy);
    m.record(r, RailOutcome::Timeout, T0);
    m.record(r, RailOutcome::RemoteAccess, T0 + seconds(5));
    cr_expect(m.state(r, T0 + seconds(5)) == RailState::Healthy);
    cr_expect_eq(m.errors_in_window(r, T0 + seconds(5)), 2u);
    m.record(r, RailOutcome::SubmitFailed, T0 + seconds(9));
    cr_expect(m.state(r, T0 + seconds(9)) == RailState::Paused);
    cr_expect_eq(m.counters(r).pauses, 1u);
}

Test(rail_monitor, errors_spread_wider_than_window_never_pause) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    // An error every 5.1 s for a day, with successes in between.
    for (int i = 0; i < 16000; ++i) {
        TimePoint t = T0 + milliseconds(5100) * i;
        m.record(r, RailOutcome::RetryExceeded, t);
        m.record(r, RailOutcome::Success, t + milliseconds(1));
        cr_assert(m.state(r, t) == RailState::Healthy, "paused at error %d", i);
    }
    cr_expect_eq(m.counters(r).pauses, 0u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Timeout), 16000u);
}

Test(rail_monitor, success_does_not_reset_window) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    // Many good completions between the errors: the third error still pauses.
    for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 100; ++k) m.record(r, RailOutcome::Success, T0 + seconds(i) + milliseconds(k));
        m.record(r, RailOutcome::Timeout, T0 + seconds(i) + milliseconds(100));
    }
    cr_expect(m.state(r, T0 + seconds(3)) == RailState::Paused);
    cr_expect_eq(m.counters(r).pauses, 1u);
}

Test(rail_monitor, flushes_and_probe_failures_do_not_pause) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    burst(m, r, T0, 100, RailOutcome::Flushed);
    burst(m, r, T0, 100, RailOutcome::ProbeFailed);
    cr_expect(m.state(r, T0) == RailState::Healthy);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Flush), 100u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Probe), 100u);
}

Test(rail_monitor, first_pause_is_base_cooldown_then_doubles_capped) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    // Three errors make the first pause 30 s, not 120 s (the anchor's bug).
    burst(m, r, T0);
    cr_expect(m.cooldown_of(r, T0) == seconds(30));
    cr_expect(m.state(r, T0 + milliseconds(29999)) == RailState::Paused);
    cr_expect(m.state(r, T0 + seconds(30)) == RailState::Healthy);
    // Repeated pauses right after each expiry: 60, 120, 240, then the cap.
    const int want[] = {60, 120, 240, 300, 300};
    TimePoint t = T0 + seconds(30);
    for (int w : want) {
        m.tick(t);
        cr_assert(m.state(r, t) == RailState::Healthy);
        burst(m, r, t);
        cr_expect(m.cooldown_of(r, t) == seconds(w), "cooldown %lld, want %d",
                  (long long)std::chrono::duration_cast<seconds>(m.cooldown_of(r, t)).count(), w);
        cr_expect(*m.paused_until(r, t) == t + seconds(w));
        t += seconds(w);
    }
}

Test(rail_monitor, errors_while_paused_do_not_extend_or_carry_over) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    burst(m, r, T0);
    burst(m, r, T0 + seconds(25), 10);  // in-flight errors arriving during the pause
    cr_expect(*m.paused_until(r, T0 + seconds(25)) == T0 + seconds(30));
    cr_expect_eq(m.counters(r).pauses, 1u);
    m.tick(T0 + seconds(30));
    cr_expect(m.state(r, T0 + seconds(30)) == RailState::Healthy);
    m.record(r, RailOutcome::Timeout, T0 + seconds(31));  // one fresh error: not enough
    cr_expect(m.state(r, T0 + seconds(31)) == RailState::Healthy);
}

Test(rail_monitor, success_unpauses_at_once_and_logs_traffic) {
    LogCapture log;
    EventLog events;
    RailMonitor m(default_params());
    m.set_observer(&events);
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    burst(m, r, T0);
    cr_expect_eq(log.count("rail paused"), 1);
    m.record(r, RailOutcome::Success, T0 + seconds(2));
    cr_expect(m.state(r, T0 + seconds(2)) == RailState::Healthy);
    cr_expect_eq(log.count("rail recovered (traffic)"), 1);
    cr_expect_eq(log.count("rail recovered (probe)"), 0);
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 0);
    cr_expect_eq(m.counters(r).recoveries_by(RecoveryReason::Traffic), 1u);
    cr_assert_eq(events.events.size(), 2u);
    cr_expect(events.events[0].kind == RailEvent::Kind::Paused);
    cr_expect(events.events[0].cause == PauseCause::Errors);
    cr_expect(events.events[0].cooldown == seconds(30));
    cr_expect_eq(events.events[0].pause_level, 1u);
    cr_expect(events.events[1].kind == RailEvent::Kind::Recovered);
    cr_expect(events.events[1].reason == RecoveryReason::Traffic);
    cr_expect(events.events[1].at == T0 + seconds(2));
}

Test(rail_monitor, probe_answer_unpauses_and_logs_probe) {
    LogCapture log;
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    burst(m, r, T0);
    m.record(r, RailOutcome::ProbeAnswered, T0 + seconds(1));
    cr_expect(m.state(r, T0 + seconds(1)) == RailState::Healthy);
    cr_expect_eq(log.count("rail recovered (probe)"), 1);
    cr_expect_eq(log.count("rail recovered (traffic)"), 0);
    cr_expect_eq(m.counters(r).recoveries_by(RecoveryReason::Probe), 1u);
    std::string text = log.text();
    cr_expect(text.find("mlx5_0:1 -> peer mlx5_0:1") != std::string::npos, "%s", text.c_str());
}

Test(rail_monitor, cooldown_expiry_unpauses_on_tick_and_logs) {
    LogCapture log;
    EventLog events;
    RailMonitor m(default_params());
    m.set_observer(&events);
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    burst(m, r, T0);
    m.tick(T0 + seconds(29));
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 0);
    cr_expect(m.state(r, T0 + seconds(29)) == RailState::Paused);
    m.tick(T0 + seconds(30));
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 1);
    cr_expect_eq(m.counters(r).recoveries_by(RecoveryReason::CooldownExpired), 1u);
    cr_expect(events.events.back().reason == RecoveryReason::CooldownExpired);
    cr_expect_not(m.paused_until(r, T0 + seconds(30)).has_value());
    m.tick(T0 + seconds(31));  // nothing more to recover
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 1);
}

Test(rail_monitor, outcomes_after_expiry_count_even_before_tick) {
    LogCapture log;
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    burst(m, r, T0);
    // No tick: the engine sees the rail healthy at T0+31 s and uses it.
    cr_expect(m.state(r, T0 + seconds(31)) == RailState::Healthy);
    burst(m, r, T0 + seconds(31));
    cr_expect(m.state(r, T0 + seconds(31)) == RailState::Paused);
    cr_expect(m.cooldown_of(r, T0 + seconds(31)) == seconds(60));
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 1);
    // A success after the next expiry is not mistaken for a traffic recovery.
    m.record(r, RailOutcome::Success, T0 + seconds(95));
    cr_expect_eq(log.count("rail recovered (cooldown expired)"), 2);
    cr_expect_eq(log.count("rail recovered (traffic)"), 0);
}

Test(rail_monitor, healthy_run_logs_nothing_at_default_level) {
    LogCapture log(LogLevel::Warn);
    RailMonitor m(default_params());
    RailId a = m.add_rail(rail_ep("mlx5_0", 1), T0);
    RailId b = m.add_rail(rail_ep("mlx5_1", 1), T0);
    for (int i = 0; i < 1000; ++i) {
        TimePoint t = T0 + milliseconds(10) * i;
        m.record(a, RailOutcome::Success, t);
        m.record(b, RailOutcome::Success, t);
        m.record_latency(a, std::chrono::microseconds(10), t);
        m.record_latency(b, std::chrono::microseconds(11), t);
        if (i % 100 == 0) m.tick(t);
    }
    std::string text = log.text();
    cr_expect(text.empty(), "logged: %s", text.c_str());
}

Test(rail_monitor, counters_count_every_outcome_and_class) {
    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    const RailOutcome all[] = {RailOutcome::Success,     RailOutcome::Timeout,        RailOutcome::RetryExceeded,
                               RailOutcome::Flushed,     RailOutcome::RemoteAccess,   RailOutcome::LocalProtection,
                               RailOutcome::SubmitFailed, RailOutcome::ProbeAnswered, RailOutcome::ProbeFailed};
    cr_assert_eq(sizeof all / sizeof all[0], kRailOutcomeCount);
    for (auto o : all) m.record(r, o, T0);
    for (auto o : all) cr_expect_eq(m.counters(r).outcomes_of(o), 1u, "%s", rail_outcome_name(o));
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Timeout), 2u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Remote), 1u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Local), 1u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Submit), 1u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Flush), 1u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::Probe), 1u);
    cr_expect_eq(m.counters(r).errors_of(ErrorClass::None), 0u);
}

Test(rail_monitor, names_are_stable_labels) {
    std::string a = rail_outcome_name(RailOutcome::RetryExceeded), b = error_class_name(ErrorClass::Submit),
                c = recovery_reason_name(RecoveryReason::CooldownExpired), d = pause_cause_name(PauseCause::LocalPortDown),
                e = rail_state_name(RailState::Degraded);
    cr_expect_str_eq(a.c_str(), "retry_exceeded");
    cr_expect_str_eq(b.c_str(), "submit");
    cr_expect_str_eq(c.c_str(), "cooldown_expired");
    cr_expect_str_eq(d.c_str(), "local port down");
    cr_expect_str_eq(e.c_str(), "degraded");
    // Every enumerator has a real name.
    for (std::size_t i = 0; i < kRailOutcomeCount; ++i)
        cr_expect_str_neq(rail_outcome_name(static_cast<RailOutcome>(i)), "?");
    for (std::size_t i = 0; i < kErrorClassCount; ++i)
        cr_expect_str_neq(error_class_name(static_cast<ErrorClass>(i)), "?");
    for (std::size_t i = 0; i < kRecoveryReasonCount; ++i)
        cr_expect_str_neq(recovery_reason_name(static_cast<RecoveryReason>(i)), "?");
    for (int i = 0; i < 4; ++i) cr_expect_str_neq(pause_cause_name(static_cast<PauseCause>(i)), "?");
}

Test(rail_monitor, unknown_rail_is_ignored_safely) {
    RailMonitor m(default_params());
    m.record(7, RailOutcome::Timeout, T0);
    m.record_latency(7, seconds(1), T0);
    m.probe_sent(7, T0);
    cr_expect(m.state(7, T0) == RailState::Paused);
    cr_expect(m.cooldown_of(7, T0) == seconds(30));
    cr_expect_not(m.paused_until(7, T0).has_value());
    cr_expect_not(m.next_probe_at(7).has_value());
    cr_expect_eq(m.pause_level(7, T0), 0u);
    cr_expect_eq(m.errors_in_window(7, T0), 0u);
    cr_expect_eq(m.rail_count(), 0u);
}

Test(rail_monitor, health_score_tracks_errors_state_and_degradation) {
    cr_expect_eq(rail_health_score(RailState::Healthy, 0, 3), 1000);
    cr_expect_eq(rail_health_score(RailState::Healthy, 1, 3), 667);
    cr_expect_eq(rail_health_score(RailState::Healthy, 2, 3), 334);
    cr_expect_eq(rail_health_score(RailState::Healthy, 9, 3), 0);
    cr_expect_eq(rail_health_score(RailState::Degraded, 0, 3), 500);
    cr_expect_eq(rail_health_score(RailState::Paused, 0, 3), 0);
    cr_expect_eq(rail_health_score(RailState::Healthy, 0, 0), 1000);

    RailMonitor m(default_params());
    RailId r = m.add_rail(rail_ep("mlx5_0", 1), T0);
    cr_expect_eq(m.health_score(r, T0), 1000);
    m.record(r, RailOutcome::Timeout, T0);
    cr_expect_eq(m.health_score(r, T0), 667);
    cr_expect_eq(m.health_score(r, T0 + seconds(10)), 1000);  // the error left the window
    burst(m, r, T0 + seconds(20));
    cr_expect_eq(m.health_score(r, T0 + seconds(20)), 0);
}

// A rail whose connection is gone is forgotten: its pause does not outlive
// it, events no longer reach it, and the next rail reuses its id with a
// fresh state (a server whose peers come and go does not grow).
Test(rail_monitor, removed_rails_are_forgotten_and_their_ids_reused) {
    RailMonitor m(default_params());
    RailId a = m.add_rail(rail_ep("mlx5_0", 1), T0);
    RailId b = m.add_rail(rail_ep("mlx5_1", 1), T0);
    burst(m, a, T0);
    cr_assert(m.state(a, T0) == RailState::Paused);
    m.remove_rail(a);
    m.remove_rail(a);  // twice: no second free id
    cr_expect_eq(m.rail_count(), 2u);
    RailId c = m.add_rail(rail_ep("mlx5_0", 1, "other"), T0);
    cr_expect_eq(c, a, "the removed rail's id is reused");
    cr_expect(m.state(c, T0) == RailState::Healthy, "with a fresh state");
    cr_expect_eq(m.errors_in_window(c, T0), 0u);
    cr_expect_eq(m.rail_count(), 2u);
    RailId d = m.add_rail(rail_ep("mlx5_2", 1), T0);
    cr_expect_eq(d, 2u);
    cr_expect(m.state(b, T0) == RailState::Healthy);
}
