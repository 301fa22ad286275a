#include "common/async_signals.h"

#include <pthread.h>

#include <initializer_list>

namespace tent {

namespace {

sigset_t make_asynchronous_signals() {
    sigset_t set;
    sigfillset(&set);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&set, sig);
    return set;
}

// Guards alive on this thread: a plain int, nothing to destroy at thread
// exit (a guard may run during exit()).
thread_local int t_depth = 0;

} // namespace

const sigset_t& asynchronous_signals() {
    static const sigset_t set = make_asynchronous_signals();
    return set;
}

AsyncSignalsBlocked::AsyncSignalsBlocked() : outermost_(t_depth++ == 0) {
    if (outermost_) pthread_sigmask(SIG_BLOCK, &asynchronous_signals(), &old_);
}

AsyncSignalsBlocked::~AsyncSignalsBlocked() {
    --t_depth;
    if (outermost_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

} // namespace tent
