/*
 * The structured DRA allocator: which devices of which ResourceSlices a set of ResourceClaims get
 * on one node. A port of k8s.io/dynamic-resource-allocation v0.37.2 structured/internal/incubating
 * (the implementation structured.NewAllocator picks at v1.37.2's default feature gates: it is the
 * first whose supported features cover AdminAccess, PrioritizedList, PartitionableDevices,
 * DeviceTaints, DeviceBindingAndStatus, ConsumableCapacity and FractionalCapacityRange; "stable"
 * lacks the last three).
 *
 * Same search as upstream: pools gathered for the node and sorted by driver and pool name (pools
 * whose devices have binding conditions last), slices by name, devices in slice order; claims,
 * requests, subrequests and devices are tried depth first and the first full solution wins. The
 * errors are upstream's, word for word (klog.KObj(claim) renders "namespace/name", or "name"
 * without a namespace).
 *
 * Quantities (capacities, counters, consumed capacity) are summed and compared exactly as 128-bit
 * milli-units parsed from their text (upstream's arbitrary-precision Quantity differs only below a
 * milli-unit, where both round up, or beyond 1.7e35); the integer and milli paths of consumable
 * capacity's range rounding keep upstream's int64 limits and errors.
 *
 * Not here: the DynamicResources plugin (plugins/dynamicresources: claims of a pod, Reserve) and
 * the in-flight allocations with the ks_dra_allocated_state built from the allocated and in-flight
 * claims (sched/dra_manager.c), which calls ks_dra_allocate per node. Nor upstream's "stable"
 * implementation, which structured.NewAllocator picks instead when both DRAConsumableCapacity and
 * DRADeviceBindingConditions are turned off (its search differs); nor the "experimental" one (alpha
 * gates: list-type attributes, compatibility groups, derived attributes, optional node operations).
 * Known wording gaps: a node selector that does not parse (refused by API validation) just does not
 * match here instead of failing the attempt; an attribute's invalid semver reads "parse semantic
 * version: invalid version" instead of blang/semver's text; CEL syntax errors word ANTLR's
 * expected-token set differently (core/cel).
 *
 * Threads: a ks_dra_cel_cache is shared by any number of threads (a mutex around its table);
 * ks_dra_allocate may run on many threads at once with the same inputs (it only reads them).
 */
#ifndef KS_CORE_DRA_ALLOCATOR_H
#define KS_CORE_DRA_ALLOCATOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/dra_objects.h"
#include "api/objects.h"
#include "util/mempool.h"

/* structured.Features: what the allocator may do. ks_dra_features_default() gives what
 * kube-scheduler v1.37.2 passes with its default feature gates: all true but
 * fractional_capacity_range (DRAFractionalCapacityRange is on at 1.37 only with
 * --min-compatibility-version>=1.37; the default minimum is 1.36). */
typedef struct ks_dra_features {
    bool admin_access, prioritized_list, partitionable_devices, device_taints,
        device_binding_and_status, consumable_capacity, fractional_capacity_range;
} ks_dra_features;

ks_dra_features ks_dra_features_default(void);

/* Compiled CEL selectors by expression text, compiled once (errors too) and kept until freed. */
typedef struct ks_dra_cel_cache ks_dra_cel_cache;
ks_dra_cel_cache *ks_dra_cel_cache_new(void);
void ks_dra_cel_cache_free(ks_dra_cel_cache *c);

/* A device by driver, pool and device name (borrowed strings). */
typedef struct ks_dra_device_ref {
    const char *driver, *pool, *device;
} ks_dra_device_ref;

/* One capacity consumed from a device (name as written, milli-units). In results, milli saturates
 * at the int64 limits and text is the exact amount as a quantity ("2", "1500m",
 * "1000000000000000000000"); as input, text is not read. */
typedef struct ks_dra_capacity_amount {
    const char *name;
    int64_t milli;
    const char *text;
} ks_dra_capacity_amount;

/* A device's consumed capacity summed over its shares (AllocatedState.AggregatedCapacity);
 * several entries for one device add up. */
typedef struct ks_dra_device_capacity {
    ks_dra_device_ref id;
    size_t namounts;
    const ks_dra_capacity_amount *amounts;
} ks_dra_device_capacity;

/* schedulerapi.AllocatedState: what claims other than those being allocated hold (allocated in
 * the API or in flight). devices: allocated exclusively; shared: devices with at least one share
 * (allowMultipleAllocations; the share IDs do not matter to the search); capacity: their
 * aggregated consumed capacity. Borrowed for the call. */
typedef struct ks_dra_allocated_state {
    size_t ndevices;
    const ks_dra_device_ref *devices;
    size_t nshared;
    const ks_dra_device_ref *shared;
    size_t ncapacity;
    const ks_dra_device_capacity *capacity;
} ks_dra_allocated_state;

/* Everything one Allocate reads. All borrowed for the call. */
typedef struct ks_dra_alloc_input {
    ks_dra_features features;
    const ks_node *node;
    const ks_resource_slice *const *slices; /* all slices in the cluster (any order) */
    size_t nslices;
    const ks_device_class *const *classes; /* all device classes, looked up by name */
    size_t nclasses;
    /* DeviceTaintRules: a rule's taint applies to the devices its selector names, as the plugin's
     * device tracker patches them into the slices upstream. */
    const ks_device_taint_rule *const *taint_rules;
    size_t ntaint_rules;
    const ks_dra_allocated_state *allocated; /* NULL: nothing allocated */
    ks_dra_cel_cache *cel;
    /* The context upstream's Allocate checks on every step (the plugin's filterTimeout, a cycle
     * given up): the search stops with KS_DRA_ERROR "filter operation aborted: context deadline
     * exceeded" once CLOCK_MONOTONIC reaches deadline_ns (0: none), or "filter operation aborted:
     * context canceled" once *cancelled is nonzero (NULL: never). */
    int64_t deadline_ns;
    const atomic_int *cancelled;
    /* Share IDs for allowMultipleAllocations devices: NULL draws random version-4 UUIDs (as
     * uuid.NewUUID upstream); tests pass a fixed one. */
    const char *fixed_share_id;
} ks_dra_alloc_input;

/* One allocated device (DeviceRequestAllocationResult). Strings live in the result's pool or
 * point into the input objects (which must outlive the result). */
typedef struct ks_dra_alloc_device {
    const char *request; /* "req" or "req/subreq" */
    const char *driver, *pool, *device;
    bool admin_access;    /* adminAccess: true (absent otherwise) */
    const char *share_id; /* NULL when absent */
    uint32_t ntolerations;
    const ks_dra_toleration *tolerations; /* the (sub)request's */
    uint32_t nbinding_conditions, nbinding_failure_conditions;
    const char *const *binding_conditions;
    const char *const *binding_failure_conditions;
    uint32_t nconsumed; /* consumedCapacity (allowMultipleAllocations devices) */
    const ks_dra_capacity_amount *consumed;
} ks_dra_alloc_device;

typedef struct ks_dra_alloc_config {
    bool from_class; /* source FromClass, else FromClaim */
    uint32_t nrequests;
    const char *const *requests; /* none: all requests */
    const char *driver, *parameters;
} ks_dra_alloc_config;

/* One claim's AllocationResult. node_selector: NULL (any node) or one term. */
typedef struct ks_dra_alloc_result {
    uint32_t ndevices;
    ks_dra_alloc_device *devices;
    uint32_t nconfig;
    ks_dra_alloc_config *config;
    const ks_node_selector_term *node_selector;
} ks_dra_alloc_result;

typedef enum ks_dra_alloc_status {
    KS_DRA_ALLOCATED = 0,  /* results[i] for each claim */
    KS_DRA_UNSUITABLE = 1, /* no solution on this node (upstream's nil, nil) */
    KS_DRA_NODE_ERROR = 2, /* only this node fails (ErrFailedAllocationOnNode): err says why */
    KS_DRA_ERROR = 3,      /* fatal for the scheduling attempt (bad input, CEL runtime error) */
} ks_dra_alloc_status;

/* The outcome; the caller owns it: ks_dra_alloc_output_free (pool holds all of it). */
typedef struct ks_dra_alloc_output {
    ks_dra_alloc_status status;
    char err[1024];
    size_t nresults;
    ks_dra_alloc_result *results; /* one per claim, in the claims' order (KS_DRA_ALLOCATED) */
    uint64_t allocate_one_calls;  /* the search's steps (Stats.NumAllocateOneInvocations) */
    ks_mempool pool;
} ks_dra_alloc_output;

/* Allocates claims (none of them allocated yet) on in->node. Returns 0 and fills *out (free it
 * with ks_dra_alloc_output_free whatever its status), or KS_ENOMEM. Thread: any. */
int ks_dra_allocate(const ks_dra_alloc_input *in, const ks_resource_claim *const *claims,
                    size_t nclaims, ks_dra_alloc_output *out);
void ks_dra_alloc_output_free(ks_dra_alloc_output *out);

/* structured.NodeMatches: nodeName, allNodes or a node selector, as a slice or device says. */
bool ks_dra_node_matches(const ks_node *node, const ks_dra_node_selection *sel);

/* upstream resourceAllocationScorer.deviceMatchesClass: whether device d of slice matches every
 * CEL selector of cls (NodeResourcesFit's scoring of extended resources backed by DRA): 1, 0, or
 * -1 when a selector does not compile or fails at run time (upstream logs it and counts the
 * node's resource as 0). Any thread. */
int ks_dra_device_matches_class(ks_dra_cel_cache *cel, const ks_resource_slice *slice,
                                const ks_dra_device *d, const ks_device_class *cls);

#endif
