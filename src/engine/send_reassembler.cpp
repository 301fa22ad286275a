#include "engine/send_reassembler.h"

#include <cstring>
#include <string>

namespace tent {

Status SendReassembler::add(const SendHeader& h, std::span<const std::uint8_t> payload) {
    if (h.msg_seq < next_ || abandoned_.count(h.msg_seq)) return Status::ok();  // a replayed duplicate, or given up
    if (h.total > max_message_)
        return Status(Code::InvalidArgument, "message " + std::to_string(h.msg_seq) + " of " + std::to_string(h.total) +
                                                 " bytes exceeds the limit");
    if (h.offset + payload.size() > h.total || h.offset + payload.size() < h.offset)
        return Status(Code::InvalidArgument, "fragment of message " + std::to_string(h.msg_seq) + " ends beyond its length");
    if (payload.empty() && h.total != 0)
        return Status(Code::InvalidArgument, "empty fragment of a non-empty message " + std::to_string(h.msg_seq));
    auto [it, fresh] = partial_.try_emplace(h.msg_seq);
    Partial& p = it->second;
    if (fresh) {
        p.total = h.total;
        p.data.resize(h.total);
    } else if (p.total != h.total) {
        return Status(Code::InvalidArgument, "fragments of message " + std::to_string(h.msg_seq) + " disagree on its length");
    }
    if (!p.offsets.insert(h.offset).second) return Status::ok();  // duplicate fragment
    if (!payload.empty()) std::memcpy(p.data.data() + h.offset, payload.data(), payload.size());
    p.received += payload.size();
    return Status::ok();
}

const std::vector<std::uint8_t>* SendReassembler::ready() const {
    auto it = partial_.find(next_);
    if (it == partial_.end()) return nullptr;
    const Partial& p = it->second;
    // Fragments never overlap when the sender follows the protocol; the byte
    // count plus distinct offsets is what we can check cheaply.
    if (p.received != p.total || p.offsets.empty()) return nullptr;
    return &p.data;
}

void SendReassembler::pop_ready() {
    if (!ready()) return;
    partial_.erase(next_);
    ++next_;
    skip_abandoned();
}

Status SendReassembler::abandon(std::uint64_t msg_seq) {
    if (msg_seq < next_ || abandoned_.count(msg_seq)) return Status::ok();
    if (msg_seq - next_ > kMaxAbandonedAhead || abandoned_.size() >= kMaxAbandonedAhead)
        return Status(Code::InvalidArgument, "message " + std::to_string(msg_seq) + " abandoned while " +
                                                 std::to_string(next_) + " is the next to deliver: too far ahead");
    partial_.erase(msg_seq);
    abandoned_.insert(msg_seq);
    skip_abandoned();
    return Status::ok();
}

void SendReassembler::skip_abandoned() {
    while (!abandoned_.empty() && *abandoned_.begin() == next_) {
        abandoned_.erase(abandoned_.begin());
        ++next_;
    }
}

} // namespace tent
