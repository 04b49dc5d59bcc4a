/*
 * A string-keyed hash map (open addressing, linear probing, tombstones) for uid- and name-keyed
 * tables outside the hot loops. Keys are copied. Not thread-safe: the owner locks.
 */
#ifndef KS_CORE_STRMAP_H
#define KS_CORE_STRMAP_H

#include <stddef.h>

typedef struct ks_strmap {
    struct ks_strmap_slot *slots;
    size_t cap, len, used; /* used counts tombstones too */
} ks_strmap;

void ks__strmap_init(ks_strmap *m);
void ks__strmap_destroy(ks_strmap *m); /* frees keys, not values */
void *ks__strmap_get(const ks_strmap *m, const char *key);
/* Inserts or replaces; returns 0 or KS_ENOMEM. *old (may be NULL) gets the replaced value. */
int ks__strmap_put(ks_strmap *m, const char *key, void *value, void **old);
void *ks__strmap_remove(ks_strmap *m, const char *key); /* the removed value, or NULL */
/* Iteration: for (size_t i = 0; ks__strmap_next(m, &i, &k, &v); ) ... (no changes meanwhile). */
int ks__strmap_next(const ks_strmap *m, size_t *iter, const char **key, void **value);

#endif
