// Receives of a carried queue pair: posted ones held until a message from
// the peer's interposer takes them, in order, with the completion an
// adapter gives.
#include "runtime_state.h"

#include <algorithm>
#include <cstring>

#include "async_events.h"
#include "context_table.h"
#include "signals_held_off.h"

namespace tent::interpose {

namespace {

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

} // namespace

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

} // namespace tent::interpose
