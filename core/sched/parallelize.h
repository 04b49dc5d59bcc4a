/*
 * How the scheduler runs per-node work in parallel (upstream framework/parallelize.Parallelizer):
 * the worker pool, and the scheduler_goroutines{operation} gauge that upstream's Until keeps
 * (+workers on entry, -workers on exit, workers = min(parallelism, chunks)).
 *
 * Owned by the scheduler (one per scheduler); the frameworks borrow it for Score. Threads: the
 * scheduling thread only (the pool allows one ks__parallel_until at a time).
 */
#ifndef KS_SCHED_PARALLELIZE_H
#define KS_SCHED_PARALLELIZE_H

#include <stddef.h>

#include "util/metrics.h"
#include "util/parallel.h"

enum { KS_OP_FILTER, KS_OP_SCORE, KS_OP_COUNT };

typedef struct ks_parallelizer {
    ks_pool *pool;
    size_t parallelism;                 /* configured; the pool may run fewer threads */
    ks_metric *goroutines[KS_OP_COUNT]; /* NULL without metrics */
} ks_parallelizer;

/* Upstream Until: fn over pieces [0, n) in chunks of upstream's size for the pool's workers;
 * returns how many were processed (a prefix: fn stops it by returning non-zero). */
size_t ks__parallelizer_until(const ks_parallelizer *p, int op, size_t pieces, ks_parallel_fn fn,
                              void *ctx);
/* The gauge alone, for work run on the calling thread that upstream runs through Until (the
 * nominated node's Filter): sign +1 on entry, -1 on exit; no-op for 0 pieces or without metrics. */
void ks__parallelizer_track(const ks_parallelizer *p, int op, size_t pieces, int sign);

#endif
