/*
 * Metrics registry and text exposition (see metrics.h for the format and the threading rules).
 *
 * Storage follows client_golang so that values print the same:
 *   counter    an integer part (every Inc, and every Add of a whole number) and a float part
 *              (other Adds, by compare-and-swap); the value is float(int) + float part;
 *   gauge      one double, stored as its bits; Add by compare-and-swap;
 *   histogram  one counter per bucket plus one for +Inf (not cumulative), the sum as double bits.
 * All atomics are relaxed: a scrape needs no ordering between series, only untorn values.
 *
 * A family finds its series by a hash of the label values (chained table, doubled at load 1),
 * under the family's mutex. Series are never freed before the registry, which is what lets a
 * caller keep a ks_metric pointer and update it without any lock.
 */
#include "util/metrics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

struct ks_metric {
    ks_metric_family *family;
    ks_metric *hash_next; /* chain in the family's table; guarded by family->mu */
    uint64_t hash;
    _Atomic uint64_t ival; /* counter: integer part */
    _Atomic uint64_t bits; /* counter: float part; gauge: value; histogram: sum */
    const char *values[KS_METRICS_MAX_LABELS]; /* point into the same allocation */
    _Atomic uint64_t counts[];                 /* histogram: nbuckets + 1 (the last is +Inf) */
};

struct ks_metric_family {
    ks_metrics *registry;
    ks_metric_type type;
    char *name;
    char *help; /* with the stability prefix, unescaped */
    size_t nlabels;
    char *labels[KS_METRICS_MAX_LABELS];
    unsigned char order[KS_METRICS_MAX_LABELS]; /* label indices sorted by name: output order */
    size_t nbuckets;
    double bounds[KS_METRICS_MAX_BUCKETS];
    char bound_text[KS_METRICS_MAX_BUCKETS][KS_METRICS_FLOAT_BUF]; /* the le="..." values */

    pthread_mutex_t mu; /* guards everything below */
    ks_metric **table;  /* hash chains, table_cap a power of two */
    size_t table_cap;
    ks_metric **series; /* in creation order */
    size_t nseries, series_cap;
};

struct ks_metrics {
    pthread_mutex_t mu; /* guards the family list */
    ks_metric_family **families;
    size_t nfamilies, cap;
};

/* --- atomics on doubles -------------------------------------------------------------------- */

static uint64_t dbits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double bitsd(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static void atomic_add_double(_Atomic uint64_t *p, double v)
{
    uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(p, &old, dbits(bitsd(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

/* --- validation ---------------------------------------------------------------------------- */

static bool valid_metric_name(const char *s)
{
    if (!s || !*s || !(s[0] == '_' || s[0] == ':' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z')))
        return false;
    for (const char *p = s + 1; *p; p++)
        if (!(*p == '_' || *p == ':' || ((*p | 32) >= 'a' && (*p | 32) <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

static bool valid_label_name(const char *s)
{
    if (!s || !*s || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z')))
        return false;
    if (s[0] == '_' && s[1] == '_') /* reserved for Prometheus' internal labels */
        return false;
    for (const char *p = s + 1; *p; p++)
        if (!(*p == '_' || ((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

/* Well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF), as Go's utf8.ValidString. */
static bool valid_utf8(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        unsigned c = *s;
        size_t n;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            s++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0)
                lo = 0xA0;
            if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else {
            return false;
        }
        if (s[1] < lo || s[1] > hi)
            return false;
        for (size_t i = 2; i <= n; i++)
            if (s[i] < 0x80 || s[i] > 0xBF)
                return false;
        s += n + 1;
    }
    return true;
}

/* --- registry ------------------------------------------------------------------------------ */

ks_metrics *ks__metrics_create(void)
{
    ks_metrics *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_mutex_init(&r->mu, NULL);
    return r;
}

static void family_free(ks_metric_family *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nseries; i++)
        free(f->series[i]);
    free(f->series);
    free(f->table);
    for (size_t i = 0; i < f->nlabels; i++)
        free(f->labels[i]);
    free(f->name);
    free(f->help);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

void ks__metrics_destroy(ks_metrics *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nfamilies; i++)
        family_free(r->families[i]);
    free(r->families);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static const char *stability_prefix(ks_metric_stability s)
{
    switch (s) {
    case KS_STABILITY_ALPHA:
        return "[ALPHA] ";
    case KS_STABILITY_BETA:
        return "[BETA] ";
    case KS_STABILITY_STABLE:
        return "[STABLE] ";
    default:
        return "";
    }
}

/* Checks opts; on failure logs why and returns false. */
static bool opts_valid(const ks_metric_opts *o, size_t *nbuckets)
{
    const char *name = o->name ? o->name : "(null)";
    if (o->type != KS_METRIC_COUNTER && o->type != KS_METRIC_GAUGE &&
        o->type != KS_METRIC_HISTOGRAM) {
        ks__log('E', "metrics", "%s: type %d is not a counter, gauge or histogram", name,
                (int)o->type);
        return false;
    }
    if (!valid_metric_name(o->name)) {
        ks__log('E', "metrics", "metric name \"%s\" is not [a-zA-Z_:][a-zA-Z0-9_:]*", name);
        return false;
    }
    if (!o->help || !*o->help) {
        ks__log('E', "metrics", "%s: help text is empty", name);
        return false;
    }
    if (o->nlabels > KS_METRICS_MAX_LABELS || (o->nlabels && !o->labels)) {
        ks__log('E', "metrics", "%s: %zu labels (at most %d)", name, o->nlabels,
                KS_METRICS_MAX_LABELS);
        return false;
    }
    for (size_t i = 0; i < o->nlabels; i++) {
        if (!valid_label_name(o->labels[i]) ||
            (o->type == KS_METRIC_HISTOGRAM && strcmp(o->labels[i], "le") == 0)) {
            ks__log('E', "metrics",
                    "%s: label name \"%s\" is not [a-zA-Z_][a-zA-Z0-9_]* without a leading \"__\""
                    " (nor \"le\" on a histogram)",
                    name, o->labels[i] ? o->labels[i] : "(null)");
            return false;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(o->labels[i], o->labels[j]) == 0) {
                ks__log('E', "metrics", "%s: label \"%s\" appears twice", name, o->labels[i]);
                return false;
            }
    }
    size_t nb = 0;
    if (o->type == KS_METRIC_HISTOGRAM) {
        nb = o->nbuckets;
        if (nb && !o->buckets)
            nb = 0;
        if (nb && isinf(o->buckets[nb - 1]) && o->buckets[nb - 1] > 0)
            nb--; /* +Inf is implied */
        if (nb > KS_METRICS_MAX_BUCKETS) {
            ks__log('E', "metrics", "%s: %zu buckets (at most %d)", name, nb,
                    KS_METRICS_MAX_BUCKETS);
            return false;
        }
        for (size_t i = 0; i < nb; i++)
            if (isnan(o->buckets[i]) || (i > 0 && !(o->buckets[i] > o->buckets[i - 1]))) {
                ks__log('E', "metrics",
                        "%s: buckets[%zu] = %g: upper bounds must be strictly "
                        "increasing numbers",
                        name, i, o->buckets[i]);
                return false;
            }
    }
    *nbuckets = nb;
    return true;
}

static ks_metric *series_new(ks_metric_family *f, const char *const *values, uint64_t hash);
static uint64_t values_hash(const char *const *values, size_t n);

int ks__metrics_register(ks_metrics *r, const ks_metric_opts *o, ks_metric_family **out)
{
    size_t nb = 0;
    int rc = KS_ENOMEM;
    if (out)
        *out = NULL;
    if (!r || !o || !opts_valid(o, &nb))
        return KS_EINVAL;

    ks_metric_family *f = calloc(1, sizeof *f);
    if (!f)
        return KS_ENOMEM;
    pthread_mutex_init(&f->mu, NULL);
    f->registry = r;
    f->type = o->type;
    f->name = strdup(o->name);
    const char *prefix = stability_prefix(o->stability);
    size_t hl = strlen(prefix) + strlen(o->help) + 1;
    f->help = malloc(hl);
    if (!f->name || !f->help)
        goto fail;
    snprintf(f->help, hl, "%s%s", prefix, o->help);
    f->nlabels = o->nlabels;
    for (size_t i = 0; i < o->nlabels; i++) {
        if (!(f->labels[i] = strdup(o->labels[i])))
            goto fail;
        f->order[i] = (unsigned char)i;
    }
    /* Insertion sort of the label order by name: at most 8 labels. */
    for (size_t i = 1; i < f->nlabels; i++)
        for (size_t j = i; j > 0 && strcmp(f->labels[f->order[j - 1]], f->labels[f->order[j]]) > 0;
             j--) {
            unsigned char t = f->order[j];
            f->order[j] = f->order[j - 1];
            f->order[j - 1] = t;
        }
    f->nbuckets = nb;
    for (size_t i = 0; i < nb; i++) {
        f->bounds[i] = o->buckets[i];
        ks__metrics_format_float(o->buckets[i], f->bound_text[i]);
    }
    f->table_cap = 16;
    if (!(f->table = calloc(f->table_cap, sizeof *f->table)))
        goto fail;

    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nfamilies; i++)
        if (strcmp(r->families[i]->name, f->name) == 0) {
            pthread_mutex_unlock(&r->mu);
            ks__log('E', "metrics", "%s: a metric of that name is already registered", f->name);
            rc = KS_EEXIST;
            goto fail;
        }
    if (r->nfamilies == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        ks_metric_family **grown = realloc(r->families, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&r->mu);
            goto fail;
        }
        r->families = grown;
        r->cap = cap;
    }
    /* A family without labels has its series from the start, as client_golang's plain metrics. */
    if (f->nlabels == 0 && !series_new(f, NULL, values_hash(NULL, 0))) {
        pthread_mutex_unlock(&r->mu);
        goto fail;
    }
    r->families[r->nfamilies++] = f;
    pthread_mutex_unlock(&r->mu);
    if (out)
        *out = f;
    return 0;

fail:
    family_free(f);
    return rc;
}

/* --- series -------------------------------------------------------------------------------- */

/* FNV-1a over the values, each followed by 0xFF (never a byte of valid UTF-8). */
static uint64_t values_hash(const char *const *values, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        for (const unsigned char *p = (const unsigned char *)(values[i] ? values[i] : ""); *p; p++)
            h = (h ^ *p) * 1099511628211ull;
        h = (h ^ 0xFF) * 1099511628211ull;
    }
    return h;
}

static bool values_equal(const ks_metric *m, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m->values[i], values[i] ? values[i] : "") != 0)
            return false;
    return true;
}

/* Creates a series and links it in. Caller holds f->mu (or owns f alone). */
static ks_metric *series_new(ks_metric_family *f, const char *const *values, uint64_t hash)
{
    size_t ncounts = f->type == KS_METRIC_HISTOGRAM ? f->nbuckets + 1 : 0;
    size_t head = sizeof(ks_metric) + ncounts * sizeof(_Atomic uint64_t);
    size_t strs = 0;
    for (size_t i = 0; i < f->nlabels; i++)
        strs += strlen(values[i] ? values[i] : "") + 1;

    if (f->nseries == f->series_cap) {
        size_t cap = f->series_cap ? f->series_cap * 2 : 8;
        ks_metric **grown = realloc(f->series, cap * sizeof *grown);
        if (!grown)
            return NULL;
        f->series = grown;
        f->series_cap = cap;
    }
    if (f->nseries + 1 > f->table_cap) {
        size_t cap = f->table_cap * 2;
        ks_metric **table = calloc(cap, sizeof *table);
        if (!table)
            return NULL;
        for (size_t i = 0; i < f->nseries; i++) {
            ks_metric *s = f->series[i];
            s->hash_next = table[s->hash & (cap - 1)];
            table[s->hash & (cap - 1)] = s;
        }
        free(f->table);
        f->table = table;
        f->table_cap = cap;
    }

    ks_metric *m = calloc(1, head + strs);
    if (!m)
        return NULL;
    m->family = f;
    m->hash = hash;
    char *p = (char *)m + head;
    for (size_t i = 0; i < f->nlabels; i++) {
        const char *v = values[i] ? values[i] : "";
        size_t l = strlen(v) + 1;
        memcpy(p, v, l);
        m->values[i] = p;
        p += l;
    }
    m->hash_next = f->table[hash & (f->table_cap - 1)];
    f->table[hash & (f->table_cap - 1)] = m;
    f->series[f->nseries++] = m;
    return m;
}

ks_metric *ks__metrics_child(ks_metric_family *f, const char *const *values, size_t nvalues)
{
    if (!f || nvalues != f->nlabels) {
        if (f)
            ks__log('E', "metrics", "%s: %zu label values given, the family has %zu labels",
                    f->name, nvalues, f->nlabels);
        return NULL;
    }
    for (size_t i = 0; i < nvalues; i++)
        if (values[i] && !valid_utf8(values[i])) {
            ks__log('E', "metrics", "%s: the value of label \"%s\" is not valid UTF-8", f->name,
                    f->labels[i]);
            return NULL;
        }
    uint64_t h = values_hash(values, nvalues);
    pthread_mutex_lock(&f->mu);
    ks_metric *m = f->table[h & (f->table_cap - 1)];
    while (m && !(m->hash == h && values_equal(m, values, nvalues)))
        m = m->hash_next;
    if (!m)
        m = series_new(f, values, h);
    pthread_mutex_unlock(&f->mu);
    return m;
}

/* --- updates ------------------------------------------------------------------------------- */

void ks__metrics_add(ks_metric *m, double v)
{
    if (!m)
        return;
    switch (m->family->type) {
    case KS_METRIC_COUNTER:
        if (!(v >= 0)) /* negative or NaN: client_golang panics; a counter never goes down */
            return;
        /* Whole numbers go to the integer part, as client_golang's counter.Add does. */
        if (v < 18446744073709551616.0 && (double)(uint64_t)v == v)
            atomic_fetch_add_explicit(&m->ival, (uint64_t)v, memory_order_relaxed);
        else
            atomic_add_double(&m->bits, v);
        break;
    case KS_METRIC_GAUGE:
        atomic_add_double(&m->bits, v);
        break;
    default:
        break;
    }
}

void ks__metrics_inc(ks_metric *m)
{
    if (m && m->family->type == KS_METRIC_COUNTER)
        atomic_fetch_add_explicit(&m->ival, 1, memory_order_relaxed);
    else
        ks__metrics_add(m, 1);
}

void ks__metrics_dec(ks_metric *m)
{
    if (m && m->family->type == KS_METRIC_GAUGE)
        atomic_add_double(&m->bits, -1);
}

void ks__metrics_set(ks_metric *m, double v)
{
    if (m && m->family->type == KS_METRIC_GAUGE)
        atomic_store_explicit(&m->bits, dbits(v), memory_order_relaxed);
}

void ks__metrics_observe(ks_metric *m, double v)
{
    if (!m || m->family->type != KS_METRIC_HISTOGRAM)
        return;
    const ks_metric_family *f = m->family;
    /* The first bound >= v (sort.SearchFloat64s); NaN compares false and lands in +Inf. */
    size_t lo = 0, hi = f->nbuckets;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->bounds[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    atomic_fetch_add_explicit(&m->counts[lo], 1, memory_order_relaxed);
    atomic_add_double(&m->bits, v);
}

double ks__metrics_value(const ks_metric *m)
{
    if (!m)
        return 0;
    /* The casts drop const only to satisfy atomic_load's prototype in older C libraries. */
    uint64_t bits = atomic_load_explicit((_Atomic uint64_t *)&m->bits, memory_order_relaxed);
    switch (m->family->type) {
    case KS_METRIC_COUNTER:
        return bitsd(bits) +
               (double)atomic_load_explicit((_Atomic uint64_t *)&m->ival, memory_order_relaxed);
    case KS_METRIC_GAUGE:
        return bitsd(bits);
    default:
        return 0;
    }
}

uint64_t ks__metrics_count(const ks_metric *m)
{
    if (!m || m->family->type != KS_METRIC_HISTOGRAM)
        return 0;
    uint64_t n = 0;
    for (size_t i = 0; i <= m->family->nbuckets; i++)
        n += atomic_load_explicit((_Atomic uint64_t *)&m->counts[i], memory_order_relaxed);
    return n;
}

double ks__metrics_sum(const ks_metric *m)
{
    if (!m || m->family->type != KS_METRIC_HISTOGRAM)
        return 0;
    return bitsd(atomic_load_explicit((_Atomic uint64_t *)&m->bits, memory_order_relaxed));
}

/* --- numbers ------------------------------------------------------------------------------- */

int ks__metrics_exponential_buckets(double start, double factor, size_t count, double *out)
{
    if (count < 1 || !(start > 0) || !(factor > 1) || !out)
        return KS_EINVAL;
    for (size_t i = 0; i < count; i++) {
        out[i] = start;
        start *= factor; /* repeated multiplication, not pow(): upstream's rounding */
    }
    return 0;
}

size_t ks__metrics_format_float(double v, char buf[KS_METRICS_FLOAT_BUF])
{
    if (isnan(v))
        return (size_t)snprintf(buf, KS_METRICS_FLOAT_BUF, "NaN");
    if (isinf(v))
        return (size_t)snprintf(buf, KS_METRICS_FLOAT_BUF, v > 0 ? "+Inf" : "-Inf");
    if (v == 0)
        return (size_t)snprintf(buf, KS_METRICS_FLOAT_BUF, signbit(v) ? "-0" : "0");

    /* Go's shortest mode: the fewest significant digits that read back as v and, among those,
     * the string closest to v. For each length, the only candidates are the two decimals of that
     * length that bracket v: the correctly rounded one (printf's, the closer) first, then the one
     * on the other side of v, which is needed just above powers of two, where the interval of
     * values that read back as v is lopsided. The digits are kept as an integer m (value
     * m * 10^(exp - len + 1)); 17 digits always suffice for a double and fit in 64 bits. */
    bool neg = signbit(v);
    double a = fabs(v);
    uint64_t m = 0;
    int exp = 0, len;
    for (len = 1; len <= 17; len++) {
        char e[40];
        snprintf(e, sizeof e, "%.*e", len - 1, a);
        double rounded = strtod(e, NULL);
        exp = (int)strtol(strchr(e, 'e') + 1, NULL, 10);
        m = 0;
        for (const char *q = e; *q != 'e'; q++)
            if (*q >= '0' && *q <= '9')
                m = m * 10 + (uint64_t)(*q - '0');
        if (rounded == a)
            break;
        /* The other bracket: one unit in the last digit towards v. */
        uint64_t low = 1, other = 0;
        int oexp = exp;
        for (int i = 1; i < len; i++)
            low *= 10; /* 10^(len-1): the smallest len-digit mantissa */
        if (rounded < a) {
            other = m + 1;
            if (other == low * 10) { /* 9.99 -> 10.0: one more decade */
                other = low;
                oexp++;
            }
        } else {
            other = m - 1;
            if (other < low) { /* 1.00 -> 0.999: a decade down, all nines */
                other = other * 10 + 9;
                oexp--;
            }
        }
        snprintf(e, sizeof e, "%llue%d", (unsigned long long)other, oexp - len + 1);
        if (strtod(e, NULL) == a) {
            m = other;
            exp = oexp;
            break;
        }
    }
    char digits[24];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)m);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;

    char *o = buf;
    if (neg)
        *o++ = '-';
    if (exp < -4 || exp >= 6) { /* %e form with eprec = 6, as Go does for the shortest mode */
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        int ax = exp < 0 ? -exp : exp;
        o += snprintf(o, (size_t)(buf + KS_METRICS_FLOAT_BUF - o), "e%c%02d", exp < 0 ? '-' : '+',
                      ax);
        return (size_t)(o - buf);
    }
    int dp = exp + 1; /* digits before the decimal point */
    if (dp <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -dp; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)nd);
        o += nd;
    } else {
        for (int i = 0; i < dp; i++)
            *o++ = i < nd ? digits[i] : '0';
        if (nd > dp) {
            *o++ = '.';
            memcpy(o, digits + dp, (size_t)(nd - dp));
            o += nd - dp;
        }
    }
    *o = '\0';
    return (size_t)(o - buf);
}

/* --- exposition ---------------------------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *grown = realloc(b->p, cap);
        if (!grown) {
            b->oom = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* Escapes \ and newline (and " in label values), as expfmt's escapeString. */
static void put_escaped(buf *b, const char *s, bool quote)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep = *s == '\\'           ? "\\\\"
                          : *s == '\n'         ? "\\n"
                          : quote && *s == '"' ? "\\\""
                                               : NULL;
        if (!rep)
            continue;
        put(b, run, (size_t)(s - run));
        put(b, rep, 2);
        run = s + 1;
    }
    put(b, run, (size_t)(s - run));
}

/* A sample value as expfmt's writeFloat: 0, 1, -1 short, -0 as "0", else FormatFloat. */
static void put_value(buf *b, double v)
{
    char num[KS_METRICS_FLOAT_BUF];
    if (v == 0) {
        puts_(b, "0");
        return;
    }
    put(b, num, ks__metrics_format_float(v, num));
}

static void put_uint(buf *b, uint64_t v)
{
    char num[24];
    put(b, num, (size_t)snprintf(num, sizeof num, "%llu", (unsigned long long)v));
}

/* name+suffix{labels[,le="bound"]} with a trailing space. */
static void put_name_labels(buf *b, const ks_metric_family *f, const ks_metric *m,
                            const char *suffix, const char *le)
{
    puts_(b, f->name);
    puts_(b, suffix);
    if (f->nlabels || le) {
        put(b, "{", 1);
        for (size_t i = 0; i < f->nlabels; i++) {
            size_t k = f->order[i];
            if (i)
                put(b, ",", 1);
            puts_(b, f->labels[k]);
            put(b, "=\"", 2);
            put_escaped(b, m->values[k], true);
            put(b, "\"", 1);
        }
        if (le) {
            if (f->nlabels)
                put(b, ",", 1);
            put(b, "le=\"", 4);
            puts_(b, le);
            put(b, "\"", 1);
        }
        put(b, "}", 1);
    }
    put(b, " ", 1);
}

static int family_cmp(const void *a, const void *b)
{
    return strcmp((*(ks_metric_family *const *)a)->name, (*(ks_metric_family *const *)b)->name);
}

/* Series order (client_golang's MetricSorter): label values compared in label-name order. */
static int series_cmp(const void *a, const void *b)
{
    const ks_metric *x = *(ks_metric *const *)a, *y = *(ks_metric *const *)b;
    const ks_metric_family *f = x->family;
    for (size_t i = 0; i < f->nlabels; i++) {
        int c = strcmp(x->values[f->order[i]], y->values[f->order[i]]);
        if (c)
            return c;
    }
    return 0;
}

static void render_series(buf *b, const ks_metric_family *f, const ks_metric *m)
{
    if (f->type != KS_METRIC_HISTOGRAM) {
        put_name_labels(b, f, m, "", NULL);
        put_value(b, ks__metrics_value(m));
        put(b, "\n", 1);
        return;
    }
    uint64_t cum = 0;
    for (size_t i = 0; i <= f->nbuckets; i++) {
        cum += atomic_load_explicit((_Atomic uint64_t *)&m->counts[i], memory_order_relaxed);
        put_name_labels(b, f, m, "_bucket", i < f->nbuckets ? f->bound_text[i] : "+Inf");
        put_uint(b, cum);
        put(b, "\n", 1);
    }
    put_name_labels(b, f, m, "_sum", NULL);
    put_value(b, ks__metrics_sum(m));
    put(b, "\n", 1);
    put_name_labels(b, f, m, "_count", NULL);
    put_uint(b, cum);
    put(b, "\n", 1);
}

int ks__metrics_render(ks_metrics *r, char **text, size_t *len)
{
    static const char *const type_names[] = {"", "counter", "gauge", "histogram"};
    buf b = {0};
    ks_metric_family **fams = NULL;
    ks_metric **series = NULL;
    size_t nfams = 0, series_cap = 0;
    int rc = KS_ENOMEM;

    *text = NULL;
    if (len)
        *len = 0;
    if (!r)
        return KS_EINVAL;
    pthread_mutex_lock(&r->mu);
    nfams = r->nfamilies;
    if (nfams && (fams = malloc(nfams * sizeof *fams)))
        memcpy(fams, r->families, nfams * sizeof *fams);
    pthread_mutex_unlock(&r->mu);
    if (nfams && !fams)
        goto out;
    if (nfams)
        qsort(fams, nfams, sizeof *fams, family_cmp);
    put(&b, "", 0); /* an empty registry renders as "" */

    for (size_t i = 0; i < nfams; i++) {
        ks_metric_family *f = fams[i];
        pthread_mutex_lock(&f->mu);
        size_t n = f->nseries;
        if (n > series_cap) {
            ks_metric **grown = realloc(series, n * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&f->mu);
                goto out;
            }
            series = grown;
            series_cap = n;
        }
        if (n)
            memcpy(series, f->series, n * sizeof *series);
        pthread_mutex_unlock(&f->mu);
        if (n == 0) /* client_golang leaves out families without series */
            continue;
        qsort(series, n, sizeof *series, series_cmp);

        puts_(&b, "# HELP ");
        puts_(&b, f->name);
        put(&b, " ", 1);
        put_escaped(&b, f->help, false);
        puts_(&b, "\n# TYPE ");
        puts_(&b, f->name);
        put(&b, " ", 1);
        puts_(&b, type_names[f->type]);
        put(&b, "\n", 1);
        for (size_t j = 0; j < n; j++)
            render_series(&b, f, series[j]);
    }
    if (!b.oom) {
        *text = b.p;
        if (len)
            *len = b.len;
        b.p = NULL;
        rc = 0;
    }

out:
    free(b.p);
    free(series);
    free(fams);
    return rc;
}

ks_metric_family *ks__metrics_find(ks_metrics *r, const char *name)
{
    ks_metric_family *f = NULL;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nfamilies && !f; i++)
        if (strcmp(r->families[i]->name, name) == 0)
            f = r->families[i];
    pthread_mutex_unlock(&r->mu);
    return f;
}

ks_metric_type ks__metrics_family_type(const ks_metric_family *f) { return f->type; }
size_t ks__metrics_family_nlabels(const ks_metric_family *f) { return f->nlabels; }
