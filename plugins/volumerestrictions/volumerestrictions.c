/*
 * VolumeRestrictions (upstream plugins/volumerestrictions/volume_restrictions.go, v1.37).
 *
 *   PreFilter  the names of the pod's persistentVolumeClaim claims whose access modes include
 *              ReadWriteOncePod, and how many of them a pod of the snapshot already uses
 *              (upstream StorageInfos().IsPVCUsedByPods); a claim that does not exist:
 *              UnschedulableAndUnresolvable `persistentvolumeclaim "x" not found`. Skip when the
 *              pod has no in-line disk to compare and no claim in use.
 *   AddPod /   the count follows the pods the framework adds or removes (nominated pods,
 *   RemovePod  preemption's dry runs), by claim name as upstream counts them.
 *   Filter     an in-line GCE PD, AWS EBS, RBD or iSCSI volume that conflicts with a volume of a
 *              pod on the node -> Unschedulable "node(s) had no available disk"; then a
 *              ReadWriteOncePod claim in use -> Unschedulable "node(s) unavailable due to
 *              PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another
 *              pod" (Unschedulable, not Unresolvable: preemption may free it).
 *   Events     an assigned pod deleted (hint: it had a conflicting disk or one of the pod's
 *              claims), a node added, a claim added (hint: one of the pod's).
 */
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/sign.h"

#define ERR_REASON_DISK_CONFLICT "node(s) had no available disk"
#define ERR_REASON_RWOP_CONFLICT                                                                   \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "  \
    "in-use by another pod"

/* PreFilter state (upstream preFilterState). names is shared by clones (immutable, in the
 * original cycle's arena, which outlives its clones); count changes with AddPod / RemovePod. */
typedef struct prefilter_state {
    size_t nnames;
    const ks_sym *names; /* the pod's ReadWriteOncePod claims, distinct */
    int64_t count;       /* conflictingPVCRefCount */
} prefilter_state;

static char prefilter_key;

static void *vr_create(const ks_args *args, ks_error *err)
{
    (void)args;
    (void)err;
    return (void *)&prefilter_key; /* no configuration: any non-NULL pointer */
}

static void vr_destroy(void *self) { (void)self; }

/* upstream needsRestrictionsCheck */
static int needs_check(const ks_pod_volume *v)
{
    return v->source == KS_VOLSRC_GCE_PD || v->source == KS_VOLSRC_AWS_EBS ||
           v->source == KS_VOLSRC_RBD || v->source == KS_VOLSRC_ISCSI;
}

/* upstream haveOverlap */
static int have_overlap(const ks_sym *a, uint32_t na, const ks_sym *b, uint32_t nb)
{
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++)
            if (a[i] == b[j])
                return 1;
    return 0;
}

/* upstream isVolumeConflict: v against every volume of an existing pod. */
static int volume_conflict(const ks_pod_volume *v, const ks_pod *existing)
{
    const ks_pod_volume *ev;
    size_t n = ks_pod_volumes(existing, &ev);
    for (size_t i = 0; i < n; i++) {
        const ks_pod_volume *e = &ev[i];
        if (e->source != v->source)
            continue;
        switch (v->source) {
        case KS_VOLSRC_GCE_PD:
            /* the same disk conflicts unless both mount it read-only */
            if (v->id == e->id && !(v->read_only && e->read_only))
                return 1;
            break;
        case KS_VOLSRC_AWS_EBS:
            if (v->id == e->id)
                return 1;
            break;
        case KS_VOLSRC_ISCSI:
            /* the same IQN: one read-write mount at most */
            if (v->id == e->id && !(v->read_only && e->read_only))
                return 1;
            break;
        case KS_VOLSRC_RBD:
            /* the same image: a shared monitor, the same pool and image name */
            if (have_overlap(v->monitors, v->nmonitors, e->monitors, e->nmonitors) &&
                v->pool == e->pool && v->id == e->id && !(v->read_only && e->read_only))
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* upstream satisfyVolumeConflicts for a set of existing pods. */
static int satisfies_volume_conflicts(const ks_pod *pod, const ks_pod *const *pods, size_t npods)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++) {
        if (!needs_check(&vols[i]))
            continue;
        for (size_t j = 0; j < npods; j++)
            if (volume_conflict(&vols[i], pods[j]))
                return 0;
    }
    return 1;
}

/* upstream conflictingPVCRefCountForPod: the other pod's claims among the names (by name only,
 * as upstream compares them). */
static int64_t ref_count_for_pod(const prefilter_state *s, const ks_pod *other)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(other, &vols);
    int64_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (vols[i].source != KS_VOLSRC_PVC)
            continue;
        for (size_t j = 0; j < s->nnames; j++)
            if (s->names[j] == vols[i].claim) {
                c++;
                break;
            }
    }
    return c;
}

static void *state_clone(ks_cycle *into, const void *data)
{
    const prefilter_state *s = data;
    prefilter_state *c = ks_cycle_alloc(into, sizeof(*c));
    if (c)
        *c = *s;
    return c;
}

static const ks_state_ops k_state_ops = {state_clone, NULL};

/* pre_filter: scheduling thread, once per cycle. */
static ks_code vr_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                             ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)result;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    ks_sym ns = ks_pod_namespace(pod);
    int check = 0;
    for (size_t i = 0; i < n && !check; i++)
        check = needs_check(&vols[i]);
    ks_sym *names = n ? ks_cycle_alloc(cycle, n * sizeof(ks_sym)) : NULL;
    size_t nnames = 0;
    if (n && !names) {
        ks_status_reason(st, "VolumeRestrictions: out of memory in PreFilter");
        return KS_ERROR;
    }
    /* upstream readWriteOncePodPVCsForPod */
    for (size_t i = 0; i < n; i++) {
        if (vols[i].source != KS_VOLSRC_PVC)
            continue;
        const ks_pvc *pvc = ks_cycle_pvc(cycle, ns, vols[i].claim);
        if (!pvc) {
            ks_status_reasonf(st, "persistentvolumeclaim \"%s\" not found",
                              ks_sym_str(vols[i].claim));
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        if (!(ks_pvc_view_of(pvc)->access_modes & KS_ACCESS_READ_WRITE_ONCE_POD))
            continue;
        int dup = 0;
        for (size_t j = 0; j < nnames && !dup; j++)
            dup = names[j] == vols[i].claim;
        if (!dup)
            names[nnames++] = vols[i].claim;
    }
    /* upstream calPreFilterState: at most one pod can use a ReadWriteOncePod claim */
    int64_t count = 0;
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    for (size_t j = 0; j < nnames; j++)
        count += ks_snapshot_pvc_in_use(snap, ns, names[j]) != 0;
    if (!check && count == 0)
        return KS_SKIP;
    prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    if (!s) {
        ks_status_reason(st, "VolumeRestrictions: out of memory in PreFilter");
        return KS_ERROR;
    }
    s->nnames = nnames;
    s->names = names;
    s->count = count;
    if (ks_cycle_write(cycle, &prefilter_key, s, &k_state_ops) != 0) {
        ks_status_reason(st, "VolumeRestrictions: cannot write the PreFilter state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

static ks_code update_with_pod(ks_cycle *cycle, const ks_pod *other, int sign, ks_status *st)
{
    prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    if (!s) {
        ks_status_reason(st, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
        return KS_ERROR;
    }
    s->count += sign * ref_count_for_pod(s, other);
    return KS_SUCCESS;
}

static ks_code vr_add_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                          const ks_node_info *ni, ks_status *st)
{
    (void)self;
    (void)pod;
    (void)ni;
    return update_with_pod(cycle, other, 1, st);
}

static ks_code vr_remove_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                             const ks_node_info *ni, ks_status *st)
{
    (void)self;
    (void)pod;
    (void)ni;
    return update_with_pod(cycle, other, -1, st);
}

/* filter: Filter workers, concurrently; the state is read-only here. */
static ks_code vr_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                         ks_status *st)
{
    (void)self;
    size_t npods = ks_node_info_pod_count(ni);
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++) {
        if (!needs_check(&vols[i]))
            continue;
        for (size_t j = 0; j < npods; j++)
            if (volume_conflict(&vols[i], ks_node_info_pod_at(ni, j))) {
                ks_status_reason(st, ERR_REASON_DISK_CONFLICT);
                return KS_UNSCHEDULABLE;
            }
    }
    const prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    if (!s) {
        ks_status_reason(st, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
        return KS_ERROR;
    }
    if (s->count > 0) {
        ks_status_reason(st, ERR_REASON_RWOP_CONFLICT);
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

/* ---- events and hints --------------------------------------------------------------------- */

/* upstream isSchedulableAfterAssignedPodDeleted: the deleted pod (same namespace) had a disk
 * that conflicted with one of the pod's, or used one of the pod's claims (the claim's access mode
 * is not looked up, as upstream does not). */
static ks_queueing_hint vr_after_assigned_pod_deleted(void *self, const ks_pod *pod,
                                                      const ks_event_info *ev)
{
    (void)self;
    const ks_pod *deleted = ev->old_pod;
    if (!deleted)
        return KS_QUEUE;
    if (ks_pod_namespace(deleted) != ks_pod_namespace(pod))
        return KS_QUEUE_SKIP;
    if (!satisfies_volume_conflicts(pod, &deleted, 1))
        return KS_QUEUE;
    const ks_pod_volume *mine, *theirs;
    size_t nm = ks_pod_volumes(pod, &mine), nt = ks_pod_volumes(deleted, &theirs);
    for (size_t i = 0; i < nt; i++) {
        if (theirs[i].source != KS_VOLSRC_PVC)
            continue;
        for (size_t j = 0; j < nm; j++)
            if (mine[j].source == KS_VOLSRC_PVC && mine[j].claim == theirs[i].claim)
                return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterPersistentVolumeClaimAdded: one of the pod's claims was created. */
static ks_queueing_hint vr_after_pvc_added(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    const ks_pvc *pvc = ev->new_obj;
    if (!pvc)
        return KS_QUEUE;
    const ks_pvc_view *c = ks_pvc_view_of(pvc);
    if (c->ns != ks_pod_namespace(pod))
        return KS_QUEUE_SKIP;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++)
        if (vols[i].source == KS_VOLSRC_PVC && vols[i].claim == c->name)
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37): spec.volumes is immutable, so pod updates are left out. */
static size_t vr_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, vr_after_assigned_pod_deleted},
        {{KS_RES_NODE, KS_ACT_ADD}, NULL},
        {{KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD}, vr_after_pvc_added},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream VolumeRestrictions.SignPod: VolumesSigner. */
static ks_code vr_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    return ks_sign_volumes(pod, sig, st);
}

const ks_plugin_desc ks_plugin_volume_restrictions = {
    .size = sizeof(ks_plugin_desc),
    .name = "VolumeRestrictions",
    .create = vr_create,
    .destroy = vr_destroy,
    .pre_filter = vr_pre_filter,
    .pre_filter_add_pod = vr_add_pod,
    .pre_filter_remove_pod = vr_remove_pod,
    .filter = vr_filter,
    .events_with_hints = vr_events,
    .sign = vr_sign,
};
