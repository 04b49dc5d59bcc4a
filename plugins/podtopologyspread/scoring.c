/*
 * PodTopologySpread, ScheduleAnyway constraints (upstream scoring.go, v1.34).
 *
 *   PreScore        Skip when the snapshot is empty or the pod has no ScheduleAnyway constraint
 *                   (its own, or the defaults with its owners' selector). With explicit constraints
 *                   or List defaulting, feasible nodes lacking a topology key are ignored. For
 *                   every other key, the domains are the values of the non-ignored feasible nodes
 *                   (a missing label is the "" domain), and their counts sum the matching pods of
 *                   every snapshot node in them that passes the inclusion policies. Weight of a
 *                   constraint: ln(#domains + 2), #domains = feasible - ignored for the hostname.
 *   Score           round(sum over the constraints whose key the node has of
 *                   count * weight + (maxSkew - 1)), count = the node's own matching pods for
 *                   kubernetes.io/hostname, else its domain's count; ignored nodes score 0.
 *   NormalizeScore  ignored -> 0; max over the others 0 -> 100; else
 *                   100 * (max + min - score) / max (integer division).
 */
#include <math.h>

#include "podtopologyspread_int.h"

char pts_prescore_key;

static ks_code no_memory(ks_status *st)
{
    ks_status_reason(st, PTS_NAME ": out of memory in PreScore");
    return KS_ERROR;
}

/* pre_score: scheduling thread, once per cycle, with the feasible nodes. */
ks_code pts_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                      const ks_node_info *const *nodes, size_t nnodes, ks_status *st)
{
    const pts_plugin *pl = self;
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    size_t nall = ks_snapshot_node_count(snap), n, nignored = 0;
    pts_constraint *cs;
    int explicit_;
    if (nall == 0)
        return KS_SKIP;
    if (pts_constraints(pl, cycle, pod, KS_SCHEDULE_ANYWAY, &cs, &n, &explicit_) != 0)
        return no_memory(st);
    if (n == 0)
        return KS_SKIP;
    /* Only explicit constraints and List defaults need every key: with System defaults, nodes
     * without a zone label still get hostname spreading. */
    int require_all = explicit_ || !pl->system_defaulted;

    pts_prescore_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    if (!s)
        return no_memory(st);
    s->n = n;
    s->cs = cs;
    s->ns = ks_pod_namespace(pod);
    s->tables = ks_cycle_alloc(cycle, n * sizeof(*s->tables));
    s->weights = ks_cycle_alloc(cycle, n * sizeof(*s->weights));
    s->ignored = ks_cycle_alloc(cycle, nnodes ? nnodes : 1);
    s->host_counts = ks_cycle_alloc(cycle, (nnodes ? nnodes : 1) * n * sizeof(*s->host_counts));
    if (!s->tables || !s->weights || !s->ignored || !s->host_counts ||
        pts_table_init(cycle, &s->nodes, nnodes) != 0)
        return no_memory(st);
    for (size_t i = 0; i < n; i++)
        if (pts_table_init(cycle, &s->tables[i], 4) != 0)
            return no_memory(st);

    for (size_t j = 0; j < nnodes; j++) {
        const ks_node_info *ni = nodes[j];
        const ks_node *node = ks_node_info_node(ni);
        const ks_label *labels;
        if (!node)
            continue;
        size_t nlabels = ks_node_labels(node, &labels);
        pts_slot *slot = pts_table_upsert(cycle, &s->nodes, ks_node_name(node));
        if (!slot)
            return no_memory(st);
        slot->count = (int64_t)j;
        if (require_all && !pts_node_has_keys(cs, n, labels, nlabels)) {
            s->ignored[j] = 1;
            nignored++;
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            ks_sym v = ks_labels_get(labels, nlabels, cs[i].key);
            if (cs[i].key == pl->hostname_key) {
                /* Per-node counts: upstream takes them in Score; they are the same here. */
                if (v != KS_SYM_ABSENT)
                    s->host_counts[j * n + i] = pts_count_pods(&cs[i], ni, s->ns);
                continue;
            }
            if (!pts_table_upsert(cycle, &s->tables[i], pts_domain(v)))
                return no_memory(st);
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t size = cs[i].key == pl->hostname_key ? nnodes - nignored : s->tables[i].n;
        s->weights[i] = log((double)(size + 2));
    }

    for (size_t k = 0; k < nall; k++) {
        const ks_node_info *ni = ks_snapshot_node_at(snap, k);
        const ks_node *node = ks_node_info_node(ni);
        const ks_label *labels;
        int affinity = -1, taints = -1;
        if (!node)
            continue;
        size_t nlabels = ks_node_labels(node, &labels);
        if (require_all && !pts_node_has_keys(cs, n, labels, nlabels))
            continue;
        for (size_t i = 0; i < n; i++) {
            if (!pts_node_included(pl, &cs[i], pod, node, &affinity, &taints))
                continue;
            /* Domains without a feasible node (and the hostname key) are not counted. */
            pts_slot *slot = pts_table_find(&s->tables[i],
                                            pts_domain(ks_labels_get(labels, nlabels, cs[i].key)));
            if (slot)
                slot->count += pts_count_pods(&cs[i], ni, s->ns);
        }
    }
    if (ks_cycle_write(cycle, &pts_prescore_key, s, NULL) != 0)
        return no_memory(st);
    return KS_SUCCESS;
}

static ks_code missing_state(ks_status *st)
{
    ks_status_reason(st, "error reading \"PreScore" PTS_NAME "\" from cycleState: not found");
    return KS_ERROR;
}

/* The index of a feasible node in the PreScore state, or -1. */
static long node_index(const pts_prescore_state *s, const ks_node_info *ni)
{
    const pts_slot *slot = pts_table_find(&s->nodes, ks_node_name(ks_node_info_node(ni)));
    return slot ? (long)slot->count : -1;
}

/* score: called concurrently for different nodes; the PreScore state is read-only here. */
ks_code pts_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                  int64_t *score, ks_status *st)
{
    const pts_plugin *pl = self;
    const pts_prescore_state *s = ks_cycle_read(cycle, &pts_prescore_key);
    const ks_label *labels;
    double sum = 0;
    (void)pod;
    *score = 0;
    if (!s)
        return missing_state(st);
    long j = node_index(s, ni);
    if (j >= 0 && s->ignored[j])
        return KS_SUCCESS;
    size_t nlabels = ks_node_labels(ks_node_info_node(ni), &labels);
    for (size_t i = 0; i < s->n; i++) {
        const pts_constraint *c = &s->cs[i];
        ks_sym v = ks_labels_get(labels, nlabels, c->key);
        int64_t cnt = 0;
        if (v == KS_SYM_ABSENT)
            continue;
        if (c->key == pl->hostname_key) {
            cnt = j >= 0 ? s->host_counts[(size_t)j * s->n + i] : pts_count_pods(c, ni, s->ns);
        } else {
            const pts_slot *slot = pts_table_find(&s->tables[i], v);
            cnt = slot ? slot->count : 0;
        }
        /* float64(cnt)*weight + float64(maxSkew-1), each step rounded to double as Go does on
         * amd64: volatile keeps the compiler from fusing the multiply and the add. */
        volatile double product = (double)cnt * s->weights[i];
        sum += product + (double)(c->max_skew - 1);
    }
    *score = (int64_t)round(sum);
    return KS_SUCCESS;
}

static int is_ignored(const pts_prescore_state *s, const ks_node_info *ni)
{
    long j = node_index(s, ni);
    return j >= 0 && s->ignored[j];
}

/* normalize_score: scheduling thread, once per cycle. Fewer matching pods score higher. */
ks_code pts_normalize_score(void *self, ks_cycle *cycle, const ks_pod *pod, ks_node_score *scores,
                            size_t n, ks_status *st)
{
    const pts_prescore_state *s = ks_cycle_read(cycle, &pts_prescore_key);
    int64_t min = INT64_MAX, max = 0;
    (void)self;
    (void)pod;
    if (!s)
        return missing_state(st);
    for (size_t i = 0; i < n; i++) {
        if (is_ignored(s, scores[i].node))
            continue;
        if (scores[i].score < min)
            min = scores[i].score;
        if (scores[i].score > max)
            max = scores[i].score;
    }
    for (size_t i = 0; i < n; i++) {
        if (is_ignored(s, scores[i].node))
            scores[i].score = 0;
        else if (max == 0)
            scores[i].score = KS_MAX_NODE_SCORE;
        else
            scores[i].score = KS_MAX_NODE_SCORE * (max + min - scores[i].score) / max;
    }
    return KS_SUCCESS;
}
