#include "transport/tcp/tcp_rail.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "common/log.h"
#include "transport/tcp/data_frame_prefix.h"
#include "transport/tcp/tcp_counters.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"
#include "wire/memory_handle.h"

namespace tent::tcp {

namespace {

// Bounds on one progress() call, so one busy rail cannot starve the others.
constexpr int kMaxReceivesPerProgress = 64;
constexpr int kMaxSendsPerProgress = 64;
constexpr std::size_t kMaxIov = 64;
// Receive buffer grows to one frame at most; this much is read at a time.
constexpr std::size_t kReceiveChunk = 256 * 1024;

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

const char* opcode_name(RailOpcode op) {
    switch (op) {
    case RailOpcode::Write: return "write";
    case RailOpcode::Read: return "read";
    case RailOpcode::Send: return "send";
    case RailOpcode::Probe: return "probe";
    }
    return "?";
}

// The frame type a Nack names for each kind of op.
wire::FrameType request_type(RailOpcode op) {
    switch (op) {
    case RailOpcode::Write: return wire::FrameType::Write;
    case RailOpcode::Read: return wire::FrameType::ReadRequest;
    case RailOpcode::Send: return wire::FrameType::Send;
    case RailOpcode::Probe: return wire::FrameType::Probe;
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

std::uint64_t timestamp_ns(TimePoint t) {
    return static_cast<std::uint64_t>(t.time_since_epoch().count());
}

} // namespace

Result<std::unique_ptr<TcpRail>> TcpRail::create(UniqueFd fd, TcpRailIdentity identity, TcpRailParams params,
                                                  RegionLookup regions, const Clock& clock) {
    if (!fd.valid()) return Status(Code::InvalidArgument, "tcp rail: no socket");
    if (identity.connection_id == 0) return Status(Code::InvalidArgument, "tcp rail: connection id 0");
    if (params.silence.interval <= Duration::zero() || params.silence.dead_after < 1)
        return Status(Code::InvalidArgument, "tcp rail: heartbeat interval and silence intervals must be positive");
    if (Status s = configure_socket(fd.get(), params.buffers); !s) return s;
    return std::unique_ptr<TcpRail>(
        new TcpRail(std::move(fd), std::move(identity), params, std::move(regions), clock));
}

TcpRail::TcpRail(UniqueFd fd, TcpRailIdentity identity, TcpRailParams params, RegionLookup regions,
                 const Clock& clock)
    : fd_(std::move(fd)), identity_(std::move(identity)), params_(params), regions_(std::move(regions)),
      clock_(clock), silence_(params.silence, clock.now()), loss_(params.loss),
      next_loss_sample_(clock.now() + LossDetector::kSamplePeriod) {}

TcpRail::~TcpRail() = default;

wire::Frame TcpRail::frame_for(std::uint64_t seq, wire::FrameBody body) const {
    return wire::Frame{.flags = 0,
                       .rail_id = identity_.rail_id,
                       .connection_id = identity_.connection_id,
                       .seq = seq,
                       .body = std::move(body)};
}

std::string TcpRail::describe(const Pending& p) const {
    std::string text = std::string(opcode_name(p.opcode)) + " of " + std::to_string(p.length) + " bytes";
    if (p.opcode == RailOpcode::Write || p.opcode == RailOpcode::Read)
        text += " at " + hex(p.remote_addr) + " key " + hex(p.rkey);
    return text + " on tcp rail " + identity_.name;
}

Status TcpRail::post(const RailOp& op) {
    if (!open_)
        return Status(Code::RailDown, "tcp rail " + identity_.name + " is closed: " + close_reason_.message());
    if (op.length > max_op_length())
        return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": op of " + std::to_string(op.length) +
                                                 " bytes above the maximum of " + std::to_string(max_op_length()));
    if (op.length > 0 && op.local == nullptr && op.opcode != RailOpcode::Probe)
        return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": no local buffer");
    if (op.opcode == RailOpcode::Send && op.send_header.size() > kMaxSendHeaderLength)
        return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": send header of " +
                                                 std::to_string(op.send_header.size()) + " bytes above " +
                                                 std::to_string(kMaxSendHeaderLength));
    const TimePoint now = clock_.now();
    Pending p{op.cookie, op.opcode, op.local, op.length, op.remote_addr, op.rkey, now, next_order_++};
    const auto* bytes = static_cast<const std::uint8_t*>(op.local);
    wire::Frame frame = frame_for(0, wire::Heartbeat{});

    switch (op.opcode) {
    case RailOpcode::Write:
        frame.body = wire::Write{.rkey = op.rkey, .remote_addr = op.remote_addr, .immediate = std::nullopt, .data = {}};
        break;
    case RailOpcode::Read:
        if (op.length == 0) {
            // The wire has no empty read (nor does it need one): done at once.
            complete(p, RailOutcome::Success, Status::ok());
            return Status::ok();
        }
        frame.body = wire::ReadRequest{.rkey = op.rkey,
                                       .remote_addr = op.remote_addr,
                                       .length = static_cast<std::uint32_t>(op.length)};
        break;
    case RailOpcode::Send: {
        // The header travels in front of the payload: u16 length, bytes.
        std::vector<std::uint8_t> data;
        data.reserve(2 + op.send_header.size());
        const auto header_length = static_cast<std::uint16_t>(op.send_header.size());
        data.push_back(static_cast<std::uint8_t>(header_length & 0xFF));
        data.push_back(static_cast<std::uint8_t>(header_length >> 8));
        data.insert(data.end(), op.send_header.begin(), op.send_header.end());
        frame.body = wire::Send{.immediate = std::nullopt, .data = std::move(data)};
        break;
    }
    case RailOpcode::Probe:
        frame.body = wire::Probe{.nonce = next_nonce_, .timestamp_ns = timestamp_ns(now)};
        break;
    }

    if (op.opcode == RailOpcode::Probe) {
        if (Status s = queue_frame(frame); !s) return s;
        probes_.emplace(next_nonce_++, p);
    } else {
        frame.seq = next_seq_;
        if (op.opcode == RailOpcode::Read) {
            if (Status s = queue_frame(frame); !s) return s;
        } else {
            auto head = encode_data_frame_prefix(frame, op.length);
            if (!head) return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": " + head.status().message());
            queue_bytes(std::move(*head), std::span<const std::uint8_t>(bytes, op.length));
        }
        pending_.emplace(next_seq_++, p);
    }
    // Start sending now; a socket error closes the rail and the op completes
    // (with the error) at the next progress(), so it is never lost.
    flush();
    return Status::ok();
}

Status TcpRail::queue_frame(const wire::Frame& frame) {
    std::vector<std::uint8_t> bytes;
    if (Status s = wire::encode_frame(frame, bytes); !s)
        return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": " + s.message());
    queue_bytes(std::move(bytes), {});
    return Status::ok();
}

void TcpRail::queue_bytes(std::vector<std::uint8_t> head, std::span<const std::uint8_t> tail) {
    tx_bytes_ += head.size() + tail.size();
    tx_.push_back(TxFrame{std::move(head), tail});
}

void TcpRail::progress(std::vector<RailCompletion>& done,
                       const std::function<void(const RailMessage&)>& on_message) {
    if (open_) receive(on_message);
    if (open_) check_timers();
    if (open_) flush();
    done.insert(done.end(), std::make_move_iterator(ready_.begin()), std::make_move_iterator(ready_.end()));
    ready_.clear();
}

void TcpRail::check_timers() {
    const TimePoint now = clock_.now();
    sample_kernel_counters(now);
    if (silence_.is_dead(now)) {
        using std::chrono::milliseconds;
        const auto unheard = std::chrono::duration_cast<milliseconds>(silence_.unheard_for(now)).count();
        const auto unread = std::chrono::duration_cast<milliseconds>(silence_.silent_for(now)).count();
        TENT_WARN("tcp peer silent",
                  "tcp rail %s: nothing heard from the peer for %lld ms (nothing read for %lld ms), rail declared dead",
                  identity_.name.c_str(), static_cast<long long>(unheard), static_cast<long long>(unread));
        close_with(Code::Timeout, "peer silent for " + std::to_string(unread) + " ms", RailOutcome::Timeout);
        return;
    }
    if (tx_.empty() && silence_.heartbeat_due(now)) {
        wire::Frame hb{.rail_id = identity_.rail_id,
                       .connection_id = identity_.connection_id,
                       .body = wire::Heartbeat{.nonce = next_nonce_++, .timestamp_ns = timestamp_ns(now)}};
        (void)queue_frame(hb); // a heartbeat always encodes
    }
}

void TcpRail::sample_kernel_counters(TimePoint now) {
    const bool loss_due = now >= next_loss_sample_;
    if (!kernel_counters_ || !(loss_due || silence_.kernel_sample_due(now))) return;
    auto counters = read_tcp_counters(fd_.get());
    if (!counters) {
        // Without the counters the rail still works: silence is then judged
        // on what the application reads, and the rail is never lossy.
        TENT_DEBUG("tcp counters unavailable", "tcp rail %s: %s", identity_.name.c_str(),
                   counters.status().to_string().c_str());
        kernel_counters_ = false;
        return;
    }
    if (silence_.kernel_sample_due(now)) silence_.on_kernel_count(now, counters->segments_in);
    if (!loss_due) return;
    next_loss_sample_ = now + LossDetector::kSamplePeriod;
    if (loss_.sample({counters->data_segments_out, counters->retransmitted}, now)) {
        if (loss_.lossy())
            TENT_INFO("tcp lossy", "tcp rail %s: %llu of %llu segments retransmitted in the last seconds; rail is lossy",
                      identity_.name.c_str(), static_cast<unsigned long long>(loss_.window_retransmitted()),
                      static_cast<unsigned long long>(loss_.window_segments()));
        else
            TENT_INFO("tcp loss cleared", "tcp rail %s: %llu of %llu segments retransmitted in the last seconds; rail no longer lossy",
                      identity_.name.c_str(), static_cast<unsigned long long>(loss_.window_retransmitted()),
                      static_cast<unsigned long long>(loss_.window_segments()));
    }
}

void TcpRail::flush() {
    for (int round = 0; round < kMaxSendsPerProgress && open_ && !tx_.empty(); ++round) {
        iovec iov[kMaxIov];
        std::size_t count = 0;
        auto add = [&](const std::uint8_t* data, std::size_t size) {
            if (size > 0) iov[count++] = iovec{const_cast<std::uint8_t*>(data), size};
        };
        std::size_t skip = tx_front_sent_;
        for (auto it = tx_.begin(); it != tx_.end() && count + 2 <= kMaxIov; ++it, skip = 0) {
            if (skip < it->head.size()) {
                add(it->head.data() + skip, it->head.size() - skip);
                add(it->tail.data(), it->tail.size());
            } else {
                const std::size_t into_tail = skip - it->head.size();
                add(it->tail.data() + into_tail, it->tail.size() - into_tail);
            }
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = count;
        // MSG_NOSIGNAL: a reset peer is an error completion, never SIGPIPE in the host.
        const ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            const int err = errno;
            TENT_WARN("tcp send failed", "tcp rail %s: sendmsg: %s", identity_.name.c_str(), std::strerror(err));
            close_with(Code::RailDown, Status::from_errno(err, "sendmsg").message(), RailOutcome::RetryExceeded);
            return;
        }
        silence_.on_sent(clock_.now());
        auto sent = static_cast<std::size_t>(n);
        tx_bytes_ -= sent;
        // Bounded by the queue length: each step drops a frame or ends.
        while (sent > 0) {
            const std::size_t left = tx_.front().size() - tx_front_sent_;
            if (sent < left) {
                tx_front_sent_ += sent;
                break;
            }
            sent -= left;
            tx_.pop_front();
            tx_front_sent_ = 0;
        }
    }
}

void TcpRail::receive(const std::function<void(const RailMessage&)>& on_message) {
    for (int round = 0; round < kMaxReceivesPerProgress && open_; ++round) {
        // Frame and handle everything complete in the buffer.
        std::size_t need = 0;
        while (open_) {
            auto buffered = std::span<const std::uint8_t>(rx_).subspan(rx_begin_, rx_end_ - rx_begin_);
            auto scan = wire::scan_frame(buffered);
            if (scan.state == wire::ScanState::Error) {
                reject_frame(scan.error.message());
                return;
            }
            if (scan.state == wire::ScanState::NeedMore) {
                need = scan.bytes;
                break;
            }
            auto frame = wire::decode_frame(buffered.first(scan.bytes));
            rx_begin_ += scan.bytes;
            if (!frame) {
                reject_frame(frame.status().message());
                return;
            }
            if (!handle(*frame, on_message)) return;
        }
        if (!open_) return;
        // Make room for at least `need` more bytes: the scanner bounds it by
        // one frame of the wire's maximum size, whatever the peer announces.
        if (rx_begin_ == rx_end_) rx_begin_ = rx_end_ = 0;
        const std::size_t want = std::max(need, kReceiveChunk);
        if (rx_.size() - rx_end_ < want) {
            if (rx_begin_ > 0) {
                std::memmove(rx_.data(), rx_.data() + rx_begin_, rx_end_ - rx_begin_);
                rx_end_ -= rx_begin_;
                rx_begin_ = 0;
            }
            if (rx_.size() - rx_end_ < want) rx_.resize(rx_end_ + want);
        }
        const ssize_t n = ::recv(fd_.get(), rx_.data() + rx_end_, rx_.size() - rx_end_, 0);
        if (n > 0) {
            rx_end_ += static_cast<std::size_t>(n);
            const TimePoint now = clock_.now();
            // How long the stream stalls on this path (loss, a slow peer):
            // what tcp_silence_intervals must tolerate.
            if (log_enabled(LogLevel::Debug) && silence_.silent_for(now) > params_.silence.interval)
                TENT_DEBUG("tcp silence ended", "tcp rail %s: stream resumed after %lld ms without data (peer last heard %lld ms ago)",
                           identity_.name.c_str(),
                           static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(silence_.silent_for(now)).count()),
                           static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(silence_.unheard_for(now)).count()));
            silence_.on_received(now);
            continue;
        }
        if (n == 0) {
            // An idle rail closed by its peer is an orderly shutdown (the peer's
            // engine went away): not worth a warning in a healthy run.
            if (outstanding() == 0)
                TENT_INFO("tcp peer closed", "tcp rail %s: peer closed the connection", identity_.name.c_str());
            else
                TENT_WARN("tcp peer closed", "tcp rail %s: peer closed the connection with %zu operations outstanding",
                          identity_.name.c_str(), outstanding());
            close_with(Code::RailDown, "peer closed the connection", RailOutcome::RetryExceeded);
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        const int err = errno;
        TENT_WARN("tcp receive failed", "tcp rail %s: recv: %s", identity_.name.c_str(), std::strerror(err));
        close_with(Code::RailDown, Status::from_errno(err, "recv").message(), RailOutcome::RetryExceeded);
        return;
    }
}

bool TcpRail::handle(const wire::Frame& f, const std::function<void(const RailMessage&)>& on_message) {
    if (f.connection_id != identity_.connection_id || f.rail_id != identity_.rail_id) {
        reject_frame(std::string(wire::frame_type_name(wire::frame_type(f))) + " for connection " +
                     hex(f.connection_id) + " rail " + std::to_string(f.rail_id) + ", expected connection " +
                     hex(identity_.connection_id) + " rail " + std::to_string(identity_.rail_id));
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
                // Atomics are not carried by TCP rails (yet): refuse, as an
                // HCA without atomic support does.
                if (!check_incoming_seq(f)) return false;
                (void)queue_frame(wire::Frame{.rail_id = identity_.rail_id,
                                              .connection_id = identity_.connection_id,
                                              .seq = f.seq,
                                              .body = wire::Nack{wire::FrameType::Atomic,
                                                                 wire::WireStatus::RemoteInvalid}});
                return true;
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

bool TcpRail::check_incoming_seq(const wire::Frame& f) {
    if (f.seq != expected_peer_seq_) {
        reject_frame(std::string(wire::frame_type_name(wire::frame_type(f))) + " with sequence " +
                     std::to_string(f.seq) + ", expected " + std::to_string(expected_peer_seq_));
        return false;
    }
    ++expected_peer_seq_;
    return true;
}

bool TcpRail::handle_write(const wire::Frame& f, const wire::Write& w) {
    if (!check_incoming_seq(f)) return false;
    const wire::MemoryHandle* region = regions_ ? regions_(w.rkey) : nullptr;
    Status access = region ? wire::check_remote_access(*region, w.remote_addr, w.data.size(), wire::kAccessRemoteWrite)
                           : Status(Code::RemoteAccess, "unknown key " + hex(w.rkey));
    wire::Frame answer = frame_for(f.seq, wire::Ack{});
    if (!access) {
        TENT_DEBUG("tcp remote access refused", "tcp rail %s: write of %zu bytes at %s refused: %s",
                   identity_.name.c_str(), w.data.size(), hex(w.remote_addr).c_str(), access.message().c_str());
        answer.body = wire::Nack{wire::FrameType::Write, wire::WireStatus::RemoteAccess};
    } else {
        if (!w.data.empty())
            std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(w.remote_addr)), w.data.data(),
                        w.data.size());
        answer.body = wire::Ack{wire::WireStatus::Ok};
    }
    (void)queue_frame(answer); // Ack and Nack always encode
    return true;
}

bool TcpRail::handle_read_request(const wire::Frame& f, const wire::ReadRequest& r) {
    if (!check_incoming_seq(f)) return false;
    const wire::MemoryHandle* region = regions_ ? regions_(r.rkey) : nullptr;
    Status access = region ? wire::check_remote_access(*region, r.remote_addr, r.length, wire::kAccessRemoteRead)
                           : Status(Code::RemoteAccess, "unknown key " + hex(r.rkey));
    wire::Frame answer = frame_for(f.seq, wire::Ack{});
    if (!access) {
        TENT_DEBUG("tcp remote access refused", "tcp rail %s: read of %u bytes at %s refused: %s",
                   identity_.name.c_str(), r.length, hex(r.remote_addr).c_str(), access.message().c_str());
        answer.body = wire::Nack{wire::FrameType::ReadRequest, wire::WireStatus::RemoteAccess};
    } else {
        const auto* src = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(r.remote_addr));
        answer.body = wire::ReadResponse{wire::WireStatus::Ok, std::vector<std::uint8_t>(src, src + r.length)};
    }
    (void)queue_frame(answer);
    return true;
}

bool TcpRail::handle_send(const wire::Frame& f, const wire::Send& s,
                          const std::function<void(const RailMessage&)>& on_message) {
    if (!check_incoming_seq(f)) return false;
    const auto& d = s.data;
    const std::size_t header_length = d.size() < 2 ? SIZE_MAX : d[0] | (std::size_t{d[1]} << 8);
    if (header_length > kMaxSendHeaderLength || header_length + 2 > d.size()) {
        reject_frame("send whose header length does not fit its " + std::to_string(d.size()) + " bytes");
        return false;
    }
    wire::Frame answer = frame_for(f.seq, wire::Ack{});
    if (!on_message) {
        answer.body = wire::Nack{wire::FrameType::Send, wire::WireStatus::ReceiverNotReady};
    } else {
        std::span<const std::uint8_t> all(d);
        on_message(RailMessage{all.subspan(2, header_length), all.subspan(2 + header_length)});
        answer.body = wire::Ack{wire::WireStatus::Ok};
    }
    (void)queue_frame(answer);
    return true;
}

bool TcpRail::handle_ack(const wire::Frame& f, const wire::Ack& a) {
    auto at = pending_.find(f.seq);
    if (at == pending_.end() || at->second.opcode == RailOpcode::Read) {
        reject_frame("ack for sequence " + std::to_string(f.seq) + ", which no write or send awaits");
        return false;
    }
    // Cumulative: every write and send up to seq was delivered; reads wait
    // for their own response.
    for (auto it = pending_.begin(); it != pending_.end() && it->first <= f.seq;) {
        if (it->second.opcode == RailOpcode::Read) {
            ++it;
            continue;
        }
        if (it->first == f.seq && a.status != wire::WireStatus::Ok)
            complete(it->second, outcome_of(a.status),
                     Status(wire::wire_status_code(a.status),
                            describe(it->second) + " failed at the peer: " + wire::wire_status_name(a.status)));
        else
            complete(it->second, RailOutcome::Success, Status::ok());
        it = pending_.erase(it);
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
    complete(it->second, outcome_of(n.error),
             Status(wire::wire_status_code(n.error),
                    describe(it->second) + " refused by the peer: " + wire::wire_status_name(n.error)));
    pending_.erase(it);
    return true;
}

bool TcpRail::handle_read_response(const wire::Frame& f, const wire::ReadResponse& r) {
    auto it = pending_.find(f.seq);
    if (it == pending_.end() || it->second.opcode != RailOpcode::Read) {
        reject_frame("read response for sequence " + std::to_string(f.seq) + ", which no read awaits");
        return false;
    }
    const Pending p = it->second;
    if (r.status != wire::WireStatus::Ok) {
        pending_.erase(it);
        complete(p, outcome_of(r.status),
                 Status(wire::wire_status_code(r.status),
                        describe(p) + " refused by the peer: " + wire::wire_status_name(r.status)));
        return true;
    }
    if (r.data.size() != p.length) {
        reject_frame("read response of " + std::to_string(r.data.size()) + " bytes for a read of " +
                     std::to_string(p.length));
        return false;
    }
    pending_.erase(it);
    std::memcpy(p.local, r.data.data(), r.data.size());
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

void TcpRail::complete(const Pending& p, RailOutcome outcome, Status status) {
    ready_.push_back(RailCompletion{p.cookie, outcome, std::move(status), clock_.now() - p.posted});
}

void TcpRail::reject_frame(const std::string& reason) {
    TENT_WARN("tcp frame rejected", "tcp rail %s: %s; closing the rail", identity_.name.c_str(), reason.c_str());
    // Tell the peer why, best effort: the frame goes out only if the socket
    // takes it right now.
    tx_.clear();
    tx_front_sent_ = 0;
    tx_bytes_ = 0;
    wire::Frame bye{.rail_id = identity_.rail_id,
                    .connection_id = identity_.connection_id,
                    .body = wire::Goodbye{wire::GoodbyeReason::ProtocolError}};
    if (auto bytes = wire::encode_frame(bye)) (void)::send(fd_.get(), bytes->data(), bytes->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    close_with(Code::TransportError, "frame rejected: " + reason, RailOutcome::RetryExceeded);
}

void TcpRail::close_with(Code code, const std::string& reason, RailOutcome first) {
    if (!open_) return;
    open_ = false;
    close_reason_ = Status(code, "tcp rail " + identity_.name + ": " + reason);
    // Shut down, but keep the descriptor until destruction: it stays
    // readable (EOF), which wakes the caller's epoll to collect the
    // completions below, and the number cannot be reused under its feet.
    ::shutdown(fd_.get(), SHUT_RDWR);
    tx_.clear();
    tx_front_sent_ = 0;
    tx_bytes_ = 0;
    // Oldest first, as a QP reports them: the op that met the error, then
    // everything behind it flushed.
    std::vector<Pending> all;
    all.reserve(pending_.size() + probes_.size());
    for (auto& [seq, p] : pending_) all.push_back(p);
    for (auto& [nonce, p] : probes_) all.push_back(p);
    std::sort(all.begin(), all.end(), [](const Pending& a, const Pending& b) { return a.order < b.order; });
    pending_.clear();
    probes_.clear();
    bool first_done = false;
    for (const Pending& p : all) {
        RailOutcome outcome = first_done ? RailOutcome::Flushed : first;
        if (p.opcode == RailOpcode::Probe) outcome = RailOutcome::ProbeFailed;
        else first_done = true;
        Status status = outcome == RailOutcome::Flushed
                            ? Status(Code::RailDown, describe(p) + " flushed: " + reason)
                            : Status(code, describe(p) + " failed: " + reason);
        complete(p, outcome, std::move(status));
    }
}

Status TcpRail::fail() {
    close_with(Code::RailDown, "failed by the engine", RailOutcome::Flushed);
    return Status::ok();
}

void TcpRail::close() {
    if (!open_) return;
    // Goodbye, best effort, then everything outstanding is flushed.
    wire::Frame bye{.rail_id = identity_.rail_id,
                    .connection_id = identity_.connection_id,
                    .body = wire::Goodbye{wire::GoodbyeReason::Normal}};
    if (tx_.empty())
        if (auto bytes = wire::encode_frame(bye))
            (void)::send(fd_.get(), bytes->data(), bytes->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    close_with(Code::RailDown, "closed locally", RailOutcome::Flushed);
}

} // namespace tent::tcp
