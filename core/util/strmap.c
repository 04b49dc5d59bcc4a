/* String-keyed open-addressing hash map; see strmap.h. */
#include "util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"

#define TOMBSTONE ((char *)1)

struct ks_strmap_slot {
    char *key; /* NULL empty, TOMBSTONE deleted */
    uint64_t hash;
    void *value;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void ks__strmap_init(ks_strmap *m) { memset(m, 0, sizeof(*m)); }

void ks__strmap_destroy(ks_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != TOMBSTONE)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static struct ks_strmap_slot *find(const ks_strmap *m, const char *key, uint64_t h)
{
    if (!m->cap)
        return NULL;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct ks_strmap_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != TOMBSTONE && s->hash == h && strcmp(s->key, key) == 0)
            return s;
    }
}

static int grow(ks_strmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct ks_strmap_slot *ns = calloc(ncap, sizeof(*ns));
    if (!ns)
        return KS_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct ks_strmap_slot *s = &m->slots[i];
        if (!s->key || s->key == TOMBSTONE)
            continue;
        size_t j = s->hash & (ncap - 1);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    m->used = m->len;
    return 0;
}

void *ks__strmap_get(const ks_strmap *m, const char *key)
{
    struct ks_strmap_slot *s = find(m, key, hash_str(key));
    return s ? s->value : NULL;
}

int ks__strmap_put(ks_strmap *m, const char *key, void *value, void **old)
{
    uint64_t h = hash_str(key);
    struct ks_strmap_slot *s = find(m, key, h);
    if (old)
        *old = NULL;
    if (s) {
        if (old)
            *old = s->value;
        s->value = value;
        return 0;
    }
    if ((m->used + 1) * 4 > m->cap * 3 && grow(m) != 0)
        return KS_ENOMEM;
    char *k = strdup(key);
    if (!k)
        return KS_ENOMEM;
    size_t i = h & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != TOMBSTONE)
        i = (i + 1) & (m->cap - 1);
    if (!m->slots[i].key)
        m->used++;
    m->slots[i].key = k;
    m->slots[i].hash = h;
    m->slots[i].value = value;
    m->len++;
    return 0;
}

void *ks__strmap_remove(ks_strmap *m, const char *key)
{
    struct ks_strmap_slot *s = find(m, key, hash_str(key));
    void *v;
    if (!s)
        return NULL;
    v = s->value;
    free(s->key);
    s->key = TOMBSTONE;
    s->value = NULL;
    m->len--;
    return v;
}

int ks__strmap_next(const ks_strmap *m, size_t *iter, const char **key, void **value)
{
    for (; *iter < m->cap; (*iter)++) {
        struct ks_strmap_slot *s = &m->slots[*iter];
        if (s->key && s->key != TOMBSTONE) {
            if (key)
                *key = s->key;
            if (value)
                *value = s->value;
            (*iter)++;
            return 1;
        }
    }
    return 0;
}
