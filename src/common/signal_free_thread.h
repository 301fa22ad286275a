// Threads tent starts inside other people's processes take none of their
// asynchronous signals. A signal sent to the process (alarm(), kill(),
// a terminal's SIGINT) then reaches a thread of the program, which set
// its handler or blocks it to sigwait() for it, instead of a tent thread
// where the default action may end the process or a wait is cut short.
// Signals a thread raises by faulting stay open, so a crash in a tent
// thread is still reported (crash_reporter.h).
#pragma once

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

namespace tent {

template <typename F, typename... Args>
std::thread signal_free_thread(F&& f, Args&&... args) {
    sigset_t blocked;
    sigfillset(&blocked);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&blocked, sig);
    // A new thread starts with its creator's mask: block, start, restore.
    struct MaskGuard {
        sigset_t old;
        explicit MaskGuard(const sigset_t& set) { pthread_sigmask(SIG_BLOCK, &set, &old); }
        ~MaskGuard() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
        MaskGuard(const MaskGuard&) = delete;
        MaskGuard& operator=(const MaskGuard&) = delete;
    } guard(blocked);
    return std::thread(std::forward<F>(f), std::forward<Args>(args)...);
}

} // namespace tent
