// Memory-region verbs: the region is the provider's; the interposer notes
// where it lies, so that carried queue pairs can hand it to tent (and the
// peer's tent can be given its key).
#include <infiniband/verbs.h>

#include "activation.h"
#include "memory.h"
#include "real_verbs.h"
#include "runtime.h"
#include "signals_held_off.h"

using namespace tent::interpose;

// verbs.h turns ibv_reg_mr() into a call of this (IBVERBS_1.1) or of
// ibv_reg_mr_iova2 (IBVERBS_1.8), depending on the access flags.
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

extern "C" __attribute__((visibility("default"))) ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length,
                                                                     int access) {
    bool act = acting();
    ibv_mr* mr = real::reg_mr(pd, addr, length, access);
    if (mr && act) {
        SignalsHeldOff held;  // the interposer's bookkeeping allocates (signals_held_off.h)
        mr_registered(mr, reinterpret_cast<std::uintptr_t>(addr), access);
    }
    return mr;
}

extern "C" __attribute__((visibility("default"))) ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length,
                                                                          uint64_t iova, int access) {
    bool act = acting();
    ibv_mr* mr = real::reg_mr_iova(pd, addr, length, iova, access);
    if (mr && act) {
        SignalsHeldOff held;
        mr_registered(mr, iova, access);
    }
    return mr;
}

extern "C" __attribute__((visibility("default"))) ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length,
                                                                           uint64_t iova, unsigned int access) {
    bool act = acting();
    ibv_mr* mr = real::reg_mr_iova2(pd, addr, length, iova, access);
    if (mr && act) {
        SignalsHeldOff held;
        mr_registered(mr, iova, static_cast<int>(access));
    }
    return mr;
}

extern "C" __attribute__((visibility("default"))) int ibv_dereg_mr(ibv_mr* mr) {
    if (mr) {
        SignalsHeldOff held;
        forget_mr(mr);
    }
    return real::dereg_mr(mr);
}
