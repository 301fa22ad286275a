#include "policy/qos_queue.h"

#include <algorithm>

namespace tent {

QosParams QosParams::from_config(const Config& config) {
    QosParams p;
    p.promotion_timeout = std::chrono::microseconds(config.get_int(Knob::PriorityPromotionTimeoutUs));
    p.sweep_interval = std::chrono::microseconds(config.get_int(Knob::LocalRotationIntervalUs));
    p.priority_filtering = config.get_bool(Knob::EnablePriorityFiltering);
    return p;
}

QosQueue::QosQueue(QosParams params, const Clock& clock) : params_(params), clock_(clock) {}

std::size_t QosQueue::size() const {
    std::size_t n = 0;
    for (const auto& q : queues_) n += q.size();
    return n;
}

void QosQueue::insert_by_level_time(std::deque<QueuedRequest>& queue, QueuedRequest entry) {
    // After every entry that reached this level at the same time or earlier.
    auto at = std::upper_bound(queue.begin(), queue.end(), entry.level_since,
                               [](TimePoint t, const QueuedRequest& e) { return t < e.level_since; });
    queue.insert(at, std::move(entry));
}

void QosQueue::maybe_promote(TimePoint now) {
    if (!params_.priority_filtering) return;
    if (next_sweep_ && now < *next_sweep_) return;
    next_sweep_ = now + params_.sweep_interval;
    // Low first, so an entry due twice moves Low -> Medium -> High in one sweep.
    for (int level = kPriorityCount - 1; level > 0; --level) {
        auto& from = queues_[static_cast<std::size_t>(level)];
        auto& to = queues_[static_cast<std::size_t>(level - 1)];
        // Each queue is ordered by level_since, so due entries are at the front.
        while (!from.empty() && from.front().level_since + params_.promotion_timeout <= now) {
            QueuedRequest e = std::move(from.front());
            from.pop_front();
            e.level_since += params_.promotion_timeout;
            e.current = promoted(e.current);
            ++promotions_;
            insert_by_level_time(to, std::move(e));
        }
    }
}

void QosQueue::push(std::uint64_t id, Priority priority) {
    TimePoint now = clock_.now();
    maybe_promote(now);
    QueuedRequest e{id, priority, priority, now, now, next_seq_++};
    insert_by_level_time(queues_[static_cast<std::size_t>(priority)], std::move(e));
}

std::optional<QueuedRequest> QosQueue::take(std::deque<QueuedRequest>& queue, std::deque<QueuedRequest>::iterator at) {
    QueuedRequest e = std::move(*at);
    queue.erase(at);
    return e;
}

} // namespace tent
