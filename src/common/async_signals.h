// Asynchronous signals: those sent to a process or thread (alarm(), kill(),
// a terminal's SIGINT), as opposed to those a thread raises by faulting,
// which stay open so that a crash is still reported (crash_reporter.h).
//
// AsyncSignalsBlocked holds them off the calling thread for its lifetime;
// one that arrived meanwhile is delivered when the outermost guard goes.
// The interposer runs tent on the program's own thread (every post and
// poll of a carried queue pair) and tent allocates there: a handler of the
// program that is not async-signal-safe (perftest's duration mode prints
// from its SIGALRM handler) would otherwise deadlock on the allocator's
// lock when the signal lands inside tent's malloc(). Nested guards on one
// thread cost nothing: only the outermost changes the mask (two system
// calls).
#pragma once

#include <signal.h>

namespace tent {

// Every signal but SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS and
// SIGABRT.
const sigset_t& asynchronous_signals();

class AsyncSignalsBlocked {
public:
    AsyncSignalsBlocked();
    ~AsyncSignalsBlocked();
    AsyncSignalsBlocked(const AsyncSignalsBlocked&) = delete;
    AsyncSignalsBlocked& operator=(const AsyncSignalsBlocked&) = delete;

private:
    sigset_t old_;
    bool outermost_;
};

} // namespace tent
