#include "transport/tcp/rail_token_book.h"

#include <algorithm>

#include "common/crypto.h"

namespace tent::tcp {

void RailTokenBook::forget_expired(TimePoint now) {
    std::erase_if(entries_, [now](const auto& e) { return e.second.expires <= now; });
}

void RailTokenBook::enter(std::uint64_t connection_id, std::span<const wire::RailToken> tokens, TimePoint now) {
    forget_expired(now);
    for (const wire::RailToken& t : tokens) {
        if (entries_.size() >= kMaxEntries) {
            auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
                return a.second.order < b.second.order;
            });
            entries_.erase(oldest);
        }
        // A connection id names one connection: entering it again (never
        // done by a peer that proved itself twice) replaces its tokens.
        entries_[{connection_id, t.rail_id}] = Entry{t, now + lifetime_, next_order_++, false};
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
