/*
 * resource.Quantity parsing (apimachinery quantity.go / suffix.go), exact integer arithmetic:
 * the value is digits * 10^e10 * 2^e2, and Value()/MilliValue() are its ceiling (away from zero)
 * at scale 0 / 3, saturating at the int64 range.
 */
#include "quantity.h"

#include <stdint.h>
#include <string.h>

#include "kubesched/plugin.h"

#define MAX_DIGITS 36 /* 10^36 < 2^127: fits __int128 with room for the scale factors we apply */

typedef struct {
    int negative;
    unsigned __int128 mant; /* significant digits, at most MAX_DIGITS */
    int64_t e10;            /* decimal exponent applied to mant (e/E suffixes reach +-2^31) */
    int e2;                 /* binary exponent (Ki..Ei) */
    int sticky;             /* non-zero digits were dropped beyond MAX_DIGITS */
} decimal;

static int parse_suffix(const char *s, decimal *d)
{
    static const struct {
        const char *s;
        int e10, e2;
    } table[] = {
        {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
        {"G", 9, 0},  {"T", 12, 0}, {"P", 15, 0}, {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
        {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(s, table[i].s) == 0) {
            d->e10 += table[i].e10;
            d->e2 += table[i].e2;
            return 0;
        }
    }
    /* Decimal exponent: e or E followed by an optionally signed integer. */
    if (s[0] == 'e' || s[0] == 'E') {
        const char *p = s + 1;
        int neg = 0, ndig = 0;
        int64_t exp = 0;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        /* Upstream keeps the exponent in an int32 scale: |exp| <= MaxInt32, else an error. */
        for (; *p >= '0' && *p <= '9'; p++, ndig++) {
            exp = exp * 10 + (*p - '0');
            if (exp > INT32_MAX)
                return KS_EPARSE;
        }
        if (ndig == 0 || *p)
            return KS_EPARSE;
        d->e10 += neg ? -exp : exp;
        return 0;
    }
    return KS_EPARSE;
}

static int parse_decimal(const char *s, decimal *d)
{
    const char *p = s;
    int ndigits = 0, seen_dot = 0;
    memset(d, 0, sizeof(*d));
    if (*p == '+' || *p == '-')
        d->negative = *p++ == '-';
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            if (d->mant == 0 && *p == '0') {
                if (seen_dot)
                    d->e10--; /* leading fractional zeros shift the exponent only */
                continue;
            }
            if (ndigits < MAX_DIGITS) {
                d->mant = d->mant * 10 + (unsigned)(*p - '0');
                ndigits++;
                if (seen_dot)
                    d->e10--;
            } else {
                if (*p != '0')
                    d->sticky = 1;
                if (!seen_dot)
                    d->e10++; /* an integer digit we could not keep still scales the value */
            }
        } else if (*p == '.' && !seen_dot) {
            seen_dot = 1;
        } else {
            break;
        }
    }
    /* No digits at all is a zero, as upstream's scanner reads it: ".", "-", "+", "m", "Ki", "e3"
     * are all valid quantities equal to 0 (an unknown suffix is still an error). */
    return parse_suffix(p, d);
}

/* ceil(|d| * 10^scale) saturated to INT64_MAX, with d's sign applied (rounding away from zero). */
static int64_t scaled(const decimal *d, int scale)
{
    unsigned __int128 v = d->mant;
    const unsigned __int128 limit = (unsigned __int128)INT64_MAX + (d->negative ? 1 : 0);
    int64_t e10 = d->e10 + scale;
    int e2 = d->e2, inexact = d->sticky;

    if (v == 0)
        return 0;
    /* Multiply first where possible (exact), saturating. */
    for (; e2 > 0; e2--) {
        if (v > limit)
            goto saturate;
        v <<= 1;
    }
    for (; e10 > 0; e10--) {
        if (v > limit)
            goto saturate;
        v *= 10;
    }
    for (; e10 < 0; e10++) {
        if (v % 10)
            inexact = 1;
        v /= 10;
        if (v == 0 && e10 < -1) {
            inexact = 1;
            break;
        }
    }
    if (inexact)
        v++;
    if (v > limit)
        goto saturate;
    return d->negative ? (int64_t)(-(__int128)v) : (int64_t)v;
saturate:
    return d->negative ? INT64_MIN : INT64_MAX;
}

int ks__quantity_parse(const char *s, int64_t *value, int64_t *milli)
{
    decimal d;
    if (!s || !*s || parse_decimal(s, &d) != 0)
        return KS_EPARSE;
    if (value)
        *value = scaled(&d, 0);
    if (milli)
        *milli = scaled(&d, 3);
    return 0;
}
