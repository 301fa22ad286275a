// Rail care on the progress thread: declare rails failed (their own errors,
// local port events, silence), re-arm failed verbs rails with the peer once
// the health layer allows (cooldown over, probe due, port active again),
// probe them, and put them back in use when the probe is answered.
//
// Re-arming a verbs rail needs both queue pairs reset (both restart at their
// initial PSNs). Over the control channel, for one rail id:
//   asker -> Probe{nonce}: the peer fails its end if it was still in use
//            (its work is flushed and replayed elsewhere) and re-arms it
//            once nothing is outstanding;
//   peer  -> ProbeReply{nonce}: the asker re-arms its end and posts a probe
//            (a zero-length RDMA write the peer's HCA must acknowledge);
//   asker -> ProbeReply{nonce} when the probe came back: the path works both
//            ways, and both sides use the rail again.
// The peer never probes first: its probe would reach a queue pair that is
// not re-armed yet and wait for a retransmission. If both ask at once, the
// connection's initiator wins.
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

void Engine::declare_failed(RailSlot& slot, const std::string& why) {
    slot.last_failure = why;
    slot.silence.reset();
    if (!slot.rail.rail->broken()) {
        if (Status s = slot.rail.rail->fail(); !s)
            TENT_WARN("rail-fail-failed", "%s: %s", slot.rail.rail->name().c_str(), s.to_string().c_str());
    }
    if (slot.care == RailCare::InUse || slot.care == RailCare::Probing) {
        // A rail with nothing to reset (its path failed, the rail object is
        // intact) stays in use; the health layer's pause keeps work away.
        slot.care = slot.rail.rail->broken() ? RailCare::Broken : RailCare::InUse;
        slot.care_since = clock_.now();
    }
}

void Engine::care_for_rails(Connection& conn, const std::vector<RailId>& due, TimePoint now) {
    // Rails stalled together point at something they share (a starved CPU,
    // a receiver that is not reposting buffers), not at their paths: then a
    // rail is declared failed only after four times its silence limit.
    std::size_t stalled = 0;
    for (const auto& s : conn.rails)
        if (s.rail.rail->kind() == TransportKind::Rdma && s.silence.silent_for(now) * 2 > s.silence.limit(params_.silence))
            ++stalled;
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        RailSlot& slot = conn.rails[i];
        Rail& rail = *slot.rail.rail;
        const bool rdma = rail.kind() == TransportKind::Rdma;
        monitor_->set_lossy(slot.monitor_id, rail.lossy(), now);
        // Four times the limit when several rails stall together (see
        // above), and for the probe that ends a re-arm: it carries no
        // data, so waiting longer costs the application nothing, while
        // declaring it silent on a loaded machine starts another re-arm
        // and counts towards a pause. (Probes of rails that waiting
        // pieces may use keep the short limit: they decide how soon a
        // peer is found unreachable.)
        const bool patient = stalled > 1 || (slot.care == RailCare::Probing && slot.care_nonce != 0);
        switch (slot.care) {
        case RailCare::InUse:
        case RailCare::Probing:
            if (rail.broken()) {
                if (slot.care == RailCare::Probing) break;  // the probe's completion decides
                slot.care = RailCare::Broken;
                slot.care_since = now;
                slot.silence.reset();
                if (slot.last_failure.empty()) slot.last_failure = "failed";
                break;
            }
            if (failover_on() && rdma && slot.silence.silent(now, params_.silence) &&
                (!patient || slot.silence.silent_for(now) > 4 * slot.silence.limit(params_.silence))) {
                auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(slot.silence.silent_for(now)).count();
                std::string why = "no completion for " + std::to_string(ms) + " ms with " +
                                  std::to_string(slot.inflight_watched) + " operations outstanding";
                TENT_WARN("rail silent", "%s: %s: declared failed", rail.name().c_str(), why.c_str());
                monitor_->record(slot.monitor_id, RailOutcome::Timeout, now);
                declare_failed(slot, why);
                break;
            }
            // A rail paused by its errors but intact is probed where it is;
            // so is an idle rail that waiting pieces failed on (a success
            // lets them come back to it).
            if (slot.care == RailCare::InUse && slot.inflight_ops == 0) {
                if (std::find(due.begin(), due.end(), slot.monitor_id) != due.end()) {
                    monitor_->probe_sent(slot.monitor_id, now);
                    post_probe(conn, i);
                } else if (!conn.parked.empty() && failover_on() &&
                           monitor_->state(slot.monitor_id, now) != RailState::Paused &&
                           now - slot.last_probe >= kWaitingProbeInterval) {
                    post_probe(conn, i);
                }
            }
            break;
        case RailCare::Broken: {
            // A closed TCP rail does not come back; a verbs rail is re-armed
            // once its flushes are in and the health layer allows it.
            if (!failover_on() || !rdma || slot.inflight_ops > 0) break;
            // The initiator asks first; the other side asks only if no
            // request came within failover_timeout_ms, so that the two
            // sides' requests rarely cross.
            if (!conn.initiator && now - slot.care_since < params_.failover_timeout) break;
            bool allowed = monitor_->state(slot.monitor_id, now) != RailState::Paused;
            if (!allowed && std::find(due.begin(), due.end(), slot.monitor_id) != due.end()) {
                monitor_->probe_sent(slot.monitor_id, now);
                allowed = true;
            }
            if (!allowed) break;
            slot.care_nonce = conn.take_nonce();
            slot.care = RailCare::AwaitingPeer;
            slot.care_since = now;
            send_control(conn, wire::Frame{0, slot.rail.rail_id, conn.id, 0, wire::Probe{slot.care_nonce, now_ns(now)}});
            break;
        }
        case RailCare::AwaitingPeer:
        case RailCare::AwaitingProof:
            if (now - slot.care_since >= params_.failover_timeout) {
                slot.last_failure = slot.care == RailCare::AwaitingPeer ? "the peer did not re-arm its end"
                                                                        : "the peer's probe did not pass";
                slot.care = RailCare::Broken;
                slot.care_since = now;
                slot.care_nonce = 0;
                monitor_->record(slot.monitor_id, RailOutcome::ProbeFailed, now);
            }
            break;
        case RailCare::PeerAsked: {
            drain_rail(conn, i);
            if (slot.inflight_ops > 0) break;  // flushes still to come
            Status s = rail.rearm();
            if (s.code() == Code::Busy) break;
            if (!s) {
                slot.care = RailCare::Broken;
                slot.care_since = now;
                slot.last_failure = s.to_string();
                break;
            }
            slot.silence.reset();
            slot.care = RailCare::AwaitingProof;
            slot.care_since = now;
            send_control(conn, wire::Frame{0, slot.rail.rail_id, conn.id, 0,
                                           wire::ProbeReply{slot.care_nonce, now_ns(now)}});
            break;
        }
        }
    }
}

// Progress of one rail: its completions accounted, its messages delivered.
// Also run on a failed rail right before a reset, which would discard
// messages that arrived before the failure.
bool Engine::drain_rail(Connection& conn, std::size_t index) {
    std::vector<RailCompletion> done;
    conn.rails[index].rail.rail->progress(done, [&](const RailMessage& m) { on_message(conn, m); });
    for (const auto& c : done) on_rail_completion(conn, index, c);
    return !done.empty();
}

void Engine::post_probe(Connection& conn, std::size_t index) {
    RailSlot& slot = conn.rails[index];
    const TimePoint now = clock_.now();
    RailOp op;
    op.cookie = next_cookie_++;
    op.opcode = RailOpcode::Probe;
    Status s = slot.rail.rail->post(op);
    if (!s) {
        monitor_->record(slot.monitor_id, RailOutcome::ProbeFailed, now);
        slot.last_failure = "probe not posted: " + s.to_string();
        declare_failed(slot, slot.last_failure);
        return;
    }
    inflight_[op.cookie] = Inflight{0, index, 0, now, true, Priority::High};
    ++slot.inflight_watched;
    slot.last_probe = now;
    ++slot.inflight_ops;
    slot.silence.became_busy(now);
    slot.care = RailCare::Probing;
    slot.care_since = now;
}

void Engine::on_probe_done(Connection& conn, std::size_t index, const RailCompletion& c) {
    RailSlot& slot = conn.rails[index];
    const TimePoint now = clock_.now();
    const bool answered = c.outcome == RailOutcome::ProbeAnswered || c.outcome == RailOutcome::Success;
    monitor_->record(slot.monitor_id, answered ? RailOutcome::ProbeAnswered : RailOutcome::ProbeFailed, now);
    if (answered) ++slot.epoch;
    if (slot.care != RailCare::Probing) return;
    if (answered && !slot.rail.rail->broken()) {
        slot.care = RailCare::InUse;
        if (slot.care_nonce) {
            // Part of a re-arm: the peer waits for this to use its end.
            send_control(conn, wire::Frame{0, slot.rail.rail_id, conn.id, 0, wire::ProbeReply{slot.care_nonce, 0}});
            slot.care_nonce = 0;
        }
        TENT_INFO("rail rearmed", "%s carries traffic again", slot.rail.rail->name().c_str());
        return;
    }
    slot.care_nonce = 0;
    declare_failed(slot, "probe failed: " + c.status.to_string());
}

void Engine::on_peer_rearm_request(Connection& conn, std::uint16_t rail_id, std::uint32_t nonce) {
    for (auto& slot : conn.rails) {
        if (slot.rail.rail_id != rail_id || slot.rail.rail->kind() != TransportKind::Rdma) continue;
        if (slot.care == RailCare::AwaitingPeer && conn.initiator) return;  // ours wins; the peer serves it
        if (slot.rail.rail->broken() || slot.care != RailCare::InUse) {
            slot.silence.reset();
        } else {
            declare_failed(slot, "re-armed at the peer's request");
        }
        slot.care = RailCare::PeerAsked;
        slot.care_nonce = nonce;
        slot.care_since = clock_.now();
        return;
    }
}

void Engine::on_peer_rearmed(Connection& conn, std::uint16_t rail_id, std::uint32_t nonce) {
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        RailSlot& slot = conn.rails[i];
        if (slot.rail.rail_id != rail_id || slot.care_nonce != nonce) continue;
        if (slot.care == RailCare::AwaitingProof) {
            // The asker's probe passed: the path works both ways.
            slot.care = RailCare::InUse;
            slot.care_nonce = 0;
            slot.silence.reset();
            ++slot.epoch;
            monitor_->record(slot.monitor_id, RailOutcome::ProbeAnswered, clock_.now());
            TENT_INFO("rail rearmed", "%s carries traffic again", slot.rail.rail->name().c_str());
            return;
        }
        if (slot.care != RailCare::AwaitingPeer) return;
        drain_rail(conn, i);
        Status s = slot.inflight_ops ? Status(Code::Busy, "operations still outstanding") : slot.rail.rail->rearm();
        if (!s) {
            slot.care = RailCare::Broken;
            slot.care_since = clock_.now();
            slot.last_failure = "re-arm failed: " + s.to_string();
            monitor_->record(slot.monitor_id, RailOutcome::ProbeFailed, clock_.now());
            return;
        }
        slot.silence.reset();
        post_probe(conn, i);
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
            for (auto& slot : conn->rails)
                if (slot.rail.local_device == e.device &&
                    (e.event == AsyncEvent::DeviceFatal || slot.rail.local_port == e.port))
                    declare_failed(slot, why);
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
    for (auto& slot : conn.rails)
        if (slot.rail.rail->kind() == TransportKind::Rdma && slot.rail.remote_device == device &&
            (event == AsyncEvent::DeviceFatal || slot.rail.remote_port == ps.port))
            declare_failed(slot, why);
}

void Engine::on_rail_event(const RailEvent& event) {
    if (event.rail >= monitor_names_.size() || !metrics_) return;
    const std::string& name = monitor_names_[event.rail];
    if (event.kind == RailEvent::Kind::Paused) metrics_->rail_paused(name);
    if (event.kind == RailEvent::Kind::Recovered) metrics_->rail_recovered(name, recovery_reason_name(event.reason));
}

} // namespace tent
