// TcpPoller (tests only): one epoll descriptor for many TCP rails, driven
// by nothing but the rail's waiting contract, so that tests check that
// contract (the engine's drive loop polls by the same calls). wait()
// sleeps until some rail has work -- its socket is readable, writable
// while it has queued bytes, hung up, or one of its timers (heartbeat,
// silence) is due -- and returns those rails; the caller
// then runs progress() on each. Rails are not owned and must be removed
// before they are destroyed. Not thread-safe: one progress thread uses it.
//
//   auto poller = TcpPoller::create();
//   poller->add(rail.get());
//   for (TcpRail* r : *poller->wait(std::chrono::milliseconds(10)))
//       r->progress(done, on_message);
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/tcp/tcp_rail.h"
#include "common/unique_fd.h"

namespace tent::tcp {

class TcpPoller {
public:
    static Result<TcpPoller> create(const Clock& clock = SteadyClock::instance());

    Status add(TcpRail* rail);
    void remove(TcpRail* rail);
    std::size_t size() const { return rails_.size(); }
    // The epoll descriptor itself, readable when wait() would return at once
    // for socket activity (for nesting in a larger event loop).
    int fd() const { return epoll_.get(); }

    // Rails that need progress(), waiting at most `timeout` for one. A closed
    // rail is returned while it has completions to hand out, then dropped
    // from the epoll set (it stays registered until remove()).
    Result<std::vector<TcpRail*>> wait(Duration timeout);

private:
    struct Entry {
        std::uint32_t events = 0; // interest currently registered with epoll
        bool in_epoll = false;
    };

    TcpPoller(UniqueFd epoll, const Clock& clock) : epoll_(std::move(epoll)), clock_(&clock) {}
    Status update_interest(TcpRail* rail, Entry& entry);

    UniqueFd epoll_;
    const Clock* clock_;
    std::map<TcpRail*, Entry> rails_;
};

} // namespace tent::tcp
