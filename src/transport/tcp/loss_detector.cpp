#include "transport/tcp/loss_detector.h"

namespace tent::tcp {

bool lossy_verdict(const LossWindow& w, const LossParams& params, bool currently_lossy) {
    if (w.segments < params.min_segments) return currently_lossy;
    const double ratio = static_cast<double>(w.retransmitted) / static_cast<double>(w.segments);
    if (currently_lossy) return ratio > params.threshold / 2;
    return ratio > params.threshold && w.retransmitted >= params.min_retransmits &&
           w.loss_periods >= params.min_loss_periods;
}

bool LossDetector::sample(SegmentCounts counts, TimePoint now) {
    if (have_last_) {
        // Unsigned 32-bit differences stay right across one wrap.
        const std::uint32_t segments = counts.data_segments_out - last_.data_segments_out;
        const std::uint32_t retransmitted = counts.retransmitted - last_.retransmitted;
        const std::uint32_t duplicates = counts.duplicates - last_.duplicates;
        // A D-SACK may be counted a period after its retransmission: the
        // period then shows less, never a negative count.
        const std::uint32_t needed = retransmitted > duplicates ? retransmitted - duplicates : 0;
        steps_.push_back(Step{now, segments, needed});
        window_segments_ += segments;
        window_retransmitted_ += needed;
        window_loss_periods_ += needed > 0;
    }
    have_last_ = true;
    last_ = counts;
    // Bounded by the samples taken within one window.
    while (!steps_.empty() && steps_.front().at <= now - params_.window) {
        window_segments_ -= steps_.front().segments;
        window_retransmitted_ -= steps_.front().retransmitted;
        window_loss_periods_ -= steps_.front().retransmitted > 0;
        steps_.pop_front();
    }
    const bool verdict =
        lossy_verdict(LossWindow{window_segments_, window_retransmitted_, window_loss_periods_}, params_, lossy_);
    const bool changed = verdict != lossy_;
    lossy_ = verdict;
    return changed;
}

} // namespace tent::tcp
