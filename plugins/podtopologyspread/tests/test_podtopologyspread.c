/* PodTopologySpread: upstream podtopologyspread/filtering_test.go (TestPreFilterState,
 * TestPreFilterStateAddPod, TestPreFilterStateRemovePod, TestSingleConstraint,
 * TestMultipleConstraints, TestPreFilterDisabled) and scoring_test.go (TestPreScoreSkip,
 * TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore), v1.34 defaults (NodeInclusionPolicy,
 * MatchLabelKeys and MinDomains on; cases that only exist for a disabled feature gate are left
 * out), plus args, events and cycle-state cloning.
 *
 * Filter outcomes go through the harness (th_filter: PreFilter then Filter on one node). Cycle
 * state, AddPod/RemovePod and scoring a subset of the nodes (upstream's failedNodes) need a cycle
 * of the test's own: the cluster is mirrored into a cache and snapshot here, and the plugin's
 * cycle state is read through the plugin's private debug views. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../podtopologyspread_int.h"
#include "sched/cache.h"
#include "sched/framework.h"
#include "harness.h"
#include "api/intern.h"

extern const ks_plugin_desc ks_plugin_pod_topology_spread;
#define DESC (&ks_plugin_pod_topology_spread)

/* ---- the test cluster ------------------------------------------------------------------------ */

static struct {
    th_cluster *tc; /* nodes, pods and owner objects as the harness sees them */
    th_plugin *th;
    ks_cache *cache; /* the same nodes and pods, for cycles of the test's own */
    ks_snapshot *snap;
    cJSON *args_json;
    struct ks_args args;
    void *self; /* a second instance, called directly */
    ks_cycle *cycles[64];
    size_t ncycles;
    int npods;
} E;

static void env_fini(void)
{
    for (size_t i = 0; i < E.ncycles; i++)
        ks__cycle_free(E.cycles[i]);
    if (E.self)
        DESC->destroy(E.self);
    cJSON_Delete(E.args_json);
    ks__snapshot_free(E.snap);
    ks__cache_free(E.cache);
    memset(&E, 0, sizeof(E));
    th_fini();
}

TestSuite(pod_topology_spread, .init = th_init, .fini = env_fini);

static void env(const char *args)
{
    char err[512] = "", *copy;
    struct ks_error e = {{0}};
    E.tc = th_cluster_new();
    E.th = th_plugin_new(DESC, args);
    E.cache = ks__cache_new();
    E.snap = ks__snapshot_new();
    if (args) {
        copy = strdup(args);
        for (char *p = copy; *p; p++)
            if (*p == '\'')
                *p = '"';
        E.args_json = cJSON_Parse(copy);
        free(copy);
        cr_assert_not_null(E.args_json);
    }
    E.args.json = E.args_json;
    E.self = DESC->create(&E.args, &e);
    snprintf(err, sizeof(err), "%s", e.msg);
    cr_assert_not_null(E.self, "create: %s", err);
}

#define LIST "{'defaultingType':'List'}"

static void node(const char *name, const char *labels, const char *taints)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','labels':{%s}},'spec':{'taints':[%s]},"
             "'status':{'allocatable':{'cpu':'32','memory':'64Gi','pods':'110'}}}",
             name, labels, taints ? taints : "");
    th_cluster_add_node(E.tc, json);
    cr_assert_eq(ks__cache_add_node(E.cache, th_node(json)), 0);
}

/* node-a, node-b in zone1 and node-x, node-y in zone2, each labelled node=<name>. */
static void zones4(void)
{
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
}

/* A pod bound to node_name; meta adds metadata fields ("'namespace':'ns1'"). */
static ks_pod *pod_json(const char *name, const char *node_name, const char *labels,
                        const char *meta, int bound)
{
    char json[1024];
    int own_ns = meta && strstr(meta, "'namespace'");
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s'%s,'labels':{%s}%s%s},"
             "'spec':{'nodeName':'%s','containers':[{'name':'c'}]}}",
             name, own_ns ? "" : ",'namespace':'default'", labels, meta ? "," : "",
             meta ? meta : "", node_name);
    if (bound)
        th_cluster_add_pod(E.tc, json);
    return th_pod(json);
}

static ks_pod *on(const char *node_name, const char *labels)
{
    char name[32];
    snprintf(name, sizeof(name), "p%d", ++E.npods);
    ks_pod *p = pod_json(name, node_name, labels, NULL, 1);
    cr_assert_eq(ks__cache_add_pod(E.cache, p), 0);
    return p;
}

/* n pods with labels on node_name. */
static void spread(const char *node_name, int n, const char *labels)
{
    for (int i = 0; i < n; i++)
        on(node_name, labels);
}

static void on_meta(const char *node_name, const char *labels, const char *meta)
{
    char name[32];
    snprintf(name, sizeof(name), "p%d", ++E.npods);
    cr_assert_eq(ks__cache_add_pod(E.cache, pod_json(name, node_name, labels, meta, 1)), 0);
}

/* A pod that is not in the cluster (for AddPod/RemovePod). */
static ks_pod *loose(const char *name, const char *node_name, const char *labels, const char *meta)
{
    return pod_json(name, node_name, labels, meta, 0);
}

/* Constraint and selector text. */
#define DNS "DoNotSchedule"
#define SA "ScheduleAnyway"
#define HOST "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"
#define SEL(s) ",'labelSelector':" s
#define EXISTS(k) SEL("{'matchExpressions':[{'key':'" k "','operator':'Exists'}]}")
#define FOO EXISTS("foo")
#define BAR EXISTS("bar")
#define NOSEL ""
#define TSC(skew, key, when, sel)                                                                  \
    "{'maxSkew':" #skew ",'topologyKey':'" key "','whenUnsatisfiable':'" when "'" sel "}"
#define TSCX(skew, key, when, sel, more)                                                           \
    "{'maxSkew':" #skew ",'topologyKey':'" key "','whenUnsatisfiable':'" when "'" sel "," more "}"
#define TAINT "{'key':'node.kubernetes.io/unschedulable','effect':'NoSchedule'}"
#define TOLERATE_TAINT                                                                             \
    "'tolerations':[{'key':'node.kubernetes.io/"                                                   \
    "unschedulable','operator':'Exists','effect':'NoSchedule'}]"
#define NODE_SELECTOR_FOO "'nodeSelector':{'foo':''}"
#define AFFINITY(op, key, vals)                                                                    \
    "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"               \
    "'nodeSelectorTerms':[{'matchExpressions':[{'key':'" key "','operator':'" op                   \
    "','values':[" vals "]}]}]}}}"

/* The incoming pod (namespace default). */
static ks_pod *incoming(const char *labels, const char *constraints, const char *spec)
{
    char json[4096];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p','namespace':'default','uid':'incoming','labels':{%s}},"
             "'spec':{'containers':[{'name':'c'}],'topologySpreadConstraints':[%s]%s%s}}",
             labels, constraints, spec ? "," : "", spec ? spec : "");
    return th_pod(json);
}

static ks_cycle *cycle_for(ks_pod *pod)
{
    cr_assert_eq(ks__cache_update_snapshot(E.cache, E.snap), 0);
    cr_assert_lt(E.ncycles, 64);
    ks_cycle *c = ks__cycle_new(E.snap, pod);
    cr_assert_not_null(c);
    c->hooks = th_cluster_hooks(E.tc); /* the Services of th_cluster_add_object */
    E.cycles[E.ncycles++] = c;
    return c;
}

static const ks_node_info *info(const char *name)
{
    cr_assert_eq(ks__cache_update_snapshot(E.cache, E.snap), 0);
    const ks_node_info *ni = ks__snapshot_find(E.snap, ks__intern(name));
    cr_assert_not_null(ni, "no node %s", name);
    return ni;
}

/* ---- checks --------------------------------------------------------------------------------- */

/* spec: "node-a=S node-b=U node-x=R": Success, Unschedulable (skew), UnschedulableAndUnresolvable
 * (missing label), with upstream's reasons. */
static void expect_filter(ks_pod *pod, const char *spec)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '='), r[256];
        cr_assert_not_null(eq);
        *eq = '\0';
        ks_code code = th_filter(E.th, E.tc, pod, tok, r, sizeof(r));
        switch (eq[1]) {
        case 'S':
            cr_expect_eq(code, KS_SUCCESS, "%s: code %d (%s), want Success", tok, code, r);
            cr_expect_str_eq(r, "", "%s", tok);
            break;
        case 'U':
            cr_expect_eq(code, KS_UNSCHEDULABLE, "%s: code %d, want Unschedulable", tok, code);
            cr_expect_str_eq(r, PTS_ERR_CONSTRAINTS, "%s", tok);
            break;
        default:
            cr_expect_eq(code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s: code %d, want UNR", tok,
                         code);
            cr_expect_str_eq(r, PTS_ERR_MISSING_LABEL, "%s", tok);
            break;
        }
    }
}

/* Runs PreFilter on a cycle of our own; returns the cycle (state in it). */
static ks_cycle *prefilter(ks_pod *pod, ks_code want)
{
    ks_cycle *c = cycle_for(pod);
    ks_status st;
    ks_prefilter_result res = {0};
    ks__status_reset(&st);
    ks_code code = DESC->pre_filter(E.self, c, pod, &res, &st);
    cr_assert_eq(code, want, "PreFilter returned %d, want %d", code, want);
    cr_assert_eq(res.used, 0, "PreFilter never restricts the nodes");
    free(res.nodes);
    return c;
}

/* spec: "zone1=3 zone2=2" (=N alone is the "" domain); exactly these domains. */
static void expect_counts(ks_cycle *c, int prescore, size_t ci, const char *spec)
{
    char buf[512], *save = NULL;
    long n = 0;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), n++) {
        char *eq = strchr(tok, '=');
        int64_t got = -1;
        cr_assert_not_null(eq);
        *eq = '\0';
        cr_assert_eq(pts_debug_count(c, prescore, ci, tok, &got), 1,
                     "constraint %zu: no domain \"%s\"", ci, tok);
        cr_expect_eq(got, strtoll(eq + 1, NULL, 10), "constraint %zu, domain %s: %lld, want %s", ci,
                     tok, (long long)got, eq + 1);
    }
    cr_expect_eq(pts_debug_domains(c, prescore, ci), n, "constraint %zu: %ld domains, want %ld", ci,
                 pts_debug_domains(c, prescore, ci), n);
}

static void expect_min(ks_cycle *c, size_t ci, int64_t want)
{
    cr_expect_eq(pts_debug_min_match(c, ci), want, "constraint %zu: minimum %lld, want %lld", ci,
                 (long long)pts_debug_min_match(c, ci), (long long)want);
}

static ks_code add_or_remove(ks_cycle *c, ks_pod *pod, ks_pod *other, const char *node_name,
                             int add)
{
    ks_status st;
    ks__status_reset(&st);
    return (add ? DESC->pre_filter_add_pod : DESC->pre_filter_remove_pod)(E.self, c, pod, other,
                                                                          info(node_name), &st);
}

/* PreScore, Score and NormalizeScore with the feasible nodes named in `feasible` (in that order);
 * raw and normalized get one entry per feasible node. */
static ks_code score(ks_pod *pod, const char *feasible, int64_t *raw, int64_t *norm,
                     ks_cycle **cycle_out)
{
    const ks_node_info *nodes[32];
    ks_node_score scores[32];
    char buf[512], *save = NULL;
    size_t n = 0;
    ks_status st;
    ks_cycle *c = cycle_for(pod);
    snprintf(buf, sizeof(buf), "%s", feasible);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        nodes[n++] = info(tok);
    if (cycle_out)
        *cycle_out = c;
    ks__status_reset(&st);
    ks_code code = DESC->pre_score(E.self, c, pod, nodes, n, &st);
    if (code != KS_SUCCESS)
        return code;
    for (size_t i = 0; i < n; i++) {
        ks__status_reset(&st);
        scores[i].node = nodes[i];
        cr_assert_eq(DESC->score(E.self, c, pod, nodes[i], &scores[i].score, &st), KS_SUCCESS);
        if (raw)
            raw[i] = scores[i].score;
    }
    ks__status_reset(&st);
    cr_assert_eq(DESC->normalize_score(E.self, c, pod, scores, n, &st), KS_SUCCESS);
    for (size_t i = 0; norm && i < n; i++)
        norm[i] = scores[i].score;
    return KS_SUCCESS;
}

/* want: "20 60 100 0", one per feasible node. */
static void expect_scores(ks_pod *pod, const char *feasible, const char *want)
{
    int64_t norm[32];
    char buf[256], *save = NULL;
    size_t i = 0;
    cr_assert_eq(score(pod, feasible, NULL, norm, NULL), KS_SUCCESS);
    snprintf(buf, sizeof(buf), "%s", want);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++)
        cr_expect_eq(norm[i], strtoll(tok, NULL, 10), "node %zu of \"%s\": %lld, want %s", i,
                     feasible, (long long)norm[i], tok);
}

#define HOSTS4 "node-a node-b node-c node-d"

static void hosts(const char *names)
{
    char buf[256], *save = NULL, labels[128];
    snprintf(buf, sizeof(buf), "%s", names);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        snprintf(labels, sizeof(labels), "'" HOST "':'%s'", tok);
        node(tok, labels, NULL);
    }
}

/* ==== PreFilter state (TestPreFilterState) ==================================================== */

Test(pod_topology_spread, prefilter_counts_zero_in_a_clean_cluster)
{
    env(LIST);
    zones4();
    ks_cycle *c = prefilter(
        incoming("'foo':''", TSC(5, "zone", DNS, SEL("{'matchLabels':{'foo':'bar'}}")), NULL),
        KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 0), 1);
    expect_counts(c, 0, 0, "zone1=0 zone2=0");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, prefilter_counts_matching_pods_per_zone)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':''");
    spread("node-b", 1, "'foo':''");
    spread("node-y", 2, "'foo':''");
    ks_cycle *c = prefilter(incoming("'foo':''", TSC(1, "zone", DNS, FOO), NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=3 zone2=2");
    expect_min(c, 0, 2);
}

Test(pod_topology_spread, prefilter_null_selector_counts_nothing)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':''");
    spread("node-y", 2, "'foo':''");
    ks_cycle *c = prefilter(incoming("'foo':''", TSC(1, "zone", DNS, NOSEL), NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=0 zone2=0");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, prefilter_empty_zone_is_the_minimum)
{
    env(LIST);
    zones4();
    node("node-o", "'zone':'zone3','node':'node-o'", NULL);
    node("node-p", "'zone':'zone3','node':'node-p'", NULL);
    spread("node-a", 2, "'foo':''");
    spread("node-b", 1, "'foo':''");
    spread("node-y", 2, "'foo':''");
    ks_cycle *c = prefilter(incoming("'foo':''", TSC(1, "zone", DNS, FOO), NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=3 zone2=2 zone3=0");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, prefilter_ignores_other_namespaces)
{
    env(LIST);
    zones4();
    on("node-a", "'foo':''");
    on_meta("node-a", "'foo':''", "'namespace':'ns1'");
    on("node-b", "'foo':''");
    on_meta("node-y", "'foo':''", "'namespace':'ns2'");
    on("node-y", "'foo':''");
    ks_cycle *c = prefilter(incoming("'foo':''", TSC(1, "zone", DNS, FOO), NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=2 zone2=1");
    expect_min(c, 0, 1);
}

static void two_constraint_pods(void)
{
    spread("node-a", 2, "'foo':''");
    spread("node-b", 1, "'foo':''");
    spread("node-y", 4, "'foo':''");
}

Test(pod_topology_spread, prefilter_counts_each_constraint_separately)
{
    env(LIST);
    zones4();
    two_constraint_pods();
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSC(1, "zone", DNS, FOO) "," TSC(1, "node", DNS, FOO), NULL),
                  KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 0), 2);
    expect_counts(c, 0, 0, "zone1=3 zone2=4");
    expect_counts(c, 0, 1, "node-a=2 node-b=1 node-x=0 node-y=4");
    expect_min(c, 0, 3);
    expect_min(c, 1, 0);
}

Test(pod_topology_spread, prefilter_leaves_schedule_anyway_constraints_to_scoring)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
    two_constraint_pods();
    ks_cycle *c = prefilter(incoming("'foo':''",
                                     TSC(1, "zone", SA, FOO) "," TSC(1, "zone", DNS, FOO) "," TSC(
                                         1, "node", SA, FOO) "," TSC(1, "node", DNS, FOO),
                                     NULL),
                            KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 0), 2);
    expect_counts(c, 0, 0, "zone1=3 zone2=4");
    expect_counts(c, 0, 1, "node-a=2 node-b=1 node-y=4");
    expect_min(c, 1, 1);
}

Test(pod_topology_spread, prefilter_constraints_use_their_own_selectors)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
    on("node-a", "'foo':''");
    on("node-b", "'bar':''");
    ks_cycle *c = prefilter(
        incoming("'foo':'','bar':''", TSC(1, "zone", DNS, FOO) "," TSC(1, "node", DNS, BAR), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=1 zone2=0");
    expect_counts(c, 0, 1, "node-a=0 node-b=1 node-y=0");
}

Test(pod_topology_spread, prefilter_constraints_use_their_own_selectors_on_mixed_pods)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
    on("node-a", "'foo':''");
    on("node-a", "'foo':'','bar':''");
    on("node-b", "'foo':''");
    on("node-y", "'foo':''");
    on("node-y", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    on("node-y", "'foo':'','bar':''");
    ks_cycle *c = prefilter(
        incoming("'foo':'','bar':''", TSC(1, "zone", DNS, FOO) "," TSC(1, "node", DNS, BAR), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=3 zone2=4");
    expect_counts(c, 0, 1, "node-a=1 node-b=0 node-y=2");
    expect_min(c, 1, 0);
}

Test(pod_topology_spread, prefilter_skips_nodes_outside_required_node_affinity)
{
    env(LIST);
    zones4();
    two_constraint_pods();
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSC(1, "zone", DNS, FOO) "," TSC(1, "node", DNS, FOO),
                           AFFINITY("NotIn", "node", "'node-x'")),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=3 zone2=4");
    expect_counts(c, 0, 1, "node-a=2 node-b=1 node-y=4");
    expect_min(c, 1, 1);
}

Test(pod_topology_spread, prefilter_default_constraints_take_the_service_selector)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':3,'topologyKey':'node','whenUnsatisfiable':'DoNotSchedule'},"
        "{'maxSkew':2,'topologyKey':'node','whenUnsatisfiable':'ScheduleAnyway'},"
        "{'maxSkew':5,'topologyKey':'rack','whenUnsatisfiable':'DoNotSchedule'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'foo':'bar'}}}");
    ks_cycle *c = prefilter(incoming("'foo':'bar','baz':'kar'", "", NULL), KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 0), 2);
    expect_counts(c, 0, 0, "");
    expect_counts(c, 0, 1, "");
    expect_min(c, 0, INT32_MAX);
}

Test(pod_topology_spread, default_constraints_count_pods_the_service_selects)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'app':'web'}}}");
    zones4();
    spread("node-a", 2, "'app':'web'");
    spread("node-x", 1, "'app':'web'");
    spread("node-y", 3, "'app':'db'");
    ks_pod *p = incoming("'app':'web'", "", NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=2 zone2=1");
    expect_filter(p, "node-a=U node-b=U node-x=S node-y=S");
}

Test(pod_topology_spread, default_selector_is_the_and_of_all_owners)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'app':'web'}}}");
    th_cluster_add_object(E.tc,
                          "{'kind':'ReplicaSet','metadata':{'name':'rs','namespace':'default'},"
                          "'spec':{'selector':{'matchLabels':{'tier':'front'}}}}");
    zones4();
    spread("node-a", 2, "'app':'web'");                /* the Service's, not the ReplicaSet's */
    spread("node-x", 1, "'app':'web','tier':'front'"); /* both */
    ks_cycle *c = prefilter(incoming("'app':'web','tier':'front'", "", NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=0 zone2=1");
}

Test(pod_topology_spread, default_constraints_need_an_owner_that_selects_the_pod)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':3,'topologyKey':'node','whenUnsatisfiable':'DoNotSchedule'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'baz':'kep'}}}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'other','namespace':'ns1'},"
                                "'spec':{'selector':{'foo':'bar'}}}");
    zones4();
    ks_pod *p = incoming("'foo':'bar'", "", NULL);
    prefilter(p, KS_SKIP);
    expect_filter(p, "node-a=S node-x=S");
}

Test(pod_topology_spread, pod_constraints_replace_the_default_ones)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':2,'topologyKey':'node','whenUnsatisfiable':'DoNotSchedule'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'foo':'bar'}}}");
    ks_cycle *c =
        prefilter(incoming("'foo':'bar','baz':'tar'",
                           TSC(1, "zone", DNS, SEL("{'matchLabels':{'baz':'tar'}}")) "," TSC(
                               2, "planet", SA, SEL("{'matchLabels':{'fot':'rok'}}")),
                           NULL),
                  KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 0), 1);
    expect_counts(c, 0, 0, "");
}

Test(pod_topology_spread, prefilter_skips_default_schedule_anyway_constraints)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':2,'topologyKey':'node','whenUnsatisfiable':'ScheduleAnyway'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'foo':'bar'}}}");
    prefilter(incoming("'foo':'bar'", "", NULL), KS_SKIP);
}

Test(pod_topology_spread, prefilter_skips_pod_without_constraints)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    ks_pod *p = incoming("'foo':''", "", NULL);
    prefilter(p, KS_SKIP);
    cr_assert_eq(pts_debug_nconstraints(E.cycles[0], 0), -1, "Skip writes no state");
    expect_filter(p, "node-a=S");
}

Test(pod_topology_spread, system_defaults_never_filter)
{
    env(NULL);
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'foo':'bar'}}}");
    hosts("node-a node-b");
    spread("node-a", 9, "'foo':'bar'");
    ks_pod *p = incoming("'foo':'bar'", "", NULL);
    prefilter(p, KS_SKIP);
    expect_filter(p, "node-a=S node-b=S");
}

/* Three nodes labelled node=..., node-a and node-b also foo='', node-c bar=''; node-c tainted when
 * asked. Pods: one bar on node-a, two on node-b, an unlabelled one on node-c. */
static void inclusion_cluster(int taint_c)
{
    node("node-a", "'node':'node-a','foo':''", NULL);
    node("node-b", "'node':'node-b','foo':''", NULL);
    node("node-c", "'node':'node-c','bar':''", taint_c ? TAINT : NULL);
    on("node-a", "'bar':''");
    spread("node-b", 2, "'bar':''");
    on("node-c", "");
}

Test(pod_topology_spread, node_affinity_policy_honor_excludes_nodes_outside_node_selector)
{
    env(LIST);
    inclusion_cluster(0);
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSC(1, "node", DNS, BAR), NODE_SELECTOR_FOO), KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, node_affinity_policy_ignore_counts_nodes_outside_node_selector)
{
    env(LIST);
    inclusion_cluster(0);
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSCX(1, "node", DNS, BAR, "'nodeAffinityPolicy':'Ignore'"),
                           NODE_SELECTOR_FOO),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2 node-c=0");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, node_affinity_policy_honor_excludes_nodes_outside_required_affinity)
{
    env(LIST);
    inclusion_cluster(0);
    ks_cycle *c = prefilter(
        incoming("'foo':''", TSC(1, "node", DNS, BAR), AFFINITY("In", "foo", "''")), KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2");
}

Test(pod_topology_spread, node_affinity_policy_ignore_counts_nodes_outside_required_affinity)
{
    env(LIST);
    inclusion_cluster(0);
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSCX(1, "node", DNS, BAR, "'nodeAffinityPolicy':'Ignore'"),
                           AFFINITY("In", "foo", "''")),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2 node-c=0");
}

Test(pod_topology_spread, node_taints_policy_ignore_counts_tainted_nodes)
{
    env(LIST);
    inclusion_cluster(1);
    ks_cycle *c = prefilter(incoming("'foo':''", TSC(1, "node", DNS, BAR), NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2 node-c=0");
}

Test(pod_topology_spread, node_taints_policy_honor_excludes_untolerated_tainted_nodes)
{
    env(LIST);
    inclusion_cluster(1);
    ks_cycle *c = prefilter(
        incoming("'foo':''", TSCX(1, "node", DNS, BAR, "'nodeTaintsPolicy':'Honor'"), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2");
}

Test(pod_topology_spread, node_taints_policy_honor_counts_tolerated_tainted_nodes)
{
    env(LIST);
    inclusion_cluster(1);
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSCX(1, "node", DNS, BAR, "'nodeTaintsPolicy':'Honor'"),
                           TOLERATE_TAINT),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2 node-c=0");
}

Test(pod_topology_spread, inclusion_policies_apply_per_constraint_zone_honor_node_ignore)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a','foo':''", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x','foo':''", NULL);
    spread("node-b", 2, "'foo':''");
    on("node-x", "'foo':''");
    ks_cycle *c = prefilter(incoming("'foo':''",
                                     TSC(1, "zone", DNS, FOO) "," TSCX(
                                         1, "node", DNS, FOO, "'nodeAffinityPolicy':'Ignore'"),
                                     NODE_SELECTOR_FOO),
                            KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=0 zone2=1");
    expect_counts(c, 0, 1, "node-a=0 node-b=2 node-x=1");
}

Test(pod_topology_spread, inclusion_policies_apply_per_constraint_zone_taints_honor)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a','foo':''", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", TAINT);
    node("node-x", "'zone':'zone2','node':'node-x','foo':''", NULL);
    spread("node-b", 2, "'foo':''");
    on("node-x", "'foo':''");
    ks_cycle *c =
        prefilter(incoming("'foo':''",
                           TSCX(1, "zone", DNS, FOO,
                                "'nodeTaintsPolicy':'Honor'") "," TSC(1, "node", DNS, FOO),
                           NULL),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=0 zone2=1");
    expect_counts(c, 0, 1, "node-a=0 node-b=2 node-x=1");
}

Test(pod_topology_spread, inclusion_policies_node_selector_excludes_for_both_constraints)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b','foo':''", TAINT);
    node("node-x", "'zone':'zone2','node':'node-x','foo':''", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
    spread("node-a", 2, "'foo':''");
    on("node-x", "'foo':''");
    on("node-y", "'foo':''");
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSC(1, "zone", DNS, FOO) "," TSC(1, "node", DNS, FOO),
                           NODE_SELECTOR_FOO),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=0 zone2=1");
    expect_counts(c, 0, 1, "node-b=0 node-x=1");
}

Test(pod_topology_spread, inclusion_policies_zone_ignore_node_honor_both)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b','foo':''", TAINT);
    node("node-x", "'zone':'zone2','node':'node-x','foo':''", NULL);
    node("node-y", "'zone':'zone2','node':'node-y','foo':''", NULL);
    spread("node-a", 2, "'foo':''");
    spread("node-x", 2, "'foo':''");
    on("node-y", "'foo':''");
    ks_cycle *c =
        prefilter(incoming("'foo':''",
                           TSCX(1, "zone", DNS, FOO, "'nodeAffinityPolicy':'Ignore'") "," TSCX(
                               1, "node", DNS, FOO, "'nodeTaintsPolicy':'Honor'"),
                           NODE_SELECTOR_FOO),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=2 zone2=3");
    expect_counts(c, 0, 1, "node-x=2 node-y=1");
    expect_min(c, 0, 2);
    expect_min(c, 1, 1);
}

static void match_label_keys_cluster(void)
{
    zones4();
    on("node-a", "'foo':''");
    on("node-a", "'foo':'','bar':'a'");
    on("node-b", "'foo':''");
    on("node-y", "'foo':'','bar':'a'");
    on("node-y", "'bar':''");
}

Test(pod_topology_spread, match_label_keys_are_anded_with_the_selector)
{
    env(LIST);
    match_label_keys_cluster();
    ks_cycle *c = prefilter(
        incoming("'foo':'','bar':'a'", TSCX(1, "zone", DNS, FOO, "'matchLabelKeys':['bar']"), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=1 zone2=1");
}

Test(pod_topology_spread, match_label_keys_with_empty_selector_select_by_the_pod_values)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':'a'");
    on("node-b", "'foo':'a'");
    spread("node-y", 2, "'foo':'a'");
    on("node-y", "'foo':'b'");
    ks_cycle *c = prefilter(
        incoming("'foo':'a'", TSCX(1, "zone", DNS, SEL("{}"), "'matchLabelKeys':['foo']"), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=3 zone2=2");
}

Test(pod_topology_spread, match_label_keys_absent_from_the_pod_leave_a_nil_selector_empty)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':'a'");
    spread("node-y", 2, "'foo':'a'");
    ks_cycle *c = prefilter(
        incoming("'foo':''", TSCX(1, "zone", DNS, NOSEL, "'matchLabelKeys':['bar']"), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=0 zone2=0");
}

/* Upstream merges the matchLabelKeys set first and adds the selector's requirements; a nil
 * selector (labels.Nothing()) has none, so the merged selector selects by the keys alone. */
Test(pod_topology_spread, match_label_keys_present_on_the_pod_make_a_nil_selector_select)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':'a'");
    on("node-y", "'foo':'b'");
    ks_cycle *c = prefilter(
        incoming("'foo':'a'", TSCX(1, "zone", DNS, NOSEL, "'matchLabelKeys':['foo']"), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=2 zone2=0");
}

Test(pod_topology_spread, match_label_keys_missing_on_the_pod_are_ignored)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':'a'");
    on("node-b", "'foo':'a'");
    spread("node-y", 2, "'foo':'a'");
    ks_cycle *c =
        prefilter(incoming("'foo':''", TSCX(1, "zone", DNS, FOO, "'matchLabelKeys':['bar']"), NULL),
                  KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=3 zone2=2");
}

Test(pod_topology_spread, two_constraints_on_the_same_key_count_separately)
{
    env(LIST);
    zones4();
    on("node-a", "'foo':'','bar':''");
    on("node-b", "'foo':''");
    on("node-x", "'bar':''");
    on("node-y", "'foo':'','bar':''");
    on("node-y", "'bar':''");
    ks_cycle *c = prefilter(
        incoming("'foo':'','bar':''", TSC(1, "zone", DNS, FOO) "," TSC(1, "zone", DNS, BAR), NULL),
        KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=2 zone2=1");
    expect_counts(c, 0, 1, "zone1=1 zone2=3");
    expect_min(c, 0, 1);
    expect_min(c, 1, 1);
}

/* ==== AddPod / RemovePod (TestPreFilterStateAddPod, TestPreFilterStateRemovePod) ============== */

#define NODE_C TSC(1, "node", DNS, FOO)
#define ZONE_C TSC(1, "zone", DNS, FOO)

static void two_nodes_zone1(void)
{
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
}

Test(pod_topology_spread, add_pod_to_empty_cluster_moves_the_minimum)
{
    env(LIST);
    two_nodes_zone1();
    ks_pod *p = incoming("'foo':''", NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    cr_assert_eq(add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1),
                 KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=0");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, add_pod_raises_the_minimum)
{
    env(LIST);
    two_nodes_zone1();
    on("node-b", "'foo':''");
    ks_pod *p = incoming("'foo':''", NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "node-a=1 node-b=1");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, add_pod_in_another_namespace_changes_nothing)
{
    env(LIST);
    two_nodes_zone1();
    on("node-b", "'foo':''");
    ks_pod *p = incoming("'foo':''", NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", "'namespace':'ns1'"), "node-a", 1);
    expect_counts(c, 0, 0, "node-a=0 node-b=1");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, add_pod_on_non_critical_node_keeps_the_minimum)
{
    env(LIST);
    two_nodes_zone1();
    on("node-b", "'foo':''");
    ks_pod *p = incoming("'foo':''", NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-b2", "node-b", "'foo':''", NULL), "node-b", 1);
    expect_counts(c, 0, 0, "node-a=0 node-b=2");
    expect_min(c, 0, 0);
}

static void nodes_a_x(void)
{
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
}

Test(pod_topology_spread, add_pod_updates_zone_and_node_constraints)
{
    env(LIST);
    nodes_a_x();
    ks_pod *p = incoming("'foo':''", ZONE_C "," NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "zone1=1 zone2=0");
    expect_counts(c, 0, 1, "node-a=1 node-x=0");
    expect_min(c, 0, 0);
    expect_min(c, 1, 0);
}

Test(pod_topology_spread, add_pod_raises_both_minimums)
{
    env(LIST);
    nodes_a_x();
    on("node-x", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C "," NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "zone1=1 zone2=1");
    expect_counts(c, 0, 1, "node-a=1 node-x=1");
    expect_min(c, 0, 1);
    expect_min(c, 1, 1);
}

Test(pod_topology_spread, add_pod_raises_node_minimum_but_not_zone_minimum)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    spread("node-b", 2, "'foo':''");
    on("node-x", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C "," NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "zone1=3 zone2=1");
    expect_counts(c, 0, 1, "node-a=1 node-b=2 node-x=1");
    expect_min(c, 0, 1);
    expect_min(c, 1, 1);
}

Test(pod_topology_spread, add_pod_counts_only_for_constraints_it_matches)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    on("node-b", "'foo':'','bar':''");
    on("node-x", "'foo':'','bar':''");
    on("node-x", "'bar':''");
    ks_pod *p = incoming("'foo':'','bar':''", ZONE_C "," TSC(1, "node", DNS, BAR), NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "zone1=2 zone2=1");
    expect_counts(c, 0, 1, "node-a=0 node-b=1 node-x=2");
    expect_min(c, 0, 1);
    expect_min(c, 1, 0);
    add_or_remove(c, p, loose("p-a2", "node-a", "'foo':'','bar':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "zone1=3 zone2=1");
    expect_counts(c, 0, 1, "node-a=1 node-b=1 node-x=2");
    expect_min(c, 1, 1);
}

/* node-a (foo=bar) is outside the incoming pod's affinity (foo NotIn [bar]). */
static void affinity_pair(const char *taint_a)
{
    node("node-a", "'zone':'zone1','node':'node-a','foo':'bar'", taint_a);
    node("node-b", "'zone':'zone2','node':'node-b','foo':''", NULL);
}

Test(pod_topology_spread, add_pod_on_node_outside_affinity_is_not_counted)
{
    env(LIST);
    affinity_pair(NULL);
    on("node-a", "'foo':'','zone':'zone1'");
    on("node-b", "'foo':'','zone':'zone2'");
    ks_pod *p = incoming("'foo':''", ZONE_C, AFFINITY("NotIn", "foo", "'bar'"));
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a9", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(c, 0, 0, "zone2=1");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, add_pod_on_node_inside_affinity_is_counted)
{
    env(LIST);
    affinity_pair(NULL);
    on("node-a", "'foo':'','zone':'zone1'");
    on("node-b", "'foo':'','zone':'zone2'");
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-b9", "node-b", "'foo':'','zone':'zone2'", NULL), "node-b", 1);
    expect_counts(c, 0, 0, "zone1=1 zone2=2");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, add_pod_not_matching_the_selector_changes_nothing)
{
    env(LIST);
    affinity_pair(NULL);
    on("node-a", "'foo':'','zone':'zone1'");
    on("node-b", "'foo':'','zone':'zone2'");
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-b9", "node-b", "'zone':'zone2'", NULL), "node-b", 1);
    expect_counts(c, 0, 0, "zone1=1 zone2=1");
}

Test(pod_topology_spread, add_pod_counts_tainted_node_by_default)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", TAINT);
    node("node-b", "'zone':'zone2','node':'node-b'", NULL);
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C, TOLERATE_TAINT);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-b9", "node-b", "'foo':''", NULL), "node-b", 1);
    expect_counts(c, 0, 0, "zone1=1 zone2=2");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, remove_pod_keeps_minimum_when_another_zone_is_lower)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    ks_pod *a1 = on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-x", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    cr_assert_eq(add_or_remove(c, p, a1, "node-a", 0), KS_SUCCESS);
    expect_counts(c, 0, 0, "zone1=1 zone2=1");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, remove_pod_lowers_the_minimum)
{
    env(LIST);
    zones4();
    ks_pod *a1 = on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-x", "'foo':''");
    on("node-y", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, a1, "node-a", 0);
    expect_counts(c, 0, 0, "zone1=1 zone2=2");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, remove_pod_not_matching_changes_nothing)
{
    env(LIST);
    zones4();
    ks_pod *a0 = on("node-a", "'bar':''");
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-x", "'foo':''");
    on("node-y", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, a0, "node-a", 0);
    expect_counts(c, 0, 0, "zone1=2 zone2=2");
    /* A pod that was never there, not matching either. */
    add_or_remove(c, p, loose("p-a0", "node-a", "'bar':''", NULL), "node-a", 0);
    expect_counts(c, 0, 0, "zone1=2 zone2=2");
    expect_min(c, 0, 2);
}

Test(pod_topology_spread, remove_pod_updates_zone_and_node_constraints)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    ks_pod *x1 = on("node-x", "'foo':''");
    on("node-x", "'foo':''");
    ks_pod *p = incoming("'foo':''", ZONE_C "," NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, x1, "node-x", 0);
    expect_counts(c, 0, 0, "zone1=3 zone2=1");
    expect_counts(c, 0, 1, "node-a=2 node-b=1 node-x=1");
    expect_min(c, 0, 1);
    expect_min(c, 1, 1);
}

Test(pod_topology_spread, remove_pod_on_node_outside_affinity_is_not_counted)
{
    env(LIST);
    affinity_pair(NULL);
    on("node-a", "'foo':'','zone':'zone1'");
    on("node-b", "'foo':'','zone':'zone2'");
    ks_pod *p = incoming("'foo':''", ZONE_C, AFFINITY("NotIn", "foo", "'bar'"));
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, loose("p-a1", "node-a", "'foo':'','zone':'zone1'", NULL), "node-a", 0);
    expect_counts(c, 0, 0, "zone2=1");
    expect_min(c, 0, 1);
}

Test(pod_topology_spread, remove_pod_on_node_inside_affinity_is_counted)
{
    env(LIST);
    affinity_pair(NULL);
    on("node-a", "'foo':'','zone':'zone1'");
    ks_pod *b1 = on("node-b", "'foo':'','zone':'zone2'");
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    add_or_remove(c, p, b1, "node-b", 0);
    expect_counts(c, 0, 0, "zone1=1 zone2=0");
    expect_min(c, 0, 0);
}

Test(pod_topology_spread, add_pod_changes_only_the_cloned_state)
{
    env(LIST);
    two_nodes_zone1();
    ks_pod *p = incoming("'foo':''", NODE_C, NULL);
    ks_cycle *c = prefilter(p, KS_SUCCESS);
    ks_cycle *clone = ks__cycle_clone(c);
    cr_assert_not_null(clone);
    E.cycles[E.ncycles++] = clone;
    add_or_remove(clone, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1);
    add_or_remove(clone, p, loose("p-a2", "node-a", "'foo':''", NULL), "node-a", 1);
    expect_counts(clone, 0, 0, "node-a=2 node-b=0");
    expect_counts(c, 0, 0, "node-a=0 node-b=0");
    /* Filter on each: node-a is now 2 above node-b in the clone only. */
    ks_status st;
    ks__status_reset(&st);
    cr_assert_eq(DESC->filter(E.self, clone, p, info("node-a"), &st), KS_UNSCHEDULABLE);
    ks__status_reset(&st);
    cr_assert_eq(DESC->filter(E.self, c, p, info("node-a"), &st), KS_SUCCESS);
}

Test(pod_topology_spread, add_pod_without_prefilter_state_is_an_error)
{
    env(LIST);
    two_nodes_zone1();
    ks_pod *p = incoming("'foo':''", NODE_C, NULL);
    ks_cycle *c = cycle_for(p);
    cr_assert_eq(add_or_remove(c, p, loose("p-a1", "node-a", "'foo':''", NULL), "node-a", 1),
                 KS_ERROR);
}

/* ==== Filter, one constraint (TestSingleConstraint) ============================================
 */

Test(pod_topology_spread, filter_admits_everywhere_without_existing_pods)
{
    env(LIST);
    zones4();
    expect_filter(incoming("'foo':''", ZONE_C, NULL), "node-a=S node-b=S node-x=S node-y=S");
    expect_filter(incoming("'foo':''", TSC(1, "zone", DNS, BAR), NULL),
                  "node-a=S node-b=S node-x=S node-y=S");
}

Test(pod_topology_spread, filter_ignores_pods_in_other_namespaces)
{
    env(LIST);
    zones4();
    on_meta("node-a", "'foo':''", "'namespace':'ns1'");
    on_meta("node-a", "'foo':''", "'namespace':'ns2'");
    on("node-x", "'foo':''");
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':''", ZONE_C, NULL), "node-a=S node-b=S node-x=U node-y=U");
}

Test(pod_topology_spread, filter_null_selector_matches_no_pod)
{
    env(LIST);
    zones4();
    on("node-x", "'foo':''");
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':''", TSC(1, "zone", DNS, NOSEL), NULL),
                  "node-a=S node-b=S node-x=S node-y=S");
}

Test(pod_topology_spread, filter_admits_everywhere_on_even_zones)
{
    env(LIST);
    zones4();
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    spread("node-y", 3, "'foo':''");
    expect_filter(incoming("'foo':''", ZONE_C, NULL), "node-a=S node-b=S node-x=S node-y=S");
}

Test(pod_topology_spread, filter_rejects_node_missing_the_topology_label)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zon':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-x", "'foo':''");
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':''", ZONE_C, NULL), "node-a=S node-b=R node-x=U node-y=U");
}

Test(pod_topology_spread, filter_rejects_every_node_without_the_key)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-x", "'zone':'zone2','node':'node-x'", NULL);
    expect_filter(incoming("'foo':''", TSC(1, "rack", DNS, FOO), NULL), "node-a=R node-x=R");
}

/* Matching pods 2/1/0/3 on node-a/b/x/y. */
static void spread_2103(void)
{
    zones4();
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    spread("node-y", 3, "'foo':''");
}

Test(pod_topology_spread, filter_admits_only_the_emptiest_node)
{
    env(LIST);
    spread_2103();
    expect_filter(incoming("'foo':''", NODE_C, NULL), "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_max_skew_two_admits_two_nodes)
{
    env(LIST);
    spread_2103();
    expect_filter(incoming("'foo':''", TSC(2, "node", DNS, FOO), NULL),
                  "node-a=U node-b=S node-x=S node-y=U");
}

Test(pod_topology_spread, filter_pod_not_matching_itself_adds_no_skew)
{
    env(LIST);
    spread_2103();
    expect_filter(incoming("'bar':''", NODE_C, NULL), "node-a=U node-b=S node-x=S node-y=U");
}

Test(pod_topology_spread, filter_counts_only_nodes_in_required_affinity)
{
    env(LIST);
    spread_2103();
    /* Only node-a and node-y are counted (2/3): node-a fits; node-b and node-x are not counted,
     * their domains count 0 and pass (NodeAffinity would reject them). */
    expect_filter(incoming("'foo':''", NODE_C, AFFINITY("In", "node", "'node-a','node-y'")),
                  "node-a=S node-b=S node-x=S node-y=U");
}

Test(pod_topology_spread, filter_ignores_terminating_pods)
{
    env(LIST);
    node("node-a", "'node':'node-a'", NULL);
    node("node-b", "'node':'node-b'", NULL);
    on_meta("node-a", "'foo':''", "'deletionTimestamp':'2024-01-01T00:00:00Z'");
    on("node-b", "'foo':''");
    expect_filter(incoming("'foo':''", NODE_C, NULL), "node-a=S node-b=U");
}

Test(pod_topology_spread, filter_zone_counts_exclude_nodes_outside_affinity)
{
    env(LIST);
    zones4();
    spread("node-b", 2, "'foo':''");
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':''", ZONE_C, AFFINITY("NotIn", "node", "'node-b'")),
                  "node-a=S node-b=S node-x=U node-y=U");
}

static void three_hosts_221(void)
{
    node("node-a", "'node':'node-a'", NULL);
    node("node-b", "'node':'node-b'", NULL);
    node("node-c", "'node':'node-c'", NULL);
    spread("node-a", 2, "'foo':''");
    spread("node-b", 2, "'foo':''");
    on("node-c", "'foo':''");
}

Test(pod_topology_spread, filter_fewer_domains_than_min_domains_makes_the_minimum_zero)
{
    env(LIST);
    three_hosts_221();
    expect_filter(incoming("'foo':''", TSCX(2, "node", DNS, FOO, "'minDomains':4"), NULL),
                  "node-a=U node-b=U node-c=S");
}

Test(pod_topology_spread, filter_enough_domains_keep_the_real_minimum)
{
    env(LIST);
    three_hosts_221();
    expect_filter(incoming("'foo':''", TSCX(2, "node", DNS, FOO, "'minDomains':2"), NULL),
                  "node-a=S node-b=S node-c=S");
}

static void zones_21(void)
{
    zones4();
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-y", "'foo':''");
}

Test(pod_topology_spread, filter_min_domains_on_zones)
{
    env(LIST);
    zones_21();
    expect_filter(incoming("'foo':''", TSCX(2, "zone", DNS, FOO, "'minDomains':3"), NULL),
                  "node-a=U node-b=U node-x=S node-y=S");
    expect_filter(incoming("'foo':''", TSCX(2, "zone", DNS, FOO, "'minDomains':1"), NULL),
                  "node-a=S node-b=S node-x=S node-y=S");
}

/* Pods 1/1/0/1 on node-a/b/x/y labelled node=...; node-y lacks foo (and is tainted if asked). */
static void policy_hosts(int taint_y)
{
    node("node-a", "'node':'node-a','foo':''", NULL);
    node("node-b", "'node':'node-b','foo':''", NULL);
    node("node-x", "'node':'node-x','foo':''", NULL);
    node("node-y", taint_y ? "'node':'node-y','foo':''" : "'node':'node-y'",
         taint_y ? TAINT : NULL);
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-y", "'foo':''");
}

Test(pod_topology_spread, filter_node_affinity_policy_honor)
{
    env(LIST);
    policy_hosts(0);
    expect_filter(incoming("'foo':''", NODE_C, NODE_SELECTOR_FOO),
                  "node-a=U node-b=U node-x=S node-y=S");
    expect_filter(incoming("'foo':''", NODE_C, AFFINITY("In", "foo", "''")),
                  "node-a=U node-b=U node-x=S node-y=S");
}

Test(pod_topology_spread, filter_node_affinity_policy_ignore)
{
    env(LIST);
    policy_hosts(0);
    expect_filter(incoming("'foo':''", TSCX(1, "node", DNS, FOO, "'nodeAffinityPolicy':'Ignore'"),
                           NODE_SELECTOR_FOO),
                  "node-a=U node-b=U node-x=S node-y=U");
    expect_filter(incoming("'foo':''", TSCX(1, "node", DNS, FOO, "'nodeAffinityPolicy':'Ignore'"),
                           AFFINITY("In", "foo", "''")),
                  "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_node_taints_policy)
{
    env(LIST);
    policy_hosts(1);
    expect_filter(
        incoming("'foo':''", TSCX(1, "node", DNS, FOO, "'nodeTaintsPolicy':'Honor'"), NULL),
        "node-a=U node-b=U node-x=S node-y=S");
    expect_filter(incoming("'foo':''", NODE_C, NULL), "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_without_prefilter_state_is_an_error)
{
    env(LIST);
    zones4();
    ks_pod *p = incoming("'foo':''", ZONE_C, NULL);
    ks_cycle *c = cycle_for(p);
    ks_status st;
    char msg[256];
    ks__status_reset(&st);
    cr_assert_eq(DESC->filter(E.self, c, p, info("node-a"), &st), KS_ERROR);
    ks__status_message(&st, msg, sizeof(msg));
    cr_assert_str_eq(msg, "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

/* ==== Filter, several constraints (TestMultipleConstraints) ====================================
 */

#define ZONE_NODE ZONE_C "," NODE_C
#define ZONE_FOO_NODE_BAR ZONE_C "," TSC(1, "node", DNS, BAR)

Test(pod_topology_spread, filter_intersects_zone_and_node_constraints)
{
    env(LIST);
    spread_2103();
    expect_filter(incoming("'foo':''", ZONE_NODE, NULL), "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_zone_and_node_constraints_can_exclude_every_node)
{
    env(LIST);
    spread_2103();
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':''", ZONE_NODE, NULL), "node-a=U node-b=U node-x=U node-y=U");
}

Test(pod_topology_spread, filter_constraints_with_different_selectors)
{
    env(LIST);
    zones4();
    on("node-a", "'foo':''");
    on("node-y", "'bar':''");
    expect_filter(incoming("'foo':'','bar':''", ZONE_FOO_NODE_BAR, NULL),
                  "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_constraints_with_different_selectors_exclude_every_node)
{
    env(LIST);
    zones4();
    on("node-a", "'foo':''");
    on("node-x", "'bar':''");
    on("node-y", "'bar':''");
    expect_filter(incoming("'foo':'','bar':''", ZONE_FOO_NODE_BAR, NULL),
                  "node-a=U node-b=U node-x=U node-y=U");
}

Test(pod_topology_spread, filter_constraints_with_different_selectors_admit_one_node)
{
    env(LIST);
    zones4();
    on("node-a", "'foo':''");
    on("node-a", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    on("node-y", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':'','bar':''", ZONE_FOO_NODE_BAR, NULL),
                  "node-a=U node-b=S node-x=U node-y=U");
}

Test(pod_topology_spread, filter_pod_not_matching_itself_on_one_constraint)
{
    env(LIST);
    zones4();
    on("node-a", "'foo':''");
    on("node-x", "'bar':''");
    on("node-y", "'bar':''");
    expect_filter(incoming("'bar':''", ZONE_FOO_NODE_BAR, NULL),
                  "node-a=S node-b=S node-x=U node-y=U");
}

Test(pod_topology_spread, filter_node_missing_one_key_is_unresolvable)
{
    env(LIST);
    node("node-a", "'zone':'zone1','node':'node-a'", NULL);
    node("node-b", "'zone':'zone1','node':'node-b'", NULL);
    node("node-x", "'zone':'zone2'", NULL);
    node("node-y", "'zone':'zone2','node':'node-y'", NULL);
    on("node-a", "'foo':''");
    on("node-y", "'foo':''");
    expect_filter(incoming("'foo':''", ZONE_NODE, NULL), "node-a=U node-b=S node-x=R node-y=U");
}

/* Pods 1/1/0/1; node-y without foo, or tainted. */
static void policy_zones(const char *y_labels, const char *y_taint, const char *b_labels)
{
    node("node-a", "'zone':'zone1','node':'node-a','foo':''", NULL);
    node("node-b", b_labels, NULL);
    node("node-x", "'zone':'zone2','node':'node-x','foo':''", NULL);
    node("node-y", y_labels, y_taint);
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    on("node-y", "'foo':''");
}

Test(pod_topology_spread, filter_zone_honor_node_ignore_affinity)
{
    env(LIST);
    policy_zones("'zone':'zone2','node':'node-y'", NULL, "'zone':'zone1','node':'node-b','foo':''");
    expect_filter(incoming("'foo':''",
                           ZONE_C "," TSCX(1, "node", DNS, FOO, "'nodeAffinityPolicy':'Ignore'"),
                           NODE_SELECTOR_FOO),
                  "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_zone_honors_taints_node_ignores_them)
{
    env(LIST);
    policy_zones("'zone':'zone2','node':'node-y'", TAINT,
                 "'zone':'zone1','node':'node-b','foo':''");
    expect_filter(incoming("'foo':''",
                           TSCX(1, "zone", DNS, FOO, "'nodeTaintsPolicy':'Honor'") "," NODE_C,
                           NULL),
                  "node-a=U node-b=U node-x=S node-y=U");
}

Test(pod_topology_spread, filter_both_honor_node_selector)
{
    env(LIST);
    policy_zones("'zone':'zone2','node':'node-y','foo':''", TAINT,
                 "'zone':'zone1','node':'node-b'");
    expect_filter(incoming("'foo':''", ZONE_NODE, NODE_SELECTOR_FOO),
                  "node-a=U node-b=S node-x=S node-y=U");
}

Test(pod_topology_spread, filter_zone_honors_taints_node_ignores_affinity)
{
    env(LIST);
    policy_zones("'zone':'zone2','node':'node-y','foo':''", TAINT,
                 "'zone':'zone1','node':'node-b'");
    expect_filter(incoming("'foo':''",
                           TSCX(1, "zone", DNS, FOO, "'nodeTaintsPolicy':'Honor'") "," TSCX(
                               1, "node", DNS, FOO, "'nodeAffinityPolicy':'Ignore'"),
                           NODE_SELECTOR_FOO),
                  "node-a=U node-b=U node-x=S node-y=U");
}

static void two_zone_constraints_cluster(int extra_y)
{
    zones4();
    on("node-a", "'foo':'','bar':''");
    on("node-a", "'foo':''");
    on("node-b", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    on("node-y", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    if (extra_y)
        on("node-y", "'foo':''");
}

Test(pod_topology_spread, filter_two_constraints_on_zone)
{
    env(LIST);
    two_zone_constraints_cluster(0);
    expect_filter(incoming("'foo':'','bar':''", TSC(1, "zone", DNS, BAR) "," ZONE_C, NULL),
                  "node-a=U node-b=U node-x=S node-y=S");
}

Test(pod_topology_spread, filter_two_constraints_on_zone_exclude_every_node)
{
    env(LIST);
    two_zone_constraints_cluster(1);
    expect_filter(incoming("'foo':'','bar':''", TSC(1, "zone", DNS, BAR) "," ZONE_C, NULL),
                  "node-a=U node-b=U node-x=U node-y=U");
}

/* ==== PreScore (TestPreScoreSkip, TestPreScoreStateEmptyNodes) ================================ */

Test(pod_topology_spread, prescore_skips_pod_without_soft_constraints)
{
    env(LIST);
    hosts("node-a node-b");
    cr_assert_eq(score(incoming("", "", NULL), "node-a node-b", NULL, NULL, NULL), KS_SKIP);
    cr_assert_eq(score(incoming("'foo':''", ZONE_C, NULL), "node-a node-b", NULL, NULL, NULL),
                 KS_SKIP);
}

Test(pod_topology_spread, prescore_skips_default_constraints_when_no_owner_selects_the_pod)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':2,'topologyKey':'planet','whenUnsatisfiable':'ScheduleAnyway'}]}");
    th_cluster_add_object(
        E.tc, "{'kind':'ReplicaSet','metadata':{'name':'rs1','namespace':'default'},"
              "'spec':{'selector':{'matchExpressions':[{'key':'tar','operator':'Exists'}]}}}");
    node("node-a", "'planet':'mars'", NULL);
    cr_assert_eq(score(incoming("'foo':'bar','baz':'sup'", "", NULL), "node-a", NULL, NULL, NULL),
                 KS_SKIP);
}

Test(pod_topology_spread, prescore_skips_an_empty_cluster)
{
    env(NULL);
    cr_assert_eq(score(incoming("'foo':''", TSC(1, "zone", SA, FOO), NULL), "", NULL, NULL, NULL),
                 KS_SKIP);
}

static void hosts_zones3(void)
{
    node("node-a", "'zone':'zone1','" HOST "':'node-a'", NULL);
    node("node-b", "'zone':'zone1','" HOST "':'node-b'", NULL);
    node("node-x", "'zone':'zone2','" HOST "':'node-x'", NULL);
}

Test(pod_topology_spread, prescore_domains_and_weights)
{
    env(LIST);
    hosts_zones3();
    ks_cycle *c;
    cr_assert_eq(
        score(incoming("'foo':''", TSC(1, "zone", SA, FOO) "," TSC(1, HOST, SA, FOO), NULL),
              "node-a node-b node-x", NULL, NULL, &c),
        KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 1), 2);
    expect_counts(c, 1, 0, "zone1=0 zone2=0");
    expect_counts(c, 1, 1, "");
    cr_expect_float_eq(pts_debug_weight(c, 0), log(4.0), 1e-12);
    cr_expect_float_eq(pts_debug_weight(c, 1), log(5.0), 1e-12);
    cr_expect_eq(pts_debug_ignored(c, "node-x"), 0);
}

Test(pod_topology_spread, prescore_null_selector_still_has_domains)
{
    env(LIST);
    hosts_zones3();
    ks_cycle *c;
    score(incoming("'foo':''", TSC(1, "zone", SA, NOSEL), NULL), "node-a node-b node-x", NULL, NULL,
          &c);
    expect_counts(c, 1, 0, "zone1=0 zone2=0");
    cr_expect_float_eq(pts_debug_weight(c, 0), log(4.0), 1e-12);
}

Test(pod_topology_spread, prescore_ignores_feasible_nodes_missing_a_key)
{
    env(LIST);
    node("node-a", "'zone':'zone1','" HOST "':'node-a'", NULL);
    node("node-b", "'zone':'zone1','" HOST "':'node-b'", NULL);
    node("node-x", "'" HOST "':'node-x'", NULL);
    ks_cycle *c;
    score(incoming("'foo':''", TSC(1, "zone", SA, FOO) "," TSC(1, HOST, SA, BAR), NULL),
          "node-a node-b node-x", NULL, NULL, &c);
    cr_expect_eq(pts_debug_ignored(c, "node-x"), 1);
    cr_expect_eq(pts_debug_ignored(c, "node-a"), 0);
    expect_counts(c, 1, 0, "zone1=0");
    cr_expect_float_eq(pts_debug_weight(c, 0), log(3.0), 1e-12);
    cr_expect_float_eq(pts_debug_weight(c, 1), log(4.0), 1e-12);
}

Test(pod_topology_spread, prescore_system_defaults_treat_nodes_without_zone_as_one_domain)
{
    env(NULL);
    th_cluster_add_object(
        E.tc, "{'kind':'ReplicaSet','metadata':{'name':'rs1','namespace':'default'},"
              "'spec':{'selector':{'matchExpressions':[{'key':'foo','operator':'Exists'}]}}}");
    node("node-a", "'" HOST "':'node-a','" ZONE "':'mars'", NULL);
    node("node-b", "'" HOST "':'node-b','" ZONE "':'mars'", NULL);
    node("node-c", "'" HOST "':'node-c'", NULL);
    node("node-d", "'" HOST "':'node-d'", NULL);
    ks_cycle *c;
    cr_assert_eq(score(incoming("'foo':'tar','baz':'sup'", "", NULL), HOSTS4, NULL, NULL, &c),
                 KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 1), 2);
    expect_counts(c, 1, 0, "");
    expect_counts(c, 1, 1, "mars=0 =0");
    cr_expect_float_eq(pts_debug_weight(c, 0), log(6.0), 1e-12);
    cr_expect_float_eq(pts_debug_weight(c, 1), log(4.0), 1e-12);
    cr_expect_eq(pts_debug_ignored(c, "node-c"), 0);
}

Test(pod_topology_spread, prescore_list_defaults_keep_only_schedule_anyway_constraints)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':1,'topologyKey':'" HOST "','whenUnsatisfiable':'ScheduleAnyway'},"
        "{'maxSkew':2,'topologyKey':'rack','whenUnsatisfiable':'DoNotSchedule'},"
        "{'maxSkew':2,'topologyKey':'planet','whenUnsatisfiable':'ScheduleAnyway'}]}");
    th_cluster_add_object(
        E.tc, "{'kind':'ReplicaSet','metadata':{'name':'rs1','namespace':'default'},"
              "'spec':{'selector':{'matchExpressions':[{'key':'foo','operator':'Exists'}]}}}");
    node("node-a", "'rack':'rack1','" HOST "':'node-a','planet':'mars'", NULL);
    ks_cycle *c;
    cr_assert_eq(score(incoming("'foo':'tar','baz':'sup'", "", NULL), "node-a", NULL, NULL, &c),
                 KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 1), 2);
    expect_counts(c, 1, 0, "");
    expect_counts(c, 1, 1, "mars=0");
    cr_expect_float_eq(pts_debug_weight(c, 0), log(3.0), 1e-12);
    cr_expect_float_eq(pts_debug_weight(c, 1), log(3.0), 1e-12);
}

Test(pod_topology_spread, prescore_pod_constraints_replace_the_defaults)
{
    env("{'defaultingType':'List','defaultConstraints':["
        "{'maxSkew':2,'topologyKey':'galaxy','whenUnsatisfiable':'ScheduleAnyway'}]}");
    th_cluster_add_object(
        E.tc, "{'kind':'ReplicaSet','metadata':{'name':'rs1','namespace':'default'},"
              "'spec':{'selector':{'matchExpressions':[{'key':'foo','operator':'Exists'}]}}}");
    node("node-a", "'planet':'mars','galaxy':'andromeda'", NULL);
    ks_cycle *c;
    cr_assert_eq(score(incoming("'foo':'bar','baz':'sup'",
                                TSC(1, "zone", DNS, BAR) "," TSC(
                                    2, "planet", SA, SEL("{'matchLabels':{'baz':'sup'}}")),
                                NULL),
                       "node-a", NULL, NULL, &c),
                 KS_SUCCESS);
    cr_assert_eq(pts_debug_nconstraints(c, 1), 1);
    expect_counts(c, 1, 0, "mars=0");
}

Test(pod_topology_spread, prescore_domains_come_from_feasible_nodes_whatever_the_policies)
{
    env(LIST);
    node("node-a", "'zone':'zone1','foo':'','" HOST "':'node-a'", NULL);
    node("node-b", "'zone':'zone1','foo':'','" HOST "':'node-b'", NULL);
    node("node-x", "'zone':'zone2','" HOST "':'node-x'", TAINT);
    const char *cons[] = {
        TSC(1, "zone", SA, BAR),
        TSCX(1, "zone", SA, BAR, "'nodeAffinityPolicy':'Ignore'"),
        TSCX(1, "zone", SA, BAR, "'nodeTaintsPolicy':'Honor'"),
    };
    for (size_t i = 0; i < 3; i++) {
        ks_cycle *c;
        score(incoming("'foo':''", cons[i], NODE_SELECTOR_FOO), "node-a node-b node-x", NULL, NULL,
              &c);
        expect_counts(c, 1, 0, "zone1=0 zone2=0");
        cr_expect_float_eq(pts_debug_weight(c, 0), log(4.0), 1e-12);
    }
}

/* ==== Score and NormalizeScore (TestPodTopologySpreadScore) ====================================
 */

#define HOST_C TSC(1, HOST, SA, FOO)

Test(pod_topology_spread, score_without_pods_is_even)
{
    env(NULL);
    hosts("node-a node-b");
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a node-b", "100 100");
}

Test(pod_topology_spread, score_single_candidate_gets_full_score)
{
    env(NULL);
    hosts("node-a node-b");
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a", "100");
}

Test(pod_topology_spread, score_equal_counts_are_even)
{
    env(NULL);
    hosts("node-a node-b");
    on("node-a", "'foo':''");
    on("node-b", "'foo':''");
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a node-b", "100 100");
}

/* Matching pods 2/1/0/3 on node-a..d. */
static void hosts_2103(void)
{
    hosts(HOSTS4);
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    spread("node-d", 3, "'foo':''");
}

Test(pod_topology_spread, score_prefers_nodes_with_fewer_matching_pods)
{
    int64_t raw[4], norm[4];
    env(NULL);
    hosts_2103();
    cr_assert_eq(score(incoming("'foo':''", HOST_C, NULL), HOSTS4, raw, norm, NULL), KS_SUCCESS);
    /* weight ln(6): 2*1.79 = 3.58 -> 4, 1.79 -> 2, 0, 5.38 -> 5 */
    int64_t want_raw[] = {4, 2, 0, 5}, want[] = {20, 60, 100, 0};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(raw[i], want_raw[i], "raw[%d] = %lld", i, (long long)raw[i]);
        cr_expect_eq(norm[i], want[i], "normalized[%d] = %lld", i, (long long)norm[i]);
    }
}

Test(pod_topology_spread, score_through_the_harness_matches)
{
    int64_t raw[4], norm[4];
    env(NULL);
    hosts_2103();
    cr_assert_eq(th_score(E.th, E.tc, incoming("'foo':''", HOST_C, NULL), raw, norm), KS_SUCCESS);
    cr_expect_eq(norm[0], 20);
    cr_expect_eq(norm[1], 60);
    cr_expect_eq(norm[2], 100);
    cr_expect_eq(norm[3], 0);
}

Test(pod_topology_spread, score_null_selector_is_even)
{
    env(NULL);
    hosts_2103();
    expect_scores(incoming("'foo':''", TSC(1, HOST, SA, NOSEL), NULL), HOSTS4, "100 100 100 100");
}

Test(pod_topology_spread, score_max_skew_waters_down_differences)
{
    env(NULL);
    hosts_2103();
    expect_scores(incoming("'foo':''", TSC(2, HOST, SA, FOO), NULL), HOSTS4, "33 66 100 16");
}

static void hosts_4321(void)
{
    hosts(HOSTS4);
    spread("node-a", 4, "'foo':''");
    spread("node-b", 3, "'foo':''");
    spread("node-c", 2, "'foo':''");
    on("node-d", "'foo':''");
}

Test(pod_topology_spread, score_max_skew_three)
{
    env(NULL);
    hosts_4321();
    expect_scores(incoming("'foo':''", TSC(3, HOST, SA, FOO), NULL), HOSTS4, "44 66 77 100");
}

Test(pod_topology_spread, score_system_defaults_spread_service_pods_across_hosts_without_zones)
{
    int64_t raw[4];
    env(NULL);
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'foo':''}}}");
    hosts_4321();
    ks_pod *p = incoming("'foo':''", "", NULL);
    expect_scores(p, HOSTS4, "44 66 77 100");
    /* Same as one hostname constraint with maxSkew 3: the zone constraint adds nothing. */
    cr_assert_eq(score(p, HOSTS4, raw, NULL, NULL), KS_SUCCESS);
    cr_expect_eq(raw[0], 9); /* 4 ln 6 + 2 = 9.17 */
    cr_expect_eq(raw[3], 4); /* ln 6 + 2 = 3.79 */
}

static void hosts_axy_4213(void)
{
    spread("node-a", 4, "'foo':''");
    spread("node-b", 2, "'foo':''");
    on("node-x", "'foo':''");
    spread("node-y", 3, "'foo':''");
}

Test(pod_topology_spread, score_counts_only_feasible_hosts)
{
    env(NULL);
    hosts("node-a node-b node-x node-y");
    hosts_axy_4213();
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a node-b node-x", "33 83 100");
}

Test(pod_topology_spread, score_ignores_feasible_node_missing_the_key)
{
    int64_t raw[3];
    env(NULL);
    node("node-a", "'" HOST "':'node-a'", NULL);
    node("node-b", "'n':'node-b'", NULL);
    node("node-x", "'" HOST "':'node-x'", NULL);
    node("node-y", "'" HOST "':'node-y'", NULL);
    hosts_axy_4213();
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a node-b node-x", "16 0 100");
    cr_assert_eq(score(incoming("'foo':''", HOST_C, NULL), "node-a node-b node-x", raw, NULL, NULL),
                 KS_SUCCESS);
    cr_expect_eq(raw[1], 0);
}

Test(pod_topology_spread, score_zone_counts_pods_of_infeasible_nodes)
{
    env(NULL);
    node("node-a", "'zone':'zone1','" HOST "':'node-a'", NULL);
    node("node-b", "'zone':'zone1','" HOST "':'node-b'", NULL);
    node("node-x", "'zone':'zone2','" HOST "':'node-x'", NULL);
    node("node-y", "'zone':'zone2','" HOST "':'node-y'", NULL);
    hosts_axy_4213();
    expect_scores(incoming("'foo':''", TSC(1, "zone", SA, FOO), NULL), "node-a node-b node-x",
                  "75 75 100");
}

Test(pod_topology_spread, score_zone_and_node_on_two_candidates)
{
    env(NULL);
    node("node-a", "'zone':'zone1','" HOST "':'node-a'", NULL);
    node("node-b", "'zone':'zone1','" HOST "':'node-b'", NULL);
    node("node-x", "'zone':'zone2','" HOST "':'node-x'", NULL);
    node("node-y", "'zone':'zone2','" HOST "':'node-y'", NULL);
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    spread("node-x", 2, "'foo':''");
    spread("node-y", 4, "'foo':''");
    expect_scores(incoming("'foo':''", TSC(1, "zone", SA, FOO) "," HOST_C, NULL), "node-a node-x",
                  "100 63");
}

Test(pod_topology_spread, score_two_zone_constraints_on_two_candidates)
{
    env(NULL);
    node("node-a", "'zone':'zone1'", NULL);
    node("node-b", "'zone':'zone1'", NULL);
    node("node-x", "'zone':'zone2'", NULL);
    node("node-y", "'zone':'zone2'", NULL);
    on("node-a", "'foo':'','bar':''");
    on("node-a", "'foo':''");
    on("node-b", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    on("node-y", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    expect_scores(
        incoming("'foo':'','bar':''", TSC(1, "zone", SA, FOO) "," TSC(1, "zone", SA, BAR), NULL),
        "node-a node-x", "85 100");
}

static void four_hosts_in_zones(void)
{
    node("node-a", "'zone':'zone1','" HOST "':'node-a'", NULL);
    node("node-b", "'zone':'zone1','" HOST "':'node-b'", NULL);
    node("node-x", "'zone':'zone2','" HOST "':'node-x'", NULL);
    node("node-y", "'zone':'zone2','" HOST "':'node-y'", NULL);
}

#define ZONE_FOO_HOST_BAR TSC(1, "zone", SA, FOO) "," TSC(1, HOST, SA, BAR)

Test(pod_topology_spread, score_zone_and_host_constraints_with_different_selectors)
{
    env(NULL);
    four_hosts_in_zones();
    on("node-a", "'foo':''");
    on("node-b", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    on("node-y", "'bar':''");
    expect_scores(incoming("'foo':'','bar':''", ZONE_FOO_HOST_BAR, NULL),
                  "node-a node-b node-x node-y", "60 20 100 60");
}

Test(pod_topology_spread, score_zone_and_host_constraints_with_empty_nodes)
{
    env(NULL);
    four_hosts_in_zones();
    on("node-b", "'bar':''");
    on("node-x", "'foo':''");
    on("node-y", "'foo':'','bar':''");
    expect_scores(incoming("'foo':'','bar':''", ZONE_FOO_HOST_BAR, NULL),
                  "node-a node-b node-x node-y", "100 60 40 0");
}

Test(pod_topology_spread, score_zone_and_host_constraints_on_three_candidates)
{
    env(NULL);
    four_hosts_in_zones();
    on("node-a", "'foo':''");
    on("node-b", "'foo':'','bar':''");
    on("node-y", "'foo':''");
    on("node-y", "'bar':''");
    expect_scores(incoming("'foo':'','bar':''", ZONE_FOO_HOST_BAR, NULL), "node-a node-b node-x",
                  "50 25 100");
}

Test(pod_topology_spread, score_ignores_pods_in_other_namespaces)
{
    env(NULL);
    hosts("node-a node-b");
    on_meta("node-a", "'foo':''", "'namespace':'ns1'");
    on("node-a", "'foo':''");
    spread("node-b", 2, "'foo':''");
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a node-b", "100 33");
}

Test(pod_topology_spread, score_ignores_terminating_pods)
{
    env(NULL);
    hosts("node-a node-b");
    on_meta("node-a", "'foo':''", "'deletionTimestamp':'2024-01-01T00:00:00Z'");
    on("node-b", "'foo':''");
    expect_scores(incoming("'foo':''", HOST_C, NULL), "node-a node-b", "100 0");
}

Test(pod_topology_spread, score_min_domains_has_no_effect)
{
    env(NULL);
    node("node-a", "'node':'node-a'", NULL);
    node("node-b", "'node':'node-b'", NULL);
    node("node-c", "'node':'node-c'", NULL);
    spread("node-a", 2, "'foo':''");
    spread("node-b", 2, "'foo':''");
    on("node-c", "'foo':''");
    expect_scores(incoming("'foo':''", TSCX(2, "node", SA, FOO, "'minDomains':10"), NULL),
                  "node-a node-b node-c", "75 75 100");
}

static void score_policy_cluster(int taint_c)
{
    node("node-a", taint_c ? "'node':'node-a'" : "'node':'node-a','foo':''", NULL);
    node("node-b", taint_c ? "'node':'node-b'" : "'node':'node-b','foo':''", NULL);
    node("node-c", "'node':'node-c'", taint_c ? TAINT : NULL);
    spread("node-a", 2, "'foo':''");
    on("node-b", "'foo':''");
    on("node-c", "'foo':''");
}

#define NODE_SA TSC(1, "node", SA, FOO)
#define NODE_SA_IGNORE TSCX(1, "node", SA, FOO, "'nodeAffinityPolicy':'Ignore'")

Test(pod_topology_spread, score_node_affinity_policy_honor)
{
    env(NULL);
    score_policy_cluster(0);
    expect_scores(incoming("'foo':''", NODE_SA, NODE_SELECTOR_FOO), "node-a node-b node-c",
                  "0 33 100");
    expect_scores(incoming("'foo':''", NODE_SA, AFFINITY("In", "foo", "''")),
                  "node-a node-b node-c", "0 33 100");
}

Test(pod_topology_spread, score_node_affinity_policy_ignore)
{
    env(NULL);
    score_policy_cluster(0);
    expect_scores(incoming("'foo':''", NODE_SA_IGNORE, NODE_SELECTOR_FOO), "node-a node-b node-c",
                  "66 100 100");
    expect_scores(incoming("'foo':''", NODE_SA_IGNORE, AFFINITY("In", "foo", "''")),
                  "node-a node-b node-c", "66 100 100");
}

Test(pod_topology_spread, score_node_taints_policy)
{
    env(NULL);
    score_policy_cluster(1);
    expect_scores(
        incoming("'foo':''", TSCX(1, "node", SA, FOO, "'nodeTaintsPolicy':'Honor'"), NULL),
        "node-a node-b node-c", "0 33 100");
    expect_scores(incoming("'foo':''", NODE_SA, NULL), "node-a node-b node-c", "66 100 100");
}

#define HOSTS_ABCD_ZONES                                                                           \
    node("node-a", "'zone':'zone1','" HOST "':'node-a'", NULL);                                    \
    node("node-b", "'zone':'zone1','" HOST "':'node-b'", NULL);                                    \
    node("node-c", "'zone':'zone2','" HOST "':'node-c'", NULL);                                    \
    node("node-d", "'zone':'zone2','" HOST "':'node-d'", NULL)

Test(pod_topology_spread, score_match_label_keys_with_empty_selectors)
{
    env(NULL);
    HOSTS_ABCD_ZONES;
    on("node-a", "'foo':''");
    on("node-b", "'foo':'','bar':''");
    on("node-c", "'foo':''");
    on("node-c", "'bar':''");
    expect_scores(incoming("'foo':'','bar':''",
                           TSCX(1, "zone", SA, SEL("{}"), "'matchLabelKeys':['foo']") "," TSCX(
                               1, HOST, SA, SEL("{}"), "'matchLabelKeys':['bar']"),
                           NULL),
                  HOSTS4, "60 20 60 100");
}

Test(pod_topology_spread, score_match_label_keys_anded_with_selector)
{
    env(NULL);
    HOSTS_ABCD_ZONES;
    on("node-a", "'foo':''");
    on("node-b", "'foo':'','bar':'','baz':''");
    on("node-c", "'foo':''");
    on("node-c", "'bar':''");
    on("node-c", "'bar':'','baz':''");
    expect_scores(
        incoming("'foo':'','bar':'','baz':''",
                 TSC(1, "zone", SA, FOO) "," TSCX(1, HOST, SA, BAR, "'matchLabelKeys':['baz']"),
                 NULL),
        HOSTS4, "60 20 60 100");
}

Test(pod_topology_spread, score_without_prescore_state_is_an_error)
{
    env(NULL);
    hosts("node-a");
    ks_pod *p = incoming("'foo':''", HOST_C, NULL);
    ks_cycle *c = cycle_for(p);
    ks_status st;
    int64_t s = 7;
    ks__status_reset(&st);
    cr_assert_eq(DESC->score(E.self, c, p, info("node-a"), &s, &st), KS_ERROR);
}

/* ==== Args and events ===========================================================================
 */

Test(pod_topology_spread, args_reject_system_defaulting_with_constraints)
{
    char err[512] = "";
    th_plugin *p = th_plugin_try_new(
        DESC,
        "{'defaultingType':'System','defaultConstraints':[{'maxSkew':1,'topologyKey':'zone',"
        "'whenUnsatisfiable':'DoNotSchedule'}]}",
        err, sizeof(err));
    cr_assert_null(p);
    cr_assert(strstr(err, "defaultingType"), "%s", err);
}

Test(pod_topology_spread, args_reject_unknown_defaulting_type_and_bad_constraints)
{
    char err[512] = "";
    cr_assert_null(th_plugin_try_new(DESC, "{'defaultingType':'Auto'}", err, sizeof(err)));
    cr_assert(strstr(err, "Unsupported value: \"Auto\""), "%s", err);
    cr_assert_null(th_plugin_try_new(DESC,
                                     "{'defaultingType':'List','defaultConstraints':[{'maxSkew':0,"
                                     "'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'}]}",
                                     err, sizeof(err)));
    cr_assert(strstr(err, "defaultConstraints[0].maxSkew"), "%s", err);
    cr_assert_null(th_plugin_try_new(DESC,
                                     "{'defaultingType':'List','defaultConstraints':[{'maxSkew':1,"
                                     "'topologyKey':'zone','whenUnsatisfiable':'Sometimes'}]}",
                                     err, sizeof(err)));
    cr_assert(strstr(err, "whenUnsatisfiable"), "%s", err);
}

Test(pod_topology_spread, list_default_constraint_policies_are_read)
{
    env("{'defaultingType':'List','defaultConstraints':[{'maxSkew':1,'topologyKey':'node',"
        "'whenUnsatisfiable':'DoNotSchedule','nodeTaintsPolicy':'Honor'}]}");
    th_cluster_add_object(E.tc, "{'kind':'Service','metadata':{'name':'svc','namespace':'default'},"
                                "'spec':{'selector':{'bar':''}}}");
    inclusion_cluster(1);
    ks_cycle *c = prefilter(incoming("'bar':''", "", NULL), KS_SUCCESS);
    expect_counts(c, 0, 0, "node-a=1 node-b=2");
}
