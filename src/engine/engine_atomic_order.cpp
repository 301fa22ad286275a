// Atomics to one peer execute there in the order they were started
// (policy/atomic_order.h): the engine's side of it. start_op_by_id() lets
// an atomic start or queues it, plan() puts it on the open ones' rail,
// piece_failed() sends a failed one again only as the oldest open one, and
// anything that takes an open atomic off its rail's order (a failed
// attempt, a refused post, a wait for a rail) holds new ones back until
// every open one has finished.
#include <algorithm>
#include <vector>

#include "engine/connection.h"
#include "engine/engine.h"
#include "engine/op.h"

namespace tent {

bool Engine::atomic_may_start_now(const Connection& conn) const {
    const AtomicOrder& order = conn.atomics;
    const bool rail_usable = order.rail < conn.rails.size() && usable(conn.rails[order.rail]);
    return atomic_may_start(order, rail_usable);
}

// Starts queued atomics, oldest first, while they may (at most all of them).
void Engine::start_atomics_waiting(Connection& conn) {
    while (!conn.atomics.waiting.empty() && !conn.unreachable && atomic_may_start_now(conn)) {
        const std::uint64_t id = conn.atomics.waiting.front();
        conn.atomics.waiting.pop_front();
        auto it = ops_.find(id);
        if (it == ops_.end()) continue;  // failed meanwhile
        Op& op = *it->second;
        start_planned(conn, op);
        if (ops_.count(id)) advance(op);
    }
}

// Sends again the oldest open atomic if its replay waited for older ones.
void Engine::replay_atomics_in_turn(Connection& conn) {
    while (!conn.atomics.open.empty()) {
        const std::uint64_t id = conn.atomics.open.front();
        auto waiting = conn.atomic_replays.find(id);
        if (waiting == conn.atomic_replays.end()) return;  // in flight, or parked: it goes first
        const Status why = waiting->second;
        conn.atomic_replays.erase(waiting);
        auto it = ops_.find(id);
        if (it == ops_.end()) return;  // not reached: a finished op is no longer open
        Op& op = *it->second;
        --op.waiting;
        if (op.error.is_ok()) place_piece(conn, op, 0, why);  // an atomic is one piece
        if (auto still_open = ops_.find(id); still_open != ops_.end()) advance(*still_open->second);
    }
}

// Fails the atomics waiting to be sent again or to start: called when the
// peer has had no usable rail for failover_timeout_ms (fail_parked()), so
// that they fail with the parked ones instead of each waiting out a
// timeout of its own in turn.
void Engine::fail_waiting_atomics(Connection& conn, const Status& why) {
    std::vector<std::uint64_t> ended;
    for (const auto& [id, failure] : conn.atomic_replays) {
        if (auto it = ops_.find(id); it != ops_.end()) --it->second->waiting;
        ended.push_back(id);
    }
    conn.atomic_replays.clear();
    ended.insert(ended.end(), conn.atomics.waiting.begin(), conn.atomics.waiting.end());
    conn.atomics.waiting.clear();
    for (std::uint64_t id : ended) {
        auto it = ops_.find(id);
        if (it == ops_.end()) continue;
        if (it->second->error.is_ok()) it->second->error = why;
        advance(*it->second);
    }
}

void Engine::atomic_out_of_step(Connection& conn, const Op& op) {
    if (op.type == OpType::Atomic && op.atomic_open) conn.atomics.in_step = false;
}

void Engine::atomic_closed(Connection& conn, Op& op) {
    if (!op.atomic_open) return;
    op.atomic_open = false;
    AtomicOrder& order = conn.atomics;
    if (auto it = std::find(order.open.begin(), order.open.end(), op.id); it != order.open.end()) order.open.erase(it);
    conn.atomic_replays.erase(op.id);
    if (order.open.empty()) order.in_step = true;
}

} // namespace tent
