// The silence detector asks for a heartbeat after one idle interval and
// declares the rail dead after dead_after intervals without any input;
// traffic in either direction resets the matching timer.
#include <criterion/criterion.h>

#include "transport/tcp/silence_detector.h"

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

Test(silence_detector, heartbeat_due_after_one_idle_interval) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    clock.advance(99ms);
    cr_expect_not(d.heartbeat_due(clock.now()));
    clock.advance(1ms);
    cr_expect(d.heartbeat_due(clock.now()));
    d.on_sent(clock.now());
    cr_expect_not(d.heartbeat_due(clock.now()));
    clock.advance(100ms);
    cr_expect(d.heartbeat_due(clock.now()));
}

Test(silence_detector, dead_after_n_silent_intervals_exactly) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    clock.advance(299ms);
    cr_expect_not(d.is_dead(clock.now()));
    clock.advance(1ms);
    cr_expect(d.is_dead(clock.now()));
    cr_expect(d.silent_for(clock.now()) == 300ms);
}

Test(silence_detector, any_input_keeps_the_rail_alive) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    for (int i = 0; i < 50; ++i) {
        clock.advance(250ms);
        cr_assert_not(d.is_dead(clock.now()), "round %d", i);
        d.on_received(clock.now());
    }
    clock.advance(300ms);
    cr_expect(d.is_dead(clock.now()));
}

Test(silence_detector, sending_does_not_prove_the_peer_alive) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 2}, clock.now());
    for (int i = 0; i < 4; ++i) {
        clock.advance(60ms);
        d.on_sent(clock.now());
    }
    cr_expect(d.is_dead(clock.now()));
}

Test(silence_detector, next_deadline_is_the_earlier_event) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    cr_expect(d.next_deadline() == start + 100ms);
    clock.advance(250ms);
    d.on_sent(clock.now());
    // Heartbeat now due at start+350ms, death at start+300ms.
    cr_expect(d.next_deadline() == start + 300ms);
    cr_expect(d.heartbeat_deadline() == start + 350ms);
    cr_expect(d.dead_deadline() == start + 300ms);
}
