#include "dispatch.h"

#include <cerrno>

#include "context_table.h"

namespace tent::interpose {

// Today every object is the provider's: each op goes to the provider that
// filled the context.
int dispatch_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    const ProviderOps* ops = provider_ops(qp->context);
    if (!ops) {
        if (bad_wr) *bad_wr = wr;
        return EINVAL;
    }
    return ops->post_send(qp, wr, bad_wr);
}

int dispatch_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    const ProviderOps* ops = provider_ops(qp->context);
    if (!ops) {
        if (bad_wr) *bad_wr = wr;
        return EINVAL;
    }
    return ops->post_recv(qp, wr, bad_wr);
}

int dispatch_poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
    const ProviderOps* ops = provider_ops(cq->context);
    return ops ? ops->poll_cq(cq, num_entries, wc) : -EINVAL;
}

int dispatch_req_notify_cq(ibv_cq* cq, int solicited_only) {
    const ProviderOps* ops = provider_ops(cq->context);
    return ops ? ops->req_notify_cq(cq, solicited_only) : EINVAL;
}

} // namespace tent::interpose
