/* The C API from C: engines connect through their address blobs, memory
 * registers and yields a remote key, bad arguments are refused with a status,
 * a peer going away is reported, and every request completes once. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tent/tent.h"

static void setup(void) { setenv("TENT_CONTROL_ADDRESS", "127.0.0.1", 1); }

/* Two new engines, *A connected to *B: A's handle of B. */
static tent_peer_t *connect_pair(tent_engine_t **a, tent_engine_t **b) {
    cr_assert_eq(tent_engine_create(NULL, a), TENT_OK);
    cr_assert_eq(tent_engine_create(NULL, b), TENT_OK);
    const void *blob;
    size_t blob_len;
    cr_assert_eq(tent_engine_address(*b, &blob, &blob_len), TENT_OK);
    cr_assert_gt(blob_len, 0);
    tent_peer_t *peer = NULL;
    cr_assert_eq(tent_connect(*a, blob, blob_len, &peer), TENT_OK);
    cr_assert_not_null(peer);
    return peer;
}

static int wait_poll(tent_engine_t *e, tent_completion_t *c, int want) {
    int got = 0;
    for (int i = 0; i < 5000 && got < want; ++i) {
        int n = tent_poll(e, c + got, want - got);
        if (n < 0) return n;
        got += n;
        if (got < want) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return got;
}

static volatile int unreachable_seen;
static void on_unreachable(tent_peer_t *peer, int status, void *arg) {
    (void)peer;
    (void)arg;
    if (status == TENT_ERR_PEER_UNREACHABLE) unreachable_seen = 1;
}

Test(capi, connect_register_and_errors, .init = setup) {
    tent_engine_t *a = NULL, *b = NULL;
    tent_peer_t *peer = connect_pair(&a, &b);

    static char buf[4096];
    tent_mem_t *mem = NULL;
    cr_assert_eq(tent_mem_register(b, buf, sizeof buf, TENT_ACCESS_ALL, &mem), TENT_OK);
    const void *key;
    size_t key_len;
    cr_assert_eq(tent_mem_remote_key(mem, &key, &key_len), TENT_OK);
    cr_expect_eq(key_len, TENT_REMOTE_KEY_SIZE);

    /* Refused at the call. */
    cr_expect_eq(tent_mem_register(b, buf, sizeof buf, 0x100, &mem), TENT_ERR_INVALID);
    cr_expect_eq(tent_mem_register(b, NULL, 0, TENT_ACCESS_ALL, &(tent_mem_t *){0}), TENT_ERR_INVALID);
    tent_peer_t *bad = NULL;
    cr_expect_eq(tent_connect(a, "garbage", 7, &bad), TENT_ERR_INVALID);
    cr_expect_null(bad);
    cr_expect_eq(tent_post_send(peer, buf, 1, 7, TENT_TRANSPORT_ANY, 1), TENT_ERR_INVALID);
    static char loose[16];
    cr_expect_eq(tent_post_write(peer, loose, sizeof loose, key, key_len, 0, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, 1),
                 TENT_ERR_INVALID, "unregistered local buffer");
    cr_expect_eq(tent_poll(a, NULL, 1), TENT_ERR_INVALID);
    cr_expect_str_eq(tent_strerror(TENT_ERR_REMOTE_ACCESS), "remote access refused (key, bounds or access rights)");
    cr_expect_str_eq(tent_strerror(12345), "unknown status");

    /* A request completes exactly once. */
    cr_assert_eq(tent_post_send(peer, buf, 10, TENT_PRIORITY_LOW, TENT_TRANSPORT_TCP, 77), TENT_OK);
    tent_completion_t c[2];
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_expect_eq(c[0].cookie, 77);
    cr_expect_eq(c[0].op, TENT_OP_SEND);
    cr_expect_eq(c[0].status, TENT_OK, "%s", tent_strerror(c[0].status));
    cr_expect_eq(c[0].peer, peer);
    cr_expect_eq(tent_poll(a, c, 2), 0);

    tent_rail_stats_t stats[8];
    cr_expect_geq(tent_rail_stats(a, stats, 8), 0);

    cr_assert_eq(tent_set_peer_unreachable_callback(a, on_unreachable, NULL), TENT_OK);
    cr_assert_eq(tent_mem_deregister(mem), TENT_OK);
    cr_assert_eq(tent_engine_destroy(b), TENT_OK);
    for (int i = 0; i < 5000 && !unreachable_seen; ++i) nanosleep(&(struct timespec){0, 1000000}, NULL);
    cr_expect(unreachable_seen, "destroying the peer engine was not reported");
    cr_expect_eq(tent_post_send(peer, buf, 1, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, 2), TENT_ERR_PEER_UNREACHABLE);
    cr_assert_eq(tent_engine_destroy(a), TENT_OK);
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 3;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        p[i] = (unsigned char)(x >> 24);
    }
}

struct echo_state {
    volatile int messages;
    size_t last_length;
    unsigned char copy[1 << 20];
};

static void on_message(tent_peer_t *peer, const void *data, size_t length, void *arg) {
    (void)peer;
    struct echo_state *s = arg;
    if (length <= sizeof s->copy) memcpy(s->copy, data, length);
    s->last_length = length;
    s->messages++;
}

/* Data through the C API over the default transport (TCP on 127.0.0.1):
 * every byte of a write, a read back, and a message delivered to a callback. */
Test(capi, write_read_send_every_byte, .init = setup) {
    tent_engine_t *a = NULL, *b = NULL;
    tent_peer_t *peer = connect_pair(&a, &b);

    const size_t n = 3u << 20;
    unsigned char *src = malloc(n), *dst = calloc(1, n), *back = calloc(1, n);
    cr_assert(src && dst && back);
    fill(src, n, 5);
    tent_mem_t *msrc, *mdst, *mback;
    cr_assert_eq(tent_mem_register(a, src, n, TENT_ACCESS_ALL, &msrc), TENT_OK);
    cr_assert_eq(tent_mem_register(a, back, n, TENT_ACCESS_ALL, &mback), TENT_OK);
    cr_assert_eq(tent_mem_register(b, dst, n, TENT_ACCESS_ALL, &mdst), TENT_OK);
    const void *key;
    size_t key_len;
    cr_assert_eq(tent_mem_remote_key(mdst, &key, &key_len), TENT_OK);

    tent_completion_t c[2];
    cr_assert_eq(tent_post_write(peer, src, n, key, key_len, (uint64_t)(uintptr_t)dst, TENT_PRIORITY_HIGH,
                                 TENT_TRANSPORT_TCP, 1),
                 TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_assert_eq(c[0].status, TENT_OK, "%s", tent_strerror(c[0].status));
    cr_expect_eq(c[0].length, n);
    cr_expect(memcmp(dst, src, n) == 0);
    cr_assert_eq(tent_post_read(peer, back, n, key, key_len, (uint64_t)(uintptr_t)dst, TENT_PRIORITY_LOW,
                                TENT_TRANSPORT_ANY, 2),
                 TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_assert_eq(c[0].status, TENT_OK);
    cr_expect(memcmp(back, src, n) == 0);
    /* Outside the region: refused, nothing written past it. */
    cr_assert_eq(tent_post_write(peer, src, 64, key, key_len, (uint64_t)(uintptr_t)dst + n - 32, TENT_PRIORITY_HIGH,
                                 TENT_TRANSPORT_ANY, 3),
                 TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_expect_eq(c[0].status, TENT_ERR_REMOTE_ACCESS);

    static struct echo_state state;
    cr_assert_eq(tent_set_recv_callback(b, on_message, &state), TENT_OK);
    cr_assert_eq(tent_post_send(peer, src, 1 << 20, TENT_PRIORITY_MEDIUM, TENT_TRANSPORT_ANY, 4), TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_expect_eq(c[0].status, TENT_OK);
    for (int i = 0; i < 5000 && state.messages == 0; ++i) nanosleep(&(struct timespec){0, 1000000}, NULL);
    cr_assert_eq(state.messages, 1);
    cr_expect_eq(state.last_length, (size_t)1 << 20);
    cr_expect(memcmp(state.copy, src, 1 << 20) == 0);

    tent_rail_stats_t stats[4];
    int rails = tent_rail_stats(a, stats, 4);
    cr_assert_geq(rails, 1);
    cr_expect_eq(stats[0].transport, TENT_TRANSPORT_TCP);
    cr_expect_gt(stats[0].bytes, 0);

    /* The metrics as Prometheus text: the length first, then all of it. */
    int length = tent_metrics_text(a, NULL, 0);
    cr_assert_gt(length, 0);
    char *text = malloc((size_t)length + 1);
    cr_assert_eq(tent_metrics_text(a, text, (size_t)length + 1), length);
    cr_expect_eq(strlen(text), (size_t)length);
    cr_expect(strstr(text, "# TYPE tent_rail_state gauge\n") != NULL, "%s", text);
    cr_expect(strstr(text, stats[0].name) != NULL, "the rail %s is named: %s", stats[0].name, text);
    char small[8];
    cr_expect_eq(tent_metrics_text(a, small, sizeof small), length, "cut, but the whole length returned");
    cr_expect_eq(strlen(small), sizeof small - 1);
    cr_expect_eq(tent_metrics_text(a, NULL, 4), TENT_ERR_INVALID);
    free(text);

    cr_assert_eq(tent_mem_deregister(msrc), TENT_OK);
    cr_assert_eq(tent_mem_deregister(mback), TENT_OK);
    cr_assert_eq(tent_mem_deregister(mdst), TENT_OK);
    cr_assert_eq(tent_engine_destroy(a), TENT_OK);
    cr_assert_eq(tent_engine_destroy(b), TENT_OK);
    free(src);
    free(dst);
    free(back);
}

/* Atomics from C: the value found lands in the result buffer before the
 * TENT_OP_ATOMIC completion; compare-and-swap swaps only on a match; a
 * region registered without TENT_ACCESS_REMOTE_ATOMIC refuses; bad
 * arguments are refused at post. */
Test(capi, atomics, .init = setup) {
    tent_engine_t *a = NULL, *b = NULL;
    tent_peer_t *peer = connect_pair(&a, &b);
    static uint64_t words[2] = {10, 20}; /* [0]: atomics allowed, [1]: not */
    static uint64_t result;
    tent_mem_t *mw, *mplain, *mr;
    cr_assert_eq(tent_mem_register(b, &words[0], 8, TENT_ACCESS_ALL | TENT_ACCESS_REMOTE_ATOMIC, &mw), TENT_OK);
    cr_assert_eq(tent_mem_register(b, &words[1], 8, TENT_ACCESS_ALL, &mplain), TENT_OK);
    cr_assert_eq(tent_mem_register(a, &result, 8, TENT_ACCESS_ALL, &mr), TENT_OK);
    const void *key, *plain_key;
    size_t key_len, plain_len;
    cr_assert_eq(tent_mem_remote_key(mw, &key, &key_len), TENT_OK);
    cr_assert_eq(tent_mem_remote_key(mplain, &plain_key, &plain_len), TENT_OK);
    const uint64_t w0 = (uint64_t)(uintptr_t)&words[0], w1 = (uint64_t)(uintptr_t)&words[1];
    tent_completion_t c[1];

    cr_assert_eq(tent_post_atomic(peer, TENT_ATOMIC_FETCH_ADD, 5, 0, &result, key, key_len, w0, TENT_PRIORITY_HIGH,
                                  TENT_TRANSPORT_ANY, 1), TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_expect_eq(c[0].op, TENT_OP_ATOMIC);
    cr_expect_eq(c[0].status, TENT_OK);
    cr_expect_eq(c[0].cookie, 1u);
    cr_expect_eq(result, 10u);
    cr_expect_eq(words[0], 15u);

    cr_assert_eq(tent_post_atomic(peer, TENT_ATOMIC_COMPARE_SWAP, 15, 99, &result, key, key_len, w0,
                                  TENT_PRIORITY_HIGH, TENT_TRANSPORT_TCP, 2), TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_expect_eq(c[0].status, TENT_OK);
    cr_expect_eq(result, 15u);
    cr_expect_eq(words[0], 99u);

    cr_assert_eq(tent_post_atomic(peer, TENT_ATOMIC_FETCH_ADD, 1, 0, &result, plain_key, plain_len, w1,
                                  TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, 3), TENT_OK);
    cr_assert_eq(wait_poll(a, c, 1), 1);
    cr_expect_eq(c[0].status, TENT_ERR_REMOTE_ACCESS);
    cr_expect_eq(words[1], 20u);

    cr_expect_eq(tent_post_atomic(peer, TENT_ATOMIC_FETCH_ADD, 1, 0, &result, key, key_len, w0 + 4,
                                  TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, 4), TENT_ERR_INVALID);
    cr_expect_eq(tent_post_atomic(peer, (tent_atomic_op_t)7, 1, 0, &result, key, key_len, w0, TENT_PRIORITY_HIGH,
                                  TENT_TRANSPORT_ANY, 4), TENT_ERR_INVALID);
    cr_expect_eq(tent_mem_register(a, &result, 8, 0x10u, &(tent_mem_t *){0}), TENT_ERR_INVALID);

    tent_mem_deregister(mr);
    tent_mem_deregister(mplain);
    tent_mem_deregister(mw);
    tent_engine_destroy(a);
    tent_engine_destroy(b);
}

/* A receive callback that posts while its engine is being destroyed: the
 * callback runs on the progress thread, which the destruction waits for; the
 * post gets a status (the engine takes nothing more), not a freed engine. */
struct late_poster {
    atomic_int entered, destroying, posted;
    int rc;
};

static void post_while_destroyed(tent_peer_t *peer, const void *data, size_t length, void *arg) {
    struct late_poster *s = arg;
    if (atomic_exchange(&s->entered, 1)) return;
    for (int i = 0; i < 5000 && !atomic_load(&s->destroying); ++i) nanosleep(&(struct timespec){0, 1000000}, NULL);
    /* Long enough for tent_engine_destroy() to be waiting for this thread. */
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    s->rc = tent_post_send(peer, data, length, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, 1);
    atomic_store(&s->posted, 1);
}

Test(capi, post_from_a_callback_during_destroy, .init = setup) {
    tent_engine_t *a = NULL, *b = NULL;
    tent_peer_t *peer = connect_pair(&a, &b);
    static struct late_poster s;
    cr_assert_eq(tent_set_recv_callback(b, post_while_destroyed, &s), TENT_OK);
    static const char hello[] = "hello";
    cr_assert_eq(tent_post_send(peer, hello, sizeof hello, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, 1), TENT_OK);
    for (int i = 0; i < 5000 && !atomic_load(&s.entered); ++i) nanosleep(&(struct timespec){0, 1000000}, NULL);
    cr_assert(atomic_load(&s.entered), "the message never reached the callback");
    atomic_store(&s.destroying, 1);
    cr_assert_eq(tent_engine_destroy(b), TENT_OK);
    cr_assert(atomic_load(&s.posted));
    cr_expect_eq(s.rc, TENT_ERR_PEER_UNREACHABLE, "%s", tent_strerror(s.rc));
    tent_engine_destroy(a);
}
