/*
 * Plugin args against a schema (sdk/kubesched/plugin.h's ks_args_schema): the strict shape check
 * (unknown fields, types; nulls dropped as Go's decoder would leave the pointers nil), the
 * declared defaults and the declared bounds. The in-tree kinds of config_defaults.c use the shape
 * check while the file loads; the args of a plugin loaded from a shared object whose descriptor
 * (ABI 1.3) declares a schema are checked once the loader has added it to the registry
 * (ks__config_check_plugin_args), with the same messages. A plugin built against ABI 1.2 or older
 * has no schema: its args pass unchecked, as before.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"
#include "config/registry.h"

static void describe_json(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v))
        snprintf(buf, len, "string \"%.60s\"", v->valuestring);
    else if (cJSON_IsBool(v))
        snprintf(buf, len, "boolean %s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
             fabs(v->valuedouble) < 9.2e18)
        snprintf(buf, len, "integer %" PRId64, (int64_t)v->valuedouble);
    else if (cJSON_IsNumber(v))
        snprintf(buf, len, "number %g", v->valuedouble);
    else if (cJSON_IsNull(v))
        snprintf(buf, len, "null");
    else if (cJSON_IsArray(v))
        snprintf(buf, len, "a list");
    else
        snprintf(buf, len, "a mapping");
}

/* The value as field.Invalid prints it: strings quoted, numbers plain. */
static void value_json(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v))
        snprintf(buf, len, "\"%.80s\"", v->valuestring);
    else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
             fabs(v->valuedouble) < 9.2e18)
        snprintf(buf, len, "%" PRId64, (int64_t)v->valuedouble);
    else if (cJSON_IsNumber(v))
        snprintf(buf, len, "%g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else
        snprintf(buf, len, "%s", cJSON_IsArray(v) ? "[...]" : "{...}");
}

int ks__cfg_invalid(cfg_load *L, const char *path, const cJSON *v, const char *detail)
{
    char val[100];
    value_json(v, val, sizeof(val));
    return ks__cfg_fail(L, KS_EINVAL, "%s: Invalid value: %s: %s", path, val, detail);
}

/* ---------------------------------------------------------------------------------------------
 * Shape check (the strict decoder)
 * ------------------------------------------------------------------------------------------- */

static int type_err(cfg_load *L, const char *path, const cJSON *v, const char *expected)
{
    char got[100];
    describe_json(v, got, sizeof(got));
    return ks__cfg_fail(L, KS_ETYPE, "%s: expected %s, got %s", path, expected, got);
}

static int is_int(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= lo &&
           v->valuedouble <= hi;
}

static int check_obj(cfg_load *L, cJSON *o, const ks_args_schema *s, const char *path,
                     unsigned top);

/* apiVersion and kind at the top level of args (KS_CFG_ARGS_TOP), and kubesched's own key
 * (KS_CFG_ARGS_PLUGIN_PATH), which no schema lists. */
static int top_level_key(const char *key, unsigned top)
{
    if ((top & KS_CFG_ARGS_TOP) && (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0))
        return 1;
    return (top & KS_CFG_ARGS_PLUGIN_PATH) && strcmp(key, KS_CFG_PLUGIN_PATH_KEY) == 0;
}

static int check_value(cfg_load *L, cJSON *v, const ks_arg_field *f, const char *path)
{
    int64_t ns;
    size_t i = 0;
    cJSON *it;
    switch (f->type) {
    case KS_ARG_ANY:
        return 0;
    case KS_ARG_INT32:
        if (is_int(v, -9.2e18, 9.2e18) && !is_int(v, INT32_MIN, INT32_MAX))
            return ks__cfg_fail(L, KS_ERANGE, "%s: %.0f does not fit in a 32-bit integer", path,
                                v->valuedouble);
        if (!is_int(v, INT32_MIN, INT32_MAX))
            return type_err(L, path, v, "an integer");
        return 0;
    case KS_ARG_INT64:
        if (!is_int(v, -9.2e18, 9.2e18))
            return type_err(L, path, v, "an integer");
        return 0;
    case KS_ARG_BOOL:
        return cJSON_IsBool(v) ? 0 : type_err(L, path, v, "a boolean (true or false)");
    case KS_ARG_STRING:
        return cJSON_IsString(v) ? 0 : type_err(L, path, v, "a string");
    case KS_ARG_QUANTITY:
        return cJSON_IsString(v) || cJSON_IsNumber(v)
                   ? 0
                   : type_err(L, path, v, "a quantity such as \"500m\", \"2Gi\" or 3");
    case KS_ARG_DURATION:
        if (!cJSON_IsString(v))
            return type_err(L, path, v, "a duration string such as \"10s\"");
        if (ks__duration_parse(v->valuestring, &ns) != 0)
            return ks__cfg_fail(L, KS_EINVAL,
                                "%s: invalid duration \"%s\" (valid: such as \"10s\", \"1m30s\", "
                                "\"100ms\")",
                                path, v->valuestring);
        return 0;
    case KS_ARG_OBJECT:
        if (!cJSON_IsObject(v))
            return type_err(L, path, v, "a mapping");
        return f->object ? check_obj(L, v, f->object, path, 0) : 0;
    case KS_ARG_OBJECT_LIST:
    case KS_ARG_STRING_LIST:
        if (!cJSON_IsArray(v))
            return type_err(L, path, v, "a list");
        cJSON_ArrayForEach(it, v)
        {
            char p[512];
            int rc;
            ks__cfg_pathf(p, sizeof(p), "%s[%zu]", path, i++);
            if (f->type == KS_ARG_STRING_LIST) {
                if (!cJSON_IsString(it))
                    return type_err(L, p, it, "a string");
                continue;
            }
            if (!cJSON_IsObject(it))
                return type_err(L, p, it, "a mapping");
            if (f->object && (rc = check_obj(L, it, f->object, p, 0)) < 0)
                return rc;
        }
        return 0;
    }
    return 0;
}

static int check_obj(cfg_load *L, cJSON *o, const ks_args_schema *s, const char *path,
                     unsigned top)
{
    cJSON *v = o->child;
    while (v) {
        cJSON *next = v->next;
        const ks_arg_field *f = NULL;
        char p[512];
        int rc;
        if (top_level_key(v->string, top)) {
            v = next;
            continue;
        }
        for (size_t i = 0; i < s->nfields; i++)
            if (strcmp(s->fields[i].name, v->string) == 0)
                f = &s->fields[i];
        if (!f) {
            char valid[512];
            size_t off = 0;
            valid[0] = '\0';
            for (size_t i = 0; i < s->nfields && off < sizeof(valid); i++) {
                int w = snprintf(valid + off, sizeof(valid) - off, "%s%s", i ? ", " : "",
                                 s->fields[i].name);
                if (w < 0)
                    break;
                off += (size_t)w;
            }
            return ks__cfg_fail(L, KS_EINVAL, "%s: unknown field \"%s\" (valid: %s)", path,
                                v->string, valid);
        }
        ks__cfg_pathf(p, sizeof(p), "%s.%s", path, v->string);
        /* A null leaves Go's pointer nil: the field is unset and gets its default. */
        if (cJSON_IsNull(v)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(o, v));
            v = next;
            continue;
        }
        if ((rc = check_value(L, v, f, p)) < 0)
            return rc;
        v = next;
    }
    return 0;
}

int ks__cfg_args_check(cfg_load *L, cJSON *args, const ks_args_schema *schema, const char *path,
                       unsigned top)
{
    return check_obj(L, args, schema, path, top);
}

/* ---------------------------------------------------------------------------------------------
 * Declared defaults and bounds
 * ------------------------------------------------------------------------------------------- */

/* Go's zero value: "", 0, false, an empty list or mapping. */
static int is_zero(const cJSON *v)
{
    if (cJSON_IsString(v))
        return v->valuestring[0] == '\0';
    if (cJSON_IsNumber(v))
        return v->valuedouble == 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child == NULL;
    return cJSON_IsFalse(v);
}

static int fill_defaults(cfg_load *L, cJSON *o, const ks_args_schema *s, const char *path);

/* The declared default of f into o when f is absent (or zero, with KS_ARG_DEFAULT_IF_ZERO). */
static int default_field(cfg_load *L, cJSON *o, const ks_arg_field *f, const char *path)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f->name), *d;
    if (!f->default_json || (v && !((f->flags & KS_ARG_DEFAULT_IF_ZERO) && is_zero(v))))
        return 0;
    if (!(d = cJSON_Parse(f->default_json)))
        return ks__cfg_fail(L, KS_EINVAL,
                            "%s.%s: the plugin declares the default %s, which is not JSON (a bug "
                            "of the plugin's args schema)",
                            path, f->name, f->default_json);
    if (v)
        cJSON_ReplaceItemInObjectCaseSensitive(o, f->name, d);
    else
        cJSON_AddItemToObject(o, f->name, d);
    return 0;
}

/* Defaults of each field of o, then of the mappings inside it. */
static int fill_defaults(cfg_load *L, cJSON *o, const ks_args_schema *s, const char *path)
{
    for (uint32_t i = 0; i < s->nfields; i++) {
        const ks_arg_field *f = &s->fields[i];
        cJSON *v, *it;
        char p[512];
        if (default_field(L, o, f, path) < 0)
            return L->rc;
        v = cJSON_GetObjectItemCaseSensitive(o, f->name);
        if (!v || !f->object)
            continue;
        ks__cfg_pathf(p, sizeof(p), "%s.%s", path, f->name);
        if (f->type == KS_ARG_OBJECT && fill_defaults(L, v, f->object, p) < 0)
            return L->rc;
        if (f->type == KS_ARG_OBJECT_LIST)
            cJSON_ArrayForEach(it, v) if (fill_defaults(L, it, f->object, p) < 0) return L->rc;
    }
    return 0;
}

static int check_bounds(cfg_load *L, const cJSON *o, const ks_args_schema *s, const char *path)
{
    for (uint32_t i = 0; i < s->nfields; i++) {
        const ks_arg_field *f = &s->fields[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f->name), *it;
        char p[512];
        size_t k = 0;
        if (!v)
            continue;
        ks__cfg_pathf(p, sizeof(p), "%s.%s", path, f->name);
        if ((f->flags & KS_ARG_BOUNDED) && cJSON_IsNumber(v) &&
            (v->valuedouble < (double)f->min || v->valuedouble > (double)f->max))
            return ks__cfg_fail(L, KS_EINVAL,
                                "%s: Invalid value: %" PRId64 ": not in valid range [%" PRId64
                                ", %" PRId64 "]",
                                p, (int64_t)v->valuedouble, f->min, f->max);
        if (f->object && f->type == KS_ARG_OBJECT && check_bounds(L, v, f->object, p) < 0)
            return L->rc;
        if (f->object && f->type == KS_ARG_OBJECT_LIST)
            cJSON_ArrayForEach(it, v)
            {
                char q[530];
                ks__cfg_pathf(q, sizeof(q), "%s[%zu]", p, k++);
                if (check_bounds(L, it, f->object, q) < 0)
                    return L->rc;
            }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The args of plugins with a schema of their own
 * ------------------------------------------------------------------------------------------- */

/* A `kind` given must be the schema's (the message of the in-tree kinds). */
static int check_kind(cfg_load *L, const char *plugin, const ks_args_schema *s, const cJSON *args,
                      const char *path)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(args, "kind");
    if (!k || !s->kind || (cJSON_IsString(k) && strcmp(k->valuestring, s->kind) == 0))
        return 0;
    return ks__cfg_fail(L, KS_EINVAL,
                        "%s: args for plugin %s were not of type kubescheduler.config.k8s.io/%s, "
                        "got kind %s",
                        path, plugin, s->kind,
                        cJSON_IsString(k) ? k->valuestring : "(not a string)");
}

int ks__cfg_args_apply_schema(cfg_load *L, const char *plugin, const ks_args_schema *schema,
                              cJSON *args, const char *path)
{
    if (check_kind(L, plugin, schema, args, path) < 0 ||
        ks__cfg_args_check(L, args, schema, path, KS_CFG_ARGS_TOP | KS_CFG_ARGS_PLUGIN_PATH) < 0 ||
        fill_defaults(L, args, schema, path) < 0 || check_bounds(L, args, schema, path) < 0)
        return L->rc;
    return 0;
}

int ks__config_check_plugin_args(ks_config *cfg, const struct ks_registry *reg, char *err,
                                 size_t errlen)
{
    cfg_load L = {.cfg = cfg, .file = cfg->path, .err = err, .errlen = errlen};
    for (size_t i = 0; i < cfg->nprofiles; i++) {
        ks_profile_config *prof = &cfg->profiles[i];
        for (size_t j = 0; j < prof->nplugin_configs; j++) {
            ks_plugin_config *pc = &prof->plugin_configs[j];
            const ks_plugin_desc *d = ks__registry_find(reg, pc->name);
            char path[300];
            /* The in-tree kinds were checked while the file loaded. */
            if (!d || !d->args_schema || ks__cfg_args_kind(pc->name) || !pc->args)
                continue;
            ks__cfg_pathf(path, sizeof(path), "%s.args",
                          pc->field ? pc->field : "pluginConfig");
            if (ks__cfg_args_apply_schema(&L, pc->name, d->args_schema, pc->args, path) < 0)
                return L.rc;
        }
    }
    return 0;
}
