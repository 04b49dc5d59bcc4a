/*
 * Private state of the scheduler, shared by scheduler.c (construction, events, queue hooks),
 * schedule_one.c (the scheduling cycle) and binding.c (the binding cycle, Permit waiting).
 */
#ifndef KS_CORE_SCHEDULER_INT_H
#define KS_CORE_SCHEDULER_INT_H

#include <pthread.h>
#include <stdint.h>

#include "sched/framework_metrics.h"
#include "util/parallel.h"
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
} ks_cycle_scratch;

typedef struct ks_binding_job ks_binding_job;

struct ks_scheduler {
    const ks_config *cfg;
    size_t nprofiles;
    ks_framework **fw;
    ks_cache *cache;
    ks_store *store; /* Namespaces, Services, ReplicaSets, PDBs, ... */
    ks_queue *queue;
    ks_snapshot *snap;
    ks_pool *pool;
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
    int victims_leave_on_delete_event; /* ks_scheduler_opts */

    /* Nominator (upstream PodNominator): uid -> pod copy with status.nominatedNodeName, one
     * reference each. Written by the scheduling thread and by pod-delete events: nom_mu. */
    pthread_mutex_t nom_mu;
    ks_strmap nominated;
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
    size_t inflight_bindings;
    int bind_quit;
    int nbinders;
    pthread_t *binders;
    pthread_t permit_timer; /* rejects parked Permit waiters at their deadline */
    int has_permit_timer;
    ks_strmap waiting; /* uid -> waiting pod (Permit), guarded by bind_mu */

    /* Metrics (sched_metrics.c); all NULL / 0 without them. */
    const struct ks_sched_metrics *metrics;
    uint64_t sample_rng;     /* per-cycle sampling decision (scheduling thread) */
    uint32_t *evals;         /* [kind][worker][KS_EVAL_STRIDE] evaluation counts of a cycle */
    size_t eval_rows;        /* workers */
    ks_metric *binding_goroutines;
    ks_metric *parallel_goroutines[2]; /* scheduler_goroutines{operation="Filter" / "Score"} */
    /* queue_incoming_pods_total series by (queue, event label); the queue calls its hook under its
     * lock, which guards this table. */
    struct {
        const char *event; /* a static label */
        ks_metric *by_queue[5]; /* ks_queue_where */
    } incoming[48];
    size_t nincoming;
    struct {
        const char *event; /* a static label */
        ks_metric *m;      /* scheduler_inflight_events{event} */
    } inflight[48];        /* guarded by the queue's lock, as incoming */
    size_t ninflight;
};

/* sched_metrics.c: the scheduler's own metrics (no-ops without them). */
enum { KS_RESULT_SCHEDULED, KS_RESULT_UNSCHEDULABLE, KS_RESULT_ERROR };
int ks__sched_metrics_init(ks_scheduler *s, const struct ks_sched_metrics *m, int sample_percent);
void ks__sched_metrics_free(ks_scheduler *s);
/* schedule_attempts_total + scheduling_attempt_duration_seconds for one attempt of qp. */
void ks__sched_metrics_attempt(ks_scheduler *s, int profile, int result, int64_t start_ns);
/* A pod is bound: attempts histogram and SLI duration (queue clock). */
void ks__sched_metrics_bound(ks_scheduler *s, const ks_queued_pod *qp);
/* The queue's incoming and inflight hooks. */
void ks__sched_metrics_incoming(void *ctx, const ks_queued_pod *qp, int where, const char *event);
void ks__sched_metrics_inflight(void *ctx, const char *event, int delta);
/* scheduler_goroutines of a parallel section of pieces (upstream Parallelizer.Until: +workers on
 * entry, -workers on exit, workers = min(parallelism, chunks)); no-op for 0 pieces. */
enum { KS_OP_FILTER, KS_OP_SCORE };
void ks__sched_metrics_parallel(ks_scheduler *s, int op, size_t pieces, int sign);
/* Starts a cycle: the sampling decision and the evaluation rows for cycle. */
void ks__sched_metrics_cycle_begin(ks_scheduler *s, ks_cycle *cycle);
/* Ends a cycle: adds its evaluation counts. */
void ks__sched_metrics_cycle_end(ks_scheduler *s, ks_framework *fw);

/* schedule_one.c */
void ks__scratch_free(ks_cycle_scratch *sc);

/* binding.c */
int ks__binding_start(ks_scheduler *s, int workers);
void ks__binding_stop(ks_scheduler *s);
/* Hands an assumed pod to the binding pool (takes ownership of cycle, assumed, qp). waiting:
 * Permit returned Wait for the plugins in that bit set of the permit list, for timeout_ms. */
/* Preemption chose a pod that waits on Permit: reject it as if plugin had (upstream
 * waitingPod.Reject). 1 when it was waiting (its binding cycle then fails and forgets it). */
int ks__binding_reject_waiting(ks_scheduler *s, const char *uid, const char *plugin, const char *msg);
void ks__binding_submit(ks_scheduler *s, ks_framework *fw, ks_cycle *cycle, ks_queued_pod *qp,
                        ks_pod *assumed, uint64_t seq, uint64_t waiting, int64_t timeout_ms);
int ks__permit_hook(void *ctx, const char *uid, const char *plugin, int allow, const char *msg);

/* scheduler.c: the failure path shared by both cycles. */
void ks__handle_failure(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, ks_code code,
                        const char *message, uint64_t rejectors, uint64_t pending,
                        ks_sym nominated);
uint64_t ks__plugin_bit(ks_framework *fw, const char *plugin_name);

/* scheduler.c: the nominator. */
void ks__nominator_add(ks_scheduler *s, ks_pod *pod_with_nomination);
void ks__nominator_remove(ks_scheduler *s, const char *uid);
/* Pods of lower priority nominated to node lose their nomination (upstream prepareCandidate). */
void ks__nominator_clear_lower(ks_scheduler *s, ks_sym node, int32_t priority);
/* Fills s->hooks with the nominated pods (references taken) for one cycle; release after. */
void ks__nominator_snapshot(ks_scheduler *s);
void ks__nominator_release(ks_scheduler *s);
uint64_t ks__sched_rand(void *ctx);

#endif
