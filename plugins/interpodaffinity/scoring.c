/*
 * InterPodAffinity scoring (upstream plugins/interpodaffinity/scoring.go, v1.34).
 *
 *   PreScore        sums, per topology pair (term's key, existing pod's node's value), over every
 *                   pod E on every snapshot node that has labels:
 *                     +w / -w  the incoming pod's preferred affinity / anti-affinity terms that
 *                              match E;
 *                     +hardPodAffinityWeight  E's required affinity terms matching the incoming pod
 *                              (when the weight is > 0);
 *                     +w / -w  E's preferred affinity / anti-affinity terms matching the incoming
 *                              pod.
 *                   Only pods with (anti-)affinity are visited when the incoming pod has no
 *                   preferred terms. Skip when ignorePreferredTermsOfExistingPods is set and the
 *                   incoming pod has no preferred terms, or when nothing was summed.
 *   Score           the sum of the node's pairs (signed).
 *   NormalizeScore  int64(100 * (raw - min) / (max - min)) in float64; 0 everywhere when
 *                   max == min.
 */
#include <limits.h>

#include "interpodaffinity_int.h"

/* The PreScore state: never changed after PreScore, so Score workers share it and a cloned cycle
 * state shares the pointer. */
typedef struct score_state {
    ipa_tpmap topology_score;
} score_state;

static char score_key;

typedef struct prescore_ctx {
    ks_cycle *cycle;
    const ipa_plugin *pl;
    const ks_pod *pod;
    const ks_pod_affinity *aff; /* the incoming pod's, NULL when none */
    ipa_ns own_ns;
    ipa_ns_cache nsc;
    ipa_tpmap *m;
} prescore_ctx;

/* upstream scoreMap.processTerm. */
static int process_term(prescore_ctx *c, const ks_pod_affinity_term *t, int64_t weight,
                        const ks_pod *owner, const ks_pod *target, ipa_owner_kind kind,
                        const ks_label *labels, size_t nlabels)
{
    const ipa_ns *target_ns = kind == IPA_EXISTING ? &c->own_ns : NULL;
    if (!ipa_term_matches(t, owner, target, kind, target_ns, &c->nsc))
        return 0;
    ks_sym v = ks_labels_get(labels, nlabels, t->topology_key);
    if (v == KS_SYM_ABSENT)
        return 0;
    return ipa_tpmap_add(c->cycle, c->m, t->topology_key, v, weight);
}

static int process_weighted(prescore_ctx *c, const ks_weighted_pod_affinity_term *terms, uint32_t n,
                            int64_t sign, const ks_pod *owner, const ks_pod *target,
                            ipa_owner_kind kind, const ks_label *labels, size_t nlabels)
{
    for (uint32_t i = 0; i < n; i++)
        if (process_term(c, &terms[i].term, sign * terms[i].weight, owner, target, kind, labels,
                         nlabels) != 0)
            return KS_ENOMEM;
    return 0;
}

/* upstream processExistingPod. */
static int process_existing_pod(prescore_ctx *c, const ks_pod *e, const ks_label *labels,
                                size_t nlabels)
{
    const ks_pod_affinity *ia = c->aff, *ea = ks_pod_affinity_of(e);
    if (ia && (process_weighted(c, ia->preferred_affinity, ia->npreferred_affinity, 1, c->pod, e,
                                IPA_INCOMING, labels, nlabels) ||
               process_weighted(c, ia->preferred_anti_affinity, ia->npreferred_anti_affinity, -1,
                                c->pod, e, IPA_INCOMING, labels, nlabels)))
        return KS_ENOMEM;
    if (!ea)
        return 0;
    if (c->pl->hard_pod_affinity_weight > 0) {
        for (uint32_t i = 0; i < ea->nrequired_affinity; i++)
            if (process_term(c, &ea->required_affinity[i], c->pl->hard_pod_affinity_weight, e,
                             c->pod, IPA_EXISTING, labels, nlabels) != 0)
                return KS_ENOMEM;
    }
    if (process_weighted(c, ea->preferred_affinity, ea->npreferred_affinity, 1, e, c->pod,
                         IPA_EXISTING, labels, nlabels) ||
        process_weighted(c, ea->preferred_anti_affinity, ea->npreferred_anti_affinity, -1, e,
                         c->pod, IPA_EXISTING, labels, nlabels))
        return KS_ENOMEM;
    return 0;
}

/* pre_score: scheduling thread, once per cycle. Visits every snapshot node (not only the feasible
 * ones): a pod on an infeasible node still counts for the nodes that share its topology value. */
ks_code ipa_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                      const ks_node_info *const *nodes, size_t nnodes, ks_status *st)
{
    (void)nodes;
    (void)nnodes;
    const ipa_plugin *pl = self;
    const ks_pod_affinity *aff = ks_pod_affinity_of(pod);
    int has_constraints =
        aff && (aff->npreferred_affinity > 0 || aff->npreferred_anti_affinity > 0);
    if (pl->ignore_preferred_terms_of_existing && !has_constraints)
        return KS_SKIP;

    score_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    prescore_ctx c = {.cycle = cycle, .pl = pl, .pod = pod, .aff = aff};
    if (!s || ipa_ns_snapshot(cycle, ks_pod_namespace(pod), &c.own_ns) != 0)
        goto nomem;
    c.m = &s->topology_score;
    ipa_ns_cache_init(&c.nsc, cycle, has_constraints);

    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    if (has_constraints) {
        /* The pod's preferred terms look at every pod on every node. */
        size_t n = ks_snapshot_node_count(snap);
        for (size_t i = 0; i < n; i++) {
            const ks_node_info *ni = ks_snapshot_node_at(snap, i);
            size_t npods = ks_node_info_pod_count(ni);
            if (npods == 0)
                continue;
            const ks_label *labels;
            size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
            if (nlabels == 0)
                continue;
            for (size_t k = 0; k < npods; k++)
                if (process_existing_pod(&c, ks_node_info_pod_at(ni, k), labels, nlabels) != 0)
                    goto nomem;
        }
    } else {
        /* Only existing pods' terms matter: the nodes holding pods with affinity (upstream
         * HavePodsWithAffinityList). */
        const ks_node_info *const *list;
        size_t n = ks_snapshot_nodes_with_affinity_pods(snap, 0, &list);
        for (size_t i = 0; i < n; i++) {
            const ks_node_info *ni = list[i];
            const ks_label *labels;
            size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
            if (nlabels == 0)
                continue;
            const ks_pod *const *with;
            size_t nwith = ks_node_info_pods_with_affinity(ni, &with);
            for (size_t k = 0; k < nwith; k++)
                if (process_existing_pod(&c, with[k], labels, nlabels) != 0)
                    goto nomem;
        }
    }

    if (s->topology_score.used == 0)
        return KS_SKIP; /* no pair was touched: nothing to prefer */
    if (ks_cycle_write(cycle, &score_key, s, NULL) != 0)
        goto nomem;
    return KS_SUCCESS;
nomem:
    ks_status_reason(st, IPA_NAME ": out of memory in PreScore");
    return KS_ERROR;
}

/* score: called concurrently for different nodes; the PreScore state is read-only here. */
ks_code ipa_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                  int64_t *score, ks_status *st)
{
    (void)self;
    (void)pod;
    const score_state *s = ks_cycle_read(cycle, &score_key);
    const ks_label *labels;
    if (!s) {
        ks_status_reason(st, "failed to read \"PreScore" IPA_NAME "\" from cycleState: not found");
        return KS_ERROR;
    }
    size_t nlabels = ks_node_labels(ks_node_info_node(node), &labels);
    *score = ipa_tpmap_node_sum(&s->topology_score, labels, nlabels);
    return KS_SUCCESS;
}

/* normalize_score: scheduling thread, once per cycle. */
ks_code ipa_normalize_score(void *self, ks_cycle *cycle, const ks_pod *pod, ks_node_score *scores,
                            size_t nscores, ks_status *st)
{
    (void)self;
    (void)pod;
    const score_state *s = ks_cycle_read(cycle, &score_key);
    if (!s) {
        ks_status_reason(st, "failed to read \"PreScore" IPA_NAME "\" from cycleState: not found");
        return KS_ERROR;
    }
    if (s->topology_score.used == 0)
        return KS_SUCCESS;
    int64_t min = INT64_MAX, max = INT64_MIN;
    for (size_t i = 0; i < nscores; i++) {
        if (scores[i].score > max)
            max = scores[i].score;
        if (scores[i].score < min)
            min = scores[i].score;
    }
    int64_t diff = max - min;
    for (size_t i = 0; i < nscores; i++) {
        double f = 0;
        if (diff > 0)
            f = (double)KS_MAX_NODE_SCORE * ((double)(scores[i].score - min) / (double)diff);
        scores[i].score = (int64_t)f;
    }
    return KS_SUCCESS;
}
