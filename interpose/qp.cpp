// Queue-pair verbs: an RC QP the application creates on an adopted context
// becomes a candidate for tent (the real QP is created all the same and
// stays what the program sees); ibv_modify_qp to RTR starts looking for the
// peer, without waiting for it. Every other QP (UD, XRC, raw) passes
// through untouched, and a shared receive queue it uses passes through too.
#include <infiniband/verbs.h>

#include "activation.h"
#include "common/log.h"
#include "context_table.h"
#include "real_verbs.h"
#include "runtime.h"
#include "signals_held_off.h"

using namespace tent::interpose;

extern "C" __attribute__((visibility("default"))) ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
    bool act = acting() && pd && attr && provider_ops(pd->context);
    ibv_qp* qp = real::create_qp(pd, attr);
    if (!qp || !act) return qp;
    SignalsHeldOff held;  // the interposer's bookkeeping allocates (signals_held_off.h)
    provider_qp_created(qp);
    if (attr->qp_type != IBV_QPT_RC) {
        if (attr->srq) srq_goes_plain(attr->srq);  // the adapter must see its receives
        return qp;
    }
    track_qp(qp, *attr);
    return qp;
}

extern "C" __attribute__((visibility("default"))) int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
    int rc = real::modify_qp(qp, attr, attr_mask);
    if (rc == 0 && attr && acting()) {
        SignalsHeldOff held;
        qp_modified(qp, *attr, attr_mask);
    }
    return rc;
}

extern "C" __attribute__((visibility("default"))) int ibv_destroy_qp(ibv_qp* qp) {
    if (qp) {
        SignalsHeldOff held;
        forget_qp(qp);
    }
    return real::destroy_qp(qp);
}
