/* NodeName: upstream nodename/node_name_test.go (TestNodeName, TestNodeName_PreFilter, v1.37) plus
 * the absent-node status the framework gives the nodes outside the PreFilter result, and events. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched/framework.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_name;

TestSuite(node_name, .init = th_init, .fini = th_fini);

static th_cluster *two_nodes(void)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'foo'},'status':{'allocatable':{'pods':'110'}}}");
    th_cluster_add_node(c, "{'metadata':{'name':'baz'},'status':{'allocatable':{'pods':'110'}}}");
    return c;
}

static ks_pod *pod_on(const char *node)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
             "'spec':{%s%s%s'containers':[{'name':'c'}]}}",
             node ? "'nodeName':'" : "", node ? node : "", node ? "'," : "");
    return th_pod(json);
}

/* TestNodeName_PreFilter: the result holds exactly spec.nodeName, or is not used at all. */
static void expect_pre_filter(ks_pod *pod, const char *want)
{
    ks_status st;
    ks_prefilter_result r = {0};
    ks__status_reset(&st);
    cr_assert_eq(ks_plugin_node_name.pre_filter(NULL, NULL, pod, &r, &st), KS_SUCCESS);
    if (!want) {
        cr_assert_eq(r.used, 0, "a pod without nodeName must not restrict the nodes");
        cr_assert_eq(r.n, 0);
    } else {
        cr_assert_eq(r.used, 1);
        cr_assert_eq(r.n, 1);
        cr_assert_eq(r.nodes[0], ks_intern(want));
    }
    free(r.nodes);
}

Test(node_name, pre_filter_restricts_assigned_pod_to_its_node)
{
    expect_pre_filter(pod_on("foo"), "foo");
}

Test(node_name, pre_filter_returns_nothing_without_node_name)
{
    expect_pre_filter(pod_on(NULL), NULL);
}

/* TestNodeName: the Filter alone (upstream still registers it). */
static ks_code filter_only(th_cluster *c, ks_pod *pod, const char *node, char *r, size_t len)
{
    ks_status st;
    const ks_node_info *ni = th_cluster_node(c, node);
    cr_assert_not_null(ni);
    ks__status_reset(&st);
    ks_code code = ks_plugin_node_name.filter(NULL, NULL, pod, ni, &st);
    ks__status_message(&st, r, len);
    return code;
}

Test(node_name, filter_fits_when_no_host_specified)
{
    th_cluster *c = two_nodes();
    char r[256];
    cr_assert_eq(filter_only(c, pod_on(NULL), "foo", r, sizeof(r)), KS_SUCCESS);
    cr_assert_str_eq(r, "");
}

Test(node_name, filter_fits_when_host_matches)
{
    th_cluster *c = two_nodes();
    char r[256];
    cr_assert_eq(filter_only(c, pod_on("foo"), "foo", r, sizeof(r)), KS_SUCCESS);
}

Test(node_name, filter_rejects_other_host_as_unresolvable)
{
    th_cluster *c = two_nodes();
    char r[256];
    cr_assert_eq(filter_only(c, pod_on("bar"), "foo", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) didn't match the requested node name");
}

/* PreFilter + Filter as the framework runs them: the named node passes, every other node gets the
 * absent-node status (v1.37 text, not the Filter's v1.34 "didn't match the requested node name").
 */
Test(node_name, other_nodes_get_absent_node_status)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_name, NULL);
    th_cluster *c = two_nodes();
    char r[256];
    cr_assert_eq(th_filter(p, c, pod_on("foo"), "foo", r, sizeof(r)), KS_SUCCESS);
    cr_assert_eq(th_filter(p, c, pod_on("foo"), "baz", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) didn't satisfy plugin(s) [NodeName]");
}

Test(node_name, missing_named_node_excludes_every_node)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_name, NULL);
    th_cluster *c = two_nodes();
    char r[256];
    cr_assert_eq(th_filter(p, c, pod_on("bar"), "foo", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) didn't satisfy plugin(s) [NodeName]");
    cr_assert_eq(th_filter(p, c, pod_on("bar"), "baz", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
}
