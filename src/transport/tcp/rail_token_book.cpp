#include "transport/tcp/rail_token_book.h"

#include <algorithm>

#include "common/crypto.h"

namespace tent::tcp {

bool RailTokenBook::drop_oldest_record() {
    const Aged a = by_age_.front();
    by_age_.pop_front();
    auto it = entries_.find(a.key);
    if (it == entries_.end() || it->second.order != a.order) return false;  // entered again since
    entries_.erase(it);
    return true;
}

void RailTokenBook::forget_expired(TimePoint now) {
    // Bounded by the records entered: each round drops one.
    while (!by_age_.empty() && by_age_.front().expires <= now) drop_oldest_record();
}

void RailTokenBook::forget_oldest() {
    // Bounded by the records entered: each round drops one.
    while (!by_age_.empty() && !drop_oldest_record()) {
    }
}

void RailTokenBook::enter(std::uint64_t connection_id, std::span<const wire::RailToken> tokens, TimePoint now) {
    forget_expired(now);
    for (const wire::RailToken& t : tokens) {
        if (entries_.size() >= kMaxEntries) forget_oldest();
        // A connection id names one connection: entering it again (never
        // done by a peer that proved itself twice) replaces its tokens.
        const Key key{connection_id, t.rail_id};
        const std::uint64_t order = next_order_++;
        entries_[key] = Entry{t, now + lifetime_, order, false};
        by_age_.push_back(Aged{now + lifetime_, key, order});
    }
    // Records of entries entered again since are dropped only when due:
    // rebuilt from the book when they outnumber it, so the records stay
    // bounded whatever a peer enters.
    if (by_age_.size() > 2 * kMaxEntries) {
        by_age_.clear();
        for (const auto& [key, e] : entries_) by_age_.push_back(Aged{e.expires, key, e.order});
        std::sort(by_age_.begin(), by_age_.end(), [](const Aged& a, const Aged& b) { return a.order < b.order; });
    }
}

Result<wire::RailTokenBytes> RailTokenBook::take(std::uint64_t connection_id, std::uint16_t rail_id,
                                                 const wire::RailTokenBytes& shown, TimePoint now) {
    forget_expired(now);
    auto it = entries_.find({connection_id, rail_id});
    if (it == entries_.end()) return Status(Code::Busy, "no rail token for this connection and rail (yet)");
    Entry& e = it->second;
    if (e.spent) return Status(Code::PeerUnreachable, "authentication failed: this rail token was already used");
    if (!equal_in_constant_time(e.token.from_initiator, shown))
        return Status(Code::PeerUnreachable, "authentication failed: a wrong rail token");
    // Spent, not erased: a replay until it expires is refused at once.
    e.spent = true;
    return e.token.from_responder;
}

} // namespace tent::tcp
