/* PodGroups and their members; see podgroup_objects.h. */
#include "api/podgroup_objects.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

#define PG_API_VERSION "scheduling.k8s.io/v1beta1"

/* ---- parsing -------------------------------------------------------------------------------- */

typedef struct {
    char *err;
    size_t errlen;
    ks_pod_group *pg;
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

static char *pool_strdup(ks_mempool *p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ks__mempool_alloc(p, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A string field: *out NULL when absent or null; KS_EPARSE when it is of another type. */
static int get_string(pctx *c, const cJSON *o, const char *k, const char *path, const char **out)
{
    const cJSON *v = get(o, k);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return fail(c, "%s: expected a string", path);
    *out = v->valuestring;
    return 0;
}

/* An int32 field: *set 0 when absent or null. */
static int get_int32(pctx *c, const cJSON *o, const char *k, const char *path, int32_t *out,
                     int *set)
{
    const cJSON *v = get(o, k);
    *set = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
        v->valuedouble < -2147483648.0 || v->valuedouble > 2147483647.0)
        return fail(c, "%s: expected an int32", path);
    *out = (int32_t)v->valuedouble;
    *set = 1;
    return 0;
}

static ks_sym sym_or_absent(pctx *c, const char *s)
{
    return s ? ks__symrefs_intern(&c->pg->syms, s) : KS_SYM_ABSENT;
}

/* spec.schedulingPolicy: the union of basic and gang (validate.Union) and gang.minCount
 * (+k8s:required, +k8s:minimum=1), as the API server's declarative validation words them. */
static int parse_policy(pctx *c, const cJSON *pol)
{
    ks_pod_group_view *v = &c->pg->v;
    if (pol && !cJSON_IsNull(pol) && !cJSON_IsObject(pol))
        return fail(c, "spec.schedulingPolicy: expected an object");
    const cJSON *basic = get(pol, "basic"), *gang = get(pol, "gang");
    int has_basic = basic && !cJSON_IsNull(basic), has_gang = gang && !cJSON_IsNull(gang);
    if ((has_basic && !cJSON_IsObject(basic)))
        return fail(c, "spec.schedulingPolicy.basic: expected an object");
    if ((has_gang && !cJSON_IsObject(gang)))
        return fail(c, "spec.schedulingPolicy.gang: expected an object");
    if (c->checked && !has_basic && !has_gang)
        return fail(c, "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, "
                       "`gang`");
    if (c->checked && has_basic && has_gang)
        return fail(c, "spec.schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": must specify "
                       "exactly one of: `basic`, `gang`");
    /* Lenient: the gang wins over basic (upstream's plugin reads Gang != nil first). */
    v->policy = has_gang ? KS_PG_POLICY_GANG : has_basic ? KS_PG_POLICY_BASIC : KS_PG_POLICY_NONE;
    if (has_gang) {
        int set = 0;
        int rc = get_int32(c, gang, "minCount", "spec.schedulingPolicy.gang.minCount",
                           &v->min_count, &set);
        if (rc)
            return rc;
        if (c->checked && (!set || v->min_count == 0))
            return fail(c, "spec.schedulingPolicy.gang.minCount: Required value");
        if (c->checked && v->min_count < 1)
            return fail(c,
                        "spec.schedulingPolicy.gang.minCount: Invalid value: %d: must be greater "
                        "than or equal to 1",
                        (int)v->min_count);
    }
    return 0;
}

static int podgroup_parse(const cJSON *obj, int checked, ks_pod_group **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    if (!ks__podgroup_is(obj)) {
        snprintf(err, errlen, "not a %s PodGroup", PG_API_VERSION);
        return KS_EINVAL;
    }
    ks_pod_group *pg = calloc(1, sizeof(*pg));
    if (!pg)
        goto oom;
    atomic_init(&pg->refs, 1);
    pctx c = {err, errlen, pg, checked};
    ks_pod_group_view *v = &pg->v;
    v->size = sizeof(*v);
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec");
    const char *ns, *name, *uid, *rv, *created, *parent, *wl = NULL, *tmpl = NULL;
    int rc, set;
    if ((rc = get_string(&c, meta, "namespace", "metadata.namespace", &ns)) ||
        (rc = get_string(&c, meta, "name", "metadata.name", &name)) ||
        (rc = get_string(&c, meta, "uid", "metadata.uid", &uid)) ||
        (rc = get_string(&c, meta, "resourceVersion", "metadata.resourceVersion", &rv)) ||
        (rc = get_string(&c, meta, "creationTimestamp", "metadata.creationTimestamp", &created)) ||
        (rc = get_string(&c, spec, "parentCompositePodGroupName",
                         "spec.parentCompositePodGroupName", &parent)))
        goto fail;
    if (!name || !*name) {
        rc = fail(&c, "metadata.name: Required value: name or generateName is required");
        goto fail;
    }
    if (!ns || !*ns)
        ns = "default"; /* a namespaced kind: what kubectl and the cluster file mean */
    const cJSON *wref = get(spec, "workloadRef");
    if (wref && !cJSON_IsNull(wref) &&
        ((rc = get_string(&c, wref, "workloadName", "spec.workloadRef.workloadName", &wl)) ||
         (rc = get_string(&c, wref, "templateName", "spec.workloadRef.templateName", &tmpl))))
        goto fail;
    if (checked && parent && !(wref && !cJSON_IsNull(wref))) {
        rc = fail(&c, "spec.workloadRef: Required value: must be set when "
                      "parentCompositePodGroupName is set");
        goto fail;
    }
    if ((rc = parse_policy(&c, get(spec, "schedulingPolicy"))) ||
        (rc = get_int32(&c, spec, "priority", "spec.priority", &v->priority, &set)))
        goto fail;
    v->has_priority = set;
    v->ns = ks__symrefs_intern(&pg->syms, ns);
    v->name = ks__symrefs_intern(&pg->syms, name);
    v->parent_composite_pod_group = sym_or_absent(&c, parent);
    v->workload_name = sym_or_absent(&c, wl);
    v->template_name = sym_or_absent(&c, tmpl);
    v->creation_unix_ns = created ? ks__parse_time_ns(created) : 0;
    char *json = cJSON_PrintUnformatted(obj);
    size_t klen = strlen(ns) + strlen(name) + 2;
    if (!json || !(pg->key = ks__mempool_alloc(&pg->pool, klen)) ||
        !(v->uid = pool_strdup(&pg->pool, uid ? uid : "")) ||
        !(v->resource_version = pool_strdup(&pg->pool, rv ? rv : "")) ||
        !(v->json = pool_strdup(&pg->pool, json))) {
        free(json);
        ks__podgroup_unref(pg);
        goto oom;
    }
    free(json);
    snprintf(pg->key, klen, "%s/%s", ns, name);
    *out = pg;
    return 0;
fail:
    ks__podgroup_unref(pg);
    return rc;
oom:
    snprintf(err, errlen, "out of memory parsing a PodGroup");
    return KS_ENOMEM;
}

int ks__podgroup_is(const cJSON *obj)
{
    const cJSON *av = get(obj, "apiVersion"), *kind = get(obj, "kind");
    return cJSON_IsString(av) && cJSON_IsString(kind) && !strcmp(av->valuestring, PG_API_VERSION) &&
           !strcmp(kind->valuestring, "PodGroup");
}

int ks__podgroup_from_json(const cJSON *obj, ks_pod_group **out, char *err, size_t errlen)
{
    return podgroup_parse(obj, 0, out, err, errlen);
}

int ks__podgroup_from_json_checked(const cJSON *obj, ks_pod_group **out, char *err, size_t errlen)
{
    return podgroup_parse(obj, 1, out, err, errlen);
}

ks_pod_group *ks__podgroup_ref(const ks_pod_group *pg)
{
    ks_pod_group *p = (ks_pod_group *)pg;
    if (p)
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return p;
}

void ks__podgroup_unref(const ks_pod_group *pg)
{
    ks_pod_group *p = (ks_pod_group *)pg;
    if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
        return;
    ks__symrefs_release(&p->syms);
    ks__mempool_free(&p->pool);
    free(p);
}

/* ---- the store ------------------------------------------------------------------------------ */

typedef struct member {
    ks_pod *pod;     /* the pod as last added or updated (one reference) */
    ks_pod *assumed; /* its assumed copy while assumed (one reference), else NULL */
    ks_pod_group_member_state state;
} member;

typedef struct member_list {
    size_t n, cap;
    member *m;
} member_list;

struct ks_podgroup_store {
    pthread_rwlock_t mu; /* objects */
    ks_strmap objects;   /* "ns/name" -> ks_pod_group * (one reference) */
    pthread_mutex_t mmu; /* members */
    ks_strmap members;   /* "ns/name" -> member_list * */
};

ks_podgroup_store *ks__podgroup_store_new(void)
{
    ks_podgroup_store *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    pthread_rwlock_init(&st->mu, NULL);
    pthread_mutex_init(&st->mmu, NULL);
    ks__strmap_init(&st->objects);
    ks__strmap_init(&st->members);
    return st;
}

static void member_release(member *m)
{
    ks__pod_unref(m->pod);
    ks__pod_unref(m->assumed);
}

void ks__podgroup_store_free(ks_podgroup_store *st)
{
    if (!st)
        return;
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&st->objects, &it, &k, &v);)
        ks__podgroup_unref(v);
    for (size_t it = 0; ks__strmap_next(&st->members, &it, &k, &v);) {
        member_list *l = v;
        for (size_t i = 0; i < l->n; i++)
            member_release(&l->m[i]);
        free(l->m);
        free(l);
    }
    ks__strmap_destroy(&st->objects);
    ks__strmap_destroy(&st->members);
    pthread_rwlock_destroy(&st->mu);
    pthread_mutex_destroy(&st->mmu);
    free(st);
}

static void key_of(ks_sym ns, ks_sym name, char *out, size_t len)
{
    const char *n = ks__sym_str(ns), *m = ks__sym_str(name);
    snprintf(out, len, "%s/%s", n ? n : "", m ? m : "");
}

int ks__podgroup_store_apply(ks_podgroup_store *st, const cJSON *obj, int deleted, int checked,
                             ks_pod_group **old_pg, ks_pod_group **new_pg, char *msg, size_t msglen)
{
    ks_pod_group *pg = NULL;
    if (old_pg)
        *old_pg = NULL;
    if (new_pg)
        *new_pg = NULL;
    /* a delete reads leniently: the object only has to name itself */
    int rc = podgroup_parse(obj, checked && !deleted, &pg, msg, msglen);
    if (rc != 0)
        return rc;
    void *old = NULL;
    pthread_rwlock_wrlock(&st->mu);
    if (deleted) {
        old = ks__strmap_remove(&st->objects, pg->key);
    } else if ((rc = ks__strmap_put(&st->objects, pg->key, pg, &old)) != 0) {
        pthread_rwlock_unlock(&st->mu);
        ks__podgroup_unref(pg);
        snprintf(msg, msglen, "out of memory filing PodGroup %s", pg->key);
        return rc;
    }
    pthread_rwlock_unlock(&st->mu);
    if (!deleted && new_pg)
        *new_pg = ks__podgroup_ref(pg);
    if (deleted)
        ks__podgroup_unref(pg); /* only its key was needed */
    if (old_pg)
        *old_pg = old;
    else
        ks__podgroup_unref(old);
    return 0;
}

ks_pod_group *ks__podgroup_store_get(ks_podgroup_store *st, ks_sym ns, ks_sym name)
{
    if (!st)
        return NULL;
    char key[512];
    key_of(ns, name, key, sizeof(key));
    pthread_rwlock_rdlock(&st->mu);
    ks_pod_group *pg = ks__podgroup_ref(ks__strmap_get(&st->objects, key));
    pthread_rwlock_unlock(&st->mu);
    return pg;
}

size_t ks__podgroup_store_count(ks_podgroup_store *st)
{
    size_t n = 0, it = 0;
    const char *k;
    void *v;
    pthread_rwlock_rdlock(&st->mu);
    while (ks__strmap_next(&st->objects, &it, &k, &v))
        n++;
    pthread_rwlock_unlock(&st->mu);
    return n;
}

static int is_member(const ks_pod *pod)
{
    return pod && pod->scheduling_group != KS_SYM_ABSENT && pod->scheduling_group != KS_SYM_EMPTY;
}

/* Under mmu: the list of pod's group (created when create != 0), or NULL. */
static member_list *list_of(ks_podgroup_store *st, const ks_pod *pod, int create, char *key,
                            size_t klen)
{
    key_of(pod->ns, pod->scheduling_group, key, klen);
    member_list *l = ks__strmap_get(&st->members, key);
    if (!l && create) {
        if (!(l = calloc(1, sizeof(*l))) || ks__strmap_put(&st->members, key, l, NULL) != 0) {
            free(l);
            return NULL;
        }
    }
    return l;
}

static member *find(member_list *l, const char *uid)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (!strcmp(l->m[i].pod->uid, uid))
            return &l->m[i];
    return NULL;
}

static int assigned(const ks_pod *pod) { return pod->node_name != KS_SYM_EMPTY; }

void ks__podgroup_member_add(ks_podgroup_store *st, ks_pod *pod)
{
    if (!st || !is_member(pod))
        return;
    char key[512];
    pthread_mutex_lock(&st->mmu);
    member_list *l = list_of(st, pod, 1, key, sizeof(key));
    member *m = find(l, pod->uid);
    if (l && !m && l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        member *nm = realloc(l->m, cap * sizeof(*nm));
        if (nm) {
            l->m = nm;
            l->cap = cap;
        }
    }
    if (l && !m && l->n < l->cap) {
        m = &l->m[l->n++];
        memset(m, 0, sizeof(*m));
    } else if (m) {
        ks__pod_unref(m->pod);
    }
    if (m) {
        /* upstream addPod: a pod on a node is assigned (no longer assumed), else unscheduled */
        m->pod = ks__pod_ref(pod);
        if (assigned(pod)) {
            ks__pod_unref(m->assumed);
            m->assumed = NULL;
            m->state = KS_PG_MEMBER_ASSIGNED;
        } else if (m->state != KS_PG_MEMBER_ASSUMED) {
            m->state = KS_PG_MEMBER_UNSCHEDULED;
        }
    }
    pthread_mutex_unlock(&st->mmu);
}

void ks__podgroup_member_update(ks_podgroup_store *st, ks_pod *old_pod, ks_pod *new_pod)
{
    if (!st)
        return;
    /* spec.schedulingGroup is immutable; a changed group (not possible through the API) is
     * a removal and an addition */
    if (is_member(old_pod) &&
        (!is_member(new_pod) || old_pod->scheduling_group != new_pod->scheduling_group ||
         old_pod->ns != new_pod->ns))
        ks__podgroup_member_remove(st, old_pod);
    ks__podgroup_member_add(st, new_pod); /* upstream updatePod: assigned once it has a node */
}

void ks__podgroup_member_remove(ks_podgroup_store *st, const ks_pod *pod)
{
    if (!st || !is_member(pod))
        return;
    char key[512];
    pthread_mutex_lock(&st->mmu);
    member_list *l = list_of(st, pod, 0, key, sizeof(key));
    member *m = find(l, pod->uid);
    if (m) {
        member_release(m);
        *m = l->m[--l->n];
        if (l->n == 0) {
            ks__strmap_remove(&st->members, key);
            free(l->m);
            free(l);
        }
    }
    pthread_mutex_unlock(&st->mmu);
}

void ks__podgroup_member_assume(ks_podgroup_store *st, ks_pod *assumed)
{
    if (!st || !is_member(assumed))
        return;
    char key[512];
    pthread_mutex_lock(&st->mmu);
    member *m = find(list_of(st, assumed, 0, key, sizeof(key)), assumed->uid);
    /* upstream assumePod: only a pod the group knows; one already bound stays assigned */
    if (m && m->state != KS_PG_MEMBER_ASSIGNED) {
        ks__pod_unref(m->assumed);
        m->assumed = ks__pod_ref(assumed);
        m->state = KS_PG_MEMBER_ASSUMED;
    }
    pthread_mutex_unlock(&st->mmu);
}

void ks__podgroup_member_forget(ks_podgroup_store *st, const ks_pod *pod)
{
    if (!st || !is_member(pod))
        return;
    char key[512];
    pthread_mutex_lock(&st->mmu);
    member *m = find(list_of(st, pod, 0, key, sizeof(key)), pod->uid);
    if (m && m->state == KS_PG_MEMBER_ASSUMED) {
        ks__pod_unref(m->assumed);
        m->assumed = NULL;
        m->state = assigned(m->pod) ? KS_PG_MEMBER_ASSIGNED : KS_PG_MEMBER_UNSCHEDULED;
    }
    pthread_mutex_unlock(&st->mmu);
}

void ks__podgroup_member_counts(ks_podgroup_store *st, ks_sym ns, ks_sym name, size_t *all,
                                size_t *scheduled)
{
    size_t n = 0, placed = 0;
    if (st) {
        char key[512];
        key_of(ns, name, key, sizeof(key));
        pthread_mutex_lock(&st->mmu);
        const member_list *l = ks__strmap_get(&st->members, key);
        if (l) {
            n = l->n;
            for (size_t i = 0; i < l->n; i++)
                placed +=
                    l->m[i].state == KS_PG_MEMBER_ASSUMED || l->m[i].state == KS_PG_MEMBER_ASSIGNED;
        }
        pthread_mutex_unlock(&st->mmu);
    }
    if (all)
        *all = n;
    if (scheduled)
        *scheduled = placed;
}

size_t ks__podgroup_members_each(ks_podgroup_store *st, ks_sym ns, ks_sym name,
                                 ks_pod_group_member_fn fn, void *ctx)
{
    if (!st || !fn)
        return 0;
    char key[512];
    key_of(ns, name, key, sizeof(key));
    pthread_mutex_lock(&st->mmu);
    member_list *l = ks__strmap_get(&st->members, key);
    size_t n = l ? l->n : 0;
    member *copy = n ? malloc(n * sizeof(*copy)) : NULL;
    if (!copy)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        copy[i].state = l->m[i].state;
        /* an assumed member is seen as its assumed copy (spec.nodeName set), as upstream's
         * assumedPods map holds it */
        copy[i].pod = ks__pod_ref(l->m[i].assumed ? l->m[i].assumed : l->m[i].pod);
    }
    pthread_mutex_unlock(&st->mmu);
    for (size_t i = 0; i < n; i++) {
        fn(ctx, copy[i].pod, copy[i].state);
        ks__pod_unref(copy[i].pod);
    }
    free(copy);
    return n;
}
