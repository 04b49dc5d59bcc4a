/* Bump allocator; see mempool.h. */
#include "util/mempool.h"

#include <stdlib.h>
#include <string.h>

struct ks_mempool_chunk {
    struct ks_mempool_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *ks__mempool_alloc(ks_mempool *p, size_t n)
{
    size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    struct ks_mempool_chunk *c = p->head;
    if (!c || c->used + need > c->cap) {
        size_t cap = need > 1024 ? need : 1024;
        c = malloc(sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->next = p->head;
        c->used = 0;
        c->cap = cap;
        p->head = c;
    }
    void *r = (char *)c->data + c->used;
    c->used += need;
    memset(r, 0, n);
    return r;
}

void ks__mempool_free(ks_mempool *p)
{
    for (struct ks_mempool_chunk *c = p->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    p->head = NULL;
}
