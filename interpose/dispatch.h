// The hot-path ops the interposer installs in the application's contexts
// (ibv_post_send and friends are inline in verbs.h and call through
// context->ops, so no exported symbol can catch them).
#pragma once

#include <infiniband/verbs.h>

namespace tent::interpose {

int dispatch_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int dispatch_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int dispatch_poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);
int dispatch_req_notify_cq(ibv_cq* cq, int solicited_only);
int dispatch_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);

} // namespace tent::interpose
