/*
 * DefaultPreemption: the pure parts (upstream framework/preemption/preemption.go
 * pickOneNodeForPreemption, plugins/defaultpreemption/default_preemption.go
 * calculateNumCandidates and filterPodsWithPDBViolation, scheduler/util MoreImportantPod and
 * GetEarliestPodStartTime, framework/types.go FitError.Error). Nothing here calls the host, so
 * tests/plugins/test_defaultpreemption.c checks these on hand-made data.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "defaultpreemption_int.h"

int32_t dp_num_candidates(int32_t nnodes, int32_t pct, int32_t abs)
{
    /* int64 so that a large cluster times a percentage cannot overflow (upstream uses int32 and
     * the validated ranges keep it in range there too). */
    int64_t n = (int64_t)nnodes * pct / 100;
    if (n < abs)
        n = abs;
    if (n > nnodes)
        n = nnodes;
    return (int32_t)n;
}

int dp_more_important(const dp_pod *a, const dp_pod *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->start_ns < b->start_ns;
}

void dp_sort_by_importance(dp_pod *pods, size_t n)
{
    /* Insertion sort: a node holds at most a few hundred pods, and it is stable. */
    for (size_t i = 1; i < n; i++) {
        dp_pod x = pods[i];
        size_t j = i;
        while (j > 0 && dp_more_important(&x, &pods[j - 1])) {
            pods[j] = pods[j - 1];
            j--;
        }
        pods[j] = x;
    }
}

static int in_disrupted(const ks_pdb_info *pdb, ks_sym name)
{
    for (uint32_t i = 0; i < pdb->ndisrupted; i++)
        if (pdb->disrupted[i] == name)
            return 1;
    return 0;
}

int dp_more_important_victim(const dp_victim *a, const dp_victim *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    /* upstream victimRank: PodGroup 2 before Pod 1 (CompositePodGroup, 3, is not modelled) */
    if (a->is_group != b->is_group)
        return a->is_group > b->is_group;
    if (a->npods != b->npods)
        return a->npods > b->npods;
    return a->earliest_start < b->earliest_start;
}

void dp_sort_victims(dp_victim *v, size_t n)
{
    /* Insertion sort, stable: the units of one node are few. */
    for (size_t i = 1; i < n; i++) {
        dp_victim x = v[i];
        size_t j = i;
        while (j > 0 && dp_more_important_victim(&x, &v[j - 1])) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* upstream podIsViolating: charges p to each matching budget in order and answers 1 at the first
 * that goes below zero, leaving the budgets after it uncharged. */
static int pod_violates(const dp_pod *p, const ks_pdb_info *pdbs, size_t npdbs, int32_t *allowed)
{
    if (p->nlabels == 0) /* a pod without labels matches no budget */
        return 0;
    for (size_t k = 0; k < npdbs; k++) {
        const ks_pdb_info *pdb = &pdbs[k];
        if (pdb->ns != p->ns)
            continue;
        /* a nil or empty selector matches nothing (upstream skips selector.Empty()) */
        if (!pdb->selector.present ||
            (pdb->selector.nmatch_labels == 0 && pdb->selector.nexprs == 0))
            continue;
        if (!ks_label_selector_matches(&pdb->selector, p->labels, p->nlabels))
            continue;
        if (in_disrupted(pdb, p->name)) /* already processed by the API server */
            continue;
        if (--allowed[k] < 0)
            return 1;
    }
    return 0;
}

void dp_victims_pdb(dp_victim *v, size_t n, const ks_pdb_info *pdbs, size_t npdbs, int32_t *allowed)
{
    for (size_t k = 0; k < npdbs; k++)
        allowed[k] = pdbs[k].disruptions_allowed;
    for (size_t i = 0; i < n; i++) {
        v[i].violate_count = 0;
        for (size_t j = 0; j < v[i].npods; j++)
            v[i].violate_count += pod_violates(&v[i].pods[j], pdbs, npdbs, allowed);
    }
}

/* upstream FilterVictimsWithPDBViolation with every victim a single pod (also v1.37.2's path
 * without GenericWorkload): a pod stops being charged at the first budget it breaks. */
void dp_pdb_violations(const dp_pod *pods, size_t n, const ks_pdb_info *pdbs, size_t npdbs,
                       int32_t *allowed, uint8_t *violating)
{
    for (size_t k = 0; k < npdbs; k++)
        allowed[k] = pdbs[k].disruptions_allowed;
    for (size_t i = 0; i < n; i++)
        violating[i] = (uint8_t)pod_violates(&pods[i], pdbs, npdbs, allowed);
}

int64_t dp_earliest_start_of_highest(const dp_candidate *c)
{
    if (c->nvictims == 0)
        return INT64_MIN; /* upstream logs "should not reach here" and scores MinInt64 */
    int64_t earliest = c->victims[0].start_ns;
    int32_t max_prio = c->victims[0].priority;
    for (size_t i = 0; i < c->nvictims; i++) {
        const dp_pod *v = &c->victims[i];
        if (v->priority == max_prio) {
            if (v->start_ns < earliest)
                earliest = v->start_ns;
        } else if (v->priority > max_prio) {
            max_prio = v->priority;
            earliest = v->start_ns;
        }
    }
    return earliest;
}

/* The default score functions of pickOneNodeForPreemption, in order; higher is better. */
static int64_t score(const dp_candidate *c, int f)
{
    switch (f) {
    case 0: /* fewest PDB violations */
        return -c->num_pdb_violations;
    case 1: /* the lowest highest-priority victim */
        return -(int64_t)c->victims[0].priority;
    case 2: { /* smallest sum of priorities, each shifted by MaxInt32+1 so all are >= 0 */
        int64_t sum = 0;
        for (size_t i = 0; i < c->nvictims; i++)
            sum += (int64_t)c->victims[i].priority + ((int64_t)INT32_MAX + 1);
        return -sum;
    }
    case 3: /* fewest victims */
        return -(int64_t)c->nvictims;
    default: /* the latest start time of the highest-priority victims */
        return dp_earliest_start_of_highest(c);
    }
}

size_t dp_pick_one(const dp_candidate *c, size_t n, size_t *scratch)
{
    if (n == 0)
        return 0;
    /* A node that needs no eviction wins at once (older upstream; today a candidate always has a
     * victim, and the score functions below assume one). */
    for (size_t i = 0; i < n; i++)
        if (c[i].nvictims == 0)
            return i;
    size_t *live = scratch, nlive = n;
    for (size_t i = 0; i < n; i++)
        live[i] = i;
    for (int f = 0; f < 5; f++) {
        int64_t best = INT64_MIN;
        size_t kept = 0;
        for (size_t i = 0; i < nlive; i++) {
            int64_t s = score(&c[live[i]], f);
            if (s > best) {
                best = s;
                kept = 0;
            }
            if (s == best)
                live[kept++] = live[i];
        }
        if (kept == 1)
            return live[0];
        nlive = kept;
    }
    /* Still tied: the first (upstream walks a map here, so its "first" is arbitrary). */
    return live[0];
}

/* Go's sort.Strings on "<count> <reason>": compare the formatted texts. */
static int reason_cmp(const dp_reason *a, const dp_reason *b)
{
    char ca[24], cb[24];
    snprintf(ca, sizeof(ca), "%" PRId64 " ", a->count);
    snprintf(cb, sizeof(cb), "%" PRId64 " ", b->count);
    size_t la = strlen(ca), lb = strlen(cb);
    /* Walk the two virtual strings ca+text and cb+text byte by byte. */
    for (size_t i = 0;; i++) {
        unsigned char x = i < la ? (unsigned char)ca[i] : (unsigned char)a->text[i - la];
        unsigned char y = i < lb ? (unsigned char)cb[i] : (unsigned char)b->text[i - lb];
        if (x != y)
            return x < y ? -1 : 1;
        if (x == 0)
            return 0;
    }
}

size_t dp_fit_error(char *out, size_t cap, int64_t num_all, dp_reason *reasons, size_t nreasons)
{
    for (size_t i = 1; i < nreasons; i++) {
        dp_reason x = reasons[i];
        size_t j = i;
        while (j > 0 && reason_cmp(&x, &reasons[j - 1]) < 0) {
            reasons[j] = reasons[j - 1];
            j--;
        }
        reasons[j] = x;
    }
    size_t len = 0;
    int w;
#define APPEND(...)                                                                                \
    do {                                                                                           \
        w = snprintf(len < cap ? out + len : NULL, len < cap ? cap - len : 0, __VA_ARGS__);        \
        if (w > 0)                                                                                 \
            len += (size_t)w;                                                                      \
    } while (0)
    APPEND("0/%" PRId64 " nodes are available:", num_all);
    for (size_t i = 0; i < nreasons; i++)
        APPEND("%s%" PRId64 " %s", i ? ", " : " ", reasons[i].count, reasons[i].text);
    if (nreasons)
        APPEND(".");
#undef APPEND
    if (cap && len >= cap)
        out[cap - 1] = '\0';
    return len;
}
