/*
 * InterPodAffinity: what filtering and scoring share (upstream framework/types.go AffinityTerm,
 * plugin.go mergeAffinityTermNamespacesIfNotEmpty / GetNamespaceLabelsSnapshot): the per-cycle
 * topology-pair maps, namespace labels and term matching. See interpodaffinity_int.h.
 */
#include <string.h>

#include "interpodaffinity_int.h"

/* ---- Topology-pair maps ---------------------------------------------------------------------- */

static uint32_t pair_hash(ks_sym key, ks_sym value)
{
    uint64_t h = ((uint64_t)key << 32) | value;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (uint32_t)h;
}

static ipa_pair *find_slot(ipa_pair *slots, uint32_t cap, ks_sym key, ks_sym value)
{
    uint32_t mask = cap - 1;
    for (uint32_t i = pair_hash(key, value) & mask;; i = (i + 1) & mask) {
        ipa_pair *p = &slots[i];
        if (p->key == KS_SYM_EMPTY || (p->key == key && p->value == value))
            return p;
    }
}

static int grow(ks_cycle *cycle, ipa_tpmap *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 16;
    ipa_pair *slots = ks_cycle_alloc(cycle, (size_t)cap * sizeof(*slots));
    if (!slots)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != KS_SYM_EMPTY)
            *find_slot(slots, cap, m->slots[i].key, m->slots[i].value) = m->slots[i];
    m->slots = slots; /* the old table stays in the arena until the cycle ends */
    m->cap = cap;
    return 0;
}

static int add_key(ks_cycle *cycle, ipa_tpmap *m, ks_sym key)
{
    for (uint32_t i = 0; i < m->nkeys; i++)
        if (m->keys[i] == key)
            return 0;
    if (m->nkeys == m->keys_cap) {
        uint32_t cap = m->keys_cap ? m->keys_cap * 2 : 4;
        ks_sym *keys = ks_cycle_alloc(cycle, (size_t)cap * sizeof(*keys));
        if (!keys)
            return KS_ENOMEM;
        if (m->nkeys)
            memcpy(keys, m->keys, m->nkeys * sizeof(*keys));
        m->keys = keys;
        m->keys_cap = cap;
    }
    m->keys[m->nkeys++] = key;
    return 0;
}

int ipa_tpmap_add(ks_cycle *cycle, ipa_tpmap *m, ks_sym key, ks_sym value, int64_t delta)
{
    ipa_pair *p = m->cap ? find_slot(m->slots, m->cap, key, value) : NULL;
    if (!p || p->key == KS_SYM_EMPTY) {
        if ((m->used + 1) * 2 > m->cap) {
            if (grow(cycle, m) != 0)
                return KS_ENOMEM;
            p = find_slot(m->slots, m->cap, key, value);
        }
        if (add_key(cycle, m, key) != 0)
            return KS_ENOMEM;
        p->key = key;
        p->value = value;
        p->n = 0;
        m->used++;
    }
    int was_zero = p->n == 0;
    p->n += delta;
    if (was_zero && p->n != 0)
        m->nonzero++;
    else if (!was_zero && p->n == 0)
        m->nonzero--;
    return 0;
}

int64_t ipa_tpmap_get(const ipa_tpmap *m, ks_sym key, ks_sym value)
{
    if (m->used == 0)
        return 0;
    const ipa_pair *p = find_slot(m->slots, m->cap, key, value);
    return p->key == KS_SYM_EMPTY ? 0 : p->n;
}

int ipa_tpmap_clone(ks_cycle *into, ipa_tpmap *dst, const ipa_tpmap *src)
{
    *dst = *src;
    if (src->cap) {
        dst->slots = ks_cycle_alloc(into, (size_t)src->cap * sizeof(*dst->slots));
        if (!dst->slots)
            return KS_ENOMEM;
        memcpy(dst->slots, src->slots, (size_t)src->cap * sizeof(*dst->slots));
    }
    if (src->keys_cap) {
        dst->keys = ks_cycle_alloc(into, (size_t)src->keys_cap * sizeof(*dst->keys));
        if (!dst->keys)
            return KS_ENOMEM;
        memcpy(dst->keys, src->keys, (size_t)src->nkeys * sizeof(*dst->keys));
    }
    return 0;
}

int64_t ipa_tpmap_node_sum(const ipa_tpmap *m, const ks_label *labels, size_t nlabels)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < m->nkeys; i++) {
        ks_sym v = ks_labels_get(labels, nlabels, m->keys[i]);
        if (v != KS_SYM_ABSENT)
            sum += ipa_tpmap_get(m, m->keys[i], v);
    }
    return sum;
}

int ipa_tpmap_node_positive(const ipa_tpmap *m, const ks_label *labels, size_t nlabels)
{
    for (uint32_t i = 0; i < m->nkeys; i++) {
        ks_sym v = ks_labels_get(labels, nlabels, m->keys[i]);
        if (v != KS_SYM_ABSENT && ipa_tpmap_get(m, m->keys[i], v) > 0)
            return 1;
    }
    return 0;
}

/* ---- Namespaces ------------------------------------------------------------------------------ */

static ipa_ns host_lookup(ks_cycle *cycle, ks_sym ns)
{
    ipa_ns r = {.ns = ns};
    r.known = ks_namespace_labels(cycle, ns, &r.labels, &r.nlabels) == 0;
    if (!r.known) {
        r.labels = NULL;
        r.nlabels = 0;
    }
    return r;
}

void ipa_ns_cache_init(ipa_ns_cache *c, ks_cycle *cycle, int cached)
{
    memset(c, 0, sizeof(*c));
    c->cycle = cycle;
    if (cached) {
        c->slots = ks_cycle_alloc(cycle, 64 * sizeof(*c->slots));
        c->cap = c->slots ? 64 : 0; /* without memory, ask the host every time */
    }
}

static ipa_ns *ns_slot(ipa_ns *slots, uint32_t cap, ks_sym ns)
{
    uint32_t mask = cap - 1;
    for (uint32_t i = pair_hash(ns, 0x9e3779b9u) & mask;; i = (i + 1) & mask)
        if (!slots[i].filled || slots[i].ns == ns)
            return &slots[i];
}

ipa_ns ipa_ns_lookup(ipa_ns_cache *c, ks_sym ns)
{
    if (c->cap == 0)
        return host_lookup(c->cycle, ns);
    ipa_ns *s = ns_slot(c->slots, c->cap, ns);
    if (s->filled)
        return *s;
    if ((c->used + 1) * 2 > c->cap) {
        uint32_t cap = c->cap * 2;
        ipa_ns *slots = ks_cycle_alloc(c->cycle, (size_t)cap * sizeof(*slots));
        if (!slots)
            return host_lookup(c->cycle, ns);
        for (uint32_t i = 0; i < c->cap; i++)
            if (c->slots[i].filled)
                *ns_slot(slots, cap, c->slots[i].ns) = c->slots[i];
        c->slots = slots;
        c->cap = cap;
        s = ns_slot(slots, cap, ns);
    }
    *s = host_lookup(c->cycle, ns);
    s->filled = 1;
    c->used++;
    return *s;
}

int ipa_ns_snapshot(ks_cycle *cycle, ks_sym ns, ipa_ns *out)
{
    *out = host_lookup(cycle, ns);
    if (out->nlabels) {
        ks_label *copy = ks_cycle_alloc(cycle, out->nlabels * sizeof(*copy));
        if (!copy)
            return KS_ENOMEM;
        memcpy(copy, out->labels, out->nlabels * sizeof(*copy));
        out->labels = copy;
    }
    return 0;
}

/* ---- Term matching --------------------------------------------------------------------------- */

static int selector_is_empty(const ks_label_selector *s)
{
    return s->present && s->nmatch_labels == 0 && s->nexprs == 0;
}

static int namespace_matches(const ks_pod_affinity_term *t, const ks_pod *owner,
                             const ks_pod *target, ipa_owner_kind kind, const ipa_ns *target_ns,
                             ipa_ns_cache *nsc)
{
    ks_sym ns = ks_pod_namespace(target);
    if (t->nnamespaces == 0 && !t->namespace_selector.present)
        return ns == ks_pod_namespace(owner);
    for (uint32_t i = 0; i < t->nnamespaces; i++)
        if (t->namespaces[i] == ns)
            return 1;
    if (!t->namespace_selector.present)
        return 0; /* nil namespaceSelector: labels.Nothing() */
    if (selector_is_empty(&t->namespace_selector))
        return 1; /* {}: every namespace */
    ipa_ns info = target_ns ? *target_ns : ipa_ns_lookup(nsc, ns);
    if (!info.known && kind == IPA_INCOMING)
        return 0; /* not among the Namespace objects the selector was resolved against */
    return ks_label_selector_matches(&t->namespace_selector, info.labels, info.nlabels);
}

/* matchLabelKeys / mismatchLabelKeys, merged into the selector from the owner's labels as the API
 * server's applyMatchLabelKeysAndMismatchLabelKeys does (only for a non-nil labelSelector). */
static int label_keys_match(const ks_pod_affinity_term *t, const ks_pod *owner,
                            const ks_label *labels, size_t nlabels)
{
    for (uint32_t i = 0; i < t->nmatch_label_keys; i++) {
        ks_sym want = ks_pod_label(owner, t->match_label_keys[i]);
        if (want != KS_SYM_ABSENT && ks_labels_get(labels, nlabels, t->match_label_keys[i]) != want)
            return 0;
    }
    for (uint32_t i = 0; i < t->nmismatch_label_keys; i++) {
        ks_sym avoid = ks_pod_label(owner, t->mismatch_label_keys[i]);
        if (avoid != KS_SYM_ABSENT &&
            ks_labels_get(labels, nlabels, t->mismatch_label_keys[i]) == avoid)
            return 0;
    }
    return 1;
}

int ipa_term_matches(const ks_pod_affinity_term *t, const ks_pod *owner, const ks_pod *target,
                     ipa_owner_kind kind, const ipa_ns *target_ns, ipa_ns_cache *nsc)
{
    const ks_label *labels;
    if (!t->selector.present)
        return 0; /* nil labelSelector matches no pod */
    if (!namespace_matches(t, owner, target, kind, target_ns, nsc))
        return 0;
    size_t n = ks_pod_labels(target, &labels);
    return ks_label_selector_matches(&t->selector, labels, n) &&
           label_keys_match(t, owner, labels, n);
}

int ipa_all_terms_match(const ks_pod_affinity_term *terms, uint32_t n, const ks_pod *owner,
                        const ks_pod *target, ipa_owner_kind kind, const ipa_ns *target_ns,
                        ipa_ns_cache *nsc)
{
    if (n == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (!ipa_term_matches(&terms[i], owner, target, kind, target_ns, nsc))
            return 0;
    return 1;
}
