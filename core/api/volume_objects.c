/* The storage kinds and the pod's volumes as compact structs; see volume_objects.h. */
#include "api/volume_objects.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "util/numconv.h"

static const char *const kind_names[KS_VK_COUNT] = {
    "PersistentVolume", "PersistentVolumeClaim", "StorageClass",    "CSINode",
    "CSIDriver",        "CSIStorageCapacity",    "VolumeAttachment"};

int ks__volobj_kind(const char *kind)
{
    for (int i = 0; kind && i < KS_VK_COUNT; i++)
        if (!strcmp(kind, kind_names[i]))
            return i;
    return -1;
}

const char *ks__volobj_kind_name(ks_vol_kind k)
{
    return (unsigned)k < KS_VK_COUNT ? kind_names[k] : "";
}

int ks__volobj_namespaced(ks_vol_kind k)
{
    return k == KS_VK_PVC || k == KS_VK_CSI_STORAGE_CAPACITY;
}

/* ---- helpers ------------------------------------------------------------------------------- */

/* What one parse shares: the message buffer, the object's pool and symbols, the mode. */
typedef struct {
    char *err;
    size_t errlen;
    ks_mempool *pool;
    ks__symrefs *syms;
    int checked;
} pctx;

static KS_PRINTF(2, 3) int fail(pctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return KS_EPARSE;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static int is_set(const cJSON *v) { return v && !cJSON_IsNull(v); }

static ks_sym intern(pctx *c, const char *s) { return ks__symrefs_intern(c->syms, s ? s : ""); }

static char *pool_str(pctx *c, const char *s)
{
    size_t n = strlen(s ? s : "");
    char *p = ks__mempool_alloc(c->pool, n + 1);
    if (p)
        memcpy(p, s ? s : "", n);
    return p;
}

/* A string field: absent or null reads "" (*set 0); another type is a decode error. */
static int get_string(pctx *c, const cJSON *o, const char *k, const char *path, const char **out,
                      int *set)
{
    const cJSON *v = get(o, k);
    *out = "";
    if (set)
        *set = 0;
    if (!is_set(v))
        return 0;
    if (!cJSON_IsString(v))
        return fail(c, "%s%s%s: expected a string", path, *path ? "." : "", k);
    *out = v->valuestring;
    if (set)
        *set = 1;
    return 0;
}

static int get_sym(pctx *c, const cJSON *o, const char *k, const char *path, ks_sym *out, int *set)
{
    const char *s;
    int rc = get_string(c, o, k, path, &s, set);
    *out = rc ? KS_SYM_EMPTY : intern(c, s);
    return rc;
}

static int get_bool(pctx *c, const cJSON *o, const char *k, const char *path, int dflt,
                    int32_t *out)
{
    const cJSON *v = get(o, k);
    *out = dflt;
    if (!is_set(v))
        return 0;
    if (!cJSON_IsBool(v))
        return fail(c, "%s.%s: expected true or false", path, k);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* An int32 field; a value that is no integer within int32 is refused in both modes (it could not
 * be converted). */
static int get_i32(pctx *c, const cJSON *o, const char *k, const char *path, int32_t *out, int *set)
{
    const cJSON *v = get(o, k);
    *out = 0;
    if (set)
        *set = 0;
    if (!is_set(v))
        return 0;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX) ||
        v->valuedouble != (double)(int32_t)v->valuedouble)
        return fail(c, "%s.%s: expected a 32-bit integer", path, k);
    *out = (int32_t)v->valuedouble;
    if (set)
        *set = 1;
    return 0;
}

static int cmp_label(const void *a, const void *b)
{
    const ks_label *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* A map of strings (labels, annotations) as a sorted label array in the pool. Numbers and
 * booleans (YAML scalars) are kept as their text, as the pod parser keeps them. */
static int get_string_map(pctx *c, const cJSON *o, const char *path, const ks_label **out,
                          uint32_t *n)
{
    const cJSON *it;
    *out = NULL;
    *n = 0;
    if (!is_set(o))
        return 0;
    if (!cJSON_IsObject(o))
        return fail(c, "%s: expected a map of strings", path);
    int cnt = cJSON_GetArraySize(o);
    if (!cnt)
        return 0;
    ks_label *l = ks__mempool_alloc(c->pool, (size_t)cnt * sizeof(*l));
    if (!l)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(it, o)
    {
        char num[64];
        const char *v;
        if (cJSON_IsString(it))
            v = it->valuestring;
        else if (cJSON_IsNumber(it)) {
            snprintf(num, sizeof(num), "%.17g", it->valuedouble);
            v = num;
        } else if (cJSON_IsBool(it))
            v = cJSON_IsTrue(it) ? "true" : "false";
        else if (cJSON_IsNull(it))
            v = "";
        else
            return fail(c, "%s.%s: expected a string value", path, it->string);
        l[i].key = intern(c, it->string);
        l[i].value = intern(c, v);
        i++;
    }
    qsort(l, i, sizeof(*l), cmp_label);
    *out = l;
    *n = i;
    return 0;
}

/* A storage quantity field (key of a resource list): Value() and MilliValue(); *set 0 when
 * absent. */
static int get_quantity(pctx *c, const cJSON *list, const char *key, const char *path,
                        int64_t *value, int64_t *milli, int32_t *set)
{
    const cJSON *v = get(list, key);
    char buf[128], field[160];
    const char *text = NULL;
    snprintf(field, sizeof(field), "%s%s%s", path, *path ? "." : "", key);
    *value = *milli = 0;
    if (set)
        *set = 0;
    if (is_set(list) && !cJSON_IsObject(list))
        return fail(c, "%s: expected a map of quantities", path);
    if (!is_set(v))
        return 0;
    if (cJSON_IsString(v))
        text = v->valuestring;
    else if (cJSON_IsNumber(v)) {
        snprintf(buf, sizeof(buf), "%.17g", v->valuedouble);
        text = buf;
    }
    if (!text || ks__quantity_parse(text, value, milli) != 0)
        return fail(c, "%s: invalid quantity \"%s\" (expected e.g. \"10Gi\", \"500M\")", field,
                    text ? text : (cJSON_IsBool(v) ? "a boolean" : "not a string"));
    if (c->checked && *value < 0)
        return fail(c, "%s: Invalid value: \"%s\": must be greater than or equal to 0", field,
                    text);
    if (set)
        *set = 1;
    return 0;
}

static const char *const access_mode_names[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                                "ReadWriteOncePod"};

uint32_t ks__access_modes(const cJSON *arr)
{
    const cJSON *it;
    uint32_t bits = 0;
    if (!cJSON_IsArray(arr))
        return 0;
    cJSON_ArrayForEach(it, arr)
    {
        uint32_t b = KS_ACCESS_UNKNOWN;
        for (int i = 0; i < 4; i++)
            if (cJSON_IsString(it) && !strcmp(it->valuestring, access_mode_names[i]))
                b = 1u << i;
        bits |= b;
    }
    return bits;
}

/* spec.accessModes, with upstream ValidatePersistentVolumeSpec /
 * ValidatePersistentVolumeClaimSpec's rules when checked: at least one (required_detail: the PVC's
 * words), every one supported, ReadWriteOncePod alone. */
static int get_access_modes(pctx *c, const cJSON *spec, const char *required_detail, uint32_t *out)
{
    const cJSON *arr = get(spec, "accessModes"), *it;
    *out = 0;
    if (is_set(arr) && !cJSON_IsArray(arr))
        return fail(c, "spec.accessModes: expected a list of strings");
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it))
            return fail(c, "spec.accessModes: expected a list of strings");
    }
    *out = ks__access_modes(arr);
    if (!c->checked)
        return 0;
    if (cJSON_GetArraySize(arr) == 0)
        return fail(c, "spec.accessModes: Required value%s%s", *required_detail ? ": " : "",
                    required_detail);
    cJSON_ArrayForEach(it, arr)
    {
        int ok = 0;
        for (int i = 0; i < 4; i++)
            ok |= !strcmp(it->valuestring, access_mode_names[i]);
        if (!ok)
            return fail(c,
                        "spec.accessModes: Unsupported value: \"%s\": supported values: "
                        "\"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", "
                        "\"ReadWriteOncePod\"",
                        it->valuestring);
    }
    if ((*out & KS_ACCESS_READ_WRITE_ONCE_POD) && (*out & ~KS_ACCESS_READ_WRITE_ONCE_POD))
        return fail(c,
                    "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access "
                    "modes");
    return 0;
}

static int get_volume_mode(pctx *c, const cJSON *spec, uint32_t *out)
{
    const char *m;
    int set, rc = get_string(c, spec, "volumeMode", "spec", &m, &set);
    *out = KS_VOLUME_MODE_FILESYSTEM;
    if (rc)
        return rc;
    if (set && !strcmp(m, "Block"))
        *out = KS_VOLUME_MODE_BLOCK;
    else if (set && strcmp(m, "Filesystem") && c->checked)
        return fail(c,
                    "spec.volumeMode: Unsupported value: \"%s\": supported values: \"Block\", "
                    "\"Filesystem\"",
                    m);
    return 0;
}

/* upstream's beta storage-class annotation, read before spec.storageClassName. */
#define BETA_STORAGE_CLASS "volume.beta.kubernetes.io/storage-class"

static ks_sym effective_class(pctx *c, const ks_label *ann, uint32_t nann, ks_sym spec_class)
{
    ks_sym key = ks__sym_lookup(BETA_STORAGE_CLASS);
    ks_sym v = key == KS_SYM_ABSENT ? KS_SYM_ABSENT : ks_labels_get(ann, nann, key);
    (void)c;
    return v != KS_SYM_ABSENT ? v : spec_class;
}

/* One NodeSelectorRequirement list (matchExpressions, or matchFields when fields) into the pool.
 * Checked mode holds matchExpressions to the rules a pod's node affinity is held to. */
static int parse_reqs(pctx *c, const cJSON *arr, const char *path, int fields, uint32_t *n,
                      const ks_selector_req **out)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    const cJSON *r;
    *n = 0;
    *out = NULL;
    if (!is_set(arr))
        return 0;
    if (!cJSON_IsArray(arr))
        return fail(c, "%s: expected a list", path);
    int cnt = cJSON_GetArraySize(arr);
    if (!cnt)
        return 0;
    ks_selector_req *reqs = ks__mempool_alloc(c->pool, (size_t)cnt * sizeof(*reqs));
    if (!reqs)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(r, arr)
    {
        char rp[300];
        const char *op;
        int rc;
        snprintf(rp, sizeof(rp), "%s[%u]", path, i);
        if ((rc = get_sym(c, r, "key", rp, &reqs[i].key, NULL)) ||
            (rc = get_string(c, r, "operator", rp, &op, NULL)))
            return rc;
        int k = -1;
        for (int j = 0; j < 6; j++)
            if (!strcmp(op, ops[j]))
                k = j;
        if (k < 0)
            return fail(c, "%s.operator: Invalid value: \"%s\": not a valid selector operator", rp,
                        op);
        reqs[i].op = (ks_selector_op)k;
        const cJSON *vals = get(r, "values"), *v;
        if (is_set(vals) && !cJSON_IsArray(vals))
            return fail(c, "%s.values: expected a list of strings", rp);
        int nv = cJSON_GetArraySize(vals);
        ks_sym *vs = nv ? ks__mempool_alloc(c->pool, (size_t)nv * sizeof(*vs)) : NULL;
        if (nv && !vs)
            return KS_ENOMEM;
        uint32_t j = 0;
        cJSON_ArrayForEach(v, vals)
        {
            if (!cJSON_IsString(v))
                return fail(c, "%s.values[%u]: expected a string", rp, j);
            vs[j++] = intern(c, v->valuestring);
        }
        const char *problem =
            c->checked && !fields ? ks__node_req_problem(reqs[i].op, reqs[i].key, nv) : NULL;
        if (problem) /* the same rules as a pod's node affinity */
            return fail(c, "%s%s", rp, problem);
        reqs[i].nvalues = j;
        reqs[i].values = vs;
        i++;
    }
    *n = i;
    *out = reqs;
    return 0;
}

/* A NodeSelector's nodeSelectorTerms (a PV's spec.nodeAffinity.required). */
static int parse_node_selector(pctx *c, const cJSON *ns, const char *path, uint32_t *n,
                               const ks_node_selector_term **out)
{
    const cJSON *terms = get(ns, "nodeSelectorTerms"), *t;
    char p[200];
    *n = 0;
    *out = NULL;
    if (is_set(terms) && !cJSON_IsArray(terms))
        return fail(c, "%s.nodeSelectorTerms: expected a list", path);
    int cnt = cJSON_GetArraySize(terms);
    if (c->checked && cnt == 0)
        return fail(c,
                    "%s.nodeSelectorTerms: Required value: must have at least one node selector "
                    "term",
                    path);
    if (!cnt)
        return 0;
    ks_node_selector_term *ts = ks__mempool_alloc(c->pool, (size_t)cnt * sizeof(*ts));
    if (!ts)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(t, terms)
    {
        int rc;
        snprintf(p, sizeof(p), "%s.nodeSelectorTerms[%u].matchExpressions", path, i);
        if ((rc = parse_reqs(c, get(t, "matchExpressions"), p, 0, &ts[i].nexprs, &ts[i].exprs)))
            return rc;
        snprintf(p, sizeof(p), "%s.nodeSelectorTerms[%u].matchFields", path, i);
        if ((rc = parse_reqs(c, get(t, "matchFields"), p, 1, &ts[i].nfields, &ts[i].fields)))
            return rc;
        i++;
    }
    *n = i;
    *out = ts;
    return 0;
}

/* ---- in-line volume sources (pods and PVs) ------------------------------------------------ */

/* The source of a volume (a pod's spec.volumes[i] or a PV's spec): which it is and its identity.
 * Only the sources the plugins tell apart are read; the rest is KS_VOLSRC_OTHER. */
typedef struct {
    uint32_t source;
    int32_t read_only, lun;
    ks_sym id, pool, driver;
    uint32_t nmonitors;
    const ks_sym *monitors;
} vsource;

/* A required identity field of an in-line disk, held to the API server's rule when checked. */
static int id_field(pctx *c, const cJSON *src, const char *k, const char *path, ks_sym *out)
{
    int set, rc = get_sym(c, src, k, path, out, &set);
    if (rc)
        return rc;
    if (c->checked && *out == KS_SYM_EMPTY)
        return fail(c, "%s.%s: Required value", path, k);
    return 0;
}

static int parse_source(pctx *c, const cJSON *v, const char *path, int pv, vsource *s)
{
    const cJSON *src;
    char p[300];
    int rc;
    memset(s, 0, sizeof(*s));
#define SRC(name) (snprintf(p, sizeof(p), "%s" name, path), get(v, name + 1))
    if (is_set(src = SRC(".gcePersistentDisk"))) {
        s->source = KS_VOLSRC_GCE_PD;
        if ((rc = id_field(c, src, "pdName", p, &s->id)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
    } else if (is_set(src = SRC(".awsElasticBlockStore"))) {
        s->source = KS_VOLSRC_AWS_EBS;
        if ((rc = id_field(c, src, "volumeID", p, &s->id)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
    } else if (is_set(src = SRC(".rbd"))) {
        s->source = KS_VOLSRC_RBD;
        if ((rc = id_field(c, src, "image", p, &s->id)) ||
            (rc = get_sym(c, src, "pool", p, &s->pool, NULL)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
        /* The API server defaults pool to "rbd" (SetDefaults_RBDVolumeSource): a pod that
         * leaves it out and one that writes it name the same image. */
        if (s->pool == KS_SYM_EMPTY)
            s->pool = intern(c, "rbd");
        const cJSON *mons = get(src, "monitors"), *m;
        if (is_set(mons) && !cJSON_IsArray(mons))
            return fail(c, "%s.monitors: expected a list of strings", p);
        int nm = cJSON_GetArraySize(mons);
        if (c->checked && nm == 0)
            return fail(c, "%s.monitors: Required value", p);
        ks_sym *ms = nm ? ks__mempool_alloc(c->pool, (size_t)nm * sizeof(*ms)) : NULL;
        if (nm && !ms)
            return KS_ENOMEM;
        cJSON_ArrayForEach(m, mons)
        {
            if (!cJSON_IsString(m))
                return fail(c, "%s.monitors[%u]: expected a string", p, s->nmonitors);
            ms[s->nmonitors++] = intern(c, m->valuestring);
        }
        s->monitors = ms;
    } else if (is_set(src = SRC(".iscsi"))) {
        s->source = KS_VOLSRC_ISCSI;
        if ((rc = id_field(c, src, "iqn", p, &s->id)) ||
            (rc = id_field(c, src, "targetPortal", p, &s->pool)) ||
            (rc = get_i32(c, src, "lun", p, &s->lun, NULL)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
        if (c->checked && (s->lun < 0 || s->lun > 255))
            return fail(c, "%s.lun: Invalid value: %d: must be between 0 and 255, inclusive", p,
                        (int)s->lun);
    } else if (is_set(src = SRC(".azureDisk"))) {
        s->source = KS_VOLSRC_AZURE_DISK;
        if ((rc = id_field(c, src, "diskURI", p, &s->id)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
    } else if (is_set(src = SRC(".cinder"))) {
        s->source = KS_VOLSRC_CINDER;
        if ((rc = id_field(c, src, "volumeID", p, &s->id)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
    } else if (is_set(src = SRC(".vsphereVolume"))) {
        s->source = KS_VOLSRC_VSPHERE;
        if ((rc = id_field(c, src, "volumePath", p, &s->id)))
            return rc;
    } else if (is_set(src = SRC(".portworxVolume"))) {
        s->source = KS_VOLSRC_PORTWORX;
        if ((rc = id_field(c, src, "volumeID", p, &s->id)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
    } else if (is_set(src = SRC(".csi"))) {
        s->source = KS_VOLSRC_CSI;
        if ((rc = id_field(c, src, "driver", p, &s->driver)) ||
            (rc = get_bool(c, src, "readOnly", p, 0, &s->read_only)))
            return rc;
        if (pv && (rc = id_field(c, src, "volumeHandle", p, &s->id)))
            return rc;
        if (!pv)
            s->id = s->driver;
    }
#undef SRC
    return 0;
}

/* ---- pods' volumes ------------------------------------------------------------------------- */

int ks__pod_volumes_parse(const cJSON *volumes, const char *pod_name, int checked, ks_mempool *pool,
                          ks__symrefs *refs, ks_pod_volume **out, size_t *n, char *err,
                          size_t errlen)
{
    pctx c = {err, errlen, pool, refs, checked};
    const cJSON *v;
    *out = NULL;
    *n = 0;
    if (!is_set(volumes))
        return 0;
    if (!cJSON_IsArray(volumes))
        return fail(&c, "spec.volumes: expected a list");
    int cnt = cJSON_GetArraySize(volumes);
    if (!cnt)
        return 0;
    ks_pod_volume *vols = ks__mempool_alloc(pool, (size_t)cnt * sizeof(*vols));
    if (!vols)
        return KS_ENOMEM;
    size_t i = 0;
    cJSON_ArrayForEach(v, volumes)
    {
        char path[64], p[128];
        const char *name;
        int rc;
        ks_pod_volume *pv = &vols[i];
        snprintf(path, sizeof(path), "spec.volumes[%zu]", i);
        if (!cJSON_IsObject(v))
            return fail(&c, "%s: expected an object", path);
        if ((rc = get_string(&c, v, "name", path, &name, NULL)))
            return rc;
        if (checked && !*name)
            return fail(&c, "%s.name: Required value", path);
        pv->name = intern(&c, name);
        for (size_t j = 0; checked && j < i; j++)
            if (vols[j].name == pv->name)
                return fail(&c, "%s.name: Duplicate value: \"%s\"", path, name);
        const cJSON *claim = get(v, "persistentVolumeClaim"), *eph = get(v, "ephemeral");
        if (is_set(claim)) {
            snprintf(p, sizeof(p), "%s.persistentVolumeClaim", path);
            pv->source = KS_VOLSRC_PVC;
            if ((rc = get_sym(&c, claim, "claimName", p, &pv->claim, NULL)) ||
                (rc = get_bool(&c, claim, "readOnly", p, 0, &pv->read_only)))
                return rc;
            if (checked && pv->claim == KS_SYM_EMPTY)
                return fail(&c, "%s.claimName: Required value", p);
        } else if (is_set(eph)) {
            /* upstream ephemeral.VolumeClaimName: "<pod name>-<volume name>" */
            char cn[600];
            snprintf(cn, sizeof(cn), "%s-%s", pod_name ? pod_name : "", name);
            pv->source = KS_VOLSRC_EPHEMERAL;
            pv->claim = intern(&c, cn);
            if (checked && !is_set(get(eph, "volumeClaimTemplate")))
                return fail(&c, "%s.ephemeral.volumeClaimTemplate: Required value", path);
        } else {
            vsource s;
            if ((rc = parse_source(&c, v, path, 0, &s)))
                return rc;
            pv->source = s.source;
            pv->read_only = s.read_only;
            pv->id = s.id;
            pv->pool = s.pool;
            pv->lun = s.lun;
            pv->nmonitors = s.nmonitors;
            pv->monitors = s.monitors;
        }
        /* upstream VolumesSigner: json.Marshal(vol.VolumeSource) of every volume but configMap
         * and secret ones; the name is not part of the source. */
        if (!is_set(get(v, "configMap")) && !is_set(get(v, "secret"))) {
            cJSON *src = cJSON_Duplicate(v, 1);
            char *text = NULL;
            if (src) {
                cJSON_DeleteItemFromObjectCaseSensitive(src, "name");
                text = cJSON_PrintUnformatted(src);
                cJSON_Delete(src);
            }
            if (!text)
                return KS_ENOMEM;
            pv->source_json = pool_str(&c, text);
            free(text);
            if (!pv->source_json)
                return KS_ENOMEM;
        }
        i++;
    }
    *out = vols;
    *n = i;
    return 0;
}

/* ---- the kinds ----------------------------------------------------------------------------- */

static int parse_pv(pctx *c, const cJSON *obj, ks_pv *o)
{
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status");
    ks_pv_view *v = &o->v;
    ks_sym spec_class;
    int32_t has_cap = 0;
    int rc;
    v->size = sizeof(*v);
    v->name = o->h.name;
    v->uid = o->h.uid;
    v->resource_version = o->h.resource_version;
    v->terminating =
        is_set(get(meta, "deletionTimestamp")); /* upstream: DeletionTimestamp != nil */
    if (is_set(spec) && !cJSON_IsObject(spec))
        return fail(c, "spec: expected an object");
    if ((rc = get_string_map(c, get(meta, "labels"), "metadata.labels", &v->labels, &v->nlabels)) ||
        (rc = get_string_map(c, get(meta, "annotations"), "metadata.annotations", &v->annotations,
                             &v->nannotations)) ||
        (rc = get_access_modes(c, spec, "", &v->access_modes)) ||
        (rc = get_volume_mode(c, spec, &v->volume_mode)) ||
        (rc = get_sym(c, spec, "storageClassName", "spec", &spec_class, NULL)) ||
        (rc = get_sym(c, spec, "volumeAttributesClassName", "spec", &v->volume_attributes_class,
                      NULL)) ||
        (rc = get_sym(c, status, "phase", "status", &v->phase, NULL)) ||
        (rc = get_quantity(c, get(spec, "capacity"), "storage", "spec.capacity", &v->capacity,
                           &v->capacity_milli, &has_cap)))
        return rc;
    if (c->checked && !has_cap)
        return fail(c, "spec.capacity: Required value");
    v->storage_class = effective_class(c, v->annotations, v->nannotations, spec_class);
    const cJSON *ref = get(spec, "claimRef");
    if (is_set(ref)) {
        const char *uid;
        v->has_claim_ref = 1;
        if ((rc = get_sym(c, ref, "namespace", "spec.claimRef", &v->claim_namespace, NULL)) ||
            (rc = get_sym(c, ref, "name", "spec.claimRef", &v->claim_name, NULL)) ||
            (rc = get_string(c, ref, "uid", "spec.claimRef", &uid, NULL)))
            return rc;
        if (!(v->claim_uid = pool_str(c, uid)))
            return KS_ENOMEM;
    } else {
        v->claim_uid = "";
    }
    const cJSON *req = get(get(spec, "nodeAffinity"), "required");
    if (is_set(req)) {
        v->has_node_affinity = 1;
        if ((rc = parse_node_selector(c, req, "spec.nodeAffinity.required", &v->nnode_terms,
                                      &v->node_terms)))
            return rc;
    }
    vsource s;
    if ((rc = parse_source(c, spec, "spec", 1, &s)))
        return rc;
    v->source = s.source;
    v->source_id = s.id;
    v->csi_driver = s.source == KS_VOLSRC_CSI ? s.driver : KS_SYM_EMPTY;
    return 0;
}

static int parse_pvc(pctx *c, const cJSON *obj, ks_pvc *o)
{
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status");
    ks_pvc_view *v = &o->v;
    ks_sym spec_class;
    int set = 0, rc;
    int32_t has_req = 0;
    v->size = sizeof(*v);
    v->ns = o->h.ns;
    v->name = o->h.name;
    v->uid = o->h.uid;
    v->resource_version = o->h.resource_version;
    v->terminating =
        is_set(get(meta, "deletionTimestamp")); /* upstream: DeletionTimestamp != nil */
    if (is_set(spec) && !cJSON_IsObject(spec))
        return fail(c, "spec: expected an object");
    if ((rc = get_string_map(c, get(meta, "labels"), "metadata.labels", &v->labels, &v->nlabels)) ||
        (rc = get_string_map(c, get(meta, "annotations"), "metadata.annotations", &v->annotations,
                             &v->nannotations)) ||
        (rc = get_access_modes(c, spec, "at least 1 access mode is required", &v->access_modes)) ||
        (rc = get_volume_mode(c, spec, &v->volume_mode)) ||
        (rc = get_sym(c, spec, "storageClassName", "spec", &spec_class, &set)) ||
        (rc = get_sym(c, spec, "volumeName", "spec", &v->volume_name, NULL)) ||
        (rc = get_sym(c, spec, "volumeAttributesClassName", "spec", &v->volume_attributes_class,
                      NULL)) ||
        (rc = get_sym(c, status, "phase", "status", &v->phase, NULL)) ||
        (rc = get_quantity(c, get(get(spec, "resources"), "requests"), "storage",
                           "spec.resources.requests", &v->request, &v->request_milli, &has_req)))
        return rc;
    if (c->checked && !has_req)
        return fail(c, "spec.resources[storage]: Required value");
    v->has_storage_class_name = set;
    v->storage_class = effective_class(c, v->annotations, v->nannotations, spec_class);
    if ((rc = ks__parse_label_selector(get(spec, "selector"), "spec.selector", c->pool, c->syms,
                                       &v->selector, c->err, c->errlen)))
        return rc;
    /* The controller owner (ephemeral.VolumeIsForPod compares its uid with the pod's). */
    const cJSON *owners = get(meta, "ownerReferences"), *ow;
    v->controller_uid = "";
    if (is_set(owners) && !cJSON_IsArray(owners))
        return fail(c, "metadata.ownerReferences: expected a list");
    cJSON_ArrayForEach(ow, owners)
    {
        if (cJSON_IsTrue(get(ow, "controller"))) {
            const char *uid;
            if ((rc = get_string(c, ow, "uid", "metadata.ownerReferences[]", &uid, NULL)))
                return rc;
            if (!(v->controller_uid = pool_str(c, uid)))
                return KS_ENOMEM;
            break;
        }
    }
    return 0;
}

static int parse_storage_class(pctx *c, const cJSON *obj, ks_storage_class *o)
{
    const cJSON *meta = get(obj, "metadata");
    ks_storage_class_view *v = &o->v;
    const char *mode;
    int set, rc;
    v->size = sizeof(*v);
    v->name = o->h.name;
    if ((rc = get_string_map(c, get(meta, "labels"), "metadata.labels", &v->labels, &v->nlabels)) ||
        (rc = get_string_map(c, get(meta, "annotations"), "metadata.annotations", &v->annotations,
                             &v->nannotations)) ||
        (rc = get_sym(c, obj, "provisioner", "", &v->provisioner, NULL)) ||
        (rc = get_string(c, obj, "volumeBindingMode", "", &mode, &set)))
        return rc;
    if (c->checked && v->provisioner == KS_SYM_EMPTY)
        return fail(c, "provisioner: Required value");
    if (set && !strcmp(mode, "Immediate"))
        v->binding_mode = KS_BINDING_IMMEDIATE;
    else if (set && !strcmp(mode, "WaitForFirstConsumer"))
        v->binding_mode = KS_BINDING_WAIT_FOR_FIRST_CONSUMER;
    else if (set && c->checked)
        return fail(c,
                    "volumeBindingMode: Unsupported value: \"%s\": supported values: "
                    "\"Immediate\", \"WaitForFirstConsumer\"",
                    mode);
    else if (!set && c->checked)
        v->binding_mode = KS_BINDING_IMMEDIATE; /* SetDefaults_StorageClass */
    /* allowedTopologies: [{matchLabelExpressions: [{key, values}]}] as In requirements. */
    const cJSON *at = get(obj, "allowedTopologies"), *t;
    if (is_set(at) && !cJSON_IsArray(at))
        return fail(c, "allowedTopologies: expected a list");
    int cnt = cJSON_GetArraySize(at);
    ks_node_selector_term *ts = cnt ? ks__mempool_alloc(c->pool, (size_t)cnt * sizeof(*ts)) : NULL;
    if (cnt && !ts)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(t, at)
    {
        const cJSON *exprs = get(t, "matchLabelExpressions"), *e;
        char p[128];
        snprintf(p, sizeof(p), "allowedTopologies[%u].matchLabelExpressions", i);
        if (is_set(exprs) && !cJSON_IsArray(exprs))
            return fail(c, "%s: expected a list", p);
        int ne = cJSON_GetArraySize(exprs);
        ks_selector_req *rs = ne ? ks__mempool_alloc(c->pool, (size_t)ne * sizeof(*rs)) : NULL;
        if (ne && !rs)
            return KS_ENOMEM;
        uint32_t j = 0;
        cJSON_ArrayForEach(e, exprs)
        {
            char rp[160];
            snprintf(rp, sizeof(rp), "%s[%u]", p, j);
            if ((rc = get_sym(c, e, "key", rp, &rs[j].key, NULL)))
                return rc;
            rs[j].op = KS_OP_IN;
            const cJSON *vals = get(e, "values"), *x;
            if (is_set(vals) && !cJSON_IsArray(vals))
                return fail(c, "%s.values: expected a list of strings", rp);
            int nv = cJSON_GetArraySize(vals);
            if (c->checked && nv == 0)
                return fail(c, "%s.values: Required value: must specify as least one value", rp);
            ks_sym *vs = nv ? ks__mempool_alloc(c->pool, (size_t)nv * sizeof(*vs)) : NULL;
            if (nv && !vs)
                return KS_ENOMEM;
            uint32_t k = 0;
            cJSON_ArrayForEach(x, vals)
            {
                if (!cJSON_IsString(x))
                    return fail(c, "%s.values[%u]: expected a string", rp, k);
                vs[k++] = intern(c, x->valuestring);
            }
            rs[j].nvalues = k;
            rs[j].values = vs;
            j++;
        }
        ts[i].nexprs = j;
        ts[i].exprs = rs;
        i++;
    }
    v->nallowed_topologies = i;
    v->allowed_topologies = ts;
    return 0;
}

static int parse_csi_node(pctx *c, const cJSON *obj, ks_csi_node *o)
{
    const cJSON *meta = get(obj, "metadata"), *drivers = get(get(obj, "spec"), "drivers"), *d;
    ks_csi_node_view *v = &o->v;
    int rc;
    v->size = sizeof(*v);
    v->name = o->h.name;
    if ((rc = get_string_map(c, get(meta, "annotations"), "metadata.annotations", &v->annotations,
                             &v->nannotations)))
        return rc;
    if (is_set(drivers) && !cJSON_IsArray(drivers))
        return fail(c, "spec.drivers: expected a list");
    int cnt = cJSON_GetArraySize(drivers);
    ks_csi_node_driver *ds = cnt ? ks__mempool_alloc(c->pool, (size_t)cnt * sizeof(*ds)) : NULL;
    if (cnt && !ds)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(d, drivers)
    {
        char p[64];
        int set;
        snprintf(p, sizeof(p), "spec.drivers[%u]", i);
        if ((rc = get_sym(c, d, "name", p, &ds[i].name, NULL)) ||
            (rc = get_sym(c, d, "nodeID", p, &ds[i].node_id, NULL)))
            return rc;
        if (c->checked && ds[i].name == KS_SYM_EMPTY)
            return fail(c, "%s.name: Required value", p);
        const cJSON *alloc = get(d, "allocatable");
        char ap[80];
        snprintf(ap, sizeof(ap), "%s.allocatable", p);
        if ((rc = get_i32(c, alloc, "count", ap, &ds[i].allocatable_count, &set)))
            return rc;
        ds[i].has_allocatable_count = set;
        if (c->checked && set && ds[i].allocatable_count < 0)
            return fail(c, "%s.count: Invalid value: %d: must be greater than or equal to 0", ap,
                        (int)ds[i].allocatable_count);
        const cJSON *keys = get(d, "topologyKeys"), *k;
        if (is_set(keys) && !cJSON_IsArray(keys))
            return fail(c, "%s.topologyKeys: expected a list of strings", p);
        int nk = cJSON_GetArraySize(keys);
        ks_sym *ks = nk ? ks__mempool_alloc(c->pool, (size_t)nk * sizeof(*ks)) : NULL;
        if (nk && !ks)
            return KS_ENOMEM;
        cJSON_ArrayForEach(k, keys)
        {
            if (!cJSON_IsString(k))
                return fail(c, "%s.topologyKeys[%u]: expected a string", p, ds[i].ntopology_keys);
            ks[ds[i].ntopology_keys++] = intern(c, k->valuestring);
        }
        ds[i].topology_keys = ks;
        i++;
    }
    v->ndrivers = i;
    v->drivers = ds;
    return 0;
}

static int parse_csi_driver(pctx *c, const cJSON *obj, ks_csi_driver *o)
{
    const cJSON *spec = get(obj, "spec");
    ks_csi_driver_view *v = &o->v;
    int rc;
    v->size = sizeof(*v);
    v->name = o->h.name;
    /* The API server's defaults (SetDefaults_CSIDriver): attachRequired true, storageCapacity
     * false; stored objects always have them, cluster files may not. */
    if ((rc = get_bool(c, spec, "attachRequired", "spec", 1, &v->attach_required)) ||
        (rc = get_bool(c, spec, "storageCapacity", "spec", 0, &v->storage_capacity)) ||
        (rc = get_bool(c, spec, "preventPodSchedulingIfMissing", "spec", 0,
                       &v->prevent_pod_scheduling_if_missing)))
        return rc;
    return 0;
}

/* A VolumeAttachment: what NodeVolumeLimits counts (attacher, node, the PV it attaches). Checked:
 * upstream validateVolumeAttachmentSpec's rules for these fields. */
static int parse_volume_attachment(pctx *c, const cJSON *obj, ks_volume_attachment *o)
{
    const cJSON *spec = get(obj, "spec"), *source = get(spec, "source");
    ks_volume_attachment_view *v = &o->v;
    int rc, has_pv;
    v->size = sizeof(*v);
    v->name = o->h.name;
    if ((rc = get_sym(c, spec, "attacher", "spec", &v->attacher, NULL)) ||
        (rc = get_sym(c, spec, "nodeName", "spec", &v->node_name, NULL)) ||
        (rc = get_sym(c, source, "persistentVolumeName", "spec.source", &v->pv_name, &has_pv)) ||
        (rc = get_bool(c, get(obj, "status"), "attached", "status", 0, &v->attached)))
        return rc;
    if (!has_pv)
        v->pv_name = KS_SYM_ABSENT;
    if (!c->checked)
        return 0;
    int has_inline = is_set(get(source, "inlineVolumeSpec"));
    if (v->attacher == KS_SYM_EMPTY)
        return fail(c, "spec.attacher: Required value");
    if (!has_pv && !has_inline)
        return fail(c, "spec.source: Required value: must specify exactly one of "
                       "inlineVolumeSpec and persistentVolumeName");
    if (has_pv && has_inline)
        return fail(c, "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec "
                       "and persistentVolumeName");
    if (has_pv && v->pv_name == KS_SYM_EMPTY)
        return fail(c, "spec.source.persistentVolumeName: Required value: must specify non "
                       "empty persistentVolumeName");
    if (v->node_name == KS_SYM_EMPTY)
        return fail(c, "spec.nodeName: Required value");
    return 0;
}

static int parse_capacity(pctx *c, const cJSON *obj, ks_csi_storage_capacity *o)
{
    ks_csi_storage_capacity_view *v = &o->v;
    int rc;
    v->size = sizeof(*v);
    v->ns = o->h.ns;
    v->name = o->h.name;
    /* capacity and maximumVolumeSize are top-level quantities: read them through a wrapper
     * list so that one quantity reader serves every kind. */
    if ((rc = get_sym(c, obj, "storageClassName", "", &v->storage_class_name, NULL)) ||
        (rc = get_quantity(c, obj, "capacity", "", &v->capacity, &v->capacity_milli,
                           &v->has_capacity)) ||
        (rc = get_quantity(c, obj, "maximumVolumeSize", "", &v->maximum_volume_size,
                           &v->maximum_volume_size_milli, &v->has_maximum_volume_size)))
        return rc;
    if (c->checked && v->storage_class_name == KS_SYM_EMPTY)
        return fail(c, "storageClassName: Required value");
    return ks__parse_label_selector(get(obj, "nodeTopology"), "nodeTopology", c->pool, c->syms,
                                    &v->node_topology, c->err, c->errlen);
}

static const size_t kind_size[KS_VK_COUNT] = {sizeof(ks_pv),
                                              sizeof(ks_pvc),
                                              sizeof(ks_storage_class),
                                              sizeof(ks_csi_node),
                                              sizeof(ks_csi_driver),
                                              sizeof(ks_csi_storage_capacity),
                                              sizeof(ks_volume_attachment)};

static void volobj_free(ks__volobj *o)
{
    ks__symrefs_release(&o->syms);
    ks__mempool_free(&o->pool);
    free(o->json);
    free(o);
}

static int from_json(const cJSON *obj, int checked, ks__volobj **out, char *err, size_t errlen)
{
    const cJSON *kindv = get(obj, "kind"), *meta = get(obj, "metadata");
    int k = ks__volobj_kind(cJSON_IsString(kindv) ? kindv->valuestring : NULL);
    *out = NULL;
    if (k < 0)
        return KS_EINVAL;
    ks__volobj *o = calloc(1, kind_size[k]);
    if (!o)
        return KS_ENOMEM;
    atomic_init(&o->refs, 1);
    o->kind = (ks_vol_kind)k;
    pctx c = {err, errlen, &o->pool, &o->syms, checked};
    const char *name, *ns = "", *uid, *rv;
    int rc;
    if ((rc = get_string(&c, meta, "name", "metadata", &name, NULL)) ||
        (ks__volobj_namespaced(o->kind) &&
         (rc = get_string(&c, meta, "namespace", "metadata", &ns, NULL))) ||
        (rc = get_string(&c, meta, "uid", "metadata", &uid, NULL)) ||
        (rc = get_string(&c, meta, "resourceVersion", "metadata", &rv, NULL)))
        goto out;
    if (!*name) {
        rc = fail(&c, "metadata.name: required for a %s", kind_names[k]);
        goto out;
    }
    if (ks__volobj_namespaced(o->kind) && !*ns)
        ns = "default";
    char key[600];
    if (ks__volobj_namespaced(o->kind))
        snprintf(key, sizeof(key), "%s/%s", ns, name);
    else
        snprintf(key, sizeof(key), "%s", name);
    o->name = intern(&c, name);
    o->ns = ks__volobj_namespaced(o->kind) ? intern(&c, ns) : KS_SYM_EMPTY;
    if (!(o->key = pool_str(&c, key)) || !(o->uid = pool_str(&c, uid)) ||
        !(o->resource_version = pool_str(&c, rv))) {
        rc = KS_ENOMEM;
        goto out;
    }
    switch (o->kind) {
    case KS_VK_PV:
        rc = parse_pv(&c, obj, (ks_pv *)o);
        break;
    case KS_VK_PVC:
        rc = parse_pvc(&c, obj, (ks_pvc *)o);
        break;
    case KS_VK_STORAGE_CLASS:
        rc = parse_storage_class(&c, obj, (ks_storage_class *)o);
        break;
    case KS_VK_CSI_NODE:
        rc = parse_csi_node(&c, obj, (ks_csi_node *)o);
        break;
    case KS_VK_CSI_DRIVER:
        rc = parse_csi_driver(&c, obj, (ks_csi_driver *)o);
        break;
    case KS_VK_VOLUME_ATTACHMENT:
        rc = parse_volume_attachment(&c, obj, (ks_volume_attachment *)o);
        break;
    default:
        rc = parse_capacity(&c, obj, (ks_csi_storage_capacity *)o);
        break;
    }
    if (rc)
        goto out;
    if (!(o->json = cJSON_PrintUnformatted(obj))) {
        rc = KS_ENOMEM;
        goto out;
    }
    /* Every view carries the whole object's JSON and the pv/pvc uids; set them last. */
    switch (o->kind) {
    case KS_VK_PV:
        ((ks_pv *)o)->v.json = o->json;
        break;
    case KS_VK_PVC:
        ((ks_pvc *)o)->v.json = o->json;
        break;
    case KS_VK_STORAGE_CLASS:
        ((ks_storage_class *)o)->v.json = o->json;
        break;
    case KS_VK_CSI_NODE:
        ((ks_csi_node *)o)->v.json = o->json;
        break;
    case KS_VK_CSI_DRIVER:
        ((ks_csi_driver *)o)->v.json = o->json;
        break;
    case KS_VK_VOLUME_ATTACHMENT:
        ((ks_volume_attachment *)o)->v.json = o->json;
        break;
    default:
        ((ks_csi_storage_capacity *)o)->v.json = o->json;
        break;
    }
    *out = o;
    return 0;
out:
    if (rc == KS_ENOMEM)
        snprintf(err, errlen, "out of memory parsing a %s", kind_names[k]);
    volobj_free(o);
    return rc;
}

int ks__volobj_from_json(const cJSON *obj, ks__volobj **out, char *err, size_t errlen)
{
    return from_json(obj, 0, out, err, errlen);
}

int ks__volobj_from_json_checked(const cJSON *obj, ks__volobj **out, char *err, size_t errlen)
{
    return from_json(obj, 1, out, err, errlen);
}

ks__volobj *ks__volobj_ref(ks__volobj *o)
{
    if (o)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
    return o;
}

void ks__volobj_unref(ks__volobj *o)
{
    if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1)
        volobj_free(o);
}
