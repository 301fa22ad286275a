// ErrorWindow: a true sliding window (point 1 of the decision-core issue).
#include <criterion/criterion.h>

#include "health/error_window.h"

using namespace tent;
using std::chrono::milliseconds;
using std::chrono::seconds;

static const TimePoint T0{std::chrono::hours(1)};

Test(error_window, threshold_inside_window_trips) {
    ErrorWindow w(seconds(10), 3);
    cr_expect_not(w.add(T0));
    cr_expect_not(w.add(T0 + seconds(4)));
    cr_expect(w.add(T0 + milliseconds(9999)));
    cr_expect_eq(w.count(T0 + milliseconds(9999)), 3u);
}

Test(error_window, errors_wider_than_window_never_trip) {
    ErrorWindow w(seconds(10), 3);
    // Every 5 s for an hour: any 10 s window holds at most 2 errors.
    for (int i = 0; i < 720; ++i) cr_assert_not(w.add(T0 + seconds(5) * i), "tripped at error %d", i);
}

Test(error_window, error_at_exact_window_edge_has_left) {
    ErrorWindow w(seconds(10), 2);
    cr_expect_not(w.add(T0));
    cr_expect_not(w.add(T0 + seconds(10)));  // first one is exactly 10 s old: outside
    cr_expect(w.add(T0 + seconds(11)));
}

Test(error_window, count_slides_without_new_errors) {
    ErrorWindow w(seconds(10), 5);
    (void)w.add(T0);
    (void)w.add(T0 + seconds(3));
    (void)w.add(T0 + seconds(6));
    cr_expect_eq(w.count(T0 + seconds(6)), 3u);
    cr_expect_eq(w.count(T0 + seconds(11)), 2u);
    cr_expect_eq(w.count(T0 + seconds(14)), 1u);
    cr_expect_eq(w.count(T0 + seconds(16)), 0u);
}

Test(error_window, storage_bounded_by_threshold_and_clear) {
    ErrorWindow w(seconds(10), 3);
    for (int i = 0; i < 1000; ++i) (void)w.add(T0 + milliseconds(i));
    cr_expect_eq(w.count(T0 + seconds(1)), 3u);  // keeps only what can matter
    w.clear();
    cr_expect_eq(w.count(T0 + seconds(1)), 0u);
    cr_expect_not(w.add(T0 + seconds(2)));
}

Test(error_window, threshold_one_trips_on_first_error) {
    ErrorWindow w(seconds(1), 1);
    cr_expect(w.add(T0));
    ErrorWindow z(seconds(1), 0);  // treated as 1
    cr_expect(z.add(T0));
}
