// Shared receive queues: the provider creates them; ibv_post_srq_recv
// (inline in verbs.h, through the context's ops) reaches the interposer's
// dispatch, which holds the receives for the carried queue pairs attached
// to the queue (runtime.h). Its limit (IBV_SRQ_LIMIT) is armed over the
// receives held there. Destroying one forgets its shadow.
#include <infiniband/verbs.h>

#include "activation.h"
#include "real_verbs.h"
#include "runtime.h"
#include "signals_held_off.h"

using namespace tent::interpose;

extern "C" __attribute__((visibility("default"))) int ibv_destroy_srq(ibv_srq* srq) {
    if (srq) {
        SignalsHeldOff held;  // the interposer's bookkeeping allocates (signals_held_off.h)
        forget_srq(srq);
    }
    return real::destroy_srq(srq);
}

extern "C" __attribute__((visibility("default"))) int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr,
                                                                     int attr_mask) {
    if (!srq || !attr) return real::modify_srq(srq, attr, attr_mask);
    SignalsHeldOff held;
    return shadow_modify_srq(srq, attr, attr_mask, real::modify_srq);
}

extern "C" __attribute__((visibility("default"))) int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
    if (!srq || !attr) return real::query_srq(srq, attr);
    SignalsHeldOff held;
    return shadow_query_srq(srq, attr, real::query_srq);
}
