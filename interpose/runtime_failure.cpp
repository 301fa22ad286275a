// A carried queue pair's errors: tent losing every path to the peer, the
// peer's queue pair gone, the program moving the queue pair to the error
// state. Each ends as it would on an adapter: completions, the error state,
// an asynchronous event.
#include "runtime_state.h"

#include <cstdio>

#include "async_events.h"
#include "common/log.h"
#include "real_verbs.h"

namespace tent::interpose {

// Whether tent no longer uses Q's buffers: none of its work requests is
// outstanding, or tent failed them all (every path to the peer gone).
bool tent_done_with(const ShadowQp& q) { return q.sq.empty() || (q.failed && !q.draining); }

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

namespace {

// The QP the peer's work requests go to is lost, as a real QP's is when
// its peer died: the QP (the real one too, for ibv_query_qp) enters the
// error state, its posted receives complete with IBV_WC_WR_FLUSH_ERR and
// IBV_EVENT_QP_FATAL is raised.
void lose_peer(State& s, ShadowQp& q, const char* what) {
    q.loss_owed = false;
    if (q.lost || q.forgotten) return;  // the program destroyed or reset it: nobody to tell
    q.lost = true;
    flush_receives(s, q);
    TENT_WARN("interpose-qp-error", "interposer: qp 0x%x: %s: error state", q.qp->qp_num, what);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    real::modify_qp(q.qp, &attr, IBV_QP_STATE);
    raise_qp_fatal(q.qp);
}

} // namespace

// tent gave up on a work request: every path to the peer is gone (and so
// for every other one of the QP), or a rail failed under it with no
// failover attempt left (max_failover_attempts). The oldest outstanding
// work request completes with IBV_WC_RETRY_EXC_ERR, every other one with
// IBV_WC_WR_FLUSH_ERR, and the QP is lost (lose_peer()). The peer's QP
// takes none of its messages past the lost one (MessageHeader::seq).
void fail_qp(State& s, ShadowQp& q) {
    q.failed = true;
    drop_held(q);
    bool first = true;
    for (SendSlot& slot : q.sq) {
        slot.status = first ? IBV_WC_RETRY_EXC_ERR : IBV_WC_WR_FLUSH_ERR;
        first = false;
        slot.onesided_parts = 0;  // their late completions are ignored
        slot.message_waiting = slot.message_inflight = false;
    }
    retire_sends(s, q);
    lose_peer(s, q, "tent gave up a work request (every path to the peer gone, or no failover attempt left)");
}

namespace {

// Q enters the error state while tent still carries its work to a working
// peer: no message of it is sent any more, and each outstanding work
// request completes, in posting order, once tent's operations for it have
// ended (until then tent may read its buffers): the oldest with FIRST, the
// others with IBV_WC_WR_FLUSH_ERR.
void stop_running(State& s, ShadowQp& q, ibv_wc_status first) {
    q.failed = true;
    q.draining = true;
    drop_held(q);
    bool oldest = true;
    for (SendSlot& slot : q.sq) {
        slot.status = oldest ? first : IBV_WC_WR_FLUSH_ERR;
        oldest = false;
        slot.message_waiting = false;
    }
    retire_sends(s, q);
}

} // namespace

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

} // namespace tent::interpose
