/*
 * The out-of-tree example plugin (examples/min-resources), built as a shared object from its
 * source, loaded through the loader with kubesched's real host table, and driven by the plugin
 * harness: its args checks, its verdicts and reasons, and its -v 4 log line.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "config/config_args.h"
#include "sched/framework.h"
#include "sched/host_api.h"
#include "sched/loader.h"
#include "util/log.h"

static ks_loaded_module *mod;
static const ks_plugin_desc *desc;
static char reasons[1024];

static void setup(void)
{
    char err[1024];
    const ks_plugin_desc *const *descs;
    th_init();
    cr_assert_eq(ks__loader_open(EXAMPLE_SO, ks__host_api(), &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 1);
    desc = descs[0];
    cr_assert_str_eq(desc->name, "NodeMinResources");
}

static void teardown(void)
{
    th_fini();
    ks__loader_close(mod);
}

TestSuite(example_min_resources, .init = setup, .fini = teardown);

#define ARGS_ALL "{'minCPU':'4','minMemory':'16Gi','requiredLabel':'example.com/tier=large'}"

static th_cluster *cluster(void)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'small'},"
                           "'status':{'allocatable':{'cpu':'2','memory':'4Gi','pods':'110'}}}");
    th_cluster_add_node(c, "{'metadata':{'name':'big','labels':{'example.com/tier':'large'}},"
                           "'status':{'allocatable':{'cpu':'8','memory':'32Gi','pods':'110'}}}");
    th_cluster_add_node(c,
                        "{'metadata':{'name':'big-medium','labels':{'example.com/tier':'medium'}},"
                        "'status':{'allocatable':{'cpu':'16','memory':'64Gi','pods':'110'}}}");
    th_cluster_add_node(c,
                        "{'metadata':{'name':'cpu-1500m','labels':{'gpu':'a100'}},"
                        "'status':{'allocatable':{'cpu':'1500m','memory':'64Gi','pods':'110'}}}");
    return c;
}

static const char *pod = "{'metadata':{'name':'p','namespace':'default'},'spec':{'containers':"
                         "[{'name':'c','resources':{'requests':{'cpu':'100m'}}}]}}";

Test(example_min_resources, rejects_small_node_with_one_constant_reason_per_check)
{
    th_plugin *p = th_plugin_new(desc, ARGS_ALL);
    cr_assert_eq(th_filter(p, cluster(), th_pod(pod), "small", reasons, sizeof(reasons)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(reasons, "node(s) had less than 4 CPU allocatable, node(s) had less than 16Gi "
                              "memory allocatable, node(s) did not have label "
                              "example.com/tier=large");
}

Test(example_min_resources, passes_big_labelled_node)
{
    th_plugin *p = th_plugin_new(desc, ARGS_ALL);
    cr_assert_eq(th_filter(p, cluster(), th_pod(pod), "big", reasons, sizeof(reasons)), KS_SUCCESS);
    cr_assert_str_eq(reasons, "");
}

Test(example_min_resources, label_value_must_match)
{
    th_plugin *p = th_plugin_new(desc, ARGS_ALL);
    cr_assert_eq(th_filter(p, cluster(), th_pod(pod), "big-medium", reasons, sizeof(reasons)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(reasons, "node(s) did not have label example.com/tier=large");
}

Test(example_min_resources, label_key_alone_accepts_any_value)
{
    th_plugin *p = th_plugin_new(desc, "{'requiredLabel':'gpu'}");
    th_cluster *c = cluster();
    cr_assert_eq(th_filter(p, c, th_pod(pod), "cpu-1500m", reasons, sizeof(reasons)), KS_SUCCESS);
    cr_assert_eq(th_filter(p, c, th_pod(pod), "big", reasons, sizeof(reasons)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(reasons, "node(s) did not have label gpu");
}

Test(example_min_resources, milli_cpu_and_numeric_quantities)
{
    th_plugin *p = th_plugin_new(desc, "{'minCPU':'1500m'}");
    th_plugin *q = th_plugin_new(desc, "{'minCPU':2}");
    th_cluster *c = cluster();
    cr_assert_eq(th_filter(p, c, th_pod(pod), "cpu-1500m", reasons, sizeof(reasons)), KS_SUCCESS);
    cr_assert_eq(th_filter(q, c, th_pod(pod), "cpu-1500m", reasons, sizeof(reasons)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(reasons, "node(s) had less than 2 CPU allocatable");
    cr_assert_eq(th_filter(q, c, th_pod(pod), "small", reasons, sizeof(reasons)), KS_SUCCESS);
}

Test(example_min_resources, refuses_bad_args_naming_the_arg)
{
    char err[512];
    cr_assert_null(th_plugin_try_new(desc, "{'minCPU':'lots'}", err, sizeof(err)));
    cr_assert(strncmp(err, "args.minCPU: not a quantity (", 29) == 0, "%s", err);
    cr_assert(strstr(err, "; use e.g. \"2\" or \"1500m\""), "%s", err);

    cr_assert_null(th_plugin_try_new(desc, "{'minMemory':'-1Gi'}", err, sizeof(err)));
    cr_assert_str_eq(err, "args.minMemory: must not be negative; use e.g. "
                          "\"8Gi\" or \"512Mi\"");

    cr_assert_null(th_plugin_try_new(desc, "{'requiredLabel':'a=b=c'}", err, sizeof(err)));
    cr_assert_str_eq(err, "args.requiredLabel: \"a=b=c\" is not a node label "
                          "key (\"example.com/tier\") or key=value (\"example.com/tier=large\")");

    cr_assert_null(th_plugin_try_new(desc, "{'requiredLabel':3}", err, sizeof(err)));
    cr_assert(strncmp(err, "args.requiredLabel: must be a string", 36) == 0, "%s", err);

    cr_assert_null(th_plugin_try_new(desc, NULL, err, sizeof(err)));
    cr_assert_str_eq(err, "args: set at least one of minCPU (e.g. \"2\"), "
                          "minMemory (e.g. \"8Gi\") or requiredLabel (e.g. "
                          "\"example.com/tier=large\")");
}

Test(example_min_resources, logs_allocatable_at_v4)
{
    th_plugin *p;
    th_cluster *c;
    char line[4096];
    size_t n;
    FILE *f;

    cr_redirect_stderr();
    p = th_plugin_new(desc, ARGS_ALL);
    c = cluster();
    ks__log_verbosity = 3;
    th_filter(p, c, th_pod(pod), "small", reasons, sizeof(reasons));
    ks__log_verbosity = 4;
    th_filter(p, c, th_pod(pod), "big", reasons, sizeof(reasons));
    fflush(stderr);
    f = cr_get_redirected_stderr();
    n = fread(line, 1, sizeof(line) - 1, f);
    line[n] = '\0';
    cr_assert(strstr(line, "node big: allocatable cpu 8000m, memory 34359738368 bytes"), "%s",
              line);
    cr_assert_null(strstr(line, "node small:"), "nothing is logged below -v 4: %s", line);
}

/* ABI 1.4: the example's queueing hint (events_with_hints), called as the host calls it. */
Test(example_min_resources, hint_queues_only_when_a_node_starts_to_qualify)
{
    struct ks_error e = {{0}};
    cJSON *json = th_json(ARGS_ALL);
    struct ks_args args = {.json = json};
    void *self = desc->create(&args, &e);
    cr_assert_not_null(self, "%s", e.msg);
    ks_cluster_event_hint ev[4];
    cr_assert_eq(desc->events_with_hints(self, ev, 4), 1);
    cr_assert_eq(ev[0].event.resource, KS_RES_NODE);
    cr_assert_not_null(ev[0].hint);
    ks_node *small = th_node("{'metadata':{'name':'n'},'status':{'allocatable':{'cpu':'2',"
                             "'memory':'4Gi'}}}");
    ks_node *big = th_node("{'metadata':{'name':'n','labels':{'example.com/tier':'large'}},"
                           "'status':{'allocatable':{'cpu':'8','memory':'32Gi'}}}");
    ks_node *big2 = th_node("{'metadata':{'name':'n','labels':{'example.com/tier':'large','x':"
                            "'y'}},'status':{'allocatable':{'cpu':'8','memory':'32Gi'}}}");
    ks_pod *p = th_pod(pod);
    ks_event_info add_big = {.event = {KS_RES_NODE, KS_ACT_ADD}, .new_node = big};
    ks_event_info add_small = {.event = {KS_RES_NODE, KS_ACT_ADD}, .new_node = small};
    ks_event_info grew = {
        .event = {KS_RES_NODE, KS_ACT_UPDATE_NODE_ALLOCATABLE}, .old_node = small, .new_node = big};
    ks_event_info relabel = {
        .event = {KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL}, .old_node = big, .new_node = big2};
    cr_expect_eq(ev[0].hint(self, p, &add_big), KS_QUEUE);
    cr_expect_eq(ev[0].hint(self, p, &add_small), KS_QUEUE_SKIP);
    cr_expect_eq(ev[0].hint(self, p, &grew), KS_QUEUE);
    cr_expect_eq(ev[0].hint(self, p, &relabel), KS_QUEUE_SKIP, "it qualified before already");
    desc->destroy(self);
    cJSON_Delete(json);
}
