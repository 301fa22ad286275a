#include "wire/frame_type.h"

namespace tent::wire {

namespace {
constexpr const char* kUnknownName = "unknown";
}

const char* frame_type_name(FrameType t) {
    switch (t) {
    case FrameType::Hello: return "hello";
    case FrameType::HelloAck: return "hello ack";
    case FrameType::AddressBlob: return "address blob";
    case FrameType::Goodbye: return "goodbye";
    case FrameType::Write: return "write";
    case FrameType::ReadRequest: return "read request";
    case FrameType::ReadResponse: return "read response";
    case FrameType::Send: return "send";
    case FrameType::Ack: return "ack";
    case FrameType::Nack: return "nack";
    case FrameType::Atomic: return "atomic";
    case FrameType::AtomicResponse: return "atomic response";
    case FrameType::Heartbeat: return "heartbeat";
    case FrameType::HeartbeatAck: return "heartbeat ack";
    case FrameType::Probe: return "probe";
    case FrameType::ProbeReply: return "probe reply";
    case FrameType::SyncRequest: return "sync request";
    case FrameType::SyncReply: return "sync reply";
    case FrameType::SendCredit: return "send credit";
    case FrameType::SendAbandoned: return "send abandoned";
    case FrameType::PortState: return "port state";
    }
    return kUnknownName;
}

bool is_known_frame_type(uint8_t raw) {
    // Every frame's header passes here: a pointer comparison, no strcmp.
    return frame_type_name(static_cast<FrameType>(raw)) != kUnknownName;
}

uint16_t allowed_flags(FrameType t) {
    switch (t) {
    case FrameType::Write: return kFlagAckRequested | kFlagLastChunk | kFlagReplay;
    case FrameType::Send:
    case FrameType::Atomic: return kFlagAckRequested | kFlagReplay;
    case FrameType::ReadRequest: return kFlagReplay;
    default: return 0;
    }
}

bool carries_sequence(FrameType t) {
    switch (t) {
    case FrameType::Write:
    case FrameType::ReadRequest:
    case FrameType::ReadResponse:
    case FrameType::Send:
    case FrameType::Ack:
    case FrameType::Nack:
    case FrameType::Atomic:
    case FrameType::AtomicResponse: return true;
    default: return false;
    }
}

} // namespace tent::wire
