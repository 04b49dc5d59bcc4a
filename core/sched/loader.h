/*
 * The plugin loader: dlopen()s the shared objects a configuration names, checks the module's ABI
 * (major version, struct size, pointer width) before touching anything else, and adds its plugins
 * to the registry. The in-tree plugins are a module too, linked into the program and handed in
 * memory to the same checks (ks__loader_register_linked).
 *
 * A shared object is named in the plugin's pluginConfig args under the kubesched-specific key
 * `kubeschedPluginPath` (so the file stays a valid upstream KubeSchedulerConfiguration, the way
 * the wasm extension names its guests with `guestURL`). A relative path is resolved against the
 * directory of the configuration file.
 *
 * Threads: the main thread before scheduling starts, and in live mode the reloader's thread on
 * a configuration reload while modules loaded earlier are still in use (loads and closes are
 * serialised on a lock of their own). Modules stay loaded until ks__loader_close_all (after
 * every plugin instance is destroyed).
 *
 * A file replaced while its module is open is loaded again, not served from glibc's loaded copy:
 * see "Loading a replaced file again" in loader.c. A file changed in place while loaded is
 * refused (KS_EIO, with a message saying to install by renaming).
 */
#ifndef KS_CORE_LOADER_H
#define KS_CORE_LOADER_H

#include <stddef.h>

#include "kubesched/plugin.h"

struct ks_config;
struct ks_registry;

typedef struct ks_loaded_module ks_loaded_module;

/* Opens one shared object, runs the checks and the module's init(host). Every failure returns a
 * negative KS_E... code and one sentence in err naming the file: missing file, not a shared object,
 * missing ks_module_info symbol, ABI major/size/pointer-width mismatch (with both versions),
 * a descriptor that is too small, init failing with its own message. Never crashes. */
int ks__loader_open(const char *path, const ks_host_api *host, ks_loaded_module **out, char *err,
                    size_t errlen);

/* The same for a module linked into the program (KS_DEFINE_LINKED_MODULE: the in-tree plugins,
 * plugins/include/in_tree.h): module is borrowed and must outlive *out; origin stands for the
 * path in messages and in the registry ("in-tree"). Everything after dlsym is the same code: the
 * header checks, the normalised descriptor copies, init(host). */
int ks__loader_open_linked(const ks_module *module, const char *origin, const ks_host_api *host,
                           ks_loaded_module **out, char *err, size_t errlen);

/* ks__loader_open_linked, then adds the module's plugins to reg, which keeps the module and
 * releases it in ks__registry_free. What the program does once for the in-tree module. */
int ks__loader_register_linked(struct ks_registry *reg, const ks_module *module, const char *origin,
                               const ks_host_api *host, char *err, size_t errlen);

/* The module's plugins, normalised: each descriptor copied into a zeroed full-size struct, so
 * slots an older plugin did not know are NULL. Borrowed(module). */
size_t ks__loaded_module_plugins(const ks_loaded_module *mod, const ks_plugin_desc *const **out);
const char *ks__loaded_module_path(const ks_loaded_module *mod);
void ks__loader_close(ks_loaded_module *mod); /* NULL is a no-op */

/* Loads every kubeschedPluginPath found in any profile's pluginConfig of cfg (each file once)
 * and adds the plugins to reg. Errors name the configuration file and the field path, e.g.
 * `config.yaml: profiles[1].pluginConfig[0].args.kubeschedPluginPath: ...`. On success *mods is a
 * NULL-terminated array the caller releases with ks__loader_close_all. */
int ks__loader_load_config_plugins(const struct ks_config *cfg, struct ks_registry *reg,
                                   const ks_host_api *host, ks_loaded_module ***mods, char *err,
                                   size_t errlen);
void ks__loader_close_all(ks_loaded_module **mods);

#endif
