/*
 * InterPodAffinity end to end: `kubesched simulate --output json` with the default profile on the
 * cluster files tests/fixtures/sim/ipa_*.yaml, checking whole decisions and the failure messages
 * in upstream's words. Messages are checked up to the end of the Filter histogram, so that the
 * PostFilter part (DefaultPreemption's, when it is in the profile) does not matter here.
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

static void expect_node(const cJSON *doc, const char *ns, const char *name, const char *node)
{
    const cJSON *e = sim_pod_entry(doc, ns, name);
    cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "%s/%s: %s", ns, name,
                     sim_field(e, "message"));
    cr_assert_str_eq(sim_field(e, "node"), node, "%s/%s", ns, name);
}

/* Unschedulable, and the message starts with want (the FitError up to its final '.'). */
static void expect_rejected(const cJSON *doc, const char *ns, const char *name, const char *want)
{
    const cJSON *e = sim_pod_entry(doc, ns, name);
    const char *msg = sim_field(e, "message");
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable", "%s/%s", ns, name);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(e, "node")));
    cr_assert_not_null(msg);
    cr_assert(strncmp(msg, want, strlen(want)) == 0, "%s/%s: \"%s\", want \"%s...\"", ns, name, msg,
              want);
}

Test(simulate_ipa, required_affinity_places_pod_in_the_zone_of_its_peer)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_colocate.yaml");
    expect_node(doc, "default", "web", "n2");
    cJSON_Delete(doc);
}

Test(simulate_ipa, required_affinity_to_no_pod_fails_in_upstream_words)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_colocate.yaml");
    expect_rejected(doc, "default", "lonely",
                    "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
    cJSON_Delete(doc);
}

Test(simulate_ipa, first_pod_of_a_group_places_and_the_next_follows_it)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_colocate.yaml");
    const cJSON *g1 = sim_pod_entry(doc, "default", "grp-1"),
                *g2 = sim_pod_entry(doc, "default", "grp-2");
    cr_assert_str_eq(sim_field(g1, "result"), "Scheduled", "%s", sim_field(g1, "message"));
    cr_assert_str_eq(sim_field(g2, "result"), "Scheduled", "%s", sim_field(g2, "message"));
    /* One node per zone: the same zone is the same node. */
    cr_assert_str_eq(sim_field(g1, "node"), sim_field(g2, "node"));
    cJSON_Delete(doc);
}

Test(simulate_ipa, required_anti_affinity_spreads_one_replica_per_host)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_spread.yaml");
    const char *hosts[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "web-%d", i + 1);
        const cJSON *e = sim_pod_entry(doc, "shop", name);
        cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "%s: %s", name,
                         sim_field(e, "message"));
        hosts[i] = sim_field(e, "node");
    }
    cr_assert(strcmp(hosts[0], hosts[1]) && strcmp(hosts[0], hosts[2]) &&
                  strcmp(hosts[1], hosts[2]),
              "%s %s %s", hosts[0], hosts[1], hosts[2]);
    expect_rejected(doc, "shop", "web-4",
                    "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
    cJSON_Delete(doc);
}

Test(simulate_ipa, namespace_selector_picks_namespaces_by_their_labels)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_namespaces.yaml");
    expect_node(doc, "apps", "client-a", "n1");
    expect_node(doc, "apps", "client-b", "n2");
    expect_rejected(doc, "apps", "client-c",
                    "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
    /* No namespaces and no selector: only the pod's own namespace, where no db runs. */
    expect_rejected(doc, "apps", "client-own-namespace",
                    "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
    /* An empty selector selects every namespace: both db hosts are refused. */
    expect_node(doc, "apps", "avoid-all-db", "n3");
    cJSON_Delete(doc);
}

Test(simulate_ipa, existing_pod_anti_affinity_refuses_its_topology_in_upstream_words)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_spread.yaml");
    expect_rejected(doc, "shop", "intruder",
                    "0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity "
                    "rules.");
    cJSON_Delete(doc);
}

Test(simulate_ipa, explain_names_the_rule_on_every_host)
{
    /* The fourth replica is refused by its own term and by the placed replicas' terms; the
     * incoming pod's anti-affinity is checked first, so that is the reason on each host. */
    cJSON *doc = sim_json("--explain --cluster " FIX "ipa_spread.yaml");
    const cJSON *filter = cJSON_GetObjectItem(sim_pod_entry(doc, "shop", "web-4"), "filter");
    cr_assert_not_null(filter);
    for (int i = 1; i <= 3; i++) {
        char host[16];
        snprintf(host, sizeof(host), "host%d", i);
        const cJSON *h = cJSON_GetObjectItem(filter, host);
        cr_assert_not_null(h, "%s", host);
        cr_assert_str_eq(sim_field(h, "InterPodAffinity"),
                         "node(s) didn't match pod anti-affinity rules", "%s", host);
    }
    cJSON_Delete(doc);
}

Test(simulate_ipa, anti_affinity_victim_is_preempted_for_higher_priority_pod)
{
    cJSON *doc = sim_json("--cluster " FIX "ipa_preempt.yaml");
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods");
    const cJSON *first = cJSON_GetArrayItem(pods, 0);
    cr_assert_str_eq(sim_field(first, "name"), "high");
    cr_assert_str_eq(sim_field(first, "result"), "Unschedulable");
    cr_assert_str_eq(sim_field(first, "message"),
                     "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. "
                     "preemption: found a potential placement for pod on node h1, preempting 1 "
                     "victims");
    cr_assert_str_eq(sim_field(first, "nominatedNode"), "h1");
    const cJSON *victim = cJSON_GetArrayItem(cJSON_GetObjectItem(first, "victims"), 0);
    cr_assert_not_null(victim);
    cr_assert_str_eq(sim_field(victim, "name"), "low");
    expect_node(doc, "default", "high", "h1");
    cJSON_Delete(doc);
}
