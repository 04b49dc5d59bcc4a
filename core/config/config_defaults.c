/*
 * Upstream defaulting that belongs to no plugin of kubesched (v1/defaults.go, default_plugins.go):
 *
 *   - getDefaultPlugins() of v1.37 (with applyFeatureGates for the v1.37 default gates) and
 *     mergePluginSet(default, custom);
 *   - the args kinds of the upstream plugins kubesched does not ship yet (DynamicResourcesArgs;
 *     VolumeBindingArgs moved to plugins/volumebinding): their schema (checked by config_args.c),
 * SetDefaults_<Kind> and Validate<Kind>. Each moves to plugins/<name>/ (its descriptor's
 * args_schema and validate_args, as every in-tree plugin with args has) when that plugin lands;
 *   - the words of upstream's qualified-name errors for the configuration's own fields.
 *
 * Args are cJSON objects throughout, so what a plugin later reads is exactly what is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/duration.h"
#include "util/numconv.h"
#include "config/config_int.h"

/* ---------------------------------------------------------------------------------------------
 * Default plugins and mergePluginSet
 * ------------------------------------------------------------------------------------------- */

#define DEF(n, w)                                                                                  \
    {                                                                                              \
        (char *)(n), (w), 1                                                                        \
    }
static const ks_plugin_ref default_plugins[] = {
    DEF("SchedulingGates", 0),
    DEF("PrioritySort", 0),
    /* v1.37: NodeName before NodeUnschedulable (its PreFilter narrows the nodes first). */
    DEF("NodeName", 0),
    DEF("NodeUnschedulable", 0),
    DEF("TaintToleration", 3),
    DEF("NodeAffinity", 2),
    DEF("NodePorts", 0),
    DEF("NodeResourcesFit", 1),
    DEF("VolumeRestrictions", 0),
    DEF("NodeVolumeLimits", 0),
    DEF("VolumeBinding", 0),
    DEF("VolumeZone", 0),
    DEF("PodTopologySpread", 2),
    DEF("InterPodAffinity", 2),
    /* applyDynamicResources: DynamicResourceAllocation is GA (locked on), inserted before
     * DefaultPreemption; a Score plugin with weight 2 since DRAPrioritizedList is GA (v1.37). */
    DEF("DynamicResources", 2),
    DEF("DefaultPreemption", 0),
    DEF("NodeResourcesBalancedAllocation", 1),
    DEF("ImageLocality", 1),
    DEF("DefaultBinder", 0),
    /* applyFeatureGates: the NodeDeclaredFeatures gate is GA (locked on) in v1.37. */
    DEF("NodeDeclaredFeatures", 0),
    /* applyFeatureGates: appended when GenericWorkload is on (Beta, off by default in v1.37);
     * the count below leaves it out otherwise. Must stay last. */
    DEF("GangScheduling", 0),
};
#undef DEF

/* The GenericWorkload gate as --feature-gates set it (core/sched/features.c tells us: the
 * config layer cannot read the gates, which live above it). Main thread, before any load. */
static int generic_workload;

void ks__cfg_set_generic_workload(int on) { generic_workload = on != 0; }

size_t ks__cfg_default_plugins(const ks_plugin_ref **out)
{
    *out = default_plugins;
    return sizeof(default_plugins) / sizeof(default_plugins[0]) - (generic_workload ? 0 : 1);
}

void ks__cfg_set_free(ks_plugin_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nenabled; i++)
        free(s->enabled[i].name);
    free(s->enabled);
    for (size_t i = 0; i < s->ndisabled; i++)
        free(s->disabled[i]);
    free(s->disabled);
    memset(s, 0, sizeof(*s));
}

static int push_ref(ks_plugin_set *out, const ks_plugin_ref *r, int from_default)
{
    char *name = ks__cfg_strdup(r->name);
    if (!name)
        return KS_ENOMEM;
    out->enabled[out->nenabled].name = name;
    out->enabled[out->nenabled].weight = r->weight;
    out->enabled[out->nenabled].from_default = from_default;
    out->nenabled++;
    return 0;
}

static int has_name(char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

int ks__cfg_merge_set(const ks_plugin_set *def, const ks_plugin_set *user, ks_plugin_set *out)
{
    size_t nd = user->ndisabled + def->ndisabled;
    unsigned char *replaced = NULL;
    memset(out, 0, sizeof(*out));
    if (nd) {
        out->disabled = calloc(nd, sizeof(char *));
        if (!out->disabled)
            goto oom;
    }
    for (size_t i = 0; i < user->ndisabled; i++)
        if (!(out->disabled[out->ndisabled++] = ks__cfg_strdup(user->disabled[i])))
            goto oom;
    for (size_t i = 0; i < def->ndisabled; i++)
        if (!(out->disabled[out->ndisabled++] = ks__cfg_strdup(def->disabled[i])))
            goto oom;
    if (def->nenabled + user->nenabled) {
        out->enabled = calloc(def->nenabled + user->nenabled, sizeof(*out->enabled));
        if (!out->enabled)
            goto oom;
    }
    if (user->nenabled && !(replaced = calloc(user->nenabled, 1)))
        goto oom;
    if (!has_name(out->disabled, out->ndisabled, "*")) {
        for (size_t i = 0; i < def->nenabled; i++) {
            const ks_plugin_ref *r = &def->enabled[i];
            long custom = -1;
            if (has_name(out->disabled, out->ndisabled, r->name))
                continue;
            /* Upstream keeps the last user entry of a name in a map: that one replaces the
             * default in place (its weight wins); earlier duplicates are appended below. */
            for (size_t j = 0; j < user->nenabled; j++)
                if (strcmp(user->enabled[j].name, r->name) == 0)
                    custom = (long)j;
            if (custom >= 0) {
                replaced[custom] = 1;
                if (push_ref(out, &user->enabled[custom], 0) != 0)
                    goto oom;
            } else if (push_ref(out, r, r->from_default) != 0) {
                goto oom;
            }
        }
    }
    for (size_t j = 0; j < user->nenabled; j++)
        if (!replaced[j] && push_ref(out, &user->enabled[j], 0) != 0)
            goto oom;
    free(replaced);
    return 0;
oom:
    free(replaced);
    ks__cfg_set_free(out);
    return KS_ENOMEM;
}

/* ---------------------------------------------------------------------------------------------
 * Args kinds kept in core
 *
 * DynamicResourcesArgs stays here although plugins/dynamicresources ships (its descriptor
 * declares no args_schema, so this table applies): the bindingTimeout message prints Go's
 * Duration text, which the core's duration formatter gives. The plugin reads filterTimeout.
 * ------------------------------------------------------------------------------------------- */

#define FIELD(name, type, object)                                                                  \
    {                                                                                              \
        (name), (type), (object), NULL, 0, 0, 0                                                    \
    }

static const ks_arg_field dra_f[] = {FIELD("filterTimeout", KS_ARG_DURATION, NULL),
                                     FIELD("bindingTimeout", KS_ARG_DURATION, NULL)};

static cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* SetDefaults_DynamicResourcesArgs: DRASchedulerFilterTimeout (Beta, on) gives filterTimeout 10s;
 * DRADeviceBindingConditions (Beta, on since v1.36) and DRAResourceClaimDeviceStatus (GA) give
 * bindingTimeout 600s, written as Go's Duration prints it. */
static void defaults_dra(cJSON *a)
{
    if (!get(a, "filterTimeout"))
        cJSON_AddStringToObject(a, "filterTimeout", "10s");
    if (!get(a, "bindingTimeout"))
        cJSON_AddStringToObject(a, "bindingTimeout", "10m0s");
}

static int validate_dra(cfg_load *L, const cJSON *a, const char *path)
{
    const cJSON *t = get(a, "filterTimeout");
    int64_t ns = 0;
    if (cJSON_IsString(t) && ks__duration_parse(t->valuestring, &ns) == 0 && ns < 0) {
        char p[360];
        ks__cfg_pathf(p, sizeof(p), "%s.filterTimeout", path);
        return ks__cfg_invalid(L, p, t, "must be zero or positive");
    }
    t = get(a, "bindingTimeout");
    if (cJSON_IsString(t) && ks__duration_parse(t->valuestring, &ns) == 0 && ns < 1000000000LL) {
        /* field.Invalid with the *metav1.Duration: JSON-marshalled, so Go's Duration text. */
        char p[360], text[64];
        ks__duration_format(ns, text, sizeof(text));
        ks__cfg_pathf(p, sizeof(p), "%s.bindingTimeout", path);
        return ks__cfg_fail_item(L, t, KS_EINVAL,
                                 "%s: Invalid value: \"%s\": must be at least 1 second", p, text);
    }
    return 0;
}

static const cfg_args_kind kinds[] = {
    {"DynamicResources", "DynamicResourcesArgs", KS_ARGS_SCHEMA(NULL, dra_f), defaults_dra,
     validate_dra},
};

const cfg_args_kind *ks__cfg_unshipped_kind(const char *plugin)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].plugin, plugin) == 0)
            return &kinds[i];
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Qualified names (the rules: the SDK's ks_qualified_name_check; the words: upstream's)
 * ------------------------------------------------------------------------------------------- */

int ks__cfg_is_qualified_name(const char *s, const char **why)
{
    switch (ks_qualified_name_check(s)) {
    case KS_QNAME_OK:
        return 1;
    case KS_QNAME_PREFIX_EMPTY:
        *why = "prefix part must be non-empty";
        break;
    case KS_QNAME_PREFIX_TOO_LONG:
        *why = "prefix part must be no more than 253 characters";
        break;
    case KS_QNAME_PREFIX_CHARS:
        *why = "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
               "alphanumeric characters, '-' or '.', and must start and end with an "
               "alphanumeric character";
        break;
    case KS_QNAME_NAME_EMPTY:
        *why = "name part must be non-empty";
        break;
    case KS_QNAME_NAME_TOO_LONG:
        *why = "name part must be no more than 63 characters";
        break;
    case KS_QNAME_NAME_CHARS:
        *why = "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
               "start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', "
               "or '123-abc')";
        break;
    }
    return 0;
}
