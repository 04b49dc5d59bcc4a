/*
 * Upstream defaulting that is not a plain "if unset" (v1/defaults.go, default_plugins.go) and the
 * in-tree plugin args kinds (types_pluginargs.go, validation_pluginargs.go):
 *
 *   - getDefaultPlugins() of v1.34 and mergePluginSet(default, custom);
 *   - for each registered <Name>Args kind: a strict shape check of the user's args (unknown fields,
 *     types; nulls dropped as Go's decoder would leave the pointers nil; config_args.c, on the
 *     SDK's ks_args_schema), SetDefaults_<Kind> in place, and Validate<Kind> with upstream's
 *     messages and field paths.
 *
 * Args are cJSON objects throughout, so what a plugin later reads is exactly what is printed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

/* ---------------------------------------------------------------------------------------------
 * Default plugins and mergePluginSet
 * ------------------------------------------------------------------------------------------- */

#define DEF(n, w) {(char *)(n), (w), 1}
static const ks_plugin_ref default_plugins[] = {
    DEF("SchedulingGates", 0),
    DEF("PrioritySort", 0),
    DEF("NodeUnschedulable", 0),
    DEF("NodeName", 0),
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
    /* DynamicResourceAllocation is GA (on) in v1.34: inserted before DefaultPreemption. */
    DEF("DynamicResources", 0),
    DEF("DefaultPreemption", 0),
    DEF("NodeResourcesBalancedAllocation", 1),
    DEF("ImageLocality", 1),
    DEF("DefaultBinder", 0),
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
 * Args schemas
 * ------------------------------------------------------------------------------------------- */

/* In-tree kinds use the SDK's schema types (ks_args_schema) and the generic check of
 * config_args.c, the same one that checks the args of an out-of-tree plugin with a schema. */
typedef ks_arg_field fdef;
typedef ks_args_schema sdef;
#define F_ANY KS_ARG_ANY
#define F_I32 KS_ARG_INT32
#define F_I64 KS_ARG_INT64
#define F_BOOL KS_ARG_BOOL
#define F_STR KS_ARG_STRING
#define F_DUR KS_ARG_DURATION
#define F_OBJ KS_ARG_OBJECT
#define F_ARR_OBJ KS_ARG_OBJECT_LIST
#define F_ARR_STR KS_ARG_STRING_LIST
#define SDEF(a) KS_ARGS_SCHEMA(NULL, a)
/* A field without a declared default or bounds (SetDefaults_<Kind> and Validate<Kind> below). */
#define FIELD(name, type, object) {(name), (type), (object), NULL, 0, 0, 0}

static const fdef shape_point_f[] = {FIELD("utilization", F_I32, NULL),
                                     FIELD("score", F_I32, NULL)};
static const sdef shape_point = SDEF(shape_point_f);
static const fdef vb_f[] = {FIELD("bindTimeoutSeconds", F_I64, NULL),
                            FIELD("shape", F_ARR_OBJ, &shape_point)};
static const fdef dra_f[] = {FIELD("filterTimeout", F_DUR, NULL)};


/* ---------------------------------------------------------------------------------------------
 * Small cJSON helpers
 * ------------------------------------------------------------------------------------------- */

static cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static int64_t num(const cJSON *o, const char *k, int64_t dflt)
{
    const cJSON *v = get(o, k);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void set_num_if_missing(cJSON *o, const char *k, double v)
{
    if (!get(o, k))
        cJSON_AddNumberToObject(o, k, v);
}

/* ---------------------------------------------------------------------------------------------
 * SetDefaults_<Kind>
 * ------------------------------------------------------------------------------------------- */


static void defaults_vb(cJSON *a)
{
    /* No shape: VolumeCapacityPriority / StorageCapacityScoring are off in v1.34. */
    set_num_if_missing(a, "bindTimeoutSeconds", 600);
}

static void defaults_dra(cJSON *a)
{
    if (!get(a, "filterTimeout"))
        cJSON_AddStringToObject(a, "filterTimeout", "10s");
}

/* ---------------------------------------------------------------------------------------------
 * Validate<Kind>
 * ------------------------------------------------------------------------------------------- */

int ks__cfg_is_qualified_name(const char *s, const char **why)
{
    const char *slash = strrchr(s, '/');
    const char *name = slash ? slash + 1 : s;
    size_t nl = strlen(name);
    if (slash) {
        size_t pl = (size_t)(slash - s);
        if (pl == 0) {
            *why = "prefix part must be non-empty";
            return 0;
        }
        if (pl > 253) {
            *why = "prefix part must be no more than 253 characters";
            return 0;
        }
        for (size_t i = 0; i < pl; i++) {
            char c = s[i];
            int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!alnum && !((c == '-' || c == '.') && i > 0 && i + 1 < pl)) {
                *why = "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                       "alphanumeric characters, '-' or '.', and must start and end with an "
                       "alphanumeric character";
                return 0;
            }
        }
        if (memchr(s, '/', pl)) {
            *why = "a qualified name must consist of an optional prefix, '/' and a name";
            return 0;
        }
    }
    if (nl == 0) {
        *why = "name part must be non-empty";
        return 0;
    }
    if (nl > 63) {
        *why = "name part must be no more than 63 characters";
        return 0;
    }
    for (size_t i = 0; i < nl; i++) {
        char c = name[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < nl)) {
            *why = "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                   "start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', "
                   "or '123-abc')";
            return 0;
        }
    }
    return 1;
}

static int validate_vb(cfg_load *L, const cJSON *a, const char *path)
{
    char p[360];
    if (num(a, "bindTimeoutSeconds", 0) < 0) {
        ks__cfg_pathf(p, sizeof(p), "%s.bindTimeoutSeconds", path);
        return ks__cfg_invalid(L, p, get(a, "bindTimeoutSeconds"),
                       "invalid BindTimeoutSeconds, should not be a negative value");
    }
    if (get(a, "shape")) {
        ks__cfg_pathf(p, sizeof(p), "%s.shape", path);
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s: Invalid value: [...]: unexpected field `shape`, remove it or "
                            "turn on the feature gate StorageCapacityScoring",
                            p);
    }
    return 0;
}

static int validate_dra(cfg_load *L, const cJSON *a, const char *path)
{
    const char *t = str(a, "filterTimeout");
    int64_t ns = 0;
    if (t && ks__duration_parse(t, &ns) == 0 && ns < 0) {
        char p[360];
        ks__cfg_pathf(p, sizeof(p), "%s.filterTimeout", path);
        return ks__cfg_invalid(L, p, get(a, "filterTimeout"), "must be zero or positive");
    }
    return 0;
}

static const cfg_args_kind kinds[] = {
    {"DynamicResources", "DynamicResourcesArgs", SDEF(dra_f), defaults_dra, validate_dra},
    {"VolumeBinding", "VolumeBindingArgs", SDEF(vb_f), defaults_vb, validate_vb},
};

const cfg_args_kind *ks__cfg_unshipped_kind(const char *plugin)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].plugin, plugin) == 0)
            return &kinds[i];
    return NULL;
}
