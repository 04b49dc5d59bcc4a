/* Shared parsed parts of pods; see shared.h. Keys are the bytes (labels) or the compact JSON
 * text (affinity, spread constraints) of the part, the latter after a mode character (mode_key).
 *
 * A part whose last pod went leaves its table at once (a pod parsed later gets a new part) and is
 * freed two snapshot updates later. Why the wait: plugins compare parts by pointer, and one
 * keeps that pointer from one cycle to the next (PodTopologySpread's counts, reused when the
 * snapshot was updated at most once since). Freed at once, the memory could come back at the
 * same address for another spec, and a pointer comparison would take one for the other. After
 * two updates no such cache can be reused any longer. */
#include "api/shared.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/selector.h"
#include "util/mempool.h"
#include "util/strmap.h"

/* One shared part. Labels live in the entry's tail; affinity and spread in its pool. */
struct ks__shared {
    ks_strmap *map; /* the table it is in (until retired) */
    struct ks__shared *next_retired;
    uint64_t retired_at; /* snapshot updates counted when the last pod let go */
    char *key;           /* owned; its key there */
    size_t refs;         /* pods holding it; under lock */
    size_t bytes;        /* what it costs, for ks__shared_stats */
    ks_mempool pool;     /* parsed affinity / spread constraints */
    ks__symrefs syms;    /* the symbols those hold */
    const void *value;
    size_t n; /* spread: number of constraints */
    ks_label labels[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ks_strmap labels_map;                    /* hex of the label bytes -> entry */
static ks_strmap affinity_map;                  /* JSON -> entry */
static ks_strmap spread_map;                    /* JSON -> entry */
static size_t nentries, total_bytes;            /* in tables or retired; under lock */
static ks__shared *retired_head, *retired_tail; /* oldest first; under lock */
static uint64_t snapshot_updates;               /* under lock */

/* A new entry (refs 1) of tail extra bytes, or NULL. */
static ks__shared *entry_new(ks_strmap *map, const char *key, size_t tail)
{
    ks__shared *e = calloc(1, sizeof(*e) + tail);
    if (!e)
        return NULL;
    e->key = strdup(key);
    if (!e->key) {
        free(e);
        return NULL;
    }
    e->map = map;
    e->refs = 1;
    e->bytes = sizeof(*e) + tail + 2 * strlen(key) + 2; /* the key: ours and the map's copy */
    return e;
}

static void entry_free(ks__shared *e)
{
    ks__mempool_free(&e->pool);
    ks__symrefs_release(&e->syms);
    free(e->key);
    free(e);
}

/* Adds e to its table. Under lock. */
static int entry_publish(ks__shared *e)
{
    if (ks__strmap_put(e->map, e->key, e, NULL) != 0)
        return KS_ENOMEM;
    nentries++;
    total_bytes += e->bytes;
    return 0;
}

/* The entry under key with one more reference, or NULL. Under lock. */
static ks__shared *entry_get(ks_strmap *map, const char *key)
{
    ks__shared *e = ks__strmap_get(map, key);
    if (e)
        e->refs++;
    return e;
}

void ks__shared_release(ks__shared *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&lock);
    if (--e->refs == 0) {
        /* Out of the table under the lock, so that no lookup can find a dying entry. */
        ks__strmap_remove(e->map, e->key);
        e->retired_at = snapshot_updates;
        if (retired_tail)
            retired_tail->next_retired = e;
        else
            retired_head = e;
        retired_tail = e;
    }
    pthread_mutex_unlock(&lock);
}

void ks__shared_snapshot_updated(void)
{
    ks__shared *done = NULL, **tail = &done;
    pthread_mutex_lock(&lock);
    snapshot_updates++;
    while (retired_head && retired_head->retired_at + 2 <= snapshot_updates) {
        ks__shared *e = retired_head;
        retired_head = e->next_retired;
        if (!retired_head)
            retired_tail = NULL;
        nentries--;
        total_bytes -= e->bytes;
        e->next_retired = NULL;
        *tail = e;
        tail = &e->next_retired;
    }
    pthread_mutex_unlock(&lock);
    for (ks__shared *e = done, *next; e; e = next) {
        next = e->next_retired;
        entry_free(e);
    }
}

void ks__shared_stats(size_t *entries, size_t *bytes)
{
    pthread_mutex_lock(&lock);
    *entries = nentries;
    *bytes = total_bytes;
    pthread_mutex_unlock(&lock);
}

static char *hex_key(const ks_label *labels, size_t n, char *stack, size_t stack_len)
{
    static const char hex[] = "0123456789abcdef";
    size_t bytes = n * sizeof(ks_label);
    char *key = bytes * 2 + 1 <= stack_len ? stack : malloc(bytes * 2 + 1);
    const unsigned char *b = (const unsigned char *)labels;
    if (!key)
        return NULL;
    for (size_t i = 0; i < bytes; i++) {
        key[2 * i] = hex[b[i] >> 4];
        key[2 * i + 1] = hex[b[i] & 15];
    }
    key[2 * bytes] = '\0';
    return key;
}

const ks_label *ks__shared_labels(const ks_label *labels, size_t n, ks__shared **ref)
{
    char stack[1024], *key = n ? hex_key(labels, n, stack, sizeof(stack)) : NULL;
    ks__shared *e;
    *ref = NULL;
    if (!key)
        return NULL;
    pthread_mutex_lock(&lock);
    e = entry_get(&labels_map, key);
    if (!e && (e = entry_new(&labels_map, key, n * sizeof(ks_label)))) {
        memcpy(e->labels, labels, n * sizeof(ks_label));
        e->value = e->labels;
        if (entry_publish(e) != 0) {
            entry_free(e);
            e = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    if (key != stack)
        free(key);
    *ref = e;
    return e ? e->labels : NULL;
}

/* The table key of a parsed part: one character for the mode ('C' checked, 'L' lenient) and then
 * json, the part's compact JSON text (freed here); NULL when out of memory.
 *
 * Why the mode is part of the key: a lenient parse accepts what a checked one refuses (a weight
 * 0, a maxSkew 0). Were the entry it made found by a checked parse of the same text, the pod
 * would be accepted without the value rules ever running. With the mode in the key, an entry was
 * always parsed in the mode of whoever finds it. The cost, a spec read both ways parsed and
 * stored twice (two pointers for equal parts: a plugin comparing by pointer only misses a reuse),
 * does not arise in practice: a process reads the API server's objects or files, not both. */
static char *mode_key(char *json, int checked)
{
    size_t len = json ? strlen(json) : 0;
    char *key = json ? malloc(len + 2) : NULL;
    if (key) {
        key[0] = checked ? 'C' : 'L';
        memcpy(key + 1, json, len + 1);
    }
    cJSON_free(json);
    return key;
}

/* podAffinity + podAntiAffinity as one compact JSON text, or NULL. */
static char *affinity_json(const cJSON *pa, const cJSON *paa)
{
    cJSON *sub = cJSON_CreateObject();
    if (!sub)
        return NULL;
    if (pa)
        cJSON_AddItemReferenceToObject(sub, "podAffinity", (cJSON *)pa);
    if (paa)
        cJSON_AddItemReferenceToObject(sub, "podAntiAffinity", (cJSON *)paa);
    char *key = cJSON_PrintUnformatted(sub);
    cJSON_Delete(sub);
    return key;
}

/* Parses a new affinity entry for key. Under lock (parsing once per distinct spec). */
static int affinity_entry_new(const cJSON *affinity, int checked, const char *key, ks__shared **out,
                              char *err, size_t errlen)
{
    ks_pod_affinity *a = NULL;
    ks__shared *e = entry_new(&affinity_map, key, 0);
    int rc;
    *out = NULL;
    if (!e)
        return KS_ENOMEM;
    rc = ks__parse_pod_affinity(affinity, checked, &e->pool, &e->syms, &a, err, errlen);
    if (rc == 0 && a) {
        e->value = a;
        rc = entry_publish(e);
    }
    if (rc != 0 || !a) {
        entry_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

int ks__shared_pod_affinity(const cJSON *affinity, int checked, const ks_pod_affinity **out,
                            ks__shared **ref, char *err, size_t errlen)
{
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(affinity, "podAffinity");
    const cJSON *paa = cJSON_GetObjectItemCaseSensitive(affinity, "podAntiAffinity");
    ks__shared *e;
    int rc = 0;
    *out = NULL;
    *ref = NULL;
    if (!cJSON_IsObject(pa) && !cJSON_IsObject(paa))
        return 0;
    char *key = mode_key(affinity_json(pa, paa), checked);
    if (!key)
        return KS_ENOMEM;
    pthread_mutex_lock(&lock);
    e = entry_get(&affinity_map, key);
    if (!e)
        rc = affinity_entry_new(affinity, checked, key, &e, err, errlen);
    pthread_mutex_unlock(&lock);
    free(key);
    if (e) {
        *out = e->value;
        *ref = e;
    }
    return rc;
}

/* Parses a new spread-constraints entry for key. Under lock. */
static int spread_entry_new(const cJSON *constraints, int checked, const char *key,
                            ks__shared **out, char *err, size_t errlen)
{
    ks_topology_spread_constraint *c = NULL;
    ks__shared *e = entry_new(&spread_map, key, 0);
    int rc;
    *out = NULL;
    if (!e)
        return KS_ENOMEM;
    rc = ks__parse_spread_constraints(constraints, checked, &e->pool, &e->syms, &c, &e->n, err,
                                      errlen);
    e->value = c;
    if (rc == 0)
        rc = entry_publish(e);
    if (rc != 0) {
        entry_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

int ks__shared_spread(const cJSON *constraints, int checked,
                      const ks_topology_spread_constraint **out, size_t *n, ks__shared **ref,
                      char *err, size_t errlen)
{
    ks__shared *e;
    int rc = 0;
    *out = NULL;
    *n = 0;
    *ref = NULL;
    if (cJSON_GetArraySize(constraints) == 0)
        return 0;
    char *key = mode_key(cJSON_PrintUnformatted(constraints), checked);
    if (!key)
        return KS_ENOMEM;
    pthread_mutex_lock(&lock);
    e = entry_get(&spread_map, key);
    if (!e)
        rc = spread_entry_new(constraints, checked, key, &e, err, errlen);
    pthread_mutex_unlock(&lock);
    free(key);
    if (e) {
        *out = e->value;
        *n = e->n;
        *ref = e;
    }
    return rc;
}
