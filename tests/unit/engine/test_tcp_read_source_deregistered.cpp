// A TCP rail answers a read with data sent straight from the target
// program's region, without a copy: a program that deregisters the region
// while its peer's read of it is still queued may unmap or reuse that
// memory at once. The rail looks the region up again before it hands bytes
// to the kernel and, once the region is gone, sends zeros for the rest and
// a Nack behind them: the read fails with a remote access error, as on an
// HCA whose MR went away under it. No byte the target program wrote after
// deregistering reaches the initiator, no sendmsg fails (EFAULT would close
// the target's rails), and the rails carry the next read, every byte
// checked.
#include <criterion/criterion.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "../../support/tcp_engine_pair.h"
#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::size_t kLength = 32u << 20;  // many pieces, most still queued at the target when it deregisters

// Until the first bytes of the read have landed in LOCAL (the target is
// answering, its rails' queues full): bounded, 10 s.
void wait_answering(const std::vector<std::uint8_t>& local, const std::vector<std::uint8_t>& remote) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
        bool arrived = true;
        for (std::size_t i = 0; i < 64 && arrived; ++i)
            arrived = __atomic_load_n(&local[i], __ATOMIC_RELAXED) == remote[i];
        if (arrived) return;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    cr_assert_fail("the target never started answering the read");
}

// The rails of SIDE are healthy and counted no error. The target's sent
// every answer without a sendmsg error (EFAULT from an unmapped region
// would have closed them). The reader's were refused (a Nack: the peer
// answered), which is the request's fault, not theirs: a TCP rail is not
// paused for it (an HCA's access error does take its QP down).
void expect_rails_unharmed(Engine& engine, const char* side) {
    for (const auto& s : engine.rail_stats()) {
        cr_expect(s.state == RailState::Healthy, "%s: %s is not healthy after the program's deregistration", side,
                  s.name.c_str());
        cr_expect_eq(s.errors, 0u, "%s: %s counted an error for the program's deregistration", side, s.name.c_str());
    }
}

// Registers REGION at the target and starts, from the initiator, a read of
// it into LOCAL (READ) or a write of LOCAL into it. Once the first bytes
// have landed, the target program deregisters REGION and at once reuses it
// (REUSED's bytes); returns the request's completion (bounded: 30 s).
EngineCompletion deregister_mid_transfer(TcpPair& p, bool read, std::vector<std::uint8_t>& region,
                                         std::vector<std::uint8_t>& local, const std::vector<std::uint8_t>& reused,
                                         std::uint64_t cookie) {
    auto rr = p.b->register_memory(region.data(), kLength, wire::kAccessAll);
    cr_assert(rr.is_ok());
    const auto key = handle_bytes(**rr);
    const auto addr = reinterpret_cast<std::uint64_t>(region.data());
    if (read) {
        cr_assert(p.a->post_read(p.peer, local.data(), kLength, key, addr, with_cookie(cookie)).is_ok());
        wait_answering(local, region);
    } else {
        cr_assert(p.a->post_write(p.peer, local.data(), kLength, key, addr, with_cookie(cookie)).is_ok());
        wait_answering(region, local);
    }
    cr_assert(p.b->deregister_memory((*rr)->id).is_ok());
    std::memcpy(region.data(), reused.data(), kLength);  // the target program reuses its memory at once
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert_eq(c.size(), 1u, "the %s never completed", read ? "read" : "write");
    return c[0];
}

// Bytes of LOCAL, read from a region that held ORIGINAL until it was
// reused with REUSED, that can only be the reused memory's: each byte read
// is the region's as it was, or a zero.
std::size_t reused_bytes_read(const std::vector<std::uint8_t>& local, const std::vector<std::uint8_t>& original,
                              const std::vector<std::uint8_t>& reused) {
    std::size_t leaked = 0;
    for (std::size_t i = 0; i < kLength; ++i)
        leaked += local[i] == reused[i] && reused[i] != original[i] && reused[i] != 0;
    return leaked;
}

// The rails carry a whole read from REMOTE into LOCAL, every byte checked.
void expect_next_read_whole(TcpPair& p, std::vector<std::uint8_t>& remote, std::vector<std::uint8_t>& local) {
    fill(remote, 9);
    std::fill(local.begin(), local.end(), 0);
    auto rr = p.b->register_memory(remote.data(), kLength, wire::kAccessAll);
    cr_assert(rr.is_ok());
    const auto key = handle_bytes(**rr);
    const auto addr = reinterpret_cast<std::uint64_t>(remote.data());
    cr_assert(p.a->post_read(p.peer, local.data(), kLength, key, addr, with_cookie(2)).is_ok());
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert(c.size() == 1 && c[0].status.is_ok(), "read: %s",
              c.empty() ? "no completion" : c[0].status.to_string().c_str());
    for (std::size_t i = 0; i < kLength; ++i)
        if (local[i] != remote[i]) cr_assert_fail("read: byte %zu is %u, not %u", i, local[i], remote[i]);
}

} // namespace

Test(tcp_read_source_deregistered, bytes_the_target_wrote_after_deregistering_never_reach_the_reader, .timeout = 60) {
    TcpPair p(tcp_pair_small_socket_config());
    std::vector<std::uint8_t> remote(kLength), original(kLength), reused(kLength), local(kLength, 0);
    fill(original, 1);
    fill(reused, 3);
    remote = original;
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rl.is_ok());
    const EngineCompletion c = deregister_mid_transfer(p, true, remote, local, reused, 1);
    cr_expect_eq(c.status.code(), Code::RemoteAccess, "read: %s", c.status.to_string().c_str());
    const std::size_t leaked = reused_bytes_read(local, original, reused);
    cr_expect_eq(leaked, 0u, "%zu bytes the target wrote after deregistering reached the reader", leaked);
    expect_rails_unharmed(*p.b, "target");
    expect_next_read_whole(p, remote, local);
}

Test(tcp_read_source_deregistered, a_region_unmapped_after_deregistering_fails_the_read_not_the_rails, .timeout = 60) {
    // The target's rails heal from a failed sendmsg before the read ends:
    // only their warning tells.
    char log_path[] = "/tmp/tent-read-source-XXXXXX";
    const int log_fd = mkstemp(log_path);
    cr_assert(log_fd >= 0);
    close(log_fd);
    Config config = tcp_pair_small_socket_config();
    (void)config.set(Knob::LogLevel, "warn", api_source());
    (void)config.set(Knob::LogDestination, log_path, api_source());
    TcpPair p(config);
    std::vector<std::uint8_t> original(kLength), local(kLength, 0), remote(kLength);
    fill(original, 1);
    void* mapped = mmap(nullptr, kLength, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(mapped != MAP_FAILED);
    std::memcpy(mapped, original.data(), kLength);
    auto rr = p.b->register_memory(mapped, kLength, wire::kAccessAll);
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rr.is_ok() && rl.is_ok());
    const auto key = handle_bytes(**rr);
    const auto addr = reinterpret_cast<std::uint64_t>(mapped);

    cr_assert(p.a->post_read(p.peer, local.data(), kLength, key, addr, with_cookie(1)).is_ok());
    wait_answering(local, original);
    cr_assert(p.b->deregister_memory((*rr)->id).is_ok());
    cr_assert_eq(munmap(mapped, kLength), 0);  // sendmsg from here would fail with EFAULT
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(30));
    cr_assert_eq(c.size(), 1u, "the read never completed");
    cr_expect_eq(c[0].status.code(), Code::RemoteAccess, "read: %s", c[0].status.to_string().c_str());
    expect_rails_unharmed(*p.b, "target");
    std::ifstream log(log_path);
    const std::string logged((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    unlink(log_path);
    cr_expect(logged.find("sendmsg") == std::string::npos, "a rail's sendmsg failed:\n%s", logged.c_str());
    expect_next_read_whole(p, remote, local);
}

// Deregistering waits for a rail that is moving bytes of the region at that
// moment: once deregister_memory() returns, no byte of the region reaches
// the wire and no byte from the wire lands in it. With the kernel's socket
// buffers at their default size the rails spend most of a transfer inside
// sendmsg() and recv() on the region itself, so a deregistration in the
// middle of one is the common case here, not a rarity: the program reuses
// its memory the moment the call returns, in each of several rounds.
namespace {

constexpr int kRounds = 32;

// What a number of rounds found: the bytes in all, and the rounds with any.
struct Tally {
    std::size_t bytes = 0;
    int rounds = 0;
};

// ROUND(r) for r in [0, kRounds): the bytes it found.
template <class Round>
Tally over_rounds(Round round) {
    Tally t;
    for (int r = 0; r < kRounds; ++r) {
        const std::size_t n = round(r);
        t.bytes += n;
        t.rounds += n > 0;
    }
    return t;
}

} // namespace

Test(tcp_read_source_deregistered, deregistering_waits_for_a_read_answer_under_way, .timeout = 120) {
    TcpPair p(tcp_pair_config());
    std::vector<std::uint8_t> remote(kLength), original(kLength), reused(kLength), local(kLength, 0);
    fill(original, 1);
    fill(reused, 3);
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rl.is_ok());
    // Each round: a read of the target's region, deregistered and reused
    // while answered; no reused byte may reach the reader.
    const Tally leaked = over_rounds([&](int round) {
        remote = original;
        std::fill(local.begin(), local.end(), 0);
        (void)deregister_mid_transfer(p, true, remote, local, reused, 10 + round);
        return reused_bytes_read(local, original, reused);
    });
    cr_expect_eq(leaked.bytes, 0u,
                 "%zu bytes the target wrote after deregistering reached the reader (%d of %d rounds)", leaked.bytes,
                 leaked.rounds, kRounds);
    expect_rails_unharmed(*p.b, "target");
    expect_rails_unharmed(*p.a, "reader");  // refused many times over, still in use
    expect_next_read_whole(p, remote, local);
}

Test(tcp_read_source_deregistered, deregistering_waits_for_a_write_arriving, .timeout = 120) {
    TcpPair p(tcp_pair_config());
    std::vector<std::uint8_t> target(kLength), source(kLength), reused(kLength);
    fill(source, 5);
    fill(reused, 7);
    auto rs = p.a->register_memory(source.data(), kLength, wire::kAccessAll);
    cr_assert(rs.is_ok());
    // Each round: a write into the target's region, deregistered and reused
    // while it arrives; no byte of the write may land after the reuse.
    const Tally landed = over_rounds([&](int round) {
        std::fill(target.begin(), target.end(), 0);
        (void)deregister_mid_transfer(p, false, target, source, reused, 30 + round);
        std::size_t n = 0;
        for (std::size_t i = 0; i < kLength; ++i) n += target[i] != reused[i];
        return n;
    });
    cr_expect_eq(landed.bytes, 0u, "%zu bytes of a write landed in the target's memory after it was deregistered and "
                 "reused (%d of %d rounds)", landed.bytes, landed.rounds, kRounds);
    std::vector<std::uint8_t> remote(kLength), local(kLength, 0);
    auto rl = p.a->register_memory(local.data(), kLength, wire::kAccessAll);
    cr_assert(rl.is_ok());
    expect_next_read_whole(p, remote, local);
}
