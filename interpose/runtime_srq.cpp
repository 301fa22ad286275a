// Shared receive queues of adopted contexts: their receives are held for
// the carried queue pairs on them, or handed to the adapter once one of
// them passes through; the limit event is armed here while they are held.
#include "runtime_state.h"

#include "common/log.h"
#include "context_table.h"
#include "real_verbs.h"
#include "signals_held_off.h"

namespace tent::interpose {

// The shadow of SRQ, made on first use (state mutex held).
std::shared_ptr<ShadowSrq> shadow_srq(State& s, ibv_srq* srq) {
    auto& entry = s.srqs[srq];
    if (!entry) {
        entry = std::make_shared<ShadowSrq>();
        entry->srq = srq;
    }
    return entry;
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

} // namespace tent::interpose
