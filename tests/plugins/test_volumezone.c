/*
 * VolumeZone: upstream volumezone/volume_zone_test.go (v1.37) TestSingleZone, TestMultiZone and
 * TestWithBinding, case by case: the same PVs, claims, classes and nodes, PreFilter then Filter
 * (Filter also after a PreFilter Skip or failure, as upstream's test calls it, which exercises the
 * Filter's own fallback), the same codes and messages. Two differences, both upstream's real
 * behaviour: a class that is missing reads `storageclass.storage.k8s.io "Class_0" not found`
 * (the informer lister's words; upstream's unit test uses a fake lister that says
 * "storageclasses"), and a StorageClass without volumeBindingMode exists only as the API server
 * stored it (lenient reading), since a cluster file's gets the Immediate default.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_volume_zone;

TestSuite(volume_zone, .init = th_init, .fini = th_fini);

#define CONFLICT "node(s) had no available volume zone"
#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define ZONE "topology.kubernetes.io/zone"
#define REGION "topology.kubernetes.io/region"

static void pv(th_cluster *c, const char *name, const char *labels)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'%s','labels':{%s}}}",
             name, labels);
    th_cluster_add_object(c, json);
}

static void pvc(th_cluster *c, const char *name, const char *spec)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'%s',"
             "'namespace':'default'},'spec':{%s}}",
             name, spec);
    th_cluster_add_object(c, json);
}

/* createPodWithVolume(pod, pvc) */
static ks_pod *pod_with(const char *claim)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'pod_1','namespace':'default','uid':'u-%s'},'spec':{"
             "'containers':[{'name':'c'}],'volumes':[{'name':'v','persistentVolumeClaim':"
             "{'claimName':'%s'}}]}}",
             claim, claim);
    return th_pod(json);
}

typedef struct row {
    const char *name;
    const char *claim; /* NULL: the pod without volume */
    const char *node_labels;
    ks_code pre;
    const char *pre_msg;
    ks_code filter;
    const char *filter_msg;
} row;

static int node_seq;

static void run(th_cluster *c, th_plugin *p, const row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        char node[64], json[512], pre_msg[512], msg[512];
        snprintf(node, sizeof(node), "host%d", ++node_seq);
        snprintf(json, sizeof(json), "{'metadata':{'name':'%s','labels':{%s}}}", node,
                 r->node_labels);
        th_cluster_add_node(c, json);
        ks_pod *pod = r->claim ? pod_with(r->claim)
                               : th_pod("{'metadata':{'name':'pod_1','namespace':'default'},"
                                        "'spec':{'containers':[{'name':'c'}]}}");
        th_steps o = {.filter_always = 1};
        ks_code pre;
        ks_code got =
            th_filter_steps(p, c, pod, node, &o, &pre, pre_msg, sizeof(pre_msg), msg, sizeof(msg));
        cr_expect_eq(pre, r->pre, "%s: PreFilter code %d, want %d (%s)", r->name, pre, r->pre,
                     pre_msg);
        cr_expect_str_eq(pre_msg, r->pre_msg ? r->pre_msg : "", "%s: PreFilter message", r->name);
        cr_expect_eq(got, r->filter, "%s: Filter code %d, want %d (%s)", r->name, got, r->filter,
                     msg);
        cr_expect_str_eq(msg, r->filter_msg ? r->filter_msg : "", "%s: Filter message", r->name);
    }
}

static void single_zone_listers(th_cluster *c)
{
    pv(c, "Vol_1", "'" BETA_ZONE "':'us-west1-a'");
    pv(c, "Vol_2", "'" BETA_REGION "':'us-west1','uselessLabel':'none'");
    pv(c, "Vol_3", "'" BETA_REGION "':'us-west1'");
    pv(c, "Vol_Stable_1", "'" ZONE "':'us-west1-a'");
    pv(c, "Vol_Stable_2", "'" REGION "':'us-west1','uselessLabel':'none'");
    pv(c, "Vol_Stable_3", "'" ZONE "':'us-west1-a','" REGION "':'us-west1-a'");
    pvc(c, "PVC_1", "'volumeName':'Vol_1'");
    pvc(c, "PVC_2", "'volumeName':'Vol_2'");
    pvc(c, "PVC_3", "'volumeName':'Vol_3'");
    pvc(c, "PVC_4", "'volumeName':'Vol_not_exist'");
    pvc(c, "PVC_Stable_1", "'volumeName':'Vol_Stable_1'");
    pvc(c, "PVC_Stable_2", "'volumeName':'Vol_Stable_2'");
    pvc(c, "PVC_Stable_3", "'volumeName':'Vol_Stable_3'");
}

Test(volume_zone, single_zone)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_zone, NULL);
    single_zone_listers(c);
    static const row rows[] = {
        {"pod without volume", NULL, "'" BETA_ZONE "':'us-west1-a'", KS_SKIP, NULL, KS_SUCCESS,
         NULL},
        {"node without labels", "PVC_1", "", KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"beta zone label matched", "PVC_1", "'" BETA_ZONE "':'us-west1-a','uselessLabel':'none'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"beta region label matched", "PVC_2", "'" BETA_REGION "':'us-west1','uselessLabel':'none'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"beta region label doesn't match", "PVC_2",
         "'" BETA_REGION "':'no_us-west1','uselessLabel':'none'", KS_SUCCESS, NULL,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"beta zone label doesn't match", "PVC_1",
         "'" BETA_ZONE "':'no_us-west1-a','uselessLabel':'none'", KS_SUCCESS, NULL,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"zone label matched", "PVC_Stable_1", "'" ZONE "':'us-west1-a','uselessLabel':'none'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"region label matched", "PVC_Stable_2", "'" REGION "':'us-west1','uselessLabel':'none'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"region label doesn't match", "PVC_Stable_2",
         "'" REGION "':'no_us-west1','uselessLabel':'none'", KS_SUCCESS, NULL,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"zone label doesn't match", "PVC_Stable_1",
         "'" ZONE "':'no_us-west1-a','uselessLabel':'none'", KS_SUCCESS, NULL,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"pv with zone and region, node with only zone", "PVC_Stable_3", "'" ZONE "':'us-west1-a'",
         KS_SUCCESS, NULL, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"pv with zone,node with beta zone", "PVC_Stable_1", "'" BETA_ZONE "':'us-west1-a'",
         KS_SUCCESS, NULL, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"pv with beta label,node with ga label, matched", "PVC_1", "'" ZONE "':'us-west1-a'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"pv with beta label,node with ga label, don't match", "PVC_1", "'" ZONE "':'us-west1-b'",
         KS_SUCCESS, NULL, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        /* kubesched's: upstream's listers declare PVC_4 but its table has no row for it. */
        {"bound to a PV that does not exist", "PVC_4", "'" ZONE "':'us-west1-a'",
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolume \"Vol_not_exist\" not found",
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolume \"Vol_not_exist\" not found"},
        {"a claim that does not exist", "PVC_none", "'" ZONE "':'us-west1-a'",
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"PVC_none\" not found",
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolumeclaim \"PVC_none\" not found"},
    };
    run(c, p, rows, sizeof(rows) / sizeof(rows[0]));
}

Test(volume_zone, multi_zone)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_zone, NULL);
    pv(c, "Vol_1", "'" BETA_ZONE "':'us-west1-a'");
    pv(c, "Vol_2", "'" BETA_ZONE "':'us-west1-b','uselessLabel':'none'");
    pv(c, "Vol_3", "'" BETA_ZONE "':'us-west1-c__us-west1-a'");
    pv(c, "Vol_Stable_1", "'" ZONE "':'us-west1-a'");
    pv(c, "Vol_Stable_2", "'" ZONE "':'us-west1-c__us-west1-a'");
    pvc(c, "PVC_1", "'volumeName':'Vol_1'");
    pvc(c, "PVC_2", "'volumeName':'Vol_2'");
    pvc(c, "PVC_3", "'volumeName':'Vol_3'");
    pvc(c, "PVC_4", "'volumeName':'Vol_not_exist'");
    pvc(c, "PVC_Stable_1", "'volumeName':'Vol_Stable_1'");
    pvc(c, "PVC_Stable_2", "'volumeName':'Vol_Stable_2'");
    static const row rows[] = {
        {"node without labels", "PVC_3", "", KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"beta zone label matched", "PVC_3", "'" BETA_ZONE "':'us-west1-a','uselessLabel':'none'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"beta zone label doesn't match", "PVC_1",
         "'" BETA_ZONE "':'us-west1-b','uselessLabel':'none'", KS_SUCCESS, NULL,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
        {"zone label matched", "PVC_Stable_2", "'" ZONE "':'us-west1-a','uselessLabel':'none'",
         KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"zone label doesn't match", "PVC_Stable_1",
         "'" ZONE "':'us-west1-b','uselessLabel':'none'", KS_SUCCESS, NULL,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE, CONFLICT},
    };
    run(c, p, rows, sizeof(rows) / sizeof(rows[0]));
}

Test(volume_zone, with_binding)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_zone, NULL);
    /* Class_Immediate has no volumeBindingMode (upstream's table: a nil mode). */
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass',"
                             "'metadata':{'name':'Class_Immediate'},'provisioner':'p'}");
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass',"
                             "'metadata':{'name':'Class_Wait'},'provisioner':'p',"
                             "'volumeBindingMode':'WaitForFirstConsumer'}");
    pv(c, "Vol_1", "'" BETA_ZONE "':'us-west1-a'");
    pvc(c, "PVC_1", "'volumeName':'Vol_1'");
    pvc(c, "PVC_NoSC", "'storageClassName':'Class_0'");
    pvc(c, "PVC_EmptySC", "");
    pvc(c, "PVC_WaitSC", "'storageClassName':'Class_Wait'");
    pvc(c, "PVC_ImmediateSC", "'storageClassName':'Class_Immediate'");
    const char *node = "'" BETA_ZONE "':'us-west1-a','uselessLabel':'none'";
    const row rows[] = {
        {"label zone failure domain matched", "PVC_1", node, KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"unbound volume empty storage class", "PVC_EmptySC", node,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolumeClaim had no pv name and storageClass name",
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolumeClaim had no pv name and storageClass name"},
        {"unbound volume no storage class", "PVC_NoSC", node, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "storageclass.storage.k8s.io \"Class_0\" not found", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "storageclass.storage.k8s.io \"Class_0\" not found"},
        {"unbound volume immediate binding mode", "PVC_ImmediateSC", node,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "VolumeBindingMode not set for StorageClass \"Class_Immediate\"",
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "VolumeBindingMode not set for StorageClass \"Class_Immediate\""},
        {"unbound volume wait binding mode", "PVC_WaitSC", node, KS_SKIP, NULL, KS_SUCCESS, NULL},
    };
    run(c, p, rows, sizeof(rows) / sizeof(rows[0]));
}

/* An Immediate class (set): an unbound claim is upstream's "PersistentVolume had no name". */
Test(volume_zone, unbound_claim_of_an_immediate_class)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_zone, NULL);
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass',"
                             "'metadata':{'name':'fast'},'provisioner':'p',"
                             "'volumeBindingMode':'Immediate'}");
    pvc(c, "data", "'storageClassName':'fast'");
    /* The beta annotation names the class before spec.storageClassName (upstream
     * GetPersistentVolumeClaimClass). */
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                             "'name':'annotated','namespace':'default','annotations':{"
                             "'volume.beta.kubernetes.io/storage-class':'missing'}},"
                             "'spec':{'storageClassName':'fast'}}");
    const row rows[] = {
        {"immediate", "data", "'" ZONE "':'a'", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolume had no name", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolume had no name"},
        {"beta annotation", "annotated", "'" ZONE "':'a'", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "storageclass.storage.k8s.io \"missing\" not found", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "storageclass.storage.k8s.io \"missing\" not found"},
    };
    run(c, p, rows, sizeof(rows) / sizeof(rows[0]));
}

/* Zones of a multi-zone label are trimmed; a label with an empty zone is ignored (upstream
 * LabelZonesToSet fails and getPVTopologies skips it). */
Test(volume_zone, label_zones_to_set)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_zone, NULL);
    pv(c, "spaced", "'" ZONE "':' a __ b '");
    pv(c, "broken", "'" ZONE "':'a____b'");
    pvc(c, "spaced", "'volumeName':'spaced'");
    pvc(c, "broken", "'volumeName':'broken'");
    const row rows[] = {
        {"trimmed zone b", "spaced", "'" ZONE "':'b'", KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"zone c", "spaced", "'" ZONE "':'c'", KS_SUCCESS, NULL, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         CONFLICT},
        {"ignored label", "broken", "'" ZONE "':'c'", KS_SKIP, NULL, KS_SUCCESS, NULL},
    };
    run(c, p, rows, sizeof(rows) / sizeof(rows[0]));
}

/* A claim with an empty name (only an API server's object can have one): upstream's message. */
Test(volume_zone, claim_without_a_name)
{
    th_cluster *c = th_cluster_new();
    th_plugin *p = th_plugin_new(&ks_plugin_volume_zone, NULL);
    const row rows[] = {
        {"no name", "", "'" ZONE "':'a'", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolumeClaim had no name", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "PersistentVolumeClaim had no name"},
    };
    run(c, p, rows, sizeof(rows) / sizeof(rows[0]));
}
