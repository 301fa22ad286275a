#include "tcp_poller.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <set>

namespace tent::tcp {

Result<TcpPoller> TcpPoller::create(const Clock& clock) {
    UniqueFd fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!fd.valid()) return Status::from_errno(errno, "epoll_create1");
    return TcpPoller(std::move(fd), clock);
}

Status TcpPoller::add(TcpRail* rail) {
    if (rail == nullptr || rail->wait_fd() < 0) return Status(Code::InvalidArgument, "tcp poller: no rail socket");
    auto [it, inserted] = rails_.emplace(rail, Entry{});
    if (!inserted) return Status(Code::AlreadyExists, "tcp poller: rail " + rail->name() + " already added");
    if (Status s = update_interest(rail, it->second); !s) {
        rails_.erase(it);
        return s;
    }
    return Status::ok();
}

void TcpPoller::remove(TcpRail* rail) {
    auto it = rails_.find(rail);
    if (it == rails_.end()) return;
    if (it->second.in_epoll) (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, rail->wait_fd(), nullptr);
    rails_.erase(it);
}

Status TcpPoller::update_interest(TcpRail* rail, Entry& entry) {
    // A closed rail's socket is shut down and readable forever: leave it out.
    if (!rail->is_open()) {
        if (entry.in_epoll) (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, rail->wait_fd(), nullptr);
        entry.in_epoll = false;
        return Status::ok();
    }
    const std::uint32_t want = EPOLLIN | EPOLLRDHUP | (rail->wants_write() ? EPOLLOUT : 0u);
    if (entry.in_epoll && entry.events == want) return Status::ok();
    epoll_event ev{};
    ev.events = want;
    ev.data.ptr = rail;
    if (::epoll_ctl(epoll_.get(), entry.in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, rail->wait_fd(), &ev) != 0)
        return Status::from_errno(errno, "epoll_ctl for tcp rail " + rail->name());
    entry.in_epoll = true;
    entry.events = want;
    return Status::ok();
}

Result<std::vector<TcpRail*>> TcpPoller::wait(Duration timeout) {
    std::vector<TcpRail*> ready;
    TimePoint now = clock_->now();
    TimePoint wake = now + timeout;
    for (auto& [rail, entry] : rails_) {
        if (Status s = update_interest(rail, entry); !s) return s;
        if (rail->has_completions() || (rail->is_open() && rail->next_timer() <= now)) ready.push_back(rail);
        else if (rail->is_open()) wake = std::min(wake, rail->next_timer());
    }
    // Work already waiting: only collect socket events that are ready now.
    int wait_ms = 0;
    if (ready.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now);
        // Round up, so a timer never fires a millisecond early and spins.
        if (wake - now > std::chrono::duration_cast<Duration>(left)) left += std::chrono::milliseconds(1);
        wait_ms = static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
    }
    epoll_event events[64];
    int n = ::epoll_wait(epoll_.get(), events, 64, wait_ms);
    if (n < 0 && errno != EINTR) return Status::from_errno(errno, "epoll_wait");
    std::set<TcpRail*> seen(ready.begin(), ready.end());
    for (int i = 0; i < n; ++i) {
        auto* rail = static_cast<TcpRail*>(events[i].data.ptr);
        if (seen.insert(rail).second) ready.push_back(rail);
    }
    // Timers that came due while waiting.
    now = clock_->now();
    for (auto& [rail, entry] : rails_)
        if (rail->is_open() && rail->next_timer() <= now && seen.insert(rail).second) ready.push_back(rail);
    return ready;
}

} // namespace tent::tcp
