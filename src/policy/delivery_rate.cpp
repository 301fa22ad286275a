#include "policy/delivery_rate.h"

namespace tent {

void DeliveryRate::posted(TimePoint now) {
    if (outstanding_++ == 0) {
        start_ = now;
        bytes_ = 0;
    }
}

std::optional<double> DeliveryRate::completed(std::uint64_t bytes, TimePoint now) {
    if (outstanding_ == 0) return std::nullopt;  // not posted through posted(): nothing to measure
    --outstanding_;
    bytes_ += bytes;
    const Duration elapsed = now - start_;
    const bool idle = outstanding_ == 0;
    const bool full = bytes_ >= kDeliverySampleBytes && elapsed >= kDeliverySampleTime;
    if (!full && !(idle && bytes_ >= kDeliveryMinBytes && elapsed > Duration::zero())) return std::nullopt;
    const double sample = static_cast<double>(bytes_) / std::chrono::duration<double>(elapsed).count();
    start_ = now;
    bytes_ = 0;
    return sample;
}

} // namespace tent
