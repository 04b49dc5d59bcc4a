/*
 * NodeVolumeLimits: upstream nodevolumelimits/csi_test.go (v1.37) TestCSILimits and
 * TestVolumeLimitScalingGate, case by case: the same pods, claims, PersistentVolumes, StorageClass,
 * CSINode and VolumeAttachments (getFakeCSIPVLister, getFakeCSIPVCLister,
 * getNodeWithPodAndVolumeLimits, buildFakeClientWithVALister), PreFilter then Filter, the same
 * codes and messages. Two differences, both upstream's real behaviour: a missing claim reads
 * `persistentvolumeclaim "abc-xyz" not found` (the informer lister's words; upstream's unit test
 * uses a fake lister that says "persistentvolumeclaims"), and the gate-disabled case of
 * TestVolumeLimitScalingGate has no counterpart (VolumeLimitScaling is beta and on in v1.37;
 * kubesched does not gate it). Upstream's pods have no namespace; here they live in "default"
 * with their claims. A few cases of kubesched's own follow the table (translation of in-tree PVs
 * and in-line sources, a VolumeAttachment already counted through a pod, the last entry of a
 * driver listed twice).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_volume_limits;

TestSuite(node_volume_limits, .init = th_init, .fini = th_fini);

#define EXCEEDED "node(s) exceed max volume count"
#define NODE "node-for-max-pd-test-1"
#define EBS "ebs.csi.aws.com"
#define GCE "pd.csi.storage.gke.io"
#define AWS_IN_TREE "kubernetes.io/aws-ebs"
#define HOSTPATH "kubernetes.io/hostpath"

#define PVC_VOL(claim) "{'name':'" claim "','persistentVolumeClaim':{'claimName':'" claim "'}}"
#define EPH_VOL(name) "{'name':'" name "','ephemeral':{'volumeClaimTemplate':{'spec':{}}}}"
#define CM_SECRET "{'name':'cm','configMap':{'name':'x'}},{'name':'s','secret':{'secretName':'x'}}"

/* The pods of the table: name, namespace, uid, spec.volumes. */
typedef struct pod_t {
    const char *name, *ns, *uid, *volumes;
} pod_t;

enum {
    RUNNING,                     /* PVC csi-ebs.csi.aws.com-3 */
    PENDING_VOLUME,              /* PVC csi-4 (unbound, class csi-sc) */
    UNBOUND_PVC_POD2,            /* the same unbound claim */
    MISSING_PV,                  /* PVC csi-6 (PV missing, class csi-sc) */
    NO_SC_PVC,                   /* PVC csi-5 (unbound, no class) */
    GCE_TWO_VOL,                 /* two GCE PD CSI claims */
    IN_TREE_ONE_VOL,             /* a claim of an in-tree AWS EBS PV */
    IN_TREE_TWO_VOL,             /* two of them */
    CSI_EBS_ONE_VOL,             /* PVC csi-ebs.csi.aws.com-0 */
    CSI_EBS_TWO_VOL,             /* PVCs csi-ebs.csi.aws.com-1, -2 */
    IN_TREE_NON_MIGRATABLE,      /* a claim of a hostPath PV */
    EPHEMERAL,                   /* test/abc, uid 12345, ephemeral volume xyz */
    EPHEMERAL_TWO,               /* test/abc, uid 12345II, ephemeral volumes x and y */
    IN_TREE_INLINE,              /* in-line awsElasticBlockStore aws-inline1 */
    IN_TREE_INLINE_SAME_ID,      /* in-line awsElasticBlockStore csi-ebs.csi.aws.com-1 */
    ONLY_CM_SECRET,              /* configMap and secret only */
    PVC_CM_SECRET,               /* configMap, secret and PVC csi-ebs.csi.aws.com-0 */
    EPHEMERAL_CM_SECRET,         /* test/abc: configMap, secret and ephemeral xyz */
    INLINE_MIGRATABLE_CM_SECRET, /* configMap, secret and in-line AWS EBS aws-inline1 */
    NPODS
};

static const pod_t k_pods[NPODS] = {
    [RUNNING] = {"running", "default", "u-running", PVC_VOL("csi-ebs.csi.aws.com-3")},
    [PENDING_VOLUME] = {"pending", "default", "u-pending", PVC_VOL("csi-4")},
    [UNBOUND_PVC_POD2] = {"unbound2", "default", "u-unbound2", PVC_VOL("csi-4")},
    [MISSING_PV] = {"missing-pv", "default", "u-missing-pv", PVC_VOL("csi-6")},
    [NO_SC_PVC] = {"no-sc", "default", "u-no-sc", PVC_VOL("csi-5")},
    [GCE_TWO_VOL] = {"gce-two", "default", "u-gce-two",
                     PVC_VOL("csi-pd.csi.storage.gke.io-1") "," PVC_VOL(
                         "csi-pd.csi.storage.gke.io-2")},
    [IN_TREE_ONE_VOL] = {"in-tree-one", "default", "u-in-tree-one",
                         PVC_VOL("csi-kubernetes.io/aws-ebs-0")},
    [IN_TREE_TWO_VOL] = {"in-tree-two", "default", "u-in-tree-two",
                         PVC_VOL("csi-kubernetes.io/aws-ebs-1") "," PVC_VOL(
                             "csi-kubernetes.io/aws-ebs-2")},
    [CSI_EBS_ONE_VOL] = {"ebs-one", "default", "u-ebs-one", PVC_VOL("csi-ebs.csi.aws.com-0")},
    [CSI_EBS_TWO_VOL] = {"ebs-two", "default", "u-ebs-two",
                         PVC_VOL("csi-ebs.csi.aws.com-1") "," PVC_VOL("csi-ebs.csi.aws.com-2")},
    [IN_TREE_NON_MIGRATABLE] = {"hostpath-one", "default", "u-hostpath-one",
                                PVC_VOL("csi-kubernetes.io/hostpath-0")},
    [EPHEMERAL] = {"abc", "test", "12345", EPH_VOL("xyz")},
    [EPHEMERAL_TWO] = {"abc", "test", "12345II", EPH_VOL("x") "," EPH_VOL("y")},
    [IN_TREE_INLINE] = {"inline", "default", "u-inline",
                        "{'name':'a','awsElasticBlockStore':{'volumeID':'aws-inline1'}}"},
    [IN_TREE_INLINE_SAME_ID] = {"inline-same", "default", "u-inline-same",
                                "{'name':'a','awsElasticBlockStore':{'volumeID':"
                                "'csi-ebs.csi.aws.com-1'}}"},
    [ONLY_CM_SECRET] = {"cm-secret", "default", "u-cm-secret", CM_SECRET},
    [PVC_CM_SECRET] = {"pvc-cm-secret", "default", "u-pvc-cm-secret",
                       CM_SECRET "," PVC_VOL("csi-ebs.csi.aws.com-0")},
    [EPHEMERAL_CM_SECRET] = {"abc", "test", "", CM_SECRET "," EPH_VOL("xyz")},
    [INLINE_MIGRATABLE_CM_SECRET] = {"inline-cm-secret", "default", "u-inline-cm-secret",
                                     CM_SECRET ",{'name':'a','awsElasticBlockStore':{'volumeID':"
                                               "'aws-inline1'}}"},
};

/* The extra claims: the ephemeral ones, owned by their pod, and one owned by nobody. */
enum { EXTRA_EPHEMERAL = 1, EXTRA_CONFLICTING = 2, EXTRA_X_Y = 4 };

static void claim(th_cluster *c, const char *ns, const char *name, const char *owner_uid,
                  const char *spec)
{
    char json[1024], owner[256] = "";
    if (owner_uid)
        snprintf(owner, sizeof(owner),
                 ",'ownerReferences':[{'apiVersion':'v1','kind':'Pod','name':'abc','uid':'%s',"
                 "'controller':true}]",
                 owner_uid);
    snprintf(json, sizeof(json),
             "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'%s',"
             "'namespace':'%s'%s},'spec':{%s}}",
             name, ns, owner, spec);
    th_cluster_add_object(c, json);
}

/* getFakeCSIPVLister and getFakeCSIPVCLister("csi", "csi-sc", drivers...) */
static void listers(th_cluster *c, const char *const *drivers)
{
    char name[256], json[1024], spec[512];
    for (size_t d = 0; drivers[d]; d++) {
        for (int j = 0; j < 4; j++) {
            snprintf(name, sizeof(name), "csi-%s-%d", drivers[d], j);
            if (!strcmp(drivers[d], AWS_IN_TREE))
                snprintf(spec, sizeof(spec), "'awsElasticBlockStore':{'volumeID':'%s'}", name);
            else if (!strcmp(drivers[d], HOSTPATH))
                snprintf(spec, sizeof(spec), "'hostPath':{'path':'/tmp'}");
            else
                snprintf(spec, sizeof(spec), "'csi':{'driver':'%s','volumeHandle':'%s'}",
                         drivers[d], name);
            snprintf(json, sizeof(json),
                     "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'%s'},"
                     "'spec':{%s}}",
                     name, spec);
            th_cluster_add_object(c, json);
            snprintf(spec, sizeof(spec), "'volumeName':'%s'", name);
            claim(c, "default", name, NULL, spec);
        }
    }
    claim(c, "default", "csi-4", NULL, "'storageClassName':'csi-sc'");
    claim(c, "default", "csi-5", NULL, "");
    claim(c, "default", "csi-6", NULL,
          "'storageClassName':'csi-sc','volumeName':'missing-in-action'");
    /* getFakeCSIStorageClassLister(scName, driverNames[0]) */
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':"
             "'csi-sc'},'provisioner':'%s'}",
             drivers[0]);
    th_cluster_add_object(c, json);
}

/* getNodeWithPodAndVolumeLimits: "csinode" (each driver with the limit), "csinode-with-no-limit",
 * "no-csi-driver" (a CSINode without drivers) or "" (no CSINode). */
static void csi_node(th_cluster *c, const char *source, int limit, const char *const *drivers)
{
    if (!*source)
        return;
    char json[2048], ds[1536] = "";
    size_t off = 0;
    for (size_t d = 0; drivers[d] && strcmp(source, "no-csi-driver"); d++) {
        char count[64] = "";
        if (!strcmp(source, "csinode"))
            snprintf(count, sizeof(count), ",'allocatable':{'count':%d}", limit);
        off += (size_t)snprintf(ds + off, sizeof(ds) - off, "%s{'name':'%s','nodeID':'%s'%s}",
                                d ? "," : "", drivers[d], NODE, count);
    }
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{'name':'%s'},"
             "'spec':{'drivers':[%s]}}",
             NODE, ds);
    th_cluster_add_object(c, json);
}

/* buildFakeClientWithVALister(count, drivers...) */
static void volume_attachments(th_cluster *c, int count, const char *const *drivers)
{
    char json[1024];
    for (size_t d = 0; drivers[d]; d++)
        for (int j = 0; j < count; j++) {
            snprintf(json, sizeof(json),
                     "{'apiVersion':'storage.k8s.io/v1','kind':'VolumeAttachment','metadata':{"
                     "'name':'va-%s-%d'},'spec':{'nodeName':'%s','attacher':'%s','source':{"
                     "'persistentVolumeName':'csi-%s-%d'}}}",
                     drivers[d], j, NODE, drivers[d], drivers[d], j);
            th_cluster_add_object(c, json);
        }
}

static ks_pod *make_pod(int i, const char *node)
{
    const pod_t *p = &k_pods[i];
    char json[2048];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'%s','uid':'%s'},'spec':{%s%s%s"
             "'containers':[{'name':'c'}],'volumes':[%s]}}",
             p->name, p->ns, p->uid, node ? "'nodeName':'" : "", node ? node : "", node ? "'," : "",
             p->volumes);
    return th_pod(json);
}

/* A pod of the node (its name kept: an ephemeral claim's name is made of it). */
static void add_pod(th_cluster *c, int i)
{
    const pod_t *p = &k_pods[i];
    char json[2048];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'%s','uid':'%s'},'spec':{'nodeName':'%s',"
             "'containers':[{'name':'c'}],'volumes':[%s]}}",
             p->name, p->ns, p->uid, NODE, p->volumes);
    th_cluster_add_pod(c, json);
}

typedef struct row {
    const char *test;
    int new_pod;
    int existing[4]; /* -1 ends the list */
    int extra;       /* EXTRA_* */
    int max_vols;
    int va_count;
    const char *drivers[3];
    const char *limit_source;
    ks_code pre;
    ks_code want;
    const char *msg;
} row;

static const char *const k_lists_none[] = {NULL};

static void run_row(th_plugin *p, const row *r, const char *const *csi_drivers)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'" NODE "'}}");
    listers(c, r->drivers);
    csi_node(c, r->limit_source, r->max_vols, r->drivers);
    volume_attachments(c, r->va_count, r->drivers);
    if (r->extra & EXTRA_EPHEMERAL)
        claim(c, "test", "abc-xyz", "12345", "'storageClassName':'csi-sc'");
    if (r->extra & EXTRA_CONFLICTING)
        claim(c, "test", "abc-xyz", NULL, "'storageClassName':'csi-sc'");
    if (r->extra & EXTRA_X_Y) {
        claim(c, "test", "abc-x", "12345II", "'storageClassName':'csi-sc'");
        claim(c, "test", "abc-y", "12345II", "'storageClassName':'csi-sc'");
    }
    for (size_t i = 0; csi_drivers[i]; i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver','metadata':{'name':'%s'},"
                 "'spec':{'preventPodSchedulingIfMissing':%s}}",
                 csi_drivers[i] + 1, csi_drivers[i][0] == '+' ? "true" : "false");
        th_cluster_add_object(c, json);
    }
    for (int i = 0; i < 4 && r->existing[i] >= 0; i++)
        add_pod(c, r->existing[i]);
    char pre_msg[512], msg[512];
    ks_code pre;
    th_steps o = {0};
    ks_code got = th_filter_steps(p, c, make_pod(r->new_pod, NULL), NODE, &o, &pre, pre_msg,
                                  sizeof(pre_msg), msg, sizeof(msg));
    cr_expect_eq(pre, r->pre, "%s: PreFilter code %d, want %d (%s)", r->test, pre, r->pre, pre_msg);
    cr_expect_eq(got, r->want, "%s: Filter code %d, want %d (%s)", r->test, got, r->want, msg);
    cr_expect_str_eq(msg, r->msg ? r->msg : "", "%s: Filter message", r->test);
}

#define NONE                                                                                       \
    {                                                                                              \
        -1                                                                                         \
    }
#define U KS_UNSCHEDULABLE
#define OK KS_SUCCESS

Test(node_volume_limits, csi_limits)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    static const row rows[] = {
        {"should count VolumeAttachments towards volume limit when no pods exist",
         CSI_EBS_ONE_VOL,
         NONE,
         0,
         2,
         2,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"should schedule pod when VolumeAttachments count does not exceed limit",
         CSI_EBS_ONE_VOL,
         NONE,
         0,
         2,
         1,
         {EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"fits when node volume limit >= new pods CSI volume",
         CSI_EBS_ONE_VOL,
         {RUNNING, CSI_EBS_TWO_VOL, -1},
         0,
         4,
         0,
         {EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"doesn't when node volume limit <= pods CSI volume",
         CSI_EBS_ONE_VOL,
         {RUNNING, CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"should when driver does not support volume limits",
         CSI_EBS_ONE_VOL,
         {RUNNING, CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {EBS},
         "csinode-with-no-limit",
         OK,
         OK,
         NULL},
        {"count pending PVCs towards volume limit <= pods CSI volume",
         CSI_EBS_ONE_VOL,
         {PENDING_VOLUME, CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"count multiple pending pvcs towards volume limit >= pods CSI volume",
         CSI_EBS_ONE_VOL,
         {PENDING_VOLUME, UNBOUND_PVC_POD2, CSI_EBS_TWO_VOL, -1},
         0,
         4,
         0,
         {EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"should count PVCs with invalid PV name but valid SC",
         CSI_EBS_ONE_VOL,
         {MISSING_PV, CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"don't count pvcs with missing SC towards volume limit",
         CSI_EBS_ONE_VOL,
         {RUNNING, NO_SC_PVC, -1},
         0,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"count pvcs with the same type towards volume limit",
         CSI_EBS_ONE_VOL,
         {GCE_TWO_VOL, CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {EBS, GCE},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"don't count pvcs with different type towards volume limit",
         GCE_TWO_VOL,
         {CSI_EBS_TWO_VOL, RUNNING, -1},
         0,
         2,
         0,
         {EBS, GCE},
         "csinode",
         OK,
         OK,
         NULL},
        {"should count in-tree volumes if migration is enabled",
         IN_TREE_ONE_VOL,
         {IN_TREE_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"nil csi node",
         IN_TREE_INLINE,
         {IN_TREE_TWO_VOL, -1},
         0,
         0,
         0,
         {AWS_IN_TREE, EBS},
         "",
         OK,
         OK,
         NULL},
        {"should count unbound in-tree volumes if migration is enabled",
         PENDING_VOLUME,
         {IN_TREE_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"should not limit pod if volume used does not report limits",
         IN_TREE_ONE_VOL,
         {IN_TREE_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode-with-no-limit",
         OK,
         OK,
         NULL},
        {"should not count non-migratable in-tree volumes",
         IN_TREE_NON_MIGRATABLE,
         {CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {HOSTPATH, EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"should count in-tree inline volumes if migration is enabled",
         IN_TREE_INLINE,
         {IN_TREE_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"should count in-tree and csi volumes if migration is enabled (when scheduling in-tree "
         "volumes)",
         IN_TREE_ONE_VOL,
         {CSI_EBS_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"should count in-tree, inline and csi volumes if migration is enabled (when scheduling "
         "in-tree volumes)",
         IN_TREE_INLINE,
         {CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL, -1},
         0,
         3,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"should not count in-tree, inline and csi volumes if migration is enabled (when "
         "scheduling in-tree volumes)",
         IN_TREE_INLINE_SAME_ID,
         {CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL, -1},
         0,
         3,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"should count in-tree and csi volumes if migration is enabled (when scheduling csi "
         "volumes)",
         CSI_EBS_ONE_VOL,
         {IN_TREE_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"ephemeral volume missing",
         EPHEMERAL,
         NONE,
         0,
         0,
         0,
         {EBS},
         "csinode-with-no-limit",
         OK,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"},
        {"ephemeral volume not owned",
         EPHEMERAL,
         NONE,
         EXTRA_CONFLICTING,
         0,
         0,
         {EBS},
         "csinode-with-no-limit",
         OK,
         KS_ERROR,
         "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"},
        {"ephemeral volume unbound",
         EPHEMERAL,
         NONE,
         EXTRA_EPHEMERAL,
         0,
         0,
         {EBS},
         "csinode-with-no-limit",
         OK,
         OK,
         NULL},
        {"ephemeral doesn't when node volume limit <= pods CSI volume",
         EPHEMERAL,
         {RUNNING, CSI_EBS_TWO_VOL, -1},
         EXTRA_EPHEMERAL,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
         CSI_EBS_ONE_VOL,
         {RUNNING, EPHEMERAL_TWO, -1},
         EXTRA_X_Y,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
         "volume, ephemeral disabled",
         CSI_EBS_ONE_VOL,
         {RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL, -1},
         EXTRA_EPHEMERAL,
         3,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
         "volume",
         CSI_EBS_ONE_VOL,
         {RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL, -1},
         EXTRA_EPHEMERAL,
         3,
         0,
         {EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
        {"persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
         CSI_EBS_ONE_VOL,
         {RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL, -1},
         EXTRA_EPHEMERAL,
         5,
         0,
         {EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"skip Filter when the pod only uses secrets and configmaps",
         ONLY_CM_SECRET,
         NONE,
         0,
         2,
         0,
         {EBS},
         "csinode",
         KS_SKIP,
         OK,
         NULL},
        {"don't skip Filter when the pod has pvcs",
         PVC_CM_SECRET,
         NONE,
         0,
         2,
         0,
         {EBS},
         "csinode",
         OK,
         OK,
         NULL},
        {"don't skip Filter when the pod has ephemeral volumes",
         EPHEMERAL_CM_SECRET,
         NONE,
         0,
         0,
         0,
         {EBS},
         "csinode-with-no-limit",
         OK,
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
         "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"},
        {"don't skip Filter when the pod has inline migratable volumes",
         INLINE_MIGRATABLE_CM_SECRET,
         {IN_TREE_TWO_VOL, -1},
         0,
         2,
         0,
         {AWS_IN_TREE, EBS},
         "csinode",
         OK,
         U,
         EXCEEDED},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        run_row(p, &rows[i], k_lists_none);
}

/* TestVolumeLimitScalingGate (the gate on, as v1.37's default). CSIDriver entries: "+name" sets
 * preventPodSchedulingIfMissing, "-name" leaves it false. */
Test(node_volume_limits, volume_limit_scaling)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    static const char *const present[] = {"-" EBS, NULL};
    static const char *const prevent[] = {"+" EBS, NULL};
    static const row allow_unset = {
        "allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set",
        CSI_EBS_ONE_VOL,
        NONE,
        0,
        0,
        0,
        {EBS},
        "no-csi-driver",
        OK,
        OK,
        NULL};
    run_row(p, &allow_unset, present);
    static const row fail_missing = {
        "fail when driver not installed and PreventPodSchedulingIfMissing is true",
        CSI_EBS_ONE_VOL,
        NONE,
        0,
        0,
        0,
        {EBS},
        "no-csi-driver",
        OK,
        U,
        EBS " CSI driver is not installed on the node"};
    run_row(p, &fail_missing, prevent);
    static const row installed = {"driver installed within limit",
                                  CSI_EBS_ONE_VOL,
                                  NONE,
                                  0,
                                  2,
                                  0,
                                  {EBS},
                                  "csinode",
                                  OK,
                                  OK,
                                  NULL};
    run_row(p, &installed, prevent);
    static const row no_driver = {"allow scheduling when CSIDriver object missing",
                                  CSI_EBS_ONE_VOL,
                                  NONE,
                                  0,
                                  0,
                                  0,
                                  {EBS},
                                  "no-csi-driver",
                                  OK,
                                  OK,
                                  NULL};
    run_row(p, &no_driver, k_lists_none);
    /* kubesched's own: no CSINode at all is "not installed" too (upstream csiNode == nil) */
    static const row no_csi_node = {"no CSINode, PreventPodSchedulingIfMissing",
                                    CSI_EBS_ONE_VOL,
                                    NONE,
                                    0,
                                    0,
                                    0,
                                    {EBS},
                                    "",
                                    OK,
                                    U,
                                    EBS " CSI driver is not installed on the node"};
    run_row(p, &no_csi_node, prevent);
}

/* ---- kubesched's own cases ------------------------------------------------------------------ */

static const char *filter_one(th_plugin *p, th_cluster *c, const char *pod_json, ks_code *code)
{
    static char msg[512];
    char pre_msg[512];
    ks_code pre;
    th_steps o = {0};
    *code = th_filter_steps(p, c, th_pod(pod_json), NODE, &o, &pre, pre_msg, sizeof(pre_msg), msg,
                            sizeof(msg));
    return msg;
}

static void limit_node(th_cluster *c, const char *drivers_json)
{
    char json[1024];
    th_cluster_add_node(c, "{'metadata':{'name':'" NODE "'}}");
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{'name':'%s'},"
             "'spec':{'drivers':[%s]}}",
             NODE, drivers_json);
    th_cluster_add_object(c, json);
}

/* A GCE PD in-line volume and a bound in-tree GCE PD PV of the same disk without zone labels are
 * one volume (projects/UNSPECIFIED/zones/UNSPECIFIED/disks/<pd>); with a zone label they differ
 * (the PV's handle names the zone), as csi-translation-lib translates them. */
Test(node_volume_limits, gce_pd_translation)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    for (int zonal = 0; zonal < 2; zonal++) {
        th_cluster *c = th_cluster_new();
        limit_node(c, "{'name':'" GCE "','nodeID':'n','allocatable':{'count':1}}");
        char json[512];
        snprintf(json, sizeof(json),
                 "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pv-disk'%s},"
                 "'spec':{'gcePersistentDisk':{'pdName':'disk-1'}}}",
                 zonal ? ",'labels':{'topology.kubernetes.io/zone':'us-central1-a'}" : "");
        th_cluster_add_object(c, json);
        claim(c, "default", "data", NULL, "'volumeName':'pv-disk'");
        th_cluster_add_pod(c, "{'metadata':{'name':'old','namespace':'default','uid':'u1'},'spec':{"
                              "'nodeName':'" NODE "','containers':[{'name':'c'}],'volumes':["
                              "{'name':'d','persistentVolumeClaim':{'claimName':'data'}}]}}");
        ks_code code;
        const char *msg = filter_one(p, c,
                                     "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                                     "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                     "'gcePersistentDisk':{'pdName':'disk-1'}}]}}",
                                     &code);
        cr_expect_eq(code, zonal ? KS_UNSCHEDULABLE : KS_SUCCESS, "zonal=%d: %d (%s)", zonal, code,
                     msg);
    }
}

/* AWS EBS: "aws://<zone>/vol-..." and the bare id are one volume; a URL without a vol- id is
 * upstream's translation error, which fails Filter with an Error. */
Test(node_volume_limits, aws_ebs_translation)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    th_cluster *c = th_cluster_new();
    limit_node(c, "{'name':'" EBS "','nodeID':'n','allocatable':{'count':1}}");
    th_cluster_add_pod(c, "{'metadata':{'name':'old','namespace':'default','uid':'u1'},'spec':{"
                          "'nodeName':'" NODE "','containers':[{'name':'c'}],'volumes':["
                          "{'name':'d','awsElasticBlockStore':{'volumeID':'vol-0abc'}}]}}");
    ks_code code;
    const char *msg = filter_one(p, c,
                                 "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                                 "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                 "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/vol-0abc'"
                                 "}}]}}",
                                 &code);
    cr_expect_eq(code, KS_SUCCESS, "the same disk: %d (%s)", code, msg);
    msg = filter_one(p, c,
                     "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                     "'awsElasticBlockStore':{'volumeID':'vol-0def'}}]}}",
                     &code);
    cr_expect_eq(code, KS_UNSCHEDULABLE, "another disk: %d (%s)", code, msg);
    cr_expect_str_eq(msg, EXCEEDED);
    msg = filter_one(p, c,
                     "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                     "'awsElasticBlockStore':{'volumeID':'aws://us-east-1a/disk-9'}}]}}",
                     &code);
    cr_expect_eq(code, KS_ERROR, "%d (%s)", code, msg);
    cr_expect_str_eq(msg, "converting volume(d) from inline to csi: failed to translate "
                          "Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
                          "(aws://us-east-1a/disk-9)");
}

/* Azure Disk in-line: only managed disks migrate; vSphere and Azure File are never counted but
 * stop the PreFilter Skip; a Cinder disk counts for cinder.csi.openstack.org. */
Test(node_volume_limits, other_in_tree_sources)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    th_cluster *c = th_cluster_new();
    limit_node(c, "{'name':'disk.csi.azure.com','nodeID':'n','allocatable':{'count':0}},"
                  "{'name':'csi.vsphere.vmware.com','nodeID':'n','allocatable':{'count':0}},"
                  "{'name':'file.csi.azure.com','nodeID':'n','allocatable':{'count':0}},"
                  "{'name':'cinder.csi.openstack.org','nodeID':'n','allocatable':{'count':0}}");
    ks_code code;
    const char *msg = filter_one(p, c,
                                 "{'metadata':{'name':'a','namespace':'default'},'spec':{"
                                 "'containers':[{'name':'c'}],'volumes':[{'name':'d','azureDisk':"
                                 "{'diskName':'x','diskURI':'/sub/x','kind':'Dedicated'}}]}}",
                                 &code);
    cr_expect_eq(code, KS_ERROR, "%d (%s)", code, msg);
    cr_expect_str_eq(msg, "converting volume(d) from inline to csi: kind(Dedicated) is not "
                          "supported in csi migration");
    msg = filter_one(p, c,
                     "{'metadata':{'name':'a','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d','azureDisk':"
                     "{'diskName':'x','diskURI':'/sub/x','kind':'Managed'}}]}}",
                     &code);
    cr_expect_eq(code, KS_UNSCHEDULABLE, "managed azure disk: %d (%s)", code, msg);
    msg = filter_one(p, c,
                     "{'metadata':{'name':'a','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d','cinder':"
                     "{'volumeID':'c1'}}]}}",
                     &code);
    cr_expect_eq(code, KS_UNSCHEDULABLE, "cinder: %d (%s)", code, msg);
    ks_code pre;
    char pre_msg[256], fmsg[256];
    th_steps o = {0};
    code = th_filter_steps(p, c,
                           th_pod("{'metadata':{'name':'a','namespace':'default'},'spec':{"
                                  "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                  "'vsphereVolume':{'volumePath':'[ds] v.vmdk'}},{'name':'f',"
                                  "'azureFile':{'secretName':'s','shareName':'sh'}}]}}"),
                           NODE, &o, &pre, pre_msg, sizeof(pre_msg), fmsg, sizeof(fmsg));
    cr_expect_eq(pre, KS_SUCCESS, "vSphere / Azure File: no Skip");
    cr_expect_eq(code, KS_SUCCESS, "vSphere / Azure File are not counted: %d (%s)", code, fmsg);
    code = th_filter_steps(p, c,
                           th_pod("{'metadata':{'name':'a','namespace':'default'},'spec':{"
                                  "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                  "'csi':{'driver':'disk.csi.azure.com'}}]}}"),
                           NODE, &o, &pre, pre_msg, sizeof(pre_msg), fmsg, sizeof(fmsg));
    cr_expect_eq(pre, KS_SKIP, "an in-line CSI volume is not counted (upstream)");
}

/* A VolumeAttachment of a volume a pod of the node already uses counts once; one of an in-line
 * volume (no PV name), of a PV that is not CSI, or for another node does not count. A driver
 * listed twice in the CSINode: the last count holds (upstream's map). */
Test(node_volume_limits, attachments_and_duplicates)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    th_cluster *c = th_cluster_new();
    limit_node(c, "{'name':'" EBS "','nodeID':'n','allocatable':{'count':5}},"
                  "{'name':'" EBS "','nodeID':'n','allocatable':{'count':2}}");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':"
                             "'pv1'},'spec':{'csi':{'driver':'" EBS "','volumeHandle':'h1'}}}");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':"
                             "'pv2'},'spec':{'hostPath':{'path':'/x'}}}");
    claim(c, "default", "c1", NULL, "'volumeName':'pv1'");
    th_cluster_add_pod(c, "{'metadata':{'name':'old','namespace':'default','uid':'u1'},'spec':{"
                          "'nodeName':'" NODE "','containers':[{'name':'c'}],'volumes':["
                          "{'name':'d','persistentVolumeClaim':{'claimName':'c1'}}]}}");
    static const char *const vas[] = {
        "'nodeName':'" NODE "','attacher':'" EBS "','source':{'persistentVolumeName':'pv1'}",
        "'nodeName':'" NODE "','attacher':'" EBS "','source':{'persistentVolumeName':'pv2'}",
        "'nodeName':'" NODE "','attacher':'" EBS "','source':{'inlineVolumeSpec':{}}",
        "'nodeName':'other','attacher':'" EBS "','source':{'persistentVolumeName':'pv1'}",
    };
    for (size_t i = 0; i < sizeof(vas) / sizeof(vas[0]); i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{'apiVersion':'storage.k8s.io/v1','kind':'VolumeAttachment','metadata':{"
                 "'name':'va%zu'},'spec':{%s}}",
                 i, vas[i]);
        th_cluster_add_object(c, json);
    }
    ks_code code;
    const char *msg = filter_one(p, c,
                                 "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                                 "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                 "'awsElasticBlockStore':{'volumeID':'vol-1'}}]}}",
                                 &code);
    cr_expect_eq(code, KS_SUCCESS, "1 attached + 1 new <= 2: %d (%s)", code, msg);
    msg = filter_one(p, c,
                     "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                     "'awsElasticBlockStore':{'volumeID':'vol-1'}},{'name':'e',"
                     "'awsElasticBlockStore':{'volumeID':'vol-2'}}]}}",
                     &code);
    cr_expect_eq(code, KS_UNSCHEDULABLE, "1 attached + 2 new > 2: %d (%s)", code, msg);
    cr_expect_str_eq(msg, EXCEEDED);
    /* the new pod's volume is the one attached: it is not new */
    msg = filter_one(p, c,
                     "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                     "'persistentVolumeClaim':{'claimName':'c1'}},{'name':'e',"
                     "'awsElasticBlockStore':{'volumeID':'vol-2'}}]}}",
                     &code);
    cr_expect_eq(code, KS_SUCCESS, "shared volume counts once: %d (%s)", code, msg);
}

/* An unbound claim of a class without a provisioner names no driver: not counted (upstream
 * filterAttachableVolumes skips an empty driver name), even against a limit listed under "". */
Test(node_volume_limits, class_without_provisioner_is_not_counted)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    th_cluster *c = th_cluster_new();
    limit_node(c, "{'name':'','nodeID':'n','allocatable':{'count':0}},"
                  "{'name':'" EBS "','nodeID':'n','allocatable':{'count':0}}");
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':"
                             "{'name':'none'},'provisioner':''}");
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':"
                             "{'name':'ebs'},'provisioner':'" EBS "'}");
    claim(c, "default", "c-none", NULL, "'storageClassName':'none'");
    claim(c, "default", "c-ebs", NULL, "'storageClassName':'ebs'");
    ks_code code;
    const char *msg = filter_one(p, c,
                                 "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                                 "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                 "'persistentVolumeClaim':{'claimName':'c-none'}}]}}",
                                 &code);
    cr_expect_eq(code, KS_SUCCESS, "%d (%s)", code, msg);
    msg = filter_one(p, c,
                     "{'metadata':{'name':'new','namespace':'default'},'spec':{"
                     "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                     "'persistentVolumeClaim':{'claimName':'c-ebs'}}]}}",
                     &code);
    cr_expect_eq(code, KS_UNSCHEDULABLE, "the class's provisioner counts: %d (%s)", code, msg);
}
