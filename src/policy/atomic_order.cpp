#include "policy/atomic_order.h"

namespace tent {

bool atomic_may_start(const AtomicOrder& order, bool rail_usable) {
    return order.open.empty() || (order.in_step && rail_usable);
}

std::optional<std::size_t> atomic_rail(const AtomicOrder& order, std::size_t chosen, bool open_rail_allowed) {
    if (order.open.size() <= 1) return chosen;  // only itself
    if (!open_rail_allowed) return std::nullopt;
    return order.rail;
}

bool atomic_may_replay(const AtomicOrder& order, std::uint64_t op) {
    return !order.open.empty() && order.open.front() == op;
}

} // namespace tent
