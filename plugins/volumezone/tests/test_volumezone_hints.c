/* VolumeZone's events and hints: upstream v1.37 volume_zone_test.go
 * (TestIsSchedulableAfterPersistentVolumeClaimAdded, TestIsSchedulableAfterStorageClassAdded,
 * TestIsSchedulableAfterPersistentVolumeChange), case by case. The "error-wrong-*-object" cases
 * have no counterpart: the host hands typed objects. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_volume_zone;

TestSuite(volume_zone_hints, .init = th_init, .fini = ht_fini);

#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"

static ks_pod *pod_with(const char *ns, const char *claim)
{
    char json[512];
    snprintf(
        json, sizeof(json),
        "{'metadata':{'name':'pod_1','namespace':'%s'},'spec':{'containers':[{'name':'c'}]%s%s%s}}",
        ns, claim ? ",'volumes':[{'name':'v','persistentVolumeClaim':{'claimName':'" : "",
        claim ? claim : "", claim ? "'}}]" : "");
    return th_pod(json);
}

static const void *pvc(const char *name, const char *ns, const char *volume)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'PersistentVolumeClaim','metadata':{'name':'%s','namespace':'%s'},"
             "'spec':{'volumeName':'%s'}}",
             name, ns, volume);
    return ht_volobj(json);
}

static const void *pv(const char *labels)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'PersistentVolume','metadata':{'name':'Vol_1','labels':{%s}}}", labels);
    return ht_volobj(json);
}

Test(volume_zone_hints, registers_upstreams_events)
{
    ht_plugin(&ks_plugin_volume_zone, NULL);
    cr_assert_eq(HT.n, 4);
    ht_expect_event(0, KS_RES_STORAGE_CLASS, KS_ACT_ADD, 1);
    ht_expect_event(1, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL, 0);
    ht_expect_event(2, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    ht_expect_event(3, KS_RES_PERSISTENT_VOLUME, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    cr_expect_not(ht_registered(KS_RES_STORAGE_CLASS, KS_ACT_UPDATE_ANY),
                  "volumeBindingMode is immutable: no StorageClass update");
    cr_expect_not(ht_registered(KS_RES_NODE, KS_ACT_UPDATE_NODE_TAINT));
}

Test(volume_zone_hints, persistent_volume_claim_added_or_updated)
{
    ht_plugin(&ks_plugin_volume_zone, NULL);
    cr_expect_eq(ht_obj(pod_with("default", NULL), KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL,
                        pvc("PVC_1", "default", "Vol_1")),
                 KS_QUEUE_SKIP, "pvc-was-added-but-pod-refers-no-pvc");
    cr_expect_eq(ht_obj(pod_with("default", "PVC_2"), KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD,
                        NULL, pvc("PVC_1", "default", "Vol_1")),
                 KS_QUEUE_SKIP, "pvc-was-added-and-pod-was-bound-to-different-pvc");
    cr_expect_eq(ht_obj(pod_with("default", "PVC_1"), KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD,
                        NULL, pvc("PVC_1", "ns1", "Vol_1")),
                 KS_QUEUE_SKIP, "pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns");
    cr_expect_eq(ht_obj(pod_with("default", "PVC_1"), KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD,
                        NULL, pvc("PVC_1", "default", "Vol_1")),
                 KS_QUEUE, "pvc-was-added-and-pod-was-bound-to-the-pvc");
    cr_expect_eq(ht_obj(pod_with("default", "PVC_1"), KS_RES_PERSISTENT_VOLUME_CLAIM,
                        KS_ACT_UPDATE_ANY, pvc("PVC_1", "default", ""),
                        pvc("PVC_1", "default", "Vol_1")),
                 KS_QUEUE, "pvc-was-updated-and-pod-was-bound-to-the-pvc");
    cr_expect_eq(ht_obj(pod_with("default", NULL), KS_RES_PERSISTENT_VOLUME_CLAIM,
                        KS_ACT_UPDATE_ANY, pvc("PVC_1", "default", ""),
                        pvc("PVC_1", "default", "Vol_1")),
                 KS_QUEUE_SKIP, "pvc-was-updated-but-pod-refers-no-pvc");
}

Test(volume_zone_hints, storage_class_added)
{
    ht_plugin(&ks_plugin_volume_zone, NULL);
    ks_pod *p = pod_with("default", "PVC_1");
    cr_expect_eq(ht_obj(p, KS_RES_STORAGE_CLASS, KS_ACT_ADD, NULL,
                        ht_volobj("{'kind':'StorageClass','metadata':{'name':'SC_1'}}")),
                 KS_QUEUE_SKIP, "sc-doesn't-have-volume-binding-mode");
    cr_expect_eq(ht_obj(p, KS_RES_STORAGE_CLASS, KS_ACT_ADD, NULL,
                        ht_volobj("{'kind':'StorageClass','metadata':{'name':'SC_1'},"
                                  "'volumeBindingMode':'Immediate'}")),
                 KS_QUEUE_SKIP, "an Immediate class");
    cr_expect_eq(ht_obj(p, KS_RES_STORAGE_CLASS, KS_ACT_ADD, NULL,
                        ht_volobj("{'kind':'StorageClass','metadata':{'name':'SC_1'},"
                                  "'volumeBindingMode':'WaitForFirstConsumer'}")),
                 KS_QUEUE, "new-sc-is-wait-for-first-consumer-mode");
}

Test(volume_zone_hints, persistent_volume_changed)
{
    ht_plugin(&ks_plugin_volume_zone, NULL);
    ks_pod *p = pod_with("default", "PVC_1");
    cr_expect_eq(
        ht_obj(p, KS_RES_PERSISTENT_VOLUME, KS_ACT_ADD, NULL, pv("'" BETA_ZONE "':'us-west1-b'")),
        KS_QUEUE, "new-pv-was-added");
    cr_expect_eq(ht_obj(p, KS_RES_PERSISTENT_VOLUME, KS_ACT_UPDATE_ANY,
                        pv("'" BETA_ZONE "':'us-west1-a'"), pv("'" BETA_ZONE "':'us-west1-b'")),
                 KS_QUEUE, "pv-was-updated-and-changed-topology");
    cr_expect_eq(ht_obj(p, KS_RES_PERSISTENT_VOLUME, KS_ACT_UPDATE_ANY,
                        pv("'" BETA_ZONE "':'us-west1-a'"),
                        pv("'" BETA_ZONE "':'us-west1-a','topology.kubernetes.io/zone':'zone'")),
                 KS_QUEUE, "pv-was-updated-and-added-topology-label");
    cr_expect_eq(ht_obj(p, KS_RES_PERSISTENT_VOLUME, KS_ACT_UPDATE_ANY,
                        pv("'" BETA_ZONE "':'us-west1-a','topology.kubernetes.io/zone':'zone'"),
                        pv("'" BETA_ZONE "':'us-west1-a','topology.kubernetes.io/zone':'zone'")),
                 KS_QUEUE_SKIP, "pv-was-updated-but-no-topology-is-changed");
    /* kubesched's: the same set of zones in another order, and another label, are no change */
    cr_expect_eq(ht_obj(p, KS_RES_PERSISTENT_VOLUME, KS_ACT_UPDATE_ANY,
                        pv("'" BETA_ZONE "':'a__b','other':'1'"),
                        pv("'" BETA_ZONE "':'b__a','other':'2'")),
                 KS_QUEUE_SKIP, "the same zone set");
}
