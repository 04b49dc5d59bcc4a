/*
 * Kubernetes' Semver CEL type: blang/semver v4's Parse and Compare (strict semver 2.0.0), and the
 * library's normalizing parse (semver(s, true): "v" prefix, missing minor/patch, leading zeros).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_internal.h"

static bool only(const char *s, size_t n, bool alnum)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= '0' && c <= '9') ||
                  (alnum && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'));
        if (!ok)
            return false;
    }
    return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* blang/semver Parse; msg receives its error text. */
static bool semver_parse(ks_mempool *a, const char *s, size_t n, ks_cel_semver *v, char *msg,
                         size_t msglen)
{
    if (n == 0) {
        snprintf(msg, msglen, "Version string empty");
        return false;
    }
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - s)) : NULL;
    if (!d1 || !d2) {
        snprintf(msg, msglen, "No Major.Minor.Patch elements found");
        return false;
    }
    const char *parts[2] = {s, d1 + 1};
    size_t lens[2] = {(size_t)(d1 - s), (size_t)(d2 - d1 - 1)};
    const char *names[2] = {"major", "minor"};
    const char *Names[2] = {"Major", "Minor"};
    uint64_t nums[2];
    for (int i = 0; i < 2; i++) {
        if (!only(parts[i], lens[i], false)) {
            snprintf(msg, msglen, "Invalid character(s) found in %s number \"%.*s\"", names[i],
                     (int)lens[i], parts[i]);
            return false;
        }
        if (lens[i] > 1 && parts[i][0] == '0') {
            snprintf(msg, msglen, "%s number must not contain leading zeroes \"%.*s\"", Names[i],
                     (int)lens[i], parts[i]);
            return false;
        }
        if (!parse_u64(parts[i], lens[i], &nums[i])) {
            snprintf(msg, msglen, "strconv.ParseUint: parsing \"%.*s\": %s", (int)lens[i], parts[i],
                     lens[i] ? "value out of range" : "invalid syntax");
            return false;
        }
    }
    const char *p = d2 + 1;
    size_t pn = n - (size_t)(p - s);
    const char *plus = memchr(p, '+', pn);
    const char *build = "";
    size_t bn = 0;
    if (plus) {
        build = plus + 1;
        bn = pn - (size_t)(build - p);
        pn = (size_t)(plus - p);
    }
    const char *minus = memchr(p, '-', pn);
    const char *pre = "";
    size_t prn = 0;
    if (minus) {
        pre = minus + 1;
        prn = pn - (size_t)(pre - p);
        pn = (size_t)(minus - p);
    }
    if (!only(p, pn, false)) {
        snprintf(msg, msglen, "Invalid character(s) found in patch number \"%.*s\"", (int)pn, p);
        return false;
    }
    if (pn > 1 && p[0] == '0') {
        snprintf(msg, msglen, "Patch number must not contain leading zeroes \"%.*s\"", (int)pn, p);
        return false;
    }
    if (!parse_u64(p, pn, &v->patch)) {
        snprintf(msg, msglen, "strconv.ParseUint: parsing \"%.*s\": %s", (int)pn, p,
                 pn ? "value out of range" : "invalid syntax");
        return false;
    }
    v->major = nums[0];
    v->minor = nums[1];
    if (minus) {
        const char *q = pre, *end = pre + prn;
        for (;;) {
            const char *dot = memchr(q, '.', (size_t)(end - q));
            size_t l = (size_t)((dot ? dot : end) - q);
            if (l == 0) {
                snprintf(msg, msglen, "Prerelease is empty");
                return false;
            }
            if (only(q, l, false)) {
                uint64_t tmp;
                if (l > 1 && q[0] == '0') {
                    snprintf(msg, msglen,
                             "Numeric PreRelease version must not contain leading zeroes \"%.*s\"",
                             (int)l, q);
                    return false;
                }
                if (!parse_u64(q, l, &tmp)) {
                    snprintf(msg, msglen, "strconv.ParseUint: parsing \"%.*s\": value out of range",
                             (int)l, q);
                    return false;
                }
            } else if (!only(q, l, true)) {
                snprintf(msg, msglen, "Invalid character(s) found in prerelease \"%.*s\"", (int)l,
                         q);
                return false;
            }
            if (!dot)
                break;
            q = dot + 1;
        }
    }
    if (plus) {
        const char *q = build, *end = build + bn;
        for (;;) {
            const char *dot = memchr(q, '.', (size_t)(end - q));
            size_t l = (size_t)((dot ? dot : end) - q);
            if (l == 0) {
                snprintf(msg, msglen, "Build meta data is empty");
                return false;
            }
            if (!only(q, l, true)) {
                snprintf(msg, msglen, "Invalid character(s) found in build meta data \"%.*s\"",
                         (int)l, q);
                return false;
            }
            if (!dot)
                break;
            q = dot + 1;
        }
    }
    v->pre = ks__cel_str(a, pre, prn, KS_CEL_STRING).s.ptr;
    v->build = ks__cel_str(a, build, bn, KS_CEL_STRING).s.ptr;
    return true;
}

/* The library's normalizeAndParse. */
static bool semver_normalize_parse(ks_mempool *a, const char *s, size_t n, ks_cel_semver *v,
                                   char *msg, size_t msglen)
{
    if (n && s[0] == 'v') {
        s++;
        n--;
    }
    char *buf = ks__mempool_alloc(a, n + 8);
    size_t o = 0, i = 0;
    int parts = 0;
    bool last_meta = false;
    while (i <= n) {
        /* the third part is the rest of the string (SplitN(s, ".", 3)) */
        const char *dot = parts < 2 ? memchr(s + i, '.', n - i) : NULL;
        size_t end = dot ? (size_t)(dot - s) : n;
        const char *p = s + i;
        size_t l = end - i;
        if (l > 1) {
            size_t z = 0;
            while (z < l && p[z] == '0')
                z++;
            p += z;
            l -= z;
            if (l == 0 || !(p[0] >= '0' && p[0] <= '9'))
                buf[o++] = '0';
        }
        memcpy(buf + o, p, l);
        o += l;
        last_meta = memchr(p, '+', l) || memchr(p, '-', l);
        parts++;
        if (!dot)
            break;
        buf[o++] = '.';
        i = end + 1;
    }
    if (parts < 3) {
        if (last_meta) {
            snprintf(msg, msglen, "short version cannot contain PreRelease/Build meta data");
            return false;
        }
        for (; parts < 3; parts++) {
            buf[o++] = '.';
            buf[o++] = '0';
        }
    }
    return semver_parse(a, buf, o, v, msg, msglen);
}

bool ks_cel_semver_parse(ks_mempool *a, const char *s, size_t n, ks_cel_value *out)
{
    char msg[160];
    ks_cel_semver *v = ks__mempool_alloc(a, sizeof *v);
    if (!semver_parse(a, s, n, v, msg, sizeof msg))
        return false;
    out->kind = KS_CEL_SEMVER;
    out->sv = v;
    return true;
}

/* semver(s[, normalize]) and isSemver(s[, normalize]). */
ks_cel_value ks__cel_semver_from(ks_mempool *a, const ks_cel_value *s, bool normalize, bool test)
{
    char msg[200];
    ks_cel_semver *v = ks__mempool_alloc(a, sizeof *v);
    bool ok = normalize ? semver_normalize_parse(a, s->s.ptr, s->s.len, v, msg, sizeof msg)
                        : semver_parse(a, s->s.ptr, s->s.len, v, msg, sizeof msg);
    if (test)
        return ks_cel_bool(ok);
    if (!ok)
        return ks__cel_err(a, "%s", msg);
    ks_cel_value r = {.kind = KS_CEL_SEMVER, .sv = v};
    return r;
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

int ks__cel_semver_cmp(const ks_cel_semver *a, const ks_cel_semver *b)
{
    int r;
    if ((r = cmp_u64(a->major, b->major)) || (r = cmp_u64(a->minor, b->minor)) ||
        (r = cmp_u64(a->patch, b->patch)))
        return r;
    if (!*a->pre || !*b->pre)
        return (*a->pre ? -1 : 0) + (*b->pre ? 1 : 0);
    const char *p = a->pre, *q = b->pre;
    for (;;) {
        size_t lp = strcspn(p, "."), lq = strcspn(q, ".");
        bool np = only(p, lp, false), nq = only(q, lq, false);
        if (np && !nq)
            return -1;
        if (!np && nq)
            return 1;
        if (np) {
            uint64_t x = 0, y = 0;
            parse_u64(p, lp, &x);
            parse_u64(q, lq, &y);
            if ((r = cmp_u64(x, y)))
                return r;
        } else {
            size_t m = lp < lq ? lp : lq;
            r = memcmp(p, q, m);
            if (r)
                return r < 0 ? -1 : 1;
            if (lp != lq)
                return lp < lq ? -1 : 1;
        }
        bool ep = p[lp] == 0, eq = q[lq] == 0;
        if (ep && eq)
            return 0;
        if (ep)
            return -1;
        if (eq)
            return 1;
        p += lp + 1;
        q += lq + 1;
    }
}
