/* Endpoints: one per peer, over the tent connection this process opens to
 * it. Failure state lives here: tent fails over between rails by itself,
 * so the only failure the PML ever hears of is tent's "peer unreachable",
 * and it hears it once per peer. */
#include "btl_tent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"
#include "opal/util/proc.h"

/* Peers tent reported unreachable, waiting for btl_progress (tent calls
 * back on whichever thread drives it, where the PML must not be entered). */
#define LOST_MAX 64
static tent_peer_t *lost_peers[LOST_MAX];
static int lost_count;
static bool lost_overflow;

mca_btl_base_endpoint_t *mca_btl_tent_endpoint_create(opal_proc_t *proc) {
    void *blob = NULL;
    size_t length = 0;
    if (OPAL_SUCCESS != mca_btl_tent_proc_address(proc, &blob, &length)) {
        return NULL;
    }
    tent_peer_t *peer = NULL;
    int rc = tent_connect(mca_btl_tent_component.engine, blob, length, &peer);
    free(blob);
    if (TENT_OK != rc) {
        opal_output(0, "btl tent: cannot connect to %s on %s: %s", OPAL_NAME_PRINT(proc->proc_name),
                    NULL != proc->proc_hostname ? proc->proc_hostname : "(unknown host)", tent_strerror(rc));
        return NULL;
    }
    mca_btl_base_endpoint_t *ep = calloc(1, sizeof *ep);
    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->peer = peer;
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    ep->next = mca_btl_tent_component.endpoints;
    mca_btl_tent_component.endpoints = ep;
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
    return ep;
}

void mca_btl_tent_endpoint_destroy(mca_btl_base_endpoint_t *ep) {
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    for (mca_btl_base_endpoint_t **p = &mca_btl_tent_component.endpoints; *p; p = &(*p)->next) {
        if (*p == ep) {
            *p = ep->next;
            break;
        }
    }
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
    free(ep);
}

void mca_btl_tent_endpoint_note_lost(tent_peer_t *peer) {
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    if (lost_count < LOST_MAX) {
        lost_peers[lost_count++] = peer;
    } else {
        lost_overflow = true;
    }
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
}

void mca_btl_tent_endpoint_check_lost(void) {
    if (0 == __atomic_load_n(&lost_count, __ATOMIC_RELAXED) && !lost_overflow) {
        return;
    }
    mca_btl_base_endpoint_t *to_report[LOST_MAX];
    int n = 0;
    pthread_mutex_lock(&mca_btl_tent_component.lock);
    for (mca_btl_base_endpoint_t *ep = mca_btl_tent_component.endpoints; ep; ep = ep->next) {
        bool lost = false;
        for (int i = 0; i < lost_count; ++i) {
            lost = lost || lost_peers[i] == ep->peer;
        }
        if (lost && !ep->lost) {
            ep->lost = true;
            /* A peer that leaves with nothing owed to it (its MPI_Finalize)
             * is no failure; work outstanding to it is, and so is any later
             * send to it. */
            if (ep->outstanding > 0 && n < LOST_MAX) {
                to_report[n++] = ep;
            }
        }
    }
    lost_count = 0;
    lost_overflow = false;
    pthread_mutex_unlock(&mca_btl_tent_component.lock);
    for (int i = 0; i < n; ++i) {
        mca_btl_tent_endpoint_report(to_report[i], TENT_ERR_PEER_UNREACHABLE);
    }
}

/* "state" of tent_rail_stats_t */
static const char *rail_state_name(int state) {
    switch (state) {
    case 0: return "healthy";
    case 1: return "degraded";
    case 2: return "paused";
    default: return "unknown";
    }
}

void mca_btl_tent_endpoint_report(mca_btl_base_endpoint_t *ep, int status) {
    if (ep->reported || mca_btl_tent_component.finalizing) {
        return;
    }
    ep->reported = true;
    ep->lost = true;
    /* The message names the peer and every rail tent had to it, with what
     * happened on each: the one place a user learns why the job ended. */
    char rails[2048] = "";
    size_t used = 0;
    tent_rail_stats_t stats[32];
    int n = tent_rail_stats(mca_btl_tent_component.engine, stats, 32);
    for (int i = 0; i < n && i < 32; ++i) {
        if (stats[i].peer != ep->peer) {
            continue;
        }
        int w = snprintf(rails + used, sizeof rails - used,
                         "  rail %u: %s (%s), %llu operations, %llu errors, %llu moved to another rail\n",
                         (unsigned) stats[i].rail_id, stats[i].name, rail_state_name(stats[i].state),
                         (unsigned long long) stats[i].ops, (unsigned long long) stats[i].errors,
                         (unsigned long long) stats[i].failovers);
        if (w < 0 || (size_t) w >= sizeof rails - used) {
            break;
        }
        used += (size_t) w;
    }
    if (0 == used) {
        snprintf(rails, sizeof rails, "  (no rail left to it)\n");
    }
    const char *host = NULL != ep->proc->proc_hostname ? ep->proc->proc_hostname : "(unknown host)";
    opal_output(0,
                "--------------------------------------------------------------------------\n"
                "The tent BTL lost every path to a peer process: tent tried each rail\n"
                "and TCP, and none is left.\n\n"
                "  Local host:   %s\n"
                "  Local process: %s\n"
                "  Peer process: %s on %s\n"
                "  Error:        %s\n"
                "  Rails to the peer:\n%s\n"
                "The job cannot continue; see mca_btl_tent(7), \"FAILURES\".\n"
                "--------------------------------------------------------------------------",
                opal_process_info.nodename, OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), OPAL_NAME_PRINT(ep->proc->proc_name),
                host, tent_strerror(status), rails);
    if (NULL != mca_btl_tent_module.error_cb) {
        char info[256];
        snprintf(info, sizeof info, "tent: every path to %s is gone", host);
        mca_btl_tent_module.error_cb(&mca_btl_tent_module.super, MCA_BTL_ERROR_FLAGS_FATAL, ep->proc, info);
    }
}
