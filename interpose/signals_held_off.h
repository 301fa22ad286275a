// The program's signals, held off its thread while the interposer works
// there. Every post and poll of a carried queue pair runs tent on the
// program's thread, and tent allocates: a signal whose handler is not
// async-signal-safe (perftest's duration mode reads with stdio from its
// SIGALRM handler) would deadlock on the allocator's lock if it landed
// inside tent's malloc(). So the program's handlers are wrapped in tent's
// trampolines (deferred_signals.h), and a signal that lands inside tent's
// work waits until it is done, at no cost unless one lands. Where a handler
// could not be wrapped, the signals are blocked instead (async_signals.h:
// two system calls per call, which halved ib_send_bw's 64 B message rate on
// a two-core virtual machine). The handlers are looked at (sigaction() per
// signal, about 80 us) every kHandlerLookInterval by the interposer's own
// thread (the harvester, runtime_harvest.cpp), not on the program's: there
// a look would stall a verb every 20 ms (tens of system calls each). The
// program's thread looks itself only when no look came for
// kHandlerLookStale: before tent's thread starts, or in a forked child
// that has none.
#pragma once

#include <chrono>
#include <optional>

#include "common/async_signals.h"
#include "common/deferred_signals.h"

namespace tent::interpose {

inline constexpr auto kHandlerLookInterval = std::chrono::milliseconds(20);
inline constexpr auto kHandlerLookStale = 3 * kHandlerLookInterval;

// Looks at the program's handlers when the last look is kHandlerLookInterval
// old; returns how long until the next look is due.
std::chrono::nanoseconds look_at_handlers_when_due();

// Whether, at the last look (taken now, on this thread, when the last is
// older than kHandlerLookStale), some handler of the program could not be
// wrapped: the signals must then be blocked.
bool signals_must_be_blocked();

class SignalsHeldOff {
public:
    enum class Start { Now, Later };
    // Later: hold them only from engage() on (decided here, away from the
    // interposer's locks: a look takes 80 us).
    explicit SignalsHeldOff(Start start = Start::Now) : block_(signals_must_be_blocked()) {
        if (start == Start::Now) engage();
    }
    void engage() {
        if (deferred_) return;
        deferred_.emplace();
        if (block_) blocked_.emplace();
    }

private:
    bool block_;
    std::optional<SignalsDeferred> deferred_;
    // Destroyed first: a signal that waited in the kernel lands in the
    // deferral, which lets it go last, with the mask the thread had.
    std::optional<AsyncSignalsBlocked> blocked_;
};

} // namespace tent::interpose
