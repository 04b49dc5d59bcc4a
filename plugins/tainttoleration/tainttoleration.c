/*
 * TaintToleration (upstream plugins/tainttoleration/taint_toleration.go, v1.37).
 *
 *   Filter          the first NoSchedule/NoExecute taint of the node (spec order) that no
 *                   toleration of the pod tolerates rejects the node, UnschedulableAndUnresolvable
 *                   "node(s) had untolerated taint(s)". PreferNoSchedule never filters.
 *   PreScore        keeps the pod's tolerations whose effect is empty or PreferNoSchedule.
 *   Score           the number of PreferNoSchedule taints of the node those do not tolerate.
 *   NormalizeScore  DefaultNormalizeScore(100, reverse): max 0 -> all 100, else 100 - 100*raw/max.
 */
#include "kubesched/plugin.h"
#include "../common/normalize.h"
#include "../common/sign.h"

#define ERR_REASON_UNTOLERATED "node(s) had untolerated taint(s)"

/* The PreScore state: the tolerations that can matter for PreferNoSchedule taints. Allocated from
 * the cycle arena; never changed after PreScore, so Score workers share it and a cloned cycle state
 * shares the pointer. */
typedef struct prescore_state {
    size_t n;
    ks_toleration tols[];
} prescore_state;

/* Cycle-state key: compared by address (not const, so that no constant merging can share it). */
static char prescore_key;

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

static int any_tolerates(const ks_toleration *tols, size_t n, const ks_taint *taint)
{
    for (size_t i = 0; i < n; i++)
        if (tolerates(&tols[i], taint))
            return 1;
    return 0;
}

/* pre_filter (v1.37): nothing to compute; upstream added it for the deferred-resize Skip of
 * InPlacePodVerticalScalingSchedulerPreemption (alpha, off), so by default it returns Success
 * and the plugin is counted at PreFilter. Scheduling thread. */
static ks_code taint_toleration_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                           ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)pod;
    (void)result;
    (void)st;
    return KS_SUCCESS;
}

/* filter: called concurrently for different nodes; reads only the pod and the node. */
static ks_code taint_toleration_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                       const ks_node_info *ni, ks_status *st)
{
    (void)self;
    (void)cycle;
    const ks_taint *taints;
    const ks_toleration *tols;
    size_t ntaints = ks_node_taints(ks_node_info_node(ni), &taints);
    if (ntaints == 0)
        return KS_SUCCESS;
    size_t ntols = ks_pod_tolerations(pod, &tols);
    for (size_t i = 0; i < ntaints; i++) {
        const ks_taint *t = &taints[i];
        if (t->effect != KS_EFFECT_NO_SCHEDULE && t->effect != KS_EFFECT_NO_EXECUTE)
            continue;
        if (any_tolerates(tols, ntols, t))
            continue;
        /* v1.37 names no taint (1.34 said "untolerated taint {key: value}"); the taint is only
         * logged upstream. */
        ks_status_reason(st, ERR_REASON_UNTOLERATED);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

/* pre_score: scheduling thread, once per cycle. */
static ks_code taint_toleration_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                          const ks_node_info *const *nodes, size_t nnodes,
                                          ks_status *st)
{
    (void)self;
    (void)nodes;
    (void)nnodes;
    const ks_toleration *tols;
    size_t ntols = ks_pod_tolerations(pod, &tols);
    prescore_state *s = ks_cycle_alloc(cycle, sizeof(*s) + ntols * sizeof(s->tols[0]));
    if (!s) {
        ks_status_reason(st, "TaintToleration: out of memory in PreScore");
        return KS_ERROR;
    }
    s->n = 0;
    for (size_t i = 0; i < ntols; i++)
        if (tols[i].effect == KS_EFFECT_ALL || tols[i].effect == KS_EFFECT_PREFER_NO_SCHEDULE)
            s->tols[s->n++] = tols[i];
    if (ks_cycle_write(cycle, &prescore_key, s, NULL) != 0) {
        ks_status_reason(st, "TaintToleration: cannot write the PreScore state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* score: called concurrently for different nodes; the PreScore state is read-only here. Without
 * it (PreScore not run) the pod's own tolerations give the same count: a toleration with another
 * non-empty effect never tolerates a PreferNoSchedule taint. */
static ks_code taint_toleration_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                      const ks_node_info *ni, int64_t *score, ks_status *st)
{
    (void)self;
    (void)st;
    const ks_toleration *tols;
    size_t ntols;
    const prescore_state *s = ks_cycle_read(cycle, &prescore_key);
    if (s) {
        tols = s->tols;
        ntols = s->n;
    } else {
        ntols = ks_pod_tolerations(pod, &tols);
    }
    const ks_taint *taints;
    size_t ntaints = ks_node_taints(ks_node_info_node(ni), &taints);
    int64_t count = 0;
    for (size_t i = 0; i < ntaints; i++) {
        if (taints[i].effect != KS_EFFECT_PREFER_NO_SCHEDULE)
            continue;
        if (!any_tolerates(tols, ntols, &taints[i]))
            count++;
    }
    *score = count;
    return KS_SUCCESS;
}

/* normalize_score: scheduling thread, once per cycle. Fewer untolerated taints score higher. */
static ks_code taint_toleration_normalize(void *self, ks_cycle *cycle, const ks_pod *pod,
                                          ks_node_score *scores, size_t n, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)pod;
    (void)st;
    ks_default_normalize_score(KS_MAX_NODE_SCORE, 1, scores, n);
    return KS_SUCCESS;
}

/* Whether node has a NoSchedule or NoExecute taint that no toleration of pod tolerates (upstream
 * FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc). */
static int has_untolerated_taint(const ks_node *node, const ks_pod *pod)
{
    const ks_taint *taints;
    const ks_toleration *tols;
    size_t ntaints = ks_node_taints(node, &taints), ntols = ks_pod_tolerations(pod, &tols);
    for (size_t i = 0; i < ntaints; i++)
        if ((taints[i].effect == KS_EFFECT_NO_SCHEDULE ||
             taints[i].effect == KS_EFFECT_NO_EXECUTE) &&
            !any_tolerates(tols, ntols, &taints[i]))
            return 1;
    return 0;
}

/* upstream isSchedulableAfterNodeChange (v1.37): Queue when the node had an untolerated taint (or
 * is new) and has none now. Event thread; pure. */
static ks_queueing_hint taint_toleration_after_node_change(void *self, const ks_pod *pod,
                                                           const ks_event_info *ev)
{
    (void)self;
    if (!ev->new_node)
        return KS_QUEUE; /* not a Node event: cannot tell */
    int was_untolerated = ev->old_node ? has_untolerated_taint(ev->old_node, pod) : 1;
    int is_untolerated = has_untolerated_taint(ev->new_node, pod);
    return was_untolerated && !is_untolerated ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37): Node Add|UpdateNodeTaint with the hint above; TargetPod
 * UpdatePodToleration always Queue (isSchedulableAfterTargetPodTolerationChange; NULL hint). */
static size_t taint_toleration_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT}, taint_toleration_after_node_change},
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS}, NULL},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream TaintToleration.SignPod: the tolerations. */
static ks_code taint_toleration_sign(void *self, const ks_pod *pod, ks_signature *sig,
                                     ks_status *st)
{
    (void)self;
    return ks_sign_tolerations(pod, sig, st);
}

const ks_plugin_desc ks_plugin_taint_toleration = {
    .size = sizeof(ks_plugin_desc),
    .name = "TaintToleration",
    .pre_filter = taint_toleration_pre_filter,
    .filter = taint_toleration_filter,
    .pre_score = taint_toleration_pre_score,
    .score = taint_toleration_score,
    .normalize_score = taint_toleration_normalize,
    .events_with_hints = taint_toleration_events,
    .sign = taint_toleration_sign,
};
