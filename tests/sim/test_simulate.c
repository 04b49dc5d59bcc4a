/*
 * `kubesched simulate` end to end: runs the built binary on cluster files under
 * tests/fixtures/sim and checks whole decisions in the JSON contract of DESIGN.md.
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

Test(simulate, places_pods_and_explains_failures_in_upstream_words)
{
    cJSON *doc = sim_json("--cluster " FIX "basic.yaml");
    const cJSON *w1 = sim_pod_entry(doc, "shop", "web-1"),
                *w2 = sim_pod_entry(doc, "shop", "web-2");
    cr_assert_str_eq(sim_field(w1, "result"), "Scheduled");
    cr_assert_str_eq(sim_field(w1, "node"), "small");
    cr_assert_str_eq(sim_field(w1, "profile"), "default-scheduler");
    /* web-1 took 1.5 of small's 2 CPUs: later pods see it. */
    cr_assert_str_eq(sim_field(w2, "result"), "Unschedulable");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(w2, "node")));
    cr_assert_str_eq(sim_field(w2, "message"),
                     "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated "
                     "taint(s), "
                     "1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No "
                     "preemption victims "
                     "found for incoming pod, 2 Preemption is not helpful for scheduling.");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "ml", "trainer"), "node"), "gpu");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "ops", "admin"), "node"), "cordoned");
    cJSON_Delete(doc);
}

Test(simulate, higher_priority_pod_is_scheduled_first)
{
    cJSON *doc = sim_json("--cluster " FIX "priority.yaml");
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods");
    cr_assert_str_eq(sim_field(cJSON_GetArrayItem(pods, 0), "name"), "high");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "default", "high"), "node"), "only");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "default", "low"), "result"), "Unschedulable");
    /* The only running pod has a higher priority: preemption finds no victims (upstream wording).
     */
    cr_assert_str_eq(
        sim_field(sim_pod_entry(doc, "default", "low"), "message"),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.");
    cJSON_Delete(doc);
}

Test(simulate, pod_naming_no_profile_is_reported_not_scheduled)
{
    cJSON *doc = sim_json("--cluster " FIX "priority.yaml");
    const cJSON *lost = sim_pod_entry(doc, "default", "lost");
    cr_assert_str_eq(sim_field(lost, "result"), "Error");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(lost, "profile")));
    cr_assert(strstr(sim_field(lost, "message"),
                     "no profile has schedulerName \"some-other-scheduler\""));
    cJSON_Delete(doc);
}

Test(simulate, reads_kubectl_list_json_and_counts_running_pods)
{
    /* tiny allows 2 pods; one runs there, a Succeeded one holds nothing. */
    cJSON *doc = sim_json("--cluster " FIX "podcount.json");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "default", "a"), "node"), "tiny");
    cr_assert_str_eq(
        sim_field(sim_pod_entry(doc, "default", "b"), "message"),
        "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "pods")), 2,
                 "running pods are not attempts");
    cJSON_Delete(doc);
}

Test(simulate, explain_gives_filter_outcomes_scores_and_weighted_sums)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "basic.yaml");
    const cJSON *w1 = sim_pod_entry(doc, "shop", "web-1");
    const cJSON *filter = cJSON_GetObjectItem(w1, "filter");
    cr_assert_not_null(filter);
    cr_assert_str_eq(sim_field(cJSON_GetObjectItem(filter, "small"), "NodeResourcesFit"), "passed");
    cr_assert_str_eq(sim_field(cJSON_GetObjectItem(filter, "gpu"), "TaintToleration"),
                     "node(s) had untolerated taint(s)");
    cr_assert_str_eq(sim_field(cJSON_GetObjectItem(filter, "cordoned"), "NodeUnschedulable"),
                     "node(s) were unschedulable");
    /* Only one feasible node: taken without scoring, as upstream. */
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(w1, "score")), 0);
    cJSON_Delete(doc);
}

Test(simulate, explain_final_score_is_the_weighted_sum)
{
    cJSON *doc = sim_json("--explain --cluster " FIX "spread.yaml");
    const cJSON *p = sim_pod_entry(doc, "default", "p1");
    const cJSON *score = cJSON_GetObjectItem(p, "score"),
                *final = cJSON_GetObjectItem(p, "finalScore"), *n;
    cr_assert_eq(cJSON_GetArraySize(final), 2);
    cJSON_ArrayForEach(n, score)
    {
        /* default weights: TaintToleration 3, NodeAffinity / PodTopologySpread / InterPodAffinity
         * 2, the other Score plugins 1 */
        double sum = 0;
        const cJSON *plugin;
        cJSON_ArrayForEach(plugin, n)
        {
            int w = !strcmp(plugin->string, "TaintToleration") ? 3
                    : (!strcmp(plugin->string, "NodeAffinity") ||
                       !strcmp(plugin->string, "PodTopologySpread") ||
                       !strcmp(plugin->string, "InterPodAffinity"))
                        ? 2
                        : 1;
            sum += w * plugin->valuedouble;
        }
        cr_assert_eq(cJSON_GetObjectItem(final, n->string)->valuedouble, sum, "%s", n->string);
    }
    /* big: cpu (8000-1000)/8000 = 87, memory (16Gi - 1Gi)/16Gi = 93 -> 90; small: 50 and 75 -> 62
     */
    cr_assert_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(score, "big"), "NodeResourcesFit")->valuedouble,
        90);
    cr_assert_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(score, "small"), "NodeResourcesFit")->valuedouble,
        62);
    cr_assert_str_eq(sim_field(p, "node"), "big");
    cJSON_Delete(doc);
}

Test(simulate, same_seed_same_output)
{
    char *a, *b, err[1024];
    cr_assert_eq(
        sim_run("simulate -o json --seed 7 --cluster " FIX "ties.yaml", &a, err, sizeof(err)), 0,
        "%s", err);
    cr_assert_eq(
        sim_run("simulate -o json --seed 7 --cluster " FIX "ties.yaml", &b, err, sizeof(err)), 0,
        "%s", err);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
}

Test(simulate, invalid_quantity_names_file_object_and_field)
{
    char *out, err[2048];
    int rc = sim_run("simulate --cluster " FIX "badquantity.yaml", &out, err, sizeof(err));
    cr_assert_eq(rc, 1);
    cr_assert(strstr(err, "badquantity.yaml"), "%s", err);
    cr_assert(strstr(err, "spec.containers[0].resources.requests.cpu: invalid quantity \"two\""),
              "%s", err);
    free(out);
}

Test(simulate, missing_cluster_file_is_a_clear_error)
{
    char *out, err[2048];
    int rc = sim_run("simulate --cluster /nonexistent/cluster.yaml", &out, err, sizeof(err));
    cr_assert_eq(rc, 1);
    cr_assert(strstr(err, "/nonexistent/cluster.yaml: cannot open"), "%s", err);
    free(out);
}

Test(simulate, table_output_lists_decisions)
{
    char *out, err[2048];
    cr_assert_eq(sim_run("simulate --cluster " FIX "priority.yaml", &out, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert(strstr(out, "POD"), "%s", out);
    cr_assert(strstr(out, "default/high"), "%s", out);
    cr_assert(strstr(out, "Scheduled"), "%s", out);
    cr_assert(
        strstr(
            out,
            "2 attempts: 1 scheduled, 1 unschedulable, 0 errors, 1 pods with no matching profile"),
        "%s", out);
    free(out);
}

Test(simulate, bad_flag_is_a_usage_error)
{
    char *out, err[2048];
    cr_assert_eq(
        sim_run("simulate --cluster " FIX "priority.yaml --output xml", &out, err, sizeof(err)), 2);
    cr_assert(strstr(err, "valid values are table and json"), "%s", err);
    free(out);
}

/* A Namespace whose metadata.labels is a list crashed the store (NULL write); it is refused as
 * the API server refuses it: exit 1, the file, the position, the object and the field named. */
Test(simulate, namespace_labels_list_is_an_error_not_a_crash)
{
    char *out, err[2048];
    int rc = sim_run("simulate --cluster " FIX "badnslabels.yaml", &out, err, sizeof(err));
    cr_assert_eq(rc, 1, "rc %d: %s", rc, err);
    cr_assert(strstr(err, "badnslabels.yaml"), "%s", err);
    cr_assert(strstr(err, "badnslabels.yaml:3:21: error: Namespace x: json: cannot unmarshal array "
                          "into Go struct field ObjectMeta.metadata.labels of type "
                          "map[string]string"),
              "%s", err);
    free(out);
}

/* A cluster without Pods: nothing to sort, and qsort(NULL, 0, ...) is undefined behaviour that
 * UBSan aborts on (the ASan+UBSan build of the binary runs here too). */
Test(simulate, cluster_without_pods_reports_nothing)
{
    cJSON *doc = sim_json("--cluster " FIX "nodeonly.yaml");
    cr_assert(cJSON_IsArray(doc) || cJSON_IsObject(doc));
    cJSON_Delete(doc);
}

/* Two running pods of cpu 1e19 on an 8-CPU node: the sum of their requests saturates (it
 * wrapped negative, and the 4-CPU pod was Scheduled on the full node). startTime in year 9999
 * (past int64 nanoseconds) is clamped; UBSan in the sanitized build reports either overflow. */
Test(simulate, huge_requests_saturate_and_the_node_stays_full)
{
    cJSON *doc = sim_json("--cluster " FIX "hugecpu.yaml");
    const cJSON *e = sim_pod_entry(doc, "default", "pending");
    cr_assert_not_null(e);
    cr_assert_str_eq(sim_field(e, "result"), "Unschedulable");
    cr_assert(strstr(sim_field(e, "message"), "Insufficient cpu"), "%s", sim_field(e, "message"));
    cJSON_Delete(doc);
}
