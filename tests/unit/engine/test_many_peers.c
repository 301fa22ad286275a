/* One engine serving many peers (issue 22, point 9): 32 peer processes
 * connect to one serving engine over loopback, each streams messages whose
 * every byte the server checks, then destroys its engine (the server sees it
 * unreachable), and does it all again, round after round. The serving
 * process's descriptors (/proc/self/fd) and resident memory are measured at
 * the start, with every peer connected, and after each round once every
 * peer has left; the test fails when a departed peer leaves descriptors
 * behind or memory grows past the bounds tent(7) states:
 *   - at most 2 descriptors per connected peer with one TCP rail (the
 *     control connection and the rail), none once it has left;
 *   - at most 1 MiB of resident memory per connected peer;
 *   - resident memory after a later round within 64 KiB per peer of the
 *     first round's (the first round sizes the allocator's pools).
 * A departed peer's id and C API handle stay (about 300 bytes of heap,
 * printed as "heap in use").
 * The figures are printed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tent/tent.h"

#define PEERS 32
#define ROUNDS 4
#define MESSAGES 8
#define MESSAGE_SIZE (64 * 1024)
#define FDS_PER_PEER 2
#define MEMORY_PER_PEER (64 * 1024)
#define MEMORY_PER_CONNECTED_PEER (1024 * 1024)

/* Commands to a peer and its reports, one byte each (pipes). */
enum { CMD_CONNECT = 'c', CMD_LEAVE = 'l', CMD_QUIT = 'q' };
enum { REPORT_STREAMED = 's', REPORT_LEFT = 'x', REPORT_FAILED = 'f' };

struct header {
    uint32_t peer, round, seq;
};

static unsigned char pattern(uint32_t peer, uint32_t round, uint32_t seq, size_t i) {
    return (unsigned char)(i * 131u + peer * 7u + round * 13u + seq * 17u + (i >> 8));
}

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') ++n;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* Resident memory once the allocator has returned what it holds free (its
 * pools otherwise keep freed buffers resident, and which of them it keeps
 * varies from run to run). */
static long rss_bytes(void) {
    malloc_trim(0);
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    int ok = fscanf(f, "%ld %ld", &size, &resident) == 2;
    fclose(f);
    return ok ? resident * sysconf(_SC_PAGESIZE) : -1;
}

/* --- a peer process ------------------------------------------------------ */

static int peer_round(int index, uint32_t round, const void *blob, size_t blob_len, int in, int out) {
    tent_engine_t *e = NULL;
    if (tent_engine_create(NULL, &e) != TENT_OK) return -1;
    tent_peer_t *server = NULL;
    int ok = tent_connect(e, blob, blob_len, &server) == TENT_OK;
    static unsigned char msg[MESSAGES][MESSAGE_SIZE];
    for (uint32_t s = 0; ok && s < MESSAGES; ++s) {
        struct header h = {(uint32_t)index, round, s};
        memcpy(msg[s], &h, sizeof h);
        for (size_t i = sizeof h; i < MESSAGE_SIZE; ++i) msg[s][i] = pattern(h.peer, round, s, i);
        ok = tent_post_send(server, msg[s], MESSAGE_SIZE, TENT_PRIORITY_MEDIUM, TENT_TRANSPORT_ANY, s) == TENT_OK;
    }
    int done = 0;
    for (int spins = 0; ok && done < MESSAGES && spins < 30000; ++spins) {
        tent_completion_t c[MESSAGES];
        if (tent_wait(e, 1) < 0) ok = 0;
        int n = tent_poll(e, c, MESSAGES);
        if (n < 0) ok = 0;
        for (int i = 0; i < n; ++i)
            if (c[i].status != TENT_OK) ok = 0;
        if (n > 0) done += n;
    }
    ok = ok && done == MESSAGES;
    char report = ok ? REPORT_STREAMED : REPORT_FAILED;
    if (write(out, &report, 1) != 1) ok = 0;
    char cmd = 0;
    if (read(in, &cmd, 1) != 1 || cmd != CMD_LEAVE) ok = 0;
    tent_engine_destroy(e); /* the server sees this peer go */
    report = ok ? REPORT_LEFT : REPORT_FAILED;
    if (write(out, &report, 1) != 1) return -1;
    return ok ? 0 : -1;
}

static void peer_main(int index, int in, int out) {
    for (uint32_t round = 1;; ++round) {
        char cmd = 0;
        if (read(in, &cmd, 1) != 1 || cmd != CMD_CONNECT) _exit(cmd == CMD_QUIT ? 0 : 1);
        uint32_t len = 0;
        unsigned char blob[4096];
        if (read(in, &len, sizeof len) != sizeof len || len > sizeof blob || read(in, blob, len) != (ssize_t)len)
            _exit(1);
        if (peer_round(index, round, blob, len, in, out) != 0) _exit(1);
    }
}

/* --- the server ------------------------------------------------------------ */

static atomic_int messages_ok, messages_bad, peers_gone;

static void on_message(tent_peer_t *peer, const void *data, size_t length, void *arg) {
    (void)peer;
    (void)arg;
    struct header h;
    const unsigned char *bytes = data;
    if (length != MESSAGE_SIZE) {
        atomic_fetch_add(&messages_bad, 1);
        return;
    }
    memcpy(&h, bytes, sizeof h);
    for (size_t i = sizeof h; i < length; ++i)
        if (bytes[i] != pattern(h.peer, h.round, h.seq, i)) {
            atomic_fetch_add(&messages_bad, 1);
            return;
        }
    atomic_fetch_add(&messages_ok, 1);
}

static void on_unreachable(tent_peer_t *peer, int status, void *arg) {
    (void)peer;
    (void)status;
    (void)arg;
    atomic_fetch_add(&peers_gone, 1);
}

/* Reads one report from each peer (at most 60 s in all); 0 when all are `want`. */
static int collect(int reports, char want) {
    int got = 0;
    for (int t = 0; got < PEERS && t < 600; ++t) {
        struct pollfd p = {reports, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        char r;
        if (read(reports, &r, 1) != 1) return -1;
        if (r != want) return -1;
        ++got;
    }
    return got == PEERS ? 0 : -1;
}

static pid_t children[PEERS];
static int commands[PEERS];

static void send_all(char cmd, const void *blob, uint32_t len) {
    for (int i = 0; i < PEERS; ++i) {
        cr_assert_eq(write(commands[i], &cmd, 1), 1);
        if (cmd != CMD_CONNECT) continue;
        cr_assert_eq(write(commands[i], &len, sizeof len), (ssize_t)sizeof len);
        cr_assert_eq(write(commands[i], blob, len), (ssize_t)len);
    }
}

Test(many_peers, fds_and_memory_stay_bounded, .timeout = 240) {
    setenv("TENT_CONTROL_ADDRESS", "127.0.0.1", 1);
    /* 33 processes on a CI machine of 2 CPUs: the server accepts the peers'
     * handshakes one after another, and a starved process may not answer
     * heartbeats in time. What is measured here is what peers leave
     * behind, not how fast they are served. */
    setenv("TENT_CONNECT_TIMEOUT_MS", "30000", 1);
    setenv("TENT_TCP_SILENCE_INTERVALS", "25", 1);
    setenv("TENT_FAILOVER_TIMEOUT_MS", "30000", 1);
    signal(SIGPIPE, SIG_IGN);
    /* The peers are forked before the server's engine exists: each is a
     * single-threaded process that makes engines of its own. */
    int reports[2];
    cr_assert_eq(pipe(reports), 0);
    for (int i = 0; i < PEERS; ++i) {
        int cmd[2];
        cr_assert_eq(pipe(cmd), 0);
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            close(cmd[1]);
            close(reports[0]);
            for (int j = 0; j < i; ++j) close(commands[j]);
            peer_main(i, cmd[0], reports[1]);
        }
        close(cmd[0]);
        children[i] = pid;
        commands[i] = cmd[1];
    }
    close(reports[1]);

    tent_engine_t *server = NULL;
    cr_assert_eq(tent_engine_create(NULL, &server), TENT_OK);
    cr_assert_eq(tent_set_recv_callback(server, on_message, NULL), TENT_OK);
    cr_assert_eq(tent_set_peer_unreachable_callback(server, on_unreachable, NULL), TENT_OK);
    const void *blob;
    size_t blob_len;
    cr_assert_eq(tent_engine_address(server, &blob, &blob_len), TENT_OK);

    /* The engine's start may still hold a descriptor for a moment on one of
     * its threads (under ASan a run counted one at the start that was gone
     * after every round: 54, then 53 after each): the start is the count
     * once two looks 20 ms apart agree (bounded: 2 s). */
    int fds_start = count_fds();
    for (int t = 0; t < 100; ++t) {
        tent_wait(server, 20);
        const int again = count_fds();
        if (again == fds_start) break;
        fds_start = again;
    }
    const long rss_start = rss_bytes();
    int fds_peak = 0, fds_after[ROUNDS + 1] = {0};
    long rss_peak = 0;
    long rss_after[ROUNDS + 1] = {0};
    for (int round = 1; round <= ROUNDS; ++round) {
        send_all(CMD_CONNECT, blob, (uint32_t)blob_len);
        cr_assert_eq(collect(reports[0], REPORT_STREAMED), 0, "round %d: a peer failed to stream", round);
        const int fds_connected = count_fds();
        const long rss_connected = rss_bytes();
        if (rss_connected > rss_peak) rss_peak = rss_connected;
        if (fds_connected > fds_peak) fds_peak = fds_connected;
        send_all(CMD_LEAVE, NULL, 0);
        cr_assert_eq(collect(reports[0], REPORT_LEFT), 0, "round %d: a peer failed to leave", round);
        /* The server notices every departure (bounded: 30 s). */
        for (int t = 0; atomic_load(&peers_gone) < round * PEERS && t < 3000; ++t) tent_wait(server, 10);
        cr_assert_eq(atomic_load(&peers_gone), round * PEERS, "round %d: %d departures seen", round,
                     atomic_load(&peers_gone));
        /* Departed peers are released by the driver's next turns (bounded:
         * 30 s, for a loaded machine under the sanitizers). */
        for (int t = 0; count_fds() > fds_start && t < 3000; ++t) tent_wait(server, 10);
        fds_after[round] = count_fds();
        rss_after[round] = rss_bytes();
        printf("many peers: round %d: fds %d connected, %d after; rss %ld KiB connected, %ld KiB after; "
               "heap in use %zu KiB after\n",
               round, fds_connected, fds_after[round], rss_connected / 1024, rss_after[round] / 1024,
               mallinfo2().uordblks / 1024);
    }
    send_all(CMD_QUIT, NULL, 0);
    for (int i = 0; i < PEERS; ++i) {
        int status = 0;
        cr_expect_eq(waitpid(children[i], &status, 0), children[i]);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer %d exited badly", i);
    }
    printf("many peers: fds at start %d, peak %d; rss at start %ld KiB, peak %ld KiB\n", fds_start, fds_peak,
           rss_start / 1024, rss_peak / 1024);
    cr_expect_eq(atomic_load(&messages_bad), 0);
    cr_expect_eq(atomic_load(&messages_ok), ROUNDS * PEERS * MESSAGES);
    cr_expect_leq(fds_peak, fds_start + PEERS * FDS_PER_PEER, "peak %d descriptors, start %d", fds_peak, fds_start);
    /* None left by a round: not more than at the start, and the same after
     * every round (a descriptor open at the start and closed since, which
     * the settling above does not catch, is not one a round left). */
    for (int round = 1; round <= ROUNDS; ++round) {
        cr_expect_leq(fds_after[round], fds_start, "round %d left %d descriptors (start %d)", round, fds_after[round],
                      fds_start);
        cr_expect_eq(fds_after[round], fds_after[1], "round %d left %d descriptors (round 1: %d)", round,
                     fds_after[round], fds_after[1]);
    }
#ifndef __SANITIZE_ADDRESS__
    /* Under AddressSanitizer freed memory stays in its quarantine and
     * resident: the memory bounds are measured in the plain build only. */
    cr_expect_leq(rss_peak - rss_start, (long)PEERS * MEMORY_PER_CONNECTED_PEER,
                  "%ld KiB resident with every peer connected, %ld KiB at the start", rss_peak / 1024,
                  rss_start / 1024);
    for (int round = 2; round <= ROUNDS; ++round)
        cr_expect_leq(rss_after[round] - rss_after[1], (long)PEERS * MEMORY_PER_PEER,
                      "round %d: resident memory grew by %ld KiB since round 1", round,
                      (rss_after[round] - rss_after[1]) / 1024);
#endif
    tent_engine_destroy(server);
}
