// Bodies of the data-path frames. The operation's per-connection sequence
// number (>= 1) is the header's seq; an Ack's seq is the cumulative sequence
// number it acknowledges.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "wire/frame_type.h"
#include "wire/wire_status.h"

namespace tent::wire {

// One-sided write of data at remote_addr in the region rkey names. The target
// checks key, bounds and access before touching memory. Zero-length writes
// are legal, as in verbs.
struct Write {
    static constexpr FrameType kType = FrameType::Write;
    uint32_t rkey = 0;
    uint64_t remote_addr = 0;
    std::optional<uint32_t> immediate; // RDMA write with immediate
    std::vector<uint8_t> data;         // at most kMaxDataLength bytes
    bool operator==(const Write&) const = default;
};

// One-sided read of length bytes (1..kMaxDataLength) at remote_addr.
struct ReadRequest {
    static constexpr FrameType kType = FrameType::ReadRequest;
    uint32_t rkey = 0;
    uint64_t remote_addr = 0;
    uint32_t length = 0;
    bool operator==(const ReadRequest&) const = default;
};

// Answer to the ReadRequest with the same seq: the bytes read, or an error
// status and no data.
struct ReadResponse {
    static constexpr FrameType kType = FrameType::ReadResponse;
    WireStatus status = WireStatus::Ok;
    std::vector<uint8_t> data;
    bool operator==(const ReadResponse&) const = default;
};

// Two-sided message, delivered exactly once and in order per connection.
struct Send {
    static constexpr FrameType kType = FrameType::Send;
    std::optional<uint32_t> immediate;
    std::vector<uint8_t> data;
    bool operator==(const Send&) const = default;
};

// Cumulative acknowledgement: every operation up to and including seq was
// delivered. status is the outcome of the operation at seq itself.
struct Ack {
    static constexpr FrameType kType = FrameType::Ack;
    WireStatus status = WireStatus::Ok;
    bool operator==(const Ack&) const = default;
};

enum class AtomicOp : uint8_t {
    FetchAdd = 1,    // *addr += operand; returns the old value
    CompareSwap = 2, // if (*addr == operand) *addr = swap; returns the old value
};

// 64-bit atomic on an 8-byte aligned remote address, as in verbs. The
// target executes each id once per connection and answers a repeat of an
// id (a replay after a lost answer) with the first result.
struct Atomic {
    static constexpr FrameType kType = FrameType::Atomic;
    uint32_t rkey = 0;
    uint64_t remote_addr = 0;
    AtomicOp op = AtomicOp::FetchAdd;
    uint64_t operand = 0; // the addend, or the value compared
    uint64_t swap = 0;    // compare-and-swap only; 0 for fetch-and-add
    uint64_t id = 0;      // the initiator's operation id on the connection
    bool operator==(const Atomic&) const = default;
};

// Answer to the Atomic with the same seq: the value before the operation,
// or an error status (and original 0).
struct AtomicResponse {
    static constexpr FrameType kType = FrameType::AtomicResponse;
    WireStatus status = WireStatus::Ok;
    uint64_t original = 0;
    bool operator==(const AtomicResponse&) const = default;
};

// Error completion of the one operation at seq (not cumulative): the
// initiator completes it with this error class, e.g. a remote access error
// for a write outside the registration.
struct Nack {
    static constexpr FrameType kType = FrameType::Nack;
    FrameType op = FrameType::Write; // Write, ReadRequest, Send or Atomic
    WireStatus error = WireStatus::RemoteAccess; // never Ok
    bool operator==(const Nack&) const = default;
};

} // namespace tent::wire
