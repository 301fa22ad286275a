// Slow-rail detection: a rail whose completion latency stays well above its
// peers' is *degraded* (used last), never paused for slowness alone.
//
// Each rail keeps the latency samples (kLatencySampleMaxBytes says which
// completions are samples) of the last slow_rail_window_secs (at most
// kMaxLatencySamples); its latency is their median, which a few outliers
// cannot move. Its peers are the other rails of its kind (RDMA, TCP) to the
// same remote peer that are neither paused nor degraded; the reference is
// the median of their medians.
//
// A degraded rail takes traffic only when no healthy rail is usable, so it
// gathers no fresh samples to be restored by. Once it has carried none for
// its retry interval (1 s, doubled for each degradation in a row, at most
// the window; the count halves for each window the rail then spends
// healthy) its old samples are dropped and it is tried again: a verdict
// reached on a few unlucky milliseconds costs the rail a second, not a
// whole window, and a rail that is really slow is measured again rarely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "common/clock.h"

namespace tent {

inline constexpr std::size_t kMaxLatencySamples = 256;

// A latency sample is the time from post to completion of a one-sided piece
// of at most this many bytes that had its rail to itself throughout: a
// larger piece's time is mostly its transfer (how a rail's bandwidth is
// judged is the delivery rate's business, delivery_rate.h), a piece that
// queued behind others measures the queue, and a message's completion
// waits for the receiver (its posted buffers; over TCP the acknowledgement
// that rides on its next frame).
inline constexpr std::uint64_t kLatencySampleMaxBytes = 4096;

// A degraded rail is restored only once its latency is below this fraction
// of the degrade threshold, so a rail hovering at the threshold does not flap.
inline constexpr double kSlowRailHysteresis = 0.8;

// First retry interval of a degraded rail (doubled as pause cooldowns are,
// pause_backoff.h).
inline constexpr Duration kSlowRailRetryBase = std::chrono::seconds(1);

class LatencyWindow {
public:
    explicit LatencyWindow(Duration window = std::chrono::seconds(10)) : window_(window) {}

    void add(Duration latency, TimePoint now);
    // Drops samples older than the window.
    void expire(TimePoint now);
    // Samples inside (now - window, now].
    std::size_t count(TimePoint now) const;
    // Median of the samples inside the window, if there are at least min_samples.
    std::optional<Duration> median(TimePoint now, std::size_t min_samples) const;
    // When the newest sample was taken, if any is kept.
    std::optional<TimePoint> newest() const;
    void clear() { samples_.clear(); }

private:
    struct Sample {
        TimePoint at;
        Duration latency;
    };
    Duration window_;
    std::deque<Sample> samples_;
};

// Median of a list of durations (upper median for even sizes); nullopt if empty.
std::optional<Duration> median_of(std::vector<Duration> values);

// Should a rail with latency `rail` be degraded (or stay degraded, when
// `currently_degraded`) given its peers' reference latency?
bool slow_rail_verdict(Duration rail, Duration reference, double factor, bool currently_degraded);

// How long a rail degraded `level` times in a row (1 = the first) may go
// without a sample before it is tried again: kSlowRailRetryBase doubled
// level - 1 times, at most `window`.
Duration slow_rail_retry(unsigned level, Duration window);

} // namespace tent
