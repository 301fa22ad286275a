// Cross-process priority slots: when shared_quota_shm_path names a POSIX
// shared-memory segment, every tent process on the node attaches to it and
// follows one slot rotation (see shared_slots_schedule.h), so the QoS queues
// of different processes agree on which priorities may use the HCAs now.
//
//   auto slots = SharedSlots::from_config(config, SteadyClock::instance());
//   if (!slots) return slots.status();          // names the segment and the fix
//   if (*slots && !(*slots)->may_start(priority, clock.now())) ... wait ...
//
// allowed() is pure arithmetic on values read once at attach time: no lock,
// no system call on the hot path.
//
// The slots are work-conserving: a level the slot excludes may still start
// when no attached process has a request of a higher level pending
// (may_start). Each process publishes its pending counts
// (publish_pending) whenever they change.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "policy/shared_slots_schedule.h"
#include "policy/shared_slots_segment.h"

namespace tent {

class Config;

class SharedSlots {
public:
    static Result<std::unique_ptr<SharedSlots>> open(const QuotaSegmentOptions& options,
                                                     const Clock& clock);
    // nullptr (and ok) when shared_quota_shm_path is empty: slots are off and
    // every priority may be served at any time.
    static Result<std::unique_ptr<SharedSlots>> from_config(const Config& config, const Clock& clock);

    explicit SharedSlots(std::unique_ptr<QuotaSegment> segment);

    // May `priority` (0 high, 1 medium, 2 low) be served at `now`?
    bool allowed(int priority, TimePoint now) const { return slot_allowed(schedule_, priority, now); }
    const SlotSchedule& schedule() const { return schedule_; }

    // May a request of `priority` start at `now`: its slot, or no process
    // with higher-priority work pending. Rows of processes that died with
    // work pending are cleared at most every kRepairInterval, when they
    // would hold this one back.
    bool may_start(int priority, TimePoint now);
    void publish_pending(const std::array<std::uint32_t, kQuotaLevels>& counts) {
        segment_->publish_pending(counts);
    }
    static constexpr Duration kRepairInterval = std::chrono::milliseconds(500);

    QuotaSegment& segment() { return *segment_; }

private:
    std::unique_ptr<QuotaSegment> segment_;
    SlotSchedule schedule_;
    TimePoint last_repair_{};
};

// A level the slot excludes may start when nothing higher is pending.
constexpr bool slot_may_start(bool slot_allows, bool higher_pending) { return slot_allows || !higher_pending; }

} // namespace tent
