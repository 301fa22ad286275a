// Logging: levels, a "tent:" prefix with the pid, a stable keyword per event,
// and per-call-site rate limiting so a failure storm cannot flood the log.
// The level is checked before anything is formatted. Silent at the default
// level (warn) in a healthy run.
//
//   TENT_WARN("rail paused", "rail %s paused for %d s", name, secs);
//   -> tent: pid 4242: warn: rail paused: rail mlx5_0:1 paused for 30 s
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/rate_limiter.h"
#include "common/status.h"

namespace tent {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3, Trace = 4 };

const char* log_level_name(LogLevel level);
// Parses error|warn|info|debug|trace; false on anything else.
bool parse_log_level(const std::string& text, LogLevel* out);

namespace detail {
extern std::atomic<int> g_log_level;
}

inline bool log_enabled(LogLevel level) {
    return static_cast<int>(level) <= detail::g_log_level.load(std::memory_order_relaxed);
}

// Per-call-site state (one static instance per TENT_LOG use).
struct LogSite {
    std::mutex mutex;
    // Placeholder limits: replaced by the logger's (log_rate_burst,
    // log_rate_limit) before the first line, because generation starts stale.
    RateLimiter limiter{1, 1};
    unsigned generation = 0;  // reconfigure limiter when the logger's settings change
};

void log_emit(LogSite& site, LogLevel level, const char* keyword, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// The logger's settings as plain values: the config layer fills them from
// log_level, log_destination, log_rate_limit and log_rate_burst
// (config/log_setup.h), so this layer knows no Config.
struct LogSettings {
    LogLevel level = LogLevel::Warn;
    std::string destination;      // a file to append to; "" or "stderr" is stderr
    std::uint32_t rate_limit = 0; // lines per second per call site
    std::uint32_t rate_burst = 0;
};

// Returns an error if the destination cannot be opened (logging then goes to
// stderr); the level and rate limits are applied anyway.
Status apply_log_settings(const LogSettings& settings);
void set_log_level(LogLevel level);
LogLevel log_level();
// Redirect to a file descriptor the caller owns (tests); -1 restores stderr.
void set_log_fd(int fd);
// The descriptor log lines currently go to. Async-signal-safe (one atomic
// load), for the crash reporter.
int log_fd();
// The clock rate limiting runs on; nullptr restores the steady clock. For
// tests that drive a log storm through simulated time.
void set_log_clock(const Clock* clock);

} // namespace tent

#define TENT_LOG(level, keyword, ...)                                   \
    do {                                                                \
        if (::tent::log_enabled(level)) {                               \
            static ::tent::LogSite tent_log_site_;                      \
            ::tent::log_emit(tent_log_site_, level, keyword, __VA_ARGS__); \
        }                                                               \
    } while (0)

#define TENT_ERROR(keyword, ...) TENT_LOG(::tent::LogLevel::Error, keyword, __VA_ARGS__)
#define TENT_WARN(keyword, ...) TENT_LOG(::tent::LogLevel::Warn, keyword, __VA_ARGS__)
#define TENT_INFO(keyword, ...) TENT_LOG(::tent::LogLevel::Info, keyword, __VA_ARGS__)
#define TENT_DEBUG(keyword, ...) TENT_LOG(::tent::LogLevel::Debug, keyword, __VA_ARGS__)
#define TENT_TRACE(keyword, ...) TENT_LOG(::tent::LogLevel::Trace, keyword, __VA_ARGS__)
