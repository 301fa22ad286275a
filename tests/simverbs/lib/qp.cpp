// Queue pairs (RC, UD), shared receive queues and address handles: creation,
// the RESET/INIT/RTR/RTS/ERR state machine with attribute validation, queries.
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {

constexpr uint32_t kMaxWr = 32768, kMaxSge = 30, kMaxInline = 1024;

// Address from a RoCE v2 IPv4-mapped GID (::ffff:a.b.c.d); 0 if not one.
uint32_t ip_of_gid(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (memcmp(g.raw, prefix, 12) != 0) return 0;
  uint32_t be;
  memcpy(&be, &g.raw[12], 4);
  return ntohl(be);
}

bool valid_av(const ibv_ah_attr& av) {
  // RoCE needs a GRH, and the source GID must be a populated entry
  return av.is_global && av.grh.sgid_index == 0 && av.port_num <= 1;
}

// Attributes each transition requires (IB spec table 91, RC and UD columns).
bool transition_ok(ibv_qp_type type, ibv_qp_state from, ibv_qp_state to, int mask) {
  auto has = [mask](int need) { return (mask & need) == need; };
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) return true;
  bool rc = type == IBV_QPT_RC || type == IBV_QPT_UC;
  switch (from) {
    case IBV_QPS_RESET:
      if (to != IBV_QPS_INIT) return false;
      return rc ? has(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
                : has(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    case IBV_QPS_INIT:
      if (to == IBV_QPS_INIT) return true;
      if (to != IBV_QPS_RTR) return false;
      return rc ? has(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0))
                : true;
    case IBV_QPS_RTR:
      if (to != IBV_QPS_RTS) return false;
      return rc ? has(IBV_QP_STATE | IBV_QP_SQ_PSN |
                      (type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                                IBV_QP_MAX_QP_RD_ATOMIC
                                          : 0))
                : has(IBV_QP_STATE | IBV_QP_SQ_PSN);
    case IBV_QPS_RTS:
    case IBV_QPS_SQD:
      return to == IBV_QPS_RTS || to == IBV_QPS_SQD;
    case IBV_QPS_SQE:
      return to == IBV_QPS_RTS;
    default:
      return false;
  }
}

bool values_ok(const ibv_qp_attr* a, int mask) {
  if ((mask & IBV_QP_PORT) && a->port_num != 1) return false;
  if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0) return false;
  if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096)) return false;
  if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31) return false;
  if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) return false;
  if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) return false;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) return false;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > 16) return false;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > 16) return false;
  if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff) return false;
  if ((mask & IBV_QP_AV) && !valid_av(a->ah_attr)) return false;
  if ((mask & IBV_QP_ACCESS_FLAGS) &&
      (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                              IBV_ACCESS_REMOTE_ATOMIC)))
    return false;
  return true;
}

Qp* new_qp(ibv_context* c, ibv_pd* pd, ibv_qp_init_attr* ia) {
  if (!c || !pd || !ia || !ia->send_cq || !ia->recv_cq) {
    errno = EINVAL;
    return nullptr;
  }
  if (ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UD) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  ibv_qp_cap& cap = ia->cap;
  if (cap.max_send_wr > kMaxWr || cap.max_send_sge > kMaxSge || cap.max_inline_data > kMaxInline ||
      (!ia->srq && (cap.max_recv_wr > kMaxWr || cap.max_recv_sge > kMaxSge))) {
    errno = EINVAL;
    return nullptr;
  }
  if (ia->srq) cap.max_recv_wr = cap.max_recv_sge = 0;
  auto* qp = new Qp();
  qp->ctx = ctx_of(c);
  qp->port = qp->ctx->port;
  qp->cap = cap;
  qp->sq_sig_all = ia->sq_sig_all;
  qp->srq = ia->srq ? srq_of(ia->srq) : nullptr;
  ibv_qp* b = qp->base();
  b->context = c;
  b->qp_context = ia->qp_context;
  b->pd = pd;
  b->send_cq = ia->send_cq;
  b->recv_cq = ia->recv_cq;
  b->srq = ia->srq;
  b->state = IBV_QPS_RESET;
  b->qp_type = ia->qp_type;
  pthread_mutex_init(&b->mutex, nullptr);
  pthread_cond_init(&b->cond, nullptr);
  qp->attr.qp_state = IBV_QPS_RESET;
  qp->attr.cap = cap;
  Engine::get()->register_qp(qp);
  b->handle = b->qp_num;
  pd_of(pd)->users++;
  cq_of(b->send_cq)->users++;
  cq_of(b->recv_cq)->users++;
  if (qp->srq) qp->srq->users++;
  return qp;
}

}  // namespace

ibv_qp* create_qp_ex(ibv_context* c, ibv_qp_init_attr_ex* ax) {
  if (!ax || !(ax->comp_mask & IBV_QP_INIT_ATTR_PD) ||
      (ax->comp_mask & ~uint32_t(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  ibv_qp_init_attr ia{};
  ia.qp_context = ax->qp_context;
  ia.send_cq = ax->send_cq;
  ia.recv_cq = ax->recv_cq;
  ia.srq = ax->srq;
  ia.cap = ax->cap;
  ia.qp_type = ax->qp_type;
  ia.sq_sig_all = ax->sq_sig_all;
  Qp* qp = new_qp(c, ax->pd, &ia);
  if (!qp) return nullptr;
  ax->cap = ia.cap;
  if (ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
    qp->qpx.comp_mask = 0;
    install_qp_ex_ops(qp);
  }
  return qp->base();
}

ibv_srq* create_srq_ex(ibv_context*, ibv_srq_init_attr_ex*) {
  errno = EOPNOTSUPP;
  return nullptr;
}

}  // namespace sv

using namespace sv;

SV_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* ia) {
  Qp* qp = new_qp(pd ? pd->context : nullptr, pd, ia);
  return qp ? qp->base() : nullptr;
}

SV_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  Qp* q = qp_of(qp);
  if (!q->qpx.wr_start) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  return &q->qpx;
}

SV_EXPORT int ibv_modify_qp(ibv_qp* b, ibv_qp_attr* a, int mask) {
  if (!b || !a) return EINVAL;
  Qp* qp = qp_of(b);
  std::lock_guard<std::mutex> g(qp->mu);
  ibv_qp_state cur = b->state;
  if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur) return EINVAL;
  ibv_qp_state to = (mask & IBV_QP_STATE) ? a->qp_state : cur;
  if (!transition_ok(b->qp_type, cur, to, mask) || !values_ok(a, mask)) return EINVAL;

  ibv_qp_attr& s = qp->attr;
  if (mask & IBV_QP_PKEY_INDEX) s.pkey_index = a->pkey_index;
  if (mask & IBV_QP_PORT) s.port_num = a->port_num;
  if (mask & IBV_QP_ACCESS_FLAGS) s.qp_access_flags = a->qp_access_flags;
  if (mask & IBV_QP_QKEY) s.qkey = a->qkey;
  if (mask & IBV_QP_AV) s.ah_attr = a->ah_attr;
  if (mask & IBV_QP_PATH_MTU) s.path_mtu = a->path_mtu;
  if (mask & IBV_QP_DEST_QPN) s.dest_qp_num = a->dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) s.rq_psn = a->rq_psn & 0xffffff;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) s.max_dest_rd_atomic = a->max_dest_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) s.min_rnr_timer = a->min_rnr_timer;
  if (mask & IBV_QP_SQ_PSN) s.sq_psn = a->sq_psn & 0xffffff;
  if (mask & IBV_QP_TIMEOUT) s.timeout = a->timeout;
  if (mask & IBV_QP_RETRY_CNT) s.retry_cnt = a->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) s.rnr_retry = a->rnr_retry;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) s.max_rd_atomic = a->max_rd_atomic;

  if (to == IBV_QPS_RTR && cur == IBV_QPS_INIT) {
    qp->expected_psn = s.rq_psn;
    if (b->qp_type != IBV_QPT_UD) {
      qp->remote_ip = ip_of_gid(s.ah_attr.grh.dgid);
      qp->link = Engine::get()->out_link(qp->port, qp->remote_ip);
    }
  }
  if (to == IBV_QPS_RTS && cur == IBV_QPS_RTR) {
    qp->next_psn = s.sq_psn;
    qp->retries_left = s.retry_cnt;
    qp->rnr_left = s.rnr_retry;
  }
  b->state = to;
  s.qp_state = to;
  if (to == IBV_QPS_ERR && cur != IBV_QPS_ERR) qp_to_error_locked(qp);
  if (to == IBV_QPS_RESET) {
    qp->sq.clear();
    qp->rq.clear();
    qp->deadline_ns = 0;
    qp->rnr_resume_ns = 0;
    qp->acks_lost = false;
    ibv_qp_cap cap = s.cap;
    s = ibv_qp_attr{};
    s.cap = cap;
  }
  return 0;
}

SV_EXPORT int ibv_query_qp(ibv_qp* b, ibv_qp_attr* a, int, ibv_qp_init_attr* ia) {
  if (!b || !a) return EINVAL;
  Qp* qp = qp_of(b);
  std::lock_guard<std::mutex> g(qp->mu);
  *a = qp->attr;
  a->qp_state = b->state;
  a->cur_qp_state = b->state;
  a->cap = qp->cap;
  a->sq_draining = 0;
  if (ia) {
    memset(ia, 0, sizeof *ia);
    ia->qp_context = b->qp_context;
    ia->send_cq = b->send_cq;
    ia->recv_cq = b->recv_cq;
    ia->srq = b->srq;
    ia->cap = qp->cap;
    ia->qp_type = b->qp_type;
    ia->sq_sig_all = qp->sq_sig_all;
  }
  return 0;
}

SV_EXPORT int ibv_query_qp_data_in_order(ibv_qp*, ibv_wr_opcode, uint32_t) { return 0; }

SV_EXPORT int ibv_destroy_qp(ibv_qp* b) {
  if (!b) return EINVAL;
  Qp* qp = qp_of(b);
  Engine::get()->unregister_qp(qp);
  pd_of(b->pd)->users--;
  cq_of(b->send_cq)->users--;
  cq_of(b->recv_cq)->users--;
  if (qp->srq) qp->srq->users--;
  pthread_mutex_destroy(&b->mutex);
  pthread_cond_destroy(&b->cond);
  delete qp;
  return 0;
}

// --- shared receive queues ---

SV_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* ia) {
  if (!pd || !ia || ia->attr.max_wr == 0 || ia->attr.max_wr > 32767 || ia->attr.max_sge > 31) {
    errno = EINVAL;
    return nullptr;
  }
  auto* s = new Srq();
  s->srq.context = pd->context;
  s->srq.srq_context = ia->srq_context;
  s->srq.pd = pd;
  pthread_mutex_init(&s->srq.mutex, nullptr);
  pthread_cond_init(&s->srq.cond, nullptr);
  s->max_wr = ia->attr.max_wr;
  s->max_sge = ia->attr.max_sge;
  s->limit = ia->attr.srq_limit;
  s->ctx = ctx_of(pd->context);
  pd_of(pd)->users++;
  return &s->srq;
}

SV_EXPORT int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* a, int mask) {
  if (!srq || !a) return EINVAL;
  Srq* s = srq_of(srq);
  std::lock_guard<std::mutex> g(s->mu);
  if (mask & IBV_SRQ_MAX_WR) {
    if (a->max_wr == 0 || a->max_wr > 32767 || a->max_wr < s->rq.size()) return EINVAL;
    s->max_wr = a->max_wr;
  }
  if (mask & IBV_SRQ_LIMIT) {
    if (a->srq_limit > s->max_wr) return EINVAL;
    s->limit = a->srq_limit;
  }
  return 0;
}

SV_EXPORT int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* a) {
  if (!srq || !a) return EINVAL;
  Srq* s = srq_of(srq);
  std::lock_guard<std::mutex> g(s->mu);
  a->max_wr = s->max_wr;
  a->max_sge = s->max_sge;
  a->srq_limit = s->limit;
  return 0;
}

SV_EXPORT int ibv_destroy_srq(ibv_srq* srq) {
  if (!srq) return EINVAL;
  if (srq_of(srq)->users.load() > 0) return EBUSY;
  if (Engine* e = Engine::get()) std::lock_guard<std::mutex> g(e->dispatch_mu);
  pd_of(srq->pd)->users--;
  pthread_mutex_destroy(&srq->mutex);
  pthread_cond_destroy(&srq->cond);
  delete srq_of(srq);
  return 0;
}

// --- address handles (UD) ---

SV_EXPORT ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  if (!pd || !attr || !valid_av(*attr)) {
    errno = EINVAL;
    return nullptr;
  }
  auto* ah = new Ah();
  ah->ah.context = pd->context;
  ah->ah.pd = pd;
  ah->attr = *attr;
  ah->remote_ip = ip_of_gid(attr->grh.dgid);
  pd_of(pd)->users++;
  return &ah->ah;
}

SV_EXPORT int ibv_destroy_ah(ibv_ah* ah) {
  if (!ah) return EINVAL;
  pd_of(ah->pd)->users--;
  delete ah_of(ah);
  return 0;
}

SV_EXPORT int ibv_init_ah_from_wc(ibv_context* c, uint8_t port_num, ibv_wc* wc, ibv_grh* grh,
                                  ibv_ah_attr* ah_attr) {
  if (!c || !wc || !ah_attr || port_num != 1) return EINVAL;
  memset(ah_attr, 0, sizeof *ah_attr);
  ah_attr->dlid = wc->slid;
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if (!(wc->wc_flags & IBV_WC_GRH) || !grh) return EINVAL;  // RoCE always has a GRH
  ah_attr->is_global = 1;
  ah_attr->grh.dgid = grh->sgid;
  ah_attr->grh.sgid_index = 0;
  ah_attr->grh.hop_limit = 0xff;
  ah_attr->grh.traffic_class = 0;
  ah_attr->grh.flow_label = 0;
  return 0;
}

SV_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port_num) {
  ibv_ah_attr attr;
  if (!pd || ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return ibv_create_ah(pd, &attr);
}
