#include "policy/qos_window.h"

#include <algorithm>

namespace tent {

QosWindowParams QosWindowParams::from_config(const Config& config) {
    QosWindowParams p;
    p.window = static_cast<std::uint64_t>(config.get_int(Knob::QosWindow));
    p.hold = std::chrono::milliseconds(config.get_int(Knob::QosWindowHoldMs));
    return p;
}

void PriorityActivity::finished(Priority p, TimePoint now) {
    std::size_t i = index(p);
    if (active_[i]) --active_[i];
    last_finished_[i] = now;
    ever_finished_[i] = true;
}

bool PriorityActivity::higher_active(Priority p, TimePoint now, Duration hold) const {
    for (std::size_t i = 0; i < index(p); ++i) {
        if (active_[i]) return true;
        if (ever_finished_[i] && now - last_finished_[i] <= hold) return true;
    }
    return false;
}

bool PriorityActivity::lower_active(Priority p) const {
    for (std::size_t i = index(p) + 1; i < active_.size(); ++i)
        if (active_[i]) return true;
    return false;
}

bool qos_admits(std::uint64_t piece_bytes, std::uint64_t inflight_at_or_below, bool higher_active,
                const QosWindowParams& params) {
    if (!higher_active || params.window == 0 || inflight_at_or_below == 0) return true;
    return inflight_at_or_below + piece_bytes <= params.window;
}

std::uint64_t qos_piece_size(std::uint64_t chunk_size, bool higher_active, const QosWindowParams& params) {
    if (!higher_active || params.window == 0) return chunk_size;
    return std::min(chunk_size, std::max<std::uint64_t>(1, params.window / 2));
}

} // namespace tent
