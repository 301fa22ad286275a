/* The module: what the PML calls (btl.h), over tent's C API. */
#include "btl_tent.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/util/output.h"

#include "btl_tent_frag.h"

int mca_btl_tent_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                           struct mca_btl_base_endpoint_t **peers, opal_bitmap_t *reachable) {
    (void) btl;
    opal_proc_t *self = opal_proc_local_get();
    mca_btl_tent_proc_adopt_job_key();
    for (size_t i = 0; i < nprocs; ++i) {
        /* btl/self serves this process itself; an endpoint the PML already
         * has stays. */
        if (procs[i] == self || NULL != peers[i]) {
            continue;
        }
        peers[i] = mca_btl_tent_endpoint_create(procs[i]);
        if (NULL != peers[i] && NULL != reachable) {
            opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    return OPAL_SUCCESS;
}

int mca_btl_tent_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs, struct opal_proc_t **procs,
                           struct mca_btl_base_endpoint_t **peers) {
    (void) btl;
    (void) procs;
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != peers[i]) {
            mca_btl_tent_endpoint_destroy(peers[i]);
        }
    }
    return OPAL_SUCCESS;
}

static int tent_register_error(struct mca_btl_base_module_t *btl, mca_btl_base_module_error_cb_fn_t cbfunc) {
    ((mca_btl_tent_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *tent_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint, uint8_t order, size_t size,
                                             uint32_t flags) {
    (void) btl;
    (void) order;
    mca_btl_tent_frag_t *frag = mca_btl_tent_frag_alloc(endpoint, size, flags);
    return NULL != frag ? &frag->base : NULL;
}

static int tent_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des) {
    (void) btl;
    mca_btl_tent_frag_return((mca_btl_tent_frag_t *) des);
    return OPAL_SUCCESS;
}

/* Packs up to *size bytes of the convertor's data after reserve bytes. */
static int pack(mca_btl_tent_frag_t *frag, struct opal_convertor_t *convertor, size_t reserve, size_t *size) {
    struct iovec iov = {.iov_base = (char *) frag->segment.seg_addr.pval + reserve, .iov_len = *size};
    uint32_t iov_count = 1;
    size_t max_data = *size;
    if (0 == *size) {
        return OPAL_SUCCESS;
    }
    if (opal_convertor_pack(convertor, &iov, &iov_count, &max_data) < 0) {
        return OPAL_ERROR;
    }
    *size = max_data;
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *tent_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor, uint8_t order,
                                                   size_t reserve, size_t *size, uint32_t flags) {
    (void) order;
    size_t max = btl->btl_max_send_size;
    if (reserve > max) {
        return NULL;
    }
    if (*size > max - reserve) {
        *size = max - reserve;
    }
    mca_btl_tent_frag_t *frag = mca_btl_tent_frag_alloc(endpoint, reserve + *size, flags);
    if (NULL == frag) {
        return NULL;
    }
    if (OPAL_SUCCESS != pack(frag, convertor, reserve, size)) {
        mca_btl_tent_frag_return(frag);
        return NULL;
    }
    frag->segment.seg_len = reserve + *size;
    return &frag->base;
}

static int tent_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag) {
    (void) btl;
    mca_btl_tent_frag_t *frag = (mca_btl_tent_frag_t *) des;
    frag->endpoint = endpoint;
    return mca_btl_tent_frag_send(frag, tag);
}

/* One call instead of alloc + pack + send: the PML's header and the
 * payload are copied into a fragment the BTL owns and frees itself. */
static int tent_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size, size_t payload_size,
                      uint8_t order, uint32_t flags, mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor) {
    (void) btl;
    (void) order;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    mca_btl_tent_frag_t *frag =
        mca_btl_tent_frag_alloc(endpoint, header_size + payload_size, flags | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    if (NULL == frag) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(frag->segment.seg_addr.pval, header, header_size);
    size_t packed = payload_size;
    if (OPAL_SUCCESS != pack(frag, convertor, header_size, &packed) || packed != payload_size) {
        mca_btl_tent_frag_return(frag);
        return OPAL_ERROR;
    }
    int rc = mca_btl_tent_frag_send(frag, tag);
    if (OPAL_SUCCESS != rc) {
        mca_btl_tent_frag_return(frag);
    }
    return rc;
}

static struct mca_btl_base_registration_handle_t *tent_register_mem(struct mca_btl_base_module_t *btl,
                                                                    struct mca_btl_base_endpoint_t *endpoint,
                                                                    void *base, size_t size, uint32_t flags) {
    (void) btl;
    (void) endpoint;
    return mca_btl_tent_reg_register(base, size, flags);
}

static int tent_deregister_mem(struct mca_btl_base_module_t *btl, struct mca_btl_base_registration_handle_t *handle) {
    (void) btl;
    return mca_btl_tent_reg_deregister(handle);
}

/* put and get: one tent request each, which tent stripes over the rails
 * and moves to another rail when one fails (the key covers every rail). */
static int rdma(bool write, struct mca_btl_base_endpoint_t *ep, void *local_address, uint64_t remote_address,
                struct mca_btl_base_registration_handle_t *local_handle,
                struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata) {
    if (ep->lost) {
        mca_btl_tent_endpoint_report(ep, TENT_ERR_PEER_UNREACHABLE);
        return OPAL_ERR_UNREACH;
    }
    mca_btl_tent_rdma_t *op = NULL;
    if (0 != posix_memalign((void **) &op, 16, sizeof *op)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *op = (mca_btl_tent_rdma_t){.endpoint = ep, .local_address = local_address, .local_handle = local_handle,
                                .cbfunc = cbfunc, .cbcontext = cbcontext, .cbdata = cbdata};
    /* Below the registration thresholds the PML may pass unregistered
     * memory; tent needs every local buffer registered. */
    if (NULL == local_handle && OPAL_SUCCESS != mca_btl_tent_reg_temporary(op, size)) {
        free(op);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    __atomic_add_fetch(&ep->outstanding, 1, __ATOMIC_RELAXED);
    mca_btl_tent_reg_op_started(op);
    uint64_t cookie = mca_btl_tent_cookie(op, MCA_BTL_TENT_COOKIE_RDMA);
    int rc = write ? tent_post_write(ep->peer, local_address, size, remote_handle->key, sizeof remote_handle->key,
                                     remote_address, TENT_PRIORITY_MEDIUM, TENT_TRANSPORT_ANY, cookie)
                   : tent_post_read(ep->peer, local_address, size, remote_handle->key, sizeof remote_handle->key,
                                    remote_address, TENT_PRIORITY_MEDIUM, TENT_TRANSPORT_ANY, cookie);
    if (TENT_OK != rc) {
        __atomic_sub_fetch(&ep->outstanding, 1, __ATOMIC_RELAXED);
        mca_btl_tent_reg_op_finished(op);
        free(op);
        if (TENT_ERR_BUSY == rc || TENT_ERR_NO_RESOURCES == rc) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        mca_btl_tent_endpoint_report(ep, rc);
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}

static int tent_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                    uint64_t remote_address, struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags, int order,
                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata) {
    (void) btl;
    (void) flags;
    (void) order;
    return rdma(true, endpoint, local_address, remote_address, local_handle, remote_handle, size, cbfunc, cbcontext,
                cbdata);
}

static int tent_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                    uint64_t remote_address, struct mca_btl_base_registration_handle_t *local_handle,
                    struct mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags, int order,
                    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata) {
    (void) btl;
    (void) flags;
    (void) order;
    return rdma(false, endpoint, local_address, remote_address, local_handle, remote_handle, size, cbfunc, cbcontext,
                cbdata);
}

/* Waits for the puts and gets (and sends) outstanding to endpoint, or to
 * every endpoint when it is NULL. tent completes every request, with an
 * error at worst after failover_timeout_ms, so this ends. */
static int tent_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint) {
    (void) btl;
    for (;;) {
        size_t outstanding = 0;
        pthread_mutex_lock(&mca_btl_tent_component.lock);
        for (mca_btl_base_endpoint_t *ep = mca_btl_tent_component.endpoints; ep; ep = ep->next) {
            if ((NULL == endpoint || ep == endpoint) && !ep->reported) {
                outstanding += __atomic_load_n(&ep->outstanding, __ATOMIC_RELAXED);
            }
        }
        pthread_mutex_unlock(&mca_btl_tent_component.lock);
        if (0 == outstanding) {
            return OPAL_SUCCESS;
        }
        if (0 == mca_btl_tent_component_progress()) {
            (void) tent_wait(mca_btl_tent_component.engine, 1);
        }
    }
}

int mca_btl_tent_finalize(struct mca_btl_base_module_t *btl) {
    (void) btl;
    mca_btl_tent_component.finalizing = true;
    if (NULL != mca_btl_tent_component.engine) {
        mca_btl_tent_reg_release_all();
        mca_btl_tent_frag_deregister_all();
        (void) tent_engine_destroy(mca_btl_tent_component.engine);
        mca_btl_tent_component.engine = NULL;
    }
    mca_btl_tent_frag_release_all();
    while (NULL != mca_btl_tent_component.endpoints) {
        mca_btl_tent_endpoint_destroy(mca_btl_tent_component.endpoints);
    }
    return OPAL_SUCCESS;
}

mca_btl_tent_module_t mca_btl_tent_module = {
    .super =
        {
            .btl_component = &mca_btl_tent_component.super,
            .btl_add_procs = mca_btl_tent_add_procs,
            .btl_del_procs = mca_btl_tent_del_procs,
            .btl_finalize = mca_btl_tent_finalize,
            .btl_alloc = tent_alloc,
            .btl_free = tent_free,
            .btl_prepare_src = tent_prepare_src,
            .btl_send = tent_send,
            .btl_sendi = tent_sendi,
            .btl_put = tent_put,
            .btl_get = tent_get,
            .btl_register_mem = tent_register_mem,
            .btl_deregister_mem = tent_deregister_mem,
            .btl_register_error = tent_register_error,
            .btl_flush = tent_flush,
        },
};
