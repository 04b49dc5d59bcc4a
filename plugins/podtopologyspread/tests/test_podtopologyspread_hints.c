/* PodTopologySpread's hints: upstream v1.37 plugin_test.go (Test_isSchedulableAfterNodeChange,
 * Test_isSchedulableAfterAssignedPodChange, Test_isSchedulableAfterTargetPodChange). */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_pod_topology_spread;

TestSuite(pod_topology_spread_hints, .init = th_init, .fini = ht_fini);

static int seq;

/* A pod in namespace ns with labels, on node (or ""), with spec extra (constraints, ...). */
static ks_pod *pod(const char *ns, const char *labels, const char *node, const char *spec)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'%s','uid':'u%d','labels':{%s}},"
             "'spec':{'nodeName':'%s'%s%s}}",
             seq, ns, seq, labels, node, *spec ? "," : "", spec);
    return th_pod(json);
}

static ks_node *node(const char *labels, const char *taints)
{
    char json[1024];
    snprintf(json, sizeof(json), "{'metadata':{'name':'n','labels':{%s}},'spec':{'taints':[%s]}}",
             labels, taints);
    return th_node(json);
}

/* a hard constraint on zone selecting foo (exists), and a soft one on node */
#define HARD_ZONE(policy)                                                                          \
    "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':"          \
    "'DoNotSchedule','labelSelector':{'matchExpressions':[{'key':'foo','operator':'Exists'}]"      \
    "}" policy "},{'maxSkew':1,'topologyKey':'node','whenUnsatisfiable':'ScheduleAnyway',"         \
    "'labelSelector':{'matchExpressions':[{'key':'bar','operator':'Exists'}]}}]"

Test(pod_topology_spread_hints, registers_v1_37_events)
{
    ht_plugin(&ks_plugin_pod_topology_spread, NULL);
    cr_assert_eq(HT.n, 3);
    ht_expect_event(0, KS_RES_ASSIGNED_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE,
                    1);
    ht_expect_event(1, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS | KS_ACT_UPDATE_POD_LABEL,
                    1);
    ht_expect_event(
        2, KS_RES_NODE,
        KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT, 1);
}

Test(pod_topology_spread_hints, node_change)
{
    ht_plugin(&ks_plugin_pod_topology_spread, NULL);
    ks_pod *p = pod("default", "'foo':''", "", HARD_ZONE(""));
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'zone':'z1'", "")), KS_QUEUE,
                 "added with the topology key");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'node':'n'", "")), KS_QUEUE_SKIP,
                 "added without the hard constraint's key (the soft one's does not count)");
    cr_expect_eq(ht_node(p, KS_ACT_DELETE, node("'zone':'z1'", ""), NULL), KS_QUEUE,
                 "deleted with the key");
    cr_expect_eq(ht_node(p, KS_ACT_DELETE, node("", ""), NULL), KS_QUEUE_SKIP,
                 "deleted without it");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_LABEL, node("", ""), node("'zone':'z1'", "")),
                 KS_QUEUE, "gained the key");
    cr_expect_eq(
        ht_node(p, KS_ACT_UPDATE_NODE_LABEL, node("'zone':'z1'", ""), node("'zone':'z2'", "")),
        KS_QUEUE, "moved to another zone");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_LABEL, node("'zone':'z1'", ""),
                         node("'zone':'z1','x':'y'", "")),
                 KS_QUEUE_SKIP, "an unrelated label");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, node("'zone':'z1'", ""),
                         node("'zone':'z1'", "{'key':'k','effect':'NoSchedule'}")),
                 KS_QUEUE, "taints changed on a node with the key");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, node("", ""),
                         node("", "{'key':'k','effect':'NoSchedule'}")),
                 KS_QUEUE_SKIP, "taints changed on a node without the key");
}

Test(pod_topology_spread_hints, assigned_pod_change)
{
    ht_plugin(&ks_plugin_pod_topology_spread, NULL);
    ks_pod *p = pod("default", "'foo':''", "", HARD_ZONE(""));
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("default", "'foo':''", "n1", "")),
        KS_QUEUE, "a matching pod added");
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("default", "'bar':''", "n1", "")),
        KS_QUEUE_SKIP, "only the soft constraint's selector matches");
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("other", "'foo':''", "n1", "")),
        KS_QUEUE_SKIP, "another namespace");
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("default", "'foo':''", "n1", ""), NULL),
        KS_QUEUE, "a matching pod deleted");
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("default", "'x':''", "n1", ""), NULL),
        KS_QUEUE_SKIP, "a pod that never counted deleted");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL,
                        pod("default", "'x':''", "n1", ""), pod("default", "'foo':''", "n1", "")),
                 KS_QUEUE, "relabelled to match");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL,
                        pod("default", "'foo':'a'", "n1", ""),
                        pod("default", "'foo':'b'", "n1", "")),
                 KS_QUEUE_SKIP, "relabelled, matches as before");
}

Test(pod_topology_spread_hints, target_pod_change)
{
    ht_plugin(&ks_plugin_pod_topology_spread, NULL);
    ks_pod *old = pod("default", "'foo':''", "", HARD_ZONE(""));
    ks_pod *tol = pod("default", "'foo':''", "",
                      HARD_ZONE("") ",'tolerations':[{'key':'k','operator':'Exists'}]");
    cr_expect_eq(ht_pod(tol, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, old, tol),
                 KS_QUEUE_SKIP, "a toleration, but no constraint honors taints");
    ks_pod *old_h = pod("default", "'foo':''", "", HARD_ZONE(",'nodeTaintsPolicy':'Honor'"));
    ks_pod *tol_h =
        pod("default", "'foo':''", "",
            HARD_ZONE(
                ",'nodeTaintsPolicy':'Honor'") ",'tolerations':[{'key':'k','operator':'Exists'}]");
    cr_expect_eq(ht_pod(tol_h, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, old_h, tol_h),
                 KS_QUEUE, "a toleration with nodeTaintsPolicy Honor");
    ks_pod *relabel = pod("default", "'x':''", "", HARD_ZONE(""));
    cr_expect_eq(ht_pod(relabel, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL, old, relabel),
                 KS_QUEUE, "no longer selected by its own constraint");
    ks_pod *same = pod("default", "'foo':'v'", "", HARD_ZONE(""));
    cr_expect_eq(ht_pod(same, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL, old, same), KS_QUEUE_SKIP,
                 "still selected");
}

Test(pod_topology_spread_hints, default_hard_constraints_cannot_be_judged_without_a_cycle)
{
    ht_plugin(&ks_plugin_pod_topology_spread,
              "{'defaultingType':'List','defaultConstraints':[{'maxSkew':1,'topologyKey':'zone',"
              "'whenUnsatisfiable':'DoNotSchedule'}]}");
    ks_pod *p = pod("default", "'foo':''", "", "");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("", "")), KS_QUEUE,
                 "the owners' selector is needed: Queue");
    /* the system defaults are ScheduleAnyway: no hard constraint at all */
    ht_fini();
    th_init();
    ht_plugin(&ks_plugin_pod_topology_spread, NULL);
    p = pod("default", "'foo':''", "", "");
    cr_expect_eq(
        ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_ADD, NULL, pod("default", "'foo':''", "n1", "")),
        KS_QUEUE_SKIP);
}
