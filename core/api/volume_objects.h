/*
 * The storage kinds the volume plugins read, as compact structs converted once from their JSON
 * when they arrive: PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver and
 * CSIStorageCapacity, VolumeAttachment; and the pod's spec.volumes (ks_pod_volume, kept in the
 * ks_pod).
 *
 * Each object is the SDK's view struct (ks_pv_view, ...) behind a common header: a reference
 * count, the key the store files it under, its memory (one mempool: every array and string of
 * the view) and the counted symbols it holds (intern.h). Objects are immutable after parsing, so
 * any thread may read them; an update replaces the object, and whoever holds a reference (the
 * store, a cycle that looked it up, a queued event) keeps the old one valid until it lets go.
 *
 * Two modes, as for pods and nodes (objects.h): ks__volobj_from_json reads what the API server
 * stored (lenient: defensive readings, no value rules); ks__volobj_from_json_checked reads cluster
 * files for `kubesched simulate`: it also applies the API server's defaults that change what the
 * scheduler sees (a StorageClass without volumeBindingMode is Immediate, a CSIDriver without
 * attachRequired requires attach) and refuses what its validation refuses
 * (ValidatePersistentVolume, ValidatePersistentVolumeClaim, ... for the fields read here), with
 * upstream's field.Error wording and the field path. Decode errors (a wrong type, a malformed
 * quantity) are refused either way.
 *
 * Threads: parsing on any thread (no shared state but the symbol table); objects: any thread.
 */
#ifndef KS_CORE_VOLUME_OBJECTS_H
#define KS_CORE_VOLUME_OBJECTS_H

#include <stdatomic.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/intern.h"
#include "util/mempool.h"

typedef enum ks_vol_kind {
    KS_VK_PV = 0,
    KS_VK_PVC,
    KS_VK_STORAGE_CLASS,
    KS_VK_CSI_NODE,
    KS_VK_CSI_DRIVER,
    KS_VK_CSI_STORAGE_CAPACITY,
    KS_VK_VOLUME_ATTACHMENT, /* ABI 1.6: NodeVolumeLimits counts the node's attachments */
    KS_VK_COUNT
} ks_vol_kind;

/* The header every storage object starts with. */
typedef struct ks__volobj {
    atomic_int refs;
    ks_vol_kind kind;
    ks_sym ns, name;        /* ns: KS_SYM_EMPTY for the cluster-scoped kinds */
    char *key;              /* "name" or "namespace/name" (pool) */
    char *uid;              /* metadata.uid, "" when absent (pool) */
    char *resource_version; /* (pool) */
    char *json;             /* compact JSON of the whole object (malloc'd) */
    ks_mempool pool;        /* every array and string of the object */
    ks__symrefs syms;       /* the counted symbols it holds */
} ks__volobj;

struct ks_pv {
    ks__volobj h;
    ks_pv_view v;
};
struct ks_pvc {
    ks__volobj h;
    ks_pvc_view v;
};
struct ks_storage_class {
    ks__volobj h;
    ks_storage_class_view v;
};
struct ks_csi_node {
    ks__volobj h;
    ks_csi_node_view v;
};
struct ks_csi_driver {
    ks__volobj h;
    ks_csi_driver_view v;
};
struct ks_csi_storage_capacity {
    ks__volobj h;
    ks_csi_storage_capacity_view v;
};
struct ks_volume_attachment {
    ks__volobj h;
    ks_volume_attachment_view v;
};

/* The kind named by an object's `kind` ("PersistentVolume", ...), or -1. */
int ks__volobj_kind(const char *kind);
/* The API kind name of k ("PersistentVolumeClaim"). */
const char *ks__volobj_kind_name(ks_vol_kind k);
/* Whether objects of kind k live in a namespace (claims and capacities). */
int ks__volobj_namespaced(ks_vol_kind k);

/* Parses obj, whose kind is one of the seven, into a new object (refs = 1). KS_EPARSE with a
 * message naming the field ("spec.capacity.storage: invalid quantity \"abc\""), KS_EINVAL when
 * obj is of no such kind, KS_ENOMEM. */
int ks__volobj_from_json(const cJSON *obj, ks__volobj **out, char *err, size_t errlen);
int ks__volobj_from_json_checked(const cJSON *obj, ks__volobj **out, char *err, size_t errlen);

/* Reference counting; unref frees at zero; NULL is a no-op for both. Any thread. */
ks__volobj *ks__volobj_ref(ks__volobj *o);
void ks__volobj_unref(ks__volobj *o);

/* The pod's spec.volumes (objects.c calls it while parsing a pod): *out (NULL when there are
 * none) and every string it points to come from pool, the symbols are held by refs. pod_name
 * names the claims of ephemeral volumes. checked: the API server's rules for these fields too
 * (ValidateVolumes: a name, unique; a claimName; the identity fields of the in-line disks).
 * KS_EPARSE with the field path ("spec.volumes[1].persistentVolumeClaim.claimName: Required
 * value"), KS_ENOMEM. */
int ks__pod_volumes_parse(const cJSON *volumes, const char *pod_name, int checked, ks_mempool *pool,
                          ks__symrefs *refs, ks_pod_volume **out, size_t *n, char *err,
                          size_t errlen);

/* Access modes as KS_ACCESS_* bits from a JSON array of strings. */
uint32_t ks__access_modes(const cJSON *arr);

#endif
