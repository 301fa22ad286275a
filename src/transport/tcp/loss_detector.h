// Is a TCP rail's path losing packets? TCP repairs loss, so a lossy path
// still delivers every byte, only late (a retransmission costs at least an
// RTT, a tail loss the 200 ms minimum RTO): such a rail should be used last
// (degraded), not paused. The evidence is the kernel's own counters of the
// connection (TCP_INFO): retransmitted segments against data segments sent,
// over a recent window.
//
// The verdict has hysteresis: a rail becomes lossy above the threshold and
// stops being lossy only below half of it, so a ratio hovering around the
// threshold does not flap. A window with too few segments to judge (an idle
// rail) leaves the verdict as it was.
//
// Pure: it is given samples of the cumulative counters with their time.
#pragma once

#include <cstdint>
#include <deque>

#include "common/clock.h"

namespace tent::tcp {

// Cumulative counters of one connection (tcpi_data_segs_out,
// tcpi_total_retrans); 32-bit in the kernel, so they may wrap.
struct SegmentCounts {
    std::uint32_t data_segments_out = 0;
    std::uint32_t retransmitted = 0;
};

struct LossParams {
    double threshold = 0.01;          // tcp_lossy_retransmit_percent / 100
    Duration window = std::chrono::seconds(5);
    std::uint64_t min_segments = 200; // fewer in the window: no verdict
};

// The verdict for one window: retransmitted of `segments` data segments sent.
bool lossy_verdict(std::uint64_t segments, std::uint64_t retransmitted, const LossParams& params,
                   bool currently_lossy);

class LossDetector {
public:
    // How often the counters are worth sampling.
    static constexpr Duration kSamplePeriod = std::chrono::milliseconds(250);

    explicit LossDetector(LossParams params) : params_(params) {}

    // Records a sample; returns true when the verdict changed.
    bool sample(SegmentCounts counts, TimePoint now);
    bool lossy() const { return lossy_; }
    // Segments sent and retransmitted within the window, as of the last sample.
    std::uint64_t window_segments() const { return window_segments_; }
    std::uint64_t window_retransmitted() const { return window_retransmitted_; }

private:
    struct Step {
        TimePoint at;
        std::uint64_t segments;
        std::uint64_t retransmitted;
    };

    LossParams params_;
    bool have_last_ = false;
    SegmentCounts last_{};
    std::deque<Step> steps_;  // increments between consecutive samples, oldest first
    std::uint64_t window_segments_ = 0;
    std::uint64_t window_retransmitted_ = 0;
    bool lossy_ = false;
};

} // namespace tent::tcp
