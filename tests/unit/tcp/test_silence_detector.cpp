// The silence detector asks for a heartbeat after one idle interval and
// declares the rail dead after dead_after intervals without hearing the
// peer; traffic in either direction resets the matching timer. While the
// application reads nothing, segments the kernel received (the stream
// stalled behind a loss, ACKs of a sender in retransmission backoff) count
// as heard, conservatively at the sample before the count grew, and the
// rail probes with a heartbeat every quarter interval; a stream stalled for
// the stall limit is dead even while the kernel hears the peer.
#include <criterion/criterion.h>

#include <vector>

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
    d.on_received(start + 90ms);
    clock.advance(150ms);
    d.on_sent(clock.now());
    // Kernel sample at +190, heartbeat at +215 (probing from +215), death at +390.
    cr_expect(d.kernel_sample_deadline() == start + 190ms);
    cr_expect(d.probe_start() == start + 215ms);
    cr_expect(d.heartbeat_deadline() == start + 215ms);
    cr_expect(d.dead_deadline() == start + 390ms);
    cr_expect(d.next_deadline() == start + 190ms);
    cr_expect(d.next_check_deadline() == start + 190ms);
}

// A healthy idle peer heartbeats every interval: the rail never probes.
Test(silence_detector, an_idle_healthy_rail_sends_one_heartbeat_per_interval) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    int heartbeats = 0;
    for (int ms = 1; ms <= 2000; ++ms) {
        clock.advance(1ms);
        if (ms % 100 == 50) d.on_received(clock.now()); // the peer's heartbeat
        if (d.heartbeat_due(clock.now())) {
            ++heartbeats;
            d.on_sent(clock.now());
        }
        cr_assert_not(d.probing(clock.now()), "at %d ms", ms);
        cr_assert_not(d.is_dead(clock.now()), "at %d ms", ms);
    }
    cr_expect_eq(heartbeats, 20);
}

Test(silence_detector, probes_every_quarter_interval_while_the_peer_is_unread) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    d.on_received(start);
    std::vector<Duration> sent;
    for (int ms = 1; ms <= 200; ++ms) {
        clock.advance(1ms);
        if (ms % 10 == 0) d.on_sent(clock.now()); // data going out every 10 ms: no heartbeat needed
        else if (ms > 150 && d.heartbeat_due(clock.now())) {
            sent.push_back(clock.now() - start);
            d.on_sent(clock.now());
        }
    }
    cr_expect(sent.empty(), "a rail sending data needs no probe");
    // Now idle: probes at 125 ms of silence and every 25 ms after.
    SilenceDetector idle({.interval = 100ms, .dead_after = 3}, start);
    ManualClock c2;
    for (int ms = 1; ms <= 250; ++ms) {
        c2.advance(1ms);
        if (idle.heartbeat_due(c2.now())) {
            sent.push_back(c2.now() - start);
            idle.on_sent(c2.now());
        }
    }
    const std::vector<Duration> want{100ms, 125ms, 150ms, 175ms, 200ms, 225ms, 250ms};
    cr_expect(sent == want, "%zu heartbeats", sent.size());
}

Test(silence_detector, kernel_sample_due_every_quarter_interval_once_unread) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    clock.advance(60ms);
    d.on_received(clock.now());
    clock.advance(99ms);
    cr_expect_not(d.kernel_sample_due(clock.now()), "the application read from the peer 99 ms ago");
    clock.advance(1ms);
    cr_expect(d.kernel_sample_due(clock.now()));
    d.on_kernel_count(clock.now(), 7);
    cr_expect_not(d.kernel_sample_due(clock.now()));
    clock.advance(24ms);
    cr_expect_not(d.kernel_sample_due(clock.now()));
    clock.advance(1ms);
    cr_expect(d.kernel_sample_due(clock.now()));
}

// The peer's segments keep arriving while the stream waits for a
// retransmission: the rail stays alive, up to the stall limit.
Test(silence_detector, segments_behind_a_stalled_stream_keep_the_rail_alive_up_to_the_stall_limit) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3, .stall_limit = 2s}, start);
    std::uint32_t count = 1000;
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), count);
    for (int i = 0; i < 75; ++i) {
        clock.advance(25ms);
        cr_assert(d.kernel_sample_due(clock.now()), "sample %d", i);
        d.on_kernel_count(clock.now(), ++count);
        cr_assert_not(d.is_dead(clock.now()), "after %d ms", 100 + 25 * (i + 1));
    }
    clock.advance(25ms);
    d.on_kernel_count(clock.now(), ++count);
    cr_expect(d.silent_for(clock.now()) == 2000ms, "the application read nothing all along");
    cr_expect(d.unheard_for(clock.now()) == 25ms, "heard at the previous sample, not later");
    cr_expect(d.is_dead(clock.now()), "a stream stalled for the stall limit is dead");
}

// A dead path: the count stops growing and the rail dies dead_after
// intervals after the last sample that proved the peer heard.
Test(silence_detector, a_count_that_stops_growing_is_silence) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 5);   // baseline
    clock.advance(25ms);
    d.on_kernel_count(clock.now(), 6);   // grew: heard at start+100ms
    clock.advance(25ms);
    d.on_kernel_count(clock.now(), 6);   // nothing since start+125ms
    cr_expect(d.dead_deadline() == start + 400ms);
    clock.advance(249ms);
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
    for (int i = 0; i < 7; ++i) {
        clock.advance(25ms);
        d.on_kernel_count(clock.now(), 5000);
    }
    cr_expect_not(d.is_dead(clock.now()));
    clock.advance(25ms);
    cr_expect(d.is_dead(clock.now()));
    cr_expect(d.dead_deadline() == last + 300ms);
}

Test(silence_detector, a_wrapping_count_still_proves_the_peer_heard) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    clock.advance(100ms);
    d.on_kernel_count(clock.now(), 0xFFFFFFFFu);
    clock.advance(25ms);
    d.on_kernel_count(clock.now(), 2u);
    cr_expect(d.dead_deadline() == start + 400ms);
}

// The stall limit is never below the silence limit.
Test(silence_detector, stall_limit_below_the_silence_limit_is_the_silence_limit) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 1s, .dead_after = 5, .stall_limit = 2s}, start);
    cr_expect(d.dead_deadline() == start + 5s);
}

// This side was not scheduled (or its progress loop stalled) for 2 s: it
// has no evidence about the peer for that time. Its first look after the
// gap must not declare the peer dead; it probes, and a peer heard in the
// next intervals keeps the rail (a loaded host once lost healthy rails so:
// "nothing heard for 737 ms" with a 240 ms limit and no probe in between).
Test(silence_detector, a_gap_in_this_sides_own_looks_is_not_the_peers_silence) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, start);
    for (int i = 0; i < 5; ++i) {
        clock.advance(10ms);
        d.watch(clock.now());
    }
    clock.advance(2s);  // descheduled
    d.watch(clock.now());
    cr_expect_not(d.is_dead(clock.now()), "judged the peer on 2 s this side did not watch");
    cr_expect(d.heartbeat_due(clock.now()), "the first look after a gap probes at once");
    cr_expect(d.silent_for(clock.now()) == 150ms, "50 ms watched, then one interval of the gap counted");
    cr_expect(d.unwatched() == 1900ms);
    // Watched from now on, the peer has the rest of its allowance, no more.
    for (int ms = 10; ms < 150; ms += 10) {
        clock.advance(10ms);
        d.watch(clock.now());
        cr_assert_not(d.is_dead(clock.now()), "%d ms after the gap", ms);
    }
    clock.advance(10ms);
    d.watch(clock.now());
    cr_expect(d.is_dead(clock.now()), "a peer silent for 300 ms of watched time is dead");
}

// After a gap, a peer whose kernel answers the probes is alive: the count
// sampled across the gap proves nothing, the next ones do.
Test(silence_detector, a_peer_heard_after_this_sides_gap_stays_alive) {
    ManualClock clock;
    SilenceDetector d({.interval = 100ms, .dead_after = 3}, clock.now());
    std::uint32_t count = 10;
    clock.advance(50ms);
    d.watch(clock.now());
    clock.advance(1s);
    d.watch(clock.now());
    for (int i = 0; i < 40; ++i) {
        if (d.heartbeat_due(clock.now())) d.on_sent(clock.now());
        if (d.kernel_sample_due(clock.now())) d.on_kernel_count(clock.now(), count += 2);  // ACKs of the probes
        cr_assert_not(d.is_dead(clock.now()), "%d looks after the gap", i);
        clock.advance(25ms);
        d.watch(clock.now());
    }
}

// A hung peer (its kernel answers, its process sends nothing) is still
// declared dead after the stall limit of watched time, also when this side
// had gaps of its own; each gap adds only its unwatched part.
Test(silence_detector, a_hung_peer_is_dead_after_the_stall_limit_of_watched_time) {
    ManualClock clock;
    const TimePoint start = clock.now();
    SilenceDetector d({.interval = 100ms, .dead_after = 3, .stall_limit = 2s}, start);
    std::uint32_t count = 0;
    int looks = 0;
    while (!d.is_dead(clock.now()) && looks < 1000) {
        ++looks;
        // Every 20th look comes after a 1 s gap (900 ms of it not counted).
        clock.advance(looks % 20 == 0 ? 1s : 25ms);
        d.watch(clock.now());
        if (d.kernel_sample_due(clock.now())) d.on_kernel_count(clock.now(), ++count);
    }
    cr_expect(d.is_dead(clock.now()));
    cr_expect(d.silent_for(clock.now()) == 2s, "stalled for the limit of watched time");
    cr_expect(clock.now() - start == 2s + 3 * 900ms, "three gaps, 900 ms of each not counted");
}
