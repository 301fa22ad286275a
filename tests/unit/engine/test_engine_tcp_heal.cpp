// TCP rails heal: two engines over two real TCP rails (127.0.0.1 and
// 127.0.0.2); under a stream of striped writes and messages, the sockets
// of the 127.0.0.2 rail are shut down (as a reset connection or a dead
// peer would end them). Every byte arrives, every message exactly once and
// in order, and the rail is re-armed on a new socket and carries bytes
// again (its byte count grows after the failure). Shut down a second time,
// it comes back again.
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "engine/default_providers.h"
#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

Config tcp_config() {
    Config c;
    Source api = api_source();
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1,127.0.0.2", api);
    (void)c.set(Knob::ChunkSize, "256K", api);
    (void)c.set(Knob::StripingThreshold, "64K", api);
    (void)c.set(Knob::StripingMinChunk, "16K", api);
    (void)c.set(Knob::SendFragmentSize, "16K", api);
    (void)c.set(Knob::SlowRailFactor, "1000", api);
    (void)c.set(Knob::LogLevel, "error", api);  // a closed rail is a warning
    return c;
}

bool is_ip(const sockaddr_in& a, const char* ip) {
    in_addr want{};
    inet_pton(AF_INET, ip, &want);
    return a.sin_family == AF_INET && a.sin_addr.s_addr == want.s_addr;
}

// Shuts down every connected TCP socket of this process between
// 127.0.0.2 addresses (both ends of that rail: both engines live here).
int shut_rail_sockets(const char* ip) {
    int shut = 0;
    DIR* d = opendir("/proc/self/fd");
    if (!d) return 0;
    while (dirent* e = readdir(d)) {
        const int fd = std::atoi(e->d_name);
        if (fd <= 2) continue;
        sockaddr_in local{}, peer{};
        socklen_t ll = sizeof local, pl = sizeof peer;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;  // listeners too
        if (is_ip(local, ip) && is_ip(peer, ip) && ::shutdown(fd, SHUT_RDWR) == 0) ++shut;
    }
    closedir(d);
    return shut;
}

std::uint64_t rail_bytes(Engine& e, const char* prefix) {
    for (const auto& s : e.rail_stats())
        if (s.name.rfind(prefix, 0) == 0) return s.bytes;
    return 0;
}

} // namespace

Test(engine_tcp_heal, a_closed_tcp_rail_reconnects_and_carries_bytes_again, .timeout = 120) {
    Config config = tcp_config();
    std::unique_ptr<Engine> a, b;
    for (auto* e : {&a, &b}) {
        auto providers = make_default_providers(config);
        cr_assert(providers.is_ok(), "%s", providers.status().to_string().c_str());
        auto r = Engine::create(config, std::move(*providers));
        cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
        *e = std::move(*r);
    }
    auto peer = a->connect(b->address());
    cr_assert(peer.is_ok(), "%s", peer.status().to_string().c_str());

    constexpr std::size_t kSize = 1u << 20;
    std::vector<std::uint8_t> src(kSize), dst(kSize);
    auto rs = a->register_memory(src.data(), kSize, wire::kAccessAll);
    auto rd = b->register_memory(dst.data(), kSize, wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    const auto remote = handle_bytes(**rd);
    const auto base = reinterpret_cast<std::uint64_t>(dst.data());

    std::mutex mu;
    std::vector<std::vector<std::uint8_t>> got, sent;
    b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) {
        std::lock_guard lock(mu);
        got.emplace_back(m.begin(), m.end());
    });

    // One round: a striped write checked byte for byte, then a message.
    unsigned round = 0;
    auto one_round = [&] {
        ++round;
        fill(src, round);
        cr_assert(a->post_write(*peer, src.data(), kSize, remote, base, with_cookie(round)).is_ok());
        auto c = wait_completions(*a, 1, std::chrono::seconds(30));
        cr_assert_eq(c.size(), 1u, "round %u: the write did not complete", round);
        cr_assert(c[0].status.is_ok(), "round %u: %s", round, c[0].status.to_string().c_str());
        cr_assert(src == dst, "round %u: bytes written differ", round);
        sent.emplace_back(src.begin(), src.begin() + 4096 + round);
        cr_assert(a->post_send(*peer, sent.back().data(), sent.back().size(), with_cookie(round)).is_ok());
        c = wait_completions(*a, 1, std::chrono::seconds(30));
        cr_assert_eq(c.size(), 1u, "round %u: the send did not complete", round);
        cr_assert(c[0].status.is_ok(), "round %u: send: %s", round, c[0].status.to_string().c_str());
    };

    for (int failure = 1; failure <= 2; ++failure) {
        for (int i = 0; i < 5; ++i) one_round();
        cr_assert_gt(rail_bytes(*a, "tcp 127.0.0.2"), 0u, "the 127.0.0.2 rail carried nothing before failure %d",
                     failure);
        // Mid-stream: a write in flight when the sockets go.
        fill(src, ++round);
        cr_assert(a->post_write(*peer, src.data(), kSize, remote, base, with_cookie(round)).is_ok());
        cr_assert_geq(shut_rail_sockets("127.0.0.2"), 1, "no socket of the 127.0.0.2 rail found");
        auto c = wait_completions(*a, 1, std::chrono::seconds(30));
        cr_assert_eq(c.size(), 1u);
        cr_assert(c[0].status.is_ok(), "the write across the failure: %s", c[0].status.to_string().c_str());
        cr_assert(src == dst, "the write across failure %d lost bytes", failure);
        const std::uint64_t at_failure = rail_bytes(*a, "tcp 127.0.0.2");

        // Bounded: the rail is re-armed within a few rounds (its re-arm
        // starts at once: one closed socket does not pause it).
        bool back = false;
        for (int i = 0; i < 200 && !back; ++i) {
            one_round();
            back = rail_bytes(*a, "tcp 127.0.0.2") > at_failure;
            if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        cr_assert(back, "failure %d: the 127.0.0.2 rail carried nothing after its socket closed (%llu bytes)",
                  failure, static_cast<unsigned long long>(at_failure));
    }

    for (int i = 0; i < 2000; ++i) {
        {
            std::lock_guard lock(mu);
            if (got.size() >= sent.size()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard lock(mu);
    cr_assert_eq(got.size(), sent.size(), "%zu messages arrived of %zu sent", got.size(), sent.size());
    for (std::size_t i = 0; i < sent.size(); ++i) cr_assert(got[i] == sent[i], "message %zu differs", i);
}
