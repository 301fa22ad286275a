/* Two engines in this process through the public C API, a connected to b:
 * the pair the C tests of the engine run on. */
#pragma once

#include <criterion/criterion.h>

#include "tent/tent.h"

struct pair {
    tent_engine_t *a, *b;
    tent_peer_t *peer; /* a's connection to b */
};

static inline void make_pair(struct pair *p) {
    cr_assert_eq(tent_engine_create(NULL, &p->a), TENT_OK);
    cr_assert_eq(tent_engine_create(NULL, &p->b), TENT_OK);
    const void *blob;
    size_t blob_len;
    cr_assert_eq(tent_engine_address(p->b, &blob, &blob_len), TENT_OK);
    cr_assert_eq(tent_connect(p->a, blob, blob_len, &p->peer), TENT_OK);
}

static inline void destroy_pair(struct pair *p) {
    cr_assert_eq(tent_engine_destroy(p->a), TENT_OK);
    cr_assert_eq(tent_engine_destroy(p->b), TENT_OK);
}
