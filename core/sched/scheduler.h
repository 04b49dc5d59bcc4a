/*
 * The scheduler: profiles (one framework each), cache, snapshot, queue, the scheduling cycle
 * (schedule_one.c) and the asynchronous binding cycle (binding.c), wired to a cluster source.
 *
 * A cluster source feeds object events in (ks__scheduler_on_*) and performs the side effects the
 * scheduler asks for (ks_source_ops): the file source of `simulate` binds in memory, the API
 * source talks to a kube-apiserver. The scheduler does not know which one it runs with.
 *
 * Threads: on_* event functions may be called from any thread. ks__scheduler_schedule_one runs on
 * the one scheduling thread; it uses the Filter/Score worker pool and hands each scheduled pod to
 * the binding pool. Source and observer callbacks say which thread calls them.
 */
#ifndef KS_CORE_SCHEDULER_H
#define KS_CORE_SCHEDULER_H

#include <stdint.h>

#include "api/volume_objects.h"
#include "sched/cache.h"
#include "config/config.h"
#include "sched/framework.h"
#include "sched/queue.h"
#include "sched/sched_families.h"

/* Side effects, performed by the cluster source. */
typedef struct ks_source_ops {
    void *ctx;
    /* Binding thread: make pod bound to node (POST pods/binding, or in memory). */
    ks_code (*bind)(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st);
    /* Binding thread: the pod is bound (the Scheduled event). May be NULL. */
    void (*scheduled)(void *ctx, const ks_pod *pod, ks_sym node, const char *profile);
    /* Scheduling or binding thread: the attempt failed; reason "Unschedulable" or
     * "SchedulerError", message in upstream format (status patch + FailedScheduling event).
     * nominated is KS_SYM_ABSENT unless PostFilter nominated a node. May be NULL. */
    void (*failed)(void *ctx, const ks_pod *pod, const char *reason, const char *message,
                   ks_sym nominated, const char *profile);
    /* Scheduling thread: preemption chose victim on node for preemptor; delete it (the
     * Preempted event). The scheduler has already dropped it from its own view unless
     * victims_leave_on_delete_event is set. May be NULL. */
    void (*evict)(void *ctx, const ks_pod *victim, const ks_pod *preemptor, ks_sym node);
    /* Scheduling thread: preemption chose victim, a pod waiting on Permit or in PreBind (not
     * bound yet), and rejected it instead (victims_leave_on_delete_event only): nothing to
     * delete, the Preempted event only (upstream). May be NULL. */
    void (*preempted_waiting)(void *ctx, const ks_pod *victim, const ks_pod *preemptor,
                              ks_sym node);
    /* Scheduling thread: a lower-priority pod nominated to the node a preemptor now takes lost
     * its nomination (upstream clearNominatedNodeName): clear its status.nominatedNodeName.
     * May be NULL. */
    void (*clear_nominated)(void *ctx, const ks_pod *pod);
    /* Binding thread, before the binding cycle waits on Permit or runs a PreBind with work
     * (upstream NominatedNodeNameForExpectation): set pod's status.nominatedNodeName to node, to
     * tell other components (e.g. the cluster autoscaler) where it is about to go. Synchronous,
     * so that it lands before the bind; a failure is logged and the binding goes on (upstream:
     * "not critical enough to stop binding cycles"). Not called when the pod already names
     * node. May be NULL. */
    void (*nominate)(void *ctx, const ks_pod *pod, ks_sym node);
    /* Binding thread (a PreBind plugin's ks_storage_patch for pod): apply the JSON merge patch
     * to the PersistentVolume name (KS_VK_PV, ns ignored) or the claim ns/name (KS_VK_PVC) and
     * copy the object's new resourceVersion to rv (KS_RESOURCE_VERSION_MAX bytes). The file
     * source changes its in-memory object and completes a PV's binding to a claim
     * (KS_SOURCE_SIMULATED); the API source PATCHes. KS_SUCCESS, or KS_ERROR with the reason in
     * st. May be NULL. */
    ks_code (*patch_storage)(void *ctx, const ks_pod *pod, ks_vol_kind kind, ks_sym ns, ks_sym name,
                             const char *patch, char *rv, ks_status *st);
    uint32_t flags; /* KS_SOURCE_* (plugin.h) */
    /* Any thread, without waiting (queued): a plugin's JSON merge patch to the object ns/name of
     * a watched resource, or to its status (ks_object_patch), and its Event about a pod
     * (ks_pod_event). The scheduler applies the patch itself for a simulated source. 0, or
     * KS_ENOMEM. May be NULL. */
    int (*write_object)(void *ctx, const struct ks_resource *res, ks_sym ns, ks_sym name,
                        int status, const char *merge_patch);
    int (*plugin_event)(void *ctx, const ks_pod *pod, const char *type, const char *reason,
                        const char *note, const char *profile);
    /* Scheduling thread: workload-aware preemption chose victim for the pod group of uid pg_uid
     * (member: one of its pending pods, for the scheduler name). in_memory: the victim was
     * waiting on Permit or in PreBind and was rejected, nothing to delete; else delete it
     * (DisruptionTarget "<scheduler>: preempting to accommodate a higher priority podgroup",
     * then DELETE). Either way the Preempted event "Preempted by podgroup <uid> on node cluster"
     * (upstream's executor for a podgroup preemptor). May be NULL: evict serves then. */
    void (*preempted_group)(void *ctx, const ks_pod *victim, const ks_pod *member,
                            const char *pg_uid, int in_memory);
    /* DynamicResources' ResourceClaim requests in live mode (upstream's clientset calls in
     * PreBind, Unreserve and PostFilter): method ("GET", "PUT", "PATCH" or "DELETE", body of
     * content_type) on the resource.k8s.io/v1 claim ns/name, or on its status subresource
     * (status 1); name KS_SYM_ABSENT: "POST" to the namespace's collection (the claim for a
     * pod's extended resources, created with generateName).
     * out non-NULL: synchronous on the calling thread (a binding thread); KS_SUCCESS with the
     * object the server answered in *out (malloc'd JSON text the caller frees), or KS_ERROR with
     * the API server's message (client-go's error text) in st and the HTTP status (0: no
     * answer) in *http_status. out NULL: queued for the effects thread without waiting (the
     * scheduling thread's PostFilter), a failure is logged; KS_SUCCESS, or KS_ERROR when it
     * could not be queued. NULL for a source that writes no claims (simulate writes its
     * in-memory store itself). */
    ks_code (*claim_request)(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                             const char *content_type, const char *body, char **out,
                             int *http_status, ks_status *st);
    /* Binding thread, synchronous: a JSON merge patch to the pod's status (DynamicResources'
     * status.extendedResourceClaimStatus, upstream's schedutil.PatchPodStatus). KS_SUCCESS, or
     * KS_ERROR with the reason in st. May be NULL (the source writes no pod status). */
    ks_code (*patch_pod_status)(void *ctx, const ks_pod *pod, const char *merge_patch,
                                ks_status *st);
} ks_source_ops;

/* What --explain shows of one scheduling cycle; borrowed, valid during the observer call. */
typedef struct ks_explain {
    const ks_framework *fw;
    uint64_t skip_filter, skip_score;
    const ks_status *prefilter_status; /* non-NULL when PreFilter rejected every node */
    size_t nevaluated;
    const ks_node_info *const *evaluated;
    const uint16_t *passed;    /* per evaluated node: filter plugins passed before the verdict */
    const ks_status *statuses; /* per evaluated node (code KS_SUCCESS: passed all) */
    size_t nfeasible;
    const ks_node_info *const *feasible;
    int scored;            /* 0 when one feasible node was taken without scoring */
    const int64_t *scores; /* [score plugin][feasible], after NormalizeScore */
    const int64_t *totals; /* [feasible] weighted sums */
} ks_explain;

/* Observes attempts (simulate's report, metrics). seq orders attempts as they were made. */
typedef struct ks_observer {
    void *ctx;
    /* Scheduling thread, at the end of each scheduling cycle. result NULL: the pod was assumed on
     * node and goes to binding (bind_done follows with the same seq). explain is NULL unless the
     * scheduler was created with explain on. */
    void (*cycle_done)(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                       const char *result, ks_sym node, const char *message,
                       const ks_explain *explain);
    /* Binding thread: result "Scheduled" or "Error" / "Unschedulable" with message. */
    void (*bind_done)(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                      const char *result, ks_sym node, const char *message);
    /* Scheduling thread, after cycle_done of the same seq: PostFilter nominated node and these
     * victims are evicted. May be NULL. */
    void (*preempted)(void *ctx, uint64_t seq, const ks_pod *pod, ks_sym node,
                      ks_pod *const *victims, size_t nvictims);
    /* Scheduling thread: a PodGroup member goes back nominated to node by its group's
     * workload-aware preemption without being the one preempted reports the group's victims
     * with (the other members; all of them for an ongoing preemption). May be NULL. */
    void (*nominated)(void *ctx, uint64_t seq, const ks_pod *pod, ks_sym node);
} ks_observer;

typedef struct ks_scheduler_opts {
    const ks_config *cfg;
    ks_profile_plan *plans; /* cfg->nprofiles entries, borrowed */
    uint64_t seed; /* the plugins' random draws (ks_rand_below); host selection draws none */
    int explain;
    int binding_workers; /* 0: 16 */
    /* simulate: a binding cycle that does not wait on Permit runs at once on the scheduling
     * thread (its Bind is in memory), so the next pod always sees it bound, whatever the thread
     * timing. Never in live mode: the scheduling thread must not wait on the network. */
    int bind_inline;
    int64_t (*now_ns)(void *ctx); /* queue clock; NULL: monotonic */
    void *clock_ctx;
    ks_source_ops source;
    ks_observer observer;
    /* Preemption victims stay in the cache (still using their node) until the source reports
     * them gone, as upstream: the live source, whose deletions are confirmed by the watch. 0:
     * dropped at once (simulate, whose evict is the deletion). */
    int victims_leave_on_delete_event;
    /* Registered families to fill (live mode), borrowed; NULL: no metrics and no timing. */
    const struct ks_sched_metrics *metrics;
    int plugin_metrics_sample_percent; /* 0: upstream's 10 (tests use 100) */
    /* --feature-gates=OpportunisticBatching=false (upstream's gate, Beta and on by default since
     * v1.35): no pod signatures, no node hints (core/sched/batch.h). */
    int disable_opportunistic_batching;
    /* The owner of cfg's plugins (registry, shared objects, plans; reload.h): released when a
     * configuration reload replaced the first profile set and its binding cycles drained, or when
     * the scheduler is freed. NULL: the caller frees them after ks__scheduler_free. */
    void (*first_release)(void *owner);
    void *first_owner;
} ks_scheduler_opts;

typedef struct ks_scheduler ks_scheduler;

int ks__scheduler_new(const ks_scheduler_opts *opts, ks_scheduler **out, char *err, size_t errlen);
/* Stops the binding pool (waits for in-flight bindings) and frees everything. */
void ks__scheduler_free(ks_scheduler *s);

/* Object events from the cluster source. Pods: assigned ones go to the cache, unassigned ones
 * whose schedulerName is one of the profiles go to the queue (others are ignored: returns
 * KS_ENOTFOUND so that the caller can report them). Takes references. */
int ks__scheduler_on_pod_add(ks_scheduler *s, ks_pod *pod);
int ks__scheduler_on_pod_delete(ks_scheduler *s, ks_pod *pod);
/* A pod changed (upstream updatePodInCache / updatePodInSchedulingQueue and the informer's
 * assigned / unscheduled filters). Assigned -> assigned: the cache entry is replaced in place
 * (one lock: the node's resources are never briefly free) and the changes
 * (ks__pod_change_events) go to the parked pods' hints as AssignedPod update events with both
 * objects; an update with none of those (status, annotations, deletionTimestamp) is the generic
 * AssignedPod/Update, which no in-tree plugin registers. Unassigned -> assigned (bound by us
 * and confirmed, or by someone else): the pod leaves the queue and the nominator, and enters the
 * cache (confirming an assumed pod), an AssignedPod add event. Unassigned -> unassigned: ignored
 * when not ours or assumed (the binding cycle owns it; its change is recorded for a failed
 * binding's requeue); else ks__queue_update when changed (a new resourceVersion, status-only
 * changes included, as upstream v1.37: the TargetPod events of the change go to the pod's own
 * rejectors' hints); a nominatedNodeName that was set and changed moves pods
 * as an AssignedPod delete of the old object. Takes references. */
int ks__scheduler_on_pod_update(ks_scheduler *s, ks_pod *old_pod, ks_pod *new_pod, int changed);
/* upstream PodSchedulingPropertiesChange (v1.37): the KS_ACT_UPDATE_POD_* bits a pod update
 * carries (0: none of those; upstream then sends the generic Update). The event list, in
 * upstream's order: ks__pod_change_events (queue.h). */
uint32_t ks__pod_change_actions(const ks_pod *new_pod, const ks_pod *old_pod);
/* Nodes (upstream addNodeToCache / updateNodeInCache / deleteNodeFromCache): the cache, then the
 * queue with Node/Add, the node's update events (ks__node_change_events; none: nothing moves) or
 * Node/Delete, the objects handed to the hints. on_node_add of a known name replaces it but moves
 * pods as an Add; a source that knows the previous object calls on_node_update. */
int ks__scheduler_on_node_add(ks_scheduler *s, ks_node *node);
/* on_node_update also tells which events it sent (upstream labels event_handling_duration by
 * them): events (room for KS_NODE_CHANGE_MAX, queue.h) and nevents may be NULL. */
int ks__scheduler_on_node_update(ks_scheduler *s, ks_node *old_node, ks_node *new_node,
                                 ks_cluster_event *events, size_t *nevents);
int ks__scheduler_on_node_delete(ks_scheduler *s, ks_node *node);
/* upstream framework.MatchClusterEvents: whether incoming event ev matches registration reg. */
int ks__event_matches(const ks_cluster_event *reg, const ks_cluster_event *ev);

/* One scheduling cycle. Returns 1 when a pod was processed, 0 when the queue was empty
 * (block == 0) or closed. */
int ks__scheduler_schedule_one(ks_scheduler *s, int block);
/* Waits until no binding cycle is in flight. */
void ks__scheduler_wait_bindings(ks_scheduler *s);
/* Shutdown begins: binding cycles waiting (a PreBind polling for its volumes, a pod waiting on
 * Permit) end now instead of at their timeouts, as upstream's cancelled context ends them, so
 * that the wait for the bindings in flight is short. Any thread. */
void ks__scheduler_stopping(ks_scheduler *s);
/* Waits until every binding cycle in flight has ended or is parked on Permit's Wait (which only
 * another pod's cycle or its timeout ends). With bind_inline, simulate calls it after each
 * scheduling cycle, so that pods a Permit plugin let go are bound before the next pod is popped:
 * the same file and seed give the same decisions on every run. */
void ks__scheduler_wait_bindings_settled(ks_scheduler *s);
/* With a simulated source (KS_SOURCE_SIMULATED), Permit deadlines are on the scheduler's virtual
 * clock and no timer thread watches them: the earliest deadline of a pod parked on Permit (-1
 * when none), and the expiry of those whose deadline is now past (they are rejected with
 * upstream's timeout message and their binding cycles fail; wait for them to settle). */
/* An object of a resource a plugin watches (ks_resource_watch), from an informer or the cluster
 * file: filed (deleted != 0: removed) and offered to the queue as that resource's Add, Update or
 * Delete event, whose upstream label ("podgroups.v1alpha1.scheduling.x-k8s.ioAdd") *label gets
 * (label may be NULL). 0, or KS_EPARSE / KS_ENOMEM with err. Any thread. */
struct ks_resource;
int ks__scheduler_apply_custom(ks_scheduler *s, const struct ks_resource *res, const cJSON *obj,
                               int deleted, const char **label, char *err, size_t errlen);
/* A scheduling.k8s.io/v1beta1 PodGroup (GenericWorkload), from an informer or the cluster file
 * (checked: read as a cluster file's, podgroup_objects.h): filed (deleted != 0: removed) and
 * offered to the queue as a PodGroup Add, Update or Delete event (an update with the same
 * resourceVersion is none), whose upstream label ("scheduling.k8s.io/PodGroupAdd") label (64
 * bytes, may be NULL) gets, "" when there was no event. 0; KS_EINVAL when the gate is off;
 * KS_EPARSE / KS_ENOMEM with err. Any thread. podgroups.c. */
int ks__scheduler_apply_podgroup(ks_scheduler *s, const cJSON *obj, int deleted, int checked,
                                 char *label, char *err, size_t errlen);
/* With GenericWorkload on, upstream NewFramework's checks: a profile without GangScheduling is
 * logged (an error line, not refused); one whose GangScheduling has no placement_feasible (a
 * plugin of that name built against an older SDK) is refused: KS_EINVAL with err. Main thread.
 * podgroups.c. */
int ks__scheduler_podgroups_check_profiles(const ks_scheduler *s, char *err, size_t errlen);
/* The PodGroup scheduling cycles run so far (GenericWorkload; bench_scheduling's ms per PodGroup
 * attempt). Read after the scheduling thread is done, or as an estimate. schedule_one.c. */
uint64_t ks__scheduler_podgroup_cycles(const ks_scheduler *s);
/* Whether this scheduler was created with the GenericWorkload gate on. */
int ks__scheduler_generic_workload(const ks_scheduler *s);
int64_t ks__binding_next_permit_deadline(ks_scheduler *s);
size_t ks__binding_expire_permits(ks_scheduler *s); /* how many */

ks_queue *ks__scheduler_queue(ks_scheduler *s);
ks_cache *ks__scheduler_cache(ks_scheduler *s);
struct ks_store *ks__scheduler_store(ks_scheduler *s);
int ks__scheduler_profile_index(ks_scheduler *s, ks_sym scheduler_name); /* -1: none */
ks_framework *ks__scheduler_framework(ks_scheduler *s, int profile);

/* Upstream numFeasibleNodesToFind (exposed for tests). */
int32_t ks__num_feasible_nodes_to_find(int32_t percentage, int32_t num_all_nodes);

#endif
