/*
 * Parsing of the selector-shaped parts of API objects into the SDK's plain structs, in a mempool:
 * metav1.LabelSelector, pod affinity terms, topology spread constraints. Shared by the pod parser
 * and the store of other kinds (Services, ReplicaSets, PodDisruptionBudgets, ...).
 *
 * Memory comes from pool; the symbols interned are held by refs (the owner of the pool releases
 * both together) or, with refs NULL, pinned (the store, whose objects live until it is freed).
 *
 * checked (pod affinity, spread constraints): 1 applies the API server's value rules as well
 * (In/NotIn need values, a weight is 1..100, a topologyKey is required, maxSkew > 0, ...) and
 * refuses what breaks them; 0 reads leniently, as upstream kube-scheduler reads what the API
 * server stored. Which one a caller wants: see ks__pod_from_json_checked (objects.h). Decode
 * errors (a wrong type, an unknown operator, a number that is no int32) are refused either way.
 */
#ifndef KS_CORE_SELECTOR_H
#define KS_CORE_SELECTOR_H

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/intern.h"
#include "util/mempool.h"

/* A LabelSelector object ({matchLabels, matchExpressions}); NULL/null gives present = 0.
 * Errors name path (e.g. "spec.affinity.podAffinity...labelSelector.matchExpressions[0].operator").
 * Lenient (the store's objects); the checked reading is reached through the two below.
 */
int ks__parse_label_selector(const cJSON *obj, const char *path, ks_mempool *pool,
                             ks__symrefs *refs, ks_label_selector *out, char *err, size_t errlen);
/* A map of labels ({"app": "web"}) as a selector that requires all of them (Service,
 * ReplicationController selectors). Empty or missing: present = 0 (selects nothing). */
int ks__parse_map_selector(const cJSON *obj, const char *path, ks_mempool *pool, ks__symrefs *refs,
                           ks_label_selector *out, char *err, size_t errlen);
/* spec.affinity.podAffinity / podAntiAffinity; *out NULL when neither is set. */
int ks__parse_pod_affinity(const cJSON *affinity, int checked, ks_mempool *pool, ks__symrefs *refs,
                           ks_pod_affinity **out, char *err, size_t errlen);
/* spec.topologySpreadConstraints. */
int ks__parse_spread_constraints(const cJSON *arr, int checked, ks_mempool *pool, ks__symrefs *refs,
                                 ks_topology_spread_constraint **out, size_t *n, char *err,
                                 size_t errlen);

#endif
