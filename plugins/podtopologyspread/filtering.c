/*
 * PodTopologySpread, DoNotSchedule constraints (upstream filtering.go, v1.34).
 *
 *   PreFilter  counts, over every node of the snapshot that has all the constraints' topology
 *              keys and passes each constraint's node inclusion policies, the pods that match
 *              each constraint per topology domain; Skip when the pod has no such constraint.
 *   AddPod /   the same counting for one pod on one node, +1 / -1, keeping upstream's two
 *   RemovePod  critical paths (so the minimum follows exactly as upstream's does).
 *   Filter     per constraint: the node lacks the key -> UnschedulableAndUnresolvable "... (missing
 *              required label)"; else skew = count(node's domain) + (1 if the pod matches itself)
 *              - global minimum (0 while fewer domains than minDomains); skew > maxSkew ->
 *              Unschedulable "node(s) didn't match pod topology spread constraints".
 */
#include <string.h>

#include "podtopologyspread_int.h"

char pts_prefilter_key;

/* Upstream criticalPaths.update: p[0] always holds the minimum; p[1] is some value not below it,
 * not necessarily the second smallest. The initial paths are ("", MaxInt32). */
static void paths_update(pts_path p[2], ks_sym value, int64_t num)
{
    int i = -1;
    if (value == p[0].value)
        i = 0;
    else if (value == p[1].value)
        i = 1;
    if (i >= 0) {
        p[i].num = num;
        if (p[0].num > p[1].num) {
            pts_path t = p[0];
            p[0] = p[1];
            p[1] = t;
        }
    } else if (num < p[0].num) {
        p[1] = p[0];
        p[0] = (pts_path){value, num};
    } else if (num < p[1].num) {
        p[1] = (pts_path){value, num};
    }
}

/* clone: the framework copies the cycle state to evaluate a node with nominated pods or a
 * preemption candidate; AddPod/RemovePod then change the copy only. */
static void *prefilter_clone(ks_cycle *into, const void *data)
{
    const pts_prefilter_state *s = data;
    pts_prefilter_state *c = ks_cycle_alloc(into, sizeof(*c));
    if (!c)
        return NULL;
    *c = *s;
    c->tables = ks_cycle_alloc(into, (s->n ? s->n : 1) * sizeof(*c->tables));
    c->paths = ks_cycle_alloc(into, (s->n ? s->n : 1) * sizeof(*c->paths));
    if (!c->tables || !c->paths)
        return NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (pts_table_copy(into, &c->tables[i], &s->tables[i]) != 0)
            return NULL;
        memcpy(c->paths[i], s->paths[i], sizeof(c->paths[i]));
    }
    return c;
}

static const ks_state_ops prefilter_ops = {prefilter_clone, NULL};

static ks_code no_memory(ks_status *st, const char *where)
{
    ks_status_reasonf(st, PTS_NAME ": out of memory in %s", where);
    return KS_ERROR;
}

/* pre_filter: scheduling thread, once per cycle. */
ks_code pts_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod, ks_prefilter_result *res,
                       ks_status *st)
{
    const pts_plugin *pl = self;
    pts_constraint *cs;
    size_t n;
    int explicit_;
    (void)res;
    if (pts_constraints(pl, cycle, pod, KS_DO_NOT_SCHEDULE, &cs, &n, &explicit_) != 0)
        return no_memory(st, "PreFilter");
    if (n == 0)
        return KS_SKIP;

    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    size_t nnodes = ks_snapshot_node_count(snap);
    ks_sym ns = ks_pod_namespace(pod);
    const ks_label *plabels;
    size_t nplabels = ks_pod_labels(pod, &plabels);
    pts_prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    uint8_t *self_match = ks_cycle_alloc(cycle, n);
    if (!s || !self_match)
        return no_memory(st, "PreFilter");
    s->n = n;
    s->cs = cs;
    s->self_match = self_match;
    s->tables = ks_cycle_alloc(cycle, n * sizeof(*s->tables));
    s->paths = ks_cycle_alloc(cycle, n * sizeof(*s->paths));
    if (!s->tables || !s->paths)
        return no_memory(st, "PreFilter");
    for (size_t i = 0; i < n; i++) {
        /* Upstream's sizeHeuristic: one domain per node for the hostname key. */
        if (pts_table_init(cycle, &s->tables[i], cs[i].key == pl->hostname_key ? nnodes : 4) != 0)
            return no_memory(st, "PreFilter");
        self_match[i] = (uint8_t)pts_selects(&cs[i], plabels, nplabels);
    }

    int cached = pts_cache_fill(pl, cycle, pod, cs, n, explicit_, ns, s->tables);
    if (cached < 0)
        return no_memory(st, "PreFilter");
    for (size_t k = 0; cached != 0 && k < nnodes; k++) {
        const ks_node_info *ni = ks_snapshot_node_at(snap, k);
        const ks_node *node = ks_node_info_node(ni);
        const ks_label *labels;
        int affinity = -1, taints = -1;
        if (!node)
            continue;
        size_t nlabels = ks_node_labels(node, &labels);
        if (!pts_node_has_keys(cs, n, labels, nlabels))
            continue;
        for (size_t i = 0; i < n; i++) {
            if (!pts_node_included(pl, &cs[i], pod, node, &affinity, &taints))
                continue;
            pts_slot *slot =
                pts_table_upsert(cycle, &s->tables[i], ks_labels_get(labels, nlabels, cs[i].key));
            if (!slot)
                return no_memory(st, "PreFilter");
            slot->count += pts_count_pods(&cs[i], ni, ns);
        }
    }

    for (size_t i = 0; i < n; i++) {
        const pts_table *t = &s->tables[i];
        s->paths[i][0] = s->paths[i][1] = (pts_path){KS_SYM_EMPTY, INT32_MAX};
        for (uint32_t j = 0; j < t->cap; j++)
            if (t->slots[j].value != KS_SYM_ABSENT)
                paths_update(s->paths[i], t->slots[j].value, t->slots[j].count);
    }
    if (ks_cycle_write(cycle, &pts_prefilter_key, s, &prefilter_ops) != 0)
        return no_memory(st, "PreFilter");
    return KS_SUCCESS;
}

static ks_code missing_state(ks_status *st)
{
    ks_status_reason(st, "reading \"PreFilter" PTS_NAME "\" from cycleState: not found");
    return KS_ERROR;
}

/* Upstream updateWithPod: `other` is (delta +1) or is no longer (delta -1) on node. */
static ks_code update_with_pod(const pts_plugin *pl, ks_cycle *cycle, const ks_pod *pod,
                               const ks_pod *other, const ks_node_info *ni, int delta,
                               ks_status *st)
{
    pts_prefilter_state *s = ks_cycle_read(cycle, &pts_prefilter_key);
    const ks_node *node = ni ? ks_node_info_node(ni) : NULL;
    const ks_label *labels, *olabels;
    int affinity = -1, taints = -1;
    if (!s)
        return missing_state(st);
    if (ks_pod_namespace(other) != ks_pod_namespace(pod) || !node)
        return KS_SUCCESS;
    size_t nlabels = ks_node_labels(node, &labels);
    if (!pts_node_has_keys(s->cs, s->n, labels, nlabels))
        return KS_SUCCESS;
    size_t nolabels = ks_pod_labels(other, &olabels);
    for (size_t i = 0; i < s->n; i++) {
        const pts_constraint *c = &s->cs[i];
        if (!pts_selects(c, olabels, nolabels) ||
            !pts_node_included(pl, c, pod, node, &affinity, &taints))
            continue;
        ks_sym v = ks_labels_get(labels, nlabels, c->key);
        pts_slot *slot = pts_table_upsert(cycle, &s->tables[i], v);
        if (!slot)
            return no_memory(st, delta > 0 ? "AddPod" : "RemovePod");
        slot->count += delta;
        paths_update(s->paths[i], v, slot->count);
    }
    return KS_SUCCESS;
}

/* pre_filter_add_pod / remove_pod: the scheduling thread, or a Filter worker on its own cloned
 * cycle state; never concurrently with Filter on the same state. */
ks_code pts_add_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                    const ks_node_info *node, ks_status *st)
{
    return update_with_pod(self, cycle, pod, other, node, 1, st);
}

ks_code pts_remove_pod(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_pod *other,
                       const ks_node_info *node, ks_status *st)
{
    return update_with_pod(self, cycle, pod, other, node, -1, st);
}

/* filter: called concurrently for different nodes; the PreFilter state is read-only here. */
ks_code pts_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                   ks_status *st)
{
    const pts_prefilter_state *s = ks_cycle_read(cycle, &pts_prefilter_key);
    const ks_label *labels;
    (void)self;
    (void)pod;
    if (!s)
        return missing_state(st);
    if (s->n == 0)
        return KS_SUCCESS;
    size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
    for (size_t i = 0; i < s->n; i++) {
        const pts_constraint *c = &s->cs[i];
        ks_sym v = ks_labels_get(labels, nlabels, c->key);
        if (v == KS_SYM_ABSENT) {
            ks_status_reason(st, PTS_ERR_MISSING_LABEL);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        int64_t min_match = s->paths[i][0].num;
        if ((int64_t)s->tables[i].n < c->min_domains)
            min_match = 0;
        const pts_slot *slot = pts_table_find(&s->tables[i], v);
        int64_t skew = (slot ? slot->count : 0) + s->self_match[i] - min_match;
        if (skew > c->max_skew) {
            ks_status_reason(st, PTS_ERR_CONSTRAINTS);
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
}
