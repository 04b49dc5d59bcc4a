/*
 * Upstream's gang scheduling objects (KEP-4671, GenericWorkload gate, v1.37): the
 * scheduling.k8s.io/v1beta1 PodGroup as a compact struct converted once from its JSON, and the
 * store a scheduler keeps of them together with each group's member pods (upstream's cache
 * podGroupStates: allPods, unscheduled, assumed and assigned).
 *
 * A PodGroup is the SDK's ks_pod_group_view behind a reference count, its key, its memory (one
 * mempool) and the counted symbols it holds (intern.h). Immutable after parsing, so any thread
 * may read one; an update replaces it, and whoever holds a reference (the store, a plugin that
 * looked it up, a queued event) keeps the old one valid until it lets go.
 *
 * Two reading modes, as for the other kinds: ks__podgroup_from_json reads what the API server
 * stored (lenient); ks__podgroup_from_json_checked reads a cluster file for `kubesched simulate`
 * and also refuses what the API server's declarative validation refuses for the fields read here
 * (spec.schedulingPolicy: exactly one of basic/gang; gang.minCount required and >= 1), with its
 * field.Error wording. Decode errors (a wrong type) are refused either way.
 *
 * Threads: parsing on any thread; objects: any thread; the store: any thread (an rwlock guards
 * the objects, a mutex the members; neither is held while a caller's function runs).
 */
#ifndef KS_CORE_PODGROUP_OBJECTS_H
#define KS_CORE_PODGROUP_OBJECTS_H

#include <stdatomic.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/intern.h"
#include "api/objects.h"
#include "util/mempool.h"

struct ks_pod_group {
    atomic_int refs;
    char *key; /* "namespace/name" (pool) */
    ks_pod_group_view v;
    ks_mempool pool;  /* every string of the object */
    ks__symrefs syms; /* the counted symbols it holds */
};

/* Whether obj is a PodGroup of scheduling.k8s.io/v1beta1 (apiVersion and kind). */
int ks__podgroup_is(const cJSON *obj);

/* Parses obj into a new PodGroup (refs = 1). KS_EPARSE with a message naming the field
 * ("spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to
 * 1"), KS_ENOMEM. */
int ks__podgroup_from_json(const cJSON *obj, ks_pod_group **out, char *err, size_t errlen);
int ks__podgroup_from_json_checked(const cJSON *obj, ks_pod_group **out, char *err, size_t errlen);

/* Reference counting; unref frees at zero; NULL is a no-op for both. Any thread. */
ks_pod_group *ks__podgroup_ref(const ks_pod_group *pg);
void ks__podgroup_unref(const ks_pod_group *pg);

/* ---- the store ------------------------------------------------------------------------------ */

typedef struct ks_podgroup_store ks_podgroup_store;

ks_podgroup_store *ks__podgroup_store_new(void);
void ks__podgroup_store_free(ks_podgroup_store *st); /* NULL: no-op */

/* Files obj (parsed in the given mode) replacing the PodGroup of the same namespace and name, or
 * removes it (deleted != 0). *old_pg / *new_pg (each may be NULL) receive references to the
 * replaced or removed object and to the filed one (NULL where there is none; both NULL for the
 * delete of an object the store did not have). 0, KS_EPARSE with msg, KS_ENOMEM. */
int ks__podgroup_store_apply(ks_podgroup_store *st, const cJSON *obj, int deleted, int checked,
                             ks_pod_group **old_pg, ks_pod_group **new_pg, char *msg,
                             size_t msglen);
/* The PodGroup ns/name with a reference for the caller, or NULL. */
ks_pod_group *ks__podgroup_store_get(ks_podgroup_store *st, ks_sym ns, ks_sym name);
size_t ks__podgroup_store_count(ks_podgroup_store *st);

/* The members (upstream's cache AddPodGroupMember / UpdatePodGroupMember / RemovePodGroupMember,
 * assumePodGroupMember / forgetPodGroupMember). A pod that names no group
 * (scheduling_group KS_SYM_ABSENT) is ignored by each. add: a pod the scheduler now knows (a
 * pending pod of one of its profiles, or a pod on a node: assigned); update: the pod's new object
 * (assigned once it has a node); remove: by the pod's uid; assume: the assumed copy (its node
 * set) of a member, which becomes assumed until forget or its bound update; forget: back to
 * unscheduled. The store holds a reference to each pod it lists. */
void ks__podgroup_member_add(ks_podgroup_store *st, ks_pod *pod);
void ks__podgroup_member_update(ks_podgroup_store *st, ks_pod *old_pod, ks_pod *new_pod);
void ks__podgroup_member_remove(ks_podgroup_store *st, const ks_pod *pod);
void ks__podgroup_member_assume(ks_podgroup_store *st, ks_pod *assumed);
void ks__podgroup_member_forget(ks_podgroup_store *st, const ks_pod *pod);

/* fn for each member of ns/name with its state (outside the store's locks: the list is copied
 * first, each pod with a reference held for the call). Returns the count. */
size_t ks__podgroup_members_each(ks_podgroup_store *st, ks_sym ns, ks_sym name,
                                 ks_pod_group_member_fn fn, void *ctx);
/* The members' count and how many of them are assumed or assigned, under the member lock only
 * (no reference taken): ks_host_api.pod_group_member_counts. all, scheduled: NULL allowed. */
void ks__podgroup_member_counts(ks_podgroup_store *st, ks_sym ns, ks_sym name, size_t *all,
                                size_t *scheduled);

#endif
