/* NodeUnschedulable: upstream nodeunschedulable/node_unschedulable_test.go (TestNodeUnschedulable)
 * plus events. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "sched/framework.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_unschedulable;

TestSuite(node_unschedulable, .init = th_init, .fini = th_fini);

#define POD_NO_TOL                                                                                 \
    "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"                                   \
    "'spec':{'containers':[{'name':'c'}]}}"
#define POD_TOL_UNSCHEDULABLE                                                                      \
    "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"                                   \
    "'spec':{'containers':[{'name':'c'}],'tolerations':[{'key':'node.kubernetes.io/"               \
    "unschedulable','operator':'Exists','effect':'NoSchedule'}]}}"

static ks_code run(const char *node_json, const char *pod_json, char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_unschedulable, NULL);
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, node_json);
    return th_filter(p, c, th_pod(pod_json), "n1", r, len);
}

Test(node_unschedulable, rejects_unschedulable_node)
{
    char r[256];
    cr_assert_eq(
        run("{'metadata':{'name':'n1'},'spec':{'unschedulable':true}}", POD_NO_TOL, r, sizeof(r)),
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) were unschedulable");
}

Test(node_unschedulable, admits_schedulable_node)
{
    char r[256];
    cr_assert_eq(
        run("{'metadata':{'name':'n1'},'spec':{'unschedulable':false}}", POD_NO_TOL, r, sizeof(r)),
        KS_SUCCESS);
    cr_assert_str_eq(r, "");
}

Test(node_unschedulable, admits_node_without_unschedulable_field)
{
    char r[256];
    cr_assert_eq(run("{'metadata':{'name':'n1'},'spec':{}}", POD_NO_TOL, r, sizeof(r)), KS_SUCCESS);
}

Test(node_unschedulable, tolerating_pod_admitted_on_schedulable_node)
{
    char r[256];
    cr_assert_eq(run("{'metadata':{'name':'n1'},'spec':{}}", POD_TOL_UNSCHEDULABLE, r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_unschedulable, tolerating_pod_admitted_on_unschedulable_node)
{
    char r[256];
    cr_assert_eq(run("{'metadata':{'name':'n1'},'spec':{'unschedulable':true}}",
                     POD_TOL_UNSCHEDULABLE, r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_unschedulable, wildcard_exists_toleration_is_enough)
{
    char r[256];
    cr_assert_eq(run("{'metadata':{'name':'n1'},'spec':{'unschedulable':true}}",
                     "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                     "'spec':{'containers':[{'name':'c'}],'tolerations':[{'operator':'Exists'}]}}",
                     r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_unschedulable, toleration_for_other_effect_is_not_enough)
{
    char r[256];
    cr_assert_eq(run("{'metadata':{'name':'n1'},'spec':{'unschedulable':true}}",
                     "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                     "'spec':{'containers':[{'name':'c'}],'tolerations':[{'key':"
                     "'node.kubernetes.io/unschedulable','operator':'Exists','effect':"
                     "'NoExecute'}]}}",
                     r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) were unschedulable");
}

Test(node_unschedulable, equal_toleration_with_empty_value_matches)
{
    char r[256];
    cr_assert_eq(run("{'metadata':{'name':'n1'},'spec':{'unschedulable':true}}",
                     "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                     "'spec':{'containers':[{'name':'c'}],'tolerations':[{'key':"
                     "'node.kubernetes.io/unschedulable','operator':'Equal','effect':"
                     "'NoSchedule'}]}}",
                     r, sizeof(r)),
                 KS_SUCCESS);
}

/* v1.37 PreFilter: Success without a PreFilterResult (the deferred-resize Skip is alpha, off). */
Test(node_unschedulable, pre_filter_succeeds_without_restricting_nodes)
{
    ks_status st;
    ks_prefilter_result r = {0};
    ks_pod *p = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                       "'spec':{'containers':[{'name':'c'}]}}");
    cr_assert_not_null(ks_plugin_node_unschedulable.pre_filter);
    ks__status_reset(&st);
    cr_assert_eq(ks_plugin_node_unschedulable.pre_filter(NULL, NULL, p, &r, &st), KS_SUCCESS);
    cr_assert_eq(r.used, 0);
}
