/*
 * The DRA kinds as compact structs; see dra_objects.h.
 *
 * Checked mode (cluster files) applies these rules of pkg/apis/resource/validation (v1.37.2),
 * with upstream's wording and field path:
 *   ResourceSlice: spec.driver and spec.pool.name required; pool.generation >= 0;
 *     pool.resourceSliceCount > 0; exactly one of nodeName / nodeSelector / allNodes /
 *     perDeviceNodeSelection (a nodeSelector with exactly one term); devices[].name required and
 *     unique; a device's node fields only with perDeviceNodeSelection, and then exactly one; an
 *     attribute has exactly one value, lists not empty; capacity values not negative; taints:
 *     key required, effect required and supported; bindingConditions /
 *     bindingFailureConditions unique, not overlapping, each needing the other; sharedCounters
 *     and devices not both; counterSet / consumesCounters name required.
 *   DeviceClass: selectors[].cel required with an expression.
 *   ResourceClaim: requests required, names required and unique; exactly one of exactly /
 *     firstAvailable; deviceClassName required; allocationMode supported; count > 0 for
 *     ExactCount and absent for All; tolerations: operator supported, value empty for Exists,
 *     effect supported; constraints: exactly one of matchAttribute / distinctAttribute, requests
 *     naming requests of the claim; config: opaque required; status.reservedFor only when
 *     allocated, each entry with resource, name and uid.
 *   DeviceTaintRule: spec.taint as a device's taint.
 * Not applied (the API server would, the scheduler does not depend on them): name syntax (DNS
 * labels / subdomains, C identifiers of qualified names), size limits (maxItems, the 32
 * attributes and capacities per device), CEL compilation and cost of selectors, semver syntax of
 * version attributes, capacity requestPolicy consistency (default within range, steps), opaque
 * parameters being a JSON object, partitionTypeAttribute, nodeAllocatableResources,
 * derivedAttributes (read not at all), status.devices, update-only rules.
 */
#include "api/dra_objects.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "api/quantity.h"

static const char *const kind_names[KS_DK_COUNT] = {"ResourceSlice", "DeviceClass", "ResourceClaim",
                                                    "DeviceTaintRule"};

int ks__draobj_kind(const char *kind)
{
    for (int i = 0; kind && i < KS_DK_COUNT; i++)
        if (!strcmp(kind, kind_names[i]))
            return i;
    return -1;
}

const char *ks__draobj_kind_name(ks_dra_kind k)
{
    return (unsigned)k < KS_DK_COUNT ? kind_names[k] : "";
}

int ks__draobj_namespaced(ks_dra_kind k) { return k == KS_DK_RESOURCE_CLAIM; }

/* ---- helpers ------------------------------------------------------------------------------- */

typedef struct {
    char *err;
    size_t errlen;
    ks_mempool *pool;
    ks__symrefs *syms;
    int checked;
} pctx;

static KS_PRINTF(2, 3) int fail(pctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return KS_EPARSE;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static int is_set(const cJSON *v) { return v && !cJSON_IsNull(v); }

static char *pool_str(pctx *c, const char *s)
{
    size_t n = strlen(s ? s : "");
    char *p = ks__mempool_alloc(c->pool, n + 1);
    if (p)
        memcpy(p, s ? s : "", n + 1);
    return p;
}

static void *pool_array(pctx *c, size_t n, size_t size)
{
    return n ? ks__mempool_alloc(c->pool, n * size) : NULL;
}

/* A string field into the pool: absent or null reads "" (*set 0, or NULL when null_absent);
 * another type is a decode error. */
static int str_field(pctx *c, const cJSON *o, const char *k, const char *path, int null_absent,
                     const char **out, int *set)
{
    const cJSON *v = get(o, k);
    if (set)
        *set = 0;
    *out = null_absent ? NULL : "";
    if (is_set(o) && !cJSON_IsObject(o))
        return fail(c, "%s: expected an object", path);
    if (!is_set(v))
        return 0;
    if (!cJSON_IsString(v))
        return fail(c, "%s.%s: expected a string", path, k);
    if (!(*out = pool_str(c, v->valuestring)))
        return KS_ENOMEM;
    if (set)
        *set = 1;
    return 0;
}

/* A *bool: absent or null reads 0 (*set 0). */
static int bool_field(pctx *c, const cJSON *o, const char *k, const char *path, int32_t *out,
                      int *set)
{
    const cJSON *v = get(o, k);
    *out = 0;
    if (set)
        *set = 0;
    if (!is_set(v))
        return 0;
    if (!cJSON_IsBool(v))
        return fail(c, "%s.%s: expected true or false", path, k);
    *out = cJSON_IsTrue(v);
    if (set)
        *set = 1;
    return 0;
}

/* A JSON number that is an exact int64 (the API's int64 fields). */
static int int_value(pctx *c, const cJSON *v, const char *path, int64_t *out)
{
    /* 2^63 as a double: anything at or above cannot convert. */
    if (!cJSON_IsNumber(v) ||
        !(v->valuedouble >= -9223372036854775808.0 && v->valuedouble < 9223372036854775808.0) ||
        v->valuedouble != (double)(int64_t)v->valuedouble)
        return fail(c, "%s: expected an integer", path);
    *out = (int64_t)v->valuedouble;
    return 0;
}

static int int_field(pctx *c, const cJSON *o, const char *k, const char *path, int64_t *out,
                     int *set)
{
    const cJSON *v = get(o, k);
    char p[400];
    *out = 0;
    if (set)
        *set = 0;
    if (!is_set(v))
        return 0;
    snprintf(p, sizeof(p), "%s.%s", path, k);
    int rc = int_value(c, v, p, out);
    if (!rc && set)
        *set = 1;
    return rc;
}

/* A list of strings into the pool (NULL, 0 when absent). */
static int str_list(pctx *c, const cJSON *arr, const char *path, uint32_t *n,
                    const char *const **out)
{
    const cJSON *it;
    *n = 0;
    *out = NULL;
    if (!is_set(arr))
        return 0;
    if (!cJSON_IsArray(arr))
        return fail(c, "%s: expected a list of strings", path);
    int cnt = cJSON_GetArraySize(arr);
    const char **a = pool_array(c, (size_t)cnt, sizeof(*a));
    if (cnt && !a)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it))
            return fail(c, "%s[%u]: expected a string", path, i);
        if (!(a[i++] = pool_str(c, it->valuestring)))
            return KS_ENOMEM;
    }
    *n = i;
    *out = a;
    return 0;
}

/* A list of objects: checks the type and returns the count (-1 after a failure). */
static int obj_list(pctx *c, const cJSON *arr, const char *path)
{
    const cJSON *it;
    int i = 0;
    if (!is_set(arr))
        return 0;
    if (!cJSON_IsArray(arr)) {
        fail(c, "%s: expected a list", path);
        return -1;
    }
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsObject(it)) {
            fail(c, "%s[%d]: expected an object", path, i);
            return -1;
        }
        i++;
    }
    return i;
}

static int quantity(pctx *c, const cJSON *v, const char *path, ks_dra_quantity *q)
{
    char buf[64];
    const char *text = NULL;
    if (cJSON_IsString(v))
        text = v->valuestring;
    else if (cJSON_IsNumber(v)) {
        snprintf(buf, sizeof(buf), "%.17g", v->valuedouble);
        text = buf;
    }
    if (!text || ks__quantity_parse(text, &q->value, &q->milli) != 0)
        return fail(c, "%s: invalid quantity \"%s\" (expected e.g. \"80Gi\", \"1\", \"500m\")",
                    path, text ? text : "not a string");
    return (q->text = pool_str(c, text)) ? 0 : KS_ENOMEM;
}

static int qname(pctx *c, const char *s, ks_dra_qname *q)
{
    const char *slash = strchr(s, '/');
    if (!(q->name = pool_str(c, s)))
        return KS_ENOMEM;
    if (!slash) {
        q->domain = "";
        q->id = q->name;
        return 0;
    }
    char *d = ks__mempool_alloc(c->pool, (size_t)(slash - s) + 1);
    if (!d)
        return KS_ENOMEM;
    memcpy(d, s, (size_t)(slash - s));
    d[slash - s] = 0;
    q->domain = d;
    q->id = q->name + (slash - s) + 1;
    return 0;
}

static int cmp_qname(const void *a, const void *b)
{
    return strcmp(((const ks_dra_qname *)a)->name, ((const ks_dra_qname *)b)->name);
}

static int cmp_counter(const void *a, const void *b)
{
    return strcmp(((const ks_dra_counter *)a)->name, ((const ks_dra_counter *)b)->name);
}

/* ---- node selectors (the rules of a pod's node affinity, as volume_objects.c) -------------- */

static int parse_reqs(pctx *c, const cJSON *arr, const char *path, int fields, uint32_t *n,
                      const ks_selector_req **out)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    const cJSON *r;
    *n = 0;
    *out = NULL;
    int cnt = obj_list(c, arr, path);
    if (cnt < 0)
        return KS_EPARSE;
    ks_selector_req *reqs = pool_array(c, (size_t)cnt, sizeof(*reqs));
    if (cnt && !reqs)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(r, arr)
    {
        char rp[400];
        const char *key, *op;
        int rc;
        snprintf(rp, sizeof(rp), "%s[%u]", path, i);
        if ((rc = str_field(c, r, "key", rp, 0, &key, NULL)) ||
            (rc = str_field(c, r, "operator", rp, 0, &op, NULL)))
            return rc;
        reqs[i].key = ks__symrefs_intern(c->syms, key);
        int k = -1;
        for (int j = 0; j < 6; j++)
            if (!strcmp(op, ops[j]))
                k = j;
        if (k < 0)
            return fail(c, "%s.operator: Invalid value: \"%s\": not a valid selector operator", rp,
                        op);
        reqs[i].op = (ks_selector_op)k;
        const cJSON *vals = get(r, "values"), *v;
        if (is_set(vals) && !cJSON_IsArray(vals))
            return fail(c, "%s.values: expected a list of strings", rp);
        int nv = cJSON_GetArraySize(vals);
        ks_sym *vs = pool_array(c, (size_t)nv, sizeof(*vs));
        if (nv && !vs)
            return KS_ENOMEM;
        uint32_t j = 0;
        cJSON_ArrayForEach(v, vals)
        {
            if (!cJSON_IsString(v))
                return fail(c, "%s.values[%u]: expected a string", rp, j);
            vs[j++] = ks__symrefs_intern(c->syms, v->valuestring);
        }
        const char *problem =
            c->checked && !fields ? ks__node_req_problem(reqs[i].op, reqs[i].key, nv) : NULL;
        if (problem)
            return fail(c, "%s%s", rp, problem);
        reqs[i].nvalues = j;
        reqs[i].values = vs;
        i++;
    }
    *n = i;
    *out = reqs;
    return 0;
}

static int parse_node_selector(pctx *c, const cJSON *ns, const char *path, uint32_t *n,
                               const ks_node_selector_term **out)
{
    const cJSON *terms = get(ns, "nodeSelectorTerms"), *t;
    char p[400];
    *n = 0;
    *out = NULL;
    if (is_set(ns) && !cJSON_IsObject(ns))
        return fail(c, "%s: expected an object", path);
    snprintf(p, sizeof(p), "%s.nodeSelectorTerms", path);
    int cnt = obj_list(c, terms, p);
    if (cnt < 0)
        return KS_EPARSE;
    ks_node_selector_term *ts = pool_array(c, (size_t)cnt, sizeof(*ts));
    if (cnt && !ts)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(t, terms)
    {
        int rc;
        snprintf(p, sizeof(p), "%s.nodeSelectorTerms[%u].matchExpressions", path, i);
        if ((rc = parse_reqs(c, get(t, "matchExpressions"), p, 0, &ts[i].nexprs, &ts[i].exprs)))
            return rc;
        snprintf(p, sizeof(p), "%s.nodeSelectorTerms[%u].matchFields", path, i);
        if ((rc = parse_reqs(c, get(t, "matchFields"), p, 1, &ts[i].nfields, &ts[i].fields)))
            return rc;
        i++;
    }
    *n = i;
    *out = ts;
    return 0;
}

/* nodeName / nodeSelector / allNodes of a slice spec or a device, and what upstream's count of
 * them needs: raw (fields present at all), eff (present with a usable value: a non-empty
 * nodeName, allNodes true) with their names in upstream's words, and the flags of the unusable
 * ones. */
typedef struct {
    int raw, eff, empty_name, false_all;
    char names[128];
} nsel_count;

static void add_name(nsel_count *n, const char *name)
{
    size_t l = strlen(n->names);
    snprintf(n->names + l, sizeof(n->names) - l, "%s`%s`", n->eff ? ", " : "", name);
    n->eff++;
}

static int parse_node_selection(pctx *c, const cJSON *o, const char *path, ks_dra_node_selection *s,
                                nsel_count *cnt)
{
    const char *node;
    int set_name, set_all;
    int rc;
    memset(s, 0, sizeof(*s));
    memset(cnt, 0, sizeof(*cnt));
    if ((rc = str_field(c, o, "nodeName", path, 0, &node, &set_name)) ||
        (rc = bool_field(c, o, "allNodes", path, &s->all_nodes, &set_all)))
        return rc;
    char p[400];
    snprintf(p, sizeof(p), "%s.nodeSelector", path);
    if (is_set(get(o, "nodeSelector"))) {
        s->has_node_selector = 1;
        if ((rc = parse_node_selector(c, get(o, "nodeSelector"), p, &s->nterms, &s->terms)))
            return rc;
    }
    /* upstream tests the pointers: a nodeName "" or allNodes false is present but unusable. */
    cnt->raw = set_name + s->has_node_selector + set_all;
    if (set_name) {
        s->has_node_name = *node != 0;
        s->node_name = ks__symrefs_intern(c->syms, node);
        if (*node)
            add_name(cnt, "nodeName");
        else
            cnt->empty_name = 1;
    }
    if (s->has_node_selector)
        add_name(cnt, "nodeSelector");
    if (set_all && s->all_nodes)
        add_name(cnt, "allNodes");
    else if (set_all)
        cnt->false_all = 1;
    return 0;
}

/* ---- taints and tolerations ---------------------------------------------------------------- */

static ks_dra_taint_effect effect_of(const char *e)
{
    return !*e                        ? KS_DRA_EFFECT_NONE_SET
           : !strcmp(e, "NoSchedule") ? KS_DRA_EFFECT_NO_SCHEDULE
           : !strcmp(e, "NoExecute")  ? KS_DRA_EFFECT_NO_EXECUTE
           : !strcmp(e, "None")       ? KS_DRA_EFFECT_NONE
                                      : KS_DRA_EFFECT_OTHER;
}

#define EFFECTS "\"NoExecute\", \"NoSchedule\", \"None\""

static int parse_taint(pctx *c, const cJSON *t, const char *path, ks_dra_taint *out)
{
    int rc;
    if ((rc = str_field(c, t, "key", path, 0, &out->key, NULL)) ||
        (rc = str_field(c, t, "value", path, 0, &out->value, NULL)) ||
        (rc = str_field(c, t, "effect", path, 0, &out->effect_text, NULL)) ||
        (rc = str_field(c, t, "timeAdded", path, 0, &out->time_added, NULL)))
        return rc;
    out->effect = effect_of(out->effect_text);
    if (!c->checked)
        return 0;
    if (!*out->key)
        return fail(c, "%s.key: Required value", path);
    if (out->effect == KS_DRA_EFFECT_NONE_SET)
        return fail(c, "%s.effect: Required value", path);
    if (out->effect == KS_DRA_EFFECT_OTHER)
        return fail(c, "%s.effect: Unsupported value: \"%s\": supported values: " EFFECTS, path,
                    out->effect_text);
    return 0;
}

static int parse_tolerations(pctx *c, const cJSON *arr, const char *path, uint32_t *n,
                             const ks_dra_toleration **out)
{
    const cJSON *t;
    int cnt = obj_list(c, arr, path);
    *n = 0;
    *out = NULL;
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_toleration *ts = pool_array(c, (size_t)cnt, sizeof(*ts));
    if (cnt && !ts)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(t, arr)
    {
        char p[400];
        const char *op, *effect;
        int rc, has_secs;
        snprintf(p, sizeof(p), "%s[%u]", path, i);
        ks_dra_toleration *x = &ts[i];
        if ((rc = str_field(c, t, "key", p, 0, &x->key, NULL)) ||
            (rc = str_field(c, t, "operator", p, 0, &op, NULL)) ||
            (rc = str_field(c, t, "value", p, 0, &x->value, NULL)) ||
            (rc = str_field(c, t, "effect", p, 0, &effect, NULL)) ||
            (rc = int_field(c, t, "tolerationSeconds", p, &x->toleration_seconds, &has_secs)))
            return rc;
        x->has_toleration_seconds = has_secs;
        /* The API's default operator is Equal. */
        x->op = !strcmp(op, "Exists") ? KS_DRA_TOL_EXISTS : KS_DRA_TOL_EQUAL;
        x->effect = effect_of(effect);
        if (c->checked) {
            if (*op && strcmp(op, "Exists") && strcmp(op, "Equal"))
                return fail(c,
                            "%s.operator: Unsupported value: \"%s\": supported values: "
                            "\"Equal\", \"Exists\"",
                            p, op);
            if (x->op == KS_DRA_TOL_EXISTS && *x->value)
                return fail(c,
                            "%s.value: Invalid value: \"%s\": must be empty for operator "
                            "`Exists`",
                            p, x->value);
            if (x->effect == KS_DRA_EFFECT_OTHER)
                return fail(c, "%s.effect: Unsupported value: \"%s\": supported values: " EFFECTS,
                            p, effect);
        }
        i++;
    }
    *n = i;
    *out = ts;
    return 0;
}

/* bindingConditions / bindingFailureConditions of a device (validateDeviceBindingParameters). */
static int binding_conditions(pctx *c, const cJSON *o, const char *path, ks_dra_device *d)
{
    char p[400];
    int rc;
    snprintf(p, sizeof(p), "%s.bindingConditions", path);
    if ((rc = str_list(c, get(o, "bindingConditions"), p, &d->nbinding_conditions,
                       &d->binding_conditions)))
        return rc;
    snprintf(p, sizeof(p), "%s.bindingFailureConditions", path);
    if ((rc = str_list(c, get(o, "bindingFailureConditions"), p, &d->nbinding_failure_conditions,
                       &d->binding_failure_conditions)))
        return rc;
    if (!c->checked)
        return 0;
    for (uint32_t i = 0; i < d->nbinding_conditions; i++)
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(d->binding_conditions[i], d->binding_conditions[j]))
                return fail(c, "%s.bindingConditions[%u]: Duplicate value: \"%s\"", path, i,
                            d->binding_conditions[i]);
    for (uint32_t i = 0; i < d->nbinding_failure_conditions; i++) {
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(d->binding_failure_conditions[i], d->binding_failure_conditions[j]))
                return fail(c, "%s.bindingFailureConditions[%u]: Duplicate value: \"%s\"", path, i,
                            d->binding_failure_conditions[i]);
        for (uint32_t j = 0; j < d->nbinding_conditions; j++)
            if (!strcmp(d->binding_failure_conditions[i], d->binding_conditions[j]))
                return fail(c,
                            "%s.bindingFailureConditions[%u]: Invalid value: \"%s\": "
                            "bindingFailureConditions must not overlap with bindingConditions",
                            path, i, d->binding_failure_conditions[i]);
    }
    if (d->nbinding_failure_conditions && !d->nbinding_conditions)
        return fail(c,
                    "%s.bindingConditions: Invalid value: null: bindingConditions are required to "
                    "use bindingFailureConditions",
                    path);
    if (d->nbinding_conditions && !d->nbinding_failure_conditions)
        return fail(c,
                    "%s.bindingFailureConditions: Invalid value: null: bindingFailureConditions "
                    "are required to use bindingConditions",
                    path);
    return 0;
}

/* ---- ResourceSlice ------------------------------------------------------------------------- */

static int parse_counters(pctx *c, const cJSON *map, const char *path, uint32_t *n,
                          const ks_dra_counter **out)
{
    const cJSON *it;
    *n = 0;
    *out = NULL;
    if (!is_set(map))
        return 0;
    if (!cJSON_IsObject(map))
        return fail(c, "%s: expected a map of counters", path);
    int cnt = cJSON_GetArraySize(map);
    ks_dra_counter *cs = pool_array(c, (size_t)cnt, sizeof(*cs));
    if (cnt && !cs)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(it, map)
    {
        char p[400];
        int rc;
        snprintf(p, sizeof(p), "%s[%s].value", path, it->string);
        if (!(cs[i].name = pool_str(c, it->string)))
            return KS_ENOMEM;
        if ((rc = quantity(c, get(it, "value"), p, &cs[i].value)))
            return rc;
        i++;
    }
    if (i > 1) /* an empty map has no array (qsort of NULL is undefined) */
        qsort(cs, i, sizeof(*cs), cmp_counter);
    *n = i;
    *out = cs;
    return 0;
}

/* sharedCounters (name_key "name") or consumesCounters (name_key "counterSet"). */
static int parse_counter_sets(pctx *c, const cJSON *arr, const char *path, const char *name_key,
                              uint32_t *n, const ks_dra_counter_set **out)
{
    const cJSON *s;
    int cnt = obj_list(c, arr, path);
    *n = 0;
    *out = NULL;
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_counter_set *ss = pool_array(c, (size_t)cnt, sizeof(*ss));
    if (cnt && !ss)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(s, arr)
    {
        char p[400], cp[420];
        int rc;
        snprintf(p, sizeof(p), "%s[%u]", path, i);
        snprintf(cp, sizeof(cp), "%s.counters", p);
        if ((rc = str_field(c, s, name_key, p, 0, &ss[i].name, NULL)) ||
            (rc = parse_counters(c, get(s, "counters"), cp, &ss[i].ncounters, &ss[i].counters)))
            return rc;
        if (c->checked && !*ss[i].name)
            return fail(c, "%s.%s: Required value", p, name_key);
        const cJSON *groups = get(s, "compatibilityGroups");
        if (cJSON_IsArray(groups))
            ss[i].ncompatibility_groups = (uint32_t)cJSON_GetArraySize(groups);
        if (c->checked && !ss[i].ncounters)
            return fail(c, "%s.counters: Required value", p);
        i++;
    }
    *n = i;
    *out = ss;
    return 0;
}

static int parse_attribute(pctx *c, const cJSON *v, const char *path, ks_dra_attribute *a)
{
    static const char *const keys[] = {"bool",  "int",  "string",  "version",
                                       "bools", "ints", "strings", "versions"};
    int which = -1, nset = 0;
    if (!cJSON_IsObject(v))
        return fail(c, "%s: expected an object", path);
    for (int k = 0; k < 8; k++)
        if (is_set(get(v, keys[k]))) {
            which = which < 0 ? k : which;
            nset++;
        }
    if (nset == 0 && c->checked)
        return fail(c, "%s: Invalid value: \"\": exactly one value must be specified", path);
    if (nset == 0) { /* what the API server stored: a value type newer than this reader */
        a->type = KS_DRA_ATTR_UNKNOWN;
        return 0;
    }
    if (nset > 1 && c->checked)
        return fail(c, "%s: Invalid value: %d values: exactly one value must be specified", path,
                    nset);
    const cJSON *x = get(v, keys[which]), *it;
    char p[400];
    snprintf(p, sizeof(p), "%s.%s", path, keys[which]);
    a->type = (ks_dra_attr_type)which;
    switch (a->type) {
    case KS_DRA_ATTR_BOOL:
        if (!cJSON_IsBool(x))
            return fail(c, "%s: expected true or false", p);
        a->b = cJSON_IsTrue(x);
        return 0;
    case KS_DRA_ATTR_INT:
        return int_value(c, x, p, &a->i);
    case KS_DRA_ATTR_STRING:
    case KS_DRA_ATTR_VERSION:
        if (!cJSON_IsString(x))
            return fail(c, "%s: expected a string", p);
        return (a->s = pool_str(c, x->valuestring)) ? 0 : KS_ENOMEM;
    default:
        break;
    }
    if (!cJSON_IsArray(x))
        return fail(c, "%s: expected a list", p);
    int cnt = cJSON_GetArraySize(x);
    if (!cnt && c->checked)
        return fail(c, "%s: Invalid value: []: must not be empty if specified", p);
    uint32_t i = 0;
    if (a->type == KS_DRA_ATTR_INTS) {
        int64_t *ints = pool_array(c, (size_t)cnt, sizeof(*ints));
        if (cnt && !ints)
            return KS_ENOMEM;
        cJSON_ArrayForEach(it, x)
        {
            char ip[420];
            snprintf(ip, sizeof(ip), "%s[%u]", p, i);
            int rc = int_value(c, it, ip, &ints[i++]);
            if (rc)
                return rc;
        }
        a->ints = ints;
    } else if (a->type == KS_DRA_ATTR_BOOLS) {
        uint8_t *bools = pool_array(c, (size_t)cnt, sizeof(*bools));
        if (cnt && !bools)
            return KS_ENOMEM;
        cJSON_ArrayForEach(it, x)
        {
            if (!cJSON_IsBool(it))
                return fail(c, "%s[%u]: expected true or false", p, i);
            bools[i++] = (uint8_t)cJSON_IsTrue(it);
        }
        a->bools = bools;
    } else {
        int rc = str_list(c, x, p, &i, &a->strs);
        if (rc)
            return rc;
    }
    a->n = i;
    return 0;
}

static int parse_capacity_entry(pctx *c, const cJSON *v, const char *path, ks_dra_capacity *cap)
{
    char p[400];
    int rc;
    if (!cJSON_IsObject(v))
        return fail(c, "%s: expected an object", path);
    snprintf(p, sizeof(p), "%s.value", path);
    if ((rc = quantity(c, get(v, "value"), p, &cap->value)))
        return rc;
    if (c->checked && (cap->value.value < 0 || cap->value.milli < 0))
        return fail(c, "%s: Invalid value: \"%s\": must be greater than or equal to 0", p,
                    cap->value.text);
    const cJSON *pol = get(v, "requestPolicy");
    if (!is_set(pol))
        return 0;
    if (!cJSON_IsObject(pol))
        return fail(c, "%s.requestPolicy: expected an object", path);
    cap->has_policy = 1;
    if (is_set(get(pol, "default"))) {
        snprintf(p, sizeof(p), "%s.requestPolicy.default", path);
        if ((rc = quantity(c, get(pol, "default"), p, &cap->dflt)))
            return rc;
        cap->has_default = 1;
    }
    const cJSON *vals = get(pol, "validValues"), *it;
    if (is_set(vals)) {
        snprintf(p, sizeof(p), "%s.requestPolicy.validValues", path);
        if (!cJSON_IsArray(vals))
            return fail(c, "%s: expected a list of quantities", p);
        int cnt = cJSON_GetArraySize(vals);
        ks_dra_quantity *qs = pool_array(c, (size_t)cnt, sizeof(*qs));
        if (cnt && !qs)
            return KS_ENOMEM;
        uint32_t i = 0;
        cJSON_ArrayForEach(it, vals)
        {
            char ip[420];
            snprintf(ip, sizeof(ip), "%s[%u]", p, i);
            if ((rc = quantity(c, it, ip, &qs[i++])))
                return rc;
        }
        cap->nvalid_values = i;
        cap->valid_values = qs;
    }
    const cJSON *range = get(pol, "validRange");
    if (is_set(range)) {
        struct {
            const char *k;
            int32_t *has;
            ks_dra_quantity *q;
        } f[] = {{"min", &cap->has_min, &cap->min},
                 {"max", &cap->has_max, &cap->max},
                 {"step", &cap->has_step, &cap->step}};
        cap->has_range = 1;
        for (int k = 0; k < 3; k++) {
            if (!is_set(get(range, f[k].k)))
                continue;
            snprintf(p, sizeof(p), "%s.requestPolicy.validRange.%s", path, f[k].k);
            if ((rc = quantity(c, get(range, f[k].k), p, f[k].q)))
                return rc;
            *f[k].has = 1;
        }
    }
    if (c->checked && cap->nvalid_values && cap->has_range)
        return fail(c,
                    "%s.requestPolicy: Forbidden: exactly one policy can be specified, cannot "
                    "specify \"validValues\" and \"validRange\" at the same time",
                    path);
    return 0;
}

/* attributes or capacity: a map keyed by qualified names, sorted by name. */
static int parse_attributes(pctx *c, const cJSON *map, const char *path, ks_dra_device *d)
{
    const cJSON *it;
    if (!is_set(map))
        return 0;
    if (!cJSON_IsObject(map))
        return fail(c, "%s: expected a map of attributes", path);
    int cnt = cJSON_GetArraySize(map);
    ks_dra_attribute *as = pool_array(c, (size_t)cnt, sizeof(*as));
    if (cnt && !as)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(it, map)
    {
        char p[400];
        int rc;
        snprintf(p, sizeof(p), "%s[%s]", path, it->string);
        memset(&as[i], 0, sizeof(as[i]));
        if ((rc = qname(c, it->string, &as[i].qname)) || (rc = parse_attribute(c, it, p, &as[i])))
            return rc;
        i++;
    }
    if (i > 1) /* qname is the first member; an empty map has no array */
        qsort(as, i, sizeof(*as), cmp_qname);
    d->nattributes = i;
    d->attributes = as;
    return 0;
}

static int parse_capacities(pctx *c, const cJSON *map, const char *path, ks_dra_device *d)
{
    const cJSON *it;
    if (!is_set(map))
        return 0;
    if (!cJSON_IsObject(map))
        return fail(c, "%s: expected a map of capacities", path);
    int cnt = cJSON_GetArraySize(map);
    ks_dra_capacity *cs = pool_array(c, (size_t)cnt, sizeof(*cs));
    if (cnt && !cs)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(it, map)
    {
        char p[400];
        int rc;
        snprintf(p, sizeof(p), "%s[%s]", path, it->string);
        memset(&cs[i], 0, sizeof(cs[i]));
        if ((rc = qname(c, it->string, &cs[i].qname)) ||
            (rc = parse_capacity_entry(c, it, p, &cs[i])))
            return rc;
        i++;
    }
    if (i > 1) /* an empty map has no array */
        qsort(cs, i, sizeof(*cs), cmp_qname);
    d->ncapacity = i;
    d->capacity = cs;
    return 0;
}

static int parse_device(pctx *c, const cJSON *o, const char *path, int per_device, ks_dra_device *d)
{
    char p[400];
    int rc;
    memset(d, 0, sizeof(*d));
    if ((rc = str_field(c, o, "name", path, 0, &d->name, NULL)))
        return rc;
    if (c->checked && !*d->name)
        return fail(c, "%s.name: Required value", path);
    snprintf(p, sizeof(p), "%s.attributes", path);
    if ((rc = parse_attributes(c, get(o, "attributes"), p, d)))
        return rc;
    snprintf(p, sizeof(p), "%s.capacity", path);
    if ((rc = parse_capacities(c, get(o, "capacity"), p, d)))
        return rc;
    snprintf(p, sizeof(p), "%s.consumesCounters", path);
    if ((rc = parse_counter_sets(c, get(o, "consumesCounters"), p, "counterSet", &d->nconsumes,
                                 &d->consumes_counters)))
        return rc;
    nsel_count ns;
    if ((rc = parse_node_selection(c, o, path, &d->node, &ns)))
        return rc;
    if (c->checked && per_device) {
        if (ns.empty_name)
            return fail(c, "%s.nodeName: Invalid value: \"\": must not be empty", path);
        if (ns.false_all)
            return fail(c, "%s.allNodes: Invalid value: false: must be either unset or set to true",
                        path);
        if (ns.eff == 0)
            return fail(c,
                        "%s: Required value: exactly one of `nodeName`, `nodeSelector`, or "
                        "`allNodes` is required when `perDeviceNodeSelection` is set to true in "
                        "the ResourceSlice spec",
                        path);
        if (ns.eff > 1)
            return fail(c,
                        "%s: Invalid value: \"{%s}\": exactly one of `nodeName`, `nodeSelector`, "
                        "or `allNodes` is required when `perDeviceNodeSelection` is set to true "
                        "in the ResourceSlice spec",
                        path, ns.names);
    }
    if (c->checked && !per_device && ns.raw)
        return fail(c,
                    "%s: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only "
                    "be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
                    path);
    const cJSON *taints = get(o, "taints"), *t;
    snprintf(p, sizeof(p), "%s.taints", path);
    int nt = obj_list(c, taints, p);
    if (nt < 0)
        return KS_EPARSE;
    ks_dra_taint *ts = pool_array(c, (size_t)nt, sizeof(*ts));
    if (nt && !ts)
        return KS_ENOMEM;
    cJSON_ArrayForEach(t, taints)
    {
        snprintf(p, sizeof(p), "%s.taints[%u]", path, d->ntaints);
        if ((rc = parse_taint(c, t, p, &ts[d->ntaints])))
            return rc;
        d->ntaints++;
    }
    d->taints = ts;
    if ((rc = bool_field(c, o, "bindsToNode", path, &d->binds_to_node, NULL)) ||
        (rc = bool_field(c, o, "allowMultipleAllocations", path, &d->allow_multiple_allocations,
                         NULL)) ||
        (rc = binding_conditions(c, o, path, d)))
        return rc;
    if (c->checked && !d->allow_multiple_allocations)
        for (uint32_t i = 0; i < d->ncapacity; i++)
            if (d->capacity[i].has_policy)
                return fail(c,
                            "%s.capacity[%s].requestPolicy: Forbidden: allowMultipleAllocations "
                            "must be true",
                            path, d->capacity[i].qname.name);
    return 0;
}

static int parse_slice(pctx *c, const cJSON *obj, ks_resource_slice *o)
{
    const cJSON *spec = get(obj, "spec"), *pool = get(spec, "pool");
    nsel_count ns;
    int rc, set_pd;
    if (is_set(spec) && !cJSON_IsObject(spec))
        return fail(c, "spec: expected an object");
    if ((rc = str_field(c, spec, "driver", "spec", 0, &o->driver, NULL)) ||
        (rc = str_field(c, pool, "name", "spec.pool", 0, &o->pool_name, NULL)) ||
        (rc = int_field(c, pool, "generation", "spec.pool", &o->pool_generation, NULL)) ||
        (rc = int_field(c, pool, "resourceSliceCount", "spec.pool", &o->pool_resource_slice_count,
                        NULL)) ||
        (rc = parse_node_selection(c, spec, "spec", &o->node, &ns)) ||
        (rc = bool_field(c, spec, "perDeviceNodeSelection", "spec", &o->per_device_node_selection,
                         &set_pd)))
        return rc;
    o->driver_sym = ks__symrefs_intern(c->syms, o->driver);
    /* In the order ValidateResourceSlice reports them; the first is the message. */
    if (c->checked) {
        if (!*o->driver)
            return fail(c, "spec.driver: Required value");
        if (!*o->pool_name)
            return fail(c, "spec.pool.name: Required value");
        if (o->pool_resource_slice_count <= 0)
            return fail(c,
                        "spec.pool.resourceSliceCount: Invalid value: %lld: must be greater than "
                        "zero",
                        (long long)o->pool_resource_slice_count);
        if (o->pool_generation < 0)
            return fail(c,
                        "spec.pool.generation: Invalid value: %lld: must be greater than or "
                        "equal to zero",
                        (long long)o->pool_generation);
        if (ns.empty_name)
            return fail(c, "spec.nodeName: Invalid value: \"\": must be either unset or set to a "
                           "non-empty string");
        if (o->node.has_node_selector && o->node.nterms != 1)
            return fail(c,
                        "spec.nodeSelector.nodeSelectorTerms: Invalid value: %u terms: must have "
                        "exactly one node selector term",
                        o->node.nterms);
        if (ns.false_all)
            return fail(c, "spec.allNodes: Invalid value: false: must be either unset or set to "
                           "true");
        if (set_pd && !o->per_device_node_selection)
            return fail(c, "spec.perDeviceNodeSelection: Invalid value: false: must be either "
                           "unset or set to true");
        if (o->per_device_node_selection)
            add_name(&ns, "perDeviceNodeSelection");
        if (ns.eff == 0)
            return fail(c, "spec: Required value: exactly one of `nodeName`, `nodeSelector`, "
                           "`allNodes`, `perDeviceNodeSelection` is required");
        if (ns.eff > 1)
            return fail(c,
                        "spec: Invalid value: \"{%s}\": exactly one of `nodeName`, "
                        "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but "
                        "multiple fields are set",
                        ns.names);
        if (is_set(get(spec, "sharedCounters")) && is_set(get(spec, "devices")))
            return fail(c, "spec: Invalid value: \"\": only one of `sharedCounters` or "
                           "`devices` is allowed");
    }
    if ((rc = parse_counter_sets(c, get(spec, "sharedCounters"), "spec.sharedCounters", "name",
                                 &o->nshared_counters, &o->shared_counters)))
        return rc;
    const cJSON *devs = get(spec, "devices"), *d;
    int cnt = obj_list(c, devs, "spec.devices");
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_device *ds = pool_array(c, (size_t)cnt, sizeof(*ds));
    if (cnt && !ds)
        return KS_ENOMEM;
    cJSON_ArrayForEach(d, devs)
    {
        char p[64];
        snprintf(p, sizeof(p), "spec.devices[%u]", o->ndevices);
        if ((rc = parse_device(c, d, p, o->per_device_node_selection, &ds[o->ndevices])))
            return rc;
        for (uint32_t j = 0; c->checked && j < o->ndevices; j++)
            if (!strcmp(ds[j].name, ds[o->ndevices].name))
                return fail(c, "spec.devices[%u].name: Duplicate value: \"%s\"", o->ndevices,
                            ds[j].name);
        o->ndevices++;
    }
    o->devices = ds;
    return 0;
}

/* ---- DeviceClass --------------------------------------------------------------------------- */

static int parse_selectors(pctx *c, const cJSON *arr, const char *path, uint32_t *n,
                           const ks_dra_selector **out)
{
    const cJSON *s;
    int cnt = obj_list(c, arr, path);
    *n = 0;
    *out = NULL;
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_selector *ss = pool_array(c, (size_t)cnt, sizeof(*ss));
    if (cnt && !ss)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(s, arr)
    {
        char p[400];
        int rc;
        snprintf(p, sizeof(p), "%s[%u].cel", path, i);
        const cJSON *cel = get(s, "cel");
        if (c->checked && !is_set(cel))
            return fail(c, "%s: Required value", p);
        if ((rc = str_field(c, cel, "expression", p, 0, &ss[i].cel_expression, NULL)))
            return rc;
        if (c->checked && !*ss[i].cel_expression)
            return fail(c, "%s.expression: Required value", p);
        i++;
    }
    *n = i;
    *out = ss;
    return 0;
}

static int parse_configs(pctx *c, const cJSON *arr, const char *path, int with_requests,
                         uint32_t *n, const ks_dra_config **out)
{
    const cJSON *s;
    int cnt = obj_list(c, arr, path);
    *n = 0;
    *out = NULL;
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_config *cs = pool_array(c, (size_t)cnt, sizeof(*cs));
    if (cnt && !cs)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(s, arr)
    {
        char p[400], rp[420];
        int rc;
        snprintf(p, sizeof(p), "%s[%u]", path, i);
        snprintf(rp, sizeof(rp), "%s.requests", p);
        memset(&cs[i], 0, sizeof(cs[i]));
        if (with_requests &&
            (rc = str_list(c, get(s, "requests"), rp, &cs[i].nrequests, &cs[i].requests)))
            return rc;
        const cJSON *op = get(s, "opaque");
        if (c->checked && !is_set(op))
            return fail(c, "%s.opaque: Required value", p);
        snprintf(rp, sizeof(rp), "%s.opaque", p);
        if ((rc = str_field(c, op, "driver", rp, 0, &cs[i].driver, NULL)))
            return rc;
        if (c->checked && !*cs[i].driver)
            return fail(c, "%s.opaque.driver: Required value", p);
        const cJSON *params = get(op, "parameters");
        cs[i].parameters = "";
        if (is_set(params)) {
            char *js = cJSON_PrintUnformatted(params);
            if (!js)
                return KS_ENOMEM;
            cs[i].parameters = pool_str(c, js);
            free(js);
            if (!cs[i].parameters)
                return KS_ENOMEM;
        }
        i++;
    }
    *n = i;
    *out = cs;
    return 0;
}

static int parse_class(pctx *c, const cJSON *obj, ks_device_class *o)
{
    const cJSON *spec = get(obj, "spec");
    int rc;
    if (is_set(spec) && !cJSON_IsObject(spec))
        return fail(c, "spec: expected an object");
    if ((rc = parse_selectors(c, get(spec, "selectors"), "spec.selectors", &o->nselectors,
                              &o->selectors)) ||
        (rc = parse_configs(c, get(spec, "config"), "spec.config", 0, &o->nconfig, &o->config)) ||
        (rc = str_field(c, spec, "extendedResourceName", "spec", 1, &o->extended_resource_name,
                        NULL)))
        return rc;
    o->creation_ns =
        ks__parse_time_ns(cJSON_GetStringValue(get(get(obj, "metadata"), "creationTimestamp")));
    return 0;
}

/* ---- ResourceClaim ------------------------------------------------------------------------- */

static int parse_exact(pctx *c, const cJSON *o, const char *path, ks_dra_exact_request *r)
{
    char p[400];
    const char *mode;
    int rc, count_set;
    if ((rc = str_field(c, o, "deviceClassName", path, 0, &r->device_class_name, NULL)) ||
        (rc = str_field(c, o, "allocationMode", path, 0, &mode, NULL)) ||
        (rc = int_field(c, o, "count", path, &r->count, &count_set)) ||
        (rc = bool_field(c, o, "adminAccess", path, &r->admin_access, &r->has_admin_access)))
        return rc;
    r->allocation_mode_text = mode;
    snprintf(p, sizeof(p), "%s.selectors", path);
    if ((rc = parse_selectors(c, get(o, "selectors"), p, &r->nselectors, &r->selectors)))
        return rc;
    snprintf(p, sizeof(p), "%s.tolerations", path);
    if ((rc = parse_tolerations(c, get(o, "tolerations"), p, &r->ntolerations, &r->tolerations)))
        return rc;
    /* SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest. */
    r->allocation_mode = !*mode || !strcmp(mode, "ExactCount") ? KS_DRA_ALLOC_EXACT_COUNT
                         : !strcmp(mode, "All")                ? KS_DRA_ALLOC_ALL
                                                               : KS_DRA_ALLOC_OTHER;
    if (r->allocation_mode == KS_DRA_ALLOC_EXACT_COUNT && r->count == 0)
        r->count = 1;
    if (c->checked) {
        if (!*r->device_class_name)
            return fail(c, "%s.deviceClassName: Required value", path);
        if (r->allocation_mode == KS_DRA_ALLOC_OTHER)
            return fail(c,
                        "%s.allocationMode: Unsupported value: \"%s\": supported values: "
                        "\"All\", \"ExactCount\"",
                        path, mode);
        if (r->allocation_mode == KS_DRA_ALLOC_ALL && r->count != 0)
            return fail(c,
                        "%s.count: Invalid value: %lld: must not be specified when "
                        "allocationMode is 'All'",
                        path, (long long)r->count);
        if (r->allocation_mode == KS_DRA_ALLOC_EXACT_COUNT && r->count <= 0)
            return fail(c, "%s.count: Invalid value: %lld: must be greater than zero", path,
                        (long long)r->count);
    }
    const cJSON *reqs = get(get(o, "capacity"), "requests"), *it;
    if (is_set(reqs)) {
        if (!cJSON_IsObject(reqs))
            return fail(c, "%s.capacity.requests: expected a map of quantities", path);
        int cnt = cJSON_GetArraySize(reqs);
        ks_dra_qname *names = pool_array(c, (size_t)cnt, sizeof(*names));
        ks_dra_quantity *qs = pool_array(c, (size_t)cnt, sizeof(*qs));
        if (cnt && (!names || !qs))
            return KS_ENOMEM;
        /* Sorted by name: collect pairs, sort the names, then look the quantities up. */
        uint32_t i = 0;
        cJSON_ArrayForEach(it, reqs)
        {
            if ((rc = qname(c, it->string, &names[i++])))
                return rc;
        }
        if (i > 1)
            qsort(names, i, sizeof(*names), cmp_qname);
        for (uint32_t j = 0; j < i; j++) {
            snprintf(p, sizeof(p), "%s.capacity.requests[%s]", path, names[j].name);
            if ((rc = quantity(c, get(reqs, names[j].name), p, &qs[j])))
                return rc;
            if (c->checked && qs[j].milli < 0)
                return fail(c, "%s: Invalid value: \"%s\": must be greater than or equal to 0", p,
                            qs[j].text);
        }
        r->ncapacity_requests = i;
        r->capacity_request_names = names;
        r->capacity_requests = qs;
    }
    return 0;
}

static int parse_requests(pctx *c, const cJSON *arr, ks_resource_claim *o)
{
    const char *path = "spec.devices.requests";
    const cJSON *r;
    int cnt = obj_list(c, arr, path);
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_request *rs = pool_array(c, (size_t)cnt, sizeof(*rs));
    if (cnt && !rs)
        return KS_ENOMEM;
    cJSON_ArrayForEach(r, arr)
    {
        char p[64], sp[128];
        int rc;
        uint32_t i = o->nrequests;
        ks_dra_request *x = &rs[i];
        memset(x, 0, sizeof(*x));
        snprintf(p, sizeof(p), "%s[%u]", path, i);
        if ((rc = str_field(c, r, "name", p, 0, &x->name, NULL)))
            return rc;
        if (c->checked && !*x->name)
            return fail(c, "%s.name: Required value", p);
        for (uint32_t j = 0; c->checked && j < i; j++)
            if (!strcmp(rs[j].name, x->name))
                return fail(c, "%s.name: Duplicate value: \"%s\"", p, x->name);
        const cJSON *ex = get(r, "exactly"), *fa = get(r, "firstAvailable"), *s;
        if (c->checked && !is_set(ex) && cJSON_GetArraySize(fa) == 0)
            return fail(c,
                        "%s: Required value: exactly one of `exactly` or `firstAvailable` is "
                        "required",
                        p);
        if (c->checked && is_set(ex) && is_set(fa))
            return fail(c,
                        "%s: Invalid value: null: exactly one of `exactly` or `firstAvailable` "
                        "is required, but multiple fields are set",
                        p);
        if (is_set(ex)) {
            snprintf(sp, sizeof(sp), "%s.exactly", p);
            if (!cJSON_IsObject(ex))
                return fail(c, "%s: expected an object", sp);
            x->has_exactly = 1;
            x->exactly.name = x->name;
            if ((rc = parse_exact(c, ex, sp, &x->exactly)))
                return rc;
        }
        snprintf(sp, sizeof(sp), "%s.firstAvailable", p);
        int nsub = obj_list(c, fa, sp);
        if (nsub < 0)
            return KS_EPARSE;
        ks_dra_exact_request *subs = pool_array(c, (size_t)nsub, sizeof(*subs));
        if (nsub && !subs)
            return KS_ENOMEM;
        cJSON_ArrayForEach(s, fa)
        {
            uint32_t k = x->nfirst_available;
            memset(&subs[k], 0, sizeof(subs[k]));
            snprintf(sp, sizeof(sp), "%s.firstAvailable[%u]", p, k);
            if ((rc = str_field(c, s, "name", sp, 0, &subs[k].name, NULL)))
                return rc;
            if (c->checked && !*subs[k].name)
                return fail(c, "%s.name: Required value", sp);
            for (uint32_t j = 0; c->checked && j < k; j++)
                if (!strcmp(subs[j].name, subs[k].name))
                    return fail(c, "%s.name: Duplicate value: \"%s\"", sp, subs[k].name);
            if ((rc = parse_exact(c, s, sp, &subs[k])))
                return rc;
            x->nfirst_available++;
        }
        x->first_available = subs;
        o->nrequests++;
    }
    o->requests = rs;
    if (c->checked && !o->nrequests && is_set(arr))
        return fail(c, "%s: Required value", path);
    return 0;
}

/* Whether name is "request" or "request/subrequest" of the claim (validateRequestNameRef). */
static int request_ref_ok(const ks_resource_claim *o, const char *name)
{
    const char *slash = strchr(name, '/');
    size_t len = slash ? (size_t)(slash - name) : strlen(name);
    for (uint32_t i = 0; i < o->nrequests; i++) {
        const ks_dra_request *r = &o->requests[i];
        if (strlen(r->name) != len || strncmp(r->name, name, len))
            continue;
        if (!slash)
            return 1;
        for (uint32_t j = 0; j < r->nfirst_available; j++)
            if (!strcmp(r->first_available[j].name, slash + 1))
                return 1;
        return 0;
    }
    return 0;
}

static int parse_constraints(pctx *c, const cJSON *arr, ks_resource_claim *o)
{
    const char *path = "spec.devices.constraints";
    const cJSON *x;
    int cnt = obj_list(c, arr, path);
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_constraint *cs = pool_array(c, (size_t)cnt, sizeof(*cs));
    if (cnt && !cs)
        return KS_ENOMEM;
    cJSON_ArrayForEach(x, arr)
    {
        char p[64], rp[80];
        int rc;
        uint32_t i = o->nconstraints;
        snprintf(p, sizeof(p), "%s[%u]", path, i);
        snprintf(rp, sizeof(rp), "%s.requests", p);
        if ((rc = str_list(c, get(x, "requests"), rp, &cs[i].nrequests, &cs[i].requests)) ||
            (rc = str_field(c, x, "matchAttribute", p, 1, &cs[i].match_attribute, NULL)) ||
            (rc = str_field(c, x, "distinctAttribute", p, 1, &cs[i].distinct_attribute, NULL)))
            return rc;
        if (c->checked) {
            if (cs[i].match_attribute && cs[i].distinct_attribute)
                return fail(c,
                            "%s: Required value: exactly one of \"matchAttribute\" or "
                            "\"distinctAttribute\" is required, but multiple fields are set",
                            p);
            if (!cs[i].match_attribute && !cs[i].distinct_attribute)
                return fail(c, "%s.matchAttribute: Required value", p);
            for (uint32_t j = 0; j < cs[i].nrequests; j++)
                if (!request_ref_ok(o, cs[i].requests[j]))
                    return fail(c,
                                "%s[%u]: Invalid value: \"%s\": must be the name of a request in "
                                "the claim or the name of a request and a subrequest separated "
                                "by '/'",
                                rp, j, cs[i].requests[j]);
        }
        o->nconstraints++;
    }
    o->constraints = cs;
    return 0;
}

static int parse_results(pctx *c, const cJSON *arr, const char *path, ks_resource_claim *o)
{
    const cJSON *x;
    int cnt = obj_list(c, arr, path);
    if (cnt < 0)
        return KS_EPARSE;
    ks_dra_result *rs = pool_array(c, (size_t)cnt, sizeof(*rs));
    if (cnt && !rs)
        return KS_ENOMEM;
    cJSON_ArrayForEach(x, arr)
    {
        char p[128], sp[160];
        int rc;
        uint32_t i = o->nresults;
        ks_dra_result *r = &rs[i];
        memset(r, 0, sizeof(*r));
        snprintf(p, sizeof(p), "%s[%u]", path, i);
        if ((rc = str_field(c, x, "request", p, 0, &r->request, NULL)) ||
            (rc = str_field(c, x, "driver", p, 0, &r->driver, NULL)) ||
            (rc = str_field(c, x, "pool", p, 0, &r->pool, NULL)) ||
            (rc = str_field(c, x, "device", p, 0, &r->device, NULL)) ||
            (rc = str_field(c, x, "shareID", p, 1, &r->share_id, NULL)) ||
            (rc = bool_field(c, x, "adminAccess", p, &r->admin_access, NULL)))
            return rc;
        snprintf(sp, sizeof(sp), "%s.bindingConditions", p);
        if ((rc = str_list(c, get(x, "bindingConditions"), sp, &r->nbinding_conditions,
                           &r->binding_conditions)))
            return rc;
        snprintf(sp, sizeof(sp), "%s.bindingFailureConditions", p);
        if ((rc = str_list(c, get(x, "bindingFailureConditions"), sp,
                           &r->nbinding_failure_conditions, &r->binding_failure_conditions)))
            return rc;
        if (c->checked) {
            static const char *const req[] = {"request", "driver", "pool", "device"};
            const char *vals[] = {r->request, r->driver, r->pool, r->device};
            for (int k = 0; k < 4; k++)
                if (!*vals[k])
                    return fail(c, "%s.%s: Required value", p, req[k]);
        }
        const cJSON *cc = get(x, "consumedCapacity"), *it;
        if (is_set(cc)) {
            if (!cJSON_IsObject(cc))
                return fail(c, "%s.consumedCapacity: expected a map of quantities", p);
            int n = cJSON_GetArraySize(cc);
            ks_dra_qname *names = pool_array(c, (size_t)n, sizeof(*names));
            ks_dra_quantity *qs = pool_array(c, (size_t)n, sizeof(*qs));
            if (n && (!names || !qs))
                return KS_ENOMEM;
            uint32_t k = 0;
            cJSON_ArrayForEach(it, cc)
            {
                if ((rc = qname(c, it->string, &names[k++])))
                    return rc;
            }
            if (k > 1)
                qsort(names, k, sizeof(*names), cmp_qname);
            for (uint32_t j = 0; j < k; j++) {
                snprintf(sp, sizeof(sp), "%s.consumedCapacity[%s]", p, names[j].name);
                if ((rc = quantity(c, get(cc, names[j].name), sp, &qs[j])))
                    return rc;
            }
            r->nconsumed_capacity = k;
            r->consumed_capacity_names = names;
            r->consumed_capacity = qs;
        }
        o->nresults++;
    }
    o->results = rs;
    return 0;
}

/* The SDK's view of a parsed claim (ks_resource_claim_view): the controller owner, the request
 * classes PreFilter checks, the reserved uids. The header (uid, key, json) is set by the caller
 * before, as ks__draobj_from_json fills it first. */
static int claim_view(pctx *c, const cJSON *meta, ks_resource_claim *o)
{
    ks_resource_claim_view *v = &o->view;
    const cJSON *ref;
    v->size = sizeof(*v);
    v->deleting = o->deletion_requested;
    v->allocated = o->allocated;
    o->extended_resource_claim =
        cJSON_IsString(
            get(get(meta, "annotations"), "resource.kubernetes.io/extended-resource-claim")) &&
        strcmp(get(get(meta, "annotations"), "resource.kubernetes.io/extended-resource-claim")
                   ->valuestring,
               "true") == 0;
    cJSON_ArrayForEach(ref, get(meta, "ownerReferences"))
    {
        const cJSON *uid = get(ref, "uid");
        if (cJSON_IsTrue(get(ref, "controller")) && cJSON_IsString(uid)) {
            char *u = pool_array(c, strlen(uid->valuestring) + 1, 1);
            if (!u)
                return KS_ENOMEM;
            memcpy(u, uid->valuestring, strlen(uid->valuestring) + 1);
            v->controller_uid = u;
            const cJSON *nm = get(ref, "name");
            if (cJSON_IsString(nm)) {
                char *cn = pool_array(c, strlen(nm->valuestring) + 1, 1);
                if (!cn)
                    return KS_ENOMEM;
                memcpy(cn, nm->valuestring, strlen(nm->valuestring) + 1);
                o->controller_name = cn;
            }
            break;
        }
    }
    const char **uids = pool_array(c, o->nreserved_for ? o->nreserved_for : 1, sizeof(char *));
    ks_dra_request_view *rv = pool_array(c, o->nrequests ? o->nrequests : 1, sizeof(*rv));
    if (!uids || !rv)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < o->nreserved_for; i++)
        uids[i] = o->reserved_for[i].uid;
    v->nreserved_for = o->nreserved_for;
    v->reserved_for_uids = uids;
    for (uint32_t i = 0; i < o->nrequests; i++) {
        const ks_dra_request *r = &o->requests[i];
        rv[i].name = r->name;
        if (r->has_exactly) {
            rv[i].device_class_name = r->exactly.device_class_name;
            continue;
        }
        uint32_t n = r->nfirst_available;
        const char **names = pool_array(c, n ? n : 1, sizeof(char *));
        const char **classes = pool_array(c, n ? n : 1, sizeof(char *));
        if (!names || !classes)
            return KS_ENOMEM;
        for (uint32_t k = 0; k < n; k++) {
            names[k] = r->first_available[k].name;
            classes[k] = r->first_available[k].device_class_name;
        }
        rv[i].nsubrequests = n;
        rv[i].subrequest_names = names;
        rv[i].subrequest_classes = classes;
    }
    v->nrequests = o->nrequests;
    v->requests = rv;
    v->nalloc_terms = o->nalloc_terms;
    v->alloc_terms = o->alloc_terms;
    return 0;
}

/* status.devices' entry for an allocated device (upstream getAllocatedDeviceStatus: the same
 * driver, pool and device), NULL when none. */
static const cJSON *device_status(const cJSON *status, const ks_dra_result *r)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, get(status, "devices"))
    {
        const char *drv = cJSON_GetStringValue(get(d, "driver"));
        const char *pl = cJSON_GetStringValue(get(d, "pool"));
        const char *dev = cJSON_GetStringValue(get(d, "device"));
        if (drv && pl && dev && !strcmp(drv, r->driver) && !strcmp(pl, r->pool) &&
            !strcmp(dev, r->device))
            return d;
    }
    return NULL;
}

/* The allocated devices with binding conditions, and the conditions status.devices reports for
 * them (the view's ABI 1.11 part); allocationTimestamp in Unix seconds. */
static int binding_devices(pctx *c, const cJSON *status, ks_resource_claim *o)
{
    ks_resource_claim_view *v = &o->view;
    int64_t ns = *o->allocation_timestamp ? ks__parse_time_ns(o->allocation_timestamp) : 0;
    v->allocation_unix = ns > 0 ? ns / 1000000000 : 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < o->nresults; i++)
        n += o->results[i].nbinding_conditions > 0;
    if (!n)
        return 0;
    ks_dra_binding_device *bd = pool_array(c, n, sizeof(*bd));
    if (!bd)
        return KS_ENOMEM;
    memset(bd, 0, n * sizeof(*bd));
    for (uint32_t i = 0, k = 0; i < o->nresults; i++) {
        const ks_dra_result *r = &o->results[i];
        if (!r->nbinding_conditions)
            continue;
        ks_dra_binding_device *b = &bd[k++];
        b->driver = r->driver, b->pool = r->pool, b->device = r->device;
        b->nconditions = r->nbinding_conditions;
        b->conditions = r->binding_conditions;
        b->nfailure_conditions = r->nbinding_failure_conditions;
        b->failure_conditions = r->binding_failure_conditions;
        const cJSON *ds = device_status(status, r), *cond;
        b->has_status = ds != NULL;
        int nc = cJSON_GetArraySize(get(ds, "conditions"));
        ks_dra_device_condition *dc = nc > 0 ? pool_array(c, (size_t)nc, sizeof(*dc)) : NULL;
        if (nc > 0 && !dc)
            return KS_ENOMEM;
        cJSON_ArrayForEach(cond, get(ds, "conditions"))
        {
            ks_dra_device_condition *x = &dc[b->nstatus_conditions];
            int rc;
            if ((rc = str_field(c, cond, "type", "status.devices[].conditions[]", 0, &x->type,
                                NULL)) ||
                (rc = str_field(c, cond, "status", "status.devices[].conditions[]", 0, &x->status,
                                NULL)) ||
                (rc = str_field(c, cond, "reason", "status.devices[].conditions[]", 0, &x->reason,
                                NULL)) ||
                (rc = str_field(c, cond, "message", "status.devices[].conditions[]", 0, &x->message,
                                NULL)))
                return rc;
            b->nstatus_conditions++;
        }
        b->status_conditions = dc;
    }
    v->nbinding_devices = n;
    v->binding_devices = bd;
    return 0;
}

static int parse_claim(pctx *c, const cJSON *obj, ks_resource_claim *o)
{
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec");
    const cJSON *devs = get(spec, "devices"), *status = get(obj, "status");
    int rc;
    if (is_set(spec) && !cJSON_IsObject(spec))
        return fail(c, "spec: expected an object");
    if (is_set(devs) && !cJSON_IsObject(devs))
        return fail(c, "spec.devices: expected an object");
    if (is_set(status) && !cJSON_IsObject(status))
        return fail(c, "status: expected an object");
    o->deletion_requested = is_set(get(meta, "deletionTimestamp"));
    if ((rc = str_list(c, get(meta, "finalizers"), "metadata.finalizers", &o->nfinalizers,
                       &o->finalizers)) ||
        (rc = parse_requests(c, get(devs, "requests"), o)) ||
        (rc = parse_constraints(c, get(devs, "constraints"), o)) ||
        (rc = parse_configs(c, get(devs, "config"), "spec.devices.config", 1, &o->nconfig,
                            &o->config)))
        return rc;
    for (uint32_t i = 0; c->checked && i < o->nconfig; i++)
        for (uint32_t j = 0; j < o->config[i].nrequests; j++)
            if (!request_ref_ok(o, o->config[i].requests[j]))
                return fail(c,
                            "spec.devices.config[%u].requests[%u]: Invalid value: \"%s\": must "
                            "be the name of a request in the claim or the name of a request and "
                            "a subrequest separated by '/'",
                            i, j, o->config[i].requests[j]);
    const cJSON *alloc = get(status, "allocation");
    if (is_set(alloc)) {
        if (!cJSON_IsObject(alloc))
            return fail(c, "status.allocation: expected an object");
        o->allocated = 1;
        const cJSON *ad = get(alloc, "devices");
        if ((rc = parse_results(c, get(ad, "results"), "status.allocation.devices.results", o)) ||
            (rc = parse_configs(c, get(ad, "config"), "status.allocation.devices.config", 1,
                                &o->nalloc_config, &o->alloc_config)) ||
            (rc = str_field(c, alloc, "allocationTimestamp", "status.allocation", 0,
                            &o->allocation_timestamp, NULL)))
            return rc;
        if (is_set(get(alloc, "nodeSelector")) &&
            (rc = parse_node_selector(c, get(alloc, "nodeSelector"),
                                      "status.allocation.nodeSelector", &o->nalloc_terms,
                                      &o->alloc_terms)))
            return rc;
    } else {
        o->allocation_timestamp = "";
    }
    const cJSON *rf = get(status, "reservedFor"), *x;
    int cnt = obj_list(c, rf, "status.reservedFor");
    if (cnt < 0)
        return KS_EPARSE;
    if (c->checked && cnt && !o->allocated)
        return fail(c, "status.reservedFor: Forbidden: may not be specified when `allocated` is "
                       "not set");
    ks_dra_consumer *cs = pool_array(c, (size_t)cnt, sizeof(*cs));
    if (cnt && !cs)
        return KS_ENOMEM;
    cJSON_ArrayForEach(x, rf)
    {
        char p[64];
        uint32_t i = o->nreserved_for;
        snprintf(p, sizeof(p), "status.reservedFor[%u]", i);
        if ((rc = str_field(c, x, "apiGroup", p, 0, &cs[i].api_group, NULL)) ||
            (rc = str_field(c, x, "resource", p, 0, &cs[i].resource, NULL)) ||
            (rc = str_field(c, x, "name", p, 0, &cs[i].name, NULL)) ||
            (rc = str_field(c, x, "uid", p, 0, &cs[i].uid, NULL)))
            return rc;
        if (c->checked) {
            if (!*cs[i].resource)
                return fail(c, "%s.resource: Required value", p);
            if (!*cs[i].name)
                return fail(c, "%s.name: Required value", p);
            if (!*cs[i].uid)
                return fail(c, "%s.uid: Required value", p);
            for (uint32_t j = 0; j < i; j++)
                if (!strcmp(cs[j].uid, cs[i].uid))
                    return fail(c, "%s.uid: Duplicate value: \"%s\"", p, cs[i].uid);
        }
        o->nreserved_for++;
    }
    o->reserved_for = cs;
    if ((rc = binding_devices(c, status, o)))
        return rc;
    return claim_view(c, meta, o);
}

/* ---- DeviceTaintRule ----------------------------------------------------------------------- */

static int parse_taint_rule(pctx *c, const cJSON *obj, ks_device_taint_rule *o)
{
    const cJSON *spec = get(obj, "spec"), *sel = get(spec, "deviceSelector");
    int rc;
    if (is_set(spec) && !cJSON_IsObject(spec))
        return fail(c, "spec: expected an object");
    if ((rc = str_field(c, sel, "driver", "spec.deviceSelector", 1, &o->driver, NULL)) ||
        (rc = str_field(c, sel, "pool", "spec.deviceSelector", 1, &o->pool, NULL)) ||
        (rc = str_field(c, sel, "device", "spec.deviceSelector", 1, &o->device, NULL)))
        return rc;
    o->has_device_selector = is_set(sel);
    const cJSON *t = get(spec, "taint");
    if (is_set(t) && !cJSON_IsObject(t))
        return fail(c, "spec.taint: expected an object");
    return parse_taint(c, t, "spec.taint", &o->taint);
}

/* ---- objects ------------------------------------------------------------------------------- */

static const size_t kind_size[KS_DK_COUNT] = {sizeof(ks_resource_slice), sizeof(ks_device_class),
                                              sizeof(ks_resource_claim),
                                              sizeof(ks_device_taint_rule)};

static void draobj_free(ks__draobj *o)
{
    if (o->kind == KS_DK_RESOURCE_SLICE)
        free(atomic_load(&((ks_resource_slice *)o)->selector_memo));
    ks__symrefs_release(&o->syms);
    ks__mempool_free(&o->pool);
    free(o->json);
    free(o);
}

static int from_json(const cJSON *obj, int checked, ks__draobj **out, char *err, size_t errlen)
{
    const cJSON *kindv = get(obj, "kind"), *meta = get(obj, "metadata");
    int k = ks__draobj_kind(cJSON_IsString(kindv) ? kindv->valuestring : NULL);
    *out = NULL;
    if (k < 0)
        return KS_EINVAL;
    ks__draobj *o = calloc(1, kind_size[k]);
    if (!o)
        return KS_ENOMEM;
    atomic_init(&o->refs, 1);
    o->kind = (ks_dra_kind)k;
    pctx c = {err, errlen, &o->pool, &o->syms, checked};
    const char *name, *ns = "", *uid, *rv;
    int rc, nsd = ks__draobj_namespaced(o->kind);
    if (is_set(meta) && !cJSON_IsObject(meta)) {
        rc = fail(&c, "metadata: expected an object");
        goto out;
    }
    if ((rc = str_field(&c, meta, "name", "metadata", 0, &name, NULL)) ||
        (nsd && (rc = str_field(&c, meta, "namespace", "metadata", 0, &ns, NULL))) ||
        (rc = str_field(&c, meta, "uid", "metadata", 0, &uid, NULL)) ||
        (rc = str_field(&c, meta, "resourceVersion", "metadata", 0, &rv, NULL)))
        goto out;
    if (!*name) {
        rc = fail(&c, "metadata.name: required for a %s", kind_names[k]);
        goto out;
    }
    if (nsd && !*ns)
        ns = "default";
    char key[600];
    snprintf(key, sizeof(key), "%s%s%s", nsd ? ns : "", nsd ? "/" : "", name);
    o->name = ks__symrefs_intern(&o->syms, name);
    o->ns = nsd ? ks__symrefs_intern(&o->syms, ns) : KS_SYM_EMPTY;
    o->uid = (char *)uid;
    o->resource_version = (char *)rv;
    if (!(o->key = pool_str(&c, key))) {
        rc = KS_ENOMEM;
        goto out;
    }
    switch (o->kind) {
    case KS_DK_RESOURCE_SLICE:
        rc = parse_slice(&c, obj, (ks_resource_slice *)o);
        break;
    case KS_DK_DEVICE_CLASS:
        rc = parse_class(&c, obj, (ks_device_class *)o);
        break;
    case KS_DK_RESOURCE_CLAIM:
        rc = parse_claim(&c, obj, (ks_resource_claim *)o);
        break;
    default:
        rc = parse_taint_rule(&c, obj, (ks_device_taint_rule *)o);
        break;
    }
    if (rc)
        goto out;
    if (!(o->json = cJSON_PrintUnformatted(obj))) {
        rc = KS_ENOMEM;
        goto out;
    }
    if (o->kind == KS_DK_RESOURCE_CLAIM) {
        ks_resource_claim_view *v = &((ks_resource_claim *)o)->view;
        v->ns = o->ns;
        v->name = o->name;
        v->uid = *o->uid ? o->uid : o->key;
        v->json = o->json;
    }
    *out = o;
    return 0;
out:
    if (rc == KS_ENOMEM)
        snprintf(err, errlen, "out of memory parsing a %s", kind_names[k]);
    draobj_free(o);
    return rc;
}

int ks__draobj_from_json(const cJSON *obj, ks__draobj **out, char *err, size_t errlen)
{
    return from_json(obj, 0, out, err, errlen);
}

int ks__draobj_from_json_checked(const cJSON *obj, ks__draobj **out, char *err, size_t errlen)
{
    return from_json(obj, 1, out, err, errlen);
}

ks__draobj *ks__draobj_ref(ks__draobj *o)
{
    if (o)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
    return o;
}

void ks__draobj_unref(ks__draobj *o)
{
    if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1)
        draobj_free(o);
}

const ks_resource_slice *ks__dra_slice(const ks__draobj *o)
{
    return o && o->kind == KS_DK_RESOURCE_SLICE ? (const ks_resource_slice *)o : NULL;
}

const ks_device_class *ks__dra_class(const ks__draobj *o)
{
    return o && o->kind == KS_DK_DEVICE_CLASS ? (const ks_device_class *)o : NULL;
}

const ks_resource_claim *ks__dra_claim(const ks__draobj *o)
{
    return o && o->kind == KS_DK_RESOURCE_CLAIM ? (const ks_resource_claim *)o : NULL;
}

const ks_device_taint_rule *ks__dra_taint_rule(const ks__draobj *o)
{
    return o && o->kind == KS_DK_DEVICE_TAINT_RULE ? (const ks_device_taint_rule *)o : NULL;
}

/* Binary search over an array whose elements start with a ks_dra_qname. */
static const void *find_qname(const void *base, size_t n, size_t size, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ks_dra_qname *q = (const ks_dra_qname *)((const char *)base + mid * size);
        int cmp = strcmp(name, q->name);
        if (!cmp)
            return q;
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const ks_dra_attribute *ks__dra_device_attribute(const ks_dra_device *d, const char *qname_)
{
    return find_qname(d->attributes, d->nattributes, sizeof(ks_dra_attribute), qname_);
}

const ks_dra_capacity *ks__dra_device_capacity(const ks_dra_device *d, const char *qname_)
{
    return find_qname(d->capacity, d->ncapacity, sizeof(ks_dra_capacity), qname_);
}

const ks_dra_request *ks__dra_claim_request(const ks_resource_claim *c, const char *name)
{
    for (uint32_t i = 0; i < c->nrequests; i++)
        if (!strcmp(c->requests[i].name, name))
            return &c->requests[i];
    return NULL;
}

int ks__dra_claim_reserved_for(const ks_resource_claim *c, const char *uid)
{
    for (uint32_t i = 0; i < c->nreserved_for; i++)
        if (!strcmp(c->reserved_for[i].uid, uid))
            return 1;
    return 0;
}
