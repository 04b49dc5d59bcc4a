/* NodeResourcesFit's hints: upstream v1.37 fit_test.go (TestEventsToRegister,
 * Test_isSchedulableAfterPodEvent, TestIsSchedulableAfterNodeChange,
 * TestHaveAnyRequestedResourcesIncreased) for the default feature gates. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_node_resources_fit;

TestSuite(node_resources_fit_hints, .init = th_init, .fini = ht_fini);

static int seq;

/* A pod requesting `req` ("'cpu':'1'"), on node (may be "") or nominated there. */
static ks_pod *pod(const char *node, const char *nominated, const char *req)
{
    char json[1024];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'u%d'},"
             "'spec':{'nodeName':'%s','containers':[{'name':'c','image':'i',"
             "'resources':{'requests':{%s}}}]},'status':{'nominatedNodeName':'%s'}}",
             seq, seq, node, req, nominated);
    return th_pod(json);
}

static ks_node *node(const char *alloc)
{
    char json[512];
    snprintf(json, sizeof(json), "{'metadata':{'name':'n'},'status':{'allocatable':{%s}}}", alloc);
    return th_node(json);
}

Test(node_resources_fit_hints, registers_v1_37_events)
{
    ht_plugin(&ks_plugin_node_resources_fit, NULL);
    cr_assert_eq(HT.n, 5);
    ht_expect_event(0, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, 1);
    ht_expect_event(1, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE, 1);
    ht_expect_event(2, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN, 1);
    ht_expect_event(3, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_SCALE_DOWN, 0);
    /* DRAExtendedResource (GA): a class may come to map a resource the pod requests */
    ht_expect_event(4, KS_RES_DEVICE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    cr_expect_not(ht_registered(KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_UP),
                  "scale-up events need InPlacePodVerticalScalingSchedulerPreemption (alpha)");
    cr_expect_not(ht_registered(KS_RES_ASSIGNED_POD, KS_ACT_ADD));
}

Test(node_resources_fit_hints, assigned_pod_deleted)
{
    ht_plugin(&ks_plugin_node_resources_fit, NULL);
    ks_pod *p = pod("", "", "'cpu':'1'");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("n1", "", "'cpu':'1'"), NULL),
                 KS_QUEUE, "a scheduled pod deleted");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("", "n1", "'cpu':'1'"), NULL),
                 KS_QUEUE, "a nominated pod deleted");
    cr_expect_eq(ht_pod(p, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("", "", "'cpu':'1'"), NULL),
                 KS_QUEUE_SKIP, "an unscheduled pod deleted");
}

Test(node_resources_fit_hints, assigned_pod_scaled_down)
{
    ht_plugin(&ks_plugin_node_resources_fit, NULL);
    ks_pod *cpu = pod("", "", "'cpu':'1'");
    ks_pod *before = pod("n1", "", "'cpu':'2','memory':'2Gi'");
    cr_expect_eq(ht_pod(cpu, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN, before,
                        pod("n1", "", "'cpu':'1','memory':'2Gi'")),
                 KS_QUEUE, "cpu, which the pod requests, went down");
    cr_expect_eq(ht_pod(cpu, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN, before,
                        pod("n1", "", "'cpu':'2','memory':'1Gi'")),
                 KS_QUEUE_SKIP, "memory went down, which the pod does not request");
    cr_expect_eq(ht_pod(cpu, KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_SCALE_DOWN,
                        pod("", "", "'cpu':'2'"), pod("", "", "'cpu':'1'")),
                 KS_QUEUE_SKIP, "an unscheduled pod's scale-down frees nothing");
    cr_expect_eq(
        ht_pod(cpu, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_SCALE_DOWN, pod("", "", "'cpu':'2'"), cpu),
        KS_QUEUE, "the pending pod itself got smaller");
}

Test(node_resources_fit_hints, node_change)
{
    ht_plugin(&ks_plugin_node_resources_fit, NULL);
    ks_pod *p = pod("", "", "'cpu':'4','memory':'2Gi'");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'cpu':'4','memory':'2Gi','pods':'10'")),
                 KS_QUEUE, "added, fits");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'cpu':'2','memory':'2Gi','pods':'10'")),
                 KS_QUEUE_SKIP, "added, too small");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'cpu':'4','memory':'2Gi','pods':'0'")),
                 KS_QUEUE_SKIP, "added, no room for a pod");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_ALLOCATABLE,
                         node("'cpu':'2','memory':'2Gi','pods':'10'"),
                         node("'cpu':'4','memory':'2Gi','pods':'10'")),
                 KS_QUEUE, "grew enough");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_ALLOCATABLE,
                         node("'cpu':'1','memory':'2Gi','pods':'10'"),
                         node("'cpu':'2','memory':'2Gi','pods':'10'")),
                 KS_QUEUE_SKIP, "grew, still too small");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_ALLOCATABLE,
                         node("'cpu':'4','memory':'2Gi','pods':'10','ephemeral-storage':'1Gi'"),
                         node("'cpu':'4','memory':'2Gi','pods':'10','ephemeral-storage':'2Gi'")),
                 KS_QUEUE_SKIP, "fits, but only a resource the pod does not request grew");
    cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_ALLOCATABLE,
                         node("'cpu':'4','memory':'2Gi','pods':'10'"),
                         node("'cpu':'4','memory':'2Gi','pods':'11'")),
                 KS_QUEUE, "more pods allowed");
    ks_pod *gpu = pod("", "", "'example.com/gpu':'1'");
    cr_expect_eq(ht_node(gpu, KS_ACT_UPDATE_NODE_ALLOCATABLE, node("'pods':'10'"),
                         node("'pods':'10','example.com/gpu':'1'")),
                 KS_QUEUE, "the extended resource appeared");
    cr_expect_eq(ht_node(gpu, KS_ACT_ADD, NULL, node("'pods':'10'")), KS_QUEUE_SKIP,
                 "no such extended resource");
}

/* isSchedulableAfterDeviceClassEvent: only a pod requesting an extended resource (or a class's
 * implicit name) can come to fit because a class maps it. */
Test(node_resources_fit_hints, device_class_event)
{
    ht_plugin(&ks_plugin_node_resources_fit, NULL);
    cr_expect_eq(
        ht_obj(pod("", "", "'example.com/gpu':'1'"), KS_RES_DEVICE_CLASS, KS_ACT_ADD, NULL, NULL),
        KS_QUEUE, "an extended resource");
    cr_expect_eq(ht_obj(pod("", "", "'deviceclass.resource.kubernetes.io/gpu':'1'"),
                        KS_RES_DEVICE_CLASS, KS_ACT_UPDATE_ANY, NULL, NULL),
                 KS_QUEUE, "a class's implicit name");
    cr_expect_eq(ht_obj(pod("", "", "'cpu':'1'"), KS_RES_DEVICE_CLASS, KS_ACT_ADD, NULL, NULL),
                 KS_QUEUE_SKIP, "cpu only");
}
