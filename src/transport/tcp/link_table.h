// LinkTable: which local addresses of TCP rails the kernel's link and
// address events take down or bring back. Pure: it is fed decoded events
// (link_watch.h reads them from rtnetlink) and answers with verdicts; no
// socket, no clock, unit-tested on its own.
//
// An address is usable while it is present on its interface and that
// interface is up and running (IFF_UP and IFF_RUNNING: administratively up
// with a carrier). Only watched addresses (the local ends of rails) give
// verdicts, and only on a change: the first event that makes a usable
// address unusable gives Down, the first that makes it usable again gives
// Up. The TCP provider turns them into the engine's port events
// (AsyncEvent::PortError / PortActive on device = the address, port 0), so
// that the health layer pauses every rail through the address at once and
// holds them paused until the link returns.
//
//   LinkTable t;
//   t.watch("10.0.1.2", LinkState{.ifindex = 3, .present = true, .running = true});
//   t.apply(LinkChange{LinkChange::Kind::Link, 3, false, ""});  // -> {"10.0.1.2", Down}
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tent::tcp {

// One decoded kernel event.
struct LinkChange {
    enum class Kind {
        Link,            // RTM_NEWLINK / RTM_DELLINK: `running` is the interface's state
        AddressAdded,    // RTM_NEWADDR of `address` on `ifindex`
        AddressRemoved,  // RTM_DELADDR of `address` from `ifindex`
    };
    Kind kind = Kind::Link;
    int ifindex = 0;
    bool running = false;  // Link: IFF_UP and IFF_RUNNING (false for RTM_DELLINK)
    std::string address;   // AddressAdded/Removed: dotted IPv4
};

// What the table knows of a watched address.
struct LinkState {
    int ifindex = 0;       // 0: not on any interface (then never usable)
    bool present = false;  // the address is assigned
    bool running = false;  // its interface is up and running
    bool usable() const { return ifindex != 0 && present && running; }
};

struct LinkVerdict {
    std::string address;
    bool down = false;  // true: Down (pause its rails); false: Up (they may come back)
    bool operator==(const LinkVerdict&) const = default;
};

class LinkTable {
public:
    // Starts watching `address` with its state as the caller found it (no
    // verdict: a rail was just made through it). Watching again keeps the
    // state already known.
    void watch(const std::string& address, const LinkState& now);
    bool watching(const std::string& address) const { return watched_.count(address) != 0; }
    const std::map<std::string, LinkState>& watched() const { return watched_; }

    // The verdicts one event gives, in address order.
    std::vector<LinkVerdict> apply(const LinkChange& change);
    // A fresh look at every watched address (after the kernel dropped
    // events: ENOBUFS): verdicts for those whose usability changed.
    std::vector<LinkVerdict> resync(const std::map<std::string, LinkState>& now);

private:
    // Replaces one address's state; a verdict when usability changed.
    void update(const std::string& address, LinkState& state, const LinkState& next, std::vector<LinkVerdict>& out);

    std::map<std::string, LinkState> watched_;
    std::map<int, bool> running_;  // last Link event per interface
};

} // namespace tent::tcp
