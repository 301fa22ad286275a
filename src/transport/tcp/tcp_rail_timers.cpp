// TcpRail, timers: heartbeats while the rail is idle, the silence limit
// that declares a mute peer dead, and the kernel's TCP counters sampled for
// the silence and loss detectors.
#include "transport/tcp/tcp_rail.h"

#include <chrono>

#include "common/log.h"
#include "transport/tcp/tcp_counters.h"
#include "transport/tcp/tcp_rail_detail.h"

namespace tent::tcp {

void TcpRail::check_timers(TimePoint now) {
    sample_kernel_counters(now);
    if (silence_.is_dead(now)) {
        using std::chrono::milliseconds;
        const auto unheard = std::chrono::duration_cast<milliseconds>(silence_.unheard_for(now)).count();
        const auto unread = std::chrono::duration_cast<milliseconds>(silence_.silent_for(now)).count();
        const auto unwatched = std::chrono::duration_cast<milliseconds>(silence_.unwatched()).count();
        TENT_WARN("tcp peer silent",
                  "tcp rail %s: nothing heard from the peer for %lld ms (nothing read for %lld ms; %lld ms this "
                  "process did not watch not counted), rail declared dead",
                  identity_.name.c_str(), static_cast<long long>(unheard), static_cast<long long>(unread),
                  static_cast<long long>(unwatched));
        close_with(Code::Timeout, "peer silent for " + std::to_string(unread) + " ms", RailOutcome::Timeout);
        return;
    }
    if (tx_.empty() && silence_.heartbeat_due(now)) {
        wire::Frame hb{.rail_id = identity_.rail_id,
                       .connection_id = identity_.connection_id,
                       .body = wire::Heartbeat{.nonce = next_nonce_++, .timestamp_ns = detail::timestamp_ns(now)}};
        (void)queue_frame(hb); // a heartbeat always encodes
    }
}

void TcpRail::sample_kernel_counters(TimePoint now) {
    const bool loss_due = now >= next_loss_sample_;
    if (!kernel_counters_ || !(loss_due || silence_.kernel_sample_due(now))) return;
    auto counters = read_tcp_counters(fd_.get());
    if (!counters) {
        // Without the counters the rail still works: silence is then judged
        // on what the application reads, and the rail is never lossy.
        TENT_DEBUG("tcp counters unavailable", "tcp rail %s: %s", identity_.name.c_str(),
                   counters.status().to_string().c_str());
        kernel_counters_ = false;
        return;
    }
    if (silence_.kernel_sample_due(now)) silence_.on_kernel_count(now, counters->segments_in);
    if (!loss_due) return;
    next_loss_sample_ = now + LossDetector::kSamplePeriod;
    if (loss_.sample({counters->data_segments_out, counters->retransmitted, counters->duplicates}, now)) {
        if (loss_.lossy())
            TENT_INFO("tcp lossy", "tcp rail %s: %llu of %llu segments retransmitted in the last seconds; rail is lossy",
                      identity_.name.c_str(), static_cast<unsigned long long>(loss_.window_retransmitted()),
                      static_cast<unsigned long long>(loss_.window_segments()));
        else
            TENT_INFO("tcp loss cleared", "tcp rail %s: %llu of %llu segments retransmitted in the last seconds; rail no longer lossy",
                      identity_.name.c_str(), static_cast<unsigned long long>(loss_.window_retransmitted()),
                      static_cast<unsigned long long>(loss_.window_segments()));
    }
}

} // namespace tent::tcp
