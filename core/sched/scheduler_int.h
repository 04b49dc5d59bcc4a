/*
 * Private state of the scheduler, shared by its files. Calls between them go one way:
 *
 *   schedule_one.c (the scheduling cycle)
 *     -> scheduler.c (construction, events, queue hooks, the seeded generator)
 *     -> binding.c (the binding cycle, Permit waiting)
 *     -> failure.c (handleSchedulingFailure), nominator.c, fit_error.c, cycle_scratch.c,
 *        sched_metrics.c, parallelize.c, framework.c
 *
 * scheduler.c calls binding.c, nominator.c, cycle_scratch.c and sched_metrics.c; binding.c calls
 * failure.c and sched_metrics.c; failure.c calls sched_metrics.c; none calls back up.
 */
#ifndef KS_CORE_SCHEDULER_INT_H
#define KS_CORE_SCHEDULER_INT_H

#include <pthread.h>
#include <stdint.h>

#include "sched/batch.h"
#include "sched/framework_metrics.h"
#include "sched/parallelize.h"
#include "sched/reload.h"
#include "sched/scheduler.h"
#include "api/store.h"
#include "util/strmap.h"

/* Per-cycle scratch, reused across cycles (sized to the snapshot). */
typedef struct ks_cycle_scratch {
    size_t cap;                    /* nodes */
    const ks_node_info **cand;     /* candidate nodes in evaluation order */
    ks_status *statuses;           /* per candidate position */
    uint16_t *passed;              /* per candidate position */
    uint8_t *feasible_flag;        /* per candidate position */
    const ks_node_info **feasible; /* compacted */
    size_t score_cap;              /* plugins * nodes */
    int64_t *scores;
    int64_t *totals;
    ks_node_score *norm;
    /* For ks_filter_outcome: by snapshot index */
    ks_status *by_index;
    uint8_t *evaluated;
    ks_scored_node *heap; /* [feasible]: host selection's sorted nodes (batch.h) */
    int64_t *raw;         /* [score plugin][feasible]: raw scores, kept for the batch cache */
} ks_cycle_scratch;

typedef struct ks_binding_job ks_binding_job;

/* pod_index.c: the pods of a namespace by one label's value, for the label keys ks_pods_each was
 * asked about (at most 8; more are answered by walking every pod). Its own mutex. */
typedef struct ks_pod_index {
    pthread_mutex_t mu;
    ks_sym keys[8];
    size_t nkeys;
    ks_strmap groups; /* "<ns>\x1f<key>\x1f<value>" (symbol ids) -> uid list */
} ks_pod_index;

struct ks_profile_set;

struct ks_scheduler {
    /* The current profile set's configuration, profile count and frameworks (reload.c): written
     * by the scheduling thread's swap under the queue's lock and set_mu; read freely by the
     * scheduling thread, by the queue hooks (under the queue's lock), else under set_mu. */
    const ks_config *cfg;
    size_t nprofiles;
    ks_framework **fw;
    struct ks_profile_set *set;
    /* reload.c: a leaf lock over set (see above), pending, retired, orphans and every set's
     * reference count; set_cv: a pending set was swapped in. */
    pthread_mutex_t set_mu;
    pthread_cond_t set_cv;
    int set_mu_ready;
    struct ks_profile_set *pending;   /* handed over by ks__scheduler_request_swap */
    struct ks_profile_set *retired;   /* replaced, freed once no binding cycle uses them */
    struct ks_profile_set *swap_from; /* the set being replaced, during the swap */
    uint64_t next_generation;
    ks_swap_result last_swap;
    ks_pod **orphans; /* pods whose profile went away, to report once */
    size_t norphans, orphans_cap, orphans_seen;
    int batching;       /* OpportunisticBatching for every set's frameworks */
    int sample_percent; /* ks_scheduler_opts.plugin_metrics_sample_percent */
    ks_cache *cache;
    ks_store *store;                /* Namespaces, Services, ReplicaSets, PDBs, ... */
    struct ks_dra_manager *dra;     /* DRA's in-flight allocations (dra_manager.h) */
    struct ks_custom_store *custom; /* objects of the resources plugins watch (ABI 1.8) */
    /* PodGroups and their members (podgroups.c), NULL while GenericWorkload is off */
    struct ks_podgroup_store *podgroups;
    ks_pod_index pod_index; /* pods by (namespace, label) for ks_pods_each */
    ks_queue *queue;
    ks_snapshot *snap;
    ks_parallelizer par; /* the Filter/Score worker pool; the frameworks borrow it for Score */
    int explain;
    uint64_t rng;
    size_t next_start_index;
    uint64_t seq;
    ks_source_ops source;
    ks_observer observer;
    int64_t (*now_ns)(void *ctx);
    void *clock_ctx;
    ks_cycle_scratch scratch;
    ks_pod *deferred_unref; /* released after the current cycle (scheduling thread) */
    /* Workload-aware preemption simulates on the snapshot itself: while set, a cycle does not
     * bring the snapshot up to date and an assume or its revert also changes the snapshot
     * (schedule_one.c; scheduling thread). */
    int snap_frozen;
    uint64_t podgroup_cycles;          /* PodGroup scheduling cycles so far (scheduling thread) */
    int victims_leave_on_delete_event; /* ks_scheduler_opts */

    /* Nominator (upstream PodNominator): uid -> pod copy with status.nominatedNodeName, one
     * reference each. Written by the scheduling thread and by pod-delete events: nom_mu. */
    pthread_mutex_t nom_mu;
    ks_strmap nominated;
    int nom_ready; /* nom_mu and nominated are initialised */
    /* Per-cycle view handed to plugins and the Filter workers (scheduling thread). */
    ks_cycle_hooks hooks;
    ks_nominated_set *nom_sets;
    size_t nom_sets_cap;
    const ks_pod **nom_pods;
    size_t nom_pods_cap;

    /* Binding pool (binding.c). */
    pthread_mutex_t bind_mu;
    pthread_cond_t bind_cv;   /* Permit waiters: allow/reject/timeout */
    pthread_cond_t jobs_cv;   /* binders: a job was queued, or quit */
    pthread_cond_t bind_idle; /* wait_bindings: nothing in flight */
    ks_binding_job *jobs_head, *jobs_tail;
    /* With a simulated source, jobs a Permit decision released during a scheduling cycle wait
     * here until the cycle ends (ks__binding_hold), and one binder runs them in that order: the
     * same file and seed give the same decisions and messages on every run. */
    int hold_released;
    ks_binding_job *held_head, *held_tail;
    size_t inflight_bindings;
    size_t parked_bindings;  /* of those, parked on Permit's Wait */
    int bind_inline;         /* ks_scheduler_opts.bind_inline */
    int nnn_for_expectation; /* the NominatedNodeNameForExpectation gate at creation */
    int bind_quit;
    int bind_stopping; /* ks__binding_stopping: PreBind sleeps end, Permit waits are rejected */
    int nbinders, binders_cap;
    int idle_binders; /* binders waiting for a job */
    pthread_t *binders;
    pthread_t permit_timer; /* rejects parked Permit waiters at their deadline */
    int has_permit_timer;
    ks_strmap waiting; /* uid -> waiting pod (Permit), guarded by bind_mu */
    ks_strmap binding; /* uid -> every job submitted to the pool until freed, guarded by bind_mu */

    /* Metrics (sched_metrics.c): the registered families (NULL: no metrics, no timing) and the
     * series and counters the scheduler keeps of them (NULL without metrics). */
    const struct ks_sched_metrics *metrics;
    struct ks_sched_metrics_state *mstate;
};

/* reload.c: the first profile set (from the scheduler's configuration), and freeing every set at
 * the end. hold: the current set gains a reference (a binding cycle begins; scheduling thread);
 * release: one is dropped (the binding cycle ended; any thread). */
int ks__profiles_init(ks_scheduler *s, const ks_config *cfg, ks_profile_plan *plans,
                      void (*release)(void *owner), void *owner, char *err, size_t errlen);
void ks__profiles_destroy(ks_scheduler *s);
struct ks_profile_set *ks__profiles_hold(ks_scheduler *s);
void ks__profiles_release(ks_scheduler *s, struct ks_profile_set *set);

/* sched_metrics.c: the scheduler's own metrics (each a no-op without them). */
enum { KS_RESULT_SCHEDULED, KS_RESULT_UNSCHEDULABLE, KS_RESULT_ERROR };
int ks__sched_metrics_init(ks_scheduler *s, const struct ks_sched_metrics *m, int sample_percent);
void ks__sched_metrics_free(ks_scheduler *s);
/* A pod was popped: the attempt's start, and it no longer counts in unschedulable_pods for the
 * plugins that rejected it last time (upstream Pop). */
void ks__sched_metrics_attempt_begin(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp);
/* scheduling_algorithm_duration_seconds: the attempt's start to the end of SchedulePod (and of
 * PostFilter on a failure). */
void ks__sched_metrics_algorithm_done(ks_scheduler *s, const ks_queued_pod *qp);
/* schedule_attempts_total + scheduling_attempt_duration_seconds for one attempt under fw. */
void ks__sched_metrics_attempt(ks_scheduler *s, ks_framework *fw, int result, int64_t start_ns);
/* A pod is bound: attempts histogram and SLI duration (queue clock). */
void ks__sched_metrics_bound(ks_scheduler *s, const ks_queued_pod *qp);
/* A failed attempt (upstream handleSchedulingFailure then AddUnschedulableIfNotPresent): the
 * attempt by result, and the rejector plugins counted in unschedulable_pods until the next pop. */
void ks__sched_metrics_failure(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, int rejected,
                               uint64_t rejectors);
/* scheduler_goroutines{binding}: +1 when a binding cycle starts, -1 when it ends. */
void ks__sched_metrics_binding(ks_scheduler *s, int delta);
/* permit_wait_duration_seconds: a binding cycle waited on Permit since start_ns; allowed or not. */
void ks__sched_metrics_permit_wait(ks_scheduler *s, int allowed, int64_t start_ns);
/* The queue's incoming and inflight hooks. */
void ks__sched_metrics_incoming(void *ctx, const ks_queued_pod *qp, int where, const char *event,
                                int new_entity);
void ks__sched_metrics_inflight(void *ctx, const char *event, int delta);
/* Starts a cycle: the sampling decision and the evaluation rows for cycle. */
void ks__sched_metrics_cycle_begin(ks_scheduler *s, ks_cycle *cycle);
/* Ends a cycle: adds its evaluation counts. */
void ks__sched_metrics_cycle_end(ks_scheduler *s, ks_framework *fw);

/* cycle_scratch.c: sizes the scratch for nodes nodes and nscore Score plugins; 0 or KS_ENOMEM. */
int ks__scratch_reserve(ks_cycle_scratch *sc, size_t nodes, size_t nscore);
void ks__scratch_free(ks_cycle_scratch *sc);

/* scheduler.c: the seeded generator (ctx: the scheduler); the scheduling thread only. */
uint64_t ks__sched_rand(void *ctx);

/* binding.c */
int ks__binding_start(ks_scheduler *s, int workers);
void ks__binding_stop(ks_scheduler *s);
/* Hands an assumed pod to the binding pool (takes ownership of cycle, assumed, qp). waiting:
 * Permit returned Wait for the plugins in that bit set of the permit list, for timeout_ms. */
void ks__binding_submit(ks_scheduler *s, ks_framework *fw, ks_cycle *cycle, ks_queued_pod *qp,
                        ks_pod *assumed, uint64_t seq, uint64_t waiting, int64_t timeout_ms);
/* Preemption chose a pod that waits on Permit: reject it as if plugin had (upstream
 * waitingPod.Reject). 1 when it was waiting (its binding cycle then fails and forgets it). */
int ks__binding_reject_waiting(ks_scheduler *s, const char *uid, const char *plugin,
                               const char *msg);
/* ks_cycle_hooks.binding_sleep: up to ns; KS_ENOTFOUND early when the pod of uid was deleted
 * (ks__binding_pod_deleted), KS_ECANCELED when the pool stops; 0 at once in simulate. Binding
 * threads. */
int ks__binding_sleep(void *ctx, const char *uid, int64_t ns);
/* The scheduler is shutting down (before waiting for the bindings in flight): PreBinds
 * sleeping in ks_binding_sleep get KS_ECANCELED at once and pods waiting on Permit are rejected,
 * as upstream's cancelled context ends them, so that shutdown does not wait bindTimeoutSeconds.
 * Any thread. */
void ks__binding_stopping(ks_scheduler *s);
/* Preemption chose a pod in PreBind (its PreBindPreFlight had work): cancel its binding cycle
 * with msg as the cause (upstream PodInPreBind.CancelPod). 1 when it was in PreBind and not yet
 * prebound (its binding cycle then fails and forgets it), 0: delete it instead. */
int ks__binding_cancel_prebind(ks_scheduler *s, const char *uid, const char *msg);
/* The pod of uid was deleted: a binding cycle sleeping in its PreBind ends early. Any thread. */
void ks__binding_pod_deleted(ks_scheduler *s, const char *uid);
int ks__permit_hook(void *ctx, const char *uid, const char *plugin, int allow, const char *msg);
/* ks_waiting_pods_each: fn for each pod waiting on Permit, in the order they began to wait,
 * without bind_mu held (fn may allow or reject). Any thread. */
size_t ks__binding_waiting_each(ks_scheduler *s, ks_waiting_pod_fn fn, void *ctx);
/* Simulated sources only (no-op otherwise): while on, jobs that leave Permit's waiting are held
 * instead of run; off runs the held ones on the calling thread in the order they were released
 * (and those they release in turn). The scheduling thread turns it on for each cycle. */
void ks__binding_hold(ks_scheduler *s, int on);
/* pod_index.c. Any thread. each: fn for each pod of ns whose label key is value (resolved to the
 * cache's object, else the queue's), outside the index's lock; the count, or (size_t)-1 when key
 * cannot be indexed (the caller walks every pod instead). */
void ks__pod_index_init(ks_pod_index *ix);
void ks__pod_index_destroy(ks_pod_index *ix);
void ks__pod_index_add(ks_pod_index *ix, const ks_pod *pod);
void ks__pod_index_remove(ks_pod_index *ix, const ks_pod *pod);
size_t ks__pod_index_each(ks_scheduler *s, ks_sym ns, ks_sym key, ks_sym value, ks_pod_visit_fn fn,
                          void *fctx);
/* The scheduler's clock (the queue's: virtual in simulate), ns. Any thread. */
int64_t ks__sched_now(ks_scheduler *s);
/* The pods a cycle asked to activate (ks_activate_pod) go to activeQ now, and the cycle's list
 * is emptied (upstream SchedulingQueue.Activate(podsToActivate.Map), then a new map). Thread of
 * the cycle. */
void ks__sched_activate_requested(ks_scheduler *s, ks_cycle *cycle);

/* failure.c: the failure path shared by both cycles (upstream handleSchedulingFailure). */
void ks__handle_failure(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, ks_code code,
                        const char *message, uint64_t rejectors, uint64_t pending,
                        ks_sym nominated);
/* The rejector bit of a plugin instance (by name) in fw; 0 for NULL or an unknown name. */
uint64_t ks__plugin_bit(ks_framework *fw, const char *plugin_name);

/* nominator.c (upstream PodNominator). */
void ks__nominator_init(ks_scheduler *s);
void ks__nominator_destroy(ks_scheduler *s);
void ks__nominator_add(ks_scheduler *s, ks_pod *pod_with_nomination);
void ks__nominator_remove(ks_scheduler *s, const char *uid);
/* Pods of lower priority nominated to node lose their nomination (upstream prepareCandidate). */
void ks__nominator_clear_lower(ks_scheduler *s, ks_sym node, int32_t priority);
/* Fills s->hooks with the nominated pods (references taken) for one cycle; release after. */
void ks__nominator_snapshot(ks_scheduler *s);
void ks__nominator_release(ks_scheduler *s);

/* schedule_one_podgroup.c: the PodGroup scheduling cycle's pieces (GenericWorkload). */
typedef struct ks__pg_cycle_group {
    ks_sym ns, name;
    struct ks_pod_group *pg; /* one reference, for the cycle (ks__podgroup_unref) */
} ks__pg_cycle_group;
/* Whether pod goes through the PodGroup cycle: the gate is on, it names a PodGroup that exists,
 * and its profile has GangScheduling (the one PlacementFeasible plugin); g gets the group, with a
 * reference to its PodGroup the caller releases. */
int ks__podgroup_cycle_wanted(ks_scheduler *s, ks_framework *fw, const ks_pod *pod,
                              ks__pg_cycle_group *g);
/* The group's other pending members of qp's profile, taken out of the queue (in flight, as
 * popped): *out (malloc'd, caller frees) and the count; *scheduled gets the members assumed or
 * bound before this cycle (upstream ScheduledPodsCount). Scheduling thread. */
size_t ks__podgroup_take_siblings(ks_scheduler *s, const ks__pg_cycle_group *g,
                                  const ks_queued_pod *qp, ks_queued_pod ***out, int *scheduled);
/* upstream RunPlacementFeasiblePlugins: the profile's GangScheduling (the only PlacementFeasible
 * plugin, as upstream) on the group with scheduled and remaining members: KS_SUCCESS, KS_WAIT,
 * KS_UNSCHEDULABLE or KS_ERROR (any other code), its reasons in msg. KS_SUCCESS without it. */
ks_code ks__podgroup_placement_feasible(ks_framework *fw, const ks__pg_cycle_group *g,
                                        int scheduled, int remaining, char *msg, size_t len);
/* upstream updatePodGroupCondition: the PodGroup's PodGroupInitiallyScheduled condition (True
 * "Scheduled", or False with reason "Unschedulable" / "SchedulerError" and message), patched on
 * its status subresource through the source (live mode only), unless unchanged or the group was
 * once scheduled and this says otherwise. Scheduling thread. */
void ks__podgroup_set_condition(ks_scheduler *s, const ks__pg_cycle_group *g, int scheduled,
                                const char *reason, const char *message);

/* podgroup_preemption.c: workload-aware preemption's model (GenericWorkload). */
/* upstream util.PodGroupPriority: spec.priority, 0 when unset (or pg NULL). */
int32_t ks__podgroup_priority(const struct ks_pod_group *pg);
/* A preemption unit (upstream victim): one pod, or the pods on nodes of one PodGroup whose
 * spec.disruptionMode is `all`. pods: references, in one array shared by the units of one
 * collection. */
typedef struct ks__pg_victim {
    ks_pod **pods;
    size_t npods;
    int32_t priority; /* the pod's, or its PodGroup's */
    int is_group;     /* upstream's PodGroup type: its pods name a group (alone or together) */
    int64_t earliest_start; /* status.startTime (Unix ns) of its oldest pod; INT64_MAX: none */
    size_t order;           /* where its first pod is in the snapshot: the tie-break */
} ks__pg_victim;
/* upstream preemptorEligibleToPreemptOthers for a group whose pending members are
 * members[0..n): NULL when eligible, else the reason. */
const char *ks__pg_preemptor_ineligible(ks_pod *const *members, size_t n);
/* upstream isOngoingPreemption: a member's nominated node still holds a lower-priority pod that
 * an earlier preemption is terminating (DisruptionTarget, PreemptionByScheduler). */
int ks__pg_ongoing_preemption(ks_scheduler *s, const ks_snapshot *snap, int32_t priority,
                              ks_pod *const *members, size_t n);
/* upstream GetAllPossibleVictims filtered by isPreemptionAllowed: the units of the snapshot of
 * lower priority than priority, in snapshot order. *out: free with ks__pg_victims_free. 0 or
 * KS_ENOMEM. */
int ks__pg_victims_collect(ks_scheduler *s, const ks_snapshot *snap, int32_t priority,
                           ks__pg_victim **out, size_t *nout);
void ks__pg_victims_free(ks__pg_victim *v, size_t n); /* NULL: no-op */
/* upstream MoreImportantVictim (v1.37.2): priority, then the PodGroup type before the Pod type,
 * then the larger, then the older (earliest start). */
int ks__pg_more_important_victim(const ks__pg_victim *a, const ks__pg_victim *b);
/* Sorts most important first (ties keep snapshot order). */
void ks__pg_victims_sort(ks__pg_victim *v, size_t n);
/* upstream filterVictimsWithPDBViolation over units in their order: violating[i] = 1 when
 * evicting unit i after the ones before it takes a matching budget below zero. 0 or KS_ENOMEM. */
int ks__pg_victims_pdb(const ks__pg_victim *v, size_t n, const ks_pdb *pdbs, size_t npdbs,
                       uint8_t *violating);

/* fit_error.c: upstream FitError.Error(): "0/N nodes are available: ..." with the reasons of
 * the node statuses counted and sorted as text, or PreFilter's message; then post (PostFilter's
 * message) when not empty. Caller frees; NULL on out of memory. */
char *ks__fit_error_message(size_t num_all, const ks_status *prefilter, const ks_status *statuses,
                            size_t nstatuses, const ks_status *absent, size_t nabsent,
                            const char *post);

#endif
