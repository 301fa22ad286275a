// --stats-interval: a thread that prints one line per rail of the engine to
// standard error every interval, so that a script watching a run can see
// which rail carried traffic when, and once more when it stops.
#ifndef TENT_BENCH_STATS_TICKER_H
#define TENT_BENCH_STATS_TICKER_H

#include <tent/tent.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace tent_bench {

class StatsTicker {
public:
    // Does nothing when interval_ms is 0. t_ms counts from construction.
    StatsTicker(tent_engine_t* engine, std::uint32_t interval_ms);
    StatsTicker(const StatsTicker&) = delete;
    StatsTicker& operator=(const StatsTicker&) = delete;
    // Prints the last sample and joins the thread.
    ~StatsTicker();

private:
    void run();
    void sample();

    tent_engine_t* engine_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point start_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace tent_bench

#endif
