/*
 * NodeResourcesFit with extended resources backed by DRA (DRAExtendedResource, GA in v1.37):
 * upstream fit_test.go's DRA cases of TestEnoughRequests (a resource a DeviceClass maps and the
 * node does not offer is left to DynamicResources: shouldDelegateResourceToDRA), of
 * TestHaveAnyRequestedResourcesIncreased, and of TestFitScore (LeastAllocated over a DRA-backed
 * resource: the node's matching devices and how many are allocated); SignPod's refusal.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "sched/framework.h"

extern const ks_plugin_desc ks_plugin_node_resources_fit;

TestSuite(node_resources_fit_dra, .init = th_init, .fini = th_fini);

#define DRA_RES "extended.resource.dra.io/something" /* fit_test.go's extendedResourceName */
#define CLASS "device-class-name"

static int seq;

static ks_pod *pod_requesting(const char *reqs)
{
    char json[1024];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},'spec':{'containers':"
             "[{'name':'c','image':'i','resources':{'requests':{%s}}}]}}",
             seq, seq, reqs);
    return th_pod(json);
}

static const char *node_json(const char *name, const char *alloc, char *buf, size_t len)
{
    snprintf(buf, len, "{'metadata':{'name':'%s'},'status':{'allocatable':{'pods':'32'%s%s}}}",
             name, *alloc ? "," : "", alloc);
    return buf;
}

/* A cluster with the class mapping DRA_RES (deviceClassWithExtendResourceName). */
static th_cluster *cluster(void)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass',"
                             "'metadata':{'name':'" CLASS
                             "'},'spec':{'extendedResourceName':'" DRA_RES "'}}");
    th_cluster_services(c);
    return c;
}

static th_plugin *plugin(void) { return th_plugin_new(&ks_plugin_node_resources_fit, NULL); }

Test(node_resources_fit_dra, backed_by_dra_is_left_to_dynamic_resources)
{
    th_cluster *c = cluster();
    char buf[512], r[256];
    th_cluster_add_node(c, node_json("n", "'cpu':'1','memory':'1Gi'", buf, sizeof(buf)));
    cr_assert_eq(
        th_filter(plugin(), c, pod_requesting("'cpu':'1m','" DRA_RES "':'1'"), "n", r, sizeof(r)),
        KS_SUCCESS, "%s", r);
}

Test(node_resources_fit_dra, not_backed_by_dra_is_insufficient)
{
    th_cluster *c = cluster();
    char buf[512], r[256];
    th_cluster_add_node(c, node_json("n", "'cpu':'1','memory':'1Gi'", buf, sizeof(buf)));
    cr_assert_eq(th_filter(plugin(), c, pod_requesting("'cpu':'1m','example.com/bbb':'1'"), "n", r,
                           sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "Insufficient example.com/bbb");
}

/* "extended resource was backed by Device Plugin (Allocatable: 0)": allocatable 0 is no offer. */
Test(node_resources_fit_dra, zero_allocatable_is_left_to_dra)
{
    th_cluster *c = cluster();
    char buf[512], r[256];
    th_cluster_add_node(c, node_json("n", "'" DRA_RES "':'0'", buf, sizeof(buf)));
    cr_assert_eq(th_filter(plugin(), c, pod_requesting("'" DRA_RES "':'1'"), "n", r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
}

/* A node whose device plugin offers the resource is checked as any other. */
Test(node_resources_fit_dra, device_plugin_offer_is_checked)
{
    th_cluster *c = cluster();
    char buf[512], r[256];
    th_cluster_add_node(c, node_json("n", "'" DRA_RES "':'1'", buf, sizeof(buf)));
    cr_assert_eq(th_filter(plugin(), c, pod_requesting("'" DRA_RES "':'2'"), "n", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "Insufficient " DRA_RES);
}

Test(node_resources_fit_dra, pods_with_dra_backed_resources_are_not_signable)
{
    th_cluster *c = cluster();
    (void)c;
    th_plugin *p = plugin();
    ks_status st;
    ks__status_reset(&st);
    cr_assert_eq(ks_plugin_node_resources_fit.sign(th_plugin_self(p),
                                                   pod_requesting("'" DRA_RES "':'1'"), NULL, &st),
                 KS_UNSCHEDULABLE);
    char msg[256];
    ks__status_message(&st, msg, sizeof(msg));
    cr_assert_str_eq(msg, "signature disabled when dra extended resources are used in the cluster");
}

/* The node hint (isSchedulableAfterNodeChange, haveAnyRequestedResourcesIncreased's DRA cases). */
static ks_queueing_hint node_hint(const ks_pod *pod, const char *old_alloc, const char *new_alloc)
{
    ks_cluster_event_hint ev[16];
    size_t n = ks_plugin_node_resources_fit.events_with_hints(NULL, ev, 16);
    char b1[512], b2[512];
    ks_node *o = th_node(node_json("n", old_alloc, b1, sizeof(b1)));
    ks_node *m = th_node(node_json("n", new_alloc, b2, sizeof(b2)));
    for (size_t i = 0; i < n; i++)
        if (ev[i].event.resource == KS_RES_NODE) {
            ks_event_info info;
            memset(&info, 0, sizeof(info));
            info.event = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_ALLOCATABLE};
            info.old_node = o;
            info.new_node = m;
            return ev[i].hint(NULL, pod, &info);
        }
    cr_assert_fail("no Node event");
    return KS_QUEUE;
}

Test(node_resources_fit_dra, node_change_hints)
{
    th_cluster *c = cluster();
    (void)c;
    ks_pod *p = pod_requesting("'" DRA_RES "':'2'");
    /* requested-resources-dra-in-node: the device plugin's offer shrank (and no longer fits) */
    cr_assert_eq(node_hint(p, "'" DRA_RES "':'4'", "'" DRA_RES "':'1'"), KS_QUEUE_SKIP);
    /* requested-resources-dra-not-in-node: the modified node leaves it to DRA */
    cr_assert_eq(node_hint(p, "'cpu':'1'", "'cpu':'1'"), KS_QUEUE);
    /* requested-resources-dra-zero-capacity */
    ks_pod *q = pod_requesting("'" DRA_RES "':'1'");
    cr_assert_eq(node_hint(q, "'" DRA_RES "':'0'", "'" DRA_RES "':'0'"), KS_QUEUE);
    /* without a class, an unchanged node is no news */
    ks_pod *r = pod_requesting("'example.com/bbb':'1'");
    cr_assert_eq(node_hint(r, "'example.com/bbb':'1'", "'example.com/bbb':'1'"), KS_QUEUE_SKIP);
}

/* TestFitScore "LeastAllocated with Extended resources": the resource is scored over the node's
 * devices of its class (3 and 2, one requested): (3-1)*100/3 and (2-1)*100/2. */
Test(node_resources_fit_dra, least_allocated_over_dra_devices)
{
    th_cluster *c = cluster();
    char buf[512];
    th_cluster_add_node(c, node_json("node1", "", buf, sizeof(buf)));
    th_cluster_add_node(c, node_json("node2", "", buf, sizeof(buf)));
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':"
                             "{'name':'node1-slice'},'spec':{'driver':'test-driver','nodeName':"
                             "'node1','pool':{'name':'node1','generation':1,'resourceSliceCount':"
                             "1},'devices':[{'name':'device-1'},{'name':'device-2'},{'name':"
                             "'device-3'}]}}");
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':"
                             "{'name':'node2-slice'},'spec':{'driver':'test-driver','nodeName':"
                             "'node2','pool':{'name':'node2','generation':1,'resourceSliceCount':"
                             "1},'devices':[{'name':'device-1'},{'name':'device-2'}]}}");
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_fit,
                                 "{'scoringStrategy':{'type':'LeastAllocated','resources':[{'name':"
                                 "'" DRA_RES "','weight':1}]}}");
    int64_t raw[2];
    cr_assert_eq(th_score(p, c, pod_requesting("'" DRA_RES "':'1'"), raw, NULL), KS_SUCCESS);
    cr_assert_eq(raw[0], 66);
    cr_assert_eq(raw[1], 50);
    /* an allocated device counts as used: node2 (1 of 2 taken) scores 0 */
    th_cluster_add_object(
        c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':'held',"
           "'namespace':'default','uid':'held'},'spec':{'devices':{'requests':[{'name':'r',"
           "'exactly':{'deviceClassName':'" CLASS "'}}]}},'status':{'allocation':{'devices':{"
           "'results':[{'request':'r','driver':'test-driver','pool':'node2','device':"
           "'device-1'}]}}}}");
    cr_assert_eq(th_score(p, c, pod_requesting("'" DRA_RES "':'1'"), raw, NULL), KS_SUCCESS);
    cr_assert_eq(raw[0], 66);
    cr_assert_eq(raw[1], 0);
}

/* The class's CEL selectors decide which of the node's devices count (deviceMatchesClass). */
Test(node_resources_fit_dra, class_selectors_pick_the_devices_counted)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','metadata':"
                             "{'name':'" CLASS "'},'spec':{'extendedResourceName':'" DRA_RES
                             "','selectors':[{'cel':{'expression':'device.attributes[\\\"test-"
                             "driver\\\"].size == \\\"big\\\"'}}]}}");
    th_cluster_services(c);
    char buf[512];
    th_cluster_add_node(c, node_json("node1", "", buf, sizeof(buf)));
    th_cluster_add_node(c, node_json("node2", "", buf, sizeof(buf)));
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':"
                             "{'name':'node1-slice'},'spec':{'driver':'test-driver','nodeName':"
                             "'node1','pool':{'name':'node1','generation':1,'resourceSliceCount':"
                             "1},'devices':[{'name':'d1','attributes':{'size':{'string':'big'}}},"
                             "{'name':'d2','attributes':{'size':{'string':'big'}}},{'name':'d3',"
                             "'attributes':{'size':{'string':'small'}}}]}}");
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':"
                             "{'name':'node2-slice'},'spec':{'driver':'test-driver','nodeName':"
                             "'node2','pool':{'name':'node2','generation':1,'resourceSliceCount':"
                             "1},'devices':[{'name':'d1','attributes':{'size':{'string':'big'}}},"
                             "{'name':'d2','attributes':{'size':{'string':'small'}}}]}}");
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_fit,
                                 "{'scoringStrategy':{'type':'MostAllocated','resources':[{'name':"
                                 "'" DRA_RES "','weight':1}]}}");
    int64_t raw[2];
    cr_assert_eq(th_score(p, c, pod_requesting("'" DRA_RES "':'1'"), raw, NULL), KS_SUCCESS);
    cr_assert_eq(raw[0], 50, "node1: 1 of its 2 big devices"); /* MostAllocated: 1*100/2 */
    cr_assert_eq(raw[1], 100, "node2: 1 of its 1 big device");
    /* once more: each selector's result now comes from the slices' memo, and counts the same */
    cr_assert_eq(th_score(p, c, pod_requesting("'" DRA_RES "':'1'"), raw, NULL), KS_SUCCESS);
    cr_assert_eq(raw[0], 50);
    cr_assert_eq(raw[1], 100);
}

extern const ks_plugin_desc ks_plugin_node_resources_balanced_allocation;

/* balanced_allocation_test.go "include DRA resource on a node for balanced resource allocation":
 * node1 offers 8 devices of the class (DRA 0 -> 1/8), node2 none (left out): 76 and 75. */
Test(node_resources_fit_dra, balanced_allocation_counts_dra_devices)
{
    th_cluster *c = cluster();
    char buf[512];
    th_cluster_add_node(c, node_json("node1", "'cpu':'3500m','memory':'40000'", buf, sizeof(buf)));
    th_cluster_add_node(c, node_json("node2", "'cpu':'3500m','memory':'40000'", buf, sizeof(buf)));
    th_cluster_add_pod(c, "{'metadata':{'name':'e1','namespace':'default','uid':'e1'},'spec':{"
                          "'nodeName':'node1','containers':[{'name':'a','resources':{'requests':{"
                          "'cpu':'1000m'}}},{'name':'b','resources':{'requests':{'cpu':'2000m'}}}"
                          "]}}");
    th_cluster_add_pod(c, "{'metadata':{'name':'e2','namespace':'default','uid':'e2'},'spec':{"
                          "'nodeName':'node2','containers':[{'name':'a','resources':{'requests':{"
                          "'cpu':'1000m','memory':'2000'}}},{'name':'b','resources':{'requests':{"
                          "'cpu':'2000m','memory':'3000'}}}]}}");
    th_cluster_add_object(c, "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':"
                             "{'name':'node1-slice'},'spec':{'driver':'test-driver','nodeName':"
                             "'node1','pool':{'name':'node1','generation':1,'resourceSliceCount':"
                             "1},'devices':[{'name':'device-1'},{'name':'device-2'},{'name':"
                             "'device-3'},{'name':'device-4'},{'name':'device-5'},{'name':"
                             "'device-6'},{'name':'device-7'},{'name':'device-8'}]}}");
    th_plugin *p = th_plugin_new(&ks_plugin_node_resources_balanced_allocation,
                                 "{'resources':[{'name':'cpu','weight':1},{'name':'memory',"
                                 "'weight':1},{'name':'" DRA_RES "','weight':1}]}");
    int64_t raw[2];
    cr_assert_eq(th_score(p, c, pod_requesting("'" DRA_RES "':'1'"), raw, NULL), KS_SUCCESS);
    cr_assert_eq(raw[0], 76);
    cr_assert_eq(raw[1], 75);
    /* and such a pod is not signable here either */
    ks_status st;
    ks__status_reset(&st);
    cr_assert_eq(ks_plugin_node_resources_balanced_allocation.sign(
                     th_plugin_self(p), pod_requesting("'" DRA_RES "':'1'"), NULL, &st),
                 KS_UNSCHEDULABLE);
}
