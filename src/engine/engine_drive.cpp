// Who drives the engine, and how a driver sleeps.
//
// A progress turn (progress_once) runs on one thread at a time: the one
// holding drive_mutex_. That is the engine's progress thread or, with
// caller_progress, an application thread inside poll(), wait() or a post.
// Nobody holds the lock while sleeping, so a post finds it free unless a
// turn is running right then.
//
// While the application drives (a thread is inside wait(), or one polled
// less than kApplicationGrace ago) the progress thread naps on the
// listeners only instead of sleeping on the rails: otherwise every
// completion would wake two threads. When the application stops calling
// in, the progress thread takes over within kApplicationGrace.
//
// New connections are accepted on the progress thread only: their
// handshakes block (up to connect_timeout_ms), and no application call may
// block on the network but connect().
#include <poll.h>
#include <pthread.h>
#include <cerrno>
#include <cstdint>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "engine/connection.h"
#include "engine/engine.h"
#include "policy/qos_queue.h"

namespace tent {

namespace {

thread_local const Engine* t_driving = nullptr;
thread_local const Engine* t_progress_thread_of = nullptr;

// This thread drives `engine` for the scope's life (a callback may drive
// another engine inside; each scope restores the one before it).
class DriveScope {
public:
    explicit DriveScope(const Engine* engine) : previous_(t_driving) { t_driving = engine; }
    ~DriveScope() { t_driving = previous_; }
    DriveScope(const DriveScope&) = delete;
    DriveScope& operator=(const DriveScope&) = delete;

private:
    const Engine* previous_;
};

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A driver's longest sleep: rail timers and the service interval are
// looked after by prepare_sleep()'s own limits within it.
constexpr int kLongestSleepMs = 100;

} // namespace

struct Engine::SleepSet {
    std::vector<pollfd> fds;    // [0] wake_fd_, then [1, service_end) read when service_due_, then rails,
                                // then from caller_begin the caller's own (wait() with `also`)
    std::size_t service_end = 1;
    std::size_t caller_begin = SIZE_MAX;
    int timeout_ms = 0;
};

namespace {

// Whether one of the caller's descriptors is readable (or failed) now.
bool any_ready_now(std::span<const int> fds) {
    if (fds.empty()) return false;
    std::vector<pollfd> p;
    p.reserve(fds.size());
    for (int fd : fds) p.push_back({fd, POLLIN, 0});
    return ::poll(p.data(), p.size(), 0) > 0;
}

} // namespace

bool Engine::this_thread_drives() const { return t_driving == this; }

std::vector<RailStats> Engine::rail_stats() {
    // A turn that handed completions to an application thread left the
    // table for later (publish_turn): brought up to date here, so that what
    // the application saw complete is counted. Waits for a turn under way
    // (nobody sleeps holding the drive lock).
    if (stats_deferred_.load(std::memory_order_acquire) && !this_thread_drives()) {
        std::lock_guard drive(drive_mutex_);
        DriveScope scope(this);
        if (stats_stale_) refresh_stats();
    }
    std::lock_guard lock(mutex_);
    return stats_;
}

bool Engine::on_progress_thread() const { return t_progress_thread_of == this; }

std::chrono::nanoseconds Engine::application_lease() const {
    if (!params_.caller_progress) return std::chrono::nanoseconds::zero();
    if (application_drivers_.load() > 0) return kApplicationGrace;  // a thread inside wait(): a whole grace
    const std::int64_t since_turn = steady_ns() - application_turn_ns_.load(std::memory_order_relaxed);
    return kApplicationGrace - std::chrono::nanoseconds(since_turn);
}

void Engine::run() {
    t_progress_thread_of = this;
    // Named for top -H, gdb and /proc (at most 15 characters).
    (void)pthread_setname_np(pthread_self(), "tent-progress");
    while (!stop_.load()) {
        if (const auto lease = application_lease(); lease > std::chrono::nanoseconds::zero()) {
            accept_while_application_drives(lease);
            continue;
        }
        SleepSet sleep;
        {
            std::lock_guard drive(drive_mutex_);
            DriveScope scope(this);
            const bool busy = progress_once();
            if (stop_.load()) break;
            if (!prepare_sleep(busy, sleep, kLongestSleepMs)) continue;
        }
        sleep_for_work(sleep);
    }
}

void Engine::accept_while_application_drives(std::chrono::nanoseconds lease) {
    std::vector<pollfd> fds{{stop_fd_.get(), POLLIN, 0}, {listen_fd_.get(), POLLIN, 0}, {control_gate_->fd(), POLLIN, 0}};
    for (auto& p : providers_)
        if (p->incoming_fd() >= 0) fds.push_back({p->incoming_fd(), POLLIN, 0});
    // Until the application's lease runs out (1 ms to kApplicationGrace).
    const long long grace_ms = std::chrono::ceil<std::chrono::milliseconds>(kApplicationGrace).count();
    const int ms = static_cast<int>(
        std::clamp<long long>(std::chrono::ceil<std::chrono::milliseconds>(lease).count(), 1, grace_ms));
    if (::poll(fds.data(), fds.size(), ms) <= 0 || stop_.load()) return;
    std::lock_guard drive(drive_mutex_);
    DriveScope scope(this);
    accept_connections();
    service_due_ = true;  // a new connection's control socket may already hold frames
    // An application thread asleep in wait() watches the descriptors it
    // knew: it looks again, so that what arrives on a connection or rail
    // accepted just now is not left until its timeout.
    std::lock_guard lock(mutex_);
    wake_progress_locked();
}

std::size_t Engine::ready_completions() {
    return ready_count_.load(std::memory_order_acquire);
}

void Engine::application_poll(bool turn_wanted) {
    // Every poll counts as the application driving, also one that takes
    // completions another thread's turn queued, or finds a turn running:
    // a progress thread that took over while the application was away (a
    // grace) hands back after its turn. Before, only a turn run here
    // counted, and a progress thread that always had work in flight kept
    // the engine for good while every poll of the application took what it
    // queued or yielded to it (ib_write_bw under the interposer on one
    // simulated HCA, in about one run of three).
    std::unique_lock drive(drive_mutex_, std::defer_lock);
    if (!turn_wanted || !drive.try_lock()) {
        application_turn_ns_.store(steady_ns(), std::memory_order_relaxed);
        if (!turn_wanted) return;
        // A turn is running: its completions are queued for us. A caller
        // that polls in a loop gives that turn's thread the CPU it may be
        // waiting for (a real-time poller would otherwise keep it off this
        // CPU for good).
        std::this_thread::yield();
        return;
    }
    DriveScope scope(this);
    (void)progress_once();
    // The turn's own last reading dates it: a spinning caller's turn that
    // finds nothing takes about a microsecond, and a reading before it and
    // one after were two thirds of the clock's share of its CPU (NPmpi 8 B
    // over btl tent: 3.2% of the rank's samples, the turn's own 1.6%).
    application_turn_ns_.store(turn_clock_.time_since_epoch().count(), std::memory_order_relaxed);
}

void Engine::start_or_wake() {
    if (params_.caller_progress && !this_thread_drives()) {
        std::unique_lock drive(drive_mutex_, std::try_to_lock);
        if (drive.owns_lock()) {
            DriveScope scope(this);
            start_submitted();
        }
    }
    // A driver asleep in poll() chose its descriptors and timeout before
    // this request existed (a TCP rail may now want POLLOUT): wake it. No
    // system call when nobody sleeps, as while the application drives.
    std::lock_guard lock(mutex_);
    wake_progress_locked();
}

std::size_t Engine::wait_driving(std::chrono::milliseconds timeout, std::span<const int> also) {
    using Steady = std::chrono::steady_clock;
    const Steady::time_point deadline =
        timeout < std::chrono::milliseconds::zero() ? Steady::time_point::max() : Steady::now() + timeout;
    // Present as a driver for the whole wait, so the progress thread keeps
    // out of the way also while this thread sleeps.
    struct Presence {
        Engine& engine;
        explicit Presence(Engine& e) : engine(e) { engine.application_drivers_.fetch_add(1); }
        ~Presence() {
            engine.application_turn_ns_.store(steady_ns(), std::memory_order_relaxed);
            engine.application_drivers_.fetch_sub(1);
        }
        Presence(const Presence&) = delete;
        Presence& operator=(const Presence&) = delete;
    } presence(*this);
    // While this thread does not sleep in poll() (turns keep finding work,
    // or another thread runs them), the caller's descriptors are looked at
    // once per kServiceInterval: a system call per turn would cost a busy
    // engine more than the caller's event waits.
    Steady::time_point next_look = Steady::now() + kServiceInterval;
    for (;;) {
        if (std::size_t n = ready_completions()) return n;
        const Steady::time_point now = Steady::now();
        if (now >= deadline) return 0;
        if (!also.empty() && now >= next_look) {
            if (any_ready_now(also)) return ready_completions();
            next_look = now + kServiceInterval;
        }
        std::unique_lock drive(drive_mutex_, std::try_to_lock);
        if (!drive.owns_lock()) {
            // Another thread runs a turn; it queues what completes and
            // notifies. Look again soon: it may go to sleep without one.
            std::unique_lock lock(mutex_);
            ++completion_waiters_;
            // (With descriptors of the caller's: until their next look.)
            completion_ready_.wait_until(lock, std::min(deadline, also.empty() ? now + kServiceInterval : next_look),
                                         [this] { return !completions_.empty(); });
            --completion_waiters_;
            continue;
        }
        int cap = kLongestSleepMs;
        if (deadline != Steady::time_point::max()) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
            cap = static_cast<int>(std::clamp<long long>(left, 1, kLongestSleepMs));
        }
        SleepSet sleep;
        bool sleeping;
        {
            DriveScope scope(this);
            const bool busy = progress_once();
            if (std::size_t n = ready_completions()) return n;
            sleeping = prepare_sleep(busy, sleep, cap);
        }
        drive.unlock();
        if (!sleeping) continue;
        if (!also.empty()) {
            sleep.caller_begin = sleep.fds.size();
            for (int fd : also) sleep.fds.push_back({fd, POLLIN, 0});
        }
        // The caller's descriptor, or a signal for the caller's thread
        // (its handler may be waiting for this call to end), ends the wait.
        if (sleep_for_work(sleep) && !also.empty()) return ready_completions();
    }
}

bool Engine::prepare_sleep(bool busy, SleepSet& sleep, int max_timeout_ms) {
    if (busy) return false;
    const TimePoint now = clock_.now();
    // With work in flight a completion is usually microseconds away: when
    // asked to, look again rather than pay a sleep and a wake-up for it.
    // With none in flight nothing is coming: an idle engine never spins.
    if (!inflight_.empty() && now - last_busy_ < params_.progress_spin) return false;
    // About to sleep: arm every rail, then look once more, so a completion
    // that came between the last look and the arming is not slept through.
    bool found = false;
    for (auto& [id, conn] : connections_)
        for (auto& r : conn->rails) r.rail.rail->prepare_to_wait();
    in_turn_ = true;  // what this look finds is published as a turn's
    for (auto& [id, conn] : connections_)
        for (std::size_t r = 0; r < conn->rails.size(); ++r) {
            // A rail that only arriving bytes give work needs no look: its
            // socket stays readable until read, so the poll() below sees
            // what came since the last one (a failing recv() per sleep saved).
            const Rail& rail = *conn->rails[r].rail.rail;
            if (rail.wait_fd() >= 0 && rail.idle_unless_readable(now)) continue;
            found = drain_rail(*conn, r) || rail.input_waiting() || found;
        }
    publish_turn(found, now);
    if (found) return false;
    {
        std::lock_guard lock(mutex_);
        if (!submitted_.empty() || !connecting_.empty() || recvs_changed_) return false;
        ++sleepers_;  // from here on a submission writes wake_fd_
    }

    auto& fds = sleep.fds;
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    const bool listeners = on_progress_thread();  // only it accepts
    if (listeners) {
        fds.push_back({listen_fd_.get(), POLLIN, 0});
        fds.push_back({control_gate_->fd(), POLLIN, 0});
    }
    for (auto& p : providers_) {
        if (listeners && p->incoming_fd() >= 0) fds.push_back({p->incoming_fd(), POLLIN, 0});
        for (int fd : p->event_fds()) fds.push_back({fd, POLLIN, 0});
    }
    TimePoint next_timer = TimePoint::max();
    bool waiting = false;  // pieces parked or awaiting a sync: look again soon
    for (auto& [id, conn] : connections_) {
        waiting = waiting || !conn->parked.empty() || !conn->syncs.empty();
        if (!conn->unreachable)
            fds.push_back({conn->control.get(), static_cast<short>(POLLIN | (conn->control_out.empty() ? 0 : POLLOUT)), 0});
    }
    sleep.service_end = fds.size();
    for (auto& [id, conn] : connections_) {
        for (auto& r : conn->rails) {
            const Rail& rail = *r.rail.rail;
            if (rail.wait_fd() >= 0)
                fds.push_back({rail.wait_fd(), static_cast<short>(POLLIN | (rail.wants_write() ? POLLOUT : 0)), 0});
            next_timer = std::min(next_timer, rail.next_timer());
        }
    }
    // Rails without a descriptor (loopback) and pending operations are polled
    // every millisecond; otherwise the driver sleeps until a descriptor fires
    // or a rail's timer is due.
    // Requests held in the QoS queue wait for promotion or a slot: also soon.
    int timeout_ms =
        (fd_less_rails_ || waiting || !inflight_.empty() || !deferred_.empty() || !qos_->empty()) ? 1 : max_timeout_ms;
    if (next_timer != TimePoint::max()) {
        auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_timer - clock_.now()).count() + 1;
        timeout_ms = static_cast<int>(std::clamp<long long>(until, 0, timeout_ms));
    }
    sleep.timeout_ms = timeout_ms;  // at most max_timeout_ms
    return true;
}

bool Engine::sleep_for_work(SleepSet& sleep) {
    // The descriptors may close while this thread sleeps (another driver
    // fails a rail): poll() then reports POLLNVAL, and only the wake-up and
    // service descriptors' events are read below.
    const bool interrupted = ::poll(sleep.fds.data(), sleep.fds.size(), sleep.timeout_ms) < 0 && errno == EINTR;
    {
        std::lock_guard lock(mutex_);
        --sleepers_;
        // Whoever reads the eventfd clears wake_written_ (both happen under
        // mutex_, so the flag says whether a wake-up is pending): one
        // written just after poll() returned is taken now, not slept on.
        std::uint64_t drained;
        if (wake_written_ && ::read(wake_fd_.get(), &drained, sizeof drained) > 0) wake_written_ = false;
    }
    for (std::size_t i = 1; i < sleep.service_end; ++i)
        if (sleep.fds[i].revents != 0) {
            service_due_ = true;
            break;
        }
    bool caller_ready = interrupted;
    for (std::size_t i = sleep.caller_begin; i < sleep.fds.size(); ++i) caller_ready = caller_ready || sleep.fds[i].revents != 0;
    return caller_ready;
}

void Engine::wake_progress_locked() {
    if (sleepers_ == 0 || wake_written_) return;
    wake_written_ = true;
    std::uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
}

} // namespace tent
