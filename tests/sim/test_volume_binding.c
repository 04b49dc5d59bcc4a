/*
 * `kubesched simulate` with VolumeBinding in the default profile (issue 11): a claim bound to a PV
 * pinned to zone b keeps its pod on zone b's node for every seed (the first example, here
 * without zone labels on the PV, so that VolumeBinding alone decides); a bound PV no node matches,
 * and an unbound Immediate claim, give upstream's messages; a WaitForFirstConsumer claim with a
 * matching static PV is bound to it by PreBind (reported in "volumes", and the in-memory claim is
 * bound for the pods after it), one with no PV nor provisioner is refused as upstream refuses it.
 * volume_provision.yaml: claims left to a provisioner get the selected node; pods sharing a
 * claim follow it; a StatefulSet-like set takes one PV each. Without VolumeBinding in the
 * profile, kubesched's guard refuses pods with claims.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/"
#define NOT_HELPFUL                                                                                \
    "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."

static void expect_refused(const cJSON *doc, const char *name, const char *message)
{
    const cJSON *e = sim_pod_entry(doc, "default", name);
    cr_expect_str_eq(sim_field(e, "result"), "Unschedulable", "%s", name);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(e, "node")), "%s was placed", name);
    cr_expect_str_eq(sim_field(e, "message"), message, "%s", name);
}

Test(volume_binding_sim, bound_pv_node_affinity_keeps_the_pod_in_zone_b_for_every_seed)
{
    for (int seed = 1; seed <= 24; seed++) {
        char args[512];
        snprintf(args, sizeof(args), "--cluster " FIX "volume_binding.yaml --seed %d", seed);
        cJSON *doc = sim_json(args);
        const cJSON *pinned = sim_pod_entry(doc, "default", "pinned");
        cr_assert_str_eq(sim_field(pinned, "result"), "Scheduled", "seed %d", seed);
        cr_assert_str_eq(sim_field(pinned, "node"), "node-b", "seed %d: the PV is in zone b", seed);
        cJSON_Delete(doc);
    }
}

Test(volume_binding_sim, upstreams_messages_and_a_static_pv_bound_by_prebind)
{
    cJSON *doc = sim_json("--cluster " FIX "volume_binding.yaml");
    expect_refused(doc, "nowhere",
                   "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node "
                   "affinity. " NOT_HELPFUL);
    /* Rejected in PreFilter: DynamicResources' PostFilter (before DefaultPreemption, as in
     * v1.37's default profile) finds no state of its own and ends PostFilter with the Error
     * "not found", so no preemption is tried (kube-scheduler v1.37.2 says the same). */
    expect_refused(doc, "immediate",
                   "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                   "not found");
    /* the only PV that fits wants-local is on node-a: PreBind binds it there */
    const cJSON *e = sim_pod_entry(doc, "default", "wffc-static");
    cr_expect_str_eq(sim_field(e, "result"), "Scheduled");
    cr_expect_str_eq(sim_field(e, "node"), "node-a");
    char *v = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "volumes"));
    cr_expect_str_eq(v, "[{\"claim\":\"wants-local\",\"persistentVolume\":\"pv-free-a\"}]");
    free(v);
    expect_refused(doc, "wffc-none",
                   "0/2 nodes are available: 2 node(s) didn't find available persistent volumes "
                   "to bind. " NOT_HELPFUL);
    cJSON_Delete(doc);
}

Test(volume_binding_sim, without_volume_binding_the_guard_refuses_pods_with_claims)
{
    cJSON *doc = sim_json("--cluster " FIX "volume_binding.yaml --config " FIX
                          "volume_binding_disabled.yaml");
    static const char *const all[] = {"pinned", "nowhere", "immediate", "wffc-static", "wffc-none"};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        const cJSON *e = sim_pod_entry(doc, "default", all[i]);
        cr_expect_str_eq(sim_field(e, "result"), "Unschedulable", "%s", all[i]);
        cr_expect(cJSON_IsNull(cJSON_GetObjectItem(e, "node")), "%s was placed", all[i]);
        const char *m = sim_field(e, "message");
        cr_expect(m && strstr(m, "which only the VolumeBinding plugin can place"), "%s: %s", all[i],
                  m ? m : "(none)");
    }
    cJSON_Delete(doc);
}

/* PreBind's writes change the in-memory cluster for the pods after: no PV taken twice, a shared
 * claim follows the node selected for it, a selected node in flight is honoured. */
Test(volume_binding_sim, prebind_binds_one_pv_each_and_claims_follow_their_selected_node)
{
    for (int seed = 1; seed <= 8; seed++) {
        char args[512];
        snprintf(args, sizeof(args), "--cluster " FIX "volume_provision.yaml --seed %d", seed);
        cJSON *doc = sim_json(args);
        const char *pvs[3] = {NULL, NULL, NULL};
        for (int i = 0; i < 3; i++) {
            char name[16];
            snprintf(name, sizeof(name), "web-%d", i);
            const cJSON *e = sim_pod_entry(doc, "default", name);
            cr_assert_str_eq(sim_field(e, "result"), "Scheduled", "seed %d %s", seed, name);
            const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "volumes"), 0);
            cr_assert(w, "seed %d: %s reports no volume", seed, name);
            pvs[i] = sim_field(w, "persistentVolume");
            cr_assert(pvs[i], "seed %d %s", seed, name);
            /* pv-2 is node-b's, the others node-a's */
            cr_expect_str_eq(sim_field(e, "node"),
                             strcmp(pvs[i], "pv-2") == 0 ? "node-b" : "node-a", "seed %d %s on %s",
                             seed, name, pvs[i]);
        }
        cr_expect(strcmp(pvs[0], pvs[1]) && strcmp(pvs[0], pvs[2]) && strcmp(pvs[1], pvs[2]),
                  "seed %d: a PV taken twice: %s %s %s", seed, pvs[0], pvs[1], pvs[2]);
        const cJSON *db = sim_pod_entry(doc, "default", "db");
        const cJSON *peer = sim_pod_entry(doc, "default", "db-peer");
        cr_assert_str_eq(sim_field(db, "result"), "Scheduled", "seed %d", seed);
        const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(db, "volumes"), 0);
        cr_assert(w, "seed %d: db reports no selected node", seed);
        cr_expect_str_eq(sim_field(w, "selectedNode"), sim_field(db, "node"), "seed %d", seed);
        cr_expect_str_eq(sim_field(peer, "node"), sim_field(db, "node"),
                         "seed %d: db-peer must follow its claim's selected node", seed);
        cr_expect(!cJSON_GetObjectItem(peer, "volumes"), "seed %d: nothing left to write", seed);
        cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", "cache"), "node"), "node-b",
                         "seed %d", seed);
        cJSON_Delete(doc);
    }
}

/* The table shows the same writes after the pod's outcome. */
Test(volume_binding_sim, the_table_names_the_pv_and_the_selected_node)
{
    char *out, err[4096];
    cr_assert_eq(sim_run("simulate --cluster " FIX "volume_provision.yaml", &out, err, sizeof(err)),
                 0, "%s", err);
    cr_expect(strstr(out, " [volumes: data-web-0 -> pv-1]\n"), "%s", out);
    cr_expect(strstr(out, " [volumes: db-data -> selected node node-b]\n"), "%s", out);
    free(out);
}
