/*
 * Worker pool; see parallel.h. Workers sleep on a condition variable between jobs; a job is a
 * range split into chunks claimed with an atomic counter.
 */
#include "util/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct ks_pool {
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    uint64_t job_seq; /* bumped per job (guarded by mu) */
    int active;       /* workers still inside the current job (guarded by mu) */
    int quit;
    int next_id; /* worker numbering (guarded by mu); the caller is worker 0 */
    /* the current job */
    size_t n, chunk;
    ks_parallel_fn fn;
    void *ctx;
    atomic_size_t next_chunk;
    atomic_int stop;
    atomic_size_t processed_chunks_hi; /* highest chunk index + 1 completed */
};

static _Thread_local int tl_worker_id;

int ks__pool_worker_id(void) { return tl_worker_id; }

static void run_chunks(ks_pool *p, int worker)
{
    size_t nchunks = (p->n + p->chunk - 1) / p->chunk;
    for (;;) {
        if (atomic_load_explicit(&p->stop, memory_order_acquire))
            return;
        size_t c = atomic_fetch_add(&p->next_chunk, 1);
        if (c >= nchunks)
            return;
        size_t lo = c * p->chunk, hi = lo + p->chunk < p->n ? lo + p->chunk : p->n;
        for (size_t i = lo; i < hi; i++)
            if (p->fn(p->ctx, i, worker))
                atomic_store_explicit(&p->stop, 1, memory_order_release);
        size_t cur = atomic_load(&p->processed_chunks_hi);
        while (c + 1 > cur && !atomic_compare_exchange_weak(&p->processed_chunks_hi, &cur, c + 1))
            ;
    }
}

static void *worker_main(void *arg)
{
    ks_pool *p = arg;
    uint64_t seen = 0;
    int id;
    pthread_mutex_lock(&p->mu);
    id = ++p->next_id;
    tl_worker_id = id;
    for (;;) {
        while (!p->quit && p->job_seq == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->quit)
            break;
        seen = p->job_seq;
        pthread_mutex_unlock(&p->mu);
        run_chunks(p, id);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

ks_pool *ks__pool_new(int workers)
{
    ks_pool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    /* More runnable threads than cores only adds wake-ups: `parallelism` is an upper bound. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu > 0 && workers > ncpu)
        workers = (int)ncpu;
    if (workers < 1)
        workers = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->threads = calloc((size_t)workers, sizeof(pthread_t));
    if (!p->threads) {
        free(p);
        return NULL;
    }
    for (int i = 0; i < workers - 1; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            break;
        p->nthreads++;
    }
    return p;
}

void ks__pool_free(ks_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p);
}

int ks__pool_workers(const ks_pool *p) { return p->nthreads + 1; }

size_t ks__parallel_until(ks_pool *p, size_t n, size_t chunk, ks_parallel_fn fn, void *ctx)
{
    if (n == 0)
        return 0;
    if (chunk == 0)
        chunk = 1;
    p->n = n;
    p->chunk = chunk;
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->next_chunk, 0);
    atomic_store(&p->stop, 0);
    atomic_store(&p->processed_chunks_hi, 0);
    /* Small jobs are not worth waking anyone. */
    if (p->nthreads > 0 && n > chunk) {
        pthread_mutex_lock(&p->mu);
        p->active = p->nthreads;
        p->job_seq++;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
        run_chunks(p, 0);
        pthread_mutex_lock(&p->mu);
        while (p->active > 0)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    } else {
        run_chunks(p, 0);
    }
    size_t done = atomic_load(&p->processed_chunks_hi) * chunk;
    return done < n ? done : n;
}
