#include "signals_held_off.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "common/clock.h"

namespace tent::interpose {

namespace {

std::atomic<std::int64_t> g_last_look_ns{0};  // 0: none yet
std::atomic<bool> g_must_block{true};
std::mutex g_look_mutex;  // wrap_program_handlers(): one thread at a time

std::int64_t now_ns() { return SteadyClock::instance().now().time_since_epoch().count(); }

// Looks when the last look is at least AGE old (ns). A thread that finds
// another looking goes by that one's last finding.
void look_when_older_than(std::int64_t now, std::int64_t age) {
    const std::int64_t last = g_last_look_ns.load(std::memory_order_relaxed);
    if (last != 0 && now - last < age) return;
    std::unique_lock look(g_look_mutex, std::try_to_lock);
    if (!look.owns_lock()) return;
    const std::int64_t again = g_last_look_ns.load(std::memory_order_relaxed);
    if (again != 0 && now - again < age) return;
    g_must_block.store(!wrap_program_handlers(), std::memory_order_relaxed);
    g_last_look_ns.store(now, std::memory_order_relaxed);
}

} // namespace

std::chrono::nanoseconds look_at_handlers_when_due() {
    const std::int64_t interval = std::chrono::nanoseconds(kHandlerLookInterval).count();
    const std::int64_t now = now_ns();
    look_when_older_than(now, interval);
    const std::int64_t left = g_last_look_ns.load(std::memory_order_relaxed) + interval - now;
    // At least a millisecond: a look another thread is taking now ends by then.
    return std::chrono::nanoseconds(std::clamp<std::int64_t>(left, 1000000, interval));
}

bool signals_must_be_blocked() {
    look_when_older_than(now_ns(), std::chrono::nanoseconds(kHandlerLookStale).count());
    return g_must_block.load(std::memory_order_relaxed);
}

} // namespace tent::interpose
