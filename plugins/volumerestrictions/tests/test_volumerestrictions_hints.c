/* VolumeRestrictions' events and hints: upstream v1.37 volume_restrictions_test.go
 * (Test_isSchedulableAfterAssignedPodDeleted, Test_isSchedulableAfterPersistentVolumeClaimChange),
 * case by case. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_volume_restrictions;

TestSuite(volume_restrictions_hints, .init = th_init, .fini = ht_fini);

static int seq;

/* A pod in ns with the volumes (JSON list items) on node. */
static ks_pod *pod(const char *ns, const char *node, const char *volumes)
{
    char json[1024];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'%s','uid':'u%d'},'spec':{'nodeName':'%s',"
             "'containers':[{'name':'c'}],'volumes':[%s]}}",
             seq, ns, seq, node, volumes);
    return th_pod(json);
}

#define GCE_1 "{'name':'v','gcePersistentDisk':{'pdName':'foo'}}"
#define GCE_2 "{'name':'v','gcePersistentDisk':{'pdName':'bar'}}"
#define AWS_1 "{'name':'v','awsElasticBlockStore':{'volumeID':'foo'}}"
#define AWS_2 "{'name':'v','awsElasticBlockStore':{'volumeID':'bar'}}"
#define RBD_1 "{'name':'v','rbd':{'monitors':['a','b'],'pool':'foo','image':'bar'}}"
#define RBD_2 "{'name':'v','rbd':{'monitors':['c','d'],'pool':'foo','image':'bar'}}"
#define ISCSI_1                                                                                    \
    "{'name':'v','iscsi':{'targetPortal':'127.0.0.1:3260','iqn':'iqn.2016-12.server:storage."      \
    "target01','lun':0}}"
#define ISCSI_2                                                                                    \
    "{'name':'v','iscsi':{'targetPortal':'127.0.0.1:3260','iqn':'iqn.2017-12.server:storage."      \
    "target01','lun':0}}"
#define PVC(n) "{'name':'" n "','persistentVolumeClaim':{'claimName':'" n "'}}"

Test(volume_restrictions_hints, registers_upstreams_events)
{
    ht_plugin(&ks_plugin_volume_restrictions, NULL);
    cr_assert_eq(HT.n, 3);
    ht_expect_event(0, KS_RES_ASSIGNED_POD, KS_ACT_DELETE, 1);
    ht_expect_event(1, KS_RES_NODE, KS_ACT_ADD, 0);
    ht_expect_event(2, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, 1);
    cr_expect_not(ht_registered(KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY));
    cr_expect_not(ht_registered(KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL),
                  "spec.volumes is immutable: no pod update");
}

Test(volume_restrictions_hints, assigned_pod_deleted)
{
    ht_plugin(&ks_plugin_volume_restrictions, NULL);
    static const struct {
        const char *name, *mine, *deleted;
        ks_queueing_hint want;
    } cases[] = {
        {"queue-new-object-gcedisk-conflict", GCE_1, GCE_1, KS_QUEUE},
        {"skip-new-object-gcedisk-no-conflict", GCE_1, GCE_2, KS_QUEUE_SKIP},
        {"queue-new-object-awsdisk-conflict", AWS_1, AWS_1, KS_QUEUE},
        {"skip-new-object-awsdisk-no-conflict", AWS_1, AWS_2, KS_QUEUE_SKIP},
        {"queue-new-object-rbddisk-conflict", RBD_1, RBD_1, KS_QUEUE},
        {"skip-new-object-rbddisk-no-conflict", RBD_1, RBD_2, KS_QUEUE_SKIP},
        {"queue-new-object-iscsidisk-conflict", ISCSI_1, ISCSI_1, KS_QUEUE},
        {"skip-new-object-iscsidisk-no-conflict", ISCSI_1, ISCSI_2, KS_QUEUE_SKIP},
        {"queue-has-same-claim", PVC("claim-rwop"), PVC("claim-rwop"), KS_QUEUE},
        {"skip-no-same-claim", PVC("claim-1-rwop"), PVC("claim-2-rwop"), KS_QUEUE_SKIP},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(ht_pod(pod("default", "", cases[i].mine), KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
                            pod("default", "n1", cases[i].deleted), NULL),
                     cases[i].want, "%s", cases[i].name);
    /* kubesched's: a pod of another namespace never helps */
    cr_expect_eq(ht_pod(pod("default", "", GCE_1), KS_RES_ASSIGNED_POD, KS_ACT_DELETE,
                        pod("other", "n1", GCE_1), NULL),
                 KS_QUEUE_SKIP);
}

Test(volume_restrictions_hints, persistent_volume_claim_added)
{
    ht_plugin(&ks_plugin_volume_restrictions, NULL);
    const void *pvc1 = ht_volobj("{'kind':'PersistentVolumeClaim','metadata':{'namespace':"
                                 "'default','name':'claim-with-rwx-1'},'spec':{'accessModes':"
                                 "['ReadWriteMany']}}");
    const void *pvc2 = ht_volobj("{'kind':'PersistentVolumeClaim','metadata':{'namespace':"
                                 "'default','name':'claim-with-rwx-2'},'spec':{'accessModes':"
                                 "['ReadWriteMany']}}");
    ks_pod *one = pod("default", "node-1", PVC("claim-with-rwx-1"));
    ks_pod *two = pod("default", "node-1", PVC("claim-with-rwx-1") "," PVC("claim-with-rwx-2"));
    ks_pod *other_ns = pod("kube-system", "claim-with-rwx-2", PVC("claim-with-rwx-1"));
    cr_expect_eq(ht_obj(two, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc1), KS_QUEUE,
                 "queue-new-object-pvc-belong-pod");
    cr_expect_eq(ht_obj(one, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc2), KS_QUEUE_SKIP,
                 "skip-new-object-unused");
    cr_expect_eq(ht_obj(one, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc2), KS_QUEUE_SKIP,
                 "skip-nil-old-object");
    cr_expect_eq(ht_obj(one, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc2), KS_QUEUE_SKIP,
                 "skip-new-object-not-belong-pod");
    cr_expect_eq(ht_obj(other_ns, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc1),
                 KS_QUEUE_SKIP, "skip-new-object-namespace-not-equal-pod");
}
