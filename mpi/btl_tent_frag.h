/* Fragments of the tent BTL. A send fragment is a descriptor and one
 * contiguous buffer (header, then payload) handed to tent_post_send(); a
 * receive buffer is posted with tent_post_recv(); an RDMA operation holds
 * the PML's completion callback of a put or get. Each is tent's cookie, its
 * kind in the low bits (the structures are 16-byte aligned). */
#ifndef MCA_BTL_TENT_FRAG_H
#define MCA_BTL_TENT_FRAG_H

#include "btl_tent.h"

BEGIN_C_DECLS

enum { MCA_BTL_TENT_COOKIE_SEND = 1, MCA_BTL_TENT_COOKIE_RECV = 2, MCA_BTL_TENT_COOKIE_RDMA = 3,
       MCA_BTL_TENT_COOKIE_MASK = 3 };

typedef struct mca_btl_tent_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment;
    mca_btl_base_endpoint_t *endpoint;
    struct mca_btl_tent_frag_t *next_free;
    size_t capacity;          /* payload bytes the buffer holds */
    mca_btl_tent_hdr_t *hdr;  /* the buffer: header, then payload */
} mca_btl_tent_frag_t;

typedef struct mca_btl_tent_rdma_t {
    struct mca_btl_tent_rdma_t *prev, *next; /* in flight, oldest first */
    uint64_t seq;                            /* order of posting */
    mca_btl_base_endpoint_t *endpoint;
    void *local_address;
    struct mca_btl_base_registration_handle_t *local_handle;
    tent_mem_t *temporary;    /* registered here when the PML gave no local handle */
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
} mca_btl_tent_rdma_t;

/* A registration: the handle the PML sends to peers comes first. */
typedef struct mca_btl_tent_reg_t {
    struct mca_btl_base_registration_handle_t handle;
    tent_mem_t *mem;
} mca_btl_tent_reg_t;

/* btl_tent_reg.c. tent finds the registration of a local buffer when it
 * posts each piece (also when it replays one on another rail), by address:
 * a region the PML deregisters may still be the one tent picks for an
 * overlapping buffer of an operation in flight. So a registration is
 * released only once every operation posted before its deregistration has
 * completed. */
struct mca_btl_base_registration_handle_t *mca_btl_tent_reg_register(void *base, size_t size, uint32_t flags);
int mca_btl_tent_reg_deregister(struct mca_btl_base_registration_handle_t *handle);
/* A registration only op uses (the PML gave no local handle). */
int mca_btl_tent_reg_temporary(mca_btl_tent_rdma_t *op, size_t size);
/* Tracks op from before its post to its completion. */
void mca_btl_tent_reg_op_started(mca_btl_tent_rdma_t *op);
void mca_btl_tent_reg_op_finished(mca_btl_tent_rdma_t *op);
/* At finalize, with the engine gone. */
void mca_btl_tent_reg_release_all(void);

/* A send fragment for up to size payload bytes (NULL when size exceeds the
 * module's max send size or memory is short). */
mca_btl_tent_frag_t *mca_btl_tent_frag_alloc(mca_btl_base_endpoint_t *ep, size_t size, uint32_t flags);
void mca_btl_tent_frag_return(mca_btl_tent_frag_t *frag);
/* Posts the fragment's header and payload to its endpoint. */
int mca_btl_tent_frag_send(mca_btl_tent_frag_t *frag, mca_btl_base_tag_t tag);

static inline uint64_t mca_btl_tent_cookie(void *p, int kind) {
    return (uint64_t)(uintptr_t)p | (uint64_t)kind;
}

END_C_DECLS

#endif /* MCA_BTL_TENT_FRAG_H */
