/* InterPodAffinity: upstream interpodaffinity/filtering_test.go (TestRequiredAffinitySingleNode,
 * TestRequiredAffinityMultipleNodes, TestPreFilterDisabled, TestPreFilterStateAddRemovePod,
 * TestGetTPMapMatchingIncomingAffinityAntiAffinity) and scoring_test.go (TestPreferredAffinity,
 * TestPreferredAffinityWithHardPodAffinitySymmetricWeight), plus matchLabelKeys, namespaces the
 * cluster does not know, args and events.
 *
 * Upstream's tests use the namespace ""; here pods without a namespace are in "default". The
 * PreFilter-Skip and AddPod/RemovePod cases need a cycle the test keeps, which the harness does not
 * hand out: they build one with the core cache/cycle API (see `world` below). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sched/cache.h"
#include "sched/framework.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_inter_pod_affinity;

TestSuite(inter_pod_affinity, .init = th_init, .fini = th_fini);

#define UNR KS_UNSCHEDULABLE_AND_UNRESOLVABLE
#define UNS KS_UNSCHEDULABLE
#define R_AFF "node(s) didn't match pod affinity rules"
#define R_ANTI "node(s) didn't match pod anti-affinity rules"
#define R_EXISTING "node(s) didn't satisfy existing pods anti-affinity rules"

/* ---- Building pods and nodes ------------------------------------------------------------------
 * Terms are JSON text with single quotes (the harness turns them into double quotes). */
#define SEL(exprs) "'labelSelector':{'matchExpressions':[" exprs "]}"
#define EX_IN(k, vals) "{'key':'" k "','operator':'In','values':[" vals "]}"
#define EX_NOTIN(k, vals) "{'key':'" k "','operator':'NotIn','values':[" vals "]}"
#define EX_EXISTS(k) "{'key':'" k "','operator':'Exists'}"
#define EX_NOTEXISTS(k) "{'key':'" k "','operator':'DoesNotExist'}"
#define TERM(sel, topo) "{" sel ",'topologyKey':'" topo "'}"
#define TERM_X(sel, topo, extra) "{" sel ",'topologyKey':'" topo "'," extra "}"
#define IN(k, vals, topo) TERM(SEL(EX_IN(k, vals)), topo)
#define NOTIN(k, vals, topo) TERM(SEL(EX_NOTIN(k, vals)), topo)
#define EXISTS(k, topo) TERM(SEL(EX_EXISTS(k)), topo)
#define W(w, term) "{'weight':" #w ",'podAffinityTerm':" term "}"
#define REQ(terms) "'requiredDuringSchedulingIgnoredDuringExecution':[" terms "]"
#define PREF(terms) "'preferredDuringSchedulingIgnoredDuringExecution':[" terms "]"
#define AFF(x) "'podAffinity':{" x "}"
#define ANTI(x) "'podAntiAffinity':{" x "}"

static int serial;

static void pod_json(char *buf, size_t len, const char *ns, const char *node, const char *labels,
                     const char *affinity)
{
    int id = ++serial;
    snprintf(buf, len,
             "{'metadata':{'name':'p%d','namespace':'%s','uid':'uid-%d','labels':{%s}},"
             "'spec':{'nodeName':'%s','containers':[{'name':'c'}],'affinity':{%s}}}",
             id, ns, id, labels ? labels : "", node ? node : "", affinity ? affinity : "");
}

/* The pod being scheduled. */
static ks_pod *incoming(const char *ns, const char *labels, const char *affinity)
{
    char json[8192];
    pod_json(json, sizeof(json), ns, NULL, labels, affinity);
    return th_pod(json);
}

static void add_pod(th_cluster *c, const char *node, const char *ns, const char *labels,
                    const char *affinity)
{
    char json[8192];
    pod_json(json, sizeof(json), ns, node, labels, affinity);
    th_cluster_add_pod(c, json);
}

static void add_node(th_cluster *c, const char *name, const char *labels)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','labels':{%s}},"
             "'status':{'allocatable':{'cpu':'4','memory':'32Gi','pods':'110'}}}",
             name, labels);
    th_cluster_add_node(c, json);
}

static void add_namespace(th_cluster *c, const char *name, const char *labels)
{
    char json[512];
    snprintf(json, sizeof(json), "{'kind':'Namespace','metadata':{'name':'%s','labels':{%s}}}",
             name, labels);
    th_cluster_add_object(c, json);
}

/* upstream scoring_test.go's namespaces. */
static void add_team_namespaces(th_cluster *c)
{
    add_namespace(c, "subteam1.team1", "'team':'team1'");
    add_namespace(c, "subteam2.team1", "'team':'team1'");
    add_namespace(c, "subteam1.team2", "'team':'team2'");
    add_namespace(c, "subteam2.team2", "'team':'team2'");
}

static th_plugin *plugin(void) { return th_plugin_new(&ks_plugin_inter_pod_affinity, NULL); }

static void expect_filter(th_cluster *c, ks_pod *pod, const char *node, ks_code code,
                          const char *reason)
{
    char r[256];
    ks_code got = th_filter(plugin(), c, pod, node, r, sizeof(r));
    cr_assert_eq(got, code, "node %s: code %d, want %d (%s)", node, got, code, r);
    cr_assert_str_eq(r, reason ? reason : "", "node %s", node);
}

/* ---- A cycle the test keeps (PreFilter Skip, AddPod/RemovePod, clones) --------------------- */

typedef struct world {
    ks_cache *cache;
    ks_snapshot *snap;
    ks_cycle *cycles[8];
    size_t ncycles;
    void *self;
} world;

static void world_init(world *w)
{
    memset(w, 0, sizeof(*w));
    w->cache = ks__cache_new();
    w->snap = ks__snapshot_new();
    cr_assert(w->cache && w->snap);
    w->self = ks_plugin_inter_pod_affinity.create(NULL, NULL);
    cr_assert_not_null(w->self);
}

static void world_free(world *w)
{
    for (size_t i = 0; i < w->ncycles; i++)
        ks__cycle_free(w->cycles[i]);
    ks_plugin_inter_pod_affinity.destroy(w->self);
    ks__snapshot_free(w->snap);
    ks__cache_free(w->cache);
}

static void world_node(world *w, const char *name, const char *labels)
{
    char json[1024];
    snprintf(json, sizeof(json), "{'metadata':{'name':'%s','labels':{%s}}}", name, labels);
    cr_assert_eq(ks__cache_add_node(w->cache, th_node(json)), 0);
}

static ks_pod *world_pod(world *w, const char *node, const char *labels, const char *affinity)
{
    char json[8192];
    pod_json(json, sizeof(json), "default", node, labels, affinity);
    ks_pod *p = th_pod(json);
    if (node)
        cr_assert_eq(ks__cache_add_pod(w->cache, p), 0);
    return p;
}

/* Runs PreFilter for pod on a fresh cycle of the current cluster. */
static ks_cycle *world_pre_filter(world *w, ks_pod *pod, ks_code *code)
{
    ks_status st;
    ks_prefilter_result r = {0};
    cr_assert_eq(ks__cache_update_snapshot(w->cache, w->snap), 0);
    cr_assert_lt(w->ncycles, 8);
    ks_cycle *cycle = w->cycles[w->ncycles++] = ks__cycle_new(w->snap, pod);
    ks__status_reset(&st);
    *code = ks_plugin_inter_pod_affinity.pre_filter(w->self, cycle, pod, &r, &st);
    free(r.nodes);
    return cycle;
}

static const ks_node_info *world_ni(world *w, const char *node)
{
    const ks_node_info *ni = ks__snapshot_find(w->snap, ks_intern(node));
    cr_assert_not_null(ni);
    return ni;
}

static ks_code world_filter(world *w, ks_cycle *cycle, ks_pod *pod, const char *node)
{
    ks_status st;
    ks__status_reset(&st);
    return ks_plugin_inter_pod_affinity.filter(w->self, cycle, pod, world_ni(w, node), &st);
}

static void world_add(world *w, ks_cycle *cycle, ks_pod *pod, ks_pod *other, const char *node,
                      int add)
{
    ks_status st;
    ks__status_reset(&st);
    ks_code code = (add ? ks_plugin_inter_pod_affinity.pre_filter_add_pod
                        : ks_plugin_inter_pod_affinity.pre_filter_remove_pod)(
        w->self, cycle, pod, other, world_ni(w, node), &st);
    cr_assert_eq(code, KS_SUCCESS);
}

static ks_code world_skip_code(world *w, ks_pod *pod)
{
    ks_code code;
    world_pre_filter(w, pod, &code);
    return code;
}

/* ======================= Filter: one node (TestRequiredAffinitySingleNode) ==================== */

/* node1 {region: r1, zone: z11} with a pod {service: securityscan}. */
static th_cluster *single_node(void)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'service':'securityscan'", NULL);
    return c;
}

Test(inter_pod_affinity, skips_pod_without_affinity_on_empty_node)
{
    world w;
    world_init(&w);
    world_node(&w, "node1", "'region':'r1','zone':'z11'");
    cr_assert_eq(world_skip_code(&w, world_pod(&w, NULL, NULL, NULL)), KS_SKIP);
    world_free(&w);
}

Test(inter_pod_affinity, affinity_in_operator_matches_existing_pod)
{
    expect_filter(single_node(),
                  incoming("default", "'security':'S1'",
                           AFF(REQ(IN("service", "'securityscan','value2'", "region")))),
                  "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, affinity_not_in_operator_matches_existing_pod)
{
    expect_filter(single_node(),
                  incoming("default", "'security':'S1'",
                           AFF(REQ(NOTIN("service", "'securityscan3','value3'", "region")))),
                  "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, affinity_rejects_pod_of_a_namespace_not_listed)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "ns", "'service':'securityscan'", NULL);
    expect_filter(c,
                  incoming("default", "'security':'S1'",
                           AFF(REQ(TERM_X(SEL(EX_IN("service", "'securityscan','value2'")),
                                          "region", "'namespaces':['DiffNameSpace']")))),
                  "node1", UNR, R_AFF);
}

Test(inter_pod_affinity, affinity_rejects_selector_matching_no_pod)
{
    expect_filter(single_node(),
                  incoming("default", "'service':'securityscan'",
                           AFF(REQ(IN("service", "'antivirusscan','value2'", "region")))),
                  "node1", UNR, R_AFF);
}

Test(inter_pod_affinity, affinity_terms_with_different_operators_all_match)
{
    expect_filter(
        single_node(),
        incoming(
            "default", "'security':'S1'",
            AFF(REQ(TERM(SEL(EX_EXISTS("service") "," EX_NOTEXISTS("wrongkey")), "region") "," TERM(
                SEL(EX_IN("service", "'securityscan'") "," EX_NOTIN("service", "'WrongValue'")),
                "region")))),
        "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, affinity_selector_requirements_are_anded)
{
    expect_filter(
        single_node(),
        incoming(
            "default", "'security':'S1'",
            AFF(REQ(TERM(SEL(EX_EXISTS("service") "," EX_NOTEXISTS("wrongkey")), "region") "," TERM(
                SEL(EX_IN("service", "'securityscan2'") "," EX_NOTIN("service", "'WrongValue'")),
                "region")))),
        "node1", UNR, R_AFF);
}

Test(inter_pod_affinity, affinity_and_anti_affinity_both_satisfied)
{
    expect_filter(single_node(),
                  incoming("default", "'security':'S1'",
                           AFF(REQ(IN("service", "'securityscan','value2'", "region"))) "," ANTI(
                               REQ(IN("service", "'antivirusscan','value2'", "node")))),
                  "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, existing_anti_affinity_that_does_not_match_is_satisfied)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'service':'securityscan'",
            ANTI(REQ(IN("service", "'antivirusscan','value2'", "node"))));
    expect_filter(c,
                  incoming("default", "'security':'S1'",
                           AFF(REQ(IN("service", "'securityscan','value2'", "region"))) "," ANTI(
                               REQ(IN("service", "'antivirusscan','value2'", "node")))),
                  "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, anti_affinity_rejects_node_with_matching_pod_in_topology)
{
    expect_filter(single_node(),
                  incoming("default", "'security':'S1'",
                           AFF(REQ(IN("service", "'securityscan','value2'", "region"))) "," ANTI(
                               REQ(IN("service", "'securityscan','value2'", "zone")))),
                  "node1", UNS, R_ANTI);
}

Test(inter_pod_affinity, existing_pod_anti_affinity_rejects_matching_incoming_pod)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'service':'securityscan'",
            ANTI(REQ(IN("service", "'securityscan','value2'", "zone"))));
    expect_filter(c,
                  incoming("default", "'service':'securityscan'",
                           AFF(REQ(IN("service", "'securityscan','value2'", "region"))) "," ANTI(
                               REQ(IN("service", "'antivirusscan','value2'", "node")))),
                  "node1", UNS, R_EXISTING);
}

Test(inter_pod_affinity, affinity_the_pod_itself_does_not_match_is_not_first_of_group)
{
    /* NotIn securityscan: neither the existing pod nor the incoming one match. */
    expect_filter(single_node(),
                  incoming("default", "'service':'securityscan'",
                           AFF(REQ(NOTIN("service", "'securityscan','value2'", "region")))),
                  "node1", UNR, R_AFF);
}

Test(inter_pod_affinity, existing_anti_affinity_applies_to_pod_without_affinity)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'service':'securityscan'",
            ANTI(REQ(IN("service", "'securityscan','value2'", "zone"))));
    expect_filter(c, incoming("default", "'service':'securityscan'", NULL), "node1", UNS,
                  R_EXISTING);
}

Test(inter_pod_affinity, skips_when_existing_anti_affinity_matches_nothing)
{
    world w;
    world_init(&w);
    world_node(&w, "node1", "'region':'r1','zone':'z11'");
    world_pod(&w, "node1", "'service':'securityscan'",
              ANTI(REQ(NOTIN("service", "'securityscan','value2'", "zone"))));
    cr_assert_eq(world_skip_code(&w, world_pod(&w, NULL, "'service':'securityscan'", NULL)),
                 KS_SKIP);
    world_free(&w);
}

Test(inter_pod_affinity, incoming_anti_affinity_rejects_existing_pod_with_its_own_anti_affinity)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'security':'S1'", ANTI(REQ(EXISTS("security", "zone"))));
    expect_filter(c,
                  incoming("default", "'service':'securityscan'",
                           ANTI(REQ(EXISTS("service", "region") "," EXISTS("security", "region")))),
                  "node1", UNS, R_ANTI);
}

Test(inter_pod_affinity, anti_affinity_symmetry_partial_match_a1_a2)
{
    /* a1: the incoming pod's term on "security" matches the existing pod. */
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'security':'S1'", ANTI(REQ(EXISTS("security", "zone"))));
    expect_filter(c,
                  incoming("default", "'service':'securityscan'",
                           ANTI(REQ(EXISTS("service", "zone") "," EXISTS("security", "zone")))),
                  "node1", UNS, R_ANTI);
    /* a2: only the existing pod's term on "service" matches the incoming pod. */
    c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'service':'securityscan'",
            ANTI(REQ(EXISTS("service", "zone") "," EXISTS("security", "zone"))));
    expect_filter(c, incoming("default", "'security':'S1'", ANTI(REQ(EXISTS("security", "zone")))),
                  "node1", UNS, R_EXISTING);
}

Test(inter_pod_affinity, anti_affinity_symmetry_partial_match_b1_b2)
{
    const char *anti = ANTI(REQ(EXISTS("abc", "zone") "," EXISTS("def", "zone")));
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'def':'','xyz':''", anti);
    expect_filter(c, incoming("default", "'abc':'','xyz':''", anti), "node1", UNS, R_ANTI);
    c = th_cluster_new();
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", "default", "'abc':'','xyz':''", anti);
    expect_filter(c, incoming("default", "'def':'','xyz':''", anti), "node1", UNS, R_ANTI);
}

/* ---- namespaceSelector (Namespace objects: upstream's team namespaces) ---------------------- */

#define TEAM1_SELECTOR "'namespaceSelector':{'matchExpressions':[" EX_IN("team", "'team1'") "]}"

static th_cluster *team_node_with_pod_in(const char *ns)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(c, "node1", ns, "'service':'securityscan'", NULL);
    return c;
}

Test(inter_pod_affinity, affinity_namespace_selector_matches_pod_in_selected_namespace)
{
    expect_filter(team_node_with_pod_in("subteam1.team1"),
                  incoming("default", "'security':'S1'",
                           AFF(REQ(TERM_X(SEL(EX_IN("service", "'securityscan','value2'")),
                                          "region", TEAM1_SELECTOR)))),
                  "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, affinity_namespace_selector_ignores_pod_in_other_namespace)
{
    expect_filter(team_node_with_pod_in("subteam1.team2"),
                  incoming("default", "'security':'S1'",
                           AFF(REQ(TERM_X(SEL(EX_IN("service", "'securityscan','value2'")),
                                          "region", TEAM1_SELECTOR)))),
                  "node1", UNR, R_AFF);
}

Test(inter_pod_affinity, anti_affinity_namespace_selector_matches_pod_in_selected_namespace)
{
    expect_filter(team_node_with_pod_in("subteam2.team1"),
                  incoming("subteam1.team1", "'security':'S1'",
                           ANTI(REQ(TERM_X(SEL(EX_IN("service", "'securityscan','value2'")), "zone",
                                           TEAM1_SELECTOR)))),
                  "node1", UNS, R_ANTI);
}

Test(inter_pod_affinity, anti_affinity_empty_namespace_selector_selects_every_namespace)
{
    expect_filter(team_node_with_pod_in("subteam2.team1"),
                  incoming("subteam1.team1", "'security':'S1'",
                           ANTI(REQ(TERM_X(SEL(EX_IN("service", "'securityscan','value2'")), "zone",
                                           "'namespaceSelector':{}")))),
                  "node1", UNS, R_ANTI);
}

Test(inter_pod_affinity, anti_affinity_namespace_selector_ignores_pod_in_other_namespace)
{
    expect_filter(team_node_with_pod_in("subteam1.team2"),
                  incoming("subteam1.team1", "'security':'S1'",
                           ANTI(REQ(TERM_X(SEL(EX_IN("service", "'securityscan','value2'")), "zone",
                                           TEAM1_SELECTOR)))),
                  "node1", KS_SUCCESS, NULL);
}

/* The incoming pod's selector is resolved against the Namespace objects the cluster knows
 * (upstream lists them), so a pod in an unknown namespace is never selected, even by a selector
 * that empty labels would satisfy... */
Test(inter_pod_affinity, incoming_namespace_selector_never_selects_unknown_namespace)
{
    expect_filter(team_node_with_pod_in("nowhere"),
                  incoming("default", "'security':'S1'",
                           ANTI(REQ(TERM_X(SEL(EX_EXISTS("service")), "zone",
                                           "'namespaceSelector':{'matchExpressions':[" EX_NOTEXISTS(
                                               "team") "]}")))),
                  "node1", KS_SUCCESS, NULL);
}

/* v1.37 (mergeAffinityTermNamespacesIfNotEmpty takes *AffinityTerm): after the merge the incoming
 * term's namespaceSelector is labels.Nothing(), so a selector that the empty label set satisfies
 * (NotIn, DoesNotExist) selects only the listed Namespace objects it matches. 1.34 kept the
 * selector, and Matches(pod, nil) then took pods of every namespace. */
Test(inter_pod_affinity, merged_namespace_selector_does_not_match_every_namespace)
{
    const char *anti = ANTI(
        REQ(TERM_X(SEL(EX_EXISTS("service")), "zone",
                   "'namespaceSelector':{'matchExpressions':[" EX_NOTIN("team", "'team1'") "]}")));
    /* team=team1: not selected (1.34: a conflict). */
    expect_filter(team_node_with_pod_in("subteam1.team1"), incoming("default", "'a':'b'", anti),
                  "node1", KS_SUCCESS, NULL);
    /* team=team2: selected. */
    expect_filter(team_node_with_pod_in("subteam1.team2"), incoming("default", "'a':'b'", anti),
                  "node1", UNS, R_ANTI);
    /* Affinity: the incoming pod's own namespace must be one the selector resolved to for the
     * first-pod-of-a-series rule; "nowhere" has no Namespace object. */
    const char *aff =
        AFF(REQ(TERM_X(SEL(EX_EXISTS("a")), "zone",
                       "'namespaceSelector':{'matchExpressions':[" EX_NOTEXISTS("team") "]}")));
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    expect_filter(c, incoming("nowhere", "'a':'b'", aff), "node1", UNR, R_AFF);
}

/* ...while an existing pod's selector is matched against the incoming pod's namespace labels,
 * which are empty when that namespace is unknown (upstream GetNamespaceLabelsSnapshot). */
Test(inter_pod_affinity, existing_namespace_selector_sees_unknown_namespace_as_unlabelled)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    add_node(c, "node1", "'region':'r1','zone':'z11'");
    add_pod(
        c, "node1", "subteam1.team1", "'service':'securityscan'",
        ANTI(REQ(TERM_X(SEL(EX_EXISTS("security")), "zone",
                        "'namespaceSelector':{'matchExpressions':[" EX_NOTEXISTS("team") "]}"))));
    expect_filter(c, incoming("nowhere", "'security':'S1'", NULL), "node1", UNS, R_EXISTING);
    expect_filter(c, incoming("subteam2.team2", "'security':'S1'", NULL), "node1", KS_SUCCESS,
                  NULL);
}

/* ---- matchLabelKeys / mismatchLabelKeys ------------------------------------------------------ */

Test(inter_pod_affinity, match_label_keys_require_the_owner_value)
{
    const char *aff =
        AFF(REQ(TERM_X(SEL(EX_IN("app", "'web'")), "zone", "'matchLabelKeys':['version']")));
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'zone':'z1'");
    add_pod(c, "node1", "default", "'app':'web','version':'v2'", NULL);
    expect_filter(c, incoming("default", "'version':'v1'", aff), "node1", UNR, R_AFF);
    add_pod(c, "node1", "default", "'app':'web','version':'v1'", NULL);
    expect_filter(c, incoming("default", "'version':'v1'", aff), "node1", KS_SUCCESS, NULL);
    /* A key the owner does not have adds nothing. */
    c = th_cluster_new();
    add_node(c, "node1", "'zone':'z1'");
    add_pod(c, "node1", "default", "'app':'web','version':'v2'", NULL);
    expect_filter(c, incoming("default", "", aff), "node1", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, mismatch_label_keys_exclude_the_owner_value)
{
    const char *anti =
        ANTI(REQ(TERM_X(SEL(EX_IN("app", "'web'")), "zone", "'mismatchLabelKeys':['tenant']")));
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'zone':'z1'");
    add_pod(c, "node1", "default", "'app':'web','tenant':'a'", NULL);
    expect_filter(c, incoming("default", "'tenant':'a'", anti), "node1", KS_SUCCESS, NULL);
    expect_filter(c, incoming("default", "'tenant':'b'", anti), "node1", UNS, R_ANTI);
}

/* ===================== Filter: several nodes (TestRequiredAffinityMultipleNodes) ============== */

Test(inter_pod_affinity, affinity_admits_every_node_sharing_the_topology_value)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", "'region':'China'");
    add_node(c, "node2", "'region':'China','az':'az1'");
    add_node(c, "node3", "'region':'India'");
    add_pod(c, "node1", "default", "'foo':'bar'", NULL);
    ks_pod *p = incoming("default", NULL, AFF(REQ(IN("foo", "'bar'", "region"))));
    expect_filter(c, p, "node1", KS_SUCCESS, NULL);
    expect_filter(c, p, "node2", KS_SUCCESS, NULL);
    expect_filter(c, p, "node3", UNR, R_AFF);
}

Test(inter_pod_affinity, first_pod_of_self_affine_group_goes_anywhere_with_the_keys)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'zone':'az1','hostname':'h1'");
    add_node(c, "nodeB", "'zone':'az2','hostname':'h2'");
    add_pod(c, "nodeA", "default", "'foo':'bar'", NULL);
    ks_pod *p =
        incoming("default", "'foo':'bar','service':'securityscan'",
                 AFF(REQ(IN("foo", "'bar'", "zone") "," IN("service", "'securityscan'", "zone"))));
    expect_filter(c, p, "nodeA", KS_SUCCESS, NULL);
    expect_filter(c, p, "nodeB", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, first_pod_of_group_still_needs_the_topology_keys)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'zoneLabel':'az1','hostname':'h1'");
    add_node(c, "nodeB", "'zoneLabel':'az2','hostname':'h2'");
    add_pod(c, "nodeA", "default", "'foo':'bar'", NULL);
    ks_pod *p =
        incoming("default", "'foo':'bar','service':'securityscan'",
                 AFF(REQ(IN("foo", "'bar'", "zone") "," IN("service", "'securityscan'", "zone"))));
    expect_filter(c, p, "nodeA", UNR, R_AFF);
    expect_filter(c, p, "nodeB", UNR, R_AFF);
}

Test(inter_pod_affinity, anti_affinity_rejects_every_node_of_the_region)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':'abc'", NULL);
    ks_pod *p = incoming("default", NULL, ANTI(REQ(IN("foo", "'abc'", "region"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNS, R_ANTI);
}

Test(inter_pod_affinity, anti_affinity_any_matching_term_rejects)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':'abc','service':'securityscan'", NULL);
    ks_pod *p = incoming(
        "default", NULL,
        ANTI(REQ(IN("foo", "'abc'", "region") "," IN("service", "'securityscan'", "zone"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNS, R_ANTI);
}

Test(inter_pod_affinity, anti_affinity_leaves_other_regions_open)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'China'");
    add_node(c, "nodeB", "'region':'China','az':'az1'");
    add_node(c, "nodeC", "'region':'India'");
    add_pod(c, "nodeA", "default", "'foo':'abc'", NULL);
    ks_pod *p = incoming("default", NULL, ANTI(REQ(IN("foo", "'abc'", "region"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNS, R_ANTI);
    expect_filter(c, p, "nodeC", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, existing_anti_affinity_of_other_namespace_does_not_apply)
{
    th_cluster *c = th_cluster_new();
    add_namespace(c, "NS1", "'kind':'test'"); /* labels: core/api/store.c qsorts NULL for none */
    add_node(c, "nodeA", "'region':'China'");
    add_node(c, "nodeB", "'region':'China','az':'az1'");
    add_node(c, "nodeC", "'region':'India'");
    add_pod(c, "nodeA", "NS1", "'foo':'bar'", NULL);
    add_pod(c, "nodeC", "NS2", NULL, ANTI(REQ(IN("foo", "'123'", "region"))));
    ks_pod *p = incoming("NS1", "'foo':'123'", ANTI(REQ(IN("foo", "'bar'", "region"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNS, R_ANTI);
    expect_filter(c, p, "nodeC", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, existing_anti_affinity_term_without_node_key_counts_nothing)
{
    world w;
    world_init(&w);
    world_node(&w, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    world_node(&w, "nodeB", "'region':'r1','zone':'z1','hostname':'nodeB'");
    world_pod(&w, "nodeA", NULL, ANTI(REQ(EXISTS("foo", "invalid-node-label"))));
    cr_assert_eq(world_skip_code(&w, world_pod(&w, NULL, "'foo':''", NULL)), KS_SKIP);
    world_free(&w);
}

Test(inter_pod_affinity, incoming_anti_affinity_needs_the_topology_key_on_the_node)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z1','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':''", NULL);
    ks_pod *p = incoming("default", NULL, ANTI(REQ(EXISTS("foo", "invalid-node-label"))));
    expect_filter(c, p, "nodeA", KS_SUCCESS, NULL);
    expect_filter(c, p, "nodeB", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, existing_pods_terms_each_reject_across_their_topologies)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", NULL, ANTI(REQ(EXISTS("foo", "zone"))));
    add_pod(c, "nodeA", "default", NULL, ANTI(REQ(EXISTS("bar", "region"))));
    ks_pod *p = incoming("default", "'foo':'','bar':''", NULL);
    expect_filter(c, p, "nodeA", UNS, R_EXISTING);
    expect_filter(c, p, "nodeB", UNS, R_EXISTING);
}

Test(inter_pod_affinity, incoming_anti_affinity_one_violated_term_rejects)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':''", NULL);
    add_pod(c, "nodeB", "default", "'bar':''", NULL);
    ks_pod *p =
        incoming("default", NULL, ANTI(REQ(EXISTS("foo", "zone") "," EXISTS("bar", "region"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNS, R_ANTI);
}

Test(inter_pod_affinity, existing_term_counts_only_when_selector_and_key_match)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", NULL,
            ANTI(REQ(EXISTS("foo", "invalid-node-label") "," EXISTS("bar", "zone"))));
    ks_pod *p = incoming("default", "'foo':'','bar':''", NULL);
    expect_filter(c, p, "nodeA", UNS, R_EXISTING);
    expect_filter(c, p, "nodeB", KS_SUCCESS, NULL);
    /* Both keys valid: region r1 covers nodeB too. */
    c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", NULL,
            ANTI(REQ(EXISTS("foo", "region") "," EXISTS("bar", "zone"))));
    expect_filter(c, p, "nodeA", UNS, R_EXISTING);
    expect_filter(c, p, "nodeB", UNS, R_EXISTING);
}

Test(inter_pod_affinity, incoming_term_counts_only_when_selector_and_key_match)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':'','bar':''", NULL);
    ks_pod *p = incoming("default", NULL,
                         ANTI(REQ(EXISTS("foo", "invalid-node-label") "," EXISTS("bar", "zone"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", KS_SUCCESS, NULL);
    p = incoming("default", NULL, ANTI(REQ(EXISTS("foo", "region") "," EXISTS("bar", "zone"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNS, R_ANTI);
}

Test(inter_pod_affinity, existing_anti_affinity_on_two_nodes_leaves_the_third)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_node(c, "nodeC", "'region':'r1','zone':'z3','hostname':'nodeC'");
    add_pod(c, "nodeA", "default", NULL,
            ANTI(REQ(EXISTS("foo", "zone") "," EXISTS("labelA", "zone"))));
    add_pod(c, "nodeB", "default", NULL,
            ANTI(REQ(EXISTS("bar", "zone") "," EXISTS("labelB", "zone"))));
    ks_pod *p = incoming("default", "'foo':'','bar':''", NULL);
    expect_filter(c, p, "nodeA", UNS, R_EXISTING);
    expect_filter(c, p, "nodeB", UNS, R_EXISTING);
    expect_filter(c, p, "nodeC", KS_SUCCESS, NULL);
}

Test(inter_pod_affinity, affinity_terms_must_all_match_the_same_pod)
{
    const char *aff = AFF(REQ(EXISTS("foo", "region") "," EXISTS("bar", "zone")));
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z1','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':'','bar':''", NULL);
    expect_filter(c, incoming("default", NULL, aff), "nodeA", KS_SUCCESS, NULL);
    expect_filter(c, incoming("default", NULL, aff), "nodeB", KS_SUCCESS, NULL);
    c = th_cluster_new();
    add_node(c, "nodeA", "'region':'r1','zone':'z1','hostname':'nodeA'");
    add_node(c, "nodeB", "'region':'r1','zone':'z2','hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'foo':''", NULL);
    add_pod(c, "nodeB", "default", "'bar':''", NULL);
    expect_filter(c, incoming("default", NULL, aff), "nodeA", UNR, R_AFF);
    expect_filter(c, incoming("default", NULL, aff), "nodeB", UNR, R_AFF);
}

/* TestGetTPMapMatchingIncomingAffinityAntiAffinity, seen through Filter on one host. */
Test(inter_pod_affinity, incoming_terms_counted_per_host)
{
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "'hostname':'nodeA'");
    add_node(c, "nodeB", "'hostname':'nodeB'");
    add_pod(c, "nodeA", "default", "'aaa':''", NULL);
    /* affinity and anti-affinity on the same label: nodeA has it, nodeB has no match at all. */
    ks_pod *p =
        incoming("default", NULL,
                 AFF(REQ(EXISTS("aaa", "hostname"))) "," ANTI(REQ(EXISTS("aaa", "hostname"))));
    expect_filter(c, p, "nodeA", UNS, R_ANTI);
    expect_filter(c, p, "nodeB", UNR, R_AFF);
    /* The existing pod matches one affinity term of two: no affinity count anywhere, and the
     * incoming pod does not match its own terms. */
    p = incoming("default", NULL,
                 AFF(REQ(EXISTS("aaa", "hostname") "," EXISTS("bbb", "hostname"))) "," ANTI(
                     REQ(EXISTS("aaa", "hostname") "," EXISTS("bbb", "hostname"))));
    expect_filter(c, p, "nodeA", UNR, R_AFF);
    expect_filter(c, p, "nodeB", UNR, R_AFF);
}

/* ============================== PreFilter state and extensions ================================ */

Test(inter_pod_affinity, filter_without_prefilter_state_is_an_error)
{
    world w;
    world_init(&w);
    world_node(&w, "node1", "");
    ks_pod *p = world_pod(&w, NULL, NULL, NULL);
    cr_assert_eq(ks__cache_update_snapshot(w.cache, w.snap), 0);
    ks_cycle *cycle = w.cycles[w.ncycles++] = ks__cycle_new(w.snap, p);
    ks_status st;
    char msg[256];
    ks__status_reset(&st);
    cr_assert_eq(ks_plugin_inter_pod_affinity.filter(w.self, cycle, p, world_ni(&w, "node1"), &st),
                 KS_ERROR);
    ks__status_message(&st, msg, sizeof(msg));
    cr_assert_str_eq(msg, "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
    world_free(&w);
}

/* nodeA {region r1, zone z11}, nodeB {r1, z12}, nodeC {r2, z21}. */
static void three_region_nodes(world *w)
{
    world_node(w, "nodeA", "'region':'r1','zone':'z11'");
    world_node(w, "nodeB", "'region':'r1','zone':'z12'");
    world_node(w, "nodeC", "'region':'r2','zone':'z21'");
}

static void expect_world(world *w, ks_cycle *cycle, ks_pod *p, ks_code a, ks_code b, ks_code c)
{
    cr_assert_eq(world_filter(w, cycle, p, "nodeA"), a, "nodeA");
    cr_assert_eq(world_filter(w, cycle, p, "nodeB"), b, "nodeB");
    cr_assert_eq(world_filter(w, cycle, p, "nodeC"), c, "nodeC");
}

Test(inter_pod_affinity, add_pod_counts_for_incoming_affinity_and_remove_pod_undoes_it)
{
    world w;
    world_init(&w);
    three_region_nodes(&w);
    ks_pod *p = world_pod(&w, NULL, NULL, AFF(REQ(IN("foo", "'bar'", "zone"))));
    ks_pod *added = world_pod(&w, NULL, "'foo':'bar'", NULL);
    ks_code code;
    ks_cycle *cycle = world_pre_filter(&w, p, &code);
    cr_assert_eq(code, KS_SUCCESS);
    expect_world(&w, cycle, p, UNR, UNR, UNR);
    world_add(&w, cycle, p, added, "nodeB", 1);
    expect_world(&w, cycle, p, UNR, KS_SUCCESS, UNR);
    world_add(&w, cycle, p, added, "nodeB", 0);
    expect_world(&w, cycle, p, UNR, UNR, UNR);
    world_free(&w);
}

Test(inter_pod_affinity, add_pod_counts_for_incoming_anti_affinity_and_remove_pod_undoes_it)
{
    world w;
    world_init(&w);
    three_region_nodes(&w);
    ks_pod *p = world_pod(&w, NULL, NULL, ANTI(REQ(IN("foo", "'bar'", "region"))));
    ks_pod *added = world_pod(&w, NULL, "'foo':'bar'", NULL);
    ks_code code;
    ks_cycle *cycle = world_pre_filter(&w, p, &code);
    cr_assert_eq(code, KS_SUCCESS);
    expect_world(&w, cycle, p, KS_SUCCESS, KS_SUCCESS, KS_SUCCESS);
    world_add(&w, cycle, p, added, "nodeA", 1);
    expect_world(&w, cycle, p, UNS, UNS, KS_SUCCESS);
    world_add(&w, cycle, p, added, "nodeA", 0);
    expect_world(&w, cycle, p, KS_SUCCESS, KS_SUCCESS, KS_SUCCESS);
    world_free(&w);
}

Test(inter_pod_affinity, add_pod_counts_existing_anti_affinity_and_remove_pod_undoes_it)
{
    world w;
    world_init(&w);
    three_region_nodes(&w);
    /* An anti-affinity term that matches nothing keeps PreFilter from skipping. */
    ks_pod *p = world_pod(&w, NULL, "'foo':'bar'", ANTI(REQ(EXISTS("nothing", "zone"))));
    ks_pod *added = world_pod(&w, NULL, NULL, ANTI(REQ(IN("foo", "'bar'", "zone"))));
    ks_code code;
    ks_cycle *cycle = world_pre_filter(&w, p, &code);
    cr_assert_eq(code, KS_SUCCESS);
    world_add(&w, cycle, p, added, "nodeC", 1);
    expect_world(&w, cycle, p, KS_SUCCESS, KS_SUCCESS, UNS);
    world_add(&w, cycle, p, added, "nodeC", 0);
    expect_world(&w, cycle, p, KS_SUCCESS, KS_SUCCESS, KS_SUCCESS);
    world_free(&w);
}

/* upstream TestPreFilterStateAddRemovePod: PreFilter on the pods without the added one, then
 * AddPod, decides every node as PreFilter with all the pods does. */
Test(inter_pod_affinity, add_pod_state_equals_prefilter_with_the_pod)
{
    const char *aff_complex = AFF(REQ(IN("foo", "'bar','buzz'", "region") "," NOTIN(
        "service", "'bar','security','test'", "zone")));
    const char *anti_complex = ANTI(REQ(IN("foo", "'bar','buzz'", "region") "," NOTIN(
        "service", "'bar','security','test'", "zone")));
    const char *anti_foobar = ANTI(REQ(IN("foo", "'bar'", "region")));
    const char *pending_affinity[] = {anti_foobar, anti_complex, aff_complex};
    for (int t = 0; t < 3; t++) {
        world w1, w2;
        world_init(&w1);
        world_init(&w2);
        three_region_nodes(&w1);
        three_region_nodes(&w2);
        world_pod(&w1, "nodeA", "'foo':'bar'", NULL);
        world_pod(&w2, "nodeA", "'foo':'bar'", NULL);
        world_pod(&w1, "nodeC", NULL, anti_foobar);
        world_pod(&w2, "nodeC", NULL, anti_foobar);
        const char *added_aff = t == 0 ? anti_foobar : anti_complex;
        const char *added_node = t == 0 ? "nodeB" : "nodeA";
        ks_pod *added = world_pod(&w1, NULL, "'foo':'bar'", added_aff);
        world_pod(&w2, added_node, "'foo':'bar'", added_aff);
        ks_pod *p = world_pod(&w1, NULL, "'foo':'bar'", pending_affinity[t]);
        ks_code c1, c2;
        ks_cycle *without = world_pre_filter(&w1, p, &c1);
        ks_cycle *with = world_pre_filter(&w2, p, &c2);
        cr_assert_eq(c1, KS_SUCCESS);
        cr_assert_eq(c2, KS_SUCCESS);
        ks_cycle *clone = w1.cycles[w1.ncycles++] = ks__cycle_clone(without);
        world_add(&w1, clone, p, added, added_node, 1);
        const char *nodes[] = {"nodeA", "nodeB", "nodeC"};
        for (int i = 0; i < 3; i++)
            cr_assert_eq(world_filter(&w1, clone, p, nodes[i]),
                         world_filter(&w2, with, p, nodes[i]), "case %d %s", t, nodes[i]);
        world_free(&w2);
        world_free(&w1);
    }
}

Test(inter_pod_affinity, add_pod_on_a_clone_leaves_the_original_state_alone)
{
    world w;
    world_init(&w);
    char name[16], labels[32];
    ks_pod *placed[8];
    /* Eight regions with a matching pod each fill the anti-affinity table to its growth point,
     * so the clone's AddPod below reallocates it. */
    for (int i = 0; i < 9; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        snprintf(labels, sizeof(labels), "'region':'r%d'", i);
        world_node(&w, name, labels);
        if (i < 8)
            placed[i] = world_pod(&w, name, "'foo':'bar'", NULL);
    }
    ks_pod *p = world_pod(&w, NULL, NULL, ANTI(REQ(IN("foo", "'bar'", "region"))));
    ks_pod *added = world_pod(&w, NULL, "'foo':'bar'", NULL);
    ks_code code;
    ks_cycle *cycle = world_pre_filter(&w, p, &code);
    cr_assert_eq(code, KS_SUCCESS);
    ks_cycle *clone = w.cycles[w.ncycles++] = ks__cycle_clone(cycle);
    cr_assert_not_null(clone);
    world_add(&w, clone, p, added, "n8", 1);
    cr_assert_eq(world_filter(&w, clone, p, "n8"), UNS);
    cr_assert_eq(world_filter(&w, cycle, p, "n8"), KS_SUCCESS);
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        cr_assert_eq(world_filter(&w, clone, p, name), UNS);
        cr_assert_eq(world_filter(&w, cycle, p, name), UNS);
    }
    world_add(&w, clone, p, added, "n8", 0);
    cr_assert_eq(world_filter(&w, clone, p, "n8"), KS_SUCCESS);
    /* A change in place (no growth) on another clone. */
    ks_cycle *clone2 = w.cycles[w.ncycles++] = ks__cycle_clone(cycle);
    world_add(&w, clone2, p, placed[0], "n0", 0);
    cr_assert_eq(world_filter(&w, clone2, p, "n0"), KS_SUCCESS);
    cr_assert_eq(world_filter(&w, cycle, p, "n0"), UNS);
    world_free(&w);
}

/* ================================ Score (TestPreferredAffinity) =============================== */

#define S1 "'security':'S1'"
#define S2 "'security':'S2'"
#define CHINA "'region':'China'"
#define INDIA "'region':'India'"
#define AZ1 "'az':'az1'"
#define AZ2 "'az':'az2'"
#define CHINA_AZ1 "'region':'China','az':'az1'"
#define STAY_S1_REGION AFF(PREF(W(5, IN("security", "'S1'", "region"))))
#define STAY_S2_REGION AFF(PREF(W(6, IN("security", "'S2'", "region"))))
#define AFFINITY3                                                                                  \
    AFF(PREF(W(                                                                                    \
        8, TERM(SEL(EX_NOTIN("security", "'S1'") "," EX_IN("security", "'S2'")),                   \
                "region")) "," W(2, TERM(SEL(EX_EXISTS("security") "," EX_NOTEXISTS("wrongkey")),  \
                                         "region"))))
#define HARD_AFFINITY                                                                              \
    AFF(REQ(IN("security", "'S1','value2'", "region") "," TERM(                                    \
        SEL(EX_EXISTS("security") "," EX_NOTEXISTS("wrongkey")), "region")))
#define AWAY_S1_AZ ANTI(PREF(W(5, IN("security", "'S1'", "az"))))
#define AWAY_S2_AZ ANTI(PREF(W(5, IN("security", "'S2'", "az"))))
#define STAY_S1_REGION_AWAY_S2_AZ                                                                  \
    AFF(PREF(W(8, IN("security", "'S1'", "region"))))                                              \
    "," ANTI(PREF(W(5, IN("security", "'S2'", "az"))))
#define NS_SEL_TERM                                                                                \
    TERM_X(SEL(EX_IN("security", "'S1'")), "region",                                               \
           "'namespaces':['subteam2.team2']," TEAM1_SELECTOR)
#define AFFINITY_NS_SELECTOR AFF(PREF(W(5, NS_SEL_TERM)))
#define ANTI_AFFINITY_NS_SELECTOR ANTI(PREF(W(5, NS_SEL_TERM)))

static void nodes_of(th_cluster *c, const char *const *labels, size_t n)
{
    char name[16];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "node%zu", i + 1);
        add_node(c, name, labels[i]);
    }
}

/* Scores the pod with args; checks raw (when want_raw) and normalized scores. */
static void expect_scores(th_cluster *c, const char *args, ks_pod *pod, size_t n,
                          const int64_t *want_raw, const int64_t *want)
{
    int64_t raw[16], norm[16];
    th_plugin *p = th_plugin_new(&ks_plugin_inter_pod_affinity, args);
    cr_assert_eq(th_score(p, c, pod, raw, norm), KS_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        if (want_raw)
            cr_assert_eq(raw[i], want_raw[i], "raw[%zu] = %lld, want %lld", i, (long long)raw[i],
                         (long long)want_raw[i]);
        cr_assert_eq(norm[i], want[i], "normalized[%zu] = %lld, want %lld", i, (long long)norm[i],
                     (long long)want[i]);
    }
}

/* PreScore's own code, on a world cluster (th_score turns Skip into zeros). args: JSON or NULL. */
static ks_code world_pre_score(world *w, ks_pod *pod, const char *args)
{
    char json[256];
    struct ks_args a = {0};
    ks_status st;
    void *self = w->self;
    if (args) {
        snprintf(json, sizeof(json), "%s", args);
        for (char *q = json; *q; q++)
            if (*q == '\'')
                *q = '"';
        a.json = cJSON_Parse(json);
        cr_assert_not_null(a.json);
        self = ks_plugin_inter_pod_affinity.create(&a, NULL);
        cr_assert_not_null(self);
    }
    cr_assert_eq(ks__cache_update_snapshot(w->cache, w->snap), 0);
    ks_cycle *cycle = w->cycles[w->ncycles++] = ks__cycle_new(w->snap, pod);
    ks__status_reset(&st);
    ks_code code = ks_plugin_inter_pod_affinity.pre_score(self, cycle, pod, NULL, 0, &st);
    if (args) {
        ks_plugin_inter_pod_affinity.destroy(self);
        cJSON_Delete((cJSON *)a.json);
    }
    return code;
}

Test(inter_pod_affinity, score_skips_when_no_pod_has_affinity)
{
    world w;
    world_init(&w);
    world_node(&w, "node1", CHINA);
    world_node(&w, "node2", INDIA);
    world_node(&w, "node3", AZ1);
    cr_assert_eq(world_pre_score(&w, world_pod(&w, NULL, S1, NULL), NULL), KS_SKIP);
    world_free(&w);
}

Test(inter_pod_affinity, score_skips_with_no_nodes)
{
    world w;
    world_init(&w);
    cr_assert_eq(world_pre_score(&w, world_pod(&w, NULL, S2, STAY_S2_REGION), NULL), KS_SKIP);
    world_free(&w);
}

Test(inter_pod_affinity, preferred_affinity_favours_matching_pods_in_the_topology)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S2, NULL);
    add_pod(c, "node3", "default", S1, NULL); /* node3 has no region */
    expect_scores(c, NULL, incoming("default", S1, STAY_S1_REGION), 3, (int64_t[]){5, 0, 0},
                  (int64_t[]){100, 0, 0});
}

Test(inter_pod_affinity, preferred_affinity_scores_every_node_of_the_topology_value)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, CHINA_AZ1, INDIA};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, NULL);
    expect_scores(c, NULL, incoming("default", NULL, STAY_S1_REGION), 3, (int64_t[]){5, 5, 0},
                  (int64_t[]){100, 100, 0});
}

Test(inter_pod_affinity, preferred_affinity_region_with_more_matches_wins)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA, CHINA, CHINA, INDIA};
    nodes_of(c, nodes, 5);
    const char *on[] = {"node1", "node1", "node2", "node3", "node4", "node5"};
    for (int i = 0; i < 6; i++)
        add_pod(c, on[i], "default", S2, NULL);
    expect_scores(c, NULL, incoming("default", S1, STAY_S2_REGION), 5,
                  (int64_t[]){24, 12, 24, 24, 12}, (int64_t[]){100, 0, 100, 100, 0});
}

Test(inter_pod_affinity, preferred_affinity_weights_add_per_matching_term)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S2, NULL);
    add_pod(c, "node3", "default", S1, NULL);
    expect_scores(c, NULL, incoming("default", S1, AFFINITY3), 3, (int64_t[]){2, 10, 0},
                  (int64_t[]){20, 100, 0});
}

Test(inter_pod_affinity, existing_pods_preferred_affinity_attracts_matching_pod)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, STAY_S1_REGION);
    add_pod(c, "node2", "default", S2, STAY_S2_REGION);
    expect_scores(c, NULL, incoming("default", S2, NULL), 3, (int64_t[]){0, 6, 0},
                  (int64_t[]){0, 100, 0});
}

Test(inter_pod_affinity, existing_pods_preferred_affinity_honours_namespace_selector)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, AFFINITY_NS_SELECTOR);
    add_pod(c, "node2", "default", S2, STAY_S2_REGION);
    expect_scores(c, NULL, incoming("subteam1.team1", S1, NULL), 3, (int64_t[]){5, 0, 0},
                  (int64_t[]){100, 0, 0});
}

Test(inter_pod_affinity, existing_pods_preferred_anti_affinity_honours_namespace_selector)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, ANTI_AFFINITY_NS_SELECTOR);
    add_pod(c, "node2", "default", S2, STAY_S2_REGION);
    expect_scores(c, NULL, incoming("subteam1.team1", S1, NULL), 3, (int64_t[]){-5, 0, 0},
                  (int64_t[]){0, 100, 100});
}

Test(inter_pod_affinity, existing_pods_required_affinity_counts_with_hard_weight)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", S1, HARD_AFFINITY);
    add_pod(c, "node2", "default", S2, HARD_AFFINITY);
    expect_scores(c, NULL, incoming("default", S1, NULL), 3, (int64_t[]){2, 2, 0},
                  (int64_t[]){100, 100, 0});
}

Test(inter_pod_affinity, preferred_anti_affinity_penalises_matching_pods)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {AZ1, CHINA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S2, NULL);
    expect_scores(c, NULL, incoming("default", S1, AWAY_S1_AZ), 2, (int64_t[]){-5, 0},
                  (int64_t[]){0, 100});
}

Test(inter_pod_affinity, preferred_anti_affinity_ignores_nodes_without_the_key)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {AZ1, CHINA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S1, NULL);
    expect_scores(c, NULL, incoming("default", S1, AWAY_S1_AZ), 2, (int64_t[]){-5, 0},
                  (int64_t[]){0, 100});
}

Test(inter_pod_affinity, preferred_anti_affinity_more_matches_score_lower)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {AZ1, INDIA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S2, NULL);
    expect_scores(c, NULL, incoming("default", S1, AWAY_S1_AZ), 2, (int64_t[]){-10, 0},
                  (int64_t[]){0, 100});
}

Test(inter_pod_affinity, existing_pods_preferred_anti_affinity_repels_matching_pod)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {AZ1, AZ2};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, AWAY_S2_AZ);
    add_pod(c, "node2", "default", S2, AWAY_S1_AZ);
    expect_scores(c, NULL, incoming("default", S2, NULL), 2, (int64_t[]){-5, 0},
                  (int64_t[]){0, 100});
}

Test(inter_pod_affinity, preferred_affinity_and_anti_affinity_combine)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, AZ1};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S1, NULL);
    expect_scores(c, NULL, incoming("default", S1, STAY_S1_REGION_AWAY_S2_AZ), 2, (int64_t[]){8, 0},
                  (int64_t[]){100, 0});
}

Test(inter_pod_affinity, same_service_pods_gather_by_region)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA_AZ1, INDIA, CHINA, CHINA, INDIA};
    nodes_of(c, nodes, 5);
    const char *on[] = {"node1", "node1", "node2", "node3", "node3", "node4", "node5"};
    for (int i = 0; i < 7; i++)
        add_pod(c, on[i], "default", S1, NULL);
    expect_scores(c, NULL, incoming("default", S1, STAY_S1_REGION_AWAY_S2_AZ), 5,
                  (int64_t[]){40, 16, 40, 40, 16}, (int64_t[]){100, 0, 100, 100, 0});
}

Test(inter_pod_affinity, incoming_and_existing_terms_add_up_with_signs)
{
    /* affinity 8, anti-affinity -5, symmetric affinity 8, symmetric anti-affinity -5. */
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, AZ1, INDIA, AZ2};
    nodes_of(c, nodes, 4);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", S2, NULL);
    add_pod(c, "node3", "default", NULL, STAY_S1_REGION_AWAY_S2_AZ);
    add_pod(c, "node4", "default", NULL, AWAY_S1_AZ);
    expect_scores(c, NULL, incoming("default", S1, STAY_S1_REGION_AWAY_S2_AZ), 4,
                  (int64_t[]){8, -5, 8, -5}, (int64_t[]){100, 0, 100, 0});
}

Test(inter_pod_affinity, equal_raw_scores_normalize_to_zero)
{
    /* upstream issue 82796: some nodes of a topology have no pod with affinity. */
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, CHINA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, NULL);
    add_pod(c, "node2", "default", NULL, STAY_S1_REGION_AWAY_S2_AZ);
    expect_scores(c, NULL, incoming("default", S1, NULL), 2, (int64_t[]){8, 8}, (int64_t[]){0, 0});
}

Test(inter_pod_affinity, preferred_affinity_namespace_selector_and_namespaces)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    const char *nodes[] = {CHINA, INDIA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "subteam1.team1", S1, NULL);
    add_pod(c, "node1", "subteam1.team1", S1, NULL);
    add_pod(c, "node1", "subteam1.team2", S1, NULL); /* neither selected nor listed */
    add_pod(c, "node2", "subteam2.team1", S1, NULL);
    expect_scores(c, NULL, incoming("subteam1.team1", S1, AFFINITY_NS_SELECTOR), 2,
                  (int64_t[]){10, 5}, (int64_t[]){100, 0});
    add_pod(c, "node1", "subteam2.team2", S1, NULL); /* listed in namespaces */
    expect_scores(c, NULL, incoming("subteam1.team1", S1, AFFINITY_NS_SELECTOR), 2,
                  (int64_t[]){15, 5}, (int64_t[]){100, 0});
}

Test(inter_pod_affinity, preferred_anti_affinity_namespace_selector_and_namespaces)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    const char *nodes[] = {CHINA, INDIA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "subteam1.team1", S1, NULL);
    add_pod(c, "node1", "subteam1.team1", S1, NULL);
    add_pod(c, "node1", "subteam1.team2", S1, NULL);
    add_pod(c, "node2", "subteam2.team1", S1, NULL);
    expect_scores(c, NULL, incoming("subteam1.team1", S1, ANTI_AFFINITY_NS_SELECTOR), 2,
                  (int64_t[]){-10, -5}, (int64_t[]){0, 100});
    add_pod(c, "node1", "subteam2.team2", S1, NULL);
    expect_scores(c, NULL, incoming("subteam1.team1", S1, ANTI_AFFINITY_NS_SELECTOR), 2,
                  (int64_t[]){-15, -5}, (int64_t[]){0, 100});
}

Test(inter_pod_affinity, ignore_preferred_terms_of_existing_pods_skips_pod_without_preferences)
{
    world w;
    world_init(&w);
    world_node(&w, "node1", CHINA);
    world_node(&w, "node2", INDIA);
    world_pod(&w, "node1", S1, STAY_S1_REGION_AWAY_S2_AZ);
    world_pod(&w, "node2", S2, STAY_S2_REGION);
    ks_pod *p = world_pod(&w, NULL, S2, NULL);
    cr_assert_eq(world_pre_score(&w, p, "{'ignorePreferredTermsOfExistingPods':true}"), KS_SKIP);
    cr_assert_eq(world_pre_score(&w, p, "{'ignorePreferredTermsOfExistingPods':false}"),
                 KS_SUCCESS);
    world_free(&w);

    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA};
    nodes_of(c, nodes, 2);
    add_pod(c, "node1", "default", S1, STAY_S1_REGION_AWAY_S2_AZ);
    add_pod(c, "node2", "default", S2, STAY_S2_REGION);
    expect_scores(c, "{'ignorePreferredTermsOfExistingPods':true}", incoming("default", S2, NULL),
                  2, (int64_t[]){0, 0}, (int64_t[]){0, 0});
    expect_scores(c, "{'ignorePreferredTermsOfExistingPods':false}", incoming("default", S2, NULL),
                  2, (int64_t[]){0, 6}, (int64_t[]){0, 100});
}

/* As upstream: the flag only short-cuts pods without preferred terms; a pod with its own
 * preferences still sees the existing pods' terms. */
Test(inter_pod_affinity, ignore_preferred_terms_keeps_existing_terms_for_pod_with_preferences)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node2", "default", S2, STAY_S2_REGION);
    add_pod(c, "node3", "default", S1, NULL);
    expect_scores(c, "{'ignorePreferredTermsOfExistingPods':true}",
                  incoming("default", S2, AWAY_S1_AZ), 3, (int64_t[]){0, 6, -5},
                  (int64_t[]){45, 100, 0});
}

Test(inter_pod_affinity, normalize_truncates_like_upstream_float_math)
{
    th_cluster *c = th_cluster_new();
    const char *nodes[] = {"'region':'a'", "'region':'b'", "'region':'c'"};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", "'app':'x'", NULL);
    for (int i = 0; i < 3; i++)
        add_pod(c, "node2", "default", "'app':'x'", NULL);
    expect_scores(c, NULL, incoming("default", NULL, AFF(PREF(W(1, IN("app", "'x'", "region"))))),
                  3, (int64_t[]){1, 3, 0}, (int64_t[]){33, 100, 0});
}

/* ====================== Score: hard affinity weight (TestPreferredAffinityWith...) ============ */

#define HARD_SERVICE_S1                                                                            \
    AFF(REQ(TERM_X(SEL(EX_IN("service", "'S1'")), "region",                                        \
                   "'namespaces':['default','subteam2.team2']," TEAM1_SELECTOR)))

static th_cluster *hard_weight_cluster(void)
{
    th_cluster *c = th_cluster_new();
    add_team_namespaces(c);
    const char *nodes[] = {CHINA, INDIA, AZ1};
    nodes_of(c, nodes, 3);
    add_pod(c, "node1", "default", NULL, HARD_SERVICE_S1);
    add_pod(c, "node2", "default", NULL, HARD_SERVICE_S1);
    return c;
}

Test(inter_pod_affinity, hard_affinity_symmetry_uses_default_weight)
{
    expect_scores(hard_weight_cluster(), NULL, incoming("default", "'service':'S1'", NULL), 3,
                  (int64_t[]){1, 1, 0}, (int64_t[]){100, 100, 0});
}

Test(inter_pod_affinity, hard_affinity_symmetry_uses_configured_weight)
{
    expect_scores(hard_weight_cluster(), "{'hardPodAffinityWeight':5}",
                  incoming("default", "'service':'S1'", NULL), 3, (int64_t[]){5, 5, 0},
                  (int64_t[]){100, 100, 0});
}

Test(inter_pod_affinity, hard_affinity_symmetry_zero_weight_skips)
{
    world w;
    world_init(&w);
    world_node(&w, "node1", CHINA);
    world_node(&w, "node2", INDIA);
    world_pod(&w, "node1", NULL, HARD_SERVICE_S1);
    world_pod(&w, "node2", NULL, HARD_SERVICE_S1);
    ks_pod *p = world_pod(&w, NULL, "'service':'S1'", NULL);
    cr_assert_eq(world_pre_score(&w, p, "{'hardPodAffinityWeight':0}"), KS_SKIP);
    cr_assert_eq(world_pre_score(&w, p, "{'hardPodAffinityWeight':1}"), KS_SUCCESS);
    world_free(&w);
}

Test(inter_pod_affinity, hard_affinity_symmetry_needs_a_matching_namespace)
{
    /* subteam1.team2: not listed, and its labels do not match the selector. */
    expect_scores(hard_weight_cluster(), NULL, incoming("subteam1.team2", "'service':'S1'", NULL),
                  3, (int64_t[]){0, 0, 0}, (int64_t[]){0, 0, 0});
    expect_scores(hard_weight_cluster(), NULL, incoming("subteam1.team1", "'service':'S1'", NULL),
                  3, (int64_t[]){1, 1, 0}, (int64_t[]){100, 100, 0});
    expect_scores(hard_weight_cluster(), NULL, incoming("subteam2.team2", "'service':'S1'", NULL),
                  3, (int64_t[]){1, 1, 0}, (int64_t[]){100, 100, 0});
}

/* =================================== Args and events ========================================== */

Test(inter_pod_affinity, rejects_hard_weight_out_of_range)
{
    char err[256];
    cr_assert_null(th_plugin_try_new(&ks_plugin_inter_pod_affinity, "{'hardPodAffinityWeight':101}",
                                     err, sizeof(err)));
    cr_assert_str_eq(err, "InterPodAffinity: hardPodAffinityWeight: 101 is not in valid range "
                          "[0, 100]");
    cr_assert_null(th_plugin_try_new(&ks_plugin_inter_pod_affinity,
                                     "{'ignorePreferredTermsOfExistingPods':'yes'}", err,
                                     sizeof(err)));
}
