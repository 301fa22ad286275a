// A rail's health as one number for metrics and traces (LNet keeps a 0..1000
// health value per interface): 1000 for a rail with no recent error, falling
// linearly with the errors in its window towards the pause threshold, halved
// while degraded, 0 while paused. Decisions use RailState; this is a gauge.
#pragma once

#include <cstddef>

#include "health/rail_state.h"

namespace tent {

inline constexpr int kMaxHealthScore = 1000;

int rail_health_score(RailState state, std::size_t errors_in_window, std::size_t error_threshold);

} // namespace tent
