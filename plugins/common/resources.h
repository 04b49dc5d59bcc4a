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

#endif
