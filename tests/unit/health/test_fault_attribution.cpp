// Fault attribution as LNet does it (point 6): a local port or device fault
// takes down every rail through it, a remote port fault only the rails to
// that port; async events act at once and match on the port number.
#include <criterion/criterion.h>

#include "health/rail_monitor.h"
#include "health_test_util.h"

using namespace tent;
using namespace tent::test;

static const TimePoint T0{std::chrono::hours(1)};

// Two local devices with two ports each (only mlx5_0 has port 2), two peers.
struct Fabric {
    RailMonitor m{default_params()};
    RailId a0p1_x = m.add_rail(rail_ep("mlx5_0", 1, "x", "mlx5_0", 1), T0);
    RailId a0p1_y = m.add_rail(rail_ep("mlx5_0", 1, "y", "mlx5_0", 1), T0);
    RailId a0p2_x = m.add_rail(rail_ep("mlx5_0", 2, "x", "mlx5_1", 1), T0);
    RailId a1p1_x = m.add_rail(rail_ep("mlx5_1", 1, "x", "mlx5_0", 1), T0);
    RailId a1p1_y = m.add_rail(rail_ep("mlx5_1", 1, "y", "mlx5_1", 1), T0);

    std::vector<RailState> states(TimePoint t) const {
        std::vector<RailState> s;
        for (RailId r = 0; r < m.rail_count(); ++r) s.push_back(m.state(r, t));
        return s;
    }
};

static constexpr RailState H = RailState::Healthy, P = RailState::Paused;

static void expect_states(const Fabric& f, TimePoint t, std::vector<RailState> want, const char* what) {
    auto got = f.states(t);
    for (std::size_t i = 0; i < want.size(); ++i)
        cr_expect(got[i] == want[i], "%s: rail %zu is %s, want %s", what, i, rail_state_name(got[i]),
                  rail_state_name(want[i]));
}

Test(fault_attribution, local_port_error_pauses_every_rail_through_that_port_only) {
    LogCapture log;
    Fabric f;
    f.m.on_async_event("mlx5_0", 1, AsyncEvent::PortError, T0);
    expect_states(f, T0, {P, P, H, H, H}, "mlx5_0 port 1 down");
    cr_expect_eq(log.count("port down"), 1);
    cr_expect_eq(log.count("rail paused"), 2);
    cr_expect_eq(f.m.counters(f.a0p1_x).pauses, 1u);
}

Test(fault_attribution, port_event_matches_on_port_number) {
    Fabric f;
    f.m.on_async_event("mlx5_0", 2, AsyncEvent::PortError, T0);
    expect_states(f, T0, {H, H, P, H, H}, "mlx5_0 port 2 down");
    f.m.on_async_event("mlx5_0", 3, AsyncEvent::PortError, T0);  // a port no rail uses
    expect_states(f, T0, {H, H, P, H, H}, "mlx5_0 port 3 down");
}

Test(fault_attribution, local_port_fault_holds_until_port_active) {
    LogCapture log;
    EventLog events;
    Fabric f;
    f.m.set_observer(&events);
    f.m.on_async_event("mlx5_0", 1, AsyncEvent::PortError, T0);
    // Neither cooldown expiry, nor probes, nor a stray completion bring it back.
    f.m.tick(T0 + seconds(3600));
    cr_expect(f.m.state(f.a0p1_x, T0 + seconds(3600)) == P);
    cr_expect(f.m.due_probes(T0 + seconds(3600)).empty());
    cr_expect_not(f.m.next_probe_at(f.a0p1_x).has_value());
    cr_expect_not(f.m.paused_until(f.a0p1_x, T0).has_value());
    f.m.record(f.a0p1_x, RailOutcome::Success, T0 + seconds(3600));
    cr_expect(f.m.state(f.a0p1_x, T0 + seconds(3600)) == P);
    // The port comes back: both its rails return at once.
    f.m.on_async_event("mlx5_0", 1, AsyncEvent::PortActive, T0 + seconds(3601));
    expect_states(f, T0 + seconds(3601), {H, H, H, H, H}, "port active");
    cr_expect_eq(log.count("rail recovered (port active)"), 2);
    cr_expect_eq(f.m.counters(f.a0p1_y).recoveries_by(RecoveryReason::PortActive), 1u);
    cr_expect(events.events.back().reason == RecoveryReason::PortActive);
}

Test(fault_attribution, device_fatal_takes_down_all_its_ports) {
    Fabric f;
    f.m.on_async_event("mlx5_0", 0, AsyncEvent::DeviceFatal, T0);
    expect_states(f, T0, {P, P, P, H, H}, "mlx5_0 fatal");
    f.m.tick(T0 + seconds(1000));
    expect_states(f, T0 + seconds(1000), {P, P, P, H, H}, "still fatal");
    // Port 1 reports active after the device is reopened: its rails return;
    // port 2's rail is no longer held and returns when its cooldown has run.
    f.m.on_async_event("mlx5_0", 1, AsyncEvent::PortActive, T0 + seconds(1000));
    expect_states(f, T0 + seconds(1000), {H, H, H, H, H}, "reopened");
    f.m.tick(T0 + seconds(1000));
    cr_expect_eq(f.m.counters(f.a0p2_x).recoveries_by(RecoveryReason::CooldownExpired), 1u);
}

Test(fault_attribution, remote_port_fault_pauses_only_rails_to_that_port) {
    Fabric f;
    f.m.on_remote_event("x", "mlx5_0", 1, AsyncEvent::PortError, T0);
    // Rails to x's mlx5_0 port 1 (through either local device) stop; rails to
    // y and to x's mlx5_1 go on.
    expect_states(f, T0, {P, H, H, P, H}, "x/mlx5_0:1 down");
    cr_expect(f.m.due_probes(T0).empty());
    // Remote faults are probed: it's how we learn the remote port is back.
    auto due = f.m.due_probes(T0 + seconds(1));
    cr_assert_eq(due.size(), 2u);
    cr_expect_eq(due[0], f.a0p1_x);
    cr_expect_eq(due[1], f.a1p1_x);
    f.m.tick(T0 + seconds(3600));
    expect_states(f, T0 + seconds(3600), {P, H, H, P, H}, "held past cooldown");
    // One answered probe proves the remote port; the other rail to it is no
    // longer held and comes back on its own cooldown (long expired) at tick.
    f.m.record(f.a0p1_x, RailOutcome::ProbeAnswered, T0 + seconds(3600));
    cr_expect(f.m.state(f.a0p1_x, T0 + seconds(3600)) == H);
    f.m.tick(T0 + seconds(3600));
    expect_states(f, T0 + seconds(3600), {H, H, H, H, H}, "remote back");
}

Test(fault_attribution, remote_port_active_and_remote_device_fatal) {
    Fabric f;
    f.m.on_remote_event("x", "mlx5_0", 1, AsyncEvent::DeviceFatal, T0);
    expect_states(f, T0, {P, H, H, P, H}, "x/mlx5_0 fatal");
    f.m.on_remote_event("x", "mlx5_0", 1, AsyncEvent::PortActive, T0 + seconds(5));
    expect_states(f, T0 + seconds(5), {H, H, H, H, H}, "x/mlx5_0 active");
    cr_expect_eq(f.m.counters(f.a1p1_x).recoveries_by(RecoveryReason::PortActive), 1u);
    f.m.on_remote_event("y", "mlx5_1", 1, AsyncEvent::PortError, T0 + seconds(6));
    expect_states(f, T0 + seconds(6), {H, H, H, H, P}, "y/mlx5_1:1 down");
    f.m.on_remote_event("y", "mlx5_1", 1, AsyncEvent::Other, T0 + seconds(7));
    f.m.on_async_event("mlx5_1", 1, AsyncEvent::Other, T0 + seconds(7));
    expect_states(f, T0 + seconds(7), {H, H, H, H, P}, "other events change nothing");
}

Test(fault_attribution, local_and_remote_faults_combine) {
    Fabric f;
    f.m.on_async_event("mlx5_1", 1, AsyncEvent::PortError, T0);
    f.m.on_remote_event("x", "mlx5_0", 1, AsyncEvent::PortError, T0);
    // a1p1_x is held by both: the local port coming back is not enough.
    f.m.on_async_event("mlx5_1", 1, AsyncEvent::PortActive, T0 + seconds(1));
    expect_states(f, T0 + seconds(1), {P, H, H, P, H}, "local back, remote still down");
    f.m.on_remote_event("x", "mlx5_0", 1, AsyncEvent::PortActive, T0 + seconds(2));
    expect_states(f, T0 + seconds(2), {H, H, H, H, H}, "both back");
}

Test(fault_attribution, event_on_already_paused_rail_does_not_double_count) {
    Fabric f;
    for (int i = 0; i < 3; ++i) f.m.record(f.a0p1_x, RailOutcome::Timeout, T0);
    f.m.on_async_event("mlx5_0", 1, AsyncEvent::PortError, T0);
    f.m.on_async_event("mlx5_0", 1, AsyncEvent::PortError, T0);  // repeated event
    cr_expect_eq(f.m.counters(f.a0p1_x).pauses, 1u);
    cr_expect_eq(f.m.counters(f.a0p1_y).pauses, 1u);
}

Test(fault_attribution, rail_added_behind_a_down_port_starts_paused) {
    RailMonitor m(default_params());
    m.on_async_event("mlx5_0", 1, AsyncEvent::PortError, T0);
    m.on_async_event("mlx5_1", 0, AsyncEvent::DeviceFatal, T0);
    m.on_remote_event("x", "mlx5_2", 1, AsyncEvent::PortError, T0);
    EventLog events;
    m.set_observer(&events);
    RailId a = m.add_rail(rail_ep("mlx5_0", 1, "x", "mlx5_0", 1), T0);
    RailId b = m.add_rail(rail_ep("mlx5_1", 1, "x", "mlx5_0", 1), T0);
    RailId c = m.add_rail(rail_ep("mlx5_3", 1, "x", "mlx5_2", 1), T0);
    RailId d = m.add_rail(rail_ep("mlx5_3", 1, "x", "mlx5_0", 1), T0);
    cr_expect(m.state(a, T0) == P);
    cr_expect(m.state(b, T0) == P);
    cr_expect(m.state(c, T0) == P);
    cr_expect(m.state(d, T0) == H);
    cr_assert_eq(events.events.size(), 3u);
    cr_expect(events.events[0].cause == PauseCause::LocalPortDown);
    cr_expect(events.events[1].cause == PauseCause::LocalDeviceFatal);
    cr_expect(events.events[2].cause == PauseCause::RemotePortDown);
}
