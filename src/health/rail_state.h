// The health state of a rail as the selectors see it. Order matters: rails
// are preferred in this order.
#pragma once

namespace tent {

enum class RailState {
    Healthy = 0,  // carries traffic
    Degraded = 1, // works but is much slower than its peers: used last, never paused for it
    Paused = 2,   // too many recent errors or a fault event: no traffic until it recovers
};

constexpr const char* rail_state_name(RailState s) {
    switch (s) {
    case RailState::Healthy: return "healthy";
    case RailState::Degraded: return "degraded";
    case RailState::Paused: return "paused";
    }
    return "?";
}

} // namespace tent
