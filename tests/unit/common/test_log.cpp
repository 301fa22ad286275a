// Logging: the line format, level filtering (nothing formatted below the
// level), destinations, silence at the default level, and rate limiting of a
// failure storm through the real macros.
#include <criterion/criterion.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "config/config.h"
#include "config/log_setup.h"

using namespace tent;
using namespace std::chrono_literals;

namespace {

// A temporary file that log output is redirected to.
class Capture {
public:
    Capture() {
        fd_ = mkstemp(path_);
        cr_assert_geq(fd_, 0);
        set_log_fd(fd_);
    }
    ~Capture() {
        set_log_fd(-1);
        close(fd_);
        unlink(path_);
    }
    std::string text() const {
        std::string out;
        char buf[8192];
        ssize_t n;
        for (off_t off = 0; (n = pread(fd_, buf, sizeof buf, off)) > 0; off += n)
            out.append(buf, static_cast<std::size_t>(n));
        return out;
    }
    const char* path() const { return path_; }

private:
    char path_[32] = "/tmp/tent-logXXXXXX";
    int fd_ = -1;
};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        lines.push_back(text.substr(start, nl - start));
    cr_expect_eq(start, text.size(), "output does not end with a newline");
    return lines;
}

std::string prefix(const char* level) {
    return "tent: pid " + std::to_string(getpid()) + ": " + level + ": ";
}

int g_formatted = 0;
int counted(int v) {
    ++g_formatted;
    return v;
}

} // namespace

Test(log, line_format) {
    Capture cap;
    TENT_WARN("rail paused", "rail %s paused for %d s", "mlx5_0:1", 30);
    TENT_ERROR("device fatal", "device %s lost", "mlx5_1");
    std::string got = cap.text();
    std::string want = prefix("warn") + "rail paused: rail mlx5_0:1 paused for 30 s\n" +
                       prefix("error") + "device fatal: device mlx5_1 lost\n";
    cr_expect_str_eq(got.c_str(), want.c_str());
}

Test(log, default_level_is_warn_and_silent_for_info_and_debug) {
    // A healthy run logs only info/debug/trace events: none may reach output.
    Capture cap;
    cr_expect_eq(static_cast<int>(log_level()), static_cast<int>(LogLevel::Warn));
    g_formatted = 0;
    TENT_INFO("connected", "peer %d", counted(1));
    TENT_DEBUG("chunk", "chunk %d", counted(2));
    TENT_TRACE("poll", "cq %d", counted(3));
    std::string got = cap.text();
    cr_expect_str_eq(got.c_str(), "");
    cr_expect_eq(g_formatted, 0, "arguments below the level were evaluated");
}

Test(log, configured_defaults_stay_silent) {
    Config config;
    cr_assert(configure_logging(config).is_ok());
    Capture cap;  // after configure_logging, which points logging at stderr
    TENT_INFO("connected", "peer %d", 1);
    TENT_DEBUG("chunk", "chunk %d", 2);
    std::string got = cap.text();
    cr_expect_str_eq(got.c_str(), "");
}

Test(log, level_filtering_at_each_level) {
    const LogLevel levels[] = {LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug,
                               LogLevel::Trace};
    for (LogLevel level : levels) {
        Capture cap;
        set_log_level(level);
        g_formatted = 0;
        TENT_ERROR("e", "%d", counted(0));
        TENT_WARN("w", "%d", counted(1));
        TENT_INFO("i", "%d", counted(2));
        TENT_DEBUG("d", "%d", counted(3));
        TENT_TRACE("t", "%d", counted(4));
        auto lines = lines_of(cap.text());
        int expected = static_cast<int>(level) + 1;
        cr_expect_eq(static_cast<int>(lines.size()), expected, "level %s: %zu lines",
                     log_level_name(level), lines.size());
        cr_expect_eq(g_formatted, expected, "level %s formatted %d", log_level_name(level), g_formatted);
        for (std::size_t i = 0; i < lines.size(); ++i) {
            std::string want = prefix(log_level_name(levels[i]));
            cr_expect(lines[i].rfind(want, 0) == 0, "line '%s'", lines[i].c_str());
        }
    }
}

Test(log, parse_log_level_accepts_the_five_names_only) {
    LogLevel level = LogLevel::Error;
    cr_expect(parse_log_level("trace", &level));
    cr_expect_eq(static_cast<int>(level), static_cast<int>(LogLevel::Trace));
    cr_expect(parse_log_level("info", &level));
    cr_expect_eq(static_cast<int>(level), static_cast<int>(LogLevel::Info));
    cr_expect_not(parse_log_level("verbose", &level));
    cr_expect_not(parse_log_level("WARN", &level));
    cr_expect_not(parse_log_level("", &level));
}

Test(log, configure_level_from_config) {
    Config config;
    cr_assert(config.set(Knob::LogLevel, "debug", Source{}).is_ok());
    cr_assert(configure_logging(config).is_ok());
    Capture cap;
    TENT_DEBUG("chunk", "chunk %d", 7);
    TENT_TRACE("poll", "never");
    std::string got = cap.text();
    std::string want = prefix("debug") + "chunk: chunk 7\n";
    cr_expect_str_eq(got.c_str(), want.c_str());
}

Test(log, file_destination_appends) {
    char path[] = "/tmp/tent-logfileXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "earlier\n", 8), 8);
    close(fd);
    Config config;
    cr_assert(config.set(Knob::LogDestination, path, Source{}).is_ok());
    Status st = configure_logging(config);
    cr_assert(st.is_ok(), "%s", st.to_string().c_str());
    cr_expect_neq(log_fd(), STDERR_FILENO);
    TENT_WARN("rail paused", "rail %d", 1);
    // Back to stderr: the file is closed and complete.
    Config back;
    cr_assert(configure_logging(back).is_ok());
    cr_expect_eq(log_fd(), STDERR_FILENO);

    std::string text;
    fd = open(path, O_RDONLY);
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    close(fd);
    unlink(path);
    std::string want = "earlier\n" + prefix("warn") + "rail paused: rail 1\n";
    cr_expect_str_eq(text.c_str(), want.c_str());
}

Test(log, bad_destination_is_an_error_and_falls_back_to_stderr) {
    const std::string bad = "/nonexistent-tent-dir/tent.log";
    Config config;
    cr_assert(config.set(Knob::LogDestination, bad, Source{}).is_ok());
    cr_assert(config.set(Knob::LogLevel, "info", Source{}).is_ok());
    Status st = configure_logging(config);
    cr_expect_not(st.is_ok());
    std::string message = st.message();
    cr_expect(message.find(bad) != std::string::npos, "message does not name the path: %s",
              message.c_str());
    cr_expect_eq(log_fd(), STDERR_FILENO);
    // The rest of the configuration still applies.
    cr_expect_eq(static_cast<int>(log_level()), static_cast<int>(LogLevel::Info));
}

Test(log, errno_survives_logging_and_feeds_percent_m) {
    Capture cap;
    errno = EBADF;
    TENT_WARN("close failed", "close: %m");
    cr_expect_eq(errno, EBADF);
    errno = ENOENT;
    TENT_INFO("suppressed by level", "x");  // below the level
    cr_expect_eq(errno, ENOENT);
    std::string got = cap.text();
    std::string want = prefix("warn") + "close failed: close: " + std::strerror(EBADF) + "\n";
    cr_expect_str_eq(got.c_str(), want.c_str());
}

Test(log, long_messages_are_cut_but_end_with_a_newline) {
    Capture cap;
    std::string huge(5000, 'x');
    TENT_WARN("huge", "%s", huge.c_str());
    TENT_WARN("after", "ok");
    auto lines = lines_of(cap.text());
    cr_assert_eq(lines.size(), 2u);
    cr_expect_lt(lines[0].size(), 1024u);
    cr_expect_gt(lines[0].size(), 900u);
    std::string want = prefix("warn") + "after: ok";
    cr_expect_str_eq(lines[1].c_str(), want.c_str());
}

Test(log, storm_at_one_site_is_bounded_and_reports_suppressed_lines) {
    // 1,000,000 failures over 10 simulated seconds at one call site, with the
    // default limits (burst 20, 10 lines/s).
    Config config;
    cr_assert(configure_logging(config).is_ok());
    Capture cap;
    ManualClock clock;
    set_log_clock(&clock);
    const int calls = 1'000'000;
    for (int i = 0; i < calls; ++i) {
        TENT_WARN("rail error", "completion error on rail %d", i % 4);
        clock.advance(10us);
    }
    set_log_clock(nullptr);
    std::string text = cap.text();
    auto lines = lines_of(text);
    const std::size_t burst = config.get_int(Knob::LogRateBurst);
    const std::size_t rate = config.get_int(Knob::LogRateLimit);
    cr_expect_leq(lines.size(), burst + rate * 10 + 1, "%zu lines", lines.size());
    cr_expect_geq(lines.size(), burst + rate * 10 - 1, "%zu lines", lines.size());
    cr_expect_lt(text.size(), 20'000u, "%zu bytes", text.size());
    // Add up the reported suppressions: with the lines written they account
    // for every call except those after the last line (at most 100 ms).
    unsigned long long suppressed = 0;
    std::size_t notes = 0;
    for (const auto& line : lines) {
        cr_expect(line.rfind(prefix("warn") + "rail error: completion error on rail ", 0) == 0,
                  "line '%s'", line.c_str());
        auto open = line.find(" (");
        if (open == std::string::npos) continue;
        unsigned long long n = 0;
        char tail[64] = "";
        cr_expect_eq(std::sscanf(line.c_str() + open, " (%llu %63[^)])", &n, tail), 2, "'%s'", line.c_str());
        cr_expect_str_eq(tail, "similar messages suppressed");
        suppressed += n;
        ++notes;
    }
    cr_expect_eq(notes, lines.size() - burst);
    cr_expect_leq(lines.size() + suppressed, static_cast<unsigned long long>(calls));
    cr_expect_geq(lines.size() + suppressed, static_cast<unsigned long long>(calls) - 10'000);
}

Test(log, call_sites_are_limited_independently) {
    Config config;
    cr_assert(config.set(Knob::LogRateBurst, "3", Source{}).is_ok());
    cr_assert(config.set(Knob::LogRateLimit, "1", Source{}).is_ok());
    cr_assert(configure_logging(config).is_ok());
    Capture cap;
    ManualClock clock;
    set_log_clock(&clock);
    for (int i = 0; i < 1000; ++i) TENT_WARN("site a", "storm %d", i);
    for (int i = 0; i < 3; ++i) TENT_WARN("site b", "quiet %d", i);
    set_log_clock(nullptr);
    auto lines = lines_of(cap.text());
    cr_assert_eq(lines.size(), 6u, "%zu lines", lines.size());
    for (int i = 0; i < 3; ++i) {
        std::string a = prefix("warn") + "site a: storm " + std::to_string(i);
        std::string b = prefix("warn") + "site b: quiet " + std::to_string(i);
        cr_expect_str_eq(lines[static_cast<std::size_t>(i)].c_str(), a.c_str());
        cr_expect_str_eq(lines[static_cast<std::size_t>(i) + 3].c_str(), b.c_str());
    }
}

Test(log, unlimited_rate_writes_every_line_from_two_threads_intact) {
    Config config;
    cr_assert(config.set(Knob::LogRateLimit, "0", Source{}).is_ok());
    cr_assert(configure_logging(config).is_ok());
    Capture cap;
    auto writer = [](int id) {
        for (int i = 0; i < 2000; ++i) TENT_WARN("thread", "writer %d line %d", id, i);
    };
    std::thread t1(writer, 1), t2(writer, 2);
    t1.join();
    t2.join();
    auto lines = lines_of(cap.text());
    cr_expect_eq(lines.size(), 4000u);
    const std::string p = prefix("warn") + "thread: writer ";
    for (const auto& line : lines) cr_expect(line.rfind(p, 0) == 0, "torn line '%s'", line.c_str());
}
