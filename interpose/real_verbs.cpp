#include "real_verbs.h"

#include <dlfcn.h>

#include <atomic>
#include <cerrno>

#include "activation.h"

namespace tent::interpose::real {

namespace {

// The real verb NAME, found once after libtent in the lookup order.
template <typename R, typename... A>
using Fn = R (*)(A...);

// Calls the real verb with the re-entry guard held (libibverbs calls some
// exported verbs itself); fails with ENOSYS if it does not exist, rather
// than crash the program.
template <typename R, typename... A>
R call(std::atomic<Fn<R, A...>>& slot, const char* name, R failed, A... args) {
    Fn<R, A...> fn = slot.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<Fn<R, A...>>(dlsym(RTLD_NEXT, name));
        if (!fn) {
            errno = ENOSYS;
            return failed;
        }
        slot.store(fn, std::memory_order_release);
    }
    TentScope scope;
    return fn(args...);
}

std::atomic<Fn<ibv_context*, ibv_device*>> g_open_device{nullptr};
std::atomic<Fn<int, ibv_context*>> g_close_device{nullptr};
std::atomic<Fn<ibv_qp*, ibv_pd*, ibv_qp_init_attr*>> g_create_qp{nullptr};
std::atomic<Fn<int, ibv_qp*, ibv_qp_attr*, int>> g_modify_qp{nullptr};
std::atomic<Fn<int, ibv_qp*>> g_destroy_qp{nullptr};
std::atomic<Fn<ibv_mr*, ibv_pd*, void*, size_t, int>> g_reg_mr{nullptr};
std::atomic<Fn<ibv_mr*, ibv_pd*, void*, size_t, uint64_t, int>> g_reg_mr_iova{nullptr};
std::atomic<Fn<ibv_mr*, ibv_pd*, void*, size_t, uint64_t, unsigned int>> g_reg_mr_iova2{nullptr};
std::atomic<Fn<int, ibv_mr*>> g_dereg_mr{nullptr};
std::atomic<Fn<ibv_comp_channel*, ibv_context*>> g_create_comp_channel{nullptr};
std::atomic<Fn<int, ibv_comp_channel*>> g_destroy_comp_channel{nullptr};
std::atomic<Fn<int, ibv_comp_channel*, ibv_cq**, void**>> g_get_cq_event{nullptr};
std::atomic<Fn<void, ibv_cq*, unsigned int>> g_ack_cq_events{nullptr};
std::atomic<Fn<int, ibv_context*, ibv_async_event*>> g_get_async_event{nullptr};
std::atomic<Fn<void, ibv_async_event*>> g_ack_async_event{nullptr};
std::atomic<Fn<int, ibv_srq*>> g_destroy_srq{nullptr};
std::atomic<Fn<int, ibv_srq*, ibv_srq_attr*, int>> g_modify_srq{nullptr};
std::atomic<Fn<int, ibv_srq*, ibv_srq_attr*>> g_query_srq{nullptr};

} // namespace

ibv_context* open_device(ibv_device* device) {
    return call(g_open_device, "ibv_open_device", static_cast<ibv_context*>(nullptr), device);
}
int close_device(ibv_context* context) { return call(g_close_device, "ibv_close_device", ENOSYS, context); }
ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
    return call(g_create_qp, "ibv_create_qp", static_cast<ibv_qp*>(nullptr), pd, attr);
}
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
    return call(g_modify_qp, "ibv_modify_qp", ENOSYS, qp, attr, attr_mask);
}
int destroy_qp(ibv_qp* qp) { return call(g_destroy_qp, "ibv_destroy_qp", ENOSYS, qp); }
int destroy_srq(ibv_srq* srq) { return call(g_destroy_srq, "ibv_destroy_srq", ENOSYS, srq); }
int modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int attr_mask) {
    return call(g_modify_srq, "ibv_modify_srq", ENOSYS, srq, attr, attr_mask);
}
int query_srq(ibv_srq* srq, ibv_srq_attr* attr) { return call(g_query_srq, "ibv_query_srq", ENOSYS, srq, attr); }
ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
    return call(g_reg_mr, "ibv_reg_mr", static_cast<ibv_mr*>(nullptr), pd, addr, length, access);
}
ibv_mr* reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
    return call(g_reg_mr_iova, "ibv_reg_mr_iova", static_cast<ibv_mr*>(nullptr), pd, addr, length, iova, access);
}
ibv_mr* reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access) {
    return call(g_reg_mr_iova2, "ibv_reg_mr_iova2", static_cast<ibv_mr*>(nullptr), pd, addr, length, iova, access);
}
int dereg_mr(ibv_mr* mr) { return call(g_dereg_mr, "ibv_dereg_mr", ENOSYS, mr); }
ibv_comp_channel* create_comp_channel(ibv_context* context) {
    return call(g_create_comp_channel, "ibv_create_comp_channel", static_cast<ibv_comp_channel*>(nullptr), context);
}
int destroy_comp_channel(ibv_comp_channel* channel) {
    return call(g_destroy_comp_channel, "ibv_destroy_comp_channel", ENOSYS, channel);
}
int get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
    return call(g_get_cq_event, "ibv_get_cq_event", -1, channel, cq, cq_context);
}
void ack_cq_events(ibv_cq* cq, unsigned int nevents) {
    Fn<void, ibv_cq*, unsigned int> fn = g_ack_cq_events.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<Fn<void, ibv_cq*, unsigned int>>(dlsym(RTLD_NEXT, "ibv_ack_cq_events"));
        if (!fn) return;
        g_ack_cq_events.store(fn, std::memory_order_release);
    }
    TentScope scope;
    fn(cq, nevents);
}

int get_async_event(ibv_context* context, ibv_async_event* event) {
    return call(g_get_async_event, "ibv_get_async_event", -1, context, event);
}
void ack_async_event(ibv_async_event* event) {
    Fn<void, ibv_async_event*> fn = g_ack_async_event.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<Fn<void, ibv_async_event*>>(dlsym(RTLD_NEXT, "ibv_ack_async_event"));
        if (!fn) return;
        g_ack_async_event.store(fn, std::memory_order_release);
    }
    TentScope scope;
    fn(event);
}

} // namespace tent::interpose::real
