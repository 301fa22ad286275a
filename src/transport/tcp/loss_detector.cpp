#include "transport/tcp/loss_detector.h"

namespace tent::tcp {

bool lossy_verdict(std::uint64_t segments, std::uint64_t retransmitted, const LossParams& params,
                   bool currently_lossy) {
    if (segments < params.min_segments) return currently_lossy;
    const double ratio = static_cast<double>(retransmitted) / static_cast<double>(segments);
    return currently_lossy ? ratio > params.threshold / 2 : ratio > params.threshold;
}

bool LossDetector::sample(SegmentCounts counts, TimePoint now) {
    if (have_last_) {
        // Unsigned 32-bit differences stay right across one wrap.
        const std::uint32_t segments = counts.data_segments_out - last_.data_segments_out;
        const std::uint32_t retransmitted = counts.retransmitted - last_.retransmitted;
        steps_.push_back(Step{now, segments, retransmitted});
        window_segments_ += segments;
        window_retransmitted_ += retransmitted;
    }
    have_last_ = true;
    last_ = counts;
    // Bounded by the samples taken within one window.
    while (!steps_.empty() && steps_.front().at <= now - params_.window) {
        window_segments_ -= steps_.front().segments;
        window_retransmitted_ -= steps_.front().retransmitted;
        steps_.pop_front();
    }
    const bool verdict = lossy_verdict(window_segments_, window_retransmitted_, params_, lossy_);
    const bool changed = verdict != lossy_;
    lossy_ = verdict;
    return changed;
}

} // namespace tent::tcp
