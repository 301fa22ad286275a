// Reads over TCP rails go in pieces of at most TcpRail::kReadPiece (the
// target copies a read's data before sending it: short pieces let one be on
// the wire while the next is copied), whatever chunk_size allows; writes
// keep chunk_size. Every byte read and written is checked.
#include <criterion/criterion.h>

#include <cstdint>
#include <vector>

#include "../../support/tcp_engine_pair.h"
#include "engine_pair.h"
#include "transport/tcp/tcp_rail.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::size_t kLength = 1 << 20;

std::uint64_t ops_of(Engine& e) { return rail_total(e, &RailStats::ops); }

std::uint8_t pattern(std::size_t i, unsigned seed) { return static_cast<std::uint8_t>((i * 131 + seed * 7 + (i >> 9)) & 0xff); }

} // namespace

Test(tcp_read_pieces, a_read_goes_in_short_pieces_and_a_write_in_chunks, .timeout = 60) {
    Config config = tcp_pair_config();
    (void)config.set(Knob::ChunkSize, "1M", api_source());
    TcpPair p(config);
    std::vector<std::uint8_t> remote(kLength), local(kLength);
    for (std::size_t i = 0; i < kLength; ++i) remote[i] = pattern(i, 1);
    auto rr = p.b->register_memory(remote.data(), kLength, wire::kAccessAll);
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rr.is_ok() && rl.is_ok());
    const auto key = handle_bytes(**rr);
    const auto addr = reinterpret_cast<std::uint64_t>(remote.data());

    const std::uint64_t before_read = ops_of(*p.a);
    cr_assert(p.a->post_read(p.peer, local.data(), kLength, key, addr, with_cookie(1)).is_ok());
    auto c = wait_completions(*p.a, 1);
    cr_assert(c.size() == 1 && c[0].status.is_ok(), "read: %s", c.empty() ? "no completion" : c[0].status.to_string().c_str());
    for (std::size_t i = 0; i < kLength; ++i)
        if (local[i] != pattern(i, 1)) cr_assert_fail("read: byte %zu is %u, not %u", i, local[i], pattern(i, 1));
    const std::uint64_t read_ops = ops_of(*p.a) - before_read;
    cr_expect_geq(read_ops, kLength / tcp::TcpRail::kReadPiece, "a 1 MiB read went in %llu rail operations",
                  static_cast<unsigned long long>(read_ops));

    for (std::size_t i = 0; i < kLength; ++i) local[i] = pattern(i, 2);
    const std::uint64_t before_write = ops_of(*p.a);
    cr_assert(p.a->post_write(p.peer, local.data(), kLength, key, addr, with_cookie(2)).is_ok());
    c = wait_completions(*p.a, 1);
    cr_assert(c.size() == 1 && c[0].status.is_ok(), "write: %s", c.empty() ? "no completion" : c[0].status.to_string().c_str());
    for (std::size_t i = 0; i < kLength; ++i)
        if (remote[i] != pattern(i, 2)) cr_assert_fail("write: byte %zu is %u, not %u", i, remote[i], pattern(i, 2));
    const std::uint64_t write_ops = ops_of(*p.a) - before_write;
    // Two stripes and the final bytes on their own (chunk_plan.cpp).
    cr_expect_leq(write_ops, 4u, "a 1 MiB write went in %llu rail operations", static_cast<unsigned long long>(write_ops));
}
