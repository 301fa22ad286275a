// Shared by the TCP rail tests: two TcpRails joined over real loopback TCP
// (listener, bound connect, Hello exchange), registrations the target side
// checks, and a bounded loop that drives both rails until enough
// completions arrived.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "transport/tcp/tcp_hello.h"
#include "transport/tcp/tcp_rail.h"
#include "transport/tcp/tcp_socket.h"
#include "wire/memory_handle.h"

namespace tcp_test {

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

inline constexpr std::uint64_t kConnection = 0x7E57C0EEull;
inline constexpr std::uint16_t kRailId = 3;

// Registrations of one side, by TCP key.
struct Regions {
    std::map<std::uint32_t, wire::MemoryHandle> by_key;
    void add(std::uint32_t key, void* addr, std::uint64_t length, std::uint16_t access) {
        by_key[key] = wire::MemoryHandle{reinterpret_cast<std::uintptr_t>(addr), length, access, key, {}};
    }
    RegionLookup lookup() {
        return [this](std::uint32_t key) -> const wire::MemoryHandle* {
            auto it = by_key.find(key);
            return it == by_key.end() ? nullptr : &it->second;
        };
    }
};

inline TcpRailParams test_params(std::size_t sndbuf = 0) {
    TcpRailParams p;
    p.silence.interval = 1s;
    p.silence.dead_after = 5;
    p.buffers.send = sndbuf;
    return p;
}

// Two connected sockets: [0] the initiator's (connected from 127.0.0.1 to a
// listener on 127.0.0.2), [1] the accepted one, Hello exchanged.
inline std::pair<UniqueFd, UniqueFd> connected_sockets(std::size_t sndbuf = 0) {
    auto listener = TcpListener::listen(TcpAddress{"127.0.0.2", 0});
    if (!listener) return {};
    auto client = tcp_connect(TcpAddress{"127.0.0.1", 0}, listener->address(), 2s, SocketBuffers{sndbuf, 0});
    if (!client) return {};
    TcpRailHello hello{.connection_id = kConnection, .engine_id = 11, .rail = {.rail_id = kRailId, .kind = wire::RailKind::Tcp}};
    if (!write_frame_blocking(client->get(),
                              wire::Frame{.flags = 0, .rail_id = kRailId, .connection_id = kConnection, .seq = 0,
                                          .body = wire::Hello{.engine_id = 11, .rails = {hello.rail}}},
                              SteadyClock::instance().now() + 2s))
        return {};
    std::optional<UniqueFd> server;
    for (int i = 0; i < 200 && !server; ++i) {
        auto accepted = listener->accept(SocketBuffers{sndbuf, 0});
        if (!accepted) return {};
        if (*accepted) server = std::move(**accepted);
        else ::poll(nullptr, 0, 10);
    }
    if (!server) return {};
    auto got = tcp_hello_receive(server->get(), 2s);
    if (!got) return {};
    if (!tcp_hello_reply(server->get(), *got, 22, wire::HelloResult::Accepted, 2s)) return {};
    auto ack = read_frame_blocking(client->get(), SteadyClock::instance().now() + 2s);
    if (!ack) return {};
    return {std::move(*client), std::move(*server)};
}

struct RailPair {
    Regions regions_a, regions_b;
    std::unique_ptr<TcpRail> a, b;
    std::vector<RailCompletion> done_a, done_b;
    std::vector<std::vector<std::uint8_t>> messages_b; // header + payload as received at b
    std::vector<std::vector<std::uint8_t>> headers_b;

    bool ok() const { return a && b; }

    // Progress both rails until `a` has `want` completions, bounded by count
    // and wall time; returns whether they arrived.
    bool drive_until(std::size_t want, std::chrono::milliseconds limit = 10s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        auto on_b = [this](const RailMessage& m) {
            headers_b.emplace_back(m.header.begin(), m.header.end());
            messages_b.emplace_back(m.payload.begin(), m.payload.end());
        };
        for (int round = 0; round < 1000000 && std::chrono::steady_clock::now() < deadline; ++round) {
            a->progress(done_a, nullptr);
            b->progress(done_b, on_b);
            if (done_a.size() >= want) return true;
            pollfd p[2] = {{a->wait_fd(), static_cast<short>(POLLIN | (a->wants_write() ? POLLOUT : 0)), 0},
                           {b->wait_fd(), static_cast<short>(POLLIN | (b->wants_write() ? POLLOUT : 0)), 0}};
            ::poll(p, 2, 5);
        }
        return done_a.size() >= want;
    }
};

inline std::unique_ptr<RailPair> make_pair(const Clock& clock = SteadyClock::instance(), std::size_t sndbuf = 0) {
    auto pair = std::make_unique<RailPair>();
    auto [fa, fb] = connected_sockets(sndbuf);
    if (!fa.valid() || !fb.valid()) return pair;
    auto a = TcpRail::create(std::move(fa), {kConnection, kRailId, "tcp a"}, test_params(sndbuf),
                             pair->regions_a.lookup(), clock);
    auto b = TcpRail::create(std::move(fb), {kConnection, kRailId, "tcp b"}, test_params(sndbuf),
                             pair->regions_b.lookup(), clock);
    if (!a || !b) return pair;
    pair->a = std::move(*a);
    pair->b = std::move(*b);
    return pair;
}

// Ops as the engine posts them.
inline RailOp write_op(std::uint64_t cookie, const void* local, std::uint64_t length, std::uintptr_t remote,
                       std::uint32_t key) {
    RailOp op;
    op.cookie = cookie;
    op.opcode = RailOpcode::Write;
    op.local = const_cast<void*>(local);
    op.length = length;
    op.remote_addr = remote;
    op.rkey = key;
    return op;
}
inline RailOp read_op(std::uint64_t cookie, void* local, std::uint64_t length, std::uintptr_t remote,
                      std::uint32_t key) {
    RailOp op = write_op(cookie, local, length, remote, key);
    op.opcode = RailOpcode::Read;
    return op;
}
inline RailOp send_op(std::uint64_t cookie, const void* local, std::uint64_t length,
                      std::span<const std::uint8_t> header = {}) {
    RailOp op = write_op(cookie, local, length, 0, 0);
    op.opcode = RailOpcode::Send;
    op.send_header = header;
    return op;
}
inline RailOp probe_op(std::uint64_t cookie) {
    RailOp op;
    op.cookie = cookie;
    op.opcode = RailOpcode::Probe;
    return op;
}
inline std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

inline std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<std::uint8_t> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& byte : v) {
        x = x * 1664525u + 1013904223u;
        byte = static_cast<std::uint8_t>(x >> 24);
    }
    return v;
}

// Index of the first differing byte, or -1 when equal.
inline long first_difference(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return static_cast<long>(i);
    return -1;
}

} // namespace tcp_test
