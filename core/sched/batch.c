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
