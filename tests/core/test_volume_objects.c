/*
 * The storage kinds and the pod's volumes (core/api/volume_objects.c) and their place in the
 * store (core/api/store.c): the fields the volume plugins read, upstream's readings (the beta
 * storage-class annotation first, the ephemeral claim's name, RBD's default pool), the API
 * server's defaults and rules in the checked mode with the field path, and references across a
 * replacement.
 *
 * JSON is written with single quotes, turned into double quotes before parsing.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sched/host_api.h"
#include "api/intern.h"
#include "api/objects.h"
#include "api/store.h"
#include "api/volume_objects.h"
#include "harness.h"

static void setup(void) { ks__host_init(); }

TestSuite(volume_objects, .init = setup);

static ks__volobj *parse(const char *text, int checked)
{
    char err[512] = "";
    ks__volobj *o = NULL;
    cJSON *obj = th_json(text);
    int rc = checked ? ks__volobj_from_json_checked(obj, &o, err, sizeof(err))
                     : ks__volobj_from_json(obj, &o, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "parse failed (%d): %s", rc, err);
    return o;
}

/* A checked parse that must fail with exactly msg. */
static void refused(const char *text, const char *msg)
{
    char err[512] = "";
    ks__volobj *o = (ks__volobj *)1;
    cJSON *obj = th_json(text);
    int rc = ks__volobj_from_json_checked(obj, &o, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, KS_EPARSE, "expected a refusal for %s", text);
    cr_assert_null(o);
    cr_assert_str_eq(err, msg);
}

static const char *str(ks_sym s) { return ks__sym_str(s); }

Test(volume_objects, persistent_volume_fields)
{
    ks__volobj *o = parse(
        "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'pv1','uid':'u1',"
        "'labels':{'topology.kubernetes.io/zone':'b'},"
        "'annotations':{'volume.beta.kubernetes.io/storage-class':'beta'}},"
        "'spec':{'capacity':{'storage':'10Gi'},'accessModes':['ReadWriteOnce','ReadOnlyMany'],"
        "'storageClassName':'fast','volumeMode':'Block',"
        "'claimRef':{'namespace':'ns','name':'data','uid':'c1'},"
        "'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':[{'key':"
        "'topology.kubernetes.io/zone','operator':'In','values':['b']}]}]}},"
        "'csi':{'driver':'pd.csi.storage.gke.io','volumeHandle':'h1'}},"
        "'status':{'phase':'Bound'}}",
        0);
    cr_assert_eq(o->kind, KS_VK_PV);
    const ks_pv_view *v = &((ks_pv *)o)->v;
    cr_assert_eq(v->size, sizeof(*v));
    cr_assert_str_eq(o->key, "pv1");
    cr_assert_str_eq(str(v->name), "pv1");
    cr_assert_str_eq(v->uid, "u1");
    cr_assert_eq(v->capacity, 10LL << 30);
    cr_assert_eq(v->capacity_milli, (10LL << 30) * 1000);
    cr_assert_eq(v->access_modes, KS_ACCESS_READ_WRITE_ONCE | KS_ACCESS_READ_ONLY_MANY);
    cr_assert_str_eq(str(v->storage_class), "beta", "the beta annotation wins (upstream)");
    cr_assert_eq(v->volume_mode, KS_VOLUME_MODE_BLOCK);
    cr_assert(v->has_claim_ref);
    cr_assert_str_eq(str(v->claim_namespace), "ns");
    cr_assert_str_eq(str(v->claim_name), "data");
    cr_assert_str_eq(v->claim_uid, "c1");
    cr_assert(v->has_node_affinity);
    cr_assert_eq(v->nnode_terms, 1);
    cr_assert_eq(v->node_terms[0].nexprs, 1);
    cr_assert_str_eq(str(v->node_terms[0].exprs[0].values[0]), "b");
    cr_assert_eq(v->nlabels, 1);
    cr_assert_str_eq(str(v->phase), "Bound");
    cr_assert_eq(v->source, KS_VOLSRC_CSI);
    cr_assert_str_eq(str(v->csi_driver), "pd.csi.storage.gke.io");
    cr_assert_str_eq(str(v->source_id), "h1");
    cr_assert_not_null(strstr(v->json, "\"pv1\""));
    ks__volobj_unref(o);
}

Test(volume_objects, persistent_volume_defaults_and_in_tree_source)
{
    ks__volobj *o = parse("{'kind':'PersistentVolume','metadata':{'name':'pv2'},'spec':{'capacity':"
                          "{'storage':1500},'accessModes':['ReadWriteOncePod'],"
                          "'gcePersistentDisk':{'pdName':'disk-1'}}}",
                          1);
    const ks_pv_view *v = &((ks_pv *)o)->v;
    cr_assert_eq(v->capacity, 1500);
    cr_assert_eq(v->volume_mode, KS_VOLUME_MODE_FILESYSTEM);
    cr_assert_str_eq(str(v->storage_class), "");
    cr_assert_eq(v->has_claim_ref, 0);
    cr_assert_str_eq(v->claim_uid, "");
    cr_assert_eq(v->has_node_affinity, 0);
    cr_assert_eq(v->access_modes, KS_ACCESS_READ_WRITE_ONCE_POD);
    cr_assert_eq(v->source, KS_VOLSRC_GCE_PD);
    cr_assert_str_eq(str(v->source_id), "disk-1");
    ks__volobj_unref(o);
}

Test(volume_objects, persistent_volume_checked_rules)
{
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'accessModes':"
            "['ReadWriteOnce']}}",
            "spec.capacity: Required value");
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'1Gi'}}}",
            "spec.accessModes: Required value");
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'1Gi'},'accessModes':['ReadWriteSometimes']}}",
            "spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: "
            "\"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"");
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'1Gi'},'accessModes':['ReadWriteOncePod','ReadWriteOnce']}}",
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes");
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'ten'},'accessModes':['ReadWriteOnce']}}",
            "spec.capacity.storage: invalid quantity \"ten\" (expected e.g. \"10Gi\", \"500M\")");
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'1Gi'},'accessModes':['ReadWriteOnce'],'nodeAffinity':{'required':{"
            "'nodeSelectorTerms':[]}}}}",
            "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least "
            "one node selector term");
    /* A term's requirements are held to the rules of a pod's node affinity (one shared check). */
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'1Gi'},'accessModes':['ReadWriteOnce'],'nodeAffinity':{'required':{"
            "'nodeSelectorTerms':[{'matchExpressions':[{'key':'rank','operator':'Gt','values':"
            "['1','2']}]}]}}}}",
            "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required "
            "value: must be specified single value when `operator` is 'Lt' or 'Gt'");
    refused("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{'capacity':{'storage':"
            "'1Gi'},'accessModes':['ReadWriteOnce'],'nodeAffinity':{'required':{"
            "'nodeSelectorTerms':[{'matchExpressions':[{'key':'','operator':'Exists'}]}]}}}}",
            "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: Invalid "
            "value: \"\": name part must be non-empty");
    /* Lenient: what the API server stored is read as is (an unknown mode is a bit of its own). */
    ks__volobj *o = parse("{'kind':'PersistentVolume','metadata':{'name':'p'},'spec':{"
                          "'accessModes':['ReadWriteSometimes']}}",
                          0);
    cr_assert_eq(((ks_pv *)o)->v.access_modes, KS_ACCESS_UNKNOWN);
    ks__volobj_unref(o);
}

Test(volume_objects, claim_fields)
{
    ks__volobj *o = parse(
        "{'kind':'PersistentVolumeClaim','metadata':{'name':'data','namespace':'ns','uid':'c1',"
        "'annotations':{'volume.kubernetes.io/selected-node':'n1'},"
        "'ownerReferences':[{'kind':'Pod','name':'p','uid':'x','controller':false},"
        "{'kind':'Pod','name':'p','uid':'pod-uid','controller':true}]},"
        "'spec':{'accessModes':['ReadWriteOncePod'],'storageClassName':'',"
        "'resources':{'requests':{'storage':'5Gi'}},'volumeName':'pv1',"
        "'selector':{'matchLabels':{'tier':'gold'}}},'status':{'phase':'Bound'}}",
        0);
    cr_assert_eq(o->kind, KS_VK_PVC);
    const ks_pvc_view *v = &((ks_pvc *)o)->v;
    cr_assert_str_eq(o->key, "ns/data");
    cr_assert_str_eq(str(v->ns), "ns");
    cr_assert_eq(v->access_modes, KS_ACCESS_READ_WRITE_ONCE_POD);
    cr_assert(v->has_storage_class_name, "storageClassName: \"\" is set");
    cr_assert_str_eq(str(v->storage_class), "");
    cr_assert_eq(v->request, 5LL << 30);
    cr_assert_str_eq(str(v->volume_name), "pv1");
    cr_assert(v->selector.present);
    cr_assert_eq(v->selector.nmatch_labels, 1);
    cr_assert_str_eq(v->controller_uid, "pod-uid");
    cr_assert_eq(v->nannotations, 1);
    cr_assert_str_eq(str(v->phase), "Bound");
    ks__volobj_unref(o);
    /* No namespace: "default", as the API server fills it in. */
    o = parse("{'kind':'PersistentVolumeClaim','metadata':{'name':'d'},'spec':{}}", 0);
    cr_assert_str_eq(o->key, "default/d");
    cr_assert_eq(((ks_pvc *)o)->v.has_storage_class_name, 0);
    cr_assert_eq(((ks_pvc *)o)->v.selector.present, 0);
    ks__volobj_unref(o);
    refused("{'kind':'PersistentVolumeClaim','metadata':{'name':'d'},'spec':{'resources':"
            "{'requests':{'storage':'1Gi'}}}}",
            "spec.accessModes: Required value: at least 1 access mode is required");
    refused("{'kind':'PersistentVolumeClaim','metadata':{'name':'d'},'spec':{'accessModes':"
            "['ReadWriteOnce']}}",
            "spec.resources[storage]: Required value");
    refused("{'kind':'PersistentVolumeClaim','metadata':{'name':'d'},'spec':{'accessModes':"
            "['ReadWriteOnce'],'volumeMode':'Raw','resources':{'requests':{'storage':'1'}}}}",
            "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", "
            "\"Filesystem\"");
}

Test(volume_objects, storage_class_binding_mode_defaults)
{
    const char *no_mode = "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':"
                          "{'name':'std'},'provisioner':'p.csi',"
                          "'allowedTopologies':[{'matchLabelExpressions':[{'key':"
                          "'topology.kubernetes.io/zone','values':['a','b']}]}]}";
    ks__volobj *o = parse(no_mode, 0);
    const ks_storage_class_view *v = &((ks_storage_class *)o)->v;
    cr_assert_eq(v->binding_mode, KS_BINDING_UNSET, "stored objects are read as they are");
    cr_assert_str_eq(str(v->provisioner), "p.csi");
    cr_assert_eq(v->nallowed_topologies, 1);
    cr_assert_eq(v->allowed_topologies[0].exprs[0].op, KS_OP_IN);
    cr_assert_eq(v->allowed_topologies[0].exprs[0].nvalues, 2);
    ks__volobj_unref(o);
    o = parse(no_mode, 1);
    cr_assert_eq(((ks_storage_class *)o)->v.binding_mode, KS_BINDING_IMMEDIATE,
                 "a cluster file gets the API server's default");
    ks__volobj_unref(o);
    o = parse("{'kind':'StorageClass','metadata':{'name':'w'},'provisioner':'p',"
              "'volumeBindingMode':'WaitForFirstConsumer'}",
              1);
    cr_assert_eq(((ks_storage_class *)o)->v.binding_mode, KS_BINDING_WAIT_FOR_FIRST_CONSUMER);
    ks__volobj_unref(o);
    refused("{'kind':'StorageClass','metadata':{'name':'w'},'provisioner':'p',"
            "'volumeBindingMode':'Later'}",
            "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", "
            "\"WaitForFirstConsumer\"");
    refused("{'kind':'StorageClass','metadata':{'name':'w'}}", "provisioner: Required value");
}

Test(volume_objects, csi_kinds)
{
    ks__volobj *o =
        parse("{'kind':'CSINode','metadata':{'name':'n1','annotations':{"
              "'storage.alpha.kubernetes.io/migrated-plugins':'kubernetes.io/gce-pd'}},'spec':"
              "{'drivers':[{'name':'d1','nodeID':'i-1','allocatable':{'count':16},'topologyKeys':"
              "['topology.kubernetes.io/zone']},{'name':'d2','nodeID':'i-1'}]}}",
              1);
    const ks_csi_node_view *cn = &((ks_csi_node *)o)->v;
    cr_assert_eq(cn->ndrivers, 2);
    cr_assert(cn->drivers[0].has_allocatable_count);
    cr_assert_eq(cn->drivers[0].allocatable_count, 16);
    cr_assert_eq(cn->drivers[0].ntopology_keys, 1);
    cr_assert_eq(cn->drivers[1].has_allocatable_count, 0);
    cr_assert_eq(cn->nannotations, 1);
    ks__volobj_unref(o);
    refused("{'kind':'CSINode','metadata':{'name':'n1'},'spec':{'drivers':[{'name':'d',"
            "'allocatable':{'count':-1}}]}}",
            "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal "
            "to 0");

    o = parse("{'kind':'CSIDriver','metadata':{'name':'d1'},'spec':{}}", 1);
    cr_assert_eq(((ks_csi_driver *)o)->v.attach_required, 1, "attachRequired defaults to true");
    cr_assert_eq(((ks_csi_driver *)o)->v.storage_capacity, 0);
    ks__volobj_unref(o);
    o = parse("{'kind':'CSIDriver','metadata':{'name':'d1'},'spec':{'attachRequired':false,"
              "'storageCapacity':true}}",
              0);
    cr_assert_eq(((ks_csi_driver *)o)->v.attach_required, 0);
    cr_assert_eq(((ks_csi_driver *)o)->v.storage_capacity, 1);
    ks__volobj_unref(o);

    o = parse("{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'kube-system'},"
              "'storageClassName':'fast','capacity':'100Gi','maximumVolumeSize':'10Gi',"
              "'nodeTopology':{'matchLabels':{'topology.kubernetes.io/zone':'a'}}}",
              1);
    const ks_csi_storage_capacity_view *cap = &((ks_csi_storage_capacity *)o)->v;
    cr_assert_str_eq(o->key, "kube-system/c1");
    cr_assert_str_eq(str(cap->storage_class_name), "fast");
    cr_assert(cap->has_capacity);
    cr_assert_eq(cap->capacity, 100LL << 30);
    cr_assert(cap->has_maximum_volume_size);
    cr_assert_eq(cap->maximum_volume_size, 10LL << 30);
    cr_assert(cap->node_topology.present);
    ks__volobj_unref(o);
    refused("{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'x'},"
            "'capacity':'x'}",
            "capacity: invalid quantity \"x\" (expected e.g. \"10Gi\", \"500M\")");
    refused("{'kind':'CSIStorageCapacity','metadata':{'name':'c1','namespace':'x'}}",
            "storageClassName: Required value");
}

/* ABI 1.6: CSIDriver.spec.preventPodSchedulingIfMissing and VolumeAttachment (NodeVolumeLimits). */
Test(volume_objects, volume_attachment_and_prevent_pod_scheduling)
{
    ks__volobj *o = parse("{'kind':'CSIDriver','metadata':{'name':'d1'},'spec':{}}", 1);
    cr_assert_eq(((ks_csi_driver *)o)->v.prevent_pod_scheduling_if_missing, 0);
    cr_assert_eq(((ks_csi_driver *)o)->v.size, sizeof(ks_csi_driver_view));
    ks__volobj_unref(o);
    o = parse("{'kind':'CSIDriver','metadata':{'name':'d1'},'spec':{"
              "'preventPodSchedulingIfMissing':true}}",
              0);
    cr_assert_eq(((ks_csi_driver *)o)->v.prevent_pod_scheduling_if_missing, 1);
    ks__volobj_unref(o);

    cr_assert_eq(ks__volobj_kind("VolumeAttachment"), KS_VK_VOLUME_ATTACHMENT);
    cr_assert_not(ks__volobj_namespaced(KS_VK_VOLUME_ATTACHMENT));
    o = parse("{'kind':'VolumeAttachment','metadata':{'name':'va1'},'spec':{'attacher':"
              "'ebs.csi.aws.com','nodeName':'n1','source':{'persistentVolumeName':'pv1'}},"
              "'status':{'attached':true}}",
              1);
    const ks_volume_attachment_view *va = &((ks_volume_attachment *)o)->v;
    cr_assert_str_eq(o->key, "va1");
    cr_assert_str_eq(str(va->name), "va1");
    cr_assert_str_eq(str(va->attacher), "ebs.csi.aws.com");
    cr_assert_str_eq(str(va->node_name), "n1");
    cr_assert_str_eq(str(va->pv_name), "pv1");
    cr_assert_eq(va->attached, 1);
    cr_assert_not_null(va->json);
    ks__volobj_unref(o);
    o = parse("{'kind':'VolumeAttachment','metadata':{'name':'va2'},'spec':{'attacher':'a',"
              "'nodeName':'n1','source':{'inlineVolumeSpec':{'csi':{'driver':'a'}}}}}",
              1);
    cr_assert_eq(((ks_volume_attachment *)o)->v.pv_name, KS_SYM_ABSENT, "an in-line attachment");
    cr_assert_eq(((ks_volume_attachment *)o)->v.attached, 0);
    ks__volobj_unref(o);
    o = parse("{'kind':'VolumeAttachment','metadata':{'name':'va3'},'spec':{}}", 0);
    cr_assert_eq(((ks_volume_attachment *)o)->v.attacher, KS_SYM_EMPTY, "lenient: as stored");
    ks__volobj_unref(o);
    refused("{'kind':'VolumeAttachment','metadata':{'name':'v'},'spec':{'nodeName':'n','source':{"
            "'persistentVolumeName':'p'}}}",
            "spec.attacher: Required value");
    refused("{'kind':'VolumeAttachment','metadata':{'name':'v'},'spec':{'attacher':'a',"
            "'nodeName':'n','source':{}}}",
            "spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
            "persistentVolumeName");
    refused("{'kind':'VolumeAttachment','metadata':{'name':'v'},'spec':{'attacher':'a',"
            "'nodeName':'n','source':{'persistentVolumeName':'p','inlineVolumeSpec':{}}}}",
            "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and "
            "persistentVolumeName");
    refused("{'kind':'VolumeAttachment','metadata':{'name':'v'},'spec':{'attacher':'a',"
            "'nodeName':'n','source':{'persistentVolumeName':''}}}",
            "spec.source.persistentVolumeName: Required value: must specify non empty "
            "persistentVolumeName");
    refused("{'kind':'VolumeAttachment','metadata':{'name':'v'},'spec':{'attacher':'a',"
            "'source':{'persistentVolumeName':'p'}}}",
            "spec.nodeName: Required value");
}

static ks_pod *pod_checked(const char *text, int checked, char *err, size_t len)
{
    ks_pod *p = NULL;
    cJSON *obj = th_json(text);
    int rc = checked ? ks__pod_from_json_checked(obj, &p, err, len)
                     : ks__pod_from_json(obj, &p, err, len);
    cJSON_Delete(obj);
    return rc ? NULL : p;
}

Test(volume_objects, pod_volumes)
{
    char err[512] = "";
    ks_pod *p = pod_checked(
        "{'metadata':{'name':'web-0','namespace':'ns'},'spec':{'containers':[{'name':'c'}],"
        "'volumes':[{'name':'data','persistentVolumeClaim':{'claimName':'data','readOnly':true}},"
        "{'name':'scratch','ephemeral':{'volumeClaimTemplate':{'spec':{}}}},"
        "{'name':'pd','gcePersistentDisk':{'pdName':'disk-1','readOnly':true}},"
        "{'name':'ebs','awsElasticBlockStore':{'volumeID':'vol-1'}},"
        "{'name':'rbd','rbd':{'monitors':['m1','m2'],'image':'img'}},"
        "{'name':'iscsi','iscsi':{'targetPortal':'10.0.0.1:3260','iqn':'iqn.x','lun':2}},"
        "{'name':'cfg','configMap':{'name':'c'}},{'name':'tmp','emptyDir':{}}]}}",
        1, err, sizeof(err));
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(p->nvolumes, 8);
    const ks_pod_volume *v = p->volumes;
    cr_assert_eq(v[0].source, KS_VOLSRC_PVC);
    cr_assert_str_eq(str(v[0].claim), "data");
    cr_assert_eq(v[0].read_only, 1);
    cr_assert_str_eq(v[0].source_json, "{\"persistentVolumeClaim\":{\"claimName\":\"data\","
                                       "\"readOnly\":true}}");
    cr_assert_eq(v[1].source, KS_VOLSRC_EPHEMERAL);
    cr_assert_str_eq(str(v[1].claim), "web-0-scratch", "upstream ephemeral.VolumeClaimName");
    cr_assert_eq(v[2].source, KS_VOLSRC_GCE_PD);
    cr_assert_str_eq(str(v[2].id), "disk-1");
    cr_assert_eq(v[2].read_only, 1);
    cr_assert_eq(v[3].source, KS_VOLSRC_AWS_EBS);
    cr_assert_str_eq(str(v[3].id), "vol-1");
    cr_assert_eq(v[4].source, KS_VOLSRC_RBD);
    cr_assert_str_eq(str(v[4].pool), "rbd", "the API server's default pool");
    cr_assert_eq(v[4].nmonitors, 2);
    cr_assert_str_eq(str(v[4].monitors[1]), "m2");
    cr_assert_eq(v[5].source, KS_VOLSRC_ISCSI);
    cr_assert_str_eq(str(v[5].id), "iqn.x");
    cr_assert_str_eq(str(v[5].pool), "10.0.0.1:3260");
    cr_assert_eq(v[5].lun, 2);
    cr_assert_eq(v[6].source, KS_VOLSRC_OTHER);
    cr_assert_null(v[6].source_json, "configMap volumes are not signed (VolumesSigner)");
    cr_assert_str_eq(v[7].source_json, "{\"emptyDir\":{}}");
    /* The assumed copy shares the volumes with its base. */
    ks_pod *copy = ks__pod_with_node(p, ks__intern("n1"));
    cr_assert_eq(copy->volumes, p->volumes);
    ks__pod_unref(p);
    cr_assert_str_eq(str(copy->volumes[0].claim), "data");
    ks__pod_unref(copy);
}

Test(volume_objects, pod_volumes_checked_rules)
{
    char err[512] = "";
    cr_assert_null(pod_checked("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'a',"
                               "'persistentVolumeClaim':{'claimName':''}}]}}",
                               1, err, sizeof(err)));
    cr_assert_str_eq(err, "spec.volumes[0].persistentVolumeClaim.claimName: Required value");
    cr_assert_null(pod_checked("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'a',"
                               "'emptyDir':{}},{'name':'a','emptyDir':{}}]}}",
                               1, err, sizeof(err)));
    cr_assert_str_eq(err, "spec.volumes[1].name: Duplicate value: \"a\"");
    cr_assert_null(pod_checked("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'a',"
                               "'gcePersistentDisk':{}}]}}",
                               1, err, sizeof(err)));
    cr_assert_str_eq(err, "spec.volumes[0].gcePersistentDisk.pdName: Required value");
    cr_assert_null(pod_checked("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'a',"
                               "'iscsi':{'targetPortal':'t','iqn':'i','lun':300}}]}}",
                               1, err, sizeof(err)));
    cr_assert_str_eq(err, "spec.volumes[0].iscsi.lun: Invalid value: 300: must be between 0 "
                          "and 255, inclusive");
    /* Lenient: the empty claim name is kept (VolumeZone answers it with upstream's message). */
    ks_pod *p = pod_checked("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'a',"
                            "'persistentVolumeClaim':{'claimName':''}}]}}",
                            0, err, sizeof(err));
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(p->volumes[0].claim, KS_SYM_EMPTY);
    ks__pod_unref(p);
    /* A decode error is refused in both modes. */
    cr_assert_null(pod_checked("{'metadata':{'name':'p'},'spec':{'volumes':[{'name':'a',"
                               "'persistentVolumeClaim':{'claimName':3}}]}}",
                               0, err, sizeof(err)));
    cr_assert_str_eq(err, "spec.volumes[0].persistentVolumeClaim.claimName: expected a string");
}

static void apply(ks_store *st, const char *text, int deleted, ks_store_change *chg)
{
    char err[512] = "";
    cJSON *obj = th_json(text);
    int rc = ks__store_apply_ex(st, obj, deleted, 0, chg, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "%s", err);
}

Test(volume_objects, store_replaces_and_readers_keep_theirs)
{
    ks_store *st = ks__store_new();
    ks_store_change chg;
    cr_assert(ks__store_wants("PersistentVolumeClaim"));
    cr_assert(ks__store_wants("CSIStorageCapacity"));
    apply(st,
          "{'kind':'PersistentVolumeClaim','metadata':{'name':'d','namespace':'a'},'spec':"
          "{'volumeName':''}}",
          0, &chg);
    cr_assert_null(chg.old_obj);
    cr_assert_not_null(chg.new_obj);
    ks__volobj_unref(chg.new_obj);
    ks__volobj *held = ks__store_volobj_sym(st, KS_VK_PVC, ks__intern("a"), ks__intern("d"));
    cr_assert_not_null(held);
    cr_assert_null(ks__store_volobj_sym(st, KS_VK_PVC, ks__intern("b"), ks__intern("d")),
                   "claims are per namespace");
    apply(st,
          "{'kind':'PersistentVolumeClaim','metadata':{'name':'d','namespace':'a'},'spec':"
          "{'volumeName':'pv1'}}",
          0, &chg);
    cr_assert_eq(chg.old_obj, held, "the change carries the replaced object");
    cr_assert_str_eq(str(((ks_pvc *)chg.new_obj)->v.volume_name), "pv1");
    ks__volobj_unref(chg.old_obj);
    ks__volobj_unref(chg.new_obj);
    /* The reader's reference keeps the replaced claim intact. */
    cr_assert_str_eq(str(((ks_pvc *)held)->v.volume_name), "");
    ks__volobj_unref(held);
    held = ks__store_volobj(st, KS_VK_PVC, "a/d");
    cr_assert_str_eq(str(((ks_pvc *)held)->v.volume_name), "pv1");
    ks__volobj_unref(held);

    apply(st, "{'kind':'PersistentVolume','metadata':{'name':'z'},'spec':{'storageClassName':'s'}}",
          0, NULL);
    apply(st, "{'kind':'PersistentVolume','metadata':{'name':'b'},'spec':{'storageClassName':'s'}}",
          0, NULL);
    apply(st, "{'kind':'PersistentVolume','metadata':{'name':'c'},'spec':{'storageClassName':'t'}}",
          0, NULL);
    cr_assert_eq(ks__store_volobj_count(st, KS_VK_PV), 3);
    ks__volobj **all;
    size_t n = ks__store_volobjs(st, KS_VK_PV, NULL, NULL, &all);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(all[0]->key, "b", "ordered by name");
    cr_assert_str_eq(all[2]->key, "z");
    for (size_t i = 0; i < n; i++)
        ks__volobj_unref(all[i]);
    free(all);

    apply(st, "{'kind':'PersistentVolume','metadata':{'name':'b'}}", 1, &chg);
    cr_assert_not_null(chg.old_obj, "a delete hands back what it removed");
    cr_assert_null(chg.new_obj);
    ks__volobj_unref(chg.old_obj);
    cr_assert_eq(ks__store_volobj_count(st, KS_VK_PV), 2);
    cr_assert_null(ks__store_volobj(st, KS_VK_PV, "b"));
    ks__store_free(st);
}

/* The store's index of VolumeAttachments by node follows adds, moves and deletes. */
static size_t vas_on(ks_store *st, const char *node, char *names, size_t len)
{
    ks__volobj **objs;
    size_t n = ks__store_volume_attachments_on(st, ks__intern(node), &objs), off = 0;
    names[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        off += (size_t)snprintf(names + off, len - off, "%s%s", i ? "," : "", objs[i]->key);
        ks__volobj_unref(objs[i]);
    }
    free(objs);
    return n;
}

Test(volume_objects, store_indexes_volume_attachments_by_node)
{
    ks_store *st = ks__store_new();
    char names[256];
    cr_assert(ks__store_wants("VolumeAttachment"));
    static const char *const va[] = {
        "{'kind':'VolumeAttachment','metadata':{'name':'vb'},'spec':{'attacher':'a','nodeName':"
        "'n1','source':{'persistentVolumeName':'p1'}}}",
        "{'kind':'VolumeAttachment','metadata':{'name':'va'},'spec':{'attacher':'a','nodeName':"
        "'n1','source':{'persistentVolumeName':'p2'}}}",
        "{'kind':'VolumeAttachment','metadata':{'name':'vc'},'spec':{'attacher':'a','nodeName':"
        "'n2','source':{'persistentVolumeName':'p3'}}}",
    };
    for (size_t i = 0; i < 3; i++)
        apply(st, va[i], 0, NULL);
    cr_assert_eq(vas_on(st, "n1", names, sizeof(names)), 2);
    cr_assert_str_eq(names, "va,vb", "ordered by name");
    cr_assert_eq(vas_on(st, "n2", names, sizeof(names)), 1);
    cr_assert_eq(vas_on(st, "n3", names, sizeof(names)), 0);
    /* vb moves to n2 (an update replaces it), then va is deleted */
    apply(st,
          "{'kind':'VolumeAttachment','metadata':{'name':'vb'},'spec':{'attacher':'a','nodeName':"
          "'n2','source':{'persistentVolumeName':'p1'}}}",
          0, NULL);
    cr_assert_eq(vas_on(st, "n1", names, sizeof(names)), 1);
    cr_assert_str_eq(names, "va");
    cr_assert_eq(vas_on(st, "n2", names, sizeof(names)), 2);
    cr_assert_str_eq(names, "vb,vc");
    apply(st, va[1], 1, NULL);
    cr_assert_eq(vas_on(st, "n1", names, sizeof(names)), 0);
    cr_assert_eq(ks__store_volobj_count(st, KS_VK_VOLUME_ATTACHMENT), 2);
    ks__store_free(st);
}
