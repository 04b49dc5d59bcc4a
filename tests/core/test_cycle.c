/*
 * The scheduling cycle's choices (core/sched/schedule_one.c), driven through a scheduler with
 * test plugins in a bare profile: a Filter that records the nodes it is called on and rejects the
 * nodes it is told to, and a Score that gives every node the same score. What is checked is
 * upstream v1.37's schedule_one.go: the rotating start of node sampling (nextStartNodeIndex), host
 * selection by Go's container/heap order (NewSortedScoredNodes(...).Pop(), no random tie-break),
 * the nominated node evaluated first (evaluateNominatedNode), and a profile without Score plugins
 * or with every Score plugin skipped (hasScoring: one feasible node is enough; all totals 0).
 *
 * The scheduler runs with --explain's observer, which tells each cycle's evaluated nodes in
 * evaluation order, its feasible nodes and its choice.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/batch.h"
#include "sched/scheduler.h"
#include "util/metrics.h"

#define MAX_NODES 1000
#define MAX_CYCLES 16

/* What one cycle did, as the observer saw it (node names as symbols). */
typedef struct seen_cycle {
    ks_sym host; /* KS_SYM_ABSENT: not scheduled */
    size_t nevaluated, nfeasible;
    ks_sym evaluated[MAX_NODES];
    ks_sym feasible[MAX_NODES];
} seen_cycle;

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    seen_cycle cycles[MAX_CYCLES];
    size_t ncycles;
    /* The Recorder filter: the nodes it was called on (any worker), and the one it rejects. */
    pthread_mutex_t mu;
    ks_sym filtered[4 * MAX_NODES];
    size_t nfiltered;
    ks_sym reject;
    /* Flat's scores by node number (NULL: 10 everywhere) and how often Score ran. */
    const int64_t *table;
    size_t ntable;
    size_t nscored;
    /* Metrics, for the tests that look at them (NULL otherwise). */
    ks_metrics *r;
    ks_sched_metrics m;
} t;

static ks_code recorder_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                               ks_status *st)
{
    (void)self, (void)c, (void)p;
    pthread_mutex_lock(&t.mu);
    if (t.nfiltered < sizeof(t.filtered) / sizeof(t.filtered[0]))
        t.filtered[t.nfiltered++] = ni->name;
    pthread_mutex_unlock(&t.mu);
    if (ni->name == t.reject) {
        ks_status_reason(st, "rejected by the test");
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

/* Flat: every node 10, unless t.table is set: node "n<i>" scores t.table[i]. Counts its calls. */
static ks_code flat_score(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                          int64_t *score, ks_status *st)
{
    (void)self, (void)c, (void)p, (void)st;
    __atomic_add_fetch(&t.nscored, 1, __ATOMIC_RELAXED);
    *score = 10;
    if (t.table) {
        int i = atoi(ks__sym_str(ni->name) + 1);
        cr_assert_lt((size_t)i, t.ntable);
        *score = t.table[i];
    }
    return KS_SUCCESS;
}

/* SkipAll: a PreScore that skips its Score (upstream: the plugin goes to SkipScorePlugins). */
static ks_code skip_pre_score(void *self, ks_cycle *c, const ks_pod *p,
                              const ks_node_info *const *nodes, size_t n, ks_status *st)
{
    (void)self, (void)c, (void)p, (void)nodes, (void)n, (void)st;
    return KS_SKIP;
}

/* Denier: Permit says Unschedulable. */
static ks_code denier_permit(void *self, ks_cycle *c, const ks_pod *p, ks_sym node,
                             int64_t *timeout_ms, ks_status *st)
{
    (void)self, (void)c, (void)p, (void)node, (void)timeout_ms;
    ks_status_reason(st, "denied by the test");
    return KS_UNSCHEDULABLE;
}

static const ks_plugin_desc denier_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Denier", .permit = denier_permit};
static const ks_plugin_desc recorder_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Recorder", .filter = recorder_filter};
static const ks_plugin_desc flat_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Flat", .score = flat_score};
static const ks_plugin_desc skip_all_desc = {.size = sizeof(ks_plugin_desc),
                                             .name = "SkipAll",
                                             .pre_score = skip_pre_score,
                                             .score = flat_score};

static void on_cycle(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                     const char *result, ks_sym node, const char *message, const ks_explain *ex)
{
    (void)ctx, (void)seq, (void)pod, (void)profile, (void)message;
    cr_assert_lt(t.ncycles, MAX_CYCLES);
    seen_cycle *c = &t.cycles[t.ncycles++];
    c->host = result ? KS_SYM_ABSENT : node;
    cr_assert_not_null(ex, "the scheduler runs with explain");
    c->nevaluated = ex->nevaluated;
    c->nfeasible = ex->nfeasible;
    for (size_t i = 0; i < ex->nevaluated; i++)
        c->evaluated[i] = ex->evaluated[i]->name;
    for (size_t i = 0; i < ex->nfeasible; i++)
        c->feasible[i] = ex->feasible[i]->name;
}

static ks_code bind_ok(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)pod, (void)node, (void)st;
    return KS_SUCCESS;
}

static void setup(void)
{
    th_init();
    memset(&t, 0, sizeof(t));
    pthread_mutex_init(&t.mu, NULL);
    t.reject = KS_SYM_ABSENT;
}

static void stop(void)
{
    ks__scheduler_free(t.s);
    t.s = NULL;
    if (t.cfg)
        ks__config_plans_free(t.plans, t.cfg->nprofiles);
    ks__config_free(t.cfg);
    ks__registry_free(t.reg);
    ks__metrics_destroy(t.r);
    t.cfg = NULL;
    t.reg = NULL;
    t.r = NULL;
}

static void teardown(void)
{
    stop();
    th_fini();
}

TestSuite(cycle, .init = setup, .fini = teardown, .timeout = 120);

/* A bare profile: PrioritySort, the Recorder filter, DefaultBinder, and the Flat score unless
 * no_score; percentageOfNodesToScore as given (0: upstream's adaptive default). */
#define PROFILE_YAML(pct, score)                                                                   \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"                                                           \
    "profiles:\n"                                                                                  \
    "- schedulerName: default-scheduler\n"                                                         \
    "  percentageOfNodesToScore: " #pct "\n"                                                       \
    "  plugins:\n"                                                                                 \
    "    multiPoint: {disabled: [{name: '*'}]}\n"                                                  \
    "    queueSort: {enabled: [{name: PrioritySort}]}\n"                                           \
    "    filter: {enabled: [{name: Recorder}]}\n"                                                  \
    "    bind: {enabled: [{name: DefaultBinder}]}\n" score

#define WITH_SCORE "    score: {enabled: [{name: Flat}]}\n"
#define SKIPPED_SCORE                                                                              \
    "    preScore: {enabled: [{name: SkipAll}]}\n"                                                 \
    "    score: {enabled: [{name: SkipAll}]}\n"
#define NO_SCORE ""

static void start_with(const char *yaml, uint64_t seed, int metrics)
{
    char err[512] = "";
    t.reg = th_registry_new();
    cr_assert_eq(ks__registry_add(t.reg, &recorder_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &flat_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &denier_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &skip_all_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(t.reg, yaml, "test.yaml", &t.cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    if (metrics) {
        t.r = ks__metrics_create();
        cr_assert_eq(ks__metrics_register_scheduler(t.r, &t.m), 0);
    }
    ks_scheduler_opts o = {
        .cfg = t.cfg,
        .plans = t.plans,
        .seed = seed,
        .explain = 1,
        .binding_workers = 1,
        .source = {.bind = bind_ok},
        .observer = {.cycle_done = on_cycle},
        .metrics = metrics ? &t.m : NULL,
        .plugin_metrics_sample_percent = 100,
    };
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
}

static void start(const char *yaml, uint64_t seed) { start_with(yaml, seed, 0); }

static void nodes(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char json[256];
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'n%zu','uid':'uid-n%zu'},"
                 "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'110'}}}",
                 i, i);
        cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(json)), 0);
    }
}

/* A pod, nominated to a node when nominated is not NULL; scheduled at once. */
static const seen_cycle *schedule(const char *name, const char *nominated)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s'},"
             "'spec':{'containers':[{'name':'c','image':'i'}]}%s%s%s}",
             name, name, nominated ? ",'status':{'nominatedNodeName':'" : "",
             nominated ? nominated : "", nominated ? "'}" : "");
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, th_pod(json)), 0);
    t.nfiltered = 0;
    size_t before = t.ncycles;
    cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
    ks__scheduler_wait_bindings(t.s);
    cr_assert_eq(t.ncycles, before + 1);
    return &t.cycles[before];
}

static int contains(const ks_sym *syms, size_t n, ks_sym x)
{
    for (size_t i = 0; i < n; i++)
        if (syms[i] == x)
            return 1;
    return 0;
}

/* ---- nextStartNodeIndex -------------------------------------------------------------------- */

/* 1000 nodes at 10%: numFeasibleNodesToFind is 100, so each pod evaluates 100 nodes, and the next
 * pod's Filter pass starts where the last one stopped: ten pods cover the 1000 nodes once, and the
 * eleventh starts over where the first began. */
Test(cycle, node_sampling_starts_where_the_previous_pod_stopped)
{
    start(PROFILE_YAML(10, WITH_SCORE), 1);
    nodes(1000);
    static ks_sym covered[1000];
    size_t ncovered = 0;
    const seen_cycle *first = NULL;
    for (int p = 0; p < 10; p++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", p);
        const seen_cycle *c = schedule(name, NULL);
        cr_assert_eq(c->nevaluated, 100, "pod %d evaluated %zu nodes", p, c->nevaluated);
        cr_assert_eq(c->nfeasible, 100);
        for (size_t i = 0; i < c->nevaluated; i++) {
            cr_assert(!contains(covered, ncovered, c->evaluated[i]),
                      "pod %d evaluated %s again (its pass should start where pod %d stopped)", p,
                      ks__sym_str(c->evaluated[i]), p - 1);
            covered[ncovered++] = c->evaluated[i];
        }
        if (!first)
            first = c;
    }
    cr_assert_eq(ncovered, 1000);
    const seen_cycle *again = schedule("p10", NULL);
    cr_assert_eq(again->evaluated[0], first->evaluated[0],
                 "after 1000 nodes the start wraps around to where the first pod began");
}

/* upstream numFeasibleNodesToFind: all nodes under 100; else the adaptive percentage
 * (50 - nodes/125, at least 5) or the configured one, never under 100. */
Test(cycle, the_number_of_nodes_to_find_follows_upstream)
{
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 99), 99);
    cr_assert_eq(ks__num_feasible_nodes_to_find(10, 99), 99);
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 100), 100);
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 150), 100);  /* 49% of 150 = 73 < 100 */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 300), 144);  /* 48% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 1000), 420); /* 42% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 5000), 500); /* 10% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 6000), 300); /* 50 - 48 = 2, raised to 5% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(10, 1000), 100);
    cr_assert_eq(ks__num_feasible_nodes_to_find(1, 5000), 100); /* 50 < 100 */
    cr_assert_eq(ks__num_feasible_nodes_to_find(100, 300), 300);
}

/* n<i> as a symbol. */
static ks_sym node_sym(size_t i)
{
    char name[16];
    snprintf(name, sizeof(name), "n%zu", i);
    return ks__intern(name);
}

/* 300 nodes with the adaptive percentage (48%: 144 nodes to find). A rejected node inside the
 * first pass counts as processed: the first pod evaluates 145 nodes from n0, and the next pod
 * starts at n145 (upstream: nextStartNodeIndex += feasible + rejected); the third at
 * (145 + 144) = n289, the fourth wraps to (289 + 144) % 300 = n133. */
Test(cycle, node_sampling_over_100_nodes_advances_by_the_nodes_processed)
{
    start(PROFILE_YAML(0, WITH_SCORE), 1);
    nodes(300);
    t.reject = node_sym(10);
    const seen_cycle *a = schedule("a", NULL);
    cr_assert_eq(a->nevaluated, 145, "%zu evaluated", a->nevaluated);
    cr_assert_eq(a->nfeasible, 144);
    for (size_t i = 0; i < a->nevaluated; i++)
        cr_assert_eq(a->evaluated[i], node_sym(i), "evaluated[%zu] is %s", i,
                     ks__sym_str(a->evaluated[i]));
    t.reject = KS_SYM_ABSENT;
    const seen_cycle *b = schedule("b", NULL);
    cr_assert_eq(b->nevaluated, 144);
    cr_assert_eq(b->evaluated[0], node_sym(145), "b starts at %s", ks__sym_str(b->evaluated[0]));
    const seen_cycle *c = schedule("c", NULL);
    cr_assert_eq(c->evaluated[0], node_sym(289), "c starts at %s", ks__sym_str(c->evaluated[0]));
    cr_assert_eq(c->evaluated[11], node_sym(0), "and wraps around after n299");
    const seen_cycle *d = schedule("d", NULL);
    cr_assert_eq(d->evaluated[0], node_sym(133), "d starts at %s", ks__sym_str(d->evaluated[0]));
}

/* ---- host selection ------------------------------------------------------------------------ */

/* The whole pop sequence of the sorted node list (upstream sortedNodeScores: heap.Init, then
 * heap.Pop), against Go's container/heap run on the same input (go1.x, nodeScoreHeap's Less). */
static void check_pops(const int64_t *totals, const int64_t *rnd, size_t n, const int *expect)
{
    ks_scored_node h[16];
    for (size_t i = 0; i < n; i++)
        h[i] = (ks_scored_node){totals[i], rnd ? rnd[i] : 0, (uint32_t)i};
    ks__sorted_nodes_init(h, n);
    size_t left = n;
    for (size_t k = 0; k < n; k++) {
        ks_scored_node e = ks__sorted_nodes_pop(h, &left);
        cr_assert_eq(e.idx, (uint32_t)expect[k], "pop %zu: n%u, Go's heap pops n%d", k, e.idx,
                     expect[k]);
        cr_assert_eq(left, n - k - 1);
    }
}

Test(cycle, sorted_nodes_pop_in_go_heap_order)
{
    static const int64_t a[] = {5, 9, 9, 3, 9};
    check_pops(a, NULL, 5, (const int[]){1, 4, 2, 0, 3});
    static const int64_t b[] = {1, 7, 7, 7, 7, 7, 7, 7};
    check_pops(b, NULL, 8, (const int[]){1, 3, 6, 5, 4, 7, 2, 0});
    static const int64_t c[] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    check_pops(c, NULL, 10, (const int[]){0, 9, 8, 7, 6, 5, 4, 3, 2, 1});
    static const int64_t d[] = {3, 8, 2, 8, 8, 1, 8, 5, 8};
    check_pops(d, NULL, 9, (const int[]){1, 3, 8, 4, 6, 7, 0, 2, 5});
    static const int64_t e[] = {2, 2, 3, 2, 3, 3, 1};
    check_pops(e, NULL, 7, (const int[]){4, 2, 5, 1, 3, 0, 6});
    /* Randomizer breaks equal totals (upstream: extender-scored nodes), higher first. */
    static const int64_t f[] = {5, 5, 5, 5};
    static const int64_t fr[] = {1, 3, 2, 0};
    check_pops(f, fr, 4, (const int[]){1, 2, 0, 3});
}

/* n nodes n0.. scored by table; checks that the feasible order is n0, n1, ... (the snapshot order
 * from start 0) so that the expectations below, computed with Go's container/heap on that order
 * (heap.Init then heap.Pop over upstream's nodeScoreHeap), apply. Returns the chosen node. */
static ks_sym chosen_for(const int64_t *table, size_t n, uint64_t seed)
{
    t.table = table;
    t.ntable = n;
    start(PROFILE_YAML(0, WITH_SCORE), seed);
    nodes(n);
    const seen_cycle *c = schedule("p", NULL);
    cr_assert_eq(c->nfeasible, n);
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%zu", i);
        cr_assert_eq(c->feasible[i], ks__intern(name), "feasible[%zu] is %s", i,
                     ks__sym_str(c->feasible[i]));
    }
    ks_sym host = c->host;
    stop();
    t.ncycles = 0;
    return host;
}

/* Totals 2 2 3 2 3 3 1 on n0..n6: Go's heap picks n4, neither the first best (n2) nor the last
 * (n5); a heap whose Less lets ties swap, that prefers the right child on a tie, or that builds
 * from the wrong end picks another. */
Test(cycle, ties_go_to_the_node_go_heap_order_pops_first)
{
    static const int64_t a[] = {2, 2, 3, 2, 3, 3, 1};
    cr_assert_eq(chosen_for(a, 7, 1), ks__intern("n4"), "expected n4 (Go container/heap)");
    static const int64_t b[] = {1, 1, 2, 1, 3, 3, 1, 3};
    cr_assert_eq(chosen_for(b, 8, 1), ks__intern("n7"), "expected n7 (Go container/heap)");
    static const int64_t c[] = {3, 8, 2, 8, 8, 1, 8, 5, 8};
    cr_assert_eq(chosen_for(c, 9, 1), ks__intern("n1"), "expected n1 (Go container/heap)");
    static const int64_t d[] = {1, 5, 2, 9, 3};
    cr_assert_eq(chosen_for(d, 5, 1), ks__intern("n3"), "the best total wins");
}

/* v1.37 draws nothing for host selection: the seed does not change the choice. */
Test(cycle, ties_do_not_depend_on_the_seed)
{
    static const int64_t a[] = {2, 2, 3, 2, 3, 3, 1};
    for (uint64_t seed = 0; seed < 16; seed++)
        cr_assert_eq(chosen_for(a, 7, seed), ks__intern("n4"), "seed %llu",
                     (unsigned long long)seed);
    t.table = NULL;
    static const int64_t flat[] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    cr_assert_eq(chosen_for(flat, 10, 99), ks__intern("n0"),
                 "all equal: heap.Init moves nothing, the first feasible node wins");
}

/* ---- evaluateNominatedNode ----------------------------------------------------------------- */

Test(cycle, a_nominated_pod_that_fits_its_node_is_placed_there_without_other_filters)
{
    start(PROFILE_YAML(0, WITH_SCORE), 1);
    nodes(10);
    const seen_cycle *c = schedule("p", "n7");
    cr_assert_eq(c->host, ks__intern("n7"));
    cr_assert_eq(t.nfiltered, 1, "Filter ran on %zu nodes; only the nominated one", t.nfiltered);
    cr_assert_eq(t.filtered[0], ks__intern("n7"));
    cr_assert_eq(c->nfeasible, 1);
}

Test(cycle, a_nominated_pod_that_does_not_fit_its_node_is_evaluated_on_every_node)
{
    start(PROFILE_YAML(0, WITH_SCORE), 1);
    nodes(10);
    t.reject = ks__intern("n7");
    const seen_cycle *c = schedule("p", "n7");
    cr_assert_neq(c->host, KS_SYM_ABSENT, "the pod fits elsewhere");
    cr_assert_neq(c->host, ks__intern("n7"));
    cr_assert_eq(t.filtered[0], ks__intern("n7"), "the nominated node is tried first");
    cr_assert_eq(t.nfiltered, 11, "then all 10 nodes (%zu Filter calls)", t.nfiltered);
    cr_assert_eq(c->nevaluated, 10);
    cr_assert_eq(c->nfeasible, 9);
}

/* A nominated pod placed on its node is not scored, and the rotating start does not move
 * (upstream findNodesThatFitPod returns before findNodesThatPassFilters). */
Test(cycle, a_nominated_pod_placed_on_its_node_neither_scores_nor_moves_the_start)
{
    start(PROFILE_YAML(0, NO_SCORE), 1);
    nodes(10);
    const seen_cycle *a = schedule("a", NULL);
    cr_assert_eq(a->host, node_sym(0));
    const seen_cycle *b = schedule("b", "n7");
    cr_assert_eq(b->host, node_sym(7));
    const seen_cycle *c = schedule("c", NULL);
    cr_assert_eq(c->evaluated[0], node_sym(1), "c starts where a stopped, not after n7 (%s)",
                 ks__sym_str(c->evaluated[0]));
    stop();
    t.ncycles = 0;
    start(PROFILE_YAML(0, WITH_SCORE), 1);
    nodes(10);
    t.nscored = 0;
    cr_assert_eq(schedule("p", "n7")->host, node_sym(7));
    cr_assert_eq(t.nscored, 0, "Score ran %zu times for a pod placed on its nominated node",
                 t.nscored);
}

/* ---- no Score plugins ---------------------------------------------------------------------- */

/* upstream hasScoring: without Score plugins one feasible node is enough (numNodesToFind = 1):
 * the first feasible one in evaluation order, and the next pod's pass starts after it. */
Test(cycle, without_score_plugins_the_first_feasible_node_is_taken)
{
    start(PROFILE_YAML(0, NO_SCORE), 1);
    nodes(10);
    const seen_cycle *a = schedule("a", NULL);
    cr_assert_eq(a->nfeasible, 1, "%zu feasible nodes kept; one is enough", a->nfeasible);
    cr_assert_eq(a->nevaluated, 1);
    cr_assert_eq(a->host, a->evaluated[0]);
    ks_sym first = a->host;
    const seen_cycle *b = schedule("b", NULL);
    cr_assert_eq(b->nevaluated, 1);
    cr_assert_neq(b->host, first, "the next pass starts after the node taken");

    /* The same cluster again with the first node rejected: the pod takes the next one. */
    stop();
    t.ncycles = 0;
    start(PROFILE_YAML(0, NO_SCORE), 1);
    nodes(10);
    t.reject = first;
    const seen_cycle *c = schedule("a", NULL);
    cr_assert_eq(c->nevaluated, 2);
    cr_assert_eq(c->evaluated[0], first);
    cr_assert_eq(c->nfeasible, 1);
    cr_assert_eq(c->host, c->evaluated[1]);
}

/* ---- the cycle's metrics where the tests of sched_metrics do not reach ---------------------- */

static uint64_t point_count(const char *ep, const char *status)
{
    return ks__metrics_count(
        KS_METRICS_WITH(t.m.framework_extension_point_duration, ep, status, "default-scheduler"));
}

/* The nominated node's Filter is one timed Filter point, inside the goroutines{Filter} gauge
 * (upstream evaluateNominatedNode runs findNodesThatPassFilters on it). */
Test(cycle, the_nominated_node_is_one_timed_filter_point)
{
    start_with(PROFILE_YAML(0, WITH_SCORE), 1, 1);
    nodes(10);
    schedule("p", "n7");
    cr_assert_eq(point_count("Filter", "Success"), 1);
    cr_assert_eq(ks__metrics_value(KS_METRICS_WITH(t.m.goroutines, "Filter")), 0,
                 "the gauge is back to 0 after the nominated node's Filter");
}

/* Upstream runs, and times, PostFilter only when the profile has PostFilter plugins. */
Test(cycle, a_profile_without_post_filter_plugins_times_no_post_filter)
{
    start_with(PROFILE_YAML(0, WITH_SCORE), 1, 1);
    nodes(1);
    t.reject = ks__intern("n0");
    const seen_cycle *c = schedule("p", NULL);
    cr_assert_eq(c->host, KS_SYM_ABSENT);
    cr_assert_eq(point_count("Filter", "Success"), 1);
    cr_assert_eq(point_count("PostFilter", "Unschedulable"), 0);
    cr_assert_eq(ks__metrics_count(t.m.scheduling_algorithm_duration_solo), 1);
}

/* A Permit rejection is an Unschedulable attempt whose rejector is the Permit plugin: it counts in
 * unschedulable_pods (and wakes the pod on that plugin's events), with a one-node FitError. */
Test(cycle, a_permit_rejection_names_its_plugin_as_the_rejector)
{
    start_with(PROFILE_YAML(0, WITH_SCORE "    permit: {enabled: [{name: Denier}]}\n"), 1, 1);
    nodes(3);
    const seen_cycle *c = schedule("p", NULL);
    cr_assert_eq(c->host, KS_SYM_ABSENT);
    cr_assert_eq(ks__metrics_value(
                     KS_METRICS_WITH(t.m.schedule_attempts, "unschedulable", "default-scheduler")),
                 1);
    cr_assert_eq(
        ks__metrics_value(KS_METRICS_WITH(t.m.unschedulable_pods, "Denier", "default-scheduler")),
        1);
}

/* Every Score plugin skipped (PreScore Skip): every node totals 0 (upstream RunScorePlugins with
 * no non-skipped plugin), so Go's heap leaves the first feasible node on top; Score never runs. */
Test(cycle, with_every_score_plugin_skipped_every_node_totals_zero)
{
    static const int64_t table[] = {1, 2, 3, 90, 5};
    t.table = table;
    t.ntable = 5;
    start(PROFILE_YAML(0, SKIPPED_SCORE), 1);
    nodes(5);
    const seen_cycle *c = schedule("p", NULL);
    cr_assert_eq(c->nfeasible, 5);
    cr_assert_eq(t.nscored, 0, "a skipped Score plugin ran %zu times", t.nscored);
    cr_assert_eq(c->host, c->feasible[0], "chose %s; all totals 0 leave the first feasible node",
                 ks__sym_str(c->host));
}

/* One feasible node is taken without scoring (upstream schedulePod's shortcut). */
Test(cycle, one_feasible_node_is_taken_without_scoring)
{
    static const int64_t table[] = {1, 2};
    t.table = table;
    t.ntable = 2;
    start(PROFILE_YAML(0, WITH_SCORE), 1);
    nodes(2);
    t.reject = node_sym(0);
    const seen_cycle *c = schedule("p", NULL);
    cr_assert_eq(c->host, node_sym(1));
    cr_assert_eq(c->nfeasible, 1);
    cr_assert_eq(t.nscored, 0, "Score ran %zu times for a single feasible node", t.nscored);
}
