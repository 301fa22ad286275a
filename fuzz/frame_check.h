// The promises of the frame decoder, checked on any bytes: decode_frame
// accepts only canonical frames (re-encoding gives back exactly the input),
// and the stream scanner agrees with it (what decodes is one complete frame;
// what the scanner rejects does not decode).
#pragma once

#include <span>
#include <vector>

#include "fuzz_check.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"

inline tent::Result<tent::wire::Frame> check_frame_bytes(std::span<const std::uint8_t> bytes) {
    using namespace tent::wire;
    auto frame = decode_frame(bytes);
    FrameScan scan = scan_frame(bytes);
    if (frame) {
        auto again = encode_frame(*frame);
        fuzz_require(again.is_ok(), "a decoded frame encodes");
        fuzz_require(std::vector<std::uint8_t>(bytes.begin(), bytes.end()) == *again,
                     "a decoded frame re-encodes to the same bytes");
        fuzz_require(scan.state == ScanState::Complete && scan.bytes == bytes.size(),
                     "the scanner sees a decodable frame as one complete frame");
    } else {
        fuzz_require(!frame.status().message().empty(), "a rejected frame says why");
        if (scan.state == ScanState::Complete) fuzz_require(scan.bytes <= bytes.size(), "a complete scan fits");
    }
    if (scan.state == ScanState::Error) fuzz_require(!frame, "what the scanner rejects does not decode");
    if (scan.state == ScanState::NeedMore) fuzz_require(scan.bytes > 0, "the scanner asks for at least one byte");
    return frame;
}

// A copy of bytes whose type byte (offset 5) is one of types: kept when it
// already is, else replaced by types[byte % count], so that a target spends
// its time on its own frame types and its seeds stay as they are.
template <std::size_t N>
std::vector<std::uint8_t> with_type_among(std::span<const std::uint8_t> bytes, const tent::wire::FrameType (&types)[N]) {
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
    if (copy.size() <= 5) return copy;
    for (auto t : types)
        if (copy[5] == static_cast<std::uint8_t>(t)) return copy;
    copy[5] = static_cast<std::uint8_t>(types[copy[5] % N]);
    return copy;
}
