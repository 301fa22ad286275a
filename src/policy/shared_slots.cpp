#include "policy/shared_slots.h"

#include "config/config.h"

namespace tent {

SharedSlots::SharedSlots(std::unique_ptr<QuotaSegment> segment)
    : segment_(std::move(segment)), schedule_{segment_->epoch(), segment_->interval()} {}

Result<std::unique_ptr<SharedSlots>> SharedSlots::open(const QuotaSegmentOptions& options,
                                                       const Clock& clock) {
    auto segment = QuotaSegment::open(options, clock);
    if (!segment) return segment.status();
    return std::make_unique<SharedSlots>(std::move(*segment));
}

Result<std::unique_ptr<SharedSlots>> SharedSlots::from_config(const Config& config,
                                                              const Clock& clock) {
    QuotaSegmentOptions options;
    options.name = config.get_string(Knob::SharedQuotaShmPath);
    if (options.name.empty()) return std::unique_ptr<SharedSlots>();
    options.interval = std::chrono::milliseconds(config.get_int(Knob::SlotRotationIntervalMs));
    auto slots = open(options, clock);
    if (!slots)
        return Status(slots.status().code(), "shared_quota_shm_path: " + slots.status().message());
    return slots;
}

bool SharedSlots::may_start(int priority, TimePoint now) {
    if (allowed(priority, now)) return true;
    if (slot_may_start(false, segment_->higher_pending(priority))) return true;
    if (now - last_repair_ < kRepairInterval) return false;
    last_repair_ = now;
    if (Status s = segment_->repair(); !s) return false;  // counts as pending: the slot decides
    return slot_may_start(false, segment_->higher_pending(priority));
}

} // namespace tent
