/*
 * resource.Quantity parsing (apimachinery quantity.go / suffix.go), exact integer arithmetic:
 * the value is digits * 10^e10 * 2^e2, and Value()/MilliValue() are its ceiling (away from zero)
 * at scale 0 / 3, saturating at the int64 range.
 */
#include "api/quantity.h"

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
        {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
        {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
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

/* A 256-bit unsigned integer (little-endian 64-bit limbs). mant < 10^36 < 2^120 shifted by a
 * binary suffix (at most 2^60) stays below 2^180, so the product is exact before any division:
 * "1.5Ei" or "1.2345678901Gi" must not saturate just because mant * 2^e2 passes int64 before the
 * fraction is divided out. */
typedef struct {
    uint64_t w[4];
} u256;

static int u256_is_zero(const u256 *a) { return !(a->w[0] | a->w[1] | a->w[2] | a->w[3]); }
static int u256_gt(const u256 *a, uint64_t lim)
{
    return a->w[3] || a->w[2] || a->w[1] || a->w[0] > lim;
}

static void u256_shl1(u256 *a)
{
    for (int i = 3; i > 0; i--)
        a->w[i] = (a->w[i] << 1) | (a->w[i - 1] >> 63);
    a->w[0] <<= 1;
}

static void u256_mul10(u256 *a)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (unsigned __int128)a->w[i] * 10;
        a->w[i] = (uint64_t)c;
        c >>= 64;
    }
}

static unsigned u256_div10(u256 *a) /* returns the remainder */
{
    unsigned __int128 r = 0;
    for (int i = 3; i >= 0; i--) {
        unsigned __int128 cur = (r << 64) | a->w[i];
        a->w[i] = (uint64_t)(cur / 10);
        r = cur % 10;
    }
    return (unsigned)r;
}

/* ceil(|d| * 10^scale) saturated to INT64_MAX, with d's sign applied (rounding away from zero). */
static int64_t scaled(const decimal *d, int scale)
{
    u256 v = {{(uint64_t)d->mant, (uint64_t)(d->mant >> 64), 0, 0}};
    const uint64_t limit = (uint64_t)INT64_MAX + (d->negative ? 1 : 0);
    int64_t e10 = d->e10 + scale;
    int inexact = d->sticky;
    uint64_t r;

    if (d->mant == 0)
        return 0;
    for (int i = 0; i < d->e2; i++)
        u256_shl1(&v); /* exact, see u256 */
    /* Multiplying only grows the value: past the limit it saturates. */
    for (; e10 > 0; e10--) {
        if (u256_gt(&v, limit))
            goto saturate;
        u256_mul10(&v);
    }
    /* Dividing: any remainder makes the result inexact (rounded up below); once the value is 0
     * further divisions change nothing. */
    for (; e10 < 0 && !u256_is_zero(&v); e10++)
        inexact |= u256_div10(&v) != 0;
    if (u256_gt(&v, limit))
        goto saturate;
    r = v.w[0] + (inexact ? 1 : 0);
    if (r > limit)
        goto saturate;
    return d->negative ? (int64_t)(-(__int128)r) : (int64_t)r;
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
