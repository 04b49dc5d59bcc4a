/*
 * Metrics: a small Prometheus registry (counters, gauges, histograms with fixed label names) and
 * the text exposition format 0.0.4, as client_golang v1.22 writes it through component-base
 * v0.34 (what kube-scheduler's /metrics serves):
 *
 *   # HELP <name> [<STABILITY>] <help, with \ and newline escaped>
 *   # TYPE <name> counter|gauge|histogram
 *   <name>{<labels sorted by name>} <value>
 *   <name>_bucket{<labels>,le="<bound>"} <cumulative count>      (histograms; then le="+Inf")
 *   <name>_sum{<labels>} <sum>
 *   <name>_count{<labels>} <count>
 *
 * Families are written sorted by name and series sorted by their label values (in label-name
 * order); a family with labels and no series yet is left out, as client_golang's Gather does;
 * a family without labels has its one series from the start. Numbers are written as Go's
 * strconv.FormatFloat(v, 'g', -1, 64) writes them ("1e+06", "0.30000000000000004", "+Inf"),
 * counts of histograms as integers.
 *
 * How to use it. Register every family once at startup (ks__metrics_register), resolve the series
 * a hot path needs once (ks__metrics_child / KS_METRICS_WITH) and keep the ks_metric pointer: it
 * stays valid, at the same address, until the registry is destroyed. Updating a series is then
 * one or two relaxed atomic operations, no lock, no lookup and no allocation. Resolving a series
 * takes the family's mutex and hashes the label values: fine once per scheduling attempt, not
 * per node.
 *
 * Threads: every function may be called from any thread, concurrently with every other, except
 * ks__metrics_destroy (no other call may be in flight) and registering while another thread
 * renders (registration takes the registry lock, so it is safe, merely not meant for a hot path).
 */
#ifndef KS_CORE_METRICS_H
#define KS_CORE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

typedef struct ks_metrics ks_metrics;             /* a registry */
typedef struct ks_metric_family ks_metric_family; /* a name, a type, label names, buckets */
typedef struct ks_metric ks_metric;               /* one series: a family and label values */

#define KS_METRICS_MAX_LABELS 8
#define KS_METRICS_MAX_BUCKETS 64
/* Enough for any double written by ks__metrics_format_float ("-1.2345678901234567e-308"). */
#define KS_METRICS_FLOAT_BUF 32

typedef enum ks_metric_type {
    KS_METRIC_COUNTER = 1,
    KS_METRIC_GAUGE = 2,
    KS_METRIC_HISTOGRAM = 3
} ks_metric_type;

/* component-base's stability levels; all but NONE prefix the help text with "[ALPHA] " etc. */
typedef enum ks_metric_stability {
    KS_STABILITY_NONE = 0, /* plain client_golang: help written as given */
    KS_STABILITY_ALPHA,
    KS_STABILITY_BETA,
    KS_STABILITY_STABLE
} ks_metric_stability;

/* What a family is; ks__metrics_register copies everything it points to. */
typedef struct ks_metric_opts {
    ks_metric_type type;
    const char *name; /* full name, [a-zA-Z_:][a-zA-Z0-9_:]* ("scheduler_pending_pods") */
    const char *help; /* one line or more; never empty */
    ks_metric_stability stability;
    const char *const *labels; /* nlabels names, [a-zA-Z_][a-zA-Z0-9_]*, no "__" prefix, no dups */
    size_t nlabels;            /* 0..KS_METRICS_MAX_LABELS */
    const double *buckets;     /* histograms: upper bounds, strictly increasing; a last +Inf is */
    size_t nbuckets;           /* dropped (it is always implied); 0..KS_METRICS_MAX_BUCKETS */
} ks_metric_opts;

/* A registry; NULL on out of memory. destroy frees every family and series (NULL: no-op). */
ks_metrics *ks__metrics_create(void);
void ks__metrics_destroy(ks_metrics *r);

/* Register a family. 0, KS_EINVAL (a bad name, label or bucket list; logged with the reason),
 * KS_EEXIST (the name is taken) or KS_ENOMEM. OUT: *out, owned by the registry. A family without
 * labels gets its one series now. */
int ks__metrics_register(ks_metrics *r, const ks_metric_opts *opts, ks_metric_family **out);
/* The family registered under name, or NULL. */
ks_metric_family *ks__metrics_find(ks_metrics *r, const char *name);
/* The type and label count of a family (to check one found by name before using it). */
ks_metric_type ks__metrics_family_type(const ks_metric_family *f);
size_t ks__metrics_family_nlabels(const ks_metric_family *f);

/* The series for these label values (nvalues == the family's label count; NULL values read as ""),
 * created on first use. Returns NULL if the count is wrong, a value is not valid UTF-8 (the
 * Prometheus text format requires it) or memory ran out; every update function accepts NULL and
 * does nothing, so a caller may ignore the failure. Owned by the registry. */
ks_metric *ks__metrics_child(ks_metric_family *f, const char *const *values, size_t nvalues);
/* KS_METRICS_WITH(f, "scheduled", profile): the same with the values listed in label order. */
#define KS_METRICS_WITH(f, ...)                                                                    \
    ks__metrics_child((f), (const char *const[]){__VA_ARGS__},                                     \
                      sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
/* The one series of a family without labels. */
#define KS_METRICS_SOLO(f) ks__metrics_child((f), NULL, 0)

/* Updates. Lock-free; a call of the wrong kind for the series' type does nothing.
 *   counter:   inc, add (v >= 0; a negative or NaN v is ignored, client_golang would panic)
 *   gauge:     inc, dec, add (any sign), set
 *   histogram: observe (v <= bound goes to that bucket; NaN counts in +Inf and makes the sum NaN)
 */
void ks__metrics_inc(ks_metric *m);
void ks__metrics_dec(ks_metric *m);
void ks__metrics_add(ks_metric *m, double v);
void ks__metrics_set(ks_metric *m, double v);
void ks__metrics_observe(ks_metric *m, double v);

/* Reads, for tests and the simulator's summary: a counter's or gauge's value, a histogram's count
 * and sum (0 for the other kinds and for NULL). */
double ks__metrics_value(const ks_metric *m);
uint64_t ks__metrics_count(const ks_metric *m);
double ks__metrics_sum(const ks_metric *m);

/* The whole registry in the text format. OUT: *text (NUL-terminated, caller frees with free())
 * and *len (without the NUL; may be NULL). 0 or KS_ENOMEM. Takes each family's lock only to copy
 * its list of series, so renders do not stall updates.
 *
 * A histogram's buckets and _count come from one pass over its bucket counters, so they always
 * agree; its _sum is read separately and may miss an observation that is still in flight
 * (client_golang avoids that with a hot/cold swap; a scrape never notices). */
int ks__metrics_render(ks_metrics *r, char **text, size_t *len);

/* prometheus.ExponentialBuckets(start, factor, count): out[i] = start * factor^i, computed by
 * repeated multiplication exactly as upstream does (so 1.5^i steps carry upstream's rounding,
 * "1.5000000000000002e-05"). 0, or KS_EINVAL if count < 1, start <= 0 or factor <= 1. */
int ks__metrics_exponential_buckets(double start, double factor, size_t count, double *out);

/* Go's strconv.FormatFloat(v, 'g', -1, 64): the shortest digits that read back as v, in %e form
 * when the exponent is < -4 or >= 6 ("1e-05", "123456", "1.234567e+06", "-0", "+Inf", "NaN").
 * Returns the length written to buf (NUL-terminated). */
size_t ks__metrics_format_float(double v, char buf[KS_METRICS_FLOAT_BUF]);

#endif
