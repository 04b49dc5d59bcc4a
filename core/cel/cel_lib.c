/*
 * CEL's standard functions and the extension libraries Kubernetes enables for DRA: cel-go's
 * strings (v2), sets, lists (v3) and optionals; Kubernetes' lists, regex, quantity and semver.
 * Each function's runtime cost follows cel-go's CostTracker.costCall and Kubernetes'
 * library.CostEstimator.CallCost.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_lib.h"

static const unsigned char fn_how[] = {
#define X(id, name, how) how,
    CEL_FUNCTIONS(X)
#undef X
};

int ks__cel_fn_how(int fn) { return fn >= 0 && fn < FN_COUNT ? fn_how[fn] : 0; }

#define NSO() ks__cel_err(c->a, "no such overload")
#define IS(i, k) (argv[i].kind == (k))

static ks_cel_value mk_list(cel_ctx *c, ks_cel_value *items, size_t n)
{
    ks_cel_list *l = ks__mempool_alloc(c->a, sizeof *l);
    l->n = n;
    l->items = items;
    ks_cel_value r = {.kind = KS_CEL_LIST, .list = l};
    return r;
}

static ks_cel_value mk_double(double d)
{
    ks_cel_value v = {.kind = KS_CEL_DOUBLE, .d = d};
    return v;
}

static ks_cel_value mk_uint(uint64_t u)
{
    ks_cel_value v = {.kind = KS_CEL_UINT, .u = u};
    return v;
}

/* cel-go's actualSize: Sizer values report their size (strings in code points), others 1. */
static uint64_t actual_size(const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_STRING:
        return ks__cel_utf8_len(v->s.ptr, v->s.len);
    case KS_CEL_BYTES:
        return v->s.len;
    case KS_CEL_LIST:
        return v->list->n;
    case KS_CEL_MAP:
        return v->map->n;
    default:
        return 1;
    }
}

/* Kubernetes' traversalCost (library/cost.go): strings and bytes 0.1 per byte, truncated; lists
 * and maps the sum over their elements (keys and values); anything else 1. */
static uint64_t traversal_cost(const ks_cel_value *v)
{
    uint64_t c = 0;
    switch (v->kind) {
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return (uint64_t)((double)v->s.len * 0.1);
    case KS_CEL_LIST:
        for (size_t i = 0; i < v->list->n; i++)
            c += traversal_cost(&v->list->items[i]);
        return c;
    case KS_CEL_MAP:
        for (size_t i = 0; i < v->map->n; i++)
            c += traversal_cost(&v->map->keys[i]) + traversal_cost(&v->map->vals[i]);
        return c;
    default:
        return 1;
    }
}

static uint64_t ceil_f(double x) { return (uint64_t)ceil(x); }

/* ---- runes -------------------------------------------------------------------------------- */

static size_t decode(cel_ctx *c, const char *s, size_t n, uint32_t **out)
{
    uint32_t *r = ks__mempool_alloc(c->a, sizeof(uint32_t) * (n + 1));
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned ch = p[i];
        uint32_t cp;
        size_t len;
        if (ch < 0x80) {
            cp = ch;
            len = 1;
        } else if ((ch & 0xE0) == 0xC0) {
            cp = ch & 0x1F;
            len = 2;
        } else if ((ch & 0xF0) == 0xE0) {
            cp = ch & 0x0F;
            len = 3;
        } else {
            cp = ch & 0x07;
            len = 4;
        }
        for (size_t j = 1; j < len && i + j < n; j++)
            cp = (cp << 6) | (p[i + j] & 0x3F);
        r[k++] = cp;
        i += len;
    }
    *out = r;
    return k;
}

static ks_cel_value encode(cel_ctx *c, const uint32_t *r, size_t n)
{
    char *buf = ks__mempool_alloc(c->a, n * 4 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = r[i];
        if (cp < 0x80) {
            buf[o++] = (char)cp;
        } else if (cp < 0x800) {
            buf[o++] = (char)(0xC0 | (cp >> 6));
            buf[o++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            buf[o++] = (char)(0xE0 | (cp >> 12));
            buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            buf[o++] = (char)(0x80 | (cp & 0x3F));
        } else {
            buf[o++] = (char)(0xF0 | (cp >> 18));
            buf[o++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            buf[o++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    ks_cel_value v = {.kind = KS_CEL_STRING};
    v.s.ptr = buf;
    v.s.len = o;
    return v;
}

static ks_cel_value substr_val(cel_ctx *c, const char *s, size_t n)
{
    ks_cel_value v = {.kind = KS_CEL_STRING};
    v.s.ptr = s;
    v.s.len = n;
    (void)c;
    return v;
}

static bool go_space(uint32_t r)
{
    switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
        return true;
    default:
        return r >= 0x2000 && r <= 0x200A;
    }
}

static const char *memfind(const char *h, size_t hn, const char *nd, size_t nn)
{
    if (nn == 0)
        return h;
    if (nn > hn)
        return NULL;
    for (size_t i = 0; i + nn <= hn; i++)
        if (memcmp(h + i, nd, nn) == 0)
            return h + i;
    return NULL;
}

/* Go's strconv.FormatFloat(d, 'g', -1, 64), which %g of fmt uses: the shortest digits that read
 * back, with an exponent when it is < -4 or >= 6. */
static ks_cel_value format_double(cel_ctx *c, double d);

ks_cel_value ks__cel_go_g(cel_ctx *c, double d) { return format_double(c, d); }

static ks_cel_value format_double(cel_ctx *c, double d)
{
    char buf[64];
    if (isnan(d))
        return ks__cel_str(c->a, "NaN", 3, KS_CEL_STRING);
    if (isinf(d))
        return ks__cel_str(c->a, d > 0 ? "+Inf" : "-Inf", 4, KS_CEL_STRING);
    int prec;
    for (prec = 0; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* buf: [-]D.DDDDe[+-]XX */
    char digits[32];
    size_t nd = 0;
    const char *p = buf;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (d == 0)
        nd = 1;
    char out[64];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    int eprec = 6; /* FormatFloat(f, 'g', -1, 64): for the shortest form, an exponent from 1e+06 */
    if (exp < -4 || exp >= eprec) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < nd; i++)
                out[o++] = digits[i];
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "e%c%02d", exp < 0 ? '-' : '+',
                              exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp - 1; i++)
            out[o++] = '0';
        for (size_t i = 0; i < nd; i++)
            out[o++] = digits[i];
    } else {
        for (int i = 0; i <= exp; i++)
            out[o++] = (size_t)i < nd ? digits[i] : '0';
        if ((int)nd > exp + 1) {
            out[o++] = '.';
            for (size_t i = (size_t)exp + 1; i < nd; i++)
                out[o++] = digits[i];
        }
    }
    return ks__cel_str(c->a, out, o, KS_CEL_STRING);
}

/* ---- arithmetic --------------------------------------------------------------------------- */

static ks_cel_value arith(cel_ctx *c, int fn, const ks_cel_value *a, const ks_cel_value *b)
{
    if (a->kind != b->kind)
        return NSO();
    switch (a->kind) {
    case KS_CEL_INT: {
        int64_t r;
        switch (fn) {
        case FN_ADD:
            if (__builtin_add_overflow(a->i, b->i, &r))
                return ks__cel_err(c->a, "integer overflow");
            return ks_cel_int(r);
        case FN_SUB:
            if (__builtin_sub_overflow(a->i, b->i, &r))
                return ks__cel_err(c->a, "integer overflow");
            return ks_cel_int(r);
        case FN_MUL:
            if (__builtin_mul_overflow(a->i, b->i, &r))
                return ks__cel_err(c->a, "integer overflow");
            return ks_cel_int(r);
        case FN_DIV:
            if (b->i == 0)
                return ks__cel_err(c->a, "division by zero");
            if (a->i == INT64_MIN && b->i == -1)
                return ks__cel_err(c->a, "integer overflow");
            return ks_cel_int(a->i / b->i);
        case FN_MOD:
            if (b->i == 0)
                return ks__cel_err(c->a, "modulus by zero");
            if (a->i == INT64_MIN && b->i == -1)
                return ks__cel_err(c->a, "integer overflow");
            return ks_cel_int(a->i % b->i);
        }
        break;
    }
    case KS_CEL_UINT: {
        uint64_t r;
        switch (fn) {
        case FN_ADD:
            if (__builtin_add_overflow(a->u, b->u, &r))
                return ks__cel_err(c->a, "unsigned integer overflow");
            return mk_uint(r);
        case FN_SUB:
            if (__builtin_sub_overflow(a->u, b->u, &r))
                return ks__cel_err(c->a, "unsigned integer overflow");
            return mk_uint(r);
        case FN_MUL:
            if (__builtin_mul_overflow(a->u, b->u, &r))
                return ks__cel_err(c->a, "unsigned integer overflow");
            return mk_uint(r);
        case FN_DIV:
            if (b->u == 0)
                return ks__cel_err(c->a, "division by zero");
            return mk_uint(a->u / b->u);
        case FN_MOD:
            if (b->u == 0)
                return ks__cel_err(c->a, "modulus by zero");
            return mk_uint(a->u % b->u);
        }
        break;
    }
    case KS_CEL_DOUBLE:
        switch (fn) {
        case FN_ADD:
            return mk_double(a->d + b->d);
        case FN_SUB:
            return mk_double(a->d - b->d);
        case FN_MUL:
            return mk_double(a->d * b->d);
        case FN_DIV:
            return mk_double(a->d / b->d);
        }
        break;
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        if (fn == FN_ADD) {
            char *p = ks__mempool_alloc(c->a, a->s.len + b->s.len + 1);
            memcpy(p, a->s.ptr, a->s.len);
            memcpy(p + a->s.len, b->s.ptr, b->s.len);
            ks_cel_value r = {.kind = a->kind};
            r.s.ptr = p;
            r.s.len = a->s.len + b->s.len;
            return r;
        }
        break;
    case KS_CEL_LIST:
        if (fn == FN_ADD) {
            size_t n = a->list->n + b->list->n;
            ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (n ? n : 1));
            if (a->list->n)
                memcpy(items, a->list->items, sizeof(ks_cel_value) * a->list->n);
            if (b->list->n)
                memcpy(items + a->list->n, b->list->items, sizeof(ks_cel_value) * b->list->n);
            return mk_list(c, items, n);
        }
        break;
    default:
        break;
    }
    return NSO();
}

/* ---- conversions -------------------------------------------------------------------------- */

static bool parse_go_int(const char *s, size_t n, bool is_unsigned, uint64_t *out, bool *neg,
                         bool *range)
{
    *range = false;
    *neg = false;
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        if (is_unsigned && s[i] == '-')
            return false;
        if (is_unsigned && s[i] == '+')
            return false; /* strconv.ParseUint takes no sign */
        *neg = s[i] == '-';
        i++;
    }
    if (i == n)
        return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            *range = true;
            v = UINT64_MAX;
            continue;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static ks_cel_value conv_int(cel_ctx *c, const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_INT:
        return *v;
    case KS_CEL_UINT:
        if (v->u > INT64_MAX)
            return ks__cel_err(c->a, "integer overflow");
        return ks_cel_int((int64_t)v->u);
    case KS_CEL_DOUBLE:
        if (isinf(v->d) || isnan(v->d) || v->d <= -9223372036854775808.0 ||
            v->d >= 9223372036854775807.0)
            return ks__cel_err(c->a, "integer overflow");
        return ks_cel_int((int64_t)v->d);
    case KS_CEL_STRING: {
        uint64_t u;
        bool neg, range;
        if (!parse_go_int(v->s.ptr, v->s.len, false, &u, &neg, &range))
            return ks__cel_err(c->a, "type conversion error from 'string' to 'int'");
        if (range || (!neg && u > INT64_MAX) || (neg && u > (uint64_t)INT64_MAX + 1))
            return ks__cel_err(c->a, "type conversion error from 'string' to 'int'");
        return ks_cel_int(neg ? (int64_t)(0 - u) : (int64_t)u);
    }
    default:
        return ks__cel_err(c->a, "type conversion error from '%s' to 'int'", ks__cel_type_name(v));
    }
}

static ks_cel_value conv_uint(cel_ctx *c, const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_UINT:
        return *v;
    case KS_CEL_INT:
        if (v->i < 0)
            return ks__cel_err(c->a, "unsigned integer overflow");
        return mk_uint((uint64_t)v->i);
    case KS_CEL_DOUBLE:
        if (isinf(v->d) || isnan(v->d) || v->d < 0 || v->d >= 18446744073709551616.0)
            return ks__cel_err(c->a, "unsigned integer overflow");
        return mk_uint((uint64_t)v->d);
    case KS_CEL_STRING: {
        uint64_t u;
        bool neg, range;
        if (!parse_go_int(v->s.ptr, v->s.len, true, &u, &neg, &range))
            return ks__cel_err(c->a, "type conversion error from 'string' to 'uint'");
        if (range)
            return ks__cel_err(c->a, "type conversion error from 'string' to 'uint'");
        return mk_uint(u);
    }
    default:
        return ks__cel_err(c->a, "type conversion error from '%s' to 'uint'", ks__cel_type_name(v));
    }
}

static ks_cel_value conv_double(cel_ctx *c, const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_DOUBLE:
        return *v;
    case KS_CEL_INT:
        return mk_double((double)v->i);
    case KS_CEL_UINT:
        return mk_double((double)v->u);
    case KS_CEL_STRING: {
        /* strconv.ParseFloat: no surrounding space, "inf"/"infinity"/"nan" in any case */
        char buf[128];
        if (v->s.len == 0 || v->s.len >= sizeof buf)
            goto bad;
        memcpy(buf, v->s.ptr, v->s.len);
        buf[v->s.len] = 0;
        if (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\n')
            goto bad;
        for (size_t i = 0; i < v->s.len; i++)
            if (buf[i] == '(' || buf[i] == '_')
                goto bad;
        char *end;
        errno = 0;
        double d = strtod(buf, &end);
        if (*end)
            goto bad;
        return mk_double(d);
    bad:
        return ks__cel_err(c->a, "type conversion error from 'string' to 'double'");
    }
    default:
        return ks__cel_err(c->a, "type conversion error from '%s' to 'double'",
                           ks__cel_type_name(v));
    }
}

static ks_cel_value conv_string(cel_ctx *c, const ks_cel_value *v)
{
    char buf[32];
    switch (v->kind) {
    case KS_CEL_STRING:
        return *v;
    case KS_CEL_INT:
        snprintf(buf, sizeof buf, "%" PRId64, v->i);
        return ks_cel_string(c->a, buf);
    case KS_CEL_UINT:
        snprintf(buf, sizeof buf, "%" PRIu64, v->u);
        return ks_cel_string(c->a, buf);
    case KS_CEL_DOUBLE:
        return format_double(c, v->d);
    case KS_CEL_BOOL:
        return ks_cel_string(c->a, v->b ? "true" : "false");
    case KS_CEL_BYTES:
        if (!ks__cel_utf8_valid(v->s.ptr, v->s.len))
            return ks__cel_err(c->a, "invalid UTF-8 in bytes, cannot convert to string");
        return ks__cel_str(c->a, v->s.ptr, v->s.len, KS_CEL_STRING);
    default:
        return ks__cel_err(c->a, "type conversion error from '%s' to 'string'",
                           ks__cel_type_name(v));
    }
}

static ks_cel_value conv_bool(cel_ctx *c, const ks_cel_value *v)
{
    if (v->kind == KS_CEL_BOOL)
        return *v;
    if (v->kind == KS_CEL_STRING) {
        static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
        static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False", NULL};
        for (int i = 0; t[i]; i++) {
            if (strlen(t[i]) == v->s.len && memcmp(t[i], v->s.ptr, v->s.len) == 0)
                return ks_cel_bool(true);
            if (strlen(f[i]) == v->s.len && memcmp(f[i], v->s.ptr, v->s.len) == 0)
                return ks_cel_bool(false);
        }
        return ks__cel_err(c->a, "type conversion error from 'string' to 'bool'");
    }
    return ks__cel_err(c->a, "type conversion error from '%s' to 'bool'", ks__cel_type_name(v));
}

/* ---- lists and sets ------------------------------------------------------------------------ */

static bool list_has(const ks_cel_list *l, const ks_cel_value *v)
{
    for (size_t i = 0; i < l->n; i++)
        if (ks_cel_equal(&l->items[i], v))
            return true;
    return false;
}

static bool zero_value(const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_NULL:
        return true;
    case KS_CEL_BOOL:
        return !v->b;
    case KS_CEL_INT:
        return v->i == 0;
    case KS_CEL_UINT:
        return v->u == 0;
    case KS_CEL_DOUBLE:
        return v->d == 0;
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return v->s.len == 0;
    case KS_CEL_LIST:
        return v->list->n == 0;
    case KS_CEL_MAP:
        return v->map->n == 0;
    default:
        return false;
    }
}

/* Ordering as traits.Comparer: Kubernetes' Quantity and Semver are not Comparers (they have
 * compareTo() instead), so isSorted/min/max/sort refuse them as upstream does. */
static int cmp_for_sort(cel_ctx *c, const ks_cel_value *a, const ks_cel_value *b, bool *ok)
{
    (void)c;
    if (a->kind == KS_CEL_QUANTITY || a->kind == KS_CEL_SEMVER || b->kind == KS_CEL_QUANTITY ||
        b->kind == KS_CEL_SEMVER) {
        *ok = false;
        return 0;
    }
    return ks__cel_compare(a, b, ok);
}

static ks_cel_value list_minmax(cel_ctx *c, const ks_cel_list *l, bool want_max)
{
    if (l->n == 0)
        return ks__cel_err(c->a, "%s called on empty list", want_max ? "max" : "min");
    const ks_cel_value *best = &l->items[0];
    for (size_t i = 1; i < l->n; i++) {
        bool ok;
        int r = cmp_for_sort(c, best, &l->items[i], &ok);
        if (!ok)
            return NSO();
        if ((want_max && r < 0) || (!want_max && r > 0))
            best = &l->items[i];
    }
    return *best;
}

/* ---- the dispatcher ------------------------------------------------------------------------ */

ks_cel_value ks__cel_regex_call(cel_ctx *c, int fn, const ks_cel_value *argv, size_t n);
ks_cel_value ks__cel_kube_call(cel_ctx *c, int fn, const ks_cel_value *argv, size_t n,
                               bool *handled);

uint64_t ks__cel_call_cost(int fn, const ks_cel_value *argv, size_t n, const ks_cel_value *result,
                           bool untyped)
{
    /* cel-go's costCall switches on the overload id; a call on dyn operands with several candidate
     * overloads has none, so it falls to the default cost of 1 */
    if (untyped && (fn == FN_IN || fn == FN_ADD || fn == FN_LT || fn == FN_LE || fn == FN_GT ||
                    fn == FN_GE || fn == FN_STRING || fn == FN_BYTES))
        return 1;
    switch (fn) {
    case FN_STARTS:
    case FN_ENDS:
        return n >= 2 ? ceil_f((double)actual_size(&argv[1]) * 0.1) : 1;
    case FN_BYTES:
        return n >= 1 && argv[0].kind == KS_CEL_STRING ? ceil_f((double)actual_size(&argv[0]) * 0.1)
                                                       : 1;
    case FN_STRING:
        return n >= 1 && argv[0].kind == KS_CEL_BYTES ? ceil_f((double)actual_size(&argv[0]) * 0.1)
                                                      : 1;
    case FN_QUOTE:
    case FN_FORMAT:
        return n >= 1 ? ceil_f((double)actual_size(&argv[0]) * 0.1) : 1;
    case FN_IN:
        return n >= 2 && argv[1].kind == KS_CEL_LIST ? actual_size(&argv[1]) : 1;
    case FN_LT:
    case FN_LE:
    case FN_GT:
    case FN_GE:
    case FN_EQ:
    case FN_NE: {
        if (n < 2)
            return 1;
        if (fn == FN_EQ && (argv[0].kind == KS_CEL_QUANTITY || argv[0].kind == KS_CEL_SEMVER))
            return 1;
        if (fn != FN_EQ && fn != FN_NE &&
            !(argv[0].kind == KS_CEL_STRING || argv[0].kind == KS_CEL_BYTES))
            return 1;
        uint64_t x = actual_size(&argv[0]), y = actual_size(&argv[1]);
        return ceil_f((double)(x < y ? x : y) * 0.1);
    }
    case FN_ADD:
        if (n >= 2 && (argv[0].kind == KS_CEL_STRING || argv[0].kind == KS_CEL_BYTES))
            return ceil_f((double)(actual_size(&argv[0]) + actual_size(&argv[1])) * 0.1);
        return 1;
    case FN_MATCHES:
    case FN_FIND:
    case FN_FINDALL:
        if (n >= 2)
            return ceil_f((1.0 + (double)actual_size(&argv[0])) * 0.1) *
                   ceil_f((double)actual_size(&argv[1]) * 0.25);
        return 1;
    case FN_CONTAINS:
        if (n >= 2 && argv[0].kind == KS_CEL_STRING)
            return ceil_f((double)actual_size(&argv[0]) * 0.1) *
                   ceil_f((double)actual_size(&argv[1]) * 0.1);
        return 1;
    case FN_ISSORTED:
    case FN_SUM:
    case FN_MAX:
    case FN_MIN:
    case FN_INDEXOF:
    case FN_LASTINDEXOF:
    case FN_INCLUDES:
        /* Kubernetes' CallCost matches these by name, for lists and strings alike */
        return n >= 1 ? traversal_cost(&argv[0]) : 0;
    case FN_SETS_CONTAINS:
    case FN_SETS_INTERSECTS:
    case FN_SETS_EQUIV:
        /* cel-go ext/sets.go trackSetsCost: 1 + |a| * |b| * factor (2 for equivalent) */
        if (n < 2)
            return 1;
        return 1 + (uint64_t)((double)(actual_size(&argv[0]) * actual_size(&argv[1])) *
                              (fn == FN_SETS_EQUIV ? 2.0 : 1.0));
    case FN_LOWER:
    case FN_UPPER:
    case FN_SUBSTRING:
    case FN_TRIM:
    case FN_QUANTITY:
    case FN_ISQUANTITY:
    case FN_SEMVER:
    case FN_ISSEMVER:
        return n >= 1 ? ceil_f((double)actual_size(&argv[0]) * 0.1) : 1;
    case FN_REPLACE:
    case FN_SPLIT:
        return n >= 1 ? ceil_f((double)actual_size(&argv[0]) * 2 * 0.1) : 1;
    case FN_JOIN:
        return ceil_f((double)actual_size(result) * 2 * 0.1);
    default:
        return 1;
    }
}

static ks_cel_value call(cel_ctx *c, int fn, bool recv, const ks_cel_value *argv, size_t n);

/* Argument kinds as letters: i u d s b B(ool) l m q(uantity) v (semver) o(ptional) n(ull) t(ype).
 */
static char kind_letter(ks_cel_kind k)
{
    switch (k) {
    case KS_CEL_INT:
        return 'i';
    case KS_CEL_UINT:
        return 'u';
    case KS_CEL_DOUBLE:
        return 'd';
    case KS_CEL_STRING:
        return 's';
    case KS_CEL_BYTES:
        return 'b';
    case KS_CEL_BOOL:
        return 'B';
    case KS_CEL_LIST:
        return 'l';
    case KS_CEL_MAP:
        return 'm';
    case KS_CEL_QUANTITY:
        return 'q';
    case KS_CEL_SEMVER:
        return 'v';
    case KS_CEL_OPTIONAL:
        return 'o';
    case KS_CEL_NULL:
        return 'n';
    default:
        return 't';
    }
}

/* The declared signatures (receiver first), '|' between overloads, '*' any: a call whose
 * arguments match none is refused by cel-go's type guards with "no such overload: f(types)". */
static const char *signatures(int fn)
{
    switch (fn) {
    case FN_CONTAINS:
    case FN_STARTS:
    case FN_ENDS:
    case FN_MATCHES:
    case FN_FIND:
        return "ss";
    case FN_FINDALL:
        return "ss|ssi";
    case FN_CHARAT:
        return "si";
    case FN_INDEXOF:
    case FN_LASTINDEXOF:
        return "ss|ssi|l*";
    case FN_LOWER:
    case FN_UPPER:
    case FN_TRIM:
    case FN_QUOTE:
    case FN_QUANTITY:
    case FN_ISQUANTITY:
        return "s";
    case FN_REPLACE:
        return "sss|sssi";
    case FN_SPLIT:
        return "ss|ssi";
    case FN_SUBSTRING:
        return "si|sii";
    case FN_JOIN:
        return "l|ls";
    case FN_REVERSE:
        return "s|l";
    case FN_INT:
    case FN_UINT:
    case FN_DOUBLE:
        return "i|u|d|s";
    case FN_STRING:
        return "i|u|d|s|b|B";
    case FN_BYTES:
        return "b|s";
    case FN_BOOL:
        return "B|s";
    case FN_SEMVER:
    case FN_ISSEMVER:
        return "s|sB";
    case FN_SIGN:
    case FN_ASINT:
    case FN_ISINT:
    case FN_ASFLOAT:
        return "q";
    case FN_ISGT:
    case FN_ISLT:
    case FN_COMPARETO:
        return "qq|vv";
    case FN_QADD:
    case FN_QSUB:
        return "qq|qi";
    case FN_MAJOR:
    case FN_MINOR:
    case FN_PATCH:
        return "v";
    case FN_ISSORTED:
    case FN_SUM:
    case FN_MIN:
    case FN_MAX:
    case FN_DISTINCT:
    case FN_SORT:
    case FN_FIRST:
    case FN_LAST:
        return "l";
    case FN_FLATTEN:
        return "l|li";
    case FN_SLICE:
        return "lii";
    case FN_SETS_CONTAINS:
    case FN_SETS_EQUIV:
    case FN_SETS_INTERSECTS:
        return "ll";
    case FN_LISTS_RANGE:
        return "i";
    case FN_FORMAT:
        return "sl";
    case FN_HASVALUE:
    case FN_VALUE:
        return "o";
    case FN_ORVALUE:
        return "o*";
    case FN_OR:
        return "oo";
    default:
        return NULL;
    }
}

static bool signature_matches(const char *sig, const ks_cel_value *argv, size_t n)
{
    for (const char *p = sig;;) {
        size_t len = strcspn(p, "|");
        if (len == n) {
            size_t i;
            for (i = 0; i < n; i++)
                if (p[i] != '*' && p[i] != kind_letter(argv[i].kind))
                    break;
            if (i == n)
                return true;
        }
        if (!p[len])
            return false;
        p += len + 1;
    }
}

/* Operators bound as singletons with a trait (cel-go's SingletonBinaryBinding(..., trait)): a lhs
 * without the trait gives "no such overload: <operator>". */
static bool has_trait(int fn, ks_cel_kind k)
{
    switch (fn) {
    case FN_LT:
    case FN_LE:
    case FN_GT:
    case FN_GE:
        return k == KS_CEL_INT || k == KS_CEL_UINT || k == KS_CEL_DOUBLE || k == KS_CEL_STRING ||
               k == KS_CEL_BYTES || k == KS_CEL_BOOL;
    case FN_ADD:
        return k == KS_CEL_INT || k == KS_CEL_UINT || k == KS_CEL_DOUBLE || k == KS_CEL_STRING ||
               k == KS_CEL_BYTES || k == KS_CEL_LIST;
    case FN_SUB:
    case FN_MUL:
    case FN_DIV:
        return k == KS_CEL_INT || k == KS_CEL_UINT || k == KS_CEL_DOUBLE;
    case FN_MOD:
        return k == KS_CEL_INT || k == KS_CEL_UINT;
    case FN_NEG:
        return k == KS_CEL_INT || k == KS_CEL_DOUBLE;
    case FN_SIZE:
        return k == KS_CEL_STRING || k == KS_CEL_BYTES || k == KS_CEL_LIST || k == KS_CEL_MAP;
    default:
        return true;
    }
}

ks_cel_value ks__cel_call(cel_ctx *c, int fn, bool recv, const ks_cel_value *argv, size_t n)
{
    ks_cel_value r;
    const char *sig = fn >= 0 ? signatures(fn) : NULL;
    if (fn >= 0 && n >= 1 && !has_trait(fn, argv[0].kind)) {
        r = ks__cel_err(c->a, "no such overload: %s", ks__cel_fn_name(fn));
    } else if (sig && !signature_matches(sig, argv, n)) {
        char types[256] = "";
        size_t o = 0;
        for (size_t i = 0; i < n && o < sizeof types - 40; i++)
            o += (size_t)snprintf(types + o, sizeof types - o, "%s%s", i ? ", " : "",
                                  ks__cel_type_name(&argv[i]));
        r = ks__cel_err(c->a, "no such overload: %s(%s)", ks__cel_fn_name(fn), types);
    } else {
        r = call(c, fn, recv, argv, n);
    }
    ks__cel_charge(c, ks__cel_call_cost(fn, argv, n, &r, c->untyped));
    return r;
}

static ks_cel_value call(cel_ctx *c, int fn, bool recv, const ks_cel_value *argv, size_t n)
{
    switch (fn) {
    case FN_ADD:
    case FN_SUB:
    case FN_MUL:
    case FN_DIV:
    case FN_MOD:
        if (n != 2)
            return NSO();
        return arith(c, fn, &argv[0], &argv[1]);
    case FN_NEG:
        if (IS(0, KS_CEL_INT)) {
            if (argv[0].i == INT64_MIN)
                return ks__cel_err(c->a, "integer overflow");
            return ks_cel_int(-argv[0].i);
        }
        if (IS(0, KS_CEL_DOUBLE))
            return mk_double(-argv[0].d);
        return NSO();
    case FN_NOT:
        if (IS(0, KS_CEL_BOOL))
            return ks_cel_bool(!argv[0].b);
        return NSO();
    case FN_EQ:
    case FN_NE: {
        ks_cel_value r = ks__cel_go_equal(c->a, &argv[0], &argv[1]);
        /* cel-go's evalNe: Equal(l, r) != True, so an error from Equal makes != true */
        if (fn == FN_NE)
            return ks_cel_bool(!(r.kind == KS_CEL_BOOL && r.b));
        return r;
    }
    case FN_LT:
    case FN_LE:
    case FN_GT:
    case FN_GE: {
        bool ok;
        const ks_cel_value *a = &argv[0], *b = &argv[1];
        bool nums = (a->kind == KS_CEL_INT || a->kind == KS_CEL_UINT || a->kind == KS_CEL_DOUBLE) &&
                    (b->kind == KS_CEL_INT || b->kind == KS_CEL_UINT || b->kind == KS_CEL_DOUBLE);
        if (!nums && (a->kind != b->kind || a->kind == KS_CEL_QUANTITY || a->kind == KS_CEL_SEMVER))
            return NSO(); /* (a lhs without traits.Comparer is caught in ks__cel_call) */
        int r = ks__cel_compare(a, b, &ok);
        if (!ok) {
            if (nums)
                return ks__cel_err(c->a, "NaN values cannot be ordered");
            return NSO();
        }
        switch (fn) {
        case FN_LT:
            return ks_cel_bool(r < 0);
        case FN_LE:
            return ks_cel_bool(r <= 0);
        case FN_GT:
            return ks_cel_bool(r > 0);
        default:
            return ks_cel_bool(r >= 0);
        }
    }
    case FN_IN:
        if (IS(1, KS_CEL_LIST))
            return ks_cel_bool(list_has(argv[1].list, &argv[0]));
        if (IS(1, KS_CEL_MAP))
            return ks_cel_bool(ks__cel_map_get(argv[1].map, &argv[0]) != NULL);
        return NSO();
    case FN_SIZE:
        if (n != 1)
            return NSO();
        if (IS(0, KS_CEL_STRING))
            return ks_cel_int((int64_t)ks__cel_utf8_len(argv[0].s.ptr, argv[0].s.len));
        if (IS(0, KS_CEL_BYTES))
            return ks_cel_int((int64_t)argv[0].s.len);
        if (IS(0, KS_CEL_LIST))
            return ks_cel_int((int64_t)argv[0].list->n);
        if (IS(0, KS_CEL_MAP))
            return ks_cel_int((int64_t)argv[0].map->n);
        return NSO();
    case FN_INT:
        return n == 1 ? conv_int(c, &argv[0]) : NSO();
    case FN_UINT:
        return n == 1 ? conv_uint(c, &argv[0]) : NSO();
    case FN_DOUBLE:
        return n == 1 ? conv_double(c, &argv[0]) : NSO();
    case FN_STRING:
        return n == 1 ? conv_string(c, &argv[0]) : NSO();
    case FN_BOOL:
        return n == 1 ? conv_bool(c, &argv[0]) : NSO();
    case FN_BYTES:
        if (n != 1)
            return NSO();
        if (IS(0, KS_CEL_BYTES))
            return argv[0];
        if (IS(0, KS_CEL_STRING))
            return ks__cel_str(c->a, argv[0].s.ptr, argv[0].s.len, KS_CEL_BYTES);
        return ks__cel_err(c->a, "type conversion error from '%s' to 'bytes'",
                           ks__cel_type_name(&argv[0]));
    case FN_TYPE:
        if (n != 1)
            return NSO();
        return ks__cel_type(ks__cel_type_name(&argv[0]));
    case FN_DYN:
        return n == 1 ? argv[0] : NSO();
    case FN_CONTAINS:
    case FN_STARTS:
    case FN_ENDS: {
        if (n != 2 || !IS(0, KS_CEL_STRING) || !IS(1, KS_CEL_STRING))
            return NSO();
        const ks_cel_value *s = &argv[0], *t = &argv[1];
        if (fn == FN_CONTAINS)
            return ks_cel_bool(memfind(s->s.ptr, s->s.len, t->s.ptr, t->s.len) != NULL);
        if (t->s.len > s->s.len)
            return ks_cel_bool(false);
        if (fn == FN_STARTS)
            return ks_cel_bool(memcmp(s->s.ptr, t->s.ptr, t->s.len) == 0);
        return ks_cel_bool(memcmp(s->s.ptr + s->s.len - t->s.len, t->s.ptr, t->s.len) == 0);
    }
    case FN_MATCHES:
    case FN_FIND:
    case FN_FINDALL:
        return ks__cel_regex_call(c, fn, argv, n);
    case FN_CHARAT: {
        if (n != 2 || !IS(0, KS_CEL_STRING) || !IS(1, KS_CEL_INT))
            return NSO();
        uint32_t *r;
        size_t k = decode(c, argv[0].s.ptr, argv[0].s.len, &r);
        int64_t i = argv[1].i;
        if (i < 0 || (uint64_t)i > k)
            return ks__cel_err(c->a, "index out of range: %" PRId64, i);
        if ((size_t)i == k)
            return substr_val(c, "", 0);
        return encode(c, r + i, 1);
    }
    case FN_INDEXOF:
    case FN_LASTINDEXOF: {
        if (IS(0, KS_CEL_LIST)) {
            if (n != 2)
                return NSO();
            const ks_cel_list *l = argv[0].list;
            if (fn == FN_INDEXOF) {
                for (size_t i = 0; i < l->n; i++)
                    if (ks_cel_equal(&l->items[i], &argv[1]))
                        return ks_cel_int((int64_t)i);
            } else {
                for (size_t i = l->n; i-- > 0;)
                    if (ks_cel_equal(&l->items[i], &argv[1]))
                        return ks_cel_int((int64_t)i);
            }
            return ks_cel_int(-1);
        }
        if (!IS(0, KS_CEL_STRING) || n < 2 || !IS(1, KS_CEL_STRING) ||
            (n == 3 && !IS(2, KS_CEL_INT)) || n > 3)
            return NSO();
        uint32_t *s, *t;
        size_t sn = decode(c, argv[0].s.ptr, argv[0].s.len, &s);
        size_t tn = decode(c, argv[1].s.ptr, argv[1].s.len, &t);
        int64_t off;
        if (fn == FN_INDEXOF) {
            off = n == 3 ? argv[2].i : 0;
            if (off < 0)
                return ks__cel_err(c->a, "index out of range: %" PRId64, off);
            if (tn == 0)
                return ks_cel_int(off > (int64_t)sn ? (int64_t)sn : off);
            if (off >= (int64_t)sn)
                return ks_cel_int(-1);
            for (int64_t i = off; i + (int64_t)tn <= (int64_t)sn; i++)
                if (memcmp(s + i, t, tn * sizeof(uint32_t)) == 0)
                    return ks_cel_int(i);
            return ks_cel_int(-1);
        }
        if (n == 2) {
            if (tn == 0)
                return ks_cel_int((int64_t)sn);
            if (argv[0].s.len < argv[1].s.len)
                return ks_cel_int(-1);
            off = (int64_t)sn - 1;
        } else {
            off = argv[2].i;
        }
        if (off < 0)
            return ks__cel_err(c->a, "index out of range: %" PRId64, off);
        if (tn == 0)
            return ks_cel_int(off > (int64_t)sn ? (int64_t)sn : off);
        if (off >= (int64_t)sn)
            return ks_cel_int(-1);
        if (off > (int64_t)sn - (int64_t)tn)
            off = (int64_t)sn - (int64_t)tn;
        for (int64_t i = off; i >= 0; i--)
            if (memcmp(s + i, t, tn * sizeof(uint32_t)) == 0)
                return ks_cel_int(i);
        return ks_cel_int(-1);
    }
    case FN_LOWER:
    case FN_UPPER: {
        if (n != 1 || !IS(0, KS_CEL_STRING))
            return NSO();
        ks_cel_value r = ks__cel_str(c->a, argv[0].s.ptr, argv[0].s.len, KS_CEL_STRING);
        char *p = (char *)r.s.ptr;
        for (size_t i = 0; i < r.s.len; i++) {
            if (fn == FN_LOWER && p[i] >= 'A' && p[i] <= 'Z')
                p[i] = (char)(p[i] + 32);
            if (fn == FN_UPPER && p[i] >= 'a' && p[i] <= 'z')
                p[i] = (char)(p[i] - 32);
        }
        return r;
    }
    case FN_REPLACE: {
        if (n < 3 || n > 4 || !IS(0, KS_CEL_STRING) || !IS(1, KS_CEL_STRING) ||
            !IS(2, KS_CEL_STRING) || (n == 4 && !IS(3, KS_CEL_INT)))
            return NSO();
        int64_t limit = n == 4 ? argv[3].i : -1;
        const char *s = argv[0].s.ptr;
        size_t sl = argv[0].s.len, ol = argv[1].s.len, nl = argv[2].s.len;
        /* Go's strings.Replace: an empty old matches before every rune and at the end */
        size_t cap = sl + 1 + (ol ? (sl / ol + 1) * nl : (sl + 1) * nl);
        char *out = ks__mempool_alloc(c->a, cap + 1);
        size_t o = 0, i = 0;
        int64_t done = 0;
        while (i <= sl) {
            if (limit >= 0 && done >= limit)
                break;
            const char *m = ol ? memfind(s + i, sl - i, argv[1].s.ptr, ol) : s + i;
            if (!m)
                break;
            size_t at = (size_t)(m - s);
            memcpy(out + o, s + i, at - i);
            o += at - i;
            memcpy(out + o, argv[2].s.ptr, nl);
            o += nl;
            done++;
            if (ol) {
                i = at + ol;
            } else {
                if (at >= sl) {
                    i = sl + 1;
                    break;
                }
                size_t cl = 1;
                while (at + cl < sl && ((unsigned char)s[at + cl] & 0xC0) == 0x80)
                    cl++;
                memcpy(out + o, s + at, cl);
                o += cl;
                i = at + cl;
            }
        }
        if (i < sl) {
            memcpy(out + o, s + i, sl - i);
            o += sl - i;
        }
        ks_cel_value r = {.kind = KS_CEL_STRING};
        r.s.ptr = out;
        r.s.len = o;
        return r;
    }
    case FN_SPLIT: {
        if (n < 2 || n > 3 || !IS(0, KS_CEL_STRING) || !IS(1, KS_CEL_STRING) ||
            (n == 3 && !IS(2, KS_CEL_INT)))
            return NSO();
        int64_t limit = n == 3 ? argv[2].i : -1;
        if (limit == 0)
            return mk_list(c, NULL, 0);
        const char *s = argv[0].s.ptr;
        size_t sl = argv[0].s.len, pl = argv[1].s.len;
        ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (sl + 2));
        size_t k = 0, i = 0;
        if (pl == 0) {
            while (i < sl) {
                size_t cl = 1;
                while (i + cl < sl && ((unsigned char)s[i + cl] & 0xC0) == 0x80)
                    cl++;
                if (limit > 0 && (int64_t)k == limit - 1)
                    cl = sl - i;
                items[k++] = substr_val(c, s + i, cl);
                i += cl;
            }
            return mk_list(c, items, k);
        }
        for (;;) {
            const char *m = (limit < 0 || (int64_t)k < limit - 1)
                                ? memfind(s + i, sl - i, argv[1].s.ptr, pl)
                                : NULL;
            if (!m) {
                items[k++] = substr_val(c, s + i, sl - i);
                break;
            }
            items[k++] = substr_val(c, s + i, (size_t)(m - (s + i)));
            i = (size_t)(m - s) + pl;
        }
        return mk_list(c, items, k);
    }
    case FN_SUBSTRING: {
        if (n < 2 || n > 3 || !IS(0, KS_CEL_STRING) || !IS(1, KS_CEL_INT) ||
            (n == 3 && !IS(2, KS_CEL_INT)))
            return NSO();
        uint32_t *r;
        int64_t k = (int64_t)decode(c, argv[0].s.ptr, argv[0].s.len, &r);
        int64_t st = argv[1].i, en = n == 3 ? argv[2].i : k;
        if (n == 3 && st > en)
            return ks__cel_err(c->a, "invalid substring range. start: %" PRId64 ", end: %" PRId64,
                               st, en);
        if (st < 0 || st > k)
            return ks__cel_err(c->a, "index out of range: %" PRId64, st);
        if (en < 0 || en > k)
            return ks__cel_err(c->a, "index out of range: %" PRId64, en);
        return encode(c, r + st, (size_t)(en - st));
    }
    case FN_TRIM: {
        if (n != 1 || !IS(0, KS_CEL_STRING))
            return NSO();
        uint32_t *r;
        size_t k = decode(c, argv[0].s.ptr, argv[0].s.len, &r);
        size_t b = 0, e = k;
        while (b < e && go_space(r[b]))
            b++;
        while (e > b && go_space(r[e - 1]))
            e--;
        return encode(c, r + b, e - b);
    }
    case FN_JOIN: {
        if (n < 1 || n > 2 || !IS(0, KS_CEL_LIST) || (n == 2 && !IS(1, KS_CEL_STRING)))
            return NSO();
        const ks_cel_list *l = argv[0].list;
        size_t total = 0, sepl = n == 2 ? argv[1].s.len : 0;
        for (size_t i = 0; i < l->n; i++) {
            if (l->items[i].kind != KS_CEL_STRING)
                return NSO();
            total += l->items[i].s.len + sepl;
        }
        char *out = ks__mempool_alloc(c->a, total + 1);
        size_t o = 0;
        for (size_t i = 0; i < l->n; i++) {
            if (i && sepl) {
                memcpy(out + o, argv[1].s.ptr, sepl);
                o += sepl;
            }
            memcpy(out + o, l->items[i].s.ptr, l->items[i].s.len);
            o += l->items[i].s.len;
        }
        ks_cel_value r = {.kind = KS_CEL_STRING};
        r.s.ptr = out;
        r.s.len = o;
        return r;
    }
    case FN_REVERSE: {
        if (n != 1)
            return NSO();
        if (IS(0, KS_CEL_STRING)) {
            uint32_t *r;
            size_t k = decode(c, argv[0].s.ptr, argv[0].s.len, &r);
            for (size_t i = 0; i < k / 2; i++) {
                uint32_t t = r[i];
                r[i] = r[k - 1 - i];
                r[k - 1 - i] = t;
            }
            return encode(c, r, k);
        }
        if (IS(0, KS_CEL_LIST)) {
            size_t k = argv[0].list->n;
            ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (k ? k : 1));
            for (size_t i = 0; i < k; i++)
                items[i] = argv[0].list->items[k - 1 - i];
            return mk_list(c, items, k);
        }
        return NSO();
    }
    case FN_QUOTE: {
        if (n != 1 || !IS(0, KS_CEL_STRING))
            return NSO();
        const ks_cel_value *s = &argv[0];
        char *out = ks__mempool_alloc(c->a, s->s.len * 4 + 3);
        size_t o = 0;
        out[o++] = '"';
        for (size_t i = 0; i < s->s.len; i++) {
            char ch = s->s.ptr[i];
            const char *esc = NULL;
            switch (ch) {
            case '\a':
                esc = "\\a";
                break;
            case '\b':
                esc = "\\b";
                break;
            case '\f':
                esc = "\\f";
                break;
            case '\n':
                esc = "\\n";
                break;
            case '\r':
                esc = "\\r";
                break;
            case '\t':
                esc = "\\t";
                break;
            case '\v':
                esc = "\\v";
                break;
            case '\\':
                esc = "\\\\";
                break;
            case '"':
                esc = "\\\"";
                break;
            default:
                break;
            }
            if (esc) {
                out[o++] = esc[0];
                out[o++] = esc[1];
            } else {
                out[o++] = ch;
            }
        }
        out[o++] = '"';
        ks_cel_value r = {.kind = KS_CEL_STRING};
        r.s.ptr = out;
        r.s.len = o;
        return r;
    }
    case FN_OPT_OF: {
        if (n != 1)
            return NSO();
        ks_cel_value *p = ks__mempool_alloc(c->a, sizeof *p);
        *p = argv[0];
        ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = p};
        return r;
    }
    case FN_OPT_OFNZ: {
        if (n != 1)
            return NSO();
        if (zero_value(&argv[0])) {
            ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = NULL};
            return r;
        }
        ks_cel_value *p = ks__mempool_alloc(c->a, sizeof *p);
        *p = argv[0];
        ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = p};
        return r;
    }
    case FN_OPT_NONE: {
        if (n != 0)
            return NSO();
        ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = NULL};
        return r;
    }
    case FN_HASVALUE:
        if (n != 1 || !IS(0, KS_CEL_OPTIONAL))
            return NSO();
        return ks_cel_bool(argv[0].opt != NULL);
    case FN_VALUE:
        if (n != 1 || !IS(0, KS_CEL_OPTIONAL))
            return NSO();
        if (!argv[0].opt)
            return ks__cel_err(c->a, "optional.none() dereference");
        return *argv[0].opt;
    case FN_ORVALUE:
        if (n != 2 || !IS(0, KS_CEL_OPTIONAL))
            return NSO();
        return argv[0].opt ? *argv[0].opt : argv[1];
    case FN_OR:
        if (n != 2 || !IS(0, KS_CEL_OPTIONAL) || !IS(1, KS_CEL_OPTIONAL))
            return NSO();
        return argv[0].opt ? argv[0] : argv[1];
    case FN_FIRST:
    case FN_LAST: {
        if (n != 1 || !IS(0, KS_CEL_LIST))
            return NSO();
        const ks_cel_list *l = argv[0].list;
        if (l->n == 0) {
            ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = NULL};
            return r;
        }
        ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = &l->items[fn == FN_FIRST ? 0 : l->n - 1]};
        return r;
    }
    case FN_ISSORTED: {
        if (n != 1 || !IS(0, KS_CEL_LIST))
            return NSO();
        const ks_cel_list *l = argv[0].list;
        for (size_t i = 1; i < l->n; i++) {
            bool ok;
            int r = cmp_for_sort(c, &l->items[i - 1], &l->items[i], &ok);
            if (!ok)
                return NSO();
            if (r > 0)
                return ks_cel_bool(false);
        }
        return ks_cel_bool(true);
    }
    case FN_SUM: {
        if (n != 1 || !IS(0, KS_CEL_LIST))
            return NSO();
        const ks_cel_list *l = argv[0].list;
        if (l->n == 0)
            return ks_cel_int(0);
        ks_cel_value acc = l->items[0];
        for (size_t i = 1; i < l->n; i++) {
            acc = arith(c, FN_ADD, &acc, &l->items[i]);
            if (acc.kind == KS_CEL_ERROR)
                return acc;
        }
        return acc;
    }
    case FN_MIN:
    case FN_MAX:
        if (n != 1 || !IS(0, KS_CEL_LIST))
            return NSO();
        return list_minmax(c, argv[0].list, fn == FN_MAX);
    case FN_INCLUDES:
        if (n != 2)
            return NSO();
        if (IS(0, KS_CEL_LIST))
            return ks_cel_bool(list_has(argv[0].list, &argv[1]));
        return ks_cel_bool(ks_cel_equal(&argv[0], &argv[1]));
    case FN_SETS_CONTAINS:
    case FN_SETS_EQUIV:
    case FN_SETS_INTERSECTS: {
        if (n != 2 || !IS(0, KS_CEL_LIST) || !IS(1, KS_CEL_LIST))
            return NSO();
        const ks_cel_list *a = argv[0].list, *b = argv[1].list;
        if (fn == FN_SETS_INTERSECTS) {
            for (size_t i = 0; i < b->n; i++)
                if (list_has(a, &b->items[i]))
                    return ks_cel_bool(true);
            return ks_cel_bool(false);
        }
        for (size_t i = 0; i < b->n; i++)
            if (!list_has(a, &b->items[i]))
                return ks_cel_bool(false);
        if (fn == FN_SETS_EQUIV)
            for (size_t i = 0; i < a->n; i++)
                if (!list_has(b, &a->items[i]))
                    return ks_cel_bool(false);
        return ks_cel_bool(true);
    }
    case FN_DISTINCT: {
        if (n != 1 || !IS(0, KS_CEL_LIST))
            return NSO();
        const ks_cel_list *l = argv[0].list;
        ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (l->n ? l->n : 1));
        ks_cel_list tmp = {0, items};
        for (size_t i = 0; i < l->n; i++)
            if (!list_has(&tmp, &l->items[i]))
                items[tmp.n++] = l->items[i];
        return mk_list(c, items, tmp.n);
    }
    case FN_FLATTEN: {
        if (n < 1 || n > 2 || !IS(0, KS_CEL_LIST) || (n == 2 && !IS(1, KS_CEL_INT)))
            return NSO();
        int64_t depth = n == 2 ? argv[1].i : 1;
        if (depth < 0)
            return ks__cel_err(c->a, "level must be non-negative");
        ks_cel_value cur = argv[0];
        for (int64_t d = 0; d < depth; d++) {
            size_t total = 0;
            for (size_t i = 0; i < cur.list->n; i++)
                total += cur.list->items[i].kind == KS_CEL_LIST ? cur.list->items[i].list->n : 1;
            ks_cel_value *items =
                ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (total ? total : 1));
            size_t k = 0;
            bool any = false;
            for (size_t i = 0; i < cur.list->n; i++) {
                const ks_cel_value *e = &cur.list->items[i];
                if (e->kind == KS_CEL_LIST) {
                    any = true;
                    for (size_t j = 0; j < e->list->n; j++)
                        items[k++] = e->list->items[j];
                } else {
                    items[k++] = *e;
                }
            }
            cur = mk_list(c, items, k);
            if (!any)
                break;
        }
        return cur;
    }
    case FN_SLICE: {
        if (n != 3 || !IS(0, KS_CEL_LIST) || !IS(1, KS_CEL_INT) || !IS(2, KS_CEL_INT))
            return NSO();
        int64_t st = argv[1].i, en = argv[2].i, k = (int64_t)argv[0].list->n;
        if (st < 0 || en < 0)
            return ks__cel_err(
                c->a, "cannot slice(%" PRId64 ", %" PRId64 "), negative indexes not supported", st,
                en);
        if (st > en)
            return ks__cel_err(c->a,
                               "cannot slice(%" PRId64 ", %" PRId64
                               "), start index must be less than or equal to end index",
                               st, en);
        if (en > k)
            return ks__cel_err(
                c->a, "cannot slice(%" PRId64 ", %" PRId64 "), list is length %" PRId64, st, en, k);
        return mk_list(c, (ks_cel_value *)argv[0].list->items + st, (size_t)(en - st));
    }
    case FN_SORT: {
        if (n != 1 || !IS(0, KS_CEL_LIST))
            return NSO();
        size_t k = argv[0].list->n;
        ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (k ? k : 1));
        if (k)
            memcpy(items, argv[0].list->items, sizeof(ks_cel_value) * k);
        for (size_t i = 1; i < k; i++) { /* stable insertion sort; lists here are small */
            ks_cel_value x = items[i];
            size_t j = i;
            while (j > 0) {
                bool ok;
                if (items[j - 1].kind != x.kind &&
                    !((x.kind == KS_CEL_INT || x.kind == KS_CEL_UINT || x.kind == KS_CEL_DOUBLE)))
                    return ks__cel_err(c->a, "list elements must have the same type");
                int r = cmp_for_sort(c, &items[j - 1], &x, &ok);
                if (!ok)
                    return ks__cel_err(c->a, "list elements must be comparable");
                if (r <= 0)
                    break;
                items[j] = items[j - 1];
                j--;
            }
            items[j] = x;
        }
        return mk_list(c, items, k);
    }
    case FN_LISTS_RANGE: {
        if (n != 1 || !IS(0, KS_CEL_INT))
            return NSO();
        int64_t k = argv[0].i < 0 ? 0 : argv[0].i;
        if (k > 1000000)
            return ks__cel_err(c->a, "lists.range: size too large");
        ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (size_t)(k ? k : 1));
        for (int64_t i = 0; i < k; i++)
            items[i] = ks_cel_int(i);
        return mk_list(c, items, (size_t)k);
    }
    case FN_MAPINSERT: { /* transformMap's step: a copy of the map with one more entry */
        if (n != 3 || !IS(0, KS_CEL_MAP))
            return NSO();
        const ks_cel_map *m = argv[0].map;
        if (ks__cel_map_get(m, &argv[1]))
            return ks__cel_err(c->a, "insert failed: key %s already exists",
                               ks_cel_format(c->a, &argv[1]));
        ks_cel_value *keys = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (m->n + 1));
        ks_cel_value *vals = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (m->n + 1));
        if (m->n) {
            memcpy(keys, m->keys, sizeof(ks_cel_value) * m->n);
            memcpy(vals, m->vals, sizeof(ks_cel_value) * m->n);
        }
        keys[m->n] = argv[1];
        vals[m->n] = argv[2];
        ks_cel_map *nm = ks__mempool_alloc(c->a, sizeof *nm);
        nm->n = m->n + 1;
        nm->keys = keys;
        nm->vals = vals;
        ks_cel_value r = {.kind = KS_CEL_MAP, .map = nm};
        return r;
    }
    case FN_FORMAT:
        if (n != 2 || !IS(0, KS_CEL_STRING) || !IS(1, KS_CEL_LIST))
            return NSO();
        return ks__cel_format(c, &argv[0], argv[1].list);
    default: {
        bool handled = false;
        ks_cel_value r = ks__cel_kube_call(c, fn, argv, n, &handled);
        if (handled)
            return r;
        (void)recv;
        return NSO();
    }
    }
}
