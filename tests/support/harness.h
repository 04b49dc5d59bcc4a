/*
 * Test harness for plugin tests: builds pods, nodes and a small cluster from JSON, and runs one
 * plugin's extension points the way the framework does (PreFilter then Filter; PreScore, Score,
 * NormalizeScore), returning codes, reasons and scores.
 *
 * Everything a harness call creates lives until th_reset() (called by th_init()), so tests do not
 * free anything. Parse failures abort the test with the parser's message.
 */
#ifndef KS_TESTS_HARNESS_H
#define KS_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

/* Sets up the host table and interning; call first in each test (use as .init of a TestSuite). */
void th_init(void);
/* Releases everything created since th_init (use as .fini). */
void th_fini(void);

/* A registry holding the in-tree plugins, registered through the loader exactly as the program
 * does (ks__loader_register_linked); free it with ks__registry_free. Calls ks__host_init. */
struct ks_registry *th_registry_new(void);

/* JSON text as cJSON, single quotes turned into double quotes ("{'a':1}"); the caller frees it
 * with cJSON_Delete. Invalid JSON fails the test. */
cJSON *th_json(const char *text);

/* A Pod / Node from JSON text (single quotes are accepted and turned into double quotes, so tests
 * can write th_pod("{'metadata':{'name':'p'}}")). */
ks_pod *th_pod(const char *json);
ks_node *th_node(const char *json);

typedef struct th_cluster th_cluster;
th_cluster *th_cluster_new(void);
/* Adds a node; returns its NodeInfo in the cluster's snapshot. */
const ks_node_info *th_cluster_add_node(th_cluster *c, const char *node_json);
/* Adds a pod that runs on the node named by its spec.nodeName (must exist). */
void th_cluster_add_pod(th_cluster *c, const char *pod_json);
const ks_node_info *th_cluster_node(th_cluster *c, const char *node_name);
/* Adds another kind the plugins read (Namespace, Service, ReplicaSet, StatefulSet,
 * ReplicationController, PodDisruptionBudget) to the store behind ks_namespace_labels and
 * ks_pod_owner_selectors. */
void th_cluster_add_object(th_cluster *c, const char *json);
/* What a cycle made by hand needs to reach this cluster's store (and the harness's bind). */
struct ks_cycle_hooks *th_cluster_hooks(th_cluster *c);
/* Points the host's scheduler services (what a plugin reads without a cycle: PreEnqueue, hints)
 * at this cluster's store and DRA in-flight allocations, with its current source flags; undone
 * when the cluster is freed. Cycles reach the cluster's own through th_cluster_hooks. */
void th_cluster_services(th_cluster *c);

typedef struct th_plugin th_plugin;
/* The plugin instance create() returned (to call a descriptor slot the harness does not wrap). */
void *th_plugin_self(th_plugin *p);
/* Creates the plugin with args (JSON text or NULL for none). Aborts the test when create fails. */
th_plugin *th_plugin_new(const ks_plugin_desc *desc, const char *args_json);
/* As th_plugin_new but returns NULL on failure and copies the create error into err. */
th_plugin *th_plugin_try_new(const ks_plugin_desc *desc, const char *args_json, char *err,
                             size_t errlen);

/* Runs PreFilter (if any) then Filter on the named node. When PreFilter returns Skip the result is
 * KS_SUCCESS (the framework would not run Filter); when PreFilter rejects, its code is returned.
 * reasons receives the reasons joined with ", " ("" on success). */
ks_code th_filter(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name, char *reasons,
                  size_t len);

/* th_filter in steps, as upstream's plugin tests call them: PreFilter (when the plugin has one;
 * *pre gets its code, KS_SUCCESS without one, and pre_reasons its reasons), then AddPod / RemovePod
 * with o->add / o->remove (when set), then Filter on the node with the same cycle state; its code
 * is returned (KS_SUCCESS when it did not run). Filter runs only after a PreFilter success,
 * unless o->filter_always (upstream tests that call Filter after a PreFilter Skip or failure). */
typedef struct th_steps {
    int filter_always;
    const ks_pod *add, *remove;
} th_steps;
ks_code th_filter_steps(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name,
                        const th_steps *o, ks_code *pre, char *pre_reasons, size_t plen,
                        char *reasons, size_t len);

/* One cycle up to PostFilter: PreFilter, Filter on every node of the cluster (when PreFilter
 * succeeded), then PostFilter, whose code is returned (its reasons in reasons). */
ks_code th_post_filter(th_plugin *p, th_cluster *c, ks_pod *pod, char *reasons, size_t len);

/* From now until the next th_init: th_reserve and th_pre_bind run Filter on the chosen node between
 * PreFilter and Reserve, as the framework does (for a Reserve that reads what Filter kept). */
void th_filter_before_reserve(int on);

/* PreFilter (a Skip counts as success) then Reserve on the named node with one cycle, as the
 * framework runs them for the chosen node; then Unreserve when `unreserve` is set. Returns the
 * first failing code (KS_SUCCESS when both pass); reasons gets its reasons. */
ks_code th_reserve(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name, int unreserve,
                   char *reasons, size_t len);

/* Runs PreScore (if any), Score on every node of the cluster in insertion order, then
 * NormalizeScore (if any). raw[i] and normalized[i] (either may be NULL) get node i's scores.
 * A PreScore Skip gives 0 everywhere. Returns the first non-success code, or KS_SUCCESS. */
ks_code th_score(th_plugin *p, th_cluster *c, ks_pod *pod, int64_t *raw, int64_t *normalized);
/* th_score with the plugin's PreFilter first in the same cycle when with_pre_filter is set (for a
 * Score that reads PreFilter's state, as upstream's tests run them); a PreFilter Skip counts as
 * success, another failure is returned. with_pre_filter 2: Filter on every node too (for a Score
 * that reads what Filter kept, as DynamicResources'). */
ks_code th_score_steps(th_plugin *p, th_cluster *c, ks_pod *pod, int with_pre_filter, int64_t *raw,
                       int64_t *normalized);

/* The binding side, for PreBind plugins (ABI 1.7): ks_storage_patch writes to the cluster's store
 * as the API server would (ks__store_patch: conditional on a resourceVersion in the patch);
 * ks_binding_sleep calls tick(c, n, arg) with n = 1, 2, ... (a controller's progress between
 * polls) and returns its answer (0, KS_ENOTFOUND: the pod was deleted, KS_ECANCELED);
 * ks_source_flags answers flags. Without this call: no tick (sleep returns 0), flags 0. */
typedef int (*th_tick_fn)(th_cluster *c, int n, void *arg);
void th_cluster_binding(th_cluster *c, uint32_t flags, th_tick_fn tick, void *arg);
/* One cycle as the framework runs it for the chosen node: PreFilter, Reserve, PreBindPreFlight
 * (its code to *preflight when not NULL), PreBind unless PreBindPreFlight said Skip, and
 * Unreserve when PreBind failed. Returns the first failing code; reasons gets its reasons. */
ks_code th_pre_bind(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name,
                    ks_code *preflight, char *reasons, size_t len);
/* Patches a storage object of the store ("PersistentVolume" name, or "PersistentVolumeClaim"
 * ns/name) with a JSON merge patch (single quotes allowed), as a controller's write: 0 or the
 * ks__store_patch error. */
int th_cluster_patch(th_cluster *c, const char *kind, const char *ns, const char *name,
                     const char *patch_json);
/* A storage object as the store holds it now (cJSON owned by the caller), NULL when none. */
cJSON *th_cluster_object(th_cluster *c, const char *kind, const char *ns, const char *name);
/* Lag on: ks_storage_patch answers a resourceVersion ahead of the store's (the informer has
 * not delivered the write yet); th_cluster_deliver then brings one object past it. */
void th_cluster_lag(th_cluster *c, int on);
void th_cluster_deliver(th_cluster *c, const char *kind, const char *ns, const char *name);
/* How many ks_storage_patch calls the plugins made on c. */
int th_cluster_patches(th_cluster *c);

/* Runs PreEnqueue. */
ks_code th_pre_enqueue(th_plugin *p, ks_pod *pod, char *reasons, size_t len);
/* QueueSort less(a, b) with the given enqueue timestamps. */
int th_less(th_plugin *p, ks_pod *a, int64_t ts_a, ks_pod *b, int64_t ts_b);
/* Runs Bind; the harness's bind_pod host call records the node, readable with th_bound_node. */
ks_code th_bind(th_plugin *p, ks_pod *pod, const char *node_name, char *reasons, size_t len);
const char *th_bound_node(ks_pod *pod); /* NULL when th_bind never bound it */

#endif
