/*
 * Plugin args against a schema (sdk/kubesched/plugin.h's ks_args_schema): the strict shape check
 * (unknown fields, types; nulls dropped as Go's decoder would leave the pointers nil), the
 * declared defaults, the declared bounds, then the plugin's own rules across fields
 * (ks_plugin_desc.validate_args), whose error this file prefixes with the file and the
 * pluginConfig path. One path for every plugin:
 *   - the plugins in the registry when the file loads (the in-tree module, registered first) and
 *     the upstream kinds kubesched does not ship yet (config_defaults.c): shape and defaults while
 *     the profiles are defaulted (ks__cfg_args_prepare), bounds and rules with the rest of the
 *     validation (ks__cfg_args_validate), as upstream's codec and
 * ValidateKubeSchedulerConfiguration;
 *   - a plugin of a shared object, known only once the loader has added it to the registry
 *     (ks__config_check_plugin_args), with the same messages.
 * A plugin built against ABI 1.2 or older has no schema: its args pass unchecked, as before.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/numconv.h"
#include "config/config_args.h"

#include "api/custom_objects.h"
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

/* Resolves "a.b[2].c" from root; NULL when any step is missing. */
const cJSON *ks__args_resolve(const cJSON *root, const char *path)
{
    return ks__json_path(root, path);
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
    return ks__cfg_fail_item(L, v, KS_EINVAL, "%s: Invalid value: %s: %s", path, val, detail);
}

/* ---------------------------------------------------------------------------------------------
 * Shape check (the strict decoder)
 * ------------------------------------------------------------------------------------------- */

static int type_err(cfg_load *L, const char *path, const cJSON *v, const char *expected)
{
    char got[100];
    describe_json(v, got, sizeof(got));
    return ks__cfg_fail_item(L, v, KS_ETYPE, "%s: expected %s, got %s", path, expected, got);
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
    return (top & KS_CFG_ARGS_PLUGIN_PATH) &&
           (strcmp(key, KS_CFG_PLUGIN_PATH_KEY) == 0 ||
            strcmp(key, KS_CFG_CALL_DEADLINE_KEY) == 0 || strcmp(key, KS_CFG_ISOLATION_KEY) == 0 ||
            strcmp(key, KS_CFG_FAILURE_POLICY_KEY) == 0 ||
            strcmp(key, KS_CFG_ERROR_BUDGET_KEY) == 0);
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
            return ks__cfg_fail_item(L, v, KS_ERANGE, "%s: %.0f does not fit in a 32-bit integer",
                                     path, v->valuedouble);
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
            return ks__cfg_fail_item(L, v, KS_EINVAL,
                                     "%s: invalid duration \"%s\" (valid: such as \"10s\", "
                                     "\"1m30s\", \"100ms\")",
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

static int check_obj(cfg_load *L, cJSON *o, const ks_args_schema *s, const char *path, unsigned top)
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
            return ks__cfg_fail_item(L, v, KS_EINVAL, "%s: unknown field \"%s\" (valid: %s)", path,
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
    if (v && !(f->flags & KS_ARG_DEFAULT_LAST))
        cJSON_ReplaceItemInObjectCaseSensitive(o, f->name, d);
    else if (v) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, f->name);
        cJSON_AddItemToObject(o, f->name, d);
    } else
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
            return ks__cfg_fail_item(L, v, KS_EINVAL,
                                     "%s: Invalid value: %" PRId64 ": not in valid range [%" PRId64
                                     ", %" PRId64 "]",
                                     p, ks__sat_i64(v->valuedouble), f->min, f->max);
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
static int check_kind(cfg_load *L, const char *plugin, const char *kind, const cJSON *args,
                      const char *path)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(args, "kind");
    if (!k || !kind || (cJSON_IsString(k) && strcmp(k->valuestring, kind) == 0))
        return 0;
    return ks__cfg_fail_item(L, k, KS_EINVAL,
                             "%s: args for plugin %s were not of type "
                             "kubescheduler.config.k8s.io/%s, got kind %s",
                             path, plugin, kind,
                             cJSON_IsString(k) ? k->valuestring : "(not a string)");
}

int ks__cfg_args_apply_schema(cfg_load *L, const char *plugin, const ks_args_schema *schema,
                              cJSON *args, const char *path)
{
    if (check_kind(L, plugin, schema->kind, args, path) < 0 ||
        ks__cfg_args_check(L, args, schema, path, KS_CFG_ARGS_TOP | KS_CFG_ARGS_PLUGIN_PATH) < 0 ||
        fill_defaults(L, args, schema, path) < 0 || check_bounds(L, args, schema, path) < 0)
        return L->rc;
    return 0;
}

/* The plugin's validate_args on prepared args; its error gets the file and the args path. */
static int run_validate_args(cfg_load *L, const ks_plugin_desc *d, const cJSON *args,
                             const char *path)
{
    struct ks_args a = {args, NULL};
    ks_args_error e;
    char full[800];
    int rc;
    if (!d->validate_args)
        return 0;
    memset(&e, 0, sizeof(e));
    rc = d->validate_args(&a, &e);
    free(a.text);
    if (rc == 0)
        return 0;
    e.field[sizeof(e.field) - 1] = '\0';
    e.detail[sizeof(e.detail) - 1] = '\0';
    if (!e.field[0])
        ks__cfg_pathf(full, sizeof(full), "%s", path);
    else
        ks__cfg_pathf(full, sizeof(full), "%s%s%s", path, e.field[0] == '[' ? "" : ".", e.field);
    if (e.invalid)
        return ks__cfg_invalid(L, full, ks__args_resolve(args, e.field), e.detail);
    return ks__cfg_fail_item(L, ks__args_resolve(args, e.field), rc < 0 ? rc : KS_EINVAL, "%s: %s",
                             full,
                             e.detail[0] ? e.detail : "invalid args (the plugin gave no reason)");
}

/* The descriptor whose args schema applies while the file loads: a plugin the registry held
 * before the file was read (the in-tree module). */
static const ks_plugin_desc *load_time_desc(const cfg_load *L, const char *plugin)
{
    const ks_plugin_desc *d = L->reg ? ks__registry_find(L->reg, plugin) : NULL;
    return d && d->args_schema ? d : NULL;
}

const char *ks__cfg_args_kind(const cfg_load *L, const char *plugin)
{
    const ks_plugin_desc *d = load_time_desc(L, plugin);
    const cfg_args_kind *k;
    if (d)
        return d->args_schema->kind ? d->args_schema->kind : d->name;
    k = ks__cfg_unshipped_kind(plugin);
    return k ? k->kind : NULL;
}

int ks__cfg_args_prepare(cfg_load *L, const char *plugin, cJSON *args, const char *path)
{
    const ks_plugin_desc *d = load_time_desc(L, plugin);
    const cfg_args_kind *k = d ? NULL : ks__cfg_unshipped_kind(plugin);
    const ks_args_schema *schema = d ? d->args_schema : k ? &k->schema : NULL;
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(args, "apiVersion");
    if (!schema)
        return 0;
    if (check_kind(L, plugin, d ? schema->kind : k->kind, args, path) < 0)
        return L->rc;
    if (api && (!cJSON_IsString(api) || strcmp(api->valuestring, KS_CFG_API_VERSION) != 0))
        return ks__cfg_fail_item(L, api, KS_EINVAL,
                                 "%s.apiVersion: Invalid value: \"%s\": expected \"%s\"", path,
                                 cJSON_IsString(api) ? api->valuestring : "", KS_CFG_API_VERSION);
    if (ks__cfg_args_check(L, args, schema, path, KS_CFG_ARGS_TOP) < 0)
        return L->rc;
    if (d)
        return fill_defaults(L, args, schema, path);
    k->defaults(args);
    return 0;
}

int ks__cfg_args_validate(cfg_load *L, const char *plugin, const cJSON *args, const char *path)
{
    const ks_plugin_desc *d = load_time_desc(L, plugin);
    const cfg_args_kind *k;
    if (d) {
        if (check_bounds(L, args, d->args_schema, path) < 0)
            return L->rc;
        return run_validate_args(L, d, args, path);
    }
    k = ks__cfg_unshipped_kind(plugin);
    return k ? k->validate(L, args, path) : 0;
}

cJSON *ks__cfg_args_new_default(cfg_load *L, const char *plugin)
{
    const ks_plugin_desc *d = load_time_desc(L, plugin);
    const cfg_args_kind *k = d ? NULL : ks__cfg_unshipped_kind(plugin);
    cJSON *a = cJSON_CreateObject();
    if (!a)
        return NULL;
    if (d && fill_defaults(L, a, d->args_schema, "") < 0) {
        cJSON_Delete(a);
        return NULL;
    }
    if (k)
        k->defaults(a);
    return a;
}

int ks__config_check_plugin_args(ks_config *cfg, const struct ks_registry *reg, char *err,
                                 size_t errlen)
{
    cfg_load L = {.cfg = cfg, .file = cfg->path, .err = err, .errlen = errlen, .reg = reg};
    for (size_t i = 0; i < cfg->nprofiles; i++) {
        ks_profile_config *prof = &cfg->profiles[i];
        for (size_t j = 0; j < prof->nplugin_configs; j++) {
            ks_plugin_config *pc = &prof->plugin_configs[j];
            const ks_plugin_desc *d = ks__registry_find(reg, pc->name);
            char path[300];
            /* The load-time kinds were checked while the file loaded. */
            if (!d || pc->args_checked || !pc->args)
                continue;
            ks__cfg_pathf(path, sizeof(path), "%s.args", pc->field ? pc->field : "pluginConfig");
            if (d->args_schema &&
                ks__cfg_args_apply_schema(&L, pc->name, d->args_schema, pc->args, path) < 0)
                return L.rc;
            if (run_validate_args(&L, d, pc->args, path) < 0)
                return L.rc;
            pc->args_checked = 1;
        }
    }
    return 0;
}
