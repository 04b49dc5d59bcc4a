/* Go durations (time.ParseDuration, time.Duration.String); see duration.h. */
#include "util/duration.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int ks__duration_parse(const char *s, int64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {
        {"ns", 1},           {"us", 1000},         {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000},                                            /* U+03BC greek mu */
        {"ms", 1000000},     {"s", 1000000000ull}, {"m", 60000000000ull}, {"h", 3600000000000ull}};
    int neg = 0;
    double total = 0;
    const char *p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (strcmp(p, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (!*p)
        return -1;
    while (*p) {
        const char *start = p;
        double v = 0, scale = 1;
        int digits = 0;
        size_t best = 0;
        int which = -1;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            digits++;
        }
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') {
                scale /= 10;
                v += (*p++ - '0') * scale;
                digits++;
            }
        }
        if (!digits || p == start)
            return -1;
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
            size_t ul = strlen(units[u].unit);
            if (strncmp(p, units[u].unit, ul) == 0 && ul > best) {
                best = ul;
                which = (int)u;
            }
        }
        if (which < 0)
            return -1;
        p += best;
        total += v * (double)units[which].ns;
        if (total > 9.2e18)
            return -1;
    }
    *ns = (int64_t)(neg ? -total : total);
    return 0;
}

void ks__duration_format(int64_t ns, char *buf, size_t len)
{
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    const char *sign = ns < 0 ? "-" : "";
    char frac[16];
    if (u == 0) {
        snprintf(buf, len, "0s");
        return;
    }
    if (u < 1000) {
        snprintf(buf, len, "%s%" PRIu64 "ns", sign, u);
        return;
    }
    if (u < 1000000000ull) {
        uint64_t unit = u < 1000000 ? 1000 : 1000000;
        const char *name = u < 1000000 ? "\xc2\xb5s" : "ms";
        uint64_t rest = u % unit;
        int digits = unit == 1000 ? 3 : 6;
        frac[0] = '\0';
        if (rest) {
            int n = snprintf(frac, sizeof(frac), ".%0*" PRIu64, digits, rest);
            while (n > 1 && frac[n - 1] == '0')
                frac[--n] = '\0';
        }
        snprintf(buf, len, "%s%" PRIu64 "%s%s", sign, u / unit, frac, name);
        return;
    }
    {
        uint64_t secs = u / 1000000000ull, rest = u % 1000000000ull;
        uint64_t h = secs / 3600, m = (secs / 60) % 60, s = secs % 60;
        frac[0] = '\0';
        if (rest) {
            int n = snprintf(frac, sizeof(frac), ".%09" PRIu64, rest);
            while (n > 1 && frac[n - 1] == '0')
                frac[--n] = '\0';
        }
        if (h)
            snprintf(buf, len, "%s%" PRIu64 "h%" PRIu64 "m%" PRIu64 "%ss", sign, h, m, s, frac);
        else if (m)
            snprintf(buf, len, "%s%" PRIu64 "m%" PRIu64 "%ss", sign, m, s, frac);
        else
            snprintf(buf, len, "%s%" PRIu64 "%ss", sign, s, frac);
    }
}
