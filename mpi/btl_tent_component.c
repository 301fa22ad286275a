/* The component: MCA parameters (Open MPI's per-BTL ones and one
 * btl_tent_<key> per knob of tent's table marked for MCA), the engine,
 * the modex and progress. */
#include "btl_tent.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"

#include "btl_tent_frag.h"

/* Receive buffers of max-send-size each kept posted with tent; a message
 * arriving with none posted waits in tent (flow control, not loss). */
#define MCA_BTL_TENT_RECV_BUFFERS 32

/* Open MPI keeps pointers to a variable's storage until the component is
 * unloaded, after close: static arrays outlive both. */
#define MCA_BTL_TENT_MAX_KNOBS 256
static char *knob_values[MCA_BTL_TENT_MAX_KNOBS]; /* btl_tent_<key> storage */
static int knob_var_index[MCA_BTL_TENT_MAX_KNOBS]; /* MCA variable index, -1 if none */

static int tent_component_register(void);
static int tent_component_open(void);
static int tent_component_close(void);
static mca_btl_base_module_t **tent_component_init(int *num_btls, bool enable_progress_threads,
                                                   bool enable_mpi_threads);

mca_btl_tent_component_t mca_btl_tent_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_DEFAULT_VERSION("tent"),
                    .mca_open_component = tent_component_open,
                    .mca_close_component = tent_component_close,
                    .mca_register_component_params = tent_component_register,
                },
            .btl_data = {.param_field = MCA_BASE_METADATA_PARAM_NONE},
            .btl_init = tent_component_init,
            .btl_progress = mca_btl_tent_component_progress,
        },
};

/* Every knob of tent's table marked for MCA becomes btl_tent_<key>, a string
 * parsed by tent like any other source, so a bad value is tent's error
 * naming the parameter and the accepted range. */
static int register_knobs(void) {
    int n = tent_knob_count();
    if (n > MCA_BTL_TENT_MAX_KNOBS) {
        n = MCA_BTL_TENT_MAX_KNOBS;
    }
    mca_btl_tent_component.knob_count = n;
    for (int i = 0; i < n; ++i) {
        tent_knob_t k;
        knob_var_index[i] = -1;
        if (TENT_OK != tent_knob_get(i, &k) || !k.mca) {
            continue;
        }
        char help[512];
        snprintf(help, sizeof help, "%s (%s: %s; tent.conf(5) [%s] %s)", k.help, k.type, k.range, k.section, k.key);
        /* The storage starts as the table's default; Open MPI replaces it
         * with the user's value and frees it at close. */
        knob_values[i] = (char *) k.default_value;
        knob_var_index[i] = mca_base_component_var_register(
            &mca_btl_tent_component.super.btl_version, k.key, help, MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0,
            OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY, &knob_values[i]);
    }
    return OPAL_SUCCESS;
}

static int tent_component_register(void) {
    mca_base_var_group_component_register(&mca_btl_tent_component.super.btl_version,
                                          "multi-rail RDMA and TCP with failover (tent)");
    int rc = register_knobs();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mca_btl_base_module_t *m = &mca_btl_tent_module.super;
    /* Messages up to the eager limit are copied; larger contiguous ones are
     * read by the receiver (RGET) in one tent request, which tent stripes
     * over the rails. Each RGET registers the buffer with every HCA and
     * costs a round trip more: with NPmpi on one host, messages of 32 to
     * 64 KiB went several times faster eager (64 KiB) than by RGET (a
     * 32 KiB limit). */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT;
    m->btl_eager_limit = 64 * 1024;
    m->btl_rndv_eager_limit = 64 * 1024;
    m->btl_max_send_size = 128 * 1024;
    m->btl_rdma_pipeline_send_length = 1024 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = 256 * 1024;
    m->btl_latency = 1;
    m->btl_bandwidth = 10000;
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET | MCA_BTL_FLAGS_RDMA_FLUSH;
    m->btl_registration_handle_size = sizeof(struct mca_btl_base_registration_handle_t);
    m->btl_get_limit = SIZE_MAX;
    m->btl_put_limit = SIZE_MAX;
    m->btl_get_alignment = 0;
    m->btl_put_alignment = 0;
    m->btl_get_local_registration_threshold = 0;
    m->btl_put_local_registration_threshold = 0;
    return mca_btl_base_param_register(&mca_btl_tent_component.super.btl_version, m);
}

static int tent_component_open(void) {
    pthread_mutex_init(&mca_btl_tent_component.lock, NULL);
    mca_btl_tent_component.engine = NULL;
    mca_btl_tent_component.endpoints = NULL;
    mca_btl_tent_component.finalizing = false;
    mca_btl_tent_component.recv_buffers = MCA_BTL_TENT_RECV_BUFFERS;
    return OPAL_SUCCESS;
}

static int tent_component_close(void) {
    if (NULL != mca_btl_tent_component.engine) {
        mca_btl_tent_component.finalizing = true;
        mca_btl_tent_reg_release_all();
        mca_btl_tent_frag_deregister_all();
        (void) tent_engine_destroy(mca_btl_tent_component.engine);
        mca_btl_tent_component.engine = NULL;
        mca_btl_tent_frag_release_all();
    }
    pthread_mutex_destroy(&mca_btl_tent_component.lock);
    return OPAL_SUCCESS;
}

static void on_unreachable(tent_peer_t *peer, int status, void *arg) {
    (void) status;
    (void) arg;
    mca_btl_tent_endpoint_note_lost(peer);
}

/* The engine with the btl_tent_* values the user set (on the command line,
 * in an MCA file or OMPI_MCA_* variables) as its highest-precedence source. */
static int create_engine(void) {
    int n = mca_btl_tent_component.knob_count;
    const char **keys = calloc((size_t) n + 1, sizeof(char *));
    const char **values = calloc((size_t) n + 1, sizeof(char *));
    size_t count = 0;
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    if (NULL == keys || NULL == values) {
        goto out;
    }
    for (int i = 0; i < n; ++i) {
        mca_base_var_source_t source = MCA_BASE_VAR_SOURCE_DEFAULT;
        tent_knob_t k;
        if (knob_var_index[i] < 0 || TENT_OK != tent_knob_get(i, &k) ||
            OPAL_SUCCESS != mca_base_var_get_value(knob_var_index[i], NULL, &source, NULL) ||
            MCA_BASE_VAR_SOURCE_DEFAULT == source || NULL == knob_values[i]) {
            continue;
        }
        keys[count] = k.key;
        values[count] = knob_values[i];
        ++count;
    }
    /* The job's key comes from rank 0 through the modex (btl_tent_proc.c):
     * no key file is read or created; handshakes wait for the key. */
    keys[count] = "job_key_file";
    values[count] = "none";
    ++count;
    char error[1024] = "";
    int trc = tent_engine_create_with_overrides(NULL, keys, values, count, "btl_tent_",
                                                &mca_btl_tent_component.engine, error, sizeof error);
    if (TENT_OK != trc) {
        opal_output(0, "btl tent: the component is disabled: %s%s%s", tent_strerror(trc), error[0] ? ": " : "",
                    error);
        rc = OPAL_ERROR;
        goto out;
    }
    rc = OPAL_SUCCESS;
out:
    free(keys);
    free(values);
    return rc;
}

static mca_btl_base_module_t **tent_component_init(int *num_btls, bool enable_progress_threads,
                                                   bool enable_mpi_threads) {
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;
    if (OPAL_SUCCESS != create_engine()) {
        return NULL;
    }
    (void) tent_set_peer_unreachable_callback(mca_btl_tent_component.engine, on_unreachable, NULL);
    mca_btl_base_module_t **btls = malloc(sizeof *btls);
    if (NULL == btls || OPAL_SUCCESS != mca_btl_tent_frag_post_receives() ||
        OPAL_SUCCESS != mca_btl_tent_proc_publish()) {
        free(btls);
        (void) tent_engine_destroy(mca_btl_tent_component.engine);
        mca_btl_tent_component.engine = NULL;
        mca_btl_tent_frag_release_all();
        return NULL;
    }
    btls[0] = &mca_btl_tent_module.super;
    *num_btls = 1;
    return btls;
}

/* Called from opal_progress: drives the engine on this thread (tent's
 * caller_progress) and hands what completed to the PML. */
int mca_btl_tent_component_progress(void) {
    tent_engine_t *engine = mca_btl_tent_component.engine;
    if (NULL == engine) {
        return 0;
    }
    tent_completion_t c[16];
    int n = tent_poll(engine, c, 16);
    for (int i = 0; i < n; ++i) {
        mca_btl_tent_frag_complete(&c[i]);
    }
    mca_btl_tent_endpoint_check_lost();
    return n > 0 ? n : 0;
}
