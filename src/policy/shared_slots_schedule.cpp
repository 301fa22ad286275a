#include "policy/shared_slots_schedule.h"

#include <algorithm>

namespace tent {
namespace {

int clamp_priority(int priority) { return std::clamp(priority, kSlotPriorityHigh, kSlotPriorityLow); }

// Index of the interval containing `now`, rounded towards minus infinity.
Duration::rep interval_index(const SlotSchedule& s, TimePoint now) {
    const Duration::rep len = std::max<Duration::rep>(s.interval.count(), 1);
    const Duration::rep offset = (now - s.epoch).count();
    Duration::rep q = offset / len;
    if (offset % len != 0 && offset < 0) --q;
    return q;
}

} // namespace

int slot_at(const SlotSchedule& schedule, TimePoint now) {
    Duration::rep r = interval_index(schedule, now) % kSlotCount;
    return static_cast<int>(r < 0 ? r + kSlotCount : r);
}

bool slot_admits(int slot, int priority) { return clamp_priority(priority) <= slot; }

bool slot_allowed(const SlotSchedule& schedule, int priority, TimePoint now) {
    return slot_admits(slot_at(schedule, now), priority);
}

} // namespace tent
