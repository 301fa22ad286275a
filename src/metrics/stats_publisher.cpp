#include "metrics/stats_publisher.h"

#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "metrics/registry.h"

namespace tent {

std::string stats_segment_name(const std::string& prefix, pid_t pid) {
    return prefix + "-" + std::to_string(pid);
}

bool publish_due(std::optional<TimePoint> last, TimePoint now, Duration interval) {
    return !last || now - *last >= interval;
}

StatsPublisher::StatsPublisher(const Registry& registry, std::unique_ptr<StatsSegment> segment,
                               Duration interval, ProcessSource source)
    : registry_(registry), segment_(std::move(segment)), interval_(interval), source_(std::move(source)) {}

Result<std::unique_ptr<StatsPublisher>> StatsPublisher::from_config(const Config& config,
                                                                    const Registry& registry,
                                                                    ProcessSource source) {
    if (!config.get_bool(Knob::StatsEnable)) return std::unique_ptr<StatsPublisher>();
    const std::string name = stats_segment_name(config.get_string(Knob::StatsShmPrefix), ::getpid());
    auto segment = StatsSegment::create(name);
    if (!segment)
        return Status(segment.status().code(), "stats_shm_prefix: " + segment.status().message());
    const Duration interval = std::chrono::milliseconds(config.get_int(Knob::StatsPublishIntervalMs));
    return std::make_unique<StatsPublisher>(registry, std::move(*segment), interval, std::move(source));
}

Result<bool> StatsPublisher::maybe_publish(TimePoint now) {
    if (!publish_due(last_, now, interval_)) return false;
    if (Status s = publish_now(now); !s) return s;
    return true;
}

Status StatsPublisher::publish_now(TimePoint now) {
    last_ = now;  // a failing segment is retried next interval, not on every call
    ProcessStats process;
    if (source_) {
        process = source_(now);
        struct timespec ts;
        ::clock_gettime(CLOCK_REALTIME, &ts);
        const std::int64_t now_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
        derive_rates(previous_, previous_ns_, process, now_ns);
        previous_ = process;
        previous_ns_ = now_ns;
    }
    return segment_->publish(registry_, process);
}

} // namespace tent
