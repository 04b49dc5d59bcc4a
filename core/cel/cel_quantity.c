/*
 * Kubernetes' Quantity CEL type with exact decimal arithmetic: apimachinery's ParseQuantity
 * (suffixes, rounding up at nano precision, binary-SI values capped at MaxInt64), Cmp, Add/Sub,
 * AsInt64, Sign and AsApproximateFloat64. A value is sign * digits * 10^exp with the digits kept
 * as a decimal string (no leading or trailing zeros), so no comparison or sum is ever rounded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_internal.h"

/* Alignment beyond this many digits (1e100000 + 1) is refused rather than expanded. */
#define MAX_ALIGN 100000

static ks_cel_quantity *normalize(ks_mempool *a, bool neg, const char *d, size_t n, int64_t exp)
{
    while (n && *d == '0') {
        d++;
        n--;
    }
    while (n && d[n - 1] == '0') {
        n--;
        exp++;
    }
    ks_cel_quantity *q = ks__mempool_alloc(a, sizeof *q);
    char *p = ks__mempool_alloc(a, n + 1);
    if (n)
        memcpy(p, d, n);
    q->digits = p;
    q->ndigits = n;
    q->neg = n ? neg : false;
    q->exp = n ? (int32_t)exp : 0;
    return q;
}

/* digits *= 2, in place on a buffer with room for one more digit at the front; returns new start.
 */
static char *double_digits(char *start, size_t *n)
{
    int carry = 0;
    for (size_t i = *n; i-- > 0;) {
        int v = (start[i] - '0') * 2 + carry;
        start[i] = (char)('0' + v % 10);
        carry = v / 10;
    }
    if (carry) {
        start--;
        start[0] = (char)('0' + carry);
        (*n)++;
    }
    return start;
}

static const struct {
    const char *s;
    int base, exp;
} suffixes[] = {{"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
                {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
                {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
                {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60}};

bool ks_cel_quantity_parse(ks_mempool *a, const char *str, size_t end, ks_cel_value *out)
{
    return ks__cel_quantity_parse(a, str, end, out) == 0;
}

/* 0, or 1 (ErrFormatWrong), 2 (ErrSuffix) as apimachinery's ParseQuantity. */
int ks__cel_quantity_parse(ks_mempool *a, const char *str, size_t end, ks_cel_value *out)
{
    if (end == 0)
        return 1;
    size_t pos = 0;
    bool neg = false;
    if (str[0] == '-' || str[0] == '+') {
        neg = str[0] == '-';
        pos++;
    }
    while (pos < end && str[pos] == '0')
        pos++;
    const char *num = str + pos, *denom = "";
    size_t nnum = 0, nden = 0;
    if (pos >= end)
        goto zero; /* only zeros */
    while (pos + nnum < end && str[pos + nnum] >= '0' && str[pos + nnum] <= '9')
        nnum++;
    pos += nnum;
    if (pos < end && str[pos] == '.') {
        pos++;
        denom = str + pos;
        while (pos + nden < end && str[pos + nden] >= '0' && str[pos + nden] <= '9')
            nden++;
        pos += nden;
    }
    /* the suffix: letters from "eEinumkKMGTP", an optional sign, then digits to the end */
    size_t sstart = pos;
    while (pos < end && strchr("eEinumkKMGTP", str[pos]))
        pos++;
    if (pos < end && (str[pos] == '-' || str[pos] == '+'))
        pos++;
    while (pos < end && str[pos] >= '0' && str[pos] <= '9')
        pos++;
    if (pos < end)
        return 1;
    const char *suf = str + sstart;
    size_t nsuf = end - sstart;
    int base = 0;
    int64_t sexp = 0;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (strlen(suffixes[i].s) == nsuf && memcmp(suffixes[i].s, suf, nsuf) == 0) {
            base = suffixes[i].base;
            sexp = suffixes[i].exp;
        }
    if (!base) {
        if (nsuf > 1 && (suf[0] == 'e' || suf[0] == 'E')) {
            /* strconv.ParseInt(suffix[1:], 10, 64), then int32() */
            size_t i = 1;
            bool eneg = false;
            if (suf[i] == '+' || suf[i] == '-')
                eneg = suf[i++] == '-';
            if (i >= nsuf)
                return 2;
            int64_t e = 0;
            for (; i < nsuf; i++) {
                if (suf[i] < '0' || suf[i] > '9')
                    return 2;
                if (e > (INT64_MAX - 9) / 10)
                    return 2;
                e = e * 10 + (suf[i] - '0');
            }
            base = 10;
            sexp = (int32_t)(eneg ? -e : e);
        } else {
            return 2;
        }
    }
    {
        /* the mantissa: num + denom digits, scaled by 10^-len(denom) */
        size_t n = nnum + nden;
        size_t extra = base == 2 ? (size_t)sexp / 3 + 2 : 0;
        char *buf = ks__mempool_alloc(a, n + extra + 2);
        char *d = buf + extra + 1;
        memcpy(d, num, nnum);
        memcpy(d + nnum, denom, nden);
        int64_t exp = -(int64_t)nden;
        if (base == 10) {
            exp += sexp;
        } else {
            for (int64_t i = 0; i < sexp; i++)
                d = double_digits(d, &n);
        }
        ks_cel_quantity *q = normalize(a, neg, d, n, exp);
        /* round up (away from zero) at nano precision */
        if (q->ndigits && q->exp < -9) {
            int64_t drop = -9 - (int64_t)q->exp;
            bool inexact = true; /* the dropped digits are non-zero: the last digit never is */
            char *r = ks__mempool_alloc(a, q->ndigits + 2);
            size_t keep = (int64_t)q->ndigits > drop ? q->ndigits - (size_t)drop : 0;
            r[0] = '0';
            memcpy(r + 1, q->digits, keep);
            size_t rn = keep + 1;
            if (inexact) {
                size_t i = rn;
                while (i-- > 0) {
                    if (r[i] == '9') {
                        r[i] = '0';
                    } else {
                        r[i]++;
                        break;
                    }
                }
            }
            q = normalize(a, q->neg, r, rn, -9);
        }
        /* binary-SI quantities are capped at MaxInt64 */
        if (base == 2) {
            ks_cel_quantity *max = ks__cel_quantity_from_int(a, INT64_MAX);
            if (!q->neg && ks__cel_quantity_cmp(q, max) > 0)
                q = max;
        }
        /* ParseQuantity's fast path: an int64Amount when the digits fit, else an inf.Dec */
        q->is_dec = true;
        size_t lnum = nnum ? nnum : 1; /* an empty integer part reads as "0" */
        int32_t precision, scale;
        int64_t mantissa = 1;
        if (base == 10) {
            scale = (int32_t)sexp;
            precision = 18 - (int32_t)(lnum + nden);
        } else {
            scale = 0;
            if (sexp >= 0 && nden == 0) {
                mantissa = (int64_t)1 << sexp;
                precision = 15 - (int32_t)lnum - (int32_t)((float)sexp * 3 / 10) - 1;
            } else {
                precision = -1;
            }
        }
        if (precision >= 0) {
            scale -= (int32_t)nden;
            if (scale >= -9) {
                int64_t v = 0;
                for (size_t i = 0; i < nnum; i++)
                    v = v * 10 + (num[i] - '0');
                for (size_t i = 0; i < nden; i++)
                    v = v * 10 + (denom[i] - '0');
                int64_t r;
                if (!__builtin_mul_overflow(v, mantissa, &r)) {
                    q->is_dec = false;
                    q->i_value = neg ? -r : r;
                    q->i_scale = scale;
                }
            }
        }
        out->kind = KS_CEL_QUANTITY;
        out->q = q;
        return 0;
    }
zero:
    out->kind = KS_CEL_QUANTITY;
    out->q = normalize(a, false, "", 0, 0); /* int64Amount{0, 0} */
    return 0;
}

ks_cel_quantity *ks__cel_quantity_from_int(ks_mempool *a, int64_t i)
{
    char buf[32];
    uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
    ks_cel_quantity *q = normalize(a, i < 0, buf, (size_t)n, 0);
    q->i_value = i; /* NewQuantity(i, DecimalExponent): int64Amount{i, 0} */
    return q;
}

/* positiveScaleInt64: value * 10^scale, false on overflow. */
static bool pos_scale(int64_t v, int32_t scale, int64_t *out)
{
    for (int32_t i = 0; i < scale; i++)
        if (__builtin_mul_overflow(v, 10, &v))
            return false;
    *out = v;
    return true;
}

/* int64Amount.Add; false when it does not fit (upstream then switches to inf.Dec). */
static bool amount_add(int64_t av, int32_t as, int64_t bv, int32_t bs, int64_t *rv, int32_t *rs)
{
    int64_t c;
    if (bv == 0) {
        *rv = av;
        *rs = as;
        return true;
    }
    if (av == 0) {
        *rv = bv;
        *rs = bs;
        return true;
    }
    if (as == bs) {
        if (__builtin_add_overflow(av, bv, &c))
            return false;
        *rv = c;
        *rs = as;
        return true;
    }
    if (as > bs) {
        if (!pos_scale(av, as - bs, &c) || __builtin_add_overflow(c, bv, &c))
            return false;
        *rv = c;
        *rs = bs;
        return true;
    }
    if (!pos_scale(bv, bs - as, &c) || __builtin_add_overflow(av, c, &c))
        return false;
    *rv = c;
    *rs = as;
    return true;
}

/* Compares magnitudes. */
static int mag_cmp(const ks_cel_quantity *x, const ks_cel_quantity *y)
{
    if (!x->ndigits || !y->ndigits)
        return (x->ndigits ? 1 : 0) - (y->ndigits ? 1 : 0);
    int64_t lx = (int64_t)x->ndigits + x->exp, ly = (int64_t)y->ndigits + y->exp;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    size_t m = x->ndigits > y->ndigits ? x->ndigits : y->ndigits;
    for (size_t i = 0; i < m; i++) {
        char cx = i < x->ndigits ? x->digits[i] : '0';
        char cy = i < y->ndigits ? y->digits[i] : '0';
        if (cx != cy)
            return cx < cy ? -1 : 1;
    }
    return 0;
}

int ks__cel_quantity_cmp(const ks_cel_quantity *x, const ks_cel_quantity *y)
{
    int sx = x->ndigits ? (x->neg ? -1 : 1) : 0, sy = y->ndigits ? (y->neg ? -1 : 1) : 0;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    if (sx == 0)
        return 0;
    int m = mag_cmp(x, y);
    return sx < 0 ? -m : m;
}

static ks_cel_quantity *quantity_add_value(ks_mempool *a, const ks_cel_quantity *x,
                                           const ks_cel_quantity *y, bool sub);

ks_cel_quantity *ks__cel_quantity_add(ks_mempool *a, const ks_cel_quantity *x,
                                      const ks_cel_quantity *y, bool sub)
{
    if (!x->is_dec && !y->is_dec) {
        /* Quantity.Add/Sub on two int64Amounts: int64Amount.Add, negating for Sub as upstream
         * does (-MinInt64 wraps to MinInt64, and upstream then adds it: the value is upstream's,
         * not the exact difference) */
        int64_t bv = sub ? (int64_t)(0 - (uint64_t)y->i_value) : y->i_value;
        int64_t rv;
        int32_t rs;
        if (amount_add(x->i_value, x->i_scale, bv, y->i_scale, &rv, &rs)) {
            char buf[32];
            uint64_t u = rv < 0 ? 0 - (uint64_t)rv : (uint64_t)rv;
            int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
            ks_cel_quantity *r = normalize(a, rv < 0, buf, (size_t)n, rs);
            r->is_dec = false;
            r->i_value = rv;
            r->i_scale = rs;
            return r;
        }
    }
    /* inf.Dec arithmetic: exact */
    ks_cel_quantity *r = quantity_add_value(a, x, y, sub);
    if (r)
        r->is_dec = true;
    return r;
}

static ks_cel_quantity *quantity_add_value(ks_mempool *a, const ks_cel_quantity *x,
                                           const ks_cel_quantity *y, bool sub)
{
    bool yneg = sub ? !y->neg : y->neg;
    if (!y->ndigits)
        return normalize(a, x->neg, x->digits, x->ndigits, x->exp); /* a copy: never mutate x */
    if (!x->ndigits)
        return normalize(a, yneg, y->digits, y->ndigits, y->exp);
    int64_t e = x->exp < y->exp ? x->exp : y->exp;
    int64_t hx = (int64_t)x->ndigits + x->exp, hy = (int64_t)y->ndigits + y->exp;
    int64_t h = hx > hy ? hx : hy;
    if (h - e > MAX_ALIGN)
        return NULL;
    size_t len = (size_t)(h - e) + 1;
    /* digit arrays aligned at exponent e, most significant first, one spare digit for carry */
    int *dx = ks__mempool_alloc(a, sizeof(int) * len),
        *dy = ks__mempool_alloc(a, sizeof(int) * len);
    for (size_t i = 0; i < x->ndigits; i++)
        dx[len - 1 - (size_t)(x->exp - e) - (x->ndigits - 1 - i)] = x->digits[i] - '0';
    for (size_t i = 0; i < y->ndigits; i++)
        dy[len - 1 - (size_t)(y->exp - e) - (y->ndigits - 1 - i)] = y->digits[i] - '0';
    char *r = ks__mempool_alloc(a, len + 1);
    bool rneg;
    if (x->neg == yneg) {
        int carry = 0;
        for (size_t i = len; i-- > 0;) {
            int v = dx[i] + dy[i] + carry;
            r[i] = (char)('0' + v % 10);
            carry = v / 10;
        }
        rneg = x->neg;
    } else {
        ks_cel_quantity yy = *y;
        yy.neg = yneg;
        int m = mag_cmp(x, &yy);
        if (m == 0)
            return normalize(a, false, "", 0, 0);
        int *big = m > 0 ? dx : dy, *small = m > 0 ? dy : dx;
        int borrow = 0;
        for (size_t i = len; i-- > 0;) {
            int v = big[i] - small[i] - borrow;
            borrow = v < 0;
            if (v < 0)
                v += 10;
            r[i] = (char)('0' + v);
        }
        rneg = m > 0 ? x->neg : yneg;
    }
    return normalize(a, rneg, r, len, e);
}

/* AsInt64: true when q is an integer within int64 (*is_int tells integers apart from overflow). */
bool ks__cel_quantity_as_int(const ks_cel_quantity *q, int64_t *out, bool *is_int)
{
    /* Quantity.AsInt64: an inf.Dec never is; an int64Amount with a negative scale never is (even
     * 30e-1: upstream does not reduce factors); a positive scale multiplies out unless it
     * overflows */
    *is_int = false;
    if (q->is_dec || q->i_scale < 0)
        return false;
    if (!pos_scale(q->i_value, q->i_scale, out))
        return false;
    *is_int = true;
    return true;
}

double ks__cel_quantity_as_double(const ks_cel_quantity *q)
{
    /* AsApproximateFloat64: float64(unscaled) * 10^exp */
    char buf[64];
    double base;
    if (q->ndigits > 40) {
        snprintf(buf, sizeof buf, "%.*se%zu", 30, q->digits, q->ndigits - 30);
        base = strtod(buf, NULL);
    } else {
        snprintf(buf, sizeof buf, "%.*s", (int)q->ndigits, q->ndigits ? q->digits : "0");
        base = strtod(buf, NULL);
    }
    if (q->neg)
        base = -base;
    if (q->exp == 0)
        return base;
    return base * pow(10.0, q->exp);
}
