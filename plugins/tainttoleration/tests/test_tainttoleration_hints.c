/* TaintToleration's hints: upstream v1.37 taint_toleration_test.go
 * (Test_isSchedulableAfterNodeChange, Test_isSchedulableAfterTargetPodTolerationChange). */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_taint_toleration;

TestSuite(taint_toleration_hints, .init = th_init, .fini = ht_fini);

static ks_node *node(const char *taints)
{
    char json[1024];
    snprintf(json, sizeof(json), "{'metadata':{'name':'n'},'spec':{'taints':[%s]}}", taints);
    return th_node(json);
}

#define FOO_NS "{'key':'foo','value':'bar','effect':'NoSchedule'}"
#define BAR_NS "{'key':'bar','value':'baz','effect':'NoSchedule'}"
#define FOO_PREFER "{'key':'foo','value':'bar','effect':'PreferNoSchedule'}"

Test(taint_toleration_hints, registers_node_add_taint_and_target_pod_toleration)
{
    ht_plugin(&ks_plugin_taint_toleration, NULL);
    cr_assert_eq(HT.n, 2);
    ht_expect_event(0, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT, 1);
    ht_expect_event(1, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, 0);
}

Test(taint_toleration_hints, node_change)
{
    ht_plugin(&ks_plugin_taint_toleration, NULL);
    ks_pod *p = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{'tolerations':[{'key':'foo',"
                       "'operator':'Equal','value':'bar','effect':'NoSchedule'}]}}");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node(FOO_NS)), KS_QUEUE, "tolerated node added");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node(BAR_NS)), KS_QUEUE_SKIP,
                 "node added with an untolerated taint");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, node(BAR_NS), node(FOO_NS)), KS_QUEUE,
                 "the untolerated taint was replaced by a tolerated one");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, node(FOO_NS), node(FOO_NS "," FOO_PREFER)),
                 KS_QUEUE_SKIP, "was tolerated already");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, node(BAR_NS), node(BAR_NS "," FOO_NS)),
                 KS_QUEUE_SKIP, "still untolerated");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_TAINT, node(BAR_NS), node(FOO_PREFER)), KS_QUEUE,
                 "PreferNoSchedule never filters");
}

Test(taint_toleration_hints, target_pod_toleration_always_queues)
{
    ht_plugin(&ks_plugin_taint_toleration, NULL);
    ks_pod *old = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{}}");
    ks_pod *now = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{'tolerations':[{'key':'x',"
                         "'operator':'Exists'}]}}");
    cr_expect_eq(ht_pod(now, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS, old, now), KS_QUEUE);
}
