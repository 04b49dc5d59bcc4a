/* VolumeBinding's events and hints: upstream v1.37 volume_binding_test.go
 * (TestIsSchedulableAfterCSINodeChange, ...PersistentVolumeClaimChange, ...StorageClassChange,
 * ...CSIStorageCapacityChange, ...CSIDriverChange), case by case. The "type conversion error"
 * cases have no counterpart: the host hands typed objects. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_volume_binding;

TestSuite(volume_binding_hints, .init = th_init, .fini = ht_fini);

Test(volume_binding_hints, registers_upstreams_events)
{
    ht_plugin(&ks_plugin_volume_binding, NULL);
    cr_assert_eq(HT.n, 7);
    ht_expect_event(0, KS_RES_STORAGE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    ht_expect_event(1, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    ht_expect_event(2, KS_RES_PERSISTENT_VOLUME, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 0);
    ht_expect_event(3, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL, 0);
    ht_expect_event(4, KS_RES_CSI_NODE, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    ht_expect_event(5, KS_RES_CSI_DRIVER, KS_ACT_UPDATE_ANY, 1);
    ht_expect_event(6, KS_RES_CSI_STORAGE_CAPACITY, KS_ACT_ADD | KS_ACT_UPDATE_ANY, 1);
    cr_expect_not(ht_registered(KS_RES_CSI_DRIVER, KS_ACT_ADD));
}

static const void *csi_node(const char *migrated)
{
    char json[512];
    snprintf(json, sizeof(json), "{'kind':'CSINode','metadata':{'name':'node1'%s%s%s}}",
             migrated ? ",'annotations':{'storage.alpha.kubernetes.io/migrated-plugins':'" : "",
             migrated ? migrated : "", migrated ? "'}" : "");
    return ht_volobj(json);
}

Test(volume_binding_hints, csi_node_change)
{
    ht_plugin(&ks_plugin_volume_binding, NULL);
    ks_pod *p = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{'containers':"
                       "[{'name':'c'}]}}");
    cr_expect_eq(ht_obj(p, KS_RES_CSI_NODE, KS_ACT_ADD, NULL, csi_node(NULL)), KS_QUEUE,
                 "CSINode is newly created");
    cr_expect_eq(ht_obj(p, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node(NULL), csi_node("test1")),
                 KS_QUEUE, "CSINode's migrated-plugins annotations is added");
    cr_expect_eq(
        ht_obj(p, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node("test1"), csi_node("test1, test2")),
        KS_QUEUE, "CSINode's migrated-plugins annotation is updated");
    cr_expect_eq(
        ht_obj(p, KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY, csi_node("test1"), csi_node("test1")),
        KS_QUEUE_SKIP, "CSINode is updated but migrated-plugins annotation gets unchanged");
}

static const void *pvc(const char *name, const char *ns)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'PersistentVolumeClaim','metadata':{'name':'%s','namespace':'%s'}}", name,
             ns);
    return ht_volobj(json);
}

Test(volume_binding_hints, persistent_volume_claim_change)
{
    ht_plugin(&ks_plugin_volume_binding, NULL);
    ks_pod *none = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{"
                          "'containers':[{'name':'c'}]}}");
    ks_pod *with = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{"
                          "'containers':[{'name':'c'}],'volumes':[{'name':'v','"
                          "persistentVolumeClaim':{'claimName':'pvc1'}},{'name':'ephemeral',"
                          "'ephemeral':{'volumeClaimTemplate':{'spec':{}}}}]}}");
    cr_expect_eq(
        ht_obj(none, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD, NULL, pvc("pvc1", "default")),
        KS_QUEUE_SKIP, "pod has no pvc or ephemeral volumes");
    cr_expect_eq(ht_obj(with, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY, pvc("pvc1", "ns1"),
                        pvc("pvc1", "ns1")),
                 KS_QUEUE_SKIP, "the same name in a different namespace");
    cr_expect_eq(ht_obj(with, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY,
                        pvc("pvc2", "default"), pvc("pvc2", "default")),
                 KS_QUEUE_SKIP, "pod has no pvc that is being modified");
    cr_expect_eq(ht_obj(with, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY,
                        pvc("pod-ephemeral2", "default"), pvc("pod-ephemeral2", "default")),
                 KS_QUEUE_SKIP, "pod has no generic ephemeral volume that is being modified");
    cr_expect_eq(ht_obj(with, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY,
                        pvc("pvc1", "default"), pvc("pvc1", "default")),
                 KS_QUEUE, "pod has the pvc that is being modified");
    cr_expect_eq(ht_obj(with, KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_UPDATE_ANY,
                        pvc("pod-ephemeral", "default"), pvc("pod-ephemeral", "default")),
                 KS_QUEUE, "pod has the generic ephemeral volume that is being modified");
}

static const void *storage_class(const char *zone)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'StorageClass','metadata':{'name':'sc1'},'volumeBindingMode':"
             "'WaitForFirstConsumer','allowedTopologies':[{'matchLabelExpressions':[{'key':"
             "'kubernetes.io/hostname','values':['%s']}]}]}",
             zone);
    return ht_volobj(json);
}

Test(volume_binding_hints, storage_class_change)
{
    ht_plugin(&ks_plugin_volume_binding, NULL);
    ks_pod *p = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{'containers':"
                       "[{'name':'c'}]}}");
    cr_expect_eq(ht_obj(p, KS_RES_STORAGE_CLASS, KS_ACT_ADD, NULL, storage_class("a")), KS_QUEUE,
                 "When a new StorageClass is created, it returns Queue");
    cr_expect_eq(
        ht_obj(p, KS_RES_STORAGE_CLASS, KS_ACT_UPDATE_ANY, storage_class("a"), storage_class("b")),
        KS_QUEUE, "When the AllowedTopologies are changed, it returns Queue");
    cr_expect_eq(
        ht_obj(p, KS_RES_STORAGE_CLASS, KS_ACT_UPDATE_ANY, storage_class("a"), storage_class("a")),
        KS_QUEUE_SKIP, "When there are no changes to the StorageClass");
}

static const void *cap(const char *capacity, const char *max)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'kind':'CSIStorageCapacity','metadata':{'name':'cap','namespace':'default'},"
             "'storageClassName':'sc'%s%s%s%s%s%s}",
             capacity ? ",'capacity':'" : "", capacity ? capacity : "", capacity ? "'" : "",
             max ? ",'maximumVolumeSize':'" : "", max ? max : "", max ? "'" : "");
    return ht_volobj(json);
}

Test(volume_binding_hints, csi_storage_capacity_change)
{
    ht_plugin(&ks_plugin_volume_binding, NULL);
    ks_pod *p = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{'containers':"
                       "[{'name':'c'}]}}");
    const ks_event_resource R = KS_RES_CSI_STORAGE_CAPACITY;
    const uint32_t U = KS_ACT_UPDATE_ANY;
    cr_expect_eq(ht_obj(p, R, KS_ACT_ADD, NULL, cap(NULL, NULL)), KS_QUEUE, "created");
    cr_expect_eq(ht_obj(p, R, U, cap(NULL, NULL), cap("100", NULL)), KS_QUEUE, "Capacity set");
    cr_expect_eq(ht_obj(p, R, U, cap(NULL, NULL), cap(NULL, "100")), KS_QUEUE,
                 "MaximumVolumeSize set");
    cr_expect_eq(ht_obj(p, R, U, cap("100", NULL), cap("200", NULL)), KS_QUEUE,
                 "Capacity increase");
    cr_expect_eq(ht_obj(p, R, U, cap("100", "50"), cap("100", NULL)), KS_QUEUE,
                 "MaximumVolumeSize unset");
    cr_expect_eq(ht_obj(p, R, U, cap("100", "50"), cap("100", "60")), KS_QUEUE,
                 "MaximumVolumeSize increase");
    cr_expect_eq(ht_obj(p, R, U, cap("100", NULL), cap("100", NULL)), KS_QUEUE_SKIP, "no changes");
    cr_expect_eq(ht_obj(p, R, U, cap("100", "100"), cap("100", NULL)), KS_QUEUE_SKIP,
                 "equal (MaximumVolumeSize unset)");
    cr_expect_eq(ht_obj(p, R, U, cap("100", NULL), cap("90", NULL)), KS_QUEUE_SKIP,
                 "Capacity decrease");
    cr_expect_eq(ht_obj(p, R, U, cap("100", "50"), cap("100", "40")), KS_QUEUE_SKIP,
                 "MaximumVolumeSize decrease");
}

static const void *driver(const char *name, const char *storage_capacity)
{
    char json[512];
    snprintf(json, sizeof(json), "{'kind':'CSIDriver','metadata':{'name':'%s'},'spec':{%s%s}}",
             name, storage_capacity ? "'storageCapacity':" : "",
             storage_capacity ? storage_capacity : "");
    return ht_volobj(json);
}

Test(volume_binding_hints, csi_driver_change)
{
    ht_plugin(&ks_plugin_volume_binding, NULL);
    ks_pod *none = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{"
                          "'containers':[{'name':'c'}]}}");
    ks_pod *p = th_pod("{'metadata':{'name':'pod','namespace':'default'},'spec':{'containers':"
                       "[{'name':'c'}],'volumes':[{'name':'v','csi':{'driver':'test1'}}]}}");
    const ks_event_resource R = KS_RES_CSI_DRIVER;
    const uint32_t U = KS_ACT_UPDATE_ANY;
    cr_expect_eq(ht_obj(none, R, U, driver("test1", "true"), driver("test1", "false")),
                 KS_QUEUE_SKIP, "pod has no CSIDriver");
    cr_expect_eq(ht_obj(p, R, U, driver("test2", "true"), driver("test2", "false")), KS_QUEUE_SKIP,
                 "driver name in pod and csidriver name are different");
    cr_expect_eq(ht_obj(p, R, U, driver("test1", NULL), driver("test1", "false")), KS_QUEUE_SKIP,
                 "original StorageCapacity is nil");
    cr_expect_eq(ht_obj(p, R, U, driver("test1", "false"), driver("test1", "false")), KS_QUEUE_SKIP,
                 "original StorageCapacity is false");
    cr_expect_eq(ht_obj(p, R, U, driver("test1", "true"), driver("test1", NULL)), KS_QUEUE,
                 "modified StorageCapacity is nil");
    cr_expect_eq(ht_obj(p, R, U, driver("test1", "true"), driver("test1", "true")), KS_QUEUE_SKIP,
                 "modified StorageCapacity is true");
    cr_expect_eq(ht_obj(p, R, U, driver("test1", "true"), driver("test1", "false")), KS_QUEUE,
                 "modified StorageCapacity is false");
}
