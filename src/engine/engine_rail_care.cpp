// Rail care on the progress thread: declare rails failed (their own errors,
// local port events, silence), re-arm failed rails with the peer once the
// health layer allows (cooldown over, probe due, port active again), probe
// them, and put them back in use when the probe is answered. The decisions
// are rearm_handshake.h's transition function; this file feeds it events
// and carries out its actions. Verbs rails re-arm by resetting both queue
// pairs; TCP rails by a new socket (the leader dials, tcp_rail.h).
#include <algorithm>

#include "common/log.h"
#include "engine/connection.h"
#include "engine/engine.h"
#include "engine/op.h"
#include "health/rail_monitor.h"

namespace tent {

namespace {
// How often an idle, unpaused rail is probed while pieces wait for a rail.
constexpr Duration kWaitingProbeInterval = std::chrono::milliseconds(100);

std::uint64_t now_ns(TimePoint t) {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}
} // namespace

void Engine::declare_failed(Connection& conn, std::size_t index, const std::string& why) {
    RailSlot& slot = conn.rails[index];
    slot.last_failure = why;
    slot.silence.reset();
    if (!slot.rail.rail->broken()) {
        if (Status s = slot.rail.rail->fail(); !s)
            TENT_WARN("rail-fail-failed", "%s: %s", slot.rail.rail->name().c_str(), s.to_string().c_str());
    }
    // A rail with nothing to reset (its path failed, the rail object is
    // intact) stays in use; the health layer's pause keeps work away.
    if (!slot.rail.rail->broken()) return;
    RearmEvent e;
    e.kind = RearmEvent::Kind::Failed;
    care_event(conn, index, e);
}

void Engine::care_event(Connection& conn, std::size_t index, const RearmEvent& event) {
    RailSlot& slot = conn.rails[index];
    const TimePoint now = clock_.now();
    const RearmRole role = conn.initiator ? RearmRole::Leader : RearmRole::Follower;
    // Only the leader draws attempt nonces, and only to start an attempt.
    const bool starts = role == RearmRole::Leader && event.kind == RearmEvent::Kind::Tick &&
                        slot.care.care == RailCare::Broken && event.allowed && event.idle;
    const std::uint32_t fresh = starts ? conn.take_nonce() : 0;
    const RearmStep step = rearm_step(role, slot.care, event, now, params_.failover_timeout, fresh);
    if (step.next.care != slot.care.care)
        TENT_DEBUG("rail care", "%s: %s -> %s (attempt %u)", slot.rail.rail->name().c_str(),
                   rail_care_name(slot.care.care), rail_care_name(step.next.care), step.next.attempt);
    slot.care = step.next;
    const RearmActions& a = step.actions;
    Rail& rail = *slot.rail.rail;
    const std::uint16_t rail_id = slot.rail.rail_id;
    if (a.fail_rail) {
        slot.silence.reset();
        // A broken rail is failed again only to abandon a re-arm under way
        // (a TCP dial), so that the next attempt starts afresh.
        if (!rail.broken() || step.next.care == RailCare::Broken) {
            if (slot.last_failure.empty()) slot.last_failure = "re-armed";
            if (Status s = rail.fail(); !s)
                TENT_WARN("rail-fail-failed", "%s: %s", rail.name().c_str(), s.to_string().c_str());
        }
    }
    if (a.fail_rail && slot.care.care == RailCare::InUse && rail.broken()) {
        RearmEvent failed;
        failed.kind = RearmEvent::Kind::Failed;
        care_event(conn, index, failed);
    }
    if (a.gave_up) monitor_->record(slot.monitor_id, RailOutcome::ProbeFailed, now);
    if (a.send_ask || a.send_nudge)
        send_control(conn, wire::Frame{0, rail_id, conn.id, 0, wire::Probe{a.nonce, now_ns(now)}});
    if (a.send_ready || a.send_proven)
        send_control(conn, wire::Frame{0, rail_id, conn.id, 0, wire::ProbeReply{a.nonce, now_ns(now)}});
    if (a.back_in_use) {
        slot.silence.reset();
        if (role == RearmRole::Follower) {  // the leader's own probe was counted as it completed
            ++slot.epoch;
            monitor_->record(slot.monitor_id, RailOutcome::ProbeAnswered, now);
        }
        TENT_INFO("rail rearmed", "%s carries traffic again", rail.name().c_str());
    }
    if (a.rearm) {
        // Messages that arrived before the failure are delivered first: a
        // reset would discard them.
        drain_rail(conn, index);
        RearmEvent result;
        Status s = conn.rails[index].inflight_ops ? Status(Code::Busy, "operations still outstanding") : rail.rearm();
        if (s) {
            conn.rails[index].silence.reset();
            result.kind = RearmEvent::Kind::RearmDone;
        } else if (s.code() == Code::Busy) {
            result.kind = RearmEvent::Kind::RearmBusy;
        } else {
            conn.rails[index].last_failure = "re-arm failed: " + s.to_string();
            result.kind = RearmEvent::Kind::RearmFailed;
        }
        care_event(conn, index, result);
        return;
    }
    if (a.post_probe) post_probe(conn, index);
}

void Engine::care_for_rails(Connection& conn, const std::vector<RailId>& due, TimePoint now) {
    // Rails stalled together point at something they share (a starved CPU,
    // a receiver that is not reposting buffers), not at their paths: then a
    // rail is declared failed only after four times its silence limit.
    // Silence counts only time this engine watched (watched_time.h).
    const TimePoint seen = watched_.at(now);
    std::size_t stalled = 0;
    for (const auto& s : conn.rails)
        if (s.rail.rail->kind() == TransportKind::Rdma && s.silence.silent_for(seen) * 2 > s.silence.limit(params_.silence))
            ++stalled;
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        RailSlot& slot = conn.rails[i];
        Rail& rail = *slot.rail.rail;
        const bool rdma = rail.kind() == TransportKind::Rdma;
        monitor_->set_lossy(slot.monitor_id, rail.lossy(), now);
        const bool is_due = std::find(due.begin(), due.end(), slot.monitor_id) != due.end();
        const RailCare care = slot.care.care;
        if (care == RailCare::InUse || care == RailCare::Checking || care == RailCare::Probing) {
            if (rail.broken()) {
                // The probe's completion decides for a probing rail.
                if (care == RailCare::Probing || care == RailCare::Checking) continue;
                if (slot.last_failure.empty()) slot.last_failure = "failed";
                slot.silence.reset();
                RearmEvent e;
                e.kind = RearmEvent::Kind::Failed;
                care_event(conn, i, e);
                continue;
            }
            // Four times the limit when several rails stall together (see
            // above), and for the probe that ends a re-arm: it carries no
            // data, so waiting longer costs the application nothing, while
            // declaring it silent on a loaded machine starts another re-arm
            // and counts towards a pause. (Probes of rails that waiting
            // pieces may use keep the short limit: they decide how soon a
            // peer is found unreachable.)
            const bool patient = stalled > 1 || care == RailCare::Probing;
            if (failover_on() && rdma && slot.silence.silent(seen, params_.silence) &&
                (!patient || slot.silence.silent_for(seen) > 4 * slot.silence.limit(params_.silence))) {
                auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(slot.silence.silent_for(seen)).count();
                std::string why = "no completion for " + std::to_string(ms) + " ms with " +
                                  std::to_string(slot.inflight_watched) + " operations outstanding";
                TENT_WARN("rail silent", "%s: %s: declared failed", rail.name().c_str(), why.c_str());
                monitor_->record(slot.monitor_id, RailOutcome::Timeout, now);
                declare_failed(conn, i, why);
                continue;
            }
            // A rail paused by its errors but intact is probed where it is;
            // so is an idle rail that waiting pieces failed on (a success
            // lets them come back to it).
            if (care == RailCare::InUse && slot.inflight_ops == 0) {
                RearmEvent e;
                e.kind = RearmEvent::Kind::HealthProbe;
                if (is_due) {
                    monitor_->probe_sent(slot.monitor_id, now);
                    care_event(conn, i, e);
                } else if (!conn.parked.empty() && failover_on() &&
                           monitor_->state(slot.monitor_id, now) != RailState::Paused &&
                           now - slot.last_probe >= kWaitingProbeInterval) {
                    care_event(conn, i, e);
                }
            }
            continue;
        }
        // Re-arming: rails whose transport cannot bring them back stay failed.
        if (!failover_on() || !rail.rearmable()) continue;
        if (care == RailCare::Ready && rail.broken()) {  // the re-armed end broke before its proof
            RearmEvent e;
            e.kind = RearmEvent::Kind::Failed;
            care_event(conn, i, e);
            continue;
        }
        RearmEvent e;
        e.kind = RearmEvent::Kind::Tick;
        e.idle = slot.inflight_ops == 0;
        const bool unpaused = monitor_->state(slot.monitor_id, now) != RailState::Paused;
        e.allowed = unpaused || is_due;
        const RearmState before = slot.care;
        care_event(conn, i, e);
        // An attempt started on a due probe counts as that probe.
        if (!unpaused && before.care == RailCare::Broken && conn.rails[i].care.care != RailCare::Broken)
            monitor_->probe_sent(slot.monitor_id, now);
        if (care == RailCare::Resetting) drain_rail(conn, i);  // flushes still to come
    }
}

// Progress of one rail: its completions accounted, its messages delivered.
// Also run on a failed rail right before a reset, which would discard
// messages that arrived before the failure.
bool Engine::drain_rail(Connection& conn, std::size_t index) {
    // The vector's storage is reused from turn to turn (a nested call takes
    // a fresh one): no allocation per turn. Not thread_local: a driver may
    // run a turn during exit(), after the thread's own objects are gone.
    std::vector<RailCompletion> done;
    done.swap(drain_spare_);
    SteadyClock::Turn turn;  // the rail's completions, taken at one moment: one reading for them
    conn.rails[index].rail.rail->progress(done, [&](const RailMessage& m) { on_message(conn, m); });
    for (const auto& c : done) on_rail_completion(conn, index, c);
    const bool any = !done.empty();
    done.clear();
    if (done.capacity() > drain_spare_.capacity()) done.swap(drain_spare_);
    return any;
}

void Engine::post_probe(Connection& conn, std::size_t index) {
    RailSlot& slot = conn.rails[index];
    const TimePoint now = clock_.now();
    RailOp op;
    op.cookie = next_cookie_++;
    op.opcode = RailOpcode::Probe;
    Status s = slot.rail.rail->post(op);
    if (!s) {
        slot.last_failure = "probe not posted: " + s.to_string();
        RailCompletion failed;
        failed.outcome = RailOutcome::ProbeFailed;
        failed.status = s;
        on_probe_done(conn, index, failed);
        return;
    }
    inflight_[op.cookie] = Inflight{0, index, 0, true, Priority::High, conn.id};
    slot.solo_cookie = 0;
    ++slot.inflight_watched;
    slot.last_probe = now;
    ++slot.inflight_ops;
    slot.silence.became_busy(watched_.at(now));
}

void Engine::on_probe_done(Connection& conn, std::size_t index, const RailCompletion& c) {
    RailSlot& slot = conn.rails[index];
    const TimePoint now = clock_.now();
    const bool answered = c.outcome == RailOutcome::ProbeAnswered || c.outcome == RailOutcome::Success;
    monitor_->record(slot.monitor_id, answered ? RailOutcome::ProbeAnswered : RailOutcome::ProbeFailed, now);
    if (answered) ++slot.epoch;
    if (slot.care.care != RailCare::Probing && slot.care.care != RailCare::Checking) return;
    if (!answered) slot.last_failure = "probe failed: " + c.status.to_string();
    RearmEvent e;
    e.kind = answered && !slot.rail.rail->broken() ? RearmEvent::Kind::ProbePassed : RearmEvent::Kind::ProbeFailed;
    care_event(conn, index, e);
}

void Engine::on_peer_rearm_frame(Connection& conn, std::uint16_t rail_id, std::uint32_t nonce, bool reply) {
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        RailSlot& slot = conn.rails[i];
        if (slot.rail.rail_id != rail_id) continue;
        if (!slot.rail.rail->rearmable()) return;
        RearmEvent e;
        e.nonce = nonce;
        if (conn.initiator)
            e.kind = reply ? RearmEvent::Kind::PeerReady : RearmEvent::Kind::PeerNudge;
        else
            e.kind = reply ? RearmEvent::Kind::PeerProven : RearmEvent::Kind::PeerAsk;
        if (e.kind == RearmEvent::Kind::PeerAsk && slot.care.care == RailCare::InUse && !slot.rail.rail->broken())
            slot.last_failure = "re-armed at the peer's request";
        care_event(conn, i, e);
        return;
    }
}

void Engine::poll_device_events() {
    std::vector<DeviceEvent> events;
    for (auto& p : providers_) p->poll_events(events);
    if (events.empty()) return;
    const TimePoint now = clock_.now();
    for (const DeviceEvent& e : events) {
        monitor_->on_async_event(e.device, e.port, e.event, now);
        if (e.event != AsyncEvent::PortError && e.event != AsyncEvent::DeviceFatal) continue;
        const std::string why = e.event == AsyncEvent::DeviceFatal
                                    ? "local device " + e.device + " reported a fatal error"
                                    : "local port " + e.device + ":" + std::to_string(e.port) + " is down";
        for (auto& [id, conn] : connections_)
            for (std::size_t i = 0; i < conn->rails.size(); ++i) {
                const RailSlot& slot = conn->rails[i];
                if (slot.rail.local_device == e.device &&
                    (e.event == AsyncEvent::DeviceFatal || slot.rail.local_port == e.port))
                    declare_failed(*conn, i, why);
            }
    }
    // Peers attribute the fault to this port and leave it at once, without
    // waiting for their own timeouts.
    for (const DeviceEvent& e : events) {
        auto hca = std::find_if(blob_.hcas.begin(), blob_.hcas.end(),
                                [&](const wire::HcaAddress& h) { return h.device == e.device; });
        if (hca == blob_.hcas.end()) continue;
        wire::PortState ps;
        ps.hca_index = static_cast<std::uint8_t>(hca - blob_.hcas.begin());
        ps.port = static_cast<std::uint8_t>(std::max(1, e.port));
        ps.condition = e.event == AsyncEvent::PortActive   ? wire::PortCondition::Active
                       : e.event == AsyncEvent::PortError ? wire::PortCondition::Down
                                                          : wire::PortCondition::DeviceFatal;
        for (auto& [id, conn] : connections_) send_control(*conn, wire::Frame{0, 0, conn->id, 0, ps});
    }
}

void Engine::on_peer_port_state(Connection& conn, const wire::PortState& ps) {
    if (ps.hca_index >= conn.peer.hcas.size()) return;
    const std::string& device = conn.peer.hcas[ps.hca_index].device;
    const AsyncEvent event = ps.condition == wire::PortCondition::Active ? AsyncEvent::PortActive
                             : ps.condition == wire::PortCondition::Down ? AsyncEvent::PortError
                                                                         : AsyncEvent::DeviceFatal;
    monitor_->on_remote_event(peer_name(conn), device, ps.port, event, clock_.now());
    if (event == AsyncEvent::PortActive) return;
    const std::string why = event == AsyncEvent::DeviceFatal
                                ? "remote device " + conn.peer.hostname + " " + device + " reported a fatal error"
                                : "remote port " + conn.peer.hostname + " " + device + ":" + std::to_string(ps.port) +
                                      " is down";
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        const RailSlot& slot = conn.rails[i];
        if (slot.rail.rail->kind() == TransportKind::Rdma && slot.rail.remote_device == device &&
            (event == AsyncEvent::DeviceFatal || slot.rail.remote_port == ps.port))
            declare_failed(conn, i, why);
    }
}

void Engine::on_rail_event(const RailEvent& event) {
    if (event.rail >= monitor_names_.size() || !metrics_) return;
    const std::string& name = monitor_names_[event.rail];
    if (event.kind == RailEvent::Kind::Paused) metrics_->rail_paused(name);
    if (event.kind == RailEvent::Kind::Recovered) metrics_->rail_recovered(name, recovery_reason_name(event.reason));
}

} // namespace tent
