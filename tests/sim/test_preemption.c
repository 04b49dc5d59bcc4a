/*
 * DefaultPreemption end to end: runs the built binary's `simulate --output json` (default
 * profile) on tests/fixtures/sim/preempt_*.yaml and checks the attempts: the preemptor's failed
 * attempt with its FitError, the node it was nominated to and its victims, then its placement.
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

/* The k-th entry (0 = first attempt) for ns/name, or the last one with k = -1. */
static const cJSON *pod_attempt(const cJSON *doc, const char *ns, const char *name, int k)
{
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods"), *it, *found = NULL;
    int seen = 0;
    cJSON_ArrayForEach(it, pods)
    {
        if (strcmp(cJSON_GetObjectItem(it, "namespace")->valuestring, ns) != 0 ||
            strcmp(cJSON_GetObjectItem(it, "name")->valuestring, name) != 0)
            continue;
        if (k < 0 || seen++ == k)
            found = it;
        if (k >= 0 && found)
            break;
    }
    cr_assert_not_null(found, "no entry %d for %s/%s", k, ns, name);
    return found;
}

static int attempts(const cJSON *doc, const char *ns, const char *name)
{
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods"), *it;
    int n = 0;
    cJSON_ArrayForEach(it, pods)
    {
        n += !strcmp(cJSON_GetObjectItem(it, "namespace")->valuestring, ns) &&
             !strcmp(cJSON_GetObjectItem(it, "name")->valuestring, name);
    }
    return n;
}

/* Checks that entry e lists exactly the victims ns/name on node, in order (NULL-terminated). */
static void assert_victims(const cJSON *e, const char *node, const char *const *names)
{
    const cJSON *victims = cJSON_GetObjectItem(e, "victims");
    cr_assert(cJSON_IsArray(victims), "no victims array");
    int n = 0;
    while (names[n])
        n++;
    cr_assert_eq(cJSON_GetArraySize(victims), n, "victims: %d, want %d",
                 cJSON_GetArraySize(victims), n);
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(victims, i);
        cr_assert_str_eq(sim_field(v, "namespace"), "default");
        cr_assert_str_eq(sim_field(v, "name"), names[i]);
        cr_assert_str_eq(sim_field(v, "node"), node);
    }
}

Test(preemption, high_priority_pod_evicts_the_low_priority_one_and_takes_its_node)
{
    cJSON *doc = sim_json("--cluster " FIX "preempt_basic.yaml");
    const cJSON *first = pod_attempt(doc, "default", "high", 0);
    cr_assert_str_eq(sim_field(first, "result"), "Unschedulable");
    /* PostFilter succeeded: v1.37 appends its message (Evaluator.Preempt's Success status) to
     * the FitError; v1.34 left it out. Compared with the real kube-scheduler v1.37.2. */
    cr_assert_str_eq(sim_field(first, "message"),
                     "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential "
                     "placement for pod on node only, preempting 1 victims");
    cr_assert_str_eq(sim_field(first, "nominatedNode"), "only");
    assert_victims(first, "only", (const char *const[]){"low", NULL});
    const cJSON *last = pod_attempt(doc, "default", "high", -1);
    cr_assert_str_eq(sim_field(last, "result"), "Scheduled");
    cr_assert_str_eq(sim_field(last, "node"), "only");
    cr_assert_eq(attempts(doc, "default", "high"), 2);
    cJSON_Delete(doc);
}

Test(preemption, pod_protected_by_a_pdb_is_reprieved_first)
{
    cJSON *doc = sim_json("--cluster " FIX "preempt_pdb.yaml");
    /* "guarded" started later, so without its budget it would be the one evicted. */
    const cJSON *first = pod_attempt(doc, "default", "fit", 0);
    cr_assert_str_eq(sim_field(first, "nominatedNode"), "pair");
    assert_victims(first, "pair", (const char *const[]){"plain", NULL});
    cr_assert_str_eq(sim_field(pod_attempt(doc, "default", "fit", -1), "node"), "pair");
    cJSON_Delete(doc);
}

Test(preemption, node_without_pdb_violations_is_preferred)
{
    cJSON *doc = sim_json("--cluster " FIX "preempt_pdb.yaml");
    /* "db-0" on "a" has the lower priority, but evicting it would violate its budget. */
    const cJSON *first = pod_attempt(doc, "default", "wide", 0);
    cr_assert_str_eq(sim_field(first, "result"), "Unschedulable");
    cr_assert_str_eq(sim_field(first, "nominatedNode"), "b");
    assert_victims(first, "b", (const char *const[]){"web-0", NULL});
    const cJSON *last = pod_attempt(doc, "default", "wide", -1);
    cr_assert_str_eq(sim_field(last, "result"), "Scheduled");
    cr_assert_str_eq(sim_field(last, "node"), "b");
    cJSON_Delete(doc);
}

Test(preemption, candidate_with_the_least_important_victims_is_picked)
{
    /* Same answer whatever the random offset of the dry run. */
    for (int seed = 1; seed <= 4; seed++) {
        char args[512];
        snprintf(args, sizeof(args), "--seed %d --cluster " FIX "preempt_pick.yaml", seed);
        cJSON *doc = sim_json(args);
        const cJSON *first = pod_attempt(doc, "default", "big", 0);
        cr_assert_str_eq(sim_field(first, "nominatedNode"), "q", "seed %d", seed);
        assert_victims(first, "q", (const char *const[]){"q-1", NULL});
        cr_assert_str_eq(sim_field(pod_attempt(doc, "default", "big", -1), "node"), "q");
        cJSON_Delete(doc);
    }
}

Test(preemption, min_candidate_nodes_bounds_the_dry_run_from_a_random_offset)
{
    /* minCandidateNodesAbsolute 1: the first candidate found wins, and where the search starts
     * depends on the seed. */
    int seen[3] = {0, 0, 0};
    for (int seed = 1; seed <= 8; seed++) {
        char args[512];
        snprintf(args, sizeof(args),
                 "--seed %d --config " FIX "preempt_config_one_candidate.yaml --cluster " FIX
                 "preempt_pick.yaml",
                 seed);
        cJSON *doc = sim_json(args);
        const char *node = sim_field(pod_attempt(doc, "default", "big", 0), "nominatedNode");
        cr_assert_not_null(node);
        cr_assert(node[0] >= 'p' && node[0] <= 'r' && node[1] == '\0', "node %s", node);
        seen[node[0] - 'p'] = 1;
        cr_assert_str_eq(sim_field(pod_attempt(doc, "default", "big", -1), "node"), node);
        cJSON_Delete(doc);
    }
    cr_assert(seen[0] + seen[1] + seen[2] >= 2, "the offset never moved");
}

Test(preemption, policy_never_does_not_preempt)
{
    cJSON *doc = sim_json("--cluster " FIX "preempt_never.yaml");
    const cJSON *e = pod_attempt(doc, "default", "polite", -1);
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable");
    cr_assert_str_eq(sim_field(e, "message"),
                     "0/1 nodes are available: 1 Insufficient cpu. "
                     "preemption: not eligible due to preemptionPolicy=Never.");
    cr_assert_null(cJSON_GetObjectItem(e, "nominatedNode"));
    cr_assert_null(cJSON_GetObjectItem(e, "victims"));
    cr_assert_eq(attempts(doc, "default", "polite"), 1);
    cJSON_Delete(doc);
}

Test(preemption, nothing_to_preempt_is_a_fit_error_of_the_dry_run)
{
    cJSON *doc = sim_json("--cluster " FIX "preempt_none.yaml");
    const cJSON *e = pod_attempt(doc, "default", "mid", -1);
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable");
    cr_assert_str_eq(sim_field(e, "message"),
                     "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated "
                     "taint(s). preemption: 0/2 nodes are available: 1 No preemption "
                     "victims found for incoming pod, 1 Preemption is not helpful for scheduling.");
    cr_assert_null(cJSON_GetObjectItem(e, "nominatedNode"));
    cJSON_Delete(doc);
}

Test(preemption, victim_still_terminating_on_the_nominated_node_blocks_a_new_preemption)
{
    cJSON *doc = sim_json("--cluster " FIX "preempt_terminating.yaml");
    const cJSON *e = pod_attempt(doc, "default", "waiting", -1);
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable");
    cr_assert_str_eq(sim_field(e, "message"),
                     "0/1 nodes are available: 1 Insufficient cpu. preemption: "
                     "not eligible due to a terminating pod on the nominated node.");
    cr_assert_null(cJSON_GetObjectItem(e, "victims"));
    cJSON_Delete(doc);
}
