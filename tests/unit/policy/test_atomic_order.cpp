// The order of a peer's atomics: a new one starts behind open ones only
// while they are all in step on their rail and that rail takes posts; it
// goes on their rail; a failed one is sent again only as the oldest open.
#include <criterion/criterion.h>

#include "policy/atomic_order.h"

using namespace tent;

Test(atomic_order, the_first_starts_anywhere_the_selector_chose) {
    AtomicOrder o;
    cr_expect(atomic_may_start(o, false), "none open: whatever the old rail does");
    o.open.push_back(7);  // counted open, then placed
    auto rail = atomic_rail(o, 3, false);
    cr_assert(rail.has_value());
    cr_expect_eq(*rail, 3u);
}

Test(atomic_order, later_ones_follow_the_open_ones_rail_while_in_step) {
    AtomicOrder o;
    o.open = {1, 2};
    o.rail = 4;
    cr_expect(atomic_may_start(o, true));
    cr_expect_not(atomic_may_start(o, false), "their rail stopped taking posts: wait");
    o.open.push_back(3);
    auto rail = atomic_rail(o, 0, true);
    cr_assert(rail.has_value());
    cr_expect_eq(*rail, 4u, "not the selector's pick: behind the open ones");
    cr_expect_not(atomic_rail(o, 0, false).has_value(), "their rail not allowed for it: it waits");
}

Test(atomic_order, out_of_step_holds_new_ones_until_none_is_open) {
    AtomicOrder o;
    o.open = {1};
    o.rail = 0;
    o.in_step = false;
    cr_expect_not(atomic_may_start(o, true));
    o.open.clear();
    cr_expect(atomic_may_start(o, true));
}

Test(atomic_order, only_the_oldest_open_one_is_sent_again) {
    AtomicOrder o;
    o.open = {5, 6, 9};
    cr_expect(atomic_may_replay(o, 5));
    cr_expect_not(atomic_may_replay(o, 6), "an older one is still open");
    cr_expect_not(atomic_may_replay(o, 9));
    o.open.pop_front();
    cr_expect(atomic_may_replay(o, 6));
    cr_expect_not(atomic_may_replay(AtomicOrder{}, 5));
}
