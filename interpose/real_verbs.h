// The real verbs behind the wrappers: the next definition after libtent in
// the lookup order (libibverbs, or simverbs in tests), found once.
#pragma once

#include <infiniband/verbs.h>

namespace tent::interpose::real {

ibv_context* open_device(ibv_device* device);
int close_device(ibv_context* context);
ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr);
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask);
int destroy_qp(ibv_qp* qp);

} // namespace tent::interpose::real
