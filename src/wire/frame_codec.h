// Encoding and decoding of whole frames: pure functions, no I/O.
//
//   Frame f{.connection_id = conn, .seq = 7, .body = Send{.data = bytes}};
//   auto wire = encode_frame(f);             // Result<std::vector<uint8_t>>
//   auto back = decode_frame(*wire);         // Result<Frame>, == f
//
// decode_frame accepts exactly one frame and rejects, with
// Code::InvalidArgument and a precise reason, every input that is not one:
// short buffers, bad magic, unsupported version, unknown type, bad header
// length, disallowed flags, oversize or mismatched lengths, trailing bytes,
// and field values that contradict each other. encode_frame refuses to
// produce a frame decode_frame would reject.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "wire/frame.h"
#include "wire/frame_header.h"

namespace tent::wire {

// Appends the encoded frame to out (reuse one vector to avoid allocations).
// On error out is left as it was.
Status encode_frame(const Frame& frame, std::vector<uint8_t>& out);
Result<std::vector<uint8_t>> encode_frame(const Frame& frame);

// Decodes bytes, which must hold exactly one frame.
Result<Frame> decode_frame(std::span<const uint8_t> bytes);
// The same for a frame whose header scan_frame() has decoded and checked
// (FrameScan::header): a stream reader decodes each header once.
Result<Frame> decode_frame(std::span<const uint8_t> bytes, const FrameHeader& header);

// The checks encode_frame applies before writing anything.
Status validate_frame(const Frame& frame);

} // namespace tent::wire
