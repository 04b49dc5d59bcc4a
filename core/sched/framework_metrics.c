/*
 * The framework's metric tables (see framework_metrics.h).
 */
#include "sched/isolation.h"
#include "sched/framework_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "sched/framework.h"

static const char *const k_ep_labels[KS_EP_COUNT] = {
    [KS_EP_PRE_ENQUEUE] = "PreEnqueue",
    [KS_EP_PRE_FILTER] = "PreFilter",
    [KS_EP_PRE_FILTER_ADD_POD] = "PreFilterExtensionAddPod",
    [KS_EP_PRE_FILTER_REMOVE_POD] = "PreFilterExtensionRemovePod",
    [KS_EP_FILTER] = "Filter",
    [KS_EP_POST_FILTER] = "PostFilter",
    [KS_EP_PRE_SCORE] = "PreScore",
    [KS_EP_SCORE] = "Score",
    [KS_EP_SCORE_NORMALIZE] = "ScoreExtensionNormalize",
    [KS_EP_RESERVE] = "Reserve",
    [KS_EP_UNRESERVE] = "Unreserve",
    [KS_EP_PERMIT] = "Permit",
    [KS_EP_PRE_BIND] = "PreBind",
    [KS_EP_BIND] = "Bind",
    [KS_EP_POST_BIND] = "PostBind",
    [KS_EP_SIGN] = "Sign",
    [KS_EP_PRE_BIND_PRE_FLIGHT] = "PreBindPreFlight",
};

static const char *const k_code_labels[KS_METRICS_NCODES] = {
    "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending",
};

const char *ks__ep_label(ks_ep ep) { return (unsigned)ep < KS_EP_COUNT ? k_ep_labels[ep] : ""; }

const char *ks__code_label(ks_code c)
{
    /* upstream Code.String() of an unknown code is "Unknown Code(n)"; ours never leave 0..6 */
    return (unsigned)c < KS_METRICS_NCODES ? k_code_labels[c] : "Error";
}

int ks__fw_metrics_attach(ks_framework *fw, const ks_sched_metrics *m)
{
    ks_fw_metrics *fm = calloc(1, sizeof(*fm));
    if (!fm)
        return KS_ENOMEM;
    fm->m = m;
    fm->profile = fw->profile_name;
    fm->fw = fw;
    atomic_init(&fm->sample_seq, (uint64_t)ks__clock_now_ns());
    fm->sample_percent = KS_PLUGIN_METRICS_SAMPLE_PERCENT;
    size_t n = fw->ninst ? fw->ninst : 1;
    fm->plugin = calloc(n * KS_EP_COUNT * KS_METRICS_NCODES, sizeof(*fm->plugin));
    fm->unsched = calloc(n, sizeof(*fm->unsched));
    fm->hints = calloc(n * KS_HINT_SLOTS, sizeof(*fm->hints));
    if (!fm->plugin || !fm->unsched || !fm->hints) {
        ks__fw_metrics_free(fm);
        return KS_ENOMEM;
    }
    /* kubesched's own families for isolated plugins (registered only when one is isolated, so
     * that a default /metrics is upstream's) */
    for (size_t i = 0; i < fw->ninst; i++)
        if (fw->inst[i].iso && ks__iso_attach_metrics(fw->inst[i].iso, m->registry) != 0) {
            ks__fw_metrics_free(fm);
            return KS_ENOMEM;
        }
    /* upstream DefaultPreemption counts preemption_attempts_total itself, once per PostFilter. */
    fm->preemption_inst = -1;
    for (size_t i = 0; i < fw->ninst; i++)
        if (strcmp(fw->inst[i].name, "DefaultPreemption") == 0)
            fm->preemption_inst = fw->inst[i].index;
    /* upstream setInstrumentedPlugins: the evaluation counters exist from the start. */
    static const struct {
        int kind, point;
        ks_ep ep;
    } evals[] = {
        {KS_EVAL_PRE_FILTER, KS_PT_PRE_FILTER, KS_EP_PRE_FILTER},
        {KS_EVAL_FILTER, KS_PT_FILTER, KS_EP_FILTER},
        {KS_EVAL_PRE_SCORE, KS_PT_PRE_SCORE, KS_EP_PRE_SCORE},
        {KS_EVAL_SCORE, KS_PT_SCORE, KS_EP_SCORE},
    };
    for (size_t e = 0; e < sizeof(evals) / sizeof(evals[0]); e++)
        for (size_t i = 0; i < fw->n[evals[e].point]; i++) {
            ks_plugin_inst *in = fw->pt[evals[e].point][i].inst;
            if (in->index >= 0 && in->index < KS_EVAL_STRIDE)
                fm->eval[evals[e].kind][in->index] = KS_METRICS_WITH(
                    m->plugin_evaluation, in->name, k_ep_labels[evals[e].ep], fm->profile);
        }
    fw->metrics = fm;
    return 0;
}

void ks__fw_metrics_free(ks_fw_metrics *fm)
{
    if (!fm)
        return;
    free(fm->plugin);
    free(fm->unsched);
    free(fm->hints);
    free(fm);
}

/* The cached series in *slot, resolved with labels on first use. */
static ks_metric *cached(_Atomic(ks_metric *) *slot, ks_metric_family *f, const char *a,
                         const char *b, const char *c)
{
    ks_metric *m = atomic_load_explicit(slot, memory_order_acquire);
    if (!m) {
        m = c ? KS_METRICS_WITH(f, a, b, c) : KS_METRICS_WITH(f, a, b);
        atomic_store_explicit(slot, m, memory_order_release);
    }
    return m;
}

void ks__fw_metrics_ep(ks_fw_metrics *fm, ks_ep ep, ks_code code, int64_t start_ns)
{
    if (!fm || (unsigned)ep >= KS_EP_COUNT)
        return;
    unsigned c = (unsigned)code < KS_METRICS_NCODES ? (unsigned)code : KS_ERROR;
    ks_metric *m = cached(&fm->ep[ep][c], fm->m->framework_extension_point_duration,
                          k_ep_labels[ep], k_code_labels[c], fm->profile);
    ks__metrics_observe(m, ks__seconds_since(start_ns));
}

void ks__fw_metrics_plugin(ks_fw_metrics *fm, int inst, ks_ep ep, ks_code code, int64_t start_ns)
{
    double d = ks__seconds_since(start_ns);
    if (!fm || inst < 0 || (size_t)inst >= fm->fw->ninst || (unsigned)ep >= KS_EP_COUNT)
        return;
    unsigned c = (unsigned)code < KS_METRICS_NCODES ? (unsigned)code : KS_ERROR;
    _Atomic(ks_metric *) *slot =
        &fm->plugin[((size_t)inst * KS_EP_COUNT + ep) * KS_METRICS_NCODES + c];
    ks_metric *m = cached(slot, fm->m->plugin_execution_duration, fm->fw->inst[inst].name,
                          k_ep_labels[ep], k_code_labels[c]);
    ks__metrics_observe(m, d);
}

void ks__fw_metrics_add_evals(ks_fw_metrics *fm, int kind, const uint32_t *rows, size_t nrows)
{
    if (!fm || kind < 0 || kind >= KS_EVAL_KINDS)
        return;
    for (size_t i = 0; i < KS_EVAL_STRIDE; i++) {
        if (!fm->eval[kind][i])
            continue;
        uint64_t sum = 0;
        for (size_t w = 0; w < nrows; w++)
            sum += rows[w * KS_EVAL_STRIDE + i];
        if (sum)
            ks__metrics_add(fm->eval[kind][i], (double)sum);
    }
}

void ks__fw_metrics_unschedulable(ks_fw_metrics *fm, uint64_t bits, int delta)
{
    if (!fm)
        return;
    for (size_t i = 0; bits && i < fm->fw->ninst && i < 64; i++) {
        if (!(bits & (1ull << i)))
            continue;
        bits &= ~(1ull << i);
        ks_metric *m = cached(&fm->unsched[i], fm->m->unschedulable_pods, fm->fw->inst[i].name,
                              fm->profile, NULL);
        ks__metrics_add(m, (double)delta);
    }
}

void ks__fw_metrics_attempt(ks_fw_metrics *fm, int result, int64_t start_ns)
{
    static const char *const results[3] = {
        KS_METRICS_RESULT_SCHEDULED, KS_METRICS_RESULT_UNSCHEDULABLE, KS_METRICS_RESULT_ERROR};
    if (!fm || result < 0 || result > 2)
        return;
    double d = ks__seconds_since(start_ns);
    ks__metrics_inc(cached(&fm->attempts[result], fm->m->schedule_attempts, results[result],
                           fm->profile, NULL));
    ks__metrics_observe(cached(&fm->attempt_duration[result], fm->m->scheduling_attempt_duration,
                               results[result], fm->profile, NULL),
                        d);
}

int ks__fw_metrics_sample(ks_fw_metrics *fm)
{
    if (!fm)
        return 0;
    uint64_t z =
        atomic_fetch_add_explicit(&fm->sample_seq, 0x9E3779B97F4A7C15ull, memory_order_relaxed);
    z += 0x9E3779B97F4A7C15ull; /* splitmix64 over a shared counter */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z % 100 < (uint64_t)fm->sample_percent;
}

void ks__fw_metrics_hint(ks_fw_metrics *fm, int inst, const char *event, const char *hint,
                         int64_t start_ns)
{
    double d = ks__seconds_since(start_ns);
    if (!fm || !event || !*event || !hint || inst < 0 || (size_t)inst >= fm->fw->ninst)
        return;
    struct ks_hint_slot *slots = &fm->hints[(size_t)inst * KS_HINT_SLOTS];
    size_t k = 0;
    while (k < KS_HINT_SLOTS && slots[k].event &&
           (strcmp(slots[k].event, event) != 0 || strcmp(slots[k].hint, hint) != 0))
        k++;
    ks_metric *m;
    if (k == KS_HINT_SLOTS) { /* more (event, hint) pairs than slots: resolve each time */
        m = KS_METRICS_WITH(fm->m->queueing_hint_execution_duration, fm->fw->inst[inst].name, event,
                            hint);
    } else {
        if (!slots[k].event) {
            slots[k].event = event;
            slots[k].hint = hint;
            slots[k].m = KS_METRICS_WITH(fm->m->queueing_hint_execution_duration,
                                         fm->fw->inst[inst].name, event, hint);
        }
        m = slots[k].m;
    }
    ks__metrics_observe(m, d);
}
