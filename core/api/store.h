/*
 * The store of other kinds the plugins read: Namespaces (labels, for namespaceSelector),
 * Services, ReplicationControllers, ReplicaSets and StatefulSets (the selectors behind
 * PodTopologySpread's system default constraints), PodDisruptionBudgets (preemption).
 *
 * The storage kinds (volume_objects.h) and the DRA kinds (dra_objects.h) are kept as reference
 * counted objects, indexed for the plugins' lookups.
 *
 * Objects are parsed once when they arrive. Threads: any thread may apply or read; a rwlock
 * guards the tables; selectors handed out stay valid until the store is freed (an object that is
 * replaced or deleted keeps its memory until then: these kinds change rarely).
 */
#ifndef KS_CORE_STORE_H
#define KS_CORE_STORE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/dra_objects.h"
#include "api/volume_objects.h"

typedef struct ks_store ks_store;

ks_store *ks__store_new(void);
void ks__store_free(ks_store *st);

/* Whether kubesched keeps objects of this kind ("Namespace", "Service", ...). */
int ks__store_wants(const char *kind);
/* Adds or replaces (deleted == 0) or removes (deleted != 0) obj. KS_EPARSE with a field path.
 * The storage kinds (volume_objects.h) are read leniently, as the API server stored them. */
int ks__store_apply(ks_store *st, const cJSON *obj, int deleted, char *err, size_t errlen);

/* What an apply changed, for the storage kinds (the queue's events carry both objects): the
 * object it replaced or removed and the one now filed, each a reference the caller releases with
 * ks__volobj_unref (NULL where there is none: old of an add, new of a delete). For other kinds
 * both stay NULL. */
typedef struct ks_store_change {
    ks__volobj *old_obj, *new_obj;
} ks_store_change;

/* ks__store_apply with the reading mode (checked: a cluster file's object, volume_objects.h) and
 * the change; chg may be NULL. */
int ks__store_apply_ex(ks_store *st, const cJSON *obj, int deleted, int checked,
                       ks_store_change *chg, char *err, size_t errlen);

/* The API server's PATCH with a JSON merge patch (merge_patch.h) of the storage object of kind
 * k named ns/name (ns ignored for the cluster-scoped kinds): a metadata.resourceVersion in the
 * patch must equal the object's (else the API server's Conflict); the patched object gets the
 * resourceVersion after max(its own, *last_rv), which *last_rv and rv (KS_RESOURCE_VERSION_MAX
 * bytes) receive, and is filed as ks__store_apply_ex files it (chg as there). 0; KS_ENOTFOUND,
 * KS_EEXIST (the conflict), KS_EINVAL (a patch that changes the name) or KS_EPARSE (what it
 * makes is refused), with the API server's message in msg; KS_ENOMEM. Callers serialise their
 * patches (the read-modify-write is not atomic across threads). */
int ks__store_patch(ks_store *st, ks_vol_kind k, ks_sym ns, ks_sym name, const cJSON *patch,
                    uint64_t *last_rv, char *rv, ks_store_change *chg, char *msg, size_t msglen);

/* The storage object of kind k filed under key ("name", or "namespace/name" for claims and
 * capacities) with a reference for the caller (ks__volobj_unref), or NULL. Any thread. */
ks__volobj *ks__store_volobj(ks_store *st, ks_vol_kind k, const char *key);
/* The same by symbols: ns is ignored for the cluster-scoped kinds. */
ks__volobj *ks__store_volobj_sym(ks_store *st, ks_vol_kind k, ks_sym ns, ks_sym name);
/* Every object of kind k whose filter accepts it (filter NULL: all), ordered by key, each with a
 * reference for the caller: *out is a malloc'd array the caller frees after unref'ing each.
 * Returns the count (0 with *out NULL when none or out of memory). */
size_t ks__store_volobjs(ks_store *st, ks_vol_kind k, int (*filter)(const ks__volobj *, void *),
                         void *ctx, ks__volobj ***out);
/* How many objects of kind k the store holds. */
size_t ks__store_volobj_count(ks_store *st, ks_vol_kind k);

/* The VolumeAttachments whose spec.nodeName is node (upstream's indexer by node), as
 * ks__store_volobjs: ordered by key, each with a reference, *out malloc'd. O(the node's). */
size_t ks__store_volume_attachments_on(ks_store *st, ks_sym node, ks__volobj ***out);

int ks__store_namespace_labels(ks_store *st, ks_sym ns, const ks_label **out, size_t *n);
/* Selectors of the Services, RCs, RSs and StatefulSets in ns whose selector matches labels. Fills
 * at most cap entries of out; returns how many match. */
size_t ks__store_owner_selectors(ks_store *st, ks_sym ns, const ks_label *labels, size_t nlabels,
                                 ks_label_selector *out, size_t cap);

typedef struct ks_pdb {
    ks_sym ns, name;
    ks_label_selector selector;
    int32_t disruptions_allowed; /* status.disruptionsAllowed */
    uint32_t ndisrupted;         /* status.disruptedPods names */
    const ks_sym *disrupted;
} ks_pdb;
/* The PDBs (a snapshot copy of the structs; selectors borrowed). Caller frees the array. */
size_t ks__store_pdbs(ks_store *st, ks_pdb **out);

/* ---- DRA kinds (dra_objects.h) ------------------------------------------------------------ */

/* What an apply of a DRA object changed: as ks_store_change, with DRA objects. ks__store_apply
 * and ks__store_apply_ex file DRA objects too, but give no change record for them (their callers
 * release storage objects only); callers that turn DRA changes into events use this. */
typedef struct ks_dra_change {
    ks__draobj *old_obj, *new_obj;
} ks_dra_change;

/* Files (deleted == 0) or removes obj, a ResourceSlice, DeviceClass, ResourceClaim or
 * DeviceTaintRule, read in the given mode (checked: a cluster file's object); chg may be NULL,
 * else it receives references the caller releases with ks__draobj_unref. KS_EINVAL when obj is
 * of another kind; KS_EPARSE with a field path; KS_ENOMEM. Any thread. */
int ks__store_apply_dra(ks_store *st, const cJSON *obj, int deleted, int checked,
                        ks_dra_change *chg, char *err, size_t errlen);

/* As ks__store_apply_dra (filed, unchecked), the way upstream's assume cache files a
 * ResourceClaim in live mode: only when obj's resourceVersion is newer (as an integer) than the
 * filed object's. So the informer's copy of what the scheduler's own write replaced, arriving
 * after the write's answer was filed, does not take back the allocation that answer holds. An
 * older or equal version is skipped: 0 with chg empty. Any thread. */
int ks__store_assume_dra(ks_store *st, const cJSON *obj, ks_dra_change *chg, char *err,
                         size_t errlen);

/* The DRA object of kind k filed under key ("name", or "namespace/name" for claims), with a
 * reference for the caller (ks__draobj_unref), or NULL. Any thread. */
ks__draobj *ks__store_draobj(ks_store *st, ks_dra_kind k, const char *key);
/* The same by symbols: ns is ignored for the cluster-scoped kinds (all but claims). */
ks__draobj *ks__store_draobj_sym(ks_store *st, ks_dra_kind k, ks_sym ns, ks_sym name);
/* Every object of kind k whose filter accepts it (filter NULL: all), ordered by key, each with a
 * reference: *out is a malloc'd array the caller frees after unref'ing each. Returns the count
 * (0 with *out NULL when none or out of memory). */
size_t ks__store_draobjs(ks_store *st, ks_dra_kind k, int (*filter)(const ks__draobj *, void *),
                         void *ctx, ks__draobj ***out);
size_t ks__store_draobj_count(ks_store *st, ks_dra_kind k);
/* As ks__store_draobjs without a filter, in no particular order: for callers that build a set
 * (the allocated devices of every claim), which need not pay for sorting every claim per cycle. */
size_t ks__store_draobjs_unordered(ks_store *st, ks_dra_kind k, ks__draobj ***out);

/* The ResourceSlices whose spec.nodeName is node (upstream's slice tracker indexes by node
 * name); node KS_SYM_EMPTY: those without a nodeName (nodeSelector, allNodes,
 * perDeviceNodeSelection), which a plugin must consider for every node. As ks__store_draobjs:
 * ordered by key, each with a reference, *out malloc'd. O(the node's slices). */
size_t ks__store_dra_slices_on(ks_store *st, ks_sym node, ks__draobj ***out);
/* The ResourceSlices of one pool (spec.driver, spec.pool.name), every generation, as above. */
size_t ks__store_dra_slices_in_pool(ks_store *st, const char *driver, const char *pool,
                                    ks__draobj ***out);

/* Around a fork() whose child may read the store (process isolation, sched/isolation.c): prepare
 * holds a read lock so that no writer is inside at the fork; after releases it, in the parent and
 * in the child alike. */
void ks__store_fork_prepare(ks_store *st);
void ks__store_fork_after(ks_store *st);

#endif
