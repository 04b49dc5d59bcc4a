/*
 * PodTopologySpread end to end: runs the built binary (`simulate --output json`, default profile)
 * on tests/fixtures/sim/pts_*.yaml and checks whole decisions: DoNotSchedule constraints spreading
 * a Deployment-like set over zones, failures in upstream's words, and the system default spreading
 * of pods a Service selects.
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

/* The failure message starts with want (a PostFilter plugin may append its own sentence). */
static void expect_unschedulable(const cJSON *e, const char *want)
{
    const char *msg = sim_field(e, "message");
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(e, "node")));
    cr_assert_not_null(msg);
    cr_assert(strncmp(msg, want, strlen(want)) == 0 &&
                  (msg[strlen(want)] == '\0' || msg[strlen(want)] == ' '),
              "message \"%s\" does not start with \"%s\"", msg, want);
}

static int64_t score_of(const cJSON *e, const char *node, const char *plugin)
{
    const cJSON *s =
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "score"), node), plugin);
    cr_assert(cJSON_IsNumber(s), "no %s score for %s", plugin, node);
    return (int64_t)s->valuedouble;
}

Test(pod_topology_spread_sim, zone_constraint_keeps_every_step_within_max_skew)
{
    cJSON *doc = sim_json("--cluster " FIX "pts_zones.yaml");
    int zone_a = 0, zone_b = 0;
    char name[16];
    /* Pods are scheduled in file order: after each one the zones differ by at most 1. */
    for (int i = 1; i <= 6; i++) {
        snprintf(name, sizeof(name), "web-%d", i);
        const cJSON *e = sim_pod_entry(doc, "shop", name);
        const char *node = sim_field(e, "node");
        cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "%s", name);
        cr_assert_not_null(node);
        if (node[0] == 'a')
            zone_a++;
        else
            zone_b++;
        cr_assert_leq(abs(zone_a - zone_b), 1, "after %s: zone-a %d, zone-b %d", name, zone_a,
                      zone_b);
    }
    cr_assert_eq(zone_a, 3);
    cr_assert_eq(zone_b, 3);
    cJSON_Delete(doc);
}

Test(pod_topology_spread_sim, missing_topology_label_is_unresolvable_everywhere)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "pts_zones.yaml");
    const cJSON *e = sim_pod_entry(doc, "shop", "rack-bound");
    expect_unschedulable(e, "0/4 nodes are available: 4 node(s) didn't match pod topology spread "
                            "constraints (missing required label).");
    const char *msg = sim_field(e, "message");
    if (strstr(msg, "preemption:"))
        cr_assert(strstr(msg, "4 Preemption is not helpful for scheduling."), "%s", msg);
    const cJSON *filter = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "filter"), "b2");
    cr_assert_str_eq(
        sim_field(filter, "PodTopologySpread"),
        "node(s) didn't match pod topology spread constraints (missing required label)");
    cJSON_Delete(doc);
}

Test(pod_topology_spread_sim, skew_failure_is_counted_with_other_plugins_reasons)
{
    cJSON *doc = sim_json("--cluster " FIX "pts_skew.yaml");
    /* zone-a holds 2 batch pods, zone-b's node is tainted: skew on a1 would be 2 + 1 - 0 = 3. */
    expect_unschedulable(sim_pod_entry(doc, "jobs", "batch-3"),
                         "0/2 nodes are available: 1 node(s) didn't match pod topology spread "
                         "constraints, 1 node(s) had untolerated taint(s).");
    cJSON_Delete(doc);
}

Test(pod_topology_spread_sim, min_domains_beyond_the_existing_zones_blocks_both)
{
    cJSON *doc = sim_json("--cluster " FIX "pts_skew.yaml");
    /* 2 zones < minDomains 3: the global minimum is 0, so 1 + 1 - 0 = 2 > maxSkew 1 in both. */
    expect_unschedulable(sim_pod_entry(doc, "jobs", "quorum-3"),
                         "0/2 nodes are available: 2 node(s) didn't match pod topology spread "
                         "constraints.");
    cJSON_Delete(doc);
}

static void count_api_pods(const cJSON *doc, int *big, int *small1, int *small2)
{
    char name[16];
    *big = *small1 = *small2 = 0;
    for (int i = 1; i <= 6; i++) {
        snprintf(name, sizeof(name), "api-%d", i);
        const cJSON *e = sim_pod_entry(doc, "shop", name);
        const char *node = sim_field(e, "node");
        cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "%s", name);
        if (!strcmp(node, "big"))
            (*big)++;
        else if (!strcmp(node, "small-1"))
            (*small1)++;
        else
            (*small2)++;
    }
}

Test(pod_topology_spread_sim, system_defaults_spread_service_pods_over_hosts)
{
    int big, small1, small2;
    cJSON *doc = sim_json("--cluster " FIX "pts_service.yaml");
    count_api_pods(doc, &big, &small1, &small2);
    cr_assert_eq(big, 2);
    cr_assert_eq(small1, 2);
    cr_assert_eq(small2, 2);
    /* Nothing selects the loner: no default constraints, LeastAllocated picks the big node. */
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "shop", "loner"), "node"), "big");
    cJSON_Delete(doc);
}

Test(pod_topology_spread_sim, without_the_plugin_service_pods_stack_on_the_big_node)
{
    int big, small1, small2;
    cJSON *doc = sim_json("--cluster " FIX "pts_service.yaml --config " FIX "pts_disabled.yaml");
    count_api_pods(doc, &big, &small1, &small2);
    cr_assert_eq(big, 6);
    cJSON_Delete(doc);
}

Test(pod_topology_spread_sim, explain_shows_upstream_spread_scores)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "pts_service.yaml");
    const cJSON *first = sim_pod_entry(doc, "shop", "api-1"),
                *second = sim_pod_entry(doc, "shop", "api-2");
    cr_assert_str_eq(sim_field(first, "node"), "big");
    /* api-1 on big (zone-a). Hostname weight ln 5, zone weight ln 4 (2 zones):
     * big 1 ln5 + 2 + 1 ln4 + 4 = 9.0 -> 9, small-1 2 + ln4 + 4 = 7.4 -> 7, small-2 2 + 4 = 6;
     * normalized 100 (9 + 6 - raw) / 9. */
    cr_assert_eq(score_of(second, "big", "PodTopologySpread"), 66);
    cr_assert_eq(score_of(second, "small-1", "PodTopologySpread"), 88);
    cr_assert_eq(score_of(second, "small-2", "PodTopologySpread"), 100);
    cr_assert_str_eq(sim_field(second, "node"), "small-2");
    cJSON_Delete(doc);
}

Test(pod_topology_spread_sim, preemption_dry_run_removes_victims_from_the_spread_counts)
{
    cJSON *doc = sim_json("--cluster " FIX "pts_preempt.yaml");
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods");
    const cJSON *first = cJSON_GetArrayItem(pods, 0);
    /* One low pod left on a1 would still make the skew 2: both are victims. */
    expect_unschedulable(first, "0/2 nodes are available: 1 node(s) didn't match pod topology "
                                "spread constraints, 1 node(s) had untolerated taint(s).");
    cr_assert_str_eq(sim_field(first, "nominatedNode"), "a1");
    const cJSON *victims = cJSON_GetObjectItem(first, "victims");
    cr_assert_eq(cJSON_GetArraySize(victims), 2);
    cr_assert_str_eq(sim_field(cJSON_GetArrayItem(victims, 0), "name"), "low-1");
    cr_assert_str_eq(sim_field(cJSON_GetArrayItem(victims, 1), "name"), "low-2");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "jobs", "high"), "node"), "a1");
    cJSON_Delete(doc);
}

/* Many replicas of one workload: PreFilter's per-domain counts are carried from cycle to cycle
 * and only the changed nodes are recounted. Every placement must satisfy the constraint as a
 * full recount sees it (count of the chosen zone + 1 - the smallest zone count <= maxSkew 1),
 * counting the two replicas already running in z1 and not the pods of another namespace, and
 * no replica may be rejected; a miscount would break one of these. */
Test(pod_topology_spread_sim, carried_counts_match_a_full_recount_at_every_step)
{
    cJSON *doc = sim_json("--cluster " FIX "pts_many.yaml");
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods"), *e;
    int zone[3] = {2, 0, 0}, placed = 0;
    cJSON_ArrayForEach(e, pods)
    {
        cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "%s: %s", sim_field(e, "name"),
                         sim_field(e, "message"));
        int z = atoi(sim_field(e, "node") + 1) % 3; /* node nK is in zone K % 3 */
        int lo = zone[0] < zone[1] ? zone[0] : zone[1];
        lo = zone[2] < lo ? zone[2] : lo;
        cr_assert_leq(zone[z] + 1 - lo, 1, "placement %d into zone %d with zones %d/%d/%d", placed,
                      z, zone[0], zone[1], zone[2]);
        zone[z]++;
        placed++;
    }
    cr_assert_eq(placed, 45);
    cr_assert_eq(zone[0] + zone[1] + zone[2], 47);
    cJSON_Delete(doc);
}
