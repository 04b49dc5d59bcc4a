/* NodeDeclaredFeatures: upstream nodedeclaredfeatures_test.go (TestPreFilter, TestFilter,
 * TestEnqueueExtensionsNodeUpdate, TestIsSchedulableAfterTargetPodUpdate, v1.37) with the real
 * features of component-helpers v0.37.2 in place of its mocks, and the InferForScheduling cases of
 * the three features that can be needed (restartallcontainers, usernamespaceshostnetwork,
 * volumebindmountoptions feature tests). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sched/framework.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_declared_features;

TestSuite(node_declared_features, .init = th_init, .fini = th_fini);

#define REASON "node(s) didn't match Pod's required features"
#define RESTART_RULE                                                                               \
    "'restartPolicyRules':[{'action':'RestartAllContainers','exitCodes':{'operator':'In',"         \
    "'values':[42]}}]"
#define BIND_MOUNT "'volumeMounts':[{'name':'v','mountPath':'/v','bindMountOptions':['rro']}]"

static ks_pod *pod_spec(const char *spec_extra, const char *container_extra)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
             "'spec':{%s%s'containers':[{'name':'c','image':'pause'%s%s}]}}",
             spec_extra ? spec_extra : "", spec_extra ? "," : "", container_extra ? "," : "",
             container_extra ? container_extra : "");
    return th_pod(json);
}

/* A cluster with one node "n" declaring the given JSON list (NULL: no declaredFeatures). */
static th_cluster *node_with(const char *features)
{
    char json[1024];
    th_cluster *c = th_cluster_new();
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'n'},'status':{'allocatable':{'pods':'110'}%s%s}}",
             features ? ",'declaredFeatures':" : "", features ? features : "");
    th_cluster_add_node(c, json);
    return c;
}

/* PreFilter alone, for pods that need nothing (its Skip path touches no cycle state). */
static ks_code pre_filter(ks_pod *pod)
{
    ks_status st;
    ks_prefilter_result r = {0};
    ks__status_reset(&st);
    ks_code code = ks_plugin_node_declared_features.pre_filter(NULL, NULL, pod, &r, &st);
    cr_assert_eq(r.used, 0, "no PreFilterResult");
    return code;
}

static ks_code run(const char *features, ks_pod *pod, char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_declared_features, NULL);
    return th_filter(p, node_with(features), pod, "n", r, len);
}

/* ---- PreFilter: what InferForPodScheduling needs -------------------------------------------- */

Test(node_declared_features, pod_with_no_requirements_is_skipped)
{
    cr_assert_eq(pre_filter(pod_spec(NULL, NULL)), KS_SKIP);
    /* hostNetwork alone, or hostUsers false alone, needs nothing. */
    cr_assert_eq(pre_filter(pod_spec("'hostNetwork':true", NULL)), KS_SKIP);
    cr_assert_eq(pre_filter(pod_spec("'hostUsers':false", NULL)), KS_SKIP);
    cr_assert_eq(pre_filter(pod_spec("'hostNetwork':true,'hostUsers':true", NULL)), KS_SKIP);
    /* A restart rule with another action, an empty bindMountOptions. */
    cr_assert_eq(pre_filter(pod_spec(NULL, "'restartPolicyRules':[{'action':'Restart'}]")),
                 KS_SKIP);
    cr_assert_eq(pre_filter(pod_spec(
                     NULL, "'volumeMounts':[{'name':'v','mountPath':'/v','bindMountOptions':[]}]")),
                 KS_SKIP);
}

Test(node_declared_features, empty_node_passes_a_pod_without_requirements)
{
    char r[256];
    cr_assert_eq(run(NULL, pod_spec(NULL, NULL), r, sizeof(r)), KS_SUCCESS);
}

/* ---- Filter ---------------------------------------------------------------------------------- */

Test(node_declared_features, node_matches_requirements)
{
    char r[256];
    cr_assert_eq(
        run("['RestartAllContainersOnContainerExits']", pod_spec(NULL, RESTART_RULE), r, sizeof(r)),
        KS_SUCCESS);
}

Test(node_declared_features, node_does_not_match_requirements)
{
    char r[256];
    cr_assert_eq(run("['VolumeBindMountOptions']", pod_spec(NULL, RESTART_RULE), r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, REASON);
}

Test(node_declared_features, node_with_more_features_than_required)
{
    char r[256];
    cr_assert_eq(run("['RestartAllContainersOnContainerExits','UserNamespacesHostNetworkSupport',"
                     "'VolumeBindMountOptions']",
                     pod_spec("'hostNetwork':true,'hostUsers':false", NULL), r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_declared_features, node_without_declared_features)
{
    char r[256];
    cr_assert_eq(run(NULL, pod_spec(NULL, BIND_MOUNT), r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, REASON);
    cr_assert_eq(run("[]", pod_spec(NULL, BIND_MOUNT), r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
}

Test(node_declared_features, node_with_some_but_not_all_required_features)
{
    char r[256];
    ks_pod *p = pod_spec("'hostNetwork':true,'hostUsers':false", RESTART_RULE "," BIND_MOUNT);
    cr_assert_eq(
        run("['RestartAllContainersOnContainerExits','VolumeBindMountOptions']", p, r, sizeof(r)),
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, REASON);
    cr_assert_eq(run("['RestartAllContainersOnContainerExits','UserNamespacesHostNetworkSupport',"
                     "'VolumeBindMountOptions']",
                     p, r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_declared_features, init_and_ephemeral_containers_count)
{
    char r[256];
    /* restartallcontainers looks at init containers; volumebindmountoptions at init and
     * ephemeral containers too. */
    ks_pod *init_rule = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                               "'spec':{'initContainers':[{'name':'i','image':'pause'," RESTART_RULE
                               "}],'containers':[{'name':'c','image':'pause'}]}}");
    cr_assert_eq(run("[]", init_rule, r, sizeof(r)), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    ks_pod *eph = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                         "'spec':{'containers':[{'name':'c','image':'pause'}],"
                         "'ephemeralContainers':[{'name':'e','image':'busybox'," BIND_MOUNT "}]}}");
    cr_assert_eq(run("[]", eph, r, sizeof(r)), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(run("['VolumeBindMountOptions']", eph, r, sizeof(r)), KS_SUCCESS);
}

Test(node_declared_features, unknown_node_features_are_ignored)
{
    /* FeatureMapper.TryMap drops names the registry does not know. */
    char r[256];
    cr_assert_eq(run("['AFeatureFromTheFuture','VolumeBindMountOptions','ZZZ']",
                     pod_spec(NULL, BIND_MOUNT), r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_declared_features, features_are_matched_by_a_sorted_walk)
{
    /* The API server keeps declaredFeatures sorted; TryMap walks them in step with the sorted
     * registry, so a name listed after a greater one is not seen. */
    char r[256];
    ks_pod *p = pod_spec("'hostNetwork':true,'hostUsers':false", RESTART_RULE);
    cr_assert_eq(run("['UserNamespacesHostNetworkSupport','RestartAllContainersOnContainerExits']",
                     p, r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(run("['RestartAllContainersOnContainerExits','UserNamespacesHostNetworkSupport']",
                     p, r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_declared_features, features_that_never_infer_for_scheduling_do_not_filter)
{
    /* Pod-level resources, memory-backed emptyDir, claims: only updates need those features. */
    char r[256];
    ks_pod *p = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
                       "'spec':{'resources':{'requests':{'cpu':'1'}},"
                       "'volumes':[{'name':'m','emptyDir':{'medium':'Memory','sizeLimit':'1Gi'}}],"
                       "'initContainers':[{'name':'i','image':'pause',"
                       "'resources':{'requests':{'cpu':'1'}}}],"
                       "'containers':[{'name':'c','image':'pause'}]}}");
    cr_assert_eq(pre_filter(p), KS_SKIP);
    cr_assert_eq(run(NULL, p, r, sizeof(r)), KS_SUCCESS);
}

/* ---- queueing hints ----------------------------------------------------------------------------
 */

static ks_queueing_hint_fn hint_for(ks_event_resource res)
{
    ks_cluster_event_hint ev[4];
    size_t n = ks_plugin_node_declared_features.events_with_hints(NULL, ev, 4);
    cr_assert_eq(n, 2);
    for (size_t i = 0; i < n; i++)
        if (ev[i].event.resource == res)
            return ev[i].hint;
    cr_assert_fail("no hint for resource %d", (int)res);
    return NULL;
}

Test(node_declared_features, registers_node_and_target_pod_events)
{
    ks_cluster_event_hint ev[4];
    cr_assert_eq(ks_plugin_node_declared_features.events_with_hints(NULL, ev, 4), 2);
    cr_assert_eq(ev[0].event.resource, KS_RES_NODE);
    cr_assert_eq(ev[0].event.actions, (uint32_t)(KS_ACT_ADD | KS_ACT_UPDATE_NODE_DECLARED_FEATURE));
    cr_assert_eq(ev[1].event.resource, KS_RES_TARGET_POD);
    cr_assert_eq(ev[1].event.actions, (uint32_t)KS_ACT_UPDATE_ANY);
}

static const ks_node *node_obj(const char *features)
{
    char json[512];
    snprintf(json, sizeof(json), "{'metadata':{'name':'node-1'},'status':{'declaredFeatures':%s}}",
             features);
    return th_node(json);
}

Test(node_declared_features, node_hint)
{
    ks_queueing_hint_fn h = hint_for(KS_RES_NODE);
    ks_pod *p = pod_spec(NULL, RESTART_RULE);
    ks_event_info add = {.event = {KS_RES_NODE, KS_ACT_ADD},
                         .new_node = node_obj("['RestartAllContainersOnContainerExits']")};
    cr_assert_eq(h(NULL, p, &add), KS_QUEUE);
    ks_event_info added = {.event = {KS_RES_NODE, KS_ACT_UPDATE_NODE_DECLARED_FEATURE},
                           .old_node = node_obj("[]"),
                           .new_node = node_obj("['RestartAllContainersOnContainerExits']")};
    cr_assert_eq(h(NULL, p, &added), KS_QUEUE);
    ks_event_info same = {.event = {KS_RES_NODE, KS_ACT_UPDATE_NODE_DECLARED_FEATURE},
                          .old_node = node_obj("['RestartAllContainersOnContainerExits']"),
                          .new_node = node_obj("['RestartAllContainersOnContainerExits']")};
    cr_assert_eq(h(NULL, p, &same), KS_QUEUE_SKIP);
}

Test(node_declared_features, target_pod_hint)
{
    ks_queueing_hint_fn h = hint_for(KS_RES_TARGET_POD);
    ks_pod *none = pod_spec(NULL, NULL), *rule = pod_spec(NULL, RESTART_RULE);
    ks_event_info adds = {
        .event = {KS_RES_TARGET_POD, KS_ACT_UPDATE_ANY}, .old_pod = none, .new_pod = rule};
    cr_assert_eq(h(NULL, rule, &adds), KS_QUEUE);
    ks_event_info removes = {
        .event = {KS_RES_TARGET_POD, KS_ACT_UPDATE_ANY}, .old_pod = rule, .new_pod = none};
    cr_assert_eq(h(NULL, none, &removes), KS_QUEUE);
    ks_event_info same = {.event = {KS_RES_TARGET_POD, KS_ACT_UPDATE_ANY},
                          .old_pod = rule,
                          .new_pod = pod_spec("'hostNetwork':true", RESTART_RULE)};
    cr_assert_eq(h(NULL, rule, &same), KS_QUEUE_SKIP);
}
