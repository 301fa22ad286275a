// Failover of pieces (chunks of a WRITE/READ, fragments of a SEND) on the
// progress thread: decide whether a failed piece is replayed
// (policy/replay_decision.h), find it another rail (policy/failover_route.h:
// never a transport it failed on and left), park it while no rail to its peer is usable, and give up with a clear
// error after failover_timeout_ms. SEND fragments are replayed only after the
// peer answered a SyncRequest: a message it already delivered is never sent
// again, also when only the acknowledgement was lost.
#include <algorithm>
#include <cstdio>

#include "common/log.h"
#include "engine/connection.h"
#include "engine/engine.h"
#include "engine/op.h"
#include "health/rail_monitor.h"

namespace tent {

namespace {

long long ms_between(TimePoint from, TimePoint to) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

} // namespace

bool Engine::usable(const RailSlot& slot) const {
    return slot.care.care == RailCare::InUse && !slot.rail.rail->broken();
}

void Engine::piece_failed(Connection& conn, Op& op, std::size_t chunk, std::size_t rail, const Status& why,
                          FailureKind kind) {
    PieceState& piece = op.pieces[chunk];
    piece.failed_on.emplace_back(rail, conn.rails[rail].epoch);
    if (!op.error.is_ok()) return;  // the request already failed: nothing to save
    if (op.type == OpType::Atomic) {
        // Never blindly: policy/atomic_replay.h.
        AtomicReplayDecision a = decide_atomic_replay(why, piece.atomic_posted, piece.atomic_path, piece.atomic,
                                                      piece.history, params_.max_failover_attempts);
        atomic_out_of_step(conn, op);  // later atomics wait until this one is resolved
        piece.atomic_posted = false;
        if (a.verdict == AtomicVerdict::Fail) {
            op.error = a.status;
            return;
        }
        piece.ledger_only = piece.ledger_only || a.verdict == AtomicVerdict::LedgerOnly;
        note_replay(why, FailureKind::Own, piece.history);
        ++conn.rails[rail].failovers;
        if (!atomic_may_replay(conn.atomics, op.id)) {
            // Behind an older open atomic: sent again once that finished
            // (replay_atomics_in_turn()), never ahead of it.
            conn.atomic_replays.insert_or_assign(op.id, why);
            ++op.waiting;
            return;
        }
        place_piece(conn, op, chunk, why);
        return;
    }
    ReplayDecision d = decide_replay(why, kind, piece.history, params_.max_failover_attempts);
    if (d.verdict == ReplayVerdict::Fail) {
        op.error = d.status;
        return;
    }
    note_replay(why, kind, piece.history);
    ++conn.rails[rail].failovers;
    if (op.type == OpType::Send) {
        request_sync(conn, op, chunk);
        return;
    }
    place_piece(conn, op, chunk, why);
}

// Posts the piece on the best rail failover_route.h allows (a transport it
// left behind never again; within one, a rail it has not failed on or that
// has worked since), else parks it until one is usable. A piece a second
// rail refused (remote access) with no other rail left fails with that
// refusal; one whose every rail is on a transport it left fails at once.
void Engine::place_piece(Connection& conn, Op& op, std::size_t chunk, const Status& last_failure) {
    const TimePoint now = clock_.now();
    const TransferSpec spec = transfer_spec(conn, op);
    const CompiledRule* rule = transport_selector_->match(spec);
    const std::uint64_t length = op.chunks[chunk].length;
    PieceState& piece = op.pieces[chunk];
    std::vector<RouteRail> rails;
    rails.reserve(conn.rails.size());
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        const RailSlot& s = conn.rails[i];
        RouteRail r;
        r.kind = s.rail.rail->kind();
        r.allowed = !(r.kind == TransportKind::Rdma && rule && !rule->allows_device(s.rail.local_device, s.device)) &&
                    !(op.type == OpType::Send && s.rail.rail->max_send_length() < kSendHeaderSize + length) &&
                    !(op.type != OpType::Send && s.rail.rail->max_op_length() < length) &&
                    !(piece.ledger_only && !s.rail.rail->atomics_deduplicated());
        r.usable = usable(s);
        r.paused = r.usable && monitor_->state(s.monitor_id, now) == RailState::Paused;
        for (const auto& [rail, epoch] : piece.failed_on) r.failed_here = r.failed_here || (rail == i && epoch == s.epoch);
        rails.push_back(r);
    }
    RouteChoice route = choose_failover_rails(transport_selector_->fallback_list(spec), rails, piece.route);
    std::optional<std::size_t> to;
    if (route.verdict == RouteVerdict::Rails) {
        std::vector<RailView> views;
        rail_views(conn, route.rails, now, views);
        if (auto k = conn.selector->pick(views, ~std::uint64_t{0}, op.caller_numa)) to = route.rails[*k];
    }
    if (!to) {
        if (route.verdict == RouteVerdict::NoRail && piece.ledger_only) {
            op.error = Status(Code::NoResources, std::string(kAtomicUnknownMessage) + " and no rail to peer " +
                                                     conn.peer.hostname + " can ask its target for the result");
        } else if (route.verdict == RouteVerdict::NoRail) {
            op.error = Status(Code::NoResources, "no rail to peer " + conn.peer.hostname +
                                                     (rule ? " allowed by policy " + rule->name : std::string()));
        } else if (route.verdict == RouteVerdict::Exhausted) {
            op.error = Status(Code::FailoverExhausted,
                              std::string(kFailoverExhaustedMessage) +
                                  (last_failure.is_ok() ? "" : " (last error: " + last_failure.to_string() + ")"));
        } else if (last_failure.code() == Code::RemoteAccess) {
            op.error = last_failure;  // the alive rails refuse it: the request is at fault
        } else {
            park(conn, op, chunk);
        }
        return;
    }
    const std::size_t from = op.chunks[chunk].rail;
    const Rail& from_rail = *conn.rails[from].rail.rail;
    const Rail& to_rail = *conn.rails[*to].rail.rail;
    metrics_->failover(transport_kind_name(from_rail.kind()), transport_kind_name(to_rail.kind()));
    TENT_INFO("rail failover", "%s -> %s: %llu bytes at offset %llu of request %llu", from_rail.name().c_str(),
              to_rail.name().c_str(), static_cast<unsigned long long>(length),
              static_cast<unsigned long long>(op.chunks[chunk].offset), static_cast<unsigned long long>(op.id));
    op.chunks[chunk].rail = *to;
    ++conn.rails[*to].failovers_in;
    post_chunk(op, chunk);
}

void Engine::park(Connection& conn, Op& op, std::size_t chunk) {
    if (conn.parked.empty()) conn.parked_since = watched_.at(clock_.now());
    conn.parked.push_back({op.id, chunk});
    ++op.waiting;
}

// Empties conn's parking; each piece whose op still exists stops waiting,
// goes to `each`, and its op then moves on (finishes if nothing is left).
void Engine::take_parked(Connection& conn, const std::function<void(Op&, const ParkedPiece&)>& each) {
    std::deque<ParkedPiece> batch;
    batch.swap(conn.parked);
    for (const ParkedPiece& p : batch) {
        auto it = ops_.find(p.op);
        if (it == ops_.end()) continue;
        Op& op = *it->second;
        --op.waiting;
        each(op, p);
        if (ops_.count(p.op)) advance(op);
    }
}

// Parked pieces and ops try again whenever a rail to their peer is usable;
// after failover_timeout_ms without one, they fail.
void Engine::serve_parked(Connection& conn, TimePoint now) {
    if (conn.parked.empty()) return;
    bool any_usable = false;
    for (const auto& s : conn.rails) any_usable = any_usable || usable(s);
    if (any_usable) {
        const TimePoint since = conn.parked_since;
        take_parked(conn, [&](Op& op, const ParkedPiece& p) {
            if (!op.error.is_ok()) return;
            if (p.chunk == kWholeOp)
                start_planned(conn, op);
            else
                place_piece(conn, op, p.chunk);
        });
        if (!conn.parked.empty()) conn.parked_since = std::min(since, conn.parked_since);
    }
    if (!conn.parked.empty() && watched_.at(now) - conn.parked_since >= params_.failover_timeout) fail_parked(conn, now);
}

void Engine::fail_parked(Connection& conn, TimePoint now) {
    Status why(Code::PeerUnreachable, "peer unreachable: " + conn.peer.hostname + ": no usable rail for " +
                                          std::to_string(ms_between(conn.parked_since, watched_.at(now))) + " ms; " +
                                          rails_report(conn, now));
    TENT_WARN("peer unreachable", "%s", why.message().c_str());
    take_parked(conn, [&](Op& op, const ParkedPiece&) {
        if (op.error.is_ok()) op.error = why;
    });
    fail_waiting_atomics(conn, why);  // behind the parked ones, with no rail either
    UnreachableCallback callback;
    {
        std::lock_guard lock(mutex_);
        callback = unreachable_callback_;
    }
    if (callback) callback(conn.id, why);
}

std::string Engine::rails_report(const Connection& conn, TimePoint now) const {
    std::string out = "rails tried:";
    if (conn.rails.empty()) out += " none";
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        const RailSlot& s = conn.rails[i];
        out += i ? "; " : " ";
        out += s.rail.rail->name() + " (";
        RailState state = monitor_->state(s.monitor_id, now);
        if (s.care.care != RailCare::InUse || s.rail.rail->broken()) {
            out += s.care.care == RailCare::InUse ? "failed" : rail_care_name(s.care.care);
        } else {
            out += rail_state_name(state);
        }
        if (state == RailState::Paused) {
            char buf[64];
            std::snprintf(buf, sizeof buf, ", paused for %.0f s",
                          std::chrono::duration<double>(monitor_->cooldown_of(s.monitor_id, now)).count());
            out += buf;
        }
        if (!s.last_failure.empty()) out += ": " + s.last_failure;
        out += ")";
    }
    return out;
}

void Engine::request_sync(Connection& conn, Op& op, std::size_t chunk) {
    const std::uint32_t nonce = conn.take_nonce();
    conn.syncs[nonce] = PendingSync{op.id, chunk, op.msg_seq, watched_.at(clock_.now())};
    ++op.waiting;
    send_control(conn, wire::Frame{0, 0, conn.id, 0,
                                   wire::SyncRequest{nonce, conn.reassembler.last_delivered()}});
}

// The peer's answer: every message up to last_delivered was delivered there.
void Engine::on_sync_reply(Connection& conn, std::uint32_t nonce, std::uint64_t last_delivered) {
    conn.peer_delivered = std::max(conn.peer_delivered, last_delivered);
    auto it = conn.syncs.find(nonce);
    if (it == conn.syncs.end()) return;
    PendingSync sync = it->second;
    conn.syncs.erase(it);
    auto op_it = ops_.find(sync.op);
    if (op_it == ops_.end()) return;
    Op& op = *op_it->second;
    --op.waiting;
    if (op.error.is_ok()) {
        if (sync.msg_seq <= last_delivered) {
            TENT_DEBUG("send-replay-skipped", "message %llu already delivered by %s: not sent again",
                       static_cast<unsigned long long>(sync.msg_seq), conn.peer.hostname.c_str());
        } else {
            place_piece(conn, op, sync.chunk);
        }
    }
    if (ops_.count(sync.op)) advance(op);
}

// Both deadlines above count only time this engine watched
// (watched_time.h): after a gap in its own turns, the peer's answer is read
// before the peer is judged, and a peer starved as long as this side is
// not given up for it.
void Engine::expire_syncs(Connection& conn, TimePoint now) {
    const TimePoint watched = watched_.at(now);
    for (auto it = conn.syncs.begin(); it != conn.syncs.end();) {
        if (watched - it->second.sent < params_.failover_timeout) {
            ++it;
            continue;
        }
        PendingSync sync = it->second;
        it = conn.syncs.erase(it);
        auto op_it = ops_.find(sync.op);
        if (op_it == ops_.end()) continue;
        Op& op = *op_it->second;
        --op.waiting;
        if (op.error.is_ok())
            op.error = Status(Code::PeerUnreachable,
                              "peer unreachable: " + conn.peer.hostname + " did not answer a sync request in " +
                                  std::to_string(ms_between(sync.sent, watched)) + " ms; " + rails_report(conn, now));
        advance(op);
    }
}

} // namespace tent
