/*
 * DefaultPreemption: the dry run on one node (upstream default_preemption.go
 * SelectVictimsOnNode). On copies of the node and of the cycle state: remove every pod of lower
 * priority than the preemptor (telling the PreFilter plugins through RemovePod), check that the
 * preemptor then passes the Filter plugins, and add the removed pods back one at a time, most
 * important first and PDB-violating ones before the others, keeping each that still lets the
 * preemptor fit. The rest are the victims.
 *
 * With GenericWorkload (v1.37.2), when a pod of the node names a scheduling group, the same runs
 * on preemption units instead of pods (select_units): a unit is one pod, or every pod on the
 * snapshot's nodes of a PodGroup whose disruptionMode is `all`; it has its PodGroup's priority,
 * leaves and comes back whole, is ordered by MoreImportantVictim and counts one PDB violation
 * per violating pod. Only the node's copy changes; a member on another node is told to the
 * PreFilter extensions with that node's snapshot NodeInfo, as upstream. Without such a pod (and
 * always while the gate is off, when the host names no group) the pod path runs as before.
 *
 * Scheduling thread only (inside PostFilter). Memory from the cycle arena; the copies are freed
 * with the cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "defaultpreemption_int.h"

void dp_pod_init(dp_pod *d, const ks_pod *pod)
{
    int64_t start = ks_pod_start_time_ns(pod);
    d->pod = pod;
    d->ns = ks_pod_namespace(pod);
    d->name = ks_pod_name(pod);
    d->priority = ks_pod_priority(pod);
    d->start_ns = start ? start : DP_START_NOW;
    d->nlabels = ks_pod_labels(pod, &d->labels);
}

static void fail(dp_dry_run *out, ks_code code, const char *reason)
{
    out->code = code;
    out->reason = reason;
    out->status = NULL;
}

/* Removes a pod from the copy and tells the PreFilter plugins (upstream removePod). */
static ks_code remove_pod(ks_cycle *state, const ks_pod *pod, const dp_pod *v, ks_node_info *copy,
                          ks_status *st)
{
    if (ks_node_info_remove_pod(copy, v->pod) != 0) {
        ks_status_reasonf(st, "preemption: cannot remove pod %s/%s from the copy of node %s",
                          ks_sym_str(v->ns), ks_sym_str(v->name),
                          ks_sym_str(ks_node_name(ks_node_info_node(copy))));
        return KS_ERROR;
    }
    return ks_run_prefilter_remove_pod(state, pod, v->pod, copy, st);
}

/* Adds a pod back to the copy and tells the PreFilter plugins (upstream addPod). */
static ks_code add_pod(ks_cycle *state, const ks_pod *pod, const dp_pod *v, ks_node_info *copy,
                       ks_status *st)
{
    if (ks_node_info_add_pod(copy, v->pod) != 0) {
        ks_status_reasonf(st, "preemption: cannot add pod %s/%s to the copy of node %s",
                          ks_sym_str(v->ns), ks_sym_str(v->name),
                          ks_sym_str(ks_node_name(ks_node_info_node(copy))));
        return KS_ERROR;
    }
    return ks_run_prefilter_add_pod(state, pod, v->pod, copy, st);
}

/* Step 2 of both paths: with every potential victim gone, does the preemptor fit? If not, the
 * node's verdict is the Filter status itself (e.g. "Insufficient cpu"), as upstream reports it.
 * 0 when it fits; otherwise out is filled. */
static int fits_without_victims(ks_cycle *cycle, ks_cycle *state, const ks_pod *pod,
                                ks_node_info *copy, ks_status *st, dp_dry_run *out)
{
    ks_status *verdict = ks_status_new(cycle);
    ks_code code = verdict ? ks_run_filters(state, pod, copy, verdict) : KS_ERROR;
    if (code == KS_SUCCESS)
        return 0;
    if (code == KS_ERROR) {
        if (verdict && ks_status_reason_count(verdict))
            ks_status_reason(st, ks_status_reason_at(verdict, 0));
        fail(out, KS_ERROR, NULL);
        return -1;
    }
    fail(out, code, "No preemption victims found for incoming pod");
    out->status = ks_status_reason_count(verdict) ? verdict : NULL;
    return -1;
}

static void out_of_memory(ks_status *st, dp_dry_run *out)
{
    ks_status_reason(st, "preemption: out of memory in the dry run");
    fail(out, KS_ERROR, NULL);
}

/* ---- GenericWorkload: victims as preemption units (upstream v1.37.2 DomainVictim) ---------- */

static int has_groups(void) { return KS_HOST_HAS(pod_scheduling_group); }

/* The PodGroup's spec.disruptionMode is `all` (a union of exactly one member, in the compact JSON
 * the host prints; nil or `single`: its pods leave one by one). As the core's disruption_all. */
static int disruption_all(const ks_pod_group_view *v)
{
    return v && v->json && strstr(v->json, "\"disruptionMode\":{\"all\":") != NULL;
}

int32_t dp_victim_priority(const ks_pod *p, int *all)
{
    if (all)
        *all = 0;
    ks_sym group = has_groups() ? ks_pod_scheduling_group(p) : KS_SYM_ABSENT;
    if (group == KS_SYM_ABSENT)
        return ks_pod_priority(p);
    const ks_pod_group *pg = ks_pod_group_get(ks_pod_namespace(p), group);
    if (!pg) /* upstream: the lister's error falls back to the pod's own priority */
        return ks_pod_priority(p);
    const ks_pod_group_view *v = ks_pod_group_view_of(pg);
    /* util.PodGroupPriority: a nil spec.priority is 0 */
    int32_t prio = v && v->has_priority ? v->priority : 0;
    if (all)
        *all = disruption_all(v);
    ks_pod_group_release(pg);
    return prio;
}

static int cmp_member(const void *a, const void *b)
{
    const dp_member *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Fills g from the snapshot (the pods on its nodes are those assumed or bound: upstream's
 * ScheduledPods). 0 or -1 (out of memory). */
static int groups_build(ks_cycle *cycle, dp_groups *g)
{
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    size_t nn = ks_snapshot_node_count(snap), n = 0, cap = 0;
    for (size_t i = 0; i < nn; i++)
        cap += ks_node_info_pod_count(ks_snapshot_node_at(snap, i));
    g->m = ks_cycle_alloc(cycle, (cap ? cap : 1) * sizeof(*g->m));
    if (!g->m)
        return -1;
    for (size_t i = 0; i < nn; i++) {
        const ks_node_info *ni = ks_snapshot_node_at(snap, i);
        size_t np = ks_node_info_pod_count(ni);
        for (size_t k = 0; k < np; k++) {
            const ks_pod *p = ks_node_info_pod_at(ni, k);
            ks_sym group = ks_pod_scheduling_group(p);
            if (group != KS_SYM_ABSENT)
                g->m[n] = (dp_member){ks_pod_namespace(p), group, p, ni, n}, n++;
        }
    }
    qsort(g->m, n, sizeof(*g->m), cmp_member);
    g->n = n;
    g->built = 1;
    return 0;
}

/* The members of ns/group in g: *first and the count. */
static size_t group_members(const dp_groups *g, ks_sym ns, ks_sym group, size_t *first)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) { /* the first entry not before (ns, group) */
        size_t mid = lo + (hi - lo) / 2;
        const dp_member *m = &g->m[mid];
        if (m->ns < ns || (m->ns == ns && m->group < group))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < g->n && g->m[lo + n].ns == ns && g->m[lo + n].group == group)
        n++;
    *first = lo;
    return n;
}

/* Whether a pod of ni names a scheduling group: only then can a unit differ from a lone pod of
 * its own priority (never while GenericWorkload is off, when the host answers no group). */
static int node_has_group_member(const ks_node_info *ni)
{
    if (!has_groups())
        return 0;
    size_t n = ks_node_info_pod_count(ni);
    for (size_t i = 0; i < n; i++)
        if (ks_pod_scheduling_group(ks_node_info_pod_at(ni, i)) != KS_SYM_ABSENT)
            return 1;
    return 0;
}

/* NewVictim's bookkeeping once pods and nodes are filled. */
static void unit_finish(dp_victim *u)
{
    u->earliest_start = DP_START_NOW;
    for (size_t j = 0; j < u->npods; j++)
        if (u->pods[j].start_ns < u->earliest_start)
            u->earliest_start = u->pods[j].start_ns;
}

/* One unit for p of ni: a lone pod, or (disruptionMode all) every member of its group on the
 * snapshot's nodes (upstream searchCrossNodesVictimPods; no member found: the pod alone).
 * 0 or -1 (out of memory). */
static int unit_of(ks_cycle *cycle, dp_groups *g, const ks_pod *p, const ks_node_info *ni,
                   int32_t prio, int all, dp_victim *u)
{
    ks_sym group = has_groups() ? ks_pod_scheduling_group(p) : KS_SYM_ABSENT;
    size_t first = 0, n = 0;
    if (all) {
        if (!g->built && groups_build(cycle, g) != 0)
            return -1;
        n = group_members(g, ks_pod_namespace(p), group, &first);
    }
    size_t cnt = n ? n : 1;
    u->pods = ks_cycle_alloc(cycle, cnt * sizeof(*u->pods));
    u->nodes = ks_cycle_alloc(cycle, cnt * sizeof(*u->nodes));
    if (!u->pods || !u->nodes)
        return -1;
    if (n == 0) {
        dp_pod_init(&u->pods[0], p);
        u->nodes[0] = ni;
    }
    for (size_t j = 0; j < n; j++) {
        dp_pod_init(&u->pods[j], g->m[first + j].pod);
        u->nodes[j] = g->m[first + j].ni;
    }
    u->npods = cnt;
    u->priority = prio;
    u->is_group = group != KS_SYM_ABSENT; /* NewPodVictim: a member alone is of PodGroup type */
    u->violate_count = 0;
    unit_finish(u);
    return 0;
}

/* Whether unit u (of group) was already taken from this node (upstream's `existing` set). */
static int group_seen(const dp_victim *units, const ks_sym *groups, size_t n, ks_sym ns,
                      ks_sym group)
{
    for (size_t i = 0; i < n; i++)
        if (groups[i] == group && units[i].pods[0].ns == ns)
            return 1;
    return 0;
}

/* GetVictimsOnNode (getCrossNodesVictims on ni) filtered by
 * isPreemptionAllowedAcrossAllVictimNodes: the units of lower priority than prio, in the
 * node's pod order. 0 or -1 (out of memory). */
static int units_on_node(ks_cycle *cycle, dp_groups *g, const ks_node_info *ni, int32_t prio,
                         dp_victim **out, size_t *nout)
{
    size_t npods = ks_node_info_pod_count(ni), n = 0;
    dp_victim *units = ks_cycle_alloc(cycle, (npods ? npods : 1) * sizeof(*units));
    ks_sym *groups = ks_cycle_alloc(cycle, (npods ? npods : 1) * sizeof(*groups));
    if (!units || !groups)
        return -1;
    for (size_t i = 0; i < npods; i++) {
        const ks_pod *p = ks_node_info_pod_at(ni, i);
        int all;
        int32_t vprio = dp_victim_priority(p, &all);
        /* the default IsEligiblePod allows every node the unit touches: priority decides */
        if (vprio >= prio)
            continue;
        ks_sym group = all ? ks_pod_scheduling_group(p) : KS_SYM_ABSENT;
        if (all && group_seen(units, groups, n, ks_pod_namespace(p), group))
            continue;
        if (unit_of(cycle, g, p, ni, vprio, all, &units[n]) != 0)
            return -1;
        groups[n++] = group;
    }
    *out = units;
    *nout = n;
    return 0;
}

/* removeVictim / addVictim: every pod of u leaves (or comes back). Only the main node's copy
 * changes; a pod on another node is only told to the PreFilter extensions, with that node's
 * snapshot NodeInfo, so that cycle state (spreading, affinity counts) sees it gone (upstream
 * mutates only the node it fits the preemptor on, and runs Filter on that one alone). */
static ks_code unit_move(ks_cycle *state, const ks_pod *pod, const ks_node_info *main,
                         ks_node_info *copy, const dp_victim *u, int add, ks_status *st)
{
    for (size_t j = 0; j < u->npods; j++) {
        const dp_pod *v = &u->pods[j];
        if (u->nodes[j] == main) {
            if ((add ? add_pod : remove_pod)(state, pod, v, copy, st) != KS_SUCCESS)
                return KS_ERROR;
            continue;
        }
        ks_code c = add ? ks_run_prefilter_add_pod(state, pod, v->pod, u->nodes[j], st)
                        : ks_run_prefilter_remove_pod(state, pod, v->pod, u->nodes[j], st);
        if (c != KS_SUCCESS)
            return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* reprieveVictim: u comes back; kept when the preemptor still fits, else removed again and
 * appended to victims. 1 kept, 0 a victim, -1 error. */
static int reprieve_unit(ks_cycle *state, const ks_pod *pod, const ks_node_info *main,
                         ks_node_info *copy, const dp_victim *u, dp_victim *victims,
                         size_t *nvictims, ks_status *st)
{
    if (unit_move(state, pod, main, copy, u, 1, st) != KS_SUCCESS)
        return -1;
    /* An Error from the filters counts as "does not fit", as upstream's IsSuccess. */
    if (ks_run_filters(state, pod, copy, st) == KS_SUCCESS)
        return 1;
    if (unit_move(state, pod, main, copy, u, 0, st) != KS_SUCCESS)
        return -1;
    victims[(*nvictims)++] = *u;
    return 0;
}

/* The victims' pods in unit order, for the candidate (upstream victimPods). */
static int flatten(ks_cycle *cycle, const dp_victim *victims, size_t n, dp_candidate *c)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += victims[i].npods;
    dp_pod *pods = ks_cycle_alloc(cycle, (total ? total : 1) * sizeof(*pods));
    if (!pods)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < victims[i].npods; j++)
            pods[k++] = victims[i].pods[j];
    c->victims = pods;
    c->nvictims = total;
    return 0;
}

/* SelectVictimsOnNode with preemption units (upstream v1.37.2 with GenericWorkload): as the pod
 * path below, a unit at a time; a PDB-violating unit adds its ViolateCount when evicted. */
static void select_units(ks_cycle *cycle, ks_cycle *state, const ks_pod *pod,
                         const ks_node_info *ni, ks_node_info *copy, const ks_pdb_info *pdbs,
                         size_t npdbs, dp_groups *g, ks_status *st, dp_dry_run *out)
{
    dp_victim *units;
    size_t nu;
    if (units_on_node(cycle, g, ni, ks_pod_priority(pod), &units, &nu) != 0) {
        out_of_memory(st, out);
        return;
    }
    if (nu == 0) {
        fail(out, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
             "No preemption victims found for incoming pod");
        return;
    }
    for (size_t i = 0; i < nu; i++)
        if (unit_move(state, pod, ni, copy, &units[i], 0, st) != KS_SUCCESS) {
            fail(out, KS_ERROR, NULL);
            return;
        }
    if (fits_without_victims(cycle, state, pod, copy, st, out) != 0)
        return;

    dp_sort_victims(units, nu);
    int32_t *allowed = ks_cycle_alloc(cycle, (npdbs ? npdbs : 1) * sizeof(*allowed));
    dp_victim *victims = ks_cycle_alloc(cycle, nu * sizeof(*victims));
    if (!allowed || !victims) {
        out_of_memory(st, out);
        return;
    }
    dp_victims_pdb(units, nu, pdbs, npdbs, allowed);
    size_t nvictims = 0, nviolating = 0;
    int64_t num_violating = 0;
    /* the violating units first, then the others, each most important first */
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = 0; i < nu; i++) {
            if ((units[i].violate_count > 0) != pass)
                continue;
            nviolating += (size_t)pass;
            int r = reprieve_unit(state, pod, ni, copy, &units[i], victims, &nvictims, st);
            if (r < 0) {
                fail(out, KS_ERROR, NULL);
                return;
            }
            if (r == 0)
                num_violating += pass ? units[i].violate_count : 0;
        }
    }
    /* Each pass kept importance order; merged, they need sorting again. */
    if (nviolating != 0 && nviolating != nu)
        dp_sort_victims(victims, nvictims);
    if (nvictims == 0) {
        ks_status_reasonf(st, "preemption: expected at least one victim pod on node %s",
                          ks_sym_str(out->candidate.node));
        {
            fail(out, KS_ERROR, NULL);
            return;
        }
    }
    if (flatten(cycle, victims, nvictims, &out->candidate) != 0) {
        out_of_memory(st, out);
        return;
    }
    out->candidate.num_pdb_violations = num_violating;
}

/* ---- the pod path: every pod alone (no pod of the node names a group) ---------------------- */

void dp_select_victims(ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                       const ks_pdb_info *pdbs, size_t npdbs, dp_groups *groups, ks_status *st,
                       dp_dry_run *out)
{
    out->code = KS_SUCCESS;
    out->reason = NULL;
    out->candidate = (dp_candidate){ks_node_name(ks_node_info_node(ni)), NULL, 0, 0};

    ks_cycle *state = ks_cycle_clone(cycle);
    ks_node_info *copy = ks_node_info_clone(cycle, ni);
    if (state && copy && node_has_group_member(ni)) {
        select_units(cycle, state, pod, ni, copy, pdbs, npdbs, groups, st, out);
        return;
    }
    size_t npods = ks_node_info_pod_count(ni);
    dp_pod *potential = ks_cycle_alloc(cycle, (npods ? npods : 1) * sizeof(*potential));
    if (!state || !copy || !potential) {
        ks_status_reason(st, "preemption: out of memory in the dry run");
        fail(out, KS_ERROR, NULL);
        return;
    }

    /* Step 1: remove every pod the preemptor may evict (lower priority), from the original's
     * list since removing changes the copy's. */
    int32_t prio = ks_pod_priority(pod);
    size_t np = 0;
    for (size_t i = 0; i < npods; i++) {
        const ks_pod *p = ks_node_info_pod_at(ni, i);
        if (ks_pod_priority(p) >= prio)
            continue;
        dp_pod_init(&potential[np], p);
        if (remove_pod(state, pod, &potential[np], copy, st) != KS_SUCCESS) {
            fail(out, KS_ERROR, NULL);
            return;
        }
        np++;
    }
    /* Nothing to evict: the node is as it was, no need to run the filters again. */
    if (np == 0) {
        fail(out, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
             "No preemption victims found for incoming pod");
        return;
    }

    /* Step 2: without all of them, does the preemptor fit? */
    if (fits_without_victims(cycle, state, pod, copy, st, out) != 0)
        return;

    /* Step 3: reprieve, most important first; PDB-violating pods before the others. */
    dp_sort_by_importance(potential, np);
    int32_t *allowed = ks_cycle_alloc(cycle, (npdbs ? npdbs : 1) * sizeof(*allowed));
    uint8_t *violating = ks_cycle_alloc(cycle, np);
    dp_pod *victims = ks_cycle_alloc(cycle, np * sizeof(*victims));
    if (!allowed || !violating || !victims) {
        ks_status_reason(st, "preemption: out of memory in the dry run");
        fail(out, KS_ERROR, NULL);
        return;
    }
    dp_pdb_violations(potential, np, pdbs, npdbs, allowed, violating);
    size_t nvictims = 0, nviolating = 0;
    int64_t num_violating_victims = 0;
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = 0; i < np; i++) {
            if (violating[i] != pass)
                continue;
            nviolating += pass;
            if (add_pod(state, pod, &potential[i], copy, st) != KS_SUCCESS) {
                fail(out, KS_ERROR, NULL);
                return;
            }
            /* An Error from the filters counts as "does not fit", as upstream's IsSuccess. */
            if (ks_run_filters(state, pod, copy, st) == KS_SUCCESS)
                continue;
            if (remove_pod(state, pod, &potential[i], copy, st) != KS_SUCCESS) {
                fail(out, KS_ERROR, NULL);
                return;
            }
            victims[nvictims++] = potential[i];
            num_violating_victims += pass;
        }
    }
    /* Each pass kept importance order; merged, they need sorting again. */
    if (nviolating != 0 && nviolating != np)
        dp_sort_by_importance(victims, nvictims);
    if (nvictims == 0) {
        /* The preemptor fits with every pod back: upstream reports this as an error. */
        ks_status_reasonf(st, "preemption: expected at least one victim pod on node %s",
                          ks_sym_str(out->candidate.node));
        fail(out, KS_ERROR, NULL);
        return;
    }
    out->candidate.victims = victims;
    out->candidate.nvictims = nvictims;
    out->candidate.num_pdb_violations = num_violating_victims;
}
