// Layouts of the data-path frame bodies (all integers little-endian):
//   Write         rkey u32, remote address u64, has immediate u8 (0/1),
//                 immediate u32 (0 when absent), length u32, data
//   ReadRequest   rkey u32, remote address u64, length u32
//   ReadResponse  status u8, length u32, data
//   Send          has immediate u8, immediate u32, length u32, data
//   Ack           status u8
//   Nack          op u8 (frame type of the failed operation), error u8
//   Atomic        rkey u32, remote address u64, op u8, operand u64, swap u64,
//                 id u64
//   AtomicResponse status u8, original u64
// The data block is last and its length field must match the bytes present
// exactly, so a payload length and a data length can never disagree.
#include <cstdint>
#include <limits>
#include <string>

#include "wire/body_codec.h"
#include "wire/protocol.h"

namespace tent::wire {

using detail::invalid;
using detail::truncated;

namespace {

void encode_immediate(const std::optional<uint32_t>& imm, ByteWriter& w) {
    w.u8(imm ? 1 : 0);
    w.u32(imm.value_or(0));
}

Status decode_immediate(FrameType t, ByteReader& r, std::optional<uint32_t>& imm) {
    uint8_t has = 0;
    uint32_t value = 0;
    if (!(r.u8(has, "has immediate") && r.u32(value, "immediate"))) return truncated(t, r);
    if (has > 1) return invalid(t, "has-immediate byte " + std::to_string(has) + ", must be 0 or 1");
    if (has == 0 && value != 0) return invalid(t, "immediate value set without the has-immediate byte");
    imm = has ? std::optional<uint32_t>(value) : std::nullopt;
    return Status::ok();
}

void encode_data(const std::vector<uint8_t>& data, ByteWriter& w) {
    w.u32(static_cast<uint32_t>(data.size()));
    w.bytes(data);
}

Status decode_data(FrameType t, ByteReader& r, std::vector<uint8_t>& data) {
    uint32_t length = 0;
    if (!r.u32(length, "data length")) return truncated(t, r);
    if (length > kMaxDataLength)
        return invalid(t, "data length " + std::to_string(length) + " exceeds maximum " +
                              std::to_string(kMaxDataLength));
    if (length != r.remaining())
        return invalid(t, "data length field says " + std::to_string(length) + " bytes but " +
                              std::to_string(r.remaining()) + " follow");
    std::span<const uint8_t> bytes;
    if (!r.bytes(bytes, length, "data")) return truncated(t, r);
    data.assign(bytes.begin(), bytes.end());
    return Status::ok();
}

Status validate_data_size(FrameType t, size_t size) {
    if (size > kMaxDataLength)
        return invalid(t, "data length " + std::to_string(size) + " exceeds maximum " +
                              std::to_string(kMaxDataLength));
    return Status::ok();
}

// The remote range [addr, addr + length) must not wrap around the address space.
Status validate_remote_range(FrameType t, uint64_t addr, uint64_t length) {
    if (length > std::numeric_limits<uint64_t>::max() - addr)
        return invalid(t, "remote range at " + std::to_string(addr) + " of " + std::to_string(length) +
                              " bytes wraps around the address space");
    return Status::ok();
}

Status validate_status(FrameType t, WireStatus s) {
    if (!is_known_wire_status(static_cast<uint8_t>(s)))
        return invalid(t, "unknown status " + std::to_string(static_cast<unsigned>(s)));
    return Status::ok();
}

} // namespace

// Write

void encode_body(const Write& b, ByteWriter& w) {
    w.u32(b.rkey);
    w.u64(b.remote_addr);
    encode_immediate(b.immediate, w);
    encode_data(b.data, w);
}

Status decode_body(ByteReader& r, Write& b) {
    if (!(r.u32(b.rkey, "rkey") && r.u64(b.remote_addr, "remote address"))) return truncated(Write::kType, r);
    Status st = decode_immediate(Write::kType, r, b.immediate);
    if (!st) return st;
    return decode_data(Write::kType, r, b.data);
}

Status validate_body(const Write& b) {
    Status st = validate_data_size(Write::kType, b.data.size());
    if (!st) return st;
    return validate_remote_range(Write::kType, b.remote_addr, b.data.size());
}

// ReadRequest

void encode_body(const ReadRequest& b, ByteWriter& w) {
    w.u32(b.rkey);
    w.u64(b.remote_addr);
    w.u32(b.length);
}

Status decode_body(ByteReader& r, ReadRequest& b) {
    if (!(r.u32(b.rkey, "rkey") && r.u64(b.remote_addr, "remote address") && r.u32(b.length, "length")))
        return truncated(ReadRequest::kType, r);
    return Status::ok();
}

Status validate_body(const ReadRequest& b) {
    constexpr FrameType t = ReadRequest::kType;
    if (b.length == 0) return invalid(t, "zero length");
    if (b.length > kMaxDataLength)
        return invalid(t, "length " + std::to_string(b.length) + " exceeds maximum " + std::to_string(kMaxDataLength));
    return validate_remote_range(t, b.remote_addr, b.length);
}

// ReadResponse

void encode_body(const ReadResponse& b, ByteWriter& w) {
    w.u8(static_cast<uint8_t>(b.status));
    encode_data(b.data, w);
}

Status decode_body(ByteReader& r, ReadResponse& b) {
    uint8_t status = 0;
    if (!r.u8(status, "status")) return truncated(ReadResponse::kType, r);
    b.status = static_cast<WireStatus>(status);
    return decode_data(ReadResponse::kType, r, b.data);
}

Status validate_body(const ReadResponse& b) {
    constexpr FrameType t = ReadResponse::kType;
    Status st = validate_status(t, b.status);
    if (!st) return st;
    if (b.status != WireStatus::Ok && !b.data.empty())
        return invalid(t, "status " + std::string(wire_status_name(b.status)) + " with " +
                              std::to_string(b.data.size()) + " data bytes");
    // A successful read returns at least one byte: reads of zero bytes are never requested.
    if (b.status == WireStatus::Ok && b.data.empty()) return invalid(t, "status ok without data");
    return validate_data_size(t, b.data.size());
}

// Send

void encode_body(const Send& b, ByteWriter& w) {
    encode_immediate(b.immediate, w);
    encode_data(b.data, w);
}

Status decode_body(ByteReader& r, Send& b) {
    Status st = decode_immediate(Send::kType, r, b.immediate);
    if (!st) return st;
    return decode_data(Send::kType, r, b.data);
}

Status validate_body(const Send& b) { return validate_data_size(Send::kType, b.data.size()); }

// Ack

void encode_body(const Ack& b, ByteWriter& w) { w.u8(static_cast<uint8_t>(b.status)); }

Status decode_body(ByteReader& r, Ack& b) {
    uint8_t status = 0;
    if (!r.u8(status, "status")) return truncated(Ack::kType, r);
    b.status = static_cast<WireStatus>(status);
    return Status::ok();
}

Status validate_body(const Ack& b) { return validate_status(Ack::kType, b.status); }

// Nack

void encode_body(const Nack& b, ByteWriter& w) {
    w.u8(static_cast<uint8_t>(b.op));
    w.u8(static_cast<uint8_t>(b.error));
}

Status decode_body(ByteReader& r, Nack& b) {
    uint8_t op = 0, error = 0;
    if (!(r.u8(op, "op") && r.u8(error, "error"))) return truncated(Nack::kType, r);
    b.op = static_cast<FrameType>(op);
    b.error = static_cast<WireStatus>(error);
    return Status::ok();
}

Status validate_body(const Nack& b) {
    constexpr FrameType t = Nack::kType;
    if (b.op != FrameType::Write && b.op != FrameType::ReadRequest && b.op != FrameType::Send &&
        b.op != FrameType::Atomic)
        return invalid(t, "op " + std::to_string(static_cast<unsigned>(b.op)) +
                              " is not write, read request, send or atomic");
    Status st = validate_status(t, b.error);
    if (!st) return st;
    if (b.error == WireStatus::Ok) return invalid(t, "error class ok");
    return Status::ok();
}

// Atomic

void encode_body(const Atomic& b, ByteWriter& w) {
    w.u32(b.rkey);
    w.u64(b.remote_addr);
    w.u8(static_cast<uint8_t>(b.op));
    w.u64(b.operand);
    w.u64(b.swap);
    w.u64(b.id);
}

Status decode_body(ByteReader& r, Atomic& b) {
    uint8_t op = 0;
    if (!(r.u32(b.rkey, "rkey") && r.u64(b.remote_addr, "remote address") && r.u8(op, "op") &&
          r.u64(b.operand, "operand") && r.u64(b.swap, "swap") && r.u64(b.id, "id")))
        return truncated(Atomic::kType, r);
    b.op = static_cast<AtomicOp>(op);
    return Status::ok();
}

Status validate_body(const Atomic& b) {
    constexpr FrameType t = Atomic::kType;
    if (b.op != AtomicOp::FetchAdd && b.op != AtomicOp::CompareSwap)
        return invalid(t, "unknown op " + std::to_string(static_cast<unsigned>(b.op)));
    if (b.remote_addr % 8 != 0) return invalid(t, "remote address " + std::to_string(b.remote_addr) + " not 8-byte aligned");
    if (b.op == AtomicOp::FetchAdd && b.swap != 0) return invalid(t, "fetch-and-add with a swap value");
    return Status::ok();
}

// AtomicResponse

void encode_body(const AtomicResponse& b, ByteWriter& w) {
    w.u8(static_cast<uint8_t>(b.status));
    w.u64(b.original);
}

Status decode_body(ByteReader& r, AtomicResponse& b) {
    uint8_t status = 0;
    if (!(r.u8(status, "status") && r.u64(b.original, "original"))) return truncated(AtomicResponse::kType, r);
    b.status = static_cast<WireStatus>(status);
    return Status::ok();
}

Status validate_body(const AtomicResponse& b) {
    constexpr FrameType t = AtomicResponse::kType;
    Status st = validate_status(t, b.status);
    if (!st) return st;
    if (b.status != WireStatus::Ok && b.original != 0)
        return invalid(t, "status " + std::string(wire_status_name(b.status)) + " with an original value");
    return Status::ok();
}

} // namespace tent::wire
