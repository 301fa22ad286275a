// Values the engine exchanges with its callers: what to post, what completed,
// how a rail is doing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "common/status.h"
#include "health/rail_state.h"
#include "policy/priority.h"
#include "common/transport_kind.h"

namespace tent {

// A peer is named by its connection id (chosen by the initiator, the same
// on both sides).
using PeerId = std::uint64_t;

enum class OpType { Write, Read, Send, Recv, Atomic };

// An 8-byte atomic on a remote address (OpType::Atomic).
enum class AtomicKind { FetchAdd, CompareSwap };
struct AtomicRequest {
    AtomicKind kind = AtomicKind::FetchAdd;
    std::uint64_t compare_add = 0;  // the addend, or the value compared
    std::uint64_t swap = 0;         // CompareSwap: the value stored when equal
};

struct PostOptions {
    Priority priority = Priority::Medium;
    std::optional<TransportKind> hint;  // preferred transport; others only if it has no rail
    std::uint64_t cookie = 0;           // echoed in the completion
};

struct EngineCompletion {
    std::uint64_t cookie = 0;
    OpType op = OpType::Write;
    Status status;
    std::uint64_t length = 0;  // bytes moved (Recv: the message's length)
    PeerId peer = 0;
};

struct RailStats {
    PeerId peer = 0;
    std::uint16_t rail_id = 0;
    std::string name;
    TransportKind kind = TransportKind::Tcp;
    RailState state = RailState::Healthy;
    std::uint64_t ops = 0;     // operations completed successfully
    std::uint64_t bytes = 0;   // bytes of those operations
    std::uint64_t errors = 0;  // operations that failed (submit or completion)
    std::uint64_t inflight_bytes = 0;
    std::uint64_t failovers = 0;  // operations moved off this rail after a failure
};

// Called on the engine's progress thread; must not block. The bytes are
// valid only during the call.
using RecvCallback = std::function<void(PeerId peer, std::span<const std::uint8_t> message)>;
using UnreachableCallback = std::function<void(PeerId peer, const Status& why)>;

} // namespace tent
