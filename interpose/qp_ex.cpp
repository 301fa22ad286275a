#include "qp_ex.h"

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "context_table.h"
#include "runtime.h"
#include "signals_held_off.h"

namespace tent::interpose {

namespace {

ShadowQp* shadow_of(ibv_qp_ex* qpx) { return shadow_for(&qpx->qp_base); }

// A new work request with the id and flags the program set on qpx.
WrBuilder::Built* begin(ibv_qp_ex* qpx, ibv_wr_opcode opcode) {
    auto q = shadow_of(qpx);
    if (!q) return nullptr;
    WrBuilder& builder = q->builder;
    if (builder.used == builder.wrs.size()) {
        SignalsHeldOff held;
        builder.wrs.emplace_back();
    }
    auto& b = builder.wrs[builder.used++];
    b.wr = ibv_send_wr{};
    b.sge.clear();
    b.wr.wr_id = qpx->wr_id;
    b.wr.send_flags = qpx->wr_flags;
    b.wr.opcode = opcode;
    return &b;
}

WrBuilder::Built* last(ibv_qp_ex* qpx) {
    auto q = shadow_of(qpx);
    return q && q->builder.used > 0 ? &q->builder.wrs[q->builder.used - 1] : nullptr;
}

// SGEs for b: from list, or one SGE at once (list null).
void set_sges(WrBuilder::Built& b, std::size_t n, const ibv_sge* list, ibv_sge one = {}) {
    if (n > b.sge.capacity()) {
        SignalsHeldOff held;
        b.sge.reserve(n);
    }
    if (list) b.sge.assign(list, list + n);
    else b.sge.assign(1, one);
}

void wr_start(ibv_qp_ex* qpx) {
    if (auto q = shadow_of(qpx)) q->builder.used = 0;
}

void wr_abort(ibv_qp_ex* qpx) { wr_start(qpx); }

int wr_complete(ibv_qp_ex* qpx) {
    auto q = shadow_of(qpx);
    if (!q) return EINVAL;
    auto& wrs = q->builder.wrs;
    const std::size_t used = q->builder.used;
    q->builder.used = 0;
    if (used == 0) return 0;
    for (std::size_t i = 0; i < used; ++i) {
        auto& b = wrs[i];
        b.wr.sg_list = b.sge.data();
        b.wr.num_sge = static_cast<int>(b.sge.size());
        b.wr.next = i + 1 < used ? &wrs[i + 1].wr : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    return shadow_post_send(*q, &wrs.front().wr, &bad);
}

void wr_send(ibv_qp_ex* qpx) { begin(qpx, IBV_WR_SEND); }

void wr_send_imm(ibv_qp_ex* qpx, __be32 imm) {
    if (auto* b = begin(qpx, IBV_WR_SEND_WITH_IMM)) b->wr.imm_data = imm;
}

void wr_rdma_write(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
    if (auto* b = begin(qpx, IBV_WR_RDMA_WRITE)) b->wr.wr.rdma = {addr, rkey};
}

void wr_rdma_write_imm(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, __be32 imm) {
    if (auto* b = begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM)) {
        b->wr.wr.rdma = {addr, rkey};
        b->wr.imm_data = imm;
    }
}

void wr_rdma_read(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
    if (auto* b = begin(qpx, IBV_WR_RDMA_READ)) b->wr.wr.rdma = {addr, rkey};
}

void wr_atomic_cmp_swp(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
    if (auto* b = begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP)) b->wr.wr.atomic = {addr, compare, swap, rkey};
}

void wr_atomic_fetch_add(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t add) {
    if (auto* b = begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD)) b->wr.wr.atomic = {addr, add, 0, rkey};
}

void wr_set_sge(ibv_qp_ex* qpx, uint32_t lkey, uint64_t addr, uint32_t length) {
    if (auto* b = last(qpx)) set_sges(*b, 1, nullptr, ibv_sge{addr, length, lkey});
}

void wr_set_sge_list(ibv_qp_ex* qpx, size_t n, const ibv_sge* list) {
    if (auto* b = last(qpx)) set_sges(*b, n, list);
}

void wr_set_inline_data_list(ibv_qp_ex* qpx, size_t n, const ibv_data_buf* list) {
    auto* b = last(qpx);
    if (!b) return;
    // The program may reuse inline buffers at once: copy them.
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) total += list[i].length;
    if (total > b->inline_data.capacity()) {
        SignalsHeldOff held;
        b->inline_data.reserve(total);
    }
    b->inline_data.resize(total);
    if (total) {
        std::size_t off = 0;
        for (std::size_t i = 0; i < n; ++i) {
            std::memcpy(b->inline_data.data() + off, list[i].addr, list[i].length);
            off += list[i].length;
        }
    }
    set_sges(*b, 1, nullptr,
             ibv_sge{reinterpret_cast<std::uintptr_t>(b->inline_data.data()), static_cast<uint32_t>(total), 0});
    b->wr.send_flags |= IBV_SEND_INLINE;
}

void wr_set_inline_data(ibv_qp_ex* qpx, void* addr, size_t length) {
    ibv_data_buf one{addr, length};
    wr_set_inline_data_list(qpx, 1, &one);
}

ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr) {
    // The context table keeps the provider's, as it does its other ops.
    const ProviderOps* ops = provider_ops(context);
    CreateQpEx provider = ops ? ops->create_qp_ex : nullptr;
    if (!provider) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    ibv_qp* qp = provider(context, attr);
    if (!qp) return qp;
    SignalsHeldOff held;  // the interposer's bookkeeping allocates (signals_held_off.h)
    provider_qp_created(qp);
    if (!attr) return qp;
    if (attr->qp_type != IBV_QPT_RC) {
        if (attr->srq) srq_goes_plain(attr->srq);  // the adapter must see its receives
        return qp;
    }
    ibv_qp_init_attr plain{};
    plain.srq = attr->srq;
    plain.send_cq = attr->send_cq;
    plain.recv_cq = attr->recv_cq;
    plain.qp_type = attr->qp_type;
    plain.sq_sig_all = attr->sq_sig_all;
    plain.cap = attr->cap;
    track_qp(qp, plain);
    if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
        ibv_qp_ex* qpx = ibv_qp_to_qp_ex(qp);
        if (qpx) {
            qpx->wr_start = wr_start;
            qpx->wr_complete = wr_complete;
            qpx->wr_abort = wr_abort;
            qpx->wr_send = wr_send;
            qpx->wr_send_imm = wr_send_imm;
            qpx->wr_rdma_write = wr_rdma_write;
            qpx->wr_rdma_write_imm = wr_rdma_write_imm;
            qpx->wr_rdma_read = wr_rdma_read;
            qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
            qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
            qpx->wr_set_sge = wr_set_sge;
            qpx->wr_set_sge_list = wr_set_sge_list;
            qpx->wr_set_inline_data = wr_set_inline_data;
            qpx->wr_set_inline_data_list = wr_set_inline_data_list;
        }
    }
    return qp;
}

} // namespace

CreateQpEx adopt_create_qp_ex(ibv_context* context) {
    verbs_context* vctx = verbs_get_ctx_op(context, create_qp_ex);
    if (!vctx || !vctx->create_qp_ex) return nullptr;
    CreateQpEx provider = vctx->create_qp_ex;
    vctx->create_qp_ex = create_qp_ex;
    return provider;
}

void release_create_qp_ex(ibv_context* context, CreateQpEx provider) {
    if (!provider) return;
    if (verbs_context* vctx = verbs_get_ctx_op(context, create_qp_ex)) vctx->create_qp_ex = provider;
}

} // namespace tent::interpose
