/*
 * Binary min-heap with intrusive position indexes (see heap.h).
 */
#include "util/heap.h"

#include <stdlib.h>

#include "kubesched/plugin.h"

static void set_index(ks_heap *h, size_t i)
{
    *(size_t *)((char *)h->items[i] + h->index_offset) = i;
}

static void clear_index(ks_heap *h, void *item)
{
    *(size_t *)((char *)item + h->index_offset) = KS_HEAP_NONE;
}

static int before(const ks_heap *h, size_t i, size_t j)
{
    return h->less(h->ctx, h->items[i], h->items[j]) != 0;
}

static void swap(ks_heap *h, size_t i, size_t j)
{
    void *t = h->items[i];
    h->items[i] = h->items[j];
    h->items[j] = t;
    set_index(h, i);
    set_index(h, j);
}

/* Returns 1 when the item moved. */
static int sift_up(ks_heap *h, size_t i)
{
    size_t start = i;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(h, i, parent))
            break;
        swap(h, i, parent);
        i = parent;
    }
    return i != start;
}

static void sift_down(ks_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < h->len && before(h, l, best))
            best = l;
        if (r < h->len && before(h, r, best))
            best = r;
        if (best == i)
            return;
        swap(h, i, best);
        i = best;
    }
}

void ks__heap_init(ks_heap *h, int (*less)(void *ctx, const void *a, const void *b), void *ctx,
                   size_t index_offset)
{
    h->items = NULL;
    h->len = h->cap = 0;
    h->less = less;
    h->ctx = ctx;
    h->index_offset = index_offset;
}

void ks__heap_destroy(ks_heap *h)
{
    free(h->items);
    h->items = NULL;
    h->len = h->cap = 0;
}

int ks__heap_reserve(ks_heap *h, size_t n)
{
    if (n <= h->cap)
        return 0;
    size_t cap = h->cap ? h->cap : 16;
    while (cap < n)
        cap *= 2;
    void **items = realloc(h->items, cap * sizeof *items);
    if (!items)
        return KS_ENOMEM;
    h->items = items;
    h->cap = cap;
    return 0;
}

int ks__heap_push(ks_heap *h, void *item)
{
    if (h->len == h->cap && ks__heap_reserve(h, h->len + 1) != 0)
        return KS_ENOMEM;
    h->items[h->len] = item;
    set_index(h, h->len);
    h->len++;
    sift_up(h, h->len - 1);
    return 0;
}

void *ks__heap_peek(const ks_heap *h) { return h->len ? h->items[0] : NULL; }

void *ks__heap_pop(ks_heap *h) { return h->len ? ks__heap_remove(h, 0) : NULL; }

void *ks__heap_remove(ks_heap *h, size_t i)
{
    if (i >= h->len)
        return NULL;
    void *item = h->items[i];
    size_t last = h->len - 1;
    if (i != last) {
        h->items[i] = h->items[last];
        set_index(h, i);
    }
    h->len--;
    if (i < h->len)
        ks__heap_fix(h, i);
    clear_index(h, item);
    return item;
}

void ks__heap_fix(ks_heap *h, size_t i)
{
    if (i >= h->len)
        return;
    if (!sift_up(h, i))
        sift_down(h, i);
}
