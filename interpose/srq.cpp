// Shared receive queues: the provider creates them; ibv_post_srq_recv
// (inline in verbs.h, through the context's ops) reaches the interposer's
// dispatch, which holds the receives for the carried queue pairs attached
// to the queue (runtime.h). Destroying one forgets its shadow.
#include <infiniband/verbs.h>

#include "activation.h"
#include "real_verbs.h"
#include "runtime.h"

using namespace tent::interpose;

extern "C" __attribute__((visibility("default"))) int ibv_destroy_srq(ibv_srq* srq) {
    if (srq) forget_srq(srq);
    return real::destroy_srq(srq);
}
