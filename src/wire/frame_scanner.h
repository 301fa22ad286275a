// Framing a TCP byte stream: given the bytes received so far, say whether
// they start with a complete frame, how many more bytes are needed, or that
// the stream is corrupt. The header is checked as soon as it is present (and
// the magic as soon as its first byte is), so a reader never waits for or
// buffers more than one frame of bounded size, whatever the peer announces.
//
//   auto scan = scan_frame(buffered);
//   if (scan.state == ScanState::Complete) {
//       auto frame = decode_frame(std::span(buffered).first(scan.bytes), scan.header);
//       ...; consume scan.bytes;
//   } else if (scan.state == ScanState::NeedMore) { read at least scan.bytes more; }
//   else { close the rail: scan.error says why; }
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"
#include "wire/frame_header.h"

namespace tent::wire {

enum class ScanState {
    NeedMore, // bytes = how many more bytes are needed at least
    Complete, // bytes = length of the complete frame at the start of the buffer
    Error,    // error = why the stream cannot be framed (close the connection)
};

struct FrameScan {
    ScanState state = ScanState::NeedMore;
    size_t bytes = 0;
    Status error;
    FrameHeader header;  // Complete: the frame's header, checked (decode_frame takes it)
};

FrameScan scan_frame(std::span<const uint8_t> buffered);

} // namespace tent::wire
