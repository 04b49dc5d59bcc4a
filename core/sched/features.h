/*
 * Feature gates (upstream --feature-gates, k8s.io/component-base/featuregate): the few whose
 * switch changes what kubesched does. Process-wide, like upstream's DefaultFeatureGate: set once
 * from the command line before any scheduler is created (main thread), read when a scheduler is
 * created.
 */
#ifndef KS_CORE_FEATURES_H
#define KS_CORE_FEATURES_H

#include <stddef.h>

typedef enum ks_feature {
    KS_FEATURE_OPPORTUNISTIC_BATCHING, /* Beta, on by default since v1.35 (batch.h) */
    /* Beta, on by default since v1.35: the binding cycle runs PreBindPreFlight and sets
     * status.nominatedNodeName before a PreBind with work or a wait on Permit (binding.c). */
    KS_FEATURE_NOMINATED_NODE_NAME_FOR_EXPECTATION,
    /* Beta, on by default since v1.33: pop takes from backoffQ while activeQ is empty (queue.h) */
    KS_FEATURE_SCHEDULER_POP_FROM_BACKOFF_Q,
    /* Beta, off by default in v1.37: scheduling.k8s.io/v1beta1 PodGroups are watched, pods name
     * their group in spec.schedulingGroup, and the default profile appends GangScheduling
     * (config_defaults.c; the config layer learns the gate through ks__cfg_set_generic_workload).
     */
    KS_FEATURE_GENERIC_WORKLOAD,
    KS_FEATURE_COUNT
} ks_feature;

int ks__feature_enabled(ks_feature f);

/* Applies "Name=bool[,Name=bool...]" (the value of --feature-gates). On an unknown gate or a value
 * that is no boolean returns KS_EINVAL with err saying which and what is accepted; gates before
 * the bad one stay applied. */
int ks__feature_gates_set(const char *spec, char *err, size_t errlen);

#endif
