// DeviceSelector: health, then NUMA tier, then load, then a waiting answer,
// then round-robin; EWMA
// bandwidth with clamps; striping weights.
#include <criterion/criterion.h>

#include <cmath>
#include <optional>
#include <vector>

#include "policy/device_selector.h"

using namespace tent;

namespace {

constexpr double kGB = 1e9;

DeviceSelectorParams params() {
    DeviceSelectorParams p;
    p.bandwidth.alpha = 0.5;
    p.bandwidth.min_bw = 1e6;
    p.bandwidth.max_bw = 100 * kGB;
    p.striping_min_chunk = 64 * 1024;
    return p;
}

std::vector<RailView> rails(std::size_t n, double bw = 10 * kGB) {
    std::vector<RailView> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i].device = static_cast<int>(i);
        v[i].numa_node = 0;
        v[i].ewma_bw = bw;
    }
    return v;
}

constexpr std::uint64_t kAll = ~0ULL;

std::uint64_t covered(const std::vector<StripeShare>& shares) {
    std::uint64_t expect_offset = 0;
    for (const auto& s : shares) {
        cr_expect_eq(s.offset, expect_offset, "shares must be contiguous");
        expect_offset += s.length;
    }
    return expect_offset;
}

} // namespace

Test(device_selector, health_comes_first) {
    auto v = rails(3);
    v[0].state = RailState::Paused;
    v[1].state = RailState::Degraded;
    v[2].state = RailState::Healthy;
    // Make the healthy rail the worst on every later criterion.
    v[2].numa_node = 1;
    v[2].inflight_bytes = 1 << 30;
    v[2].ewma_bw = 1e6;
    DeviceSelector sel(params());
    auto r = sel.rank(v, kAll, 0);
    cr_assert_eq(r.size(), 3u);
    cr_expect_eq(r[0], 2u);
    cr_expect_eq(r[1], 1u);
    cr_expect_eq(r[2], 0u);
}

Test(device_selector, numa_tier_before_load) {
    auto v = rails(2);
    v[0].numa_node = 0;
    v[1].numa_node = 1;
    v[1].inflight_bytes = 1 << 30;  // busy but local to the caller on node 1
    DeviceSelector sel(params());
    auto r = sel.rank(v, kAll, 1);
    cr_expect_eq(r[0], 1u);
    auto r0 = sel.rank(v, kAll, 0);
    cr_expect_eq(r0[0], 0u);
    // Caller's node unknown: one tier, load decides.
    auto ru = sel.rank(v, kAll, -1);
    cr_expect_eq(ru[0], 0u);
}

Test(device_selector, load_is_inflight_over_bandwidth) {
    auto v = rails(2);
    v[0].inflight_bytes = 4 << 20;
    v[0].ewma_bw = 40 * kGB;  // drains in 0.1 ms
    v[1].inflight_bytes = 1 << 20;
    v[1].ewma_bw = 1 * kGB;   // fewer bytes but drains in 1 ms
    DeviceSelector sel(params());
    auto r = sel.rank(v, kAll, 0);
    cr_expect_eq(r[0], 0u);
    v[0].ewma_bw = 2 * kGB;   // now 2 ms
    r = sel.rank(v, kAll, 0);
    cr_expect_eq(r[0], 1u);
}

Test(device_selector, ewma_is_clamped_in_ranking) {
    auto v = rails(2);
    v[0].inflight_bytes = 1 << 20;
    v[0].ewma_bw = 1e18;  // absurd: clamped to 100 GB/s
    v[1].inflight_bytes = 2 << 20;
    v[1].ewma_bw = 150 * kGB;  // also clamped to 100 GB/s: more bytes, so more load
    DeviceSelector sel(params());
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 0u);
    v[1].inflight_bytes = 1 << 20;  // equal after clamping: round-robin from cursor 0
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 0u);
    v[0].ewma_bw = 1.0;  // clamped up to 1 MB/s, not zero
    v[0].inflight_bytes = 0;
    v[1].inflight_bytes = 1;
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 0u, "an idle rail has load 0 whatever its bandwidth");
}

Test(device_selector, ties_rotate_round_robin) {
    auto v = rails(4);
    DeviceSelector sel(params());
    std::vector<std::size_t> seen;
    for (int i = 0; i < 8; ++i) {
        auto p = sel.pick(v, kAll, 0);
        cr_assert(p.has_value());
        seen.push_back(*p);
    }
    for (std::size_t i = 0; i < 8; ++i) cr_expect_eq(seen[i], i % 4, "pick %zu got rail %zu", i, seen[i]);
}

Test(device_selector, a_waiting_answer_breaks_ties_before_round_robin) {
    auto v = rails(2);
    DeviceSelector sel(params());
    // Rail 1 holds an ack for the peer: a request-response exchange keeps
    // to it, where round-robin alone alternates.
    v[1].answer_waiting = true;
    for (int i = 0; i < 4; ++i) cr_expect_eq(sel.pick(v, kAll, 0), std::optional<std::size_t>(1u), "pick %d", i);
    v[1].answer_waiting = false;
    v[0].answer_waiting = true;
    cr_expect_eq(sel.pick(v, kAll, 0), std::optional<std::size_t>(0u));
    v[0].answer_waiting = false;
    auto first = sel.pick(v, kAll, 0), second = sel.pick(v, kAll, 0);
    cr_expect_neq(first, second, "without answers the rails alternate again");
}

Test(device_selector, a_waiting_answer_does_not_outrank_health_numa_or_load) {
    auto v = rails(2);
    DeviceSelector sel(params());
    v[0].answer_waiting = true;
    v[0].state = RailState::Degraded;
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 1u, "health first");
    v[0].state = RailState::Healthy;
    v[0].numa_node = 1;
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 1u, "the caller's NUMA node before an answer");
    v[0].numa_node = 0;
    v[0].inflight_bytes = 1 << 20;
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 1u, "the less loaded rail before an answer");
    v[0].inflight_bytes = 0;
    cr_expect_eq(sel.rank(v, kAll, 0)[0], 0u);
}

Test(device_selector, mask_limits_rails) {
    auto v = rails(4);
    DeviceSelector sel(params());
    std::uint64_t mask = (1u << 1) | (1u << 3);
    auto r = sel.rank(v, mask, 0);
    cr_assert_eq(r.size(), 2u);
    for (int i = 0; i < 6; ++i) {
        auto p = sel.pick(v, mask, 0);
        cr_assert(p.has_value());
        cr_expect(*p == 1 || *p == 3);
        cr_expect_eq(*p, i % 2 == 0 ? 1u : 3u);
    }
    cr_expect_not(sel.pick(v, 0, 0).has_value());
    v[0].device = -1;
    v[1].device = 70;
    cr_expect_eq(sel.rank(v, kAll, 0).size(), 2u, "rails with no valid device bit are never chosen");
}

Test(device_selector, paused_rails_are_ranked_last_but_never_picked) {
    auto v = rails(2);
    v[0].state = RailState::Paused;
    v[1].state = RailState::Paused;
    DeviceSelector sel(params());
    cr_expect_eq(sel.rank(v, kAll, 0).size(), 2u);
    cr_expect_not(sel.pick(v, kAll, 0).has_value());
    v[1].state = RailState::Degraded;
    auto p = sel.pick(v, kAll, 0);
    cr_assert(p.has_value());
    cr_expect_eq(*p, 1u);
}

// pick() finds rank()'s first in one pass (it runs per message fragment):
// the two agree on mixed states, nodes, loads, masks and cursors.
Test(device_selector, pick_is_the_first_of_rank) {
    DeviceSelector picker(params()), ranker(params());
    unsigned seed = 12345;
    auto next = [&seed](unsigned n) {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) % n;
    };
    for (int round = 0; round < 2000; ++round) {
        auto v = rails(1 + next(6));
        for (auto& r : v) {
            r.state = static_cast<RailState>(next(3));
            r.numa_node = static_cast<int>(next(3)) - 1;
            r.inflight_bytes = next(4) * 65536;
            r.answer_waiting = next(4) == 0;
        }
        const std::uint64_t mask = next(3) == 0 ? (next(64) | 1) : kAll;
        const int node = static_cast<int>(next(3)) - 1;
        auto ranked = ranker.rank(v, mask, node);
        auto picked = picker.pick(v, mask, node);
        if (ranked.empty() || v[ranked.front()].state == RailState::Paused) {
            cr_assert(!picked, "round %d: picked a rail where rank() offers none usable", round);
            continue;
        }
        cr_assert(picked.has_value(), "round %d", round);
        cr_assert_eq(*picked, ranked.front(), "round %d: pick %zu, rank's first %zu", round, *picked, ranked.front());
        (void)ranker.pick(v, mask, node);  // both cursors move alike
    }
}

Test(bandwidth_estimate, ewma_update_weights_and_clamps) {
    BandwidthParams p;
    p.alpha = 0.25;
    p.min_bw = 100;
    p.max_bw = 10000;
    cr_expect_float_eq(ewma_update(0, 2000, p), 2000, 1e-9, "first sample becomes the estimate");
    cr_expect_float_eq(ewma_update(2000, 1000, p), 0.25 * 1000 + 0.75 * 2000, 1e-9);
    cr_expect_float_eq(ewma_update(2000, 1e9, p), 0.25 * 10000 + 0.75 * 2000, 1e-9, "sample clamped first");
    cr_expect_float_eq(ewma_update(0, 1, p), 100, 1e-9);
    cr_expect_float_eq(ewma_update(10000, 1e9, p), 10000, 1e-9);
    cr_expect_float_eq(effective_bandwidth(0, p), 10000, 1e-9, "unmeasured counts as max");
    cr_expect_float_eq(effective_bandwidth(5, p), 100, 1e-9);
    cr_expect_float_eq(effective_bandwidth(5e6, p), 10000, 1e-9);
    cr_expect_float_eq(effective_bandwidth(500, p), 500, 1e-9);
}

Test(bandwidth_estimate, ewma_converges_to_a_steady_rate) {
    BandwidthParams p;
    p.alpha = 0.2;
    p.min_bw = 1;
    p.max_bw = 1e12;
    double e = 1e9;
    for (int i = 0; i < 100; ++i) e = ewma_update(e, 3e9, p);
    cr_expect(std::fabs(e - 3e9) < 1e3, "estimate %f", e);
}

Test(device_selector, params_from_config_defaults) {
    Config c;
    auto p = DeviceSelectorParams::from_config(c);
    cr_expect_float_eq(p.bandwidth.alpha, 0.2, 1e-12);
    cr_expect_float_eq(p.bandwidth.min_bw, 10.0 * 1024 * 1024, 1e-3);
    cr_expect_float_eq(p.bandwidth.max_bw, 100.0 * 1024 * 1024 * 1024, 1e-3);
    cr_expect_eq(p.striping_min_chunk, 64u * 1024);
    cr_assert(c.set(Knob::EwmaMinBw, "1G", Source{}).is_ok());
    cr_assert(c.set(Knob::EwmaMaxBw, "1M", Source{}).is_ok());
    auto swapped = BandwidthParams::from_config(c);
    cr_expect(swapped.min_bw < swapped.max_bw, "inverted clamps are put back in order");
}

Test(striping, shares_are_proportional_to_bandwidth) {
    auto v = rails(3);
    v[0].ewma_bw = 1 * kGB;
    v[1].ewma_bw = 2 * kGB;
    v[2].ewma_bw = 1 * kGB;
    DeviceSelector sel(params());
    const std::uint64_t len = 4 << 20;
    auto s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 3u);
    cr_expect_eq(covered(s), len);
    // Rank order: equal load (0), so round-robin order 0, 1, 2.
    cr_expect_eq(s[0].rail, 0u);
    cr_expect_eq(s[1].rail, 1u);
    cr_expect_eq(s[2].rail, 2u);
    cr_expect_eq(s[0].length, 1u << 20);
    cr_expect_eq(s[1].length, 2u << 20);
    cr_expect_eq(s[2].length, 1u << 20);
}

Test(striping, backlog_is_balanced_to_equal_finish_time) {
    auto v = rails(3);
    v[0].ewma_bw = 1 * kGB;
    v[0].inflight_bytes = 1 << 20;
    v[1].ewma_bw = 3 * kGB;
    v[2].ewma_bw = 2 * kGB;
    v[2].inflight_bytes = 3 << 20;
    DeviceSelector sel(params());
    const std::uint64_t len = 24 << 20;
    auto s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 3u);
    cr_expect_eq(covered(s), len);
    double finish = -1;
    for (const auto& sh : s) {
        double t = static_cast<double>(v[sh.rail].inflight_bytes + sh.length) / v[sh.rail].ewma_bw;
        if (finish < 0) finish = t;
        // Within a few bytes' time of each other.
        cr_expect(std::fabs(t - finish) < 4.0 / kGB, "rail %zu finishes at %.9f, others at %.9f", sh.rail, t,
                  finish);
    }
}

Test(striping, a_rail_busy_past_the_finish_time_gets_nothing) {
    auto v = rails(2);
    v[0].inflight_bytes = 1ULL << 30;
    DeviceSelector sel(params());
    auto s = sel.stripe(v, kAll, 0, 1 << 20);
    cr_assert_eq(s.size(), 1u);
    cr_expect_eq(s[0].rail, 1u);
    cr_expect_eq(s[0].length, 1u << 20);
}

Test(striping, min_chunk_keeps_small_transfers_whole) {
    auto v = rails(2);
    DeviceSelector sel(params());
    auto whole = sel.stripe(v, kAll, 0, 100 * 1024);  // halves would be 50K < 64K
    cr_assert_eq(whole.size(), 1u);
    cr_expect_eq(whole[0].length, 100u * 1024);
    auto next = sel.stripe(v, kAll, 0, 100 * 1024);
    cr_assert_eq(next.size(), 1u);
    cr_expect_neq(next[0].rail, whole[0].rail, "unsplit transfers rotate like pick()");
    auto split = sel.stripe(v, kAll, 0, 128 * 1024);
    cr_assert_eq(split.size(), 2u);
    cr_expect_eq(split[0].length, 64u * 1024);
    cr_expect_eq(split[1].length, 64u * 1024);
    // Three rails, one much slower: its share would be under the chunk, so it is dropped.
    auto three = rails(3);
    three[2].ewma_bw = 0.01 * kGB;
    auto s3 = sel.stripe(three, kAll, 0, 1 << 20);
    cr_assert_eq(s3.size(), 2u);
    for (const auto& sh : s3) cr_expect_neq(sh.rail, 2u);
    cr_expect_eq(covered(s3), 1u << 20);
}

Test(striping, uses_best_health_class_and_mask_only) {
    auto v = rails(4);
    v[0].state = RailState::Degraded;
    v[1].state = RailState::Paused;
    DeviceSelector sel(params());
    auto s = sel.stripe(v, kAll, 0, 8 << 20);
    cr_assert_eq(s.size(), 2u);
    for (const auto& sh : s) cr_expect(sh.rail == 2 || sh.rail == 3);
    auto masked = sel.stripe(v, 0x1 | 0x2 | 0x4, 0, 8 << 20);
    cr_assert_eq(masked.size(), 1u);
    cr_expect_eq(masked[0].rail, 2u);
    v[2].state = v[3].state = RailState::Degraded;
    auto degraded = sel.stripe(v, kAll, 0, 8 << 20);
    cr_expect_eq(degraded.size(), 3u, "with no healthy rail, the degraded ones carry traffic");
    cr_expect_eq(covered(degraded), 8u << 20);
    for (auto& r : v) r.state = RailState::Paused;
    cr_expect(sel.stripe(v, kAll, 0, 8 << 20).empty());
    cr_expect(sel.stripe(rails(2), kAll, 0, 0).empty());
    cr_expect(sel.stripe(rails(2), 0, 0, 1 << 20).empty());
}

Test(striping, odd_lengths_are_covered_exactly) {
    auto v = rails(3);
    v[0].ewma_bw = 1.3 * kGB;
    v[1].ewma_bw = 2.7 * kGB;
    v[2].ewma_bw = 0.9 * kGB;
    DeviceSelector sel(params());
    for (std::uint64_t len : {1000003ULL, (1ULL << 30) + 7, 777777777ULL}) {
        auto s = sel.stripe(v, kAll, 0, len);
        cr_assert_eq(s.size(), 3u);
        cr_expect_eq(covered(s), len);
        // Within one byte of the proportional share (plus the rounding leftover).
        double total_bw = 4.9 * kGB;
        for (const auto& sh : s) {
            double ideal = static_cast<double>(len) * v[sh.rail].ewma_bw / total_bw;
            cr_expect(std::fabs(static_cast<double>(sh.length) - ideal) < 4.0, "rail %zu: %lu vs %f", sh.rail,
                      static_cast<unsigned long>(sh.length), ideal);
        }
    }
}

// TCP rails (thread_moved) with known link speeds: split by the speeds,
// whatever their delivery samples say (device_selector.h says why).
Test(striping, tcp_rails_of_equal_links_get_equal_shares_whatever_their_estimates) {
    auto v = rails(2);
    v[0].ewma_bw = 3 * kGB;  // the drift the samples show: 3 to 1
    v[1].ewma_bw = 1 * kGB;
    for (auto& r : v) {
        r.thread_moved = true;
        r.link_rate = 10e9 / 8;
    }
    DeviceSelector sel(params());
    const std::uint64_t len = 1 << 20;
    auto s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 2u);
    cr_expect_eq(covered(s), len);
    cr_expect_eq(s[0].length, len / 2);
    cr_expect_eq(s[1].length, len / 2);
    // Their backlogs still count, at the bandwidth the pair was measured to
    // have together (4 GB/s: 2 each): 1 MiB queued on rail 0 is 1 MiB less.
    v[0].inflight_bytes = 1 << 20;
    s = sel.stripe(v, kAll, 0, 4 << 20);
    cr_assert_eq(s.size(), 2u);
    for (const auto& sh : s)
        cr_expect_eq(sh.length, sh.rail == 0 ? (3u << 19) : (5u << 19), "rail %zu got %lu", sh.rail,
                     static_cast<unsigned long>(sh.length));
}

Test(striping, tcp_rails_of_unequal_links_split_by_link_speed) {
    auto v = rails(2);
    v[0].ewma_bw = 1 * kGB;  // measured alike: the thread's limit, not the links'
    v[1].ewma_bw = 1 * kGB;
    v[0].thread_moved = v[1].thread_moved = true;
    v[0].link_rate = 1e9 / 8;   // 1 Gbit/s
    v[1].link_rate = 10e9 / 8;  // 10 Gbit/s
    DeviceSelector sel(params());
    const std::uint64_t len = 11 << 20;
    auto s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 2u);
    cr_expect_eq(covered(s), len);
    for (const auto& sh : s)
        cr_expect(std::llabs(static_cast<long long>(sh.length) - (sh.rail == 0 ? 1LL << 20 : 10LL << 20)) < 4,
                  "rail %zu got %lu", sh.rail, static_cast<unsigned long>(sh.length));
    // Unmeasured rails (max_bw each) keep the proportions below the clamp.
    v[0].ewma_bw = v[1].ewma_bw = 0;
    s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 2u);
    for (const auto& sh : s)
        cr_expect(std::llabs(static_cast<long long>(sh.length) - (sh.rail == 0 ? 1LL << 20 : 10LL << 20)) < 4,
                  "unmeasured: rail %zu got %lu", sh.rail, static_cast<unsigned long>(sh.length));
}

Test(striping, estimates_stand_without_every_link_speed_or_for_hcas) {
    const std::uint64_t len = 4 << 20;
    DeviceSelector sel(params());
    // One TCP rail's link speed unknown (loopback): the estimates, 3 to 1.
    auto v = rails(2);
    v[0].ewma_bw = 3 * kGB;
    v[1].ewma_bw = 1 * kGB;
    v[0].thread_moved = v[1].thread_moved = true;
    v[0].link_rate = 10e9 / 8;
    auto s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 2u);
    for (const auto& sh : s) cr_expect_eq(sh.length, sh.rail == 0 ? (3u << 20) : (1u << 20));
    // HCAs (not thread-moved) with link rates: the estimates too.
    v[0].thread_moved = v[1].thread_moved = false;
    v[1].link_rate = 10e9 / 8;
    s = sel.stripe(v, kAll, 0, len);
    cr_assert_eq(s.size(), 2u);
    for (const auto& sh : s) cr_expect_eq(sh.length, sh.rail == 0 ? (3u << 20) : (1u << 20));
    // An HCA beside two TCP rails of equal links: the TCP pair splits its
    // summed estimate (2 + 2 GB/s) evenly, the HCA keeps its own (4 GB/s).
    auto w = rails(3);
    w[0].ewma_bw = 4 * kGB;
    w[1].ewma_bw = 3 * kGB;
    w[2].ewma_bw = 1 * kGB;
    w[1].thread_moved = w[2].thread_moved = true;
    w[1].link_rate = w[2].link_rate = 25e9 / 8;
    s = sel.stripe(w, kAll, 0, len);
    cr_assert_eq(s.size(), 3u);
    cr_expect_eq(covered(s), len);
    for (const auto& sh : s) cr_expect_eq(sh.length, sh.rail == 0 ? (2u << 20) : (1u << 20), "rail %zu", sh.rail);
}
