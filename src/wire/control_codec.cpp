// Layouts of the control frame bodies (all integers little-endian):
//   Hello, HelloAck  engine id u64, versions (Hello: min u8, max u8;
//                    HelloAck: result u8, version u8), rail count u16,
//                    rails: rail id u16, kind u8, local index u8,
//                    remote index u8, qpn u32
//   Goodbye          reason u8
//   Heartbeat(Ack), Probe(Reply)  nonce u64, timestamp ns u64
//   SyncRequest/Reply            epoch u32, last delivered u64
//   PortState                    hca index u8, port u8, condition u8
//   SendCredit                   delivered u64, window u64
//   SendAbandoned                message sequence number u64
#include <set>
#include <string>

#include "wire/body_codec.h"

namespace tent::wire {

using detail::invalid;
using detail::truncated;

const char* rail_kind_name(RailKind k) {
    switch (k) {
    case RailKind::Verbs: return "verbs";
    case RailKind::Tcp: return "tcp";
    }
    return "unknown";
}

namespace {

void encode_rails(const std::vector<RailInfo>& rails, ByteWriter& w) {
    w.u16(static_cast<uint16_t>(rails.size()));
    for (const auto& rail : rails) {
        w.u16(rail.rail_id);
        w.u8(static_cast<uint8_t>(rail.kind));
        w.u8(rail.local_index);
        w.u8(rail.remote_index);
        w.u32(rail.qpn);
    }
}

Status decode_rails(FrameType t, ByteReader& r, std::vector<RailInfo>& rails) {
    uint16_t count = 0;
    if (!r.u16(count, "rail count")) return truncated(t, r);
    if (count > kMaxRails)
        return invalid(t, std::to_string(count) + " rails, maximum " + std::to_string(kMaxRails));
    rails.resize(count);
    for (auto& rail : rails) {
        uint8_t kind = 0;
        if (!(r.u16(rail.rail_id, "rail id") && r.u8(kind, "rail kind") &&
              r.u8(rail.local_index, "rail local index") &&
              r.u8(rail.remote_index, "rail remote index") && r.u32(rail.qpn, "rail qpn")))
            return truncated(t, r);
        rail.kind = static_cast<RailKind>(kind);
    }
    return Status::ok();
}

Status validate_rails(FrameType t, const std::vector<RailInfo>& rails) {
    if (rails.size() > kMaxRails)
        return invalid(t, std::to_string(rails.size()) + " rails, maximum " + std::to_string(kMaxRails));
    std::set<uint16_t> ids;
    for (const auto& rail : rails) {
        const std::string which = "rail " + std::to_string(rail.rail_id);
        if (!ids.insert(rail.rail_id).second) return invalid(t, "duplicate " + which);
        switch (rail.kind) {
        case RailKind::Verbs:
            if (rail.qpn == 0 || rail.qpn > kMaxQpn)
                return invalid(t, which + " (verbs) has qpn " + std::to_string(rail.qpn) +
                                      ", must be 1.." + std::to_string(kMaxQpn));
            if (rail.local_index >= kMaxDevices || rail.remote_index >= kMaxDevices)
                return invalid(t, which + " (verbs) names hca index beyond " + std::to_string(kMaxDevices - 1));
            break;
        case RailKind::Tcp:
            if (rail.qpn != 0)
                return invalid(t, which + " (tcp) has qpn " + std::to_string(rail.qpn) + ", must be 0");
            if (rail.local_index >= kMaxTcpAddresses || rail.remote_index >= kMaxTcpAddresses)
                return invalid(t, which + " (tcp) names address index beyond " +
                                      std::to_string(kMaxTcpAddresses - 1));
            break;
        default:
            return invalid(t, which + " has unknown kind " + std::to_string(static_cast<unsigned>(rail.kind)));
        }
    }
    return Status::ok();
}

Status validate_version_range(FrameType t, uint8_t lo, uint8_t hi) {
    if (lo == 0 || lo > hi)
        return invalid(t, "bad version range " + std::to_string(lo) + ".." + std::to_string(hi));
    return Status::ok();
}

// The four liveness bodies share a layout.
template <typename B>
void encode_echo(const B& b, ByteWriter& w) {
    w.u64(b.nonce);
    w.u64(b.timestamp_ns);
}
template <typename B>
Status decode_echo(ByteReader& r, B& b) {
    if (!(r.u64(b.nonce, "nonce") && r.u64(b.timestamp_ns, "timestamp"))) return truncated(B::kType, r);
    return Status::ok();
}

template <typename B>
void encode_sync(const B& b, ByteWriter& w) {
    w.u32(b.epoch);
    w.u64(b.last_delivered);
}
template <typename B>
Status decode_sync(ByteReader& r, B& b) {
    if (!(r.u32(b.epoch, "epoch") && r.u64(b.last_delivered, "last delivered")))
        return truncated(B::kType, r);
    return Status::ok();
}
template <typename B>
Status validate_sync(const B& b) {
    if (b.epoch == 0) return invalid(B::kType, "epoch 0 (epochs start at 1)");
    return Status::ok();
}

} // namespace

// Hello

void encode_body(const Hello& b, ByteWriter& w) {
    w.u64(b.engine_id);
    w.u8(b.version_min);
    w.u8(b.version_max);
    encode_rails(b.rails, w);
}

Status decode_body(ByteReader& r, Hello& b) {
    if (!(r.u64(b.engine_id, "engine id") && r.u8(b.version_min, "version min") &&
          r.u8(b.version_max, "version max")))
        return truncated(Hello::kType, r);
    return decode_rails(Hello::kType, r, b.rails);
}

Status validate_body(const Hello& b) {
    if (b.engine_id == 0) return invalid(Hello::kType, "engine id 0");
    Status st = validate_version_range(Hello::kType, b.version_min, b.version_max);
    if (!st) return st;
    return validate_rails(Hello::kType, b.rails);
}

// HelloAck

void encode_body(const HelloAck& b, ByteWriter& w) {
    w.u64(b.engine_id);
    w.u8(static_cast<uint8_t>(b.result));
    w.u8(b.version);
    encode_rails(b.rails, w);
}

Status decode_body(ByteReader& r, HelloAck& b) {
    uint8_t result = 0;
    if (!(r.u64(b.engine_id, "engine id") && r.u8(result, "result") && r.u8(b.version, "version")))
        return truncated(HelloAck::kType, r);
    b.result = static_cast<HelloResult>(result);
    return decode_rails(HelloAck::kType, r, b.rails);
}

Status validate_body(const HelloAck& b) {
    constexpr FrameType t = HelloAck::kType;
    if (b.engine_id == 0) return invalid(t, "engine id 0");
    switch (b.result) {
    case HelloResult::Accepted:
        if (b.version == 0) return invalid(t, "accepted with version 0");
        return validate_rails(t, b.rails);
    case HelloResult::VersionMismatch:
    case HelloResult::Refused:
    case HelloResult::Crossed:
        if (b.version != 0) return invalid(t, "not accepted but names version " + std::to_string(b.version));
        if (!b.rails.empty()) return invalid(t, "not accepted but lists " + std::to_string(b.rails.size()) + " rails");
        return Status::ok();
    }
    return invalid(t, "unknown result " + std::to_string(static_cast<unsigned>(b.result)));
}

// Goodbye

void encode_body(const Goodbye& b, ByteWriter& w) { w.u8(static_cast<uint8_t>(b.reason)); }

Status decode_body(ByteReader& r, Goodbye& b) {
    uint8_t reason = 0;
    if (!r.u8(reason, "reason")) return truncated(Goodbye::kType, r);
    b.reason = static_cast<GoodbyeReason>(reason);
    return Status::ok();
}

Status validate_body(const Goodbye& b) {
    switch (b.reason) {
    case GoodbyeReason::Normal:
    case GoodbyeReason::ProtocolError:
    case GoodbyeReason::Timeout: return Status::ok();
    }
    return invalid(Goodbye::kType, "unknown reason " + std::to_string(static_cast<unsigned>(b.reason)));
}

// Liveness

void encode_body(const Heartbeat& b, ByteWriter& w) { encode_echo(b, w); }
Status decode_body(ByteReader& r, Heartbeat& b) { return decode_echo(r, b); }
Status validate_body(const Heartbeat&) { return Status::ok(); }

void encode_body(const HeartbeatAck& b, ByteWriter& w) { encode_echo(b, w); }
Status decode_body(ByteReader& r, HeartbeatAck& b) { return decode_echo(r, b); }
Status validate_body(const HeartbeatAck&) { return Status::ok(); }

void encode_body(const Probe& b, ByteWriter& w) { encode_echo(b, w); }
Status decode_body(ByteReader& r, Probe& b) { return decode_echo(r, b); }
Status validate_body(const Probe&) { return Status::ok(); }

void encode_body(const ProbeReply& b, ByteWriter& w) { encode_echo(b, w); }
Status decode_body(ByteReader& r, ProbeReply& b) { return decode_echo(r, b); }
Status validate_body(const ProbeReply&) { return Status::ok(); }

// Sequence agreement

void encode_body(const SyncRequest& b, ByteWriter& w) { encode_sync(b, w); }
Status decode_body(ByteReader& r, SyncRequest& b) { return decode_sync(r, b); }
Status validate_body(const SyncRequest& b) { return validate_sync(b); }

void encode_body(const SyncReply& b, ByteWriter& w) { encode_sync(b, w); }
Status decode_body(ByteReader& r, SyncReply& b) { return decode_sync(r, b); }
Status validate_body(const SyncReply& b) { return validate_sync(b); }

// Flow control

void encode_body(const SendCredit& b, ByteWriter& w) {
    w.u64(b.delivered);
    w.u64(b.window);
}

Status decode_body(ByteReader& r, SendCredit& b) {
    if (!(r.u64(b.delivered, "delivered") && r.u64(b.window, "window"))) return truncated(SendCredit::kType, r);
    return Status::ok();
}

Status validate_body(const SendCredit& b) {
    if (b.window == 0) return invalid(SendCredit::kType, "window 0");
    return Status::ok();
}

void encode_body(const SendAbandoned& b, ByteWriter& w) { w.u64(b.msg_seq); }

Status decode_body(ByteReader& r, SendAbandoned& b) {
    if (!r.u64(b.msg_seq, "message sequence number")) return truncated(SendAbandoned::kType, r);
    return Status::ok();
}

Status validate_body(const SendAbandoned& b) {
    if (b.msg_seq == 0) return invalid(SendAbandoned::kType, "message sequence number 0");
    return Status::ok();
}

// Port events

void encode_body(const PortState& b, ByteWriter& w) {
    w.u8(b.hca_index);
    w.u8(b.port);
    w.u8(static_cast<uint8_t>(b.condition));
}

Status decode_body(ByteReader& r, PortState& b) {
    uint8_t condition = 0;
    if (!(r.u8(b.hca_index, "hca index") && r.u8(b.port, "port") && r.u8(condition, "condition")))
        return truncated(PortState::kType, r);
    b.condition = static_cast<PortCondition>(condition);
    return Status::ok();
}

Status validate_body(const PortState& b) {
    if (b.hca_index >= kMaxDevices)
        return invalid(PortState::kType, "hca index " + std::to_string(b.hca_index) + ", maximum " +
                                             std::to_string(kMaxDevices - 1));
    if (b.port == 0) return invalid(PortState::kType, "port 0");
    switch (b.condition) {
    case PortCondition::Down:
    case PortCondition::Active:
    case PortCondition::DeviceFatal: return Status::ok();
    }
    return invalid(PortState::kType, "unknown condition " + std::to_string(static_cast<unsigned>(b.condition)));
}

} // namespace tent::wire
