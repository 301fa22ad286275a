/* The tent BTL: one module per process over one tent engine, one endpoint
 * per peer. tent stripes over every rail and fails over inside; this
 * component reports an error to the PML only when tent says every path to
 * a peer is gone. See mca_btl_tent(7).
 *
 * Files, after Open MPI's btl/tcp: btl_tent_component.c (parameters, engine,
 * modex, progress), btl_tent.c (the module's functions), btl_tent_endpoint.c
 * (per-peer connection and failure state), btl_tent_frag.c (send and receive
 * fragments), btl_tent_proc.c (peer addresses from the modex). */
#ifndef MCA_BTL_TENT_H
#define MCA_BTL_TENT_H

#include "opal_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/util/proc.h"

#include "tent/tent.h"

BEGIN_C_DECLS

/* Every BTL message starts with this header: tent delivers whole messages,
 * the PML needs the active-message tag. */
typedef struct mca_btl_tent_hdr_t {
    uint8_t tag;
    uint8_t pad[7];
} mca_btl_tent_hdr_t;

/* What a peer's registration handle carries: tent's remote key, holding
 * the key of every rail, so that a put or get can move to another rail. */
struct mca_btl_base_registration_handle_t {
    uint8_t key[TENT_REMOTE_KEY_SIZE];
};

struct mca_btl_base_endpoint_t {
    struct mca_btl_base_endpoint_t *next; /* every endpoint, for failure lookup */
    opal_proc_t *proc;
    tent_peer_t *peer;   /* the connection this process opened to the peer */
    size_t outstanding;  /* sends, puts and gets not yet completed */
    bool lost;           /* tent reported the peer unreachable */
    bool reported;       /* the PML has been told (once) */
};
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;

typedef struct mca_btl_tent_module_t {
    mca_btl_base_module_t super;
    mca_btl_base_module_error_cb_fn_t error_cb;
} mca_btl_tent_module_t;

typedef struct mca_btl_tent_component_t {
    mca_btl_base_component_3_0_0_t super;
    tent_engine_t *engine;
    int recv_buffers;           /* receive buffers kept posted */
    int knob_count;             /* rows of tent's knob table */
    pthread_mutex_t lock;       /* endpoints, free lists, lost-peer queue */
    mca_btl_base_endpoint_t *endpoints;
    bool finalizing;            /* peers leaving now is expected: not an error */
} mca_btl_tent_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_tent_component_t mca_btl_tent_component;
extern mca_btl_tent_module_t mca_btl_tent_module;

/* btl_tent.c: the module's function table. */
int mca_btl_tent_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                           struct mca_btl_base_endpoint_t **peers, opal_bitmap_t *reachable);
int mca_btl_tent_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                           struct mca_btl_base_endpoint_t **peers);
int mca_btl_tent_finalize(struct mca_btl_base_module_t *btl);

/* btl_tent_component.c */
int mca_btl_tent_component_progress(void);

/* btl_tent_proc.c: the modex. */
int mca_btl_tent_proc_publish(void);
/* Every rank but 0: takes rank 0's job key from the modex (once). */
void mca_btl_tent_proc_adopt_job_key(void);
/* The peer's engine address; the caller frees *blob. */
int mca_btl_tent_proc_address(opal_proc_t *proc, void **blob, size_t *length);

/* btl_tent_endpoint.c */
mca_btl_base_endpoint_t *mca_btl_tent_endpoint_create(opal_proc_t *proc);
void mca_btl_tent_endpoint_destroy(mca_btl_base_endpoint_t *ep);
/* Called from tent's unreachable callback (any thread). */
void mca_btl_tent_endpoint_note_lost(tent_peer_t *peer);
/* From progress: reports lost peers with work outstanding to the PML, once. */
void mca_btl_tent_endpoint_check_lost(void);
/* Reports ep unreachable to the PML once (status: what failed). */
void mca_btl_tent_endpoint_report(mca_btl_base_endpoint_t *ep, int status);

/* btl_tent_frag.c */
int mca_btl_tent_frag_post_receives(void);
/* At finalize: registrations before the engine is destroyed, memory after. */
void mca_btl_tent_frag_deregister_all(void);
void mca_btl_tent_frag_release_all(void);
/* A completion from tent_poll(): a send, receive, put or get. */
void mca_btl_tent_frag_complete(const tent_completion_t *c);

END_C_DECLS

#endif /* MCA_BTL_TENT_H */
