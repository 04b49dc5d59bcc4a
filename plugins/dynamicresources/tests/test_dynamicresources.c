/*
 * DynamicResources: the cases of upstream's dynamicresources_test.go (TestPlugin) that fit
 * kubesched (no binding conditions, no API-server fakes; extended resources backed by DRA:
 * test_dynamicresources_extended.c), with upstream's
 * objects (pod "my-pod" with claim "my-pod-claim", class "my-resource-class", driver
 * "some-driver", node "worker"), codes and messages; plus the in-flight allocations a later pod
 * sees (Reserve without PreBind), PreBind's write to the in-memory claim, PostFilter's
 * deallocation and the prioritized-list score.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dra_objects.h"
#include "api/intern.h"
#include "api/store.h"
#include "harness.h"
#include "sched/dra_manager.h"
#include "sched/framework.h"

extern const ks_plugin_desc ks_plugin_dynamic_resources;

TestSuite(dynamic_resources, .init = th_init, .fini = th_fini);

#define UU KS_UNSCHEDULABLE_AND_UNRESOLVABLE
#define DRIVER "some-driver"
#define CLASS "my-resource-class"

/* ---- objects -------------------------------------------------------------------------------- */

static const char *const WORKER = "{'metadata':{'name':'worker','labels':{'kubernetes.io/"
                                  "hostname':'worker','nodename':'worker'}}}";
static const char *const WORKER2 = "{'metadata':{'name':'worker-2','labels':{'kubernetes.io/"
                                   "hostname':'worker-2','nodename':'worker-2'}}}";

static void device_class(th_cluster *c)
{
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass',"
                             "'metadata':{'name':'" CLASS "'}}");
}

/* A slice of `devices` (JSON list) on node. */
static void slice(th_cluster *c, const char *name, const char *node, const char *devices)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':'%s'},"
             "'spec':{'driver':'" DRIVER "','nodeName':'%s','pool':{'name':'%s','generation':1,"
             "'resourceSliceCount':1},'devices':%s}}",
             name, node, node, devices);
    th_cluster_add_object(c, json);
}

/* A claim with one `exactly` request req-1 of the class (extra: members of the object). */
static void claim(th_cluster *c, const char *name, const char *uid, const char *extra)
{
    char json[3072];
    snprintf(json, sizeof(json),
             "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':'%s',"
             "'namespace':'default','uid':'%s'%s},'spec':{'devices':{'requests':[{'name':'req-1',"
             "'exactly':{'deviceClassName':'" CLASS "'}}]}}%s}",
             name, uid,
             extra && strstr(extra, "'deletionTimestamp'") ? ",'deletionTimestamp':'2026-01-01T"
                                                             "00:00:00Z'"
                                                           : "",
             extra && !strstr(extra, "'deletionTimestamp'") ? extra : "");
    th_cluster_add_object(c, json);
}

/* The claim allocated on `node` (device instance-1 of its pool), reserved for `reserved`. */
static void allocated_claim(th_cluster *c, const char *name, const char *node, const char *reserved)
{
    char extra[1024];
    snprintf(extra, sizeof(extra),
             ",'status':{'allocation':{'devices':{'results':[{'request':'req-1','driver':'" DRIVER
             "','pool':'%s','device':'instance-1'}]},'nodeSelector':{'nodeSelectorTerms':[{"
             "'matchFields':[{'key':'metadata.name','operator':'In','values':['%s']}]}]}}%s}",
             node, node, reserved ? reserved : "");
    claim(c, name, "claim-uid", extra);
}

static ks_pod *pod_with(const char *name, const char *uid, const char *claims, const char *status)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'%s'},'spec':{'containers':"
             "[{'name':'c'}],'resourceClaims':%s}%s}",
             name, uid, claims, status ? status : "");
    return th_pod(json);
}

/* podWithClaimName: spec.resourceClaims[0] names my-pod-claim. */
static ks_pod *pod_with_claim_name(void)
{
    return pod_with("my-pod", "1234", "[{'name':'my-claim','resourceClaimName':'my-pod-claim'}]",
                    NULL);
}

/* podWithClaimTemplateInStatus: a template, the generated claim's name in the status. */
static ks_pod *pod_with_claim_template_in_status(void)
{
    return pod_with("my-pod", "1234",
                    "[{'name':'my-claim','resourceClaimTemplateName':'my-template'}]",
                    ",'status':{'resourceClaimStatuses':[{'name':'my-claim','resourceClaimName':"
                    "'my-pod-claim'}]}");
}

static th_cluster *cluster(void)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, WORKER);
    th_cluster_binding(c, KS_SOURCE_SIMULATED, NULL, NULL);
    th_cluster_services(c);
    th_filter_before_reserve(1);
    return c;
}

static th_plugin *plugin(void) { return th_plugin_new(&ks_plugin_dynamic_resources, NULL); }

/* The claim as the cluster's store has it now (a reference; release with ks__draobj_unref). */
static const ks_resource_claim *stored_claim(th_cluster *c, const char *name)
{
    char key[256];
    snprintf(key, sizeof(key), "default/%s", name);
    return ks__dra_claim(ks__store_draobj(th_cluster_hooks(c)->store, KS_DK_RESOURCE_CLAIM, key));
}

/* ---- PreEnqueue ----------------------------------------------------------------------------- */

Test(dynamic_resources, empty_pod_is_skipped)
{
    th_cluster *c = cluster();
    th_plugin *p = plugin();
    ks_pod *pod = th_pod("{'metadata':{'name':'my-pod','namespace':'default','uid':'1234'},"
                         "'spec':{'containers':[{'name':'c'}]}}");
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_pre_enqueue(p, pod, r, sizeof(r)), KS_SUCCESS);
    cr_assert_eq(th_filter_steps(p, c, pod, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
                 KS_SUCCESS);
    cr_assert_eq(pre, KS_SKIP);
    /* no claims: PostFilter adds nothing to the FitError message (v1.37.2's output) */
    cr_assert_eq(th_post_filter(p, c, pod, r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, "");
}

Test(dynamic_resources, missing_claim)
{
    th_cluster *c = cluster();
    th_plugin *p = plugin();
    char r[512];
    cr_assert_eq(th_pre_enqueue(p, pod_with_claim_name(), r, sizeof(r)), UU);
    cr_assert_str_eq(r, "could not find ResourceClaim \"default/my-pod-claim\"");
    (void)c;
}

Test(dynamic_resources, deleted_claim)
{
    th_cluster *c = cluster();
    device_class(c);
    claim(c, "my-pod-claim", "claim-uid", "'deletionTimestamp'");
    char r[512];
    cr_assert_eq(th_pre_enqueue(plugin(), pod_with_claim_name(), r, sizeof(r)), UU);
    cr_assert_str_eq(r, "resourceclaim \"my-pod-claim\" is being deleted");
}

Test(dynamic_resources, claim_template_not_created_yet)
{
    th_cluster *c = cluster();
    (void)c;
    char r[512];
    ks_pod *pod = pod_with("my-pod", "1234",
                           "[{'name':'my-claim','resourceClaimTemplateName':'my-template'}]", NULL);
    cr_assert_eq(th_pre_enqueue(plugin(), pod, r, sizeof(r)), UU);
    cr_assert_str_eq(r, "pod \"default/my-pod\": ResourceClaim not created yet");
}

Test(dynamic_resources, claim_without_a_source)
{
    th_cluster *c = cluster();
    (void)c;
    char r[512];
    ks_pod *pod = pod_with("my-pod", "1234", "[{'name':'my-claim'}]", NULL);
    cr_assert_eq(th_pre_enqueue(plugin(), pod, r, sizeof(r)), UU);
    cr_assert_str_eq(
        r, "pod \"default/my-pod\", spec.resourceClaim \"my-claim\": none of the supported fields "
           "are set");
}

/* "wrong-claim": the claim named in the status was not made for this pod. */
Test(dynamic_resources, claim_of_a_template_must_belong_to_the_pod)
{
    th_cluster *c = cluster();
    device_class(c);
    claim(c, "my-pod-claim", "claim-uid",
          ",'ownerReferences':[{'apiVersion':'v1','kind':'Pod','name':'other','uid':'5678',"
          "'controller':true}]");
    char r[512];
    cr_assert_eq(th_pre_enqueue(plugin(), pod_with_claim_template_in_status(), r, sizeof(r)), UU);
    cr_assert_str_eq(r, "ResourceClaim default/my-pod-claim was not created for Pod "
                        "default/my-pod (Pod is not owner)");
}

/* Owned by the pod: PreEnqueue passes, and the claim is allocated as any other. */
Test(dynamic_resources, claim_of_a_template_owned_by_the_pod)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':"
           "'my-pod-claim','namespace':'default','uid':'claim-uid','ownerReferences':[{"
           "'apiVersion':'v1','kind':'Pod','name':'my-pod','uid':'1234','controller':true}]},"
           "'spec':{'devices':{'requests':[{'name':'req-1','exactly':{'deviceClassName':'" CLASS
           "'}}]}}}");
    char r[512], pr[512];
    ks_code pre;
    th_plugin *p = plugin();
    ks_pod *pod = pod_with_claim_template_in_status();
    cr_assert_eq(th_pre_enqueue(p, pod, r, sizeof(r)), KS_SUCCESS, "%s", r);
    cr_assert_eq(th_filter_steps(p, c, pod, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(pre, KS_SUCCESS, "%s", pr);
}

/* ---- PreFilter ------------------------------------------------------------------------------ */

Test(dynamic_resources, missing_class)
{
    th_cluster *c = cluster();
    claim(c, "my-pod-claim", "claim-uid", NULL);
    char r[512], pr[512];
    ks_code pre;
    th_filter_steps(plugin(), c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr), r,
                    sizeof(r));
    cr_assert_eq(pre, UU);
    cr_assert_str_eq(pr, "request req-1: device class " CLASS " does not exist");
}

/* A request with neither `exactly` nor `firstAvailable` (a newer API's request type) and an
 * `exactly` without a class: upstream's PreFilter messages and codes. */
Test(dynamic_resources, unknown_and_unsupported_request_types)
{
    th_cluster *c = cluster();
    device_class(c);
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':"
           "'my-pod-claim','namespace':'default','uid':'claim-uid'},'spec':{'devices':{'requests':"
           "[{'name':'req-1'}]}}}");
    char r[512], pr[512];
    ks_code pre;
    th_plugin *p = plugin();
    th_filter_steps(p, c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr), r,
                    sizeof(r));
    cr_assert_eq(pre, UU);
    cr_assert_str_eq(pr,
                     "resource claim default/my-pod-claim, request req-1: unknown request type");
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':"
           "'my-pod-claim','namespace':'default','uid':'claim-uid'},'spec':{'devices':{'requests':"
           "[{'name':'req-1','exactly':{}}]}}}");
    th_filter_steps(p, c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr), r,
                    sizeof(r));
    cr_assert_eq(pre, KS_ERROR);
    cr_assert_str_eq(pr, "request req-1: unsupported request type");
}

/* "claim-with-pending-allocation": another pod's Reserve put the claim in flight. */
Test(dynamic_resources, claim_in_flight_makes_the_pod_wait)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    claim(c, "my-pod-claim", "claim-uid", NULL);
    th_plugin *p = plugin();
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_reserve(p, c, pod_with_claim_name(), "worker", 0, r, sizeof(r)), KS_SUCCESS,
                 "%s", r);
    ks_pod *other =
        pod_with("other", "5678", "[{'name':'my-claim','resourceClaimName':'my-pod-claim'}]", NULL);
    th_filter_steps(p, c, other, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r));
    cr_assert_eq(pre, UU);
    cr_assert_str_eq(pr,
                     "resource claim default/my-pod-claim is in the process of being allocated");
}

/* ---- Filter --------------------------------------------------------------------------------- */

/* "structured-no-resources": nothing to allocate from. */
Test(dynamic_resources, no_resources)
{
    th_cluster *c = cluster();
    device_class(c);
    claim(c, "my-pod-claim", "claim-uid", NULL);
    th_plugin *p = plugin();
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(p, c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr),
                                 r, sizeof(r)),
                 UU);
    cr_assert_eq(pre, KS_SUCCESS, "%s", pr);
    cr_assert_str_eq(r, "cannot allocate all claims");
    cr_assert_eq(th_post_filter(p, c, pod_with_claim_name(), r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, "");
}

/* "structured-with-resources": allocated in Filter, in flight after Reserve, written by PreBind
 * (allocation, reservedFor, finalizer). */
Test(dynamic_resources, with_resources_prebind_writes_the_allocation)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    claim(c, "my-pod-claim", "claim-uid", NULL);
    th_plugin *p = plugin();
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(p, c, pod_with_claim_name(), "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(preflight, KS_SUCCESS);
    const ks_resource_claim *cl = stored_claim(c, "my-pod-claim");
    cr_assert_not_null(cl);
    cr_assert(cl->allocated);
    cr_assert_eq(cl->nresults, 1);
    cr_assert_str_eq(cl->results[0].request, "req-1");
    cr_assert_str_eq(cl->results[0].driver, DRIVER);
    cr_assert_str_eq(cl->results[0].pool, "worker");
    cr_assert_str_eq(cl->results[0].device, "instance-1");
    cr_assert_eq(cl->nreserved_for, 1);
    cr_assert_str_eq(cl->reserved_for[0].uid, "1234");
    cr_assert_str_eq(cl->reserved_for[0].resource, "pods");
    cr_assert_str_eq(cl->reserved_for[0].name, "my-pod");
    cr_assert_eq(cl->nfinalizers, 1);
    cr_assert_str_eq(cl->finalizers[0], "resource.kubernetes.io/delete-protection");
    /* the slice's node: a node selector on the allocation */
    cr_assert_eq(cl->nalloc_terms, 1);
    /* no longer in flight: another pod may use the (now allocated) claim */
    cr_assert_eq(ks__dra_claim_pending(th_cluster_hooks(c)->dra, "claim-uid"), 0);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* Unreserve after PreBind reserved the claim (a later binding step failed): the pod leaves
 * reservedFor again; the allocation stays (upstream's Unreserve patches reservedFor only). */
Test(dynamic_resources, unreserve_takes_the_pod_out_of_reserved_for)
{
    th_cluster *c = cluster();
    device_class(c);
    allocated_claim(c, "my-pod-claim", "worker", NULL);
    th_plugin *p = plugin();
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(p, c, pod_with_claim_name(), "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    const ks_resource_claim *cl = stored_claim(c, "my-pod-claim");
    cr_assert_eq(cl->nreserved_for, 1);
    ks__draobj_unref((ks__draobj *)&cl->h);
    cr_assert_eq(th_reserve(p, c, pod_with_claim_name(), "worker", 1, r, sizeof(r)), KS_SUCCESS,
                 "%s", r);
    cl = stored_claim(c, "my-pod-claim");
    cr_assert_eq(cl->nreserved_for, 0);
    cr_assert(cl->allocated);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* A claim two pods share: the first allocates it, the second finds it allocated (its node
 * selector points at the first's node) and is added to reservedFor. */
Test(dynamic_resources, shared_claim_is_reserved_for_both_pods)
{
    th_cluster *c = cluster();
    th_cluster_add_node(c, WORKER2);
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    claim(c, "shared", "uid-shared", NULL);
    th_plugin *p = plugin();
    ks_pod *a = pod_with("a", "uid-pod-a", "[{'name':'gpu','resourceClaimName':'shared'}]", NULL);
    ks_pod *b = pod_with("b", "uid-pod-b", "[{'name':'gpu','resourceClaimName':'shared'}]", NULL);
    char r[512], pr[512];
    ks_code pre, preflight;
    cr_assert_eq(th_pre_bind(p, c, a, "worker", &preflight, r, sizeof(r)), KS_SUCCESS, "%s", r);
    cr_assert_eq(th_filter_steps(p, c, b, "worker-2", NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "resourceclaim not available on the node");
    cr_assert_eq(th_pre_bind(p, c, b, "worker", &preflight, r, sizeof(r)), KS_SUCCESS, "%s", r);
    const ks_resource_claim *cl = stored_claim(c, "shared");
    cr_assert_eq(cl->nreserved_for, 2);
    cr_assert_str_eq(cl->reserved_for[0].uid, "uid-pod-a");
    cr_assert_str_eq(cl->reserved_for[1].uid, "uid-pod-b");
    cr_assert_eq(cl->nresults, 1);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* An allocated claim already reserved for the pod: nothing to allocate, PreBind writes nothing. */
Test(dynamic_resources, allocated_and_reserved_claim)
{
    th_cluster *c = cluster();
    device_class(c);
    allocated_claim(c, "my-pod-claim", "worker",
                    ",'reservedFor':[{'resource':'pods','name':'my-pod','uid':'1234'}]");
    th_plugin *p = plugin();
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(p, c, pod_with_claim_name(), "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    const ks_resource_claim *cl = stored_claim(c, "my-pod-claim");
    cr_assert_eq(cl->nreserved_for, 1);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* "wrong-topology": the allocation's node selector does not match; PostFilter deallocates the
 * claim, which is reserved for no one. */
Test(dynamic_resources, wrong_topology_then_deallocation)
{
    th_cluster *c = cluster();
    th_cluster_add_node(c, WORKER2);
    device_class(c);
    allocated_claim(c, "my-pod-claim", "worker-2", NULL);
    th_plugin *p = plugin();
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(p, c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr),
                                 r, sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "resourceclaim not available on the node");
    cr_assert_eq(th_filter_steps(p, c, pod_with_claim_name(), "worker-2", NULL, &pre, pr,
                                 sizeof(pr), r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(th_post_filter(p, c, pod_with_claim_name(), r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, "deallocation of ResourceClaim completed");
    const ks_resource_claim *cl = stored_claim(c, "my-pod-claim");
    cr_assert_eq(cl->allocated, 0);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* Reserved for another pod: PostFilter leaves it alone. */
Test(dynamic_resources, wrong_topology_reserved_elsewhere_is_not_deallocated)
{
    th_cluster *c = cluster();
    th_cluster_add_node(c, WORKER2);
    device_class(c);
    allocated_claim(c, "my-pod-claim", "worker-2",
                    ",'reservedFor':[{'resource':'pods','name':'other','uid':'5678'}]");
    th_plugin *p = plugin();
    char r[512];
    cr_assert_eq(th_post_filter(p, c, pod_with_claim_name(), r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, "");
}

/* ---- binding conditions (upstream's bound-claim-with-*-binding* cases) ---------------------- */

/* The claim allocated on worker's instance-1, whose result carries bindingConditions
 * [attached] and bindingFailureConditions [failed], allocated at `at`, with status.devices
 * conditions `conds` for the device (NULL: no status.devices entry). */
static void binding_claim(th_cluster *c, const char *at, const char *conds)
{
    char extra[2048], devs[1024] = "";
    if (conds)
        snprintf(devs, sizeof(devs),
                 ",'devices':[{'driver':'" DRIVER "','pool':'worker','device':'instance-1',"
                 "'conditions':[%s]}]",
                 conds);
    snprintf(extra, sizeof(extra),
             ",'status':{'allocation':{'allocationTimestamp':'%s','devices':{'results':[{"
             "'request':'req-1','driver':'" DRIVER "','pool':'worker','device':'instance-1',"
             "'bindingConditions':['attached'],'bindingFailureConditions':['failed']}]},"
             "'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name',"
             "'operator':'In','values':['worker']}]}]}}%s}",
             at, devs);
    claim(c, "my-pod-claim", "claim-uid", extra);
}

#define COND(type, status)                                                                         \
    "{'type':'" type "','status':'" status "','reason':'R','message':'m \\\"x\\\"',"               \
    "'lastTransitionTime':'2026-01-01T00:00:00Z'}"

/* An RFC 3339 time `ago` seconds before now. */
static const char *ago(int secs)
{
    static char buf[32];
    time_t t = time(NULL) - secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/* "bound-claim-with-succeeded-binding-conditions": every condition true, none failed: PreBind
 * reserves the claim and does not wait. */
Test(dynamic_resources, bound_claim_with_succeeded_binding_conditions)
{
    th_cluster *c = cluster();
    device_class(c);
    binding_claim(c, ago(5), COND("attached", "True") "," COND("failed", "False"));
    th_plugin *p = plugin();
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(p, c, pod_with_claim_name(), "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    const ks_resource_claim *cl = stored_claim(c, "my-pod-claim");
    cr_assert_eq(cl->nreserved_for, 1);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* "bound-claim-with-failed-binding": a failure condition is true: the claim is unavailable on
 * the node, and PostFilter deallocates it. */
Test(dynamic_resources, bound_claim_with_failed_binding)
{
    th_cluster *c = cluster();
    device_class(c);
    binding_claim(c, ago(5), COND("failed", "True"));
    th_plugin *p = plugin();
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(p, c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr),
                                 r, sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "resourceclaim not available on the node");
    cr_assert_eq(th_post_filter(p, c, pod_with_claim_name(), r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, "deallocation of ResourceClaim completed");
}

/* "bound-claim-with-timed-out-binding": not ready, allocated longer than bindingTimeout (600s)
 * ago: unavailable. The same claim allocated a moment ago is still waited for. */
Test(dynamic_resources, bound_claim_with_timed_out_binding)
{
    th_cluster *c = cluster();
    device_class(c);
    binding_claim(c, ago(10 * 60 + 5), "");
    th_plugin *p = plugin();
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(p, c, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr),
                                 r, sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "resourceclaim not available on the node");
    th_cluster *c2 = cluster();
    device_class(c2);
    binding_claim(c2, ago(5), "");
    cr_assert_eq(th_filter_steps(p, c2, pod_with_claim_name(), "worker", NULL, &pre, pr, sizeof(pr),
                                 r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
}

/* "bound-claim-with-mixed-binding-conditions" and "prebind-fail-with-binding-timeout": one
 * condition still false: PreBind waits, and in `simulate` (nothing changes the in-memory cluster
 * meanwhile) the wait ends as upstream's does at bindingTimeout. */
Test(dynamic_resources, prebind_waits_for_pending_binding_conditions)
{
    th_cluster *c = cluster();
    device_class(c);
    binding_claim(c, ago(5), COND("attached", "False"));
    th_plugin *p = plugin();
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(p, c, pod_with_claim_name(), "worker", &preflight, r, sizeof(r)),
                 KS_ERROR);
    cr_assert_str_eq(r, "device binding timeout: context deadline exceeded");
}

/* "bind-claim-with-binding-conditions": the device of a fabric slice carries binding
 * conditions; PreBind writes the allocation with them (and the pod in reservedFor), then waits,
 * and no driver reports the device attached: the wait's timeout. */
Test(dynamic_resources, bind_claim_with_binding_conditions)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "fabric-slice", "worker",
          "[{'name':'instance-1','bindingConditions':['attached'],"
          "'bindingFailureConditions':['failed'],'bindsToNode':true}]");
    claim(c, "my-pod-claim", "claim-uid", NULL);
    th_plugin *p = plugin();
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(p, c, pod_with_claim_name(), "worker", &preflight, r, sizeof(r)),
                 KS_ERROR);
    cr_assert_str_eq(r, "device binding timeout: context deadline exceeded");
    const ks_resource_claim *cl = stored_claim(c, "my-pod-claim");
    cr_assert(cl->allocated);
    /* reserved before the wait (bindClaim), and out again after the failure (Unreserve) */
    cr_assert_eq(cl->nreserved_for, 0);
    cr_assert_eq(cl->view.nbinding_devices, 1);
    cr_assert_str_eq(cl->view.binding_devices[0].conditions[0], "attached");
    cr_assert_eq(cl->view.binding_devices[0].has_status, 0);
    ks__draobj_unref((ks__draobj *)&cl->h);
}

/* Two pods, one device: the first one's Reserve puts its allocation in flight, the second cannot
 * get the device (until Unreserve gives it back). */
Test(dynamic_resources, in_flight_allocation_takes_the_device)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    claim(c, "claim-a", "uid-a", NULL);
    claim(c, "claim-b", "uid-b", NULL);
    th_plugin *p = plugin();
    ks_pod *a = pod_with("a", "uid-pod-a", "[{'name':'gpu','resourceClaimName':'claim-a'}]", NULL);
    ks_pod *b = pod_with("b", "uid-pod-b", "[{'name':'gpu','resourceClaimName':'claim-b'}]", NULL);
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(p, c, b, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(th_reserve(p, c, a, "worker", 0, r, sizeof(r)), KS_SUCCESS, "%s", r);
    cr_assert_eq(th_filter_steps(p, c, b, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r)), UU);
    cr_assert_str_eq(r, "cannot allocate all claims");
}

/* Unreserve (a failed attempt after Reserve) gives the device back at once. */
Test(dynamic_resources, unreserve_gives_the_device_back)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    claim(c, "claim-a", "uid-a", NULL);
    claim(c, "claim-b", "uid-b", NULL);
    th_plugin *p = plugin();
    ks_pod *a = pod_with("a", "uid-pod-a", "[{'name':'gpu','resourceClaimName':'claim-a'}]", NULL);
    ks_pod *b = pod_with("b", "uid-pod-b", "[{'name':'gpu','resourceClaimName':'claim-b'}]", NULL);
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_reserve(p, c, a, "worker", 1, r, sizeof(r)), KS_SUCCESS, "%s", r);
    cr_assert_eq(ks__dra_claim_pending(th_cluster_hooks(c)->dra, "uid-a"), 0);
    cr_assert_eq(th_filter_steps(p, c, b, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
}

/* A device allocated to another claim in the API (status.allocation) is taken too. */
Test(dynamic_resources, allocated_device_is_taken)
{
    th_cluster *c = cluster();
    device_class(c);
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    allocated_claim(c, "other-claim", "worker", NULL);
    claim(c, "my-pod-claim", "my-claim-uid", NULL);
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(plugin(), c, pod_with_claim_name(), "worker", NULL, &pre, pr,
                                 sizeof(pr), r, sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "cannot allocate all claims");
}

/* A CEL runtime error is an Error for the attempt, with the allocator's message. */
Test(dynamic_resources, cel_runtime_error_is_an_error)
{
    th_cluster *c = cluster();
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':"
                             "{'name':'" CLASS "'},'spec':{'selectors':[{'cel':{'expression':"
                             "'device.attributes[\\\"" DRIVER "\\\"].numa == 1'}}]}}");
    slice(c, "worker-slice", "worker", "[{'name':'instance-1'}]");
    claim(c, "my-pod-claim", "claim-uid", NULL);
    char r[1024], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(plugin(), c, pod_with_claim_name(), "worker", NULL, &pre, pr,
                                 sizeof(pr), r, sizeof(r)),
                 KS_ERROR, "%s", r);
    cr_assert(strstr(r, "CEL runtime error: no such key: numa"), "%s", r);
}

/* ---- Score ---------------------------------------------------------------------------------- */

/* Prioritized list: the first subrequest scores FirstAvailableDeviceRequestMaxSize (8), the
 * second 7; normalized to 100 for the best node. */
Test(dynamic_resources, prioritized_list_score)
{
    th_cluster *c = cluster();
    th_cluster_add_node(c, WORKER2);
    device_class(c);
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':{'name':"
           "'small-class'},'spec':{'selectors':[{'cel':{'expression':'device.attributes[\\\"" DRIVER
           "\\\"].size == \\\"small\\\"'}}]}}");
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':{'name':"
           "'large-class'},'spec':{'selectors':[{'cel':{'expression':'device.attributes[\\\"" DRIVER
           "\\\"].size == \\\"large\\\"'}}]}}");
    slice(c, "worker-slice", "worker",
          "[{'name':'instance-1','attributes':{'size':{'string':'large'}}}]");
    slice(c, "worker-2-slice", "worker-2",
          "[{'name':'instance-1','attributes':{'size':{'string':'small'}}}]");
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':"
           "'my-pod-claim','namespace':'default','uid':'claim-uid'},'spec':{'devices':{'requests':"
           "[{'name':'req-1','firstAvailable':[{'name':'large','deviceClassName':'large-class'},"
           "{'name':'small','deviceClassName':'small-class'}]}]}}}");
    int64_t raw[2], norm[2];
    th_plugin *p = plugin();
    ks_pod *pod = pod_with_claim_name();
    /* Score reads what Filter kept per node: PreFilter and Filter in the same cycle first */
    cr_assert_eq(th_score_steps(p, c, pod, 2, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 8);
    cr_assert_eq(raw[1], 7);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 87);
}

/* ---- signatures, events --------------------------------------------------------------------- */

Test(dynamic_resources, pods_with_claims_are_not_signable)
{
    th_cluster *c = cluster();
    (void)c;
    th_plugin *p = plugin();
    ks_status st;
    ks__status_reset(&st);
    void *self = th_plugin_self(p);
    cr_assert_eq(ks_plugin_dynamic_resources.sign(self, pod_with_claim_name(), NULL, &st),
                 KS_UNSCHEDULABLE);
    char msg[256];
    ks__status_message(&st, msg, sizeof(msg));
    cr_assert_str_eq(msg, "pods with dra resource claims are not signable");
}

Test(dynamic_resources, registers_upstreams_events)
{
    ks_cluster_event_hint ev[16];
    size_t n = ks_plugin_dynamic_resources.events_with_hints(NULL, ev, 16);
    cr_assert_eq(n, 5);
    cr_assert_eq(ev[0].event.resource, KS_RES_NODE);
    cr_assert_eq(ev[0].event.actions,
                 KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_ALLOCATABLE);
    cr_assert_eq(ev[1].event.resource, KS_RES_RESOURCE_CLAIM);
    cr_assert_not_null(ev[1].hint);
    cr_assert_eq(ev[2].event.resource, KS_RES_POD);
    cr_assert_eq(ev[2].event.actions, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM);
    cr_assert_eq(ev[3].event.resource, KS_RES_DEVICE_CLASS);
    cr_assert_eq(ev[4].event.resource, KS_RES_RESOURCE_SLICE);
}
