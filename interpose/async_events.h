// Asynchronous events of adopted contexts. The context's async_fd becomes
// an epoll set of the provider's descriptor and an eventfd of the
// interposer's, so that an event the interposer raises for a carried QP
// (IBV_EVENT_QP_FATAL when its peer is gone) makes the fd readable and
// ibv_get_async_event returns it, as the adapter's own would be.
#pragma once

#include <infiniband/verbs.h>

namespace tent::interpose {

void adopt_async_fd(ibv_context* context);
void release_async_fd(ibv_context* context);
// Raises IBV_EVENT_QP_FATAL for QP on its context's event queue.
void raise_qp_fatal(ibv_qp* qp);
// Raises IBV_EVENT_QP_LAST_WQE_REACHED for QP (on a shared receive queue,
// entering the error state) on its context's event queue.
void raise_qp_last_wqe(ibv_qp* qp);
// Raises IBV_EVENT_SRQ_LIMIT_REACHED for SRQ on its context's event queue.
void raise_srq_limit(ibv_srq* srq);
// The next event: the interposer's or the provider's (through get).
int async_event(ibv_context* context, ibv_async_event* event, int (*get)(ibv_context*, ibv_async_event*));
// True if EVENT is one the interposer raised (its acknowledgement is not
// the provider's business).
bool own_event(const ibv_async_event* event);

} // namespace tent::interpose
