// Per-worker QoS queues: three FIFO queues (high, medium, low) drained
// strictly by priority, with per-entry promotion so that low-priority work
// cannot starve.
//
// Promotion: an entry moves up one level each time it has waited
// promotion_timeout at its current level (measured from its enqueue time, so
// a Low entry becomes Medium at enqueue + T and High at enqueue + 2T, whatever
// else is queued). Promoted entries keep FIFO order by the time they reached
// their level. The worker checks for due promotions at most once per
// sweep_interval (local_rotation_interval_us) to keep pop_if() cheap.
//
// Bound (asserted in tests/unit/policy/test_qos_queue.cpp): with continuous
// high-priority load, one high entry pushed before every pop and pops every S,
// a low entry is served after at least 2T and at most 2T + sweep_interval + S;
// a medium entry after at most T + sweep_interval + S.
//
// With priority filtering off, entries are served in arrival order.
// One queue per worker thread; it is not synchronised.
//
// The engine holds requests here that may not start yet (pop_if): a
// request stays queued while work of a higher level is active, until it
// has been promoted once, so a low request behind a stream of high ones
// starts within promotion_timeout + sweep_interval of its submission.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <optional>

#include "common/clock.h"
#include "config/config.h"
#include "policy/priority.h"

namespace tent {

struct QosParams {
    Duration promotion_timeout{std::chrono::microseconds(10000)};
    Duration sweep_interval{std::chrono::microseconds(200)};
    bool priority_filtering = true;
    static QosParams from_config(const Config& config);
};

struct QueuedRequest {
    std::uint64_t id = 0;
    Priority original = Priority::High;  // as submitted
    Priority current = Priority::High;   // after promotions
    TimePoint enqueued{};
    TimePoint level_since{};  // when it reached `current`
    std::uint64_t seq = 0;    // arrival order
};

class QosQueue {
public:
    QosQueue(QosParams params, const Clock& clock);

    void push(std::uint64_t id, Priority priority);
    // The first request in serving order (strictly by current level, FIFO
    // by the time it reached it; arrival order without filtering) that
    // `may_start` accepts, or nullopt; the others keep their places. may_start must depend only on the entry's
    // original and current level (it is asked once per pair and queue).
    template <typename MayStart>
    std::optional<QueuedRequest> pop_if(MayStart&& may_start);

    bool empty() const {  // asked on every turn: no counting
        return std::all_of(queues_.begin(), queues_.end(), [](const auto& q) { return q.empty(); });
    }
    std::size_t size() const;
    std::size_t size(Priority level) const { return queues_[static_cast<std::size_t>(level)].size(); }
    std::uint64_t promotions() const { return promotions_; }

private:
    void maybe_promote(TimePoint now);
    static void insert_by_level_time(std::deque<QueuedRequest>& queue, QueuedRequest entry);

    std::optional<QueuedRequest> take(std::deque<QueuedRequest>& queue, std::deque<QueuedRequest>::iterator at);

    QosParams params_;
    const Clock& clock_;
    std::array<std::deque<QueuedRequest>, kPriorityCount> queues_;
    std::uint64_t next_seq_ = 0;
    std::uint64_t promotions_ = 0;
    std::optional<TimePoint> next_sweep_;
};

template <typename MayStart>
std::optional<QueuedRequest> QosQueue::pop_if(MayStart&& may_start) {
    maybe_promote(clock_.now());
    if (!params_.priority_filtering) {
        // Arrival order: the oldest entry that may start.
        std::deque<QueuedRequest>* pick = nullptr;
        std::deque<QueuedRequest>::iterator at;
        for (auto& q : queues_)
            for (auto it = q.begin(); it != q.end(); ++it)
                if ((!pick || it->seq < at->seq) && may_start(*it)) {
                    pick = &q;
                    at = it;
                    break;
                }
        return pick ? take(*pick, at) : std::nullopt;
    }
    for (std::size_t level = 0; level < queues_.size(); ++level) {
        auto& q = queues_[level];
        // Entries of one original level share the answer: ask once per level.
        // A queue holds entries submitted at its level or below it.
        std::array<int, kPriorityCount> verdict{};  // 0 unknown, 1 may start, -1 held
        for (auto it = q.begin(); it != q.end(); ++it) {
            int& v = verdict[static_cast<std::size_t>(it->original)];
            if (v == 0) v = may_start(*it) ? 1 : -1;
            if (v > 0) return take(q, it);
            if (std::all_of(verdict.begin() + static_cast<std::ptrdiff_t>(level), verdict.end(),
                            [](int x) { return x < 0; }))
                break;
        }
    }
    return std::nullopt;
}

} // namespace tent
