// Bodies of the control frames: connection setup and teardown, liveness,
// and the sequence agreement that precedes any replay. None of them uses the
// header's sequence number (it must be 0).
#pragma once

#include <cstdint>
#include <vector>

#include "wire/frame_type.h"
#include "wire/protocol.h"
#include "wire/rail_info.h"

namespace tent::wire {

// First frame on a new TCP control connection. The header's connection id is
// chosen by the initiator and names the connection from then on. Each TCP
// rail's own socket opens with a Hello too, carrying that connection id and
// listing only that rail, so the responder attaches the socket to it.
struct Hello {
    static constexpr FrameType kType = FrameType::Hello;
    uint64_t engine_id = 0; // sender's engine (non-zero, unique per process)
    uint8_t version_min = kMinProtocolVersion; // 1 <= min <= max
    uint8_t version_max = kMaxProtocolVersion;
    std::vector<RailInfo> rails; // rails the initiator proposes (unique ids)
    bool operator==(const Hello&) const = default;
};

enum class HelloResult : uint8_t {
    Accepted = 0,
    VersionMismatch = 1, // no common protocol version
    Refused = 2,         // e.g. shutting down, or too many connections
    Crossed = 3,         // the pair already has (or is making) its connection: use that one
                         // (engine/connection_pairing.h)
};

// Answer to Hello. When accepted: the version both sides now speak and the
// rails the responder set up, with its own QP numbers. Otherwise version 0
// and no rails.
struct HelloAck {
    static constexpr FrameType kType = FrameType::HelloAck;
    uint64_t engine_id = 0;
    HelloResult result = HelloResult::Accepted;
    uint8_t version = kProtocolVersion;
    std::vector<RailInfo> rails;
    bool operator==(const HelloAck&) const = default;
};

enum class GoodbyeReason : uint8_t {
    Normal = 0,        // orderly close: everything sent was acknowledged
    ProtocolError = 1, // the peer sent a frame this side rejected
    Timeout = 2,       // the peer stopped answering
};

struct Goodbye {
    static constexpr FrameType kType = FrameType::Goodbye;
    GoodbyeReason reason = GoodbyeReason::Normal;
    bool operator==(const Goodbye&) const = default;
};

// Liveness exchanges share one shape: the reply echoes nonce and timestamp so
// the sender matches it and measures the round trip on its own clock. The
// rail concerned is the header's rail id.
struct Heartbeat {
    static constexpr FrameType kType = FrameType::Heartbeat;
    uint64_t nonce = 0;
    uint64_t timestamp_ns = 0;
    bool operator==(const Heartbeat&) const = default;
};
struct HeartbeatAck {
    static constexpr FrameType kType = FrameType::HeartbeatAck;
    uint64_t nonce = 0;
    uint64_t timestamp_ns = 0;
    bool operator==(const HeartbeatAck&) const = default;
};
struct Probe {
    static constexpr FrameType kType = FrameType::Probe;
    uint64_t nonce = 0;
    uint64_t timestamp_ns = 0;
    bool operator==(const Probe&) const = default;
};
struct ProbeReply {
    static constexpr FrameType kType = FrameType::ProbeReply;
    uint64_t nonce = 0;
    uint64_t timestamp_ns = 0;
    bool operator==(const ProbeReply&) const = default;
};

// After a failure each side states the highest sequence number it delivered
// in order from the other; each then replays only what follows (never a
// blind resend). The epoch (non-zero) pairs a reply with its request.
struct SyncRequest {
    static constexpr FrameType kType = FrameType::SyncRequest;
    uint32_t epoch = 1;
    uint64_t last_delivered = 0; // 0: nothing delivered yet
    bool operator==(const SyncRequest&) const = default;
};
struct SyncReply {
    static constexpr FrameType kType = FrameType::SyncReply;
    uint32_t epoch = 1;
    uint64_t last_delivered = 0;
    bool operator==(const SyncReply&) const = default;
};

// Flow control of two-sided messages (the receiver's side of it): every
// message up to `delivered` was handed to the application, and the sender
// may have messages beyond it outstanding as long as those before the
// newest one weigh less than `window` bytes (engine/send_flow.h). Sent once
// when the connection starts, then whenever the receiver released a
// quarter of its window since the last one.
struct SendCredit {
    static constexpr FrameType kType = FrameType::SendCredit;
    uint64_t delivered = 0;  // 0: nothing delivered yet
    uint64_t window = 1;     // bytes, >= 1
    bool operator==(const SendCredit&) const = default;
};

// The sender's engine gave up on its message msg_seq (the request failed:
// no rail to the receiver for failover_timeout_ms, or its failovers ran
// out) after some or none of it arrived. The receiver, which delivers
// messages strictly in order, drops what it holds of it and delivers the
// later ones; a fragment of it that arrives afterwards is a duplicate.
struct SendAbandoned {
    static constexpr FrameType kType = FrameType::SendAbandoned;
    uint64_t msg_seq = 1;  // >= 1
    bool operator==(const SendAbandoned&) const = default;
};

// The sender's HCA entry hca_index (in its address blob) has a port that
// went down, came back, or a device that failed.
enum class PortCondition : uint8_t { Down = 0, Active = 1, DeviceFatal = 2 };
struct PortState {
    static constexpr FrameType kType = FrameType::PortState;
    uint8_t hca_index = 0;  // < kMaxDevices
    uint8_t port = 1;       // >= 1
    PortCondition condition = PortCondition::Down;
    bool operator==(const PortState&) const = default;
};

} // namespace tent::wire
