/* NodeUnschedulable's hints: upstream v1.37 node_unschedulable_test.go
 * (TestIsSchedulableAfterNodeChange, TestIsSchedulableAfterPodTolerationChange). */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_node_unschedulable;

TestSuite(node_unschedulable_hints, .init = th_init, .fini = ht_fini);

#define POD "{'metadata':{'name':'p','namespace':'default','uid':'p'},'spec':{%s}}"
#define NODE(unsched) "{'metadata':{'name':'n'},'spec':{'unschedulable':" unsched "}}"

static ks_pod *pod(const char *spec)
{
    char json[1024];
    snprintf(json, sizeof(json), POD, spec);
    return th_pod(json);
}

Test(node_unschedulable_hints, registers_node_add_taint_and_target_pod_toleration)
{
    ht_plugin(&ks_plugin_node_unschedulable, NULL);
    cr_assert_eq(HT.n, 2);
    ht_expect_event(0, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT, 1);
    ht_expect_event(1, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, 1);
    /* Another pod's toleration is no concern of this plugin (v1.37: TargetPod only) */
    cr_expect_not(ht_registered(KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_TOLERATIONS));
    cr_expect_not(ht_registered(KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL));
}

Test(node_unschedulable_hints, node_change)
{
    ht_plugin(&ks_plugin_node_unschedulable, NULL);
    ks_pod *p = pod("");
    ks_node *sched = th_node(NODE("false")), *unsched = th_node(NODE("true"));
    /* "backoff-wrong-new-object" has no C form (the objects are typed) */
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, sched), KS_QUEUE, "schedulable node added");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, unsched), KS_QUEUE_SKIP, "cordoned node added");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, unsched, sched), KS_QUEUE, "uncordoned");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, sched, unsched), KS_QUEUE_SKIP, "cordoned");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, sched, sched), KS_QUEUE_SKIP,
                 "still schedulable: nothing changed for this plugin");
}

Test(node_unschedulable_hints, target_pod_toleration_change)
{
    ht_plugin(&ks_plugin_node_unschedulable, NULL);
    ks_pod *old = pod("'tolerations':[{'key':'foo','operator':'Exists','effect':'NoSchedule'}]");
    ks_pod *unrelated =
        pod("'tolerations':[{'key':'foo','operator':'Exists','effect':'NoSchedule'},"
            "{'key':'bar','operator':'Exists','effect':'NoSchedule'}]");
    ks_pod *tolerant = pod("'tolerations':[{'key':'foo','operator':'Exists','effect':'NoSchedule'},"
                           "{'key':'node.kubernetes.io/unschedulable','operator':'Exists','effect':"
                           "'NoSchedule'}]");
    cr_expect_eq(
        ht_pod(unrelated, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, old, unrelated),
        KS_QUEUE_SKIP, "an unrelated toleration");
    cr_expect_eq(ht_pod(tolerant, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, old, tolerant),
                 KS_QUEUE, "now tolerates the unschedulable taint");
}
