/*
 * The scheduling cycle, as upstream's schedule_one.go tells it:
 *
 *   ks__scheduler_schedule_one (ScheduleOne): pop, then
 *   scheduling_cycle (schedulingCycle):
 *     schedule_pod (SchedulePod): snapshot,
 *       find_nodes_that_fit (findNodesThatFitPod): PreFilter, evaluate_nominated_node,
 *         find_nodes_that_pass_filters (Filter in parallel, numFeasibleNodesToFind nodes, from the
 *         rotating start nextStartNodeIndex),
 *       prioritize_nodes (PreScore, RunScorePlugins), select_host;
 *     on a FitError: run_post_filter (PostFilter, preemption) and the FitError message;
 *     assume, Reserve, Permit;
 *   then the binding cycle (binding.c) or, on any failure, the one exit handle_cycle_failure.
 *
 * Each step returns KS_SUCCESS or the code the cycle fails with, after recording the failure in
 * the sched_cycle (fail, fail_status, or the FitError diagnosis).
 *
 * Threads: the scheduling thread only; Filter and Score calls run on the worker pool.
 * Determinism: Filter chunks are claimed in index order and the feasible nodes kept are the first
 * numNodesToFind in that order, so a run gives what a sequential upstream run would, whatever the
 * thread timing; select_host breaks ties by Go's heap order on that same order (no randomness).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/podgroup_objects.h"
#include "util/clock.h"
#include "util/errors.h"
#include "util/log.h"
#include "sched/scheduler_int.h"

#define MIN_FEASIBLE_NODES_TO_FIND 100
#define MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND 5

int32_t ks__num_feasible_nodes_to_find(int32_t percentage, int32_t num_all_nodes)
{
    if (num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND)
        return num_all_nodes;
    int32_t p = percentage;
    if (p == 0) {
        p = 50 - num_all_nodes / 125;
        if (p < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
            p = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
    }
    int64_t k = (int64_t)num_all_nodes * p / 100;
    if (k < MIN_FEASIBLE_NODES_TO_FIND)
        return MIN_FEASIBLE_NODES_TO_FIND;
    return (int32_t)k;
}

enum { FIT_NONE, FIT_PREFILTER, FIT_FILTER };

/* One scheduling attempt of one pod: what upstream threads through schedulingCycle,
 * SchedulePod and findNodesThatFitPod as arguments and results. */
typedef struct sched_cycle {
    ks_scheduler *s;
    ks_framework *fw;
    ks_queued_pod *qp;
    ks_pod *pod;     /* qp->pod as the cycle began (preemption may replace qp->pod) */
    uint64_t seq;    /* orders the observer's reports */
    ks_cycle *state; /* upstream CycleState; NULL until the snapshot is taken */
    ks_cycle_scratch *sc;
    size_t num_all;         /* nodes in the snapshot */
    size_t ncand;           /* candidates: the snapshot, or PreFilter's subset in snapshot order */
    size_t start;           /* where this cycle's Filter pass began among the candidates */
    size_t nevaluated;      /* candidates Filter evaluated, from start on */
    size_t nfeasible;       /* sc->feasible */
    char excluded_msg[192]; /* the status of the nodes outside PreFilter's subset */
    const ks_node_info *host;
    ks_pod *assumed;    /* the pod with its node, in the cache (owned until the binding cycle) */
    int64_t timeout_ms; /* Permit: how long to wait */
    uint64_t waiting;   /* Permit: the plugins that said Wait */
    ks_explain ex;
    const ks_node_info **evaluated; /* --explain: the evaluated candidates in order (owned) */
    ks_status st;                   /* the status of the step that failed */
    /* The failure (upstream: the Status schedulingCycle returns, with its FitError diagnosis). */
    ks_code code;
    int fit;             /* FIT_PREFILTER: st rejected every node; FIT_FILTER: the node statuses */
    char *message;       /* owned; NULL only out of memory */
    int explain_failure; /* the failure report carries ex */
    uint64_t rejectors, pending;
    ks_sym nominated;
    /* Opportunistic batching: the pod's signature (owned; NULL: not batchable) and the node hint
     * this cycle got (KS_SYM_ABSENT: none). */
    struct ks_pod_sig *sig;
    ks_sym hint;
    ks_post_filter_result pfr;
    int preempt;           /* PostFilter nominated a node: evict pfr.victims */
    const char *preemptor; /* the PostFilter plugin that did */
    int unsupported;       /* refused by unsupported_use, before PreFilter */
    /* A PodGroup member nominated by the group's outcome (workload-aware preemption), with the
     * victims to report (the group's, on its first nominated member), and the object it
     * replaced in its queue entry (released once the group's cycles are). */
    ks_sym group_nominated;
    int group_reporter; /* reports the group's preemption (observer.preempted) */
    ks_pod *const *group_victims;
    size_t ngroup_victims;
    ks_pod *replaced;
} sched_cycle;

/* ---- recording a failure ------------------------------------------------------------------- */

static ks_code fail(sched_cycle *c, ks_code code, const char *message, int with_explain)
{
    c->code = code;
    free(c->message);
    c->message = strdup(message);
    c->explain_failure = with_explain;
    return code;
}

/* An Error with st's message. */
static ks_code fail_status(sched_cycle *c, const ks_status *st, int with_explain)
{
    char msg[KS_STATUS_BUF];
    ks__status_message(st, msg, sizeof(msg));
    return fail(c, KS_ERROR, msg, with_explain);
}

/* The rejector "plugin" of a pod refused because it uses what no plugin of its profile places
 * (unsupported_use): no plugin's bit, so no event's hint moves it (only the periodic flush, as an
 * upstream pod that a plugin found unresolvable), and it still counts as unschedulable, not as a
 * scheduler error (an error would retry it every few seconds). */
#define KS_REJECTOR_UNSUPPORTED (1ull << 63)

/* The rejector bit of the plugin behind a rejection (and its pending bit for Pending). */
static uint64_t rejectors_of(ks_framework *fw, const ks_status *st, uint64_t *pending)
{
    if (!st->plugin || (st->code != KS_UNSCHEDULABLE &&
                        st->code != KS_UNSCHEDULABLE_AND_UNRESOLVABLE && st->code != KS_PENDING))
        return 0;
    uint64_t bit = ks__plugin_bit(fw, st->plugin);
    if (st->code == KS_PENDING)
        *pending |= bit;
    return bit;
}

/* The scheduler's clock (the queue's: simulate's virtual one, else monotonic). */
static int64_t sched_now(const ks_scheduler *s)
{
    return s->now_ns ? s->now_ns(s->clock_ctx) : ks__clock_now_ns();
}

/* ---- candidates and the nominated node ----------------------------------------------------- */

static int sym_in_sorted(const ks_sym *syms, size_t n, ks_sym x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (syms[mid] == x)
            return 1;
        if (syms[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The candidate nodes: the snapshot, or the PreFilter result's subset in snapshot order. */
static void collect_candidates(sched_cycle *c, const ks_prefilter_result *pf, int restricted)
{
    const ks_snapshot *snap = c->s->snap;
    memcpy(c->excluded_msg, pf->excluded_msg, sizeof(c->excluded_msg));
    if (!restricted) {
        memcpy(c->sc->cand, snap->nodes, c->num_all * sizeof(*c->sc->cand));
        c->ncand = c->num_all;
        return;
    }
    c->ncand = 0;
    for (size_t i = 0; i < c->num_all; i++)
        if (sym_in_sorted(pf->nodes, pf->n, snap->nodes[i]->name))
            c->sc->cand[c->ncand++] = snap->nodes[i];
}

/* upstream evaluateNominatedNode: a pod nominated to a node (after preemption) tries that node
 * first, and so does a pod given a batch hint (node: the nomination, else the hint), as
 * findNodesThatPassFilters on that one node (a timed Filter point when there are Filter
 * plugins); 1 when it fits there. */
static int evaluate_nominated_node(sched_cycle *c, ks_sym node)
{
    const ks_node_info *ni = ks__snapshot_find(c->s->snap, node);
    if (!ni)
        return 0;
    ks_status st;
    uint16_t passed;
    ks__status_reset(&st);
    size_t pieces = c->fw->n[KS_PT_FILTER] > 0;
    int64_t t0 = pieces ? ks__fw_metrics_ep_start(c->fw->metrics) : 0;
    ks__parallelizer_track(&c->s->par, KS_OP_FILTER, t0 ? pieces : 0, +1);
    ks_code code = ks__fw_run_filter_with_nominated(c->fw, c->state, c->pod, ni, &st, &passed);
    ks__parallelizer_track(&c->s->par, KS_OP_FILTER, t0 ? pieces : 0, -1);
    if (t0)
        ks__fw_metrics_ep(c->fw->metrics, KS_EP_FILTER, code == KS_ERROR ? KS_ERROR : KS_SUCCESS,
                          t0);
    if (code != KS_SUCCESS)
        return 0;
    c->sc->feasible[0] = ni;
    c->nfeasible = 1;
    return 1;
}

/* ---- Filter -------------------------------------------------------------------------------- */

/* upstream hasScoring (kubesched has no extenders). */
static int has_scoring(const ks_framework *fw) { return fw->n[KS_PT_SCORE] > 0; }

/* upstream numFeasibleNodesToFind; without scoring the first feasible node is as good as any, so
 * one is enough. */
static size_t num_nodes_to_find(const sched_cycle *c)
{
    int32_t percentage = c->fw->percentage_of_nodes_to_score >= 0
                             ? c->fw->percentage_of_nodes_to_score
                             : c->s->cfg->percentage_of_nodes_to_score;
    if (!has_scoring(c->fw))
        return 1;
    return (size_t)ks__num_feasible_nodes_to_find(percentage, (int32_t)c->ncand);
}

typedef struct filter_job {
    const sched_cycle *c; /* read-only on the workers */
    size_t want;
    _Atomic size_t found;
    _Atomic int error;
} filter_job;

/* Filter on the i-th candidate from the start; its verdict goes to position i of the scratch. */
static int filter_one(void *ctx, size_t i, int worker)
{
    filter_job *j = ctx;
    const sched_cycle *c = j->c;
    ks_cycle_scratch *sc = c->sc;
    const ks_node_info *ni = sc->cand[(c->start + i) % c->ncand];
    (void)worker;
    ks__status_reset(&sc->statuses[i]);
    ks_code code = ks__fw_run_filter_with_nominated(c->fw, c->state, c->pod, ni, &sc->statuses[i],
                                                    &sc->passed[i]);
    sc->feasible_flag[i] = code == KS_SUCCESS;
    if (code == KS_ERROR) {
        j->error = 1;
        return 1;
    }
    if (code == KS_SUCCESS && ++j->found >= j->want)
        return 1; /* enough: stop claiming new chunks */
    return 0;
}

/* No Filter plugins: the first want candidates from the start are feasible. */
static void take_without_filters(sched_cycle *c, size_t want)
{
    ks_cycle_scratch *sc = c->sc;
    for (size_t i = 0; i < c->ncand && c->nfeasible < want; i++) {
        sc->feasible[c->nfeasible++] = sc->cand[(c->start + i) % c->ncand];
        ks__status_reset(&sc->statuses[i]);
        sc->passed[i] = 0;
        sc->feasible_flag[i] = 1;
        c->nevaluated = i + 1;
    }
}

/* Keeps the first want feasible nodes in evaluation order; later ones are as if never evaluated
 * (what a sequential run would do). */
static void keep_first_feasible(sched_cycle *c, size_t processed, size_t want)
{
    ks_cycle_scratch *sc = c->sc;
    for (size_t i = 0; i < processed; i++) {
        c->nevaluated = i + 1;
        if (sc->feasible_flag[i]) {
            sc->feasible[c->nfeasible++] = sc->cand[(c->start + i) % c->ncand];
            if (c->nfeasible == want)
                break;
        }
    }
}

/* The Error status among the first processed verdicts (upstream: the first error cancels). */
static ks_code fail_filter_error(sched_cycle *c, size_t processed)
{
    for (size_t i = 0; i < processed; i++)
        if (c->sc->statuses[i].code == KS_ERROR)
            return fail_status(c, &c->sc->statuses[i], 0);
    return fail(c, KS_ERROR, "", 0);
}

/* upstream findNodesThatPassFilters: Filter over the candidates in parallel from the rotating
 * start, until want nodes fit; the Filter point is timed once for all nodes. */
static ks_code find_nodes_that_pass_filters(sched_cycle *c)
{
    ks_scheduler *s = c->s;
    size_t want = num_nodes_to_find(c);
    c->start = s->next_start_index % c->ncand;
    if (c->fw->n[KS_PT_FILTER] == 0) {
        take_without_filters(c, want);
    } else {
        filter_job job = {.c = c, .want = want};
        /* An isolated plugin filters these in batches, the first (twice the nodes the sampling
         * wants, from the rotating start) before the workers start. */
        c->state->iso_filter_nodes = c->sc->cand;
        c->state->iso_nfilter_nodes = c->ncand;
        ks__fw_iso_prefetch_filter(c->fw, c->state, c->pod, c->start, 2 * want);
        int64_t t0 = ks__fw_metrics_ep_start(c->fw->metrics);
        size_t processed =
            ks__parallelizer_until(&s->par, KS_OP_FILTER, c->ncand, filter_one, &job);
        c->state->iso_filter_nodes = NULL;
        c->state->iso_nfilter_nodes = 0;
        ks__fw_metrics_ep(c->fw->metrics, KS_EP_FILTER, job.error ? KS_ERROR : KS_SUCCESS, t0);
        if (job.error)
            return fail_filter_error(c, processed);
        keep_first_feasible(c, processed, want);
    }
    /* upstream: nextStartNodeIndex = (start + processed) % len(allNodes) */
    s->next_start_index = (s->next_start_index + c->nevaluated) % c->num_all;
    return KS_SUCCESS;
}

/* --explain: the evaluated candidates in order, with their statuses. */
static void explain_evaluated(sched_cycle *c)
{
    if (!c->s->explain)
        return;
    c->evaluated = malloc((c->nevaluated ? c->nevaluated : 1) * sizeof(*c->evaluated));
    for (size_t i = 0; c->evaluated && i < c->nevaluated; i++)
        c->evaluated[i] = c->sc->cand[(c->start + i) % c->ncand];
    c->ex.nevaluated = c->evaluated ? c->nevaluated : 0;
    c->ex.evaluated = c->evaluated;
    c->ex.passed = c->sc->passed;
    c->ex.statuses = c->sc->statuses;
    c->ex.skip_filter = c->state->skip_filter;
}

/* Whether the profile has an enabled plugin of that name (at any extension point). */
static int profile_has_plugin(const ks_framework *fw, const char *name)
{
    for (size_t i = 0; i < fw->ninst; i++)
        if (strcmp(fw->inst[i].name, name) == 0)
            return 1;
    return 0;
}

/* kubesched's own guard, not upstream's: a pod that uses what only a plugin this profile lacks
 * can place (claims of dynamic resources, persistent volume claims) is refused with a message
 * that says what is missing, instead of being placed as if the claim were not there (a pod the
 * kubelet can then never start). 1 when refused (c->st says why). */
static int unsupported_use(sched_cycle *c)
{
    static const struct {
        uint32_t use;
        const char *plugin, *what, *fix;
    } needs[] = {
        {KS__POD_USES_RESOURCE_CLAIMS, "DynamicResources",
         "spec.resourceClaims (dynamic resource allocation)",
         "enable DynamicResources in the profile"},
        {KS__POD_USES_VOLUME_CLAIMS, "VolumeBinding",
         "PersistentVolumeClaims (persistentVolumeClaim or ephemeral volumes)",
         "enable VolumeBinding in the profile"},
    };
    for (size_t i = 0; c->pod->uses && i < sizeof(needs) / sizeof(needs[0]); i++) {
        if (!(c->pod->uses & needs[i].use) || profile_has_plugin(c->fw, needs[i].plugin))
            continue;
        char msg[KS_STATUS_BUF];
        snprintf(msg, sizeof(msg),
                 "pod uses %s, which only the %s plugin can place, and profile %s has no %s "
                 "plugin (%s)",
                 needs[i].what, needs[i].plugin, c->fw->profile_name, needs[i].plugin,
                 needs[i].fix);
        ks__status_reset(&c->st);
        c->st.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        ks__status_add(&c->st, msg);
        c->unsupported = 1;
        return 1;
    }
    return 0;
}

/* upstream findNodesThatFitPod: PreFilter, the nominated node, then Filter. A pod that fits
 * nowhere is a FitError: KS_UNSCHEDULABLE (or PreFilter's rejection) with c->fit set, for
 * PostFilter. */
static ks_code find_nodes_that_fit(sched_cycle *c)
{
    ks_prefilter_result pf = {0};
    int restricted = 0;
    if (unsupported_use(c)) { /* as a PreFilter rejection of every node */
        c->fit = FIT_PREFILTER;
        return c->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    ks_code code = ks__fw_run_pre_filter(c->fw, c->state, c->pod, &pf, &restricted, &c->st);
    if (code == KS_SUCCESS)
        collect_candidates(c, &pf, restricted);
    free(pf.nodes);
    if (code == KS_ERROR)
        return fail_status(c, &c->st, 0);
    if (code != KS_SUCCESS) { /* every node gets PreFilter's status; PostFilter may still help */
        c->fit = FIT_PREFILTER;
        return c->code = code;
    }
    /* upstream: the hint is asked for even for a nominated pod (whose nomination wins), after
     * PreFilter, since the batch may run Filter and PreScore on this cycle's state. */
    if (c->fw->batch && !c->s->snap_frozen)
        c->hint = ks__batch_get_node_hint(c->fw->batch, c->state, c->pod, c->sig, c->s->snap,
                                          c->seq, sched_now(c->s));
    ks_sym first =
        c->pod->nominated_node_name != KS_SYM_EMPTY ? c->pod->nominated_node_name : c->hint;
    if (!(first != KS_SYM_EMPTY && first != KS_SYM_ABSENT && evaluate_nominated_node(c, first)) &&
        c->ncand > 0) {
        code = find_nodes_that_pass_filters(c);
        if (code != KS_SUCCESS)
            return code;
    }
    explain_evaluated(c);
    if (c->nfeasible > 0)
        return KS_SUCCESS;
    c->fit = FIT_FILTER;
    return c->code = KS_UNSCHEDULABLE;
}

/* ---- Score and selectHost ------------------------------------------------------------------ */

/* upstream prioritizeNodes: PreScore, then RunScorePlugins' weighted sums. (Upstream's "no Score
 * plugins: every node scores 1" branch cannot be reached here: without scoring one feasible node
 * is enough (num_nodes_to_find), and schedule_pod takes a single node without prioritizing.) */
static ks_code prioritize_nodes(sched_cycle *c)
{
    ks_cycle_scratch *sc = c->sc;
    const ks_node_info *const *nodes = (const ks_node_info *const *)sc->feasible;
    ks_code code = ks__fw_run_pre_score(c->fw, c->state, c->pod, nodes, c->nfeasible, &c->st);
    if (code != KS_SUCCESS)
        return fail_status(c, &c->st, 0);
    ks_score_scratch out = {
        .scores = sc->scores, .raw = sc->raw, .norm = sc->norm, .totals = sc->totals};
    code = ks__fw_run_score_plugins(c->fw, c->state, c->pod, nodes, c->nfeasible, &out, &c->st);
    if (code != KS_SUCCESS)
        return fail_status(c, &c->st, 0);
    c->ex.scored = 1;
    c->ex.scores = sc->scores;
    c->ex.totals = sc->totals;
    c->ex.skip_score = c->state->skip_score;
    return KS_SUCCESS;
}

/* upstream v1.37 host selection: NewSortedScoredNodes(priorityList).Pop(). The feasible nodes, in
 * the order Filter found them, go into a heap ordered by total score, then Randomizer (upstream
 * sets it to rand.Int() only for nodes an extender scored; kubesched has no extenders, so it is 0
 * everywhere and nothing is drawn); the heap is built and popped exactly as Go's container/heap
 * does, so among equal totals the winner is the one upstream picks from the same order. The rest
 * stays in sc->heap[0 .. *nrest) for the batch cache. */
static const ks_node_info *select_host(sched_cycle *c, size_t *nrest)
{
    ks_scored_node *h = c->sc->heap;
    for (size_t f = 0; f < c->nfeasible; f++)
        h[f] = (ks_scored_node){c->sc->totals[f], 0, (uint32_t)f};
    size_t n = c->nfeasible;
    ks__sorted_nodes_init(h, n);
    ks_scored_node best = ks__sorted_nodes_pop(h, &n);
    *nrest = n;
    return c->sc->feasible[best.idx];
}

/* upstream SchedulePod: the snapshot, the nodes that fit, the best of them (one feasible node is
 * taken without scoring). */
static ks_code schedule_pod(sched_cycle *c)
{
    ks_scheduler *s = c->s;
    /* a frozen snapshot is workload-aware preemption's simulation: it stays as it is */
    if ((!s->snap_frozen && ks__cache_update_snapshot(s->cache, s->snap) != 0) ||
        ks__scratch_reserve(c->sc, s->snap->nnodes, c->fw->n[KS_PT_SCORE]) != 0)
        return fail(c, KS_ERROR, "out of memory updating the snapshot", 0);
    c->num_all = s->snap->nnodes;
    if (c->num_all == 0)
        return fail(c, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "no nodes available to schedule pods", 0);
    c->state = ks__cycle_new(s->snap, c->pod);
    if (!c->state)
        return fail(c, KS_ERROR, "out of memory", 0);
    c->state->fw = c->fw;
    c->state->hooks = &s->hooks;
    ks__sched_metrics_cycle_begin(s, c->state);

    ks_code code = find_nodes_that_fit(c);
    if (code != KS_SUCCESS)
        return code;
    c->host = c->sc->feasible[0];
    size_t nrest = 0;
    if (c->nfeasible > 1) {
        if ((code = prioritize_nodes(c)) != KS_SUCCESS)
            return code;
        c->host = select_host(c, &nrest);
    }
    /* upstream StoreScheduleResults: one feasible node stores no list (nil), else the nodes
     * left in the heap after the winner. */
    if (c->fw->batch && !s->snap_frozen)
        ks__batch_store(c->fw->batch, c->sig, c->hint, c->host->name, c->sc->heap, nrest,
                        (const ks_node_info *const *)c->sc->feasible, c->sc->raw, c->nfeasible,
                        c->seq, sched_now(s));
    c->ex.nfeasible = c->nfeasible;
    c->ex.feasible = (const ks_node_info *const *)c->sc->feasible;
    return KS_SUCCESS;
}

/* ---- FitError: PostFilter ------------------------------------------------------------------ */

/* The Filter verdicts as PostFilter reads them: by snapshot index, the rejector plugins, and the
 * status of the nodes PreFilter excluded (upstream: "node(s) didn't satisfy plugin(s) [...]"). */
static ks_filter_outcome diagnose_filter(sched_cycle *c, ks_status *absent)
{
    ks_cycle_scratch *sc = c->sc;
    const ks_snapshot *snap = c->s->snap;
    for (size_t i = 0; i < c->nevaluated; i++)
        c->rejectors |= rejectors_of(c->fw, &sc->statuses[i], &c->pending);
    ks__status_reset(absent);
    if (c->num_all > c->ncand) {
        absent->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        ks__status_add(absent, c->excluded_msg);
    }
    for (size_t i = 0; i < c->num_all; i++) {
        ks__status_reset(&sc->by_index[i]);
        sc->evaluated[i] = 0;
    }
    for (size_t i = 0; i < c->nevaluated; i++) {
        const ks_node_info *ni = sc->cand[(c->start + i) % c->ncand];
        for (size_t k = 0; k < c->num_all; k++)
            if (snap->nodes[k] == ni) {
                sc->by_index[k] = sc->statuses[i];
                sc->evaluated[k] = 1;
                break;
            }
    }
    return (ks_filter_outcome){snap, sc->by_index, sc->evaluated, NULL};
}

/* upstream schedulingCycle on a FitError: PostFilter (preemption) sees every node's verdict; the
 * FitError message ends with PostFilter's own message. */
static void run_post_filter(sched_cycle *c)
{
    ks_status absent, post;
    ks_filter_outcome o;
    if (c->fit == FIT_PREFILTER) {
        c->rejectors =
            c->unsupported ? KS_REJECTOR_UNSUPPORTED : rejectors_of(c->fw, &c->st, &c->pending);
        o = (ks_filter_outcome){c->s->snap, NULL, NULL, &c->st};
    } else {
        o = diagnose_filter(c, &absent);
    }
    char post_msg[KS_STATUS_BUF] = "";
    ks_code pc = ks__fw_run_post_filter(c->fw, c->state, c->pod, &o, &c->pfr, &post);
    c->nominated = c->pfr.nominated;
    /* upstream v1.37 keeps PostFilter's message whatever its code: a successful preemption
     * says where it found room ("preemption: found a potential placement ..."). */
    ks__status_message(&post, post_msg, sizeof(post_msg));
    c->preempt = pc == KS_SUCCESS && c->nominated != KS_SYM_ABSENT;
    c->preemptor = post.plugin;
    if (c->fit == FIT_PREFILTER) {
        c->message = ks__fit_error_message(c->num_all, &c->st, NULL, 0, NULL, 0, post_msg);
        c->ex.prefilter_status = &c->st;
        c->ex.skip_filter = c->state->skip_filter;
    } else {
        c->message = ks__fit_error_message(c->num_all, NULL, c->sc->statuses, c->nevaluated,
                                           &absent, c->num_all - c->ncand, post_msg);
    }
    c->explain_failure = 1;
}

/* ---- assume, Reserve, Permit --------------------------------------------------------------- */

/* upstream assume: the pod counts on its node in the cache from now on. */
static ks_code assume(sched_cycle *c)
{
    c->assumed = ks__pod_with_node(c->pod, c->host->name);
    ks__nominator_remove(c->s, c->pod->uid); /* upstream DeleteNominatedPodIfExists */
    int rc = c->assumed ? ks__cache_assume_pod(c->s->cache, c->assumed) : KS_ENOMEM;
    /* in workload-aware preemption's simulation the snapshot sees the pod too (upstream
     * assumes on the snapshot) */
    if (rc == 0 && c->s->snap_frozen && (rc = ks__snapshot_add_pod(c->s->snap, c->assumed)) != 0)
        ks__cache_forget_pod(c->s->cache, c->assumed->uid);
    if (rc == 0) {
        /* upstream's cache assumePodGroupMember: GangScheduling's Permit counts it scheduled */
        ks__podgroup_member_assume(c->s->podgroups, c->assumed);
        return KS_SUCCESS;
    }
    /* KS_EEXIST: the watch put it in the cache meanwhile (bound by someone else); upstream's
     * AssumePod error text. The queue has dropped it, so it is not retried. */
    char m[600];
    if (rc == KS_EEXIST)
        snprintf(m, sizeof(m), "pod %s(%s) is in the cache, so can't be assumed", c->pod->uid,
                 c->pod->key);
    else
        snprintf(m, sizeof(m), "could not assume the pod in the scheduler cache: %s",
                 ks__strerror(rc));
    ks__log('E', NULL, "Scheduler cache AssumePod failed: %s", m);
    ks__pod_unref(c->assumed);
    c->assumed = NULL;
    return fail(c, KS_ERROR, m, 1);
}

/* upstream unreserveAndForget: Unreserve, and the assumed pod leaves the cache (and its group's
 * assumed members). */
static void unreserve_and_forget(sched_cycle *c)
{
    ks__fw_run_unreserve(c->fw, c->state, c->assumed, c->host->name);
    if (c->s->snap_frozen)
        ks__snapshot_remove_pod(c->s->snap, c->assumed);
    ks__cache_forget_pod(c->s->cache, c->assumed->uid);
    ks__podgroup_member_forget(c->s->podgroups, c->assumed);
    ks__pod_unref(c->assumed);
    c->assumed = NULL;
}

/* A Reserve or Permit rejection (code): unreserved and forgotten, the failure recorded. */
static ks_code reserve_or_permit_failed(sched_cycle *c, ks_code code)
{
    unreserve_and_forget(c);
    if (code == KS_ERROR)
        return fail_status(c, &c->st, 1);
    c->rejectors = rejectors_of(c->fw, &c->st, &c->pending);
    c->message = ks__fit_error_message(1, NULL, &c->st, 1, NULL, 0, NULL);
    c->explain_failure = 1;
    return c->code = code;
}

static ks_code reserve_only(sched_cycle *c)
{
    ks_code code = ks__fw_run_reserve(c->fw, c->state, c->assumed, c->host->name, &c->st);
    return code == KS_SUCCESS || code == KS_WAIT ? KS_SUCCESS : reserve_or_permit_failed(c, code);
}

static ks_code permit_only(sched_cycle *c)
{
    ks_code code = ks__fw_run_permit(c->fw, c->state, c->assumed, c->host->name, &c->timeout_ms,
                                     &c->waiting, &c->st);
    return code == KS_SUCCESS || code == KS_WAIT ? KS_SUCCESS : reserve_or_permit_failed(c, code);
}

/* Reserve, then Permit (Wait goes on to the binding cycle); a failure unreserves and forgets the
 * assumed pod. */
static ks_code reserve_and_permit(sched_cycle *c)
{
    ks_code code = reserve_only(c);
    return code == KS_SUCCESS ? permit_only(c) : code;
}

/* ---- the cycle ----------------------------------------------------------------------------- */

static void report_cycle(const sched_cycle *c, const char *result, ks_sym node, const char *msg,
                         const ks_explain *ex)
{
    ks_scheduler *s = c->s;
    if (s->observer.cycle_done)
        s->observer.cycle_done(s->observer.ctx, c->seq, c->pod, c->fw->profile_name, result, node,
                               msg, s->explain ? ex : NULL);
}

/* PostFilter succeeded with a nomination: evict the victims, nominate the pod (it is retried with
 * that node first), and tell the observer. */
static void apply_preemption(sched_cycle *c)
{
    ks_scheduler *s = c->s;
    ks_queued_pod *qp = c->qp;
    ks_post_filter_result *r = &c->pfr;
    for (size_t i = 0; i < r->nvictims; i++) {
        ks_pod *v = r->victims[i];
        if (ks__log_enabled(2))
            ks__log('I', NULL, "Preempting pod %s on node %s for pod %s", v->key,
                    ks__sym_str(r->nominated), qp->pod->key);
        /* Upstream PreemptPod: a victim waiting on Permit is not bound yet; it is rejected
         * ("preempted") instead of deleted, and its binding cycle forgets it. Live sources only:
         * simulate drops victims at once and keeps its results as they were. */
        if (s->victims_leave_on_delete_event &&
            ks__binding_reject_waiting(s, v->uid, c->preemptor ? c->preemptor : "DefaultPreemption",
                                       "preempted")) {
            if (ks__log_enabled(2))
                ks__log('I', NULL, "Preemptor pod %s rejected a waiting pod %s on node %s",
                        qp->pod->key, v->key, ks__sym_str(r->nominated));
            if (s->source.preempted_waiting)
                s->source.preempted_waiting(s->source.ctx, v, qp->pod, r->nominated);
            continue;
        }
        /* v1.37: a victim in PreBind is cancelled in memory, not deleted */
        char cause[96];
        snprintf(cause, sizeof(cause), "preempted by %s",
                 c->preemptor ? c->preemptor : "DefaultPreemption");
        if (s->victims_leave_on_delete_event && ks__binding_cancel_prebind(s, v->uid, cause)) {
            if (ks__log_enabled(2))
                ks__log('I', NULL, "Preemptor pod %s rejected a pod in preBind %s on node %s",
                        qp->pod->key, v->key, ks__sym_str(r->nominated));
            if (s->source.preempted_waiting)
                s->source.preempted_waiting(s->source.ctx, v, qp->pod, r->nominated);
            continue;
        }
        /* Without a deletion event to come (simulate) the victim leaves now; a live source
         * keeps it counted until the API server says it is gone (upstream), so the preemptor
         * waits for it rather than over-commit the node. */
        if (!s->victims_leave_on_delete_event)
            ks__scheduler_on_pod_delete(s, v);
        if (s->source.evict)
            s->source.evict(s->source.ctx, v, qp->pod, r->nominated);
    }
    ks__nominator_clear_lower(s, r->nominated, qp->pod->priority);
    ks_pod *np = ks__pod_with_nominated(qp->pod, r->nominated);
    if (np) {
        /* The cycle still reads the old object: release it when the cycle is over. */
        s->deferred_unref = qp->pod;
        qp->pod = np;
        ks__nominator_add(s, np);
    }
    if (s->metrics) /* upstream observeVictims for a pod preemptor */
        ks__metrics_observe(s->metrics->preemption_victims_solo, (double)r->nvictims);
    if (s->observer.preempted)
        s->observer.preempted(s->observer.ctx, c->seq, qp->pod, r->nominated, r->victims,
                              r->nvictims);
}

/* A PodGroup member sent back with a nomination (upstream FailureHandler's nominatingInfo for
 * a group waiting on its preemption): the pod is retried with that node first. */
static void nominate_member(sched_cycle *c)
{
    ks_scheduler *s = c->s;
    ks_queued_pod *qp = c->qp;
    ks_pod *np = ks__pod_with_nominated(qp->pod, c->group_nominated);
    if (np) {
        c->replaced = qp->pod; /* the cycle may still read it: released with the group's */
        qp->pod = np;
        ks__nominator_add(s, np);
    }
    c->nominated = c->group_nominated;
    /* one preemption, one report (upstream observes its victims once, in prepareCandidate) */
    if (c->group_reporter && s->observer.preempted)
        s->observer.preempted(s->observer.ctx, c->seq, qp->pod, c->group_nominated,
                              c->group_victims, c->ngroup_victims);
    else if (!c->group_reporter && s->observer.nominated)
        s->observer.nominated(s->observer.ctx, c->seq, qp->pod, c->group_nominated);
}

/* The one failure exit (upstream: schedulingCycle returns the status, ScheduleOne calls
 * FailureHandler): report, evict the victims of a preemption, requeue. */
static void handle_cycle_failure(sched_cycle *c)
{
    const char *msg = c->message ? c->message : "";
    report_cycle(c, c->code == KS_ERROR ? "Error" : "Unschedulable", KS_SYM_ABSENT, msg,
                 c->explain_failure ? &c->ex : NULL);
    if (c->preempt)
        apply_preemption(c);
    else if (c->group_nominated != KS_SYM_ABSENT)
        nominate_member(c);
    ks__handle_failure(c->s, c->fw, c->qp, c->code, msg, c->rejectors, c->pending, c->nominated);
}

/* upstream skipPodSchedule: a pod being deleted, or already assumed (its binding cycle owns it). */
static int skip_pod_schedule(const sched_cycle *c)
{
    return c->pod->terminating || ks__cache_is_assumed(c->s->cache, c->pod->uid);
}

static void cycle_init(sched_cycle *c, ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp)
{
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->fw = fw;
    c->qp = qp;
    c->pod = qp->pod;
    c->seq = ++s->seq;
    c->sc = &s->scratch;
    c->nominated = KS_SYM_ABSENT;
    c->hint = KS_SYM_ABSENT;
    c->ex.fw = fw;
    c->pfr.nominated = KS_SYM_ABSENT;
    c->group_nominated = KS_SYM_ABSENT;
}

static void cycle_release(sched_cycle *c)
{
    ks__post_filter_result_clear(&c->pfr);
    ks__pod_sig_unref(c->sig);
    free(c->message);
    free(c->evaluated);
    ks__cycle_free(c->state);
}

/* A successful scheduling cycle hands the pod to its binding cycle: the pods it asked to
 * activate move up, the observer hears of it. ex: NULL when the scratch it points into was
 * reused since (a PodGroup cycle's members). */
static void submit_binding(sched_cycle *c, const ks_explain *ex)
{
    ks__sched_activate_requested(c->s, c->state);
    report_cycle(c, NULL, c->host->name, NULL, ex);
    c->state->evals = NULL; /* the binding cycle counts no evaluations: the rows are reused */
    ks__binding_submit(c->s, c->fw, c->state, c->qp, c->assumed, c->seq, c->waiting, c->timeout_ms);
    c->state = NULL;
}

/* upstream schedulingCycle, then the binding cycle or the failure handler. */
static void scheduling_cycle(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp)
{
    sched_cycle c;
    cycle_init(&c, s, fw, qp);
    if (skip_pod_schedule(&c)) {
        ks__queue_done(s->queue, qp);
        return;
    }
    /* upstream signs the pod when it enters or changes in the queue (signPod); the signature
     * depends only on the pod and the profile, so signing it when it is popped gives the same
     * bytes without a hook in the queue. */
    if (fw->batch)
        c.sig = ks__fw_sign_pod(fw, c.pod);
    ks_code code = schedule_pod(&c);
    if (c.state) /* isolated plugins are done with this pod: their children end now */
        ks__iso_end_sessions(c.state);
    if (c.fit != FIT_NONE)
        run_post_filter(&c);
    ks__sched_metrics_algorithm_done(s, qp);
    if (code == KS_SUCCESS)
        code = assume(&c);
    if (code == KS_SUCCESS)
        code = reserve_and_permit(&c);
    if (code == KS_SUCCESS)
        submit_binding(&c, &c.ex); /* upstream: then the pods to activate move up */
    else
        handle_cycle_failure(&c);
    cycle_release(&c);
}

/* ---- the PodGroup scheduling cycle (GenericWorkload) --------------------------------------- */

/* upstream schedulingAlgorithm in a PodGroup cycle: no PostFilter for the single pod (the group's
 * PodGroupPostFilter would run instead, which kubesched does not have), so the FitError message
 * has no PostFilter part. */
static void fit_failure_in_group(sched_cycle *c)
{
    ks_status absent;
    free(c->message);
    if (c->fit == FIT_PREFILTER) {
        c->rejectors =
            c->unsupported ? KS_REJECTOR_UNSUPPORTED : rejectors_of(c->fw, &c->st, &c->pending);
        c->message = ks__fit_error_message(c->num_all, &c->st, NULL, 0, NULL, 0, "");
    } else {
        diagnose_filter(c, &absent);
        c->message = ks__fit_error_message(c->num_all, NULL, c->sc->statuses, c->nevaluated,
                                           &absent, c->num_all - c->ncand, "");
    }
}

/* upstream podGroupPodSchedulingAlgorithm: the algorithm on the snapshot (which the members
 * assumed before this one are part of), then assume and Reserve. Whether the member is assumed. */
static int member_attempt(sched_cycle *c)
{
    int sim = c->s->snap_frozen; /* preemption's simulation: no batching, no metrics */
    if (c->fw->batch && !sim)
        c->sig = ks__fw_sign_pod(c->fw, c->pod);
    ks_code code = schedule_pod(c);
    if (c->fit != FIT_NONE)
        fit_failure_in_group(c);
    if (!sim)
        ks__sched_metrics_algorithm_done(c->s, c->qp);
    if (code == KS_SUCCESS)
        code = assume(c);
    if (code == KS_SUCCESS)
        code = reserve_only(c);
    c->explain_failure = 0; /* the scratch its explanation points into is reused */
    return code == KS_SUCCESS;
}

/* The gang's pods in QueueSort's order (the popped one is the head of activeQ). */
static void sort_members(ks_scheduler *s, ks_queued_pod **qps, size_t n)
{
    ks_plugin_inst *in = s->fw[0]->pt[KS_PT_QUEUE_SORT][0].inst;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && in->desc->less(in->self, qps[j], qps[j - 1]); j--) {
            ks_queued_pod *t = qps[j];
            qps[j] = qps[j - 1];
            qps[j - 1] = t;
        }
}

/* A member's failure, with the given code, message and rejectors when code is not 0 (its own
 * otherwise). */
static void member_failed(sched_cycle *c, ks_code code, const char *message, uint64_t rejectors)
{
    if (code) {
        fail(c, code, message, 0);
        c->rejectors = rejectors;
        c->pending = 0;
    }
    c->explain_failure = 0; /* its explanation points into scratch the later members reused */
    handle_cycle_failure(c);
}

/* The group algorithm's outcome (upstream podGroupAlgorithmResult): KS_SUCCESS, KS_UNSCHEDULABLE
 * (gmsg: PlacementFeasible's message) or KS_ERROR (emsg); the members tried, in order. */
typedef struct group_result {
    ks_code code;
    size_t tried;
    char gmsg[KS_STATUS_BUF];
    char emsg[KS_STATUS_BUF + 64];
} group_result;

/* upstream podGroupSchedulingDefaultAlgorithm: each member in turn on the snapshot the previous
 * ones changed, assumed and reserved (ok[i]) while GangScheduling's PlacementFeasible allows. The
 * members stay assumed until group_revert or their binding cycles. scheduled: the members
 * assumed or bound before this cycle. */
static void group_algorithm(ks_framework *fw, const ks__pg_cycle_group *g, sched_cycle *cs, int *ok,
                            size_t m, int scheduled, group_result *r)
{
    int remaining = (int)m;
    r->tried = 0;
    r->emsg[0] = '\0';
    /* upstream: PlacementFeasible before any member is tried, then after each */
    r->code =
        m ? ks__podgroup_placement_feasible(fw, g, scheduled, remaining, r->gmsg, sizeof(r->gmsg))
          : KS_SUCCESS;
    if (!m)
        r->gmsg[0] = '\0';
    if (r->code == KS_ERROR)
        snprintf(r->emsg, sizeof(r->emsg), "failed to evaluate placement feasibility: %s", r->gmsg);
    if (r->code == KS_UNSCHEDULABLE) {
        /* upstream: refused before any member, NewStatus(..).WithError(errPodGroupUnschedulable) */
        char t[KS_STATUS_BUF];
        snprintf(t, sizeof(t), "pod group is unschedulable, %s", r->gmsg);
        snprintf(r->gmsg, sizeof(r->gmsg), "%s", t);
    }
    int stale = 0;
    for (size_t i = 0; i < m && (r->code == KS_SUCCESS || r->code == KS_WAIT); i++) {
        r->tried++;
        /* upstream's nominator is live: a member assumed before this one no longer counts
         * where it was nominated (assume dropped its nomination) */
        if (stale) {
            ks__nominator_release(cs[i].s);
            ks__nominator_snapshot(cs[i].s);
        }
        ok[i] = member_attempt(&cs[i]);
        stale = ok[i] && cs[i].pod->nominated_node_name != KS_SYM_ABSENT &&
                cs[i].pod->nominated_node_name != KS_SYM_EMPTY;
        if (!ok[i] && cs[i].code == KS_ERROR) {
            snprintf(r->emsg, sizeof(r->emsg), "failed to schedule other pod from a pod group: %s",
                     cs[i].message ? cs[i].message : "");
            r->code = KS_ERROR;
            break;
        }
        remaining--;
        scheduled += ok[i];
        r->code =
            ks__podgroup_placement_feasible(fw, g, scheduled, remaining, r->gmsg, sizeof(r->gmsg));
        if (r->code == KS_ERROR) {
            snprintf(r->emsg, sizeof(r->emsg), "failed to evaluate placement feasibility: %s",
                     r->gmsg);
            break;
        }
    }
    if (r->code == KS_WAIT) /* not yet satisfied with nothing left: the group is unschedulable */
        r->code = KS_UNSCHEDULABLE;
}

/* upstream: the algorithm's deferred revertFns, the last assumed first. */
static void group_revert(sched_cycle *cs, const int *ok, size_t tried)
{
    for (size_t i = tried; i-- > 0;)
        if (ok[i])
            unreserve_and_forget(&cs[i]);
}

/* ---- workload-aware preemption (GenericWorkload) ------------------------------------------- */

/* A member's place in preemption's simulation (upstream ProposedAssignment): its cycle state
 * from the simulated group algorithm (PreFilter ran with the members before it assumed). */
typedef struct pg_assignment {
    ks_pod *pod;     /* the pending member */
    ks_pod *assumed; /* a copy on node (one reference) */
    ks_sym node;
    ks_cycle *state;
    size_t member; /* index among the cycle's members */
} pg_assignment;

/* What the preemption decided (upstream PodGroupPostFilter's status and result). */
typedef struct pg_preemption {
    ks_code code; /* KS_SUCCESS: victims evicted (maybe none), members nominated */
    char msg[KS_STATUS_BUF + 64];
    ks_sym *nominated; /* per member: KS_SYM_ABSENT, or its node */
    ks_pod **victims;  /* the pods evicted, most important unit first (references) */
    size_t nvictims;
    int ongoing; /* upstream isOngoingPreemption: nothing evicted now */
} pg_preemption;

/* upstream's PodGroupPostFilter set: DefaultPreemption (the one in-tree plugin that implements
 * it) when multiPoint has it (getExtensionPoints expands multiPoint into podGroupPostFilter too),
 * unless plugins.podGroupPostFilter disables it (by name or "*"). */
static int pod_group_post_filter_enabled(const ks_framework *fw)
{
    const ks_profile_config *p = fw->plan ? fw->plan->profile : NULL;
    if (!p)
        return 0;
    const ks_plugin_set *pg = &p->plugins[KS_PT_POD_GROUP_POST_FILTER];
    for (size_t j = 0; j < pg->ndisabled; j++)
        if (!strcmp(pg->disabled[j], "DefaultPreemption") || !strcmp(pg->disabled[j], "*"))
            return 0;
    const ks_plugin_set *mp = &p->plugins[KS_PT_MULTI];
    for (size_t j = 0; j < mp->nenabled; j++)
        if (!strcmp(mp->enabled[j].name, "DefaultPreemption"))
            return 1;
    return 0;
}

static void pg_fail(pg_preemption *out, ks_code code, const char *fmt, const char *arg)
{
    out->code = code;
    snprintf(out->msg, sizeof(out->msg), fmt, arg);
}

/* Victim v's pods back on the snapshot or off it, each announced to every assignment's PreFilter
 * state (upstream addVictimPodsWithPreFilter / removeVictimPodsWithPreFilter). */
static ks_code victim_move(ks_scheduler *s, ks_framework *fw, const ks__pg_victim *v, int add,
                           pg_assignment *a, size_t na, char *err, size_t errlen)
{
    ks_status st;
    for (size_t j = 0; j < v->npods; j++) {
        ks_pod *p = v->pods[j];
        int rc = add ? ks__snapshot_add_pod(s->snap, p) : ks__snapshot_remove_pod(s->snap, p);
        if (rc != 0) {
            snprintf(err, errlen, "cannot %s pod %s on node %s: %s", add ? "add" : "remove", p->key,
                     ks__sym_str(p->node_name), ks__strerror(rc));
            return KS_ERROR;
        }
        const ks_node_info *ni = ks__snapshot_find(s->snap, p->node_name);
        for (size_t i = 0; i < na; i++) {
            ks__status_reset(&st);
            ks_code code =
                add ? ks__fw_run_prefilter_add_pod(fw, a[i].state, a[i].pod, p, ni, &st)
                    : ks__fw_run_prefilter_remove_pod(fw, a[i].state, a[i].pod, p, ni, &st);
            if (code != KS_SUCCESS) {
                ks__status_message(&st, err, errlen);
                return KS_ERROR;
            }
        }
    }
    return KS_SUCCESS;
}

/* upstream reprieveVictim: v's pods back; the victim is spared when every member still passes
 * Filter on its node, each member added to the snapshot after it passed (and taken off again
 * after); else its pods leave again. */
static ks_code reprieve(ks_scheduler *s, ks_framework *fw, const ks__pg_victim *v, pg_assignment *a,
                        size_t na, int *fits, char *err, size_t errlen)
{
    if (victim_move(s, fw, v, 1, a, na, err, errlen) != KS_SUCCESS)
        return KS_ERROR;
    ks_status st;
    size_t added = 0;
    ks_code code = KS_SUCCESS;
    *fits = 1;
    for (size_t i = 0; i < na; i++) {
        const ks_node_info *ni = ks__snapshot_find(s->snap, a[i].node);
        ks__status_reset(&st);
        if (!ni || ks__fw_run_filter_with_nominated(fw, a[i].state, a[i].pod, ni, &st, NULL) !=
                       KS_SUCCESS) {
            *fits = 0;
            break;
        }
        int rc = ks__snapshot_add_pod(s->snap, a[i].assumed);
        if (rc != 0) {
            snprintf(err, errlen, "cannot add pod %s on node %s: %s", a[i].pod->key,
                     ks__sym_str(a[i].node), ks__strerror(rc));
            code = KS_ERROR;
            break;
        }
        added++;
    }
    for (size_t i = added; i-- > 0;)
        ks__snapshot_remove_pod(s->snap, a[i].assumed);
    if (code == KS_SUCCESS && !*fits)
        code = victim_move(s, fw, v, 0, a, na, err, errlen);
    return code;
}

/* upstream PodGroupEvaluator.selectVictimsOnDomain on a snapshot with every victim removed:
 * the group algorithm again (without PostFilter; upstream podGroupSchedulingFunc); when the group
 * then fits, the victims are reprieved one unit at a time, PDB-violating ones first, the most
 * important first, and the rest are the ones to evict. */
static void select_victims(ks_scheduler *s, ks_framework *fw, const ks__pg_cycle_group *g,
                           const sched_cycle *cs, size_t m, int scheduled, ks__pg_victim *v,
                           size_t nv, pg_preemption *out)
{
    char err[KS_STATUS_BUF];
    for (size_t i = 0; i < nv; i++)
        if (victim_move(s, fw, &v[i], 0, NULL, 0, err, sizeof(err)) != KS_SUCCESS) {
            pg_fail(out, KS_ERROR, "pod group preemption: %s", err);
            return;
        }
    sched_cycle *pcs = calloc(m, sizeof(*pcs));
    int *pok = calloc(m, sizeof(*pok));
    pg_assignment *a = calloc(m, sizeof(*a));
    uint8_t *violating = calloc(nv, 1);
    ks__pg_victim *keep = calloc(nv, sizeof(*keep));
    group_result r;
    size_t na = 0, nkeep = 0;
    if (!pcs || !pok || !a || !violating || !keep) {
        pg_fail(out, KS_ERROR, "pod group preemption: %s", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < m; i++)
        cycle_init(&pcs[i], s, fw, cs[i].qp);
    /* the nominations the cycle's assumes dropped no longer count */
    ks__nominator_release(s);
    ks__nominator_snapshot(s);
    group_algorithm(fw, g, pcs, pok, m, scheduled, &r);
    for (size_t i = 0; i < r.tried; i++)
        if (pok[i])
            a[na++] = (pg_assignment){pcs[i].pod, ks__pod_ref(pcs[i].assumed), pcs[i].host->name,
                                      pcs[i].state, i};
    group_revert(pcs, pok, r.tried);
    if (r.code != KS_SUCCESS) {
        /* upstream: the scheduling failed after removing all potential victims */
        pg_fail(out, r.code, "pod group preemption: %s", r.code == KS_ERROR ? r.emsg : r.gmsg);
        goto done;
    }
    ks__pg_victims_sort(v, nv);
    ks_pdb *pdbs = NULL;
    size_t npdbs = s->store ? ks__store_pdbs(s->store, &pdbs) : 0;
    int rc = ks__pg_victims_pdb(v, nv, pdbs, npdbs, violating);
    free(pdbs);
    if (rc != 0) {
        pg_fail(out, KS_ERROR, "pod group preemption: %s", ks__strerror(rc));
        goto done;
    }
    for (int pass = 1; pass >= 0; pass--)
        for (size_t i = 0; i < nv; i++) {
            if (violating[i] != pass)
                continue;
            int fits;
            if (reprieve(s, fw, &v[i], a, na, &fits, err, sizeof(err)) != KS_SUCCESS) {
                pg_fail(out, KS_ERROR, "pod group preemption: %s", err);
                goto done;
            }
            if (!fits)
                keep[nkeep++] = v[i];
        }
    ks__pg_victims_sort(keep, nkeep);
    size_t total = 0;
    for (size_t i = 0; i < nkeep; i++)
        total += keep[i].npods;
    out->victims = total ? malloc(total * sizeof(*out->victims)) : NULL;
    if (total && !out->victims) {
        pg_fail(out, KS_ERROR, "pod group preemption: %s", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nkeep; i++)
        for (size_t j = 0; j < keep[i].npods; j++)
            out->victims[out->nvictims++] = ks__pod_ref(keep[i].pods[j]);
    for (size_t i = 0; i < na; i++)
        out->nominated[a[i].member] = a[i].node;
    out->code = KS_SUCCESS;
    out->msg[0] = '\0';
done:
    for (size_t i = 0; i < na; i++)
        ks__pod_unref(a[i].assumed);
    if (pcs)
        for (size_t i = 0; i < m; i++)
            cycle_release(&pcs[i]);
    free(pcs);
    free(pok);
    free(a);
    free(violating);
    free(keep);
}

/* upstream Executor.PreemptPod for a pod group preemptor: a victim waiting on Permit is
 * rejected, one in PreBind cancelled, any other evicted (live: DisruptionTarget, DELETE and the
 * Preempted event; simulate: gone at once). */
static void evict_for_group(ks_scheduler *s, ks_pod *v, const ks_pod *member,
                            const ks__pg_cycle_group *g)
{
    const char *uid = g->pg && g->pg->v.uid ? g->pg->v.uid : "";
    /* upstream prepareCandidate: graceful deletion already started, no second API call */
    if (v->terminating && s->victims_leave_on_delete_event) {
        if (ks__log_enabled(2))
            ks__log('I', NULL,
                    "Victim Pod is already being deleted, skipping the API call for it "
                    "preemptor=%s/%s victim=%s",
                    ks__sym_str(g->ns), ks__sym_str(g->name), v->key);
        return;
    }
    if (ks__log_enabled(2))
        ks__log('I', NULL, "Preempting pod %s for pod group %s/%s", v->key, ks__sym_str(g->ns),
                ks__sym_str(g->name));
    if (s->victims_leave_on_delete_event &&
        (ks__binding_reject_waiting(s, v->uid, "DefaultPreemption", "preempted") ||
         ks__binding_cancel_prebind(s, v->uid, "preempted by DefaultPreemption"))) {
        if (s->source.preempted_group)
            s->source.preempted_group(s->source.ctx, v, member, uid, 1);
        return;
    }
    if (!s->victims_leave_on_delete_event)
        ks__scheduler_on_pod_delete(s, v);
    if (s->source.preempted_group)
        s->source.preempted_group(s->source.ctx, v, member, uid, 0);
    else if (s->source.evict)
        s->source.evict(s->source.ctx, v, member, v->node_name);
}

/* upstream observeVictims for a pod group preemptor: its victims, and how many of the units
 * they came in were pod groups (candidate.NumPodGroupDisruptions), when there were any. */
static void observe_group_victims(const ks_sched_metrics *m, const pg_preemption *out,
                                  const ks__pg_victim *v, size_t nv)
{
    ks__metrics_observe(KS_METRICS_SOLO(m->workload_preemption_victims), (double)out->nvictims);
    size_t groups = 0;
    for (size_t i = 0; i < nv; i++) {
        if (!v[i].is_group || v[i].npods == 0)
            continue;
        for (size_t k = 0; k < out->nvictims; k++)
            if (out->victims[k] == v[i].pods[0]) {
                groups++;
                break;
            }
    }
    if (groups)
        ks__metrics_observe(KS_METRICS_WITH(m->preemption_workload_disruptions, "podgroup"),
                            (double)groups);
}

/* upstream runWorkloadAwarePreemption and DefaultPreemption's PodGroupPostFilter
 * (PodGroupEvaluator.Preempt): the whole cluster is the domain and the pod group the preemptor.
 * The snapshot is brought up to date with the cache (the reverted algorithm left its last
 * update's assumes there), frozen for the simulation and rebuilt from the cache after it
 * (upstream BackupSnapshot and its restore). members: the cycle's members, in order. */
static void pod_group_preempt(ks_scheduler *s, ks_framework *fw, const ks__pg_cycle_group *g,
                              const sched_cycle *cs, size_t m, int scheduled, pg_preemption *out)
{
    out->code = KS_SUCCESS;
    out->msg[0] = '\0';
    if (!pod_group_post_filter_enabled(fw)) {
        /* upstream RunPodGroupPostFilterPlugins without a plugin: Unschedulable, no reason */
        pg_fail(out, KS_UNSCHEDULABLE, "%s", "");
        return;
    }
    ks_pod **members = malloc((m ? m : 1) * sizeof(*members));
    if (!members) {
        pg_fail(out, KS_ERROR, "pod group preemption: %s", "out of memory");
        return;
    }
    for (size_t i = 0; i < m; i++)
        members[i] = cs[i].pod;
    int32_t priority = ks__podgroup_priority(g->pg);
    ks__pg_victim *v = NULL;
    size_t nv = 0;
    const char *why;
    int64_t start = ks__clock_now_ns();
    int evaluated = 0; /* upstream PodGroupEvaluator.evaluate ran (it times itself) */
    int rc = ks__cache_update_snapshot(s->cache, s->snap);
    if (rc != 0)
        pg_fail(out, KS_ERROR, "pod group preemption: %s", ks__strerror(rc));
    else if ((why = ks__pg_preemptor_ineligible(members, m)))
        pg_fail(out, KS_UNSCHEDULABLE, "pod group preemption: %s", why);
    else if (ks__pg_ongoing_preemption(s, s->snap, priority, members, m)) {
        /* upstream isOngoingPreemption: the members keep their nominations and wait */
        for (size_t i = 0; i < m; i++)
            out->nominated[i] = members[i]->nominated_node_name;
        out->ongoing = 1;
        pg_fail(out, KS_SUCCESS, "pod group preemption: %s",
                "ongoing preemption on nominated nodes");
        free(members);
        return;
    } else if ((evaluated = 1, rc = ks__pg_victims_collect(s, s->snap, priority, &v, &nv)) != 0)
        pg_fail(out, KS_ERROR, "pod group preemption: %s", ks__strerror(rc));
    else if (nv == 0)
        pg_fail(out, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "pod group preemption: %s",
                "No preemption victims found for incoming preemptor");
    else {
        s->snap_frozen = 1;
        select_victims(s, fw, g, cs, m, scheduled, v, nv, out);
        s->snap_frozen = 0;
        s->snap->list_dirty = 1; /* the restore: rebuilt from the cache at the next update */
    }
    if (evaluated && s->metrics)
        ks__metrics_observe(KS_METRICS_WITH(s->metrics->preemption_evaluation_duration, "podgroup",
                                            ks__code_label(out->code)),
                            ks__seconds_since(start));
    if (out->code == KS_SUCCESS && s->metrics) /* upstream observeVictims */
        observe_group_victims(s->metrics, out, v, nv);
    ks__pg_victims_free(v, nv);
    if (out->code == KS_SUCCESS) {
        if (ks__log_enabled(2))
            ks__log('I', NULL, "Pod group %s/%s preempts %zu pods", ks__sym_str(g->ns),
                    ks__sym_str(g->name), out->nvictims);
        for (size_t i = 0; i < out->nvictims; i++)
            evict_for_group(s, out->victims[i], members[0], g);
        snprintf(out->msg, sizeof(out->msg),
                 "pod group preemption: found a placement for podgroup, preempting %zu victims",
                 out->nvictims);
    }
    free(members);
}

/* upstream scheduleOnePodGroup for a PodGroup without CompositePodGroups or placements
 * (podGroupCycle: podGroupSchedulingDefaultAlgorithm, workload-aware preemption when the group is
 * unschedulable, then submitPodGroupAlgorithmResult): the gang's pending members are taken from
 * the queue together; each is tried in turn and stays assumed and reserved while GangScheduling's
 * PlacementFeasible allows; the group is placed when minCount members are (then each goes through
 * Permit to its binding cycle), else every member is unreserved and forgotten and the group's
 * preemption runs (DefaultPreemption's PodGroupPostFilter). Found victims are evicted and the
 * members go back nominated, waiting on the preemption; else they are rejected, those that fit
 * with "pod group is unschedulable, " and PlacementFeasible's message (and the preemption's,
 * after ", "), the others with their own. The PodGroup's PodGroupInitiallyScheduled condition
 * tells which. */
/* upstream podGroupCycle's metrics: the attempt by its result (scheduled, unschedulable,
 * waiting_on_preemption, error) and its duration since the cycle began. */
static void pod_group_attempt_metrics(ks_scheduler *s, ks_framework *fw, ks_code code, int waiting,
                                      int64_t start)
{
    if (!s->metrics)
        return;
    const char *result = code == KS_SUCCESS ? KS_METRICS_RESULT_SCHEDULED
                         : code == KS_ERROR ? KS_METRICS_RESULT_ERROR
                         : waiting          ? "waiting_on_preemption"
                                            : KS_METRICS_RESULT_UNSCHEDULABLE;
    ks__metrics_inc(
        KS_METRICS_WITH(s->metrics->podgroup_schedule_attempts, result, fw->profile_name));
    ks__metrics_observe(
        KS_METRICS_WITH(s->metrics->podgroup_scheduling_attempt_duration, result, fw->profile_name),
        ks__seconds_since(start));
}

static void pod_group_cycle(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp,
                            const ks__pg_cycle_group *g)
{
    int64_t start = ks__clock_now_ns();
    ks_queued_pod **sib = NULL;
    int scheduled = 0;
    size_t nsib = ks__podgroup_take_siblings(s, g, qp, &sib, &scheduled);
    size_t n = 1 + nsib, m = 0;
    ks_queued_pod **qps = malloc(n * sizeof(*qps));
    sched_cycle *cs = calloc(n, sizeof(*cs));
    int *ok = calloc(n, sizeof(*ok));
    pg_preemption pre = {.code = KS_UNSCHEDULABLE, .nominated = calloc(n, sizeof(ks_sym))};
    if (!qps || !cs || !ok || !pre.nominated) {
        for (size_t i = 0; i < nsib; i++)
            ks__queue_requeue_failed(s->queue, sib[i], KS_ENOMEM);
        free(sib);
        free(qps);
        free(cs);
        free(ok);
        free(pre.nominated);
        scheduling_cycle(s, fw, qp);
        return;
    }
    qps[0] = qp;
    for (size_t i = 0; i < nsib; i++) {
        qps[1 + i] = sib[i];
        ks__sched_metrics_attempt_begin(s, fw, sib[i]);
    }
    free(sib);
    sort_members(s, qps, n);
    for (size_t i = 0; i < n; i++) { /* upstream skipPodGroupPodSchedule */
        cycle_init(&cs[m], s, fw, qps[i]);
        if (skip_pod_schedule(&cs[m]))
            ks__queue_done(s->queue, qps[i]);
        else
            m++;
    }
    int scheduled0 = scheduled;
    group_result r;
    group_algorithm(fw, g, cs, ok, m, scheduled, &r);
    if (s->metrics)
        ks__metrics_observe(KS_METRICS_SOLO(s->metrics->podgroup_scheduling_algorithm_duration),
                            ks__seconds_since(start));
    int waiting = 0; /* upstream waitingOnPreemption */
    if (r.code == KS_SUCCESS) {
        for (size_t i = 0; i < m; i++) {
            if (ok[i] && permit_only(&cs[i]) == KS_SUCCESS)
                submit_binding(&cs[i], NULL);
            else
                member_failed(&cs[i], 0, NULL, 0);
        }
        if (m)
            ks__podgroup_set_condition(s, g, 1, "Scheduled", "");
    } else {
        /* the members' rejectors are the group's: an event that may help one of them brings
         * the gang back (GangScheduling's own events too) */
        uint64_t rejectors = ks__plugin_bit(fw, "GangScheduling");
        for (size_t i = 0; i < r.tried; i++) {
            rejectors |= ok[i] ? 0 : cs[i].rejectors;
        }
        group_revert(cs, ok, r.tried);
        for (size_t i = 0; i < m; i++)
            pre.nominated[i] = KS_SYM_ABSENT;
        /* the members never tried carry the group's status as it was before PodGroupPostFilter
         * (upstream completePodGroupAlgorithmResult clones it first) */
        char untried[KS_STATUS_BUF];
        snprintf(untried, sizeof(untried), "%s", r.gmsg);
        /* upstream podGroupCycle: workload-aware preemption when the group is unschedulable,
         * then applyPodGroupPostFilterResult */
        if (r.code == KS_UNSCHEDULABLE) {
            pod_group_preempt(s, fw, g, cs, m, scheduled0, &pre);
            if (s->metrics && pod_group_post_filter_enabled(fw)) /* DefaultPreemption counts */
                ks__metrics_inc(KS_METRICS_WITH(s->metrics->workload_preemption_attempts,
                                                ks__code_label(pre.code)));
            if (pre.code == KS_SUCCESS)
                waiting = 1;
            if (pre.code == KS_ERROR) {
                r.code = KS_ERROR;
                snprintf(r.emsg, sizeof(r.emsg), "%s", pre.msg);
            } else { /* result.status.AppendReason(status.String()), on success too */
                size_t len = strlen(r.gmsg);
                snprintf(r.gmsg + len, sizeof(r.gmsg) - len, "%s%s", len ? ", " : "", pre.msg);
            }
        }
        /* upstream submitPodGroupAlgorithmResult: a member that fit goes back with the group's
         * status (waiting on preemption), or "pod group is unschedulable, " and its message */
        char pmsg[KS_STATUS_BUF + 32];
        snprintf(pmsg, sizeof(pmsg), "%s%s", waiting ? "" : "pod group is unschedulable, ", r.gmsg);
        int reported = 0;
        for (size_t i = 0; i < m; i++) {
            /* waiting: every member the preemption placed is nominated there */
            if (waiting && pre.nominated[i] != KS_SYM_ABSENT && pre.nominated[i] != KS_SYM_EMPTY) {
                cs[i].group_nominated = pre.nominated[i];
                if (!pre.ongoing && !reported++) {
                    cs[i].group_reporter = 1;
                    cs[i].group_victims = pre.victims;
                    cs[i].ngroup_victims = pre.nvictims;
                }
            }
            if (r.code == KS_ERROR)
                member_failed(&cs[i], cs[i].code == KS_ERROR ? 0 : KS_ERROR, r.emsg, 0);
            else if (i < r.tried && !ok[i])
                member_failed(&cs[i], 0, NULL, 0);
            else
                member_failed(&cs[i], KS_UNSCHEDULABLE, i < r.tried ? pmsg : untried, rejectors);
        }
        if (ks__log_enabled(2))
            ks__log('I', NULL, "%s podGroup=%s/%s err=%s",
                    waiting ? "Pod group is waiting for preemption"
                            : "Unable to schedule a pod group",
                    ks__sym_str(g->ns), ks__sym_str(g->name), r.code == KS_ERROR ? r.emsg : r.gmsg);
        ks__podgroup_set_condition(s, g, 0, r.code == KS_ERROR ? "SchedulerError" : "Unschedulable",
                                   r.code == KS_ERROR ? r.emsg : r.gmsg);
    }
    pod_group_attempt_metrics(s, fw, r.code, waiting, start);
    /* upstream AddAttemptedPodGroupIfNeeded: the members back from the cycle (and those that
     * came meanwhile) are requeued together, as the one entity upstream's queue holds */
    ks__queue_requeue_group(s->queue, g->ns, g->name, r.code == KS_SUCCESS);
    for (size_t i = 0; i < m; i++) {
        cycle_release(&cs[i]);
        ks__pod_unref(cs[i].replaced);
    }
    for (size_t i = 0; i < pre.nvictims; i++)
        ks__pod_unref(pre.victims[i]);
    free(pre.victims);
    free(pre.nominated);
    free(qps);
    free(cs);
    free(ok);
}

uint64_t ks__scheduler_podgroup_cycles(const ks_scheduler *s) { return s->podgroup_cycles; }

int ks__scheduler_schedule_one(ks_scheduler *s, int block)
{
    ks_queued_pod *qp = ks__queue_pop(s->queue, block);
    if (!qp) /* empty, closed, or woken for a reload: swapped in here, between two cycles */
        return ks__scheduler_apply_pending(s);
    ks_framework *fw = s->fw[qp->profile];
    ks__sched_metrics_attempt_begin(s, fw, qp);
    ks__nominator_snapshot(s);
    ks__binding_hold(s, 1);
    ks__pg_cycle_group g;
    if (ks__podgroup_cycle_wanted(s, fw, qp->pod, &g)) {
        s->podgroup_cycles++;
        pod_group_cycle(s, fw, qp, &g);
        ks__podgroup_unref(g.pg);
    } else
        scheduling_cycle(s, fw, qp);
    /* upstream AddAttemptedPodGroupIfNeeded / AddUnschedulablePodIfNotPresent: the cycle's
     * entity is no longer the last popped one (its members stop counting as pending) */
    ks__queue_cycle_end(s->queue);
    ks__binding_hold(s, 0);
    ks__sched_metrics_cycle_end(s, fw); /* qp may be gone; fw is not */
    ks__nominator_release(s);
    ks__pod_unref(s->deferred_unref);
    s->deferred_unref = NULL;
    return 1;
}
