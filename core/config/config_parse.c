/*
 * The strict YAML decoder of KubeSchedulerConfiguration: libyaml's document API turned into
 * ks_config fields, the way upstream's codec does it (sigs.k8s.io/yaml then strict JSON decoding):
 *
 *   - plain scalars resolve per YAML 1.1 as go-yaml v2 does (null, y/yes/on booleans, 0x/0o/0b and
 *     leading-0 octal integers, underscores, floats); quoted scalars are always strings;
 *   - a typed field refuses a value of another type ("expected an integer, got string \"x\"");
 *   - unknown and duplicate fields are refused, naming the valid ones;
 *   - plugin args are converted to cJSON as YAMLToJSON would, with a budget against alias bombs.
 *
 * Every message carries FILE:LINE:COLUMN of the offending node.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/yaml_json.h"
#include "api/yaml_read.h"
#include "config/config_int.h"

#define MAX_DEPTH 64
#define JSON_BUDGET 1000000

typedef struct dec {
    cfg_load *L;
    yaml_document_t *doc;
} dec;

/* ---------------------------------------------------------------------------------------------
 * Scalars
 * ------------------------------------------------------------------------------------------- */

typedef enum rkind { R_NULL, R_BOOL, R_INT, R_FLOAT, R_STR } rkind;

typedef struct rval {
    rkind k;
    int b;
    int64_t i;
    double f;
} rval;

#define pathf ks__cfg_pathf

static const char *sval(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int is_plain(const yaml_node_t *n)
{
    return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ||
           n->data.scalar.style == YAML_ANY_SCALAR_STYLE;
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

/* strconv.ParseInt(s, 0, 64) after go-yaml removed the underscores. */
static int parse_go_int(const char *s, int64_t *out)
{
    int neg = 0;
    int base = 10;
    uint64_t v = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return -1;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
        base = 8;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        s += 2;
    } else if (s[0] == '0' && s[1]) {
        base = 8;
        s += 1;
    }
    if (!*s)
        return -1;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return -1;
        if (d >= base)
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)v;
    }
    return 0;
}

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int is_yaml_float(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    } else {
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9')
                p++;
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

static rval resolve(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                        "True", "TRUE", "on",  "On",  "ON",  NULL};
    static const char *const falses[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                         "False", "FALSE", "off", "Off", "OFF", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    rval r = {R_STR, 0, 0, 0};
    const char *s = sval(n);
    char buf[128];
    size_t j = 0;

    if (n->type != YAML_SCALAR_NODE || !is_plain(n))
        return r;
    if (in_list(s, nulls)) {
        r.k = R_NULL;
        return r;
    }
    if (in_list(s, trues) || in_list(s, falses)) {
        r.k = R_BOOL;
        r.b = in_list(s, trues);
        return r;
    }
    if (in_list(s, infs) || in_list(s, ninfs) || in_list(s, nans)) {
        r.k = R_FLOAT;
        r.f = in_list(s, nans) ? NAN : in_list(s, infs) ? INFINITY : -INFINITY;
        return r;
    }
    if (!strchr("+-.0123456789", s[0]))
        return r;
    for (const char *p = s; *p; p++) {
        if (*p == '_')
            continue;
        if (j + 1 >= sizeof(buf))
            return r;
        buf[j++] = *p;
    }
    buf[j] = '\0';
    if (parse_go_int(buf, &r.i) == 0) {
        r.k = R_INT;
        return r;
    }
    if (is_yaml_float(buf)) {
        r.k = R_FLOAT;
        r.f = strtod(buf, NULL);
        return r;
    }
    return r;
}

/* "string \"x\"", "integer 5", "a mapping" ... for type errors. */
static void describe(const yaml_node_t *n, char *buf, size_t len)
{
    if (n->type == YAML_MAPPING_NODE) {
        snprintf(buf, len, "a mapping");
        return;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        snprintf(buf, len, "a list");
        return;
    }
    rval r = resolve(n);
    switch (r.k) {
    case R_NULL:
        snprintf(buf, len, "null");
        break;
    case R_BOOL:
        snprintf(buf, len, "boolean %s", r.b ? "true" : "false");
        break;
    case R_INT:
        snprintf(buf, len, "integer %" PRId64, r.i);
        break;
    case R_FLOAT:
        snprintf(buf, len, "number %s", sval(n));
        break;
    default: {
        const char *s = sval(n);
        if (strlen(s) > 60)
            snprintf(buf, len, "string \"%.57s...\"", s);
        else
            snprintf(buf, len, "string \"%s\"", s);
    }
    }
}

static int type_error(dec *d, const yaml_node_t *n, const char *path, const char *expected)
{
    char got[96];
    describe(n, got, sizeof(got));
    return ks__cfg_fail_at(d->L, n, KS_ETYPE, "%s: expected %s, got %s", path, expected, got);
}

static int is_null(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && resolve(n).k == R_NULL;
}

static yaml_node_t *node(dec *d, int id) { return yaml_document_get_node(d->doc, id); }

/* The getters return 1 when a value was stored, 0 for null (unset), or a negative error. */
static int get_str(dec *d, const yaml_node_t *n, const char *path, char **out)
{
    if (is_null(n))
        return 0;
    if (n->type != YAML_SCALAR_NODE || resolve(n).k != R_STR)
        return type_error(d, n, path, "a string");
    char *s = ks__cfg_strdup(sval(n));
    if (!s)
        return ks__cfg_oom(d->L);
    free(*out);
    *out = s;
    return 1;
}

static int get_int(dec *d, const yaml_node_t *n, const char *path, int bits, int64_t *out)
{
    const char *what = "an integer";
    int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
    int64_t hi = bits == 32 ? INT32_MAX : INT64_MAX;
    rval r;
    if (is_null(n))
        return 0;
    if (n->type != YAML_SCALAR_NODE)
        return type_error(d, n, path, what);
    r = resolve(n);
    if (r.k == R_FLOAT && isfinite(r.f) && r.f == floor(r.f) && r.f >= -9.2e18 && r.f <= 9.2e18) {
        r.k = R_INT;
        r.i = (int64_t)r.f;
    }
    if (r.k != R_INT)
        return type_error(d, n, path, what);
    if (r.i < lo || r.i > hi)
        return ks__cfg_fail_at(d->L, n, KS_ERANGE, "%s: %" PRId64 " does not fit in %s", path, r.i,
                               bits == 32 ? "a 32-bit integer" : "a 64-bit integer");
    *out = r.i;
    return 1;
}

static int get_i32(dec *d, const yaml_node_t *n, const char *path, int32_t *out)
{
    int64_t v;
    int rc = get_int(d, n, path, 32, &v);
    if (rc == 1)
        *out = (int32_t)v;
    return rc;
}

static int get_bool(dec *d, const yaml_node_t *n, const char *path, int *out)
{
    rval r;
    if (is_null(n))
        return 0;
    if (n->type != YAML_SCALAR_NODE || (r = resolve(n)).k != R_BOOL)
        return type_error(d, n, path, "a boolean (true or false)");
    *out = r.b;
    return 1;
}

static int get_double(dec *d, const yaml_node_t *n, const char *path, double *out)
{
    rval r;
    if (is_null(n))
        return 0;
    if (n->type != YAML_SCALAR_NODE)
        return type_error(d, n, path, "a number");
    r = resolve(n);
    if (r.k == R_INT) {
        *out = (double)r.i;
        return 1;
    }
    if (r.k != R_FLOAT || !isfinite(r.f))
        return type_error(d, n, path, "a number");
    *out = r.f;
    return 1;
}

static int get_duration(dec *d, const yaml_node_t *n, const char *path, int64_t *ns)
{
    if (is_null(n))
        return 0;
    if (n->type != YAML_SCALAR_NODE || resolve(n).k != R_STR)
        return type_error(d, n, path, "a duration string such as \"15s\", \"1m30s\" or \"100ms\"");
    if (ks__duration_parse(sval(n), ns) != 0)
        return ks__cfg_fail_at(d->L, n, KS_EINVAL,
                               "%s: invalid duration \"%s\" (valid: a sequence of decimal numbers "
                               "with units ns, us, ms, s, m, h, such as \"15s\", \"1m30s\", "
                               "\"100ms\")",
                               path, sval(n));
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Mappings and lists
 * ------------------------------------------------------------------------------------------- */

/* 1: a mapping, 0: null (absent), <0: error. */
static int expect_map(dec *d, const yaml_node_t *n, const char *path)
{
    if (n->type == YAML_MAPPING_NODE)
        return 1;
    if (is_null(n))
        return 0;
    return type_error(d, n, path, "a mapping");
}

static int expect_seq(dec *d, const yaml_node_t *n, const char *path)
{
    if (n->type == YAML_SEQUENCE_NODE)
        return 1;
    if (is_null(n))
        return 0;
    return type_error(d, n, path, "a list");
}

/* Index of key's name in names[], refusing unknown and repeated fields. where: the field path of
 * the mapping ("" at the top level). */
static int field_index(dec *d, const yaml_node_t *key, const char *const *names, size_t n,
                       const char *where, uint64_t *seen)
{
    char valid[1024];
    size_t off = 0;
    const char *in = where[0] ? where : KS_CFG_KIND;
    if (key->type != YAML_SCALAR_NODE)
        return ks__cfg_fail_at(d->L, key, KS_ETYPE, "%s: field names must be strings", in);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(sval(key), names[i]) == 0) {
            if (*seen & (UINT64_C(1) << i))
                return ks__cfg_fail_at(d->L, key, KS_EINVAL, "duplicate field \"%s\" in %s",
                                       names[i], in);
            *seen |= UINT64_C(1) << i;
            return (int)i;
        }
    }
    valid[0] = '\0';
    for (size_t i = 0; i < n && off < sizeof(valid); i++) {
        int w = snprintf(valid + off, sizeof(valid) - off, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    return ks__cfg_fail_at(d->L, key, KS_EINVAL, "unknown field \"%s\" in %s (valid: %s)",
                           sval(key), in, valid);
}

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
#define FOR_PAIRS(n, p)                                                                            \
    for (yaml_node_pair_t *p = (n)->data.mapping.pairs.start; p < (n)->data.mapping.pairs.top; p++)
#define SEQ_LEN(n) ((size_t)((n)->data.sequence.items.top - (n)->data.sequence.items.start))

/* ---------------------------------------------------------------------------------------------
 * YAML -> cJSON (plugin args), as sigs.k8s.io/yaml's YAMLToJSON: api/yaml_json.h walks the tree
 * (budget, depth, keys); scalars resolve here as everywhere in the configuration.
 * ------------------------------------------------------------------------------------------- */

static cJSON *json_scalar(void *ctx, const yaml_node_t *n, const char *path)
{
    cfg_load *L = ctx;
    rval r = resolve(n);
    cJSON *out;
    switch (r.k) {
    case R_NULL:
        out = cJSON_CreateNull();
        break;
    case R_BOOL:
        out = cJSON_CreateBool(r.b);
        break;
    case R_INT:
        out = cJSON_CreateNumber((double)r.i);
        break;
    case R_FLOAT:
        if (!isfinite(r.f)) {
            ks__cfg_fail_at(L, n, KS_EINVAL, "%s: %s cannot be represented in JSON", path, sval(n));
            return NULL;
        }
        out = cJSON_CreateNumber(r.f);
        break;
    default:
        out = cJSON_CreateString(sval(n));
    }
    if (!out)
        ks__cfg_oom(L);
    return out;
}

static void json_fail(void *ctx, const yaml_node_t *n, int code, const char *msg)
{
    ks__cfg_fail_at(ctx, n, code, "%s", msg);
}

static void json_oom(void *ctx) { ks__cfg_oom(ctx); }

static void json_placed(void *ctx, const cJSON *item, const yaml_node_t *where)
{
    cfg_load *L = ctx;
    ks__cfg_mark(L->cfg, item, where);
}

static cJSON *to_json(dec *d, const yaml_node_t *n, const char *path)
{
    ks_yaml_json_strict o = {json_scalar, json_fail, json_oom,   &d->L->budget,
                             MAX_DEPTH,   d->L,      json_placed};
    return ks__yaml_to_json_strict(d->doc, n, path, &o);
}

/* ---------------------------------------------------------------------------------------------
 * KubeSchedulerConfiguration
 * ------------------------------------------------------------------------------------------- */

static int decode_leader_election(dec *d, const yaml_node_t *n)
{
    static const char *const names[] = {"leaderElect",      "leaseDuration", "renewDeadline",
                                        "retryPeriod",      "resourceLock",  "resourceName",
                                        "resourceNamespace"};
    ks_config *c = d->L->cfg;
    uint64_t seen = 0;
    int rc = expect_map(d, n, "leaderElection");
    if (rc <= 0)
        return rc;
    FOR_PAIRS(n, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int i = field_index(d, node(d, pair->key), names, NFIELDS(names), "leaderElection", &seen);
        char path[64];
        if (i < 0)
            return i;
        pathf(path, sizeof(path), "leaderElection.%s", names[i]);
        switch (i) {
        case 0:
            rc = get_bool(d, v, path, &c->leader_election.leader_elect);
            if (rc == 1)
                d->L->set |= CFG_SET_LEADER_ELECT;
            break;
        case 1:
            rc = get_duration(d, v, path, &d->L->lease_ns);
            break;
        case 2:
            rc = get_duration(d, v, path, &d->L->renew_ns);
            break;
        case 3:
            rc = get_duration(d, v, path, &d->L->retry_ns);
            break;
        case 4:
            rc = get_str(d, v, path, &c->leader_election.resource_lock);
            break;
        case 5:
            rc = get_str(d, v, path, &c->leader_election.resource_name);
            break;
        default:
            rc = get_str(d, v, path, &c->leader_election.resource_namespace);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_client_connection(dec *d, const yaml_node_t *n)
{
    static const char *const names[] = {"kubeconfig", "acceptContentTypes", "contentType", "qps",
                                        "burst"};
    ks_config *c = d->L->cfg;
    uint64_t seen = 0;
    int rc = expect_map(d, n, "clientConnection");
    if (rc <= 0)
        return rc;
    FOR_PAIRS(n, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int i =
            field_index(d, node(d, pair->key), names, NFIELDS(names), "clientConnection", &seen);
        char path[64];
        if (i < 0)
            return i;
        pathf(path, sizeof(path), "clientConnection.%s", names[i]);
        switch (i) {
        case 0:
            rc = get_str(d, v, path, &c->client_connection.kubeconfig);
            break;
        case 1:
            rc = get_str(d, v, path, &c->client_connection.accept_content_types);
            break;
        case 2:
            rc = get_str(d, v, path, &c->client_connection.content_type);
            break;
        case 3:
            rc = get_double(d, v, path, &c->client_connection.qps);
            break;
        default:
            rc = get_i32(d, v, path, &c->client_connection.burst);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* One {name, weight} entry of enabled/disabled. */
static int decode_plugin_ref(dec *d, const yaml_node_t *n, const char *path, ks_plugin_ref *ref)
{
    static const char *const names[] = {"name", "weight"};
    uint64_t seen = 0;
    int rc = expect_map(d, n, path);
    if (rc < 0)
        return rc;
    if (rc > 0) {
        FOR_PAIRS(n, pair)
        {
            const yaml_node_t *v = node(d, pair->value);
            int i = field_index(d, node(d, pair->key), names, NFIELDS(names), path, &seen);
            char p[160];
            if (i < 0)
                return i;
            pathf(p, sizeof(p), "%s.%s", path, names[i]);
            rc = i == 0 ? get_str(d, v, p, &ref->name) : get_i32(d, v, p, &ref->weight);
            if (rc < 0)
                return rc;
            if (i == 1 && ref->weight < 0)
                return ks__cfg_fail_at(d->L, v, KS_ERANGE,
                                       "%s: Invalid value: %d: must not be negative (valid: 1 to "
                                       "%d, or 0/unset for the default weight 1)",
                                       p, (int)ref->weight, INT32_MAX);
        }
    }
    if (!ref->name || !ref->name[0])
        return ks__cfg_fail_at(d->L, n, KS_EINVAL, "%s.name: Required value: the plugin name",
                               path);
    return 0;
}

static int decode_plugin_list(dec *d, const yaml_node_t *n, const char *path, ks_plugin_ref **refs,
                              size_t *nrefs)
{
    int rc = expect_seq(d, n, path);
    size_t len;
    if (rc <= 0)
        return rc;
    len = SEQ_LEN(n);
    if (len == 0)
        return 0;
    *refs = calloc(len, sizeof(**refs));
    if (!*refs)
        return ks__cfg_oom(d->L);
    for (size_t i = 0; i < len; i++) {
        char p[160];
        pathf(p, sizeof(p), "%s[%zu]", path, i);
        (*nrefs)++;
        rc = decode_plugin_ref(d, node(d, n->data.sequence.items.start[i]), p, &(*refs)[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_plugin_set(dec *d, const yaml_node_t *n, const char *path, ks_plugin_set *set)
{
    static const char *const names[] = {"enabled", "disabled"};
    uint64_t seen = 0;
    int rc = expect_map(d, n, path);
    if (rc <= 0)
        return rc;
    FOR_PAIRS(n, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int i = field_index(d, node(d, pair->key), names, NFIELDS(names), path, &seen);
        char p[128];
        if (i < 0)
            return i;
        pathf(p, sizeof(p), "%s.%s", path, names[i]);
        if (i == 0) {
            rc = decode_plugin_list(d, v, p, &set->enabled, &set->nenabled);
        } else {
            ks_plugin_ref *refs = NULL;
            size_t nrefs = 0;
            rc = decode_plugin_list(d, v, p, &refs, &nrefs);
            if (rc == 0 && nrefs) {
                set->disabled = calloc(nrefs, sizeof(char *));
                if (!set->disabled)
                    rc = ks__cfg_oom(d->L);
            }
            /* Disabled entries keep only their names (weights mean nothing there). */
            for (size_t j = 0; j < nrefs; j++) {
                if (rc == 0 && set->disabled) {
                    set->disabled[set->ndisabled++] = refs[j].name;
                    refs[j].name = NULL;
                }
                free(refs[j].name);
            }
            free(refs);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_plugins(dec *d, const yaml_node_t *n, const char *path, cfg_profile_in *in)
{
    const char *names[KS_PT_NSETS];
    uint64_t seen = 0;
    int rc;
    for (int p = 0; p < KS_PT_NSETS; p++)
        names[p] = ks__point_field((ks_point)p);
    rc = expect_map(d, n, path);
    if (rc <= 0)
        return rc;
    in->has_plugins = 1;
    FOR_PAIRS(n, pair)
    {
        int i = field_index(d, node(d, pair->key), names, KS_PT_NSETS, path, &seen);
        char p[96];
        if (i < 0)
            return i;
        pathf(p, sizeof(p), "%s.%s", path, names[i]);
        rc = decode_plugin_set(d, node(d, pair->value), p, &in->user[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_plugin_config(dec *d, const yaml_node_t *n, size_t prof, ks_profile_config *pc)
{
    static const char *const names[] = {"name", "args"};
    char path[64];
    size_t len;
    int rc;
    pathf(path, sizeof(path), "profiles[%zu].pluginConfig", prof);
    rc = expect_seq(d, n, path);
    if (rc <= 0)
        return rc;
    len = SEQ_LEN(n);
    if (len == 0)
        return 0;
    pc->plugin_configs = calloc(len, sizeof(*pc->plugin_configs));
    if (!pc->plugin_configs)
        return ks__cfg_oom(d->L);
    for (size_t i = 0; i < len; i++) {
        const yaml_node_t *item = node(d, n->data.sequence.items.start[i]);
        ks_plugin_config *e = &pc->plugin_configs[pc->nplugin_configs++];
        uint64_t seen = 0;
        char ipath[96];
        pathf(ipath, sizeof(ipath), "%s[%zu]", path, i);
        e->field = ks__cfg_strdup(ipath);
        if (!e->field)
            return ks__cfg_oom(d->L);
        rc = expect_map(d, item, ipath);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            FOR_PAIRS(item, pair)
            {
                const yaml_node_t *v = node(d, pair->value);
                int f = field_index(d, node(d, pair->key), names, NFIELDS(names), ipath, &seen);
                char p[128];
                if (f < 0)
                    return f;
                pathf(p, sizeof(p), "%s.%s", ipath, names[f]);
                if (f == 0) {
                    rc = get_str(d, v, p, &e->name);
                    if (rc < 0)
                        return rc;
                } else {
                    rc = expect_map(d, v, p);
                    if (rc < 0)
                        return rc;
                    if (rc > 0) {
                        cJSON_Delete(e->args);
                        e->args = to_json(d, v, p);
                        if (!e->args)
                            return d->L->rc ? d->L->rc : ks__cfg_oom(d->L);
                    }
                }
            }
        }
        if (!e->name || !e->name[0])
            return ks__cfg_fail_at(d->L, item, KS_EINVAL,
                                   "%s.name: Required value: the name of the plugin these args "
                                   "are for",
                                   ipath);
        if (!e->args && !(e->args = cJSON_CreateObject()))
            return ks__cfg_oom(d->L);
    }
    return 0;
}

static int decode_profile(dec *d, const yaml_node_t *n, size_t i)
{
    static const char *const names[] = {"schedulerName", "percentageOfNodesToScore", "plugins",
                                        "pluginConfig"};
    ks_profile_config *pc = &d->L->cfg->profiles[i];
    cfg_profile_in *in = &d->L->in[i];
    uint64_t seen = 0;
    char path[48];
    int rc;
    pathf(path, sizeof(path), "profiles[%zu]", i);
    rc = expect_map(d, n, path);
    if (rc <= 0)
        return rc;
    FOR_PAIRS(n, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int f = field_index(d, node(d, pair->key), names, NFIELDS(names), path, &seen);
        char p[96];
        if (f < 0)
            return f;
        pathf(p, sizeof(p), "%s.%s", path, names[f]);
        switch (f) {
        case 0:
            rc = get_str(d, v, p, &pc->scheduler_name);
            if (rc == 1)
                in->has_name = 1;
            break;
        case 1:
            rc = get_i32(d, v, p, &pc->percentage_of_nodes_to_score);
            if (rc == 1)
                in->has_percentage = 1;
            break;
        case 2:
            rc = decode_plugins(d, v, p, in);
            break;
        default:
            rc = decode_plugin_config(d, v, i, pc);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_profiles(dec *d, const yaml_node_t *n)
{
    ks_config *c = d->L->cfg;
    size_t len;
    int rc = expect_seq(d, n, "profiles");
    if (rc <= 0)
        return rc;
    len = SEQ_LEN(n);
    if (len == 0)
        return 0;
    c->profiles = calloc(len, sizeof(*c->profiles));
    d->L->in = calloc(len, sizeof(*d->L->in));
    if (!c->profiles || !d->L->in)
        return ks__cfg_oom(d->L);
    c->nprofiles = len;
    for (size_t i = 0; i < len; i++)
        c->profiles[i].percentage_of_nodes_to_score = -1;
    for (size_t i = 0; i < len; i++) {
        rc = decode_profile(d, node(d, n->data.sequence.items.start[i]), i);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_tls(dec *d, const yaml_node_t *n, const char *path)
{
    static const char *const names[] = {"insecure", "serverName", "certFile", "keyFile",
                                        "caFile",   "certData",   "keyData",  "caData"};
    uint64_t seen = 0;
    int rc = expect_map(d, n, path);
    if (rc <= 0)
        return rc;
    FOR_PAIRS(n, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int f = field_index(d, node(d, pair->key), names, NFIELDS(names), path, &seen);
        char p[96];
        char *s = NULL;
        int b;
        if (f < 0)
            return f;
        pathf(p, sizeof(p), "%s.%s", path, names[f]);
        rc = f == 0 ? get_bool(d, v, p, &b) : get_str(d, v, p, &s);
        free(s);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_managed_resources(dec *d, const yaml_node_t *n, const char *path,
                                    cfg_extender_in *e)
{
    static const char *const names[] = {"name", "ignoredByScheduler"};
    int rc = expect_seq(d, n, path);
    size_t len;
    if (rc <= 0)
        return rc;
    len = SEQ_LEN(n);
    if (len == 0)
        return 0;
    e->resources = calloc(len, sizeof(char *));
    if (!e->resources)
        return ks__cfg_oom(d->L);
    for (size_t i = 0; i < len; i++) {
        const yaml_node_t *item = node(d, n->data.sequence.items.start[i]);
        uint64_t seen = 0;
        char ipath[96];
        pathf(ipath, sizeof(ipath), "%s[%zu]", path, i);
        e->nresources++;
        rc = expect_map(d, item, ipath);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        FOR_PAIRS(item, pair)
        {
            const yaml_node_t *v = node(d, pair->value);
            int f = field_index(d, node(d, pair->key), names, NFIELDS(names), ipath, &seen);
            char p[128];
            int b;
            if (f < 0)
                return f;
            pathf(p, sizeof(p), "%s.%s", ipath, names[f]);
            rc = f == 0 ? get_str(d, v, p, &e->resources[i]) : get_bool(d, v, p, &b);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int decode_extender(dec *d, const yaml_node_t *n, size_t i, cfg_extender_in *e)
{
    static const char *const names[] = {"urlPrefix",        "filterVerb",       "preemptVerb",
                                        "prioritizeVerb",   "weight",           "bindVerb",
                                        "enableHTTPS",      "tlsConfig",        "httpTimeout",
                                        "nodeCacheCapable", "managedResources", "ignorable"};
    uint64_t seen = 0;
    char path[48];
    int rc;
    pathf(path, sizeof(path), "extenders[%zu]", i);
    rc = expect_map(d, n, path);
    if (rc <= 0)
        return rc;
    FOR_PAIRS(n, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int f = field_index(d, node(d, pair->key), names, NFIELDS(names), path, &seen);
        char p[96];
        char *s = NULL;
        int b;
        int64_t ns;
        if (f < 0)
            return f;
        pathf(p, sizeof(p), "%s.%s", path, names[f]);
        switch (f) {
        case 4:
            rc = get_int(d, v, p, 64, &e->weight);
            break;
        case 6:
        case 9:
        case 11:
            rc = get_bool(d, v, p, &b);
            break;
        case 7:
            rc = decode_tls(d, v, p);
            break;
        case 8:
            rc = get_duration(d, v, p, &ns);
            break;
        case 10:
            rc = decode_managed_resources(d, v, p, e);
            break;
        default:
            rc = get_str(d, v, p, &s);
            if (rc == 1 && s[0] && f == 3)
                e->has_prioritize_verb = 1;
            if (rc == 1 && s[0] && f == 5)
                e->has_bind_verb = 1;
            free(s);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_extenders(dec *d, const yaml_node_t *n)
{
    int rc = expect_seq(d, n, "extenders");
    size_t len;
    if (rc <= 0)
        return rc;
    len = SEQ_LEN(n);
    if (len == 0)
        return 0;
    d->L->extenders = calloc(len, sizeof(*d->L->extenders));
    if (!d->L->extenders)
        return ks__cfg_oom(d->L);
    for (size_t i = 0; i < len; i++) {
        d->L->nextenders++;
        rc = decode_extender(d, node(d, n->data.sequence.items.start[i]), i, &d->L->extenders[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* apiVersion and kind decide how the rest is read, so they are checked before any other field. */
static int check_type_meta(dec *d, const yaml_node_t *root)
{
    const yaml_node_t *api = NULL, *kind = NULL;
    FOR_PAIRS(root, pair)
    {
        const yaml_node_t *k = node(d, pair->key);
        if (k->type != YAML_SCALAR_NODE)
            continue;
        if (strcmp(sval(k), "apiVersion") == 0)
            api = node(d, pair->value);
        else if (strcmp(sval(k), "kind") == 0)
            kind = node(d, pair->value);
    }
    if (!api || is_null(api))
        return ks__cfg_fail_at(d->L, root, KS_EINVAL,
                               "apiVersion is missing: expected \"apiVersion: " KS_CFG_API_VERSION
                               "\"");
    if (api->type != YAML_SCALAR_NODE || strcmp(sval(api), KS_CFG_API_VERSION) != 0) {
        char got[96];
        describe(api, got, sizeof(got));
        return ks__cfg_fail_at(d->L, api, KS_EINVAL,
                               "apiVersion: %s is not supported: expected \"" KS_CFG_API_VERSION
                               "\" (kubesched reads only the v1 KubeSchedulerConfiguration)",
                               got);
    }
    if (!kind || is_null(kind))
        return ks__cfg_fail_at(d->L, root, KS_EINVAL,
                               "kind is missing: expected \"kind: " KS_CFG_KIND "\"");
    if (kind->type != YAML_SCALAR_NODE || strcmp(sval(kind), KS_CFG_KIND) != 0) {
        char got[96];
        describe(kind, got, sizeof(got));
        return ks__cfg_fail_at(d->L, kind, KS_EINVAL,
                               "kind: %s is not supported: expected \"" KS_CFG_KIND "\"", got);
    }
    return 0;
}

static int decode_root(dec *d, const yaml_node_t *root)
{
    static const char *const names[] = {"apiVersion",
                                        "kind",
                                        "parallelism",
                                        "leaderElection",
                                        "clientConnection",
                                        "enableProfiling",
                                        "enableContentionProfiling",
                                        "percentageOfNodesToScore",
                                        "podInitialBackoffSeconds",
                                        "podMaxBackoffSeconds",
                                        "profiles",
                                        "extenders",
                                        "delayCacheUntilActive"};
    ks_config *c = d->L->cfg;
    uint64_t seen = 0;
    int rc;
    if (root->type != YAML_MAPPING_NODE)
        return type_error(d, root, KS_CFG_KIND, "a mapping");
    rc = check_type_meta(d, root);
    if (rc < 0)
        return rc;
    FOR_PAIRS(root, pair)
    {
        const yaml_node_t *v = node(d, pair->value);
        int f = field_index(d, node(d, pair->key), names, NFIELDS(names), "", &seen);
        int64_t i64;
        if (f < 0)
            return f;
        switch (f) {
        case 0:
        case 1:
            rc = 0;
            break;
        case 2:
            rc = get_i32(d, v, names[f], &c->parallelism);
            if (rc == 1)
                d->L->set |= CFG_SET_PARALLELISM;
            break;
        case 3:
            rc = decode_leader_election(d, v);
            break;
        case 4:
            rc = decode_client_connection(d, v);
            break;
        case 5:
            rc = get_bool(d, v, names[f], &c->enable_profiling);
            if (rc == 1)
                d->L->set |= CFG_SET_PROFILING;
            break;
        case 6:
            rc = get_bool(d, v, names[f], &c->enable_contention_profiling);
            if (rc == 1)
                d->L->set |= CFG_SET_CONTENTION;
            break;
        case 7:
            rc = get_i32(d, v, names[f], &c->percentage_of_nodes_to_score);
            if (rc == 1)
                d->L->set |= CFG_SET_PERCENTAGE;
            break;
        case 8:
            rc = get_int(d, v, names[f], 64, &i64);
            if (rc == 1) {
                c->pod_initial_backoff_seconds = i64;
                d->L->set |= CFG_SET_INITIAL_BACKOFF;
            }
            break;
        case 9:
            rc = get_int(d, v, names[f], 64, &i64);
            if (rc == 1) {
                c->pod_max_backoff_seconds = i64;
                d->L->set |= CFG_SET_MAX_BACKOFF;
            }
            break;
        case 10:
            d->L->has_profiles = 1;
            rc = decode_profiles(d, v);
            break;
        case 11:
            rc = decode_extenders(d, v);
            break;
        default:
            rc = get_bool(d, v, names[f], &c->delay_cache_until_active);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int syntax_error(cfg_load *L, const yaml_parser_t *p)
{
    yaml_node_t at;
    if (p->error == YAML_MEMORY_ERROR)
        return ks__cfg_oom(L);
    memset(&at, 0, sizeof(at));
    at.start_mark = p->problem_mark;
    if (p->context)
        return ks__cfg_fail_at(L, &at, KS_EPARSE, "YAML syntax error: %s (%s at line %lu)",
                               p->problem ? p->problem : "invalid YAML", p->context,
                               (unsigned long)p->context_mark.line + 1);
    return ks__cfg_fail_at(L, &at, KS_EPARSE, "YAML syntax error: %s",
                           p->problem ? p->problem : "invalid YAML");
}

/* libyaml's scanner slows down quadratically with nesting (10^6 nested `[` never finish), so
 * the nesting is checked first, by a reader that stops at the limit. */
static int refuse_deep_nesting(cfg_load *L, const char *yaml, size_t len)
{
    yaml_node_t at;
    size_t line, col;
    char msg[256];
    int rc = ks__yaml_check_depth(yaml, len, &line, &col, msg, sizeof(msg));
    if (rc == 0 || rc == KS_EPARSE) /* a syntax error: the loader reports it the usual way */
        return 0;
    if (rc == KS_ENOMEM)
        return ks__cfg_oom(L);
    memset(&at, 0, sizeof(at));
    at.start_mark.line = line - 1;
    at.start_mark.column = col - 1;
    return ks__cfg_fail_at(L, &at, rc, "%s", msg);
}

int ks__cfg_decode(cfg_load *L, const char *yaml, size_t len)
{
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    dec d = {L, &doc};
    int rc = 0;
    yaml_node_t *root;

    L->budget = JSON_BUDGET;
    if ((rc = refuse_deep_nesting(L, yaml, len)) != 0)
        return rc;
    if (!yaml_parser_initialize(&parser))
        return ks__cfg_oom(L);
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = syntax_error(L, &parser);
        yaml_parser_delete(&parser);
        return rc;
    }
    root = yaml_document_get_root_node(&doc);
    if (!root) {
        rc = ks__cfg_fail(L, KS_EINVAL,
                          "the configuration is empty: expected \"apiVersion: " KS_CFG_API_VERSION
                          "\" and \"kind: " KS_CFG_KIND "\"");
        goto out;
    }
    /* A second document would be ignored by upstream's decoder; say so instead. */
    if (!yaml_parser_load(&parser, &extra)) {
        rc = syntax_error(L, &parser);
        goto out;
    }
    if (yaml_document_get_root_node(&extra)) {
        rc = ks__cfg_fail_at(L, yaml_document_get_root_node(&extra), KS_EINVAL,
                             "a second YAML document: the configuration must be a single "
                             "document");
        yaml_document_delete(&extra);
        goto out;
    }
    yaml_document_delete(&extra);
    rc = decode_root(&d, root);
out:
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc < 0 ? rc : 0;
}
