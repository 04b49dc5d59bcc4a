/*
 * Host selection's sorted node list and opportunistic batching (KEP-5598), as upstream v1.37
 * pkg/scheduler/framework/sorted_nodes.go and framework/runtime/batch.go.
 *
 * ks_sorted_nodes is upstream's SortedScoredNodes: a binary heap laid out and reordered exactly
 * as Go's container/heap (heap.Init, then heap.Pop) with upstream's Less (TotalScore desc, then
 * Randomizer desc), so that among equal scores the winner is the node upstream would pick from the
 * same input order, not a uniformly random one.
 *
 * ks_batch is upstream's OpportunisticBatch, one per profile: after a full scoring pass it keeps
 * the remaining sorted nodes; the next pod, when it has the same signature and comes in the very
 * next cycle, gets the best of them as a "node hint" that the cycle evaluates like a nominated
 * node (Filter on that node only, no scoring).
 *
 * Threads: the scheduling thread only (the signature is made by the thread that queues the pod,
 * see ks__fw_sign_pod in framework.h).
 */
#ifndef KS_CORE_BATCH_H
#define KS_CORE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

/* One node's entry (upstream fwk.NodePluginScores): the total and the tie-breaker, and where its
 * node and per-plugin scores are (idx: the caller's index; for the batch cache a row of raw). */
typedef struct ks_scored_node {
    int64_t total;
    int64_t randomizer; /* upstream: rand.Int() only for nodes an extender scored; else 0 */
    uint32_t idx;
} ks_scored_node;

/* upstream nodeScoreHeap.Less(i, j). */
static inline int ks__scored_node_less(const ks_scored_node *a, const ks_scored_node *b)
{
    return a->total > b->total || (a->total == b->total && a->randomizer > b->randomizer);
}

/* upstream NewSortedScoredNodes: heap.Init over h[0..n) in place (h is the heap's storage). */
void ks__sorted_nodes_init(ks_scored_node *h, size_t n);
/* upstream heap.Pop: the best entry; *n shrinks by one. *n must be > 0. */
ks_scored_node ks__sorted_nodes_pop(ks_scored_node *h, size_t *n);

/* --- opportunistic batching ---------------------------------------------------------------- */

/* upstream metrics.BatchFlush* (the reason label of batch_cache_flushed_total). */
typedef enum {
    KS_BATCH_FLUSH_POD_FAILED,        /* "pod_failed" */
    KS_BATCH_FLUSH_POD_SKIPPED,       /* "pod_skipped" */
    KS_BATCH_FLUSH_POD_NOMINATED,     /* "pod_nominated" */
    KS_BATCH_FLUSH_POD_INCOMPATIBLE,  /* "pod_incompatible" */
    KS_BATCH_FLUSH_EXPIRED,           /* "expired" */
    KS_BATCH_FLUSH_NODE_MISSING,      /* "node_missing" */
    KS_BATCH_FLUSH_FILTER_ERROR,      /* "filter_error" */
    KS_BATCH_FLUSH_PRESCORE_ERROR,    /* "prescore_error" */
    KS_BATCH_FLUSH_RESCORE_ERROR,     /* "rescore_error" */
    KS_BATCH_FLUSH_NORMALIZE_ERROR,   /* "normalize_error" */
    KS_BATCH_FLUSH_POD_NOT_BATCHABLE, /* "pod_not_batchable" */
    KS_BATCH_FLUSH_EMPTY_LIST,        /* "empty_list" */
    KS_BATCH_FLUSH_COUNT
} ks_batch_flush;

/* upstream metrics.BatchAttempt* (the result label of batch_attempts_total). */
typedef enum {
    KS_BATCH_NO_HINT,       /* "no_hint" */
    KS_BATCH_HINT_USED,     /* "hint_used" */
    KS_BATCH_HINT_NOT_USED, /* "hint_not_used" */
    KS_BATCH_RESULT_COUNT
} ks_batch_result;

extern const char *const ks__batch_flush_names[KS_BATCH_FLUSH_COUNT];
extern const char *const ks__batch_result_names[KS_BATCH_RESULT_COUNT];

/* upstream maxBatchAge: a cached list older than this is not used. */
#define KS_BATCH_MAX_AGE_NS (500 * 1000000LL)

/* A pod's signature (upstream fwk.PodSignature): the JSON bytes, NUL-terminated; NULL: the pod
 * cannot be batched. Reference-counted so that the queue and a cycle can share one. */
typedef struct ks_pod_sig {
    _Atomic int refs;
    size_t len;
    char json[];
} ks_pod_sig;
void ks__pod_sig_ref(ks_pod_sig *s);
void ks__pod_sig_unref(ks_pod_sig *s); /* NULL: no-op */

/* What the batch counted (tests and bench read it; metrics get the same increments). */
typedef struct ks_batch_counts {
    uint64_t attempts[KS_BATCH_RESULT_COUNT];
    uint64_t flushed[KS_BATCH_FLUSH_COUNT];
    uint64_t rescore_attempts;
    uint64_t batched_pods; /* upstream batchedPods */
} ks_batch_counts;

typedef struct ks_batch ks_batch;
struct ks_framework;

/* The profile's batch (upstream newOpportunisticBatch); NULL on out of memory. Main thread. */
ks_batch *ks__batch_new(struct ks_framework *fw);
void ks__batch_free(ks_batch *b);

/* upstream GetNodeHint, after PreFilter: the node the pod should try first (evaluated like a
 * nominated node), or KS_SYM_ABSENT. cycle: this cycle's number (upstream the queue's
 * SchedulingCycle(): one per pop, whatever the profile); now_ns: the scheduler's clock. May run
 * Filter on the last chosen node and rescore it (state is cloned for that). */
ks_sym ks__batch_get_node_hint(ks_batch *b, ks_cycle *state, ks_pod *pod, const ks_pod_sig *sig,
                               const ks_snapshot *snap, uint64_t cycle, int64_t now_ns);

/* upstream StoreScheduleResults, after host selection succeeded. hinted: the hint this cycle got
 * (KS_SYM_ABSENT: none); chosen: the node chosen. rest/nrest: the sorted nodes left after the
 * winner was popped (NULL/0 when there was no scoring pass), their idx indexing feasible[] and
 * the columns of raw ([score plugin][nfeasible], the raw scores). sig: borrowed, referenced when
 * kept. */
void ks__batch_store(ks_batch *b, ks_pod_sig *sig, ks_sym hinted, ks_sym chosen,
                     const ks_scored_node *rest, size_t nrest, const ks_node_info *const *feasible,
                     const int64_t *raw, size_t nfeasible, uint64_t cycle, int64_t now_ns);

/* What the batch counted so far (tests, bench). */
const ks_batch_counts *ks__batch_counts(const ks_batch *b);

#endif
