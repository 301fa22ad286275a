/* The engine's threads take none of the program's signals: a program that
 * blocks a signal (after tent started) to take it with sigwait() gets it,
 * rather than a tent thread on which the default action ends the process. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capi_pair.h"
#include "tent/tent.h"

static void setup(void) { setenv("TENT_CONTROL_ADDRESS", "127.0.0.1", 1); }

TestSuite(signals, .init = setup, .timeout = 60);

static char message[256];

/* One message a to b, completed at a. */
static void one_message(struct pair *p, uint64_t cookie) {
    cr_assert_eq(tent_post_send(p->peer, message, sizeof message, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, cookie),
                 TENT_OK);
    tent_completion_t c;
    for (int i = 0; i < 1000; ++i) {
        tent_wait(p->a, 10);
        if (tent_poll(p->a, &c, 1) == 1) {
            cr_assert_eq(c.status, TENT_OK);
            cr_assert_eq(c.cookie, cookie);
            return;
        }
    }
    cr_assert_fail("the message did not complete within 10 s");
}

Test(signals, a_signal_the_program_blocked_after_tent_started_waits_for_its_sigwait) {
    struct pair p;
    make_pair(&p);
    one_message(&p, 1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    /* Process-directed, as alarm() or a job launcher's kill() are: any
     * thread not blocking it may take it, and SIGUSR1's default ends the
     * process. */
    for (int round = 0; round < 20; ++round) {
        cr_assert_eq(kill(getpid(), SIGUSR1), 0);
        one_message(&p, 2 + (uint64_t)round);
        struct timespec two_s = {2, 0};
        cr_assert_eq(sigtimedwait(&set, NULL, &two_s), SIGUSR1, "round %d: the signal did not reach sigwait", round);
    }
    destroy_pair(&p);
}
