/*
 * PodTopologySpread: what PreFilter and PreScore share (upstream common.go and parts of
 * plugin.go, v1.34): turning a pod's spread constraints, or the default constraints with the
 * selector of the pod's owners, into cycle constraints; matching pods against them; the node
 * inclusion policies; and the small topology value -> count table both states are built from.
 */
#include <string.h>

#include "../common/match.h"
#include "podtopologyspread_int.h"

/* nodeAffinityPolicy defaults to Honor and nodeTaintsPolicy to Ignore (NodeInclusionPolicy is on
 * by default, GA in v1.33). */
static ks_inclusion_policy resolve(ks_inclusion_policy p, ks_inclusion_policy dflt)
{
    return p == KS_POLICY_UNSET ? dflt : p;
}

/* The pod's values of matchLabelKeys, deduplicated (upstream builds a labels.Set; keys the pod does
 * not have are left out). Returns how many, 0 also on no memory (the caller then has no extras,
 * which only loosens the selector, so it reports the allocation failure itself). */
static uint32_t match_label_values(ks_cycle *cycle, const ks_topology_spread_constraint *t,
                                   const ks_label *labels, size_t nlabels, const ks_label **out,
                                   int *nomem)
{
    ks_label *extra;
    uint32_t n = 0;
    *out = NULL;
    if (t->nmatch_label_keys == 0)
        return 0;
    extra = ks_cycle_alloc(cycle, t->nmatch_label_keys * sizeof(*extra));
    if (!extra) {
        *nomem = 1;
        return 0;
    }
    for (uint32_t i = 0; i < t->nmatch_label_keys; i++) {
        ks_sym k = t->match_label_keys[i], v = ks_labels_get(labels, nlabels, k);
        int dup = 0;
        if (v == KS_SYM_ABSENT)
            continue;
        for (uint32_t j = 0; j < n; j++)
            dup |= extra[j].key == k;
        if (!dup)
            extra[n++] = (ks_label){k, v};
    }
    *out = extra;
    return n;
}

static int explicit_constraints(ks_cycle *cycle, const ks_pod *pod,
                                const ks_topology_spread_constraint *tsc, size_t ntsc,
                                ks_unsatisfiable_action action, pts_constraint **out, size_t *n)
{
    const ks_label *labels;
    size_t nlabels = ks_pod_labels(pod, &labels), k = 0;
    int nomem = 0;
    for (size_t i = 0; i < ntsc; i++)
        k += tsc[i].when_unsatisfiable == action;
    if (k == 0)
        return 0;
    pts_constraint *cs = ks_cycle_alloc(cycle, k * sizeof(*cs));
    if (!cs)
        return KS_ENOMEM;
    k = 0;
    for (size_t i = 0; i < ntsc; i++) {
        const ks_topology_spread_constraint *t = &tsc[i];
        pts_constraint *c = &cs[k];
        if (t->when_unsatisfiable != action)
            continue;
        c->max_skew = t->max_skew;
        c->key = t->topology_key;
        c->min_domains = t->min_domains > 0 ? t->min_domains : 1;
        c->affinity_policy = resolve(t->node_affinity_policy, KS_POLICY_HONOR);
        c->taints_policy = resolve(t->node_taints_policy, KS_POLICY_IGNORE);
        c->nextra = match_label_values(cycle, t, labels, nlabels, &c->extra, &nomem);
        if (nomem)
            return KS_ENOMEM;
        /* A nil labelSelector selects nothing (labels.Nothing()), but upstream's
         * mergeLabelSetWithSelector starts from the matchLabelKeys set and adds the selector's
         * requirements, and Nothing() has none: the merge then selects by those labels alone. */
        if (t->selector.present) {
            c->nsel = 1;
            c->sel = &t->selector;
        } else {
            c->nothing = c->nextra == 0;
        }
        k++;
    }
    *out = cs;
    *n = k;
    return 0;
}

/* Upstream buildDefaultConstraints with helper.DefaultSelector: the selector is the AND of the
 * selectors of every Service, ReplicationController, ReplicaSet and StatefulSet in the pod's
 * namespace that selects the pod; when they add no requirement at all, there is no constraint. */
static int default_constraints(const pts_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                               ks_unsatisfiable_action action, pts_constraint **out, size_t *n)
{
    const ks_label_selector *sels;
    size_t k = 0, nsels, reqs = 0;
    for (size_t i = 0; i < pl->ndefaults; i++)
        k += pl->defaults[i].when == action;
    if (k == 0)
        return 0;
    nsels = ks_pod_owner_selectors(cycle, pod, &sels);
    for (size_t i = 0; i < nsels; i++)
        reqs += sels[i].nmatch_labels + sels[i].nexprs;
    if (reqs == 0)
        return 0;
    pts_constraint *cs = ks_cycle_alloc(cycle, k * sizeof(*cs));
    if (!cs)
        return KS_ENOMEM;
    k = 0;
    for (size_t i = 0; i < pl->ndefaults; i++) {
        const pts_default *d = &pl->defaults[i];
        if (d->when != action)
            continue;
        cs[k++] = (pts_constraint){
            .max_skew = d->max_skew,
            .key = d->key,
            .min_domains = d->min_domains,
            .affinity_policy = d->affinity_policy,
            .taints_policy = d->taints_policy,
            .nsel = (uint32_t)nsels,
            .sel = sels,
        };
    }
    *out = cs;
    *n = k;
    return 0;
}

int pts_constraints(const pts_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                    ks_unsatisfiable_action action, pts_constraint **out, size_t *n, int *explicit_)
{
    const ks_topology_spread_constraint *tsc;
    size_t ntsc = ks_pod_topology_spread_constraints(pod, &tsc);
    *out = NULL;
    *n = 0;
    *explicit_ = ntsc > 0;
    if (ntsc > 0)
        return explicit_constraints(cycle, pod, tsc, ntsc, action, out, n);
    return default_constraints(pl, cycle, pod, action, out, n);
}

int pts_selects(const pts_constraint *c, const ks_label *labels, size_t nlabels)
{
    if (c->nothing)
        return 0;
    for (uint32_t i = 0; i < c->nsel; i++)
        if (!ks_label_selector_matches(&c->sel[i], labels, nlabels))
            return 0;
    for (uint32_t i = 0; i < c->nextra; i++)
        if (ks_labels_get(labels, nlabels, c->extra[i].key) != c->extra[i].value)
            return 0;
    return 1;
}

/* Upstream countPodsMatchSelector: terminating pods and other namespaces never count. */
int64_t pts_count_pods(const pts_constraint *c, const ks_node_info *ni, ks_sym ns)
{
    const ks_pod *const *pods;
    int64_t count = 0;
    if (c->nothing)
        return 0;
    /* Only the pods of the namespace: the others never count, and are never touched. */
    size_t n = ks_node_info_pods_in_namespace(ni, ns, &pods);
    for (size_t i = 0; i < n; i++) {
        const ks_pod *p = pods[i];
        const ks_label *labels;
        if (ks_pod_is_terminating(p))
            continue;
        size_t nlabels = ks_pod_labels(p, &labels);
        count += pts_selects(c, labels, nlabels);
    }
    return count;
}

int pts_node_has_keys(const pts_constraint *cs, size_t n, const ks_label *labels, size_t nlabels)
{
    for (size_t i = 0; i < n; i++)
        if (ks_labels_get(labels, nlabels, cs[i].key) == KS_SYM_ABSENT)
            return 0;
    return 1;
}

/* Upstream FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc. */
static int tolerates_do_not_schedule_taints(const ks_pod *pod, const ks_node *node)
{
    const ks_taint *taints;
    const ks_toleration *tols;
    size_t ntaints = ks_node_taints(node, &taints), ntols = ks_pod_tolerations(pod, &tols);
    for (size_t i = 0; i < ntaints; i++) {
        if (taints[i].effect != KS_EFFECT_NO_SCHEDULE && taints[i].effect != KS_EFFECT_NO_EXECUTE)
            continue;
        if (!ks_h_tolerated_by_any(tols, ntols, &taints[i]))
            return 0;
    }
    return 1;
}

int pts_node_included(const pts_plugin *pl, const pts_constraint *c, const ks_pod *pod,
                      const ks_node *node, int *affinity, int *taints)
{
    if (c->affinity_policy == KS_POLICY_HONOR) {
        if (*affinity < 0)
            *affinity = ks_h_pod_matches_node_affinity(pod, node, pl->metadata_name);
        if (!*affinity)
            return 0;
    }
    if (c->taints_policy == KS_POLICY_HONOR) {
        if (*taints < 0)
            *taints = tolerates_do_not_schedule_taints(pod, node);
        if (!*taints)
            return 0;
    }
    return 1;
}

/* ---- the domain table ----------------------------------------------------------------------- */

static uint32_t hash_sym(ks_sym v)
{
    uint32_t h = v * 0x9E3779B1u;
    return h ^ (h >> 15);
}

static int table_alloc(ks_cycle *cycle, pts_table *t, uint32_t cap)
{
    pts_slot *slots = ks_cycle_alloc(cycle, (size_t)cap * sizeof(*slots));
    if (!slots)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < cap; i++)
        slots[i].value = KS_SYM_ABSENT;
    t->cap = cap;
    t->n = 0;
    t->slots = slots;
    return 0;
}

int pts_table_init(ks_cycle *cycle, pts_table *t, size_t expected)
{
    uint32_t cap = 8;
    while (cap < 2 * expected + 2 && cap < (1u << 30))
        cap *= 2;
    return table_alloc(cycle, t, cap);
}

pts_slot *pts_table_find(const pts_table *t, ks_sym value)
{
    uint32_t mask = t->cap - 1;
    for (uint32_t i = hash_sym(value) & mask;; i = (i + 1) & mask) {
        if (t->slots[i].value == value)
            return &t->slots[i];
        if (t->slots[i].value == KS_SYM_ABSENT)
            return NULL;
    }
}

static pts_slot *insert_new(pts_table *t, ks_sym value)
{
    uint32_t mask = t->cap - 1, i = hash_sym(value) & mask;
    while (t->slots[i].value != KS_SYM_ABSENT)
        i = (i + 1) & mask;
    t->slots[i].value = value;
    t->slots[i].count = 0;
    t->n++;
    return &t->slots[i];
}

/* Grows by doubling into a new arena block; the old block stays in the arena until the cycle
 * ends, so the memory a table ever used is at most twice its final size. */
static int grow(ks_cycle *cycle, pts_table *t)
{
    pts_table bigger;
    if (table_alloc(cycle, &bigger, t->cap * 2) != 0)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->slots[i].value != KS_SYM_ABSENT)
            insert_new(&bigger, t->slots[i].value)->count = t->slots[i].count;
    *t = bigger;
    return 0;
}

pts_slot *pts_table_upsert(ks_cycle *cycle, pts_table *t, ks_sym value)
{
    pts_slot *s = pts_table_find(t, value);
    if (s)
        return s;
    if (2 * (t->n + 1) > t->cap && grow(cycle, t) != 0)
        return NULL;
    return insert_new(t, value);
}

int pts_table_copy(ks_cycle *into, pts_table *dst, const pts_table *src)
{
    pts_slot *slots = ks_cycle_alloc(into, (size_t)src->cap * sizeof(*slots));
    if (!slots)
        return KS_ENOMEM;
    memcpy(slots, src->slots, (size_t)src->cap * sizeof(*slots));
    dst->cap = src->cap;
    dst->n = src->n;
    dst->slots = slots;
    return 0;
}

/* ---- read-only views for tests ----------------------------------------------------------------
 */

static const pts_table *debug_table(ks_cycle *cycle, int prescore, size_t ci)
{
    if (prescore) {
        const pts_prescore_state *s = ks_cycle_read(cycle, &pts_prescore_key);
        return s && ci < s->n ? &s->tables[ci] : NULL;
    }
    const pts_prefilter_state *s = ks_cycle_read(cycle, &pts_prefilter_key);
    return s && ci < s->n ? &s->tables[ci] : NULL;
}

long pts_debug_nconstraints(ks_cycle *cycle, int prescore)
{
    if (prescore) {
        const pts_prescore_state *s = ks_cycle_read(cycle, &pts_prescore_key);
        return s ? (long)s->n : -1;
    }
    const pts_prefilter_state *s = ks_cycle_read(cycle, &pts_prefilter_key);
    return s ? (long)s->n : -1;
}

int pts_debug_count(ks_cycle *cycle, int prescore, size_t ci, const char *value, int64_t *count)
{
    const pts_table *t = debug_table(cycle, prescore, ci);
    if (!t)
        return -1;
    const pts_slot *slot = pts_table_find(t, ks_intern(value));
    if (slot && count)
        *count = slot->count;
    return slot != NULL;
}

long pts_debug_domains(ks_cycle *cycle, int prescore, size_t ci)
{
    const pts_table *t = debug_table(cycle, prescore, ci);
    return t ? (long)t->n : -1;
}

int64_t pts_debug_min_match(ks_cycle *cycle, size_t ci)
{
    const pts_prefilter_state *s = ks_cycle_read(cycle, &pts_prefilter_key);
    return s && ci < s->n ? s->paths[ci][0].num : -1;
}

double pts_debug_weight(ks_cycle *cycle, size_t ci)
{
    const pts_prescore_state *s = ks_cycle_read(cycle, &pts_prescore_key);
    return s && ci < s->n ? s->weights[ci] : -1;
}

int pts_debug_ignored(ks_cycle *cycle, const char *node)
{
    const pts_prescore_state *s = ks_cycle_read(cycle, &pts_prescore_key);
    const pts_slot *slot = s ? pts_table_find(&s->nodes, ks_intern(node)) : NULL;
    return slot ? s->ignored[slot->count] : -1;
}
