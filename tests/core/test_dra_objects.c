/*
 * The DRA kinds (core/api/dra_objects.c) and their place in the store (core/api/store.c): the
 * fields the DynamicResources plugin and its allocator read, from the shapes the test driver of
 * k8s.io/kubernetes (test/e2e/dra/test-driver) publishes and the plugin's unit tests use; the
 * API server's defaults; its refusals in the checked mode with the field path; replacement and
 * deletion with their change records; the slice indexes by node and by pool.
 *
 * JSON is written with single quotes, turned into double quotes before parsing.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sched/host_api.h"
#include "api/dra_objects.h"
#include "api/intern.h"
#include "api/store.h"
#include "harness.h"

static void setup(void) { ks__host_init(); }

TestSuite(dra_objects, .init = setup);

static ks__draobj *parse(const char *text, int checked)
{
    char err[512] = "";
    ks__draobj *o = NULL;
    cJSON *obj = th_json(text);
    int rc = checked ? ks__draobj_from_json_checked(obj, &o, err, sizeof(err))
                     : ks__draobj_from_json(obj, &o, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "parse failed (%d): %s", rc, err);
    return o;
}

/* A parse in the given mode that must fail with exactly msg. */
static void refused_mode(const char *text, int checked, const char *msg)
{
    char err[512] = "";
    ks__draobj *o = (ks__draobj *)1;
    cJSON *obj = th_json(text);
    int rc = checked ? ks__draobj_from_json_checked(obj, &o, err, sizeof(err))
                     : ks__draobj_from_json(obj, &o, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, KS_EPARSE, "expected a refusal for %s", text);
    cr_assert_null(o);
    cr_assert_str_eq(err, msg);
}

static void refused(const char *text, const char *msg) { refused_mode(text, 1, msg); }

/* Accepted leniently (what the API server stored is not judged again). */
static void lenient_ok(const char *text)
{
    ks__draobj *o = parse(text, 0);
    ks__draobj_unref(o);
}

#define GPU_SLICE                                                                                  \
    "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':"                \
    "'worker-1-gpu.example.com-x7k2p','uid':'s1','resourceVersion':'42'},'spec':{"                 \
    "'driver':'gpu.example.com','pool':{'name':'worker-1','generation':3,"                         \
    "'resourceSliceCount':1},'nodeName':'worker-1','devices':["                                    \
    "{'name':'gpu-0','attributes':{'gpu.example.com/model':{'string':'H200'},"                     \
    "'driverVersion':{'version':'1.2.3-rc.1'},'index':{'int':0},'mig':{'bool':false},"             \
    "'gpu.example.com/numa':{'ints':[0,1]}},"                                                      \
    "'capacity':{'gpu.example.com/memory':{'value':'141Gi'},"                                      \
    "'cores':{'value':'132','requestPolicy':{'default':'1','validRange':{'min':'1',"               \
    "'max':'132','step':'1'}}}},'allowMultipleAllocations':true,"                                  \
    "'taints':[{'key':'gpu.example.com/unhealthy','value':'ecc','effect':'NoSchedule',"            \
    "'timeAdded':'2026-12-01T10:00:00Z'}],"                                                        \
    "'bindsToNode':true,'bindingConditions':['attached'],"                                         \
    "'bindingFailureConditions':['attach-failed'],"                                                \
    "'consumesCounters':[{'counterSet':'gpu-0-counters','counters':{'memory':{'value':'141Gi'},"   \
    "'cores':{'value':'132'}}}]},"                                                                 \
    "{'name':'gpu-1','attributes':{'gpu.example.com/model':{'string':'H100'}}}]}}"

Test(dra_objects, resource_slice_fields)
{
    ks__draobj *o = parse(GPU_SLICE, 1);
    const ks_resource_slice *s = ks__dra_slice(o);
    cr_assert_not_null(s);
    cr_assert_null(ks__dra_claim(o));
    cr_assert_str_eq(o->key, "worker-1-gpu.example.com-x7k2p");
    cr_assert_eq(o->ns, KS_SYM_EMPTY, "slices are cluster-scoped");
    cr_assert_str_eq(o->uid, "s1");
    cr_assert_str_eq(o->resource_version, "42");
    cr_assert_str_eq(s->driver, "gpu.example.com");
    cr_assert_str_eq(ks__sym_str(s->driver_sym), "gpu.example.com");
    cr_assert_str_eq(s->pool_name, "worker-1");
    cr_assert_eq(s->pool_generation, 3);
    cr_assert_eq(s->pool_resource_slice_count, 1);
    cr_assert(s->node.has_node_name);
    cr_assert_str_eq(ks__sym_str(s->node.node_name), "worker-1");
    cr_assert_not(s->node.all_nodes);
    cr_assert_eq(s->ndevices, 2);
    const ks_dra_device *d = &s->devices[0];
    cr_assert_str_eq(d->name, "gpu-0", "devices keep the slice's order");
    cr_assert_str_eq(s->devices[1].name, "gpu-1");
    cr_assert_eq(d->nattributes, 5);
    /* Sorted by the name as written; unqualified names have no domain. */
    cr_assert_str_eq(d->attributes[0].qname.name, "driverVersion");
    const ks_dra_attribute *a = ks__dra_device_attribute(d, "gpu.example.com/model");
    cr_assert_not_null(a);
    cr_assert_eq(a->type, KS_DRA_ATTR_STRING);
    cr_assert_str_eq(a->s, "H200");
    cr_assert_str_eq(a->qname.domain, "gpu.example.com");
    cr_assert_str_eq(a->qname.id, "model");
    a = ks__dra_device_attribute(d, "driverVersion");
    cr_assert_eq(a->type, KS_DRA_ATTR_VERSION);
    cr_assert_str_eq(a->s, "1.2.3-rc.1");
    cr_assert_str_eq(a->qname.domain, "");
    cr_assert_str_eq(a->qname.id, "driverVersion");
    a = ks__dra_device_attribute(d, "index");
    cr_assert_eq(a->type, KS_DRA_ATTR_INT);
    cr_assert_eq(a->i, 0);
    a = ks__dra_device_attribute(d, "mig");
    cr_assert_eq(a->type, KS_DRA_ATTR_BOOL);
    cr_assert_eq(a->b, 0);
    a = ks__dra_device_attribute(d, "gpu.example.com/numa");
    cr_assert_eq(a->type, KS_DRA_ATTR_INTS);
    cr_assert_eq(a->n, 2);
    cr_assert_eq(a->ints[1], 1);
    cr_assert_null(ks__dra_device_attribute(d, "model"), "a qualified name is looked up whole");

    cr_assert_eq(d->ncapacity, 2);
    const ks_dra_capacity *c = ks__dra_device_capacity(d, "gpu.example.com/memory");
    cr_assert_not_null(c);
    cr_assert_eq(c->value.value, 141LL << 30, "exact bytes");
    cr_assert_str_eq(c->value.text, "141Gi");
    cr_assert_not(c->has_policy);
    c = ks__dra_device_capacity(d, "cores");
    cr_assert(c->has_policy && c->has_default && c->has_range);
    cr_assert_eq(c->dflt.value, 1);
    cr_assert_eq(c->max.value, 132);
    cr_assert(c->has_step);
    cr_assert_eq(c->step.milli, 1000);
    cr_assert(d->allow_multiple_allocations);
    cr_assert_eq(d->ntaints, 1);
    cr_assert_str_eq(d->taints[0].key, "gpu.example.com/unhealthy");
    cr_assert_eq(d->taints[0].effect, KS_DRA_EFFECT_NO_SCHEDULE);
    cr_assert_str_eq(d->taints[0].time_added, "2026-12-01T10:00:00Z");
    cr_assert(d->binds_to_node);
    cr_assert_eq(d->nbinding_conditions, 1);
    cr_assert_str_eq(d->binding_failure_conditions[0], "attach-failed");
    cr_assert_eq(d->nconsumes, 1);
    cr_assert_str_eq(d->consumes_counters[0].name, "gpu-0-counters");
    cr_assert_eq(d->consumes_counters[0].ncounters, 2);
    cr_assert_str_eq(d->consumes_counters[0].counters[0].name, "cores", "counters sorted");
    cr_assert_eq(d->consumes_counters[0].counters[1].value.value, 141LL << 30);
    cr_assert_not(s->devices[1].allow_multiple_allocations);
    cr_assert_eq(s->devices[1].ncapacity, 0);
    ks__draobj_unref(o);
}

Test(dra_objects, slice_node_selection_and_shared_counters)
{
    ks__draobj *o = parse(
        "{'kind':'ResourceSlice','metadata':{'name':'net'},'spec':{'driver':'net.example.com',"
        "'pool':{'name':'fabric','generation':0,'resourceSliceCount':2},"
        "'nodeSelector':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'rack','operator':"
        "'In','values':['r1','r2']}]}]},'devices':[{'name':'nic-0'}]}}",
        1);
    const ks_resource_slice *s = ks__dra_slice(o);
    cr_assert(s->node.has_node_selector);
    cr_assert_not(s->node.has_node_name);
    cr_assert_eq(s->node.nterms, 1);
    cr_assert_eq(s->node.terms[0].nexprs, 1);
    cr_assert_eq(s->node.terms[0].exprs[0].nvalues, 2);
    cr_assert_str_eq(ks__sym_str(s->node.terms[0].exprs[0].values[1]), "r2");
    ks__draobj_unref(o);

    o = parse("{'kind':'ResourceSlice','metadata':{'name':'pd'},'spec':{'driver':'d.example.com',"
              "'pool':{'name':'p','generation':1,'resourceSliceCount':1},"
              "'perDeviceNodeSelection':true,'devices':[{'name':'a','nodeName':'n1'},"
              "{'name':'b','allNodes':true}]}}",
              1);
    s = ks__dra_slice(o);
    cr_assert(s->per_device_node_selection);
    cr_assert_str_eq(ks__sym_str(s->devices[0].node.node_name), "n1");
    cr_assert(s->devices[1].node.all_nodes);
    ks__draobj_unref(o);

    o = parse("{'kind':'ResourceSlice','metadata':{'name':'counters'},'spec':{'driver':"
              "'d.example.com','pool':{'name':'p','generation':1,'resourceSliceCount':2},"
              "'allNodes':true,'sharedCounters':[{'name':'gpu-0-counters','counters':{"
              "'memory':{'value':'80Gi'}}}]}}",
              1);
    s = ks__dra_slice(o);
    cr_assert(s->node.all_nodes);
    cr_assert_eq(s->ndevices, 0);
    cr_assert_eq(s->nshared_counters, 1);
    cr_assert_str_eq(s->shared_counters[0].name, "gpu-0-counters");
    cr_assert_eq(s->shared_counters[0].counters[0].value.value, 80LL << 30);
    ks__draobj_unref(o);
}

Test(dra_objects, device_class_fields)
{
    ks__draobj *o =
        parse("{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':{'name':"
              "'gpu.example.com'},'spec':{'selectors':[{'cel':{'expression':"
              "'device.driver == \\'gpu.example.com\\''}}],'config':[{'opaque':{'driver':"
              "'gpu.example.com','parameters':{'sharing':{'strategy':'TimeSlicing'}}}}],"
              "'extendedResourceName':'example.com/gpu'}}",
              1);
    const ks_device_class *c = ks__dra_class(o);
    cr_assert_not_null(c);
    cr_assert_str_eq(o->key, "gpu.example.com");
    cr_assert_eq(c->nselectors, 1);
    cr_assert_str_eq(c->selectors[0].cel_expression, "device.driver == \"gpu.example.com\"");
    cr_assert_eq(c->nconfig, 1);
    cr_assert_str_eq(c->config[0].driver, "gpu.example.com");
    cr_assert_str_eq(c->config[0].parameters, "{\"sharing\":{\"strategy\":\"TimeSlicing\"}}");
    cr_assert_str_eq(c->extended_resource_name, "example.com/gpu");
    ks__draobj_unref(o);
    o = parse("{'kind':'DeviceClass','metadata':{'name':'any'}}", 1);
    cr_assert_null(ks__dra_class(o)->extended_resource_name, "absent, not empty");
    cr_assert_eq(ks__dra_class(o)->nselectors, 0);
    ks__draobj_unref(o);
}

Test(dra_objects, claim_requests_defaults_and_first_available)
{
    ks__draobj *o = parse(
        "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':"
        "'pod-1-gpu-abcde','namespace':'ml','uid':'c1'},'spec':{'devices':{'requests':["
        "{'name':'gpu','exactly':{'deviceClassName':'gpu.example.com','selectors':[{'cel':{"
        "'expression':'device.capacity[\\'gpu.example.com\\'].memory.compareTo("
        "quantity(\\'80Gi\\')) >= "
        "0'}}],'tolerations':[{'key':'gpu.example.com/unhealthy','operator':'Exists',"
        "'effect':'NoSchedule'},{'key':'k','value':'v'}],"
        "'capacity':{'requests':{'cores':'8','gpu.example.com/memory':'40Gi'}}}},"
        "{'name':'nic','firstAvailable':[{'name':'fast','deviceClassName':'nic.example.com',"
        "'allocationMode':'ExactCount','count':2},{'name':'any','deviceClassName':"
        "'nic.example.com','allocationMode':'All'}]},"
        "{'name':'admin','exactly':{'deviceClassName':'gpu.example.com','adminAccess':true}}],"
        "'constraints':[{'requests':['gpu','nic/fast'],'matchAttribute':"
        "'gpu.example.com/numa'}],'config':[{'requests':['gpu'],'opaque':{'driver':"
        "'gpu.example.com','parameters':{'a':1}}}]}}}",
        1);
    const ks_resource_claim *c = ks__dra_claim(o);
    cr_assert_not_null(c);
    cr_assert_str_eq(o->key, "ml/pod-1-gpu-abcde");
    cr_assert_str_eq(ks__sym_str(o->ns), "ml");
    cr_assert_eq(c->nrequests, 3);
    const ks_dra_request *r = ks__dra_claim_request(c, "gpu");
    cr_assert_not_null(r);
    cr_assert(r->has_exactly);
    cr_assert_str_eq(r->exactly.name, "gpu");
    cr_assert_str_eq(r->exactly.device_class_name, "gpu.example.com");
    cr_assert_eq(r->exactly.allocation_mode, KS_DRA_ALLOC_EXACT_COUNT, "the API's default");
    cr_assert_eq(r->exactly.count, 1, "the API's default for ExactCount");
    cr_assert_eq(r->exactly.nselectors, 1);
    cr_assert_eq(r->exactly.ntolerations, 2);
    cr_assert_eq(r->exactly.tolerations[0].op, KS_DRA_TOL_EXISTS);
    cr_assert_eq(r->exactly.tolerations[0].effect, KS_DRA_EFFECT_NO_SCHEDULE);
    cr_assert_eq(r->exactly.tolerations[1].op, KS_DRA_TOL_EQUAL, "the default operator");
    cr_assert_eq(r->exactly.tolerations[1].effect, KS_DRA_EFFECT_NONE_SET);
    cr_assert_eq(r->exactly.ncapacity_requests, 2);
    cr_assert_str_eq(r->exactly.capacity_request_names[1].name, "gpu.example.com/memory");
    cr_assert_eq(r->exactly.capacity_requests[1].value, 40LL << 30);
    cr_assert_eq(r->exactly.capacity_requests[0].value, 8);
    r = ks__dra_claim_request(c, "nic");
    cr_assert_not(r->has_exactly);
    cr_assert_eq(r->nfirst_available, 2);
    cr_assert_str_eq(r->first_available[0].name, "fast");
    cr_assert_eq(r->first_available[0].count, 2);
    cr_assert_eq(r->first_available[1].allocation_mode, KS_DRA_ALLOC_ALL);
    cr_assert_eq(r->first_available[1].count, 0, "All has no count");
    cr_assert(ks__dra_claim_request(c, "admin")->exactly.admin_access);
    cr_assert_null(ks__dra_claim_request(c, "fast"), "subrequests are not requests");
    cr_assert_eq(c->nconstraints, 1);
    cr_assert_str_eq(c->constraints[0].match_attribute, "gpu.example.com/numa");
    cr_assert_null(c->constraints[0].distinct_attribute);
    cr_assert_str_eq(c->constraints[0].requests[1], "nic/fast");
    cr_assert_eq(c->nconfig, 1);
    cr_assert_str_eq(c->config[0].requests[0], "gpu");
    cr_assert_str_eq(c->config[0].parameters, "{\"a\":1}");
    cr_assert_not(c->allocated);
    cr_assert_eq(c->nreserved_for, 0);
    ks__draobj_unref(o);

    /* Leniently read too, with the same defaults (a hand-made informer object has none). */
    o = parse("{'kind':'ResourceClaim','metadata':{'name':'x'},'spec':{'devices':{'requests':["
              "{'name':'r','exactly':{'deviceClassName':'c'}}]}}}",
              0);
    cr_assert_str_eq(o->key, "default/x", "a claim without a namespace is in default");
    cr_assert_eq(ks__dra_claim(o)->requests[0].exactly.count, 1);
    ks__draobj_unref(o);
}

#define ALLOCATED_CLAIM                                                                            \
    "{'kind':'ResourceClaim','metadata':{'name':'c','namespace':'ml','resourceVersion':'7',"       \
    "'finalizers':['resource.kubernetes.io/delete-protection'],"                                   \
    "'deletionTimestamp':'2026-12-02T00:00:00Z'},"                                                 \
    "'spec':{'devices':{'requests':[{'name':'gpu','exactly':{'deviceClassName':'g'}}]}},"          \
    "'status':{'allocation':{'devices':{'results':[{'request':'gpu','driver':"                     \
    "'gpu.example.com','pool':'worker-1','device':'gpu-0','shareID':"                              \
    "'4b2a0c1e-0000-4000-8000-000000000001','consumedCapacity':{'cores':'8'},"                     \
    "'bindingConditions':['attached'],'bindingFailureConditions':['attach-failed']}]},"            \
    "'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':"      \
    "'In','values':['worker-1']}]}]},'allocationTimestamp':'2026-12-01T10:00:00Z'},"               \
    "'reservedFor':[{'resource':'pods','name':'pod-1','uid':'p1'}]}}"

Test(dra_objects, claim_allocation_and_reservations)
{
    ks__draobj *o = parse(ALLOCATED_CLAIM, 1);
    const ks_resource_claim *c = ks__dra_claim(o);
    cr_assert(c->allocated);
    cr_assert(c->deletion_requested);
    cr_assert_eq(c->nfinalizers, 1);
    cr_assert_eq(c->nresults, 1);
    const ks_dra_result *r = &c->results[0];
    cr_assert_str_eq(r->request, "gpu");
    cr_assert_str_eq(r->driver, "gpu.example.com");
    cr_assert_str_eq(r->pool, "worker-1");
    cr_assert_str_eq(r->device, "gpu-0");
    cr_assert_str_eq(r->share_id, "4b2a0c1e-0000-4000-8000-000000000001");
    cr_assert_eq(r->nconsumed_capacity, 1);
    cr_assert_eq(r->consumed_capacity[0].value, 8);
    cr_assert_eq(r->nbinding_conditions, 1);
    cr_assert_eq(c->nalloc_terms, 1);
    cr_assert_eq(c->alloc_terms[0].nfields, 1);
    cr_assert_str_eq(ks__sym_str(c->alloc_terms[0].fields[0].values[0]), "worker-1");
    cr_assert_str_eq(c->allocation_timestamp, "2026-12-01T10:00:00Z");
    cr_assert_eq(c->nreserved_for, 1);
    cr_assert_str_eq(c->reserved_for[0].resource, "pods");
    cr_assert(ks__dra_claim_reserved_for(c, "p1"));
    cr_assert_not(ks__dra_claim_reserved_for(c, "p2"));
    ks__draobj_unref(o);
}

Test(dra_objects, device_taint_rule)
{
    ks__draobj *o = parse(
        "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceTaintRule','metadata':{'name':"
        "'maintenance'},'spec':{'deviceSelector':{'driver':'gpu.example.com','pool':'worker-1'},"
        "'taint':{'key':'example.com/maintenance','value':'planned','effect':'NoExecute'}}}",
        1);
    const ks_device_taint_rule *t = ks__dra_taint_rule(o);
    cr_assert_not_null(t);
    cr_assert_str_eq(t->driver, "gpu.example.com");
    cr_assert_str_eq(t->pool, "worker-1");
    cr_assert_null(t->device, "absent: any device");
    cr_assert_str_eq(t->taint.key, "example.com/maintenance");
    cr_assert_eq(t->taint.effect, KS_DRA_EFFECT_NO_EXECUTE);
    ks__draobj_unref(o);
}

#define SLICE_HEAD "{'kind':'ResourceSlice','metadata':{'name':'s'},'spec':{"
#define POOL "'pool':{'name':'p','generation':1,'resourceSliceCount':1}"

Test(dra_objects, slice_refusals)
{
    refused(SLICE_HEAD POOL ",'nodeName':'n'}}", "spec.driver: Required value");
    refused(SLICE_HEAD "'driver':'d','pool':{'generation':1,'resourceSliceCount':1},'nodeName':"
                       "'n'}}",
            "spec.pool.name: Required value");
    refused(SLICE_HEAD "'driver':'d','pool':{'name':'p','generation':1},'nodeName':'n'}}",
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero");
    refused(SLICE_HEAD "'driver':'d','pool':{'name':'p','generation':-1,'resourceSliceCount':1},"
                       "'nodeName':'n'}}",
            "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero");
    refused(SLICE_HEAD "'driver':'d'," POOL "}}",
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
            "`perDeviceNodeSelection` is required");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','allNodes':true}}",
            "spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, "
            "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple "
            "fields are set");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':''}}",
            "spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty "
            "string");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'allNodes':false}}",
            "spec.allNodes: Invalid value: false: must be either unset or set to true");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a'},{'name':"
                       "'a'}]}}",
            "spec.devices[1].name: Duplicate value: \"a\"");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':''}]}}",
            "spec.devices[0].name: Required value");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                       "'attributes':{'x':{}}}]}}",
            "spec.devices[0].attributes[x]: Invalid value: \"\": exactly one value must be "
            "specified");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                       "'attributes':{'x':{'strings':[]}}}]}}",
            "spec.devices[0].attributes[x].strings: Invalid value: []: must not be empty if "
            "specified");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                       "'nodeName':'n'}]}}",
            "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` "
            "can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice "
            "spec");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'perDeviceNodeSelection':true,'devices':[{'name':"
                       "'a'}]}}",
            "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or "
            "`allNodes` is required when `perDeviceNodeSelection` is set to true in the "
            "ResourceSlice spec");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a','taints':"
                       "[{'key':'k','effect':'NoRun'}]}]}}",
            "spec.devices[0].taints[0].effect: Unsupported value: \"NoRun\": supported values: "
            "\"NoExecute\", \"NoSchedule\", \"None\"");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                       "'bindingConditions':['x']}]}}",
            "spec.devices[0].bindingFailureConditions: Invalid value: null: "
            "bindingFailureConditions are required to use bindingConditions");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                       "'capacity':{'m':{'value':'1Gi','requestPolicy':{'default':'1Gi'}}}}]}}",
            "spec.devices[0].capacity[m].requestPolicy: Forbidden: allowMultipleAllocations "
            "must be true");
    refused(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a'}],"
                       "'sharedCounters':[{'name':'c','counters':{'m':{'value':'1'}}}]}}",
            "spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed");
    /* The API server stored these, or a hand-made fixture has them: lenient mode reads them. */
    lenient_ok(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','allNodes':true}}");
    lenient_ok(SLICE_HEAD "'driver':'d','pool':{'name':'p'},'nodeName':'n'}}");
    /* An attribute of a value type a newer API server has: kept, of unknown type. */
    ks__draobj *o = parse(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':"
                                     "'a','attributes':{'x':{'float':1.5}}}]}}",
                          0);
    cr_assert_eq(ks__dra_device_attribute(&ks__dra_slice(o)->devices[0], "x")->type,
                 KS_DRA_ATTR_UNKNOWN);
    ks__draobj_unref(o);
}

#define CLAIM(requests)                                                                            \
    "{'kind':'ResourceClaim','metadata':{'name':'c','namespace':'n'},'spec':{'devices':{"          \
    "'requests':" requests "}}}"

Test(dra_objects, claim_refusals)
{
    refused(CLAIM("[{'name':'r'}]"),
            "spec.devices.requests[0]: Required value: exactly one of `exactly` or "
            "`firstAvailable` is required");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c'},'firstAvailable':[{'name':"
                  "'s','deviceClassName':'c'}]}]"),
            "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or "
            "`firstAvailable` is required, but multiple fields are set");
    refused(CLAIM("[{'name':'r','exactly':{}}]"),
            "spec.devices.requests[0].exactly.deviceClassName: Required value");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c'}},{'name':'r','exactly':{"
                  "'deviceClassName':'c'}}]"),
            "spec.devices.requests[1].name: Duplicate value: \"r\"");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c','allocationMode':'Some'}}]"),
            "spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Some\": "
            "supported values: \"All\", \"ExactCount\"");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c','allocationMode':'All',"
                  "'count':2}}]"),
            "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified "
            "when allocationMode is 'All'");
    refused(CLAIM("[{'name':'r','firstAvailable':[{'name':'s','deviceClassName':'c','count':"
                  "-1}]}]"),
            "spec.devices.requests[0].firstAvailable[0].count: Invalid value: -1: must be "
            "greater than zero");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c','selectors':[{}]}}]"),
            "spec.devices.requests[0].exactly.selectors[0].cel: Required value");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c','tolerations':[{'key':'k',"
                  "'operator':'Exists','value':'v'}]}}]"),
            "spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"v\": must "
            "be empty for operator `Exists`");
    refused(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c','tolerations':[{'operator':"
                  "'Gt'}]}}]"),
            "spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: "
            "\"Gt\": supported values: \"Equal\", \"Exists\"");
    refused("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':["
            "{'name':'r','exactly':{'deviceClassName':'c'}}],'constraints':[{'requests':['x'],"
            "'matchAttribute':'a/b'}]}}}",
            "spec.devices.constraints[0].requests[0]: Invalid value: \"x\": must be the name of "
            "a request in the claim or the name of a request and a subrequest separated by '/'");
    refused("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':["
            "{'name':'r','exactly':{'deviceClassName':'c'}}],'constraints':[{}]}}}",
            "spec.devices.constraints[0].matchAttribute: Required value");
    refused("{'kind':'ResourceClaim','metadata':{'name':'c'},'spec':{'devices':{'requests':["
            "{'name':'r','exactly':{'deviceClassName':'c'}}]}},'status':{'reservedFor':[{"
            "'resource':'pods','name':'p','uid':'u'}]}}",
            "status.reservedFor: Forbidden: may not be specified when `allocated` is not set");
    refused("{'kind':'DeviceTaintRule','metadata':{'name':'t'},'spec':{'taint':{'key':'k'}}}",
            "spec.taint.effect: Required value");
    refused("{'kind':'DeviceClass','metadata':{'name':'c'},'spec':{'config':[{}]}}",
            "spec.config[0].opaque: Required value");
    lenient_ok(CLAIM("[{'name':'r','exactly':{'deviceClassName':'c','allocationMode':'Some'}}]"));
}

/* Decode errors (a wrong type, a malformed quantity) are refused in both modes. */
Test(dra_objects, decode_errors_in_both_modes)
{
    for (int checked = 0; checked < 2; checked++) {
        refused_mode(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                                "'capacity':{'m':{'value':'lots'}}}]}}",
                     checked,
                     "spec.devices[0].capacity[m].value: invalid quantity \"lots\" (expected "
                     "e.g. \"80Gi\", \"1\", \"500m\")");
        refused_mode(SLICE_HEAD "'driver':'d'," POOL ",'nodeName':'n','devices':[{'name':'a',"
                                "'attributes':{'i':{'int':1.5}}}]}}",
                     checked, "spec.devices[0].attributes[i].int: expected an integer");
        refused_mode(SLICE_HEAD "'driver':7}}", checked, "spec.driver: expected a string");
        refused_mode(CLAIM("{'name':'r'}"), checked, "spec.devices.requests: expected a list");
        refused_mode("{'kind':'DeviceClass','metadata':{}}", checked,
                     "metadata.name: required for a DeviceClass");
    }
    char err[128];
    ks__draobj *o = NULL;
    cJSON *obj = th_json("{'kind':'Pod','metadata':{'name':'p'}}");
    cr_assert_eq(ks__draobj_from_json(obj, &o, err, sizeof(err)), KS_EINVAL);
    cJSON_Delete(obj);
}

/* ---- the store ----------------------------------------------------------------------------- */

static void apply(ks_store *st, const char *text, int deleted, ks_dra_change *chg)
{
    char err[512] = "";
    cJSON *obj = th_json(text);
    int rc = ks__store_apply_dra(st, obj, deleted, 1, chg, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "%s", err);
}

/* The names of the slices a lookup returns, space-separated, releasing them. */
static const char *names(ks__draobj **objs, size_t n)
{
    static char buf[256];
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        strcat(buf, i ? " " : "");
        strcat(buf, objs[i]->key);
        ks__draobj_unref(objs[i]);
    }
    free(objs);
    return buf;
}

static const char *on(ks_store *st, const char *node)
{
    ks__draobj **objs;
    size_t n = ks__store_dra_slices_on(st, *node ? ks__intern(node) : KS_SYM_EMPTY, &objs);
    return names(objs, n);
}

static const char *in_pool(ks_store *st, const char *driver, const char *pool)
{
    ks__draobj **objs;
    size_t n = ks__store_dra_slices_in_pool(st, driver, pool, &objs);
    return names(objs, n);
}

#define SLICE(name, driver, pool, where)                                                           \
    "{'kind':'ResourceSlice','metadata':{'name':'" name "'},'spec':{'driver':'" driver             \
    "','pool':{'name':'" pool "','generation':1,'resourceSliceCount':2}," where "}}"

Test(dra_objects, store_slices_by_node_and_pool)
{
    ks_store *st = ks__store_new();
    ks_dra_change chg;
    cr_assert(ks__store_wants("ResourceSlice"));
    cr_assert(ks__store_wants("DeviceTaintRule"));
    apply(st, SLICE("b", "gpu.example.com", "n1", "'nodeName':'n1'"), 0, &chg);
    cr_assert_null(chg.old_obj);
    cr_assert_not_null(chg.new_obj);
    ks__draobj_unref(chg.new_obj);
    apply(st, SLICE("a", "gpu.example.com", "n1", "'nodeName':'n1'"), 0, NULL);
    apply(st, SLICE("c", "nic.example.com", "n1", "'nodeName':'n1'"), 0, NULL);
    apply(st, SLICE("d", "nic.example.com", "fabric", "'allNodes':true"), 0, NULL);
    cr_assert_str_eq(on(st, "n1"), "a b c");
    cr_assert_str_eq(on(st, ""), "d", "slices without a nodeName: for every node");
    cr_assert_str_eq(on(st, "n2"), "");
    cr_assert_str_eq(in_pool(st, "gpu.example.com", "n1"), "a b");
    cr_assert_str_eq(in_pool(st, "nic.example.com", "n1"), "c", "a pool is per driver");

    /* A slice that moves to another node leaves the old node's list. */
    ks__draobj *held = ks__store_draobj(st, KS_DK_RESOURCE_SLICE, "b");
    apply(st, SLICE("b", "gpu.example.com", "n2", "'nodeName':'n2'"), 0, &chg);
    cr_assert_eq(chg.old_obj, held, "the change carries the replaced slice");
    cr_assert_str_eq(ks__dra_slice(chg.new_obj)->pool_name, "n2");
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    cr_assert_str_eq(ks__dra_slice(held)->pool_name, "n1", "a reader keeps the old slice");
    ks__draobj_unref(held);
    cr_assert_str_eq(on(st, "n1"), "a c");
    cr_assert_str_eq(on(st, "n2"), "b");
    cr_assert_str_eq(in_pool(st, "gpu.example.com", "n1"), "a");
    cr_assert_str_eq(in_pool(st, "gpu.example.com", "n2"), "b");

    apply(st, SLICE("a", "gpu.example.com", "n1", "'nodeName':'n1'"), 1, &chg);
    cr_assert_not_null(chg.old_obj, "a delete hands back what it removed");
    cr_assert_null(chg.new_obj);
    ks__draobj_unref(chg.old_obj);
    cr_assert_str_eq(on(st, "n1"), "c");
    cr_assert_str_eq(in_pool(st, "gpu.example.com", "n1"), "");
    cr_assert_eq(ks__store_draobj_count(st, KS_DK_RESOURCE_SLICE), 3);
    ks__draobj **all;
    cr_assert_str_eq(names(all, ks__store_draobjs(st, KS_DK_RESOURCE_SLICE, NULL, NULL, &all)),
                     "b c d");
    ks__store_free(st);
}

Test(dra_objects, store_claims_by_namespace_and_plain_apply)
{
    ks_store *st = ks__store_new();
    ks_dra_change chg;
    char err[256];
    apply(st, ALLOCATED_CLAIM, 0, NULL);
    apply(st, CLAIM("[{'name':'r','exactly':{'deviceClassName':'c'}}]"), 0, NULL);
    ks__draobj *o =
        ks__store_draobj_sym(st, KS_DK_RESOURCE_CLAIM, ks__intern("ml"), ks__intern("c"));
    cr_assert_not_null(o);
    cr_assert(ks__dra_claim(o)->allocated);
    ks__draobj_unref(o);
    o = ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, "n/c");
    cr_assert_not_null(o, "same name, another namespace");
    cr_assert_not(ks__dra_claim(o)->allocated);
    ks__draobj_unref(o);
    cr_assert_null(
        ks__store_draobj_sym(st, KS_DK_RESOURCE_CLAIM, ks__intern("x"), ks__intern("c")));

    /* The informers' and simulate's entry point files DRA kinds too (no change record). */
    ks_store_change sc;
    cJSON *obj = th_json("{'kind':'DeviceClass','metadata':{'name':'gpu'}}");
    cr_assert_eq(ks__store_apply_ex(st, obj, 0, 1, &sc, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(sc.old_obj);
    cr_assert_null(sc.new_obj);
    cJSON_Delete(obj);
    cr_assert_eq(ks__store_draobj_count(st, KS_DK_DEVICE_CLASS), 1);
    /* A checked refusal leaves the store as it was. */
    obj = th_json("{'kind':'DeviceClass','metadata':{'name':'gpu'},'spec':{'selectors':[{}]}}");
    cr_assert_eq(ks__store_apply_ex(st, obj, 0, 1, &sc, err, sizeof(err)), KS_EPARSE);
    cr_assert_str_eq(err, "spec.selectors[0].cel: Required value");
    cJSON_Delete(obj);
    o = ks__store_draobj(st, KS_DK_DEVICE_CLASS, "gpu");
    cr_assert_eq(ks__dra_class(o)->nselectors, 0);
    ks__draobj_unref(o);
    apply(st, "{'kind':'DeviceClass','metadata':{'name':'gpu'}}", 1, &chg);
    ks__draobj_unref(chg.old_obj);
    cr_assert_eq(ks__store_draobj_count(st, KS_DK_DEVICE_CLASS), 0);
    ks__store_free(st);
}
