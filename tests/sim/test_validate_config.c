/*
 * `kubesched validate-config` end to end: it names the kube-scheduler release whose semantics it
 * implements, then prints the v1.37 default profile (NodeName before NodeUnschedulable,
 * NodeDeclaredFeatures last, DynamicResources before it; nothing skipped as not shipped any more).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simrun.h"

Test(validate_config, states_the_kubernetes_version_and_prints_the_default_profile)
{
    char *out, err[2048];
    const char *path = "/tmp/ks-validate-config-default.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", f);
    fclose(f);
    char args[256];
    snprintf(args, sizeof(args), "validate-config %s", path);
    int rc = sim_run(args, &out, err, sizeof(err));
    remove(path);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
    cr_assert(strncmp(out, "Semantics: kube-scheduler v1.37.2 ", 34) == 0, "%s", out);
    cr_assert(strstr(out, "  Filter       NodeName, NodeUnschedulable, TaintToleration, "), "%s",
              out);
    cr_assert(strstr(out, "InterPodAffinity, DynamicResources, NodeDeclaredFeatures\n"), "%s", out);
    cr_assert(strstr(out, "Not available in kubesched yet (skipped from the default set): none\n"),
              "%s", out);
    cr_assert(strstr(out, "  PostFilter   DynamicResources, DefaultPreemption\n"), "%s", out);
    /* VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone run where upstream's v1.37
     * default profile has them: after NodeResourcesFit, before PodTopologySpread. */
    cr_assert(strstr(out, "  Filter       NodeName, NodeUnschedulable, TaintToleration, "
                          "NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions, "
                          "NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread, "
                          "InterPodAffinity, DynamicResources, NodeDeclaredFeatures\n"),
              "%s", out);
    cr_assert(strstr(out,
                     "    VolumeRestrictions: {}\n    NodeVolumeLimits: {}\n    VolumeBinding: "
                     "{\"bindTimeoutSeconds\":600,\"shape\":[{\"utilization\":0,\"score\":10},"
                     "{\"utilization\":100,\"score\":0}]}\n    VolumeZone: {}\n"),
              "%s", out);
    cr_assert(strstr(out, "  Reserve      VolumeBinding, DynamicResources\n"), "%s", out);
    free(out);
}

/* A plugin kubesched does not know, named in plugins with a pluginConfig that lacks
 * kubeschedPluginPath: the error says where the path goes. */
Test(validate_config, unknown_plugin_hints_at_kubesched_plugin_path)
{
    char *out, err[2048];
    const char *path = "/tmp/ks-validate-config-nopath.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
          "profiles:\n- schedulerName: gang\n  plugins:\n"
          "    permit: {enabled: [{name: Coscheduling}]}\n"
          "  pluginConfig:\n  - name: Coscheduling\n    args: {permitWaitingTimeSeconds: 10}\n",
          f);
    fclose(f);
    char args[256];
    snprintf(args, sizeof(args), "validate-config %s", path);
    int rc = sim_run(args, &out, err, sizeof(err));
    remove(path);
    cr_assert_neq(rc, 0);
    cr_assert(strstr(err, "profiles[0].plugins.permit: Permit \"Coscheduling\" does not exist "
                          "(registered Permit plugins: GangScheduling); if it is an out-of-tree "
                          "plugin, "
                          "name its shared object in "
                          "profiles[0].pluginConfig[0].args.kubeschedPluginPath"),
              "%s", err);
    free(out);
}
