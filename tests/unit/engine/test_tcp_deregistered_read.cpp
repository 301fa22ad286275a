// A program that deregisters a read's buffer while the read is in flight
// over TCP rails (perftest does at the end of a run) may free or reuse that
// memory at once: the data still on its way must not land there. An HCA
// refuses it once the MR is gone; a TCP rail looks the local registration
// up again before it places a read's data. The request fails, the rails are
// not blamed and carry the next read, every byte checked.
#include <criterion/criterion.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../support/tcp_engine_pair.h"
#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::size_t kLength = 32u << 20;  // many pieces, most still on the wire when deregistered

} // namespace

Test(tcp_deregistered_read, data_of_a_read_whose_buffer_was_deregistered_never_lands, .timeout = 60) {
    TcpPair p(tcp_pair_config());
    std::vector<std::uint8_t> remote(kLength), local(kLength, 0), reused(kLength);
    fill(remote, 1);
    fill(reused, 3);
    auto rr = p.b->register_memory(remote.data(), kLength, wire::kAccessAll);
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rr.is_ok() && rl.is_ok());
    const auto key = handle_bytes(**rr);
    const auto addr = reinterpret_cast<std::uint64_t>(remote.data());

    cr_assert(p.a->post_read(p.peer, local.data(), kLength, key, addr, with_cookie(1)).is_ok());
    cr_assert(p.a->deregister_memory((*rl)->id).is_ok());
    // The program reuses its memory at once.
    std::copy(reused.begin(), reused.end(), local.begin());  // in place: the same memory
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert_eq(c.size(), 1u, "the read never completed");
    cr_expect_eq(c[0].status.code(), Code::InvalidArgument, "read: %s", c[0].status.to_string().c_str());
    std::size_t overwritten = 0;
    for (std::size_t i = 0; i < kLength; ++i) overwritten += local[i] != reused[i];
    cr_expect_eq(overwritten, 0u, "%zu bytes of the read landed after its buffer was deregistered", overwritten);
    for (const auto& s : p.a->rail_stats()) {
        cr_expect(s.state == RailState::Healthy, "%s is not healthy after the program's deregistration", s.name.c_str());
        cr_expect_eq(s.errors, 0u, "%s counted an error for the program's deregistration", s.name.c_str());
    }

    // The rails carry the next read, every byte of it.
    rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rl.is_ok());
    cr_assert(p.a->post_read(p.peer, local.data(), kLength, key, addr, with_cookie(2)).is_ok());
    c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert(c.size() == 1 && c[0].status.is_ok(), "read: %s", c.empty() ? "no completion" : c[0].status.to_string().c_str());
    for (std::size_t i = 0; i < kLength; ++i)
        if (local[i] != remote[i]) cr_assert_fail("read: byte %zu is %u, not %u", i, local[i], remote[i]);
}
