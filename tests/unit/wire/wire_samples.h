// Shared by the wire tests: a valid frame of every type, an independent
// little-endian byte builder for hand-made (malformed) frames, and helpers to
// check a decode error's message.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "wire/frame.h"
#include "wire/frame_codec.h"
#include "wire/protocol.h"

namespace wire_test {

using namespace tent;
using namespace tent::wire;

inline constexpr uint64_t kConn = 0x1122334455667788ull;

// Little-endian bytes built by hand, independent of the library's writer.
struct Bytes {
    std::vector<uint8_t> b;
    Bytes& u8(uint64_t v) { return put(v, 1); }
    Bytes& u16(uint64_t v) { return put(v, 2); }
    Bytes& u32(uint64_t v) { return put(v, 4); }
    Bytes& u64(uint64_t v) { return put(v, 8); }
    Bytes& raw(const std::vector<uint8_t>& more) {
        b.insert(b.end(), more.begin(), more.end());
        return *this;
    }
    Bytes& str(const std::string& s) {
        u8(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes& put(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        return *this;
    }
};

struct RawHeader {
    uint32_t magic = kMagic;
    uint8_t version = kProtocolVersion;
    uint8_t type = 0;
    uint16_t flags = 0;
    uint16_t header_length = 32;
    uint16_t rail_id = 0;
    int64_t payload_length = -1; // -1: the real payload size
    uint64_t connection_id = kConn;
    uint64_t seq = 0;
};

// A frame made by hand: header fields as given, then the payload bytes.
inline std::vector<uint8_t> raw_frame(const RawHeader& h, const std::vector<uint8_t>& payload) {
    Bytes out;
    out.u32(h.magic).u8(h.version).u8(h.type).u16(h.flags).u16(h.header_length).u16(h.rail_id);
    out.u32(h.payload_length < 0 ? payload.size() : static_cast<uint64_t>(h.payload_length));
    out.u64(h.connection_id).u64(h.seq);
    return out.raw(payload).b;
}

inline RawHeader header_for(FrameType t, uint64_t seq = 0) {
    RawHeader h;
    h.type = static_cast<uint8_t>(t);
    h.seq = seq;
    if (t == FrameType::AddressBlob) h.connection_id = 0;
    return h;
}

inline Frame make_frame(FrameBody body, uint64_t seq = 0, uint16_t flags = 0, uint16_t rail = 3) {
    Frame f;
    f.flags = flags;
    f.rail_id = rail;
    f.connection_id = std::holds_alternative<AddressBlob>(body) ? 0 : kConn;
    f.seq = seq;
    f.body = std::move(body);
    return f;
}

inline std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 8));
    return v;
}

inline AddressBlob sample_blob() {
    AddressBlob b;
    b.engine_id = 0xABCDEF0123456789ull;
    b.hostname = "node-17.cluster";
    TcpAddress v4;
    v4.family = 4;
    v4.addr = {127, 0, 0, 1};
    v4.port = 18515;
    TcpAddress v6;
    v6.family = 6;
    v6.addr = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    v6.port = 18516;
    b.tcp = {v4, v6};
    HcaAddress h0;
    h0.device = "mlx5_0";
    h0.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    h0.port = 1;
    h0.lid = 0;
    h0.link_layer = 2;
    h0.mtu = 3;
    h0.qpns = {0x101, 0x102};
    HcaAddress h1 = h0;
    h1.device = "mlx5_1";
    h1.link_layer = 1;
    h1.lid = 7;
    h1.mtu = 5;
    h1.qpns = {0x201};
    b.hcas = {h0, h1};
    return b;
}

// One valid, non-trivial frame of every type.
inline std::vector<Frame> sample_frames() {
    std::vector<Frame> v;
    Hello hello;
    hello.engine_id = 42;
    hello.rails = {{0, RailKind::Verbs, 0, 1, 0x123}, {1, RailKind::Tcp, 0, 0, 0}};
    v.push_back(make_frame(hello));
    HelloAck ack;
    ack.engine_id = 43;
    ack.rails = {{0, RailKind::Verbs, 1, 0, 0x456}};
    v.push_back(make_frame(ack));
    v.push_back(make_frame(sample_blob()));
    v.push_back(make_frame(Goodbye{GoodbyeReason::Timeout}));
    v.push_back(make_frame(Write{0xdeadbeef, 0x7f0000001000ull, 99u, pattern(37, 1)}, 5,
                           kFlagAckRequested | kFlagLastChunk));
    v.push_back(make_frame(ReadRequest{0xfeed, 0x1000, 4096}, 6, kFlagReplay));
    v.push_back(make_frame(ReadResponse{WireStatus::Ok, pattern(19, 7)}, 6));
    v.push_back(make_frame(Send{std::nullopt, pattern(23, 3)}, 7, kFlagAckRequested));
    v.push_back(make_frame(Ack{WireStatus::Ok}, 7));
    v.push_back(make_frame(Nack{FrameType::Write, WireStatus::RemoteAccess}, 5));
    v.push_back(make_frame(Atomic{0xa70, 0x2000, AtomicOp::CompareSwap, 5, 6}, 8, kFlagAckRequested));
    v.push_back(make_frame(AtomicResponse{WireStatus::Ok, 5}, 8));
    v.push_back(make_frame(Heartbeat{11, 1000}));
    v.push_back(make_frame(HeartbeatAck{11, 1000}));
    v.push_back(make_frame(Probe{12, 2000}));
    v.push_back(make_frame(ProbeReply{12, 2000}));
    v.push_back(make_frame(SyncRequest{3, 41}));
    v.push_back(make_frame(SyncReply{3, 40}));
    v.push_back(make_frame(PortState{1, 1, PortCondition::Down}));
    v.push_back(make_frame(SendCredit{40, 1 << 20}));
    v.push_back(make_frame(SendAbandoned{41}));
    return v;
}

inline std::vector<uint8_t> encode_ok(const Frame& f) {
    auto r = encode_frame(f);
    if (!r) return {};
    return std::move(r).value();
}

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

} // namespace wire_test
