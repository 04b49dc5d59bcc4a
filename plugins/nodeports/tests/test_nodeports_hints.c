/* NodePorts' hints: upstream v1.37 node_ports_test.go (Test_isSchedulableAfterPodDeleted). */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_node_ports;

TestSuite(node_ports_hints, .init = th_init, .fini = ht_fini);

/* A pod on node (or nominated there) that uses host port `port` (0: none). */
static ks_pod *pod(const char *node, const char *nominated, int port)
{
    char ports[256] = "", json[1024];
    if (port)
        snprintf(ports, sizeof(ports),
                 ",'ports':[{'containerPort':80,'hostPort':%d,'protocol':'TCP'}]", port);
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d%s%s','namespace':'default','uid':'u%d%s%s'},"
             "'spec':{'nodeName':'%s','containers':[{'name':'c','image':'i'%s}]},"
             "'status':{'nominatedNodeName':'%s'}}",
             port, node, nominated, port, node, nominated, node, ports, nominated);
    return th_pod(json);
}

Test(node_ports_hints, registers_assigned_pod_delete_and_node_add)
{
    ht_plugin(&ks_plugin_node_ports, NULL);
    cr_assert_eq(HT.n, 2);
    ht_expect_event(0, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, 1);
    ht_expect_event(1, KS_RES_NODE, KS_ACT_ADD, 0);
    cr_expect_not(ht_registered(KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL),
                  "ports are immutable: no pod update");
}

Test(node_ports_hints, assigned_pod_deleted)
{
    ht_plugin(&ks_plugin_node_ports, NULL);
    ks_pod *want = pod("", "", 8080);
    cr_expect_eq(ht_pod(want, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("n1", "", 8080), NULL),
                 KS_QUEUE, "the same host port freed");
    cr_expect_eq(ht_pod(want, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("", "n1", 8080), NULL),
                 KS_QUEUE, "a nominated pod counts");
    cr_expect_eq(ht_pod(want, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("", "", 8080), NULL),
                 KS_QUEUE_SKIP, "an unscheduled pod frees nothing");
    cr_expect_eq(ht_pod(want, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("n1", "", 9090), NULL),
                 KS_QUEUE_SKIP, "another port");
    cr_expect_eq(ht_pod(want, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod("n1", "", 0), NULL),
                 KS_QUEUE_SKIP, "no host port");
}
