#include "async_events.h"

#include "merged_fd.h"
#include "signals_held_off.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace tent::interpose {

namespace {

struct Queue : MergedFd {
    std::deque<ibv_async_event> events;
};

std::mutex g_mu;
std::unordered_map<const ibv_context*, Queue>& queues() {
    static auto* m = new std::unordered_map<const ibv_context*, Queue>;  // until exit
    return *m;
}
// QPs and SRQs with a raised event not yet acknowledged.
std::unordered_multiset<const void*>& raised() {
    static auto* s = new std::unordered_multiset<const void*>;  // until exit
    return *s;
}

void raise(ibv_context* context, const ibv_async_event& ev, const void* element) {
    std::lock_guard lock(g_mu);
    auto it = queues().find(context);
    if (it == queues().end()) return;
    it->second.events.push_back(ev);
    raised().insert(element);
    it->second.signal();
}

} // namespace

void adopt_async_fd(ibv_context* context) {
    Queue q;
    if (!q.open(context->async_fd)) return;  // the context keeps its own fd: no event of the interposer's
    std::lock_guard lock(g_mu);
    context->async_fd = q.epoll_fd;
    queues()[context] = q;
}

void release_async_fd(ibv_context* context) {
    std::lock_guard lock(g_mu);
    auto it = queues().find(context);
    if (it == queues().end()) return;
    context->async_fd = it->second.provider_fd;
    it->second.close();
    queues().erase(it);
}

void raise_qp_fatal(ibv_qp* qp) {
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_QP_FATAL;
    ev.element.qp = qp;
    raise(qp->context, ev, qp);
}

void raise_qp_last_wqe(ibv_qp* qp) {
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
    ev.element.qp = qp;
    raise(qp->context, ev, qp);
}

void raise_srq_limit(ibv_srq* srq) {
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
    ev.element.srq = srq;
    raise(srq->context, ev, srq);
}

int async_event(ibv_context* context, ibv_async_event* event, int (*get)(ibv_context*, ibv_async_event*)) {
    MergedFd fds;
    {
        std::lock_guard lock(g_mu);
        auto it = queues().find(context);
        if (it == queues().end()) return get(context, event);
        fds = it->second;
    }
    bool nonblocking = fds.nonblocking();
    for (;;) {
        {
            SignalsHeldOff held;  // taking an event may free memory (signals_held_off.h)
            std::lock_guard lock(g_mu);
            auto it = queues().find(context);
            if (it != queues().end() && !it->second.events.empty()) {
                fds.take();
                *event = it->second.events.front();
                it->second.events.pop_front();
                return 0;
            }
        }
        if (fds.provider_readable()) {
            // The provider reads context->async_fd: give it its own for the call.
            {
                std::lock_guard lock(g_mu);
                context->async_fd = fds.provider_fd;
            }
            int rc = get(context, event);
            std::lock_guard lock(g_mu);
            context->async_fd = fds.epoll_fd;
            return rc;
        }
        // Either member becoming readable wakes this.
        if (fds.wait(nonblocking) < 0) return -1;
    }
}

bool own_event(const ibv_async_event* event) {
    const void* element;
    if (event->event_type == IBV_EVENT_QP_FATAL) element = event->element.qp;
    else if (event->event_type == IBV_EVENT_SRQ_LIMIT_REACHED) element = event->element.srq;
    else return false;
    SignalsHeldOff held;
    std::lock_guard lock(g_mu);
    auto it = raised().find(element);
    if (it == raised().end()) return false;
    raised().erase(it);
    return true;
}

} // namespace tent::interpose
