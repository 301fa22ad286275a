// Keeps a process's stats segment current: the engine calls maybe_publish()
// from its progress loop and a snapshot is published at most once per
// stats_publish_interval_ms. Off unless stats_enable is set.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "metrics/stats_segment.h"

namespace tent {

class Config;
class Registry;

// "<prefix>-<pid>": one segment per process, found by prefix (StatsSegment::list).
std::string stats_segment_name(const std::string& prefix, pid_t pid);

// True when nothing was published yet or `interval` has passed since `last`.
bool publish_due(std::optional<TimePoint> last, TimePoint now, Duration interval);

class StatsPublisher {
public:
    // nullptr (and ok) when stats_enable is false. `registry` must outlive the publisher.
    static Result<std::unique_ptr<StatsPublisher>> from_config(const Config& config,
                                                               const Registry& registry);

    StatsPublisher(const Registry& registry, std::unique_ptr<StatsSegment> segment, Duration interval);

    // Publishes if due; true when it did.
    Result<bool> maybe_publish(TimePoint now);
    Status publish_now(TimePoint now);

    const StatsSegment& segment() const { return *segment_; }

private:
    const Registry& registry_;
    std::unique_ptr<StatsSegment> segment_;
    Duration interval_;
    std::optional<TimePoint> last_;
};

} // namespace tent
