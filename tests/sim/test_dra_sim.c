/*
 * `kubesched simulate` with DynamicResources (tests/fixtures/sim/dra_gpu.yaml): a claim that
 * selects an 80Gi GPU by CEL puts its pod on the one node that has such a device, whatever the
 * seed; a claim nothing satisfies is unschedulable with upstream's message; two pods that want
 * the one T4 device: the first gets it, the second waits; a claim that does not exist stops the
 * pod in PreEnqueue; PostFilter's deallocation requeues a pod (dra_dealloc.yaml). `--output json`
 * reports each bound pod's claims with their allocation (an addition to the output contract, README
 * "Dynamic resource allocation").
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/"
#define NOT_ALLOCATABLE                                                                            \
    "0/3 nodes are available: 3 cannot allocate all claims. preemption: "                          \
    "0/3 nodes are available: 3 Preemption is not helpful for scheduling."

static void expect(const cJSON *doc, const char *pod, const char *result, const char *node,
                   const char *message)
{
    const cJSON *e = sim_pod_entry(doc, "default", pod);
    cr_assert_not_null(e, "%s", pod);
    cr_assert_str_eq(sim_field(e, "result"), result, "%s: %s", pod, sim_field(e, "message"));
    if (node)
        cr_assert_str_eq(sim_field(e, "node"), node, "%s", pod);
    else
        cr_assert(cJSON_IsNull(cJSON_GetObjectItem(e, "node")), "%s was placed", pod);
    if (message)
        cr_assert_str_eq(sim_field(e, "message"), message, "%s", pod);
}

Test(dra_sim, an_80gi_gpu_claim_lands_on_the_node_with_that_device_for_every_seed)
{
    for (int seed = 1; seed <= 12; seed++) {
        char args[512];
        snprintf(args, sizeof(args), "--cluster " FIX "dra_gpu.yaml --seed %d", seed);
        cJSON *doc = sim_json(args);
        expect(doc, "trainer", "Scheduled", "gpu-big", "");
        cJSON_Delete(doc);
    }
}

Test(dra_sim, unsatisfiable_claim_competing_claims_and_a_missing_claim)
{
    cJSON *doc = sim_json("--cluster " FIX "dra_gpu.yaml");
    expect(doc, "greedy", "Unschedulable", NULL, NOT_ALLOCATABLE);
    expect(doc, "one-a", "Scheduled", "gpu-small", "");
    /* the T4 is one-a's now: one-b waits */
    expect(doc, "one-b", "Unschedulable", NULL, NOT_ALLOCATABLE);
    expect(doc, "missing", "Unschedulable", NULL, "could not find ResourceClaim \"default/nope\"");
    cJSON_Delete(doc);
}

Test(dra_sim, json_reports_each_claims_allocation)
{
    cJSON *doc = sim_json("--cluster " FIX "dra_gpu.yaml");
    const cJSON *e = sim_pod_entry(doc, "default", "trainer");
    char *claims = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "claims"));
    cr_assert_str_eq(
        claims,
        "[{\"name\":\"gpu\",\"resourceClaim\":\"big\",\"allocation\":{\"devices\":{\"results\":[{"
        "\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"gpu-big\",\"device\":"
        "\"h100-0\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
        "\"metadata.name\",\"operator\":\"In\",\"values\":[\"gpu-big\"]}]}]}}}]");
    free(claims);
    /* not for a pod that was not bound */
    cr_assert_null(cJSON_GetObjectItem(sim_pod_entry(doc, "default", "one-b"), "claims"));
    cJSON_Delete(doc);
}

Test(dra_sim, table_shows_the_devices)
{
    char *out, err[2048];
    cr_assert_eq(sim_run("simulate --cluster " FIX "dra_gpu.yaml", &out, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert(strstr(out, "[claims: gpu -> gpu.example.com/gpu-big/h100-0]"), "%s", out);
    cr_assert(strstr(out, "[claims: gpu -> gpu.example.com/gpu-small/t4-0]"), "%s", out);
    free(out);
}

/* PostFilter deallocates a claim allocated where the pod cannot go; the claim's update is a
 * cluster event whose hint (isSchedulableAfterClaimChange: deallocated) requeues the pod, and its
 * second attempt allocates a device where it can go. */
Test(dra_sim, postfilter_deallocation_requeues_the_pod)
{
    cJSON *doc = sim_json("--cluster " FIX "dra_dealloc.yaml");
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods");
    cr_assert_eq(cJSON_GetArraySize(pods), 2);
    const cJSON *first = cJSON_GetArrayItem(pods, 0);
    cr_assert_str_eq(sim_field(first, "result"), "Unschedulable");
    cr_assert_str_eq(sim_field(first, "message"),
                     "0/2 nodes are available: 1 node(s) didn't match Pod's node "
                     "affinity/selector, 1 resourceclaim not available on the node. deallocation "
                     "of ResourceClaim completed, preemption: 0/2 nodes are available: 2 "
                     "Preemption is not helpful for scheduling.");
    expect(doc, "mover", "Scheduled", "node-b", "");
    const cJSON *c = cJSON_GetArrayItem(
        cJSON_GetObjectItem(sim_pod_entry(doc, "default", "mover"), "claims"), 0);
    const cJSON *res = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "allocation"), "devices"),
                            "results"),
        0);
    cr_assert_str_eq(sim_field(res, "pool"), "node-b");
    cJSON_Delete(doc);
}
