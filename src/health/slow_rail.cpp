#include "health/slow_rail.h"

#include <algorithm>

#include "health/pause_backoff.h"

namespace tent {

void LatencyWindow::add(Duration latency, TimePoint now) {
    expire(now);
    samples_.push_back({now, latency});
    if (samples_.size() > kMaxLatencySamples) samples_.pop_front();
}

void LatencyWindow::expire(TimePoint now) {
    while (!samples_.empty() && samples_.front().at <= now - window_) samples_.pop_front();
}

std::size_t LatencyWindow::count(TimePoint now) const {
    return static_cast<std::size_t>(std::count_if(samples_.begin(), samples_.end(),
                                                  [&](const Sample& s) { return s.at > now - window_; }));
}

std::optional<Duration> LatencyWindow::median(TimePoint now, std::size_t min_samples) const {
    std::vector<Duration> values;
    values.reserve(samples_.size());
    for (const auto& s : samples_)
        if (s.at > now - window_) values.push_back(s.latency);
    if (values.empty() || values.size() < min_samples) return std::nullopt;
    return median_of(std::move(values));
}

std::optional<TimePoint> LatencyWindow::newest() const {
    if (samples_.empty()) return std::nullopt;
    return samples_.back().at;
}

std::optional<Duration> median_of(std::vector<Duration> values) {
    if (values.empty()) return std::nullopt;
    auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

bool slow_rail_verdict(Duration rail, Duration reference, double factor, bool currently_degraded) {
    double threshold = static_cast<double>(reference.count()) * factor;
    if (currently_degraded) threshold *= kSlowRailHysteresis;
    return static_cast<double>(rail.count()) > threshold;
}

Duration slow_rail_retry(unsigned level, Duration window) {
    return cooldown_for_level(level, kSlowRailRetryBase, std::max(window, kSlowRailRetryBase));
}

} // namespace tent
