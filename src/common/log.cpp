#include "common/log.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "common/knob_table.h"

namespace tent {
namespace detail {
std::atomic<int> g_log_level{static_cast<int>(LogLevel::Warn)};
}

namespace {

struct LoggerState {
    std::mutex mutex;          // guards fd/owns_fd changes and serialises writes
    int fd = STDERR_FILENO;
    bool owns_fd = false;
    std::uint32_t burst = 0;
    std::uint32_t per_second = 0;
    std::atomic<unsigned> generation{1};
    std::atomic<const Clock*> clock{nullptr};
};

std::atomic<LoggerState*> g_state{nullptr};
// The current fd, outside LoggerState so that reading it never creates the
// state: the crash reporter reads it from a signal handler.
std::atomic<int> g_fd_mirror{STDERR_FILENO};

// A child forked while another thread was writing a line must not inherit
// a locked mutex.
void atfork_prepare() { g_state.load()->mutex.lock(); }
void atfork_release() { g_state.load()->mutex.unlock(); }

std::uint32_t knob_default(Knob knob) {
    std::string_view text = knob_spec(knob).default_text;
    std::uint32_t value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

LoggerState* make_state() {
    // Never destroyed: logging may happen from other threads during exit.
    auto* s = new LoggerState;  // NOLINT: intentional leak
    // Rate limits start at the knob table's defaults, never typed twice.
    s->burst = knob_default(Knob::LogRateBurst);
    s->per_second = knob_default(Knob::LogRateLimit);
    g_state.store(s);
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
    return s;
}

LoggerState& state() {
    static LoggerState* s = make_state();
    return *s;
}

void write_all(int fd, const char* buf, std::size_t len) {
    while (len > 0) {
        ssize_t n = ::write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return;  // nowhere left to report a logging failure
        }
        buf += n;
        len -= static_cast<std::size_t>(n);
    }
}

// Replaces the destination; the caller holds s.mutex.
void set_fd_locked(LoggerState& s, int fd, bool owns) {
    if (s.owns_fd && s.fd != fd) ::close(s.fd);
    s.fd = fd;
    s.owns_fd = owns;
    g_fd_mirror.store(fd, std::memory_order_release);
}

} // namespace

const char* log_level_name(LogLevel level) {
    switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
    case LogLevel::Trace: return "trace";
    }
    return "?";
}

bool parse_log_level(const std::string& text, LogLevel* out) {
    for (int i = 0; i <= static_cast<int>(LogLevel::Trace); ++i) {
        auto level = static_cast<LogLevel>(i);
        if (text == log_level_name(level)) {
            *out = level;
            return true;
        }
    }
    return false;
}

void set_log_level(LogLevel level) {
    detail::g_log_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogLevel log_level() {
    return static_cast<LogLevel>(detail::g_log_level.load(std::memory_order_relaxed));
}

void set_log_fd(int fd) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    set_fd_locked(s, fd < 0 ? STDERR_FILENO : fd, false);
}

int log_fd() { return g_fd_mirror.load(std::memory_order_acquire); }

void set_log_clock(const Clock* clock) { state().clock.store(clock, std::memory_order_release); }

Status apply_log_settings(const LogSettings& settings) {
    auto& s = state();
    Status result;
    {
        std::lock_guard lock(s.mutex);
        s.burst = settings.rate_burst;
        s.per_second = settings.rate_limit;
        s.generation.fetch_add(1);
        const std::string& dest = settings.destination;
        int fd = STDERR_FILENO;
        if (!dest.empty() && dest != "stderr") {
            fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd < 0) {
                result = Status::from_errno(errno, "cannot open log_destination " + dest +
                                                       " (logging to stderr)");
                fd = STDERR_FILENO;
            }
        }
        set_fd_locked(s, fd, fd != STDERR_FILENO);
    }
    set_log_level(settings.level);
    return result;
}

void log_emit(LogSite& site, LogLevel level, const char* keyword, const char* fmt, ...) {
    // Callers log right after a failed system call and then read errno.
    const int saved_errno = errno;
    auto& s = state();
    const Clock* clock = s.clock.load(std::memory_order_acquire);
    if (clock == nullptr) clock = &SteadyClock::instance();
    RateLimiter::Decision decision;
    {
        std::lock_guard lock(site.mutex);
        unsigned gen = s.generation.load(std::memory_order_relaxed);
        if (site.generation != gen) {
            std::lock_guard state_lock(s.mutex);
            site.limiter.reconfigure(s.burst, s.per_second);
            site.generation = gen;
        }
        decision = site.limiter.admit(clock->now());
    }
    if (!decision.admit) {
        errno = saved_errno;
        return;
    }

    char buf[1024];
    int n = std::snprintf(buf, sizeof buf, "tent: pid %d: %s: %s: ", static_cast<int>(::getpid()),
                          log_level_name(level), keyword);
    std::size_t len = n > 0 ? std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1) : 0;
    va_list ap;
    va_start(ap, fmt);
    errno = saved_errno;  // for %m
    int m = std::vsnprintf(buf + len, sizeof buf - len, fmt, ap);
    va_end(ap);
    if (m > 0) len = std::min<std::size_t>(len + static_cast<std::size_t>(m), sizeof buf - 1);
    if (decision.suppressed_before > 0) {
        int k = std::snprintf(buf + len, sizeof buf - len, " (%llu similar messages suppressed)",
                              static_cast<unsigned long long>(decision.suppressed_before));
        if (k > 0) len = std::min<std::size_t>(len + static_cast<std::size_t>(k), sizeof buf - 1);
    }
    // Always end with a newline, truncating the message if it had to.
    if (len > sizeof buf - 2) len = sizeof buf - 2;
    buf[len++] = '\n';
    {
        std::lock_guard lock(s.mutex);
        write_all(s.fd, buf, len);
    }
    errno = saved_errno;
}

} // namespace tent
