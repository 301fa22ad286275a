// Silence of a busy rail: the limit follows the usual gap between
// completions (never below the minimum), an idle rail is never silent, and
// reset() forgets the history. Times are given, no sleeps.
#include <criterion/criterion.h>

#include "health/rail_silence.h"

using namespace tent;
using std::chrono::milliseconds;

namespace {
RailSilenceParams params() {
    RailSilenceParams p;
    p.min = milliseconds(40);
    p.factor = 10;
    return p;
}
const TimePoint t0 = TimePoint{} + std::chrono::seconds(100);
}  // namespace

Test(rail_silence, idle_rail_is_never_silent) {
    RailSilence s;
    cr_expect_not(s.silent(t0 + std::chrono::hours(1), params()));
    s.became_busy(t0);
    s.completed(t0 + milliseconds(1), false);
    cr_expect_not(s.silent(t0 + std::chrono::hours(1), params()), "idle again after the completion");
}

Test(rail_silence, minimum_applies_to_a_fast_rail) {
    RailSilence s;
    s.became_busy(t0);
    TimePoint t = t0;
    for (int i = 0; i < 100; ++i) s.completed(t += milliseconds(1), true);
    cr_expect_eq(s.limit(params()), Duration(milliseconds(40)));
    cr_expect_not(s.silent(t + milliseconds(40), params()));
    cr_expect(s.silent(t + milliseconds(41), params()));
}

Test(rail_silence, slow_rail_gets_factor_times_its_gap) {
    RailSilence s;
    s.became_busy(t0);
    TimePoint t = t0;
    for (int i = 0; i < 200; ++i) s.completed(t += milliseconds(20), true);
    auto limit = std::chrono::duration_cast<milliseconds>(s.limit(params())).count();
    cr_expect(limit >= 195 && limit <= 205, "limit %lld ms for 20 ms gaps", static_cast<long long>(limit));
    cr_expect_not(s.silent(t + milliseconds(150), params()), "a slow but working rail is not silent");
    cr_expect(s.silent(t + milliseconds(210), params()));
}

Test(rail_silence, clock_restarts_when_work_is_posted_to_an_idle_rail) {
    RailSilence s;
    s.became_busy(t0);
    s.completed(t0 + milliseconds(5), false);
    // Idle for a minute, then busy: silence counts from the post, not from the last completion.
    s.became_busy(t0 + std::chrono::minutes(1));
    cr_expect_not(s.silent(t0 + std::chrono::minutes(1) + milliseconds(30), params()));
    cr_expect(s.silent(t0 + std::chrono::minutes(1) + milliseconds(100), params()));
}

Test(rail_silence, reset_forgets_the_usual_gap) {
    RailSilence s;
    s.became_busy(t0);
    TimePoint t = t0;
    for (int i = 0; i < 200; ++i) s.completed(t += milliseconds(50), true);
    cr_expect(s.limit(params()) > milliseconds(400));
    s.reset();
    cr_expect_eq(s.limit(params()), Duration(milliseconds(40)));
    cr_expect_not(s.silent(t + std::chrono::hours(1), params()), "reset leaves the rail idle");
}
