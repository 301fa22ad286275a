// Keeps a process's stats segment current: the engine calls maybe_publish()
// from its progress loop and a snapshot is published at most once per
// stats_publish_interval_ms. Off unless stats_enable is set.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
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

// Builds the process's rail table (process_stats.h) when a publication is due.
using ProcessSource = std::function<ProcessStats(TimePoint now)>;

class StatsPublisher {
public:
    // nullptr (and ok) when stats_enable is false. `registry` must outlive the publisher.
    // `source` may be empty: no rail table.
    static Result<std::unique_ptr<StatsPublisher>> from_config(const Config& config, const Registry& registry,
                                                               ProcessSource source = {});

    StatsPublisher(const Registry& registry, std::unique_ptr<StatsSegment> segment, Duration interval,
                   ProcessSource source);

    // Publishes if due; true when it did.
    Result<bool> maybe_publish(TimePoint now);
    Status publish_now(TimePoint now);

    const StatsSegment& segment() const { return *segment_; }

private:
    const Registry& registry_;
    std::unique_ptr<StatsSegment> segment_;
    Duration interval_;
    std::optional<TimePoint> last_;
    ProcessSource source_;
    ProcessStats previous_;  // the last published table, for derive_rates()
    std::int64_t previous_ns_ = 0;
};

} // namespace tent
