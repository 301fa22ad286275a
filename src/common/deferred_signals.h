// The program's asynchronous signals (async_signals.h), put off while tent
// works on the program's thread, without a system call per call into tent.
//
// The interposer runs tent inside the program's verbs, and tent allocates
// there: a handler that is not async-signal-safe (perftest's duration mode
// reads /proc/stat with stdio from its SIGALRM handler) would deadlock on the
// allocator's lock if its signal landed inside tent's malloc(). Blocking the
// signals around each verb (AsyncSignalsBlocked) costs two system calls per
// verb, which halved ib_send_bw's 64 B message rate under tent on a two-core
// virtual machine. Instead, each handler of the program is installed again
// with a trampoline of tent's in front of it (same mask and flags; a
// one-shot handler's reset is done by the trampoline):
//  - outside tent the trampoline calls the program's handler at once;
//  - inside tent (a SignalsDeferred scope alive on the thread) it queues the
//    signal again to the same thread, with its siginfo, and leaves the
//    asynchronous signals blocked when it returns; the outermost scope's end
//    restores the thread's mask and the kernel delivers the signal, now to
//    the program's handler.
// A call into tent then costs nothing unless a signal lands in it.
//
// What the program can see: sigaction() reports tent's trampoline as the
// handler. Installing that again (restoring an "old" handler it was given)
// gets the handler it stood for: each trampoline stands for one handler, for
// good. A handler the program installs later is wrapped at the next look.
// Handlers that cannot be wrapped (more distinct ones than trampolines) make
// wrap_program_handlers() say so: the caller blocks the signals instead.
#pragma once

#include <signal.h>

namespace tent {

inline constexpr int kSignalTrampolines = 64;

// Wraps every handler of the program for an asynchronous signal not wrapped
// yet. False when one could not be: while that stays so, calls into tent must
// block the signals. Not async-signal-safe; one thread at a time (callers
// serialise).
bool wrap_program_handlers();

// Whether `handler` is one of tent's trampolines.
bool is_signal_trampoline(void (*handler)(int, siginfo_t*, void*));

// For its lifetime, a wrapped handler's signal that lands on this thread
// waits until the outermost scope ends. Nests; no system call unless a
// signal landed meanwhile.
class SignalsDeferred {
public:
    SignalsDeferred();
    ~SignalsDeferred();
    SignalsDeferred(const SignalsDeferred&) = delete;
    SignalsDeferred& operator=(const SignalsDeferred&) = delete;
};

} // namespace tent
