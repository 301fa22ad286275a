// A carried queue pair's work requests from posting to completion: tent's
// calls made in order, its completions settled, completions given to the
// program in posting order.
#include "runtime_state.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "activation.h"
#include "common/log.h"
#include "context_table.h"
#include "signals_held_off.h"

namespace tent::interpose {

// Completes the QP's work requests from the front while they are done, in
// posting order; unsignaled ones leave no completion.
void retire_sends(State& s, ShadowQp& q) {
    while (!q.sq.empty() && q.sq.front().done()) {
        SendSlot& slot = q.sq.front();
        if (!q.forgotten && (slot.signaled || slot.status != IBV_WC_SUCCESS)) {
            ibv_wc wc{};
            wc.wr_id = slot.wr_id;
            wc.status = slot.status;
            wc.opcode = slot.opcode;
            wc.byte_len = slot.byte_len;
            wc.qp_num = q.qp->qp_num;
            push_wc(s, q.qp->send_cq, wc);
        }
        g_pool->release(std::move(slot.message));
        g_pool->release(std::move(slot.inline_copy));
        g_pool->release(std::move(slot.batch));
        q.sq.pop_front();
        ++q.sq_base;
    }
    q.msg_cursor = std::max(q.msg_cursor, q.sq_base);
    if (q.loss_owed && q.sq_base > q.lost_at) lose_peer_qp(s, q);
}

namespace {

// Settles one tent operation of a slot (also when it could not be posted):
// cookie names it (op_cookie).
void settle(State& s, ShadowQp& q, std::uint64_t cookie, bool ok) {
    if (q.failed && !q.draining) return;
    const std::uint64_t seq = cookie_seq(q, cookie);
    if (seq - q.sq_base >= q.sq.size()) return;
    SendSlot& slot = q.sq[seq - q.sq_base];
    if (cookie & kMessageBit) {
        // A message, or a batch of the messages up to slot.batch_last.
        --q.tent_messages;
        const std::uint64_t last = std::max(seq, slot.batch_last);
        for (std::uint64_t i = seq; i <= last && i - q.sq_base < q.sq.size(); ++i)
            q.sq[i - q.sq_base].message_inflight = false;
    } else {
        if (--slot.onesided_parts == 0) count_inflight(q, slot.access, -1);
    }
    if (!ok && !q.failed) return fail_qp(s, q);
    retire_sends(s, q);
}

// A small message (up to kBatchMessageMax bytes of payload) may travel in a batch.
bool batchable(const SendSlot& slot) { return slot.message_length <= sizeof(MessageHeader) + kBatchMessageMax; }

// Adds to CALLS the messages whose one-sided predecessors have all
// completed, in order (under the state mutex; the calls are made by
// make_calls()), from the QP's cursor on. While kMessageWindow tent messages are in flight, small
// messages wait; then those waiting go as one batch.
void ready_messages(ShadowQp& q, std::vector<TentCall>& calls) {
    while (q.msg_cursor - q.sq_base < q.sq.size()) {
        const std::uint64_t first = q.msg_cursor;
        SendSlot& slot = q.sq[first - q.sq_base];
        if (slot.onesided_parts > 0) break;  // its own message, and all later, wait
        if (!slot.message_waiting) {
            ++q.msg_cursor;
            continue;
        }
        if (batchable(slot) && q.tent_messages >= kMessageWindow) break;  // to go in a batch
        // The small messages ready after this one, up to kBatchBytes in all.
        std::uint64_t last = first;
        std::size_t bytes = sizeof(MessageHeader) + sizeof(std::uint32_t) + slot.message_length;
        int count = 1;
        if (batchable(slot)) {
            for (std::uint64_t i = first + 1; i - q.sq_base < q.sq.size(); ++i) {
                const SendSlot& next = q.sq[i - q.sq_base];
                if (next.onesided_parts > 0) break;
                if (!next.message_waiting) continue;
                if (!batchable(next) || bytes + sizeof(std::uint32_t) + next.message_length > kBatchBytes) break;
                bytes += sizeof(std::uint32_t) + next.message_length;
                last = i;
                ++count;
            }
        }
        if (count > 1) {
            slot.batch = g_pool->acquire(bytes);
            if (!slot.batch.data) last = first, count = 1;  // no memory for a batch: this one goes alone
        }
        TentCall c;
        c.kind = TentCall::Message;
        c.cookie = op_cookie(q, first, true);
        // Numbered in the order they go to tent, which is the order the
        // peer gets them (the post mutex is held until make_calls()).
        const std::uint32_t seq = q.next_seq_out;
        q.next_seq_out = next_message_seq(seq);
        if (count == 1) {
            c.local = slot.message.data.get();
            c.length = slot.message_length;
            std::memcpy(slot.message.data.get() + offsetof(MessageHeader, seq), &seq, sizeof seq);
        } else {
            std::uint8_t* out = slot.batch.data.get();
            MessageHeader h{kMessageMagic, q.peer_token, 0, kBatch, q.token, seq};
            std::memcpy(out, &h, sizeof h);
            std::size_t off = sizeof h;
            for (std::uint64_t i = first; i <= last; ++i) {
                const SendSlot& m = q.sq[i - q.sq_base];
                if (!m.message_waiting) continue;
                const auto len = static_cast<std::uint32_t>(m.message_length);
                std::memcpy(out + off, &len, sizeof len);
                std::memcpy(out + off + sizeof len, m.message.data.get(), len);
                off += sizeof len + len;
            }
            c.local = out;
            c.length = off;
        }
        slot.batch_last = last;
        for (std::uint64_t i = first; i <= last; ++i) {
            SendSlot& m = q.sq[i - q.sq_base];
            if (!m.message_waiting) continue;
            m.message_waiting = false;
            m.message_inflight = true;
        }
        ++q.tent_messages;
        q.msg_cursor = last + 1;
        calls.push_back(c);
    }
}

// Makes the calls (Q's post mutex held, state mutex not); a call tent
// refuses settles its operation as failed.
void make_calls(ShadowQp& qr, const std::vector<TentCall>& calls) {
    ShadowQp* q = &qr;
    InsideEngine inside;
    if (!inside.usable()) return;  // the process is exiting: they would never complete
    for (const TentCall& c : calls) {
        int rc;
        {
            TentScope scope;
            switch (c.kind) {
            case TentCall::Message:
                rc = tent_post_send(q->peer, c.local, c.length, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, c.cookie);
                break;
            case TentCall::Write:
                rc = tent_post_write(q->peer, c.local, c.length, c.key, TENT_REMOTE_KEY_SIZE, c.remote_addr,
                                     TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, c.cookie);
                break;
            case TentCall::Atomic:
                // Over TCP rails, where the peer's engine executes each atomic
                // once and answers a repeat from its ledger: exactly once
                // through any failover (an HCA's atomic whose rail fails may
                // have executed, and could not be sent again).
                rc = tent_post_atomic(q->peer, c.atomic_op, c.compare_add, c.swap, const_cast<void*>(c.local), c.key,
                                      TENT_REMOTE_KEY_SIZE, c.remote_addr, TENT_PRIORITY_HIGH, TENT_TRANSPORT_TCP,
                                      c.cookie);
                break;
            default:
                rc = tent_post_read(q->peer, const_cast<void*>(c.local), c.length, c.key, TENT_REMOTE_KEY_SIZE,
                                    c.remote_addr, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, c.cookie);
                break;
            }
        }
        if (rc == TENT_OK) continue;
        TENT_ERROR("interpose-post", "interposer: qp 0x%x: tent refused a work request: %s", q->qp->qp_num,
                   tent_strerror(rc));
        State& s = state();
        std::lock_guard lock(s.mu);
        settle(s, *q, c.cookie, false);
    }
}

// Posts what is ready of Q's messages.
void pump(ShadowQp& q) {
    std::lock_guard post(q.post_mutex);
    std::vector<TentCall>& calls = q.calls;
    calls.clear();
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        if (q.forgotten || q.failed || q.mode != QpMode::Tent) return;
        release_held(q, calls);
        ready_messages(q, calls);
    }
    if (!calls.empty()) make_calls(q, calls);
}

} // namespace

// Settles N completions tent reported for the interposer's posts, then
// posts the messages they let go (their one-sided predecessors completed,
// or the QP's message window opened).
void settle_completions(const tent_completion_t* c, int n) {
    std::vector<std::shared_ptr<ShadowQp>> touched;  // kept alive until pumped
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        for (int i = 0; i < n; ++i) {
            const std::uint64_t token = c[i].cookie >> 32;
            if (token == 0) {  // the interposer's own message
                if (auto it = s.own.find(c[i].cookie); it != s.own.end()) {
                    g_pool->release(std::move(it->second));
                    s.own.erase(it);
                }
                continue;
            }
            auto it = s.by_token.find(static_cast<std::uint32_t>(token));
            if (it == s.by_token.end()) continue;
            settle(s, *it->second, c[i].cookie, c[i].status == TENT_OK);
            if (touched.empty() || touched.back() != it->second) touched.push_back(it->second);
        }
        // A destroyed QP goes once tent no longer uses its buffers.
        for (auto& q : touched)
            if (q->forgotten && tent_done_with(*q)) s.by_token.erase(q->token);
    }
    for (auto& q : touched) pump(*q);
}

int post_locked(ShadowQp& qr, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    ShadowQp* q = &qr;
    State& s = state();
    std::unique_lock lock(s.mu);
    if (q->mode == QpMode::Plain) {
        lock.unlock();
        const ProviderOps* ops = provider_ops(q->qp->context);
        return ops ? ops->post_send(q->qp, wr, bad_wr) : EINVAL;
    }
    if (q->mode != QpMode::Tent) {
        for (; wr; wr = wr->next) {
            HeldSend h;
            h.wr = *wr;
            h.sge.assign(wr->sg_list, wr->sg_list + std::max(wr->num_sge, 0));
            if (wr->send_flags & IBV_SEND_INLINE) {
                // Inline data may be reused once ibv_post_send returns: keep a copy.
                std::size_t total = 0;
                for (const auto& g : h.sge) total += g.length;
                h.inline_data.resize(total);
                std::size_t off = 0;
                for (auto& g : h.sge) {
                    std::memcpy(h.inline_data.data() + off, reinterpret_cast<const void*>(g.addr), g.length);
                    g.addr = reinterpret_cast<std::uintptr_t>(h.inline_data.data() + off);
                    off += g.length;
                }
            }
            q->held_sends.push_back(std::move(h));
        }
        return 0;
    }
    if (q->failed) {
        // Work posted to a QP in the error state completes flushed (the
        // first with IBV_WC_RETRY_EXC_ERR when the peer's QP was found gone
        // with nothing outstanding: it is the one that would have found it).
        for (; wr; wr = wr->next) {
            ibv_wc wc{};
            wc.wr_id = wr->wr_id;
            wc.status = q->retry_error_owed ? IBV_WC_RETRY_EXC_ERR : IBV_WC_WR_FLUSH_ERR;
            q->retry_error_owed = false;
            wc.qp_num = q->qp->qp_num;
            push_wc(s, q->qp->send_cq, wc);
            if (q->loss_owed) lose_peer_qp(s, *q);
        }
        return 0;
    }
    // From here the engine is used (a region registered on its first use,
    // then the calls): not once the process is exiting.
    InsideEngine inside;
    if (!inside.usable()) {
        if (bad_wr) *bad_wr = wr;
        return EAGAIN;
    }
    std::vector<TentCall>& calls = q->calls;  // the post mutex is held
    calls.clear();
    int rc = 0;
    for (; wr; wr = wr->next) {
        rc = prepare(s, lock, *q, *wr, calls);
        if (rc) {
            if (bad_wr) *bad_wr = wr;
            break;
        }
    }
    ready_messages(*q, calls);
    lock.unlock();
    if (!calls.empty()) make_calls(*q, calls);
    return rc;
}

int shadow_post_send(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    SignalsHeldOff held;
    std::lock_guard post(q.post_mutex);
    return post_locked(q, wr, bad_wr);
}

} // namespace tent::interpose
