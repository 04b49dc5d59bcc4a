/*
 * The store of other kinds the plugins read: Namespaces (labels, for namespaceSelector),
 * Services, ReplicationControllers, ReplicaSets and StatefulSets (the selectors behind
 * PodTopologySpread's system default constraints), PodDisruptionBudgets (preemption).
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

typedef struct ks_store ks_store;

ks_store *ks__store_new(void);
void ks__store_free(ks_store *st);

/* Whether kubesched keeps objects of this kind ("Namespace", "Service", ...). */
int ks__store_wants(const char *kind);
/* Adds or replaces (deleted == 0) or removes (deleted != 0) obj. KS_EPARSE with a field path. */
int ks__store_apply(ks_store *st, const cJSON *obj, int deleted, char *err, size_t errlen);

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

#endif
