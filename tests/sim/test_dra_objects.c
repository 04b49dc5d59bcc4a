/*
 * `kubesched simulate` reads the DRA kinds (ResourceSlice, DeviceClass, ResourceClaim,
 * DeviceTaintRule, resource.k8s.io/v1) from the cluster file into its store, checked as the API
 * server would (core/api/dra_objects.c): none is counted as unread, nothing warns, and a bad one
 * is refused at its field with the file's line and column. Allocation itself comes with the
 * DynamicResources plugin (issue 15).
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/"

Test(dra_sim, dra_kinds_are_read_without_warnings)
{
    char *out, err[4096];
    int rc = sim_run("simulate --cluster " FIX "dra_objects.yaml", &out, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_null(strstr(err, "skipped"), "nothing skipped or warned: %s", err);
    cr_assert_null(strstr(err, "warning"), "%s", err);
    free(out);
    cJSON *doc = sim_json("--cluster " FIX "dra_objects.yaml");
    cr_assert_str_eq(sim_field(sim_pod_entry(doc, "default", "web"), "result"), "Scheduled");
    cJSON_Delete(doc);
}

/* A file's object is refused with upstream's message where the field is. */
static void expect_refused(const char *yaml, const char *want)
{
    const char *path = "/tmp/ks-sim-bad-dra.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
          "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"
          "---\n",
          f);
    fputs(yaml, f);
    fclose(f);
    char *out, err[4096];
    int rc = sim_run("simulate --cluster /tmp/ks-sim-bad-dra.yaml", &out, err, sizeof(err));
    remove(path);
    cr_assert_neq(rc, 0);
    cr_assert(strstr(err, want), "want %s in: %s", want, err);
    free(out);
}

Test(dra_sim, a_bad_dra_object_is_refused_at_its_field)
{
    expect_refused("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                   "spec:\n"
                   "  driver: gpu.example.com\n"
                   "  nodeName: n1\n"
                   "  pool:\n"
                   "    name: n1\n"
                   "    resourceSliceCount: 0\n",
                   "ks-sim-bad-dra.yaml:14:5: error: ResourceSlice s: "
                   "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero");
    expect_refused("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                   "metadata: {name: c, namespace: default}\n"
                   "spec:\n"
                   "  devices:\n"
                   "    requests:\n"
                   "    - name: gpu\n"
                   "      exactly: {deviceClassName: gpu, allocationMode: All, count: 2}\n",
                   "ResourceClaim default/c: spec.devices.requests[0].exactly.count: Invalid "
                   "value: 2: must not be specified when allocationMode is 'All'");
}
