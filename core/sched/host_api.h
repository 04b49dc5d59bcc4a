/*
 * The host function table handed to plugins (ks_host_api), and the one hook the running
 * scheduler plugs into it: the Permit waiting-pod map.
 *
 * Threads: ks__host_init runs once on the main thread before anything else; the hooks are set
 * before scheduling starts and read-only afterwards.
 */
#ifndef KS_CORE_HOST_API_H
#define KS_CORE_HOST_API_H

#include "kubesched/plugin.h"

/* Interns the well-known symbols. Idempotent. */
void ks__host_init(void);
const ks_host_api *ks__host_api(void);

/* Where bind_pod goes and the store that namespace_labels, pod_owner_selectors and pdbs read are
 * per scheduler, reached through the cycle (ks_cycle_hooks in framework.h).
 *
 * Permit's waiting pods (implemented by the scheduler; NULL hooks answer KS_ENOTFOUND): the one
 * process-wide hook, because ks_permit_allow / ks_permit_reject carry no cycle or scheduler
 * handle (an SDK change would be needed to make it per scheduler). */
typedef int (*ks_permit_hook)(void *ctx, const char *uid, const char *plugin, int allow,
                              const char *message);
void ks__host_set_permit_hook(ks_permit_hook hook, void *ctx);
/* The registry plugins' counters go to (counter_new): the scheduler sets it before it creates
 * the plugins, NULL for none (simulate). Process-wide like the permit hook: a plugin's create
 * has no cycle or scheduler handle. */
struct ks_metrics;
void ks__host_set_metrics(struct ks_metrics *r);

/* ABI 1.8: what the running scheduler offers a gang plugin, process-wide like the permit hook
 * (QueueSort and the waiting-pod walk from a plugin's own thread carry no cycle): the waiting
 * pods, the pod lister, the objects of watched resources, and the offset from the queue clock to
 * Unix time. The scheduler sets it before scheduling starts and clears it (NULL) when freed. */
typedef struct ks_host_sched {
    void *ctx;
    size_t (*waiting_each)(void *ctx, ks_waiting_pod_fn fn, void *fctx);
    size_t (*pods_each)(void *ctx, ks_sym ns, ks_sym key, ks_sym value, ks_pod_visit_fn fn,
                        void *fctx);
    struct ks_custom_store *custom;
    /* ABI 1.9: the PodGroups and their members (NULL while GenericWorkload is off) */
    struct ks_podgroup_store *podgroups;
    int64_t (*now)(void *ctx); /* the scheduler's clock */
    /* object_patch / pod_event, routed to the cluster source (profile: "" without a cycle) */
    int (*object_patch)(void *ctx, const struct ks_resource *res, ks_sym ns, ks_sym name,
                        int status, const char *merge_patch);
    int (*pod_event)(void *ctx, const ks_pod *pod, const char *type, const char *reason,
                     const char *note, const char *profile);
    int64_t unix_offset_ns; /* Unix ns = that clock's ns + this */
    /* ABI 1.10: what the DRA slots read without a cycle (PreEnqueue, hints) */
    struct ks_store *store;
    struct ks_dra_manager *dra;
    uint32_t source_flags;
} ks_host_sched;
void ks__host_set_sched(const ks_host_sched *hs);

#endif
