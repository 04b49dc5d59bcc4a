/* Selector, pod affinity and topology spread parsing; see selector.h. */
#include "api/selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
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

int ks__parse_label_selector(const cJSON *obj, const char *path, ks_mempool *pool,
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
        r->key = ks__symrefs_intern(refs, cJSON_IsString(key) ? key->valuestring : "");
        if (!strcmp(ops, "In"))
            r->op = KS_OP_IN;
        else if (!strcmp(ops, "NotIn"))
            r->op = KS_OP_NOT_IN;
        else if (!strcmp(ops, "Exists"))
            r->op = KS_OP_EXISTS;
        else if (!strcmp(ops, "DoesNotExist"))
            r->op = KS_OP_DOES_NOT_EXIST;
        else {
            snprintf(err, errlen,
                     "%s.matchExpressions[%u].operator: \"%s\" is not a valid label selector "
                     "operator (valid: In, NotIn, Exists, DoesNotExist)",
                     path, i, ops);
            return KS_EPARSE;
        }
        if ((rc = parse_syms(get(it, "values"), pool, refs, &r->values, &r->nvalues)))
            return rc;
        i++;
    }
    out->nexprs = i;
    out->exprs = reqs;
    return 0;
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

static int parse_term(const cJSON *t, const char *path, ks_mempool *pool, ks__symrefs *refs,
                      ks_pod_affinity_term *term, char *err, size_t errlen)
{
    char p[300];
    int rc;
    const cJSON *tk = get(t, "topologyKey");
    snprintf(p, sizeof(p), "%s.labelSelector", path);
    if ((rc = ks__parse_label_selector(get(t, "labelSelector"), p, pool, refs, &term->selector, err,
                                       errlen)))
        return rc;
    snprintf(p, sizeof(p), "%s.namespaceSelector", path);
    if ((rc = ks__parse_label_selector(get(t, "namespaceSelector"), p, pool, refs,
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
    return 0;
}

static int parse_terms(const cJSON *arr, const char *path, ks_mempool *pool, ks__symrefs *refs,
                       const ks_pod_affinity_term **out, uint32_t *n, char *err, size_t errlen)
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
        if ((rc = parse_term(it, p, pool, refs, &terms[*n], err, errlen)))
            return rc;
        (*n)++;
    }
    *out = terms;
    return 0;
}

static int parse_weighted(const cJSON *arr, const char *path, ks_mempool *pool, ks__symrefs *refs,
                          const ks_weighted_pod_affinity_term **out, uint32_t *n, char *err,
                          size_t errlen)
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
        const cJSON *w = get(it, "weight");
        snprintf(p, sizeof(p), "%s[%u].podAffinityTerm", path, *n);
        terms[*n].weight = cJSON_IsNumber(w) ? (int32_t)w->valuedouble : 0;
        if ((rc = parse_term(get(it, "podAffinityTerm"), p, pool, refs, &terms[*n].term, err,
                             errlen)))
            return rc;
        (*n)++;
    }
    *out = terms;
    return 0;
}

int ks__parse_pod_affinity(const cJSON *affinity, ks_mempool *pool, ks__symrefs *refs,
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
    if ((rc =
             parse_terms(get(pa, "requiredDuringSchedulingIgnoredDuringExecution"),
                         "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                         pool, refs, &a->required_affinity, &a->nrequired_affinity, err, errlen)) ||
        (rc = parse_weighted(
             get(pa, "preferredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution", pool,
             refs, &a->preferred_affinity, &a->npreferred_affinity, err, errlen)) ||
        (rc = parse_terms(
             get(paa, "requiredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution", pool,
             refs, &a->required_anti_affinity, &a->nrequired_anti_affinity, err, errlen)) ||
        (rc = parse_weighted(
             get(paa, "preferredDuringSchedulingIgnoredDuringExecution"),
             "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution", pool,
             refs, &a->preferred_anti_affinity, &a->npreferred_anti_affinity, err, errlen)))
        return rc;
    *out = a;
    return 0;
}

static ks_inclusion_policy parse_policy(const cJSON *v)
{
    if (!cJSON_IsString(v))
        return KS_POLICY_UNSET;
    if (!strcmp(v->valuestring, "Honor"))
        return KS_POLICY_HONOR;
    if (!strcmp(v->valuestring, "Ignore"))
        return KS_POLICY_IGNORE;
    return KS_POLICY_UNSET;
}

int ks__parse_spread_constraints(const cJSON *arr, ks_mempool *pool, ks__symrefs *refs,
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
        const cJSON *skew = get(it, "maxSkew"), *key = get(it, "topologyKey"),
                    *when = get(it, "whenUnsatisfiable");
        const cJSON *md = get(it, "minDomains");
        snprintf(p, sizeof(p), "spec.topologySpreadConstraints[%zu]", *n);
        c->max_skew = cJSON_IsNumber(skew) ? (int32_t)skew->valuedouble : 0;
        c->topology_key = ks__symrefs_intern(refs, cJSON_IsString(key) ? key->valuestring : "");
        if (cJSON_IsString(when) && !strcmp(when->valuestring, "ScheduleAnyway"))
            c->when_unsatisfiable = KS_SCHEDULE_ANYWAY;
        else if (!cJSON_IsString(when) || !strcmp(when->valuestring, "DoNotSchedule"))
            c->when_unsatisfiable = KS_DO_NOT_SCHEDULE;
        else {
            snprintf(err, errlen,
                     "%s.whenUnsatisfiable: unsupported value \"%s\" (valid: DoNotSchedule, "
                     "ScheduleAnyway)",
                     p, when->valuestring);
            return KS_EPARSE;
        }
        c->min_domains = cJSON_IsNumber(md) ? (int32_t)md->valuedouble : 0;
        c->node_affinity_policy = parse_policy(get(it, "nodeAffinityPolicy"));
        c->node_taints_policy = parse_policy(get(it, "nodeTaintsPolicy"));
        char sp[160];
        snprintf(sp, sizeof(sp), "%s.labelSelector", p);
        if ((rc = ks__parse_label_selector(get(it, "labelSelector"), sp, pool, refs, &c->selector,
                                           err, errlen)) ||
            (rc = parse_syms(get(it, "matchLabelKeys"), pool, refs, &c->match_label_keys,
                             &c->nmatch_label_keys)))
            return rc;
        (*n)++;
    }
    *out = cs;
    return 0;
}
