// Cooldown doubling per pause and decaying memory (points 2 and 4, pure part).
#include <criterion/criterion.h>

#include "health/pause_backoff.h"

using namespace tent;
using std::chrono::seconds;

Test(pause_backoff, first_pause_is_base_then_doubles_to_cap) {
    cr_expect(cooldown_for_level(1, seconds(30), seconds(300)) == seconds(30));
    cr_expect(cooldown_for_level(2, seconds(30), seconds(300)) == seconds(60));
    cr_expect(cooldown_for_level(3, seconds(30), seconds(300)) == seconds(120));
    cr_expect(cooldown_for_level(4, seconds(30), seconds(300)) == seconds(240));
    cr_expect(cooldown_for_level(5, seconds(30), seconds(300)) == seconds(300));
    cr_expect(cooldown_for_level(kMaxPauseLevel, seconds(30), seconds(300)) == seconds(300));
    cr_expect(cooldown_for_level(1000, seconds(30), seconds(300)) == seconds(300));
}

Test(pause_backoff, level_zero_is_base) {
    cr_expect(cooldown_for_level(0, seconds(30), seconds(300)) == seconds(30));
}

Test(pause_backoff, cap_equal_to_base_never_grows) {
    for (unsigned l = 1; l <= 10; ++l) cr_expect(cooldown_for_level(l, seconds(7), seconds(7)) == seconds(7));
}

Test(pause_backoff, level_halves_per_quiet_period) {
    cr_expect_eq(decay_pause_level(8, seconds(29), seconds(30)), 8u);
    cr_expect_eq(decay_pause_level(8, seconds(30), seconds(30)), 4u);
    cr_expect_eq(decay_pause_level(8, seconds(61), seconds(30)), 2u);
    cr_expect_eq(decay_pause_level(8, seconds(90), seconds(30)), 1u);
    cr_expect_eq(decay_pause_level(8, seconds(120), seconds(30)), 0u);
    cr_expect_eq(decay_pause_level(16, std::chrono::hours(24), seconds(30)), 0u);
}

Test(pause_backoff, no_decay_without_quiet_time) {
    cr_expect_eq(decay_pause_level(5, seconds(0), seconds(30)), 5u);
    cr_expect_eq(decay_pause_level(5, seconds(-3), seconds(30)), 5u);
    cr_expect_eq(decay_pause_level(5, seconds(100), seconds(0)), 5u);
}
