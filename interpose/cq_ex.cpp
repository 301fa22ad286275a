#include "cq_ex.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "context_table.h"
#include "runtime.h"
#include "signals_held_off.h"

namespace tent::interpose {

namespace {

// The provider's polling functions of one CQ, and the poll under way.
struct ExCq {
    int (*start_poll)(ibv_cq_ex*, ibv_poll_cq_attr*) = nullptr;
    int (*next_poll)(ibv_cq_ex*) = nullptr;
    void (*end_poll)(ibv_cq_ex*) = nullptr;
    ibv_wc_opcode (*read_opcode)(ibv_cq_ex*) = nullptr;
    std::uint32_t (*read_vendor_err)(ibv_cq_ex*) = nullptr;
    std::uint32_t (*read_byte_len)(ibv_cq_ex*) = nullptr;
    __be32 (*read_imm_data)(ibv_cq_ex*) = nullptr;
    std::uint32_t (*read_qp_num)(ibv_cq_ex*) = nullptr;
    std::uint32_t (*read_src_qp)(ibv_cq_ex*) = nullptr;
    unsigned int (*read_wc_flags)(ibv_cq_ex*) = nullptr;
    std::uint32_t (*read_slid)(ibv_cq_ex*) = nullptr;
    std::uint8_t (*read_sl)(ibv_cq_ex*) = nullptr;
    std::uint8_t (*read_dlid_path_bits)(ibv_cq_ex*) = nullptr;
    std::uint64_t (*read_completion_ts)(ibv_cq_ex*) = nullptr;
    std::uint16_t (*read_cvlan)(ibv_cq_ex*) = nullptr;
    std::uint32_t (*read_flow_tag)(ibv_cq_ex*) = nullptr;
    void (*read_tm_info)(ibv_cq_ex*, ibv_wc_tm_info*) = nullptr;
    std::uint64_t (*read_completion_wallclock_ns)(ibv_cq_ex*) = nullptr;

    // Held from a start_poll that found a completion to its end_poll, as a
    // provider holds its CQ's lock: the poll's state below is one thread's.
    std::mutex poll;
    bool tent_entry = false;  // the current completion is tent's (entry), else the provider's
    ibv_wc entry{};
};

// Every CQ the interposer created, by address. An ExCq is never freed: a
// CQ created later at the same address takes it over, so a pointer to it
// stays valid (the per-thread cache below).
struct Registry {
    std::shared_mutex mutex;
    std::unordered_map<const ibv_cq_ex*, std::unique_ptr<ExCq>> cqs;
};

Registry& registry() {
    static auto* r = new Registry;  // never freed, as the context table
    return *r;
}

// The CQ this thread polled last: the reads of one completion look it up
// without the registry's lock.
thread_local const ibv_cq_ex* t_cq = nullptr;
thread_local ExCq* t_ex = nullptr;

ExCq& ex_of(ibv_cq_ex* cq) {
    if (t_cq != cq) {
        // Only a CQ take_over() registered calls in here: it registers
        // before it installs the functions that do.
        std::shared_lock lock(registry().mutex);
        t_ex = registry().cqs.find(cq)->second.get();
        t_cq = cq;
    }
    return *t_ex;
}

// Makes ENTRY the current completion.
int serve(ibv_cq_ex* cq, ExCq& ex, const ibv_wc& entry) {
    ex.tent_entry = true;
    ex.entry = entry;
    cq->wr_id = entry.wr_id;
    cq->status = entry.status;
    return 0;
}

// The next completion of tent's, else the provider's (starting its poll);
// ENOENT once neither has one. The first of a poll (FIRST) drives tent
// when none is queued, as ibv_poll_cq does; the next ones take only what
// is queued: a turn there could complete a request after the program
// re-armed the CQ, whose event would then announce a completion this poll
// already returned (ibv_rc_pingpong -t -e takes such an empty poll after
// an event for an error).
// A poll that starts with the provider's (CqTurn::ProviderFirst) gives
// tent's queued ones only when the provider has none.
int next_of_either(ibv_cq_ex* cq, ExCq& ex, ibv_poll_cq_attr* attr, bool first) {
    ibv_wc wc;
    CqTurn turn = CqTurn::TentFirst;
    const ibv_cq* base = ibv_cq_ex_to_cq(cq);
    if ((first ? take_completions(base, 1, &wc, &turn) : take_queued_completions(base, 1, &wc, &turn)) == 1)
        return serve(cq, ex, wc);
    if (turn == CqTurn::TentOnly) return ENOENT;
    ibv_poll_cq_attr none{};
    int rc = ex.start_poll(cq, attr ? attr : &none);
    if (rc == 0) ex.tent_entry = false;
    if (rc == ENOENT && turn == CqTurn::ProviderFirst && take_queued_completions(base, 1, &wc, &turn) == 1)
        return serve(cq, ex, wc);
    return rc;
}

int start_poll(ibv_cq_ex* cq, ibv_poll_cq_attr* attr) {
    ExCq& ex = ex_of(cq);
    ex.poll.lock();
    ex.tent_entry = true;  // nothing of the provider's is open yet
    int rc = next_of_either(cq, ex, attr, true);
    if (rc != 0) ex.poll.unlock();  // the poll is over: no end_poll follows
    return rc;
}

int next_poll(ibv_cq_ex* cq) {
    ExCq& ex = ex_of(cq);
    if (!ex.tent_entry) return ex.next_poll(cq);
    return next_of_either(cq, ex, nullptr, false);
}

void end_poll(ibv_cq_ex* cq) {
    ExCq& ex = ex_of(cq);
    if (!ex.tent_entry) ex.end_poll(cq);
    ex.poll.unlock();
}

std::uint64_t clock_ns(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Each read gives the current completion's field: tent's from its entry,
// the provider's from the provider.
#define TENT_CQ_EX_READ(type, name, tent_value)                                                                        \
    type name(ibv_cq_ex* cq) {                                                                                         \
        ExCq& ex = ex_of(cq);                                                                                          \
        if (!ex.tent_entry) return ex.name(cq);                                                                        \
        const ibv_wc& wc = ex.entry;                                                                                   \
        (void)wc;                                                                                                      \
        return tent_value;                                                                                             \
    }
TENT_CQ_EX_READ(ibv_wc_opcode, read_opcode, wc.opcode)
TENT_CQ_EX_READ(std::uint32_t, read_vendor_err, wc.vendor_err)
TENT_CQ_EX_READ(std::uint32_t, read_byte_len, wc.byte_len)
TENT_CQ_EX_READ(__be32, read_imm_data, wc.imm_data)
TENT_CQ_EX_READ(std::uint32_t, read_qp_num, wc.qp_num)
TENT_CQ_EX_READ(std::uint32_t, read_src_qp, wc.src_qp)
TENT_CQ_EX_READ(unsigned int, read_wc_flags, wc.wc_flags)
TENT_CQ_EX_READ(std::uint32_t, read_slid, wc.slid)
TENT_CQ_EX_READ(std::uint8_t, read_sl, wc.sl)
TENT_CQ_EX_READ(std::uint8_t, read_dlid_path_bits, wc.dlid_path_bits)
// tent's completions carry no adapter clock: the host's, read when taken.
TENT_CQ_EX_READ(std::uint64_t, read_completion_ts, clock_ns(CLOCK_MONOTONIC))
TENT_CQ_EX_READ(std::uint64_t, read_completion_wallclock_ns, clock_ns(CLOCK_REALTIME))
TENT_CQ_EX_READ(std::uint16_t, read_cvlan, 0)
TENT_CQ_EX_READ(std::uint32_t, read_flow_tag, 0)
#undef TENT_CQ_EX_READ

void read_tm_info(ibv_cq_ex* cq, ibv_wc_tm_info* info) {
    ExCq& ex = ex_of(cq);
    if (!ex.tent_entry) return ex.read_tm_info(cq, info);
    std::memset(info, 0, sizeof *info);
}

// Keeps the provider's polling functions of CQ and puts the interposer's
// in their place; a read the provider does not offer stays absent.
void take_over(ibv_cq_ex* cq) {
    ExCq* ex;
    {
        std::unique_lock lock(registry().mutex);
        auto& slot = registry().cqs[cq];
        if (!slot) slot = std::make_unique<ExCq>();
        ex = slot.get();
    }
#define TENT_CQ_EX_TAKE(name)                                                                                          \
    ex->name = cq->name;                                                                                               \
    if (cq->name) cq->name = name
    TENT_CQ_EX_TAKE(start_poll);
    TENT_CQ_EX_TAKE(next_poll);
    TENT_CQ_EX_TAKE(end_poll);
    TENT_CQ_EX_TAKE(read_opcode);
    TENT_CQ_EX_TAKE(read_vendor_err);
    TENT_CQ_EX_TAKE(read_byte_len);
    TENT_CQ_EX_TAKE(read_imm_data);
    TENT_CQ_EX_TAKE(read_qp_num);
    TENT_CQ_EX_TAKE(read_src_qp);
    TENT_CQ_EX_TAKE(read_wc_flags);
    TENT_CQ_EX_TAKE(read_slid);
    TENT_CQ_EX_TAKE(read_sl);
    TENT_CQ_EX_TAKE(read_dlid_path_bits);
    TENT_CQ_EX_TAKE(read_completion_ts);
    TENT_CQ_EX_TAKE(read_cvlan);
    TENT_CQ_EX_TAKE(read_flow_tag);
    TENT_CQ_EX_TAKE(read_tm_info);
    TENT_CQ_EX_TAKE(read_completion_wallclock_ns);
#undef TENT_CQ_EX_TAKE
}

ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr) {
    // The context table keeps the provider's, as it does its other ops.
    const ProviderOps* ops = provider_ops(context);
    CreateCqEx provider = ops ? ops->create_cq_ex : nullptr;
    if (!provider) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    ibv_cq_ex* cq = provider(context, attr);
    if (!cq) return cq;
    // A CQ without the polling functions (none the provider could give)
    // is left as it is: the program can only use ibv_poll_cq on it.
    if (!cq->start_poll || !cq->next_poll || !cq->end_poll) return cq;
    SignalsHeldOff held;  // the registry allocates (signals_held_off.h)
    take_over(cq);
    return cq;
}

} // namespace

CreateCqEx adopt_create_cq_ex(ibv_context* context) {
    verbs_context* vctx = verbs_get_ctx_op(context, create_cq_ex);
    if (!vctx || !vctx->create_cq_ex) return nullptr;
    CreateCqEx provider = vctx->create_cq_ex;
    vctx->create_cq_ex = create_cq_ex;
    return provider;
}

void release_create_cq_ex(ibv_context* context, CreateCqEx provider) {
    if (!provider) return;
    if (verbs_context* vctx = verbs_get_ctx_op(context, create_cq_ex)) vctx->create_cq_ex = provider;
}

} // namespace tent::interpose
