// The QoS window: how much lower-priority work one rail keeps in flight
// while higher-priority requests are active.
//
// The engine's QoS queues decide which request starts first, but a rail's
// send queue is FIFO: a high-priority message posted behind eight 1 MiB
// low-priority writes waits for all of them. So while a higher level is
// active (a request of that level in the engine, or one finished within
// `hold`), a rail admits a piece of level p only if the bytes in flight on
// it at level p and below stay within `window` (one piece is always
// admitted, so nothing starves), and requests of level p are cut into
// pieces of half the window, so that two of them keep the rail busy. With
// no higher level active the window is open and bulk traffic keeps its full
// depth.
#pragma once

#include <array>
#include <cstdint>

#include "common/clock.h"
#include "config/config.h"
#include "policy/priority.h"

namespace tent {

struct QosWindowParams {
    std::uint64_t window = 64 * 1024;  // 0: no window
    Duration hold{std::chrono::milliseconds(10)};
    static QosWindowParams from_config(const Config& config);
};

// Which priority levels are active now. Not synchronised.
class PriorityActivity {
public:
    void started(Priority p) { ++active_[index(p)]; }
    void finished(Priority p, TimePoint now);
    // A level strictly above p has a request in the engine or finished one
    // within hold before now.
    bool higher_active(Priority p, TimePoint now, Duration hold) const;
    // A level strictly below p has a request in the engine.
    bool lower_active(Priority p) const;
    // Requests of level p in the engine now.
    std::uint64_t active(Priority p) const { return active_[index(p)]; }

private:
    static std::size_t index(Priority p) { return static_cast<std::size_t>(p); }
    std::array<std::uint64_t, kPriorityCount> active_{};
    std::array<TimePoint, kPriorityCount> last_finished_{};
    std::array<bool, kPriorityCount> ever_finished_{};
};

// May a piece of level p go on a rail that has `inflight_at_or_below` bytes
// of level p and lower priority in flight?
bool qos_admits(std::uint64_t piece_bytes, std::uint64_t inflight_at_or_below, bool higher_active,
                const QosWindowParams& params);

// The largest piece a request of level p is cut into now.
std::uint64_t qos_piece_size(std::uint64_t chunk_size, bool higher_active, const QosWindowParams& params);

} // namespace tent
