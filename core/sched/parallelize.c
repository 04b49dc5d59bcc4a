/*
 * The parallelizer (see parallelize.h): upstream's chunk size and goroutines gauge around the
 * worker pool.
 */
#include "sched/parallelize.h"

static size_t isqrt(size_t n)
{
    size_t sq = 1;
    while ((sq + 1) * (sq + 1) <= n)
        sq++;
    return sq;
}

/* upstream chunkSizeFor: max(1, min(sqrt(n), n/parallelism + 1)) */
static size_t chunk_size(size_t n, size_t parallelism)
{
    size_t sq = isqrt(n), per = n / parallelism + 1;
    size_t c = sq < per ? sq : per;
    return c ? c : 1;
}

void ks__parallelizer_track(const ks_parallelizer *p, int op, size_t pieces, int sign)
{
    if (pieces == 0 || op < 0 || op >= KS_OP_COUNT || !p->goroutines[op])
        return;
    /* upstream numWorkersForChunkSize with the configured parallelism */
    size_t par = p->parallelism > 0 ? p->parallelism : 16;
    size_t chunk = chunk_size(pieces, par);
    size_t chunks = (pieces + chunk - 1) / chunk;
    size_t workers = chunks < par ? chunks : par;
    ks__metrics_add(p->goroutines[op], sign * (double)workers);
}

size_t ks__parallelizer_until(const ks_parallelizer *p, int op, size_t pieces, ks_parallel_fn fn,
                              void *ctx)
{
    size_t chunk = chunk_size(pieces, (size_t)ks__pool_workers(p->pool));
    ks__parallelizer_track(p, op, pieces, +1);
    size_t processed = ks__parallel_until(p->pool, pieces, chunk, fn, ctx);
    ks__parallelizer_track(p, op, pieces, -1);
    return processed;
}
