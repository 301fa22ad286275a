// A rail's delivery rate: the bytes it completed over the time it had work
// outstanding, the sample its bandwidth estimate (bandwidth_estimate.h)
// takes, instead of one piece's own post-to-completion time.
//
// A piece's post-to-completion time counts the time it waited behind the
// pieces ahead of it on the same rail: with 32 MiB queued on a 250 MB/s
// rail a 256 KiB piece takes 130 ms, which read as 2 MB/s. The estimate
// then followed the depth of the rail's queue, not its speed, and striping
// (device_selector.h), which divides a transfer by those estimates, fed
// one rail and starved the others by turns (four capped simulated HCAs
// under perftest moved 661 to 985 MB/s of their 952).
//
// A window opens when a piece is posted to an idle rail and collects the
// bytes of the pieces that complete. It gives a sample once it holds
// kDeliverySampleBytes over at least kDeliverySampleTime (completions that
// arrive together do not make an instant the divisor), and when the rail
// falls idle with at least kDeliveryMinBytes in it (a lone piece: its own
// time, as before; less measures latency, not bandwidth). A busy rail's
// next window starts where the last one ended.
#pragma once

#include <cstdint>
#include <optional>

#include "common/clock.h"

namespace tent {

inline constexpr std::uint64_t kDeliverySampleBytes = 256 * 1024;
inline constexpr Duration kDeliverySampleTime = std::chrono::microseconds(100);
inline constexpr std::uint64_t kDeliveryMinBytes = 64 * 1024;

class DeliveryRate {
public:
    // A piece was posted to the rail.
    void posted(TimePoint now);
    // A posted piece completed: `bytes` delivered (0 for one that failed).
    // A sample in bytes/s when this completion ends a window.
    std::optional<double> completed(std::uint64_t bytes, TimePoint now);

private:
    std::uint64_t outstanding_ = 0;
    TimePoint start_{};
    std::uint64_t bytes_ = 0;
};

} // namespace tent
