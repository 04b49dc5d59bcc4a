/*
 * PodTopologySpread, private to plugins/podtopologyspread/ (upstream
 * plugins/podtopologyspread/{plugin,common,filtering,scoring}.go, v1.34).
 *
 *   podtopologyspread.c  args, create/destroy, events, the descriptor
 *   common.c             constraints of a pod (explicit or defaulted), selectors, node inclusion
 *                        policies, the domain -> count table
 *   filtering.c          PreFilter, AddPod/RemovePod, Filter (DoNotSchedule constraints)
 *   scoring.c            PreScore, Score, NormalizeScore (ScheduleAnyway constraints)
 *
 * Everything per cycle lives in the cycle arena (ks_cycle_alloc) and is never freed here. The
 * per-node extension points (Filter, Score) only read what PreFilter/PreScore computed: a label
 * lookup and a table probe per constraint, integers and ks_syms only.
 */
#ifndef KS_PLUGINS_PODTOPOLOGYSPREAD_INT_H
#define KS_PLUGINS_PODTOPOLOGYSPREAD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

#define PTS_NAME "PodTopologySpread"
#define PTS_ERR_CONSTRAINTS "node(s) didn't match pod topology spread constraints"
#define PTS_ERR_MISSING_LABEL PTS_ERR_CONSTRAINTS " (missing required label)"

/* One default constraint from the args (or the system defaults). */
typedef struct pts_default {
    int32_t max_skew;
    ks_sym key;
    ks_unsatisfiable_action when;
    int32_t min_domains;                 /* 1 when unset */
    ks_inclusion_policy affinity_policy; /* resolved: HONOR or IGNORE */
    ks_inclusion_policy taints_policy;   /* resolved: HONOR or IGNORE */
} pts_default;

/* What create() built; read-only afterwards, so any thread may read it. */
typedef struct pts_plugin {
    int system_defaulted; /* defaultingType System: nodes without all keys still score */
    size_t ndefaults;
    pts_default *defaults;   /* ks_alloc'ed */
    ks_sym hostname_key;     /* kubernetes.io/hostname */
    ks_sym metadata_name;    /* matchFields key of node selector terms */
    struct pts_cache *cache; /* PreFilter counts across cycles (cache.c); scheduling thread only */
} pts_plugin;

/* A constraint as the cycle uses it (upstream topologySpreadConstraint). The selector is the AND
 * of nsel label selectors and nextra "key = value" pairs (matchLabelKeys); nothing = 1 stands for
 * labels.Nothing() (a nil labelSelector). Borrowed(cycle). */
typedef struct pts_constraint {
    int32_t max_skew;
    ks_sym key;
    int32_t min_domains;
    ks_inclusion_policy affinity_policy; /* HONOR or IGNORE */
    ks_inclusion_policy taints_policy;   /* HONOR or IGNORE */
    int nothing;
    uint32_t nsel;
    const ks_label_selector *sel;
    uint32_t nextra;
    const ks_label *extra;
} pts_constraint;

/* Topology value -> pod count, open addressing over ks_sym (KS_SYM_ABSENT marks a free slot).
 * n is the number of domains (upstream len(map)). Capacity is a power of two, at least twice the
 * number of domains it may hold. */
typedef struct pts_slot {
    ks_sym value;
    int64_t count;
} pts_slot;

typedef struct pts_table {
    uint32_t cap, n;
    pts_slot *slots;
} pts_table;

/* PreFilter's cycle state (upstream preFilterState): per DoNotSchedule constraint, the matching
 * pod count of every domain counted and the two "critical paths" upstream keeps so that AddPod /
 * RemovePod can update the global minimum without a rescan. Constraints and self_match never
 * change after PreFilter and are shared with clones; tables and paths are copied. */
typedef struct pts_path {
    ks_sym value;
    int64_t num;
} pts_path;

typedef struct pts_prefilter_state {
    size_t n;
    const pts_constraint *cs;
    const uint8_t *self_match; /* the incoming pod matches constraint i's selector */
    pts_table *tables;
    pts_path (*paths)[2];
} pts_prefilter_state;

/* PreScore's cycle state (upstream preScoreState), read-only after PreScore: per ScheduleAnyway
 * constraint the counts of the domains of the feasible nodes and the normalizing weight; per
 * feasible node (by name, through `nodes`, whose count is the node's index) whether it is ignored
 * and its own pod count for the kubernetes.io/hostname constraints. */
typedef struct pts_prescore_state {
    size_t n;
    const pts_constraint *cs;
    pts_table *tables;
    double *weights;
    ks_sym ns;
    pts_table nodes;
    uint8_t *ignored;
    int64_t *host_counts; /* [node index * n + constraint] */
} pts_prescore_state;

/* Cycle-state keys, compared by address (not const, so that no constant merging can share them). */
extern char pts_prefilter_key, pts_prescore_key;

/* ---- common.c ----------------------------------------------------------------------------- */

/* The constraints of `action` that apply to pod: its own spec.topologySpreadConstraints when it
 * has any, else the default constraints with the owners' selector (none when no Service / RC /
 * RS / StatefulSet selects the pod). *explicit_ tells which. Allocated in the cycle arena.
 * Returns 0 or KS_ENOMEM. */
int pts_constraints(const pts_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                    ks_unsatisfiable_action action, pts_constraint **out, size_t *n,
                    int *explicit_);

/* The constraint's selector matches these labels (sorted by key id). */
int pts_selects(const pts_constraint *c, const ks_label *labels, size_t nlabels);

/* Pods of node that count for c: same namespace as ns, not terminating, selected. */
int64_t pts_count_pods(const pts_constraint *c, const ks_node_info *ni, ks_sym ns);

/* The node carries every constraint's topology key. */
int pts_node_has_keys(const pts_constraint *cs, size_t n, const ks_label *labels, size_t nlabels);

/* Node inclusion for one constraint, with lazily computed per-node answers: *affinity and *taints
 * start at -1 and are filled on first need (pod's required node affinity / no untolerated
 * NoSchedule or NoExecute taint). */
int pts_node_included(const pts_plugin *pl, const pts_constraint *c, const ks_pod *pod,
                      const ks_node *node, int *affinity, int *taints);

/* The domain of a node: its label value, "" when it has none (a Go map read of a missing key). */
static inline ks_sym pts_domain(ks_sym v) { return v == KS_SYM_ABSENT ? KS_SYM_EMPTY : v; }

int pts_table_init(ks_cycle *cycle, pts_table *t, size_t expected);
/* The slot of value, or NULL. */
pts_slot *pts_table_find(const pts_table *t, ks_sym value);
/* The slot of value, inserted with count 0 when new (grows from the cycle arena); NULL: no memory.
 */
pts_slot *pts_table_upsert(ks_cycle *cycle, pts_table *t, ks_sym value);
int pts_table_copy(ks_cycle *into, pts_table *dst, const pts_table *src);

/* ---- hints.c: the queueing hints (upstream isSchedulableAfter*, v1.37); event thread, pure --- */

ks_queueing_hint pts_after_assigned_pod_change(void *self, const ks_pod *pod,
                                               const ks_event_info *ev);
ks_queueing_hint pts_after_target_pod_change(void *self, const ks_pod *pod,
                                             const ks_event_info *ev);
ks_queueing_hint pts_after_node_change(void *self, const ks_pod *pod, const ks_event_info *ev);

/* ---- filtering.c / scoring.c --------------------------------------------------------------- */

ks_code pts_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod, ks_prefilter_result *res,
                       ks_status *st);
ks_code pts_add_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                    const ks_node_info *node, ks_status *st);
ks_code pts_remove_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                       const ks_node_info *node, ks_status *st);
ks_code pts_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                   ks_status *st);

ks_code pts_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                      const ks_node_info *const *nodes, size_t nnodes, ks_status *st);
ks_code pts_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                  int64_t *score, ks_status *st);
ks_code pts_normalize_score(void *self, ks_cycle *cycle, const ks_pod *pod, ks_node_score *scores,
                            size_t n, ks_status *st);

/* ---- read-only views of the cycle state, for tests ------------------------------------------ */

/* Number of constraints in the PreFilter (prescore = 0) or PreScore (1) state; -1: no state. */
long pts_debug_nconstraints(ks_cycle *cycle, int prescore);
/* Count of domain `value` for constraint ci: 1 and *count when the domain exists, 0 when it does
 * not, -1 without state. */
int pts_debug_count(ks_cycle *cycle, int prescore, size_t ci, const char *value, int64_t *count);
/* Number of domains of constraint ci (upstream len(map)); -1 without state. */
long pts_debug_domains(ks_cycle *cycle, int prescore, size_t ci);
/* PreFilter: the global minimum as Filter uses it (critical path 0, before minDomains). */
int64_t pts_debug_min_match(ks_cycle *cycle, size_t ci);
/* PreScore: topology normalizing weight of ci; whether node is ignored. */
double pts_debug_weight(ks_cycle *cycle, size_t ci);
int pts_debug_ignored(ks_cycle *cycle, const char *node);

/* cache.c: PreFilter counts kept across cycles. pts_cache_fill fills tables (initialised by the
 * caller) and returns 0, or 1 when (pod, cs) cannot use the cache, or -1 when out of memory. */
typedef struct pts_cache pts_cache;
KS_HIDDEN pts_cache *pts_cache_new(void);
KS_HIDDEN void pts_cache_free(pts_cache *c);
struct pts_table;
KS_HIDDEN int pts_cache_fill(const pts_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                             const pts_constraint *cs, size_t n, int explicit_, ks_sym ns,
                             struct pts_table *tables);

/* args.c: PodTopologySpreadArgs, checked and defaulted by kubesched while it loads the
 * configuration (the descriptor's args_schema and validate_args). */
extern const ks_args_schema pts_args_schema;
int pts_validate_args(const ks_args *args, ks_args_error *err);

#endif
