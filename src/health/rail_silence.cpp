#include "health/rail_silence.h"

#include <algorithm>

namespace tent {

namespace {
// Weight of the newest gap: a few dozen completions make the average.
constexpr double kGapWeight = 1.0 / 16;
}

RailSilenceParams RailSilenceParams::from_config(const Config& config) {
    RailSilenceParams p;
    p.min = std::chrono::milliseconds(config.get_int(Knob::RailSilenceMinMs));
    p.factor = config.get_double(Knob::RailSilenceFactor);
    return p;
}

void RailSilence::became_busy(TimePoint now) {
    if (busy_) return;
    busy_ = true;
    last_event_ = now;
}

void RailSilence::completed(TimePoint now, bool busy_after) {
    if (busy_) {
        double gap = std::chrono::duration<double>(now - last_event_).count();
        gap_ewma_ = gap_ewma_ == 0 ? gap : gap_ewma_ + kGapWeight * (gap - gap_ewma_);
    }
    busy_ = busy_after;
    last_event_ = now;
}

void RailSilence::reset() {
    busy_ = false;
    gap_ewma_ = 0;
}

Duration RailSilence::limit(const RailSilenceParams& params) const {
    auto usual = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(gap_ewma_ * params.factor));
    return std::max(params.min, usual);
}

bool RailSilence::silent(TimePoint now, const RailSilenceParams& params) const {
    return busy_ && now - last_event_ > limit(params);
}

} // namespace tent
