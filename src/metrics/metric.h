// Counter and Gauge: the values behind every time series. Updates are single
// relaxed atomic operations, cheap enough for the data path; readers
// (rendering, the stats segment) see each value whole but not a cross-metric
// snapshot — the stats segment's seqlock provides that.
#pragma once

#include <atomic>
#include <cstdint>

namespace tent {

// Only goes up (Prometheus resets are process restarts).
class Counter {
public:
    void inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
    std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> value_{0};
};

// Goes up and down: a level such as inflight bytes or a rail's health.
class Gauge {
public:
    void set(double v) { value_.store(v, std::memory_order_relaxed); }
    void add(double d) { value_.fetch_add(d, std::memory_order_relaxed); }
    void sub(double d) { value_.fetch_sub(d, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

} // namespace tent
