// Liveness of a TCP rail from the traffic itself. TCP can sit for minutes on
// a dead path before the kernel gives up, so each side sends a Heartbeat
// when it has sent nothing for one interval, and declares the rail dead when
// it has heard nothing from the peer for `dead_after` intervals.
//
// "Heard" is not only what the application read. On a lossy path the byte
// stream stalls behind a lost segment until TCP repairs it (the 200 ms
// minimum RTO, more when the repair is lost too), while the peer's later
// segments keep arriving and wait in the kernel's out-of-order queue. So
// while the application hears nothing for an interval, the rail also
// samples the kernel's count of data segments received from the peer
// (tcpi_data_segs_in, in order or not): a count that grew between two
// samples proves the peer alive at the earlier sample. Pure ACKs are not
// counted, so a peer whose kernel answers but whose process no longer
// sends heartbeats still goes silent.
//
// Pure: it is told when frames go out and come in and what the kernel
// counted, and asked about a time.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/clock.h"

namespace tent::tcp {

struct SilenceParams {
    Duration interval{};    // tcp_heartbeat_interval_ms
    int dead_after = 3;     // tcp_silence_intervals
};

class SilenceDetector {
public:
    SilenceDetector(SilenceParams params, TimePoint start)
        : params_(params), last_sent_(start), last_received_(start), last_heard_(start), last_sample_(start) {}

    void on_sent(TimePoint now) { last_sent_ = now; }
    void on_received(TimePoint now) {
        last_received_ = now;
        last_heard_ = std::max(last_heard_, now);
    }
    // The kernel's count of data segments received from the peer, sampled
    // at `now` (when kernel_sample_due). The counter may wrap.
    void on_kernel_count(TimePoint now, std::uint32_t data_segments_in) {
        if (sampled_ && data_segments_in != last_count_) last_heard_ = std::max(last_heard_, last_sample_);
        sampled_ = true;
        last_sample_ = now;
        last_count_ = data_segments_in;
    }

    // Nothing went out for a whole interval: time for a heartbeat.
    bool heartbeat_due(TimePoint now) const { return now >= heartbeat_deadline(); }
    // The application heard nothing for an interval: ask the kernel whether
    // the peer's segments are arriving (once per interval).
    bool kernel_sample_due(TimePoint now) const { return now >= kernel_sample_deadline(); }
    // Nothing heard for dead_after intervals: the path is gone.
    bool is_dead(TimePoint now) const { return now >= dead_deadline(); }
    // How long the application has read nothing (for the log line).
    Duration silent_for(TimePoint now) const { return now - last_received_; }
    // How long since the peer was last heard (application or kernel).
    Duration unheard_for(TimePoint now) const { return now - last_heard_; }
    // When each of the events above becomes true, and the earliest of
    // them, so a caller can bound its wait.
    TimePoint heartbeat_deadline() const { return last_sent_ + params_.interval; }
    TimePoint kernel_sample_deadline() const {
        return std::max(last_received_, last_sample_) + params_.interval;
    }
    TimePoint dead_deadline() const { return last_heard_ + params_.interval * params_.dead_after; }
    // Without a heartbeat (bytes are queued and a heartbeat would wait behind them).
    TimePoint next_check_deadline() const { return std::min(kernel_sample_deadline(), dead_deadline()); }
    TimePoint next_deadline() const { return std::min(heartbeat_deadline(), next_check_deadline()); }

private:
    SilenceParams params_;
    TimePoint last_sent_;
    TimePoint last_received_;  // the application read bytes
    TimePoint last_heard_;     // the peer proved alive (bytes read, or kernel count grew)
    TimePoint last_sample_;
    std::uint32_t last_count_ = 0;
    bool sampled_ = false;
};

} // namespace tent::tcp
