#include "common/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "config/config.h"

namespace tent {
namespace detail {
std::atomic<int> g_log_level{static_cast<int>(LogLevel::Warn)};
}

namespace {

struct LoggerState {
    std::mutex mutex;
    int fd = STDERR_FILENO;
    bool owns_fd = false;
    std::uint32_t burst = 20;
    std::uint32_t per_second = 10;
    std::atomic<unsigned> generation{1};
};

LoggerState& state() {
    // Never destroyed: logging may happen from other threads during exit.
    static LoggerState* s = new LoggerState;  // NOLINT: intentional leak
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

void set_log_fd(int fd) {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (s.owns_fd) ::close(s.fd);
    s.fd = fd < 0 ? STDERR_FILENO : fd;
    s.owns_fd = false;
}

Status configure_logging(const Config& config) {
    LogLevel level = LogLevel::Warn;
    if (!parse_log_level(config.get_string(Knob::LogLevel), &level))
        return Status(Code::InvalidArgument, "bad log_level");
    auto& s = state();
    Status result;
    {
        std::lock_guard lock(s.mutex);
        s.burst = static_cast<std::uint32_t>(config.get_int(Knob::LogRateBurst));
        s.per_second = static_cast<std::uint32_t>(config.get_int(Knob::LogRateLimit));
        s.generation.fetch_add(1);
        const std::string& dest = config.get_string(Knob::LogDestination);
        int fd = STDERR_FILENO;
        if (!dest.empty() && dest != "stderr") {
            fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd < 0) {
                result = Status::from_errno(errno, "cannot open log destination " + dest);
                fd = STDERR_FILENO;
            }
        }
        if (s.owns_fd) ::close(s.fd);
        s.fd = fd;
        s.owns_fd = fd != STDERR_FILENO;
    }
    set_log_level(level);
    return result;
}

void log_emit(LogSite& site, LogLevel level, const char* keyword, const char* fmt, ...) {
    auto& s = state();
    RateLimiter::Decision decision;
    {
        std::lock_guard lock(site.mutex);
        unsigned gen = s.generation.load(std::memory_order_relaxed);
        if (site.generation != gen) {
            site.limiter.reconfigure(s.burst, s.per_second);
            site.generation = gen;
        }
        decision = site.limiter.admit(SteadyClock::instance().now());
    }
    if (!decision.admit) return;

    char buf[1024];
    int n = std::snprintf(buf, sizeof buf, "tent: pid %d: %s: %s: ", static_cast<int>(::getpid()),
                          log_level_name(level), keyword);
    if (n < 0) return;
    std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1);
    va_list ap;
    va_start(ap, fmt);
    int m = std::vsnprintf(buf + len, sizeof buf - len, fmt, ap);
    va_end(ap);
    if (m > 0) len = std::min<std::size_t>(len + static_cast<std::size_t>(m), sizeof buf - 1);
    if (decision.suppressed_before > 0) {
        int k = std::snprintf(buf + len, sizeof buf - len, " (%llu similar messages suppressed)",
                              static_cast<unsigned long long>(decision.suppressed_before));
        if (k > 0) len = std::min<std::size_t>(len + static_cast<std::size_t>(k), sizeof buf - 1);
    }
    if (len >= sizeof buf - 1) len = sizeof buf - 2;
    buf[len++] = '\n';
    std::lock_guard lock(s.mutex);
    write_all(s.fd, buf, len);
}

} // namespace tent
