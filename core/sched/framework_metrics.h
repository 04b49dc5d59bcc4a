/*
 * The scheduler's metrics, as upstream kube-scheduler v1.34 records them (pkg/scheduler/metrics,
 * framework/runtime/framework.go, schedule_one.go, backend/queue): label values, which calls are
 * timed and where. A scheduler created without metrics has no ks_fw_metrics at all and makes no
 * timing calls; the framework checks one pointer per extension point run and one flag per plugin
 * call.
 *
 * Series are resolved once and kept (ks__metrics_child takes the family's mutex and hashes):
 * plugin_evaluation_total when the framework is instrumented (upstream creates those series in
 * setInstrumentedPlugins), the others on first use, into tables of atomic pointers indexed by
 * (extension point, status) and (plugin, extension point, status), so an observation is one atomic
 * load plus the histogram's own atomics.
 *
 * Threads: every function may be called from any thread (the tables are atomic pointers; a race
 * to resolve one series resolves the same series twice).
 */
#ifndef KS_CORE_FRAMEWORK_METRICS_H
#define KS_CORE_FRAMEWORK_METRICS_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "kubesched/plugin.h"
#include "sched/sched_families.h"
#include "util/clock.h"

struct ks_framework;

/* Extension points, as upstream's metrics label them. */
typedef enum ks_ep {
    KS_EP_PRE_ENQUEUE,
    KS_EP_PRE_FILTER,
    KS_EP_PRE_FILTER_ADD_POD,
    KS_EP_PRE_FILTER_REMOVE_POD,
    KS_EP_FILTER,
    KS_EP_POST_FILTER,
    KS_EP_PRE_SCORE,
    KS_EP_SCORE,
    KS_EP_SCORE_NORMALIZE,
    KS_EP_RESERVE,
    KS_EP_UNRESERVE,
    KS_EP_PERMIT,
    KS_EP_PRE_BIND,
    KS_EP_BIND,
    KS_EP_POST_BIND,
    KS_EP_SIGN,                /* v1.37 SignPod (opportunistic batching) */
    KS_EP_PRE_BIND_PRE_FLIGHT, /* v1.36 PreBindPreFlight (binding cycle) */
    KS_EP_COUNT
} ks_ep;

/* The statuses upstream's Code.String() names (ks_code has the same order). */
#define KS_METRICS_NCODES 7

/* upstream pluginMetricsSamplePercent: plugin_execution_duration_seconds is recorded for this
 * share of scheduling cycles (and of PreEnqueue runs). */
#define KS_PLUGIN_METRICS_SAMPLE_PERCENT 10

const char *ks__ep_label(ks_ep ep);    /* "PreFilter", "ScoreExtensionNormalize", ... */
const char *ks__code_label(ks_code c); /* "Success", "UnschedulableAndUnresolvable", ... */

/* Plugin evaluation counters (plugin_evaluation_total) are kept per worker and per plugin
 * instance during a cycle and added to the counters once at its end, so that the per-node loops
 * touch only their own cache line. */
#define KS_EVAL_STRIDE 64 /* instances per row (a profile has at most 64) */
enum { KS_EVAL_PRE_FILTER, KS_EVAL_FILTER, KS_EVAL_PRE_SCORE, KS_EVAL_SCORE, KS_EVAL_KINDS };

typedef struct ks_fw_metrics {
    const ks_sched_metrics *m;
    const char *profile;
    struct ks_framework *fw;
    _Atomic(ks_metric *) ep[KS_EP_COUNT][KS_METRICS_NCODES];
    _Atomic(ks_metric *) *plugin;  /* [instance][KS_EP_COUNT][KS_METRICS_NCODES] */
    _Atomic(ks_metric *) *unsched; /* unschedulable_pods{plugin, profile}, [instance] */
    /* queueing_hint_execution_duration_seconds{plugin, event, hint} by instance, event label and
     * hint (static strings); used only under the scheduling queue's lock, which guards it. */
    struct ks_hint_slot {
        const char *event, *hint;
        ks_metric *m;
    } *hints;                                       /* [instance][KS_HINT_SLOTS] */
    ks_metric *eval[KS_EVAL_KINDS][KS_EVAL_STRIDE]; /* NULL: the plugin is not at that point */
    /* schedule_attempts_total and scheduling_attempt_duration_seconds of this profile, by result
     * (scheduled, unschedulable, error). */
    _Atomic uint64_t sample_seq; /* ks__fw_metrics_sample's generator */
    int preemption_inst;         /* the DefaultPreemption instance, -1 if none */
    int sample_percent;          /* KS_PLUGIN_METRICS_SAMPLE_PERCENT unless a test says otherwise */
    _Atomic(ks_metric *) attempts[3];
    _Atomic(ks_metric *) attempt_duration[3];
} ks_fw_metrics;

/* Instruments fw (fw->metrics); 0 or KS_ENOMEM. Freed by ks__framework_free. */
int ks__fw_metrics_attach(struct ks_framework *fw, const ks_sched_metrics *m);
void ks__fw_metrics_free(ks_fw_metrics *fm);

static inline double ks__seconds_since(int64_t start_ns)
{
    return (double)(ks__clock_now_ns() - start_ns) / 1e9;
}

/* Whether to time the plugins of this run: true for KS_PLUGIN_METRICS_SAMPLE_PERCENT of calls
 * (a lock-free generator; for PreEnqueue, which any thread may run). */
int ks__fw_metrics_sample(ks_fw_metrics *fm);
/* The start of a timed extension point: 0 without metrics (ks__fw_metrics_ep then does nothing). */
static inline int64_t ks__fw_metrics_ep_start(const ks_fw_metrics *fm)
{
    return fm ? ks__clock_now_ns() : 0;
}
/* framework_extension_point_duration_seconds{ep, code, profile}. */
void ks__fw_metrics_ep(ks_fw_metrics *fm, ks_ep ep, ks_code code, int64_t start_ns);
/* plugin_execution_duration_seconds{plugin, ep, code} (sampled cycles only). */
void ks__fw_metrics_plugin(ks_fw_metrics *fm, int inst, ks_ep ep, ks_code code, int64_t start_ns);
/* Adds a cycle's evaluation counts: rows[w * KS_EVAL_STRIDE + instance], nrows rows. */
void ks__fw_metrics_add_evals(ks_fw_metrics *fm, int kind, const uint32_t *rows, size_t nrows);
/* queueing_hint_execution_duration_seconds{plugin, event, hint}: a rejector plugin's queueing
 * hint for event answered hint ("Queue", "QueueSkip" or "Error", upstream's labels; static
 * strings), timed from start_ns. Caller holds the scheduling queue's lock. */
#define KS_HINT_SLOTS 16
void ks__fw_metrics_hint(ks_fw_metrics *fm, int inst, const char *event, const char *hint,
                         int64_t start_ns);
/* One attempt's end: result 0 scheduled, 1 unschedulable, 2 error. */
void ks__fw_metrics_attempt(ks_fw_metrics *fm, int result, int64_t start_ns);
/* unschedulable_pods{plugin, profile} for the instances in bits: +1 or -1 each. */
void ks__fw_metrics_unschedulable(ks_fw_metrics *fm, uint64_t bits, int delta);

#endif
