#include "runtime.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "activation.h"
#include "async_events.h"
#include "channel.h"
#include "common/log.h"
#include "common/signal_free_thread.h"
#include "context_table.h"
#include "discovery.h"
#include "engine_address.h"
#include "real_verbs.h"
#include "send_pool.h"
#include "settings.h"
#include "signals_held_off.h"

namespace tent::interpose {

namespace {

// What feeds an application CQ: completions tent produced, and how many
// QPs on it the provider may complete work of (all but the carried ones:
// once none is left, polling the provider's CQ is pointless).
struct CqFeed {
    std::deque<ibv_wc> wcs;
    int provider_qps = 0;  // a QP with both queues on the CQ counts twice
    bool carried = false;  // a carried QP uses it
};

// A tent operation's cookie names what it is for without a table: the
// QP's token, whether it is the slot's message (or a one-sided part), and
// the slot's sequence number (its low 31 bits: a QP never has 2^31 work
// requests outstanding). Token 0 marks the interposer's own messages
// (region announcements), which keep their buffer in State::own.
constexpr std::uint64_t kSeqMask = 0x7fffffff;
constexpr std::uint64_t kMessageBit = std::uint64_t{1} << 31;

std::uint64_t op_cookie(const ShadowQp& q, std::uint64_t seq, bool message) {
    return (std::uint64_t{q.token} << 32) | (message ? kMessageBit : 0) | (seq & kSeqMask);
}

// The sequence number of the slot COOKIE (op_cookie) names.
std::uint64_t cookie_seq(const ShadowQp& q, std::uint64_t cookie) {
    return q.sq_base + (((cookie & kSeqMask) - (q.sq_base & kSeqMask)) & kSeqMask);
}

// Whether SLOT's one-sided parts must wait for Q's in flight: behind every
// earlier one when fenced (IBV_SEND_FENCE, taken as a full fence); with
// interpose_ordering, a write or atomic behind every earlier one, a read
// behind every earlier write and atomic; an atomic behind an earlier atomic
// always (atomics execute in posting order).
bool must_wait(const ShadowQp& q, const SendSlot& slot) {
    const int all = q.modifies_inflight + q.reads_inflight;
    if (slot.fenced) return all > 0;
    if (slot.atomic && q.atomic_inflight) return true;
    if (!q.ordered) return false;
    return slot.access == Access::Read ? q.modifies_inflight > 0 : all > 0;
}

// Counts a work request whose one-sided parts went to tent (+1) or all
// completed (-1).
void count_inflight(ShadowQp& q, Access a, int d) {
    if (a == Access::Read) q.reads_inflight += d;
    else if (a == Access::Modify) q.modifies_inflight += d;
}

// Posts SLOT's one-sided PARTS now (into CALLS), or holds them while Q's
// earlier ones would be overtaken (interpose_ordering).
void start_or_hold(ShadowQp& q, SendSlot& slot, std::vector<TentCall> parts, std::vector<TentCall>& calls) {
    if (parts.empty()) return;
    if (q.slots_holding > 0 || must_wait(q, slot)) {  // behind a held one too: in order
        slot.held_parts = std::move(parts);
        ++q.slots_holding;
        return;
    }
    count_inflight(q, slot.access, +1);
    if (slot.atomic) q.atomic_inflight = true;
    calls.insert(calls.end(), parts.begin(), parts.end());
}

// The held one-sided parts that may go now, in posting order (state mutex
// held; the caller makes the calls).
void release_held(ShadowQp& q, std::vector<TentCall>& calls) {
    for (std::size_t i = 0; q.slots_holding > 0 && i < q.sq.size(); ++i) {
        SendSlot& slot = q.sq[i];
        if (slot.held_parts.empty()) continue;
        if (must_wait(q, slot)) return;
        count_inflight(q, slot.access, +1);
        if (slot.atomic) q.atomic_inflight = true;
        --q.slots_holding;
        calls.insert(calls.end(), slot.held_parts.begin(), slot.held_parts.end());
        slot.held_parts.clear();
    }
}

// Forgets Q's held one-sided parts (the QP failed: they are never posted).
void drop_held(ShadowQp& q) {
    for (SendSlot& slot : q.sq) {
        slot.onesided_parts -= static_cast<int>(slot.held_parts.size());
        slot.held_parts.clear();
    }
    q.slots_holding = 0;
}

// Whether tent no longer uses Q's buffers: none of its work requests is
// outstanding, or tent failed them all (every path to the peer gone).
bool tent_done_with(const ShadowQp& q) { return q.sq.empty() || (q.failed && !q.draining); }

struct State {
    std::mutex mu;
    std::condition_variable keys_arrived;
    std::unordered_map<const ibv_qp*, std::shared_ptr<ShadowQp>> qps;
    std::unordered_map<std::uint32_t, std::shared_ptr<ShadowQp>> by_token;
    std::unordered_map<const ibv_cq*, CqFeed> cqs;
    std::unordered_map<const ibv_srq*, std::shared_ptr<ShadowSrq>> srqs;
    std::unordered_map<std::uint64_t, PooledBuffer> own;  // the interposer's own messages in flight
    std::map<std::string, tent_peer_t*> peers;
    std::uint32_t next_token = 1;
    std::uint64_t next_own = 1;
};

// Bumped whenever the set of tracked QPs changes: a thread's cached lookup
// (shadow_for) is good while it has not moved.
std::atomic<std::uint64_t> g_qps_generation{1};

// Lives until the process ends: QPs, the engine and its threads may be in
// use until then, so nothing here is torn down by a static destructor.
State& state() {
    static State* s = new State;  // deliberately never freed
    return *s;
}

std::once_flag g_engine_once;
// Published (stored last) once the engine, g_pool and g_engine_pid are set:
// threads that never called engine() (a program waiting on a channel, the
// harvester) read it without the once flag's ordering.
std::atomic<tent_engine_t*> g_engine{nullptr};
SendPool* g_pool = nullptr;  // with the engine, never freed
std::atomic<bool> g_stop{false};  // set once the process exits (shut_down())

// Threads inside tent's engine through the interposer (the program's
// posting, polling, waiting on a channel; discovery connecting and
// announcing): shut_down() destroys the engine only once none is, and none
// enters after g_stop is set. A program that exits while another of its
// threads still polls, or while a queue pair still looks for its peer, must
// not have that thread find the engine freed.
std::atomic<int> g_program_inside{0};

// The process whose thread is starting the engine, 0 while none is: a
// program that exits right after creating its first queue pair must not
// have that start run on into the exit's destruction of the libraries it
// uses (shut_down() waits for it).
std::atomic<pid_t> g_starting_pid{0};
std::thread* g_harvester = nullptr;
pid_t g_engine_pid = 0;  // the process that started the engine

// How long a write or read waits for the peer's announcement of its rkey.
constexpr auto kKeyWait = std::chrono::seconds(2);

void push_wc(State& s, ibv_cq* cq, const ibv_wc& wc) {
    s.cqs[cq].wcs.push_back(wc);
    cq_completed(cq);  // an armed CQ with a channel signals it
}

void lose_peer_qp(State& s, ShadowQp& q);

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

// The receive queue that serves Q's messages; nullptr when its receives
// went to the adapter (a shared receive queue that passes through).
std::deque<HeldRecv>* receive_queue(ShadowQp& q) {
    if (q.srq) return q.srq->plain ? nullptr : &q.srq->recvs;
    return &q.recvs;
}

// Completes receive R with a message (bytes [data, data + size)); a message
// longer than the receive buffer completes with IBV_WC_LOC_LEN_ERR, as an
// HCA reports it.
void complete_receive(State& s, ShadowQp& q, const HeldRecv& r, const Arrival& a, const std::uint8_t* data,
                      std::size_t size) {
    ibv_wc wc{};
    wc.wr_id = r.wr_id;
    wc.opcode = a.write_notice ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    wc.qp_num = q.qp->qp_num;
    wc.src_qp = q.peer_qpn;
    wc.byte_len = a.write_notice ? a.write_length : static_cast<std::uint32_t>(size);
    if (a.has_imm) {
        wc.wc_flags |= IBV_WC_WITH_IMM;
        wc.imm_data = a.imm;
    }
    const ibv_sge* sge = r.sge();
    std::size_t capacity = 0;
    for (int i = 0; i < r.num_sge; ++i) capacity += sge[i].length;
    if (capacity < size) {
        wc.status = IBV_WC_LOC_LEN_ERR;
    } else {
        std::size_t off = 0;
        for (int i = 0; i < r.num_sge && off < size; ++i) {
            std::size_t n = std::min<std::size_t>(sge[i].length, size - off);
            if (n) std::memcpy(reinterpret_cast<void*>(sge[i].addr), data + off, n);
            off += n;
        }
    }
    push_wc(s, q.qp->recv_cq, wc);
}

// Removes the receive Q's message just used (the front of RECVS); an SRQ
// left with fewer receives than its armed limit raises its limit event.
void consume_receive(ShadowQp& q, std::deque<HeldRecv>& recvs) {
    recvs.pop_front();
    if (q.srq && q.srq->limit && q.srq->recvs.size() < q.srq->limit) {
        q.srq->limit = 0;
        raise_srq_limit(q.srq->srq);
    }
}

// Matches arrived messages with posted receives, in order.
void match_receives(State& s, ShadowQp& q) {
    std::deque<HeldRecv>* recvs = receive_queue(q);
    if (!recvs) return;
    while (!recvs->empty() && !q.arrivals.empty()) {
        const Arrival& a = q.arrivals.front();
        complete_receive(s, q, recvs->front(), a, a.data.data(), a.data.size());
        consume_receive(q, *recvs);
        q.arrivals.pop_front();
    }
}

// One message from the peer's interposer for Q (state mutex held): taken
// by a posted receive at once when nothing arrived before it, else queued
// (copied) in arrival order.
void take_message(State& s, ShadowQp& q, const MessageHeader& h, const std::uint8_t* p, std::size_t n) {
    if (h.flags & kKeys) {
        for (std::size_t off = 0; off + sizeof(Announcement) <= n; off += sizeof(Announcement)) {
            Announcement a;
            std::memcpy(&a, p + off, sizeof a);
            auto& list = q.remote_keys[a.rkey];
            list.erase(std::remove_if(list.begin(), list.end(), [&](const Announcement& o) { return o.iova == a.iova; }),
                       list.end());
            list.push_back(a);
        }
        s.keys_arrived.notify_all();
        return;
    }
    Arrival a;
    a.has_imm = (h.flags & kHasImm) != 0;
    a.imm = h.imm;
    const std::uint8_t* data = p;
    std::size_t size = n;
    if (h.flags & kWriteNotice) {
        a.write_notice = true;
        if (n >= sizeof a.write_length) std::memcpy(&a.write_length, p, sizeof a.write_length);
        size = 0;
    }
    std::deque<HeldRecv>* recvs = receive_queue(q);
    if (q.mode == QpMode::Tent && q.arrivals.empty() && recvs && !recvs->empty()) {
        complete_receive(s, q, recvs->front(), a, data, size);
        consume_receive(q, *recvs);
        return;
    }
    a.data.assign(data, data + size);
    q.arrivals.push_back(std::move(a));
    if (q.mode == QpMode::Tent) match_receives(s, q);
}

// Flushes the posted receives of a failed QP, as an adapter does (those
// of a shared receive queue stay for its other queue pairs).
void flush_receives(State& s, ShadowQp& q) {
    if (q.srq) return;
    while (!q.recvs.empty()) {
        ibv_wc wc{};
        wc.wr_id = q.recvs.front().wr_id;
        wc.status = IBV_WC_WR_FLUSH_ERR;
        wc.opcode = IBV_WC_RECV;
        wc.qp_num = q.qp->qp_num;
        push_wc(s, q.qp->recv_cq, wc);
        q.recvs.pop_front();
    }
}

// The QP the peer's work requests go to is lost, as a real QP's is when
// its peer died: the QP (the real one too, for ibv_query_qp) enters the
// error state, its posted receives complete with IBV_WC_WR_FLUSH_ERR and
// IBV_EVENT_QP_FATAL is raised.
void lose_peer(State& s, ShadowQp& q, const char* what) {
    q.loss_owed = false;
    if (q.lost || q.forgotten) return;  // the program destroyed it: nobody to tell
    q.lost = true;
    flush_receives(s, q);
    TENT_WARN("interpose-qp-error", "interposer: qp 0x%x: %s: error state", q.qp->qp_num, what);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    real::modify_qp(q.qp, &attr, IBV_QP_STATE);
    raise_qp_fatal(q.qp);
}

// tent gave up on a work request: every path to the peer is gone (tent
// fails a request only then, and so every other one of the QP). The oldest
// outstanding work request completes with IBV_WC_RETRY_EXC_ERR, every other
// one with IBV_WC_WR_FLUSH_ERR, and the QP is lost (lose_peer()).
void fail_qp(State& s, ShadowQp& q) {
    q.failed = true;
    q.atomics_waiting.clear();  // their slots complete flushed below
    drop_held(q);
    bool first = true;
    for (SendSlot& slot : q.sq) {
        slot.status = first ? IBV_WC_RETRY_EXC_ERR : IBV_WC_WR_FLUSH_ERR;
        first = false;
        slot.onesided_parts = 0;  // their late completions are ignored
        slot.message_waiting = slot.message_inflight = false;
    }
    retire_sends(s, q);
    lose_peer(s, q, "every path to the peer is gone");
}

// Q enters the error state while tent still carries its work to a working
// peer: no message of it is sent any more, and each outstanding work
// request completes, in posting order, once tent's operations for it have
// ended (until then tent may read its buffers): the oldest with FIRST, the
// others with IBV_WC_WR_FLUSH_ERR.
void stop_running(State& s, ShadowQp& q, ibv_wc_status first) {
    q.failed = true;
    q.draining = true;
    for (const TentCall& c : q.atomics_waiting)  // never posted
        if (const std::uint64_t seq = cookie_seq(q, c.cookie); seq - q.sq_base < q.sq.size())
            --q.sq[seq - q.sq_base].onesided_parts;
    q.atomics_waiting.clear();
    drop_held(q);
    bool oldest = true;
    for (SendSlot& slot : q.sq) {
        slot.status = oldest ? first : IBV_WC_WR_FLUSH_ERR;
        oldest = false;
        slot.message_waiting = false;
    }
    retire_sends(s, q);
}

void lose_peer_qp(State& s, ShadowQp& q) {
    char what[64];
    std::snprintf(what, sizeof what, "the peer's qp 0x%x is gone", q.peer_qpn);
    lose_peer(s, q, what);
}

// The peer's QP is gone (destroyed, or put in the error state by its
// program), found by a message of Q's that reached it: as an adapter's
// retries to a vanished QP end, the oldest outstanding work request
// completes with IBV_WC_RETRY_EXC_ERR (or the next one posted, when none
// is), the others with IBV_WC_WR_FLUSH_ERR, and with that completion the
// QP is lost. The message that found it may have completed: tent
// delivered it to the peer's process.
void peer_qp_gone(State& s, ShadowQp& q) {
    if (q.mode != QpMode::Tent) return;
    q.retry_error_owed = q.sq.empty();
    q.loss_owed = true;
    q.lost_at = q.sq_base;
    stop_running(s, q, IBV_WC_RETRY_EXC_ERR);
}

// The program put Q in the error state (ibv_modify_qp): as an adapter
// does, every outstanding work request and posted receive completes with
// IBV_WC_WR_FLUSH_ERR (a QP on a shared receive queue raises
// IBV_EVENT_QP_LAST_WQE_REACHED instead: the SRQ's receives stay), and
// the peer's QP fails on its next message (tell_qp_gone()).
void program_errored(State& s, ShadowQp& q) {
    if (q.mode != QpMode::Tent || q.failed) return;
    stop_running(s, q, IBV_WC_WR_FLUSH_ERR);
    flush_receives(s, q);
    q.arrivals.clear();
    if (q.srq) raise_qp_last_wqe(q.qp);
}

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
    const MessageHeader h{kMessageMagic, from, 0, kQpGone, 0};
    std::memcpy(b.data.get(), &h, sizeof h);
    (void)send_own(peer, std::move(b), sizeof h);
}

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
        if (slot.opcode == IBV_WC_COMP_SWAP || slot.opcode == IBV_WC_FETCH_ADD) q.atomic_inflight = false;
    }
    if (!ok && !q.failed) return fail_qp(s, q);
    retire_sends(s, q);
}

// A small message (up to kBatchMessageMax bytes of payload) may travel in a batch.
bool batchable(const SendSlot& slot) { return slot.message_length <= sizeof(MessageHeader) + kBatchMessageMax; }

// Messages whose one-sided predecessors have all completed, in order
// (under the state mutex; the calls are made by make_calls()), from the
// QP's cursor on. While kMessageWindow tent messages are in flight, small
// messages wait; then those waiting go as one batch.
std::vector<TentCall> ready_messages(ShadowQp& q) {
    std::vector<TentCall> calls;
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
        if (count == 1) {
            c.local = slot.message.data.get();
            c.length = slot.message_length;
        } else {
            std::uint8_t* out = slot.batch.data.get();
            MessageHeader h{kMessageMagic, q.peer_token, 0, kBatch, q.token};
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
    return calls;
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
    std::vector<TentCall> calls;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        if (q.forgotten || q.failed || q.mode != QpMode::Tent) return;
        release_held(q, calls);
        std::vector<TentCall> messages = ready_messages(q);
        calls.insert(calls.end(), messages.begin(), messages.end());
        if (!q.atomic_inflight && !q.atomics_waiting.empty()) {
            q.atomic_inflight = true;
            calls.push_back(q.atomics_waiting.front());
            q.atomics_waiting.pop_front();
        }
    }
    if (!calls.empty()) make_calls(q, calls);
}

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

// Takes what tent completed (a turn on this thread first, unless another
// runs one) and settles it; how many.
int settle_ready() {
    tent_completion_t c[64];
    int n = tent_poll(g_engine, c, 64);
    if (n > 0) settle_completions(c, n);
    return n;
}

// Program threads driving tent while they sleep in ibv_get_cq_event, and
// when the last such wait ended (steady clock, ns): the harvester keeps out
// of their way (drive_while_waiting()).
std::atomic<int> g_program_drivers{0};
std::atomic<std::int64_t> g_program_drove_ns{0};

// When the program last looked for completions of a carried QP (steady
// clock, ns; 0: it may sleep on a channel), and the harvester's nap.
std::atomic<std::int64_t> g_program_poll_ns{0};
// The nap is never destroyed (as state()): a child of fork() inherits the
// harvester's wait on it but not the harvester, and destroying a condition
// variable with a waiter at the child's exit waits forever.
struct Nap {
    std::mutex mutex;
    std::condition_variable cv;
};
Nap& nap() {
    static Nap* n = new Nap;  // deliberately never freed
    return *n;
}

// While the program polls, it drives tent and takes tent's completions on
// its own thread (take_completions): a second thread doing the same would
// only take the CPU the program, its peer and the HCA need (two cores run
// both ends of a benchmark). The harvester keeps out of the way until the
// program has not polled for this long, or arms a CQ (it may then sleep on
// the CQ's channel).
constexpr auto kProgramPollGrace = std::chrono::milliseconds(5);

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A program thread drove tent while it waited on a channel, or did so less
// than a grace ago (it is likely to wait so again soon).
bool program_drives_on_channel() {
    return g_program_drivers.load(std::memory_order_relaxed) > 0 ||
           steady_ns() - g_program_drove_ns.load(std::memory_order_relaxed) <
               std::chrono::nanoseconds(kProgramPollGrace).count();
}

// Harvests tent's completions of the interposer's posts while the program
// does not (it sleeps on a completion channel, or does not poll at all),
// and looks at the program's signal handlers (signals_held_off.h) so that
// the program's thread need not.
void harvest() {
    (void)pthread_setname_np(pthread_self(), "tent-harvest");
    TentScope scope;
    const std::int64_t grace = std::chrono::nanoseconds(kProgramPollGrace).count();
    while (!g_stop.load(std::memory_order_relaxed)) {
        const std::int64_t look_in = look_at_handlers_when_due().count();
        const std::int64_t since = steady_ns() - g_program_poll_ns.load(std::memory_order_relaxed);
        const bool driven = program_drives_on_channel();
        if (driven || (since < grace && !any_cq_armed())) {
            std::unique_lock lock(nap().mutex);
            nap().cv.wait_for(lock, std::chrono::nanoseconds(std::min(driven ? grace : grace - since, look_in)));
            continue;
        }
        // While waiting in tent, this thread is woken by every completion:
        // a program that polls again soon (it was only descheduled) should
        // find it out of the way within a grace, not 50 ms.
        const std::int64_t look_ms = std::max<std::int64_t>(1, (look_in + 999999) / 1000000);
        if (tent_wait(g_engine, static_cast<int>(std::min<std::int64_t>(since < 20 * grace ? 5 : 50, look_ms))) <= 0)
            continue;
        settle_ready();
    }
}

// At exit (registered when the first queue pair is created, before the
// engine starts): stop harvesting, then the engine (its peers see it
// leave). What the engine uses must outlive it: the interposer's tables
// and the send pool are never freed.
void shut_down() {
    g_stop = true;
    // An engine still starting on another thread (the program exits right
    // after creating a queue pair) is waited for: its start takes tens of
    // milliseconds. Bounded: 2 s, then the exit goes on.
    for (int i = 0; i < 2000 && g_starting_pid.load() == getpid(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // A child of fork() has none of the engine's threads: the engine is the
    // parent's to stop (joining or destroying it here would hang or crash).
    if (!g_engine || getpid() != g_engine_pid) return;
    if (g_harvester && g_harvester->joinable()) g_harvester->join();
    // A program thread inside the engine (another thread still polling or
    // waiting on a channel while this one exits) leaves within a wait's
    // bound (100 ms): wait for it, for up to 300 ms, else leave the engine
    // to the exit rather than free it under that thread.
    for (int i = 0; i < 300 && g_program_inside.load() > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (g_program_inside.load() > 0) return;
    TentScope scope;
    // What each rail carried, for whoever runs with log_level info.
    tent_rail_stats_t stats[64];
    int n = tent_rail_stats(g_engine, stats, 64);
    for (int i = 0; i < n && i < 64; ++i)
        TENT_INFO("interpose-rail", "interposer: rail %s: %llu ops, %llu bytes, %llu errors", stats[i].name,
                  static_cast<unsigned long long>(stats[i].ops), static_cast<unsigned long long>(stats[i].bytes),
                  static_cast<unsigned long long>(stats[i].errors));
    tent_engine_destroy(g_engine);
    g_engine = nullptr;
}

// A message for the peer of Q in a registered buffer: header, then payload.
PooledBuffer build_message(const ShadowQp& q, std::uint32_t flags, std::uint32_t imm, std::size_t payload,
                           std::size_t* length) {
    *length = sizeof(MessageHeader) + payload;
    PooledBuffer b = g_pool->acquire(*length);
    if (!b.data) return b;
    MessageHeader h{kMessageMagic, q.peer_token, imm, flags, q.token};
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

// The peer's region holding [remote, remote + length) under rkey, waiting
// for its announcement (a program may send the rkey over its own socket
// before the announcement arrives); nullptr if none came in time.
const Announcement* remote_region(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, std::uint32_t rkey,
                                  std::uint64_t remote, std::uint64_t length) {
    auto deadline = std::chrono::steady_clock::now() + kKeyWait;
    for (;;) {
        if (auto it = q.remote_keys.find(rkey); it != q.remote_keys.end())
            for (const Announcement& a : it->second)
                if (remote >= a.iova && remote + length <= a.iova + a.length) return &a;
        if (s.keys_arrived.wait_until(lock, deadline) == std::cv_status::timeout) return nullptr;
    }
}

// An atomic work request (state mutex held): one tent atomic whose result
// tent writes straight into the program's 8-byte SGE; the completion
// (IBV_WC_COMP_SWAP / IBV_WC_FETCH_ADD, byte_len 8) follows in posting order.
int prepare_atomic(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, const ibv_send_wr& wr, SendSlot slot,
                   std::vector<TentCall>& calls) {
    const std::uint64_t remote = wr.wr.atomic.remote_addr;
    if (wr.num_sge != 1 || wr.sg_list[0].length != 8 || remote % 8 != 0) {
        TENT_ERROR("interpose-atomic", "interposer: qp 0x%x: an atomic needs one 8-byte SGE and an 8-byte aligned "
                   "remote address", q.qp->qp_num);
        return EINVAL;
    }
    const Announcement* region = remote_region(s, lock, q, wr.wr.atomic.rkey, remote, 8);
    if (!region) {
        TENT_ERROR("interpose-rkey", "interposer: qp 0x%x: the peer announced no region for rkey 0x%x",
                   q.qp->qp_num, wr.wr.atomic.rkey);
        return EINVAL;
    }
    const ibv_sge& sge = wr.sg_list[0];
    RegionView view;
    if (!local_region(q.qp->context, sge.lkey, sge.addr, 8, g_engine, &view)) {
        TENT_ERROR("interpose-lkey", "interposer: qp 0x%x: no region of lkey 0x%x holds the atomic's result",
                   q.qp->qp_num, sge.lkey);
        return EINVAL;
    }
    TentCall c;
    c.kind = TentCall::Atomic;
    c.atomic_op = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? TENT_ATOMIC_COMPARE_SWAP : TENT_ATOMIC_FETCH_ADD;
    c.compare_add = wr.wr.atomic.compare_add;
    c.swap = wr.wr.atomic.swap;
    c.length = 8;
    std::memcpy(c.key, region->key, sizeof c.key);
    c.remote_addr = region->addr + (remote - region->iova);
    c.local = view.addr + (sge.addr - view.iova);
    c.cookie = op_cookie(q, q.sq_base + q.sq.size(), false);
    slot.opcode = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
    slot.byte_len = 8;
    slot.onesided_parts = 1;
    slot.access = Access::Modify;
    slot.atomic = true;
    slot.fenced = (wr.send_flags & IBV_SEND_FENCE) != 0;
    q.sq.push_back(std::move(slot));
    if (q.ordered || q.sq.back().fenced || q.slots_holding > 0) {
        start_or_hold(q, q.sq.back(), {c}, calls);
        return 0;
    }
    count_inflight(q, Access::Modify, +1);
    if (q.atomic_inflight) {
        q.atomics_waiting.push_back(c);
    } else {
        q.atomic_inflight = true;
        calls.push_back(c);
    }
    return 0;
}

// Prepares one work request of a carried QP (state mutex held): a slot,
// and the tent calls of its one-sided parts; its message, if any, waits in
// the slot for ready_messages(). EINVAL/ENOMEM for what cannot be carried.
int prepare(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, const ibv_send_wr& wr,
            std::vector<TentCall>& calls) {
    if (wr.num_sge < 0) return EINVAL;
    std::uint64_t total = 0;
    for (int i = 0; i < wr.num_sge; ++i) total += wr.sg_list[i].length;
    SendSlot slot;
    slot.wr_id = wr.wr_id;
    slot.signaled = q.sig_all || (wr.send_flags & IBV_SEND_SIGNALED);
    slot.byte_len = static_cast<std::uint32_t>(total);
    switch (wr.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: {
        slot.opcode = IBV_WC_SEND;
        slot.message = build_message(q, wr.opcode == IBV_WR_SEND_WITH_IMM ? kHasImm : 0u, wr.imm_data, total,
                                     &slot.message_length);
        if (!slot.message.data) return ENOMEM;
        std::size_t off = sizeof(MessageHeader);
        for (int i = 0; i < wr.num_sge; ++i) {
            std::memcpy(slot.message.data.get() + off, reinterpret_cast<const void*>(wr.sg_list[i].addr),
                        wr.sg_list[i].length);
            off += wr.sg_list[i].length;
        }
        slot.message_waiting = true;
        q.sq.push_back(std::move(slot));
        return 0;
    }
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
        break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return prepare_atomic(s, lock, q, wr, std::move(slot), calls);
    default:
        TENT_ERROR("interpose-opcode", "interposer: qp 0x%x: work request opcode %d is not carried by tent yet",
                   q.qp->qp_num, static_cast<int>(wr.opcode));
        return EINVAL;
    }
    bool read = wr.opcode == IBV_WR_RDMA_READ;
    slot.opcode = read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
    const Announcement* region = total ? remote_region(s, lock, q, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr, total)
                                       : nullptr;
    if (total && !region) {
        TENT_ERROR("interpose-rkey", "interposer: qp 0x%x: the peer announced no region for rkey 0x%x",
                   q.qp->qp_num, wr.wr.rdma.rkey);
        return EINVAL;
    }
    const std::uint64_t cookie = op_cookie(q, q.sq_base + q.sq.size(), false);
    std::uint64_t remote = wr.wr.rdma.remote_addr;
    // Inline data may be reused once ibv_post_send returns: the parts send
    // from a copy the slot keeps.
    const bool inline_data = !read && (wr.send_flags & IBV_SEND_INLINE) && total;
    std::size_t copied = 0;
    if (inline_data) {
        slot.inline_copy = g_pool->acquire(total);
        if (!slot.inline_copy.data) return ENOMEM;
    }
    std::vector<TentCall> parts;
    for (int i = 0; i < wr.num_sge; ++i) {
        const ibv_sge& sge = wr.sg_list[i];
        if (!sge.length) continue;
        TentCall c;
        c.kind = read ? TentCall::Read : TentCall::Write;
        c.length = sge.length;
        std::memcpy(c.key, region->key, sizeof c.key);
        c.remote_addr = region->addr + (remote - region->iova);
        remote += sge.length;
        RegionView view;
        if (inline_data) {
            std::uint8_t* copy = slot.inline_copy.data.get() + copied;
            std::memcpy(copy, reinterpret_cast<const void*>(sge.addr), sge.length);
            copied += sge.length;
            c.local = copy;
        } else if (local_region(q.qp->context, sge.lkey, sge.addr, sge.length, g_engine, &view)) {
            c.local = view.addr + (sge.addr - view.iova);
        } else {
            TENT_ERROR("interpose-lkey", "interposer: qp 0x%x: no region of lkey 0x%x holds the work request's data",
                       q.qp->qp_num, sge.lkey);
            g_pool->release(std::move(slot.inline_copy));
            return EINVAL;
        }
        c.cookie = cookie;
        parts.push_back(c);
    }
    slot.onesided_parts = static_cast<int>(parts.size());
    slot.access = parts.empty() ? Access::None : read ? Access::Read : Access::Modify;
    slot.fenced = (wr.send_flags & IBV_SEND_FENCE) != 0;
    if (wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        std::uint32_t len32 = static_cast<std::uint32_t>(total);
        slot.message = build_message(q, kHasImm | kWriteNotice, wr.imm_data, sizeof len32, &slot.message_length);
        if (!slot.message.data) return ENOMEM;
        std::memcpy(slot.message.data.get() + sizeof(MessageHeader), &len32, sizeof len32);
        slot.message_waiting = true;
    }
    q.sq.push_back(std::move(slot));
    start_or_hold(q, q.sq.back(), std::move(parts), calls);
    return 0;
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
    std::vector<TentCall> calls;
    int rc = 0;
    for (; wr; wr = wr->next) {
        rc = prepare(s, lock, *q, *wr, calls);
        if (rc) {
            if (bad_wr) *bad_wr = wr;
            break;
        }
    }
    std::vector<TentCall> messages = ready_messages(*q);
    calls.insert(calls.end(), messages.begin(), messages.end());
    lock.unlock();
    if (!calls.empty()) make_calls(*q, calls);
    return rc;
}

} // namespace

// Sequentially consistent, against shut_down() setting g_stop and then
// counting: either this thread sees g_stop, or shut_down() sees it.
InsideEngine::InsideEngine() { g_program_inside.fetch_add(1); }
InsideEngine::~InsideEngine() { g_program_inside.fetch_sub(1); }
bool InsideEngine::usable() const { return !g_stop.load(); }

tent_engine_t* engine() {
    std::call_once(g_engine_once, [] {
        // As InsideEngine against shut_down(): either the start is seen
        // and waited for, or it sees the exit and does not begin.
        g_starting_pid.store(getpid());
        struct Started {
            ~Started() { g_starting_pid.store(0); }
        } started;
        if (g_stop.load()) return;
        if (!configuration_valid()) return;  // said once, with what follows
        TentScope scope;
        tent_engine_t* e = nullptr;
        if (int rc = create_engine(&e); rc != TENT_OK) {
            TENT_ERROR("interpose-engine", "interposer: tent's engine did not start: %s; queue pairs pass through",
                       tent_strerror(rc));
            return;
        }
        tent_set_recv_callback(e, on_message, nullptr);
        // Never destroyed: shut_down() is registered before this start,
        // so a static's destructor would run before it, under threads
        // still posting and an engine still using the pool's buffers.
        g_pool = new SendPool(e);
        g_engine_pid = getpid();
        g_engine.store(e, std::memory_order_release);
        // Never destroyed: a static std::thread still joinable at exit
        // would terminate a forked child, which has no such thread to
        // join; the parent joins it in shut_down().
        g_harvester = new std::thread(signal_free_thread(harvest));
    });
    // A child of fork() inherits the parent's engine without its threads,
    // and its address names the parent's listener: the child's queue pairs
    // pass through to the HCA.
    if (getpid() != g_engine_pid) return nullptr;
    return g_engine;
}

const char* why_no_engine() {
    if (g_stop.load()) return "the process is exiting";
    if (g_engine && getpid() != g_engine_pid) return "a child of fork(): tent's engine is the parent's";
    if (!configuration_valid()) return "the configuration is invalid";
    return "tent's engine did not start";
}

tent_peer_t* peer_for(const std::string& blob) {
    State& s = state();
    {
        std::lock_guard lock(s.mu);
        if (auto it = s.peers.find(blob); it != s.peers.end()) return it->second;
    }
    InsideEngine inside;
    if (!inside.usable()) return nullptr;
    tent_engine_t* e = engine();
    if (!e) return nullptr;
    tent_peer_t* p = nullptr;
    TentScope scope;
    if (tent_connect(e, blob.data(), blob.size(), &p) != TENT_OK) return nullptr;
    std::lock_guard lock(s.mu);
    return s.peers.emplace(blob, p).first->second;
}

// The shadow of SRQ, made on first use (state mutex held).
std::shared_ptr<ShadowSrq> shadow_srq(State& s, ibv_srq* srq) {
    auto& entry = s.srqs[srq];
    if (!entry) {
        entry = std::make_shared<ShadowSrq>();
        entry->srq = srq;
    }
    return entry;
}

void provider_qp_created(const ibv_qp* qp) {
    State& s = state();
    std::lock_guard lock(s.mu);
    for (const ibv_cq* cq : {qp->send_cq, qp->recv_cq})
        if (cq) ++s.cqs[cq].provider_qps;
}

void track_qp(ibv_qp* qp, const ibv_qp_init_attr& attr) {
    // The engine starts now, in the background, rather than when the QP
    // looks for its peer at RTR: its start (topology, devices, listener)
    // takes tens of milliseconds, which the program's own connection
    // exchange hides; a program's first work requests otherwise wait for it.
    // Its control address comes from a GID (engine_address.h): the QP's
    // port is not known before INIT, so port 1's first GID stands in, the
    // one most programs use; a QP reaching RTR first notes its own.
    static std::once_flag early;
    std::call_once(early, [qp] {
        if (ibv_gid gid{}; ibv_query_gid(qp->context, 1, 0, &gid) == 0) note_own_gid(gid);
        // Before the start begins, so that an exit during it waits for it.
        std::atexit(shut_down);
        signal_free_thread([] { engine(); }).detach();
    });
    auto q = std::make_shared<ShadowQp>();
    q->qp = qp;
    q->sig_all = attr.sq_sig_all != 0;
    q->ordered = ordering();
    State& s = state();
    std::lock_guard lock(s.mu);
    if (attr.srq) q->srq = shadow_srq(s, attr.srq);
    q->token = s.next_token++ & 0x7fffffff;  // 0 is the interposer's own (op_cookie)
    if (q->token == 0) q->token = s.next_token++;
    s.by_token[q->token] = q;
    s.qps[qp] = std::move(q);
    g_qps_generation.fetch_add(1, std::memory_order_release);
}

void forget_qp(ibv_qp* qp) {
    std::shared_ptr<ShadowQp> shadow = find_qp(qp);
    if (!shadow) return;
    // Under its post mutex: a discovery still looking for the QP's peer
    // changes it only under that mutex, and once it is forgotten, never
    // touches the QP the program is about to destroy.
    std::lock_guard post(shadow->post_mutex);
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    if (it == s.qps.end() || it->second != shadow) return;
    ShadowQp& q = *it->second;
    // tent may still send from the buffers of its outstanding work: the
    // shadow stays (by its token) until that completes, telling nobody.
    q.forgotten = true;
    if (q.sq.empty()) s.by_token.erase(q.token);
    s.qps.erase(it);
    g_qps_generation.fetch_add(1, std::memory_order_release);
}

ShadowQp* shadow_for(const ibv_qp* qp) {
    // The last few QPs this thread posted to or polled for, while no QP was
    // created or destroyed since: no lock, no reference count per verb (a
    // program never destroys a QP while posting to it, as with any HCA).
    struct Entry {
        const ibv_qp* qp;
        ShadowQp* shadow;
    };
    constexpr int kCached = 4;
    thread_local Entry cache[kCached]{};
    thread_local std::uint64_t generation = 0;
    thread_local int next = 0;
    const std::uint64_t now = g_qps_generation.load(std::memory_order_acquire);
    if (generation == now) {
        for (const Entry& e : cache)
            if (e.qp == qp) return e.shadow;
    } else {
        std::fill(std::begin(cache), std::end(cache), Entry{});
        generation = now;
    }
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    ShadowQp* shadow = it == s.qps.end() ? nullptr : it->second.get();
    cache[next] = Entry{qp, shadow};
    next = (next + 1) % kCached;
    return shadow;
}

std::shared_ptr<ShadowQp> find_qp(const ibv_qp* qp) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    return it == s.qps.end() ? nullptr : it->second;
}

bool carried_and_working(const ibv_qp* qp) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    return it != s.qps.end() && it->second->mode == QpMode::Tent && !it->second->failed && !it->second->forgotten;
}

void mr_registered(ibv_mr* mr, std::uint64_t iova, int access) {
    track_mr(mr, iova, access);
    if (!(access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))) return;
    // Carried QPs of this context tell their peers about the new region.
    std::vector<std::shared_ptr<ShadowQp>> carried;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        for (auto& [qp, q] : s.qps)
            if (q->mode == QpMode::Tent && qp->context == mr->context) carried.push_back(q);
    }
    for (auto& q : carried) announce_regions(q);
}

void become_tent(const std::shared_ptr<ShadowQp>& q, tent_peer_t* peer, std::uint32_t peer_token) {
    // The held sends go first: no post of the application's may overtake them.
    std::lock_guard post(q->post_mutex);
    std::vector<HeldSend> held;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        if (q->forgotten) return;  // the program destroyed the QP meanwhile: nothing of it is ours to touch
        q->peer = peer;
        q->peer_token = peer_token;
        q->mode = QpMode::Tent;
        for (ibv_cq* cq : {q->qp->send_cq, q->qp->recv_cq}) {  // tent completes its work from now on
            --s.cqs[cq].provider_qps;
            s.cqs[cq].carried = true;
        }
        held.swap(q->held_sends);
        match_receives(s, *q);
    }
    TENT_DEBUG("interpose-tent", "interposer: qp 0x%x carried by tent", q->qp->qp_num);
    announce_regions(q);
    for (auto& h : held) {
        h.wr.sg_list = h.sge.data();
        h.wr.next = nullptr;
        ibv_send_wr* bad = nullptr;
        post_locked(*q, &h.wr, &bad);
    }
}

namespace {

// Hands held receives to the adapter (state mutex held: a receive the
// program posts meanwhile, which goes to the adapter once it sees the
// queue plain, must not overtake them; the provider's own entry points do
// not come back into the interposer).
template <typename Post>
void repost_receives(std::deque<HeldRecv>& recvs, Post post) {
    for (auto& r : recvs) {
        ibv_recv_wr wr{};
        wr.wr_id = r.wr_id;
        wr.sg_list = r.sge();
        wr.num_sge = r.num_sge;
        ibv_recv_wr* bad = nullptr;
        post(&wr, &bad);
    }
}

} // namespace

void become_plain(const std::shared_ptr<ShadowQp>& q, const char* why) {
    std::lock_guard post(q->post_mutex);
    std::vector<HeldSend> sends;
    const ProviderOps* ops = nullptr;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        q->mode = QpMode::Plain;
        if (q->forgotten) {  // the program destroyed the QP (and perhaps its device) meanwhile
            q->held_sends.clear();
            q->recvs.clear();
            return;
        }
        ops = provider_ops(q->qp->context);
        std::deque<HeldRecv> recvs;
        recvs.swap(q->recvs);
        if (ops)
            repost_receives(recvs, [&](ibv_recv_wr* wr, ibv_recv_wr** bad) { return ops->post_recv(q->qp, wr, bad); });
        sends.swap(q->held_sends);
    }
    TENT_INFO("interpose-plain", "interposer: qp 0x%x passes through: %s", q->qp->qp_num, why);
    if (q->srq) srq_goes_plain(q->srq->srq);
    if (!ops) return;
    for (auto& h : sends) {
        h.wr.sg_list = h.sge.data();
        h.wr.next = nullptr;
        ibv_send_wr* bad = nullptr;
        ops->post_send(q->qp, &h.wr, &bad);
    }
}

void qp_modified(ibv_qp* qp, const ibv_qp_attr& attr, int attr_mask) {
    if (!(attr_mask & IBV_QP_STATE)) return;
    if (attr.qp_state == IBV_QPS_ERR) {
        if (std::shared_ptr<ShadowQp> q = find_qp(qp)) {
            State& s = state();
            std::lock_guard lock(s.mu);
            program_errored(s, *q);
        }
        return;
    }
    if (attr.qp_state != IBV_QPS_RTR) return;
    std::shared_ptr<ShadowQp> q = find_qp(qp);
    if (!q) return;
    {
        std::lock_guard lock(state().mu);
        if (q->mode != QpMode::Candidate) return;
        q->mode = QpMode::Pending;
        q->peer_qpn = attr.dest_qp_num;
    }
    if (!(attr_mask & IBV_QP_AV) || !(attr_mask & IBV_QP_DEST_QPN) || !attr.ah_attr.is_global)
        return become_plain(q, "the peer is named by LID only, not by a GID");
    ibv_gid own{};
    {
        TentScope scope;
        if (ibv_query_gid(qp->context, attr.ah_attr.port_num, attr.ah_attr.grh.sgid_index, &own) != 0)
            return become_plain(q, "cannot read the queue pair's own GID");
    }
    start_discovery(q, rendezvous_name(own, qp->qp_num), rendezvous_name(attr.ah_attr.grh.dgid, attr.dest_qp_num),
                    discovery_timeout_ms());
}

namespace {

// Moves up to max of the completions tent produced for CQ to wc; -1 when
// tent produces none for CQ (no carried QP uses it). *provider: whether
// the provider may have completions for CQ too.
// held: engaged from here on for a CQ tent feeds (signals_held_off.h):
// taking a completion may free memory.
int take_queued(const ibv_cq* cq, int max, ibv_wc* wc, bool* provider, SignalsHeldOff& held) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.cqs.find(cq);
    if (it == s.cqs.end() || !it->second.carried) return -1;
    held.engage();
    *provider = it->second.provider_qps > 0;
    std::deque<ibv_wc>& wcs = it->second.wcs;
    int n = 0;
    while (n < max && !wcs.empty()) {
        wc[n++] = wcs.front();
        wcs.pop_front();
    }
    return n;
}

} // namespace

int take_completions(const ibv_cq* cq, int max, ibv_wc* wc, bool* provider) {
    *provider = true;
    // Held off once the CQ turns out to be tent's, until tent's work on this
    // thread is done; how is decided here, not under the state mutex (a
    // look at the handlers takes 80 us).
    SignalsHeldOff held(SignalsHeldOff::Start::Later);
    int n = take_queued(cq, max, wc, provider, held);
    if (n < 0 || !g_engine) return std::max(n, 0);
    // Every poll of a CQ tent feeds is the program looking, also one that
    // finds completions the harvester queued: else a harvester that took
    // over while the program was away would keep competing with it.
    g_program_poll_ns.store(steady_ns(), std::memory_order_relaxed);
    if (n > 0) return n;
    // Nothing queued: drive tent on this thread (a turn, unless another
    // thread runs one) and settle what it completed.
    InsideEngine inside;
    if (!inside.usable()) return 0;
    TentScope scope;
    settle_ready();
    return std::max(take_queued(cq, max, wc, provider, held), 0);
}

void program_blocks() {
    g_program_poll_ns.store(0, std::memory_order_relaxed);
    // A program that waits in ibv_get_cq_event drives tent there: no need to
    // wake the harvester (it looks again within a grace).
    if (program_drives_on_channel()) return;
    std::lock_guard lock(nap().mutex);
    nap().cv.notify_all();
}

WaitOutcome drive_while_waiting(int fd, int timeout_ms) {
    if (!g_engine || getpid() != g_engine_pid) return WaitOutcome::CannotDrive;
    InsideEngine inside;
    if (!inside.usable()) return WaitOutcome::CannotDrive;
    // tent allocates while it drives; a signal's handler runs when this
    // ends (the signal also ends the sleep).
    SignalsHeldOff held;
    struct Presence {
        Presence() { g_program_drivers.fetch_add(1, std::memory_order_relaxed); }
        ~Presence() {
            g_program_drove_ns.store(steady_ns(), std::memory_order_relaxed);
            g_program_drivers.fetch_sub(1, std::memory_order_relaxed);
        }
        Presence(const Presence&) = delete;
        Presence& operator=(const Presence&) = delete;
    } presence;
    TentScope scope;
    int ready = tent_wait_fds(g_engine, timeout_ms, &fd, 1);
    if (ready < 0) return WaitOutcome::CannotDrive;
    if (ready == 0) return WaitOutcome::Woken;
    settle_ready();
    return WaitOutcome::Settled;
}

namespace {

// Keeps the receives of the list WR in RECVS (state mutex held); EINVAL
// (*bad_wr set) at the first malformed one, the ones before it kept.
int hold_receives(std::deque<HeldRecv>& recvs, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    for (; wr; wr = wr->next) {
        if (wr->num_sge < 0 || (wr->num_sge > 0 && !wr->sg_list)) {
            if (bad_wr) *bad_wr = wr;
            return EINVAL;
        }
        recvs.emplace_back(*wr);
    }
    return 0;
}

} // namespace

int shadow_post_recv(ShadowQp& q, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    SignalsHeldOff held;
    State& s = state();
    std::unique_lock lock(s.mu);
    if (q.mode == QpMode::Plain) {
        lock.unlock();
        const ProviderOps* ops = provider_ops(q.qp->context);
        return ops ? ops->post_recv(q.qp, wr, bad_wr) : EINVAL;
    }
    if (int rc = hold_receives(q.recvs, wr, bad_wr)) return rc;
    if (q.failed) flush_receives(s, q);
    else if (q.mode == QpMode::Tent) match_receives(s, q);
    return 0;
}

int shadow_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    SignalsHeldOff held;
    State& s = state();
    std::unique_lock lock(s.mu);
    std::shared_ptr<ShadowSrq> shadow = shadow_srq(s, srq);
    if (shadow->plain) {
        lock.unlock();
        const ProviderOps* ops = provider_ops(srq->context);
        if (!ops || !ops->post_srq_recv) {
            if (bad_wr) *bad_wr = wr;
            return EINVAL;
        }
        return ops->post_srq_recv(srq, wr, bad_wr);
    }
    if (int rc = hold_receives(shadow->recvs, wr, bad_wr)) return rc;
    // Messages that waited for a receive take one now, in arrival order per
    // queue pair.
    for (auto& [qp, q] : s.qps)
        if (q->srq == shadow && q->mode == QpMode::Tent && !q->failed) match_receives(s, *q);
    return 0;
}

void srq_goes_plain(ibv_srq* srq) {
    const ProviderOps* ops = provider_ops(srq->context);
    std::uint32_t limit = 0;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        std::shared_ptr<ShadowSrq> shadow = shadow_srq(s, srq);
        if (shadow->plain) return;
        shadow->plain = true;
        std::deque<HeldRecv> recvs;
        recvs.swap(shadow->recvs);
        limit = shadow->limit;
        if (ops && ops->post_srq_recv)
            repost_receives(recvs, [&](ibv_recv_wr* wr, ibv_recv_wr** bad) { return ops->post_srq_recv(srq, wr, bad); });
    }
    TENT_INFO("interpose-plain", "interposer: a queue pair on a shared receive queue passes through: so does the "
              "queue");
    if (!ops || !ops->post_srq_recv) return;
    // A limit the program armed goes with its receives to the adapter.
    if (limit) {
        ibv_srq_attr attr{};
        attr.srq_limit = limit;
        (void)real::modify_srq(srq, &attr, IBV_SRQ_LIMIT);
    }
}

int shadow_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int attr_mask,
                      int (*real_modify)(ibv_srq*, ibv_srq_attr*, int)) {
    // Only the SRQs of adopted contexts have their receives held.
    if (!(attr_mask & IBV_SRQ_LIMIT) || !provider_ops(srq->context)) return real_modify(srq, attr, attr_mask);
    State& s = state();
    std::unique_lock lock(s.mu);
    if (shadow_srq(s, srq)->plain) {
        lock.unlock();
        return real_modify(srq, attr, attr_mask);
    }
    // Checked against the adapter's bound, as it would check it.
    ibv_srq_attr now{};
    if (int rc = real::query_srq(srq, &now); rc == 0 && attr->srq_limit > now.max_wr) return EINVAL;
    if (int rest = attr_mask & ~IBV_SRQ_LIMIT) {
        lock.unlock();
        if (int rc = real_modify(srq, attr, rest)) return rc;
        lock.lock();
    }
    shadow_srq(s, srq)->limit = attr->srq_limit;
    return 0;
}

int shadow_query_srq(ibv_srq* srq, ibv_srq_attr* attr, int (*real_query)(ibv_srq*, ibv_srq_attr*)) {
    int rc = real_query(srq, attr);
    if (rc) return rc;
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.srqs.find(srq);
    if (it != s.srqs.end() && !it->second->plain) attr->srq_limit = it->second->limit;
    return 0;
}

void forget_srq(ibv_srq* srq) {
    State& s = state();
    std::lock_guard lock(s.mu);
    s.srqs.erase(srq);
}

int shadow_post_send(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    SignalsHeldOff held;
    std::lock_guard post(q.post_mutex);
    return post_locked(q, wr, bad_wr);
}

} // namespace tent::interpose
