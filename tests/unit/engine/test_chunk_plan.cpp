// plan_chunks: small transfers go whole to one rail, large ones are striped
// over every usable rail in pieces no larger than chunk_size, of one size
// on each rail and posted rail by rail in turns; the plan covers the
// transfer exactly, and the chunk ending the transfer comes last.
#include <criterion/criterion.h>

#include <algorithm>
#include <set>

#include "engine/chunk_plan.h"

using namespace tent;

namespace {

DeviceSelector selector() {
    DeviceSelectorParams p;
    p.striping_min_chunk = 64 * 1024;
    return DeviceSelector(p);
}

void expect_exact_cover(const std::vector<PlannedChunk>& plan, std::uint64_t length) {
    auto sorted = plan;
    std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    std::uint64_t at = 0;
    for (auto& c : sorted) {
        cr_expect_eq(c.offset, at, "gap or overlap at %llu", (unsigned long long)at);
        at = c.offset + c.length;
    }
    cr_expect_eq(at, length);
    cr_assert(!plan.empty());
    cr_expect_eq(plan.back().offset + plan.back().length, length, "last chunk must end the transfer");
}

} // namespace

Test(chunk_plan, small_transfer_one_rail) {
    auto sel = selector();
    std::vector<RailView> rails{{0}, {1}, {2}};
    std::vector<std::uint64_t> max_op{1 << 20, 1 << 20, 1 << 20};
    auto plan = plan_chunks(sel, rails, max_op, 1000, {256 * 1024, 1 << 20, -1, 0});
    cr_assert_eq(plan.size(), 1u);
    cr_expect_eq(plan[0].length, 1000u);
}

Test(chunk_plan, large_transfer_striped_over_all_rails) {
    auto sel = selector();
    std::vector<RailView> rails{{0}, {1}, {2}, {3}};
    std::vector<std::uint64_t> max_op(4, 1 << 20);
    const std::uint64_t len = 16u << 20;
    auto plan = plan_chunks(sel, rails, max_op, len, {256 * 1024, 1 << 20, -1, 0});
    expect_exact_cover(plan, len);
    std::set<std::size_t> used;
    for (auto& c : plan) {
        used.insert(c.rail);
        cr_expect_leq(c.length, 1u << 20);
    }
    cr_expect_eq(used.size(), 4u);
}

Test(chunk_plan, paused_rail_gets_nothing_and_max_op_length_caps_pieces) {
    auto sel = selector();
    std::vector<RailView> rails{{0}, {1, RailState::Paused}};
    std::vector<std::uint64_t> max_op{4096, 1 << 20};
    const std::uint64_t len = 1u << 20;
    auto plan = plan_chunks(sel, rails, max_op, len, {0, 1 << 20, -1, 0});
    expect_exact_cover(plan, len);
    for (auto& c : plan) {
        cr_expect_eq(c.rail, 0u);
        cr_expect_leq(c.length, 4096u);
    }
}

Test(chunk_plan, no_usable_rail_is_empty) {
    auto sel = selector();
    std::vector<RailView> rails{{0, RailState::Paused}};
    std::vector<std::uint64_t> max_op{1 << 20};
    cr_expect(plan_chunks(sel, rails, max_op, 100, {}).empty());
    cr_expect(plan_chunks(sel, {}, {}, 100, {}).empty());
}

Test(chunk_plan, zero_length_is_one_empty_chunk) {
    auto sel = selector();
    std::vector<RailView> rails{{0}};
    std::vector<std::uint64_t> max_op{1 << 20};
    auto plan = plan_chunks(sel, rails, max_op, 0, {});
    cr_assert_eq(plan.size(), 1u);
    cr_expect_eq(plan[0].length, 0u);
}

Test(chunk_plan, striped_write_ends_with_a_small_final_piece) {
    // The engine holds a write's final piece until all others completed:
    // a whole chunk held back would leave the other rails idle meanwhile.
    auto sel = selector();
    std::vector<RailView> rails{{0}, {1}};
    std::vector<std::uint64_t> max_op(2, 1 << 20);
    const std::uint64_t len = 8u << 20;
    auto plan = plan_chunks(sel, rails, max_op, len, {256 * 1024, 1 << 20, -1, 0, true});
    expect_exact_cover(plan, len);
    cr_assert_gt(plan.size(), 2u);
    cr_expect_eq(plan.back().length, kFinalPieceBytes);
    cr_expect_eq(plan.back().offset, len - kFinalPieceBytes);
    // A read keeps no order: the piece that ends it is a whole one, and
    // the plan one piece shorter.
    auto read = plan_chunks(sel, rails, max_op, len, {256 * 1024, 1 << 20, -1, 0, false});
    expect_exact_cover(read, len);
    cr_expect_eq(read.size(), plan.size() - 1);
    cr_expect_eq(read.back().offset + read.back().length, len);
    cr_expect_gt(read.back().length, kFinalPieceBytes);
    // Short transfers are not cut for it.
    auto whole = plan_chunks(sel, rails, max_op, 100 * 1024, {256 * 1024, 1 << 20, -1, 0, true});
    cr_assert_eq(whole.size(), 1u);
    cr_expect_eq(whole[0].length, 100u * 1024);
}

Test(chunk_plan, a_share_is_cut_evenly_and_the_rails_take_turns) {
    auto sel = selector();
    std::vector<RailView> rails{{0}, {1}};
    std::vector<std::uint64_t> max_op(2, 1 << 20);
    // 8.5 MiB over two rails: 4.25 MiB each, which whole pieces of 1 MiB
    // would cut into four and a remainder of 256 KiB.
    const std::uint64_t len = (8u << 20) + (512u << 10);
    auto plan = plan_chunks(sel, rails, max_op, len, {256 * 1024, 1 << 20, -1, 0});
    expect_exact_cover(plan, len);
    // Every rail's pieces (the transfer's final piece aside) are of about
    // one size: none under half of the rail's largest.
    for (std::size_t rail = 0; rail < rails.size(); ++rail) {
        std::uint64_t largest = 0, smallest = ~std::uint64_t{0};
        for (std::size_t i = 0; i + 1 < plan.size(); ++i)
            if (plan[i].rail == rail) {
                largest = std::max(largest, plan[i].length);
                smallest = std::min(smallest, plan[i].length);
            }
        cr_assert_gt(largest, 0u, "rail %zu got nothing", rail);
        cr_expect_leq(largest, 1u << 20);
        cr_expect_geq(2 * smallest, largest, "rail %zu: a piece of %llu beside one of %llu", rail,
                      (unsigned long long)smallest, (unsigned long long)largest);
    }
    // Posted in turns: the rails alternate, so that both start at once.
    for (std::size_t i = 0; i + 2 < plan.size(); ++i)
        cr_expect_neq(plan[i].rail, plan[i + 1].rail, "pieces %zu and %zu go to the same rail", i, i + 1);
}
