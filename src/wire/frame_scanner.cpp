#include "wire/frame_scanner.h"

#include "wire/frame_header.h"
#include "wire/protocol.h"

namespace tent::wire {

FrameScan scan_frame(std::span<const uint8_t> buffered) {
    FrameScan scan;
    if (buffered.size() < kHeaderSize) {
        // Reject a stream that cannot be tent's as early as its first byte.
        for (size_t i = 0; i < buffered.size() && i < 4; ++i) {
            if (buffered[i] != static_cast<uint8_t>(kMagic >> (8 * i))) {
                scan.state = ScanState::Error;
                scan.error = Status(Code::InvalidArgument,
                                    "bad magic: byte " + std::to_string(i) + " of the stream is not tent's");
                return scan;
            }
        }
        scan.bytes = kHeaderSize - buffered.size();
        return scan;
    }
    auto header = decode_header(buffered);
    if (!header) {
        scan.state = ScanState::Error;
        scan.error = header.status();
        return scan;
    }
    const size_t total = kHeaderSize + header->payload_length;
    if (buffered.size() < total) {
        scan.bytes = total - buffered.size();
        return scan;
    }
    scan.state = ScanState::Complete;
    scan.bytes = total;
    scan.header = *header;
    return scan;
}

} // namespace tent::wire
