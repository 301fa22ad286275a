// Every frame type survives encode -> decode unchanged, at its boundary
// values, and the header layout on the wire is exactly the documented one.
#include <criterion/criterion.h>

#include <limits>
#include <string>

#include "wire/frame_header.h"
#include "wire_samples.h"

using namespace wire_test;

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();

// Encodes, decodes, compares; re-encodes the decoded frame and compares bytes.
void expect_round_trip(const Frame& f, const char* what) {
    auto bytes = encode_frame(f);
    cr_assert(bytes.is_ok(), "%s: encode failed: %s", what, bytes.status().to_string().c_str());
    auto back = decode_frame(*bytes);
    cr_assert(back.is_ok(), "%s: decode failed: %s", what, back.status().to_string().c_str());
    cr_expect(*back == f, "%s: decoded frame differs", what);
    auto again = encode_frame(*back);
    cr_assert(again.is_ok());
    cr_expect(*again == *bytes, "%s: re-encoding differs", what);
}

size_t payload_of(const Frame& f) { return encode_ok(f).size() - kHeaderSize; }

std::vector<RailInfo> max_rails() {
    std::vector<RailInfo> rails;
    for (size_t i = 0; i < kMaxRails; ++i) {
        const bool verbs = i % 2 == 0;
        rails.push_back({static_cast<uint16_t>(verbs ? 0xFFFF - i : i),
                         verbs ? RailKind::Verbs : RailKind::Tcp,
                         static_cast<uint8_t>(verbs ? kMaxDevices - 1 : kMaxTcpAddresses - 1),
                         static_cast<uint8_t>(i % kMaxDevices), verbs ? kMaxQpn : 0u});
    }
    return rails;
}

AddressBlob max_blob() {
    AddressBlob b;
    b.engine_id = kU64Max;
    b.version_min = 1;
    b.version_max = 255;
    b.hostname = std::string(kMaxHostnameLength, 'h');
    for (size_t i = 0; i < kMaxTcpAddresses; ++i) {
        TcpAddress a;
        a.family = 6;
        a.addr.fill(static_cast<uint8_t>(0xF0 + i));
        a.port = 0xFFFF;
        b.tcp.push_back(a);
    }
    for (size_t i = 0; i < kMaxDevices; ++i) {
        HcaAddress h;
        h.device = std::string(kMaxDeviceNameLength - 2, 'd') + std::to_string(10 + i);
        h.gid.fill(static_cast<uint8_t>(i));
        h.port = 255;
        h.lid = 0xFFFF;
        h.link_layer = 2;
        h.mtu = 5;
        for (size_t q = 0; q < kMaxQpsPerDevice; ++q) h.qpns.push_back(static_cast<uint32_t>(kMaxQpn - q));
        b.hcas.push_back(h);
    }
    return b;
}

} // namespace

Test(frame_roundtrip, every_sample_type) {
    auto samples = sample_frames();
    cr_expect_eq(samples.size(), std::variant_size_v<FrameBody>, "one sample per frame type");
    for (const auto& f : samples) expect_round_trip(f, frame_type_name(frame_type(f)));
}

Test(frame_roundtrip, header_extremes) {
    Frame f = make_frame(Send{}, kU64Max, kFlagAckRequested | kFlagReplay, 0xFFFF);
    f.connection_id = kU64Max;
    expect_round_trip(f, "send, all-ones header fields");
    Frame g = make_frame(Write{}, 1, kFlagAckRequested | kFlagLastChunk | kFlagReplay, 0);
    g.connection_id = 1;
    expect_round_trip(g, "write, smallest header fields, all flags");
}

Test(frame_roundtrip, hello_and_ack_bounds) {
    Hello empty;
    empty.engine_id = 1;
    empty.version_min = empty.version_max = 1;
    expect_round_trip(make_frame(empty), "hello without rails");
    Hello full;
    full.engine_id = kU64Max;
    full.version_min = 1;
    full.version_max = 255;
    full.rails = max_rails();
    Frame f = make_frame(full);
    expect_round_trip(f, "hello with the most rails");
    cr_expect_eq(payload_of(f), max_payload_length(FrameType::Hello), "the bound is exact");

    HelloAck ack;
    ack.engine_id = 9;
    ack.version = 255;
    ack.rails = max_rails();
    expect_round_trip(make_frame(ack), "accepted hello ack with the most rails");
    for (auto result : {HelloResult::VersionMismatch, HelloResult::Refused, HelloResult::Crossed}) {
        HelloAck no;
        no.engine_id = 9;
        no.result = result;
        no.version = 0;
        expect_round_trip(make_frame(no), "refused hello ack");
    }
}

Test(frame_roundtrip, address_blob_bounds) {
    AddressBlob small;
    small.engine_id = 1;
    small.hostname = "h";
    TcpAddress a;
    a.family = 4;
    a.addr = {0, 0, 0, 1};
    a.port = 1;
    small.tcp = {a};
    expect_round_trip(make_frame(small), "blob with one ipv4 address, no hca");

    AddressBlob hca_only;
    hca_only.engine_id = 2;
    hca_only.hostname = "x";
    HcaAddress h;
    h.device = "d";
    hca_only.hcas = {h}; // no pre-created qps yet
    expect_round_trip(make_frame(hca_only), "blob with one hca, no tcp");

    Frame f = make_frame(max_blob());
    expect_round_trip(f, "blob at every bound");
    cr_expect_eq(payload_of(f), max_payload_length(FrameType::AddressBlob), "the bound is exact");
}

Test(frame_roundtrip, data_frames_bounds) {
    expect_round_trip(make_frame(Write{0, kU64Max, std::nullopt, {}}, 1), "zero-length write at the top");
    expect_round_trip(make_frame(Write{kU32Max, 0, 0u, {0xAB}}, 2), "write with immediate 0");
    expect_round_trip(make_frame(Write{1, 2, kU32Max, {}}, 2), "write with immediate only");
    auto big = pattern(kMaxDataLength, 5);
    Frame w = make_frame(Write{7, kU64Max - kMaxDataLength, kU32Max, big}, 3);
    expect_round_trip(w, "largest write ending at the top of memory");
    cr_expect_eq(payload_of(w), max_payload_length(FrameType::Write), "the bound is exact");

    expect_round_trip(make_frame(ReadRequest{0, 0, 1}, 1), "one-byte read");
    expect_round_trip(make_frame(ReadRequest{kU32Max, kU64Max - kMaxDataLength, kMaxDataLength}, kU64Max),
                      "largest read");

    expect_round_trip(make_frame(ReadResponse{WireStatus::Ok, {0}}, 1), "one-byte read response");
    Frame rr = make_frame(ReadResponse{WireStatus::Ok, big}, 1);
    expect_round_trip(rr, "largest read response");
    cr_expect_eq(payload_of(rr), max_payload_length(FrameType::ReadResponse));
    for (auto s : {WireStatus::RemoteAccess, WireStatus::RemoteInvalid, WireStatus::RemoteOperation,
                   WireStatus::ReceiverNotReady})
        expect_round_trip(make_frame(ReadResponse{s, {}}, 4), wire_status_name(s));

    expect_round_trip(make_frame(Send{}, 1), "empty send");
    Frame s = make_frame(Send{kU32Max, big}, 9);
    expect_round_trip(s, "largest send with immediate");
    cr_expect_eq(payload_of(s), max_payload_length(FrameType::Send));
}

Test(frame_roundtrip, completions_and_control) {
    for (uint8_t st = 0; st <= 4; ++st) expect_round_trip(make_frame(Ack{static_cast<WireStatus>(st)}, st + 1), "ack");
    for (auto op : {FrameType::Write, FrameType::ReadRequest, FrameType::Send, FrameType::Atomic})
        for (uint8_t st = 1; st <= 4; ++st)
            expect_round_trip(make_frame(Nack{op, static_cast<WireStatus>(st)}, kU64Max), "nack");
    expect_round_trip(make_frame(Atomic{0, 0, AtomicOp::FetchAdd, kU64Max, 0}, 1), "fetch-and-add at 0");
    expect_round_trip(make_frame(Atomic{kU32Max, kU64Max - 7, AtomicOp::CompareSwap, kU64Max, kU64Max}, kU64Max, kFlagReplay),
                      "compare-and-swap at the top, replayed after sync");
    expect_round_trip(make_frame(AtomicResponse{WireStatus::Ok, kU64Max}, 1), "atomic response");
    expect_round_trip(make_frame(AtomicResponse{WireStatus::RemoteAccess, 0}, 1), "failed atomic");
    for (uint64_t v : {uint64_t{0}, kU64Max}) {
        expect_round_trip(make_frame(Heartbeat{v, v}), "heartbeat");
        expect_round_trip(make_frame(HeartbeatAck{v, ~v}), "heartbeat ack");
        expect_round_trip(make_frame(Probe{~v, v}), "probe");
        expect_round_trip(make_frame(ProbeReply{v, ~v}), "probe reply");
    }
    expect_round_trip(make_frame(SyncRequest{1, 0}), "first sync, nothing delivered");
    expect_round_trip(make_frame(SyncReply{kU32Max, kU64Max}), "sync reply at the top");
    expect_round_trip(make_frame(SendCredit{0, 1}), "first credit, smallest window");
    expect_round_trip(make_frame(SendCredit{kU64Max, kU64Max}), "credit at the top");
    expect_round_trip(make_frame(SendAbandoned{1}), "the first message abandoned");
    expect_round_trip(make_frame(SendAbandoned{kU64Max}), "abandoned at the top");
    for (auto c : {PortCondition::Down, PortCondition::Active, PortCondition::DeviceFatal})
        expect_round_trip(make_frame(PortState{15, 255, c}), "port state");
    for (auto r : {GoodbyeReason::Normal, GoodbyeReason::ProtocolError, GoodbyeReason::Timeout})
        expect_round_trip(make_frame(Goodbye{r}), "goodbye");
}

// The layout documented in frame_header.h, byte by byte, for one Ack.
Test(frame_roundtrip, header_layout_on_the_wire) {
    Frame f = make_frame(Ack{WireStatus::RemoteAccess}, 0x0102030405060708ull, 0, 0xA1B2);
    f.connection_id = 0x1112131415161718ull;
    auto got = encode_ok(f);
    const std::vector<uint8_t> want = {
        'T', 'E', 'N', 'T',                             // magic
        2,                                              // version (protocol.h: kProtocolVersion)
        14,                                             // type: ack
        0, 0,                                           // flags
        32, 0,                                          // header length
        0xB2, 0xA1,                                     // rail id
        1, 0, 0, 0,                                     // payload length
        0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, // connection id
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // sequence number
        1,                                              // status: remote access
    };
    cr_assert_eq(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) cr_expect_eq(got[i], want[i], "byte %zu", i);
}

// The encoder appends, and leaves the buffer untouched when it refuses.
Test(frame_roundtrip, encode_appends_and_is_atomic) {
    std::vector<uint8_t> out = {9, 9};
    Status st = encode_frame(make_frame(Ack{}, 1), out);
    cr_assert(st.is_ok());
    cr_expect_eq(out.size(), 2 + kHeaderSize + 1);
    cr_expect_eq(out[0], 9);
    cr_expect_eq(out[2], 'T');
    const auto before = out;
    st = encode_frame(make_frame(ReadRequest{1, 2, 0}, 1), out);
    cr_expect_eq(st.code(), Code::InvalidArgument);
    cr_expect(out == before);
}
