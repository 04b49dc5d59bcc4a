/*
 * `kubesched simulate`: the file cluster source. Loads Nodes and Pods (and skips kinds nothing
 * reads), schedules every pending pod through the real queue, framework, plugins and binding
 * cycle, binding in memory so later pods see earlier ones, and reports every attempt: a table, or
 * the JSON contract of DESIGN.md (with --explain: per-node per-plugin filter outcomes, normalized
 * scores and final scores).
 *
 * Threads: ks__simulate_run runs the scheduling loop on the calling thread; binding threads and
 * Filter/Score workers belong to the scheduler it creates.
 */
#ifndef KS_CORE_SIMULATE_H
#define KS_CORE_SIMULATE_H

#include <stdint.h>
#include <stdio.h>

#include "config/config.h"

typedef enum ks_output { KS_OUTPUT_TABLE = 0, KS_OUTPUT_JSON = 1, KS_OUTPUT_NONE = 2 } ks_output;

typedef struct ks_simulate_opts {
    const char *cluster_path;
    const ks_config *cfg;
    ks_profile_plan *plans;
    ks_output output;
    int explain;
    uint64_t seed;
    FILE *out;
    /* Unknown fields and kinds in the cluster file are errors, not warnings (--strict). */
    int strict;
    /* Where warnings about the cluster file and the end-of-run line of what was skipped go;
     * NULL: stderr. */
    FILE *warn;
    /* The most scheduling attempts one pod gets (--max-attempts; 0: KS_SIM_MAX_ATTEMPTS): a pod
     * that reaches it after a failed attempt is not retried, with a line on warn. */
    int max_attempts;
} ks_simulate_opts;

/* The default of --max-attempts. Without a cap a plugin that keeps a pod cycling (a gang whose
 * sibling activations keep waking each other) would never let the run end; a real cluster's
 * events rarely retry one pod this often in the span a cluster file captures. */
#define KS_SIM_MAX_ATTEMPTS 50

typedef struct ks_simulate_stats {
    size_t nodes, running_pods, pending_pods;
    size_t skipped_objects; /* of kinds kubesched does not read */
    size_t unknown_kinds;   /* left out: no kind, or a kind its apiVersion does not have */
    size_t warnings;        /* about the cluster file (unknown fields and kinds) */
    size_t attempts, scheduled, unschedulable, errors, unhandled, preemptions;
    size_t capped;            /* pods left pending at --max-attempts */
    size_t permit_timeouts;   /* Permit waits that ended at their timeout (virtual clock) */
    double seconds;           /* wall time of the scheduling loop (loading excluded) */
    size_t podgroup_attempts; /* PodGroup scheduling cycles (GenericWorkload) */
} ks_simulate_stats;

/* 0 on success (whatever the decisions), or a negative code with a message in err (bad file,
 * invalid object: the message names the file, the object and the field). */
int ks__simulate_run(const ks_simulate_opts *o, ks_simulate_stats *stats, char *err, size_t errlen);

#endif
