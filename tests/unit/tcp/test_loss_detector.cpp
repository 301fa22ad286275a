// A TCP rail is lossy while TCP retransmits more than the threshold of its
// data segments over the recent window; it stops being lossy below half the
// threshold, and an idle window (too few segments) keeps the verdict. A
// burst of retransmissions after one stall of a loaded machine, and
// retransmissions the receiver reports as duplicates, are not loss.
#include <criterion/criterion.h>

#include "transport/tcp/loss_detector.h"

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

namespace {

LossParams params() {
    return LossParams{.threshold = 0.01, .window = 5s, .min_segments = 200, .min_retransmits = 8, .min_loss_periods = 3};
}

// Feeds `samples` samples, `period` apart, each adding `segments` sent and
// `retransmitted` retransmitted to the cumulative counters.
struct Feed {
    ManualClock clock;
    LossDetector detector{params()};
    SegmentCounts counts{};
    int changes = 0;
    Feed() { detector.sample(counts, clock.now()); }
    void run(int samples, std::uint32_t segments, std::uint32_t retransmitted, Duration period = 250ms,
             std::uint32_t duplicates = 0) {
        for (int i = 0; i < samples; ++i) {
            clock.advance(period);
            counts.data_segments_out += segments;
            counts.retransmitted += retransmitted;
            counts.duplicates += duplicates;
            if (detector.sample(counts, clock.now())) ++changes;
        }
    }
};

} // namespace

Test(loss_detector, verdict_thresholds) {
    const LossParams p = params();
    cr_expect_not(lossy_verdict({1000, 10, 5}, p, false), "exactly 1%% is not above 1%%");
    cr_expect(lossy_verdict({1000, 11, 5}, p, false));
    cr_expect(lossy_verdict({1000, 6, 1}, p, true), "0.6%% keeps a lossy rail lossy (hysteresis)");
    cr_expect_not(lossy_verdict({1000, 5, 5}, p, true), "0.5%% clears it");
    cr_expect(lossy_verdict({199, 199, 20}, p, true), "too few segments: the verdict stands");
    cr_expect_not(lossy_verdict({199, 199, 20}, p, false), "too few segments: the verdict stands");
    cr_expect_not(lossy_verdict({200, 7, 7}, p, false), "3.5%% but only 7 retransmissions: not yet");
    cr_expect(lossy_verdict({200, 8, 3}, p, false));
    cr_expect_not(lossy_verdict({1000, 100, 2}, p, false), "10%% in two periods: a burst, not a lossy path");
}

// What a loaded loopback shows: the receiver is not scheduled for a while,
// the sender's retransmission timer fires and resends a window's worth; the
// originals had arrived. Once per window, even with every retransmission
// needed (no D-SACK), it is a stall, not loss.
Test(loss_detector, a_stall_now_and_then_is_not_loss) {
    Feed f;
    for (int stall = 0; stall < 4; ++stall) {
        f.run(9, 100, 0);
        f.run(1, 100, 30);  // 30 of ~2000 in the window: 1.5%%, above the threshold
        f.run(10, 100, 0);
        cr_expect_not(f.detector.lossy(), "stall %d: %llu of %llu retransmitted", stall,
                      (unsigned long long)f.detector.window_retransmitted(),
                      (unsigned long long)f.detector.window_segments());
    }
    cr_expect_eq(f.changes, 0);
}

Test(loss_detector, retransmissions_reported_as_duplicates_are_not_loss) {
    Feed f;
    f.run(20, 1000, 50, 250ms, 50);  // every retransmission D-SACKed: spurious
    cr_expect_not(f.detector.lossy());
    cr_expect_eq(f.detector.window_retransmitted(), 0u);
    f.run(20, 1000, 50, 250ms, 10);  // 40 of 50 needed: real loss, 4%%
    cr_expect(f.detector.lossy());
    // A D-SACK counted a period after its retransmission never makes a period negative.
    f.run(1, 1000, 0, 250ms, 5);
    cr_expect_eq(f.detector.window_retransmitted(), 19u * 40u);
}

Test(loss_detector, a_clean_connection_is_not_lossy) {
    Feed f;
    f.run(100, 1000, 0);
    cr_expect_not(f.detector.lossy());
    cr_expect_eq(f.changes, 0);
    cr_expect_eq(f.detector.window_retransmitted(), 0u);
}

Test(loss_detector, five_percent_loss_is_lossy_within_a_few_samples) {
    Feed f;
    f.run(20, 1000, 0);
    cr_assert_not(f.detector.lossy());
    f.run(1, 1000, 50);
    // 50 of 20000+1000 in the window: 0.24%, not yet.
    cr_expect_not(f.detector.lossy());
    f.run(5, 1000, 50);
    // The window still holds clean samples: 5 lossy ones make 250/20000 = 1.25% > 1%.
    cr_expect(f.detector.lossy());
    cr_expect_eq(f.changes, 1);
}

Test(loss_detector, loss_that_stops_clears_once_the_window_moves_on) {
    Feed f;
    f.run(20, 1000, 50);
    cr_assert(f.detector.lossy());
    // Clean traffic: the ratio halves as the window fills with clean
    // samples; it clears once below 0.5%, i.e. after about 90% of a window.
    f.run(16, 1000, 0);
    cr_expect(f.detector.lossy(), "still %llu of %llu", (unsigned long long)f.detector.window_retransmitted(),
              (unsigned long long)f.detector.window_segments());
    f.run(4, 1000, 0);
    cr_expect_not(f.detector.lossy());
    cr_expect_eq(f.changes, 2);
}

Test(loss_detector, an_idle_rail_keeps_its_verdict) {
    Feed f;
    f.run(20, 1000, 50);
    cr_assert(f.detector.lossy());
    // Only heartbeats for ten seconds: too few segments to judge.
    f.run(40, 3, 0);
    cr_expect(f.detector.lossy());
    cr_expect_lt(f.detector.window_segments(), 200u);
}

Test(loss_detector, counters_that_wrap) {
    Feed f;
    f.counts = SegmentCounts{0xFFFFFF00u, 0xFFFFFFF0u};
    f.detector = LossDetector(params());
    f.detector.sample(f.counts, f.clock.now());
    f.run(4, 1000, 40);
    cr_expect_eq(f.detector.window_segments(), 4000u);
    cr_expect_eq(f.detector.window_retransmitted(), 160u);
    cr_expect(f.detector.lossy());
}

Test(loss_detector, the_window_forgets_old_samples) {
    Feed f;
    f.run(20, 100, 0);   // 5 s: exactly one window
    cr_expect_eq(f.detector.window_segments(), 2000u);
    f.run(4, 100, 0);
    cr_expect_eq(f.detector.window_segments(), 2000u, "samples older than the window are dropped");
}
