// A TCP rail is lossy while TCP retransmits more than the threshold of its
// data segments over the recent window; it stops being lossy below half the
// threshold, and an idle window (too few segments) keeps the verdict.
#include <criterion/criterion.h>

#include "transport/tcp/loss_detector.h"

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

namespace {

LossParams params() { return LossParams{.threshold = 0.01, .window = 5s, .min_segments = 200}; }

// Feeds `samples` samples, `period` apart, each adding `segments` sent and
// `retransmitted` retransmitted to the cumulative counters.
struct Feed {
    ManualClock clock;
    LossDetector detector{params()};
    SegmentCounts counts{};
    int changes = 0;
    Feed() { detector.sample(counts, clock.now()); }
    void run(int samples, std::uint32_t segments, std::uint32_t retransmitted, Duration period = 250ms) {
        for (int i = 0; i < samples; ++i) {
            clock.advance(period);
            counts.data_segments_out += segments;
            counts.retransmitted += retransmitted;
            if (detector.sample(counts, clock.now())) ++changes;
        }
    }
};

} // namespace

Test(loss_detector, verdict_thresholds) {
    const LossParams p = params();
    cr_expect_not(lossy_verdict(1000, 10, p, false), "exactly 1%% is not above 1%%");
    cr_expect(lossy_verdict(1000, 11, p, false));
    cr_expect(lossy_verdict(1000, 6, p, true), "0.6%% keeps a lossy rail lossy (hysteresis)");
    cr_expect_not(lossy_verdict(1000, 5, p, true), "0.5%% clears it");
    cr_expect(lossy_verdict(199, 199, p, true), "too few segments: the verdict stands");
    cr_expect_not(lossy_verdict(199, 199, p, false), "too few segments: the verdict stands");
    cr_expect(lossy_verdict(200, 3, p, false));
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
