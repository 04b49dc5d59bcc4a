/*
 * `kubesched simulate` with extended resources backed by DRA (DRAExtendedResource,
 * tests/fixtures/sim/dra_extended.yaml): a pod asking for example.com/gpu gets devices through
 * DRA on the node whose allocatable lacks the resource and through the device plugin on the node
 * that lists it; PreBind files the claim under a generated name and reports
 * status.extendedResourceClaimStatus (the JSON's "extendedResourceClaim", an addition to the
 * output contract); an init container reuses the container's request; a claim left from an earlier
 * attempt is rejected by Filter and deleted by PostFilter, and its deletion requeues the pods
 * waiting for a device.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/dra_extended.yaml"

static const cJSON *attempt(const cJSON *doc, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "pods"), i);
}

static char *print(const cJSON *j) { return cJSON_PrintUnformatted(j); }

Test(dra_extended_sim, placements_and_messages)
{
    cJSON *doc = sim_json("--cluster " FIX);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "pods")), 7);
    static const char *const want[][3] = {
        {"two-gpus", "Scheduled", "dra-node"}, {"one-gpu", "Scheduled", "dp-node"},
        {"fpga", "Scheduled", "dra-node"},     {"late-gpu", "Unschedulable", NULL},
        {"stale", "Unschedulable", NULL},      {"late-gpu", "Scheduled", "dra-node"},
        {"stale", "Unschedulable", NULL},
    };
    for (int i = 0; i < 7; i++) {
        const cJSON *e = attempt(doc, i);
        cr_assert_str_eq(sim_field(e, "name"), want[i][0], "attempt %d", i);
        cr_assert_str_eq(sim_field(e, "result"), want[i][1], "attempt %d: %s", i,
                         sim_field(e, "message"));
        if (want[i][2])
            cr_assert_str_eq(sim_field(e, "node"), want[i][2], "attempt %d", i);
    }
    cr_assert_str_eq(sim_field(attempt(doc, 3), "message"),
                     "0/2 nodes are available: 1 Insufficient example.com/gpu, 1 cannot allocate "
                     "all claims. preemption: 0/2 nodes are available: 1 No preemption victims "
                     "found for incoming pod, 1 Preemption is not helpful for scheduling.");
    cr_assert_str_eq(sim_field(attempt(doc, 4), "message"),
                     "0/2 nodes are available: 1 Insufficient example.com/gpu, 1 cannot schedule "
                     "extended resource claim. deletion of ResourceClaim completed, preemption: "
                     "0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 "
                     "Preemption is not helpful for scheduling.");
    /* the device plugin's GPU: no claim */
    cr_assert_null(cJSON_GetObjectItem(attempt(doc, 1), "extendedResourceClaim"));
    cJSON_Delete(doc);
}

Test(dra_extended_sim, json_reports_the_generated_claim_and_its_mappings)
{
    cJSON *doc = sim_json("--cluster " FIX);
    char *ext = print(cJSON_GetObjectItem(attempt(doc, 0), "extendedResourceClaim"));
    /* request container-0-request-1: example.com/gpu sorts after cpu among app's requests */
    cr_assert_str_eq(
        ext,
        "{\"resourceClaim\":\"two-gpus-extended-resources-bjjnl\",\"requestMappings\":[{"
        "\"containerName\":\"app\",\"resourceName\":\"example.com/gpu\",\"requestName\":"
        "\"container-0-request-1\"}],\"allocation\":{\"devices\":{\"results\":[{\"request\":"
        "\"container-0-request-1\",\"driver\":\"gpu.example.com\",\"pool\":\"dra-node\","
        "\"device\":\"gpu-0\"},{\"request\":\"container-0-request-1\",\"driver\":"
        "\"gpu.example.com\",\"pool\":\"dra-node\",\"device\":\"gpu-1\"}]},\"nodeSelector\":{"
        "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
        "\"values\":[\"dra-node\"]}]}]}}}");
    free(ext);
    /* the init container shares the container's device (container 1 is app: init first) */
    ext = print(cJSON_GetObjectItem(cJSON_GetObjectItem(attempt(doc, 2), "extendedResourceClaim"),
                                    "requestMappings"));
    cr_assert_str_eq(ext, "[{\"containerName\":\"app\",\"resourceName\":\"deviceclass.resource."
                          "kubernetes.io/fpga.example.com\",\"requestName\":\"container-1-request-"
                          "0\"},{\"containerName\":\"setup\",\"resourceName\":\"deviceclass."
                          "resource.kubernetes.io/fpga.example.com\",\"requestName\":\"container-"
                          "1-request-0\"}]");
    free(ext);
    cJSON_Delete(doc);
}

Test(dra_extended_sim, table_shows_the_claim_and_devices)
{
    char *out, err[2048];
    cr_assert_eq(sim_run("simulate --cluster " FIX, &out, err, sizeof(err)), 0, "%s", err);
    cr_assert(strstr(out, "[extended resources: two-gpus-extended-resources-bjjnl -> "
                          "gpu.example.com/dra-node/gpu-0 gpu.example.com/dra-node/gpu-1]"),
              "%s", out);
    cr_assert(strstr(out, "[extended resources: late-gpu-extended-resources-hlpk9 -> "
                          "gpu.example.com/dra-node/gpu-2]"),
              "%s", out);
    free(out);
}
