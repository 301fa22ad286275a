// The program's queue pairs the interposer tracks: created, modified (RTR
// starts looking for the peer), carried by tent or passed through, destroyed.
#include "runtime_state.h"

#include <algorithm>
#include <cstdlib>

#include "activation.h"
#include "common/log.h"
#include "common/signal_free_thread.h"
#include "context_table.h"
#include "discovery.h"
#include "engine_address.h"
#include "memory.h"
#include "settings.h"

namespace tent::interpose {

namespace {

// Bumped whenever the set of tracked QPs changes: a thread's cached lookup
// (shadow_for) is good while it has not moved.
std::atomic<std::uint64_t> g_qps_generation{1};

// A new shadow of QP, a candidate for tent (state mutex held).
void add_shadow(State& s, ibv_qp* qp, bool sig_all, std::shared_ptr<ShadowSrq> srq) {
    auto q = std::make_shared<ShadowQp>();
    q->qp = qp;
    q->sig_all = sig_all;
    q->ordered = ordering();
    q->srq = std::move(srq);
    q->token = s.next_token++ & 0x7fffffff;  // 0 is the interposer's own (op_cookie)
    if (q->token == 0) q->token = s.next_token++;
    s.by_token[q->token] = q;
    s.qps[qp] = std::move(q);
    g_qps_generation.fetch_add(1, std::memory_order_release);
}

// The program is done with the shadow IT names (state mutex held): no
// completion of its work is given any more, and messages for it find it
// gone. tent may still send from the buffers of its outstanding work: the
// shadow stays (by its token) until that completes.
void drop_shadow(State& s, std::unordered_map<const ibv_qp*, std::shared_ptr<ShadowQp>>::iterator it) {
    ShadowQp& q = *it->second;
    q.forgotten = true;
    if (q.sq.empty()) s.by_token.erase(q.token);
    s.qps.erase(it);
    g_qps_generation.fetch_add(1, std::memory_order_release);
}

} // namespace

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
    State& s = state();
    std::lock_guard lock(s.mu);
    add_shadow(s, qp, attr.sq_sig_all != 0, attr.srq ? shadow_srq(s, attr.srq) : nullptr);
}

namespace {

// The program destroys QP (RESET false) or resets it (true). Under the
// shadow's post mutex: a discovery still looking for the QP's peer changes
// it only under that mutex, and once it is forgotten, never touches the QP.
// A reset QP, as an adapter's, forgets its work without completions, its
// peer's messages find it gone, and it may be connected again, to a new
// peer, as a new candidate for tent.
void end_shadow(ibv_qp* qp, bool reset) {
    std::shared_ptr<ShadowQp> shadow = find_qp(qp);
    if (!shadow) return;
    std::lock_guard post(shadow->post_mutex);
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    if (it == s.qps.end() || it->second != shadow) return;
    drop_shadow(s, it);
    if (!reset) return;
    // Until the new one is carried, the adapter may complete its work.
    if (shadow->mode == QpMode::Tent)
        for (ibv_cq* cq : {qp->send_cq, qp->recv_cq}) ++s.cqs[cq].provider_qps;
    add_shadow(s, qp, shadow->sig_all, shadow->srq);
}

} // namespace

void forget_qp(ibv_qp* qp) { end_shadow(qp, false); }

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
        if (q->forgotten) return;  // destroyed or reset meanwhile: nothing of it is ours to touch
        q->peer = peer;
        q->peer_token = peer_token;
        q->mode = QpMode::Tent;
        for (ibv_cq* cq : {q->qp->send_cq, q->qp->recv_cq}) {  // tent completes its work from now on
            --s.cqs[cq].provider_qps;
            s.cqs[cq].carried = true;
        }
        held.swap(q->held_sends);
        // Put in the error state while its peer was looked for: flushed now,
        // the sends held meanwhile too (post_locked()).
        if (q->errored_while_pending) program_errored(s, *q);
        else match_receives(s, *q);
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

void become_plain(const std::shared_ptr<ShadowQp>& q, const char* why) {
    std::lock_guard post(q->post_mutex);
    std::vector<HeldSend> sends;
    const ProviderOps* ops = nullptr;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        q->mode = QpMode::Plain;
        if (q->forgotten) {  // destroyed (perhaps with its device) or reset meanwhile
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
    if (attr.qp_state == IBV_QPS_RESET) return end_shadow(qp, true);
    if (attr.qp_state == IBV_QPS_ERR) {
        std::shared_ptr<ShadowQp> q = find_qp(qp);
        if (!q) return;
        {
            State& s = state();
            std::lock_guard lock(s.mu);
            if (q->mode == QpMode::Pending) q->errored_while_pending = true;
            if (q->mode != QpMode::Candidate || q->srq) return program_errored(s, *q);
        }
        // Never connected: the adapter's QP, now in the error state, flushes
        // the receives held for it (a program may post them at INIT, give up
        // on its peer and drain them). One on a shared receive queue keeps
        // its chance of being carried: it holds none of its own.
        return become_plain(q, "the program put it in the error state before connecting it");
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

} // namespace tent::interpose
