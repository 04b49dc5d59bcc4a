/*
 * The plugin registry: the descriptors the loader adds, from the in-tree module and from shared
 * objects. A flat array: a profile has tens of plugins, and lookups happen only while building
 * the frameworks, never while scheduling.
 */
#include "config/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream v1.37 defaults that kubesched does not ship yet: none now (DynamicResources was the
 * last); the machinery stays for the next one. */
static const char *const unavailable_defaults[] = {
    NULL, /* none since DynamicResources shipped (a zero-length array is not C): the end */
};
#define NUNAVAILABLE ((size_t)0)

/* Removed upstream in v1.31/v1.32; v1 validation refuses them. */
static const char *const removed[] = {
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "GCEPDLimits",
};

struct entry {
    const ks_plugin_desc *desc;
    char *origin;
};

/* Something the registry releases when it is freed (a module its entries borrow from). */
struct kept {
    void (*release)(void *p);
    void *p;
};

struct ks_registry {
    size_t n, cap;
    struct entry *entries;
    size_t nkept;
    struct kept *kept;
};

ks_registry *ks__registry_new(void) { return calloc(1, sizeof(ks_registry)); }

void ks__registry_free(ks_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        free(reg->entries[i].origin);
    free(reg->entries);
    /* After the entries: they borrow from what was kept. Last kept, first released. */
    for (size_t i = reg->nkept; i-- > 0;)
        reg->kept[i].release(reg->kept[i].p);
    free(reg->kept);
    free(reg);
}

int ks__registry_keep(ks_registry *reg, void (*release)(void *p), void *p)
{
    struct kept *k = realloc(reg->kept, (reg->nkept + 1) * sizeof(*k));
    if (!k)
        return KS_ENOMEM;
    reg->kept = k;
    reg->kept[reg->nkept++] = (struct kept){release, p};
    return 0;
}

int ks__registry_add(ks_registry *reg, const ks_plugin_desc *desc, const char *origin, char *err,
                     size_t errlen)
{
    if (!desc || !desc->name || !desc->name[0]) {
        snprintf(err, errlen, "%s: a plugin descriptor has no name", origin);
        return KS_EINVAL;
    }
    for (size_t i = 0; i < reg->n; i++) {
        if (strcmp(reg->entries[i].desc->name, desc->name) == 0) {
            snprintf(err, errlen, "%s: duplicate plugin name \"%s\" (already registered by %s)",
                     origin, desc->name, reg->entries[i].origin);
            return KS_EEXIST;
        }
    }
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        struct entry *e = realloc(reg->entries, cap * sizeof(*e));
        if (!e)
            return KS_ENOMEM;
        reg->entries = e;
        reg->cap = cap;
    }
    reg->entries[reg->n].desc = desc;
    reg->entries[reg->n].origin = strdup(origin);
    if (!reg->entries[reg->n].origin)
        return KS_ENOMEM;
    reg->n++;
    return 0;
}

const ks_plugin_desc *ks__registry_find(const ks_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->entries[i].desc->name, name) == 0)
            return reg->entries[i].desc;
    return NULL;
}

const char *ks__registry_origin(const ks_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->entries[i].desc->name, name) == 0)
            return reg->entries[i].origin;
    return NULL;
}

size_t ks__registry_count(const ks_registry *reg) { return reg->n; }

const ks_plugin_desc *ks__registry_at(const ks_registry *reg, size_t i)
{
    return i < reg->n ? reg->entries[i].desc : NULL;
}

int ks__registry_is_unavailable_default(const char *name)
{
    for (const char *const *p = unavailable_defaults; *p; p++)
        if (strcmp(*p, name) == 0)
            return 1;
    return 0;
}

size_t ks__registry_unavailable_defaults(const char *const **out)
{
    *out = unavailable_defaults;
    return NUNAVAILABLE;
}

int ks__registry_is_removed(const char *name)
{
    for (size_t i = 0; i < sizeof(removed) / sizeof(removed[0]); i++)
        if (strcmp(removed[i], name) == 0)
            return 1;
    return 0;
}
