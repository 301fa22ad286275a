// Which priorities may be served at a given time when several processes on a
// node share the HCAs: time is cut into slots of one rotation interval,
// counted from a common epoch, cycling through three slots:
//
//   slot 0: high only     slot 1: high and medium     slot 2: all
//
// so low-priority traffic of one process cannot crowd out high-priority
// traffic of another for more than one interval in three. Pure functions of
// time; the shared-memory segment only supplies the common epoch and interval.
#pragma once

#include "common/clock.h"

namespace tent {

// Priorities as the QoS queues number them (high 0, medium 1, low 2).
inline constexpr int kSlotPriorityHigh = 0;
inline constexpr int kSlotPriorityMedium = 1;
inline constexpr int kSlotPriorityLow = 2;
inline constexpr int kSlotCount = 3;

struct SlotSchedule {
    TimePoint epoch{};          // start of a slot 0, shared by every process
    Duration interval{2'000'000}; // length of one slot (> 0)
};

// Slot (0..2) current at `now`; times before the epoch cycle backwards
// consistently, so the answer never depends on which side of it `now` is.
int slot_at(const SlotSchedule& schedule, TimePoint now);

// True when `slot` admits `priority`: slot s serves priorities 0..s.
// Priorities above low count as low, below high as high.
bool slot_admits(int slot, int priority);

// True when `priority` may be served at `now`.
bool slot_allowed(const SlotSchedule& schedule, int priority, TimePoint now);

} // namespace tent
