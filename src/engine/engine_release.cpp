// Departed peers. A connection found unreachable (its peer closed the
// control connection, said goodbye, or the channel failed) has had its
// requests finished with an error by mark_unreachable(); at the end of the
// same turn it is released: its rails are failed and drained (what they
// still hold completes, flushed), and the connection goes with its
// descriptors, buffers, health records and metric series. A server whose
// peers come and go thus keeps nothing of them but the peer id, so that a
// post to a departed peer still answers "peer is unreachable" (tent(7),
// "Many peers", states the bounds; tests/unit/engine/test_many_peers
// measures them).
#include "common/log.h"
#include "engine/connection.h"
#include "engine/engine.h"
#include "health/rail_monitor.h"
#include "metrics/tent_metrics.h"

namespace tent {

void Engine::release_departed() {
    for (auto it = connections_.begin(); it != connections_.end();) {
        Connection& conn = *it->second;
        if (!conn.unreachable) {
            ++it;
            continue;
        }
        if (!conn.rails.empty() || conn.control) release_paths(conn);
        // Whole messages still waiting for a receive buffer keep the
        // connection (nothing but them) until they are delivered.
        if (conn.reassembler.ready()) {
            ++it;
            continue;
        }
        TENT_DEBUG("peer-released", "peer %s: connection released", conn.peer.hostname.c_str());
        const PeerId id = conn.id;
        it = connections_.erase(it);
        std::lock_guard lock(mutex_);
        peers_.erase(id);  // unreachable_ keeps answering posts to it
    }
}

void Engine::release_paths(Connection& conn) {
    // What arrived before the failure is delivered first, then everything
    // still outstanding completes, flushed.
    for (std::size_t i = 0; i < conn.rails.size(); ++i) {
        drain_rail(conn, i);
        Rail& rail = *conn.rails[i].rail.rail;
        if (!rail.broken()) (void)rail.fail();
        drain_rail(conn, i);
    }
    // What a rail has not flushed yet (a queue pair's flush completions
    // come later) can no longer be collected once the rail is gone.
    std::erase_if(inflight_, [&](const auto& entry) { return entry.second.peer == conn.id; });
    for (const RailSlot& slot : conn.rails) {
        // What the rail carried, as the C API's rail statistics would have
        // said: they no longer list it.
        TENT_INFO("rail-released", "rail %s: %llu ops, %llu bytes, %llu errors (peer %s departed)",
                  slot.rail.rail->name().c_str(), static_cast<unsigned long long>(slot.ops),
                  static_cast<unsigned long long>(slot.bytes), static_cast<unsigned long long>(slot.errors),
                  conn.peer.hostname.c_str());
        monitor_->remove_rail(slot.monitor_id);
        const std::string& name = slot.rail.rail->name();
        bool shared = false;  // another connection's rail of the same name keeps its series
        for (const auto& [id, other] : connections_)
            for (const RailSlot& s : other->rails)
                shared = shared || (other.get() != &conn && s.rail.rail->name() == name);
        if (!shared) metrics_->forget_rail(name);
    }
    // Nothing of this connection refers to its rails by index any more:
    // its requests are finished, its pieces no longer parked or held.
    conn.rails.clear();
    conn.parked.clear();
    conn.syncs.clear();
    conn.lane = QosLane{};
    conn.control.reset();
    conn.control_in.clear();
    conn.control_in.shrink_to_fit();
    conn.control_out = ControlOutbox{};
    stats_stale_ = true;
}

} // namespace tent
