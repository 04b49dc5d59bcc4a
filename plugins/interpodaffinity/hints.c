/*
 * InterPodAffinity's queueing hints (upstream plugin.go isSchedulableAfter*, v1.37).
 *
 * Terms are the required pod affinity / anti-affinity terms, matched as upstream's
 * AffinityTerm.Matches(pod, nil): the term's namespaces (the owner's own when none is named), or a
 * namespaceSelector matched against no labels (so {} or a selector only of DoesNotExist / NotIn
 * matches every namespace, as upstream's hint does).
 *
 * Threads: the event thread that delivers the change; pure (the pods and the event only).
 */
#include "interpodaffinity_int.h"

static const ipa_ns k_no_labels = {0}; /* Matches(pod, nil): no namespace labels */

static int matches(const ks_pod_affinity_term *t, const ks_pod *owner, const ks_pod *target)
{
    return ipa_term_matches(t, owner, target, IPA_EXISTING, &k_no_labels, NULL);
}

/* upstream podMatchesAllAffinityTerms (false for no terms) */
static int matches_all(const ks_pod_affinity_term *terms, uint32_t n, const ks_pod *owner,
                       const ks_pod *target)
{
    return ipa_all_terms_match(terms, n, owner, target, IPA_EXISTING, &k_no_labels, NULL);
}

/* upstream podMatchesAnyAffinityTerms */
static int matches_any(const ks_pod_affinity_term *terms, uint32_t n, const ks_pod *owner,
                       const ks_pod *target)
{
    for (uint32_t i = 0; i < n; i++)
        if (matches(&terms[i], owner, target))
            return 1;
    return 0;
}

static int unscheduled(const ks_pod *p)
{
    ks_sym nominated = ks_pod_nominated_node_name(p);
    return ks_pod_node_name(p) == KS_SYM_EMPTY &&
           (nominated == KS_SYM_EMPTY || nominated == KS_SYM_ABSENT);
}

static const ks_pod_affinity k_none = {0};

static const ks_pod_affinity *affinity_of(const ks_pod *p)
{
    const ks_pod_affinity *a = ks_pod_affinity_of(p);
    return a ? a : &k_none;
}

/* upstream isSchedulableAfterAssignedPodChange (v1.37): pods with only a nominatedNodeName
 * count; a relabelled pod that now matches all affinity terms, or no longer matches any
 * anti-affinity term; an added pod that matches all affinity terms; a deleted pod that matches any
 * anti-affinity term, or whose own required anti-affinity the pod matches. */
ks_queueing_hint ipa_after_assigned_pod_change(void *self, const ks_pod *pod,
                                               const ks_event_info *ev)
{
    (void)self;
    const ks_pod *orig = ev->old_pod, *mod = ev->new_pod;
    if (!orig && !mod)
        return KS_QUEUE; /* not a Pod event: cannot tell */
    if ((mod && unscheduled(mod)) || (orig && unscheduled(orig)))
        return KS_QUEUE_SKIP;
    const ks_pod_affinity *a = affinity_of(pod);
    if (orig && mod) {
        if (!matches_all(a->required_affinity, a->nrequired_affinity, pod, orig) &&
            matches_all(a->required_affinity, a->nrequired_affinity, pod, mod))
            return KS_QUEUE;
        if (matches_any(a->required_anti_affinity, a->nrequired_anti_affinity, pod, orig) &&
            !matches_any(a->required_anti_affinity, a->nrequired_anti_affinity, pod, mod))
            return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (mod)
        return matches_all(a->required_affinity, a->nrequired_affinity, pod, mod) ? KS_QUEUE
                                                                                  : KS_QUEUE_SKIP;
    if (matches_any(a->required_anti_affinity, a->nrequired_anti_affinity, pod, orig))
        return KS_QUEUE;
    const ks_pod_affinity *oa = affinity_of(orig);
    if (matches_any(oa->required_anti_affinity, oa->nrequired_anti_affinity, orig, pod))
        return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterNodeChange: a new node with an affinity term's topology key, an
 * updated one that gained it or moved to another domain of it; for anti-affinity any new node,
 * or an updated one that lost a term's key or moved to another domain of it. */
ks_queueing_hint ipa_after_node_change(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    const ks_node *orig = ev->old_node, *mod = ev->new_node;
    if (!mod)
        return KS_QUEUE; /* not a Node add/update: cannot tell */
    const ks_pod_affinity *a = affinity_of(pod);
    for (uint32_t i = 0; i < a->nrequired_affinity; i++) {
        ks_sym key = a->required_affinity[i].topology_key;
        ks_sym mv = ks_node_label(mod, key);
        if (!orig) {
            if (mv != KS_SYM_ABSENT)
                return KS_QUEUE;
            continue;
        }
        ks_sym ov = ks_node_label(orig, key);
        if (ov == KS_SYM_ABSENT && mv != KS_SYM_ABSENT)
            return KS_QUEUE;
        if (ov != KS_SYM_ABSENT && mv != KS_SYM_ABSENT && ov != mv)
            return KS_QUEUE;
    }
    for (uint32_t i = 0; i < a->nrequired_anti_affinity; i++) {
        if (!orig)
            return KS_QUEUE;
        ks_sym key = a->required_anti_affinity[i].topology_key;
        ks_sym ov = ks_node_label(orig, key), mv = ks_node_label(mod, key);
        if (ov != KS_SYM_ABSENT && mv == KS_SYM_ABSENT)
            return KS_QUEUE;
        if (ov != KS_SYM_ABSENT && mv != KS_SYM_ABSENT && ov != mv)
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}
