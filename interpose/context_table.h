// The application's device contexts: those it opened while the interposer
// acts. For each, the provider's own hot-path ops, which the interposer
// replaced in the context with its own and calls for everything it does
// not carry itself.
#pragma once

#include <infiniband/verbs.h>

namespace tent::interpose {

struct ProviderOps {
    int (*post_send)(ibv_qp*, ibv_send_wr*, ibv_send_wr**) = nullptr;
    int (*post_recv)(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) = nullptr;
    int (*poll_cq)(ibv_cq*, int, ibv_wc*) = nullptr;
    int (*req_notify_cq)(ibv_cq*, int) = nullptr;
    int (*post_srq_recv)(ibv_srq*, ibv_recv_wr*, ibv_recv_wr**) = nullptr;
    ibv_qp* (*create_qp_ex)(ibv_context*, ibv_qp_init_attr_ex*) = nullptr;  // verbs_context's
    ibv_cq_ex* (*create_cq_ex)(ibv_context*, ibv_cq_init_attr_ex*) = nullptr;  // verbs_context's
};

// Takes over CONTEXT's hot-path ops (post_send, post_recv, poll_cq,
// req_notify_cq, and the extended create_qp_ex and create_cq_ex); the
// replacements call the provider's unless the object is one the
// interposer carries.
void adopt_context(ibv_context* context);
// Forgets CONTEXT before it is closed.
void release_context(ibv_context* context);
// The provider's ops of an adopted context; nullptr for any other context
// (tent's own, or one opened before libtent acted).
const ProviderOps* provider_ops(const ibv_context* context);

} // namespace tent::interpose
