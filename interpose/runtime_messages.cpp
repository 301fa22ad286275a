// The messages between the interposers of a carried queue pair's two ends:
// the program's sends, the announcements of regions and the answer that a
// queue pair is gone (MessageHeader, shadow_qp.h).
#include "runtime_state.h"

#include <cstring>

#include "activation.h"
#include "common/log.h"
#include "memory.h"

namespace tent::interpose {

namespace {

// Sends the interposer's own message (LENGTH bytes of B) to PEER (state
// mutex not held): B is kept under a cookie of token 0 until its completion
// (settle_completions()), or released at once if tent refuses it.
bool send_own(tent_peer_t* peer, PooledBuffer b, std::size_t length) {
    const void* data = b.data.get();
    std::uint64_t cookie;
    State& s = state();
    {
        std::lock_guard lock(s.mu);
        cookie = s.next_own++ & ~kMessageBit & 0xffffffff;  // token 0: the interposer's own
        s.own[cookie] = std::move(b);
    }
    {
        TentScope scope;
        if (tent_post_send(peer, data, length, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, cookie) == TENT_OK) return true;
    }
    std::lock_guard lock(s.mu);
    if (auto it = s.own.find(cookie); it != s.own.end()) {
        g_pool->release(std::move(it->second));
        s.own.erase(it);
    }
    return false;
}

// Tells PEER that the QP a message of its QP FROM went to is gone, on the
// thread driving the engine (state mutex not held): FROM then fails as a
// QP whose messages find no QP at the other end does (peer_qp_gone()).
void tell_qp_gone(tent_peer_t* peer, std::uint32_t from) {
    if (!peer || from == 0) return;
    PooledBuffer b = g_pool->acquire(sizeof(MessageHeader));
    if (!b.data) return;
    const MessageHeader h{kMessageMagic, from, 0, kQpGone, 0, 0};
    std::memcpy(b.data.get(), &h, sizeof h);
    (void)send_own(peer, std::move(b), sizeof h);
}

} // namespace

// Every message from a peer's interposer, on the thread driving the engine.
void on_message(tent_peer_t* peer, const void* data, size_t length, void*) {
    MessageHeader h;
    if (length < sizeof h) return;
    std::memcpy(&h, data, sizeof h);
    if (h.magic != kMessageMagic) return;
    const auto* p = static_cast<const std::uint8_t*>(data) + sizeof h;
    std::size_t n = length - sizeof h;
    State& s = state();
    std::unique_lock lock(s.mu);
    auto it = s.by_token.find(h.token);
    const bool gone = it == s.by_token.end() || it->second->forgotten ||
                      (it->second->failed && !(h.flags & kKeys));
    if (h.flags & kQpGone) {
        if (!gone) peer_qp_gone(s, *it->second);
        return;
    }
    if (gone) {
        // An adapter's message to a QP that no longer takes any is never
        // acknowledged, and the sender's QP fails: tell the sender.
        lock.unlock();
        tell_qp_gone(peer, h.from);
        return;
    }
    ShadowQp& q = *it->second;
    if (h.seq != 0) {
        if (q.peer_gap) return;
        if (h.seq != q.next_seq_in) {
            // The peer's QP failed on the message before this one (tent gave
            // it up): this and every later one are left, as an adapter's
            // responder leaves what follows a message it missed.
            q.peer_gap = true;
            TENT_DEBUG("interpose-gap", "interposer: qp 0x%x: message %u of the peer's qp lost, later ones dropped",
                       q.qp->qp_num, q.next_seq_in);
            return;
        }
        q.next_seq_in = next_message_seq(q.next_seq_in);
    }
    if (!(h.flags & kBatch)) return take_message(s, q, h, p, n);
    // A batch: each message as its length, then the message (header first).
    for (std::size_t off = 0; off + sizeof(std::uint32_t) <= n;) {
        std::uint32_t len;
        std::memcpy(&len, p + off, sizeof len);
        off += sizeof len;
        if (len < sizeof(MessageHeader) || len > n - off) return;
        MessageHeader inner;
        std::memcpy(&inner, p + off, sizeof inner);
        if (inner.magic == kMessageMagic && !(inner.flags & (kBatch | kKeys)))
            take_message(s, q, inner, p + off + sizeof inner, len - sizeof inner);
        off += len;
    }
}

// A message for the peer of Q in a registered buffer: header, then payload.
PooledBuffer build_message(const ShadowQp& q, std::uint32_t flags, std::uint32_t imm, std::size_t payload,
                           std::size_t* length) {
    *length = sizeof(MessageHeader) + payload;
    PooledBuffer b = g_pool->acquire(*length);
    if (!b.data) return b;
    MessageHeader h{kMessageMagic, q.peer_token, imm, flags, q.token, 0};  // seq: when it goes (ready_messages())
    std::memcpy(b.data.get(), &h, sizeof h);
    return b;
}

// Tells the peer of Q where every region of Q's context open to remote
// access lies, with its tent key (the rkeys the program sends its peer
// then work on every rail).
void announce_regions(const std::shared_ptr<ShadowQp>& q) {
    InsideEngine inside;
    if (!inside.usable()) return;
    std::vector<Announcement> list = announcements(q->qp->context, g_engine);
    if (list.empty()) return;
    std::size_t length = 0;
    PooledBuffer b = build_message(*q, kKeys, 0, list.size() * sizeof(Announcement), &length);
    if (!b.data) return;
    std::memcpy(b.data.get() + sizeof(MessageHeader), list.data(), list.size() * sizeof(Announcement));
    if (!send_own(q->peer, std::move(b), length))
        TENT_ERROR("interpose-keys", "interposer: qp 0x%x: cannot announce its regions to the peer", q->qp->qp_num);
}

} // namespace tent::interpose
