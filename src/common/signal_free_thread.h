// Threads tent starts inside other people's processes take none of their
// asynchronous signals (async_signals.h). A signal sent to the process
// then reaches a thread of the program, which set its handler or blocks
// it to sigwait() for it, instead of a tent thread where the default
// action may end the process or a wait is cut short.
#pragma once

#include <thread>
#include <utility>

#include "common/async_signals.h"

namespace tent {

template <typename F, typename... Args>
std::thread signal_free_thread(F&& f, Args&&... args) {
    // A new thread starts with its creator's mask: block, start, restore.
    AsyncSignalsBlocked blocked;
    return std::thread(std::forward<F>(f), std::forward<Args>(args)...);
}

} // namespace tent
