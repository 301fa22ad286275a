// TcpRail, target side: the peer's writes, reads and sends, in the peer's
// sequence, each checked against the registration of its key before memory
// is touched, and answered with an Ack, a Nack or a ReadResponse.
#include "transport/tcp/tcp_rail.h"

#include <cstdint>
#include <cstring>

#include "common/little_endian.h"
#include "common/log.h"
#include "transport/tcp/data_frame_prefix.h"
#include "transport/tcp/tcp_rail_detail.h"
#include "wire/memory_handle.h"

namespace tent::tcp {

Status TcpRail::region_access(std::uint32_t key, std::uint64_t addr, std::uint64_t length,
                              std::uint16_t rights) const {
    const wire::MemoryHandle* region = regions_ ? regions_(key) : nullptr;
    if (!region) return Status(Code::RemoteAccess, "unknown key " + detail::hex(key));
    return wire::check_remote_access(*region, addr, length, rights);
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
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    if (!check_incoming_seq(f)) return false;
    Status access = region_access(w.rkey, w.remote_addr, w.data.size(), wire::kAccessRemoteWrite);
    wire::Frame answer = frame_for(f.seq, wire::Ack{});
    if (!access) {
        TENT_DEBUG("tcp remote access refused", "tcp rail %s: write of %zu bytes at %s refused: %s",
                   identity_.name.c_str(), w.data.size(), detail::hex(w.remote_addr).c_str(), access.message().c_str());
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
    // Held until the first byte, copied into the prefix here, is read.
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    if (!check_incoming_seq(f)) return false;
    Status access = region_access(r.rkey, r.remote_addr, r.length, wire::kAccessRemoteRead);
    wire::Frame answer = frame_for(f.seq, wire::Ack{});
    if (!access) {
        TENT_DEBUG("tcp remote access refused", "tcp rail %s: read of %u bytes at %s refused: %s",
                   identity_.name.c_str(), r.length, detail::hex(r.remote_addr).c_str(), access.message().c_str());
        answer.body = wire::Nack{wire::FrameType::ReadRequest, wire::WireStatus::RemoteAccess};
    } else {
        // Sent from the region itself: a copy of every byte (and a buffer
        // for it) cost a quarter of Open MPI's GET bandwidth at 1 MiB over
        // two TCP rails. The region is looked up again before each sendmsg
        // (withhold_gone_data), and the Ack behind the data tells the
        // initiator whether all of it was the region's.
        // (The prefix holds the first byte: a response without data is no
        // valid frame, and a decoded request reads at least one byte.)
        const auto* src = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(r.remote_addr));
        answer.body = wire::ReadResponse{wire::WireStatus::Ok, {src[0]}};
        std::vector<std::uint8_t> prefix = take_bytes();
        if (encode_data_frame_prefix(answer, r.length - 1, prefix)) {
            queue_read_response(std::move(prefix), std::span<const std::uint8_t>(src + 1, r.length - 1), r.rkey,
                                f.seq);
            answered_ += r.length;
            return true;
        }
        give_back_bytes(prefix);
        answer.body = wire::Nack{wire::FrameType::ReadRequest, wire::WireStatus::RemoteInvalid};
    }
    (void)queue_frame(answer);
    return true;
}

// Through the provider's ledger: a repeat of an id the connection's
// atomics already used gets the first result, not a second execution.
bool TcpRail::handle_atomic(const wire::Frame& f, const wire::Atomic& a) {
    RegionUseLock::Shared using_regions(region_lock_.get());  // region_use_lock.h
    if (!check_incoming_seq(f)) return false;
    Status access = region_access(a.rkey, a.remote_addr, 8, wire::kAccessRemoteAtomic);
    wire::Frame answer = frame_for(f.seq, wire::Ack{});
    if (!ledger_) {
        answer.body = wire::Nack{wire::FrameType::Atomic, wire::WireStatus::RemoteInvalid};
    } else if (!access) {
        TENT_DEBUG("tcp remote access refused", "tcp rail %s: atomic at %s refused: %s", identity_.name.c_str(),
                   detail::hex(a.remote_addr).c_str(), access.message().c_str());
        answer.body = wire::Nack{wire::FrameType::Atomic, wire::WireStatus::RemoteAccess};
    } else {
        auto* word = reinterpret_cast<std::uint64_t*>(static_cast<std::uintptr_t>(a.remote_addr));
        answer.body = wire::AtomicResponse{
            wire::WireStatus::Ok,
            ledger_->execute(identity_.connection_id, a.id, word, a.op, a.operand, a.swap)};
    }
    (void)queue_frame(answer);
    return true;
}

bool TcpRail::handle_send(const wire::Frame& f, const wire::Send& s,
                          const std::function<void(const RailMessage&)>& on_message) {
    if (!check_incoming_seq(f)) return false;
    const auto& d = s.data;
    const std::size_t header_length = d.size() < 2 ? SIZE_MAX : load_le<std::uint16_t>(d.data());
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

} // namespace tent::tcp
