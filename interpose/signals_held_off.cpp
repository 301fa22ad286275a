#include "signals_held_off.h"

#include <signal.h>

#include <atomic>
#include <cstdint>

#include "common/clock.h"

namespace tent::interpose {

namespace {

bool any_handler() {
    const sigset_t& asynchronous = asynchronous_signals();
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sigismember(&asynchronous, sig) != 1) continue;
        struct sigaction sa;
        if (sigaction(sig, nullptr, &sa) != 0) continue;  // glibc's own (SIGCANCEL, SIGSETXID): not the program's
        if (sa.sa_flags & SA_SIGINFO) {
            if (sa.sa_sigaction) return true;
        } else if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
            return true;
        }
    }
    return false;
}

std::atomic<std::int64_t> g_next_look_ns{0};
std::atomic<bool> g_catches{true};

} // namespace

bool program_catches_signals() {
    const std::int64_t now = SteadyClock::instance().now().time_since_epoch().count();
    if (now >= g_next_look_ns.load(std::memory_order_relaxed)) {
        // Two threads may look at once: both find the same.
        g_next_look_ns.store(now + Duration(kHandlerLookInterval).count(), std::memory_order_relaxed);
        g_catches.store(any_handler(), std::memory_order_relaxed);
    }
    return g_catches.load(std::memory_order_relaxed);
}

} // namespace tent::interpose
