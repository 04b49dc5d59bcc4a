/*
 * The scheduling cycle's scratch arrays (ks_cycle_scratch), kept across cycles and grown to the
 * snapshot, so that a cycle allocates nothing per node. Scheduling thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/scheduler_int.h"

void ks__scratch_free(ks_cycle_scratch *sc)
{
    free(sc->cand);
    free(sc->statuses);
    free(sc->passed);
    free(sc->feasible_flag);
    free(sc->feasible);
    free(sc->scores);
    free(sc->totals);
    free(sc->norm);
    free(sc->by_index);
    free(sc->evaluated);
    free(sc->heap);
    free(sc->raw);
    memset(sc, 0, sizeof(*sc));
}

/* The per-node arrays, for at least nodes nodes. */
static int reserve_nodes(ks_cycle_scratch *sc, size_t nodes)
{
    if (nodes <= sc->cap)
        return 0;
    size_t cap = nodes;
    ks__scratch_free(sc);
    sc->cand = malloc(cap * sizeof(*sc->cand));
    sc->statuses = malloc(cap * sizeof(*sc->statuses));
    sc->passed = malloc(cap * sizeof(*sc->passed));
    sc->feasible_flag = malloc(cap);
    sc->feasible = malloc(cap * sizeof(*sc->feasible));
    sc->totals = malloc(cap * sizeof(*sc->totals));
    sc->norm = malloc(cap * sizeof(*sc->norm));
    sc->by_index = malloc(cap * sizeof(*sc->by_index));
    sc->evaluated = malloc(cap);
    sc->heap = malloc(cap * sizeof(*sc->heap));
    if (!sc->cand || !sc->statuses || !sc->passed || !sc->feasible_flag || !sc->feasible ||
        !sc->totals || !sc->norm || !sc->by_index || !sc->evaluated || !sc->heap)
        return KS_ENOMEM;
    sc->cap = cap;
    return 0;
}

int ks__scratch_reserve(ks_cycle_scratch *sc, size_t nodes, size_t nscore)
{
    if (reserve_nodes(sc, nodes) != 0)
        return KS_ENOMEM;
    size_t need = (nscore ? nscore : 1) * (nodes ? nodes : 1); /* [Score plugin][node] */
    if (need > sc->score_cap) {
        free(sc->scores);
        free(sc->raw);
        sc->scores = malloc(need * sizeof(int64_t));
        sc->raw = malloc(need * sizeof(int64_t));
        if (!sc->scores || !sc->raw)
            return KS_ENOMEM;
        sc->score_cap = need;
    }
    return 0;
}
