/*
 * NodeVolumeLimits (upstream plugins/nodevolumelimits/csi.go and utils.go, v1.37, with the in-tree
 * to CSI translation of k8s.io/csi-translation-lib v0.37.2).
 *
 *   PreFilter  Skip unless the pod has a persistentVolumeClaim or ephemeral volume or an in-line
 *              source that CSI migration translates (GCE PD, AWS EBS, Azure Disk, Azure File,
 *              Cinder, vSphere, Portworx). Otherwise resolves the pod's own volumes once for the
 *              cycle (see "Cost" below).
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
 *
 * Cost. Upstream builds string keys for every volume of every pod of every node it filters. Here:
 *   - the pod's own volumes do not depend on the node but through "has the node a CSINode" (which
 *     turns migration on), so PreFilter resolves them once for each answer (claims, PVs,
 *     StorageClasses, CSIDrivers looked up once per cycle, not once per node);
 *   - a node's pods and VolumeAttachments can add at most one unique volume each, so when that
 *     count (pod volumes from the specs, attachments from the index, no object looked up) plus
 *     the pod's new volumes of a driver stays within the driver's count for every driver, the
 *     exact count cannot exceed it either, and Filter succeeds without resolving anything -
 *     provided that resolving the node's pods could not fail (a claim without a name, an
 *     ephemeral claim not owned by its pod, an in-line volume that fails translation: those
 *     take the exact path, which returns upstream's error);
 *   - the exact path (a node near its limit) resolves as upstream does, into unique names kept
 *     in one buffer with their hashes (stack buffers for a usual node: no allocation).
 * Nothing is kept between cycles: the storage objects change through the store without a
 * signal a plugin could check, so a cached count could not be proven current.
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
    ks_sym zone_beta, zone_ga; /* the zone labels a GCE PD PV's translation reads */
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
    pl->zone_beta = ks_intern("failure-domain.beta.kubernetes.io/zone");
    pl->zone_ga = ks_intern("topology.kubernetes.io/zone");
    random_prefix(pl->prefix, sizeof(pl->prefix));
    return pl;
}

static void nvl_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* A symbol's text ("" for one the host does not know). */
static const char *sym_s(ks_sym s)
{
    const char *p = ks_sym_str(s);
    return p ? p : "";
}

/* ---- unique volume names ------------------------------------------------------------------- */

/* One entry of upstream's map: the key getVolumeUniqueName(driver, handle) = "<driver>/<handle>"
 * (bytes [off, off + len) of its set's buffer, hash = FNV-1a of them, so that names are compared
 * byte by byte only when their hashes agree) and the value, the driver. */
typedef struct vname {
    uint64_t hash;
    ks_sym driver;
    uint32_t off, len;
} vname;

/* A set of unique names in insertion order (upstream's map[string]string, which Filter only
 * counts). It starts on the caller's buffers (a Filter call's stack) and moves to the heap only
 * when they are full, so that a usual node costs no allocation. Owned by one thread. */
typedef struct nameset {
    vname *v;
    size_t n, cap;
    char *s;
    size_t len, scap;
    int oom, heap_v, heap_s;
} nameset;

static void nameset_init(nameset *s, vname *vbuf, size_t vcap, char *sbuf, size_t scap)
{
    memset(s, 0, sizeof(*s));
    s->v = vbuf;
    s->cap = vcap;
    s->s = sbuf;
    s->scap = scap;
}

static void nameset_free(nameset *s)
{
    if (s->heap_v)
        free(s->v);
    if (s->heap_s)
        free(s->s);
    memset(s, 0, sizeof(*s));
}

/* Room for `need` bytes of names: the caller's buffer, else the heap (its contents kept). */
static int nameset_room(nameset *s, size_t need)
{
    if (need <= s->scap)
        return 0;
    size_t cap = s->scap ? s->scap : 256;
    while (cap < need)
        cap *= 2;
    char *p = s->heap_s ? realloc(s->s, cap) : malloc(cap);
    if (!p)
        return -1;
    if (!s->heap_s && s->len)
        memcpy(p, s->s, s->len);
    s->s = p;
    s->scap = cap;
    s->heap_s = 1;
    return 0;
}

static void ns_append(nameset *s, const char *p, size_t n)
{
    if (s->oom)
        return;
    if (s->len + n > s->scap && nameset_room(s, s->len + n) != 0) {
        s->oom = 1;
        return;
    }
    memcpy(s->s + s->len, p, n);
    s->len += n;
}

static void ns_appends(nameset *s, const char *p) { ns_append(s, p, strlen(p)); }

static uint64_t name_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

static ssize_t ns_find(const nameset *s, uint64_t hash, const char *p, size_t n)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].hash == hash && s->v[i].len == n && !memcmp(s->s + s->v[i].off, p, n))
            return (ssize_t)i;
    return -1;
}

/* Whether set b holds entry i of set a. */
static int ns_has(const nameset *b, const nameset *a, size_t i)
{
    return ns_find(b, a->v[i].hash, a->s + a->v[i].off, a->v[i].len) >= 0;
}

/* Starts the name "<driver>/..." at the end of the buffer; returns where it starts. */
static size_t ns_begin(nameset *s, ks_sym driver)
{
    size_t off = s->len;
    ns_appends(s, sym_s(driver));
    ns_append(s, "/", 1);
    return off;
}

/* Drops the name begun at off. */
static void ns_drop(nameset *s, size_t off)
{
    if (!s->oom)
        s->len = off;
}

/* Ends the name begun at off: upstream result[name] = driver. A name already in the set keeps
 * its entry (as this plugin always did; two drivers could only give the same name if one of them
 * had a '/' in it and the other's handle the rest). */
static void ns_commit(nameset *s, size_t off, ks_sym driver)
{
    if (s->oom)
        return;
    size_t n = s->len - off;
    uint64_t h = name_hash(s->s + off, n);
    if (ns_find(s, h, s->s + off, n) >= 0) {
        s->len = off;
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        vname *v = s->heap_v ? realloc(s->v, cap * sizeof(*v)) : malloc(cap * sizeof(*v));
        if (!v) {
            s->oom = 1;
            return;
        }
        if (!s->heap_v && s->n)
            memcpy(v, s->v, s->n * sizeof(*v));
        s->v = v;
        s->cap = cap;
        s->heap_v = 1;
    }
    s->v[s->n++] = (vname){h, driver, (uint32_t)off, (uint32_t)n};
}

/* ---- in-tree to CSI translation (csi-translation-lib) -------------------------------------- */

/* Whether a compact source JSON is that of `key` ({"azureFile":{...}}). */
static int source_is(const char *json, const char *key)
{
    size_t n = strlen(key);
    return json && json[0] == '{' && json[1] == '"' && !strncmp(json + 2, key, n) &&
           json[2 + n] == '"';
}

/* The migratable in-tree plugin of a volume source, MIG_NONE for the others. */
static int plugin_of_source(uint32_t source)
{
    switch (source) {
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
        return MIG_NONE;
    }
}

/* The in-tree plugin of an in-line volume (upstream IsInlineMigratable /
 * GetInTreePluginNameFromSpec), MIG_NONE when CSI migration does not cover it. */
static int inline_plugin(const ks_pod_volume *v)
{
    if (v->source == KS_VOLSRC_OTHER)
        return source_is(v->source_json, "azureFile") ? MIG_AZURE_FILE : MIG_NONE;
    return plugin_of_source(v->source);
}

/* upstream isCSIMigrationOn (utils.go, v1.37): on for these plugins once the node has a CSINode
 * (has_csi_node: the node's CSINode exists). */
static int migration_on(int has_csi_node, int plugin)
{
    if (!has_csi_node)
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

/* upstream KubernetesVolumeIDToEBSVolumeID: the volume ID inside id, "aws://<zone>/<id>" or a
 * bare id, as a span of id (*out, *len); -1 when the URL form holds no vol-... id. */
static int ebs_volume_id(const char *id, const char **out, size_t *len)
{
    if (strncmp(id, "aws://", 6) != 0) {
        *out = id;
        *len = strlen(id);
        return 0;
    }
    /* url.Parse: the path starts at the first '/' after the host, ends at '?' or '#' */
    const char *host = id + 6, *path = host + strcspn(host, "/?#");
    size_t plen = *path == '/' ? strcspn(path, "?#") : 0;
    while (plen && *path == '/')
        path++, plen--;
    while (plen && path[plen - 1] == '/')
        plen--;
    *out = path;
    *len = plen;
    return plen >= 4 && !strncmp(path, "vol-", 4) && !memchr(path, '/', plen) ? 0 : -1;
}

/* Whether an in-line volume of plugin `mig` translates (upstream
 * TranslateInTreeInlineVolumeToCSI): 0, or -1 with the translator's error in err. */
static int inline_check(const ks_pod_volume *v, int mig, char *err, size_t errlen)
{
    const char *id = sym_s(v->id), *p;
    size_t n;
    char kind[64];
    if (mig == MIG_AWS_EBS && ebs_volume_id(id, &p, &n) != 0) {
        snprintf(err, errlen,
                 "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS "
                 "volume (%s)",
                 id);
        return -1;
    }
    if (mig == MIG_AZURE_DISK &&
        json_inner_string(v->source_json, "azureDisk", "kind", kind, sizeof(kind)) &&
        strcasecmp(kind, "Managed") != 0) {
        snprintf(err, errlen, "kind(%s) is not supported in csi migration", kind);
        return -1;
    }
    return 0;
}

/* The unique name of an in-line volume of plugin `mig` that inline_check accepted, into s. */
static void inline_put(const node_volume_limits *pl, nameset *s, const ks_pod_volume *v, int mig)
{
    const char *id = sym_s(v->id), *p;
    size_t n, off = ns_begin(s, pl->csi[mig]);
    switch (mig) {
    case MIG_GCE_PD:
        ns_appends(s, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/");
        ns_appends(s, id);
        break;
    case MIG_AWS_EBS:
        ebs_volume_id(id, &p, &n);
        ns_append(s, p, n);
        break;
    default: /* Azure Disk: diskURI; Cinder, Portworx: the volume ID */
        ns_appends(s, id);
        break;
    }
    ns_commit(s, off, pl->csi[mig]);
}

/* The in-tree plugin of a PV's source (upstream IsPVMigratable / GetInTreePluginNameFromSpec).
 * An azureFile PV is migratable too, but its migration is never on (migration_on): it counts
 * exactly as a PV of no migratable source. */
static int pv_plugin(const ks_pv_view *pv) { return plugin_of_source(pv->source); }

/* upstream gceGetRegionFromZones: every zone "<locale>-<region>-<zone>" of one region, which is
 * the first *len bytes of zones; -1 otherwise. */
static int gce_region(const char *zones, size_t *len)
{
    int first = 1;
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
        if (first) {
            *len = second;
            first = 0;
        } else if (*len != second || strncmp(zones, z, second) != 0) {
            return -1;
        }
        if (!end)
            return 0;
        z = end + 2;
    }
}

/* The unique name of an in-tree PV of plugin `mig` (upstream TranslateInTreePVToCSI) into s;
 * nothing when the translation fails or gives no handle (upstream then does not count it). */
static void pv_put(const node_volume_limits *pl, nameset *s, const ks_pv_view *pv, int mig)
{
    const char *id = sym_s(pv->source_id), *p;
    size_t n, off = ns_begin(s, pl->csi[mig]), handle = s->len;
    if (mig == MIG_GCE_PD) {
        /* the zones label: beta, else GA; one zone -> zonal, several -> their region */
        ks_sym z = ks_labels_get(pv->labels, pv->nlabels, pl->zone_beta);
        if (z == KS_SYM_ABSENT || z == KS_SYM_EMPTY)
            z = ks_labels_get(pv->labels, pv->nlabels, pl->zone_ga);
        const char *zones = z == KS_SYM_ABSENT ? "" : sym_s(z);
        if (!*zones) {
            ns_appends(s, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/");
        } else if (!strstr(zones, "__")) {
            ns_appends(s, "projects/UNSPECIFIED/zones/");
            ns_appends(s, zones);
            ns_appends(s, "/disks/");
        } else {
            if (gce_region(zones, &n) != 0) {
                ns_drop(s, off);
                return;
            }
            ns_appends(s, "projects/UNSPECIFIED/regions/");
            ns_append(s, zones, n);
            ns_appends(s, "/disks/");
        }
        ns_appends(s, id);
    } else if (mig == MIG_AWS_EBS) {
        if (ebs_volume_id(id, &p, &n) != 0) {
            ns_drop(s, off);
            return;
        }
        ns_append(s, p, n);
    } else {
        ns_appends(s, id); /* Azure Disk: diskURI; Cinder, Portworx: the volume ID */
    }
    if (s->len == handle) {
        ns_drop(s, off); /* no handle: not counted */
        return;
    }
    ns_commit(s, off, pl->csi[mig]);
}

/* ---- the unique volumes of a pod ----------------------------------------------------------- */

/* What filterAttachableVolumes failed with. */
typedef enum { FAV_OK = 0, FAV_NOT_FOUND, FAV_ERROR } fav_result;

/* upstream getCSIDriverInfoFromSC: an unbound claim counts for its class's provisioner (or the
 * CSI driver an in-tree provisioner migrates to) with a per-claim placeholder handle. */
static void driver_info_from_sc(const node_volume_limits *pl, ks_cycle *cycle, int has_csi_node,
                                const ks_pvc_view *pvc, nameset *out)
{
    if (pvc->storage_class == KS_SYM_EMPTY)
        return; /* no class: Immediate binding, bound before scheduling */
    const ks_storage_class *sc = ks_cycle_storage_class(cycle, pvc->storage_class);
    if (!sc)
        return;
    ks_sym driver = ks_storage_class_view_of(sc)->provisioner;
    for (int m = 0; m < NMIG; m++) {
        if (driver != pl->in_tree[m])
            continue;
        if (!migration_on(has_csi_node, m))
            return;
        driver = pl->csi[m];
        break;
    }
    if (driver == KS_SYM_EMPTY) /* no driver name: not counted (filterAttachableVolumes) */
        return;
    size_t off = ns_begin(out, driver);
    ns_appends(out, pl->prefix);
    ns_append(out, "-", 1);
    ns_appends(out, sym_s(pvc->ns));
    ns_append(out, "/", 1);
    ns_appends(out, sym_s(pvc->name));
    ns_commit(out, off, driver);
}

/* upstream getCSIDriverInfo: the CSI driver and handle of a claim's volume. */
static void driver_info(const node_volume_limits *pl, ks_cycle *cycle, int has_csi_node,
                        const ks_pvc_view *pvc, nameset *out)
{
    const ks_pv *pvo =
        pvc->volume_name == KS_SYM_EMPTY ? NULL : ks_cycle_pv(cycle, pvc->volume_name);
    if (!pvo) { /* unbound, or its PV is gone or not created yet: count it by its class */
        driver_info_from_sc(pl, cycle, has_csi_node, pvc, out);
        return;
    }
    const ks_pv_view *pv = ks_pv_view_of(pvo);
    if (pv->source == KS_VOLSRC_CSI) {
        if (pv->csi_driver != KS_SYM_EMPTY && pv->source_id != KS_SYM_EMPTY) {
            size_t off = ns_begin(out, pv->csi_driver);
            ns_appends(out, sym_s(pv->source_id));
            ns_commit(out, off, pv->csi_driver);
        }
        return;
    }
    int m = pv_plugin(pv);
    if (m != MIG_NONE && migration_on(has_csi_node, m))
        pv_put(pl, out, pv, m);
}

/* upstream filterAttachableVolumes: the pod's unique volumes into out, for a node with
 * (has_csi_node) or without a CSINode. new_pod: a claim that is missing fails (FAV_NOT_FOUND);
 * for a pod of the node it is not counted. msg: the error. */
static fav_result attachable_volumes(const node_volume_limits *pl, ks_cycle *cycle,
                                     const ks_pod *pod, int has_csi_node, int new_pod, nameset *out,
                                     char *msg, size_t len)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    ks_sym ns = ks_pod_namespace(pod);
    for (size_t i = 0; i < n; i++) {
        const ks_pod_volume *v = &vols[i];
        if (v->source != KS_VOLSRC_PVC && v->source != KS_VOLSRC_EPHEMERAL) {
            /* upstream checkAttachableInlineVolume */
            int m = inline_plugin(v);
            if (m == MIG_NONE || !migration_on(has_csi_node, m))
                continue;
            char err[600];
            if (inline_check(v, m, err, sizeof(err)) != 0) {
                snprintf(msg, len, "converting volume(%s) from inline to csi: %s", sym_s(v->name),
                         err);
                return FAV_ERROR;
            }
            inline_put(pl, out, v, m);
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
                     sym_s(ns), sym_s(v->claim), sym_s(v->claim));
            return FAV_NOT_FOUND;
        }
        const ks_pvc_view *pvc = ks_pvc_view_of(pvco);
        /* upstream ephemeral.VolumeIsForPod: the pod must be the claim's controller */
        if (v->source == KS_VOLSRC_EPHEMERAL && strcmp(pvc->controller_uid, ks_pod_uid(pod)) != 0) {
            snprintf(msg, len, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                     sym_s(pvc->ns), sym_s(pvc->name), sym_s(ns), sym_s(ks_pod_name(pod)));
            return FAV_ERROR;
        }
        driver_info(pl, cycle, has_csi_node, pvc, out);
    }
    return FAV_OK;
}

/* Whether a volume is one this plugin counts (upstream's PreFilter and hint test). */
static int counted_kind(const ks_pod_volume *v)
{
    return v->source == KS_VOLSRC_PVC || v->source == KS_VOLSRC_EPHEMERAL ||
           inline_plugin(v) != MIG_NONE;
}

/* ---- the pod's own volumes, once per cycle ------------------------------------------------- */

/* The pod's unique volumes for a node with or without a CSINode (upstream's newVolumes), what
 * Filter needs of them: read-only once built, shared by the Filter workers. */
typedef struct new_vols {
    fav_result r;
    int oom;
    const char *msg; /* r != FAV_OK */
    size_t n;
    const vname *v;
    const char *s;
    /* per name: its driver has a CSIDriver with preventPodSchedulingIfMissing (it must then be
     * on the node's CSINode; upstream checkCSIDriverOnNode) */
    const unsigned char *must_be_listed;
    /* the distinct drivers of the names, in first-seen order, and how many names each has */
    size_t ndrivers;
    const ks_sym *drivers;
    const int64_t *counts;
    void *block; /* what the arrays above live in */
} new_vols;

/* PreFilter's state: [0] for a node without a CSINode, [1] for a node with one. */
typedef struct nvl_state {
    new_vols var[2];
} nvl_state;

static const int state_key = 0;

/* upstream checkCSIDriverOnNode's first half: whether the driver opts in (a driver without a
 * CSIDriver object may not be CSI at all). */
static int driver_opts_in(ks_cycle *cycle, ks_sym driver)
{
    const ks_csi_driver *d = ks_cycle_csi_driver(cycle, driver);
    if (!d)
        return 0;
    const ks_csi_driver_view *dv = ks_csi_driver_view_of(d);
    return dv->size >= offsetof(ks_csi_driver_view, prevent_pod_scheduling_if_missing) +
                           sizeof(dv->prevent_pod_scheduling_if_missing) &&
           dv->prevent_pod_scheduling_if_missing;
}

/* Resolves the pod's volumes for has_csi_node into out, its arrays in one block from alloc
 * (the cycle's arena at PreFilter, the heap when Filter runs without PreFilter's state).
 * Returns 0, or -1 when out of memory (out->oom set). */
static int new_vols_build(const node_volume_limits *pl, ks_cycle *cycle, const ks_pod *pod,
                          int has_csi_node, void *(*alloc)(void *, size_t), void *actx,
                          new_vols *out)
{
    vname vbuf[16];
    char sbuf[1024], msg[1400];
    nameset s;
    nameset_init(&s, vbuf, 16, sbuf, sizeof(sbuf));
    memset(out, 0, sizeof(*out));
    out->r = attachable_volumes(pl, cycle, pod, has_csi_node, 1, &s, msg, sizeof(msg));
    if (s.oom)
        goto oom;
    size_t msglen = out->r != FAV_OK ? strlen(msg) + 1 : 0;
    size_t n = out->r == FAV_OK ? s.n : 0, slen = out->r == FAV_OK ? s.len : 0;
    /* layout (in alignment order): vnames, counts, drivers, names' bytes, flags per name, flags
     * per driver, message */
    size_t size = n * (sizeof(vname) + sizeof(ks_sym) + sizeof(int64_t) + 2) + slen + msglen;
    char *b = size ? alloc(actx, size) : NULL;
    if (size && !b)
        goto oom;
    out->block = b;
    if (size == 0) { /* no error, no volume */
        nameset_free(&s);
        return 0;
    }
    if (msglen) {
        memcpy(b, msg, msglen);
        out->msg = b;
        nameset_free(&s);
        return 0;
    }
    vname *v = (vname *)b;
    int64_t *counts = (int64_t *)(v + n);
    ks_sym *drivers = (ks_sym *)(counts + n);
    char *str = (char *)(drivers + n);
    unsigned char *flags = (unsigned char *)str + slen, *dflags = flags + n;
    if (n) {
        memcpy(v, s.v, n * sizeof(*v));
        memcpy(str, s.s, slen);
    }
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        size_t d = 0;
        while (d < nd && drivers[d] != v[i].driver)
            d++;
        if (d == nd) { /* one CSIDriver lookup per driver */
            drivers[nd] = v[i].driver;
            counts[nd] = 0;
            dflags[nd++] = (unsigned char)driver_opts_in(cycle, v[i].driver);
        }
        counts[d]++;
        flags[i] = dflags[d];
    }
    out->n = n;
    out->v = v;
    out->s = str;
    out->must_be_listed = flags;
    out->ndrivers = nd;
    out->drivers = drivers;
    out->counts = counts;
    nameset_free(&s);
    return 0;
oom:
    nameset_free(&s);
    out->oom = 1;
    return -1;
}

static void *arena_alloc(void *cycle, size_t n) { return ks_cycle_alloc(cycle, n); }
static void *heap_alloc(void *unused, size_t n)
{
    (void)unused;
    return malloc(n);
}

/* ---- PreFilter and Filter ------------------------------------------------------------------ */

/* pre_filter: scheduling thread. Writes the state the Filter workers then only read. */
static ks_code nvl_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                              ks_prefilter_result *result, ks_status *st)
{
    (void)result;
    (void)st;
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols);
    size_t i = 0;
    while (i < n && !counted_kind(&vols[i]))
        i++;
    if (i == n)
        return KS_SKIP;
    /* Without the state (out of memory) Filter resolves the pod's volumes itself. */
    nvl_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    if (!s)
        return KS_SUCCESS;
    for (int has = 0; has < 2; has++)
        if (new_vols_build(self, cycle, pod, has, arena_alloc, cycle, &s->var[has]) != 0)
            return KS_SUCCESS;
    ks_cycle_write(cycle, &state_key, s, NULL);
    return KS_SUCCESS;
}

/* upstream checkCSIDriverOnNode's second half: the node's CSINode lists the driver. */
static int listed_on(const ks_csi_node_view *cv, ks_sym driver)
{
    for (uint32_t i = 0; cv && i < cv->ndrivers; i++)
        if (cv->drivers[i].name == driver)
            return 1;
    return 0;
}

/* upstream getVolumeLimits(csiNode)[driver]: the last entry of the driver with an allocatable
 * count (a map keeps the last). 0 when it has none. */
static int limit_of(const ks_csi_node_view *cv, ks_sym driver, int64_t *limit)
{
    int found = 0;
    for (uint32_t i = 0; i < cv->ndrivers; i++)
        if (cv->drivers[i].name == driver && cv->drivers[i].has_allocatable_count) {
            *limit = cv->drivers[i].allocatable_count;
            found = 1;
        }
    return found;
}

/* How many unique volumes the node's pods can add at most (each counted volume adds one or
 * none) on a node with a CSINode, into *bound; 0, or -1 when resolving them could fail (a claim
 * without a name, an ephemeral claim that exists and is not the pod's, an in-line volume whose
 * translation fails): the exact path then returns that error as upstream does. */
static int node_pods_bound(ks_cycle *cycle, const ks_node_info *ni, int64_t *bound)
{
    int64_t b = 0;
    size_t npods = ks_node_info_pod_count(ni);
    for (size_t p = 0; p < npods; p++) {
        const ks_pod *pod = ks_node_info_pod_at(ni, p);
        const ks_pod_volume *vols;
        size_t n = ks_pod_volumes(pod, &vols);
        for (size_t i = 0; i < n; i++) {
            const ks_pod_volume *v = &vols[i];
            if (v->source == KS_VOLSRC_PVC || v->source == KS_VOLSRC_EPHEMERAL) {
                if (v->claim == KS_SYM_EMPTY)
                    return -1;
                if (v->source == KS_VOLSRC_EPHEMERAL) {
                    const ks_pvc *c = ks_cycle_pvc(cycle, ks_pod_namespace(pod), v->claim);
                    if (c && strcmp(ks_pvc_view_of(c)->controller_uid, ks_pod_uid(pod)) != 0)
                        return -1;
                }
                b++;
                continue;
            }
            int m = inline_plugin(v);
            if (m == MIG_NONE || !migration_on(1, m))
                continue;
            char err[600];
            if (inline_check(v, m, err, sizeof(err)) != 0)
                return -1;
            b++;
        }
    }
    *bound = b;
    return 0;
}

/* upstream getNodeVolumeAttachmentInfo: the node's attachments of CSI PVs, as unique names. */
static void node_attachments(ks_cycle *cycle, ks_sym node, const ks_volume_attachment *const *vas,
                             size_t n, nameset *out)
{
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
        size_t off = ns_begin(out, va->attacher);
        ns_appends(out, sym_s(pv->source_id));
        ns_commit(out, off, va->attacher);
    }
}

static ks_code oom(ks_status *st)
{
    ks_status_reason(st, "NodeVolumeLimits: out of memory in Filter");
    return KS_ERROR;
}

/* The exact count (upstream's Filter from "Count CSI volumes from existing pods" on), on a node
 * whose CSINode cv gives at least one allocatable count. vas: the node's attachments. */
static ks_code exact_count(const node_volume_limits *pl, ks_cycle *cycle, const ks_node_info *ni,
                           ks_sym node, const ks_csi_node_view *cv, const new_vols *nv,
                           const ks_volume_attachment *const *vas, size_t nvas, int have_vas,
                           ks_status *st)
{
    vname abuf[64], vbuf[16];
    char asbuf[4096], vsbuf[1024], msg[1400];
    nameset attached, vaset;
    nameset_init(&attached, abuf, 64, asbuf, sizeof(asbuf));
    nameset_init(&vaset, vbuf, 16, vsbuf, sizeof(vsbuf));
    ks_code code = KS_SUCCESS;
    size_t npods = ks_node_info_pod_count(ni);
    for (size_t i = 0; i < npods; i++) {
        fav_result r = attachable_volumes(pl, cycle, ks_node_info_pod_at(ni, i), 1, 0, &attached,
                                          msg, sizeof(msg));
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
    if (!have_vas)
        nvas = ks_cycle_volume_attachments(cycle, node, &vas);
    node_attachments(cycle, node, vas, nvas, &vaset);
    if (vaset.oom) {
        code = oom(st);
        goto out;
    }
    /* per driver of the new volumes that has a limit: the attached ones (a volume used by several
     * pods, or by a pod and an attachment, counts once) plus the new ones not attached yet */
    for (size_t d = 0; d < nv->ndrivers; d++) {
        ks_sym driver = nv->drivers[d];
        int64_t limit, count = 0;
        if (!limit_of(cv, driver, &limit))
            continue;
        int64_t added = 0;
        for (size_t i = 0; i < nv->n; i++)
            if (nv->v[i].driver == driver &&
                ns_find(&attached, nv->v[i].hash, nv->s + nv->v[i].off, nv->v[i].len) < 0)
                added++;
        if (added == 0)
            continue; /* every new volume of the driver is attached already: none to add */
        for (size_t i = 0; i < attached.n; i++)
            count += attached.v[i].driver == driver;
        for (size_t i = 0; i < vaset.n; i++)
            count += vaset.v[i].driver == driver && !ns_has(&attached, &vaset, i);
        if (count + added > limit) {
            ks_status_reason(st, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED);
            code = KS_UNSCHEDULABLE;
            goto out;
        }
    }
out:
    nameset_free(&attached);
    nameset_free(&vaset);
    return code;
}

/* The verdict for the pod's volumes nv on the node (cn: its CSINode, NULL when none). */
static ks_code filter_node(const node_volume_limits *pl, ks_cycle *cycle, const ks_node_info *ni,
                           ks_sym node, const ks_csi_node *cn, const new_vols *nv, ks_status *st)
{
    if (nv->oom)
        return oom(st);
    if (nv->r != FAV_OK) {
        ks_status_reason(st, nv->msg);
        return nv->r == FAV_NOT_FOUND ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : KS_ERROR;
    }
    if (nv->n == 0)
        return KS_SUCCESS;

    /* VolumeLimitScaling (beta, on in v1.37) */
    const ks_csi_node_view *cv = cn ? ks_csi_node_view_of(cn) : NULL;
    for (size_t i = 0; i < nv->n; i++) {
        if (nv->must_be_listed[i] && !listed_on(cv, nv->v[i].driver)) {
            ks_status_reasonf(st, "%s CSI driver is not installed on the node",
                              sym_s(nv->v[i].driver));
            return KS_UNSCHEDULABLE;
        }
    }

    /* upstream getVolumeLimits: none, and the node takes any number */
    uint32_t d = 0;
    while (cv && d < cv->ndrivers && !cv->drivers[d].has_allocatable_count)
        d++;
    if (!cv || d == cv->ndrivers)
        return KS_SUCCESS;

    /* The bound (see "Cost" at the top): each pod volume and attachment adds one name at most. */
    int64_t bound;
    if (node_pods_bound(cycle, ni, &bound) != 0)
        return exact_count(pl, cycle, ni, node, cv, nv, NULL, 0, 0, st);
    int limited = 0, over = 0;
    for (size_t i = 0; i < nv->ndrivers; i++) {
        int64_t limit;
        if (limit_of(cv, nv->drivers[i], &limit)) {
            limited = 1;
            over |= bound + nv->counts[i] > limit;
        }
    }
    if (!limited)
        return KS_SUCCESS; /* no new driver has a count: nothing can exceed one */
    const ks_volume_attachment *const *vas = NULL;
    size_t nvas = 0;
    int have_vas = 0;
    if (!over) {
        nvas = ks_cycle_volume_attachments(cycle, node, &vas);
        have_vas = 1;
        for (size_t i = 0; i < nv->ndrivers; i++) {
            int64_t limit;
            if (limit_of(cv, nv->drivers[i], &limit))
                over |= bound + (int64_t)nvas + nv->counts[i] > limit;
        }
        if (!over)
            return KS_SUCCESS;
    }
    return exact_count(pl, cycle, ni, node, cv, nv, vas, nvas, have_vas, st);
}

/* filter: Filter workers, concurrently; reads the pod, the node, PreFilter's state and the cycle's
 * lookups. */
static ks_code nvl_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                          ks_status *st)
{
    const node_volume_limits *pl = self;
    const ks_pod_volume *vols;
    if (ks_pod_volumes(pod, &vols) == 0)
        return KS_SUCCESS;
    ks_sym node = ks_node_name(ks_node_info_node(ni));
    const ks_csi_node *cn = ks_cycle_csi_node(cycle, node); /* NULL: the node has none yet */
    const nvl_state *s = ks_cycle_read(cycle, &state_key);
    if (s)
        return filter_node(pl, cycle, ni, node, cn, &s->var[cn != NULL], st);
    /* No PreFilter state (PreFilter disabled in the profile, or out of memory): resolve here. */
    new_vols nv;
    new_vols_build(pl, cycle, pod, cn != NULL, heap_alloc, NULL, &nv);
    ks_code code = filter_node(pl, cycle, ni, node, cn, &nv, st);
    free(nv.block);
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
        char err[600];
        if (inline_check(&vols[i], m, err, sizeof(err)) != 0)
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
