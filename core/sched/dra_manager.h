/*
 * The scheduler's side of Dynamic Resource Allocation, what upstream calls the SharedDRAManager
 * (pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go) plus the set-up of the
 * structured allocator: the claims' in-flight allocations (made in Reserve, gone once PreBind
 * wrote them or Unreserve dropped them), the allocated state an allocator starts from (every
 * allocated claim of the store and every in-flight one), and the claim writes of PreBind and
 * PostFilter on the in-memory cluster of `kubesched simulate`. The DynamicResources plugin
 * reaches all of it through the host table (ABI 1.10, host_api.c).
 *
 * Threads: every function may run on any thread; the in-flight table has its own mutex, the
 * store its lock.
 */
#ifndef KS_CORE_DRA_MANAGER_H
#define KS_CORE_DRA_MANAGER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"
#include "api/dra_objects.h"
#include "api/store.h"
#include "sched/dra_allocator.h"

typedef struct ks_dra_manager ks_dra_manager;

ks_dra_manager *ks__dra_manager_new(void);
void ks__dra_manager_free(ks_dra_manager *m); /* NULL: no-op */

/* The allocator's answer for a set of claims on one node (the SDK's opaque ks_dra_allocation):
 * holds the slices its strings point into. */
struct ks_dra_allocation {
    ks_dra_alloc_output out;
    size_t nclaims;
    size_t *ndev;                   /* per claim */
    ks_dra_device_result **devs;    /* per claim, in the pool of out */
    struct ks_dra_allocator *owner; /* referenced: its slices and classes back the strings */
};

/* The SDK's opaque ks_dra_allocator: what structured.NewAllocator captured. */
struct ks_dra_allocator {
    ks_dra_alloc_input in;
    ks__draobj **slices, **classes, **rules;
    size_t nslices, nclasses, nrules;
    ks__draobj **claims; /* the allocated claims the state was gathered from */
    size_t nclaims;
    ks_dra_allocated_state state;
    ks_dra_device_ref *devices, *shared;
    ks_dra_device_capacity *capacity;
    ks_mempool pool; /* the state's strings */
    atomic_int refs; /* the cycle's and each allocation's */
    /* The slices by pool (driver and pool name), for a per-node input: a node's Allocate reads the
     * slices of the pools whose slices all name that node, plus every other pool, and the
     * allocated devices of those pools only. The allocator looks no further (it gathers the
     * node's pools from the slices it is given, checks a pool's completeness among the same
     * pool's slices, and asks the allocated state only about the devices of those pools), so
     * the answer is the one the whole input gives, without a hash of every allocated device of
     * the cluster per node. */
    struct dra_pool *pools;
    size_t npools;
    size_t *excl_index; /* the pools' exclusive devices' indexes, one buffer for all */
    size_t *by_node;    /* pool indexes: the nglobal_pools of no single node, then by node */
    size_t nglobal_pools;
};

int ks__dra_claim_pending(ks_dra_manager *m, const char *uid);
int ks__dra_signal_pending(ks_dra_manager *m, const ks_resource_claim *claim,
                           const struct ks_dra_allocation *a, size_t i);
int ks__dra_remove_pending(ks_dra_manager *m, const char *uid);

/* A new allocator over the store's objects now; NULL with err set. Free with
 * ks__dra_allocator_free. */
struct ks_dra_allocator *ks__dra_allocator_new(ks_dra_manager *m, ks_store *st, char *err,
                                               size_t errlen);
void ks__dra_allocator_free(struct ks_dra_allocator *a);
int ks__dra_allocate(struct ks_dra_allocator *a, const ks_node *node,
                     const ks_resource_claim *const *claims, size_t n, int64_t deadline_ns,
                     struct ks_dra_allocation **out, char *err, size_t errlen);
void ks__dra_allocation_free(struct ks_dra_allocation *a);
/* upstream calculateDRAResourceTotals over the allocator's slices and allocated state: how many
 * devices of the node's slices match class_name (capacity) and how many of those are allocated
 * or in flight. 0; KS_EINVAL (both 0) when a selector fails, as upstream counts nothing then;
 * KS_ENOMEM. Any thread. */
int ks__dra_class_device_counts(const struct ks_dra_allocator *a, const ks_node *node,
                                const char *class_name, int64_t *capacity, int64_t *allocated);

/* The claim of the store updated in place of claim: allocation (claim i of a; a NULL: keep the
 * claim's), pod added to reservedFor, the delete-protection finalizer (bind); or allocation and
 * reservedFor cleared (deallocate). The new object replaces the old one in the store; *chg gets
 * the change (references for the caller) on success. */
ks_code ks__dra_claim_bind(ks_store *st, const ks_pod *pod, const ks_resource_claim *claim,
                           const struct ks_dra_allocation *a, size_t i, ks_dra_change *chg,
                           ks_status *stt);
ks_code ks__dra_claim_deallocate(ks_store *st, const ks_resource_claim *claim, ks_dra_change *chg,
                                 ks_status *stt);
/* The pod out of the current claim's reservedFor: KS_SUCCESS with *chg set when it was there,
 * KS_SKIP when it was not (no write), KS_ERROR with the reason. */
ks_code ks__dra_claim_unreserve(ks_store *st, const ks_pod *pod, const ks_resource_claim *claim,
                                ks_dra_change *chg, ks_status *stt);

/* The AllocationResult of one claim's allocation as the API writes it (status.allocation),
 * for cJSON_Delete; NULL when out of memory. */
cJSON *ks__dra_allocation_json(const ks_dra_alloc_result *r);

/* ---- extended resources backed by DRA (dra_extended.c) -------------------------------------
 * upstream DeviceClassResolver.GetDeviceClass: the class resource maps to (its pinned name), or
 * KS_SYM_ABSENT. */
ks_sym ks__dra_extended_resource_class(ks_store *st, ks_sym resource);
/* findExtendedResourceClaim: a reference, or NULL. */
const ks_resource_claim *ks__dra_extended_claim_find(ks_store *st, const ks_pod *pod);
/* The in-memory "<extended-resources>" claim with reqs as its requests (a reference, not in the
 * store), or NULL when out of memory. */
const ks_resource_claim *ks__dra_extended_claim_new(const ks_pod *pod,
                                                    const ks_dra_extended_request *reqs, size_t n);
/* claim filed under a generated name (generateName plus a deterministic suffix); *created and
 * *chg get references for the caller. */
ks_code ks__dra_extended_claim_create(ks_store *st, const ks_pod *pod,
                                      const ks_resource_claim *claim,
                                      const ks_resource_claim **created, ks_dra_change *chg,
                                      ks_status *stt);
/* deleteClaim on the store: the claim removed (*chg gets the change). */
ks_code ks__dra_claim_delete(ks_store *st, const ks_resource_claim *claim, ks_dra_change *chg,
                             ks_status *stt);
/* The pod status merge patch {"status":{"extendedResourceClaimStatus":{...}}}, malloc'd (free),
 * NULL when out of memory. */
char *ks__pod_extended_claim_status_patch(const char *claim_name,
                                          const ks_extended_request_mapping *m, size_t n);

/* ---- live mode (dra_claim_writes.c) ----------------------------------------------------------
 * The same writes against the API server, through the cluster source's claim_request
 * (scheduler.h, whose contract request follows). */
typedef struct ks_dra_claim_io {
    ks_code (*request)(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                       const char *content_type, const char *body, char **out, int *http_status,
                       ks_status *st);
    void *ctx;
} ks_dra_claim_io;

/* upstream bindClaim: the finalizer (an Update), then the allocation (claim i of a; a NULL: the
 * claim is allocated already) and the pod in reservedFor (an UpdateStatus), retried on a
 * conflict from a fresh GET as retry.RetryOnConflict(retry.DefaultRetry); the answer is filed in
 * the store as the assume cache would (*chg gets its change). Upstream's messages. Synchronous:
 * a binding thread. */
ks_code ks__dra_claim_bind_live(const ks_dra_claim_io *io, ks_store *st, const ks_pod *pod,
                                const ks_resource_claim *claim, const struct ks_dra_allocation *a,
                                size_t i, ks_dra_change *chg, ks_status *stt);
/* upstream Unreserve's strategic merge patch deleting the pod's reservedFor entry, when the
 * store's claim is allocated and reserved for the pod (else KS_SKIP, no request). Synchronous. */
ks_code ks__dra_claim_unreserve_live(const ks_dra_claim_io *io, ks_store *st, const ks_pod *pod,
                                     const ks_resource_claim *claim, ks_dra_change *chg,
                                     ks_status *stt);
/* createExtendedResourceClaimInAPI: claim (the in-memory one) POSTed with generateName; the
 * answer filed as the assume cache would (*chg), *created the filed claim (a reference).
 * Upstream's messages. Synchronous: a binding thread. */
ks_code ks__dra_extended_claim_create_live(const ks_dra_claim_io *io, ks_store *st,
                                           const ks_resource_claim *claim,
                                           const ks_resource_claim **created, ks_dra_change *chg,
                                           ks_status *stt);
/* deleteClaim: the finalizer removed with an Update (retried on conflicts from a fresh GET),
 * then DELETE; a claim already gone is no error. Synchronous (the watch brings the deletion). */
ks_code ks__dra_claim_delete_live(const ks_dra_claim_io *io, const ks_resource_claim *claim,
                                  ks_status *stt);
/* PostFilter's deallocation of the cycle's copy of claim (its resourceVersion as the
 * precondition), queued without waiting: KS_SUCCESS once queued. */
ks_code ks__dra_claim_deallocate_live(const ks_dra_claim_io *io, const ks_resource_claim *claim,
                                      ks_status *stt);

#endif
