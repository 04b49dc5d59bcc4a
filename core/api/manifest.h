/*
 * Kubernetes manifests from files: multi-document YAML, JSON (one value, an array, or several
 * values one after the other), and `List` documents as `kubectl get ... -o yaml|json` prints them,
 * turned into a flat array of cJSON objects, checked as strictly as the API server decodes them.
 *
 * YAML becomes JSON the way sigs.k8s.io/yaml does (yaml_read.h), within its limits (nesting,
 * aliases). Each object is then checked against the API types (kube_schema.h):
 *   - a value of the wrong type, an integer out of range: an error;
 *   - an unknown field: a warning, `unknown field "spec.foo"` as the API server warns (an error
 *     with opts.strict);
 *   - a missing kind, or a kind its apiVersion does not have (`kind: Nodes`): a warning and the
 *     object is left out (an error with opts.strict).
 * Every problem is reported with FILE:LINE:COL. Objects of kinds kubesched does not read are kept
 * for the caller to count.
 *
 * Threads: any; no shared state.
 */
#ifndef KS_CORE_MANIFEST_H
#define KS_CORE_MANIFEST_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct ks_manifest_obj {
    cJSON *obj;     /* owned */
    char where[64]; /* "line 12", "line 3, items[4]" or "line 1, [2]", for messages */
    /* Where its document's text starts (for ks__manifest_locate), and which item of the
     * document it is (a List's items or a top-level sequence's; SIZE_MAX: the document). */
    size_t doc_offset, doc_line, doc_col, item;
} ks_manifest_obj;

typedef struct ks_manifest {
    size_t n, cap;
    ks_manifest_obj *objs;
    size_t errors, warnings; /* problems found (reported or not) */
    size_t unknown_kinds;    /* objects left out: kind missing or not a kind of its apiVersion */
} ks_manifest;

/* The largest cluster file read: a `kubectl get -o yaml` of a cluster at Kubernetes' published
 * scalability limits (5000 nodes, 150000 pods) is several hundred MB with managedFields, and
 * parsing it takes several times that in memory; 1 GiB leaves room for that and stops a runaway
 * input (`--cluster /dev/zero`) with a message instead of exhausting memory. */
#define KS_MANIFEST_MAX_BYTES ((size_t)1 << 30)

/* Problems beyond this many are counted, not reported one by one. */
#define KS_MANIFEST_MAX_REPORTED 50

typedef struct ks_manifest_opts {
    size_t max_bytes; /* 0: KS_MANIFEST_MAX_BYTES */
    int strict;       /* unknown fields and kinds are errors, not warnings */
    /* Called for each problem in file order with "FILE:LINE:COL: error: ..." or "...: warning:
     * ..." (no newline), up to KS_MANIFEST_MAX_REPORTED of them; NULL: not reported. */
    void (*report)(void *ctx, const char *msg);
    void *ctx;
} ks_manifest_opts;

/* Loads every object of the file (List items flattened); o may be NULL (defaults). Returns 0,
 * or: KS_EPARSE / KS_ERANGE for a file that cannot be read as a whole ("FILE:LINE:COL: message"
 * in err), KS_EINVAL when objects have errors (each reported; err says how many), KS_EIO for a
 * file that cannot be read or is larger than the limit ("FILE: larger than 1 GiB, the limit for a
 * cluster file"), KS_ENOMEM. On error *out is empty. */
int ks__manifest_read(const char *path, const ks_manifest_opts *o, ks_manifest *out, char *err,
                      size_t errlen);

/* ks__manifest_read with the defaults. */
int ks__manifest_load(const char *path, ks_manifest *out, char *err, size_t errlen);

/* The position (1-based) of field_path ("spec.containers[0].ports[0].hostPort", as object
 * messages name fields) in object o of the cluster file path, for a message about a value found
 * after loading: the file is read again, from o's document only. The deepest field of the path
 * that exists is found. 0, or a KS_E* code (the file changed or cannot be read). */
int ks__manifest_locate(const char *path, const ks_manifest_obj *o, const char *field_path,
                        size_t *line, size_t *col);

void ks__manifest_free(ks_manifest *m);

#endif
