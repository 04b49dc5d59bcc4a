/*
 * Pod and Node conversion (core/api/objects.c): upstream PodRequests and its non-zero variant,
 * API-server defaulting (requests from limits, allocatable from capacity), the pre-parsed
 * metadata and spec fields, error messages naming the field path, and reference counting of
 * pods and their assumed copies.
 *
 * JSON is written with single quotes, turned into double quotes before parsing.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sched/host_api.h"
#include "api/intern.h"
#include "api/objects.h"
#include "harness.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static void setup(void) { ks__host_init(); }

TestSuite(objects, .init = setup);

static ks_pod *pod(const char *text)
{
    char err[512] = "";
    ks_pod *p = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__pod_from_json(obj, &p, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "pod parse failed (%d): %s", rc, err);
    cr_assert_not_null(p);
    return p;
}

/* Parses a pod that must be rejected; returns the code, err receives the message. */
static int pod_err(const char *text, char *err, size_t len)
{
    ks_pod *p = (ks_pod *)1;
    cJSON *obj = th_json(text);
    err[0] = '\0';
    int rc = ks__pod_from_json(obj, &p, err, len);
    cJSON_Delete(obj);
    cr_assert_null(p, "a rejected pod must not be returned");
    return rc;
}

static ks_node *node(const char *text)
{
    char err[512] = "";
    ks_node *n = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__node_from_json(obj, &n, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "node parse failed (%d): %s", rc, err);
    return n;
}

static int node_err(const char *text, char *err, size_t len)
{
    ks_node *n = (ks_node *)1;
    cJSON *obj = th_json(text);
    err[0] = '\0';
    int rc = ks__node_from_json(obj, &n, err, len);
    cJSON_Delete(obj);
    cr_assert_null(n);
    return rc;
}

static ks_sym sym(const char *s) { return ks__intern(s); }
static const char *str(ks_sym s) { return ks__sym_str(s); }

/* A pod named p with the given spec (JSON object text without the braces). */
#define POD(spec) "{'metadata':{'name':'p','namespace':'ns'},'spec':{" spec "}}"
#define RES(req) "'resources':{'requests':{" req "}}"

/* ---- PodRequests -------------------------------------------------------------------------- */

Test(objects, sums_requests_of_regular_containers)
{
    ks_pod *p = pod(POD(
        "'containers':["
        "{'name':'a'," RES(
            "'cpu':'100m','memory':'64Mi','ephemeral-storage':'1Gi'") "},"
                                                                      "{'name':'b'," RES(
                                                                          "'cpu':'250m','memory':'"
                                                                          "128Mi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 350);
    cr_expect_eq(p->requests.pub.memory, 192 * MI);
    cr_expect_eq(p->requests.pub.ephemeral_storage, GI);
    cr_expect_eq(p->requests.pub.nscalar, 0);
    /* Both containers name cpu and memory: the non-zero variant is the same. */
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 350);
    cr_expect_eq(p->nonzero_requests.pub.memory, 192 * MI);
    ks__pod_unref(p);
}

Test(objects, takes_the_larger_of_containers_and_each_init_container)
{
    ks_pod *p = pod(POD(
        "'initContainers':["
        "{'name':'i1'," RES(
            "'cpu':'500m','memory':'10Mi'") "},"
                                            "{'name':'i2'," RES(
                                                "'cpu':'200m','memory':'300Mi'") "}],"
                                                                                 "'containers':[{'"
                                                                                 "name':'a'," RES(
                                                                                     "'cpu':'100m',"
                                                                                     "'memory':'"
                                                                                     "100Mi'") "},"
                                                                                               "{'"
                                                                                               "nam"
                                                                                               "e':"
                                                                                               "'b'"
                                                                                               "," RES(
                                                                                                   "'cpu':'100m','memory':'100Mi'") "}]"));
    /* Init containers run one at a time: max(each init container, sum of containers) per
     * resource: cpu max(500m, 200m), memory max(300Mi, 200Mi). */
    cr_expect_eq(p->requests.pub.milli_cpu, 500);
    cr_expect_eq(p->requests.pub.memory, 300 * MI);
    ks__pod_unref(p);
}

Test(objects, sums_restartable_init_containers_with_the_pod)
{
    /* sidecar s1 (1 cpu), regular init i (2 cpu), sidecar s2 (3 cpu), container c (1 cpu):
     * reqs = 1 + 1 + 3 = 5; init candidates: s1 -> 1, i -> 2 + 1 = 3, s2 -> 1 + 3 = 4; max 5. */
    ks_pod *p =
        pod(POD("'initContainers':["
                "{'name':'s1','restartPolicy':'Always'," RES(
                    "'cpu':'1'") "},"
                                 "{'name':'i'," RES(
                                     "'cpu':'2'") "},"
                                                  "{'name':'s2','restartPolicy':'Always'," RES(
                                                      "'cpu':'3'") "}],"
                                                                   "'containers':[{'name':'c'," RES(
                                                                       "'cpu':'1'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 5000);
    ks__pod_unref(p);
}

Test(objects, counts_earlier_sidecars_while_a_later_init_container_runs)
{
    /* s (1) then a big regular init container (10): it runs next to s, so 11 > 1 + 1. */
    ks_pod *p = pod(POD(
        "'initContainers':["
        "{'name':'s','restartPolicy':'Always'," RES(
            "'cpu':'1','memory':'1Gi'") "},"
                                        "{'name':'i'," RES(
                                            "'cpu':'10','memory':'1Gi'") "}],"
                                                                         "'containers':[{'name':'c'"
                                                                         "," RES(
                                                                             "'cpu':'1','memory':'"
                                                                             "1Gi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 11000);
    cr_expect_eq(p->requests.pub.memory, 2 * GI); /* max(1+1, 1+1) */
    ks__pod_unref(p);
}

Test(objects, ignores_sidecars_declared_after_a_regular_init_container)
{
    /* i (4) runs before s (1) starts: candidate 4; reqs = c (1) + s (1) = 2; max 4. */
    ks_pod *p =
        pod(POD("'initContainers':["
                "{'name':'i'," RES("'cpu':'4'") "},"
                                                "{'name':'s','restartPolicy':'Always'," RES(
                                                    "'cpu':'1'") "}],"
                                                                 "'containers':[{'name':'c'," RES(
                                                                     "'cpu':'1'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 4000);
    ks__pod_unref(p);
}

Test(objects, treats_other_init_restart_policies_as_regular)
{
    ks_pod *p = pod(POD("'initContainers':["
                        "{'name':'i','restartPolicy':'OnFailure'," RES(
                            "'cpu':'1'") "}],"
                                         "'containers':[{'name':'c'," RES("'cpu':'1'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 1000);
    ks__pod_unref(p);
}

Test(objects, adds_pod_overhead)
{
    ks_pod *p = pod(POD("'overhead':{'cpu':'250m','memory':'120Mi','example.com/foo':'1'},"
                        "'containers':[{'name':'c'," RES("'cpu':'100m','memory':'100Mi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 350);
    cr_expect_eq(p->requests.pub.memory, 220 * MI);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 1);
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 350);
    ks__pod_unref(p);
}

Test(objects, adds_overhead_after_the_init_container_max)
{
    ks_pod *p = pod(POD("'overhead':{'cpu':'100m'},"
                        "'initContainers':[{'name':'i'," RES(
                            "'cpu':'2'") "}],"
                                         "'containers':[{'name':'c'," RES("'cpu':'1'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2100);
    ks__pod_unref(p);
}

Test(objects, pod_level_requests_replace_cpu_and_memory_only)
{
    ks_pod *p = pod(POD("'resources':{'requests':{'cpu':'2','memory':'1Gi'}},"
                        "'overhead':{'cpu':'100m'},"
                        "'containers':[{'name':'c'," RES(
                            "'cpu':'500m','memory':'100Mi',"
                            "'ephemeral-storage':'1Gi','example.com/foo':'3'") "},"
                                                                               "{'name':'d'}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2100); /* pod-level 2, then overhead */
    cr_expect_eq(p->requests.pub.memory, GI);
    cr_expect_eq(p->requests.pub.ephemeral_storage, GI);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 3);
    /* NodeResourcesFit's scorer view ignores pod-level requests (upstream v1.37 builds it without
     * the feature flag): the containers with d's defaults, 500m + 100m + overhead 100m, 100Mi +
     * 200Mi. Found against kube-scheduler v1.37.2 (docs/DIFFERENTIAL.md). */
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 700);
    cr_expect_eq(p->nonzero_requests.pub.memory, 300 * MI);
    ks__pod_unref(p);
}

Test(objects, pod_level_cpu_alone_keeps_container_memory)
{
    ks_pod *p = pod(POD("'resources':{'requests':{'cpu':'1'}},"
                        "'containers':[{'name':'c'," RES("'cpu':'100m','memory':'100Mi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 1000);
    cr_expect_eq(p->requests.pub.memory, 100 * MI);
    ks__pod_unref(p);
}

Test(objects, keeps_extended_resources_sorted_by_symbol)
{
    /* Intern in an order unlike the pod's so the sort is visible. */
    ks_sym zzz = sym("example.com/zzz"), gpu = sym("nvidia.com/gpu"), aaa = sym("example.com/aaa");
    ks_sym huge = sym("hugepages-2Mi");
    ks_pod *p = pod(POD("'containers':[{'name':'c'," RES(
        "'example.com/aaa':'1','nvidia.com/gpu':'2',"
        "'hugepages-2Mi':'4Mi'") "},"
                                 "{'name':'d'," RES(
                                     "'example.com/zzz':'5','nvidia.com/gpu':'1'") "}]"));
    const ks_resources *r = &p->requests.pub;
    cr_assert_eq(r->nscalar, 4);
    cr_expect_eq(r->scalar, p->requests.scalar);
    for (uint32_t i = 1; i < r->nscalar; i++)
        cr_expect_lt(r->scalar[i - 1].name, r->scalar[i].name, "scalar[] not sorted by id");
    cr_expect_eq(ks_resources_scalar(r, aaa), 1);
    cr_expect_eq(ks_resources_scalar(r, gpu), 3);
    cr_expect_eq(ks_resources_scalar(r, zzz), 5);
    cr_expect_eq(ks_resources_scalar(r, huge), 4 * MI);
    cr_expect_eq(ks_resources_scalar(r, sym("example.com/none")), 0);
    /* Extended resources get no non-zero default. */
    cr_expect_eq(ks_resources_scalar(&p->nonzero_requests.pub, gpu), 3);
    cr_expect_eq(p->nonzero_requests.pub.nscalar, 4);
    ks__pod_unref(p);
}

Test(objects, takes_the_init_container_max_per_extended_resource)
{
    ks_pod *p = pod(POD("'initContainers':[{'name':'i'," RES(
        "'example.com/foo':'4','example.com/bar':'1'") "}],"
                                                       "'containers':[{'name':'c'," RES(
                                                           "'example.com/foo':'1','example.com/"
                                                           "bar':'2'") "}]"));
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 4);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/bar")), 2);
    ks__pod_unref(p);
}

Test(objects, keeps_an_explicit_zero_extended_request)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c'," RES("'example.com/foo':'0'") "}]"));
    cr_expect_eq(p->requests.pub.nscalar, 1);
    cr_expect_eq(p->requests.pub.scalar[0].name, sym("example.com/foo"));
    cr_expect_eq(p->requests.pub.scalar[0].value, 0);
    ks__pod_unref(p);
}

Test(objects, reads_cpu_as_milli_and_others_as_rounded_up_units)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c'," RES(
        "'cpu':'0.0001','memory':'1.5',"
        "'ephemeral-storage':'0.5Ki','example.com/foo':'100m'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 1);
    cr_expect_eq(p->requests.pub.memory, 2);
    cr_expect_eq(p->requests.pub.ephemeral_storage, 512);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 1);
    ks__pod_unref(p);
}

Test(objects, accepts_quantities_written_as_json_numbers)
{
    ks_pod *p =
        pod(POD("'containers':[{'name':'c','resources':{'requests':{'cpu':2,'memory':1073741824,"
                "'example.com/foo':0.5}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2000);
    cr_expect_eq(p->requests.pub.memory, GI);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 1);
    ks__pod_unref(p);
}

/* ---- non-zero variant --------------------------------------------------------------------- */

Test(objects, defaults_missing_cpu_and_memory_in_the_nonzero_variant)
{
    ks_pod *p = pod(POD("'containers':[{'name':'a'},{'name':'b'," RES(
        "'cpu':'300m'") "},"
                        "{'name':'c'," RES("'memory':'1Gi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 300);
    cr_expect_eq(p->requests.pub.memory, GI);
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 100 + 300 + 100);
    cr_expect_eq(p->nonzero_requests.pub.memory, 200 * MI + 200 * MI + GI);
    ks__pod_unref(p);
}

Test(objects, keeps_an_explicit_zero_in_the_nonzero_variant)
{
    ks_pod *p = pod(POD("'containers':[{'name':'a'," RES("'cpu':'0','memory':'0'") "}]"));
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 0);
    cr_expect_eq(p->nonzero_requests.pub.memory, 0);
    ks__pod_unref(p);
}

Test(objects, defaults_init_containers_in_the_nonzero_variant)
{
    /* Container: 50m and no memory -> 50m / 200Mi; init container without requests -> 100m /
     * 200Mi; the max wins per resource. */
    ks_pod *p = pod(POD("'initContainers':[{'name':'i'}],"
                        "'containers':[{'name':'c'," RES("'cpu':'50m'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 50);
    cr_expect_eq(p->requests.pub.memory, 0);
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 100);
    cr_expect_eq(p->nonzero_requests.pub.memory, 200 * MI);
    ks__pod_unref(p);
}

Test(objects, gives_zero_for_a_pod_without_containers)
{
    ks_pod *p = pod("{'metadata':{'name':'p'},'spec':{}}");
    cr_expect_eq(p->requests.pub.milli_cpu, 0);
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 0);
    cr_expect_eq(p->nonzero_requests.pub.memory, 0);
    ks__pod_unref(p);
    p = pod("{'metadata':{'name':'p'}}");
    cr_expect_eq(p->nonzero_requests.pub.memory, 0);
    ks__pod_unref(p);
}

/* ---- defaulting from limits --------------------------------------------------------------- */

Test(objects, defaults_requests_to_limits)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c','resources':{'limits':{'cpu':'1','memory':'1Gi',"
                        "'ephemeral-storage':'2Gi','example.com/foo':'2'}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 1000);
    cr_expect_eq(p->requests.pub.memory, GI);
    cr_expect_eq(p->requests.pub.ephemeral_storage, 2 * GI);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 2);
    /* A limit counts as a request, so no 100m / 200Mi default either. */
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 1000);
    cr_expect_eq(p->nonzero_requests.pub.memory, GI);
    ks__pod_unref(p);
}

Test(objects, keeps_explicit_requests_over_limits)
{
    ks_pod *p = pod(POD(
        "'initContainers':[{'name':'i','resources':{'limits':{'cpu':'3'}}}],"
        "'containers':[{'name':'c','resources':{'requests':{'cpu':'100m','example.com/foo':'1'},"
        "'limits':{'cpu':'1','memory':'1Gi','example.com/foo':'4'}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 3000); /* the init container's limit is its request */
    cr_expect_eq(p->requests.pub.memory, GI);
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, sym("example.com/foo")), 1);
    ks__pod_unref(p);
}

/* ---- metadata and spec -------------------------------------------------------------------- */

static void expect_sorted(const ks_label *l, size_t n)
{
    for (size_t i = 1; i < n; i++)
        cr_expect_lt(l[i - 1].key, l[i].key, "labels not sorted by key id");
}

Test(objects, sorts_labels_annotations_and_node_selector)
{
    /* Intern the keys in reverse so JSON order and id order differ. */
    ks_sym kc = sym("c-key"), kb = sym("b-key"), ka = sym("a-key");
    ks_pod *p = pod("{'metadata':{'name':'p','labels':{'a-key':'1','c-key':'3','b-key':'2'},"
                    "'annotations':{'c-key':'x','a-key':'y'}},"
                    "'spec':{'nodeSelector':{'b-key':'z','a-key':'w','c-key':'v'}}}");
    cr_assert_eq(p->nlabels, 3);
    expect_sorted(p->labels, p->nlabels);
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, ka)), "1");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, kb)), "2");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, kc)), "3");
    cr_expect_eq(ks__labels_get(p->labels, p->nlabels, sym("missing")), KS_SYM_ABSENT);
    cr_assert_eq(p->nannotations, 2);
    expect_sorted(p->annotations, p->nannotations);
    cr_expect_str_eq(str(ks__labels_get(p->annotations, p->nannotations, kc)), "x");
    cr_expect_eq(ks__labels_get(p->annotations, p->nannotations, kb), KS_SYM_ABSENT);
    cr_assert_eq(p->nselector, 3);
    expect_sorted(p->node_selector, p->nselector);
    cr_expect_str_eq(str(ks__labels_get(p->node_selector, p->nselector, kb)), "z");
    ks__pod_unref(p);
}

Test(objects, finds_labels_in_larger_maps)
{
    char text[4096] = "{'metadata':{'name':'p','labels':{";
    for (int i = 0; i < 40; i++) {
        char kv[64];
        snprintf(kv, sizeof(kv), "%s'k%02d':'v%d'", i ? "," : "", (i * 17) % 40, i);
        strcat(text, kv);
    }
    strcat(text, "}}}");
    ks_pod *p = pod(text);
    cr_assert_eq(p->nlabels, 40);
    expect_sorted(p->labels, p->nlabels);
    for (int i = 0; i < 40; i++) {
        char k[16], v[16];
        snprintf(k, sizeof(k), "k%02d", (i * 17) % 40);
        snprintf(v, sizeof(v), "v%d", i);
        cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, sym(k))), v);
    }
    cr_expect_eq(ks__labels_get(NULL, 0, sym("k00")), KS_SYM_ABSENT);
    ks__pod_unref(p);
}

Test(objects, keeps_empty_label_values_distinct_from_absent)
{
    ks_pod *p = pod("{'metadata':{'name':'p','labels':{'empty':''}}}");
    cr_expect_eq(ks__labels_get(p->labels, p->nlabels, sym("empty")), KS_SYM_EMPTY);
    ks__pod_unref(p);
}

Test(objects, keeps_the_text_of_numeric_and_boolean_map_values)
{
    /* A YAML manifest turns unquoted `version: 0.1` into a number: the label is still "0.1". */
    ks_pod *p = pod(
        "{'metadata':{'name':'p','labels':{'version':0.1,'count':3,'big':12345678901234567,"
        "'flag':true,'off':false}},"
        "'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
        "'nodeSelectorTerms':[{'matchExpressions':[{'key':'cores','operator':'Gt','values':[4]},"
        "{'key':'ver','operator':'In','values':[1.1]}]}]}}}}}");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, sym("version"))), "0.1");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, sym("count"))), "3");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, sym("big"))), "12345678901234568");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, sym("flag"))), "true");
    cr_expect_str_eq(str(ks__labels_get(p->labels, p->nlabels, sym("off"))), "false");
    const ks_node_selector_term *t = &p->node_affinity->required[0];
    cr_expect_str_eq(str(t->exprs[0].values[0]), "4");
    cr_expect_str_eq(str(t->exprs[1].values[0]), "1.1");
    ks__pod_unref(p);
}

Test(objects, reads_identity_and_defaults)
{
    ks_pod *p = pod("{'metadata':{'name':'web'}}");
    cr_expect_str_eq(str(p->name), "web");
    cr_expect_str_eq(str(p->ns), "default");
    cr_expect_str_eq(p->key, "default/web");
    cr_expect_str_eq(p->uid, "default/web"); /* manifests without a uid */
    cr_expect_str_eq(p->resource_version, "");
    cr_expect_str_eq(str(p->scheduler_name), "default-scheduler");
    cr_expect_eq(p->node_name, KS_SYM_EMPTY);
    cr_expect_eq(p->nominated_node_name, KS_SYM_EMPTY);
    cr_expect_eq(p->priority, 0);
    cr_expect_eq(p->terminating, 0);
    cr_expect_eq(p->node_affinity, NULL);
    cr_expect_eq(p->ntolerations + p->nimages + p->nports + p->ngates + p->nlabels, 0);
    cr_expect_not_null(p->json);
    ks__pod_unref(p);
}

Test(objects, reads_scheduling_fields)
{
    ks_pod *p =
        pod("{'metadata':{'name':'web','namespace':'prod','uid':'u-1','resourceVersion':'42',"
            "'deletionTimestamp':'2024-01-01T00:00:00Z'},"
            "'spec':{'schedulerName':'custom','nodeName':'n1','priority':1000,"
            "'schedulingGates':[{'name':'example.com/a'},{'name':'example.com/b'}]},"
            "'status':{'nominatedNodeName':'n2','phase':'Running'}}");
    cr_expect_str_eq(p->key, "prod/web");
    cr_expect_str_eq(p->uid, "u-1");
    cr_expect_str_eq(p->resource_version, "42");
    cr_expect_str_eq(str(p->scheduler_name), "custom");
    cr_expect_str_eq(str(p->node_name), "n1");
    cr_expect_str_eq(str(p->nominated_node_name), "n2");
    cr_expect_str_eq(str(p->phase), "Running");
    cr_expect_eq(p->priority, 1000);
    cr_expect_eq(p->terminating, 1);
    cr_assert_eq(p->ngates, 2);
    cr_expect_str_eq(str(p->gates[0]), "example.com/a");
    cr_expect_str_eq(str(p->gates[1]), "example.com/b");
    ks__pod_unref(p);
}

Test(objects, reads_negative_priority_and_null_deletion_timestamp)
{
    ks_pod *p = pod("{'metadata':{'name':'p','deletionTimestamp':null},'spec':{'priority':-5}}");
    cr_expect_eq(p->priority, -5);
    cr_expect_eq(p->terminating, 0);
    ks__pod_unref(p);
}

Test(objects, parses_tolerations)
{
    ks_pod *p =
        pod(POD("'tolerations':["
                "{'key':'k1','operator':'Equal','value':'v1','effect':'NoSchedule'},"
                "{'key':'k2','value':'v2','effect':'PreferNoSchedule'},"
                "{'key':'k3','operator':'Exists','effect':'NoExecute','tolerationSeconds':300},"
                "{'operator':'Exists'}]"));
    cr_assert_eq(p->ntolerations, 4);
    const ks_toleration *t = p->tolerations;
    cr_expect_str_eq(str(t[0].key), "k1");
    cr_expect_eq(t[0].op, KS_TOL_EQUAL);
    cr_expect_str_eq(str(t[0].value), "v1");
    cr_expect_eq(t[0].effect, KS_EFFECT_NO_SCHEDULE);
    cr_expect_eq(t[0].has_seconds, 0);
    cr_expect_eq(t[1].op, KS_TOL_EQUAL); /* operator defaults to Equal */
    cr_expect_eq(t[1].effect, KS_EFFECT_PREFER_NO_SCHEDULE);
    cr_expect_eq(t[2].op, KS_TOL_EXISTS);
    cr_expect_eq(t[2].effect, KS_EFFECT_NO_EXECUTE);
    cr_expect_eq(t[2].has_seconds, 1);
    cr_expect_eq(t[2].toleration_seconds, 300);
    cr_expect_eq(t[3].key, KS_SYM_EMPTY); /* any key */
    cr_expect_eq(t[3].op, KS_TOL_EXISTS);
    cr_expect_eq(t[3].effect, KS_EFFECT_ALL); /* any effect */
    ks__pod_unref(p);
}

Test(objects, rejects_an_unknown_toleration_operator_naming_the_field)
{
    char err[512];
    int rc =
        pod_err(POD("'tolerations':[{'key':'a','operator':'Exists'},{'key':'b','operator':'Foo'}]"),
                err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    cr_expect(strstr(err, "spec.tolerations[1].operator") != NULL, "message: %s", err);
    cr_expect(strstr(err, "\"Foo\"") != NULL, "message: %s", err);
    cr_expect(strstr(err, "Equal") && strstr(err, "Exists"), "should list valid values: %s", err);
}

Test(objects, rejects_an_unknown_toleration_effect_naming_the_field)
{
    char err[512];
    int rc = pod_err(POD("'tolerations':[{'key':'a','effect':'NoScheduling'}]"), err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    cr_expect(strstr(err, "spec.tolerations[0].effect") != NULL, "message: %s", err);
    cr_expect(strstr(err, "NoScheduling") != NULL, "message: %s", err);
}

Test(objects, parses_required_node_affinity_terms)
{
    ks_pod *p =
        pod(POD("'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                "'nodeSelectorTerms':["
                "{'matchExpressions':["
                "{'key':'zone','operator':'In','values':['a','b']},"
                "{'key':'disk','operator':'NotIn','values':['hdd']},"
                "{'key':'gpu','operator':'Exists'},"
                "{'key':'spot','operator':'DoesNotExist'},"
                "{'key':'cores','operator':'Gt','values':['4']},"
                "{'key':'mem','operator':'Lt','values':['64']}]},"
                "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}]}]}}}"));
    const ks_node_affinity *a = p->node_affinity;
    cr_assert_not_null(a);
    cr_expect_eq(a->has_required, 1);
    cr_assert_eq(a->nrequired, 2);
    cr_expect_eq(a->npreferred, 0);
    const ks_node_selector_term *t0 = &a->required[0], *t1 = &a->required[1];
    cr_assert_eq(t0->nexprs, 6);
    cr_expect_eq(t0->nfields, 0);
    static const ks_selector_op ops[] = {KS_OP_IN, KS_OP_NOT_IN, KS_OP_EXISTS, KS_OP_DOES_NOT_EXIST,
                                         KS_OP_GT, KS_OP_LT};
    static const char *keys[] = {"zone", "disk", "gpu", "spot", "cores", "mem"};
    static const uint32_t nvals[] = {2, 1, 0, 0, 1, 1};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(t0->exprs[i].op, ops[i], "expr %d", i);
        cr_expect_str_eq(str(t0->exprs[i].key), keys[i]);
        cr_expect_eq(t0->exprs[i].nvalues, nvals[i], "expr %d", i);
    }
    cr_expect_str_eq(str(t0->exprs[0].values[0]), "a");
    cr_expect_str_eq(str(t0->exprs[0].values[1]), "b");
    cr_expect_str_eq(str(t0->exprs[4].values[0]), "4");
    cr_expect_eq(t1->nexprs, 0);
    cr_assert_eq(t1->nfields, 1);
    cr_expect_str_eq(str(t1->fields[0].key), "metadata.name");
    cr_expect_eq(t1->fields[0].op, KS_OP_IN);
    cr_expect_str_eq(str(t1->fields[0].values[0]), "n1");
    ks__pod_unref(p);
}

Test(objects, parses_preferred_node_affinity_weights)
{
    ks_pod *p = pod(POD(
        "'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
        "{'weight':10,'preference':{'matchExpressions':[{'key':'a','operator':'Exists'}]}},"
        "{'weight':90,'preference':{'matchExpressions':[{'key':'b','operator':'In','values':['x']}]"
        ","
        "'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n1','n2']}]}}]}}"));
    const ks_node_affinity *a = p->node_affinity;
    cr_assert_not_null(a);
    cr_expect_eq(a->has_required, 0);
    cr_expect_eq(a->nrequired, 0);
    cr_assert_eq(a->npreferred, 2);
    cr_expect_eq(a->preferred[0].weight, 10);
    cr_expect_eq(a->preferred[1].weight, 90);
    cr_expect_eq(a->preferred[0].term.nexprs, 1);
    cr_expect_eq(a->preferred[0].term.exprs[0].op, KS_OP_EXISTS);
    cr_expect_eq(a->preferred[1].term.nexprs, 1);
    cr_expect_str_eq(str(a->preferred[1].term.exprs[0].values[0]), "x");
    cr_assert_eq(a->preferred[1].term.nfields, 1);
    cr_expect_eq(a->preferred[1].term.fields[0].op, KS_OP_NOT_IN);
    cr_expect_eq(a->preferred[1].term.fields[0].nvalues, 2);
    ks__pod_unref(p);
}

Test(objects, leaves_node_affinity_null_without_node_affinity)
{
    ks_pod *p = pod(POD("'affinity':{'podAffinity':{}}"));
    cr_expect_null(p->node_affinity);
    ks__pod_unref(p);
}

Test(objects, rejects_an_unknown_selector_operator_naming_the_field)
{
    char err[512];
    int rc =
        pod_err(POD("'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                    "'nodeSelectorTerms':[{'matchExpressions':[{'key':'a','operator':'Exists'}]},"
                    "{'matchExpressions':[{'key':'a','operator':'Exists'},"
                    "{'key':'b','operator':'Within','values':['x']}]}]}}}"),
                err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    cr_expect(strstr(err,
                     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                     ".nodeSelectorTerms[1].matchExpressions[1].operator") != NULL,
              "message: %s", err);
    cr_expect(strstr(err, "Within") != NULL, "message: %s", err);

    rc = pod_err(
        POD("'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
            "{'weight':1,'preference':{'matchFields':[{'key':'metadata.name','operator':'in'}]}}]}"
            "}"),
        err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    cr_expect(strstr(err,
                     "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0]"
                     ".operator") != NULL,
              "message: %s", err);
}

Test(objects, lists_images_init_containers_first)
{
    ks_pod *p =
        pod(POD("'containers':[{'name':'a','image':'app:1'},{'name':'b','image':'sidecar:2'},"
                "{'name':'noimage'}],"
                "'initContainers':[{'name':'i','image':'init:3'}]"));
    cr_assert_eq(p->nimages, 3);
    cr_expect_str_eq(str(p->images[0]), "init:3");
    cr_expect_str_eq(str(p->images[1]), "app:1");
    cr_expect_str_eq(str(p->images[2]), "sidecar:2");
    ks__pod_unref(p);
}

Test(objects, lists_host_ports_with_defaults)
{
    ks_pod *p = pod(POD("'containers':[{'name':'a','ports':["
                        "{'containerPort':80,'hostPort':8080},"
                        "{'containerPort':53,'hostPort':53,'protocol':'UDP','hostIP':'10.0.0.1'},"
                        "{'containerPort':81},"
                        "{'containerPort':82,'hostPort':0},"
                        "{'containerPort':83,'hostPort':8083,'protocol':'','hostIP':''}]}]"));
    cr_assert_eq(p->nports, 3);
    cr_expect_eq(p->host_ports[0].port, 8080);
    cr_expect_str_eq(str(p->host_ports[0].protocol), "TCP");
    cr_expect_str_eq(str(p->host_ports[0].host_ip), "0.0.0.0");
    cr_expect_eq(p->host_ports[1].port, 53);
    cr_expect_str_eq(str(p->host_ports[1].protocol), "UDP");
    cr_expect_str_eq(str(p->host_ports[1].host_ip), "10.0.0.1");
    cr_expect_eq(p->host_ports[2].port, 8083);
    cr_expect_str_eq(str(p->host_ports[2].protocol), "TCP");
    cr_expect_str_eq(str(p->host_ports[2].host_ip), "0.0.0.0");
    ks__pod_unref(p);
}

Test(objects, counts_host_ports_of_sidecars_but_not_of_regular_init_containers)
{
    ks_pod *p = pod(POD(
        "'initContainers':["
        "{'name':'init','ports':[{'containerPort':1,'hostPort':9001}]},"
        "{'name':'side','restartPolicy':'Always','ports':[{'containerPort':2,'hostPort':9002}]}],"
        "'containers':[{'name':'c','ports':[{'containerPort':3,'hostPort':9003}]}]"));
    cr_assert_eq(p->nports, 2);
    cr_expect_eq(p->host_ports[0].port, 9002);
    cr_expect_eq(p->host_ports[1].port, 9003);
    ks__pod_unref(p);
}

/* ---- errors ------------------------------------------------------------------------------- */

Test(objects, names_the_field_of_an_invalid_container_quantity)
{
    char err[512];
    cr_expect_eq(
        pod_err(POD("'containers':[{'name':'c'," RES("'cpu':'abc'") "}]"), err, sizeof(err)),
        KS_EPARSE);
    cr_expect(strstr(err, "spec.containers[0].resources.requests.cpu") != NULL, "message: %s", err);
    cr_expect(strstr(err, "\"abc\"") != NULL, "message: %s", err);

    cr_expect_eq(
        pod_err(
            POD("'containers':[{'name':'a'},{'name':'b','resources':{'limits':{'memory':'1GB'}}}]"),
            err, sizeof(err)),
        KS_EPARSE);
    cr_expect(strstr(err, "spec.containers[1].resources.limits.memory") != NULL, "message: %s",
              err);

    cr_expect_eq(pod_err(POD("'initContainers':[{'name':'i'," RES("'example.com/foo':'1x'") "}]"),
                         err, sizeof(err)),
                 KS_EPARSE);
    cr_expect(strstr(err, "spec.initContainers[0].resources.requests.example.com/foo") != NULL,
              "message: %s", err);
}

Test(objects, names_the_field_of_an_invalid_pod_level_quantity)
{
    char err[512];
    cr_expect_eq(pod_err(POD("'overhead':{'cpu':'x'}"), err, sizeof(err)), KS_EPARSE);
    cr_expect(strstr(err, "spec.overhead.cpu") != NULL, "message: %s", err);
    cr_expect_eq(pod_err(POD("'resources':{'requests':{'memory':'lots'}}"), err, sizeof(err)),
                 KS_EPARSE);
    cr_expect(strstr(err, "spec.resources.requests.memory") != NULL, "message: %s", err);
}

Test(objects, rejects_a_quantity_of_the_wrong_json_type)
{
    char err[512];
    cr_expect_eq(pod_err(POD("'containers':[{'name':'c','resources':{'requests':{'cpu':true}}}]"),
                         err, sizeof(err)),
                 KS_EPARSE);
    cr_expect(strstr(err, "spec.containers[0].resources.requests.cpu") != NULL, "message: %s", err);
}

Test(objects, requires_metadata_name)
{
    char err[512];
    cr_expect_eq(pod_err("{'metadata':{'namespace':'x'},'spec':{}}", err, sizeof(err)), KS_EPARSE);
    cr_expect(strstr(err, "metadata.name") != NULL, "message: %s", err);
    cr_expect_eq(pod_err("{'metadata':{'name':''}}", err, sizeof(err)), KS_EPARSE);
    cr_expect_eq(pod_err("{'spec':{}}", err, sizeof(err)), KS_EPARSE);
    cr_expect(strstr(err, "metadata.name") != NULL, "message: %s", err);
}

Test(objects, rejects_labels_that_are_not_a_map)
{
    char err[512];
    cr_expect_eq(pod_err("{'metadata':{'name':'p','labels':['a']}}", err, sizeof(err)), KS_EPARSE);
    cr_expect(strstr(err, "metadata.labels") != NULL, "message: %s", err);
    cr_expect_eq(pod_err("{'metadata':{'name':'p','labels':{'a':{'b':'c'}}}}", err, sizeof(err)),
                 KS_EPARSE);
    cr_expect(strstr(err, "metadata.labels.a") != NULL, "message: %s", err);
}

/* ---- nodes -------------------------------------------------------------------------------- */

Test(objects, reads_node_allocatable)
{
    ks_node *n = node(
        "{'metadata':{'name':'n1','resourceVersion':'7'},'status':{"
        "'capacity':{'cpu':'8','memory':'32Gi','pods':'250'},"
        "'allocatable':{'cpu':'7500m','memory':'30Gi','ephemeral-storage':'100Gi','pods':'110',"
        "'nvidia.com/gpu':'4','hugepages-1Gi':'2Gi'}}}");
    const ks_resources *a = &n->allocatable.pub;
    cr_expect_str_eq(str(n->name), "n1");
    cr_expect_str_eq(n->resource_version, "7");
    cr_expect_eq(a->milli_cpu, 7500);
    cr_expect_eq(a->memory, 30 * GI);
    cr_expect_eq(a->ephemeral_storage, 100 * GI);
    cr_expect_eq(a->allowed_pods, 110);
    cr_expect_eq(a->nscalar, 2);
    cr_expect_eq(ks_resources_scalar(a, sym("nvidia.com/gpu")), 4);
    cr_expect_eq(ks_resources_scalar(a, sym("hugepages-1Gi")), 2 * GI);
    cr_expect_eq(n->unschedulable, 0);
    ks__node_unref(n);
}

Test(objects, defaults_node_allocatable_to_capacity)
{
    ks_node *n = node(
        "{'metadata':{'name':'n1'},'status':{'capacity':{'cpu':'4','memory':'8Gi','pods':'110'}}}");
    cr_expect_eq(n->allocatable.pub.milli_cpu, 4000);
    cr_expect_eq(n->allocatable.pub.memory, 8 * GI);
    cr_expect_eq(n->allocatable.pub.allowed_pods, 110);
    ks__node_unref(n);
    n = node("{'metadata':{'name':'n2'},'status':{'allocatable':null,'capacity':{'cpu':'2'}}}");
    cr_expect_eq(n->allocatable.pub.milli_cpu, 2000);
    ks__node_unref(n);
}

Test(objects, parses_node_taints_labels_and_unschedulable)
{
    ks_sym zone = sym("topology.kubernetes.io/zone");
    ks_node *n = node("{'metadata':{'name':'n1','labels':{'topology.kubernetes.io/"
                      "zone':'a','kubernetes.io/hostname':'n1'},"
                      "'annotations':{'x':'y'}},"
                      "'spec':{'unschedulable':true,'taints':["
                      "{'key':'k1','value':'v1','effect':'NoSchedule'},"
                      "{'key':'k2','effect':'PreferNoSchedule'},"
                      "{'key':'k3','value':'v3','effect':'NoExecute'}]}}");
    cr_expect_eq(n->unschedulable, 1);
    cr_assert_eq(n->nlabels, 2);
    expect_sorted(n->labels, n->nlabels);
    cr_expect_str_eq(str(ks__labels_get(n->labels, n->nlabels, zone)), "a");
    cr_expect_eq(n->nannotations, 1);
    cr_assert_eq(n->ntaints, 3);
    cr_expect_str_eq(str(n->taints[0].key), "k1");
    cr_expect_str_eq(str(n->taints[0].value), "v1");
    cr_expect_eq(n->taints[0].effect, KS_EFFECT_NO_SCHEDULE);
    cr_expect_eq(n->taints[1].value, KS_SYM_EMPTY);
    cr_expect_eq(n->taints[1].effect, KS_EFFECT_PREFER_NO_SCHEDULE);
    cr_expect_eq(n->taints[2].effect, KS_EFFECT_NO_EXECUTE);
    ks__node_unref(n);
}

Test(objects, rejects_a_taint_with_a_bad_or_missing_effect)
{
    char err[512];
    cr_expect_eq(
        node_err("{'metadata':{'name':'n1'},'spec':{'taints':[{'key':'a','effect':'NoSchedule'},"
                 "{'key':'b','effect':'Sometimes'}]}}",
                 err, sizeof(err)),
        KS_EPARSE);
    cr_expect(strstr(err, "spec.taints[1].effect") != NULL, "message: %s", err);
    cr_expect(strstr(err, "Sometimes") != NULL, "message: %s", err);
    cr_expect_eq(
        node_err("{'metadata':{'name':'n1'},'spec':{'taints':[{'key':'a'}]}}", err, sizeof(err)),
        KS_EPARSE);
    cr_expect(strstr(err, "spec.taints[0].effect") != NULL, "message: %s", err);
}

Test(objects, rejects_a_node_without_name_or_with_a_bad_quantity)
{
    char err[512];
    cr_expect_eq(node_err("{'metadata':{}}", err, sizeof(err)), KS_EPARSE);
    cr_expect(strstr(err, "metadata.name") != NULL, "message: %s", err);
    cr_expect_eq(node_err("{'metadata':{'name':'n'},'status':{'allocatable':{'cpu':'four'}}}", err,
                          sizeof(err)),
                 KS_EPARSE);
    cr_expect(strstr(err, "status.allocatable.cpu") != NULL, "message: %s", err);
    cr_expect_eq(node_err("{'metadata':{'name':'n'},'status':{'capacity':{'memory':'1Gb'}}}", err,
                          sizeof(err)),
                 KS_EPARSE);
    cr_expect(strstr(err, "status.capacity.memory") != NULL, "message: %s", err);
}

Test(objects, reads_node_images)
{
    ks_node *n =
        node("{'metadata':{'name':'n1'},'status':{'images':["
             "{'names':['docker.io/library/nginx:1.25','nginx:1.25'],'sizeBytes':187000000},"
             "{'names':[],'sizeBytes':5},"
             "{'names':['gcr.io/pause:3.9'],'sizeBytes':700000}]}}");
    cr_assert_eq(n->nimages, 3);
    cr_assert_eq(n->images[0].nnames, 2);
    cr_expect_str_eq(str(n->images[0].names[0]), "docker.io/library/nginx:1.25");
    cr_expect_str_eq(str(n->images[0].names[1]), "nginx:1.25");
    cr_expect_eq(n->images[0].size_bytes, 187000000);
    cr_expect_eq(n->images[1].nnames, 0);
    cr_assert_eq(n->images[2].nnames, 1);
    cr_expect_str_eq(str(n->images[2].names[0]), "gcr.io/pause:3.9");
    cr_expect_eq(n->images[2].size_bytes, 700000);
    ks__node_unref(n);
}

/* ---- requests of running pods resized in place (component-helpers resource v0.37 PodRequests
 * with UseStatusResources and InPlacePodLevelResourcesVerticalScalingEnabled) ---------------- */

#define RUNNING(spec, status)                                                                      \
    "{'metadata':{'name':'p','namespace':'ns'},'spec':{'nodeName':'n1'," spec "},"                 \
    "'status':{" status "}}"
#define CREQ(cpu) "'resources':{'requests':{'cpu':'" cpu "'}}"

Test(objects, resized_down_pod_counts_its_larger_actual_requests)
{
    /* spec says 1 cpu, the kubelet still runs it with 2: max(spec, actuated, allocated) = 2. */
    ks_pod *p = pod(RUNNING("'containers':[{'name':'c'," CREQ("1") "}]",
                            "'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'2'},"
                            "'resources':{'requests':{'cpu':'2'}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2000);
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 1000, "Fit's scorer reads the spec only");
    cr_expect_eq(p->node_nonzero_requests.pub.milli_cpu, 2000);
    ks__pod_unref(p);
}

Test(objects, resized_up_pod_counts_its_spec_before_actuation)
{
    /* spec 3, allocated 3, actuated still 2: 3. */
    ks_pod *p = pod(RUNNING("'containers':[{'name':'c'," CREQ("3") "}]",
                            "'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'3'},"
                            "'resources':{'requests':{'cpu':'2'}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 3000);
    ks__pod_unref(p);
}

Test(objects, actuated_falls_back_to_allocated_then_spec)
{
    /* No status resources: actuated = allocated (2.5); the second container has no status at
     * all: spec (1). */
    ks_pod *p = pod(RUNNING("'containers':[{'name':'a'," CREQ("1") "},{'name':'b'," CREQ("1") "}]",
                            "'containerStatuses':[{'name':'a','allocatedResources':{'cpu':"
                            "'2500m'}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 3500);
    ks__pod_unref(p);
}

Test(objects, infeasible_resize_ignores_the_spec)
{
    /* PodResizePending/Infeasible: the spec's 4 cpu are not counted, only what runs (2). */
    ks_pod *p = pod(RUNNING("'containers':[{'name':'c'," CREQ("4") "}]",
                            "'conditions':[{'type':'PodResizePending','status':'True',"
                            "'reason':'Infeasible'}],'containerStatuses':[{'name':'c',"
                            "'allocatedResources':{'cpu':'2'},'resources':{'requests':{'cpu':"
                            "'2'}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2000);
    ks__pod_unref(p);
    /* Deferred keeps the spec. */
    p = pod(RUNNING("'containers':[{'name':'c'," CREQ("4") "}]",
                    "'conditions':[{'type':'PodResizePending','status':'True','reason':"
                    "'Deferred'}],'containerStatuses':[{'name':'c','allocatedResources':{'cpu':"
                    "'2'},'resources':{'requests':{'cpu':'2'}}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 4000);
    ks__pod_unref(p);
}

Test(objects, pod_level_status_aggregates_replace_container_statuses)
{
    /* status.allocatedResources and status.resources.requests (the kubelet's pod-level sums) are
     * used instead of the container statuses: max(1, 3, 3) = 3. */
    ks_pod *p = pod(RUNNING("'containers':[{'name':'c'," CREQ("1") "}]",
                            "'allocatedResources':{'cpu':'3'},'resources':{'requests':{'cpu':"
                            "'3'}},'containerStatuses':[{'name':'c','allocatedResources':{'cpu':"
                            "'9'}}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 3000);
    ks__pod_unref(p);
}

Test(objects, pod_level_requests_take_the_larger_status_value)
{
    /* Pod-level spec cpu 1 resized from 2 (status.resources.requests 2): 2. */
    ks_pod *p = pod(RUNNING("'resources':{'requests':{'cpu':'1'}},'containers':[{'name':'c'}]",
                            "'resources':{'requests':{'cpu':'2'}},'allocatedResources':{'cpu':"
                            "'1'}"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2000);
    ks__pod_unref(p);
}

Test(objects, node_nonzero_with_pod_level_requests_defaults_only_missing_resources)
{
    /* Pod-level cpu; one container requests 100Mi memory, the other nothing. The scorers'
     * variant gives every container its 200Mi default (300Mi); what the pod adds to its node
     * (CalculateResource) defaults only a resource the whole pod lacks: memory is listed, so
     * 100Mi. */
    ks_pod *p = pod(POD("'resources':{'requests':{'cpu':'1'}},'containers':[{'name':'a',"
                        "'resources':{'requests':{'memory':'100Mi'}}},{'name':'b'}]"));
    cr_expect_eq(p->requests.pub.memory, 100 * MI);
    cr_expect_eq(p->nonzero_requests.pub.memory, 300 * MI);
    cr_expect_eq(p->node_nonzero_requests.pub.memory, 100 * MI);
    cr_expect_eq(p->nonzero_requests.pub.milli_cpu, 200, "Fit's scorer: containers' defaults");
    cr_expect_eq(p->node_nonzero_requests.pub.milli_cpu, 1000);
    ks__pod_unref(p);
    /* No memory anywhere: each container gets the default on both sides. */
    p = pod(POD("'resources':{'requests':{'cpu':'1'}},'containers':[{'name':'a'},{'name':'b'}]"));
    cr_expect_eq(p->nonzero_requests.pub.memory, 400 * MI);
    cr_expect_eq(p->node_nonzero_requests.pub.memory, 400 * MI);
    ks__pod_unref(p);
    /* Without pod-level requests both variants default every container. */
    p = pod(POD("'containers':[{'name':'a','resources':{'requests':{'memory':'100Mi'}}},"
                "{'name':'b'}]"));
    cr_expect_eq(p->node_nonzero_requests.pub.memory, 300 * MI);
    cr_expect_eq(p->node_nonzero_requests.pub.milli_cpu, 200);
    ks__pod_unref(p);
}

Test(objects, pod_level_hugepages_replace_the_containers_sum)
{
    ks_pod *p = pod(POD("'resources':{'requests':{'hugepages-2Mi':'4Mi'}},'containers':[{'name':"
                        "'c','resources':{'requests':{'hugepages-2Mi':'2Mi','cpu':'1'}}}]"));
    cr_expect_eq(ks_resources_scalar(&p->requests.pub, ks__intern("hugepages-2Mi")), 4 * MI);
    cr_expect_eq(p->requests.pub.milli_cpu, 1000);
    ks__pod_unref(p);
}

Test(objects, reads_node_declared_features_as_listed)
{
    ks_node *n = node("{'metadata':{'name':'n1'},'status':{'declaredFeatures':["
                      "'RestartAllContainersOnContainerExits','VolumeBindMountOptions']}}");
    cr_assert_eq(n->ndeclared_features, 2);
    cr_expect_str_eq(str(n->declared_features[0]), "RestartAllContainersOnContainerExits");
    cr_expect_str_eq(str(n->declared_features[1]), "VolumeBindMountOptions");
    ks__node_unref(n);
    n = node("{'metadata':{'name':'n2'},'status':{}}");
    cr_expect_eq(n->ndeclared_features, 0);
    cr_expect_null(n->declared_features);
    ks__node_unref(n);
}

Test(objects, reads_the_spec_facts_node_declared_features_infers_from)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c'}]"));
    cr_expect_eq(p->spec_flags, 0u);
    ks__pod_unref(p);
    p = pod(POD("'hostNetwork':true,'hostUsers':false,'containers':[{'name':'c'}]"));
    cr_expect_eq(p->spec_flags, KS_POD_SPEC_HOST_NETWORK | KS_POD_SPEC_HOST_USERS_FALSE);
    ks__pod_unref(p);
    /* hostUsers true or absent is not "false"; hostNetwork false is not set. */
    p = pod(POD("'hostNetwork':false,'hostUsers':true,'containers':[{'name':'c'}]"));
    cr_expect_eq(p->spec_flags, 0u);
    ks__pod_unref(p);
    p = pod(POD("'initContainers':[{'name':'i','restartPolicyRules':[{'action':'Restart'},"
                "{'action':'RestartAllContainers'}]}],'containers':[{'name':'c'}]"));
    cr_expect_eq(p->spec_flags, KS_POD_SPEC_RESTART_ALL_CONTAINERS);
    ks__pod_unref(p);
    /* restartPolicyRules on an ephemeral container do not count (upstream looks at containers
     * and init containers only); bindMountOptions there do. */
    p = pod(POD("'containers':[{'name':'c','volumeMounts':[{'name':'v','mountPath':'/a'}]}],"
                "'ephemeralContainers':[{'name':'e','restartPolicyRules':[{'action':"
                "'RestartAllContainers'}],'volumeMounts':[{'name':'v','mountPath':'/v',"
                "'bindMountOptions':['rro']}]}]"));
    cr_expect_eq(p->spec_flags, KS_POD_SPEC_BIND_MOUNT_OPTIONS);
    ks__pod_unref(p);
}

Test(objects, lists_image_volume_references_in_spec_order)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c','image':'app'}],'volumes':["
                        "{'name':'a','image':{'reference':'quay.io/models/llm:v1'}},"
                        "{'name':'b','emptyDir':{}},"
                        "{'name':'c','image':{'reference':'data','pullPolicy':'IfNotPresent'}},"
                        "{'name':'d','image':{}}]"));
    cr_assert_eq(p->nimage_volumes, 3);
    cr_expect_str_eq(str(p->image_volumes[0]), "quay.io/models/llm:v1");
    cr_expect_str_eq(str(p->image_volumes[1]), "data");
    cr_expect_str_eq(str(p->image_volumes[2]), "");
    /* The container images are listed on their own. */
    cr_expect_eq(p->nimages, 1);
    ks__pod_unref(p);
}

/* ---- reference counting and assumed copies ------------------------------------------------ */

Test(objects, frees_a_pod_at_the_last_unref)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c'}]"));
    cr_expect_eq(ks__pod_ref(p), p);
    cr_expect_eq(atomic_load(&p->refs), 2);
    ks__pod_unref(p);
    cr_expect_eq(atomic_load(&p->refs), 1);
    ks__pod_unref(p); /* freed: the sanitizer build checks nothing leaks or is reused */
    ks__pod_unref(NULL);
    cr_expect_null(ks__pod_ref(NULL));

    ks_node *n = node("{'metadata':{'name':'n'}}");
    cr_expect_eq(ks__node_ref(n), n);
    ks__node_unref(n);
    ks__node_unref(n);
    ks__node_unref(NULL);
}

Test(objects, assumed_copy_shares_arrays_and_sets_the_node)
{
    ks_pod *p = pod(
        "{'metadata':{'name':'p','uid':'u1','labels':{'app':'web'}},"
        "'spec':{'tolerations':[{'operator':'Exists'}],"
        "'containers':[{'name':'c','image':'img'," RES("'cpu':'1','example.com/foo':'2'") "}]}}");
    ks_sym n1 = sym("node-1");
    ks_pod *c = ks__pod_with_node(p, n1);
    cr_assert_not_null(c);
    cr_expect_neq(c, p);
    cr_expect_eq(atomic_load(&c->refs), 1);
    cr_expect_eq(c->node_name, n1);
    cr_expect_eq(p->node_name, KS_SYM_EMPTY, "the original must not change");
    cr_expect_eq(c->base, p);
    cr_expect_eq(c->labels, p->labels);
    cr_expect_eq(c->tolerations, p->tolerations);
    cr_expect_eq(c->images, p->images);
    cr_expect_eq(c->requests.pub.scalar, p->requests.pub.scalar);
    cr_expect_str_eq(c->uid, "u1");
    cr_expect_eq(atomic_load(&p->refs), 2, "the copy holds a reference to the original");

    /* The original's owner lets go first: the copy keeps it alive. */
    ks__pod_unref(p);
    cr_expect_str_eq(str(ks__labels_get(c->labels, c->nlabels, sym("app"))), "web");
    cr_expect_eq(c->requests.pub.milli_cpu, 1000);
    cr_expect_eq(ks_resources_scalar(&c->requests.pub, sym("example.com/foo")), 2);
    cr_expect_str_eq(c->key, "default/p");

    /* A copy of a copy points at the same original. */
    ks_pod *c2 = ks__pod_with_node(c, sym("node-2"));
    cr_expect_eq(c2->base, p);
    cr_expect_str_eq(str(c2->node_name), "node-2");
    ks__pod_unref(c);
    cr_expect_str_eq(str(c2->images[0]), "img");
    ks__pod_unref(c2);
}

/* ---- resource helpers --------------------------------------------------------------------- */

Test(objects, adds_and_subtracts_resource_lists)
{
    ks_pod *a = pod(
        POD("'containers':[{'name':'c'," RES("'cpu':'1','memory':'1Gi','example.com/b':'2'") "}]"));
    ks_pod *b = pod(POD("'containers':[{'name':'c'," RES(
        "'cpu':'500m','example.com/a':'3','example.com/b':'1'") "}]"));
    ks__resources sum = {0};
    ks__resources_add(&sum, &a->requests.pub);
    ks__resources_add(&sum, &b->requests.pub);
    cr_expect_eq(sum.pub.milli_cpu, 1500);
    cr_expect_eq(sum.pub.memory, GI);
    cr_expect_eq(ks_resources_scalar(&sum.pub, sym("example.com/a")), 3);
    cr_expect_eq(ks_resources_scalar(&sum.pub, sym("example.com/b")), 3);
    for (uint32_t i = 1; i < sum.pub.nscalar; i++)
        cr_expect_lt(sum.pub.scalar[i - 1].name, sum.pub.scalar[i].name);
    ks__resources copy;
    cr_assert_eq(ks__resources_copy(&copy, &sum.pub), 0);
    cr_expect_neq(copy.pub.scalar, sum.pub.scalar);
    ks__resources_sub(&sum, &a->requests.pub);
    cr_expect_eq(sum.pub.milli_cpu, 500);
    cr_expect_eq(sum.pub.memory, 0);
    cr_expect_eq(ks_resources_scalar(&sum.pub, sym("example.com/b")), 1);
    cr_expect_eq(ks_resources_scalar(&copy.pub, sym("example.com/b")), 3);
    ks__resources_free(&sum);
    ks__resources_free(&copy);
    ks__resources_free(NULL);
    ks__pod_unref(a);
    ks__pod_unref(b);
}

/* Sums past INT64_MAX saturate (they wrapped negative) and stay exact underneath: removing
 * the huge pod gives back the small one's values, in a clone (_dup) as well. */
Test(objects, resource_sums_saturate_and_come_back_exact)
{
    ks_pod *huge = pod(POD("'containers':[{'name':'c'," RES(
        "'cpu':'1e19','memory':'1e30','example.com/g':'1e19'") "}]"));
    ks_pod *small = pod(
        POD("'containers':[{'name':'c'," RES("'cpu':'1','memory':'1Gi','example.com/g':'2'") "}]"));
    ks__resources sum = {0}, clone;
    ks__resources_add(&sum, &huge->requests.pub);
    ks__resources_add(&sum, &huge->requests.pub);
    ks__resources_add(&sum, &small->requests.pub);
    cr_expect_eq(sum.pub.milli_cpu, INT64_MAX);
    cr_expect_eq(sum.pub.memory, INT64_MAX);
    cr_expect_eq(ks_resources_scalar(&sum.pub, sym("example.com/g")), INT64_MAX);
    cr_assert_eq(ks__resources_dup(&clone, &sum), 0);
    for (ks__resources *r = &sum; r; r = r == &sum ? &clone : NULL) {
        ks__resources_sub(r, &huge->requests.pub);
        cr_expect_eq(r->pub.milli_cpu, INT64_MAX);
        ks__resources_sub(r, &huge->requests.pub);
        cr_expect_eq(r->pub.milli_cpu, 1000);
        cr_expect_eq(r->pub.memory, GI);
        cr_expect_eq(ks_resources_scalar(&r->pub, sym("example.com/g")), 2);
    }
    ks__resources_free(&sum);
    ks__resources_free(&clone);
    ks__pod_unref(huge);
    ks__pod_unref(small);
}

/* startTime past year 2262 is past int64 nanoseconds: clamped, so later stays later. */
Test(objects, start_time_past_2262_is_clamped)
{
    cr_expect_eq(ks__parse_time_ns("9999-12-31T23:59:59Z"), INT64_MAX);
    cr_expect_lt(ks__parse_time_ns("2262-01-01T00:00:00Z"), INT64_MAX);
    cr_expect_gt(ks__parse_time_ns("2262-01-01T00:00:00Z"), 0);
}

Test(objects, pod_level_limits_default_pod_level_requests)
{
    /* API-server defaulting: spec.resources.limits without requests gives the requests. */
    ks_pod *p =
        pod(POD("'resources':{'limits':{'cpu':'2','memory':'1Gi'},'requests':{'memory':'512Mi'}},"
                "'containers':[{'name':'a'," RES("'cpu':'100m','memory':'64Mi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 2000, "pod-level cpu limit becomes the request");
    cr_expect_eq(p->requests.pub.memory, 512 * MI, "an explicit pod-level request wins");
    ks__pod_unref(p);
}

Test(objects, quantities_with_surrounding_spaces_are_trimmed)
{
    ks_pod *p = pod(POD("'containers':[{'name':'a'," RES("'cpu':' 250m ','memory':'\\t1Gi'") "}]"));
    cr_expect_eq(p->requests.pub.milli_cpu, 250);
    cr_expect_eq(p->requests.pub.memory, GI);
    ks__pod_unref(p);
}
