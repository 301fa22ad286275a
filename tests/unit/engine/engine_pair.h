// Two engines in one process joined by loopback rails (tests/support/loopback_provider.h),
// connected over their real control channel on 127.0.0.1.
#pragma once

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "config/config.h"
#include "engine/engine.h"
#include "../../support/loopback_provider.h"
#include "wire/memory_handle.h"

namespace tent::test {

inline Source api_source() {
    Source s;
    s.kind = Source::Kind::Api;
    return s;
}

inline Config loopback_config() {
    Config c;
    Source api = api_source();
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::ChunkSize, "256K", api);
    (void)c.set(Knob::StripingThreshold, "64K", api);
    (void)c.set(Knob::SendFragmentSize, "4K", api);
    (void)c.set(Knob::StripingMinChunk, "16K", api);
    // The tests break rails on purpose and expect every rail to be used until
    // then; on a loaded machine a loopback rail's latency is scheduler noise,
    // and a rail judged slow would take no traffic (a CI run saw that).
    (void)c.set(Knob::SlowRailFactor, "1000", api);
    return c;
}

struct EnginePair {
    std::shared_ptr<LoopbackFabric> fabric;
    std::unique_ptr<Engine> a, b;
    PeerId a_to_b = 0;

    explicit EnginePair(std::size_t rails, std::vector<unsigned> delays = {0, 3, 1, 5},
                        const Config& config = loopback_config()) {
        fabric = std::make_shared<LoopbackFabric>(rails, delays);
        for (auto* e : {&a, &b}) {
            std::vector<std::unique_ptr<TransportProvider>> p;
            p.push_back(std::make_unique<LoopbackProvider>(fabric));
            auto r = Engine::create(config, std::move(p));
            if (r) *e = std::move(*r);
        }
        if (a && b) {
            auto peer = a->connect(b->address());
            if (peer) a_to_b = *peer;
        }
    }
};

inline PostOptions with_cookie(std::uint64_t cookie, Priority priority = Priority::Medium) {
    PostOptions o;
    o.cookie = cookie;
    o.priority = priority;
    return o;
}

// Waits (bounded by limit) until `want` completions arrived on e.
inline std::vector<EngineCompletion> wait_completions(Engine& e, std::size_t want,
                                                      std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::vector<EngineCompletion> out;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (out.size() < want && std::chrono::steady_clock::now() < deadline) {
        if (e.poll(out, want - out.size()) == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return out;
}

// The wire form of a registration, as a peer passes it to post_write/read.
// One counter of RailStats summed over the engine's rails (rail_stats()
// is up to date with what a poll returned).
template <class Counter>
std::uint64_t rail_total(Engine& e, Counter RailStats::*counter) {
    std::uint64_t n = 0;
    for (const RailStats& s : e.rail_stats()) n += static_cast<std::uint64_t>(s.*counter);
    return n;
}

inline std::vector<std::uint8_t> handle_bytes(const Registration& reg) {
    auto enc = wire::encode_memory_handle(reg.handle);
    return std::vector<std::uint8_t>(enc->begin(), enc->end());
}

// A reproducible byte pattern per seed (xorshift), so every byte can be checked.
inline void fill(std::vector<std::uint8_t>& v, unsigned seed) {
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& b : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = static_cast<std::uint8_t>(x);
    }
}

} // namespace tent::test
