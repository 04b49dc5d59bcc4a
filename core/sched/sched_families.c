/*
 * The scheduler's metric families (upstream pkg/scheduler/metrics/metrics.go, v1.37): one table
 * of names, help texts, stability levels, label names and bucket layouts, registered in a
 * registry of core/util/metrics.h by ks__metrics_register_scheduler.
 */
#include "sched/sched_families.h"

#include "sched/features.h"

#include <stddef.h>
#include <string.h>

static const char *const result_profile[] = {"result", "profile"};
static const char *const event[] = {"event"};
static const char *const queue[] = {"queue"};
static const char *const attempts[] = {"attempts"};
static const char *const ep_status_profile[] = {"extension_point", "status", "profile"};
static const char *const plugin_ep_status[] = {"plugin", "extension_point", "status"};
static const char *const plugin_event_hint[] = {"plugin", "event", "hint"};
static const char *const queue_event[] = {"queue", "event"};
static const char *const queue_type[] = {"queue", "type"};
static const char *const queue_event_type[] = {"queue", "event", "type"};
static const char *const operation[] = {"operation"};
static const char *const result[] = {"result"};
static const char *const type[] = {"type"};
static const char *const plugin_profile[] = {"plugin", "profile"};
static const char *const plugin_ep_profile[] = {"plugin", "extension_point", "profile"};
static const char *const profile_result[] = {"profile", "result"};
static const char *const profile_reason[] = {"profile", "reason"};
static const char *const profile[] = {"profile"};
static const char *const hinted_profile[] = {"hinted", "profile"};
static const char *const preemptor[] = {"preemptor"};
static const char *const preemptor_result[] = {"preemptor", "result"};

/* A family of ks_sched_metrics: where its pointer goes, and what it is. Histograms have
 * prometheus.ExponentialBuckets(start, factor, count). */
typedef struct family_def {
    size_t slot; /* offsetof(ks_sched_metrics, <family>) */
    ks_metric_type type;
    const char *name;
    const char *help;
    ks_metric_stability stability;
    const char *const *labels;
    size_t nlabels;
    double bucket_start, bucket_factor;
    size_t nbuckets;
} family_def;

#define LBL(a) a, sizeof(a) / sizeof(a[0])
#define BKT(start, factor, count) start, factor, count

/* In upstream's registration order, with v1.37's names, help texts and stability levels. */
static const family_def k_families[] = {
    {offsetof(ks_sched_metrics, schedule_attempts), KS_METRIC_COUNTER,
     "scheduler_schedule_attempts_total",
     "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
     "not be scheduled, while 'error' means an internal scheduler problem.",
     KS_STABILITY_STABLE, LBL(result_profile), 0, 0, 0},
    {offsetof(ks_sched_metrics, event_handling_duration), KS_METRIC_HISTOGRAM,
     "scheduler_event_handling_duration_seconds", "Event handling latency in seconds.",
     KS_STABILITY_ALPHA, LBL(event), BKT(0.0001, 2, 12)},
    {offsetof(ks_sched_metrics, scheduling_attempt_duration), KS_METRIC_HISTOGRAM,
     "scheduler_scheduling_attempt_duration_seconds",
     "Scheduling attempt latency in seconds (scheduling algorithm + binding)", KS_STABILITY_STABLE,
     LBL(result_profile), BKT(0.001, 2, 15)},
    {offsetof(ks_sched_metrics, scheduling_algorithm_duration), KS_METRIC_HISTOGRAM,
     "scheduler_scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds",
     KS_STABILITY_BETA, NULL, 0, BKT(0.001, 2, 15)},
    {offsetof(ks_sched_metrics, preemption_victims), KS_METRIC_HISTOGRAM,
     "scheduler_preemption_victims",
     "Number of selected preemption victims for preemption initiated by a single pod",
     KS_STABILITY_STABLE, NULL, 0, BKT(1, 2, 7)},
    {offsetof(ks_sched_metrics, preemption_attempts), KS_METRIC_COUNTER,
     "scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now",
     KS_STABILITY_STABLE, NULL, 0, 0, 0, 0},
    {offsetof(ks_sched_metrics, pending_pods), KS_METRIC_GAUGE, "scheduler_pending_pods",
     "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
     "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
     "unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the "
     "number of unschedulable pods that the scheduler never attempted to schedule because "
     "they are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' "
     "means number of pods in pendingPodGroupPods.",
     KS_STABILITY_STABLE, LBL(queue), 0, 0, 0},
    {offsetof(ks_sched_metrics, queued_entities), KS_METRIC_GAUGE, "scheduler_queued_entities",
     "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual "
     "pods that are not members of any podgroup) by the queue type. 'active' means number of "
     "entities in activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' "
     "means number of entities in unschedulableEntities that the scheduler attempted to "
     "schedule and failed; 'gated' is the number of unschedulable entities that the scheduler "
     "never attempted to schedule because they are gated.",
     KS_STABILITY_ALPHA, LBL(queue_type), 0, 0, 0},
    {offsetof(ks_sched_metrics, inflight_events), KS_METRIC_GAUGE, "scheduler_inflight_events",
     "Number of events currently tracked in the scheduling queue.", KS_STABILITY_ALPHA, LBL(event),
     0, 0, 0},
    {offsetof(ks_sched_metrics, goroutines), KS_METRIC_GAUGE, "scheduler_goroutines",
     "Number of running goroutines split by the work they do such as binding.", KS_STABILITY_BETA,
     LBL(operation), 0, 0, 0},
    {offsetof(ks_sched_metrics, pod_scheduling_sli_duration), KS_METRIC_HISTOGRAM,
     "scheduler_pod_scheduling_sli_duration_seconds",
     "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
     "queue and might involve multiple scheduling attempts.",
     KS_STABILITY_BETA, LBL(attempts), BKT(0.01, 2, 20)},
    {offsetof(ks_sched_metrics, pod_scheduling_attempts), KS_METRIC_HISTOGRAM,
     "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
     KS_STABILITY_STABLE, NULL, 0, BKT(1, 2, 5)},
    {offsetof(ks_sched_metrics, pod_scheduled_after_flush), KS_METRIC_COUNTER,
     "scheduler_pod_scheduled_after_flush_total",
     "Number of pods that were successfully scheduled after being flushed from "
     "unschedulableEntities due to timeout. This metric helps detect potential queueing hint "
     "misconfigurations or event handling issues.",
     KS_STABILITY_ALPHA, NULL, 0, 0, 0, 0},
    {offsetof(ks_sched_metrics, framework_extension_point_duration), KS_METRIC_HISTOGRAM,
     "scheduler_framework_extension_point_duration_seconds",
     "Latency for running all plugins of a specific extension point.", KS_STABILITY_STABLE,
     LBL(ep_status_profile), BKT(0.0001, 2, 12)},
    {offsetof(ks_sched_metrics, plugin_execution_duration), KS_METRIC_HISTOGRAM,
     "scheduler_plugin_execution_duration_seconds",
     "Duration for running a plugin at a specific extension point.", KS_STABILITY_BETA,
     LBL(plugin_ep_status), BKT(0.00001, 1.5, 20)},
    {offsetof(ks_sched_metrics, queueing_hint_execution_duration), KS_METRIC_HISTOGRAM,
     "scheduler_queueing_hint_execution_duration_seconds",
     "Duration for running a queueing hint function of a plugin.", KS_STABILITY_ALPHA,
     LBL(plugin_event_hint), BKT(0.00001, 1.5, 20)},
    {offsetof(ks_sched_metrics, queue_incoming_pods), KS_METRIC_COUNTER,
     "scheduler_queue_incoming_pods_total",
     "Number of pods added to scheduling queues by event and queue type.", KS_STABILITY_STABLE,
     LBL(queue_event), 0, 0, 0},
    {offsetof(ks_sched_metrics, queue_incoming_entities), KS_METRIC_COUNTER,
     "scheduler_queue_incoming_entities_total",
     "Number of scheduling entities added to scheduling queues by event, queue type, and entity "
     "type. Entity types are either 'pod' (for individual pods that are not members of any "
     "podgroup) or 'podgroup'.",
     KS_STABILITY_ALPHA, LBL(queue_event_type), 0, 0, 0},
    {offsetof(ks_sched_metrics, permit_wait_duration), KS_METRIC_HISTOGRAM,
     "scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.", KS_STABILITY_BETA,
     LBL(result), BKT(0.001, 2, 15)},
    {offsetof(ks_sched_metrics, cache_size), KS_METRIC_GAUGE, "scheduler_cache_size",
     "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", KS_STABILITY_ALPHA,
     LBL(type), 0, 0, 0},
    {offsetof(ks_sched_metrics, unschedulable_pods), KS_METRIC_GAUGE,
     "scheduler_unschedulable_pods",
     "The number of unschedulable pods broken down by plugin name. A pod will increment the "
     "gauge for all plugins that caused it to not schedule and so this metric have meaning "
     "only when broken down by plugin.",
     KS_STABILITY_BETA, LBL(plugin_profile), 0, 0, 0},
    {offsetof(ks_sched_metrics, plugin_evaluation), KS_METRIC_COUNTER,
     "scheduler_plugin_evaluation_total",
     "Number of attempts to schedule pods by each plugin and the extension point (available "
     "only in PreFilter, Filter, PreScore, and Score).",
     KS_STABILITY_BETA, LBL(plugin_ep_profile), 0, 0, 0},
    /* v1.37 opportunistic batching (metrics.go: BatchAttemptStats ... BatchRescoreDuration). */
    {offsetof(ks_sched_metrics, batch_attempts), KS_METRIC_COUNTER,
     "scheduler_batch_attempts_total", "Counts of results when we attempt to use batching.",
     KS_STABILITY_ALPHA, LBL(profile_result), 0, 0, 0},
    {offsetof(ks_sched_metrics, batch_cache_flushed), KS_METRIC_COUNTER,
     "scheduler_batch_cache_flushed_total", "Counts of cache flushes by reason.",
     KS_STABILITY_ALPHA, LBL(profile_reason), 0, 0, 0},
    {offsetof(ks_sched_metrics, batch_rescore_attempts), KS_METRIC_COUNTER,
     "scheduler_batch_rescore_attempts_total",
     "Counts of rescore attempts during opportunistic batching.", KS_STABILITY_ALPHA, LBL(profile),
     0, 0, 0},
    {offsetof(ks_sched_metrics, batch_rescore_duration), KS_METRIC_HISTOGRAM,
     "scheduler_batch_rescore_duration_seconds",
     "Latency for rescoring a node during opportunistic batching.", KS_STABILITY_ALPHA,
     LBL(profile), BKT(0.00001, 2, 12)},
    {offsetof(ks_sched_metrics, get_node_hint_duration), KS_METRIC_HISTOGRAM,
     "scheduler_get_node_hint_duration_seconds", "Latency for getting a node hint.",
     KS_STABILITY_ALPHA, LBL(hinted_profile), BKT(0.00001, 2, 12)},
    {offsetof(ks_sched_metrics, store_schedule_results_duration), KS_METRIC_HISTOGRAM,
     "scheduler_store_schedule_results_duration_seconds", "Latency for storing scheduling results.",
     KS_STABILITY_ALPHA, LBL(profile), BKT(0.00001, 2, 12)},
};

/* GenericWorkload's, registered only with the gate on (upstream metrics.Register). */
static const family_def k_workload_families[] = {
    {offsetof(ks_sched_metrics, podgroup_schedule_attempts), KS_METRIC_COUNTER,
     "scheduler_podgroup_schedule_attempts_total",
     "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group "
     "could not be scheduled, while 'error' means an internal scheduler problem.",
     KS_STABILITY_ALPHA, LBL(result_profile), 0, 0, 0},
    {offsetof(ks_sched_metrics, podgroup_scheduling_attempt_duration), KS_METRIC_HISTOGRAM,
     "scheduler_podgroup_scheduling_attempt_duration_seconds",
     "Pod group scheduling attempt latency in seconds", KS_STABILITY_ALPHA, LBL(result_profile),
     BKT(0.001, 2, 15)},
    {offsetof(ks_sched_metrics, podgroup_scheduling_algorithm_duration), KS_METRIC_HISTOGRAM,
     "scheduler_podgroup_scheduling_algorithm_duration_seconds",
     "Pod group scheduling algorithm latency in seconds", KS_STABILITY_ALPHA, NULL, 0,
     BKT(0.001, 2, 15)},
    {offsetof(ks_sched_metrics, workload_preemption_attempts), KS_METRIC_COUNTER,
     "scheduler_workload_preemption_attempts_total",
     "Total preemption attempts initiated by workload (including pod groups) in the cluster till "
     "now.",
     KS_STABILITY_ALPHA, LBL(result), 0, 0, 0},
    {offsetof(ks_sched_metrics, workload_preemption_victims), KS_METRIC_HISTOGRAM,
     "scheduler_workload_preemption_victims",
     "Number of pod preemption victims caused by workload preemption.", KS_STABILITY_ALPHA, NULL, 0,
     BKT(1, 2, 11)},
    {offsetof(ks_sched_metrics, preemption_workload_disruptions), KS_METRIC_HISTOGRAM,
     "scheduler_preemption_workload_disruptions",
     "Number of workload preemption units being preempted. A single preemption unit can be all "
     "pods in a pod group (in case of DisruptionMode=all), or a single pod (in case of "
     "DisruptionMode=single).",
     KS_STABILITY_ALPHA, LBL(preemptor), BKT(1, 2, 11)},
    {offsetof(ks_sched_metrics, preemption_evaluation_duration), KS_METRIC_HISTOGRAM,
     "scheduler_preemption_evaluation_duration_seconds",
     "Duration in seconds for identifying the target preemption victims.", KS_STABILITY_ALPHA,
     LBL(preemptor_result), BKT(0.001, 2, 16)},
};

#undef LBL
#undef BKT

static int register_families(ks_metrics *r, ks_sched_metrics *out, const family_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const family_def *d = &defs[i];
        double buckets[KS_METRICS_MAX_BUCKETS];
        if (d->nbuckets)
            ks__metrics_exponential_buckets(d->bucket_start, d->bucket_factor, d->nbuckets,
                                            buckets);
        ks_metric_opts o = {d->type,
                            d->name,
                            d->help,
                            d->stability,
                            d->labels,
                            d->nlabels,
                            d->nbuckets ? buckets : NULL,
                            d->nbuckets};
        int rc = ks__metrics_register(r, &o, (ks_metric_family **)((char *)out + d->slot));
        if (rc)
            return rc;
    }
    return 0;
}

int ks__metrics_register_scheduler(ks_metrics *r, ks_sched_metrics *out)
{
    memset(out, 0, sizeof *out);
    out->registry = r;
    int rc = register_families(r, out, k_families, sizeof k_families / sizeof k_families[0]);
    if (rc == 0 && ks__feature_enabled(KS_FEATURE_GENERIC_WORKLOAD))
        rc = register_families(r, out, k_workload_families,
                               sizeof k_workload_families / sizeof k_workload_families[0]);
    if (rc)
        return rc;
    out->scheduling_algorithm_duration_solo = KS_METRICS_SOLO(out->scheduling_algorithm_duration);
    out->preemption_victims_solo = KS_METRICS_SOLO(out->preemption_victims);
    out->preemption_attempts_solo = KS_METRICS_SOLO(out->preemption_attempts);
    out->pod_scheduling_attempts_solo = KS_METRICS_SOLO(out->pod_scheduling_attempts);
    out->pod_scheduled_after_flush_solo = KS_METRICS_SOLO(out->pod_scheduled_after_flush);
    return 0;
}
