/*
 * NodeVolumeLimits' short cuts, against upstream csi.go's Filter (v1.37): the pod's own volumes
 * resolved once at PreFilter (one set for a node with a CSINode, one for a node without), and the
 * bound (each pod volume and VolumeAttachment of the node adds one unique volume at most) that
 * lets Filter succeed without resolving the node's pods. Each case sits on the edge of the bound:
 * exactly at the limit (the bound decides), one over it where upstream's exact count still fits
 * (shared volumes, attachments already counted, volumes that are not counted), and over it for
 * real; and the errors upstream returns while counting a node's pods even when the node has room
 * (the bound must not hide them). Every case runs twice: with PreFilter's state, and with
 * PreFilter disabled (Filter then resolves the pod's volumes itself), as a profile may do.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_volume_limits;

TestSuite(node_volume_limits_bound, .init = th_init, .fini = th_fini);

#define NODE "node-1"
#define EBS "ebs.csi.aws.com"
#define GCE "pd.csi.storage.gke.io"
#define EXCEEDED "node(s) exceed max volume count"

/* A node whose CSINode lists drivers_json; PVs pv1..pv6 of EBS (handles h1..h6) bound to claims
 * c1..c6 in "default", pv-host (hostPath) bound to c-host, pv-gce (GCE PD CSI) bound to c-gce. */
static th_cluster *cluster(const char *drivers_json)
{
    th_cluster *c = th_cluster_new();
    char json[1024];
    th_cluster_add_node(c, "{'metadata':{'name':'" NODE "'}}");
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{'name':'" NODE "'},"
             "'spec':{'drivers':[%s]}}",
             drivers_json);
    th_cluster_add_object(c, json);
    for (int i = 1; i <= 6; i++) {
        snprintf(json, sizeof(json),
                 "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pv%d'},"
                 "'spec':{'csi':{'driver':'" EBS "','volumeHandle':'h%d'}}}",
                 i, i);
        th_cluster_add_object(c, json);
        snprintf(json, sizeof(json),
                 "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'c%d',"
                 "'namespace':'default'},'spec':{'volumeName':'pv%d'}}",
                 i, i);
        th_cluster_add_object(c, json);
    }
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':"
                             "'pv-host'},'spec':{'hostPath':{'path':'/x'}}}");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                             "'name':'c-host','namespace':'default'},'spec':{'volumeName':"
                             "'pv-host'}}");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':"
                             "'pv-gce'},'spec':{'csi':{'driver':'" GCE "','volumeHandle':'g'}}}");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                             "'name':'c-gce','namespace':'default'},'spec':{'volumeName':"
                             "'pv-gce'}}");
    return c;
}

static void ebs_limit(char *out, size_t len, int limit)
{
    snprintf(out, len, "{'name':'" EBS "','nodeID':'n','allocatable':{'count':%d}}", limit);
}

#define CLAIM(n) "{'name':'" n "','persistentVolumeClaim':{'claimName':'" n "'}}"

/* A pod of the node: name (uid "u-<name>"), spec.volumes. */
static void pod_on_node(th_cluster *c, const char *name, const char *volumes)
{
    char json[10240];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'u-%s'},'spec':{'nodeName':"
             "'" NODE "','containers':[{'name':'c'}],'volumes':[%s]}}",
             name, name, volumes);
    th_cluster_add_pod(c, json);
}

static void attachment(th_cluster *c, const char *name, const char *pv)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'apiVersion':'storage.k8s.io/v1','kind':'VolumeAttachment','metadata':{'name':"
             "'%s'},'spec':{'nodeName':'" NODE "','attacher':'" EBS "','source':{"
             "'persistentVolumeName':'%s'}}}",
             name, pv);
    th_cluster_add_object(c, json);
}

/* Filters the new pod (spec.volumes) on the node with PreFilter's state and without it (the
 * plugin with its PreFilter disabled); both must give want and msg. */
static void expect(th_cluster *c, const char *volumes, ks_code want, const char *msg,
                   const char *what)
{
    static ks_plugin_desc no_pre_filter;
    no_pre_filter = ks_plugin_node_volume_limits;
    no_pre_filter.pre_filter = NULL;
    const ks_plugin_desc *descs[2] = {&ks_plugin_node_volume_limits, &no_pre_filter};
    for (int k = 0; k < 2; k++) {
        th_plugin *p = th_plugin_new(descs[k], NULL);
        char json[10240], reasons[1024];
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'new','namespace':'default','uid':'u-new'},'spec':{"
                 "'containers':[{'name':'c'}],'volumes':[%s]}}",
                 volumes);
        ks_code got = th_filter(p, c, th_pod(json), NODE, reasons, sizeof(reasons));
        cr_expect_eq(got, want, "%s (%s): code %d, want %d (%s)", what,
                     k ? "no PreFilter" : "PreFilter", got, want, reasons);
        cr_expect_str_eq(reasons, msg ? msg : "", "%s (%s): message", what,
                         k ? "no PreFilter" : "PreFilter");
    }
}

/* Two pods' volumes and the new one make exactly the limit: fits. */
Test(node_volume_limits_bound, at_the_limit)
{
    char d[256];
    ebs_limit(d, sizeof(d), 3);
    th_cluster *c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    pod_on_node(c, "b", CLAIM("c2"));
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "2 attached + 1 new <= 3");
    expect(c, CLAIM("c3") "," CLAIM("c4"), KS_UNSCHEDULABLE, EXCEEDED, "2 attached + 2 new > 3");
}

/* One over the bound, but upstream's count is less: a claim used by two pods counts once, a
 * hostPath PV and a missing claim not at all, the new pod's volume used on the node already is
 * not new. */
Test(node_volume_limits_bound, exact_count_below_the_bound)
{
    char d[256];
    ebs_limit(d, sizeof(d), 2);
    th_cluster *c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    pod_on_node(c, "b", CLAIM("c1"));
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "a shared claim counts once");

    c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1") "," CLAIM("c-host") "," CLAIM("missing"));
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "hostPath PV and missing claim not counted");

    c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    pod_on_node(c, "b", CLAIM("c2"));
    expect(c, CLAIM("c2"), KS_SUCCESS, NULL, "the new volume is attached already");
    expect(c, CLAIM("c3"), KS_UNSCHEDULABLE, EXCEEDED, "2 attached + 1 new > 2");
}

/* A node over its limit already: a pod whose volumes are all on the node adds nothing and fits
 * (upstream checks only the drivers of volumes left new); one more volume does not fit. */
Test(node_volume_limits_bound, node_over_its_limit)
{
    char d[256];
    ebs_limit(d, sizeof(d), 1);
    th_cluster *c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    pod_on_node(c, "b", CLAIM("c2"));
    expect(c, CLAIM("c1"), KS_SUCCESS, NULL, "nothing new on an over-full node");
    expect(c, CLAIM("c1") "," CLAIM("c2"), KS_SUCCESS, NULL, "nothing new (two volumes)");
    expect(c, CLAIM("c1") "," CLAIM("c3"), KS_UNSCHEDULABLE, EXCEEDED, "one new on a full node");
}

/* VolumeAttachments push the bound over the limit: one of a volume a pod counts already, one of
 * a hostPath PV and one of a missing PV do not count; one of another volume does. */
Test(node_volume_limits_bound, attachments)
{
    char d[256];
    ebs_limit(d, sizeof(d), 3);
    th_cluster *c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    attachment(c, "va1", "pv1");
    attachment(c, "va2", "pv2");
    attachment(c, "va3", "pv-host");
    attachment(c, "va4", "pv-missing");
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "h1 + h2 attached + 1 new <= 3");
    expect(c, CLAIM("c3") "," CLAIM("c4"), KS_UNSCHEDULABLE, EXCEEDED, "2 attached + 2 new > 3");
    expect(c, CLAIM("c1") "," CLAIM("c4"), KS_SUCCESS, NULL, "a pod's volume is not new");
    /* upstream deletes only the pods' volumes from the new ones: one attached through a
     * VolumeAttachment alone counts twice */
    expect(c, CLAIM("c2") "," CLAIM("c4"), KS_UNSCHEDULABLE, EXCEEDED,
           "an attachment's volume is still new");
    attachment(c, "va5", "pv5");
    expect(c, CLAIM("c3"), KS_UNSCHEDULABLE, EXCEEDED, "3 attached + 1 new > 3 (va5 counts)");
}

/* The errors upstream returns while counting the node's pods, on a node with room to spare: a
 * claim without a name, an ephemeral claim that is not the pod's, an in-line volume that does not
 * translate. Also when the node's CSINode gives a count only for another driver than the new
 * pod's (upstream counts the node's pods as soon as any driver has a count). */
Test(node_volume_limits_bound, errors_of_the_nodes_pods)
{
    char d[256];
    ebs_limit(d, sizeof(d), 100);
    th_cluster *c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    pod_on_node(c, "b", "{'name':'x','persistentVolumeClaim':{'claimName':''}}");
    expect(c, CLAIM("c3"), KS_ERROR, "PersistentVolumeClaim had no name", "no claim name");
    expect(c, CLAIM("c-gce"), KS_ERROR, "PersistentVolumeClaim had no name",
           "no claim name, new driver without a count");

    c = cluster(d);
    pod_on_node(c, "a", "{'name':'eph','ephemeral':{'volumeClaimTemplate':{'spec':{}}}}");
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "ephemeral claim not created yet: not counted");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                             "'name':'a-eph','namespace':'default','ownerReferences':[{"
                             "'apiVersion':'v1','kind':'Pod','name':'other','uid':'u-other',"
                             "'controller':true}]},'spec':{'volumeName':'pv6'}}");
    expect(c, CLAIM("c3"), KS_ERROR,
           "PVC default/a-eph was not created for pod default/a (pod is not owner)",
           "ephemeral claim of another pod");

    c = cluster(d);
    pod_on_node(c, "a", "{'name':'eph','ephemeral':{'volumeClaimTemplate':{'spec':{}}}}");
    th_cluster_add_object(c, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                             "'name':'a-eph','namespace':'default','ownerReferences':[{"
                             "'apiVersion':'v1','kind':'Pod','name':'a','uid':'u-a',"
                             "'controller':true}]},'spec':{'volumeName':'pv6'}}");
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "the pod's own ephemeral claim");

    c = cluster(d);
    pod_on_node(c, "a", "{'name':'d','awsElasticBlockStore':{'volumeID':'aws://us-east-1a/'}}");
    expect(c, CLAIM("c3"), KS_ERROR,
           "converting volume(d) from inline to csi: failed to translate Kubernetes ID to EBS "
           "Volume ID Invalid format for AWS volume (aws://us-east-1a/)",
           "in-line volume that does not translate");
    c = cluster(d);
    pod_on_node(c, "a",
                "{'name':'d','awsElasticBlockStore':{'volumeID':'aws://us-east-1a/vol-1'}}");
    expect(c, CLAIM("c3"), KS_SUCCESS, NULL, "in-line volume that translates");
}

/* An ephemeral claim of another pod at exactly the limit and one over it: the error wins over
 * the count either way (upstream counts the pods before comparing). */
Test(node_volume_limits_bound, error_before_count)
{
    char d[256];
    ebs_limit(d, sizeof(d), 1);
    th_cluster *c = cluster(d);
    pod_on_node(c, "a", CLAIM("c1"));
    pod_on_node(c, "b", "{'name':'x','persistentVolumeClaim':{'claimName':''}}");
    expect(c, CLAIM("c3"), KS_ERROR, "PersistentVolumeClaim had no name", "error over the limit");
}

/* The pod's own volumes differ with the node's CSINode: an in-tree AWS EBS volume counts for
 * ebs.csi.aws.com only on a node that has one (migration on): the same pod on both. */
Test(node_volume_limits_bound, with_and_without_csi_node)
{
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'with'}}");
    th_cluster_add_node(c, "{'metadata':{'name':'without'}}");
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{"
                             "'name':'with'},'spec':{'drivers':[{'name':'" EBS "','nodeID':'n',"
                             "'allocatable':{'count':0}}]}}");
    th_plugin *p = th_plugin_new(&ks_plugin_node_volume_limits, NULL);
    ks_pod *pod = th_pod("{'metadata':{'name':'new','namespace':'default','uid':'u-new'},'spec':{"
                         "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                         "'awsElasticBlockStore':{'volumeID':'vol-1'}}]}}");
    char reasons[512];
    cr_expect_eq(th_filter(p, c, pod, "with", reasons, sizeof(reasons)), KS_UNSCHEDULABLE);
    cr_expect_str_eq(reasons, EXCEEDED);
    cr_expect_eq(th_filter(p, c, pod, "without", reasons, sizeof(reasons)), KS_SUCCESS, "%s",
                 reasons);
    /* without migration nothing is translated (no error) nor checked against the CSIDriver */
    ks_pod *bad = th_pod("{'metadata':{'name':'new','namespace':'default','uid':'u-new'},'spec':{"
                         "'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                         "'awsElasticBlockStore':{'volumeID':'aws://zone/'}}]}}");
    cr_expect_eq(th_filter(p, c, bad, "without", reasons, sizeof(reasons)), KS_SUCCESS, "%s",
                 reasons);
    cr_expect_eq(th_filter(p, c, bad, "with", reasons, sizeof(reasons)), KS_ERROR);
    cr_expect_str_eq(reasons, "converting volume(d) from inline to csi: failed to translate "
                              "Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
                              "(aws://zone/)");
    th_cluster_add_object(c, "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver','metadata':{"
                             "'name':'" EBS "'},'spec':{'preventPodSchedulingIfMissing':true}}");
    cr_expect_eq(th_filter(p, c, pod, "without", reasons, sizeof(reasons)), KS_SUCCESS, "%s",
                 reasons);
}

/* A node with more unique volumes than Filter keeps on its stack (64 names, 4 KiB of them) and a
 * pod with more than PreFilter keeps (16, 1 KiB): the names move to the heap and still compare.
 * 80 claims m0..m79 of PVs with 100-byte handles; the pod of the node mounts m0..m69 and m0
 * again, the new pod m60..m79 (10 of them new). */
Test(node_volume_limits_bound, many_volumes)
{
    char d[256], json[1024], vols[8192], handle[128];
    for (int limit = 79; limit <= 80; limit++) {
        ebs_limit(d, sizeof(d), limit);
        th_cluster *c = cluster(d);
        for (int i = 0; i < 80; i++) {
            snprintf(handle, sizeof(handle), "%098d", i);
            snprintf(json, sizeof(json),
                     "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pm%d'},"
                     "'spec':{'csi':{'driver':'" EBS "','volumeHandle':'%s'}}}",
                     i, handle);
            th_cluster_add_object(c, json);
            snprintf(json, sizeof(json),
                     "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'m%d',"
                     "'namespace':'default'},'spec':{'volumeName':'pm%d'}}",
                     i, i);
            th_cluster_add_object(c, json);
        }
        size_t off = 0;
        for (int i = 0; i <= 70; i++)
            off += (size_t)snprintf(vols + off, sizeof(vols) - off,
                                    "%s{'name':'v%d','persistentVolumeClaim':{'claimName':'m%d'}}",
                                    i ? "," : "", i, i % 70);
        pod_on_node(c, "a", vols);
        off = 0;
        for (int i = 60; i < 80; i++)
            off += (size_t)snprintf(vols + off, sizeof(vols) - off,
                                    "%s{'name':'v%d','persistentVolumeClaim':{'claimName':'m%d'}}",
                                    i > 60 ? "," : "", i, i);
        if (limit == 80)
            expect(c, vols, KS_SUCCESS, NULL, "70 attached + 10 new <= 80");
        else
            expect(c, vols, KS_UNSCHEDULABLE, EXCEEDED, "70 attached + 10 new > 79");
    }
}
