/*
 * `kubesched simulate` end to end for SchedulingGates, NodePorts, NodeAffinity, ImageLocality,
 * NodeResourcesBalancedAllocation and NodeDeclaredFeatures in the default profile: the built binary
 * runs on the tests/fixtures/sim/groupa_*.yaml cluster files, and whole decisions are checked (the
 * chosen node when it is unambiguous, failure messages in upstream's FitError wording, plugin
 * scores from --explain).
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/"

/* The last entry for default/name (its outcome). */
static const cJSON *pod_entry(const cJSON *doc, const char *name)
{
    return sim_pod_entry(doc, "default", name);
}

static void expect_scheduled(const cJSON *doc, const char *pod, const char *node)
{
    const cJSON *e = pod_entry(doc, pod);
    cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "%s: %s", pod, sim_field(e, "message"));
    if (node)
        cr_assert_str_eq(sim_field(e, "node"), node, "%s", pod);
}

static void expect_unschedulable(const cJSON *doc, const char *pod, const char *message)
{
    const cJSON *e = pod_entry(doc, pod);
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable", "%s", pod);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(e, "node")), "%s", pod);
    cr_assert_str_eq(sim_field(e, "message"), message, "%s", pod);
}

/* --explain: the score `plugin` gave `node` for `pod`, or -1 when the plugin did not score. */
static double score_of(const cJSON *doc, const char *pod, const char *node, const char *plugin)
{
    const cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(pod_entry(doc, pod), "score"), node);
    cr_assert_not_null(s, "%s: no scores for %s", pod, node);
    const cJSON *v = cJSON_GetObjectItem(s, plugin);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

#define NOT_HELPFUL(n)                                                                             \
    " preemption: 0/" #n " nodes are available: " #n " Preemption is not helpful for scheduling."

Test(groupa, gated_pod_waits_and_ungated_pod_is_placed)
{
    cJSON *doc = sim_json("--cluster " FIX "groupa_gates.yaml");
    expect_scheduled(doc, "free", "only");
    expect_unschedulable(doc, "gated",
                         "waiting for scheduling gates: [example.com/quota example.com/review]");
    /* A gated pod never reaches Filter. */
    cr_assert_null(cJSON_GetObjectItem(pod_entry(doc, "gated"), "filter"));
    cJSON_Delete(doc);
}

Test(groupa, node_affinity_required_terms_and_selector)
{
    cJSON *doc = sim_json("--cluster " FIX "groupa_nodeaffinity.yaml");
    expect_scheduled(doc, "selector", "a1");
    expect_scheduled(doc, "gt", "c1");      /* cores > 8 and no disk label */
    expect_scheduled(doc, "by-name", "b1"); /* matchFields metadata.name In [b1] */
    expect_unschedulable(doc, "nowhere",
                         "0/3 nodes are available: 3 node(s) didn't match Pod's node "
                         "affinity/selector." NOT_HELPFUL(3));
    /* Rejected in PreFilter: DynamicResources' PostFilter finds no state and ends PostFilter
     * with the Error "not found" (upstream v1.37), so DefaultPreemption does not run. */
    expect_unschedulable(doc, "conflict",
                         "0/3 nodes are available: pod affinity terms conflict. not found");
    /* a1 is outside the PreFilterResult {b1, c1}; b1 and c1 fail the nodeSelector. */
    expect_unschedulable(
        doc, "named-elsewhere",
        "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) "
        "[NodeAffinity], 2 node(s) didn't match Pod's node affinity/selector." NOT_HELPFUL(3));
    cJSON_Delete(doc);
}

Test(groupa, node_affinity_preferred_terms_score_weights_normalized)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "groupa_nodeaffinity.yaml");
    /* c1 matches the weight-10 term, a1 and b1 the weight-5 one: 100, 50, 50 (weight 2). */
    expect_scheduled(doc, "prefers-c", "c1");
    cr_assert_eq(score_of(doc, "prefers-c", "c1", "NodeAffinity"), 100);
    cr_assert_eq(score_of(doc, "prefers-c", "a1", "NodeAffinity"), 50);
    cr_assert_eq(score_of(doc, "prefers-c", "b1", "NodeAffinity"), 50);
    cJSON_Delete(doc);
}

Test(groupa, node_affinity_added_affinity_from_plugin_config)
{
    cJSON *doc = sim_json("--explain --config " FIX "groupa_nodeaffinity_config.yaml "
                          "--cluster " FIX "groupa_nodeaffinity.yaml");
    expect_scheduled(doc, "selector", "a1");
    expect_unschedulable(
        doc, "gt",
        "0/3 nodes are available: 1 node(s) didn't match scheduler-enforced node "
        "affinity, 2 node(s) didn't match Pod's node affinity/selector." NOT_HELPFUL(3));
    /* Added preferred (zone b, 50) plus the pod's own (disk, 5): b1 55 -> 100, a1 5 -> 9. */
    expect_scheduled(doc, "prefers-c", "b1");
    cr_assert_eq(score_of(doc, "prefers-c", "b1", "NodeAffinity"), 100);
    cr_assert_eq(score_of(doc, "prefers-c", "a1", "NodeAffinity"), 9);
    cJSON_Delete(doc);
}

Test(groupa, node_ports_conflicts_by_protocol_port_and_ip)
{
    cJSON *doc = sim_json("--cluster " FIX "groupa_nodeports.yaml");
    /* n1's holder binds 0.0.0.0:8080/TCP, which covers 10.0.0.1. */
    expect_scheduled(doc, "web-1", "n2");
    expect_unschedulable(doc, "web-2",
                         "0/2 nodes are available: 2 node(s) didn't have free ports for the "
                         "requested pod ports. preemption: 0/2 nodes are available: 2 No "
                         "preemption victims found for incoming pod.");
    /* UDP 8080 is free everywhere. */
    expect_scheduled(doc, "dns", NULL);
    cJSON_Delete(doc);
}

Test(groupa, image_locality_prefers_node_with_image)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "groupa_imagelocality.yaml");
    expect_scheduled(doc, "big", "warm");
    /* 800Mi on 1 of 2 nodes: 400Mi -> 100 * (400 - 23) / (1000 - 23) = 38. */
    cr_assert_eq(score_of(doc, "big", "warm", "ImageLocality"), 38);
    cr_assert_eq(score_of(doc, "big", "cold", "ImageLocality"), 0);
    cJSON_Delete(doc);
}

Test(groupa, balanced_allocation_scores_and_skips_best_effort)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "groupa_balanced.yaml");
    expect_scheduled(doc, "cpu-heavy", "wide");
    /* v1.37 scores the change in balance: tall: empty (100) -> cpu 2/4, memory 1/8, std .1875
     * (81): 50 + (50 + 81 - 100) / 2 = 65; wide: 100 -> 2/8 and 1/4 (100): 75. */
    cr_assert_eq(score_of(doc, "cpu-heavy", "tall", "NodeResourcesBalancedAllocation"), 65);
    cr_assert_eq(score_of(doc, "cpu-heavy", "wide", "NodeResourcesBalancedAllocation"), 75);
    /* Best-effort: PreScore Skip (v1.33+), so the plugin gives no score; Fit's 100m/200Mi
     * defaults favour the emptier tall node. */
    expect_scheduled(doc, "best-effort", "tall");
    cr_assert_eq(score_of(doc, "best-effort", "tall", "NodeResourcesBalancedAllocation"), -1);
    cr_assert_eq(score_of(doc, "best-effort", "wide", "NodeResourcesBalancedAllocation"), -1);
    cJSON_Delete(doc);
}

Test(groupa, node_declared_features_filters_nodes_without_the_feature)
{
    cJSON *doc = sim_json("--cluster " FIX "ndf.yaml");
    expect_scheduled(doc, "rr", "new");
    expect_unschedulable(doc, "hn",
                         "0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
                         "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                         "scheduling.");
    cJSON_Delete(doc);
}
