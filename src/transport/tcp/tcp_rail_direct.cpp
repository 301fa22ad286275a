// TcpRail, direct receive: the data of a large Write or ReadResponse goes
// from the socket straight into the memory it is for, instead of into the
// receive buffer, a decoded frame and then its place (three passes over
// every byte, which on a fast link cost more than the kernel's own copy).
// A frame that one read took whole (with what follows it) is copied once
// from the receive buffer to its place instead.
//
// Only a frame whose fixed fields and destination check out on its first
// bytes goes this way, with the same checks the buffered path makes
// (data_codec.cpp, tcp_rail_target.cpp, tcp_rail_acks.cpp); anything else,
// including every frame that would be refused, takes the buffered path and
// its answers and errors. A Write's region, and a read's local buffer, is
// looked up again before every read, as registrations change between
// progress() turns: a region gone mid-frame gets the rest of the data
// dropped and a Nack (a Write) or the read failed, as at its start.
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstring>

#include "common/little_endian.h"
#include "transport/tcp/tcp_rail.h"
#include "transport/tcp/tcp_rail_detail.h"
#include "wire/frame_header.h"
#include "wire/memory_handle.h"

namespace tent::tcp {

namespace {

// Below this the copy is cheap and the buffered path reads several frames per recv().
constexpr std::uint64_t kDirectMinData = 64 * 1024;
// Fixed fields in front of the data (data_codec.cpp): a Write's rkey,
// address, immediate flag and value and data length; a ReadResponse's
// status and data length.
constexpr std::size_t kWriteFixed = 4 + 8 + 1 + 4 + 4;
constexpr std::size_t kReadResponseFixed = 1 + 4;

} // namespace

namespace {

// Whether the frame starting BUFFERED carries data to place in registered
// memory: only these two. Others (a Send, an Ack) skip the header's
// decoding, and the region use lock, here.
bool places_data(std::span<const std::uint8_t> buffered) {
    constexpr std::size_t kTypeOffset = 5;  // frame_header.h
    if (buffered.size() < wire::kHeaderSize) return false;
    const auto type = static_cast<wire::FrameType>(buffered[kTypeOffset]);
    return type == wire::FrameType::Write || type == wire::FrameType::ReadResponse;
}

} // namespace

// The caller checked places_data(BUFFERED) (and took the region use lock).
std::optional<TcpRail::DirectReceive> TcpRail::direct_target(std::span<const std::uint8_t> buffered,
                                                              std::size_t& fixed) const {
    auto header = wire::decode_header(buffered);
    if (!header || header->connection_id != identity_.connection_id || header->rail_id != identity_.rail_id)
        return std::nullopt;
    const auto body = buffered.subspan(wire::kHeaderSize);
    DirectReceive d;
    if (header->type == wire::FrameType::Write) {
        fixed = kWriteFixed;
        if (body.size() < fixed || header->seq != expected_peer_seq_) return std::nullopt;
        d.write = true;
        d.rkey = load_le<std::uint32_t>(body.data());
        d.remote_addr = load_le<std::uint64_t>(body.data() + 4);
        if (body[12] != 0 || load_le<std::uint32_t>(body.data() + 13) != 0) return std::nullopt;  // with an immediate
        d.length = load_le<std::uint32_t>(body.data() + 17);
        if (d.length + fixed != header->payload_length || d.length > wire::kMaxDataLength) return std::nullopt;
        if (!region_access(d.rkey, d.remote_addr, d.length, wire::kAccessRemoteWrite)) return std::nullopt;
        d.dest = reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(d.remote_addr));
    } else if (header->type == wire::FrameType::ReadResponse) {
        fixed = kReadResponseFixed;
        if (body.size() < fixed || body[0] != static_cast<std::uint8_t>(wire::WireStatus::Ok)) return std::nullopt;
        d.length = load_le<std::uint32_t>(body.data() + 1);
        if (d.length + fixed != header->payload_length) return std::nullopt;
        auto it = pending_.find(header->seq);
        if (it == pending_.end() || it->second.opcode != RailOpcode::Read || it->second.response_in ||
            it->second.length != d.length || local_gone(it->second))
            return std::nullopt;
        d.dest = static_cast<std::uint8_t*>(it->second.local);
    } else {
        return std::nullopt;
    }
    if (d.length < kDirectMinData) return std::nullopt;
    d.seq = header->seq;
    d.left = d.length;
    return d;
}

bool TcpRail::start_direct(std::span<const std::uint8_t> buffered) {
    if (!places_data(buffered)) return false;
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    std::size_t fixed = 0;
    auto d = direct_target(buffered, fixed);
    if (!d) return false;
    // What the buffer holds of the data already; the frame is not all here.
    const std::size_t have = buffered.size() - wire::kHeaderSize - fixed;
    if (have > 0) std::memcpy(d->dest, buffered.data() + wire::kHeaderSize + fixed, have);
    d->dest += have;
    d->left -= have;
    rx_begin_ = rx_end_ = 0;
    direct_ = d;
    return true;
}

bool TcpRail::take_buffered_direct(std::span<const std::uint8_t> frame) {
    if (!places_data(frame)) return false;
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    // A frame that arrived whole in one read: decoding it would copy its
    // data into the frame and then to its place; this copies it once.
    std::size_t fixed = 0;
    auto d = direct_target(frame, fixed);
    if (!d) return false;
    std::memcpy(d->dest, frame.data() + wire::kHeaderSize + fixed, d->length);
    d->dest += d->length;
    d->left = 0;
    direct_ = d;
    finish_direct();
    return true;
}

bool TcpRail::receive_direct(bool& drained) {
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    DirectReceive& d = *direct_;
    if (d.write && !d.refused) {
        d.refused = !region_access(d.rkey, d.remote_addr, d.length, wire::kAccessRemoteWrite);
    } else if (!d.write && !d.refused) {
        auto it = pending_.find(d.seq);
        d.refused = it == pending_.end() || local_gone(it->second);
    }
    if (rx_.size() < kDirectMinData) rx_.resize(kDirectMinData);
    if (d.refused) {
        // A refused write's data is read into the receive buffer and dropped.
        const std::size_t want = std::min<std::uint64_t>(d.left, rx_.size());
        const ssize_t n = ::recv(fd_.get(), rx_.data(), want, 0);
        if (n <= 0) return recv_failed(n);
        note_received();
        drained = detail::emptied_socket(static_cast<std::size_t>(n), want);
        d.left -= static_cast<std::uint64_t>(n);
        if (d.left == 0) finish_direct();
        return true;
    }
    // The rest of the data to its place, and in the same system call what
    // follows it into the (empty) receive buffer: usually the next frame's
    // header, which took a recv() of its own before (about half the receive
    // calls of a 1 MiB read over TCP rails).
    iovec iov[2] = {{d.dest, static_cast<std::size_t>(d.left)}, {rx_.data(), detail::kReceiveChunk}};
    const ssize_t n = ::readv(fd_.get(), iov, 2);
    if (n <= 0) return recv_failed(n);
    note_received();
    const std::size_t got = static_cast<std::size_t>(n);
    drained = detail::emptied_socket(got, iov[0].iov_len + iov[1].iov_len);
    const std::size_t data = std::min<std::size_t>(got, iov[0].iov_len);
    d.left -= data;
    d.dest += data;
    if (d.left > 0) return true;
    rx_begin_ = 0;
    rx_end_ = got - data;
    const bool read = !d.write;
    finish_direct();
    // Without this the turn went on to a recv() that failed with EAGAIN,
    // after the last piece of each rail's share of every striped read.
    if (read && detail::read_data_ended_stream(got, iov[0].iov_len + iov[1].iov_len, read_data_due()))
        drained = true;
    return true;
}

bool TcpRail::read_data_due() const {
    for (const auto& [seq, p] : pending_)
        if (p.opcode == RailOpcode::Read && !p.response_in) return true;
    return false;
}

// The frame is in: answered and completed as the buffered path would.
void TcpRail::finish_direct() {
    const DirectReceive d = *direct_;
    direct_.reset();
    if (d.write) {
        ++expected_peer_seq_;
        wire::Frame answer = frame_for(d.seq, wire::Ack{wire::WireStatus::Ok});
        if (d.refused) answer.body = wire::Nack{wire::FrameType::Write, wire::WireStatus::RemoteAccess};
        (void)queue_frame(answer);
        return;
    }
    auto it = pending_.find(d.seq);
    if (it == pending_.end()) return;  // cannot happen: only a close removes it, and that ends the receive
    // Completed by the Ack (or Nack) that follows.
    it->second.response_in = true;
    it->second.data_withheld = d.refused;
}

} // namespace tent::tcp
