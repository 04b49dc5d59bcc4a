/*
 * The scheduler's own metrics (upstream schedule_one.go, backend/queue): attempts and their
 * duration, pods bound (attempts histogram, SLI duration), pods entering the queues, binding
 * cycles in flight, and the per-cycle plumbing of the framework's sampled plugin timing and
 * evaluation counters. Every function is a no-op when the scheduler has no metrics.
 *
 * Threads: cycle_begin/cycle_end run on the scheduling thread; attempt and bound on the
 * scheduling or binding threads (they only update series already resolved, or resolve through
 * the framework's atomic tables); the queue hooks incoming and inflight run under the queue's
 * lock, which guards the incoming and inflight tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/scheduler_int.h"

/* What the scheduler keeps of its metrics: resolved series and the cycle's counters. */
struct ks_sched_metrics_state {
    uint64_t sample_rng; /* per-cycle sampling decision (scheduling thread) */
    uint32_t *evals;     /* [kind][worker][KS_EVAL_STRIDE] evaluation counts of a cycle */
    size_t eval_rows;    /* workers */
    ks_metric *binding_goroutines;
    /* queue_incoming_pods_total series by (queue, event label); the queue calls its hook under
     * its lock, which guards this table. */
    struct {
        const char *event;               /* a static label */
        ks_metric *by_queue[5];          /* ks_queue_where: queue_incoming_pods_total */
        ks_metric *entities_by_queue[5]; /* queue_incoming_entities_total{type="pod"} */
    } incoming[48];
    size_t nincoming;
    struct {
        const char *event; /* a static label */
        ks_metric *m;      /* scheduler_inflight_events{event} */
    } inflight[48];        /* guarded by the queue's lock, as incoming */
    size_t ninflight;
};

int ks__sched_metrics_init(ks_scheduler *s, const ks_sched_metrics *m, int sample_percent)
{
    if (!m)
        return 0;
    struct ks_sched_metrics_state *ms = calloc(1, sizeof(*ms));
    if (!ms)
        return KS_ENOMEM;
    s->metrics = m;
    s->mstate = ms;
    ms->sample_rng = (uint64_t)ks__clock_now_ns() ^ 0x5DEECE66Dull;
    for (size_t i = 0; i < s->nprofiles; i++)
        if (ks__fw_metrics_attach(s->fw[i], m) != 0)
            return KS_ENOMEM;
        else if (sample_percent > 0)
            s->fw[i]->metrics->sample_percent = sample_percent;
    ms->eval_rows = (size_t)ks__pool_workers(s->par.pool);
    ms->evals = calloc(KS_EVAL_KINDS * ms->eval_rows * KS_EVAL_STRIDE, sizeof(*ms->evals));
    if (!ms->evals)
        return KS_ENOMEM;
    ms->binding_goroutines = KS_METRICS_WITH(m->goroutines, KS_METRICS_OPERATION_BINDING);
    s->par.goroutines[KS_OP_FILTER] = KS_METRICS_WITH(m->goroutines, "Filter");
    s->par.goroutines[KS_OP_SCORE] = KS_METRICS_WITH(m->goroutines, "Score");
    return 0;
}

void ks__sched_metrics_free(ks_scheduler *s)
{
    if (!s->mstate)
        return;
    free(s->mstate->evals); /* the frameworks free their own tables */
    free(s->mstate);
    s->mstate = NULL;
}

void ks__sched_metrics_attempt_begin(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp)
{
    if (!s->metrics)
        return;
    qp->attempt_start_ns = ks__clock_now_ns();
    ks__fw_metrics_unschedulable(fw->metrics, qp->unschedulable_counted, -1);
    qp->unschedulable_counted = 0;
}

void ks__sched_metrics_algorithm_done(ks_scheduler *s, const ks_queued_pod *qp)
{
    if (s->metrics)
        ks__metrics_observe(s->metrics->scheduling_algorithm_duration_solo,
                            ks__seconds_since(qp->attempt_start_ns));
}

void ks__sched_metrics_failure(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, int rejected,
                               uint64_t rejectors)
{
    if (!s->metrics)
        return;
    ks__sched_metrics_attempt(s, fw, rejected ? KS_RESULT_UNSCHEDULABLE : KS_RESULT_ERROR,
                              qp->attempt_start_ns);
    /* (upstream does not requeue, nor count, a pod deleted meanwhile) */
    uint64_t add = rejected && !ks__queue_deleted_in_flight(s->queue, qp)
                       ? rejectors & ~qp->unschedulable_counted
                       : 0;
    ks__fw_metrics_unschedulable(fw->metrics, add, +1);
    qp->unschedulable_counted |= add;
}

void ks__sched_metrics_binding(ks_scheduler *s, int delta)
{
    if (s->mstate)
        ks__metrics_add(s->mstate->binding_goroutines, delta);
}

void ks__sched_metrics_permit_wait(ks_scheduler *s, int allowed, int64_t start_ns)
{
    if (s->metrics)
        ks__metrics_observe(
            KS_METRICS_WITH(s->metrics->permit_wait_duration,
                            ks__code_label(allowed ? KS_SUCCESS : KS_UNSCHEDULABLE)),
            ks__seconds_since(start_ns));
}

void ks__sched_metrics_attempt(ks_scheduler *s, ks_framework *fw, int result, int64_t start_ns)
{
    /* fw, not s->fw[profile]: a binding cycle keeps the profiles it began under (reload.h) */
    if (s->metrics && fw)
        ks__fw_metrics_attempt(fw->metrics, result, start_ns);
}

/* upstream getAttemptsLabel: the count, capped at "15+" to bound the cardinality. */
static void attempts_label(int32_t attempts, char out[16])
{
    if (attempts >= 15)
        snprintf(out, 16, "15+");
    else
        snprintf(out, 16, "%d", (int)attempts);
}

void ks__sched_metrics_bound(ks_scheduler *s, const ks_queued_pod *qp)
{
    if (!s->metrics)
        return;
    ks__metrics_observe(s->metrics->pod_scheduling_attempts_solo, (double)qp->attempts);
    if (qp->flushed) /* woken by the periodic flush, not by an event: a hint may be missing */
        ks__metrics_inc(s->metrics->pod_scheduled_after_flush_solo);
    if (qp->initial_attempt_ns) {
        /* The queue's clock (monotonic in live mode) stamped the first entry into activeQ. */
        int64_t now = s->now_ns ? s->now_ns(s->clock_ctx) : ks__clock_now_ns();
        char label[16];
        attempts_label(qp->attempts, label);
        /* Resolved per bound pod (a mutex): once per pod, like the attempt itself. */
        ks__metrics_observe(KS_METRICS_WITH(s->metrics->pod_scheduling_sli_duration, label),
                            (double)(now - qp->initial_attempt_ns) / 1e9);
    }
}

void ks__sched_metrics_incoming(void *ctx, const ks_queued_pod *qp, int where, const char *event,
                                int new_entity)
{
    static const char *const queues[] = {NULL, KS_METRICS_QUEUE_ACTIVE, KS_METRICS_QUEUE_BACKOFF,
                                         KS_METRICS_QUEUE_UNSCHEDULABLE,
                                         KS_METRICS_QUEUE_UNSCHEDULABLE};
    ks_scheduler *s = ctx;
    (void)qp;
    if (!s->metrics || where <= KS_Q_NONE || where > KS_Q_GATED || !event || !*event)
        return;
    struct ks_sched_metrics_state *ms = s->mstate;
    size_t i = 0;
    while (i < ms->nincoming && strcmp(ms->incoming[i].event, event) != 0)
        i++;
    if (i == ms->nincoming) {
        if (i == sizeof(ms->incoming) / sizeof(ms->incoming[0])) {
            /* More labels than the table holds: resolve every time (correct, only slower). */
            ks__metrics_inc(KS_METRICS_WITH(s->metrics->queue_incoming_pods, queues[where], event));
            if (new_entity != KS_QENTITY_NONE)
                ks__metrics_inc(
                    KS_METRICS_WITH(s->metrics->queue_incoming_entities, queues[where], event,
                                    new_entity == KS_QENTITY_PODGROUP ? KS_METRICS_ENTITY_PODGROUP
                                                                      : KS_METRICS_ENTITY_POD));
            return;
        }
        memset(&ms->incoming[i], 0, sizeof(ms->incoming[i]));
        ms->incoming[i].event = event; /* static: the queue's literals and label table */
        ms->nincoming++;
    }
    ks_metric **slot = &ms->incoming[i].by_queue[where];
    if (!*slot)
        *slot = KS_METRICS_WITH(s->metrics->queue_incoming_pods, queues[where], event);
    ks__metrics_inc(*slot);
    if (new_entity == KS_QENTITY_NONE)
        return;
    if (new_entity ==
        KS_QENTITY_PODGROUP) { /* a group's entry (GenericWorkload): rarer, resolved */
        ks__metrics_inc(KS_METRICS_WITH(s->metrics->queue_incoming_entities, queues[where], event,
                                        KS_METRICS_ENTITY_PODGROUP));
        return;
    }
    slot = &ms->incoming[i].entities_by_queue[where];
    if (!*slot)
        *slot = KS_METRICS_WITH(s->metrics->queue_incoming_entities, queues[where], event,
                                KS_METRICS_ENTITY_POD);
    ks__metrics_inc(*slot);
}

void ks__sched_metrics_cycle_begin(ks_scheduler *s, ks_cycle *cycle)
{
    if (!s->metrics)
        return;
    struct ks_sched_metrics_state *ms = s->mstate;
    uint64_t z = (ms->sample_rng += 0x9E3779B97F4A7C15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    cycle->sampled = z % 100 < (uint64_t)s->fw[0]->metrics->sample_percent;
    cycle->evals = ms->evals;
    cycle->eval_rows = ms->eval_rows;
}

void ks__sched_metrics_cycle_end(ks_scheduler *s, ks_framework *fw)
{
    if (!s->metrics)
        return;
    struct ks_sched_metrics_state *ms = s->mstate;
    size_t row = ms->eval_rows * KS_EVAL_STRIDE;
    for (int k = 0; k < KS_EVAL_KINDS; k++)
        ks__fw_metrics_add_evals(fw->metrics, k, ms->evals + (size_t)k * row, ms->eval_rows);
    memset(ms->evals, 0, KS_EVAL_KINDS * row * sizeof(*ms->evals));
}

void ks__sched_metrics_inflight(void *ctx, const char *event, int delta)
{
    ks_scheduler *s = ctx;
    if (!s->metrics || !event || !*event)
        return;
    struct ks_sched_metrics_state *ms = s->mstate;
    size_t i = 0;
    while (i < ms->ninflight && strcmp(ms->inflight[i].event, event) != 0)
        i++;
    if (i == sizeof(ms->inflight) / sizeof(ms->inflight[0])) {
        ks__metrics_add(KS_METRICS_WITH(s->metrics->inflight_events, event), delta);
        return;
    }
    if (i == ms->ninflight) {
        ms->inflight[i].event = event;
        ms->inflight[i].m = KS_METRICS_WITH(s->metrics->inflight_events, event);
        ms->ninflight++;
    }
    ks__metrics_add(ms->inflight[i].m, delta);
}
