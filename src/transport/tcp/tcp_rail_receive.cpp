// TcpRail, receiving side: the incoming byte stream cut into frames, each
// checked to belong to this rail and handed to its handler.
#include "transport/tcp/tcp_rail.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "transport/tcp/tcp_rail_detail.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"

namespace tent::tcp {

namespace {

// Bounds on one progress() call, so one busy rail cannot starve the others.
constexpr int kMaxReceivesPerProgress = 64;
// What one recv() into the receive buffer asks for: detail::kReceiveChunk,
// or, while a frame is being cut, the rest of it and that much more (the
// buffer grows to one frame and a chunk at most): a recv() that fills
// exactly the rest of a frame says nothing of what follows, and a message
// longer than a chunk paid one more recv() that could only fail with
// EAGAIN. Small on purpose: what the buffer takes of a Write's or a
// ReadResponse's data is copied to its place, the rest is read straight
// there (tcp_rail_direct.cpp), and a 256 KiB read pulled three quarters of a
// 128 KiB data frame through the copy. 16 KiB still holds a hundred small
// frames.
using detail::kReceiveChunk;
// Read data one receive() answers at most (TcpRail::answered_): the
// default rail queue (rail_queue_bytes), all a peer keeps in flight on one
// rail. A queued answer costs no copy, and each flush gives the socket what
// it has room for: at 512 KiB a turn the socket ran dry between turns, and
// NPmpi's 8 MiB reads over two rails moved 5% (Reno) to 25% (BBR) less.
constexpr std::uint64_t kAnswerBudget = 4 * 1024 * 1024;

} // namespace

// A read of fewer bytes than it had room for found the socket empty; below
// kSmallRead it ends the rail's reading for the turn (TcpRail::receive).
bool detail::emptied_socket(std::size_t got, std::size_t room) {
    constexpr std::size_t kSmallRead = 64 * 1024;
    return got < room && got < kSmallRead;
}

bool detail::read_data_ended_stream(std::size_t got, std::size_t room, bool more_read_data_due) {
    return got < room && !more_read_data_due;
}

// Each round frames and handles what the buffer holds, then reads once, so
// every byte read in a turn is handled in that turn, except past
// kAnswerBudget of reads answered: complete frames are then left for the
// next turn, and input_waiting() keeps the driver from sleeping on them.
//
// A recv() that returned a few bytes, less than it had room for, emptied
// the socket: what arrived is handled and the turn ends, without a second
// recv() that could only fail with EAGAIN (a system call per message on a
// request-response exchange). Later bytes wake the driver's poll. A stream
// keeps being read: more arrives meanwhile.
void TcpRail::receive(const std::function<void(const RailMessage&)>& on_message) {
    bool drained = false;
    answered_ = 0;
    frames_left_ = false;
    for (int round = 0; open_; ++round) {
        std::size_t need = 0;
        if (!direct_ && !frame_buffered(on_message, need)) return;
        if (!open_ || drained || round == kMaxReceivesPerProgress) return;
        if (direct_) {
            if (!receive_direct(drained)) return;
            continue;
        }
        // Make room for at least `need` more bytes: the scanner bounds it by
        // one frame of the wire's maximum size, whatever the peer announces.
        if (rx_begin_ == rx_end_) rx_begin_ = rx_end_ = 0;
        const std::size_t want = need + kReceiveChunk;
        if (rx_.size() - rx_end_ < want) {
            if (rx_begin_ > 0) {
                std::memmove(rx_.data(), rx_.data() + rx_begin_, rx_end_ - rx_begin_);
                rx_end_ -= rx_begin_;
                rx_begin_ = 0;
            }
            if (rx_.size() - rx_end_ < want) rx_.resize(rx_end_ + want);
        }
        const std::size_t room = want;
        const ssize_t n = ::recv(fd_.get(), rx_.data() + rx_end_, room, 0);
        if (n > 0) {
            rx_end_ += static_cast<std::size_t>(n);
            drained = detail::emptied_socket(static_cast<std::size_t>(n), room);
            note_received();
            continue;
        }
        if (!recv_failed(n)) return;
    }
}

bool TcpRail::frame_buffered(const std::function<void(const RailMessage&)>& on_message, std::size_t& need) {
    while (open_) {
        auto buffered = std::span<const std::uint8_t>(rx_).subspan(rx_begin_, rx_end_ - rx_begin_);
        auto scan = wire::scan_frame(buffered);
        if (scan.state == wire::ScanState::Error) {
            reject_frame(scan.error.message());
            return false;
        }
        if (scan.state == wire::ScanState::NeedMore) {
            need = scan.bytes;
            if (start_direct(buffered)) need = 0;
            return true;
        }
        if (answered_ >= kAnswerBudget) {
            frames_left_ = true;  // the next turn goes on from here
            return false;
        }
        if (take_buffered_direct(buffered.first(scan.bytes))) {
            rx_begin_ += scan.bytes;
            continue;
        }
        auto frame = wire::decode_frame(buffered.first(scan.bytes), scan.header);
        rx_begin_ += scan.bytes;
        if (!frame) {
            reject_frame(frame.status().message());
            return false;
        }
        if (!handle(*frame, on_message)) return false;
    }
    return false;
}

void TcpRail::note_received() {
    const TimePoint now = clock_.now();
    // How long the stream stalls on this path (loss, a slow peer):
    // what tcp_silence_intervals must tolerate.
    if (log_enabled(LogLevel::Debug) && silence_.silent_for(now) > params_.silence.interval)
        TENT_DEBUG("tcp silence ended", "tcp rail %s: stream resumed after %lld ms without data (peer last heard %lld ms ago)",
                   identity_.name.c_str(),
                   static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(silence_.silent_for(now)).count()),
                   static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(silence_.unheard_for(now)).count()));
    silence_.on_received(now);
}

bool TcpRail::recv_failed(ssize_t n) {
    if (n == 0) {
        // An idle rail closed by its peer is an orderly shutdown (the peer's
        // engine went away): not worth a warning in a healthy run.
        if (outstanding() == 0)
            TENT_INFO("tcp peer closed", "tcp rail %s: peer closed the connection", identity_.name.c_str());
        else
            TENT_WARN("tcp peer closed", "tcp rail %s: peer closed the connection with %zu operations outstanding",
                      identity_.name.c_str(), outstanding());
        close_with(Code::RailDown, "peer closed the connection", RailOutcome::RetryExceeded);
        return false;
    }
    if (errno == EINTR) return true;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    const int err = errno;
    // A peer process that exits with our heartbeats unread resets the
    // connection instead of closing it: on an idle rail that is the
    // same orderly end as above, not worth a warning in a healthy run.
    if (err == ECONNRESET && outstanding() == 0)
        TENT_INFO("tcp receive failed", "tcp rail %s: recv: %s (idle rail: the peer went away)",
                  identity_.name.c_str(), std::strerror(err));
    else
        TENT_WARN("tcp receive failed", "tcp rail %s: recv: %s", identity_.name.c_str(), std::strerror(err));
    close_with(Code::RailDown, Status::from_errno(err, "recv").message(), RailOutcome::RetryExceeded);
    return false;
}

bool TcpRail::handle(const wire::Frame& f, const std::function<void(const RailMessage&)>& on_message) {
    if (f.connection_id != identity_.connection_id || f.rail_id != identity_.rail_id) {
        reject_frame(std::string(wire::frame_type_name(wire::frame_type(f))) + " for connection " +
                     detail::hex(f.connection_id) + " rail " + std::to_string(f.rail_id) + ", expected connection " +
                     detail::hex(identity_.connection_id) + " rail " + std::to_string(identity_.rail_id));
        return false;
    }
    return std::visit(
        [&](const auto& body) -> bool {
            using T = std::decay_t<decltype(body)>;
            if constexpr (std::is_same_v<T, wire::Write>) {
                return handle_write(f, body);
            } else if constexpr (std::is_same_v<T, wire::ReadRequest>) {
                return handle_read_request(f, body);
            } else if constexpr (std::is_same_v<T, wire::Send>) {
                return handle_send(f, body, on_message);
            } else if constexpr (std::is_same_v<T, wire::Ack>) {
                return handle_ack(f, body);
            } else if constexpr (std::is_same_v<T, wire::Nack>) {
                return handle_nack(f, body);
            } else if constexpr (std::is_same_v<T, wire::ReadResponse>) {
                return handle_read_response(f, body);
            } else if constexpr (std::is_same_v<T, wire::Atomic>) {
                return handle_atomic(f, body);
            } else if constexpr (std::is_same_v<T, wire::AtomicResponse>) {
                return handle_atomic_response(f, body);
            } else if constexpr (std::is_same_v<T, wire::Probe>) {
                (void)queue_frame(wire::Frame{.rail_id = identity_.rail_id,
                                              .connection_id = identity_.connection_id,
                                              .body = wire::ProbeReply{body.nonce, body.timestamp_ns}});
                return true;
            } else if constexpr (std::is_same_v<T, wire::ProbeReply>) {
                return handle_probe_reply(body);
            } else if constexpr (std::is_same_v<T, wire::Heartbeat> || std::is_same_v<T, wire::HeartbeatAck>) {
                return true; // arrival alone proves liveness
            } else if constexpr (std::is_same_v<T, wire::Goodbye>) {
                TENT_INFO("tcp peer goodbye", "tcp rail %s: peer closed the rail (reason %u)",
                          identity_.name.c_str(), static_cast<unsigned>(body.reason));
                close_with(Code::RailDown, "peer said goodbye", RailOutcome::RetryExceeded);
                return false;
            } else {
                reject_frame(std::string("unexpected ") + wire::frame_type_name(T::kType) + " on a data rail");
                return false;
            }
        },
        f.body);
}

} // namespace tent::tcp
