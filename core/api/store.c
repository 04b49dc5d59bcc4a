/* The store of other kinds; see store.h. */
#include "api/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/merge_patch.h"
#include "util/mempool.h"
#include "api/selector.h"
#include "util/strmap.h"

typedef enum { K_NAMESPACE, K_SERVICE, K_RC, K_RS, K_SS, K_PDB, K_COUNT } kind;

static const char *const kind_names[K_COUNT] = {
    "Namespace",  "Service",     "ReplicationController",
    "ReplicaSet", "StatefulSet", "PodDisruptionBudget"};

typedef struct entry {
    kind k;
    ks_sym ns, name;
    ks_label *labels; /* Namespace labels (pool memory) */
    size_t nlabels;
    ks_label_selector selector;
    int32_t disruptions_allowed;
    uint32_t ndisrupted;
    ks_sym *disrupted;
} entry;

struct ks_store {
    pthread_rwlock_t lock;
    ks_strmap objs;  /* "Kind/ns/name" -> entry */
    ks_mempool pool; /* every parsed object's memory, freed with the store */
    /* VolumeAttachments by spec.nodeName: node name -> va_list_ (borrowing vol[]'s references). */
    ks_strmap va_by_node;
    /* The storage kinds: key ("name" / "ns/name") -> ks__volobj, one reference each. Unlike the
     * kinds above they change often (a claim's status, a capacity's size), so a replaced object
     * is released at once; readers hold their own references (a cycle, an event). */
    ks_strmap vol[KS_VK_COUNT];
    /* The DRA kinds: key -> ks__draobj, one reference each (replaced objects released at once,
     * as the storage kinds). ResourceSlices are indexed by spec.nodeName ("" when none) and by
     * "driver\npool" (dra_list, borrowing dra[]'s references). */
    ks_strmap dra[KS_DK_COUNT];
    ks_strmap slices_by_node, slices_by_pool;
};

/* The slices of one node or one pool (no references of their own). */
typedef struct dra_list {
    size_t n, cap;
    ks__draobj **objs;
} dra_list;

/* The VolumeAttachments of one node (no references of their own). */
typedef struct va_list_ {
    size_t n, cap;
    ks__volobj **objs;
} va_list_;

static const char *va_node(const ks__volobj *o)
{
    const char *n = ks__sym_str(((const ks_volume_attachment *)o)->v.node_name);
    return n ? n : "";
}

/* Under the write lock. KS_ENOMEM leaves the index without o (its lookups then miss it). */
static int va_index_add(ks_store *st, ks__volobj *o)
{
    va_list_ *l = ks__strmap_get(&st->va_by_node, va_node(o));
    if (!l) {
        if (!(l = calloc(1, sizeof(*l))))
            return KS_ENOMEM;
        void *prev = NULL;
        if (ks__strmap_put(&st->va_by_node, va_node(o), l, &prev) != 0) {
            free(l);
            return KS_ENOMEM;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        ks__volobj **a = realloc(l->objs, cap * sizeof(*a));
        if (!a)
            return KS_ENOMEM;
        l->objs = a;
        l->cap = cap;
    }
    l->objs[l->n++] = o;
    return 0;
}

static void va_index_remove(ks_store *st, const ks__volobj *o)
{
    va_list_ *l = ks__strmap_get(&st->va_by_node, va_node(o));
    for (size_t i = 0; l && i < l->n; i++)
        if (l->objs[i] == o) {
            l->objs[i] = l->objs[--l->n];
            break;
        }
}

ks_store *ks__store_new(void)
{
    ks_store *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    pthread_rwlock_init(&st->lock, NULL);
    ks__strmap_init(&st->objs);
    ks__strmap_init(&st->va_by_node);
    for (int k = 0; k < KS_VK_COUNT; k++)
        ks__strmap_init(&st->vol[k]);
    for (int k = 0; k < KS_DK_COUNT; k++)
        ks__strmap_init(&st->dra[k]);
    ks__strmap_init(&st->slices_by_node);
    ks__strmap_init(&st->slices_by_pool);
    return st;
}

void ks__store_free(ks_store *st)
{
    if (!st)
        return;
    const char *vkey;
    void *vlist;
    for (size_t it = 0; ks__strmap_next(&st->va_by_node, &it, &vkey, &vlist);) {
        free(((va_list_ *)vlist)->objs);
        free(vlist);
    }
    ks__strmap_destroy(&st->va_by_node);
    ks__strmap_destroy(&st->objs);
    for (int k = 0; k < KS_VK_COUNT; k++) {
        const char *key;
        void *v;
        for (size_t it = 0; ks__strmap_next(&st->vol[k], &it, &key, &v);)
            ks__volobj_unref(v);
        ks__strmap_destroy(&st->vol[k]);
    }
    ks_strmap *idx[2] = {&st->slices_by_node, &st->slices_by_pool};
    for (int i = 0; i < 2; i++) {
        for (size_t it = 0; ks__strmap_next(idx[i], &it, &vkey, &vlist);) {
            free(((dra_list *)vlist)->objs);
            free(vlist);
        }
        ks__strmap_destroy(idx[i]);
    }
    for (int k = 0; k < KS_DK_COUNT; k++) {
        const char *key;
        void *v;
        for (size_t it = 0; ks__strmap_next(&st->dra[k], &it, &key, &v);)
            ks__draobj_unref(v);
        ks__strmap_destroy(&st->dra[k]);
    }
    ks__mempool_free(&st->pool);
    pthread_rwlock_destroy(&st->lock);
    free(st);
}

static int kind_of(const char *k)
{
    for (int i = 0; i < K_COUNT; i++)
        if (k && !strcmp(k, kind_names[i]))
            return i;
    return -1;
}

int ks__store_wants(const char *kind_name)
{
    return kind_of(kind_name) >= 0 || ks__volobj_kind(kind_name) >= 0 ||
           ks__draobj_kind(kind_name) >= 0;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* A JSON number as int32, saturated: converting a double outside the int32 range is undefined
 * behaviour in C (disruptionsAllowed: 1e20, checked after tests/fuzz found the same conversion in
 * objects.c). The API server never sends such a value; a hand-written cluster file may. */
static int32_t clamp_i32(double v)
{
    if (v <= INT32_MIN)
        return INT32_MIN;
    if (v >= INT32_MAX)
        return INT32_MAX;
    return (int32_t)v;
}

static int cmp_label(const void *a, const void *b)
{
    const ks_label *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* A storage object: parsed outside the lock, then filed (or removed) by its key. */
static int apply_volobj(ks_store *st, ks_vol_kind k, const cJSON *obj, int deleted, int checked,
                        ks_store_change *chg, char *err, size_t errlen)
{
    ks__volobj *o = NULL;
    int rc = checked ? ks__volobj_from_json_checked(obj, &o, err, errlen)
                     : ks__volobj_from_json(obj, &o, err, errlen);
    if (rc)
        return rc;
    void *old = NULL;
    pthread_rwlock_wrlock(&st->lock);
    if (deleted)
        old = ks__strmap_remove(&st->vol[k], o->key);
    else
        rc = ks__strmap_put(&st->vol[k], o->key, o, &old);
    if (k == KS_VK_VOLUME_ATTACHMENT && !rc) {
        if (old)
            va_index_remove(st, old);
        if (!deleted && va_index_add(st, o) != 0) {
            /* Out of memory: undo, so that the store and its index agree. Putting old back
             * cannot fail: its key and its node's list (one entry freed) are still there. */
            void *mine = NULL;
            if (old) {
                (void)ks__strmap_put(&st->vol[k], o->key, old, &mine);
                (void)va_index_add(st, old);
            } else {
                ks__strmap_remove(&st->vol[k], o->key);
            }
            old = NULL;
            rc = KS_ENOMEM;
        }
    }
    pthread_rwlock_unlock(&st->lock);
    if (rc) {
        ks__volobj_unref(o);
        return rc;
    }
    if (chg) {
        chg->old_obj = old;
        chg->new_obj = deleted ? NULL : ks__volobj_ref(o);
    } else {
        ks__volobj_unref(old);
    }
    if (deleted)
        ks__volobj_unref(o); /* only parsed for its key */
    return 0;
}

int ks__store_apply(ks_store *st, const cJSON *obj, int deleted, char *err, size_t errlen)
{
    return ks__store_apply_ex(st, obj, deleted, 0, NULL, err, errlen);
}

int ks__store_apply_ex(ks_store *st, const cJSON *obj, int deleted, int checked,
                       ks_store_change *chg, char *err, size_t errlen)
{
    const cJSON *kindv = get(obj, "kind"), *meta = get(obj, "metadata"), *spec = get(obj, "spec");
    const char *kname = cJSON_IsString(kindv) ? kindv->valuestring : NULL;
    int k = kind_of(kname), vk = ks__volobj_kind(kname);
    if (chg)
        chg->old_obj = chg->new_obj = NULL;
    if (vk >= 0)
        return apply_volobj(st, (ks_vol_kind)vk, obj, deleted, checked, chg, err, errlen);
    if (ks__draobj_kind(kname) >= 0)
        return ks__store_apply_dra(st, obj, deleted, checked, NULL, err, errlen);
    const cJSON *name = get(meta, "name"), *ns = get(meta, "namespace");
    char key[512];
    int rc = 0;
    if (k < 0)
        return KS_EINVAL;
    if (!cJSON_IsString(name)) {
        snprintf(err, errlen, "metadata.name: required for a %s", kind_names[k]);
        return KS_EPARSE;
    }
    const char *nss = k == K_NAMESPACE ? "" : cJSON_IsString(ns) ? ns->valuestring : "default";
    snprintf(key, sizeof(key), "%s/%s/%s", kind_names[k], nss, name->valuestring);
    pthread_rwlock_wrlock(&st->lock);
    if (deleted) {
        ks__strmap_remove(&st->objs, key);
        goto out;
    }
    entry *e = ks__mempool_alloc(&st->pool, sizeof(*e));
    if (!e) {
        rc = KS_ENOMEM;
        goto out;
    }
    e->k = (kind)k;
    e->ns = ks__intern(nss);
    e->name = ks__intern(name->valuestring);
    switch (e->k) {
    case K_NAMESPACE: {
        const cJSON *labels = get(meta, "labels"), *it;
        if (labels && !cJSON_IsNull(labels) && !cJSON_IsObject(labels)) {
            snprintf(err, errlen, "%s: metadata.labels: expected a map of strings",
                     name->valuestring);
            rc = KS_EPARSE;
            break;
        }
        int n = cJSON_IsObject(labels) ? cJSON_GetArraySize(labels) : 0;
        e->labels = n ? ks__mempool_alloc(&st->pool, (size_t)n * sizeof(ks_label)) : NULL;
        if (n && !e->labels) {
            rc = KS_ENOMEM;
            break;
        }
        cJSON_ArrayForEach(it, labels)
        {
            if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
                snprintf(err, errlen, "%s: metadata.labels.%s: expected a string value",
                         name->valuestring, it->string);
                rc = KS_EPARSE;
                break;
            }
            if (!cJSON_IsString(it))
                continue; /* numbers, booleans, null: skipped, as before */
            e->labels[e->nlabels].key = ks__intern(it->string);
            e->labels[e->nlabels].value = ks__intern(it->valuestring);
            e->nlabels++;
        }
        if (rc == 0 && e->nlabels)
            qsort(e->labels, e->nlabels, sizeof(ks_label), cmp_label);
        break;
    }
    case K_SERVICE:
    case K_RC:
        rc = ks__parse_map_selector(get(spec, "selector"), "spec.selector", &st->pool, NULL,
                                    &e->selector, err, errlen);
        break;
    case K_RS:
    case K_SS:
        rc = ks__parse_label_selector(get(spec, "selector"), "spec.selector", &st->pool, NULL,
                                      &e->selector, err, errlen);
        break;
    case K_PDB: {
        const cJSON *da = get(get(obj, "status"), "disruptionsAllowed");
        rc = ks__parse_label_selector(get(spec, "selector"), "spec.selector", &st->pool, NULL,
                                      &e->selector, err, errlen);
        e->disruptions_allowed = cJSON_IsNumber(da) ? clamp_i32(da->valuedouble) : 0;
        const cJSON *dp = get(get(obj, "status"), "disruptedPods"), *it;
        if (rc == 0 && dp && !cJSON_IsNull(dp) && !cJSON_IsObject(dp)) {
            snprintf(err, errlen, "%s/%s: status.disruptedPods: expected a map", nss,
                     name->valuestring);
            rc = KS_EPARSE;
            break;
        }
        int nd = cJSON_IsObject(dp) ? cJSON_GetArraySize(dp) : 0;
        e->disrupted = nd ? ks__mempool_alloc(&st->pool, (size_t)nd * sizeof(ks_sym)) : NULL;
        cJSON_ArrayForEach(it, dp)
        {
            if (e->disrupted)
                e->disrupted[e->ndisrupted++] = ks__intern(it->string);
        }
        break;
    }
    default:
        break;
    }
    if (rc == 0)
        rc = ks__strmap_put(&st->objs, key, e, NULL);
out:
    pthread_rwlock_unlock(&st->lock);
    return rc;
}

int ks__store_namespace_labels(ks_store *st, ks_sym ns, const ks_label **out, size_t *n)
{
    char key[300];
    snprintf(key, sizeof(key), "Namespace//%s", ks__sym_str(ns));
    pthread_rwlock_rdlock(&st->lock);
    entry *e = ks__strmap_get(&st->objs, key);
    if (e) {
        *out = e->labels;
        *n = e->nlabels;
    }
    pthread_rwlock_unlock(&st->lock);
    return e ? 0 : KS_ENOTFOUND;
}

size_t ks__store_owner_selectors(ks_store *st, ks_sym ns, const ks_label *labels, size_t nlabels,
                                 ks_label_selector *out, size_t cap)
{
    const char *k;
    void *v;
    size_t n = 0;
    pthread_rwlock_rdlock(&st->lock);
    for (size_t it = 0; ks__strmap_next(&st->objs, &it, &k, &v);) {
        entry *e = v;
        if (e->k == K_NAMESPACE || e->k == K_PDB || e->ns != ns || !e->selector.present)
            continue;
        if (!ks_label_selector_matches(&e->selector, labels, nlabels))
            continue;
        if (n < cap)
            out[n] = e->selector;
        n++;
    }
    pthread_rwlock_unlock(&st->lock);
    return n;
}

size_t ks__store_pdbs(ks_store *st, ks_pdb **out)
{
    const char *k;
    void *v;
    size_t n = 0, cap = 0;
    *out = NULL;
    pthread_rwlock_rdlock(&st->lock);
    for (size_t it = 0; ks__strmap_next(&st->objs, &it, &k, &v);) {
        entry *e = v;
        if (e->k != K_PDB)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            ks_pdb *p = realloc(*out, cap * sizeof(*p));
            if (!p)
                break;
            *out = p;
        }
        (*out)[n++] = (ks_pdb){e->ns,         e->name,     e->selector, e->disruptions_allowed,
                               e->ndisrupted, e->disrupted};
    }
    pthread_rwlock_unlock(&st->lock);
    return n;
}

/* ---- storage kinds -------------------------------------------------------------------------- */

ks__volobj *ks__store_volobj(ks_store *st, ks_vol_kind k, const char *key)
{
    if ((unsigned)k >= KS_VK_COUNT)
        return NULL;
    pthread_rwlock_rdlock(&st->lock);
    ks__volobj *o = ks__volobj_ref(ks__strmap_get(&st->vol[k], key));
    pthread_rwlock_unlock(&st->lock);
    return o;
}

/* Filter calls this per node (VolumeBinding, NodeVolumeLimits): no formatting on the way. */
ks__volobj *ks__store_volobj_sym(ks_store *st, ks_vol_kind k, ks_sym ns, ks_sym name)
{
    const char *n = ks__sym_str(name);
    if (!n)
        return NULL;
    if (!ks__volobj_namespaced(k))
        return ks__store_volobj(st, k, n);
    char key[600];
    const char *s = ks__sym_str(ns);
    size_t ls = s ? strlen(s) : 0, ln = strlen(n);
    if (ls + 1 + ln >= sizeof(key))
        return NULL; /* no such key: namespaces and names are far shorter */
    memcpy(key, s ? s : "", ls);
    key[ls] = '/';
    memcpy(key + ls + 1, n, ln + 1);
    return ks__store_volobj(st, k, key);
}

static int cmp_volobj_key(const void *a, const void *b)
{
    return strcmp((*(ks__volobj *const *)a)->key, (*(ks__volobj *const *)b)->key);
}

size_t ks__store_volobjs(ks_store *st, ks_vol_kind k, int (*filter)(const ks__volobj *, void *),
                         void *ctx, ks__volobj ***out)
{
    const char *key;
    void *v;
    size_t n = 0;
    *out = NULL;
    if ((unsigned)k >= KS_VK_COUNT)
        return 0;
    pthread_rwlock_rdlock(&st->lock);
    size_t cap = st->vol[k].len;
    ks__volobj **arr = cap ? malloc(cap * sizeof(*arr)) : NULL;
    for (size_t it = 0; arr && ks__strmap_next(&st->vol[k], &it, &key, &v);)
        if (!filter || filter(v, ctx))
            arr[n++] = ks__volobj_ref(v);
    pthread_rwlock_unlock(&st->lock);
    if (!n) {
        free(arr);
        return 0;
    }
    qsort(arr, n, sizeof(*arr), cmp_volobj_key);
    *out = arr;
    return n;
}

size_t ks__store_volume_attachments_on(ks_store *st, ks_sym node, ks__volobj ***out)
{
    const char *name = ks__sym_str(node);
    size_t n = 0;
    *out = NULL;
    if (!name)
        return 0;
    pthread_rwlock_rdlock(&st->lock);
    va_list_ *l = ks__strmap_get(&st->va_by_node, name);
    ks__volobj **arr = l && l->n ? malloc(l->n * sizeof(*arr)) : NULL;
    for (size_t i = 0; arr && i < l->n; i++)
        arr[n++] = ks__volobj_ref(l->objs[i]);
    pthread_rwlock_unlock(&st->lock);
    if (!n) {
        free(arr);
        return 0;
    }
    qsort(arr, n, sizeof(*arr), cmp_volobj_key);
    *out = arr;
    return n;
}

size_t ks__store_volobj_count(ks_store *st, ks_vol_kind k)
{
    if ((unsigned)k >= KS_VK_COUNT)
        return 0;
    pthread_rwlock_rdlock(&st->lock);
    size_t n = st->vol[k].len;
    pthread_rwlock_unlock(&st->lock);
    return n;
}

/* ---- PATCH (PreBind's writes) -------------------------------------------------------------- */

static const char *resource_of(ks_vol_kind k)
{
    return k == KS_VK_PV    ? "persistentvolumes"
           : k == KS_VK_PVC ? "persistentvolumeclaims"
                            : "objects";
}

static uint64_t rv_number(const char *rv)
{
    uint64_t v = 0;
    for (const char *p = rv ? rv : ""; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v;
}

static const char *meta_field(const cJSON *o, const char *f)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), f);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int ks__store_patch(ks_store *st, ks_vol_kind k, ks_sym ns, ks_sym name, const cJSON *patch,
                    uint64_t *last_rv, char *rv, ks_store_change *chg, char *msg, size_t msglen)
{
    memset(chg, 0, sizeof(*chg));
    ks__volobj *o = ks__store_volobj_sym(st, k, ns, name);
    if (!o) {
        snprintf(msg, msglen, "%s \"%s\" not found", resource_of(k), ks__sym_str(name));
        return KS_ENOTFOUND;
    }
    const char *want = meta_field(patch, "resourceVersion");
    if (want && strcmp(want, o->resource_version) != 0) {
        snprintf(msg, msglen,
                 "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                 "please apply your changes to the latest version and try again",
                 resource_of(k), ks__sym_str(name));
        ks__volobj_unref(o);
        return KS_EEXIST;
    }
    cJSON *obj = cJSON_Parse(o->json);
    int rc = obj ? ks__json_merge_patch(&obj, patch) : KS_ENOMEM;
    const char *nm = rc ? NULL : meta_field(obj, "name");
    const char *nsv = rc ? NULL : meta_field(obj, "namespace");
    if (rc == 0 && (!nm || strcmp(nm, ks__sym_str(o->name)) != 0 ||
                    (ks__volobj_namespaced(k) && (!nsv || strcmp(nsv, ks__sym_str(o->ns)) != 0)))) {
        snprintf(msg, msglen, "%s \"%s\": a patch may not change metadata.name or namespace",
                 resource_of(k), ks__sym_str(name));
        rc = KS_EINVAL;
    }
    uint64_t next = rv_number(o->resource_version);
    next = (next > *last_rv ? next : *last_rv) + 1;
    char rvs[32];
    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)next);
    cJSON *meta = rc ? NULL : cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (meta) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        if (!cJSON_AddStringToObject(meta, "resourceVersion", rvs))
            rc = KS_ENOMEM;
    }
    if (rc == 0) {
        char err[400];
        rc = ks__store_apply_ex(st, obj, 0, 0, chg, err, sizeof(err));
        if (rc)
            snprintf(msg, msglen, "%s \"%s\": the patched object is refused: %s", resource_of(k),
                     ks__sym_str(name), err);
    } else if (rc == KS_ENOMEM) {
        snprintf(msg, msglen, "out of memory");
    }
    cJSON_Delete(obj);
    ks__volobj_unref(o);
    if (rc)
        return rc;
    *last_rv = next;
    snprintf(rv, KS_RESOURCE_VERSION_MAX, "%s", rvs);
    return 0;
}

/* ---- DRA kinds ----------------------------------------------------------------------------- */

static void slice_node_key(const ks__draobj *o, char *buf, size_t len)
{
    const ks_resource_slice *s = (const ks_resource_slice *)o;
    const char *n = s->node.has_node_name ? ks__sym_str(s->node.node_name) : "";
    snprintf(buf, len, "%s", n ? n : "");
}

static void slice_pool_key(const ks__draobj *o, char *buf, size_t len)
{
    const ks_resource_slice *s = (const ks_resource_slice *)o;
    /* '\n' cannot occur in a driver name (a DNS subdomain): the pair is unambiguous. */
    snprintf(buf, len, "%s\n%s", s->driver, s->pool_name);
}

static int dra_list_add(ks_strmap *idx, const char *key, ks__draobj *o)
{
    dra_list *l = ks__strmap_get(idx, key);
    if (!l) {
        if (!(l = calloc(1, sizeof(*l))))
            return KS_ENOMEM;
        if (ks__strmap_put(idx, key, l, NULL) != 0) {
            free(l);
            return KS_ENOMEM;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        ks__draobj **a = realloc(l->objs, cap * sizeof(*a));
        if (!a)
            return KS_ENOMEM;
        l->objs = a;
        l->cap = cap;
    }
    l->objs[l->n++] = o;
    return 0;
}

static void dra_list_remove(ks_strmap *idx, const char *key, const ks__draobj *o)
{
    dra_list *l = ks__strmap_get(idx, key);
    for (size_t i = 0; l && i < l->n; i++)
        if (l->objs[i] == o) {
            l->objs[i] = l->objs[--l->n];
            break;
        }
    if (l && !l->n) { /* slices come and go with nodes and pools: drop empty lists */
        ks__strmap_remove(idx, key);
        free(l->objs);
        free(l);
    }
}

/* Under the write lock: o enters both slice indexes, or neither (KS_ENOMEM). */
static int slice_index_add(ks_store *st, ks__draobj *o)
{
    char nk[600], pk[600];
    slice_node_key(o, nk, sizeof(nk));
    slice_pool_key(o, pk, sizeof(pk));
    if (dra_list_add(&st->slices_by_node, nk, o) != 0)
        return KS_ENOMEM;
    if (dra_list_add(&st->slices_by_pool, pk, o) != 0) {
        dra_list_remove(&st->slices_by_node, nk, o);
        return KS_ENOMEM;
    }
    return 0;
}

static void slice_index_remove(ks_store *st, const ks__draobj *o)
{
    char nk[600], pk[600];
    slice_node_key(o, nk, sizeof(nk));
    slice_pool_key(o, pk, sizeof(pk));
    dra_list_remove(&st->slices_by_node, nk, o);
    dra_list_remove(&st->slices_by_pool, pk, o);
}

void ks__store_fork_prepare(ks_store *st) { pthread_rwlock_rdlock(&st->lock); }
void ks__store_fork_after(ks_store *st) { pthread_rwlock_unlock(&st->lock); }

/* Whether o is no newer than the object filed under its key (upstream's assume cache compares
 * resourceVersions as integers; one that is not an integer never holds an object back). Under
 * the store's lock. */
static int dra_not_newer(ks_store *st, const ks__draobj *o)
{
    const ks__draobj *cur = ks__strmap_get(&st->dra[o->kind], o->key);
    uint64_t mine = rv_number(o->resource_version);
    return cur && mine && mine <= rv_number(cur->resource_version);
}

static int apply_dra(ks_store *st, const cJSON *obj, int deleted, int checked, int newer_only,
                     ks_dra_change *chg, char *err, size_t errlen)
{
    ks__draobj *o = NULL;
    if (chg)
        chg->old_obj = chg->new_obj = NULL;
    int rc = checked ? ks__draobj_from_json_checked(obj, &o, err, errlen)
                     : ks__draobj_from_json(obj, &o, err, errlen);
    if (rc)
        return rc;
    ks_dra_kind k = o->kind;
    void *old = NULL;
    pthread_rwlock_wrlock(&st->lock);
    if (newer_only && !deleted && dra_not_newer(st, o)) {
        pthread_rwlock_unlock(&st->lock);
        ks__draobj_unref(o);
        return 0;
    }
    if (deleted)
        old = ks__strmap_remove(&st->dra[k], o->key);
    else
        rc = ks__strmap_put(&st->dra[k], o->key, o, &old);
    if (k == KS_DK_RESOURCE_SLICE && !rc) {
        if (old)
            slice_index_remove(st, old);
        if (!deleted && slice_index_add(st, o) != 0) {
            /* Out of memory: put old back, so that the store and its indexes agree (old's index
             * entries were just freed, so re-adding it can only fail if the allocator does). */
            void *mine = NULL;
            if (old) {
                (void)ks__strmap_put(&st->dra[k], o->key, old, &mine);
                (void)slice_index_add(st, old);
            } else {
                ks__strmap_remove(&st->dra[k], o->key);
            }
            old = NULL;
            rc = KS_ENOMEM;
        }
    }
    pthread_rwlock_unlock(&st->lock);
    if (rc) {
        ks__draobj_unref(o);
        return rc;
    }
    if (chg) {
        chg->old_obj = old;
        chg->new_obj = deleted ? NULL : ks__draobj_ref(o);
    } else {
        ks__draobj_unref(old);
    }
    if (deleted)
        ks__draobj_unref(o); /* only parsed for its key */
    return 0;
}

int ks__store_apply_dra(ks_store *st, const cJSON *obj, int deleted, int checked,
                        ks_dra_change *chg, char *err, size_t errlen)
{
    return apply_dra(st, obj, deleted, checked, 0, chg, err, errlen);
}

int ks__store_assume_dra(ks_store *st, const cJSON *obj, ks_dra_change *chg, char *err,
                         size_t errlen)
{
    return apply_dra(st, obj, 0, 0, 1, chg, err, errlen);
}

ks__draobj *ks__store_draobj(ks_store *st, ks_dra_kind k, const char *key)
{
    if ((unsigned)k >= KS_DK_COUNT)
        return NULL;
    pthread_rwlock_rdlock(&st->lock);
    ks__draobj *o = ks__draobj_ref(ks__strmap_get(&st->dra[k], key));
    pthread_rwlock_unlock(&st->lock);
    return o;
}

ks__draobj *ks__store_draobj_sym(ks_store *st, ks_dra_kind k, ks_sym ns, ks_sym name)
{
    const char *n = ks__sym_str(name);
    if (!n)
        return NULL;
    if (!ks__draobj_namespaced(k))
        return ks__store_draobj(st, k, n);
    char key[600];
    const char *s = ks__sym_str(ns);
    size_t ls = s ? strlen(s) : 0, ln = strlen(n);
    if (ls + 1 + ln >= sizeof(key))
        return NULL; /* no such key: namespaces and names are far shorter */
    memcpy(key, s ? s : "", ls);
    key[ls] = '/';
    memcpy(key + ls + 1, n, ln + 1);
    return ks__store_draobj(st, k, key);
}

static int cmp_draobj_key(const void *a, const void *b)
{
    return strcmp((*(ks__draobj *const *)a)->key, (*(ks__draobj *const *)b)->key);
}

static size_t draobjs(ks_store *st, ks_dra_kind k, int (*filter)(const ks__draobj *, void *),
                      void *ctx, int sorted, ks__draobj ***out)
{
    const char *key;
    void *v;
    size_t n = 0;
    *out = NULL;
    if ((unsigned)k >= KS_DK_COUNT)
        return 0;
    pthread_rwlock_rdlock(&st->lock);
    size_t cap = st->dra[k].len;
    ks__draobj **arr = cap ? malloc(cap * sizeof(*arr)) : NULL;
    for (size_t it = 0; arr && ks__strmap_next(&st->dra[k], &it, &key, &v);)
        if (!filter || filter(v, ctx))
            arr[n++] = ks__draobj_ref(v);
    pthread_rwlock_unlock(&st->lock);
    if (!n) {
        free(arr);
        return 0;
    }
    if (sorted)
        qsort(arr, n, sizeof(*arr), cmp_draobj_key);
    *out = arr;
    return n;
}

size_t ks__store_draobjs(ks_store *st, ks_dra_kind k, int (*filter)(const ks__draobj *, void *),
                         void *ctx, ks__draobj ***out)
{
    return draobjs(st, k, filter, ctx, 1, out);
}

size_t ks__store_draobjs_unordered(ks_store *st, ks_dra_kind k, ks__draobj ***out)
{
    return draobjs(st, k, NULL, NULL, 0, out);
}

size_t ks__store_draobj_count(ks_store *st, ks_dra_kind k)
{
    if ((unsigned)k >= KS_DK_COUNT)
        return 0;
    pthread_rwlock_rdlock(&st->lock);
    size_t n = st->dra[k].len;
    pthread_rwlock_unlock(&st->lock);
    return n;
}

/* A copy of one index list with references, ordered by key. */
static size_t dra_list_copy(ks_store *st, ks_strmap *idx, const char *key, ks__draobj ***out)
{
    size_t n = 0;
    *out = NULL;
    pthread_rwlock_rdlock(&st->lock);
    dra_list *l = ks__strmap_get(idx, key);
    ks__draobj **arr = l && l->n ? malloc(l->n * sizeof(*arr)) : NULL;
    for (size_t i = 0; arr && i < l->n; i++)
        arr[n++] = ks__draobj_ref(l->objs[i]);
    pthread_rwlock_unlock(&st->lock);
    if (!n) {
        free(arr);
        return 0;
    }
    qsort(arr, n, sizeof(*arr), cmp_draobj_key);
    *out = arr;
    return n;
}

size_t ks__store_dra_slices_on(ks_store *st, ks_sym node, ks__draobj ***out)
{
    const char *name = node == KS_SYM_EMPTY ? "" : ks__sym_str(node);
    *out = NULL;
    if (!name)
        return 0;
    return dra_list_copy(st, &st->slices_by_node, name, out);
}

size_t ks__store_dra_slices_in_pool(ks_store *st, const char *driver, const char *pool,
                                    ks__draobj ***out)
{
    char key[600];
    *out = NULL;
    if (snprintf(key, sizeof(key), "%s\n%s", driver ? driver : "", pool ? pool : "") >=
        (int)sizeof(key))
        return 0; /* longer than any valid driver and pool name */
    return dra_list_copy(st, &st->slices_by_pool, key, out);
}
