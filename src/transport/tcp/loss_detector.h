// Is a TCP rail's path losing packets? TCP repairs loss, so a lossy path
// still delivers every byte, only late (a retransmission costs at least an
// RTT, a tail loss the 200 ms minimum RTO): such a rail should be used last
// (degraded), not paused. The evidence is the kernel's own counters of the
// connection (TCP_INFO): retransmitted segments against data segments sent,
// over a recent window.
//
// A loaded machine fakes loss: a receiver not scheduled for a few hundred
// ms lets the sender's retransmission timer fire, even on loopback, and a
// burst of retransmissions follows one stall. So becoming lossy needs
// evidence such a stall does not give: retransmissions the receiver did not
// report as duplicates (D-SACK: the original had arrived, nothing was lost),
// at least min_retransmits of them, spread over at least min_loss_periods
// sample periods of the window (a real lossy path loses a little all the time).
//
// The verdict has hysteresis: a rail becomes lossy above the threshold and
// stops being lossy only below half of it, so a ratio hovering around the
// threshold does not flap. A window with too few segments to judge (an idle
// rail) leaves the verdict as it was.
//
// Pure: it is given samples of the cumulative counters with their time.
#pragma once

#include <cstdint>
#include <cstddef>
#include <deque>

#include "common/clock.h"

namespace tent::tcp {

// Cumulative counters of one connection (tcpi_data_segs_out,
// tcpi_total_retrans); 32-bit in the kernel, so they may wrap.
struct SegmentCounts {
    std::uint32_t data_segments_out = 0;
    std::uint32_t retransmitted = 0;
    std::uint32_t duplicates = 0;  // tcpi_dsack_dups: retransmissions that were not needed
};

struct LossParams {
    double threshold = 0.01;          // tcp_lossy_retransmit_percent / 100
    Duration window = std::chrono::seconds(5);
    std::uint64_t min_segments = 200; // fewer in the window: no verdict
    std::uint64_t min_retransmits = 8; // fewer needed retransmissions: not lossy yet
    std::size_t min_loss_periods = 3;  // sample periods with one: fewer, a burst (a stall), not loss
};

// What one window holds.
struct LossWindow {
    std::uint64_t segments = 0;       // data segments sent
    std::uint64_t retransmitted = 0;  // retransmissions, less those reported as duplicates
    std::size_t loss_periods = 0;     // sample periods with such a retransmission
};

bool lossy_verdict(const LossWindow& window, const LossParams& params, bool currently_lossy);

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
        std::uint64_t retransmitted;  // less duplicates
    };

    LossParams params_;
    bool have_last_ = false;
    SegmentCounts last_{};
    std::deque<Step> steps_;  // increments between consecutive samples, oldest first
    std::uint64_t window_segments_ = 0;
    std::uint64_t window_retransmitted_ = 0;
    std::size_t window_loss_periods_ = 0;
    bool lossy_ = false;
};

} // namespace tent::tcp
