// The engine over in-memory rails that complete out of order: one-sided
// WRITE/READ move every byte at every size and stripe over all rails; SEND is
// delivered exactly once, in order; bad remote accesses and broken rails
// complete with an error; a peer going away is reported.
#include <criterion/criterion.h>
#include <sys/resource.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "engine_pair.h"
#include "metrics/prometheus_text.h"
#include "wire/memory_handle.h"

using namespace tent;
using namespace tent::test;

namespace {

const std::uint64_t kSizes[] = {1, 7, 4096, 65537, 1u << 20, (16u << 20) - 3, 16u << 20};

} // namespace

Test(engine_loopback, write_then_read_every_byte_all_sizes) {
    // The rails' delays are turns of progress, not bandwidths: measured,
    // the rail that waits five turns per operation can look many times
    // slower than the one that waits none, and rightly get a share below
    // what the check at the end wants (it did, in 1 run of 6). Rails of
    // one speed stripe every large transfer over all four, which is what
    // this test asserts.
    Config config = loopback_config();
    (void)config.set(Knob::EwmaMinBw, "1G", api_source());
    (void)config.set(Knob::EwmaMaxBw, "1G", api_source());
    EnginePair p(4, {0, 3, 1, 5}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    const std::size_t max = 16u << 20;
    std::vector<std::uint8_t> src(max), dst(max, 0), back(max, 0);
    auto rs = p.a->register_memory(src.data(), max, wire::kAccessAll);
    auto rb = p.a->register_memory(back.data(), max, wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), max, wire::kAccessAll);
    cr_assert(rs.is_ok() && rb.is_ok() && rd.is_ok());
    auto remote = handle_bytes(**rd);
    unsigned seed = 1;
    for (std::uint64_t size : kSizes) {
        fill(src, seed++);
        std::memset(back.data(), 0, size);
        // An offset into the remote region, so addresses are checked, not assumed.
        std::uint64_t off = size < max ? (max - size) / 2 : 0;
        cr_assert(p.a->post_write(p.a_to_b, src.data(), size, remote,
                                  reinterpret_cast<std::uint64_t>(dst.data()) + off, with_cookie(size))
                      .is_ok());
        auto c = wait_completions(*p.a, 1);
        cr_assert_eq(c.size(), 1u, "write of %llu bytes did not complete", (unsigned long long)size);
        cr_expect(c[0].status.is_ok(), "write %llu: %s", (unsigned long long)size, c[0].status.to_string().c_str());
        cr_expect_eq(c[0].cookie, size);
        cr_expect_eq(c[0].length, size);
        cr_expect(std::memcmp(dst.data() + off, src.data(), size) == 0, "write of %llu bytes differs",
                  (unsigned long long)size);
        cr_assert(p.a->post_read(p.a_to_b, back.data(), size, remote,
                                 reinterpret_cast<std::uint64_t>(dst.data()) + off, with_cookie(size + 1))
                      .is_ok());
        c = wait_completions(*p.a, 1);
        cr_assert_eq(c.size(), 1u);
        cr_expect(c[0].status.is_ok());
        cr_expect(std::memcmp(back.data(), src.data(), size) == 0, "read of %llu bytes differs",
                  (unsigned long long)size);
    }
    // Large transfers were striped: every rail carried bytes.
    for (std::uint16_t r = 0; r < 4; ++r) cr_expect_gt(p.fabric->bytes(r), 1u << 20, "rail %u unused", r);
    auto stats = p.a->rail_stats();
    cr_expect_eq(stats.size(), 4u);
}

Test(engine_loopback, last_chunk_lands_after_all_others) {
    // The target watches the last byte from its own thread: when it changes,
    // every other byte must already be there.
    EnginePair p(4);
    cr_assert(p.a && p.b && p.a_to_b);
    const std::size_t size = 8u << 20;
    std::vector<std::uint8_t> src(size, 0xAB), dst(size, 0);
    auto rs = p.a->register_memory(src.data(), size, wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), size, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    std::atomic<bool> stop{false};
    std::atomic<long> missing{-1};
    std::thread watcher([&] {
        volatile std::uint8_t* last = &dst[size - 1];
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (*last != 0xAB && !stop && std::chrono::steady_clock::now() < deadline) {
        }
        std::atomic_thread_fence(std::memory_order_acquire);
        long bad = 0;
        for (std::size_t i = 0; i < size; ++i) bad += dst[i] != 0xAB;
        missing = bad;
    });
    cr_assert(p.a->post_write(p.a_to_b, src.data(), size, handle_bytes(**rd),
                              reinterpret_cast<std::uint64_t>(dst.data()), {})
                  .is_ok());
    auto c = wait_completions(*p.a, 1);
    stop = true;
    watcher.join();
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok());
    cr_expect_eq(missing.load(), 0, "%ld bytes were missing when the last byte landed", missing.load());
}

Test(engine_loopback, sends_delivered_in_order_exactly_once) {
    EnginePair p(4);
    cr_assert(p.a && p.b && p.a_to_b);
    const int kMessages = 200;
    std::vector<std::vector<std::uint8_t>> msgs(kMessages);
    for (int i = 0; i < kMessages; ++i) {
        msgs[i].resize((i * 1237) % 20000);  // 0 .. ~20 KB: up to 5 fragments of 4 KB
        fill(msgs[i], 100 + i);
    }
    std::mutex mu;
    std::vector<std::vector<std::uint8_t>> got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) {
        std::lock_guard lock(mu);
        got.emplace_back(m.begin(), m.end());
    });
    for (int i = 0; i < kMessages; ++i)
        cr_assert(p.a->post_send(p.a_to_b, msgs[i].data(), msgs[i].size(),
                                 with_cookie(static_cast<std::uint64_t>(i)))
                      .is_ok());
    auto c = wait_completions(*p.a, kMessages);
    cr_assert_eq(c.size(), static_cast<std::size_t>(kMessages));
    for (auto& x : c) cr_expect(x.status.is_ok());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        {
            std::lock_guard lock(mu);
            if (got.size() >= static_cast<std::size_t>(kMessages)) break;
        }
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::lock_guard lock(mu);
    cr_assert_eq(got.size(), static_cast<std::size_t>(kMessages));
    for (int i = 0; i < kMessages; ++i) cr_expect(got[i] == msgs[i], "message %d out of order or corrupt", i);
}

Test(engine_loopback, sends_survive_a_failing_rail_exactly_once_in_order) {
    // Rail 1 of 2 fails every operation for a while: its fragments are
    // replayed on rail 0 after the sync exchange, none is lost, duplicated
    // or reordered, and no send reports an error.
    EnginePair p(2, {0, 0});
    cr_assert(p.a && p.b && p.a_to_b);
    const int kMessages = 300;
    std::vector<std::vector<std::uint8_t>> msgs(kMessages);
    for (int i = 0; i < kMessages; ++i) {
        msgs[i].resize(1 + (i * 1237) % 20000);
        fill(msgs[i], 500 + i);
    }
    std::mutex mu;
    std::vector<std::vector<std::uint8_t>> got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) {
        std::lock_guard lock(mu);
        got.emplace_back(m.begin(), m.end());
    });
    bool broken = false;
    for (int i = 0; i < kMessages; ++i) {
        if (i == 50) {
            p.fabric->set_broken(1, true);
            broken = true;
        }
        // The rail heals from message 250 on, once one of its fragments has
        // failed over: the selector picks it by backlog and bandwidth, and
        // on a slow, loaded machine (ASan in CI) it once took none of the
        // 200 messages of a fixed window (the data checks passed, the
        // failover count read 0). Without a failover it stays broken to the end.
        if (broken && i >= 250 && rail_total(*p.a, &RailStats::failovers) > 0) {
            p.fabric->set_broken(1, false);
            broken = false;
        }
        cr_assert(p.a->post_send(p.a_to_b, msgs[i].data(), msgs[i].size(), with_cookie(static_cast<std::uint64_t>(i)))
                      .is_ok());
        if (i % 25 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    auto c = wait_completions(*p.a, kMessages);
    cr_assert_eq(c.size(), static_cast<std::size_t>(kMessages));
    for (auto& x : c) cr_expect(x.status.is_ok(), "send %llu: %s", static_cast<unsigned long long>(x.cookie),
                                x.status.to_string().c_str());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        {
            std::lock_guard lock(mu);
            if (got.size() >= static_cast<std::size_t>(kMessages)) break;
        }
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    cr_expect_gt(rail_total(*p.a, &RailStats::failovers), 0u, "the broken rail's fragments moved");
    std::lock_guard lock(mu);
    cr_assert_eq(got.size(), static_cast<std::size_t>(kMessages), "exactly once");
    for (int i = 0; i < kMessages; ++i) cr_expect(got[i] == msgs[i], "message %d out of order or corrupt", i);
}

Test(engine_loopback, striped_writes_survive_a_failing_rail) {
    // Rail 2 of 4 fails every operation: its chunks move, every byte lands.
    EnginePair p(4);
    cr_assert(p.a && p.b && p.a_to_b);
    const std::size_t size = 4u << 20;
    std::vector<std::uint8_t> src(size), dst(size, 0);
    fill(src, 77);
    auto rs = p.a->register_memory(src.data(), size, wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), size, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    p.fabric->set_broken(2, true);
    for (int round = 0; round < 3; ++round) {
        std::fill(dst.begin(), dst.end(), 0);
        cr_assert(p.a->post_write(p.a_to_b, src.data(), size, handle_bytes(**rd),
                                  reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(round))
                      .is_ok());
        auto c = wait_completions(*p.a, 1);
        cr_assert_eq(c.size(), 1u);
        cr_expect(c[0].status.is_ok(), "round %d: %s", round, c[0].status.to_string().c_str());
        cr_expect(dst == src, "round %d: every byte", round);
    }
    std::string text = render_prometheus(p.a->metrics_registry().snapshot());
    cr_expect(text.find("tent_transport_failover_total{") != std::string::npos, "%s", text.c_str());
}

namespace {

std::chrono::microseconds process_cpu_time() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto us = [](const timeval& t) { return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec); };
    return std::chrono::duration_cast<std::chrono::microseconds>(us(u.ru_utime) + us(u.ru_stime));
}

} // namespace

Test(engine_loopback, progress_spin_polls_only_while_operations_are_in_flight) {
    // A one-second spin, one completed write, then nothing in flight: the
    // progress threads must sleep, not poll for a completion that cannot come.
    Config c = loopback_config();
    (void)c.set(Knob::ProgressSpinUs, "1000000", api_source());
    EnginePair p(1, {0}, c);
    cr_assert(p.a && p.b && p.a_to_b);
    std::vector<std::uint8_t> src(4096), dst(4096, 0);
    fill(src, 5);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    cr_assert(p.a->post_write(p.a_to_b, src.data(), src.size(), handle_bytes(**rd),
                              reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(1))
                  .is_ok());
    auto done = wait_completions(*p.a, 1);
    cr_assert_eq(done.size(), 1u);
    cr_assert(done[0].status.is_ok());
    cr_expect(dst == src);
    const auto wall = std::chrono::milliseconds(400);
    const auto before = process_cpu_time();
    std::this_thread::sleep_for(wall);
    const auto used = process_cpu_time() - before;
    // Two spinning threads would use up to twice the wall time; sleeping
    // ones wake every millisecond (loopback rails have no descriptor) for
    // a few microseconds.
    cr_expect_lt(used, wall / 4, "the idle engines used %lld us of CPU in %lld us",
                 static_cast<long long>(used.count()),
                 static_cast<long long>(std::chrono::microseconds(wall).count()));
}

Test(engine_loopback, send_into_posted_buffers_from_passive_side) {
    EnginePair p(2);
    cr_assert(p.a && p.b && p.a_to_b);
    std::vector<std::uint8_t> m1(10000), m2(300);
    fill(m1, 1);
    fill(m2, 2);
    cr_assert(p.a->post_send(p.a_to_b, m1.data(), m1.size(), with_cookie(1)).is_ok());
    cr_assert(p.a->post_send(p.a_to_b, m2.data(), m2.size(), with_cookie(2)).is_ok());
    cr_assert_eq(wait_completions(*p.a, 2).size(), 2u);
    // Messages wait for buffers; the second buffer is too small.
    std::vector<std::uint8_t> r1(20000), r2(100);
    cr_assert(p.b->post_recv(r1.data(), r1.size(), 11).is_ok());
    cr_assert(p.b->post_recv(r2.data(), r2.size(), 12).is_ok());
    auto c = wait_completions(*p.b, 2);
    cr_assert_eq(c.size(), 2u);
    cr_expect_eq(c[0].cookie, 11u);
    cr_expect(c[0].status.is_ok());
    cr_expect_eq(c[0].length, m1.size());
    cr_expect(std::memcmp(r1.data(), m1.data(), m1.size()) == 0);
    cr_expect_eq(c[1].cookie, 12u);
    cr_expect_eq(c[1].status.code(), Code::OutOfRange);
    cr_expect(std::memcmp(r2.data(), m2.data(), r2.size()) == 0);
    // The passive side answers on the connection it was given.
    PeerId back = c[0].peer;
    std::vector<std::uint8_t> reply(50, 0x5A), in(50, 0);
    cr_assert(p.a->post_recv(in.data(), in.size(), 21).is_ok());
    cr_assert(p.b->post_send(back, reply.data(), reply.size(), with_cookie(22)).is_ok());
    auto r = wait_completions(*p.a, 1);
    cr_assert_eq(r.size(), 1u);
    cr_expect_eq(r[0].cookie, 21u);
    cr_expect(in == reply);
}

Test(engine_loopback, out_of_bounds_and_wrong_access_fail_without_writing) {
    EnginePair p(2);
    cr_assert(p.a && p.b && p.a_to_b);
    std::vector<std::uint8_t> src(8192, 0xEE), dst(4096, 0), ro(4096, 0);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    auto rro = p.b->register_memory(ro.data(), ro.size(), wire::kAccessLocalWrite | wire::kAccessRemoteRead);
    cr_assert(rs.is_ok() && rd.is_ok() && rro.is_ok());
    auto base = reinterpret_cast<std::uint64_t>(dst.data());
    cr_assert(p.a->post_write(p.a_to_b, src.data(), 100, handle_bytes(**rd), base + 4000, with_cookie(1)).is_ok());
    cr_assert(p.a->post_write(p.a_to_b, src.data(), 100, handle_bytes(**rro),
                              reinterpret_cast<std::uint64_t>(ro.data()), with_cookie(2))
                  .is_ok());
    auto forged = (*rd)->handle;
    forged.tcp_key ^= 0x5555;
    auto fb = wire::encode_memory_handle(forged);
    cr_assert(p.a->post_write(p.a_to_b, src.data(), 10, std::vector<std::uint8_t>(fb->begin(), fb->end()), base,
                              with_cookie(3))
                  .is_ok());
    auto c = wait_completions(*p.a, 3);
    cr_assert_eq(c.size(), 3u);
    for (auto& x : c) cr_expect_eq(x.status.code(), Code::RemoteAccess, "cookie %llu: %s",
                                   (unsigned long long)x.cookie, x.status.to_string().c_str());
    for (auto b : dst) cr_assert_eq(b, 0);
    for (auto b : ro) cr_assert_eq(b, 0);
    // Unregistered local memory is refused at post time.
    std::vector<std::uint8_t> loose(10);
    cr_expect_not(p.a->post_write(p.a_to_b, loose.data(), 10, handle_bytes(**rd), base, {}).is_ok());
}

Test(engine_loopback, broken_rail_completes_with_error_not_silently) {
    // Failover off: the first failure is the request's.
    Config config = loopback_config();
    (void)config.set(Knob::MaxFailoverAttempts, "0", api_source());
    EnginePair p(1, {0}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    std::vector<std::uint8_t> src(1000, 1), dst(1000, 0);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    p.fabric->set_broken(0, true);
    cr_assert(p.a->post_write(p.a_to_b, src.data(), 1000, handle_bytes(**rd),
                              reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(9))
                  .is_ok());
    auto c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect_not(c[0].status.is_ok());
    cr_expect_eq(c[0].cookie, 9u);
    auto stats = p.a->rail_stats();
    cr_assert_eq(stats.size(), 1u);
    cr_expect_eq(stats[0].errors, 1u);
    // The failure reached the metrics too.
    std::string text = render_prometheus(p.a->metrics_registry().snapshot());
    cr_expect(text.find("tent_errors_total{class=\"rail\"} 1") != std::string::npos, "%s", text.c_str());
}

Test(engine_loopback, only_rail_broken_fails_with_peer_unreachable_in_bounded_time) {
    // Failover on, the only rail broken: the write waits failover_timeout_ms
    // for a rail, then fails with a message naming the rail and why; the
    // unreachable callback runs.
    Config config = loopback_config();
    (void)config.set(Knob::FailoverTimeoutMs, "300", api_source());
    EnginePair p(1, {0}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    std::atomic<PeerId> reported{0};
    p.a->set_unreachable_callback([&](PeerId peer, const Status&) { reported = peer; });
    std::vector<std::uint8_t> src(1000, 1), dst(1000, 0);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    p.fabric->set_broken(0, true);
    auto start = std::chrono::steady_clock::now();
    cr_assert(p.a->post_write(p.a_to_b, src.data(), 1000, handle_bytes(**rd),
                              reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(9))
                  .is_ok());
    auto c = wait_completions(*p.a, 1);
    auto took = std::chrono::steady_clock::now() - start;
    cr_assert_eq(c.size(), 1u);
    cr_expect_eq(c[0].status.code(), Code::PeerUnreachable, "%s", c[0].status.to_string().c_str());
    std::string m = c[0].status.message();
    cr_expect(m.find("peer unreachable: ") == 0, "%s", m.c_str());
    cr_expect(m.find("rails tried: ") != std::string::npos && m.find(p.a->rail_stats()[0].name) != std::string::npos,
              "names the rail: %s", m.c_str());
    cr_expect(took >= std::chrono::milliseconds(300), "waited for a rail first");
    cr_expect(took < std::chrono::seconds(3), "bounded: %lld ms",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
    cr_expect_eq(reported.load(), p.a_to_b);
}

Test(engine_loopback, rail_that_returns_in_time_takes_the_waiting_write) {
    // Failover on, the only rail broken for a while: the write waits and
    // then completes, every byte in place.
    Config config = loopback_config();
    (void)config.set(Knob::FailoverTimeoutMs, "10000", api_source());
    (void)config.set(Knob::ProbeBaseMs, "50", api_source());
    (void)config.set(Knob::RailCooldownSecs, "1", api_source());
    EnginePair p(1, {0}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    std::vector<std::uint8_t> src(100000), dst(100000, 0);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    p.fabric->set_broken(0, true);
    cr_assert(p.a->post_write(p.a_to_b, src.data(), src.size(), handle_bytes(**rd),
                              reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(5))
                  .is_ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    p.fabric->set_broken(0, false);
    auto c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    cr_expect(dst == src, "every byte");
}

Test(engine_loopback, peer_going_away_is_reported) {
    EnginePair p(1);
    cr_assert(p.a && p.b && p.a_to_b);
    std::atomic<PeerId> reported{0};
    p.a->set_unreachable_callback([&](PeerId peer, const Status&) { reported = peer; });
    p.b.reset();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (reported == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cr_expect_eq(reported.load(), p.a_to_b);
    std::uint8_t byte = 0;
    cr_expect_eq(p.a->post_send(p.a_to_b, &byte, 1, {}).code(), Code::PeerUnreachable);
}

Test(engine_loopback, connect_to_nobody_fails_in_bounded_time) {
    Config c = loopback_config();
    (void)c.set(Knob::ConnectTimeoutMs, "200", api_source());
    auto e = Engine::create(c, {});
    cr_assert(e.is_ok());
    std::vector<std::uint8_t> garbage(40, 0x42);
    cr_expect_not((*e)->connect(garbage).is_ok());
    // A blob whose control listener is gone.
    std::vector<std::uint8_t> blob;
    {
        auto other = Engine::create(c, {});
        cr_assert(other.is_ok());
        blob = (*other)->address();
    }
    auto start = std::chrono::steady_clock::now();
    auto r = (*e)->connect(blob);
    cr_expect_not(r.is_ok());
    cr_expect_lt(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

Test(engine_loopback, transport_hint_picks_the_rails_of_that_kind) {
    // Two kinds of rails to the same peer, each kind on its own fabric so the
    // bytes each carried can be told apart.
    auto tcp_fabric = std::make_shared<LoopbackFabric>(2, std::vector<unsigned>{0});
    auto rdma_fabric = std::make_shared<LoopbackFabric>(2, std::vector<unsigned>{0});
    std::unique_ptr<Engine> a, b;
    for (auto* e : {&a, &b}) {
        std::vector<std::unique_ptr<TransportProvider>> p;
        p.push_back(std::make_unique<LoopbackProvider>(tcp_fabric, TransportKind::Tcp));
        p.push_back(std::make_unique<LoopbackProvider>(rdma_fabric, TransportKind::Rdma));
        auto r = Engine::create(loopback_config(), std::move(p));
        cr_assert(r.is_ok());
        *e = std::move(*r);
    }
    auto peer = a->connect(b->address());
    cr_assert(peer.is_ok());
    const std::size_t size = 4u << 20;
    std::vector<std::uint8_t> src(size), dst(size, 0);
    fill(src, 9);
    auto rs = a->register_memory(src.data(), size, wire::kAccessAll);
    auto rd = b->register_memory(dst.data(), size, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    auto remote = handle_bytes(**rd);
    auto base = reinterpret_cast<std::uint64_t>(dst.data());
    PostOptions o = with_cookie(1, Priority::High);
    o.hint = TransportKind::Rdma;
    cr_assert(a->post_write(*peer, src.data(), size, remote, base, o).is_ok());
    cr_assert_eq(wait_completions(*a, 1).size(), 1u);
    std::uint64_t rdma_bytes = rdma_fabric->bytes(2) + rdma_fabric->bytes(3);
    cr_expect_eq(rdma_bytes, size, "rdma rails carried %llu bytes", (unsigned long long)rdma_bytes);
    cr_expect_eq(tcp_fabric->bytes(0) + tcp_fabric->bytes(1), 0u);
    cr_expect(dst == src);

    o.hint = TransportKind::Tcp;
    o.priority = Priority::Low;
    std::fill(dst.begin(), dst.end(), 0);
    cr_assert(a->post_write(*peer, src.data(), size, remote, base, o).is_ok());
    cr_assert_eq(wait_completions(*a, 1).size(), 1u);
    cr_expect_eq(tcp_fabric->bytes(0) + tcp_fabric->bytes(1), size);
    cr_expect_eq(rdma_fabric->bytes(2) + rdma_fabric->bytes(3), rdma_bytes, "no more rdma traffic");
    cr_expect(dst == src);

    // A hint with no rail of its kind falls back to the others.
    o.hint = TransportKind::Shm;
    cr_assert(a->post_write(*peer, src.data(), 100, remote, base, o).is_ok());
    auto c = wait_completions(*a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok());
}
