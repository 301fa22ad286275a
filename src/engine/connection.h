// One connection to one peer: the control socket, every rail to the peer,
// the sequence counters and the receive-side reassembly. Owned by the
// engine; touched only by its progress thread once adopted.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <memory>
#include <vector>

#include "engine/control_outbox.h"
#include "engine/rearm_handshake.h"
#include "engine/send_flow.h"
#include "engine/send_reassembler.h"
#include "metrics/metric.h"
#include "common/unique_fd.h"
#include "health/rail_events.h"
#include "health/rail_silence.h"
#include "policy/atomic_order.h"
#include "policy/delivery_rate.h"
#include "policy/device_selector.h"
#include "policy/priority.h"
#include "policy/qos_lane.h"
#include "transport/provider.h"
#include "wire/address_blob.h"

namespace tent {

// A piece held back by the QoS window (policy/qos_window.h) until the
// rail's lower-priority work in flight shrinks, or by the rail queue
// (policy/rail_queue.h) until completions make room.
struct HeldPiece {
    std::uint64_t op = 0;
    std::size_t chunk = 0;
    std::uint64_t length = 0;
};

struct RailSlot {
    NewRail rail;
    std::size_t provider = 0;  // index into the engine's providers
    RailId monitor_id = 0;
    int device = -1;     // topology index of the local device, -1 not in the topology
    int numa_node = -1;  // NUMA node of the local device, -1 unknown
    std::uint64_t inflight_bytes = 0;
    std::array<std::uint64_t, kPriorityCount> inflight_by_priority{};  // the part of inflight_bytes per level
    std::array<std::deque<HeldPiece>, kPriorityCount> held;  // by level, FIFO within one
    std::uint64_t held_bytes = 0;  // of all levels: the selector counts them as the rail's load
    // tent_qos_held_total{rail,level}, looked up on first use: counted per held piece.
    std::array<Counter*, kPriorityCount> held_counters{};
    double ewma_bw = 0.0;      // bytes/s, 0 = not measured yet
    DeliveryRate delivery;     // the samples of ewma_bw (delivery_rate.h)
    // The cookie of a piece that has had the rail to itself from its post
    // (posted to an idle rail, nothing posted behind it since), else 0: only
    // such a piece's time to completion is the rail's own latency, which the
    // slow-rail check compares (slow_rail.h).
    std::uint64_t solo_cookie = 0;
    std::uint64_t ops = 0, bytes = 0, errors = 0, failovers = 0;
    std::uint64_t failovers_in = 0;  // pieces moved onto this rail from a failed one
    // Failover layer.
    RearmState care;  // where it stands in the re-arm handshake (rearm_handshake.h)
    std::size_t inflight_ops = 0;  // posted, not completed (probes included)
    // One-sided ops and probes in flight. Only they are watched for silence:
    // a SEND may wait legitimately for the receiver to post buffers
    // (receiver not ready), and the queue pair's own timeout catches a lost one.
    std::size_t inflight_watched = 0;
    RailSilence silence;
    std::string last_failure;      // why it last failed, for peer-unreachable reports
    std::uint64_t epoch = 0;       // successes so far (data or probe): proof the rail works
    TimePoint last_probe{};
    bool quiet = false;  // this turn: idle and its descriptor not readable (skip_quiet_rails)
    TimePoint quiet_look{};  // when a turn last read it while idle (quiet_rail_look.h)
};

// A piece (chunk or fragment) waiting for a usable rail, or a whole op
// waiting to be planned (chunk == kWholeOp).
inline constexpr std::size_t kWholeOp = ~std::size_t{0};
struct ParkedPiece {
    std::uint64_t op = 0;
    std::size_t chunk = kWholeOp;
};

// A SEND fragment whose rail failed: replayed only once the peer says the
// message was not delivered.
struct PendingSync {
    std::uint64_t op = 0;
    std::size_t chunk = 0;
    std::uint64_t msg_seq = 0;
    TimePoint sent{};  // watched time (watched_time.h)
};

struct Connection {
    std::uint64_t id = 0;  // = PeerId
    UniqueFd control;
    wire::AddressBlob peer;
    std::vector<RailSlot> rails;
    std::uint64_t next_seq = 1;      // every operation
    std::uint64_t next_msg_seq = 1;  // two-sided messages, gap-free
    // Our messages the peer said it delivered, up to this number (its
    // SyncReplies and credits; a departing engine sends a credit before its
    // Goodbye): done even if a rail never confirms them.
    std::uint64_t peer_delivered = 0;
    SendReassembler reassembler;
    // Flow control of messages (send_flow.h): the peer's window over ours,
    // SENDs (op ids, in order) waiting for its credit, and the credit we owe.
    SendWindow send_window;
    std::deque<std::uint64_t> credit_waiting;
    // Atomics execute at the peer in start order (policy/atomic_order.h),
    // and those whose replay waits to be the oldest open one, with why they
    // failed.
    AtomicOrder atomics;
    std::map<std::uint64_t, Status> atomic_replays;
    CreditGrant credit{1};
    std::unique_ptr<DeviceSelector> selector;
    QosLane lane;  // policy/qos_lane.h
    bool unreachable = false;
    bool initiator = false;  // this side called connect(); it leads every re-arm (rearm_handshake.h)
    std::vector<std::uint8_t> control_in;  // control channel bytes not yet framed
    ControlOutbox control_out;             // control frames the socket has not taken yet
    Status control_failure;                // a control send failed: unreachable at the next service
    std::deque<ParkedPiece> parked;
    TimePoint parked_since{};  // watched time (watched_time.h); valid while parked is non-empty
    std::map<std::uint32_t, PendingSync> syncs;  // by nonce
    std::uint32_t next_nonce = 1;

    // A nonce for a control exchange (sync, re-arm): never 0, which the
    // wire reserves.
    std::uint32_t take_nonce() {
        std::uint32_t n = next_nonce++;
        if (next_nonce == 0) next_nonce = 1;
        return n;
    }
};

} // namespace tent
