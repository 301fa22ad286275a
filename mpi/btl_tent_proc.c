/* Peer addresses: each process publishes its tent engine's address blob
 * (every rail it can be reached on) through the modex; add_procs reads the
 * peer's to connect.
 * The job's key (tent(7), SECURITY) travels the same way: rank 0 makes a
 * fresh one and publishes it; every other rank takes it from the modex in
 * its first add_procs. Until then its engine holds incoming handshakes
 * (the engine is created with job_key_file = none). */
#include "btl_tent.h"

#include <stdio.h>
#include <sys/random.h>

#include "opal/mca/pmix/pmix.h"

#define TENT_JOB_KEY_MODEX "btl.tent.job_key"
#define TENT_JOB_KEY_BYTES 32

static bool job_key_adopted = false;

/* Rank 0: a fresh key for this job, used at once and published. */
static int publish_job_key(void) {
    uint8_t raw[TENT_JOB_KEY_BYTES];
    char hex[2 * TENT_JOB_KEY_BYTES + 1];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t) sizeof raw) {
        opal_output(0, "btl tent: no random bytes for the job key");
        return OPAL_ERROR;
    }
    for (size_t i = 0; i < sizeof raw; ++i) {
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    }
    /* TENT_ERR_INVALID: authentication is off (auth = false); nothing to share. */
    if (TENT_OK != tent_engine_set_job_key(mca_btl_tent_component.engine, hex, 2 * TENT_JOB_KEY_BYTES)) {
        job_key_adopted = true;
        return OPAL_SUCCESS;
    }
    int rc;
    OPAL_MODEX_SEND_STRING(rc, OPAL_PMIX_GLOBAL, TENT_JOB_KEY_MODEX, hex, 2 * TENT_JOB_KEY_BYTES);
    job_key_adopted = OPAL_SUCCESS == rc;
    return rc;
}

void mca_btl_tent_proc_adopt_job_key(void) {
    if (job_key_adopted) {
        return;
    }
    job_key_adopted = true;
    opal_process_name_t rank0 = OPAL_PROC_MY_NAME;
    rank0.vpid = 0;
    int rc;
    char *key = NULL;
    size_t size = 0;
    OPAL_MODEX_RECV_STRING(rc, TENT_JOB_KEY_MODEX, &rank0, (void **) &key, &size);
    if (OPAL_SUCCESS != rc || NULL == key) {
        /* auth = false on rank 0, or a modex without it: connections will say why they fail. */
        return;
    }
    (void) tent_engine_set_job_key(mca_btl_tent_component.engine, key, size);
    free(key);
}

int mca_btl_tent_proc_publish(void) {
    const void *blob = NULL;
    size_t length = 0;
    int rc = tent_engine_address(mca_btl_tent_component.engine, &blob, &length);
    if (TENT_OK != rc) {
        return OPAL_ERROR;
    }
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_btl_tent_component.super.btl_version, blob, length);
    if (OPAL_SUCCESS == rc && 0 == OPAL_PROC_MY_NAME.vpid) {
        rc = publish_job_key();
    }
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
