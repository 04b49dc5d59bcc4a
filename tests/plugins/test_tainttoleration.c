/* TaintToleration: upstream tainttoleration/taint_toleration_test.go (TestTaintTolerationFilter,
 * TestTaintTolerationScore) plus events. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "sched/framework.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_taint_toleration;

TestSuite(taint_toleration, .init = th_init, .fini = th_fini);

static ks_pod *pod_with(const char *tolerations)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
             "'spec':{'containers':[{'name':'c'}],'tolerations':[%s]}}",
             tolerations);
    return th_pod(json);
}

static void add_node(th_cluster *c, const char *name, const char *taints)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s'},'spec':{'taints':[%s]},"
             "'status':{'allocatable':{'cpu':'4','memory':'32Gi','pods':'110'}}}",
             name, taints);
    th_cluster_add_node(c, json);
}

static ks_code filter(const char *taints, const char *tolerations, char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", taints);
    return th_filter(p, c, pod_with(tolerations), "nodeA", r, len);
}

/* ---- Filter ---------------------------------------------------------------------------------- */

Test(taint_toleration, rejects_untolerated_noschedule)
{
    char r[256];
    cr_assert_eq(
        filter("{'key':'dedicated','value':'user1','effect':'NoSchedule'}", "", r, sizeof(r)),
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) had untolerated taint(s)");
}

Test(taint_toleration, admits_pod_tolerating_dedicated_node)
{
    char r[256];
    cr_assert_eq(filter("{'key':'dedicated','value':'user1','effect':'NoSchedule'}",
                        "{'key':'dedicated','value':'user1','effect':'NoSchedule'}", r, sizeof(r)),
                 KS_SUCCESS);
    cr_assert_str_eq(r, "");
}

Test(taint_toleration, rejects_toleration_with_other_value)
{
    char r[256];
    cr_assert_eq(
        filter("{'key':'dedicated','value':'user1','effect':'NoSchedule'}",
               "{'key':'dedicated','operator':'Equal','value':'user2','effect':'NoSchedule'}", r,
               sizeof(r)),
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) had untolerated taint(s)");
}

Test(taint_toleration, exists_toleration_tolerates_any_value)
{
    char r[256];
    cr_assert_eq(filter("{'key':'foo','value':'bar','effect':'NoSchedule'}",
                        "{'key':'foo','operator':'Exists','effect':'NoSchedule'}", r, sizeof(r)),
                 KS_SUCCESS);
}

Test(taint_toleration, all_taints_tolerated_by_multiple_tolerations)
{
    char r[256];
    cr_assert_eq(
        filter("{'key':'dedicated','value':'user2','effect':'NoSchedule'},"
               "{'key':'foo','value':'bar','effect':'NoSchedule'}",
               "{'key':'dedicated','operator':'Equal','value':'user2','effect':'NoSchedule'},"
               "{'key':'foo','operator':'Exists','effect':'NoSchedule'}",
               r, sizeof(r)),
        KS_SUCCESS);
}

Test(taint_toleration, rejects_toleration_with_other_effect)
{
    char r[256];
    cr_assert_eq(
        filter("{'key':'foo','value':'bar','effect':'NoSchedule'}",
               "{'key':'foo','operator':'Equal','value':'bar','effect':'PreferNoSchedule'}", r,
               sizeof(r)),
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) had untolerated taint(s)");
}

Test(taint_toleration, empty_effect_toleration_tolerates_noschedule)
{
    char r[256];
    cr_assert_eq(filter("{'key':'foo','value':'bar','effect':'NoSchedule'}",
                        "{'key':'foo','operator':'Equal','value':'bar'}", r, sizeof(r)),
                 KS_SUCCESS);
}

Test(taint_toleration, prefer_no_schedule_taint_never_filters)
{
    char r[256];
    cr_assert_eq(
        filter("{'key':'dedicated','value':'user1','effect':'PreferNoSchedule'}",
               "{'key':'dedicated','operator':'Equal','value':'user2','effect':'NoSchedule'}", r,
               sizeof(r)),
        KS_SUCCESS);
    cr_assert_eq(
        filter("{'key':'dedicated','value':'user1','effect':'PreferNoSchedule'}", "", r, sizeof(r)),
        KS_SUCCESS);
}

Test(taint_toleration, rejects_untolerated_noexecute)
{
    char r[256];
    cr_assert_eq(filter("{'key':'evict','effect':'NoExecute'}", "", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) had untolerated taint(s)");
}

/* v1.37 names no taint; any untolerated NoSchedule/NoExecute taint rejects, whichever it is. */
Test(taint_toleration, any_untolerated_taint_rejects_with_one_reason)
{
    char r[256];
    cr_assert_eq(filter("{'key':'soft','value':'x','effect':'PreferNoSchedule'},"
                        "{'key':'a','value':'1','effect':'NoSchedule'},"
                        "{'key':'b','value':'2','effect':'NoExecute'},"
                        "{'key':'c','value':'3','effect':'NoSchedule'}",
                        "{'key':'a','operator':'Exists'}", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "node(s) had untolerated taint(s)");
}

Test(taint_toleration, empty_key_exists_tolerates_everything)
{
    char r[256];
    cr_assert_eq(filter("{'key':'a','value':'1','effect':'NoSchedule'},"
                        "{'key':'b','value':'2','effect':'NoExecute'}",
                        "{'operator':'Exists'}", r, sizeof(r)),
                 KS_SUCCESS);
}

Test(taint_toleration, node_without_taints_admits_everyone)
{
    char r[256];
    cr_assert_eq(filter("", "", r, sizeof(r)), KS_SUCCESS);
}

/* ---- Score ----------------------------------------------------------------------------------- */

Test(taint_toleration, tolerated_prefer_taint_scores_higher)
{
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "{'key':'foo','value':'bar','effect':'PreferNoSchedule'}");
    add_node(c, "nodeB", "{'key':'foo','value':'blah','effect':'PreferNoSchedule'}");
    ks_pod *pod =
        pod_with("{'key':'foo','operator':'Equal','value':'bar','effect':'PreferNoSchedule'}");
    int64_t raw[2], norm[2];
    cr_assert_eq(th_score(p, c, pod, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 0);
    cr_assert_eq(raw[1], 1);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 0);
}

Test(taint_toleration, all_tolerated_nodes_score_the_same)
{
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "");
    add_node(c, "nodeB", "{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}");
    add_node(c, "nodeC",
             "{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'},"
             "{'key':'disk-type','value':'ssd','effect':'PreferNoSchedule'}");
    ks_pod *pod = pod_with(
        "{'key':'cpu-type','operator':'Equal','value':'arm64','effect':'PreferNoSchedule'},"
        "{'key':'disk-type','operator':'Equal','value':'ssd','effect':'PreferNoSchedule'}");
    int64_t raw[3], norm[3];
    cr_assert_eq(th_score(p, c, pod, raw, norm), KS_SUCCESS);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(raw[i], 0);
        cr_assert_eq(norm[i], 100);
    }
}

Test(taint_toleration, more_untolerated_taints_score_lower)
{
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "");
    add_node(c, "nodeB", "{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}");
    add_node(c, "nodeC",
             "{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'},"
             "{'key':'disk-type','value':'ssd','effect':'PreferNoSchedule'}");
    ks_pod *pod =
        pod_with("{'key':'foo','operator':'Equal','value':'bar','effect':'PreferNoSchedule'}");
    int64_t raw[3], norm[3];
    cr_assert_eq(th_score(p, c, pod, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 0);
    cr_assert_eq(raw[1], 1);
    cr_assert_eq(raw[2], 2);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 50);
    cr_assert_eq(norm[2], 0);
}

Test(taint_toleration, only_prefer_no_schedule_counts_for_score)
{
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "");
    add_node(c, "nodeB", "{'key':'cpu-type','value':'arm64','effect':'NoSchedule'}");
    add_node(c, "nodeC",
             "{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'},"
             "{'key':'disk-type','value':'ssd','effect':'PreferNoSchedule'}");
    ks_pod *pod =
        pod_with("{'key':'cpu-type','operator':'Equal','value':'arm64','effect':'NoSchedule'},"
                 "{'key':'disk-type','operator':'Equal','value':'ssd','effect':'NoSchedule'}");
    int64_t raw[3], norm[3];
    cr_assert_eq(th_score(p, c, pod, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 0);
    cr_assert_eq(raw[1], 0);
    cr_assert_eq(raw[2], 2);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 100);
    cr_assert_eq(norm[2], 0);
}

Test(taint_toleration, no_tolerations_prefers_untainted_node)
{
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "nodeA", "");
    add_node(c, "nodeB", "{'key':'cpu-type','value':'arm64','effect':'PreferNoSchedule'}");
    int64_t raw[2], norm[2];
    cr_assert_eq(th_score(p, c, pod_with(""), raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[1], 1);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 0);
}

Test(taint_toleration, normalize_truncates_like_upstream)
{
    /* raw 0,1,2,3 with max 3: 100 - 100*raw/3 = 100, 67, 34, 0 */
    th_plugin *p = th_plugin_new(&ks_plugin_taint_toleration, NULL);
    th_cluster *c = th_cluster_new();
    add_node(c, "n0", "");
    add_node(c, "n1", "{'key':'a','effect':'PreferNoSchedule'}");
    add_node(c, "n2",
             "{'key':'a','effect':'PreferNoSchedule'},{'key':'b','effect':'PreferNoSchedule'}");
    add_node(c, "n3",
             "{'key':'a','effect':'PreferNoSchedule'},{'key':'b','effect':'PreferNoSchedule'},"
             "{'key':'c','effect':'PreferNoSchedule'}");
    int64_t raw[4], norm[4];
    cr_assert_eq(th_score(p, c, pod_with(""), raw, norm), KS_SUCCESS);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 67);
    cr_assert_eq(norm[2], 34);
    cr_assert_eq(norm[3], 0);
}

/* v1.37 PreFilter: Success without a PreFilterResult (the deferred-resize Skip is alpha, off). */
Test(taint_toleration, pre_filter_succeeds_without_restricting_nodes)
{
    ks_status st;
    ks_prefilter_result r = {0};
    ks_pod *p = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                       "'spec':{'containers':[{'name':'c'}]}}");
    cr_assert_not_null(ks_plugin_taint_toleration.pre_filter);
    ks__status_reset(&st);
    cr_assert_eq(ks_plugin_taint_toleration.pre_filter(NULL, NULL, p, &r, &st), KS_SUCCESS);
    cr_assert_eq(r.used, 0);
}
