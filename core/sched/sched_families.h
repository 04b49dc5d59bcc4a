/*
 * The scheduler's metric families (upstream pkg/scheduler/metrics/metrics.go, v1.37), declared
 * over the generic registry of core/util/metrics.h: the label values upstream uses, and the
 * families the scheduler, its frameworks and the live source fill.
 *
 * Threads: register once at startup (main thread); the family pointers are read-only afterwards.
 */
#ifndef KS_SCHED_SCHED_FAMILIES_H
#define KS_SCHED_SCHED_FAMILIES_H

#include "util/metrics.h"

/* Label values upstream uses. */
#define KS_METRICS_RESULT_SCHEDULED "scheduled"
#define KS_METRICS_RESULT_UNSCHEDULABLE "unschedulable"
#define KS_METRICS_RESULT_ERROR "error"
#define KS_METRICS_QUEUE_ACTIVE "active"
#define KS_METRICS_QUEUE_BACKOFF "backoff"
#define KS_METRICS_QUEUE_UNSCHEDULABLE "unschedulable"
#define KS_METRICS_QUEUE_GATED "gated"
#define KS_METRICS_CACHE_NODES "nodes"
#define KS_METRICS_CACHE_PODS "pods"
#define KS_METRICS_CACHE_ASSUMED_PODS "assumed_pods"
#define KS_METRICS_OPERATION_BINDING "binding"
#define KS_METRICS_OPERATION_PRIORITIZING_EXTENDER "prioritizing_extender"
#define KS_METRICS_ENTITY_POD "pod"
#define KS_METRICS_ENTITY_PODGROUP "podgroup"
/* scheduler_pending_pods' two GenericWorkload queues: members of a pod group whose PodGroup is
 * not known yet, and members waiting for their group's scheduling cycle to end. */
#define KS_METRICS_QUEUE_INCOMPLETE "incomplete"
#define KS_METRICS_QUEUE_PENDING "pending"

/* The families upstream registers unconditionally (metricsList) plus the two that the
 * SchedulerQueueingHints gate (on since 1.32) adds. Labels in the order shown, which is the order
 * KS_METRICS_WITH takes the values in. Upstream samples plugin_execution_duration_seconds for 10%
 * of the scheduling cycles; that choice belongs to the caller. Not declared: the volume binder's,
 * the async preemption's, the DRA ones, and those upstream registers only under gates that are off
 * by default (SchedulerAsyncAPICalls; GenericWorkload: the pod-group and workload families and
 * preemption_evaluation/execution_duration_seconds, preemption_pdb_violations_total). */
typedef struct ks_sched_metrics {
    ks_metric_family *schedule_attempts;             /* counter {result, profile} */
    ks_metric_family *scheduling_attempt_duration;   /* hist {result, profile} Exp(0.001,2,15) */
    ks_metric_family *scheduling_algorithm_duration; /* hist Exp(0.001,2,15) */
    ks_metric_family *event_handling_duration;       /* hist {event} Exp(0.0001,2,12) */
    ks_metric_family *preemption_victims;            /* hist Exp(1,2,7) */
    ks_metric_family *preemption_attempts;           /* counter */
    ks_metric_family *pending_pods;                  /* gauge {queue} */
    ks_metric_family *pod_scheduling_sli_duration;   /* hist {attempts} Exp(0.01,2,20) */
    ks_metric_family *pod_scheduling_attempts;       /* hist Exp(1,2,5) */
    ks_metric_family *framework_extension_point_duration; /* hist {extension_point, status,
                                                             profile} Exp(0.0001,2,12) */
    ks_metric_family *plugin_execution_duration;          /* hist {plugin, extension_point, status}
                                                             Exp(0.00001,1.5,20) */
    ks_metric_family *queue_incoming_pods;                /* counter {queue, event} */
    ks_metric_family *goroutines;                         /* gauge {operation} */
    ks_metric_family *permit_wait_duration;               /* hist {result} Exp(0.001,2,15) */
    ks_metric_family *cache_size;                         /* gauge {type} */
    ks_metric_family *unschedulable_pods;                 /* gauge {plugin, profile} */
    ks_metric_family *plugin_evaluation; /* counter {plugin, extension_point, profile} */
    ks_metric_family *inflight_events;   /* gauge {event} (QueueingHints) */
    ks_metric_family *queueing_hint_execution_duration; /* hist {plugin, event, hint}
                                                           Exp(0.00001,1.5,20) (QueueingHints) */
    /* The series of the families without labels, resolved once. */
    ks_metric *scheduling_algorithm_duration_solo;
    ks_metric *preemption_victims_solo;
    ks_metric *preemption_attempts_solo;
    ks_metric *pod_scheduling_attempts_solo;
    /* Opportunistic batching (v1.37, OpportunisticBatching on by default; core/sched/batch.c). */
    ks_metric_family *batch_attempts;         /* counter {profile, result} */
    ks_metric_family *batch_cache_flushed;    /* counter {profile, reason} */
    ks_metric_family *batch_rescore_attempts; /* counter {profile} */
    ks_metric_family *get_node_hint_duration; /* hist {hinted, profile} Exp(0.00001,2,12) */
    ks_metric_family *store_schedule_results_duration; /* hist {profile} Exp(0.00001,2,12) */
    ks_metric_family *batch_rescore_duration;          /* hist {profile} Exp(0.00001,2,12) */
    /* v1.37's entity families (pods not in a pod group count as "pod"; with GenericWorkload a
     * pod group's queued members count as one "podgroup" in queued_entities; the incoming
     * counters still count every pod as a "pod"). */
    ks_metric_family *queued_entities;           /* gauge {queue, type} */
    ks_metric_family *queue_incoming_entities;   /* counter {queue, event, type} */
    ks_metric_family *pod_scheduled_after_flush; /* counter */
    ks_metric *pod_scheduled_after_flush_solo;
    /* GenericWorkload's (off by default; upstream registers them only with the gate on, and so
     * does kubesched: NULL otherwise, and every update of a NULL family does nothing). Not
     * declared yet: preemption_execution_duration_seconds and preemption_pdb_violations_total
     * (kubesched's evictions run on the live source's writer thread, which times no preemption
     * as a whole, and DefaultPreemption reports no PDB violations to the host). */
    ks_metric_family *podgroup_schedule_attempts;             /* counter {result, profile} */
    ks_metric_family *podgroup_scheduling_attempt_duration;   /* hist {result, profile}
                                                                 Exp(0.001,2,15) */
    ks_metric_family *podgroup_scheduling_algorithm_duration; /* hist Exp(0.001,2,15) */
    ks_metric_family *workload_preemption_attempts;           /* counter {result} */
    ks_metric_family *workload_preemption_victims;            /* hist Exp(1,2,11) */
    ks_metric_family *preemption_workload_disruptions;        /* hist {preemptor} Exp(1,2,11) */
    ks_metric_family *preemption_evaluation_duration; /* hist {preemptor, result} Exp(0.001,2,16) */
    ks_metrics *registry; /* where they are, and where plugins' counters go (counter_new) */
} ks_sched_metrics;

/* Register all of the above in r (GenericWorkload's families when the gate is on). OUT: *out
 * (pointers owned by r). 0 or the first error of ks__metrics_register (KS_EEXIST if called twice on
 * one registry). */
int ks__metrics_register_scheduler(ks_metrics *r, ks_sched_metrics *out);

#endif
