#include "health/health_score.h"

#include <algorithm>

namespace tent {

int rail_health_score(RailState state, std::size_t errors_in_window, std::size_t error_threshold) {
    if (state == RailState::Paused) return 0;
    std::size_t threshold = std::max<std::size_t>(error_threshold, 1);
    std::size_t errors = std::min(errors_in_window, threshold);
    int score = static_cast<int>(kMaxHealthScore - kMaxHealthScore * errors / threshold);
    return state == RailState::Degraded ? score / 2 : score;
}

} // namespace tent
