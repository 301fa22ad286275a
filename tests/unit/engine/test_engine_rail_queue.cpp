// The rail queue in the engine (policy/rail_queue.h): a rail has at most
// rail_queue_bytes posted, the rest of its pieces wait in the engine in
// order, and a striped write's final piece is never among them; a piece
// whose buffer is deregistered while it waits is never posted; the pieces
// one turn releases reach the rail together (one sendmsg on TCP). Loopback
// rails stalled on purpose, then allowed a counted number of completions,
// make every step deterministic; every byte is checked.
#include <criterion/criterion.h>

#include <algorithm>

#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::size_t kWriteSize = 1u << 20;
constexpr int kWrites = 8;

Config queue_config(const char* bytes) {
    Config c = loopback_config();
    (void)c.set(Knob::ChunkSize, "256K", api_source());
    (void)c.set(Knob::RailQueueBytes, bytes, api_source());
    // Stalled on purpose, not failed.
    (void)c.set(Knob::RailSilenceMinMs, "60000", api_source());
    // Rails of one speed, measured or not: how the writes divide between
    // them does not depend on which completed first when a write is planned.
    (void)c.set(Knob::EwmaMinBw, "1G", api_source());
    (void)c.set(Knob::EwmaMaxBw, "1G", api_source());
    return c;
}

struct Buffers {
    std::vector<std::uint8_t> src, dst;
    std::vector<std::uint8_t> key;
    std::uint64_t remote = 0;
    std::vector<std::shared_ptr<const Registration>> registrations;  // kept for the test's length
};

// Rail statistics are published by turns of progress: none before the first.
std::uint64_t rail_inflight(Engine& e, std::size_t rail) {
    const auto stats = e.rail_stats();
    return rail < stats.size() ? stats[rail].inflight_bytes : 0;
}
std::uint64_t rail_ops(Engine& e, std::size_t rail) {
    const auto stats = e.rail_stats();
    return rail < stats.size() ? stats[rail].ops : 0;
}

// Waits (bounded) until pred() holds; false if it never did.
template <typename Pred>
bool eventually(Pred pred) {
    for (int i = 0; i < 2000; ++i) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pred();
}

// Stalls the pair's first `rails` rails, then posts the writes.
void stall_and_post(EnginePair& p, std::size_t rails, Buffers& b) {
    cr_assert(p.a && p.b && p.a_to_b);
    for (std::size_t r = 0; r < rails; ++r) p.fabric->set_stalled(static_cast<std::uint16_t>(r), true);
    const std::size_t size = kWrites * kWriteSize;
    b.src.assign(size, 0);
    b.dst.assign(size, 0);
    fill(b.src, 11);
    auto rs = p.a->register_memory(b.src.data(), size, wire::kAccessAll);
    auto rd = p.b->register_memory(b.dst.data(), size, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    b.key = handle_bytes(**rd);
    b.remote = reinterpret_cast<std::uint64_t>(b.dst.data());
    b.registrations.push_back(std::move(*rs));
    b.registrations.push_back(std::move(*rd));
    // The interposer's level: high priority, which the QoS window never holds.
    for (int i = 0; i < kWrites; ++i)
        cr_assert(p.a->post_write(p.a_to_b, b.src.data() + i * kWriteSize, kWriteSize, b.key,
                                  b.remote + i * kWriteSize, with_cookie(i, Priority::High))
                      .is_ok());
}

void finish(EnginePair& p, Buffers& b, std::size_t rails, std::size_t done_already) {
    for (std::size_t r = 0; r < rails; ++r) p.fabric->set_stalled(static_cast<std::uint16_t>(r), false);
    auto done = wait_completions(*p.a, kWrites - done_already, std::chrono::seconds(20));
    cr_assert_eq(done.size(), kWrites - done_already);
    for (const auto& c : done) cr_expect(c.status.is_ok(), "%s", c.status.to_string().c_str());
    cr_expect(b.dst == b.src, "every byte of every write");
}

} // namespace

Test(engine_rail_queue, a_rail_has_at_most_the_bound_posted) {
    EnginePair p(1, {0}, queue_config("512K"));
    Buffers b;
    stall_and_post(p, 1, b);
    cr_assert(eventually([&] { return rail_inflight(*p.a, 0) >= 512 * 1024; }), "the first pieces are posted");
    // Turns go on while the rail completes nothing: the others keep waiting.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cr_expect_eq(rail_inflight(*p.a, 0), 512u * 1024, "two pieces of 256 KiB posted, %llu bytes",
                 static_cast<unsigned long long>(rail_inflight(*p.a, 0)));
    finish(p, b, 1, 0);
}

// Two pieces complete in one turn, and the pieces the rail queue then lets
// go (two or three: it admits a piece while less than its bound is in
// flight) are posted between one begin_posts() and end_posts(): one group,
// not one per piece.
Test(engine_rail_queue, pieces_released_together_are_posted_together) {
    EnginePair p(1, {0}, queue_config("512K"));
    Buffers b;
    stall_and_post(p, 1, b);
    cr_assert(eventually([&] { return rail_inflight(*p.a, 0) >= 512 * 1024; }), "the first pieces are posted");
    const LoopbackFabric::PostCount before = p.fabric->posts(0);
    p.fabric->allow({0}, 2);
    cr_assert(eventually([&] { return p.fabric->posts(0).posts >= before.posts + 2; }),
              "no pieces released after two completed");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // nothing more may follow
    const LoopbackFabric::PostCount after = p.fabric->posts(0);
    cr_expect_eq(after.groups, before.groups + 1, "the %llu released pieces went in %llu groups",
                 static_cast<unsigned long long>(after.posts - before.posts),
                 static_cast<unsigned long long>(after.groups - before.groups));
    finish(p, b, 1, 0);
}

Test(engine_rail_queue, no_bound_posts_everything) {
    EnginePair p(1, {0}, queue_config("0"));
    Buffers b;
    stall_and_post(p, 1, b);
    // Every piece but each write's final 4 KiB, which waits for the rest of its write.
    const std::uint64_t all = kWrites * (kWriteSize - 4096);
    cr_expect(eventually([&] { return rail_inflight(*p.a, 0) == all; }), "%llu bytes posted, want %llu",
              static_cast<unsigned long long>(rail_inflight(*p.a, 0)), static_cast<unsigned long long>(all));
    finish(p, b, 1, 0);
}

Test(engine_rail_queue, a_striped_writes_final_piece_does_not_wait_behind_later_writes) {
    // Two rails, one piece posted on each at a time; eight writes of
    // 1 MiB, each two pieces a rail and a final 4 KiB. Each rail then
    // completes six operations: the first write's two pieces, and behind
    // them a piece or two of the next write before the first write's
    // final piece (a turn of progress may take one rail further than the
    // other). Had that piece waited in the engine like the others, it
    // would come after every piece of the later writes on its rail, the
    // seventeenth.
    EnginePair p(2, {0}, queue_config("256K"));
    Buffers b;
    stall_and_post(p, 2, b);
    cr_assert(eventually([&] { return rail_inflight(*p.a, 0) > 0 && rail_inflight(*p.a, 1) > 0; }));
    p.fabric->allow({0, 1}, 6);
    cr_assert(eventually([&] { return rail_ops(*p.a, 0) == 6 && rail_ops(*p.a, 1) == 6; }),
              "each rail completed its six operations (%llu, %llu)",
              static_cast<unsigned long long>(rail_ops(*p.a, 0)), static_cast<unsigned long long>(rail_ops(*p.a, 1)));
    auto first = wait_completions(*p.a, 1, std::chrono::seconds(2));
    cr_assert_eq(first.size(), 1u, "the first write completed with the rails stalled again");
    cr_expect_eq(first[0].cookie, 0u);
    cr_expect(first[0].status.is_ok(), "%s", first[0].status.to_string().c_str());
    cr_expect(std::equal(b.src.begin(), b.src.begin() + kWriteSize, b.dst.begin()), "every byte of the first write");
    finish(p, b, 2, 1);
}

Test(engine_rail_queue, a_waiting_piece_is_not_posted_once_its_buffer_is_deregistered) {
    // A program that tears down with work outstanding: the region goes
    // while most of a 1 MiB write still waits for the stalled rail.
    EnginePair p(1, {0}, queue_config("256K"));
    cr_assert(p.a && p.b && p.a_to_b);
    p.fabric->set_stalled(0, true);
    std::vector<std::uint8_t> src(kWriteSize), dst(kWriteSize, 0);
    fill(src, 12);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    cr_assert(p.a->post_write(p.a_to_b, src.data(), kWriteSize, handle_bytes(**rd),
                              reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(7, Priority::High))
                  .is_ok());
    cr_assert(eventually([&] { return rail_inflight(*p.a, 0) == 256 * 1024; }), "the first piece is posted");
    cr_assert(p.a->deregister_memory((*rs)->id).is_ok());
    p.fabric->set_stalled(0, false);
    auto done = wait_completions(*p.a, 1, std::chrono::seconds(10));
    cr_assert_eq(done.size(), 1u);
    cr_expect_eq(done[0].status.code(), Code::InvalidArgument, "%s", done[0].status.to_string().c_str());
    cr_expect(done[0].status.message().find("deregistered") != std::string::npos, "%s",
              done[0].status.to_string().c_str());
    // The piece posted before carried its bytes; no other byte left.
    cr_expect(std::equal(src.begin(), src.begin() + 256 * 1024, dst.begin()), "the posted piece landed");
    cr_expect(std::all_of(dst.begin() + 256 * 1024, dst.end(), [](std::uint8_t b) { return b == 0; }),
              "nothing of the pieces that waited");
    for (const auto& s : p.a->rail_stats()) cr_expect_eq(s.errors, 0u, "%s is not to blame", s.name.c_str());
}
