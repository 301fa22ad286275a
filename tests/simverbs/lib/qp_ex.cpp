// The extended send API (ibv_qp_ex wr_*): work requests are built into a
// list between wr_start and wr_complete, then posted like ibv_post_send.
#include <cerrno>
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {

Qp* qx(ibv_qp_ex* q) { return reinterpret_cast<Qp*>(q); }

ibv_send_wr* begin(ibv_qp_ex* q, ibv_wr_opcode op) {
  Qp* qp = qx(q);
  ibv_send_wr wr{};
  wr.wr_id = q->wr_id;
  wr.send_flags = q->wr_flags;
  wr.opcode = op;
  qp->build.push_back(wr);
  qp->build_sge.emplace_back();
  return &qp->build.back();
}

ibv_send_wr* cur(ibv_qp_ex* q) {
  Qp* qp = qx(q);
  if (qp->build.empty()) {
    qp->build_err = EINVAL;
    return nullptr;
  }
  return &qp->build.back();
}

void wr_start(ibv_qp_ex* q) {
  Qp* qp = qx(q);
  qp->build.clear();
  qp->build_sge.clear();
  qp->build_err = 0;
}
void wr_abort(ibv_qp_ex* q) { wr_start(q); }
int wr_complete(ibv_qp_ex* q) {
  Qp* qp = qx(q);
  int err = qp->build_err;
  if (!err && !qp->build.empty()) {
    for (size_t i = 0; i < qp->build.size(); i++) {
      qp->build[i].sg_list = qp->build_sge[i].data();
      qp->build[i].num_sge = int(qp->build_sge[i].size());
      qp->build[i].next = i + 1 < qp->build.size() ? &qp->build[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    err = post_send(q->qp_base.context ? &q->qp_base : nullptr, qp->build.data(), &bad);
  }
  wr_start(q);
  return err;
}

void wr_send(ibv_qp_ex* q) { begin(q, IBV_WR_SEND); }
void wr_send_imm(ibv_qp_ex* q, __be32 imm) { begin(q, IBV_WR_SEND_WITH_IMM)->imm_data = imm; }
void wr_rdma_write(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) {
  ibv_send_wr* w = begin(q, IBV_WR_RDMA_WRITE);
  w->wr.rdma.rkey = rkey;
  w->wr.rdma.remote_addr = addr;
}
void wr_rdma_write_imm(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, __be32 imm) {
  ibv_send_wr* w = begin(q, IBV_WR_RDMA_WRITE_WITH_IMM);
  w->wr.rdma.rkey = rkey;
  w->wr.rdma.remote_addr = addr;
  w->imm_data = imm;
}
void wr_rdma_read(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) {
  ibv_send_wr* w = begin(q, IBV_WR_RDMA_READ);
  w->wr.rdma.rkey = rkey;
  w->wr.rdma.remote_addr = addr;
}
void wr_cmp_swp(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t cmp, uint64_t swap) {
  ibv_send_wr* w = begin(q, IBV_WR_ATOMIC_CMP_AND_SWP);
  w->wr.atomic.rkey = rkey;
  w->wr.atomic.remote_addr = addr;
  w->wr.atomic.compare_add = cmp;
  w->wr.atomic.swap = swap;
}
void wr_fetch_add(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t add) {
  ibv_send_wr* w = begin(q, IBV_WR_ATOMIC_FETCH_AND_ADD);
  w->wr.atomic.rkey = rkey;
  w->wr.atomic.remote_addr = addr;
  w->wr.atomic.compare_add = add;
}
void wr_set_ud_addr(ibv_qp_ex* q, ibv_ah* ah, uint32_t qpn, uint32_t qkey) {
  if (ibv_send_wr* w = cur(q)) {
    w->wr.ud.ah = ah;
    w->wr.ud.remote_qpn = qpn;
    w->wr.ud.remote_qkey = qkey;
  }
}
void wr_set_sge(ibv_qp_ex* q, uint32_t lkey, uint64_t addr, uint32_t len) {
  if (!cur(q)) return;
  qx(q)->build_sge.back().assign(1, ibv_sge{addr, len, lkey});
}
void wr_set_sge_list(ibv_qp_ex* q, size_t n, const ibv_sge* l) {
  if (!cur(q)) return;
  qx(q)->build_sge.back().assign(l, l + n);
}
// Inline data is copied at once: the caller may reuse its buffer right away.
void wr_set_inline_data_list(ibv_qp_ex* q, size_t n, const ibv_data_buf* bufs) {
  ibv_send_wr* w = cur(q);
  if (!w) return;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += bufs[i].length;
  auto* copy = new uint8_t[total ? total : 1];
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    memcpy(copy + off, bufs[i].addr, bufs[i].length);
    off += bufs[i].length;
  }
  // keep the copy alive until the next wr_start: stash it as a fake SGE owner
  static thread_local std::vector<std::unique_ptr<uint8_t[]>> keep;
  if (keep.size() > 4096) keep.erase(keep.begin(), keep.begin() + 2048);
  keep.emplace_back(copy);
  w->send_flags |= IBV_SEND_INLINE;
  qx(q)->build_sge.back().assign(1, ibv_sge{uint64_t(uintptr_t(copy)), uint32_t(total), 0});
}
void wr_set_inline_data(ibv_qp_ex* q, void* addr, size_t len) {
  ibv_data_buf b{addr, len};
  wr_set_inline_data_list(q, 1, &b);
}

// Not emulated: the batch fails at wr_complete with EOPNOTSUPP.
void unsupported(ibv_qp_ex* q) {
  begin(q, IBV_WR_SEND);
  qx(q)->build_err = EOPNOTSUPP;
}
void wr_bind_mw(ibv_qp_ex* q, ibv_mw*, uint32_t, const ibv_mw_bind_info*) { unsupported(q); }
void wr_local_inv(ibv_qp_ex* q, uint32_t) { unsupported(q); }
void wr_send_inv(ibv_qp_ex* q, uint32_t) { unsupported(q); }
void wr_send_tso(ibv_qp_ex* q, void*, uint16_t, uint16_t) { unsupported(q); }
void wr_set_xrc_srqn(ibv_qp_ex* q, uint32_t) { qx(q)->build_err = EOPNOTSUPP; }
void wr_atomic_write(ibv_qp_ex* q, uint32_t, uint64_t, const void*) { unsupported(q); }

}  // namespace

void install_qp_ex_ops(Qp* qp) {
  ibv_qp_ex& x = qp->qpx;
  x.wr_start = wr_start;
  x.wr_complete = wr_complete;
  x.wr_abort = wr_abort;
  x.wr_send = wr_send;
  x.wr_send_imm = wr_send_imm;
  x.wr_rdma_write = wr_rdma_write;
  x.wr_rdma_write_imm = wr_rdma_write_imm;
  x.wr_rdma_read = wr_rdma_read;
  x.wr_atomic_cmp_swp = wr_cmp_swp;
  x.wr_atomic_fetch_add = wr_fetch_add;
  x.wr_set_ud_addr = wr_set_ud_addr;
  x.wr_set_sge = wr_set_sge;
  x.wr_set_sge_list = wr_set_sge_list;
  x.wr_set_inline_data = wr_set_inline_data;
  x.wr_set_inline_data_list = wr_set_inline_data_list;
  x.wr_bind_mw = wr_bind_mw;
  x.wr_local_inv = wr_local_inv;
  x.wr_send_inv = wr_send_inv;
  x.wr_send_tso = wr_send_tso;
  x.wr_set_xrc_srqn = wr_set_xrc_srqn;
  x.wr_atomic_write = wr_atomic_write;
}

}  // namespace sv
