// The program's signals, held off its thread while the interposer works
// there. Every post and poll of a carried queue pair runs tent on the
// program's thread, and tent allocates: a signal whose handler is not
// async-signal-safe (perftest's duration mode prints from its SIGALRM
// handler) would deadlock on the allocator's lock if it landed inside
// tent's malloc(). Holding the signals off (async_signals.h) costs two
// system calls per call (12% of ib_write_bw's 64 KiB rate on a two-core
// virtual machine), so it is done only while the program catches some
// asynchronous signal: a program without handlers has nothing to deadlock.
// The handlers are looked at (sigaction() per signal, about 80 us) at most
// every kHandlerLookInterval, so a handler installed later is honoured
// from the first call after that.
#pragma once

#include <chrono>
#include <optional>

#include "common/async_signals.h"

namespace tent::interpose {

inline constexpr auto kHandlerLookInterval = std::chrono::milliseconds(20);

// Whether the program had a handler for an asynchronous signal at the
// last look (taken now when the last is older than kHandlerLookInterval).
bool program_catches_signals();

class SignalsHeldOff {
public:
    SignalsHeldOff() {
        if (program_catches_signals()) blocked_.emplace();
    }

private:
    std::optional<AsyncSignalsBlocked> blocked_;
};

} // namespace tent::interpose
