// TcpRail, initiator side: post() turns an op into a frame, queued with
// the op's data and flushed to the socket with sendmsg.
#include "transport/tcp/tcp_rail.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/little_endian.h"
#include "common/log.h"
#include "transport/tcp/data_frame_prefix.h"
#include "transport/tcp/tcp_rail_detail.h"
#include "wire/frame_codec.h"
#include "wire/memory_handle.h"

namespace tent::tcp {

namespace {

// Bounds on one progress() call, so one busy rail cannot starve the others.
constexpr int kMaxSendsPerProgress = 64;
constexpr std::size_t kMaxIov = 64;

} // namespace

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
    Pending p{op.cookie, op.opcode, op.local, op.length, op.remote_addr, op.rkey, op.lkey, now, next_order_++};
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
        std::vector<std::uint8_t> data = take_bytes();
        data.resize(2 + op.send_header.size());
        store_le(data.data(), static_cast<std::uint16_t>(op.send_header.size()));
        std::copy(op.send_header.begin(), op.send_header.end(), data.begin() + 2);
        frame.body = wire::Send{.immediate = std::nullopt, .data = std::move(data)};
        break;
    }
    case RailOpcode::Probe:
        frame.body = wire::Probe{.nonce = next_nonce_, .timestamp_ns = detail::timestamp_ns(now)};
        break;
    case RailOpcode::AtomicFetchAdd:
    case RailOpcode::AtomicCmpSwap:
        if (op.length != 8 || op.remote_addr % 8 != 0)
            return Status(Code::InvalidArgument, "tcp rail " + identity_.name +
                                                     ": an atomic takes 8 bytes at an 8-byte aligned address");
        frame.body = wire::Atomic{.rkey = op.rkey,
                                  .remote_addr = op.remote_addr,
                                  .op = op.opcode == RailOpcode::AtomicCmpSwap ? wire::AtomicOp::CompareSwap
                                                                               : wire::AtomicOp::FetchAdd,
                                  .operand = op.compare_add,
                                  .swap = op.opcode == RailOpcode::AtomicCmpSwap ? op.swap : 0,
                                  .id = op.atomic_id};
        break;
    }

    if (op.opcode == RailOpcode::Probe) {
        if (Status s = queue_frame(frame); !s) return s;
        probes_.emplace(next_nonce_++, p);
    } else {
        frame.seq = next_seq_;
        if (op.opcode == RailOpcode::Read || is_atomic(op.opcode)) {
            if (Status s = queue_frame(frame); !s) return s;
        } else {
            std::vector<std::uint8_t> head = take_bytes();
            const Status encoded = encode_data_frame_prefix(frame, op.length, head);
            if (auto* send = std::get_if<wire::Send>(&frame.body)) give_back_bytes(send->data);
            if (!encoded) return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": " + encoded.message());
            // A write's data is looked up again as it goes (withhold_gone_data);
            // a message's is not: zeros delivered as a message would be data
            // the program never sent.
            queue_bytes(std::move(head), std::span<const std::uint8_t>(bytes, op.length), false,
                        op.opcode == RailOpcode::Write ? op.lkey : 0, next_seq_);
        }
        pending_nodes_.assign(pending_, next_seq_++, p);
    }
    // Start sending now (or at end_posts()); a socket error closes the rail
    // and the op completes (with the error) at the next progress(), so it is
    // never lost.
    if (!holding_posts_) flush();
    return Status::ok();
}

void TcpRail::end_posts() {
    holding_posts_ = false;
    flush();
}

std::vector<std::uint8_t> TcpRail::take_bytes() {
    if (spare_bytes_.empty()) return {};
    std::vector<std::uint8_t> bytes = std::move(spare_bytes_.back());
    spare_bytes_.pop_back();
    bytes.clear();
    return bytes;
}

void TcpRail::give_back_bytes(std::vector<std::uint8_t>& bytes) {
    // Frames' own bytes are small (data goes from the caller's buffer), and
    // a few are in flight at a time: a rare large one is not kept.
    constexpr std::size_t kLargest = 4096, kKept = 16;
    if (bytes.capacity() == 0 || bytes.capacity() > kLargest || spare_bytes_.size() >= kKept) return;
    spare_bytes_.push_back(std::move(bytes));
}

Status TcpRail::queue_frame(const wire::Frame& frame) {
    std::vector<std::uint8_t> bytes = take_bytes();
    if (Status s = wire::encode_frame(frame, bytes); !s) {
        give_back_bytes(bytes);
        return Status(Code::InvalidArgument, "tcp rail " + identity_.name + ": " + s.message());
    }
    const auto* ack = std::get_if<wire::Ack>(&frame.body);
    queue_bytes(std::move(bytes), {}, ack && ack->status == wire::WireStatus::Ok);
    return Status::ok();
}

void TcpRail::queue_bytes(std::vector<std::uint8_t> head, std::span<const std::uint8_t> tail, bool ok_ack,
                          std::uint32_t tail_key, std::uint64_t seq) {
    if (ok_ack && !tx_.empty() && tx_acks_only_ && tx_front_sent_ == 0) {
        // Acks are cumulative: this one says all the queued one said.
        tx_bytes_ += head.size();
        tx_bytes_ -= tx_.back().size();
        give_back_bytes(tx_.back().head);
        tx_.back() = TxFrame{std::move(head), tail, 0, 0, false, {}, {}};
        return;
    }
    tx_acks_only_ = ok_ack && (tx_.empty() || tx_acks_only_);
    tx_bytes_ += head.size() + tail.size();
    tx_.push_back(TxFrame{std::move(head), tail, tail.empty() ? 0 : tail_key, seq, false, {}, {}});
}

void TcpRail::queue_read_response(std::vector<std::uint8_t> head, std::span<const std::uint8_t> tail,
                                  std::uint32_t region_key, std::uint64_t seq) {
    std::vector<std::uint8_t> trailer = take_bytes();
    (void)wire::encode_frame(frame_for(seq, wire::Ack{wire::WireStatus::Ok}), trailer);  // an Ack always encodes
    TxFrame frame{std::move(head), tail, tail.empty() ? 0 : region_key, seq, true, {}, std::move(trailer)};
    tx_acks_only_ = false;
    tx_bytes_ += frame.size();
    tx_.push_back(std::move(frame));
}

void TcpRail::withhold_gone_data(TxFrame& frame) {
    Pending* write = nullptr;  // the write whose data is the frame's tail, unless it answers a read
    bool gone = false;
    if (frame.answers_read) {
        gone = !region_access(frame.tail_key, reinterpret_cast<std::uintptr_t>(frame.tail.data()), frame.tail.size(),
                              wire::kAccessRemoteRead);
    } else {
        auto it = pending_.find(frame.seq);
        if (it == pending_.end()) {
            frame.tail_key = 0;
            return;
        }
        write = &it->second;
        gone = local_gone(*write);
    }
    if (!gone) return;  // still registered: looked at again before its next bytes go
    frame.filler.assign(frame.tail.size(), 0);
    frame.tail = frame.filler;
    frame.tail_key = 0;  // zeros need no second look
    if (write) {
        write->data_withheld = true;
        return;
    }
    TENT_DEBUG("tcp read withheld", "tcp rail %s: the region a read of sequence %llu was answered from was "
               "deregistered before all of it was sent: the rest goes as zeros and the read fails",
               identity_.name.c_str(), static_cast<unsigned long long>(frame.seq));
    std::vector<std::uint8_t> nack;
    (void)wire::encode_frame(frame_for(frame.seq, wire::Nack{wire::FrameType::ReadRequest,
                                                             wire::WireStatus::RemoteAccess}),
                             nack);  // a Nack always encodes
    tx_bytes_ = tx_bytes_ - frame.trailer.size() + nack.size();
    frame.trailer = std::move(nack);
}

// An Ack alone waits one turn (or until the next post): the application
// mostly answers a message at once, and the answer then carries the Ack in
// the same sendmsg and segment, a system call and a wake-up less at each
// end per message. A driver about to sleep still sends it: wants_write()
// wakes it at once.
void TcpRail::flush_answers() {
    if (!tx_.empty() && tx_acks_only_ && !acks_held_) {
        acks_held_ = true;
        return;
    }
    acks_held_ = false;
    flush();
}

void TcpRail::flush(bool leaving) {
    if (!fd_.valid()) return;  // re-armed, waiting for the peer's new socket
    // Taken at the first tail looked at (most flushes, of messages and
    // acks, have none) and held until the last sendmsg returned.
    std::optional<RegionUseLock::Shared> using_regions;  // region_use_lock.h
    for (int round = 0; round < kMaxSendsPerProgress && open_ && !tx_.empty(); ++round) {
        iovec iov[kMaxIov];
        std::size_t count = 0;
        auto add = [&](const std::uint8_t* data, std::size_t size) {
            if (size > 0) iov[count++] = iovec{const_cast<std::uint8_t*>(data), size};
        };
        std::size_t skip = tx_front_sent_;
        for (auto it = tx_.begin(); it != tx_.end() && count + 3 <= kMaxIov; ++it, skip = 0) {
            // Looked at just before the sendmsg that copies it, with the
            // region use lock held until the call returned: a deregistration
            // waits for this flush, and the next one sees the region gone.
            // Once the tail is sent, nothing of it is looked at again (and
            // the trailer, maybe partly sent, keeps its size).
            if (it->tail_key != 0 && skip < it->head.size() + it->tail.size()) {
                if (!using_regions) using_regions.emplace(region_lock_.get());
                withhold_gone_data(*it);
            }
            for (std::span<const std::uint8_t> part : {std::span<const std::uint8_t>(it->head), it->tail,
                                                      std::span<const std::uint8_t>(it->trailer)}) {
                if (skip >= part.size()) {
                    skip -= part.size();
                    continue;
                }
                add(part.data() + skip, part.size() - skip);
                skip = 0;
            }
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = count;
        // MSG_NOSIGNAL: a reset peer is an error completion, never SIGPIPE in the host.
        const ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || leaving) return;
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
            give_back_bytes(tx_.front().head);
            give_back_bytes(tx_.front().trailer);
            tx_.pop_front();
            tx_front_sent_ = 0;
        }
    }
    if (tx_.empty()) acks_held_ = false;
}

} // namespace tent::tcp
