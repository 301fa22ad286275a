// The rail queue bound: below it a rail takes another piece whatever its
// size; at or above it the piece waits; 0 means no bound.
#include <criterion/criterion.h>

#include "policy/rail_queue.h"

using namespace tent;

Test(rail_queue, admits_below_the_bound_whatever_the_piece) {
    RailQueueParams p;
    p.bytes = 4 << 20;
    cr_expect(rail_queue_admits(0, p));
    cr_expect(rail_queue_admits((4 << 20) - 1, p), "one byte below: the rail may overshoot by one piece");
    cr_expect_not(rail_queue_admits(4 << 20, p));
    cr_expect_not(rail_queue_admits(64 << 20, p));
}

Test(rail_queue, zero_is_no_bound) {
    RailQueueParams p;
    p.bytes = 0;
    cr_expect(rail_queue_admits(std::uint64_t{1} << 40, p));
}
