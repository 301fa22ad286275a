#include "dispatch.h"

#include <cerrno>

#include "channel.h"
#include "context_table.h"
#include "runtime.h"
#include "signals_held_off.h"

namespace tent::interpose {

// A QP the interposer tracks goes to its shadow; everything else, and
// completions tent did not produce, to the provider that filled the context.
int dispatch_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    if (ShadowQp* q = shadow_for(qp)) return shadow_post_send(*q, wr, bad_wr);
    const ProviderOps* ops = provider_ops(qp->context);
    if (!ops) {
        if (bad_wr) *bad_wr = wr;
        return EINVAL;
    }
    return ops->post_send(qp, wr, bad_wr);
}

int dispatch_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    if (ShadowQp* q = shadow_for(qp)) return shadow_post_recv(*q, wr, bad_wr);
    const ProviderOps* ops = provider_ops(qp->context);
    if (!ops) {
        if (bad_wr) *bad_wr = wr;
        return EINVAL;
    }
    return ops->post_recv(qp, wr, bad_wr);
}

int dispatch_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    return shadow_post_srq_recv(srq, wr, bad_wr);
}

int dispatch_poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
    CqTurn turn = CqTurn::TentFirst;
    int n = num_entries > 0 && wc ? take_completions(cq, num_entries, wc, &turn) : 0;
    if (n == num_entries || turn == CqTurn::TentOnly) return n;
    const ProviderOps* ops = provider_ops(cq->context);
    if (!ops) return n ? n : -EINVAL;
    int more = ops->poll_cq(cq, num_entries - n, wc + n);
    if (more < 0) return n ? n : more;
    n += more;
    if (turn == CqTurn::ProviderFirst && n < num_entries) n += take_queued_completions(cq, num_entries - n, wc + n, &turn);
    return n;
}

int dispatch_req_notify_cq(ibv_cq* cq, int solicited_only) {
    {
        SignalsHeldOff held;  // arming a CQ the first time allocates (signals_held_off.h)
        cq_armed(cq);  // tent's next completion on CQ signals its channel
        program_blocks();  // the program may sleep on the channel from now on
    }
    const ProviderOps* ops = provider_ops(cq->context);
    return ops ? ops->req_notify_cq(cq, solicited_only) : EINVAL;
}

} // namespace tent::interpose
