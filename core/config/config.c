/*
 * KubeSchedulerConfiguration loading: the entry points of config.h, upstream's defaulting
 * (SetDefaults_KubeSchedulerConfiguration, setDefaults_KubeSchedulerProfile) and validation
 * (ValidateKubeSchedulerConfiguration and the component-base checks it calls), then what is
 * specific to kubesched (no extenders; kubeschedPluginPath resolved against the file's directory).
 *
 * The YAML decoder is config_parse.c, plugin sets and args kinds config_defaults.c, the plan
 * config_plan.c and validate-config's output config_print.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_CONFIG_MAX_BYTES ((size_t)64 << 20)

#include "config/config_int.h"
#include "config/registry.h"
#include "util/readfile.h"

static const char *const point_fields[KS_PT_NSETS] = {
    "preEnqueue", "queueSort",         "preFilter",      "filter",
    "postFilter", "preScore",          "score",          "reserve",
    "permit",     "preBind",           "bind",           "postBind",
    "multiPoint", "placementGenerate", "placementScore", "podGroupPostFilter"};
static const char *const point_names[KS_PT_NSETS] = {
    "PreEnqueue", "QueueSort",         "PreFilter",      "Filter",
    "PostFilter", "PreScore",          "Score",          "Reserve",
    "Permit",     "PreBind",           "Bind",           "PostBind",
    "MultiPoint", "PlacementGenerate", "PlacementScore", "PodGroupPostFilter"};

const char *ks__point_field(ks_point p)
{
    return (unsigned)p < KS_PT_NSETS ? point_fields[p] : "?";
}

const char *ks__point_name(ks_point p) { return (unsigned)p < KS_PT_NSETS ? point_names[p] : "?"; }

/* ---------------------------------------------------------------------------------------------
 * Freeing
 * ------------------------------------------------------------------------------------------- */

static void profile_free(ks_profile_config *p)
{
    free(p->scheduler_name);
    for (int i = 0; i < KS_PT_NSETS; i++)
        ks__cfg_set_free(&p->plugins[i]);
    for (size_t i = 0; i < p->nplugin_configs; i++) {
        free(p->plugin_configs[i].name);
        cJSON_Delete(p->plugin_configs[i].args);
        free(p->plugin_configs[i].so_path);
        free(p->plugin_configs[i].field);
    }
    free(p->plugin_configs);
}

void ks__config_free(ks_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->path);
    free(cfg->dir);
    ks__cfg_marks_free(cfg->arg_marks);
    free(cfg->leader_election.resource_lock);
    free(cfg->leader_election.resource_name);
    free(cfg->leader_election.resource_namespace);
    free(cfg->client_connection.kubeconfig);
    free(cfg->client_connection.accept_content_types);
    free(cfg->client_connection.content_type);
    for (size_t i = 0; i < cfg->nprofiles; i++)
        profile_free(&cfg->profiles[i]);
    free(cfg->profiles);
    free(cfg);
}

static void load_scratch_free(cfg_load *L)
{
    if (L->in) {
        for (size_t i = 0; i < L->cfg->nprofiles; i++)
            for (int p = 0; p < KS_PT_NSETS; p++)
                ks__cfg_set_free(&L->in[i].user[p]);
        free(L->in);
    }
    for (size_t i = 0; i < L->nextenders; i++) {
        for (size_t j = 0; j < L->extenders[i].nresources; j++)
            free(L->extenders[i].resources[j]);
        free(L->extenders[i].resources);
    }
    free(L->extenders);
}

/* ---------------------------------------------------------------------------------------------
 * Defaulting
 * ------------------------------------------------------------------------------------------- */

static int set_default_str(char **field, const char *value)
{
    if (*field && (*field)[0])
        return 0;
    free(*field);
    *field = ks__cfg_strdup(value);
    return *field ? 0 : KS_ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* setDefaults_KubeSchedulerProfile: merged plugins, user args defaulted in place, then defaulted
 * args for every enabled plugin (sorted by name) that has an args kind and no user entry. */
static int default_profile(cfg_load *L, size_t i)
{
    ks_profile_config *p = &L->cfg->profiles[i];
    cfg_profile_in *in = &L->in[i];
    ks_plugin_set defaults[KS_PT_NSETS];
    const ks_plugin_ref *defs;
    const char **names = NULL;
    size_t nnames = 0, cap = 0;
    ks_plugin_config *grown;
    int rc = 0;

    memset(defaults, 0, sizeof(defaults));
    defaults[KS_PT_MULTI].nenabled = ks__cfg_default_plugins(&defs);
    defaults[KS_PT_MULTI].enabled = (ks_plugin_ref *)defs;
    for (int pt = 0; pt < KS_PT_NSETS; pt++)
        if (ks__cfg_merge_set(&defaults[pt], &in->user[pt], &p->plugins[pt]) != 0)
            return ks__cfg_oom(L);

    for (size_t j = 0; j < p->nplugin_configs; j++) {
        char path[96];
        ks__cfg_pathf(path, sizeof(path), "%s.args", p->plugin_configs[j].field);
        if ((rc = ks__cfg_args_prepare(L, p->plugin_configs[j].name, p->plugin_configs[j].args,
                                       path)) < 0)
            return rc;
        p->plugin_configs[j].args_checked = ks__cfg_args_kind(L, p->plugin_configs[j].name) != NULL;
    }

    /* pluginsNames(): every enabled name, sorted, once; v1.37 reads placementGenerate and
     * placementScore too, not podGroupPostFilter. */
    for (int pt = 0; pt < KS_PT_NSETS; pt++)
        if (pt != KS_PT_POD_GROUP_POST_FILTER)
            cap += p->plugins[pt].nenabled;
    if (cap && !(names = malloc(cap * sizeof(*names))))
        return ks__cfg_oom(L);
    for (int pt = 0; pt < KS_PT_NSETS; pt++)
        for (size_t j = 0; pt != KS_PT_POD_GROUP_POST_FILTER && j < p->plugins[pt].nenabled; j++)
            names[nnames++] = p->plugins[pt].enabled[j].name;
    if (nnames)
        qsort(names, nnames, sizeof(*names), cmp_str);
    for (size_t j = 0; j < nnames; j++) {
        int have = 0;
        ks_plugin_config *e;
        char field[64];
        if ((j > 0 && strcmp(names[j], names[j - 1]) == 0) || !ks__cfg_args_kind(L, names[j]))
            continue;
        for (size_t k = 0; k < p->nplugin_configs && !have; k++)
            have = strcmp(p->plugin_configs[k].name, names[j]) == 0;
        if (have)
            continue;
        grown = realloc(p->plugin_configs, (p->nplugin_configs + 1) * sizeof(*grown));
        if (!grown) {
            rc = ks__cfg_oom(L);
            break;
        }
        p->plugin_configs = grown;
        e = &p->plugin_configs[p->nplugin_configs];
        memset(e, 0, sizeof(*e));
        p->nplugin_configs++;
        ks__cfg_pathf(field, sizeof(field), "profiles[%zu].pluginConfig[%zu]", i,
                      p->nplugin_configs - 1);
        e->name = ks__cfg_strdup(names[j]);
        e->args = ks__cfg_args_new_default(L, names[j]);
        e->field = ks__cfg_strdup(field);
        e->args_checked = 1;
        if (!e->name || !e->args || !e->field) {
            rc = ks__cfg_oom(L);
            break;
        }
    }
    free(names);
    return rc;
}

/* SetDefaults_KubeSchedulerConfiguration (+ RecommendedDefaultLeaderElectionConfiguration). */
static int apply_defaults(cfg_load *L)
{
    ks_config *c = L->cfg;
    int rc;
    if (!(L->set & CFG_SET_PARALLELISM))
        c->parallelism = 16;
    if (c->nprofiles == 0) {
        c->profiles = calloc(1, sizeof(*c->profiles));
        L->in = calloc(1, sizeof(*L->in));
        if (!c->profiles || !L->in)
            return ks__cfg_oom(L);
        c->nprofiles = 1;
        c->profiles[0].percentage_of_nodes_to_score = -1;
    }
    /* Only a single profile gets the default name; validation wants every other one named. */
    if (c->nprofiles == 1 && !L->in[0].has_name &&
        set_default_str(&c->profiles[0].scheduler_name, KS_CFG_DEFAULT_SCHEDULER) != 0)
        return ks__cfg_oom(L);
    for (size_t i = 0; i < c->nprofiles; i++)
        if ((rc = default_profile(L, i)) < 0)
            return rc;
    if (!(L->set & CFG_SET_PERCENTAGE))
        c->percentage_of_nodes_to_score = 0;
    if (set_default_str(&c->leader_election.resource_lock, "leases") != 0 ||
        set_default_str(&c->leader_election.resource_namespace, "kube-system") != 0 ||
        set_default_str(&c->leader_election.resource_name, "kube-scheduler") != 0 ||
        set_default_str(&c->client_connection.content_type,
                        "application/vnd.kubernetes.protobuf") != 0)
        return ks__cfg_oom(L);
    if (c->client_connection.qps == 0.0)
        c->client_connection.qps = 50.0;
    if (c->client_connection.burst == 0)
        c->client_connection.burst = 100;
    if (!(L->set & CFG_SET_LEADER_ELECT))
        c->leader_election.leader_elect = 1;
    if (L->lease_ns == 0)
        L->lease_ns = 15000000000ll;
    if (L->renew_ns == 0)
        L->renew_ns = 10000000000ll;
    if (L->retry_ns == 0)
        L->retry_ns = 2000000000ll;
    c->leader_election.lease_duration_ms = L->lease_ns / 1000000;
    c->leader_election.renew_deadline_ms = L->renew_ns / 1000000;
    c->leader_election.retry_period_ms = L->retry_ns / 1000000;
    if (!(L->set & CFG_SET_INITIAL_BACKOFF))
        c->pod_initial_backoff_seconds = 1;
    if (!(L->set & CFG_SET_MAX_BACKOFF))
        c->pod_max_backoff_seconds = 10;
    if (!(L->set & CFG_SET_PROFILING))
        c->enable_profiling = 1;
    if (c->enable_profiling && !(L->set & CFG_SET_CONTENTION))
        c->enable_contention_profiling = 1;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Validation
 * ------------------------------------------------------------------------------------------- */

static int validate_leader_election(cfg_load *L)
{
    const ks_config *c = L->cfg;
    char d[64];
    if (!c->leader_election.leader_elect)
        return 0;
    if (L->lease_ns <= 0) {
        ks__duration_format(L->lease_ns, d, sizeof(d));
        return ks__cfg_fail(L, KS_EINVAL,
                            "leaderElection.leaseDuration: Invalid value: \"%s\": must be greater "
                            "than zero",
                            d);
    }
    if (L->renew_ns <= 0) {
        ks__duration_format(L->renew_ns, d, sizeof(d));
        return ks__cfg_fail(L, KS_EINVAL,
                            "leaderElection.renewDeadline: Invalid value: \"%s\": must be greater "
                            "than zero",
                            d);
    }
    if (L->retry_ns <= 0) {
        ks__duration_format(L->retry_ns, d, sizeof(d));
        return ks__cfg_fail(L, KS_EINVAL,
                            "leaderElection.retryPeriod: Invalid value: \"%s\": must be greater "
                            "than zero",
                            d);
    }
    if (L->lease_ns <= L->renew_ns) {
        ks__duration_format(L->renew_ns, d, sizeof(d));
        return ks__cfg_fail(L, KS_EINVAL,
                            "leaderElection.leaseDuration: Invalid value: \"%s\": LeaseDuration "
                            "must be greater than RenewDeadline",
                            d);
    }
    /* Defaulting fills empty strings; only a --leader-elect-resource-* flag can empty them. */
    static const char *const what[] = {"resourceLock", "resourceNamespace", "resourceName"};
    const char *val[] = {c->leader_election.resource_lock, c->leader_election.resource_namespace,
                         c->leader_election.resource_name};
    for (size_t i = 0; i < 3; i++)
        if (!val[i] || !val[i][0])
            return ks__cfg_fail(L, KS_EINVAL,
                                "leaderElection.%s: Invalid value: \"\": %s is required", what[i],
                                what[i]);
    return 0;
}

/* IsExtendedResourceName: a qualified name with a '/', outside kubernetes.io, not requests.*. */
static int is_extended_resource_name(const char *name)
{
    char quota[512];
    const char *why;
    if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || strncmp(name, "requests.", 9) == 0)
        return 0;
    ks__cfg_pathf(quota, sizeof(quota), "requests.%s", name);
    return ks__cfg_is_qualified_name(quota, &why);
}

static int validate_extenders(cfg_load *L)
{
    size_t binders = 0;
    for (size_t i = 0; i < L->nextenders; i++) {
        const cfg_extender_in *e = &L->extenders[i];
        if (e->has_prioritize_verb && e->weight <= 0)
            return ks__cfg_fail(L, KS_EINVAL,
                                "extenders[%zu].weight: Invalid value: %" PRId64
                                ": must have a positive weight applied to it",
                                i, e->weight);
        if (e->has_bind_verb)
            binders++;
        for (size_t j = 0; j < e->nresources; j++) {
            const char *name = e->resources[j] ? e->resources[j] : "";
            const char *why;
            if (!ks__cfg_is_qualified_name(name, &why))
                return ks__cfg_fail(L, KS_EINVAL,
                                    "extenders[%zu].managedResources[%zu].name: Invalid value: "
                                    "\"%s\": %s",
                                    i, j, name, why);
            if (!is_extended_resource_name(name))
                return ks__cfg_fail(L, KS_EINVAL,
                                    "extenders[%zu].managedResources[%zu].name: Invalid value: "
                                    "\"%s\": is an invalid extended resource name",
                                    i, j, name);
            for (size_t k = 0; k < j; k++)
                if (e->resources[k] && strcmp(e->resources[k], name) == 0)
                    return ks__cfg_fail(L, KS_EINVAL,
                                        "extenders[%zu].managedResources[%zu].name: Invalid "
                                        "value: \"%s\": duplicate extender managed resource name",
                                        i, j, name);
        }
    }
    if (binders > 1)
        return ks__cfg_fail(L, KS_EINVAL,
                            "extenders: Invalid value: \"found %zu extenders implementing bind\": "
                            "only one extender can implement bind",
                            binders);
    return 0;
}

static int validate_removed(cfg_load *L, size_t i)
{
    const cfg_profile_in *in = &L->in[i];
    for (int pt = 0; pt < KS_PT_NSETS; pt++) {
        /* Upstream's stagesToPluginSet lists podGroupPostFilter but neither placement set. */
        if (pt == KS_PT_PLACEMENT_GENERATE || pt == KS_PT_PLACEMENT_SCORE)
            continue;
        for (size_t j = 0; j < in->user[pt].nenabled; j++) {
            const char *name = in->user[pt].enabled[j].name;
            if (ks__registry_is_removed(name))
                return ks__cfg_fail(L, KS_EINVAL,
                                    "profiles[%zu].plugins.%s.enabled[%zu]: Invalid value: "
                                    "\"%s\": was invalid in version \"" KS_CFG_API_VERSION
                                    "\" (KubeSchedulerConfiguration is version "
                                    "\"" KS_CFG_API_VERSION "\")",
                                    i, ks__point_field((ks_point)pt), j, name);
        }
    }
    return 0;
}

static int validate_plugin_config(cfg_load *L, size_t i)
{
    const ks_profile_config *p = &L->cfg->profiles[i];
    for (size_t j = 0; j < p->nplugin_configs; j++) {
        const ks_plugin_config *e = &p->plugin_configs[j];
        char path[96];
        for (size_t k = 0; k < j; k++)
            if (strcmp(p->plugin_configs[k].name, e->name) == 0)
                return ks__cfg_fail(L, KS_EINVAL,
                                    "%s: Duplicate value: \"%s\" (already configured by %s)",
                                    e->field, e->name, p->plugin_configs[k].field);
        if (ks__registry_is_removed(e->name))
            return ks__cfg_fail(L, KS_EINVAL,
                                "%s: Invalid value: \"%s\": was invalid in version "
                                "\"" KS_CFG_API_VERSION "\" (KubeSchedulerConfiguration is "
                                "version \"" KS_CFG_API_VERSION "\")",
                                e->field, e->name);
        ks__cfg_pathf(path, sizeof(path), "%s.args", e->field);
        if (ks__cfg_args_validate(L, e->name, e->args, path) < 0)
            return L->rc;
    }
    return 0;
}

static int set_equal(const ks_plugin_set *a, const ks_plugin_set *b)
{
    if (a->nenabled != b->nenabled || a->ndisabled != b->ndisabled)
        return 0;
    for (size_t i = 0; i < a->nenabled; i++)
        if (strcmp(a->enabled[i].name, b->enabled[i].name) != 0 ||
            a->enabled[i].weight != b->enabled[i].weight)
            return 0;
    for (size_t i = 0; i < a->ndisabled; i++)
        if (strcmp(a->disabled[i], b->disabled[i]) != 0)
            return 0;
    return 1;
}

static void set_summary(const ks_plugin_set *s, char *buf, size_t len)
{
    size_t off = 0;
    int w = snprintf(buf, len, "{enabled: [");
    off = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < s->nenabled && off < len; i++) {
        w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", s->enabled[i].name);
        off += w > 0 ? (size_t)w : 0;
    }
    if (off < len) {
        w = snprintf(buf + off, len - off, "], disabled: [");
        off += w > 0 ? (size_t)w : 0;
    }
    for (size_t i = 0; i < s->ndisabled && off < len; i++) {
        w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", s->disabled[i]);
        off += w > 0 ? (size_t)w : 0;
    }
    if (off < len)
        snprintf(buf + off, len - off, "]}");
}

static int args_equal(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return a == b;
    return cJSON_Compare(a, b, 1);
}

/* validateCommonQueueSort. */
static int validate_common_queue_sort(cfg_load *L)
{
    const ks_config *c = L->cfg;
    const ks_plugin_set *canon = &c->profiles[0].plugins[KS_PT_QUEUE_SORT];
    const char *name = canon->nenabled ? canon->enabled[0].name : "";
    const cJSON *args = NULL;
    if (canon->nenabled > 1)
        return ks__cfg_fail(L, KS_EINVAL,
                            "profiles[0].plugins.queueSort.enabled: Invalid value: %zu: only one "
                            "queue sort plugin can be enabled",
                            canon->nenabled);
    for (size_t j = 0; j < c->profiles[0].nplugin_configs; j++)
        if (name[0] && strcmp(c->profiles[0].plugin_configs[j].name, name) == 0)
            args = c->profiles[0].plugin_configs[j].args;
    for (size_t i = 1; i < c->nprofiles; i++) {
        const ks_profile_config *p = &c->profiles[i];
        if (!set_equal(canon, &p->plugins[KS_PT_QUEUE_SORT])) {
            char got[256], want[256];
            set_summary(&p->plugins[KS_PT_QUEUE_SORT], got, sizeof(got));
            set_summary(canon, want, sizeof(want));
            return ks__cfg_fail(L, KS_EINVAL,
                                "profiles[%zu].plugins.queueSort: Invalid value: %s: must be the "
                                "same for all profiles (profiles[0] has %s)",
                                i, got, want);
        }
        for (size_t j = 0; j < p->nplugin_configs; j++)
            if (strcmp(p->plugin_configs[j].name, name) == 0 &&
                !args_equal(args, p->plugin_configs[j].args))
                return ks__cfg_fail(L, KS_EINVAL,
                                    "%s.args: Invalid value: args of %s: queueSort must be the "
                                    "same for all profiles",
                                    p->plugin_configs[j].field, name);
    }
    return 0;
}

/* ValidateKubeSchedulerConfiguration, in upstream's order; the first error is reported. */
static int validate(cfg_load *L)
{
    const ks_config *c = L->cfg;
    if (c->client_connection.burst < 0)
        return ks__cfg_fail(L, KS_EINVAL,
                            "clientConnection.burst: Invalid value: %d: must be non-negative",
                            (int)c->client_connection.burst);
    if (validate_leader_election(L) < 0)
        return L->rc;
    if (c->leader_election.leader_elect && strcmp(c->leader_election.resource_lock, "leases") != 0)
        return ks__cfg_fail(L, KS_EINVAL,
                            "leaderElection.resourceLock: Invalid value: \"%s\": resourceLock "
                            "value must be \"leases\"",
                            c->leader_election.resource_lock);
    if (c->parallelism <= 0)
        return ks__cfg_fail(L, KS_EINVAL,
                            "parallelism: Invalid value: %d: should be an integer value greater "
                            "than zero",
                            (int)c->parallelism);
    for (size_t i = 0; i < c->nprofiles; i++) {
        const ks_profile_config *p = &c->profiles[i];
        if (!p->scheduler_name || !p->scheduler_name[0])
            return ks__cfg_fail(L, KS_EINVAL, "profiles[%zu].schedulerName: Required value%s", i,
                                c->nprofiles > 1 ? " (every profile needs a name when there are "
                                                   "several)"
                                                 : "");
        if (L->in[i].has_percentage &&
            (p->percentage_of_nodes_to_score < 0 || p->percentage_of_nodes_to_score > 100))
            return ks__cfg_fail(L, KS_EINVAL,
                                "profiles[%zu].percentageOfNodesToScore: Invalid value: %d: not "
                                "in valid range [0-100]",
                                i, (int)p->percentage_of_nodes_to_score);
        if (validate_removed(L, i) < 0 || validate_plugin_config(L, i) < 0)
            return L->rc;
        for (size_t k = 0; k < i; k++)
            if (strcmp(c->profiles[k].scheduler_name, p->scheduler_name) == 0)
                return ks__cfg_fail(L, KS_EINVAL,
                                    "profiles[%zu].schedulerName: Duplicate value: \"%s\" (already "
                                    "used by profiles[%zu]; each profile needs its own name)",
                                    i, p->scheduler_name, k);
    }
    if (validate_common_queue_sort(L) < 0)
        return L->rc;
    if (c->percentage_of_nodes_to_score < 0 || c->percentage_of_nodes_to_score > 100)
        return ks__cfg_fail(L, KS_EINVAL,
                            "percentageOfNodesToScore: Invalid value: %d: not in valid range "
                            "[0-100]",
                            (int)c->percentage_of_nodes_to_score);
    if (c->pod_initial_backoff_seconds <= 0)
        return ks__cfg_fail(L, KS_EINVAL,
                            "podInitialBackoffSeconds: Invalid value: %" PRId64
                            ": must be greater than 0",
                            c->pod_initial_backoff_seconds);
    if (c->pod_max_backoff_seconds < c->pod_initial_backoff_seconds)
        return ks__cfg_fail(L, KS_EINVAL,
                            "podMaxBackoffSeconds: Invalid value: %" PRId64
                            ": must be greater than or equal to PodInitialBackoffSeconds (%" PRId64
                            ")",
                            c->pod_max_backoff_seconds, c->pod_initial_backoff_seconds);
    return validate_extenders(L);
}

/* ---------------------------------------------------------------------------------------------
 * kubesched specifics
 * ------------------------------------------------------------------------------------------- */

static char *join_path(const char *dir, const char *rel)
{
    size_t n;
    char *out;
    if (rel[0] == '/')
        return ks__cfg_strdup(rel);
    n = strlen(dir) + strlen(rel) + 2;
    out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", dir, rel);
    return out;
}

/* kubeschedIsolation, kubeschedFailurePolicy, kubeschedErrorBudget of one pluginConfig entry. */
static int isolation_checks(cfg_load *L, const ks_plugin_config *e, int from_so)
{
    const cJSON *iso = cJSON_GetObjectItemCaseSensitive(e->args, KS_CFG_ISOLATION_KEY);
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(e->args, KS_CFG_FAILURE_POLICY_KEY);
    const cJSON *bud = cJSON_GetObjectItemCaseSensitive(e->args, KS_CFG_ERROR_BUDGET_KEY);
    if (iso && (!cJSON_IsString(iso) || (strcmp(iso->valuestring, "process") != 0 &&
                                         strcmp(iso->valuestring, "none") != 0)))
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s.args." KS_CFG_ISOLATION_KEY
                            ": expected \"process\" (the plugin runs in a child process that "
                            "kubesched supervises) or \"none\" (in-process, the default)",
                            e->field);
    if (pol && (!cJSON_IsString(pol) ||
                (strcmp(pol->valuestring, "fail") != 0 && strcmp(pol->valuestring, "ignore") != 0)))
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s.args." KS_CFG_FAILURE_POLICY_KEY
                            ": expected \"fail\" (the profile's pods stay pending once the "
                            "plugin is taken out, the default) or \"ignore\" (the profile runs "
                            "without it)",
                            e->field);
    if (bud && (!cJSON_IsNumber(bud) || bud->valuedouble != (double)(int)bud->valuedouble ||
                bud->valuedouble < 1))
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s.args." KS_CFG_ERROR_BUDGET_KEY
                            ": expected an integer >= 1: how many crashes or timeouts of the "
                            "isolated plugin its failure policy waits for (default 3)",
                            e->field);
    int isolated = iso && !strcmp(iso->valuestring, "process");
    if (isolated && !from_so)
        return ks__cfg_fail(
            L, KS_EINVAL,
            "%s.args." KS_CFG_ISOLATION_KEY
            ": only for a plugin loaded from a shared object (with " KS_CFG_PLUGIN_PATH_KEY
            "); in-tree plugins run in-process",
            e->field);
    if ((pol || bud) && !isolated)
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s.args.%s: only with " KS_CFG_ISOLATION_KEY
                            ": process (an in-process plugin's crash ends the scheduler)",
                            e->field, pol ? KS_CFG_FAILURE_POLICY_KEY : KS_CFG_ERROR_BUDGET_KEY);
    return 0;
}

static int kubesched_checks(cfg_load *L)
{
    ks_config *c = L->cfg;
    if (L->nextenders)
        return ks__cfg_fail(L, KS_EINVAL,
                            "extenders: kubesched does not support scheduler extenders (%zu "
                            "configured): remove the extenders list; an out-of-tree plugin "
                            "loaded from a shared object (\"" KS_CFG_PLUGIN_PATH_KEY
                            "\" in its pluginConfig args) can do what an extender does",
                            L->nextenders);
    for (size_t i = 0; i < c->nprofiles; i++) {
        ks_profile_config *p = &c->profiles[i];
        for (size_t j = 0; j < p->nplugin_configs; j++) {
            ks_plugin_config *e = &p->plugin_configs[j];
            const cJSON *dl = cJSON_GetObjectItemCaseSensitive(e->args, KS_CFG_CALL_DEADLINE_KEY);
            int64_t dl_ns;
            if (dl && (!cJSON_IsString(dl) || ks__duration_parse(dl->valuestring, &dl_ns) != 0 ||
                       dl_ns < 0))
                return ks__cfg_fail(L, KS_EINVAL,
                                    "%s.args." KS_CFG_CALL_DEADLINE_KEY
                                    ": expected a duration such as \"30s\" or \"500ms\": how long "
                                    "one call of this plugin may run before kubesched reports it "
                                    "and exits (\"0s\": never)",
                                    e->field);
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->args, KS_CFG_PLUGIN_PATH_KEY);
            if (isolation_checks(L, e, v != NULL) != 0)
                return -1;
            if (dl && !v)
                return ks__cfg_fail(
                    L, KS_EINVAL,
                    "%s.args." KS_CFG_CALL_DEADLINE_KEY
                    ": only for a plugin loaded from a shared object (with " KS_CFG_PLUGIN_PATH_KEY
                    "); in-tree plugins follow "
                    "--plugin-call-deadline",
                    e->field);
            if (!v)
                continue;
            if (!cJSON_IsString(v) || !v->valuestring[0])
                return ks__cfg_fail(L, KS_EINVAL,
                                    "%s.args." KS_CFG_PLUGIN_PATH_KEY
                                    ": expected a non-empty string: the path of the plugin's "
                                    "shared object (.so), absolute or relative to the "
                                    "configuration's directory",
                                    e->field);
            e->so_path = join_path(c->dir, v->valuestring);
            if (!e->so_path)
                return ks__cfg_oom(L);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------------------------- */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *d;
    if (!slash)
        return ks__cfg_strdup(".");
    if (slash == path)
        return ks__cfg_strdup("/");
    d = malloc((size_t)(slash - path) + 1);
    if (d) {
        memcpy(d, path, (size_t)(slash - path));
        d[slash - path] = '\0';
    }
    return d;
}

/* options.ApplyLeaderElectionTo: the flags that were given replace the defaulted values. */
static int apply_leader_election_flags(cfg_load *L, const ks_leader_election_flags *f)
{
    ks_config *c = L->cfg;
    if (!f)
        return 0;
    if (f->set & KS_LE_FLAG_LEADER_ELECT)
        c->leader_election.leader_elect = f->leader_elect;
    if (f->set & KS_LE_FLAG_LEASE_DURATION)
        L->lease_ns = f->lease_duration_ns;
    if (f->set & KS_LE_FLAG_RENEW_DEADLINE)
        L->renew_ns = f->renew_deadline_ns;
    if (f->set & KS_LE_FLAG_RETRY_PERIOD)
        L->retry_ns = f->retry_period_ns;
    struct {
        unsigned bit;
        const char *value;
        char **field;
    } strs[] = {
        {KS_LE_FLAG_RESOURCE_LOCK, f->resource_lock, &c->leader_election.resource_lock},
        {KS_LE_FLAG_RESOURCE_NAME, f->resource_name, &c->leader_election.resource_name},
        {KS_LE_FLAG_RESOURCE_NAMESPACE, f->resource_namespace,
         &c->leader_election.resource_namespace},
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        if (!(f->set & strs[i].bit))
            continue;
        char *v = ks__cfg_strdup(strs[i].value ? strs[i].value : "");
        if (!v)
            return ks__cfg_oom(L);
        free(*strs[i].field);
        *strs[i].field = v;
    }
    c->leader_election.lease_duration_ms = L->lease_ns / 1000000;
    c->leader_election.renew_deadline_ms = L->renew_ns / 1000000;
    c->leader_election.retry_period_ms = L->retry_ns / 1000000;
    return 0;
}

static int load(const struct ks_registry *reg, const char *yaml, size_t len, const char *name,
                const ks_leader_election_flags *flags, ks_config **out, char *err, size_t errlen)
{
    cfg_load L;
    ks_config *c = calloc(1, sizeof(*c));
    int rc;
    memset(&L, 0, sizeof(L));
    L.err = err;
    L.errlen = errlen;
    L.file = name;
    L.reg = reg;
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    if (!c)
        return ks__cfg_oom(&L);
    L.cfg = c;
    c->path = ks__cfg_strdup(name);
    c->dir = dir_of(name);
    if (!c->path || !c->dir) {
        rc = ks__cfg_oom(&L);
        goto out;
    }
    L.file = c->path;
    if ((rc = ks__cfg_decode(&L, yaml, len)) < 0 || (rc = apply_defaults(&L)) < 0 ||
        (rc = apply_leader_election_flags(&L, flags)) < 0 || (rc = validate(&L)) < 0 ||
        (rc = kubesched_checks(&L)) < 0)
        goto out;
out:
    load_scratch_free(&L);
    if (rc < 0) {
        ks__config_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int ks__config_load_string(const struct ks_registry *reg, const char *yaml, const char *name,
                           ks_config **out, char *err, size_t errlen)
{
    return ks__config_load_string_flags(reg, yaml, name, NULL, out, err, errlen);
}

int ks__config_load_string_flags(const struct ks_registry *reg, const char *yaml, const char *name,
                                 const ks_leader_election_flags *flags, ks_config **out, char *err,
                                 size_t errlen)
{
    if (!yaml) {
        *out = NULL;
        if (err && errlen)
            snprintf(err, errlen, "%s: no configuration text", name ? name : "<string>");
        return KS_EINVAL;
    }
    return load(reg, yaml, strlen(yaml), name ? name : "<string>", flags, out, err, errlen);
}

int ks__config_load_file(const struct ks_registry *reg, const char *path, ks_config **out,
                         char *err, size_t errlen)
{
    return ks__config_load_file_flags(reg, path, NULL, out, err, errlen);
}

int ks__config_load_file_flags(const struct ks_registry *reg, const char *path,
                               const ks_leader_election_flags *flags, ks_config **out, char *err,
                               size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;
    *out = NULL;
    if (!path) {
        if (err && errlen)
            snprintf(err, errlen, "no configuration file given");
        return KS_EINVAL;
    }
    rc = ks__read_file(path, KS_CONFIG_MAX_BYTES, &buf, &len);
    if (rc) {
        if (err && errlen) {
            if (rc == -EFBIG)
                snprintf(err, errlen, "%s: the configuration is larger than 64 MiB", path);
            else if (rc == -EISDIR)
                snprintf(err, errlen, "%s: is a directory, not a configuration file", path);
            else if (rc == -ENOMEM)
                snprintf(err, errlen, "%s: out of memory", path);
            else if (rc == -EIO)
                snprintf(err, errlen, "%s: cannot read the configuration: %s", path, strerror(-rc));
            else
                snprintf(err, errlen, "%s: cannot open the configuration: %s", path, strerror(-rc));
        }
        return rc == -ENOMEM ? KS_ENOMEM : KS_EIO;
    }
    rc = load(reg, buf, len, path, flags, out, err, errlen);
    free(buf);
    return rc;
}

int ks__config_default(const struct ks_registry *reg, ks_config **out, char *err, size_t errlen)
{
    static const char text[] = "apiVersion: " KS_CFG_API_VERSION "\nkind: " KS_CFG_KIND "\n";
    return load(reg, text, sizeof(text) - 1, "<default>", NULL, out, err, errlen);
}
