/*
 * VolumeBinding (upstream plugins/volumebinding: volume_binding.go, binder.go, scorer.go, v1.37;
 * FindMatchingVolume from k8s.io/component-helpers/storage/volume).
 *
 *   PreFilter  the pod's persistentVolumeClaim and ephemeral volumes (upstream podHasPVCs, then
 *              GetPodVolumeClaims): a claim missing, Lost, being deleted or (ephemeral) not the
 *              pod's -> UnschedulableAndUnresolvable with upstream's words; no claim -> Skip.
 *              Claims split into bound (volumeName and the bind-completed annotation), unbound
 *              WaitForFirstConsumer ("delay") and unbound Immediate; any Immediate one ->
 *              UnschedulableAndUnresolvable "pod has unbound immediate PersistentVolumeClaims".
 *   Filter     upstream FindPodVolumes: bound claims' PVs against the node's labels, delay claims
 *              matched to available PVs (FindMatchingVolume: smallest fit) or checked for dynamic
 *              provisioning (class provisioner, allowedTopologies, CSIStorageCapacity when the
 *              CSIDriver asks for it). Reasons as upstream, UnschedulableAndUnresolvable.
 *   PreScore/  StorageCapacityScoring (Beta, on in v1.37): the shape over requested/capacity per
 *   Score      class, static bindings first, else provisions with a known capacity.
 *   Reserve/   upstream AssumePodVolumes / RevertAssumedPodVolumes on the plugin's own assume
 *   Unreserve  cache (upstream's passiveAssumeCache): a PV matched on the chosen node is
 *              assumed bound to its claim, a claim left to provisioning assumed to name the
 *              node, each on the resourceVersion it was read at; the next pods' Filter sees the
 *              assumption until the store holds a newer version (the informer's answer to the
 *              write) or Unreserve drops it. The host's objects stay immutable.
 *   PreBind    upstream BindPodVolumes, on the binding thread: PreBindPreFlight says Skip when
 *              every claim is bound; else each PV gets its claimRef and each claim to provision
 *              volume.kubernetes.io/selected-node (ks_storage_patch, conditional on the version
 *              read, as upstream's Update), then the plugin polls every second, up to
 *              bindTimeoutSeconds, until the PV controller has bound every claim
 *              (checkBindings: a reset claimRef, a removed selected-node, a PV whose affinity no
 *              longer fits the node, or the pod deleted fail the binding cycle at once, which
 *              unreserves and requeues the pod). In `simulate` (KS_SOURCE_SIMULATED) the
 *              in-memory cluster completes a PV bind itself and nothing provisions: a claim
 *              that names the node counts as done there.
 *   Events     as upstream EventsToRegister (v1.37), with its queueing hints.
 *
 *   CSI        upstream tryTranslatePVToCSI where upstream calls it (checkBoundClaims in Filter,
 *   migration  checkBindings in PreBind): a bound PV of an in-tree source whose migration is on
 *              (GCE PD, AWS EBS, Azure Disk, Cinder, Portworx) and whose plugin the node's
 *              CSINode lists in storage.alpha.kubernetes.io/migrated-plugins is checked with
 *              the node affinity csi-translation-lib gives it (csi_translation.h), or fails
 *              with its error. PreFilter describes each bound PV's translation once; Filter
 *              reads it without allocating.
 *
 * Threads: create/destroy/events on the main thread; PreFilter/PreScore/Reserve on the
 * scheduling thread; Filter/Score on Filter/Score workers; PreBindPreFlight/PreBind/Unreserve
 * on binding threads (Unreserve also on the scheduling thread); the assume cache has its own
 * mutex.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/args.h"
#include "../common/sign.h"
#include "csi_translation.h"

#define ERR_REASON_BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define ERR_REASON_NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity"
#define ERR_REASON_NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define ERR_REASON_PV_NOT_EXIST                                                                    \
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define ERR_UNBOUND_IMMEDIATE "pod has unbound immediate PersistentVolumeClaims"

#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define ANN_MIGRATED_PLUGINS "storage.alpha.kubernetes.io/migrated-plugins"
#define NOT_SUPPORTED_PROVISIONER "kubernetes.io/no-provisioner"

#define MAX_UTILIZATION 100
#define MAX_CUSTOM_PRIORITY_SCORE 10
#define MAX_SHAPE 64

typedef struct shape_point {
    int64_t utilization, score;
} shape_point;

/* One assumption of a reserved pod (upstream pvCache.Assume / pvcCache.Assume): a PV assumed
 * bound to a claim, or a claim assumed to name a selected node; valid while the store's object
 * has the resourceVersion it was made on (upstream passiveAssumeCache.Get). Strings malloc'd. */
typedef struct assumed {
    int is_claim;        /* 0: PV `name` bound to claim; 1: claim `claim_ns/name` -> node */
    char *name;          /* the PV's name, or the claim's */
    char *claim_ns;      /* the claim's namespace */
    char *claim_name;    /* PV entries: the claim it is bound to */
    char *claim_uid;     /* PV entries */
    char *rv;            /* the object's resourceVersion when it was assumed */
    char *selected_node; /* claim entries */
    char *pod_uid;       /* the pod that reserved it */
    ks_sym node;         /* claim entries: selected_node, interned once (pinned) */
} assumed;

typedef struct volume_binding {
    int64_t bind_timeout_seconds;
    size_t nshape;
    shape_point shape[MAX_SHAPE];
    ks_sym ann_bind_completed, ann_bound_by_controller, ann_selected_node, ann_migrated, sym_lost;
    vb_csi_syms csi;    /* the CSI translation's keys */
    pthread_mutex_t mu; /* guards the assume cache */
    size_t nassumed, cap;
    assumed *as;
    /* nassumed, also written under mu but read without it: Filter's per-PV, per-node lookups
     * skip the lock while nothing is assumed (the common case) */
    atomic_size_t any_assumed;
    /* upstream's scheduler_volume_scheduling_stage_error_total{operation}: "predicate" (Filter's
     * FindPodVolumes), "assume" (Reserve), "bind" (PreBind); NULL without metrics */
    ks_counter *stage_errors;
} volume_binding;

/* PreFilter state (upstream stateData.podVolumeClaims): the claims, borrowed(cycle); read-only
 * after PreFilter. */
typedef struct prefilter_state {
    size_t nbound, ndelay;
    const ks_pvc **bound;
    /* per bound claim: the PV PreFilter saw (NULL: none) and its CSI translation, for Filter
     * to use while the store still gives the same PV (borrowed(cycle)) */
    const ks_pv **bound_pv;
    vb_pv_translation *bound_tr;
    const ks_pvc **delay; /* sorted by requested size (upstream byPVCSize), stable */
} prefilter_state;

static char state_key;

/* ---- args --------------------------------------------------------------------------------- */

static const ks_arg_field shape_point_fields[] = {
    {"utilization", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
    {"score", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
};
static const ks_args_schema shape_point_schema = KS_ARGS_SCHEMA(NULL, shape_point_fields);
/* SetDefaults_VolumeBindingArgs: bindTimeoutSeconds 600; StorageCapacityScoring is Beta and on
 * in v1.37, so an absent or empty shape becomes {0 -> MaxCustomPriorityScore, 100 -> 0}. */
static const ks_arg_field vb_fields[] = {
    {"bindTimeoutSeconds", KS_ARG_INT64, NULL, "600", 0, 0, 0},
    {"shape", KS_ARG_OBJECT_LIST, &shape_point_schema,
     "[{\"utilization\":0,\"score\":10},{\"utilization\":100,\"score\":0}]", KS_ARG_DEFAULT_IF_ZERO,
     0, 0},
};
static const ks_args_schema vb_args_schema = KS_ARGS_SCHEMA("VolumeBindingArgs", vb_fields);

/* upstream ValidateVolumeBindingArgsWithOptions with StorageCapacityScoring on:
 * bindTimeoutSeconds >= 0, then validateFunctionShape (at least one point, utilization strictly
 * increasing, utilization in [0, 100], score in [0, 10]). */
static int vb_validate_args(const ks_args *a, ks_args_error *err)
{
    int64_t t = ks_h_args_int(a, "bindTimeoutSeconds", 0);
    size_t n = ks_h_args_len(a, "shape");
    char p[64];
    if (t < 0)
        return ks_args_invalid(err, "bindTimeoutSeconds",
                               "invalid BindTimeoutSeconds, should not be a negative value");
    if (n == 0)
        return ks_args_fail(err, "shape", "Required value: at least one point must be specified");
    for (size_t i = 1; i < n; i++) {
        snprintf(p, sizeof(p), "shape[%zu].utilization", i - 1);
        int64_t prev = ks_h_args_int(a, p, 0);
        snprintf(p, sizeof(p), "shape[%zu].utilization", i);
        if (prev >= ks_h_args_int(a, p, 0))
            return ks_args_invalid(err, p, "values must be sorted in increasing order");
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof(p), "shape[%zu].utilization", i);
        int64_t u = ks_h_args_int(a, p, 0);
        if (u < 0 || u > MAX_UTILIZATION)
            return ks_args_invalid(err, p, "not in valid range [0, 100]");
        snprintf(p, sizeof(p), "shape[%zu].score", i);
        int64_t s = ks_h_args_int(a, p, 0);
        if (s < 0 || s > MAX_CUSTOM_PRIORITY_SCORE)
            return ks_args_invalid(err, p, "not in valid range [0, 10]");
    }
    return 0;
}

static void *vb_create(const ks_args *args, ks_error *err)
{
    volume_binding *vb = ks_alloc(sizeof(*vb));
    if (!vb) {
        ks_error_set(err, "VolumeBinding: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    memset(vb, 0, sizeof(*vb));
    atomic_init(&vb->any_assumed, 0);
    vb->bind_timeout_seconds = 600;
    /* The defaults, for a host that hands no args (a test harness). */
    vb->nshape = 2;
    vb->shape[0] = (shape_point){0, MAX_CUSTOM_PRIORITY_SCORE * (KS_MAX_NODE_SCORE / 10)};
    vb->shape[1] = (shape_point){MAX_UTILIZATION, 0};
    if (args && ks_h_args_has(args, "bindTimeoutSeconds"))
        vb->bind_timeout_seconds = ks_h_args_int(args, "bindTimeoutSeconds", 600);
    size_t n = args ? ks_h_args_len(args, "shape") : 0;
    if (n > MAX_SHAPE) {
        ks_free(vb);
        ks_error_set(err, "VolumeBinding: shape: at most %d points (got %zu): use fewer points",
                     MAX_SHAPE, n);
        return NULL;
    }
    if (n > 0) {
        vb->nshape = n;
        for (size_t i = 0; i < n; i++) {
            char p[64];
            snprintf(p, sizeof(p), "shape[%zu].utilization", i);
            vb->shape[i].utilization = ks_h_args_int(args, p, 0);
            snprintf(p, sizeof(p), "shape[%zu].score", i);
            /* upstream New: Score * (MaxNodeScore / MaxCustomPriorityScore) */
            vb->shape[i].score =
                ks_h_args_int(args, p, 0) * (KS_MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE);
        }
    }
    /* upstream also registers scheduler_volume_binder_cache_requests_total, which nothing
     * increments (so /metrics never shows it); kubesched leaves it out */
    vb->stage_errors = KS_HOST_HAS(counter_new)
                           ? ks_counter_new("scheduler_volume_scheduling_stage_error_total",
                                            "Volume scheduling stage error count", "operation")
                           : NULL;
    vb->ann_bind_completed = ks_intern(ANN_BIND_COMPLETED);
    vb->ann_bound_by_controller = ks_intern(ANN_BOUND_BY_CONTROLLER);
    vb->ann_selected_node = ks_intern(ANN_SELECTED_NODE);
    vb->ann_migrated = ks_intern(ANN_MIGRATED_PLUGINS);
    vb->sym_lost = ks_intern("Lost");
    vb_csi_syms_init(&vb->csi);
    pthread_mutex_init(&vb->mu, NULL);
    return vb;
}

static void assumed_free(assumed *a)
{
    free(a->name);
    free(a->claim_ns);
    free(a->claim_name);
    free(a->claim_uid);
    free(a->rv);
    free(a->selected_node);
    free(a->pod_uid);
}

static void vb_destroy(void *self)
{
    volume_binding *vb = self;
    if (!vb)
        return;
    for (size_t i = 0; i < vb->nassumed; i++)
        assumed_free(&vb->as[i]);
    free(vb->as);
    pthread_mutex_destroy(&vb->mu);
    ks_free(vb);
}

/* ---- assumed bindings --------------------------------------------------------------------- */

/* What an assumption says about one object, copied out of the cache (names are at most 253
 * bytes, uids and versions far shorter). */
typedef struct assumed_view {
    char claim_ns[256], claim_name[256], claim_uid[128], selected_node[256];
} assumed_view;

static int str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* Under mu: the entry for the object (PV `name`, or claim ns/name), valid on version rv. */
static const assumed *assumed_find(const volume_binding *vb, int is_claim, const char *ns,
                                   const char *name, const char *rv)
{
    for (size_t i = 0; i < vb->nassumed; i++) {
        const assumed *a = &vb->as[i];
        if (a->is_claim == is_claim && str_eq(a->name, name) &&
            (!is_claim || str_eq(a->claim_ns, ns)) && str_eq(a->rv, rv))
            return a;
    }
    return NULL;
}

/* The claim a reserved pod assumed PV v bound to, on the version the store holds now (upstream
 * pvCache.Get returns the assumed copy while the informer's is not newer): 1 with *out filled,
 * or 0 (the store's object is the truth). Any thread. */
static int assumed_claim_ref(volume_binding *vb, const ks_pv_view *v, assumed_view *out)
{
    if (atomic_load_explicit(&vb->any_assumed, memory_order_acquire) == 0)
        return 0;
    int found = 0;
    pthread_mutex_lock(&vb->mu);
    const assumed *a = assumed_find(vb, 0, NULL, ks_sym_str(v->name), v->resource_version);
    if (a) {
        snprintf(out->claim_ns, sizeof(out->claim_ns), "%s", a->claim_ns);
        snprintf(out->claim_name, sizeof(out->claim_name), "%s", a->claim_name);
        snprintf(out->claim_uid, sizeof(out->claim_uid), "%s", a->claim_uid);
        found = 1;
    }
    pthread_mutex_unlock(&vb->mu);
    return found;
}

/* The selected node of claim c as the pods see it: the one a reserved pod assumed on this
 * version of the claim, else its annotation; KS_SYM_ABSENT when none. Any thread. */
static ks_sym selected_node_of(volume_binding *vb, const ks_pvc_view *c)
{
    ks_sym sel = ks_labels_get(c->annotations, c->nannotations, vb->ann_selected_node);
    if (atomic_load_explicit(&vb->any_assumed, memory_order_acquire) == 0)
        return sel;
    pthread_mutex_lock(&vb->mu);
    const assumed *a =
        assumed_find(vb, 1, ks_sym_str(c->ns), ks_sym_str(c->name), c->resource_version);
    if (a)
        sel = a->node;
    pthread_mutex_unlock(&vb->mu);
    return sel;
}

/* Adds an assumption for pod_uid, replacing any other on the same object (upstream Assume
 * replaces the object). 0, or -1 when out of memory. */
static int assume(volume_binding *vb, const assumed *in)
{
    assumed a = {.is_claim = in->is_claim, .node = KS_SYM_ABSENT};
    a.name = strdup(in->name);
    a.claim_ns = strdup(in->claim_ns ? in->claim_ns : "");
    a.claim_name = strdup(in->claim_name ? in->claim_name : "");
    a.claim_uid = strdup(in->claim_uid ? in->claim_uid : "");
    a.rv = strdup(in->rv ? in->rv : "");
    a.selected_node = strdup(in->selected_node ? in->selected_node : "");
    a.node = in->selected_node ? ks_intern(in->selected_node) : KS_SYM_ABSENT;
    a.pod_uid = strdup(in->pod_uid);
    int rc =
        a.name && a.claim_ns && a.claim_name && a.claim_uid && a.rv && a.selected_node && a.pod_uid
            ? 0
            : -1;
    pthread_mutex_lock(&vb->mu);
    for (size_t i = 0; rc == 0 && i < vb->nassumed; i++)
        if (vb->as[i].is_claim == a.is_claim && str_eq(vb->as[i].name, a.name) &&
            str_eq(vb->as[i].claim_ns, a.is_claim ? a.claim_ns : vb->as[i].claim_ns)) {
            assumed_free(&vb->as[i]);
            vb->as[i] = vb->as[--vb->nassumed];
            break;
        }
    if (rc == 0 && vb->nassumed == vb->cap) {
        size_t cap = vb->cap ? vb->cap * 2 : 8;
        assumed *as = realloc(vb->as, cap * sizeof(*as));
        if (!as)
            rc = -1;
        else {
            vb->as = as;
            vb->cap = cap;
        }
    }
    if (rc == 0)
        vb->as[vb->nassumed++] = a;
    atomic_store_explicit(&vb->any_assumed, vb->nassumed, memory_order_release);
    pthread_mutex_unlock(&vb->mu);
    if (rc != 0)
        assumed_free(&a);
    return rc;
}

/* upstream RevertAssumedPodVolumes: every assumption the pod made goes (the store's objects are
 * the truth again). Also after a successful PreBind, when the store already holds the written
 * versions, so the entries could no longer apply. Any thread. */
static void forget_pod(volume_binding *vb, const char *pod_uid)
{
    pthread_mutex_lock(&vb->mu);
    for (size_t i = 0; i < vb->nassumed;) {
        if (strcmp(vb->as[i].pod_uid, pod_uid) == 0) {
            assumed_free(&vb->as[i]);
            vb->as[i] = vb->as[--vb->nassumed];
        } else {
            i++;
        }
    }
    atomic_store_explicit(&vb->any_assumed, vb->nassumed, memory_order_release);
    pthread_mutex_unlock(&vb->mu);
}

/* ---- PreFilter ---------------------------------------------------------------------------- */

static int is_claim_volume(const ks_pod_volume *v)
{
    return v->source == KS_VOLSRC_PVC || v->source == KS_VOLSRC_EPHEMERAL;
}

/* upstream podHasPVCs: KS_SKIP when the pod has no claim, KS_SUCCESS, or the refusal. */
static ks_code pod_has_pvcs(const volume_binding *vb, ks_cycle *cycle, const ks_pod *pod,
                            ks_status *st)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    ks_sym ns = ks_pod_namespace(pod);
    int has = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_claim_volume(&vols[i]))
            continue;
        has = 1;
        const char *name = ks_sym_str(vols[i].claim);
        const ks_pvc *pvc = ks_cycle_pvc(cycle, ns, vols[i].claim);
        if (!pvc) {
            if (vols[i].source == KS_VOLSRC_EPHEMERAL)
                ks_status_reasonf(st,
                                  "waiting for ephemeral volume controller to create the "
                                  "persistentvolumeclaim \"%s\"",
                                  name);
            else
                ks_status_reasonf(st, "persistentvolumeclaim \"%s\" not found", name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        const ks_pvc_view *c = ks_pvc_view_of(pvc);
        if (c->phase == vb->sym_lost) {
            ks_status_reasonf(st,
                              "persistentvolumeclaim \"%s\" bound to non-existent "
                              "persistentvolume \"%s\"",
                              name, ks_sym_str(c->volume_name));
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        if (c->terminating) {
            ks_status_reasonf(st, "persistentvolumeclaim \"%s\" is being deleted", name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        if (vols[i].source == KS_VOLSRC_EPHEMERAL &&
            (c->ns != ns || strcmp(c->controller_uid, ks_pod_uid(pod)) != 0 ||
             !c->controller_uid[0])) {
            /* upstream ephemeral.VolumeIsForPod */
            ks_status_reasonf(st, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                              ks_sym_str(c->ns), name, ks_sym_str(ns),
                              ks_sym_str(ks_pod_name(pod)));
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
    }
    return has ? KS_SUCCESS : KS_SKIP;
}

static int has_annotation(const ks_pvc_view *c, ks_sym key)
{
    return ks_labels_get(c->annotations, c->nannotations, key) != KS_SYM_ABSENT;
}

/* upstream isPVCFullyBound */
static int fully_bound(const volume_binding *vb, const ks_pvc_view *c)
{
    return c->volume_name != KS_SYM_EMPTY && has_annotation(c, vb->ann_bind_completed);
}

/* upstream volume.IsDelayBindingMode: 1, 0, or -1 with the error in st. */
static int delay_binding_mode(ks_cycle *cycle, const ks_pvc_view *c, ks_status *st)
{
    if (c->storage_class == KS_SYM_EMPTY)
        return 0;
    const ks_storage_class *sc = ks_cycle_storage_class(cycle, c->storage_class);
    if (!sc)
        return 0;
    uint32_t mode = ks_storage_class_view_of(sc)->binding_mode;
    if (mode == KS_BINDING_UNSET) {
        ks_status_reasonf(st, "VolumeBindingMode not set for StorageClass \"%s\"",
                          ks_sym_str(c->storage_class));
        return -1;
    }
    return mode == KS_BINDING_WAIT_FOR_FIRST_CONSUMER;
}

static int pvc_smaller(const ks_pvc *a, const ks_pvc *b)
{
    const ks_pvc_view *x = ks_pvc_view_of(a), *y = ks_pvc_view_of(b);
    return ks_storage_cmp(x->request, x->request_milli, y->request, y->request_milli) < 0;
}

static ks_code vb_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                             ks_prefilter_result *result, ks_status *st)
{
    volume_binding *vb = self;
    (void)result;
    ks_code code = pod_has_pvcs(vb, cycle, pod, st);
    if (code != KS_SUCCESS)
        return code;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    ks_sym ns = ks_pod_namespace(pod);
    prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s) + 2 * n * sizeof(const ks_pvc *) + 1);
    if (!s) {
        ks_status_reason(st, "VolumeBinding: out of memory in PreFilter");
        return KS_ERROR;
    }
    memset(s, 0, sizeof(*s));
    s->bound = (const ks_pvc **)(s + 1);
    s->delay = s->bound + n;
    s->bound_pv = n ? ks_cycle_alloc(cycle, n * sizeof(*s->bound_pv)) : NULL;
    s->bound_tr = n ? ks_cycle_alloc(cycle, n * sizeof(*s->bound_tr)) : NULL;
    if (n && (!s->bound_pv || !s->bound_tr)) {
        ks_status_reason(st, "VolumeBinding: out of memory in PreFilter");
        return KS_ERROR;
    }
    size_t nimmediate = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_claim_volume(&vols[i]))
            continue;
        const ks_pvc *pvc = ks_cycle_pvc(cycle, ns, vols[i].claim);
        if (!pvc) { /* deleted since podHasPVCs: upstream's pvcCache.Get error */
            ks_status_reasonf(st,
                              "error getting PVC \"%s/%s\": persistentvolumeclaim \"%s\" "
                              "not found",
                              ks_sym_str(ns), ks_sym_str(vols[i].claim), ks_sym_str(vols[i].claim));
            return KS_ERROR;
        }
        const ks_pvc_view *c = ks_pvc_view_of(pvc);
        if (fully_bound(vb, c)) {
            /* the translation depends on the PV only: described once here, applied per node */
            const ks_pv *p = ks_cycle_pv(cycle, c->volume_name);
            s->bound_pv[s->nbound] = p;
            if (p)
                vb_translate_pv(&vb->csi, ks_pv_view_of(p), &s->bound_tr[s->nbound]);
            s->bound[s->nbound++] = pvc;
            continue;
        }
        int delay = delay_binding_mode(cycle, c, st);
        if (delay < 0)
            return KS_ERROR;
        if (delay && c->volume_name == KS_SYM_EMPTY) {
            /* insertion keeps equal sizes in pod order (a stable byPVCSize) */
            size_t j = s->ndelay++;
            while (j > 0 && pvc_smaller(pvc, s->delay[j - 1])) {
                s->delay[j] = s->delay[j - 1];
                j--;
            }
            s->delay[j] = pvc;
        } else {
            nimmediate++;
        }
    }
    if (nimmediate > 0) {
        ks_status_reason(st, ERR_UNBOUND_IMMEDIATE);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (ks_cycle_write(cycle, &state_key, s, NULL) != 0) {
        ks_status_reason(st, "VolumeBinding: cannot write the PreFilter state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* ---- matching ----------------------------------------------------------------------------- */

/* A requirement key as the CSI translation renamed it (tr NULL: untranslated). */
static ks_sym translated_key(const vb_pv_translation *tr, ks_sym key)
{
    if (tr && key == tr->zone_from)
        return tr->zone_to;
    if (tr && key == tr->region_from)
        return tr->region_to;
    return key;
}

/* The requirement addTopology appended: its key In the zone label's values. */
static int added_topology_ok(const vb_pv_translation *tr, const ks_label *labels, size_t nl)
{
    ks_sym val = ks_labels_get(labels, nl, tr->add_key);
    return val != KS_SYM_ABSENT && vb_zones_have(tr->add_zones, ks_sym_str(val));
}

/* upstream volume.CheckNodeAffinity: the PV's required terms against a node made of the labels
 * only (so matchFields are not checked). tr: the PV as tryTranslatePVToCSI gave it
 * for this node (NULL or VB_MIG_NONE: as it is; never a failed one). */
static int pv_node_affinity_ok(const volume_binding *vb, const ks_pv_view *v,
                               const vb_pv_translation *tr, const ks_node *node)
{
    if (tr && tr->plugin == VB_MIG_NONE)
        tr = NULL;
    int add = tr && tr->add_key != KS_SYM_ABSENT;
    if (!v->has_node_affinity && !add)
        return 1;
    const ks_label *labels;
    size_t nl = ks_node_labels(node, &labels);
    if (add && (!v->has_node_affinity || v->nnode_terms == 0)) /* addTopology made one term */
        return added_topology_ok(tr, labels, nl);
    for (uint32_t t = 0; t < v->nnode_terms; t++) {
        const ks_node_selector_term *term = &v->node_terms[t];
        int ok = term->nexprs > 0 || term->nfields > 0 || add;
        if (ok && add)
            ok = added_topology_ok(tr, labels, nl);
        for (uint32_t i = 0; ok && i < term->nexprs; i++) {
            const ks_selector_req *r = &term->exprs[i];
            ks_sym val = ks_labels_get(labels, nl, translated_key(tr, r->key));
            switch (r->op) {
            case KS_OP_IN:
            case KS_OP_NOT_IN: {
                int in = 0;
                for (uint32_t k = 0; val != KS_SYM_ABSENT && k < r->nvalues && !in; k++)
                    in = r->values[k] == val;
                ok = r->op == KS_OP_IN ? in : !in;
                break;
            }
            case KS_OP_EXISTS:
                ok = val != KS_SYM_ABSENT;
                break;
            case KS_OP_DOES_NOT_EXIST:
                ok = val == KS_SYM_ABSENT;
                break;
            default: { /* Gt / Lt: integers */
                const char *have = val != KS_SYM_ABSENT ? ks_sym_str(val) : NULL;
                const char *want = r->nvalues == 1 ? ks_sym_str(r->values[0]) : NULL;
                char *e1 = NULL, *e2 = NULL;
                long long h = have ? strtoll(have, &e1, 10) : 0;
                long long w = want ? strtoll(want, &e2, 10) : 0;
                ok = have && want && *have && *want && !*e1 && !*e2 &&
                     (r->op == KS_OP_GT ? h > w : h < w);
            }
            }
        }
        /* matchFields: the node upstream matches has labels only, no name, and
         * nodeSelectorTerm.match skips the fields when the node has none; a requirement that
         * does not parse as a field selector (In / NotIn with exactly one value) still fails the
         * term (its parse error). */
        for (uint32_t i = 0; ok && i < term->nfields; i++) {
            const ks_selector_req *r = &term->fields[i];
            ok = (r->op == KS_OP_IN || r->op == KS_OP_NOT_IN) && r->nvalues == 1;
        }
        if (ok)
            return 1;
    }
    return 0;
}

/* upstream volume.IsVolumeBoundToClaim */
static int bound_to_claim(const ks_pv_view *v, const ks_pvc_view *c)
{
    if (!v->has_claim_ref || v->claim_name != c->name || v->claim_namespace != c->ns)
        return 0;
    return !v->claim_uid[0] || strcmp(v->claim_uid, c->uid) == 0;
}

/* upstream CheckAccessModes: every mode of the claim is one of the PV's. */
static int access_modes_ok(const ks_pvc_view *c, const ks_pv_view *v)
{
    return (c->access_modes & ~v->access_modes) == 0;
}

/* The claimRef of a PV as upstream's pvCache shows it: the assumed one while valid. */
typedef struct claim_ref {
    int set;
    const char *ns, *name, *uid;
} claim_ref;

static claim_ref claim_ref_of(volume_binding *vb, const ks_pv_view *v, assumed_view *buf)
{
    if (assumed_claim_ref(vb, v, buf))
        return (claim_ref){1, buf->claim_ns, buf->claim_name, buf->claim_uid};
    return (claim_ref){v->has_claim_ref, ks_sym_str(v->claim_namespace), ks_sym_str(v->claim_name),
                       v->claim_uid};
}

/* upstream volume.IsVolumeBoundToClaim on such a claimRef */
static int ref_to_claim(const claim_ref *r, const ks_pvc_view *c)
{
    if (!r->set || !str_eq(r->name, ks_sym_str(c->name)) || !str_eq(r->ns, ks_sym_str(c->ns)))
        return 0;
    return !r->uid[0] || strcmp(r->uid, c->uid) == 0;
}

/* upstream volume.FindMatchingVolume(claim, pvs, node, chosen, delayBinding=true,
 * vacEnabled=true) over upstream's pvCache: a PV a reserved pod assumed bound to a claim counts
 * as bound to it. NULL: none. */
static const ks_pv *find_matching_volume(volume_binding *vb, const ks_pod *pod,
                                         const ks_pvc_view *c, const ks_pv *const *pvs, size_t npv,
                                         const ks_node *node, const ks_pv **chosen, size_t nchosen)
{
    (void)pod;
    static const ks_pv_view none = {0};
    const ks_pv *smallest = NULL;
    const ks_pv_view *sv = &none;
    static const char available[] = "Available";
    ks_sym sym_available = ks_sym_lookup(available);
    for (size_t i = 0; i < npv; i++) {
        const ks_pv_view *v = ks_pv_view_of(pvs[i]);
        int excluded = 0;
        for (size_t j = 0; j < nchosen && !excluded; j++)
            excluded = chosen[j] == pvs[i];
        assumed_view buf;
        claim_ref ref = claim_ref_of(vb, v, &buf);
        int to_claim = ref_to_claim(&ref, c);
        if (excluded || (ref.set && !to_claim))
            continue;
        if (ks_storage_cmp(v->capacity, v->capacity_milli, c->request, c->request_milli) < 0)
            continue;
        if (v->volume_mode != c->volume_mode)
            continue;
        if (v->volume_attributes_class != c->volume_attributes_class)
            continue;
        if (v->terminating)
            continue;
        int affinity_ok = pv_node_affinity_ok(vb, v, NULL, node); /* FindMatchingVolume: as is */
        if (to_claim)
            return affinity_ok ? pvs[i] : NULL;
        if (v->phase != sym_available || sym_available == KS_SYM_ABSENT)
            continue;
        if (c->selector.present && !ks_label_selector_matches(&c->selector, v->labels, v->nlabels))
            continue;
        if (v->storage_class != c->storage_class || !affinity_ok || !access_modes_ok(c, v))
            continue;
        if (!smallest ||
            ks_storage_cmp(sv->capacity, sv->capacity_milli, v->capacity, v->capacity_milli) > 0) {
            smallest = pvs[i];
            sv = v;
        }
    }
    return smallest;
}

/* upstream v1helper.MatchTopologySelectorTerms: no terms match every node; a term matches when
 * each of its requirements (In) holds; a term without requirements matches nothing. */
static int topology_terms_match(const ks_storage_class_view *sc, const ks_node *node)
{
    if (sc->nallowed_topologies == 0)
        return 1;
    for (uint32_t t = 0; t < sc->nallowed_topologies; t++) {
        const ks_node_selector_term *term = &sc->allowed_topologies[t];
        int ok = term->nexprs > 0;
        for (uint32_t i = 0; ok && i < term->nexprs; i++) {
            ks_sym val = ks_node_label(node, term->exprs[i].key);
            int in = 0;
            for (uint32_t k = 0; val != KS_SYM_ABSENT && k < term->exprs[i].nvalues && !in; k++)
                in = term->exprs[i].values[k] == val;
            ok = in;
        }
        if (ok)
            return 1;
    }
    return 0;
}

/* upstream volumeLimit: maximumVolumeSize, else capacity; 0 when neither (has = 0). */
static int64_t volume_limit(const ks_csi_storage_capacity_view *c, int *has)
{
    *has = c->has_maximum_volume_size || c->has_capacity;
    return c->has_maximum_volume_size ? c->maximum_volume_size : c->capacity;
}

/* upstream hasEnoughCapacity: 1 sufficient (*cap: the capacity that fits, or NULL), 0 not. */
static int has_enough_capacity(ks_cycle *cycle, const ks_storage_class_view *sc,
                               const ks_pvc_view *c, const ks_node *node,
                               const ks_csi_storage_capacity **cap)
{
    *cap = NULL;
    if (c->request == 0 && c->request_milli == 0)
        return 1; /* no storage request: upstream checks the key's presence; a 0 request fits */
    const ks_csi_driver *d = ks_cycle_csi_driver(cycle, sc->provisioner);
    if (!d || !ks_csi_driver_view_of(d)->storage_capacity)
        return 1;
    const ks_csi_storage_capacity *const *caps;
    size_t n = ks_cycle_csi_storage_capacities(cycle, &caps);
    const ks_label *labels;
    size_t nl = ks_node_labels(node, &labels);
    for (size_t i = 0; i < n; i++) {
        const ks_csi_storage_capacity_view *v = ks_csi_storage_capacity_view_of(caps[i]);
        int has;
        int64_t limit = volume_limit(v, &has);
        if (v->storage_class_name != sc->name || !has || limit < c->request)
            continue;
        if (!v->node_topology.present || !ks_label_selector_matches(&v->node_topology, labels, nl))
            continue;
        *cap = caps[i];
        return 1;
    }
    return 0;
}

/* What FindPodVolumes found for one node: the static bindings and provisions (for Score and
 * Reserve). Fixed-size arrays of the pod's claims. */
#define POD_VOLUMES_INLINE 4
typedef struct pod_volumes {
    size_t nstatic, nprov;
    const ks_pv **static_pv;
    const ks_pvc **static_pvc;
    const ks_pvc **prov_pvc;
    const ks_csi_storage_capacity **prov_cap;
    /* Room for pods with few unbound claims, so that Filter, which runs per node, does not
     * allocate (heap: the arrays above were malloc'd instead). */
    int heap;
    const ks_pv *inl_pv[POD_VOLUMES_INLINE];
    const ks_pvc *inl_pvc[POD_VOLUMES_INLINE], *inl_prov[POD_VOLUMES_INLINE];
    const ks_csi_storage_capacity *inl_cap[POD_VOLUMES_INLINE];
} pod_volumes;

enum {
    R_NODE_CONFLICT = 1,
    R_BIND_CONFLICT = 2,
    R_NOT_ENOUGH_SPACE = 4,
    R_PV_NOT_EXIST = 8,
};

/* upstream FindPodVolumes. KS_SUCCESS with *reasons (R_* bits) and pv filled, or KS_ERROR with
 * the error in st. pv's arrays: room for s->ndelay each. */
static ks_code find_pod_volumes(volume_binding *vb, ks_cycle *cycle, const ks_pod *pod,
                                const prefilter_state *s, const ks_node *node, pod_volumes *pv,
                                unsigned *reasons, ks_status *st)
{
    int bound_ok = 1, unbound_ok = 1, space_ok = 1, pvs_found = 1;
    pv->nstatic = pv->nprov = 0;
    *reasons = 0;
    /* checkBoundClaims: stops at the first PV missing or not matching, fails at the first
     * translation error */
    const ks_csi_node *cn = NULL;
    int cn_read = 0;
    for (size_t i = 0; i < s->nbound; i++) {
        const ks_pv *p = ks_cycle_pv(cycle, ks_pvc_view_of(s->bound[i])->volume_name);
        if (!p) {
            pvs_found = 0;
            break;
        }
        const ks_pv_view *v = ks_pv_view_of(p);
        const vb_pv_translation *tr = NULL;
        vb_pv_translation fresh;
        int plugin = vb_pv_plugin(v);
        if (plugin != VB_MIG_NONE) {
            if (!cn_read) { /* the node's CSINode, read once (none: nothing is migrated) */
                cn = ks_cycle_csi_node(cycle, ks_node_name(node));
                cn_read = 1;
            }
            if (vb_plugin_migrated_on_node(&vb->csi, plugin, cn)) {
                if (s->bound_pv[i] == p) {
                    tr = &s->bound_tr[i];
                } else { /* a newer PV than PreFilter's */
                    vb_translate_pv(&vb->csi, v, &fresh);
                    tr = &fresh;
                }
                if (tr->failed) {
                    ks_status_reason(st, tr->err);
                    return KS_ERROR;
                }
            }
        }
        if (!pv_node_affinity_ok(vb, v, tr, node)) {
            bound_ok = 0;
            break;
        }
    }
    ks_code code = KS_SUCCESS;
    const ks_pvc **findv = NULL, **provv = NULL;
    if (s->ndelay > 0) {
        size_t nprovision = 0, nfind = 0;
        int sel_mismatch = 0;
        findv = malloc(s->ndelay * sizeof(*findv));
        provv = malloc(s->ndelay * sizeof(*provv));
        if (!findv || !provv) {
            free(findv);
            free(provv);
            ks_status_reason(st, "VolumeBinding: out of memory in Filter");
            return KS_ERROR;
        }
        ks_sym node_name = ks_node_name(node);
        for (size_t i = 0; i < s->ndelay && !sel_mismatch; i++) {
            const ks_pvc_view *c = ks_pvc_view_of(s->delay[i]);
            ks_sym sel = selected_node_of(vb, c);
            if (sel == KS_SYM_ABSENT)
                findv[nfind++] = s->delay[i];
            else if (sel == node_name)
                provv[nprovision++] = s->delay[i];
            else
                sel_mismatch = 1; /* upstream returns at once: a bind conflict */
        }
        if (sel_mismatch) {
            unbound_ok = 0;
        } else {
            /* findMatchingVolumes (the claims are sorted by size already) */
            for (size_t i = 0; i < nfind; i++) {
                const ks_pvc_view *c = ks_pvc_view_of(findv[i]);
                const ks_pv *const *pvs;
                size_t npv = ks_cycle_pvs(cycle, c->storage_class, &pvs);
                const ks_pv *m =
                    find_matching_volume(vb, pod, c, pvs, npv, node, pv->static_pv, pv->nstatic);
                if (!m) {
                    provv[nprovision++] = findv[i];
                    unbound_ok = 0;
                    continue;
                }
                pv->static_pv[pv->nstatic] = m;
                pv->static_pvc[pv->nstatic++] = findv[i];
            }
        }
        if (!sel_mismatch && nprovision > 0) {
            /* checkVolumeProvisions: its answer replaces findMatchingVolumes' */
            int prov_ok = 1, enough = 1;
            for (size_t i = 0; i < nprovision && prov_ok && enough; i++) {
                const ks_pvc_view *c = ks_pvc_view_of(provv[i]);
                if (c->storage_class == KS_SYM_EMPTY) {
                    ks_status_reasonf(st, "no class for claim \"%s/%s\"", ks_sym_str(c->ns),
                                      ks_sym_str(c->name));
                    code = KS_ERROR;
                    break;
                }
                const ks_storage_class *scp = ks_cycle_storage_class(cycle, c->storage_class);
                if (!scp) {
                    ks_status_reasonf(st, "failed to find storage class \"%s\"",
                                      ks_sym_str(c->storage_class));
                    code = KS_ERROR;
                    break;
                }
                const ks_storage_class_view *sc = ks_storage_class_view_of(scp);
                const char *prov = ks_sym_str(sc->provisioner);
                if (!prov || !*prov || strcmp(prov, NOT_SUPPORTED_PROVISIONER) == 0 ||
                    !topology_terms_match(sc, node)) {
                    prov_ok = 0;
                    break;
                }
                const ks_csi_storage_capacity *cap;
                if (!has_enough_capacity(cycle, sc, c, node, &cap)) {
                    enough = 0;
                    break;
                }
                pv->prov_pvc[pv->nprov] = provv[i];
                pv->prov_cap[pv->nprov++] = cap;
            }
            if (!prov_ok || !enough)
                pv->nprov = 0;
            unbound_ok = prov_ok;
            space_ok = prov_ok ? enough : 1;
        }
    }
    free(findv);
    free(provv);
    if (code != KS_SUCCESS)
        return code;
    *reasons = (bound_ok ? 0 : R_NODE_CONFLICT) | (unbound_ok ? 0 : R_BIND_CONFLICT) |
               (space_ok ? 0 : R_NOT_ENOUGH_SPACE) | (pvs_found ? 0 : R_PV_NOT_EXIST);
    return KS_SUCCESS;
}

/* Runs find_pod_volumes with arrays of room for the state's claims (inline for a few, else
 * malloc'd; release with pod_volumes_free). */
static ks_code find_for_node(volume_binding *vb, ks_cycle *cycle, const ks_pod *pod,
                             const prefilter_state *s, const ks_node *node, pod_volumes *pv,
                             unsigned *reasons, ks_status *st)
{
    size_t n = s->ndelay ? s->ndelay : 1;
    memset(pv, 0, sizeof(*pv));
    if (n <= POD_VOLUMES_INLINE) {
        pv->static_pv = pv->inl_pv;
        pv->static_pvc = pv->inl_pvc;
        pv->prov_pvc = pv->inl_prov;
        pv->prov_cap = pv->inl_cap;
        return find_pod_volumes(vb, cycle, pod, s, node, pv, reasons, st);
    }
    pv->heap = 1;
    pv->static_pv = calloc(n, sizeof(*pv->static_pv));
    pv->static_pvc = calloc(n, sizeof(*pv->static_pvc));
    pv->prov_pvc = calloc(n, sizeof(*pv->prov_pvc));
    pv->prov_cap = calloc(n, sizeof(*pv->prov_cap));
    if (!pv->static_pv || !pv->static_pvc || !pv->prov_pvc || !pv->prov_cap) {
        ks_status_reason(st, "VolumeBinding: out of memory");
        return KS_ERROR;
    }
    return find_pod_volumes(vb, cycle, pod, s, node, pv, reasons, st);
}

static void pod_volumes_free(pod_volumes *pv)
{
    if (!pv->heap)
        return;
    free(pv->static_pv);
    free(pv->static_pvc);
    free(pv->prov_pvc);
    free(pv->prov_cap);
}

/* ---- Filter ------------------------------------------------------------------------------- */

static ks_code vb_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                         ks_status *st)
{
    volume_binding *vb = self;
    const prefilter_state *s = ks_cycle_read(cycle, &state_key);
    if (!s) /* PreFilter skipped (no claim): nothing to check */
        return KS_SUCCESS;
    pod_volumes pv;
    unsigned reasons;
    ks_code code = find_for_node(vb, cycle, pod, s, ks_node_info_node(ni), &pv, &reasons, st);
    pod_volumes_free(&pv);
    if (code != KS_SUCCESS) {
        ks_counter_inc(vb->stage_errors, "predicate");
        return code;
    }
    if (!reasons)
        return KS_SUCCESS;
    /* upstream's order: node conflict, bind conflict, not enough space, PV missing */
    if (reasons & R_NODE_CONFLICT)
        ks_status_reason(st, ERR_REASON_NODE_CONFLICT);
    if (reasons & R_BIND_CONFLICT)
        ks_status_reason(st, ERR_REASON_BIND_CONFLICT);
    if (reasons & R_NOT_ENOUGH_SPACE)
        ks_status_reason(st, ERR_REASON_NOT_ENOUGH_SPACE);
    if (reasons & R_PV_NOT_EXIST)
        ks_status_reason(st, ERR_REASON_PV_NOT_EXIST);
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* ---- PreScore / Score --------------------------------------------------------------------- */

/* Only unbound WaitForFirstConsumer claims can give static bindings or provisions; without
 * them every node scores 0 (upstream's Score finds no podVolumes entry to score). */
static ks_code vb_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                            const ks_node_info *const *nodes, size_t nnodes, ks_status *st)
{
    (void)self;
    (void)pod;
    (void)nodes;
    (void)nnodes;
    (void)st;
    const prefilter_state *s = ks_cycle_read(cycle, &state_key);
    return s && s->ndelay > 0 ? KS_SUCCESS : KS_SKIP;
}

/* helper.BuildBrokenLinearFunction */
static int64_t broken_linear(const volume_binding *vb, int64_t p)
{
    const shape_point *sh = vb->shape;
    for (size_t i = 0; i < vb->nshape; i++) {
        if (p <= sh[i].utilization) {
            if (i == 0)
                return sh[0].score;
            return sh[i - 1].score + (sh[i].score - sh[i - 1].score) * (p - sh[i - 1].utilization) /
                                         (sh[i].utilization - sh[i - 1].utilization);
        }
    }
    return sh[vb->nshape - 1].score;
}

typedef struct class_res {
    ks_sym cls;
    int64_t requested, capacity;
} class_res;

static class_res *class_entry(class_res *r, size_t *n, ks_sym cls)
{
    for (size_t i = 0; i < *n; i++)
        if (r[i].cls == cls)
            return &r[i];
    r[*n] = (class_res){cls, 0, 0};
    return &r[(*n)++];
}

/* upstream buildScorerFunction over the class map. */
static int64_t score_classes(const volume_binding *vb, const class_res *r, size_t n)
{
    if (n == 0)
        return 0;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s;
        if (r[i].capacity == 0 || r[i].requested > r[i].capacity)
            s = broken_linear(vb, MAX_UTILIZATION);
        else
            s = broken_linear(vb, r[i].requested * MAX_UTILIZATION / r[i].capacity);
        sum += s;
    }
    /* math.Round(sum / n) for non-negative sums */
    return (2 * sum + (int64_t)n) / (2 * (int64_t)n);
}

static ks_code vb_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                        int64_t *score, ks_status *st)
{
    volume_binding *vb = self;
    *score = 0;
    const prefilter_state *s = ks_cycle_read(cycle, &state_key);
    if (!s)
        return KS_SUCCESS;
    pod_volumes pv;
    unsigned reasons;
    ks_code code = find_for_node(vb, cycle, pod, s, ks_node_info_node(ni), &pv, &reasons, st);
    if (code == KS_SUCCESS && !reasons) {
        class_res *r = calloc(s->ndelay ? s->ndelay : 1, sizeof(*r));
        size_t n = 0;
        if (!r) {
            pod_volumes_free(&pv);
            ks_status_reason(st, "VolumeBinding: out of memory in Score");
            return KS_ERROR;
        }
        if (pv.nstatic > 0) {
            for (size_t i = 0; i < pv.nstatic; i++) {
                const ks_pv_view *v = ks_pv_view_of(pv.static_pv[i]);
                class_res *e = class_entry(r, &n, v->storage_class);
                e->requested += ks_pvc_view_of(pv.static_pvc[i])->request;
                e->capacity += v->capacity;
            }
        } else {
            for (size_t i = 0; i < pv.nprov; i++) {
                if (!pv.prov_cap[i])
                    continue;
                const ks_pvc_view *c = ks_pvc_view_of(pv.prov_pvc[i]);
                class_res *e = class_entry(r, &n, c->storage_class);
                e->capacity = ks_csi_storage_capacity_view_of(pv.prov_cap[i])->capacity;
                e->requested += c->request;
            }
        }
        *score = score_classes(vb, r, n);
        free(r);
    }
    pod_volumes_free(&pv);
    return code;
}

/* ---- Reserve / Unreserve ------------------------------------------------------------------ */

/* What Reserve assumed for the chosen node (upstream stateData.podVolumesByNode[node] after
 * AssumePodVolumes, and allBound), for PreBindPreFlight and PreBind. Objects borrowed(cycle). */
typedef struct reserved {
    int all_bound;
    size_t nstatic, nprov;
    const ks_pv **pv; /* static bindings: pv[i] to claim[i] */
    const ks_pvc **claim;
    const ks_pvc **prov; /* claims left to provisioning on the node */
    /* PreBind: the versions its writes returned (the store must catch up with them) */
    char (*pv_rv)[KS_RESOURCE_VERSION_MAX];
    char (*prov_rv)[KS_RESOURCE_VERSION_MAX];
} reserved;

static char reserved_key;

/* upstream GetBindVolumeToClaim's two changes: the claimRef (when it does not name this claim
 * with its uid) and the bound-by-controller annotation (when the PV was not pre-bound to the
 * claim by the user, and has none). */
static int needs_claim_ref(const ks_pv_view *v, const ks_pvc_view *c)
{
    return !v->has_claim_ref || v->claim_name != c->name || v->claim_namespace != c->ns ||
           strcmp(v->claim_uid, c->uid) != 0;
}

static int needs_bound_by_controller(const volume_binding *vb, const ks_pv_view *v,
                                     const ks_pvc_view *c)
{
    return !bound_to_claim(v, c) && ks_labels_get(v->annotations, v->nannotations,
                                                  vb->ann_bound_by_controller) == KS_SYM_ABSENT;
}

/* upstream AssumePodVolumes: the PVs matched on the chosen node are assumed bound to their
 * claims (when that changes them), the claims to provision assumed to name the node, so that
 * the next pods' Filter sees both; the bindings are kept for PreBind. */
static ks_code vb_reserve(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                          ks_status *st)
{
    volume_binding *vb = self;
    const prefilter_state *s = ks_cycle_read(cycle, &state_key);
    reserved *r = ks_cycle_alloc(cycle, sizeof(*r));
    if (!r || ks_cycle_write(cycle, &reserved_key, r, NULL) != 0) {
        ks_status_reason(st, "VolumeBinding: out of memory in Reserve");
        return KS_ERROR;
    }
    r->all_bound = !s || s->ndelay == 0; /* upstream arePodVolumesBound */
    if (r->all_bound)
        return KS_SUCCESS;
    const ks_node_info *ni = ks_snapshot_node(ks_cycle_snapshot(cycle), node);
    if (!ni) {
        ks_status_reasonf(st, "no pod volume found for node \"%s\"", ks_sym_str(node));
        return KS_ERROR;
    }
    pod_volumes pv;
    unsigned reasons;
    ks_code code = find_for_node(vb, cycle, pod, s, ks_node_info_node(ni), &pv, &reasons, st);
    size_t n = pv.nstatic + pv.nprov;
    if (code == KS_SUCCESS) {
        r->pv = ks_cycle_alloc(cycle, (n + 1) * sizeof(*r->pv));
        r->claim = ks_cycle_alloc(cycle, (n + 1) * sizeof(*r->claim));
        r->prov = ks_cycle_alloc(cycle, (n + 1) * sizeof(*r->prov));
        r->pv_rv = ks_cycle_alloc(cycle, (n + 1) * sizeof(*r->pv_rv));
        r->prov_rv = ks_cycle_alloc(cycle, (n + 1) * sizeof(*r->prov_rv));
        if (!r->pv || !r->claim || !r->prov || !r->pv_rv || !r->prov_rv) {
            ks_status_reason(st, "VolumeBinding: out of memory in Reserve");
            code = KS_ERROR;
        }
    }
    const char *uid = ks_pod_uid(pod);
    for (size_t i = 0; code == KS_SUCCESS && i < pv.nstatic; i++) {
        const ks_pv_view *v = ks_pv_view_of(pv.static_pv[i]);
        const ks_pvc_view *c = ks_pvc_view_of(pv.static_pvc[i]);
        r->pv[r->nstatic] = pv.static_pv[i];
        r->claim[r->nstatic++] = pv.static_pvc[i];
        if (!needs_claim_ref(v, c) && !needs_bound_by_controller(vb, v, c))
            continue; /* upstream: not dirty, nothing to assume */
        /* assume() copies the strings: the casts only fit the struct's fields */
        assumed a = {.is_claim = 0,
                     .name = (char *)ks_sym_str(v->name),
                     .claim_ns = (char *)ks_sym_str(c->ns),
                     .claim_name = (char *)ks_sym_str(c->name),
                     .claim_uid = (char *)c->uid,
                     .rv = (char *)v->resource_version,
                     .pod_uid = (char *)uid};
        if (assume(vb, &a) != 0) {
            ks_status_reason(st, "VolumeBinding: out of memory in Reserve");
            code = KS_ERROR;
        }
    }
    for (size_t i = 0; code == KS_SUCCESS && i < pv.nprov; i++) {
        const ks_pvc_view *c = ks_pvc_view_of(pv.prov_pvc[i]);
        r->prov[r->nprov++] = pv.prov_pvc[i];
        assumed a = {.is_claim = 1,
                     .name = (char *)ks_sym_str(c->name),
                     .claim_ns = (char *)ks_sym_str(c->ns),
                     .rv = (char *)c->resource_version,
                     .selected_node = (char *)ks_sym_str(node),
                     .pod_uid = (char *)uid};
        if (assume(vb, &a) != 0) {
            ks_status_reason(st, "VolumeBinding: out of memory in Reserve");
            code = KS_ERROR;
        }
    }
    pod_volumes_free(&pv);
    if (code != KS_SUCCESS) {
        ks_counter_inc(vb->stage_errors, "assume");
        forget_pod(vb, uid);
    }
    return code;
}

static void vb_unreserve(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node)
{
    (void)cycle;
    (void)node;
    forget_pod(self, ks_pod_uid(pod));
}

/* ---- PreBindPreFlight / PreBind ----------------------------------------------------------- */

/* upstream PreBindPreFlight: Skip when every claim is bound (nothing to write, and no
 * nominatedNodeName needed for it); Success otherwise. */
static ks_code vb_pre_bind_pre_flight(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                      ks_prebind_preflight *result, ks_status *st)
{
    (void)self;
    (void)pod;
    result->allow_parallel = 1; /* upstream: AllowParallel, with DynamicResources' PreBind */
    const reserved *r = ks_cycle_read(cycle, &reserved_key);
    if (!r) {
        ks_status_reasonf(st, "no pod volume found for node \"%s\"", ks_sym_str(node));
        return KS_ERROR;
    }
    return r->all_bound ? KS_SKIP : KS_SUCCESS;
}

/* upstream bindAPIUpdate's PV Update: the claimRef (upstream reference.GetReference of the
 * claim: kind, namespace, name, uid, apiVersion, resourceVersion) and bound-by-controller, on the
 * version read. */
static ks_code write_claim_ref(volume_binding *vb, ks_cycle *cycle, const ks_pv_view *v,
                               const ks_pvc_view *c, char *rv, ks_status *st)
{
    char patch[2048];
    int n = snprintf(patch, sizeof(patch), "{\"metadata\":{\"resourceVersion\":\"%s\"",
                     v->resource_version);
    if (needs_bound_by_controller(vb, v, c))
        n += snprintf(patch + n, sizeof(patch) - (size_t)n,
                      ",\"annotations\":{\"" ANN_BOUND_BY_CONTROLLER "\":\"yes\"}");
    n += snprintf(patch + n, sizeof(patch) - (size_t)n, "}");
    if (needs_claim_ref(v, c))
        n += snprintf(patch + n, sizeof(patch) - (size_t)n,
                      ",\"spec\":{\"claimRef\":{\"kind\":\"PersistentVolumeClaim\","
                      "\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\",\"apiVersion\":\"v1\","
                      "\"resourceVersion\":\"%s\",\"fieldPath\":null}}",
                      ks_sym_str(c->ns), ks_sym_str(c->name), c->uid, c->resource_version);
    snprintf(patch + n, sizeof(patch) - (size_t)n, "}");
    /* names, uids and versions are DNS labels, UUIDs and numbers: nothing to escape */
    return ks_storage_patch(cycle, KS_STORAGE_PERSISTENT_VOLUME, KS_SYM_EMPTY, v->name, patch, rv,
                            st);
}

/* upstream bindAPIUpdate's claim Update: volume.kubernetes.io/selected-node, on the version
 * read. */
static ks_code write_selected_node(ks_cycle *cycle, const ks_pvc_view *c, ks_sym node, char *rv,
                                   ks_status *st)
{
    char patch[1024];
    snprintf(patch, sizeof(patch),
             "{\"metadata\":{\"resourceVersion\":\"%s\",\"annotations\":{\"" ANN_SELECTED_NODE
             "\":\"%s\"}}}",
             c->resource_version, ks_sym_str(node));
    return ks_storage_patch(cycle, KS_STORAGE_PERSISTENT_VOLUME_CLAIM, c->ns, c->name, patch, rv,
                            st);
}

enum { CHECK_DONE = 1, CHECK_WAIT = 0, CHECK_FAILED = -1 };

/* upstream checkBindings' tryTranslatePVToCSI (cn: the node's CSINode, NULL when it has none)
 * and node affinity check of a PV on the pod's node. A translation error reads
 * "<translate_prefix>could not translate pv: ...". */
static int check_pv_on_node(volume_binding *vb, const ks_pv_view *v, const ks_csi_node *cn,
                            const char *translate_prefix, const ks_node *node, ks_status *st)
{
    vb_pv_translation tr;
    const vb_pv_translation *trp = NULL;
    if (vb_plugin_migrated_on_node(&vb->csi, vb_pv_plugin(v), cn)) {
        vb_translate_pv(&vb->csi, v, &tr);
        if (tr.failed) {
            ks_status_reasonf(st, "binding volumes: %s%s", translate_prefix, tr.err);
            return CHECK_FAILED;
        }
        trp = &tr;
    }
    if (pv_node_affinity_ok(vb, v, trp, node))
        return CHECK_DONE;
    ks_status_reasonf(st,
                      "binding volumes: pv \"%s\" node affinity doesn't match node \"%s\": no "
                      "matching NodeSelectorTerms",
                      ks_sym_str(v->name), ks_sym_str(ks_node_name(node)));
    return CHECK_FAILED;
}

/* upstream checkBindings, on the store's objects (the informers' view of the API server):
 * CHECK_DONE when every claim the pod's PreBind wrote is fully bound, CHECK_WAIT while the PV
 * controller or the provisioner still works (or the store has not caught up with the writes),
 * CHECK_FAILED with the reason in st when the binding must be retried from scratch. */
static int check_bindings(volume_binding *vb, ks_cycle *cycle, const reserved *r,
                          const ks_node *node, int simulated, ks_status *st)
{
    /* upstream reads the CSINode first; none is no error (nothing is migrated there) */
    const ks_csi_node *cn = ks_cycle_csi_node(cycle, ks_node_name(node));
    for (size_t i = 0; i < r->nstatic; i++) {
        const ks_pv_view *want = ks_pv_view_of(r->pv[i]);
        const ks_pvc_view *wc = ks_pvc_view_of(r->claim[i]);
        const ks_pv *pvo = ks_cycle_pv(cycle, want->name);
        const ks_pvc *pvco = ks_cycle_pvc(cycle, wc->ns, wc->name);
        if (!pvo || !pvco) {
            if (!pvo)
                ks_status_reasonf(st,
                                  "binding volumes: failed to check binding: persistentvolumes "
                                  "\"%s\" not found",
                                  ks_sym_str(want->name));
            else
                ks_status_reasonf(st,
                                  "binding volumes: failed to check binding: "
                                  "persistentvolumeclaims \"%s/%s\" not found",
                                  ks_sym_str(wc->ns), ks_sym_str(wc->name));
            return CHECK_FAILED;
        }
        const ks_pv_view *v = ks_pv_view_of(pvo);
        if (ks_resource_version_cmp(r->pv_rv[i], v->resource_version) > 0)
            return CHECK_WAIT; /* the informer has not delivered our write yet */
        if (check_pv_on_node(vb, v, cn, "failed to translate pv to csi: ", node, st) != CHECK_DONE)
            return CHECK_FAILED;
        if (!v->has_claim_ref || !v->claim_uid[0]) {
            ks_status_reasonf(st, "binding volumes: ClaimRef got reset for pv \"%s\"",
                              ks_sym_str(v->name));
            return CHECK_FAILED;
        }
        if (!fully_bound(vb, ks_pvc_view_of(pvco)))
            return CHECK_WAIT;
    }
    for (size_t i = 0; i < r->nprov; i++) {
        const ks_pvc_view *wc = ks_pvc_view_of(r->prov[i]);
        const ks_pvc *pvco = ks_cycle_pvc(cycle, wc->ns, wc->name);
        if (!pvco) {
            ks_status_reasonf(st,
                              "binding volumes: failed to check provisioning pvc: "
                              "persistentvolumeclaims \"%s/%s\" not found",
                              ks_sym_str(wc->ns), ks_sym_str(wc->name));
            return CHECK_FAILED;
        }
        const ks_pvc_view *c = ks_pvc_view_of(pvco);
        if (ks_resource_version_cmp(r->prov_rv[i], c->resource_version) > 0)
            return CHECK_WAIT;
        if (c->nannotations == 0) {
            ks_status_reasonf(st, "binding volumes: selectedNode annotation reset for PVC \"%s\"",
                              ks_sym_str(c->name));
            return CHECK_FAILED;
        }
        if (ks_labels_get(c->annotations, c->nannotations, vb->ann_selected_node) !=
            ks_node_name(node)) {
            /* the provisioner removes it to ask for another node */
            ks_status_reasonf(st, "binding volumes: provisioning failed for PVC \"%s\"",
                              ks_sym_str(c->name));
            return CHECK_FAILED;
        }
        if (simulated)
            continue; /* nothing provisions in simulate: the selected node is the answer */
        if (c->volume_name != KS_SYM_EMPTY) {
            const ks_pv *pvo = ks_cycle_pv(cycle, c->volume_name);
            if (!pvo)
                return CHECK_WAIT; /* upstream tolerates the informer's delay */
            if (check_pv_on_node(vb, ks_pv_view_of(pvo), cn, "", node, st) != CHECK_DONE)
                return CHECK_FAILED;
        }
        if (!fully_bound(vb, c))
            return CHECK_WAIT;
    }
    return CHECK_DONE;
}

/* upstream BindPodVolumes: the writes, then a poll every second (the first after one
 * second, as wait.PollUntilContextTimeout without immediate) until every claim is bound, a
 * check fails, the pod is deleted, or bindTimeoutSeconds pass. Binding thread. */
static ks_code bind_pod_volumes(volume_binding *vb, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                reserved *r, ks_status *st)
{
    for (size_t i = 0; i < r->nstatic; i++)
        if (write_claim_ref(vb, cycle, ks_pv_view_of(r->pv[i]), ks_pvc_view_of(r->claim[i]),
                            r->pv_rv[i], st) != KS_SUCCESS)
            return KS_ERROR;
    for (size_t i = 0; i < r->nprov; i++)
        if (write_selected_node(cycle, ks_pvc_view_of(r->prov[i]), node, r->prov_rv[i], st) !=
            KS_SUCCESS)
            return KS_ERROR;
    const ks_node_info *ni = ks_snapshot_node(ks_cycle_snapshot(cycle), node);
    if (!ni) {
        ks_status_reasonf(st, "binding volumes: failed to get node \"%s\": node \"%s\" not found",
                          ks_sym_str(node), ks_sym_str(node));
        return KS_ERROR;
    }
    int simulated = (ks_source_flags(cycle) & KS_SOURCE_SIMULATED) != 0;
    int64_t left = vb->bind_timeout_seconds * 1000000000LL;
    for (;;) {
        if (!simulated && left <= 0) {
            ks_status_reason(st, "binding volumes: context deadline exceeded");
            return KS_ERROR;
        }
        int64_t step = left < 1000000000LL ? left : 1000000000LL;
        int slept = simulated ? 0 : ks_binding_sleep(cycle, step);
        if (slept == KS_ENOTFOUND) {
            ks_status_reasonf(st,
                              "binding volumes: pod does not exist any more: pod \"%s\" not found",
                              ks_sym_str(ks_pod_name(pod)));
            return KS_ERROR;
        }
        if (slept != 0) {
            ks_status_reason(st, "binding volumes: context canceled");
            return KS_ERROR;
        }
        left -= step;
        if (!simulated && step < 1000000000LL) {
            ks_status_reason(st, "binding volumes: context deadline exceeded");
            return KS_ERROR;
        }
        int done = check_bindings(vb, cycle, r, ks_node_info_node(ni), simulated, st);
        if (done == CHECK_FAILED)
            return KS_ERROR;
        if (done == CHECK_DONE)
            break;
        if (simulated) { /* nothing else will change the in-memory cluster */
            ks_status_reason(st, "binding volumes: context deadline exceeded");
            return KS_ERROR;
        }
    }
    forget_pod(vb, ks_pod_uid(pod)); /* the store holds what was assumed now */
    return KS_SUCCESS;
}

static ks_code vb_pre_bind(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                           ks_status *st)
{
    volume_binding *vb = self;
    const reserved *r = ks_cycle_read(cycle, &reserved_key);
    if (!r) {
        ks_status_reasonf(st, "no pod volume found for node \"%s\"", ks_sym_str(node));
        return KS_ERROR;
    }
    if (r->all_bound)
        return KS_SUCCESS;
    ks_code code = bind_pod_volumes(vb, cycle, pod, node, (reserved *)r, st); /* ours to fill */
    if (code != KS_SUCCESS)
        ks_counter_inc(vb->stage_errors, "bind");
    return code;
}

/* ---- events and hints --------------------------------------------------------------------- */

static int pod_uses_claim(const ks_pod *pod, ks_sym name)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++)
        if (is_claim_volume(&vols[i]) && vols[i].claim == name)
            return 1;
    return 0;
}

/* isSchedulableAfterPersistentVolumeClaimChange: a claim of the pod (plain or ephemeral). */
static ks_queueing_hint vb_after_pvc_change(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    const ks_pvc *pvc = ev->new_obj;
    if (!pvc)
        return KS_QUEUE;
    const ks_pvc_view *c = ks_pvc_view_of(pvc);
    if (c->ns != ks_pod_namespace(pod))
        return KS_QUEUE_SKIP;
    return pod_uses_claim(pod, c->name) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static int same_reqs(const ks_selector_req *a, const ks_selector_req *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].nvalues != b[i].nvalues)
            return 0;
        for (uint32_t k = 0; k < a[i].nvalues; k++)
            if (a[i].values[k] != b[i].values[k])
                return 0;
    }
    return 1;
}

/* isSchedulableAfterStorageClassChange: a new class, or allowedTopologies changed. */
static ks_queueing_hint vb_after_sc_change(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    if (!ev->old_obj || !ev->new_obj)
        return KS_QUEUE;
    const ks_storage_class_view *a = ks_storage_class_view_of(ev->old_obj),
                                *b = ks_storage_class_view_of(ev->new_obj);
    if (a->nallowed_topologies != b->nallowed_topologies)
        return KS_QUEUE;
    for (uint32_t t = 0; t < a->nallowed_topologies; t++) {
        const ks_node_selector_term *x = &a->allowed_topologies[t], *y = &b->allowed_topologies[t];
        if (x->nexprs != y->nexprs || !same_reqs(x->exprs, y->exprs, x->nexprs))
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* isSchedulableAfterCSINodeChange: a new CSINode, or its migrated-plugins annotation changed. */
static ks_queueing_hint vb_after_csi_node_change(void *self, const ks_pod *pod,
                                                 const ks_event_info *ev)
{
    volume_binding *vb = self;
    (void)pod;
    if (!ev->old_obj || !ev->new_obj)
        return KS_QUEUE;
    const ks_csi_node_view *a = ks_csi_node_view_of(ev->old_obj),
                           *b = ks_csi_node_view_of(ev->new_obj);
    ks_sym x = ks_labels_get(a->annotations, a->nannotations, vb->ann_migrated);
    ks_sym y = ks_labels_get(b->annotations, b->nannotations, vb->ann_migrated);
    /* a missing annotation reads "" upstream */
    if (x == KS_SYM_ABSENT)
        x = KS_SYM_EMPTY;
    if (y == KS_SYM_ABSENT)
        y = KS_SYM_EMPTY;
    return x != y ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* isSchedulableAfterCSIDriverChange: one of the pod's in-line CSI volumes' driver stopped asking
 * for storage capacity. */
static ks_queueing_hint vb_after_csi_driver_change(void *self, const ks_pod *pod,
                                                   const ks_event_info *ev)
{
    (void)self;
    if (!ev->old_obj || !ev->new_obj)
        return KS_QUEUE;
    const ks_csi_driver_view *a = ks_csi_driver_view_of(ev->old_obj),
                             *b = ks_csi_driver_view_of(ev->new_obj);
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++) {
        if (vols[i].source != KS_VOLSRC_CSI || vols[i].id != b->name)
            continue;
        if (a->storage_capacity && !b->storage_capacity)
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* isSchedulableAfterCSIStorageCapacityChange: a new capacity, or its volume limit grew. */
static ks_queueing_hint vb_after_capacity_change(void *self, const ks_pod *pod,
                                                 const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    if (!ev->old_obj || !ev->new_obj)
        return KS_QUEUE;
    int hold, hnew;
    int64_t lold = volume_limit(ks_csi_storage_capacity_view_of(ev->old_obj), &hold);
    int64_t lnew = volume_limit(ks_csi_storage_capacity_view_of(ev->new_obj), &hnew);
    return hnew && (!hold || lnew > lold) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37), in its order. */
static size_t vb_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_STORAGE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, vb_after_sc_change},
        {{KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, vb_after_pvc_change},
        {{KS_RES_PERSISTENT_VOLUME, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, NULL},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, NULL},
        {{KS_RES_CSI_NODE, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, vb_after_csi_node_change},
        {{KS_RES_CSI_DRIVER, KS_ACT_UPDATE_ANY}, vb_after_csi_driver_change},
        {{KS_RES_CSI_STORAGE_CAPACITY, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, vb_after_capacity_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream VolumeBinding.SignPod: VolumesSigner. */
static ks_code vb_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    return ks_sign_volumes(pod, sig, st);
}

const ks_plugin_desc ks_plugin_volume_binding = {
    .size = sizeof(ks_plugin_desc),
    .name = "VolumeBinding",
    .create = vb_create,
    .destroy = vb_destroy,
    .pre_filter = vb_pre_filter,
    .filter = vb_filter,
    .pre_score = vb_pre_score,
    .score = vb_score,
    .reserve = vb_reserve,
    .unreserve = vb_unreserve,
    .pre_bind = vb_pre_bind,
    .pre_bind_pre_flight = vb_pre_bind_pre_flight,
    .events_with_hints = vb_events,
    .sign = vb_sign,
    .args_schema = &vb_args_schema,
    .validate_args = vb_validate_args,
};
