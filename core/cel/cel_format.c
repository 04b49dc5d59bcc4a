/*
 * string.format(list) as Kubernetes runs it: cel-go's ext strings at StringsVersion(2), i.e. the
 * first formatting implementation (ext/formatting.go) with the en_US locale of
 * golang.org/x/text/message: %s %d %f %e %b %x %X %o and %%, an optional .precision. Its quirks
 * are upstream's and kept: %f groups thousands ("1,234.568") and prints infinities as "∞";
 * %e ignores the precision (it is used as a width) and writes "1.052033×10⁰³"; doubles inside
 * lists and maps print as %.6f; map entries are "key:value" sorted by key.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_lib.h"

typedef struct sb {
    char *p;
    size_t n, cap;
    ks_mempool *a;
} sb;

static void sb_put(sb *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2 + 32;
        char *np = ks__mempool_alloc(b->a, cap);
        if (b->n)
            memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sb *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Go's strconv.Quote for the strings we produce (valid UTF-8 is kept, controls escaped). */
static void go_quote(sb *b, const char *s, size_t n)
{
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        switch (c) {
        case '"':
            sb_str(b, "\\\"");
            break;
        case '\\':
            sb_str(b, "\\\\");
            break;
        case '\a':
            sb_str(b, "\\a");
            break;
        case '\b':
            sb_str(b, "\\b");
            break;
        case '\f':
            sb_str(b, "\\f");
            break;
        case '\n':
            sb_str(b, "\\n");
            break;
        case '\r':
            sb_str(b, "\\r");
            break;
        case '\t':
            sb_str(b, "\\t");
            break;
        case '\v':
            sb_str(b, "\\v");
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                snprintf(tmp, sizeof tmp, "\\x%02x", c);
                sb_str(b, tmp);
            } else {
                sb_put(b, (const char *)&c, 1);
            }
        }
    }
    sb_put(b, "\"", 1);
}

static void put_int(sb *b, const ks_cel_value *v, const char *fmt_i, const char *fmt_u)
{
    char tmp[80];
    if (v->kind == KS_CEL_INT) {
        /* Go prints a negative number as '-' and the magnitude in the base */
        uint64_t m = v->i < 0 ? 0 - (uint64_t)v->i : (uint64_t)v->i;
        snprintf(tmp, sizeof tmp, "%s", v->i < 0 ? "-" : "");
        sb_str(b, tmp);
        snprintf(tmp, sizeof tmp, fmt_i, m);
    } else {
        snprintf(tmp, sizeof tmp, fmt_u, v->u);
    }
    sb_str(b, tmp);
}

static void put_binary(sb *b, uint64_t m)
{
    char tmp[70];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + (m & 1));
        m >>= 1;
    } while (m);
    for (int i = k - 1; i >= 0; i--)
        sb_put(b, &tmp[i], 1);
}

/* en_US through x/text: digits grouped by 3 in the integer part. */
static void put_fixed(sb *b, double d, int prec)
{
    if (isnan(d)) {
        sb_str(b, "NaN");
        return;
    }
    if (isinf(d)) {
        sb_str(b, d < 0 ? "-∞" : "∞");
        return;
    }
    size_t cap = 400 + (size_t)prec;
    char *tmp = malloc(cap);
    if (!tmp)
        return;
    snprintf(tmp, cap, "%.*f", prec, d);
    const char *p = tmp;
    if (*p == '-') {
        sb_put(b, "-", 1);
        p++;
    }
    size_t intlen = strcspn(p, ".");
    for (size_t i = 0; i < intlen; i++) {
        if (i && (intlen - i) % 3 == 0)
            sb_put(b, ",", 1);
        sb_put(b, p + i, 1);
    }
    sb_str(b, p + intlen);
    free(tmp);
}

/* x/text's %6e: six mantissa digits, "×10" and a superscript exponent, padded to 6 runes. */
static void put_scientific(sb *b, double d)
{
    static const char *const sup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    const char *special = isnan(d) ? "NaN" : isinf(d) ? (d < 0 ? "-∞" : "∞") : NULL;
    if (special) {
        size_t runes = ks__cel_utf8_len(special, strlen(special));
        for (size_t i = runes; i < 6; i++)
            sb_put(b, " ", 1);
        sb_str(b, special);
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.6e", d);
    char *e = strchr(tmp, 'e');
    *e = 0;
    sb_str(b, tmp);
    sb_str(b, "×10");
    const char *x = e + 1;
    if (*x == '-')
        sb_str(b, "⁻");
    if (*x == '-' || *x == '+')
        x++;
    for (; *x; x++)
        sb_str(b, sup[*x - '0']);
}

static const char *format_value(cel_ctx *c, sb *b, const ks_cel_value *v, bool in_aggregate);

static const char *format_list(cel_ctx *c, sb *b, const ks_cel_list *l)
{
    sb_put(b, "[", 1);
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            sb_str(b, ", ");
        const char *err = format_value(c, b, &l->items[i], true);
        if (err)
            return err;
    }
    sb_put(b, "]", 1);
    return NULL;
}

typedef struct pair {
    char *k, *v;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    return strcmp(((const pair *)x)->k, ((const pair *)y)->k);
}

static const char *format_map(cel_ctx *c, sb *b, const ks_cel_map *m)
{
    pair *pairs = ks__mempool_alloc(c->a, sizeof(pair) * (m->n ? m->n : 1));
    for (size_t i = 0; i < m->n; i++) {
        const ks_cel_value *k = &m->keys[i];
        if (k->kind != KS_CEL_STRING && k->kind != KS_CEL_BOOL && k->kind != KS_CEL_INT &&
            k->kind != KS_CEL_UINT) {
            char *msg = ks__mempool_alloc(c->a, 128);
            snprintf(msg, 128, "no formatting function for map key of type %s",
                     ks__cel_type_name(k));
            return msg;
        }
        sb kb = {.a = c->a}, vb = {.a = c->a};
        const char *err = format_value(c, &kb, k, true);
        if (!err)
            err = format_value(c, &vb, &m->vals[i], true);
        if (err)
            return err;
        pairs[i].k = kb.p ? kb.p : "";
        pairs[i].v = vb.p ? vb.p : "";
    }
    qsort(pairs, m->n, sizeof(pair), pair_cmp); /* (sort.SliceStable on distinct keys) */
    sb_put(b, "{", 1);
    for (size_t i = 0; i < m->n; i++) {
        if (i)
            sb_str(b, ", ");
        sb_str(b, pairs[i].k);
        sb_put(b, ":", 1);
        sb_str(b, pairs[i].v);
    }
    sb_put(b, "}", 1);
    return NULL;
}

/* %s of one value (FormatString); inside lists and maps, clauseForType and quoteForCEL. */
static const char *format_value(cel_ctx *c, sb *b, const ks_cel_value *v, bool in_aggregate)
{
    char tmp[64];
    switch (v->kind) {
    case KS_CEL_LIST:
        return format_list(c, b, v->list);
    case KS_CEL_MAP:
        return format_map(c, b, v->map);
    case KS_CEL_INT:
        snprintf(tmp, sizeof tmp, "%" PRId64, v->i);
        sb_str(b, tmp);
        return NULL;
    case KS_CEL_UINT:
        snprintf(tmp, sizeof tmp, "%" PRIu64, v->u);
        sb_str(b, tmp);
        return NULL;
    case KS_CEL_BOOL:
        sb_str(b, v->b ? "true" : "false");
        return NULL;
    case KS_CEL_NULL:
        sb_str(b, "null");
        return NULL;
    case KS_CEL_TYPE:
        sb_put(b, v->s.ptr, v->s.len);
        return NULL;
    case KS_CEL_STRING:
        if (in_aggregate)
            go_quote(b, v->s.ptr, v->s.len);
        else
            sb_put(b, v->s.ptr, v->s.len);
        return NULL;
    case KS_CEL_BYTES:
        if (!ks__cel_utf8_valid(v->s.ptr, v->s.len))
            return "could not convert argument to string";
        if (in_aggregate) {
            sb_put(b, "b", 1);
            go_quote(b, v->s.ptr, v->s.len);
        } else {
            sb_put(b, v->s.ptr, v->s.len);
        }
        return NULL;
    case KS_CEL_DOUBLE: {
        if (in_aggregate) {
            /* %.6f of Go's fmt (no grouping); NaN and infinities quoted */
            const char *sp = isnan(v->d)   ? "NaN"
                             : isinf(v->d) ? (v->d < 0 ? "-Inf" : "+Inf")
                                           : NULL;
            if (sp) {
                go_quote(b, sp, strlen(sp));
            } else {
                char buf[400];
                snprintf(buf, sizeof buf, "%.6f", v->d);
                sb_str(b, buf);
            }
            return NULL;
        }
        ks_cel_value s = ks__cel_go_g(c, v->d); /* string(double): Go's %g */
        sb_put(b, s.s.ptr, s.s.len);
        return NULL;
    }
    default: {
        char *msg = ks__mempool_alloc(c->a, 256);
        if (in_aggregate)
            snprintf(msg, 256, "no formatting function for %s", ks__cel_type_name(v));
        else
            snprintf(msg, 256,
                     "string clause can only be used on strings, bools, bytes, ints, doubles, "
                     "maps, lists, types, "
                     "durations, and timestamps, was given %s",
                     ks__cel_type_name(v));
        return msg;
    }
    }
}

static bool special_double(const ks_cel_value *v, double *d)
{
    if (v->kind == KS_CEL_DOUBLE) {
        *d = v->d;
        return true;
    }
    if (v->kind == KS_CEL_STRING) {
        if (v->s.len == 3 && !memcmp(v->s.ptr, "NaN", 3)) {
            *d = NAN;
            return true;
        }
        if (v->s.len == 8 && !memcmp(v->s.ptr, "Infinity", 8)) {
            *d = INFINITY;
            return true;
        }
        if (v->s.len == 9 && !memcmp(v->s.ptr, "-Infinity", 9)) {
            *d = -INFINITY;
            return true;
        }
    }
    return false;
}

ks_cel_value ks__cel_format(cel_ctx *c, const ks_cel_value *fmt, const ks_cel_list *args)
{
    const char *f = fmt->s.ptr;
    size_t n = fmt->s.len, i = 0, argi = 0;
    sb b = {.a = c->a};
    sb_put(&b, "", 0);
    while (i < n) {
        if (f[i] != '%') {
            sb_put(&b, &f[i], 1);
            i++;
            continue;
        }
        if (i + 1 < n && f[i + 1] == '%') {
            sb_put(&b, "%", 1);
            i += 2;
            continue;
        }
        if (argi >= args->n)
            return ks__cel_err(c->a, "index %zu out of range", argi);
        if (i + 1 >= n)
            return ks__cel_err(c->a, "unexpected end of string");
        const ks_cel_value *v = &args->items[argi];
        size_t j = i + 1;
        int prec = 6;
        if (f[j] == '.') {
            size_t ds = ++j;
            while (j < n && f[j] >= '0' && f[j] <= '9')
                j++;
            if (j >= n)
                return ks__cel_err(
                    c->a, "could not parse formatting clause: error while parsing precision: could "
                          "not find end of precision specifier");
            if (j == ds)
                return ks__cel_err(
                    c->a, "could not parse formatting clause: error while parsing precision: error "
                          "while converting precision to integer: strconv.Atoi: parsing \"\": "
                          "invalid syntax");
            if (j - ds > 9)
                return ks__cel_err(
                    c->a,
                    "could not parse formatting clause: error while parsing precision: error "
                    "while converting precision to integer: strconv.Atoi: parsing \"%.*s\": "
                    "value out of range",
                    (int)(j - ds), f + ds);
            prec = atoi(f + ds);
        }
        char verb = f[j];
        const char *err = NULL;
        double d;
        char tmp[128];
        switch (verb) {
        case 's':
            err = format_value(c, &b, v, false);
            break;
        case 'd':
            if (v->kind == KS_CEL_INT || v->kind == KS_CEL_UINT)
                put_int(&b, v, "%" PRIu64, "%" PRIu64);
            else
                snprintf(tmp, sizeof tmp,
                         "decimal clause can only be used on integers, was given %s",
                         ks__cel_type_name(v)),
                    err = tmp;
            break;
        case 'f':
            if (special_double(v, &d))
                put_fixed(&b, d, prec);
            else
                snprintf(tmp, sizeof tmp,
                         "fixed-point clause can only be used on doubles, was given %s",
                         ks__cel_type_name(v)),
                    err = tmp;
            break;
        case 'e':
            if (special_double(v, &d))
                put_scientific(&b, d);
            else
                snprintf(tmp, sizeof tmp,
                         "scientific clause can only be used on doubles, was given %s",
                         ks__cel_type_name(v)),
                    err = tmp;
            break;
        case 'b':
            if (v->kind == KS_CEL_INT) {
                if (v->i < 0)
                    sb_put(&b, "-", 1);
                put_binary(&b, v->i < 0 ? 0 - (uint64_t)v->i : (uint64_t)v->i);
            } else if (v->kind == KS_CEL_UINT) {
                put_binary(&b, v->u);
            } else if (v->kind == KS_CEL_BOOL) {
                sb_str(&b, v->b ? "1" : "0");
            } else {
                snprintf(tmp, sizeof tmp,
                         "only integers and bools can be formatted as binary, was given %s",
                         ks__cel_type_name(v));
                err = tmp;
            }
            break;
        case 'x':
        case 'X':
            if (v->kind == KS_CEL_STRING || v->kind == KS_CEL_BYTES) {
                for (size_t k = 0; k < v->s.len; k++) {
                    snprintf(tmp, sizeof tmp, verb == 'x' ? "%02x" : "%02X",
                             (unsigned char)v->s.ptr[k]);
                    sb_str(&b, tmp);
                }
            } else if (v->kind == KS_CEL_INT || v->kind == KS_CEL_UINT) {
                put_int(&b, v, verb == 'x' ? "%" PRIx64 : "%" PRIX64,
                        verb == 'x' ? "%" PRIx64 : "%" PRIX64);
            } else {
                snprintf(tmp, sizeof tmp,
                         "only integers, byte buffers, and strings can be formatted as hex, was "
                         "given %s",
                         ks__cel_type_name(v));
                err = tmp;
            }
            break;
        case 'o':
            if (v->kind == KS_CEL_INT || v->kind == KS_CEL_UINT)
                put_int(&b, v, "%" PRIo64, "%" PRIo64);
            else
                snprintf(tmp, sizeof tmp, "octal clause can only be used on integers, was given %s",
                         ks__cel_type_name(v)),
                    err = tmp;
            break;
        default: {
            /* the verb is one rune */
            size_t rl = 1;
            while (j + rl < n && ((unsigned char)f[j + rl] & 0xC0) == 0x80)
                rl++;
            return ks__cel_err(
                c->a, "could not parse formatting clause: unrecognized formatting clause \"%.*s\"",
                (int)rl, f + j);
        }
        }
        if (err)
            return ks__cel_err(c->a, "error during formatting: %s", err);
        i = j + 1;
        argi++;
    }
    return ks__cel_str(c->a, b.p ? b.p : "", b.n, KS_CEL_STRING);
}
