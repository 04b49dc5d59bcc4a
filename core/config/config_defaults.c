/*
 * Upstream defaulting that belongs to no plugin of kubesched (v1/defaults.go, default_plugins.go):
 *
 *   - getDefaultPlugins() of v1.37 (with applyFeatureGates for the v1.37 default gates) and
 *     mergePluginSet(default, custom);
 *   - the args kinds of the upstream plugins kubesched does not ship yet (VolumeBindingArgs,
 *     DynamicResourcesArgs): their schema (checked by config_args.c), SetDefaults_<Kind> and
 *     Validate<Kind>. Each moves to plugins/<name>/ (its descriptor's args_schema and
 *     validate_args, as every in-tree plugin with args has) when that plugin lands;
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
};
#undef DEF

size_t ks__cfg_default_plugins(const ks_plugin_ref **out)
{
    *out = default_plugins;
    return sizeof(default_plugins) / sizeof(default_plugins[0]);
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
 * Args kinds of upstream plugins kubesched does not ship yet
 *
 * VolumeBinding and DynamicResources have no folder under plugins/ yet: their kinds stay here, so
 * that a configuration written for kube-scheduler loads with the same defaults and messages. They
 * move to plugins/<name>/ (args_schema, validate_args) when those plugins land.
 * ------------------------------------------------------------------------------------------- */

#define FIELD(name, type, object)                                                                  \
    {                                                                                              \
        (name), (type), (object), NULL, 0, 0, 0                                                    \
    }

static const ks_arg_field shape_point_f[] = {FIELD("utilization", KS_ARG_INT32, NULL),
                                             FIELD("score", KS_ARG_INT32, NULL)};
static const ks_args_schema shape_point = KS_ARGS_SCHEMA(NULL, shape_point_f);
static const ks_arg_field vb_f[] = {FIELD("bindTimeoutSeconds", KS_ARG_INT64, NULL),
                                    FIELD("shape", KS_ARG_OBJECT_LIST, &shape_point)};
static const ks_arg_field dra_f[] = {FIELD("filterTimeout", KS_ARG_DURATION, NULL),
                                     FIELD("bindingTimeout", KS_ARG_DURATION, NULL)};

static cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* SetDefaults_VolumeBindingArgs: StorageCapacityScoring is Beta and on in v1.37, so an absent or
 * empty shape becomes {0 -> MaxCustomPriorityScore (10), 100 -> 0}. */
static void defaults_vb(cJSON *a)
{
    const cJSON *shape = get(a, "shape");
    if (!get(a, "bindTimeoutSeconds"))
        cJSON_AddNumberToObject(a, "bindTimeoutSeconds", 600);
    if (!shape || cJSON_IsNull(shape) || (cJSON_IsArray(shape) && cJSON_GetArraySize(shape) == 0)) {
        cJSON *pts = cJSON_Parse("[{\"utilization\":0,\"score\":10},"
                                 "{\"utilization\":100,\"score\":0}]");
        if (pts) {
            cJSON_DeleteItemFromObjectCaseSensitive(a, "shape");
            cJSON_AddItemToObject(a, "shape", pts);
        }
    }
}

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

static int64_t int_of(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsNumber(v) ? ks__sat_i64(v->valuedouble) : 0;
}

/* validateFunctionShape (VolumeBindingArgs.shape with StorageCapacityScoring on): at least one
 * point, utilization strictly increasing (the first break reported), then each point's
 * utilization in [0, 100] and score in [0, 10]. The first violation is reported. */
static int validate_shape(cfg_load *L, const cJSON *shape, const char *path)
{
    size_t n = (size_t)cJSON_GetArraySize(shape);
    char p[400];
    if (n == 0)
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s: Required value: at least one point must be specified", path);
    for (size_t i = 1; i < n; i++) {
        const cJSON *prev = cJSON_GetArrayItem(shape, (int)i - 1),
                    *cur = cJSON_GetArrayItem(shape, (int)i);
        if (int_of(prev, "utilization") >= int_of(cur, "utilization")) {
            ks__cfg_pathf(p, sizeof(p), "%s[%zu].utilization", path, i);
            return ks__cfg_invalid(L, p, get(cur, "utilization"),
                                   "values must be sorted in increasing order");
        }
    }
    for (size_t i = 0; i < n; i++) {
        const cJSON *pt = cJSON_GetArrayItem(shape, (int)i);
        int64_t u = int_of(pt, "utilization"), sc = int_of(pt, "score");
        /* Out of range means present (an absent one reads 0, which is in range). */
        if (u < 0 || u > 100) {
            ks__cfg_pathf(p, sizeof(p), "%s[%zu].utilization", path, i);
            return ks__cfg_invalid(L, p, get(pt, "utilization"), "not in valid range [0, 100]");
        }
        if (sc < 0 || sc > 10) {
            ks__cfg_pathf(p, sizeof(p), "%s[%zu].score", path, i);
            return ks__cfg_invalid(L, p, get(pt, "score"), "not in valid range [0, 10]");
        }
    }
    return 0;
}

static int validate_vb(cfg_load *L, const cJSON *a, const char *path)
{
    const cJSON *t = get(a, "bindTimeoutSeconds");
    char p[360];
    if (cJSON_IsNumber(t) && ks__sat_i64(t->valuedouble) < 0) {
        ks__cfg_pathf(p, sizeof(p), "%s.bindTimeoutSeconds", path);
        return ks__cfg_invalid(L, p, t,
                               "invalid BindTimeoutSeconds, should not be a negative value");
    }
    ks__cfg_pathf(p, sizeof(p), "%s.shape", path);
    return validate_shape(L, get(a, "shape"), p);
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
    {"VolumeBinding", "VolumeBindingArgs", KS_ARGS_SCHEMA(NULL, vb_f), defaults_vb, validate_vb},
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
