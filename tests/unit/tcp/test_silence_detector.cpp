// The silence detector asks for a heartbeat after one idle interval and
// declares the rail dead after dead_after intervals without hearing the
// peer; traffic in either direction resets the matching timer. Segments the
// kernel received out of order (the stream stalled behind a loss) count as
// heard, conservatively, at the sample before the count grew.
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

Test(silence_detector, next_deadline_is_the_earliest_event) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    cr_expect(d.next_deadline() == start + 100ms);
    clock.advance(250ms);
    d.on_sent(clock.now());
    d.on_kernel_count(clock.now(), 0);
    // Heartbeat now due at start+350ms, the next kernel sample too, death at start+300ms.
    cr_expect(d.next_deadline() == start + 300ms);
    cr_expect(d.heartbeat_deadline() == start + 350ms);
    cr_expect(d.kernel_sample_deadline() == start + 350ms);
    cr_expect(d.dead_deadline() == start + 300ms);
    cr_expect(d.next_check_deadline() == start + 300ms);
}

Test(silence_detector, kernel_sample_due_once_per_silent_interval) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    clock.advance(60ms);
    d.on_received(clock.now());
    clock.advance(99ms);
    cr_expect_not(d.kernel_sample_due(clock.now()), "the application heard the peer 99 ms ago");
    clock.advance(1ms);
    cr_expect(d.kernel_sample_due(clock.now()));
    d.on_kernel_count(clock.now(), 7);
    cr_expect_not(d.kernel_sample_due(clock.now()));
    clock.advance(100ms);
    cr_expect(d.kernel_sample_due(clock.now()));
}

// The peer's segments keep arriving out of order while the stream waits for
// a retransmission: the rail stays alive however long the stall lasts.
Test(silence_detector, segments_behind_a_stalled_stream_keep_the_rail_alive) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    std::uint32_t count = 1000;
    for (int i = 0; i < 30; ++i) {
        clock.advance(100ms);
        cr_assert_not(d.is_dead(clock.now()), "interval %d", i);
        cr_assert(d.kernel_sample_due(clock.now()), "interval %d", i);
        d.on_kernel_count(clock.now(), ++count);
    }
    cr_expect(d.silent_for(clock.now()) == 3000ms, "the application read nothing all along");
    cr_expect(d.unheard_for(clock.now()) == 100ms, "heard at the previous sample, not later");
}

// A dead path: the count stops growing and the rail dies dead_after
// intervals after the last sample that proved the peer alive.
Test(silence_detector, a_count_that_stops_growing_is_silence) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 5);   // baseline
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 6);   // grew: alive at start+100ms
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 6);   // no segment since start+200ms
    cr_expect(d.dead_deadline() == start + 400ms);
    clock.advance(99ms);
    cr_expect_not(d.is_dead(clock.now()));
    clock.advance(1ms);
    cr_expect(d.is_dead(clock.now()));
}

// The first sample of a silence has nothing recent to compare with: it
// proves nothing, so a link that died is still detected in dead_after
// intervals.
Test(silence_detector, first_sample_of_a_silence_proves_nothing) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    // An earlier silence left an old sample behind.
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 10);
    clock.advance(10s);
    d.on_received(clock.now());
    const TimePoint last = clock.now();
    // The link dies now: the count moved since the old sample (the traffic
    // in between), but that proves nothing after `last`.
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 5000);
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 5000);
    clock.advance(100ms);
    cr_expect(d.is_dead(clock.now()));
    cr_expect(d.dead_deadline() == last + 300ms);
}

Test(silence_detector, a_wrapping_count_still_proves_the_peer_alive) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 0xFFFFFFFFu);
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 2u);
    cr_expect(d.dead_deadline() == start + 400ms);
}
