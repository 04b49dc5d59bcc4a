/*
 * NodeUnschedulable: keeps pods off cordoned nodes (spec.unschedulable: true) unless they tolerate
 * the taint node.kubernetes.io/unschedulable:NoSchedule (upstream
 * plugins/nodeunschedulable/node_unschedulable.go, v1.37, with its trivial PreFilter).
 */
#include "kubesched/plugin.h"
#include "../common/sign.h"

#define ERR_REASON_UNSCHEDULABLE "node(s) were unschedulable"
#define ERR_REASON_UNKNOWN_CONDITION "node(s) had unknown conditions"
#define TAINT_NODE_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

typedef struct node_unschedulable {
    ks_taint taint; /* {node.kubernetes.io/unschedulable, "", NoSchedule}, interned in create */
} node_unschedulable;

/* Upstream v1helper.ToleratesTaint: the effect (when set) and the key (when set) must match, then
 * Exists matches any value and Equal needs the same value. */
static int tolerates(const ks_toleration *t, const ks_taint *taint)
{
    if (t->effect != KS_EFFECT_ALL && t->effect != taint->effect)
        return 0;
    if (t->key != KS_SYM_EMPTY && t->key != taint->key)
        return 0;
    return t->op == KS_TOL_EXISTS || t->value == taint->value;
}

static void *node_unschedulable_create(const ks_args *args, ks_error *err)
{
    (void)args;
    node_unschedulable *pl = ks_alloc(sizeof(*pl));
    if (!pl) {
        ks_error_set(err, "NodeUnschedulable: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    pl->taint.key = ks_intern(TAINT_NODE_UNSCHEDULABLE);
    pl->taint.value = KS_SYM_EMPTY;
    pl->taint.effect = KS_EFFECT_NO_SCHEDULE;
    return pl;
}

static void node_unschedulable_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* pre_filter (v1.37): nothing to compute; upstream added it for the deferred-resize Skip of
 * InPlacePodVerticalScalingSchedulerPreemption (alpha, off), so by default it returns Success
 * and the plugin is counted at PreFilter. Scheduling thread. */
static ks_code node_unschedulable_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                             ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)pod;
    (void)result;
    (void)st;
    return KS_SUCCESS;
}

/* filter: called concurrently for different nodes; reads only the pod, the node and the taint
 * interned at create (read-only afterwards). */
static ks_code node_unschedulable_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                         const ks_node_info *ni, ks_status *st)
{
    const node_unschedulable *pl = self;
    const ks_node *node = ks_node_info_node(ni);
    (void)cycle;
    if (!node) {
        ks_status_reason(st, ERR_REASON_UNKNOWN_CONDITION);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (!ks_node_unschedulable(node))
        return KS_SUCCESS;
    const ks_toleration *tols;
    size_t n = ks_pod_tolerations(pod, &tols);
    for (size_t i = 0; i < n; i++)
        if (tolerates(&tols[i], &pl->taint))
            return KS_SUCCESS;
    ks_status_reason(st, ERR_REASON_UNSCHEDULABLE);
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* upstream isSchedulableAfterTargetPodTolerationChange (v1.37): Queue only when the pod's new
 * tolerations tolerate node.kubernetes.io/unschedulable:NoSchedule. (Tolerations can only be
 * added, and a pod that had one would not have been rejected here.) Event thread; pure. */
static ks_queueing_hint node_unschedulable_after_toleration_change(void *self, const ks_pod *pod,
                                                                   const ks_event_info *ev)
{
    const node_unschedulable *pl = self;
    const ks_pod *modified = ev->new_pod ? ev->new_pod : pod;
    const ks_toleration *tols;
    size_t n = ks_pod_tolerations(modified, &tols);
    for (size_t i = 0; i < n; i++)
        if (tolerates(&tols[i], &pl->taint))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterNodeChange: Queue when the node was uncordoned, or added
 * schedulable. Event thread; pure. */
static ks_queueing_hint node_unschedulable_after_node_change(void *self, const ks_pod *pod,
                                                             const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    if (!ev->new_node)
        return KS_QUEUE; /* not a Node event: cannot tell */
    int now = ks_node_unschedulable(ev->new_node);
    if ((ev->old_node && ks_node_unschedulable(ev->old_node) && !now) || (!ev->old_node && !now))
        return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37): Node Add|UpdateNodeTaint (a change of spec.unschedulable is
 * classified as UpdateNodeTaint) and TargetPod UpdatePodToleration. */
static size_t node_unschedulable_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT},
         node_unschedulable_after_node_change},
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS},
         node_unschedulable_after_toleration_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream NodeUnschedulable.SignPod: the tolerations (the unschedulable taint's). */
static ks_code node_unschedulable_sign(void *self, const ks_pod *pod, ks_signature *sig,
                                       ks_status *st)
{
    (void)self;
    return ks_sign_tolerations(pod, sig, st);
}

const ks_plugin_desc ks_plugin_node_unschedulable = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeUnschedulable",
    .create = node_unschedulable_create,
    .destroy = node_unschedulable_destroy,
    .pre_filter = node_unschedulable_pre_filter,
    .filter = node_unschedulable_filter,
    .events_with_hints = node_unschedulable_events,
    .sign = node_unschedulable_sign,
};
