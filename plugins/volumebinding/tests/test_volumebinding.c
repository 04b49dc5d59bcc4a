/*
 * VolumeBinding: upstream volumebinding/volume_binding_test.go TestVolumeBinding (v1.37, with
 * StorageCapacityScoring on as in v1.37) and the decision cases of binder_test.go
 * (TestFindPodVolumesWithoutProvisioning, ...WithProvisioning, ...WithCSIMigration,
 * TestCapacity, FindMatchingVolume's rules), case by case with upstream's objects, codes and
 * messages; its PreBind (binder_test.go TestBindAPIUpdate, TestCheckBindings,
 * TestCheckBindingsWithCSIMigration, TestBindPodVolumes) on the harness's store; and the
 * in-tree-to-CSI translation of a PV's node affinity (csi-translation-lib's topology rules and
 * errors) as tryTranslatePVToCSI applies it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "harness.h"
#include "sched/cache.h"
#include "sched/framework.h"
#include "sched/host_api.h"
#include "util/metrics.h"

extern const ks_plugin_desc ks_plugin_volume_binding;

TestSuite(volume_binding, .init = th_init, .fini = th_fini);

#define BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity"
#define NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define PV_NOT_EXIST "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define UNBOUND_IMMEDIATE "pod has unbound immediate PersistentVolumeClaims"
#define UU KS_UNSCHEDULABLE_AND_UNRESOLVABLE

/* ---- objects, as upstream's test_utils.go builders make them ------------------------------- */

static void sc(th_cluster *c, const char *name, const char *mode, const char *provisioner,
               const char *extra)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':'%s'},"
             "'provisioner':'%s','volumeBindingMode':'%s'%s}",
             name, provisioner ? provisioner : "", mode, extra ? extra : "");
    th_cluster_add_object(c, json);
}

/* upstream's classes: waitSC (no provisioner), immediateSC, waitSCWithStorageCapacity */
static void classes(th_cluster *c)
{
    sc(c, "wait-sc", "WaitForFirstConsumer", NULL, NULL);
    sc(c, "immediate-sc", "Immediate", NULL, NULL);
    sc(c, "wait-sc-with-storage-capacity", "WaitForFirstConsumer", "driver-with-storage-capacity",
       NULL);
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver','metadata':"
                             "{'name':'driver-with-storage-capacity'},'spec':{'storageCapacity':"
                             "true}}");
}

/* makePV(name, class).withPhase(phase).withCapacity(cap) plus spec fields in extra (JSON) */
static void pv(th_cluster *c, const char *name, const char *cls, const char *phase, const char *cap,
               const char *extra)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'%s'},'spec':{"
             "'storageClassName':'%s'%s%s%s%s},'status':{'phase':'%s'}}",
             name, cls, cap ? ",'capacity':{'storage':'" : "", cap ? cap : "", cap ? "'}" : "",
             extra ? extra : "", phase ? phase : "");
    th_cluster_add_object(c, json);
}

/* a PV whose nodeAffinity requires key In [value] */
static void pv_on(th_cluster *c, const char *name, const char *cls, const char *cap,
                  const char *key, const char *value)
{
    char extra[512];
    snprintf(extra, sizeof(extra),
             ",'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'%s',"
             "'operator':'In','values':['%s']}]}]}}",
             key, value);
    pv(c, name, cls, "Available", cap, extra);
}

/* makePVC(name, class) with metadata extra (meta) and spec extra (spec) */
static void pvc_full(th_cluster *c, const char *name, const char *cls, const char *meta,
                     const char *spec, const char *status)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'%s',"
             "'namespace':'default'%s},'spec':{'storageClassName':'%s'%s},'status':{%s}}",
             name, meta ? meta : "", cls, spec ? spec : "", status ? status : "");
    th_cluster_add_object(c, json);
}

static void pvc(th_cluster *c, const char *name, const char *cls, const char *request)
{
    char spec[256] = "";
    if (request)
        snprintf(spec, sizeof(spec), ",'resources':{'requests':{'storage':'%s'}}", request);
    pvc_full(c, name, cls, NULL, spec, NULL);
}

/* withBoundPV: volumeName and the bind-completed annotation */
static void pvc_bound(th_cluster *c, const char *name, const char *cls, const char *pv_name)
{
    char spec[256];
    snprintf(spec, sizeof(spec), ",'volumeName':'%s'", pv_name);
    pvc_full(c, name, cls, ",'annotations':{'pv.kubernetes.io/bind-completed':'true'}", spec, NULL);
}

/* makeNode(name): the hostname label, plus labels (JSON members) */
static void node(th_cluster *c, const char *name, const char *labels)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','labels':{'kubernetes.io/hostname':'%s'%s%s}},"
             "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'10'}}}",
             name, name, labels ? "," : "", labels ? labels : "");
    th_cluster_add_node(c, json);
}

/* makeCapacity(name, class, node (nodeKey label) or NULL: an empty selector, cap, max) */
static void capacity(th_cluster *c, const char *name, const char *cls, const char *node_key,
                     const char *cap, const char *max)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'CSIStorageCapacity','metadata':{'name':"
             "'%s','namespace':'default'},'storageClassName':'%s','nodeTopology':{%s%s%s}"
             "%s%s%s%s%s%s}",
             name, cls, node_key ? "'matchLabels':{'nodeKey':'" : "", node_key ? node_key : "",
             node_key ? "'}" : "", cap ? ",'capacity':'" : "", cap ? cap : "", cap ? "'" : "",
             max ? ",'maximumVolumeSize':'" : "", max ? max : "", max ? "'" : "");
    th_cluster_add_object(c, json);
}

/* makePod("pod-a") with persistentVolumeClaim volumes for the claims listed (NULL-ended) */
static ks_pod *pod_claims(const char *const *claims)
{
    char json[2048], vols[1500] = "";
    size_t off = 0;
    for (int i = 0; claims[i]; i++)
        off += (size_t)snprintf(vols + off, sizeof(vols) - off,
                                "%s{'name':'v%d','persistentVolumeClaim':{'claimName':'%s'}}",
                                i ? "," : "", i, claims[i]);
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'pod-a','namespace':'default','uid':'pod-a'},'spec':{"
             "'containers':[{'name':'c'}],'volumes':[%s]}}",
             vols);
    return th_pod(json);
}
#define POD(...) pod_claims((const char *const[]){__VA_ARGS__, NULL})

static ks_pod *pod_named(const char *name, const char *claim)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'%s'},'spec':{'containers':"
             "[{'name':'c'}],'volumes':[{'name':'v','persistentVolumeClaim':{'claimName':'%s'}}]}}",
             name, name, claim);
    return th_pod(json);
}

/* PreFilter then Filter on one node; checks both codes and messages. */
static void expect(th_plugin *p, th_cluster *c, ks_pod *pod, const char *nodename, ks_code pre,
                   const char *pre_msg, ks_code filter, const char *filter_msg, const char *what)
{
    char pm[1024], fm[1024];
    ks_code got_pre;
    th_steps o = {0};
    ks_code got =
        th_filter_steps(p, c, pod, nodename, &o, &got_pre, pm, sizeof(pm), fm, sizeof(fm));
    cr_expect_eq(got_pre, pre, "%s: PreFilter code %d, want %d (%s)", what, got_pre, pre, pm);
    cr_expect_str_eq(pm, pre_msg ? pre_msg : "", "%s: PreFilter message \"%s\"", what, pm);
    cr_expect_eq(got, filter, "%s on %s: Filter code %d, want %d (%s)", what, nodename, got, filter,
                 fm);
    cr_expect_str_eq(fm, filter_msg ? filter_msg : "", "%s on %s: Filter message \"%s\"", what,
                     nodename, fm);
}

static void expect_scores(th_plugin *p, th_cluster *c, ks_pod *pod, const int64_t *want, size_t n,
                          const char *what)
{
    int64_t raw[16] = {0};
    cr_assert_eq(th_score_steps(p, c, pod, 1, raw, NULL), KS_SUCCESS, "%s: Score", what);
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(raw[i], want[i], "%s: node %zu scores %lld, want %lld", what, i,
                     (long long)raw[i], (long long)want[i]);
}

/* ---- TestVolumeBinding ------------------------------------------------------------------------
 */

Test(volume_binding, pod_has_no_pvcs)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    node(c, "node-a", NULL);
    ks_pod *pod = th_pod("{'metadata':{'name':'pod-a','namespace':'default'},'spec':{"
                         "'containers':[{'name':'c'}],'volumes':[{'name':'e','emptyDir':{}}]}}");
    expect(p, c, pod, "node-a", KS_SKIP, NULL, KS_SUCCESS, NULL, "pod has not pvcs");
}

Test(volume_binding, all_bound)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    pvc_bound(c, "pvc-a", "wait-sc", "pv-a");
    pv(c, "pv-a", "wait-sc", "Bound", NULL, NULL);
    expect(p, c, POD("pvc-a"), "node-a", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "all bound");
    int64_t want[] = {0};
    expect_scores(p, c, POD("pvc-a"), want, 1, "all bound");
}

Test(volume_binding, pvc_missing_lost_or_being_deleted)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    expect(p, c, POD("pvc-a"), "node-a", UU, "persistentvolumeclaim \"pvc-a\" not found",
           KS_SUCCESS, NULL, "PVC does not exist");
    pvc_bound(c, "pvc-a", "wait-sc", "pv-a");
    pv(c, "pv-a", "wait-sc", "Bound", NULL, NULL);
    expect(p, c, POD("pvc-a", "pvc-b"), "node-a", UU, "persistentvolumeclaim \"pvc-b\" not found",
           KS_SUCCESS, NULL, "Part of PVCs do not exist");
    pvc_full(c, "pvc-lost", "wait-sc", NULL, ",'volumeName':'pv-gone'", "'phase':'Lost'");
    expect(p, c, POD("pvc-lost"), "node-a", UU,
           "persistentvolumeclaim \"pvc-lost\" bound to non-existent persistentvolume \"pv-gone\"",
           KS_SUCCESS, NULL, "pv not found claim lost");
    pvc_full(c, "pvc-del", "wait-sc",
             ",'deletionTimestamp':'2026-01-01T00:00:00Z','finalizers':['kubernetes.io/pvc-"
             "protection']",
             NULL, NULL);
    expect(p, c, POD("pvc-del"), "node-a", UU, "persistentvolumeclaim \"pvc-del\" is being deleted",
           KS_SUCCESS, NULL, "claim being deleted");
}

Test(volume_binding, ephemeral_claims)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    ks_pod *pod = th_pod("{'metadata':{'name':'web','namespace':'default','uid':'web-uid'},"
                         "'spec':{'containers':[{'name':'c'}],'volumes':[{'name':'scratch',"
                         "'ephemeral':{'volumeClaimTemplate':{'spec':{'accessModes':"
                         "['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}}}}}]}}");
    expect(p, c, pod, "node-a", UU,
           "waiting for ephemeral volume controller to create the persistentvolumeclaim "
           "\"web-scratch\"",
           KS_SUCCESS, NULL, "ephemeral claim not created yet");
    pvc_full(c, "web-scratch", "wait-sc",
             ",'ownerReferences':[{'apiVersion':'v1','kind':'Pod','name':'other','uid':'other',"
             "'controller':true}],'annotations':{'pv.kubernetes.io/bind-completed':'yes'}",
             ",'volumeName':'pv-e'", NULL);
    pv(c, "pv-e", "wait-sc", "Bound", NULL, NULL);
    expect(p, c, pod, "node-a", UU,
           "PVC default/web-scratch was not created for pod default/web (pod is not owner)",
           KS_SUCCESS, NULL, "ephemeral claim of another pod");
}

Test(volume_binding, immediate_claims_not_bound)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    pvc(c, "pvc-a", "immediate-sc", NULL);
    expect(p, c, POD("pvc-a"), "node-a", UU, UNBOUND_IMMEDIATE, KS_SUCCESS, NULL,
           "immediate claims not bound");
    /* prebound: volumeName set but the PV controller has not completed the binding */
    pvc_full(c, "pvc-pre", "wait-sc", NULL, ",'volumeName':'pv-a'", NULL);
    expect(p, c, POD("pvc-pre"), "node-a", UU, UNBOUND_IMMEDIATE, KS_SUCCESS, NULL, "prebound-pvc");
    /* a claim of a class that does not exist is not delay-binding: Immediate */
    pvc(c, "pvc-nocls", "no-such-class", NULL);
    expect(p, c, POD("pvc-nocls"), "node-a", UU, UNBOUND_IMMEDIATE, KS_SUCCESS, NULL,
           "class not found");
}

Test(volume_binding, unbound_claims_no_matches)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    pvc(c, "pvc-a", "wait-sc", NULL);
    expect(p, c, POD("pvc-a"), "node-a", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "unbound claims no matches");
}

Test(volume_binding, bound_and_unbound_unsatisfied)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", "'foo':'barbar'");
    pvc_bound(c, "pvc-a", "wait-sc", "pv-a");
    pvc(c, "pvc-b", "wait-sc", NULL);
    pv_on(c, "pv-a", "wait-sc", NULL, "foo", "bar");
    expect(p, c, POD("pvc-a", "pvc-b"), "node-a", KS_SUCCESS, NULL, UU,
           NODE_CONFLICT ", " BIND_CONFLICT, "bound and unbound unsatisfied");
}

Test(volume_binding, pv_not_found)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    pvc_bound(c, "pvc-a", "wait-sc", "pv-a");
    expect(p, c, POD("pvc-a"), "node-a", KS_SUCCESS, NULL, UU, PV_NOT_EXIST, "pv not found");
}

/* The first example as a unit: a bound PV pinned to zone b. */
Test(volume_binding, bound_pv_node_affinity)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", "'topology.kubernetes.io/zone':'a'");
    node(c, "node-b", "'topology.kubernetes.io/zone':'b'");
    pvc_bound(c, "data", "wait-sc", "pv-b");
    pv_on(c, "pv-b", "wait-sc", "10Gi", "topology.kubernetes.io/zone", "b");
    expect(p, c, POD("data"), "node-a", KS_SUCCESS, NULL, UU, NODE_CONFLICT, "zone a");
    expect(p, c, POD("data"), "node-b", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "zone b");
}

Test(volume_binding, local_volumes_with_close_capacity_are_preferred)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", NULL);
    node(c, "node-b", NULL);
    node(c, "node-c", NULL);
    pvc(c, "pvc-a", "wait-sc", "50Gi");
    pv_on(c, "pv-a-0", "wait-sc", "200Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-a-1", "wait-sc", "200Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-b-0", "wait-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    pv_on(c, "pv-b-1", "wait-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    expect(p, c, POD("pvc-a"), "node-a", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "local");
    expect(p, c, POD("pvc-a"), "node-b", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "local");
    expect(p, c, POD("pvc-a"), "node-c", KS_SUCCESS, NULL, UU, BIND_CONFLICT, "local");
    int64_t want[] = {75, 50, 0};
    expect_scores(p, c, POD("pvc-a"), want, 3, "local volumes with close capacity");
}

Test(volume_binding, local_volumes_multiple_pvcs)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    sc(c, "wait-hdd-sc", "WaitForFirstConsumer", NULL, NULL);
    node(c, "node-a", NULL);
    node(c, "node-b", NULL);
    node(c, "node-c", NULL);
    pvc(c, "pvc-0", "wait-sc", "50Gi");
    pvc(c, "pvc-1", "wait-hdd-sc", "100Gi");
    pv_on(c, "pv-a-0", "wait-sc", "200Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-a-1", "wait-sc", "200Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-a-2", "wait-hdd-sc", "200Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-a-3", "wait-hdd-sc", "200Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-b-0", "wait-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    pv_on(c, "pv-b-1", "wait-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    pv_on(c, "pv-b-2", "wait-hdd-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    pv_on(c, "pv-b-3", "wait-hdd-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    expect(p, c, POD("pvc-0", "pvc-1"), "node-c", KS_SUCCESS, NULL, UU, BIND_CONFLICT, "multi");
    /* node-a: 50/200 -> 75, 100/200 -> 50: 62.5 rounds to 63; node-b: 50, 0 -> 25 */
    int64_t want[] = {63, 25, 0};
    expect_scores(p, c, POD("pvc-0", "pvc-1"), want, 3, "multiple pvcs");
}

Test(volume_binding, zonal_volumes_with_close_capacity_are_preferred)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    static const char *const nodes[] = {"zone-a-node-a", "zone-a-node-b", "zone-b-node-a",
                                        "zone-b-node-b", "zone-c-node-a", "zone-c-node-b"};
    for (int i = 0; i < 6; i++) {
        char labels[256];
        char z = (char)('a' + i / 2);
        snprintf(labels, sizeof(labels),
                 "'topology.kubernetes.io/region':'region-%c','topology.kubernetes.io/zone':"
                 "'zone-%c'",
                 z, z);
        node(c, nodes[i], labels);
    }
    pvc(c, "pvc-a", "wait-sc", "50Gi");
    static const char *const zonal =
        ",'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':"
        "'topology.kubernetes.io/region','operator':'In','values':['region-%c']},{'key':"
        "'topology.kubernetes.io/zone','operator':'In','values':['zone-%c']}]}]}}";
    char extra[512];
    snprintf(extra, sizeof(extra), zonal, 'a', 'a');
    pv(c, "pv-a-0", "wait-sc", "Available", "200Gi", extra);
    pv(c, "pv-a-1", "wait-sc", "Available", "200Gi", extra);
    snprintf(extra, sizeof(extra), zonal, 'b', 'b');
    pv(c, "pv-b-0", "wait-sc", "Available", "100Gi", extra);
    pv(c, "pv-b-1", "wait-sc", "Available", "100Gi", extra);
    for (int i = 0; i < 6; i++)
        expect(p, c, POD("pvc-a"), nodes[i], KS_SUCCESS, NULL, i < 4 ? KS_SUCCESS : UU,
               i < 4 ? NULL : BIND_CONFLICT, "zonal");
    int64_t want[] = {75, 75, 50, 50, 0, 0};
    expect_scores(p, c, POD("pvc-a"), want, 6, "zonal volumes");
    /* custom shape: {0: 0, 50: 3, 100: 5} -> 50/200 = 25% -> 15, 50% -> 30 */
    th_plugin *q = th_plugin_new(&ks_plugin_volume_binding,
                                 "{'bindTimeoutSeconds':300,'shape':[{'utilization':0,'score':0},"
                                 "{'utilization':50,'score':3},{'utilization':100,'score':5}]}");
    int64_t want2[] = {15, 15, 30, 30, 0, 0};
    expect_scores(q, c, POD("pvc-a"), want2, 6, "custom shape");
}

static void capacity_nodes(th_cluster *c)
{
    classes(c);
    node(c, "node-a", "'nodeKey':'node-a'");
    node(c, "node-b", "'nodeKey':'node-b'");
    node(c, "node-c", "'nodeKey':'node-c'");
}

Test(volume_binding, storage_capacity_score)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    capacity_nodes(c);
    pvc(c, "pvc-dynamic", "wait-sc-with-storage-capacity", "10Gi");
    capacity(c, "node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi", NULL);
    capacity(c, "node-b", "wait-sc-with-storage-capacity", "node-b", "50Gi", NULL);
    capacity(c, "node-c", "wait-sc-with-storage-capacity", "node-c", "10Gi", NULL);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "node-%c", 'a' + i);
        expect(p, c, POD("pvc-dynamic"), n, KS_SUCCESS, NULL, KS_SUCCESS, NULL, "capacity");
    }
    int64_t want[] = {90, 80, 0};
    expect_scores(p, c, POD("pvc-dynamic"), want, 3, "storage capacity score");
    /* prefer node with least allocatable: shape {0: 0, 100: 10} (its 20Gi node-b: 50) */
    th_cluster *c2 = th_cluster_new();
    capacity_nodes(c2);
    pvc(c2, "pvc-dynamic", "wait-sc-with-storage-capacity", "10Gi");
    capacity(c2, "node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi", NULL);
    capacity(c2, "node-b", "wait-sc-with-storage-capacity", "node-b", "20Gi", NULL);
    capacity(c2, "node-c", "wait-sc-with-storage-capacity", "node-c", "10Gi", NULL);
    th_plugin *least = th_plugin_new(&ks_plugin_volume_binding,
                                     "{'bindTimeoutSeconds':300,'shape':[{'utilization':0,"
                                     "'score':0},{'utilization':100,'score':10}]}");
    int64_t want2[] = {10, 50, 100};
    expect_scores(least, c2, POD("pvc-dynamic"), want2, 3, "prefer node with least allocatable");
    int64_t want3[] = {90, 50, 0};
    expect_scores(p, c2, POD("pvc-dynamic"), want3, 3, "prefer node with maximum allocatable");
}

Test(volume_binding, storage_capacity_score_with_static_binds)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    capacity_nodes(c);
    pvc(c, "pvc-static", "wait-sc", "100Gi");
    pvc(c, "pvc-dynamic", "wait-sc-with-storage-capacity", "100Gi");
    pv_on(c, "pv-static-a", "wait-sc", "100Gi", "kubernetes.io/hostname", "node-a");
    pv_on(c, "pv-static-b", "wait-sc", "100Gi", "kubernetes.io/hostname", "node-b");
    pv_on(c, "pv-static-c", "wait-sc", "200Gi", "kubernetes.io/hostname", "node-c");
    capacity(c, "node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi", NULL);
    capacity(c, "node-b", "wait-sc-with-storage-capacity", "node-b", "50Gi", NULL);
    capacity(c, "node-c", "wait-sc-with-storage-capacity", "node-c", "100Gi", NULL);
    expect(p, c, POD("pvc-static", "pvc-dynamic"), "node-a", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "static+dynamic");
    expect(p, c, POD("pvc-static", "pvc-dynamic"), "node-b", KS_SUCCESS, NULL, UU, NOT_ENOUGH_SPACE,
           "static+dynamic");
    expect(p, c, POD("pvc-static", "pvc-dynamic"), "node-c", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "static+dynamic");
    /* static bindings only are scored: 100/100 -> 0, 100/200 -> 50 */
    int64_t want[] = {0, 0, 50};
    expect_scores(p, c, POD("pvc-static", "pvc-dynamic"), want, 3, "with static binds");
}

Test(volume_binding, dynamic_provisioning_with_multiple_pvcs_of_the_same_class)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node-a", "'nodeKey':'node-a'");
    pvc(c, "pvc-dynamic-0", "wait-sc-with-storage-capacity", "50Gi");
    pvc(c, "pvc-dynamic-1", "wait-sc-with-storage-capacity", "50Gi");
    capacity(c, "node-a", "wait-sc-with-storage-capacity", "node-a", "100Gi", NULL);
    expect(p, c, POD("pvc-dynamic-0", "pvc-dynamic-1"), "node-a", KS_SUCCESS, NULL, KS_SUCCESS,
           NULL, "two dynamic");
    int64_t want[] = {0};
    expect_scores(p, c, POD("pvc-dynamic-0", "pvc-dynamic-1"), want, 1, "two dynamic");
}

/* ---- binder_test.go: FindPodVolumes and FindMatchingVolume's rules ----------------------------
 */

/* binder_test's node1 (nodeKey: node1) and node2 (nodeKey: node2), class waitClass (no
 * provisioner) and waitClassWithProvisioner, PVs with node affinity nodeKey In [node1]. */
static void binder_env(th_cluster *c)
{
    sc(c, "waitClass", "WaitForFirstConsumer", NULL, NULL);
    sc(c, "immediateClass", "Immediate", NULL, NULL);
    sc(c, "waitClassWithProvisioner", "WaitForFirstConsumer", "test-provisioner",
       ",'allowedTopologies':[{'matchLabelExpressions':[{'key':'nodeKey','values':['node1']}]}]");
    sc(c, "immediateClassWithProvisioner", "Immediate", "test-provisioner", NULL);
    sc(c, "topologyMismatchClass", "WaitForFirstConsumer", "test-provisioner",
       ",'allowedTopologies':[{'matchLabelExpressions':[{'key':'nodeKey','values':['node2']}]}]");
    sc(c, "unsupported", "WaitForFirstConsumer", "kubernetes.io/no-provisioner", NULL);
    node(c, "node1", "'nodeKey':'node1'");
    node(c, "node2", "'nodeKey':'node2'");
}

Test(volume_binding, find_pod_volumes_without_provisioning)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    binder_env(c);
    pvc(c, "unbound-pvc", "waitClass", "1G");
    pvc(c, "unbound-pvc2", "waitClass", "5G");
    pvc_bound(c, "bound-pvc", "waitClass", "pv-bound");
    pvc_bound(c, "bound-pvc-node2", "waitClass", "pv-bound-node2");
    pvc_bound(c, "bound-pvc-nopv", "waitClass", "pv-missing");
    pvc(c, "immediate-unbound-pvc", "immediateClass", "1G");
    pvc_bound(c, "immediate-bound-pvc", "immediateClass", "pv-bound-immediate");
    pv_on(c, "pv-node1a", "waitClass", "5G", "nodeKey", "node1");
    pv_on(c, "pv-node1b", "waitClass", "10G", "nodeKey", "node1");
    pv_on(c, "pv-node2", "waitClass", "1G", "nodeKey", "node2");
    pv(c, "pv-bound", "waitClass", "Bound", "1G",
       ",'claimRef':{'namespace':'default','name':'bound-pvc'},'nodeAffinity':{'required':{"
       "'nodeSelectorTerms':[{'matchExpressions':[{'key':'nodeKey','operator':'In','values':"
       "['node1']}]}]}}");
    pv(c, "pv-bound-node2", "waitClass", "Bound", "1G",
       ",'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'nodeKey',"
       "'operator':'In','values':['node2']}]}]}}");
    pv(c, "pv-bound-immediate", "immediateClass", "Bound", "1G", NULL);

    expect(p, c, POD("unbound-pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "unbound-pvc,pv-same-node");
    expect(p, c, POD("unbound-pvc"), "node2", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "unbound-pvc: pv-node2 (1G) on node2");
    expect(p, c, POD("unbound-pvc2"), "node2", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "unbound-pvc,pv-different-node (5G: only node1's PVs fit)");
    expect(p, c, POD("unbound-pvc", "unbound-pvc2"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "two-unbound-pvcs");
    expect(p, c, POD("unbound-pvc", "unbound-pvc2"), "node2", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "two-unbound-pvcs,partial-match");
    expect(p, c, POD("bound-pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "bound-pvc");
    expect(p, c, POD("bound-pvc"), "node2", KS_SUCCESS, NULL, UU, NODE_CONFLICT,
           "bound-pvc on another node");
    expect(p, c, POD("bound-pvc-nopv"), "node1", KS_SUCCESS, NULL, UU, PV_NOT_EXIST,
           "bound-pvc,pv-not-exists");
    expect(p, c, POD("unbound-pvc", "bound-pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "one-bound,one-unbound");
    expect(p, c, POD("unbound-pvc2", "bound-pvc-node2"), "node2", KS_SUCCESS, NULL, UU,
           BIND_CONFLICT, "one-bound,one-unbound,no-match");
    expect(p, c, POD("unbound-pvc2", "bound-pvc-node2"), "node1", KS_SUCCESS, NULL, UU,
           NODE_CONFLICT, "one-bound (node2),one-unbound");
    expect(p, c, POD("immediate-bound-pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "immediate-bound-pvc");
    expect(p, c, POD("immediate-unbound-pvc", "unbound-pvc"), "node1", UU, UNBOUND_IMMEDIATE,
           KS_SUCCESS, NULL, "immediate-unbound-pvc,delayed-mode-unbound");
}

/* two-unbound-pvcs,order-by-size: the larger claim listed first still leaves the smaller PV to
 * the smaller claim (claims matched smallest first, each to the smallest PV that fits). */
Test(volume_binding, two_unbound_pvcs_order_by_size)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    binder_env(c);
    pvc(c, "pvc-1g", "waitClass", "1G");
    pvc(c, "pvc-5g", "waitClass", "5G");
    pv_on(c, "pv-5g", "waitClass", "5G", "nodeKey", "node1");
    pv_on(c, "pv-10g", "waitClass", "10G", "nodeKey", "node1");
    expect(p, c, POD("pvc-5g", "pvc-1g"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "order-by-size");
    /* scores tell which PVs were chosen: 5G on 5G (100% -> 0) and 1G on 10G (10% -> 90),
     * summed per class: 6G of 15G = 40% -> 60 */
    int64_t want[] = {60, 0};
    expect_scores(p, c, POD("pvc-5g", "pvc-1g"), want, 2, "order-by-size");
}

Test(volume_binding, find_matching_volume_rules)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    binder_env(c);
    /* each claim has exactly one candidate PV that breaks one rule */
    pvc_full(c, "c-mode", "waitClass", NULL,
             ",'accessModes':['ReadWriteMany'],'resources':{'requests':{'storage':'1G'}}", NULL);
    pv_on(c, "pv-mode", "waitClass", "1G", "nodeKey", "node2"); /* node2: also wrong node */
    pvc_full(c, "c-sel", "waitClass", NULL,
             ",'selector':{'matchLabels':{'tier':'gold'}},'resources':{'requests':{'storage':"
             "'1G'}}",
             NULL);
    pvc_full(c, "c-block", "waitClass", NULL,
             ",'volumeMode':'Block','resources':{'requests':{'storage':'1G'}}", NULL);
    pvc(c, "c-big", "waitClass", "1T");
    pv(c, "pv-rwo", "waitClass", "Available", "1G",
       ",'accessModes':['ReadWriteOnce'],'nodeAffinity':{'required':{'nodeSelectorTerms':[{"
       "'matchExpressions':[{'key':'nodeKey','operator':'In','values':['node1']}]}]}}");
    expect(p, c, POD("c-mode"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "access modes: RWX claim, RWO PV");
    expect(p, c, POD("c-sel"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "selector: the PV has no tier label");
    expect(p, c, POD("c-block"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "volume mode: Block claim, Filesystem PV");
    expect(p, c, POD("c-big"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT, "size: 1T claim");
    /* the same claims find a PV once one fits */
    pv(c, "pv-gold", "waitClass", "Available", "1G",
       ",'accessModes':['ReadWriteMany','ReadWriteOnce'],'volumeMode':'Filesystem'");
    th_cluster *c2 = th_cluster_new();
    binder_env(c2);
    pvc_full(c2, "c-sel", "waitClass", NULL,
             ",'selector':{'matchLabels':{'tier':'gold'}},'resources':{'requests':{'storage':"
             "'1G'}}",
             NULL);
    th_cluster_add_object(c2, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':"
                              "'pv-gold','labels':{'tier':'gold'}},'spec':{'storageClassName':"
                              "'waitClass','capacity':{'storage':'1G'}},'status':{'phase':"
                              "'Available'}}");
    expect(p, c2, POD("c-sel"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "selector matches");
    expect(p, c, POD("c-mode"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "access modes: RWX and RWO PV");
    /* other class, another claim's PV, not Available, being deleted: none taken */
    th_cluster *c3 = th_cluster_new();
    binder_env(c3);
    pvc(c3, "c", "waitClass", "1G");
    pv(c3, "pv-other-class", "immediateClass", "Available", "1G", NULL);
    pv(c3, "pv-claimed", "waitClass", "Available", "1G",
       ",'claimRef':{'namespace':'default','name':'someone-else'}");
    pv(c3, "pv-released", "waitClass", "Released", "1G", NULL);
    th_cluster_add_object(c3, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':"
                              "'pv-deleting','deletionTimestamp':'2026-01-01T00:00:00Z',"
                              "'finalizers':['x']},'spec':{'storageClassName':'waitClass',"
                              "'capacity':{'storage':'1G'}},'status':{'phase':'Available'}}");
    expect(p, c3, POD("c"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "class, claimRef, phase, deletion");
    /* a PV pre-bound to the claim is taken whatever its phase, if its node affinity fits */
    pv(c3, "pv-prebound", "waitClass", "Pending", "1G",
       ",'claimRef':{'namespace':'default','name':'c'},'nodeAffinity':{'required':{"
       "'nodeSelectorTerms':[{'matchExpressions':[{'key':'nodeKey','operator':'In','values':"
       "['node1']}]}]}}");
    expect(p, c3, POD("c"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "pre-bound PV");
    expect(p, c3, POD("c"), "node2", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "pre-bound PV on another node");
}

Test(volume_binding, find_pod_volumes_with_provisioning)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    binder_env(c);
    pvc(c, "provisioned-pvc", "waitClassWithProvisioner", "1G");
    pvc(c, "no-provisioner", "unsupported", "1G");
    pvc(c, "topo-mismatch", "topologyMismatchClass", "1G");
    pvc(c, "unbound-pvc", "waitClass", "1G");
    pvc_full(c, "selected-node2", "waitClassWithProvisioner",
             ",'annotations':{'volume.kubernetes.io/selected-node':'node2'}",
             ",'resources':{'requests':{'storage':'1G'}}", NULL);
    pv_on(c, "pv-node1a", "waitClass", "5G", "nodeKey", "node1");
    expect(p, c, POD("provisioned-pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "one-provisioned");
    expect(p, c, POD("provisioned-pvc"), "node2", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "allowedTopologies: node1 only");
    expect(p, c, POD("provisioned-pvc", "unbound-pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "one-binding,one-provisioned");
    expect(p, c, POD("no-provisioner"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "unsupported provisioner");
    expect(p, c, POD("topo-mismatch"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "volume-topology-unsatisfied");
    expect(p, c, POD("selected-node2"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "selected node is another node");
    /* the selected node itself is refused by allowedTopologies (node1 only) */
    expect(p, c, POD("selected-node2"), "node2", KS_SUCCESS, NULL, UU, BIND_CONFLICT,
           "selected node, topology");
    /* a claim without a class never gets here (Immediate); a class deleted since PreFilter is an
     * error as upstream's "failed to find storage class" (not reachable in one cycle here) */
}

Test(volume_binding, capacity)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    binder_env(c);
    sc(c, "capClass", "WaitForFirstConsumer", "test-provisioner", NULL);
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver','metadata':"
                             "{'name':'test-provisioner'},'spec':{'storageCapacity':true}}");
    pvc(c, "pvc", "capClass", "1Gi");
    expect(p, c, POD("pvc"), "node1", KS_SUCCESS, NULL, UU, NOT_ENOUGH_SPACE, "no capacity");
    capacity(c, "too-small", "capClass", NULL, "1Mi", NULL);
    expect(p, c, POD("pvc"), "node1", KS_SUCCESS, NULL, UU, NOT_ENOUGH_SPACE, "insufficient");
    capacity(c, "max-too-small", "capClass", NULL, "10Gi", "1Mi");
    expect(p, c, POD("pvc"), "node1", KS_SUCCESS, NULL, UU, NOT_ENOUGH_SPACE,
           "maximumVolumeSize too small (capacity is large)");
    capacity(c, "node2-only", "capClass", "node2", "1Gi", NULL);
    expect(p, c, POD("pvc"), "node1", KS_SUCCESS, NULL, UU, NOT_ENOUGH_SPACE,
           "capacity for another node");
    expect(p, c, POD("pvc"), "node2", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "node2 has capacity");
    capacity(c, "net", "capClass", NULL, "1Gi", NULL);
    expect(p, c, POD("pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "network-attached (empty selector)");
    /* a driver without storageCapacity: no check */
    th_cluster *c2 = th_cluster_new();
    binder_env(c2);
    sc(c2, "capClass", "WaitForFirstConsumer", "test-provisioner", NULL);
    th_cluster_add_object(c2, "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver','metadata':"
                              "{'name':'test-provisioner'},'spec':{'storageCapacity':false}}");
    pvc(c2, "pvc", "capClass", "1Gi");
    expect(p, c2, POD("pvc"), "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "capacity disabled");
}

/* ---- Reserve / Unreserve: the plugin's assumed bindings ----------------------------------------
 */

Test(volume_binding, reserve_takes_the_pv_until_unreserve)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    binder_env(c);
    pvc(c, "claim-1", "waitClass", "1G");
    pvc(c, "claim-2", "waitClass", "1G");
    pv_on(c, "pv-only", "waitClass", "1G", "nodeKey", "node1");
    ks_pod *p1 = pod_named("pod-1", "claim-1"), *p2 = pod_named("pod-2", "claim-2");
    expect(p, c, p2, "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "before pod-1's Reserve");
    cr_assert_eq(th_reserve(p, c, p1, "node1", 0, msg, sizeof(msg)), KS_SUCCESS, "%s", msg);
    expect(p, c, p2, "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT, "pv-only is assumed by pod-1");
    expect(p, c, p1, "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "pod-1 still sees its PV");
    /* pod-1's failed binding cycle: Unreserve releases the PV */
    cr_assert_eq(th_reserve(p, c, p1, "node1", 1, msg, sizeof(msg)), KS_SUCCESS, "%s", msg);
    expect(p, c, p2, "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "after pod-1's Unreserve");
}

/* Args: the descriptor's schema and validate_args are what the configuration loader runs; their
 * cases (negative bindTimeoutSeconds, shape order and ranges, the defaults) are
 * tests/core/test_config.c's VolumeBinding cases, which load through the in-tree registry. */
Test(volume_binding, args_kind)
{
    cr_expect_not_null(ks_plugin_volume_binding.validate_args);
    cr_expect_str_eq(ks_plugin_volume_binding.args_schema->kind, "VolumeBindingArgs");
}

/* ---- the assume cache's lifetime (upstream passiveAssumeCache) ---------------------------------
 */

Test(volume_binding, an_assumption_holds_for_its_claim_and_expires_with_a_newer_version)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    binder_env(c);
    pvc(c, "claim-1", "waitClass", "1G");
    pvc(c, "claim-2", "waitClass", "1G");
    pv_on(c, "pv-only", "waitClass", "1G", "nodeKey", "node1");
    ks_pod *p1 = pod_named("pod-1", "claim-1"), *p2 = pod_named("pod-2", "claim-2");
    ks_pod *peer = pod_named("pod-1-peer", "claim-1");
    cr_assert_eq(th_reserve(p, c, p1, "node1", 0, msg, sizeof(msg)), KS_SUCCESS, "%s", msg);
    /* the PV is assumed bound to claim-1: another pod of claim-1 matches it, claim-2 does not */
    expect(p, c, peer, "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "claim-1's other pod");
    expect(p, c, p2, "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT, "claim-2");
    /* an informer update (a newer version) replaces the assumed object */
    cr_assert_eq(th_cluster_patch(c, "PersistentVolume", NULL, "pv-only",
                                  "{'metadata':{'labels':{'touched':'yes'}}}"),
                 0);
    expect(p, c, p2, "node1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "after a newer version");
}

/* ---- PreBindPreFlight / PreBind (upstream binder_test.go TestBindAPIUpdate, TestCheckBindings,
 * TestBindPodVolumes) -------------------------------------------------------------------------- */

/* A node, a WaitForFirstConsumer class without provisioner and one with, a PV of the first on the
 * node, a claim of each, all with uids and versions as the API server gives them. */
static void prebind_env(th_cluster *c)
{
    node(c, "node-a", NULL);
    sc(c, "local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner", NULL);
    sc(c, "fast", "WaitForFirstConsumer", "example.com/fast", NULL);
    th_cluster_add_object(
        c,
        "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pv-a','uid':'uid-pv-a',"
        "'resourceVersion':'5'},'spec':{'storageClassName':'local','capacity':{'storage':'1Gi'},"
        "'accessModes':['ReadWriteOnce'],'hostPath':{'path':'/a'},'nodeAffinity':{'required':{"
        "'nodeSelectorTerms':[{'matchExpressions':[{'key':'kubernetes.io/hostname','operator':"
        "'In','values':['node-a']}]}]}}},'status':{'phase':'Available'}}");
    pvc_full(c, "pvc-a", "local", ",'uid':'uid-pvc-a','resourceVersion':'7'",
             ",'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}", NULL);
    pvc_full(c, "pvc-p", "fast", ",'uid':'uid-pvc-p','resourceVersion':'8'",
             ",'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}", NULL);
}

/* The PV controller's answer to PreBind's claimRef: claim pvc-a bound to pv-a, on tick `at`. */
static int complete_at(th_cluster *c, int n, void *arg)
{
    if (n == *(int *)arg)
        cr_assert_eq(th_cluster_patch(c, "PersistentVolumeClaim", "default", "pvc-a",
                                      "{'metadata':{'annotations':{'pv.kubernetes.io/"
                                      "bind-completed':'yes'}},'spec':{'volumeName':'pv-a'}}"),
                     0);
    return 0;
}

Test(volume_binding, prebind_writes_the_claim_ref_and_waits_for_the_pv_controller)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    ks_code pf;
    int at = 2;
    prebind_env(c);
    th_cluster_binding(c, 0, complete_at, &at);
    ks_code code = th_pre_bind(p, c, pod_named("p", "pvc-a"), "node-a", &pf, msg, sizeof(msg));
    cr_assert_eq(code, KS_SUCCESS, "%s", msg);
    cr_expect_eq(pf, KS_SUCCESS, "there is a binding to write");
    cr_expect_eq(th_cluster_patches(c), 1);
    cJSON *pv = th_cluster_object(c, "PersistentVolume", NULL, "pv-a");
    char *ref =
        cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(pv, "spec"), "claimRef"));
    /* upstream reference.GetReference of the claim */
    cr_expect_str_eq(ref, "{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"default\",\"name\":"
                          "\"pvc-a\",\"uid\":\"uid-pvc-a\",\"apiVersion\":\"v1\","
                          "\"resourceVersion\":\"7\"}");
    const cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(pv, "metadata"), "annotations");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(ann, "pv.kubernetes.io/"
                                                                   "bound-by-controller")),
                     "yes");
    free(ref);
    cJSON_Delete(pv);
}

Test(volume_binding, prebind_preflight_skips_when_every_claim_is_bound)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    ks_code pf;
    prebind_env(c);
    th_cluster_add_object(
        c, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'done',"
           "'namespace':'default','uid':'u','annotations':{'pv.kubernetes.io/bind-completed':"
           "'yes'}},'spec':{'storageClassName':'local','volumeName':'pv-a'}}");
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "done"), "node-a", &pf, msg, sizeof(msg)),
                 KS_SUCCESS, "%s", msg);
    cr_expect_eq(pf, KS_SKIP);
    cr_expect_eq(th_cluster_patches(c), 0);
}

static int reset_claim_ref(th_cluster *c, int n, void *arg)
{
    (void)arg;
    if (n == 1)
        cr_assert_eq(
            th_cluster_patch(c, "PersistentVolume", NULL, "pv-a", "{'spec':{'claimRef':null}}"), 0);
    return 0;
}

Test(volume_binding, prebind_fails_when_the_claim_ref_is_reset_and_releases_the_pv)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    prebind_env(c);
    th_cluster_binding(c, 0, reset_claim_ref, NULL);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-a"), "node-a", NULL, msg, sizeof(msg)),
                 KS_ERROR);
    cr_expect_str_eq(msg, "binding volumes: ClaimRef got reset for pv \"pv-a\"");
    /* Unreserve dropped the assumption: another claim can take pv-a again */
    pvc_full(c, "pvc-b", "local", ",'uid':'uid-pvc-b'",
             ",'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}", NULL);
    expect(p, c, pod_named("q", "pvc-b"), "node-a", KS_SUCCESS, NULL, KS_SUCCESS, NULL,
           "pv-a free again");
}

/* The provisioner: a PV on the node and the claim bound to it on tick 1, or (arg set) the
 * selected-node annotation removed (a failed provisioning asks for another node; the PV
 * controller's storage-provisioner annotation stays, as on a real claim). */
static int provision(th_cluster *c, int n, void *arg)
{
    if (n != 1)
        return 0;
    if (arg) {
        cr_assert_eq(th_cluster_patch(c, "PersistentVolumeClaim", "default", "pvc-p",
                                      "{'metadata':{'annotations':{'volume.kubernetes.io/"
                                      "selected-node':null,'volume.kubernetes.io/"
                                      "storage-provisioner':'example.com/fast'}}}"),
                     0);
        return 0;
    }
    th_cluster_add_object(
        c, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pvc-new','uid':'n'},"
           "'spec':{'storageClassName':'fast','capacity':{'storage':'1Gi'},'claimRef':{"
           "'namespace':'default','name':'pvc-p','uid':'uid-pvc-p'},'nodeAffinity':{'required':{"
           "'nodeSelectorTerms':[{'matchExpressions':[{'key':'kubernetes.io/hostname','operator':"
           "'In','values':['node-a']}]}]}}}}");
    cr_assert_eq(th_cluster_patch(c, "PersistentVolumeClaim", "default", "pvc-p",
                                  "{'metadata':{'annotations':{'pv.kubernetes.io/bind-completed':"
                                  "'yes'}},'spec':{'volumeName':'pvc-new'}}"),
                 0);
    return 0;
}

Test(volume_binding, prebind_selects_the_node_for_provisioning_and_waits_for_the_volume)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    prebind_env(c);
    th_cluster_binding(c, 0, provision, NULL);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-p"), "node-a", NULL, msg, sizeof(msg)),
                 KS_SUCCESS, "%s", msg);
    cr_expect_eq(th_cluster_patches(c), 1);
    cJSON *claim = th_cluster_object(c, "PersistentVolumeClaim", "default", "pvc-p");
    const cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(claim, "metadata"), "annotations");
    cr_expect_str_eq(
        cJSON_GetStringValue(cJSON_GetObjectItem(ann, "volume.kubernetes.io/selected-node")),
        "node-a");
    cJSON_Delete(claim);
}

Test(volume_binding, prebind_fails_when_the_provisioner_gives_the_node_back)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    static int fail = 1;
    prebind_env(c);
    th_cluster_binding(c, 0, provision, &fail);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-p"), "node-a", NULL, msg, sizeof(msg)),
                 KS_ERROR);
    cr_expect_str_eq(msg, "binding volumes: provisioning failed for PVC \"pvc-p\"");
}

static int pod_deleted(th_cluster *c, int n, void *arg)
{
    (void)c;
    (void)arg;
    return n == 2 ? KS_ENOTFOUND : 0;
}

Test(volume_binding, prebind_stops_waiting_when_the_pod_is_deleted)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    prebind_env(c);
    th_cluster_binding(c, 0, pod_deleted, NULL);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-a"), "node-a", NULL, msg, sizeof(msg)),
                 KS_ERROR);
    cr_expect_str_eq(msg, "binding volumes: pod does not exist any more: pod \"p\" not found");
}

static int count_ticks(th_cluster *c, int n, void *arg)
{
    (void)c;
    *(int *)arg = n;
    return 0;
}

Test(volume_binding, prebind_gives_up_after_bind_timeout_seconds)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, "{'bindTimeoutSeconds':3}");
    char msg[512];
    int ticks = 0;
    prebind_env(c);
    th_cluster_binding(c, 0, count_ticks, &ticks);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-a"), "node-a", NULL, msg, sizeof(msg)),
                 KS_ERROR);
    cr_expect_str_eq(msg, "binding volumes: context deadline exceeded");
    cr_expect_eq(ticks, 3, "one poll a second for 3 s, got %d", ticks);
}

Test(volume_binding, prebind_in_simulate_checks_once_and_takes_the_selected_node_as_done)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    int ticks = 0;
    prebind_env(c);
    th_cluster_binding(c, KS_SOURCE_SIMULATED, count_ticks, &ticks);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-p"), "node-a", NULL, msg, sizeof(msg)),
                 KS_SUCCESS, "%s", msg);
    /* a static binding nobody completes (the harness is no PV controller): not done at once */
    cr_assert_eq(th_pre_bind(p, c, pod_named("q", "pvc-a"), "node-a", NULL, msg, sizeof(msg)),
                 KS_ERROR);
    cr_expect_str_eq(msg, "binding volumes: context deadline exceeded");
    cr_expect_eq(ticks, 0, "simulate does not sleep");
}

/* upstream's scheduler_volume_scheduling_stage_error_total: a failed PreBind counts as "bind". */
Test(volume_binding, a_failed_prebind_counts_a_bind_stage_error)
{
    ks_metrics *reg = ks__metrics_create();
    ks__host_set_metrics(reg);
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    ks__host_set_metrics(NULL);
    char msg[512];
    prebind_env(c);
    th_cluster_binding(c, 0, reset_claim_ref, NULL);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-a"), "node-a", NULL, msg, sizeof(msg)),
                 KS_ERROR);
    char *text;
    cr_assert_eq(ks__metrics_render(reg, &text, NULL), 0);
    cr_expect(strstr(text, "# HELP scheduler_volume_scheduling_stage_error_total [ALPHA] Volume "
                           "scheduling stage error count\n"),
              "%s", text);
    cr_expect(strstr(text, "scheduler_volume_scheduling_stage_error_total{operation=\"bind\"} 1\n"),
              "%s", text);
    cr_expect(!strstr(text, "operation=\"predicate\""), "%s", text);
    free(text);
    ks__metrics_destroy(reg);
}

/* ---- CSI migration (upstream binder.go tryTranslatePVToCSI; binder_test.go
 * TestFindPodVolumesWithCSIMigration, TestCheckBindingsWithCSIMigration; csi-translation-lib
 * v0.37 TranslateInTreePVToCSI) ---------------------------------------------------------------- */

#define GCE_PD "kubernetes.io/gce-pd"
#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define GA_ZONE "topology.kubernetes.io/zone"
#define GA_REGION "topology.kubernetes.io/region"
/* upstream zone1Labels */
#define ZONE1_LABELS "'" BETA_ZONE "':'us-east-1','" BETA_REGION "':'us-east-1a'"
#define GCE_SOURCE "'gcePersistentDisk':{'pdName':'test-disk','fsType':'ext4'}"

/* makeCSINode(name, migratedPlugin); migrated NULL: no annotation at all */
static void csi_node(th_cluster *c, const char *name, const char *migrated)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{'name':'%s'%s%s%s},"
             "'spec':{'drivers':[]}}",
             name,
             migrated ? ",'annotations':{'storage.alpha.kubernetes.io/migrated-plugins':'" : "",
             migrated ? migrated : "", migrated ? "'}" : "");
    th_cluster_add_object(c, json);
}

/* A PV of `source` (JSON member), labels (JSON members or NULL), node affinity terms (a JSON
 * array or NULL), bound (claimRef) to default/claim when claim is not NULL. */
static void pv_src(th_cluster *c, const char *name, const char *labels, const char *source,
                   const char *terms, const char *claim)
{
    char json[2048], ref[256] = "", aff[1024] = "";
    if (claim)
        snprintf(ref, sizeof(ref), ",'claimRef':{'namespace':'default','name':'%s','uid':'uid-%s'}",
                 claim, claim);
    if (terms)
        snprintf(aff, sizeof(aff), ",'nodeAffinity':{'required':{'nodeSelectorTerms':%s}}", terms);
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'%s',"
             "'resourceVersion':'1','labels':{%s}},'spec':{'storageClassName':'wait-sc',"
             "'capacity':{'storage':'1G'},'accessModes':['ReadWriteOnce'],%s%s%s},"
             "'status':{'phase':'%s'}}",
             name, labels ? labels : "", source, aff, ref, claim ? "Bound" : "Available");
    th_cluster_add_object(c, json);
}

/* One bound claim "data" on PV pv (already added), a node with labels and, unless cn_ann is
 * "-", a CSINode with that migrated-plugins annotation (NULL: none); PreFilter + Filter. */
static void expect_bound(const char *node_labels, const char *cn_ann, ks_code want,
                         const char *want_msg, const char *what, void (*add_pv)(th_cluster *c))
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "node1", node_labels);
    if (!cn_ann || strcmp(cn_ann, "-") != 0)
        csi_node(c, "node1", cn_ann);
    pvc_bound(c, "data", "wait-sc", "pv-migration-bound");
    add_pv(c);
    expect(p, c, POD("data"), "node1", KS_SUCCESS, NULL, want, want_msg, what);
}

/* makeTestPVForCSIMigration(zone1Labels, boundMigrationPVC, true) */
static void migration_pv(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", ZONE1_LABELS, GCE_SOURCE, NULL, "data");
}

/* the same with migrationEnabled false: an RBD source, which no migration covers */
static void nonmigration_pv(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", ZONE1_LABELS, "'rbd':{'image':'test-disk','monitors':['m']}",
           NULL, "data");
}

#define ZONE1 "'topology.gke.io/zone':'us-east-1'"
#define ZONE2 "'topology.gke.io/zone':'us-east-2'"

Test(volume_binding, find_pod_volumes_with_csi_migration)
{
    expect_bound(ZONE1, GCE_PD, KS_SUCCESS, NULL, "pvc-bound", migration_pv);
    expect_bound(ZONE1, "", KS_SUCCESS, NULL, "pvc-bound,csinode-not-migrated", migration_pv);
    expect_bound(ZONE1, "-", KS_SUCCESS, NULL, "pvc-bound,missing-csinode", migration_pv);
    expect_bound(ZONE2, GCE_PD, UU, NODE_CONFLICT, "pvc-bound,node-different-zone", migration_pv);
    /* the conflict is the translation's: the same PV and node without it fit */
    expect_bound(ZONE2, "", KS_SUCCESS, NULL, "different zone, not migrated", migration_pv);
    expect_bound(ZONE2, "-", KS_SUCCESS, NULL, "different zone, no CSINode", migration_pv);
    expect_bound(ZONE2, NULL, KS_SUCCESS, NULL, "different zone, no annotation", migration_pv);
    expect_bound(ZONE2, GCE_PD, KS_SUCCESS, NULL, "different zone, RBD", nonmigration_pv);
    /* the annotation is a comma-separated set of exact names */
    expect_bound(ZONE2, "kubernetes.io/aws-ebs," GCE_PD, UU, NODE_CONFLICT, "in a list",
                 migration_pv);
    expect_bound(ZONE2, "kubernetes.io/aws-ebs, " GCE_PD, KS_SUCCESS, NULL, "a spaced name",
                 migration_pv);
    expect_bound(ZONE2, "kubernetes.io/gce", KS_SUCCESS, NULL, "a prefix", migration_pv);
}

/* GA zone labels only (AWS EBS): the CSI key In the label's "__"-separated zones */
static void ebs_ga_labels(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':'us-east-1a__ us-east-1b __'",
           "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/vol-0123'}", NULL, "data");
}

/* affinity with the beta zone key and the beta region key (Cinder): both renamed */
static void cinder_beta_affinity(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':'nova-x'", "'cinder':{'volumeID':'v1'}",
           "[{'matchExpressions':[{'key':'" BETA_ZONE "','operator':'In','values':['nova']},"
           "{'key':'" BETA_REGION "','operator':'In','values':['r1']}]}]",
           "data");
}

/* affinity with the GA zone key: it wins over the labels; a beta region stays (GA labels) */
static void gce_ga_affinity(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" BETA_ZONE "':'us-east-9'", GCE_SOURCE,
           "[{'matchExpressions':[{'key':'" GA_ZONE "','operator':'In','values':['us-east-1']},"
           "{'key':'" BETA_REGION "','operator':'In','values':['r1']}]}]",
           "data");
}

/* a hostname term and the zone in the labels: the zone is appended to that term */
static void gce_host_term_and_labels(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" BETA_ZONE "':'us-east-1'", GCE_SOURCE,
           "[{'matchExpressions':[{'key':'kubernetes.io/hostname','operator':'In','values':"
           "['node1']}]}]",
           "data");
}

/* GCE PD's regional disk: two zones of one region */
static void gce_regional(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':'us-central1-a__us-central1-b'", GCE_SOURCE,
           NULL, "data");
}

/* an empty zone label: addTopology has no valid zone and leaves the PV alone */
static void gce_empty_zone_label(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':''", GCE_SOURCE,
           "[{'matchExpressions':[{'key':'kubernetes.io/hostname','operator':'In','values':"
           "['node1']}]}]",
           "data");
}

/* Portworx and Azure Disk translate without topology; vSphere's migration is off */
static void portworx_zone_labels(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':'z9'", "'portworxVolume':{'volumeID':'px'}",
           NULL, "data");
}
static void azure_managed_zone_labels(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':'z9'",
           "'azureDisk':{'diskName':'d','diskURI':'/sub/d','kind':'managed'}", NULL, "data");
}
static void vsphere_zone_labels(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" GA_ZONE "':'z9'",
           "'vsphereVolume':{'volumePath':'[ds] v.vmdk'}", NULL, "data");
}

Test(volume_binding, csi_migration_topology)
{
    const char *ebs = "kubernetes.io/aws-ebs", *cinder = "kubernetes.io/cinder";
    expect_bound("'topology.ebs.csi.aws.com/zone':'us-east-1b'", ebs, KS_SUCCESS, NULL,
                 "EBS GA labels, second zone (trimmed)", ebs_ga_labels);
    expect_bound("'topology.ebs.csi.aws.com/zone':'us-east-1c'", ebs, UU, NODE_CONFLICT,
                 "EBS GA labels, other zone", ebs_ga_labels);
    expect_bound("'" GA_ZONE "':'us-east-1a'", ebs, UU, NODE_CONFLICT,
                 "EBS GA labels, node without the CSI key", ebs_ga_labels);
    expect_bound("'" GA_ZONE "':'us-east-1a'", "", KS_SUCCESS, NULL, "EBS labels, not migrated",
                 ebs_ga_labels);

    const char *cinder_node =
        "'topology.cinder.csi.openstack.org/zone':'nova','" GA_REGION "':'r1'";
    expect_bound(cinder_node, cinder, KS_SUCCESS, NULL, "Cinder beta keys renamed",
                 cinder_beta_affinity);
    expect_bound("'" BETA_ZONE "':'nova','" BETA_REGION "':'r1'", cinder, UU, NODE_CONFLICT,
                 "Cinder, a node with beta labels only", cinder_beta_affinity);
    expect_bound("'" BETA_ZONE "':'nova','" BETA_REGION "':'r1'", "", KS_SUCCESS, NULL,
                 "Cinder, beta labels, not migrated", cinder_beta_affinity);
    expect_bound("'topology.cinder.csi.openstack.org/zone':'nova','" BETA_REGION "':'r1'", cinder,
                 UU, NODE_CONFLICT, "Cinder, the region must be GA now", cinder_beta_affinity);

    expect_bound("'topology.gke.io/zone':'us-east-1','" BETA_REGION "':'r1'", GCE_PD, KS_SUCCESS,
                 NULL, "GCE GA affinity: region stays beta", gce_ga_affinity);
    expect_bound("'topology.gke.io/zone':'us-east-1','" GA_REGION "':'r1'", GCE_PD, UU,
                 NODE_CONFLICT, "GCE GA affinity: no GA region rename", gce_ga_affinity);
    expect_bound("'topology.gke.io/zone':'us-east-9','" BETA_REGION "':'r1'", GCE_PD, UU,
                 NODE_CONFLICT, "GCE: the affinity's zone wins over the labels", gce_ga_affinity);

    expect_bound("'topology.gke.io/zone':'us-east-1'", GCE_PD, KS_SUCCESS, NULL,
                 "host term and zone label", gce_host_term_and_labels);
    expect_bound("'topology.gke.io/zone':'us-east-2'", GCE_PD, UU, NODE_CONFLICT,
                 "host term and zone label, other zone", gce_host_term_and_labels);

    expect_bound("'topology.gke.io/zone':'us-central1-b'", GCE_PD, KS_SUCCESS, NULL,
                 "regional disk, second zone", gce_regional);
    expect_bound("'topology.gke.io/zone':'us-central1-c'", GCE_PD, UU, NODE_CONFLICT,
                 "regional disk, other zone", gce_regional);

    expect_bound(NULL, GCE_PD, KS_SUCCESS, NULL, "empty zone label", gce_empty_zone_label);

    expect_bound(NULL, "kubernetes.io/portworx-volume", KS_SUCCESS, NULL, "Portworx",
                 portworx_zone_labels);
    expect_bound(NULL, "kubernetes.io/azure-disk", KS_SUCCESS, NULL, "Azure Disk (managed)",
                 azure_managed_zone_labels);
    expect_bound(NULL, "kubernetes.io/vsphere-volume", KS_SUCCESS, NULL, "vSphere",
                 vsphere_zone_labels);
}

static void gce_two_regions(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" BETA_ZONE "':'us-east1-b__us-central1-a__us-east1-c'",
           GCE_SOURCE, NULL, "data");
}
static void gce_bad_zone(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", "'" BETA_ZONE "':'us-east1-b__zone1'", GCE_SOURCE, NULL,
           "data");
}
static void gce_empty_zone_token(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL, GCE_SOURCE, NULL, "data");
    cr_assert_eq(th_cluster_patch(c, "PersistentVolume", NULL, "pv-migration-bound",
                                  "{'metadata':{'labels':{'" BETA_ZONE "':'us-east1-b__'}}}"),
                 0);
}
static void ebs_bad_id(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL,
           "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/disk-1'}", NULL, "data");
}
static void ebs_bad_escape(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL,
           "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/vol-%zz'}", NULL, "data");
}
static void ebs_bad_port(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL,
           "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a:x/vol-1'}", NULL, "data");
}
static void ebs_bare_id(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL, "'awsElasticBlockStore':{'volumeID':'anything/at/all'}",
           NULL, "data");
}
static void ebs_escaped_ok(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL,
           "'awsElasticBlockStore':{'volumeID':'aws:///vol-%41b/?q=1#f'}", NULL, "data");
}
static void azure_shared(th_cluster *c)
{
    pv_src(c, "pv-migration-bound", NULL,
           "'azureDisk':{'diskName':'d','diskURI':'/sub/d','kind':'Shared'}", NULL, "data");
}

/* TranslateInTreePVToCSI's errors: Filter's FindPodVolumes returns them (an Error status). */
Test(volume_binding, csi_migration_translation_errors)
{
    const char *ebs = "kubernetes.io/aws-ebs";
    expect_bound(NULL, GCE_PD, KS_ERROR,
                 "could not translate pv: failed to get region from zones: multiple or no "
                 "regions gotten from zones, got: map[us-central1:{} us-east1:{}]",
                 "GCE zones of two regions", gce_two_regions);
    expect_bound(NULL, "", KS_SUCCESS, NULL, "GCE zones of two regions, not migrated",
                 gce_two_regions);
    expect_bound(NULL, GCE_PD, KS_ERROR,
                 "could not translate pv: failed to get region from zones: zone in unexpected "
                 "format, expected: {locale}-{region}-{zone}, got: zone1",
                 "GCE malformed zone", gce_bad_zone);
    expect_bound(NULL, GCE_PD, KS_ERROR,
                 "could not translate pv: failed to get region from zones: zone in unexpected "
                 "format, expected: {locale}-{region}-{zone}, got: ",
                 "GCE empty zone token", gce_empty_zone_token);
    expect_bound(NULL, ebs, KS_ERROR,
                 "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
                 "Invalid format for AWS volume (aws://us-east-1a/disk-1)",
                 "EBS id", ebs_bad_id);
    expect_bound(NULL, ebs, KS_ERROR,
                 "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
                 "Invalid disk name (aws://us-east-1a/vol-%zz): parse "
                 "\"aws://us-east-1a/vol-%zz\": invalid URL escape \"%zz\"",
                 "EBS URL escape", ebs_bad_escape);
    expect_bound(NULL, ebs, KS_ERROR,
                 "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
                 "Invalid disk name (aws://us-east-1a:x/vol-1): parse "
                 "\"aws://us-east-1a:x/vol-1\": invalid port \":x\" after host",
                 "EBS URL port", ebs_bad_port);
    expect_bound(NULL, ebs, KS_SUCCESS, NULL, "EBS bare id", ebs_bare_id);
    expect_bound(NULL, ebs, KS_SUCCESS, NULL, "EBS escaped id, query, fragment", ebs_escaped_ok);
    expect_bound(NULL, "kubernetes.io/azure-disk", KS_ERROR,
                 "could not translate pv: kind(Shared) is not supported in csi migration",
                 "Azure Disk shared", azure_shared);
    expect_bound(NULL, "kubernetes.io/cinder", KS_SUCCESS, NULL, "Azure Disk, other plugin",
                 azure_shared);
}

/* TestCheckBindingsWithCSIMigration: node1 (zone), its CSINode, class wait-sc's claim pvc-a to
 * bind to the PV; the PV controller completes the binding on the first tick. */
static int complete_pvc_a(th_cluster *c, int n, void *arg)
{
    (void)arg;
    if (n == 1)
        cr_assert_eq(th_cluster_patch(c, "PersistentVolumeClaim", "default", "pvc-a",
                                      "{'metadata':{'annotations':{'pv.kubernetes.io/"
                                      "bind-completed':'yes'}},'spec':{'volumeName':'"
                                      "pv-migration-bound'}}"),
                     0);
    return 0;
}

static void expect_prebind(const char *node_labels, const char *cn_ann, const char *labels,
                           const char *source, ks_code want, const char *want_msg, const char *what)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[1024];
    sc(c, "wait-sc", "WaitForFirstConsumer", "kubernetes.io/no-provisioner", NULL);
    node(c, "node1", node_labels);
    if (strcmp(cn_ann, "-") != 0)
        csi_node(c, "node1", cn_ann);
    pv_src(c, "pv-migration-bound", labels, source, NULL, NULL);
    pvc_full(c, "pvc-a", "wait-sc", ",'uid':'uid-pvc-a','resourceVersion':'7'",
             ",'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1G'}}", NULL);
    th_cluster_binding(c, 0, complete_pvc_a, NULL);
    ks_code got = th_pre_bind(p, c, pod_named("p", "pvc-a"), "node1", NULL, msg, sizeof(msg));
    cr_expect_eq(got, want, "%s: PreBind %d, want %d (%s)", what, got, want, msg);
    if (want_msg)
        cr_expect_str_eq(msg, want_msg, "%s", what);
}

#define NODE_AFFINITY_MISMATCH                                                                     \
    "binding volumes: pv \"pv-migration-bound\" node affinity doesn't match node \"node1\": no "   \
    "matching NodeSelectorTerms"

Test(volume_binding, check_bindings_with_csi_migration)
{
    const char *rbd = "'rbd':{'image':'test-disk','monitors':['m']}";
    expect_prebind(ZONE1, GCE_PD, ZONE1_LABELS, GCE_SOURCE, KS_SUCCESS, NULL,
                   "binding-node-pv-same-zone");
    expect_prebind(ZONE1, "-", ZONE1_LABELS, GCE_SOURCE, KS_SUCCESS, NULL,
                   "binding-without-csinode");
    expect_prebind(ZONE1, "", ZONE1_LABELS, GCE_SOURCE, KS_SUCCESS, NULL,
                   "binding-non-migrated-plugin");
    expect_prebind(ZONE2, GCE_PD, ZONE1_LABELS, GCE_SOURCE, KS_ERROR, NODE_AFFINITY_MISMATCH,
                   "binding-node-pv-in-different-zones");
    expect_prebind(ZONE2, GCE_PD, ZONE1_LABELS, rbd, KS_SUCCESS, NULL,
                   "binding-node-pv-different-zones-migration-off");
    expect_prebind(ZONE2, "", ZONE1_LABELS, GCE_SOURCE, KS_SUCCESS, NULL,
                   "different zones, not migrated");
    expect_prebind(ZONE1, GCE_PD, "'" BETA_ZONE "':'us-east1-b__us-central1-a'", GCE_SOURCE,
                   KS_ERROR,
                   "binding volumes: failed to translate pv to csi: could not translate pv: "
                   "failed to get region from zones: multiple or no regions gotten from zones, "
                   "got: map[us-central1:{} us-east1:{}]",
                   "a translation error");
}

/* provisioning-pvc-bound: the provisioner binds the claim to a GCE PD PV of zone us-east-1. */
static int provision_gce(th_cluster *c, int n, void *arg)
{
    if (n != 1)
        return 0;
    char json[1024];
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pv-migration-"
             "bound','uid':'n','labels':{%s}},'spec':{'storageClassName':'fast','capacity':{"
             "'storage':'1Gi'},'claimRef':{'namespace':'default','name':'pvc-p','uid':"
             "'uid-pvc-p'}," GCE_SOURCE "}}",
             (const char *)arg);
    th_cluster_add_object(c, json);
    cr_assert_eq(th_cluster_patch(c, "PersistentVolumeClaim", "default", "pvc-p",
                                  "{'metadata':{'annotations':{'pv.kubernetes.io/bind-completed':"
                                  "'yes'}},'spec':{'volumeName':'pv-migration-bound'}}"),
                 0);
    return 0;
}

static void expect_provisioned(const char *node_labels, const char *pv_labels, ks_code want,
                               const char *want_msg, const char *what)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[1024];
    sc(c, "fast", "WaitForFirstConsumer", "example.com/fast", NULL);
    node(c, "node1", node_labels);
    csi_node(c, "node1", GCE_PD);
    pvc_full(c, "pvc-p", "fast", ",'uid':'uid-pvc-p','resourceVersion':'8'",
             ",'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}", NULL);
    th_cluster_binding(c, 0, provision_gce, (void *)pv_labels);
    ks_code got = th_pre_bind(p, c, pod_named("p", "pvc-p"), "node1", NULL, msg, sizeof(msg));
    cr_expect_eq(got, want, "%s: PreBind %d, want %d (%s)", what, got, want, msg);
    if (want_msg)
        cr_expect_str_eq(msg, want_msg, "%s", what);
}

Test(volume_binding, check_bindings_with_csi_migration_provisioning)
{
    expect_provisioned(ZONE1, ZONE1_LABELS, KS_SUCCESS, NULL, "provisioning-pvc-bound");
    expect_provisioned(ZONE2, ZONE1_LABELS, KS_ERROR, NODE_AFFINITY_MISMATCH,
                       "provisioned PV in another zone");
    /* the provisioning path returns the translation's error as it is */
    expect_provisioned(ZONE1, "'" BETA_ZONE "':'us-east1-b__bad'", KS_ERROR,
                       "binding volumes: could not translate pv: failed to get region from "
                       "zones: zone in unexpected format, expected: {locale}-{region}-{zone}, "
                       "got: bad",
                       "provisioned PV, translation error");
}

/* PreFilter describes each bound PV's translation once; a PV the store replaced before Filter
 * (an informer update within the cycle) is translated afresh: here its zone label moves from
 * us-east-1 to us-east-2 between the two, on a node of us-east-2. */
Test(volume_binding, csi_migration_uses_the_pv_filter_sees)
{
    th_cluster *tc = th_cluster_new();
    classes(tc);
    csi_node(tc, "node1", GCE_PD);
    pvc_bound(tc, "data", "wait-sc", "pv-migration-bound");
    migration_pv(tc);
    const char *node_json = "{'metadata':{'name':'node1','labels':{" ZONE2 "}},'status':{"
                            "'allocatable':{'cpu':'4','memory':'8Gi','pods':'10'}}}";
    th_cluster_add_node(tc, node_json);
    ks_cache *cache = ks__cache_new();
    ks_snapshot *snap = ks__snapshot_new();
    cr_assert_eq(ks__cache_add_node(cache, th_node(node_json)), 0);
    cr_assert_eq(ks__cache_update_snapshot(cache, snap), 0);
    const ks_node_info *ni = ks__snapshot_find(snap, ks__intern("node1"));
    cr_assert_not_null(ni);
    const ks_plugin_desc *d = &ks_plugin_volume_binding;
    struct ks_args args = {0};
    struct ks_error e = {{0}};
    void *self = d->create(&args, &e);
    cr_assert_not_null(self, "%s", e.msg);
    for (int update = 0; update < 2; update++) {
        ks_pod *pod = POD("data");
        ks_cycle *cycle = ks__cycle_new(snap, pod);
        cr_assert_not_null(cycle);
        cycle->hooks = th_cluster_hooks(tc);
        ks_status st;
        ks__status_reset(&st);
        ks_prefilter_result r = {0};
        cr_assert_eq(d->pre_filter(self, cycle, pod, &r, &st), KS_SUCCESS);
        free(r.nodes);
        if (update)
            cr_assert_eq(th_cluster_patch(tc, "PersistentVolume", NULL, "pv-migration-bound",
                                          "{'metadata':{'labels':{'" BETA_ZONE "':'us-east-2'}}}"),
                         0);
        ks__status_reset(&st);
        ks_code code = d->filter(self, cycle, pod, ni, &st);
        char msg[256];
        ks__status_message(&st, msg, sizeof(msg));
        if (update)
            cr_expect_eq(code, KS_SUCCESS, "the updated PV is in us-east-2: %d %s", code, msg);
        else
            cr_expect_eq(code, UU, "the PV is in us-east-1: %d %s", code, msg);
        ks__cycle_free(cycle);
    }
    d->destroy(self);
    ks__snapshot_free(snap);
    ks__cache_free(cache);
}

/* KubernetesVolumeIDToEBSVolumeID's net/url.Parse errors, each message as csi-translation-lib
 * v0.37.2 built with Go 1.26 prints it (checked against the library itself). */
static const char *g_ebs_id;
static void ebs_with_id(th_cluster *c)
{
    char src[256];
    snprintf(src, sizeof(src), "'awsElasticBlockStore':{'volumeID':'%s'}", g_ebs_id);
    pv_src(c, "pv-migration-bound", NULL, src, NULL, "data");
}

Test(volume_binding, csi_migration_ebs_volume_id)
{
    static const struct {
        const char *id, *parse_error; /* NULL: translates */
    } rows[] = {
        {"aws://a\\u0001/vol-1",
         "\"aws://a\\x01/vol-1\": net/url: invalid control character in URL"},
        {"aws://a b/vol-1", "\"aws://a b/vol-1\": invalid character \" \" in host name"},
        {"aws://u^@a/vol-1", "\"aws://u^@a/vol-1\": net/url: invalid userinfo"},
        {"aws://a/vol-1#%zz", "\"aws://a/vol-1#%zz\": invalid URL escape \"%zz\""},
        {"aws://a[b]/vol-1", "\"aws://a[b]/vol-1\": invalid IP-literal"},
        {"aws://[::1]:x/vol-1", "\"aws://[::1]:x/vol-1\": invalid port \":x\" after host"},
        {"aws://[::1/vol-1", "\"aws://[::1/vol-1\": missing ']' in host"},
        {"aws://a%41/vol-1", "\"aws://a%41/vol-1\": invalid URL escape \"%41\""},
        {"aws://a%C3%A9/vol-1", NULL},
        {"aws://a/vol-1%", "\"aws://a/vol-1%\": invalid URL escape \"%\""},
        {"vol-1", NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        g_ebs_id = rows[i].id;
        char want[512], shown[128];
        /* the id as the message's first (unquoted) copy shows it: \u0001 is the raw byte */
        snprintf(shown, sizeof(shown), "%s", rows[i].id);
        char *u = strstr(shown, "\\u0001");
        if (u) {
            u[0] = '\x01';
            memmove(u + 1, u + 6, strlen(u + 6) + 1);
        }
        snprintf(want, sizeof(want),
                 "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
                 "Invalid disk name (%s): parse %s",
                 shown, rows[i].parse_error ? rows[i].parse_error : "");
        expect_bound(NULL, "kubernetes.io/aws-ebs", rows[i].parse_error ? KS_ERROR : KS_SUCCESS,
                     rows[i].parse_error ? want : NULL, rows[i].id, ebs_with_id);
    }
    /* a %2F decodes to a slash inside the id: a format error, not a parse error */
    g_ebs_id = "aws://a/vol-1%2Fx";
    expect_bound(NULL, "kubernetes.io/aws-ebs", KS_ERROR,
                 "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
                 "Invalid format for AWS volume (aws://a/vol-1%2Fx)",
                 "escaped slash", ebs_with_id);
}

/* upstream CheckNodeAffinity matches a node of labels only: a term's matchFields are skipped (a
 * PV pinned by metadata.name to another node still fits), unless they do not parse as a field
 * selector (found by the differential test against kube-scheduler v1.37.2). */
Test(volume_binding, a_pvs_match_fields_are_not_checked_but_must_parse)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    classes(c);
    node(c, "n1", NULL);
    pvc_bound(c, "pvc-f", "wait-sc", "pv-f");
    pv(c, "pv-f", "wait-sc", "Bound", "1Gi",
       ",'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchFields':[{'key':"
       "'metadata.name','operator':'In','values':['n2']}]}]}}");
    expect(p, c, POD("pvc-f"), "n1", KS_SUCCESS, NULL, KS_SUCCESS, NULL, "matchFields skipped");
    pvc_bound(c, "pvc-g", "wait-sc", "pv-g");
    pv(c, "pv-g", "wait-sc", "Bound", "1Gi",
       ",'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchFields':[{'key':"
       "'metadata.name','operator':'In','values':['n1','n2']}]}]}}");
    expect(p, c, POD("pvc-g"), "n1", KS_SUCCESS, NULL, UU, NODE_CONFLICT,
           "two values: not a field selector");
}

/* More unbound claims than pod_volumes holds inline: the same decisions from heap arrays. */
Test(volume_binding, many_unbound_claims_each_find_their_pv)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    binder_env(c);
    const char *claims[] = {"c1", "c2", "c3", "c4", "c5", "c6"};
    for (int i = 0; i < 6; i++) {
        char pvname[16];
        snprintf(pvname, sizeof(pvname), "pv-%d", i + 1);
        pvc(c, claims[i], "waitClass", "1G");
        pv_on(c, pvname, "waitClass", "1G", "nodeKey", "node1");
    }
    expect(p, c, POD("c1", "c2", "c3", "c4", "c5", "c6"), "node1", KS_SUCCESS, NULL, KS_SUCCESS,
           NULL, "six claims, six PVs");
    cr_assert_eq(
        th_reserve(p, c, POD("c1", "c2", "c3", "c4", "c5", "c6"), "node1", 0, msg, sizeof(msg)),
        KS_SUCCESS, "%s", msg);
    /* every PV is assumed now: a seventh claim finds none */
    pvc(c, "c7", "waitClass", "1G");
    expect(p, c, POD("c7"), "node1", KS_SUCCESS, NULL, UU, BIND_CONFLICT, "all six taken");
}

/* upstream checkBindings: "skip if API object is older and wait for new API object propagated
 * from apiserver": a bound claim does not end the wait while the store's PV is older than the
 * version PreBind's write returned. */
static int complete_then_deliver(th_cluster *c, int n, void *arg)
{
    *(int *)arg = n;
    if (n == 1) /* the PV controller's answer is there, the PV's own update not yet */
        cr_assert_eq(th_cluster_patch(c, "PersistentVolumeClaim", "default", "pvc-a",
                                      "{'metadata':{'annotations':{'pv.kubernetes.io/"
                                      "bind-completed':'yes'}},'spec':{'volumeName':'pv-a'}}"),
                     0);
    if (n == 3)
        th_cluster_deliver(c, "PersistentVolume", NULL, "pv-a");
    return 0;
}

Test(volume_binding, prebind_waits_until_the_store_has_its_write)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_binding, NULL);
    char msg[512];
    int ticks = 0;
    prebind_env(c);
    th_cluster_lag(c, 1);
    th_cluster_binding(c, 0, complete_then_deliver, &ticks);
    cr_assert_eq(th_pre_bind(p, c, pod_named("p", "pvc-a"), "node-a", NULL, msg, sizeof(msg)),
                 KS_SUCCESS, "%s", msg);
    /* three polls: the claim was bound at the first, the PV caught up at the third */
    cr_expect_eq(ticks, 3, "done after %d polls", ticks);
}
