// AtomicLedger: the target side of exactly-once atomics on TCP rails. Every
// TCP rail of a provider executes its peer's atomics through the provider's
// one ledger, which remembers each result by (connection, operation id): an
// atomic sent again after its answer was lost -- on the same rail re-armed
// or on another TCP rail of the connection -- gets the first result back
// and is not executed twice (policy/atomic_replay.h).
//
// Bounded: the newest kCapacity results per connection are kept. An
// initiator replays an atomic within failover_timeout_ms of sending it, by
// when far fewer of its atomics are outstanding. A connection's results go
// when the last of its TCP rails does (join/leave): the engine destroys a
// connection's rails only when it releases the departed peer, so no replay
// can come after that.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

#include "wire/data_frames.h"

namespace tent::tcp {

class AtomicLedger {
public:
    static constexpr std::size_t kCapacity = 65536;

    // Executes op at word (8-byte aligned, inside a registration the caller
    // checked) unless (connection, id) was executed before; returns the
    // value found at word before the first execution.
    std::uint64_t execute(std::uint64_t connection, std::uint64_t id, std::uint64_t* word, wire::AtomicOp op,
                          std::uint64_t operand, std::uint64_t swap);

    // A rail of connection starts / stops executing through the ledger.
    void join(std::uint64_t connection);
    void leave(std::uint64_t connection);
    // Connections whose results are kept (for tests and the bounds).
    std::size_t connections();

private:
    struct Book {
        std::unordered_map<std::uint64_t, std::uint64_t> results;  // by id
        std::deque<std::uint64_t> order;                           // ids, oldest first
        std::size_t rails = 0;                                     // joined, not yet left
    };
    std::mutex mutex_;
    std::map<std::uint64_t, Book> books_;  // by connection
};

} // namespace tent::tcp
