/*
 * The plugin registry: every plugin descriptor kubesched knows, by name: the in-tree module's and
 * those of shared objects, both added by the loader (core/sched/loader.h). The registry knows no
 * plugin by itself.
 *
 * Threads: built and read on the main thread before scheduling starts; read-only afterwards.
 */
#ifndef KS_CORE_REGISTRY_H
#define KS_CORE_REGISTRY_H

#include <stddef.h>

#include "kubesched/plugin.h"

typedef struct ks_registry ks_registry;

/* An empty registry (the loader adds the plugins). NULL on out of memory. */
ks_registry *ks__registry_new(void);
/* NULL is a no-op. Releases what ks__registry_keep handed it, after the entries; unloads no
 * other module. */
void ks__registry_free(ks_registry *reg);

/* Hands reg something to release (release(p)) in ks__registry_free, after the entries that borrow
 * from it: the loader keeps the in-tree module here. 0, or KS_ENOMEM (then p is still the
 * caller's). */
int ks__registry_keep(ks_registry *reg, void (*release)(void *p), void *p);

/* Adds desc (borrowed: must outlive the registry). origin names where it came from ("in-tree" or
 * the .so path) for messages. KS_EEXIST with a message naming both origins when the name is taken.
 */
int ks__registry_add(ks_registry *reg, const ks_plugin_desc *desc, const char *origin, char *err,
                     size_t errlen);

const ks_plugin_desc *ks__registry_find(const ks_registry *reg, const char *name); /* NULL: none */
const char *ks__registry_origin(const ks_registry *reg, const char *name);         /* NULL: none */
size_t ks__registry_count(const ks_registry *reg);
const ks_plugin_desc *ks__registry_at(const ks_registry *reg, size_t i);

/* Upstream default plugins that kubesched does not ship yet (VolumeBinding, ...): the default
 * profile runs without them and validate-config lists them. */
int ks__registry_is_unavailable_default(const char *name);
size_t ks__registry_unavailable_defaults(const char *const **out);

/* Upstream plugins that were removed (EBSLimits, ...): refused with upstream's message. */
int ks__registry_is_removed(const char *name);

#endif
