#include "signals_held_off.h"

#include <atomic>
#include <cstdint>
#include <mutex>

#include "common/clock.h"

namespace tent::interpose {

namespace {

std::atomic<std::int64_t> g_next_look_ns{0};
std::atomic<bool> g_must_block{true};
std::mutex g_look_mutex;  // wrap_program_handlers(): one thread at a time

} // namespace

bool signals_must_be_blocked() {
    const std::int64_t now = SteadyClock::instance().now().time_since_epoch().count();
    if (now >= g_next_look_ns.load(std::memory_order_relaxed)) {
        // A thread that finds another looking goes by that one's last finding.
        std::unique_lock look(g_look_mutex, std::try_to_lock);
        if (look.owns_lock() && now >= g_next_look_ns.load(std::memory_order_relaxed)) {
            g_must_block.store(!wrap_program_handlers(), std::memory_order_relaxed);
            g_next_look_ns.store(now + Duration(kHandlerLookInterval).count(), std::memory_order_relaxed);
        }
    }
    return g_must_block.load(std::memory_order_relaxed);
}

} // namespace tent::interpose
