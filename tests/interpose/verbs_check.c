/* verbs_check: a plain RC verbs program (ibv_create_qp, ibv_post_send,
 * ibv_poll_cq) between two processes that checks every byte and every
 * completion field of sends with several SGEs, inline sends with immediate
 * data, RDMA writes (unsignaled, followed by a send that must see their
 * data), RDMA writes with immediate data, RDMA reads with several SGEs,
 * and atomics: fetch-and-adds kept in flight together (executed once each
 * and in posting order, as an adapter does: the i-th finds 3 * i; the
 * IBV_WC_FETCH_ADD completion with byte_len 8, the value found written to
 * the local SGE) and compare-and-swaps (swapping only on a match); the server checks the word they leave; then a burst of sends
 * of 1 to 2000 bytes (several travel together over tent, which must keep
 * each one whole, once, in order, with its own immediate data), posted as
 * one list with two signaled, then one by one. With -s on both sides,
 * the QP receives from a shared receive queue (ibv_create_srq,
 * ibv_post_srq_recv) instead of its own, with the same checks, and the
 * server checks the SRQ's limit event (ibv_modify_srq IBV_SRQ_LIMIT). With
 * -n ROUNDS on both sides, all of it is done ROUNDS times (long enough to
 * pull a port mid-run: tests/interpose/faults.sh). With -x, the client
 * posts everything through the extended QP API (ibv_create_qp_ex,
 * ibv_wr_start / ibv_wr_* / ibv_wr_complete) instead of ibv_post_send,
 * with the same checks. With -X, either side creates its CQ with
 * ibv_create_cq_ex and takes every completion through ibv_start_poll /
 * ibv_next_poll / ibv_wc_read_* / ibv_end_poll, with the same checks.
 * After the rounds, the asynchronous events queued on the context must
 * name no error of the QP, whatever faults of ports or devices came (read
 * with the fd non-blocking; tent carries the QP past them).
 * Run as "verbs_check -p PORT" (server) and "verbs_check -p PORT HOST"
 * (client), like ibv_rc_pingpong; exit 0 when everything checked out.
 * The client then forks a child that exits at once (through exit(), so
 * atexit handlers run): it must not hang or crash in the child.
 * With -a, an interval timer interrupts the program every 100 us with a
 * SIGALRM whose handler allocates and frees (a handler that is not
 * async-signal-safe, as perftest's duration mode has): a signal landing
 * while the interposer, on the program's thread, holds the allocator's
 * lock would hang it there (the handler is installed 50 ms before the
 * timer starts: the interposer looks for handlers every 20 ms).
 * With -u, the client also keeps a UD queue pair on the same CQ (UD passes
 * through the interposer to the HCA): while its first send of each round is
 * in flight, it sends itself a datagram, and polling the one CQ must give
 * the carried QP's completions and the UD QP's alike, each with its own
 * qp_num, the datagram's bytes checked; after the round, a burst of reads
 * completing beside a datagram must not hold the datagram's completions
 * back until the last read's (shared_cq_turns()).
 * With -e, the program sleeps for its completions: the CQ has a completion
 * channel, and a poll that finds nothing arms the CQ, polls once more, and
 * then blocks in ibv_get_cq_event until the CQ's next completion (with -u
 * the channel serves the carried QP and the UD QP that passes through, so
 * both tent's events and the HCA's must wake it, and after each round the
 * client sleeps 16 times in ibv_get_cq_event with nothing of the carried
 * QP in flight while another thread posts a datagram: only the HCA's event
 * can wake it); it counts the events.
 * With -m on both sides, each round ends with NCHURN RDMA writes with
 * immediate data, each from a buffer of its own registered just before it
 * is posted; once its write completed, another thread deregisters it and
 * frees it while this one registers and posts the next (a program releasing
 * its buffers from a thread of their own). Under tent, a write's first post
 * from a region registers the region with tent and the deregistration
 * removes it there, on two threads at once. The server checks every byte.
 * With -w, the program ends without tearing its verbs down, while a second
 * thread keeps polling the CQ: the process exits (and tent's exit handler
 * runs) with that thread inside ibv_poll_cq, and must exit 0.
 * With -q USEC, alone (no peer, no port): the QP is brought to RTR against
 * a made-up peer on this host that never answers, and the program exits
 * USEC microseconds later, while tent is still starting its engine or its
 * discovery still looks for the peer: the exit must not crash, hang or
 * race the threads doing that (exit 0). With -t MS as well, the program
 * first tears everything down (QP, CQ, MR, PD, device), as one that gives
 * up on its peer does, and exits MS milliseconds later (after tent's
 * search for the peer ended on the QP it destroyed).
 * With -F, the client first starts tent's engine in its process (a queue
 * pair of its own, made and destroyed), then forks, and the child runs the
 * client: a child of fork() that uses verbs gets plain queue pairs (the
 * engine and its listener are the parent's), so the pair runs through the
 * HCA, both sides, with the same checks.
 * With -T, the program leaves its verbs to an exit handler registered
 * before its first verb, so that they are torn down (QP, SRQ, CQ, MR, PD,
 * device, each checked) after tent's own exit handler, registered with the
 * first QP, has run: a program releasing its verbs from a static destructor
 * or atexit() must get them released, not crash on tent's engine gone.
 * With -k on both sides, the server leaves once connected and the client
 * checks what a real QP whose peer died gives: IBV_WC_RETRY_EXC_ERR, then
 * IBV_WC_WR_FLUSH_ERR for later work, the QP in the error state, and
 * IBV_EVENT_QP_FATAL on the asynchronous event queue.
 * With -G err or -G destroy on both sides, the server, once it has the
 * client's first message, puts its QP in the error state (err: every
 * receive it had posted must complete with IBV_WC_WR_FLUSH_ERR in posting
 * order, a send posted then too, and no error event may name the QP) or
 * destroys it, and stays (its process, and tent's engine in it, with it).
 * The client then sends until a send fails, and must get what a real QP
 * whose messages find no QP at the other end gives, as with -k. With -s
 * as well (err), the shared receive queue's receives are not flushed and
 * the server gets IBV_EVENT_QP_LAST_WQE_REACHED for the QP instead.
 * With -R on both sides, the QP is reset (IBV_QPS_RESET) after each round
 * but the last and connected again, to the peer's QP, itself reset, for the
 * next round (-n): a program that reuses its QPs for new connections.
 * With -E on both sides, each first puts two spare QPs in the error state
 * with receives posted, one before connecting it and one right after RTR,
 * and checks that their receives are flushed (spare_errored()).
 * With -O ROUNDS on both sides, each round the client writes 120 KiB of
 * data and then, with a separate write posted right behind it, an 8-byte
 * flag; the server polls the flag and must find the whole of that round's
 * data already there (an adapter applies a QP's writes in posting order),
 * then tells the client to go on with a send. Under tent that order is kept
 * with interpose_ordering, or (-f) when the flag write is posted with
 * IBV_SEND_FENCE.
 * With -P on both sides, the client streams numbered sends, PREFIX_WINDOW
 * in flight, until one fails (a rail fails a piece of it while tent may
 * not move it elsewhere: max_failover_attempts 0) or PREFIX_MAX went: the
 * first failed one completes with IBV_WC_RETRY_EXC_ERR, every later one
 * with IBV_WC_WR_FLUSH_ERR. The server checks that it receives messages 1,
 * 2, 3, ... each whole: a prefix of what was sent, as an adapter's
 * responder never takes a message past one it missed (under tent, later
 * messages that travelled another rail may have arrived). The client then
 * tells it how many sends succeeded and how many it posted: the server must
 * have received every one that succeeded, and may have more (a failed or
 * flushed send may have arrived, as with an adapter whose acknowledgements
 * were lost), but none that was not posted. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (1u << 20)
#define SEND_AREA 0u
#define RECV_AREA (256u << 10)
#define TARGET_AREA (512u << 10)
#define SOURCE_AREA (768u << 10)
#define ATOMIC_WORD (TARGET_AREA + (240u << 10)) /* the word the client's atomics change */
#define NATOMIC 48
#define RECV_SLOT 8192u
#define NRECV 16
#define UD_AREA (RECV_AREA + (192u << 10)) /* past the receive slots: a datagram's landing place, then its source */
#define UD_LEN 512u
#define UD_GRH 40u
#define UD_QKEY 0x11111111u
#define QUIET_DATAGRAMS 16
#define NCHURN 64 /* -m: sends from buffers registered for them */
#define NBURST 8 /* sends per half of the burst (twice NBURST fit the receives the server keeps posted) */
static const uint32_t burst_len[2 * NBURST] = {1, 64, 200, 1024, 8, 2000, 3, 512, 100, 1000, 16, 777, 1025, 5, 64, 300};

struct endpoint {
    uint32_t qpn, psn, rkey, pad;
    uint64_t addr;
    union ibv_gid gid;
};

static const char *role = "server";
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
/* -X: the same CQ, created and polled through the extended API. */
static struct ibv_cq_ex *cqx;
/* -X: completions one ibv_start_poll .. ibv_end_poll took, handed out one
 * at a time. */
static struct ibv_wc cqx_taken[8];
static int cqx_have, cqx_next;

/* One completion of the CQ into *wc: 1, 0 if there is none, or a negative
 * error. With -X through the extended API: a poll takes up to 8 with
 * ibv_next_poll, every field read with ibv_wc_read_*. */
static int poll_one(struct ibv_wc *wc) {
    if (!cqx) return ibv_poll_cq(cq, 1, wc);
    if (cqx_next < cqx_have) {
        *wc = cqx_taken[cqx_next++];
        return 1;
    }
    struct ibv_poll_cq_attr attr = {0};
    int rc = ibv_start_poll(cqx, &attr);
    if (rc == ENOENT) return 0;
    if (rc) return -rc;
    cqx_have = cqx_next = 0;
    do {
        struct ibv_wc *w = &cqx_taken[cqx_have++];
        memset(w, 0, sizeof *w);
        w->wr_id = cqx->wr_id;
        w->status = cqx->status;
        w->vendor_err = ibv_wc_read_vendor_err(cqx);
        w->opcode = ibv_wc_read_opcode(cqx);
        w->byte_len = ibv_wc_read_byte_len(cqx);
        w->wc_flags = ibv_wc_read_wc_flags(cqx);
        if (w->wc_flags & IBV_WC_WITH_IMM) w->imm_data = ibv_wc_read_imm_data(cqx);
        w->qp_num = ibv_wc_read_qp_num(cqx);
        w->src_qp = ibv_wc_read_src_qp(cqx);
    } while (cqx_have < 8 && (rc = ibv_next_poll(cqx)) == 0);
    ibv_end_poll(cqx);
    if (rc && rc != ENOENT) return -rc;
    *wc = cqx_taken[cqx_next++];
    return 1;
}
static struct ibv_qp *qp;
static struct ibv_qp_ex *qpx; /* -x */
static struct ibv_mr *mr;
static struct ibv_srq *srq; /* -s */
static uint8_t *buf;
static struct endpoint self, peer;
static struct ibv_qp *ud_qp; /* -u */
static struct ibv_ah *ud_ah;
static int ud_seen; /* the datagram's completions seen this round (send and receive) */
static unsigned ud_seed;
static struct ibv_comp_channel *channel; /* -e */
static int cq_armed;
static unsigned events_taken;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "verbs_check %s: FAIL: ", role);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static uint8_t pattern(unsigned seed, size_t i) { return (uint8_t)(seed * 131u + i * 7u + (i >> 9)); }
static void fill(uint8_t *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) p[i] = pattern(seed, i);
}
static void check(const uint8_t *p, size_t n, unsigned seed, const char *what) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != pattern(seed, i)) die("%s: byte %zu is 0x%02x, not 0x%02x", what, i, p[i], pattern(seed, i));
}

/* -u: one completion of the datagram the client sent itself. */
static void ud_check(struct ibv_wc wc) {
    if (wc.status != IBV_WC_SUCCESS) die("datagram: status %s", ibv_wc_status_str(wc.status));
    if (wc.opcode == IBV_WC_SEND) {
        if (wc.wr_id != 7001) die("datagram send: wr_id %llu, not 7001", (unsigned long long)wc.wr_id);
    } else if (wc.opcode == IBV_WC_RECV) {
        if (wc.wr_id != 7002) die("datagram receive: wr_id %llu, not 7002", (unsigned long long)wc.wr_id);
        if (wc.byte_len != UD_GRH + UD_LEN) die("datagram receive: byte_len %u, not %u", wc.byte_len, UD_GRH + UD_LEN);
        if (wc.src_qp != ud_qp->qp_num) die("datagram receive: src_qp 0x%x, not 0x%x", wc.src_qp, ud_qp->qp_num);
        check(buf + UD_AREA + UD_GRH, UD_LEN, ud_seed, "datagram");
    } else {
        die("datagram: opcode %d", wc.opcode);
    }
    ++ud_seen;
}

/* -e, after a poll of the CQ found nothing: arms the CQ (the caller polls
 * once more, so a completion that came before the arming is not slept
 * through); after the next empty poll, sleeps in ibv_get_cq_event until the
 * CQ's next completion. An event left by an arming whose poll then found a
 * completion is taken on the way. */
static void await_completion(void) {
    if (!cq_armed) {
        if (ibv_req_notify_cq(cq, 0)) die("ibv_req_notify_cq");
        cq_armed = 1;
        return;
    }
    struct ibv_cq *ev_cq;
    void *ev_ctx;
    if (ibv_get_cq_event(channel, &ev_cq, &ev_ctx)) die("ibv_get_cq_event");
    if (ev_cq != cq) die("ibv_get_cq_event: an event of another CQ");
    ibv_ack_cq_events(ev_cq, 1);
    ++events_taken;
    cq_armed = 0;
}

/* The next completion of the RC QP, within 10 s (-u: the UD QP's met on
 * the way are checked and counted). */
static struct ibv_wc poll_wc(void) {
    struct ibv_wc wc;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int n = poll_one(&wc);
        if (n < 0) die("ibv_poll_cq: %d", n);
        if (n == 1 && ud_qp && wc.qp_num == ud_qp->qp_num) {
            ud_check(wc);
            continue;
        }
        if (n == 1) return wc;
        if (channel) await_completion();
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) die("no completion within 10 s");
    }
}

static struct ibv_wc check_wc(struct ibv_wc wc, enum ibv_wc_opcode op, uint64_t wr_id, const char *what) {
    if (wc.status != IBV_WC_SUCCESS) die("%s: status %s", what, ibv_wc_status_str(wc.status));
    if (wc.opcode != op) die("%s: opcode %d, not %d", what, wc.opcode, op);
    if (wc.wr_id != wr_id) die("%s: wr_id %llu, not %llu", what, (unsigned long long)wc.wr_id,
                               (unsigned long long)wr_id);
    if (wc.qp_num != qp->qp_num) die("%s: qp_num 0x%x, not 0x%x", what, wc.qp_num, qp->qp_num);
    return wc;
}

/* One CQ serves both queues, and verbs order completions only within a
 * queue: a message the peer sends once it saw ours may complete here before
 * our send does (its acknowledgement can travel another rail under tent).
 * Receive completions met while waiting for a send's are kept, in arrival
 * order, and come first from next_wc(). */
#define HELD_MAX 64
static struct ibv_wc held[HELD_MAX];
static int n_held;

static int is_receive(enum ibv_wc_opcode op) { return (op & IBV_WC_RECV) != 0; }

static struct ibv_wc next_wc(void) {
    if (n_held == 0) return poll_wc();
    struct ibv_wc wc = held[0];
    memmove(held, held + 1, (size_t)--n_held * sizeof held[0]);
    return wc;
}

/* Keeps receive completion WC, met while waiting for WHAT, for next_wc(). */
static void hold(struct ibv_wc wc, const char *what) {
    if (n_held == HELD_MAX) die("%s: more than %d receive completions before it", what, HELD_MAX);
    held[n_held++] = wc;
}

static struct ibv_wc expect_wc(enum ibv_wc_opcode op, uint64_t wr_id, const char *what) {
    if (is_receive(op)) return check_wc(next_wc(), op, wr_id, what);
    for (;;) {
        struct ibv_wc wc = poll_wc();
        if (!is_receive(wc.opcode) || wc.status != IBV_WC_SUCCESS) return check_wc(wc, op, wr_id, what);
        hold(wc, what);
    }
}

static void post_recv(unsigned slot) {
    /* Two SGEs per receive: the first 1 KiB, then the rest of the slot. */
    struct ibv_sge sge[2] = {
        {(uintptr_t)buf + RECV_AREA + slot * RECV_SLOT, 1024, mr->lkey},
        {(uintptr_t)buf + RECV_AREA + slot * RECV_SLOT + 1024, RECV_SLOT - 1024, mr->lkey},
    };
    struct ibv_recv_wr wr = {.wr_id = 1000 + slot, .sg_list = sge, .num_sge = 2}, *bad;
    if (srq) {
        if (ibv_post_srq_recv(srq, &wr, &bad)) die("ibv_post_srq_recv");
    } else if (ibv_post_recv(qp, &wr, &bad)) {
        die("ibv_post_recv");
    }
}

/* Receives are consumed in posting order: the slot of the next one, posted
 * again at once so the queue stays full in the same order. */
static unsigned next_slot;
static unsigned take_slot(void) {
    unsigned slot = next_slot;
    next_slot = (next_slot + 1) % NRECV;
    return slot;
}

/* The next receive, into SLOT: LEN bytes with pattern SEED (0: bytes not
 * checked here), checked before the slot is posted again (once posted, a
 * message the sender sent further ahead may land in it). */
static struct ibv_wc expect_recv(unsigned slot, uint32_t len, unsigned seed, const char *what) {
    struct ibv_wc wc = expect_wc(IBV_WC_RECV, 1000 + slot, what);
    if (wc.byte_len != len) die("%s: byte_len %u, not %u", what, wc.byte_len, len);
    if (wc.src_qp != peer.qpn) die("%s: src_qp 0x%x, not 0x%x", what, wc.src_qp, peer.qpn);
    if (seed) check(buf + RECV_AREA + slot * RECV_SLOT, len, seed, what);
    post_recv(slot);
    return wc;
}

/* A list of work requests through the ibv_wr_* API (-x), as one batch. */
static void post_send_ex(struct ibv_send_wr *wr) {
    ibv_wr_start(qpx);
    for (; wr; wr = wr->next) {
        qpx->wr_id = wr->wr_id;
        qpx->wr_flags = wr->send_flags & ~IBV_SEND_INLINE;
        switch (wr->opcode) {
        case IBV_WR_SEND: ibv_wr_send(qpx); break;
        case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(qpx, wr->imm_data); break;
        case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
        case IBV_WR_RDMA_WRITE_WITH_IMM:
            ibv_wr_rdma_write_imm(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, wr->imm_data);
            break;
        case IBV_WR_RDMA_READ: ibv_wr_rdma_read(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
        case IBV_WR_ATOMIC_CMP_AND_SWP:
            ibv_wr_atomic_cmp_swp(qpx, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr, wr->wr.atomic.compare_add,
                                  wr->wr.atomic.swap);
            break;
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
            ibv_wr_atomic_fetch_add(qpx, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr, wr->wr.atomic.compare_add);
            break;
        default: die("opcode %d has no ibv_wr_* call here", wr->opcode);
        }
        if (wr->send_flags & IBV_SEND_INLINE) {
            struct ibv_data_buf data[4];
            if (wr->num_sge > 4) die("more than 4 SGEs");
            for (int i = 0; i < wr->num_sge; ++i)
                data[i] = (struct ibv_data_buf){(void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length};
            ibv_wr_set_inline_data_list(qpx, (size_t)wr->num_sge, data);
        } else {
            ibv_wr_set_sge_list(qpx, (size_t)wr->num_sge, wr->sg_list);
        }
    }
    int rc = ibv_wr_complete(qpx);
    if (rc) die("ibv_wr_complete: %s", strerror(rc));
}

static void post_send(struct ibv_send_wr *wr) {
    if (qpx) {
        post_send_ex(wr);
        return;
    }
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(qp, wr, &bad);
    if (rc) die("ibv_post_send: %s", strerror(rc));
}

static int connect_oob(const char *host, const char *port) {
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    if (getaddrinfo(host, port, &hints, &res)) die("getaddrinfo");
    int fd = socket(res->ai_family, res->ai_socktype, 0);
    if (host) {
        if (connect(fd, res->ai_addr, res->ai_addrlen)) die("connect to %s:%s", host, port);
    } else {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1)) die("listen on %s", port);
        int c = accept(fd, NULL, NULL);
        close(fd);
        fd = c;
    }
    freeaddrinfo(res);
    return fd;
}

static void sync_oob(int fd) {
    char c = 's';
    if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1) die("out-of-band sync");
}

static void modify_to_init(struct ibv_qp *q) {
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                               IBV_ACCESS_REMOTE_ATOMIC};
    if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        die("modify to INIT");
}

static void modify_to_rtr(struct ibv_qp *q, uint32_t dest_qpn, uint32_t rq_psn, const union ibv_gid *dgid,
                          int gid_index) {
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = rq_psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = *dgid;
    a.ah_attr.grh.sgid_index = gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        die("modify to RTR");
}

static void bring_up(int fd, int gid_index) {
    modify_to_init(qp);
    for (unsigned i = 0; i < NRECV; ++i) post_recv(i);
    self.qpn = qp->qp_num;
    self.psn = 4242;
    self.rkey = mr->rkey;
    self.addr = (uintptr_t)buf;
    if (ibv_query_gid(ctx, 1, gid_index, &self.gid)) die("ibv_query_gid");
    if (write(fd, &self, sizeof self) != sizeof self || read(fd, &peer, sizeof peer) != sizeof peer)
        die("out-of-band exchange");
    modify_to_rtr(qp, peer.qpn, peer.psn, &peer.gid, gid_index);
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = self.psn;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                  IBV_QP_MAX_QP_RD_ATOMIC))
        die("modify to RTS");
}

/* -E: a spare QP, on a CQ of its own, with NSPARE receives posted at INIT,
 * put in the error state before it is connected (CONNECT 0) or right after
 * RTR towards the other side's spare (CONNECT 1: tent still looks for its
 * peer then): its receives must complete with IBV_WC_WR_FLUSH_ERR, in
 * posting order, within 10 s, as an adapter's do. */
#define NSPARE 4
static void spare_errored(int fd, int gid_index, int connect) {
    struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    if (!c) die("ibv_create_cq (spare)");
    struct ibv_qp_init_attr ia = {.send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = NSPARE, .max_send_sge = 1, .max_recv_sge = 1}};
    struct ibv_qp *q = ibv_create_qp(pd, &ia);
    if (!q) die("ibv_create_qp (spare)");
    modify_to_init(q);
    for (unsigned i = 0; i < NSPARE; ++i) {
        struct ibv_sge sge = {(uintptr_t)buf + RECV_AREA + i * 64u, 64, mr->lkey};
        struct ibv_recv_wr wr = {.wr_id = 700 + i, .sg_list = &sge, .num_sge = 1}, *bad;
        if (ibv_post_recv(q, &wr, &bad)) die("ibv_post_recv (spare)");
    }
    if (connect) {
        struct endpoint mine = {.qpn = q->qp_num, .psn = 77}, other;
        if (ibv_query_gid(ctx, 1, gid_index, &mine.gid)) die("ibv_query_gid");
        if (write(fd, &mine, sizeof mine) != sizeof mine || read(fd, &other, sizeof other) != sizeof other)
            die("out-of-band exchange (spare)");
        modify_to_rtr(q, other.qpn, other.psn, &other.gid, gid_index);
    }
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    if (ibv_modify_qp(q, &a, IBV_QP_STATE)) die("modify the spare to ERR");
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; i < NSPARE;) {
        struct ibv_wc wc;
        int n = ibv_poll_cq(c, 1, &wc);
        if (n < 0) die("ibv_poll_cq (spare)");
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (n == 0) {
            if (t.tv_sec - t0.tv_sec > 10)
                die("spare %s: receive %u not flushed within 10 s", connect ? "after RTR" : "before connecting", i);
            continue;
        }
        if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != 700 + i || wc.qp_num != q->qp_num)
            die("spare %s: receive %u: status %s, wr_id %llu, qp_num 0x%x (want IBV_WC_WR_FLUSH_ERR, %u, 0x%x)",
                connect ? "after RTR" : "before connecting", i, ibv_wc_status_str(wc.status),
                (unsigned long long)wc.wr_id, wc.qp_num, 700 + i, q->qp_num);
        ++i;
    }
    if (ibv_destroy_qp(q) || ibv_destroy_cq(c)) die("destroying the spare");
    printf("verbs_check %s: a queue pair put in the error state %s flushed its %d receives\n", role,
           connect ? "right after RTR" : "before it was connected", NSPARE);
}

/* -q: INIT, then RTR against a QP number nobody on this host holds. */
static void lonely_bring_up(int gid_index) {
    modify_to_init(qp);
    union ibv_gid gid;
    if (ibv_query_gid(ctx, 1, gid_index, &gid)) die("ibv_query_gid");
    modify_to_rtr(qp, (qp->qp_num + 0x777) & 0xffffff, 0, &gid, gid_index);
}

/* -u: a UD QP on the RC QP's CQ, ready to send, and an address of itself. */
static void ud_bring_up(int gid_index) {
    struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
    if (!(ud_qp = ibv_create_qp(pd, &ia))) die("ibv_create_qp (UD)");
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = UD_QKEY};
    if (ibv_modify_qp(ud_qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
        die("UD: modify to INIT");
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(ud_qp, &a, IBV_QP_STATE)) die("UD: modify to RTR");
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 1;
    if (ibv_modify_qp(ud_qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) die("UD: modify to RTS");
    struct ibv_ah_attr ah = {.is_global = 1, .port_num = 1,
                             .grh = {.dgid = self.gid, .sgid_index = (uint8_t)gid_index, .hop_limit = 1}};
    if (!(ud_ah = ibv_create_ah(pd, &ah))) die("ibv_create_ah");
}

/* -u: a datagram to itself, its receive posted first. */
static void ud_post(void) {
    static unsigned round;
    ud_seed = 50 + round++;
    ud_seen = 0;
    memset(buf + UD_AREA, 0, UD_GRH + UD_LEN);
    fill(buf + UD_AREA + (8u << 10), UD_LEN, ud_seed);
    struct ibv_sge r = {(uintptr_t)buf + UD_AREA, UD_GRH + UD_LEN, mr->lkey};
    struct ibv_recv_wr rwr = {.wr_id = 7002, .sg_list = &r, .num_sge = 1}, *rbad;
    if (ibv_post_recv(ud_qp, &rwr, &rbad)) die("ibv_post_recv (UD)");
    struct ibv_sge g = {(uintptr_t)buf + UD_AREA + (8u << 10), UD_LEN, mr->lkey};
    struct ibv_send_wr wr = {.wr_id = 7001, .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.ud = {.ah = ud_ah, .remote_qpn = ud_qp->qp_num, .remote_qkey = UD_QKEY}},
                       *bad;
    if (ibv_post_send(ud_qp, &wr, &bad)) die("ibv_post_send (UD)");
}

/* -u: until both of the datagram's completions came (within 10 s), the
 * RC QP's receives met on the way held for next_wc(). */
static void ud_wait(void) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (ud_seen < 2) {
        struct ibv_wc wc;
        int n = poll_one(&wc);
        if (n < 0) die("ibv_poll_cq: %d", n);
        if (n == 1 && wc.qp_num == ud_qp->qp_num) {
            ud_check(wc);
        } else if (n == 1) {
            if (!is_receive(wc.opcode) || wc.status != IBV_WC_SUCCESS)
                die("datagram: an RC completion (opcode %d, wr_id %llu) while none was due", wc.opcode,
                    (unsigned long long)wc.wr_id);
            hold(wc, "datagram");
        } else if (channel) {
            await_completion();
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) die("datagram: %d of its 2 completions within 10 s", ud_seen);
    }
}

/* -u: a busy carried QP does not starve the UD QP sharing its CQ. With
 * SHARED_BURST signaled reads of the carried QP and a datagram's two
 * completions all done (200 ms to do so), taking one completion at a time
 * gives the datagram's before the last read's: tent's completions would
 * fill every such poll, and the adapter's must still get their turns. The
 * reads' bytes are checked. */
#define SHARED_BURST 32
#define SHARED_PIECE 1024u
static void shared_cq_turns(void) {
    struct ibv_sge g[SHARED_BURST];
    struct ibv_send_wr wr[SHARED_BURST];
    memset(buf + SOURCE_AREA, 0, SHARED_BURST * SHARED_PIECE);
    for (int i = 0; i < SHARED_BURST; ++i) {
        g[i] = (struct ibv_sge){(uintptr_t)buf + SOURCE_AREA + i * SHARED_PIECE, SHARED_PIECE, mr->lkey};
        wr[i] = (struct ibv_send_wr){.wr_id = 400 + i, .sg_list = &g[i], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
                                     .send_flags = IBV_SEND_SIGNALED, .next = i + 1 < SHARED_BURST ? &wr[i + 1] : NULL,
                                     .wr.rdma = {peer.addr + SOURCE_AREA + i * SHARED_PIECE, peer.rkey}};
    }
    post_send(&wr[0]);
    ud_post();
    usleep(200000);
    int reads = 0, reads_before_datagram = -1;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (reads < SHARED_BURST || ud_seen < 2) {
        struct ibv_wc wc;
        int n = poll_one(&wc);
        if (n < 0) die("shared CQ: ibv_poll_cq: %d", n);
        if (n == 1 && wc.qp_num == ud_qp->qp_num) {
            ud_check(wc);
            if (ud_seen == 2) reads_before_datagram = reads;
        } else if (n == 1 && is_receive(wc.opcode) && wc.status == IBV_WC_SUCCESS) {
            hold(wc, "shared CQ");
        } else if (n == 1) {
            check_wc(wc, IBV_WC_RDMA_READ, 400 + (uint64_t)reads, "shared CQ: read");
            ++reads;
        } else if (channel) {
            await_completion();
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) die("shared CQ: %d of %d reads and %d of 2 datagram completions within 10 s",
                                           reads, SHARED_BURST, ud_seen);
    }
    /* The server's area holds pattern 5 from its start (main()). */
    check(buf + SOURCE_AREA, SHARED_BURST * SHARED_PIECE, 5, "shared CQ: read data");
    if (reads_before_datagram >= SHARED_BURST)
        die("shared CQ: the datagram's completions came only after all %d reads'", SHARED_BURST);
}

static void *post_datagram_later(void *arg) {
    (void)arg;
    usleep(20000);
    ud_post();
    return NULL;
}

/* -e -u: with nothing of the carried QP's in flight and the CQ empty and
 * armed, this thread sleeps in ibv_get_cq_event while another posts a
 * datagram 20 ms later: only the HCA's own event can wake it (the
 * interposer must watch the adapter's channel while it drives tent in that
 * wait; if it did not, this would sleep until the test's time limit). */
static void quiet_datagram(void) {
    struct ibv_wc wc;
    int n = poll_one(&wc);
    if (n != 0) die("quiet datagram: the CQ was not empty (%d, opcode %d)", n, n > 0 ? (int)wc.opcode : -1);
    if (!cq_armed && ibv_req_notify_cq(cq, 0)) die("ibv_req_notify_cq");
    cq_armed = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, post_datagram_later, NULL)) die("pthread_create");
    await_completion(); /* armed: sleeps */
    pthread_join(t, NULL);
    ud_wait();
}

/* -m: the thread deregistering buffers whose write completed, handed over
 * through a pipe in posting order. */
static int churn_pipe[2] = {-1, -1};
static pthread_t churn_thread;

static void *deregister_handed_over(void *arg) {
    (void)arg;
    struct ibv_mr *m;
    while (read(churn_pipe[0], &m, sizeof m) == (ssize_t)sizeof m) {
        void *addr = m->addr;
        if (ibv_dereg_mr(m)) die("-m: ibv_dereg_mr");
        free(addr);
    }
    return NULL;
}

static uint32_t churn_len(int i) { return 64u + (uint32_t)i * 29u; }
static uint32_t churn_target(int i) { return TARGET_AREA + (uint32_t)i * 2048u; }

static void churn_sends(void) {
    for (int i = 0; i < NCHURN; ++i) {
        uint8_t *b;
        if (posix_memalign((void **)&b, 64, churn_len(i))) die("memory");
        fill(b, churn_len(i), 60u + (unsigned)i);
        struct ibv_mr *m = ibv_reg_mr(pd, b, churn_len(i), IBV_ACCESS_LOCAL_WRITE);
        if (!m) die("-m: ibv_reg_mr");
        struct ibv_sge sge = {(uintptr_t)b, churn_len(i), m->lkey};
        struct ibv_send_wr wr = {.wr_id = 500 + (uint64_t)i, .sg_list = &sge, .num_sge = 1,
                                 .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
                                 .imm_data = htonl(500u + (uint32_t)i),
                                 .wr.rdma = {peer.addr + churn_target(i), peer.rkey}};
        post_send(&wr);
        expect_wc(IBV_WC_RDMA_WRITE, wr.wr_id, "-m: write from a buffer of its own");
        if (write(churn_pipe[1], &m, sizeof m) != (ssize_t)sizeof m) die("-m: pipe");
    }
}

static void churn_receives(void) {
    for (int i = 0; i < NCHURN; ++i) {
        const unsigned slot = take_slot();
        struct ibv_wc wc = expect_wc(IBV_WC_RECV_RDMA_WITH_IMM, 1000 + slot, "-m: write with immediate");
        if (wc.byte_len != churn_len(i) || ntohl(wc.imm_data) != 500u + (uint32_t)i)
            die("-m: write %d: byte_len %u, immediate %u", i, wc.byte_len, ntohl(wc.imm_data));
        check(buf + churn_target(i), churn_len(i), 60u + (unsigned)i, "-m: written data");
        post_recv(slot);
    }
}

/* -w: polls the CQ until the process exits. */
static void *poll_until_exit(void *arg) {
    (void)arg;
    for (;;) {
        struct ibv_wc wc;
        if (poll_one(&wc) < 0) die("-w: ibv_poll_cq");
    }
    return NULL;
}

static void client(void) {
    /* 1: a send gathered from two SGEs (1000 + 3000 bytes). */
    fill(buf + SEND_AREA, 4000, 1);
    struct ibv_sge two[2] = {{(uintptr_t)buf + SEND_AREA, 1000, mr->lkey},
                             {(uintptr_t)buf + SEND_AREA + 1000, 3000, mr->lkey}};
    struct ibv_send_wr wr = {.wr_id = 1, .sg_list = two, .num_sge = 2, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED};
    post_send(&wr);
    if (ud_qp) ud_post(); /* while the send is in flight */
    expect_wc(IBV_WC_SEND, 1, "send");
    if (ud_qp) ud_wait();
    /* 2: an inline send with immediate data, from a stack buffer reused at once. */
    uint8_t small[48];
    fill(small, sizeof small, 2);
    struct ibv_sge in = {(uintptr_t)small, sizeof small, 0};
    struct ibv_send_wr imm = {.wr_id = 2, .sg_list = &in, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
                              .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE, .imm_data = htonl(0x12345678)};
    post_send(&imm);
    memset(small, 0, sizeof small);
    expect_wc(IBV_WC_SEND, 2, "inline send with immediate");
    /* 3: an unsignaled 150 KB write, then a signaled send that must see it. */
    fill(buf + SOURCE_AREA, 150000, 3);
    struct ibv_sge w = {(uintptr_t)buf + SOURCE_AREA, 150000, mr->lkey};
    struct ibv_send_wr write = {.wr_id = 3, .sg_list = &w, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                .wr.rdma = {peer.addr + TARGET_AREA, peer.rkey}};
    struct ibv_sge note = {(uintptr_t)buf + SEND_AREA, 16, mr->lkey};
    struct ibv_send_wr after = {.wr_id = 4, .sg_list = &note, .num_sge = 1, .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED};
    write.next = &after;
    post_send(&write);
    expect_wc(IBV_WC_SEND, 4, "send after unsignaled write (no completion for the write)");
    /* 4: a 64 KiB write with immediate data. */
    fill(buf + SOURCE_AREA, 65536, 4);
    struct ibv_sge wi = {(uintptr_t)buf + SOURCE_AREA, 65536, mr->lkey};
    struct ibv_send_wr wimm = {.wr_id = 5, .sg_list = &wi, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                               .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0xabc),
                               .wr.rdma = {peer.addr + TARGET_AREA + (160u << 10), peer.rkey}};
    post_send(&wimm);
    /* The server replies as soon as it sees the immediate data: the reply
     * may complete before the write does (a receive and a send queue
     * complete independently). */
    int got_reply = 0;
    const unsigned reply_slot = take_slot();
    for (;;) {
        struct ibv_wc wc = next_wc();
        if (wc.status != IBV_WC_SUCCESS) die("write with immediate: status %s", ibv_wc_status_str(wc.status));
        if (wc.opcode == IBV_WC_RECV && wc.wr_id == 1000 + reply_slot && !got_reply) {
            if (wc.byte_len != 777 || wc.src_qp != peer.qpn) die("reply: byte_len %u, src_qp 0x%x", wc.byte_len, wc.src_qp);
            got_reply = 1;
            continue;
        }
        if (wc.opcode != IBV_WC_RDMA_WRITE || wc.wr_id != 5 || wc.qp_num != qp->qp_num)
            die("write with immediate: opcode %d, wr_id %llu", wc.opcode, (unsigned long long)wc.wr_id);
        break;
    }
    /* 5: a 100 KB read into two SGEs. */
    memset(buf + SOURCE_AREA, 0, 100000);
    struct ibv_sge r[2] = {{(uintptr_t)buf + SOURCE_AREA, 30000, mr->lkey},
                           {(uintptr_t)buf + SOURCE_AREA + 30000, 70000, mr->lkey}};
    struct ibv_send_wr read = {.wr_id = 6, .sg_list = r, .num_sge = 2, .opcode = IBV_WR_RDMA_READ,
                               .send_flags = IBV_SEND_SIGNALED, .wr.rdma = {peer.addr + SOURCE_AREA, peer.rkey}};
    post_send(&read);
    /* The server's reply may complete before the read: a receive and a
     * send queue complete independently. */
    for (int got = got_reply; got < 2; ++got) {
        struct ibv_wc wc = next_wc();
        if (wc.status != IBV_WC_SUCCESS) die("read or reply: status %s", ibv_wc_status_str(wc.status));
        if (wc.qp_num != qp->qp_num) die("read or reply: qp_num 0x%x", wc.qp_num);
        if (wc.opcode == IBV_WC_RDMA_READ && wc.wr_id == 6) {
            check(buf + SOURCE_AREA, 100000, 5, "read data");
        } else if (wc.opcode == IBV_WC_RECV && wc.wr_id == 1000 + reply_slot && !got_reply) {
            if (wc.byte_len != 777 || wc.src_qp != peer.qpn) die("reply: byte_len %u, src_qp 0x%x", wc.byte_len, wc.src_qp);
        } else {
            die("read or reply: opcode %d, wr_id %llu", wc.opcode, (unsigned long long)wc.wr_id);
        }
    }
    check(buf + RECV_AREA + reply_slot * RECV_SLOT, 777, 6, "reply data");
    post_recv(reply_slot);

    /* 6: fetch-and-adds of 3, all in flight at once, each result in its own
     * 8-byte SGE; the values found are 0, 3, 6, ... in posting order (an
     * adapter executes a QP's atomics in order). */
    uint64_t *results = (uint64_t *)(buf + SOURCE_AREA);
    memset(results, 0xff, NATOMIC * 8);
    struct ibv_sge asge[NATOMIC];
    struct ibv_send_wr awr[NATOMIC];
    for (int i = 0; i < NATOMIC; ++i) {
        asge[i] = (struct ibv_sge){(uintptr_t)&results[i], 8, mr->lkey};
        awr[i] = (struct ibv_send_wr){.wr_id = 200 + i, .sg_list = &asge[i], .num_sge = 1,
                                      .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
                                      .next = i + 1 < NATOMIC ? &awr[i + 1] : NULL};
        awr[i].wr.atomic.remote_addr = peer.addr + ATOMIC_WORD;
        awr[i].wr.atomic.rkey = peer.rkey;
        awr[i].wr.atomic.compare_add = 3;
    }
    post_send(&awr[0]);
    for (int i = 0; i < NATOMIC; ++i) {
        struct ibv_wc wc = expect_wc(IBV_WC_FETCH_ADD, 200 + i, "fetch-and-add");
        if (wc.byte_len != 8) die("fetch-and-add: byte_len %u, not 8", wc.byte_len);
    }
    for (int i = 0; i < NATOMIC; ++i) {
        if (results[i] != 3ull * i)
            die("fetch-and-add %d found %llu, not %llu: executed twice, lost, out of order or not written", i,
                (unsigned long long)results[i], 3ull * i);
    }
    /* 7: compare-and-swap: no match leaves the word, a match swaps it. */
    const uint64_t sum = 3ull * NATOMIC;
    struct ibv_sge cs = {(uintptr_t)&results[0], 8, mr->lkey};
    struct ibv_send_wr cas = {.wr_id = 300, .sg_list = &cs, .num_sge = 1, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
                              .send_flags = IBV_SEND_SIGNALED};
    cas.wr.atomic.remote_addr = peer.addr + ATOMIC_WORD;
    cas.wr.atomic.rkey = peer.rkey;
    cas.wr.atomic.compare_add = sum + 1;
    cas.wr.atomic.swap = 0x1234567890abcdefull;
    post_send(&cas);
    expect_wc(IBV_WC_COMP_SWAP, 300, "compare-and-swap without a match");
    if (results[0] != sum) die("compare-and-swap found %llu, not %llu", (unsigned long long)results[0],
                               (unsigned long long)sum);
    cas.wr_id = 301;
    cas.wr.atomic.compare_add = sum;
    post_send(&cas);
    struct ibv_wc wc = expect_wc(IBV_WC_COMP_SWAP, 301, "compare-and-swap with a match");
    if (wc.byte_len != 8 || results[0] != sum)
        die("compare-and-swap: byte_len %u, found %llu", wc.byte_len, (unsigned long long)results[0]);
    /* 8: the burst (see the top): send i from its own 2 KiB of the send
     * area, with pattern 20 + i, immediate data i on every third; the
     * shortest ones inline, their bytes cleared at once after posting. */
    struct ibv_sge bsge[2 * NBURST];
    struct ibv_send_wr bwr[2 * NBURST];
    for (int i = 0; i < 2 * NBURST; ++i) {
        uint8_t *data = buf + SEND_AREA + (uint32_t)i * 2048u;
        fill(data, burst_len[i], 20u + (unsigned)i);
        bsge[i] = (struct ibv_sge){(uintptr_t)data, burst_len[i], mr->lkey};
        bwr[i] = (struct ibv_send_wr){.wr_id = 400 + (uint64_t)i, .sg_list = &bsge[i], .num_sge = 1,
                                      .opcode = i % 3 == 0 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
                                      .imm_data = htonl((uint32_t)i)};
        if (burst_len[i] <= 16) bwr[i].send_flags |= IBV_SEND_INLINE;
    }
    for (int i = 0; i + 1 < NBURST; ++i) bwr[i].next = &bwr[i + 1];
    bwr[3].send_flags |= IBV_SEND_SIGNALED;
    bwr[NBURST - 1].send_flags |= IBV_SEND_SIGNALED;
    post_send(&bwr[0]);
    for (int i = NBURST; i < 2 * NBURST; ++i) {
        bwr[i].send_flags |= IBV_SEND_SIGNALED;
        post_send(&bwr[i]);
    }
    for (int i = 0; i < 2 * NBURST; ++i)
        if (bwr[i].send_flags & IBV_SEND_INLINE) memset(buf + SEND_AREA + (uint32_t)i * 2048u, 0, burst_len[i]);
    expect_wc(IBV_WC_SEND, 403, "burst: the first signaled send of the list");
    expect_wc(IBV_WC_SEND, 400 + NBURST - 1, "burst: the last send of the list");
    for (int i = NBURST; i < 2 * NBURST; ++i) expect_wc(IBV_WC_SEND, 400 + (uint64_t)i, "burst: a send posted alone");
}

/* -s, first round: the SRQ's limit, armed at the number of receives
 * posted, fires once the first message takes one (IBV_EVENT_SRQ_LIMIT_REACHED
 * of the SRQ within 10 s) and is disarmed by it (ibv_query_srq reads 0). */
static void arm_srq_limit(void) {
    struct ibv_srq_attr a = {.srq_limit = NRECV};
    if (ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT)) die("ibv_modify_srq(IBV_SRQ_LIMIT)");
    memset(&a, 0, sizeof a);
    if (ibv_query_srq(srq, &a) || a.srq_limit != NRECV) die("ibv_query_srq: limit %u, not %u", a.srq_limit, NRECV);
}

static void expect_srq_limit_event(void) {
    struct pollfd p = {ctx->async_fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) die("SRQ limit: no asynchronous event within 10 s");
    struct ibv_async_event ev;
    if (ibv_get_async_event(ctx, &ev)) die("ibv_get_async_event");
    if (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED || ev.element.srq != srq)
        die("SRQ limit: event %s, not IBV_EVENT_SRQ_LIMIT_REACHED of the SRQ", ibv_event_type_str(ev.event_type));
    ibv_ack_async_event(&ev);
    struct ibv_srq_attr a;
    if (ibv_query_srq(srq, &a) || a.srq_limit != 0) die("SRQ limit: still armed (%u) after its event", a.srq_limit);
}

static void server(void) {
    static int round;
    const int srq_limit_check = srq && round++ == 0;
    if (srq_limit_check) arm_srq_limit();
    /* Received into two SGEs: 1 KiB, then the rest of the slot. */
    struct ibv_wc wc = expect_recv(take_slot(), 4000, 1, "send data");
    if (srq_limit_check) expect_srq_limit_event();
    if (wc.wc_flags & IBV_WC_WITH_IMM) die("send: IBV_WC_WITH_IMM set");
    wc = expect_recv(take_slot(), 48, 2, "inline send with immediate");
    if (!(wc.wc_flags & IBV_WC_WITH_IMM) || ntohl(wc.imm_data) != 0x12345678)
        die("inline send: immediate 0x%x, flags 0x%x", ntohl(wc.imm_data), wc.wc_flags);
    expect_recv(take_slot(), 16, 0, "send after write");
    check(buf + TARGET_AREA, 150000, 3, "written data seen by the following send");
    unsigned slot = take_slot();
    wc = expect_wc(IBV_WC_RECV_RDMA_WITH_IMM, 1000 + slot, "write with immediate");
    post_recv(slot);
    if (wc.byte_len != 65536 || !(wc.wc_flags & IBV_WC_WITH_IMM) || ntohl(wc.imm_data) != 0xabc)
        die("write with immediate: byte_len %u, immediate 0x%x, flags 0x%x", wc.byte_len, ntohl(wc.imm_data),
            wc.wc_flags);
    check(buf + TARGET_AREA + (160u << 10), 65536, 4, "written data with immediate");
    /* The client's read happens meanwhile; then the reply. */
    fill(buf + SEND_AREA, 777, 6);
    struct ibv_sge s = {(uintptr_t)buf + SEND_AREA, 777, mr->lkey};
    struct ibv_send_wr reply = {.wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED};
    post_send(&reply);
    expect_wc(IBV_WC_SEND, 7, "reply");
    /* 8: the burst, each send once, in order, whole. */
    for (int i = 0; i < 2 * NBURST; ++i) {
        char what[32];
        snprintf(what, sizeof what, "burst send %d", i);
        wc = expect_recv(take_slot(), burst_len[i], 20u + (unsigned)i, what);
        const int imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
        if (imm != (i % 3 == 0) || (imm && ntohl(wc.imm_data) != (uint32_t)i))
            die("%s: immediate 0x%x, flags 0x%x", what, ntohl(wc.imm_data), wc.wc_flags);
    }
}

/* What a QP whose peer is lost gives (WC: the first completion that was
 * not a success; SENT: the work requests that were): see -k at the top. */
static void expect_lost_peer(struct ibv_wc wc, int sent, const char *what) {
    if (wc.status != IBV_WC_RETRY_EXC_ERR) die("%s: status %s, not retry exceeded", what, ibv_wc_status_str(wc.status));
    struct ibv_sge w = {(uintptr_t)buf + SOURCE_AREA, 16, mr->lkey};
    struct ibv_send_wr again = {.wr_id = 99, .sg_list = &w, .num_sge = 1, .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad;
    if (ibv_post_send(qp, &again, &bad) == 0) {
        wc = next_wc();
        while (wc.wr_id != 99) wc = next_wc();
        if (wc.status != IBV_WC_WR_FLUSH_ERR) die("after the error: status %s, not flushed", ibv_wc_status_str(wc.status));
    }
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) || attr.qp_state != IBV_QPS_ERR)
        die("%s: QP state %d, not IBV_QPS_ERR", what, attr.qp_state);
    struct pollfd p = {ctx->async_fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) die("%s: no asynchronous event within 10 s", what);
    struct ibv_async_event ev;
    if (ibv_get_async_event(ctx, &ev)) die("ibv_get_async_event");
    if (ev.event_type != IBV_EVENT_QP_FATAL || ev.element.qp != qp)
        die("%s: event %s, not IBV_EVENT_QP_FATAL of the QP", what, ibv_event_type_str(ev.event_type));
    ibv_ack_async_event(&ev);
    printf("verbs_check client: %s after %d work requests: retry exceeded, flushed, error state, QP fatal\n", what,
           sent);
}

/* -k: the peer is gone; see the top of the file. */
static void peer_gone(void) {
    struct ibv_sge first = {(uintptr_t)buf + SEND_AREA, 16, mr->lkey};
    struct ibv_send_wr hello = {.wr_id = 98, .sg_list = &first, .num_sge = 1, .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED};
    post_send(&hello);
    expect_wc(IBV_WC_SEND, 98, "first message");
    fill(buf + SOURCE_AREA, 4096, 7);
    struct ibv_sge w = {(uintptr_t)buf + SOURCE_AREA, 4096, mr->lkey};
    struct ibv_wc wc;
    int i;
    for (i = 0; i < 100000; ++i) {
        struct ibv_send_wr write = {.wr_id = 100 + i, .sg_list = &w, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                    .send_flags = IBV_SEND_SIGNALED, .wr.rdma = {peer.addr + TARGET_AREA, peer.rkey}};
        post_send(&write);
        wc = next_wc();
        if (wc.status != IBV_WC_SUCCESS) break;
    }
    expect_lost_peer(wc, i + 1, "peer gone");
}

static void check_async_events(void);

/* -G, the server's side: the QP put in the error state (ERR) or destroyed
 * once the first message is in; see the top of the file. */
static void leave_qp(int fd, int err) {
    expect_recv(take_slot(), 16, 0, "first message");
    if (err) {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
        if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) die("modify to ERR");
        if (srq) {
            /* The shared queue's receives stay, for its other QPs; the
             * QP says it will take no more (IBV_EVENT_QP_LAST_WQE_REACHED). */
            struct pollfd p = {ctx->async_fd, POLLIN, 0};
            if (poll(&p, 1, 10000) != 1) die("ERR on an SRQ: no asynchronous event within 10 s");
            struct ibv_async_event ev;
            if (ibv_get_async_event(ctx, &ev)) die("ibv_get_async_event");
            if (ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED || ev.element.qp != qp)
                die("ERR on an SRQ: event %s, not IBV_EVENT_QP_LAST_WQE_REACHED of the QP",
                    ibv_event_type_str(ev.event_type));
            ibv_ack_async_event(&ev);
            struct ibv_wc wc;
            usleep(100000);
            if (poll_one(&wc) != 0) die("ERR on an SRQ: a completion (status %s) for the shared queue's receive",
                                                  ibv_wc_status_str(wc.status));
            printf("verbs_check server: qp on a shared receive queue in the error state, its last WQE reached\n");
        }
        /* Posted in slot order from the one after the slot just taken. */
        for (unsigned i = 0; !srq && i < NRECV; ++i) {
            const uint64_t want = 1000 + (next_slot + i) % NRECV;
            struct ibv_wc wc = next_wc();
            if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != want || wc.qp_num != qp->qp_num)
                die("receive %u after ERR: status %s, wr_id %llu (want %llu), qp_num 0x%x", i,
                    ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id, (unsigned long long)want, wc.qp_num);
        }
        struct ibv_sge w = {(uintptr_t)buf + SEND_AREA, 16, mr->lkey};
        struct ibv_send_wr late = {.wr_id = 97, .sg_list = &w, .num_sge = 1, .opcode = IBV_WR_SEND,
                                   .send_flags = IBV_SEND_SIGNALED}, *bad;
        if (ibv_post_send(qp, &late, &bad) == 0) {
            struct ibv_wc wc = next_wc();
            if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != 97)
                die("send after ERR: status %s, wr_id %llu", ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
        }
        if (!srq) printf("verbs_check server: qp in the error state, %d receives and a later send flushed\n", NRECV);
    } else {
        if (ibv_destroy_qp(qp)) die("ibv_destroy_qp");
        qp = NULL;
        printf("verbs_check server: qp destroyed\n");
    }
    fflush(stdout);
    sync_oob(fd); /* the client may send */
    sync_oob(fd); /* it has checked */
    if (err) check_async_events();
}

/* -O ROUNDS: data, then a flag; see the top of the file. */
#define ORDER_DATA (120u << 10)
#define ORDER_FLAG (TARGET_AREA + (128u << 10))
static void ordered_writes(int rounds, int client, int fence) {
    for (int r = 1; r <= rounds; ++r) {
        if (client) {
            fill(buf + SOURCE_AREA, ORDER_DATA, 100u + (unsigned)r);
            uint64_t flag = (uint64_t)r;
            memcpy(buf + SEND_AREA, &flag, sizeof flag);
            struct ibv_sge d = {(uintptr_t)buf + SOURCE_AREA, ORDER_DATA, mr->lkey};
            struct ibv_sge f = {(uintptr_t)buf + SEND_AREA, 8, mr->lkey};
            struct ibv_send_wr fw = {.wr_id = 61, .sg_list = &f, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                     .send_flags = IBV_SEND_SIGNALED | (fence ? IBV_SEND_FENCE : 0),
                                     .wr.rdma = {peer.addr + ORDER_FLAG, peer.rkey}};
            struct ibv_send_wr dw = {.wr_id = 60, .next = &fw, .sg_list = &d, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                     .wr.rdma = {peer.addr + TARGET_AREA, peer.rkey}};
            post_send(&dw);
            expect_wc(IBV_WC_RDMA_WRITE, 61, "flag write");
            expect_recv(take_slot(), 16, 0, "the server's go-ahead");
        } else {
            volatile uint64_t *flag = (volatile uint64_t *)(buf + ORDER_FLAG);
            struct timespec t0, t;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            while (*flag != (uint64_t)r) {
                clock_gettime(CLOCK_MONOTONIC, &t);
                if (t.tv_sec - t0.tv_sec > 10) die("round %d: no flag within 10 s", r);
            }
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            char what[80];
            snprintf(what, sizeof what, "round %d: the data written before the flag", r);
            check(buf + TARGET_AREA, ORDER_DATA, 100u + (unsigned)r, what);
            struct ibv_sge g = {(uintptr_t)buf + SEND_AREA, 16, mr->lkey};
            struct ibv_send_wr go = {.wr_id = 62, .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
                                     .send_flags = IBV_SEND_SIGNALED};
            post_send(&go);
            expect_wc(IBV_WC_SEND, 62, "go-ahead");
        }
    }
    printf("verbs_check %s: %d rounds of data then %sflag, in order\n", role, rounds, fence ? "fenced " : "");
}

/* -G, the client's side: sends until one fails (under 10 s in all). */
static void lose_peer_qp(int fd, const char *how) {
    struct ibv_sge first = {(uintptr_t)buf + SEND_AREA, 16, mr->lkey};
    struct ibv_send_wr hello = {.wr_id = 98, .sg_list = &first, .num_sge = 1, .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED};
    post_send(&hello);
    expect_wc(IBV_WC_SEND, 98, "first message");
    sync_oob(fd);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct ibv_wc wc;
    int i;
    for (i = 0;; ++i) {
        struct ibv_send_wr send = {.wr_id = 100 + i, .sg_list = &first, .num_sge = 1, .opcode = IBV_WR_SEND,
                                   .send_flags = IBV_SEND_SIGNALED};
        post_send(&send);
        wc = next_wc();
        if (wc.status != IBV_WC_SUCCESS) break;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) die("the peer's qp %s: %d sends completed in 10 s", how, i + 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    char what[96];
    snprintf(what, sizeof what, "the peer's qp %s (found in %.1f ms)", how,
             (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6);
    expect_lost_peer(wc, i + 1, what);
    sync_oob(fd);
}

/* After the rounds: the events on the context's asynchronous queue. The
 * QP worked throughout, so no error event may name it (under tent, a fault
 * of the adapter it was opened on is tent's to carry); events of ports and
 * devices (a pulled port, a device's fatal error) are the adapter's own and
 * are only counted. */
static void check_async_events(void) {
    int device_events = 0;
    /* Non-blocking, as a program reading its events from a poll loop sets
     * it: a readable fd may hold an event tent does not pass on. */
    int flags = fcntl(ctx->async_fd, F_GETFL);
    if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK)) die("fcntl(async_fd, O_NONBLOCK)");
    for (;;) {
        struct ibv_async_event ev;
        if (ibv_get_async_event(ctx, &ev)) {
            if (errno == EAGAIN) break;
            die("ibv_get_async_event");
        }
        enum ibv_event_type type = ev.event_type;
        int names_qp = (type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
                        type == IBV_EVENT_QP_ACCESS_ERR || type == IBV_EVENT_PATH_MIG_ERR) && ev.element.qp == qp;
        ibv_ack_async_event(&ev);
        if (names_qp) die("asynchronous event %s for the QP, which worked", ibv_event_type_str(type));
        ++device_events;
    }
    if (device_events) printf("verbs_check %s: %d port or device events, none for the QP\n", role, device_events);
}

/* -a: the handler allocates more than glibc's per-thread cache serves, so
 * it takes the allocator's lock. */
static volatile sig_atomic_t alarms_taken;
static void alarm_allocates(int sig) {
    (void)sig;
    const int saved_errno = errno; /* as a handler should: the code it interrupted may be reading errno */
    char *p = malloc(4096);
    if (p) {
        p[0] = 1;
        free(p);
    }
    ++alarms_taken;
    errno = saved_errno;
}

static void interval_alarms(int on) {
    if (on) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = alarm_allocates;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL)) die("sigaction");
        /* The interposer's own thread looks for the program's handlers
         * every 20 ms (tent-run(1), BUGS): one installed just now is
         * wrapped soon, with no verbs call of the program's in between.
         * Looked at every 10 ms for up to 2 s: on a loaded two-core
         * machine that thread may wait longer than one look for a CPU
         * (a fixed 50 ms failed once in a parallel make check). */
        struct sigaction now;
        int waited_ms = 0;
        for (;;) {
            if (sigaction(SIGALRM, NULL, &now)) die("sigaction");
            if (now.sa_handler != alarm_allocates || waited_ms >= 2000) break;
            usleep(10000);
            waited_ms += 10;
        }
        printf("verbs_check %s: alarm handler %s before the next verb (looked for %d ms)\n", role,
               now.sa_handler == alarm_allocates ? "not wrapped" : "wrapped", waited_ms);
    }
    struct itimerval t = {{0, on ? 100 : 0}, {0, on ? 100 : 0}};
    if (setitimer(ITIMER_REAL, &t, NULL)) die("setitimer");
}

/* Destroys the QP, SRQ, CQ and channel, deregisters the MR, deallocates
 * the PD and closes the device, in that order; the first verb that failed,
 * or NULL. */
static const char *tear_down(void) {
    if (qp && ibv_destroy_qp(qp)) return "ibv_destroy_qp";
    if (srq && ibv_destroy_srq(srq)) return "ibv_destroy_srq";
    if (cq && ibv_destroy_cq(cq)) return "ibv_destroy_cq";
    if (channel && ibv_destroy_comp_channel(channel)) return "ibv_destroy_comp_channel";
    if (mr && ibv_dereg_mr(mr)) return "ibv_dereg_mr";
    if (pd && ibv_dealloc_pd(pd)) return "ibv_dealloc_pd";
    if (ibv_close_device(ctx)) return "ibv_close_device";
    return NULL;
}

/* -T: everything the program made, torn down after exit began (by the
 * process that made it: not by the client's forked child, whose exit()
 * runs the handler too). */
static pid_t teardown_pid;
static void tear_down_at_exit(void) {
    if (!ctx || getpid() != teardown_pid) return;
    const char *failed = tear_down();
    if (failed) {
        fprintf(stderr, "verbs_check %s: %s failed after exit began\n", role, failed);
        fflush(stdout);
        _exit(1);
    }
    printf("verbs_check %s: verbs torn down after exit began\n", role);
}

/* -F: a queue pair in this process (under tent-run, tent's engine starts
 * with it), then fork(); the parent waits for the child, which returns to
 * run the client, and exits as it did. */
static void run_in_forked_child(void) {
    struct ibv_device **list = ibv_get_device_list(NULL);
    if (!list || !list[0]) die("no device");
    struct ibv_context *c = ibv_open_device(list[0]);
    if (!c) die("ibv_open_device");
    struct ibv_pd *p = ibv_alloc_pd(c);
    struct ibv_cq *q = p ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
    if (!q) die("-F: pd or cq");
    struct ibv_qp_init_attr ia = {.send_cq = q, .recv_cq = q, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
    struct ibv_qp *x = ibv_create_qp(p, &ia);
    if (!x) die("-F: ibv_create_qp");
    usleep(300000); /* the engine's start is well under way, or done */
    if (ibv_destroy_qp(x) || ibv_destroy_cq(q) || ibv_dealloc_pd(p) || ibv_close_device(c)) die("-F: teardown");
    ibv_free_device_list(list);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) return;
    int status = 0;
    if (waitpid(child, &status, 0) != child) die("waitpid");
    exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* -P: numbered sends until one fails; see the top of the file. */
#define PREFIX_WINDOW 12 /* fewer than the NRECV receives the server keeps posted */
#define PREFIX_LEN 2048u
#define PREFIX_MAX 400000u
#define PREFIX_WR_ID 1000000u /* send n has wr_id PREFIX_WR_ID + n: apart from the receives' */
static void prefix_client(int fd) {
    uint32_t posted = 0, done = 0, ok = 0;
    int failed = 0;
    while (done < posted || (!failed && posted < PREFIX_MAX)) {
        while (!failed && posted < PREFIX_MAX && posted - done < PREFIX_WINDOW) {
            const uint32_t n = ++posted;
            uint8_t *src = buf + SOURCE_AREA + (n % PREFIX_WINDOW) * PREFIX_LEN;
            fill(src, PREFIX_LEN, n);
            memcpy(src, &n, sizeof n);
            struct ibv_sge sge = {(uintptr_t)src, PREFIX_LEN, mr->lkey};
            struct ibv_send_wr wr = {.wr_id = PREFIX_WR_ID + n, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                                     .send_flags = IBV_SEND_SIGNALED};
            post_send(&wr);
        }
        struct ibv_wc wc = poll_wc();
        if (wc.wr_id >= 1000 && wc.wr_id < 1000 + NRECV && wc.status == IBV_WC_WR_FLUSH_ERR)
            continue; /* the QP failed: its receives are flushed too */
        if (wc.wr_id != PREFIX_WR_ID + done + 1)
            die("-P: completion with wr_id %llu where send %u was due", (unsigned long long)wc.wr_id, done + 1);
        ++done;
        if (wc.status == IBV_WC_SUCCESS) {
            if (failed) die("-P: send %u succeeded after one failed", done);
            ++ok;
        } else if (!failed) {
            if (wc.status != IBV_WC_RETRY_EXC_ERR)
                die("-P: send %u failed with %s, not retry exceeded", done, ibv_wc_status_str(wc.status));
            failed = 1;
        } else if (wc.status != IBV_WC_WR_FLUSH_ERR) {
            die("-P: send %u after the failed one: %s, not flushed", done, ibv_wc_status_str(wc.status));
        }
    }
    if (!failed) die("-P: none of %u sends failed", posted);
    const uint32_t counts[2] = {ok, posted};
    if (write(fd, counts, sizeof counts) != sizeof counts) die("-P: out-of-band counts");
    printf("verbs_check client: %u sends succeeded, send %u failed (retry exceeded), %u flushed\n", ok, ok + 1,
           posted - ok - 1);
}

static void prefix_server(int fd) {
    uint32_t got = 0, told[2] = {0, 0}; /* the client's successful and posted sends */
    int have_told = 0;
    struct timespec since, t;
    clock_gettime(CLOCK_MONOTONIC, &since);
    for (;;) {
        struct ibv_wc wc;
        int n = poll_one(&wc);
        if (n < 0) die("ibv_poll_cq: %d", n);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (n == 1) {
            const unsigned slot = take_slot();
            if (wc.status != IBV_WC_SUCCESS) die("-P: receive %u: status %s", got + 1, ibv_wc_status_str(wc.status));
            if (wc.wr_id != 1000 + slot || wc.byte_len != PREFIX_LEN)
                die("-P: receive %u: wr_id %llu, byte_len %u", got + 1, (unsigned long long)wc.wr_id, wc.byte_len);
            const uint8_t *p = buf + RECV_AREA + slot * RECV_SLOT;
            uint32_t num;
            memcpy(&num, p, sizeof num);
            if (num != got + 1) die("-P: message %u arrived where %u was due (a message past a missing one)", num, got + 1);
            for (size_t i = sizeof num; i < PREFIX_LEN; ++i)
                if (p[i] != pattern(num, i)) die("-P: message %u: byte %zu differs", num, i);
            ++got;
            post_recv(slot);
            since = t;
            continue;
        }
        if (!have_told) {
            struct pollfd pf = {fd, POLLIN, 0};
            if (poll(&pf, 1, 0) == 1) {
                if (read(fd, told, sizeof told) != sizeof told) die("-P: out-of-band counts");
                have_told = 1;
                since = t;
            } else if (t.tv_sec - since.tv_sec > 20) {
                die("-P: nothing for 20 s after message %u", got);
            }
        } else if ((t.tv_sec - since.tv_sec) * 1000000000L + (t.tv_nsec - since.tv_nsec) > 1000000000L) {
            break; /* a second without messages after the client's count: whatever was coming came */
        }
    }
    if (got < told[0] || got > told[1])
        die("-P: %u messages received, the client had %u of %u succeed", got, told[0], told[1]);
    printf("verbs_check server: messages 1 to %u, in order and each whole; %u of %u sends succeeded at the client\n",
           got, told[0], told[1]);
}

int main(int argc, char **argv) {
    const char *port = "18515", *dev_name = NULL, *host = NULL;
    int gid_index = 0, opt, kill_mode = 0, use_srq = 0, rounds = 1, use_ex = 0, use_cqx = 0, alarms = 0, use_ud = 0, events = 0, churn = 0,
        exit_polling = 0, lonely_exit_us = -1, teardown_ms = -1, fork_first = 0,
        teardown_at_exit = 0, spare_err = 0, reconnect = 0;
    const char *leave = NULL;
    int order_rounds = 0, order_fence = 0, prefix = 0;
    while ((opt = getopt(argc, argv, "p:d:g:aeEfFG:kmO:Pq:Rst:TuwxXn:")) != -1) {
        if (opt == 'k') kill_mode = 1;
        else if (opt == 'P') prefix = 1;
        else if (opt == 'E') spare_err = 1;
        else if (opt == 'R') reconnect = 1;
        else if (opt == 'f') order_fence = 1;
        else if (opt == 'O') order_rounds = atoi(optarg);
        else if (opt == 'G') leave = optarg;
        else if (opt == 'F') fork_first = 1;
        else if (opt == 'q') lonely_exit_us = atoi(optarg);
        else if (opt == 't') teardown_ms = atoi(optarg);
        else if (opt == 'w') exit_polling = 1;
        else if (opt == 'T') teardown_at_exit = 1;
        else if (opt == 'm') churn = 1;
        else if (opt == 'e') events = 1;
        else if (opt == 'u') use_ud = 1;
        else if (opt == 'a') alarms = 1;
        else if (opt == 'x') use_ex = 1;
        else if (opt == 'X') use_cqx = 1;
        else if (opt == 'n') rounds = atoi(optarg);
        else if (opt == 's') use_srq = 1;
        else if (opt == 'p') port = optarg;
        else if (opt == 'd') dev_name = optarg;
        else if (opt == 'g') gid_index = atoi(optarg);
        else {
            fprintf(stderr, "usage: verbs_check [-a] [-e] [-E] [-F] [-G err|destroy] [-k] [-m] [-O ROUNDS [-f]] [-P] [-R] [-s] [-T] [-u] [-w] [-x] [-X] [-n ROUNDS] [-q USEC [-t MS]] [-p PORT] [-d DEV] [-g GID_INDEX] [HOST]\n");
            return 2;
        }
    }
    if (leave && strcmp(leave, "err") && strcmp(leave, "destroy")) die("-G: err or destroy, not %s", leave);
    if (reconnect && use_srq) die("-R: not with -s (the shared queue's receives outlive a reset)");
    if (use_cqx && exit_polling) die("-X: not with -w (its completions are handed out by one thread)");
    if (optind < argc) {
        host = argv[optind];
        role = "client";
    }
    if (fork_first && host) run_in_forked_child();
    teardown_pid = getpid();
    if (teardown_at_exit && atexit(tear_down_at_exit)) die("atexit");
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || n == 0) die("no device");
    struct ibv_device *dev = list[0];
    for (int i = 0; dev_name && i < n; ++i)
        if (!strcmp(ibv_get_device_name(list[i]), dev_name)) dev = list[i];
    if (!(ctx = ibv_open_device(dev))) die("ibv_open_device");
    if (!(pd = ibv_alloc_pd(ctx))) die("ibv_alloc_pd");
    if (posix_memalign((void **)&buf, 4096, BUF_SIZE)) die("memory");
    memset(buf, 0, BUF_SIZE);
    if (!(mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                                 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
        die("ibv_reg_mr");
    if (events && !(channel = ibv_create_comp_channel(ctx))) die("ibv_create_comp_channel");
    if (use_cqx) {
        struct ibv_cq_init_attr_ex ca = {.cqe = 256, .channel = channel, .wc_flags = IBV_WC_STANDARD_FLAGS};
        if (!(cqx = ibv_create_cq_ex(ctx, &ca))) die("ibv_create_cq_ex");
        cq = ibv_cq_ex_to_cq(cqx);
    } else if (!(cq = ibv_create_cq(ctx, 256, NULL, channel, 0))) {
        die("ibv_create_cq");
    }
    struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4,
                                          .max_recv_sge = 4, .max_inline_data = 64}};
    if (use_srq) {
        struct ibv_srq_init_attr sa = {.attr = {.max_wr = 64, .max_sge = 4}};
        if (!(srq = ibv_create_srq(pd, &sa))) die("ibv_create_srq");
        ia.srq = srq;
    }
    if (use_ex) {
        struct ibv_qp_init_attr_ex ix = {
            .send_cq = cq, .recv_cq = cq, .srq = ia.srq, .cap = ia.cap, .qp_type = IBV_QPT_RC,
            .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
            .send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
                              IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
                              IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD};
        if (!(qp = ibv_create_qp_ex(ctx, &ix))) die("ibv_create_qp_ex");
        if (!(qpx = ibv_qp_to_qp_ex(qp))) die("ibv_qp_to_qp_ex");
    } else if (!(qp = ibv_create_qp(pd, &ia))) {
        die("ibv_create_qp");
    }
    if (lonely_exit_us >= 0) {
        lonely_bring_up(gid_index);
        usleep((useconds_t)lonely_exit_us);
        if (teardown_ms >= 0) {
            const char *failed = tear_down();
            if (failed) die("%s", failed);
            usleep((useconds_t)teardown_ms * 1000);
        }
        printf("verbs_check: leaving %d us after RTR, the peer never answered\n", lonely_exit_us);
        return 0;
    }
    int fd = connect_oob(host, port);
    if (spare_err) {
        spare_errored(fd, gid_index, 0);
        spare_errored(fd, gid_index, 1);
    }
    bring_up(fd, gid_index);
    if (use_ud && host) ud_bring_up(gid_index);
    /* What the client's reads find, in place before it may start: it
     * reads without waiting for the server, which with -a first sleeps
     * 50 ms (filled in server(), a late server was read as zeros). */
    if (!host) fill(buf + SOURCE_AREA, 100000, 5);
    sync_oob(fd);
    if (kill_mode && !host) {
        /* One message first: the QP is up (over tent or not) on both sides.
         * Then leave the client a moment to start writing, and go, with no
         * goodbye. */
        expect_recv(0, 16, 0, "first message");
        usleep(300000);
        printf("verbs_check server: leaving\n");
        fflush(stdout);
        _exit(0);
    }
    if (prefix) {
        if (host) prefix_client(fd);
        else prefix_server(fd);
        printf("verbs_check %s: ok\n", role);
        return 0;
    }
    if (order_rounds > 0) {
        ordered_writes(order_rounds, host != NULL, order_fence);
        sync_oob(fd);
        printf("verbs_check %s: ok\n", role);
        return 0;
    }
    if (leave) {
        if (host) lose_peer_qp(fd, strcmp(leave, "err") ? "destroyed" : "in the error state");
        else leave_qp(fd, !strcmp(leave, "err"));
        close(fd);
        if (qp) ibv_destroy_qp(qp);
        ibv_destroy_cq(cq);
        ibv_dereg_mr(mr);
        ibv_dealloc_pd(pd);
        ibv_close_device(ctx);
        ibv_free_device_list(list);
        printf("verbs_check %s: ok\n", role);
        return 0;
    }
    if (kill_mode) {
        peer_gone();
        close(fd);
        ibv_destroy_qp(qp);
        ibv_destroy_cq(cq);
        ibv_dereg_mr(mr);
        ibv_dealloc_pd(pd);
        ibv_close_device(ctx);
        ibv_free_device_list(list);
        return 0;
    }
    if (alarms) interval_alarms(1);
    if (churn && host) {
        if (pipe(churn_pipe) || pthread_create(&churn_thread, NULL, deregister_handed_over, NULL)) die("-m: thread");
    }
    for (int r = 0; r < rounds; ++r) {
        if (host) client();
        else server();
        if (churn && host) churn_sends();
        else if (churn) churn_receives();
        if (ud_qp) shared_cq_turns();
        if (ud_qp && channel)
            for (int i = 0; i < QUIET_DATAGRAMS; ++i) quiet_datagram();
        sync_oob(fd);
        if (!host) {
            /* The client's atomics of this round are done: what they left. */
            uint64_t word;
            memcpy(&word, buf + ATOMIC_WORD, sizeof word);
            if (word != 0x1234567890abcdefull) die("round %d: atomics left 0x%llx in the word", r, (unsigned long long)word);
            memset(buf + ATOMIC_WORD, 0, sizeof word);
        }
        sync_oob(fd); /* the word is reset before the next round's atomics */
        if (reconnect && r + 1 < rounds) {
            /* Reset (the QP's receives go, without completions) and
             * connected again, to the same peer's QP, itself reset. */
            struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
            if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) die("modify to RESET");
            next_slot = 0;
            bring_up(fd, gid_index);
            sync_oob(fd);
        }
    }
    if (reconnect) printf("verbs_check %s: one queue pair reset and connected again, %d connections\n", role, rounds);
    check_async_events();
    if (alarms) {
        interval_alarms(0);
        if (alarms_taken == 0) die("-a: no alarm came");
        printf("verbs_check %s: %d alarms taken\n", role, (int)alarms_taken);
    }
    if (host) {
        /* fork() in a program using verbs, the child not touching them
         * (its exit() flushes stdio: nothing of ours may be left to print twice). */
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) die("fork");
        if (child == 0) exit(0);
        alarm(10);
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            die("the forked child did not exit cleanly (status 0x%x)", status);
        alarm(0);
    }
    close(fd);
    if (exit_polling) {
        pthread_t t;
        if (pthread_create(&t, NULL, poll_until_exit, NULL)) die("-w: thread");
        usleep(20000); /* inside ibv_poll_cq, again and again */
        printf("verbs_check %s: ok (exiting while another thread polls)\n", role);
        fflush(stdout);
        return 0;
    }
    if (churn_pipe[1] >= 0) {
        close(churn_pipe[1]);
        pthread_join(churn_thread, NULL);
        printf("verbs_check %s: %d writes from buffers registered for them, deregistered by another thread\n", role,
               NCHURN * rounds);
    }
    if (ud_qp) {
        printf("verbs_check %s: a datagram on the shared CQ in each of %d rounds\n", role, rounds);
        ibv_destroy_ah(ud_ah);
        ibv_destroy_qp(ud_qp);
    }
    if (!teardown_at_exit) {
        ibv_destroy_qp(qp);
        if (srq) ibv_destroy_srq(srq);
        ibv_destroy_cq(cq);
        ibv_dereg_mr(mr);
        ibv_dealloc_pd(pd);
        ibv_close_device(ctx);
        ibv_free_device_list(list);
    }
    if (channel) printf("verbs_check %s: %u completion events\n", role, events_taken);
    if (channel && ud_qp)
        printf("verbs_check %s: %d quiet datagrams a round, each slept for in ibv_get_cq_event\n", role,
               QUIET_DATAGRAMS);
    printf("verbs_check %s: ok\n", role);
    return 0;
}
