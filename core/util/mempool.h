/*
 * A bump allocator for objects that are built once and freed together (a pod's pre-parsed
 * affinity and spread constraints, a stored Service's selector): allocations never move and are
 * released by one ks__mempool_free. Not thread-safe; the owner builds it on one thread.
 */
#ifndef KS_CORE_MEMPOOL_H
#define KS_CORE_MEMPOOL_H

#include <stddef.h>

typedef struct ks_mempool {
    struct ks_mempool_chunk *head;
} ks_mempool;

/* Zeroed memory, aligned for any type; NULL when out of memory. */
void *ks__mempool_alloc(ks_mempool *p, size_t n);
void ks__mempool_free(ks_mempool *p);

#endif
