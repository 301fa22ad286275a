// The fixed 32-byte header in front of every frame, little-endian:
//
//   offset size field
//        0    4 magic           kMagic ("TENT")
//        4    1 version         kMinProtocolVersion..kMaxProtocolVersion
//        5    1 type            FrameType
//        6    2 flags           kFlag* allowed for the type
//        8    2 header length   kHeaderSize (room to grow in a later version)
//       10    2 rail id
//       12    4 payload length  bytes after the header, <= max_payload_length(type)
//       16    8 connection id   0 only in an AddressBlob
//       24    8 sequence number >= 1 if carries_sequence(type), else 0
//
// decode_header checks every field before anything trusts the payload length,
// so a stream reader never waits for, or buffers, more than one bounded frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"
#include "wire/byte_writer.h"
#include "wire/frame_type.h"

namespace tent::wire {

// Where the payload length sits, for an encoder that learns it last.
inline constexpr size_t kPayloadLengthOffset = 12;

struct FrameHeader {
    uint8_t version = 0;
    FrameType type = FrameType::Hello;
    uint16_t flags = 0;
    uint16_t rail_id = 0;
    uint32_t payload_length = 0;
    uint64_t connection_id = 0;
    uint64_t seq = 0;
    bool operator==(const FrameHeader&) const = default;
};

// Largest payload a frame of this type can have (its fields at their bounds).
size_t max_payload_length(FrameType t);

// The header rules that depend on the type: flags, connection id, seq.
Status check_header_fields(FrameType t, uint16_t flags, uint64_t connection_id, uint64_t seq);

void encode_header(const FrameHeader& h, ByteWriter& w);

// Decodes and checks the first kHeaderSize bytes of bytes (the rest, if any,
// is ignored). Errors are Code::InvalidArgument with the precise reason.
Result<FrameHeader> decode_header(std::span<const uint8_t> bytes);

} // namespace tent::wire
