// QoS queues: strict priority, per-entry promotion after the timeout, FIFO
// when filtering is off, and a stated bound on how long low-priority work
// waits under continuous high-priority load.
#include <criterion/criterion.h>

#include <optional>
#include <vector>

#include "policy/qos_queue.h"

using namespace tent;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

constexpr Duration kT = milliseconds(10);

QosParams exact_params() {
    QosParams p;
    p.promotion_timeout = kT;
    p.sweep_interval = microseconds(1);  // check on every call
    p.priority_filtering = true;
    return p;
}

// The next entry in serving order, nothing held.
std::optional<QueuedRequest> pop_any(QosQueue& q) {
    return q.pop_if([](const QueuedRequest&) { return true; });
}

std::vector<std::uint64_t> drain(QosQueue& q) {
    std::vector<std::uint64_t> ids;
    for (int i = 0; i < 1000 && !q.empty(); ++i) ids.push_back(pop_any(q)->id);
    return ids;
}

} // namespace

Test(qos_queue, drains_high_then_medium_then_low_fifo_within_level) {
    ManualClock clock;
    QosQueue q(exact_params(), clock);
    q.push(1, Priority::Low);
    q.push(2, Priority::Medium);
    q.push(3, Priority::High);
    q.push(4, Priority::Low);
    q.push(5, Priority::High);
    q.push(6, Priority::Medium);
    cr_expect_eq(q.size(), 6u);
    cr_expect_eq(q.size(Priority::High), 2u);
    auto ids = drain(q);
    std::vector<std::uint64_t> want{3, 5, 2, 6, 1, 4};
    cr_assert_eq(ids.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) cr_expect_eq(ids[i], want[i], "position %zu", i);
    cr_expect_not(pop_any(q).has_value());
    cr_expect_eq(q.promotions(), 0u);
}

Test(qos_queue, promotion_is_per_entry) {
    ManualClock clock;
    QosQueue q(exact_params(), clock);
    TimePoint t0 = clock.now();
    q.push(1, Priority::Low);
    clock.advance(kT / 2);
    q.push(2, Priority::Low);
    clock.set(t0 + kT);  // entry 1 is due, entry 2 is not
    q.push(3, Priority::High);
    cr_expect_eq(q.size(Priority::Medium), 1u);
    cr_expect_eq(q.size(Priority::Low), 1u);
    auto first = pop_any(q);
    cr_expect_eq(first->id, 3u);
    auto second = pop_any(q);
    cr_expect_eq(second->id, 1u);
    cr_expect_eq(second->original, Priority::Low);
    cr_expect_eq(second->current, Priority::Medium);
    cr_expect(second->enqueued == t0);
    cr_expect(second->level_since == t0 + kT);
    cr_expect_eq(q.promotions(), 1u);
    clock.set(t0 + kT + kT / 2 - microseconds(1));
    cr_expect_eq(q.size(Priority::Low), 1u);
    q.push(4, Priority::Medium);
    cr_expect_eq(q.size(Priority::Low), 1u, "entry 2 is not due 1 us early");
    clock.set(t0 + kT + kT / 2);
    auto third = pop_any(q);
    cr_expect_eq(third->id, 4u, "entry 2 reached medium after entry 4 did");
    cr_expect_eq(q.size(Priority::Medium), 1u);
    cr_expect_eq(pop_any(q)->id, 2u);
}

Test(qos_queue, promoted_entries_keep_fifo_by_time_reached) {
    ManualClock clock;
    QosQueue q(exact_params(), clock);
    TimePoint t0 = clock.now();
    q.push(1, Priority::Low);       // medium at t0+T, high at t0+2T
    clock.set(t0 + kT + kT / 2);
    q.push(2, Priority::High);      // high since t0+1.5T
    clock.set(t0 + 2 * kT + milliseconds(1));
    q.push(3, Priority::High);      // high since t0+2.1T
    // Entry 1 became high at t0+2T: after entry 2, before entry 3.
    auto ids = drain(q);
    cr_assert_eq(ids.size(), 3u);
    cr_expect_eq(ids[0], 2u);
    cr_expect_eq(ids[1], 1u);
    cr_expect_eq(ids[2], 3u);
    cr_expect_eq(q.promotions(), 2u);
}

Test(qos_queue, medium_promotes_to_high_once) {
    ManualClock clock;
    QosQueue q(exact_params(), clock);
    q.push(1, Priority::Medium);
    clock.advance(5 * kT);
    q.push(2, Priority::High);
    auto e = pop_any(q);
    cr_expect_eq(e->id, 1u);
    cr_expect_eq(e->current, Priority::High);
    cr_expect_eq(q.promotions(), 1u, "high is the top: no further promotion");
}

Test(qos_queue, one_late_sweep_moves_an_entry_two_levels) {
    ManualClock clock;
    QosQueue q(exact_params(), clock);
    TimePoint t0 = clock.now();
    q.push(1, Priority::Low);
    clock.advance(5 * kT);
    q.push(2, Priority::High);
    auto e = pop_any(q);
    cr_expect_eq(e->id, 1u);
    cr_expect_eq(e->current, Priority::High);
    cr_expect(e->level_since == t0 + 2 * kT, "one level per timeout period, from enqueue time");
    cr_expect_eq(q.promotions(), 2u);
}

Test(qos_queue, sweep_interval_delays_promotion_checks) {
    QosParams p = exact_params();
    p.sweep_interval = milliseconds(3);
    ManualClock clock;
    QosQueue q(p, clock);
    TimePoint t0 = clock.now();
    q.push(1, Priority::Low);  // sweep at t0, next at t0+3ms
    clock.set(t0 + milliseconds(9));
    q.push(2, Priority::High);  // sweep at 9ms, next at 12ms
    clock.set(t0 + kT);         // entry 1 due, but no sweep until 12 ms
    cr_expect_eq(pop_any(q)->id, 2u);
    q.push(3, Priority::Medium);
    cr_expect_eq(pop_any(q)->id, 3u, "no sweep yet: entry 1 still low");
    clock.set(t0 + milliseconds(12));
    q.push(4, Priority::Medium);
    auto e = pop_any(q);
    cr_expect_eq(e->id, 1u, "promoted at the 12 ms sweep, ranked by when it became due");
    cr_expect(e->level_since == t0 + kT);
}

Test(qos_queue, fifo_across_levels_without_priority_filtering) {
    QosParams p = exact_params();
    p.priority_filtering = false;
    ManualClock clock;
    QosQueue q(p, clock);
    q.push(1, Priority::Low);
    q.push(2, Priority::High);
    clock.advance(10 * kT);
    q.push(3, Priority::Medium);
    q.push(4, Priority::Low);
    auto ids = drain(q);
    std::vector<std::uint64_t> want{1, 2, 3, 4};
    cr_assert_eq(ids.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) cr_expect_eq(ids[i], want[i]);
    cr_expect_eq(q.promotions(), 0u);
}

Test(qos_queue, params_from_config) {
    Config c;
    auto p = QosParams::from_config(c);
    cr_expect(p.promotion_timeout == microseconds(10000));
    cr_expect(p.sweep_interval == microseconds(200));
    cr_expect(p.priority_filtering);
    cr_assert(c.set(Knob::EnablePriorityFiltering, "false", Source{}).is_ok());
    cr_expect_not(QosParams::from_config(c).priority_filtering);
}

Test(priority, names_and_promotion) {
    cr_expect_eq(parse_priority("high").value(), Priority::High);
    cr_expect_eq(parse_priority("medium").value(), Priority::Medium);
    cr_expect_eq(parse_priority("low").value(), Priority::Low);
    cr_expect_not(parse_priority("urgent").has_value());
    cr_expect_eq(promoted(Priority::Low), Priority::Medium);
    cr_expect_eq(promoted(Priority::Medium), Priority::High);
    cr_expect_eq(promoted(Priority::High), Priority::High);
    cr_expect_eq(static_cast<int>(Priority::High), 0);
    cr_expect_eq(static_cast<int>(Priority::Low), 2);
}

// The bound stated in qos_queue.h, with the default knobs (T = 10 ms, sweep
// interval R = 200 us): under continuous high-priority load (one high entry
// pushed before every pop, a pop every S), a low entry waits at least 2T and
// at most 2T + R + S; a medium entry at least T and at most T + R + S.
static void check_bound(Priority level, Duration service) {
    Config config;
    QosParams p = QosParams::from_config(config);
    ManualClock clock;
    QosQueue q(p, clock);
    const std::uint64_t target = 1'000'000;
    const int levels = static_cast<int>(level);
    const Duration lower = levels * p.promotion_timeout;
    const Duration upper = lower + p.sweep_interval + service;

    TimePoint t0 = clock.now();
    q.push(target, level);
    std::optional<TimePoint> served;
    const auto max_steps = upper / service + 10;  // bounded even if the bound is broken
    for (std::int64_t step = 0; step < max_steps; ++step) {
        q.push(static_cast<std::uint64_t>(step), Priority::High);
        auto e = pop_any(q);
        cr_assert(e.has_value());
        if (e->id == target) {
            served = clock.now();
            break;
        }
        clock.advance(service);
    }
    cr_assert(served.has_value(), "%s entry starved (S = %ld ns)", priority_name(level),
              static_cast<long>(service.count()));
    Duration wait = *served - t0;
    cr_expect(wait >= lower, "%s served after %ld ns, before its promotions (%ld ns)", priority_name(level),
              static_cast<long>(wait.count()), static_cast<long>(lower.count()));
    cr_expect(wait <= upper, "%s served after %ld ns, bound %ld ns (S = %ld ns)", priority_name(level),
              static_cast<long>(wait.count()), static_cast<long>(upper.count()), static_cast<long>(service.count()));
}

Test(qos_queue, low_priority_is_served_within_bound_under_high_load) {
    for (long s_us : {7L, 100L, 130L, 450L, 3000L}) check_bound(Priority::Low, microseconds(s_us));
}

Test(qos_queue, medium_priority_is_served_within_bound_under_high_load) {
    for (long s_us : {7L, 100L, 130L, 450L, 3000L}) check_bound(Priority::Medium, microseconds(s_us));
}

// pop_if: what the predicate holds keeps its place; the rest is served in
// the usual order; the engine's rule (held until promoted once while a
// higher level is active) lets a low entry out after T.
Test(qos_queue, pop_if_skips_held_entries_and_keeps_their_order) {
    ManualClock clock;
    QosQueue q(exact_params(), clock);
    q.push(1, Priority::Low);
    q.push(2, Priority::Medium);
    q.push(3, Priority::Low);
    q.push(4, Priority::High);
    auto unpromoted_below_high = [](const QueuedRequest& e) {
        return e.original == Priority::High || e.current != e.original;
    };
    auto first = q.pop_if(unpromoted_below_high);
    cr_assert(first.has_value());
    cr_expect_eq(first->id, 4u);
    cr_expect_not(q.pop_if(unpromoted_below_high).has_value(), "medium and low are held");
    cr_expect_eq(q.size(), 3u);
    clock.advance(kT);  // everything promoted once
    std::vector<std::uint64_t> ids;
    while (auto e = q.pop_if(unpromoted_below_high)) ids.push_back(e->id);
    const std::vector<std::uint64_t> want{2, 1, 3};  // medium is high now; the lows are medium
    cr_assert_eq(ids.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) cr_expect_eq(ids[i], want[i], "position %zu", i);
}

Test(qos_queue, pop_if_without_filtering_takes_the_oldest_that_may_start) {
    ManualClock clock;
    QosParams p = exact_params();
    p.priority_filtering = false;
    QosQueue q(p, clock);
    q.push(1, Priority::Low);
    q.push(2, Priority::High);
    q.push(3, Priority::Low);
    auto not_id1 = [](const QueuedRequest& e) { return e.id != 1; };
    cr_expect_eq(q.pop_if(not_id1)->id, 2u);
    cr_expect_eq(q.pop_if(not_id1)->id, 3u);
    cr_expect_not(q.pop_if(not_id1).has_value());
    cr_expect_eq(pop_any(q)->id, 1u);
}
