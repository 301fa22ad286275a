// A corpus of malformed frames, one per rejection reason: each must be
// rejected with Code::InvalidArgument and a message naming the reason.
// Frames are built by hand here (not by the encoder, which refuses them).
#include <criterion/criterion.h>

#include <limits>
#include <string>

#include "wire/frame_header.h"
#include "wire_samples.h"

using namespace wire_test;

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

struct Case {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string reason; // must appear in the error message
};

void expect_rejected(const Case& c) {
    auto r = decode_frame(c.bytes);
    cr_assert(!r.is_ok(), "%s: accepted", c.name.c_str());
    const std::string msg = r.status().message();
    cr_expect_eq(r.status().code(), Code::InvalidArgument, "%s: code %s", c.name.c_str(),
                 code_name(r.status().code()));
    cr_expect(contains(msg, c.reason), "%s: message '%s' lacks '%s'", c.name.c_str(), msg.c_str(),
              c.reason.c_str());
}

void expect_all(const std::vector<Case>& cases) {
    for (const auto& c : cases) expect_rejected(c);
}

std::vector<uint8_t> frame(FrameType t, const Bytes& payload, uint64_t seq = 0) {
    return raw_frame(header_for(t, seq), payload.b);
}

// Valid bodies written by hand, to be spoiled one field at a time.
Bytes write_body(uint64_t addr, uint8_t has_imm, uint32_t imm, uint32_t length, size_t data) {
    Bytes b;
    b.u32(0x1234).u64(addr).u8(has_imm).u32(imm).u32(length);
    return b.raw(pattern(data, 1));
}

Bytes rails_body(uint64_t engine, uint8_t lo, uint8_t hi, const std::vector<Bytes>& rails) {
    Bytes b;
    b.u64(engine).u8(lo).u8(hi).u16(rails.size());
    for (const auto& r : rails) b.raw(r.b);
    return b;
}

Bytes rail(uint16_t id, uint8_t kind, uint32_t qpn, uint8_t local = 0, uint8_t remote = 0) {
    Bytes b;
    b.u16(id).u8(kind).u8(local).u8(remote).u32(qpn);
    return b;
}

Bytes tcp4(uint16_t port, std::vector<uint8_t> addr = {10, 0, 0, 1}) {
    Bytes b;
    b.u8(4).u16(port).raw(addr);
    return b;
}

Bytes hca(const std::string& name, uint8_t port, uint8_t link, uint8_t mtu, std::vector<uint32_t> qpns) {
    Bytes b;
    b.str(name).raw(std::vector<uint8_t>(16, 0xFE)).u8(port).u16(0).u8(link).u8(mtu).u8(qpns.size());
    for (auto q : qpns) b.u32(q);
    return b;
}

Bytes blob(uint64_t engine, const std::string& host, const std::vector<Bytes>& tcp, const std::vector<Bytes>& hcas) {
    Bytes b;
    b.u64(engine).u8(1).u8(1).str(host).u8(tcp.size());
    for (const auto& t : tcp) b.raw(t.b);
    b.u8(hcas.size());
    for (const auto& h : hcas) b.raw(h.b);
    return b;
}

} // namespace

// The hand-made builders agree with the encoder, so the cases below differ
// from a valid frame only in the field they spoil.
Test(frame_malformed, builders_make_valid_frames) {
    auto w = frame(FrameType::Write, write_body(0x1000, 1, 5, 3, 3), 1);
    cr_expect(decode_frame(w).is_ok());
    auto h = frame(FrameType::Hello, rails_body(1, 1, 1, {rail(0, 1, 9), rail(1, 2, 0)}));
    cr_expect(decode_frame(h).is_ok());
    auto b = frame(FrameType::AddressBlob, blob(1, "host", {tcp4(1)}, {hca("mlx5_0", 1, 1, 5, {7})}));
    auto r = decode_frame(b);
    cr_expect(r.is_ok(), "%s", r.status().to_string().c_str());
}

Test(frame_malformed, header_rejections) {
    const auto ack = frame(FrameType::Ack, Bytes().u8(0), 1);
    auto with = [&](auto edit) {
        RawHeader h = header_for(FrameType::Ack, 1);
        edit(h);
        return raw_frame(h, {0});
    };
    expect_all({
        {"empty buffer", {}, "short frame: 0 bytes, header needs 32"},
        {"31 bytes", std::vector<uint8_t>(ack.begin(), ack.begin() + 31), "short frame: 31 bytes"},
        {"bad magic", with([](RawHeader& h) { h.magic = 0x54454E54; }), "bad magic 0x54454e54, expected 0x544e4554"},
        {"http request", std::vector<uint8_t>(40, 'G'), "bad magic"},
        {"version 0", with([](RawHeader& h) { h.version = 0; }), "unsupported protocol version 0 (supported 2..2)"},
        // 1: ReadResponses without the Ack behind them (a build before 2026-11).
        {"version 1", with([](RawHeader& h) { h.version = 1; }), "unsupported protocol version 1"},
        {"version 3", with([](RawHeader& h) { h.version = 3; }), "unsupported protocol version 3"},
        {"type 0", with([](RawHeader& h) { h.type = 0; }), "unknown frame type 0"},
        {"type 5", with([](RawHeader& h) { h.type = 5; }), "unknown frame type 5"},
        {"type 255", with([](RawHeader& h) { h.type = 255; }), "unknown frame type 255"},
        {"header length 33", with([](RawHeader& h) { h.header_length = 33; }), "header length 33, expected 32"},
        {"header length 0", with([](RawHeader& h) { h.header_length = 0; }), "header length 0, expected 32"},
        {"unknown flag", with([](RawHeader& h) { h.flags = 0x8; }), "flags 0x8 not allowed in ack frames"},
        {"replay on ack", with([](RawHeader& h) { h.flags = kFlagReplay; }), "flags 0x4 not allowed in ack frames"},
        {"connection id 0", with([](RawHeader& h) { h.connection_id = 0; }), "ack frame has connection id 0"},
        {"sequence 0", with([](RawHeader& h) { h.seq = 0; }), "ack frame has sequence number 0"},
        {"oversize ack", with([](RawHeader& h) { h.payload_length = 2; }), "oversize ack payload: 2 bytes, maximum 1"},
        {"payload length 4 GiB", with([](RawHeader& h) { h.payload_length = 0xFFFFFFFF; }), "oversize ack payload"},
    });
    // Flags allowed on one type are refused on another.
    RawHeader hb = header_for(FrameType::Heartbeat);
    hb.flags = kFlagAckRequested;
    RawHeader rq = header_for(FrameType::ReadRequest, 1);
    rq.flags = kFlagLastChunk;
    RawHeader seq_on_probe = header_for(FrameType::Probe);
    seq_on_probe.seq = 5;
    RawHeader blob_conn = header_for(FrameType::AddressBlob);
    blob_conn.connection_id = 7;
    RawHeader big_write = header_for(FrameType::Write, 1);
    big_write.payload_length = max_payload_length(FrameType::Write) + 1;
    expect_all({
        {"ack-requested heartbeat", raw_frame(hb, Bytes().u64(1).u64(2).b), "flags 0x1 not allowed in heartbeat frames"},
        {"last-chunk read request", raw_frame(rq, Bytes().u32(1).u64(0).u32(8).b), "flags 0x2 not allowed in read request frames"},
        {"sequence on probe", raw_frame(seq_on_probe, Bytes().u64(1).u64(2).b), "probe frame has sequence number 5, must be 0"},
        {"address blob with connection", raw_frame(blob_conn, blob(1, "h", {tcp4(1)}, {}).b), "address blob has connection id 0x7, must be 0"},
        {"write one byte over the maximum", raw_frame(big_write, {}), "oversize write payload"},
    });
}

Test(frame_malformed, length_mismatches) {
    const auto probe = frame(FrameType::Probe, Bytes().u64(1).u64(2));
    auto trailing = probe;
    trailing.insert(trailing.end(), {1, 2, 3});
    RawHeader short_probe = header_for(FrameType::Probe);
    short_probe.payload_length = 8;
    RawHeader long_hello = header_for(FrameType::Hello);
    expect_all({
        {"payload cut short", std::vector<uint8_t>(probe.begin(), probe.end() - 6),
         "truncated frame: header announces 16 payload bytes, 10 present"},
        {"bytes after the frame", trailing, "trailing garbage: 3 bytes after the frame"},
        {"payload shorter than the type's fields", raw_frame(short_probe, Bytes().u64(1).b),
         "probe: payload truncated: timestamp needs 8 bytes at offset 8, 0 left"},
        {"payload longer than the type's fields",
         raw_frame(long_hello, rails_body(1, 1, 1, {}).u8(0).b), "hello: 1 trailing bytes in payload"},
        {"hello rail list cut", frame(FrameType::Hello, Bytes().u64(1).u8(1).u8(1).u16(2).raw(rail(0, 2, 0).b)),
         "hello: payload truncated: rail id needs 2 bytes at offset 21, 0 left"},
        {"write data length too large", frame(FrameType::Write, write_body(0, 0, 0, 10, 5), 1),
         "write: data length field says 10 bytes but 5 follow"},
        {"write data length too small", frame(FrameType::Write, write_body(0, 0, 0, 4, 5), 1),
         "write: data length field says 4 bytes but 5 follow"},
        {"send data length over the maximum",
         frame(FrameType::Send, Bytes().u8(0).u32(0).u32(kMaxDataLength + 1), 1),
         "send: data length 4194305 exceeds maximum 4194304"},
        {"read response without length", frame(FrameType::ReadResponse, Bytes().u8(0), 1),
         "read response: payload truncated: data length needs 4 bytes at offset 1, 0 left"},
    });
}

Test(frame_malformed, data_frame_fields) {
    expect_all({
        {"immediate flag byte 2", frame(FrameType::Write, write_body(0, 2, 0, 1, 1), 1),
         "write: has-immediate byte 2, must be 0 or 1"},
        {"immediate without flag", frame(FrameType::Send, Bytes().u8(0).u32(9).u32(0), 1),
         "send: immediate value set without the has-immediate byte"},
        {"write wraps around", frame(FrameType::Write, write_body(kU64Max, 0, 0, 2, 2), 1),
         "write: remote range at 18446744073709551615 of 2 bytes wraps around"},
        {"zero-length read", frame(FrameType::ReadRequest, Bytes().u32(1).u64(0x1000).u32(0), 1),
         "read request: zero length"},
        {"oversize read", frame(FrameType::ReadRequest, Bytes().u32(1).u64(0).u32(kMaxDataLength + 1), 1),
         "read request: length 4194305 exceeds maximum"},
        {"read wraps around", frame(FrameType::ReadRequest, Bytes().u32(1).u64(kU64Max - 3).u32(8), 1),
         "read request: remote range"},
        {"read error with data", frame(FrameType::ReadResponse, Bytes().u8(1).u32(2).u16(0), 1),
         "read response: status remote access error with 2 data bytes"},
        {"read ok without data", frame(FrameType::ReadResponse, Bytes().u8(0).u32(0), 1),
         "read response: status ok without data"},
        {"read unknown status", frame(FrameType::ReadResponse, Bytes().u8(9).u32(0), 1),
         "read response: unknown status 9"},
        {"ack unknown status", frame(FrameType::Ack, Bytes().u8(200), 1), "ack: unknown status 200"},
        {"nack with ok", frame(FrameType::Nack, Bytes().u8(10).u8(0), 1), "nack: error class ok"},
        {"nack of a heartbeat", frame(FrameType::Nack, Bytes().u8(20).u8(1), 1),
         "nack: op 20 is not write, read request, send or atomic"},
        {"atomic unknown op", frame(FrameType::Atomic, Bytes().u32(1).u64(8).u8(3).u64(1).u64(0).u64(0), 1),
         "atomic: unknown op 3"},
        {"atomic misaligned", frame(FrameType::Atomic, Bytes().u32(1).u64(12).u8(1).u64(1).u64(0).u64(0), 1),
         "atomic: remote address 12 not 8-byte aligned"},
        {"fetch-add with swap", frame(FrameType::Atomic, Bytes().u32(1).u64(8).u8(1).u64(1).u64(2).u64(0), 1),
         "atomic: fetch-and-add with a swap value"},
        {"atomic cut", frame(FrameType::Atomic, Bytes().u32(1).u64(8).u8(1).u64(1), 1),
         "atomic: payload truncated: swap needs 8 bytes at offset 21, 0 left"},
        {"failed atomic with value", frame(FrameType::AtomicResponse, Bytes().u8(3).u64(1), 1),
         "atomic response: status remote operation error with an original value"},
        {"atomic last chunk", raw_frame([] { auto h = header_for(FrameType::Atomic, 1); h.flags = kFlagLastChunk; return h; }(),
                                        Bytes().u32(1).u64(8).u8(1).u64(1).u64(0).u64(0).b),
         "flags 0x2 not allowed in atomic frames"},
        {"nack unknown error", frame(FrameType::Nack, Bytes().u8(13).u8(77), 1), "nack: unknown status 77"},
    });
}

Test(frame_malformed, control_frame_fields) {
    std::vector<Bytes> too_many;
    Bytes count_only = Bytes().u64(1).u8(1).u8(1).u16(kMaxRails + 1);
    expect_all({
        {"hello engine 0", frame(FrameType::Hello, rails_body(0, 1, 1, {})), "hello: engine id 0"},
        {"hello version 0", frame(FrameType::Hello, rails_body(1, 0, 1, {})), "hello: bad version range 0..1"},
        {"hello inverted versions", frame(FrameType::Hello, rails_body(1, 3, 2, {})), "hello: bad version range 3..2"},
        {"hello too many rails", frame(FrameType::Hello, count_only), "hello: 257 rails, maximum 256"},
        {"hello duplicate rail", frame(FrameType::Hello, rails_body(1, 1, 1, {rail(4, 2, 0), rail(4, 1, 9)})),
         "hello: duplicate rail 4"},
        {"verbs rail qpn 0", frame(FrameType::Hello, rails_body(1, 1, 1, {rail(1, 1, 0)})),
         "hello: rail 1 (verbs) has qpn 0, must be 1..16777215"},
        {"verbs rail qpn over 24 bits", frame(FrameType::Hello, rails_body(1, 1, 1, {rail(1, 1, 0x1000000)})),
         "rail 1 (verbs) has qpn 16777216"},
        {"tcp rail with qpn", frame(FrameType::Hello, rails_body(1, 1, 1, {rail(2, 2, 5)})),
         "hello: rail 2 (tcp) has qpn 5, must be 0"},
        {"verbs rail hca index", frame(FrameType::Hello, rails_body(1, 1, 1, {rail(2, 1, 5, 16, 0)})),
         "hello: rail 2 (verbs) names hca index beyond 15"},
        {"unknown rail kind", frame(FrameType::Hello, rails_body(1, 1, 1, {rail(3, 7, 0)})),
         "hello: rail 3 has unknown kind 7"},
        {"ack accepted version 0", frame(FrameType::HelloAck, Bytes().u64(1).u8(0).u8(0).u16(0)),
         "hello ack: accepted with version 0"},
        {"ack refused with version", frame(FrameType::HelloAck, Bytes().u64(1).u8(2).u8(1).u16(0)),
         "hello ack: not accepted but names version 1"},
        {"ack refused with rails", frame(FrameType::HelloAck, Bytes().u64(1).u8(1).u8(0).u16(1).raw(rail(0, 2, 0).b)),
         "hello ack: not accepted but lists 1 rails"},
        {"ack unknown result", frame(FrameType::HelloAck, Bytes().u64(1).u8(4).u8(1).u16(0)),
         "hello ack: unknown result 4"},
        {"goodbye unknown reason", frame(FrameType::Goodbye, Bytes().u8(3)), "goodbye: unknown reason 3"},
        {"sync request epoch 0", frame(FrameType::SyncRequest, Bytes().u32(0).u64(5)), "sync request: epoch 0"},
        {"sync reply epoch 0", frame(FrameType::SyncReply, Bytes().u32(0).u64(5)), "sync reply: epoch 0"},
        {"send credit window 0", frame(FrameType::SendCredit, Bytes().u64(5).u64(0)), "send credit: window 0"},
        {"send abandoned 0", frame(FrameType::SendAbandoned, Bytes().u64(0)), "send abandoned: message sequence number 0"},
        {"port state hca 16", frame(FrameType::PortState, Bytes().u8(16).u8(1).u8(0)),
         "port state: hca index 16, maximum 15"},
        {"port state port 0", frame(FrameType::PortState, Bytes().u8(0).u8(0).u8(0)), "port state: port 0"},
        {"port state condition 3", frame(FrameType::PortState, Bytes().u8(0).u8(1).u8(3)),
         "port state: unknown condition 3"},
    });
}

Test(frame_malformed, address_blob_fields) {
    const auto mlx = hca("mlx5_0", 1, 2, 3, {7});
    std::vector<Bytes> tcp17(17, tcp4(1));
    std::vector<Bytes> hca17;
    for (int i = 0; i < 17; ++i) hca17.push_back(hca("d" + std::to_string(i), 1, 1, 1, {}));
    std::vector<uint32_t> qps65(65, 5);
    Bytes family5;
    family5.u8(5).u16(1).raw(std::vector<uint8_t>(16, 1));
    expect_all({
        {"engine 0", frame(FrameType::AddressBlob, blob(0, "h", {tcp4(1)}, {})), "address blob: engine id 0"},
        {"empty hostname", frame(FrameType::AddressBlob, blob(1, "", {tcp4(1)}, {})),
         "address blob: hostname length 0, must be 1..64"},
        {"long hostname", frame(FrameType::AddressBlob, blob(1, std::string(65, 'a'), {tcp4(1)}, {})),
         "address blob: hostname length 65"},
        {"hostname with space", frame(FrameType::AddressBlob, blob(1, "a b", {tcp4(1)}, {})),
         "address blob: hostname has non-printable characters"},
        {"hostname with nul", frame(FrameType::AddressBlob, blob(1, std::string("a\0b", 3), {tcp4(1)}, {})),
         "hostname has non-printable"},
        {"unreachable peer", frame(FrameType::AddressBlob, blob(1, "h", {}, {})),
         "address blob: no tcp address and no hca"},
        {"17 tcp addresses", frame(FrameType::AddressBlob, blob(1, "h", tcp17, {})),
         "address blob: 17 tcp addresses, maximum 16"},
        {"17 hcas", frame(FrameType::AddressBlob, blob(1, "h", {}, hca17)), "address blob: 17 hcas, maximum 16"},
        {"tcp family 5", frame(FrameType::AddressBlob, blob(1, "h", {family5}, {})),
         "address blob: tcp address family 5, must be 4 or 6"},
        {"tcp port 0", frame(FrameType::AddressBlob, blob(1, "h", {tcp4(0)}, {})),
         "address blob: tcp address 0 has port 0"},
        {"tcp unspecified", frame(FrameType::AddressBlob, blob(1, "h", {tcp4(1), tcp4(2, {0, 0, 0, 0})}, {})),
         "address blob: tcp address 1 is unspecified"},
        {"hca port 0", frame(FrameType::AddressBlob, blob(1, "h", {}, {hca("mlx5_0", 0, 1, 5, {})})),
         "address blob: hca mlx5_0 has port 0"},
        {"hca empty name", frame(FrameType::AddressBlob, blob(1, "h", {}, {hca("", 1, 1, 5, {})})),
         "address blob: hca 0 device name length 0, must be 1..63"},
        {"hca link layer 3", frame(FrameType::AddressBlob, blob(1, "h", {}, {hca("m", 1, 3, 5, {})})),
         "address blob: hca m:1 link layer 3"},
        {"hca mtu 6", frame(FrameType::AddressBlob, blob(1, "h", {}, {hca("m", 1, 1, 6, {})})),
         "address blob: hca m:1 mtu 6, must be 1..5"},
        {"hca qpn 0", frame(FrameType::AddressBlob, blob(1, "h", {}, {hca("m", 1, 1, 5, {3, 0})})),
         "address blob: hca m:1 has qpn 0"},
        {"hca 65 qps", frame(FrameType::AddressBlob, blob(1, "h", {}, {hca("m", 1, 1, 5, qps65)})),
         "address blob: hca m lists 65 qps, maximum 64"},
        {"hca listed twice", frame(FrameType::AddressBlob, blob(1, "h", {}, {mlx, mlx})),
         "address blob: hca mlx5_0:1 listed twice"},
        {"blob cut inside hca", frame(FrameType::AddressBlob, Bytes().u64(1).u8(1).u8(1).str("h").u8(0).u8(1).str("m")),
         "address blob: payload truncated: hca gid needs 16 bytes"},
    });
}

// The encoder refuses what the decoder would reject, with the same reason.
Test(frame_malformed, encoder_refuses_invalid_frames) {
    Hello dup;
    dup.engine_id = 1;
    dup.rails = {{1, RailKind::Tcp, 0, 0, 0}, {1, RailKind::Tcp, 1, 1, 0}};
    AddressBlob v4_junk = sample_blob();
    v4_junk.tcp[0].addr[9] = 1;
    Frame flags = make_frame(Heartbeat{}, 0, kFlagLastChunk);
    Frame conn = make_frame(Ack{}, 1);
    conn.connection_id = 0;
    const std::vector<std::pair<Frame, std::string>> cases = {
        {make_frame(ReadRequest{1, 0, 0}, 1), "read request: zero length"},
        {make_frame(Write{1, 0, {}, pattern(kMaxDataLength + 1, 0)}, 1), "write: data length 4194305 exceeds maximum"},
        {make_frame(Nack{FrameType::Send, WireStatus::Ok}, 1), "nack: error class ok"},
        {make_frame(dup), "hello: duplicate rail 1"},
        {make_frame(v4_junk), "tcp address 0 is ipv4 but has bytes beyond the first 4"},
        {make_frame(Send{}, 0), "send frame has sequence number 0"},
        {flags, "flags 0x2 not allowed in heartbeat frames"},
        {conn, "ack frame has connection id 0"},
    };
    for (const auto& [f, reason] : cases) {
        auto r = encode_frame(f);
        cr_assert(!r.is_ok(), "encoded: %s", reason.c_str());
        const std::string msg = r.status().message();
        cr_expect_eq(r.status().code(), Code::InvalidArgument);
        cr_expect(contains(msg, reason), "message '%s' lacks '%s'", msg.c_str(), reason.c_str());
    }
}
