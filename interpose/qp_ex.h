// ibv_create_qp_ex and the ibv_wr_* posting API of adopted contexts.
// ibv_create_qp_ex is inline in verbs.h and calls the context's
// verbs_context.create_qp_ex, which the interposer takes over; an RC QP it
// creates is a candidate like one from ibv_create_qp, and its ibv_qp_ex
// posting functions become the interposer's, which build ibv_send_wr lists
// and post them as ibv_post_send would.
#pragma once

#include <infiniband/verbs.h>

#include <deque>
#include <vector>

namespace tent::interpose {

// Takes over CONTEXT's create_qp_ex (if it has one); returns the provider's.
using CreateQpEx = ibv_qp* (*)(ibv_context*, ibv_qp_init_attr_ex*);
CreateQpEx adopt_create_qp_ex(ibv_context* context);
// Gives it back.
void release_create_qp_ex(ibv_context* context, CreateQpEx provider);

// Work requests built between ibv_wr_start and ibv_wr_complete.
struct WrBuilder {
    struct Built {
        ibv_send_wr wr{};
        std::vector<ibv_sge> sge;
        std::vector<unsigned char> inline_data;
    };
    // The first `used` are the work requests being built. The others stay
    // from earlier lists and are reused, so that building allocates only
    // while the program's lists grow (async_signals.h: allocating on the
    // program's thread, signals are held off).
    std::deque<Built> wrs;  // stable addresses while linked
    std::size_t used = 0;
};

} // namespace tent::interpose
