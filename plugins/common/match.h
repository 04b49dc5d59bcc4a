/*
 * Matching helpers shared by in-tree plugins, written against the SDK only (header-only, static
 * inline): node selector terms and required node affinity (component-helpers
 * nodeaffinity), and taint toleration (component-helpers scheduling/corev1). Out-of-tree plugins
 * may copy this file; it has no kubesched internals.
 *
 * Threads: pure functions of their arguments; safe in Filter/Score workers.
 */
#ifndef KS_PLUGINS_COMMON_MATCH_H
#define KS_PLUGINS_COMMON_MATCH_H

#include <stdint.h>
#include <stdlib.h>

#include "kubesched/plugin.h"

/* Parses a label value as upstream strconv.ParseInt(v, 10, 64); 0 on success. */
static inline int ks_h_parse_int64(ks_sym v, int64_t *out)
{
    const char *s = ks_sym_str(v), *p;
    char *end;
    if (!s || !*s)
        return -1;
    p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    long long x = strtoll(s, &end, 10);
    if (*end)
        return -1;
    *out = (int64_t)x;
    return 0;
}

/* One requirement against a value (KS_SYM_ABSENT when the label is missing). */
static inline int ks_h_requirement_matches(const ks_selector_req *r, ks_sym v)
{
    switch (r->op) {
    case KS_OP_IN:
        if (v == KS_SYM_ABSENT)
            return 0;
        for (uint32_t i = 0; i < r->nvalues; i++)
            if (r->values[i] == v)
                return 1;
        return 0;
    case KS_OP_NOT_IN:
        for (uint32_t i = 0; v != KS_SYM_ABSENT && i < r->nvalues; i++)
            if (r->values[i] == v)
                return 0;
        return 1;
    case KS_OP_EXISTS:
        return v != KS_SYM_ABSENT;
    case KS_OP_DOES_NOT_EXIST:
        return v == KS_SYM_ABSENT;
    case KS_OP_GT:
    case KS_OP_LT: {
        int64_t have, want;
        if (v == KS_SYM_ABSENT || r->nvalues != 1 || ks_h_parse_int64(v, &have) != 0 ||
            ks_h_parse_int64(r->values[0], &want) != 0)
            return 0;
        return r->op == KS_OP_GT ? have > want : have < want;
    }
    }
    return 0;
}

/* A NodeSelectorTerm: all matchExpressions (labels) and matchFields (metadata.name) hold; a
 * term with neither matches nothing (upstream nodeaffinity). */
static inline int ks_h_term_matches(const ks_node_selector_term *t, const ks_node *node,
                                    ks_sym metadata_name_key)
{
    const ks_label *labels;
    size_t nlabels = ks_node_labels(node, &labels);
    if (t->nexprs == 0 && t->nfields == 0)
        return 0;
    for (uint32_t i = 0; i < t->nexprs; i++)
        if (!ks_h_requirement_matches(&t->exprs[i],
                                      ks_labels_get(labels, nlabels, t->exprs[i].key)))
            return 0;
    for (uint32_t i = 0; i < t->nfields; i++) {
        const ks_selector_req *r = &t->fields[i];
        /* Only metadata.name is a supported field; In/NotIn only (others never match). */
        if (r->key != metadata_name_key || (r->op != KS_OP_IN && r->op != KS_OP_NOT_IN))
            return 0;
        if (!ks_h_requirement_matches(r, ks_node_name(node)))
            return 0;
    }
    return 1;
}

/* Terms are ORed. */
static inline int ks_h_terms_match(const ks_node_selector_term *terms, uint32_t n,
                                   const ks_node *node, ks_sym metadata_name_key)
{
    for (uint32_t i = 0; i < n; i++)
        if (ks_h_term_matches(&terms[i], node, metadata_name_key))
            return 1;
    return 0;
}

/* spec.nodeSelector and the required node affinity of pod (upstream
 * GetRequiredNodeAffinity(pod).Match(node)). metadata_name_key = ks_intern("metadata.name"). */
static inline int ks_h_pod_matches_node_affinity(const ks_pod *pod, const ks_node *node,
                                                 ks_sym metadata_name_key)
{
    const ks_label *sel, *labels;
    size_t nsel = ks_pod_node_selector(pod, &sel);
    size_t nlabels = ks_node_labels(node, &labels);
    for (size_t i = 0; i < nsel; i++)
        if (ks_labels_get(labels, nlabels, sel[i].key) != sel[i].value)
            return 0;
    const ks_node_affinity *na = ks_pod_node_affinity(pod);
    if (na && na->has_required)
        return ks_h_terms_match(na->required, na->nrequired, node, metadata_name_key);
    return 1;
}

/* Toleration t tolerates taint x (upstream Toleration.ToleratesTaint). */
static inline int ks_h_tolerates(const ks_toleration *t, const ks_taint *x)
{
    if (t->effect != KS_EFFECT_ALL && t->effect != x->effect)
        return 0;
    if (t->key != KS_SYM_EMPTY && t->key != x->key)
        return 0;
    if (t->op == KS_TOL_EXISTS)
        return 1;
    return t->value == x->value;
}

static inline int ks_h_tolerated_by_any(const ks_toleration *ts, size_t n, const ks_taint *x)
{
    for (size_t i = 0; i < n; i++)
        if (ks_h_tolerates(&ts[i], x))
            return 1;
    return 0;
}

#endif
