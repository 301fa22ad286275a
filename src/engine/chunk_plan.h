// How one one-sided transfer is cut into rail operations: a transfer longer
// than striping_threshold is striped over the usable rails with the
// DeviceSelector's shares (bandwidth, backlog, health); a shorter one goes
// whole to the rail pick() chooses. Every share is then cut into pieces of
// one size, at most chunk_size and the rail's max_op_length, and the rails'
// pieces are listed in turns (the first of each rail, then the second, ...).
//
// The piece that ends the transfer comes last in the plan, and of a striped
// write (final_piece_apart) it holds at most the final kFinalPieceBytes: the
// engine posts a write's final piece only after all the others completed,
// so its final bytes land last (a receiver polling the last byte sees the
// whole buffer) while the rails stay busy until the very end. A read has
// no order to keep: one piece fewer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "policy/device_selector.h"

namespace tent {

inline constexpr std::uint64_t kFinalPieceBytes = 4096;

struct PlannedChunk {
    std::size_t rail = 0;  // index into the rail views
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct ChunkPlanParams {
    std::uint64_t striping_threshold = 256 * 1024;
    std::uint64_t chunk_size = 1024 * 1024;
    int caller_numa = -1;
    std::uint64_t device_mask = 0;  // 0: every rail
    bool final_piece_apart = false;  // a write: its final bytes wait for the rest
};

// Empty when no rail is usable. max_op_length[i] belongs to rails[i].
std::vector<PlannedChunk> plan_chunks(DeviceSelector& selector, std::span<const RailView> rails,
                                      std::span<const std::uint64_t> max_op_length, std::uint64_t length,
                                      const ChunkPlanParams& params);

} // namespace tent
