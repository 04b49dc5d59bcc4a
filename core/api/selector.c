/* Selector, pod affinity and topology spread parsing; see selector.h. */
#include "api/selector.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* Writes an error message; KS_EPARSE. Value errors use the API server's wording (field.ErrorList:
 * "PATH: Invalid value: V: DETAIL", "Unsupported value", "Required value", "Forbidden"), so that
 * an object the API server would refuse is refused here with the same words. */
static KS_PRINTF(3, 4) int sfail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return KS_EPARSE;
}

/* An int32 field (weight, maxSkew, minDomains): *set 0 when absent or null. A value that is not an
 * integer within int32 is refused (the API server's decoder refuses it; converting it here would
 * be undefined or would truncate it to a different, maybe valid, value). */
static int get_int32(const cJSON *obj, const char *key, const char *path, int32_t *out, int *set,
                     char *err, size_t errlen)
{
    const cJSON *v = get(obj, key);
    *out = 0;
    *set = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    /* Range first: converting an out-of-range double is undefined. */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX) ||
        v->valuedouble != (double)(int32_t)v->valuedouble) {
        char buf[64];
        const char *text = cJSON_IsString(v) ? v->valuestring : NULL;
        if (!text && cJSON_IsNumber(v)) {
            snprintf(buf, sizeof(buf), "%.17g", v->valuedouble);
            text = buf;
        }
        return sfail(err, errlen, "%s.%s: expected a 32-bit integer, got %s%s%s", path, key,
                     cJSON_IsString(v) ? "\"" : "", text ? text : "a non-number",
                     cJSON_IsString(v) ? "\"" : "");
    }
    *out = (int32_t)v->valuedouble;
    *set = 1;
    return 0;
}

static int cmp_label(const void *a, const void *b)
{
    const ks_label *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static const char *scalar_text(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsNumber(v)) {
        snprintf(buf, len, "%.17g", v->valuedouble);
        return buf;
    }
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "true" : "false";
    return NULL;
}

static int parse_labels(const cJSON *obj, const char *path, ks_mempool *pool, ks__symrefs *refs,
                        const ks_label **out, uint32_t *n, char *err, size_t errlen)
{
    const cJSON *it;
    int count = cJSON_IsObject(obj) ? cJSON_GetArraySize(obj) : 0;
    *out = NULL;
    *n = 0;
    if (!count)
        return 0;
    ks_label *labels = ks__mempool_alloc(pool, (size_t)count * sizeof(ks_label));
    if (!labels)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, obj)
    {
        char buf[64];
        const char *v = scalar_text(it, buf, sizeof(buf));
        if (!v) {
            snprintf(err, errlen, "%s.%s: expected a string value", path, it->string);
            return KS_EPARSE;
        }
        labels[*n].key = ks__symrefs_intern(refs, it->string);
        labels[*n].value = ks__symrefs_intern(refs, v);
        (*n)++;
    }
    qsort(labels, *n, sizeof(ks_label), cmp_label);
    *out = labels;
    return 0;
}

static int parse_syms(const cJSON *arr, ks_mempool *pool, ks__symrefs *refs, const ks_sym **out,
                      uint32_t *n)
{
    const cJSON *it;
    int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    *out = NULL;
    *n = 0;
    if (!count)
        return 0;
    ks_sym *syms = ks__mempool_alloc(pool, (size_t)count * sizeof(ks_sym));
    if (!syms)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        char buf[64];
        const char *v = scalar_text(it, buf, sizeof(buf));
        if (v)
            syms[(*n)++] = ks__symrefs_intern(refs, v);
    }
    *out = syms;
    return 0;
}

/* upstream ValidateLabelSelectorRequirement's value count: In and NotIn need values (without, In
 * matches nothing and NotIn everything), Exists and DoesNotExist take none. */
static int check_selector_values(ks_selector_op op, const cJSON *values, const char *path,
                                 char *err, size_t errlen)
{
    int n = cJSON_IsArray(values) ? cJSON_GetArraySize(values) : 0;
    if ((op == KS_OP_IN || op == KS_OP_NOT_IN) && n == 0)
        return sfail(err, errlen,
                     "%s.values: Required value: must be specified when `operator` is 'In' or "
                     "'NotIn'",
                     path);
    if ((op == KS_OP_EXISTS || op == KS_OP_DOES_NOT_EXIST) && n > 0)
        return sfail(err, errlen,
                     "%s.values: Forbidden: may not be specified when `operator` is 'Exists' or "
                     "'DoesNotExist'",
                     path);
    return 0;
}

/* A requirement's key is a label name and so not empty (upstream ValidateLabelName; the rest of
 * its syntax is not checked here: a malformed key only fails to match). */
static int check_label_key(ks_sym key, const char *path, char *err, size_t errlen)
{
    if (key != KS_SYM_EMPTY)
        return 0;
    return sfail(err, errlen, "%s.key: Invalid value: \"\": name part must be non-empty", path);
}

/* A LabelSelector; checked: the API server's value rules too (selector.h). */
static int parse_label_selector(const cJSON *obj, const char *path, int checked, ks_mempool *pool,
                                ks__symrefs *refs, ks_label_selector *out, char *err, size_t errlen)
{
    char p[256];
    const cJSON *exprs, *it;
    int rc;
    memset(out, 0, sizeof(*out));
    if (!obj || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj)) {
        snprintf(err, errlen, "%s: expected a label selector object", path);
        return KS_EPARSE;
    }
    out->present = 1;
    snprintf(p, sizeof(p), "%s.matchLabels", path);
    if ((rc = parse_labels(get(obj, "matchLabels"), p, pool, refs, &out->match_labels,
                           &out->nmatch_labels, err, errlen)))
        return rc;
    exprs = get(obj, "matchExpressions");
    int count = cJSON_IsArray(exprs) ? cJSON_GetArraySize(exprs) : 0;
    if (!count)
        return 0;
    ks_selector_req *reqs = ks__mempool_alloc(pool, (size_t)count * sizeof(*reqs));
    if (!reqs)
        return KS_ENOMEM;
    uint32_t i = 0;
    cJSON_ArrayForEach(it, exprs)
    {
        const cJSON *op = get(it, "operator");
        const char *ops = cJSON_IsString(op) ? op->valuestring : "";
        ks_selector_req *r = &reqs[i];
        const cJSON *key = get(it, "key");
        char ep[300];
        snprintf(ep, sizeof(ep), "%s.matchExpressions[%u]", path, i);
        r->key = ks__symrefs_intern(refs, cJSON_IsString(key) ? key->valuestring : "");
        if (!strcmp(ops, "In"))
            r->op = KS_OP_IN;
        else if (!strcmp(ops, "NotIn"))
            r->op = KS_OP_NOT_IN;
        else if (!strcmp(ops, "Exists"))
            r->op = KS_OP_EXISTS;
        else if (!strcmp(ops, "DoesNotExist"))
            r->op = KS_OP_DOES_NOT_EXIST;
        else
            return sfail(err, errlen,
                         "%s.operator: Invalid value: \"%s\": not a valid selector operator", ep,
                         ops);
        if (checked && ((rc = check_selector_values(r->op, get(it, "values"), ep, err, errlen)) ||
                        (rc = check_label_key(r->key, ep, err, errlen))))
            return rc;
        if ((rc = parse_syms(get(it, "values"), pool, refs, &r->values, &r->nvalues)))
            return rc;
        i++;
    }
    out->nexprs = i;
    out->exprs = reqs;
    return 0;
}

int ks__parse_label_selector(const cJSON *obj, const char *path, ks_mempool *pool,
                             ks__symrefs *refs, ks_label_selector *out, char *err, size_t errlen)
{
    return parse_label_selector(obj, path, 0, pool, refs, out, err, errlen);
}

int ks__parse_map_selector(const cJSON *obj, const char *path, ks_mempool *pool, ks__symrefs *refs,
                           ks_label_selector *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(obj) || cJSON_GetArraySize(obj) == 0)
        return 0;
    out->present = 1;
    return parse_labels(obj, path, pool, refs, &out->match_labels, &out->nmatch_labels, err,
                        errlen);
}

static int parse_term(const cJSON *t, const char *path, int checked, ks_mempool *pool,
                      ks__symrefs *refs, ks_pod_affinity_term *term, char *err, size_t errlen)
{
    char p[300];
    int rc;
    const cJSON *tk = get(t, "topologyKey");
    snprintf(p, sizeof(p), "%s.labelSelector", path);
    if ((rc = parse_label_selector(get(t, "labelSelector"), p, checked, pool, refs, &term->selector,
                                   err, errlen)))
        return rc;
    snprintf(p, sizeof(p), "%s.namespaceSelector", path);
    if ((rc = parse_label_selector(get(t, "namespaceSelector"), p, checked, pool, refs,
                                   &term->namespace_selector, err, errlen)))
        return rc;
    if ((rc =
             parse_syms(get(t, "namespaces"), pool, refs, &term->namespaces, &term->nnamespaces)) ||
        (rc = parse_syms(get(t, "matchLabelKeys"), pool, refs, &term->match_label_keys,
                         &term->nmatch_label_keys)) ||
        (rc = parse_syms(get(t, "mismatchLabelKeys"), pool, refs, &term->mismatch_label_keys,
                         &term->nmismatch_label_keys)))
        return rc;
    term->topology_key = ks__symrefs_intern(refs, cJSON_IsString(tk) ? tk->valuestring : "");
    /* Without a key every node would be one domain of its own name "": required upstream. */
    if (checked && term->topology_key == KS_SYM_EMPTY)
        return sfail(err, errlen, "%s.topologyKey: Required value: can not be empty", path);
    return 0;
}

static int parse_terms(const cJSON *arr, const char *path, int checked, ks_mempool *pool,
                       ks__symrefs *refs, const ks_pod_affinity_term **out, uint32_t *n, char *err,
                       size_t errlen)
{
    const cJSON *it;
    int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0, rc;
    *out = NULL;
    *n = 0;
    if (!count)
        return 0;
    ks_pod_affinity_term *terms = ks__mempool_alloc(pool, (size_t)count * sizeof(*terms));
    if (!terms)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        char p[256];
        snprintf(p, sizeof(p), "%s[%u]", path, *n);
        if ((rc = parse_term(it, p, checked, pool, refs, &terms[*n], err, errlen)))
            return rc;
        (*n)++;
    }
    *out = terms;
    return 0;
}

static int parse_weighted(const cJSON *arr, const char *path, int checked, ks_mempool *pool,
                          ks__symrefs *refs, const ks_weighted_pod_affinity_term **out, uint32_t *n,
                          char *err, size_t errlen)
{
    const cJSON *it;
    int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0, rc;
    *out = NULL;
    *n = 0;
    if (!count)
        return 0;
    ks_weighted_pod_affinity_term *terms = ks__mempool_alloc(pool, (size_t)count * sizeof(*terms));
    if (!terms)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        char p[256];
        int set;
        snprintf(p, sizeof(p), "%s[%u]", path, *n);
        if ((rc = get_int32(it, "weight", p, &terms[*n].weight, &set, err, errlen)))
            return rc;
        /* A weight scales the term's score; upstream allows 1..100 (a missing one is 0). Read
         * leniently, a 0 adds nothing, as upstream's plugin scores it. */
        if (checked && (terms[*n].weight < 1 || terms[*n].weight > 100))
            return sfail(err, errlen, "%s.weight: Invalid value: %d: must be in the range 1-100", p,
                         (int)terms[*n].weight);
        snprintf(p, sizeof(p), "%s[%u].podAffinityTerm", path, *n);
        if ((rc = parse_term(get(it, "podAffinityTerm"), p, checked, pool, refs, &terms[*n].term,
                             err, errlen)))
            return rc;
        (*n)++;
    }
    *out = terms;
    return 0;
}

int ks__parse_pod_affinity(const cJSON *affinity, int checked, ks_mempool *pool, ks__symrefs *refs,
                           ks_pod_affinity **out, char *err, size_t errlen)
{
    const cJSON *pa = get(affinity, "podAffinity"), *paa = get(affinity, "podAntiAffinity");
    int rc;
    *out = NULL;
    if (!cJSON_IsObject(pa) && !cJSON_IsObject(paa))
        return 0;
    ks_pod_affinity *a = ks__mempool_alloc(pool, sizeof(*a));
    if (!a)
        return KS_ENOMEM;
    if ((rc = parse_terms(
             get(pa, "requiredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution", checked,
             pool, refs, &a->required_affinity, &a->nrequired_affinity, err, errlen)) ||
        (rc = parse_weighted(
             get(pa, "preferredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution", checked,
             pool, refs, &a->preferred_affinity, &a->npreferred_affinity, err, errlen)) ||
        (rc = parse_terms(
             get(paa, "requiredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
             checked, pool, refs, &a->required_anti_affinity, &a->nrequired_anti_affinity, err,
             errlen)) ||
        (rc = parse_weighted(
             get(paa, "preferredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
             checked, pool, refs, &a->preferred_anti_affinity, &a->npreferred_anti_affinity, err,
             errlen)))
        return rc;
    *out = a;
    return 0;
}

/* nodeAffinityPolicy / nodeTaintsPolicy: absent or null is unset (the plugin's default applies);
 * anything but Honor or Ignore is refused when checked, as upstream does, and read as unset
 * otherwise (the plugin's default, as before validation). */
static int parse_policy(const cJSON *obj, const char *key, const char *path, int checked,
                        ks_inclusion_policy *out, char *err, size_t errlen)
{
    const cJSON *v = get(obj, key);
    char buf[64];
    const char *s = scalar_text(v, buf, sizeof(buf));
    *out = KS_POLICY_UNSET;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (s && !strcmp(s, "Honor") && cJSON_IsString(v))
        *out = KS_POLICY_HONOR;
    else if (s && !strcmp(s, "Ignore") && cJSON_IsString(v))
        *out = KS_POLICY_IGNORE;
    else if (checked)
        return sfail(err, errlen,
                     "%s.%s: Unsupported value: \"%s\": supported values: \"Honor\", \"Ignore\"",
                     path, key, s ? s : "");
    return 0;
}

/* whenUnsatisfiable has no default upstream: when checked, absent is "" and refused like any other
 * value. Read leniently, absent (or not a string) is DoNotSchedule; an unknown string is refused
 * in both modes, as there is no behaviour to give it. */
static int parse_when(const cJSON *obj, const char *path, int checked, ks_unsatisfiable_action *out,
                      char *err, size_t errlen)
{
    const cJSON *v = get(obj, "whenUnsatisfiable");
    char buf[64];
    const char *s = scalar_text(v, buf, sizeof(buf));
    if (!checked && !cJSON_IsString(v))
        *out = KS_DO_NOT_SCHEDULE;
    else if (s && cJSON_IsString(v) && !strcmp(s, "DoNotSchedule"))
        *out = KS_DO_NOT_SCHEDULE;
    else if (s && cJSON_IsString(v) && !strcmp(s, "ScheduleAnyway"))
        *out = KS_SCHEDULE_ANYWAY;
    else
        return sfail(err, errlen,
                     "%s.whenUnsatisfiable: Unsupported value: \"%s\": supported values: "
                     "\"DoNotSchedule\", \"ScheduleAnyway\"",
                     path, s ? s : "");
    return 0;
}

/* maxSkew and minDomains (upstream validateTopologySpreadConstraints): a skew of 0 or less can
 * never be met (checked only; the int32 decode in both modes); minDomains, when set, must be
 * positive and only goes with DoNotSchedule (check_min_domains, checked only). */
static int parse_spread_numbers(const cJSON *it, const char *path, int checked,
                                ks_topology_spread_constraint *c, char *err, size_t errlen)
{
    int set, rc;
    if ((rc = get_int32(it, "maxSkew", path, &c->max_skew, &set, err, errlen)))
        return rc;
    if (checked && c->max_skew <= 0)
        return sfail(err, errlen, "%s.maxSkew: Invalid value: %d: must be greater than zero", path,
                     (int)c->max_skew);
    return get_int32(it, "minDomains", path, &c->min_domains, &set, err, errlen);
}

static int check_min_domains(const cJSON *it, const char *path,
                             const ks_topology_spread_constraint *c, char *err, size_t errlen)
{
    const cJSON *md = get(it, "minDomains");
    if (!md || cJSON_IsNull(md))
        return 0;
    if (c->min_domains <= 0)
        return sfail(err, errlen, "%s.minDomains: Invalid value: %d: must be greater than zero",
                     path, (int)c->min_domains);
    if (c->when_unsatisfiable != KS_DO_NOT_SCHEDULE)
        return sfail(err, errlen,
                     "%s.minDomains: Invalid value: %d: can only use minDomains if "
                     "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
                     path, (int)c->min_domains);
    return 0;
}

int ks__parse_spread_constraints(const cJSON *arr, int checked, ks_mempool *pool, ks__symrefs *refs,
                                 ks_topology_spread_constraint **out, size_t *n, char *err,
                                 size_t errlen)
{
    const cJSON *it;
    int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0, rc;
    *out = NULL;
    *n = 0;
    if (!count)
        return 0;
    ks_topology_spread_constraint *cs = ks__mempool_alloc(pool, (size_t)count * sizeof(*cs));
    if (!cs)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        char p[128];
        ks_topology_spread_constraint *c = &cs[*n];
        const cJSON *key = get(it, "topologyKey");
        snprintf(p, sizeof(p), "spec.topologySpreadConstraints[%zu]", *n);
        /* In upstream's order, so that the first error is the one the API server names first. */
        if ((rc = parse_spread_numbers(it, p, checked, c, err, errlen)))
            return rc;
        c->topology_key = ks__symrefs_intern(refs, cJSON_IsString(key) ? key->valuestring : "");
        if (checked && c->topology_key == KS_SYM_EMPTY)
            return sfail(err, errlen, "%s.topologyKey: Required value: can not be empty", p);
        if ((rc = parse_when(it, p, checked, &c->when_unsatisfiable, err, errlen)) ||
            (checked && (rc = check_min_domains(it, p, c, err, errlen))) ||
            (rc = parse_policy(it, "nodeAffinityPolicy", p, checked, &c->node_affinity_policy, err,
                               errlen)) ||
            (rc = parse_policy(it, "nodeTaintsPolicy", p, checked, &c->node_taints_policy, err,
                               errlen)))
            return rc;
        char sp[160];
        snprintf(sp, sizeof(sp), "%s.labelSelector", p);
        if ((rc = parse_label_selector(get(it, "labelSelector"), sp, checked, pool, refs,
                                       &c->selector, err, errlen)) ||
            (rc = parse_syms(get(it, "matchLabelKeys"), pool, refs, &c->match_label_keys,
                             &c->nmatch_label_keys)))
            return rc;
        (*n)++;
    }
    *out = cs;
    return 0;
}
