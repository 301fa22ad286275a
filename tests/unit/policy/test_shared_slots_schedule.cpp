// The slot rotation as a pure function of time: slot 0 serves high only,
// slot 1 high and medium, slot 2 everything, each for one interval.
#include <criterion/criterion.h>

#include <chrono>

#include "policy/shared_slots_schedule.h"

using namespace tent;
using namespace std::chrono_literals;

namespace {

const TimePoint kEpoch{std::chrono::hours(5)};
const SlotSchedule kSchedule{kEpoch, 2ms};

} // namespace

Test(shared_slots_schedule, slots_rotate_every_interval) {
    cr_expect_eq(slot_at(kSchedule, kEpoch), 0);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 2ms - 1ns), 0);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 2ms), 1);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 4ms - 1ns), 1);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 4ms), 2);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 6ms - 1ns), 2);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 6ms), 0);
    cr_expect_eq(slot_at(kSchedule, kEpoch + 3000 * 2ms + 2ms), 1);
}

Test(shared_slots_schedule, times_before_the_epoch_keep_the_cycle) {
    cr_expect_eq(slot_at(kSchedule, kEpoch - 1ns), 2);
    cr_expect_eq(slot_at(kSchedule, kEpoch - 2ms), 2);
    cr_expect_eq(slot_at(kSchedule, kEpoch - 2ms - 1ns), 1);
    cr_expect_eq(slot_at(kSchedule, kEpoch - 6ms), 0);
}

Test(shared_slots_schedule, admission_matrix) {
    // slot 0: high only; slot 1: high and medium; slot 2: all.
    const bool expected[3][3] = {{true, false, false}, {true, true, false}, {true, true, true}};
    for (int slot = 0; slot < 3; ++slot)
        for (int prio = 0; prio < 3; ++prio)
            cr_expect_eq(slot_admits(slot, prio), expected[slot][prio], "slot %d priority %d", slot,
                         prio);
    // Out-of-range priorities count as the nearest real one.
    cr_expect(slot_admits(0, -1));
    cr_expect_not(slot_admits(1, 7));
    cr_expect(slot_admits(2, 7));
}

Test(shared_slots_schedule, share_of_time_per_priority) {
    // Sampled every 100 us over 30 full cycles: high always, medium two
    // intervals in three, low one in three.
    int served[3] = {0, 0, 0};
    const int samples = 30 * 3 * 20;
    for (int i = 0; i < samples; ++i) {
        TimePoint t = kEpoch + i * 100us;
        for (int p = 0; p < 3; ++p) served[p] += slot_allowed(kSchedule, p, t) ? 1 : 0;
    }
    cr_expect_eq(served[kSlotPriorityHigh], samples);
    cr_expect_eq(served[kSlotPriorityMedium], samples * 2 / 3);
    cr_expect_eq(served[kSlotPriorityLow], samples / 3);
}
