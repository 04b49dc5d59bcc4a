/*
 * Sharing of the parsed parts that many pods have in common. Pods made from one template
 * (a Deployment's replicas, a Job's pods) carry identical labels, pod (anti-)affinity and
 * topology spread constraints; each distinct one is parsed and stored once and shared by every
 * pod that has it. That keeps the per-cycle passes of InterPodAffinity and PodTopologySpread
 * (which visit every pod in the cluster) within the CPU caches, and lets plugins compare terms
 * by pointer.
 *
 * Each shared part is counted: the pod that gets one holds a reference (a ks__shared handle) and
 * releases it with ks__shared_release when the pod is freed; the last release removes the part
 * from its table, and it is freed, with the symbols its parsed terms hold, two snapshot updates
 * later (so that a plugin comparing by pointer across one cycle never meets the address again
 * for another spec). So the tables hold the templates of the pods alive now, not of every pod
 * ever seen.
 *
 * Threads: any; one mutex guards the tables and the counts. A part handed out is immutable.
 */
#ifndef KS_CORE_SHARED_H
#define KS_CORE_SHARED_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

/* A reference on a shared part; owned by the pod that got it. */
typedef struct ks__shared ks__shared;

/* A stable copy of labels[0..n) (sorted ks_label array), identical arrays shared; *ref gets the
 * caller's reference (NULL when n == 0). NULL when n == 0 or out of memory. The label symbols are
 * not held by the copy: every pod that uses it holds its own (it interned them when parsing). */
const ks_label *ks__shared_labels(const ks_label *labels, size_t n, ks__shared **ref);

/* The parsed podAffinity/podAntiAffinity of spec.affinity (NULL when neither), shared between
 * pods whose two fields are identical and that were read in the same mode (checked: the API
 * server's value rules too, selector.h); *ref as above (NULL with *out NULL). KS_EPARSE with a
 * message naming the field. A checked read never gets a part a lenient one made: the mode is
 * part of the key (shared.c, mode_key). */
int ks__shared_pod_affinity(const cJSON *affinity, int checked, const ks_pod_affinity **out,
                            ks__shared **ref, char *err, size_t errlen);
/* spec.topologySpreadConstraints, shared likewise. */
int ks__shared_spread(const cJSON *constraints, int checked,
                      const ks_topology_spread_constraint **out, size_t *n, ks__shared **ref,
                      char *err, size_t errlen);

/* Drops one reference; after the last the part is retired. NULL is a no-op. */
void ks__shared_release(ks__shared *ref);
/* The scheduler's snapshot was updated (a cycle began): frees the parts retired two updates ago
 * or more. Called by ks__cache_update_snapshot. */
void ks__shared_snapshot_updated(void);

/* Parts in the tables or retired and not yet freed, and their bytes (entries and keys; parsed
 * memory not counted); tests and memory figures. */
void ks__shared_stats(size_t *entries, size_t *bytes);

#endif
