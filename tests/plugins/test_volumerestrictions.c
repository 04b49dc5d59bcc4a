/*
 * VolumeRestrictions: upstream volumerestrictions/volume_restrictions_test.go (v1.37)
 * TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts and
 * TestAccessModeConflicts, case by case (PreFilter, then Filter when PreFilter succeeded, as
 * upstream's loop), plus the read-only rules of isVolumeConflict and AddPod / RemovePod, which
 * upstream's table does not reach.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_volume_restrictions;

TestSuite(volume_restrictions, .init = th_init, .fini = th_fini);

#define DISK "node(s) had no available disk"
#define RWOP                                                                                       \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "  \
    "in-use by another pod"

static int seq;

/* A pod in namespace default with the given volumes (JSON of the list's items), on node (""
 * for a pending pod). */
static ks_pod *pod(const char *node, const char *volumes)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'u%d'},'spec':{'nodeName':"
             "'%s','containers':[{'name':'c'}],'volumes':[%s]}}",
             seq, seq, node, volumes);
    return th_pod(json);
}

static char node_name[32];

/* A new cluster with one node (node-1) holding pods with these volumes (NULL-terminated). */
static th_cluster *cluster(const char *const *existing)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'node-1'}}");
    snprintf(node_name, sizeof(node_name), "node-1");
    for (size_t i = 0; existing && existing[i]; i++) {
        char json[2048];
        seq++;
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'e%d','namespace':'default','uid':'e%d'},'spec':{"
                 "'nodeName':'node-1','containers':[{'name':'c'}],'volumes':[%s]}}",
                 seq, seq, existing[i]);
        th_cluster_add_pod(c, json);
    }
    return c;
}

typedef struct row {
    const char *name;
    const char *pod_volumes;
    const char *existing[3]; /* the node's pods' volumes */
    ks_code pre;
    const char *pre_msg;
    ks_code filter;
    const char *filter_msg;
} row;

static void run(const row *rows, size_t n, void (*objects)(th_cluster *))
{
    th_plugin *p = th_plugin_new(&ks_plugin_volume_restrictions, NULL);
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        th_cluster *c = cluster(r->existing);
        if (objects)
            objects(c);
        char pre_msg[512], msg[512];
        ks_code pre;
        ks_code got = th_filter_steps(p, c, pod("", r->pod_volumes), node_name, NULL, &pre, pre_msg,
                                      sizeof(pre_msg), msg, sizeof(msg));
        cr_expect_eq(pre, r->pre, "%s: PreFilter code %d, want %d (%s)", r->name, pre, r->pre,
                     pre_msg);
        cr_expect_str_eq(pre_msg, r->pre_msg ? r->pre_msg : "", "%s", r->name);
        cr_expect_eq(got, r->filter, "%s: Filter code %d, want %d (%s)", r->name, got, r->filter,
                     msg);
        cr_expect_str_eq(msg, r->filter_msg ? r->filter_msg : "", "%s", r->name);
    }
}

#define GCE_FOO "{'name':'v','gcePersistentDisk':{'pdName':'foo'}}"
#define GCE_BAR "{'name':'v','gcePersistentDisk':{'pdName':'bar'}}"
#define NO_RESTRICTION "{'name':'volume with no restriction','emptyDir':{}}"

Test(volume_restrictions, gce_disk_conflicts)
{
    static const row rows[] = {
        {"nothing", "", {NULL}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"one state", "", {GCE_FOO}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"same state", GCE_FOO, {GCE_FOO}, KS_SUCCESS, NULL, KS_UNSCHEDULABLE, DISK},
        {"different state", GCE_BAR, {GCE_FOO}, KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"pod with a volume that doesn't have restrictions",
         NO_RESTRICTION,
         {NULL},
         KS_SKIP,
         NULL,
         KS_SUCCESS,
         NULL},
        /* kubesched's: both read-only share the disk; one read-write does not */
        {"both read-only",
         "{'name':'v','gcePersistentDisk':{'pdName':'foo','readOnly':true}}",
         {"{'name':'v','gcePersistentDisk':{'pdName':'foo','readOnly':true}}"},
         KS_SUCCESS,
         NULL,
         KS_SUCCESS,
         NULL},
        {"one read-only",
         "{'name':'v','gcePersistentDisk':{'pdName':'foo','readOnly':true}}",
         {GCE_FOO},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         DISK},
    };
    run(rows, sizeof(rows) / sizeof(rows[0]), NULL);
}

#define AWS_FOO "{'name':'v','awsElasticBlockStore':{'volumeID':'foo'}}"
#define AWS_BAR "{'name':'v','awsElasticBlockStore':{'volumeID':'bar'}}"

Test(volume_restrictions, aws_disk_conflicts)
{
    static const row rows[] = {
        {"nothing", "", {NULL}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"one state", "", {AWS_FOO}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"same state", AWS_FOO, {AWS_FOO}, KS_SUCCESS, NULL, KS_UNSCHEDULABLE, DISK},
        {"different state", AWS_BAR, {AWS_FOO}, KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        /* EBS: read-only does not matter */
        {"both read-only",
         "{'name':'v','awsElasticBlockStore':{'volumeID':'foo','readOnly':true}}",
         {"{'name':'v','awsElasticBlockStore':{'volumeID':'foo','readOnly':true}}"},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         DISK},
    };
    run(rows, sizeof(rows) / sizeof(rows[0]), NULL);
}

#define RBD_1 "{'name':'v','rbd':{'monitors':['a','b'],'pool':'foo','image':'bar','fsType':'ext4'}}"
#define RBD_2 "{'name':'v','rbd':{'monitors':['c','d'],'pool':'foo','image':'bar','fsType':'ext4'}}"

Test(volume_restrictions, rbd_disk_conflicts)
{
    static const row rows[] = {
        {"nothing", "", {NULL}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"one state", "", {RBD_1}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"same state", RBD_1, {RBD_1}, KS_SUCCESS, NULL, KS_UNSCHEDULABLE, DISK},
        {"different state", RBD_2, {RBD_1}, KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        /* kubesched's: one shared monitor is enough; pool defaulted to "rbd" on both sides */
        {"overlapping monitors",
         "{'name':'v','rbd':{'monitors':['b','z'],'pool':'foo','image':"
         "'bar'}}",
         {RBD_1},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         DISK},
        {"default pool",
         "{'name':'v','rbd':{'monitors':['a'],'image':'bar'}}",
         {"{'name':'v','rbd':{'monitors':['a'],'pool':'rbd','image':'bar'}}"},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         DISK},
        {"both read-only",
         "{'name':'v','rbd':{'monitors':['a'],'image':'bar','readOnly':true}}",
         {"{'name':'v','rbd':{'monitors':['a'],'image':'bar','readOnly':true}}"},
         KS_SUCCESS,
         NULL,
         KS_SUCCESS,
         NULL},
    };
    run(rows, sizeof(rows) / sizeof(rows[0]), NULL);
}

#define ISCSI_1                                                                                    \
    "{'name':'v','iscsi':{'targetPortal':'127.0.0.1:3260','iqn':'iqn.2016-12.server:storage."      \
    "target01','fsType':'ext4','lun':0}}"
#define ISCSI_2                                                                                    \
    "{'name':'v','iscsi':{'targetPortal':'127.0.0.1:3260','iqn':'iqn.2017-12.server:storage."      \
    "target01','fsType':'ext4','lun':0}}"

Test(volume_restrictions, iscsi_disk_conflicts)
{
    static const row rows[] = {
        {"nothing", "", {NULL}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"one state", "", {ISCSI_1}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"same state", ISCSI_1, {ISCSI_1}, KS_SUCCESS, NULL, KS_UNSCHEDULABLE, DISK},
        {"different state", ISCSI_2, {ISCSI_1}, KS_SUCCESS, NULL, KS_SUCCESS, NULL},
        {"both read-only",
         "{'name':'v','iscsi':{'targetPortal':'t','iqn':'iqn.x','lun':0,'readOnly':true}}",
         {"{'name':'v','iscsi':{'targetPortal':'u','iqn':'iqn.x','lun':1,'readOnly':true}}"},
         KS_SUCCESS,
         NULL,
         KS_SUCCESS,
         NULL},
        {"one read-write",
         "{'name':'v','iscsi':{'targetPortal':'t','iqn':'iqn.x','lun':0}}",
         {"{'name':'v','iscsi':{'targetPortal':'u','iqn':'iqn.x','lun':1,'readOnly':true}}"},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         DISK},
    };
    run(rows, sizeof(rows) / sizeof(rows[0]), NULL);
}

#define PVC(name) "{'name':'" name "','persistentVolumeClaim':{'claimName':'" name "'}}"

static void claims(th_cluster *c)
{
    static const char *const defs[][2] = {{"claim-with-rwop-1", "ReadWriteOncePod"},
                                          {"claim-with-rwop-2", "ReadWriteOncePod"},
                                          {"claim-with-rwx", "ReadWriteMany"}};
    for (size_t i = 0; i < 3; i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'namespace':"
                 "'default','name':'%s'},'spec':{'accessModes':['%s']}}",
                 defs[i][0], defs[i][1]);
        th_cluster_add_object(c, json);
    }
}

Test(volume_restrictions, access_mode_conflicts)
{
    static const row with_claims[] = {
        {"nothing", "", {NULL}, KS_SKIP, NULL, KS_SUCCESS, NULL},
        {"no access mode conflict",
         PVC("claim-with-rwop-1"),
         {PVC("claim-with-rwx")},
         KS_SKIP,
         NULL,
         KS_SUCCESS,
         NULL},
        {"access mode conflict, unschedulable",
         PVC("claim-with-rwop-1"),
         {PVC("claim-with-rwop-1"), PVC("claim-with-rwx")},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         RWOP},
        {"two conflicts, unschedulable",
         PVC("claim-with-rwop-1") "," PVC("claim-with-rwop-2"),
         {PVC("claim-with-rwop-1") "," PVC("claim-with-rwop-2"), PVC("claim-with-rwx")},
         KS_SUCCESS,
         NULL,
         KS_UNSCHEDULABLE,
         RWOP},
    };
    run(with_claims, sizeof(with_claims) / sizeof(with_claims[0]), claims);
    static const row without[] = {
        {"failed to get PVC",
         PVC("claim-with-rwop-1"),
         {NULL},
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "persistentvolumeclaim \"claim-with-rwop-1\" not found",
         KS_SUCCESS,
         NULL},
    };
    run(without, 1, NULL);
}

/* The claim in use on another node counts too: the check is cluster-wide (the snapshot). */
Test(volume_restrictions, read_write_once_pod_across_nodes)
{
    th_plugin *p = th_plugin_new(&ks_plugin_volume_restrictions, NULL);
    th_cluster *c = cluster(NULL);
    claims(c);
    th_cluster_add_node(c, "{'metadata':{'name':'node-2'}}");
    th_cluster_add_pod(c, "{'metadata':{'name':'holder','namespace':'default','uid':'h'},'spec':{"
                          "'nodeName':'node-2','containers':[{'name':'c'}],'volumes':[" PVC(
                              "claim-with-rwop-1") "]}}");
    char pre_msg[512], msg[512];
    ks_code pre;
    ks_code got = th_filter_steps(p, c, pod("", PVC("claim-with-rwop-1")), "node-1", NULL, &pre,
                                  pre_msg, sizeof(pre_msg), msg, sizeof(msg));
    cr_expect_eq(pre, KS_SUCCESS, "%s", pre_msg);
    cr_expect_eq(got, KS_UNSCHEDULABLE);
    cr_expect_str_eq(msg, RWOP);
    /* A pod of another namespace with a claim of that name does not use it. */
    th_cluster *c2 = cluster(NULL);
    claims(c2);
    th_cluster_add_pod(c2, "{'metadata':{'name':'other','namespace':'other','uid':'o'},'spec':{"
                           "'nodeName':'node-1','containers':[{'name':'c'}],'volumes':[" PVC(
                               "claim-with-rwop-1") "]}}");
    got = th_filter_steps(p, c2, pod("", PVC("claim-with-rwop-1")), "node-1", NULL, &pre, pre_msg,
                          sizeof(pre_msg), msg, sizeof(msg));
    cr_expect_eq(pre, KS_SKIP, "%s", pre_msg);
}

/* AddPod / RemovePod: the count follows the pods the framework adds (a nominated pod) or removes
 * (a preemption victim). */
Test(volume_restrictions, add_and_remove_pod)
{
    th_plugin *p = th_plugin_new(&ks_plugin_volume_restrictions, NULL);
    th_cluster *c = cluster((const char *const[]){PVC("claim-with-rwop-1"), NULL});
    claims(c);
    ks_pod *victim = pod("node-1", PVC("claim-with-rwop-1"));
    ks_pod *incoming = pod("", PVC("claim-with-rwop-1") "," GCE_FOO);
    char pre_msg[512], msg[512];
    ks_code pre;
    th_steps rm = {.remove = victim};
    ks_code got = th_filter_steps(p, c, incoming, "node-1", &rm, &pre, pre_msg, sizeof(pre_msg),
                                  msg, sizeof(msg));
    cr_expect_eq(pre, KS_SUCCESS, "%s", pre_msg);
    cr_expect_eq(got, KS_SUCCESS, "the user removed: %s", msg);
    /* A pod with a GCE disk only (PreFilter runs for it) and a nominated pod with the claim. */
    th_cluster *c2 = cluster(NULL);
    claims(c2);
    th_steps add = {.add = victim};
    got = th_filter_steps(p, c2, incoming, "node-1", &add, &pre, pre_msg, sizeof(pre_msg), msg,
                          sizeof(msg));
    cr_expect_eq(pre, KS_SUCCESS, "%s", pre_msg);
    cr_expect_eq(got, KS_UNSCHEDULABLE, "the nominated pod uses it");
    cr_expect_str_eq(msg, RWOP);
}
