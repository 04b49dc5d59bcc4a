/*
 * CEL values: construction, heterogeneous equality and ordering (cel-spec "Equality" and
 * "Ordering"; cel-go's CrossTypeNumericComparisons, which Kubernetes enables), and a debug
 * rendering used in error messages and tests.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_internal.h"

ks_cel_value ks_cel_int(int64_t i)
{
    ks_cel_value v = {.kind = KS_CEL_INT, .i = i};
    return v;
}

ks_cel_value ks_cel_bool(bool b)
{
    ks_cel_value v = {.kind = KS_CEL_BOOL, .b = b};
    return v;
}

ks_cel_value ks__cel_str(ks_mempool *a, const char *s, size_t n, ks_cel_kind kind)
{
    ks_cel_value v = {.kind = kind};
    char *p = ks__mempool_alloc(a, n + 1);
    if (p && n)
        memcpy(p, s, n);
    v.s.ptr = p ? p : "";
    v.s.len = p ? n : 0;
    return v;
}

ks_cel_value ks_cel_string(ks_mempool *a, const char *s)
{
    return ks__cel_str(a, s, strlen(s), KS_CEL_STRING);
}

ks_cel_value ks__cel_type(const char *name)
{
    ks_cel_value v = {.kind = KS_CEL_TYPE};
    v.s.ptr = name;
    v.s.len = strlen(name);
    return v;
}

ks_cel_value ks__cel_err(ks_mempool *a, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    return ks__cel_str(a, buf, (size_t)n, KS_CEL_ERROR);
}

const char *ks__cel_type_name(const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_NULL:
        return "null_type";
    case KS_CEL_BOOL:
        return "bool";
    case KS_CEL_INT:
        return "int";
    case KS_CEL_UINT:
        return "uint";
    case KS_CEL_DOUBLE:
        return "double";
    case KS_CEL_STRING:
        return "string";
    case KS_CEL_BYTES:
        return "bytes";
    case KS_CEL_LIST:
        return "list";
    case KS_CEL_MAP:
        return "map";
    case KS_CEL_OPTIONAL:
        return "optional_type";
    case KS_CEL_TYPE:
        return "type";
    case KS_CEL_QUANTITY:
        return "kubernetes.Quantity";
    case KS_CEL_SEMVER:
        return "kubernetes.Semver";
    case KS_CEL_ERROR:
        return "error";
    }
    return "unknown";
}

size_t ks__cel_utf8_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    return c;
}

bool ks__cel_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + k >= n)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (p[i + j] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + j] & 0x3F);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
            return false;
        i += k + 1;
    }
    return true;
}

static bool is_num(ks_cel_kind k)
{
    return k == KS_CEL_INT || k == KS_CEL_UINT || k == KS_CEL_DOUBLE;
}

/* Exact comparison of two numbers of any CEL numeric kinds; *ok false when a NaN is involved. */
static int num_cmp(const ks_cel_value *a, const ks_cel_value *b, bool *ok)
{
    *ok = true;
    if (a->kind == KS_CEL_DOUBLE || b->kind == KS_CEL_DOUBLE) {
        if (a->kind == KS_CEL_DOUBLE && b->kind == KS_CEL_DOUBLE) {
            if (isnan(a->d) || isnan(b->d)) {
                *ok = false;
                return 0;
            }
            return a->d < b->d ? -1 : a->d > b->d ? 1 : 0;
        }
        /* double vs integer as cel-go's compareDoubleInt/compareDoubleUint: out-of-range
         * doubles order first, the rest compare after converting the integer to double (so
         * 9223372036854775807 == 9223372036854775808.0, as upstream) */
        bool swap = a->kind != KS_CEL_DOUBLE;
        const ks_cel_value *d = swap ? b : a, *n = swap ? a : b;
        int r;
        if (isnan(d->d)) {
            *ok = false;
            return 0;
        }
        double nd = n->kind == KS_CEL_INT ? (double)n->i : (double)n->u;
        if (n->kind == KS_CEL_INT && d->d < -9223372036854775808.0)
            r = -1;
        else if (n->kind == KS_CEL_INT && d->d > 9223372036854775807.0)
            r = 1;
        else if (n->kind == KS_CEL_UINT && d->d < 0)
            r = -1;
        else if (n->kind == KS_CEL_UINT && d->d > 18446744073709551615.0)
            r = 1;
        else
            r = d->d < nd ? -1 : d->d > nd ? 1 : 0;
        return swap ? -r : r;
    }
    if (a->kind == KS_CEL_INT && b->kind == KS_CEL_INT)
        return a->i < b->i ? -1 : a->i > b->i;
    if (a->kind == KS_CEL_UINT && b->kind == KS_CEL_UINT)
        return a->u < b->u ? -1 : a->u > b->u;
    if (a->kind == KS_CEL_INT) { /* int vs uint */
        if (a->i < 0)
            return -1;
        return (uint64_t)a->i < b->u ? -1 : (uint64_t)a->i > b->u;
    }
    if (b->i < 0)
        return 1;
    return a->u < (uint64_t)b->i ? -1 : a->u > (uint64_t)b->i;
}

static int bytes_cmp(const ks_cel_value *a, const ks_cel_value *b)
{
    size_t n = a->s.len < b->s.len ? a->s.len : b->s.len;
    int c = n ? memcmp(a->s.ptr, b->s.ptr, n) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return a->s.len < b->s.len ? -1 : a->s.len > b->s.len;
}

int ks__cel_compare(const ks_cel_value *a, const ks_cel_value *b, bool *ok)
{
    *ok = true;
    if (is_num(a->kind) && is_num(b->kind))
        return num_cmp(a, b, ok);
    if (a->kind != b->kind) {
        *ok = false;
        return 0;
    }
    switch (a->kind) {
    case KS_CEL_BOOL:
        return a->b == b->b ? 0 : a->b ? 1 : -1;
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return bytes_cmp(a, b);
    case KS_CEL_QUANTITY:
        return ks__cel_quantity_cmp(a->q, b->q);
    case KS_CEL_SEMVER:
        return ks__cel_semver_cmp(a->sv, b->sv);
    default:
        *ok = false;
        return 0;
    }
}

bool ks_cel_equal(const ks_cel_value *a, const ks_cel_value *b)
{
    if (is_num(a->kind) && is_num(b->kind)) {
        bool ok;
        int c = num_cmp(a, b, &ok);
        return ok && c == 0;
    }
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KS_CEL_NULL:
        return true;
    case KS_CEL_BOOL:
        return a->b == b->b;
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
    case KS_CEL_TYPE:
        return a->s.len == b->s.len && memcmp(a->s.ptr, b->s.ptr, a->s.len) == 0;
    case KS_CEL_LIST:
        if (a->list->n != b->list->n)
            return false;
        for (size_t i = 0; i < a->list->n; i++)
            if (!ks_cel_equal(&a->list->items[i], &b->list->items[i]))
                return false;
        return true;
    case KS_CEL_MAP:
        if (a->map->n != b->map->n)
            return false;
        for (size_t i = 0; i < a->map->n; i++) {
            size_t j;
            for (j = 0; j < b->map->n; j++)
                if (ks_cel_equal(&a->map->keys[i], &b->map->keys[j]))
                    break;
            if (j == b->map->n || !ks_cel_equal(&a->map->vals[i], &b->map->vals[j]))
                return false;
        }
        return true;
    case KS_CEL_OPTIONAL:
        if (!a->opt || !b->opt)
            return a->opt == b->opt;
        return ks_cel_equal(a->opt, b->opt);
    case KS_CEL_QUANTITY:
        return ks__cel_quantity_cmp(a->q, b->q) == 0;
    case KS_CEL_SEMVER:
        return ks__cel_semver_cmp(a->sv, b->sv) == 0;
    default:
        return false;
    }
}

/* ---- rendering ---------------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *np = realloc(b->p, cap);
        if (!np)
            return;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sb_put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void fmt_value(sbuf *b, const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_NULL:
        sb_put(b, "null", 4);
        break;
    case KS_CEL_BOOL:
        sb_put(b, v->b ? "true" : "false", v->b ? 4 : 5);
        break;
    case KS_CEL_INT:
        sb_printf(b, "%" PRId64, v->i);
        break;
    case KS_CEL_UINT:
        sb_printf(b, "%" PRIu64 "u", v->u);
        break;
    case KS_CEL_DOUBLE:
        sb_printf(b, "%.17g", v->d);
        break;
    case KS_CEL_STRING:
        sb_put(b, "\"", 1);
        sb_put(b, v->s.ptr, v->s.len);
        sb_put(b, "\"", 1);
        break;
    case KS_CEL_BYTES:
        sb_put(b, "b\"", 2);
        for (size_t i = 0; i < v->s.len; i++) {
            unsigned char c = (unsigned char)v->s.ptr[i];
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                sb_put(b, (const char *)&c, 1);
            else
                sb_printf(b, "\\x%02x", c);
        }
        sb_put(b, "\"", 1);
        break;
    case KS_CEL_LIST:
        sb_put(b, "[", 1);
        for (size_t i = 0; i < v->list->n; i++) {
            if (i)
                sb_put(b, ", ", 2);
            fmt_value(b, &v->list->items[i]);
        }
        sb_put(b, "]", 1);
        break;
    case KS_CEL_MAP:
        sb_put(b, "{", 1);
        for (size_t i = 0; i < v->map->n; i++) {
            if (i)
                sb_put(b, ", ", 2);
            fmt_value(b, &v->map->keys[i]);
            sb_put(b, ": ", 2);
            fmt_value(b, &v->map->vals[i]);
        }
        sb_put(b, "}", 1);
        break;
    case KS_CEL_OPTIONAL:
        if (!v->opt) {
            sb_put(b, "optional.none()", 15);
        } else {
            sb_put(b, "optional.of(", 12);
            fmt_value(b, v->opt);
            sb_put(b, ")", 1);
        }
        break;
    case KS_CEL_TYPE:
        sb_put(b, v->s.ptr, v->s.len);
        break;
    case KS_CEL_QUANTITY:
        sb_printf(b, "quantity(\"%s", v->q->neg ? "-" : "");
        sb_put(b, v->q->ndigits ? v->q->digits : "0", v->q->ndigits ? v->q->ndigits : 1);
        if (v->q->exp)
            sb_printf(b, "e%d", v->q->exp);
        sb_put(b, "\")", 2);
        break;
    case KS_CEL_SEMVER:
        sb_printf(b, "semver(\"%" PRIu64 ".%" PRIu64 ".%" PRIu64 "%s%s%s%s\")", v->sv->major,
                  v->sv->minor, v->sv->patch, *v->sv->pre ? "-" : "", v->sv->pre,
                  *v->sv->build ? "+" : "", v->sv->build);
        break;
    case KS_CEL_ERROR:
        sb_put(b, "error(", 6);
        sb_put(b, v->s.ptr, v->s.len);
        sb_put(b, ")", 1);
        break;
    }
}

const char *ks_cel_format(ks_mempool *a, const ks_cel_value *v)
{
    sbuf b = {0};
    fmt_value(&b, v);
    const char *r = "";
    if (b.p) {
        r = ks__cel_str(a, b.p, b.n, KS_CEL_STRING).s.ptr;
        free(b.p);
    }
    return r;
}

ks_cel_value ks__cel_go_equal(ks_mempool *a, const ks_cel_value *x, const ks_cel_value *y)
{
    if (x->kind == KS_CEL_NULL || y->kind == KS_CEL_NULL)
        return ks_cel_bool(x->kind == y->kind);
    if (x->kind == KS_CEL_QUANTITY) {
        if (y->kind != KS_CEL_QUANTITY || y->q->boxed)
            return ks__cel_err(a, "no such overload");
        return ks_cel_bool(ks__cel_quantity_cmp(x->q, y->q) == 0);
    }
    if (x->kind == KS_CEL_SEMVER) {
        if (y->kind != KS_CEL_SEMVER)
            return ks__cel_err(a, "no such overload");
        return ks_cel_bool(ks__cel_semver_cmp(x->sv, y->sv) == 0);
    }
    if (x->kind == KS_CEL_LIST && y->kind == KS_CEL_LIST) {
        if (x->list->n != y->list->n)
            return ks_cel_bool(false);
        for (size_t i = 0; i < x->list->n; i++) {
            ks_cel_value r = ks__cel_go_equal(a, &x->list->items[i], &y->list->items[i]);
            if (r.kind == KS_CEL_BOOL && !r.b)
                return r;
        }
        return ks_cel_bool(true);
    }
    if (x->kind == KS_CEL_MAP && y->kind == KS_CEL_MAP) {
        if (x->map->n != y->map->n)
            return ks_cel_bool(false);
        for (size_t i = 0; i < x->map->n; i++) {
            size_t j;
            for (j = 0; j < y->map->n; j++)
                if (ks_cel_equal(&x->map->keys[i], &y->map->keys[j]))
                    break;
            if (j == y->map->n)
                return ks_cel_bool(false);
            ks_cel_value r = ks__cel_go_equal(a, &x->map->vals[i], &y->map->vals[j]);
            if (r.kind == KS_CEL_BOOL && !r.b)
                return r;
        }
        return ks_cel_bool(true);
    }
    return ks_cel_bool(ks_cel_equal(x, y));
}
