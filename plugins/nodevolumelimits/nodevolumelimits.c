/*
 * NodeVolumeLimits (upstream plugins/nodevolumelimits/csi.go and utils.go, v1.37, with the in-tree
 * to CSI translation of k8s.io/csi-translation-lib v0.37.2).
 *
 *   PreFilter  Skip unless the pod has a persistentVolumeClaim or ephemeral volume or an in-line
 *              source that CSI migration translates (GCE PD, AWS EBS, Azure Disk, Azure File,
 *              Cinder, vSphere, Portworx); no state.
 *   Filter     the unique volumes ("<driver>/<handle>") the pod would add to the node, per CSI
 *              driver: a bound claim's PV (its CSI driver and handle, or the translated in-tree
 *              source), an unbound claim's StorageClass provisioner with a per-claim placeholder
 *              handle, a migratable in-line source translated. A claim that is missing:
 *              UnschedulableAndUnresolvable `looking up PVC ns/name: persistentvolumeclaim "name"
 *              not found`. A driver whose CSIDriver sets preventPodSchedulingIfMissing and that the
 *              node's CSINode does not list: Unschedulable "<driver> CSI driver is not installed
 *              on the node" (VolumeLimitScaling, beta and on in v1.37). Then, for each driver the
 *              node's CSINode gives an allocatable count, the node's pods' unique volumes plus the
 *              VolumeAttachments to the node not already counted, plus the pod's new ones, must
 *              not exceed the count: else Unschedulable "node(s) exceed max volume count".
 *   Events     CSINode added; CSINode updated (hint: a driver's count grew); assigned pod deleted
 *              (hint: it was on or nominated to a node and had a volume this plugin counts); claim
 *              added (hint: one of the pod's); VolumeAttachment deleted (hint: the pod has a
 *              persistentVolumeClaim volume or a migratable in-line one of the attacher's driver).
 *   Sign       VolumesSigner, as upstream.
 *
 * In-tree migration is on (upstream isCSIMigrationOn) for GCE PD, AWS EBS, Azure Disk, Cinder and
 * Portworx once the node has a CSINode, never for vSphere or Azure File: their volumes stop a
 * PreFilter Skip but are never counted. The CSINode's storage.alpha.kubernetes.io/migrated-plugins
 * annotation is not read (v1.37 does not). InPlacePodVerticalScalingSchedulerPreemption (alpha,
 * off) is not implemented. Objects are read through the host's cycle lookups (upstream's listers).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <time.h>

#include "kubesched/plugin.h"
#include "../common/sign.h"

#define ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED "node(s) exceed max volume count"

/* The in-tree plugins csi-translation-lib migrates (its inTreePlugins), by in-tree name. */
enum {
    MIG_NONE = -1,
    MIG_GCE_PD,
    MIG_AWS_EBS,
    MIG_AZURE_DISK,
    MIG_AZURE_FILE,
    MIG_CINDER,
    MIG_VSPHERE,
    MIG_PORTWORX,
    NMIG
};
static const char *const k_in_tree_names[NMIG] = {
    "kubernetes.io/gce-pd",         "kubernetes.io/aws-ebs", "kubernetes.io/azure-disk",
    "kubernetes.io/azure-file",     "kubernetes.io/cinder",  "kubernetes.io/vsphere-volume",
    "kubernetes.io/portworx-volume"};
static const char *const k_csi_names[NMIG] = {"pd.csi.storage.gke.io",    "ebs.csi.aws.com",
                                              "disk.csi.azure.com",       "file.csi.azure.com",
                                              "cinder.csi.openstack.org", "csi.vsphere.vmware.com",
                                              "pxd.portworx.com"};

/* What create() builds: read-only afterwards (any thread). */
typedef struct node_volume_limits {
    ks_sym in_tree[NMIG], csi[NMIG];
    /* upstream randomVolumeIDPrefix (rand.String(32)): the placeholder handles of unbound claims
     * cannot collide with a real volume handle */
    char prefix[33];
} node_volume_limits;

static void random_prefix(char *out, size_t n)
{
    /* rand.String's alphabet */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char raw[32] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(raw, 1, sizeof(raw), f) : 0;
    if (f)
        fclose(f);
    uint64_t x = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)out;
    for (size_t i = 0; i + 1 < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull; /* when urandom is missing */
        unsigned v = i < got ? raw[i] : (unsigned)(x >> 33);
        out[i] = alphabet[v % (sizeof(alphabet) - 1)];
    }
    out[n - 1] = '\0';
}

static void *nvl_create(const ks_args *args, ks_error *err)
{
    (void)args;
    node_volume_limits *pl = ks_alloc(sizeof(*pl));
    if (!pl) {
        ks_error_set(err, "NodeVolumeLimits: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    for (int i = 0; i < NMIG; i++) {
        pl->in_tree[i] = ks_intern(k_in_tree_names[i]);
        pl->csi[i] = ks_intern(k_csi_names[i]);
    }
    random_prefix(pl->prefix, sizeof(pl->prefix));
    return pl;
}

static void nvl_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* ---- in-tree to CSI translation (csi-translation-lib) -------------------------------------- */

/* Whether a compact source JSON is that of `key` ({"azureFile":{...}}). */
static int source_is(const char *json, const char *key)
{
    size_t n = strlen(key);
    return json && json[0] == '{' && json[1] == '"' && !strncmp(json + 2, key, n) &&
           json[2 + n] == '"';
}

/* The in-tree plugin of an in-line volume (upstream IsInlineMigratable /
 * GetInTreePluginNameFromSpec), MIG_NONE when CSI migration does not cover it. */
static int inline_plugin(const ks_pod_volume *v)
{
    switch (v->source) {
    case KS_VOLSRC_GCE_PD:
        return MIG_GCE_PD;
    case KS_VOLSRC_AWS_EBS:
        return MIG_AWS_EBS;
    case KS_VOLSRC_AZURE_DISK:
        return MIG_AZURE_DISK;
    case KS_VOLSRC_CINDER:
        return MIG_CINDER;
    case KS_VOLSRC_VSPHERE:
        return MIG_VSPHERE;
    case KS_VOLSRC_PORTWORX:
        return MIG_PORTWORX;
    case KS_VOLSRC_OTHER:
        return source_is(v->source_json, "azureFile") ? MIG_AZURE_FILE : MIG_NONE;
    default:
        return MIG_NONE;
    }
}

/* upstream isCSIMigrationOn (utils.go, v1.37): on for these plugins once the node has a CSINode. */
static int migration_on(const ks_csi_node *cn, int plugin)
{
    if (!cn)
        return 0;
    return plugin == MIG_AWS_EBS || plugin == MIG_PORTWORX || plugin == MIG_GCE_PD ||
           plugin == MIG_AZURE_DISK || plugin == MIG_CINDER;
}

/* A string field of the (flat) object at `key` inside compact JSON: copies the value into out
 * (JSON escapes kept as written, which the identifiers read here never have). 0 when absent. */
static int json_inner_string(const char *json, const char *key, const char *field, char *out,
                             size_t len)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":{", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (!p)
        return 0;
    p += strlen(pat);
    const char *end = strchr(p, '}');
    snprintf(pat, sizeof(pat), "\"%s\":\"", field);
    const char *f = strstr(p, pat);
    if (!f || (end && f > end))
        return 0;
    f += strlen(pat);
    size_t n = 0;
    while (f[n] && f[n] != '"')
        n++;
    if (n >= len)
        n = len - 1;
    memcpy(out, f, n);
    out[n] = '\0';
    return 1;
}

/* upstream KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<id>" or a bare id. NULL and a message
 * in err when the URL form holds no vol-... id. out has room for strlen(id) + 1. */
static const char *ebs_volume_id(const char *id, char *out, char *err, size_t errlen)
{
    if (strncmp(id, "aws://", 6) != 0)
        return id;
    /* url.Parse: the path starts at the first '/' after the host, ends at '?' or '#' */
    const char *host = id + 6, *path = host + strcspn(host, "/?#");
    size_t plen = *path == '/' ? strcspn(path, "?#") : 0;
    while (plen && *path == '/')
        path++, plen--;
    while (plen && path[plen - 1] == '/')
        plen--;
    memcpy(out, path, plen);
    out[plen] = '\0';
    if (strncmp(out, "vol-", 4) != 0 || strchr(out, '/')) {
        snprintf(err, errlen,
                 "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS "
                 "volume (%s)",
                 id);
        return NULL;
    }
    return out;
}

/* The translated CSI handle of an in-line volume of plugin `mig` (upstream
 * TranslateInTreeInlineVolumeToCSI), written to out; 0, or -1 with err set. */
static int inline_handle(const ks_pod_volume *v, int mig, char *out, size_t len, char *err,
                         size_t errlen)
{
    const char *id = ks_sym_str(v->id);
    char tmp[512], kind[64];
    switch (mig) {
    case MIG_GCE_PD:
        snprintf(out, len, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/%s", id);
        return 0;
    case MIG_AWS_EBS: {
        const char *h = strlen(id) < sizeof(tmp) ? ebs_volume_id(id, tmp, err, errlen) : id;
        if (!h)
            return -1;
        snprintf(out, len, "%s", h);
        return 0;
    }
    case MIG_AZURE_DISK:
        if (json_inner_string(v->source_json, "azureDisk", "kind", kind, sizeof(kind)) &&
            strcasecmp(kind, "Managed") != 0) {
            snprintf(err, errlen, "kind(%s) is not supported in csi migration", kind);
            return -1;
        }
        snprintf(out, len, "%s", id);
        return 0;
    default: /* Cinder, Portworx: the volume ID */
        snprintf(out, len, "%s", id);
        return 0;
    }
}

/* The in-tree plugin of a PV's source (upstream IsPVMigratable / GetInTreePluginNameFromSpec). */
static int pv_plugin(const ks_pv_view *pv)
{
    switch (pv->source) {
    case KS_VOLSRC_GCE_PD:
        return MIG_GCE_PD;
    case KS_VOLSRC_AWS_EBS:
        return MIG_AWS_EBS;
    case KS_VOLSRC_AZURE_DISK:
        return MIG_AZURE_DISK;
    case KS_VOLSRC_CINDER:
        return MIG_CINDER;
    case KS_VOLSRC_VSPHERE:
        return MIG_VSPHERE;
    case KS_VOLSRC_PORTWORX:
        return MIG_PORTWORX;
    default:
        /* an azureFile PV is migratable too, but its migration is never on (migration_on):
         * counted exactly as a PV of no migratable source */
        return MIG_NONE;
    }
}

/* upstream gceGetRegionFromZones: every zone "<locale>-<region>-<zone>" of one region. */
static int gce_region(const char *zones, char *out, size_t len)
{
    out[0] = '\0';
    for (const char *z = zones;;) {
        const char *end = strstr(z, "__");
        size_t n = end ? (size_t)(end - z) : strlen(z);
        int dashes = 0;
        size_t second = 0;
        for (size_t i = 0; i < n; i++)
            if (z[i] == '-' && ++dashes == 2)
                second = i;
        if (dashes != 2)
            return -1;
        if (!out[0]) {
            if (second >= len)
                return -1;
            memcpy(out, z, second);
            out[second] = '\0';
        } else if (strlen(out) != second || strncmp(out, z, second) != 0) {
            return -1;
        }
        if (!end)
            return 0;
        z = end + 2;
    }
}

/* The translated CSI handle of an in-tree PV (upstream TranslateInTreePVToCSI); -1 when the
 * translation fails (upstream then does not count the volume). */
static int pv_handle(const ks_pv_view *pv, int mig, char *out, size_t len)
{
    const char *id = ks_sym_str(pv->source_id);
    char tmp[512], err[8];
    if (mig == MIG_GCE_PD) {
        /* the zones label: beta, else GA; one zone -> zonal, several -> their region */
        ks_sym beta = ks_intern("failure-domain.beta.kubernetes.io/zone");
        ks_sym ga = ks_intern("topology.kubernetes.io/zone");
        ks_sym z = ks_labels_get(pv->labels, pv->nlabels, beta);
        if (z == KS_SYM_ABSENT || z == KS_SYM_EMPTY)
            z = ks_labels_get(pv->labels, pv->nlabels, ga);
        const char *zones = z == KS_SYM_ABSENT ? "" : ks_sym_str(z);
        if (!*zones) {
            snprintf(out, len, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/%s", id);
        } else if (!strstr(zones, "__")) {
            snprintf(out, len, "projects/UNSPECIFIED/zones/%s/disks/%s", zones, id);
        } else {
            char region[256];
            if (gce_region(zones, region, sizeof(region)) != 0)
                return -1;
            snprintf(out, len, "projects/UNSPECIFIED/regions/%s/disks/%s", region, id);
        }
        return 0;
    }
    if (mig == MIG_AWS_EBS) {
        const char *h = strlen(id) < sizeof(tmp) ? ebs_volume_id(id, tmp, err, sizeof(err)) : id;
        if (!h)
            return -1;
        snprintf(out, len, "%s", h);
        return 0;
    }
    snprintf(out, len, "%s", id); /* Azure Disk: diskURI; Cinder, Portworx: the volume ID */
    return 0;
}

/* ---- the unique volumes of a pod ----------------------------------------------------------- */

/* A set of unique volume names ("<driver>/<handle>") and their drivers, in insertion order
 * (malloc'd: Filter runs on the Filter workers). */
typedef struct volset {
    size_t n, cap;
    char **names;
    ks_sym *drivers;
    int oom;
} volset;

static void volset_free(volset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->drivers);
    memset(s, 0, sizeof(*s));
}

static ssize_t volset_find(const volset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name))
            return (ssize_t)i;
    return -1;
}

/* upstream result[getVolumeUniqueName(driver, handle)] = driver */
static void volset_put(volset *s, ks_sym driver, const char *handle)
{
    const char *d = ks_sym_str(driver);
    size_t len = strlen(d) + strlen(handle) + 2;
    char *name = malloc(len);
    if (!name) {
        s->oom = 1;
        return;
    }
    snprintf(name, len, "%s/%s", d, handle);
    if (volset_find(s, name) >= 0) {
        free(name);
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        char **nn = realloc(s->names, cap * sizeof(*nn));
        if (nn)
            s->names = nn;
        ks_sym *nd = nn ? realloc(s->drivers, cap * sizeof(*nd)) : NULL;
        if (nd)
            s->drivers = nd;
        if (!nn || !nd) {
            free(name);
            s->oom = 1;
            return;
        }
        s->cap = cap;
    }
    s->names[s->n] = name;
    s->drivers[s->n++] = driver;
}

static void volset_remove(volset *s, size_t i)
{
    free(s->names[i]);
    memmove(s->names + i, s->names + i + 1, (s->n - i - 1) * sizeof(*s->names));
    memmove(s->drivers + i, s->drivers + i + 1, (s->n - i - 1) * sizeof(*s->drivers));
    s->n--;
}

/* What filterAttachableVolumes failed with. */
typedef enum { FAV_OK = 0, FAV_NOT_FOUND, FAV_ERROR } fav_result;

/* upstream getCSIDriverInfoFromSC: an unbound claim counts for its class's provisioner (or the
 * CSI driver an in-tree provisioner migrates to) with a per-claim placeholder handle. */
static void driver_info_from_sc(const node_volume_limits *pl, ks_cycle *cycle,
                                const ks_csi_node *cn, const ks_pvc_view *pvc, volset *out)
{
    if (pvc->storage_class == KS_SYM_EMPTY)
        return; /* no class: Immediate binding, bound before scheduling */
    const ks_storage_class *sc = ks_cycle_storage_class(cycle, pvc->storage_class);
    if (!sc)
        return;
    ks_sym provisioner = ks_storage_class_view_of(sc)->provisioner;
    char handle[1200];
    snprintf(handle, sizeof(handle), "%s-%s/%s", pl->prefix, ks_sym_str(pvc->ns),
             ks_sym_str(pvc->name));
    for (int m = 0; m < NMIG; m++) {
        if (provisioner != pl->in_tree[m])
            continue;
        if (!migration_on(cn, m))
            return;
        volset_put(out, pl->csi[m], handle);
        return;
    }
    if (provisioner != KS_SYM_EMPTY) /* no driver name: not counted (filterAttachableVolumes) */
        volset_put(out, provisioner, handle);
}

/* upstream getCSIDriverInfo: the CSI driver and handle of a claim's volume. */
static void driver_info(const node_volume_limits *pl, ks_cycle *cycle, const ks_csi_node *cn,
                        const ks_pvc_view *pvc, volset *out)
{
    const ks_pv *pvo =
        pvc->volume_name == KS_SYM_EMPTY ? NULL : ks_cycle_pv(cycle, pvc->volume_name);
    if (!pvo) { /* unbound, or its PV is gone or not created yet: count it by its class */
        driver_info_from_sc(pl, cycle, cn, pvc, out);
        return;
    }
    const ks_pv_view *pv = ks_pv_view_of(pvo);
    if (pv->source == KS_VOLSRC_CSI) {
        if (pv->csi_driver != KS_SYM_EMPTY && pv->source_id != KS_SYM_EMPTY)
            volset_put(out, pv->csi_driver, ks_sym_str(pv->source_id));
        return;
    }
    int m = pv_plugin(pv);
    char handle[1200];
    if (m == MIG_NONE || !migration_on(cn, m) || pv_handle(pv, m, handle, sizeof(handle)) != 0 ||
        !handle[0])
        return;
    volset_put(out, pl->csi[m], handle);
}

/* upstream filterAttachableVolumes: the pod's unique volumes into out. new_pod: a claim that is
 * missing fails (FAV_NOT_FOUND); for a pod of the node it is not counted. msg: the error. */
static fav_result attachable_volumes(const node_volume_limits *pl, ks_cycle *cycle,
                                     const ks_pod *pod, const ks_csi_node *cn, int new_pod,
                                     volset *out, char *msg, size_t len)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    ks_sym ns = ks_pod_namespace(pod);
    for (size_t i = 0; i < n; i++) {
        const ks_pod_volume *v = &vols[i];
        if (v->source != KS_VOLSRC_PVC && v->source != KS_VOLSRC_EPHEMERAL) {
            /* upstream checkAttachableInlineVolume */
            int m = inline_plugin(v);
            if (m == MIG_NONE || !migration_on(cn, m))
                continue;
            char handle[1200], err[600];
            if (inline_handle(v, m, handle, sizeof(handle), err, sizeof(err)) != 0) {
                snprintf(msg, len, "converting volume(%s) from inline to csi: %s",
                         ks_sym_str(v->name), err);
                return FAV_ERROR;
            }
            volset_put(out, pl->csi[m], handle);
            continue;
        }
        if (v->claim == KS_SYM_EMPTY) {
            snprintf(msg, len, "PersistentVolumeClaim had no name");
            return FAV_ERROR;
        }
        const ks_pvc *pvco = ks_cycle_pvc(cycle, ns, v->claim);
        if (!pvco) {
            if (!new_pod)
                continue; /* no guarantee it belongs to the running pod: not counted */
            snprintf(msg, len, "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not found",
                     ks_sym_str(ns), ks_sym_str(v->claim), ks_sym_str(v->claim));
            return FAV_NOT_FOUND;
        }
        const ks_pvc_view *pvc = ks_pvc_view_of(pvco);
        /* upstream ephemeral.VolumeIsForPod: the pod must be the claim's controller */
        if (v->source == KS_VOLSRC_EPHEMERAL && strcmp(pvc->controller_uid, ks_pod_uid(pod)) != 0) {
            snprintf(msg, len, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                     ks_sym_str(pvc->ns), ks_sym_str(pvc->name), ks_sym_str(ns),
                     ks_sym_str(ks_pod_name(pod)));
            return FAV_ERROR;
        }
        driver_info(pl, cycle, cn, pvc, out);
    }
    return FAV_OK;
}

/* ---- PreFilter and Filter ------------------------------------------------------------------ */

/* Whether a volume is one this plugin counts (upstream's PreFilter and hint test). */
static int counted_kind(const ks_pod_volume *v)
{
    return v->source == KS_VOLSRC_PVC || v->source == KS_VOLSRC_EPHEMERAL ||
           inline_plugin(v) != MIG_NONE;
}

static ks_code nvl_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                              ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)result;
    (void)st;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++)
        if (counted_kind(&vols[i]))
            return KS_SUCCESS;
    return KS_SKIP;
}

/* upstream checkCSIDriverOnNode: a driver that opts in (preventPodSchedulingIfMissing) must be
 * listed by the node's CSINode; a driver without a CSIDriver object may not be CSI at all. */
static int driver_on_node(ks_cycle *cycle, ks_sym driver, const ks_csi_node *cn)
{
    const ks_csi_driver *d = ks_cycle_csi_driver(cycle, driver);
    if (!d)
        return 1;
    const ks_csi_driver_view *dv = ks_csi_driver_view_of(d);
    if (dv->size < offsetof(ks_csi_driver_view, prevent_pod_scheduling_if_missing) +
                       sizeof(dv->prevent_pod_scheduling_if_missing) ||
        !dv->prevent_pod_scheduling_if_missing)
        return 1;
    if (!cn)
        return 0;
    const ks_csi_node_view *nv = ks_csi_node_view_of(cn);
    for (uint32_t i = 0; i < nv->ndrivers; i++)
        if (nv->drivers[i].name == driver)
            return 1;
    return 0;
}

/* A per-driver count (few drivers: a short list). */
typedef struct driver_count {
    ks_sym driver;
    int64_t n;
} driver_count;

static void count_add(driver_count *c, size_t *n, ks_sym driver)
{
    for (size_t i = 0; i < *n; i++)
        if (c[i].driver == driver) {
            c[i].n++;
            return;
        }
    c[*n].driver = driver;
    c[(*n)++].n = 1;
}

static int64_t count_of(const driver_count *c, size_t n, ks_sym driver)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].driver == driver)
            return c[i].n;
    return 0;
}

/* upstream getNodeVolumeAttachmentInfo: the node's attachments of CSI PVs, as unique names. */
static void node_attachments(ks_cycle *cycle, ks_sym node, volset *out)
{
    const ks_volume_attachment *const *vas;
    size_t n = ks_cycle_volume_attachments(cycle, node, &vas);
    for (size_t i = 0; i < n; i++) {
        const ks_volume_attachment_view *va = ks_volume_attachment_view_of(vas[i]);
        if (va->node_name != node || va->attacher == KS_SYM_EMPTY || va->pv_name == KS_SYM_ABSENT)
            continue;
        const ks_pv *pvo = ks_cycle_pv(cycle, va->pv_name);
        if (!pvo)
            continue;
        const ks_pv_view *pv = ks_pv_view_of(pvo);
        if (pv->source != KS_VOLSRC_CSI)
            continue;
        volset_put(out, va->attacher, ks_sym_str(pv->source_id));
    }
}

static ks_code oom(ks_status *st)
{
    ks_status_reason(st, "NodeVolumeLimits: out of memory in Filter");
    return KS_ERROR;
}

/* filter: Filter workers, concurrently; reads the pod, the node and the cycle's lookups. */
static ks_code nvl_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                          ks_status *st)
{
    const node_volume_limits *pl = self;
    const ks_pod_volume *vols;
    if (ks_pod_volumes(pod, &vols) == 0)
        return KS_SUCCESS;
    ks_sym node = ks_node_name(ks_node_info_node(ni));
    const ks_csi_node *cn = ks_cycle_csi_node(cycle, node); /* NULL: the node has none yet */
    char msg[1400];
    volset nv = {0}, attached = {0}, vas = {0};
    driver_count *counts = NULL, *news = NULL;
    ks_code code = KS_SUCCESS;

    fav_result r = attachable_volumes(pl, cycle, pod, cn, 1, &nv, msg, sizeof(msg));
    if (nv.oom) {
        code = oom(st);
        goto out;
    }
    if (r != FAV_OK) {
        ks_status_reason(st, msg);
        code = r == FAV_NOT_FOUND ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : KS_ERROR;
        goto out;
    }
    if (nv.n == 0)
        goto out;

    /* VolumeLimitScaling (beta, on in v1.37) */
    for (size_t i = 0; i < nv.n; i++) {
        if (!driver_on_node(cycle, nv.drivers[i], cn)) {
            ks_status_reasonf(st, "%s CSI driver is not installed on the node",
                              ks_sym_str(nv.drivers[i]));
            code = KS_UNSCHEDULABLE;
            goto out;
        }
    }

    /* upstream getVolumeLimits: the drivers with an allocatable count */
    const ks_csi_node_view *cv = cn ? ks_csi_node_view_of(cn) : NULL;
    size_t nlimits = 0;
    for (uint32_t i = 0; cv && i < cv->ndrivers; i++)
        nlimits += cv->drivers[i].has_allocatable_count != 0;
    if (nlimits == 0)
        goto out;

    size_t npods = ks_node_info_pod_count(ni);
    for (size_t i = 0; i < npods; i++) {
        r = attachable_volumes(pl, cycle, ks_node_info_pod_at(ni, i), cn, 0, &attached, msg,
                               sizeof(msg));
        if (attached.oom) {
            code = oom(st);
            goto out;
        }
        if (r != FAV_OK) {
            ks_status_reason(st, msg);
            code = KS_ERROR;
            goto out;
        }
    }
    node_attachments(cycle, node, &vas);
    if (vas.oom) {
        code = oom(st);
        goto out;
    }
    size_t ndrivers = attached.n + vas.n + nv.n;
    counts = calloc(ndrivers ? ndrivers : 1, sizeof(*counts));
    news = calloc(nv.n, sizeof(*news));
    if (!counts || !news) {
        code = oom(st);
        goto out;
    }
    size_t ncounts = 0, nnews = 0;
    for (size_t i = 0; i < attached.n; i++) {
        ssize_t j = volset_find(&nv, attached.names[i]);
        if (j >= 0) /* one volume used by several pods counts once */
            volset_remove(&nv, (size_t)j);
        count_add(counts, &ncounts, attached.drivers[i]);
    }
    for (size_t i = 0; i < vas.n; i++)
        if (volset_find(&attached, vas.names[i]) < 0)
            count_add(counts, &ncounts, vas.drivers[i]);
    for (size_t i = 0; i < nv.n; i++)
        count_add(news, &nnews, nv.drivers[i]);
    for (size_t i = 0; i < nnews; i++) {
        for (uint32_t d = 0; d < cv->ndrivers; d++) {
            const ks_csi_node_driver *dr = &cv->drivers[d];
            if (dr->name != news[i].driver || !dr->has_allocatable_count)
                continue;
            /* upstream's map keeps the last entry of a driver listed twice */
            int64_t limit = dr->allocatable_count;
            for (uint32_t e = d + 1; e < cv->ndrivers; e++)
                if (cv->drivers[e].name == dr->name && cv->drivers[e].has_allocatable_count)
                    limit = cv->drivers[e].allocatable_count;
            if (count_of(counts, ncounts, news[i].driver) + news[i].n > limit) {
                ks_status_reason(st, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED);
                code = KS_UNSCHEDULABLE;
                goto out;
            }
            break;
        }
    }
out:
    free(counts);
    free(news);
    volset_free(&nv);
    volset_free(&attached);
    volset_free(&vas);
    return code;
}

/* ---- events and hints --------------------------------------------------------------------- */

/* upstream isSchedulableAfterCSINodeUpdated: a driver's allocatable count grew (a driver without
 * one reads as 0). */
static ks_queueing_hint nvl_after_csi_node_updated(void *self, const ks_pod *pod,
                                                   const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    if (!ev->old_obj || !ev->new_obj)
        return KS_QUEUE;
    const ks_csi_node_view *o = ks_csi_node_view_of(ev->old_obj);
    const ks_csi_node_view *n = ks_csi_node_view_of(ev->new_obj);
    for (uint32_t i = 0; i < n->ndrivers; i++) {
        int64_t old_limit = 0, new_limit = 0;
        /* the old map keeps the last entry of a name */
        for (uint32_t j = 0; j < o->ndrivers; j++)
            if (o->drivers[j].name == n->drivers[i].name)
                old_limit =
                    o->drivers[j].has_allocatable_count ? o->drivers[j].allocatable_count : 0;
        if (n->drivers[i].has_allocatable_count)
            new_limit = n->drivers[i].allocatable_count;
        if (new_limit > old_limit)
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterAssignedPodDeleted */
static ks_queueing_hint nvl_after_assigned_pod_deleted(void *self, const ks_pod *pod,
                                                       const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    const ks_pod *deleted = ev->old_pod;
    if (!deleted)
        return KS_QUEUE;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(deleted, &vols);
    if (n == 0)
        return KS_QUEUE_SKIP;
    ks_sym nn = ks_pod_node_name(deleted), nom = ks_pod_nominated_node_name(deleted);
    if ((nn == KS_SYM_EMPTY || nn == KS_SYM_ABSENT) &&
        (nom == KS_SYM_EMPTY || nom == KS_SYM_ABSENT))
        return KS_QUEUE_SKIP;
    for (size_t i = 0; i < n; i++)
        if (counted_kind(&vols[i]))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterPVCAdded: one of the pod's claims (persistentVolumeClaim or
 * ephemeral) was created. */
static ks_queueing_hint nvl_after_pvc_added(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    if (!ev->new_obj)
        return KS_QUEUE;
    const ks_pvc_view *c = ks_pvc_view_of(ev->new_obj);
    if (c->ns != ks_pod_namespace(pod))
        return KS_QUEUE_SKIP;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++)
        if ((vols[i].source == KS_VOLSRC_PVC || vols[i].source == KS_VOLSRC_EPHEMERAL) &&
            vols[i].claim == c->name)
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream isSchedulableAfterVolumeAttachmentDeleted: the pod has a persistentVolumeClaim volume,
 * or a migratable in-line one whose CSI driver is the attachment's attacher (a translation error
 * queues the pod, as upstream's hint error does). */
static ks_queueing_hint nvl_after_va_deleted(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    const node_volume_limits *pl = self;
    if (!ev->old_obj)
        return KS_QUEUE;
    const ks_volume_attachment_view *va = ks_volume_attachment_view_of(ev->old_obj);
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    for (size_t i = 0; i < n; i++) {
        if (vols[i].source == KS_VOLSRC_PVC)
            return KS_QUEUE;
        int m = inline_plugin(&vols[i]);
        if (m == MIG_NONE)
            continue;
        char handle[1200], err[600];
        if (inline_handle(&vols[i], m, handle, sizeof(handle), err, sizeof(err)) != 0)
            return KS_QUEUE;
        if (va->attacher == pl->csi[m])
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37). */
static size_t nvl_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        /* no hint: any new CSINode may make a pod rejected for its CSI volumes schedulable */
        {{KS_RES_CSI_NODE, KS_ACT_ADD}, NULL},
        {{KS_RES_CSI_NODE, KS_ACT_UPDATE_ANY}, nvl_after_csi_node_updated},
        {{KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, nvl_after_assigned_pod_deleted},
        {{KS_RES_PERSISTENT_VOLUME_CLAIM, KS_ACT_ADD}, nvl_after_pvc_added},
        {{KS_RES_VOLUME_ATTACHMENT, KS_ACT_DELETE}, nvl_after_va_deleted},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream CSILimits.SignPod: VolumesSigner. */
static ks_code nvl_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    return ks_sign_volumes(pod, sig, st);
}

const ks_plugin_desc ks_plugin_node_volume_limits = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeVolumeLimits",
    .create = nvl_create,
    .destroy = nvl_destroy,
    .pre_filter = nvl_pre_filter,
    .filter = nvl_filter,
    .events_with_hints = nvl_events,
    .sign = nvl_sign,
};
