/* DefaultPreemption: the pure helpers of plugins/defaultpreemption/select.c on hand-made data
 * (upstream default_preemption_test.go TestCalculateNumCandidates and TestSelectBestCandidate's
 * orderings, preemption_test.go pickOneNodeForPreemption, filterPodsWithPDBViolation, util
 * MoreImportantPod / GetEarliestPodStartTime, types.go FitError.Error), plus create() and the
 * descriptor. The dry run itself needs a scheduling cycle: tests/sim/test_preemption.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../defaultpreemption_int.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_default_preemption;

TestSuite(default_preemption, .init = th_init, .fini = th_fini);

static dp_pod P(int32_t prio, int64_t start)
{
    return (dp_pod){NULL, KS_SYM_EMPTY, KS_SYM_EMPTY, prio, start, NULL, 0};
}

/* ---- calculateNumCandidates ---------------------------------------------------------------- */

Test(default_preemption, num_candidates_is_max_of_percentage_and_absolute_capped_at_nodes)
{
    struct {
        int32_t nodes, pct, abs, want;
    } cases[] = {
        {10, 10, 100, 10}, /* the defaults on a small cluster: every node */
        {100, 40, 10, 40}, /* percentage wins */
        {100, 5, 10, 10},  /* absolute wins */
        {1000, 10, 100, 100}, {5000, 10, 100, 500}, {1, 5, 10, 1}, /* never more than the nodes */
        {0, 10, 100, 0},      {5, 10, 0, 0}, /* 5*10/100 truncates to 0 and nothing raises it */
        {1000, 100, 0, 1000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert_eq(dp_num_candidates(cases[i].nodes, cases[i].pct, cases[i].abs), cases[i].want,
                     "case %zu", i);
}

/* ---- MoreImportantPod and sorting ---------------------------------------------------------- */

Test(default_preemption, more_important_is_higher_priority_then_earlier_start)
{
    dp_pod hi = P(10, 500), lo = P(5, 100), early = P(10, 100), unset = P(10, DP_START_NOW);
    cr_assert(dp_more_important(&hi, &lo));
    cr_assert_not(dp_more_important(&lo, &hi));
    cr_assert(dp_more_important(&early, &hi));
    cr_assert_not(dp_more_important(&hi, &early));
    /* No start time reads as "now": later than any real start. */
    cr_assert(dp_more_important(&hi, &unset));
    cr_assert_not(dp_more_important(&hi, &hi));
}

Test(default_preemption, sort_by_importance_is_stable_and_descending)
{
    dp_pod pods[] = {P(1, 300), P(5, 200), P(1, 100), P(5, 200), P(-3, 0), P(5, 50)};
    pods[1].name = 11; /* the two equal pods keep their order */
    pods[3].name = 33;
    dp_sort_by_importance(pods, 6);
    int32_t prio[] = {5, 5, 5, 1, 1, -3};
    int64_t start[] = {50, 200, 200, 100, 300, 0};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(pods[i].priority, prio[i], "pos %d", i);
        cr_assert_eq(pods[i].start_ns, start[i], "pos %d", i);
    }
    cr_assert_eq(pods[1].name, 11);
    cr_assert_eq(pods[2].name, 33);
}

/* ---- filterPodsWithPDBViolation ------------------------------------------------------------ */

static ks_label app_a[] = {{1, 2}}; /* app=a (ids stand in for interned symbols) */
static ks_label app_b[] = {{1, 3}}; /* app=b */

static dp_pod labeled(ks_sym ns, ks_sym name, ks_label *labels)
{
    dp_pod p = P(0, 0);
    p.ns = ns;
    p.name = name;
    p.labels = labels;
    p.nlabels = labels ? 1 : 0;
    return p;
}

static ks_pdb_info pdb(ks_sym ns, const ks_label *match, int32_t allowed)
{
    ks_pdb_info b;
    memset(&b, 0, sizeof(b));
    b.ns = ns;
    b.selector.present = 1;
    b.selector.nmatch_labels = match ? 1 : 0;
    b.selector.match_labels = match;
    b.disruptions_allowed = allowed;
    return b;
}

Test(default_preemption, pdb_violation_counts_earlier_victims_against_the_budget)
{
    dp_pod pods[] = {labeled(7, 100, app_a), labeled(7, 101, app_a), labeled(7, 102, app_b),
                     labeled(7, 103, NULL), labeled(8, 104, app_a)};
    ks_pdb_info pdbs[] = {pdb(7, app_a, 1)};
    int32_t allowed[1];
    uint8_t v[5];
    dp_pdb_violations(pods, 5, pdbs, 1, allowed, v);
    /* The first app=a pod uses the one allowed disruption; the second violates. Other labels,
     * no labels, another namespace: no match. */
    uint8_t want[] = {0, 1, 0, 0, 0};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(v[i], want[i], "pod %d", i);
}

Test(default_preemption, pdb_disrupted_pods_do_not_count_again)
{
    ks_sym disrupted[] = {100};
    ks_pdb_info b = pdb(7, app_a, 0);
    b.ndisrupted = 1;
    b.disrupted = disrupted;
    dp_pod pods[] = {labeled(7, 100, app_a), labeled(7, 101, app_a)};
    int32_t allowed[1];
    uint8_t v[2];
    dp_pdb_violations(pods, 2, &b, 1, allowed, v);
    cr_assert_eq(v[0], 0, "already in disruptedPods");
    cr_assert_eq(v[1], 1);
}

Test(default_preemption, pdb_with_empty_or_nil_selector_matches_nothing)
{
    ks_pdb_info pdbs[] = {pdb(7, NULL, 0), pdb(7, app_a, 5)};
    pdbs[1].selector.present = 0; /* nil selector */
    dp_pod pods[] = {labeled(7, 100, app_a)};
    int32_t allowed[2];
    uint8_t v[1];
    dp_pdb_violations(pods, 1, pdbs, 2, allowed, v);
    cr_assert_eq(v[0], 0);
}

Test(default_preemption, pdb_any_matching_budget_below_zero_violates)
{
    ks_pdb_info pdbs[] = {pdb(7, app_a, 3), pdb(7, app_a, 0)};
    dp_pod pods[] = {labeled(7, 100, app_a)};
    int32_t allowed[2];
    uint8_t v[1];
    dp_pdb_violations(pods, 1, pdbs, 2, allowed, v);
    cr_assert_eq(v[0], 1);
    cr_assert_eq(allowed[0], 2, "every matching budget up to the broken one is decremented");
    cr_assert_eq(allowed[1], -1);
}

/* v1.37.2's podIsViolating returns at the first budget the pod breaks: the budgets after it are
 * not charged for that pod, so a later pod they select may still go without violating one. */
Test(default_preemption, pdb_a_pod_stops_at_the_first_budget_it_breaks)
{
    static ks_label tier_x[] = {{5, 6}};               /* tier=x */
    static ks_label app_a_tier_x[] = {{1, 2}, {5, 6}}; /* app=a, tier=x */
    ks_pdb_info pdbs[] = {pdb(7, app_a, 0), pdb(7, tier_x, 1)};
    dp_pod pods[] = {labeled(7, 100, app_a), labeled(7, 101, tier_x)};
    pods[0].labels = app_a_tier_x, pods[0].nlabels = 2;
    int32_t allowed[2];
    uint8_t v[2];
    dp_pdb_violations(pods, 2, pdbs, 2, allowed, v);
    cr_assert_eq(v[0], 1, "the first pod breaks the app=a budget");
    cr_assert_eq(v[1], 0, "the second budget was not charged for the first pod");
    cr_assert_eq(allowed[1], 0);
}

/* ---- preemption units (GenericWorkload): MoreImportantVictim ------------------------------- */

/* A unit of n pods (upstream's victim{priority, pods, keyType}); the pods' own fields are unused
 * by the ordering. */
static dp_victim V(int32_t prio, int is_group, size_t npods, int64_t earliest)
{
    return (dp_victim){NULL, NULL, npods, prio, is_group, earliest, 0};
}

/* upstream preemption/util_test.go TestMoreImportantVictim (CompositePodGroup cases left out:
 * kubesched has no CompositePodGroup) */
Test(default_preemption, more_important_victim_upstream_cases)
{
    const int64_t now = 1000, before = 500;
    struct {
        const char *name;
        dp_victim a, b;
        int want;
    } cases[] = {
        {"vi1 has higher priority", V(20, 0, 1, now), V(10, 0, 1, now), 1},
        {"vi2 has higher priority", V(10, 0, 1, now), V(20, 0, 1, now), 0},
        {"vi1 is PG, vi2 is Pod, same priority", V(10, 1, 1, now), V(10, 0, 1, now), 1},
        {"vi1 is Pod, vi2 is PG, same priority", V(10, 0, 1, now), V(10, 1, 1, now), 0},
        {"both Pods, vi1 older", V(10, 0, 1, before), V(10, 0, 1, now), 1},
        {"both Pods, vi2 older", V(10, 0, 1, now), V(10, 0, 1, before), 0},
        {"both PGs, vi1 larger", V(10, 1, 2, now), V(10, 1, 1, before), 1},
        {"both PGs, vi2 larger", V(10, 1, 1, before), V(10, 1, 2, now), 0},
        {"both PGs, same size, vi1 older", V(10, 1, 2, before), V(10, 1, 2, now), 1},
        {"both PGs, same size, vi2 older", V(10, 1, 2, now), V(10, 1, 2, before), 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(dp_more_important_victim(&cases[i].a, &cases[i].b), cases[i].want, "%s",
                     cases[i].name);
}

Test(default_preemption, sort_victims_is_stable_and_descending)
{
    dp_victim v[] = {V(5, 0, 1, 100), V(5, 1, 1, 300), V(5, 1, 3, 900), V(9, 0, 1, 50),
                     V(5, 0, 1, 100)};
    v[0].violate_count = 11; /* marks the first of two equal units */
    dp_sort_victims(v, 5);
    cr_assert_eq(v[0].priority, 9);
    cr_assert_eq(v[1].npods, 3, "the larger group");
    cr_assert(v[2].is_group && v[2].npods == 1);
    cr_assert_eq(v[3].violate_count, 11, "equal units keep their order");
    cr_assert(!v[4].is_group);
}

/* ---- FilterVictimsWithPDBViolation over units ---------------------------------------------- */

static ks_label app_a_tier[] = {{1, 2}, {4, 5}}; /* app=a, tier=backend */
static ks_label tier_backend[] = {{4, 5}};

/* upstream preemption/util_test.go TestFilterVictimsWithPDBViolation */
Test(default_preemption, filter_victims_with_pdb_violation_upstream_cases)
{
    dp_pod p1 = labeled(7, 100, app_a), p2 = labeled(7, 101, app_a), p3 = labeled(7, 102, app_a);
    dp_pod none = labeled(7, 103, app_b), multi = labeled(7, 104, app_a_tier);
    multi.nlabels = 2;
    dp_pod group[] = {p2, p3};
    ks_sym disrupted[] = {100};
    int32_t allowed[2];
    struct {
        const char *name;
        dp_pod *pods[2];
        size_t npods[2];
        size_t nv;
        ks_pdb_info pdbs[2];
        size_t npdbs;
        int32_t want[2];
    } cases[] = {
        {"victim with no matching PDBs", {&none}, {1}, 1, {pdb(7, app_a, 0)}, 1, {0}},
        {"victim matching PDB, adequate DisruptionsAllowed",
         {&p1},
         {1},
         1,
         {pdb(7, app_a, 1)},
         1,
         {0}},
        {"victim matching PDB, no DisruptionsAllowed", {&p1}, {1}, 1, {pdb(7, app_a, 0)}, 1, {1}},
        {"podgroup victim with multiple pods, all violating",
         {group},
         {2},
         1,
         {pdb(7, app_a, 0)},
         1,
         {2}},
        {"podgroup victim with multiple pods, none violating",
         {group},
         {2},
         1,
         {pdb(7, app_a, 2)},
         1,
         {0}},
        {"multiple victims matching the same PDB",
         {&p1, &p2},
         {1, 1},
         2,
         {pdb(7, app_a, 1)},
         1,
         {0, 1}},
        {"pod in DisruptedPods is ignored", {&p1}, {1}, 1, {pdb(7, app_a, 0)}, 1, {0}},
        {"PDB with empty selector", {&p1}, {1}, 1, {pdb(7, NULL, 0)}, 1, {0}},
        {"Multiple PDBs", {&multi}, {1}, 1, {pdb(7, app_a, 1), pdb(7, tier_backend, 0)}, 2, {1}},
    };
    cases[6].pdbs[0].ndisrupted = 1;
    cases[6].pdbs[0].disrupted = disrupted;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dp_victim v[2];
        for (size_t k = 0; k < cases[i].nv; k++) {
            v[k] = V(0, cases[i].npods[k] > 1, cases[i].npods[k], 0);
            v[k].pods = cases[i].pods[k];
        }
        dp_victims_pdb(v, cases[i].nv, cases[i].pdbs, cases[i].npdbs, allowed);
        for (size_t k = 0; k < cases[i].nv; k++)
            cr_expect_eq(v[k].violate_count, cases[i].want[k], "%s: victim %zu", cases[i].name, k);
    }
}

Test(default_preemption, filter_victims_pod_stops_at_the_first_budget_it_breaks)
{
    /* v1.37.2 podIsViolating returns at the first budget below zero: the later ones are not
     * charged for that pod, so the next pod still finds room in them */
    dp_pod a = labeled(7, 100, app_a_tier), b = labeled(7, 101, tier_backend);
    a.nlabels = 2;
    ks_pdb_info pdbs[] = {pdb(7, app_a, 0), pdb(7, tier_backend, 1)};
    int32_t allowed[2];
    dp_victim v[] = {V(0, 0, 1, 0), V(0, 0, 1, 0)};
    v[0].pods = &a;
    v[1].pods = &b;
    dp_victims_pdb(v, 2, pdbs, 2, allowed);
    cr_assert_eq(v[0].violate_count, 1);
    cr_assert_eq(v[1].violate_count, 0);
    cr_assert_eq(allowed[1], 0);
}

/* ---- pickOneNodeForPreemption -------------------------------------------------------------- */

static dp_candidate cand(ks_sym node, dp_pod *victims, size_t n, int64_t pdb_violations)
{
    return (dp_candidate){node, victims, n, pdb_violations};
}

static size_t pick(dp_candidate *c, size_t n)
{
    size_t scratch[16];
    return dp_pick_one(c, n, scratch);
}

Test(default_preemption, pick_prefers_fewest_pdb_violations)
{
    dp_pod a[] = {P(1, 0)}, b[] = {P(100, 0), P(100, 0)};
    dp_candidate c[] = {cand(1, a, 1, 1), cand(2, b, 2, 0)};
    cr_assert_eq(pick(c, 2), 1);
}

Test(default_preemption, pick_prefers_lowest_highest_victim_priority)
{
    /* upstream "node with min highest priority pod is picked" */
    dp_pod a[] = {P(30, 0), P(1, 0)}, b[] = {P(20, 0), P(20, 0), P(20, 0)}, d[] = {P(25, 0)};
    dp_candidate c[] = {cand(1, a, 2, 0), cand(2, b, 3, 0), cand(3, d, 1, 0)};
    cr_assert_eq(pick(c, 3), 1);
}

Test(default_preemption, pick_breaks_priority_ties_by_sum_with_negative_priorities_shifted)
{
    /* "when highest priorities are the same, minimum sum of lower priority pods is used" */
    dp_pod a[] = {P(10, 0), P(5, 0)}, b[] = {P(10, 0), P(1, 0)};
    dp_candidate c[] = {cand(1, a, 2, 0), cand(2, b, 2, 0)};
    cr_assert_eq(pick(c, 2), 1);
    /* Without the MaxInt32+1 shift, three pods of -100 would sum lower than one of -100. */
    dp_pod x[] = {P(-100, 0), P(-100, 0), P(-100, 0)}, y[] = {P(-100, 0)};
    dp_candidate d[] = {cand(1, x, 3, 0), cand(2, y, 1, 0)};
    cr_assert_eq(pick(d, 2), 1);
}

Test(default_preemption, pick_then_fewest_victims)
{
    /* The shifted sums tie only when the extra victim has priority MinInt32 (it adds 0): then
     * the node with fewer victims wins. */
    dp_pod a[] = {P(7, 0), P(INT32_MIN, 0)}, b[] = {P(7, 0)};
    dp_candidate c[] = {cand(1, a, 2, 0), cand(2, b, 1, 0)};
    cr_assert_eq(pick(c, 2), 1);
}

Test(default_preemption, pick_then_latest_start_of_highest_priority_victims)
{
    /* "same priority, same number of victims, different start time for each node's pod" */
    dp_pod a[] = {P(10, 100), P(10, 300)}, b[] = {P(10, 200), P(10, 400)},
           d[] = {P(10, 150), P(10, 500)};
    dp_candidate c[] = {cand(1, a, 2, 0), cand(2, b, 2, 0), cand(3, d, 2, 0)};
    cr_assert_eq(pick(c, 3), 1, "earliest start per node: 100, 200, 150");
    /* An unset start time is "now", the latest. */
    dp_pod e[] = {P(10, DP_START_NOW)};
    dp_pod f[] = {P(10, 1000)};
    dp_candidate g[] = {cand(1, f, 1, 0), cand(2, e, 1, 0)};
    cr_assert_eq(pick(g, 2), 1);
}

Test(default_preemption, pick_takes_the_first_when_all_tie_and_zero_victims_win)
{
    dp_pod a[] = {P(3, 7)}, b[] = {P(3, 7)};
    dp_candidate c[] = {cand(1, a, 1, 0), cand(2, b, 1, 0)};
    cr_assert_eq(pick(c, 2), 0);
    dp_candidate d[] = {cand(1, a, 1, 0), cand(2, NULL, 0, 0)};
    cr_assert_eq(pick(d, 2), 1);
    cr_assert_eq(pick(c, 1), 0);
}

Test(default_preemption, earliest_start_considers_only_the_highest_priority_victims)
{
    /* util.GetEarliestPodStartTime: the list is not necessarily sorted. */
    dp_pod v[] = {P(5, 50), P(9, 300), P(9, 200), P(1, 10)};
    dp_candidate c = cand(1, v, 4, 0);
    cr_assert_eq(dp_earliest_start_of_highest(&c), 200);
}

/* ---- FitError.Error ------------------------------------------------------------------------ */

Test(default_preemption, fit_error_sorts_count_and_reason_as_strings)
{
    dp_reason r[] = {{"Preemption is not helpful for scheduling", 2},
                     {"No preemption victims found for incoming pod", 1}};
    char out[256];
    size_t n = dp_fit_error(out, sizeof(out), 3, r, 2);
    cr_assert_str_eq(out, "0/3 nodes are available: 1 No preemption victims found for incoming "
                          "pod, 2 Preemption is not helpful for scheduling.");
    cr_assert_eq(n, strlen(out));
    /* Go's sort.Strings compares the text: "10 ..." sorts before "9 ...". */
    dp_reason s[] = {{"B", 9}, {"A", 10}, {"A", 9}};
    dp_fit_error(out, sizeof(out), 28, s, 3);
    cr_assert_str_eq(out, "0/28 nodes are available: 10 A, 9 A, 9 B.");
}

Test(default_preemption, fit_error_reports_its_length_and_truncates_safely)
{
    dp_reason r[] = {{"Preemption is not helpful for scheduling", 4}};
    size_t need = dp_fit_error(NULL, 0, 4, r, 1);
    char small[16];
    cr_assert_eq(dp_fit_error(small, sizeof(small), 4, r, 1), need);
    cr_assert_eq(strlen(small), sizeof(small) - 1);
    cr_assert_eq(need,
                 strlen("0/4 nodes are available: 4 Preemption is not helpful for scheduling."));
}

/* ---- the descriptor and create() ----------------------------------------------------------- */

Test(default_preemption, descriptor_is_post_filter_only)
{
    const ks_plugin_desc *d = &ks_plugin_default_preemption;
    cr_assert_str_eq(d->name, "DefaultPreemption");
    cr_assert_not_null(d->post_filter);
    cr_assert_null(d->filter);
    cr_assert_null(d->pre_filter);
    cr_assert_null(d->pre_enqueue);
    cr_assert_null(d->score);
    /* v1.37 (SchedulerAsyncPreemption on): AssignedPod/Delete, whose hint always skips */
    cr_assert_null(d->events_to_register);
    ks_cluster_event_hint ev[4];
    cr_assert_eq(d->events_with_hints(NULL, ev, 4), 1);
    cr_assert_eq(ev[0].event.resource, KS_RES_ASSIGNED_POD);
    cr_assert_eq(ev[0].event.actions, KS_ACT_DELETE);
    ks_event_info info = {.event = ev[0].event};
    cr_assert_eq(ev[0].hint(NULL, NULL, &info), KS_QUEUE_SKIP);
}

Test(default_preemption, create_accepts_default_and_explicit_args)
{
    cr_assert_not_null(th_plugin_new(&ks_plugin_default_preemption, NULL));
    cr_assert_not_null(
        th_plugin_new(&ks_plugin_default_preemption,
                      "{'minCandidateNodesPercentage':0,'minCandidateNodesAbsolute':1}"));
}

Test(default_preemption, create_refuses_out_of_range_args)
{
    char err[256];
    cr_assert_null(th_plugin_try_new(
        &ks_plugin_default_preemption,
        "{'minCandidateNodesPercentage':0,'minCandidateNodesAbsolute':0}", err, sizeof(err)));
    cr_assert(strstr(err, "minCandidateNodesPercentage"), "%s", err);
    cr_assert_null(th_plugin_try_new(&ks_plugin_default_preemption,
                                     "{'minCandidateNodesPercentage':101}", err, sizeof(err)));
}
