// Posting work requests: validation as an HCA does it at post time, local key
// checks, building the packet (data is gathered when the request is posted),
// and handing it to the requester state of the QP.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {

bool opcode_to_wc(ibv_wr_opcode op, ibv_wc_opcode* wc) {
  switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: *wc = IBV_WC_SEND; return true;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: *wc = IBV_WC_RDMA_WRITE; return true;
    case IBV_WR_RDMA_READ: *wc = IBV_WC_RDMA_READ; return true;
    case IBV_WR_ATOMIC_CMP_AND_SWP: *wc = IBV_WC_COMP_SWAP; return true;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: *wc = IBV_WC_FETCH_ADD; return true;
    default: return false;
  }
}

ibv_wc make_wc(Qp* qp, uint64_t wr_id, ibv_wc_status st, ibv_wc_opcode op, uint32_t len) {
  ibv_wc wc{};
  wc.wr_id = wr_id;
  wc.status = st;
  wc.opcode = op;
  wc.byte_len = len;
  wc.qp_num = qp->base()->qp_num;
  return wc;
}

// Gather the data of a work request into the packet payload.
void gather(const ibv_send_wr* wr, uint8_t* dst) {
  for (int i = 0; i < wr->num_sge; i++) {
    memcpy(dst, reinterpret_cast<const void*>(uintptr_t(wr->sg_list[i].addr)), wr->sg_list[i].length);
    dst += wr->sg_list[i].length;
  }
}

int post_one_ud(Qp* qp, ibv_send_wr* wr, uint32_t total) {
  if (!wr->wr.ud.ah) return EINVAL;
  Ah* ah = ah_of(wr->wr.ud.ah);
  bool signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
  ibv_wc_status st = IBV_WC_SUCCESS;
  if (!(wr->send_flags & IBV_SEND_INLINE))
    for (int i = 0; i < wr->num_sge; i++)
      if (!check_lkey(wr->sg_list[i], qp->base()->pd, 0)) st = IBV_WC_LOC_PROT_ERR;
  if (st == IBV_WC_SUCCESS && total > 4096) st = IBV_WC_LOC_LEN_ERR;  // one MTU per datagram
  if (st == IBV_WC_SUCCESS) inject_failure(qp->port, &st);
  if (st == IBV_WC_SUCCESS) {
    PktPtr p = make_pkt(PktType::kUdSend, total);
    PktHdr* h = hdr_of(p);
    h->src_qpn = qp->base()->qp_num;
    h->dst_qpn = wr->wr.ud.remote_qpn;
    h->qkey = (wr->wr.ud.remote_qkey & 0x80000000u) ? qp->attr.qkey : wr->wr.ud.remote_qkey;
    if (wr->opcode == IBV_WR_SEND_WITH_IMM) {
      h->flags |= kFlagImm;
      h->imm = wr->imm_data;
    }
    if (wr->send_flags & IBV_SEND_SOLICITED) h->flags |= kFlagSolicited;
    gather(wr, p->data() + sizeof(PktHdr));
    Engine* e = Engine::get();
    e->send(e->out_link(qp->port, ah->remote_ip), p);
  }
  if (signaled || st != IBV_WC_SUCCESS)
    cq_of(qp->base()->send_cq)->push(make_wc(qp, wr->wr_id, st, IBV_WC_SEND, total));
  return 0;
}

}  // namespace

void transmit_locked(Qp* qp, SendEntry& e) {
  PktHdr* h = hdr_of(e.pkt);
  h->src_qpn = qp->base()->qp_num;
  h->dst_qpn = qp->attr.dest_qp_num;
  h->psn = e.psn;
  e.transmitted = true;
  // the ACK timer runs from when the request leaves the port, as on an HCA
  // (a bandwidth cap can queue it behind earlier ones)
  e.depart_ns = qp->link ? Engine::get()->send(qp->link, e.pkt) : now_ns();
  if (qp->deadline_ns == 0) qp->deadline_ns = e.depart_ns + ack_timeout_ns(qp->attr.timeout);
}

// As on an HCA, at most max_rd_atomic RDMA_READ/atomic requests are in
// flight; the send queue stalls behind the next one until one completes.
// After an RNR NAK nothing new leaves until the RNR timer has run.
// A QP also has at most kWindowBytes unacknowledged on the wire: what a
// real link holds is small, and the ACK timer must not cover time spent
// queued behind megabytes of earlier requests (nor go-back-N resend them).
// Two requests may always be in flight so that large messages still overlap.
constexpr uint64_t kWindowBytes = 4u << 20;

void pump_locked(Qp* qp) {
  if (qp->rnr_resume_ns) return;
  unsigned limit = std::max<unsigned>(1, qp->attr.max_rd_atomic), reads = 0;
  uint64_t inflight = 0;
  unsigned count = 0;
  for (auto& e : qp->sq) {
    if (e.state != SendEntry::kSent) continue;
    bool rd = !e.local.empty();
    uint64_t bytes = std::max<uint64_t>(e.byte_len, 1);
    if (e.transmitted) {
      reads += rd;
      inflight += bytes;
      count++;
      continue;
    }
    if (rd && reads >= limit) return;
    if (count >= 2 && inflight + bytes > kWindowBytes) return;
    transmit_locked(qp, e);
    reads += rd;
    inflight += bytes;
    count++;
  }
}

int post_send(ibv_qp* b, ibv_send_wr* wr, ibv_send_wr** bad) {
  Qp* qp = qp_of(b);
  Engine::DeferredWrites writes_after_unlock;  // destroyed after g
  std::lock_guard<std::mutex> g(qp->mu);
  for (; wr; wr = wr->next) {
    int err = 0;
    ibv_wc_opcode wcop;
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge; i++) total += wr->sg_list[i].length;
    bool is_inline = wr->send_flags & IBV_SEND_INLINE;
    bool rc = b->qp_type != IBV_QPT_UD;
    if (b->state != IBV_QPS_RTS && b->state != IBV_QPS_ERR && b->state != IBV_QPS_SQD) err = EINVAL;
    else if (!opcode_to_wc(wr->opcode, &wcop)) err = EINVAL;
    else if (!rc && wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) err = EINVAL;
    else if (b->qp_type == IBV_QPT_UC &&
             (wr->opcode == IBV_WR_RDMA_READ || wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
              wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD))
      err = EINVAL;
    else if (wr->num_sge < 0 || uint32_t(wr->num_sge) > qp->cap.max_send_sge) err = EINVAL;
    else if (is_inline && (total > qp->cap.max_inline_data || wr->opcode == IBV_WR_RDMA_READ ||
                           wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD))
      err = EINVAL;
    else if ((wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
             (wr->num_sge != 1 || wr->sg_list[0].length != 8))
      err = EINVAL;
    else if (total > 0x40000000) err = EINVAL;
    else if (qp->sq.size() >= qp->cap.max_send_wr) err = ENOMEM;
    if (err) {
      if (bad) *bad = wr;
      return err;
    }
    if (b->state == IBV_QPS_ERR) {  // posted to a QP in error: flushed at once
      cq_of(b->send_cq)->push(make_wc(qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, wcop, 0));
      continue;
    }
    if (!rc) {
      err = post_one_ud(qp, wr, uint32_t(total));
      if (err) {
        if (bad) *bad = wr;
        return err;
      }
      continue;
    }

    SendEntry e;
    e.wr_id = wr->wr_id;
    e.opcode = wcop;
    e.signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
    e.psn = qp->next_psn;
    qp->next_psn = (qp->next_psn + 1) & 0xffffff;
    e.byte_len = uint32_t(total);
    bool reads_back = wr->opcode == IBV_WR_RDMA_READ || wcop == IBV_WC_COMP_SWAP || wcop == IBV_WC_FETCH_ADD;
    if (!is_inline)
      for (int i = 0; i < wr->num_sge; i++)
        if (!check_lkey(wr->sg_list[i], b->pd, reads_back ? IBV_ACCESS_LOCAL_WRITE : 0)) {
          e.state = SendEntry::kError;
          e.status = IBV_WC_LOC_PROT_ERR;
        }
    if (e.state != SendEntry::kError && inject_failure(qp->port, &e.status)) e.state = SendEntry::kError;
    if (e.state != SendEntry::kError) {
      PktPtr p;
      switch (wr->opcode) {
        case IBV_WR_SEND:
        case IBV_WR_SEND_WITH_IMM:
          p = make_pkt(PktType::kSend, uint32_t(total));
          gather(wr, p->data() + sizeof(PktHdr));
          break;
        case IBV_WR_RDMA_WRITE:
        case IBV_WR_RDMA_WRITE_WITH_IMM:
          p = make_pkt(PktType::kWrite, uint32_t(total));
          gather(wr, p->data() + sizeof(PktHdr));
          hdr_of(p)->raddr = wr->wr.rdma.remote_addr;
          hdr_of(p)->rkey = wr->wr.rdma.rkey;
          break;
        case IBV_WR_RDMA_READ:
          p = make_pkt(PktType::kRead, 0);
          hdr_of(p)->raddr = wr->wr.rdma.remote_addr;
          hdr_of(p)->rkey = wr->wr.rdma.rkey;
          hdr_of(p)->len_req = uint32_t(total);
          break;
        default:
          p = make_pkt(PktType::kAtomic, 0);
          hdr_of(p)->raddr = wr->wr.atomic.remote_addr;
          hdr_of(p)->rkey = wr->wr.atomic.rkey;
          hdr_of(p)->compare_add = wr->wr.atomic.compare_add;
          hdr_of(p)->swap = wr->wr.atomic.swap;
          if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) hdr_of(p)->flags |= kFlagCmpSwap;
          break;
      }
      if (wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        hdr_of(p)->flags |= kFlagImm;
        hdr_of(p)->imm = wr->imm_data;
      }
      if (wr->send_flags & IBV_SEND_SOLICITED) hdr_of(p)->flags |= kFlagSolicited;
      e.pkt = std::move(p);
      if (reads_back) e.local.assign(wr->sg_list, wr->sg_list + wr->num_sge);
      e.ack_lost = take_ack_loss(qp->port, false);
    }
    qp->sq.push_back(std::move(e));
    pump_locked(qp);
    complete_sq_locked(qp);
  }
  return 0;
}

int post_recv(ibv_qp* b, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Qp* qp = qp_of(b);
  std::lock_guard<std::mutex> g(qp->mu);
  for (; wr; wr = wr->next) {
    int err = 0;
    if (qp->srq || b->state == IBV_QPS_RESET) err = EINVAL;
    else if (wr->num_sge < 0 || uint32_t(wr->num_sge) > qp->cap.max_recv_sge) err = EINVAL;
    else if (qp->rq.size() >= qp->cap.max_recv_wr) err = ENOMEM;
    if (err) {
      if (bad) *bad = wr;
      return err;
    }
    if (b->state == IBV_QPS_ERR) {
      ibv_wc wc = make_wc(qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
      cq_of(b->recv_cq)->push(wc);
      continue;
    }
    qp->rq.push_back(RecvWr{wr->wr_id, std::vector<ibv_sge>(wr->sg_list, wr->sg_list + wr->num_sge)});
  }
  return 0;
}

int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Srq* s = srq_of(srq);
  std::lock_guard<std::mutex> g(s->mu);
  for (; wr; wr = wr->next) {
    int err = 0;
    if (wr->num_sge < 0 || uint32_t(wr->num_sge) > s->max_sge) err = EINVAL;
    else if (s->rq.size() >= s->max_wr) err = ENOMEM;
    if (err) {
      if (bad) *bad = wr;
      return err;
    }
    s->rq.push_back(RecvWr{wr->wr_id, std::vector<ibv_sge>(wr->sg_list, wr->sg_list + wr->num_sge)});
  }
  return 0;
}

}  // namespace sv
