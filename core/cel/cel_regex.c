/*
 * Regular expressions with RE2 syntax (what cel-go's matches() and Kubernetes' find/findAll use,
 * through Go's regexp package), run by PCRE2. A pattern is first checked and translated so that
 * PCRE2 accepts exactly RE2's language with RE2's meaning:
 *  - rejected as Go rejects them: backreferences (\1..\9), lookaround ((?=, (?!, (?<=, (?<!),
 *    atomic groups ((?>), conditionals, recursion, comments ((?#), branch reset ((?|), possessive
 *    quantifiers (a*+), PCRE-only escapes (\e \c \g \k \h \H \R \X \K \G \N \o \E without \Q, \V
 * \Z), and repetition counts above 1000 (Go: "invalid repeat count");
 *  - translated: \v is the vertical tab in Go but "any vertical space" in PCRE2 (-> \x0B);
 *    \s is [\t\n\f\r ] in Go but includes \v in PCRE2 (-> that explicit set); $ without (?m)
 *    matches only at the very end in Go (PCRE2_DOLLAR_ENDONLY);
 *  - the same: \d \w \b are ASCII in both (no PCRE2_UCP); . excludes \n unless (?s); UTF-8 mode;
 *    leftmost-first alternation (Go's regexp is not POSIX leftmost-longest unless asked).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_lib.h"

struct cel_regex {
    pcre2_code *code;
};

static bool unsupported(char *msg, size_t msglen, const char *what, size_t n)
{
    snprintf(msg, msglen, "error parsing regexp: invalid or unsupported Perl syntax: `%.*s`",
             (int)n, what);
    return false;
}

static bool bad_escape(char *msg, size_t msglen, const char *what, size_t n)
{
    snprintf(msg, msglen, "error parsing regexp: invalid escape sequence: `%.*s`", (int)n, what);
    return false;
}

/* Checks an RE2 pattern and writes the PCRE2 equivalent to out (at least 4n+1 bytes). */
static bool translate(const char *p, size_t n, char *out, size_t *on, char *msg, size_t msglen)
{
    size_t o = 0;
    bool in_class = false, quoted = false;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (quoted) {
            if (ch == '\\' && i + 1 < n && p[i + 1] == 'E') {
                quoted = false;
                memcpy(out + o, "\\E", 2);
                o += 2;
                i++;
                continue;
            }
            out[o++] = ch;
            continue;
        }
        if (ch == '\\') {
            if (i + 1 >= n) {
                snprintf(msg, msglen,
                         "error parsing regexp: trailing backslash at end of expression: ``");
                return false;
            }
            char e = p[i + 1];
            if (e >= '1' && e <= '9' &&
                !(e <= '7' && i + 2 < n && p[i + 2] >= '0' && p[i + 2] <= '7'))
                return bad_escape(msg, msglen, p + i, 2);
            if (strchr("ecgkhHRXKGNoVZ", e) || e == 'E')
                return bad_escape(msg, msglen, p + i, 2);
            if (e == 'v') {
                memcpy(out + o, "\\x0B", 4);
                o += 4;
                i++;
                continue;
            }
            if (e == 's' || e == 'S') {
                const char *set = in_class ? (e == 's' ? "\\t\\n\\f\\r " : NULL)
                                           : (e == 's' ? "[\\t\\n\\f\\r ]" : "[^\\t\\n\\f\\r ]");
                if (!set) { /* \S inside a class: keep PCRE's, which differs only for \v */
                    memcpy(out + o, "\\S", 2);
                    o += 2;
                } else {
                    size_t l = strlen(set);
                    memcpy(out + o, set, l);
                    o += l;
                }
                i++;
                continue;
            }
            if (e == 'Q')
                quoted = true;
            out[o++] = ch;
            out[o++] = e;
            i++;
            continue;
        }
        if (in_class) {
            if (ch == ']')
                in_class = false;
            if (ch == '[' && i + 1 < n && p[i + 1] == ':') { /* [:alpha:] */
                const char *end = strstr(p + i + 2, ":]");
                if (end && (size_t)(end - p) < n) {
                    size_t l = (size_t)(end - (p + i)) + 2;
                    memcpy(out + o, p + i, l);
                    o += l;
                    i += l - 1;
                    continue;
                }
            }
            out[o++] = ch;
            continue;
        }
        if (ch == '[') {
            in_class = true;
            out[o++] = ch;
            /* a leading ']' (or '^]') is a literal */
            if (i + 1 < n && p[i + 1] == '^')
                out[o++] = p[++i];
            if (i + 1 < n && p[i + 1] == ']')
                out[o++] = p[++i];
            continue;
        }
        if (ch == '(' && i + 1 < n && p[i + 1] == '?') {
            if (i + 2 >= n)
                return unsupported(msg, msglen, p + i, n - i);
            char k = p[i + 2];
            if (k == 'P' && i + 3 < n && p[i + 3] == '<') {
                /* (?P<name> */
            } else if (k == '<' && i + 3 < n && p[i + 3] != '=' && p[i + 3] != '!') {
                /* (?<name> (Go 1.22) */
            } else if (k == '<') {
                /* (?<= and (?<! (lookbehind): Go reads a malformed group name */
                snprintf(msg, msglen, "error parsing regexp: invalid named capture: `%.*s`",
                         (int)(n - i), p + i);
                return false;
            } else if (k == ':') {
            } else if (strchr("imsU-", k)) {
                size_t j = i + 2;
                while (j < n && strchr("imsU-", p[j]))
                    j++;
                if (j >= n || (p[j] != ')' && p[j] != ':'))
                    return unsupported(msg, msglen, p + i, j - i + (j < n));
            } else {
                return unsupported(msg, msglen, p + i, 3);
            }
            out[o++] = ch;
            continue;
        }
        if ((ch == '*' || ch == '+' || ch == '?' || ch == '}') && i + 1 < n && p[i + 1] == '+') {
            snprintf(msg, msglen, "error parsing regexp: invalid nested repetition operator: `%c+`",
                     ch);
            return false;
        }
        if (ch == '{') {
            /* {n}, {n,}, {n,m}: Go refuses counts above 1000 */
            size_t j = i + 1;
            long a = -1, b = -1;
            if (j < n && p[j] >= '0' && p[j] <= '9') {
                a = 0;
                while (j < n && p[j] >= '0' && p[j] <= '9')
                    a = a * 10 + (p[j++] - '0') * (a < 100000);
                if (j < n && p[j] == ',') {
                    j++;
                    if (j < n && p[j] >= '0' && p[j] <= '9') {
                        b = 0;
                        while (j < n && p[j] >= '0' && p[j] <= '9')
                            b = b * 10 + (p[j++] - '0') * (b < 100000);
                    }
                }
                if (j < n && p[j] == '}' && (a > 1000 || b > 1000 || (b >= 0 && b < a))) {
                    snprintf(msg, msglen, "error parsing regexp: invalid repeat count: `%.*s`",
                             (int)(j - i + 1), p + i);
                    return false;
                }
            }
        }
        out[o++] = ch;
    }
    *on = o;
    return true;
}

cel_regex *ks__cel_regex_compile(const char *pat, size_t n, char *msg, size_t msglen)
{
    char *tr = malloc(n * 12 + 1);
    size_t tn = 0;
    if (!tr) {
        snprintf(msg, msglen, "out of memory");
        return NULL;
    }
    if (!translate(pat, n, tr, &tn, msg, msglen)) {
        free(tr);
        return NULL;
    }
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)tr, tn,
                      PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C, &ec, &eo, NULL);
    free(tr);
    if (!code) {
        char buf[200];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)buf, sizeof buf);
        snprintf(msg, msglen, "error parsing regexp: %s: `%.*s`", buf, (int)n, pat);
        return NULL;
    }
    cel_regex *r = malloc(sizeof *r);
    if (!r) {
        pcre2_code_free(code);
        snprintf(msg, msglen, "out of memory");
        return NULL;
    }
    r->code = code;
    return r;
}

void ks__cel_regex_free(cel_regex *r)
{
    if (!r)
        return;
    pcre2_code_free(r->code);
    free(r);
}

int ks__cel_regex_search(cel_regex *r, const char *s, size_t n, size_t start, size_t *so,
                         size_t *eo)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(r->code, NULL);
    if (!md)
        return -1;
    int rc =
        pcre2_match(r->code, (PCRE2_SPTR)s, n, start, start ? PCRE2_NO_UTF_CHECK : 0, md, NULL);
    int res = rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
    if (res == 1) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (so)
            *so = ov[0];
        if (eo)
            *eo = ov[1];
    }
    pcre2_match_data_free(md);
    return res;
}

/* matches / find / findAll. The compiled pattern comes from the call site when constant. */
ks_cel_value ks__cel_regex_call(cel_ctx *c, int fn, const ks_cel_value *argv, size_t n)
{
    if (n < 2 || argv[0].kind != KS_CEL_STRING || argv[1].kind != KS_CEL_STRING ||
        (fn == FN_FINDALL && n == 3 && argv[2].kind != KS_CEL_INT) ||
        n > (fn == FN_FINDALL ? 3u : 2u))
        return ks__cel_err(c->a, "no such overload");
    cel_regex *re = c->re;
    bool owned = false;
    if (!re) {
        char msg[300];
        re = ks__cel_regex_compile(argv[1].s.ptr, argv[1].s.len, msg, sizeof msg);
        if (!re)
            return ks__cel_err(c->a, "%s", msg);
        owned = true;
    }
    ks_cel_value result;
    const char *s = argv[0].s.ptr;
    size_t sl = argv[0].s.len, so = 0, eo = 0;
    if (fn == FN_MATCHES) {
        int m = ks__cel_regex_search(re, s, sl, 0, NULL, NULL);
        result = m < 0 ? ks__cel_err(c->a, "regex match failed") : ks_cel_bool(m == 1);
    } else if (fn == FN_FIND) {
        int m = ks__cel_regex_search(re, s, sl, 0, &so, &eo);
        result = m == 1 ? ks__cel_str(c->a, s + so, eo - so, KS_CEL_STRING)
                        : ks__cel_str(c->a, "", 0, KS_CEL_STRING);
    } else {
        /* Go's FindAllString(s, n): n < 0 all; empty matches right after a previous match skipped
         */
        int64_t limit = n == 3 ? argv[2].i : -1;
        size_t cap = 8, k = 0, pos = 0;
        ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * cap);
        size_t prev_end = (size_t)-1;
        while (limit < 0 || (int64_t)k < limit) {
            if (pos > sl)
                break;
            int m = ks__cel_regex_search(re, s, sl, pos, &so, &eo);
            if (m != 1)
                break;
            if (eo == so && so == prev_end) {
                /* advance one character */
                size_t cl = 1;
                while (so + cl < sl && ((unsigned char)s[so + cl] & 0xC0) == 0x80)
                    cl++;
                pos = so + cl;
                continue;
            }
            if (k == cap) {
                ks_cel_value *ni = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * cap * 2);
                memcpy(ni, items, sizeof(ks_cel_value) * k);
                items = ni;
                cap *= 2;
            }
            items[k++] = ks__cel_str(c->a, s + so, eo - so, KS_CEL_STRING);
            prev_end = eo;
            if (eo == so) {
                size_t cl = 1;
                while (so + cl < sl && ((unsigned char)s[so + cl] & 0xC0) == 0x80)
                    cl++;
                pos = eo + cl;
            } else {
                pos = eo;
            }
        }
        ks_cel_list *l = ks__mempool_alloc(c->a, sizeof *l);
        l->n = k;
        l->items = items;
        result.kind = KS_CEL_LIST;
        result.list = l;
    }
    if (owned)
        ks__cel_regex_free(re);
    return result;
}
