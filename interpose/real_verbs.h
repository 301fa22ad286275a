// The real verbs behind the wrappers: the next definition after libtent in
// the lookup order (libibverbs, or simverbs in tests), found once.
#pragma once

#include <infiniband/verbs.h>

// verbs.h makes ibv_reg_mr a macro; the real function is meant here.
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

namespace tent::interpose::real {

ibv_context* open_device(ibv_device* device);
int close_device(ibv_context* context);
ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr);
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask);
int destroy_qp(ibv_qp* qp);
ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access);
ibv_mr* reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access);
ibv_mr* reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access);
int dereg_mr(ibv_mr* mr);
ibv_comp_channel* create_comp_channel(ibv_context* context);
int destroy_comp_channel(ibv_comp_channel* channel);
int get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context);
void ack_cq_events(ibv_cq* cq, unsigned int nevents);
int get_async_event(ibv_context* context, ibv_async_event* event);
void ack_async_event(ibv_async_event* event);
int destroy_srq(ibv_srq* srq);
int modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int attr_mask);
int query_srq(ibv_srq* srq, ibv_srq_attr* attr);

} // namespace tent::interpose::real
