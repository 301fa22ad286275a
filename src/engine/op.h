// One request in flight: a WRITE or READ cut into chunks, or a SEND cut into
// fragments. Each chunk keeps what is needed to post it again (rail, offset,
// length, header), so a failed chunk can be replayed elsewhere.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/chunk_plan.h"
#include "engine/engine_types.h"
#include "engine/send_header.h"
#include "policy/atomic_replay.h"
#include "policy/failover_route.h"
#include "policy/replay_decision.h"
#include "wire/memory_handle.h"

namespace tent {

// Failover state of one chunk or fragment.
struct PieceState {
    ReplayHistory history;
    // (rail index, the rail's epoch then): rails this piece failed on. A rail
    // that has since proven itself (a later success) has a newer epoch and
    // may take the piece again.
    std::vector<std::pair<std::size_t, std::uint64_t>> failed_on;
    RouteMemory route;  // transports it failed on and left: never used again
    // Atomics: where its attempts went, and the one in flight now.
    AtomicTrail atomic;
    bool atomic_posted = false;  // the current attempt left the host
    AtomicPath atomic_path = AtomicPath::Hardware;
    bool ledger_only = false;    // may be sent again on ledger paths only
};

struct Op {
    std::uint64_t id = 0;
    OpType type = OpType::Write;
    PeerId peer = 0;
    PostOptions options;
    std::uint8_t* local = nullptr;
    std::uint64_t length = 0;
    wire::MemoryHandle remote;  // Write/Read
    std::uint64_t remote_addr = 0;
    std::uint64_t seq = 0;      // per-connection operation number
    std::uint64_t msg_seq = 0;  // Send: per-connection message number
    AtomicRequest atomic;       // Atomic: what to do (the result goes to local, 8 bytes)
    int caller_numa = -1;       // NUMA node of the posting thread, -1 unknown

    std::vector<PlannedChunk> chunks;  // rail = index into the connection's rails
    std::vector<PieceState> pieces;    // one per chunk
    std::vector<std::array<std::uint8_t, kSendHeaderSize>> headers;  // Send: one per chunk
    std::size_t next_chunk = 0;   // chunks[0, next_chunk) have been posted
    std::size_t outstanding = 0;  // posted, not yet completed
    std::size_t deferred = 0;     // refused with Busy (rail queue full), to post again
    std::size_t waiting = 0;      // pieces parked for a usable rail or awaiting a sync reply
    std::size_t held = 0;         // pieces held back by a rail's QoS window
    bool planned = false;         // chunks assigned (an op parked before planning has none)
    bool hold_last = false;       // striped Write: the final piece waits for all others
    bool atomic_open = false;     // Atomic: counted in its connection's AtomicOrder
    bool atomic_waits_turn = false;  // Atomic: plan() found the open ones' rail not allowed for it
    Status error;                 // first failure
};

} // namespace tent
