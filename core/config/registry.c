/*
 * The plugin registry: in-tree descriptors (linked in) plus those the loader adds from shared
 * objects. A flat array: a profile has tens of plugins, and lookups happen only while building
 * the frameworks, never while scheduling.
 */
#include "config/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const ks_plugin_desc ks_plugin_scheduling_gates;
extern const ks_plugin_desc ks_plugin_priority_sort;
extern const ks_plugin_desc ks_plugin_node_unschedulable;
extern const ks_plugin_desc ks_plugin_node_name;
extern const ks_plugin_desc ks_plugin_taint_toleration;
extern const ks_plugin_desc ks_plugin_node_affinity;
extern const ks_plugin_desc ks_plugin_node_ports;
extern const ks_plugin_desc ks_plugin_node_resources_fit;
extern const ks_plugin_desc ks_plugin_pod_topology_spread;
extern const ks_plugin_desc ks_plugin_inter_pod_affinity;
extern const ks_plugin_desc ks_plugin_default_preemption;
extern const ks_plugin_desc ks_plugin_node_resources_balanced_allocation;
extern const ks_plugin_desc ks_plugin_image_locality;
extern const ks_plugin_desc ks_plugin_default_binder;

static const ks_plugin_desc *const in_tree[] = {
    &ks_plugin_scheduling_gates,
    &ks_plugin_priority_sort,
    &ks_plugin_node_unschedulable,
    &ks_plugin_node_name,
    &ks_plugin_taint_toleration,
    &ks_plugin_node_affinity,
    &ks_plugin_node_ports,
    &ks_plugin_node_resources_fit,
    &ks_plugin_pod_topology_spread,
    &ks_plugin_inter_pod_affinity,
    &ks_plugin_default_preemption,
    &ks_plugin_node_resources_balanced_allocation,
    &ks_plugin_image_locality,
    &ks_plugin_default_binder,
};

/* Upstream v1.34 defaults that kubesched does not ship yet (issue: the full default plugin set). */
static const char *const unavailable_defaults[] = {
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DynamicResources",
};

/* Removed upstream in v1.31/v1.32; v1 validation refuses them. */
static const char *const removed[] = {
    "AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits",
};

struct entry {
    const ks_plugin_desc *desc;
    char *origin;
};

struct ks_registry {
    size_t n, cap;
    struct entry *entries;
};

ks_registry *ks__registry_new(void)
{
    ks_registry *reg = calloc(1, sizeof(*reg));
    char err[256];
    if (!reg)
        return NULL;
    for (size_t i = 0; i < sizeof(in_tree) / sizeof(in_tree[0]); i++) {
        if (ks__registry_add(reg, in_tree[i], "in-tree", err, sizeof(err)) != 0) {
            ks__registry_free(reg);
            return NULL;
        }
    }
    return reg;
}

void ks__registry_free(ks_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        free(reg->entries[i].origin);
    free(reg->entries);
    free(reg);
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
    for (size_t i = 0; i < sizeof(unavailable_defaults) / sizeof(unavailable_defaults[0]); i++)
        if (strcmp(unavailable_defaults[i], name) == 0)
            return 1;
    return 0;
}

size_t ks__registry_unavailable_defaults(const char *const **out)
{
    *out = unavailable_defaults;
    return sizeof(unavailable_defaults) / sizeof(unavailable_defaults[0]);
}

int ks__registry_is_removed(const char *name)
{
    for (size_t i = 0; i < sizeof(removed) / sizeof(removed[0]); i++)
        if (strcmp(removed[i], name) == 0)
            return 1;
    return 0;
}
