/*
 * InterPodAffinity, private to plugins/interpodaffinity/ (upstream
 * plugins/interpodaffinity/{plugin,filtering,scoring}.go and framework/types.go, v1.34).
 *
 *   interpodaffinity.c  descriptor, args, events (plugin.go)
 *   common.c            topology-pair maps, namespace labels, term matching (types.go)
 *   filtering.c         PreFilter, AddPod/RemovePod, Filter (filtering.go)
 *   scoring.c           PreScore, Score, NormalizeScore (scoring.go)
 *
 * Everything per cycle lives in the cycle arena (ks_cycle_alloc) and is never freed by the plugin.
 */
#ifndef KS_PLUGINS_INTERPODAFFINITY_INT_H
#define KS_PLUGINS_INTERPODAFFINITY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

#define IPA_NAME "InterPodAffinity"

/* The plugin instance: InterPodAffinityArgs (already defaulted and validated by the config layer;
 * create() defaults them again for callers that pass none). Read-only after create. */
typedef struct ipa_plugin {
    int32_t hard_pod_affinity_weight;       /* 0..100, default 1 */
    int ignore_preferred_terms_of_existing; /* default 0 */
} ipa_plugin;

/* ---- Topology-pair maps ----------------------------------------------------------------------
 * upstream topologyToMatchedTermCount / scoreMap: (topology key, node's value) -> int64. A small
 * open-addressing table (linear probing, power-of-two size, at most half full); a slot whose key
 * is KS_SYM_EMPTY is free (topology keys are never "": a node label key cannot be empty), so
 * zeroed arena memory is an empty map. Entries whose count returns to 0 stay in the table, and
 * `nonzero` counts the others: it is the length of upstream's map, which deletes them. `keys`
 * lists the distinct topology keys that have an entry, so that Filter and Score look up a node's
 * value once per key (O(keys * log labels)) instead of walking the node's labels.
 *
 * Threads: written only by the thread that owns the cycle state (PreFilter, PreScore, AddPod and
 * RemovePod on a cloned state); read concurrently by Filter and Score workers. */
typedef struct ipa_pair {
    ks_sym key;
    ks_sym value;
    int64_t n;
} ipa_pair;

typedef struct ipa_tpmap {
    uint32_t cap;     /* slots (0 or a power of two) */
    uint32_t used;    /* occupied slots */
    uint32_t nonzero; /* occupied slots with n != 0 */
    uint32_t nkeys, keys_cap;
    ipa_pair *slots; /* cycle arena */
    ks_sym *keys;    /* cycle arena */
} ipa_tpmap;

/* Adds delta to (key, value), creating the entry. 0, or KS_ENOMEM (the map is unchanged). */
int ipa_tpmap_add(ks_cycle *cycle, ipa_tpmap *m, ks_sym key, ks_sym value, int64_t delta);
/* The count of (key, value), 0 when absent. */
int64_t ipa_tpmap_get(const ipa_tpmap *m, ks_sym key, ks_sym value);
/* A deep copy of src in into's arena. 0 or KS_ENOMEM. */
int ipa_tpmap_clone(ks_cycle *into, ipa_tpmap *dst, const ipa_tpmap *src);
/* Sum of the entries for the node's value of each key (upstream Score). labels sorted by key. */
int64_t ipa_tpmap_node_sum(const ipa_tpmap *m, const ks_label *labels, size_t nlabels);
/* Whether some key has a positive count at the node's value (upstream
 * satisfyExistingPodsAntiAffinity, inverted). */
int ipa_tpmap_node_positive(const ipa_tpmap *m, const ks_label *labels, size_t nlabels);

/* ---- Namespaces -------------------------------------------------------------------------------
 * Labels of a namespace for namespaceSelector matching. known == 0 when the cluster source has no
 * such Namespace (upstream's lister miss). */
typedef struct ipa_ns {
    ks_sym ns;
    int known;
    int filled; /* cache slot in use */
    const ks_label *labels;
    size_t nlabels;
} ipa_ns;

/* A per-call cache of namespace labels (PreFilter and PreScore look up the namespace of every
 * existing pod that a namespaceSelector term is matched against). cap 0 means "no cache": every
 * lookup asks the host. Single-threaded. */
typedef struct ipa_ns_cache {
    ks_cycle *cycle;
    uint32_t cap, used;
    ipa_ns *slots;
} ipa_ns_cache;

void ipa_ns_cache_init(ipa_ns_cache *c, ks_cycle *cycle, int cached);
/* The labels of ns (borrowed from the host until the cycle ends). */
ipa_ns ipa_ns_lookup(ipa_ns_cache *c, ks_sym ns);
/* ns's labels copied into the cycle arena (the incoming pod's namespace, kept in the cycle
 * state for AddPod/RemovePod). 0 or KS_ENOMEM. */
int ipa_ns_snapshot(ks_cycle *cycle, ks_sym ns, ipa_ns *out);

/* ---- Term matching (upstream AffinityTerm.Matches) ---------------------------------------------
 * A term owned by pod `owner` matches pod `target` iff target's namespace is one of the term's
 * namespaces and target's labels match the term's selector with the owner's matchLabelKeys /
 * mismatchLabelKeys merged in (key In / NotIn the owner's value, for keys the owner has; the API
 * server does this at pod creation in v1.34, the merge is idempotent for pods that went through
 * it and makes pods read from files behave the same).
 *
 * The term's namespaces: `namespaces` plus those selected by namespaceSelector, or the owner's own
 * namespace when both are unset. How the selector is evaluated depends on whose term it is, as
 * upstream:
 *   IPA_INCOMING  the pod being scheduled: upstream lists the Namespace objects the selector
 *                 matches (mergeAffinityTermNamespacesIfNotEmpty), so a namespace unknown to the
 *                 cluster source is matched only by the empty selector {} (all namespaces);
 *   IPA_EXISTING  a pod already placed, matched against the incoming pod: the selector is matched
 *                 against the incoming pod's namespace labels, empty when that namespace is
 *                 unknown (GetNamespaceLabelsSnapshot).
 * target_ns: the labels of target's namespace, or NULL to look them up in nsc when needed. */
typedef enum { IPA_INCOMING, IPA_EXISTING } ipa_owner_kind;

int ipa_term_matches(const ks_pod_affinity_term *t, const ks_pod *owner, const ks_pod *target,
                     ipa_owner_kind kind, const ipa_ns *target_ns, ipa_ns_cache *nsc);
/* All of terms match target (false for no terms: upstream podMatchesAllAffinityTerms). */
int ipa_all_terms_match(const ks_pod_affinity_term *terms, uint32_t n, const ks_pod *owner,
                        const ks_pod *target, ipa_owner_kind kind, const ipa_ns *target_ns,
                        ipa_ns_cache *nsc);

/* ---- Queueing hints (hints.c; upstream isSchedulableAfter*, v1.37): event thread, pure ---- */
ks_queueing_hint ipa_after_assigned_pod_change(void *self, const ks_pod *pod,
                                               const ks_event_info *ev);
ks_queueing_hint ipa_after_node_change(void *self, const ks_pod *pod, const ks_event_info *ev);

/* ---- Extension points (filtering.c, scoring.c) ----------------------------------------------- */
ks_code ipa_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod, ks_prefilter_result *result,
                       ks_status *st);
ks_code ipa_add_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                    const ks_node_info *node, ks_status *st);
ks_code ipa_remove_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                       const ks_node_info *node, ks_status *st);
ks_code ipa_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                   ks_status *st);
ks_code ipa_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                      const ks_node_info *const *nodes, size_t nnodes, ks_status *st);
ks_code ipa_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                  int64_t *score, ks_status *st);
ks_code ipa_normalize_score(void *self, ks_cycle *cycle, const ks_pod *pod, ks_node_score *scores,
                            size_t nscores, ks_status *st);

#endif
