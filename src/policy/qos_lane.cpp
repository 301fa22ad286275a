#include "policy/qos_lane.h"

#include <tuple>

namespace tent {

bool lane_held(const QosLane& lane, TimePoint now, Duration hold) {
    return lane.rail.has_value() && now - lane.last_used <= hold;
}

std::optional<std::size_t> lane_for_small_request(const QosLane& lane, std::span<const LaneCandidate> candidates,
                                                  Priority level, bool lower_active, TimePoint now, Duration hold) {
    if (!lower_active) return std::nullopt;
    // A lane held for a higher level stands; this request stays off it.
    if (lane.level < level && lane_held(lane, now, hold)) return std::nullopt;
    std::size_t usable = 0;
    bool current_usable = false;
    for (const LaneCandidate& c : candidates) {
        if (c.paused) continue;
        ++usable;
        current_usable = current_usable || (lane.rail && c.rail == *lane.rail);
    }
    // One rail cannot be kept clear: the QoS window is all there is.
    if (usable < 2) return std::nullopt;
    if (current_usable && lane.level == level && lane_held(lane, now, hold)) return lane.rail;
    const LaneCandidate* best = nullptr;
    for (const LaneCandidate& c : candidates) {
        if (c.paused) continue;
        if (!best || std::tie(c.lower_inflight, c.inflight) < std::tie(best->lower_inflight, best->inflight))
            best = &c;
    }
    return best->rail;
}

bool lane_excludes(const QosLane& lane, std::size_t rail, Priority level, bool has_other_rail, TimePoint now,
                   Duration hold) {
    return has_other_rail && lane.rail == rail && lane.level < level && lane_held(lane, now, hold);
}

} // namespace tent
