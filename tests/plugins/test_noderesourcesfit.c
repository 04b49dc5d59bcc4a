/*
 * NodeResourcesFit: upstream noderesources/fit_test.go (TestEnoughRequests, TestNotEnoughRequests,
 * TestStorageRequests, TestRestartableInitContainers, TestFitScore), least_allocated_test.go,
 * most_allocated_test.go, requested_to_capacity_ratio_test.go and the args validation, with v1.34
 * codes (UnschedulableAndUnresolvable when a failing request exceeds the whole allocatable).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_resources_fit;

TestSuite(node_resources_fit, .init = th_init, .fini = th_fini);

#define UNS KS_UNSCHEDULABLE
#define UNR KS_UNSCHEDULABLE_AND_UNRESOLVABLE

/* A container named n requesting the resource list body r, e.g. C("a", "'cpu':'1m'"). */
#define C(n, r) "{'name':'" n "','resources':{'requests':{" r "}}}"
/* A restartable init container (sidecar). */
#define SIDECAR(n, r) "{'name':'" n "','restartPolicy':'Always','resources':{'requests':{" r "}}}"

static int seq;

/* A pod whose spec is `spec` (JSON members without braces). */
static ks_pod *pod(const char *spec)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},'spec':{%s}}", seq, seq,
             spec);
    return th_pod(json);
}

/* A pod bound to `node` with the given containers. */
static void existing(th_cluster *c, const char *node, const char *containers)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'e%d','namespace':'default','uid':'e%d'},"
             "'spec':{'nodeName':'%s','containers':[%s]}}",
             seq, seq, node, containers);
    th_cluster_add_pod(c, json);
}

static void node(th_cluster *c, const char *name, const char *allocatable)
{
    char json[1024];
    snprintf(json, sizeof(json), "{'metadata':{'name':'%s'},'status':{'allocatable':{%s}}}", name,
             allocatable);
    th_cluster_add_node(c, json);
}

/* fit_test.go's node: makeAllocatableResources(10, 20, 32, 5, 20, 5), with one bound pod that
 * requests `used`. */
#define ALLOC_10_20                                                                                \
    "'cpu':'10m','memory':'20','pods':'32','example.com/aaa':'5',"                                 \
    "'ephemeral-storage':'20','hugepages-2Mi':'5'"

static th_cluster *fit_node(const char *used)
{
    th_cluster *c = th_cluster_new();
    node(c, "n1", ALLOC_10_20);
    existing(c, "n1", used);
    return c;
}

static ks_code filter_args(const char *args, const char *used, const char *spec, char *r,
                           size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_fit, args);
    return th_filter(p, fit_node(used), pod(spec), "n1", r, len);
}

static ks_code filter(const char *used, const char *spec, char *r, size_t len)
{
    return filter_args(NULL, used, spec, r, len);
}

#define ASSERT_FILTER(code, reasons, used, spec)                                                   \
    do {                                                                                           \
        char r_[512];                                                                              \
        cr_assert_eq(filter(used, spec, r_, sizeof(r_)), code);                                    \
        cr_assert_str_eq(r_, reasons);                                                             \
    } while (0)

/* ---- Filter: TestEnoughRequests ---------------------------------------------------------------
 */

Test(node_resources_fit, no_request_always_fits)
{
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'10m','memory':'20'"), "'containers':[]");
}

Test(node_resources_fit, reports_every_insufficient_resource)
{
    ASSERT_FILTER(UNS, "Insufficient cpu, Insufficient memory", C("e", "'cpu':'10m','memory':'20'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1'") "]");
}

Test(node_resources_fit, init_container_cpu_counts)
{
    ASSERT_FILTER(
        UNS, "Insufficient cpu", C("e", "'cpu':'8m','memory':'19'"),
        "'containers':[" C("a", "'cpu':'1m','memory':'1'") "],"
                                                           "'initContainers':[" C(
                                                               "i", "'cpu':'3m','memory':'1'") "]");
}

Test(node_resources_fit, highest_init_container_cpu_counts)
{
    ASSERT_FILTER(
        UNS, "Insufficient cpu", C("e", "'cpu':'8m','memory':'19'"),
        "'containers':[" C(
            "a",
            "'cpu':'1m','memory':'1'") "],"
                                       "'initContainers':[" C("i", "'cpu':'3m','memory':'1'") "," C(
                                           "j", "'cpu':'2m','memory':'1'") "]");
}

Test(node_resources_fit, init_container_memory_counts)
{
    ASSERT_FILTER(
        UNS, "Insufficient memory", C("e", "'cpu':'9m','memory':'19'"),
        "'containers':[" C(
            "a",
            "'cpu':'1m','memory':'1'") "],"
                                       "'initContainers':[" C("i", "'cpu':'1m','memory':'3'") "," C(
                                           "j", "'cpu':'1m','memory':'2'") "]");
}

Test(node_resources_fit, init_containers_take_max_not_sum)
{
    ASSERT_FILTER(
        KS_SUCCESS, "", C("e", "'cpu':'9m','memory':'19'"),
        "'containers':[" C(
            "a",
            "'cpu':'1m','memory':'1'") "],"
                                       "'initContainers':[" C("i", "'cpu':'1m','memory':'1'") "," C(
                                           "j", "'cpu':'1m','memory':'1'") "]");
}

Test(node_resources_fit, both_resources_fit)
{
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'5m','memory':'5'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1'") "]");
}

Test(node_resources_fit, memory_fits_cpu_does_not)
{
    ASSERT_FILTER(UNS, "Insufficient cpu", C("e", "'cpu':'9m','memory':'5'"),
                  "'containers':[" C("a", "'cpu':'2m','memory':'1'") "]");
}

Test(node_resources_fit, cpu_fits_memory_does_not)
{
    ASSERT_FILTER(UNS, "Insufficient memory", C("e", "'cpu':'5m','memory':'19'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'2'") "]");
}

Test(node_resources_fit, exactly_full_node_fits)
{
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'5m','memory':'19'"),
                  "'containers':[" C("a", "'cpu':'5m','memory':'1'") "]");
    ASSERT_FILTER(
        KS_SUCCESS, "", C("e", "'cpu':'5m','memory':'19'"),
        "'containers':[" C("a", "'cpu':'4m','memory':'1'") "],"
                                                           "'initContainers':[" C(
                                                               "i", "'cpu':'5m','memory':'1'") "]");
}

Test(node_resources_fit, extended_resource_fits)
{
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'0'"),
                  "'containers':[" C("a", "'example.com/aaa':'1'") "]");
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'0'"),
                  "'containers':[],'initContainers':[" C("i", "'example.com/aaa':'1'") "]");
}

Test(node_resources_fit, extended_request_above_allocatable_is_unresolvable)
{
    ASSERT_FILTER(UNR, "Insufficient example.com/aaa", C("e", "'example.com/aaa':'0'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/aaa':'10'") "]");
    ASSERT_FILTER(UNR, "Insufficient example.com/aaa", C("e", "'example.com/aaa':'0'"),
                  "'containers':[],'initContainers':[" C(
                      "i", "'cpu':'1m','memory':'1','example.com/aaa':'10'") "]");
}

Test(node_resources_fit, extended_request_above_free_is_unschedulable)
{
    ASSERT_FILTER(UNS, "Insufficient example.com/aaa", C("e", "'example.com/aaa':'5'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/aaa':'1'") "]");
    ASSERT_FILTER(UNS, "Insufficient example.com/aaa", C("e", "'example.com/aaa':'5'"),
                  "'containers':[],'initContainers':[" C(
                      "i", "'cpu':'1m','memory':'1','example.com/aaa':'1'") "]");
}

Test(node_resources_fit, extended_resource_sums_containers)
{
    /* 3 + 3 = 6 > 5 allocatable: larger than the node, so unresolvable since v1.34 */
    ASSERT_FILTER(UNR, "Insufficient example.com/aaa", C("e", "'example.com/aaa':'2'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/aaa':'3'") "," C(
                      "b", "'cpu':'1m','memory':'1','example.com/aaa':'3'") "]");
}

Test(node_resources_fit, extended_resource_max_of_init_containers)
{
    ASSERT_FILTER(
        KS_SUCCESS, "", C("e", "'example.com/aaa':'2'"),
        "'containers':[],'initContainers':[" C(
            "i", "'cpu':'1m','memory':'1','example."
                 "com/aaa':'3'") "," C("j", "'cpu':'1m','memory':'1','example.com/aaa':'3'") "]");
    ASSERT_FILTER(
        UNR, "Insufficient example.com/aaa", C("e", "'example.com/aaa':'2'"),
        "'containers':[],'initContainers':[" C(
            "i", "'cpu':'1m','memory':'1','example."
                 "com/aaa':'6'") "," C("j", "'cpu':'1m','memory':'1','example.com/aaa':'3'") "]");
}

Test(node_resources_fit, unknown_extended_resource_is_enforced)
{
    ASSERT_FILTER(UNR, "Insufficient example.com/bbb", C("e", "'cpu':'0'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/bbb':'1'") "]");
    ASSERT_FILTER(UNR, "Insufficient example.com/bbb", C("e", "'cpu':'0'"),
                  "'containers':[],'initContainers':[" C(
                      "i", "'cpu':'1m','memory':'1','example.com/bbb':'1'") "]");
}

Test(node_resources_fit, kubernetes_io_resource_is_enforced)
{
    ASSERT_FILTER(
        UNR, "Insufficient kubernetes.io/something", C("e", "'cpu':'0'"),
        "'containers':[" C("a", "'cpu':'1m','memory':'1','kubernetes.io/something':'10'") "]");
    ASSERT_FILTER(UNR, "Insufficient subdomain.kubernetes.io/something", C("e", "'cpu':'0'"),
                  "'containers':[],'initContainers':[" C(
                      "i", "'cpu':'1m','memory':'1','subdomain.kubernetes.io/something':'10'") "]");
}

Test(node_resources_fit, hugepages_are_enforced)
{
    ASSERT_FILTER(UNR, "Insufficient hugepages-2Mi", C("e", "'hugepages-2Mi':'0'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','hugepages-2Mi':'10'") "]");
    ASSERT_FILTER(UNR, "Insufficient hugepages-2Mi", C("e", "'hugepages-2Mi':'2'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','hugepages-2Mi':'3'") "," C(
                      "b", "'cpu':'1m','memory':'1','hugepages-2Mi':'3'") "]");
    ASSERT_FILTER(UNS, "Insufficient hugepages-2Mi", C("e", "'hugepages-2Mi':'3'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','hugepages-2Mi':'3'") "]");
}

Test(node_resources_fit, skips_ignored_extended_resource)
{
    char r[256];
    cr_assert_eq(
        filter_args("{'ignoredResources':['example.com/bbb']}", C("e", "'cpu':'0'"),
                    "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/bbb':'1'") "]", r,
                    sizeof(r)),
        KS_SUCCESS);
    cr_assert_str_eq(r, "");
}

Test(node_resources_fit, skips_ignored_resource_group_but_not_kubernetes_io)
{
    char r[256];
    cr_assert_eq(
        filter_args("{'ignoredResourceGroups':['example.com']}", C("e", "'cpu':'0'"),
                    "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/bbb':'1',"
                                            "'kubernetes.io/something':'1'") "]",
                    r, sizeof(r)),
        UNR);
    cr_assert_str_eq(r, "Insufficient kubernetes.io/something");
}

Test(node_resources_fit, ignored_resources_cannot_ignore_hugepages)
{
    char r[256];
    cr_assert_eq(filter_args("{'ignoredResources':['hugepages-2Mi']}", C("e", "'cpu':'0'"),
                             "'containers':[" C("a", "'hugepages-2Mi':'10'") "]", r, sizeof(r)),
                 UNR);
    cr_assert_str_eq(r, "Insufficient hugepages-2Mi");
}

Test(node_resources_fit, non_scalar_resource_names_are_not_checked)
{
    /* framework.Resource holds only native and scalar names; "foo" is neither */
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'0'"),
                  "'containers':[" C("a", "'cpu':'1m','foo':'5','attachable-volumes-x':'0'") "]");
    ASSERT_FILTER(UNR, "Insufficient attachable-volumes-aws-ebs", C("e", "'cpu':'0'"),
                  "'containers':[" C("a", "'attachable-volumes-aws-ebs':'1'") "]");
}

Test(node_resources_fit, zero_extended_request_is_not_checked)
{
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'example.com/aaa':'6'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1','example.com/aaa':'0'") "]");
}

Test(node_resources_fit, pod_overhead_is_added)
{
    ASSERT_FILTER(
        KS_SUCCESS, "", C("e", "'cpu':'5m','memory':'5'"),
        "'containers':[" C("a", "'cpu':'1m','memory':'1'") "],"
                                                           "'overhead':{'cpu':'3m','memory':'13'}");
    ASSERT_FILTER(
        UNS, "Insufficient memory", C("e", "'cpu':'5m','memory':'5'"),
        "'containers':[" C("a", "'cpu':'1m','memory':'1'") "],"
                                                           "'overhead':{'cpu':'1m','memory':'15'}");
}

Test(node_resources_fit, pod_level_requests_replace_container_sum)
{
    ASSERT_FILTER(
        KS_SUCCESS, "", C("e", "'cpu':'5m','memory':'5'"),
        "'containers':[" C(
            "a", "'cpu':'1m','memory':'1'") "],"
                                            "'resources':{'requests':{'cpu':'1m','memory':'2'}}");
    ASSERT_FILTER(
        UNS, "Insufficient cpu", C("e", "'cpu':'5m','memory':'5'"),
        "'containers':[" C(
            "a", "'cpu':'1m','memory':'1'") "],"
                                            "'resources':{'requests':{'cpu':'7m','memory':'2'}}");
    ASSERT_FILTER(
        UNS, "Insufficient memory", C("e", "'cpu':'5m','memory':'19'"),
        "'containers':[" C(
            "a", "'cpu':'1m','memory':'1'") "],"
                                            "'resources':{'requests':{'cpu':'3m','memory':'2'}}");
}

/* ---- Filter: TestNotEnoughRequests, TestStorageRequests, sidecars -----------------------------
 */

static ks_code filter_one_pod_node(const char *spec, char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_fit, NULL);
    th_cluster *c = th_cluster_new();
    node(c, "n1", "'cpu':'10m','memory':'20','pods':'1'");
    existing(c, "n1", C("e", "'cpu':'5m','memory':'5'"));
    return th_filter(p, c, pod(spec), "n1", r, len);
}

Test(node_resources_fit, too_many_pods_without_requests)
{
    char r[256];
    cr_assert_eq(filter_one_pod_node("'containers':[]", r, sizeof(r)), UNS);
    cr_assert_str_eq(r, "Too many pods");
}

Test(node_resources_fit, too_many_pods_even_when_resources_fit)
{
    char r[256];
    cr_assert_eq(
        filter_one_pod_node("'containers':[" C("a", "'cpu':'1m','memory':'1'") "]", r, sizeof(r)),
        UNS);
    cr_assert_str_eq(r, "Too many pods");
    cr_assert_eq(filter_one_pod_node(
                     "'containers':[" C(
                         "a", "'cpu':'5m','memory':'1'") "],"
                                                         "'initContainers':[" C(
                                                             "i", "'cpu':'5m','memory':'1'") "]",
                     r, sizeof(r)),
                 UNS);
    cr_assert_str_eq(r, "Too many pods");
}

Test(node_resources_fit, reasons_come_in_upstream_order)
{
    char r[512];
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_fit, NULL);
    th_cluster *c = th_cluster_new();
    node(c, "n1",
         "'cpu':'10m','memory':'20','pods':'1','ephemeral-storage':'20',"
         "'example.com/aaa':'5'");
    existing(c, "n1",
             C("e", "'cpu':'9m','memory':'19','ephemeral-storage':'19',"
                    "'example.com/aaa':'4'"));
    ks_code code = th_filter(p, c,
                             pod("'containers':[" C("a", "'cpu':'2m','memory':'2',"
                                                         "'ephemeral-storage':'2',"
                                                         "'example.com/aaa':'2'") "]"),
                             "n1", r, sizeof(r));
    cr_assert_eq(code, UNS);
    cr_assert_str_eq(r, "Too many pods, Insufficient cpu, Insufficient memory, "
                        "Insufficient ephemeral-storage, Insufficient example.com/aaa");
}

Test(node_resources_fit, one_unresolvable_reason_makes_status_unresolvable)
{
    ASSERT_FILTER(UNR, "Insufficient cpu, Insufficient memory", C("e", "'cpu':'5m','memory':'19'"),
                  "'containers':[" C("a", "'cpu':'6m','memory':'30'") "]");
}

Test(node_resources_fit, ephemeral_storage_is_checked)
{
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'2m','memory':'10'"),
                  "'containers':[" C("a", "'cpu':'1m','memory':'1'") "]");
    ASSERT_FILTER(UNR, "Insufficient ephemeral-storage", C("e", "'cpu':'2m','memory':'2'"),
                  "'containers':[" C("a", "'ephemeral-storage':'25'") "]");
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'2m','memory':'2','ephemeral-storage':'10'"),
                  "'containers':[],'initContainers':[" C("i", "'ephemeral-storage':'5'") "]");
    ASSERT_FILTER(KS_SUCCESS, "", C("e", "'cpu':'2m','memory':'2'"),
                  "'containers':[" C("a", "'ephemeral-storage':'10'") "]");
    ASSERT_FILTER(UNS, "Insufficient ephemeral-storage",
                  C("e", "'cpu':'2m','memory':'2','ephemeral-storage':'15'"),
                  "'containers':[" C("a", "'ephemeral-storage':'10'") "]");
}

static ks_code filter_sidecar(const char *spec, char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_fit, NULL);
    th_cluster *c = th_cluster_new();
    node(c, "n1", "'cpu':'2m','memory':'0','pods':'1'");
    return th_filter(p, c, pod(spec), "n1", r, len);
}

Test(node_resources_fit, sidecar_requests_add_to_containers)
{
    char r[256];
    cr_assert_eq(filter_sidecar("'containers':[{'name':'regular'}],"
                                "'initContainers':[{'name':'s','restartPolicy':'Always'}]",
                                r, sizeof(r)),
                 KS_SUCCESS);
    cr_assert_eq(
        filter_sidecar("'containers':[" C("regular", "'cpu':'1m'") "],"
                                                                   "'initContainers':[" SIDECAR(
                                                                       "s", "'cpu':'1m'") "]",
                       r, sizeof(r)),
        KS_SUCCESS);
    cr_assert_eq(
        filter_sidecar("'containers':[" C("regular", "'cpu':'1m'") "],"
                                                                   "'initContainers':[" SIDECAR(
                                                                       "s", "'cpu':'2m'") "]",
                       r, sizeof(r)),
        UNR);
    cr_assert_str_eq(r, "Insufficient cpu");
}

/* ---- Score ------------------------------------------------------------------------------------
 */

#define LEAST(res) "{'scoringStrategy':{'type':'LeastAllocated','resources':[" res "]}}"
#define MOST(res) "{'scoringStrategy':{'type':'MostAllocated','resources':[" res "]}}"
#define RTCR(res, shape)                                                                           \
    "{'scoringStrategy':{'type':'RequestedToCapacityRatio','resources':[" res "],"                 \
    "'requestedToCapacityRatio':{'shape':[" shape "]}}}"
#define CPU_MEM "{'name':'cpu','weight':1},{'name':'memory','weight':1}"

/* TestFitScore's cluster: node1 4000 cores / 10000 bytes with 2000/4000 used, node2 6000 / 10000
 * with 1000/2000 used. */
static th_cluster *fit_score_cluster(void)
{
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'4000','memory':'10000','pods':'110'");
    node(c, "node2", "'cpu':'6000','memory':'10000','pods':'110'");
    existing(c, "node1", C("e", "'cpu':'2000','memory':'4000'"));
    existing(c, "node2", C("e", "'cpu':'1000','memory':'2000'"));
    return c;
}

static void assert_scores(const char *args, th_cluster *c, ks_pod *p, const int64_t *want, size_t n)
{
    int64_t raw[8], norm[8];
    th_plugin *pl = th_plugin_new(&ks_plugin_node_resources_fit, args);
    cr_assert_eq(th_score(pl, c, p, raw, norm), KS_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(raw[i], want[i], "node %zu: raw %lld, want %lld", i, (long long)raw[i],
                     (long long)want[i]);
        cr_assert_eq(norm[i], want[i], "node %zu: no NormalizeScore expected", i);
    }
}

#define POD_REQ(r) pod("'containers':[" C("a", r) "]")

Test(node_resources_fit, rtcr_least_shape_scores)
{
    int64_t want[] = {10, 32};
    assert_scores(RTCR(CPU_MEM, "{'utilization':0,'score':10},{'utilization':100,'score':0}"),
                  fit_score_cluster(), POD_REQ("'cpu':'3000','memory':'5000'"), want, 2);
}

Test(node_resources_fit, rtcr_most_shape_scores)
{
    int64_t want[] = {95, 68};
    assert_scores(RTCR(CPU_MEM, "{'utilization':0,'score':0},{'utilization':100,'score':10}"),
                  fit_score_cluster(), POD_REQ("'cpu':'3000','memory':'5000'"), want, 2);
}

Test(node_resources_fit, most_allocated_scores)
{
    int64_t want[] = {67, 36};
    assert_scores(MOST(CPU_MEM), fit_score_cluster(), POD_REQ("'cpu':'1000','memory':'2000'"), want,
                  2);
}

Test(node_resources_fit, least_allocated_scores)
{
    int64_t want[] = {32, 63};
    assert_scores(LEAST(CPU_MEM), fit_score_cluster(), POD_REQ("'cpu':'1000','memory':'2000'"),
                  want, 2);
}

Test(node_resources_fit, missing_args_default_to_least_allocated_cpu_memory)
{
    int64_t want[] = {32, 63};
    assert_scores(NULL, fit_score_cluster(), POD_REQ("'cpu':'1000','memory':'2000'"), want, 2);
    assert_scores("{}", fit_score_cluster(), POD_REQ("'cpu':'1000','memory':'2000'"), want, 2);
    assert_scores("{'scoringStrategy':{'type':'LeastAllocated'}}", fit_score_cluster(),
                  POD_REQ("'cpu':'1000','memory':'2000'"), want, 2);
}

static th_cluster *two_nodes(const char *a1, const char *a2)
{
    th_cluster *c = th_cluster_new();
    node(c, "node1", a1);
    node(c, "node2", a2);
    return c;
}

Test(node_resources_fit, least_nothing_scheduled_nothing_requested)
{
    int64_t want[] = {100, 100};
    assert_scores(LEAST(CPU_MEM),
                  two_nodes("'cpu':'4000','memory':'10000'", "'cpu':'4000','memory':'10000'"),
                  pod("'containers':[]"), want, 2);
}

Test(node_resources_fit, least_differently_sized_nodes)
{
    int64_t want[] = {37, 50};
    assert_scores(LEAST(CPU_MEM),
                  two_nodes("'cpu':'4000','memory':'10000'", "'cpu':'6000','memory':'10000'"),
                  pod("'containers':[" C("a", "'cpu':'1000','memory':'2000'") "," C(
                      "b", "'cpu':'2000','memory':'3000'") "]"),
                  want, 2);
}

Test(node_resources_fit, least_pods_without_requests_scheduled)
{
    int64_t want[] = {100, 100};
    th_cluster *c = two_nodes("'cpu':'4000','memory':'10000'", "'cpu':'4000','memory':'10000'");
    existing(c, "node1", "");
    existing(c, "node1", "");
    existing(c, "node2", "");
    existing(c, "node2", "");
    assert_scores(LEAST(CPU_MEM), c, pod("'containers':[]"), want, 2);
}

Test(node_resources_fit, least_pods_scheduled_with_resources)
{
    int64_t want[] = {70, 57};
    th_cluster *c = two_nodes("'cpu':'10000','memory':'20000'", "'cpu':'10000','memory':'20000'");
    existing(c, "node1", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node1", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node2", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node2", C("e", "'cpu':'3000','memory':'5000'"));
    assert_scores(LEAST(CPU_MEM), c, pod("'containers':[]"), want, 2);
}

Test(node_resources_fit, least_requested_and_scheduled)
{
    int64_t want[] = {57, 45};
    th_cluster *c = two_nodes("'cpu':'10000','memory':'20000'", "'cpu':'10000','memory':'20000'");
    existing(c, "node1", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node2", C("e", "'cpu':'3000','memory':'5000'"));
    assert_scores(LEAST(CPU_MEM), c,
                  pod("'containers':[" C("a", "'cpu':'1000','memory':'2000'") "," C(
                      "b", "'cpu':'2000','memory':'3000'") "]"),
                  want, 2);
    int64_t want2[] = {57, 60};
    c = two_nodes("'cpu':'10000','memory':'20000'", "'cpu':'10000','memory':'50000'");
    existing(c, "node1", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node2", C("e", "'cpu':'3000','memory':'5000'"));
    assert_scores(LEAST(CPU_MEM), c,
                  pod("'containers':[" C("a", "'cpu':'1000','memory':'2000'") "," C(
                      "b", "'cpu':'2000','memory':'3000'") "]"),
                  want2, 2);
}

Test(node_resources_fit, least_request_above_capacity_scores_zero_for_that_resource)
{
    int64_t want[] = {50, 25};
    th_cluster *c = two_nodes("'cpu':'4000','memory':'10000'", "'cpu':'4000','memory':'10000'");
    existing(c, "node1", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node2", C("e", "'cpu':'3000','memory':'5000'"));
    assert_scores(LEAST(CPU_MEM), c, POD_REQ("'cpu':'3000','memory':'0'"), want, 2);
}

Test(node_resources_fit, zero_allocatable_resources_are_dropped)
{
    int64_t want[] = {0, 0};
    th_cluster *c = two_nodes("'pods':'110'", "'pods':'110'");
    existing(c, "node1", C("e", "'cpu':'3000','memory':'0'"));
    existing(c, "node2", C("e", "'cpu':'3000','memory':'5000'"));
    assert_scores(LEAST(CPU_MEM), c, pod("'containers':[]"), want, 2);
}

Test(node_resources_fit, least_weights_per_resource)
{
    int64_t want[] = {41, 50};
    assert_scores(LEAST("{'name':'memory','weight':2},{'name':'cpu','weight':1}"),
                  two_nodes("'cpu':'4000','memory':'10000'", "'cpu':'6000','memory':'10000'"),
                  pod("'containers':[" C("a", "'cpu':'1000','memory':'2000'") "," C(
                      "b", "'cpu':'2000','memory':'3000'") "]"),
                  want, 2);
}

#define EXT_SET CPU_MEM ",{'name':'intel.com/foo','weight':1}"

Test(node_resources_fit, unrequested_extended_resource_is_bypassed)
{
    int64_t want[] = {50, 50};
    assert_scores(LEAST(EXT_SET),
                  two_nodes("'cpu':'6000','memory':'10000'",
                            "'cpu':'6000','memory':'10000','intel.com/foo':'4'"),
                  pod("'containers':[" C("a", "'cpu':'1000','memory':'2000'") "," C(
                      "b", "'cpu':'2000','memory':'3000'") "]"),
                  want, 2);
}

Test(node_resources_fit, requested_extended_resource_is_scored)
{
    int64_t want[] = {50, 60};
    assert_scores(LEAST(EXT_SET),
                  two_nodes("'cpu':'6000','memory':'10000','intel.com/foo':'4'",
                            "'cpu':'6000','memory':'10000','intel.com/foo':'10'"),
                  POD_REQ("'cpu':'3000','memory':'5000','intel.com/foo':'2'"), want, 2);
}

Test(node_resources_fit, extended_resource_missing_on_node_is_dropped)
{
    int64_t want[] = {55, 55};
    assert_scores(LEAST("{'name':'intel.com/foo','weight':2}," CPU_MEM),
                  two_nodes("'cpu':'6000','memory':'10000'",
                            "'cpu':'6000','memory':'10000','intel.com/foo':'4'"),
                  POD_REQ("'cpu':'3000','memory':'4000'"), want, 2);
}

Test(node_resources_fit, pods_without_requests_count_defaults_for_scoring)
{
    /* a bound pod without requests counts as 100m / 200Mi; the incoming pod too */
    /* node1: cpu (4000-100)*100/4000 = 97, mem (2048-200)*100/2048 = 90 -> 93
     * node2: cpu (4000-200)*100/4000 = 95, mem (2048-400)*100/2048 = 80 -> 87 */
    int64_t want[] = {93, 87};
    th_cluster *c = two_nodes("'cpu':'4','memory':'2Gi'", "'cpu':'4','memory':'2Gi'");
    existing(c, "node2", "{'name':'e'}");
    assert_scores(LEAST(CPU_MEM), c, pod("'containers':[{'name':'a'}]"), want, 2);
}

Test(node_resources_fit, most_allocated_caps_requests_at_capacity)
{
    /* requested above capacity scores 100 for that resource: (100 + 50) / 2 */
    int64_t want[] = {75};
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'4000','memory':'10000'");
    existing(c, "node1", C("e", "'cpu':'3000','memory':'5000'"));
    assert_scores(MOST(CPU_MEM), c, POD_REQ("'cpu':'3000','memory':'0'"), want, 1);
}

Test(node_resources_fit, most_allocated_ephemeral_storage_and_weights)
{
    /* cpu 2000/4000 = 50 (w1), ephemeral 3000/10000 = 30 (w3): (50 + 90) / 4 = 35 */
    int64_t want[] = {35};
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'4000','memory':'10000','ephemeral-storage':'10000'");
    existing(c, "node1", C("e", "'cpu':'1000','ephemeral-storage':'1000'"));
    assert_scores(MOST("{'name':'cpu','weight':1},{'name':'ephemeral-storage','weight':3}"), c,
                  POD_REQ("'cpu':'1000','ephemeral-storage':'2000'"), want, 1);
}

Test(node_resources_fit, rtcr_rounds_half_away_from_zero)
{
    /* cpu 75% -> 25, memory 50% -> 50: (25 + 50) / 2 = 37.5 -> 38 */
    int64_t want[] = {38};
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'4000','memory':'10000'");
    assert_scores(RTCR(CPU_MEM, "{'utilization':0,'score':10},{'utilization':100,'score':0}"), c,
                  POD_REQ("'cpu':'3000','memory':'5000'"), want, 1);
}

Test(node_resources_fit, rtcr_broken_linear_shape)
{
    /* shape (10,20) (50,80) (90,100): 5% -> 20, 30% -> 20 + 60*20/40 = 50, 95% -> 100 */
    const char *args = RTCR("{'name':'cpu','weight':1}",
                            "{'utilization':10,'score':2},{'utilization':50,'score':8},"
                            "{'utilization':90,'score':10}");
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'100','memory':'10000'");
    int64_t w1[] = {20}, w2[] = {50}, w3[] = {100};
    assert_scores(args, c, POD_REQ("'cpu':'5'"), w1, 1);
    assert_scores(args, c, POD_REQ("'cpu':'30'"), w2, 1);
    assert_scores(args, c, POD_REQ("'cpu':'95'"), w3, 1);
}

Test(node_resources_fit, rtcr_leaves_out_resources_scoring_zero)
{
    /* cpu 0% -> 0 is left out with its weight; memory 50% -> 50 */
    int64_t want[] = {50};
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'4000','memory':'10000'");
    assert_scores(RTCR("{'name':'cpu','weight':5},{'name':'memory','weight':1}",
                       "{'utilization':0,'score':0},{'utilization':100,'score':10}"),
                  c, POD_REQ("'cpu':'0','memory':'5000'"), want, 1);
}

Test(node_resources_fit, rtcr_extended_resource)
{
    /* intel.com/foo 2 of 4 -> 50%, shape most: 50; cpu/memory 0% -> 0, left out */
    int64_t want[] = {50, 20};
    assert_scores(RTCR(EXT_SET, "{'utilization':0,'score':0},{'utilization':100,'score':10}"),
                  two_nodes("'cpu':'4000','memory':'10000','intel.com/foo':'4'",
                            "'cpu':'4000','memory':'10000','intel.com/foo':'10'"),
                  POD_REQ("'cpu':'0','memory':'0','intel.com/foo':'2'"), want, 2);
}

Test(node_resources_fit, non_scalar_scoring_resource_is_dropped)
{
    /* "foo" and "pods" never hold a value upstream: only cpu scores, 3000/4000 used -> 25 */
    int64_t want[] = {25};
    th_cluster *c = th_cluster_new();
    node(c, "node1", "'cpu':'4000','memory':'10000','pods':'110','foo':'10'");
    assert_scores(LEAST("{'name':'foo','weight':5},{'name':'pods','weight':5},"
                        "{'name':'cpu','weight':1}"),
                  c, POD_REQ("'cpu':'3000','foo':'1'"), want, 1);
}

/* ---- Args -------------------------------------------------------------------------------------
 */

static void assert_rejected(const char *args, const char *field)
{
    char err[512] = "";
    th_plugin *p = th_plugin_try_new(&ks_plugin_node_resources_fit, args, err, sizeof(err));
    cr_assert_null(p, "args %s were accepted", args);
    cr_assert_not_null(strstr(err, field), "error \"%s\" does not name %s", err, field);
}

Test(node_resources_fit, rejects_weight_out_of_range)
{
    assert_rejected(LEAST("{'name':'memory','weight':-1},{'name':'cpu','weight':1}"),
                    "scoringStrategy.resources[0].weight");
    assert_rejected(LEAST("{'name':'memory','weight':1},{'name':'cpu','weight':101}"),
                    "scoringStrategy.resources[1].weight");
}

Test(node_resources_fit, zero_weight_defaults_to_one)
{
    int64_t want[] = {32, 63};
    assert_scores(LEAST("{'name':'cpu'},{'name':'memory','weight':0}"), fit_score_cluster(),
                  POD_REQ("'cpu':'1000','memory':'2000'"), want, 2);
}

Test(node_resources_fit, rejects_unknown_strategy)
{
    assert_rejected("{'scoringStrategy':{'type':'Balanced'}}", "scoringStrategy.type");
}

Test(node_resources_fit, rejects_rtcr_without_shape)
{
    assert_rejected("{'scoringStrategy':{'type':'RequestedToCapacityRatio','resources':[" CPU_MEM
                    "]}}",
                    "scoringStrategy.requestedToCapacityRatio.shape");
}

Test(node_resources_fit, rejects_bad_shape)
{
    assert_rejected(RTCR(CPU_MEM, "{'utilization':50,'score':1},{'utilization':50,'score':2}"),
                    "shape[1].utilization");
    assert_rejected(RTCR(CPU_MEM, "{'utilization':101,'score':1}"), "shape[0].utilization");
    assert_rejected(RTCR(CPU_MEM, "{'utilization':-1,'score':1}"), "shape[0].utilization");
    assert_rejected(RTCR(CPU_MEM, "{'utilization':10,'score':11}"), "shape[0].score");
    assert_rejected(RTCR(CPU_MEM, "{'utilization':10,'score':-1}"), "shape[0].score");
}

Test(node_resources_fit, rejects_bad_ignored_resources)
{
    assert_rejected("{'ignoredResourceGroups':['example.com/aa']}", "ignoredResourceGroups[0]");
    assert_rejected("{'ignoredResources':['-bad']}", "ignoredResources[0]");
    assert_rejected("{'ignoredResources':['example.com/aaa','a/b/c']}", "ignoredResources[1]");
}

Test(node_resources_fit, rejects_wrong_types)
{
    assert_rejected("{'ignoredResources':'example.com/aaa'}", "ignoredResources");
    assert_rejected(LEAST("{'name':'cpu','weight':'heavy'}"),
                    "scoringStrategy.resources[0].weight");
}

/* v1.37 PodInfo.CalculateResource: a bound pod with pod-level requests adds to its node's
 * NonZeroRequested the container defaults only for a resource the whole pod does not list. The
 * bound pod: pod-level cpu 1, containers memory 100Mi and nothing: memory 100Mi (not
 * 100Mi + 200Mi). Incoming cpu 1, memory 100Mi, LeastAllocated on 4 cpu / 1Gi:
 * node1 cpu (4000 - 2000) * 100 / 4000 = 50, memory (1Gi - 200Mi) * 100 / 1Gi = 80 -> 65;
 * node2 cpu 75, memory 90 -> 82. */
Test(node_resources_fit, bound_pod_level_pod_counts_listed_memory_without_defaults)
{
    int64_t want[] = {65, 82};
    th_cluster *c =
        two_nodes("'cpu':'4','memory':'1Gi','pods':'110'", "'cpu':'4','memory':'1Gi','pods':'110'");
    th_cluster_add_pod(c, "{'metadata':{'name':'pl','namespace':'default','uid':'pl'},"
                          "'spec':{'nodeName':'node1','resources':{'requests':{'cpu':'1'}},"
                          "'containers':[{'name':'a','resources':{'requests':{'memory':'100Mi'}}},"
                          "{'name':'b'}]}}");
    assert_scores(LEAST(CPU_MEM), c, pod("'containers':[" C("a", "'cpu':'1','memory':'100Mi'") "]"),
                  want, 2);
}

/* A bound pod resized in place down to 1 cpu while the kubelet still runs it with 3 counts 3
 * (max(spec, actuated, allocated)): node1 cpu (4000 - 3000 - 1000) -> 0, memory
 * (1Gi - 100Mi) -> 90: 45. */
Test(node_resources_fit, bound_pod_resized_in_place_counts_actual_requests)
{
    int64_t want[] = {45, 82};
    th_cluster *c =
        two_nodes("'cpu':'4','memory':'1Gi','pods':'110'", "'cpu':'4','memory':'1Gi','pods':'110'");
    th_cluster_add_pod(c, "{'metadata':{'name':'r','namespace':'default','uid':'r'},"
                          "'spec':{'nodeName':'node1','containers':[{'name':'a','resources':"
                          "{'requests':{'cpu':'1','memory':'0'}}}]},"
                          "'status':{'containerStatuses':[{'name':'a','allocatedResources':"
                          "{'cpu':'3','memory':'0'},'resources':{'requests':{'cpu':'3',"
                          "'memory':'0'}}}]}}");
    assert_scores(LEAST(CPU_MEM), c, pod("'containers':[" C("a", "'cpu':'1','memory':'100Mi'") "]"),
                  want, 2);
}
