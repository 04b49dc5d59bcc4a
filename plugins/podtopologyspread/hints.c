/*
 * PodTopologySpread's queueing hints (upstream plugin.go isSchedulableAfter*, v1.37).
 *
 * The hints judge a pod against its DoNotSchedule constraints (upstream getConstraints(pod)),
 * built here without a cycle: the pod's own spec.topologySpreadConstraints, or the default
 * constraints. The default ones take their selector from the Services, ReplicaSets, ... that
 * select the pod, which only a cycle can read (ks_pod_owner_selectors): when a default
 * constraint is DoNotSchedule the hints cannot tell and answer Queue, as upstream does when
 * getConstraints fails. (The system defaults are ScheduleAnyway: the pod then has no hard
 * constraint, as upstream.)
 *
 * Threads: the event thread that delivers the change; pure (the pod, the event and the plugin's
 * immutable configuration only), nothing allocated.
 */
#include <string.h>

#include "podtopologyspread_int.h"

#define HINT_MAX_CONSTRAINTS 32 /* more: cannot tell (Queue) */
#define HINT_MAX_EXTRA 64       /* matchLabelKeys values, all constraints together */

typedef struct hint_constraints {
    size_t n;
    pts_constraint cs[HINT_MAX_CONSTRAINTS];
    ks_label extra[HINT_MAX_EXTRA];
} hint_constraints;

static ks_inclusion_policy resolve(ks_inclusion_policy p, ks_inclusion_policy dflt)
{
    return p == KS_POLICY_UNSET ? dflt : p;
}

/* upstream getConstraints(pod) with DoNotSchedule, as common.c's explicit_constraints (the same
 * selector, matchLabelKeys and policy rules). 0, or -1 when it cannot tell. */
static int hint_constraints_of(const pts_plugin *pl, const ks_pod *pod, hint_constraints *hc)
{
    const ks_topology_spread_constraint *tsc;
    size_t ntsc = ks_pod_topology_spread_constraints(pod, &tsc), nextra = 0;
    hc->n = 0;
    if (ntsc == 0) {
        for (size_t i = 0; i < pl->ndefaults; i++)
            if (pl->defaults[i].when == KS_DO_NOT_SCHEDULE)
                return -1; /* needs the owners' selector: a cycle's */
        return 0;
    }
    const ks_label *labels;
    size_t nlabels = ks_pod_labels(pod, &labels);
    for (size_t i = 0; i < ntsc; i++) {
        const ks_topology_spread_constraint *t = &tsc[i];
        if (t->when_unsatisfiable != KS_DO_NOT_SCHEDULE)
            continue;
        if (hc->n == HINT_MAX_CONSTRAINTS)
            return -1;
        pts_constraint *c = &hc->cs[hc->n++];
        memset(c, 0, sizeof(*c));
        c->max_skew = t->max_skew;
        c->key = t->topology_key;
        c->min_domains = t->min_domains > 0 ? t->min_domains : 1;
        c->affinity_policy = resolve(t->node_affinity_policy, KS_POLICY_HONOR);
        c->taints_policy = resolve(t->node_taints_policy, KS_POLICY_IGNORE);
        c->extra = &hc->extra[nextra];
        for (uint32_t k = 0; k < t->nmatch_label_keys; k++) {
            ks_sym key = t->match_label_keys[k], v = ks_labels_get(labels, nlabels, key);
            int dup = 0;
            if (v == KS_SYM_ABSENT)
                continue;
            for (uint32_t j = 0; j < c->nextra; j++)
                dup |= c->extra[j].key == key;
            if (dup)
                continue;
            if (nextra == HINT_MAX_EXTRA)
                return -1;
            hc->extra[nextra++] = (ks_label){key, v};
            c->nextra++;
        }
        if (t->selector.present) {
            c->nsel = 1;
            c->sel = &t->selector;
        } else {
            c->nothing = c->nextra == 0;
        }
    }
    return 0;
}

static int selects(const pts_constraint *c, const ks_pod *p)
{
    const ks_label *labels;
    size_t n = ks_pod_labels(p, &labels);
    return pts_selects(c, labels, n);
}

static int labels_equal(const ks_pod *a, const ks_pod *b)
{
    const ks_label *la, *lb;
    size_t na = ks_pod_labels(a, &la), nb = ks_pod_labels(b, &lb);
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) /* both sorted by key id */
        if (la[i].key != lb[i].key || la[i].value != lb[i].value)
            return 0;
    return 1;
}

/* upstream isSchedulableAfterPodLabelChange */
static ks_queueing_hint after_label_change(const hint_constraints *hc, const ks_pod *orig,
                                           const ks_pod *mod)
{
    if (labels_equal(orig, mod))
        return KS_QUEUE_SKIP;
    for (size_t i = 0; i < hc->n; i++)
        if (selects(&hc->cs[i], orig) != selects(&hc->cs[i], mod))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

static int tolerations_equal(const ks_pod *a, const ks_pod *b)
{
    const ks_toleration *ta, *tb;
    size_t na = ks_pod_tolerations(a, &ta), nb = ks_pod_tolerations(b, &tb);
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (ta[i].key != tb[i].key || ta[i].op != tb[i].op || ta[i].value != tb[i].value ||
            ta[i].effect != tb[i].effect || ta[i].has_seconds != tb[i].has_seconds ||
            (ta[i].has_seconds && ta[i].toleration_seconds != tb[i].toleration_seconds))
            return 0;
    return 1;
}

ks_queueing_hint pts_after_target_pod_change(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    hint_constraints hc;
    if (!ev->old_pod || !ev->new_pod || hint_constraints_of(self, pod, &hc) != 0)
        return KS_QUEUE;
    if (!tolerations_equal(ev->new_pod, ev->old_pod))
        for (size_t i = 0; i < hc.n; i++)
            if (hc.cs[i].taints_policy == KS_POLICY_HONOR)
                return KS_QUEUE; /* a new toleration may let a Honor constraint count a node */
    return after_label_change(&hc, ev->old_pod, ev->new_pod);
}

/* upstream involvedInTopologySpreading (v1.37): assigned or nominated, and in the namespace. */
static int involved(const ks_pod *incoming, const ks_pod *with_spreading)
{
    ks_sym nominated = ks_pod_nominated_node_name(incoming);
    if (ks_pod_node_name(incoming) == KS_SYM_EMPTY &&
        (nominated == KS_SYM_EMPTY || nominated == KS_SYM_ABSENT))
        return 0;
    return ks_pod_namespace(incoming) == ks_pod_namespace(with_spreading);
}

ks_queueing_hint pts_after_assigned_pod_change(void *self, const ks_pod *pod,
                                               const ks_event_info *ev)
{
    const ks_pod *orig = ev->old_pod, *mod = ev->new_pod;
    if (!orig && !mod)
        return KS_QUEUE; /* not a Pod event: cannot tell */
    if ((mod && !involved(mod, pod)) || (orig && !involved(orig, pod)))
        return KS_QUEUE_SKIP;
    hint_constraints hc;
    if (hint_constraints_of(self, pod, &hc) != 0)
        return KS_QUEUE;
    if (orig && mod)
        return after_label_change(&hc, orig, mod);
    /* added (mod) or deleted (orig): Queue when it matches any constraint's selector */
    const ks_pod *p = mod ? mod : orig;
    for (size_t i = 0; i < hc.n; i++)
        if (selects(&hc.cs[i], p))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream nodeLabelsMatchSpreadConstraints: the node has every topology key. */
static int node_matches(const hint_constraints *hc, const ks_node *node)
{
    const ks_label *labels;
    size_t n = ks_node_labels(node, &labels);
    return pts_node_has_keys(hc->cs, hc->n, labels, n);
}

static int topology_labels_changed(const hint_constraints *hc, const ks_node *o, const ks_node *m)
{
    for (size_t i = 0; i < hc->n; i++)
        if (pts_domain(ks_node_label(o, hc->cs[i].key)) !=
            pts_domain(ks_node_label(m, hc->cs[i].key)))
            return 1;
    return 0;
}

static int taints_equal(const ks_node *a, const ks_node *b)
{
    const ks_taint *ta, *tb;
    size_t na = ks_node_taints(a, &ta), nb = ks_node_taints(b, &tb);
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (ta[i].key != tb[i].key || ta[i].value != tb[i].value || ta[i].effect != tb[i].effect)
            return 0;
    return 1;
}

ks_queueing_hint pts_after_node_change(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    const ks_node *orig = ev->old_node, *mod = ev->new_node;
    hint_constraints hc;
    if ((!orig && !mod) || hint_constraints_of(self, pod, &hc) != 0)
        return KS_QUEUE;
    int orig_matching = orig && node_matches(&hc, orig);
    int mod_matching = mod && node_matches(&hc, mod);
    if (orig && mod) {
        if (orig_matching != mod_matching)
            return KS_QUEUE;
        if (mod_matching && (topology_labels_changed(&hc, orig, mod) || !taints_equal(orig, mod)))
            return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (mod) /* added */
        return mod_matching ? KS_QUEUE : KS_QUEUE_SKIP;
    return orig_matching ? KS_QUEUE : KS_QUEUE_SKIP; /* deleted */
}
