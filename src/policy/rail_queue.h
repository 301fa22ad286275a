// The rail queue: how much one rail has posted at once; the rest of the
// pieces planned for it wait in the engine, in order, until completions
// make room.
//
// A rail's send queue is first in, first out, and what is posted to it
// cannot be taken back or moved ahead. With everything posted at once, the
// final piece of a striped write (chunk_plan.h: posted once all the others
// completed) joined the back of a queue that held the whole backlog: with
// perftest's 128 writes of 1 MiB over four simulated HCAs capped at
// 250 MB/s, 32 MiB a rail, 130 ms. Its write, and with it every later one
// (completions come in posting order), waited that long, the program
// posted in bursts, and the rails ran dry between them (661 to 985 MB/s of
// the 952 the ports allow). Bounded, a final piece waits behind at most
// `bytes` (it is never held: it is 4 KiB and what a write waits for),
// while the rail still has work queued to stay busy until the next
// completion is handled.
#pragma once

#include <cstdint>

#include "config/config.h"

namespace tent {

struct RailQueueParams {
    std::uint64_t bytes = 4 * 1024 * 1024;  // 0: no bound
    static RailQueueParams from_config(const Config& config);
};

// May one more piece be posted to a rail with `posted` bytes outstanding?
// Below the bound, yes, whatever the piece's size (a piece larger than the
// bound would otherwise wait for an empty rail, and the rail would idle
// while its completion is handled).
bool rail_queue_admits(std::uint64_t posted, const RailQueueParams& params);

} // namespace tent
