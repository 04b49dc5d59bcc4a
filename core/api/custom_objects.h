/*
 * Objects of the API resources that plugins watch (ks_resource_watch, ABI 1.8): kinds kubesched
 * does not know, such as scheduler-plugins' PodGroup, kept whole as JSON and read through dotted
 * paths.
 *
 * The registry of watched resources is process-wide and append-only: a plugin declares its
 * resource in create() (main thread), the handle stays valid for the life of the process (a
 * plugin created again gets the same one), and readers look entries up without a lock.
 *
 * A ks_custom_store holds the objects of every registered resource for one scheduler: an
 * informer (live) or the cluster file (simulate) applies them; plugins read them from any thread
 * (a rwlock guards the tables; each object handed out carries a reference).
 */
#ifndef KS_CORE_CUSTOM_OBJECTS_H
#define KS_CORE_CUSTOM_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

/* How many resources the process may watch. */
#define KS_MAX_CUSTOM_RESOURCES 32

/* One watched resource. Immutable once registered. */
struct ks_resource {
    int index; /* in the registry; its event resource is KS_RES_CUSTOM_FIRST + index */
    char api_version[128], kind[64], plural[64];
    char path[320]; /* the list/watch path: /apis/<group>/<version>/<plural> */
    /* upstream's custom event resource name, "<plural>.<version>.<group>" (fwk.EventResource as
     * scheduler-plugins registers "podgroups.v1alpha1.scheduling.x-k8s.io"), and the event
     * labels built on it ("...Add", "...Update", "...Delete", "...All"). */
    char event_name[192];
    char labels[4][200];
};

/* An object of a watched resource: immutable, reference-counted. */
struct ks_object {
    _Atomic int refs;
    const struct ks_resource *res;
    cJSON *json;
    char *text; /* compact JSON, printed once */
    ks_sym ns, name;
};

/* Registers (or finds) the resource. NULL with msg filled when an argument is malformed or the
 * registry is full. Main thread. */
const struct ks_resource *ks__custom_register(const char *api_version, const char *kind,
                                              const char *plural, char *msg, size_t msglen);
/* The registered resource of apiVersion/kind, or NULL. Any thread. */
const struct ks_resource *ks__custom_find(const char *api_version, const char *kind);
/* The registered resource at index, or NULL; how many are registered. Any thread. */
const struct ks_resource *ks__custom_at(size_t index);
size_t ks__custom_count(void);
/* upstream ClusterEvent.Label() for an event of a watched resource ("" when ev is not one). */
const char *ks__custom_event_label(ks_event_resource res, uint32_t actions);

void ks__object_ref(const struct ks_object *o);   /* NULL: no-op */
void ks__object_unref(const struct ks_object *o); /* NULL: no-op; frees at zero */
/* The JSON value under root at a dotted path with [i] for array items and ["key"] for a key
 * that has dots ("spec.minMember", "containers[0].name", "spec.minResources[\"nvidia.com/gpu\"]"),
 * or NULL when any step is missing. */
const cJSON *ks__json_path(const cJSON *root, const char *path);
/* The JSON value at a dotted path ("spec.minResources.cpu", "items[2].name"), or NULL. */
const cJSON *ks__object_at(const struct ks_object *o, const char *path);

typedef struct ks_custom_store ks_custom_store;
ks_custom_store *ks__custom_store_new(void);
void ks__custom_store_free(ks_custom_store *cs); /* NULL: no-op */
/* Files obj (a deep copy is kept) as an object of res, replacing the one of the same namespace
 * and name, or removes it (deleted != 0). *old_obj / *new_obj (each may be NULL) receive
 * references to the replaced or removed object and to the filed one (NULL where there is none).
 * 0, KS_EPARSE (no metadata.name) with msg, KS_ENOMEM. Any thread. */
int ks__custom_store_apply(ks_custom_store *cs, const struct ks_resource *res, const cJSON *obj,
                           int deleted, const struct ks_object **old_obj,
                           const struct ks_object **new_obj, char *msg, size_t msglen);
/* The object ns/name of res with a reference for the caller, or NULL. Any thread. */
const struct ks_object *ks__custom_store_get(ks_custom_store *cs, const struct ks_resource *res,
                                             ks_sym ns, ks_sym name);
/* How many objects of res the store holds. */
size_t ks__custom_store_count(ks_custom_store *cs, const struct ks_resource *res);

#endif
