/* Peer addresses: each process publishes its tent engine's address blob
 * (every rail it can be reached on) through the modex; add_procs reads the
 * peer's to connect. */
#include "btl_tent.h"

#include "opal/mca/pmix/pmix.h"

int mca_btl_tent_proc_publish(void) {
    const void *blob = NULL;
    size_t length = 0;
    int rc = tent_engine_address(mca_btl_tent_component.engine, &blob, &length);
    if (TENT_OK != rc) {
        return OPAL_ERROR;
    }
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_btl_tent_component.super.btl_version, blob, length);
    return rc;
}

int mca_btl_tent_proc_address(opal_proc_t *proc, void **blob, size_t *length) {
    int rc;
    uint8_t *data = NULL;
    size_t size = 0;
    OPAL_MODEX_RECV(rc, &mca_btl_tent_component.super.btl_version, &proc->proc_name, (void **) &data, &size);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    *blob = data;
    *length = size;
    return OPAL_SUCCESS;
}
