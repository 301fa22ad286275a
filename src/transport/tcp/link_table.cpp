#include "transport/tcp/link_table.h"

namespace tent::tcp {

void LinkTable::watch(const std::string& address, const LinkState& now) {
    auto [it, inserted] = watched_.emplace(address, now);
    if (inserted && now.ifindex != 0) running_[now.ifindex] = now.running;
}

void LinkTable::update(const std::string& address, LinkState& state, const LinkState& next,
                       std::vector<LinkVerdict>& out) {
    const bool was = state.usable();
    state = next;
    if (was != state.usable()) out.push_back(LinkVerdict{address, was});
}

std::vector<LinkVerdict> LinkTable::apply(const LinkChange& change) {
    std::vector<LinkVerdict> out;
    switch (change.kind) {
    case LinkChange::Kind::Link:
        running_[change.ifindex] = change.running;
        for (auto& [address, state] : watched_) {
            if (state.ifindex != change.ifindex) continue;
            LinkState next = state;
            next.running = change.running;
            update(address, state, next, out);
        }
        break;
    case LinkChange::Kind::AddressAdded: {
        auto it = watched_.find(change.address);
        if (it == watched_.end()) break;
        // An interface never reported since the table started is taken as
        // running: its first Link event corrects that.
        auto known = running_.find(change.ifindex);
        LinkState next{change.ifindex, true, known == running_.end() || known->second};
        update(it->first, it->second, next, out);
        break;
    }
    case LinkChange::Kind::AddressRemoved: {
        auto it = watched_.find(change.address);
        // Removed from another interface than the one it is on: it stays.
        if (it == watched_.end() || it->second.ifindex != change.ifindex) break;
        LinkState next = it->second;
        next.present = false;
        update(it->first, it->second, next, out);
        break;
    }
    }
    return out;
}

std::vector<LinkVerdict> LinkTable::resync(const std::map<std::string, LinkState>& now) {
    std::vector<LinkVerdict> out;
    for (auto& [address, state] : watched_) {
        auto it = now.find(address);
        const LinkState next = it == now.end() ? LinkState{} : it->second;
        if (next.ifindex != 0) running_[next.ifindex] = next.running;
        update(address, state, next, out);
    }
    return out;
}

} // namespace tent::tcp
