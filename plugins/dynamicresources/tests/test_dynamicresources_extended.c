/*
 * DynamicResources with extended resources backed by DRA (DRAExtendedResource): upstream's
 * extendeddynamicresources_test.go (Test_createRequestsAndMappings_requests and _mappings, on
 * dra_create_requests) and the extended-resource cases of dynamicresources_test.go's TestPlugin
 * (pod "my-pod" uid "1234" asking for example.com/gpu, class "my-resource-class" mapping it,
 * driver "some-driver", node "worker"), with upstream's messages; plus live mode's refusal.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dynamicresources_int.h"
#include "api/dra_objects.h"
#include "api/intern.h"
#include "api/store.h"
#include "harness.h"
#include "sched/dra_manager.h"
#include "sched/framework.h"

extern const ks_plugin_desc ks_plugin_dynamic_resources;

TestSuite(dra_extended, .init = th_init, .fini = th_fini);

#define UU KS_UNSCHEDULABLE_AND_UNRESOLVABLE
#define DRIVER "some-driver"
#define CLASS "my-resource-class"
#define GPU "example.com/gpu"

/* ---- createRequestsAndMappings ----------------------------------------------------------------
 */

/* A pod from its containers (init containers' list, containers' list: JSON arrays). */
static ks_pod *pod_of(const char *init, const char *containers)
{
    char json[4096];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'my-pod','namespace':'default','uid':'1234'},'spec':{%s%s%s"
             "'containers':%s}}",
             init ? "'initContainers':" : "", init ? init : "", init ? "," : "",
             containers ? containers : "[]");
    return th_pod(json);
}

/* st.MakePod().Res / InitReq / SidecarReq: a container named as upstream's wrapper names it. */
#define CON(name, reqs) "{'name':'" name "','image':'i','resources':{'requests':{" reqs "}}}"
#define SIDECAR(name, reqs)                                                                        \
    "{'name':'" name "','image':'i','restartPolicy':'Always','resources':{'requests':{" reqs "}}}"

/* The resources of the call: name -> class ("" for a resource the resolver does not map). */
typedef struct ext_in {
    const char *name, *cls;
} ext_in;

typedef struct built {
    ks_dra_extended_request *reqs;
    size_t nreqs;
    dra_ext_variant *v;
} built;

static built build(const ks_pod *pod, const ext_in *in, size_t n)
{
    dra_ext_res ext[8];
    for (size_t i = 0; i < n; i++)
        ext[i] = (dra_ext_res){ks__intern(in[i].name),
                               *in[i].cls ? ks__intern(in[i].cls) : KS_SYM_ABSENT, 1};
    built b = {NULL, 0, calloc(1, sizeof(dra_ext_variant))};
    cr_assert_not_null(b.v);
    cr_assert_eq(
        dra_create_requests(pod, ext, n, n ? ((uint64_t)1 << n) - 1 : 0, b.v, &b.reqs, &b.nreqs),
        KS_SUCCESS);
    return b;
}

static void expect_requests(const built *b, const char *const want[][3], size_t n, const char *tc)
{
    cr_assert_eq(b->nreqs, n, "%s: %zu requests", tc, b->nreqs);
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(b->reqs[i].name, want[i][0], "%s: request %zu", tc, i);
        cr_assert_str_eq(b->reqs[i].device_class_name, want[i][1], "%s: request %zu", tc, i);
        cr_assert_eq(b->reqs[i].count, atoi(want[i][2]), "%s: request %zu count", tc, i);
    }
}

static int cmp_mapping(const void *a, const void *b)
{
    const ks_extended_request_mapping *x = a, *y = b;
    int c = strcmp(x->request_name, y->request_name);
    return c ? c : strcmp(x->container_name, y->container_name);
}

/* Mappings compared sorted by request, then container (as upstream's test sorts them). */
static void expect_mappings(const built *b, const char *const want[][3], size_t n, const char *tc)
{
    cr_assert_eq(b->v->nmaps, n, "%s: %zu mappings", tc, b->v->nmaps);
    qsort(b->v->maps, n, sizeof(*b->v->maps), cmp_mapping);
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(b->v->maps[i].request_name, want[i][0], "%s: mapping %zu", tc, i);
        cr_assert_str_eq(b->v->maps[i].container_name, want[i][1], "%s: mapping %zu", tc, i);
        cr_assert_str_eq(b->v->maps[i].resource_name, want[i][2], "%s: mapping %zu", tc, i);
    }
}

static void done(built *b)
{
    ks_free(b->reqs);
    dra_ext_variant_free(b->v);
}

#define POD1 pod_of(NULL, "[" CON("con0", "'" GPU "':'1','" GPU "1':'2'") "]")
#define POD2 pod_of(NULL, "[" CON("con0", "'" GPU "':'1'") "," CON("con1", "'" GPU "1':'2'") "]")
#define POD_INIT                                                                                   \
    pod_of("[" CON("init-con0", "'" GPU "init':'2'") "]", "[" CON("con0", "'" GPU "':'1'") "]")
#define POD_INIT2                                                                                  \
    pod_of(                                                                                        \
        "[" CON("init-con0", "'" GPU "init':'1'") "," CON("init-con1", "'" GPU "init':'2'") "]",   \
        "[" CON("con0", "'" GPU "':'1'") "]")
#define POD_INIT3                                                                                  \
    pod_of("[" CON("init-con0", "'" GPU "init':'1'") "," SIDECAR(                                  \
               "sidecar-con1", "'" GPU "init':'1'") "," CON("init-con2", "'" GPU "init':'2'") "]", \
           "[" CON("con0", "'" GPU "':'1'") "]")
#define IMPLICIT "deviceclass.resource.kubernetes.io/classInit"
#define POD1_INIT_IMPLICIT                                                                         \
    pod_of("[" CON("init-con0", "'" GPU "init':'1','" IMPLICIT "':'2'") "]", NULL)
#define POD_INIT_IMPLICIT                                                                          \
    pod_of(                                                                                        \
        "[" CON("init-con0", "'" GPU "init':'1'") "," CON("init-con1", "'" IMPLICIT "':'2'") "]",  \
        "[" CON("con0", "'" GPU "':'1'") "]")

Test(dra_extended, requests_one_resource_match)
{
    ext_in in[] = {{GPU, "class"}};
    built b = build(POD1, in, 1);
    const char *const want[][3] = {{"container-0-request-0", "class", "1"}};
    expect_requests(&b, want, 1, "one resource match");
    done(&b);
}

Test(dra_extended, requests_nil)
{
    built b = build(POD1, NULL, 0);
    expect_requests(&b, NULL, 0, "nil");
    done(&b);
}

Test(dra_extended, requests_one_match_one_not)
{
    ext_in in[] = {{GPU, "class"}, {GPU "1", ""}};
    built b = build(POD1, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "class", "1"}};
    expect_requests(&b, want, 1, "one resource match, one resource not match");
    done(&b);
}

Test(dra_extended, requests_two_resources_match)
{
    ext_in in[] = {{GPU, "class"}, {GPU "1", "class1"}};
    built b = build(POD1, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "class", "1"},
                                   {"container-0-request-1", "class1", "2"}};
    expect_requests(&b, want, 2, "two resources match");
    done(&b);
}

Test(dra_extended, requests_two_containers_match)
{
    ext_in in[] = {{GPU, "class"}, {GPU "1", "class1"}};
    built b = build(POD2, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "class", "1"},
                                   {"container-1-request-0", "class1", "2"}};
    expect_requests(&b, want, 2, "two containers match");
    done(&b);
}

Test(dra_extended, requests_one_init_container_one_regular)
{
    ext_in in[] = {{GPU, "class"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "classInit", "2"},
                                   {"container-1-request-0", "class", "1"}};
    expect_requests(&b, want, 2, "one init container, one regular container");
    done(&b);
}

Test(dra_extended, requests_two_init_containers_one_regular)
{
    ext_in in[] = {{GPU, "class"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT2, in, 2);
    const char *const want[][3] = {{"container-1-request-0", "classInit", "2"},
                                   {"container-2-request-0", "class", "1"}};
    expect_requests(&b, want, 2, "two init containers, one regular container");
    done(&b);
}

Test(dra_extended, requests_three_init_containers_one_sidecar_one_regular)
{
    ext_in in[] = {{GPU, "class"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT3, in, 2);
    const char *const want[][3] = {{"container-1-request-0", "classInit", "1"},
                                   {"container-2-request-0", "classInit", "2"},
                                   {"container-3-request-0", "class", "1"}};
    expect_requests(&b, want, 3, "three init containers, one sidecar, one regular container");
    done(&b);
}

Test(dra_extended, mappings_one_container_two_requests)
{
    ext_in in[] = {{GPU, "class"}, {GPU "1", "class1"}};
    built b = build(POD1, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "con0", GPU},
                                   {"container-0-request-1", "con0", GPU "1"}};
    expect_mappings(&b, want, 2, "one container, two requests");
    done(&b);
}

Test(dra_extended, mappings_one_container_explicit_and_implicit)
{
    ext_in in[] = {{GPU, "class"}, {IMPLICIT, "classInit"}, {GPU "init", "classInit"}};
    built b = build(POD1_INIT_IMPLICIT, in, 3);
    const char *const want[][3] = {{"container-0-request-0", "init-con0", IMPLICIT},
                                   {"container-0-request-1", "init-con0", GPU "init"}};
    expect_mappings(&b, want, 2, "one container, one explicit and one implicit request");
    done(&b);
}

Test(dra_extended, mappings_two_containers_two_requests)
{
    ext_in in[] = {{GPU, "class"}, {GPU "1", "class1"}};
    built b = build(POD2, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "con0", GPU},
                                   {"container-1-request-0", "con1", GPU "1"}};
    expect_mappings(&b, want, 2, "two containers, two requests");
    done(&b);
}

Test(dra_extended, mappings_one_init_one_regular)
{
    ext_in in[] = {{GPU, "class"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT, in, 2);
    const char *const want[][3] = {{"container-0-request-0", "init-con0", GPU "init"},
                                   {"container-1-request-0", "con0", GPU}};
    expect_mappings(&b, want, 2, "one init container, one regular container, one request");
    done(&b);
}

Test(dra_extended, mappings_two_init_containers_share_the_largest_request)
{
    ext_in in[] = {{GPU, "class"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT2, in, 2);
    const char *const want[][3] = {{"container-1-request-0", "init-con0", GPU "init"},
                                   {"container-1-request-0", "init-con1", GPU "init"},
                                   {"container-2-request-0", "con0", GPU}};
    expect_mappings(&b, want, 3, "three containers (two are init container), two requests");
    done(&b);
}

Test(dra_extended, mappings_init_containers_explicit_and_implicit)
{
    ext_in in[] = {{GPU, "class"}, {IMPLICIT, "classInit"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT_IMPLICIT, in, 3);
    const char *const want[][3] = {{"container-0-request-0", "init-con0", GPU "init"},
                                   {"container-1-request-0", "init-con1", IMPLICIT},
                                   {"container-2-request-0", "con0", GPU}};
    expect_mappings(&b, want, 3,
                    "three containers (two are init container), both explicit and implicit");
    done(&b);
}

Test(dra_extended, mappings_init_reuses_a_later_sidecars_request)
{
    ext_in in[] = {{GPU, "class"}, {GPU "init", "classInit"}};
    built b = build(POD_INIT3, in, 2);
    const char *const want[][3] = {{"container-1-request-0", "init-con0", GPU "init"},
                                   {"container-1-request-0", "sidecar-con1", GPU "init"},
                                   {"container-2-request-0", "init-con2", GPU "init"},
                                   {"container-3-request-0", "con0", GPU}};
    expect_mappings(&b, want, 4, "four containers (two are init container, one sidecar)");
    done(&b);
}

/* ---- the plugin (TestPlugin's extended-resource cases) ------------------------------------- */

static const char *const WORKER = "{'metadata':{'name':'worker','labels':{'kubernetes.io/"
                                  "hostname':'worker','nodename':'worker'}}}";
static const char *const WORKER_WITH_GPU =
    "{'metadata':{'name':'worker','labels':{'kubernetes.io/hostname':'worker'}},'status':{"
    "'capacity':{'" GPU "':'1'},'allocatable':{'" GPU "':'1'}}}";
static const char *const WORKER_ZERO_GPU =
    "{'metadata':{'name':'worker','labels':{'kubernetes.io/hostname':'worker'}},'status':{"
    "'capacity':{'" GPU "':'0'},'allocatable':{'" GPU "':'0'}}}";

static char patched[2048]; /* the last pod status patch (harness hook) */

static ks_code capture_pod_status(void *ctx, const ks_pod *pod, const char *patch, ks_status *st)
{
    (void)ctx;
    (void)pod;
    (void)st;
    snprintf(patched, sizeof(patched), "%s", patch);
    return KS_SUCCESS;
}

static ks_code fail_pod_status(void *ctx, const ks_pod *pod, const char *patch, ks_status *st)
{
    (void)ctx;
    (void)pod;
    (void)patch;
    ks__status_add(st, "patch error");
    return KS_ERROR;
}

static th_cluster *cluster_with(const char *node, uint32_t flags)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, node);
    th_cluster_binding(c, flags, NULL, NULL);
    th_cluster_services(c);
    th_cluster_hooks(c)->patch_pod_status = capture_pod_status;
    th_filter_before_reserve(1);
    patched[0] = 0;
    return c;
}

static void classes(th_cluster *c, int second)
{
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass',"
                             "'metadata':{'name':'" CLASS "'},'spec':{'extendedResourceName':'" GPU
                             "'}}");
    if (second)
        th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass',"
                                 "'metadata':{'name':'" CLASS "2'},'spec':{'extendedResourceName':"
                                 "'" GPU "2'}}");
}

/* workerNodeSlice (one device) or largeWorkerNodeSlice (four). */
static void worker_slice(th_cluster *c, int devices)
{
    char json[1024], devs[256] = "";
    for (int i = 1; i <= devices; i++)
        snprintf(devs + strlen(devs), sizeof(devs) - strlen(devs), "%s{'name':'instance-%d'}",
                 i > 1 ? "," : "", i);
    snprintf(json, sizeof(json),
             "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':"
             "'worker-slice'},'spec':{'driver':'" DRIVER "','nodeName':'worker','pool':{'name':"
             "'worker','generation':1,'resourceSliceCount':1},'devices':[%s]}}",
             devs);
    th_cluster_add_object(c, json);
}

static ks_pod *pod_requesting(const char *reqs)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'my-pod','namespace':'default','uid':'1234'},'spec':{"
             "'containers':[{'name':'con0','image':'i','resources':{'requests':{%s}}}]}}",
             reqs);
    return th_pod(json);
}

#define POD_WITH_GPU pod_requesting("'" GPU "':'1'")

static th_plugin *plugin(void) { return th_plugin_new(&ks_plugin_dynamic_resources, NULL); }

/* The claims of the store made for the pod (annotated, owned by it): how many; *name the last. */
static size_t extended_claims(th_cluster *c, char *name, size_t len)
{
    ks__draobj **v = NULL;
    size_t n = ks__store_draobjs(th_cluster_hooks(c)->store, KS_DK_RESOURCE_CLAIM, NULL, NULL, &v);
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        const ks_resource_claim *cl = ks__dra_claim(v[i]);
        if (cl->extended_resource_claim) {
            found++;
            if (name)
                snprintf(name, len, "%s", ks__sym_str(cl->h.name));
        }
        ks__draobj_unref(v[i]);
    }
    free(v);
    return found;
}

static cJSON *stored(th_cluster *c, const char *name)
{
    char key[256];
    snprintf(key, sizeof(key), "default/%s", name);
    ks__draobj *o = ks__store_draobj(th_cluster_hooks(c)->store, KS_DK_RESOURCE_CLAIM, key);
    cr_assert_not_null(o, "%s", key);
    cJSON *j = cJSON_Parse(o->json);
    ks__draobj_unref(o);
    return j;
}

/* "extended-resource-name-with-node-resource": the device plugin provides it; nothing for DRA
 * to allocate, no claim. */
Test(dra_extended, with_node_resource_nothing_to_allocate)
{
    th_cluster *c = cluster_with(WORKER_WITH_GPU, KS_SOURCE_SIMULATED);
    classes(c, 0);
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(extended_claims(c, NULL, 0), 0);
    cr_assert_str_eq(patched, "");
}

/* "extended-resource-one-device-plugin-one-dra": gpu from the device plugin, gpu2 from DRA
 * (request container-0-request-1 of class 2). */
Test(dra_extended, one_device_plugin_one_dra)
{
    th_cluster *c = cluster_with(WORKER_WITH_GPU, KS_SOURCE_SIMULATED);
    classes(c, 1);
    worker_slice(c, 1);
    char r[512], name[256];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, pod_requesting("'" GPU "':'1','" GPU "2':'1'"), "worker",
                             &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(extended_claims(c, name, sizeof(name)), 1);
    cJSON *cl = stored(c, name);
    char *spec = cJSON_PrintUnformatted(cJSON_GetObjectItem(cl, "spec"));
    cr_assert_str_eq(spec, "{\"devices\":{\"requests\":[{\"name\":\"container-0-request-1\","
                           "\"exactly\":{\"deviceClassName\":\"" CLASS "2\",\"allocationMode\":"
                           "\"ExactCount\",\"count\":1}}]}}");
    free(spec);
    cJSON_Delete(cl);
}

/* "extended-resource-name-with-zero-allocatable": allocatable 0 counts as not provided. */
Test(dra_extended, zero_allocatable_goes_to_dra)
{
    th_cluster *c = cluster_with(WORKER_ZERO_GPU, KS_SOURCE_SIMULATED);
    classes(c, 0);
    worker_slice(c, 1);
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(extended_claims(c, NULL, 0), 1);
}

/* "non-DRA-extended-resource-name-with-zero-allocatable": no class maps it: Skip. */
Test(dra_extended, unmapped_resource_is_skipped)
{
    th_cluster *c = cluster_with(WORKER_ZERO_GPU, KS_SOURCE_SIMULATED);
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass',"
                             "'metadata':{'name':'" CLASS "'}}");
    char r[512], pr[512];
    ks_code pre, preflight;
    th_filter_steps(plugin(), c, POD_WITH_GPU, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r));
    cr_assert_eq(pre, KS_SKIP, "%s", pr);
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(preflight, KS_SKIP);
}

/* "extended-resource-name-no-resource": no slice: cannot allocate; PostFilter has nothing. */
Test(dra_extended, no_devices_cannot_allocate)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(plugin(), c, POD_WITH_GPU, "worker", NULL, &pre, pr, sizeof(pr), r,
                                 sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "cannot allocate all claims");
    cr_assert_eq(th_post_filter(plugin(), c, POD_WITH_GPU, r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, "");
}

/* "extended-resource-name-with-resources": in flight after Reserve; PreBind creates the claim
 * (generateName my-pod-extended-resources-), allocates and reserves it, and writes the pod's
 * status.extendedResourceClaimStatus. */
Test(dra_extended, with_resources_prebind_creates_binds_and_patches)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    worker_slice(c, 1);
    char r[512], name[256];
    {
        th_cluster *c1 = cluster_with(WORKER, KS_SOURCE_SIMULATED);
        classes(c1, 0);
        worker_slice(c1, 1);
        cr_assert_eq(th_reserve(plugin(), c1, POD_WITH_GPU, "worker", 0, r, sizeof(r)), KS_SUCCESS,
                     "%s", r);
        cr_assert(ks__dra_claim_pending(th_cluster_hooks(c1)->dra, "1234/<extended-resources>"));
    }
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(extended_claims(c, name, sizeof(name)), 1);
    cr_assert_eq(strncmp(name, "my-pod-extended-resources-", 26), 0, "%s", name);
    cr_assert_eq(strlen(name), 31, "%s", name);
    cJSON *cl = stored(c, name);
    const cJSON *meta = cJSON_GetObjectItem(cl, "metadata");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(meta, "generateName")),
                     "my-pod-extended-resources-");
    const cJSON *owner = cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "ownerReferences"), 0);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(owner, "uid")), "1234");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(owner, "controller")));
    cr_assert_str_eq(
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "finalizers"), 0)),
        "resource.kubernetes.io/delete-protection");
    const cJSON *status = cJSON_GetObjectItem(cl, "status");
    const cJSON *res = cJSON_GetArrayItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(status, "allocation"), "devices"), "results"),
        0);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(res, "request")),
                     "container-0-request-0");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(res, "device")), "instance-1");
    const cJSON *rf = cJSON_GetArrayItem(cJSON_GetObjectItem(status, "reservedFor"), 0);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(rf, "uid")), "1234");
    cJSON_Delete(cl);
    char want[1024];
    snprintf(want, sizeof(want),
             "{\"status\":{\"extendedResourceClaimStatus\":{\"requestMappings\":[{"
             "\"containerName\":\"con0\",\"resourceName\":\"" GPU "\",\"requestName\":"
             "\"container-0-request-0\"}],\"resourceClaimName\":\"%s\"}}}",
             name);
    cr_assert_str_eq(patched, want);
    /* no longer in flight once written */
    cr_assert_not(ks__dra_claim_pending(th_cluster_hooks(c)->dra, "1234/<extended-resources>"));
}

/* "implicit-extended-resource-name-with-resources": the implicit name and the explicit one map
 * to the same class; two requests of one container. */
Test(dra_extended, implicit_and_explicit_names_one_container)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    worker_slice(c, 4);
    char r[512], name[256];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c,
                             pod_requesting("'deviceclass.resource.kubernetes.io/" CLASS
                                            "':'1','" GPU "':'2'"),
                             "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(extended_claims(c, name, sizeof(name)), 1);
    cJSON *cl = stored(c, name);
    char *spec = cJSON_PrintUnformatted(cJSON_GetObjectItem(cl, "spec"));
    cr_assert_str_eq(spec, "{\"devices\":{\"requests\":[{\"name\":\"container-0-request-0\","
                           "\"exactly\":{\"deviceClassName\":\"" CLASS "\",\"allocationMode\":"
                           "\"ExactCount\",\"count\":1}},{\"name\":\"container-0-request-1\","
                           "\"exactly\":{\"deviceClassName\":\"" CLASS "\",\"allocationMode\":"
                           "\"ExactCount\",\"count\":2}}]}}");
    free(spec);
    cr_assert_eq(
        cJSON_GetArraySize(cJSON_GetObjectItem(
            cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(cl, "status"), "allocation"), "devices"),
            "results")),
        3);
    cJSON_Delete(cl);
}

/* "extended-resource-name-with-resources-fail-patch": the pod status patch fails: PreBind's
 * error, and Unreserve deletes the claim PreBind created. */
Test(dra_extended, failed_pod_patch_fails_prebind_and_unreserve_deletes_the_claim)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    th_cluster_hooks(c)->patch_pod_status = fail_pod_status;
    classes(c, 0);
    worker_slice(c, 1);
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_ERROR);
    cr_assert_str_eq(r, "patch error");
    cr_assert_eq(extended_claims(c, NULL, 0), 0, "Unreserve deletes the created claim");
    cr_assert_not(ks__dra_claim_pending(th_cluster_hooks(c)->dra, "1234/<extended-resources>"));
}

/* A claim of the pod from a prior cycle ("...-has-claim", "...-delete-claim"): Filter rejects
 * the node, PostFilter deletes the claim. */
static void prior_claim(th_cluster *c, const char *node)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':"
             "'my-pod-extended-resources-0','generateName':'my-pod-extended-resources-',"
             "'namespace':'default','uid':'uid-ext','annotations':{'resource.kubernetes.io/"
             "extended-resource-claim':'true'},'ownerReferences':[{'apiVersion':'v1','kind':"
             "'Pod','name':'my-pod','uid':'1234','controller':true}]},'spec':{'devices':{"
             "'requests':[{'name':'container-0-request-0','exactly':{'deviceClassName':'" CLASS
             "'}}]}},'status':{'allocation':{'devices':{'results':[{'request':"
             "'container-0-request-0','driver':'" DRIVER "','pool':'%s','device':'instance-1'}]},"
             "'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name',"
             "'operator':'In','values':['%s']}]}]}}}}",
             node, node);
    th_cluster_add_object(c, json);
}

Test(dra_extended, prior_claim_is_rejected_and_deleted)
{
    static const char *const nodes[] = {"worker", "worker-2"};
    for (int i = 0; i < 2; i++) {
        th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
        classes(c, 0);
        worker_slice(c, 1);
        prior_claim(c, nodes[i]);
        char r[512], pr[512];
        ks_code pre;
        cr_assert_eq(th_filter_steps(plugin(), c, POD_WITH_GPU, "worker", NULL, &pre, pr,
                                     sizeof(pr), r, sizeof(r)),
                     UU, "%s", pr);
        cr_assert_str_eq(r, "cannot schedule extended resource claim");
        cr_assert_eq(th_post_filter(plugin(), c, POD_WITH_GPU, r, sizeof(r)), KS_UNSCHEDULABLE);
        cr_assert_str_eq(r, "deletion of ResourceClaim completed");
        cr_assert_eq(extended_claims(c, NULL, 0), 0);
    }
}

/* "extended-resource-name-skip-bind": Unreserve before PreBind takes the allocation out of
 * flight and deletes nothing (nothing was created). */
Test(dra_extended, unreserve_before_prebind)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    worker_slice(c, 1);
    char r[512];
    cr_assert_eq(th_reserve(plugin(), c, POD_WITH_GPU, "worker", 1, r, sizeof(r)), KS_SUCCESS, "%s",
                 r);
    cr_assert_not(ks__dra_claim_pending(th_cluster_hooks(c)->dra, "1234/<extended-resources>"));
    cr_assert_eq(extended_claims(c, NULL, 0), 0);
}

/* A second pod sees the first one's device in flight (Reserve without PreBind). */
Test(dra_extended, in_flight_device_is_taken_for_the_next_pod)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    worker_slice(c, 1);
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_reserve(plugin(), c, POD_WITH_GPU, "worker", 0, r, sizeof(r)), KS_SUCCESS, "%s",
                 r);
    ks_pod *other = th_pod("{'metadata':{'name':'other','namespace':'default','uid':'5678'},"
                           "'spec':{'containers':[{'name':'c','image':'i','resources':{"
                           "'requests':{'" GPU "':'1'}}}]}}");
    cr_assert_eq(
        th_filter_steps(plugin(), c, other, "worker", NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
        UU);
    cr_assert_str_eq(r, "cannot allocate all claims");
}

/* A resource neither the node lists nor a class maps: "cannot fit resource". */
Test(dra_extended, unmapped_and_unlisted_resource_cannot_fit)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    worker_slice(c, 1);
    char r[512], pr[512];
    ks_code pre;
    cr_assert_eq(th_filter_steps(plugin(), c,
                                 pod_requesting("'" GPU "':'1','example.com/fpga':'1'"), "worker",
                                 NULL, &pre, pr, sizeof(pr), r, sizeof(r)),
                 UU);
    cr_assert_str_eq(r, "cannot fit resource");
}

/* Live mode: PreBind POSTs the claim (generateName), adds the finalizer (Update), the allocation
 * and the reservation (UpdateStatus), and patches the pod's status, as upstream's bindClaim. */
typedef struct api_script {
    int at;
    const char *answers[4];
    char asked[4][200];
} api_script;

static ks_code fake_api(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                        const char *ctype, const char *body, char **out, int *http, ks_status *st)
{
    api_script *a = ctx;
    (void)ctype;
    (void)body;
    (void)st;
    cr_assert_lt(a->at, 3, "unexpected %s", method);
    snprintf(a->asked[a->at], sizeof(a->asked[a->at]), "%s %s/%s%s", method, ks__sym_str(ns),
             name == KS_SYM_ABSENT ? "" : ks__sym_str(name), status ? "/status" : "");
    if (http)
        *http = 200;
    *out = strdup(a->answers[a->at++]);
    return KS_SUCCESS;
}

#define LIVE_CLAIM(rv, fin, status)                                                                \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":"    \
    "\"my-pod-extended-resources-abcde\",\"namespace\":\"default\",\"uid\":\"uid-new\","           \
    "\"resourceVersion\":\"" rv "\"" fin ",\"annotations\":{\"resource.kubernetes.io/extended-"    \
    "resource-claim\":\"true\"},\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","     \
    "\"name\":\"my-pod\",\"uid\":\"1234\",\"controller\":true}]},\"spec\":{\"devices\":{"          \
    "\"requests\":[{\"name\":\"container-0-request-0\",\"exactly\":{\"deviceClassName\":"          \
    "\"" CLASS "\",\"allocationMode\":\"ExactCount\",\"count\":1}}]}}" status "}"

Test(dra_extended, live_mode_creates_the_claim_through_the_api)
{
    th_cluster *c = cluster_with(WORKER, 0);
    classes(c, 0);
    worker_slice(c, 1);
    api_script a = {
        0,
        {LIVE_CLAIM("1", "", ""),
         LIVE_CLAIM("2", ",\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]", ""),
         LIVE_CLAIM("3", ",\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]",
                    ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":"
                    "\"container-0-request-0\",\"driver\":\"" DRIVER "\",\"pool\":"
                    "\"worker\",\"device\":\"instance-1\"}]}},\"reservedFor\":[{"
                    "\"resource\":\"pods\",\"name\":\"my-pod\",\"uid\":\"1234\"}]}")},
        {""}};
    th_cluster_hooks(c)->claim_request = fake_api;
    th_cluster_hooks(c)->dra_ctx = &a;
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
    cr_assert_eq(a.at, 3);
    cr_assert_str_eq(a.asked[0], "POST default/");
    cr_assert_str_eq(a.asked[1], "PUT default/my-pod-extended-resources-abcde");
    cr_assert_str_eq(a.asked[2], "PUT default/my-pod-extended-resources-abcde/status");
    cr_assert(strstr(patched, "\"resourceClaimName\":\"my-pod-extended-resources-abcde\""), "%s",
              patched);
    cr_assert_not(ks__dra_claim_pending(th_cluster_hooks(c)->dra, "1234/<extended-resources>"));
}

/* A device with binding conditions allocated to the claim for extended resources: PreBind
 * creates and binds the claim, then waits for the conditions as for a user's claim (in simulate
 * no driver reports them: the wait's timeout), and Unreserve deletes the claim. */
Test(dra_extended, binding_conditions_of_the_extended_claim_are_waited_for)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    classes(c, 0);
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata'"
                             ":{'name':'fabric-slice'},'spec':{'driver':'" DRIVER "','nodeName':"
                             "'worker','pool':{'name':'worker','generation':1,'resourceSliceCount'"
                             ":1},'devices':[{'name':'instance-1','bindingConditions':['attached'],"
                             "'bindingFailureConditions':['failed'],'bindsToNode':true}]}}");
    char r[512];
    ks_code preflight;
    cr_assert_eq(th_pre_bind(plugin(), c, POD_WITH_GPU, "worker", &preflight, r, sizeof(r)),
                 KS_ERROR);
    cr_assert_str_eq(r, "device binding timeout: context deadline exceeded");
    cr_assert_eq(extended_claims(c, NULL, 0), 0, "Unreserve deletes the created claim");
}

/* The extended resource cache's tie rule: the newest class wins, then the smallest name. */
Test(dra_extended, newest_class_then_smallest_name_wins)
{
    th_cluster *c = cluster_with(WORKER, KS_SOURCE_SIMULATED);
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':"
                             "{'name':'b-old','creationTimestamp':'2026-01-01T00:00:00Z'},"
                             "'spec':{'extendedResourceName':'" GPU "'}}");
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':"
                             "{'name':'c-new','creationTimestamp':'2026-02-01T00:00:00Z'},"
                             "'spec':{'extendedResourceName':'" GPU "'}}");
    ks_store *st = th_cluster_hooks(c)->store;
    cr_assert_str_eq(ks__sym_str(ks__dra_extended_resource_class(st, ks__intern(GPU))), "c-new");
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':"
                             "{'name':'a-new','creationTimestamp':'2026-02-01T00:00:00Z'},"
                             "'spec':{'extendedResourceName':'" GPU "'}}");
    cr_assert_str_eq(ks__sym_str(ks__dra_extended_resource_class(st, ks__intern(GPU))), "a-new");
    /* the implicit name of each class */
    cr_assert_str_eq(ks__sym_str(ks__dra_extended_resource_class(
                         st, ks__intern("deviceclass.resource.kubernetes.io/b-old"))),
                     "b-old");
    cr_assert_eq(ks__dra_extended_resource_class(st, ks__intern("example.com/none")),
                 KS_SYM_ABSENT);
}
