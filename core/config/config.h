/*
 * KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): parsing with libyaml, upstream
 * defaulting (SetDefaults_KubeSchedulerConfiguration, getDefaultPlugins, mergePluginSet, default
 * plugin args) and upstream validation, then the per-profile plan (framework.go NewFramework's
 * multiPoint expansion and checks) against the plugin registry.
 *
 * Errors name the file and line:column (YAML syntax, unknown fields, wrong types) or the field path
 * (semantic checks), and say what would be valid. One message per failure, in err.
 *
 * Threads: main thread, before scheduling starts; the result is read-only afterwards.
 */
#ifndef KS_CORE_CONFIG_H
#define KS_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

struct ks_registry;

/* The kube-scheduler release whose configuration semantics (default profile, args defaults and
 * validation) and in-tree plugin decisions kubesched follows; validate-config states it. */
#define KS_CFG_KUBERNETES_VERSION "v1.37.2"

/* Extension points in upstream call order. multiPoint is separate (KS_PT_MULTI). */
typedef enum ks_point {
    KS_PT_PRE_ENQUEUE = 0,
    KS_PT_QUEUE_SORT,
    KS_PT_PRE_FILTER,
    KS_PT_FILTER,
    KS_PT_POST_FILTER,
    KS_PT_PRE_SCORE,
    KS_PT_SCORE,
    KS_PT_RESERVE,
    KS_PT_PERMIT,
    KS_PT_PRE_BIND,
    KS_PT_BIND,
    KS_PT_POST_BIND,
    KS_PT_COUNT,
    KS_PT_MULTI = KS_PT_COUNT, /* index of multiPoint in ks_profile_config.plugins */
    /* v1.37 Plugins fields for pod-group scheduling (GenericWorkload, off by default): parsed,
     * merged and checked like the others, but no kubesched plugin (and no SDK slot) implements
     * them, so the frameworks never run them and an enabled entry is refused by the plan. */
    KS_PT_PLACEMENT_GENERATE,
    KS_PT_PLACEMENT_SCORE,
    KS_PT_POD_GROUP_POST_FILTER,
    KS_PT_NSETS /* size of ks_profile_config.plugins */
} ks_point;

/* "preEnqueue", "queueSort", ... "multiPoint", "placementGenerate", ... (the YAML field names). */
const char *ks__point_field(ks_point p);
/* "PreEnqueue", "QueueSort", ... (upstream interface names used in messages and metrics). */
const char *ks__point_name(ks_point p);
/* Whether desc implements point p (Reserve counts when reserve or unreserve is set, PreFilter when
 * pre_filter is set, Score when score is set). */
int ks__desc_implements(const ks_plugin_desc *desc, ks_point p);

typedef struct ks_plugin_ref {
    char *name;
    int32_t weight;   /* 0 when not given (then 1 for Score) */
    int from_default; /* came from upstream's default plugin set, not from the user */
} ks_plugin_ref;

typedef struct ks_plugin_set {
    size_t nenabled;
    ks_plugin_ref *enabled;
    size_t ndisabled;
    char **disabled;
} ks_plugin_set;

typedef struct ks_plugin_config {
    char *name;
    cJSON *args;   /* owned; defaulted; {} when the user gave none */
    char *so_path; /* kubeschedPluginPath resolved against the config's directory, or NULL */
    char *field;   /* "profiles[0].pluginConfig[1]" for messages */
    /* The args were checked, defaulted and validated while the file loaded: the plugin was in the
     * registry then (the in-tree module) or has an args kind of config_defaults.c. */
    int args_checked;
} ks_plugin_config;

typedef struct ks_profile_config {
    char *scheduler_name;
    int32_t percentage_of_nodes_to_score; /* -1 when unset (then the global value applies) */
    /* After mergePluginSet(defaults, user): index KS_PT_MULTI is multiPoint. */
    ks_plugin_set plugins[KS_PT_NSETS];
    size_t nplugin_configs;
    ks_plugin_config *plugin_configs; /* user entries, then defaults for enabled plugins (sorted) */
} ks_profile_config;

typedef struct ks_config {
    char *path; /* the file it came from, or "<string>" */
    char *dir;  /* its directory, for relative kubeschedPluginPath */
    int32_t parallelism;
    int32_t percentage_of_nodes_to_score; /* 0 = adaptive */
    int64_t pod_initial_backoff_seconds;
    int64_t pod_max_backoff_seconds;
    int enable_profiling;
    int enable_contention_profiling;
    int delay_cache_until_active;
    struct {
        int leader_elect;
        int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
        char *resource_lock, *resource_name, *resource_namespace;
    } leader_election;
    struct {
        char *kubeconfig;
        char *accept_content_types;
        char *content_type;
        double qps;
        int32_t burst;
    } client_connection;
    size_t nprofiles;
    ks_profile_config *profiles;
    /* Where each value of the pluginConfig args was written (line and column in path), so that
     * messages about args checked after loading still name them. Owned; config_msg.c. */
    struct ks_cfg_marks *arg_marks;
} ks_config;

/* Parse + default + validate. reg: the plugins known before the file is read (the in-tree module,
 * registered first): the args of each one with an args schema (ABI 1.3) are checked, defaulted and
 * validated (its validate_args) here; NULL: none. 0 on success; otherwise
 * KS_EPARSE/KS_EINVAL/KS_EIO and a message:
 *   "cfg.yaml:12:5: unknown field \"filtr\" in profiles[0].plugins (valid: preEnqueue, ...)"
 *   "cfg.yaml: profiles[1].schedulerName: Duplicate value: \"a\""                              */
int ks__config_load_file(const struct ks_registry *reg, const char *path, ks_config **out,
                         char *err, size_t errlen);
int ks__config_load_string(const struct ks_registry *reg, const char *yaml, const char *name,
                           ks_config **out, char *err, size_t errlen);
/* The --leader-elect* flags of kube-scheduler (component-base BindLeaderElectionFlags). As
 * upstream's options.ApplyLeaderElectionTo does, each flag that was given (its bit in `set`)
 * replaces the file's value after defaulting and before validation, so the validation messages
 * are the same whichever way a value came. Strings are borrowed for the call. */
enum {
    KS_LE_FLAG_LEADER_ELECT = 1u << 0,
    KS_LE_FLAG_LEASE_DURATION = 1u << 1,
    KS_LE_FLAG_RENEW_DEADLINE = 1u << 2,
    KS_LE_FLAG_RETRY_PERIOD = 1u << 3,
    KS_LE_FLAG_RESOURCE_LOCK = 1u << 4,
    KS_LE_FLAG_RESOURCE_NAME = 1u << 5,
    KS_LE_FLAG_RESOURCE_NAMESPACE = 1u << 6
};
typedef struct ks_leader_election_flags {
    unsigned set; /* KS_LE_FLAG_* of the flags given */
    int leader_elect;
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    const char *resource_lock, *resource_name, *resource_namespace;
} ks_leader_election_flags;
/* ks__config_load_file with the flags applied (flags NULL: none). */
int ks__config_load_file_flags(const struct ks_registry *reg, const char *path,
                               const ks_leader_election_flags *flags, ks_config **out, char *err,
                               size_t errlen);
int ks__config_load_string_flags(const struct ks_registry *reg, const char *yaml, const char *name,
                                 const ks_leader_election_flags *flags, ks_config **out, char *err,
                                 size_t errlen);
/* Whether the GenericWorkload feature gate is on (upstream applyFeatureGates appends
 * GangScheduling to the default plugins then). Called by --feature-gates handling (main thread)
 * before any configuration is loaded; off until then, as upstream's default. */
void ks__cfg_set_generic_workload(int on);
/* The configuration kube-scheduler runs with when given none. */
int ks__config_default(const struct ks_registry *reg, ks_config **out, char *err, size_t errlen);
void ks__config_free(ks_config *cfg); /* NULL is a no-op */

/* ---- The per-profile plan (NewFramework) ---------------------------------------------------- */

typedef struct ks_planned_plugin {
    const char *name;           /* borrowed(plan) */
    const ks_plugin_desc *desc; /* borrowed(registry) */
    int32_t weight;             /* Score only: >= 1 */
} ks_planned_plugin;

typedef struct ks_profile_plan {
    const ks_profile_config *profile; /* borrowed(config) */
    /* Every distinct plugin of the profile once, in first-use order, with its args. */
    size_t ninstances;
    struct {
        const char *name;
        const ks_plugin_desc *desc;
        const cJSON *args; /* borrowed(config); NULL when none */
    } *instances;
    /* Per extension point, in call order. */
    size_t npoint[KS_PT_COUNT];
    ks_planned_plugin *point[KS_PT_COUNT];
    /* Upstream default plugins skipped because kubesched does not ship them yet. */
    size_t nunavailable;
    const char **unavailable;
} ks_profile_plan;

/* Builds the plan of every profile of cfg against reg with upstream's framework checks:
 * `Filter "X" does not exist`, `plugin "X" does not extend Filter plugin`, `plugin "X" already
 * registered as "Filter"`, `only one queue sort plugin required for profile with scheduler name
 * "p", but got 2`, `at least one bind plugin is needed for profile with scheduler name "p"`,
 * `different queue sort plugins for profile "b": "X", first: "Y"`, weights out of range /
 * `total score of Score plugins could overflow`. Messages name the file and field path.
 * *plans is an array of cfg->nprofiles plans. */
/* Checks the args of every pluginConfig entry whose plugin declares its own args schema (a shared
 * object built against ABI 1.3 or later, see ks_args_schema) and fills in the declared defaults,
 * with the same messages as the in-tree kinds ("FILE: profiles[0].pluginConfig[1].args: unknown
 * field ..."). Run it once the loader has added the shared objects' plugins to reg (the file is
 * parsed before they are loaded), before ks__config_plan. Main thread. */
int ks__config_check_plugin_args(ks_config *cfg, const struct ks_registry *reg, char *err,
                                 size_t errlen);

int ks__config_plan(const ks_config *cfg, const struct ks_registry *reg, ks_profile_plan **plans,
                    char *err, size_t errlen);
void ks__config_plans_free(ks_profile_plan *plans, size_t n);

/* validate-config output: the effective profiles (plugins per extension point with weights and
 * args after defaulting and merging), and the unavailable default plugins. Writes to out. */
void ks__config_print(const ks_config *cfg, const ks_profile_plan *plans, FILE *out);

#endif
