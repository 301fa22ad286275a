// TcpRail, acknowledgements: the peer's answers (Ack, Nack, ReadResponse,
// ProbeReply) complete the ops this side posted, each exactly once.
#include "transport/tcp/tcp_rail.h"

#include <cstring>

#include "wire/wire_status.h"

namespace tent::tcp {

namespace {

// The frame type a Nack names for each kind of op.
wire::FrameType request_type(RailOpcode op) {
    switch (op) {
    case RailOpcode::Write: return wire::FrameType::Write;
    case RailOpcode::Read: return wire::FrameType::ReadRequest;
    case RailOpcode::Send: return wire::FrameType::Send;
    case RailOpcode::Probe: return wire::FrameType::Probe;
    case RailOpcode::AtomicFetchAdd:
    case RailOpcode::AtomicCmpSwap: return wire::FrameType::Atomic;
    }
    return wire::FrameType::Write;
}

// How the health layer sees a refusal from the target.
RailOutcome outcome_of(wire::WireStatus s) {
    switch (s) {
    case wire::WireStatus::Ok: return RailOutcome::Success;
    case wire::WireStatus::ReceiverNotReady: return RailOutcome::RetryExceeded;
    case wire::WireStatus::RemoteAccess:
    case wire::WireStatus::RemoteInvalid:
    case wire::WireStatus::RemoteOperation: return RailOutcome::RemoteAccess;
    }
    return RailOutcome::RemoteAccess;
}

} // namespace

bool TcpRail::handle_ack(const wire::Frame& f, const wire::Ack& a) {
    auto at = pending_.find(f.seq);
    if (at == pending_.end() || (at->second.opcode == RailOpcode::Read && !at->second.response_in) ||
        is_atomic(at->second.opcode)) {
        reject_frame("ack for sequence " + std::to_string(f.seq) + ", which no write, send or answered read awaits");
        return false;
    }
    // Cumulative: every write and send up to seq was delivered; atomics and
    // other reads wait for their own response (a read's Ack follows its
    // ReadResponse at once).
    for (auto it = pending_.begin(); it != pending_.end() && it->first <= f.seq;) {
        if ((it->second.opcode == RailOpcode::Read && it->first != f.seq) || is_atomic(it->second.opcode)) {
            ++it;
            continue;
        }
        if (it->second.data_withheld)
            fail_local_gone(it->second);
        else if (it->first == f.seq && a.status != wire::WireStatus::Ok)
            complete(it->second, outcome_of(a.status),
                     Status(wire::wire_status_code(a.status),
                            describe(it->second) + " failed at the peer: " + wire::wire_status_name(a.status)));
        else
            complete(it->second, RailOutcome::Success, Status::ok());
        it = pending_nodes_.erase(pending_, it);
    }
    return true;
}

bool TcpRail::handle_nack(const wire::Frame& f, const wire::Nack& n) {
    auto it = pending_.find(f.seq);
    if (it == pending_.end() || request_type(it->second.opcode) != n.op || n.error == wire::WireStatus::Ok) {
        reject_frame("nack of " + std::string(wire::frame_type_name(n.op)) + " for sequence " +
                     std::to_string(f.seq) + ", which does not match an outstanding op");
        return false;
    }
    if (it->second.data_withheld)
        fail_local_gone(it->second);
    else
        complete(it->second, outcome_of(n.error),
                 Status(wire::wire_status_code(n.error),
                        describe(it->second) + " refused by the peer: " + wire::wire_status_name(n.error)));
    pending_nodes_.erase(pending_, it);
    return true;
}

bool TcpRail::handle_read_response(const wire::Frame& f, const wire::ReadResponse& r) {
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    auto it = pending_.find(f.seq);
    if (it == pending_.end() || it->second.opcode != RailOpcode::Read) {
        reject_frame("read response for sequence " + std::to_string(f.seq) + ", which no read awaits");
        return false;
    }
    Pending& p = it->second;
    if (p.response_in) {
        reject_frame("a second read response for sequence " + std::to_string(f.seq));
        return false;
    }
    if (r.status != wire::WireStatus::Ok) {
        const Pending done = p;
        pending_nodes_.erase(pending_, it);
        complete(done, outcome_of(r.status),
                 Status(wire::wire_status_code(r.status),
                        describe(done) + " refused by the peer: " + wire::wire_status_name(r.status)));
        return true;
    }
    if (r.data.size() != p.length) {
        reject_frame("read response of " + std::to_string(r.data.size()) + " bytes for a read of " +
                     std::to_string(p.length));
        return false;
    }
    // Complete once the Ack behind it says all of the data was the region's.
    p.response_in = true;
    if (local_gone(p)) p.data_withheld = true;
    else std::memcpy(p.local, r.data.data(), r.data.size());
    return true;
}

bool TcpRail::local_gone(const Pending& p) const {
    if (p.local_key == 0 || p.length == 0) return false;
    // No access right asked: only whether the range is still inside it.
    return !region_access(p.local_key, reinterpret_cast<std::uintptr_t>(p.local), p.length, 0);
}

void TcpRail::fail_local_gone(const Pending& p) {
    // The program's doing, not the path's: not counted against the rail
    // (Flushed), and not replayed (a caller's error).
    complete(p, RailOutcome::Flushed,
             Status(Code::InvalidArgument, describe(p) + ": " + kLocalBufferDeregistered));
}

bool TcpRail::handle_atomic_response(const wire::Frame& f, const wire::AtomicResponse& r) {
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    auto it = pending_.find(f.seq);
    if (it == pending_.end() || !is_atomic(it->second.opcode)) {
        reject_frame("atomic response for sequence " + std::to_string(f.seq) + ", which no atomic awaits");
        return false;
    }
    const Pending p = it->second;
    pending_nodes_.erase(pending_, it);
    if (r.status != wire::WireStatus::Ok) {
        complete(p, outcome_of(r.status),
                 Status(wire::wire_status_code(r.status),
                        describe(p) + " refused by the peer: " + wire::wire_status_name(r.status)));
        return true;
    }
    if (local_gone(p)) {
        fail_local_gone(p);
        return true;
    }
    std::memcpy(p.local, &r.original, sizeof r.original);
    complete(p, RailOutcome::Success, Status::ok());
    return true;
}

bool TcpRail::handle_probe_reply(const wire::ProbeReply& r) {
    auto it = probes_.find(r.nonce);
    if (it == probes_.end()) {
        reject_frame("probe reply with nonce " + std::to_string(r.nonce) + ", which no probe awaits");
        return false;
    }
    complete(it->second, RailOutcome::ProbeAnswered, Status::ok());
    probes_.erase(it);
    return true;
}

} // namespace tent::tcp
