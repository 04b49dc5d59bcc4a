/*
 * The scheduling cycle, as upstream's schedule_one.go tells it: pop, snapshot, PreFilter, Filter
 * (parallel, adaptive number of nodes, rotating start), PostFilter on failure, PreScore, Score
 * (parallel), NormalizeScore, weighted sum, selectHost, assume, Reserve, Permit, then hand off to
 * the binding cycle. Runs on the scheduling thread only; Filter and Score calls run on the pool.
 *
 * Determinism: Filter chunks are claimed in index order and the feasible nodes kept are the first
 * numNodesToFind in that order, so a run gives what a sequential upstream run would, whatever the
 * thread timing; ties in selectHost use the scheduler's seeded generator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "util/errors.h"
#include "util/log.h"
#include "sched/scheduler_int.h"

#define MIN_FEASIBLE_NODES_TO_FIND 100
#define MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND 5

int32_t ks__num_feasible_nodes_to_find(int32_t percentage, int32_t num_all_nodes)
{
    if (num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND)
        return num_all_nodes;
    int32_t p = percentage;
    if (p == 0) {
        p = 50 - num_all_nodes / 125;
        if (p < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
            p = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
    }
    int64_t k = (int64_t)num_all_nodes * p / 100;
    if (k < MIN_FEASIBLE_NODES_TO_FIND)
        return MIN_FEASIBLE_NODES_TO_FIND;
    return (int32_t)k;
}

static uint64_t next_rand(ks_scheduler *s);
uint64_t ks__sched_rand(void *ctx) { return next_rand(ctx); }

static uint64_t next_rand(ks_scheduler *s)
{
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void ks__scratch_free(ks_cycle_scratch *sc)
{
    free(sc->cand);
    free(sc->statuses);
    free(sc->passed);
    free(sc->feasible_flag);
    free(sc->feasible);
    free(sc->scores);
    free(sc->totals);
    free(sc->norm);
    free(sc->by_index);
    free(sc->evaluated);
    memset(sc, 0, sizeof(*sc));
}

static int scratch_reserve(ks_cycle_scratch *sc, size_t nodes, size_t nscore)
{
    if (nodes > sc->cap) {
        size_t cap = nodes;
        ks__scratch_free(sc);
        sc->cand = malloc(cap * sizeof(*sc->cand));
        sc->statuses = malloc(cap * sizeof(*sc->statuses));
        sc->passed = malloc(cap * sizeof(*sc->passed));
        sc->feasible_flag = malloc(cap);
        sc->feasible = malloc(cap * sizeof(*sc->feasible));
        sc->totals = malloc(cap * sizeof(*sc->totals));
        sc->norm = malloc(cap * sizeof(*sc->norm));
        sc->by_index = malloc(cap * sizeof(*sc->by_index));
        sc->evaluated = malloc(cap);
        if (!sc->cand || !sc->statuses || !sc->passed || !sc->feasible_flag || !sc->feasible ||
            !sc->totals || !sc->norm || !sc->by_index || !sc->evaluated)
            return KS_ENOMEM;
        sc->cap = cap;
    }
    size_t need = (nscore ? nscore : 1) * (nodes ? nodes : 1);
    if (need > sc->score_cap) {
        free(sc->scores);
        sc->scores = malloc(need * sizeof(int64_t));
        if (!sc->scores)
            return KS_ENOMEM;
        sc->score_cap = need;
    }
    return 0;
}

/* ---- the failure message (upstream FitError.Error) ----------------------------------------- */

typedef struct reason_count {
    const char *reason;
    size_t count;
} reason_count;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void count_reason(reason_count **rc, size_t *n, size_t *cap, const char *reason, size_t k)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*rc)[i].reason, reason) == 0) {
            (*rc)[i].count += k;
            return;
        }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        reason_count *r = realloc(*rc, nc * sizeof(*r));
        if (!r)
            return;
        *rc = r;
        *cap = nc;
    }
    (*rc)[(*n)++] = (reason_count){reason, k};
}

/* "0/N nodes are available: <prefilter msg>." or "... <count> <reason>, ... ." + " " + post. */
static char *fit_error_message(size_t num_all, const ks_status *prefilter,
                               const ks_status *statuses, size_t nstatuses,
                               const ks_status *absent, size_t nabsent, const char *post)
{
    size_t len = 256 + (post ? strlen(post) : 0);
    reason_count *rc = NULL;
    size_t n = 0, cap = 0;
    char **parts = NULL;
    char *out;
    if (prefilter) {
        char msg[KS_STATUS_BUF + 64];
        ks__status_message(prefilter, msg, sizeof(msg));
        len += strlen(msg);
        out = malloc(len);
        if (!out)
            return NULL;
        snprintf(out, len, "0/%zu nodes are available: %s.%s%s", num_all, msg, post && *post ? " " : "",
                 post ? post : "");
        return out;
    }
    for (size_t i = 0; i < nstatuses; i++)
        for (const char *r = NULL; (r = ks__status_next(&statuses[i], r));)
            count_reason(&rc, &n, &cap, r, 1);
    if (absent && nabsent)
        for (const char *r = NULL; (r = ks__status_next(absent, r));)
            count_reason(&rc, &n, &cap, r, nabsent);
    parts = calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; parts && i < n; i++) {
        size_t l = strlen(rc[i].reason) + 24;
        parts[i] = malloc(l);
        if (parts[i])
            snprintf(parts[i], l, "%zu %s", rc[i].count, rc[i].reason);
        len += l + 2;
    }
    if (parts)
        qsort(parts, n, sizeof(char *), cmp_str); /* upstream sort.Strings: as text */
    out = malloc(len);
    if (out) {
        size_t off = (size_t)snprintf(out, len, "0/%zu nodes are available:", num_all);
        for (size_t i = 0; parts && i < n; i++)
            off += (size_t)snprintf(out + off, len - off, "%s%s", i ? ", " : " ", parts[i] ? parts[i] : "");
        if (n)
            off += (size_t)snprintf(out + off, len - off, ".");
        if (post && *post)
            snprintf(out + off, len - off, " %s", post);
    }
    for (size_t i = 0; parts && i < n; i++)
        free(parts[i]);
    free(parts);
    free(rc);
    return out;
}

/* ---- Filter -------------------------------------------------------------------------------- */

typedef struct filter_job {
    ks_scheduler *s;
    ks_framework *fw;
    ks_cycle *cycle;
    ks_pod *pod;
    size_t ncand, start, want;
    _Atomic size_t found;
    _Atomic int error;
} filter_job;

static int filter_one(void *ctx, size_t i, int worker)
{
    filter_job *j = ctx;
    ks_cycle_scratch *sc = &j->s->scratch;
    size_t pos = i; /* position in evaluation order */
    const ks_node_info *ni = sc->cand[(j->start + i) % j->ncand];
    ks_status *st = &sc->statuses[pos];
    (void)worker;
    ks__status_reset(st);
    ks_code code = ks__fw_run_filter_with_nominated(j->fw, j->cycle, j->pod, ni, st, &sc->passed[pos]);
    sc->feasible_flag[pos] = code == KS_SUCCESS;
    if (code == KS_ERROR) {
        j->error = 1;
        return 1;
    }
    if (code == KS_SUCCESS && ++j->found >= j->want)
        return 1; /* enough: stop claiming new chunks */
    return 0;
}

/* ---- Score --------------------------------------------------------------------------------- */

typedef struct score_job {
    ks_scheduler *s;
    ks_framework *fw;
    ks_cycle *cycle;
    ks_pod *pod;
    size_t nfeasible;
    int instr; /* count evaluations or time plugins (metrics) */
    _Atomic int error;
    ks_status err_status;
    pthread_mutex_t err_mu;
} score_job;

/* One node's scores. instr is a constant at each call below: the copy the scheduler runs without
 * metrics (or in an unsampled cycle without evaluation counters) has no metrics code at all. */
static inline __attribute__((always_inline)) int score_node(score_job *j, size_t i, int worker,
                                                            const int instr)
{
    ks_cycle_scratch *sc = &j->s->scratch;
    const ks_node_info *ni = sc->feasible[i];
    uint32_t *evals = instr && j->cycle->evals
                          ? j->cycle->evals + ((size_t)KS_EVAL_SCORE * j->cycle->eval_rows + (size_t)worker) *
                                                  KS_EVAL_STRIDE
                          : NULL;
    for (size_t p = 0; p < j->fw->n[KS_PT_SCORE]; p++) {
        int64_t v = 0;
        if (!(j->cycle->skip_score & (1ull << p))) {
            ks_plugin_inst *in = j->fw->pt[KS_PT_SCORE][p].inst;
            ks_status st;
            ks__status_reset(&st);
            ks_code code;
            ks__fw_set_current_plugin(in->name);
            if (instr && evals) /* plugin_evaluation_total, this worker's row */
                evals[in->index]++;
            if (instr && j->cycle->sampled) {
                int64_t t0 = ks__mono_ns();
                code = in->desc->score(in->self, j->cycle, j->pod, ni, &v, &st);
                ks__fw_metrics_plugin(j->fw->metrics, in->index, KS_EP_SCORE, code, t0);
            } else {
                code = in->desc->score(in->self, j->cycle, j->pod, ni, &v, &st);
            }
            ks__fw_set_current_plugin(NULL);
            if (code != KS_SUCCESS) {
                pthread_mutex_lock(&j->err_mu);
                if (!j->error) {
                    char msg[KS_STATUS_BUF], wrapped[KS_STATUS_BUF + 64];
                    ks__status_message(&st, msg, sizeof(msg));
                    snprintf(wrapped, sizeof(wrapped), "running Score plugin %s: %s", in->name, msg);
                    ks__status_reset(&j->err_status);
                    ks__status_add(&j->err_status, wrapped);
                    j->error = 1;
                }
                pthread_mutex_unlock(&j->err_mu);
                return 1;
            }
        }
        sc->scores[p * j->nfeasible + i] = v;
    }
    return 0;
}

static __attribute__((noinline)) int score_one_instrumented(score_job *j, size_t i, int worker)
{
    return score_node(j, i, worker, 1);
}

static int score_one(void *ctx, size_t i, int worker)
{
    score_job *j = ctx;
    if (__builtin_expect(j->instr, 0))
        return score_one_instrumented(j, i, worker);
    return score_node(j, i, worker, 0);
}

/* ---- the cycle ----------------------------------------------------------------------------- */

static size_t chunk_size(size_t n, int workers)
{
    /* upstream: max(1, min(sqrt(n), n/parallelism + 1)) */
    size_t sq = 1;
    while ((sq + 1) * (sq + 1) <= n)
        sq++;
    size_t per = n / (size_t)workers + 1;
    size_t c = sq < per ? sq : per;
    return c ? c : 1;
}

static uint64_t rejectors_of(ks_framework *fw, const ks_status *st, uint64_t *pending)
{
    if (!st->plugin || (st->code != KS_UNSCHEDULABLE && st->code != KS_UNSCHEDULABLE_AND_UNRESOLVABLE &&
                        st->code != KS_PENDING))
        return 0;
    uint64_t bit = ks__plugin_bit(fw, st->plugin);
    if (st->code == KS_PENDING)
        *pending |= bit;
    return bit;
}

static void report_cycle(ks_scheduler *s, uint64_t seq, ks_pod *pod, ks_framework *fw,
                         const char *result, ks_sym node, const char *msg, const ks_explain *ex)
{
    if (s->observer.cycle_done)
        s->observer.cycle_done(s->observer.ctx, seq, pod, fw->profile_name, result, node, msg,
                               s->explain ? ex : NULL);
}

/* PostFilter succeeded with a nomination: evict the victims, nominate the pod (it is retried with
 * that node first), and tell the observer. */
static void apply_preemption(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, uint64_t seq,
                             ks_post_filter_result *r, const char *plugin)
{
    for (size_t i = 0; i < r->nvictims; i++) {
        ks_pod *v = r->victims[i];
        if (ks__log_enabled(2))
            ks__log('I', NULL, "Preempting pod %s on node %s for pod %s", v->key, ks__sym_str(r->nominated), qp->pod->key);
        /* Upstream PreemptPod: a victim waiting on Permit is not bound yet; it is rejected
         * ("preempted") instead of deleted, and its binding cycle forgets it. Live sources only:
         * simulate drops victims at once and keeps its results as they were. */
        if (s->victims_leave_on_delete_event &&
            ks__binding_reject_waiting(s, v->uid, plugin ? plugin : "DefaultPreemption", "preempted")) {
            if (ks__log_enabled(2))
                ks__log('I', NULL, "Preemptor pod %s rejected a waiting pod %s on node %s", qp->pod->key, v->key,
                        ks__sym_str(r->nominated));
            if (s->source.preempted_waiting)
                s->source.preempted_waiting(s->source.ctx, v, qp->pod, r->nominated);
            continue;
        }
        /* Without a deletion event to come (simulate) the victim leaves now; a live source
         * keeps it counted until the API server says it is gone (upstream), so the preemptor
         * waits for it rather than over-commit the node. */
        if (!s->victims_leave_on_delete_event)
            ks__scheduler_on_pod_delete(s, v);
        if (s->source.evict)
            s->source.evict(s->source.ctx, v, qp->pod, r->nominated);
    }
    ks__nominator_clear_lower(s, r->nominated, qp->pod->priority);
    ks_pod *np = ks__pod_with_nominated(qp->pod, r->nominated);
    if (np) {
        /* The cycle still reads the old object: release it when the cycle is over. */
        s->deferred_unref = qp->pod;
        qp->pod = np;
        ks__nominator_add(s, np);
    }
    if (s->observer.preempted)
        s->observer.preempted(s->observer.ctx, seq, qp->pod, r->nominated, r->victims, r->nvictims);
    (void)fw;
}

static int schedule_pod(ks_scheduler *s, ks_queued_pod *qp);

int ks__scheduler_schedule_one(ks_scheduler *s, int block)
{
    ks_queued_pod *qp = ks__queue_pop(s->queue, block);
    if (!qp)
        return 0;
    ks_framework *fw = s->fw[qp->profile];
    if (s->metrics) {
        qp->attempt_start_ns = ks__mono_ns();
        /* upstream Pop: the pod no longer counts for the plugins that rejected it last time */
        ks__fw_metrics_unschedulable(fw->metrics, qp->unschedulable_counted, -1);
        qp->unschedulable_counted = 0;
    }
    ks__nominator_snapshot(s);
    int r = schedule_pod(s, qp);
    ks__sched_metrics_cycle_end(s, fw); /* qp may be gone; fw is not */
    ks__nominator_release(s);
    ks__pod_unref(s->deferred_unref);
    s->deferred_unref = NULL;
    return r;
}

/* scheduling_algorithm_duration_seconds: from the start of the attempt to the end of
 * SchedulePod (upstream observes it there on success, and on failure once PostFilter has run). */
#define ALGORITHM_DONE(s, qp)                                                                      \
    do {                                                                                           \
        if ((s)->metrics)                                                                          \
            ks__metrics_observe((s)->metrics->scheduling_algorithm_duration_solo,                   \
                                ks__seconds_since((qp)->attempt_start_ns));                        \
    } while (0)

static int schedule_pod(ks_scheduler *s, ks_queued_pod *qp)
{
    ks_cycle_scratch *sc = &s->scratch;
    ks_explain ex;
    ks_status st;
    ks_cycle *cycle = NULL;
    char *message = NULL;
    uint64_t rejectors = 0, pending = 0;
    ks_sym nominated = KS_SYM_ABSENT;
    ks_code code;
    size_t nfeasible = 0;
    ks_post_filter_result pfr;

    ks_framework *fw = s->fw[qp->profile];
    ks_pod *pod = qp->pod;
    uint64_t seq = ++s->seq;
    memset(&ex, 0, sizeof(ex));
    ex.fw = fw;

    if (pod->terminating || ks__cache_is_assumed(s->cache, pod->uid)) {
        ks__queue_done(s->queue, qp);
        return 1;
    }
    if (ks__cache_update_snapshot(s->cache, s->snap) != 0 ||
        scratch_reserve(sc, s->snap->nnodes, fw->n[KS_PT_SCORE]) != 0) {
        ALGORITHM_DONE(s, qp);
        ks__handle_failure(s, fw, qp, KS_ERROR, "out of memory updating the snapshot", 0, 0, KS_SYM_ABSENT);
        report_cycle(s, seq, pod, fw, "Error", KS_SYM_ABSENT, "out of memory updating the snapshot", NULL);
        return 1;
    }
    size_t num_all = s->snap->nnodes;
    if (num_all == 0) {
        const char *m = "no nodes available to schedule pods";
        ALGORITHM_DONE(s, qp);
        report_cycle(s, seq, pod, fw, "Unschedulable", KS_SYM_ABSENT, m, NULL);
        ks__handle_failure(s, fw, qp, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, m, 0, 0, KS_SYM_ABSENT);
        return 1;
    }
    cycle = ks__cycle_new(s->snap, pod);
    if (cycle) {
        cycle->fw = fw;
        cycle->hooks = &s->hooks;
        ks__sched_metrics_cycle_begin(s, cycle);
    }
    if (!cycle) {
        ALGORITHM_DONE(s, qp);
        ks__handle_failure(s, fw, qp, KS_ERROR, "out of memory", 0, 0, KS_SYM_ABSENT);
        return 1;
    }

    /* PreFilter. */
    ks_prefilter_result pf = {0};
    int restricted = 0;
    code = ks__fw_run_pre_filter(fw, cycle, pod, &pf, &restricted, &st);
    if (code != KS_SUCCESS) {
        if (code == KS_ERROR) {
            char msg[KS_STATUS_BUF];
            ks__status_message(&st, msg, sizeof(msg));
            ALGORITHM_DONE(s, qp);
            report_cycle(s, seq, pod, fw, "Error", KS_SYM_ABSENT, msg, NULL);
            ks__handle_failure(s, fw, qp, KS_ERROR, msg, 0, 0, KS_SYM_ABSENT);
            free(pf.nodes);
            ks__cycle_free(cycle);
            return 1;
        }
        /* Every node gets PreFilter's status; PostFilter may still help. */
        rejectors = rejectors_of(fw, &st, &pending);
        ks_filter_outcome o = {s->snap, NULL, NULL, &st};
        ks_status post;
        char post_msg[KS_STATUS_BUF] = "";
        ks_code pc = ks__fw_run_post_filter(fw, cycle, pod, &o, &pfr, &post);
        nominated = pfr.nominated;
        if (pc != KS_SUCCESS)
            ks__status_message(&post, post_msg, sizeof(post_msg));
        message = fit_error_message(num_all, &st, NULL, 0, NULL, 0, post_msg);
        ALGORITHM_DONE(s, qp);
        ex.prefilter_status = &st;
        ex.skip_filter = cycle->skip_filter;
        report_cycle(s, seq, pod, fw, "Unschedulable", KS_SYM_ABSENT, message, &ex);
        if (pc == KS_SUCCESS && nominated != KS_SYM_ABSENT)
            apply_preemption(s, fw, qp, seq, &pfr, post.plugin);
        ks__post_filter_result_clear(&pfr);
        ks__handle_failure(s, fw, qp, code, message, rejectors, pending, nominated);
        free(message);
        free(pf.nodes);
        ks__cycle_free(cycle);
        return 1;
    }

    /* Candidate nodes: the snapshot, or the PreFilter result's subset in snapshot order. */
    size_t ncand = 0;
    if (restricted) {
        for (size_t i = 0; i < num_all; i++) {
            const ks_node_info *ni = s->snap->nodes[i];
            size_t lo = 0, hi = pf.n;
            int found = 0;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (pf.nodes[mid] == ni->name) {
                    found = 1;
                    break;
                }
                if (pf.nodes[mid] < ni->name)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (found)
                sc->cand[ncand++] = ni;
        }
    } else {
        memcpy(sc->cand, s->snap->nodes, num_all * sizeof(*sc->cand));
        ncand = num_all;
    }
    free(pf.nodes);
    pf.nodes = NULL;

    /* A pod nominated to a node (after preemption) tries that node first. */
    const ks_node_info *nominated_ni = NULL;
    if (pod->nominated_node_name != KS_SYM_EMPTY)
        nominated_ni = ks__snapshot_find(s->snap, pod->nominated_node_name);
    if (nominated_ni) {
        ks_status nst;
        uint16_t passed;
        ks__status_reset(&nst);
        /* upstream evaluateNominatedNode runs findNodesThatPassFilters on that one node: a timed
         * Filter point when there are Filter plugins */
        int64_t ft0 = fw->metrics && fw->n[KS_PT_FILTER] ? ks__mono_ns() : 0;
        ks__sched_metrics_parallel(s, KS_OP_FILTER, ft0 ? 1 : 0, +1);
        ks_code nc = ks__fw_run_filter_with_nominated(fw, cycle, pod, nominated_ni, &nst, &passed);
        ks__sched_metrics_parallel(s, KS_OP_FILTER, ft0 ? 1 : 0, -1);
        if (ft0)
            ks__fw_metrics_ep(fw->metrics, KS_EP_FILTER, nc == KS_ERROR ? KS_ERROR : KS_SUCCESS, ft0);
        if (nc == KS_SUCCESS) {
            sc->feasible[0] = nominated_ni;
            nfeasible = 1;
        }
    }

    size_t nevaluated = 0, start = 0;
    if (nfeasible == 0 && ncand > 0) {
        size_t want = (size_t)ks__num_feasible_nodes_to_find(
            fw->percentage_of_nodes_to_score >= 0 ? fw->percentage_of_nodes_to_score
                                                   : s->cfg->percentage_of_nodes_to_score,
            (int32_t)ncand);
        if (fw->n[KS_PT_SCORE] == 0)
            want = 1;
        start = s->next_start_index % ncand;
        if (fw->n[KS_PT_FILTER] == 0) {
            for (size_t i = 0; i < ncand && nfeasible < want; i++) {
                sc->feasible[nfeasible++] = sc->cand[(start + i) % ncand];
                ks__status_reset(&sc->statuses[i]);
                sc->passed[i] = 0;
                sc->feasible_flag[i] = 1;
                nevaluated = i + 1;
            }
        } else {
            filter_job job = {.s = s, .fw = fw, .cycle = cycle, .pod = pod, .ncand = ncand,
                              .start = start, .want = want};
            /* upstream findNodesThatPassFilters: the Filter point is timed once for all nodes */
            int64_t ft0 = fw->metrics ? ks__mono_ns() : 0;
            ks__sched_metrics_parallel(s, KS_OP_FILTER, ncand, +1);
            size_t processed = ks__parallel_until(s->pool, ncand, chunk_size(ncand, ks__pool_workers(s->pool)),
                                                  filter_one, &job);
            ks__sched_metrics_parallel(s, KS_OP_FILTER, ncand, -1);
            if (ft0)
                ks__fw_metrics_ep(fw->metrics, KS_EP_FILTER, job.error ? KS_ERROR : KS_SUCCESS, ft0);
            if (job.error) {
                char msg[KS_STATUS_BUF] = "";
                for (size_t i = 0; i < processed; i++)
                    if (sc->statuses[i].code == KS_ERROR) {
                        ks__status_message(&sc->statuses[i], msg, sizeof(msg));
                        break;
                    }
                ALGORITHM_DONE(s, qp);
                report_cycle(s, seq, pod, fw, "Error", KS_SYM_ABSENT, msg, NULL);
                ks__handle_failure(s, fw, qp, KS_ERROR, msg, 0, 0, KS_SYM_ABSENT);
                ks__cycle_free(cycle);
                return 1;
            }
            /* Keep the first `want` feasible nodes in evaluation order; later ones are as if
             * never evaluated (what a sequential run would do). */
            for (size_t i = 0; i < processed; i++) {
                nevaluated = i + 1;
                if (sc->feasible_flag[i]) {
                    sc->feasible[nfeasible++] = sc->cand[(start + i) % ncand];
                    if (nfeasible == want)
                        break;
                }
            }
        }
        /* upstream: nextStartNodeIndex = (start + processed) % len(allNodes) */
        s->next_start_index = (s->next_start_index + nevaluated) % num_all;
    }

    /* Explain: evaluated nodes in order, with their statuses. */
    const ks_node_info **evaluated = NULL;
    if (s->explain) {
        evaluated = malloc((nevaluated ? nevaluated : 1) * sizeof(*evaluated));
        for (size_t i = 0; evaluated && i < nevaluated; i++)
            evaluated[i] = sc->cand[(start + i) % ncand];
        ex.nevaluated = evaluated ? nevaluated : 0;
        ex.evaluated = evaluated;
        ex.passed = sc->passed;
        ex.statuses = sc->statuses;
        ex.skip_filter = cycle->skip_filter;
    }

    if (nfeasible == 0) {
        /* FitError: node statuses of the evaluated nodes, plus nodes PreFilter excluded. */
        for (size_t i = 0; i < nevaluated; i++)
            rejectors |= rejectors_of(fw, &sc->statuses[i], &pending);
        ks_status absent;
        size_t nabsent = num_all - ncand;
        ks__status_reset(&absent);
        if (nabsent) {
            /* upstream: nodes outside PreFilterResult get "node(s) didn't satisfy plugin(s) [...]" */
            absent.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            ks__status_add(&absent, pf.excluded_msg);
        }
        /* PostFilter sees every node's verdict by snapshot index. */
        for (size_t i = 0; i < num_all; i++) {
            ks__status_reset(&sc->by_index[i]);
            sc->evaluated[i] = 0;
        }
        for (size_t i = 0; i < nevaluated; i++) {
            const ks_node_info *ni = sc->cand[(start + i) % ncand];
            for (size_t k = 0; k < num_all; k++)
                if (s->snap->nodes[k] == ni) {
                    sc->by_index[k] = sc->statuses[i];
                    sc->evaluated[k] = 1;
                    break;
                }
        }
        ks_filter_outcome o = {s->snap, sc->by_index, sc->evaluated, NULL};
        ks_status post;
        char post_msg[KS_STATUS_BUF] = "";
        ks_code pc = ks__fw_run_post_filter(fw, cycle, pod, &o, &pfr, &post);
        nominated = pfr.nominated;
        if (pc != KS_SUCCESS)
            ks__status_message(&post, post_msg, sizeof(post_msg));
        message = fit_error_message(num_all, NULL, sc->statuses, nevaluated, &absent, nabsent, post_msg);
        ALGORITHM_DONE(s, qp);
        report_cycle(s, seq, pod, fw, "Unschedulable", KS_SYM_ABSENT, message, &ex);
        if (pc == KS_SUCCESS && nominated != KS_SYM_ABSENT)
            apply_preemption(s, fw, qp, seq, &pfr, post.plugin);
        ks__post_filter_result_clear(&pfr);
        ks__handle_failure(s, fw, qp, KS_UNSCHEDULABLE, message, rejectors, pending, nominated);
        free(message);
        free(evaluated);
        ks__cycle_free(cycle);
        return 1;
    }

    /* Score, or take the only feasible node. */
    const ks_node_info *host = sc->feasible[0];
    size_t nscore = fw->n[KS_PT_SCORE];
    if (nfeasible > 1) {
        code = ks__fw_run_pre_score(fw, cycle, pod, (const ks_node_info *const *)sc->feasible, nfeasible, &st);
        score_job job = {.s = s, .fw = fw, .cycle = cycle, .pod = pod, .nfeasible = nfeasible,
                         .instr = cycle->evals || cycle->sampled};
        /* upstream RunScorePlugins (Score, NormalizeScore, weights) is one timed point */
        int64_t score_t0 = fw->metrics && code == KS_SUCCESS && nscore > 0 ? ks__mono_ns() : 0;
        pthread_mutex_init(&job.err_mu, NULL);
        if (code == KS_SUCCESS && nscore > 0) {
            ks__sched_metrics_parallel(s, KS_OP_SCORE, nfeasible, +1);
            ks__parallel_until(s->pool, nfeasible, chunk_size(nfeasible, ks__pool_workers(s->pool)), score_one, &job);
            ks__sched_metrics_parallel(s, KS_OP_SCORE, nfeasible, -1);
        }
        if (code == KS_SUCCESS && job.error) {
            st = job.err_status;
            code = KS_ERROR;
        }
        pthread_mutex_destroy(&job.err_mu);
        /* NormalizeScore per plugin, range check, weighted sum. */
        for (size_t f = 0; f < nfeasible; f++)
            sc->totals[f] = nscore ? 0 : 1; /* no Score plugins: every node scores 1 */
        for (size_t p = 0; code == KS_SUCCESS && p < nscore; p++) {
            ks_point_entry *pe = &fw->pt[KS_PT_SCORE][p];
            int64_t *row = &sc->scores[p * nfeasible];
            if (cycle->skip_score & (1ull << p))
                continue; /* contributes 0 */
            if (pe->inst->desc->normalize_score) {
                for (size_t f = 0; f < nfeasible; f++)
                    sc->norm[f] = (ks_node_score){sc->feasible[f], row[f]};
                ks__status_reset(&st);
                ks__fw_set_current_plugin(pe->inst->name);
                int64_t nt0 = cycle->sampled ? ks__mono_ns() : 0;
                ks_code nc = pe->inst->desc->normalize_score(pe->inst->self, cycle, pod, sc->norm, nfeasible, &st);
                if (cycle->sampled)
                    ks__fw_metrics_plugin(fw->metrics, pe->inst->index, KS_EP_SCORE_NORMALIZE, nc, nt0);
                ks__fw_set_current_plugin(NULL);
                if (nc != KS_SUCCESS) {
                    char msg[KS_STATUS_BUF], w[KS_STATUS_BUF + 64];
                    ks__status_message(&st, msg, sizeof(msg));
                    snprintf(w, sizeof(w), "running Normalize on Score plugin %s: %s", pe->inst->name, msg);
                    ks__status_reset(&st);
                    ks__status_add(&st, w);
                    code = KS_ERROR;
                    break;
                }
                for (size_t f = 0; f < nfeasible; f++)
                    row[f] = sc->norm[f].score;
            }
            for (size_t f = 0; f < nfeasible; f++) {
                if (row[f] > KS_MAX_NODE_SCORE || row[f] < KS_MIN_NODE_SCORE) {
                    char w[KS_STATUS_BUF];
                    snprintf(w, sizeof(w), "plugin %s returns an invalid score %lld, it should in the range of [0, 100] after normalizing",
                             pe->inst->name, (long long)row[f]);
                    ks__status_reset(&st);
                    ks__status_add(&st, w);
                    code = KS_ERROR;
                    break;
                }
                sc->totals[f] += row[f] * pe->weight;
            }
        }
        if (score_t0)
            ks__fw_metrics_ep(fw->metrics, KS_EP_SCORE, code, score_t0);
        if (code != KS_SUCCESS) {
            char msg[KS_STATUS_BUF];
            ks__status_message(&st, msg, sizeof(msg));
            ALGORITHM_DONE(s, qp);
            report_cycle(s, seq, pod, fw, "Error", KS_SYM_ABSENT, msg, NULL);
            ks__handle_failure(s, fw, qp, KS_ERROR, msg, 0, 0, KS_SYM_ABSENT);
            free(evaluated);
            ks__cycle_free(cycle);
            return 1;
        }
        /* selectHost: the best total, ties broken uniformly (reservoir sampling). */
        int64_t best = sc->totals[0];
        size_t cnt = 1, sel = 0;
        for (size_t f = 1; f < nfeasible; f++) {
            if (sc->totals[f] > best) {
                best = sc->totals[f];
                sel = f;
                cnt = 1;
            } else if (sc->totals[f] == best) {
                cnt++;
                if (next_rand(s) % cnt == 0)
                    sel = f;
            }
        }
        host = sc->feasible[sel];
        ex.scored = 1;
        ex.scores = sc->scores;
        ex.totals = sc->totals;
        ex.skip_score = cycle->skip_score;
    }
    ex.nfeasible = nfeasible;
    ex.feasible = (const ks_node_info *const *)sc->feasible;
    ALGORITHM_DONE(s, qp);

    /* Assume, Reserve, Permit. */
    ks_pod *assumed = ks__pod_with_node(pod, host->name);
    ks__nominator_remove(s, pod->uid); /* upstream DeleteNominatedPodIfExists */
    int arc = assumed ? ks__cache_assume_pod(s->cache, assumed) : KS_ENOMEM;
    if (arc != 0) {
        /* KS_EEXIST: the watch put it in the cache meanwhile (bound by someone else); upstream's
         * AssumePod error text. The queue has dropped it, so it is not retried. */
        char m[600];
        if (arc == KS_EEXIST)
            snprintf(m, sizeof(m), "pod %s(%s) is in the cache, so can't be assumed", pod->uid, pod->key);
        else
            snprintf(m, sizeof(m), "could not assume the pod in the scheduler cache: %s", ks__strerror(arc));
        ks__log('E', NULL, "Scheduler cache AssumePod failed: %s", m);
        ks__pod_unref(assumed);
        report_cycle(s, seq, pod, fw, "Error", KS_SYM_ABSENT, m, &ex);
        ks__handle_failure(s, fw, qp, KS_ERROR, m, 0, 0, KS_SYM_ABSENT);
        free(evaluated);
        ks__cycle_free(cycle);
        return 1;
    }
    code = ks__fw_run_reserve(fw, cycle, assumed, host->name, &st);
    int64_t timeout_ms = 0;
    uint64_t waiting = 0;
    if (code == KS_SUCCESS || code == KS_WAIT) {
        code = ks__fw_run_permit(fw, cycle, assumed, host->name, &timeout_ms, &waiting, &st);
    }
    if (code != KS_SUCCESS && code != KS_WAIT) {
        ks__fw_run_unreserve(fw, cycle, assumed, host->name);
        ks__cache_forget_pod(s->cache, assumed->uid);
        if (code == KS_ERROR) {
            char msg[KS_STATUS_BUF];
            ks__status_message(&st, msg, sizeof(msg));
            report_cycle(s, seq, pod, fw, "Error", KS_SYM_ABSENT, msg, &ex);
            ks__handle_failure(s, fw, qp, KS_ERROR, msg, 0, 0, KS_SYM_ABSENT);
        } else {
            rejectors = rejectors_of(fw, &st, &pending);
            message = fit_error_message(1, NULL, &st, 1, NULL, 0, NULL);
            report_cycle(s, seq, pod, fw, "Unschedulable", KS_SYM_ABSENT, message, &ex);
            ks__handle_failure(s, fw, qp, code, message, rejectors, pending, KS_SYM_ABSENT);
            free(message);
        }
        ks__pod_unref(assumed);
        free(evaluated);
        ks__cycle_free(cycle);
        return 1;
    }
    report_cycle(s, seq, pod, fw, NULL, host->name, NULL, &ex);
    free(evaluated);
    cycle->evals = NULL; /* the binding cycle counts no evaluations; the rows are the next cycle's */
    ks__binding_submit(s, fw, cycle, qp, assumed, seq, waiting, timeout_ms);
    return 1;
}
