// Liveness of a TCP rail from the traffic itself. TCP can sit for minutes on
// a dead path before the kernel gives up, so each side sends a Heartbeat
// when it has sent nothing for one interval, and declares the path dead when
// it has heard nothing from the peer for `dead_after` intervals.
//
// "Heard" is not only what the application read. On a lossy path the byte
// stream stalls while TCP repairs a loss: the receiver waits for a
// retransmission (and its later segments wait out of order in the kernel),
// and a sender in retransmission backoff sends nothing new for 200 ms (the
// minimum RTO), 600 ms when the retransmission is lost too. The path still
// works: segments of the peer, its ACKs at least, keep arriving. So once the
// application has read nothing for an interval, the rail samples the
// kernel's count of segments received on the connection (tcpi_segs_in)
// every quarter interval, and a count that grew proves the peer heard at the
// earlier sample. From a quarter interval later on it also probes: a
// heartbeat every quarter interval, even if it has sent data recently, so
// the peer's kernel has something to ACK. A dead link then passes nothing
// and is detected `dead_after` intervals after the last segment arrived; a
// 5% lossy link would have to lose every one of about seven exchanges in a
// row.
//
// ACKs come from the peer's kernel, not from its process: a peer that no
// longer sends anything (a hung process) is declared dead when the stream
// has been stalled for `stall_limit`, which loss alone does not reach.
//
// Only time this side watched counts. Both rules above assume this side
// was running: probing (so the peer's kernel had something to answer) and
// reading (so the peer's frames were taken). A process that was not
// scheduled, or whose progress loop stalled, for a second has no evidence
// about that second; without this, on a loaded host its first look after
// the gap declared a healthy peer dead ("nothing heard for 737 ms" with a
// 240 ms limit, no probe sent in between). So the caller reports every
// look (watch()); a step between looks longer than one interval (a
// running driver looks at least that often: next_deadline() is never
// further) counts as one interval, and the rest of the gap moves every
// silence clock forward: after it the rail probes again and the peer has
// its full allowance. A dead or hung peer is still declared dead, later by
// at most the time this side did not watch.
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
    // Longest stream stall tolerated while the kernel still hears the peer;
    // at least interval * dead_after.
    Duration stall_limit = std::chrono::seconds(5);
};

class SilenceDetector {
public:
    SilenceDetector(SilenceParams params, TimePoint start)
        : params_(params), last_sent_(start), last_received_(start), last_heard_(start), last_sample_(start),
          last_look_(start) {}

    // A look at the rail at `now` (before what it finds is reported): the
    // part of the time since the previous look that this side was not
    // watching is not counted as the peer's silence.
    void watch(TimePoint now) {
        const Duration unwatched = now - last_look_ - params_.interval;
        last_look_ = std::max(last_look_, now);
        if (unwatched <= Duration::zero()) return;
        last_received_ += unwatched;
        last_heard_ += unwatched;
        sampled_ = false;  // a count across the gap proves nothing about when the peer was heard
        unwatched_ += unwatched;
    }
    // Time not counted since the application last read (for the log lines).
    Duration unwatched() const { return unwatched_; }

    void on_sent(TimePoint now) { last_sent_ = now; }
    void on_received(TimePoint now) {
        last_received_ = now;
        unwatched_ = Duration::zero();
        last_heard_ = std::max(last_heard_, now);
    }
    // The kernel's count of segments received on the connection (any
    // segment: data, retransmission or pure ACK), sampled at `now` when
    // kernel_sample_due. The counter may wrap.
    void on_kernel_count(TimePoint now, std::uint32_t segments_in) {
        if (sampled_ && segments_in != last_count_) last_heard_ = std::max(last_heard_, last_sample_);
        sampled_ = true;
        last_sample_ = now;
        last_count_ = segments_in;
    }

    // The application read nothing for 1.25 intervals: heartbeats every
    // quarter interval make the peer's kernel answer.
    bool probing(TimePoint now) const { return now >= probe_start(); }
    bool heartbeat_due(TimePoint now) const { return now >= heartbeat_deadline(); }
    bool kernel_sample_due(TimePoint now) const { return now >= kernel_sample_deadline(); }
    bool is_dead(TimePoint now) const { return now >= dead_deadline(); }
    // How long the application has read nothing, and how long since the
    // peer was last heard (application or kernel), for the log lines.
    Duration silent_for(TimePoint now) const { return now - last_received_; }
    Duration unheard_for(TimePoint now) const { return now - last_heard_; }

    // When each event above becomes true, so a caller can bound its wait.
    TimePoint probe_start() const { return last_received_ + params_.interval + quarter(); }
    // Nothing sent for an interval; while probing, for a quarter interval.
    TimePoint heartbeat_deadline() const {
        return std::min(last_sent_ + params_.interval, std::max(last_sent_ + quarter(), probe_start()));
    }
    TimePoint kernel_sample_deadline() const {
        return std::max(last_received_ + params_.interval, last_sample_ + quarter());
    }
    TimePoint dead_deadline() const {
        return std::min(last_heard_ + params_.interval * params_.dead_after,
                        last_received_ + std::max(params_.stall_limit, params_.interval * params_.dead_after));
    }
    // Without heartbeats (bytes are queued and a heartbeat would wait behind them).
    TimePoint next_check_deadline() const { return std::min(kernel_sample_deadline(), dead_deadline()); }
    TimePoint next_deadline() const { return std::min(heartbeat_deadline(), next_check_deadline()); }

private:
    Duration quarter() const { return params_.interval / 4; }

    SilenceParams params_;
    TimePoint last_sent_;
    TimePoint last_received_;  // the application read bytes
    TimePoint last_heard_;     // the peer proved alive (bytes read, or the kernel count grew)
    TimePoint last_sample_;
    std::uint32_t last_count_ = 0;
    bool sampled_ = false;
    TimePoint last_look_;       // watch()
    Duration unwatched_{};
};

} // namespace tent::tcp
