/* NodeResourcesBalancedAllocation: upstream noderesources/balanced_allocation_test.go
 * (TestNodeResourcesBalancedAllocation, v1.37 without DRA extended resources: the score is
 * 50 + (50 + withPod - withoutPod) / 2, the balance with the pod against the balance without it)
 * and the args validation of ValidateNodeResourcesBalancedAllocationArgs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_resources_balanced_allocation;

TestSuite(balanced_allocation, .init = th_init, .fini = th_fini);

#define C(r) "{'name':'c','image':'pause','resources':{'requests':{" r "}}}"
/* Upstream's pod specs. */
#define CPU_ONLY C("'cpu':'1000m','memory':'0'") "," C("'cpu':'2000m','memory':'0'")
#define CPU_AND_MEMORY C("'cpu':'1000m','memory':'2000'") "," C("'cpu':'2000m','memory':'3000'")
#define CPU_AND_MEMORY_AND_GPU                                                                     \
    C("'cpu':'1000m','memory':'2000'") "," C("'cpu':'2000m','memory':'3000','nvidia.com/gpu':'3'")
#define GPU_ARGS                                                                                   \
    "{'resources':[{'name':'cpu','weight':1},{'name':'memory','weight':1},"                        \
    "{'name':'nvidia.com/gpu','weight':1}]}"

static int seq;

static ks_pod *pod(const char *containers)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},"
             "'spec':{'containers':[%s]}}",
             seq, seq, containers);
    return th_pod(json);
}

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

/* makeNode(name, milliCPU, memory, gpus). */
static void node(th_cluster *c, const char *name, int milli_cpu, long long memory, int gpus)
{
    char json[1024], gpu[64] = "";
    if (gpus)
        snprintf(gpu, sizeof(gpu), ",'nvidia.com/gpu':'%d'", gpus);
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s'},'status':{'allocatable':{'cpu':'%dm','memory':'%lld',"
             "'pods':'110'%s}}}",
             name, milli_cpu, memory, gpu);
    th_cluster_add_node(c, json);
}

static void expect2(th_cluster *c, const char *args, ks_pod *p, int64_t s1, int64_t s2)
{
    int64_t raw[2], norm[2];
    th_plugin *pl = th_plugin_new(&ks_plugin_node_resources_balanced_allocation, args);
    cr_assert_eq(th_score(pl, c, p, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], s1, "node1: %lld, want %lld", (long long)raw[0], (long long)s1);
    cr_assert_eq(raw[1], s2, "node2: %lld, want %lld", (long long)raw[1], (long long)s2);
    cr_assert_eq(norm[0], raw[0], "no NormalizeScore");
    cr_assert_eq(norm[1], raw[1], "no NormalizeScore");
}

/* PreScore called directly (its Skip path allocates nothing). */
static ks_code pre_score_code(ks_pod *p)
{
    void *self = ks_plugin_node_resources_balanced_allocation.create(NULL, NULL);
    cr_assert_not_null(self);
    ks_code code =
        ks_plugin_node_resources_balanced_allocation.pre_score(self, NULL, p, NULL, 0, NULL);
    ks_plugin_node_resources_balanced_allocation.destroy(self);
    return code;
}

Test(balanced_allocation, best_effort_pod_is_skipped_in_prescore)
{
    th_cluster *c = th_cluster_new();
    node(c, "node1", 4000, 10000, 0);
    node(c, "node2", 4000, 10000, 0);
    ks_pod *p = pod("{'name':'c','image':'pause'}");
    cr_assert_eq(pre_score_code(p), KS_SKIP);
    expect2(c, NULL, p, 0, 0);
}

Test(balanced_allocation, explicit_zero_requests_are_best_effort)
{
    cr_assert_eq(pre_score_code(pod(C("'cpu':'0','memory':'0'"))), KS_SKIP);
}

Test(balanced_allocation, differently_sized_nodes_nothing_scheduled)
{
    /* node1: cpu 0 -> 3000/4000 = .75, memory 0 -> 5000/10000 = .5: balance 100 -> 87, score
     * 50 + 37 / 2 = 68. node2: .5/.5: 100 -> 100, score 75. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 4000, 10000, 0);
    node(c, "node2", 6000, 10000, 0);
    expect2(c, NULL, pod(CPU_AND_MEMORY), 68, 75);
}

Test(balanced_allocation, pods_scheduled_with_resources)
{
    /* node1: cpu .3 -> .6, memory 0 -> .25: 85 -> 82, score 73; node2: cpu .3 -> .6, memory
     * .25 -> .5: 97 -> 95, score 74. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 10000, 20000, 0);
    node(c, "node2", 10000, 20000, 0);
    existing(c, "node1", CPU_ONLY);
    existing(c, "node2", CPU_AND_MEMORY);
    expect2(c, NULL, pod(CPU_AND_MEMORY), 73, 74);
}

Test(balanced_allocation, pods_scheduled_with_resources_differently_sized_nodes)
{
    /* node2: cpu .3 -> .6, memory .1 -> .2: 90 -> 80, score 70. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 10000, 20000, 0);
    node(c, "node2", 10000, 50000, 0);
    existing(c, "node1", CPU_ONLY);
    existing(c, "node2", CPU_AND_MEMORY);
    expect2(c, NULL, pod(CPU_AND_MEMORY), 73, 70);
}

Test(balanced_allocation, nodes_reach_min_and_max_score)
{
    /* Upstream's "nodes to reach min/max score": node1: cpu 3000/3000 = 1 -> 1, memory 0 -> 1:
     * 50 -> 100, score 100 (the pod makes it balanced). node2: cpu 0 -> 0, memory 0 -> 1:
     * 100 -> 50, score 50 (the pod unbalances it). */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 3000, 5000, 0);
    node(c, "node2", 3000, 5000, 0);
    existing(c, "node1", CPU_ONLY);
    expect2(c, NULL, pod(C("'memory':'2000'") "," C("'memory':'3000'")), 100, 50);
}

Test(balanced_allocation, odd_difference_truncates)
{
    /* Go's int64 division truncates: node1: cpu 0 -> 1000/4000 = .25, memory 0 -> 0: 100 -> 87,
     * 50 + (50 - 13) / 2 = 50 + 18 = 68 (not 68.5 rounded up). node2: cpu 1000/4000 = .25 ->
     * 2000/4000 = .5, memory 0: 87 -> 75, 50 + (50 - 12) / 2 = 69. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 4000, 10000, 0);
    node(c, "node2", 4000, 10000, 0);
    existing(c, "node2", C("'cpu':'1000m'"));
    expect2(c, NULL, pod(C("'cpu':'1000m'")), 68, 69);
}

Test(balanced_allocation, requested_at_node_capacity)
{
    /* node1: cpu .5 -> 1, memory 0: 75 -> 50, score 62; node2: cpu .5 -> 1, memory .5: 100 -> 75,
     * score 62. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 6000, 10000, 0);
    node(c, "node2", 6000, 10000, 0);
    existing(c, "node1", CPU_ONLY);
    existing(c, "node2", CPU_AND_MEMORY);
    expect2(c, NULL, pod(CPU_ONLY), 62, 62);
}

Test(balanced_allocation, fraction_is_capped_at_one)
{
    /* node1: cpu 6000/6000 -> 9000/6000 capped at 1, memory 0 -> .5: 50 -> 75, score 87.
     * node2: cpu .5 -> 1, memory 0 -> .5: 75 -> 75, score 75. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 6000, 10000, 0);
    node(c, "node2", 6000, 10000, 0);
    existing(c, "node1", CPU_ONLY);
    existing(c, "node1", CPU_ONLY);
    existing(c, "node2", CPU_ONLY);
    expect2(c, NULL, pod(CPU_AND_MEMORY), 87, 75);
}

Test(balanced_allocation, scalar_resource_joins_population_std)
{
    /* node1: cpu 3000/3500, memory 5000/40000, gpu 3/8 -> 4/8: 69 -> 70, score 75; node2: gpu
     * 0 -> 1/8: 62 -> 65, score 76. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 3500, 40000, 8);
    node(c, "node2", 3500, 40000, 8);
    existing(c, "node2", CPU_AND_MEMORY);
    existing(c, "node1", CPU_AND_MEMORY_AND_GPU);
    expect2(c, GPU_ARGS, pod(C("'memory':'0','nvidia.com/gpu':'1'")), 75, 76);
}

Test(balanced_allocation, scalar_not_requested_by_pod_is_left_out)
{
    /* Only node1 has GPUs; the pod requests none: cpu 0 -> .857, memory 0 -> .125: 100 -> 63,
     * score 56 on both. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 3500, 40000, 8);
    node(c, "node2", 3500, 40000, 0);
    expect2(c, GPU_ARGS, pod(CPU_AND_MEMORY), 56, 56);
}

Test(balanced_allocation, scalar_missing_on_node_is_left_out)
{
    /* The pod asks for a GPU: node1 has 8 (cpu 3000/3500, memory 5000/40000, gpu 1/8); node2 has
     * none, so only cpu and memory count there. node1: 100 -> 65, score 50 + 15 / 2 = 57; node2:
     * 100 -> 63, score 56. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 3500, 40000, 8);
    node(c, "node2", 3500, 40000, 0);
    expect2(c, GPU_ARGS, pod(C("'cpu':'3000m','memory':'5000','nvidia.com/gpu':'1'")), 57, 56);
}

Test(balanced_allocation, zero_allocatable_resource_is_left_out)
{
    /* node1: memory allocatable 0: one fraction left, std 0 with and without the pod: score 75.
     * node2: 100 -> 87, score 68. */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 4000, 0, 0);
    node(c, "node2", 4000, 10000, 0);
    expect2(c, NULL, pod(CPU_AND_MEMORY), 75, 68);
}

Test(balanced_allocation, uses_plain_requests_not_nonzero_defaults)
{
    /* A bound pod without requests adds nothing (no 100m / 200Mi defaults): cpu 1000/2000 and
     * memory 1Gi/2Gi: 100 -> 100, score 75 on both (the 100m / 200Mi defaults would have made
     * node1's balance before the pod differ). */
    th_cluster *c = th_cluster_new();
    node(c, "node1", 2000, 2147483648LL, 0);
    node(c, "node2", 2000, 2147483648LL, 0);
    existing(c, "node1", "{'name':'c','image':'pause'}");
    expect2(c, NULL, pod(C("'cpu':'1','memory':'1Gi'")), 75, 75);
}

Test(balanced_allocation, cpu_only_configuration_has_no_deviation)
{
    th_cluster *c = th_cluster_new();
    node(c, "node1", 4000, 10000, 0);
    node(c, "node2", 6000, 10000, 0);
    expect2(c, "{'resources':[{'name':'cpu','weight':1}]}", pod(CPU_AND_MEMORY), 75, 75);
}

Test(balanced_allocation, ephemeral_storage_counts_when_configured)
{
    /* node1: cpu 3000/4000 = .75, memory 5000/10000 = .5, ephemeral 0/x = 0: mean .41667,
     * population std .3118 -> 68; before the pod all three are 0 -> 100: score 50 + 18 / 2 = 59.
     * node2 (no ephemeral-storage allocatable): 100 -> 87, score 68. */
    th_cluster *c = th_cluster_new();
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'node1'},'status':{'allocatable':{'cpu':"
             "'4','memory':'10000','ephemeral-storage':'1Gi','pods':'110'}}}");
    th_cluster_add_node(c, json);
    node(c, "node2", 4000, 10000, 0);
    expect2(c,
            "{'resources':[{'name':'cpu','weight':1},{'name':'memory','weight':1},"
            "{'name':'ephemeral-storage','weight':1}]}",
            pod(CPU_AND_MEMORY), 59, 68);
}

Test(balanced_allocation, defaults_to_cpu_and_memory_without_args)
{
    th_cluster *c = th_cluster_new();
    node(c, "node1", 4000, 10000, 0);
    node(c, "node2", 6000, 10000, 0);
    expect2(c, "{}", pod(CPU_AND_MEMORY), 68, 75);
    expect2(c, "{'resources':[]}", pod(CPU_AND_MEMORY), 68, 75);
}

Test(balanced_allocation, rejects_weight_other_than_one)
{
    char err[512];
    cr_assert_null(th_plugin_try_new(&ks_plugin_node_resources_balanced_allocation,
                                     "{'resources':[{'name':'cpu','weight':2}]}", err,
                                     sizeof(err)));
    cr_assert_str_eq(err, "NodeResourcesBalancedAllocation: resources[0].weight: Invalid value: 2: "
                          "must be 1");
}

Test(balanced_allocation, rejects_duplicate_resource)
{
    char err[512];
    cr_assert_null(th_plugin_try_new(&ks_plugin_node_resources_balanced_allocation,
                                     "{'resources':[{'name':'cpu','weight':1},{'name':'cpu'}]}",
                                     err, sizeof(err)));
    cr_assert_str_eq(err, "NodeResourcesBalancedAllocation: resources[1].name: Duplicate value: "
                          "\"cpu\"");
}

Test(balanced_allocation, unset_weight_defaults_to_one)
{
    cr_assert_not_null(
        th_plugin_new(&ks_plugin_node_resources_balanced_allocation,
                      "{'resources':[{'name':'cpu'},{'name':'memory','weight':0}]}"));
}

Test(balanced_allocation, has_no_filter_or_normalize)
{
    cr_assert_null(ks_plugin_node_resources_balanced_allocation.filter);
    cr_assert_null(ks_plugin_node_resources_balanced_allocation.normalize_score);
}
