/*
 * PodTopologySpread: PreFilter counts kept from one cycle to the next.
 *
 * Upstream recounts, in every cycle, the matching pods of every node of the cluster. When
 * consecutive pods carry the same constraints (the replicas of one workload), the counts per node
 * only change where the snapshot changed, so this keeps each node's contribution and the totals
 * per domain, and on the next cycle redoes only the nodes the snapshot update touched
 * (ks_snapshot_changed_nodes). The result is the same table PreFilter would have counted.
 *
 * Used only when the result cannot depend on anything but the cached key: the pod's own
 * constraints (shared between identical specs, so comparable by pointer), the same namespace and
 * matchLabelKeys values, and node inclusion that is the same for every such pod (no nodeTaints
 * policy Honor; nodeAffinity policy Honor only for pods without a node selector or required node
 * affinity). Anything else goes through the full count.
 *
 * Threads: PreFilter only, on the scheduling thread (the cache belongs to the plugin instance).
 */
#include <stdlib.h>
#include <string.h>

#include "podtopologyspread_int.h"

#define CACHE_MAX_CONSTRAINTS 4
#define CACHE_MAX_EXTRA 8

typedef struct dom {
    ks_sym value; /* KS_SYM_ABSENT: free slot */
    int64_t count;
    int64_t nodes; /* counted nodes in the domain; 0: the domain no longer exists */
} dom;

typedef struct dom_table {
    uint32_t cap, used;
    dom *slots;
} dom_table;

typedef struct cache_constraint {
    ks_sym key;
    ks_inclusion_policy affinity_policy, taints_policy;
    int nothing;
    uint32_t nsel;
    const ks_label_selector *sel;
    uint32_t nextra;
    ks_label extra[CACHE_MAX_EXTRA];
} cache_constraint;

struct pts_cache {
    int valid;
    ks_sym ns;
    size_t n;
    cache_constraint k[CACHE_MAX_CONSTRAINTS];
    uint64_t version, seq;
    size_t nnodes;
    ks_sym *node_dom;    /* [n * nnodes]: the node's domain for constraint i, ABSENT: not counted */
    int64_t *node_count; /* [n * nnodes] */
    dom_table tables[CACHE_MAX_CONSTRAINTS];
};

void pts_cache_free(pts_cache *c)
{
    if (!c)
        return;
    free(c->node_dom);
    free(c->node_count);
    for (size_t i = 0; i < CACHE_MAX_CONSTRAINTS; i++)
        free(c->tables[i].slots);
    free(c);
}

static uint32_t hash_sym(ks_sym v)
{
    uint32_t h = v * 0x9E3779B1u;
    return h ^ (h >> 15);
}

static int table_reset(dom_table *t, size_t expected)
{
    uint32_t cap = 16;
    while (cap < expected * 2)
        cap *= 2;
    free(t->slots);
    t->slots = malloc(cap * sizeof(dom));
    if (!t->slots)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        t->slots[i] = (dom){KS_SYM_ABSENT, 0, 0};
    t->cap = cap;
    t->used = 0;
    return 0;
}

static dom *table_get(dom_table *t, ks_sym v)
{
    if ((t->used + 1) * 2 > t->cap) {
        dom_table bigger = {0};
        if (table_reset(&bigger, t->cap) != 0)
            return NULL;
        for (uint32_t i = 0; i < t->cap; i++) {
            if (t->slots[i].value == KS_SYM_ABSENT)
                continue;
            uint32_t j = hash_sym(t->slots[i].value) & (bigger.cap - 1);
            while (bigger.slots[j].value != KS_SYM_ABSENT)
                j = (j + 1) & (bigger.cap - 1);
            bigger.slots[j] = t->slots[i];
            bigger.used++;
        }
        free(t->slots);
        *t = bigger;
    }
    uint32_t j = hash_sym(v) & (t->cap - 1);
    while (t->slots[j].value != KS_SYM_ABSENT && t->slots[j].value != v)
        j = (j + 1) & (t->cap - 1);
    if (t->slots[j].value == KS_SYM_ABSENT) {
        t->slots[j].value = v;
        t->used++;
    }
    return &t->slots[j];
}

/* Whether the counts for (pod, cs) may come from (and go into) the cache. */
static int usable(const ks_pod *pod, const pts_constraint *cs, size_t n, int explicit_)
{
    if (!explicit_ || n == 0 || n > CACHE_MAX_CONSTRAINTS)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (cs[i].taints_policy == KS_POLICY_HONOR || cs[i].nextra > CACHE_MAX_EXTRA)
            return 0;
        if (cs[i].affinity_policy == KS_POLICY_HONOR) {
            const ks_label *sel;
            const ks_node_affinity *na = ks_pod_node_affinity(pod);
            if (ks_pod_node_selector(pod, &sel) > 0 || (na && na->has_required))
                return 0;
        }
    }
    return 1;
}

static int same_key(const pts_cache *c, ks_sym ns, const pts_constraint *cs, size_t n)
{
    if (!c->valid || c->ns != ns || c->n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const cache_constraint *k = &c->k[i];
        if (k->key != cs[i].key || k->affinity_policy != cs[i].affinity_policy ||
            k->taints_policy != cs[i].taints_policy || k->nothing != cs[i].nothing ||
            k->nsel != cs[i].nsel || k->sel != cs[i].sel || k->nextra != cs[i].nextra ||
            (cs[i].nextra && memcmp(k->extra, cs[i].extra, cs[i].nextra * sizeof(ks_label)) != 0))
            return 0;
    }
    return 1;
}

/* One node's contribution to constraint i (the body of PreFilter's loop): its domain, or
 * KS_SYM_ABSENT when the node is not counted, and its matching pods. */
static void node_contribution(const pts_plugin *pl, const ks_pod *pod, const pts_constraint *cs,
                              size_t n, const ks_node_info *ni, ks_sym ns, ks_sym *dom_out,
                              int64_t *count_out)
{
    const ks_node *node = ks_node_info_node(ni);
    const ks_label *labels;
    size_t nlabels = node ? ks_node_labels(node, &labels) : 0;
    int affinity = -1, taints = -1;
    int keys = node && pts_node_has_keys(cs, n, labels, nlabels);
    for (size_t i = 0; i < n; i++) {
        dom_out[i] = KS_SYM_ABSENT;
        count_out[i] = 0;
        if (!keys || !pts_node_included(pl, &cs[i], pod, node, &affinity, &taints))
            continue;
        dom_out[i] = ks_labels_get(labels, nlabels, cs[i].key);
        count_out[i] = pts_count_pods(&cs[i], ni, ns);
    }
}

static int apply(pts_cache *c, size_t idx, const ks_sym *d, const int64_t *cnt, int sign)
{
    for (size_t i = 0; i < c->n; i++) {
        if (d[i] == KS_SYM_ABSENT)
            continue;
        dom *e = table_get(&c->tables[i], d[i]);
        if (!e)
            return -1;
        e->count += sign * cnt[i];
        e->nodes += sign;
    }
    (void)idx;
    return 0;
}

static int recount_all(pts_cache *c, const pts_plugin *pl, const ks_pod *pod,
                       const pts_constraint *cs, size_t n, const ks_snapshot *snap, ks_sym ns)
{
    size_t nnodes = ks_snapshot_node_count(snap);
    free(c->node_dom);
    free(c->node_count);
    c->node_dom = malloc((nnodes ? nnodes : 1) * n * sizeof(ks_sym));
    c->node_count = malloc((nnodes ? nnodes : 1) * n * sizeof(int64_t));
    c->nnodes = nnodes;
    c->n = n;
    if (!c->node_dom || !c->node_count)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (table_reset(&c->tables[i], cs[i].key == pl->hostname_key ? nnodes : 8) != 0)
            return -1;
    for (size_t k = 0; k < nnodes; k++) {
        ks_sym *d = &c->node_dom[k * n];
        int64_t *cnt = &c->node_count[k * n];
        node_contribution(pl, pod, cs, n, ks_snapshot_node_at(snap, k), ns, d, cnt);
        if (apply(c, k, d, cnt, 1) != 0)
            return -1;
    }
    return 0;
}

int pts_cache_fill(const pts_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                   const pts_constraint *cs, size_t n, int explicit_, ks_sym ns, pts_table *tables)
{
    pts_cache *c = pl->cache;
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    uint64_t seq, version;
    if (!c || !usable(pod, cs, n, explicit_))
        return 1;
    version = ks_snapshot_version(snap, &seq);
    if (same_key(c, ns, cs, n) && c->version == version &&
        c->nnodes == ks_snapshot_node_count(snap) && (c->seq == seq || c->seq + 1 == seq)) {
        if (c->seq + 1 == seq) {
            /* Redo the nodes the last snapshot update changed. */
            const uint32_t *idx;
            size_t nchanged = ks_snapshot_changed_nodes(snap, &idx);
            ks_sym d[CACHE_MAX_CONSTRAINTS];
            int64_t cnt[CACHE_MAX_CONSTRAINTS];
            for (size_t j = 0; j < nchanged; j++) {
                size_t k = idx[j];
                if (k >= c->nnodes)
                    goto full;
                if (apply(c, k, &c->node_dom[k * n], &c->node_count[k * n], -1) != 0)
                    goto fail;
                node_contribution(pl, pod, cs, n, ks_snapshot_node_at(snap, k), ns, d, cnt);
                memcpy(&c->node_dom[k * n], d, n * sizeof(ks_sym));
                memcpy(&c->node_count[k * n], cnt, n * sizeof(int64_t));
                if (apply(c, k, d, cnt, 1) != 0)
                    goto fail;
            }
        }
    } else {
    full:
        c->valid = 0;
        if (recount_all(c, pl, pod, cs, n, snap, ns) != 0)
            goto fail;
        c->ns = ns;
        for (size_t i = 0; i < n; i++) {
            cache_constraint *k = &c->k[i];
            k->key = cs[i].key;
            k->affinity_policy = cs[i].affinity_policy;
            k->taints_policy = cs[i].taints_policy;
            k->nothing = cs[i].nothing;
            k->nsel = cs[i].nsel;
            k->sel = cs[i].sel;
            k->nextra = cs[i].nextra;
            if (cs[i].nextra)
                memcpy(k->extra, cs[i].extra, cs[i].nextra * sizeof(ks_label));
        }
        c->valid = 1;
    }
    c->version = version;
    c->seq = seq;
    /* The cycle's tables: every domain that still has a counted node. */
    for (size_t i = 0; i < n; i++) {
        const dom_table *t = &c->tables[i];
        for (uint32_t j = 0; j < t->cap; j++) {
            if (t->slots[j].value == KS_SYM_ABSENT || t->slots[j].nodes <= 0)
                continue;
            pts_slot *slot = pts_table_upsert(cycle, &tables[i], t->slots[j].value);
            if (!slot)
                return -1;
            slot->count = t->slots[j].count;
        }
    }
    return 0;
fail:
    c->valid = 0;
    return -1;
}

pts_cache *pts_cache_new(void) { return calloc(1, sizeof(pts_cache)); }
