/*
 * VolumeBinding's in-tree-to-CSI translation of a PersistentVolume (upstream binder.go
 * tryTranslatePVToCSI / isPluginMigratedToCSIOnNode, v1.37, over k8s.io/csi-translation-lib
 * v0.37 TranslateInTreePVToCSI), reduced to what the scheduler reads of the translated PV: its
 * node affinity (volume.CheckNodeAffinity against the node's labels) and the error the
 * translation returns.
 *
 * What translateTopologyFromInTreeToCSI does to the affinity is a few edits, kept here as a
 * description (vb_pv_translation) rather than new terms: a zone key renamed to the driver's CSI
 * topology key, the beta region key renamed to the GA one, or (labels only) a requirement
 * "<CSI key> In <the zone label's values>" appended to every term. The description depends on
 * the PV alone, so PreFilter builds it once per bound PV; whether it applies depends on the
 * node's CSINode (its storage.alpha.kubernetes.io/migrated-plugins annotation).
 *
 * Everything here is plain data and pure functions: any thread.
 */
#ifndef KS_PLUGINS_VOLUMEBINDING_CSI_TRANSLATION_H
#define KS_PLUGINS_VOLUMEBINDING_CSI_TRANSLATION_H

#include "kubesched/plugin.h"

/* The in-tree plugins whose migration upstream's isCSIMigrationOnForPlugin turns on (vSphere
 * and Azure File are migratable but off there: their PVs stay as they are). */
enum {
    VB_MIG_NONE = -1,
    VB_MIG_GCE_PD,
    VB_MIG_AWS_EBS,
    VB_MIG_AZURE_DISK,
    VB_MIG_CINDER,
    VB_MIG_PORTWORX,
    VB_NMIG
};

/* The keys the translation reads and writes, interned once (create, main thread). */
typedef struct vb_csi_syms {
    ks_sym zone_ga, zone_beta, region_ga, region_beta; /* topology.kubernetes.io/..., failure-
                                                        * domain.beta.kubernetes.io/... */
    ks_sym topology_key[VB_NMIG]; /* the CSI driver's zone key; KS_SYM_ABSENT: no topology */
    ks_sym ann_migrated;          /* storage.alpha.kubernetes.io/migrated-plugins */
} vb_csi_syms;

#define VB_TRANSLATION_ERR_MAX 512

/* What TranslateInTreePVToCSI makes of one PV, as far as the scheduler sees it. Plain data;
 * the strings are borrowed(symbol table, forever) or inside the struct. */
typedef struct vb_pv_translation {
    int plugin; /* VB_MIG_*: VB_MIG_NONE, the PV is not translated on any node */
    int failed; /* the translation fails: err holds upstream's "could not translate pv: ..." */
    /* a requirement key renamed in every term (KS_SYM_ABSENT: none) */
    ks_sym zone_from, zone_to, region_from, region_to;
    /* addTopology: "add_key In <the non-empty, space-trimmed "__"-separated values of
     * add_zones>" appended to each term (one term made when there is none); KS_SYM_ABSENT:
     * nothing appended */
    ks_sym add_key;
    const char *add_zones;
    char err[VB_TRANSLATION_ERR_MAX];
} vb_pv_translation;

void vb_csi_syms_init(vb_csi_syms *s);

/* The migration plugin of a PV's source (upstream IsPVMigratable + GetInTreePluginNameFromSpec
 * + isCSIMigrationOnForPlugin), VB_MIG_NONE when the PV is never translated. */
int vb_pv_plugin(const ks_pv_view *v);

/* upstream isPluginMigratedToCSIOnNode: the node's CSINode (NULL: none) lists the plugin's
 * in-tree name in its migrated-plugins annotation (comma-separated, exact). */
int vb_plugin_migrated_on_node(const vb_csi_syms *s, int plugin, const ks_csi_node *cn);

/* Fills out with the translation of v (upstream TranslateInTreePVToCSI's effect on the node
 * affinity, or its error). */
void vb_translate_pv(const vb_csi_syms *s, const ks_pv_view *v, vb_pv_translation *out);

/* The appended requirement's In: value is one of the zones of a "__"-separated list (each
 * space-trimmed, empty ones left out, as addTopology filters them). */
int vb_zones_have(const char *zones, const char *value);

#endif
