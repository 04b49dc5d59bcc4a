/*
 * The host function table handed to plugins (ks_host_api), and the hooks the running scheduler
 * (or a test harness) plugs into it: where bind_pod goes, and the Permit waiting-pod map.
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

/* The binding side effect: the scheduler routes it to its cluster source. Binding threads. */
typedef ks_code (*ks_bind_hook)(void *ctx, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                ks_status *st);
void ks__host_set_bind_hook(ks_bind_hook hook, void *ctx);

/* Permit's waiting pods (implemented by the scheduler; NULL hooks answer KS_ENOTFOUND). */
typedef int (*ks_permit_hook)(void *ctx, const char *uid, const char *plugin, int allow,
                              const char *message);
void ks__host_set_permit_hook(ks_permit_hook hook, void *ctx);

/* The store of Namespaces, Services, ... that namespace_labels / pod_owner_selectors read. */
struct ks_store;
void ks__host_set_store(struct ks_store *store);

#endif
