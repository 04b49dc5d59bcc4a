/*
 * Resource-name classes shared by the resource plugins (NodeResourcesFit,
 * NodeResourcesBalancedAllocation), as upstream's v1helper and schedutil define them.
 * Header-only, SDK only: name classes used when args are read, and the per-node lookup both
 * scorers share (upstream resourceAllocationScorer.calculateResourceAllocatableRequest).
 */
#ifndef KS_PLUGINS_COMMON_RESOURCES_H
#define KS_PLUGINS_COMMON_RESOURCES_H

#include <stdint.h>
#include <string.h>

#include "kubesched/plugin.h"

/* Upstream v1helper.IsExtendedResourceName: has a '/', is not a kubernetes.io/ native resource and
 * not a quota "requests." name. Only extended resources can be ignored by NodeResourcesFit args. */
static inline int ks_h_is_extended_resource(const char *name)
{
    return strchr(name, '/') != NULL && strstr(name, "kubernetes.io/") == NULL &&
           strncmp(name, "requests.", 9) != 0;
}

/* Upstream schedutil.IsScalarResourceName: extended, hugepages-*, kubernetes.io/ prefixed native or
 * attachable-volumes-*. Only these enter framework.Resource's scalar map; a pod request for any
 * other name is neither filtered nor scored. */
static inline int ks_h_is_scalar_resource(const char *name)
{
    return ks_h_is_extended_resource(name) || strncmp(name, "hugepages-", 10) == 0 ||
           strstr(name, "kubernetes.io/") != NULL || strncmp(name, "attachable-volumes-", 19) == 0;
}

/* How a configured resource name is scored. KS_H_RES_OTHER: a name framework.Resource never holds
 * (neither native nor scalar): never scored. "pods" has its own kind (BalancedAllocation reads the
 * pod count); no scorer takes it from the node. */
typedef enum ks_h_res_kind {
    KS_H_RES_CPU,
    KS_H_RES_MEMORY,
    KS_H_RES_EPHEMERAL,
    KS_H_RES_SCALAR,
    KS_H_RES_PODS,
    KS_H_RES_OTHER
} ks_h_res_kind;

static inline ks_h_res_kind ks_h_resource_kind(const char *name)
{
    if (strcmp(name, "cpu") == 0)
        return KS_H_RES_CPU;
    if (strcmp(name, "memory") == 0)
        return KS_H_RES_MEMORY;
    if (strcmp(name, "ephemeral-storage") == 0)
        return KS_H_RES_EPHEMERAL;
    if (strcmp(name, "pods") == 0)
        return KS_H_RES_PODS;
    return ks_h_is_scalar_resource(name) ? KS_H_RES_SCALAR : KS_H_RES_OTHER;
}

/* Go's int64 addition wraps; do the same without C's undefined behaviour. */
static inline int64_t ks_h_wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Upstream calculateResourceAllocatableRequest for one resource on one node: *capacity is the
 * node's allocatable, *requested what the node has plus req (the pod's request). For cpu and
 * memory the node's side is cpu_mem_used: its Requested (BalancedAllocation, useRequested) or
 * NonZeroRequested (NodeResourcesFit); other resources always use used. Returns 0 when the
 * resource takes no part in the score (a scalar the pod does not request, "pods", another name). */
static inline int ks_h_allocatable_requested(ks_h_res_kind kind, ks_sym name, int64_t req,
                                             const ks_resources *alloc,
                                             const ks_resources *cpu_mem_used,
                                             const ks_resources *used, int64_t *capacity,
                                             int64_t *requested)
{
    switch (kind) {
    case KS_H_RES_CPU:
        *capacity = alloc->milli_cpu;
        *requested = ks_h_wrap_add(cpu_mem_used->milli_cpu, req);
        return 1;
    case KS_H_RES_MEMORY:
        *capacity = alloc->memory;
        *requested = ks_h_wrap_add(cpu_mem_used->memory, req);
        return 1;
    case KS_H_RES_EPHEMERAL:
        *capacity = alloc->ephemeral_storage;
        *requested = ks_h_wrap_add(used->ephemeral_storage, req);
        return 1;
    case KS_H_RES_SCALAR:
        if (req == 0)
            return 0;
        *capacity = ks_resources_scalar(alloc, name);
        *requested = ks_h_wrap_add(ks_resources_scalar(used, name), req);
        return 1;
    default:
        return 0;
    }
}

/* Whether a DeviceClass maps the resource (upstream shouldDelegateResourceToDRA's class lookup,
 * IsDRAExtendedResourceName first: DRAExtendedResource is GA and locked on in v1.37). cycle may
 * be NULL (hints, signatures). Looks the classes up: PreFilter, PreScore, hints, not per node. */
static inline int ks_h_dra_mapped(ks_cycle *cycle, ks_sym name)
{
    const char *n = ks_sym_str(name);
    if (!n || !KS_HOST_HAS(dra_extended_resource_class))
        return 0;
    if (!ks_h_is_extended_resource(n) && strncmp(n, "deviceclass.resource.kubernetes.io/", 35) != 0)
        return 0; /* GetDeviceClass knows no other names */
    return ks_dra_extended_resource_class(cycle, name) != KS_SYM_ABSENT;
}

/* The scorers' SignPod refusal: 1 with the status set when the pod requests a resource a
 * DeviceClass maps. Any thread. */
static inline int ks_h_sign_refuses_dra(const ks_pod *pod, ks_status *st)
{
    const ks_resources *req = ks_pod_requests(pod);
    for (uint32_t i = 0; i < req->nscalar; i++)
        if (req->scalar[i].value != 0 && ks_h_dra_mapped(NULL, req->scalar[i].name)) {
            ks_status_reason(st, "signature disabled when dra extended resources are used in the "
                                 "cluster");
            return 1;
        }
    return 0;
}

/* calculateDRAExtendedResourceAllocatableRequest: for a resource the node's allocatable lacks
 * (0) and that class cls maps, the node's devices of the class as capacity and the allocated ones
 * as requested (plus req): 1 when the node has any, else 0 (the plain lookup applies). */
static inline int ks_h_dra_allocatable_requested(ks_dra_allocator *dra, ks_sym cls, ks_sym name,
                                                 int64_t req, const ks_node *node,
                                                 const ks_resources *alloc, int64_t *capacity,
                                                 int64_t *requested)
{
    int64_t cap, taken;
    if (!dra || cls == KS_SYM_ABSENT || req == 0 || ks_resources_scalar(alloc, name) != 0)
        return 0;
    if (ks_dra_class_device_counts(dra, node, cls, &cap, &taken) != 0 || cap <= 0)
        return 0;
    *capacity = cap;
    *requested = ks_h_wrap_add(taken, req);
    return 1;
}

#endif
