/* NodeName: upstream nodename/node_name_test.go (TestNodeName) plus events. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_name;

TestSuite(node_name, .init = th_init, .fini = th_fini);

static th_cluster *one_node(void)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'foo'},'status':{'allocatable':{'pods':'110'}}}");
    return c;
}

Test(node_name, fits_when_no_host_specified)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_name, NULL);
    th_cluster *c = one_node();
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                         "'spec':{'containers':[{'name':'c'}]}}");
    char r[256];
    cr_assert_eq(th_filter(p, c, pod, "foo", r, sizeof(r)), KS_SUCCESS);
    cr_assert_str_eq(r, "");
}

Test(node_name, fits_when_host_matches)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_name, NULL);
    th_cluster *c = one_node();
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                         "'spec':{'nodeName':'foo','containers':[{'name':'c'}]}}");
    char r[256];
    cr_assert_eq(th_filter(p, c, pod, "foo", r, sizeof(r)), KS_SUCCESS);
}

Test(node_name, rejects_other_host_as_unresolvable)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_name, NULL);
    th_cluster *c = one_node();
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                         "'spec':{'nodeName':'bar','containers':[{'name':'c'}]}}");
    char r[256];
    cr_assert_eq(th_filter(p, c, pod, "foo", r, sizeof(r)), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) didn't match the requested node name");
}
