/*
 * The plugin registry: every plugin descriptor kubesched knows, in-tree (linked in) and
 * out-of-tree (added by the loader from shared objects), by name.
 *
 * Threads: built and read on the main thread before scheduling starts; read-only afterwards.
 */
#ifndef KS_CORE_REGISTRY_H
#define KS_CORE_REGISTRY_H

#include <stddef.h>

#include "kubesched/plugin.h"

typedef struct ks_registry ks_registry;

/* A registry holding the in-tree plugins. NULL on out of memory. */
ks_registry *ks__registry_new(void);
void ks__registry_free(ks_registry *reg); /* NULL is a no-op; does not unload modules */

/* Adds desc (borrowed: must outlive the registry). origin names where it came from ("in-tree" or
 * the .so path) for messages. KS_EEXIST with a message naming both origins when the name is taken. */
int ks__registry_add(ks_registry *reg, const ks_plugin_desc *desc, const char *origin, char *err,
                     size_t errlen);

const ks_plugin_desc *ks__registry_find(const ks_registry *reg, const char *name); /* NULL: none */
const char *ks__registry_origin(const ks_registry *reg, const char *name);          /* NULL: none */
size_t ks__registry_count(const ks_registry *reg);
const ks_plugin_desc *ks__registry_at(const ks_registry *reg, size_t i);

/* Upstream default plugins that kubesched does not ship yet (VolumeBinding, ...): the default
 * profile runs without them and validate-config lists them. */
int ks__registry_is_unavailable_default(const char *name);
size_t ks__registry_unavailable_defaults(const char *const **out);

/* Upstream plugins that were removed (EBSLimits, ...): refused with upstream's message. */
int ks__registry_is_removed(const char *name);

#endif
