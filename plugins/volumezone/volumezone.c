/*
 * VolumeZone (upstream plugins/volumezone/volume_zone.go, v1.37).
 *
 *   PreFilter  the topology of the PersistentVolumes bound to the pod's persistentVolumeClaim
 *              volumes: each PV's zone and region labels (the failure-domain.beta and the
 *              topology.kubernetes.io ones), a value split at "__" into a set of zones. A claim
 *              that is missing, unbound with no class, of a class that is missing or has no
 *              volumeBindingMode, or unbound with Immediate binding: UnschedulableAndUnresolvable
 *              with upstream's message. Unbound WaitForFirstConsumer claims are left to
 *              VolumeBinding. No topology at all: Skip.
 *   Filter     a node with none of the four labels passes (a single-zone cluster); else every PV
 *              label must be on the node (a beta PV label may be matched by the node's GA label)
 *              with a value in the PV's set -> UnschedulableAndUnresolvable "node(s) had no
 *              available volume zone".
 *   Events     StorageClass added (hint: WaitForFirstConsumer only), Node added or its labels
 *              updated, PersistentVolumeClaim added or updated (hint: one of the pod's claims),
 *              PersistentVolume added or updated (hint: added, or its topology changed).
 *
 * The claims and volumes are read through the host's cycle lookups (upstream's listers: what the
 * informers know now, not a snapshot); not-found messages are the informer listers' words
 * (`persistentvolumeclaim "data" not found`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/sign.h"

#define ERR_REASON_CONFLICT "node(s) had no available volume zone"

/* upstream topologyLabels, in its order: beta zone, beta region, GA zone, GA region. */
enum { TOPO_BETA_ZONE, TOPO_BETA_REGION, TOPO_ZONE, TOPO_REGION, NTOPO };
static const char *const k_topology_labels[NTOPO] = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};

/* What create() builds: interned constants, read-only afterwards (any thread). */
typedef struct volume_zone {
    ks_sym labels[NTOPO];
} volume_zone;

/* One PV topology label (upstream pvTopology): the label key and its set of zones. */
typedef struct pv_topology {
    ks_sym pv_name;
    int key; /* TOPO_* */
    uint32_t nvalues;
    const ks_sym *values; /* KS_SYM_ABSENT for a zone no object has: matches no node */
} pv_topology;

/* PreFilter state: immutable after PreFilter (upstream Clone returns itself). */
typedef struct prefilter_state {
    size_t n;
    pv_topology *topos;
} prefilter_state;

static char prefilter_key;

static void *vz_create(const ks_args *args, ks_error *err)
{
    (void)args;
    volume_zone *vz = ks_alloc(sizeof(*vz));
    if (!vz) {
        ks_error_set(err, "VolumeZone: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    for (int i = 0; i < NTOPO; i++)
        vz->labels[i] = ks_intern(k_topology_labels[i]);
    return vz;
}

static void vz_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* ---- topologies ----------------------------------------------------------------------------- */

/* A growable list of topologies (malloc'd; the Filter fallback runs on Filter workers, where the
 * cycle's arena may not be used). */
typedef struct topo_list {
    size_t n, cap;
    pv_topology *t;
    ks_sym *vals; /* every topology's values, one block per topology (vals_blocks) */
    void **blocks;
    size_t nblocks;
    int oom;
} topo_list;

static void topo_list_free(topo_list *l)
{
    for (size_t i = 0; i < l->nblocks; i++)
        free(l->blocks[i]);
    free(l->blocks);
    free(l->t);
    memset(l, 0, sizeof(*l));
}

static void *topo_block(topo_list *l, size_t n)
{
    void **b = realloc(l->blocks, (l->nblocks + 1) * sizeof(*b));
    void *p = b ? malloc(n ? n : 1) : NULL;
    if (b)
        l->blocks = b;
    if (!p) {
        l->oom = 1;
        return NULL;
    }
    l->blocks[l->nblocks++] = p;
    return p;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* One zone of a label value: a slice of its text. */
typedef struct zone_text {
    const char *p;
    size_t len;
} zone_text;

/* upstream volumehelpers.LabelZonesToSet: the value split at "__", each zone trimmed; an empty
 * zone makes the whole label unusable (upstream logs and ignores it): -1. Else the number of
 * distinct zones written to out (room for strlen(value) / 2 + 1). */
static int zone_texts(const char *value, zone_text *out)
{
    int n = 0;
    for (const char *p = value;;) {
        const char *end = strstr(p, "__");
        const char *a = p, *z = end ? end : p + strlen(p);
        while (a < z && is_space(*a))
            a++;
        while (z > a && is_space(z[-1]))
            z--;
        if (a == z)
            return -1;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = out[i].len == (size_t)(z - a) && !memcmp(out[i].p, a, out[i].len);
        if (!dup)
            out[n++] = (zone_text){a, (size_t)(z - a)};
        if (!end)
            return n;
        p = end + 2;
    }
}

/* The zones of a label value as symbols looked up (a zone no object names is KS_SYM_ABSENT and
 * matches no node label); -1 when the label is ignored. vals: room for strlen / 2 + 1. */
static int zones_of(const char *value, ks_sym *vals)
{
    zone_text stack[16], *t = stack;
    size_t room = strlen(value) / 2 + 1;
    if (room > 16 && !(t = malloc(room * sizeof(*t))))
        return -1;
    int n = zone_texts(value, t);
    for (int i = 0; i < n; i++) {
        char buf[256];
        vals[i] = KS_SYM_ABSENT;
        if (t[i].len < sizeof(buf)) {
            memcpy(buf, t[i].p, t[i].len);
            buf[t[i].len] = '\0';
            vals[i] = ks_sym_lookup(buf);
        }
    }
    if (t != stack)
        free(t);
    return n;
}

/* upstream getPVTopologies: the PV's topology labels, in topologyLabels order. */
static void pv_topologies(const volume_zone *vz, const ks_pv *pv, topo_list *l)
{
    const ks_pv_view *v = ks_pv_view_of(pv);
    for (int k = 0; k < NTOPO; k++) {
        ks_sym val = ks_labels_get(v->labels, v->nlabels, vz->labels[k]);
        if (val == KS_SYM_ABSENT)
            continue;
        const char *text = ks_sym_str(val);
        if (!text)
            continue;
        ks_sym *vals = topo_block(l, (strlen(text) / 2 + 1) * sizeof(ks_sym));
        if (!vals)
            return;
        int n = zones_of(text, vals);
        if (n < 0)
            continue; /* ignored, as upstream */
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 4;
            pv_topology *t = realloc(l->t, cap * sizeof(*t));
            if (!t) {
                l->oom = 1;
                return;
            }
            l->t = t;
            l->cap = cap;
        }
        l->t[l->n++] = (pv_topology){v->name, k, (uint32_t)n, vals};
    }
}

/* upstream getPVbyPod. KS_SUCCESS with the topologies in l, or the status to return. */
static ks_code pv_by_pod(const volume_zone *vz, ks_cycle *cycle, const ks_pod *pod, topo_list *l,
                         ks_status *st)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    ks_sym ns = ks_pod_namespace(pod);
    for (size_t i = 0; i < n; i++) {
        if (vols[i].source != KS_VOLSRC_PVC)
            continue;
        if (vols[i].claim == KS_SYM_EMPTY) {
            ks_status_reason(st, "PersistentVolumeClaim had no name");
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        const ks_pvc *pvc = ks_cycle_pvc(cycle, ns, vols[i].claim);
        if (!pvc) {
            ks_status_reasonf(st, "persistentvolumeclaim \"%s\" not found",
                              ks_sym_str(vols[i].claim));
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        const ks_pvc_view *c = ks_pvc_view_of(pvc);
        if (c->volume_name == KS_SYM_EMPTY) {
            if (c->storage_class == KS_SYM_EMPTY) {
                ks_status_reason(st, "PersistentVolumeClaim had no pv name and storageClass name");
                return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
            const ks_storage_class *sc = ks_cycle_storage_class(cycle, c->storage_class);
            if (!sc) {
                ks_status_reasonf(st, "storageclass.storage.k8s.io \"%s\" not found",
                                  ks_sym_str(c->storage_class));
                return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
            uint32_t mode = ks_storage_class_view_of(sc)->binding_mode;
            if (mode == KS_BINDING_UNSET) {
                ks_status_reasonf(st, "VolumeBindingMode not set for StorageClass \"%s\"",
                                  ks_sym_str(c->storage_class));
                return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            }
            if (mode == KS_BINDING_WAIT_FOR_FIRST_CONSUMER)
                continue; /* unbound: VolumeBinding's */
            ks_status_reason(st, "PersistentVolume had no name");
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        const ks_pv *pv = ks_cycle_pv(cycle, c->volume_name);
        if (!pv) {
            ks_status_reasonf(st, "persistentvolume \"%s\" not found", ks_sym_str(c->volume_name));
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        pv_topologies(vz, pv, l);
        if (l->oom) {
            ks_status_reason(st, "VolumeZone: out of memory");
            return KS_ERROR;
        }
    }
    return KS_SUCCESS;
}

/* ---- PreFilter / Filter ------------------------------------------------------------------- */

/* pre_filter: scheduling thread, once per cycle. The topologies move into the cycle's arena. */
static ks_code vz_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                             ks_prefilter_result *result, ks_status *st)
{
    const volume_zone *vz = self;
    (void)result;
    topo_list l = {0};
    ks_code code = pv_by_pod(vz, cycle, pod, &l, st);
    if (code != KS_SUCCESS || l.n == 0) {
        topo_list_free(&l);
        return code != KS_SUCCESS ? code : KS_SKIP;
    }
    prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s) + l.n * sizeof(pv_topology));
    size_t nvals = 0;
    for (size_t i = 0; i < l.n; i++)
        nvals += l.t[i].nvalues;
    ks_sym *vals = s ? ks_cycle_alloc(cycle, nvals * sizeof(ks_sym) + 1) : NULL;
    if (!s || !vals) {
        topo_list_free(&l);
        ks_status_reason(st, "VolumeZone: out of memory in PreFilter");
        return KS_ERROR;
    }
    s->n = l.n;
    s->topos = (pv_topology *)(s + 1);
    for (size_t i = 0; i < l.n; i++) {
        s->topos[i] = l.t[i];
        memcpy(vals, l.t[i].values, l.t[i].nvalues * sizeof(ks_sym));
        s->topos[i].values = vals;
        vals += l.t[i].nvalues;
    }
    topo_list_free(&l);
    if (ks_cycle_write(cycle, &prefilter_key, s, NULL) != 0) {
        ks_status_reason(st, "VolumeZone: cannot write the PreFilter state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* upstream translateToGALabel */
static int ga_of(int key)
{
    return key == TOPO_BETA_ZONE ? TOPO_ZONE : key == TOPO_BETA_REGION ? TOPO_REGION : key;
}

static ks_code check_node(const volume_zone *vz, const pv_topology *t, size_t n,
                          const ks_node *node, ks_status *st)
{
    int any = 0;
    for (int k = 0; k < NTOPO && !any; k++)
        any = ks_node_label(node, vz->labels[k]) != KS_SYM_ABSENT;
    if (!any)
        return KS_SUCCESS; /* no zone constraints: a single-zone cluster */
    for (size_t i = 0; i < n; i++) {
        ks_sym v = ks_node_label(node, vz->labels[t[i].key]);
        if (v == KS_SYM_ABSENT)
            v = ks_node_label(node, vz->labels[ga_of(t[i].key)]);
        int found = 0;
        for (uint32_t j = 0; v != KS_SYM_ABSENT && j < t[i].nvalues && !found; j++)
            found = t[i].values[j] == v;
        if (!found) {
            ks_status_reason(st, ERR_REASON_CONFLICT);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
    }
    return KS_SUCCESS;
}

/* filter: Filter workers, concurrently; the state is read-only. */
static ks_code vz_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                         ks_status *st)
{
    const volume_zone *vz = self;
    const ks_pod_volume *vols;
    if (ks_pod_volumes(pod, &vols) == 0)
        return KS_SUCCESS;
    const prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    const ks_node *node = ks_node_info_node(ni);
    if (s)
        return check_node(vz, s->topos, s->n, node, st);
    /* No state (PreFilter did not run): compute it here, as upstream's fallback. */
    topo_list l = {0};
    ks_code code = pv_by_pod(vz, cycle, pod, &l, st);
    if (code == KS_SUCCESS)
        code = check_node(vz, l.t, l.n, node, st);
    topo_list_free(&l);
    return code;
}

/* ---- events and hints --------------------------------------------------------------------- */

/* upstream isSchedulableAfterStorageClassAdded: only a WaitForFirstConsumer class may help. */
static ks_queueing_hint vz_after_storage_class_added(void *self, const ks_pod *pod,
                                                     const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    const ks_storage_class *sc = ev->new_obj;
    if (!sc)
        return KS_QUEUE;
    return ks_storage_class_view_of(sc)->binding_mode == KS_BINDING_WAIT_FOR_FIRST_CONSUMER
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterPersistentVolumeClaimChange / isPVCRequestedFromPod. */
static ks_queueing_hint vz_after_pvc_change(void *self, const ks_pod *pod, const ks_event_info *ev)
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

/* Whether two label values (NULL: absent) give the same topology: both absent or ignored (an
 * empty zone), or the same set of zones. */
static int same_zone_sets(const char *x, const char *y)
{
    size_t rx = x ? strlen(x) / 2 + 1 : 1, ry = y ? strlen(y) / 2 + 1 : 1;
    zone_text *zx = malloc(rx * sizeof(*zx)), *zy = malloc(ry * sizeof(*zy));
    int same = 1;
    if (!zx || !zy) {
        same = 0; /* cannot tell: the hint queues the pod */
    } else {
        int nx = x ? zone_texts(x, zx) : -1, ny = y ? zone_texts(y, zy) : -1;
        same = nx == ny || (nx < 0 && ny < 0);
        for (int i = 0; same && i < nx; i++) {
            int found = 0;
            for (int j = 0; j < ny && !found; j++)
                found = zx[i].len == zy[j].len && !memcmp(zx[i].p, zy[j].p, zx[i].len);
            same = found;
        }
    }
    free(zx);
    free(zy);
    return same;
}

/* The topologies of two PVs as upstream compares them (reflect.DeepEqual of getPVTopologies):
 * the same PV name and, label by label, the same topology. */
static int same_topologies(const volume_zone *vz, const ks_pv *a, const ks_pv *b)
{
    const ks_pv_view *va = ks_pv_view_of(a), *vb = ks_pv_view_of(b);
    if (va->name != vb->name)
        return 0;
    for (int k = 0; k < NTOPO; k++) {
        ks_sym x = ks_labels_get(va->labels, va->nlabels, vz->labels[k]);
        ks_sym y = ks_labels_get(vb->labels, vb->nlabels, vz->labels[k]);
        if (!same_zone_sets(x == KS_SYM_ABSENT ? NULL : ks_sym_str(x),
                            y == KS_SYM_ABSENT ? NULL : ks_sym_str(y)))
            return 0;
    }
    return 1;
}

/* upstream isSchedulableAfterPersistentVolumeChange: a new PV, or a PV whose topology changed. */
static ks_queueing_hint vz_after_pv_change(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    const volume_zone *vz = self;
    (void)pod;
    const ks_pv *old_pv = ev->old_obj, *new_pv = ev->new_obj;
    if (!old_pv || !new_pv)
        return KS_QUEUE;
    return same_topologies(vz, old_pv, new_pv) ? KS_QUEUE_SKIP : KS_QUEUE;
}

/* upstream EventsToRegister (v1.37). StorageClass updates are left out: volumeBindingMode is
 * immutable. */
static size_t vz_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_STORAGE_CLASS, KS_ACT_ADD}, vz_after_storage_class_added},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, NULL},
        {{KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, vz_after_pvc_change},
        {{KS_RES_PERSISTENT_VOLUME, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, vz_after_pv_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream VolumeZone.SignPod: VolumesSigner. */
static ks_code vz_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    return ks_sign_volumes(pod, sig, st);
}

const ks_plugin_desc ks_plugin_volume_zone = {
    .size = sizeof(ks_plugin_desc),
    .name = "VolumeZone",
    .create = vz_create,
    .destroy = vz_destroy,
    .pre_filter = vz_pre_filter,
    .filter = vz_filter,
    .events_with_hints = vz_events,
    .sign = vz_sign,
};
