/* InterPodAffinity's hints: upstream v1.37 plugin_test.go (Test_isSchedulableAfterPodChange,
 * Test_isSchedulableAfterNodeChange), with the v1.37 changes: nominated pods count, anti-affinity
 * relabel/delete look at ANY term, and a deleted pod whose own anti-affinity the pod matches. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_inter_pod_affinity;

TestSuite(inter_pod_affinity_hints, .init = th_init, .fini = ht_fini);

static int seq;

static ks_pod *pod(const char *labels, const char *node, const char *nominated,
                   const char *affinity)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'u%d','labels':{%s}},"
             "'spec':{'nodeName':'%s'%s%s},'status':{'nominatedNodeName':'%s'}}",
             seq, seq, labels, node, *affinity ? ",'affinity':" : "", affinity, nominated);
    return th_pod(json);
}

static ks_node *node(const char *labels)
{
    char json[512];
    snprintf(json, sizeof(json), "{'metadata':{'name':'n','labels':{%s}}}", labels);
    return th_node(json);
}

#define TERM(key, topo)                                                                            \
    "{'labelSelector':{'matchExpressions':[{'key':'" key "','operator':'Exists'}]},"               \
    "'topologyKey':'" topo "'}"
#define AFFINITY(terms)                                                                            \
    "{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[" terms "]}}"
#define ANTI(terms)                                                                                \
    "{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[" terms "]}}"

Test(inter_pod_affinity_hints, registers_v1_37_events)
{
    ht_plugin(&ks_plugin_inter_pod_affinity, NULL);
    cr_assert_eq(HT.n, 3);
    ht_expect_event(0, KS_RES_ASSIGNED_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE,
                    1);
    ht_expect_event(1, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL, 0);
    ht_expect_event(2, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL, 1);
}

Test(inter_pod_affinity_hints, assigned_pod_added_or_relabelled_for_affinity)
{
    ht_plugin(&ks_plugin_inter_pod_affinity, NULL);
    ks_pod *p = pod("", "", "", AFFINITY(TERM("a", "zone") "," TERM("b", "zone")));
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("'a':'','b':''", "n1", "", "")),
        KS_QUEUE, "matches all terms");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("'a':''", "n1", "", "")),
                 KS_QUEUE_SKIP, "matches one term of two");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("'a':'','b':''", "", "", "")),
                 KS_QUEUE_SKIP, "unscheduled");
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("'a':'','b':''", "", "n1", "")),
        KS_QUEUE, "v1.37: only nominated counts too");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL,
                        pod("'a':''", "n1", "", ""), pod("'a':'','b':''", "n1", "", "")),
                 KS_QUEUE, "relabelled to match all");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL,
                        pod("'a':'','b':''", "n1", "", ""),
                        pod("'a':'','b':'','c':''", "n1", "", "")),
                 KS_QUEUE_SKIP, "matched all before already");
}

Test(inter_pod_affinity_hints, anti_affinity_any_term)
{
    ht_plugin(&ks_plugin_inter_pod_affinity, NULL);
    ks_pod *p = pod("", "", "", ANTI(TERM("a", "zone") "," TERM("b", "zone")));
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL,
                        pod("'a':''", "n1", "", ""), pod("", "n1", "", "")),
                 KS_QUEUE, "v1.37: matched one term (any), now none");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL,
                        pod("'a':'','b':''", "n1", "", ""), pod("'a':''", "n1", "", "")),
                 KS_QUEUE_SKIP, "still matches a term");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("'b':''", "n1", "", ""), NULL),
                 KS_QUEUE, "v1.37: a deleted pod matching any anti-affinity term");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("'c':''", "n1", "", ""), NULL),
                 KS_QUEUE_SKIP, "a deleted pod matching none");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("'c':''", "n1", "", "")),
                 KS_QUEUE_SKIP, "an added pod never helps anti-affinity");
}

Test(inter_pod_affinity_hints, deleted_pod_whose_anti_affinity_selected_the_pod)
{
    ht_plugin(&ks_plugin_inter_pod_affinity, NULL);
    ks_pod *p = pod("'app':'web'", "", "", "");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
                        pod("", "n1", "", ANTI(TERM("app", "zone"))), NULL),
                 KS_QUEUE, "v1.37: the deleted pod's anti-affinity selected the pod");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
                        pod("", "n1", "", ANTI(TERM("db", "zone"))), NULL),
                 KS_QUEUE_SKIP, "its anti-affinity selects other pods");
}

Test(inter_pod_affinity_hints, target_pod_relabel_always_queues)
{
    ht_plugin(&ks_plugin_inter_pod_affinity, NULL);
    ks_pod *old = pod("'a':''", "", "", ""), *now = pod("'b':''", "", "", "");
    cr_expect_eq(ht_pod(now, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL, old, now), KS_QUEUE);
}

Test(inter_pod_affinity_hints, node_change)
{
    ht_plugin(&ks_plugin_inter_pod_affinity, NULL);
    ks_pod *aff = pod("", "", "", AFFINITY(TERM("a", "zone")));
    cr_expect_eq(ht_node(aff, KS_ACT_ADD, NULL, node("'zone':'z1'")), KS_QUEUE,
                 "added with the affinity topology key");
    cr_expect_eq(ht_node(aff, KS_ACT_ADD, NULL, node("'x':'y'")), KS_QUEUE_SKIP,
                 "added without it");
    cr_expect_eq(ht_node(aff, KS_ACT_UPDATE_NODE_LABEL, node(""), node("'zone':'z1'")), KS_QUEUE,
                 "gained the key");
    cr_expect_eq(ht_node(aff, KS_ACT_UPDATE_NODE_LABEL, node("'zone':'z1'"), node("'zone':'z2'")),
                 KS_QUEUE, "moved domains");
    cr_expect_eq(
        ht_node(aff, KS_ACT_UPDATE_NODE_LABEL, node("'zone':'z1'"), node("'zone':'z1','x':'y'")),
        KS_QUEUE_SKIP, "an unrelated label");
    ks_pod *anti = pod("", "", "", ANTI(TERM("a", "zone")));
    cr_expect_eq(ht_node(anti, KS_ACT_ADD, NULL, node("")), KS_QUEUE, "any node added");
    cr_expect_eq(ht_node(anti, KS_ACT_UPDATE_NODE_LABEL, node("'zone':'z1'"), node("")), KS_QUEUE,
                 "lost the anti-affinity key");
    cr_expect_eq(ht_node(anti, KS_ACT_UPDATE_NODE_LABEL, node(""), node("'zone':'z1'")),
                 KS_QUEUE_SKIP, "gaining an anti-affinity key never helps");
    ks_pod *none = pod("", "", "", "");
    cr_expect_eq(ht_node(none, KS_ACT_ADD, NULL, node("'zone':'z1'")), KS_QUEUE_SKIP,
                 "no terms at all");
}
