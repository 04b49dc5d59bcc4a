/* Shared parsed parts of pods; see shared.h. Keys are the bytes (labels) or the compact JSON
 * text (affinity, spread constraints) of the part. */
#include "api/shared.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/mempool.h"
#include "api/selector.h"
#include "util/strmap.h"

typedef struct spread_entry {
    const ks_topology_spread_constraint *c;
    size_t n;
} spread_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ks_strmap labels_map;   /* hex of the label bytes -> ks_label array */
static ks_strmap affinity_map; /* JSON -> ks_pod_affinity (NULL result stored as &none) */
static ks_strmap spread_map;   /* JSON -> spread_entry */
static ks_mempool pool;        /* everything parsed here */
static int none;

const ks_label *ks__shared_labels(const ks_label *labels, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t bytes = n * sizeof(ks_label);
    char stack[1024], *key = bytes * 2 + 1 <= sizeof(stack) ? stack : malloc(bytes * 2 + 1);
    const unsigned char *b = (const unsigned char *)labels;
    const ks_label *out = NULL;
    if (n == 0 || !key)
        return NULL;
    for (size_t i = 0; i < bytes; i++) {
        key[2 * i] = hex[b[i] >> 4];
        key[2 * i + 1] = hex[b[i] & 15];
    }
    key[2 * bytes] = '\0';
    pthread_mutex_lock(&lock);
    out = ks__strmap_get(&labels_map, key);
    if (!out) {
        ks_label *copy = ks__mempool_alloc(&pool, bytes);
        if (copy) {
            memcpy(copy, labels, bytes);
            if (ks__strmap_put(&labels_map, key, copy, NULL) == 0)
                out = copy;
        }
    }
    pthread_mutex_unlock(&lock);
    if (key != stack)
        free(key);
    return out;
}

int ks__shared_pod_affinity(const cJSON *affinity, const ks_pod_affinity **out, char *err,
                            size_t errlen)
{
    cJSON *sub = cJSON_CreateObject();
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(affinity, "podAffinity");
    const cJSON *paa = cJSON_GetObjectItemCaseSensitive(affinity, "podAntiAffinity");
    int rc = 0;
    *out = NULL;
    if (!cJSON_IsObject(pa) && !cJSON_IsObject(paa)) {
        cJSON_Delete(sub);
        return 0;
    }
    if (!sub)
        return KS_ENOMEM;
    if (pa)
        cJSON_AddItemReferenceToObject(sub, "podAffinity", (cJSON *)pa);
    if (paa)
        cJSON_AddItemReferenceToObject(sub, "podAntiAffinity", (cJSON *)paa);
    char *key = cJSON_PrintUnformatted(sub);
    cJSON_Delete(sub);
    if (!key)
        return KS_ENOMEM;
    pthread_mutex_lock(&lock);
    void *v = ks__strmap_get(&affinity_map, key);
    if (v) {
        *out = v == &none ? NULL : v;
    } else {
        ks_pod_affinity *a = NULL;
        rc = ks__parse_pod_affinity(affinity, &pool, &a, err, errlen);
        if (rc == 0 && ks__strmap_put(&affinity_map, key, a ? (void *)a : &none, NULL) != 0)
            rc = KS_ENOMEM;
        if (rc == 0)
            *out = a;
    }
    pthread_mutex_unlock(&lock);
    free(key);
    return rc;
}

int ks__shared_spread(const cJSON *constraints, const ks_topology_spread_constraint **out,
                      size_t *n, char *err, size_t errlen)
{
    int rc = 0;
    *out = NULL;
    *n = 0;
    if (cJSON_GetArraySize(constraints) == 0)
        return 0;
    char *key = cJSON_PrintUnformatted(constraints);
    if (!key)
        return KS_ENOMEM;
    pthread_mutex_lock(&lock);
    spread_entry *e = ks__strmap_get(&spread_map, key);
    if (!e) {
        ks_topology_spread_constraint *c = NULL;
        size_t count = 0;
        rc = ks__parse_spread_constraints(constraints, &pool, &c, &count, err, errlen);
        if (rc == 0) {
            e = ks__mempool_alloc(&pool, sizeof(*e));
            if (!e || ks__strmap_put(&spread_map, key, e, NULL) != 0)
                rc = KS_ENOMEM;
            else
                *e = (spread_entry){c, count};
        }
    }
    if (rc == 0 && e) {
        *out = e->c;
        *n = e->n;
    }
    pthread_mutex_unlock(&lock);
    free(key);
    return rc;
}
