// The control channel after the handshake: frames that keep failover safe.
//   SyncRequest{nonce}  -> SyncReply{nonce, last message delivered here}
//                          (before a SEND fragment is replayed)
//   Probe{nonce}, ProbeReply{nonce} about rail R: the re-arm handshake
//                          (rearm_handshake.h, engine_rail_care.cpp)
//   PortState              one of the sender's ports went down or came back
//   SendCredit             messages the application took here, and our window
//                          (flow control of messages: send_flow.h)
//   SendAbandoned{seq}     the peer gave up on its message seq: the later ones
//                          are delivered without it
// The channel is a TCP socket; a peer that closes it is unreachable.
#include <sys/socket.h>

#include <cerrno>

#include "common/log.h"
#include "engine/connection.h"
#include "transport/tcp/control_socket.h"
#include "engine/engine.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"

namespace tent {

void Engine::send_control(Connection& conn, const wire::Frame& frame) {
    if (conn.unreachable || !conn.control_failure.is_ok()) return;
    // Behind others that wait for room, a frame waits too: the next service
    // writes them all once the socket drains (POLLOUT).
    const bool full = !conn.control_out.empty();
    Status s = conn.control_out.queue(frame);
    if (s && !full) s = conn.control_out.flush(conn.control.get());
    // Given up at the next service, where the connection's loops are not
    // running (mark_unreachable() finishes its operations).
    if (!s) conn.control_failure = Status(Code::PeerUnreachable, "control channel: " + s.message());
}

void Engine::service_control(Connection& conn, bool read) {
    if (conn.unreachable) return;
    if (conn.control_failure.is_ok() && !conn.control_out.empty())
        if (Status s = conn.control_out.flush(conn.control.get()); !s)
            conn.control_failure = Status(Code::PeerUnreachable, "control channel: " + s.message());
    if (!conn.control_failure.is_ok()) {
        mark_unreachable(conn, conn.control_failure);
        return;
    }
    if (read) read_control(conn);
}

void Engine::read_control(Connection& conn) {
    if (conn.unreachable) return;
    std::uint8_t buf[4096];
    Status closed;
    for (int i = 0; i < 64; ++i) {
        ssize_t n = ::recv(conn.control.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            conn.control_in.insert(conn.control_in.end(), buf, buf + n);
            continue;
        }
        if (n == 0) {
            closed = Status(Code::PeerUnreachable, "control connection closed by the peer");
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            // A reset (the peer closed with bytes unread) is the peer gone
            // too: the unreachable callback always says so.
            closed = Status(Code::PeerUnreachable, Status::from_errno(errno, "control connection").message());
        }
        break;
    }
    while (!conn.unreachable) {
        wire::FrameScan scan = wire::scan_frame(conn.control_in);
        if (scan.state == wire::ScanState::NeedMore) break;
        if (scan.state == wire::ScanState::Error) {
            mark_unreachable(conn, Status(Code::PeerUnreachable, "control channel: " + scan.error.to_string()));
            return;
        }
        auto frame = wire::decode_frame(std::span(conn.control_in).first(scan.bytes));
        conn.control_in.erase(conn.control_in.begin(), conn.control_in.begin() + static_cast<std::ptrdiff_t>(scan.bytes));
        if (!frame) {
            mark_unreachable(conn, Status(Code::PeerUnreachable, "control channel: " + frame.status().to_string()));
            return;
        }
        on_control_frame(conn, *frame);
    }
    if (!closed.is_ok() && !conn.unreachable) mark_unreachable(conn, closed);
}

void Engine::on_control_frame(Connection& conn, const wire::Frame& frame) {
    if (const auto* req = std::get_if<wire::SyncRequest>(&frame.body)) {
        send_control(conn, wire::Frame{0, 0, conn.id, 0, wire::SyncReply{req->epoch, conn.reassembler.last_delivered()}});
    } else if (const auto* reply = std::get_if<wire::SyncReply>(&frame.body)) {
        on_sync_reply(conn, reply->epoch, reply->last_delivered);
    } else if (const auto* probe = std::get_if<wire::Probe>(&frame.body)) {
        on_peer_rearm_frame(conn, frame.rail_id, static_cast<std::uint32_t>(probe->nonce), false);
    } else if (const auto* answer = std::get_if<wire::ProbeReply>(&frame.body)) {
        on_peer_rearm_frame(conn, frame.rail_id, static_cast<std::uint32_t>(answer->nonce), true);
    } else if (const auto* credit = std::get_if<wire::SendCredit>(&frame.body)) {
        on_send_credit(conn, *credit);
    } else if (const auto* abandoned = std::get_if<wire::SendAbandoned>(&frame.body)) {
        on_send_abandoned(conn, abandoned->msg_seq);
    } else if (const auto* port = std::get_if<wire::PortState>(&frame.body)) {
        on_peer_port_state(conn, *port);
    } else if (std::holds_alternative<wire::Goodbye>(frame.body)) {
        mark_unreachable(conn, Status(Code::PeerUnreachable, "the peer said goodbye"));
    } else {
        TENT_DEBUG("control-frame-ignored", "unexpected %s from %s on the control channel",
                   wire::frame_type_name(wire::frame_type(frame)), conn.peer.hostname.c_str());
    }
}

} // namespace tent
