// RC requester: acknowledgements, RDMA_READ/atomic responses, NAKs, the local
// ACK timeout with retry_cnt, RNR retries, in-order completions and the move
// to the error state with flushed work requests.
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {

// psn a is at or before psn b in 24-bit sequence space
bool psn_le(uint32_t a, uint32_t b) { return ((b - a) & 0xffffff) < 0x800000; }

// IB encoding of the minimal RNR NAK timer, in microseconds.
uint64_t rnr_delay_us(uint8_t code) {
  static const uint32_t tbl[32] = {655360, 10,    20,    30,    40,    60,    80,    120,   160,   240,   320,
                                   480,    640,   960,   1280,  1920,  2560,  3840,  5120,  7680,  10240, 15360,
                                   20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return tbl[code & 31];
}

void push_send_wc(Qp* qp, const SendEntry& e, ibv_wc_status st) {
  ibv_wc wc{};
  wc.wr_id = e.wr_id;
  wc.status = st;
  wc.opcode = e.opcode;
  wc.byte_len = e.byte_len;
  wc.qp_num = qp->base()->qp_num;
  if (st != IBV_WC_SUCCESS && st != IBV_WC_WR_FLUSH_ERR) wc.vendor_err = 0x81;
  cq_of(qp->base()->send_cq)->push(wc);
}

SendEntry* entry_for(Qp* qp, uint32_t psn) {
  for (auto& e : qp->sq)
    if (e.psn == psn && e.state == SendEntry::kSent) return &e;
  return nullptr;
}

// The timer covers the oldest unacknowledged request, from when it left.
void restart_timer(Qp* qp, uint64_t now) {
  for (auto& e : qp->sq)
    if (e.state == SendEntry::kSent && e.transmitted) {
      qp->deadline_ns = std::max(now, e.depart_ns) + ack_timeout_ns(qp->attr.timeout);
      return;
    }
  qp->deadline_ns = 0;
}

// Cumulative acknowledgement: everything up to psn has been executed.
void ack_upto(Qp* qp, uint32_t psn) {
  bool progress = false;
  for (auto& e : qp->sq) {
    if (e.state != SendEntry::kSent) continue;
    if (!e.transmitted || !psn_le(e.psn, psn)) break;
    if (e.ack_lost) break;  // fault: this request's acknowledgements never arrive
    if (!e.local.empty()) break;  // READ/atomic complete only with their response
    e.state = SendEntry::kDone;
    progress = true;
  }
  if (progress) {
    qp->retries_left = qp->attr.retry_cnt;
    restart_timer(qp, now_ns());
  }
}

// Go-back-N: resend what was sent from psn on; then what never left.
void retransmit_from(Qp* qp, uint32_t psn, uint64_t now) {
  for (auto& e : qp->sq) {
    if (e.state != SendEntry::kSent || !e.transmitted || !psn_le(psn, e.psn)) continue;
    e.pkt = std::make_shared<Bytes>(*e.pkt);  // the old copy may still sit in a queue
    transmit_locked(qp, e);
  }
  pump_locked(qp);
  qp->deadline_ns = 0;
  restart_timer(qp, now);
}

}  // namespace

uint64_t ack_timeout_ns(uint8_t timeout) {
  if (timeout == 0) return uint64_t(1) << 62;  // 0 means wait forever
  return uint64_t(4096) << timeout;
}

void complete_sq_locked(Qp* qp) {
  while (!qp->sq.empty() && qp->sq.front().state != SendEntry::kSent) {
    SendEntry e = std::move(qp->sq.front());
    qp->sq.pop_front();
    if (e.state == SendEntry::kError) {
      push_send_wc(qp, e, e.status);
      qp_to_error_locked(qp);
      return;
    }
    if (e.signaled) push_send_wc(qp, e, IBV_WC_SUCCESS);
  }
}

void qp_to_error_locked(Qp* qp) {
  qp->base()->state = IBV_QPS_ERR;
  qp->attr.qp_state = IBV_QPS_ERR;
  for (auto& e : qp->sq) push_send_wc(qp, e, IBV_WC_WR_FLUSH_ERR);
  qp->sq.clear();
  for (auto& r : qp->rq) {
    ibv_wc wc{};
    wc.wr_id = r.wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp->base()->qp_num;
    cq_of(qp->base()->recv_cq)->push(wc);
  }
  qp->rq.clear();
  qp->deadline_ns = 0;
  qp->rnr_resume_ns = 0;
}

void on_response(Link*, const PktPtr& pkt) {
  const PktHdr* h = hdr_of(pkt);
  Qp* qp = Engine::get()->find_qp(h->dst_qpn);
  if (!qp) return;
  std::lock_guard<std::mutex> g(qp->mu);
  ibv_qp* b = qp->base();
  if (b->qp_type == IBV_QPT_UD || (b->state != IBV_QPS_RTS && b->state != IBV_QPS_SQD)) return;
  if (h->src_qpn != qp->attr.dest_qp_num) return;
  const uint8_t* data = pkt->data() + sizeof(PktHdr);
  switch (h->type) {
    case PktType::kAck: ack_upto(qp, h->psn); break;
    case PktType::kReadResp:
    case PktType::kAtomicResp: {
      ack_upto(qp, (h->psn - 1) & 0xffffff);
      SendEntry* e = entry_for(qp, h->psn);
      if (!e || e->local.empty() || e->ack_lost) break;
      if (h->type == PktType::kReadResp) {
        size_t off = 0;
        for (auto& s : e->local) {
          size_t n = std::min<size_t>(s.length, h->len - off);
          memcpy(reinterpret_cast<void*>(uintptr_t(s.addr)), data + off, n);
          off += n;
        }
      } else {
        memcpy(reinterpret_cast<void*>(uintptr_t(e->local[0].addr)), &h->compare_add, 8);
      }
      e->local.clear();
      e->state = SendEntry::kDone;
      qp->retries_left = qp->attr.retry_cnt;
      restart_timer(qp, now_ns());
      ack_upto(qp, h->psn);
      break;
    }
    case PktType::kNak: {
      ack_upto(qp, (h->psn - 1) & 0xffffff);
      SendEntry* e = entry_for(qp, h->psn);
      if (!e || e->ack_lost) break;
      if (h->nak == Nak::kRnr) {
        if (qp->rnr_left == 0) {
          e->state = SendEntry::kError;
          e->status = IBV_WC_RNR_RETRY_EXC_ERR;
          break;
        }
        if (qp->rnr_left != 7) qp->rnr_left--;  // 7 means retry forever
        qp->rnr_resume_ns = now_ns() + rnr_delay_us(h->min_rnr_timer) * 1000;
        qp->rnr_psn = h->psn;
        qp->deadline_ns = 0;
        break;
      }
      e->state = SendEntry::kError;
      e->status = h->nak == Nak::kRemAccess   ? IBV_WC_REM_ACCESS_ERR
                  : h->nak == Nak::kRemInvReq ? IBV_WC_REM_INV_REQ_ERR
                                              : IBV_WC_REM_OP_ERR;
      break;
    }
    default: break;
  }
  complete_sq_locked(qp);
  if (b->state == IBV_QPS_RTS || b->state == IBV_QPS_SQD) pump_locked(qp);  // a read slot may have freed
}

void check_timeouts(uint64_t now, uint64_t* next_ns) {
  Engine* eng = Engine::get();
  std::lock_guard<std::mutex> mg(eng->map_mu);
  for (auto& [qpn, qp] : eng->qps) {
    std::lock_guard<std::mutex> g(qp->mu);
    ibv_qp* b = qp->base();
    if (b->qp_type == IBV_QPT_UD || (b->state != IBV_QPS_RTS && b->state != IBV_QPS_SQD)) continue;
    if (qp->rnr_resume_ns) {
      if (now >= qp->rnr_resume_ns) {
        qp->rnr_resume_ns = 0;
        retransmit_from(qp, qp->rnr_psn, now);
      } else {
        *next_ns = std::min(*next_ns, qp->rnr_resume_ns);
        continue;
      }
    } else if (qp->deadline_ns && now >= qp->deadline_ns) {
      SendEntry* head = nullptr;
      for (auto& e : qp->sq)
        if (e.state == SendEntry::kSent) {
          head = &e;
          break;
        }
      if (!head) {
        qp->deadline_ns = 0;
      } else if (qp->retries_left <= 0) {
        head->state = SendEntry::kError;
        head->status = IBV_WC_RETRY_EXC_ERR;
        complete_sq_locked(qp);
      } else {
        qp->retries_left--;
        retransmit_from(qp, head->psn, now);  // go-back-N from the oldest unacknowledged
      }
    }
    if (qp->deadline_ns) *next_ns = std::min(*next_ns, qp->deadline_ns);
  }
}

}  // namespace sv
