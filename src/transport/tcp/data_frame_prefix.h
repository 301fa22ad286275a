// Zero-copy sending of Write, Send and ReadResponse frames. Their data block is the last
// field of the frame (src/wire/data_codec.cpp), so a frame can go out as an
// encoded prefix followed by the caller's bytes straight from its buffer:
// the prefix is the frame encoded with only the data that precedes the
// tail, its payload and data lengths enlarged by the tail's length.
//
//   Frame f{..., .body = Write{rkey, addr, nullopt, {}}};
//   auto head = encode_data_frame_prefix(f, n);  // then writev(head, buffer[0..n))
//
// The bytes on the wire are exactly encode_frame() of the frame whose data
// is its own data followed by the tail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "wire/frame.h"

namespace tent::tcp {

// Code::InvalidArgument for other frame types, an invalid frame, or data
// plus tail above the wire's maximum.
Result<std::vector<std::uint8_t>> encode_data_frame_prefix(const wire::Frame& frame, std::size_t tail_length);

} // namespace tent::tcp
