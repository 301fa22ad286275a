#include "tent-bench/stats_ticker.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tent-bench/report.h"

namespace tent_bench {

StatsTicker::StatsTicker(tent_engine_t* engine, std::uint32_t interval_ms)
    : engine_(engine), interval_(interval_ms), start_(std::chrono::steady_clock::now()) {
    if (interval_ms) thread_ = std::thread([this] { run(); });
}

StatsTicker::~StatsTicker() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void StatsTicker::run() {
    auto next = start_ + interval_;
    std::unique_lock lock(mu_);
    for (;;) {
        // Steady ticks: a slow sample does not shift the ones after it.
        bool stopping = cv_.wait_until(lock, next, [this] { return stop_; });
        lock.unlock();
        sample();
        lock.lock();
        if (stopping) return;
        next += interval_;
        auto now = std::chrono::steady_clock::now();
        if (next < now) next = now;
    }
}

void StatsTicker::sample() {
    std::vector<tent_rail_stats_t> stats(64);
    int n = tent_rail_stats(engine_, stats.data(), static_cast<int>(stats.size()));
    if (n < 0) return;
    auto t_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
    std::string out;
    for (int i = 0; i < std::min(n, 64); ++i) out += stats_line(static_cast<std::uint64_t>(t_ms.count()), stats[i]);
    // One write per sample, so that lines of a sample stay together.
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
}

} // namespace tent_bench
