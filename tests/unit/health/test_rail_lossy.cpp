// A rail whose transport reports loss (Rail::lossy(), TCP retransmitting)
// is degraded -- used last, never paused for it -- until the loss clears;
// a lossy rail is not a reference for the slow-rail check of the others.
#include <criterion/criterion.h>

#include "health/rail_monitor.h"
#include "health_test_util.h"

using namespace tent;
using namespace tent::test;
using std::chrono::microseconds;

static const TimePoint T0{std::chrono::hours(1)};

Test(rail_lossy, lossy_rail_is_degraded_until_the_loss_clears) {
    LogCapture log;
    EventLog events;
    RailMonitor m{default_params()};
    RailId a = m.add_rail(rail_ep("tcp a", 0), T0);
    RailId b = m.add_rail(rail_ep("tcp b", 0), T0);
    m.set_lossy(b, true, T0 + seconds(1));
    m.set_observer(&events);
    m.set_lossy(b, false, T0 + seconds(2));
    m.set_lossy(b, true, T0 + seconds(3));
    m.set_lossy(b, true, T0 + seconds(4)); // no change: no event
    cr_expect(m.state(b, T0 + seconds(4)) == RailState::Degraded);
    cr_expect(m.state(a, T0 + seconds(4)) == RailState::Healthy);
    cr_expect_eq(m.counters(b).pauses, 0u);
    cr_expect_eq(events.count(RailEvent::Kind::Restored), 1);
    cr_expect_eq(events.count(RailEvent::Kind::Degraded), 1);
    cr_expect_eq(log.count("rail degraded"), 2);
    // Many ticks later, still lossy: still degraded, never paused.
    for (int s = 5; s < 100; ++s) m.tick(T0 + seconds(s));
    cr_expect(m.state(b, T0 + seconds(99)) == RailState::Degraded);
    m.set_lossy(b, false, T0 + seconds(100));
    cr_expect(m.state(b, T0 + seconds(100)) == RailState::Healthy);
    cr_expect_eq(log.count("rail restored"), 2);
}

// The lossy rail's latency does not make the clean one look slow.
Test(rail_lossy, lossy_rail_is_no_reference_for_slowness) {
    RailMonitor m{default_params()};
    RailId a = m.add_rail(rail_ep("tcp a", 0), T0);
    RailId b = m.add_rail(rail_ep("tcp b", 0), T0);
    m.set_lossy(a, true, T0);
    for (int i = 0; i < 40; ++i) {
        TimePoint t = T0 + milliseconds(25) * (i + 1);
        m.record_latency(a, microseconds(10), t);  // lossy but quick here
        m.record_latency(b, microseconds(100), t);
    }
    m.tick(T0 + seconds(1));
    cr_expect(m.state(b, T0 + seconds(1)) == RailState::Healthy, "judged against a lossy rail");
    cr_expect(m.state(a, T0 + seconds(1)) == RailState::Degraded);
}
