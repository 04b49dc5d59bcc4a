/*
 * Kubernetes manifests from files: multi-document YAML, JSON, and `List` documents as
 * `kubectl get ... -o yaml|json` prints them, turned into a flat array of cJSON objects.
 *
 * YAML scalars become JSON the way sigs.k8s.io/yaml does (ks__yaml_to_json, yaml_json.h).
 *
 * Threads: any; no shared state.
 */
#ifndef KS_CORE_MANIFEST_H
#define KS_CORE_MANIFEST_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct ks_manifest_obj {
    cJSON *obj;     /* owned */
    char where[64]; /* "line 12" (YAML) or "item 3" for messages */
} ks_manifest_obj;

typedef struct ks_manifest {
    size_t n, cap;
    ks_manifest_obj *objs;
} ks_manifest;

/* The largest cluster file read: a `kubectl get -o yaml` of a cluster at Kubernetes' published
 * scalability limits (5000 nodes, 150000 pods) is several hundred MB with managedFields, and
 * parsing it takes several times that in memory; 1 GiB leaves room for that and stops a runaway
 * input (`--cluster /dev/zero`) with a message instead of exhausting memory. */
#define KS_MANIFEST_MAX_BYTES ((size_t)1 << 30)

/* Loads every object of the file (List items flattened). On error returns KS_EPARSE / KS_EIO with
 * "FILE:LINE:COL: message" in err; a file larger than KS_MANIFEST_MAX_BYTES is KS_EIO with
 * "FILE: larger than 1 GiB, the limit for a cluster file". */
int ks__manifest_load(const char *path, ks_manifest *out, char *err, size_t errlen);

/* The same with the size limit `max` in bytes instead of KS_MANIFEST_MAX_BYTES. */
int ks__manifest_load_capped(const char *path, size_t max, ks_manifest *out, char *err,
                             size_t errlen);
void ks__manifest_free(ks_manifest *m);

#endif
