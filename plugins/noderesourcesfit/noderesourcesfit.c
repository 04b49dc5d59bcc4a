/*
 * NodeResourcesFit (upstream plugins/noderesources/fit.go, resource_allocation.go,
 * least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, helper/shape_score.go;
 * v1.34).
 *
 *   PreFilter  copies the pod's requests (upstream PodRequests, computed once by the host when the
 *              pod arrived) into the cycle state, with the extended resources that args tell us to
 *              ignore already dropped and the "Insufficient <name>" reasons prepared, so that
 * Filter is integer comparisons only. Filter     fitsRequest: "Too many pods", then cpu, memory,
 * ephemeral-storage, then each scalar resource the pod requests (> 0). All failing reasons are
 * reported together; the code is Unschedulable, or UnschedulableAndUnresolvable when some failing
 *              request is larger than the node's whole allocatable (preemption cannot help).
 *   PreScore   the pod's request for each configured scoring resource (the non-zero variant for cpu
 *              and memory: 100m / 200Mi for containers that do not say).
 *   Score      the scoringStrategy: LeastAllocated, MostAllocated or RequestedToCapacityRatio,
 *              integer arithmetic as upstream. No NormalizeScore.
 *
 * Args (pluginConfig): ignoredResources, ignoredResourceGroups, scoringStrategy {type, resources
 * [{name, weight}], requestedToCapacityRatio {shape [{utilization, score}]}}. args.c declares them
 * (NodeResourcesFitArgs: schema, upstream's defaults, ValidateNodeResourcesFitArgs), which
 * kubesched applies while it loads the configuration; create() applies the same ones when args are
 * missing (LeastAllocated over cpu:1, memory:1; a weight of 0 means 1, as v1 defaulting) and
 * rejects invalid values with a message naming the field.
 */
#include <stdio.h>
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/resources.h"
#include "../common/sign.h"

/* args.c */
extern const ks_args_schema fit_args_schema;
int fit_validate_args(const ks_args *args, ks_args_error *err);

#define MAX_CUSTOM_PRIORITY_SCORE 10 /* RTCR shape scores are 0..10, scaled by 100/10 */
#define MAX_UTILIZATION 100
#define PATH_MAX_LEN 96

typedef enum strategy { STRAT_LEAST, STRAT_MOST, STRAT_RTCR } strategy;

typedef struct scored_resource {
    ks_sym name;
    ks_h_res_kind kind;
    int64_t weight; /* 1..100 */
} scored_resource;

typedef struct shape_point {
    int64_t utilization; /* 0..100, strictly increasing */
    int64_t score;       /* 0..100 (config score * 10) */
} shape_point;

/* What create() builds; read-only afterwards, so every thread may read it without locks. */
typedef struct fit {
    size_t nignored;
    ks_sym *ignored; /* ignoredResources, interned */
    size_t ngroups;
    char **groups; /* ignoredResourceGroups, owned copies (PreFilter only) */
    strategy strat;
    size_t nres;
    scored_resource *res;
    size_t nshape;
    shape_point *shape;
} fit;

/* One scalar resource Filter checks: requested > 0 and not ignored. */
typedef struct scalar_check {
    ks_sym name;
    int64_t request;
    const char *reason; /* "Insufficient <name>", in the cycle arena */
    int dra;            /* a DeviceClass maps it: left to DynamicResources on a node whose
                         * allocatable lacks it (shouldDelegateResourceToDRA) */
} scalar_check;

/* PreFilter state, in the cycle arena; never changed after PreFilter (Filter workers share it, and
 * a cloned cycle state shares the pointer, as upstream's Clone returns itself). */
typedef struct prefilter_state {
    int64_t milli_cpu, memory, ephemeral;
    size_t nscalar;
    scalar_check scalar[];
} prefilter_state;

/* PreScore state: requests[i] is the pod's request for fit.res[i]; cls[i] the DeviceClass that
 * maps it (KS_SYM_ABSENT: none), with dra the devices and allocations of now when any does
 * (getDRAPreScoredParams). Arena, read-only after. */
typedef struct prescore_state {
    size_t n;
    ks_dra_allocator *dra; /* borrowed(cycle); NULL: no scoring resource is backed by DRA */
    ks_sym *cls;
    int64_t requests[];
} prescore_state;

/* Cycle-state keys: compared by address (not const, so that no constant merging can give both
 * the same address). */
static char prefilter_key;
static char prescore_key;

/* ---------------------------------------------------------------------------------------------
 * Args
 * ------------------------------------------------------------------------------------------- */

static void fit_free(fit *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->ngroups; i++)
        ks_free(f->groups[i]);
    ks_free(f->groups);
    ks_free(f->ignored);
    ks_free(f->res);
    ks_free(f->shape);
    ks_free(f);
}

static void *zalloc(size_t n)
{
    void *p = ks_alloc(n ? n : 1);
    if (p)
        memset(p, 0, n ? n : 1);
    return p;
}

/* Upstream metav1validation.ValidateLabelName (IsQualifiedName): [prefix/]name, name 1..63
 * characters of alphanumerics, '-', '_', '.', starting and ending alphanumeric. NULL when valid.
 * The rules are the SDK's (ks_qualified_name_check, which splits at the last '/'; with at most one
 * '/' that is the first one); the words, and the refusal of a second '/', are create()'s own. */
static const char *check_qualified_name(const char *s)
{
    const char *slash = strchr(s, '/');
    if (slash && strchr(slash + 1, '/'))
        return "a qualified name must consist of an optional DNS subdomain prefix and '/' "
               "followed by a name";
    switch (ks_qualified_name_check(s)) {
    case KS_QNAME_OK:
        return NULL;
    case KS_QNAME_PREFIX_EMPTY:
        return "prefix part must be non-empty";
    case KS_QNAME_PREFIX_TOO_LONG:
        return "prefix part must be no more than 253 characters";
    case KS_QNAME_PREFIX_CHARS:
        return "prefix part must be a lowercase RFC 1123 subdomain";
    case KS_QNAME_NAME_EMPTY:
        return "name part must be non-empty";
    case KS_QNAME_NAME_TOO_LONG:
        return "name part must be no more than 63 characters";
    case KS_QNAME_NAME_CHARS:
        break;
    }
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character";
}

/* Array length at path: 0 when absent; -1 (with err set) when it is not an array. */
static long array_len(const ks_args *args, const char *path, ks_error *err)
{
    size_t n = 0;
    int rc = ks_args_count(args, path, &n);
    if (rc == KS_ENOTFOUND)
        return 0;
    if (rc != 0) {
        ks_error_set(err, "NodeResourcesFit: %s: must be a list", path);
        return -1;
    }
    return (long)n;
}

/* A required string at path; 0, or -1 with err set. */
static int get_string(const ks_args *args, const char *path, const char **out, ks_error *err)
{
    int rc = ks_args_get_string(args, path, out);
    if (rc == KS_ENOTFOUND) {
        ks_error_set(err, "NodeResourcesFit: %s: Required value", path);
        return -1;
    }
    if (rc != 0) {
        ks_error_set(err, "NodeResourcesFit: %s: must be a string", path);
        return -1;
    }
    return 0;
}

/* An integer at path; *out = dflt when absent. 0, or -1 with err set. */
static int get_int(const ks_args *args, const char *path, int64_t dflt, int64_t *out, ks_error *err)
{
    int rc = ks_args_get_int(args, path, out);
    if (rc == KS_ENOTFOUND) {
        *out = dflt;
        return 0;
    }
    if (rc != 0) {
        ks_error_set(err, "NodeResourcesFit: %s: must be an integer", path);
        return -1;
    }
    return 0;
}

static int parse_ignored(fit *f, const ks_args *args, ks_error *err)
{
    char path[PATH_MAX_LEN];
    long n = array_len(args, "ignoredResources", err);
    if (n < 0)
        return -1;
    if (n > 0 && !(f->ignored = zalloc((size_t)n * sizeof(ks_sym))))
        goto nomem;
    for (long i = 0; i < n; i++) {
        const char *s;
        snprintf(path, sizeof(path), "ignoredResources[%ld]", i);
        if (get_string(args, path, &s, err) != 0)
            return -1;
        const char *why = check_qualified_name(s);
        if (why) {
            ks_error_set(err, "NodeResourcesFit: %s: Invalid value: \"%s\": %s", path, s, why);
            return -1;
        }
        f->ignored[f->nignored++] = ks_intern(s);
    }

    n = array_len(args, "ignoredResourceGroups", err);
    if (n < 0)
        return -1;
    if (n > 0 && !(f->groups = zalloc((size_t)n * sizeof(char *))))
        goto nomem;
    for (long i = 0; i < n; i++) {
        const char *s;
        snprintf(path, sizeof(path), "ignoredResourceGroups[%ld]", i);
        if (get_string(args, path, &s, err) != 0)
            return -1;
        if (strchr(s, '/')) {
            ks_error_set(err,
                         "NodeResourcesFit: %s: Invalid value: \"%s\": resource group name can't "
                         "contain '/'",
                         path, s);
            return -1;
        }
        const char *why = check_qualified_name(s);
        if (why) {
            ks_error_set(err, "NodeResourcesFit: %s: Invalid value: \"%s\": %s", path, s, why);
            return -1;
        }
        size_t len = strlen(s);
        if (!(f->groups[f->ngroups] = ks_alloc(len + 1)))
            goto nomem;
        memcpy(f->groups[f->ngroups++], s, len + 1);
    }
    return 0;
nomem:
    ks_error_set(err, "NodeResourcesFit: %s", ks_strerror(KS_ENOMEM));
    return -1;
}

static int parse_strategy(fit *f, const ks_args *args, ks_error *err)
{
    char path[PATH_MAX_LEN];
    const char *type = NULL;
    int rc = ks_args_get_string(args, "scoringStrategy.type", &type);
    if (rc == KS_ENOTFOUND) {
        f->strat = STRAT_LEAST; /* upstream default */
    } else if (rc != 0) {
        ks_error_set(err, "NodeResourcesFit: scoringStrategy.type: must be a string");
        return -1;
    } else if (strcmp(type, "LeastAllocated") == 0) {
        f->strat = STRAT_LEAST;
    } else if (strcmp(type, "MostAllocated") == 0) {
        f->strat = STRAT_MOST;
    } else if (strcmp(type, "RequestedToCapacityRatio") == 0) {
        f->strat = STRAT_RTCR;
    } else {
        ks_error_set(err,
                     "NodeResourcesFit: scoringStrategy.type: Unsupported value: \"%s\": "
                     "supported values: \"LeastAllocated\", \"MostAllocated\", "
                     "\"RequestedToCapacityRatio\"",
                     type);
        return -1;
    }

    /* resources: absent or empty means upstream's default set, cpu:1 and memory:1. */
    long n = array_len(args, "scoringStrategy.resources", err);
    if (n < 0)
        return -1;
    f->nres = n > 0 ? (size_t)n : 2;
    if (!(f->res = zalloc(f->nres * sizeof(*f->res))))
        goto nomem;
    if (n == 0) {
        f->res[0] = (scored_resource){ks_intern("cpu"), KS_H_RES_CPU, 1};
        f->res[1] = (scored_resource){ks_intern("memory"), KS_H_RES_MEMORY, 1};
    }
    for (long i = 0; i < n; i++) {
        const char *name;
        int64_t w;
        snprintf(path, sizeof(path), "scoringStrategy.resources[%ld].name", i);
        if (get_string(args, path, &name, err) != 0)
            return -1;
        snprintf(path, sizeof(path), "scoringStrategy.resources[%ld].weight", i);
        if (get_int(args, path, 0, &w, err) != 0)
            return -1;
        if (w == 0)
            w = 1; /* v1 defaulting: an unset (zero) weight is 1 */
        if (w < 0 || w > 100) {
            ks_error_set(err,
                         "NodeResourcesFit: %s: Invalid value: %lld: resource weight of %s not in "
                         "valid range (0, 100]",
                         path, (long long)w, name);
            return -1;
        }
        f->res[i].name = ks_intern(name);
        f->res[i].kind = ks_h_resource_kind(name);
        f->res[i].weight = w;
    }

    /* requestedToCapacityRatio.shape: validated whenever given (as upstream), required for RTCR. */
    n = array_len(args, "scoringStrategy.requestedToCapacityRatio.shape", err);
    if (n < 0)
        return -1;
    if (n == 0 && f->strat == STRAT_RTCR) {
        ks_error_set(err, "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape: "
                          "Required value: at least one point must be specified");
        return -1;
    }
    if (n > 0 && !(f->shape = zalloc((size_t)n * sizeof(*f->shape))))
        goto nomem;
    for (long i = 0; i < n; i++) {
        int64_t u, s;
        snprintf(path, sizeof(path),
                 "scoringStrategy.requestedToCapacityRatio.shape[%ld].utilization", i);
        if (get_int(args, path, 0, &u, err) != 0)
            return -1;
        if (u < 0 || u > MAX_UTILIZATION) {
            ks_error_set(err,
                         "NodeResourcesFit: %s: Invalid value: %lld: not in valid range [0, 100]",
                         path, (long long)u);
            return -1;
        }
        if (i > 0 && f->shape[i - 1].utilization >= u) {
            ks_error_set(err,
                         "NodeResourcesFit: %s: Invalid value: %lld: utilization values must be "
                         "sorted in increasing order",
                         path, (long long)u);
            return -1;
        }
        snprintf(path, sizeof(path), "scoringStrategy.requestedToCapacityRatio.shape[%ld].score",
                 i);
        if (get_int(args, path, 0, &s, err) != 0)
            return -1;
        if (s < 0 || s > MAX_CUSTOM_PRIORITY_SCORE) {
            ks_error_set(err,
                         "NodeResourcesFit: %s: Invalid value: %lld: not in valid range [0, 10]",
                         path, (long long)s);
            return -1;
        }
        f->shape[i].utilization = u;
        f->shape[i].score = s * (KS_MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE);
        f->nshape++;
    }
    return 0;
nomem:
    ks_error_set(err, "NodeResourcesFit: %s", ks_strerror(KS_ENOMEM));
    return -1;
}

/* create: main thread. */
static void *fit_create(const ks_args *args, ks_error *err)
{
    fit *f = zalloc(sizeof(*f));
    if (!f) {
        ks_error_set(err, "NodeResourcesFit: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    if (parse_ignored(f, args, err) != 0 || parse_strategy(f, args, err) != 0) {
        fit_free(f);
        return NULL;
    }
    return f;
}

static void fit_destroy(void *self) { fit_free(self); }

/* ---------------------------------------------------------------------------------------------
 * PreFilter / Filter
 * ------------------------------------------------------------------------------------------- */

/* Whether PreFilter leaves a requested scalar out of Filter: not a scalar name upstream, or an
 * extended resource that args ignore. */
static int not_checked(const fit *f, ks_sym sym)
{
    const char *name = ks_sym_str(sym);
    if (!name || !ks_h_is_scalar_resource(name))
        return 1;
    if ((f->nignored == 0 && f->ngroups == 0) || !ks_h_is_extended_resource(name))
        return 0;
    for (size_t i = 0; i < f->nignored; i++)
        if (f->ignored[i] == sym)
            return 1;
    size_t plen = (size_t)(strchr(name, '/') - name);
    for (size_t i = 0; i < f->ngroups; i++)
        if (strlen(f->groups[i]) == plen && memcmp(f->groups[i], name, plen) == 0)
            return 1;
    return 0;
}

static int dra_mapped(ks_cycle *cycle, ks_sym name) { return ks_h_dra_mapped(cycle, name); }

/* pre_filter: scheduling thread, once per cycle. Strings are looked at here, never in Filter. */
static ks_code fit_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                              ks_prefilter_result *result, ks_status *st)
{
    const fit *f = self;
    (void)result;
    const ks_resources *req = ks_pod_requests(pod);
    prefilter_state *s =
        ks_cycle_alloc(cycle, sizeof(*s) + (size_t)req->nscalar * sizeof(s->scalar[0]));
    if (!s)
        goto nomem;
    s->milli_cpu = req->milli_cpu;
    s->memory = req->memory;
    s->ephemeral = req->ephemeral_storage;
    s->nscalar = 0;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        const ks_scalar *sc = &req->scalar[i];
        if (sc->value == 0 || not_checked(f, sc->name))
            continue;
        const char *name = ks_sym_str(sc->name);
        size_t len = sizeof("Insufficient ") + (name ? strlen(name) : 0);
        char *reason = ks_cycle_alloc(cycle, len);
        if (!reason)
            goto nomem;
        snprintf(reason, len, "Insufficient %s", name ? name : "");
        s->scalar[s->nscalar++] =
            (scalar_check){sc->name, sc->value, reason, dra_mapped(cycle, sc->name)};
    }
    if (ks_cycle_write(cycle, &prefilter_key, s, NULL) != 0)
        goto nomem;
    return KS_SUCCESS;
nomem:
    ks_status_reason(st, "NodeResourcesFit: out of memory in PreFilter");
    return KS_ERROR;
}

/* filter: called concurrently for different nodes; the PreFilter state and the plugin are
 * read-only here. Integer comparisons and precomputed reasons only. */
static ks_code fit_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                          ks_status *st)
{
    (void)self;
    (void)pod;
    const prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    if (!s) {
        ks_status_reason(st, "error reading \"PreFilterNodeResourcesFit\" from cycleState: not "
                             "found");
        return KS_ERROR;
    }
    const ks_resources *alloc = ks_node_allocatable(ks_node_info_node(ni));
    const ks_resources *used = ks_node_info_requested(ni);
    ks_code code = KS_SUCCESS;
    int unresolvable = 0;

    if ((int64_t)ks_node_info_pod_count(ni) + 1 > alloc->allowed_pods) {
        ks_status_reason(st, "Too many pods");
        code = KS_UNSCHEDULABLE;
    }
    if (s->milli_cpu > 0 && s->milli_cpu > alloc->milli_cpu - used->milli_cpu) {
        ks_status_reason(st, "Insufficient cpu");
        code = KS_UNSCHEDULABLE;
        unresolvable |= s->milli_cpu > alloc->milli_cpu;
    }
    if (s->memory > 0 && s->memory > alloc->memory - used->memory) {
        ks_status_reason(st, "Insufficient memory");
        code = KS_UNSCHEDULABLE;
        unresolvable |= s->memory > alloc->memory;
    }
    if (s->ephemeral > 0 && s->ephemeral > alloc->ephemeral_storage - used->ephemeral_storage) {
        ks_status_reason(st, "Insufficient ephemeral-storage");
        code = KS_UNSCHEDULABLE;
        unresolvable |= s->ephemeral > alloc->ephemeral_storage;
    }
    for (size_t i = 0; i < s->nscalar; i++) {
        const scalar_check *c = &s->scalar[i];
        int64_t a = ks_resources_scalar(alloc, c->name);
        if (c->dra && a <= 0)
            continue; /* no device plugin offers it here: DynamicResources' to allocate */
        if (c->request > a - ks_resources_scalar(used, c->name)) {
            ks_status_reason(st, c->reason);
            code = KS_UNSCHEDULABLE;
            unresolvable |= c->request > a;
        }
    }
    if (code != KS_SUCCESS && unresolvable)
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    return code;
}

/* ---------------------------------------------------------------------------------------------
 * PreScore / Score
 * ------------------------------------------------------------------------------------------- */

/* Go's int64 arithmetic wraps on overflow; do the same without C's undefined behaviour. */
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* The pod's request for a scoring resource: the non-zero variant for cpu and memory (upstream
 * NonMissingContainerRequests), the plain one for the others. */
static int64_t pod_request(const scored_resource *r, const ks_pod *pod)
{
    switch (r->kind) {
    case KS_H_RES_CPU:
        return ks_pod_nonzero_requests(pod)->milli_cpu;
    case KS_H_RES_MEMORY:
        return ks_pod_nonzero_requests(pod)->memory;
    case KS_H_RES_EPHEMERAL:
        return ks_pod_requests(pod)->ephemeral_storage;
    case KS_H_RES_SCALAR:
        return ks_resources_scalar(ks_pod_requests(pod), r->name);
    default:
        return 0;
    }
}

/* pre_score: scheduling thread, once per cycle. */
static ks_code fit_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                             const ks_node_info *const *nodes, size_t nnodes, ks_status *st)
{
    const fit *f = self;
    (void)nodes;
    (void)nnodes;
    prescore_state *s = ks_cycle_alloc(cycle, sizeof(*s) + f->nres * sizeof(s->requests[0]));
    if (!s) {
        ks_status_reason(st, "NodeResourcesFit: out of memory in PreScore");
        return KS_ERROR;
    }
    s->n = f->nres;
    s->dra = NULL;
    s->cls = ks_cycle_alloc(cycle, (f->nres ? f->nres : 1) * sizeof(*s->cls));
    if (!s->cls) {
        ks_status_reason(st, "NodeResourcesFit: out of memory in PreScore");
        return KS_ERROR;
    }
    int any_dra = 0;
    for (size_t i = 0; i < f->nres; i++) {
        s->requests[i] = pod_request(&f->res[i], pod);
        s->cls[i] = KS_SYM_ABSENT;
        if (f->res[i].kind == KS_H_RES_SCALAR && dra_mapped(cycle, f->res[i].name)) {
            s->cls[i] = ks_dra_extended_resource_class(cycle, f->res[i].name);
            any_dra = 1;
        }
    }
    if (any_dra && KS_HOST_HAS(dra_class_device_counts)) {
        char err[512];
        if (!(s->dra = ks_dra_allocator_new(cycle, err, sizeof(err)))) {
            ks_status_reason(st, err);
            return KS_ERROR;
        }
    }
    if (ks_cycle_write(cycle, &prescore_key, s, NULL) != 0) {
        ks_status_reason(st, "NodeResourcesFit: cannot write the PreScore state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* helper.BuildBrokenLinearFunction: piecewise linear through the shape points, flat outside. */
static int64_t broken_linear(const fit *f, int64_t p)
{
    const shape_point *sh = f->shape;
    for (size_t i = 0; i < f->nshape; i++) {
        if (p <= sh[i].utilization) {
            if (i == 0)
                return sh[0].score;
            return sh[i - 1].score + (sh[i].score - sh[i - 1].score) * (p - sh[i - 1].utilization) /
                                         (sh[i].utilization - sh[i - 1].utilization);
        }
    }
    return sh[f->nshape - 1].score;
}

/* One resource's score under the configured strategy (allocatable > 0 here). */
static int64_t resource_score(const fit *f, int64_t requested, int64_t capacity)
{
    switch (f->strat) {
    case STRAT_LEAST:
        if (requested > capacity)
            return 0;
        return wrap_mul(capacity - requested, KS_MAX_NODE_SCORE) / capacity;
    case STRAT_MOST:
        if (requested > capacity)
            requested = capacity; /* pods without requests get the 100m/200Mi defaults */
        return wrap_mul(requested, KS_MAX_NODE_SCORE) / capacity;
    default:
        if (requested > capacity)
            return broken_linear(f, MAX_UTILIZATION);
        return broken_linear(f, wrap_mul(requested, MAX_UTILIZATION) / capacity);
    }
}

/* score: called concurrently for different nodes; the plugin and the PreScore state are read-only.
 * resourceAllocationScorer.score: resources with allocatable 0 (or a scalar the pod does not
 * request, or one the node does not offer) are left out, weight included. */
static ks_code fit_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                         int64_t *score, ks_status *st)
{
    const fit *f = self;
    (void)st;
    const prescore_state *s = ks_cycle_read(cycle, &prescore_key);
    const ks_resources *alloc = ks_node_allocatable(ks_node_info_node(ni));
    const ks_resources *used = ks_node_info_requested(ni);
    const ks_resources *used_nz = ks_node_info_nonzero_requested(ni);
    int64_t node_score = 0, weight_sum = 0;

    for (size_t i = 0; i < f->nres; i++) {
        const scored_resource *r = &f->res[i];
        int64_t req = s && i < s->n ? s->requests[i] : pod_request(r, pod);
        int64_t capacity = 0, requested = 0;
        /* calculateDRAExtendedResourceAllocatableRequest: a resource the node's allocatable
         * lacks counts the node's devices of its class, and the allocated ones. */
        if (s && s->dra)
            (void)ks_h_dra_allocatable_requested(s->dra, s->cls[i], r->name, req,
                                                 ks_node_info_node(ni), alloc, &capacity,
                                                 &requested);
        if (capacity == 0 && !ks_h_allocatable_requested(r->kind, r->name, req, alloc, used_nz,
                                                         used, &capacity, &requested))
            continue;
        if (capacity == 0)
            continue;
        int64_t rs = resource_score(f, requested, capacity);
        if (f->strat == STRAT_RTCR && rs <= 0)
            continue; /* RTCR averages only the resources that scored */
        node_score += rs * r->weight;
        weight_sum += r->weight;
    }
    if (weight_sum == 0)
        *score = 0;
    else if (f->strat == STRAT_RTCR) /* math.Round(ns / ws), ns >= 0: half away from zero */
        *score = (2 * node_score + weight_sum) / (2 * weight_sum);
    else
        *score = node_score / weight_sum;
    return KS_SUCCESS;
}

/* ---- queueing hints (upstream v1.37 fit.go) ------------------------------------------------ */

static int64_t scalar_value(const ks_resources *r, ks_sym name)
{
    for (uint32_t i = 0; i < r->nscalar; i++)
        if (r->scalar[i].name == name)
            return r->scalar[i].value;
    return 0;
}

/* upstream isFit: whether the pod fits an empty node (a fresh NodeInfo with only the Node): room
 * for one pod, and each request (> 0) within the allocatable. Nothing is ignored here (upstream
 * passes no ignored resources); a resource a DeviceClass maps and the node does not offer is
 * DRA's (shouldDelegateResourceToDRA). */
static int fits_empty_node(const ks_pod *pod, const ks_node *node)
{
    const ks_resources *req = ks_pod_requests(pod), *alloc = ks_node_allocatable(node);
    if (1 > alloc->allowed_pods)
        return 0;
    if ((req->milli_cpu > 0 && req->milli_cpu > alloc->milli_cpu) ||
        (req->memory > 0 && req->memory > alloc->memory) ||
        (req->ephemeral_storage > 0 && req->ephemeral_storage > alloc->ephemeral_storage))
        return 0;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        int64_t a = scalar_value(alloc, req->scalar[i].name);
        if (req->scalar[i].value > 0 && req->scalar[i].value > a &&
            !(a <= 0 && dra_mapped(NULL, req->scalar[i].name)))
            return 0;
    }
    return 1;
}

/* upstream haveAnyRequestedResourcesIncreased: more pods allowed, or more allocatable of a
 * resource the pod requests (> 0), or such a resource the node leaves to DRA. */
static int requested_resources_increased(const ks_pod *pod, const ks_node *old_node,
                                         const ks_node *new_node)
{
    const ks_resources *req = ks_pod_requests(pod), *o = ks_node_allocatable(old_node),
                       *n = ks_node_allocatable(new_node);
    if (n->allowed_pods > o->allowed_pods)
        return 1;
    if ((req->milli_cpu > 0 && n->milli_cpu > o->milli_cpu) ||
        (req->memory > 0 && n->memory > o->memory) ||
        (req->ephemeral_storage > 0 && n->ephemeral_storage > o->ephemeral_storage))
        return 1;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        if (req->scalar[i].value == 0)
            continue;
        int64_t now = scalar_value(n, req->scalar[i].name);
        if (now > scalar_value(o, req->scalar[i].name))
            return 1;
        /* a resource the modified node leaves to DRA (shouldDelegateResourceToDRA) */
        if (now <= 0 && dra_mapped(NULL, req->scalar[i].name))
            return 1;
    }
    return 0;
}

/* upstream isSchedulableAfterNodeChange: Skip a node the pod would not fit even empty; Queue a
 * new node it fits; an updated one only when it gained pods or allocatable the pod requests.
 * Event thread; pure. */
static ks_queueing_hint fit_after_node_change(void *self, const ks_pod *pod,
                                              const ks_event_info *ev)
{
    (void)self;
    if (!ev->new_node)
        return KS_QUEUE; /* not a Node event: cannot tell */
    if (!fits_empty_node(pod, ev->new_node))
        return KS_QUEUE_SKIP;
    if (!ev->old_node)
        return KS_QUEUE;
    return requested_resources_increased(pod, ev->old_node, ev->new_node) ? KS_QUEUE
                                                                          : KS_QUEUE_SKIP;
}

static int nominated_or_assigned(const ks_pod *p)
{
    ks_sym nominated = ks_pod_nominated_node_name(p);
    return ks_pod_node_name(p) != KS_SYM_EMPTY ||
           (nominated != KS_SYM_EMPTY && nominated != KS_SYM_ABSENT);
}

/* upstream isSchedulableAfterAssignedPodDelete: any deleted pod that was scheduled (or nominated)
 * may free room. Event thread; pure. */
static ks_queueing_hint fit_after_assigned_pod_delete(void *self, const ks_pod *pod,
                                                      const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    if (!ev->old_pod)
        return KS_QUEUE; /* not a Pod delete: cannot tell */
    return nominated_or_assigned(ev->old_pod) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* upstream haveEnoughRelevantResourcesDecreased: the modified pod is assigned and lowered a request
 * that the target pod makes (> 0). */
static int relevant_resources_decreased(const ks_pod *target, const ks_pod *orig, const ks_pod *mod)
{
    if (ks_pod_node_name(mod) == KS_SYM_EMPTY)
        return 0;
    const ks_resources *t = ks_pod_requests(target), *o = ks_pod_requests(orig),
                       *m = ks_pod_requests(mod);
    if ((t->milli_cpu != 0 && o->milli_cpu > m->milli_cpu) ||
        (t->memory != 0 && o->memory > m->memory) ||
        (t->ephemeral_storage != 0 && o->ephemeral_storage > m->ephemeral_storage))
        return 1;
    for (uint32_t i = 0; i < t->nscalar; i++)
        if (t->scalar[i].value != 0 &&
            scalar_value(o, t->scalar[i].name) > scalar_value(m, t->scalar[i].name))
            return 1;
    return 0;
}

/* upstream isSchedulableAfterAssignedPodScaleDown. Event thread; pure. */
static ks_queueing_hint fit_after_assigned_pod_scale_down(void *self, const ks_pod *pod,
                                                          const ks_event_info *ev)
{
    (void)self;
    if (!ev->old_pod || !ev->new_pod)
        return KS_QUEUE; /* not a Pod update: cannot tell */
    return relevant_resources_decreased(pod, ev->old_pod, ev->new_pod) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterDeviceClassEvent, as far as kubesched's DeviceClass events tell (they
 * carry no objects): a class can only come to map a resource the pod requests if the pod requests
 * an extended resource or a deviceclass.resource.kubernetes.io/ one; any other pod is skipped.
 * Event thread; pure. */
static ks_queueing_hint fit_after_device_class(void *self, const ks_pod *pod,
                                               const ks_event_info *ev)
{
    (void)self;
    (void)ev;
    const ks_resources *req = ks_pod_requests(pod);
    for (uint32_t i = 0; i < req->nscalar; i++) {
        const char *n = ks_sym_str(req->scalar[i].name);
        if (req->scalar[i].value != 0 && n &&
            (ks_h_is_extended_resource(n) ||
             strncmp(n, "deviceclass.resource.kubernetes.io/", 35) == 0))
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37 defaults: InPlacePodVerticalScaling GA on, its
 * SchedulerPreemption alpha off, DRAExtendedResource GA): an assigned pod deleted or scaled down,
 * the pending pod itself scaled down (always Queue: isSchedulableAfterTargetPodScaleDown), a node
 * added or given more allocatable, a DeviceClass added or updated (fit_after_device_class). */
static size_t fit_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, fit_after_assigned_pod_delete},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE}, fit_after_node_change},
        {{KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN}, fit_after_assigned_pod_scale_down},
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_SCALE_DOWN}, NULL},
        {{KS_RES_DEVICE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE_ANY}, fit_after_device_class},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream Fit.SignPod: the pod's requests; a pod requesting a resource a DeviceClass maps is
 * not signable. Any thread. */
static ks_code fit_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    if (ks_h_sign_refuses_dra(pod, st))
        return KS_UNSCHEDULABLE;
    return ks_sign_resources(pod, sig, st);
}

const ks_plugin_desc ks_plugin_node_resources_fit = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeResourcesFit",
    .create = fit_create,
    .destroy = fit_destroy,
    .pre_filter = fit_pre_filter,
    .filter = fit_filter,
    .pre_score = fit_pre_score,
    .score = fit_score,
    .events_with_hints = fit_events,
    .args_schema = &fit_args_schema,
    .validate_args = fit_validate_args,
    .sign = fit_sign,
};
