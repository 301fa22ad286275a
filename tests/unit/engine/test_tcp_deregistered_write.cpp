// A program that deregisters a write's buffer while the write is in flight
// over TCP rails may unmap or reuse that memory at once. A TCP rail that
// already queued the write's frame has promised its bytes to the peer: it
// looks the registration up again before it hands the bytes to the kernel
// and sends zeros instead once it is gone (a write that fails on an HCA
// leaves its target range undefined too). The program's new bytes never
// reach the target, the rail is not blamed (no error, no sendmsg EFAULT),
// and the rails carry the next write, every byte checked.
#include <criterion/criterion.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../support/tcp_engine_pair.h"
#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::size_t kLength = 32u << 20;  // many pieces, some queued on the rails when deregistered

void expect_rails_unblamed(Engine& e) {
    for (const auto& s : e.rail_stats()) {
        cr_expect(s.state == RailState::Healthy, "%s is not healthy after the program's deregistration", s.name.c_str());
        cr_expect_eq(s.errors, 0u, "%s counted an error for the program's deregistration", s.name.c_str());
    }
}

// The rails carry a whole write from SRC, every byte checked at the target.
void expect_next_write_whole(TcpPair& p, std::vector<std::uint8_t>& src, std::vector<std::uint8_t>& target,
                             const std::vector<std::uint8_t>& key) {
    auto r = p.a->register_memory(src.data(), kLength, wire::kAccessAll);
    cr_assert(r.is_ok());
    fill(src, 9);
    const auto addr = reinterpret_cast<std::uint64_t>(target.data());
    cr_assert(p.a->post_write(p.peer, src.data(), kLength, key, addr, with_cookie(2)).is_ok());
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert(c.size() == 1 && c[0].status.is_ok(), "write: %s",
              c.empty() ? "no completion" : c[0].status.to_string().c_str());
    for (std::size_t i = 0; i < kLength; ++i)
        if (target[i] != src[i]) cr_assert_fail("write: byte %zu is %u, not %u", i, target[i], src[i]);
}

} // namespace

Test(tcp_deregistered_write, bytes_the_program_wrote_after_deregistering_never_reach_the_target, .timeout = 60) {
    TcpPair p(tcp_pair_small_socket_config());
    std::vector<std::uint8_t> target(kLength), before(kLength), local(kLength), sent(kLength), reused(kLength);
    fill(before, 2);
    target = before;
    fill(sent, 1);
    fill(reused, 3);
    local = sent;
    auto rt = p.b->register_memory(target.data(), kLength, wire::kAccessAll);
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rt.is_ok() && rl.is_ok());
    const auto key = handle_bytes(**rt);
    const auto addr = reinterpret_cast<std::uint64_t>(target.data());

    cr_assert(p.a->post_write(p.peer, local.data(), kLength, key, addr, with_cookie(1)).is_ok());
    cr_assert(p.a->deregister_memory((*rl)->id).is_ok());
    std::copy(reused.begin(), reused.end(), local.begin());  // the program reuses its memory at once
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert_eq(c.size(), 1u, "the write never completed");
    cr_expect_eq(c[0].status.code(), Code::InvalidArgument, "write: %s", c[0].status.to_string().c_str());
    // Each target byte is the write's, a zero, or untouched; a byte that
    // can only be the reused memory's is a leak.
    std::size_t leaked = 0;
    for (std::size_t i = 0; i < kLength; ++i)
        leaked += target[i] == reused[i] && reused[i] != sent[i] && reused[i] != before[i] && reused[i] != 0;
    cr_expect_eq(leaked, 0u, "%zu bytes the program wrote after deregistering reached the target", leaked);
    expect_rails_unblamed(*p.a);
    expect_next_write_whole(p, local, target, key);
}

Test(tcp_deregistered_write, a_buffer_unmapped_after_deregistering_fails_the_write_not_the_rails, .timeout = 60) {
    TcpPair p(tcp_pair_small_socket_config());
    std::vector<std::uint8_t> target(kLength, 0), local(kLength);
    void* mapped = mmap(nullptr, kLength, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(mapped != MAP_FAILED);
    std::memset(mapped, 0x5a, kLength);
    auto rt = p.b->register_memory(target.data(), kLength, wire::kAccessAll);
    auto rl = p.a->register_memory(mapped, kLength, wire::kAccessAll);
    cr_assert(rt.is_ok() && rl.is_ok());
    const auto key = handle_bytes(**rt);
    const auto addr = reinterpret_cast<std::uint64_t>(target.data());

    cr_assert(p.a->post_write(p.peer, mapped, kLength, key, addr, with_cookie(1)).is_ok());
    cr_assert(p.a->deregister_memory((*rl)->id).is_ok());
    cr_assert_eq(munmap(mapped, kLength), 0);  // sendmsg from here would fail with EFAULT
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert_eq(c.size(), 1u, "the write never completed");
    cr_expect_eq(c[0].status.code(), Code::InvalidArgument, "write: %s", c[0].status.to_string().c_str());
    expect_rails_unblamed(*p.a);
    expect_next_write_whole(p, local, target, key);
}
