/*
 * NodeResourcesBalancedAllocation (upstream plugins/noderesources/balanced_allocation.go and
 * resource_allocation.go, v1.37).
 *
 *   PreScore  the pod's plain requests (upstream PodRequests, no 100m / 200Mi defaults) for each
 *             configured resource; Skip when all are 0 (a best-effort pod, v1.33+, issue 129138),
 *             so the plugin adds nothing for it.
 *   Score     per resource: requested = the node's plain requested + the pod's request, over the
 *             node's allocatable; a scalar resource the pod does not request, a name the node does
 *             not offer, or allocatable 0 is left out. fraction = min(1, req / alloc) as double;
 *             std = 0 for one fraction, |f1 - f2| / 2 for two, the population standard deviation
 *             for more; balance = int64((1 - std) * 100), computed with the pod (requested)
 *             and without it (the node's plain requested alone, same resources left out); score
 *             = 50 + (50 + withPod - withoutPod) / 2 (v1.35+, range [50, 100]). No
 *             NormalizeScore.
 *
 * A configured resource that a DeviceClass maps (extended resources backed by DRA) counts, on a
 * node whose allocatable lacks it, the node's devices of the class and those allocated or in
 * flight (getDRAPreScoredParams); such pods are not signable.
 *
 * Args (pluginConfig, NodeResourcesBalancedAllocationArgs, declared below): resources [{name,
 * weight}]; absent or empty means cpu:1 and memory:1, an unset or 0 weight is 1 (kubesched fills
 * these defaults while it loads the configuration; create() applies the same ones when args are
 * missing). Upstream validation (balanced_validate_args): names unique, every weight 1. The
 * weights take no part in the score.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/resources.h"
#include "../common/sign.h"

#define PATH_MAX_LEN 96

typedef struct resource {
    ks_sym name;
    ks_h_res_kind kind;
} resource;

/* What create() builds; read-only afterwards. */
typedef struct balanced {
    size_t n;
    resource res[];
} balanced;

/* PreScore state (cycle arena): requests[i] is the pod's request for res[i]; cls[i] the
 * DeviceClass that maps it (KS_SYM_ABSENT: none), with dra the devices and allocations of now
 * when any does (getDRAPreScoredParams). */
typedef struct prescore_state {
    size_t n;
    ks_dra_allocator *dra; /* borrowed(cycle); NULL: no resource is backed by DRA */
    ks_sym *cls;
    int64_t requests[];
} prescore_state;

static char prescore_key;

static void balanced_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* create: main thread. */
static void *balanced_create(const ks_args *args, ks_error *err)
{
    char path[PATH_MAX_LEN];
    size_t n = 0;
    int rc = ks_args_count(args, "resources", &n);
    if (rc != 0 && rc != KS_ENOTFOUND) {
        ks_error_set(err, "NodeResourcesBalancedAllocation: resources: must be a list");
        return NULL;
    }
    if (rc == KS_ENOTFOUND)
        n = 0;
    size_t count = n ? n : 2;
    balanced *b = ks_alloc(sizeof(*b) + count * sizeof(b->res[0]));
    if (!b) {
        ks_error_set(err, "NodeResourcesBalancedAllocation: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    b->n = count;
    if (n == 0) {
        b->res[0] = (resource){ks_intern("cpu"), KS_H_RES_CPU};
        b->res[1] = (resource){ks_intern("memory"), KS_H_RES_MEMORY};
        return b;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name;
        int64_t w = 0;
        snprintf(path, sizeof(path), "resources[%zu].name", i);
        rc = ks_args_get_string(args, path, &name);
        if (rc != 0) {
            ks_error_set(err, "NodeResourcesBalancedAllocation: %s: %s", path,
                         rc == KS_ENOTFOUND ? "Required value" : "must be a string");
            goto fail;
        }
        b->res[i] = (resource){ks_intern(name), ks_h_resource_kind(name)};
        for (size_t k = 0; k < i; k++) {
            if (b->res[k].name == b->res[i].name) {
                ks_error_set(err, "NodeResourcesBalancedAllocation: %s: Duplicate value: \"%s\"",
                             path, name);
                goto fail;
            }
        }
        snprintf(path, sizeof(path), "resources[%zu].weight", i);
        rc = ks_args_get_int(args, path, &w);
        if (rc == KS_ENOTFOUND || (rc == 0 && w == 0))
            w = 1; /* v1 defaulting: an unset weight is 1 */
        if (rc != 0 && rc != KS_ENOTFOUND) {
            ks_error_set(err, "NodeResourcesBalancedAllocation: %s: must be an integer", path);
            goto fail;
        }
        if (w != 1) {
            ks_error_set(err, "NodeResourcesBalancedAllocation: %s: Invalid value: %lld: must be 1",
                         path, (long long)w);
            goto fail;
        }
    }
    return b;
fail:
    ks_free(b);
    return NULL;
}

/* The pod's plain request for one configured resource. */
static int64_t pod_request(const resource *r, const ks_resources *req)
{
    switch (r->kind) {
    case KS_H_RES_CPU:
        return req->milli_cpu;
    case KS_H_RES_MEMORY:
        return req->memory;
    case KS_H_RES_EPHEMERAL:
        return req->ephemeral_storage;
    case KS_H_RES_PODS:
        return req->allowed_pods;
    default: /* the host keeps every other requested name with the scalars */
        return ks_resources_scalar(req, r->name);
    }
}

/* pre_score: scheduling thread, once per cycle. */
static ks_code balanced_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                  const ks_node_info *const *nodes, size_t nnodes, ks_status *st)
{
    const balanced *b = self;
    (void)nodes;
    (void)nnodes;
    const ks_resources *req = ks_pod_requests(pod);
    int any = 0;
    for (size_t i = 0; i < b->n && !any; i++)
        any = pod_request(&b->res[i], req) != 0;
    if (!any)
        return KS_SKIP; /* best-effort pod */
    prescore_state *s = ks_cycle_alloc(cycle, sizeof(*s) + b->n * sizeof(s->requests[0]));
    if (!s) {
        ks_status_reason(st, "NodeResourcesBalancedAllocation: out of memory in PreScore");
        return KS_ERROR;
    }
    s->n = b->n;
    s->dra = NULL;
    if (!(s->cls = ks_cycle_alloc(cycle, (b->n ? b->n : 1) * sizeof(*s->cls)))) {
        ks_status_reason(st, "NodeResourcesBalancedAllocation: out of memory in PreScore");
        return KS_ERROR;
    }
    int any_dra = 0;
    for (size_t i = 0; i < b->n; i++) {
        s->requests[i] = pod_request(&b->res[i], req);
        s->cls[i] = KS_SYM_ABSENT;
        if (b->res[i].kind == KS_H_RES_SCALAR && ks_h_dra_mapped(cycle, b->res[i].name)) {
            s->cls[i] = ks_dra_extended_resource_class(cycle, b->res[i].name);
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
        ks_status_reason(st, "NodeResourcesBalancedAllocation: cannot write the PreScore state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* The fraction of resource r on the node, with the pod (with_pod) or without it: 1 and *f when it
 * takes part in the score, 0 when it is left out (a scalar the pod does not request, a name
 * framework.Resource never holds, or allocatable 0). Upstream fills requested[i] =
 * allocated[i] + podRequest[i] and allocated[i] (the node's plain Requested) from the same
 * calculateResourceAllocatableRequest call, so one resource is left out of both scores or of
 * neither. */
static int fraction(const prescore_state *s, size_t i, const resource *r, const ks_node *node,
                    const ks_resources *alloc, const ks_resources *used, int with_pod, double *f)
{
    int64_t req = s->requests[i], capacity = 0, requested = 0;
    /* a resource backed by DRA on a node whose allocatable lacks it: the class's devices */
    if (!(s->dra && ks_h_dra_allocatable_requested(s->dra, s->cls[i], r->name, req, node, alloc,
                                                   &capacity, &requested)) &&
        !ks_h_allocatable_requested(r->kind, r->name, req, alloc, used, used, &capacity,
                                    &requested))
        return 0;
    if (capacity == 0)
        return 0;
    if (!with_pod) /* allocated = requested - podRequest, undoing the (wrapping) addition */
        requested = (int64_t)((uint64_t)requested - (uint64_t)req);
    *f = (double)requested / (double)capacity;
    if (*f > 1)
        *f = 1;
    return 1;
}

/* Upstream balancedResourceScore over the node's fractions with or without the pod:
 * int64((1 - std) * MaxNodeScore), std = 0 for fewer than two fractions, |f1 - f2| / 2 for two,
 * the population standard deviation for more. Two passes over the resources when there are more
 * than two fractions (the mean first), so that nothing is allocated. */
static int64_t balanced_resource_score(const balanced *b, const prescore_state *s,
                                       const ks_node *node, const ks_resources *alloc,
                                       const ks_resources *used, int with_pod)
{
    double first[2] = {0, 0}, total = 0, f;
    size_t nf = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (!fraction(s, i, &b->res[i], node, alloc, used, with_pod, &f))
            continue;
        if (nf < 2)
            first[nf] = f;
        total += f;
        nf++;
    }
    double std = 0;
    if (nf == 2) {
        std = fabs((first[0] - first[1]) / 2);
    } else if (nf > 2) {
        double mean = total / (double)nf, sum = 0;
        for (size_t i = 0; i < b->n; i++)
            if (fraction(s, i, &b->res[i], node, alloc, used, with_pod, &f))
                sum = sum + (f - mean) * (f - mean);
        std = sqrt(sum / (double)nf);
    }
    return (int64_t)((1 - std) * (double)KS_MAX_NODE_SCORE);
}

/* score: called concurrently for different nodes; the plugin and the PreScore state are
 * read-only here. Upstream balancedResourceScorer (v1.35+): the score rewards the change in
 * balance the pod brings, MaxNodeScore/2 + (MaxNodeScore/2 + withPod - withoutPod) / 2 in Go's
 * truncating int64 division; both scores lie in [50, 100], so the result does too. */
static ks_code balanced_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                              const ks_node_info *ni, int64_t *score, ks_status *st)
{
    const balanced *b = self;
    (void)pod;
    const prescore_state *s = ks_cycle_read(cycle, &prescore_key);
    if (!s) {
        ks_status_reason(st, "reading \"PreScoreNodeResourcesBalancedAllocation\" from "
                             "cycleState: not found");
        return KS_ERROR;
    }
    const ks_resources *alloc = ks_node_allocatable(ks_node_info_node(ni));
    const ks_resources *used = ks_node_info_requested(ni);
    const ks_node *node = ks_node_info_node(ni);
    int64_t with_pod = balanced_resource_score(b, s, node, alloc, used, 1);
    int64_t without_pod = balanced_resource_score(b, s, node, alloc, used, 0);
    const int64_t half = KS_MAX_NODE_SCORE / 2;
    *score = half + (half + with_pod - without_pod) / 2;
    return KS_SUCCESS;
}

/* NodeResourcesBalancedAllocationArgs: upstream SetDefaults_NodeResourcesBalancedAllocationArgs
 * as declared defaults, ValidateNodeResourcesBalancedAllocationArgs below. */
static const ks_arg_field resource_spec_fields[] = {
    {"name", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"weight", KS_ARG_INT64, NULL, "1", KS_ARG_DEFAULT_IF_ZERO, 0, 0},
};
static const ks_args_schema resource_spec = KS_ARGS_SCHEMA(NULL, resource_spec_fields);
static const ks_arg_field balanced_arg_fields[] = {
    {"resources", KS_ARG_OBJECT_LIST, &resource_spec,
     "[{\"name\": \"cpu\", \"weight\": 1}, {\"name\": \"memory\", \"weight\": 1}]",
     KS_ARG_DEFAULT_IF_ZERO, 0, 0},
};
static const ks_args_schema balanced_args_schema =
    KS_ARGS_SCHEMA("NodeResourcesBalancedAllocationArgs", balanced_arg_fields);

/* Names unique (the first repeat is reported), then every weight 1. Main thread, at config load. */
static int balanced_validate_args(const ks_args *args, ks_args_error *err)
{
    size_t n = 0;
    char p[64];
    (void)ks_args_count(args, "resources", &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL, *other = NULL;
        int64_t w = 0;
        snprintf(p, sizeof(p), "resources[%zu].name", i);
        (void)ks_args_get_string(args, p, &name);
        for (size_t j = 0; j < i && name; j++) {
            snprintf(p, sizeof(p), "resources[%zu].name", j);
            other = NULL;
            if (ks_args_get_string(args, p, &other) == 0 && strcmp(name, other) == 0) {
                snprintf(p, sizeof(p), "resources[%zu].name", i);
                return ks_args_fail(err, p, "Duplicate value: \"%s\"", name);
            }
        }
        snprintf(p, sizeof(p), "resources[%zu].weight", i);
        (void)ks_args_get_int(args, p, &w);
        if (w != 1)
            return ks_args_invalid(err, p, "must be 1");
    }
    return 0;
}

/* upstream BalancedAllocation.SignPod: the pod's requests, the same fragment as Fit's; a pod
 * requesting a resource a DeviceClass maps is not signable. */
static ks_code balanced_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    if (ks_h_sign_refuses_dra(pod, st))
        return KS_UNSCHEDULABLE;
    return ks_sign_resources(pod, sig, st);
}

const ks_plugin_desc ks_plugin_node_resources_balanced_allocation = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeResourcesBalancedAllocation",
    .create = balanced_create,
    .destroy = balanced_destroy,
    .pre_score = balanced_pre_score,
    .score = balanced_score,
    .args_schema = &balanced_args_schema,
    .validate_args = balanced_validate_args,
    .sign = balanced_sign,
};
