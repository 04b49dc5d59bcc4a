/*
 * NodeAffinity (upstream plugins/nodeaffinity/node_affinity.go and component-helpers
 * scheduling/corev1/nodeaffinity/nodeaffinity.go, v1.34).
 *
 *   PreFilter       Skip when the pod has no nodeSelector, no required node affinity and args add
 *                   none. Otherwise the pod's required terms are checked once (a term with a parse
 *                   error, e.g. an invalid label value, never matches, as upstream's lazy-error
 *                   selector) and compiled into the cycle state. When every term names nodes with
 *                   a `metadata.name In` field, the union over terms of each term's intersection
 *                   becomes the PreFilterResult; an empty one is UnschedulableAndUnresolvable
 *                   "pod affinity terms conflict".
 *   Filter          args.addedAffinity required terms not matched -> UnschedulableAndUnresolvable
 *                   "node(s) didn't match scheduler-enforced node affinity"; the pod's nodeSelector
 *                   or required terms not matched -> UnschedulableAndUnresolvable
 *                   "node(s) didn't match Pod's node affinity/selector".
 *   PreScore        Skip when neither the pod nor args have preferred terms. A preferred term of
 *                   the pod with a parse error is an Error (upstream PreScore fails the same way).
 *   Score           the sum of the weights of the matching preferred terms (args' and the pod's).
 *   NormalizeScore  DefaultNormalizeScore(100, false): max 0 leaves the scores, else 100*raw/max.
 *
 * Args: addedAffinity {requiredDuringSchedulingIgnoredDuringExecution, preferredDuring...}, read
 * with the typed getters and compiled in create(). Filter and Score only compare interned ids
 * (and parse a node label value for Gt/Lt, as upstream does).
 *
 * plugins/common/match.h is not used for matching: upstream treats a term with parse errors as
 * matching nothing, allows matchFields keys other than metadata.name (their value is ""), and
 * needs exactly one matchFields value; the compiled form here also keeps Gt/Lt bounds parsed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kubesched/plugin.h"

#include "../common/match.h"
#include "../common/normalize.h"
#include "../common/sign.h"

#define ERR_REASON_POD "node(s) didn't match Pod's node affinity/selector"
#define ERR_REASON_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define ERR_REASON_CONFLICT "pod affinity terms conflict"

#define PATH_LEN 160
#define ADDED_REQ "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define ADDED_PREF "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"

/* One requirement, validated and compiled. For matchFields, values[0] is the one value. */
typedef struct creq {
    ks_sym key;
    ks_selector_op op;
    uint32_t nvalues;
    const ks_sym *values; /* borrowed from the pod (cycle) or from the plugin's pool */
    int64_t bound;        /* Gt / Lt: the parsed value */
} creq;

/* One valid, non-empty node selector term. weight is used by preferred terms only. */
typedef struct cterm {
    int32_t weight;
    uint32_t nexprs, nfields;
    const creq *exprs;
    const creq *fields;
} cterm;

/* What create() builds; read-only afterwards, so every thread may read it without locks. */
typedef struct node_affinity {
    ks_sym name_key; /* "metadata.name" */
    int has_added_required;
    uint32_t nadded_required;
    const cterm *added_required;
    int has_added_preferred;
    uint32_t nadded_preferred;
    const cterm *added_preferred;
    void *chain; /* every block allocated for the above (freed by destroy) */
} node_affinity;

/* PreFilter state (cycle arena; never changed after PreFilter, shared by clones). */
typedef struct prefilter_state {
    int has_required; /* the pod has requiredDuringSchedulingIgnoredDuringExecution */
    uint32_t nterms;
    const cterm *terms; /* its valid, non-empty terms */
} prefilter_state;

/* PreScore state (cycle arena): the pod's valid preferred terms with weight != 0. */
typedef struct prescore_state {
    uint32_t nterms;
    const cterm *terms;
} prescore_state;

static char prefilter_key;
static char prescore_key;

/* ---------------------------------------------------------------------------------------------
 * Memory: the plugin's own blocks (create) or the cycle arena (PreFilter / PreScore)
 * ------------------------------------------------------------------------------------------- */

#define BLOCK_HDR 16 /* keeps the payload 16-byte aligned */

typedef struct mem {
    ks_cycle *cycle; /* non-NULL: allocate from the cycle arena */
    void **chain;    /* else: link each block here */
} mem;

static void *mem_alloc(mem *m, size_t n)
{
    if (n == 0)
        n = 1;
    if (m->cycle)
        return ks_cycle_alloc(m->cycle, n);
    char *b = ks_alloc(BLOCK_HDR + n);
    if (!b)
        return NULL;
    memset(b, 0, BLOCK_HDR + n);
    *(void **)b = *m->chain;
    *m->chain = b;
    return b + BLOCK_HDR;
}

static void chain_free(void *chain)
{
    while (chain) {
        void *next = *(void **)chain;
        ks_free(chain);
        chain = next;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Parse errors, worded as apimachinery's field errors and aggregated as errors.Flatten does
 * ------------------------------------------------------------------------------------------- */

typedef struct errlist {
    int count;
    size_t len;
    char buf[1024];
} errlist;

static KS_PRINTF(2, 3) void err_add(errlist *e, const char *fmt, ...)
{
    va_list ap;
    if (!e)
        return;
    if (e->count > 0 && e->len + 2 < sizeof(e->buf)) {
        memcpy(e->buf + e->len, ", ", 2);
        e->len += 2;
    }
    e->count++;
    if (e->len + 1 >= sizeof(e->buf))
        return;
    va_start(ap, fmt);
    int w = vsnprintf(e->buf + e->len, sizeof(e->buf) - e->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        e->len += (size_t)w < sizeof(e->buf) - e->len ? (size_t)w : sizeof(e->buf) - e->len - 1;
}

/* The aggregate's message: one error as is, several as "[a, b]". */
static const char *err_message(const errlist *e, char *out, size_t len)
{
    snprintf(out, len, e->count == 1 ? "%.*s" : "[%.*s]", (int)e->len, e->buf);
    return out;
}

/* Go's %q for the plain strings found in selectors (quotes and backslashes escaped). */
static const char *quote(const char *s, char *out, size_t len)
{
    size_t at = 0;
    if (len < 3)
        return "\"\"";
    out[at++] = '"';
    for (; s && *s && at + 3 < len; s++) {
        if (*s == '"' || *s == '\\')
            out[at++] = '\\';
        out[at++] = *s;
    }
    out[at++] = '"';
    out[at] = '\0';
    return out;
}

/* Go's %#v of a []string: []string{"a", "b"}, or []string(nil) when empty. */
static const char *string_slice(const ks_sym *v, uint32_t n, char *out, size_t len)
{
    char q[160];
    size_t at;
    if (n == 0) {
        snprintf(out, len, "[]string(nil)");
        return out;
    }
    at = (size_t)snprintf(out, len, "[]string{");
    for (uint32_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", i ? ", " : "",
                               quote(ks_sym_str(v[i]), q, sizeof(q)));
    if (at < len)
        snprintf(out + at, len - at, "}");
    return out;
}

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n). */
static int qualified_part_ok(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* over s[0..n). */
static int dns1123_subdomain_ok(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return 0;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return 0;
        start = i + 1;
    }
    return 1;
}

#define QNAME_REGEX_MSG                                                                            \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define DNS1123_REGEX_MSG                                                                          \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "       \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_VALUE_REGEX_MSG                                                                      \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

/* validation.IsQualifiedName: 1 when valid, else 0 with the messages joined by "; " in why. */
static int label_key_ok(const char *s, char *why, size_t len)
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    size_t at = 0;
    why[0] = '\0';
#define WHY(...)                                                                                   \
    do {                                                                                           \
        if (at < len)                                                                              \
            at += (size_t)snprintf(why + at, len - at, "%s", at ? "; " : "");                      \
        if (at < len)                                                                              \
            at += (size_t)snprintf(why + at, len - at, __VA_ARGS__);                               \
    } while (0)
    if (slash && strchr(slash + 1, '/')) {
        WHY("a qualified name " QNAME_REGEX_MSG
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
        return 0;
    }
    if (slash) {
        size_t plen = (size_t)(slash - s);
        if (plen == 0) {
            WHY("prefix part must be non-empty");
        } else {
            if (plen > 253)
                WHY("prefix part must be no more than 253 characters");
            if (!dns1123_subdomain_ok(s, plen))
                WHY("prefix part " DNS1123_REGEX_MSG);
        }
        name = slash + 1;
    }
    size_t nlen = strlen(name);
    if (nlen == 0)
        WHY("name part must be non-empty");
    else if (nlen > 63)
        WHY("name part must be no more than 63 characters");
    if (!qualified_part_ok(name, nlen))
        WHY("name part " QNAME_REGEX_MSG);
#undef WHY
    return at == 0;
}

/* validation.IsValidLabelValue. */
static int label_value_ok(const char *s, char *why, size_t len)
{
    size_t n = strlen(s);
    int too_long = n > 63, bad = n > 0 && !qualified_part_ok(s, n);
    snprintf(why, len, "%s%s%s", too_long ? "must be no more than 63 characters" : "",
             too_long && bad ? "; " : "", bad ? LABEL_VALUE_REGEX_MSG : "");
    return !too_long && !bad;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no overflow. */
static int parse_int64(const char *s, int64_t *out)
{
    int neg = 0;
    uint64_t v = 0, limit;
    if (!s || !*s)
        return -1;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return -1;
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

static const char *op_name(ks_selector_op op)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    return (unsigned)op < 6 ? names[op] : "";
}

/* labels.NewRequirement's checks for one matchExpressions entry; 0 when valid. */
static int expr_errors(const ks_selector_req *r, const char *path, errlist *e)
{
    char why[1024], q[300], vals[600];
    int bad = 0;
    const char *key = ks_sym_str(r->key);
    if (!label_key_ok(key ? key : "", why, sizeof(why))) {
        err_add(e, "%s.key: Invalid value: %s: %s", path, quote(key, q, sizeof(q)), why);
        bad = 1;
    }
    switch (r->op) {
    case KS_OP_IN:
    case KS_OP_NOT_IN:
        if (r->nvalues == 0) {
            err_add(e,
                    "%s.values: Invalid value: %s: for 'in', 'notin' operators, values set "
                    "can't be empty",
                    path, string_slice(r->values, r->nvalues, vals, sizeof(vals)));
            bad = 1;
        }
        break;
    case KS_OP_EXISTS:
    case KS_OP_DOES_NOT_EXIST:
        if (r->nvalues != 0) {
            err_add(e,
                    "%s.values: Invalid value: %s: values set must be empty for exists and "
                    "does not exist",
                    path, string_slice(r->values, r->nvalues, vals, sizeof(vals)));
            bad = 1;
        }
        break;
    case KS_OP_GT:
    case KS_OP_LT:
        if (r->nvalues != 1) {
            err_add(e,
                    "%s.values: Invalid value: %s: for 'Gt', 'Lt' operators, exactly one value "
                    "is required",
                    path, string_slice(r->values, r->nvalues, vals, sizeof(vals)));
            bad = 1;
        }
        for (uint32_t i = 0; i < r->nvalues; i++) {
            int64_t x;
            if (parse_int64(ks_sym_str(r->values[i]), &x) != 0) {
                err_add(e,
                        "%s.values[%u]: Invalid value: %s: for 'Gt', 'Lt' operators, the value "
                        "must be an integer",
                        path, i, quote(ks_sym_str(r->values[i]), q, sizeof(q)));
                bad = 1;
            }
        }
        break;
    }
    for (uint32_t i = 0; i < r->nvalues; i++) {
        const char *v = ks_sym_str(r->values[i]);
        if (!label_value_ok(v ? v : "", why, sizeof(why))) {
            err_add(e, "%s.values[%u]: Invalid value: %s: %s", path, i, quote(v, q, sizeof(q)),
                    why);
            bad = 1;
        }
    }
    return bad;
}

/* nodeSelectorRequirementsAsFieldSelector's checks for one matchFields entry; 0 when valid. */
static int field_errors(const ks_selector_req *r, const char *path, errlist *e)
{
    char vals[600];
    if (r->op != KS_OP_IN && r->op != KS_OP_NOT_IN) {
        err_add(e, "%s.operator: Unsupported value: \"%s\": supported values: \"In\", \"NotIn\"",
                path, op_name(r->op));
        return 1;
    }
    if (r->nvalues != 1) {
        err_add(e, "%s.values: Invalid value: %s: must have one element", path,
                string_slice(r->values, r->nvalues, vals, sizeof(vals)));
        return 1;
    }
    return 0;
}

/* All parse errors of one term (path: "[0]" or "nodeSelectorTerms[0]"); 0 when valid. */
static int term_errors(const ks_node_selector_term *t, const char *path, errlist *e)
{
    char p[PATH_LEN];
    int bad = 0;
    for (uint32_t i = 0; i < t->nexprs; i++) {
        snprintf(p, sizeof(p), "%s.matchExpressions[%u]", path, i);
        bad |= expr_errors(&t->exprs[i], p, e);
    }
    for (uint32_t i = 0; i < t->nfields; i++) {
        snprintf(p, sizeof(p), "%s.matchFields[%u]", path, i);
        bad |= field_errors(&t->fields[i], p, e);
    }
    return bad;
}

static int term_empty(const ks_node_selector_term *t) { return t->nexprs == 0 && t->nfields == 0; }

/* Compiles a valid term into m; 0, or KS_ENOMEM. */
static int compile_term(const ks_node_selector_term *t, int32_t weight, cterm *out, mem *m)
{
    creq *exprs = t->nexprs ? mem_alloc(m, t->nexprs * sizeof(creq)) : NULL;
    creq *fields = t->nfields ? mem_alloc(m, t->nfields * sizeof(creq)) : NULL;
    if ((t->nexprs && !exprs) || (t->nfields && !fields))
        return KS_ENOMEM;
    for (uint32_t i = 0; i < t->nexprs; i++) {
        const ks_selector_req *r = &t->exprs[i];
        exprs[i] = (creq){r->key, r->op, r->nvalues, r->values, 0};
        if (r->op == KS_OP_GT || r->op == KS_OP_LT)
            (void)parse_int64(ks_sym_str(r->values[0]), &exprs[i].bound);
    }
    for (uint32_t i = 0; i < t->nfields; i++) {
        const ks_selector_req *r = &t->fields[i];
        fields[i] = (creq){r->key, r->op, r->nvalues, r->values, 0};
    }
    *out = (cterm){weight, t->nexprs, t->nfields, exprs, fields};
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Matching (Filter and Score workers): id comparisons only
 * ------------------------------------------------------------------------------------------- */

static int has_value(const creq *r, ks_sym v)
{
    for (uint32_t i = 0; i < r->nvalues; i++)
        if (r->values[i] == v)
            return 1;
    return 0;
}

static int expr_matches(const creq *r, const ks_label *labels, size_t nlabels)
{
    ks_sym v = ks_labels_get(labels, nlabels, r->key);
    int64_t have;
    switch (r->op) {
    case KS_OP_IN:
        return v != KS_SYM_ABSENT && has_value(r, v);
    case KS_OP_NOT_IN:
        return v == KS_SYM_ABSENT || !has_value(r, v);
    case KS_OP_EXISTS:
        return v != KS_SYM_ABSENT;
    case KS_OP_DOES_NOT_EXIST:
        return v == KS_SYM_ABSENT;
    case KS_OP_GT:
    case KS_OP_LT:
        if (v == KS_SYM_ABSENT || parse_int64(ks_sym_str(v), &have) != 0)
            return 0;
        return r->op == KS_OP_GT ? have > r->bound : have < r->bound;
    }
    return 0;
}

/* One term: its label requirements and its field requirements (metadata.name is the only field a
 * node has; any other key reads as ""). */
static int term_matches(const node_affinity *na, const cterm *t, const ks_node *node,
                        const ks_label *labels, size_t nlabels)
{
    for (uint32_t i = 0; i < t->nexprs; i++)
        if (!expr_matches(&t->exprs[i], labels, nlabels))
            return 0;
    for (uint32_t i = 0; i < t->nfields; i++) {
        const creq *f = &t->fields[i];
        ks_sym v = f->key == na->name_key ? ks_node_name(node) : KS_SYM_EMPTY;
        if ((f->values[0] == v) != (f->op == KS_OP_IN))
            return 0;
    }
    return 1;
}

static int terms_match(const node_affinity *na, const cterm *terms, uint32_t n, const ks_node *node,
                       const ks_label *labels, size_t nlabels)
{
    for (uint32_t i = 0; i < n; i++)
        if (term_matches(na, &terms[i], node, labels, nlabels))
            return 1;
    return 0;
}

static int64_t preferred_score(const node_affinity *na, const cterm *terms, uint32_t n,
                               const ks_node *node, const ks_label *labels, size_t nlabels)
{
    int64_t score = 0;
    for (uint32_t i = 0; i < n; i++)
        if (term_matches(na, &terms[i], node, labels, nlabels))
            score += terms[i].weight;
    return score;
}

/* ---------------------------------------------------------------------------------------------
 * Args
 * ------------------------------------------------------------------------------------------- */

static void node_affinity_destroy(void *self)
{
    node_affinity *na = self;
    if (!na)
        return;
    chain_free(na->chain);
    ks_free(na);
}

/* Whether path names an object or array in args (present and not a string). */
static int args_has(const ks_args *args, const char *path)
{
    const char *s;
    return ks_args_get_string(args, path, &s) != KS_ENOTFOUND;
}

static size_t args_len(const ks_args *args, const char *path)
{
    size_t n = 0;
    return ks_args_count(args, path, &n) == 0 ? n : 0;
}

/* Reads the requirements at base (".matchExpressions" or ".matchFields" appended by the caller)
 * into SDK structs. Unknown operators are reported in err. */
static int read_reqs(const ks_args *args, const char *base, mem *m, uint32_t *n,
                     const ks_selector_req **out, const char *what, ks_error *err)
{
    char p[PATH_LEN + 64];
    size_t count = args_len(args, base);
    ks_selector_req *reqs = count ? mem_alloc(m, count * sizeof(*reqs)) : NULL;
    *n = 0;
    *out = NULL;
    if (count && !reqs)
        return KS_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        const char *s = "";
        static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
        snprintf(p, sizeof(p), "%s[%zu].key", base, i);
        if (ks_args_get_string(args, p, &s) != 0)
            s = "";
        reqs[i].key = ks_intern(s);
        snprintf(p, sizeof(p), "%s[%zu].operator", base, i);
        if (ks_args_get_string(args, p, &s) != 0)
            s = "";
        int op = -1;
        for (int k = 0; k < 6; k++)
            if (strcmp(s, ops[k]) == 0)
                op = k;
        if (op < 0) {
            ks_error_set(err,
                         "NodeAffinity: parsing %s: %s[%zu].operator: Unsupported value: \"%s\": "
                         "supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", "
                         "\"Gt\", \"Lt\"",
                         what, strchr(base, '.') ? strchr(base, '.') + 1 : base, i, s);
            return KS_EINVAL;
        }
        reqs[i].op = (ks_selector_op)op;
        snprintf(p, sizeof(p), "%s[%zu].values", base, i);
        size_t nv = args_len(args, p);
        ks_sym *vals = nv ? mem_alloc(m, nv * sizeof(ks_sym)) : NULL;
        if (nv && !vals)
            return KS_ENOMEM;
        for (size_t k = 0; k < nv; k++) {
            char vp[PATH_LEN + 96];
            snprintf(vp, sizeof(vp), "%s[%zu]", p, k);
            if (ks_args_get_string(args, vp, &s) != 0)
                s = "";
            vals[k] = ks_intern(s);
        }
        reqs[i].nvalues = (uint32_t)nv;
        reqs[i].values = vals;
    }
    *n = (uint32_t)count;
    *out = reqs;
    return 0;
}

static int read_term(const ks_args *args, const char *base, mem *m, ks_node_selector_term *t,
                     const char *what, ks_error *err)
{
    char p[PATH_LEN];
    int rc;
    snprintf(p, sizeof(p), "%s.matchExpressions", base);
    if ((rc = read_reqs(args, p, m, &t->nexprs, &t->exprs, what, err)) != 0)
        return rc;
    snprintf(p, sizeof(p), "%s.matchFields", base);
    return read_reqs(args, p, m, &t->nfields, &t->fields, what, err);
}

/* addedAffinity.required: NewNodeSelector (empty terms dropped, any parse error fails). */
static int parse_added_required(node_affinity *na, const ks_args *args, mem *m, ks_error *err)
{
    char p[PATH_LEN], ep[PATH_LEN], msg[1100];
    errlist e = {0};
    int rc;
    if (!args_has(args, ADDED_REQ))
        return 0;
    na->has_added_required = 1;
    size_t n = args_len(args, ADDED_REQ ".nodeSelectorTerms");
    cterm *terms = n ? mem_alloc(m, n * sizeof(*terms)) : NULL;
    if (n && !terms)
        return KS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        ks_node_selector_term t = {0};
        snprintf(p, sizeof(p), ADDED_REQ ".nodeSelectorTerms[%zu]", i);
        if ((rc = read_term(args, p, m, &t, ADDED_REQ, err)) != 0)
            return rc;
        if (term_empty(&t))
            continue;
        snprintf(ep, sizeof(ep), "nodeSelectorTerms[%zu]", i);
        if (term_errors(&t, ep, &e))
            continue;
        if ((rc = compile_term(&t, 0, &terms[na->nadded_required], m)) != 0)
            return rc;
        na->nadded_required++;
    }
    if (e.count) {
        ks_error_set(err, "NodeAffinity: parsing " ADDED_REQ ": %s",
                     err_message(&e, msg, sizeof(msg)));
        return KS_EINVAL;
    }
    na->added_required = terms;
    return 0;
}

/* addedAffinity.preferred: NewPreferredSchedulingTerms (weight 0 or empty terms dropped). */
static int parse_added_preferred(node_affinity *na, const ks_args *args, mem *m, ks_error *err)
{
    char p[PATH_LEN], ep[PATH_LEN], msg[1100];
    errlist e = {0};
    int rc;
    size_t n = args_len(args, ADDED_PREF);
    if (n == 0)
        return 0;
    na->has_added_preferred = 1;
    cterm *terms = mem_alloc(m, n * sizeof(*terms));
    if (!terms)
        return KS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        ks_node_selector_term t = {0};
        int64_t w = 0;
        snprintf(p, sizeof(p), ADDED_PREF "[%zu].weight", i);
        if (ks_args_get_int(args, p, &w) != 0)
            w = 0;
        snprintf(p, sizeof(p), ADDED_PREF "[%zu].preference", i);
        if ((rc = read_term(args, p, m, &t, ADDED_PREF, err)) != 0)
            return rc;
        if (w == 0 || term_empty(&t))
            continue;
        snprintf(ep, sizeof(ep), "[%zu]", i);
        if (term_errors(&t, ep, &e))
            continue;
        if ((rc = compile_term(&t, (int32_t)w, &terms[na->nadded_preferred], m)) != 0)
            return rc;
        na->nadded_preferred++;
    }
    if (e.count) {
        ks_error_set(err, "NodeAffinity: parsing " ADDED_PREF ": %s",
                     err_message(&e, msg, sizeof(msg)));
        return KS_EINVAL;
    }
    na->added_preferred = terms;
    return 0;
}

/* create: main thread. */
static void *node_affinity_create(const ks_args *args, ks_error *err)
{
    node_affinity *na = ks_alloc(sizeof(*na));
    int rc;
    if (!na) {
        ks_error_set(err, "NodeAffinity: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    memset(na, 0, sizeof(*na));
    na->name_key = ks_intern("metadata.name");
    mem m = {NULL, &na->chain};
    if ((rc = parse_added_required(na, args, &m, err)) != 0 ||
        (rc = parse_added_preferred(na, args, &m, err)) != 0) {
        if (rc == KS_ENOMEM)
            ks_error_set(err, "NodeAffinity: %s", ks_strerror(KS_ENOMEM));
        node_affinity_destroy(na);
        return NULL;
    }
    return na;
}

/* ---------------------------------------------------------------------------------------------
 * PreFilter / Filter
 * ------------------------------------------------------------------------------------------- */

static int contains(const ks_sym *set, size_t n, ks_sym v)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

/* The PreFilterResult: when every term has `metadata.name In` fields, the union over terms of
 * the intersection of those fields' values. Returns 0 and *restrict = 0 when some term has none;
 * -1 on allocation failure. */
static int node_names(const node_affinity *na, const ks_node_affinity *aff, ks_cycle *cycle,
                      ks_sym **out, size_t *nout, int *restrict_)
{
    size_t cap = 0, n = 0;
    *restrict_ = 0;
    for (uint32_t i = 0; i < aff->nrequired; i++)
        for (uint32_t k = 0; k < aff->required[i].nfields; k++)
            cap += aff->required[i].fields[k].nvalues;
    ks_sym *result = ks_cycle_alloc(cycle, (cap ? cap : 1) * sizeof(ks_sym));
    ks_sym *term_set = ks_cycle_alloc(cycle, (cap ? cap : 1) * sizeof(ks_sym));
    if (!result || !term_set)
        return -1;
    for (uint32_t i = 0; i < aff->nrequired; i++) {
        const ks_node_selector_term *t = &aff->required[i];
        int have = 0;
        size_t nt = 0;
        for (uint32_t k = 0; k < t->nfields; k++) {
            const ks_selector_req *r = &t->fields[k];
            if (r->key != na->name_key || r->op != KS_OP_IN)
                continue;
            if (!have) {
                for (uint32_t v = 0; v < r->nvalues; v++)
                    if (!contains(term_set, nt, r->values[v]))
                        term_set[nt++] = r->values[v];
                have = 1;
                continue;
            }
            size_t kept = 0;
            for (size_t v = 0; v < nt; v++)
                if (contains(r->values, r->nvalues, term_set[v]))
                    term_set[kept++] = term_set[v];
            nt = kept;
        }
        if (!have)
            return 0; /* this term may match any node: the terms are ORed */
        for (size_t v = 0; v < nt; v++)
            if (!contains(result, n, term_set[v]))
                result[n++] = term_set[v];
    }
    *out = result;
    *nout = n;
    *restrict_ = 1;
    return 0;
}

/* pre_filter: scheduling thread, once per cycle. Parse checks happen here, never in Filter. */
static ks_code node_affinity_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                        ks_prefilter_result *result, ks_status *st)
{
    const node_affinity *na = self;
    const ks_node_affinity *aff = ks_pod_node_affinity(pod);
    const ks_label *sel;
    size_t nsel = ks_pod_node_selector(pod, &sel);
    int has_required = aff && aff->has_required;
    if (!has_required && !na->has_added_required && nsel == 0)
        return KS_SKIP;

    prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    if (!s)
        goto nomem;
    s->has_required = has_required;
    if (has_required && aff->nrequired > 0) {
        cterm *terms = ks_cycle_alloc(cycle, aff->nrequired * sizeof(*terms));
        mem m = {cycle, NULL};
        if (!terms)
            goto nomem;
        for (uint32_t i = 0; i < aff->nrequired; i++) {
            const ks_node_selector_term *t = &aff->required[i];
            /* An empty term or one with parse errors matches no node. */
            if (term_empty(t) || term_errors(t, "", NULL))
                continue;
            if (compile_term(t, 0, &terms[s->nterms], &m) != 0)
                goto nomem;
            s->nterms++;
        }
        s->terms = terms;
    }
    if (ks_cycle_write(cycle, &prefilter_key, s, NULL) != 0)
        goto nomem;

    if (!has_required || aff->nrequired == 0)
        return KS_SUCCESS;
    ks_sym *names;
    size_t nnames;
    int restrict_;
    if (node_names(na, aff, cycle, &names, &nnames, &restrict_) != 0)
        goto nomem;
    if (!restrict_)
        return KS_SUCCESS;
    if (nnames == 0) {
        ks_status_reason(st, ERR_REASON_CONFLICT);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    for (size_t i = 0; i < nnames; i++)
        ks_prefilter_result_add_node(result, names[i]);
    return KS_SUCCESS;
nomem:
    ks_status_reason(st, "NodeAffinity: out of memory in PreFilter");
    return KS_ERROR;
}

/* filter: called concurrently for different nodes; the plugin and the PreFilter state are
 * read-only here. */
static ks_code node_affinity_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                    const ks_node_info *ni, ks_status *st)
{
    const node_affinity *na = self;
    const ks_node *node = ks_node_info_node(ni);
    const ks_label *labels, *sel;
    size_t nlabels = ks_node_labels(node, &labels);

    if (na->has_added_required &&
        !terms_match(na, na->added_required, na->nadded_required, node, labels, nlabels)) {
        ks_status_reason(st, ERR_REASON_ENFORCED);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    const prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    if (!s) {
        ks_status_reason(st, "reading \"PreFilterNodeAffinity\" from cycleState: not found");
        return KS_ERROR;
    }
    size_t nsel = ks_pod_node_selector(pod, &sel);
    for (size_t i = 0; i < nsel; i++) {
        if (ks_labels_get(labels, nlabels, sel[i].key) != sel[i].value) {
            ks_status_reason(st, ERR_REASON_POD);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
    }
    if (s->has_required && !terms_match(na, s->terms, s->nterms, node, labels, nlabels)) {
        ks_status_reason(st, ERR_REASON_POD);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * PreScore / Score / NormalizeScore
 * ------------------------------------------------------------------------------------------- */

/* pre_score: scheduling thread, once per cycle. */
static ks_code node_affinity_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                       const ks_node_info *const *nodes, size_t nnodes,
                                       ks_status *st)
{
    const node_affinity *na = self;
    const ks_node_affinity *aff = ks_pod_node_affinity(pod);
    uint32_t npref = aff ? aff->npreferred : 0;
    char ep[PATH_LEN], msg[1100];
    errlist e = {0};
    (void)nodes;
    (void)nnodes;
    if (npref == 0 && !na->has_added_preferred)
        return KS_SKIP;

    prescore_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    cterm *terms = ks_cycle_alloc(cycle, (npref ? npref : 1) * sizeof(*terms));
    mem m = {cycle, NULL};
    if (!s || !terms)
        goto nomem;
    for (uint32_t i = 0; i < npref; i++) {
        const ks_preferred_term *p = &aff->preferred[i];
        if (p->weight == 0 || term_empty(&p->term))
            continue;
        snprintf(ep, sizeof(ep), "[%u]", i);
        if (term_errors(&p->term, ep, &e))
            continue;
        if (compile_term(&p->term, p->weight, &terms[s->nterms], &m) != 0)
            goto nomem;
        s->nterms++;
    }
    if (e.count) {
        ks_status_reason(st, err_message(&e, msg, sizeof(msg)));
        return KS_ERROR;
    }
    s->terms = terms;
    if (ks_cycle_write(cycle, &prescore_key, s, NULL) != 0)
        goto nomem;
    return KS_SUCCESS;
nomem:
    ks_status_reason(st, "NodeAffinity: out of memory in PreScore");
    return KS_ERROR;
}

/* score: called concurrently for different nodes; the plugin and the PreScore state are
 * read-only here. */
static ks_code node_affinity_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                   const ks_node_info *ni, int64_t *score, ks_status *st)
{
    const node_affinity *na = self;
    const ks_node *node = ks_node_info_node(ni);
    const ks_label *labels;
    size_t nlabels = ks_node_labels(node, &labels);
    (void)pod;
    const prescore_state *s = ks_cycle_read(cycle, &prescore_key);
    if (!s) {
        ks_status_reason(st, "reading \"PreScoreNodeAffinity\" from cycleState: not found");
        return KS_ERROR;
    }
    *score = preferred_score(na, na->added_preferred, na->nadded_preferred, node, labels, nlabels) +
             preferred_score(na, s->terms, s->nterms, node, labels, nlabels);
    return KS_SUCCESS;
}

/* normalize_score: scheduling thread. helper.DefaultNormalizeScore(100, reverse = false). */
static ks_code node_affinity_normalize(void *self, ks_cycle *cycle, const ks_pod *pod,
                                       ks_node_score *scores, size_t n, ks_status *st)
{
    (void)self;
    (void)cycle;
    (void)pod;
    (void)st;
    ks_default_normalize_score(KS_MAX_NODE_SCORE, 0, scores, n);
    return KS_SUCCESS;
}

/* upstream isSchedulableAfterNodeChange (v1.37): Skip a node that the scheduler-enforced
 * addedAffinity rejects or the pod's required node affinity (nodeSelector and required terms)
 * does not match; Queue a matching new node, and an updated node only when it did not match
 * before (the needed label was added). (A requirement whose value cannot be read counts as no
 * match here, where upstream's lazy selector answers Queue with its error: such a pod matches no
 * node in Filter either.) Event thread; reads only the plugin's immutable configuration. */
static ks_queueing_hint node_affinity_after_node_change(void *self, const ks_pod *pod,
                                                        const ks_event_info *ev)
{
    const node_affinity *na = self;
    const ks_node *node = ev->new_node;
    if (!node)
        return KS_QUEUE; /* not a Node event: cannot tell */
    const ks_label *labels;
    size_t nlabels = ks_node_labels(node, &labels);
    if (na->has_added_required &&
        !terms_match(na, na->added_required, na->nadded_required, node, labels, nlabels))
        return KS_QUEUE_SKIP;
    if (!ks_h_pod_matches_node_affinity(pod, node, na->name_key))
        return KS_QUEUE_SKIP;
    if (!ev->old_node)
        return KS_QUEUE;
    return ks_h_pod_matches_node_affinity(pod, ev->old_node, na->name_key) ? KS_QUEUE_SKIP
                                                                           : KS_QUEUE;
}

/* upstream EventsToRegister (v1.37): Node Add|UpdateNodeLabel with the hint above. */
static size_t node_affinity_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, node_affinity_after_node_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* A list of JSON texts, sorted as text, written as a JSON array of strings. */
static void na_sign_sorted_strings(char **items, size_t n, ks_jbuf *out)
{
    if (!out->oom)
        qsort(items, n, sizeof(*items), ks_sign_strcmp);
    ks_jb_put(out, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            ks_jb_put(out, ",");
        if (items[i])
            ks_jb_str(out, items[i]);
        free(items[i]);
    }
    ks_jb_put(out, "]");
}

/* upstream NodeSelectorRequirementsSigner: each requirement as JSON with its values sorted, the
 * list sorted as text. Adds the strings to *out (malloc'd). */
static void na_sign_reqs(const ks_selector_req *reqs, uint32_t n, ks_jbuf *out)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    char **items = (char **)calloc(n ? n : 1, sizeof(*items));
    if (!items) {
        out->oom = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const ks_selector_req *r = &reqs[i];
        const char **vals = (const char **)malloc((r->nvalues ? r->nvalues : 1) * sizeof(*vals));
        ks_jbuf b = {0};
        if (!vals)
            b.oom = 1;
        for (uint32_t v = 0; vals && v < r->nvalues; v++)
            vals[v] = ks_sign_sym(r->values[v]);
        if (vals)
            qsort(vals, r->nvalues, sizeof(*vals), ks_sign_strcmp);
        ks_jb_put(&b, "{\"key\":");
        ks_jb_str(&b, ks_sign_sym(r->key));
        ks_jb_put(&b, ",\"operator\":");
        ks_jb_str(&b, (unsigned)r->op < 6 ? ops[r->op] : "");
        if (r->nvalues) { /* omitempty */
            ks_jb_put(&b, ",\"values\":[");
            for (uint32_t v = 0; vals && v < r->nvalues; v++) {
                if (v)
                    ks_jb_put(&b, ",");
                ks_jb_str(&b, vals[v]);
            }
            ks_jb_put(&b, "]");
        }
        ks_jb_put(&b, "}");
        free(vals);
        if (b.oom)
            out->oom = 1;
        items[i] = b.p;
    }
    na_sign_sorted_strings(items, n, out);
    free(items);
}

/* upstream NodeSelectorTermSigner: {"MatchExpressions": [...], "MatchFields": [...]}. */
static void na_sign_term(const ks_node_selector_term *t, ks_jbuf *out)
{
    ks_jb_put(out, "{\"MatchExpressions\":");
    na_sign_reqs(t->exprs, t->nexprs, out);
    ks_jb_put(out, ",\"MatchFields\":");
    na_sign_reqs(t->fields, t->nfields, out);
    ks_jb_put(out, "}");
}

/* upstream NodeAffinity.SignPod: NodeAffinitySigner ({"Required": sorted terms, "Preferred":
 * sorted weighted terms}, or null without nodeAffinity) and spec.nodeSelector. */
static ks_code node_affinity_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    const ks_node_affinity *na = ks_pod_node_affinity(pod);
    ks_jbuf b = {0};
    if (!na) {
        ks_jb_put(&b, "null");
    } else {
        size_t nreq = na->has_required ? na->nrequired : 0;
        size_t nmax = (nreq > na->npreferred ? nreq : na->npreferred);
        char **items = (char **)calloc(nmax ? nmax : 1, sizeof(*items));
        if (!items)
            b.oom = 1;
        ks_jb_put(&b, "{\"Required\":");
        for (size_t i = 0; items && i < nreq; i++) {
            ks_jbuf t = {0};
            na_sign_term(&na->required[i], &t);
            b.oom |= t.oom;
            items[i] = t.p;
        }
        if (items)
            na_sign_sorted_strings(items, nreq, &b);
        ks_jb_put(&b, ",\"Preferred\":");
        for (size_t i = 0; items && i < na->npreferred; i++) {
            ks_jbuf t = {0};
            ks_jb_put(&t, "{\"Weight\":");
            ks_jb_i64(&t, na->preferred[i].weight);
            ks_jb_put(&t, ",\"Preference\":");
            na_sign_term(&na->preferred[i].term, &t);
            ks_jb_put(&t, "}");
            b.oom |= t.oom;
            items[i] = t.p;
        }
        if (items)
            na_sign_sorted_strings(items, na->npreferred, &b);
        ks_jb_put(&b, "}");
        free(items);
    }
    ks_code code = ks_jb_sign(&b, sig, KS_SIGN_NODE_AFFINITY, st);
    if (code != KS_SUCCESS)
        return code;
    const ks_label *sel;
    size_t nsel = ks_pod_node_selector(pod, &sel);
    ks_jb_labels(&b, sel, nsel);
    return ks_jb_sign(&b, sig, KS_SIGN_NODE_SELECTOR, st);
}

/* args.c: NodeAffinityArgs, checked by kubesched while it loads the configuration. */
extern const ks_args_schema na_args_schema;
int na_validate_args(const ks_args *args, ks_args_error *err);

const ks_plugin_desc ks_plugin_node_affinity = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeAffinity",
    .create = node_affinity_create,
    .destroy = node_affinity_destroy,
    .pre_filter = node_affinity_pre_filter,
    .filter = node_affinity_filter,
    .pre_score = node_affinity_pre_score,
    .score = node_affinity_score,
    .normalize_score = node_affinity_normalize,
    .events_with_hints = node_affinity_events,
    .args_schema = &na_args_schema,
    .validate_args = na_validate_args,
    .sign = node_affinity_sign,
};
