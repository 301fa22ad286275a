#include "async_events.h"

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

struct Queue {
    int provider_fd = -1;
    int event_fd = -1;
    int epoll_fd = -1;
    std::deque<ibv_async_event> events;
};

std::mutex g_mu;
std::unordered_map<const ibv_context*, Queue>& queues() {
    static auto* m = new std::unordered_map<const ibv_context*, Queue>;  // until exit
    return *m;
}
// QPs with a raised event not yet acknowledged.
std::unordered_multiset<const ibv_qp*>& raised() {
    static auto* s = new std::unordered_multiset<const ibv_qp*>;  // until exit
    return *s;
}

} // namespace

void adopt_async_fd(ibv_context* context) {
    Queue q;
    q.provider_fd = context->async_fd;
    q.event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
    q.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (q.event_fd < 0 || q.epoll_fd < 0 || epoll_ctl(q.epoll_fd, EPOLL_CTL_ADD, q.event_fd, &ev) != 0 ||
        epoll_ctl(q.epoll_fd, EPOLL_CTL_ADD, q.provider_fd, &ev) != 0) {
        if (q.event_fd >= 0) close(q.event_fd);
        if (q.epoll_fd >= 0) close(q.epoll_fd);
        return;  // the context keeps its own fd: no event of the interposer's
    }
    std::lock_guard lock(g_mu);
    context->async_fd = q.epoll_fd;
    queues()[context] = q;
}

void release_async_fd(ibv_context* context) {
    std::lock_guard lock(g_mu);
    auto it = queues().find(context);
    if (it == queues().end()) return;
    context->async_fd = it->second.provider_fd;
    close(it->second.epoll_fd);
    close(it->second.event_fd);
    queues().erase(it);
}

void raise_qp_fatal(ibv_qp* qp) {
    std::lock_guard lock(g_mu);
    auto it = queues().find(qp->context);
    if (it == queues().end()) return;
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_QP_FATAL;
    ev.element.qp = qp;
    it->second.events.push_back(ev);
    raised().insert(qp);
    std::uint64_t one = 1;
    ssize_t put = write(it->second.event_fd, &one, sizeof one);  // only fails if the count overflows
    (void)put;
}

int async_event(ibv_context* context, ibv_async_event* event, int (*get)(ibv_context*, ibv_async_event*)) {
    int epoll_fd, provider_fd, event_fd;
    {
        std::lock_guard lock(g_mu);
        auto it = queues().find(context);
        if (it == queues().end()) return get(context, event);
        epoll_fd = it->second.epoll_fd;
        provider_fd = it->second.provider_fd;
        event_fd = it->second.event_fd;
    }
    bool nonblocking = (fcntl(epoll_fd, F_GETFL) & O_NONBLOCK) != 0;
    for (;;) {
        {
            std::lock_guard lock(g_mu);
            auto it = queues().find(context);
            if (it != queues().end() && !it->second.events.empty()) {
                std::uint64_t one;
                ssize_t got = read(event_fd, &one, sizeof one);  // one count per queued event
                (void)got;
                *event = it->second.events.front();
                it->second.events.pop_front();
                return 0;
            }
        }
        pollfd p{provider_fd, POLLIN, 0};
        if (poll(&p, 1, 0) == 1) {
            // The provider reads context->async_fd: give it its own for the call.
            {
                std::lock_guard lock(g_mu);
                context->async_fd = provider_fd;
            }
            int rc = get(context, event);
            std::lock_guard lock(g_mu);
            context->async_fd = epoll_fd;
            return rc;
        }
        // Either member becoming readable wakes this.
        epoll_event ev[2];
        int n = epoll_wait(epoll_fd, ev, 2, nonblocking ? 0 : 100);
        if (n < 0 && errno != EINTR) return -1;
        if (n == 0 && nonblocking) {
            errno = EAGAIN;
            return -1;
        }
    }
}

bool own_event(const ibv_async_event* event) {
    if (event->event_type != IBV_EVENT_QP_FATAL) return false;
    std::lock_guard lock(g_mu);
    auto it = raised().find(event->element.qp);
    if (it == raised().end()) return false;
    raised().erase(it);
    return true;
}

} // namespace tent::interpose
