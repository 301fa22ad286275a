#include "wire/frame_codec.h"

#include <algorithm>
#include <string>

#include "wire/body_codec.h"
#include "wire/byte_reader.h"
#include "wire/byte_writer.h"
#include "wire/frame_header.h"
#include "wire/protocol.h"

namespace tent::wire {

namespace {

// Negotiating frames use the lowest version so that any peer can read them.
uint8_t header_version(FrameType t) {
    switch (t) {
    case FrameType::Hello:
    case FrameType::HelloAck:
    case FrameType::AddressBlob:
    case FrameType::Goodbye: return kMinProtocolVersion;
    default: return kProtocolVersion;
    }
}

// Straight into the frame's body: every data frame passes here, and each
// move of a body between results is a visit of the variant.
template <typename B>
Status decode_as(std::span<const uint8_t> payload, FrameBody& out) {
    B& body = out.emplace<B>();
    ByteReader r(payload);
    Status st = decode_body(r, body);
    if (!st) return st;
    if (r.remaining() != 0)
        return detail::invalid(B::kType, std::to_string(r.remaining()) + " trailing bytes in payload");
    return validate_body(body);
}

Status decode_body_of(FrameType t, std::span<const uint8_t> payload, FrameBody& out) {
    switch (t) {
    case FrameType::Hello: return decode_as<Hello>(payload, out);
    case FrameType::HelloAck: return decode_as<HelloAck>(payload, out);
    case FrameType::AddressBlob: return decode_as<AddressBlob>(payload, out);
    case FrameType::Goodbye: return decode_as<Goodbye>(payload, out);
    case FrameType::Write: return decode_as<Write>(payload, out);
    case FrameType::ReadRequest: return decode_as<ReadRequest>(payload, out);
    case FrameType::ReadResponse: return decode_as<ReadResponse>(payload, out);
    case FrameType::Send: return decode_as<Send>(payload, out);
    case FrameType::Ack: return decode_as<Ack>(payload, out);
    case FrameType::Nack: return decode_as<Nack>(payload, out);
    case FrameType::Atomic: return decode_as<Atomic>(payload, out);
    case FrameType::AtomicResponse: return decode_as<AtomicResponse>(payload, out);
    case FrameType::Heartbeat: return decode_as<Heartbeat>(payload, out);
    case FrameType::HeartbeatAck: return decode_as<HeartbeatAck>(payload, out);
    case FrameType::Probe: return decode_as<Probe>(payload, out);
    case FrameType::ProbeReply: return decode_as<ProbeReply>(payload, out);
    case FrameType::SyncRequest: return decode_as<SyncRequest>(payload, out);
    case FrameType::SyncReply: return decode_as<SyncReply>(payload, out);
    case FrameType::SendCredit: return decode_as<SendCredit>(payload, out);
    case FrameType::SendAbandoned: return decode_as<SendAbandoned>(payload, out);
    case FrameType::PortState: return decode_as<PortState>(payload, out);
    }
    // decode_header already rejected unknown types.
    return Status(Code::Internal, "no decoder for frame type " + std::to_string(static_cast<unsigned>(t)));
}

} // namespace

Status validate_frame(const Frame& frame) {
    const FrameType t = frame_type(frame);
    Status st = check_header_fields(t, frame.flags, frame.connection_id, frame.seq);
    if (!st) return st;
    return std::visit([](const auto& b) { return validate_body(b); }, frame.body);
}

Status encode_frame(const Frame& frame, std::vector<uint8_t>& out) {
    Status st = validate_frame(frame);
    if (!st) return st;
    const FrameType t = frame_type(frame);
    const size_t start = out.size();
    // ByteWriter appends byte by byte: one allocation for the whole frame
    // (bodies other than data are a few fixed fields, well under kFixedRoom).
    constexpr size_t kFixedRoom = 128;
    const size_t data = std::visit(
        [](const auto& b) -> size_t {
            if constexpr (requires { b.data.size(); }) return b.data.size();
            else return 0;
        },
        frame.body);
    // Geometric when frames are appended to one buffer, so that a stream
    // of them costs no quadratic copying.
    if (const size_t need = start + kHeaderSize + kFixedRoom + data; out.capacity() < need)
        out.reserve(std::max(need, 2 * out.capacity()));
    ByteWriter w(out);
    FrameHeader h;
    h.version = header_version(t);
    h.type = t;
    h.flags = frame.flags;
    h.rail_id = frame.rail_id;
    h.connection_id = frame.connection_id;
    h.seq = frame.seq;
    encode_header(h, w);
    std::visit([&w](const auto& b) { encode_body(b, w); }, frame.body);
    const size_t payload = out.size() - start - kHeaderSize;
    if (payload > max_payload_length(t)) {
        // Validation bounds every field, so this is a bug in the bounds.
        out.resize(start);
        return Status(Code::Internal, std::string(frame_type_name(t)) + " payload of " +
                                          std::to_string(payload) + " bytes exceeds its maximum");
    }
    w.patch_u32(start + kPayloadLengthOffset, static_cast<uint32_t>(payload));
    return Status::ok();
}

Result<std::vector<uint8_t>> encode_frame(const Frame& frame) {
    std::vector<uint8_t> out;
    Status st = encode_frame(frame, out);
    if (!st) return st;
    return out;
}

Result<Frame> decode_frame(std::span<const uint8_t> bytes) {
    auto header = decode_header(bytes);
    if (!header) return header.status();
    return decode_frame(bytes, *header);
}

Result<Frame> decode_frame(std::span<const uint8_t> bytes, const FrameHeader& h) {
    const size_t total = kHeaderSize + h.payload_length;
    if (bytes.size() < total)
        return Status(Code::InvalidArgument, "truncated frame: header announces " +
                                                 std::to_string(h.payload_length) + " payload bytes, " +
                                                 std::to_string(bytes.size() - kHeaderSize) + " present");
    if (bytes.size() > total)
        return Status(Code::InvalidArgument,
                      "trailing garbage: " + std::to_string(bytes.size() - total) + " bytes after the frame");
    Frame f;
    if (Status st = decode_body_of(h.type, bytes.subspan(kHeaderSize, h.payload_length), f.body); !st) return st;
    f.flags = h.flags;
    f.rail_id = h.rail_id;
    f.connection_id = h.connection_id;
    f.seq = h.seq;
    return f;
}

} // namespace tent::wire
