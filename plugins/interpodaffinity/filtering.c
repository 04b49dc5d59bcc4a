/*
 * InterPodAffinity filtering (upstream plugins/interpodaffinity/filtering.go, v1.34).
 *
 *   PreFilter  counts, per topology pair (key, node's value), over the snapshot:
 *                existing_anti  existing pods' required anti-affinity terms that match the
 *                               incoming pod (nodes' pods with required anti-affinity only);
 *                affinity       existing pods that match ALL of the incoming pod's required
 *                               affinity terms, once per term;
 *                anti           existing pods matching each incoming required anti-affinity term.
 *              Skip when the pod has no required terms and existing_anti is empty.
 *   AddPod / RemovePod  the same counts for one pod, +1 / -1 (nominated pods, preemption).
 *   Filter     1. every required affinity term's key is on the node and its pair has a count,
 *                 unless no pair has one at all and the pod matches its own terms (the first pod
 *                 of a self-affine group): else UnschedulableAndUnresolvable
 *                 "node(s) didn't match pod affinity rules";
 *              2. no required anti-affinity term's pair has a count: else Unschedulable
 *                 "node(s) didn't match pod anti-affinity rules";
 *              3. no pair of the node has an existing_anti count: else Unschedulable
 *                 "node(s) didn't satisfy existing pods anti-affinity rules".
 */
#include "interpodaffinity_int.h"

#define REASON_AFFINITY "node(s) didn't match pod affinity rules"
#define REASON_ANTI_AFFINITY "node(s) didn't match pod anti-affinity rules"
#define REASON_EXISTING_ANTI "node(s) didn't satisfy existing pods anti-affinity rules"

/* The PreFilter state (upstream preFilterState). Written by PreFilter, changed only by
 * AddPod/RemovePod on the thread that owns the (cloned) cycle state, read-only in Filter. */
typedef struct filter_state {
    const ks_pod *pod;          /* the incoming pod, borrowed(cycle) */
    const ks_pod_affinity *aff; /* its pod (anti-)affinity, NULL when none */
    ipa_ns own_ns;              /* its namespace's labels, copied into the arena */
    int self_match;             /* it matches all its own required affinity terms */
    ipa_tpmap existing_anti;    /* existingAntiAffinityCounts */
    ipa_tpmap affinity;         /* affinityCounts */
    ipa_tpmap anti;             /* antiAffinityCounts */
} filter_state;

/* Cycle-state key: compared by address (not const, so that no constant merging can share it). */
static char filter_key;

static const ks_pod_affinity_term *required_affinity(const filter_state *s, uint32_t *n)
{
    *n = s->aff ? s->aff->nrequired_affinity : 0;
    return s->aff ? s->aff->required_affinity : NULL;
}

static const ks_pod_affinity_term *required_anti(const filter_state *s, uint32_t *n)
{
    *n = s->aff ? s->aff->nrequired_anti_affinity : 0;
    return s->aff ? s->aff->required_anti_affinity : NULL;
}

/* The count updates for one existing pod `other` on a node with these labels (upstream
 * updateWithAffinityTerms / updateWithAntiAffinityTerms), `mult` +1 or -1. which: bit 0 existing
 * pods' anti-affinity, bit 1 the incoming pod's terms. */
enum { UPDATE_EXISTING = 1, UPDATE_INCOMING = 2 };

static int update_with_pod(ks_cycle *cycle, filter_state *s, const ks_pod *other,
                           const ks_label *labels, size_t nlabels, int64_t mult, int which,
                           ipa_ns_cache *nsc)
{
    uint32_t n;
    const ks_pod_affinity_term *terms;
    if (which & UPDATE_EXISTING) {
        const ks_pod_affinity *oa = ks_pod_affinity_of(other);
        for (uint32_t i = 0; oa && i < oa->nrequired_anti_affinity; i++) {
            const ks_pod_affinity_term *t = &oa->required_anti_affinity[i];
            ks_sym v = ks_labels_get(labels, nlabels, t->topology_key);
            if (v == KS_SYM_ABSENT ||
                !ipa_term_matches(t, other, s->pod, IPA_EXISTING, &s->own_ns, nsc))
                continue;
            if (ipa_tpmap_add(cycle, &s->existing_anti, t->topology_key, v, mult) != 0)
                return KS_ENOMEM;
        }
    }
    if (!(which & UPDATE_INCOMING))
        return 0;
    terms = required_affinity(s, &n);
    if (ipa_all_terms_match(terms, n, s->pod, other, IPA_INCOMING, NULL, nsc)) {
        for (uint32_t i = 0; i < n; i++) {
            ks_sym v = ks_labels_get(labels, nlabels, terms[i].topology_key);
            if (v != KS_SYM_ABSENT &&
                ipa_tpmap_add(cycle, &s->affinity, terms[i].topology_key, v, mult) != 0)
                return KS_ENOMEM;
        }
    }
    terms = required_anti(s, &n);
    for (uint32_t i = 0; i < n; i++) {
        ks_sym v = ks_labels_get(labels, nlabels, terms[i].topology_key);
        if (v == KS_SYM_ABSENT ||
            !ipa_term_matches(&terms[i], s->pod, other, IPA_INCOMING, NULL, nsc))
            continue;
        if (ipa_tpmap_add(cycle, &s->anti, terms[i].topology_key, v, mult) != 0)
            return KS_ENOMEM;
    }
    return 0;
}

/* clone: the framework evaluates a node with nominated pods on a copy of the cycle state, which
 * AddPod/RemovePod then change; the copy lives in the new cycle's arena. */
static void *clone_state(ks_cycle *into, const void *data)
{
    const filter_state *src = data;
    filter_state *dst = ks_cycle_alloc(into, sizeof(*dst));
    if (!dst)
        return NULL;
    *dst = *src;
    if (ipa_tpmap_clone(into, &dst->existing_anti, &src->existing_anti) != 0 ||
        ipa_tpmap_clone(into, &dst->affinity, &src->affinity) != 0 ||
        ipa_tpmap_clone(into, &dst->anti, &src->anti) != 0)
        return NULL;
    return dst;
}

static const ks_state_ops filter_state_ops = {.clone = clone_state, .cleanup = NULL};

/* pre_filter: scheduling thread, once per cycle. */
ks_code ipa_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod, ks_prefilter_result *result,
                       ks_status *st)
{
    (void)self;
    (void)result;
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    filter_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    ipa_ns_cache nsc;
    uint32_t naff, nanti;
    if (!s || ipa_ns_snapshot(cycle, ks_pod_namespace(pod), &s->own_ns) != 0)
        goto nomem;
    s->pod = pod;
    s->aff = ks_pod_affinity_of(pod);
    const ks_pod_affinity_term *aff_terms = required_affinity(s, &naff);
    required_anti(s, &nanti);
    ipa_ns_cache_init(&nsc, cycle, naff + nanti > 0);
    s->self_match = ipa_all_terms_match(aff_terms, naff, pod, pod, IPA_INCOMING, &s->own_ns, &nsc);

    /* Existing pods' required anti-affinity: only the nodes that hold such pods (upstream
     * HavePodsWithRequiredAntiAffinityList). The pod's own required terms: every node. */
    const ks_node_info *const *list;
    size_t nlist = ks_snapshot_nodes_with_affinity_pods(snap, 1, &list);
    for (size_t i = 0; i < nlist; i++) {
        const ks_node_info *ni = list[i];
        const ks_pod *const *with_anti;
        const ks_label *labels;
        size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
        size_t nwith = ks_node_info_pods_with_required_anti_affinity(ni, &with_anti);
        for (size_t k = 0; k < nwith; k++)
            if (update_with_pod(cycle, s, with_anti[k], labels, nlabels, 1, UPDATE_EXISTING, &nsc))
                goto nomem;
    }
    if (naff + nanti > 0) {
        size_t nnodes = ks_snapshot_node_count(snap);
        for (size_t i = 0; i < nnodes; i++) {
            const ks_node_info *ni = ks_snapshot_node_at(snap, i);
            size_t npods = ks_node_info_pod_count(ni);
            if (npods == 0)
                continue;
            const ks_label *labels;
            size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
            for (size_t k = 0; k < npods; k++)
                if (update_with_pod(cycle, s, ks_node_info_pod_at(ni, k), labels, nlabels, 1,
                                    UPDATE_INCOMING, &nsc))
                    goto nomem;
        }
    }

    if (s->existing_anti.nonzero == 0 && naff == 0 && nanti == 0)
        return KS_SKIP;
    if (ks_cycle_write(cycle, &filter_key, s, &filter_state_ops) != 0)
        goto nomem;
    return KS_SUCCESS;
nomem:
    ks_status_reason(st, IPA_NAME ": out of memory in PreFilter");
    return KS_ERROR;
}

static ks_code update(ks_cycle *cycle, const ks_pod *other, const ks_node_info *ni, int64_t mult,
                      ks_status *st)
{
    filter_state *s = ks_cycle_read(cycle, &filter_key);
    ipa_ns_cache nsc;
    const ks_label *labels;
    if (!s) {
        ks_status_reason(st, "error reading \"PreFilter" IPA_NAME "\" from cycleState: not found");
        return KS_ERROR;
    }
    size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
    ipa_ns_cache_init(&nsc, cycle, 0);
    if (update_with_pod(cycle, s, other, labels, nlabels, mult, UPDATE_EXISTING | UPDATE_INCOMING,
                        &nsc) != 0) {
        ks_status_reason(st, IPA_NAME ": out of memory updating the PreFilter state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* pre_filter_add_pod / pre_filter_remove_pod: the thread that owns this cycle state (the
 * scheduling thread, or a Filter worker on its cloned state). */
ks_code ipa_add_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                    const ks_node_info *node, ks_status *st)
{
    (void)self;
    (void)pod;
    return update(cycle, other, node, 1, st);
}

ks_code ipa_remove_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                       const ks_node_info *node, ks_status *st)
{
    (void)self;
    (void)pod;
    return update(cycle, other, node, -1, st);
}

/* upstream satisfyPodAffinity. */
static int satisfies_pod_affinity(const filter_state *s, const ks_label *labels, size_t nlabels)
{
    uint32_t n;
    const ks_pod_affinity_term *terms = required_affinity(s, &n);
    int pods_exist = 1;
    for (uint32_t i = 0; i < n; i++) {
        ks_sym v = ks_labels_get(labels, nlabels, terms[i].topology_key);
        if (v == KS_SYM_ABSENT)
            return 0; /* every topology key must be on the node */
        if (ipa_tpmap_get(&s->affinity, terms[i].topology_key, v) <= 0)
            pods_exist = 0;
    }
    /* The first pod of a group whose terms select the group itself: no pod anywhere matches yet,
     * so it may go to any node that has the topology keys. */
    return pods_exist || (s->affinity.nonzero == 0 && s->self_match);
}

/* upstream satisfyPodAntiAffinity. */
static int satisfies_pod_anti_affinity(const filter_state *s, const ks_label *labels,
                                       size_t nlabels)
{
    uint32_t n;
    const ks_pod_affinity_term *terms = required_anti(s, &n);
    if (s->anti.nonzero == 0)
        return 1;
    for (uint32_t i = 0; i < n; i++) {
        ks_sym v = ks_labels_get(labels, nlabels, terms[i].topology_key);
        if (v != KS_SYM_ABSENT && ipa_tpmap_get(&s->anti, terms[i].topology_key, v) > 0)
            return 0;
    }
    return 1;
}

/* filter: called concurrently for different nodes; the PreFilter state is read-only here. Work is
 * O(terms + keys of existing anti-affinity) label lookups and table probes. */
ks_code ipa_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                   ks_status *st)
{
    (void)self;
    (void)pod;
    const filter_state *s = ks_cycle_read(cycle, &filter_key);
    const ks_label *labels;
    if (!s) {
        ks_status_reason(st, "error reading \"PreFilter" IPA_NAME "\" from cycleState: not found");
        return KS_ERROR;
    }
    size_t nlabels = ks_node_labels(ks_node_info_node(node), &labels);
    if (!satisfies_pod_affinity(s, labels, nlabels)) {
        ks_status_reason(st, REASON_AFFINITY);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (!satisfies_pod_anti_affinity(s, labels, nlabels)) {
        ks_status_reason(st, REASON_ANTI_AFFINITY);
        return KS_UNSCHEDULABLE;
    }
    if (s->existing_anti.nonzero > 0 &&
        ipa_tpmap_node_positive(&s->existing_anti, labels, nlabels)) {
        ks_status_reason(st, REASON_EXISTING_ANTI);
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}
