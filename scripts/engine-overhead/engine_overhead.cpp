// engine-overhead: what one operation costs the engine itself. Two engines
// in this process joined by one loopback rail (a memcpy, no transport, no
// simulator), one thread posting WRITEs with a fixed number in flight and
// sleeping in Engine::wait() when all are, as tent-bench does. Prints, per
// size and depth, operations per second and the wall-clock and CPU time
// (every thread of the process) per operation. tent's configuration files
// and TENT_* variables apply (e.g. TENT_PROGRESS_SPIN_US).
//
// usage: engine-overhead [SECONDS]   (default 1, at most 60)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/engine.h"
#include "../../tests/support/loopback_provider.h"
#include "wire/memory_handle.h"

namespace {

using namespace tent;
using Clock = std::chrono::steady_clock;

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return s(u.ru_utime) + s(u.ru_stime);
}

struct Pair {
    std::unique_ptr<Engine> a, b;
    PeerId peer = 0;
};

bool make_pair(Pair& p) {
    auto fabric = std::make_shared<LoopbackFabric>(1, std::vector<unsigned>{0});
    // The configuration files and TENT_* variables apply, so that a knob's
    // effect on the cost can be measured; both engines are in this process.
    LoadResult loaded = load_config();
    if (!loaded.ok()) {
        std::fprintf(stderr, "engine-overhead: %s\n", loaded.error_text().c_str());
        return false;
    }
    Config& config = loaded.config;
    Source api;
    api.kind = Source::Kind::Api;
    (void)config.set(Knob::ControlAddress, "127.0.0.1", api);
    for (auto* e : {&p.a, &p.b}) {
        std::vector<std::unique_ptr<TransportProvider>> providers;
        providers.push_back(std::make_unique<LoopbackProvider>(fabric));
        auto r = Engine::create(config, std::move(providers));
        if (!r) {
            std::fprintf(stderr, "engine-overhead: %s\n", r.status().to_string().c_str());
            return false;
        }
        *e = std::move(*r);
    }
    auto peer = p.a->connect(p.b->address());
    if (!peer) {
        std::fprintf(stderr, "engine-overhead: connect: %s\n", peer.status().to_string().c_str());
        return false;
    }
    p.peer = *peer;
    return true;
}

// One run: WRITEs of `size` bytes, `depth` in flight, for `seconds`.
bool measure(Pair& p, std::size_t size, unsigned depth, double seconds) {
    std::vector<std::uint8_t> src(size * depth, 0x5a), dst(size * depth, 0);
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    if (!rs || !rd) {
        std::fprintf(stderr, "engine-overhead: registration failed\n");
        return false;
    }
    auto encoded = wire::encode_memory_handle((*rd)->handle);
    const std::vector<std::uint8_t> key(encoded->begin(), encoded->end());
    const auto base = reinterpret_cast<std::uint64_t>(dst.data());
    std::uint64_t posted = 0, done = 0, failed = 0;
    std::vector<EngineCompletion> completions;
    const double cpu_start = cpu_seconds();
    const Clock::time_point start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    for (Clock::time_point now = start;; now = Clock::now()) {
        while (now < end && posted - done < depth) {
            const std::size_t slot = posted % depth;
            PostOptions o;
            o.cookie = posted;
            if (!p.a->post_write(p.peer, src.data() + slot * size, size, key, base + slot * size, o)) {
                std::fprintf(stderr, "engine-overhead: post failed\n");
                return false;
            }
            ++posted;
        }
        if (now >= end && done == posted) break;
        if (now > end + std::chrono::seconds(10)) {
            std::fprintf(stderr, "engine-overhead: %llu operations did not complete\n",
                         static_cast<unsigned long long>(posted - done));
            return false;
        }
        completions.clear();
        if (p.a->poll(completions, depth) == 0) {
            (void)p.a->wait(std::chrono::milliseconds(10));
            continue;
        }
        for (const auto& c : completions) failed += !c.status.is_ok();
        done += completions.size();
    }
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu = cpu_seconds() - cpu_start;
    (void)p.a->deregister_memory((*rs)->id);
    (void)p.b->deregister_memory((*rd)->id);
    if (failed || done == 0) {
        std::fprintf(stderr, "engine-overhead: %llu of %llu operations failed\n",
                     static_cast<unsigned long long>(failed), static_cast<unsigned long long>(done));
        return false;
    }
    const double n = static_cast<double>(done);
    std::printf("engine overhead: %zu B writes, depth %u: %.0f ops/s, %.2f us wall and %.2f us CPU per operation\n",
                size, depth, n / wall, wall / n * 1e6, cpu / n * 1e6);
    return true;
}

} // namespace

int main(int argc, char** argv) {
    double seconds = 1;
    if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        std::printf("usage: engine-overhead [SECONDS]   (each of the four runs, default 1, at most 60)\n");
        return 0;
    }
    if (argc > 2) {
        std::fprintf(stderr, "usage: engine-overhead [SECONDS]\n");
        return 2;
    }
    if (argc == 2) {
        char* rest = nullptr;
        seconds = std::strtod(argv[1], &rest);
        if (!rest || *rest || !(seconds > 0 && seconds <= 60)) {
            std::fprintf(stderr, "engine-overhead: SECONDS wants a number in (0, 60], not '%s'\n", argv[1]);
            return 2;
        }
    }
    Pair p;
    if (!make_pair(p)) return 1;
    for (std::size_t size : {std::size_t{64}, std::size_t{65536}})
        for (unsigned depth : {1u, 8u})
            if (!measure(p, size, depth, seconds)) return 1;
    return 0;
}
