/*
 * Value validation of Pods and Nodes (core/api/objects.c, selector.c): read with
 * ks__pod_from_json_checked / ks__node_from_json_checked (cluster files), a value the
 * kube-apiserver would refuse is refused when the object is parsed, with the API server's message
 * (field.ErrorList wording) and kubesched's field path, instead of being clamped or read as
 * something else. Each rule has a test that asserts the exact message and one that the edge
 * values it allows are accepted. The last section: the lenient functions (objects from the API
 * server) accept what only a value rule refuses, and still refuse what cannot be decoded.
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

static void setup(void) { ks__host_init(); }

TestSuite(objects_validate, .init = setup);

static ks_pod *pod(const char *text)
{
    char err[512] = "";
    ks_pod *p = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__pod_from_json_checked(obj, &p, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "pod refused (%d): %s", rc, err);
    cr_assert_not_null(p);
    return p;
}

static void pod_ok(const char *text) { ks__pod_unref(pod(text)); }

/* The pod is refused with exactly msg. */
static void pod_refused(const char *text, const char *msg)
{
    char err[512] = "";
    ks_pod *p = (ks_pod *)1;
    cJSON *obj = th_json(text);
    int rc = ks__pod_from_json_checked(obj, &p, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, KS_EPARSE, "not refused (%d): %s", rc, text);
    cr_assert_null(p, "a refused pod must not be returned");
    cr_assert_str_eq(err, msg);
}

static ks_node *node(const char *text)
{
    char err[512] = "";
    ks_node *n = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__node_from_json_checked(obj, &n, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "node refused (%d): %s", rc, err);
    cr_assert_not_null(n);
    return n;
}

static void node_refused(const char *text, const char *msg)
{
    char err[512] = "";
    ks_node *n = (ks_node *)1;
    cJSON *obj = th_json(text);
    int rc = ks__node_from_json_checked(obj, &n, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, KS_EPARSE, "not refused (%d): %s", rc, text);
    cr_assert_null(n, "a refused node must not be returned");
    cr_assert_str_eq(err, msg);
}

/* A pod named p with the given spec (JSON object text without the braces). */
#define POD(spec) "{'metadata':{'name':'p','namespace':'ns'},'spec':{" spec "}}"
#define C1(fields) "'containers':[{'name':'c'," fields "}]"
#define REQS(req) "'resources':{'requests':{" req "}}"
#define LIMS(lim) "'resources':{'limits':{" lim "}}"
#define NODE(spec, status) "{'metadata':{'name':'n'},'spec':{" spec "},'status':{" status "}}"

#define NA_REQ "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define NA_PREF "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
/* Required node affinity with one term of the given matchExpressions. */
#define NODE_REQ(exprs)                                                                            \
    POD("'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"           \
        "'nodeSelectorTerms':[{'matchExpressions':[" exprs "]}]}}}")
#define NODE_PREF(weight)                                                                          \
    POD("'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[{"         \
        "'weight':" weight ",'preference':{'matchExpressions':[{'key':'a','operator':'Exists'}]}}" \
        "]}}")

#define PA_REQ "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define PA_PREF "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution"
#define PAA_PREF "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"
#define TERM(extra) "{'labelSelector':{'matchLabels':{'app':'web'}}" extra "}"
#define ZONE ",'topologyKey':'zone'"
#define POD_AFF(kind, which, terms) POD("'affinity':{'" kind "':{'" which "':[" terms "]}}")
#define REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"
#define PREFERRED "preferredDuringSchedulingIgnoredDuringExecution"
#define WEIGHTED(w, term) "{'weight':" w ",'podAffinityTerm':" term "}"

#define TSC "spec.topologySpreadConstraints[0]"
/* One spread constraint of the given fields. */
#define SPREAD(fields) POD("'topologySpreadConstraints':[{" fields "}]")
#define SPREAD_OK "'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'"

/* ---- requests, limits, overhead, node allocatable: not negative ---------------------------- */

Test(objects_validate, negative_container_request_is_refused)
{
    pod_refused(POD(C1(REQS("'cpu':'-2'"))),
                "spec.containers[0].resources.requests.cpu: Invalid value: \"-2\": must be greater "
                "than or equal to 0");
    /* YAML's plain -2 arrives as a JSON number. */
    pod_refused(POD(C1(REQS("'cpu':-2"))),
                "spec.containers[0].resources.requests.cpu: Invalid value: \"-2\": must be greater "
                "than or equal to 0");
    /* Below a milli: its milli value rounds up to 0, yet it is negative. */
    pod_refused(POD(C1(REQS("'memory':'-1n'"))),
                "spec.containers[0].resources.requests.memory: Invalid value: \"-1n\": must be "
                "greater than or equal to 0");
}

Test(objects_validate, negative_container_limit_is_refused)
{
    pod_refused(POD("'containers':[{'name':'a'},{'name':'b'," LIMS("'memory':'-1Gi'") "}]"),
                "spec.containers[1].resources.limits.memory: Invalid value: \"-1Gi\": must be "
                "greater than or equal to 0");
}

Test(objects_validate, negative_init_container_request_is_refused)
{
    pod_refused(POD("'initContainers':[{'name':'i'," REQS("'example.com/gpu':'-1'") "}]"),
                "spec.initContainers[0].resources.requests.example.com/gpu: Invalid value: \"-1\": "
                "must be greater than or equal to 0");
}

Test(objects_validate, negative_overhead_is_refused)
{
    pod_refused(POD("'overhead':{'cpu':'-100m'}"),
                "spec.overhead.cpu: Invalid value: \"-100m\": must be greater than or equal to 0");
    pod_refused(POD("'overhead':{'memory':'-0.5'}"),
                "spec.overhead.memory: Invalid value: \"-0.5\": must be greater than or equal to "
                "0");
}

Test(objects_validate, negative_pod_level_resources_are_refused)
{
    pod_refused(POD("'resources':{'requests':{'memory':'-5Mi'}}"),
                "spec.resources.requests.memory: Invalid value: \"-5Mi\": must be greater than or "
                "equal to 0");
    pod_refused(POD("'resources':{'limits':{'cpu':'-1'}}"),
                "spec.resources.limits.cpu: Invalid value: \"-1\": must be greater than or equal "
                "to 0");
}

Test(objects_validate, zero_quantities_are_accepted)
{
    ks_pod *p = pod(POD("'containers':[{'name':'c','resources':{'requests':{'cpu':'0','memory':0},"
                        "'limits':{'cpu':'-0'}}}],'overhead':{'cpu':'0m'},"
                        "'resources':{'requests':{'ephemeral-storage':'-0.0'}}"));
    cr_expect_eq(p->requests.pub.milli_cpu, 0);
    cr_expect_eq(p->requests.pub.memory, 0);
    ks__pod_unref(p);
}

Test(objects_validate, negative_node_allocatable_is_refused)
{
    node_refused(NODE("", "'allocatable':{'cpu':'4','pods':'-1'}"),
                 "status.allocatable.pods: Invalid value: \"-1\": must be greater than or equal "
                 "to 0");
    /* Allocatable defaults to capacity: then capacity is what is read and checked. */
    node_refused(NODE("", "'capacity':{'memory':'-8Gi'}"),
                 "status.capacity.memory: Invalid value: \"-8Gi\": must be greater than or equal "
                 "to 0");
}

Test(objects_validate, zero_node_allocatable_is_accepted)
{
    ks_node *n = node(NODE("", "'allocatable':{'cpu':'0','memory':'0','pods':0}"));
    cr_expect_eq(n->allocatable.pub.milli_cpu, 0);
    ks__node_unref(n);
}

/* ---- container ports ---------------------------------------------------------------------- */

#define PORTS(ports) POD(C1("'ports':[" ports "]"))

Test(objects_validate, host_port_out_of_range_is_refused)
{
    pod_refused(PORTS("{'containerPort':80,'hostPort':70000}"),
                "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and "
                "65535, inclusive");
    pod_refused(PORTS("{'containerPort':80,'hostPort':65536}"),
                "spec.containers[0].ports[0].hostPort: Invalid value: 65536: must be between 1 and "
                "65535, inclusive");
    pod_refused(POD("'containers':[{'name':'a'},{'name':'b','ports':[{'containerPort':1},"
                    "{'containerPort':2,'hostPort':-1}]}]"),
                "spec.containers[1].ports[1].hostPort: Invalid value: -1: must be between 1 and "
                "65535, inclusive");
}

Test(objects_validate, host_port_of_an_init_container_is_checked_too)
{
    /* A regular init container's host ports are not taken, but the API server refuses the pod. */
    pod_refused(POD("'initContainers':[{'name':'i','ports':[{'containerPort':80,"
                    "'hostPort':70000}]}]"),
                "spec.initContainers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 "
                "and 65535, inclusive");
}

Test(objects_validate, host_port_that_is_not_an_int32_is_refused)
{
    pod_refused(PORTS("{'containerPort':80,'hostPort':80.5}"),
                "spec.containers[0].ports[0].hostPort: expected a 32-bit integer, got 80.5");
    pod_refused(PORTS("{'containerPort':80,'hostPort':'80'}"),
                "spec.containers[0].ports[0].hostPort: expected a 32-bit integer, got \"80\"");
}

Test(objects_validate, host_port_edges_are_accepted)
{
    ks_pod *p = pod(PORTS("{'containerPort':80,'hostPort':65535},{'containerPort':81,'hostPort':1},"
                          "{'containerPort':82,'hostPort':0},{'containerPort':83}"));
    cr_assert_eq(p->nports, 2); /* hostPort 0 is unset */
    cr_expect_eq(p->host_ports[0].port, 65535);
    cr_expect_eq(p->host_ports[1].port, 1);
    ks__pod_unref(p);
}

Test(objects_validate, unknown_port_protocol_is_refused)
{
    pod_refused(PORTS("{'containerPort':80,'hostPort':80,'protocol':'HTTP'}"),
                "spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported "
                "values: \"SCTP\", \"TCP\", \"UDP\"");
}

Test(objects_validate, known_port_protocols_are_accepted)
{
    pod_ok(PORTS("{'containerPort':1,'hostPort':1,'protocol':'TCP'},"
                 "{'containerPort':2,'hostPort':2,'protocol':'UDP'},"
                 "{'containerPort':3,'hostPort':3,'protocol':'SCTP'},"
                 "{'containerPort':4,'hostPort':4,'protocol':''}"));
}

/* ---- tolerations -------------------------------------------------------------------------- */

#define TOL(t) POD("'tolerations':[{'key':'ok','operator':'Exists'}," t "]")

Test(objects_validate, unknown_toleration_operator_is_refused)
{
    pod_refused(TOL("{'key':'a','operator':'Foo'}"),
                "spec.tolerations[1].operator: Unsupported value: \"Foo\": supported values: "
                "\"Equal\", \"Exists\"");
}

Test(objects_validate, empty_toleration_key_needs_exists)
{
    pod_refused(TOL("{'operator':'Equal','value':'v'}"),
                "spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists "
                "when `key` is empty, which means \"match all values and all keys\"");
    pod_refused(TOL("{'effect':'NoSchedule'}"),
                "spec.tolerations[1].operator: Invalid value: \"\": operator must be Exists when "
                "`key` is empty, which means \"match all values and all keys\"");
}

Test(objects_validate, exists_toleration_with_a_value_is_refused)
{
    pod_refused(TOL("{'key':'a','operator':'Exists','value':'v'}"),
                "spec.tolerations[1].operator: Invalid value: \"v\": value must be empty when "
                "`operator` is 'Exists'");
}

Test(objects_validate, toleration_seconds_need_no_execute)
{
    pod_refused(TOL("{'key':'a','effect':'NoSchedule','tolerationSeconds':30}"),
                "spec.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be "
                "'NoExecute' when `tolerationSeconds` is set");
    pod_refused(TOL("{'key':'a','operator':'Exists','tolerationSeconds':0}"),
                "spec.tolerations[1].effect: Invalid value: \"\": effect must be 'NoExecute' when "
                "`tolerationSeconds` is set");
}

Test(objects_validate, unknown_toleration_effect_is_refused)
{
    pod_refused(TOL("{'key':'a','effect':'NoScheduling'}"),
                "spec.tolerations[1].effect: Unsupported value: \"NoScheduling\": supported "
                "values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
}

Test(objects_validate, valid_tolerations_are_accepted)
{
    ks_pod *p =
        pod(POD("'tolerations':["
                "{'operator':'Exists'},"
                "{'key':'a','operator':'Equal','value':'v','effect':'NoSchedule'},"
                "{'key':'b','value':'v','effect':'PreferNoSchedule'},"
                "{'key':'c','operator':'Exists','effect':'NoExecute','tolerationSeconds':0},"
                "{'key':'d','value':'','effect':'NoExecute','tolerationSeconds':-5},"
                "{'key':'e','operator':'Exists','value':''}]"));
    cr_expect_eq(p->ntolerations, 6);
    cr_expect_eq(p->tolerations[0].effect, KS_EFFECT_ALL);
    cr_expect_eq(p->tolerations[3].has_seconds, 1);
    ks__pod_unref(p);
}

/* ---- node taints -------------------------------------------------------------------------- */

#define TAINTS(t) NODE("'taints':[{'key':'ok','effect':'NoSchedule'}," t "]", "")

Test(objects_validate, unknown_taint_effect_is_refused)
{
    node_refused(TAINTS("{'key':'a','effect':'NoScheduling'}"),
                 "spec.taints[1].effect: Unsupported value: \"NoScheduling\": supported values: "
                 "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
}

Test(objects_validate, taint_effect_is_required)
{
    node_refused(TAINTS("{'key':'a','value':'v'}"), "spec.taints[1].effect: Required value");
    node_refused(TAINTS("{'key':'a','effect':''}"), "spec.taints[1].effect: Required value");
}

Test(objects_validate, taint_key_is_required)
{
    node_refused(TAINTS("{'effect':'NoSchedule'}"),
                 "spec.taints[1].key: Invalid value: \"\": name part must be non-empty");
    node_refused(TAINTS("{'key':'','effect':'NoExecute'}"),
                 "spec.taints[1].key: Invalid value: \"\": name part must be non-empty");
}

Test(objects_validate, valid_taints_are_accepted)
{
    ks_node *n = node(NODE("'taints':[{'key':'a','effect':'NoSchedule'},"
                           "{'key':'b','value':'v','effect':'PreferNoSchedule'},"
                           "{'key':'c','effect':'NoExecute'}]",
                           ""));
    cr_expect_eq(n->ntaints, 3);
    cr_expect_eq(n->taints[2].effect, KS_EFFECT_NO_EXECUTE);
    ks__node_unref(n);
}

/* ---- node affinity ------------------------------------------------------------------------ */

Test(objects_validate, node_affinity_weight_out_of_range_is_refused)
{
    pod_refused(NODE_PREF("0"), NA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
    pod_refused(NODE_PREF("101"),
                NA_PREF "[0].weight: Invalid value: 101: must be in the range 1-100");
    pod_refused(NODE_PREF("-3"),
                NA_PREF "[0].weight: Invalid value: -3: must be in the range 1-100");
    pod_refused(NODE_PREF("1e10"),
                NA_PREF "[0].weight: expected a 32-bit integer, got 10000000000");
}

Test(objects_validate, node_affinity_weight_is_required)
{
    pod_refused(POD("'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution'"
                    ":[{'preference':{'matchExpressions':[{'key':'a','operator':'Exists'}]}}]}}"),
                NA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
}

Test(objects_validate, node_affinity_weight_edges_are_accepted)
{
    ks_pod *p = pod(NODE_PREF("1"));
    cr_expect_eq(p->node_affinity->preferred[0].weight, 1);
    ks__pod_unref(p);
    p = pod(NODE_PREF("100"));
    cr_expect_eq(p->node_affinity->preferred[0].weight, 100);
    ks__pod_unref(p);
}

Test(objects_validate, node_selector_terms_are_required)
{
    pod_refused(POD("'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
                    "{'nodeSelectorTerms':[]}}}"),
                NA_REQ ".nodeSelectorTerms: Required value: must have at least one node selector "
                       "term");
    pod_refused(POD("'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
                    "{}}}"),
                NA_REQ ".nodeSelectorTerms: Required value: must have at least one node selector "
                       "term");
}

Test(objects_validate, unknown_node_selector_operator_is_refused)
{
    pod_refused(NODE_REQ("{'key':'a','operator':'Exists'},{'key':'b','operator':'Within',"
                         "'values':['x']}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[1].operator: Invalid value: "
                       "\"Within\": not a valid selector operator");
    pod_refused(NODE_REQ("{'key':'b','values':['x']}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"\": "
                       "not a valid selector operator");
}

Test(objects_validate, node_selector_in_and_not_in_need_values)
{
    pod_refused(NODE_REQ("{'key':'a','operator':'In'}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be "
                       "specified when `operator` is 'In' or 'NotIn'");
    pod_refused(NODE_REQ("{'key':'a','operator':'NotIn','values':[]}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be "
                       "specified when `operator` is 'In' or 'NotIn'");
}

Test(objects_validate, node_selector_exists_takes_no_values)
{
    pod_refused(NODE_REQ("{'key':'a','operator':'Exists','values':['x']}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be "
                       "specified when `operator` is 'Exists' or 'DoesNotExist'");
    pod_refused(NODE_REQ("{'key':'a','operator':'DoesNotExist','values':['x']}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be "
                       "specified when `operator` is 'Exists' or 'DoesNotExist'");
}

Test(objects_validate, node_selector_gt_and_lt_need_one_value)
{
    pod_refused(NODE_REQ("{'key':'a','operator':'Gt'}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be "
                       "specified single value when `operator` is 'Lt' or 'Gt'");
    pod_refused(NODE_REQ("{'key':'a','operator':'Lt','values':['1','2']}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be "
                       "specified single value when `operator` is 'Lt' or 'Gt'");
}

Test(objects_validate, node_selector_key_is_required)
{
    pod_refused(NODE_REQ("{'operator':'Exists'}"),
                NA_REQ ".nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: \"\": name "
                       "part must be non-empty");
}

Test(objects_validate, node_selector_rules_apply_to_preferred_terms)
{
    pod_refused(POD("'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution'"
                    ":[{'weight':5,'preference':{'matchExpressions':[{'key':'a','operator':'In'}]}}"
                    "]}}"),
                NA_PREF "[0].preference.matchExpressions[0].values: Required value: must be "
                        "specified when `operator` is 'In' or 'NotIn'");
}

Test(objects_validate, valid_node_selector_requirements_are_accepted)
{
    ks_pod *p = pod(NODE_REQ("{'key':'a','operator':'In','values':['x']},"
                             "{'key':'b','operator':'NotIn','values':['x','y']},"
                             "{'key':'c','operator':'Exists'},"
                             "{'key':'d','operator':'DoesNotExist','values':[]},"
                             "{'key':'e','operator':'Gt','values':['4']},"
                             "{'key':'f','operator':'Lt','values':[64]}"));
    cr_expect_eq(p->node_affinity->required[0].nexprs, 6);
    ks__pod_unref(p);
}

/* ---- pod (anti-)affinity ------------------------------------------------------------------ */

Test(objects_validate, pod_affinity_weight_out_of_range_is_refused)
{
    pod_refused(POD_AFF("podAffinity", PREFERRED, WEIGHTED("0", TERM(ZONE))),
                PA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
    pod_refused(POD_AFF("podAntiAffinity", PREFERRED,
                        WEIGHTED("50", TERM(ZONE)) "," WEIGHTED("101", TERM(ZONE))),
                PAA_PREF "[1].weight: Invalid value: 101: must be in the range 1-100");
    pod_refused(POD_AFF("podAntiAffinity", PREFERRED, "{'podAffinityTerm':" TERM(ZONE) "}"),
                PAA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
    pod_refused(POD_AFF("podAffinity", PREFERRED, WEIGHTED("2.5", TERM(ZONE))),
                PA_PREF "[0].weight: expected a 32-bit integer, got 2.5");
}

Test(objects_validate, pod_affinity_weight_edges_are_accepted)
{
    ks_pod *p = pod(POD_AFF("podAffinity", PREFERRED,
                            WEIGHTED("1", TERM(ZONE)) "," WEIGHTED("100", TERM(ZONE))));
    cr_expect_eq(p->pod_affinity->preferred_affinity[0].weight, 1);
    cr_expect_eq(p->pod_affinity->preferred_affinity[1].weight, 100);
    ks__pod_unref(p);
    p = pod(POD_AFF("podAntiAffinity", PREFERRED,
                    WEIGHTED("100", TERM(",'topologyKey':'host'")) "," WEIGHTED("1", TERM(ZONE))));
    cr_expect_eq(p->pod_affinity->preferred_anti_affinity[0].weight, 100);
    ks__pod_unref(p);
}

Test(objects_validate, pod_affinity_topology_key_is_required)
{
    pod_refused(POD_AFF("podAffinity", REQUIRED, TERM("")),
                PA_REQ "[0].topologyKey: Required value: can not be empty");
    pod_refused(POD_AFF("podAntiAffinity", REQUIRED, TERM(ZONE) "," TERM(",'topologyKey':''")),
                "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1]"
                ".topologyKey: Required value: can not be empty");
    pod_refused(POD_AFF("podAffinity", PREFERRED, WEIGHTED("10", TERM(""))),
                PA_PREF "[0].podAffinityTerm.topologyKey: Required value: can not be empty");
}

Test(objects_validate, pod_affinity_terms_with_a_topology_key_are_accepted)
{
    ks_pod *p = pod(POD_AFF("podAffinity", REQUIRED, TERM(ZONE)));
    cr_expect_eq(p->pod_affinity->nrequired_affinity, 1);
    ks__pod_unref(p);
}

/* ---- label selectors (pod affinity terms, spread constraints) ------------------------------ */

#define SEL_TERM(exprs) "{'labelSelector':{'matchExpressions':[" exprs "]},'topologyKey':'zone'}"

Test(objects_validate, unknown_label_selector_operator_is_refused)
{
    pod_refused(POD_AFF("podAffinity", REQUIRED,
                        SEL_TERM("{'key':'a','operator':'Exists'},{'key':'b','operator':'Within',"
                                 "'values':['x']}")),
                PA_REQ "[0].labelSelector.matchExpressions[1].operator: Invalid value: "
                       "\"Within\": not a valid selector operator");
    /* Gt is a node selector operator, not a label selector one. */
    pod_refused(POD_AFF("podAffinity", REQUIRED,
                        "{'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'Gt',"
                        "'values':['1']}]},'topologyKey':'zone'}"),
                PA_REQ "[0].namespaceSelector.matchExpressions[0].operator: Invalid value: \"Gt\": "
                       "not a valid selector operator");
}

Test(objects_validate, label_selector_in_and_not_in_need_values)
{
    pod_refused(POD_AFF("podAffinity", REQUIRED, SEL_TERM("{'key':'a','operator':'In'}")),
                PA_REQ "[0].labelSelector.matchExpressions[0].values: Required value: must be "
                       "specified when `operator` is 'In' or 'NotIn'");
    pod_refused(SPREAD(SPREAD_OK ",'labelSelector':{'matchExpressions':[{'key':'a','operator':"
                                 "'NotIn','values':[]}]}"),
                TSC ".labelSelector.matchExpressions[0].values: Required value: must be specified "
                    "when `operator` is 'In' or 'NotIn'");
}

Test(objects_validate, label_selector_exists_takes_no_values)
{
    pod_refused(POD_AFF("podAntiAffinity", PREFERRED,
                        WEIGHTED("1", SEL_TERM("{'key':'a','operator':'DoesNotExist','values':"
                                               "['x']}"))),
                PAA_PREF "[0].podAffinityTerm.labelSelector.matchExpressions[0].values: "
                         "Forbidden: may not be specified when `operator` is 'Exists' or "
                         "'DoesNotExist'");
    pod_refused(POD_AFF("podAffinity", REQUIRED,
                        SEL_TERM("{'key':'a','operator':'Exists','values':['x']}")),
                PA_REQ "[0].labelSelector.matchExpressions[0].values: Forbidden: may not be "
                       "specified when `operator` is 'Exists' or 'DoesNotExist'");
}

Test(objects_validate, label_selector_key_is_required)
{
    pod_refused(POD_AFF("podAffinity", REQUIRED, SEL_TERM("{'key':'','operator':'Exists'}")),
                PA_REQ "[0].labelSelector.matchExpressions[0].key: Invalid value: \"\": name part "
                       "must be non-empty");
}

Test(objects_validate, valid_label_selectors_are_accepted)
{
    ks_pod *p = pod(POD_AFF("podAffinity", REQUIRED,
                            SEL_TERM("{'key':'a','operator':'In','values':['x']},"
                                     "{'key':'b','operator':'NotIn','values':['x','y']},"
                                     "{'key':'c','operator':'Exists'},"
                                     "{'key':'d','operator':'DoesNotExist','values':[]}")));
    cr_expect_eq(p->pod_affinity->required_affinity[0].selector.nexprs, 4);
    ks__pod_unref(p);
}

/* ---- topology spread constraints ---------------------------------------------------------- */

Test(objects_validate, max_skew_must_be_positive)
{
    pod_refused(SPREAD("'maxSkew':0,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'"),
                TSC ".maxSkew: Invalid value: 0: must be greater than zero");
    pod_refused(SPREAD("'maxSkew':-1,'topologyKey':'zone','whenUnsatisfiable':'ScheduleAnyway'"),
                TSC ".maxSkew: Invalid value: -1: must be greater than zero");
    pod_refused(SPREAD("'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'"),
                TSC ".maxSkew: Invalid value: 0: must be greater than zero");
    pod_refused(SPREAD("'maxSkew':3000000000,'topologyKey':'zone','whenUnsatisfiable':"
                       "'DoNotSchedule'"),
                TSC ".maxSkew: expected a 32-bit integer, got 3000000000");
}

Test(objects_validate, max_skew_one_is_accepted)
{
    ks_pod *p = pod(SPREAD(SPREAD_OK));
    cr_expect_eq(p->spread[0].max_skew, 1);
    ks__pod_unref(p);
}

Test(objects_validate, spread_topology_key_is_required)
{
    pod_refused(SPREAD("'maxSkew':1,'topologyKey':'','whenUnsatisfiable':'DoNotSchedule'"),
                TSC ".topologyKey: Required value: can not be empty");
    pod_refused(SPREAD("'maxSkew':1,'whenUnsatisfiable':'DoNotSchedule'"),
                TSC ".topologyKey: Required value: can not be empty");
}

Test(objects_validate, unknown_when_unsatisfiable_is_refused)
{
    pod_refused(SPREAD("'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'Sometimes'"),
                TSC ".whenUnsatisfiable: Unsupported value: \"Sometimes\": supported values: "
                    "\"DoNotSchedule\", \"ScheduleAnyway\"");
    /* No default upstream: a missing one is "" and refused. */
    pod_refused(SPREAD("'maxSkew':1,'topologyKey':'zone'"),
                TSC ".whenUnsatisfiable: Unsupported value: \"\": supported values: "
                    "\"DoNotSchedule\", \"ScheduleAnyway\"");
}

Test(objects_validate, both_when_unsatisfiable_values_are_accepted)
{
    ks_pod *p =
        pod(POD("'topologySpreadConstraints':[{" SPREAD_OK "},"
                "{'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'ScheduleAnyway'}]"));
    cr_expect_eq(p->spread[0].when_unsatisfiable, KS_DO_NOT_SCHEDULE);
    cr_expect_eq(p->spread[1].when_unsatisfiable, KS_SCHEDULE_ANYWAY);
    ks__pod_unref(p);
}

Test(objects_validate, min_domains_must_be_positive)
{
    pod_refused(SPREAD(SPREAD_OK ",'minDomains':0"),
                TSC ".minDomains: Invalid value: 0: must be greater than zero");
    pod_refused(SPREAD(SPREAD_OK ",'minDomains':-2"),
                TSC ".minDomains: Invalid value: -2: must be greater than zero");
}

Test(objects_validate, min_domains_only_with_do_not_schedule)
{
    pod_refused(SPREAD("'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'ScheduleAnyway',"
                       "'minDomains':3"),
                TSC ".minDomains: Invalid value: 3: can only use minDomains if "
                    "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway");
}

Test(objects_validate, min_domains_edges_are_accepted)
{
    ks_pod *p = pod(SPREAD(SPREAD_OK ",'minDomains':1"));
    cr_expect_eq(p->spread[0].min_domains, 1);
    ks__pod_unref(p);
    p = pod(SPREAD("'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'ScheduleAnyway',"
                   "'minDomains':null"));
    cr_expect_eq(p->spread[0].min_domains, 0);
    ks__pod_unref(p);
}

Test(objects_validate, unknown_node_inclusion_policies_are_refused)
{
    pod_refused(SPREAD(SPREAD_OK ",'nodeAffinityPolicy':'Foo'"),
                TSC ".nodeAffinityPolicy: Unsupported value: \"Foo\": supported values: "
                    "\"Honor\", \"Ignore\"");
    pod_refused(SPREAD(SPREAD_OK ",'nodeTaintsPolicy':'honor'"),
                TSC ".nodeTaintsPolicy: Unsupported value: \"honor\": supported values: "
                    "\"Honor\", \"Ignore\"");
    pod_refused(SPREAD(SPREAD_OK ",'nodeTaintsPolicy':''"),
                TSC ".nodeTaintsPolicy: Unsupported value: \"\": supported values: "
                    "\"Honor\", \"Ignore\"");
}

Test(objects_validate, node_inclusion_policies_are_accepted)
{
    ks_pod *p = pod(SPREAD(SPREAD_OK ",'nodeAffinityPolicy':'Ignore','nodeTaintsPolicy':'Honor'"));
    cr_expect_eq(p->spread[0].node_affinity_policy, KS_POLICY_IGNORE);
    cr_expect_eq(p->spread[0].node_taints_policy, KS_POLICY_HONOR);
    ks__pod_unref(p);
    p = pod(SPREAD(SPREAD_OK ",'nodeAffinityPolicy':'Honor','nodeTaintsPolicy':null"));
    cr_expect_eq(p->spread[0].node_affinity_policy, KS_POLICY_HONOR);
    cr_expect_eq(p->spread[0].node_taints_policy, KS_POLICY_UNSET);
    ks__pod_unref(p);
}

Test(objects_validate, second_constraint_is_named_by_its_index)
{
    pod_refused(POD("'topologySpreadConstraints':[{" SPREAD_OK
                    "},{'maxSkew':0,'topologyKey':'host',"
                    "'whenUnsatisfiable':'DoNotSchedule'}]"),
                "spec.topologySpreadConstraints[1].maxSkew: Invalid value: 0: must be greater "
                "than zero");
}

/* ---- priority ----------------------------------------------------------------------------- */

Test(objects_validate, priority_outside_int32_is_refused)
{
    pod_refused(POD("'priority':3000000000"),
                "spec.priority: expected a 32-bit integer, got 3000000000");
    pod_refused(POD("'priority':1.5"), "spec.priority: expected a 32-bit integer, got 1.5");
}

Test(objects_validate, priority_int32_edges_are_accepted)
{
    ks_pod *p = pod(POD("'priority':2147483647"));
    cr_expect_eq(p->priority, 2147483647);
    ks__pod_unref(p);
    p = pod(POD("'priority':-2147483648"));
    cr_expect_eq(p->priority, INT32_MIN);
    ks__pod_unref(p);
}

/* ---- lenient reading: objects from the API server ------------------------------------------ */

/* The pod as ks__pod_from_json reads it (accepted). */
static ks_pod *lenient_pod(const char *text)
{
    char err[512] = "";
    ks_pod *p = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__pod_from_json(obj, &p, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "pod refused leniently (%d): %s: %s", rc, err, text);
    cr_assert_not_null(p);
    return p;
}

/* Refused by the checked reading with msg, accepted by the lenient one: a value rule. */
static void pod_rule_only(const char *text, const char *msg)
{
    pod_refused(text, msg);
    ks__pod_unref(lenient_pod(text));
}

/* Refused by both readings with msg: a decode error. */
static void pod_refused_both(const char *text, const char *msg)
{
    char err[512] = "";
    ks_pod *p = (ks_pod *)1;
    cJSON *obj = th_json(text);
    int rc = ks__pod_from_json(obj, &p, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, KS_EPARSE, "not refused leniently (%d): %s", rc, text);
    cr_assert_null(p);
    cr_assert_str_eq(err, msg);
    pod_refused(text, msg);
}

static void node_rule_only(const char *text, const char *msg)
{
    char err[512] = "";
    ks_node *n = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__node_from_json(obj, &n, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "node refused leniently (%d): %s: %s", rc, err, text);
    ks__node_unref(n);
    node_refused(text, msg);
}

Test(objects_validate, lenient_pod_reading_skips_the_value_rules)
{
    pod_rule_only(POD(C1(REQS("'cpu':'-2'"))),
                  "spec.containers[0].resources.requests.cpu: Invalid value: \"-2\": must be "
                  "greater than or equal to 0");
    pod_rule_only(PORTS("{'containerPort':80,'hostPort':70000}"),
                  "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 "
                  "and 65535, inclusive");
    pod_rule_only(PORTS("{'containerPort':80,'protocol':'HTTP'}"),
                  "spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported "
                  "values: \"SCTP\", \"TCP\", \"UDP\"");
    pod_rule_only(TOL("{'operator':'Equal','value':'v'}"),
                  "spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists "
                  "when `key` is empty, which means \"match all values and all keys\"");
    pod_rule_only(NODE_PREF("0"),
                  NA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
    pod_rule_only(POD("'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution'"
                      ":{'nodeSelectorTerms':[]}}}"),
                  NA_REQ ".nodeSelectorTerms: Required value: must have at least one node selector "
                         "term");
    pod_rule_only(NODE_REQ("{'key':'a','operator':'In','values':[]}"), NA_REQ
                  ".nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be "
                  "specified when `operator` is 'In' or 'NotIn'");
}

Test(objects_validate, lenient_pod_affinity_and_spread_skip_the_value_rules)
{
    pod_rule_only(POD_AFF("podAffinity", PREFERRED, WEIGHTED("0", TERM(ZONE))),
                  PA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
    pod_rule_only(POD_AFF("podAffinity", REQUIRED, TERM("")),
                  PA_REQ "[0].topologyKey: Required value: can not be empty");
    pod_rule_only(POD_AFF("podAffinity", REQUIRED, SEL_TERM("{'key':'a','operator':'In'}")),
                  PA_REQ "[0].labelSelector.matchExpressions[0].values: Required value: must be "
                         "specified when `operator` is 'In' or 'NotIn'");
    pod_rule_only(SPREAD("'maxSkew':0,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'"),
                  TSC ".maxSkew: Invalid value: 0: must be greater than zero");
    pod_rule_only(SPREAD("'maxSkew':1,'whenUnsatisfiable':'DoNotSchedule'"),
                  TSC ".topologyKey: Required value: can not be empty");
    pod_rule_only(SPREAD("'maxSkew':1,'topologyKey':'zone'"),
                  TSC ".whenUnsatisfiable: Unsupported value: \"\": supported values: "
                      "\"DoNotSchedule\", \"ScheduleAnyway\"");
    pod_rule_only(SPREAD("'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'ScheduleAnyway',"
                         "'minDomains':3"),
                  TSC ".minDomains: Invalid value: 3: can only use minDomains if "
                      "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway");
    pod_rule_only(SPREAD(SPREAD_OK ",'nodeAffinityPolicy':'Foo'"),
                  TSC ".nodeAffinityPolicy: Unsupported value: \"Foo\": supported values: "
                      "\"Honor\", \"Ignore\"");
}

Test(objects_validate, lenient_reading_keeps_the_values_as_written)
{
    ks_pod *p = lenient_pod(SPREAD("'maxSkew':0,'topologyKey':'zone','minDomains':2,"
                                   "'nodeTaintsPolicy':'Foo'"));
    cr_expect_eq(p->spread[0].max_skew, 0);
    cr_expect_eq(p->spread[0].min_domains, 2);
    cr_expect_eq(p->spread[0].when_unsatisfiable, KS_DO_NOT_SCHEDULE); /* absent */
    cr_expect_eq(p->spread[0].node_taints_policy, KS_POLICY_UNSET);
    ks__pod_unref(p);
    p = lenient_pod(NODE_PREF("0"));
    cr_expect_eq(p->node_affinity->preferred[0].weight, 0);
    ks__pod_unref(p);
    p = lenient_pod(POD_AFF("podAntiAffinity", PREFERRED, WEIGHTED("0", TERM(ZONE))));
    cr_expect_eq(p->pod_affinity->preferred_anti_affinity[0].weight, 0);
    ks__pod_unref(p);
}

Test(objects_validate, lenient_node_reading_skips_the_value_rules)
{
    node_rule_only(NODE("", "'allocatable':{'cpu':'-1'}"),
                   "status.allocatable.cpu: Invalid value: \"-1\": must be greater than or equal "
                   "to 0");
    node_rule_only(TAINTS("{'key':'','effect':'NoSchedule'}"),
                   "spec.taints[1].key: Invalid value: \"\": name part must be non-empty");
}

Test(objects_validate, decode_errors_are_refused_in_both_readings)
{
    pod_refused_both(POD("'priority':3000000000"),
                     "spec.priority: expected a 32-bit integer, got 3000000000");
    pod_refused_both(PORTS("{'containerPort':80,'hostPort':1e20}"),
                     "spec.containers[0].ports[0].hostPort: expected a 32-bit integer, got 1e+20");
    pod_refused_both(NODE_PREF("1.5"), NA_PREF "[0].weight: expected a 32-bit integer, got 1.5");
    pod_refused_both(POD_AFF("podAffinity", PREFERRED, WEIGHTED("'5'", TERM(ZONE))),
                     PA_PREF "[0].weight: expected a 32-bit integer, got \"5\"");
    pod_refused_both(SPREAD("'maxSkew':3000000000,'topologyKey':'zone'"),
                     TSC ".maxSkew: expected a 32-bit integer, got 3000000000");
    pod_refused_both(SPREAD(SPREAD_OK ",'minDomains':-3000000000"),
                     TSC ".minDomains: expected a 32-bit integer, got -3000000000");
    pod_refused_both(SPREAD("'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'Sometimes'"),
                     TSC ".whenUnsatisfiable: Unsupported value: \"Sometimes\": supported values: "
                         "\"DoNotSchedule\", \"ScheduleAnyway\"");
    pod_refused_both(TOL("{'key':'k','operator':'Maybe'}"),
                     "spec.tolerations[1].operator: Unsupported value: \"Maybe\": supported "
                     "values: \"Equal\", \"Exists\"");
}

/* Parsed pod affinity and spread constraints are shared by their JSON text (shared.h): a checked
 * read of a text a lenient read already holds must still run the value rules, and a lenient read
 * after a checked refusal must still accept it. */
Test(objects_validate, shared_parts_do_not_carry_over_between_readings)
{
    const char *aff = POD_AFF("podAffinity", PREFERRED, WEIGHTED("0", TERM(ZONE)));
    const char *spread =
        SPREAD("'maxSkew':0,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'");
    ks_pod *held_aff = lenient_pod(aff), *held_spread = lenient_pod(spread);
    pod_refused(aff, PA_PREF "[0].weight: Invalid value: 0: must be in the range 1-100");
    pod_refused(spread, TSC ".maxSkew: Invalid value: 0: must be greater than zero");
    ks_pod *again = lenient_pod(spread);
    cr_expect_eq(again->spread, held_spread->spread, "lenient reads of one text share it");
    ks__pod_unref(again);
    ks__pod_unref(held_aff);
    ks__pod_unref(held_spread);
}
