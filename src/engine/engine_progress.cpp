// A progress turn: adopts new connections, starts submitted requests in
// priority order, drives every rail, serves the passive side of the control
// channel and watches each peer's control connection for its going away.
// Who runs it, and how a driver sleeps: engine_drive.cpp.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/log.h"
#include "engine/connection.h"
#include "engine/engine.h"
#include "engine/op.h"
#include "engine/quiet_rail_look.h"
#include "health/rail_monitor.h"
#include "metrics/stats_publisher.h"
#include "policy/qos_queue.h"
#include "policy/shared_slots.h"

namespace tent {

bool Engine::progress_once() {
    std::deque<std::unique_ptr<Op>>& submitted = taken_;
    std::vector<std::unique_ptr<Connection>> connected;
    bool recvs_changed = false;
    if (inbox_.load(std::memory_order_acquire)) {
        std::lock_guard lock(mutex_);
        submitted.swap(submitted_);
        connected.swap(connecting_);
        recvs_changed = recvs_changed_;
        recvs_changed_ = false;
        inbox_.store(false, std::memory_order_relaxed);
    }
    bool busy = !submitted.empty() || !connected.empty();
    in_turn_ = true;
    const TimePoint start = clock_.now();  // one reading for the turn's start (clock reads show in profiles)
    watched_.look(start);
    if (start - last_service_ >= kServiceInterval) service_due_ = true;
    for (auto& c : connected) add_connection(std::move(c));
    // A new connection's control socket may already hold frames.
    const bool service = service_due_ || !connected.empty();
    // Most services of a driver that spins find nothing to read: one poll()
    // tells, where each event queue and control socket cost a failing read.
    const bool service_input = service && (!connected.empty() || service_input_waiting());
    if (service_input) poll_device_events();
    // Waiting pieces first: they were posted before anything new.
    for (auto& [id, conn] : connections_) serve_parked(*conn, start);
    start_ops(submitted);
    submitted.clear();

    const bool accepting = service && on_progress_thread();
    if (accepting) accept_connections();  // handshakes block: never in an application's call

    const bool all_quiet = skip_quiet_rails(accepting ? clock_.now() : start);  // accepting may have taken a while
    if (turn_ends_after_look({.rails_quiet = all_quiet,
                              .found_work = busy || service || recvs_changed,
                              .work_waits = all_quiet && work_waits_for_turn(),
                              .since_care = start - last_care_})) {
        publish_turn(false, start);
        turn_clock_ = start;
        return false;
    }
    for (auto& [id, conn] : connections_) {
        Connection& c = *conn;
        for (std::size_t r = 0; r < c.rails.size(); ++r) {
            if (!c.rails[r].quiet) busy = drain_rail(c, r) || busy;
            // What the completions made room for, or the window opened,
            // or the rail failed (its pieces then move elsewhere).
            release_held(c, r);
        }
        if (service) service_control(c, service_input);
        if (recvs_changed) deliver(c);
        // Atomics that waited for older ones to finish (the completions
        // above): replays, then new ones.
        if (!c.atomic_replays.empty()) replay_atomics_in_turn(c);
        if (!c.atomics.waiting.empty()) start_atomics_waiting(c);
    }
    if (!deferred_.empty()) retry_deferred();
    if (service) release_departed();  // peers found unreachable while serving their control channels
    // Early rails whose connection never came (adopt_rail), on every
    // service turn: also while an application drives and nothing new is
    // accepted.
    if (service && !early_rails_.empty()) sweep_early_rails(start);
    // A turn that found nothing took a microsecond: its start serves the
    // timers below (every reading of the clock shows in a spinning driver).
    const TimePoint now = busy || service ? clock_.now() : start;
    if (service) {
        service_due_ = false;
        last_service_ = now;
    }
    // Rail care and the timers work in milliseconds: on a service turn,
    // else at most every kCareInterval (quiet_rail_look.h), so that a turn
    // that found a message hands it over sooner.
    if (service || now - last_care_ >= kCareInterval) {
        last_care_ = now;
        // Cooldown expiry and the slow-rail verdict (a median per rail)
        // need not run on every loop of a busy thread.
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
        if (stats_publisher_) publish_stats(now);
    }
    publish_turn(busy || recvs_changed, now);
    if (busy) last_busy_ = now;  // progress_spin counts from here
    turn_clock_ = now;
    return busy;
}

bool Engine::service_input_waiting() {
    service_fds_.clear();
    for (auto& p : providers_)
        for (int fd : p->event_fds()) service_fds_.push_back({fd, POLLIN, 0});
    for (auto& [id, conn] : connections_)
        if (!conn->unreachable) service_fds_.push_back({conn->control.get(), POLLIN, 0});
    if (service_fds_.empty()) return false;
    return ::poll(service_fds_.data(), service_fds_.size(), 0) != 0;  // a failed poll(): read them all
}

// A spinning driver's turn would otherwise cost a failing recv() per rail
// (a rail of each direction per link): one poll() covers them all, and a
// rail silent for a while is looked at only now and then (quiet_rail_look.h).
bool Engine::skip_quiet_rails(TimePoint now) {
    quiet_fds_.clear();
    quiet_slots_.clear();
    bool all_idle = true;
    for (auto& [id, conn] : connections_)
        for (auto& slot : conn->rails) {
            slot.quiet = false;
            const Rail& rail = *slot.rail.rail;
            if (rail.wait_fd() < 0 || !rail.idle_unless_readable(now)) {
                all_idle = false;
                continue;
            }
            if (!quiet_rail_due({slot.inflight_ops > 0, rail.silent_for(now), now - slot.quiet_look})) {
                slot.quiet = true;
                continue;
            }
            slot.quiet_look = now;
            quiet_fds_.push_back({rail.wait_fd(), POLLIN, 0});
            quiet_slots_.push_back(&slot);
        }
    // One recv() costs no more than the poll(); a turn that may end early
    // needs the poll's answer for its only rail too.
    if (quiet_fds_.empty() || (quiet_fds_.size() < 2 && !all_idle)) return all_idle && quiet_fds_.empty();
    if (::poll(quiet_fds_.data(), quiet_fds_.size(), 0) < 0) return false;  // progressed as usual
    bool all_quiet = all_idle;
    for (std::size_t i = 0; i < quiet_fds_.size(); ++i) {
        quiet_slots_[i]->quiet = quiet_fds_[i].revents == 0;
        all_quiet = all_quiet && quiet_slots_[i]->quiet;
    }
    return all_quiet;
}

bool Engine::work_waits_for_turn() const {
    if (!deferred_.empty() || !qos_->empty() || stats_stale_ || !turn_completions_.empty()) return true;
    for (const auto& [id, conn] : connections_) {
        if (!conn->parked.empty() || !conn->atomics.waiting.empty() || !conn->atomic_replays.empty()) return true;
        for (const auto& slot : conn->rails)
            for (const auto& level : slot.held)
                if (!level.empty()) return true;
    }
    return false;
}

void Engine::start_submitted() {
    // Pieces waiting for a rail go first, and serving them may give up on a
    // peer (a callback): left to a full turn.
    for (const auto& [id, conn] : connections_)
        if (!conn->parked.empty()) return;
    std::deque<std::unique_ptr<Op>>& submitted = taken_;
    std::vector<std::unique_ptr<Connection>> connected;
    {
        std::lock_guard lock(mutex_);
        submitted.swap(submitted_);
        connected.swap(connecting_);
        inbox_.store(recvs_changed_, std::memory_order_relaxed);  // what is left for a full turn
    }
    if (!connected.empty()) service_due_ = true;  // their control sockets may already hold frames
    for (auto& c : connected) add_connection(std::move(c));
    if (submitted.empty()) return;
    SteadyClock::Turn turn;  // starting never waits: one reading for it all
    start_ops(submitted);
    submitted.clear();
    last_busy_ = clock_.now();
    stats_stale_ = true;  // the next turn publishes them; a sleeping driver is woken for it
}

// Requests start in the QoS queue's order, and a request that may not start
// yet stays there, where promotion lifts it: while higher-priority work
// occupies the rails (at least qos_window bytes of it in flight) a request
// waits until it has been promoted once, so a low request behind a stream
// of high ones starts within priority_promotion_timeout_us (plus a sweep
// and a turn). Below that, the rails' QoS window (post_chunk) protects the
// higher level, and holding the request would only cost bandwidth. With
// shared_quota_shm_path, it also waits while the shared slot excludes its
// level and another request of a higher level is pending in some process
// on the host. With one priority in use neither holds anything.
void Engine::start_ops(std::deque<std::unique_ptr<Op>>& submitted) {
    const std::uint64_t first_new = submitted.empty() ? 0 : submitted.front()->id;
    const std::uint64_t last_new = submitted.empty() ? 0 : submitted.back()->id;
    // One request with none queued (a program that posts and waits, as a
    // ping-pong does): the queue could only hand it straight back, so it is
    // asked the queue's question directly below.
    const bool alone = submitted.size() == 1 && qos_->empty();
    const Priority alone_priority = alone ? submitted.front()->options.priority : Priority::Medium;
    for (auto& op : submitted) {
        if (!alone) qos_->push(op->id, op->options.priority);
        priority_activity_.started(op->options.priority);
        const std::uint64_t id = op->id;
        ops_nodes_.assign(ops_, id, std::move(op));
    }
    if (slots_) publish_pending();  // also what finished since the last turn
    if (!alone && qos_->empty()) return;
    const TimePoint now = clock_.now();
    const std::uint64_t window = params_.qos_window.window;
    auto may_start = [&](const QueuedRequest& e) {
        if (e.current == e.original && e.original != Priority::High && window > 0 &&
            priority_activity_.higher_active(e.original, now, Duration::zero()) &&
            inflight_above(e.original) >= window)
            return false;
        return !slots_ || slots_may_start(e.original, now);
    };
    if (alone) {
        const QueuedRequest request{first_new, alone_priority, alone_priority, now, now, 0};
        if (may_start(request)) {
            start_op_by_id(first_new);
            return;
        }
        qos_->push(first_new, alone_priority);
    }
    while (auto next = qos_->pop_if(may_start)) start_op_by_id(next->id);
    if (qos_->empty() || first_new == 0) return;
    // Requests of this batch that wait (planning numbers them: a waiting one has no number yet).
    for (std::uint64_t id = first_new; id <= last_new; ++id)
        if (auto it = ops_.find(id); it != ops_.end() && it->second->seq == 0)
            metrics_->qos_waited(priority_name(it->second->options.priority));
}

std::uint64_t Engine::inflight_above(Priority level) const {
    std::uint64_t n = 0;
    for (const auto& [id, conn] : connections_)
        for (const auto& r : conn->rails)
            for (std::size_t l = 0; l < static_cast<std::size_t>(level); ++l) n += r.inflight_by_priority[l];
    return n;
}

void Engine::publish_pending() {
    std::array<std::uint32_t, kPriorityCount> counts{};
    for (int l = 0; l < kPriorityCount; ++l)
        counts[static_cast<std::size_t>(l)] =
            static_cast<std::uint32_t>(priority_activity_.active(static_cast<Priority>(l)));
    if (counts == published_pending_) return;
    published_pending_ = counts;
    slots_->publish_pending(counts);
}

bool Engine::slots_may_start(Priority level, TimePoint now) {
    return slots_->may_start(static_cast<int>(level), now);
}

void Engine::publish_stats(TimePoint now) {
    auto published = stats_publisher_->maybe_publish(now);
    if (!published)
        TENT_WARN("stats-publish-failed", "%s", published.status().to_string().c_str());
}

ProcessStats Engine::process_stats(TimePoint now) const {
    ProcessStats p;
    p.program = program_invocation_short_name;
    for (const auto& [id, conn] : connections_) {
        p.peers.push_back(conn->peer.hostname);
        for (const auto& r : conn->rails) {
            RailRecord rec;
            rec.peer = conn->peer.hostname;
            rec.name = r.rail.rail->name();
            rec.transport = transport_kind_name(r.rail.rail->kind());
            rec.state = monitor_->state(r.monitor_id, now);
            rec.probing = !usable(r);
            // A pause with no end time waits for a port event (rail_monitor.h).
            if (rec.state == RailState::Paused) {
                if (auto until = monitor_->paused_until(r.monitor_id, now))
                    rec.paused_seconds_left = std::max(0.0, std::chrono::duration<double>(*until - now).count());
                else
                    rec.awaiting_port = true;
            }
            rec.health = monitor_->health_score(r.monitor_id, now);
            rec.bytes = r.bytes;
            rec.ops = r.ops;
            rec.errors = r.errors;
            rec.failovers_from = r.failovers;
            rec.failovers_to = r.failovers_in;
            rec.pauses_in_a_row = monitor_->pause_level(r.monitor_id, now);
            rec.last_error = r.last_failure;
            p.rails.push_back(std::move(rec));
        }
    }
    std::sort(p.peers.begin(), p.peers.end());
    p.peers.erase(std::unique(p.peers.begin(), p.peers.end()), p.peers.end());
    return p;
}

void Engine::accept_connections() {
    const TimePoint now = clock_.now();
    // Bounded per turn; the rest wait in the backlog for the next turn.
    for (int budget = 0; budget < 64; ++budget) {
        // Non-blocking from the start: the gate reads it so (serve_handshake,
        // without authentication, sets its own mode).
        int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        // Replies are small writes: without this, Nagle holds one for the
        // peer's delayed ACK (40 ms).
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        control_gate_->admit(UniqueFd(fd), now);
    }
    // Only sockets that proved they hold the job's key get a connection.
    for (auto& admitted : control_gate_->poll(now)) {
        if (!admitted.answered) {
            serve_handshake(std::move(admitted.fd));  // authentication off
            continue;
        }
        auto held = std::any_cast<std::shared_ptr<HandshakeReply>>(admitted.held);
        if (!held->conn) continue;  // answered Crossed: nothing to admit
        const std::uint64_t id = held->conn->id;
        // Its rails' tokens are good from now on: the rail sockets that
        // wait for them are answered just below (poll_incoming).
        if (admit_proven(std::move(admitted.fd), std::move(held->conn)))
            for (auto& p : providers_) p->enter_rail_tokens(id, held->rail_tokens);
    }
    for (auto& p : providers_) p->poll_incoming(*this);  // the providers' own rail listeners
}

void Engine::sweep_early_rails(TimePoint now) {
    std::erase_if(early_rails_, [now](const EarlyRail& e) { return e.until <= now; });
}

void Engine::mark_unreachable(Connection& conn, const Status& why) {
    conn.unreachable = true;
    UnreachableCallback callback;
    {
        std::lock_guard lock(mutex_);
        unreachable_.insert(conn.id);
        if (auto pair = by_engine_.find(conn.peer.engine_id); pair != by_engine_.end() && pair->second == conn.id)
            by_engine_.erase(pair);
        callback = unreachable_callback_;
    }
    TENT_INFO("peer-unreachable", "peer %s: %s", conn.peer.hostname.c_str(), why.to_string().c_str());
    // Every request to the peer ends now, in error, except a message the
    // peer said it delivered: a departing engine says how far it got before
    // its Goodbye, and a message it took is not lost because the rail's
    // confirmation was still on its way (an HCA's acknowledgement leaves
    // before its receiver can exit).
    conn.atomics.waiting.clear();  // ended below with the rest
    conn.atomic_replays.clear();
    std::vector<std::uint64_t> ended;
    for (auto& [id, op] : ops_)
        if (op->peer == conn.id) {
            const bool delivered = op->type == OpType::Send && op->msg_seq != 0 && op->msg_seq <= conn.peer_delivered;
            if (op->error.is_ok() && !delivered) op->error = why;
            ended.push_back(id);
        }
    std::sort(ended.begin(), ended.end());  // they complete in posting order
    for (std::uint64_t id : ended) finish_op(id);
    if (callback) callback(conn.id, why);
}

// Into the driver's spare table, which then trades places with stats_: the
// table of two turns ago names the same rails, so a turn copies numbers,
// not names.
void Engine::collect_stats() {
    std::vector<RailStats>& stats = spare_stats_;
    std::size_t n = 0;
    const TimePoint now = clock_.now();
    last_stats_ = now;
    // Gauges take a lock and a map lookup per rail: at most every 10 ms.
    const bool gauges = now - last_gauges_ >= std::chrono::milliseconds(10);
    if (gauges) last_gauges_ = now;
    for (const auto& [id, conn] : connections_)
        for (const auto& r : conn->rails) {
            const std::string& name = r.rail.rail->name();
            // A failed rail (closed, being re-armed) takes no work: paused.
            RailState state = usable(r) ? monitor_->state(r.monitor_id, now) : RailState::Paused;
            if (n == stats.size()) stats.emplace_back();
            RailStats& out = stats[n++];
            out.peer = conn->id;
            out.rail_id = r.rail.rail_id;
            if (out.name != name) out.name = name;
            out.kind = r.rail.rail->kind();
            out.state = state;
            out.ops = r.ops;
            out.bytes = r.bytes;
            out.errors = r.errors;
            out.inflight_bytes = r.inflight_bytes;
            out.failovers = r.failovers;
            if (!gauges) continue;
            metrics_->set_rail_state(name, state);
            metrics_->set_rail_health(name, monitor_->health_score(r.monitor_id, now));
            metrics_->inflight_bytes_series(name).set(static_cast<double>(r.inflight_bytes));
            metrics_->set_ewma_bandwidth(name, r.ewma_bw);
        }
    stats.resize(n);
    stats_stale_ = false;
}

void Engine::refresh_stats() {
    if (in_turn_) {
        stats_stale_ = true;
        return;
    }
    collect_stats();
    stats_deferred_.store(false, std::memory_order_release);
    std::lock_guard lock(mutex_);
    stats_.swap(spare_stats_);
}

void Engine::publish_turn(bool found_work, TimePoint now) {
    in_turn_ = false;
    const bool handing_over = !turn_completions_.empty();
    if (found_work || handing_over) stats_stale_ = true;
    if (!stats_stale_) return;  // nothing to publish: no lock for a turn that found nothing
    // An application thread driving its own turns gets its completions
    // first: the table is brought up to date by its next turn, while it
    // waits on the network, or by rail_stats() when asked before that
    // (a ping-pong's message waited 600 instructions for it). Under a
    // stream of completions, at least every kCareInterval.
    const bool application_turn = params_.caller_progress && !on_progress_thread();
    const bool collect = !(handing_over && application_turn) || now - last_stats_ >= kCareInterval;
    if (collect) collect_stats();
    stats_deferred_.store(!collect, std::memory_order_release);
    bool waiters = false;
    {
        std::lock_guard lock(mutex_);
        if (collect) stats_.swap(spare_stats_);
        if (!turn_completions_.empty()) {
            for (auto& c : turn_completions_) completions_.push_back(std::move(c));
            ready_count_.store(completions_.size(), std::memory_order_release);
            waiters = completion_waiters_ > 0;
        }
    }
    turn_completions_.clear();
    if (waiters) completion_ready_.notify_all();
}

} // namespace tent
