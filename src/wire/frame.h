// A frame of tent's protocol: the routing fields of the header plus one body.
// The body's C++ type is the frame type; version, header length and payload
// length are computed by the encoder and checked by the decoder, so they are
// not fields here.
#pragma once

#include <cstdint>
#include <type_traits>
#include <variant>

#include "wire/address_blob.h"
#include "wire/control_frames.h"
#include "wire/data_frames.h"

namespace tent::wire {

using FrameBody = std::variant<Hello, HelloAck, AddressBlob, Goodbye, Write, ReadRequest,
                               ReadResponse, Send, Ack, Nack, Atomic, AtomicResponse, Heartbeat, HeartbeatAck, Probe,
                               ProbeReply, SyncRequest, SyncReply, PortState, SendCredit, SendAbandoned>;

struct Frame {
    uint16_t flags = 0;         // kFlag* allowed for the type
    uint16_t rail_id = 0;       // rail the frame travels on or concerns
    uint64_t connection_id = 0; // non-zero, except in an AddressBlob (which must be 0)
    uint64_t seq = 0;           // see carries_sequence()
    FrameBody body;
    bool operator==(const Frame&) const = default;
};

inline FrameType frame_type(const Frame& f) {
    return std::visit([](const auto& b) { return std::decay_t<decltype(b)>::kType; }, f.body);
}

} // namespace tent::wire
