// ibv_create_cq_ex and the extended polling API (ibv_start_poll,
// ibv_next_poll, ibv_end_poll, ibv_wc_read_*) of adopted contexts.
// ibv_create_cq_ex is inline in verbs.h and calls the context's
// verbs_context.create_cq_ex, which the interposer takes over: the CQ is
// the provider's, with its polling functions replaced by the interposer's.
// A poll returns tent's completions for carried queue pairs first, then the
// provider's, as ibv_poll_cq does (dispatch_poll_cq); a poll that started
// on tent's moves on to the provider's once tent has no more.
#pragma once

#include <infiniband/verbs.h>

namespace tent::interpose {

// Takes over CONTEXT's create_cq_ex (if it has one); returns the provider's.
using CreateCqEx = ibv_cq_ex* (*)(ibv_context*, ibv_cq_init_attr_ex*);
CreateCqEx adopt_create_cq_ex(ibv_context* context);
// Gives it back.
void release_create_cq_ex(ibv_context* context, CreateCqEx provider);

} // namespace tent::interpose
