/*
 * Upstream v1.37 framework/sorted_nodes.go (the heap behind host selection) and
 * framework/runtime/batch.go (OpportunisticBatch). See batch.h.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/batch.h"

/* ---- sorted nodes: Go's container/heap, step for step --------------------------------------- */

/* container/heap down(h, i0, n). */
static void heap_down(ks_scored_node *h, size_t i0, size_t n)
{
    size_t i = i0;
    for (;;) {
        size_t j1 = 2 * i + 1;
        if (j1 >= n)
            break;
        size_t j = j1; /* left child */
        size_t j2 = j1 + 1;
        if (j2 < n && ks__scored_node_less(&h[j2], &h[j1]))
            j = j2; /* right child */
        if (!ks__scored_node_less(&h[j], &h[i]))
            break;
        ks_scored_node t = h[i];
        h[i] = h[j];
        h[j] = t;
        i = j;
    }
}

void ks__sorted_nodes_init(ks_scored_node *h, size_t n)
{
    /* heap.Init: for i := n/2 - 1; i >= 0; i-- { down(h, i, n) } */
    for (size_t i = n / 2; i-- > 0;)
        heap_down(h, i, n);
}

ks_scored_node ks__sorted_nodes_pop(ks_scored_node *h, size_t *n)
{
    /* heap.Pop: Swap(0, n-1); down(h, 0, n-1); then the slice's Pop takes the last element. */
    size_t last = *n - 1;
    ks_scored_node t = h[0];
    h[0] = h[last];
    h[last] = t;
    heap_down(h, 0, last);
    *n = last;
    return h[last];
}

/* ---- opportunistic batching ----------------------------------------------------------------- */

#include <stdatomic.h>

#include "sched/cache.h"
#include "sched/framework.h"
#include "sched/framework_metrics.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/metrics.h"

const char *const ks__batch_flush_names[KS_BATCH_FLUSH_COUNT] = {
    "pod_failed",    "pod_skipped",     "pod_nominated",     "pod_incompatible",
    "expired",       "node_missing",    "filter_error",      "prescore_error",
    "rescore_error", "normalize_error", "pod_not_batchable", "empty_list"};
const char *const ks__batch_result_names[KS_BATCH_RESULT_COUNT] = {"no_hint", "hint_used",
                                                                   "hint_not_used"};

void ks__pod_sig_ref(ks_pod_sig *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
}

void ks__pod_sig_unref(ks_pod_sig *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        free(s);
}

/* The cached list (upstream batchState): rows of node name and raw scores, and the heap over
 * them (idx = row). */
typedef struct batch_state {
    ks_pod_sig *sig; /* NULL: no state (upstream b.state == nil) */
    int64_t created_ns;
    size_t nrows, cap;
    ks_sym *names;
    int64_t *raw; /* [row][score plugin] */
    ks_scored_node *heap;
    size_t nheap;
} batch_state;

struct ks_batch {
    ks_framework *fw;
    size_t nscore; /* the profile's Score plugins */
    batch_state st;
    /* upstream lastCycle */
    uint64_t last_cycle;
    ks_sym last_chosen;
    int last_succeeded;
    ks_batch_counts counts;
    /* Scratch for the rescore: [score plugin][m] raw, [m] nodes and totals. */
    size_t rcap;
    int64_t *rs, *rtot;
    ks_node_score *rnorm;
    const ks_node_info **rnodes;
    /* Series, resolved on first use (metrics only). */
    ks_metric *m_attempts[KS_BATCH_RESULT_COUNT], *m_flushed[KS_BATCH_FLUSH_COUNT];
    ks_metric *m_rescore_attempts, *m_rescore_duration, *m_store_duration, *m_hint_duration[2];
};

ks_batch *ks__batch_new(ks_framework *fw)
{
    ks_batch *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->fw = fw;
    b->nscore = fw->n[KS_PT_SCORE];
    b->last_chosen = KS_SYM_ABSENT;
    return b;
}

static void state_drop(batch_state *st)
{
    ks__pod_sig_unref(st->sig);
    st->sig = NULL;
    st->nheap = 0;
    st->nrows = 0;
}

void ks__batch_free(ks_batch *b)
{
    if (!b)
        return;
    state_drop(&b->st);
    free(b->st.names);
    free(b->st.raw);
    free(b->st.heap);
    free(b->rs);
    free(b->rtot);
    free(b->rnorm);
    free(b->rnodes);
    free(b);
}

const ks_batch_counts *ks__batch_counts(const ks_batch *b) { return &b->counts; }

static const ks_sched_metrics *metrics_of(const ks_batch *b)
{
    return b->fw->metrics ? b->fw->metrics->m : NULL;
}

static void count_attempt(ks_batch *b, ks_batch_result r)
{
    b->counts.attempts[r]++;
    const ks_sched_metrics *m = metrics_of(b);
    if (!m)
        return;
    if (!b->m_attempts[r])
        b->m_attempts[r] =
            KS_METRICS_WITH(m->batch_attempts, b->fw->profile_name, ks__batch_result_names[r]);
    ks__metrics_inc(b->m_attempts[r]);
}

/* upstream logUnusableState: the reason is counted; the caller drops or keeps the state as
 * upstream does (it drops it only in StoreScheduleResults; a refused hint leaves the state for
 * the next cycle to refuse again or replace). */
static void flushed(ks_batch *b, ks_batch_flush reason, uint64_t cycle)
{
    b->counts.flushed[reason]++;
    if (ks__log_enabled(4))
        ks__log('I', NULL,
                "OpportunisticBatch found unusable state profile=%s cycleCount=%llu "
                "reason=%s",
                b->fw->profile_name, (unsigned long long)cycle, ks__batch_flush_names[reason]);
    const ks_sched_metrics *m = metrics_of(b);
    if (!m)
        return;
    if (!b->m_flushed[reason])
        b->m_flushed[reason] = KS_METRICS_WITH(m->batch_cache_flushed, b->fw->profile_name,
                                               ks__batch_flush_names[reason]);
    ks__metrics_inc(b->m_flushed[reason]);
}

static void observe_since(ks_metric **slot, ks_metric_family *f, const char *const *values,
                          size_t nvalues, int64_t t0)
{
    if (!*slot)
        *slot = ks__metrics_child(f, values, nvalues);
    ks__metrics_observe(*slot, (double)(ks__clock_now_ns() - t0) / 1e9);
}

/* upstream batchStateCompatible. */
static int state_compatible(ks_batch *b, const ks_pod *pod, const ks_pod_sig *sig, uint64_t cycle,
                            int64_t now_ns)
{
    if (!b->st.sig || b->st.nheap == 0) /* stateEmpty */
        return 0;
    /* A pod of another profile (or a skipped one) had the cycle in between. */
    if (cycle != b->last_cycle + 1) {
        flushed(b, KS_BATCH_FLUSH_POD_SKIPPED, cycle);
        return 0;
    }
    if (!b->last_succeeded) {
        flushed(b, KS_BATCH_FLUSH_POD_FAILED, cycle);
        return 0;
    }
    if (pod->nominated_node_name != KS_SYM_EMPTY && pod->nominated_node_name != KS_SYM_ABSENT) {
        flushed(b, KS_BATCH_FLUSH_POD_NOMINATED, cycle);
        return 0;
    }
    if (!sig || sig->len != b->st.sig->len || memcmp(sig->json, b->st.sig->json, sig->len) != 0) {
        flushed(b, KS_BATCH_FLUSH_POD_INCOMPATIBLE, cycle);
        return 0;
    }
    /* upstream: time.Now().After(creationTime + maxBatchAge) */
    if (now_ns > b->st.created_ns + KS_BATCH_MAX_AGE_NS) {
        flushed(b, KS_BATCH_FLUSH_EXPIRED, cycle);
        return 0;
    }
    return 1;
}

static int rescore_reserve(ks_batch *b, size_t m)
{
    if (m <= b->rcap)
        return 0;
    size_t cap = 2 * m;
    int64_t *rs = realloc(b->rs, (b->nscore ? b->nscore : 1) * cap * sizeof(*rs));
    if (rs)
        b->rs = rs;
    int64_t *rt = realloc(b->rtot, cap * sizeof(*rt));
    if (rt)
        b->rtot = rt;
    ks_node_score *rn = realloc(b->rnorm, cap * sizeof(*rn));
    if (rn)
        b->rnorm = rn;
    const ks_node_info **nodes = realloc(b->rnodes, cap * sizeof(*nodes));
    if (nodes)
        b->rnodes = nodes;
    if (!rs || !rt || !rn || !nodes)
        return KS_ENOMEM;
    b->rcap = cap;
    return 0;
}

/* Room for one more row in the cached list. */
static int state_grow(batch_state *st, size_t rows, size_t nscore)
{
    if (rows <= st->cap)
        return 0;
    size_t cap = rows < 16 ? 16 : 2 * rows;
    ks_sym *names = realloc(st->names, cap * sizeof(*names));
    if (names)
        st->names = names;
    int64_t *raw = realloc(st->raw, cap * (nscore ? nscore : 1) * sizeof(*raw));
    if (raw)
        st->raw = raw;
    ks_scored_node *heap = realloc(st->heap, cap * sizeof(*heap));
    if (heap)
        st->heap = heap;
    if (!names || !raw || !heap)
        return KS_ENOMEM;
    st->cap = cap;
    return 0;
}

/* upstream rescoreHintedNode: the last chosen node still fits; PreScore over the cached nodes and
 * it (on a clone of the cycle state), its raw scores, NormalizeScores over all of them from the
 * cached raw scores, and a new heap in that order (the cached heap's order, then the node). */
static int rescore_hinted_node(ks_batch *b, ks_cycle *state, ks_pod *pod, const ks_snapshot *snap,
                               const ks_node_info *last, uint64_t cycle)
{
    const ks_sched_metrics *m = metrics_of(b);
    int64_t t0 = m ? ks__clock_now_ns() : 0;
    b->counts.rescore_attempts++;
    if (m) {
        if (!b->m_rescore_attempts)
            b->m_rescore_attempts = KS_METRICS_WITH(m->batch_rescore_attempts, b->fw->profile_name);
        ks__metrics_inc(b->m_rescore_attempts);
    }
    int ok = 0;
    ks_cycle *clone = NULL;
    batch_state *st = &b->st;
    size_t nc = st->nheap, M = nc + 1, P = b->nscore;
    if (rescore_reserve(b, M) != 0 || state_grow(st, st->nrows + 1, P) != 0) {
        flushed(b, KS_BATCH_FLUSH_RESCORE_ERROR, cycle); /* out of memory */
        goto out;
    }
    /* resolveCachedCandidates */
    for (size_t i = 0; i < nc; i++) {
        b->rnodes[i] = ks__snapshot_find(snap, st->names[st->heap[i].idx]);
        if (!b->rnodes[i]) {
            flushed(b, KS_BATCH_FLUSH_NODE_MISSING, cycle);
            goto out;
        }
    }
    b->rnodes[nc] = last;
    clone = ks__cycle_clone(state);
    ks_status sts;
    ks__status_reset(&sts);
    if (!clone || ks__fw_run_pre_score(b->fw, clone, pod, b->rnodes, M, &sts) != KS_SUCCESS) {
        flushed(b, KS_BATCH_FLUSH_PRESCORE_ERROR, cycle);
        goto out;
    }
    int64_t *fresh = b->rs; /* [p][1] for the one node, then overwritten below */
    int64_t fresh_row[64];
    if (ks__fw_run_raw_score_plugins(b->fw, clone, pod, &b->rnodes[nc], 1, fresh, &sts) !=
        KS_SUCCESS) {
        flushed(b, KS_BATCH_FLUSH_RESCORE_ERROR, cycle);
        goto out;
    }
    for (size_t p = 0; p < P && p < 64; p++)
        fresh_row[p] = fresh[p];
    /* The node's row joins the cached rows. */
    size_t row = st->nrows++;
    st->names[row] = last->name;
    for (size_t p = 0; p < P; p++)
        st->raw[row * P + p] = fresh_row[p];
    /* [p][i] raw for NormalizeScores, rows in heap order then the node. */
    for (size_t i = 0; i < M; i++) {
        size_t r = i < nc ? st->heap[i].idx : row;
        for (size_t p = 0; p < P; p++)
            b->rs[p * M + i] = st->raw[r * P + p];
    }
    ks_score_scratch out = {.scores = b->rs, .raw = NULL, .norm = b->rnorm, .totals = b->rtot};
    if (ks__fw_normalize_scores(b->fw, clone, pod, b->rnodes, M, &out, &sts) != KS_SUCCESS) {
        flushed(b, KS_BATCH_FLUSH_NORMALIZE_ERROR, cycle);
        goto out;
    }
    for (size_t i = 0; i < M; i++)
        st->heap[i] = (ks_scored_node){b->rtot[i], 0, (uint32_t)(i < nc ? st->heap[i].idx : row)};
    st->nheap = M;
    ks__sorted_nodes_init(st->heap, M);
    ok = 1;
out:
    ks__cycle_free(clone);
    if (m)
        observe_since(&b->m_rescore_duration, m->batch_rescore_duration,
                      (const char *const[]){b->fw->profile_name}, 1, t0);
    return ok;
}

/* upstream refreshHintCandidates: Filter (no nominated pods) on the last chosen node; if it still
 * fits it is rescored and competes again; a rejection leaves the cached nodes as they are. */
static int refresh_hint_candidates(ks_batch *b, ks_cycle *state, ks_pod *pod,
                                   const ks_snapshot *snap, uint64_t cycle)
{
    const ks_node_info *last = ks__snapshot_find(snap, b->last_chosen);
    if (!last) {
        flushed(b, KS_BATCH_FLUSH_NODE_MISSING, cycle);
        return 0;
    }
    ks_status st;
    uint16_t passed;
    ks__status_reset(&st);
    ks_code code = ks__fw_run_filter(b->fw, state, pod, last, &st, &passed);
    if (code == KS_SUCCESS)
        return rescore_hinted_node(b, state, pod, snap, last, cycle);
    if (code != KS_UNSCHEDULABLE && code != KS_UNSCHEDULABLE_AND_UNRESOLVABLE &&
        code != KS_PENDING) { /* !status.IsRejected() */
        flushed(b, KS_BATCH_FLUSH_FILTER_ERROR, cycle);
        return 0;
    }
    return 1;
}

ks_sym ks__batch_get_node_hint(ks_batch *b, ks_cycle *state, ks_pod *pod, const ks_pod_sig *sig,
                               const ks_snapshot *snap, uint64_t cycle, int64_t now_ns)
{
    const ks_sched_metrics *m = metrics_of(b);
    int64_t t0 = m ? ks__clock_now_ns() : 0;
    ks_sym hint = KS_SYM_ABSENT;
    if (state_compatible(b, pod, sig, cycle, now_ns) &&
        refresh_hint_candidates(b, state, pod, snap, cycle)) {
        ks_scored_node best = ks__sorted_nodes_pop(b->st.heap, &b->st.nheap);
        hint = b->st.names[best.idx];
        if (ks__log_enabled(3))
            ks__log('I', NULL,
                    "OpportunisticBatch provided node hint profile=%s pod=%s cycleCount=%llu "
                    "hint=%s remainingNodes=%zu",
                    b->fw->profile_name, pod->key, (unsigned long long)cycle, ks__sym_str(hint),
                    b->st.nheap);
    }
    if (hint == KS_SYM_ABSENT)
        count_attempt(b, KS_BATCH_NO_HINT);
    if (m) {
        int h = hint != KS_SYM_ABSENT;
        observe_since(&b->m_hint_duration[h], m->get_node_hint_duration,
                      (const char *const[]){h ? "hint" : "no_hint", b->fw->profile_name}, 2, t0);
    }
    return hint;
}

void ks__batch_store(ks_batch *b, ks_pod_sig *sig, ks_sym hinted, ks_sym chosen,
                     const ks_scored_node *rest, size_t nrest, const ks_node_info *const *feasible,
                     const int64_t *raw, size_t nfeasible, uint64_t cycle, int64_t now_ns)
{
    const ks_sched_metrics *m = metrics_of(b);
    int64_t t0 = m ? ks__clock_now_ns() : 0;
    b->last_cycle = cycle;
    b->last_chosen = chosen;
    b->last_succeeded = 1;
    if (hinted != KS_SYM_ABSENT && hinted == chosen) {
        /* The hint was used: the cached list (already popped) stays. */
        count_attempt(b, KS_BATCH_HINT_USED);
        b->counts.batched_pods++;
    } else {
        if (hinted != KS_SYM_ABSENT)
            count_attempt(b, KS_BATCH_HINT_NOT_USED);
        batch_state *st = &b->st;
        if (sig && nrest > 0 && state_grow(st, nrest, b->nscore) == 0) {
            /* The remaining sorted nodes become the state, in their heap order. */
            size_t P = b->nscore;
            for (size_t k = 0; k < nrest; k++) {
                uint32_t f = rest[k].idx;
                st->names[k] = feasible[f]->name;
                for (size_t p = 0; p < P; p++)
                    st->raw[k * P + p] = raw[p * nfeasible + f];
                st->heap[k] = (ks_scored_node){rest[k].total, rest[k].randomizer, (uint32_t)k};
            }
            st->nrows = st->nheap = nrest;
            ks__pod_sig_ref(sig);
            ks__pod_sig_unref(st->sig);
            st->sig = sig;
            st->created_ns = now_ns;
        } else {
            flushed(b, nrest == 0 ? KS_BATCH_FLUSH_EMPTY_LIST : KS_BATCH_FLUSH_POD_NOT_BATCHABLE,
                    cycle);
            state_drop(st);
        }
    }
    if (m)
        observe_since(&b->m_store_duration, m->store_schedule_results_duration,
                      (const char *const[]){b->fw->profile_name}, 1, t0);
}
