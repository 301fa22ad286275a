// The closed set of frame types of tent's protocol and the header flags each
// type may carry. Values are on the wire: never renumber, only append.
#pragma once

#include <cstdint>

namespace tent::wire {

enum class FrameType : uint8_t {
    // Connection setup and teardown (control channel, TCP).
    Hello = 1,
    HelloAck = 2,
    AddressBlob = 3,
    Goodbye = 4,
    // Data path: one-sided and two-sided operations and their completions.
    Write = 10,
    ReadRequest = 11,
    ReadResponse = 12,
    Send = 13,
    Ack = 14,
    Nack = 15,
    Atomic = 16,
    AtomicResponse = 17,
    // Liveness: heartbeats on idle TCP rails, probes of paused rails.
    Heartbeat = 20,
    HeartbeatAck = 21,
    Probe = 22,
    ProbeReply = 23,
    // Agreement on the last delivered sequence number before replay.
    SyncRequest = 30,
    SyncReply = 31,
    // Flow control of two-sided messages: what the receiver let through.
    SendCredit = 32,
    // The sender gave up on a two-sided message: the receiver delivers the
    // later ones without it.
    SendAbandoned = 33,
    // A port of the sender changed state (its own asynchronous event), so
    // the receiver attributes faults of its rails to that remote port.
    PortState = 40,
};

// Header flags. Unknown bits, or bits not allowed for a type, are rejected.
inline constexpr uint16_t kFlagAckRequested = 0x1; // receiver acks this sequence promptly
inline constexpr uint16_t kFlagLastChunk = 0x2;    // last chunk of a striped write: lands last
inline constexpr uint16_t kFlagReplay = 0x4;       // replayed after a sync: receiver de-duplicates

// Lowercase name for messages ("read request"); "unknown" for other values.
const char* frame_type_name(FrameType t);
bool is_known_frame_type(uint8_t raw);
// Flags a frame of this type may carry.
uint16_t allowed_flags(FrameType t);
// Whether the header's sequence number means something for this type
// (data frames and acks: must be >= 1; other types: must be 0).
bool carries_sequence(FrameType t);

} // namespace tent::wire
