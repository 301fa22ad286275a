// Test helper: two VerbsRails connected to each other, one on mlx5_0 and one
// on mlx5_1 of this process, so traffic crosses the simulated fabric; plus
// registered buffers on each side and a bounded progress loop.
#pragma once

#include <criterion/criterion.h>
#include <poll.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "transport/verbs/verbs_device.h"
#include "transport/verbs/verbs_memory.h"
#include "transport/verbs/verbs_params.h"
#include "transport/verbs/verbs_rail.h"

namespace verbstest {

constexpr int kRemoteAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

inline tent::Source api_source() {
    tent::Source s;
    s.kind = tent::Source::Kind::Api;
    return s;
}

inline tent::VerbsRailParams params_with(std::initializer_list<std::pair<tent::Knob, const char*>> knobs) {
    tent::Config config;
    for (const auto& [knob, value] : knobs) {
        tent::Status s = config.set(knob, value, api_source());
        cr_assert(s.is_ok(), "%s", s.message().c_str());
    }
    return tent::VerbsRailParams::from_config(config);
}

struct Side {
    std::shared_ptr<tent::VerbsDevice> device;
    std::unique_ptr<tent::VerbsRail> rail;
    std::vector<std::uint8_t> buf;
    std::unique_ptr<tent::VerbsMemoryRegion> mr;
};

struct RailPair {
    Side a, b;  // a on mlx5_0, b on mlx5_1
    std::vector<tent::RailCompletion> done_a, done_b;
    std::vector<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> received_b;  // header, payload

    RailPair(const tent::VerbsRailParams& params, std::size_t buf_size) {
        open(a, "mlx5_0", params, buf_size);
        open(b, "mlx5_1", params, buf_size);
        tent::Status s = a.rail->connect(b.rail->local_info(), "mlx5_1:1");
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        s = b.rail->connect(a.rail->local_info(), "mlx5_0:1");
        cr_assert(s.is_ok(), "%s", s.message().c_str());
    }

    static void open(Side& side, const char* name, const tent::VerbsRailParams& params, std::size_t buf_size) {
        auto dev = tent::VerbsDevice::open(name);
        cr_assert(dev.is_ok(), "%s (is simverbs loaded?)", dev.status().message().c_str());
        side.device = *dev;
        auto rail = tent::VerbsRail::create(side.device, params, tent::SteadyClock::instance());
        cr_assert(rail.is_ok(), "%s", rail.status().message().c_str());
        side.rail = std::move(*rail);
        side.buf.assign(buf_size, 0);
        auto mr = side.device->register_memory(side.buf.data(), side.buf.size(), kRemoteAccess);
        cr_assert(mr.is_ok(), "%s", mr.status().message().c_str());
        side.mr = std::move(*mr);
    }

    // Progress both rails until a has `want_a` completions in total (and b
    // `want_b`), or the deadline passes. Returns whether they arrived.
    bool run_until(std::size_t want_a, std::size_t want_b, std::chrono::milliseconds limit) {
        auto deadline = std::chrono::steady_clock::now() + limit;
        auto on_b = [this](const tent::RailMessage& m) {
            received_b.emplace_back(std::vector<std::uint8_t>(m.header.begin(), m.header.end()),
                                    std::vector<std::uint8_t>(m.payload.begin(), m.payload.end()));
        };
        for (;;) {
            a.rail->progress(done_a, nullptr);
            b.rail->progress(done_b, on_b);
            if (done_a.size() >= want_a && done_b.size() >= want_b) return true;
            auto now = std::chrono::steady_clock::now();
            if (now >= deadline) return false;
            a.rail->prepare_to_wait();  // the next completion wakes the poll below
            b.rail->prepare_to_wait();
            pollfd fds[2] = {{a.rail->wait_fd(), POLLIN, 0}, {b.rail->wait_fd(), POLLIN, 0}};
            poll(fds, 2, 10);  // short: wakeups also come from the timeouts of simverbs itself
        }
    }

    bool run_until_received(std::size_t messages, std::chrono::milliseconds limit) {
        auto deadline = std::chrono::steady_clock::now() + limit;
        while (received_b.size() < messages) {
            if (std::chrono::steady_clock::now() >= deadline) return false;
            run_until(0, 0, std::chrono::milliseconds(0));
            a.rail->prepare_to_wait();  // the next completion wakes the poll below
            b.rail->prepare_to_wait();
            pollfd fds[2] = {{a.rail->wait_fd(), POLLIN, 0}, {b.rail->wait_fd(), POLLIN, 0}};
            poll(fds, 2, 10);
        }
        return true;
    }
};

inline tent::RailOp op(std::uint64_t cookie, tent::RailOpcode opcode, void* local, std::uint64_t length,
                       std::uint32_t lkey, std::uint64_t remote_addr = 0, std::uint32_t rkey = 0) {
    tent::RailOp o;
    o.cookie = cookie;
    o.opcode = opcode;
    o.local = local;
    o.length = length;
    o.lkey = lkey;
    o.remote_addr = remote_addr;
    o.rkey = rkey;
    return o;
}

// Pattern that differs per size and per byte, so a short, shifted or stale
// transfer shows.
inline std::uint8_t pattern(std::size_t size, std::size_t i) {
    return static_cast<std::uint8_t>((i * 131 + size * 7 + (i >> 8)) & 0xff);
}

// cookie -> how many completions it got
inline std::map<std::uint64_t, int> count_cookies(const std::vector<tent::RailCompletion>& done) {
    std::map<std::uint64_t, int> m;
    for (const auto& c : done) ++m[c.cookie];
    return m;
}

} // namespace verbstest
