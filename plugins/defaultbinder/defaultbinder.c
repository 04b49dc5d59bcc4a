/*
 * DefaultBinder: binds the pod to the chosen node through the cluster source (upstream
 * plugins/defaultbinder/default_binder.go: POST pods/<name>/binding). The host does the API call
 * (or the in-memory binding under `simulate`); this plugin only forwards it.
 */
#include "kubesched/plugin.h"

/* bind: a binding thread; may block on the API server. Returns the host's code (KS_SUCCESS, or
 * KS_ERROR with the API error as reason, which re-queues the pod). */
static ks_code default_binder_bind(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                   ks_status *st)
{
    (void)self;
    return ks_bind_pod(cycle, pod, node, st);
}

const ks_plugin_desc ks_plugin_default_binder = {
    .size = sizeof(ks_plugin_desc),
    .name = "DefaultBinder",
    .bind = default_binder_bind,
};
