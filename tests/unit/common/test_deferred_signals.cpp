// The program's handlers behind tent's trampolines: called at once outside
// tent; inside a SignalsDeferred scope put off until the outermost scope
// ends, then delivered once, with their siginfo, and the thread's mask as it
// was; one-shot handlers reset as the kernel would; a trampoline the program
// installs again stands for the handler it stood for; when every trampoline
// is taken, wrap_program_handlers() says so.
#include <criterion/criterion.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <array>
#include <cstring>
#include <utility>

#include "common/deferred_signals.h"

using namespace tent;

namespace {

volatile sig_atomic_t g_plain = 0;
volatile sig_atomic_t g_other = 0;
volatile sig_atomic_t g_info_value = 0;
volatile sig_atomic_t g_info_code = 0;
volatile sig_atomic_t g_info_calls = 0;

void plain_handler(int) { g_plain = g_plain + 1; }
void other_handler(int) { g_other = g_other + 1; }
void info_handler(int, siginfo_t* info, void*) {
    g_info_calls = g_info_calls + 1;
    g_info_code = info->si_code;
    g_info_value = info->si_value.sival_int;
}

void install(int sig, void (*handler)(int), int flags = 0) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(sig, &sa, nullptr), 0);
}

struct sigaction current(int sig) {
    struct sigaction now {};
    cr_assert_eq(sigaction(sig, nullptr, &now), 0);
    return now;
}

sigset_t thread_mask() {
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, nullptr, &mask);
    return mask;
}

bool same_mask(const sigset_t& a, const sigset_t& b) {
    for (int sig = 1; sig < NSIG; ++sig)
        if (sigismember(&a, sig) != sigismember(&b, sig)) return false;
    return true;
}

} // namespace

Test(deferred_signals, outside_tent_the_handler_runs_at_once_behind_a_trampoline) {
    install(SIGUSR1, plain_handler);
    cr_assert(wrap_program_handlers());
    const struct sigaction now = current(SIGUSR1);
    cr_expect(now.sa_flags & SA_SIGINFO);
    cr_expect(is_signal_trampoline(now.sa_sigaction), "the handler is wrapped");
    errno = 1234;
    raise(SIGUSR1);
    cr_expect_eq(g_plain, 1);
    cr_expect_eq(errno, 1234, "the trampoline keeps errno");
    // Wrapping again changes nothing.
    cr_assert(wrap_program_handlers());
    cr_expect(current(SIGUSR1).sa_sigaction == now.sa_sigaction);
}

Test(deferred_signals, inside_tent_a_signal_waits_for_the_outermost_scope) {
    install(SIGUSR1, plain_handler);
    cr_assert(wrap_program_handlers());
    const sigset_t before = thread_mask();
    {
        SignalsDeferred outer;
        {
            SignalsDeferred inner;
            raise(SIGUSR1);
            raise(SIGUSR1);  // a standard signal: one delivery, as the kernel coalesces
            cr_expect_eq(g_plain, 0, "not inside tent");
        }
        cr_expect_eq(g_plain, 0, "not before the outermost scope ends");
    }
    cr_expect_eq(g_plain, 1, "delivered once when tent is done");
    cr_expect(same_mask(before, thread_mask()), "the thread's mask is as it was");
    raise(SIGUSR1);
    cr_expect_eq(g_plain, 2);
}

Test(deferred_signals, a_scope_without_a_signal_leaves_the_mask_alone) {
    install(SIGUSR1, plain_handler);
    cr_assert(wrap_program_handlers());
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
    const sigset_t before = thread_mask();
    { SignalsDeferred scope; }
    cr_expect(same_mask(before, thread_mask()));
    // A signal in a scope: the program's own blocked signal stays blocked after.
    {
        SignalsDeferred scope;
        raise(SIGUSR1);
    }
    cr_expect_eq(g_plain, 1);
    cr_expect(same_mask(before, thread_mask()));
}

Test(deferred_signals, the_siginfo_arrives_with_the_deferred_signal) {
    struct sigaction sa {};
    sa.sa_sigaction = info_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGRTMIN + 3, &sa, nullptr), 0);
    cr_assert(wrap_program_handlers());
    {
        SignalsDeferred scope;
        union sigval value;
        value.sival_int = 4242;
        cr_assert_eq(sigqueue(getpid(), SIGRTMIN + 3, value), 0);
        cr_expect_eq(g_info_calls, 0);
    }
    cr_expect_eq(g_info_calls, 1);
    cr_expect_eq(g_info_code, SI_QUEUE);
    cr_expect_eq(g_info_value, 4242);
}

Test(deferred_signals, a_one_shot_handler_runs_once_and_resets) {
    install(SIGUSR1, plain_handler, SA_RESETHAND);
    cr_assert(wrap_program_handlers());
    cr_expect(is_signal_trampoline(current(SIGUSR1).sa_sigaction));
    {
        SignalsDeferred scope;
        raise(SIGUSR1);
    }
    cr_expect_eq(g_plain, 1);
    cr_expect(current(SIGUSR1).sa_handler == SIG_DFL, "reset to the default, as SA_RESETHAND does");
}

Test(deferred_signals, a_handler_without_deferral_of_itself_is_deferred_too) {
    install(SIGUSR1, plain_handler, SA_NODEFER);
    cr_assert(wrap_program_handlers());
    {
        SignalsDeferred scope;
        raise(SIGUSR1);
        cr_expect_eq(g_plain, 0);
    }
    cr_expect_eq(g_plain, 1);
}

Test(deferred_signals, a_trampoline_installed_again_stands_for_its_own_handler) {
    install(SIGUSR1, plain_handler);
    cr_assert(wrap_program_handlers());
    // The program swaps in another handler, keeping the old one (tent's trampoline).
    struct sigaction other {}, old {};
    other.sa_handler = other_handler;
    sigemptyset(&other.sa_mask);
    cr_assert_eq(sigaction(SIGUSR1, &other, &old), 0);
    cr_expect(is_signal_trampoline(old.sa_sigaction));
    cr_assert(wrap_program_handlers());
    raise(SIGUSR1);
    cr_expect_eq(g_other, 1);
    cr_expect_eq(g_plain, 0);
    // ... and puts the old one back: its own handler runs, not the other.
    cr_assert_eq(sigaction(SIGUSR1, &old, nullptr), 0);
    cr_assert(wrap_program_handlers());
    raise(SIGUSR1);
    cr_expect_eq(g_plain, 1);
    cr_expect_eq(g_other, 1);
}

namespace {

volatile sig_atomic_t g_numbered = -1;
template <int N>
void numbered_handler(int) {
    g_numbered = N;
}
template <int... N>
constexpr auto numbered_handlers(std::integer_sequence<int, N...>) {
    return std::array<void (*)(int), sizeof...(N)>{&numbered_handler<N>...};
}

} // namespace

Test(deferred_signals, when_every_trampoline_is_taken_the_caller_is_told) {
    constexpr auto handlers = numbered_handlers(std::make_integer_sequence<int, kSignalTrampolines + 1>{});
    for (int i = 0; i < kSignalTrampolines; ++i) {
        install(SIGUSR1, handlers[static_cast<std::size_t>(i)]);
        cr_assert(wrap_program_handlers(), "handler %d", i);
    }
    install(SIGUSR1, handlers[kSignalTrampolines]);
    cr_expect(!wrap_program_handlers(), "one handler more than trampolines");
    // Left as the program installed it, and still called.
    cr_expect(current(SIGUSR1).sa_handler == handlers[kSignalTrampolines]);
    raise(SIGUSR1);
    cr_expect_eq(g_numbered, kSignalTrampolines);
    // A handler wrapped before gets its trampoline back.
    install(SIGUSR1, handlers[3]);
    cr_expect(wrap_program_handlers());
    raise(SIGUSR1);
    cr_expect_eq(g_numbered, 3);
}
