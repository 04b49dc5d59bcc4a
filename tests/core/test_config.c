/*
 * KubeSchedulerConfiguration (core/config*.c): upstream defaults of every field, profiles,
 * mergePluginSet (multiPoint, enabled/disabled, "*", weight overrides), plugin args defaulting
 * and validation, kubeschedPluginPath, every refusal with its message, the NewFramework plan
 * against a registry, and validate-config's output.
 *
 * Plan tests register fake descriptors with names of their own (Fake*) and disable the in-tree
 * plugins in the config, so they do not depend on the in-tree plugins' slots.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/registry.h"
#include "harness.h"

/* The registry every load sees: the in-tree module, registered before the file is read as main.c
 * does (its plugins' args schemas and rules apply while the file loads). One per test process. */
static ks_registry *cfg_registry(void)
{
    static ks_registry *reg;
    if (!reg)
        reg = th_registry_new();
    return reg;
}

#define HDR "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static ks_config *load_ok(const char *yaml)
{
    char err[2048] = "";
    ks_config *cfg = NULL;
    int rc = ks__config_load_string(cfg_registry(), yaml, "cfg.yaml", &cfg, err, sizeof(err));
    cr_assert_eq(rc, 0, "load failed (%d): %s", rc, err);
    cr_assert_not_null(cfg);
    return cfg;
}

/* Loads yaml expecting a failure; returns the message (static buffer). */
static const char *load_err(const char *yaml)
{
    static char err[2048];
    ks_config *cfg = (ks_config *)1;
    int rc = ks__config_load_string(cfg_registry(), yaml, "cfg.yaml", &cfg, err, sizeof(err));
    cr_assert_lt(rc, 0, "expected a failure, got rc %d", rc);
    cr_assert_null(cfg);
    cr_assert_neq(err[0], '\0');
    return err;
}

#define assert_has(msg, sub)                                                                       \
    cr_assert(strstr((msg), (sub)) != NULL, "message lacks [%s]:\n%s", (sub), (msg))

static void expect_error(const char *yaml, const char *sub1, const char *sub2)
{
    const char *msg = load_err(yaml);
    assert_has(msg, sub1);
    if (sub2)
        assert_has(msg, sub2);
}

static const ks_plugin_config *pc_find(const ks_profile_config *p, const char *name)
{
    for (size_t i = 0; i < p->nplugin_configs; i++)
        if (strcmp(p->plugin_configs[i].name, name) == 0)
            return &p->plugin_configs[i];
    return NULL;
}

static char *json(const cJSON *v)
{
    static char buf[4096];
    char *s = cJSON_PrintUnformatted(v);
    snprintf(buf, sizeof(buf), "%s", s ? s : "(null)");
    free(s);
    return buf;
}

/* ---------------------------------------------------------------------------------------------
 * Defaults
 * ------------------------------------------------------------------------------------------- */

static void assert_global_defaults(const ks_config *c)
{
    cr_assert_eq(c->parallelism, 16);
    cr_assert_eq(c->percentage_of_nodes_to_score, 0);
    cr_assert_eq(c->pod_initial_backoff_seconds, 1);
    cr_assert_eq(c->pod_max_backoff_seconds, 10);
    cr_assert_eq(c->enable_profiling, 1);
    cr_assert_eq(c->enable_contention_profiling, 1);
    cr_assert_eq(c->delay_cache_until_active, 0);
    cr_assert_eq(c->leader_election.leader_elect, 1);
    cr_assert_eq(c->leader_election.lease_duration_ms, 15000);
    cr_assert_eq(c->leader_election.renew_deadline_ms, 10000);
    cr_assert_eq(c->leader_election.retry_period_ms, 2000);
    cr_assert_str_eq(c->leader_election.resource_lock, "leases");
    cr_assert_str_eq(c->leader_election.resource_name, "kube-scheduler");
    cr_assert_str_eq(c->leader_election.resource_namespace, "kube-system");
    cr_assert_str_eq(c->client_connection.content_type, "application/vnd.kubernetes.protobuf");
    cr_assert_eq(c->client_connection.qps, 50.0);
    cr_assert_eq(c->client_connection.burst, 100);
    cr_assert_null(c->client_connection.kubeconfig);
    cr_assert_eq(c->nprofiles, 1);
    cr_assert_str_eq(c->profiles[0].scheduler_name, "default-scheduler");
    cr_assert_eq(c->profiles[0].percentage_of_nodes_to_score, -1);
}

Test(config, minimal_config_gets_upstream_defaults_for_every_field)
{
    ks_config *c = load_ok(HDR);
    assert_global_defaults(c);
    cr_assert_str_eq(c->path, "cfg.yaml");
    cr_assert_str_eq(c->dir, ".");
    ks__config_free(c);
}

Test(config, default_config_is_the_minimal_one)
{
    char err[512];
    ks_config *c = NULL;
    cr_assert_eq(ks__config_default(cfg_registry(), &c, err, sizeof(err)), 0, "%s", err);
    assert_global_defaults(c);
    cr_assert_eq(c->profiles[0].plugins[KS_PT_MULTI].nenabled, 20);
    ks__config_free(c);
}

Test(config, free_null_is_a_noop)
{
    ks__config_free(NULL);
    ks__config_plans_free(NULL, 3);
}

/* v1.37 getDefaultPlugins: NodeName now comes before NodeUnschedulable. */
Test(config, default_plugin_set_is_v1_37_multipoint_in_order)
{
    static const struct {
        const char *name;
        int weight;
    } want[] = {{"SchedulingGates", 0},
                {"PrioritySort", 0},
                {"NodeName", 0},
                {"NodeUnschedulable", 0},
                {"TaintToleration", 3},
                {"NodeAffinity", 2},
                {"NodePorts", 0},
                {"NodeResourcesFit", 1},
                {"VolumeRestrictions", 0},
                {"NodeVolumeLimits", 0},
                {"VolumeBinding", 0},
                {"VolumeZone", 0},
                {"PodTopologySpread", 2},
                {"InterPodAffinity", 2},
                {"DynamicResources", 2}, /* a Score plugin since DRAPrioritizedList is GA */
                {"DefaultPreemption", 0},
                {"NodeResourcesBalancedAllocation", 1},
                {"ImageLocality", 1},
                {"DefaultBinder", 0},
                /* applyFeatureGates: NodeDeclaredFeatures is GA (locked on) in v1.37. */
                {"NodeDeclaredFeatures", 0}};
    ks_config *c = load_ok(HDR);
    const ks_plugin_set *mp = &c->profiles[0].plugins[KS_PT_MULTI];
    cr_assert_eq(mp->nenabled, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < mp->nenabled; i++) {
        cr_assert_str_eq(mp->enabled[i].name, want[i].name);
        cr_assert_eq(mp->enabled[i].weight, want[i].weight, "%s", want[i].name);
        cr_assert_eq(mp->enabled[i].from_default, 1);
    }
    cr_assert_eq(mp->ndisabled, 0);
    for (int p = 0; p < KS_PT_NSETS; p++)
        if (p != KS_PT_MULTI)
            cr_assert_eq(c->profiles[0].plugins[p].nenabled, 0, "%s", ks__point_field((ks_point)p));
    ks__config_free(c);
}

Test(config, default_plugin_args_are_added_sorted_for_enabled_kinds)
{
    static const char *const want[] = {"DefaultPreemption",
                                       "DynamicResources",
                                       "InterPodAffinity",
                                       "NodeAffinity",
                                       "NodeResourcesBalancedAllocation",
                                       "NodeResourcesFit",
                                       "PodTopologySpread",
                                       "VolumeBinding"};
    ks_config *c = load_ok(HDR);
    const ks_profile_config *p = &c->profiles[0];
    cr_assert_eq(p->nplugin_configs, 8);
    for (size_t i = 0; i < 8; i++) {
        cr_assert_str_eq(p->plugin_configs[i].name, want[i]);
        cr_assert_null(p->plugin_configs[i].so_path);
    }
    cr_assert_str_eq(json(pc_find(p, "NodeResourcesFit")->args),
                     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":"
                     "\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}}");
    cr_assert_str_eq(json(pc_find(p, "DefaultPreemption")->args),
                     "{\"minCandidateNodesPercentage\":10,\"minCandidateNodesAbsolute\":100}");
    cr_assert_str_eq(json(pc_find(p, "InterPodAffinity")->args),
                     "{\"hardPodAffinityWeight\":1,\"ignorePreferredTermsOfExistingPods\":false}");
    cr_assert_str_eq(json(pc_find(p, "NodeResourcesBalancedAllocation")->args),
                     "{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\","
                     "\"weight\":1}]}");
    cr_assert_str_eq(json(pc_find(p, "PodTopologySpread")->args),
                     "{\"defaultingType\":\"System\"}");
    cr_assert_str_eq(json(pc_find(p, "NodeAffinity")->args), "{}");
    /* v1.37: StorageCapacityScoring (Beta, on) defaults the shape; DRADeviceBindingConditions
     * (Beta, on) and DRAResourceClaimDeviceStatus (GA) default bindingTimeout to 600s. */
    cr_assert_str_eq(json(pc_find(p, "VolumeBinding")->args),
                     "{\"bindTimeoutSeconds\":600,\"shape\":[{\"utilization\":0,\"score\":10},"
                     "{\"utilization\":100,\"score\":0}]}");
    cr_assert_str_eq(json(pc_find(p, "DynamicResources")->args),
                     "{\"filterTimeout\":\"10s\",\"bindingTimeout\":\"10m0s\"}");
    cr_assert_str_eq(pc_find(p, "VolumeBinding")->field, "profiles[0].pluginConfig[7]");
    ks__config_free(c);
}

Test(config, explicit_global_values_are_kept)
{
    ks_config *c = load_ok(HDR "parallelism: 32\n"
                               "percentageOfNodesToScore: 50\n"
                               "podInitialBackoffSeconds: 2\n"
                               "podMaxBackoffSeconds: 20\n"
                               "enableProfiling: false\n"
                               "delayCacheUntilActive: true\n"
                               "leaderElection:\n"
                               "  leaderElect: false\n"
                               "  leaseDuration: 1m30s\n"
                               "  renewDeadline: 1.5s\n"
                               "  retryPeriod: 100ms\n"
                               "  resourceLock: endpointsleases\n"
                               "  resourceName: my-sched\n"
                               "  resourceNamespace: sched\n"
                               "clientConnection:\n"
                               "  kubeconfig: /etc/kube/config\n"
                               "  acceptContentTypes: application/json\n"
                               "  contentType: application/json\n"
                               "  qps: 12.5\n"
                               "  burst: 7\n");
    cr_assert_eq(c->parallelism, 32);
    cr_assert_eq(c->percentage_of_nodes_to_score, 50);
    cr_assert_eq(c->pod_initial_backoff_seconds, 2);
    cr_assert_eq(c->pod_max_backoff_seconds, 20);
    cr_assert_eq(c->enable_profiling, 0);
    cr_assert_eq(c->enable_contention_profiling, 0, "contention follows profiling when unset");
    cr_assert_eq(c->delay_cache_until_active, 1);
    cr_assert_eq(c->leader_election.leader_elect, 0);
    cr_assert_eq(c->leader_election.lease_duration_ms, 90000);
    cr_assert_eq(c->leader_election.renew_deadline_ms, 1500);
    cr_assert_eq(c->leader_election.retry_period_ms, 100);
    cr_assert_str_eq(c->leader_election.resource_lock, "endpointsleases");
    cr_assert_str_eq(c->leader_election.resource_name, "my-sched");
    cr_assert_str_eq(c->leader_election.resource_namespace, "sched");
    cr_assert_str_eq(c->client_connection.kubeconfig, "/etc/kube/config");
    cr_assert_str_eq(c->client_connection.accept_content_types, "application/json");
    cr_assert_str_eq(c->client_connection.content_type, "application/json");
    cr_assert_eq(c->client_connection.qps, 12.5);
    cr_assert_eq(c->client_connection.burst, 7);
    ks__config_free(c);
}

Test(config, contention_profiling_can_be_set_without_profiling)
{
    ks_config *c = load_ok(HDR "enableProfiling: false\nenableContentionProfiling: true\n");
    cr_assert_eq(c->enable_profiling, 0);
    cr_assert_eq(c->enable_contention_profiling, 1);
    ks__config_free(c);
}

Test(config, zero_durations_and_rates_take_the_defaults)
{
    ks_config *c = load_ok(HDR "leaderElection:\n  leaseDuration: 0s\n  retryPeriod: \"0\"\n"
                               "clientConnection:\n  qps: 0\n  burst: 0\n");
    cr_assert_eq(c->leader_election.lease_duration_ms, 15000);
    cr_assert_eq(c->leader_election.retry_period_ms, 2000);
    cr_assert_eq(c->client_connection.qps, 50.0);
    cr_assert_eq(c->client_connection.burst, 100);
    ks__config_free(c);
}

Test(config, plain_scalars_resolve_as_yaml_1_1)
{
    ks_config *c = load_ok(HDR "parallelism: 0x10\n"
                               "podMaxBackoffSeconds: 1_000\n"
                               "percentageOfNodesToScore: 010\n"
                               "enableProfiling: off\n"
                               "leaderElection: {leaderElect: no}\n"
                               "delayCacheUntilActive: Yes\n"
                               "podInitialBackoffSeconds: ~\n");
    cr_assert_eq(c->parallelism, 16);
    cr_assert_eq(c->pod_max_backoff_seconds, 1000);
    cr_assert_eq(c->percentage_of_nodes_to_score, 8, "a leading 0 is octal in YAML 1.1");
    cr_assert_eq(c->enable_profiling, 0);
    cr_assert_eq(c->leader_election.leader_elect, 0);
    cr_assert_eq(c->delay_cache_until_active, 1);
    cr_assert_eq(c->pod_initial_backoff_seconds, 1, "null leaves the default");
    ks__config_free(c);
}

/* ---------------------------------------------------------------------------------------------
 * Profiles
 * ------------------------------------------------------------------------------------------- */

Test(config, empty_profile_list_gets_the_default_profile)
{
    ks_config *c = load_ok(HDR "profiles: []\n");
    cr_assert_eq(c->nprofiles, 1);
    cr_assert_str_eq(c->profiles[0].scheduler_name, "default-scheduler");
    ks__config_free(c);
}

Test(config, single_unnamed_profile_is_default_scheduler)
{
    ks_config *c = load_ok(HDR "profiles:\n- percentageOfNodesToScore: 30\n");
    cr_assert_eq(c->nprofiles, 1);
    cr_assert_str_eq(c->profiles[0].scheduler_name, "default-scheduler");
    cr_assert_eq(c->profiles[0].percentage_of_nodes_to_score, 30);
    ks__config_free(c);
}

Test(config, several_profiles_are_each_defaulted)
{
    ks_config *c = load_ok(HDR "profiles:\n"
                               "- schedulerName: default-scheduler\n"
                               "- schedulerName: no-scoring\n"
                               "  plugins:\n"
                               "    preScore:\n      disabled: [{name: '*'}]\n"
                               "    score:\n      disabled: [{name: '*'}]\n");
    cr_assert_eq(c->nprofiles, 2);
    cr_assert_str_eq(c->profiles[0].scheduler_name, "default-scheduler");
    cr_assert_str_eq(c->profiles[1].scheduler_name, "no-scoring");
    cr_assert_eq(c->profiles[1].plugins[KS_PT_MULTI].nenabled, 20);
    cr_assert_eq(c->profiles[1].plugins[KS_PT_SCORE].ndisabled, 1);
    cr_assert_str_eq(c->profiles[1].plugins[KS_PT_SCORE].disabled[0], "*");
    cr_assert_eq(c->profiles[0].nplugin_configs, 8);
    cr_assert_eq(c->profiles[1].nplugin_configs, 8);
    ks__config_free(c);
}

/* ---------------------------------------------------------------------------------------------
 * mergePluginSet
 * ------------------------------------------------------------------------------------------- */

Test(config, user_multipoint_plugins_come_after_the_defaults)
{
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                               "      - name: MyPlugin\n        weight: 4\n");
    const ks_plugin_set *mp = &c->profiles[0].plugins[KS_PT_MULTI];
    cr_assert_eq(mp->nenabled, 21);
    cr_assert_str_eq(mp->enabled[20].name, "MyPlugin");
    cr_assert_eq(mp->enabled[20].weight, 4);
    cr_assert_eq(mp->enabled[20].from_default, 0);
    ks__config_free(c);
}

Test(config, user_entry_replaces_a_default_in_place_with_its_weight)
{
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                               "      - {name: TaintToleration, weight: 7}\n");
    const ks_plugin_set *mp = &c->profiles[0].plugins[KS_PT_MULTI];
    cr_assert_eq(mp->nenabled, 20);
    cr_assert_str_eq(mp->enabled[4].name, "TaintToleration");
    cr_assert_eq(mp->enabled[4].weight, 7);
    cr_assert_eq(mp->enabled[4].from_default, 0);
    cr_assert_eq(mp->enabled[3].from_default, 1);
    ks__config_free(c);
}

Test(config, disabled_defaults_are_dropped_and_kept_in_disabled)
{
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n    multiPoint:\n"
                               "      disabled: [{name: ImageLocality}, {name: NodePorts}]\n");
    const ks_plugin_set *mp = &c->profiles[0].plugins[KS_PT_MULTI];
    cr_assert_eq(mp->nenabled, 18);
    for (size_t i = 0; i < mp->nenabled; i++) {
        cr_assert_str_neq(mp->enabled[i].name, "ImageLocality");
        cr_assert_str_neq(mp->enabled[i].name, "NodePorts");
    }
    cr_assert_eq(mp->ndisabled, 2);
    cr_assert_str_eq(mp->disabled[0], "ImageLocality");
    ks__config_free(c);
}

Test(config, star_disables_every_default_but_keeps_user_enabled)
{
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n    multiPoint:\n"
                               "      enabled: [{name: PrioritySort}, {name: Mine, weight: 2}]\n"
                               "      disabled: [{name: '*'}]\n");
    const ks_plugin_set *mp = &c->profiles[0].plugins[KS_PT_MULTI];
    cr_assert_eq(mp->nenabled, 2);
    cr_assert_str_eq(mp->enabled[0].name, "PrioritySort");
    cr_assert_eq(mp->enabled[0].from_default, 0);
    cr_assert_str_eq(mp->enabled[1].name, "Mine");
    cr_assert_eq(mp->enabled[1].weight, 2);
    cr_assert_eq(mp->ndisabled, 1);
    /* Default args only for enabled plugins with a kind: none here. */
    cr_assert_eq(c->profiles[0].nplugin_configs, 0);
    ks__config_free(c);
}

Test(config, point_specific_sets_merge_with_empty_defaults)
{
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n"
                               "    score:\n"
                               "      enabled: [{name: ImageLocality, weight: 5}]\n"
                               "      disabled: [{name: NodeResourcesFit}]\n");
    const ks_plugin_set *s = &c->profiles[0].plugins[KS_PT_SCORE];
    cr_assert_eq(s->nenabled, 1);
    cr_assert_str_eq(s->enabled[0].name, "ImageLocality");
    cr_assert_eq(s->enabled[0].weight, 5);
    cr_assert_eq(s->ndisabled, 1);
    cr_assert_str_eq(s->disabled[0], "NodeResourcesFit");
    cr_assert_eq(c->profiles[0].plugins[KS_PT_MULTI].nenabled, 20);
    ks__config_free(c);
}

/* ---------------------------------------------------------------------------------------------
 * pluginConfig
 * ------------------------------------------------------------------------------------------- */

Test(config, user_args_are_defaulted_in_place_and_come_first)
{
    ks_config *c = load_ok(HDR "profiles:\n- pluginConfig:\n"
                               "  - name: NodeResourcesFit\n"
                               "    args:\n"
                               "      scoringStrategy:\n"
                               "        type: MostAllocated\n"
                               "        resources:\n"
                               "        - {name: cpu, weight: 0}\n"
                               "        - {name: nvidia.com/gpu, weight: 5}\n");
    const ks_profile_config *p = &c->profiles[0];
    cr_assert_str_eq(p->plugin_configs[0].name, "NodeResourcesFit");
    cr_assert_str_eq(p->plugin_configs[0].field, "profiles[0].pluginConfig[0]");
    cr_assert_str_eq(json(p->plugin_configs[0].args),
                     "{\"scoringStrategy\":{\"type\":\"MostAllocated\",\"resources\":[{\"name\":"
                     "\"cpu\",\"weight\":1},{\"name\":\"nvidia.com/gpu\",\"weight\":5}]}}");
    cr_assert_eq(p->nplugin_configs, 8, "no second NodeResourcesFit entry from the defaults");
    ks__config_free(c);
}

Test(config, missing_fields_of_known_args_are_filled)
{
    ks_config *c = load_ok(HDR "profiles:\n- pluginConfig:\n"
                               "  - name: DefaultPreemption\n"
                               "    args: {minCandidateNodesPercentage: 20}\n"
                               "  - name: NodeResourcesFit\n"
                               "    args:\n"
                               "      apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "      kind: NodeResourcesFitArgs\n"
                               "      scoringStrategy: {type: LeastAllocated}\n"
                               "  - name: PodTopologySpread\n"
                               "    args: {defaultingType: ~}\n");
    const ks_profile_config *p = &c->profiles[0];
    cr_assert_str_eq(json(pc_find(p, "DefaultPreemption")->args),
                     "{\"minCandidateNodesPercentage\":20,\"minCandidateNodesAbsolute\":100}");
    cr_assert_str_eq(json(pc_find(p, "NodeResourcesFit")->args),
                     "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
                     "\"NodeResourcesFitArgs\",\"scoringStrategy\":{\"type\":\"LeastAllocated\","
                     "\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\","
                     "\"weight\":1}]}}");
    cr_assert_str_eq(json(pc_find(p, "PodTopologySpread")->args),
                     "{\"defaultingType\":\"System\"}");
    ks__config_free(c);
}

/* SetDefaults_* that are not "if unset": an unset or zero weight is 1, an empty resource list is
 * the cpu/memory default, an empty defaultingType is System (each plugin's args schema). */
Test(config, zero_values_of_known_args_get_their_defaults)
{
    ks_config *c = load_ok(HDR "profiles:\n- pluginConfig:\n"
                               "  - name: NodeResourcesBalancedAllocation\n"
                               "    args: {resources: [{name: cpu, weight: 0}, {name: memory}]}\n"
                               "  - name: NodeResourcesFit\n"
                               "    args: {scoringStrategy: {type: MostAllocated, resources: []}}\n"
                               "  - name: PodTopologySpread\n"
                               "    args: {defaultingType: \"\"}\n");
    const ks_profile_config *p = &c->profiles[0];
    cr_assert_str_eq(json(pc_find(p, "NodeResourcesBalancedAllocation")->args),
                     "{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\","
                     "\"weight\":1}]}");
    cr_assert_str_eq(json(pc_find(p, "NodeResourcesFit")->args),
                     "{\"scoringStrategy\":{\"type\":\"MostAllocated\",\"resources\":[{\"name\":"
                     "\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}}");
    cr_assert_str_eq(json(pc_find(p, "PodTopologySpread")->args),
                     "{\"defaultingType\":\"System\"}");
    ks__config_free(c);
}

/* ValidateNodeAffinityArgs: each rule of a required term's requirements, with its field path. */
Test(config, node_affinity_args_requirements_are_validated)
{
    static const struct {
        const char *term, *msg;
    } cases[] = {
        {"matchFields: [{key: spec.x, operator: In, values: [a]}]",
         "matchFields[0].key: Invalid value: \"spec.x\": not a valid field selector key (valid: "
         "metadata.name)"},
        {"matchFields: [{key: metadata.name, operator: Exists}]",
         "matchFields[0].operator: Unsupported value: \"Exists\": supported values: \"In\", "
         "\"NotIn\""},
        {"matchFields: [{key: metadata.name, operator: In, values: [a, b]}]",
         "matchFields[0].values: Required value: must be only one value when `operator` is 'In' "
         "or 'NotIn' for node field selector"},
        {"matchExpressions: [{operator: Exists}]", "matchExpressions[0].key: Required value"},
        {"matchExpressions: [{key: \"a b\", operator: Exists}]",
         "matchExpressions[0].key: Invalid value: \"a b\": name part must consist of"},
        {"matchExpressions: [{key: a, operator: In}]",
         "matchExpressions[0].values: Required value: for 'in', 'notin' operators, values set "
         "can't be empty"},
        {"matchExpressions: [{key: a, operator: Exists, values: [x]}]",
         "matchExpressions[0].values: Forbidden: values set must be empty for exists and does not "
         "exist"},
        {"matchExpressions: [{key: a, operator: Gt, values: []}]",
         "matchExpressions[0].values: Required value: for 'Gt', 'Lt' operators, exactly one value "
         "is required"},
        {"matchExpressions: [{key: a, operator: Lt, values: [x]}]",
         "matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the "
         "value must be an integer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 HDR "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                     "      addedAffinity:\n"
                     "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "          nodeSelectorTerms:\n"
                     "          - {matchExpressions: [{key: ok, operator: Exists}]}\n"
                     "          - {%s}\n",
                 cases[i].term);
        expect_error(yaml,
                     "profiles[0].pluginConfig[0].args.addedAffinity."
                     "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].",
                     cases[i].msg);
        snprintf(yaml, sizeof(yaml),
                 HDR "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                     "      addedAffinity:\n"
                     "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                     "        - {weight: 3, preference: {%s}}\n",
                 cases[i].term);
        expect_error(yaml,
                     "profiles[0].pluginConfig[0].args.addedAffinity."
                     "preferredDuringSchedulingIgnoredDuringExecution[0].preference.",
                     cases[i].msg);
    }
    ks__config_free(load_ok(HDR "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                                "      addedAffinity:\n"
                                "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                                "        - {weight: 3, preference: {matchExpressions: [{key: a, "
                                "operator: Gt, values: [\"5\"]}], matchFields: [{key: "
                                "metadata.name, operator: NotIn, values: [node1]}]}}\n"));
}

Test(config, out_of_tree_args_convert_like_sigs_yaml)
{
    ks_config *c = load_ok(HDR "profiles:\n- pluginConfig:\n"
                               "  - name: MyPlugin\n"
                               "    args:\n"
                               "      quoted: \"5\"\n"
                               "      number: 5\n"
                               "      float: 1.5\n"
                               "      yes: yes\n"
                               "      nothing: ~\n"
                               "      hex: 0x1F\n"
                               "      text: hello world\n"
                               "      list: [a, 2, false]\n"
                               "      nested: {k: 'v'}\n");
    const ks_plugin_config *pc = pc_find(&c->profiles[0], "MyPlugin");
    cr_assert_not_null(pc);
    cr_assert_str_eq(json(pc->args),
                     "{\"quoted\":\"5\",\"number\":5,\"float\":1.5,\"yes\":true,\"nothing\":null,"
                     "\"hex\":31,\"text\":\"hello world\",\"list\":[\"a\",2,false],\"nested\":{"
                     "\"k\":\"v\"}}");
    cr_assert_null(pc->so_path);
    ks__config_free(c);
}

Test(config, plugin_config_without_args_gets_an_empty_object)
{
    ks_config *c = load_ok(HDR "profiles:\n- pluginConfig:\n  - name: MyPlugin\n");
    cr_assert_str_eq(json(pc_find(&c->profiles[0], "MyPlugin")->args), "{}");
    ks__config_free(c);
}

static const char *PLUGIN_PATH_CFG = HDR "profiles:\n- pluginConfig:\n"
                                         "  - name: MyPlugin\n"
                                         "    args:\n"
                                         "      kubeschedPluginPath: plugins/libmy.so\n"
                                         "      threshold: 3\n"
                                         "  - name: Abs\n"
                                         "    args: {kubeschedPluginPath: /opt/ks/libabs.so}\n";

Test(config, plugin_path_resolves_against_the_config_directory)
{
    char err[1024];
    ks_config *c = NULL;
    int rc = ks__config_load_string(cfg_registry(), PLUGIN_PATH_CFG, "/etc/kubesched/cfg.yaml", &c,
                                    err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(c->dir, "/etc/kubesched");
    cr_assert_str_eq(pc_find(&c->profiles[0], "MyPlugin")->so_path,
                     "/etc/kubesched/plugins/libmy.so");
    cr_assert_str_eq(pc_find(&c->profiles[0], "Abs")->so_path, "/opt/ks/libabs.so");
    /* The key stays in the args the plugin sees. */
    cr_assert_str_eq(json(pc_find(&c->profiles[0], "MyPlugin")->args),
                     "{\"kubeschedPluginPath\":\"plugins/libmy.so\",\"threshold\":3}");
    ks__config_free(c);
}

Test(config, plugin_path_of_a_string_without_directory_is_dot_relative)
{
    ks_config *c = load_ok(PLUGIN_PATH_CFG);
    cr_assert_str_eq(pc_find(&c->profiles[0], "MyPlugin")->so_path, "./plugins/libmy.so");
    ks__config_free(c);
}

Test(config, plugin_path_from_a_file_uses_the_file_directory)
{
    char err[1024];
    ks_config *c = NULL;
    const char *path = KS_SOURCE_DIR "/tests/fixtures/config/out_of_tree.yaml";
    int rc = ks__config_load_file(cfg_registry(), path, &c, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(c->path, path);
    cr_assert_eq(c->nprofiles, 2);
    cr_assert_str_eq(pc_find(&c->profiles[1], "SampleFilter")->so_path,
                     KS_SOURCE_DIR "/tests/fixtures/config/../../../examples/libsample.so");
    ks__config_free(c);
}

Test(config, missing_file_is_an_io_error)
{
    char err[1024];
    ks_config *c = (ks_config *)1;
    int rc =
        ks__config_load_file(cfg_registry(), "/nonexistent/kubesched.yaml", &c, err, sizeof(err));
    cr_assert_eq(rc, KS_EIO);
    cr_assert_null(c);
    assert_has(err, "/nonexistent/kubesched.yaml: cannot open the configuration");
}

/* ---------------------------------------------------------------------------------------------
 * Refusals: syntax, unknown fields, types
 * ------------------------------------------------------------------------------------------- */

Test(config, yaml_syntax_error_names_file_line_and_column)
{
    expect_error(HDR "profiles:\n  - schedulerName: [a\n", "cfg.yaml:", "YAML syntax error");
    expect_error(HDR "parallelism: 1\n  bad: indent\n", "cfg.yaml:4:", "YAML syntax error");
}

Test(config, unknown_top_level_field_lists_the_valid_ones)
{
    expect_error(HDR "paralelism: 4\n", "cfg.yaml:3:1: unknown field \"paralelism\"",
                 "(valid: apiVersion, kind, parallelism, leaderElection");
}

Test(config, unknown_plugins_field_names_its_path_and_position)
{
    expect_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    filtr:\n      enabled: []\n",
                 "cfg.yaml:6:5: unknown field \"filtr\" in profiles[0].plugins",
                 "(valid: preEnqueue, queueSort, preFilter, filter,");
    expect_error(HDR "leaderElection: {leaderElection: true}\n",
                 "unknown field \"leaderElection\" in leaderElection",
                 "leaderElect, leaseDuration");
    expect_error(HDR "profiles:\n- plugins:\n    filter:\n      enabled: [{name: X, wieght: 1}]\n",
                 "unknown field \"wieght\" in profiles[0].plugins.filter.enabled[0]",
                 "(valid: name, weight)");
}

Test(config, duplicate_field_is_refused)
{
    expect_error(HDR "parallelism: 4\nparallelism: 5\n",
                 "cfg.yaml:4:1: duplicate field "
                 "\"parallelism\"",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: X\n    args: {a: 1, a: 2}\n",
                 "duplicate field \"a\"", NULL);
}

Test(config, wrong_types_say_what_was_expected)
{
    expect_error(HDR "parallelism: x\n",
                 "cfg.yaml:3:14: parallelism: expected an integer, got "
                 "string \"x\"",
                 NULL);
    expect_error(HDR "parallelism: \"16\"\n",
                 "parallelism: expected an integer, got string "
                 "\"16\"",
                 NULL);
    expect_error(HDR "parallelism: 1.5\n", "expected an integer, got number 1.5", NULL);
    expect_error(HDR "parallelism: 4294967296\n", "does not fit in a 32-bit integer", NULL);
    expect_error(HDR "enableProfiling: maybe\n", "enableProfiling: expected a boolean", NULL);
    expect_error(HDR "profiles:\n- schedulerName: 5\n",
                 "profiles[0].schedulerName: expected a string, got integer 5", NULL);
    expect_error(HDR "profiles: {a: 1}\n", "profiles: expected a list, got a mapping", NULL);
    expect_error(HDR "leaderElection: [1]\n", "leaderElection: expected a mapping, got a list",
                 NULL);
    expect_error(HDR "clientConnection: {qps: fast}\n", "clientConnection.qps: expected a number",
                 NULL);
}

Test(config, bad_durations_are_refused)
{
    expect_error(HDR "leaderElection: {leaseDuration: 15 seconds}\n",
                 "leaderElection.leaseDuration: invalid duration \"15 seconds\"", "\"1m30s\"");
    expect_error(HDR "leaderElection: {renewDeadline: 15}\n",
                 "leaderElection.renewDeadline: expected a duration string", "got integer 15");
}

Test(config, api_version_and_kind_are_checked_first)
{
    expect_error("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: "
                 "KubeSchedulerConfiguration\nbogus: 1\n",
                 "cfg.yaml:1:13: apiVersion: string \"kubescheduler.config.k8s.io/v1beta3\" is "
                 "not supported",
                 "expected \"kubescheduler.config.k8s.io/v1\"");
    expect_error("kind: KubeSchedulerConfiguration\n", "apiVersion is missing",
                 "expected \"apiVersion: kubescheduler.config.k8s.io/v1\"");
    expect_error("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n",
                 "kind: string \"Pod\" is not supported",
                 "expected \"KubeSchedulerConfiguration\"");
    expect_error("apiVersion: kubescheduler.config.k8s.io/v1\n", "kind is missing", NULL);
}

Test(config, empty_or_non_mapping_documents_are_refused)
{
    expect_error("", "cfg.yaml: the configuration is empty", "apiVersion");
    expect_error("# only a comment\n", "the configuration is empty", NULL);
    expect_error("- a\n- b\n", "expected a mapping, got a list", NULL);
    expect_error(HDR "---\n" HDR, "a second YAML document", NULL);
}

Test(config, plugin_entries_need_names)
{
    expect_error(HDR "profiles:\n- plugins:\n    filter:\n      enabled: [{weight: 2}]\n",
                 "profiles[0].plugins.filter.enabled[0].name: Required value", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - args: {a: 1}\n",
                 "profiles[0].pluginConfig[0].name: Required value", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: X\n    args: [1, 2]\n",
                 "profiles[0].pluginConfig[0].args: expected a mapping, got a list", NULL);
}

Test(config, alias_bombs_are_refused_without_blowing_up)
{
    const char *bomb = HDR "profiles:\n- pluginConfig:\n  - name: X\n    args:\n"
                           "      a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                           "      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                           "      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                           "      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                           "      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                           "      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                           "      g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    expect_error(bomb, "too many values", NULL);
}

/* ---------------------------------------------------------------------------------------------
 * Refusals: semantic validation (field paths, upstream messages)
 * ------------------------------------------------------------------------------------------- */

Test(config, parallelism_must_be_positive)
{
    expect_error(HDR "parallelism: 0\n",
                 "cfg.yaml: parallelism: Invalid value: 0: should be an integer value greater than "
                 "zero",
                 NULL);
    expect_error(HDR "parallelism: -3\n", "Invalid value: -3", NULL);
}

Test(config, percentage_must_be_within_0_and_100)
{
    expect_error(HDR "percentageOfNodesToScore: 101\n",
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]", NULL);
    expect_error(HDR "profiles:\n- percentageOfNodesToScore: -1\n",
                 "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range "
                 "[0-100]",
                 NULL);
}

Test(config, backoff_rules)
{
    expect_error(HDR "podInitialBackoffSeconds: 0\n",
                 "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0", NULL);
    expect_error(HDR "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
                 "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to "
                 "PodInitialBackoffSeconds",
                 NULL);
    expect_error(HDR "podInitialBackoffSeconds: 11\n", "podMaxBackoffSeconds: Invalid value: 10",
                 NULL);
}

Test(config, leader_election_rules)
{
    expect_error(HDR "leaderElection: {resourceLock: endpoints}\n",
                 "leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value "
                 "must be \"leases\"",
                 NULL);
    expect_error(HDR "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
                 "leaderElection.leaseDuration: Invalid value: \"10s\": LeaseDuration must be "
                 "greater than RenewDeadline",
                 NULL);
    expect_error(HDR "leaderElection: {retryPeriod: -1s}\n",
                 "leaderElection.retryPeriod: Invalid value: \"-1s\": must be greater than zero",
                 NULL);
}

Test(config, client_connection_burst_must_not_be_negative)
{
    expect_error(HDR "clientConnection: {burst: -1}\n",
                 "clientConnection.burst: Invalid value: -1: must be non-negative", NULL);
}

Test(config, scheduler_names_must_be_set_and_unique)
{
    expect_error(HDR "profiles:\n- schedulerName: a\n- schedulerName: a\n",
                 "cfg.yaml: profiles[1].schedulerName: Duplicate value: \"a\"", NULL);
    expect_error(HDR "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 5\n",
                 "profiles[1].schedulerName: Required value", NULL);
    expect_error(HDR "profiles:\n- schedulerName: ''\n",
                 "profiles[0].schedulerName: Required "
                 "value",
                 NULL);
}

Test(config, removed_plugins_are_refused)
{
    expect_error(HDR
                 "profiles:\n- plugins:\n    filter:\n      enabled: [{name: AzureDiskLimits}]\n",
                 "profiles[0].plugins.filter.enabled[0]: Invalid value: \"AzureDiskLimits\": was "
                 "invalid in version \"kubescheduler.config.k8s.io/v1\"",
                 NULL);
    expect_error(HDR "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: EBSLimits}]\n",
                 "profiles[0].plugins.multiPoint.enabled[0]: Invalid value: \"EBSLimits\"", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
                 "profiles[0].pluginConfig[0]: Invalid value: \"GCEPDLimits\": was invalid", NULL);
}

Test(config, negative_weights_are_refused)
{
    expect_error(HDR "profiles:\n- plugins:\n    score:\n      enabled: [{name: X, weight: -2}]\n",
                 "profiles[0].plugins.score.enabled[0].weight: Invalid value: -2: must not be "
                 "negative",
                 NULL);
}

Test(config, queue_sort_must_be_the_same_for_all_profiles)
{
    expect_error(
        HDR "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n"
            "    queueSort:\n      enabled: [{name: Other}]\n"
            "      disabled: [{name: '*'}]\n",
        "profiles[1].plugins.queueSort: Invalid value:", "must be the same for all profiles");
    expect_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n"
                     "      enabled: [{name: A}, {name: B}]\n",
                 "profiles[0].plugins.queueSort.enabled: Invalid value: 2: only one queue sort "
                 "plugin can be enabled",
                 NULL);
    expect_error(HDR "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n"
                     "      enabled: [{name: Q}]\n  pluginConfig: [{name: Q, args: {x: 1}}]\n"
                     "- schedulerName: b\n  plugins:\n    queueSort:\n"
                     "      enabled: [{name: Q}]\n  pluginConfig: [{name: Q, args: {x: 2}}]\n",
                 "profiles[1].pluginConfig[0].args: Invalid value:",
                 "queueSort must be the same for all profiles");
}

Test(config, duplicate_plugin_config_is_refused_with_its_path)
{
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
                     "  - name: NodeResourcesFit\n",
                 "cfg.yaml: profiles[0].pluginConfig[1]: Duplicate value: \"NodeResourcesFit\"",
                 NULL);
}

Test(config, extenders_are_validated_then_refused)
{
    expect_error(HDR "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: prio\n  weight: 0\n",
                 "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
                 NULL);
    expect_error(HDR "extenders:\n- {urlPrefix: http://a, bindVerb: bind}\n"
                     "- {urlPrefix: http://b, bindVerb: bind}\n",
                 "only one extender can implement bind", NULL);
    expect_error(HDR "extenders:\n- urlPrefix: http://a\n  managedResources:\n  - name: cpu\n",
                 "extenders[0].managedResources[0].name: Invalid value: \"cpu\": is an invalid "
                 "extended resource name",
                 NULL);
    expect_error(HDR "extenders:\n- urlPrefix: http://a\n  filtrVerb: f\n",
                 "unknown field \"filtrVerb\" in extenders[0]", "filterVerb");
    expect_error(HDR "extenders:\n- urlPrefix: http://a\n  filterVerb: filter\n"
                     "  httpTimeout: 30s\n  tlsConfig: {insecure: true}\n"
                     "  managedResources: [{name: example.com/foo, ignoredByScheduler: true}]\n",
                 "kubesched does not support scheduler extenders (1 configured)",
                 "kubeschedPluginPath");
}

Test(config, plugin_path_must_be_a_non_empty_string)
{
    expect_error(HDR
                 "profiles:\n- pluginConfig:\n  - name: X\n    args: {kubeschedPluginPath: 5}\n",
                 "profiles[0].pluginConfig[0].args.kubeschedPluginPath: expected a non-empty "
                 "string",
                 NULL);
    expect_error(HDR
                 "profiles:\n- pluginConfig:\n  - name: X\n    args: {kubeschedPluginPath: ''}\n",
                 "kubeschedPluginPath: expected a non-empty string", NULL);
}

/* ---------------------------------------------------------------------------------------------
 * Refusals: args of in-tree kinds
 * ------------------------------------------------------------------------------------------- */

#define FIT_ARGS(body)                                                                             \
    HDR "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n" body

Test(config, fit_resource_weight_must_be_within_0_and_100)
{
    expect_error(FIT_ARGS("      scoringStrategy:\n        type: LeastAllocated\n"
                          "        resources: [{name: cpu, weight: 101}]\n"),
                 "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid "
                 "value: 101: resource weight of cpu not in valid range (0, 100]",
                 NULL);
}

Test(config, fit_scoring_strategy_type_must_be_known)
{
    expect_error(FIT_ARGS("      scoringStrategy: {type: Bogus}\n"),
                 "args.scoringStrategy.type: Unsupported value: \"Bogus\": supported values: "
                 "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
                 NULL);
    /* A given scoringStrategy does not get a default type (upstream). */
    expect_error(FIT_ARGS("      scoringStrategy: {resources: [{name: cpu, weight: 1}]}\n"),
                 "Unsupported value: \"\"", NULL);
}

Test(config, fit_requested_to_capacity_ratio_shape_rules)
{
    expect_error(FIT_ARGS("      scoringStrategy: {type: RequestedToCapacityRatio}\n"),
                 "args.scoringStrategy.requestedToCapacityRatio: Required value: must be specified "
                 "when type is RequestedToCapacityRatio",
                 NULL);
    expect_error(FIT_ARGS("      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                          "        requestedToCapacityRatio: {shape: []}\n"),
                 "requestedToCapacityRatio.shape: Required value: at least one point must be "
                 "specified",
                 NULL);
    expect_error(FIT_ARGS("      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                          "        requestedToCapacityRatio:\n"
                          "          shape: [{utilization: 50, score: 1}, {utilization: 40, "
                          "score: 2}]\n"),
                 "requestedToCapacityRatio.shape[1].utilization: Invalid value: 40: values must "
                 "be sorted in increasing order",
                 NULL);
    expect_error(FIT_ARGS("      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                          "        requestedToCapacityRatio:\n"
                          "          shape: [{utilization: 0, score: 11}]\n"),
                 "shape[0].score: Invalid value: 11: not in valid range [0, 10]", NULL);
    expect_error(FIT_ARGS("      scoringStrategy:\n        type: MostAllocated\n"
                          "        requestedToCapacityRatio: {shape: [{utilization: 0}]}\n"),
                 "requestedToCapacityRatio: Forbidden: must be nil when type is not "
                 "RequestedToCapacityRatio",
                 NULL);
}

Test(config, rtcr_with_a_valid_shape_is_accepted)
{
    ks_config *c =
        load_ok(FIT_ARGS("      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                         "        requestedToCapacityRatio:\n"
                         "          shape: [{utilization: 0, score: 0}, {utilization: "
                         "100, score: 10}]\n"));
    ks__config_free(c);
}

Test(config, fit_ignored_resource_groups_cannot_contain_a_slash)
{
    expect_error(
        FIT_ARGS("      ignoredResourceGroups: [example.com/gpu]\n"),
        "args.ignoredResourceGroups[0]: Invalid value: \"example.com/gpu\": resource group "
        "name can't contain '/'",
        NULL);
}

Test(config, known_args_refuse_unknown_fields_and_wrong_types)
{
    expect_error(FIT_ARGS("      scoringStratgy: {}\n"),
                 "profiles[0].pluginConfig[0].args: unknown field \"scoringStratgy\"",
                 "(valid: ignoredResources, ignoredResourceGroups, scoringStrategy)");
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
                     "    args: {hardPodAffinityWeight: \"2\"}\n",
                 "args.hardPodAffinityWeight: expected an integer, got string \"2\"", NULL);
    expect_error(FIT_ARGS("      kind: InterPodAffinityArgs\n"),
                 "args for plugin NodeResourcesFit were not of type "
                 "kubescheduler.config.k8s.io/NodeResourcesFitArgs",
                 NULL);
}

Test(config, other_in_tree_args_are_validated)
{
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                     "    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}\n",
                 "args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
                 "time as minCandidateNodesAbsolute",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                     "    args: {minCandidateNodesPercentage: 101}\n",
                 "not in valid range [0, 100]", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
                     "    args: {hardPodAffinityWeight: 101}\n",
                 "args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n"
                     "    args:\n      defaultConstraints:\n"
                     "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
                     "ScheduleAnyway}\n",
                 "args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not "
                 "empty",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n"
                     "    args:\n      defaultingType: List\n      defaultConstraints:\n"
                     "      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
                     "ScheduleAnyway}\n",
                 "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n"
                     "    args: {defaultingType: Sometimes}\n",
                 "Unsupported value: \"Sometimes\": supported values: \"System\", \"List\"", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n"
                     "    args: {resources: [{name: cpu, weight: 2}]}\n",
                 "args.resources[0].weight: Invalid value: 2: must be 1", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
                     "    args: {bindTimeoutSeconds: -1}\n",
                 "should not be a negative value", NULL);
    expect_error(HDR
                 "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
                 "    args: {shape: [{utilization: 50, score: 1}, {utilization: 50, score: 2}]}\n",
                 "args.shape[1].utilization: Invalid value: 50: values must be sorted in "
                 "increasing order",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
                     "    args: {shape: [{utilization: 0, score: 10}, {utilization: 101}]}\n",
                 "args.shape[1].utilization: Invalid value: 101: not in valid range [0, 100]",
                 NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
                     "    args: {shape: [{utilization: 0, score: 11}]}\n",
                 "args.shape[0].score: Invalid value: 11: not in valid range [0, 10]", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
                     "    args: {bindingTimeout: 0.5s}\n",
                 "args.bindingTimeout: Invalid value: \"500ms\": must be at least 1 second", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n"
                     "    args:\n      addedAffinity:\n"
                     "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "          nodeSelectorTerms:\n"
                     "          - matchExpressions: [{key: zone, operator: Near, values: [a]}]\n",
                 "matchExpressions[0].operator: Unsupported value: \"Near\"", NULL);
    expect_error(HDR "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
                     "    args: {filterTimeout: -5s}\n",
                 "args.filterTimeout: Invalid value: \"-5s\": must be zero or positive", NULL);
}

/* ---------------------------------------------------------------------------------------------
 * The plan
 * ------------------------------------------------------------------------------------------- */

static int fake_less(void *s, const ks_queued_pod *a, const ks_queued_pod *b) { return 0; }
static ks_code fake_pre_filter(void *s, ks_cycle *c, const ks_pod *p, ks_prefilter_result *r,
                               ks_status *st)
{
    return KS_SUCCESS;
}
static ks_code fake_filter(void *s, ks_cycle *c, const ks_pod *p, const ks_node_info *n,
                           ks_status *st)
{
    return KS_SUCCESS;
}
static ks_code fake_pre_score(void *s, ks_cycle *c, const ks_pod *p, const ks_node_info *const *n,
                              size_t nn, ks_status *st)
{
    return KS_SUCCESS;
}
static ks_code fake_score(void *s, ks_cycle *c, const ks_pod *p, const ks_node_info *n,
                          int64_t *score, ks_status *st)
{
    return KS_SUCCESS;
}
static void fake_unreserve(void *s, ks_cycle *c, const ks_pod *p, ks_sym n) {}
static ks_code fake_permit(void *s, ks_cycle *c, const ks_pod *p, ks_sym n, int64_t *t,
                           ks_status *st)
{
    return KS_SUCCESS;
}
static ks_code fake_bind(void *s, ks_cycle *c, const ks_pod *p, ks_sym n, ks_status *st)
{
    return KS_SKIP;
}

static const ks_plugin_desc fake_sort = {
    .size = sizeof(ks_plugin_desc), .name = "FakeSort", .less = fake_less};
static const ks_plugin_desc fake_sort2 = {
    .size = sizeof(ks_plugin_desc), .name = "FakeSort2", .less = fake_less};
static const ks_plugin_desc fake_filter_d = {
    .size = sizeof(ks_plugin_desc), .name = "FakeFilter", .filter = fake_filter};
static const ks_plugin_desc fake_filter2 = {
    .size = sizeof(ks_plugin_desc), .name = "FakeFilter2", .filter = fake_filter};
static const ks_plugin_desc fake_score_d = {.size = sizeof(ks_plugin_desc),
                                            .name = "FakeScore",
                                            .pre_score = fake_pre_score,
                                            .score = fake_score};
static const ks_plugin_desc fake_multi = {.size = sizeof(ks_plugin_desc),
                                          .name = "FakeMulti",
                                          .pre_filter = fake_pre_filter,
                                          .filter = fake_filter,
                                          .score = fake_score,
                                          .unreserve = fake_unreserve,
                                          .permit = fake_permit};
static const ks_plugin_desc fake_bind_d = {
    .size = sizeof(ks_plugin_desc), .name = "FakeBind", .bind = fake_bind};

static ks_registry *fake_registry(void)
{
    static const ks_plugin_desc *const all[] = {&fake_sort,    &fake_sort2,   &fake_filter_d,
                                                &fake_filter2, &fake_score_d, &fake_multi,
                                                &fake_bind_d};
    char err[256];
    ks_registry *reg = th_registry_new();
    cr_assert_not_null(reg);
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        cr_assert_eq(ks__registry_add(reg, all[i], "test", err, sizeof(err)), 0, "%s", err);
    return reg;
}

/* A config whose one profile "p" keeps upstream's default multiPoint set (so the defaults that
 * kubesched does not ship are seen, and skipped) minus every in-tree plugin, plus FakeSort,
 * FakeBind and the fakes in EXTRA (", {name: FakeScore}"); REST follows the multiPoint set (more
 * plugin sets, pluginConfig, more profiles). The in-tree names come from the registry, so the plan
 * holds only the fakes whichever plugins kubesched ships. Returns a static buffer. */
static const char *fake_cfg(const char *extra, const char *rest)
{
    static char yaml[8192];
    ks_registry *reg = th_registry_new();
    size_t off = 0;
    int w;
    cr_assert_not_null(reg);
    w = snprintf(yaml, sizeof(yaml),
                 HDR "profiles:\n- schedulerName: p\n  plugins:\n    multiPoint:\n"
                     "      disabled: [");
    cr_assert(w > 0 && (size_t)w < sizeof(yaml));
    off = (size_t)w;
    for (size_t i = 0; i < ks__registry_count(reg); i++) {
        w = snprintf(yaml + off, sizeof(yaml) - off, "%s{name: %s}", i ? ", " : "",
                     ks__registry_at(reg, i)->name);
        cr_assert(w > 0 && (size_t)w < sizeof(yaml) - off, "the fake config is too long");
        off += (size_t)w;
    }
    w = snprintf(yaml + off, sizeof(yaml) - off,
                 "]\n      enabled: [{name: FakeSort}, {name: FakeBind}%s]\n%s", extra, rest);
    cr_assert(w > 0 && (size_t)w < sizeof(yaml) - off, "the fake config is too long");
    ks__registry_free(reg);
    return yaml;
}

/* What a plan that keeps the defaults lists as skipped: the registry's unavailable defaults, in
 * upstream's default order (the default profile's multiPoint list). Returns how many. */
static size_t expected_unavailable(const char **names, size_t cap)
{
    char err[1024];
    ks_config *def = NULL;
    const char *const *all;
    size_t nall = ks__registry_unavailable_defaults(&all), n = 0;
    const ks_plugin_set *mp;
    cr_assert_eq(ks__config_default(cfg_registry(), &def, err, sizeof(err)), 0, "%s", err);
    mp = &def->profiles[0].plugins[KS_PT_MULTI];
    for (size_t i = 0; i < mp->nenabled; i++)
        for (size_t j = 0; j < nall; j++)
            if (strcmp(mp->enabled[i].name, all[j]) == 0) {
                cr_assert_lt(n, cap);
                names[n++] = all[j];
            }
    cr_assert_eq(n, nall, "every unavailable plugin is one of upstream's defaults");
    ks__config_free(def);
    return n;
}

static void assert_unavailable(const ks_profile_plan *plan)
{
    const char *want[64];
    size_t n = expected_unavailable(want, sizeof(want) / sizeof(want[0]));
    cr_assert_eq(plan->nunavailable, n, "%zu unavailable defaults skipped, want %zu",
                 plan->nunavailable, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(plan->unavailable[i], want[i], "unavailable[%zu]", i);
}

static const char *plan_err(const char *yaml)
{
    static char err[2048];
    ks_config *c = load_ok(yaml);
    ks_registry *reg = fake_registry();
    ks_profile_plan *plans = (ks_profile_plan *)1;
    int rc = ks__config_plan(c, reg, &plans, err, sizeof(err));
    cr_assert_lt(rc, 0, "expected the plan to fail");
    cr_assert_null(plans);
    ks__registry_free(reg);
    ks__config_free(c);
    return err;
}

static void assert_point(const ks_profile_plan *plan, ks_point p, const char *const *names,
                         size_t n)
{
    cr_assert_eq(plan->npoint[p], n, "%s has %zu plugins", ks__point_name(p), plan->npoint[p]);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(plan->point[p][i].name, names[i], "%s[%zu]", ks__point_name(p), i);
}

Test(config, plan_desc_implements_follows_the_slots_and_the_size)
{
    ks_plugin_desc old = fake_multi;
    cr_assert(ks__desc_implements(&fake_multi, KS_PT_RESERVE), "unreserve alone counts");
    cr_assert(ks__desc_implements(&fake_multi, KS_PT_PRE_FILTER));
    cr_assert(ks__desc_implements(&fake_multi, KS_PT_PERMIT));
    cr_assert_not(ks__desc_implements(&fake_multi, KS_PT_BIND));
    cr_assert_not(ks__desc_implements(&fake_multi, KS_PT_PRE_SCORE));
    cr_assert_not(ks__desc_implements(NULL, KS_PT_FILTER));
    /* A descriptor from an older plugin ends before the permit slot. */
    old.size = (uint32_t)offsetof(ks_plugin_desc, permit);
    cr_assert_not(ks__desc_implements(&old, KS_PT_PERMIT));
    cr_assert(ks__desc_implements(&old, KS_PT_FILTER));
    cr_assert_str_eq(ks__point_field(KS_PT_PRE_BIND), "preBind");
    cr_assert_str_eq(ks__point_name(KS_PT_MULTI), "MultiPoint");
}

Test(config, plan_multipoint_expands_to_each_implemented_point)
{
    char err[1024];
    ks_config *c = load_ok(fake_cfg(", {name: FakeMulti}, {name: FakeScore, weight: 4}", ""));
    ks_registry *reg = fake_registry();
    ks_profile_plan *plans = NULL;
    int rc = ks__config_plan(c, reg, &plans, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    {
        const ks_profile_plan *p = &plans[0];
        const char *qs[] = {"FakeSort"}, *pf[] = {"FakeMulti"}, *f[] = {"FakeMulti"},
                   *ps[] = {"FakeScore"}, *s[] = {"FakeMulti", "FakeScore"}, *r[] = {"FakeMulti"},
                   *b[] = {"FakeBind"};
        cr_assert_eq(p->profile, &c->profiles[0]);
        assert_point(p, KS_PT_QUEUE_SORT, qs, 1);
        assert_point(p, KS_PT_PRE_FILTER, pf, 1);
        assert_point(p, KS_PT_FILTER, f, 1);
        assert_point(p, KS_PT_PRE_SCORE, ps, 1);
        assert_point(p, KS_PT_SCORE, s, 2);
        assert_point(p, KS_PT_RESERVE, r, 1);
        assert_point(p, KS_PT_PERMIT, r, 1);
        assert_point(p, KS_PT_BIND, b, 1);
        assert_point(p, KS_PT_PRE_ENQUEUE, NULL, 0);
        assert_point(p, KS_PT_POST_BIND, NULL, 0);
        cr_assert_eq(p->point[KS_PT_SCORE][0].weight, 1, "unset weight => 1");
        cr_assert_eq(p->point[KS_PT_SCORE][1].weight, 4);
        cr_assert_eq(p->point[KS_PT_SCORE][1].desc, &fake_score_d);
        /* Instances: every plugin once, in first-use order (call order of the points). */
        cr_assert_eq(p->ninstances, 4);
        cr_assert_str_eq(p->instances[0].name, "FakeSort");
        cr_assert_str_eq(p->instances[1].name, "FakeMulti");
        cr_assert_str_eq(p->instances[2].name, "FakeScore");
        cr_assert_str_eq(p->instances[3].name, "FakeBind");
        cr_assert_null(p->instances[0].args);
        /* The defaults kubesched does not ship are skipped silently and listed. */
        assert_unavailable(p);
    }
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
}

Test(config, plan_point_specific_entries_override_multipoint_and_keep_upstream_order)
{
    char err[1024];
    ks_config *c = load_ok(fake_cfg(", {name: FakeMulti}, {name: FakeFilter}",
                                    "    filter:\n"
                                    "      enabled: [{name: FakeFilter2}, {name: FakeMulti}]\n"
                                    "    score:\n"
                                    "      enabled: [{name: FakeMulti, weight: 9}]\n"
                                    "    permit:\n"
                                    "      disabled: [{name: FakeMulti}]\n"
                                    "    reserve:\n"
                                    "      disabled: [{name: '*'}]\n"));
    ks_registry *reg = fake_registry();
    ks_profile_plan *plans = NULL;
    int rc = ks__config_plan(c, reg, &plans, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    {
        /* overrides (point order), then multiPoint-only, then the rest of the point list. */
        const char *f[] = {"FakeMulti", "FakeFilter", "FakeFilter2"}, *s[] = {"FakeMulti"};
        assert_point(&plans[0], KS_PT_FILTER, f, 3);
        assert_point(&plans[0], KS_PT_SCORE, s, 1);
        cr_assert_eq(plans[0].point[KS_PT_SCORE][0].weight, 9, "score.enabled's weight wins");
        assert_point(&plans[0], KS_PT_PERMIT, NULL, 0);
        assert_point(&plans[0], KS_PT_RESERVE, NULL, 0);
    }
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
}

Test(config, plan_args_of_instances_come_from_plugin_config)
{
    char err[1024];
    ks_config *c = load_ok(fake_cfg(", {name: FakeFilter}",
                                    "  pluginConfig:\n"
                                    "  - name: FakeFilter\n"
                                    "    args: {kubeschedPluginPath: libfake.so, level: 2}\n"));
    ks_registry *reg = fake_registry();
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__config_plan(c, reg, &plans, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(plans[0].ninstances, 3);
    cr_assert_str_eq(plans[0].instances[1].name, "FakeFilter");
    cr_assert_str_eq(json(plans[0].instances[1].args),
                     "{\"kubeschedPluginPath\":\"libfake.so\",\"level\":2}");
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
}

Test(config, plan_unknown_plugins_do_not_exist)
{
    const char *msg = plan_err(fake_cfg("", "    filter:\n"
                                            "      enabled: [{name: Nope}]\n"));
    assert_has(msg, "cfg.yaml: profiles[0].plugins.filter: Filter \"Nope\" does not exist");
    assert_has(msg, "FakeFilter");
    msg = plan_err(fake_cfg(", {name: Nope}", ""));
    assert_has(msg, "profiles[0].plugins.multiPoint: MultiPoint \"Nope\" does not exist");
}

Test(config, plan_plugin_at_a_point_it_does_not_implement_is_refused)
{
    const char *msg = plan_err(fake_cfg("", "    filter:\n"
                                            "      enabled: [{name: FakeBind}]\n"));
    assert_has(msg,
               "profiles[0].plugins.filter: plugin \"FakeBind\" does not extend Filter plugin");
    assert_has(msg, "(it implements: Bind)");
}

Test(config, plan_duplicates_are_refused)
{
    const char *msg = plan_err(fake_cfg("", "    filter:\n"
                                            "      enabled: [{name: FakeFilter}, {name: "
                                            "FakeFilter}]\n"));
    assert_has(msg, "plugin \"FakeFilter\" already registered as \"Filter\"");
    msg = plan_err(fake_cfg(", {name: FakeScore}, {name: FakeScore}", ""));
    assert_has(msg, "profiles[0].plugins.multiPoint: plugin \"FakeScore\" already registered as "
                    "\"PreScore\"");
}

Test(config, plan_exactly_one_queue_sort_and_a_binder_are_required)
{
    const char *msg = plan_err(HDR "profiles:\n- schedulerName: p\n  plugins:\n    multiPoint:\n"
                                   "      disabled: [{name: '*'}]\n"
                                   "      enabled: [{name: FakeBind}]\n");
    assert_has(msg, "only one queue sort plugin required for profile with scheduler name \"p\", "
                    "but got 0");
    msg = plan_err(fake_cfg("", "    queueSort:\n"
                                "      enabled: [{name: FakeSort2}]\n"));
    assert_has(msg, "but got 2");
    msg = plan_err(HDR "profiles:\n- schedulerName: p\n  plugins:\n    multiPoint:\n"
                       "      disabled: [{name: '*'}]\n"
                       "      enabled: [{name: FakeSort}]\n");
    assert_has(msg, "at least one bind plugin is needed for profile with scheduler name \"p\"");
}

Test(config, plan_explicitly_enabled_unavailable_default_is_refused)
{
    /* Every default that kubesched does not ship (VolumeBinding, ...), taken from the registry:
     * skipped when it only comes from the default set, refused when the user enables it. */
    const char *const *all;
    size_t n = ks__registry_unavailable_defaults(&all);
    if (n == 0)
        cr_skip_test("kubesched ships every upstream default plugin");
    for (size_t i = 0; i < n; i++) {
        char extra[256], rest[256], want[512];
        const char *msg;
        snprintf(extra, sizeof(extra), ", {name: %s, weight: 5}", all[i]);
        msg = plan_err(fake_cfg(extra, ""));
        snprintf(want, sizeof(want),
                 "profiles[0].plugins.multiPoint: plugin \"%s\" is not available in kubesched yet",
                 all[i]);
        assert_has(msg, want);
        snprintf(rest, sizeof(rest), "    filter:\n      enabled: [{name: %s}]\n", all[i]);
        msg = plan_err(fake_cfg("", rest));
        snprintf(want, sizeof(want),
                 "profiles[0].plugins.filter: plugin \"%s\" is not available in kubesched yet",
                 all[i]);
        assert_has(msg, want);
    }
}

Test(config, plan_queue_sort_must_match_across_profiles)
{
    const char *msg = plan_err(fake_cfg("", "- schedulerName: b\n  plugins:\n    multiPoint:\n"
                                            "      disabled: [{name: '*'}]\n"
                                            "      enabled: [{name: FakeSort2}, "
                                            "{name: FakeBind}]\n"));
    assert_has(msg, "different queue sort plugins for profile \"b\": \"FakeSort2\", first: "
                    "\"FakeSort\"");
    msg = plan_err(fake_cfg("", "  pluginConfig: [{name: FakeSort, args: {a: 1}}]\n"
                                "- schedulerName: b\n  plugins:\n    multiPoint:\n"
                                "      disabled: [{name: '*'}]\n"
                                "      enabled: [{name: FakeSort}, {name: FakeBind}]\n"));
    assert_has(msg, "different queue sort plugin args for profile \"b\"");
}

Test(config, plan_default_profile_plans_with_the_in_tree_plugins)
{
    char err[1024];
    ks_config *c = NULL;
    ks_registry *reg = th_registry_new();
    ks_profile_plan *plans = NULL;
    cr_assert_not_null(reg);
    cr_assert_eq(ks__config_default(cfg_registry(), &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(c, reg, &plans, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(plans[0].npoint[KS_PT_QUEUE_SORT], 1);
    cr_assert_str_eq(plans[0].point[KS_PT_QUEUE_SORT][0].name, "PrioritySort");
    cr_assert_str_eq(plans[0].point[KS_PT_BIND][0].name, "DefaultBinder");
    /* NodeDeclaredFeatures is planned last at PreFilter and Filter (appended to MultiPoint). */
    cr_assert_str_eq(plans[0].point[KS_PT_FILTER][plans[0].npoint[KS_PT_FILTER] - 1].name,
                     "NodeDeclaredFeatures");
    cr_assert_str_eq(plans[0].point[KS_PT_PRE_FILTER][plans[0].npoint[KS_PT_PRE_FILTER] - 1].name,
                     "NodeDeclaredFeatures");
    /* v1.37: NodeName's PreFilter and Filter run before NodeUnschedulable's; NodeUnschedulable
     * and TaintToleration have (trivial) PreFilters. */
    cr_assert_str_eq(plans[0].point[KS_PT_PRE_FILTER][0].name, "NodeName");
    cr_assert_str_eq(plans[0].point[KS_PT_PRE_FILTER][1].name, "NodeUnschedulable");
    cr_assert_str_eq(plans[0].point[KS_PT_PRE_FILTER][2].name, "TaintToleration");
    cr_assert_str_eq(plans[0].point[KS_PT_FILTER][0].name, "NodeName");
    cr_assert_str_eq(plans[0].point[KS_PT_FILTER][1].name, "NodeUnschedulable");
    assert_unavailable(&plans[0]);
    for (size_t i = 0; i < plans[0].npoint[KS_PT_SCORE]; i++)
        if (strcmp(plans[0].point[KS_PT_SCORE][i].name, "TaintToleration") == 0)
            cr_assert_eq(plans[0].point[KS_PT_SCORE][i].weight, 3);
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
}

/* ---------------------------------------------------------------------------------------------
 * validate-config output
 * ------------------------------------------------------------------------------------------- */

Test(config, print_prints_settings_points_weights_args_and_skipped_defaults)
{
    char err[1024];
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    ks_config *c = load_ok(fake_cfg(", {name: FakeScore, weight: 4}",
                                    "  pluginConfig:\n  - name: FakeScore\n"
                                    "    args: {kubeschedPluginPath: libscore.so, k: v}\n"));
    ks_registry *reg = fake_registry();
    ks_profile_plan *plans = NULL;
    const char *unavailable[64];
    size_t nunavailable = expected_unavailable(unavailable, 64);
    char skipped[1024];
    int off = snprintf(skipped, sizeof(skipped),
                       "  Not available in kubesched yet (skipped from the default set): %s",
                       nunavailable ? "" : "none");
    for (size_t i = 0; i < nunavailable; i++)
        off += snprintf(skipped + off, sizeof(skipped) - (size_t)off, "%s%s", i ? ", " : "",
                        unavailable[i]);
    snprintf(skipped + off, sizeof(skipped) - (size_t)off, "\n");
    cr_assert_eq(ks__config_plan(c, reg, &plans, err, sizeof(err)), 0, "%s", err);
    out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    ks__config_print(c, plans, out);
    fclose(out);
    assert_has(buf, "Configuration cfg.yaml");
    assert_has(buf, "  parallelism: 16\n");
    assert_has(buf, "  percentageOfNodesToScore: 0 (adaptive)\n");
    assert_has(buf, "leaderElection: leaderElect=true leaseDuration=15s renewDeadline=10s "
                    "retryPeriod=2s resourceLock=leases resourceName=kube-scheduler "
                    "resourceNamespace=kube-system");
    assert_has(buf, "qps=50 burst=100");
    assert_has(buf, "Profile \"p\" (percentageOfNodesToScore: the global setting)");
    assert_has(buf, "  QueueSort    FakeSort\n");
    assert_has(buf, "  Score        FakeScore (weight 4)\n");
    assert_has(buf, "  Filter       (none)\n");
    assert_has(buf, "    FakeScore: {\"kubeschedPluginPath\":\"libscore.so\",\"k\":\"v\"} (shared "
                    "object: ./libscore.so)\n");
    assert_has(buf, "    FakeSort: {}\n");
    assert_has(buf, "  PreEnqueue   (none)\n");
    assert_has(buf, skipped);
    free(buf);
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
}

Test(config, print_prints_merged_sets_without_a_plan)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    ks_config *c = load_ok(HDR);
    out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    ks__config_print(c, NULL, out);
    fclose(out);
    assert_has(buf, "Profile \"default-scheduler\"");
    assert_has(buf, "TaintToleration (weight 3)");
    assert_has(buf, "    VolumeBinding: {\"bindTimeoutSeconds\":600,\"shape\":");
    /* DynamicResources is not shipped yet; the merged sets still show upstream's weight. */
    assert_has(buf, "DynamicResources (weight 2)");
    assert_has(buf, "DefaultBinder, NodeDeclaredFeatures\n");
    assert_has(buf, "  PodGroupPostFilter enabled: (none)\n");
    free(buf);
    ks__config_free(c);
}

Test(config, volume_binding_shape_is_kept_when_given)
{
    ks_config *c = load_ok(HDR "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
                               "    args: {shape: [{utilization: 0, score: 0}, {utilization: 80, "
                               "score: 10}]}\n");
    cr_assert_str_eq(json(pc_find(&c->profiles[0], "VolumeBinding")->args),
                     "{\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":80,\"score\":"
                     "10}],\"bindTimeoutSeconds\":600}");
    ks__config_free(c);
    /* An empty shape is defaulted too (len(obj.Shape) == 0). */
    c = load_ok(HDR "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: []}\n");
    assert_has(json(pc_find(&c->profiles[0], "VolumeBinding")->args),
               "\"shape\":[{\"utilization\":0,\"score\":10},{\"utilization\":100,\"score\":0}]");
    ks__config_free(c);
    c = load_ok(HDR "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
                    "    args: {bindingTimeout: 1s}\n");
    ks__config_free(c);
}

/* v1.37 Plugins: placementGenerate, placementScore and podGroupPostFilter are read and merged
 * like the other sets; no plugin kubesched loads implements them. */
Test(config, pod_group_plugin_sets_are_read_and_merged)
{
    ks_config *c =
        load_ok(HDR "profiles:\n- plugins:\n"
                    "    placementGenerate: {enabled: [{name: TopologyPlacementGenerator}]}\n"
                    "    placementScore: {enabled: [{name: PodGroupPodsCount, weight: 3}], "
                    "disabled: [{name: '*'}]}\n"
                    "    podGroupPostFilter: {disabled: [{name: DefaultPreemption}]}\n");
    const ks_profile_config *p = &c->profiles[0];
    cr_assert_eq(p->plugins[KS_PT_PLACEMENT_GENERATE].nenabled, 1);
    cr_assert_str_eq(p->plugins[KS_PT_PLACEMENT_GENERATE].enabled[0].name,
                     "TopologyPlacementGenerator");
    cr_assert_eq(p->plugins[KS_PT_PLACEMENT_SCORE].enabled[0].weight, 3);
    cr_assert_str_eq(p->plugins[KS_PT_PLACEMENT_SCORE].disabled[0], "*");
    cr_assert_str_eq(p->plugins[KS_PT_POD_GROUP_POST_FILTER].disabled[0], "DefaultPreemption");
    cr_assert_str_eq(ks__point_field(KS_PT_POD_GROUP_POST_FILTER), "podGroupPostFilter");
    cr_assert_str_eq(ks__point_name(KS_PT_PLACEMENT_SCORE), "PlacementScore");
    ks__config_free(c);
}

/* pluginsNames (which plugins get default args) reads placementGenerate and placementScore but
 * not podGroupPostFilter. */
Test(config, pod_group_sets_and_default_args)
{
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n    multiPoint: {disabled: [{name: '*'}]}\n"
                               "    placementScore: {enabled: [{name: NodeResourcesFit}]}\n"
                               "    podGroupPostFilter: {enabled: [{name: DefaultPreemption}]}\n");
    const ks_profile_config *p = &c->profiles[0];
    cr_assert_not_null(pc_find(p, "NodeResourcesFit"));
    cr_assert_eq(p->nplugin_configs, 1, "DefaultPreemption gets no default args");
    ks__config_free(c);
}

Test(config, pod_group_plugin_sets_refuse_what_cannot_run)
{
    const char *msg = plan_err(fake_cfg("", "    placementGenerate:\n"
                                            "      enabled: [{name: FakeScore}]\n"));
    assert_has(msg, "profiles[0].plugins.placementGenerate: plugin \"FakeScore\" does not extend "
                    "PlacementGenerate plugin");
    msg = plan_err(fake_cfg("", "    podGroupPostFilter:\n"
                                "      enabled: [{name: NoSuchPlugin}]\n"));
    assert_has(msg, "profiles[0].plugins.podGroupPostFilter: PodGroupPostFilter \"NoSuchPlugin\" "
                    "does not exist (registered PodGroupPostFilter plugins: none)");
    /* how an out-of-tree plugin would be found (issue: a config without kubeschedPluginPath) */
    assert_has(msg, "); if it is an out-of-tree plugin, add a pluginConfig entry for it to "
                    "profiles[0] whose args give kubeschedPluginPath: the .so that defines it");
    /* The removed-plugin check covers podGroupPostFilter (upstream stagesToPluginSet) but not the
     * placement sets. */
    expect_error(HDR "profiles:\n- plugins:\n    podGroupPostFilter:\n"
                     "      enabled: [{name: EBSLimits}]\n",
                 "profiles[0].plugins.podGroupPostFilter.enabled[0]: Invalid value: \"EBSLimits\": "
                 "was invalid in version",
                 NULL);
    msg = plan_err(fake_cfg("", "    placementScore:\n      enabled: [{name: EBSLimits}]\n"));
    assert_has(msg, "PlacementScore \"EBSLimits\" does not exist");
}

/* ---------------------------------------------------------------------------------------------
 * The args of a plugin that declares its own schema (an out-of-tree plugin, ABI 1.3)
 * ------------------------------------------------------------------------------------------- */

static const ks_arg_field oot_arg_fields[] = {
    {.name = "minCPU", .type = KS_ARG_QUANTITY, .default_json = "\"1\""},
    {.name = "requiredLabel", .type = KS_ARG_STRING},
};
static const ks_args_schema oot_args = KS_ARGS_SCHEMA("FakeOotArgs", oot_arg_fields);
static const ks_plugin_desc fake_oot = {.size = sizeof(ks_plugin_desc),
                                        .name = "FakeOot",
                                        .filter = fake_filter,
                                        .args_schema = &oot_args};

#define OOT_CFG(args)                                                                              \
    HDR "profiles:\n- plugins:\n    filter:\n      enabled: [{name: FakeOot}]\n"                   \
        "  pluginConfig:\n  - name: FakeOot\n    args: " args "\n"

/* The in-tree plugins plus FakeOot, as after the loader added a shared object's plugin. */
static ks_registry *oot_registry(void)
{
    char err[256];
    ks_registry *reg = th_registry_new();
    cr_assert_eq(ks__registry_add(reg, &fake_oot, "/opt/ks/liboot.so", err, sizeof(err)), 0, "%s",
                 err);
    return reg;
}

Test(config, out_of_tree_unknown_arg_is_refused_with_the_field_path)
{
    char err[1024] = "";
    ks_config *c = load_ok(OOT_CFG("{kubeschedPluginPath: liboot.so, minCPUU: 2}"));
    ks_registry *reg = oot_registry();
    cr_assert_eq(ks__config_check_plugin_args(c, reg, err, sizeof(err)), KS_EINVAL);
    cr_assert_str_eq(err,
                     "cfg.yaml:9:44: profiles[0].pluginConfig[0].args: unknown field \"minCPUU\" "
                     "(valid: minCPU, requiredLabel)");
    ks__registry_free(reg);
    ks__config_free(c);
}

Test(config, out_of_tree_arg_of_the_wrong_type_is_refused)
{
    char err[1024] = "";
    ks_config *c = load_ok(OOT_CFG("{requiredLabel: [a, b]}"));
    ks_registry *reg = oot_registry();
    cr_assert_eq(ks__config_check_plugin_args(c, reg, err, sizeof(err)), KS_ETYPE);
    cr_assert_str_eq(err,
                     "cfg.yaml:9:12: profiles[0].pluginConfig[0].args.requiredLabel: expected a "
                     "string, got a list");
    ks__registry_free(reg);
    ks__config_free(c);
}

/* An out-of-tree plugin's validate_args (ABI 1.3) goes through the same path as the in-tree
 * ones: its ks_args_error gets the file and the pluginConfig path. */
static int fake_rules_validate(const ks_args *args, ks_args_error *err)
{
    int64_t lo = 0, hi = 0;
    (void)ks_args_get_int(args, "low", &lo);
    (void)ks_args_get_int(args, "high", &hi);
    if (hi < lo)
        return ks_args_invalid(err, "high", "must be at least low (%lld)", (long long)lo);
    return 0;
}
static const ks_arg_field rules_arg_fields[] = {
    {.name = "low", .type = KS_ARG_INT64, .default_json = "1"},
    {.name = "high", .type = KS_ARG_INT64, .default_json = "10"},
};
static const ks_args_schema rules_args = KS_ARGS_SCHEMA("FakeRulesArgs", rules_arg_fields);
static const ks_plugin_desc fake_rules = {.size = sizeof(ks_plugin_desc),
                                          .name = "FakeRules",
                                          .filter = fake_filter,
                                          .args_schema = &rules_args,
                                          .validate_args = fake_rules_validate};

Test(config, out_of_tree_validate_args_reports_with_the_field_path)
{
    char err[1024] = "";
    ks_config *c = load_ok(HDR "profiles:\n- plugins:\n    filter:\n      enabled: [{name: "
                               "FakeRules}]\n  pluginConfig:\n  - name: FakeRules\n"
                               "    args: {low: 5, high: 3}\n");
    ks_registry *reg = th_registry_new();
    cr_assert_eq(ks__registry_add(reg, &fake_rules, "/opt/ks/librules.so", err, sizeof(err)), 0);
    cr_assert_eq(ks__config_check_plugin_args(c, reg, err, sizeof(err)), KS_EINVAL);
    cr_assert_str_eq(err, "cfg.yaml:9:20: profiles[0].pluginConfig[0].args.high: Invalid value: 3: "
                          "must be at least low (5)");
    ks__registry_free(reg);
    ks__config_free(c);
    /* Registered before the file loads (as the in-tree module is), it is checked by the load. */
    reg = th_registry_new();
    cr_assert_eq(ks__registry_add(reg, &fake_rules, "test", err, sizeof(err)), 0);
    cr_assert_lt(ks__config_load_string(reg,
                                        HDR "profiles:\n- pluginConfig:\n  - name: FakeRules\n"
                                            "    args: {low: 50}\n",
                                        "cfg.yaml", &c, err, sizeof(err)),
                 0);
    cr_assert_str_eq(err, "cfg.yaml: profiles[0].pluginConfig[0].args.high: Invalid value: 10: "
                          "must be at least low (50)");
    ks__registry_free(reg);
}

Test(config, print_shows_the_declared_defaults_of_out_of_tree_args)
{
    char err[1024] = "";
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    ks_config *c = load_ok(OOT_CFG("{kubeschedPluginPath: liboot.so, requiredLabel: tier}"));
    ks_registry *reg = oot_registry();
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__config_check_plugin_args(c, reg, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(c, reg, &plans, err, sizeof(err)), 0, "%s", err);
    out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    ks__config_print(c, plans, out);
    fclose(out);
    assert_has(buf, "FakeOot: {\"kubeschedPluginPath\":\"liboot.so\",\"requiredLabel\":\"tier\","
                    "\"minCPU\":\"1\"}");
    free(buf);
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
}

/* In-tree and out-of-tree args alike: a message about a value names where it was written. */
Test(config, args_messages_name_the_line_and_column_of_the_value)
{
    cr_assert_str_eq(load_err(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                                  "    args:\n      minCandidateNodesPercentag: 5\n"),
                     "cfg.yaml:7:7: profiles[0].pluginConfig[0].args: unknown field "
                     "\"minCandidateNodesPercentag\" (valid: minCandidateNodesPercentage, "
                     "minCandidateNodesAbsolute)");
    cr_assert_str_eq(load_err(HDR "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
                                  "    args: {hardPodAffinityWeight: 101}\n"),
                     "cfg.yaml:6:12: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: "
                     "Invalid value: 101: not in valid range [0, 100]");
    /* a rule across fields (a plugin's validate_args) points at the field it names */
    cr_assert_str_eq(load_err(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                                  "    args: {minCandidateNodesAbsolute: 0, "
                                  "minCandidateNodesPercentage: 0}\n"),
                     "cfg.yaml:6:42: profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: "
                     "Invalid value: 0: cannot be zero at the same time as "
                     "minCandidateNodesAbsolute");
}

Test(config, deep_nesting_is_refused_before_libyaml_loads_it)
{
    /* 10^6 nested `[` used to keep libyaml's scanner busy for ever (quadratic in the nesting):
     * the nesting is checked first, and the message names where it passes the limit. */
    size_t n = 1000000;
    char *text = malloc(n + 64);
    size_t off = (size_t)sprintf(text, "apiVersion: kubescheduler.config.k8s.io/v1\nx: ");
    memset(text + off, '[', n);
    text[off + n] = '\0';
    cr_expect_str_eq(load_err(text), "cfg.yaml:2:1003: nested more than 1000 levels deep");
    free(text);
}

/* A plan as validate-config prints it, for the configuration yaml (the fakes' registry). */
static char *printed_plan(const char *yaml)
{
    char err[1024], *buf = NULL;
    size_t len = 0;
    ks_config *c = load_ok(yaml);
    ks_registry *reg = fake_registry();
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__config_plan(c, reg, &plans, err, sizeof(err)), 0, "%s", err);
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    ks__config_print(c, plans, out);
    fclose(out);
    ks__config_plans_free(plans, c->nprofiles);
    ks__registry_free(reg);
    ks__config_free(c);
    return buf;
}

/* FakeMulti implements Permit and Unreserve: enabled at one of permit / reserve only, the other
 * half is lost, and validate-config says so; through multiPoint it is at both. */
Test(config, print_warns_when_permit_and_unreserve_are_split)
{
    char *both = printed_plan(fake_cfg(", {name: FakeMulti}", ""));
    cr_expect(!strstr(both, "Warning:"), "%s", both);
    free(both);
    char *permit_only =
        printed_plan(fake_cfg("", "    permit:\n      enabled: [{name: FakeMulti}]\n"));
    assert_has(permit_only, "  Warning: FakeMulti implements Unreserve but is enabled at permit, "
                            "not at reserve: its Unreserve will not run");
    free(permit_only);
    char *reserve_only =
        printed_plan(fake_cfg("", "    reserve:\n      enabled: [{name: FakeMulti}]\n"));
    assert_has(reserve_only, "  Warning: FakeMulti implements Permit but is enabled at reserve, "
                             "not at permit: its Permit will never run");
    free(reserve_only);
}
