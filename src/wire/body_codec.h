// Per-body serialisation, internal to the frame codec. For every body type:
//   encode_body    appends its fields (the body must already be valid);
//   decode_body    reads its fields and rejects encodings no encoder makes
//                  (a flag byte other than 0/1, a length field that disagrees
//                  with the bytes present, a count above its bound);
//   validate_body  checks the values themselves, for the encoder and the
//                  decoder alike, so nothing is encoded that would not decode.
// Every error is Code::InvalidArgument and starts with the frame type's name.
#pragma once

#include <string>

#include "common/status.h"
#include "wire/byte_reader.h"
#include "wire/byte_writer.h"
#include "wire/frame.h"

namespace tent::wire {

void encode_body(const Hello& b, ByteWriter& w);
Status decode_body(ByteReader& r, Hello& b);
Status validate_body(const Hello& b);

void encode_body(const HelloAck& b, ByteWriter& w);
Status decode_body(ByteReader& r, HelloAck& b);
Status validate_body(const HelloAck& b);

void encode_body(const AddressBlob& b, ByteWriter& w);
Status decode_body(ByteReader& r, AddressBlob& b);
Status validate_body(const AddressBlob& b);

void encode_body(const Goodbye& b, ByteWriter& w);
Status decode_body(ByteReader& r, Goodbye& b);
Status validate_body(const Goodbye& b);

void encode_body(const Write& b, ByteWriter& w);
Status decode_body(ByteReader& r, Write& b);
Status validate_body(const Write& b);

void encode_body(const ReadRequest& b, ByteWriter& w);
Status decode_body(ByteReader& r, ReadRequest& b);
Status validate_body(const ReadRequest& b);

void encode_body(const ReadResponse& b, ByteWriter& w);
Status decode_body(ByteReader& r, ReadResponse& b);
Status validate_body(const ReadResponse& b);

void encode_body(const Send& b, ByteWriter& w);
Status decode_body(ByteReader& r, Send& b);
Status validate_body(const Send& b);

void encode_body(const Ack& b, ByteWriter& w);
Status decode_body(ByteReader& r, Ack& b);
Status validate_body(const Ack& b);

void encode_body(const Nack& b, ByteWriter& w);
Status decode_body(ByteReader& r, Nack& b);
Status validate_body(const Nack& b);

void encode_body(const Atomic& b, ByteWriter& w);
Status decode_body(ByteReader& r, Atomic& b);
Status validate_body(const Atomic& b);

void encode_body(const AtomicResponse& b, ByteWriter& w);
Status decode_body(ByteReader& r, AtomicResponse& b);
Status validate_body(const AtomicResponse& b);

void encode_body(const Heartbeat& b, ByteWriter& w);
Status decode_body(ByteReader& r, Heartbeat& b);
Status validate_body(const Heartbeat& b);

void encode_body(const HeartbeatAck& b, ByteWriter& w);
Status decode_body(ByteReader& r, HeartbeatAck& b);
Status validate_body(const HeartbeatAck& b);

void encode_body(const Probe& b, ByteWriter& w);
Status decode_body(ByteReader& r, Probe& b);
Status validate_body(const Probe& b);

void encode_body(const ProbeReply& b, ByteWriter& w);
Status decode_body(ByteReader& r, ProbeReply& b);
Status validate_body(const ProbeReply& b);

void encode_body(const SyncRequest& b, ByteWriter& w);
Status decode_body(ByteReader& r, SyncRequest& b);
Status validate_body(const SyncRequest& b);

void encode_body(const SyncReply& b, ByteWriter& w);
Status decode_body(ByteReader& r, SyncReply& b);
Status validate_body(const SyncReply& b);

void encode_body(const SendCredit& b, ByteWriter& w);
Status decode_body(ByteReader& r, SendCredit& b);
Status validate_body(const SendCredit& b);

void encode_body(const SendAbandoned& b, ByteWriter& w);
Status decode_body(ByteReader& r, SendAbandoned& b);
Status validate_body(const SendAbandoned& b);

void encode_body(const PortState& b, ByteWriter& w);
Status decode_body(ByteReader& r, PortState& b);
Status validate_body(const PortState& b);

namespace detail {

inline Status invalid(FrameType t, const std::string& why) {
    return Status(Code::InvalidArgument, std::string(frame_type_name(t)) + ": " + why);
}
// The reader ran out inside the payload.
inline Status truncated(FrameType t, const ByteReader& r) {
    return invalid(t, "payload truncated: " + r.error());
}
// Strings on the wire (hostnames, device names) are printable ASCII without
// spaces, so they can be logged and compared safely.
inline bool is_printable_token(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x21 || c > 0x7e) return false;
    return true;
}

} // namespace detail

} // namespace tent::wire
