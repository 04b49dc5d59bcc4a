/*
 * Objects of the resources plugins watch; see custom_objects.h.
 */
#include "api/custom_objects.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "util/strmap.h"

/* ---- the registry -------------------------------------------------------------------------- */

static struct ks_resource k_registry[KS_MAX_CUSTOM_RESOURCES];
static _Atomic size_t k_nregistered; /* entries below it are complete and never change */
static pthread_mutex_t k_registry_mu = PTHREAD_MUTEX_INITIALIZER;

/* A DNS-1123 label or subdomain-like name of at most max bytes: what a kind, plural, group or
 * version may be made of (letters, digits, '-', '.'). */
static int name_ok(const char *s, size_t max, int dots)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || (dots && c == '.')))
            return 0;
    }
    return 1;
}

const struct ks_resource *ks__custom_find(const char *api_version, const char *kind)
{
    size_t n = atomic_load(&k_nregistered);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(k_registry[i].api_version, api_version) && !strcmp(k_registry[i].kind, kind))
            return &k_registry[i];
    return NULL;
}

const struct ks_resource *ks__custom_at(size_t index)
{
    return index < atomic_load(&k_nregistered) ? &k_registry[index] : NULL;
}

size_t ks__custom_count(void) { return atomic_load(&k_nregistered); }

/* Fills r for api_version ("group/version"; a core "v1" has no group and is refused: kubesched
 * reads the core kinds itself). */
static int describe(struct ks_resource *r, const char *api_version, const char *kind,
                    const char *plural, char *msg, size_t msglen)
{
    const char *slash = strchr(api_version, '/');
    char group[128], version[64];
    if (!slash || (size_t)(slash - api_version) >= sizeof(group) ||
        strlen(slash + 1) >= sizeof(version)) {
        snprintf(msg, msglen,
                 "apiVersion \"%s\": expected \"<group>/<version>\" (e.g. "
                 "\"scheduling.x-k8s.io/v1alpha1\"); the core group's kinds are read by the host",
                 api_version);
        return KS_EINVAL;
    }
    memcpy(group, api_version, (size_t)(slash - api_version));
    group[slash - api_version] = '\0';
    snprintf(version, sizeof(version), "%s", slash + 1);
    if (!name_ok(group, 100, 1) || !name_ok(version, 40, 0)) {
        snprintf(msg, msglen, "apiVersion \"%s\": the group and version must be DNS names",
                 api_version);
        return KS_EINVAL;
    }
    if (!name_ok(kind, 60, 0) || !name_ok(plural, 60, 0)) {
        snprintf(msg, msglen,
                 "kind \"%s\" / resource \"%s\": expected plain names (e.g. PodGroup, "
                 "podgroups)",
                 kind, plural);
        return KS_EINVAL;
    }
    snprintf(r->api_version, sizeof(r->api_version), "%s", api_version);
    snprintf(r->kind, sizeof(r->kind), "%s", kind);
    snprintf(r->plural, sizeof(r->plural), "%s", plural);
    snprintf(r->path, sizeof(r->path), "/apis/%s/%s/%s", group, version, plural);
    snprintf(r->event_name, sizeof(r->event_name), "%s.%s.%s", plural, version, group);
    static const char *actions[4] = {"Add", "Update", "Delete", "All"};
    for (int i = 0; i < 4; i++)
        snprintf(r->labels[i], sizeof(r->labels[i]), "%s%s", r->event_name, actions[i]);
    return 0;
}

const struct ks_resource *ks__custom_register(const char *api_version, const char *kind,
                                              const char *plural, char *msg, size_t msglen)
{
    if (!api_version || !kind || !plural) {
        snprintf(msg, msglen, "apiVersion, kind and resource (plural) are required");
        return NULL;
    }
    pthread_mutex_lock(&k_registry_mu);
    const struct ks_resource *found = ks__custom_find(api_version, kind);
    size_t n = atomic_load(&k_nregistered);
    if (!found && n == KS_MAX_CUSTOM_RESOURCES)
        snprintf(msg, msglen, "more than %d watched resources in one process",
                 KS_MAX_CUSTOM_RESOURCES);
    if (!found && n < KS_MAX_CUSTOM_RESOURCES &&
        describe(&k_registry[n], api_version, kind, plural, msg, msglen) == 0) {
        k_registry[n].index = (int)n;
        found = &k_registry[n];
        atomic_store(&k_nregistered, n + 1);
    }
    if (found && strcmp(found->plural, plural) != 0) {
        snprintf(msg, msglen, "%s %s is already watched as resource \"%s\", not \"%s\"",
                 api_version, kind, found->plural, plural);
        found = NULL;
    }
    pthread_mutex_unlock(&k_registry_mu);
    return found;
}

const char *ks__custom_event_label(ks_event_resource res, uint32_t actions)
{
    const struct ks_resource *r =
        res >= KS_RES_CUSTOM_FIRST ? ks__custom_at((size_t)(res - KS_RES_CUSTOM_FIRST)) : NULL;
    if (!r)
        return "";
    switch (actions) {
    case KS_ACT_ADD:
        return r->labels[0];
    case KS_ACT_UPDATE_ANY:
    case KS_ACT_UPDATE:
        return r->labels[1];
    case KS_ACT_DELETE:
        return r->labels[2];
    default:
        return r->labels[3];
    }
}

/* ---- objects ------------------------------------------------------------------------------- */

void ks__object_ref(const struct ks_object *o)
{
    if (o)
        atomic_fetch_add(&((struct ks_object *)o)->refs, 1);
}

void ks__object_unref(const struct ks_object *o)
{
    struct ks_object *m = (struct ks_object *)o;
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
        return;
    cJSON_Delete(m->json);
    free(m->text);
    free(m);
}

const cJSON *ks__object_at(const struct ks_object *o, const char *path)
{
    return o ? ks__json_path(o->json, path) : NULL;
}

const cJSON *ks__json_path(const cJSON *root, const char *path)
{
    const cJSON *cur = root;
    const char *p = path;
    char key[128];
    while (cur && *p) {
        if (*p == '.') {
            p++;
            continue;
        }
        if (p[0] == '[' && p[1] == '"') { /* ["nvidia.com/gpu"]: a key with dots or slashes */
            const char *end = strstr(p + 2, "\"]");
            size_t n = end ? (size_t)(end - (p + 2)) : sizeof(key);
            if (n >= sizeof(key) || !cJSON_IsObject(cur))
                return NULL;
            memcpy(key, p + 2, n);
            key[n] = '\0';
            cur = cJSON_GetObjectItemCaseSensitive(cur, key);
            p = end + 2;
            continue;
        }
        if (*p == '[') {
            char *end;
            long idx = strtol(p + 1, &end, 10);
            if (*end != ']' || !cJSON_IsArray(cur))
                return NULL;
            cur = cJSON_GetArrayItem(cur, (int)idx);
            p = end + 1;
            continue;
        }
        size_t n = strcspn(p, ".[");
        if (n >= sizeof(key) || !cJSON_IsObject(cur))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        p += n;
    }
    return cur;
}

/* ---- the store ----------------------------------------------------------------------------- */

struct ks_custom_store {
    pthread_rwlock_t mu;
    ks_strmap objects[KS_MAX_CUSTOM_RESOURCES]; /* "<ns>/<name>" -> struct ks_object * */
};

ks_custom_store *ks__custom_store_new(void)
{
    ks_custom_store *cs = calloc(1, sizeof(*cs));
    if (!cs)
        return NULL;
    pthread_rwlock_init(&cs->mu, NULL);
    for (size_t i = 0; i < KS_MAX_CUSTOM_RESOURCES; i++)
        ks__strmap_init(&cs->objects[i]);
    return cs;
}

void ks__custom_store_free(ks_custom_store *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < KS_MAX_CUSTOM_RESOURCES; i++) {
        const char *k;
        void *v;
        for (size_t it = 0; ks__strmap_next(&cs->objects[i], &it, &k, &v);)
            ks__object_unref(v);
        ks__strmap_destroy(&cs->objects[i]);
    }
    pthread_rwlock_destroy(&cs->mu);
    free(cs);
}

static void object_key(ks_sym ns, ks_sym name, char *key, size_t len)
{
    snprintf(key, len, "%s/%s", ns == KS_SYM_EMPTY ? "" : ks__sym_str(ns), ks__sym_str(name));
}

static const char *meta_string(const cJSON *obj, const char *field)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *v = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, field) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A new object holding a deep copy of obj. */
static struct ks_object *object_new(const struct ks_resource *res, const cJSON *obj, const char *ns,
                                    const char *name)
{
    struct ks_object *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    atomic_init(&o->refs, 1);
    o->res = res;
    o->json = cJSON_Duplicate(obj, 1);
    o->text = o->json ? cJSON_PrintUnformatted(o->json) : NULL;
    o->ns = ns && *ns ? ks__intern(ns) : KS_SYM_EMPTY;
    o->name = ks__intern(name);
    if (!o->json || !o->text) {
        ks__object_unref(o);
        return NULL;
    }
    return o;
}

int ks__custom_store_apply(ks_custom_store *cs, const struct ks_resource *res, const cJSON *obj,
                           int deleted, const struct ks_object **old_obj,
                           const struct ks_object **new_obj, char *msg, size_t msglen)
{
    if (old_obj)
        *old_obj = NULL;
    if (new_obj)
        *new_obj = NULL;
    const char *name = meta_string(obj, "name"), *ns = meta_string(obj, "namespace");
    if (!name || !*name) {
        snprintf(msg, msglen, "%s %s: metadata.name: Required value", res->api_version, res->kind);
        return KS_EPARSE;
    }
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    struct ks_object *o = NULL;
    if (!deleted && !(o = object_new(res, obj, ns, name))) {
        snprintf(msg, msglen, "out of memory");
        return KS_ENOMEM;
    }
    void *old = NULL;
    int rc = 0;
    pthread_rwlock_wrlock(&cs->mu);
    if (deleted)
        old = ks__strmap_remove(&cs->objects[res->index], key);
    else
        rc = ks__strmap_put(&cs->objects[res->index], key, o, &old);
    pthread_rwlock_unlock(&cs->mu);
    if (rc != 0) {
        ks__object_unref(o);
        snprintf(msg, msglen, "out of memory");
        return rc;
    }
    if (old_obj)
        *old_obj = old;
    else
        ks__object_unref(old);
    if (new_obj && o) {
        ks__object_ref(o);
        *new_obj = o;
    }
    return 0;
}

const struct ks_object *ks__custom_store_get(ks_custom_store *cs, const struct ks_resource *res,
                                             ks_sym ns, ks_sym name)
{
    if (!cs || !res)
        return NULL;
    char key[512];
    object_key(ns, name, key, sizeof(key));
    pthread_rwlock_rdlock(&cs->mu);
    const struct ks_object *o = ks__strmap_get(&cs->objects[res->index], key);
    ks__object_ref(o);
    pthread_rwlock_unlock(&cs->mu);
    return o;
}

size_t ks__custom_store_count(ks_custom_store *cs, const struct ks_resource *res)
{
    pthread_rwlock_rdlock(&cs->mu);
    size_t n = cs->objects[res->index].len;
    pthread_rwlock_unlock(&cs->mu);
    return n;
}
