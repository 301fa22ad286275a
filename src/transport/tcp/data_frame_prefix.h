// Zero-copy sending of Write, Send and ReadResponse frames. Their data block is the last
// field of the frame (src/wire/data_codec.cpp), so a frame can go out as an
// encoded prefix followed by the caller's bytes straight from its buffer:
// the prefix is the frame encoded with only the data that precedes the
// tail, its payload and data lengths enlarged by the tail's length.
//
//   Frame f{..., .body = Write{rkey, addr, nullopt, {}}};
//   std::vector<std::uint8_t> head;
//   encode_data_frame_prefix(f, n, head);  // then writev(head, buffer[0..n))
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

// The prefix replaces what `out` held (its capacity is kept: the rail
// reuses its buffers). Code::InvalidArgument for other frame types, an
// invalid frame, or data plus tail above the wire's maximum.
Status encode_data_frame_prefix(const wire::Frame& frame, std::size_t tail_length, std::vector<std::uint8_t>& out);

} // namespace tent::tcp
