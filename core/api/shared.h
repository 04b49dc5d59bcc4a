/*
 * Sharing of the parsed parts that many pods have in common. Pods made from one template
 * (a Deployment's replicas, a Job's pods) carry identical labels, pod (anti-)affinity and
 * topology spread constraints; each distinct one is parsed and stored once and shared by every
 * pod that has it. That keeps the per-cycle passes of InterPodAffinity and PodTopologySpread
 * (which visit every pod in the cluster) within the CPU caches, and lets plugins compare terms
 * by pointer.
 *
 * Shared parts live until the process exits (like interned strings): the number of distinct
 * templates in a cluster is small. Threads: any; one mutex guards the tables.
 */
#ifndef KS_CORE_SHARED_H
#define KS_CORE_SHARED_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

/* A stable copy of labels[0..n) (sorted ks_label array), identical arrays shared. NULL when n == 0
 * or out of memory. */
const ks_label *ks__shared_labels(const ks_label *labels, size_t n);

/* The parsed podAffinity/podAntiAffinity of spec.affinity (NULL when neither), shared between
 * pods whose two fields are identical. KS_EPARSE with a message naming the field. */
int ks__shared_pod_affinity(const cJSON *affinity, const ks_pod_affinity **out, char *err,
                            size_t errlen);
/* spec.topologySpreadConstraints, shared likewise. */
int ks__shared_spread(const cJSON *constraints, const ks_topology_spread_constraint **out,
                      size_t *n, char *err, size_t errlen);

#endif
