/*
 * The scheduling queue, as upstream's PriorityQueue (pkg/scheduler/backend/queue, v1.34, with the
 * v1.37 queueing hints: pod updates are TargetPod events judged by hints, isPodUpdated is gone):
 *
 *   activeQ            heap ordered by the QueueSort plugin's less();
 *   backoffQ           heap ordered by backoff expiry (then less());
 *   unschedulablePods  pods rejected by a plugin, waiting for an event that plugin registered
 *                      (or the 5-minute flush); gated pods (PreEnqueue rejected) wait here too.
 *
 * Backoff (v1.34): d = 0 when the count is 0, else min(initial * 2^(n-1), max), with
 * n = consecutiveErrorsCount if > 0 else unschedulableCount; expiry = timestamp + d.
 *
 * The queue is generic: QueueSort, PreEnqueue and "does this event concern this pod's rejector
 * plugins" are callbacks supplied by the framework; time comes from a clock callback so that tests
 * and `simulate` (a virtual clock) control it.
 *
 * Threads: every function may be called from any thread; one mutex guards everything, and
 * ks__queue_pop blocks on a condition variable. Callbacks run under that mutex and must not call
 * back into the queue.
 */
#ifndef KS_CORE_QUEUE_H
#define KS_CORE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

typedef struct ks_queue ks_queue;

typedef enum ks_queue_where {
    KS_Q_NONE = 0, /* not queued (in flight, or removed) */
    KS_Q_ACTIVE,
    KS_Q_BACKOFF,
    KS_Q_UNSCHEDULABLE,
    KS_Q_GATED /* in unschedulablePods because PreEnqueue rejected it */
} ks_queue_where;

/* One queued pod (upstream QueuedPodInfo). The queue owns it; the scheduling thread holds it
 * between pop and done/add_unschedulable. */
struct ks_queued_pod {
    ks_pod *pod;                /* one reference held */
    int profile;                /* index of the profile that schedules it (framework's choice) */
    int64_t timestamp_ns;       /* last time it was (re)added */
    int64_t initial_attempt_ns; /* first entry into activeQ (upstream InitialAttemptTimestamp), 0
                                   before */
    int32_t attempts;           /* pops so far */
    int32_t unschedulable_count;
    int32_t consecutive_errors;
    uint64_t rejector_plugins; /* bit i: plugin i of the profile returned Unschedulable/Pending */
    uint64_t pending_plugins;  /* bit i: plugin i returned Pending */
    uint64_t gating_plugin;    /* bit of the PreEnqueue plugin that gated it, 0 when not gated */
    char gated_message[256];   /* PreEnqueue's reason, for reporting */
    /* The scheduler's (metrics): when the current attempt began (CLOCK_MONOTONIC), and the
     * plugins this pod counts for in scheduler_unschedulable_pods until its next pop. */
    int64_t attempt_start_ns;
    uint64_t unschedulable_counted;
    /* Moved out of unschedulablePods by the periodic flush since its last attempt (upstream v1.37
     * WasFlushedFromUnschedulable, counted in scheduler_pod_scheduled_after_flush_total when it
     * is bound), and when that flush was (FlushTimestamp: the next flush counts from the later of
     * it and timestamp_ns). Both cleared when it comes back from an attempt. */
    int flushed;
    int64_t flush_ns;
    int64_t move_request_cycle_seen; /* internal */
    ks_queue_where where;            /* internal */
    size_t heap_index;               /* internal */
};

/* What worth_requeue returns (upstream queueingStrategy, as isPodWorthRequeuing returns it). Any
 * other non-zero value reads as KS_QHINT_QUEUE. */
enum {
    KS_QHINT_SKIP = 0,             /* ev cannot make qp schedulable: it stays parked */
    KS_QHINT_QUEUE = 1,            /* it may: backoffQ while backing off, else activeQ */
    KS_QHINT_QUEUE_IMMEDIATELY = 2 /* a Pending plugin of qp said Queue: activeQ now */
};

typedef struct ks_queue_hooks {
    void *ctx;
    /* QueueSort: non-zero when a goes first. NULL: PrioritySort (higher spec.priority first,
     * then the earlier timestamp_ns). */
    int (*less)(void *ctx, const ks_queued_pod *a, const ks_queued_pod *b);
    /* PreEnqueue: KS_SUCCESS admits the pod; otherwise set qp->gating_plugin and
     * qp->gated_message and return the code. May be NULL (all admitted). */
    ks_code (*pre_enqueue)(void *ctx, ks_queued_pod *qp);
    /* Whether ev may make qp schedulable (upstream isPodWorthRequeuing: the queueing hints of the
     * rejector plugins that registered ev): a KS_QHINT_ value. ev's objects are borrowed for the
     * call (ev->new_pod of a TargetPod event is the update of qp's own pod). NULL: always
     * KS_QHINT_QUEUE. For a gated pod (qp->gating_plugin != 0) it asks the gating plugin; non-zero
     * then means "run PreEnqueue again". The queue itself answers KS_QHINT_QUEUE without asking
     * for wildcard events and for pods with no rejector. When every rejector is a Pending
     * plugin, KS_QHINT_QUEUE already means "immediately". */
    int (*worth_requeue)(void *ctx, const ks_queued_pod *qp, const ks_event_info *ev);
    /* Whether any plugin of any profile registered an event ev matches (upstream
     * isEventOfInterest): when not, move_on_event returns at once, without offering ev to the
     * parked pods or recording it for the pods in flight. NULL: every event is of interest.
     * Wildcard events never ask. */
    int (*interested)(void *ctx, const ks_cluster_event *ev);
    /* Which profile schedules pod (sets qp->profile); -1 when none (then ks__queue_add refuses). */
    int (*profile_of)(void *ctx, const ks_pod *pod);
    /* Monotonic time in ns. NULL: CLOCK_MONOTONIC. */
    int64_t (*now_ns)(void *ctx);
    /* A pod entered activeQ, backoffQ or unschedulablePods (where: a ks_queue_where; gated counts
     * as unschedulable, as upstream's one unschedulablePods map) because of event, upstream's
     * label ("UnscheduledPodAdd", "ScheduleAttemptFailure", "BackoffComplete", "NodeAdd", ...;
     * a static string). A move between unschedulable and gated is no entry. new_entity is what
     * upstream v1.37 counts in scheduler_queue_incoming_entities_total: KS_QENTITY_NONE when the
     * move was decided by a queueing strategy (a hint) that names the queue the pod went to
     * (upstream recordIncomingEntitiesMetrics), else KS_QENTITY_POD, or KS_QENTITY_PODGROUP for
     * the one member that counts its group's entry (ks__queue_requeue_group). Members of the
     * group whose cycle runs are not reported (upstream pendingPodGroupPods). May be NULL. */
    void (*incoming)(void *ctx, const ks_queued_pod *qp, int where, const char *event,
                     int new_entity);
    /* The in-flight list changed (upstream inFlightEvents, scheduler_inflight_events): delta +1
     * or -1 for "PodPopped" (a pod popped / done) or an event's label (recorded while pods were
     * in flight / dropped once no pod in flight predates it). May be NULL. */
    void (*inflight)(void *ctx, const char *event, int delta);
    /* GenericWorkload (upstream isPodGroupMember and its workloadForest): KS_QPG_NONE for a pod
     * that is its own scheduling entity, KS_QPG_MEMBER for a member of a pod group whose PodGroup
     * the scheduler has (the queue counts the group's queued members as one entity),
     * KS_QPG_INCOMPLETE for a member whose PodGroup it has not seen (upstream holds it in
     * incompletePodGroupPods). Only the counts (ks__queue_entity_counts and the series they
     * create) read it; members are queued pod by pod all the same. Called under the queue's
     * lock. NULL (the gate off): every pod is its own entity. */
    int (*pod_group)(void *ctx, const ks_pod *pod);
} ks_queue_hooks;

enum { KS_QPG_NONE = 0, KS_QPG_MEMBER = 1, KS_QPG_INCOMPLETE = 2 };
/* The incoming hook's new_entity: no new entity, a new "pod" one, a new "podgroup" one. */
enum { KS_QENTITY_NONE = 0, KS_QENTITY_POD = 1, KS_QENTITY_PODGROUP = 2 };

typedef struct ks_queue_opts {
    int64_t initial_backoff_ns;   /* podInitialBackoffSeconds */
    int64_t max_backoff_ns;       /* podMaxBackoffSeconds */
    int64_t max_unschedulable_ns; /* --pod-max-in-unschedulable-pods-duration, 5 min */
    /* SchedulerPopFromBackoffQ off (upstream: Beta, on since v1.33): by default, while activeQ
     * is empty, pop takes the pod first in line in backoffQ among those a plugin rejected
     * (not those back from an error), before its backoff is over. */
    int no_pop_from_backoff;
} ks_queue_opts;

/* opts NULL: 1 s, 10 s, 5 min; values are otherwise taken as given (0 backoff: none). hooks are
 * copied. NULL when out of memory. */
ks_queue *ks__queue_new(const ks_queue_opts *opts, const ks_queue_hooks *hooks);
void ks__queue_free(ks_queue *q); /* drops every queued pod; NULL is a no-op */

/* A new unscheduled pod. The queue takes its own reference (ks__pod_ref); the caller keeps
 * its own. Runs PreEnqueue: activeQ, or gated. KS_EEXIST when a pod with that uid is known (in
 * flight included); KS_EINVAL when no profile handles it (no reference taken on any error). */
int ks__queue_add(ks_queue *q, ks_pod *pod);
/* The pod changed (new replaces old by uid; the queue takes its own reference to new_pod). The
 * change is read as upstream v1.37 PriorityQueue.Update does: the TargetPod events of
 * ks__pod_change_events(new, the object the queue held). In flight: qp->pod stays as it is until
 * the pod returns; the events are recorded, and requeue_failed switches to the new object and
 * replays them through the hints with the other events seen in flight. In activeQ/backoffQ:
 * replaced in place. Unschedulable or gated: replaced, then each event goes through
 * worth_requeue until one moves the pod (backoffQ/activeQ after PreEnqueue, or PreEnqueue again
 * for a gated pod); when none does, the pod stays parked. Unknown: added as ks__queue_add. */
int ks__queue_update(ks_queue *q, ks_pod *new_pod);
/* As ks__queue_update for a pod in flight, and nothing otherwise (never adds it): for a pod whose
 * binding cycle owns it (assumed), so that a binding failure requeues its latest object, as
 * upstream's handleSchedulingFailure requeues the informer's copy. 1 when recorded, else 0. */
int ks__queue_update_in_flight(ks_queue *q, ks_pod *new_pod);
/* The pod is gone (deleted, or bound by someone else). KS_ENOTFOUND when unknown. A pod in
 * flight is forgotten by uid at once; its qp stays valid until done/requeue_failed, and
 * requeue_failed then drops it (frees qp) instead of queueing it. */
int ks__queue_delete(ks_queue *q, const char *uid);

/* Pops the head of activeQ (attempts++, marks it in flight). Blocks while empty unless block is 0
 * (then returns NULL). Returns NULL once the queue is closed. */
ks_queued_pod *ks__queue_pop(ks_queue *q, int block);
/* The scheduling attempt failed (upstream AddUnschedulableIfNotPresent with QueueingHints; the
 * framework sets qp->rejector_plugins / pending_plugins first). err != 0, or no rejector plugin,
 * counts as an error: consecutive_errors++, rejector bits cleared, backoffQ (activeQ once the
 * backoff is over). Otherwise unschedulable_count++, errors reset, and the events received since
 * the pop are replayed through worth_requeue: none says Queue => unschedulablePods; Queue from a
 * Pending plugin => activeQ; Queue => backoffQ/activeQ. An update received in flight counts as
 * Queue. PreEnqueue runs before activeQ/backoffQ (rejected: gated). timestamp_ns = now. Frees qp
 * when the pod was deleted in flight. */
void ks__queue_requeue_failed(ks_queue *q, ks_queued_pod *qp, int err);
/* Whether the pod of in-flight qp was deleted meanwhile (requeue_failed will drop it). */
int ks__queue_deleted_in_flight(ks_queue *q, const ks_queued_pod *qp);
/* Takes the pod uid out of activeQ, backoffQ or unschedulablePods as ks__queue_pop would pop
 * it (attempts++, in flight), for a PodGroup scheduling cycle that schedules a gang's pending
 * members together (upstream pops the pod group entity whole). NULL when the pod is not queued
 * there (unknown, gated by PreEnqueue, in flight, deleted) or the queue is closed. */
ks_queued_pod *ks__queue_take(ks_queue *q, const char *uid);
/* The attempt succeeded (or the pod was dropped): forget it. Frees qp. */
void ks__queue_done(ks_queue *q, ks_queued_pod *qp);

/* A cluster event (upstream MoveAllToActiveOrBackoffQueue): every unschedulable pod whose
 * rejectors' hints say Queue (worth_requeue) moves to backoffQ (still backing off) or activeQ;
 * every gated pod whose gating plugin says Queue gets PreEnqueue again and moves likewise once
 * admitted. Also remembered, with its objects (references taken, texts copied), for pods now in
 * flight. Wakes pop. Returns the pods that reached activeQ or backoffQ. ev's objects are
 * borrowed for the call. */
size_t ks__queue_move_on_event_info(ks_queue *q, const ks_event_info *ev, const char *except_uid);
/* The same for the parked pods whose priority is at most `priority` only (upstream
 * getLEPriorityPreCheck: a nominated pod's room counts as taken only for pods of lower or equal
 * priority, so only they can gain from its release). Pods in flight record ev as usual. */
size_t ks__queue_move_on_event_le_priority(ks_queue *q, const ks_event_info *ev, int32_t priority);
/* The same for an event without objects (the hints see NULL objects). */
size_t ks__queue_move_on_event(ks_queue *q, const ks_cluster_event *ev);
/* The same, leaving the pod with uid except_uid (NULL: none) where it is: upstream's preCheck in
 * handleBindingCycleError, so that forgetting a rejected pod does not move that pod itself. */
size_t ks__queue_move_on_event_except(ks_queue *q, const ks_cluster_event *ev,
                                      const char *except_uid);
/* Periodic work: backoffQ pods whose backoff expired (expiry <= now) go to activeQ (every 1 s
 * upstream); parked pods whose timestamp_ns is more than max_unschedulable_ns old move with the
 * wildcard UnschedulableTimeout (every 30 s): unschedulable ones to backoffQ/activeQ, gated ones
 * through PreEnqueue again. Both return the pods moved and wake pop. */
size_t ks__queue_flush_backoff(ks_queue *q);
size_t ks__queue_flush_unschedulable(ks_queue *q);
/* The earliest backoff expiry (ns) of backoffQ, or -1 when empty (simulate's virtual clock). */
int64_t ks__queue_next_backoff_expiry(ks_queue *q);
/* Backoff duration qp would get now (for tests and reporting). */
int64_t ks__queue_backoff_duration_ns(const ks_queue *q, const ks_queued_pod *qp);

typedef struct ks_queue_counts {
    size_t active, backoff, unschedulable, gated, in_flight;
    /* Bit (1 << ks_queue_where) for each place that has ever held a pod that is its own entity
     * (every pod without the pod_group hook), and, in ever_group, a member of a pod group whose
     * PodGroup was known: upstream's per-queue series of scheduler_queued_entities {type="pod"}
     * and {type="podgroup"} appear at the first entity they count. */
    unsigned ever, ever_group;
} ks_queue_counts;
void ks__queue_counts(ks_queue *q, ks_queue_counts *out);

/* The queue as upstream v1.37's PriorityQueue counts it with GenericWorkload on, where the queued
 * members of a pod group form one entity (QueuedPodGroupInfo) in one place: scheduler_pending_pods
 * {queue} and scheduler_queued_entities {queue, type}. kubesched queues members pod by pod, so a
 * group's place is the furthest along of its members' (active, then backoff, unschedulable,
 * gated: the place from which upstream's group would be popped first). Members whose PodGroup is
 * unknown are incomplete (upstream incompletePodGroupPods); the queued members of the group whose
 * scheduling cycle runs now are pending (upstream pendingPodGroupPods, filled while the group is
 * the last popped entity). Pods in flight count nowhere. Without the pod_group hook: every pod is
 * an entity of its own (pod_entities[w] == pods[w]). */
typedef struct ks_queue_entity_counts {
    size_t pods[5];           /* by ks_queue_where (KS_Q_NONE unused): pods of the entities there */
    size_t pod_entities[5];   /* pods that are their own entity */
    size_t group_entities[5]; /* pod groups */
    size_t incomplete, pending;
    unsigned ever, ever_group; /* as ks_queue_counts, with the places counted now added */
} ks_queue_entity_counts;
/* 0, or KS_ENOMEM (out is then zero but for the ever bits). Any thread. */
int ks__queue_entity_counts(ks_queue *q, ks_queue_entity_counts *out);
/* upstream AddAttemptedPodGroupIfNeeded, after the scheduling cycle of the pod group ns/group
 * (the members are back from it, by ks__queue_requeue_failed or done, and arrivals wait
 * queued): its members in activeQ, backoffQ or unschedulablePods move as one entity, without
 * asking the hints. scheduled: the group was placed (its members left over go to activeQ); else
 * the group backs off as an entity of that many pods (the maximum backoff times the square root
 * of the size), counted by the attempts of its member tried most often, in backoffQ with the
 * errors (pop does not take it before its expiry), or activeQ when it has no backoff. PreEnqueue
 * first: a member it refuses is gated. Ends the cycle as ks__queue_cycle_end. Returns the members
 * moved. Any thread. */
size_t ks__queue_requeue_group(ks_queue *q, ks_sym ns, ks_sym group, int scheduled);
/* The scheduling cycle of the pod last popped is over (upstream clears lastPoppedEntityKey when
 * the attempted pod or pod group is added back): members of its group no longer count as
 * pending. Any thread; the scheduler calls it after each cycle. */
void ks__queue_cycle_end(ks_queue *q);

/* Visits every pod in unschedulablePods and gated (under the lock) e.g. to report them. */
void ks__queue_each_parked(ks_queue *q, void (*fn)(void *ctx, const ks_queued_pod *qp), void *ctx);

/* upstream ClusterEvent.Label() of ev: resource then action ("NodeAdd", "AssignedPodDelete",
 * "NodeUpdateNodeTaint", "*All"); "" for an action set upstream has no name for. Static. */
const char *ks__queue_event_label(const ks_cluster_event *ev);

/* upstream framework.PodSchedulingPropertiesChange (v1.37, pod_change.c): the events of a pod
 * update on resource res (KS_RES_ASSIGNED_POD, KS_RES_UNSCHEDULED_POD or KS_RES_TARGET_POD), in
 * upstream's order: UpdatePodLabel, UpdatePodScaleDown, UpdatePodScaleUp,
 * UpdatePodSchedulingGatesEliminated, UpdatePodToleration; the generic Update
 * (KS_ACT_UPDATE_ANY) when none of those changed. Writes at most KS_POD_CHANGE_MAX; returns the
 * number (>= 1). */
#define KS_POD_CHANGE_MAX 6
size_t ks__pod_change_events(const ks_pod *new_pod, const ks_pod *old_pod, ks_event_resource res,
                             ks_cluster_event *out);
/* upstream framework.NodeSchedulingPropertiesChange (v1.37, pod_change.c): the Node update
 * events, in upstream's order: UpdateNodeTaint (spec.unschedulable turned false),
 * UpdateNodeAllocatable, UpdateNodeLabel, UpdateNodeTaint (taints), UpdateNodeCondition (type ->
 * status), UpdateNodeAnnotation, UpdateNodePreemptionPolicy (spec.podPreemptionPolicy),
 * UpdateNodeDeclaredFeature (status.declaredFeatures). None: 0 (nothing moves). Writes at most
 * KS_NODE_CHANGE_MAX. */
#define KS_NODE_CHANGE_MAX 8
size_t ks__node_change_events(const ks_node *new_node, const ks_node *old_node,
                              ks_cluster_event *out);

/* upstream Activate for one pod (ks_activate_pod): from unschedulablePods, gated or backoffQ to
 * activeQ (PreEnqueue first: a pod it still refuses stays gated); a pod in flight gets the
 * ForceActivate event (it comes back through activeQ or backoffQ). 1 when the pod reached
 * activeQ now. Any thread. */
int ks__queue_activate(ks_queue *q, const char *uid);
/* The pod of uid the queue knows (queued, parked, in flight), with a reference, or NULL. */
ks_pod *ks__queue_get_pod(ks_queue *q, const char *uid);
/* Every pod the queue knows (queued, parked, in flight), each with a reference for the caller,
 * in *out (malloc'd; the caller unrefs each and frees it). Returns the count. Any thread. */
size_t ks__queue_pods(ks_queue *q, ks_pod ***out);

/* Configuration reload (core/sched/reload.c): under the queue's lock, publish(ctx) first (the
 * hooks answer for the new profiles from then on), then every pod the queue holds goes through
 * remap(ctx, qp) (may be NULL; the scheduler's bookkeeping of the old profile), gets its profile
 * again from profile_of (-1 when its schedulerName has no profile any more: PreEnqueue must then
 * keep it gated), forgets its rejector, pending and gating plugins (bits of the old profile's
 * plugins) and moves as on a wildcard event "ConfigurationReload": PreEnqueue of its profile,
 * then backoffQ while backing off, else activeQ, which is rebuilt with the new QueueSort. A pod
 * in flight (in its binding cycle) is marked and treated the same way when requeue_failed brings
 * it back (with the remap of the latest reprofile). Returns the pods that reached activeQ or
 * backoffQ. Any thread; the scheduler calls it between two scheduling cycles. */
size_t ks__queue_reprofile(ks_queue *q, void (*publish)(void *ctx),
                           void (*remap)(void *ctx, ks_queued_pod *qp), void *ctx);
/* The pop blocked now, or the next one, returns NULL once without closing the queue: the
 * scheduling thread wakes up between cycles for a pending reload. Any thread. */
void ks__queue_kick(ks_queue *q);

/* Wakes every pop() and makes them return NULL. */
void ks__queue_close(ks_queue *q);

#endif
