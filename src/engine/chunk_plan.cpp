#include "engine/chunk_plan.h"

#include <algorithm>

namespace tent {

namespace {

// Pieces of a share are of one size (a multiple of kPieceAlignment where
// the limit allows), not full pieces and a short remainder: a rail's short
// last piece completed soon after the one before it, while its bytes had
// been moving all along, and read as a faster rail (two equal simulated
// HCAs reading 8 MiB, one request at a time: 4.44 MB went 4 x 1 MiB and
// 245 KiB, whose sample read 310 to 340 MB/s on 250 MB/s ports; the next
// shares followed the estimate, 52 to 48).
constexpr std::uint64_t kPieceAlignment = 4096;

void cut(std::vector<PlannedChunk>& out, std::size_t rail, std::uint64_t offset, std::uint64_t length,
         std::uint64_t piece) {
    if (length == 0) {
        out.push_back({rail, offset, 0});
        return;
    }
    const std::uint64_t pieces = (length + piece - 1) / piece;
    const std::uint64_t even = (length + pieces - 1) / pieces;
    const std::uint64_t size =
        std::min(piece, (even + kPieceAlignment - 1) / kPieceAlignment * kPieceAlignment);
    for (std::uint64_t done = 0; done < length;) {
        std::uint64_t n = std::min(size, length - done);
        out.push_back({rail, offset + done, n});
        done += n;
    }
}

} // namespace

std::vector<PlannedChunk> plan_chunks(DeviceSelector& selector, std::span<const RailView> rails,
                                      std::span<const std::uint64_t> max_op_length, std::uint64_t length,
                                      const ChunkPlanParams& params) {
    std::vector<PlannedChunk> out;
    if (rails.empty()) return out;
    std::uint64_t mask = params.device_mask ? params.device_mask : ~std::uint64_t{0};
    auto piece_for = [&](std::size_t rail) {
        std::uint64_t piece = std::max<std::uint64_t>(1, params.chunk_size);
        if (rail < max_op_length.size() && max_op_length[rail] > 0) piece = std::min(piece, max_op_length[rail]);
        return piece;
    };
    if (length <= params.striping_threshold) {
        auto rail = selector.pick(rails, mask, params.caller_numa);
        if (!rail) return out;
        cut(out, *rail, 0, length, piece_for(*rail));
    } else {
        // Each share's pieces, then the rails' pieces in turns (the first of
        // each rail, then the second of each, ...), so that every rail has
        // work from the first posts on: posted rail after rail, the second of
        // two simulated HCAs had its first piece complete about a millisecond
        // after the first's, and its share read slower for it.
        std::vector<std::vector<PlannedChunk>> lanes;
        std::size_t pieces = 0;
        for (const StripeShare& s : selector.stripe(rails, mask, params.caller_numa, length)) {
            cut(lanes.emplace_back(), s.rail, s.offset, s.length, piece_for(s.rail));
            pieces += lanes.back().size();
        }
        out.reserve(pieces);
        for (std::size_t turn = 0; out.size() < pieces; ++turn)
            for (const auto& lane : lanes)
                if (turn < lane.size()) out.push_back(lane[turn]);
    }
    // Final bytes last: move the chunk that ends the transfer to the back.
    auto last = std::find_if(out.begin(), out.end(), [&](const PlannedChunk& c) { return c.offset + c.length == length; });
    if (last != out.end()) std::rotate(last, last + 1, out.end());
    // A write's last chunk waits for all the others: when it is a whole
    // chunk, one rail carries it alone while the others idle (8 MiB over two
    // rails in 1 MiB chunks took 5 chunk times instead of 4). Only its final
    // bytes need to wait, so they become a small piece of their own.
    if (params.final_piece_apart && out.size() > 1 && out.back().length > kFinalPieceBytes) {
        PlannedChunk tail = out.back();
        out.back().length -= kFinalPieceBytes;
        tail.offset += out.back().length;
        tail.length = kFinalPieceBytes;
        out.push_back(tail);
    }
    return out;
}

} // namespace tent
