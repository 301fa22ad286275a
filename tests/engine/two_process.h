// Two tent engines in two processes: the test process (parent) and a forked
// child that serves a target region and echoes every message. The child
// publishes its engine address, region handle and region address over a pipe;
// the parent ends it by closing the other pipe. What differs per transport
// (configuration, the child's echo, the rail checks) stays in each test.
#pragma once

#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "../unit/engine/engine_pair.h"
#include "config/config.h"
#include "engine/default_providers.h"
#include "engine/engine.h"
#include "wire/memory_handle.h"

namespace tent::test {

// The child's target region, and the largest message of the data tests.
constexpr std::size_t kTwoProcessMax = 16u << 20;
// From 1 B to 16 MiB, with odd sizes that end mid-chunk.
inline constexpr std::uint64_t kTwoProcessSizes[] = {1, 3, 4096, 65536, 262145, 1u << 20, (4u << 20) + 5,
                                                     kTwoProcessMax};

// What both tests' configurations start from: the control channel on loopback.
inline Config loopback_control_config() {
    Config c;
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api_source());
    return c;
}

// An engine with the default providers (TCP, and verbs when devices exist).
inline std::unique_ptr<Engine> make_engine(const Config& config) {
    auto providers = make_default_providers(config);
    if (!providers) return nullptr;
    auto e = Engine::create(config, std::move(*providers));
    return e ? std::move(*e) : nullptr;
}

inline bool write_all(int fd, const void* p, std::size_t n) {
    for (auto* b = static_cast<const char*>(p); n;) {
        ssize_t k = ::write(fd, b, n);
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

inline bool read_all(int fd, void* p, std::size_t n) {
    for (auto* b = static_cast<char*>(p); n;) {
        ssize_t k = ::read(fd, b, n);
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

// What the child publishes: where to connect and which memory to target.
struct ChildInfo {
    std::vector<std::uint8_t> address;  // the child engine's address blob
    std::vector<std::uint8_t> key;      // wire form of its region's handle
    std::uint64_t remote = 0;           // its region's address
};

// The child's side. Echo is default-constructible with `bool install(Engine&)`
// setting the recv callback; it is declared before the engine so it outlives
// the callback. Exit codes: 0 done (parent closed its pipe), 2 no engine,
// 3 no registration or echo, 4 parent gone. alarm() bounds a stuck child.
template <class Echo>
[[noreturn]] void serve_as_child(const Config& config, unsigned alarm_s, int to_parent, int from_parent) {
    alarm(alarm_s);
    Echo echo;
    auto e = make_engine(config);
    if (!e) _exit(2);
    std::vector<std::uint8_t> region(kTwoProcessMax, 0);
    auto reg = e->register_memory(region.data(), region.size(), wire::kAccessAll);
    if (!reg || !echo.install(*e)) _exit(3);
    auto key = handle_bytes(**reg);
    std::uint64_t addr = reinterpret_cast<std::uint64_t>(region.data());
    auto blob_len = static_cast<std::uint32_t>(e->address().size());
    if (!write_all(to_parent, &blob_len, 4) || !write_all(to_parent, e->address().data(), blob_len) ||
        !write_all(to_parent, key.data(), key.size()) || !write_all(to_parent, &addr, 8))
        _exit(4);
    char byte;
    (void)!::read(from_parent, &byte, 1);  // EOF: the parent is done
    e.reset();
    _exit(0);
}

// The parent's handle on the child: started by start_child(), read by
// read_info(), ended by finish() (or killed and reaped if a test aborts).
class ChildProcess {
public:
    // Forks; the child runs serve(to_parent, from_parent) and never returns.
    template <class Serve>
    static ChildProcess start(Serve serve) {
        ChildProcess c;
        int up[2], down[2];
        if (pipe(up) != 0) return c;
        if (pipe(down) != 0) {
            close(up[0]);
            close(up[1]);
            return c;
        }
        c.pid_ = fork();
        if (c.pid_ == 0) {
            close(up[0]);
            close(down[1]);
            serve(up[1], down[0]);
            _exit(1);  // serve never returns; never run the parent's code
        }
        close(up[1]);
        close(down[0]);
        c.from_child_ = up[0];
        c.to_child_ = down[1];
        return c;
    }

    ChildProcess(ChildProcess&& o) noexcept
        : pid_(std::exchange(o.pid_, -1)), from_child_(std::exchange(o.from_child_, -1)),
          to_child_(std::exchange(o.to_child_, -1)) {}
    ChildProcess& operator=(ChildProcess&&) = delete;
    ~ChildProcess() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        for (int fd : {from_child_, to_child_})
            if (fd >= 0) close(fd);
    }

    bool forked() const { return pid_ > 0; }
    pid_t pid() const { return pid_; }

    // The child's published info; false if it died or exited before that.
    bool read_info(ChildInfo& info) {
        std::uint32_t blob_len = 0;
        if (!read_all(from_child_, &blob_len, 4)) return false;
        info.address.resize(blob_len);
        info.key.resize(wire::kMemoryHandleSize);
        return read_all(from_child_, info.address.data(), blob_len) &&
               read_all(from_child_, info.key.data(), info.key.size()) && read_all(from_child_, &info.remote, 8);
    }

    // Closes the child's pipe (its cue to exit) and reaps it; false if
    // waitpid failed. Bounded by the child's alarm.
    bool finish(int& status) {
        close(std::exchange(to_child_, -1));
        pid_t pid = std::exchange(pid_, -1);
        return waitpid(pid, &status, 0) == pid;
    }

private:
    ChildProcess() = default;
    pid_t pid_ = -1;
    int from_child_ = -1;
    int to_child_ = -1;
};

// At each size of kTwoProcessSizes: WRITE into the child's region (at an
// offset), READ it back, and SEND a message the child echoes into a posted
// buffer; every byte compared. o: options of every post (e.g. a transport
// hint); each completion is awaited at most `limit`.
inline void check_every_size(Engine& e, PeerId peer, const ChildInfo& child, PostOptions o,
                             std::chrono::milliseconds limit) {
    constexpr std::size_t kMax = kTwoProcessMax;
    std::vector<std::uint8_t> src(kMax), back(kMax), echo(kMax);
    auto r1 = e.register_memory(src.data(), kMax, wire::kAccessAll);
    auto r2 = e.register_memory(back.data(), kMax, wire::kAccessAll);
    auto r3 = e.register_memory(echo.data(), kMax, wire::kAccessAll);  // verbs receives need an lkey
    cr_assert(r1.is_ok() && r2.is_ok() && r3.is_ok());
    unsigned seed = 1;
    for (std::uint64_t size : kTwoProcessSizes) {
        auto n = static_cast<unsigned long long>(size);
        fill(src, seed++);
        std::uint64_t off = (kMax - size) / 3;
        o.cookie = size;
        cr_assert(e.post_write(peer, src.data(), size, child.key, child.remote + off, o).is_ok());
        auto c = wait_completions(e, 1, limit);
        cr_assert_eq(c.size(), 1u, "write of %llu bytes did not complete", n);
        cr_assert(c[0].status.is_ok(), "write %llu: %s", n, c[0].status.to_string().c_str());
        std::memset(back.data(), 0, size);
        cr_assert(e.post_read(peer, back.data(), size, child.key, child.remote + off, o).is_ok());
        c = wait_completions(e, 1, limit);
        cr_assert_eq(c.size(), 1u);
        cr_assert(c[0].status.is_ok(), "read %llu: %s", n, c[0].status.to_string().c_str());
        cr_expect(std::memcmp(back.data(), src.data(), size) == 0, "write+read of %llu bytes differs", n);

        std::memset(echo.data(), 0, size);
        cr_assert(e.post_recv(echo.data(), kMax, 1000 + size).is_ok());
        cr_assert(e.post_send(peer, src.data(), size, o).is_ok());
        c = wait_completions(e, 2, limit);
        cr_assert_eq(c.size(), 2u, "send/echo of %llu bytes incomplete", n);
        for (auto& x : c) {
            cr_expect(x.status.is_ok(), "%s", x.status.to_string().c_str());
            if (x.op == OpType::Recv) cr_expect_eq(x.length, size);
        }
        cr_expect(std::memcmp(echo.data(), src.data(), size) == 0, "echo of %llu bytes differs", n);
    }
}

} // namespace tent::test
