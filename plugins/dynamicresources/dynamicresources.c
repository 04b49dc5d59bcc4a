/*
 * DynamicResources: upstream v1.37.2's pkg/scheduler/framework/plugins/dynamicresources
 * (dynamicresources.go) on the host's DRA services (ABI 1.10: claims, in-flight allocations and
 * the structured allocator, core/sched/dra_manager.c and dra_allocator.c).
 *
 *   PreEnqueue  every claim of the pod exists, is not being deleted and, when made from a
 *               template, belongs to the pod (foreachPodResourceClaim);
 *   PreFilter   the claims; which are allocated (their node selectors) and which the scheduler
 *               must allocate; their device classes; an allocator over the slices of now and the
 *               devices allocated or in flight; Skip for a pod without claims;
 *   Filter      per node: the allocated claims' node selectors, then Allocate of the others,
 *               whose result is kept for Score and Reserve;
 *   PostFilter  deallocates one allocated claim that was unavailable and is reserved for no one
 *               else;
 *   Score       the prioritized-list score (firstAvailable: earlier subrequests score more),
 *               normalized as helper.DefaultNormalizeScore;
 *   Reserve     the chosen node's allocations become in flight (later pods see the devices
 *               taken); Unreserve drops them;
 *   PreBind     writes the finalizer, status.allocation and reservedFor: to the API server in
 *               live mode (an Update and an UpdateStatus, retried on conflicts, the answer filed
 *               at once as upstream's assume cache does), to the in-memory cluster in
 *               `kubesched simulate` (core/sched/dra_claim_writes.c, dra_manager.c).
 *
 *               With binding conditions (DRADeviceBindingConditions, on in v1.37) PreBind then
 *               waits, polling every 5 s up to bindingTimeout (600s), until the driver reports
 *               the devices' conditions true in status.devices; Filter treats an allocated
 *               claim whose binding failed or timed out as unavailable (PostFilter may then
 *               deallocate it).
 *
 * Extended resources backed by DRA (DRAExtendedResource, extendeddynamicresources.go): a pod
 * that requests an extended resource a DeviceClass maps gets a special claim, found from an
 * earlier cycle or made in memory ("<extended-resources>") in PreFilter; Filter gives each node
 * its variant of the claim (one device request per container and resource that the node's
 * allocatable lacks, createRequestsAndMappings) and allocates it with the user's claims; Reserve
 * puts it in flight; PreBind creates it (generateName), binds it and writes the pod's
 * status.extendedResourceClaimStatus; Unreserve and PostFilter delete a claim that exists.
 * In live mode the claim is POSTed (generateName) and deleted through the API server.
 *
 * Messages and codes are upstream's word for word (statusUnschedulable is
 * UnschedulableAndUnresolvable there). Not ported: the binding-conditions metric families,
 * PodGroup-owned claims.
 *
 * Threads: PreEnqueue on the event thread; Filter and Score on the workers (the state's mutex
 * guards its per-node results and unavailable claims); the rest on the scheduling thread, PreBind
 * on a binding thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kubesched/plugin.h"
#include "../common/args.h"
#include "../common/match.h"
#include "../common/normalize.h"
#include "../common/resources.h"
#include "dynamicresources_int.h"

#define FIRST_AVAILABLE_MAX 8 /* resourceapi.FirstAvailableDeviceRequestMaxSize */
#define UU KS_UNSCHEDULABLE_AND_UNRESOLVABLE

typedef struct dra_plugin {
    int64_t filter_timeout_ns;  /* 0: none */
    int64_t binding_timeout_ns; /* bindingTimeout (binding conditions) */
    ks_sym metadata_name;
} dra_plugin;

/* One node's allocation of the claims to allocate (upstream nodeAllocation). */
typedef struct node_alloc {
    ks_sym node;
    ks_dra_allocation *alloc;
    const dra_ext_variant *ext; /* the special claim allocated here (result nallocate), or NULL */
} node_alloc;

/* upstream stateData; written in PreFilter, read-only afterwards but for the fields under mu. */
typedef struct dra_state {
    size_t nclaims;
    const ks_resource_claim **claims; /* referenced; one per spec.resourceClaims entry found */
    size_t nallocate;
    const ks_resource_claim **to_allocate; /* the unallocated ones, in claims' order */
    ks_dra_allocator *allocator;           /* NULL: nothing to allocate; borrowed(cycle) */
    pthread_mutex_t mu;
    uint8_t *unavailable; /* per claim (unavailableClaims) */
    node_alloc *nodes;    /* open addressing by node symbol (nodeAllocations) */
    size_t ncap;
    ks_dra_allocation *reserved; /* the node's allocation Reserve made in flight */
    const dra_ext_variant *reserved_ext;
    /* draExtendedResource and the special claim (extendedResourceClaim()) */
    size_t next;
    dra_ext_res *ext;                   /* sorted by resource name */
    const ks_resource_claim *ext_claim; /* referenced; NULL: none */
    int ext_real;                       /* ext_claim exists in the cluster (a prior cycle's, or
                                         * PreBind created it) */
    char *ext_uid;                      /* the uid it was put in flight under (initial) */
    dra_ext_variant *variants;          /* under mu */
} dra_state;

static char state_key;

static void state_free(void *p)
{
    dra_state *s = p;
    if (!s)
        return;
    for (size_t i = 0; i < s->nclaims; i++)
        ks_resource_claim_release(s->claims[i]);
    for (size_t i = 0; i < s->ncap; i++)
        ks_dra_allocation_free(s->nodes[i].alloc);
    for (dra_ext_variant *v = s->variants, *nx; v; v = nx) {
        nx = v->next;
        dra_ext_variant_free(v);
    }
    ks_resource_claim_release(s->ext_claim);
    ks_free(s->ext);
    ks_free(s->ext_uid);
    pthread_mutex_destroy(&s->mu);
    ks_free(s->claims);
    ks_free(s->to_allocate);
    ks_free(s->unavailable);
    ks_free(s->nodes);
    ks_free(s);
}
static const ks_state_ops state_ops = {NULL, state_free};

static dra_state *state_of(ks_cycle *c) { return ks_cycle_read(c, &state_key); }

/* upstream getStateData: the cycle state PreFilter wrote, or NULL with the Error status "not
 * found" (as fwk.ErrNotFound reads) when PreFilter did not run for this pod. */
static dra_state *state_or_error(ks_cycle *c, ks_status *st)
{
    dra_state *s = state_of(c);
    if (!s)
        ks_status_reason(st, "not found");
    return s;
}

/* ---- args ------------------------------------------------------------------------------------ */

/* A Go duration ("10s", "1m30s", "1.5h", "100ms"); -1 when it does not parse. The args were
 * checked while the configuration loaded (core/config: DynamicResourcesArgs). */
static int64_t parse_duration(const char *s)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1},  {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6},
                 {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    double total = 0;
    int neg = 0;
    if (!s || !*s)
        return -1;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0)
        return 0;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s)
            return -1;
        s = end;
        size_t best = 0, bestlen = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t n = strlen(units[i].unit);
            if (strncmp(s, units[i].unit, n) == 0 && n > bestlen) {
                best = i;
                bestlen = n;
            }
        }
        if (!bestlen)
            return -1;
        total += v * units[best].ns;
        s += bestlen;
    }
    return (int64_t)(neg ? -total : total);
}

static void *dra_create(const ks_args *args, ks_error *err)
{
    (void)err;
    dra_plugin *pl = ks_alloc(sizeof(*pl));
    if (!pl)
        return NULL;
    /* SetDefaults_DynamicResourcesArgs gives 10s (DRASchedulerFilterTimeout is on). */
    const char *ft = ks_h_args_str(args, "filterTimeout");
    int64_t ns = parse_duration(ft ? ft : "10s");
    pl->filter_timeout_ns = ns > 0 ? ns : 0;
    /* DynamicResourcesBindingTimeoutDefault: 600s (the config's defaulting writes "10m0s"). */
    const char *bt = ks_h_args_str(args, "bindingTimeout");
    ns = parse_duration(bt ? bt : "10m0s");
    pl->binding_timeout_ns = ns > 0 ? ns : 600 * 1000000000LL;
    pl->metadata_name = ks_intern("metadata.name");
    return pl;
}

static void dra_destroy(void *self) { ks_free(self); }

/* ---- the pod's claims (foreachPodResourceClaim) ---------------------------------------------- */

static const char *symstr(ks_sym s)
{
    const char *v = ks_sym_str(s);
    return v ? v : "";
}

/* Calls back for each claim of the pod that exists (cb NULL: only checks); 0, or 1 with the
 * reason in msg (upstream's error text). Each claim given to cb has a reference for cb to keep
 * or release. */
typedef void (*claim_cb)(void *ctx, const ks_resource_claim *claim);

static int foreach_claim(ks_cycle *cycle, const ks_pod *pod, claim_cb cb, void *ctx, char *msg,
                         size_t len)
{
    const ks_pod_resource_claim *pcs;
    size_t n = ks_pod_resource_claims(pod, &pcs);
    const char *ns = symstr(ks_pod_namespace(pod)), *pname = symstr(ks_pod_name(pod));
    for (size_t i = 0; i < n; i++) {
        const ks_pod_resource_claim *pc = &pcs[i];
        const char *name;
        int must_check_owner = 0;
        /* resourceclaim.Name */
        if (pc->resource_claim_name) {
            name = pc->resource_claim_name;
        } else if (pc->resource_claim_template_name) {
            if (!pc->has_status) {
                snprintf(msg, len, "pod \"%s/%s\": ResourceClaim not created yet", ns, pname);
                return 1;
            }
            name = pc->status_claim_name;
            must_check_owner = 1;
        } else {
            snprintf(msg, len,
                     "pod \"%s/%s\", spec.resourceClaim \"%s\": none of the supported fields "
                     "are set",
                     ns, pname, pc->name);
            return 1;
        }
        /* A nil name: the claim was intentionally not created; skip it. */
        if (!name)
            continue;
        const ks_resource_claim *claim = ks_resource_claim_get(cycle, ks_pod_namespace(pod), name);
        if (!claim) {
            /* the claim assume cache's NotFoundError */
            snprintf(msg, len, "could not find ResourceClaim \"%s/%s\"", ns, name);
            return 1;
        }
        const ks_resource_claim_view *v = ks_resource_claim_view_of(claim);
        if (v->deleting) {
            snprintf(msg, len, "resourceclaim \"%s\" is being deleted", name);
            ks_resource_claim_release(claim);
            return 1;
        }
        /* resourceclaim.IsForPod: the pod must be the claim's controller. */
        if (must_check_owner &&
            (!v->controller_uid || strcmp(v->controller_uid, ks_pod_uid(pod)) != 0)) {
            snprintf(msg, len,
                     "ResourceClaim %s/%s was not created for Pod %s/%s (Pod is not owner)", ns,
                     name, ns, pname);
            ks_resource_claim_release(claim);
            return 1;
        }
        if (cb)
            cb(ctx, claim);
        else
            ks_resource_claim_release(claim);
    }
    return 0;
}

static int reserved_for_pod(const ks_resource_claim_view *v, const ks_pod *pod)
{
    for (uint32_t i = 0; i < v->nreserved_for; i++)
        if (strcmp(v->reserved_for_uids[i], ks_pod_uid(pod)) == 0)
            return 1;
    return 0;
}

/* ---- PreEnqueue --------------------------------------------------------------------------------
 */

static ks_code dra_pre_enqueue(void *self, const ks_pod *pod, ks_status *st)
{
    (void)self;
    char msg[1024];
    if (foreach_claim(NULL, pod, NULL, NULL, msg, sizeof(msg))) {
        ks_status_reason(st, msg);
        return UU;
    }
    return KS_SUCCESS;
}

/* ---- extended resources backed by DRA (extendeddynamicresources.go) ---------------------------
 */

#define CLASS_PREFIX "deviceclass.resource.kubernetes.io/"
#define MAX_EXT 64 /* extended resources per pod a node variant tells apart (bits of a mask) */

/* schedutil.IsDRAExtendedResourceName */
static int dra_extended_name(const char *n)
{
    return n && (ks_h_is_extended_resource(n) ||
                 strncmp(n, CLASS_PREFIX, sizeof(CLASS_PREFIX) - 1) == 0);
}

static int cmp_ext(const void *a, const void *b)
{
    return strcmp(symstr(((const dra_ext_res *)a)->name), symstr(((const dra_ext_res *)b)->name));
}

/* preFilterExtendedResources: the pod's extended resources, and when one of them maps to a
 * DeviceClass, the special claim (a prior cycle's, or a new in-memory one). */
static ks_code pre_filter_ext(ks_cycle *cycle, const ks_pod *pod, dra_state *s, ks_status *st)
{
    const ks_resources *req = ks_pod_requests(pod);
    int mapped = 0;
    s->ext = ks_alloc((req->nscalar ? req->nscalar : 1) * sizeof(*s->ext));
    if (!s->ext) {
        ks_status_reason(st, "out of memory");
        return KS_ERROR;
    }
    for (uint32_t i = 0; i < req->nscalar && s->next < MAX_EXT; i++) {
        const ks_scalar *sc = &req->scalar[i];
        if (sc->value == 0 || !dra_extended_name(ks_sym_str(sc->name)))
            continue;
        ks_sym cls = ks_dra_extended_resource_class(cycle, sc->name);
        s->ext[s->next++] = (dra_ext_res){sc->name, cls, sc->value};
        mapped |= cls != KS_SYM_ABSENT;
    }
    if (!mapped) { /* hasDeviceClassMappedExtendedResource: none, nothing to do */
        s->next = 0;
        return KS_SUCCESS;
    }
    qsort(s->ext, s->next, sizeof(*s->ext), cmp_ext);
    s->ext_claim = ks_dra_extended_claim_find(cycle, pod);
    s->ext_real = s->ext_claim != NULL;
    if (!s->ext_claim)
        s->ext_claim = ks_dra_extended_claim_new(cycle, pod, NULL, 0);
    const char *uid = s->ext_claim ? ks_resource_claim_view_of(s->ext_claim)->uid : NULL;
    if (uid && (s->ext_uid = ks_alloc(strlen(uid) + 1)))
        memcpy(s->ext_uid, uid, strlen(uid) + 1);
    if (!s->ext_claim || !s->ext_uid) {
        ks_status_reason(st, "out of memory");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* The node variant of the special claim for mask, made on first use (under mu). NULL when out
 * of memory. */
static const dra_ext_variant *variant_for(dra_state *s, ks_cycle *cycle, const ks_pod *pod,
                                          uint64_t mask)
{
    pthread_mutex_lock(&s->mu);
    dra_ext_variant *v = s->variants;
    while (v && v->mask != mask)
        v = v->next;
    if (!v && (v = ks_alloc(sizeof(*v)))) {
        memset(v, 0, sizeof(*v));
        v->mask = mask;
        ks_dra_extended_request *reqs = NULL;
        size_t n = 0;
        if (dra_create_requests(pod, s->ext, s->next, mask, v, &reqs, &n) == KS_SUCCESS)
            v->claim = ks_dra_extended_claim_new(cycle, pod, reqs, n);
        ks_free(reqs);
        v->next = s->variants; /* freed with the state, claim or not */
        s->variants = v;
        if (!v->claim)
            v = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return v;
}

/* A node allocatable scalar: its value, *present whether the node lists it. */
static int64_t allocatable_scalar(const ks_resources *r, ks_sym name, int *present)
{
    for (uint32_t i = 0; i < r->nscalar; i++)
        if (r->scalar[i].name == name) {
            *present = 1;
            return r->scalar[i].value;
        }
    *present = 0;
    return 0;
}

/* filterExtendedResources: the node's variant of the special claim in *out (NULL: nothing to
 * allocate through DRA on this node), or a rejection. */
static ks_code filter_ext(dra_state *s, ks_cycle *cycle, const ks_pod *pod, const ks_node *node,
                          const dra_ext_variant **out, ks_status *st)
{
    *out = NULL;
    const ks_resource_claim_view *v = ks_resource_claim_view_of(s->ext_claim);
    /* The claim is from a prior scheduling cycle: PostFilter deletes it, and the pod retries. */
    if (s->ext_real && v->nrequests > 0) {
        ks_status_reason(st, "cannot schedule extended resource claim");
        return UU;
    }
    const ks_resources *alloc = ks_node_allocatable(node);
    uint64_t mask = 0;
    for (size_t i = 0; i < s->next; i++) {
        int present;
        int64_t a = allocatable_scalar(alloc, s->ext[i].name, &present);
        if (s->ext[i].cls != KS_SYM_ABSENT && a == 0) {
            mask |= (uint64_t)1 << i; /* the node provides it through DRA */
        } else if (!present) {
            ks_status_reason(st, "cannot fit resource");
            return UU;
        }
    }
    if (!mask || v->allocated)
        return KS_SUCCESS;
    if (!(*out = variant_for(s, cycle, pod, mask))) {
        ks_status_reason(st, "out of memory");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* ---- PreFilter ---------------------------------------------------------------------------------
 */

typedef struct collect {
    dra_state *s;
    size_t cap;
} collect;

static void collect_claim(void *ctx, const ks_resource_claim *claim)
{
    collect *c = ctx;
    if (c->s->nclaims < c->cap)
        c->s->claims[c->s->nclaims++] = claim;
    else
        ks_resource_claim_release(claim);
}

/* validateDeviceClass */
static ks_code validate_class(ks_cycle *cycle, const char *cls, const char *request, ks_status *st)
{
    if (!cls || !*cls) {
        ks_status_reasonf(st, "request %s: unsupported request type", request);
        return KS_ERROR;
    }
    if (!ks_device_class_exists(cycle, cls)) {
        ks_status_reasonf(st, "request %s: device class %s does not exist", request, cls);
        return UU;
    }
    return KS_SUCCESS;
}

static ks_code dra_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                              ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)result;
    const ks_pod_resource_claim *pcs;
    const ks_pod_container *cs;
    size_t npc = ks_pod_resource_claims(pod, &pcs);
    /* Only a pod that requests an extended resource has its containers listed. */
    size_t ncont = KS_HOST_HAS(pod_containers) ? ks_pod_containers(pod, &cs) : 0;
    /* Most pods have no claims: one shared, empty, never-written state (nothing to clean up). */
    static dra_state no_claims;
    if (npc == 0 && ncont == 0) {
        if (ks_cycle_write(cycle, &state_key, &no_claims, NULL) != 0) {
            ks_status_reason(st, "out of memory");
            return KS_ERROR;
        }
        return KS_SKIP;
    }
    dra_state *s = ks_alloc(sizeof(*s));
    if (!s)
        return KS_ERROR;
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    s->claims = ks_alloc((npc ? npc : 1) * sizeof(*s->claims));
    s->to_allocate = ks_alloc((npc ? npc : 1) * sizeof(*s->to_allocate));
    s->unavailable = ks_alloc(npc ? npc : 1);
    if (!s->claims || !s->to_allocate || !s->unavailable ||
        ks_cycle_write(cycle, &state_key, s, &state_ops) != 0) {
        state_free(s);
        ks_status_reason(st, "out of memory");
        return KS_ERROR;
    }
    memset(s->unavailable, 0, npc ? npc : 1);
    char msg[1024];
    collect c = {s, npc};
    if (foreach_claim(cycle, pod, collect_claim, &c, msg, sizeof(msg))) {
        ks_status_reason(st, msg);
        return UU;
    }
    if (ncont > 0) {
        ks_code code = pre_filter_ext(cycle, pod, s, st);
        if (code != KS_SUCCESS)
            return code;
    }
    if (s->nclaims == 0 && !s->ext_claim)
        return KS_SKIP;
    for (size_t i = 0; i < s->nclaims; i++) {
        const ks_resource_claim_view *v = ks_resource_claim_view_of(s->claims[i]);
        const char *cns = symstr(v->ns), *cname = symstr(v->name);
        /* resourceclaim.CanBeReserved is always true at v0.37: no "resourceclaim in use". */
        if (v->allocated)
            continue;
        s->to_allocate[s->nallocate++] = s->claims[i];
        if (ks_dra_claim_pending(cycle, v->uid)) {
            ks_status_reasonf(st, "resource claim %s/%s is in the process of being allocated", cns,
                              cname);
            return UU;
        }
        for (uint32_t r = 0; r < v->nrequests; r++) {
            const ks_dra_request_view *rq = &v->requests[r];
            ks_code code;
            if (rq->device_class_name) {
                if ((code = validate_class(cycle, rq->device_class_name, rq->name, st)) !=
                    KS_SUCCESS)
                    return code;
            } else if (rq->nsubrequests > 0) {
                for (uint32_t k = 0; k < rq->nsubrequests; k++) {
                    char q[512];
                    snprintf(q, sizeof(q), "%s/%s", rq->name, rq->subrequest_names[k]);
                    if ((code = validate_class(cycle, rq->subrequest_classes[k], q, st)) !=
                        KS_SUCCESS)
                        return code;
                }
            } else {
                ks_status_reasonf(st, "resource claim %s/%s, request %s: unknown request type", cns,
                                  cname, rq->name);
                return UU;
            }
        }
    }
    /* The special claim is not validated here: it has no requests yet (or, from a prior cycle,
     * Filter rejects it). */
    int ext_to_allocate = s->ext_claim && !ks_resource_claim_view_of(s->ext_claim)->allocated;
    if (ext_to_allocate && ks_dra_claim_pending(cycle, s->ext_uid)) {
        const ks_resource_claim_view *v = ks_resource_claim_view_of(s->ext_claim);
        ks_status_reasonf(st, "resource claim %s/%s is in the process of being allocated",
                          symstr(v->ns), symstr(v->name));
        return UU;
    }
    if (s->nallocate > 0 || ext_to_allocate) {
        char err[512];
        if (!(s->allocator = ks_dra_allocator_new(cycle, err, sizeof(err)))) {
            ks_status_reason(st, err);
            return KS_ERROR;
        }
        const ks_snapshot *snap = ks_cycle_snapshot(cycle);
        s->ncap = 2 * (snap ? ks_snapshot_node_count(snap) : 0) + 8;
        s->nodes = ks_alloc(s->ncap * sizeof(*s->nodes));
        if (!s->nodes) {
            ks_status_reason(st, "out of memory");
            return KS_ERROR;
        }
        for (size_t i = 0; i < s->ncap; i++)
            s->nodes[i] = (node_alloc){KS_SYM_ABSENT, NULL, NULL};
    }
    return KS_SUCCESS;
}

/* nodeAllocations[node]: the slot for node (its own or the empty one to fill), under mu. */
static node_alloc *slot_locked(dra_state *s, ks_sym node)
{
    size_t i = (size_t)(node * 2654435761u) % s->ncap;
    for (size_t k = 0; k < s->ncap; k++, i = (i + 1) % s->ncap)
        if (s->nodes[i].node == node || s->nodes[i].node == KS_SYM_ABSENT)
            return &s->nodes[i];
    return NULL;
}

static ks_dra_allocation *node_allocation(dra_state *s, ks_sym node, const dra_ext_variant **ext)
{
    pthread_mutex_lock(&s->mu);
    node_alloc *a = s->ncap ? slot_locked(s, node) : NULL;
    ks_dra_allocation *r = a && a->node == node ? a->alloc : NULL;
    if (ext)
        *ext = r ? a->ext : NULL;
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* ---- Filter ------------------------------------------------------------------------------------
 */

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- binding conditions (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus, on in
 * v1.37): a device whose slice lists bindingConditions is bound only once its driver reports
 * them true in the claim's status.devices ---------------------------------------------------- */

typedef enum { BC_READY, BC_PENDING, BC_FAILED } bc_state;

static uint32_t binding_devices(const ks_resource_claim_view *v, const ks_dra_binding_device **out)
{
    if (v->size <= offsetof(ks_resource_claim_view, nbinding_devices)) { /* a host before 1.11 */
        *out = NULL;
        return 0;
    }
    *out = v->binding_devices;
    return v->nbinding_devices;
}

/* apimeta.FindStatusCondition */
static const ks_dra_device_condition *find_condition(const ks_dra_binding_device *b,
                                                     const char *type)
{
    for (uint32_t i = 0; i < b->nstatus_conditions; i++)
        if (strcmp(b->status_conditions[i].type, type) == 0)
            return &b->status_conditions[i];
    return NULL;
}

static int condition_true(const ks_dra_binding_device *b, const char *type)
{
    const ks_dra_device_condition *c = find_condition(b, type);
    return c && strcmp(c->status, "True") == 0;
}

/* Go's %q of s (the characters a condition message has: quotes, backslashes, controls). */
static void quote(char *out, size_t n, const char *s)
{
    size_t o = 0;
    if (n < 3)
        return;
    out[o++] = '"';
    for (; *s && o + 5 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch == '\n' || ch == '\t' || ch == '\r') {
            out[o++] = '\\';
            out[o++] = ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r';
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}

/* isClaimReadyForBinding: ready when every binding condition of every device is true and no
 * failure condition is; BC_FAILED with upstream's error in err when one is. */
static bc_state claim_binding_state(const ks_resource_claim_view *v, char *err, size_t errlen)
{
    const ks_dra_binding_device *bd;
    uint32_t n = binding_devices(v, &bd);
    if (!v->allocated)
        return BC_PENDING;
    for (uint32_t i = 0; i < n; i++) {
        const ks_dra_binding_device *b = &bd[i];
        if (!b->has_status)
            return BC_PENDING;
        for (uint32_t k = 0; k < b->nfailure_conditions; k++) {
            const ks_dra_device_condition *c = find_condition(b, b->failure_conditions[k]);
            if (c && strcmp(c->status, "True") == 0) {
                char q[600];
                quote(q, sizeof(q), c->message);
                snprintf(err, errlen, "device binding failed: claim=%s, reason=%s, message=%s",
                         symstr(v->name), c->reason, q);
                return BC_FAILED;
            }
        }
        for (uint32_t k = 0; k < b->nconditions; k++)
            if (!condition_true(b, b->conditions[k]))
                return BC_PENDING;
    }
    return BC_READY;
}

/* isClaimTimeout: allocated with binding conditions longer than bindingTimeout ago. */
static int claim_binding_timed_out(const ks_resource_claim_view *v, int64_t timeout_ns)
{
    const ks_dra_binding_device *bd;
    if (!v->allocated || binding_devices(v, &bd) == 0 || v->allocation_unix == 0)
        return 0;
    return (int64_t)time(NULL) > v->allocation_unix + timeout_ns / 1000000000LL;
}

static ks_code dra_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                          ks_status *st)
{
    dra_plugin *pl = self;
    dra_state *s = state_or_error(cycle, st);
    if (!s)
        return KS_ERROR;
    if (s->nclaims == 0 && !s->ext_claim)
        return KS_SUCCESS;
    const ks_node *node = ks_node_info_node(ni);
    const dra_ext_variant *ext = NULL;
    if (s->ext_claim) {
        ks_code code = filter_ext(s, cycle, pod, node, &ext, st);
        if (code != KS_SUCCESS)
            return code;
        /* Extended resources the node's device plugins provide: nothing left to do here. */
        if (!ext && s->nclaims == 0)
            return KS_SUCCESS;
    }
    size_t nunavailable = 0;
    size_t unavailable[64];
    for (size_t i = 0; i < s->nclaims; i++) {
        const ks_resource_claim_view *v = ks_resource_claim_view_of(s->claims[i]);
        /* The allocation's node selector (set only for an allocated claim). */
        if (v->allocated && v->nalloc_terms > 0 &&
            !ks_h_terms_match(v->alloc_terms, v->nalloc_terms, node, pl->metadata_name)) {
            if (nunavailable < sizeof(unavailable) / sizeof(unavailable[0]))
                unavailable[nunavailable++] = i;
            continue;
        }
        /* An allocated claim whose binding failed, or has waited past bindingTimeout: PostFilter
         * may deallocate it, so that other devices are tried. */
        char err[700];
        bc_state bs = v->allocated ? claim_binding_state(v, err, sizeof(err)) : BC_READY;
        if ((bs == BC_FAILED ||
             (bs == BC_PENDING && claim_binding_timed_out(v, pl->binding_timeout_ns))) &&
            nunavailable < sizeof(unavailable) / sizeof(unavailable[0]))
            unavailable[nunavailable++] = i;
    }
    ks_dra_allocation *alloc = NULL;
    /* The claims to allocate, the node's variant of the special claim last. (A pod whose
     * extended resources this node's device plugins provide allocates no special claim here;
     * upstream passes the claim without requests on and finds no claim for it in Reserve.) */
    const ks_resource_claim *input[32];
    const ks_resource_claim **in = s->to_allocate;
    size_t nin = s->nallocate;
    if (ext) {
        in = nin + 1 <= sizeof(input) / sizeof(input[0])
                 ? input
                 : ks_cycle_alloc(cycle, (nin + 1) * sizeof(*in));
        if (!in) {
            ks_status_reason(st, "out of memory");
            return KS_ERROR;
        }
        if (nin)
            memcpy(in, s->to_allocate, nin * sizeof(*in));
        in[nin++] = ext->claim;
    }
    if (s->allocator && nin > 0) {
        char err[1024];
        int64_t deadline = pl->filter_timeout_ns ? monotonic_ns() + pl->filter_timeout_ns : 0;
        int out =
            ks_dra_allocate_claims(s->allocator, node, in, nin, deadline, &alloc, err, sizeof(err));
        switch (out) {
        case KS_DRA_OUT_ALLOCATED:
            break;
        case KS_DRA_OUT_TIMEOUT:
            ks_status_reason(st, "timed out trying to allocate devices");
            return UU;
        case KS_DRA_OUT_NODE_ERROR:
            /* Not fatal: the error shows only if allocation fails on every node. */
            ks_status_reason(st, err);
            return UU;
        case KS_DRA_OUT_ERROR:
            /* Something is wrong with a claim or class: abort this attempt. */
            ks_status_reason(st, err);
            return KS_ERROR;
        case KS_DRA_OUT_UNSUITABLE:
            ks_status_reason(st, "cannot allocate all claims");
            return UU;
        default:
            ks_status_reason(st, "out of memory");
            return KS_ERROR;
        }
    }
    pthread_mutex_lock(&s->mu);
    if (nunavailable > 0) {
        for (size_t k = 0; k < nunavailable; k++)
            s->unavailable[unavailable[k]] = 1;
        pthread_mutex_unlock(&s->mu);
        ks_dra_allocation_free(alloc);
        ks_status_reason(st, "resourceclaim not available on the node");
        return UU;
    }
    if (alloc) {
        node_alloc *slot = slot_locked(s, ks_node_name(node));
        if (slot) {
            ks_dra_allocation_free(slot->alloc);
            slot->node = ks_node_name(node);
            slot->alloc = alloc;
            slot->ext = ext;
            alloc = NULL;
        }
    }
    pthread_mutex_unlock(&s->mu);
    ks_dra_allocation_free(alloc);
    return KS_SUCCESS;
}

/* ---- PostFilter --------------------------------------------------------------------------------
 */

static ks_code dra_post_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                               const ks_filter_outcome *outcome, ks_post_filter_result *result,
                               ks_status *st)
{
    (void)self;
    (void)outcome;
    (void)result;
    dra_state *s = state_or_error(cycle, st);
    if (!s)
        return KS_ERROR;
    /* upstream's plugin says "no new claims to deallocate" here, but v1.37.2's FailedScheduling
     * message of a pod without claims carries no such fragment (tests/e2e/test-live-basic.sh
     * compares with kube-scheduler's): Unschedulable without a reason, which adds nothing to the
     * joined PostFilter message. */
    if (s->nclaims == 0 && !s->ext_claim)
        return KS_UNSCHEDULABLE;
    /* upstream iterates a map (random order) over the unavailable claims and takes the first
     * one reserved for no one but this pod. */
    for (size_t i = 0; i < s->nclaims; i++) {
        if (!s->unavailable[i])
            continue;
        const ks_resource_claim_view *v = ks_resource_claim_view_of(s->claims[i]);
        if (v->nreserved_for == 0 ||
            (v->nreserved_for == 1 && strcmp(v->reserved_for_uids[0], ks_pod_uid(pod)) == 0)) {
            if (ks_dra_claim_deallocate(cycle, s->claims[i], st) != KS_SUCCESS)
                return KS_ERROR;
            ks_status_reason(st, "deallocation of ResourceClaim completed");
            return KS_UNSCHEDULABLE;
        }
    }
    /* The special claim of a prior cycle (reserved or allocated then) goes, and the pod starts
     * anew once its deletion is seen. */
    if (s->ext_claim && s->ext_real) {
        if (ks_dra_claim_delete(cycle, s->ext_claim, st) != KS_SUCCESS)
            return KS_ERROR;
        ks_status_reason(st, "deletion of ResourceClaim completed");
        return KS_UNSCHEDULABLE;
    }
    return KS_UNSCHEDULABLE; /* without a reason, as upstream's */
}

/* ---- Score -------------------------------------------------------------------------------------
 */

/* computeScore: for each claim (in claims' order, paired with the node's allocation results by
 * position, as upstream), FirstAvailableDeviceRequestMaxSize - i for the i-th subrequest that got
 * devices. */
static ks_code dra_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                         int64_t *score, ks_status *st)
{
    (void)self;
    (void)pod;
    *score = 0;
    dra_state *s = state_or_error(cycle, st);
    if (!s)
        return KS_ERROR;
    if (s->nclaims == 0 || !s->allocator)
        return KS_SUCCESS; /* (the special claim has no prioritized lists) */
    ks_dra_allocation *a = node_allocation(s, ks_node_name(ks_node_info_node(ni)), NULL);
    if (!a)
        return KS_SUCCESS;
    int64_t total = 0;
    for (size_t i = 0; i < s->nclaims; i++) {
        if (i >= s->nallocate) {
            ks_status_reasonf(st, "number of allocations %zu is smaller than number of claims",
                              s->nallocate);
            return KS_ERROR;
        }
        const ks_dra_device_result *devs;
        size_t nd = ks_dra_allocation_devices(a, i, &devs);
        const ks_resource_claim_view *v = ks_resource_claim_view_of(s->claims[i]);
        for (uint32_t r = 0; r < v->nrequests; r++) {
            const ks_dra_request_view *rq = &v->requests[r];
            if (rq->device_class_name)
                continue;
            for (uint32_t k = 0; k < rq->nsubrequests; k++) {
                char ref[512];
                snprintf(ref, sizeof(ref), "%s/%s", rq->name, rq->subrequest_names[k]);
                for (size_t d = 0; d < nd; d++)
                    if (strcmp(devs[d].request, ref) == 0) {
                        total += (int64_t)(FIRST_AVAILABLE_MAX - (int)k);
                        break;
                    }
            }
        }
    }
    *score = total;
    return KS_SUCCESS;
}

/* helper.DefaultNormalizeScore(MaxNodeScore, false, scores) */
static ks_code dra_normalize(void *self, ks_cycle *cycle, const ks_pod *pod, ks_node_score *scores,
                             size_t n, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)pod;
    (void)st;
    ks_default_normalize_score(KS_MAX_NODE_SCORE, 0, scores, n);
    return KS_SUCCESS;
}

/* ---- Reserve / Unreserve -----------------------------------------------------------------------
 */

static ks_code dra_reserve(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                           ks_status *st)
{
    (void)self;
    (void)pod;
    dra_state *s = state_or_error(cycle, st);
    if (!s)
        return KS_ERROR;
    if (s->nclaims == 0 && !s->ext_claim)
        return KS_SUCCESS;
    const dra_ext_variant *ext = NULL;
    ks_dra_allocation *a = node_allocation(s, node, &ext);
    if (!a) {
        /* Only the special claim, which the node's device plugins made unnecessary. */
        if (s->nallocate == 0)
            return KS_SUCCESS;
        ks_status_reason(st, "claim allocation not found for node");
        return KS_ERROR;
    }
    for (size_t i = 0; i < s->nallocate; i++) {
        if (ks_dra_signal_pending(cycle, s->to_allocate[i], a, i) != 0) {
            ks_status_reasonf(st, "internal error, couldn't signal allocation for claim %s",
                              symstr(ks_resource_claim_view_of(s->to_allocate[i])->name));
            return KS_ERROR;
        }
    }
    if (ext && ks_dra_signal_pending(cycle, ext->claim, a, s->nallocate) != 0) {
        ks_status_reasonf(st, "internal error, couldn't signal allocation for claim %s",
                          symstr(ks_resource_claim_view_of(ext->claim)->name));
        return KS_ERROR;
    }
    s->reserved = a;
    s->reserved_ext = ext;
    return KS_SUCCESS;
}

static void dra_unreserve(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node)
{
    (void)self;
    (void)node;
    dra_state *s = state_of(cycle);
    if (!s || (s->nclaims == 0 && !s->ext_claim))
        return; /* (the shared state of pods without claims is never written) */
    /* In-flight allocations are dropped (the devices are free again for the next allocator), and
     * the pod leaves the reservedFor of the claims PreBind reserved before it failed. */
    for (size_t i = 0; i < s->nclaims; i++) {
        ks_dra_remove_pending(cycle, ks_resource_claim_view_of(s->claims[i])->uid);
        ks_dra_claim_unreserve(cycle, pod, s->claims[i]);
    }
    s->reserved = NULL;
    /* unreserveExtendedResourceClaim: out of flight, and deleted once it exists (PreBind
     * created it). */
    if (s->ext_claim) {
        ks_dra_remove_pending(cycle, s->ext_uid);
        if (s->ext_real) {
            ks_status *st = ks_status_new(cycle); /* borrowed(cycle) */
            if (st && ks_dra_claim_delete(cycle, s->ext_claim, st) != KS_SUCCESS)
                ks_log(0, "DynamicResources: delete resourceclaim %s/%s: %s",
                       symstr(ks_resource_claim_view_of(s->ext_claim)->ns),
                       symstr(ks_resource_claim_view_of(s->ext_claim)->name),
                       ks_status_reason_count(st) ? ks_status_reason_at(st, 0) : "");
        }
    }
    s->reserved_ext = NULL;
}

/* ---- PreBind -----------------------------------------------------------------------------------
 */

static ks_code dra_pre_bind_pre_flight(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                       ks_prebind_preflight *result, ks_status *st)
{
    (void)self;
    (void)pod;
    (void)node;
    (void)result;
    dra_state *s = state_or_error(cycle, st);
    if (!s)
        return KS_ERROR;
    return s->nclaims == 0 && !s->ext_claim ? KS_SKIP : KS_SUCCESS;
}

/* isPodReadyForBinding over the claims as the store has them now: 1 ready, 0 pending, -1 with
 * the error (a failure condition, or a claim past bindingTimeout) in err. */
/* The pod's claims as PreBind saw them (claims.all()): the user's, then the claim for extended
 * resources once it exists in the cluster. */
static size_t bound_claims(const dra_state *s)
{
    return s->nclaims + (s->ext_claim && s->ext_real ? 1 : 0);
}

static const ks_resource_claim *bound_claim(const dra_state *s, size_t i)
{
    return i < s->nclaims ? s->claims[i] : s->ext_claim;
}

static int pod_ready_for_binding(const dra_plugin *pl, ks_cycle *cycle, const dra_state *s,
                                 char *err, size_t errlen)
{
    for (size_t i = 0; i < bound_claims(s); i++) {
        const ks_resource_claim_view *v0 = ks_resource_claim_view_of(bound_claim(s, i));
        const ks_resource_claim *now = ks_resource_claim_get(cycle, v0->ns, symstr(v0->name));
        if (!now) {
            snprintf(err, errlen, "resourceclaim.resource.k8s.io \"%s\" not found",
                     symstr(v0->name));
            return -1;
        }
        const ks_resource_claim_view *v = ks_resource_claim_view_of(now);
        bc_state bs = claim_binding_state(v, err, errlen);
        int timed_out = bs == BC_PENDING && claim_binding_timed_out(v, pl->binding_timeout_ns);
        if (timed_out)
            snprintf(err, errlen, "device binding timeout: claim=%s", symstr(v->name));
        ks_resource_claim_release(now);
        if (bs == BC_FAILED || timed_out)
            return -1;
        if (bs == BC_PENDING)
            return 0;
    }
    return 1;
}

/* Whether a claim of the pod, as PreBind left it, has a device with binding conditions
 * (hasBindingConditions). */
static int pod_has_binding_conditions(ks_cycle *cycle, const dra_state *s)
{
    int has = 0;
    for (size_t i = 0; i < bound_claims(s) && !has; i++) {
        const ks_resource_claim_view *v0 = ks_resource_claim_view_of(bound_claim(s, i));
        const ks_resource_claim *now = ks_resource_claim_get(cycle, v0->ns, symstr(v0->name));
        const ks_dra_binding_device *bd;
        has = now && binding_devices(ks_resource_claim_view_of(now), &bd) > 0;
        ks_resource_claim_release(now);
    }
    return has;
}

/* PreBind's wait for binding conditions: wait.PollUntilContextTimeout(5s, bindingTimeout,
 * immediate), after a BindingConditionsPending event. In `simulate` nothing changes the
 * in-memory cluster while it waits: one that is not ready at once ends as the wait would. */
static ks_code wait_binding_conditions(const dra_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                                       ks_sym node, const dra_state *s, ks_status *st)
{
    char note[512], err[800];
    snprintf(note, sizeof(note), "waiting for binding conditions for device on node %s",
             symstr(node));
    if (KS_HOST_HAS(pod_event))
        ks_pod_event(cycle, pod, "Normal", "BindingConditionsPending", note);
    int simulated = (ks_source_flags(cycle) & KS_SOURCE_SIMULATED) != 0;
    int64_t deadline = monotonic_ns() + pl->binding_timeout_ns;
    for (;;) {
        int r = pod_ready_for_binding(pl, cycle, s, err, sizeof(err));
        if (r > 0)
            return KS_SUCCESS;
        if (r < 0) {
            ks_status_reason(st, err);
            return KS_ERROR;
        }
        int64_t left = deadline - monotonic_ns();
        if (simulated || left <= 0) {
            ks_status_reason(st, "device binding timeout: context deadline exceeded");
            return KS_ERROR;
        }
        int slept = ks_binding_sleep(cycle, left < 5000000000LL ? left : 5000000000LL);
        if (slept == KS_ENOTFOUND) {
            ks_status_reasonf(st, "pod \"%s\" not found", symstr(ks_pod_name(pod)));
            return KS_ERROR;
        }
        if (slept != 0) {
            ks_status_reason(st, "context canceled");
            return KS_ERROR;
        }
    }
}

static ks_code extended_pre_bind(ks_cycle *cycle, const ks_pod *pod, dra_state *s,
                                 const dra_ext_variant *ext, ks_status *st);

static ks_code dra_pre_bind(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                            ks_status *st)
{
    dra_plugin *pl = self;
    dra_state *s = state_or_error(cycle, st);
    if (!s)
        return KS_ERROR;
    size_t ai = 0;
    for (size_t i = 0; i < s->nclaims; i++) {
        const ks_resource_claim *c = s->claims[i];
        const ks_resource_claim_view *v = ks_resource_claim_view_of(c);
        int to_allocate = ai < s->nallocate && s->to_allocate[ai] == c;
        size_t idx = ai;
        if (to_allocate)
            ai++;
        if (reserved_for_pod(v, pod))
            continue;
        /* bindClaim: the allocation from Reserve (none for an allocated claim), reservedFor. */
        ks_code code = ks_dra_claim_bind(cycle, pod, c, to_allocate ? s->reserved : NULL, idx, st);
        /* The allocation is written (or failed): it is no longer in flight either way. */
        if (to_allocate)
            ks_dra_remove_pending(cycle, v->uid);
        if (code != KS_SUCCESS)
            return KS_ERROR;
    }
    /* The special claim, when this node allocates it (bindClaim with isExtendedResourceClaim):
     * created with a generated name, then bound as a user claim, then named in the pod's
     * status. */
    const dra_ext_variant *ext = s->reserved_ext;
    if (s->ext_claim && ext && extended_pre_bind(cycle, pod, s, ext, st) != KS_SUCCESS)
        return KS_ERROR;
    if (bound_claims(s) == 0 || !pod_has_binding_conditions(cycle, s))
        return KS_SUCCESS; /* nothing to wait for: the pod is bound now */
    return wait_binding_conditions(pl, cycle, pod, node, s, st);
}

/* bindClaim for the claim of the pod's extended resources (isExtendedResourceClaim): created
 * with a generated name, then bound as a user claim, then named in the pod's status. */
static ks_code extended_pre_bind(ks_cycle *cycle, const ks_pod *pod, dra_state *s,
                                 const dra_ext_variant *ext, ks_status *st)
{
    if (!s->ext_real) {
        const ks_resource_claim *created = NULL;
        if (ks_dra_extended_claim_create(cycle, pod, ext->claim, &created, st) != KS_SUCCESS) {
            ks_dra_remove_pending(cycle, s->ext_uid);
            return KS_ERROR;
        }
        /* Track the actual claim from now: Unreserve deletes it. */
        ks_resource_claim_release(s->ext_claim);
        s->ext_claim = created;
        s->ext_real = 1;
    }
    ks_code code = ks_dra_claim_bind(cycle, pod, s->ext_claim, s->reserved, s->nallocate, st);
    ks_dra_remove_pending(cycle, s->ext_uid);
    if (code != KS_SUCCESS)
        return KS_ERROR;
    const char *cname = symstr(ks_resource_claim_view_of(s->ext_claim)->name);
    if (ext->nmaps == 0) {
        ks_status_reasonf(st,
                          "nil or empty request mappings, no update of pod %s/%s "
                          "ExtendedResourceClaimStatus",
                          symstr(ks_pod_namespace(pod)), symstr(ks_pod_name(pod)));
        return KS_ERROR;
    }
    if (ks_pod_extended_claim_status(cycle, pod, cname, ext->maps, ext->nmaps, st) != KS_SUCCESS)
        return KS_ERROR;
    return KS_SUCCESS;
}

/* ---- events, signatures ------------------------------------------------------------------------
 */

typedef struct uses_ctx {
    const char *uid;
    int uses;
} uses_ctx;

static void uses_claim(void *ctx, const ks_resource_claim *claim)
{
    uses_ctx *u = ctx;
    if (strcmp(ks_resource_claim_view_of(claim)->uid, u->uid) == 0)
        u->uses = 1;
    ks_resource_claim_release(claim);
}

/* The claim's status as JSON text (from "status": on), "" without one. */
static const char *status_part(const ks_resource_claim_view *v)
{
    const char *p = v && v->json ? strstr(v->json, "\"status\":") : NULL;
    return p ? p : "";
}

/* isSchedulableAfterClaimChange */
static ks_queueing_hint claim_hint(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    const ks_resource_claim *oldc = ev->old_obj, *newc = ev->new_obj;
    /* Deleted: only an allocated claim's devices come free (the deletion of PostFilter's stale
     * claim for extended resources, say). */
    if (!newc)
        return !oldc || ks_resource_claim_view_of(oldc)->allocated ? KS_QUEUE : KS_QUEUE_SKIP;
    const ks_resource_claim_view *nv = ks_resource_claim_view_of(newc);
    const ks_resource_claim_view *ov = oldc ? ks_resource_claim_view_of(oldc) : NULL;
    uses_ctx u = {nv->uid, 0};
    char msg[512];
    if (foreach_claim(NULL, pod, uses_claim, &u, msg, sizeof(msg)))
        return KS_QUEUE_SKIP;
    if (ov && ov->allocated && !nv->allocated)
        return KS_QUEUE; /* deallocated: devices became free */
    if (!u.uses)
        return KS_QUEUE_SKIP;
    if (!ov)
        return KS_QUEUE;
    if (strcmp(status_part(ov), status_part(nv)) == 0)
        return KS_QUEUE_SKIP;
    return KS_QUEUE;
}

/* isSchedulableAfterPodChange */
static ks_queueing_hint pod_hint(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    char msg[512];
    if (!ev->new_pod || strcmp(ks_pod_uid(pod), ks_pod_uid(ev->new_pod)) != 0)
        return KS_QUEUE_SKIP;
    if (foreach_claim(NULL, ev->new_pod, NULL, NULL, msg, sizeof(msg)))
        return KS_QUEUE_SKIP;
    return KS_QUEUE;
}

static size_t dra_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    const ks_cluster_event_hint ev[] = {
        /* SchedulingQueueHint is on: no UpdateNodeTaint */
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_ALLOCATABLE},
         NULL},
        {{KS_RES_RESOURCE_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE_ANY | KS_ACT_DELETE}, claim_hint},
        {{KS_RES_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM}, pod_hint},
        {{KS_RES_DEVICE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, NULL},
        {{KS_RES_RESOURCE_SLICE, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, NULL},
    };
    size_t n = sizeof(ev) / sizeof(ev[0]);
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = ev[i];
    return n;
}

/* SignPod: pods with claims are not signable (upstream issue 134986). */
static ks_code dra_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    (void)sig;
    const ks_pod_resource_claim *pcs;
    if (ks_pod_resource_claims(pod, &pcs) > 0) {
        ks_status_reason(st, "pods with dra resource claims are not signable");
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

const ks_plugin_desc ks_plugin_dynamic_resources = {
    .size = sizeof(ks_plugin_desc),
    .name = "DynamicResources",
    .create = dra_create,
    .destroy = dra_destroy,
    .pre_enqueue = dra_pre_enqueue,
    .pre_filter = dra_pre_filter,
    .filter = dra_filter,
    .post_filter = dra_post_filter,
    .score = dra_score,
    .normalize_score = dra_normalize,
    .reserve = dra_reserve,
    .unreserve = dra_unreserve,
    .pre_bind = dra_pre_bind,
    .pre_bind_pre_flight = dra_pre_bind_pre_flight,
    .events_with_hints = dra_events,
    .sign = dra_sign,
};
