// Two engines in two processes over verbs rails on simverbs (the software
// HCA), with 1, 2 and 4 HCAs per process: WRITE and READ back into the
// child's memory and SEND echoed by the child, every byte checked from 1 B
// to 16 MiB, all on RDMA rails (transport hint), every rail carrying data.
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "../unit/verbs/simverbs_env.h"
#include "config/config.h"
#include "engine/default_providers.h"
#include "engine/engine.h"
#include "wire/memory_handle.h"

using namespace tent;

namespace {

constexpr std::size_t kMax = 16u << 20;
const std::uint64_t kSizes[] = {1, 3, 4096, 65536, 262145, 1u << 20, (4u << 20) + 5, kMax};

std::unique_ptr<Engine> make_engine() {
    Config c;
    Source api;
    api.kind = Source::Kind::Api;
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::ConnectTimeoutMs, "5000", api);
    // A data test, not a timeout test: an ACK timer a loaded machine cannot
    // outrun (4.096 us x 2^17 x 8 tries = 4.3 s).
    (void)c.set(Knob::VerbsQpTimeout, "17", api);
    auto providers = make_default_providers(c);
    if (!providers) return nullptr;
    auto e = Engine::create(c, std::move(*providers));
    return e ? std::move(*e) : nullptr;
}

bool write_all(int fd, const void* p, std::size_t n) {
    for (auto* b = static_cast<const char*>(p); n;) {
        ssize_t k = ::write(fd, b, n);
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool read_all(int fd, void* p, std::size_t n) {
    for (auto* b = static_cast<char*>(p); n;) {
        ssize_t k = ::read(fd, b, n);
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

// Target region plus an echo of each message, sent from a registered buffer
// (verbs sends need an lkey); the parent waits for each echo before the next.
[[noreturn]] void child(int to_parent, int from_parent) {
    alarm(120);
    auto e = make_engine();
    if (!e) _exit(2);
    std::vector<std::uint8_t> region(kMax, 0), echo(kMax, 0);
    auto reg = e->register_memory(region.data(), region.size(), wire::kAccessAll);
    auto ereg = e->register_memory(echo.data(), echo.size(), wire::kAccessAll);
    if (!reg || !ereg) _exit(3);
    auto key = wire::encode_memory_handle((*reg)->handle);
    std::uint64_t addr = reinterpret_cast<std::uint64_t>(region.data());
    std::uint32_t blob_len = static_cast<std::uint32_t>(e->address().size());
    e->set_recv_callback([&](PeerId peer, std::span<const std::uint8_t> m) {
        std::memcpy(echo.data(), m.data(), m.size());
        PostOptions o;
        o.hint = TransportKind::Rdma;
        (void)e->post_send(peer, echo.data(), m.size(), o);
    });
    if (!write_all(to_parent, &blob_len, 4) || !write_all(to_parent, e->address().data(), blob_len) ||
        !write_all(to_parent, key->data(), key->size()) || !write_all(to_parent, &addr, 8))
        _exit(4);
    char byte;
    (void)!::read(from_parent, &byte, 1);
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
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (out.size() < want && std::chrono::steady_clock::now() < deadline)
        if (e.poll(out, want - out.size()) == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    return out;
}

void run(int devices) {
    verbstest::isolate();
    setenv("SIMVERBS_DEVICES", std::to_string(devices).c_str(), 1);
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
    auto r3 = e->register_memory(echo.data(), kMax, wire::kAccessAll);
    cr_assert(r1.is_ok() && r2.is_ok() && r3.is_ok());

    PostOptions o;
    o.hint = TransportKind::Rdma;
    unsigned seed = 1;
    for (std::uint64_t size : kSizes) {
        fill(src, size, seed++);
        std::uint64_t off = (kMax - size) / 3;
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
        std::memset(echo.data(), 0, size);
        cr_assert(e->post_recv(echo.data(), kMax, 1).is_ok());
        cr_assert(e->post_send(*peer, src.data(), size, o).is_ok());
        c = wait_completions(*e, 2);
        cr_assert_eq(c.size(), 2u, "send/echo of %llu bytes incomplete", (unsigned long long)size);
        for (auto& x : c) cr_expect(x.status.is_ok(), "%s", x.status.to_string().c_str());
        cr_expect(std::memcmp(echo.data(), src.data(), size) == 0, "echo of %llu bytes differs",
                  (unsigned long long)size);
    }
    auto stats = e->rail_stats();
    int rdma = 0;
    for (auto& s : stats) {
        if (s.kind != TransportKind::Rdma) continue;
        ++rdma;
        cr_expect_gt(s.bytes, 1u << 20, "rail %s carried %llu bytes", s.name.c_str(), (unsigned long long)s.bytes);
    }
    cr_expect_eq(rdma, devices);
    close(down[1]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    e.reset();
    verbstest::remove_fabric();
}

} // namespace

Test(engine_verbs, one_rail, .timeout = 120) { run(1); }
Test(engine_verbs, two_rails, .timeout = 120) { run(2); }
Test(engine_verbs, four_rails, .timeout = 120) { run(4); }
