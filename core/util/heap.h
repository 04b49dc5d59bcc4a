/*
 * A binary min-heap of pointers with an intrusive position index, so that an item anywhere in the
 * heap can be removed or re-sifted in O(log n) after its key changed (upstream
 * pkg/scheduler/backend/heap keeps a map for the same purpose; here each item stores its own
 * index).
 *
 * The heap never owns its items. Not thread-safe: the owner's lock guards it.
 */
#ifndef KS_CORE_HEAP_H
#define KS_CORE_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Stored in an item's index field while it is not in any heap. */
#define KS_HEAP_NONE SIZE_MAX

typedef struct ks_heap {
    void **items;
    size_t len, cap;
    /* Non-zero when a must come out before b. */
    int (*less)(void *ctx, const void *a, const void *b);
    void *ctx;
    /* offsetof the size_t field in each item that the heap keeps equal to the item's position
     * (KS_HEAP_NONE once removed). */
    size_t index_offset;
} ks_heap;

void ks__heap_init(ks_heap *h, int (*less)(void *ctx, const void *a, const void *b), void *ctx,
                   size_t index_offset);
/* Frees the array only; the items are the caller's. */
void ks__heap_destroy(ks_heap *h);
/* Makes room for n items in total, so that the next pushes up to n cannot fail. 0 or KS_ENOMEM. */
int ks__heap_reserve(ks_heap *h, size_t n);
/* 0 or KS_ENOMEM (never fails within reserved capacity). */
int ks__heap_push(ks_heap *h, void *item);
/* The first item, or NULL when empty. */
void *ks__heap_peek(const ks_heap *h);
/* Removes and returns the first item, or NULL when empty. */
void *ks__heap_pop(ks_heap *h);
/* Removes the item at position i (its index field) and returns it. */
void *ks__heap_remove(ks_heap *h, size_t i);
/* Restores the order after the key of the item at position i changed. */
void ks__heap_fix(ks_heap *h, size_t i);

#endif
