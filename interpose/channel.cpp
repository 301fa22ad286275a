#include "channel.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace tent::interpose {

namespace {

struct ChannelState {
    int provider_fd = -1;
    int event_fd = -1;  // counts tent's events not yet taken
    int epoll_fd = -1;  // what the program sees as channel->fd
    std::deque<ibv_cq*> events;
};

struct CqState {
    bool armed = false;
    unsigned tent_events_unacked = 0;
};

std::mutex g_mu;
std::unordered_map<const ibv_comp_channel*, ChannelState>& channels() {
    static auto* m = new std::unordered_map<const ibv_comp_channel*, ChannelState>;  // until exit
    return *m;
}
std::unordered_map<const ibv_cq*, CqState>& cqs() {
    static auto* m = new std::unordered_map<const ibv_cq*, CqState>;  // until exit
    return *m;
}

} // namespace

bool adopt_channel(ibv_comp_channel* channel) {
    ChannelState st;
    st.provider_fd = channel->fd;
    st.event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
    st.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (st.event_fd < 0 || st.epoll_fd < 0 || epoll_ctl(st.epoll_fd, EPOLL_CTL_ADD, st.event_fd, &ev) != 0 ||
        epoll_ctl(st.epoll_fd, EPOLL_CTL_ADD, st.provider_fd, &ev) != 0) {
        if (st.event_fd >= 0) close(st.event_fd);
        if (st.epoll_fd >= 0) close(st.epoll_fd);
        return false;
    }
    std::lock_guard lock(g_mu);
    channel->fd = st.epoll_fd;
    channels()[channel] = st;
    return true;
}

void release_channel(ibv_comp_channel* channel) {
    std::lock_guard lock(g_mu);
    auto it = channels().find(channel);
    if (it == channels().end()) return;
    channel->fd = it->second.provider_fd;
    close(it->second.epoll_fd);
    close(it->second.event_fd);
    channels().erase(it);
}

int channel_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context,
                  int (*provider_get)(ibv_comp_channel*, ibv_cq**, void**)) {
    int epoll_fd, provider_fd, event_fd;
    {
        std::lock_guard lock(g_mu);
        auto it = channels().find(channel);
        if (it == channels().end()) return provider_get(channel, cq, cq_context);
        epoll_fd = it->second.epoll_fd;
        provider_fd = it->second.provider_fd;
        event_fd = it->second.event_fd;
    }
    // The program may have made channel->fd non-blocking: then so is this.
    bool nonblocking = (fcntl(epoll_fd, F_GETFL) & O_NONBLOCK) != 0;
    for (;;) {
        {
            std::lock_guard lock(g_mu);
            auto it = channels().find(channel);
            if (it != channels().end() && !it->second.events.empty()) {
                std::uint64_t one;
                ssize_t got = read(event_fd, &one, sizeof one);  // one count per queued event
                (void)got;
                *cq = it->second.events.front();
                it->second.events.pop_front();
                if (cq_context) *cq_context = (*cq)->cq_context;
                ++cqs()[*cq].tent_events_unacked;
                return 0;
            }
        }
        // Either member becoming readable wakes this; tent's events are
        // taken above, the provider's below.
        epoll_event ev[2];
        int n = epoll_wait(epoll_fd, ev, 2, nonblocking ? 0 : 100);
        if (n < 0 && errno != EINTR) return -1;
        if (n == 0 && nonblocking) {
            errno = EAGAIN;
            return -1;
        }
        pollfd p{provider_fd, POLLIN, 0};
        if (poll(&p, 1, 0) == 1) {
            // The provider reads its own fd: give it a copy of the channel
            // holding that fd.
            ibv_comp_channel copy = *channel;
            copy.fd = provider_fd;
            return provider_get(&copy, cq, cq_context);
        }
    }
}

unsigned provider_acks(ibv_cq* cq, unsigned nevents) {
    std::lock_guard lock(g_mu);
    auto it = cqs().find(cq);
    if (it == cqs().end()) return nevents;
    unsigned mine = std::min(nevents, it->second.tent_events_unacked);
    it->second.tent_events_unacked -= mine;
    return nevents - mine;
}

void cq_armed(ibv_cq* cq) {
    std::lock_guard lock(g_mu);
    if (cq->channel && channels().count(cq->channel)) cqs()[cq].armed = true;
}

void cq_completed(ibv_cq* cq) {
    std::lock_guard lock(g_mu);
    auto c = cqs().find(cq);
    if (c == cqs().end() || !c->second.armed) return;
    auto ch = channels().find(cq->channel);
    if (ch == channels().end()) return;
    c->second.armed = false;
    ch->second.events.push_back(cq);
    std::uint64_t one = 1;
    ssize_t put = write(ch->second.event_fd, &one, sizeof one);  // only fails if the count overflows
    (void)put;
}

} // namespace tent::interpose
