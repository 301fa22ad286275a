// DeviceSelector: which rail carries the next transfer, and how a large
// transfer is split across rails.
//
// Rails are ranked by, in order:
//   1. health: healthy, then degraded, then paused;
//   2. NUMA tier: an HCA on the caller's NUMA node before the others (when
//      the caller's node is unknown, every rail is in the first tier);
//   3. load: inflight bytes (posted or waiting for the rail) divided by the
//      EWMA bandwidth (the time the rail needs to drain what it already
//      has), lower first;
//   4. an answer waiting: a rail holding an acknowledgement for the peer
//      first, since the transfer then carries it (on a request-response
//      exchange the reply goes back on the rail of the request, one system
//      call and segment per message less at each end, where alternating
//      rails sent every acknowledgement alone);
//   5. round-robin: among rails equal on all of the above, the first at or
//      after a cursor that moves past each rail picked.
// The selector sees rails through a plain view (no monitor, no locks), so the
// ranking is a pure function of that view, the caller's node and the cursor.
// One selector per worker thread: pick() and stripe() move the cursor and are
// not synchronised.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "config/config.h"
#include "health/rail_state.h"
#include "policy/bandwidth_estimate.h"

namespace tent {

struct RailView {
    int device = 0;  // topology device index: bit in the policy device mask
    RailState state = RailState::Healthy;
    int numa_node = -1;              // NUMA node of the HCA, -1 unknown
    std::uint64_t inflight_bytes = 0;
    double ewma_bw = 0.0;            // bytes/s, <= 0 = not measured yet
    bool answer_waiting = false;     // the rail holds an ack for the peer (Rail::holds_answer)
    bool thread_moved = false;       // the engine's own threads move its bytes (a TCP rail)
    double link_rate = 0.0;          // bytes/s of its link as the interface reports it, 0 unknown
};

// Rails whose bytes the engine's own threads move (TCP rails) are split by
// their links' speeds, not by their measured delivery. What such a rail
// delivers depends on the share it is given: one thread reads a
// connection's sockets one after another, and the peer's one thread
// answers its reads the same way, so the rail served second completes
// later for the other's bytes; and TCP's congestion control sends a
// lightly used connection slower (BBR paces it at what it has lately
// delivered; Linux restarts a connection's window after an idle spell).
// Split by those samples, two equal TCP rails drifted to carrying 85% and
// 15% of every 1 MiB read, and under BBR NPmpi then moved 24 Gbit/s at
// 1 MiB, against 58 to 62 with equal shares. So when every such rail of a
// split has a known link speed, they share the bandwidth their estimates
// add up to in proportion to those speeds; otherwise (loopback, a NIC that
// reports no speed) the estimates stand.

struct StripeShare {
    std::size_t rail = 0;  // index into the rail view
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct DeviceSelectorParams {
    BandwidthParams bandwidth;
    std::uint64_t striping_min_chunk = 64 * 1024;
    static DeviceSelectorParams from_config(const Config& config);
};

class DeviceSelector {
public:
    explicit DeviceSelector(DeviceSelectorParams params) : params_(params) {}

    // Rails allowed by device_mask, best first (paused ones last).
    std::vector<std::size_t> rank(std::span<const RailView> rails, std::uint64_t device_mask,
                                  int caller_numa) const;
    // The best rail that is not paused, or nullopt; moves the round-robin cursor.
    std::optional<std::size_t> pick(std::span<const RailView> rails, std::uint64_t device_mask, int caller_numa);

    // Splits [0, length) across the rails of the best usable health class
    // (healthy, else degraded; never paused) so that, given each rail's
    // inflight bytes, all rails finish at the same time: with equal backlogs
    // the shares are proportional to bandwidth. No share is smaller than
    // striping_min_chunk (such rails are dropped); a transfer that is not
    // worth splitting goes whole to the best-ranked rail, as pick() would
    // choose it (and the cursor moves). NUMA locality enters the split only
    // through the measured bandwidth; TCP rails with known link speeds are
    // weighed by those (above). Empty when no rail is usable. Shares are in
    // rank order and cover [0, length) exactly.
    std::vector<StripeShare> stripe(std::span<const RailView> rails, std::uint64_t device_mask, int caller_numa,
                                    std::uint64_t length);

    const DeviceSelectorParams& params() const { return params_; }
    std::size_t cursor() const { return cursor_; }

private:
    DeviceSelectorParams params_;
    std::size_t cursor_ = 0;
};

} // namespace tent
