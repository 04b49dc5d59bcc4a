/*
 * Opportunistic batching (KEP-5598, upstream v1.37 framework/runtime/batch.go) and pod signatures
 * (framework.go SignPod, the in-tree plugins' SignPod), driven through a scheduler:
 *
 * - the node hint's rules: only for the cycle right after a successful one, same signature, no
 *   nominated node, a cached list at most 500ms old; the last chosen node filtered again and, when
 *   it still fits, rescored so that it competes with the cached nodes; the flush reasons and the
 *   batch metrics;
 * - signatures: which profiles can sign (every PreFilter/Filter/PreScore/Score plugin signs, or is
 *   KS_PLUGIN_NODE_LOCAL), which pods the in-tree plugins refuse (PodTopologySpread with default
 *   constraints: the default profile batches nothing), what makes two signatures differ;
 * - the same decisions with and without batching on randomized workloads.
 *
 * The test plugins: Cap (Filter: at most t.cap pods per node, nothing for pods labelled bad; signs
 * the pod's labels) and Rank (Score: node n<i> scores 100 - i - t.step * its pods, so scores never
 * tie and depend on nothing but the node; no sign slot, KS_PLUGIN_NODE_LOCAL).
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/batch.h"
#include "sched/framework.h"
#include "sched/scheduler.h"
#include "util/metrics.h"

#define MAX_PODS 512

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    ks_metrics *r;
    ks_sched_metrics m;
    int64_t now; /* the scheduler's clock */
    /* What each cycle chose (KS_SYM_ABSENT: failed), in order. */
    ks_sym hosts[MAX_PODS];
    size_t ncycles;
    /* Cap */
    pthread_mutex_t mu;
    size_t cap;
    size_t nfiltered;
    ks_sym filtered[64];
    /* Rank */
    int64_t step;
    size_t nscored;
} t;

static ks_code cap_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                          ks_status *st)
{
    (void)self, (void)c;
    pthread_mutex_lock(&t.mu);
    if (t.nfiltered < 64)
        t.filtered[t.nfiltered] = ks_node_name(ks_node_info_node(ni));
    t.nfiltered++;
    pthread_mutex_unlock(&t.mu);
    if (ks_pod_label(p, ks_intern("bad")) != KS_SYM_ABSENT) {
        ks_status_reason(st, "bad pod");
        return KS_UNSCHEDULABLE;
    }
    if (ks_node_info_pod_count(ni) >= t.cap) {
        ks_status_reason(st, "full");
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

static ks_code cap_sign(void *self, const ks_pod *p, ks_signature *sig, ks_status *st)
{
    (void)self, (void)st;
    const ks_label *l;
    size_t n = ks_pod_labels(p, &l);
    char buf[512] = "[";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof(buf) - len, "%s\"%s=%s\"", i ? "," : "", ks_sym_str(l[i].key),
                 ks_sym_str(l[i].value));
    }
    strcat(buf, "]");
    ks_sign_add(sig, "test.Cap/labels", buf);
    return KS_SUCCESS;
}

static ks_code rank_score(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                          int64_t *score, ks_status *st)
{
    (void)self, (void)c, (void)p, (void)st;
    __atomic_add_fetch(&t.nscored, 1, __ATOMIC_RELAXED);
    int64_t i = atoi(ks_sym_str(ks_node_name(ks_node_info_node(ni))) + 1);
    int64_t v = 100 - i - t.step * (int64_t)ks_node_info_pod_count(ni);
    *score = v < 0 ? 0 : v;
    return KS_SUCCESS;
}

/* Plain: a Filter with neither a sign slot nor KS_PLUGIN_NODE_LOCAL (turns signatures off). */
static ks_code plain_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                            ks_status *st)
{
    (void)self, (void)c, (void)p, (void)ni, (void)st;
    return KS_SUCCESS;
}

static const ks_plugin_desc cap_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Cap", .filter = cap_filter, .sign = cap_sign};
static const ks_plugin_desc rank_desc = {.size = sizeof(ks_plugin_desc),
                                         .name = "Rank",
                                         .score = rank_score,
                                         .flags = KS_PLUGIN_NODE_LOCAL};
static const ks_plugin_desc plain_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Plain", .filter = plain_filter};

static int64_t test_now(void *ctx)
{
    (void)ctx;
    return t.now;
}

/* With explain on: each cycle's total score per node n<i> (-1: not scored). */
#define MAX_REAL_NODES 40
static int64_t totals[MAX_PODS][MAX_REAL_NODES];

static void on_cycle(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                     const char *result, ks_sym node, const char *message, const ks_explain *ex)
{
    (void)ctx, (void)seq, (void)pod, (void)profile, (void)message;
    cr_assert_lt(t.ncycles, MAX_PODS);
    for (size_t i = 0; i < MAX_REAL_NODES; i++)
        totals[t.ncycles][i] = -1;
    for (size_t f = 0; ex && ex->scored && f < ex->nfeasible; f++) {
        int i = atoi(ks__sym_str(ex->feasible[f]->name) + 1);
        if (i >= 0 && i < MAX_REAL_NODES)
            totals[t.ncycles][i] = ex->totals[f];
    }
    t.hosts[t.ncycles++] = result ? KS_SYM_ABSENT : node;
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
    t.cap = 1;
    t.now = 1000000000LL;
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
    t.ncycles = 0;
}

static void teardown(void)
{
    stop();
    th_fini();
}

TestSuite(batch, .init = setup, .fini = teardown, .timeout = 120);

#define TEST_PROFILE(filters)                                                                      \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"                                                           \
    "profiles:\n"                                                                                  \
    "- schedulerName: default-scheduler\n"                                                         \
    "  plugins:\n"                                                                                 \
    "    multiPoint: {disabled: [{name: '*'}]}\n"                                                  \
    "    queueSort: {enabled: [{name: PrioritySort}]}\n"                                           \
    "    filter: {enabled: [" filters "]}\n"                                                       \
    "    score: {enabled: [{name: Rank}]}\n"                                                       \
    "    bind: {enabled: [{name: DefaultBinder}]}\n"

#define CAP_PROFILE TEST_PROFILE("{name: Cap}")

/* The default plugins, with PodTopologySpread's system default constraints replaced by none
 * (upstream's batching shape: defaultingType List without defaultConstraints). */
#define NO_DEFAULT_SPREAD_PROFILE                                                                  \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"                                                           \
    "profiles:\n"                                                                                  \
    "- schedulerName: default-scheduler\n"                                                         \
    "  pluginConfig:\n"                                                                            \
    "  - name: PodTopologySpread\n"                                                                \
    "    args: {defaultingType: List}\n"

#define DEFAULT_PROFILE                                                                            \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"

static void start_opts(const char *yaml, int batching_off, int metrics)
{
    char err[512] = "";
    t.reg = th_registry_new();
    cr_assert_eq(ks__registry_add(t.reg, &cap_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &rank_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &plain_desc, "test", err, sizeof(err)), 0, "%s", err);
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
        .seed = 1,
        .binding_workers = 1,
        .now_ns = test_now,
        .source = {.bind = bind_ok},
        .observer = {.cycle_done = on_cycle},
        .metrics = metrics ? &t.m : NULL,
        .plugin_metrics_sample_percent = 100,
        .disable_opportunistic_batching = batching_off,
    };
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
}

static void start(const char *yaml) { start_opts(yaml, 0, 0); }

static ks_framework *fw0(void) { return ks__scheduler_framework(t.s, 0); }

static const ks_batch_counts *counts(void)
{
    cr_assert_not_null(fw0()->batch, "OpportunisticBatching is on by default");
    return ks__batch_counts(fw0()->batch);
}

static void nodes(size_t n, const char *cpu)
{
    for (size_t i = 0; i < n; i++) {
        char json[256];
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'n%zu','uid':'uid-n%zu'},"
                 "'status':{'allocatable':{'cpu':'%s','memory':'64Gi','pods':'110'}}}",
                 i, i, cpu);
        cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(json)), 0);
    }
}

static ks_sym sym(const char *s) { return ks__intern(s); }

/* Adds a pod (labels: a JSON object body, may be empty; status: "" or a status body) and runs one
 * cycle; returns its host (KS_SYM_ABSENT: not scheduled). */
static ks_sym schedule_pod(const char *name, const char *labels, const char *status)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s','labels':{%s}},"
             "'spec':{'containers':[{'name':'c','image':'i',"
             "'resources':{'requests':{'cpu':'100m'}}}]},'status':{%s}}",
             name, name, labels, status);
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, th_pod(json)), 0);
    size_t before = t.ncycles;
    t.nfiltered = 0;
    t.nscored = 0;
    cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
    ks__scheduler_wait_bindings(t.s);
    cr_assert_eq(t.ncycles, before + 1);
    return t.hosts[before];
}

static ks_sym schedule(const char *name) { return schedule_pod(name, "'app':'web'", ""); }

/* ---- the hint ------------------------------------------------------------------------------ */

/* One pod per node: each pod after the first tries the last chosen node again (Filter rejects it:
 * it is full), then gets the best cached node as its hint, which it takes after Filter on that
 * node alone, without scoring. */
Test(batch, identical_pods_take_the_cached_nodes_in_score_order)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    cr_assert_eq(schedule("a"), sym("n0"));
    cr_assert_eq(t.nscored, 5, "the first pod scores every node");
    const char *expect[] = {"n1", "n2", "n3", "n4"};
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "b%d", i);
        cr_assert_eq(schedule(name), sym(expect[i]), "pod %d", i);
        cr_assert_eq(t.nscored, 0, "a hinted pod is not scored (%zu Score calls)", t.nscored);
        cr_assert_eq(t.nfiltered, 2, "Filter on the last node and on the hint (%zu calls)",
                     t.nfiltered);
        cr_assert_eq(t.filtered[0], sym(i == 0 ? "n0" : expect[i - 1]), "the last node first");
        cr_assert_eq(t.filtered[1], sym(expect[i]), "then the hint");
    }
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 4);
    cr_assert_eq(counts()->attempts[KS_BATCH_NO_HINT], 1);
    cr_assert_eq(counts()->rescore_attempts, 0, "a full last node is not rescored");
    cr_assert_eq(counts()->batched_pods, 4);
}

/* Room for three pods per node, each pod lowering its node's score by 5: the last chosen node
 * still fits, so it is rescored (95 for n0 after one pod) and competes with the cached scores
 * (n1 99, n2 98, ...), as a full scoring pass would have it. */
Test(batch, the_last_node_that_still_fits_is_rescored_and_competes)
{
    t.cap = 3;
    t.step = 5;
    start(CAP_PROFILE);
    nodes(5, "4");
    cr_assert_eq(schedule("a"), sym("n0"));
    cr_assert_eq(schedule("b"), sym("n1"));
    cr_assert_eq(t.nscored, 1, "only the last node is scored again (%zu)", t.nscored);
    cr_assert_eq(schedule("c"), sym("n2"));
    cr_assert_eq(schedule("d"), sym("n3"));
    cr_assert_eq(schedule("e"), sym("n4"));
    /* n0 95, n1 94, n2 93, n3 92, n4 91: n0 again. */
    cr_assert_eq(schedule("f"), sym("n0"));
    cr_assert_eq(counts()->rescore_attempts, 5);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 5);
}

/* A last node whose score does not drop stays the best: the rescored node wins the hint again
 * until it is full. */
Test(batch, a_rescored_last_node_can_win_again)
{
    t.cap = 3;
    t.step = 0;
    start(CAP_PROFILE);
    nodes(5, "4");
    cr_assert_eq(schedule("a"), sym("n0"));
    cr_assert_eq(schedule("b"), sym("n0"));
    cr_assert_eq(schedule("c"), sym("n0"));
    cr_assert_eq(schedule("d"), sym("n1"), "n0 is full");
    cr_assert_eq(counts()->rescore_attempts, 2);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 3);
}

Test(batch, a_state_older_than_500ms_is_not_used)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    schedule("a");
    t.now += 500 * 1000000LL; /* exactly maxBatchAge: still used (time.After is strict) */
    cr_assert_eq(schedule("b"), sym("n1"));
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 1);
    t.now += 500 * 1000000LL + 1;
    cr_assert_eq(schedule("c"), sym("n2"));
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_EXPIRED], 1);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 1, "no hint from an expired state");
    cr_assert_eq(t.nscored, 3, "c was scored on the 3 free nodes (%zu)", t.nscored);
}

/* A pod whose cycle fails stores nothing: the next pod's cycle does not follow the last stored
 * one (upstream pod_skipped). The failing pod itself has another signature (pod_incompatible). */
Test(batch, a_failed_cycle_in_between_flushes_the_state)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    cr_assert_eq(schedule("a"), sym("n0"));
    cr_assert_eq(schedule_pod("bad", "'bad':'yes'", ""), KS_SYM_ABSENT);
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_POD_INCOMPATIBLE], 1);
    cr_assert_eq(schedule("c"), sym("n1"));
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_POD_SKIPPED], 1);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 0);
    cr_assert_eq(t.nscored, 4, "c had a full scoring pass");
    cr_assert_eq(schedule("d"), sym("n2"), "and stored a new state");
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 1);
}

Test(batch, another_signature_does_not_use_the_state_but_replaces_it)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    schedule_pod("a", "'app':'x'", "");
    cr_assert_eq(schedule_pod("b", "'app':'y'", ""), sym("n1"));
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_POD_INCOMPATIBLE], 1);
    cr_assert_eq(t.nscored, 4);
    cr_assert_eq(schedule_pod("c", "'app':'y'", ""), sym("n2"));
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 1);
}

/* A nominated pod bypasses batching (pod_nominated) and tries its nominated node. */
Test(batch, a_nominated_pod_does_not_use_the_hint)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    schedule("a");
    cr_assert_eq(schedule_pod("b", "'app':'web'", "'nominatedNodeName':'n3'"), sym("n3"));
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_POD_NOMINATED], 1);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 0);
    cr_assert_eq(t.nfiltered, 1, "Filter on the nominated node only");
    /* b stored no list (one feasible node): empty_list, and the state is gone. */
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_EMPTY_LIST], 1);
    cr_assert_eq(schedule("c"), sym("n1"));
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 0);
}

/* A hint that no longer fits (here: the hinted node filled up meanwhile, as if bound by another
 * scheduler) is not used; the pod gets a full pass (hint_not_used). */
Test(batch, a_hint_that_does_not_fit_falls_back_to_the_full_pass)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    schedule("a"); /* n0; cached n1..n4 */
    /* Someone else's pod on n1. */
    cr_assert_eq(ks__scheduler_on_pod_add(
                     t.s, th_pod("{'metadata':{'name':'x','namespace':'default','uid':'uid-x'},"
                                 "'spec':{'nodeName':'n1','containers':[{'name':'c'}]}}")),
                 0);
    cr_assert_eq(schedule("b"), sym("n2"));
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_NOT_USED], 1);
    cr_assert_eq(t.nscored, 3, "full pass over n2..n4");
}

static void delete_node(const char *name)
{
    char json[256];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'uid-%s'},"
             "'status':{'allocatable':{'cpu':'4','memory':'64Gi','pods':'110'}}}",
             name, name);
    ks_node *n = th_node(json);
    cr_assert_eq(ks__scheduler_on_node_delete(t.s, n), 0);
}

/* The last chosen node is gone (upstream refreshHintCandidates: node_missing). */
Test(batch, a_deleted_last_node_flushes_the_state)
{
    start(CAP_PROFILE);
    nodes(5, "4");
    cr_assert_eq(schedule("a"), sym("n0"));
    delete_node("n0");
    cr_assert_eq(schedule("b"), sym("n1"));
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_NODE_MISSING], 1);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 0);
    cr_assert_eq(t.nscored, 4, "a full pass over n1..n4");
}

/* A cached node is gone while the last one still fits: the rescore cannot resolve the cached
 * list (upstream resolveCachedCandidates: node_missing). */
Test(batch, a_deleted_cached_node_fails_the_rescore)
{
    t.cap = 3;
    t.step = 5;
    start(CAP_PROFILE);
    nodes(5, "4");
    cr_assert_eq(schedule("a"), sym("n0"));
    delete_node("n3");
    cr_assert_eq(schedule("b"), sym("n1"));
    cr_assert_eq(counts()->rescore_attempts, 1);
    cr_assert_eq(counts()->flushed[KS_BATCH_FLUSH_NODE_MISSING], 1);
    cr_assert_eq(counts()->attempts[KS_BATCH_HINT_USED], 0);
}

Test(batch, the_feature_gate_off_batches_nothing)
{
    start_opts(CAP_PROFILE, 1, 0);
    nodes(5, "4");
    cr_assert_null(fw0()->batch);
    cr_assert_eq(schedule("a"), sym("n0"));
    cr_assert_eq(schedule("b"), sym("n1"));
    cr_assert_eq(t.nscored, 4, "every pod is scored");
}

Test(batch, metrics_count_attempts_flushes_and_durations)
{
    start_opts(CAP_PROFILE, 0, 1);
    nodes(5, "4");
    schedule("a");
    schedule("b");
    schedule_pod("c", "'app':'other'", "");
    cr_assert_eq(
        ks__metrics_value(KS_METRICS_WITH(t.m.batch_attempts, "default-scheduler", "no_hint")), 2);
    cr_assert_eq(
        ks__metrics_value(KS_METRICS_WITH(t.m.batch_attempts, "default-scheduler", "hint_used")),
        1);
    cr_assert_eq(ks__metrics_value(KS_METRICS_WITH(t.m.batch_cache_flushed, "default-scheduler",
                                                   "pod_incompatible")),
                 1);
    cr_assert_eq(
        ks__metrics_count(KS_METRICS_WITH(t.m.get_node_hint_duration, "hint", "default-scheduler")),
        1);
    cr_assert_eq(ks__metrics_count(
                     KS_METRICS_WITH(t.m.get_node_hint_duration, "no_hint", "default-scheduler")),
                 2);
    cr_assert_eq(ks__metrics_count(
                     KS_METRICS_WITH(t.m.store_schedule_results_duration, "default-scheduler")),
                 3);
    /* upstream SignPod: the Sign point once per signed pod (here: when it is popped), and each
     * signing plugin's call, every time. */
    cr_assert_eq(ks__metrics_count(KS_METRICS_WITH(t.m.framework_extension_point_duration, "Sign",
                                                   "Success", "default-scheduler")),
                 3);
    cr_assert_eq(
        ks__metrics_count(KS_METRICS_WITH(t.m.plugin_execution_duration, "Cap", "Sign", "Success")),
        3);
}

/* ---- signatures ---------------------------------------------------------------------------- */

static ks_pod_sig *sign(const char *pod_json)
{
    ks_pod *p = th_pod(pod_json); /* the harness releases it in th_fini */
    return ks__fw_sign_pod(fw0(), p);
}

#define POD(extra_meta, spec)                                                                      \
    "{'metadata':{'name':'p','namespace':'default','uid':'u'" extra_meta "},"                      \
    "'spec':{'containers':[{'name':'c','image':'nginx','resources':{'requests':{'cpu':'1'}}}"      \
    "]" spec "}}"

static int same(const char *a, const char *b)
{
    ks_pod_sig *x = sign(a), *y = sign(b);
    cr_assert_not_null(x, "%s is signable", a);
    cr_assert_not_null(y, "%s is signable", b);
    int eq = x->len == y->len && memcmp(x->json, y->json, x->len) == 0;
    ks__pod_sig_unref(x);
    ks__pod_sig_unref(y);
    return eq;
}

/* upstream: PodTopologySpread refuses every pod while default constraints are set, and the
 * default (defaultingType System) sets them. */
Test(batch, with_the_default_profile_no_pod_is_signable)
{
    start(DEFAULT_PROFILE);
    cr_assert(fw0()->enable_signatures, "every default plugin signs");
    cr_assert_null(sign(POD("", "")));
}

Test(batch, in_tree_signatures_tell_what_filter_and_score_read)
{
    start(NO_DEFAULT_SPREAD_PROFILE);
    cr_assert(fw0()->enable_signatures);
    ks_pod_sig *s = sign(POD(",'labels':{'b':'2','a':'1'}", ""));
    cr_assert_not_null(s);
    cr_assert(strstr(s->json, "\"v1.Pod.Spec.SchedulerName\":\"default-scheduler\""), "%s",
              s->json);
    cr_assert(strstr(s->json, "\"v1.Pod.Labels\":{\"a\":\"1\",\"b\":\"2\"}"), "%s", s->json);
    cr_assert(strstr(s->json, "\"v1.Pod.Spec.CanonicalImageNames()\":[\"nginx:latest\"]"), "%s",
              s->json);
    /* encoding/json's map order: keys sorted */
    cr_assert_lt(strstr(s->json, "v1.Pod.Labels") - s->json,
                 strstr(s->json, "v1.Pod.Spec.SchedulerName") - s->json);
    ks__pod_sig_unref(s);

    cr_assert(same(POD("", ""), "{'metadata':{'name':'q','namespace':'default','uid':'v'},"
                                "'spec':{'containers':[{'name':'d','image':'nginx:latest',"
                                "'resources':{'requests':{'cpu':'1000m'}}}]}}"),
              "name, uid, container name and an explicit :latest do not matter");
    cr_assert(same(POD("", ""), POD(",'annotations':{'x':'y'}", "")), "annotations do not matter");
    cr_assert(same(POD("", ",'tolerations':[{'key':'a','operator':'Exists'},{'key':'b',"
                           "'operator':'Exists'}]"),
                   POD("", ",'tolerations':[{'key':'b','operator':'Exists'},{'key':'a',"
                           "'operator':'Exists'}]")),
              "toleration order does not matter");
    cr_assert(!same(POD("", ""), POD("", ",'tolerations':[{'key':'a','operator':'Exists'}]")));
    cr_assert(!same(POD("", ""), POD("", ",'nodeSelector':{'zone':'a'}")));
    cr_assert(!same(POD("", ""), POD(",'labels':{'a':'1'}", "")));
    cr_assert(!same(POD("", ""), "{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                                 "'spec':{'containers':[{'name':'c','image':'nginx',"
                                 "'resources':{'requests':{'cpu':'2'}}}]}}"));
    cr_assert(!same(POD("", ""), "{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                                 "'spec':{'containers':[{'name':'c','image':'redis',"
                                 "'resources':{'requests':{'cpu':'1'}}}]}}"));
    cr_assert(!same(POD("", ""), "{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                                 "'spec':{'containers':[{'name':'c','image':'nginx',"
                                 "'ports':[{'containerPort':80,'hostPort':80}],"
                                 "'resources':{'requests':{'cpu':'1'}}}]}}"));
    cr_assert(
        !same(POD("", ""), POD("", ",'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnored"
                                   "DuringExecution':[{'weight':1,'preference':{'matchExpressions':"
                                   "[{'key':'z','operator':'In','values':['a']}]}}]}}")));
    cr_assert(same(POD("", ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuring"
                           "Execution':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'z',"
                           "'operator':'In','values':['a','b']}]}]}}}"),
                   POD("", ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuring"
                           "Execution':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'z',"
                           "'operator':'In','values':['b','a']}]}]}}}")),
              "the order of a requirement's values does not matter");
    /* Refusals. */
    cr_assert_null(sign(POD("", ",'affinity':{'podAntiAffinity':{'requiredDuringScheduling"
                                "IgnoredDuringExecution':[{'topologyKey':'zone','labelSelector':"
                                "{'matchLabels':{'a':'1'}}}]}}")),
                   "InterPodAffinity refuses pods with (anti-)affinity");
    cr_assert_null(sign(POD("", ",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':"
                                "'zone','whenUnsatisfiable':'DoNotSchedule','labelSelector':"
                                "{'matchLabels':{'a':'1'}}}]")),
                   "PodTopologySpread refuses pods with constraints");
}

/* NodePorts: kubesched signs protocol and host IP too (its Filter compares them). */
Test(batch, host_ports_sign_port_protocol_and_ip)
{
    start(NO_DEFAULT_SPREAD_PROFILE);
#define PORT_POD(ports)                                                                            \
    "{'metadata':{'name':'p','namespace':'default','uid':'u'},'spec':{'containers':[{'name':'c',"  \
    "'image':'nginx','ports':[" ports "]}]}}"
    cr_assert(!same(PORT_POD("{'containerPort':80,'hostPort':80}"),
                    PORT_POD("{'containerPort':80,'hostPort':80,'protocol':'UDP'}")));
    cr_assert(
        same(PORT_POD("{'containerPort':80,'hostPort':80},{'containerPort':81,'hostPort':81}"),
             PORT_POD("{'containerPort':81,'hostPort':81},{'containerPort':80,'hostPort':80}")),
        "a set: the order of the ports does not matter");
#undef PORT_POD
}

/* ImageLocality: kubesched signs every container's image and the image volumes (Score counts
 * them: imageCount sets the max threshold), where upstream signs the set of container images. */
Test(batch, image_names_are_signed_as_a_multiset_with_image_volumes)
{
    start(NO_DEFAULT_SPREAD_PROFILE);
#define IMG_POD(containers, volumes)                                                               \
    "{'metadata':{'name':'p','namespace':'default','uid':'u'},'spec':{'containers':[" containers   \
    "],'volumes':[" volumes "]}}"
    cr_assert(!same(IMG_POD("{'name':'a','image':'app'}", ""),
                    IMG_POD("{'name':'a','image':'app'},{'name':'b','image':'app'}", "")),
              "two containers of one image score against a higher threshold than one");
    cr_assert(
        !same(IMG_POD("{'name':'a','image':'app'}", ""),
              IMG_POD("{'name':'a','image':'app'}", "{'name':'v','image':{'reference':'m'}}")),
        "an image volume counts");
    cr_assert(same(IMG_POD("{'name':'a','image':'app'},{'name':'b','image':'db'}", ""),
                   IMG_POD("{'name':'a','image':'db'},{'name':'b','image':'app:latest'}", "")),
              "order and an explicit :latest do not matter");
#undef IMG_POD
}

/* InterPodAffinity with ignorePreferredTermsOfExistingPods signs no labels (upstream). */
Test(batch, ignoring_existing_pods_preferred_terms_leaves_labels_out)
{
    start(NO_DEFAULT_SPREAD_PROFILE "  - name: InterPodAffinity\n"
                                    "    args: {ignorePreferredTermsOfExistingPods: true}\n");
    cr_assert(same(POD("", ""), POD(",'labels':{'a':'1'}", "")));
}

Test(batch, a_plugin_that_cannot_sign_turns_signatures_off)
{
    start(TEST_PROFILE("{name: Cap}, {name: Plain}"));
    cr_assert(!fw0()->enable_signatures, "Plain has no sign slot and is not node-local");
    cr_assert_null(sign(POD("", "")));
}

/* Rank has no sign slot but is KS_PLUGIN_NODE_LOCAL: the host signs the pod's namespace, labels,
 * annotations and spec for it. */
Test(batch, a_node_local_plugin_is_signed_by_the_host)
{
    start(CAP_PROFILE);
    cr_assert(fw0()->enable_signatures);
    cr_assert(same(POD("", ""), "{'metadata':{'name':'q','namespace':'default','uid':'v'},"
                                "'spec':{'containers':[{'name':'c','image':'nginx','resources':"
                                "{'requests':{'cpu':'1'}}}]}}"),
              "name and uid are not signed");
    cr_assert(!same(POD("", ""), POD(",'annotations':{'x':'y'}", "")),
              "annotations are, for a node-local plugin");
    cr_assert(!same(POD("", ""), "{'metadata':{'name':'p','namespace':'other','uid':'u'},"
                                 "'spec':{'containers':[{'name':'c','image':'nginx','resources':"
                                 "{'requests':{'cpu':'1'}}}]}}"));
}

/* ---- the same decisions with and without batching ------------------------------------------ */

/* A random workload: nodes with random capacities (1..4 pods), runs of identical pods from a few
 * templates (random run lengths), some of them unschedulable; scheduled once with batching and
 * once without. Rank's scores never tie and depend only on the node, so a hint is exactly the
 * node a full pass picks: the decisions must be the same, and batching must have been used. */
static size_t caps_by_node[40];

static ks_code varcap_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                             ks_status *st)
{
    (void)self, (void)c;
    if (ks_pod_label(p, ks_intern("bad")) != KS_SYM_ABSENT) {
        ks_status_reason(st, "bad pod");
        return KS_UNSCHEDULABLE;
    }
    int i = atoi(ks_sym_str(ks_node_name(ks_node_info_node(ni))) + 1);
    ks_sym want = ks_pod_label(p, ks_intern("parity"));
    if (want != KS_SYM_ABSENT && (i % 2) != atoi(ks_sym_str(want))) {
        ks_status_reason(st, "parity");
        return KS_UNSCHEDULABLE;
    }
    if (ks_node_info_pod_count(ni) >= caps_by_node[i]) {
        ks_status_reason(st, "full");
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

static const ks_plugin_desc varcap_desc = {
    .size = sizeof(ks_plugin_desc), .name = "VarCap", .filter = varcap_filter, .sign = cap_sign};

static void run_workload(uint64_t seed, int batching_off, ks_sym *out, size_t *nout,
                         uint64_t *hints)
{
    char err[512] = "";
    t.reg = th_registry_new();
    cr_assert_eq(ks__registry_add(t.reg, &varcap_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &rank_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(t.reg, TEST_PROFILE("{name: VarCap}"), "test.yaml", &t.cfg,
                                        err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = t.cfg,
                           .plans = t.plans,
                           .seed = 1,
                           .binding_workers = 1,
                           .now_ns = test_now,
                           .source = {.bind = bind_ok},
                           .observer = {.cycle_done = on_cycle},
                           .disable_opportunistic_batching = batching_off};
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
#define RND() (r = r * 6364136223846793005ull + 1442695040888963407ull, (r >> 33))
    size_t nn = 10 + RND() % 30;
    for (size_t i = 0; i < nn; i++) {
        caps_by_node[i] = 1 + RND() % 4;
        char json[256];
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'n%zu','uid':'uid-n%zu'},"
                 "'status':{'allocatable':{'cpu':'64','memory':'64Gi','pods':'110'}}}",
                 i, i);
        cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(json)), 0);
    }
    static const char *const templates[] = {"'app':'a'", "'app':'b','parity':'0'",
                                            "'app':'c','parity':'1'", "'app':'d','bad':'1'"};
    size_t npods = 0;
    while (npods < 120) {
        size_t run = 1 + RND() % 12, tpl = RND() % 4;
        t.now += (int64_t)(RND() % 3) * 200 * 1000000LL; /* sometimes a state expires */
        for (size_t k = 0; k < run && npods < 120; k++, npods++) {
            char name[16];
            snprintf(name, sizeof(name), "p%zu", npods);
            schedule_pod(name, templates[tpl], "");
        }
    }
#undef RND
    memcpy(out, t.hosts, t.ncycles * sizeof(*out));
    *nout = t.ncycles;
    *hints = batching_off ? 0 : counts()->attempts[KS_BATCH_HINT_USED];
    stop();
}

Test(batch, the_same_decisions_with_and_without_batching)
{
    static ks_sym with[MAX_PODS], without[MAX_PODS];
    uint64_t total_hints = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        size_t n1, n2;
        uint64_t hints, none;
        run_workload(seed, 0, with, &n1, &hints);
        run_workload(seed, 1, without, &n2, &none);
        cr_assert_eq(n1, n2);
        for (size_t i = 0; i < n1; i++)
            cr_assert_eq(with[i], without[i], "seed %llu, pod %zu: %s with batching, %s without",
                         (unsigned long long)seed, i,
                         ks__sym_str(with[i]) ? ks__sym_str(with[i]) : "-",
                         ks__sym_str(without[i]) ? ks__sym_str(without[i]) : "-");
        total_hints += hints;
    }
    cr_assert_gt(total_hints, 200, "batching was used (%llu hints)",
                 (unsigned long long)total_hints);
}

/* The in-tree plugins (upstream's batching profile: PodTopologySpread without default
 * constraints) on nodes of a few sizes, some tainted PreferNoSchedule, and runs of identical pods
 * from four templates. Equal scores are common here, and a hint breaks a tie by the cached
 * heap's order where a full pass breaks it by the feasible-node order (upstream too): the runs
 * may part, but only where the pod had equal best nodes. So: at the first pod placed differently,
 * the node batching chose has the best total of the full pass that placed it without batching. */
static void run_real(uint64_t seed, int batching_off, ks_sym *out, size_t *nout)
{
    char err[512] = "";
    t.reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(t.reg, NO_DEFAULT_SPREAD_PROFILE, "test.yaml", &t.cfg, err,
                                        sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = t.cfg,
                           .plans = t.plans,
                           .seed = 1,
                           .explain = batching_off,
                           .binding_workers = 1,
                           .now_ns = test_now,
                           .source = {.bind = bind_ok},
                           .observer = {.cycle_done = on_cycle},
                           .disable_opportunistic_batching = batching_off};
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 7;
#define RND() (r = r * 6364136223846793005ull + 1442695040888963407ull, (r >> 33))
    static const char *const cpus[] = {"4", "8", "16", "32"}, *const mems[] = {"8", "16", "32"};
    for (size_t i = 0; i < MAX_REAL_NODES; i++) {
        char json[512];
        int zone = (int)(RND() % 3), tainted = RND() % 5 == 0;
        const char *cpu = cpus[RND() % 4], *mem = mems[RND() % 3];
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'n%zu','uid':'uid-n%zu','labels':{'zone':'z%d'}},%s"
                 "'status':{'allocatable':{'cpu':'%s','memory':'%sGi','pods':'110'}}}",
                 i, i, zone,
                 tainted ? "'spec':{'taints':[{'key':'t','value':'x','effect':"
                           "'PreferNoSchedule'}]},"
                         : "",
                 cpu, mem);
        cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(json)), 0);
    }
    static const char *const tpl[] = {
        "'containers':[{'name':'c','image':'nginx','resources':{'requests':{'cpu':'500m',"
        "'memory':'1Gi'}}}]",
        "'nodeSelector':{'zone':'z1'},'containers':[{'name':'c','image':'redis','resources':"
        "{'requests':{'cpu':'2','memory':'4Gi'}}}]",
        "'containers':[{'name':'c','image':'busybox','resources':{'requests':{'cpu':'1',"
        "'memory':'512Mi'}}}]",
        "'tolerations':[{'key':'t','operator':'Exists'}],'containers':[{'name':'c','image':"
        "'nginx','resources':{'requests':{'cpu':'3','memory':'2Gi'}}}]",
    };
    size_t n = 0;
    while (n < 300) {
        size_t k = RND() % 4, run = 1 + RND() % 30;
        for (size_t j = 0; j < run && n < 300; j++, n++) {
            char json[1024];
            snprintf(json, sizeof(json),
                     "{'metadata':{'name':'p%zu','namespace':'default','uid':'uid-p%zu',"
                     "'labels':{'t':'%zu'}},'spec':{%s}}",
                     n, n, k, tpl[k]);
            cr_assert_eq(ks__scheduler_on_pod_add(t.s, th_pod(json)), 0);
            cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
            ks__scheduler_wait_bindings(t.s);
        }
    }
#undef RND
    memcpy(out, t.hosts, t.ncycles * sizeof(*out));
    *nout = t.ncycles;
    if (!batching_off)
        cr_assert_gt(counts()->attempts[KS_BATCH_HINT_USED], 50, "batching was used (%llu hints)",
                     (unsigned long long)counts()->attempts[KS_BATCH_HINT_USED]);
    stop();
}

Test(batch, with_the_in_tree_plugins_batching_parts_only_at_a_tie)
{
    static ks_sym with[MAX_PODS], without[MAX_PODS];
    int parted = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t n1, n2;
        run_real(seed, 0, with, &n1);
        run_real(seed, 1, without, &n2);
        cr_assert_eq(n1, n2);
        size_t i = 0;
        while (i < n1 && with[i] == without[i])
            i++;
        if (i == n1)
            continue;
        parted++;
        cr_assert_neq(with[i], KS_SYM_ABSENT, "seed %llu pod %zu: placed without batching only",
                      (unsigned long long)seed, i);
        int a = atoi(ks__sym_str(with[i]) + 1), b = atoi(ks__sym_str(without[i]) + 1);
        cr_assert_geq(totals[i][a], 0, "seed %llu pod %zu: %s was not feasible without batching",
                      (unsigned long long)seed, i, ks__sym_str(with[i]));
        cr_assert_eq(totals[i][a], totals[i][b],
                     "seed %llu pod %zu: batching chose %s (%lld), the full pass %s (%lld)",
                     (unsigned long long)seed, i, ks__sym_str(with[i]), (long long)totals[i][a],
                     ks__sym_str(without[i]), (long long)totals[i][b]);
    }
    /* The workload has ties (nodes of 12 shapes): some runs part, so the check above ran. */
    cr_assert_gt(parted, 0);
}
