#include "policy/failover_route.h"

namespace tent {

namespace {

std::uint32_t bit(TransportKind k) { return 1u << static_cast<unsigned>(k); }

} // namespace

RouteChoice choose_failover_rails(std::span<const TransportKind> fallback, const std::vector<RouteRail>& rails,
                                  RouteMemory& memory) {
    std::uint32_t failed_on = 0;  // transports passed over on which the piece failed
    bool any_allowed = false, any_open = false;
    for (TransportKind kind : fallback) {
        if (memory.has_left(kind)) {
            for (const RouteRail& r : rails) any_allowed = any_allowed || (r.kind == kind && r.allowed);
            continue;
        }
        RouteChoice choice{RouteVerdict::Rails, {}};
        bool unpaused = false, failed_here = false;
        for (std::size_t i = 0; i < rails.size(); ++i) {
            const RouteRail& r = rails[i];
            if (r.kind != kind || !r.allowed) continue;
            any_allowed = any_open = true;
            // Failed here counts whether or not the rail is usable now: a
            // piece that leaves a transport it failed on has left it, even
            // when that rail was out of use at the moment it moved.
            if (r.failed_here) {
                failed_here = true;
                continue;
            }
            if (!r.usable) continue;
            choice.rails.push_back(i);
            unpaused = unpaused || !r.paused;
        }
        if (unpaused) {
            memory.left |= failed_on;
            return choice;
        }
        if (failed_here) failed_on |= bit(kind);
    }
    if (any_open) return {RouteVerdict::Wait, {}};
    return {any_allowed ? RouteVerdict::Exhausted : RouteVerdict::NoRail, {}};
}

} // namespace tent
