/*
 * A fixed worker pool for the per-node loops (Filter, Score), like upstream's Parallelizer:
 * ks__parallel_until(pool, n, fn, ctx) calls fn(ctx, i, worker) for i in [0, n) split into chunks
 * claimed in increasing order, and returns when every claimed chunk is done. fn may ask to stop
 * early by returning non-zero: no new chunk is claimed after that (chunks already claimed finish),
 * so the indices processed always form a prefix [0, k) of whole chunks.
 *
 * Threads: the pool has `workers - 1` threads plus the calling thread. One parallel_until at a
 * time (the scheduling thread's).
 */
#ifndef KS_CORE_PARALLEL_H
#define KS_CORE_PARALLEL_H

#include <stddef.h>

typedef struct ks_pool ks_pool;

ks_pool *ks__pool_new(int workers);
void ks__pool_free(ks_pool *p);
int ks__pool_workers(const ks_pool *p);

/* Returns the number of indices processed (a prefix of [0, n)). */
typedef int (*ks_parallel_fn)(void *ctx, size_t i, int worker);
size_t ks__parallel_until(ks_pool *p, size_t n, size_t chunk, ks_parallel_fn fn, void *ctx);

/* The calling thread's worker number: 1..workers-1 on a pool thread, 0 on any other thread (the
 * caller of ks__parallel_until is worker 0). */
int ks__pool_worker_id(void);

#endif
