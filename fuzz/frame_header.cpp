// Fuzz target: the fixed frame header and the stream scanner, the first code
// that sees the bytes of a control connection or a TCP rail. A header that
// decodes announces no more payload than its type can have, and the scanner
// never asks a reader to buffer more than that one frame.
#include <span>

#include "frame_check.h"
#include "wire/frame_header.h"
#include "wire/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent::wire;
    std::span<const std::uint8_t> bytes(data, size);
    auto header = decode_header(bytes);
    fuzz_require(!header || size >= kHeaderSize, "a header decodes only from a full header's bytes");
    if (header) {
        fuzz_require(is_known_frame_type(static_cast<std::uint8_t>(header->type)), "a decoded header has a known type");
        fuzz_require(header->payload_length <= max_payload_length(header->type),
                     "a decoded header's payload length is within its type's bound");
        fuzz_require((header->flags & ~allowed_flags(header->type)) == 0, "a decoded header has allowed flags only");
    }
    FrameScan scan = scan_frame(bytes);
    if (size >= kHeaderSize)
        fuzz_require((scan.state == ScanState::Error) == !header, "the scanner rejects exactly the bad headers");
    if (scan.state == ScanState::NeedMore) {
        const std::size_t wanted = size + scan.bytes;
        fuzz_require(header ? wanted == kHeaderSize + header->payload_length : wanted == kHeaderSize,
                     "the scanner asks for exactly the rest of one bounded frame");
    }
    (void)check_frame_bytes(bytes);
    return 0;
}
