#include "channel.h"

#include "merged_fd.h"
#include "runtime.h"
#include "signals_held_off.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace tent::interpose {

namespace {

struct ChannelState : MergedFd {  // epoll_fd is what the program sees as channel->fd
    std::deque<ibv_cq*> events;
    // Of those, queued without the eventfd's count (QuietEvents): taken
    // first, and counted on the eventfd before channel_event returns.
    unsigned quiet = 0;
};

struct CqState {
    bool armed = false;
    unsigned tent_events_unacked = 0;
};

std::mutex g_mu;
std::atomic<int> g_armed{0};  // CQs armed and not yet signalled
std::unordered_map<const ibv_comp_channel*, ChannelState>& channels() {
    static auto* m = new std::unordered_map<const ibv_comp_channel*, ChannelState>;  // until exit
    return *m;
}
std::unordered_map<const ibv_cq*, CqState>& cqs() {
    static auto* m = new std::unordered_map<const ibv_cq*, CqState>;  // until exit
    return *m;
}

// The channel this thread settles completions for inside channel_event
// (QuietEvents), or none.
thread_local const ibv_comp_channel* t_quiet_channel = nullptr;

} // namespace

bool adopt_channel(ibv_comp_channel* channel) {
    ChannelState st;
    if (!st.open(channel->fd)) return false;
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
    it->second.close();
    channels().erase(it);
}

namespace {

bool event_queued(const ibv_comp_channel* channel) {
    std::lock_guard lock(g_mu);
    auto it = channels().find(channel);
    return it != channels().end() && !it->second.events.empty();
}

// Counts CHANNEL's quiet events on its eventfd, so that the program's
// poll() of channel->fd sees them once channel_event has returned.
void count_quiet_events(const ibv_comp_channel* channel) {
    std::lock_guard lock(g_mu);
    auto it = channels().find(channel);
    if (it == channels().end()) return;
    for (; it->second.quiet > 0; --it->second.quiet) it->second.signal();
}

} // namespace

QuietEvents::QuietEvents(const ibv_comp_channel* channel) : previous_(t_quiet_channel) { t_quiet_channel = channel; }
QuietEvents::~QuietEvents() { t_quiet_channel = previous_; }

int channel_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context,
                  int (*provider_get)(ibv_comp_channel*, ibv_cq**, void**)) {
    MergedFd fds;
    {
        std::lock_guard lock(g_mu);
        auto it = channels().find(channel);
        if (it == channels().end()) return provider_get(channel, cq, cq_context);
        fds = it->second;
    }
    // The program may have made channel->fd non-blocking: then so is this.
    bool nonblocking = fds.nonblocking();
    struct CountQuiet {
        const ibv_comp_channel* channel;
        ~CountQuiet() { count_quiet_events(channel); }
    } count_quiet{channel};
    for (;;) {
        {
            SignalsHeldOff held;  // taking an event may free memory (signals_held_off.h)
            std::lock_guard lock(g_mu);
            auto it = channels().find(channel);
            if (it != channels().end() && !it->second.events.empty()) {
                if (it->second.quiet > 0)
                    --it->second.quiet;
                else
                    fds.take();
                *cq = it->second.events.front();
                it->second.events.pop_front();
                if (cq_context) *cq_context = (*cq)->cq_context;
                ++cqs()[*cq].tent_events_unacked;
                return 0;
            }
        }
        // Either member becoming readable wakes this; tent's events are
        // taken above, the provider's below. A blocking wait drives tent
        // meanwhile, so that a rail's completion wakes this thread itself.
        const WaitOutcome drove =
            nonblocking ? WaitOutcome::CannotDrive : drive_while_waiting(fds.epoll_fd, 100, channel);
        // Completions for other CQs (a busy transfer elsewhere) must not
        // keep the provider's events waiting: those are looked at below.
        if (drove == WaitOutcome::Settled && event_queued(channel)) continue;
        if (drove == WaitOutcome::CannotDrive && fds.wait(nonblocking) < 0) return -1;
        if (fds.provider_readable()) {
            // The provider reads its own fd: give it a copy of the channel
            // holding that fd.
            ibv_comp_channel copy = *channel;
            copy.fd = fds.provider_fd;
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
    if (!cq->channel || !channels().count(cq->channel)) return;
    CqState& c = cqs()[cq];
    if (!c.armed) g_armed.fetch_add(1, std::memory_order_relaxed);
    c.armed = true;
}

bool any_cq_armed() { return g_armed.load(std::memory_order_relaxed) > 0; }

void cq_completed(ibv_cq* cq) {
    std::lock_guard lock(g_mu);
    auto c = cqs().find(cq);
    if (c == cqs().end() || !c->second.armed) return;
    auto ch = channels().find(cq->channel);
    if (ch == channels().end()) return;
    c->second.armed = false;
    g_armed.fetch_sub(1, std::memory_order_relaxed);
    ch->second.events.push_back(cq);
    if (cq->channel == t_quiet_channel)
        ++ch->second.quiet;
    else
        ch->second.signal();
}

} // namespace tent::interpose
