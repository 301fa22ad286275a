#include "wire/frame_header.h"

#include <cstdio>
#include <string>

#include "common/little_endian.h"
#include "wire/protocol.h"
#include "wire/rail_info.h"

namespace tent::wire {

namespace {

Status invalid(std::string why) { return Status(Code::InvalidArgument, std::move(why)); }

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// Fixed part of each body plus its variable part at its bound; kept next to
// the layouts in the codecs by the round-trip tests at the bounds.
constexpr size_t kRailListMax = 2 + kMaxRails * kRailInfoSize;
constexpr size_t kTcpAddressMax = 1 + 2 + 16;
constexpr size_t kHcaAddressMax = 1 + kMaxDeviceNameLength + 16 + 1 + 2 + 1 + 1 + 1 + kMaxQpsPerDevice * 4;
constexpr size_t kAddressBlobMax = 8 + 1 + 1 + 1 + kMaxHostnameLength + 1 +
                                   kMaxTcpAddresses * kTcpAddressMax + 1 +
                                   kMaxDevices * kHcaAddressMax;

} // namespace

size_t max_payload_length(FrameType t) {
    switch (t) {
    case FrameType::Hello: return 8 + 1 + 1 + kRailListMax;
    case FrameType::HelloAck: return 8 + 1 + 1 + kRailListMax;
    case FrameType::AddressBlob: return kAddressBlobMax;
    case FrameType::Goodbye: return 1;
    case FrameType::Write: return 4 + 8 + 1 + 4 + 4 + kMaxDataLength;
    case FrameType::ReadRequest: return 4 + 8 + 4;
    case FrameType::ReadResponse: return 1 + 4 + kMaxDataLength;
    case FrameType::Send: return 1 + 4 + 4 + kMaxDataLength;
    case FrameType::Ack: return 1;
    case FrameType::Nack: return 2;
    case FrameType::Atomic: return 4 + 8 + 1 + 8 + 8 + 8;
    case FrameType::AtomicResponse: return 1 + 8;
    case FrameType::Heartbeat:
    case FrameType::HeartbeatAck:
    case FrameType::Probe:
    case FrameType::ProbeReply: return 8 + 8;
    case FrameType::SyncRequest:
    case FrameType::SyncReply: return 4 + 8;
    case FrameType::SendCredit: return 8 + 8;
    case FrameType::SendAbandoned: return 8;
    case FrameType::PortState: return 1 + 1 + 1;
    }
    return 0;
}

Status check_header_fields(FrameType t, uint16_t flags, uint64_t connection_id, uint64_t seq) {
    // Every frame passes here up to three times: its name (a strlen) only for an error.
    auto name = [t] { return std::string(frame_type_name(t)); };
    const uint16_t extra = flags & ~allowed_flags(t);
    if (extra != 0) return invalid("flags " + hex(extra) + " not allowed in " + name() + " frames");
    if (t == FrameType::AddressBlob) {
        if (connection_id != 0) return invalid("address blob has connection id " + hex(connection_id) + ", must be 0");
    } else if (connection_id == 0) {
        return invalid(name() + " frame has connection id 0");
    }
    if (carries_sequence(t)) {
        if (seq == 0) return invalid(name() + " frame has sequence number 0 (sequences start at 1)");
    } else if (seq != 0) {
        return invalid(name() + " frame has sequence number " + std::to_string(seq) + ", must be 0");
    }
    return Status::ok();
}

// Fixed offsets of the layout in frame_header.h: the header is written and
// read whole (it passes here up to three times per frame on a stream).
void encode_header(const FrameHeader& h, ByteWriter& w) {
    uint8_t b[kHeaderSize];
    store_le<uint32_t>(b + 0, kMagic);
    store_le<uint8_t>(b + 4, h.version);
    store_le<uint8_t>(b + 5, static_cast<uint8_t>(h.type));
    store_le<uint16_t>(b + 6, h.flags);
    store_le<uint16_t>(b + 8, static_cast<uint16_t>(kHeaderSize));
    store_le<uint16_t>(b + 10, h.rail_id);
    store_le<uint32_t>(b + kPayloadLengthOffset, h.payload_length);
    store_le<uint64_t>(b + 16, h.connection_id);
    store_le<uint64_t>(b + 24, h.seq);
    w.bytes(b);
}

Result<FrameHeader> decode_header(std::span<const uint8_t> bytes) {
    if (bytes.size() < kHeaderSize)
        return invalid("short frame: " + std::to_string(bytes.size()) + " bytes, header needs " +
                       std::to_string(kHeaderSize));
    const uint8_t* b = bytes.data();  // kHeaderSize bytes, checked above
    const auto magic = load_le<uint32_t>(b + 0);
    const auto version = load_le<uint8_t>(b + 4);
    const auto type = load_le<uint8_t>(b + 5);
    const auto flags = load_le<uint16_t>(b + 6);
    const auto header_length = load_le<uint16_t>(b + 8);
    const auto rail_id = load_le<uint16_t>(b + 10);
    const auto payload_length = load_le<uint32_t>(b + kPayloadLengthOffset);
    const auto connection_id = load_le<uint64_t>(b + 16);
    const auto seq = load_le<uint64_t>(b + 24);

    if (magic != kMagic) return invalid("bad magic " + hex(magic) + ", expected " + hex(kMagic));
    if (version < kMinProtocolVersion || version > kMaxProtocolVersion)
        return invalid("unsupported protocol version " + std::to_string(version) + " (supported " +
                       std::to_string(kMinProtocolVersion) + ".." + std::to_string(kMaxProtocolVersion) + ")");
    if (!is_known_frame_type(type)) return invalid("unknown frame type " + std::to_string(type));
    const auto t = static_cast<FrameType>(type);
    if (header_length != kHeaderSize)
        return invalid("header length " + std::to_string(header_length) + ", expected " +
                       std::to_string(kHeaderSize));
    if (payload_length > max_payload_length(t))
        return invalid("oversize " + std::string(frame_type_name(t)) + " payload: " +
                       std::to_string(payload_length) + " bytes, maximum " +
                       std::to_string(max_payload_length(t)));
    Status st = check_header_fields(t, flags, connection_id, seq);
    if (!st) return st;

    FrameHeader h;
    h.version = version;
    h.type = t;
    h.flags = flags;
    h.rail_id = rail_id;
    h.payload_length = payload_length;
    h.connection_id = connection_id;
    h.seq = seq;
    return h;
}

} // namespace tent::wire
