// The crash reporter, exercised by crashing child processes on purpose: the
// report names the crashing function, the process still dies of the original
// signal, and a handler installed before ours still runs.
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/crash_reporter.h"
#include "common/log.h"
#include "config/config.h"
#include "config/log_setup.h"

using namespace tent;

// In a tree built with AddressSanitizer: its own handlers for the crash
// signals would be installed before the test starts (one test checks that
// none is unless asked) and would end the crashing children, which must die
// of their signal, after our report. Dead code in other builds.
extern "C" __attribute__((visibility("default"), used)) const char* __asan_default_options() {
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0";
}

namespace {

// Read through a volatile so the compiler cannot see the null at compile time
// and turn the fault into a trap in the caller. Not instrumented by UBSan,
// which would report the store (or end the child) before it faults.
int* volatile g_null_pointer = nullptr;

__attribute__((noinline, no_sanitize("undefined"))) void crash_here_on_purpose() {
    *g_null_pointer = 42;
    asm volatile("" ::: "memory");  // keep this frame: no tail call
}

// Far deeper than a 1 MiB stack allows; volatile so the compiler cannot see
// the recursion end.
volatile int g_recursion_limit = 1 << 30;

__attribute__((noinline)) int recurse_without_end(int depth) {
    volatile char frame[1024];
    frame[0] = static_cast<char>(depth);
    if (depth >= g_recursion_limit) return 0;
    return recurse_without_end(depth + 1) + frame[0];
}

void install_or_die() {
    if (!install_crash_reporter().is_ok()) _exit(90);
}

struct ChildResult {
    int status = 0;
    std::string output;  // the child's stderr
};

// Runs body in a forked child with stderr captured; bounded to 10 seconds.
ChildResult run_child(void (*body)()) {
    ChildResult result;
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        close(fds[1]);
        body();
        _exit(0);
    }
    close(fds[1]);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    char buf[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(pid, SIGKILL);
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        result.output.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    cr_assert_eq(waitpid(pid, &result.status, 0), pid);
    return result;
}

bool contains(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

void previous_siginfo_handler(int, siginfo_t*, void*) {
    static const char marker[] = "previous handler called\n";
    (void)!write(STDERR_FILENO, marker, sizeof marker - 1);
    _exit(42);
}

void previous_plain_handler(int) {
    static const char marker[] = "previous plain handler called\n";
    (void)!write(STDERR_FILENO, marker, sizeof marker - 1);
    _exit(43);
}

void install_previous_siginfo_handler() {
    struct sigaction action{};
    action.sa_sigaction = previous_siginfo_handler;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, nullptr);
}

} // namespace

Test(crash_reporter, segv_backtrace_names_the_crashing_function) {
    ChildResult r = run_child([] {
        install_or_die();
        crash_here_on_purpose();
    });
    cr_expect(WIFSIGNALED(r.status), "child was not killed by a signal: status %d", r.status);
    cr_expect_eq(WTERMSIG(r.status), SIGSEGV, "child died of signal %d", WTERMSIG(r.status));
    cr_expect(contains(r.output, ": crash: signal SIGSEGV"), "no header in:\n%s", r.output.c_str());
    cr_expect(contains(r.output, "address 0x0"), "fault address missing in:\n%s", r.output.c_str());
    cr_expect(contains(r.output, "crash_here_on_purpose"), "crashing function not named in:\n%s",
              r.output.c_str());
    // Every line carries the log prefix with the child's pid.
    cr_expect(r.output.rfind("tent: pid ", 0) == 0, "bad prefix:\n%s", r.output.c_str());
    cr_expect_eq(count_of(r.output, "\n"), count_of(r.output, "tent: pid "));
    // The first frame printed is the crashing one, not the handler's own.
    std::size_t first = r.output.find("#0 ");
    cr_assert_neq(first, std::string::npos);
    std::string first_frame = r.output.substr(first, r.output.find('\n', first) - first);
    cr_expect(contains(first_frame, "crash_here_on_purpose"), "frame #0 is %s", first_frame.c_str());
}

Test(crash_reporter, abort_is_reported_and_still_kills_with_sigabrt) {
    ChildResult r = run_child([] {
        install_or_die();
        abort();
    });
    cr_expect(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status %d", r.status);
    cr_expect(contains(r.output, ": crash: signal SIGABRT"), "output:\n%s", r.output.c_str());
    cr_expect(contains(r.output, "abort"), "abort frame missing:\n%s", r.output.c_str());
}

Test(crash_reporter, chains_to_previous_siginfo_handler) {
    ChildResult r = run_child([] {
        install_previous_siginfo_handler();
        install_or_die();
        crash_here_on_purpose();
    });
    cr_expect(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 42, "status %d", r.status);
    std::size_t report = r.output.find("crash_here_on_purpose");
    std::size_t marker = r.output.find("previous handler called");
    cr_expect_neq(report, std::string::npos, "no report:\n%s", r.output.c_str());
    cr_expect_neq(marker, std::string::npos, "previous handler not called:\n%s", r.output.c_str());
    cr_expect_lt(report, marker, "report must come before the previous handler runs");
}

Test(crash_reporter, chains_to_previous_plain_handler) {
    ChildResult r = run_child([] {
        signal(SIGFPE, previous_plain_handler);
        install_or_die();
        raise(SIGFPE);
    });
    cr_expect(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 43, "status %d", r.status);
    cr_expect(contains(r.output, ": crash: signal SIGFPE"), "output:\n%s", r.output.c_str());
    cr_expect(contains(r.output, "previous plain handler called"), "output:\n%s", r.output.c_str());
}

Test(crash_reporter, install_is_idempotent) {
    // A second install must not record our own handler as "previous", which
    // would report twice or loop instead of reaching the real previous handler.
    ChildResult r = run_child([] {
        install_previous_siginfo_handler();
        install_or_die();
        install_or_die();
        crash_here_on_purpose();
    });
    cr_expect(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 42, "status %d", r.status);
    cr_expect_eq(count_of(r.output, "crash: signal"), 1u, "output:\n%s", r.output.c_str());
}

Test(crash_reporter, stack_overflow_is_reported_on_the_alternate_stack) {
    ChildResult r = run_child([] {
        // A small stack makes the overflow quick; the limit applies to growth.
        rlimit limit{1 << 20, 1 << 20};
        setrlimit(RLIMIT_STACK, &limit);
        install_or_die();
        recurse_without_end(0);
    });
    cr_expect(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status %d", r.status);
    cr_expect(contains(r.output, ": crash: signal SIGSEGV"), "output:\n%s", r.output.c_str());
    cr_expect(contains(r.output, "recurse_without_end"), "output:\n%s", r.output.c_str());
    // The walk is bounded even though the stack is deep.
    cr_expect_leq(count_of(r.output, "\n"), 70u);
}

Test(crash_reporter, report_also_goes_to_the_log_file) {
    static char path[] = "/tmp/tent-crash-logXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static int log_fd_for_child;
    log_fd_for_child = fd;
    ChildResult r = run_child([] {
        set_log_fd(log_fd_for_child);
        install_or_die();
        crash_here_on_purpose();
    });
    cr_expect(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status %d", r.status);
    std::string file;
    char buf[4096];
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, buf, sizeof buf)) > 0) file.append(buf, static_cast<std::size_t>(n));
    close(fd);
    unlink(path);
    cr_expect(contains(r.output, "crash_here_on_purpose"), "stderr:\n%s", r.output.c_str());
    cr_expect(contains(file, "crash_here_on_purpose"), "log file:\n%s", file.c_str());
}

Test(crash_reporter, not_installed_unless_asked) {
    Config config;  // backtrace defaults to false
    cr_assert(maybe_install_crash_reporter(config).is_ok());
    struct sigaction current{};
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGABRT}) {
        sigaction(sig, nullptr, &current);
        cr_expect(current.sa_handler == SIG_DFL, "handler installed for signal %d", sig);
    }
}

Test(crash_reporter, installed_when_the_backtrace_knob_is_on) {
    Config config;
    cr_assert(config.set(Knob::Backtrace, "1", Source{}).is_ok());
    cr_assert(maybe_install_crash_reporter(config).is_ok());
    struct sigaction current{};
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGABRT}) {
        sigaction(sig, nullptr, &current);
        cr_expect((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction != nullptr,
                  "no handler for signal %d", sig);
    }
    stack_t alt{};
    sigaltstack(nullptr, &alt);
    cr_expect((alt.ss_flags & SS_DISABLE) == 0, "no alternate signal stack");
}
