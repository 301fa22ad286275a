/* tent_wait(): sleeps until a completion is ready or the timeout passes.
 * It must return early when a completion arrives (also one that arrives
 * while it sleeps, pushed by the progress thread), must not return early
 * without one, and takes no completion itself. tent_wait_fds() also
 * returns when one of the caller's descriptors becomes readable or a
 * signal interrupts it, and refuses where the caller cannot drive. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "capi_pair.h"
#include "tent/tent.h"

static void setup(void) { setenv("TENT_CONTROL_ADDRESS", "127.0.0.1", 1); }

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static char message[64] = "tent_wait";
static char inbox[64];

/* Posts one send after a delay, while the test thread already sleeps in
 * tent_wait(). */
struct late_post {
    tent_peer_t *peer;
    int delay_ms;
    int rc;
};

static void *post_later(void *arg) {
    struct late_post *l = arg;
    nanosleep(&(struct timespec){0, (long)l->delay_ms * 1000000L}, NULL);
    l->rc = tent_post_send(l->peer, message, sizeof message, TENT_PRIORITY_HIGH, TENT_TRANSPORT_TCP, 42);
    return NULL;
}

TestSuite(wait, .init = setup, .timeout = 60);

Test(wait, refuses_a_null_engine) { cr_expect_eq(tent_wait(NULL, 0), TENT_ERR_INVALID); }

Test(wait, sleeps_the_whole_timeout_when_nothing_completes) {
    struct pair p;
    make_pair(&p);
    double t0 = now_ms();
    cr_expect_eq(tent_wait(p.a, 0), 0, "a zero timeout returns at once, with nothing ready");
    cr_expect_lt(now_ms() - t0, 1000.0);
    t0 = now_ms();
    int rc = tent_wait(p.a, 300);
    double slept = now_ms() - t0;
    cr_expect_eq(rc, 0, "nothing was posted, yet tent_wait reported %d ready", rc);
    /* The condition variable's clock may round a little short. */
    cr_expect_geq(slept, 290.0, "returned after %.1f ms of a 300 ms timeout without a completion", slept);
    destroy_pair(&p);
}

Test(wait, wakes_when_a_completion_arrives_during_the_sleep) {
    struct pair p;
    make_pair(&p);
    cr_assert_eq(tent_post_recv(p.b, inbox, sizeof inbox, 7), TENT_OK);
    struct late_post l = {p.peer, 100, -100};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, post_later, &l), 0);
    double t0 = now_ms();
    int rc = tent_wait(p.a, 20000);
    double slept = now_ms() - t0;
    pthread_join(t, NULL);
    cr_assert_eq(l.rc, TENT_OK, "%s", tent_strerror(l.rc));
    cr_expect_eq(rc, 1, "tent_wait returned %d", rc);
    /* Posted after 100 ms: an early return here would be one without a
     * completion; 10 s is far beyond a send over loopback even on a busy
     * machine, and far below the 20 s timeout. */
    cr_expect_geq(slept, 90.0, "returned after %.1f ms, before the send was posted", slept);
    cr_expect_lt(slept, 10000.0, "slept %.1f ms: not woken by the completion", slept);

    /* It took nothing: the completion is still there for tent_poll. */
    cr_expect_eq(tent_wait(p.a, 0), 1);
    tent_completion_t c[2];
    cr_assert_eq(tent_poll(p.a, c, 2), 1);
    cr_expect_eq(c[0].cookie, 42);
    cr_expect_eq(c[0].status, TENT_OK, "%s", tent_strerror(c[0].status));
    cr_expect_eq(tent_wait(p.a, 0), 0, "polled, yet still reported ready");

    /* The receiver's completion wakes a waiter too, without a limit. */
    t0 = now_ms();
    rc = tent_wait(p.b, -1);
    cr_expect_eq(rc, 1, "tent_wait(-1) returned %d", rc);
    cr_assert_eq(tent_poll(p.b, c, 2), 1);
    cr_expect_eq(c[0].op, TENT_OP_RECV);
    cr_expect_eq(c[0].cookie, 7);
    cr_expect_str_eq(inbox, "tent_wait");
    destroy_pair(&p);
}

Test(wait, returns_at_once_when_completions_are_ready) {
    struct pair p;
    make_pair(&p);
    for (int i = 0; i < 3; ++i)
        cr_assert_eq(tent_post_send(p.peer, message, sizeof message, TENT_PRIORITY_HIGH, TENT_TRANSPORT_TCP,
                                    (uint64_t)i),
                     TENT_OK);
    /* Collect all three, waiting instead of polling in a loop. */
    tent_completion_t c[4];
    int got = 0;
    double t0 = now_ms();
    while (got < 3 && now_ms() - t0 < 10000.0) {
        int ready = tent_wait(p.a, 1000);
        cr_assert_geq(ready, 0, "%s", tent_strerror(ready));
        int n = tent_poll(p.a, c + got, 4 - got);
        cr_assert_geq(n, ready, "tent_wait said %d ready, tent_poll found %d", ready, n);
        got += n;
    }
    cr_assert_eq(got, 3);
    for (int i = 0; i < 3; ++i) cr_expect_eq(c[i].status, TENT_OK, "%s", tent_strerror(c[i].status));

    /* One more, left unpolled until it is surely there: then a long wait
     * must not sleep at all. */
    cr_assert_eq(tent_post_send(p.peer, message, sizeof message, TENT_PRIORITY_HIGH, TENT_TRANSPORT_TCP, 9),
                 TENT_OK);
    cr_assert_eq(tent_wait(p.a, 10000), 1);
    t0 = now_ms();
    cr_expect_eq(tent_wait(p.a, 10000), 1);
    cr_expect_lt(now_ms() - t0, 1000.0, "slept with a completion ready");
    destroy_pair(&p);
}

Test(wait, wait_fds_refuses_bad_arguments) {
    int fd = 0;
    cr_expect_eq(tent_wait_fds(NULL, 0, &fd, 1), TENT_ERR_INVALID);
    struct pair p;
    make_pair(&p);
    cr_expect_eq(tent_wait_fds(p.a, 0, NULL, 1), TENT_ERR_INVALID, "fds NULL with nfds 1");
    cr_expect_eq(tent_wait_fds(p.a, 0, &fd, -1), TENT_ERR_INVALID, "negative nfds");
    int bad = -1;
    cr_expect_eq(tent_wait_fds(p.a, 0, &bad, 1), TENT_ERR_INVALID, "a negative descriptor");
    cr_expect_eq(tent_wait_fds(p.a, 0, NULL, 0), 0, "no descriptors, nothing ready");
    destroy_pair(&p);
}

/* Writes one byte into a pipe after a delay, while the test thread sleeps
 * in tent_wait_fds() on the pipe's other end. */
struct late_byte {
    int fd;
    int delay_ms;
};

static void *write_later(void *arg) {
    struct late_byte *l = arg;
    nanosleep(&(struct timespec){0, (long)l->delay_ms * 1000000L}, NULL);
    ssize_t put = write(l->fd, "x", 1);
    (void)put;
    return NULL;
}

Test(wait, wait_fds_returns_when_a_descriptor_becomes_readable) {
    struct pair p;
    make_pair(&p);
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    struct late_byte l = {pipefd[1], 100};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_later, &l), 0);
    double t0 = now_ms();
    int rc = tent_wait_fds(p.a, 20000, &pipefd[0], 1);
    double slept = now_ms() - t0;
    pthread_join(t, NULL);
    cr_expect_eq(rc, 0, "tent_wait_fds returned %d with no completion", rc);
    cr_expect_geq(slept, 90.0, "returned after %.1f ms, before the byte was written", slept);
    cr_expect_lt(slept, 10000.0, "slept %.1f ms: not woken by the descriptor", slept);
    char byte = 0;
    cr_expect_eq(read(pipefd[0], &byte, 1), 1);
    cr_expect_eq(byte, 'x');
    /* Still readable descriptors end the wait at once. */
    cr_assert_eq(write(pipefd[1], "y", 1), 1);
    t0 = now_ms();
    cr_expect_eq(tent_wait_fds(p.a, 20000, &pipefd[0], 1), 0);
    cr_expect_lt(now_ms() - t0, 10000.0);
    close(pipefd[0]);
    close(pipefd[1]);
    destroy_pair(&p);
}

Test(wait, wait_fds_wakes_for_a_completion_too) {
    struct pair p;
    make_pair(&p);
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    cr_assert_eq(tent_post_recv(p.b, inbox, sizeof inbox, 7), TENT_OK);
    struct late_post l = {p.peer, 100, -100};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, post_later, &l), 0);
    double t0 = now_ms();
    int rc = 0;
    /* The send is posted after 100 ms; its completion, not the pipe
     * (never written), ends the wait. */
    while (rc == 0 && now_ms() - t0 < 10000.0) rc = tent_wait_fds(p.a, 20000, &pipefd[0], 1);
    double slept = now_ms() - t0;
    pthread_join(t, NULL);
    cr_assert_eq(l.rc, TENT_OK, "%s", tent_strerror(l.rc));
    cr_expect_eq(rc, 1, "tent_wait_fds returned %d", rc);
    cr_expect_geq(slept, 90.0, "returned after %.1f ms, before the send was posted", slept);
    tent_completion_t c[2];
    cr_assert_eq(tent_poll(p.a, c, 2), 1);
    cr_expect_eq(c[0].cookie, 42);
    close(pipefd[0]);
    close(pipefd[1]);
    destroy_pair(&p);
}

static atomic_int signals_seen;
static void count_signal(int sig) {
    (void)sig;
    atomic_fetch_add(&signals_seen, 1);
}

struct nudger {
    pthread_t target;
    atomic_int done;
};

/* Signals the waiting thread every 100 ms until it has returned (one
 * landing just before its sleep would not interrupt it). */
static void *nudge(void *arg) {
    struct nudger *n = arg;
    for (int i = 0; i < 100 && !atomic_load(&n->done); ++i) {
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
        if (!atomic_load(&n->done)) pthread_kill(n->target, SIGUSR1);
    }
    return NULL;
}

Test(wait, wait_fds_returns_when_a_signal_interrupts_it) {
    struct sigaction sa = {0};
    sa.sa_handler = count_signal;
    sa.sa_flags = SA_RESTART; /* poll() is interrupted all the same */
    cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    struct pair p;
    make_pair(&p);
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    struct nudger n = {pthread_self(), 0};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, nudge, &n), 0);
    double t0 = now_ms();
    int rc = tent_wait_fds(p.a, 20000, &pipefd[0], 1);
    double slept = now_ms() - t0;
    atomic_store(&n.done, 1);
    pthread_join(t, NULL);
    cr_expect_eq(rc, 0, "tent_wait_fds returned %d", rc);
    cr_expect_geq(atomic_load(&signals_seen), 1, "no signal was handled");
    cr_expect_lt(slept, 10000.0, "slept %.1f ms through the signals", slept);
    signal(SIGUSR1, SIG_DFL);
    close(pipefd[0]);
    close(pipefd[1]);
    destroy_pair(&p);
}

Test(wait, wait_fds_is_unsupported_where_the_caller_cannot_drive) {
    setenv("TENT_CALLER_PROGRESS", "false", 1);
    tent_engine_t *e = NULL;
    int rc = tent_engine_create(NULL, &e);
    unsetenv("TENT_CALLER_PROGRESS");
    cr_assert_eq(rc, TENT_OK, "%s", tent_strerror(rc));
    int fd = 0;
    cr_expect_eq(tent_wait_fds(e, 10, &fd, 1), TENT_ERR_UNSUPPORTED);
    /* tent_wait() itself still works there. */
    cr_expect_eq(tent_wait(e, 10), 0);
    cr_assert_eq(tent_engine_destroy(e), TENT_OK);
}
