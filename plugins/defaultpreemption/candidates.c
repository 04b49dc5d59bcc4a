/*
 * DefaultPreemption: the dry run on one node (upstream default_preemption.go
 * SelectVictimsOnNode, v1.34). On copies of the node and of the cycle state: remove every pod of
 * lower priority than the preemptor (telling the PreFilter plugins through RemovePod), check that
 * the preemptor then passes the Filter plugins, and add the removed pods back one at a time, most
 * important first and PDB-violating ones before the others, keeping each that still lets the
 * preemptor fit. The rest are the victims.
 *
 * Scheduling thread only (inside PostFilter). Memory from the cycle arena; the copies are freed
 * with the cycle.
 */
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

void dp_select_victims(ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                       const ks_pdb_info *pdbs, size_t npdbs, ks_status *st, dp_dry_run *out)
{
    out->code = KS_SUCCESS;
    out->reason = NULL;
    out->candidate = (dp_candidate){ks_node_name(ks_node_info_node(ni)), NULL, 0, 0};

    ks_cycle *state = ks_cycle_clone(cycle);
    ks_node_info *copy = ks_node_info_clone(cycle, ni);
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

    /* Step 2: without all of them, does the preemptor fit? If not, the node's verdict is the
     * Filter status itself (e.g. "Insufficient cpu"), as upstream reports it. */
    ks_status *verdict = ks_status_new(cycle);
    ks_code code = verdict ? ks_run_filters(state, pod, copy, verdict) : KS_ERROR;
    if (code != KS_SUCCESS) {
        if (code == KS_ERROR) {
            if (verdict && ks_status_reason_count(verdict))
                ks_status_reason(st, ks_status_reason_at(verdict, 0));
            fail(out, KS_ERROR, NULL);
            return;
        }
        fail(out, code, "No preemption victims found for incoming pod");
        out->status = ks_status_reason_count(verdict) ? verdict : NULL;
        return;
    }

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
