/*
 * GangScheduling (upstream plugins/gangscheduling/gangscheduling.go, v1.37.2; GenericWorkload
 * gate, Beta, off by default): "all-or-nothing" for the pods of a scheduling.k8s.io/v1beta1
 * PodGroup whose spec.schedulingPolicy is gang, the pods naming it in
 * spec.schedulingGroup.podGroupName.
 *
 *   PreEnqueue  a member stays out of the active queue until its PodGroup exists ("waiting for
 *               pods's pod group \"pg\" to appear in scheduling queue") and the group has
 *               minCount pods the scheduler knows ("waiting for minCount pods from a gang to
 *               appear in scheduling queue"), both UnschedulableAndUnresolvable.
 *   Permit      a member waits (5 minutes) until minCount members are scheduled, assumed or
 *               bound ("waiting for minCount pods from a gang to be scheduled"), asking for its
 *               unscheduled siblings to be activated; the member that makes the count allows
 *               every assumed sibling waiting on Permit.
 *   Events      an unscheduled or assigned pod added to the same group, the PodGroup added, and
 *               its update that lowers gang.minCount.
 *   PlacementFeasible, below.
 *
 * What kubesched leaves out: the CompositePodGroup hierarchy (its gate, Alpha, does not exist in
 * kubesched: upstream's "CPG=false" behaviour throughout).
 *
 *   PlacementFeasible  in the PodGroup scheduling cycle (core/sched/schedule_one.c), before and
 *               after each member: "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
 *               stops the cycle, "minCount (4) is not yet satisfied: ..." goes on. In that cycle
 *               every member is assumed before the first Permit, so Permit allows at once; the
 *               barrier matters for a member scheduled alone.
 *
 * Reads the PodGroups and the members' states through the SDK (ABI 1.9: ks_pod_group_get,
 * ks_pod_group_members_each), which answer "no group" while the gate is off.
 */
#include <stdio.h>
#include <string.h>

#include "kubesched/plugin.h"

#define NAME "GangScheduling"
/* upstream permitTimeoutDuration */
#define PERMIT_TIMEOUT_MS (5 * 60 * 1000)

/* PreEnqueue (upstream preEnqueueHierarchiesDisabled): the event thread that adds the pod or
 * moves it; reads the PodGroup store and the member table, no blocking. */
static ks_code gang_pre_enqueue(void *self, const ks_pod *pod, ks_status *st)
{
    (void)self;
    ks_sym group = ks_pod_scheduling_group(pod);
    if (group == KS_SYM_ABSENT)
        return KS_SUCCESS;
    ks_sym ns = ks_pod_namespace(pod);
    const ks_pod_group *pg = ks_pod_group_get(ns, group);
    if (!pg) {
        /* The pod is unschedulable until its PodGroup object is created. */
        ks_status_reasonf(st, "waiting for pods's pod group \"%s\" to appear in scheduling queue",
                          ks_sym_str(group));
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    const ks_pod_group_view *v = ks_pod_group_view_of(pg);
    int gang = v->policy == KS_PG_POLICY_GANG;
    int32_t min_count = v->min_count;
    ks_pod_group_release(pg);
    /* This plugin only cares about pods with a Gang scheduling policy. */
    if (!gang)
        return KS_SUCCESS;
    size_t all;
    ks_pod_group_member_counts(ns, group, &all, NULL); /* upstream AllPodsCount */
    if (all < (size_t)(min_count > 0 ? min_count : 0)) {
        ks_status_reason(st, "waiting for minCount pods from a gang to appear in scheduling queue");
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    /* The quorum is met, allow the pod to enter the scheduling queue. */
    return KS_SUCCESS;
}

typedef struct permit_walk {
    ks_cycle *cycle;
    size_t n; /* pods activated or allowed */
} permit_walk;

/* upstream handle.Activate(unscheduledPods): the siblings still pending may have been waiting for
 * this pod (the activation is done when this scheduling cycle ends). */
static void activate_unscheduled(void *ctx, const ks_pod *pod, ks_pod_group_member_state st)
{
    permit_walk *w = ctx;
    if (st != KS_PG_MEMBER_UNSCHEDULED)
        return;
    ks_activate_pod(w->cycle, pod);
    w->n++;
}

/* The quorum is met: every assumed sibling waiting on Permit may go (a pod not waiting, this one
 * included, answers KS_ENOTFOUND, as upstream's GetWaitingPod returns nil). */
static void allow_assumed(void *ctx, const ks_pod *pod, ks_pod_group_member_state st)
{
    permit_walk *w = ctx;
    if (st != KS_PG_MEMBER_ASSUMED)
        return;
    if (ks_permit_allow(ks_pod_uid(pod), NAME) == 0)
        w->n++;
}

/* Permit (upstream Permit and permitPodGroup): the scheduling thread; pod is assumed already, so
 * it counts as scheduled. */
static ks_code gang_permit(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                           int64_t *timeout_ms, ks_status *st)
{
    (void)self;
    (void)node;
    ks_sym group = ks_pod_scheduling_group(pod);
    if (group == KS_SYM_ABSENT)
        return KS_SUCCESS;
    ks_sym ns = ks_pod_namespace(pod);
    const ks_pod_group *pg = ks_pod_group_get(ns, group);
    if (!pg) {
        /* upstream: the lister's NotFound error, wrapped (fwk.AsStatus: Error) */
        ks_status_reasonf(st,
                          "failed to get podGroup %s/%s: podgroup.scheduling.k8s.io \"%s\" not "
                          "found",
                          ks_sym_str(ns), ks_sym_str(group), ks_sym_str(group));
        return KS_ERROR;
    }
    const ks_pod_group_view *v = ks_pod_group_view_of(pg);
    int gang = v->policy == KS_PG_POLICY_GANG;
    int32_t min_count = v->min_count;
    ks_pod_group_release(pg);
    if (!gang)
        return KS_SUCCESS;
    size_t scheduled;
    ks_pod_group_member_counts(ns, group, NULL, &scheduled); /* upstream ScheduledPodsCount */
    permit_walk w = {cycle, 0};
    if (scheduled < (size_t)(min_count > 0 ? min_count : 0)) {
        ks_pod_group_members_each(ns, group, activate_unscheduled, &w);
        if (ks_log_enabled(4))
            ks_log(4,
                   "Quorum is not met for a gang. Waiting for another pod to allow pod=%s/%s "
                   "schedulingGroup=%s activatedPods=%zu",
                   ks_sym_str(ns), ks_sym_str(ks_pod_name(pod)), ks_sym_str(group), w.n);
        ks_status_reason(st, "waiting for minCount pods from a gang to be scheduled");
        *timeout_ms = PERMIT_TIMEOUT_MS;
        return KS_WAIT;
    }
    /* The quorum is met. Allow this pod and signal all other waiting pods from the same gang to
     * proceed. */
    ks_pod_group_members_each(ns, group, allow_assumed, &w);
    if (ks_log_enabled(4))
        ks_log(4,
               "Quorum is met for a gang. Allowing other pods from a gang waiting on permit "
               "pod=%s/%s schedulingGroup=%s allowedPods=%zu",
               ks_sym_str(ns), ks_sym_str(ks_pod_name(pod)), ks_sym_str(group), w.n);
    return KS_SUCCESS;
}

/* PlacementFeasible (upstream PlacementFeasible and getMinCount): enforces minCount in the
 * PodGroup scheduling cycle; a group that is no gang counts as minCount 1. Scheduling thread. */
static ks_code gang_placement_feasible(void *self, const ks_pod_group *group, int32_t scheduled,
                                       int32_t remaining, ks_status *st)
{
    (void)self;
    const ks_pod_group_view *v = ks_pod_group_view_of(group);
    int32_t min_count = v->policy == KS_PG_POLICY_GANG ? v->min_count : 1;
    if ((int64_t)remaining + scheduled < min_count) {
        /* minCount can't be satisfied because there are not enough remaining pods. */
        ks_status_reasonf(st, "minCount (%d) cannot be satisfied: %d scheduled, %d remaining",
                          (int)min_count, (int)scheduled, (int)remaining);
        return KS_UNSCHEDULABLE;
    }
    if (scheduled < min_count) {
        /* minCount might be satisfied once more remaining pods are evaluated. */
        ks_status_reasonf(st, "minCount (%d) is not yet satisfied: %d scheduled, %d remaining",
                          (int)min_count, (int)scheduled, (int)remaining);
        return KS_WAIT;
    }
    /* minCount is satisfied. */
    return KS_SUCCESS;
}

/* ---- EnqueueExtensions (hints: pure, under the queue's lock) -------------------------------- */

/* Whether the pending pod belongs to group ns/name (upstream areSameHierarchy without
 * CompositePodGroups: the same PodGroupKey). */
static int same_group(const ks_pod *pod, ks_sym ns, ks_sym name)
{
    ks_sym g = ks_pod_scheduling_group(pod);
    return g != KS_SYM_ABSENT && ks_pod_namespace(pod) == ns && g == name;
}

/* upstream isSchedulableAfterPodAdded: a new pod (unscheduled or pre-bound) of the same group
 * might be the one that completes the gang's minCount. */
static ks_queueing_hint after_pod_added(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    const ks_pod *added = ev->new_pod;
    if (!added)
        return KS_QUEUE; /* upstream: a conversion error queues the pod */
    ks_sym g = ks_pod_scheduling_group(added);
    if (ks_pod_scheduling_group(pod) == KS_SYM_ABSENT || g == KS_SYM_ABSENT)
        return KS_QUEUE_SKIP;
    return same_group(pod, ks_pod_namespace(added), g) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterPodGroupAdded: the pod's PodGroup appeared. */
static ks_queueing_hint after_pod_group_added(void *self, const ks_pod *pod,
                                              const ks_event_info *ev)
{
    (void)self;
    if (!ev->new_obj)
        return KS_QUEUE;
    const ks_pod_group_view *v = ks_pod_group_view_of(ev->new_obj);
    if (ks_pod_scheduling_group(pod) == KS_SYM_ABSENT)
        return KS_QUEUE_SKIP;
    return same_group(pod, v->ns, v->name) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterPodGroupUpdated: only a gang policy whose minCount decreased. */
static ks_queueing_hint after_pod_group_updated(void *self, const ks_pod *pod,
                                                const ks_event_info *ev)
{
    (void)self;
    if (!ev->old_obj || !ev->new_obj)
        return KS_QUEUE;
    const ks_pod_group_view *o = ks_pod_group_view_of(ev->old_obj);
    const ks_pod_group_view *n = ks_pod_group_view_of(ev->new_obj);
    if (ks_pod_scheduling_group(pod) == KS_SYM_ABSENT)
        return KS_QUEUE_SKIP;
    if (!same_group(pod, n->ns, n->name))
        return KS_QUEUE_SKIP;
    /* Updates to non-gang policies will not make the waiting pods schedulable. */
    if (n->policy != KS_PG_POLICY_GANG || o->policy != KS_PG_POLICY_GANG)
        return KS_QUEUE_SKIP;
    /* If the gang scheduling policy minCount did not decrease, it will not make the waiting pods
     * schedulable. */
    if (n->min_count >= o->min_count)
        return KS_QUEUE_SKIP;
    return KS_QUEUE;
}

/* upstream EventsToRegister without CompositePodGroups. spec.schedulingGroup is immutable, so
 * no Pod/Update registration. Main thread. */
static size_t gang_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    const ks_cluster_event_hint ev[] = {
        {{KS_RES_UNSCHEDULED_POD, KS_ACT_ADD}, after_pod_added},
        {{KS_RES_ASSIGNED_POD, KS_ACT_ADD}, after_pod_added},
        {{KS_RES_POD_GROUP, KS_ACT_ADD}, after_pod_group_added},
        {{KS_RES_POD_GROUP, KS_ACT_UPDATE_ANY}, after_pod_group_updated},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

const ks_plugin_desc ks_plugin_gang_scheduling = {
    .size = sizeof(ks_plugin_desc),
    .name = NAME,
    .pre_enqueue = gang_pre_enqueue,
    .permit = gang_permit,
    .events_with_hints = gang_events,
    .placement_feasible = gang_placement_feasible,
};
