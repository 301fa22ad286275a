// Everything reachable from crash_handler() must be async-signal-safe: no
// malloc, no stdio, no locks. Text is built in stack buffers and written with
// write(2); libunwind's local unwinder walks the stack.
#include "common/crash_reporter.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "common/log.h"

namespace tent {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
constexpr int kMaxFrames = 64;
// libunwind and the formatting below need a few KiB; SIGSTKSZ is too small.
constexpr std::size_t kAltStackSize = 64 * 1024;

struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
std::atomic<bool> g_in_handler{false};
alignas(16) char g_alt_stack[kAltStackSize];

int slot_of(int sig) {
    for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
        if (kSignals[i] == sig) return static_cast<int>(i);
    return -1;
}

const char* signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGABRT: return "SIGABRT (aborted)";
    }
    return "unknown signal";
}

// A line assembled in a fixed buffer; what does not fit is cut.
class Line {
public:
    Line& text(const char* s) {
        while (*s != '\0' && len_ < sizeof buf_ - 1) buf_[len_++] = *s++;
        return *this;
    }
    Line& dec(long long v) {
        char tmp[24];
        int n = 0;
        unsigned long long u = v < 0 ? 0ULL - static_cast<unsigned long long>(v)
                                     : static_cast<unsigned long long>(v);
        do {
            tmp[n++] = static_cast<char>('0' + u % 10);
            u /= 10;
        } while (u != 0);
        if (v < 0) tmp[n++] = '-';
        while (n > 0 && len_ < sizeof buf_ - 1) buf_[len_++] = tmp[--n];
        return *this;
    }
    Line& hex(std::uintptr_t v) {
        char tmp[2 + 2 * sizeof v];
        int n = 0;
        do {
            tmp[n++] = "0123456789abcdef"[v & 0xf];
            v >>= 4;
        } while (v != 0);
        text("0x");
        while (n > 0 && len_ < sizeof buf_ - 1) buf_[len_++] = tmp[--n];
        return *this;
    }
    // Writes the line to stderr and, when logging goes elsewhere, to the log too.
    void emit() {
        buf_[len_++] = '\n';
        write_fully(STDERR_FILENO);
        int fd = log_fd();
        if (fd != STDERR_FILENO) write_fully(fd);
    }

private:
    void write_fully(int fd) const {
        std::size_t done = 0;
        while (done < len_) {
            ssize_t n = ::write(fd, buf_ + done, len_ - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            done += static_cast<std::size_t>(n);
        }
    }
    char buf_[512];
    std::size_t len_ = 0;
};

Line& prefix(Line& line) { return line.text("tent: pid ").dec(::getpid()).text(": crash: "); }

void print_backtrace() {
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) {
        Line line;
        prefix(line).text("no backtrace (libunwind cannot read the stack)").emit();
        return;
    }
    // The frames before the interrupted one are this handler's own. libunwind
    // flags the frame it reached through the kernel's signal trampoline as a
    // signal frame: start there, or at the top when none shows up.
    int skip = 0;
    {
        unw_cursor_t probe = cursor;
        for (int steps = 1; steps <= kMaxFrames && unw_step(&probe) > 0; ++steps) {
            if (unw_is_signal_frame(&probe) > 0) {
                skip = steps;
                break;
            }
        }
    }
    for (int i = 0; i < skip; ++i)
        if (unw_step(&cursor) <= 0) break;
    for (int frame = 0; frame < kMaxFrames; ++frame) {
        unw_word_t ip = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        char name[256];
        unw_word_t offset = 0;
        Line line;
        prefix(line).text("  #").dec(frame).text(" ").hex(ip);
        if (unw_get_proc_name(&cursor, name, sizeof name, &offset) == 0)
            line.text(" ").text(name).text("+").hex(offset);
        else
            line.text(" ??");
        line.emit();
        if (unw_step(&cursor) <= 0) break;
    }
}

// Gives the signal to the handler that was there before ours.
void chain(int sig, siginfo_t* info, void* ucontext) {
    int slot = slot_of(sig);
    struct sigaction previous = g_previous[slot];
    // Restoring first means a repeat of the same fault goes straight to the
    // previous disposition, as if tent had never been there.
    if (previous.sa_handler == SIG_IGN) previous.sa_handler = SIG_DFL;  // an ignored fault would spin
    ::sigaction(sig, &previous, nullptr);
    if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
        previous.sa_sigaction(sig, info, ucontext);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    // Default action: re-raise. The signal stays blocked until this handler
    // returns, then kills the process with the original signal (and a core
    // dump where enabled). A hardware fault would also recur on return.
    ::raise(sig);
}

void crash_handler(int sig, siginfo_t* info, void* ucontext) {
    const int saved_errno = errno;
    // A crash while reporting a crash: report nothing more.
    if (!g_in_handler.exchange(true)) {
        Line line;
        prefix(line).text("signal ").text(signal_name(sig));
        if (info != nullptr) {
            line.text(", code ").dec(info->si_code);
            if (sig != SIGABRT) line.text(", address ").hex(reinterpret_cast<std::uintptr_t>(info->si_addr));
        }
        line.emit();
        print_backtrace();
        g_in_handler.store(false);
    }
    errno = saved_errno;
    chain(sig, info, ucontext);
}

Status install_alt_stack() {
    stack_t current{};
    if (::sigaltstack(nullptr, &current) != 0) return Status::from_errno(errno, "sigaltstack");
    // Keep an alternate stack someone else (the application, a runtime) set up.
    if ((current.ss_flags & SS_DISABLE) == 0) return Status::ok();
    stack_t stack{};
    stack.ss_sp = g_alt_stack;
    stack.ss_size = sizeof g_alt_stack;
    stack.ss_flags = 0;
    if (::sigaltstack(&stack, nullptr) != 0) return Status::from_errno(errno, "sigaltstack");
    return Status::ok();
}

Status install_once() {
    Status alt = install_alt_stack();
    if (!alt.is_ok()) return alt;
    for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
        struct sigaction action{};
        action.sa_sigaction = crash_handler;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        if (::sigaction(kSignals[i], &action, &g_previous[i]) != 0)
            return Status::from_errno(errno, "sigaction");
    }
    return Status::ok();
}

} // namespace

Status install_crash_reporter() {
    static std::once_flag once;
    static Status result;
    std::call_once(once, [] { result = install_once(); });
    return result;
}

} // namespace tent
