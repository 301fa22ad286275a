/* tent: multi-rail RDMA with failover -- the public C API.
 *
 * An engine moves data between processes over every rail it can reach (RDMA
 * HCA ports, TCP addresses) and reports each request's outcome once, through
 * tent_poll(). Typical use:
 *
 *   tent_engine_t *e;
 *   tent_engine_create(NULL, &e);                 // tent.conf, TENT_* environment
 *   const void *addr; size_t addr_len;
 *   tent_engine_address(e, &addr, &addr_len);     // give these bytes to the peer
 *   tent_peer_t *p;
 *   tent_connect(e, peer_addr, peer_addr_len, &p);
 *   tent_mem_t *m;
 *   tent_mem_register(e, buf, len, TENT_ACCESS_ALL, &m);
 *   tent_post_write(p, buf, len, remote_key, remote_key_len, remote_addr,
 *                   TENT_PRIORITY_MEDIUM, TENT_TRANSPORT_ANY, cookie);
 *   tent_completion_t c[16];
 *   tent_wait(e, 10);                             // sleep until one is ready (10 ms at most)
 *   int n = tent_poll(e, c, 16);
 *
 * Every function returns TENT_OK or a negative tent_status_t and never
 * throws, exits or prints; tent_strerror() names a status. All functions are
 * thread-safe. The engine runs its own progress thread: incoming data, the
 * passive side of connections and message reassembly need no call from the
 * application. While the application calls tent_poll() and tent_wait(),
 * those calls drive the engine on the calling thread instead and the
 * progress thread sleeps (caller_progress in tent.conf(5)). Only
 * tent_connect() blocks on the network (at most connect_timeout_ms, see
 * tent.conf(5)).
 */
#ifndef TENT_TENT_H
#define TENT_TENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TENT_API __attribute__((visibility("default")))
#else
#define TENT_API
#endif

/* In C++ the enums below have int as their fixed underlying type: C lets a
 * caller pass any int where one is expected, and tent checks the value;
 * without a fixed type, C++ would make merely reading an out-of-range
 * value undefined. The ABI is the same (an int). */
#ifdef __cplusplus
#define TENT_ENUM_INT : int
#else
#define TENT_ENUM_INT
#endif

/* Status codes: 0 on success, negative on failure. Grouped by what the
 * caller should do: fix the call; retry later; give up on the rail; give up
 * on the peer. */
typedef enum tent_status TENT_ENUM_INT {
    TENT_OK = 0,
    TENT_ERR_INVALID = -1,          /* bad argument: fix the call */
    TENT_ERR_OUT_OF_RANGE = -2,     /* e.g. a message longer than the receive buffer (truncated) */
    TENT_ERR_NOT_FOUND = -3,        /* unknown handle */
    TENT_ERR_UNSUPPORTED = -4,
    TENT_ERR_BUSY = -5,             /* retry later */
    TENT_ERR_TIMEOUT = -6,          /* e.g. connect timed out */
    TENT_ERR_NO_RESOURCES = -7,     /* no usable rail, out of memory */
    TENT_ERR_RAIL = -8,             /* a rail failed the operation */
    TENT_ERR_REMOTE_ACCESS = -9,    /* the target refused: key, bounds or access flags */
    TENT_ERR_PEER_UNREACHABLE = -10, /* every path to the peer is gone */
    TENT_ERR_SYSTEM = -11,          /* a system call failed */
    TENT_ERR_INTERNAL = -12         /* a bug in tent; see the log */
} tent_status_t;

typedef enum tent_priority TENT_ENUM_INT {
    TENT_PRIORITY_HIGH = 0,
    TENT_PRIORITY_MEDIUM = 1,
    TENT_PRIORITY_LOW = 2
} tent_priority_t;

/* Preferred transport of one request; others are used only when the peer
 * has no rail of the preferred kind. */
typedef enum tent_transport TENT_ENUM_INT {
    TENT_TRANSPORT_ANY = -1,
    TENT_TRANSPORT_RDMA = 0,
    TENT_TRANSPORT_TCP = 1
} tent_transport_t;

/* Access rights of a registration (the values of IBV_ACCESS_*). */
#define TENT_ACCESS_LOCAL_WRITE 0x1u
#define TENT_ACCESS_REMOTE_WRITE 0x2u
#define TENT_ACCESS_REMOTE_READ 0x4u
#define TENT_ACCESS_ALL 0x7u
/* Needed by the target region of tent_post_atomic(); not in TENT_ACCESS_ALL. */
#define TENT_ACCESS_REMOTE_ATOMIC 0x8u

/* Length of a serialized remote key (tent_mem_remote_key()). */
#define TENT_REMOTE_KEY_SIZE 92u

typedef enum tent_op TENT_ENUM_INT {
    TENT_OP_WRITE = 0,
    TENT_OP_READ = 1,
    TENT_OP_SEND = 2,
    TENT_OP_RECV = 3,
    TENT_OP_ATOMIC = 4
} tent_op_t;

typedef enum tent_atomic_op TENT_ENUM_INT {
    TENT_ATOMIC_FETCH_ADD = 0,   /* *remote += compare_add */
    TENT_ATOMIC_COMPARE_SWAP = 1 /* if (*remote == compare_add) *remote = swap */
} tent_atomic_op_t;

typedef struct tent_engine tent_engine_t;
typedef struct tent_peer tent_peer_t;
typedef struct tent_mem tent_mem_t;

typedef struct tent_completion {
    uint64_t cookie;     /* as given when posting */
    tent_op_t op;
    int status;          /* TENT_OK or a tent_status_t */
    uint64_t length;     /* bytes moved; for TENT_OP_RECV the message's length */
    tent_peer_t *peer;   /* the connection (for TENT_OP_RECV: where to reply) */
} tent_completion_t;

typedef struct tent_rail_stats {
    tent_peer_t *peer;
    uint16_t rail_id;
    char name[96];       /* e.g. "mlx5_0:1 -> nodeb mlx5_0:1", "tcp 10.0.0.1 -> 10.0.0.2:7000" */
    tent_transport_t transport;
    int state;           /* 0 healthy, 1 degraded, 2 paused */
    uint64_t ops;        /* operations completed successfully */
    uint64_t bytes;
    uint64_t errors;
    uint64_t inflight_bytes;
    uint64_t failovers;  /* operations moved off this rail to another after a failure */
} tent_rail_stats_t;

/* Engines ----------------------------------------------------------------- */

/* Creates an engine from the configuration: the standard files and TENT_*
 * environment, plus config_path (an INI file read last) when not NULL. */
TENT_API int tent_engine_create(const char *config_path, tent_engine_t **engine);
/* Stops the progress thread, closes every connection (peers see this engine
 * become unreachable) and releases every registration. A callback still
 * running meanwhile that posts gets TENT_ERR_PEER_UNREACHABLE. */
TENT_API int tent_engine_destroy(tent_engine_t *engine);
/* The address blob peers pass to tent_connect(); valid until destroy. */
TENT_API int tent_engine_address(tent_engine_t *engine, const void **blob, size_t *length);
/* Gives the engine the job's key (at least 16 bytes; tent(7), SECURITY),
 * replacing the one it had: for a program that learns it after creating the
 * engine (job_key_file = none), such as the Open MPI component, which takes
 * rank 0's key from the modex. Incoming connections that arrived before it
 * wait for it (up to connect_timeout_ms). TENT_ERR_INVALID for a shorter
 * key or with authentication off (auth = false). */
TENT_API int tent_engine_set_job_key(tent_engine_t *engine, const void *key, size_t length);

/* Memory ------------------------------------------------------------------ */

/* Registers [addr, addr + length) once with every transport. */
TENT_API int tent_mem_register(tent_engine_t *engine, void *addr, size_t length, unsigned access,
                               tent_mem_t **mem);
TENT_API int tent_mem_deregister(tent_mem_t *mem);
/* The serialized remote key (TENT_REMOTE_KEY_SIZE bytes) a peer passes to
 * tent_post_write/read; it carries every rail's key. Valid until deregister. */
TENT_API int tent_mem_remote_key(tent_mem_t *mem, const void **key, size_t *length);

/* Connections ------------------------------------------------------------- */

TENT_API int tent_connect(tent_engine_t *engine, const void *blob, size_t length, tent_peer_t **peer);
/* Called when a peer's connection is lost, on the thread driving the engine:
 * its progress thread, or an application thread inside tent_poll() or
 * tent_wait() (never inside a post). Must not block. */
typedef void (*tent_peer_unreachable_cb)(tent_peer_t *peer, int status, void *arg);
TENT_API int tent_set_peer_unreachable_callback(tent_engine_t *engine, tent_peer_unreachable_cb cb, void *arg);

/* Data -------------------------------------------------------------------- */

/* One-sided: local must lie in a registration of this engine; remote_key is
 * the peer's tent_mem_remote_key() and remote_addr an address inside it.
 * Completes once (tent_poll) with cookie. */
TENT_API int tent_post_write(tent_peer_t *peer, const void *local, size_t length, const void *remote_key,
                             size_t remote_key_length, uint64_t remote_addr, tent_priority_t priority,
                             tent_transport_t hint, uint64_t cookie);
TENT_API int tent_post_read(tent_peer_t *peer, void *local, size_t length, const void *remote_key,
                            size_t remote_key_length, uint64_t remote_addr, tent_priority_t priority,
                            tent_transport_t hint, uint64_t cookie);
/* Two-sided: delivered to the peer exactly once and in posting order. data
 * must stay valid until the completion. */
TENT_API int tent_post_send(tent_peer_t *peer, const void *data, size_t length, tent_priority_t priority,
                            tent_transport_t hint, uint64_t cookie);
/* A buffer for the next message from any peer, filled in arrival order; a
 * TENT_OP_RECV completion reports it. */
TENT_API int tent_post_recv(tent_engine_t *engine, void *buffer, size_t length, uint64_t cookie);
/* Instead of receive buffers: every message is passed to cb on the thread
 * driving the engine, as for the unreachable callback (the bytes are valid
 * during the call only). NULL removes it. */
typedef void (*tent_recv_cb)(tent_peer_t *peer, const void *data, size_t length, void *arg);
TENT_API int tent_set_recv_callback(tent_engine_t *engine, tent_recv_cb cb, void *arg);

/* An 8-byte atomic on the peer's memory: remote_addr is 8-byte aligned in a
 * region the peer registered with TENT_ACCESS_REMOTE_ATOMIC. The value
 * found there before the operation is written to result (8 bytes inside a
 * registration of this engine) before the TENT_OP_ATOMIC completion.
 * Executed exactly once: an atomic is sent again after a rail failure only
 * where it cannot have executed, or to a target that remembers its result
 * (TCP rails); one that may have executed on an HCA whose rail failed
 * completes with TENT_ERR_RAIL and is not repeated (tent(7), "Atomics"). */
TENT_API int tent_post_atomic(tent_peer_t *peer, tent_atomic_op_t op, uint64_t compare_add, uint64_t swap,
                              void *result, const void *remote_key, size_t remote_key_length, uint64_t remote_addr,
                              tent_priority_t priority, tent_transport_t hint, uint64_t cookie);

/* Up to max completions into out; returns how many (>= 0) or a status. */
TENT_API int tent_poll(tent_engine_t *engine, tent_completion_t *out, int max);
/* Sleeps until a completion is ready for tent_poll() or timeout_ms have
 * passed (negative: no limit; 0: does not sleep); returns how many are
 * ready (0 on timeout) or a status. It takes none: call tent_poll() next.
 * The waiting thread drives the engine (caller_progress, the default): with
 * requests in flight it polls the rails for up to progress_spin_us, then
 * sleeps until a completion or an event. */
TENT_API int tent_wait(tent_engine_t *engine, int timeout_ms);
/* As tent_wait(), and also returns (0 unless completions are ready) as soon
 * as one of the nfds descriptors in fds is readable, has an error or hung
 * up (within a millisecond while the engine is busy), or a signal
 * interrupts the sleep: a thread that waits for its own
 * descriptors too drives the engine while it waits, rather than leaving
 * that to another thread whose wake-up would be one more on the way.
 * TENT_ERR_UNSUPPORTED with caller_progress=false or from inside a
 * callback: then wait on the descriptors and tent_wait() apart. */
TENT_API int tent_wait_fds(tent_engine_t *engine, int timeout_ms, const int *fds, int nfds);

/* Statistics of up to max rails into out; returns the number of rails the
 * engine has (which may exceed max) or a status. An operation whose
 * completion tent_poll() returned is already counted. */
TENT_API int tent_rail_stats(tent_engine_t *engine, tent_rail_stats_t *out, int max);

/* The engine's metrics in Prometheus text format (one family per metric,
 * see tent(7)) into buf, like snprintf: at most size - 1 characters and a
 * terminating NUL; returns the length of the whole text (>= size: it was
 * cut) or a status. buf may be NULL when size is 0. */
TENT_API int tent_metrics_text(tent_engine_t *engine, char *buf, size_t size);
/* Embedding: for programs that host tent and expose its knobs as their own
 * parameters (the Open MPI component, mca_btl_tent(7)) ----------------------- */

/* One row of the knob table (tent.conf(5)); the strings live as long as the
 * library. */
typedef struct tent_knob {
    const char *key;           /* INI key, e.g. "failover_timeout_ms" */
    const char *section;       /* INI section, e.g. "failover" */
    const char *type;          /* "bool", "integer", "number", "size", "enum" or "string" */
    const char *default_value; /* textual default */
    const char *range;         /* accepted values, e.g. "1..3600000" or "error|warn|..." */
    const char *help;          /* one line */
    int mca;                   /* nonzero: the Open MPI component exposes it as btl_tent_<key> */
} tent_knob_t;

/* Number of knobs; tent_knob_get() fills row index (0 <= index < count). */
TENT_API int tent_knob_count(void);
TENT_API int tent_knob_get(int index, tent_knob_t *out);

/* tent_engine_create() with n more values (keys[i] = values[i], keys are INI
 * keys) applied after every other source: the highest precedence. Each is
 * attributed to the source "<source_prefix><key>" (e.g. "btl_tent_") in
 * error messages. On a bad value or unknown key it returns TENT_ERR_INVALID
 * and, when error is not NULL, writes the message naming the source, the
 * knob and the accepted range into error (error_length bytes, terminated)
 * instead of logging it. */
TENT_API int tent_engine_create_with_overrides(const char *config_path, const char *const *keys,
                                               const char *const *values, size_t n, const char *source_prefix,
                                               tent_engine_t **engine, char *error, size_t error_length);

TENT_API const char *tent_strerror(int status);

#ifdef __cplusplus
}
#endif

#endif /* TENT_TENT_H */
