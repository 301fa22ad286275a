#include "common/deferred_signals.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <utility>

#include "common/async_signals.h"

namespace tent {

namespace {

using InfoHandler = void (*)(int, siginfo_t*, void*);
using PlainHandler = void (*)(int);

// What a trampoline stands for. Written once, before the trampoline is
// installed anywhere; read in signal context (lock-free atomics only).
struct Target {
    std::atomic<void*> handler{nullptr};
    std::atomic<bool> siginfo{false};  // called as sa_sigaction
    std::atomic<bool> one_shot{false};  // SA_RESETHAND: back to SIG_DFL before the call
};

std::array<Target, kSignalTrampolines> g_targets;
int g_targets_used = 0;  // under the callers' serialisation (wrap_program_handlers)

// Per thread: plain values, nothing to construct or destroy (read in signal
// context and during exit()).
thread_local int t_depth = 0;
thread_local bool t_held = false;  // a signal landed in a scope: the asynchronous signals are blocked
thread_local sigset_t t_mask_before;  // the thread's mask when the first one landed

void on_signal(int slot, int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    const Target& target = g_targets[static_cast<std::size_t>(slot)];
    if (t_depth > 0) {
        // Inside tent: queue it again to this thread, with its siginfo, and
        // return with the asynchronous signals blocked (the mask the kernel
        // restores is the context's), so it waits for the scope's end.
        auto* uc = static_cast<ucontext_t*>(context);
        if (!t_held) {
            t_mask_before = uc->uc_sigmask;
            t_held = true;
        }
        // Blocked here too: with SA_NODEFER the signal queued below would
        // otherwise land at once, inside this very handler.
        (void)sigprocmask(SIG_BLOCK, &asynchronous_signals(), nullptr);
        (void)syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), sig, info);
        sigset_t& mask = uc->uc_sigmask;
        (void)sigorset(&mask, &mask, &asynchronous_signals());
        errno = saved_errno;
        return;
    }
    void* handler = target.handler.load(std::memory_order_acquire);
    if (target.one_shot.load(std::memory_order_relaxed)) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        (void)sigaction(sig, &dfl, nullptr);
    }
    errno = saved_errno;
    if (target.siginfo.load(std::memory_order_relaxed)) reinterpret_cast<InfoHandler>(handler)(sig, info, context);
    else reinterpret_cast<PlainHandler>(handler)(sig);
}

template <int Slot>
void trampoline(int sig, siginfo_t* info, void* context) {
    on_signal(Slot, sig, info, context);
}

template <int... Slots>
constexpr std::array<InfoHandler, sizeof...(Slots)> make_trampolines(std::integer_sequence<int, Slots...>) {
    return {&trampoline<Slots>...};
}

constexpr std::array<InfoHandler, kSignalTrampolines> kTrampolines =
    make_trampolines(std::make_integer_sequence<int, kSignalTrampolines>{});

// The trampoline standing for this handler, a new one if none does yet; -1
// when all are taken.
int trampoline_for(void* handler, bool siginfo, bool one_shot) {
    for (int i = 0; i < g_targets_used; ++i) {
        const Target& t = g_targets[static_cast<std::size_t>(i)];
        if (t.handler.load(std::memory_order_relaxed) == handler && t.siginfo.load(std::memory_order_relaxed) == siginfo &&
            t.one_shot.load(std::memory_order_relaxed) == one_shot)
            return i;
    }
    if (g_targets_used == kSignalTrampolines) return -1;
    Target& t = g_targets[static_cast<std::size_t>(g_targets_used)];
    t.siginfo.store(siginfo, std::memory_order_relaxed);
    t.one_shot.store(one_shot, std::memory_order_relaxed);
    t.handler.store(handler, std::memory_order_release);
    return g_targets_used++;
}

} // namespace

bool is_signal_trampoline(InfoHandler handler) {
    for (InfoHandler t : kTrampolines)
        if (t == handler) return true;
    return false;
}

bool wrap_program_handlers() {
    const sigset_t& asynchronous = asynchronous_signals();
    bool all = true;
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sigismember(&asynchronous, sig) != 1) continue;
        struct sigaction now;
        if (sigaction(sig, nullptr, &now) != 0) continue;  // glibc's own (SIGCANCEL, SIGSETXID): not the program's
        // sa_handler and sa_sigaction share their storage.
        if (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN || is_signal_trampoline(now.sa_sigaction)) continue;
        const bool siginfo = (now.sa_flags & SA_SIGINFO) != 0;
        void* handler = siginfo ? reinterpret_cast<void*>(now.sa_sigaction) : reinterpret_cast<void*>(now.sa_handler);
        const bool one_shot = (now.sa_flags & SA_RESETHAND) != 0;
        const int slot = trampoline_for(handler, siginfo, one_shot);
        if (slot < 0) {
            all = false;
            continue;
        }
        struct sigaction wrapped = now;
        wrapped.sa_sigaction = kTrampolines[static_cast<std::size_t>(slot)];
        wrapped.sa_flags = (now.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
        if (sigaction(sig, &wrapped, nullptr) != 0) all = false;
    }
    return all;
}

SignalsDeferred::SignalsDeferred() {
    ++t_depth;
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

SignalsDeferred::~SignalsDeferred() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (--t_depth > 0 || !t_held) return;
    t_held = false;
    // The kernel delivers what waited as the mask opens.
    (void)pthread_sigmask(SIG_SETMASK, &t_mask_before, nullptr);
}

} // namespace tent
