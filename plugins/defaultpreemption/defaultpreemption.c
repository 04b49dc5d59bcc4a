/*
 * DefaultPreemption (upstream plugins/defaultpreemption/default_preemption.go and
 * framework/preemption/preemption.go Evaluator.Preempt, v1.37.2), PostFilter only: the scheduler
 * calls it when no node passed the Filter plugins. (A PodGroup preemptor's PodGroupPostFilter is
 * the core's: core/sched/podgroup_preemption.c.)
 *
 *   1. Eligibility: preemptionPolicy Never, or a terminating lower-priority pod (evicted by an
 *      earlier preemption; a PodGroup member with its group's priority) still on the pod's
 * nominated node, ends here (Unschedulable).
 *   2. Potential nodes: those whose Filter status is Unschedulable; UnschedulableAndUnresolvable
 *      ones cannot be helped by evicting pods.
 *   3. Dry run (candidates.c) on the potential nodes from a random offset, until
 *      numCandidates = max(n*minCandidateNodesPercentage/100, minCandidateNodesAbsolute) (at most
 *      n) candidates were found and one of them violates no PodDisruptionBudget.
 *   4. pickOneNodeForPreemption (select.c), then nominate that node and list its victims; the
 *      scheduler evicts them and retries the pod with status.nominatedNodeName. With
 *      GenericWorkload the victims of a disruptionMode-all PodGroup include its members on other
 *      nodes (candidates.c); they are evicted with the rest.
 *   No candidate: Unschedulable "preemption: 0/N nodes are available: ...", a FitError over the
 *   dry-run statuses where the nodes not tried count as "Preemption is not helpful for
 *   scheduling".
 *
 * This is the synchronous preemption of upstream (SchedulerAsyncPreemption off): the victims are
 * gone before the next cycle, so the plugin has no PreEnqueue. Its events are upstream v1.37's
 * (AssignedPod/Delete, whose hint always skips): they never move a pod, as it rejects none.
 */
#include <string.h>

#include "defaultpreemption_int.h"

typedef struct default_preemption {
    int32_t min_pct; /* minCandidateNodesPercentage */
    int32_t min_abs; /* minCandidateNodesAbsolute */
} default_preemption;

static const char not_helpful[] = "Preemption is not helpful for scheduling";

/* Config has defaulted and validated the args (0..100, 0..; not both 0); read what is there. */
static void *default_preemption_create(const ks_args *args, ks_error *err)
{
    if (!KS_HOST_HAS(run_filters) || !KS_HOST_HAS(pdbs) || !KS_HOST_HAS(rand_below) ||
        !KS_HOST_HAS(post_filter_add_victim)) {
        ks_error_set(err, "DefaultPreemption needs a host with plugin ABI 1.2 or later");
        return NULL;
    }
    int64_t pct = 10, abs = 100;
    if (args) {
        if (ks_args_get_int(args, "minCandidateNodesPercentage", &pct) == KS_ETYPE ||
            ks_args_get_int(args, "minCandidateNodesAbsolute", &abs) == KS_ETYPE) {
            ks_error_set(err, "DefaultPreemptionArgs: minCandidateNodesPercentage and "
                              "minCandidateNodesAbsolute must be integers");
            return NULL;
        }
    }
    if (pct < 0 || pct > 100 || abs < 0 || abs > INT32_MAX || (pct == 0 && abs == 0)) {
        ks_error_set(err,
                     "DefaultPreemptionArgs: minCandidateNodesPercentage must be in 0..100 "
                     "and minCandidateNodesAbsolute >= 0, not both 0 (got %lld and %lld)",
                     (long long)pct, (long long)abs);
        return NULL;
    }
    default_preemption *dp = ks_alloc(sizeof(*dp));
    if (!dp) {
        ks_error_set(err, "DefaultPreemption: out of memory");
        return NULL;
    }
    dp->min_pct = (int32_t)pct;
    dp->min_abs = (int32_t)abs;
    return dp;
}

static void default_preemption_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* podTerminatingByPreemption: deletionTimestamp set and the first DisruptionTarget condition is
 * True with reason PreemptionByScheduler. The SDK exposes conditions only through the pod's JSON
 * (compact, as cJSON prints it); this runs for terminating pods of the nominated node only. */
static const char *condition_field(const char *obj, const char *end, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    for (const char *p = obj; p + klen + 3 < end; p++) {
        if (*p != '"' || strncmp(p + 1, key, klen) != 0 || p[klen + 1] != '"' ||
            p[klen + 2] != ':' || p[klen + 3] != '"')
            continue;
        const char *v = p + klen + 4, *q = v;
        while (q < end && *q != '"')
            q += *q == '\\' ? 2 : 1;
        *len = (size_t)(q - v);
        return v;
    }
    return NULL;
}

static int field_is(const char *obj, const char *end, const char *key, const char *want)
{
    size_t len;
    const char *v = condition_field(obj, end, key, &len);
    return v && len == strlen(want) && strncmp(v, want, len) == 0;
}

static int terminating_by_preemption(const ks_pod *p)
{
    if (!ks_pod_is_terminating(p))
        return 0;
    const char *json = ks_pod_json(p);
    const char *c = json ? strstr(json, "\"conditions\":[") : NULL;
    if (!c)
        return 0;
    c += strlen("\"conditions\":[");
    /* Conditions are flat objects of strings: find each {...}, skipping quoted text. */
    while (*c == '{') {
        const char *end = c + 1;
        while (*end && *end != '}') {
            if (*end == '"') {
                end++;
                while (*end && *end != '"')
                    end += (*end == '\\' && end[1]) ? 2 : 1;
            }
            if (*end)
                end++;
        }
        if (!*end)
            return 0;
        if (field_is(c, end, "type", "DisruptionTarget"))
            return field_is(c, end, "status", "True") &&
                   field_is(c, end, "reason", "PreemptionByScheduler");
        c = end + 1;
        if (*c == ',')
            c++;
    }
    return 0;
}

/* PodEligibleToPreemptOthers. NULL when eligible, else the message (without "preemption: "). */
static const char *not_eligible(ks_cycle *cycle, const ks_pod *pod, const ks_filter_outcome *o)
{
    if (ks_pod_preemption_never(pod))
        return "not eligible due to preemptionPolicy=Never.";
    ks_sym nominated = ks_pod_nominated_node_name(pod);
    if (nominated == KS_SYM_EMPTY || nominated == KS_SYM_ABSENT)
        return NULL;
    const ks_node_info *ni = ks_snapshot_node(ks_cycle_snapshot(cycle), nominated);
    /* Not in the snapshot: upstream reads the absent-node status, UnschedulableAndUnresolvable,
     * and lets the pod preempt again; same when the filters said so for the node itself. */
    if (!ni || ks_filter_outcome_code(o, ni) == KS_UNSCHEDULABLE_AND_UNRESOLVABLE)
        return NULL;
    int32_t prio = ks_pod_priority(pod);
    size_t n = ks_node_info_pod_count(ni);
    for (size_t i = 0; i < n; i++) {
        const ks_pod *p = ks_node_info_pod_at(ni, i);
        /* isPreemptionAllowed on NewPodVictim: a group member counts with its group's
         * priority (GenericWorkload; the pod's own otherwise) */
        if (dp_victim_priority(p, NULL) < prio && terminating_by_preemption(p))
            return "not eligible due to a terminating pod on the nominated node.";
    }
    return NULL;
}

/* Adds one to the histogram line of reason (few distinct reasons: a linear scan). */
static void count_reason(dp_reason *r, size_t *n, const char *reason, int64_t k)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(r[i].text, reason) == 0) {
            r[i].count += k;
            return;
        }
    r[(*n)++] = (dp_reason){reason, k};
}

/* Unschedulable with the FitError of the dry run. */
static ks_code no_candidate(ks_cycle *cycle, const ks_pod *pod, ks_post_filter_result *result,
                            ks_status *st, int64_t num_all, dp_reason *reasons, size_t nreasons,
                            int64_t nexplicit)
{
    if (nexplicit < num_all)
        count_reason(reasons, &nreasons, not_helpful, num_all - nexplicit);
    size_t len = dp_fit_error(NULL, 0, num_all, reasons, nreasons);
    char *msg = ks_cycle_alloc(cycle, len + 1);
    if (!msg) {
        ks_status_reason(st, "preemption: out of memory");
        return KS_ERROR;
    }
    dp_fit_error(msg, len + 1, num_all, reasons, nreasons);
    ks_status_reasonf(st, "preemption: %s", msg);
    /* Upstream returns a nomination of "" here, which clears a stale status.nominatedNodeName
     * (and changes nothing for a pod without one). */
    if (ks_pod_nominated_node_name(pod) != KS_SYM_EMPTY)
        ks_post_filter_nominate(result, KS_SYM_EMPTY);
    return KS_UNSCHEDULABLE;
}

/* post_filter: scheduling thread, once per failed cycle. st serves the dry runs as scratch until
 * the plugin writes its own message (see candidates.c). */
static ks_code default_preemption_post_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                              const ks_filter_outcome *o,
                                              ks_post_filter_result *result, ks_status *st)
{
    const default_preemption *dp = self;
    const char *why = not_eligible(cycle, pod, o);
    if (why) {
        ks_status_reasonf(st, "preemption: %s", why);
        return KS_UNSCHEDULABLE;
    }

    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    size_t num_all = ks_snapshot_node_count(snap);
    if (num_all == 0) {
        ks_status_reason(st, "preemption: no nodes available");
        return KS_ERROR;
    }
    /* Nodes where evicting pods may help: Filter said Unschedulable (upstream
     * NodesForStatusCode(Unschedulable); nodes not evaluated read as
     * UnschedulableAndUnresolvable). */
    const ks_node_info **potential = ks_cycle_alloc(cycle, num_all * sizeof(*potential));
    /* distinct reasons: at most a few per node, plus "not helpful" */
    dp_reason *reasons = ks_cycle_alloc(cycle, (4 * num_all + 2) * sizeof(*reasons));
    if (!potential || !reasons) {
        ks_status_reason(st, "preemption: out of memory");
        return KS_ERROR;
    }
    size_t np = 0, nreasons = 0;
    for (size_t i = 0; i < num_all; i++) {
        const ks_node_info *ni = ks_snapshot_node_at(snap, i);
        if (ks_filter_outcome_code(o, ni) == KS_UNSCHEDULABLE)
            potential[np++] = ni;
    }
    if (np == 0)
        return no_candidate(cycle, pod, result, st, (int64_t)num_all, reasons, 0, 0);

    const ks_pdb_info *pdbs = NULL;
    size_t npdbs = ks_pdbs(cycle, &pdbs);
    int64_t offset = ks_rand_below(cycle, (int64_t)np);
    int32_t want = dp_num_candidates((int32_t)np, dp->min_pct, dp->min_abs);
    /* DryRunPreemption: two lists of at most `want` each (extra adds are dropped, as upstream's
     * candidateList), non-violating ones first in the result. */
    dp_candidate *cands = ks_cycle_alloc(cycle, 2 * (size_t)(want ? want : 1) * sizeof(*cands));
    if (!cands) {
        ks_status_reason(st, "preemption: out of memory");
        return KS_ERROR;
    }
    dp_candidate *nonviolating = cands, *violating = cands + (want ? want : 1);
    int32_t nnv = 0, nv = 0;
    int64_t nexplicit = 0;
    dp_groups groups = {0};
    for (size_t i = 0; i < np; i++) {
        const ks_node_info *ni = potential[((size_t)offset + i) % np];
        dp_dry_run r;
        dp_select_victims(cycle, pod, ni, pdbs, npdbs, &groups, st, &r);
        if (r.code == KS_ERROR)
            return KS_ERROR; /* st holds the host's message */
        if (r.code != KS_SUCCESS) {
            if (r.status) {
                for (size_t k = 0; k < ks_status_reason_count(r.status); k++)
                    count_reason(reasons, &nreasons, ks_status_reason_at(r.status, k), 1);
            } else {
                count_reason(reasons, &nreasons, r.reason, 1);
            }
            nexplicit++;
            continue;
        }
        if (r.candidate.num_pdb_violations == 0) {
            if (nnv < want)
                nonviolating[nnv++] = r.candidate;
        } else if (nv < want) {
            violating[nv++] = r.candidate;
        }
        /* Enough, and at least one that violates no budget (upstream cancels the search). With
         * want 0 (a small cluster and minCandidateNodesAbsolute 0) nothing is kept, as upstream. */
        if (nnv > 0 && nnv + nv >= want)
            break;
    }
    if (nnv + nv == 0)
        return no_candidate(cycle, pod, result, st, (int64_t)num_all, reasons, nreasons, nexplicit);

    /* Non-violating candidates first, then the violating ones. */
    for (int32_t k = 0; k < nv; k++)
        nonviolating[nnv + k] = violating[k];
    size_t ncand = (size_t)(nnv + nv), best = 0;
    if (ncand > 1) {
        size_t *scratch = ks_cycle_alloc(cycle, ncand * sizeof(*scratch));
        if (!scratch) {
            ks_status_reason(st, "preemption: out of memory");
            return KS_ERROR;
        }
        best = dp_pick_one(nonviolating, ncand, scratch);
    }
    const dp_candidate *c = &nonviolating[best];
    ks_post_filter_nominate(result, c->node);
    for (size_t i = 0; i < c->nvictims; i++)
        ks_post_filter_add_victim(result, c->victims[i].pod);
    /* upstream v1.37 Evaluator.Preempt: Success with this message, which PostFilter prefixes
     * with "preemption: " and the scheduler appends to the pod's FitError message. */
    ks_status_reasonf(
        st, "preemption: found a potential placement for pod on node %s, preempting %zu victims",
        ks_sym_str(c->node), c->nvictims);
    return KS_SUCCESS;
}

/* upstream isPodSchedulableAfterAssignedPodDeletion (v1.37): always QueueSkip. Upstream
 * registers it (SchedulerAsyncPreemption, Beta on) so that the queue knows a pod its PreEnqueue
 * gated while a preemption runs may be un-gated after some pods' deletion; the PreEnqueue itself
 * moves it. Event thread; pure. */
static ks_queueing_hint default_preemption_after_assigned_pod_deletion(void *self,
                                                                       const ks_pod *pod,
                                                                       const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    (void)ev;
    return KS_QUEUE_SKIP;
}

/* upstream EventsToRegister with SchedulerAsyncPreemption on: AssignedPod/Delete with the hint
 * above. (kubesched preempts synchronously and has no PreEnqueue here, so the plugin never
 * rejects a pod and the registration never moves one; it is kept for parity.) */
static size_t default_preemption_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, default_preemption_after_assigned_pod_deletion},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

const ks_plugin_desc ks_plugin_default_preemption = {
    .size = sizeof(ks_plugin_desc),
    .name = "DefaultPreemption",
    .create = default_preemption_create,
    .destroy = default_preemption_destroy,
    .post_filter = default_preemption_post_filter,
    .events_with_hints = default_preemption_events,
    .args_schema = &dp_args_schema,
    .validate_args = dp_validate_args,
};
