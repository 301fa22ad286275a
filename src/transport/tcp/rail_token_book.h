// The rail tokens a responder honours (wire/auth_handshake.h): entered when
// a control connection's Proof is right, each taken at most once, by the
// TCP rail socket that names the same connection and rail and shows the
// initiator's token (compared in constant time). A token not taken within
// the connect timeout expires. Pure: time is passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <utility>

#include "common/clock.h"
#include "common/status.h"
#include "wire/auth_handshake.h"

namespace tent::tcp {

class RailTokenBook {
public:
    // Bounds the book whatever peers do: the oldest entries go first.
    static constexpr std::size_t kMaxEntries = 4096;

    explicit RailTokenBook(Duration lifetime) : lifetime_(lifetime) {}

    // The tokens of a connection whose peer just proved the job's key.
    void enter(std::uint64_t connection_id, std::span<const wire::RailToken> tokens, TimePoint now);
    // The responder's token to show when `shown` is the token entered for
    // this connection and rail, which is spent from then on. Busy when no
    // token is known for them (yet: the control connection's Proof may
    // still be on its way); an error when the token is wrong, spent or
    // expired.
    Result<wire::RailTokenBytes> take(std::uint64_t connection_id, std::uint16_t rail_id,
                                      const wire::RailTokenBytes& shown, TimePoint now);

private:
    // The unit test counts the entries and the expiry records (at most
    // 2 * kMaxEntries); nothing else needs to.
    friend struct RailTokenBookInspector;

    using Key = std::pair<std::uint64_t, std::uint16_t>;
    struct Entry {
        wire::RailToken token;
        TimePoint expires;
        std::uint64_t order = 0;
        bool spent = false;
    };
    struct Aged {
        TimePoint expires;
        Key key;
        std::uint64_t order;  // the entry's, unless it was entered again since
    };
    void forget_expired(TimePoint now);
    // Drops the oldest entry still in the book.
    void forget_oldest();
    // Pops the oldest record (by_age_ not empty) and erases its entry
    // unless that was entered again since; whether it erased one.
    bool drop_oldest_record();

    Duration lifetime_;
    std::uint64_t next_order_ = 0;
    std::map<Key, Entry> entries_;
    // Every entry in the order entered, which with one lifetime for all is
    // the order they expire: each call looks only at what is due, rather
    // than at the whole book (thousands of spent tokens wait out their
    // lifetime while connections come and go).
    std::deque<Aged> by_age_;
};

} // namespace tent::tcp
