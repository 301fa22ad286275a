// Silence on a busy rail: work outstanding and no completion for far longer
// than the rail usually takes between completions. On verbs this is how a
// dead remote port or a dead path is noticed long before the queue pair's
// own retry timeout (4.096 us * 2^timeout * retry_cnt, half a second with
// the defaults) gives up. Pure state and functions over given times (the
// engine gives its watched time, so that a gap in its own turns is not
// taken for the rail's silence).
#pragma once

#include "common/clock.h"
#include "config/config.h"

namespace tent {

struct RailSilenceParams {
    Duration min{std::chrono::milliseconds(60)};  // rail_silence_min_ms
    double factor = 10;                            // rail_silence_factor
    static RailSilenceParams from_config(const Config& config);
};

class RailSilence {
public:
    // Work was posted on an idle rail: the silence clock starts now.
    void became_busy(TimePoint now);
    // One operation completed; busy_after: the rail still has work outstanding.
    void completed(TimePoint now, bool busy_after);
    // The rail was declared failed or re-armed: forget its history.
    void reset();

    // How long this rail may stay silent while busy.
    Duration limit(const RailSilenceParams& params) const;
    // True when the rail is busy and silent beyond limit().
    bool silent(TimePoint now, const RailSilenceParams& params) const;
    Duration silent_for(TimePoint now) const { return busy_ ? now - last_event_ : Duration{}; }
    double usual_gap_seconds() const { return gap_ewma_; }

private:
    bool busy_ = false;
    TimePoint last_event_{};
    double gap_ewma_ = 0;  // seconds between completions while busy
};

} // namespace tent
