// RC/UD responder, run by the target's progress thread: PSN checking with
// duplicate detection, receive-queue matching (RNR NAK when empty), rkey,
// bounds and access-flag validation for one-sided operations, execution into
// the target's memory, and the acknowledgement or response.
#include <arpa/inet.h>

#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {

bool psn_lt(uint32_t a, uint32_t b) { return a != b && ((b - a) & 0xffffff) < 0x800000; }

bool psn_ge(uint32_t a, uint32_t b) { return !psn_lt(a, b); }

// QPs with a coalesced ACK waiting; only touched with dispatch_mu held.
std::vector<Qp*> g_ack_pending;

void send_ack_locked(Qp* qp) {
  if (!qp->ack_pending) return;
  qp->ack_pending = false;
  if (qp->acks_lost && psn_ge(qp->ack_psn, qp->acks_lost_from)) return;
  PktPtr p = make_pkt(PktType::kAck, 0);
  PktHdr* h = hdr_of(p);
  h->src_qpn = qp->base()->qp_num;
  h->dst_qpn = qp->attr.dest_qp_num;
  h->psn = qp->ack_psn;
  Engine::get()->send(qp->ack_link, p);
}

// Acknowledge later: the next request's ACK, or the end of the round, covers it.
void defer_ack(Link* link, Qp* qp, const PktHdr* req) {
  if (qp->ack_pending && qp->ack_link != link) send_ack_locked(qp);
  if (!qp->ack_pending) g_ack_pending.push_back(qp);
  qp->ack_pending = true;
  qp->ack_link = link;
  qp->ack_psn = req->psn;
}

void reply(Link* link, Qp* qp, const PktHdr* req, PktType type, Nak nak = Nak::kNone, uint32_t payload = 0,
           PktPtr* out = nullptr) {
  send_ack_locked(qp);  // keep answers in order
  PktPtr p = make_pkt(type, payload);
  PktHdr* h = hdr_of(p);
  h->src_qpn = qp->base()->qp_num;
  h->dst_qpn = req->src_qpn;
  h->psn = req->psn;
  h->nak = nak;
  h->min_rnr_timer = qp->attr.min_rnr_timer;
  if (out) *out = p;
  else if (!(qp->acks_lost && psn_ge(req->psn, qp->acks_lost_from))) Engine::get()->send(link, p, req->deliver_at_ns);
}

// Responses built by the caller go out here, unless the ack-loss fault ate them.
void send_response(Link* link, Qp* qp, const PktHdr* req, const PktPtr& p) {
  if (!(qp->acks_lost && psn_ge(req->psn, qp->acks_lost_from))) Engine::get()->send(link, p, req->deliver_at_ns);
}

bool take_recv(Qp* qp, RecvWr* out) {
  if (qp->srq) {
    Srq* s = qp->srq;
    bool event = false;
    {
      std::lock_guard<std::mutex> g(s->mu);
      if (s->rq.empty()) return false;
      *out = std::move(s->rq.front());
      s->rq.pop_front();
      if (s->limit > 0 && s->rq.size() < s->limit) {
        s->limit = 0;  // the limit event is one-shot until re-armed
        event = true;
      }
    }
    if (event) post_async(s->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, &s->srq);
    return true;
  }
  if (qp->rq.empty()) return false;
  *out = std::move(qp->rq.front());
  qp->rq.pop_front();
  return true;
}

// Scatter pieces into a receive WR's SGEs. Returns a completion status.
ibv_wc_status scatter(Qp* qp, const RecvWr& r, const uint8_t* const* parts, const size_t* lens, int nparts) {
  uint64_t cap = 0, need = 0;
  for (auto& s : r.sge) {
    if (!check_lkey(s, qp->base()->pd, IBV_ACCESS_LOCAL_WRITE)) return IBV_WC_LOC_PROT_ERR;
    cap += s.length;
  }
  for (int i = 0; i < nparts; i++) need += lens[i];
  if (need > cap) return IBV_WC_LOC_LEN_ERR;
  size_t si = 0, soff = 0;
  for (int i = 0; i < nparts; i++) {
    const uint8_t* src = parts[i];
    size_t left = lens[i];
    while (left) {
      const ibv_sge& s = r.sge[si];
      size_t n = std::min<size_t>(left, s.length - soff);
      memcpy(reinterpret_cast<uint8_t*>(uintptr_t(s.addr)) + soff, src, n);
      src += n;
      left -= n;
      soff += n;
      if (soff == s.length) {
        si++;
        soff = 0;
      }
    }
  }
  return IBV_WC_SUCCESS;
}

ibv_wc recv_wc(Qp* qp, const RecvWr& r, ibv_wc_status st, ibv_wc_opcode op, uint32_t len, const PktHdr* h) {
  ibv_wc wc{};
  wc.wr_id = r.wr_id;
  wc.status = st;
  wc.opcode = op;
  wc.byte_len = len;
  wc.qp_num = qp->base()->qp_num;
  wc.src_qp = h->src_qpn;
  if (h->flags & kFlagImm) {
    wc.wc_flags |= IBV_WC_WITH_IMM;
    wc.imm_data = h->imm;
  }
  return wc;
}

void on_ud(const PktPtr& pkt) {
  const PktHdr* h = hdr_of(pkt);
  Qp* qp = Engine::get()->find_qp(h->dst_qpn);
  if (!qp) return;
  std::lock_guard<std::mutex> g(qp->mu);
  ibv_qp* b = qp->base();
  if (b->qp_type != IBV_QPT_UD || (b->state != IBV_QPS_RTR && b->state != IBV_QPS_RTS)) return;
  if (h->qkey != qp->attr.qkey) return;  // Q_Key violation: silently dropped
  RecvWr r;
  if (!take_recv(qp, &r)) return;        // no receive posted: a UD datagram is lost
  ibv_grh grh{};
  grh.version_tclass_flow = htonl(6u << 28);
  grh.paylen = htons(uint16_t(h->len));
  grh.next_hdr = 0x1b;
  grh.hop_limit = 64;
  uint32_t sbe = htonl(h->src_ip);
  grh.sgid.raw[10] = grh.sgid.raw[11] = 0xff;
  memcpy(&grh.sgid.raw[12], &sbe, 4);
  grh.dgid = qp->port->gid();
  const uint8_t* parts[2] = {reinterpret_cast<const uint8_t*>(&grh), pkt->data() + sizeof(PktHdr)};
  size_t lens[2] = {sizeof grh, h->len};
  ibv_wc_status st = scatter(qp, r, parts, lens, 2);
  ibv_wc wc = recv_wc(qp, r, st, IBV_WC_RECV, uint32_t(sizeof grh + h->len), h);
  wc.wc_flags |= IBV_WC_GRH;
  cq_of(b->recv_cq)->push(wc, h->flags & kFlagSolicited);
}

}  // namespace

void flush_acks() {
  for (Qp* qp : g_ack_pending) {
    std::lock_guard<std::mutex> g(qp->mu);
    send_ack_locked(qp);
  }
  g_ack_pending.clear();
}

void forget_all_pending_acks() { g_ack_pending.clear(); }

void forget_pending_ack(Qp* qp) {
  for (auto& q : g_ack_pending)
    if (q == qp) q = nullptr;
  std::erase(g_ack_pending, nullptr);
}

void on_request(Link* link, const PktPtr& pkt) {
  const PktHdr* h = hdr_of(pkt);
  if (h->type == PktType::kUdSend) {
    on_ud(pkt);
    return;
  }
  Qp* qp = Engine::get()->find_qp(h->dst_qpn);
  if (!qp) return;  // no such QP: nothing answers, the requester times out
  std::lock_guard<std::mutex> g(qp->mu);
  ibv_qp* b = qp->base();
  if (b->qp_type == IBV_QPT_UD) return;
  if (b->state != IBV_QPS_RTR && b->state != IBV_QPS_RTS && b->state != IBV_QPS_SQD) return;
  if (h->src_qpn != qp->attr.dest_qp_num) return;
  bool uc = b->qp_type == IBV_QPT_UC;
  const uint8_t* data = pkt->data() + sizeof(PktHdr);
  int qp_access = qp->attr.qp_access_flags;

  if (h->psn != qp->expected_psn) {
    if (uc || !psn_lt(h->psn, qp->expected_psn)) return;  // out of sequence after a loss: discarded
    // duplicate: executed before, only the response was lost
    if (h->type == PktType::kRead) {
      uint8_t* src = check_rkey(h->rkey, h->raddr, h->len_req, IBV_ACCESS_REMOTE_READ, b->pd);
      if (!src && h->len_req) return;
      PktPtr p;
      reply(link, qp, h, PktType::kReadResp, Nak::kNone, h->len_req, &p);
      if (h->len_req) memcpy(p->data() + sizeof(PktHdr), src, h->len_req);
      send_response(link, qp, h, p);
    } else if (h->type == PktType::kAtomic) {
      if (h->psn != qp->last_atomic_psn) return;
      PktPtr p;
      reply(link, qp, h, PktType::kAtomicResp, Nak::kNone, 0, &p);
      hdr_of(p)->compare_add = qp->last_atomic_result;
      send_response(link, qp, h, p);
    } else {
      reply(link, qp, h, PktType::kAck);
    }
    return;
  }

  // Executing a new request: advance, and let the ack-loss fault of the port
  // it came in on decide whether its acknowledgements ever leave.
  auto advance = [qp, link, h] {
    qp->expected_psn = (qp->expected_psn + 1) & 0xffffff;
    if (!qp->acks_lost && take_ack_loss(link->port, true)) {
      qp->acks_lost = true;
      qp->acks_lost_from = h->psn;
    }
  };
  switch (h->type) {
    case PktType::kSend: {
      RecvWr r;
      if (!take_recv(qp, &r)) {
        if (!uc) reply(link, qp, h, PktType::kNak, Nak::kRnr);
        return;
      }
      const uint8_t* parts[1] = {data};
      size_t lens[1] = {h->len};
      ibv_wc_status st = scatter(qp, r, parts, lens, 1);
      cq_of(b->recv_cq)->push(recv_wc(qp, r, st, IBV_WC_RECV, h->len, h), h->flags & kFlagSolicited);
      if (st != IBV_WC_SUCCESS) {
        if (!uc) reply(link, qp, h, PktType::kNak, st == IBV_WC_LOC_LEN_ERR ? Nak::kRemInvReq : Nak::kRemOp);
        qp_to_error_locked(qp);
        return;
      }
      advance();
      if (!uc) defer_ack(link, qp, h);
      return;
    }
    case PktType::kWrite: {
      uint8_t* dst = nullptr;
      if (h->len) {
        dst = (qp_access & IBV_ACCESS_REMOTE_WRITE)
                  ? check_rkey(h->rkey, h->raddr, h->len, IBV_ACCESS_REMOTE_WRITE, b->pd)
                  : nullptr;
        if (!dst) {
          if (!uc) reply(link, qp, h, PktType::kNak, Nak::kRemAccess);
          return;
        }
      }
      RecvWr r;
      bool imm = h->flags & kFlagImm;
      if (imm && !take_recv(qp, &r)) {
        if (!uc) reply(link, qp, h, PktType::kNak, Nak::kRnr);
        return;
      }
      if (h->len) memcpy(dst, data, h->len);
      if (imm)
        cq_of(b->recv_cq)->push(recv_wc(qp, r, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, h->len, h),
                                h->flags & kFlagSolicited);
      advance();
      if (!uc) defer_ack(link, qp, h);
      return;
    }
    case PktType::kRead: {
      uint8_t* src = nullptr;
      if (h->len_req) {
        src = (qp_access & IBV_ACCESS_REMOTE_READ)
                  ? check_rkey(h->rkey, h->raddr, h->len_req, IBV_ACCESS_REMOTE_READ, b->pd)
                  : nullptr;
        if (!src) {
          reply(link, qp, h, PktType::kNak, Nak::kRemAccess);
          return;
        }
      }
      PktPtr p;
      reply(link, qp, h, PktType::kReadResp, Nak::kNone, h->len_req, &p);
      if (h->len_req) memcpy(p->data() + sizeof(PktHdr), src, h->len_req);
      advance();
      send_response(link, qp, h, p);
      return;
    }
    case PktType::kAtomic: {
      if (h->raddr % 8) {
        reply(link, qp, h, PktType::kNak, Nak::kRemInvReq);
        return;
      }
      uint8_t* dst = (qp_access & IBV_ACCESS_REMOTE_ATOMIC)
                         ? check_rkey(h->rkey, h->raddr, 8, IBV_ACCESS_REMOTE_ATOMIC, b->pd)
                         : nullptr;
      if (!dst) {
        reply(link, qp, h, PktType::kNak, Nak::kRemAccess);
        return;
      }
      auto* word = reinterpret_cast<uint64_t*>(dst);
      uint64_t orig;
      if (h->flags & kFlagCmpSwap) {
        orig = h->compare_add;
        __atomic_compare_exchange_n(word, &orig, h->swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      } else {
        orig = __atomic_fetch_add(word, h->compare_add, __ATOMIC_SEQ_CST);
      }
      qp->last_atomic_psn = h->psn;
      qp->last_atomic_result = orig;
      PktPtr p;
      reply(link, qp, h, PktType::kAtomicResp, Nak::kNone, 0, &p);
      hdr_of(p)->compare_add = orig;
      advance();
      send_response(link, qp, h, p);
      return;
    }
    default: return;
  }
}

}  // namespace sv
