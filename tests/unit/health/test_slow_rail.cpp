// Slow-rail building blocks: windowed median and the verdict (point 5, pure part).
#include <criterion/criterion.h>

#include "health/pause_backoff.h"
#include "health/slow_rail.h"

using namespace tent;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

static const TimePoint T0{std::chrono::hours(1)};

Test(slow_rail, median_of_values) {
    cr_expect_not(median_of({}).has_value());
    cr_expect(*median_of({microseconds(5)}) == microseconds(5));
    cr_expect(*median_of({microseconds(9), microseconds(1), microseconds(5)}) == microseconds(5));
    cr_expect(*median_of({microseconds(4), microseconds(1), microseconds(3), microseconds(2)}) == microseconds(3));
}

Test(slow_rail, window_median_needs_min_samples_and_ignores_outliers) {
    LatencyWindow w(seconds(10));
    for (int i = 0; i < 9; ++i) w.add(microseconds(10), T0 + milliseconds(i));
    cr_expect_not(w.median(T0 + milliseconds(9), 10).has_value());
    w.add(microseconds(100000), T0 + milliseconds(9));  // one huge outlier
    auto m = w.median(T0 + milliseconds(9), 10);
    cr_assert(m.has_value());
    cr_expect(*m == microseconds(10));
    cr_expect_eq(w.count(T0 + milliseconds(9)), 10u);
}

Test(slow_rail, window_forgets_old_samples) {
    LatencyWindow w(seconds(10));
    for (int i = 0; i < 5; ++i) w.add(microseconds(100), T0 + seconds(i));
    for (int i = 0; i < 5; ++i) w.add(microseconds(10), T0 + seconds(11 + i));
    // At T0+15 s the window (5 s, 15 s] holds only the fast samples.
    cr_expect(*w.median(T0 + seconds(15), 1) == microseconds(10));
    cr_expect_eq(w.count(T0 + seconds(15)), 5u);
    w.expire(T0 + seconds(100));
    cr_expect_eq(w.count(T0 + seconds(100)), 0u);
    cr_expect_not(w.median(T0 + seconds(100), 1).has_value());
}

Test(slow_rail, window_keeps_at_most_max_samples) {
    LatencyWindow w(seconds(10));
    for (std::size_t i = 0; i < kMaxLatencySamples + 100; ++i) w.add(microseconds(i < 100 ? 1000 : 1), T0);
    cr_expect_eq(w.count(T0), kMaxLatencySamples);
    cr_expect(*w.median(T0, 1) == microseconds(1));  // the oldest (slow) samples were dropped
}

Test(slow_rail, verdict_uses_factor_with_hysteresis) {
    // factor 4 against a 10 us reference: degraded above 40 us.
    cr_expect_not(slow_rail_verdict(microseconds(40), microseconds(10), 4.0, false));
    cr_expect(slow_rail_verdict(microseconds(41), microseconds(10), 4.0, false));
    // Once degraded it stays so until below 0.8 * 40 = 32 us.
    cr_expect(slow_rail_verdict(microseconds(35), microseconds(10), 4.0, true));
    cr_expect_not(slow_rail_verdict(microseconds(32), microseconds(10), 4.0, true));
}

Test(slow_rail, window_knows_its_newest_sample_and_clears) {
    LatencyWindow w(seconds(10));
    cr_expect_not(w.newest().has_value());
    w.add(microseconds(5), T0);
    w.add(microseconds(5), T0 + seconds(2));
    cr_expect(*w.newest() == T0 + seconds(2));
    w.clear();
    cr_expect_not(w.newest().has_value());
    cr_expect_eq(w.count(T0 + seconds(2)), 0u);
}

Test(slow_rail, retry_doubles_from_one_second_up_to_the_window) {
    cr_expect(slow_rail_retry(0, seconds(10)) == seconds(1));
    cr_expect(slow_rail_retry(1, seconds(10)) == seconds(1));
    cr_expect(slow_rail_retry(2, seconds(10)) == seconds(2));
    cr_expect(slow_rail_retry(4, seconds(10)) == seconds(8));
    cr_expect(slow_rail_retry(5, seconds(10)) == seconds(10));
    cr_expect(slow_rail_retry(kMaxPauseLevel, seconds(10)) == seconds(10));
    cr_expect(slow_rail_retry(3, seconds(1)) == seconds(1));  // the shortest window allowed
}
