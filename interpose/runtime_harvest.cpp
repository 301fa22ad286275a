// Taking tent's completions of the interposer's posts: on the program's
// thread while it polls or waits on a channel, else on the harvester thread.
#include "runtime_state.h"

#include <algorithm>
#include <chrono>
#include <pthread.h>
#include <unistd.h>

#include "activation.h"
#include "channel.h"
#include "signals_held_off.h"

namespace tent::interpose {

// Takes what tent completed (a turn on this thread first, unless another
// runs one) and settles it; how many.
int settle_ready() {
    tent_completion_t c[64];
    int n = tent_poll(g_engine, c, 64);
    if (n > 0) settle_completions(c, n);
    return n;
}

namespace {

// Program threads driving tent while they sleep in ibv_get_cq_event, and
// when the last such wait ended (steady clock, ns): the harvester keeps out
// of their way (drive_while_waiting()).
std::atomic<int> g_program_drivers{0};
std::atomic<std::int64_t> g_program_drove_ns{0};

// When the program last looked for completions of a carried QP (steady
// clock, ns; 0: it may sleep on a channel), and the harvester's nap.
std::atomic<std::int64_t> g_program_poll_ns{0};

// The nap is never destroyed (as state()): a child of fork() inherits the
// harvester's wait on it but not the harvester, and destroying a condition
// variable with a waiter at the child's exit waits forever.
struct Nap {
    std::mutex mutex;
    std::condition_variable cv;
};

Nap& nap() {
    static Nap* n = new Nap;  // deliberately never freed
    return *n;
}

// While the program polls, it drives tent and takes tent's completions on
// its own thread (take_completions): a second thread doing the same would
// only take the CPU the program, its peer and the HCA need (two cores run
// both ends of a benchmark). The harvester keeps out of the way until the
// program has not polled for this long, or arms a CQ (it may then sleep on
// the CQ's channel).
constexpr auto kProgramPollGrace = std::chrono::milliseconds(5);

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A program thread drove tent while it waited on a channel, or did so less
// than a grace ago (it is likely to wait so again soon).
bool program_drives_on_channel() {
    return g_program_drivers.load(std::memory_order_relaxed) > 0 ||
           steady_ns() - g_program_drove_ns.load(std::memory_order_relaxed) <
               std::chrono::nanoseconds(kProgramPollGrace).count();
}

} // namespace

// Harvests tent's completions of the interposer's posts while the program
// does not (it sleeps on a completion channel, or does not poll at all),
// and looks at the program's signal handlers (signals_held_off.h) so that
// the program's thread need not.
void harvest() {
    (void)pthread_setname_np(pthread_self(), "tent-harvest");
    TentScope scope;
    const std::int64_t grace = std::chrono::nanoseconds(kProgramPollGrace).count();
    while (!g_stop.load(std::memory_order_relaxed)) {
        const std::int64_t look_in = look_at_handlers_when_due().count();
        const std::int64_t since = steady_ns() - g_program_poll_ns.load(std::memory_order_relaxed);
        const bool driven = program_drives_on_channel();
        if (driven || (since < grace && !any_cq_armed())) {
            std::unique_lock lock(nap().mutex);
            nap().cv.wait_for(lock, std::chrono::nanoseconds(std::min(driven ? grace : grace - since, look_in)));
            continue;
        }
        // While waiting in tent, this thread is woken by every completion:
        // a program that polls again soon (it was only descheduled) should
        // find it out of the way within a grace, not 50 ms.
        const std::int64_t look_ms = std::max<std::int64_t>(1, (look_in + 999999) / 1000000);
        if (tent_wait(g_engine, static_cast<int>(std::min<std::int64_t>(since < 20 * grace ? 5 : 50, look_ms))) <= 0)
            continue;
        settle_ready();
    }
}

namespace {

// Moves up to max of the completions tent produced for CQ to wc; -1 when
// tent produces none for CQ (no carried QP uses it). *turn: as CqTurn;
// ProviderFirst only when START_OF_POLL (and then nothing is taken).
// held: engaged from here on for a CQ tent feeds (signals_held_off.h):
// taking a completion may free memory.
int take_queued(const ibv_cq* cq, int max, ibv_wc* wc, CqTurn* turn, bool start_of_poll, SignalsHeldOff& held) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.cqs.find(cq);
    if (it == s.cqs.end() || !it->second.carried) return -1;
    held.engage();
    CqFeed& feed = it->second;
    if (feed.provider_qps == 0) {
        *turn = CqTurn::TentOnly;
    } else if (start_of_poll && feed.provider_owed) {
        feed.provider_owed = false;
        *turn = CqTurn::ProviderFirst;
        return 0;
    }
    int n = 0;
    while (n < max && !feed.wcs.empty()) {
        wc[n++] = feed.wcs.front();
        feed.wcs.pop_front();
    }
    if (feed.provider_qps > 0 && max > 0 && n == max) feed.provider_owed = true;
    return n;
}

} // namespace

int take_queued_completions(const ibv_cq* cq, int max, ibv_wc* wc, CqTurn* turn) {
    *turn = CqTurn::TentFirst;
    SignalsHeldOff held(SignalsHeldOff::Start::Later);
    return std::max(take_queued(cq, max, wc, turn, false, held), 0);
}

int take_completions(const ibv_cq* cq, int max, ibv_wc* wc, CqTurn* turn) {
    *turn = CqTurn::TentFirst;
    // Held off once the CQ turns out to be tent's, until tent's work on this
    // thread is done; how is decided here, not under the state mutex (a
    // look at the handlers takes 80 us).
    SignalsHeldOff held(SignalsHeldOff::Start::Later);
    int n = take_queued(cq, max, wc, turn, true, held);
    if (n < 0 || !g_engine || *turn == CqTurn::ProviderFirst) return std::max(n, 0);
    // Every poll of a CQ tent feeds is the program looking, also one that
    // finds completions the harvester queued: else a harvester that took
    // over while the program was away would keep competing with it.
    g_program_poll_ns.store(steady_ns(), std::memory_order_relaxed);
    if (n > 0) return n;
    // Nothing queued: drive tent on this thread (a turn, unless another
    // thread runs one) and settle what it completed.
    InsideEngine inside;
    if (!inside.usable()) return 0;
    TentScope scope;
    settle_ready();
    return std::max(take_queued(cq, max, wc, turn, false, held), 0);
}

void program_blocks() {
    g_program_poll_ns.store(0, std::memory_order_relaxed);
    // A program that waits in ibv_get_cq_event drives tent there: no need to
    // wake the harvester (it looks again within a grace).
    if (program_drives_on_channel()) return;
    std::lock_guard lock(nap().mutex);
    nap().cv.notify_all();
}

WaitOutcome drive_while_waiting(int fd, int timeout_ms, const ibv_comp_channel* channel) {
    if (!g_engine || engine_is_inherited()) return WaitOutcome::CannotDrive;
    InsideEngine inside;
    if (!inside.usable()) return WaitOutcome::CannotDrive;
    // tent allocates while it drives; a signal's handler runs when this
    // ends (the signal also ends the sleep).
    SignalsHeldOff held;
    struct Presence {
        Presence() { g_program_drivers.fetch_add(1, std::memory_order_relaxed); }
        ~Presence() {
            g_program_drove_ns.store(steady_ns(), std::memory_order_relaxed);
            g_program_drivers.fetch_sub(1, std::memory_order_relaxed);
        }
        Presence(const Presence&) = delete;
        Presence& operator=(const Presence&) = delete;
    } presence;
    TentScope scope;
    int ready = tent_wait_fds(g_engine, timeout_ms, &fd, 1);
    if (ready < 0) return WaitOutcome::CannotDrive;
    if (ready == 0) return WaitOutcome::Woken;
    QuietEvents quiet(channel);  // the caller looks at CHANNEL's queue next
    settle_ready();
    return WaitOutcome::Settled;
}

} // namespace tent::interpose
