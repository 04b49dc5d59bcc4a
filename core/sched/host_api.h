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

#endif
