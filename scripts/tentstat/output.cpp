#include "tentstat/output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tent::tentstat {
namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

void catch_stop_signals() {
    struct sigaction sa{};
    sa.sa_handler = on_signal;  // no SA_RESTART: poll() returns at once
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
}

// The terminal in "one key at a time, no echo" mode for as long as it lives.
class RawTerminal {
public:
    RawTerminal() {
        if (::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
            struct termios raw = saved_;
            raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
            raw.c_cc[VMIN] = 1;
            raw.c_cc[VTIME] = 0;
            active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
        }
    }
    ~RawTerminal() {
        if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }
    RawTerminal(const RawTerminal&) = delete;
    RawTerminal& operator=(const RawTerminal&) = delete;

private:
    struct termios saved_{};
    bool active_ = false;
};

std::size_t terminal_width() {
    struct winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

bool write_all(int fd, const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
        ssize_t n = ::write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// Waits up to `seconds` for a key; true when 'q' was pressed or a stop signal came.
bool wait_for_quit(double seconds) {
    const auto until_ms = static_cast<long long>(seconds * 1000);
    struct pollfd p{STDIN_FILENO, POLLIN, 0};
    long long left = until_ms;
    while (left > 0 && !g_stop) {
        const auto start = std::chrono::steady_clock::now();
        int n = ::poll(&p, 1, static_cast<int>(left));
        if (n > 0) {
            char c = 0;
            ssize_t r = ::read(STDIN_FILENO, &c, 1);
            if (r == 0) p.fd = -1;  // stdin closed: keep refreshing until the interval ends
            if (r == 1 && (c == 'q' || c == 'Q')) return true;
        }
        left -= std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    }
    return g_stop != 0;
}

} // namespace

int watch(const std::function<std::string(std::size_t)>& screen, double interval_s, long count) {
    catch_stop_signals();
    RawTerminal raw;
    // Clear once, then redraw from the top left, clearing what the last
    // screen left below each line and below the screen: no flicker.
    write_all(STDOUT_FILENO, "\033[H\033[2J");
    for (long n = 1;; ++n) {
        std::string text = screen(terminal_width());
        std::string frame = "\033[H";
        std::size_t at = 0;
        while (at < text.size()) {
            std::size_t nl = text.find('\n', at);
            if (nl == std::string::npos) nl = text.size();
            frame += text.substr(at, nl - at) + "\033[K\n";
            at = nl + 1;
        }
        frame += "(q to quit)\033[K\033[J";
        if (!write_all(STDOUT_FILENO, frame)) return 1;
        if ((count > 0 && n >= count) || wait_for_quit(interval_s)) break;
    }
    write_all(STDOUT_FILENO, "\n");
    return 0;
}

int keep_textfile(const std::function<std::string()>& text, const std::string& dir, double interval_s, long count) {
    catch_stop_signals();
    const std::string target = dir + "/tent.prom";
    // The textfile collector reads *.prom only: a name it ignores while being written.
    const std::string temp = dir + "/.tent.prom." + std::to_string(::getpid()) + ".tmp";
    for (long n = 1; !g_stop; ++n) {
        const std::string body = text();
        int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            std::fprintf(stderr, "tentstat: cannot write %s: %s\n", temp.c_str(), std::strerror(errno));
            return 1;
        }
        const bool ok = write_all(fd, body) && ::fsync(fd) == 0;
        ::close(fd);
        if (!ok || ::rename(temp.c_str(), target.c_str()) != 0) {
            std::fprintf(stderr, "tentstat: cannot replace %s: %s\n", target.c_str(), std::strerror(errno));
            ::unlink(temp.c_str());
            return 1;
        }
        if (count > 0 && n >= count) break;
        struct timespec ts{static_cast<time_t>(interval_s), static_cast<long>(std::fmod(interval_s, 1.0) * 1e9)};
        ::nanosleep(&ts, nullptr);  // a stop signal cuts it short
    }
    return 0;
}

} // namespace tent::tentstat
