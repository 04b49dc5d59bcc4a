/*
 * NodeName: a pod that names a node in spec.nodeName fits only that node (upstream
 * plugins/nodename/node_name.go, v1.37). A pod with nodeName set is normally never scheduled; the
 * check matters for preemption dry runs and simulations that reuse the filters.
 *
 *   PreFilter  (v1.37) restricts the cycle to {spec.nodeName} (upstream PreFilterResult); the
 *              framework gives every other node, and every node when the named one does not
 *              exist, the absent-node status UnschedulableAndUnresolvable "node(s) didn't satisfy
 *              plugin(s) [NodeName]", so preemption never targets them. No nodeName: Success
 *              without a result (all nodes). No PreFilter extensions.
 *   Filter     the v1.34 check, kept as upstream keeps it: only the named node passes.
 */
#include "kubesched/plugin.h"
#include "../common/sign.h"

#define ERR_REASON "node(s) didn't match the requested node name"

/* pre_filter: scheduling thread, once per cycle; reads only the pod. */
static ks_code node_name_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                    ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)st;
    ks_sym want = ks_pod_node_name(pod);
    if (want != KS_SYM_EMPTY)
        ks_prefilter_result_add_node(result, want);
    return KS_SUCCESS;
}

/* filter: called concurrently for different nodes; reads only the pod and the node (two ks_sym
 * ids), no cycle state. */
static ks_code node_name_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                const ks_node_info *ni, ks_status *st)
{
    (void)self;
    (void)cycle;
    ks_sym want = ks_pod_node_name(pod);
    if (want == KS_SYM_EMPTY || want == ks_node_name(ks_node_info_node(ni)))
        return KS_SUCCESS;
    ks_status_reason(st, ERR_REASON);
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* upstream EventsToRegister (v1.37): Node/Add with no hint ("the scheduling of Pods will be
 * always retried with backoff when this Event happens", the same as Queue): a node's name never
 * changes, so only a new node can turn a rejection into a fit. Main thread. */
static size_t node_name_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {{{KS_RES_NODE, KS_ACT_ADD}, NULL}};
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream NodeName.SignPod: spec.nodeName. */
static ks_code node_name_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    ks_jbuf b = {0};
    ks_jb_str(&b, ks_sign_sym(ks_pod_node_name(pod)));
    return ks_jb_sign(&b, sig, KS_SIGN_NODE_NAME, st);
}

const ks_plugin_desc ks_plugin_node_name = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeName",
    .pre_filter = node_name_pre_filter,
    .filter = node_name_filter,
    .events_with_hints = node_name_events,
    .sign = node_name_sign,
};
