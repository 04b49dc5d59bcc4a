/*
 * Private header of the configuration module (config*.c): the load context shared by the YAML
 * decoder (config_parse.c), defaulting and validation (config.c, config_defaults.c), the plan
 * (config_plan.c) and the printer (config_print.c). The files call each other one way only:
 * config_msg.c (messages, small utilities) <- config_parse.c, config_defaults.c <- config.c.
 *
 * A load runs in three steps, like upstream's codec: a strict decode of the YAML into ks_config
 * plus "was it set" flags (syntax, unknown fields and types are refused with file:line:column),
 * then defaulting (SetDefaults_*, mergePluginSet, default plugin args), then validation (field
 * paths). The first failure ends the load; its message is in err.
 */
#ifndef KS_CORE_CONFIG_INT_H
#define KS_CORE_CONFIG_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "config/config.h"
#include "config/registry.h"
#include "util/duration.h" /* the decoder, the leaderElection checks and the printer */

#define KS_CFG_API_VERSION "kubescheduler.config.k8s.io/v1"
#define KS_CFG_KIND "KubeSchedulerConfiguration"
#define KS_CFG_DEFAULT_SCHEDULER "default-scheduler"
#define KS_CFG_PLUGIN_PATH_KEY "kubeschedPluginPath"
/* The deadline of one call of that plugin (plugin_guard.h), a Go duration; 0: not watched. */
#define KS_CFG_CALL_DEADLINE_KEY "kubeschedCallDeadline"
/* Process isolation (sched/isolation.h): "process" or "none"; the failure policy ("fail" or
 * "ignore") and how many failures it takes (an integer >= 1). */
#define KS_CFG_ISOLATION_KEY "kubeschedIsolation"
#define KS_CFG_FAILURE_POLICY_KEY "kubeschedFailurePolicy"
#define KS_CFG_ERROR_BUDGET_KEY "kubeschedErrorBudget"

/* What the user set, for the fields whose default depends on it (upstream *T pointers). */
enum {
    CFG_SET_PARALLELISM = 1u << 0,
    CFG_SET_PERCENTAGE = 1u << 1,
    CFG_SET_INITIAL_BACKOFF = 1u << 2,
    CFG_SET_MAX_BACKOFF = 1u << 3,
    CFG_SET_PROFILING = 1u << 4,
    CFG_SET_CONTENTION = 1u << 5,
    CFG_SET_LEADER_ELECT = 1u << 6,
    CFG_SET_QPS = 1u << 7
};

/* Per profile, what the decoder saw before defaulting. */
typedef struct cfg_profile_in {
    int has_name;
    int has_percentage;
    int has_plugins;
    ks_plugin_set user[KS_PT_NSETS]; /* the user's sets, merged into the profile later */
} cfg_profile_in;

/* One extender, decoded only to be validated (kubesched refuses extenders). */
typedef struct cfg_extender_in {
    int has_prioritize_verb;
    int has_bind_verb;
    int64_t weight;
    size_t nresources;
    char **resources; /* managedResources[].name */
} cfg_extender_in;

typedef struct cfg_load {
    ks_config *cfg;
    const char *file; /* cfg->path, for messages */
    char *err;
    size_t errlen;
    int rc; /* first failure, 0 while none */
    unsigned set;
    cfg_profile_in *in; /* cfg->nprofiles entries */
    int has_profiles;   /* the profiles key was present (even if empty) */
    size_t nextenders;
    cfg_extender_in *extenders;
    size_t budget; /* nodes the YAML -> JSON conversion may still visit (alias bombs) */
    /* leaderElection durations as given, in nanoseconds (0: unset, then defaulted). */
    int64_t lease_ns, renew_ns, retry_ns;
    /* The plugins known before the file was read (the in-tree module); NULL: none. Their args
     * schemas and validate_args apply while the file loads. */
    const struct ks_registry *reg;
} cfg_load;

/* ---- messages (config_msg.c) ---- */
/* "FILE: " + fmt; keeps only the first failure. Returns rc. */
int ks__cfg_fail(cfg_load *L, int rc, const char *fmt, ...) KS_PRINTF(3, 4);
/* "FILE:LINE:COL: " + fmt, from a YAML node's start mark. */
int ks__cfg_fail_at(cfg_load *L, const yaml_node_t *node, int rc, const char *fmt, ...)
    KS_PRINTF(4, 5);
int ks__cfg_oom(cfg_load *L);
/* As ks__cfg_fail, at the line and column where `item` (a value of the pluginConfig args) was
 * written when its place is known ("file:line:col: ..."), else as ks__cfg_fail. */
int ks__cfg_fail_item(cfg_load *L, const cJSON *item, int rc, const char *fmt, ...) KS_PRINTF(4, 5);
/* Records where the args value `item` came from (the key of a field, the node of an item). */
void ks__cfg_mark(ks_config *cfg, const cJSON *item, const yaml_node_t *where);
void ks__cfg_marks_free(struct ks_cfg_marks *m);

/* ---- decoding (config_parse.c) ---- */
/* Decodes the YAML text into L->cfg and L->in. */
int ks__cfg_decode(cfg_load *L, const char *yaml, size_t len);

/* ---- default plugins, unshipped args kinds, qualified names (config_defaults.c) ---- */
/* getDefaultPlugins(): the multiPoint.enabled list of upstream v1.37 (with the default feature
 * gates). */
size_t ks__cfg_default_plugins(const ks_plugin_ref **out);
/* mergePluginSet(defaults, user) into *out (owned copies). */
int ks__cfg_merge_set(const ks_plugin_set *def, const ks_plugin_set *user, ks_plugin_set *out);
void ks__cfg_set_free(ks_plugin_set *s);
/* An upstream args kind of a plugin kubesched does not ship yet (VolumeBinding, DynamicResources):
 * no descriptor declares it, so its schema, SetDefaults_<Kind> and Validate<Kind> stay here until
 * the plugin lands in plugins/<name>/. */
typedef struct cfg_args_kind {
    const char *plugin;
    const char *kind;
    ks_args_schema schema;
    void (*defaults)(cJSON *args);
    int (*validate)(cfg_load *L, const cJSON *args, const char *path);
} cfg_args_kind;
const cfg_args_kind *ks__cfg_unshipped_kind(const char *plugin); /* NULL: none */
/* ---- args against a schema (config_args.c) ---- */
/* Which keys the top level of args allows besides the schema's fields. */
enum {
    KS_CFG_ARGS_TOP = 1u << 0,        /* apiVersion, kind */
    KS_CFG_ARGS_PLUGIN_PATH = 1u << 1 /* kubeschedPluginPath, kubeschedCallDeadline */
};
/* The shape check: unknown fields ("<path>: unknown field \"x\" (valid: ...)") and types, nulls
 * dropped. top: KS_CFG_ARGS_... bits for the top level of args, 0 for a nested mapping. */
int ks__cfg_args_check(cfg_load *L, cJSON *args, const ks_args_schema *schema, const char *path,
                       unsigned top);
/* The args kind of a plugin while the file loads: its descriptor's schema kind when L->reg holds
 * it, else an unshipped upstream kind (above); NULL: none (its args are not looked at now). */
const char *ks__cfg_args_kind(const cfg_load *L, const char *plugin);
/* Checks the shape of args of such a kind (kind/apiVersion, unknown fields, types), drops nulls
 * and fills defaults in place (the schema's, or SetDefaults_<Kind>). path:
 * "profiles[0].pluginConfig[1].args". A plugin without a kind: nothing to do. */
int ks__cfg_args_prepare(cfg_load *L, const char *plugin, cJSON *args, const char *path);
/* On prepared args: the schema's bounds, then the plugin's validate_args (or Validate<Kind>), with
 * upstream's messages. */
int ks__cfg_args_validate(cfg_load *L, const char *plugin, const cJSON *args, const char *path);
/* Fresh defaulted args of such a kind; NULL on out of memory. */
cJSON *ks__cfg_args_new_default(cfg_load *L, const char *plugin);
/* A plugin's own schema (ABI 1.3): the kind, the shape check (kubeschedPluginPath allowed), the
 * declared defaults in place, then the declared bounds. */
int ks__cfg_args_apply_schema(cfg_load *L, const char *plugin, const ks_args_schema *schema,
                              cJSON *args, const char *path);
/* "<path>: Invalid value: <value as JSON>: <detail>" (upstream field.Invalid). */
int ks__cfg_invalid(cfg_load *L, const char *path, const cJSON *v, const char *detail);

/* Validation helpers shared with the extender checks. */
int ks__cfg_is_qualified_name(const char *s, const char **why);

/* ---- small utilities (config_msg.c) ---- */
/* snprintf for field paths and messages: a long path is cut, which is fine in a message. */
static inline KS_PRINTF(3, 4) void ks__cfg_pathf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}
char *ks__cfg_strdup(const char *s);

#endif
