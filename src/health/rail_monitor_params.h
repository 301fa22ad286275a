// The RailMonitor's tunables, built from the knob table (never typed twice).
#pragma once

#include <cstddef>

#include "common/clock.h"
#include "common/status.h"

namespace tent {

class Config;

struct RailMonitorParams {
    std::size_t error_threshold = 0;  // rail_error_threshold
    Duration error_window{};          // rail_error_window_secs
    Duration cooldown{};              // rail_cooldown_secs
    Duration max_cooldown{};          // rail_max_cooldown_secs
    Duration probe_base{};            // probe_base_ms
    Duration probe_max{};             // probe_max_ms
    double slow_rail_factor = 0;      // slow_rail_factor
    Duration slow_rail_window{};      // slow_rail_window_secs
    std::size_t slow_rail_min_samples = 0;  // slow_rail_min_samples

    // Fails, naming both knobs, when a cap is below its base.
    static Result<RailMonitorParams> from_config(const Config& config);
};

} // namespace tent
