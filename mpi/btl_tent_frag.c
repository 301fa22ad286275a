/* Send fragments, receive buffers and the completions tent reports for
 * them (btl_tent_frag.h). */
#include "btl_tent_frag.h"

#include <stdlib.h>
#include <string.h>

/* Two size classes, like btl/tcp's eager and max lists: most messages are
 * small, and a max-size buffer for each would waste memory. */
static mca_btl_tent_frag_t *free_eager;
static mca_btl_tent_frag_t *free_max;

typedef struct mca_btl_tent_recv_t {
    size_t capacity;
    mca_btl_tent_hdr_t *hdr;
} mca_btl_tent_recv_t;

static mca_btl_tent_recv_t *recvs;
static int recv_count;

/* Fragments are carved from slabs registered with tent once: tent sends
 * from registered memory on RDMA rails (the HCA reads it by key). */
#define FRAGS_PER_SLAB 32
typedef struct slab_t {
    struct slab_t *next;
    tent_mem_t *mem;
    void *base;
} slab_t;
static slab_t *slabs;

static size_t frag_stride(size_t capacity) {
    size_t bytes = sizeof(mca_btl_tent_frag_t) + sizeof(mca_btl_tent_hdr_t) + capacity;
    return (bytes + 63) & ~(size_t) 63;
}

/* Called with the lock held: a new slab's fragments onto list. */
static int slab_new(size_t capacity, mca_btl_tent_frag_t **list) {
    size_t stride = frag_stride(capacity);
    slab_t *slab = calloc(1, sizeof *slab);
    if (NULL == slab || 0 != posix_memalign(&slab->base, 4096, stride * FRAGS_PER_SLAB)) {
        free(slab);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (TENT_OK != tent_mem_register(mca_btl_tent_component.engine, slab->base, stride * FRAGS_PER_SLAB,
                                     TENT_ACCESS_LOCAL_WRITE, &slab->mem)) {
        free(slab->base);
        free(slab);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < FRAGS_PER_SLAB; ++i) {
        mca_btl_tent_frag_t *frag = (mca_btl_tent_frag_t *) ((char *) slab->base + (size_t) i * stride);
        memset(frag, 0, sizeof *frag);
        OBJ_CONSTRUCT(&frag->base, mca_btl_base_descriptor_t);
        frag->capacity = capacity;
        frag->hdr = (mca_btl_tent_hdr_t *) (frag + 1);
        frag->next_free = *list;
        *list = frag;
    }
    slab->next = slabs;
    slabs = slab;
    return OPAL_SUCCESS;
}

mca_btl_tent_frag_t *mca_btl_tent_frag_alloc(mca_btl_base_endpoint_t *ep, size_t size, uint32_t flags) {
    size_t eager = mca_btl_tent_module.super.btl_eager_limit;
    size_t max = mca_btl_tent_module.super.btl_max_send_size;
    if (size > max) {
        return NULL;
    }
    bool small = size <= eager;
    mca_btl_tent_frag_t *frag;
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    mca_btl_tent_frag_t **list = small ? &free_eager : &free_max;
    if (NULL == *list) {
        (void) slab_new(small ? eager : max, list);
    }
    frag = *list;
    if (NULL != frag) {
        *list = frag->next_free;
    }
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
    if (NULL == frag) {
        return NULL;
    }
    frag->next_free = NULL;
    frag->endpoint = ep;
    frag->segment.seg_addr.pval = frag->hdr + 1;
    frag->segment.seg_len = size;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->base.des_flags = flags;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->base.order = MCA_BTL_NO_ORDER;
    return frag;
}

void mca_btl_tent_frag_return(mca_btl_tent_frag_t *frag) {
    bool small = frag->capacity <= mca_btl_tent_module.super.btl_eager_limit;
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    mca_btl_tent_frag_t **list = small ? &free_eager : &free_max;
    frag->next_free = *list;
    *list = frag;
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
}

int mca_btl_tent_frag_send(mca_btl_tent_frag_t *frag, mca_btl_base_tag_t tag) {
    mca_btl_base_endpoint_t *ep = frag->endpoint;
    if (ep->lost) {
        mca_btl_tent_endpoint_report(ep, TENT_ERR_PEER_UNREACHABLE);
        return OPAL_ERR_UNREACH;
    }
    frag->hdr->tag = tag;
    /* Every fragment at one priority, ob1's control fragments
     * (MCA_BTL_DES_FLAGS_PRIORITY) too: at high priority they made tent's QoS
     * window and lane (tent.conf(5), [qos]) hold the job's own bulk reads to
     * 64 KiB in flight on one rail for 10 ms after each of them, which in a
     * job is always. NetPIPE at 1 MiB over two TCP rails on loopback: 16
     * Gbit/s so (two runs), 19 and 23 without. */
    const tent_priority_t prio = TENT_PRIORITY_MEDIUM;
    __atomic_add_fetch(&ep->outstanding, 1, __ATOMIC_RELAXED);
    int rc = tent_post_send(ep->peer, frag->hdr, sizeof(mca_btl_tent_hdr_t) + frag->segment.seg_len, prio,
                            TENT_TRANSPORT_ANY, mca_btl_tent_cookie(frag, MCA_BTL_TENT_COOKIE_SEND));
    if (TENT_OK != rc) {
        __atomic_sub_fetch(&ep->outstanding, 1, __ATOMIC_RELAXED);
        if (TENT_ERR_BUSY == rc || TENT_ERR_NO_RESOURCES == rc) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        mca_btl_tent_endpoint_report(ep, rc);
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}

static int post_receive(mca_btl_tent_recv_t *r) {
    return tent_post_recv(mca_btl_tent_component.engine, r->hdr, sizeof(mca_btl_tent_hdr_t) + r->capacity,
                          mca_btl_tent_cookie(r, MCA_BTL_TENT_COOKIE_RECV));
}

int mca_btl_tent_frag_post_receives(void) {
    int n = mca_btl_tent_component.recv_buffers;
    size_t capacity = mca_btl_tent_module.super.btl_max_send_size;
    recvs = calloc((size_t) n, sizeof *recvs);
    if (NULL == recvs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < n; ++i) {
        if (0 != posix_memalign((void **) &recvs[i].hdr, 64, sizeof(mca_btl_tent_hdr_t) + capacity)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        recvs[i].capacity = capacity;
        recv_count = i + 1;
        if (TENT_OK != post_receive(&recvs[i])) {
            return OPAL_ERROR;
        }
    }
    return OPAL_SUCCESS;
}

/* Before the engine goes (slab registrations), then after (the memory). */
void mca_btl_tent_frag_deregister_all(void) {
    for (slab_t *slab = slabs; NULL != slab; slab = slab->next) {
        if (NULL != slab->mem) {
            (void) tent_mem_deregister(slab->mem);
            slab->mem = NULL;
        }
    }
}

void mca_btl_tent_frag_release_all(void) {
    for (int i = 0; i < recv_count; ++i) {
        free(recvs[i].hdr);
    }
    free(recvs);
    recvs = NULL;
    recv_count = 0;
    while (NULL != slabs) {
        slab_t *next = slabs->next;
        free(slabs->base);
        free(slabs);
        slabs = next;
    }
    free_eager = free_max = NULL;
}

static int opal_status(int tent_status) {
    return TENT_OK == tent_status ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
}

static void complete_send(mca_btl_tent_frag_t *frag, int status) {
    mca_btl_base_endpoint_t *ep = frag->endpoint;
    __atomic_sub_fetch(&ep->outstanding, 1, __ATOMIC_RELAXED);
    if (TENT_OK != status) {
        mca_btl_tent_endpoint_report(ep, status);
    }
    int own = frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    /* A send that was queued (btl_send returned 0) always calls back. */
    if (NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&mca_btl_tent_module.super, ep, &frag->base, opal_status(status));
    }
    if (own) {
        mca_btl_tent_frag_return(frag);
    }
}

static void complete_recv(mca_btl_tent_recv_t *r, const tent_completion_t *c) {
    if (TENT_OK == c->status && c->length >= sizeof(mca_btl_tent_hdr_t)) {
        mca_btl_base_tag_t tag = r->hdr->tag;
        mca_btl_base_segment_t segment = {.seg_addr.pval = r->hdr + 1,
                                          .seg_len = c->length - sizeof(mca_btl_tent_hdr_t)};
        mca_btl_base_descriptor_t des;
        memset(&des, 0, sizeof des);
        des.des_segments = &segment;
        des.des_segment_count = 1;
        mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
        if (NULL != reg->cbfunc) {
            reg->cbfunc(&mca_btl_tent_module.super, tag, &des, reg->cbdata);
        }
    } else {
        /* Longer than every peer's max send size: the peers disagree on
         * btl_tent_max_send_size, which the PML cannot recover from. */
        opal_output(0, "btl tent: dropped a message of %llu bytes: %s (btl_tent_max_send_size must be the same "
                       "in every process)",
                    (unsigned long long) c->length, tent_strerror(c->status));
    }
    if (!mca_btl_tent_component.finalizing) {
        (void) post_receive(r);
    }
}

static void complete_rdma(mca_btl_tent_rdma_t *op, int status) {
    mca_btl_base_endpoint_t *ep = op->endpoint;
    __atomic_sub_fetch(&ep->outstanding, 1, __ATOMIC_RELAXED);
    if (TENT_OK != status) {
        mca_btl_tent_endpoint_report(ep, status);
    }
    mca_btl_tent_reg_op_finished(op);
    op->cbfunc(&mca_btl_tent_module.super, ep, op->local_address, op->local_handle, op->cbcontext, op->cbdata,
               opal_status(status));
    free(op);
}

void mca_btl_tent_frag_complete(const tent_completion_t *c) {
    void *p = (void *) (uintptr_t) (c->cookie & ~(uint64_t) MCA_BTL_TENT_COOKIE_MASK);
    switch ((int) (c->cookie & MCA_BTL_TENT_COOKIE_MASK)) {
    case MCA_BTL_TENT_COOKIE_SEND:
        complete_send(p, c->status);
        break;
    case MCA_BTL_TENT_COOKIE_RECV:
        complete_recv(p, c);
        break;
    case MCA_BTL_TENT_COOKIE_RDMA:
        complete_rdma(p, c->status);
        break;
    default:
        break;
    }
}
