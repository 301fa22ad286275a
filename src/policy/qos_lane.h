// The QoS lane: one rail of a connection kept clear for small
// higher-priority requests while lower-priority work is in flight.
//
// A rail's send queue is FIFO, so a 4 KiB high-priority message posted on a
// rail that carries a bulk stream waits for the bulk bytes ahead of it (the
// QoS window bounds them, but on a slow port even the window takes a while
// to drain). With two or more rails there is a better answer: while
// lower-priority work is in flight, small higher-priority requests keep to
// one rail (the lane) and lower-priority pieces stay off it, so the message
// finds an empty queue. The lane is held while its level stays active (a
// request of it in the engine or one planned within `hold`) and is given up
// when its rail is paused, fails or falls outside the request's rails; a
// connection with one usable rail has no lane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/clock.h"
#include "policy/priority.h"

namespace tent {

struct QosLane {
    std::optional<std::size_t> rail;  // index into the connection's rails
    Priority level = Priority::High;  // the level it is kept for
    TimePoint last_used{};            // last planned or finished request of that level
};

// One rail a request may use, as the lane decision sees it.
struct LaneCandidate {
    std::size_t rail = 0;
    bool paused = false;
    std::uint64_t lower_inflight = 0;  // bytes in flight below the request's level
    std::uint64_t inflight = 0;        // bytes in flight, every level
};

// Whether the lane still stands at `now` for requests below its level.
bool lane_held(const QosLane& lane, TimePoint now, Duration hold);

// The rail a small (single-piece) request of `level` goes on, or nullopt to
// leave it to the device selector (no lower-priority work in flight, a lane
// held for a higher level, or fewer than two usable rails). Keeps the current lane when it is still
// held for this level and among the candidates; otherwise the candidate
// with the fewest lower-priority bytes in flight (then the fewest bytes,
// then the first). The caller records the answer in the lane.
std::optional<std::size_t> lane_for_small_request(const QosLane& lane, std::span<const LaneCandidate> candidates,
                                                  Priority level, bool lower_active, TimePoint now, Duration hold);

// Whether a piece of `level` must stay off `rail`: the rail is a lane held
// for a higher level, and the request has another unpaused rail to go to.
bool lane_excludes(const QosLane& lane, std::size_t rail, Priority level, bool has_other_rail, TimePoint now,
                   Duration hold);

} // namespace tent
