/*
 * The framework runtime: one instance per profile, holding the plugin instances of its plan and
 * running them at each extension point with upstream's ordering and status semantics
 * (framework/runtime/framework.go). The scheduling cycle that calls these lives in
 * schedule_one.c.
 *
 * Also defines the host-side structs behind the SDK's opaque handles (ks_status, ks_cycle, ...).
 *
 * Metrics (live mode): with fw->metrics set, each run_* of an extension point is timed
 * (framework_extension_point_duration_seconds), and in a cycle with cycle->sampled each plugin
 * call too; Filter/Score evaluations are counted per worker (framework_metrics.h). Without
 * metrics the per-node Filter loop runs a copy with no metrics code.
 *
 * Threads: created and destroyed on the main thread. run_* functions are called by the scheduling
 * thread, except filter/score which the worker pool calls concurrently for different nodes, and
 * pre_bind/bind/post_bind/unreserve which run on binding threads.
 */
#ifndef KS_CORE_FRAMEWORK_H
#define KS_CORE_FRAMEWORK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sched/cache.h"
#include "config/config_args.h"
#include "config/config.h"
#include "kubesched/plugin.h"
#include "sched/parallelize.h"

#define KS_STATUS_BUF 488

/* A verdict with its reasons (NUL-separated in buf). code KS_SUCCESS means no reasons. */
struct ks_status {
    ks_code code;
    const char *plugin; /* the plugin that returned it (borrowed), NULL when none */
    uint16_t nreasons;
    uint16_t used;
    uint8_t null_reason; /* a plugin added a NULL reason: its status is an Error (framework.c) */
    char buf[KS_STATUS_BUF];
};

void ks__status_reset(ks_status *st);
/* Copies reason, made valid UTF-8 as Go's strings.ToValidUTF8(s, "\uFFFD") does (each run of
 * invalid bytes becomes one U+FFFD, so JSON output stays valid); a reason cut at the buffer's end
 * ends with "…(truncated)". NULL adds nothing and marks the status (null_reason). */
void ks__status_add(ks_status *st, const char *reason);
/* Reasons joined with ", " (upstream Status.Message()). */
void ks__status_message(const ks_status *st, char *out, size_t len);
/* Iterates reasons: for (const char *r = NULL; (r = ks__status_next(st, r));) */
const char *ks__status_next(const ks_status *st, const char *prev);

struct ks_error {
    char msg[512];
};

struct ks_prefilter_result {
    int used; /* the plugin added at least one node: restrict to nodes[] */
    ks_sym *nodes;
    size_t n, cap;
    /* Set by the framework: the status of nodes outside the subset,
     * "node(s) didn't satisfy plugin(s) [A B]". */
    char excluded_msg[192];
};

struct ks_post_filter_result {
    ks_sym nominated; /* KS_SYM_ABSENT when the plugin nominated nothing */
    ks_pod **victims; /* one reference each; evicted by the scheduler on Success */
    size_t nvictims, victims_cap;
};

struct ks_filter_outcome {
    const ks_snapshot *snap;
    const ks_status *by_index;  /* per snapshot index; code KS_SUCCESS = passed or not evaluated */
    const uint8_t *evaluated;   /* per snapshot index */
    const ks_status *all_nodes; /* non-NULL when PreFilter rejected every node with one status */
};

/* Per-cycle key/value state and arena. */
typedef struct ks_cycle_entry {
    const void *key;
    void *data;
    const ks_state_ops *ops;
} ks_cycle_entry;

struct ks_cycle {
    const ks_snapshot *snap;
    ks_pod *pod;
    size_t nentries, cap;
    ks_cycle_entry *entries;
    struct ks_arena_block *arena;
    uint64_t skip_filter;         /* bit i: plugin instance i skipped (PreFilter Skip) */
    uint64_t skip_score;          /* bit i: score plugin i skipped (PreScore Skip) */
    uint64_t skip_pre_bind;       /* bit i: PreBind plugin i skipped (PreBindPreFlight Skip) */
    struct ks_framework *fw;      /* the profile running this cycle */
    struct ks_cycle_hooks *hooks; /* the scheduler's services (nominator, randomness) */
    /* Metrics (see framework_metrics.h), set by the scheduling cycle only when the framework has
     * them: time each plugin call (a sampled cycle), and per-worker evaluation counters
     * ([kind][worker][instance], eval_rows workers). */
    int sampled;
    uint32_t *evals;
    size_t eval_rows;
    /* Copies made for dry runs (ks_cycle_clone, ks_node_info_clone), freed with this cycle. */
    struct ks_cycle *clones;
    struct ks_cycle *next_clone;
    struct ks_node_info **ni_clones;
    size_t nni_clones, ni_clones_cap;
    /* The storage objects this cycle's plugins looked up (ks_cycle_pvc, ...): each a reference
     * released when the cycle is freed, so what a plugin was handed stays valid for the whole
     * cycle even when an informer replaces it. Pushed lock-free (Filter workers look up too). */
    _Atomic(struct ks_cycle_hold *) holds;
    /* Pods a plugin asked to activate (ks_activate_pod), newest first, in the arena: upstream's
     * PodsToActivate, which the scheduler empties where upstream activates them. */
    struct ks_activate_req *activate;
    /* Process isolation (isolation.h): the children of this cycle's isolated plugins (pushed
     * lock-free by the first call of each, ended when the cycle is freed), and the nodes the
     * cycle is about to Filter and Score, so that one request carries a whole batch. Not copied
     * into clones. */
    _Atomic(struct iso_session *) iso_sessions;
    const ks_node_info *const *iso_filter_nodes;
    size_t iso_nfilter_nodes;
    const ks_node_info *const *iso_score_nodes;
    size_t iso_nscore_nodes;
};
/* isolation.c: ends the children of c's sessions (ks__cycle_free). */
void ks__iso_end_sessions(ks_cycle *c);

/* One pod to activate (its uid). */
struct ks_activate_req {
    struct ks_activate_req *next;
    char uid[];
};

/* One or more storage objects a cycle holds (framework.c releases them). */
struct ks_cycle_hold {
    struct ks_cycle_hold *next;
    size_t n;
    struct ks__volobj *objs[];
};
/* Holds objs[0..n) (their references pass to the cycle) and returns the hold, whose objs array
 * the caller may hand out as borrowed(cycle); on allocation failure releases them and returns
 * NULL. Any thread. */
struct ks_cycle_hold *ks__cycle_hold(ks_cycle *c, struct ks__volobj *const *objs, size_t n);

/* Pods nominated to a node, as the scheduling thread saw them at the start of the cycle. */
typedef struct ks_nominated_set {
    ks_sym node;
    size_t n;
    const ks_pod **pods;
} ks_nominated_set;

/* The scheduler's state a cycle reaches through the host table (ks_cycle_hooks), instead of
 * process globals: one set per scheduler (or test harness), borrowed by every cycle it runs and
 * by their clones. The binding side effect and the store are set at construction and read-only
 * afterwards (any thread); the nominated pods and the generator are refreshed and used by the
 * scheduling thread for each cycle. A cycle without hooks (NULL) sees no nominated pods, no
 * store, no randomness and cannot bind. */
typedef ks_code (*ks_bind_hook)(void *ctx, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                ks_status *st);
struct ks_dra_change;
typedef struct ks_cycle_hooks {
    size_t nnominated;
    ks_nominated_set *nominated;
    uint64_t (*rand)(void *ctx);
    void *rand_ctx;
    /* bind_pod: the scheduler routes it to its cluster source. Binding threads. */
    ks_bind_hook bind;
    void *bind_ctx;
    /* The Namespaces, Services, PDBs, ... that namespace_labels, pod_owner_selectors and pdbs
     * read (borrowed). */
    struct ks_store *store;
    /* ABI 1.7, for PreBind plugins (ctx: bind_ctx): storage_patch goes to the cluster source,
     * binding_sleep to the binding pool (it ends early when the pod is deleted or the scheduler
     * stops); source_flags is what source_flags answers. Binding threads. */
    ks_code (*patch_storage)(void *ctx, const ks_pod *pod, int kind, ks_sym ns, ks_sym name,
                             const char *patch, char *rv, ks_status *st);
    int (*binding_sleep)(void *ctx, const char *pod_uid, int64_t ns);
    uint32_t source_flags;
    /* ABI 1.10: DRA's in-flight allocations and allocator (dra_manager.h); NULL: none. And where
     * a claim write of DynamicResources (PreBind, PostFilter) goes as a cluster event (the chg's
     * references pass to it; NULL: they are released). */
    struct ks_dra_manager *dra;
    void (*dra_changed)(void *ctx, struct ks_dra_change *chg);
    void *dra_ctx;
    /* The cluster source's claim_request (scheduler.h; ctx: dra_ctx), NULL when it writes no
     * claims: live mode's ResourceClaim writes. */
    ks_code (*claim_request)(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                             const char *content_type, const char *body, char **out,
                             int *http_status, ks_status *st);
    /* ABI 1.11 (ctx: bind_ctx): a merge patch to the pod's status through the cluster source
     * (DynamicResources' extendedResourceClaimStatus); NULL: the source writes no pod status.
     * Binding threads. */
    ks_code (*patch_pod_status)(void *ctx, const ks_pod *pod, const char *merge_patch,
                                ks_status *st);
} ks_cycle_hooks;

/* Filter plugins on ni with the pods nominated there first (upstream
 * RunFilterPluginsWithNominatedPods): pass 1 with nominated pods of priority >= pod's added (on
 * copies), then, if any were added, pass 2 without them. */
ks_code ks__fw_run_filter_with_nominated(struct ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                         const ks_node_info *ni, ks_status *st,
                                         uint16_t *passed_count);
ks_code ks__fw_run_prefilter_add_pod(struct ks_framework *fw, ks_cycle *cycle, const ks_pod *pod,
                                     const ks_pod *other, const ks_node_info *ni, ks_status *st);
ks_code ks__fw_run_prefilter_remove_pod(struct ks_framework *fw, ks_cycle *cycle, const ks_pod *pod,
                                        const ks_pod *other, const ks_node_info *ni, ks_status *st);
/* Isolated Filter plugins (isolation.h) evaluate count candidates of cycle->iso_filter_nodes from
 * position start in one request each, before the Filter workers ask. Scheduling thread. */
void ks__fw_iso_prefetch_filter(struct ks_framework *fw, ks_cycle *cycle, ks_pod *pod, size_t start,
                                size_t count);
/* A NodeInfo copy owned by the cycle. */
ks_node_info *ks__cycle_clone_node_info(ks_cycle *cycle, const ks_node_info *ni);

ks_cycle *ks__cycle_new(const ks_snapshot *snap, ks_pod *pod);
void ks__cycle_free(ks_cycle *c); /* runs cleanups; NULL no-op */
/* A copy for evaluating a node with nominated pods (clone ops applied). */
ks_cycle *ks__cycle_clone(const ks_cycle *c);

typedef struct ks_plugin_inst {
    const char *name;
    const ks_plugin_desc *desc;
    void *self;
    struct ks_args args;
    int index; /* position in the profile's instance list (queue rejector bits) */
    /* The deadline of one call (args.kubeschedCallDeadline of a plugin from a .so): -1 when not
     * set (then --plugin-call-deadline), 0 never watched (plugin_guard.h). */
    int64_t deadline_ns;
    char *origin; /* the .so it came from (dladdr of desc), NULL when linked in (in-tree); owned:
                   * crash and watchdog reports name it (plugin_guard.h) */
    /* EnqueueExtensions: events_with_hints (ABI 1.4), or events_to_register with no hints (every
     * hint NULL: Queue, as an older plugin's registration means). Update sets written with the
     * ABI 1.0-1.3 KS_ACT_UPDATE / KS_ACT_ALL are widened to KS_ACT_UPDATE_ANY / KS_ACT_ALL_ANY. */
    size_t nevents;
    ks_cluster_event_hint *events; /* NULL with nevents 0 and all_events 1: every event */
    int all_events;
    /* kubeschedIsolation: process (isolation.h): desc is then the proxy, self the wrapper, and
     * this owns both (the plugin's own self inside). NULL for a plugin run in-process. */
    struct ks_iso_plugin *iso;
} ks_plugin_inst;

typedef struct ks_point_entry {
    ks_plugin_inst *inst;
    int32_t weight;
} ks_point_entry;

/* Where SignPod's fragments collect (the SDK's opaque ks_signature): key and value JSON pairs,
 * owned; the first of one key wins (ks_host_api.sign_add). One call's, on one thread. */
struct ks_signature {
    size_t n, cap;
    struct ks_sign_fragment {
        char *key;
        char *value;
    } *f;
    int oom; /* an allocation failed: the pod is not signed */
};

typedef struct ks_framework {
    const ks_profile_plan *plan;
    const char *profile_name;
    ks_sym scheduler_name;
    int32_t percentage_of_nodes_to_score; /* -1: global */
    size_t ninst;
    ks_plugin_inst *inst;
    size_t n[KS_PT_COUNT];
    ks_point_entry *pt[KS_PT_COUNT];
    struct ks_fw_metrics *metrics;       /* NULL: no metrics, no timing (simulate) */
    const ks_parallelizer *parallelizer; /* the scheduler's, borrowed: Score runs on it */
    /* Opportunistic batching (upstream computeBatchablePlugins, batch.go), set up by
     * ks__fw_setup_batching: signatures are on when every PreFilter/Filter/PreScore/Score plugin
     * signs (a sign slot, or KS_PLUGIN_NODE_LOCAL: signed by the host); signers lists those
     * plugins once each, in that order. batch: the profile's OpportunisticBatch, NULL when
     * OpportunisticBatching is off. */
    int enable_signatures;
    size_t nsigners;
    ks_plugin_inst **signers;
    struct ks_batch *batch;
} ks_framework;

/* Instantiates every plugin of plan (create with its args). On failure, the plugins already
 * created are destroyed and err says which plugin failed and why. */
int ks__framework_new(const ks_profile_plan *plan, ks_framework **out, char *err, size_t errlen);
void ks__framework_free(ks_framework *fw);

/* Upstream RunPreFilterPlugins. On success *restricted says whether result limits the nodes;
 * result->nodes then holds the intersection. On rejection st holds the status (plugin set) and
 * for an empty intersection the upstream "node(s) didn't satisfy plugin(s) [...]" message. */
ks_code ks__fw_run_pre_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                              ks_prefilter_result *result, int *restricted, ks_status *st);
/* Upstream RunFilterPlugins on one node; stops at the first non-success. *passed_count gets the
 * number of filter plugins that passed before (for --explain). */
ks_code ks__fw_run_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, const ks_node_info *ni,
                          ks_status *st, uint16_t *passed_count);
/* On Success with a nomination, result->victims lists the pods to evict (caller releases them
 * with ks__post_filter_result_clear). */
ks_code ks__fw_run_post_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                               const ks_filter_outcome *o, ks_post_filter_result *result,
                               ks_status *st);
void ks__post_filter_result_clear(ks_post_filter_result *r);
ks_code ks__fw_run_pre_score(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                             const ks_node_info *const *nodes, size_t n, ks_status *st);
/* Where RunScorePlugins writes, sized by the caller for n nodes and the profile's Score plugins. */
typedef struct ks_score_scratch {
    int64_t *scores;     /* [score plugin][node]: after NormalizeScore (a skipped plugin: 0) */
    int64_t *raw;        /* NULL, or [score plugin][node]: gets the raw scores before Normalize */
    ks_node_score *norm; /* [node]: NormalizeScore's working list */
    int64_t *totals;     /* [node]: the weighted sums */
} ks_score_scratch;
/* Upstream RunScorePlugins: Score on every node (in parallel, on fw->parallelizer), then per
 * plugin NormalizeScore, the [0, 100] range check and the weight. KS_ERROR with st on a failure.
 * Called with at least one Score plugin (upstream prioritizeNodes gives every node score 1
 * without any). */
ks_code ks__fw_run_score_plugins(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                 const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                 ks_status *st);
ks_code ks__fw_run_reserve(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                           ks_status *st);
void ks__fw_run_unreserve(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node);
/* Permit: KS_WAIT with the longest timeout in *timeout_ms and the waiting plugins' names in
 * *waiting (bit i of the permit list). */
ks_code ks__fw_run_permit(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                          int64_t *timeout_ms, uint64_t *waiting, ks_status *st);
/* PreBindPreFlight (upstream v1.36 RunPreBindPreFlights), binding thread: KS_SUCCESS when any
 * PreBind plugin will have work, KS_SKIP when none will (or there are none), KS_ERROR when one
 * failed or answered what PreBindPreFlight may not answer (st: upstream's message). Each plugin
 * that answered Skip is recorded in cycle->skip_pre_bind and not run by ks__fw_run_pre_bind. A
 * plugin with a PreBind and no pre_bind_pre_flight slot (NULL, or a module built before ABI 1.4)
 * counts as Success: the host cannot tell that its PreBind has nothing to do. */
ks_code ks__fw_run_pre_bind_pre_flights(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                                        ks_status *st);
/* PreBind: every plugin in order except those PreBindPreFlight skipped. */
ks_code ks__fw_run_pre_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                            ks_status *st);
ks_code ks__fw_run_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node, ks_status *st);
void ks__fw_run_post_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node);
ks_code ks__fw_run_pre_enqueue(ks_framework *fw, ks_pod *pod, ks_status *st, int *plugin_index);

/* OpportunisticBatching for this profile (upstream: the feature gate, on by default since
 * v1.35): on creates the batch and computes the signers (computeBatchablePlugins); off leaves
 * both unset, so SignPod returns NULL and the cycle asks for no hint. Main thread, once, before
 * any cycle. 0 or KS_ENOMEM. */
int ks__fw_setup_batching(ks_framework *fw, int on);
/* upstream SignPod: the pod's signature (the JSON object of "v1.Pod.Spec.SchedulerName" and every
 * signer's fragments, keys sorted as encoding/json writes a map), or NULL when signatures are
 * off for the profile or a plugin refuses the pod. Caller owns the result (ks__pod_sig_unref).
 * Any thread (the plugins' sign slots are pure). */
struct ks_pod_sig *ks__fw_sign_pod(ks_framework *fw, const ks_pod *pod);
/* ks_host_api.sign_add: copies the fragment into sig (first of a key wins). */
void ks__signature_add(ks_signature *sig, const char *key, const char *value_json);
/* upstream v1.37 RunRawScorePlugins: the non-skipped Score plugins on nodes (in parallel), raw,
 * into scores ([score plugin][node]; a skipped plugin's row is left 0). */
ks_code ks__fw_run_raw_score_plugins(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                     const ks_node_info *const *nodes, size_t n, int64_t *scores,
                                     ks_status *st);
/* upstream v1.37 NormalizeScores: NormalizeScore, range check and weights over raw scores already
 * in out->scores ([score plugin][node]), totals into out->totals; the batch's rescore. */
ks_code ks__fw_normalize_scores(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                ks_status *st);

/* The thread-local name of the plugin currently called (for log prefixes). */
const char *ks__fw_current_plugin(void);
void ks__fw_set_current_plugin(const char *name);

#endif
