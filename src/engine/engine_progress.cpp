// The progress thread: adopts new connections, starts submitted requests in
// priority order, drives every rail, serves the passive side of the control
// channel and watches each peer's control connection for its going away.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/log.h"
#include "engine/connection.h"
#include "engine/engine.h"
#include "engine/op.h"
#include "health/rail_monitor.h"
#include "policy/qos_queue.h"

namespace tent {

void Engine::run() {
    while (!stop_.load()) {
        bool busy = progress_once();
        if (stop_.load()) break;
        wait_for_work(busy);
    }
}

namespace {

// How long the progress thread may go without reading its listeners,
// device events and control sockets while it is too busy to poll() them.
constexpr auto kServiceInterval = std::chrono::milliseconds(1);

} // namespace

bool Engine::progress_once() {
    std::deque<std::unique_ptr<Op>> submitted;
    std::vector<std::unique_ptr<Connection>> connected;
    bool recvs_changed;
    {
        std::lock_guard lock(mutex_);
        submitted.swap(submitted_);
        connected.swap(connecting_);
        recvs_changed = recvs_changed_;
        recvs_changed_ = false;
    }
    bool busy = !submitted.empty() || !connected.empty();
    for (auto& c : connected) add_connection(std::move(c));
    // A new connection's control socket may already hold frames.
    const bool service = service_due_ || !connected.empty();
    if (service) poll_device_events();
    // Waiting pieces first: they were posted before anything new.
    for (auto& [id, conn] : connections_) serve_parked(*conn, clock_.now());
    // Through the QoS queue, so a burst is started high priority first.
    for (auto& op : submitted) {
        qos_->push(op->id, op->options.priority);
        priority_activity_.started(op->options.priority);
        ops_[op->id] = std::move(op);
    }
    while (auto next = qos_->pop()) start_op_by_id(next->id);

    if (service) {
        accept_connections();
        for (auto& p : providers_) p->poll_incoming(*this);
    }

    for (auto& [id, conn] : connections_) {
        Connection& c = *conn;
        for (std::size_t r = 0; r < c.rails.size(); ++r) {
            busy = drain_rail(c, r) || busy;
            // What the completions made room for, or the window opened,
            // or the rail failed (its pieces then move elsewhere).
            release_held(c, r);
        }
        if (service) read_control(c);
        if (recvs_changed) deliver(c);
    }
    if (!deferred_.empty()) retry_deferred();
    const TimePoint now = clock_.now();
    if (service) {
        service_due_ = false;
        last_service_ = now;
    }
    // Cooldown expiry and the slow-rail verdict (a median per rail) need
    // not run on every loop of a busy thread.
    if (now - last_monitor_tick_ >= kServiceInterval) {
        monitor_->tick(now);
        last_monitor_tick_ = now;
    }
    const std::vector<RailId> due = monitor_->due_probes(now);
    for (auto& [id, conn] : connections_) {
        if (conn->unreachable) continue;
        care_for_rails(*conn, due, now);
        expire_syncs(*conn, now);
    }
    if (busy || recvs_changed) refresh_stats();
    return busy;
}

void Engine::wait_for_work(bool busy) {
    const TimePoint now = clock_.now();
    if (now - last_service_ >= kServiceInterval) service_due_ = true;
    if (busy) {
        last_busy_ = now;
        return;
    }
    // With work in flight a completion is usually microseconds away: when
    // asked to, look again rather than pay a sleep and a wake-up for it.
    // With none in flight nothing is coming: an idle engine never spins.
    if (!inflight_.empty() && now - last_busy_ < params_.progress_spin) return;
    // About to sleep: arm every rail, then look once more, so a completion
    // that came between the last look and the arming is not slept through.
    bool found = false;
    for (auto& [id, conn] : connections_)
        for (auto& r : conn->rails) r.rail.rail->prepare_to_wait();
    for (auto& [id, conn] : connections_)
        for (std::size_t r = 0; r < conn->rails.size(); ++r) found = drain_rail(*conn, r) || found;
    if (found) {
        refresh_stats();  // as after any turn that found work
        return;
    }
    {
        std::lock_guard lock(mutex_);
        if (!submitted_.empty() || !connecting_.empty() || recvs_changed_) return;
        progress_asleep_ = true;
    }

    std::vector<pollfd> fds;
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    fds.push_back({listen_fd_.get(), POLLIN, 0});
    for (auto& p : providers_) {
        if (p->incoming_fd() >= 0) fds.push_back({p->incoming_fd(), POLLIN, 0});
        for (int fd : p->event_fds()) fds.push_back({fd, POLLIN, 0});
    }
    TimePoint next_timer = TimePoint::max();
    bool waiting = false;  // pieces parked or awaiting a sync: look again soon
    for (auto& [id, conn] : connections_) {
        waiting = waiting || !conn->parked.empty() || !conn->syncs.empty();
        if (!conn->unreachable) fds.push_back({conn->control.get(), POLLIN, 0});
    }
    const std::size_t service_end = fds.size();  // descriptors read when service_due_
    for (auto& [id, conn] : connections_) {
        for (auto& r : conn->rails) {
            const Rail& rail = *r.rail.rail;
            if (rail.wait_fd() >= 0)
                fds.push_back({rail.wait_fd(), static_cast<short>(POLLIN | (rail.wants_write() ? POLLOUT : 0)), 0});
            next_timer = std::min(next_timer, rail.next_timer());
        }
    }
    // Rails without a descriptor (loopback) and pending operations are polled
    // every millisecond; otherwise the thread sleeps until a descriptor fires
    // or a rail's timer is due.
    int timeout_ms = (fd_less_rails_ || waiting || !inflight_.empty() || !deferred_.empty()) ? 1 : 100;
    if (next_timer != TimePoint::max()) {
        auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_timer - clock_.now()).count() + 1;
        timeout_ms = static_cast<int>(std::clamp<long long>(until, 0, timeout_ms));
    }
    (void)::poll(fds.data(), fds.size(), timeout_ms);
    {
        std::lock_guard lock(mutex_);
        progress_asleep_ = false;
        wake_written_ = false;
    }
    // Drained whenever it is readable: a wake-up written just after the
    // poll returned is then taken at the next sleep.
    if (fds[0].revents & POLLIN) {
        std::uint64_t drained;
        while (::read(wake_fd_.get(), &drained, sizeof drained) > 0) {
        }
    }
    for (std::size_t i = 1; i < service_end && !service_due_; ++i) service_due_ = fds[i].revents != 0;
}

void Engine::wake_progress_locked() {
    if (!progress_asleep_ || wake_written_) return;
    wake_written_ = true;
    std::uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
}

void Engine::accept_connections() {
    for (;;) {
        int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) return;
        serve_handshake(UniqueFd(fd));
    }
}

void Engine::mark_unreachable(Connection& conn, const Status& why) {
    conn.unreachable = true;
    UnreachableCallback callback;
    {
        std::lock_guard lock(mutex_);
        unreachable_.insert(conn.id);
        callback = unreachable_callback_;
    }
    TENT_INFO("peer-unreachable", "peer %s: %s", conn.peer.hostname.c_str(), why.to_string().c_str());
    std::vector<std::uint64_t> failed;
    for (auto& [id, op] : ops_)
        if (op->peer == conn.id) {
            if (op->error.is_ok()) op->error = why;
            failed.push_back(id);
        }
    for (std::uint64_t id : failed) finish_op(id);
    if (callback) callback(conn.id, why);
}

void Engine::refresh_stats() {
    std::vector<RailStats> stats;
    const TimePoint now = clock_.now();
    // Gauges take a lock and a map lookup per rail: at most every 10 ms.
    const bool gauges = now - last_gauges_ >= std::chrono::milliseconds(10);
    if (gauges) last_gauges_ = now;
    for (const auto& [id, conn] : connections_)
        for (const auto& r : conn->rails) {
            const std::string& name = r.rail.rail->name();
            // A failed rail (closed, being re-armed) takes no work: paused.
            RailState state = usable(r) ? monitor_->state(r.monitor_id, now) : RailState::Paused;
            stats.push_back(RailStats{conn->id, r.rail.rail_id, name, r.rail.rail->kind(), state, r.ops, r.bytes,
                                      r.errors, r.inflight_bytes, r.failovers});
            if (!gauges) continue;
            metrics_->set_rail_state(name, state);
            metrics_->set_rail_health(name, monitor_->health_score(r.monitor_id, now));
            metrics_->inflight_bytes_series(name).set(static_cast<double>(r.inflight_bytes));
            metrics_->set_ewma_bandwidth(name, r.ewma_bw);
        }
    std::lock_guard lock(mutex_);
    stats_ = std::move(stats);
}

} // namespace tent
