/*
 * The scheduler's own metrics (upstream schedule_one.go, backend/queue): attempts and their
 * duration, pods bound (attempts histogram, SLI duration), pods entering the queues, binding
 * cycles in flight, and the per-cycle plumbing of the framework's sampled plugin timing and
 * evaluation counters. Every function is a no-op when the scheduler has no metrics.
 *
 * Threads: cycle_begin/cycle_end run on the scheduling thread; attempt and bound on the
 * scheduling or binding threads (they only update series already resolved, or resolve through
 * the framework's atomic tables); the queue hooks incoming and inflight run under the queue's
 * lock, which guards s->incoming and s->inflight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/scheduler_int.h"

int ks__sched_metrics_init(ks_scheduler *s, const ks_sched_metrics *m, int sample_percent)
{
    if (!m)
        return 0;
    s->metrics = m;
    s->sample_rng = (uint64_t)ks__mono_ns() ^ 0x5DEECE66Dull;
    for (size_t i = 0; i < s->nprofiles; i++)
        if (ks__fw_metrics_attach(s->fw[i], m) != 0)
            return KS_ENOMEM;
        else if (sample_percent > 0)
            s->fw[i]->metrics->sample_percent = sample_percent;
    s->eval_rows = (size_t)ks__pool_workers(s->pool);
    s->evals = calloc(KS_EVAL_KINDS * s->eval_rows * KS_EVAL_STRIDE, sizeof(*s->evals));
    if (!s->evals)
        return KS_ENOMEM;
    s->binding_goroutines = KS_METRICS_WITH(m->goroutines, KS_METRICS_OPERATION_BINDING);
    s->parallel_goroutines[KS_OP_FILTER] = KS_METRICS_WITH(m->goroutines, "Filter");
    s->parallel_goroutines[KS_OP_SCORE] = KS_METRICS_WITH(m->goroutines, "Score");
    return 0;
}

void ks__sched_metrics_free(ks_scheduler *s)
{
    free(s->evals); /* the frameworks free their own tables */
    s->evals = NULL;
}

void ks__sched_metrics_attempt(ks_scheduler *s, int profile, int result, int64_t start_ns)
{
    if (s->metrics && profile >= 0 && (size_t)profile < s->nprofiles)
        ks__fw_metrics_attempt(s->fw[profile]->metrics, result, start_ns);
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
    if (qp->initial_attempt_ns) {
        /* The queue's clock (monotonic in live mode) stamped the first entry into activeQ. */
        int64_t now = s->now_ns ? s->now_ns(s->clock_ctx) : ks__mono_ns();
        char label[16];
        attempts_label(qp->attempts, label);
        /* Resolved per bound pod (a mutex): once per pod, like the attempt itself. */
        ks__metrics_observe(KS_METRICS_WITH(s->metrics->pod_scheduling_sli_duration, label),
                            (double)(now - qp->initial_attempt_ns) / 1e9);
    }
}

void ks__sched_metrics_incoming(void *ctx, const ks_queued_pod *qp, int where, const char *event)
{
    static const char *const queues[] = {NULL, KS_METRICS_QUEUE_ACTIVE, KS_METRICS_QUEUE_BACKOFF,
                                         KS_METRICS_QUEUE_UNSCHEDULABLE,
                                         KS_METRICS_QUEUE_UNSCHEDULABLE};
    ks_scheduler *s = ctx;
    (void)qp;
    if (!s->metrics || where <= KS_Q_NONE || where > KS_Q_GATED || !event || !*event)
        return;
    size_t i = 0;
    while (i < s->nincoming && strcmp(s->incoming[i].event, event) != 0)
        i++;
    if (i == s->nincoming) {
        if (i == sizeof(s->incoming) / sizeof(s->incoming[0])) {
            /* More labels than the table holds: resolve every time (correct, only slower). */
            ks__metrics_inc(KS_METRICS_WITH(s->metrics->queue_incoming_pods, queues[where], event));
            return;
        }
        memset(&s->incoming[i], 0, sizeof(s->incoming[i]));
        s->incoming[i].event = event; /* static: the queue's literals and label table */
        s->nincoming++;
    }
    ks_metric **slot = &s->incoming[i].by_queue[where];
    if (!*slot)
        *slot = KS_METRICS_WITH(s->metrics->queue_incoming_pods, queues[where], event);
    ks__metrics_inc(*slot);
}

void ks__sched_metrics_cycle_begin(ks_scheduler *s, ks_cycle *cycle)
{
    if (!s->metrics)
        return;
    uint64_t z = (s->sample_rng += 0x9E3779B97F4A7C15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    cycle->sampled = z % 100 < (uint64_t)s->fw[0]->metrics->sample_percent;
    cycle->evals = s->evals;
    cycle->eval_rows = s->eval_rows;
}

void ks__sched_metrics_cycle_end(ks_scheduler *s, ks_framework *fw)
{
    if (!s->metrics)
        return;
    size_t row = s->eval_rows * KS_EVAL_STRIDE;
    for (int k = 0; k < KS_EVAL_KINDS; k++)
        ks__fw_metrics_add_evals(fw->metrics, k, s->evals + (size_t)k * row, s->eval_rows);
    memset(s->evals, 0, KS_EVAL_KINDS * row * sizeof(*s->evals));
}

void ks__sched_metrics_parallel(ks_scheduler *s, int op, size_t pieces, int sign)
{
    if (!s->metrics || pieces == 0 || (op != KS_OP_FILTER && op != KS_OP_SCORE))
        return;
    /* upstream chunkSizeFor / numWorkersForChunkSize with the configured parallelism (our pool may
     * run fewer threads: it is capped at the CPU count) */
    size_t par = s->cfg->parallelism > 0 ? (size_t)s->cfg->parallelism : 16;
    size_t sq = 1;
    while ((sq + 1) * (sq + 1) <= pieces)
        sq++;
    size_t chunk = pieces / par + 1 < sq ? pieces / par + 1 : sq;
    if (chunk < 1)
        chunk = 1;
    size_t chunks = (pieces + chunk - 1) / chunk;
    size_t workers = chunks < par ? chunks : par;
    ks__metrics_add(s->parallel_goroutines[op], sign * (double)workers);
}

void ks__sched_metrics_inflight(void *ctx, const char *event, int delta)
{
    ks_scheduler *s = ctx;
    if (!s->metrics || !event || !*event)
        return;
    size_t i = 0;
    while (i < s->ninflight && strcmp(s->inflight[i].event, event) != 0)
        i++;
    if (i == sizeof(s->inflight) / sizeof(s->inflight[0])) {
        ks__metrics_add(KS_METRICS_WITH(s->metrics->inflight_events, event), delta);
        return;
    }
    if (i == s->ninflight) {
        s->inflight[i].event = event;
        s->inflight[i].m = KS_METRICS_WITH(s->metrics->inflight_events, event);
        s->ninflight++;
    }
    ks__metrics_add(s->inflight[i].m, delta);
}
