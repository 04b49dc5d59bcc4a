/* NodeVolumeLimits' events and hints: upstream v1.37 csi_test.go (TestCSILimitsQHint,
 * TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint,
 * TestCSILimitsAfterCSINodeUpdatedQHint), case by case, and the registrations of EventsToRegister.
 * Upstream's "unexpected objects" errors have no counterpart: the host hands typed objects. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_node_volume_limits;

TestSuite(node_volume_limits_hints, .init = th_init, .fini = ht_fini);

Test(node_volume_limits_hints, registers_upstreams_events)
{
    ht_plugin(&ks_plugin_node_volume_limits, NULL);
    cr_assert_eq(HT.n, 5);
    ht_expect_event(0, KS_RES_CSI_NODE, KS_ACT_ADD, 0);
    ht_expect_event(1, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, 1);
    ht_expect_event(2, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, 1);
    ht_expect_event(3, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, 1);
    ht_expect_event(4, KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE, 1);
    cr_expect_not(ht_registered(KS_RES_CSI_DRIVER, KS_ACT_ALL_ANY), "no CSIDriver event in v1.37");
    cr_expect_not(ht_registered(KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY));
}

static ks_pod *pod_json(const char *ns, const char *name, const char *node, const char *volumes)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'%s','uid':'u-%s'},'spec':{'nodeName':'%s',"
             "'containers':[{'name':'c'}],'volumes':[%s]}}",
             name, ns, name, node, volumes);
    return th_pod(json);
}

/* TestCSILimitsQHint: the deleted pod ran on the node unless deletedPodNotScheduled. */
Test(node_volume_limits_hints, assigned_pod_deleted)
{
    ht_plugin(&ks_plugin_node_volume_limits, NULL);
    ks_pod *pod =
        pod_json("default", "p", "",
                 "{'name':'v','persistentVolumeClaim':{'claimName':'csi-ebs.csi.aws.com-2'}}");
    const char *node = "node-for-max-pd-test-1";
    cr_expect_eq(
        ht_pod(pod, KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
               pod_json("default", "d", node,
                        "{'name':'v','persistentVolumeClaim':{'claimName':'placeholder'}}"),
               NULL),
        KS_QUEUE, "return a Queue when a deleted pod has a PVC");
    cr_expect_eq(ht_pod(pod, KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
                        pod_json("default", "d", node, "{'name':'v','awsElasticBlockStore':{}}"),
                        NULL),
                 KS_QUEUE, "return a Queue when a deleted pod has a inline migratable volume");
    cr_expect_eq(
        ht_pod(pod, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, pod_json("default", "d", node, ""), NULL),
        KS_QUEUE_SKIP, "return a QueueSkip when a deleted pod doesn't have any volume");
    cr_expect_eq(
        ht_pod(
            pod, KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
            pod_json("default", "d", "",
                     "{'name':'v','persistentVolumeClaim':{'claimName':'csi-ebs.csi.aws.com-0'}}"),
            NULL),
        KS_QUEUE_SKIP, "return a QueueSkip when a deleted pod is not scheduled.");
    /* kubesched's own: a nominated pod counts as placed; an emptyDir is not counted */
    ks_pod *nominated = th_pod("{'metadata':{'name':'d','namespace':'default'},'spec':{"
                               "'containers':[{'name':'c'}],'volumes':[{'name':'v',"
                               "'ephemeral':{'volumeClaimTemplate':{'spec':{}}}}]},"
                               "'status':{'nominatedNodeName':'n1'}}");
    cr_expect_eq(ht_pod(pod, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, nominated, NULL), KS_QUEUE);
    cr_expect_eq(ht_pod(pod, KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
                        pod_json("default", "d", node, "{'name':'v','emptyDir':{}}"), NULL),
                 KS_QUEUE_SKIP);
}

static const void *pvc(const char *name, const char *ns)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'PersistentVolumeClaim','metadata':{'name':'%s','namespace':'%s'}}", name,
             ns);
    return ht_volobj(json);
}

/* TestCSILimitsAddedPVCQHint */
Test(node_volume_limits_hints, pvc_added)
{
    ht_plugin(&ks_plugin_node_volume_limits, NULL);
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", ""), KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD,
                        NULL, pvc("pvc-other", "ns2")),
                 KS_QUEUE_SKIP, "a pod isn't in the same namespace as an added PVC");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "",
                                 "{'name':'v','persistentVolumeClaim':{'claimName':'pvc1'}}"),
                        KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc("pvc1", "ns1")),
                 KS_QUEUE, "a pod is in the same namespace as an added PVC");
    cr_expect_eq(
        ht_obj(pod_json("ns1", "pod1", "",
                        "{'name':'ephemeral','ephemeral':{'volumeClaimTemplate':{'spec':{}}"
                        "}}"),
               KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc("pod1-ephemeral", "ns1")),
        KS_QUEUE, "a pod has an ephemeral volume related to an added PVC");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "",
                                 "{'name':'v','persistentVolumeClaim':{'claimName':'pvc1'}}"),
                        KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc("pvc2", "ns1")),
                 KS_QUEUE_SKIP, "a pod doesn't have the same PVC as an added PVC");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", ""), KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD,
                        NULL, pvc("pvc2", "ns1")),
                 KS_QUEUE_SKIP, "a pod doesn't have any PVC attached");
}

static const void *va(const char *attacher, const char *source)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'VolumeAttachment','metadata':{'name':'volumeattachment1'},'spec':{"
             "'nodeName':'fake-node','attacher':'%s','source':{%s}}}",
             attacher, source);
    return ht_volobj(json);
}

#define INLINE_EBS_SOURCE "'inlineVolumeSpec':{'csi':{'driver':'ebs.csi.aws.com'}}"
#define PVC_VOL "{'name':'p','persistentVolumeClaim':{'claimName':'pvc1'}}"
#define EBS_VOL "{'name':'e','awsElasticBlockStore':{'volumeID':'test'}}"

/* TestCSILimitsDeletedVolumeAttachmentQHint */
Test(node_volume_limits_hints, volume_attachment_deleted)
{
    ht_plugin(&ks_plugin_node_volume_limits, NULL);
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", PVC_VOL), KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE,
                        va("test.storage.gke.io", "'persistentVolumeName':'pv1'"), NULL),
                 KS_QUEUE, "a pod has PVC when VolumeAttachment is deleting");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", EBS_VOL), KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE,
                        va("ebs.csi.aws.com", INLINE_EBS_SOURCE), NULL),
                 KS_QUEUE,
                 "a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment "
                 "(AWSEBSDriver) is deleting (match)");
    cr_expect_eq(
        ht_obj(pod_json("ns1", "p", "", "{'name':'g','gcePersistentDisk':{'pdName':'test'}}"),
               KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE, va("ebs.csi.aws.com", INLINE_EBS_SOURCE),
               NULL),
        KS_QUEUE_SKIP,
        "a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment "
        "(AWSEBSDriver) is deleting (no match)");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", EBS_VOL "," PVC_VOL), KS_RES_VOLUME_ATTACHMENT,
                        KS_ACT_DELETE, va("ebs.csi.aws.com", INLINE_EBS_SOURCE), NULL),
                 KS_QUEUE,
                 "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when "
                 "VolumeAttachment (AWSEBSDriver) is deleting");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", EBS_VOL "," PVC_VOL), KS_RES_VOLUME_ATTACHMENT,
                        KS_ACT_DELETE, va("test.storage.gke.io", "'persistentVolumeName':'pv1'"),
                        NULL),
                 KS_QUEUE,
                 "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when "
                 "VolumeAttachment (AWSEBSDriver)  is deleting");
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "", ""), KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE,
                        va("test.storage.gke.io", "'persistentVolumeName':'pv1'"), NULL),
                 KS_QUEUE_SKIP, "a pod has no PVC when VolumeAttachment is deleting");
    /* kubesched's own: an ephemeral volume does not queue (upstream checks persistentVolumeClaim
     * only); an in-line EBS id the translation refuses queues (upstream's hint error) */
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "",
                                 "{'name':'e','ephemeral':{'volumeClaimTemplate':{'spec':{}}}}"),
                        KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE,
                        va("test.storage.gke.io", "'persistentVolumeName':'pv1'"), NULL),
                 KS_QUEUE_SKIP);
    cr_expect_eq(ht_obj(pod_json("ns1", "p", "",
                                 "{'name':'e','awsElasticBlockStore':{'volumeID':'aws://z/bad'}}"),
                        KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE,
                        va("test.storage.gke.io", "'persistentVolumeName':'pv1'"), NULL),
                 KS_QUEUE);
}

static const void *csi_node(const char *drivers)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'kind':'CSINode','metadata':{'name':'test-node'},'spec':{'drivers':[%s]}}", drivers);
    return ht_volobj(json);
}

#define EBS_COUNT(n)                                                                               \
    "{'name':'ebs.csi.aws.com','nodeID':'test-node','allocatable':{'count':" #n "}}"

/* TestCSILimitsAfterCSINodeUpdatedQHint */
Test(node_volume_limits_hints, csi_node_updated)
{
    ht_plugin(&ks_plugin_node_volume_limits, NULL);
    ks_pod *pod =
        pod_json("ns1", "test-pod", "",
                 "{'name':'v','persistentVolumeClaim':{'claimName':'csi-ebs.csi.aws.com-0'}}");
    cr_expect_eq(ht_obj(pod, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node(EBS_COUNT(1)),
                        csi_node(EBS_COUNT(2))),
                 KS_QUEUE, "limit raised, queue");
    cr_expect_eq(ht_obj(pod, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node(EBS_COUNT(2)),
                        csi_node(EBS_COUNT(1))),
                 KS_QUEUE_SKIP, "limit decreased, skip queueing");
    cr_expect_eq(ht_obj(pod, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node(EBS_COUNT(1)),
                        csi_node(EBS_COUNT(1))),
                 KS_QUEUE_SKIP, "limit unchanged, skip queueing");
    /* kubesched's own: a new driver with a count queues (no old entry reads as 0); a count that
     * goes away does not; a CSINode added always queues (no hint) */
    cr_expect_eq(
        ht_obj(pod, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node(""), csi_node(EBS_COUNT(1))),
        KS_QUEUE);
    cr_expect_eq(ht_obj(pod, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node(EBS_COUNT(3)),
                        csi_node("{'name':'ebs.csi.aws.com','nodeID':'test-node'}")),
                 KS_QUEUE_SKIP);
    cr_expect_eq(ht_obj(pod, KS_RES_CSI_NODE, KS_ACT_ADD, NULL, csi_node(EBS_COUNT(1))), KS_QUEUE);
}
