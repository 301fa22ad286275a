// Two engines in two processes over TCP rails on loopback addresses
// (127.0.0.1 and 127.0.0.2: two rails). The parent writes into the child's
// registered memory and reads it back, and sends messages the child echoes,
// at sizes from 1 B to 16 MiB; every byte is checked. Both rails carry data.
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "config/config.h"
#include "engine/default_providers.h"
#include "engine/engine.h"
#include "wire/memory_handle.h"

using namespace tent;

namespace {

constexpr std::size_t kMax = 16u << 20;
const std::uint64_t kSizes[] = {1, 3, 4096, 65536, 262145, 1u << 20, (4u << 20) + 5, kMax};

Config two_rail_config() {
    Config c;
    Source api;
    api.kind = Source::Kind::Api;
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1,127.0.0.2", api);
    (void)c.set(Knob::ConnectTimeoutMs, "3000", api);
    return c;
}

std::unique_ptr<Engine> make_engine() {
    Config c = two_rail_config();
    auto providers = make_default_providers(c);
    if (!providers) return nullptr;
    auto e = Engine::create(c, std::move(*providers));
    return e ? std::move(*e) : nullptr;
}

bool write_all(int fd, const void* p, std::size_t n) {
    auto* b = static_cast<const char*>(p);
    while (n) {
        ssize_t k = ::write(fd, b, n);
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool read_all(int fd, void* p, std::size_t n) {
    auto* b = static_cast<char*>(p);
    while (n) {
        ssize_t k = ::read(fd, b, n);
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

// The child: a target region, and an echo of every message. Exits when the
// parent closes its pipe (bounded by a 60 s alarm).
[[noreturn]] void child(int to_parent, int from_parent) {
    alarm(60);
    auto e = make_engine();
    if (!e) _exit(2);
    std::vector<std::uint8_t> region(kMax, 0);
    auto reg = e->register_memory(region.data(), region.size(), wire::kAccessAll);
    if (!reg) _exit(3);
    auto key = wire::encode_memory_handle((*reg)->handle);
    std::uint64_t addr = reinterpret_cast<std::uint64_t>(region.data());
    std::uint32_t blob_len = static_cast<std::uint32_t>(e->address().size());
    std::mutex mu;
    std::deque<std::vector<std::uint8_t>> echoes;  // alive until their sends complete
    e->set_recv_callback([&](PeerId peer, std::span<const std::uint8_t> m) {
        std::lock_guard lock(mu);
        echoes.emplace_back(m.begin(), m.end());
        (void)e->post_send(peer, echoes.back().data(), echoes.back().size(), {});
    });
    if (!write_all(to_parent, &blob_len, 4) || !write_all(to_parent, e->address().data(), blob_len) ||
        !write_all(to_parent, key->data(), key->size()) || !write_all(to_parent, &addr, 8))
        _exit(4);
    char byte;
    (void)!::read(from_parent, &byte, 1);  // EOF: the parent is done
    e.reset();
    _exit(0);
}

void fill(std::vector<std::uint8_t>& v, std::size_t n, unsigned seed) {
    std::uint32_t x = seed * 2654435761u + 7;
    for (std::size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        v[i] = static_cast<std::uint8_t>(x >> 24);
    }
}

std::vector<EngineCompletion> wait_completions(Engine& e, std::size_t want) {
    std::vector<EngineCompletion> out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (out.size() < want && std::chrono::steady_clock::now() < deadline)
        if (e.poll(out, want - out.size()) == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    return out;
}

} // namespace

Test(engine_tcp, two_processes_every_byte, .timeout = 90) {
    int up[2], down[2];
    cr_assert_eq(pipe(up), 0);
    cr_assert_eq(pipe(down), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        child(up[1], down[0]);
    }
    close(up[1]);
    close(down[0]);
    std::uint32_t blob_len = 0;
    cr_assert(read_all(up[0], &blob_len, 4), "child did not start");
    std::vector<std::uint8_t> blob(blob_len), key(wire::kMemoryHandleSize);
    std::uint64_t remote = 0;
    cr_assert(read_all(up[0], blob.data(), blob_len) && read_all(up[0], key.data(), key.size()) &&
              read_all(up[0], &remote, 8));

    auto e = make_engine();
    cr_assert_not_null(e);
    auto peer = e->connect(blob);
    cr_assert(peer.is_ok(), "connect: %s", peer.status().to_string().c_str());
    std::vector<std::uint8_t> src(kMax), back(kMax), echo(kMax);
    auto r1 = e->register_memory(src.data(), kMax, wire::kAccessAll);
    auto r2 = e->register_memory(back.data(), kMax, wire::kAccessAll);
    cr_assert(r1.is_ok() && r2.is_ok());

    unsigned seed = 1;
    for (std::uint64_t size : kSizes) {
        fill(src, size, seed++);
        std::uint64_t off = (kMax - size) / 3;
        PostOptions o;
        o.cookie = size;
        cr_assert(e->post_write(*peer, src.data(), size, key, remote + off, o).is_ok());
        auto c = wait_completions(*e, 1);
        cr_assert_eq(c.size(), 1u, "write of %llu bytes did not complete", (unsigned long long)size);
        cr_assert(c[0].status.is_ok(), "write %llu: %s", (unsigned long long)size, c[0].status.to_string().c_str());
        std::memset(back.data(), 0, size);
        cr_assert(e->post_read(*peer, back.data(), size, key, remote + off, o).is_ok());
        c = wait_completions(*e, 1);
        cr_assert_eq(c.size(), 1u);
        cr_assert(c[0].status.is_ok(), "read %llu: %s", (unsigned long long)size, c[0].status.to_string().c_str());
        cr_expect(std::memcmp(back.data(), src.data(), size) == 0, "write+read of %llu bytes differs",
                  (unsigned long long)size);

        // The echo comes back into a posted buffer; every byte compared.
        std::memset(echo.data(), 0, size);
        cr_assert(e->post_recv(echo.data(), kMax, 1000 + size).is_ok());
        cr_assert(e->post_send(*peer, src.data(), size, o).is_ok());
        c = wait_completions(*e, 2);
        cr_assert_eq(c.size(), 2u, "send/echo of %llu bytes incomplete", (unsigned long long)size);
        for (auto& x : c) {
            cr_expect(x.status.is_ok(), "%s", x.status.to_string().c_str());
            if (x.op == OpType::Recv) cr_expect_eq(x.length, size);
        }
        cr_expect(std::memcmp(echo.data(), src.data(), size) == 0, "echo of %llu bytes differs",
                  (unsigned long long)size);
    }
    // Out of bounds over TCP: refused by the child, reported here.
    PostOptions o;
    cr_assert(e->post_write(*peer, src.data(), 100, key, remote + kMax - 50, o).is_ok());
    auto c = wait_completions(*e, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect_eq(c[0].status.code(), Code::RemoteAccess, "%s", c[0].status.to_string().c_str());

    auto stats = e->rail_stats();
    cr_expect_eq(stats.size(), 2u);
    for (auto& s : stats) cr_expect_gt(s.bytes, 1u << 20, "rail %s carried %llu bytes", s.name.c_str(),
                                       (unsigned long long)s.bytes);
    close(down[1]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

// A peer killed in the middle of traffic: every posted request still
// completes (most with an error), the peer is reported unreachable, and
// nothing hangs.
Test(engine_tcp, killed_peer_fails_requests_without_hanging, .timeout = 60) {
    int up[2], down[2];
    cr_assert_eq(pipe(up), 0);
    cr_assert_eq(pipe(down), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        child(up[1], down[0]);
    }
    close(up[1]);
    close(down[0]);
    std::uint32_t blob_len = 0;
    cr_assert(read_all(up[0], &blob_len, 4));
    std::vector<std::uint8_t> blob(blob_len), key(wire::kMemoryHandleSize);
    std::uint64_t remote = 0;
    cr_assert(read_all(up[0], blob.data(), blob_len) && read_all(up[0], key.data(), key.size()) &&
              read_all(up[0], &remote, 8));
    auto e = make_engine();
    cr_assert_not_null(e);
    std::atomic<int> unreachable{0};
    e->set_unreachable_callback([&](PeerId, const Status&) { ++unreachable; });
    auto peer = e->connect(blob);
    cr_assert(peer.is_ok());
    std::vector<std::uint8_t> src(kMax, 0x77);
    auto reg = e->register_memory(src.data(), kMax, wire::kAccessAll);
    cr_assert(reg.is_ok());
    const int kOps = 40;
    int posted = 0;
    for (int i = 0; i < kOps; ++i) {
        PostOptions o;
        o.cookie = static_cast<std::uint64_t>(i);
        Status s = i % 2 ? e->post_send(*peer, src.data(), 1u << 20, o)
                         : e->post_write(*peer, src.data(), kMax, key, remote, o);
        if (s.is_ok()) ++posted;
        if (i == 4) kill(pid, SIGKILL);
    }
    auto c = wait_completions(*e, static_cast<std::size_t>(posted));
    cr_expect_eq(c.size(), static_cast<std::size_t>(posted), "%zu of %d requests completed", c.size(), posted);
    std::size_t failed = 0;
    for (auto& x : c) failed += !x.status.is_ok();
    cr_expect_gt(failed, 0u);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (unreachable == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cr_expect_eq(unreachable.load(), 1);
    PostOptions o;
    cr_expect_eq(e->post_send(*peer, src.data(), 1, o).code(), Code::PeerUnreachable);
    close(down[1]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFSIGNALED(status));
}
