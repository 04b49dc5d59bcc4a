/*
 * Pod updates as a cluster source delivers them (ks__scheduler_on_pod_update,
 * ks__pod_change_actions), with the in-tree default plugins: an assigned pod is replaced in the
 * cache in place and its label change wakes a pod waiting for pod affinity while a status-only
 * change wakes nothing; a pending pod bound by someone else leaves the queue and is accounted on
 * its node; gates removed admit a gated pod; other schedulers' pods never enter the queue; a
 * deleted queued pod leaves it; a binding that fails after the watch has shown the pod bound
 * elsewhere does not requeue it.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sched/cache.h"
#include "config/config.h"
#include "sched/host_api.h"
#include "api/intern.h"
#include "api/objects.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/scheduler.h"
#include "sched/scheduler_int.h" /* ks__permit_hook */

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    /* bind: the pod to show bound elsewhere first (as a watch event arriving before the 409). */
    ks_pod *conflict_old, *conflict_new;
    int binds, bind_errors, scheduled;
    int evictions, preempted_waiting;
    char evicted[64], evicted_on[64], cleared[64];
    char failed_reason[64], failed_message[512];
    pthread_mutex_t mu;
} W;

/* Scheduling thread: records the victim (the live source would patch and DELETE it). */
static void source_evict(void *ctx, const ks_pod *victim, const ks_pod *preemptor, ks_sym node)
{
    (void)ctx, (void)preemptor;
    W.evictions++;
    snprintf(W.evicted, sizeof(W.evicted), "%s", victim->key);
    snprintf(W.evicted_on, sizeof(W.evicted_on), "%s", ks__sym_str(node));
}

static ks_code source_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)node;
    pthread_mutex_lock(&W.mu);
    W.binds++;
    pthread_mutex_unlock(&W.mu);
    if (W.conflict_new && !strcmp(pod->uid, W.conflict_new->uid)) {
        cr_assert_eq(ks__scheduler_on_pod_update(W.s, W.conflict_old, W.conflict_new, 1), 0);
        ks__status_add(st, "binding rejected: pods/binding: Operation cannot be fulfilled: pod is "
                           "already assigned");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

static void obs_bind(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                     const char *result, ks_sym node, const char *message)
{
    (void)ctx, (void)seq, (void)pod, (void)profile, (void)node, (void)message;
    pthread_mutex_lock(&W.mu);
    if (!strcmp(result, "Scheduled"))
        W.scheduled++;
    else
        W.bind_errors++;
    pthread_mutex_unlock(&W.mu);
}

static void source_preempted_waiting(void *ctx, const ks_pod *victim, const ks_pod *preemptor,
                                     ks_sym node)
{
    (void)ctx, (void)preemptor, (void)node;
    W.preempted_waiting++;
    snprintf(W.evicted, sizeof(W.evicted), "%s", victim->key);
}

static void source_failed(void *ctx, const ks_pod *pod, const char *reason, const char *message,
                          ks_sym nominated, const char *profile)
{
    (void)ctx, (void)pod, (void)nominated, (void)profile;
    snprintf(W.failed_reason, sizeof(W.failed_reason), "%s", reason);
    snprintf(W.failed_message, sizeof(W.failed_message), "%s", message);
}

static void source_clear_nominated(void *ctx, const ks_pod *pod)
{
    (void)ctx;
    snprintf(W.cleared, sizeof(W.cleared), "%s", pod->key);
}

/* WaitLong: Permit makes pods labelled permit-wait wait 60 s (others pass). */
static void *wait_long_create(const ks_args *args, ks_error *err)
{
    (void)args, (void)err;
    static int self;
    return &self;
}
static void wait_long_destroy(void *self) { (void)self; }
static ks_code wait_long_permit(void *self, ks_cycle *c, const ks_pod *p, ks_sym node,
                                int64_t *timeout, ks_status *st)
{
    (void)self, (void)c, (void)node, (void)st;
    if (ks__labels_get(p->labels, p->nlabels, ks__intern("permit-wait")) == KS_SYM_ABSENT)
        return KS_SUCCESS;
    *timeout = 60000;
    return KS_WAIT;
}
static const ks_plugin_desc wait_long_desc = {.size = sizeof(ks_plugin_desc),
                                              .name = "WaitLong",
                                              .create = wait_long_create,
                                              .destroy = wait_long_destroy,
                                              .permit = wait_long_permit};

static void setup(void)
{
    char err[1024] = "";
    memset(&W, 0, sizeof(W));
    pthread_mutex_init(&W.mu, NULL);
    ks__host_init();
    const char *yaml = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "kind: KubeSchedulerConfiguration\n"
                       "profiles:\n"
                       "- schedulerName: kubesched\n"
                       "  plugins:\n"
                       "    permit:\n"
                       "      enabled: [{name: WaitLong}]\n";
    W.reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(W.reg, yaml, "test.yaml", &W.cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_not_null(W.reg);
    cr_assert_eq(ks__registry_add(W.reg, &wait_long_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(W.cfg, W.reg, &W.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = W.cfg,
                           .plans = W.plans,
                           .seed = 1,
                           .binding_workers = 2,
                           .source = {NULL, source_bind, NULL, source_failed, source_evict,
                                      source_preempted_waiting, source_clear_nominated},
                           .observer = {NULL, NULL, obs_bind, NULL},
                           .victims_leave_on_delete_event = 1};
    cr_assert_eq(ks__scheduler_new(&o, &W.s, err, sizeof(err)), 0, "%s", err);
}

static void teardown(void)
{
    ks__scheduler_free(W.s);
    ks__pod_unref(W.conflict_old);
    ks__pod_unref(W.conflict_new);
    ks__config_plans_free(W.plans, W.cfg->nprofiles);
    ks__config_free(W.cfg);
    ks__registry_free(W.reg);
    pthread_mutex_destroy(&W.mu);
}

TestSuite(pod_update, .init = setup, .fini = teardown);

static void add_node(const char *name, const char *cpu)
{
    char json[512], err[256];
    ks_node *node;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":\"%s\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
             name, name, cpu);
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__node_from_json(o, &node, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_node_add(W.s, node), 0);
    ks__node_unref(node);
}

/* A pod from JSON pieces: labels ("" none), node ("" pending), cpu request, extra spec members
 * ("" none), schedulerName. refs = 1. */
static ks_pod *mkpod_full(const char *name, const char *labels, const char *node, const char *cpu,
                          const char *extra_spec, const char *scheduler, const char *status)
{
    char json[2048], err[256];
    ks_pod *pod;
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"default\","
             "\"uid\":\"uid-%s\",\"labels\":{%s}},\"spec\":{\"schedulerName\":\"%s\",\"nodeName\":"
             "\"%s\"%s%s,"
             "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]},"
             "\"status\":{%s}}",
             name, name, labels, scheduler, node, extra_spec[0] ? "," : "", extra_spec, cpu,
             status);
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "bad test JSON: %s", json);
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    return pod;
}

static ks_pod *mkpod(const char *name, const char *labels, const char *node, const char *cpu,
                     const char *extra)
{
    return mkpod_full(name, labels, node, cpu, extra, "kubesched", "");
}

static void add(ks_pod *pod)
{
    int rc = ks__scheduler_on_pod_add(W.s, pod);
    cr_assert(rc == 0 || rc == KS_ENOTFOUND, "add %s: %d", pod->key, rc);
}

static ks_queue_counts counts(void)
{
    ks_queue_counts c;
    ks__queue_counts(ks__scheduler_queue(W.s), &c);
    return c;
}

static int64_t node_cpu(const char *node)
{
    ks_snapshot *snap = ks__snapshot_new();
    cr_assert_eq(ks__cache_update_snapshot(ks__scheduler_cache(W.s), snap), 0);
    const ks_node_info *ni = ks__snapshot_find(snap, ks__intern(node));
    int64_t v = ni ? ni->requested.pub.milli_cpu : -1;
    ks__snapshot_free(snap);
    return v;
}

/* Pops one pod and runs its cycle; waits for its binding. */
static void schedule(void)
{
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1, "no pod was queued");
    ks__scheduler_wait_bindings(W.s);
}

Test(pod_update, change_actions_as_upstream_pod_scheduling_properties_change)
{
    ks_pod *a = mkpod("a", "\"app\":\"x\"", "", "500m",
                      "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]");
    ks_pod *relabel = mkpod("a", "\"app\":\"y\"", "", "500m",
                            "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]");
    ks_pod *smaller = mkpod("a", "\"app\":\"x\"", "", "200m",
                            "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]");
    ks_pod *more_tol = mkpod("a", "\"app\":\"x\"", "", "500m",
                             "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"},{\"key\":"
                             "\"j\",\"operator\":\"Exists\"}]");
    ks_pod *gated = mkpod("a", "\"app\":\"x\"", "", "500m",
                          "\"schedulingGates\":[{\"name\":\"g\"}],\"tolerations\":[{\"key\":\"k\","
                          "\"operator\":\"Exists\"}]");
    ks_pod *status_only = mkpod_full("a", "\"app\":\"x\"", "", "500m",
                                     "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]",
                                     "kubesched", "\"nominatedNodeName\":\"n1\"");
    cr_assert_eq(ks__pod_change_actions(relabel, a), KS_ACT_UPDATE_POD_LABEL);
    cr_assert_eq(ks__pod_change_actions(smaller, a), KS_ACT_UPDATE_POD_SCALE_DOWN);
    cr_assert_eq(ks__pod_change_actions(a, smaller), KS_ACT_UPDATE_POD_SCALE_UP,
                 "a request raised is no scale-down (v1.37: UpdatePodScaleUp)");
    cr_assert_eq(ks__pod_change_actions(more_tol, a), KS_ACT_UPDATE_POD_TOLERATIONS);
    cr_assert_eq(ks__pod_change_actions(a, gated), KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
    cr_assert_eq(ks__pod_change_actions(gated, a), 0, "a gate added eliminates nothing");
    cr_assert_eq(ks__pod_change_actions(status_only, a), 0);
    ks_pod *all[] = {a, relabel, smaller, more_tol, gated, status_only};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        ks__pod_unref(all[i]);
}

Test(pod_update, assigned_pod_is_replaced_in_place_and_a_label_change_wakes_an_affinity_waiter)
{
    add_node("n1", "4");
    ks_pod *bound = mkpod("bound", "\"app\":\"x\"", "n1", "1", "");
    add(bound);
    cr_assert_eq(node_cpu("n1"), 1000);
    /* Wants to run next to an app=y pod: none yet. */
    ks_pod *waiter =
        mkpod("waiter", "", "", "100m",
              "\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
              "[{\"labelSelector\":{\"matchLabels\":{\"app\":\"y\"}},\"topologyKey\":\"kubernetes."
              "io/hostname\"}]}}");
    add(waiter);
    schedule();
    cr_assert_eq(counts().unschedulable, 1, "the waiter is parked");

    /* A status-only update (annotation-free, labels kept): nothing moves, the node keeps 1 CPU. */
    ks_pod *status =
        mkpod_full("bound", "\"app\":\"x\"", "n1", "1", "", "kubesched", "\"phase\":\"Running\"");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, bound, status, 0), 0);
    cr_assert_eq(counts().unschedulable, 1, "a status update of an assigned pod wakes nobody");
    cr_assert_eq(node_cpu("n1"), 1000);

    /* The label now matches: the waiter moves, the cache holds the new object (one pod). */
    ks_pod *relabeled = mkpod("bound", "\"app\":\"y\"", "n1", "1", "");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, status, relabeled, 1), 0);
    ks_queue_counts c = counts();
    cr_assert_eq(c.unschedulable, 0);
    cr_assert_eq(c.active + c.backoff, 1, "the waiter is back in activeQ/backoffQ");
    ks_cache_counts cc;
    ks__cache_counts(ks__scheduler_cache(W.s), &cc);
    cr_assert_eq(cc.pods, 1);
    cr_assert_eq(node_cpu("n1"), 1000, "replaced, not added twice");
    ks__queue_flush_backoff(ks__scheduler_queue(W.s));
    ks_pod *all[] = {bound, waiter, status, relabeled};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        ks__pod_unref(all[i]);
}

Test(pod_update, pending_pod_bound_by_someone_else_leaves_the_queue_and_counts_on_its_node)
{
    add_node("n1", "2");
    ks_pod *big = mkpod("big", "", "", "3", "");
    add(big);
    schedule();
    cr_assert_eq(counts().unschedulable, 1);
    ks_pod *bound = mkpod("big", "", "n1", "3", "");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, big, bound, 1), 0);
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0,
                 "gone from the queue");
    cr_assert_eq(node_cpu("n1"), 3000, "accounted on n1 (over-committed by whoever bound it)");
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 0, "nothing left to schedule");
    cr_assert_eq(W.binds, 0, "kubesched never tried to bind it");
    ks__pod_unref(big);
    ks__pod_unref(bound);
}

Test(pod_update, gates_removed_admit_a_gated_pod)
{
    add_node("n1", "2");
    ks_pod *gated = mkpod("g", "", "", "100m", "\"schedulingGates\":[{\"name\":\"wait\"}]");
    add(gated);
    cr_assert_eq(counts().gated, 1);
    ks_pod *open = mkpod("g", "", "", "100m", "");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, gated, open, 1), 0);
    cr_assert_eq(counts().gated, 0);
    cr_assert_eq(counts().active, 1);
    schedule();
    cr_assert_eq(W.scheduled, 1);
    ks__pod_unref(gated);
    ks__pod_unref(open);
}

Test(pod_update, other_schedulers_pods_never_enter_the_queue_and_deleted_ones_leave)
{
    add_node("n1", "2");
    ks_pod *other = mkpod_full("o", "", "", "100m", "", "default-scheduler", "");
    cr_assert_eq(ks__scheduler_on_pod_add(W.s, other), KS_ENOTFOUND);
    ks_pod *other2 = mkpod_full("o", "\"a\":\"b\"", "", "100m", "", "default-scheduler", "");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, other, other2, 1), KS_ENOTFOUND);
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff + c.unschedulable + c.gated, 0);

    ks_pod *mine = mkpod("m", "", "", "5", "");
    add(mine);
    schedule();
    cr_assert_eq(counts().unschedulable, 1);
    cr_assert_eq(ks__scheduler_on_pod_delete(W.s, mine), 0);
    cr_assert_eq(counts().unschedulable, 0);
    ks__pod_unref(other);
    ks__pod_unref(other2);
    ks__pod_unref(mine);
}

Test(pod_update, status_only_update_of_a_pending_pod_does_not_requeue_it)
{
    add_node("n1", "2");
    ks_pod *big = mkpod("big", "", "", "3", "");
    add(big);
    schedule();
    ks_pod *patched =
        mkpod_full("big", "", "", "3", "", "kubesched",
                   "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\"}]");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, big, patched, 0), 0);
    cr_assert_eq(counts().unschedulable, 1, "its own status patch leaves it parked");
    /* v1.37: the update goes to the rejector's hints as TargetPod events. NodeResourcesFit
     * registered TargetPod/UpdatePodScaleDown only: a relabel leaves it parked, a smaller request
     * moves it. */
    ks_pod *relabeled = mkpod("big", "\"x\":\"y\"", "", "3", "");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, patched, relabeled, 1), 0);
    cr_assert_eq(counts().unschedulable, 1, "a relabel cannot help NodeResourcesFit");
    ks_pod *smaller = mkpod("big", "\"x\":\"y\"", "", "1", "");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, relabeled, smaller, 1), 0);
    cr_assert_eq(counts().unschedulable, 0, "a scale-down moves it (TargetPod/UpdatePodScaleDown)");
    ks__pod_unref(big);
    ks__pod_unref(patched);
    ks__pod_unref(relabeled);
    ks__pod_unref(smaller);
}

Test(pod_update,
     bind_conflict_after_the_watch_showed_it_bound_elsewhere_forgets_and_does_not_requeue)
{
    add_node("n1", "4");
    add_node("n2", "4");
    ks_pod *p = mkpod("p", "", "", "1", "");
    add(p);
    W.conflict_old = ks__pod_ref(p);
    /* Another scheduler bound it to whichever node kubesched does not pick: use n2 and n1 both
     * possible; the watch shows n2. */
    W.conflict_new = mkpod("p", "", "n2", "1", "");
    schedule();
    cr_assert_eq(W.binds, 1);
    cr_assert_eq(W.bind_errors, 1, "the 409 is a binding error");
    cr_assert_eq(W.scheduled, 0, "not counted as scheduled");
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0, "not requeued");
    ks_cache_counts cc;
    ks__cache_counts(ks__scheduler_cache(W.s), &cc);
    cr_assert_eq(cc.pods, 1);
    cr_assert_eq(cc.assumed, 0, "the assumed pod is gone; the watch's binding stays");
    cr_assert_eq(node_cpu("n2"), 1000);
    cr_assert_eq(node_cpu("n1"), 0);
    ks__pod_unref(p);
}

Test(pod_update, live_preemption_victim_stays_counted_until_its_deletion_arrives)
{
    add_node("n1", "2");
    ks_pod *victim = mkpod("victim", "", "n1", "1500m", "\"priority\":100");
    add(victim);
    ks_pod *preemptor = mkpod("preemptor", "", "", "1500m", "\"priority\":1000");
    add(preemptor);
    schedule();
    cr_assert_eq(W.evictions, 1);
    cr_assert_str_eq(W.evicted, "default/victim");
    cr_assert_str_eq(W.evicted_on, "n1");
    cr_assert_eq(node_cpu("n1"), 1500,
                 "the victim still uses n1 until the API server says it is gone");
    cr_assert_eq(counts().unschedulable, 1, "the preemptor waits");
    cr_assert_eq(W.binds, 0);

    /* The victim turns Terminating (DELETE with a grace period): still there, nobody moves. */
    ks_pod *terminating =
        mkpod_full("victim", "", "n1", "1500m", "\"priority\":100", "kubesched", "");
    terminating->terminating = 1;
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, victim, terminating, 1), 0);
    cr_assert_eq(counts().unschedulable, 1);
    cr_assert_eq(node_cpu("n1"), 1500);

    /* Gone (the kubelet confirmed): the preemptor moves and is bound to n1. */
    cr_assert_eq(ks__scheduler_on_pod_delete(W.s, terminating), 0);
    cr_assert_eq(node_cpu("n1"), 0);
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff, 1);
    ks__queue_flush_backoff(ks__scheduler_queue(W.s));
    for (int i = 0; i < 50 && counts().active == 0; i++) {
        usleep(100 * 1000); /* backoff is 1 s of real time */
        ks__queue_flush_backoff(ks__scheduler_queue(W.s));
    }
    schedule();
    cr_assert_eq(W.scheduled, 1, "the preemptor is bound once the victim is gone");
    cr_assert_eq(node_cpu("n1"), 1500);
    cr_assert_eq(W.evictions, 1, "no second preemption");
    ks__pod_unref(victim);
    ks__pod_unref(terminating);
    ks__pod_unref(preemptor);
}

Test(pod_update, live_preemption_rejects_a_victim_waiting_on_permit_instead_of_deleting_it)
{
    add_node("n1", "2");
    ks_pod *waiting = mkpod("waiting", "\"permit-wait\":\"1\"", "", "1500m", "\"priority\":100");
    add(waiting);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    cr_assert(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-waiting"),
              "assumed, waiting on Permit");
    cr_assert_eq(node_cpu("n1"), 1500);

    ks_pod *preemptor = mkpod("preemptor", "", "", "1500m", "\"priority\":1000");
    add(preemptor);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    ks__scheduler_wait_bindings(W.s); /* the rejected binding cycle ends at once, not in 60 s */
    cr_assert_eq(W.evictions, 0, "nothing to delete: it was never bound");
    cr_assert_eq(W.preempted_waiting, 1);
    cr_assert_str_eq(W.evicted, "default/waiting");
    cr_assert_eq(W.binds, 0);
    cr_assert_eq(W.bind_errors, 1, "the waiting pod's binding cycle failed (rejected)");
    cr_assert_not(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-waiting"), "forgotten");
    cr_assert_eq(node_cpu("n1"), 0);

    /* The preemptor (nominated to n1) goes first: it has the higher priority. */
    for (int i = 0; i < 50 && counts().active == 0; i++) {
        usleep(100 * 1000);
        ks__queue_flush_backoff(ks__scheduler_queue(W.s));
    }
    schedule();
    cr_assert_eq(W.scheduled, 1);
    cr_assert_eq(node_cpu("n1"), 1500);
    ks__pod_unref(waiting);
    ks__pod_unref(preemptor);
}

Test(pod_update, a_higher_preemptor_clears_the_nomination_of_a_lower_one_on_the_same_node)
{
    add_node("n1", "2");
    ks_pod *victim = mkpod("victim", "", "n1", "1500m", "\"priority\":100");
    add(victim);
    ks_pod *low = mkpod("low", "", "", "1500m", "\"priority\":500");
    add(low);
    schedule();
    cr_assert_eq(W.evictions, 1, "low preempts the victim and is nominated to n1");
    cr_assert_str_eq(W.cleared, "");
    ks_pod *high = mkpod("high", "", "", "1500m", "\"priority\":1000");
    add(high);
    schedule(); /* the victim is still there (Terminating): high preempts it too, on n1 */
    cr_assert_eq(W.evictions, 2);
    cr_assert_str_eq(W.cleared, "default/low",
                     "low's nomination is cleared (upstream clearNominatedNodeName)");
    ks__pod_unref(victim);
    ks__pod_unref(low);
    ks__pod_unref(high);
}

Test(pod_update, pod_cached_as_bound_between_pop_and_assume_fails_as_upstream_and_is_not_retried)
{
    add_node("n1", "4");
    ks_pod *p = mkpod("p", "", "", "1", "");
    add(p);
    /* The watch's bound object reaches the cache, the queue has not heard of it yet. */
    ks_pod *bound = mkpod("p", "", "n1", "1", "");
    cr_assert_eq(ks__cache_add_pod(ks__scheduler_cache(W.s), bound), 0);
    schedule();
    cr_assert_str_eq(W.failed_reason, "SchedulerError");
    cr_assert_str_eq(W.failed_message, "pod uid-p(default/p) is in the cache, so can't be assumed");
    cr_assert_eq(W.binds, 0);
    /* Then the queue hears of it: gone for good. */
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, p, bound, 1), 0);
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0);
    ks__pod_unref(p);
    ks__pod_unref(bound);
}

/* Waits up to 5 s for a pod to reach activeQ (backoff is real time here). */
static void wait_active(void)
{
    for (int i = 0; i < 50 && counts().active == 0; i++) {
        usleep(100 * 1000);
        ks__queue_flush_backoff(ks__scheduler_queue(W.s));
    }
}

Test(pod_update, update_of_an_assumed_pod_is_what_a_binding_failure_requeues)
{
    add_node("n1", "4");
    ks_pod *w = mkpod("w", "\"permit-wait\":\"1\"", "", "1", "");
    add(w);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    cr_assert(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"),
              "assumed, waiting on Permit");
    /* The user changes the pod meanwhile: now it wants a zone n1 is not in. */
    ks_pod *moved =
        mkpod("w", "\"permit-wait\":\"1\"", "", "1", "\"nodeSelector\":{\"zone\":\"b\"}");
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, w, moved, 1), 0);
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff + c.unschedulable + c.gated, 0, "not queued a second time");
    cr_assert_eq(c.in_flight, 1);
    /* Permit rejects it: the binding cycle fails and requeues the pod as it is now. */
    cr_assert_eq(ks__permit_hook(W.s, "uid-w", "WaitLong", 0, "no"), 0);
    ks__scheduler_wait_bindings(W.s);
    cr_assert_eq(W.bind_errors, 1);
    wait_active();
    cr_assert_eq(counts().active, 1, "requeued (its spec changed while in flight)");
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    ks__scheduler_wait_bindings(W.s);
    cr_assert_not(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"),
                  "the new nodeSelector fits no node (the old object would wait on n1 again)");
    cr_assert_eq(counts().unschedulable, 1);
    cr_assert_eq(W.binds, 0);
    ks__pod_unref(w);
    ks__pod_unref(moved);
}

Test(pod_update, deleting_a_pod_waiting_on_permit_rejects_it_at_once)
{
    add_node("n1", "2");
    ks_pod *w = mkpod("w", "\"permit-wait\":\"1\"", "", "1500m", "");
    add(w);
    ks_pod *big = mkpod("big", "", "", "1", "");
    add(big);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    cr_assert(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"),
              "assumed, waiting on Permit");
    cr_assert_eq(counts().unschedulable, 1, "big does not fit next to it");
    /* Deleted (never bound): upstream rejects the waiting pod, its node is free now, not in 60 s,
     * and the AssignedPod delete moves big. */
    cr_assert_eq(ks__scheduler_on_pod_delete(W.s, w), 0);
    for (int i = 0; i < 20 && ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"); i++)
        usleep(100 * 1000);
    cr_assert_not(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"), "forgotten at once");
    ks__scheduler_wait_bindings(W.s);
    cr_assert_eq(node_cpu("n1"), 0);
    cr_assert_eq(W.binds, 0, "a deleted pod is not bound");
    ks_queue_counts c = counts();
    cr_assert_eq(c.unschedulable, 0, "big moved");
    cr_assert_eq(c.active + c.backoff, 1, "only big is queued; the deleted pod is not");
    wait_active();
    schedule();
    cr_assert_eq(W.scheduled, 1);
    cr_assert_eq(node_cpu("n1"), 1000);
    ks__pod_unref(w);
    ks__pod_unref(big);
}

Test(pod_update, a_pod_rejected_at_permit_stays_unschedulable_and_its_forget_moves_the_others)
{
    add_node("n1", "2");
    ks_pod *w = mkpod("w", "\"permit-wait\":\"1\"", "", "1500m", "");
    add(w);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    ks_pod *big = mkpod("big", "", "", "1", "");
    add(big);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    cr_assert_eq(counts().unschedulable, 1, "big does not fit next to the assumed pod");
    cr_assert_eq(ks__permit_hook(W.s, "uid-w", "WaitLong", 0, "not now"), 0);
    ks__scheduler_wait_bindings(W.s);
    cr_assert_eq(W.bind_errors, 1);
    ks_queue_counts c = counts();
    /* upstream handleBindingCycleError: the AssignedPodDelete of the forget moves big, after w is
     * back as unschedulable and without w itself */
    cr_assert_eq(c.unschedulable, 1, "w is parked (WaitLong rejected it, nothing changed since)");
    cr_assert_eq(c.active + c.backoff, 1, "big moved");
    wait_active();
    schedule();
    cr_assert_eq(W.scheduled, 1, "big is bound");
    cr_assert_eq(node_cpu("n1"), 1000);
    cr_assert_eq(counts().unschedulable, 1, "w still waits for a change");
    ks__pod_unref(w);
    ks__pod_unref(big);
}

Test(pod_update, a_pod_waiting_on_permit_bound_by_someone_else_ends_its_binding_cycle_at_once)
{
    add_node("n1", "2");
    add_node("n2", "2");
    ks_pod *w = mkpod("w", "\"permit-wait\":\"1\"", "", "1500m", "");
    add(w);
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    cr_assert(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"),
              "assumed, waiting on Permit");
    /* Another scheduler bound it (to whichever node): the watch shows it assigned. */
    ks_pod *bound_n1 = mkpod("w", "\"permit-wait\":\"1\"", "n1", "1500m", "");
    ks_pod *bound_n2 = mkpod("w", "\"permit-wait\":\"1\"", "n2", "1500m", "");
    ks_pod *bound = node_cpu("n1") == 1500 ? bound_n2 : bound_n1;
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, w, bound, 1), 0);
    for (int i = 0; i < 20 && W.bind_errors == 0; i++)
        usleep(100 * 1000);
    cr_assert_eq(W.bind_errors, 1, "rejected at once, not after its 60 s Permit wait");
    ks__scheduler_wait_bindings(W.s);
    cr_assert_eq(W.binds, 0, "never bound by kubesched");
    cr_assert_not(ks__cache_is_assumed(ks__scheduler_cache(W.s), "uid-w"));
    cr_assert_eq(node_cpu("n1") + node_cpu("n2"), 1500, "counted once, where the other bound it");
    ks_queue_counts c = counts();
    cr_assert_eq(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0, "not requeued");
    ks__pod_unref(w);
    ks__pod_unref(bound_n1);
    ks__pod_unref(bound_n2);
}
