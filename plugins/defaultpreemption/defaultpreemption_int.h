/*
 * DefaultPreemption, private header: the plain data the plugin's three files share.
 *
 *   defaultpreemption.c  the descriptor, args, eligibility, the candidate search and the message
 *   candidates.c         SelectVictimsOnNode: the dry run on one node, on pods or (GenericWorkload)
 *                        on preemption units (host calls)
 *   select.c             pure ordering and selection helpers (no host call, so the unit tests
 *                        exercise them on hand-made data)
 *
 * Everything runs on the scheduling thread, inside one PostFilter call; the arrays are from the
 * cycle arena.
 */
#ifndef KS_PLUGINS_DEFAULTPREEMPTION_INT_H
#define KS_PLUGINS_DEFAULTPREEMPTION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

/* What the ordering needs of a pod, read once through the host. */
typedef struct dp_pod {
    const ks_pod *pod; /* borrowed(cycle); select.c never looks inside */
    ks_sym ns;
    ks_sym name;
    int32_t priority;
    int64_t start_ns;       /* status.startTime; DP_START_NOW when unset */
    const ks_label *labels; /* sorted by key id, borrowed(pod) */
    size_t nlabels;
} dp_pod;

/* Upstream util.GetPodStartTime gives a pod without status.startTime the current time: later
 * than every real start time. */
#define DP_START_NOW INT64_MAX

/* A preemption unit (upstream preemption.DomainVictim, GenericWorkload): one pod, or every pod
 * on the snapshot's nodes of a PodGroup whose spec.disruptionMode is `all`, which leave together.
 * The same model as the pod-group preemptor's ks__pg_victim in core/sched/podgroup_preemption.c
 * (the layers keep a plugin from linking the core, so the few pure lines are mirrored here). */
typedef struct dp_victim {
    dp_pod *pods;               /* borrowed(cycle arena); pods[i].pod from the snapshot */
    const ks_node_info **nodes; /* each pod's node in the snapshot (AffectedNodes, per pod) */
    size_t npods;
    int32_t priority;       /* GetPodPriority: a member's PodGroup priority, else the pod's */
    int is_group;           /* upstream's PodGroup key type: its pod names a scheduling group */
    int64_t earliest_start; /* the earliest start of its pods (DP_START_NOW: none) */
    int32_t violate_count;  /* FilterVictimsWithPDBViolation's ViolateCount (dp_victims_pdb) */
} dp_victim;

/* One node where preemption would let the pod fit (upstream preemption.Candidate). */
typedef struct dp_candidate {
    ks_sym node;
    dp_pod *victims; /* most important first */
    size_t nvictims;
    int64_t num_pdb_violations;
} dp_candidate;

/* One line of a FitError histogram. */
typedef struct dp_reason {
    const char *text;
    int64_t count;
} dp_reason;

/* --- select.c (pure) --- */

/* calculateNumCandidates: max(n*pct/100, abs), never more than n. */
KS_HIDDEN int32_t dp_num_candidates(int32_t nnodes, int32_t pct, int32_t abs);

/* util.MoreImportantPod: higher priority, then the earlier start time. */
KS_HIDDEN int dp_more_important(const dp_pod *a, const dp_pod *b);

/* Sorts by dp_more_important, most important first; stable, so equal pods keep node order. */
KS_HIDDEN void dp_sort_by_importance(dp_pod *pods, size_t n);

/* filterPodsWithPDBViolation: violating[i] = 1 when evicting pods[0..i] in that order takes a
 * PodDisruptionBudget that selects pods[i] below zero allowed disruptions. allowed is scratch of
 * npdbs entries. Pods listed in a budget's disruptedPods do not count against it. */
KS_HIDDEN void dp_pdb_violations(const dp_pod *pods, size_t n, const ks_pdb_info *pdbs,
                                 size_t npdbs, int32_t *allowed, uint8_t *violating);

/* preemption.MoreImportantVictim (v1.37.2): higher priority, then the PodGroup type before a
 * lone pod, then the larger unit, then the earlier start. */
KS_HIDDEN int dp_more_important_victim(const dp_victim *a, const dp_victim *b);

/* Sorts by dp_more_important_victim, most important first; stable (upstream's sort.Slice is
 * not, so its order of equal units is arbitrary; ours is the node's). */
KS_HIDDEN void dp_sort_victims(dp_victim *v, size_t n);

/* preemption.FilterVictimsWithPDBViolation over units in their order: v[i].violate_count = how
 * many of unit i's pods take a matching budget below zero, budgets spent by the units and pods
 * before them. A pod stops at the first budget it breaks (the later ones are not charged for
 * it). allowed is scratch of npdbs entries. */
KS_HIDDEN void dp_victims_pdb(dp_victim *v, size_t n, const ks_pdb_info *pdbs, size_t npdbs,
                              int32_t *allowed);

/* pickOneNodeForPreemption: the index of the best candidate. scratch holds n entries. */
KS_HIDDEN size_t dp_pick_one(const dp_candidate *c, size_t n, size_t *scratch);

/* util.GetEarliestPodStartTime: the earliest start among the highest-priority victims. */
KS_HIDDEN int64_t dp_earliest_start_of_highest(const dp_candidate *c);

/* FitError.Error without PreFilter and PostFilter parts: "0/N nodes are available: <count>
 * <reason>, ... ." with the entries sorted as strings. Sorts reasons in place. Writes at most cap
 * bytes (NUL included) and returns the full length, as snprintf. */
KS_HIDDEN size_t dp_fit_error(char *out, size_t cap, int64_t num_all, dp_reason *reasons,
                              size_t nreasons);

/* --- candidates.c --- */

/* The outcome of a dry run on one node. */
typedef struct dp_dry_run {
    ks_code code;       /* Success: candidate filled; else the node's status */
    const char *reason; /* when not Success and not Error and status is NULL: the node's reason */
    const ks_status *status; /* the Filter verdict that makes the node useless (its reasons) */
    dp_candidate candidate;
} dp_dry_run;

/* The snapshot's pods that name a scheduling group, sorted by (namespace, group, snapshot
 * order): upstream's PodGroupStates().ScheduledPods(), which a disruptionMode `all` victim takes
 * whole. Built on first use within one PostFilter call (never while GenericWorkload is off,
 * when no pod names a group). */
typedef struct dp_member {
    ks_sym ns, group;
    const ks_pod *pod;
    const ks_node_info *ni;
    size_t order;
} dp_member;
typedef struct dp_groups {
    int built;
    dp_member *m;
    size_t n;
} dp_groups;

/* SelectVictimsOnNode on a copy of ni and of the cycle state. KS_ERROR leaves the host's message
 * in st; otherwise st holds nothing that matters to the caller (see scratch_clear). groups: the
 * call's index (zeroed by the caller, filled when first needed). */
KS_HIDDEN void dp_select_victims(ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                                 const ks_pdb_info *pdbs, size_t npdbs, dp_groups *groups,
                                 ks_status *st, dp_dry_run *out);

/* GetPodPriority: the priority of p as a victim: its PodGroup's spec.priority (0 when unset)
 * when it names an existing group, else its own. Sets *all when that group's disruptionMode is
 * `all` (all may be NULL). */
KS_HIDDEN int32_t dp_victim_priority(const ks_pod *p, int *all);

/* Fills a dp_pod from the host. */
KS_HIDDEN void dp_pod_init(dp_pod *d, const ks_pod *pod);

/* args.c: DefaultPreemptionArgs, checked and defaulted by kubesched while it loads the
 * configuration (the descriptor's args_schema and validate_args). */
extern const ks_args_schema dp_args_schema;
int dp_validate_args(const ks_args *args, ks_args_error *err);

#endif
