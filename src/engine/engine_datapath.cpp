// The data path on the progress thread: plan a request into rail operations,
// post them, account their completions, reassemble incoming messages.
#include <algorithm>
#include <cstring>
#include <optional>

#include "common/log.h"
#include "engine/connection.h"
#include "engine/engine.h"
#include "engine/op.h"
#include "health/rail_monitor.h"
#include "policy/bandwidth_estimate.h"

namespace tent {

namespace {

RailOpcode opcode_of(const Op& op) {
    switch (op.type) {
    case OpType::Write: return RailOpcode::Write;
    case OpType::Read: return RailOpcode::Read;
    case OpType::Atomic:
        return op.atomic.kind == AtomicKind::CompareSwap ? RailOpcode::AtomicCmpSwap : RailOpcode::AtomicFetchAdd;
    default: return RailOpcode::Send;
    }
}

} // namespace

void Engine::start_op_by_id(std::uint64_t id) {
    auto it = ops_.find(id);
    if (it == ops_.end()) return;
    Op& op = *it->second;
    auto conn = connections_.find(op.peer);
    if (conn == connections_.end() || conn->second->unreachable) {
        op.error = Status(Code::PeerUnreachable, "peer is unreachable");
        finish_op(id);
        return;
    }
    // A message beyond the peer's window waits for its credit, behind those
    // already waiting (message numbers are taken in start order).
    Connection& c = *conn->second;
    if (op.type == OpType::Send && op.msg_seq == 0 && (!c.credit_waiting.empty() || !c.send_window.may_start())) {
        c.credit_waiting.push_back(id);
        return;
    }
    // An atomic behind others that are not plainly on their way waits its
    // turn, in start order (policy/atomic_order.h).
    if (op.type == OpType::Atomic && !op.atomic_open && (!c.atomics.waiting.empty() || !atomic_may_start_now(c))) {
        c.atomics.waiting.push_back(id);
        return;
    }
    start_planned(c, op);
    if (ops_.count(id)) advance(op);
}

void Engine::start_credit_waiting(Connection& conn) {
    while (!conn.credit_waiting.empty() && conn.send_window.may_start()) {
        const std::uint64_t id = conn.credit_waiting.front();
        conn.credit_waiting.pop_front();
        auto it = ops_.find(id);
        if (it == ops_.end()) continue;  // failed meanwhile (peer unreachable)
        Op& op = *it->second;
        start_planned(conn, op);
        if (ops_.count(id)) advance(op);
    }
}

void Engine::on_send_credit(Connection& conn, const wire::SendCredit& credit) {
    conn.peer_delivered = std::max(conn.peer_delivered, credit.delivered);
    conn.send_window.credited(credit.delivered, credit.window);
    start_credit_waiting(conn);
}

// The peer gave up on one of its messages: the later ones it holds up go to
// the application, and a credit goes back at once (the peer's window may be
// full of messages held up behind it, or of its own weight).
void Engine::on_send_abandoned(Connection& conn, std::uint64_t msg_seq) {
    if (Status s = conn.reassembler.abandon(msg_seq); !s) {
        TENT_WARN("send-abandoned-ignored", "%s: %s", conn.peer.hostname.c_str(), s.to_string().c_str());
        return;
    }
    TENT_DEBUG("send-abandoned", "message %llu from %s given up by its sender: later ones are delivered without it",
               static_cast<unsigned long long>(msg_seq), conn.peer.hostname.c_str());
    deliver(conn, true);
}

void Engine::grant_credit(Connection& conn) {
    send_control(conn, wire::Frame{0, 0, conn.id, 0,
                                   wire::SendCredit{conn.reassembler.last_delivered(), conn.credit.window()}});
    conn.credit.reported();
}

// Plans the op and posts its first batch; with no usable rail to the peer
// (all paused or failed, none excluded by policy) the whole op waits.
void Engine::start_planned(Connection& conn, Op& op) {
    Status s = plan(conn, op);
    if (!s) {
        atomic_out_of_step(conn, op);
        if (op.atomic_waits_turn) {
            // The open atomics' rail is not one this atomic may use: it
            // starts once they have all finished, ahead of later ones.
            op.atomic_waits_turn = false;
            atomic_closed(conn, op);
            conn.atomics.waiting.push_front(op.id);
            return;
        }
        if (s.code() == Code::Busy && failover_on()) {
            park(conn, op, kWholeOp);
        } else {
            op.error = s.code() == Code::Busy ? Status(Code::NoResources, s.message()) : s;
            // A message that fails before any of it went out gives its
            // number back (send_flow.h): the next message takes it.
            if (op.type == OpType::Send && op.msg_seq + 1 == conn.next_msg_seq && conn.send_window.withdraw(op.msg_seq)) {
                --conn.next_msg_seq;
                op.msg_seq = 0;
            }
        }
        return;
    }
    const std::size_t first_batch = op.hold_last ? op.chunks.size() - 1 : op.chunks.size();
    // Several pieces leave together: a TCP rail sends all it got in one
    // sendmsg instead of one each (a 1 MiB read: eight requests).
    const bool together = first_batch > 1;
    if (together)
        for (auto& slot : conn.rails)
            if (slot.rail.rail) slot.rail.rail->begin_posts();
    for (std::size_t i = 0; i < first_batch; ++i) post_chunk(op, i);
    if (together)
        for (auto& slot : conn.rails)
            if (slot.rail.rail) slot.rail.rail->end_posts();
}

// The rails a request may use: the transport selector's fallback list for it
// (its hint first, then the first matching [policy] rule's transports, else
// RDMA then TCP) walked in order; the first transport with a rail that is
// allowed by the rule's device mask, in use and not paused wins. A transport
// with no such rail (none to this peer, or all paused or failed) is passed
// over for the next. Busy when rails exist but none is usable now (they may
// come back), NoResources when no rail is allowed at all.
TransferSpec Engine::transfer_spec(const Connection& conn, const Op& op) const {
    TransferSpec spec;
    spec.priority = op.options.priority;
    spec.length = op.length;
    spec.same_machine = conn.peer.hostname == blob_.hostname;
    spec.transport_hint = op.options.hint;
    return spec;
}

bool Engine::rails_for(const Connection& conn, const Op& op, TimePoint now, Status& why,
                       std::vector<std::size_t>& allowed) const {
    const TransferSpec spec = transfer_spec(conn, op);
    const CompiledRule* rule = transport_selector_->match(spec);
    bool any_rail = false;
    for (TransportKind kind : transport_selector_->fallback_list(spec)) {
        allowed.clear();
        bool usable = false;
        for (std::size_t i = 0; i < conn.rails.size(); ++i) {
            const RailSlot& s = conn.rails[i];
            if (s.rail.rail->kind() != kind) continue;
            if (kind == TransportKind::Rdma && rule && !rule->allows_device(s.rail.local_device, s.device)) continue;
            any_rail = true;
            if (!this->usable(s)) continue;  // failed or being re-armed
            allowed.push_back(i);
            usable = usable || monitor_->state(s.monitor_id, now) != RailState::Paused;
        }
        if (usable) return true;
        if (!allowed.empty())
            TENT_DEBUG("transport-fallback", "every %s rail to %s is paused, trying the next transport",
                       transport_kind_name(kind), conn.peer.hostname.c_str());
    }
    why = any_rail ? Status(Code::Busy, "every rail to " + conn.peer.hostname + " is paused or failed")
                   : Status(Code::NoResources, "no rail to peer " + conn.peer.hostname +
                                                   (rule ? " allowed by policy " + rule->name : std::string()));
    allowed.clear();
    return false;
}

// What the device selector sees of each rail (view k is rails[k]).
void Engine::rail_views(const Connection& conn, const std::vector<std::size_t>& rails, TimePoint now,
                        std::vector<RailView>& views) const {
    views.clear();
    for (std::size_t k = 0; k < rails.size(); ++k) {
        const RailSlot& s = conn.rails[rails[k]];
        views.push_back(RailView{static_cast<int>(k % 64), monitor_->state(s.monitor_id, now), s.numa_node,
                                 s.inflight_bytes + s.held_bytes, s.ewma_bw,
                                 s.rail.rail && s.rail.rail->holds_answer(),
                                 s.rail.rail && s.rail.rail->kind() == TransportKind::Tcp, s.rail.link_rate});
    }
}

// Rails chosen by rails_for(), seen by the device selector (health, NUMA
// tier of the posting thread, backlog over bandwidth); then chunks
// (Write/Read) or fragments (Send) assigned to them.
Status Engine::plan(Connection& conn, Op& op) {
    // Numbers are taken once, in start order, even if the op waits for a rail.
    if (op.seq == 0) op.seq = conn.next_seq++;
    if (op.type == OpType::Send && op.msg_seq == 0) {
        op.msg_seq = conn.next_msg_seq++;
        conn.send_window.started(op.msg_seq, op.length);
    }
    const TimePoint now = clock_.now();
    if (op.type == OpType::Atomic && !op.atomic_open) {
        op.atomic_open = true;  // open until finish_op(), whatever happens to it
        conn.atomics.open.push_back(op.id);
    }
    Status why;
    // The driver's scratch lists, kept from plan to plan (no allocation per request).
    std::vector<std::size_t>& allowed = plan_scratch_.allowed;
    if (!rails_for(conn, op, now, why, allowed)) return why;
    apply_qos_lane(conn, op, allowed, now);

    std::vector<RailView>& views = plan_scratch_.views;
    rail_views(conn, allowed, now, views);
    std::vector<std::uint64_t>& max_op = plan_scratch_.max_op;
    max_op.clear();
    for (std::size_t i : allowed) {
        const Rail& rail = *conn.rails[i].rail.rail;
        max_op.push_back(op.type == OpType::Read ? rail.max_read_length() : rail.max_op_length());
    }
    // While higher-priority work is active, this op's pieces are cut to
    // half the QoS window, so that none of them holds the rail for long.
    const bool yield_to_higher = higher_priority_active(op, now);
    if (op.type == OpType::Send) {
        std::uint64_t frag = std::max<std::uint64_t>(
            1, qos_piece_size(params_.send_fragment_size, yield_to_higher, params_.qos_window));
        std::uint64_t offset = 0;
        do {
            auto k = conn.selector->pick(views, ~std::uint64_t{0}, op.caller_numa);
            if (!k) {
                op.chunks.clear();
                op.headers.clear();
                return Status(Code::Busy, "every rail to " + conn.peer.hostname + " is paused");
            }
            std::uint64_t n = std::min(frag, op.length - offset);
            std::uint64_t room = conn.rails[allowed[*k]].rail.rail->max_send_length();
            n = std::min(n, room > kSendHeaderSize ? room - kSendHeaderSize : 1);
            op.chunks.push_back({allowed[*k], offset, n});
            op.headers.push_back(encode_send_header({op.msg_seq, offset, op.length}));
            offset += n;
        } while (offset < op.length);
        op.pieces.assign(op.chunks.size(), PieceState{});
        op.planned = true;
        return Status::ok();
    }
    std::uint64_t piece = qos_piece_size(params_.chunk_size, yield_to_higher, params_.qos_window);
    // No longer than the shortest rail to the peer can carry (a TCP rail:
    // 4 MiB), paused rails included: failover may move any piece to any of
    // them, and a piece is never cut again on its way.
    for (const RailSlot& s : conn.rails)
        if (const std::uint64_t most = s.rail.rail ? s.rail.rail->max_op_length() : 0; most > 0)
            piece = std::min(piece, most);
    if (op.type == OpType::Atomic) piece = 8;  // one indivisible piece
    ChunkPlanParams cp{params_.striping_threshold, piece, op.caller_numa, 0, op.type == OpType::Write};
    op.chunks = plan_chunks(*conn.selector, views, max_op, op.length, cp);
    if (op.chunks.empty()) return Status(Code::Busy, "every rail to " + conn.peer.hostname + " is paused");
    for (auto& c : op.chunks) c.rail = allowed[c.rail];
    if (op.type == OpType::Atomic) {
        const bool open_rail_allowed =
            std::find(allowed.begin(), allowed.end(), conn.atomics.rail) != allowed.end();
        const auto rail = atomic_rail(conn.atomics, op.chunks.front().rail, open_rail_allowed);
        if (!rail) {
            op.chunks.clear();
            op.atomic_waits_turn = true;
            return Status(Code::Busy, "an atomic waits for the earlier ones to " + conn.peer.hostname);
        }
        op.chunks.front().rail = *rail;
        if (conn.atomics.open.size() == 1) {  // the first open one decides the rail
            conn.atomics.rail = *rail;
            conn.atomics.in_step = true;
        }
    }
    // A read's bytes land in the caller's memory, which nobody may look at
    // before the completion: no order to keep, every chunk goes at once.
    op.hold_last = op.type == OpType::Write && op.chunks.size() > 1;
    op.pieces.assign(op.chunks.size(), PieceState{});
    op.planned = true;
    return Status::ok();
}

void Engine::post_chunk(Op& op, std::size_t index, bool admitted) {
    Connection& conn = *connections_.at(op.peer);
    const PlannedChunk& chunk = op.chunks[index];
    RailSlot& slot = conn.rails[chunk.rail];
    op.next_chunk = std::max(op.next_chunk, index + 1);
    if (!usable(slot)) {
        // The rail failed after the piece was assigned to it.
        piece_failed(conn, op, index, chunk.rail,
                     Status(Code::RailDown, slot.rail.rail->name() + " has failed" +
                                                (slot.last_failure.empty() ? "" : ": " + slot.last_failure)),
                     FailureKind::Collateral);
        return;
    }
    const Priority level = op.options.priority;
    const auto li = static_cast<std::size_t>(level);
    // One reading for the QoS check and the piece's posting time (its
    // latency then counts from before the post, as the application's does).
    const TimePoint now = clock_.now();
    // A striped write's final piece is never held: its write, and every
    // later one the application waits for in order, waits for it.
    const bool final_piece = op.hold_last && index + 1 == op.chunks.size();
    if (!admitted && !final_piece) {
        // Behind pieces already held at this level or above (order),
        // outside the window while higher-priority work is active, or
        // beyond what the rail keeps posted (policy/rail_queue.h).
        bool behind = false;
        for (std::size_t j = 0; j <= li; ++j) behind = behind || !slot.held[j].empty();
        const bool higher = higher_priority_active(op, now);
        const HoldReason why = hold_reason(slot, level, chunk.length, higher);
        const bool window_shut = why == HoldReason::QosWindow;
        if (behind || why != HoldReason::None) {
            slot.held[li].push_back({op.id, index, chunk.length});
            slot.held_bytes += chunk.length;
            ++op.held;
            // The QoS window's count: what it held back, or queued behind that.
            if (window_shut || (behind && higher && params_.qos_window.window != 0)) {
                Counter*& held = slot.held_counters[li];
                if (!held) held = &metrics_->qos_held_series(slot.rail.rail->name(), priority_name(level));
                held->inc();
            }
            return;
        }
    }
    RailOp r;
    r.cookie = next_cookie_++;
    r.opcode = opcode_of(op);
    r.local = op.local + chunk.offset;
    r.length = chunk.length;
    if (auto reg = registry_.find_local(r.local, r.length)) {
        if (slot.rail.rail->kind() == TransportKind::Tcp)
            r.lkey = reg->handle.tcp_key;  // looked up again before a read's data lands
        else if (slot.provider < reg->keys.size() && slot.rail.local_entry < reg->keys[slot.provider].lkeys.size())
            r.lkey = reg->keys[slot.provider].lkeys[slot.rail.local_entry];
    } else if (r.length > 0 && (op.type == OpType::Write || op.type == OpType::Read)) {
        // Deregistered while this piece waited in the engine (a program
        // that tears down with work outstanding): no rail touches the
        // memory now. The request fails; the rail is not to blame.
        if (op.error.is_ok())
            op.error = Status(Code::InvalidArgument, kLocalBufferDeregistered);
        return;
    }
    if (op.type == OpType::Send) {
        r.send_header = op.headers[index];
    } else {
        r.remote_addr = op.remote_addr + chunk.offset;
        std::size_t rk = hca_offset_[slot.provider] + slot.rail.remote_entry;
        r.rkey = slot.rail.rail->kind() == TransportKind::Rdma && rk < op.remote.rkeys.size() ? op.remote.rkeys[rk]
                                                                                              : op.remote.tcp_key;
    }
    if (op.type == OpType::Atomic) {
        r.compare_add = op.atomic.compare_add;
        r.swap = op.atomic.swap;
        r.atomic_id = op.seq;  // the same on every attempt: a ledger target executes it once
    }
    Status s = slot.rail.rail->post(r);
    if (s.code() == Code::Busy) {
        // The rail's queue is full: not a fault; post again when it drains.
        atomic_out_of_step(conn, op);
        ++op.deferred;
        deferred_.emplace_back(op.id, index);
        return;
    }
    if (!s) {
        ++slot.errors;
        metrics_->error(s.code());
        monitor_->record(slot.monitor_id, RailOutcome::SubmitFailed, clock_.now());
        TENT_WARN("rail-submit-failed", "%s: %s", slot.rail.rail->name().c_str(), s.to_string().c_str());
        slot.last_failure = "post failed: " + s.to_string();
        piece_failed(conn, op, index, chunk.rail, s, FailureKind::Own);
        return;
    }
    if (op.type == OpType::Atomic) {
        PieceState& piece = op.pieces[index];
        piece.atomic_posted = true;
        piece.atomic_path = slot.rail.rail->atomics_deduplicated() ? AtomicPath::Ledger : AtomicPath::Hardware;
        note_atomic_sent(piece.atomic_path, piece.atomic);
    }
    const bool watched = op.type != OpType::Send;
    inflight_nodes_.assign(inflight_, r.cookie, Inflight{op.id, index, chunk.length, watched, level, conn.id});
    slot.solo_cookie = slot.inflight_ops == 0 ? r.cookie : 0;
    ++op.outstanding;
    slot.delivery.posted(now);
    slot.inflight_bytes += chunk.length;
    slot.inflight_by_priority[li] += chunk.length;
    ++slot.inflight_ops;
    if (watched) {
        ++slot.inflight_watched;
        slot.silence.became_busy(watched_.at(now));
    }
}

void Engine::on_rail_completion(Connection& conn, std::size_t rail, const RailCompletion& c) {
    auto it = inflight_.find(c.cookie);
    if (it == inflight_.end()) return;
    Inflight f = it->second;
    inflight_nodes_.erase(inflight_, it);
    RailSlot& slot = conn.rails[rail];
    const TimePoint now = clock_.now();
    if (slot.inflight_ops) --slot.inflight_ops;
    if (f.watched && slot.inflight_watched) --slot.inflight_watched;
    // Any completion shows the path is alive.
    slot.silence.completed(watched_.at(now), slot.inflight_watched > 0);
    if (f.op == 0) {
        on_probe_done(conn, rail, c);
        return;
    }
    slot.inflight_bytes -= std::min(slot.inflight_bytes, f.length);
    auto& level_bytes = slot.inflight_by_priority[static_cast<std::size_t>(f.priority)];
    level_bytes -= std::min(level_bytes, f.length);
    // A remote access error on a rail that still works (a TCP rail's Nack:
    // the peer's engine answered and refused the key, bounds or access) is
    // the request's fault, not the rail's: the rail is not judged on it, or
    // a program's few bad requests would pause every TCP rail to its peer.
    // An HCA's access error fails its QP, so broken() tells the two apart.
    const bool refused = c.outcome == RailOutcome::RemoteAccess && !slot.rail.rail->broken();
    if (!refused) monitor_->record(slot.monitor_id, c.outcome, now);
    if (const auto rate = slot.delivery.completed(c.status.is_ok() ? f.length : 0, now))
        slot.ewma_bw = ewma_update(slot.ewma_bw, *rate, conn.selector->params().bandwidth);
    if (c.status.is_ok()) {
        ++slot.epoch;
        ++slot.ops;
        slot.bytes += f.length;
        if (c.cookie == slot.solo_cookie && f.watched && f.length <= kLatencySampleMaxBytes)
            monitor_->record_latency(slot.monitor_id, c.latency, now);
    } else if (c.outcome == RailOutcome::Flushed && c.status.scope() == Scope::Caller) {
        // The program's doing, not the rail's: a TCP rail refused to place a
        // read into a buffer deregistered in flight (tcp_rail.h, local_gone()).
        TENT_DEBUG("rail-refused", "%s: %s", slot.rail.rail->name().c_str(), c.status.to_string().c_str());
    } else if (refused) {
        metrics_->error(c.status.code());  // the request's error, which the program sees
        TENT_DEBUG("rail-refused", "%s: %s", slot.rail.rail->name().c_str(), c.status.to_string().c_str());
    } else {
        ++slot.errors;
        metrics_->error(c.status.code());
        if (c.outcome == RailOutcome::Flushed) {
            TENT_DEBUG("rail-flushed", "%s: %s", slot.rail.rail->name().c_str(), c.status.to_string().c_str());
        } else {
            slot.last_failure = c.status.to_string();
            TENT_WARN("rail-error", "%s: %s", slot.rail.rail->name().c_str(), c.status.to_string().c_str());
        }
    }
    auto op_it = ops_.find(f.op);
    if (op_it == ops_.end()) return;  // already failed (peer unreachable)
    Op& op = *op_it->second;
    --op.outstanding;
    if (!c.status.is_ok())
        piece_failed(conn, op, f.chunk, rail, c.status,
                     c.outcome == RailOutcome::Flushed ? FailureKind::Collateral : FailureKind::Own);
    if (ops_.count(f.op)) advance(op);
}

bool Engine::higher_priority_active(const Op& op, TimePoint now) const {
    return priority_activity_.higher_active(op.options.priority, now, params_.qos_window.hold);
}

// Small requests of a level with lower-priority work in flight go on the
// connection's lane; lower-priority requests stay off a lane held for a
// higher level.
void Engine::apply_qos_lane(Connection& conn, const Op& op, std::vector<std::size_t>& allowed, TimePoint now) {
    if (!params_.qos_lane || allowed.size() < 2) return;
    const Priority level = op.options.priority;
    const Duration hold = params_.qos_window.hold;
    const bool small = op.type == OpType::Send ? op.length <= params_.send_fragment_size
                                               : op.length <= params_.striping_threshold;
    const bool may_take_lane = small && priority_activity_.lower_active(level);
    if (!may_take_lane && !lane_held(conn.lane, now, hold)) return;
    std::vector<LaneCandidate> candidates;
    for (std::size_t i : allowed) {
        const RailSlot& s = conn.rails[i];
        candidates.push_back({i, monitor_->state(s.monitor_id, now) == RailState::Paused, inflight_below(s, level),
                              s.inflight_bytes});
    }
    if (may_take_lane) {
        if (auto lane = lane_for_small_request(conn.lane, candidates, level, true, now, hold)) {
            conn.lane = QosLane{*lane, level, now};
            allowed.assign(1, *lane);
            return;
        }
    }
    if (!conn.lane.rail) return;
    const std::size_t lane_rail = *conn.lane.rail;
    const bool has_other_rail = std::any_of(candidates.begin(), candidates.end(), [&](const LaneCandidate& c) {
        return !c.paused && c.rail != lane_rail;
    });
    if (lane_excludes(conn.lane, lane_rail, level, has_other_rail, now, hold)) std::erase(allowed, lane_rail);
}

std::uint64_t Engine::inflight_below(const RailSlot& slot, Priority level) const {
    std::uint64_t n = 0;
    for (auto i = static_cast<std::size_t>(level) + 1; i < slot.inflight_by_priority.size(); ++i)
        n += slot.inflight_by_priority[i];
    return n;
}

std::uint64_t Engine::inflight_at_or_below(const RailSlot& slot, Priority level) const {
    return slot.inflight_by_priority[static_cast<std::size_t>(level)] + inflight_below(slot, level);
}

// Why a piece of `level` would wait for the rail now: the QoS window (while
// higher-priority work is active) or the rail queue; post_chunk() and
// release_held() ask the same question.
Engine::HoldReason Engine::hold_reason(const RailSlot& slot, Priority level, std::uint64_t length,
                                       bool higher_active) const {
    if (!qos_admits(length, inflight_at_or_below(slot, level), higher_active, params_.qos_window))
        return HoldReason::QosWindow;
    if (!rail_queue_admits(slot.inflight_bytes, params_.rail_queue)) return HoldReason::RailQueue;
    return HoldReason::None;
}

// Posts the rail's held pieces that the QoS window and the rail queue admit
// now, high before medium before low, in order within a level. A rail that
// failed meanwhile takes them all: post_chunk() then moves each to another
// rail.
void Engine::release_held(Connection& conn, std::size_t rail) {
    RailSlot& slot = conn.rails[rail];
    bool any = false;
    for (std::size_t li = 0; li < slot.held.size(); ++li) any = any || !slot.held[li].empty();
    if (!any) return;  // the common case, without a clock reading
    const TimePoint now = clock_.now();
    // Pieces released in one turn leave together: a TCP rail sends them in
    // one sendmsg instead of one each (the 32 read requests of a 4 MiB
    // stretch released as the stretch before completes).
    std::optional<PostsTogether> together;
    if (slot.rail.rail) together.emplace(*slot.rail.rail);
    for (std::size_t li = 0; li < slot.held.size(); ++li) {
        auto& queue = slot.held[li];
        while (!queue.empty()) {
            const HeldPiece piece = queue.front();
            auto it = ops_.find(piece.op);
            if (it == ops_.end()) {  // failed meanwhile
                queue.pop_front();
                slot.held_bytes -= std::min(slot.held_bytes, piece.length);
                continue;
            }
            Op& op = *it->second;
            if (usable(slot) && hold_reason(slot, static_cast<Priority>(li), piece.length,
                                            higher_priority_active(op, now)) != HoldReason::None)
                return;  // lower levels wait behind this one
            queue.pop_front();
            slot.held_bytes -= std::min(slot.held_bytes, piece.length);
            --op.held;
            if (!op.error.is_ok()) {
                advance(op);
                continue;
            }
            post_chunk(op, piece.chunk, true);
            if (auto still_open = ops_.find(piece.op); still_open != ops_.end()) advance(*still_open->second);
        }
    }
}

// After a completion or a retried post: once nothing of the op is in flight
// or waiting, post the chunk that ends the transfer, or finish the op.
void Engine::advance(Op& op) {
    if (op.outstanding > 0 || op.deferred > 0 || op.waiting > 0 || op.held > 0) return;
    if (op.error.is_ok() && op.planned && op.next_chunk < op.chunks.size()) {
        // Everything else landed: now the chunk that ends the transfer.
        post_chunk(op, op.next_chunk);
        if (op.outstanding > 0 || op.deferred > 0 || op.waiting > 0 || op.held > 0) return;
    }
    finish_op(op.id);
}

bool Engine::retry_deferred() {
    bool any = false;
    for (std::size_t n = deferred_.size(); n > 0; --n) {
        auto [op_id, index] = deferred_.front();
        deferred_.pop_front();
        auto it = ops_.find(op_id);
        if (it == ops_.end()) continue;  // failed meanwhile
        Op& op = *it->second;
        --op.deferred;
        if (!op.error.is_ok()) {
            advance(op);
            continue;
        }
        post_chunk(op, index);
        any = true;
        if (auto still_open = ops_.find(op_id); still_open != ops_.end()) advance(*still_open->second);
    }
    return any;
}

void Engine::finish_op(std::uint64_t op_id) {
    auto it = ops_.find(op_id);
    if (it == ops_.end()) return;
    std::unique_ptr<Op> op = std::move(it->second);
    ops_nodes_.erase(ops_, it);
    const TimePoint now = clock_.now();
    priority_activity_.finished(op->options.priority, now);
    if (auto conn = connections_.find(op->peer); conn != connections_.end()) {
        // The peer delivers messages strictly in order: a message given up
        // here would hold up every later one there, for good (also once the
        // rails are back). It is told to go on without it.
        if (op->type == OpType::Send && op->msg_seq != 0 && !op->error.is_ok())
            send_control(*conn->second, wire::Frame{0, 0, conn->second->id, 0, wire::SendAbandoned{op->msg_seq}});
        atomic_closed(*conn->second, *op);
        QosLane& lane = conn->second->lane;
        if (lane.rail && lane.level == op->options.priority) lane.last_used = now;
    }
    EngineCompletion c{op->options.cookie, op->type, op->error, op->error.is_ok() ? op->length : 0, op->peer};
    push_completion(std::move(c));
    op_pool_.give_back(std::move(op));
}

void Engine::on_message(Connection& conn, const RailMessage& message) {
    auto header = decode_send_header(message.header);
    if (!header) {
        TENT_WARN("send-bad-header", "message from %s dropped: %s", conn.peer.hostname.c_str(),
                  header.status().to_string().c_str());
        return;
    }
    // The common case (a message in one fragment, in order) is delivered
    // from the rail's buffer; the reassembler copies only what must wait.
    if (conn.reassembler.next_whole(*header, message.payload.size())) {
        if (deliver_one(conn, message.payload)) {
            conn.reassembler.release_next();
            if (conn.credit.due()) grant_credit(conn);
            return;
        }
    }
    if (Status s = conn.reassembler.add(*header, message.payload); !s) {
        TENT_WARN("send-bad-fragment", "fragment from %s dropped: %s", conn.peer.hostname.c_str(),
                  s.to_string().c_str());
        return;
    }
    deliver(conn);
}

bool Engine::deliver_one(Connection& conn, std::span<const std::uint8_t> m) {
    RecvCallback callback;
    PostedRecv recv{};
    bool have_recv = false;
    {
        std::lock_guard lock(mutex_);
        callback = recv_callback_;
        if (!callback && !recvs_.empty()) {
            recv = recvs_.front();
            recvs_.pop_front();
            have_recv = true;
        }
    }
    if (callback) {
        callback(conn.id, m);
    } else if (have_recv) {
        std::uint64_t n = std::min<std::uint64_t>(recv.length, m.size());
        if (n) std::memcpy(recv.buffer, m.data(), n);
        Status s = n < m.size() ? Status(Code::OutOfRange, "message of " + std::to_string(m.size()) +
                                                               " bytes truncated to " + std::to_string(n))
                                : Status::ok();
        push_completion({recv.cookie, OpType::Recv, s, m.size(), conn.id});
    } else {
        return false;  // held until a buffer is posted
    }
    conn.credit.released(m.size());
    return true;
}

void Engine::deliver(Connection& conn, bool credit_owed) {
    while (const std::vector<std::uint8_t>* m = conn.reassembler.ready()) {
        if (!deliver_one(conn, *m)) break;
        conn.reassembler.pop_ready();
    }
    if (credit_owed || conn.credit.due()) grant_credit(conn);
}

} // namespace tent
