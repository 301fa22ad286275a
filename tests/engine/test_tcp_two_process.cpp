// Two engines in two processes over TCP rails on loopback addresses
// (127.0.0.1 and 127.0.0.2: two rails). The parent writes into the child's
// registered memory and reads it back, and sends messages the child echoes,
// at sizes from 1 B to 16 MiB; every byte is checked. Both rails carry data.
#include <criterion/criterion.h>

#include <atomic>
#include <csignal>
#include <deque>
#include <mutex>
#include <thread>

#include "two_process.h"

using namespace tent;
using namespace tent::test;

namespace {

Config two_rail_config() {
    Config c = loopback_control_config();
    Source api = api_source();
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1,127.0.0.2", api);
    (void)c.set(Knob::ConnectTimeoutMs, "3000", api);
    // Under the sanitizers on a loaded 2-CPU machine a process may not
    // answer heartbeats for 400 ms, and both rails were declared dead at
    // once. What is tested here is every byte across two processes; a
    // killed peer is seen from its closed sockets, not from silence.
    (void)c.set(Knob::TcpSilenceIntervals, "25", api);
    return c;
}

// Echoes each message from a copy kept until the end: the killed-peer test
// posts sends without waiting for their echoes, so no buffer is reused.
struct CopyingEcho {
    std::mutex mu;
    std::deque<std::vector<std::uint8_t>> echoes;

    bool install(Engine& e) {
        e.set_recv_callback([this, &e](PeerId peer, std::span<const std::uint8_t> m) {
            std::lock_guard lock(mu);
            echoes.emplace_back(m.begin(), m.end());
            (void)e.post_send(peer, echoes.back().data(), echoes.back().size(), {});
        });
        return true;
    }
};

ChildProcess start_tcp_child() {
    return ChildProcess::start([](int to_parent, int from_parent) {
        serve_as_child<CopyingEcho>(two_rail_config(), 60, to_parent, from_parent);
    });
}

} // namespace

Test(engine_tcp, two_processes_every_byte, .timeout = 90) {
    auto child = start_tcp_child();
    cr_assert(child.forked());
    ChildInfo info;
    cr_assert(child.read_info(info), "child did not start");

    auto e = make_engine(two_rail_config());
    cr_assert_not_null(e);
    auto peer = e->connect(info.address);
    cr_assert(peer.is_ok(), "connect: %s", peer.status().to_string().c_str());
    check_every_size(*e, *peer, info, {}, std::chrono::seconds(20));

    // Out of bounds over TCP: refused by the child, reported here.
    std::vector<std::uint8_t> src(100, 0x5a);
    auto reg = e->register_memory(src.data(), src.size(), wire::kAccessAll);
    cr_assert(reg.is_ok());
    cr_assert(e->post_write(*peer, src.data(), 100, info.key, info.remote + kTwoProcessMax - 50, {}).is_ok());
    auto c = wait_completions(*e, 1, std::chrono::seconds(20));
    cr_assert_eq(c.size(), 1u);
    cr_expect_eq(c[0].status.code(), Code::RemoteAccess, "%s", c[0].status.to_string().c_str());

    auto stats = e->rail_stats();
    cr_expect_eq(stats.size(), 2u);
    for (auto& s : stats)
        cr_expect_gt(s.bytes, 1u << 20, "rail %s carried %llu bytes", s.name.c_str(), (unsigned long long)s.bytes);
    int status = 0;
    cr_assert(child.finish(status));
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

// A peer killed in the middle of traffic: every posted request still
// completes (most with an error), the peer is reported unreachable, and
// nothing hangs.
Test(engine_tcp, killed_peer_fails_requests_without_hanging, .timeout = 60) {
    auto child = start_tcp_child();
    cr_assert(child.forked());
    ChildInfo info;
    cr_assert(child.read_info(info));
    auto e = make_engine(two_rail_config());
    cr_assert_not_null(e);
    std::atomic<int> unreachable{0};
    e->set_unreachable_callback([&](PeerId, const Status&) { ++unreachable; });
    auto peer = e->connect(info.address);
    cr_assert(peer.is_ok());
    std::vector<std::uint8_t> src(kTwoProcessMax, 0x77);
    auto reg = e->register_memory(src.data(), src.size(), wire::kAccessAll);
    cr_assert(reg.is_ok());
    const int kOps = 40;
    int posted = 0;
    for (int i = 0; i < kOps; ++i) {
        Status s = i % 2 ? e->post_send(*peer, src.data(), 1u << 20, with_cookie(i))
                         : e->post_write(*peer, src.data(), src.size(), info.key, info.remote, with_cookie(i));
        if (s.is_ok()) ++posted;
        if (i == 4) kill(child.pid(), SIGKILL);
    }
    auto c = wait_completions(*e, static_cast<std::size_t>(posted), std::chrono::seconds(20));
    cr_expect_eq(c.size(), static_cast<std::size_t>(posted), "%zu of %d requests completed", c.size(), posted);
    std::size_t failed = 0;
    for (auto& x : c) failed += !x.status.is_ok();
    cr_expect_gt(failed, 0u);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (unreachable == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cr_expect_eq(unreachable.load(), 1);
    cr_expect_eq(e->post_send(*peer, src.data(), 1, {}).code(), Code::PeerUnreachable);
    int status = 0;
    cr_assert(child.finish(status));
    cr_expect(WIFSIGNALED(status));
}
