// The QoS window in the engine: while higher-priority work is active, a
// rail keeps at most qos_window bytes of lower-priority work in flight and
// cuts those transfers into pieces of half the window; otherwise bulk transfers
// keep their chunks and depth. With two rails, a small high-priority request
// gets a lane that low-priority pieces stay off (qos_lane). Every byte is
// checked either way.
#include <criterion/criterion.h>

#include <algorithm>
#include <array>

#include "engine_pair.h"
#include "metrics/prometheus_text.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::uint64_t kWindow = 64 * 1024;
constexpr std::uint64_t kChunk = 256 * 1024;
constexpr int kWrites = 8;
constexpr std::size_t kWriteSize = 1u << 20;
// Rail operations of one whole write: its chunks, then its final 4 KiB cut
// off as a piece of their own (chunk_plan.h).
constexpr std::uint64_t kOpsPerWrite = kWriteSize / kChunk + 1;

Config qos_config(const char* window, const char* hold_ms) {
    Config c = loopback_config();
    (void)c.set(Knob::ChunkSize, "256K", api_source());
    (void)c.set(Knob::QosWindow, window, api_source());
    (void)c.set(Knob::QosWindowHoldMs, hold_ms, api_source());
    return c;
}

struct Outcome {
    std::uint64_t rail_ops = 0;         // data operations on the one rail
    std::uint64_t max_low_inflight = 0;  // largest backlog seen on it
    double held = 0;                     // tent_qos_held_total, low priority
};

// One rail, each operation completing after a few progress rounds. With
// `high_first`, one high-priority write completes before eight low-priority
// 1 MiB writes are posted at once; all of them are checked byte for byte.
Outcome run(const Config& config, bool high_first) {
    Outcome out;
    EnginePair p(1, {4}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    const std::size_t size = kWrites * kWriteSize;
    std::vector<std::uint8_t> src(size), dst(size, 0);
    fill(src, 5);
    auto rs = p.a->register_memory(src.data(), size, wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), size, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    const auto remote = reinterpret_cast<std::uint64_t>(dst.data());
    std::uint64_t ops_before = 0;
    if (high_first) {
        cr_assert(p.a->post_write(p.a_to_b, src.data(), 4096, handle_bytes(**rd), remote,
                                  with_cookie(100, Priority::High))
                      .is_ok());
        auto c = wait_completions(*p.a, 1);
        cr_assert(c.size() == 1 && c[0].status.is_ok());
        for (int i = 0; i < 200 && ops_before == 0; ++i) {
            ops_before = rail_total(*p.a, &RailStats::ops);
            if (ops_before == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    for (int i = 0; i < kWrites; ++i)
        cr_assert(p.a->post_write(p.a_to_b, src.data() + i * kWriteSize, kWriteSize, handle_bytes(**rd),
                                  remote + i * kWriteSize, with_cookie(i, Priority::Low))
                      .is_ok());
    std::vector<EngineCompletion> done;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (done.size() < kWrites && std::chrono::steady_clock::now() < deadline) {
        for (const auto& s : p.a->rail_stats()) out.max_low_inflight = std::max(out.max_low_inflight, s.inflight_bytes);
        if (p.a->poll(done, kWrites - done.size()) == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    cr_assert_eq(done.size(), static_cast<std::size_t>(kWrites));
    for (const auto& c : done) cr_expect(c.status.is_ok(), "%s", c.status.to_string().c_str());
    cr_expect(dst == src, "every byte of every write");
    // Statistics are published by the progress thread: wait for the last ones.
    const std::uint64_t want = ops_before + kWrites * kOpsPerWrite;
    for (int i = 0; i < 500; ++i) {
        out.rail_ops = rail_total(*p.a, &RailStats::ops);
        if (out.rail_ops >= want && out.rail_ops > ops_before) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    out.rail_ops -= ops_before;
    std::string rail = p.a->rail_stats().at(0).name;
    out.held = p.a->metrics_registry().snapshot().value("tent_qos_held_total", {rail, "low"}, 0);
    return out;
}

} // namespace

Test(engine_qos, low_priority_yields_while_high_priority_is_active) {
    // The high-priority write finished, but within the hold: high is active.
    Outcome o = run(qos_config("64K", "60000"), true);
    cr_expect_geq(o.rail_ops, kWrites * kWriteSize / (kWindow / 2), "pieces of half the window: %llu ops",
                  (unsigned long long)o.rail_ops);
    cr_expect_gt(o.held, 0, "pieces waited for the window");
    cr_expect_leq(o.max_low_inflight, kWindow, "backlog %llu bytes", (unsigned long long)o.max_low_inflight);
}

Test(engine_qos, bulk_keeps_its_chunks_and_depth_when_nothing_higher_is_active) {
    Outcome o = run(qos_config("64K", "60000"), false);
    cr_expect_eq(o.rail_ops, kWrites * kOpsPerWrite, "whole chunks: %llu ops", (unsigned long long)o.rail_ops);
    cr_expect_eq(o.held, 0, "nothing held");
}

Test(engine_qos, the_window_opens_after_the_hold) {
    // hold 0: the high-priority write is over before the low ones start.
    Outcome o = run(qos_config("64K", "0"), true);
    cr_expect_eq(o.rail_ops, kWrites * kOpsPerWrite, "whole chunks: %llu ops", (unsigned long long)o.rail_ops);
    cr_expect_eq(o.held, 0);
}

Test(engine_qos, window_zero_turns_it_off) {
    Outcome o = run(qos_config("0", "60000"), true);
    cr_expect_eq(o.rail_ops, kWrites * kOpsPerWrite, "whole chunks: %llu ops", (unsigned long long)o.rail_ops);
    cr_expect_eq(o.held, 0);
}

namespace {

// Bytes each of two rails carried when a high-priority 4 KiB write arrives
// while a low-priority 64 KiB write is in flight on one rail, and four
// low-priority 1 MiB writes follow. Both rails are stalled until everything
// is posted, so every decision sees the work in flight.
std::array<std::uint64_t, 2> lane_run(bool lane) {
    Config config = qos_config("64K", "60000");
    (void)config.set(Knob::QosLane, lane ? "true" : "false", api_source());
    EnginePair p(2, {0}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    constexpr std::size_t kFirst = 64 * 1024, kHigh = 4096, kBulk = 4u << 20;
    const std::size_t size = kFirst + kHigh + kBulk;
    std::vector<std::uint8_t> src(size), dst(size, 0);
    fill(src, 11);
    auto rs = p.a->register_memory(src.data(), size, wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), size, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    const auto remote = reinterpret_cast<std::uint64_t>(dst.data());
    auto inflight = [&] { return rail_total(*p.a, &RailStats::inflight_bytes); };
    auto wait_inflight = [&](std::uint64_t want) {
        for (int i = 0; i < 2000 && inflight() < want; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        cr_assert_geq(inflight(), want, "posted and held in flight by the stalled rails");
    };
    p.fabric->set_stalled(0, true);
    p.fabric->set_stalled(1, true);
    cr_assert(p.a->post_write(p.a_to_b, src.data(), kFirst, handle_bytes(**rd), remote, with_cookie(0, Priority::Low))
                  .is_ok());
    wait_inflight(kFirst);
    cr_assert(p.a->post_write(p.a_to_b, src.data() + kFirst, kHigh, handle_bytes(**rd), remote + kFirst,
                              with_cookie(1, Priority::High))
                  .is_ok());
    wait_inflight(kFirst + kHigh);
    for (int i = 0; i < 4; ++i) {
        const std::size_t at = kFirst + kHigh + i * (kBulk / 4);
        cr_assert(p.a->post_write(p.a_to_b, src.data() + at, kBulk / 4, handle_bytes(**rd), remote + at,
                                  with_cookie(2 + i, Priority::Low))
                      .is_ok());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // planned while the rails are stalled
    p.fabric->set_stalled(0, false);
    p.fabric->set_stalled(1, false);
    auto done = wait_completions(*p.a, 6, std::chrono::seconds(20));
    cr_assert_eq(done.size(), 6u);
    for (const auto& c : done) cr_expect(c.status.is_ok(), "%s", c.status.to_string().c_str());
    cr_expect(dst == src, "every byte of every write");
    return {p.fabric->bytes(0), p.fabric->bytes(1)};
}

} // namespace

Test(engine_qos, a_small_high_priority_request_gets_a_lane_that_low_priority_leaves_alone) {
    auto bytes = lane_run(true);
    const std::uint64_t lane = std::min(bytes[0], bytes[1]), other = std::max(bytes[0], bytes[1]);
    cr_expect_eq(lane, 4096u, "the lane carried only the high-priority write: %llu bytes",
                 (unsigned long long)lane);
    cr_expect_eq(other, 64u * 1024 + (4u << 20), "the low-priority writes all took the other rail: %llu bytes",
                 (unsigned long long)other);
}

Test(engine_qos, qos_lane_false_leaves_low_priority_striped_over_every_rail) {
    auto bytes = lane_run(false);
    cr_expect_gt(std::min(bytes[0], bytes[1]), 1u << 20, "both rails carried bulk: %llu and %llu bytes",
                 (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
}

namespace {

constexpr auto kPromotion = std::chrono::milliseconds(50);

struct StreamOutcome {
    std::chrono::steady_clock::duration low_latency{};  // submission to completion
    bool low_done = false;
    std::uint64_t high_done_after_low = 0;  // high writes completed after the low one
    double low_waited = 0;                  // tent_qos_waited_total{priority="low"}
};

// A stream of high-priority writes of `high_size` bytes (four always
// outstanding) for 40 promotion timeouts; `with_low`: one low-priority
// 1 MiB write is posted once the stream runs. Every byte is checked.
StreamOutcome high_stream(std::size_t high_size, bool with_high, bool with_low) {
    Config config = qos_config("64K", "10");
    (void)config.set(Knob::PriorityPromotionTimeoutUs, "50000", api_source());
    EnginePair p(1, {4}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    constexpr std::size_t kLow = 1u << 20, kSlots = 4;
    const std::size_t kHigh = high_size;
    std::vector<std::uint8_t> src(kLow + kSlots * kHigh), dst(src.size(), 0);
    fill(src, 21);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    const auto remote = reinterpret_cast<std::uint64_t>(dst.data());
    auto post_high = [&](std::uint64_t slot) {
        const std::size_t at = kLow + slot * kHigh;
        cr_assert(p.a->post_write(p.a_to_b, src.data() + at, kHigh, handle_bytes(**rd), remote + at,
                                  with_cookie(100 + slot, Priority::High))
                      .is_ok());
    };
    using Steady = std::chrono::steady_clock;
    StreamOutcome out;
    Steady::time_point low_posted{};
    bool low_posted_yet = !with_low;
    if (with_high) {
        // The low write meets the high writes in flight: they are posted to
        // a stalled rail, and the rail moves again only once the engine has
        // taken the low write (queued it, or started it). Posting it after a
        // fixed time instead met, on a slow build, a moment when the test
        // thread had not yet re-posted the high writes that had completed.
        auto inflight = [&] { return rail_total(*p.a, &RailStats::inflight_bytes); };
        auto waited = [&] { return p.a->metrics_registry().snapshot().value("tent_qos_waited_total", {"low"}, 0); };
        p.fabric->set_stalled(0, true);
        for (std::uint64_t s = 0; s < kSlots; ++s) post_high(s);
        for (int i = 0; i < 20000 && inflight() < kSlots * kHigh; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        cr_assert_geq(inflight(), kSlots * kHigh, "the high writes are in flight on the stalled rail");
        if (with_low) {
            low_posted = Steady::now();
            cr_assert(p.a->post_write(p.a_to_b, src.data(), kLow, handle_bytes(**rd), remote,
                                      with_cookie(1, Priority::Low))
                          .is_ok());
            low_posted_yet = true;
            for (int i = 0; i < 20000 && waited() == 0 && inflight() <= kSlots * kHigh; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            cr_assert(waited() > 0 || inflight() > kSlots * kHigh, "the engine took the low write");
        }
        p.fabric->set_stalled(0, false);
    }
    const Steady::time_point start = Steady::now(), end = start + 40 * kPromotion;
    std::size_t high_outstanding = with_high ? kSlots : 0;
    std::vector<EngineCompletion> done;
    while ((with_high && Steady::now() < end) || high_outstanding > 0 || (with_low && !out.low_done)) {
        cr_assert(Steady::now() < end + std::chrono::seconds(20), "bounded");
        if (!low_posted_yet && Steady::now() >= start + kPromotion / 5) {
            low_posted = Steady::now();
            cr_assert(p.a->post_write(p.a_to_b, src.data(), kLow, handle_bytes(**rd), remote,
                                      with_cookie(1, Priority::Low))
                          .is_ok());
            low_posted_yet = true;
        }
        done.clear();
        if (p.a->poll(done, 8) == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        for (const auto& c : done) {
            cr_expect(c.status.is_ok(), "%s", c.status.to_string().c_str());
            if (c.cookie == 1) {
                out.low_done = true;
                out.low_latency = Steady::now() - low_posted;
                continue;
            }
            --high_outstanding;
            if (out.low_done) ++out.high_done_after_low;
            if (Steady::now() < end) {
                post_high(c.cookie - 100);
                ++high_outstanding;
            }
        }
    }
    if (with_low) cr_expect(std::equal(src.begin(), src.begin() + kLow, dst.begin()), "every byte of the low write");
    if (with_high) cr_expect(std::equal(src.begin() + kLow, src.end(), dst.begin() + kLow), "every byte of the high writes");
    out.low_waited = p.a->metrics_registry().snapshot().value("tent_qos_waited_total", {"low"}, 0);
    return out;
}

double ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

} // namespace

Test(engine_qos, a_low_request_behind_a_high_stream_starts_once_promoted) {
    // Four 256 KiB high writes in flight: the rail is occupied (> qos_window).
    StreamOutcome o = high_stream(256 * 1024, true, true);
    cr_assert(o.low_done);
    cr_expect_eq(o.low_waited, 1, "the low write waited in the QoS queue");
    // It starts once promoted, with the stream still going (40 timeouts: a
    // bound on a loaded machine, not a timing figure). How long it waited is
    // logged, not asserted: the queue holds it only while the high writes
    // fill the rails, and on a loaded machine the test thread's re-posts
    // leave gaps in which it may start before the timeout, as it should.
    cr_log_info("low write: %.1f ms from post to completion (promotion timeout %.0f ms)", ms(o.low_latency),
                ms(kPromotion));
    cr_expect_gt(o.high_done_after_low, 0u, "the high stream went on after the low write completed (%.1f ms)",
                 ms(o.low_latency));
}

Test(engine_qos, with_one_priority_in_use_nothing_waits_in_the_queue) {
    StreamOutcome o = high_stream(4096, false, true);
    cr_assert(o.low_done);
    cr_expect_eq(o.low_waited, 0, "alone, the low write started at once");
}

Test(engine_qos, high_work_within_the_window_holds_nothing_in_the_queue) {
    // Four 4 KiB high writes leave the rail room: the window, not the
    // queue, keeps the low write out of their way.
    StreamOutcome o = high_stream(4096, true, true);
    cr_assert(o.low_done);
    cr_expect_eq(o.low_waited, 0, "the low write started at once");
    cr_expect_gt(o.high_done_after_low, 0u);
}
