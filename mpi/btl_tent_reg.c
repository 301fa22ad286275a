/* Memory registration for put and get, with deregistration deferred until
 * no operation that might use the region is in flight (btl_tent_frag.h). */
#include "btl_tent_frag.h"

#include <stdlib.h>
#include <string.h>

typedef struct zombie_t {
    struct zombie_t *next;
    tent_mem_t *mem;
    uint64_t seq; /* operations posted before this one may use mem */
} zombie_t;

static mca_btl_tent_rdma_t *ops_head, *ops_tail; /* in flight, by seq */
static uint64_t next_seq = 1;
static zombie_t *zombies_head, **zombies_tail = &zombies_head;

static unsigned access_of(uint32_t flags) {
    unsigned access = TENT_ACCESS_LOCAL_WRITE;
    if (flags & MCA_BTL_REG_FLAG_REMOTE_READ) {
        access |= TENT_ACCESS_REMOTE_READ;
    }
    if (flags & (MCA_BTL_REG_FLAG_REMOTE_WRITE | MCA_BTL_REG_FLAG_REMOTE_ATOMIC)) {
        access |= TENT_ACCESS_REMOTE_WRITE;
    }
    return access;
}

struct mca_btl_base_registration_handle_t *mca_btl_tent_reg_register(void *base, size_t size, uint32_t flags) {
    mca_btl_tent_reg_t *reg = calloc(1, sizeof *reg);
    if (NULL == reg) {
        return NULL;
    }
    const void *key = NULL;
    size_t key_length = 0;
    if (TENT_OK != tent_mem_register(mca_btl_tent_component.engine, base, size, access_of(flags), &reg->mem)) {
        free(reg);
        return NULL;
    }
    if (TENT_OK != tent_mem_remote_key(reg->mem, &key, &key_length) || key_length != sizeof reg->handle.key) {
        (void) tent_mem_deregister(reg->mem);
        free(reg);
        return NULL;
    }
    memcpy(reg->handle.key, key, key_length);
    return &reg->handle;
}

/* Called with the lock held: releases what no operation in flight can use. */
static void release_zombies(zombie_t **out) {
    uint64_t oldest = NULL != ops_head ? ops_head->seq : UINT64_MAX;
    while (NULL != zombies_head && zombies_head->seq < oldest) {
        zombie_t *z = zombies_head;
        zombies_head = z->next;
        z->next = *out;
        *out = z;
    }
    if (NULL == zombies_head) {
        zombies_tail = &zombies_head;
    }
}

static void free_zombies(zombie_t *list) {
    while (NULL != list) {
        zombie_t *next = list->next;
        (void) tent_mem_deregister(list->mem);
        free(list);
        list = next;
    }
}

static int retire(tent_mem_t *mem) {
    zombie_t *z = malloc(sizeof *z);
    if (NULL == z) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    zombie_t *done = NULL;
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    z->mem = mem;
    z->next = NULL;
    z->seq = next_seq; /* every op posted so far has a smaller seq */
    *zombies_tail = z;
    zombies_tail = &z->next;
    release_zombies(&done);
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
    free_zombies(done);
    return OPAL_SUCCESS;
}

int mca_btl_tent_reg_deregister(struct mca_btl_base_registration_handle_t *handle) {
    mca_btl_tent_reg_t *reg = (mca_btl_tent_reg_t *) handle;
    tent_mem_t *mem = reg->mem;
    free(reg);
    return retire(mem);
}

int mca_btl_tent_reg_temporary(mca_btl_tent_rdma_t *op, size_t size) {
    return TENT_OK == tent_mem_register(mca_btl_tent_component.engine, op->local_address, size,
                                        TENT_ACCESS_LOCAL_WRITE, &op->temporary)
               ? OPAL_SUCCESS
               : OPAL_ERR_OUT_OF_RESOURCE;
}

void mca_btl_tent_reg_op_started(mca_btl_tent_rdma_t *op) {
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    op->seq = next_seq++;
    op->next = NULL;
    op->prev = ops_tail;
    if (NULL != ops_tail) {
        ops_tail->next = op;
    } else {
        ops_head = op;
    }
    ops_tail = op;
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
}

void mca_btl_tent_reg_op_finished(mca_btl_tent_rdma_t *op) {
    zombie_t *done = NULL;
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    if (NULL != op->prev) {
        op->prev->next = op->next;
    } else {
        ops_head = op->next;
    }
    if (NULL != op->next) {
        op->next->prev = op->prev;
    } else {
        ops_tail = op->prev;
    }
    release_zombies(&done);
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
    free_zombies(done);
    if (NULL != op->temporary) {
        (void) retire(op->temporary);
        op->temporary = NULL;
    }
}

void mca_btl_tent_reg_release_all(void) {
    /* Before the engine goes: nothing is in flight that matters any more. */
    free_zombies(zombies_head);
    zombies_head = NULL;
    zombies_tail = &zombies_head;
    ops_head = ops_tail = NULL;
}
