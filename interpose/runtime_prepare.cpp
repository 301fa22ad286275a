// A work request of a carried queue pair becomes a slot in its send queue
// and the tent calls of its one-sided parts (its message, if any, waits in
// the slot for runtime_send.cpp).
#include "runtime_state.h"

#include <chrono>
#include <cstring>

#include "common/log.h"
#include "memory.h"

namespace tent::interpose {

namespace {

// How long a write or read waits for the peer's announcement of its rkey.
constexpr auto kKeyWait = std::chrono::seconds(2);

// The peer's region holding [remote, remote + length) under rkey, waiting
// for its announcement (a program may send the rkey over its own socket
// before the announcement arrives); nullptr if none came in time.
const Announcement* remote_region(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, std::uint32_t rkey,
                                  std::uint64_t remote, std::uint64_t length) {
    auto deadline = std::chrono::steady_clock::now() + kKeyWait;
    for (;;) {
        if (auto it = q.remote_keys.find(rkey); it != q.remote_keys.end())
            for (const Announcement& a : it->second)
                if (remote >= a.iova && remote + length <= a.iova + a.length) return &a;
        if (s.keys_arrived.wait_until(lock, deadline) == std::cv_status::timeout) return nullptr;
    }
}

// An atomic work request (state mutex held): one tent atomic whose result
// tent writes straight into the program's 8-byte SGE; the completion
// (IBV_WC_COMP_SWAP / IBV_WC_FETCH_ADD, byte_len 8) follows in posting order.
int prepare_atomic(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, const ibv_send_wr& wr, SendSlot slot,
                   std::vector<TentCall>& calls) {
    const std::uint64_t remote = wr.wr.atomic.remote_addr;
    if (wr.num_sge != 1 || wr.sg_list[0].length != 8 || remote % 8 != 0) {
        TENT_ERROR("interpose-atomic", "interposer: qp 0x%x: an atomic needs one 8-byte SGE and an 8-byte aligned "
                   "remote address", q.qp->qp_num);
        return EINVAL;
    }
    const Announcement* region = remote_region(s, lock, q, wr.wr.atomic.rkey, remote, 8);
    if (!region) {
        TENT_ERROR("interpose-rkey", "interposer: qp 0x%x: the peer announced no region for rkey 0x%x",
                   q.qp->qp_num, wr.wr.atomic.rkey);
        return EINVAL;
    }
    const ibv_sge& sge = wr.sg_list[0];
    RegionView view;
    if (!local_region(q.qp->context, sge.lkey, sge.addr, 8, g_engine, &view)) {
        TENT_ERROR("interpose-lkey", "interposer: qp 0x%x: no region of lkey 0x%x holds the atomic's result",
                   q.qp->qp_num, sge.lkey);
        return EINVAL;
    }
    TentCall c;
    c.kind = TentCall::Atomic;
    c.atomic_op = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? TENT_ATOMIC_COMPARE_SWAP : TENT_ATOMIC_FETCH_ADD;
    c.compare_add = wr.wr.atomic.compare_add;
    c.swap = wr.wr.atomic.swap;
    c.length = 8;
    std::memcpy(c.key, region->key, sizeof c.key);
    c.remote_addr = region->addr + (remote - region->iova);
    c.local = view.addr + (sge.addr - view.iova);
    c.cookie = op_cookie(q, q.sq_base + q.sq.size(), false);
    slot.opcode = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
    slot.byte_len = 8;
    slot.onesided_parts = 1;
    slot.access = Access::Modify;
    slot.fenced = (wr.send_flags & IBV_SEND_FENCE) != 0;
    q.sq.push_back(std::move(slot));
    // Several in flight: tent executes a peer's atomics in the order they
    // were posted (tent(3)), as the adapter does a QP's.
    calls.push_back(c);
    start_or_hold(q, q.sq.back(), calls, calls.size() - 1);
    return 0;
}

} // namespace

// Prepares one work request of a carried QP (state mutex held): a slot,
// and the tent calls of its one-sided parts; its message, if any, waits in
// the slot for ready_messages(). EINVAL/ENOMEM for what cannot be carried.
int prepare(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, const ibv_send_wr& wr,
            std::vector<TentCall>& calls) {
    if (wr.num_sge < 0) return EINVAL;
    std::uint64_t total = 0;
    for (int i = 0; i < wr.num_sge; ++i) total += wr.sg_list[i].length;
    SendSlot slot;
    slot.wr_id = wr.wr_id;
    slot.signaled = q.sig_all || (wr.send_flags & IBV_SEND_SIGNALED);
    slot.byte_len = static_cast<std::uint32_t>(total);
    switch (wr.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: {
        slot.opcode = IBV_WC_SEND;
        slot.message = build_message(q, wr.opcode == IBV_WR_SEND_WITH_IMM ? kHasImm : 0u, wr.imm_data, total,
                                     &slot.message_length);
        if (!slot.message.data) return ENOMEM;
        std::size_t off = sizeof(MessageHeader);
        for (int i = 0; i < wr.num_sge; ++i) {
            std::memcpy(slot.message.data.get() + off, reinterpret_cast<const void*>(wr.sg_list[i].addr),
                        wr.sg_list[i].length);
            off += wr.sg_list[i].length;
        }
        slot.message_waiting = true;
        q.sq.push_back(std::move(slot));
        return 0;
    }
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
        break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return prepare_atomic(s, lock, q, wr, std::move(slot), calls);
    default:
        TENT_ERROR("interpose-opcode", "interposer: qp 0x%x: work request opcode %d is not carried by tent yet",
                   q.qp->qp_num, static_cast<int>(wr.opcode));
        return EINVAL;
    }
    bool read = wr.opcode == IBV_WR_RDMA_READ;
    slot.opcode = read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
    const Announcement* region = total ? remote_region(s, lock, q, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr, total)
                                       : nullptr;
    if (total && !region) {
        TENT_ERROR("interpose-rkey", "interposer: qp 0x%x: the peer announced no region for rkey 0x%x",
                   q.qp->qp_num, wr.wr.rdma.rkey);
        return EINVAL;
    }
    const std::uint64_t cookie = op_cookie(q, q.sq_base + q.sq.size(), false);
    std::uint64_t remote = wr.wr.rdma.remote_addr;
    // Inline data may be reused once ibv_post_send returns: the parts send
    // from a copy the slot keeps.
    const bool inline_data = !read && (wr.send_flags & IBV_SEND_INLINE) && total;
    std::size_t copied = 0;
    if (inline_data) {
        slot.inline_copy = g_pool->acquire(total);
        if (!slot.inline_copy.data) return ENOMEM;
    }
    const std::size_t first = calls.size();  // this work request's parts, from here
    for (int i = 0; i < wr.num_sge; ++i) {
        const ibv_sge& sge = wr.sg_list[i];
        if (!sge.length) continue;
        TentCall c;
        c.kind = read ? TentCall::Read : TentCall::Write;
        c.length = sge.length;
        std::memcpy(c.key, region->key, sizeof c.key);
        c.remote_addr = region->addr + (remote - region->iova);
        remote += sge.length;
        RegionView view;
        if (inline_data) {
            std::uint8_t* copy = slot.inline_copy.data.get() + copied;
            std::memcpy(copy, reinterpret_cast<const void*>(sge.addr), sge.length);
            copied += sge.length;
            c.local = copy;
        } else if (local_region(q.qp->context, sge.lkey, sge.addr, sge.length, g_engine, &view)) {
            c.local = view.addr + (sge.addr - view.iova);
        } else {
            TENT_ERROR("interpose-lkey", "interposer: qp 0x%x: no region of lkey 0x%x holds the work request's data",
                       q.qp->qp_num, sge.lkey);
            g_pool->release(std::move(slot.inline_copy));
            calls.resize(first);
            return EINVAL;
        }
        c.cookie = cookie;
        calls.push_back(c);
    }
    const std::size_t parts = calls.size() - first;
    slot.onesided_parts = static_cast<int>(parts);
    slot.access = parts == 0 ? Access::None : read ? Access::Read : Access::Modify;
    slot.fenced = (wr.send_flags & IBV_SEND_FENCE) != 0;
    if (wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        std::uint32_t len32 = static_cast<std::uint32_t>(total);
        slot.message = build_message(q, kHasImm | kWriteNotice, wr.imm_data, sizeof len32, &slot.message_length);
        if (!slot.message.data) {
            calls.resize(first);
            return ENOMEM;
        }
        std::memcpy(slot.message.data.get() + sizeof(MessageHeader), &len32, sizeof len32);
        slot.message_waiting = true;
    }
    q.sq.push_back(std::move(slot));
    start_or_hold(q, q.sq.back(), calls, first);
    return 0;
}

} // namespace tent::interpose
