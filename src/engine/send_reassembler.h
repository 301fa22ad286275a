// SendReassembler: turns fragments of two-sided messages, arriving in any
// order over any rail and possibly more than once (replay after a failure),
// into whole messages released strictly in sequence order, each exactly once.
// Pure state, no I/O, no locks: the engine's progress thread owns one per
// connection.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/send_header.h"

namespace tent {

class SendReassembler {
public:
    // Largest message accepted, so a corrupt header cannot make us allocate
    // without bound.
    explicit SendReassembler(std::uint64_t max_message = std::uint64_t{1} << 32) : max_message_(max_message) {}

    // One fragment. Duplicates (a message already released, or a fragment
    // already held) are ignored and return ok. A fragment that contradicts
    // what is known about its message is an error.
    Status add(const SendHeader& header, std::span<const std::uint8_t> payload);

    // The next message in order if it is complete, else nullptr. Stays
    // valid until pop_ready() or add().
    const std::vector<std::uint8_t>* ready() const;
    // Releases the message ready() returned.
    void pop_ready();

    // Whether `header` with `payload_length` bytes is a whole message that
    // is next in order with nothing held: the caller may then deliver the
    // fragment's bytes where they are, without add()'s copy, and call
    // release_next() once it did (the message then counts as released, and
    // a replay of it is a duplicate). Otherwise add() it.
    bool next_whole(const SendHeader& header, std::size_t payload_length) const {
        return header.msg_seq == next_ && header.offset == 0 && payload_length == header.total &&
               header.total <= max_message_ && partial_.empty();
    }
    void release_next() {
        ++next_;
        skip_abandoned();
    }

    // The sender gave up on message msg_seq (wire::SendAbandoned): what is
    // held of it goes, later messages are released without it, and its
    // fragments that still arrive are duplicates. Nothing when it was
    // released already. An error (nothing changes) for a number more than
    // kMaxAbandonedAhead beyond the next one or beyond that many held: a
    // sender never has that many messages outstanding (its window).
    Status abandon(std::uint64_t msg_seq);
    static constexpr std::uint64_t kMaxAbandonedAhead = 1 << 20;

    // Highest sequence number released (0 before the first), the value a
    // Sync exchange reports before a replay.
    std::uint64_t last_delivered() const { return next_ - 1; }
    std::size_t pending_messages() const { return partial_.size(); }

private:
    struct Partial {
        std::uint64_t total = 0;
        std::uint64_t received = 0;
        std::set<std::uint64_t> offsets;  // fragments held, by offset
        std::vector<std::uint8_t> data;
    };
    std::uint64_t max_message_;
    void skip_abandoned();

    std::uint64_t next_ = 1;
    std::map<std::uint64_t, Partial> partial_;
    std::set<std::uint64_t> abandoned_;  // beyond next_
};

} // namespace tent
