/*
 * The scheduler's metrics (core/sched/sched_metrics.c, core/sched/framework_metrics.c and their
 * call sites): a scheduler with the default profile runs in memory (bindings succeed at once, a
 * virtual queue clock) with a registry, and the families upstream fills must count what happened:
 * attempts by result, one observation per extension point run, evaluations per plugin call,
 * unschedulable pods per rejecting plugin, pods entering the queues by event, bound pods' attempts
 * and SLI. Plugin durations are sampled in every cycle here (upstream: 10%) so that they can be
 * counted.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "harness.h"
#include "util/metrics.h"
#include "config/registry.h"
#include "sched/scheduler.h"

#define SEC 1000000000LL

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_metrics *r;
    ks_sched_metrics m;
    ks_scheduler *s;
    int64_t now;
    int binds;
} t;

static int64_t clock_now(void *ctx)
{
    (void)ctx;
    return t.now;
}

static ks_code bind_ok(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)pod, (void)node, (void)st;
    __atomic_add_fetch(&t.binds, 1, __ATOMIC_RELAXED);
    return KS_SUCCESS;
}

/* Waiter: a Permit plugin that says Wait for args.timeoutMs (the permit wait metrics). */
static void *waiter_create(const ks_args *args, ks_error *e)
{
    (void)e;
    return (void *)args;
}
static void waiter_destroy(void *self) { (void)self; }
static ks_code waiter_permit(void *self, ks_cycle *c, const ks_pod *p, ks_sym node,
                             int64_t *timeout_ms, ks_status *st)
{
    (void)c, (void)p, (void)node, (void)st;
    int64_t ms = 0;
    ks_args_get_int(self, "timeoutMs", &ms);
    *timeout_ms = ms;
    return KS_WAIT;
}
static const ks_plugin_desc waiter_desc = {.size = sizeof(ks_plugin_desc),
                                           .name = "Waiter",
                                           .create = waiter_create,
                                           .destroy = waiter_destroy,
                                           .permit = waiter_permit};

static void setup(void)
{
    th_init();
    memset(&t, 0, sizeof(t));
}

/* The scheduler over config_yaml (NULL: the default configuration). */
static void start(const char *config_yaml)
{
    char err[512] = "";
    t.now = 100 * SEC;
    t.reg = th_registry_new();
    cr_assert_eq(ks__registry_add(t.reg, &waiter_desc, "test", err, sizeof(err)), 0, "%s", err);
    if (config_yaml)
        cr_assert_eq(
            ks__config_load_string(t.reg, config_yaml, "test.yaml", &t.cfg, err, sizeof(err)), 0,
            "%s", err);
    else
        cr_assert_eq(ks__config_default(t.reg, &t.cfg, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    t.r = ks__metrics_create();
    cr_assert_eq(ks__metrics_register_scheduler(t.r, &t.m), 0);
    ks_scheduler_opts o = {
        .cfg = t.cfg,
        .plans = t.plans,
        .seed = 1,
        .binding_workers = 2,
        .now_ns = clock_now,
        .source = {.bind = bind_ok},
        .metrics = &t.m,
        .plugin_metrics_sample_percent = 100,
    };
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
}

static void teardown(void)
{
    ks__scheduler_free(t.s);
    ks__metrics_destroy(t.r);
    if (t.cfg)
        ks__config_plans_free(t.plans, t.cfg->nprofiles);
    ks__config_free(t.cfg);
    ks__registry_free(t.reg);
    th_fini();
}

TestSuite(sched_metrics, .init = setup, .fini = teardown, .timeout = 60);

static void node(const char *name, const char *cpu)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'uid-%s','labels':{'kubernetes.io/hostname':'%s'}},"
             "'status':{'allocatable':{'cpu':'%s','memory':'8Gi','pods':'110'}}}",
             name, name, name, cpu);
    cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(json)), 0);
}

static void pod(const char *name, const char *cpu)
{
    char json[512];
    snprintf(
        json, sizeof(json),
        "{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s'},"
        "'spec':{'containers':[{'name':'c','image':'i','resources':{'requests':{'cpu':'%s'}}}]}}",
        name, name, cpu);
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, th_pod(json)), 0);
}

/* Runs every pod activeQ holds now, and waits for their binding cycles. */
static void drain(void)
{
    while (ks__scheduler_schedule_one(t.s, 0))
        ;
    ks__scheduler_wait_bindings(t.s);
}

static double counter(ks_metric_family *f, const char *a, const char *b, const char *c)
{
    ks_metric *m = c   ? KS_METRICS_WITH(f, a, b, c)
                   : b ? KS_METRICS_WITH(f, a, b)
                       : KS_METRICS_WITH(f, a);
    return ks__metrics_value(m);
}

static uint64_t hcount(ks_metric_family *f, const char *a, const char *b, const char *c)
{
    ks_metric *m = c   ? KS_METRICS_WITH(f, a, b, c)
                   : b ? KS_METRICS_WITH(f, a, b)
                       : KS_METRICS_WITH(f, a);
    return ks__metrics_count(m);
}

/* The registry as /metrics serves it (freed by the next call and at exit of the test). */
static char *render_text(void)
{
    static char *text;
    free(text);
    text = NULL;
    cr_assert_eq(ks__metrics_render(t.r, &text, NULL), 0);
    return text;
}

#define PROFILE "default-scheduler"

/* Three nodes with 2 CPUs, three pods of 1 CPU and one of 100 CPUs. */
static void three_fit_one_does_not(void)
{
    start(NULL);
    node("n1", "2");
    node("n2", "2");
    node("n3", "2");
    pod("a", "1");
    pod("b", "1");
    pod("c", "1");
    pod("big", "100");
    drain();
}

Test(sched_metrics, attempts_by_result_and_their_durations)
{
    three_fit_one_does_not();
    cr_expect_eq(t.binds, 3);
    cr_expect_eq(counter(t.m.schedule_attempts, "scheduled", PROFILE, NULL), 3);
    cr_expect_eq(counter(t.m.schedule_attempts, "unschedulable", PROFILE, NULL), 1);
    cr_expect_eq(hcount(t.m.scheduling_attempt_duration, "scheduled", PROFILE, NULL), 3);
    cr_expect_eq(hcount(t.m.scheduling_attempt_duration, "unschedulable", PROFILE, NULL), 1);
    cr_expect_eq(ks__metrics_count(t.m.scheduling_algorithm_duration_solo), 4);
    /* Bound pods: attempts histogram and the SLI duration, both by attempt count. */
    cr_expect_eq(ks__metrics_count(t.m.pod_scheduling_attempts_solo), 3);
    cr_expect_eq(ks__metrics_sum(t.m.pod_scheduling_attempts_solo), 3);
    cr_expect_eq(hcount(t.m.pod_scheduling_sli_duration, "1", NULL, NULL), 3);
    /* No binding cycle in flight any more. */
    cr_expect_eq(counter(t.m.goroutines, "binding", NULL, NULL), 0);
    /* The parallel sections add their workers while they run (upstream Parallelizer.Until). */
    cr_expect_not_null(strstr(render_text(), "scheduler_goroutines{operation=\"Filter\"} 0\n"));
    cr_expect_not_null(strstr(render_text(), "scheduler_goroutines{operation=\"Score\"} 0\n"));
    /* Every popped pod is done: nothing in flight (upstream's PodPopped in-flight entries). */
    cr_expect_not_null(strstr(render_text(), "scheduler_inflight_events{event=\"PodPopped\"} 0\n"));
}

Test(sched_metrics, one_observation_per_extension_point_run)
{
    three_fit_one_does_not();
    ks_metric_family *f = t.m.framework_extension_point_duration;
    cr_expect_eq(hcount(f, "PreFilter", "Success", PROFILE), 4);
    cr_expect_eq(hcount(f, "PostFilter", "Unschedulable", PROFILE), 1,
                 "DefaultPreemption finds no victim");
    /* upstream DefaultPreemption counts every PostFilter it runs, victims or not */
    cr_expect_eq(ks__metrics_value(t.m.preemption_attempts_solo), 1);
    cr_expect_eq(ks__metrics_count(t.m.preemption_victims_solo), 0);
    cr_expect_eq(hcount(f, "PreScore", "Success", PROFILE), 3);
    cr_expect_eq(hcount(f, "Score", "Success", PROFILE), 3);
    cr_expect_eq(hcount(f, "Reserve", "Success", PROFILE), 3);
    cr_expect_eq(hcount(f, "Permit", "Success", PROFILE), 3);
    cr_expect_eq(hcount(f, "PreBind", "Success", PROFILE), 3);
    cr_expect_eq(hcount(f, "Bind", "Success", PROFILE), 3);
    cr_expect_eq(hcount(f, "PostBind", "Success", PROFILE), 3);
    /* PreEnqueue runs as each pod enters activeQ; upstream always labels it Success. */
    cr_expect_eq(hcount(f, "PreEnqueue", "Success", PROFILE), 4);
    /* Filter runs per node; upstream times the point once per cycle around all of them. */
    cr_expect_eq(hcount(f, "Filter", "Success", PROFILE), 4);
}

Test(sched_metrics, plugin_evaluations_and_sampled_durations)
{
    three_fit_one_does_not();
    /* Every pod is filtered on all three nodes (fewer than 100 nodes: all are evaluated). */
    cr_expect_eq(counter(t.m.plugin_evaluation, "NodeResourcesFit", "Filter", PROFILE), 12);
    cr_expect_eq(counter(t.m.plugin_evaluation, "NodeResourcesFit", "PreFilter", PROFILE), 4);
    /* ImageLocality has no PreScore: it scores each feasible node of the three scheduled pods. */
    cr_expect_eq(counter(t.m.plugin_evaluation, "ImageLocality", "Score", PROFILE), 9);
    /* Every cycle sampled here: one duration per call, with the status the plugin returned. */
    ks_metric_family *f = t.m.plugin_execution_duration;
    cr_expect_eq(hcount(f, "NodeResourcesFit", "Filter", "Success"), 9);
    /* 100 CPUs exceed every node's allocatable: upstream says UnschedulableAndUnresolvable */
    cr_expect_eq(hcount(f, "NodeResourcesFit", "Filter", "UnschedulableAndUnresolvable"), 3);
    cr_expect_eq(hcount(f, "ImageLocality", "Score", "Success"), 9);
    cr_expect_eq(hcount(f, "DefaultBinder", "Bind", "Success"), 3);
    cr_expect_eq(hcount(f, "DefaultPreemption", "PostFilter", "Unschedulable"), 1);
}

Test(sched_metrics, unschedulable_pod_counts_until_it_is_retried)
{
    three_fit_one_does_not();
    cr_expect_eq(counter(t.m.unschedulable_pods, "NodeResourcesFit", PROFILE, NULL), 1);
    ks_metric_family *in = t.m.queue_incoming_pods;
    cr_expect_eq(counter(in, "active", "UnscheduledPodAdd", NULL), 4);
    cr_expect_eq(counter(in, "unschedulable", "ScheduleAttemptFailure", NULL), 1);

    /* A node it fits on: NodeAdd moves it (still backing off: backoffQ), the backoff ends, it is
     * scheduled on its second attempt and no longer counts as unschedulable. */
    node("huge", "200");
    cr_expect_eq(counter(in, "backoff", "NodeAdd", NULL), 1);
    /* NodeResourcesFit, its rejector, registered Node/Add: the hint said Queue */
    cr_expect_eq(
        hcount(t.m.queueing_hint_execution_duration, "NodeResourcesFit", "NodeAdd", "Queue"), 1);
    t.now += 2 * SEC;
    ks__queue_flush_backoff(ks__scheduler_queue(t.s));
    cr_expect_eq(counter(in, "active", "BackoffComplete", NULL), 1);
    drain();
    cr_expect_eq(counter(t.m.schedule_attempts, "scheduled", PROFILE, NULL), 4);
    cr_expect_eq(counter(t.m.unschedulable_pods, "NodeResourcesFit", PROFILE, NULL), 0);
    cr_expect_eq(hcount(t.m.pod_scheduling_sli_duration, "2", NULL, NULL), 1);
    /* SLI: from its first entry into activeQ (t = 100 s) to the bind (t = 102 s) on the queue
     * clock. */
    cr_expect_eq(ks__metrics_sum(KS_METRICS_WITH(t.m.pod_scheduling_sli_duration, "2")), 2.0);
    cr_expect_eq(ks__metrics_sum(t.m.pod_scheduling_attempts_solo), 5);
    /* Woken by an event, not by the flush. */
    cr_expect_eq(ks__metrics_value(t.m.pod_scheduled_after_flush_solo), 0);
}

/* scheduler_queue_incoming_entities_total counts an entry unless the queueing strategy that
 * moved the pod names the queue it went to (upstream recordIncomingEntitiesMetrics: the hint is
 * passed as the "previous strategy"), so it differs from queue_incoming_pods_total on purpose. */
Test(sched_metrics, incoming_entities_skip_moves_the_hint_named)
{
    three_fit_one_does_not();
    ks_metric_family *en = t.m.queue_incoming_entities;
    /* New pods: no strategy, every one counts. */
    cr_expect_eq(counter(en, "active", "UnscheduledPodAdd", "pod"), 4);
    /* The failure's in-flight hint was QueueSkip: unschedulable, as named. */
    cr_expect_eq(counter(t.m.queue_incoming_pods, "unschedulable", "ScheduleAttemptFailure", NULL),
                 1);
    cr_expect_eq(counter(en, "unschedulable", "ScheduleAttemptFailure", "pod"), 0);
    /* NodeAdd's hint Queue while backing off: backoffQ, as named. */
    node("huge", "200");
    cr_expect_eq(counter(t.m.queue_incoming_pods, "backoff", "NodeAdd", NULL), 1);
    cr_expect_eq(counter(en, "backoff", "NodeAdd", "pod"), 0);
    /* Backoff completion passes no strategy. */
    t.now += 2 * SEC;
    ks__queue_flush_backoff(ks__scheduler_queue(t.s));
    cr_expect_eq(counter(en, "active", "BackoffComplete", "pod"), 1);
}

/* Hint Queue after the backoff is over goes to activeQ: not the queue the hint names, so the
 * entity counts (upstream's quirk, kept). */
Test(sched_metrics, incoming_entities_count_a_queue_hint_that_lands_in_active)
{
    three_fit_one_does_not();
    t.now += 20 * SEC; /* past any backoff */
    node("huge", "200");
    cr_expect_eq(counter(t.m.queue_incoming_pods, "active", "NodeAdd", NULL), 1);
    cr_expect_eq(counter(t.m.queue_incoming_entities, "active", "NodeAdd", "pod"), 1);
}

/* A pod that only the periodic flush woke up, then bound: pod_scheduled_after_flush_total. */
Test(sched_metrics, scheduled_after_flush)
{
    three_fit_one_does_not(); /* "big" waits in unschedulablePods */
    ks_queue *q = ks__scheduler_queue(t.s);
    t.now += 5 * 60 * SEC + 1;
    cr_assert_eq(ks__queue_flush_unschedulable(q), 1);
    cr_expect_eq(counter(t.m.queue_incoming_pods, "active", "UnschedulableTimeout", NULL), 1);
    cr_expect_eq(counter(t.m.queue_incoming_entities, "active", "UnschedulableTimeout", "pod"), 1);
    /* A node it fits on arrives while it sits in activeQ: the event does not move it, the flush
     * did, and the next cycle binds it. */
    node("huge", "200");
    drain();
    cr_expect_eq(counter(t.m.schedule_attempts, "scheduled", PROFILE, NULL), 4);
    cr_expect_eq(ks__metrics_value(t.m.pod_scheduled_after_flush_solo), 1);
}

/* A flushed pod that fails again forgets the flush: bound later by an event, it does not count. */
Test(sched_metrics, a_failure_after_the_flush_forgets_it)
{
    three_fit_one_does_not();
    ks_queue *q = ks__scheduler_queue(t.s);
    t.now += 5 * 60 * SEC + 1;
    cr_assert_eq(ks__queue_flush_unschedulable(q), 1);
    drain(); /* fails again */
    cr_expect_eq(counter(t.m.schedule_attempts, "unschedulable", PROFILE, NULL), 2);
    t.now += 20 * SEC;
    node("huge", "200");
    drain();
    cr_expect_eq(counter(t.m.schedule_attempts, "scheduled", PROFILE, NULL), 4);
    cr_expect_eq(ks__metrics_value(t.m.pod_scheduled_after_flush_solo), 0);
}

/* The families as rendered: TYPE lines and upstream's bucket bounds. */
Test(sched_metrics, render_has_types_and_bounds)
{
    three_fit_one_does_not();
    char *text = NULL;
    cr_assert_eq(ks__metrics_render(t.r, &text, NULL), 0);
    static const char *const want[] = {
        "# TYPE scheduler_schedule_attempts_total counter\n",
        "# TYPE scheduler_scheduling_attempt_duration_seconds histogram\n",
        "# TYPE scheduler_framework_extension_point_duration_seconds histogram\n",
        "# TYPE scheduler_plugin_execution_duration_seconds histogram\n",
        "# TYPE scheduler_plugin_evaluation_total counter\n",
        "# TYPE scheduler_queue_incoming_pods_total counter\n",
        "# TYPE scheduler_unschedulable_pods gauge\n",
        "# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\n",
        "# TYPE scheduler_goroutines gauge\n",
        "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Bind\","
        "profile=\"default-scheduler\",status=\"Success\",le=\"0.0001\"}",
        "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Bind\","
        "profile=\"default-scheduler\",status=\"Success\",le=\"0.2048\"}",
        "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"Bind\","
        "profile=\"default-scheduler\",status=\"Success\"} 3\n",
        "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Bind\",plugin="
        "\"DefaultBinder\","
        "status=\"Success\",le=\"1.5000000000000002e-05\"}",
        "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
        "\"scheduled\","
        "le=\"16.384\"}",
        "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"5242.88\"}",
        "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} "
        "1\n",
        "scheduler_queue_incoming_pods_total{event=\"UnscheduledPodAdd\",queue=\"active\"} 4\n",
        "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"default-scheduler\"} "
        "1\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect_not_null(strstr(text, want[i]), "missing from /metrics: %s", want[i]);
    free(text);
}

#define WAITER_CONFIG(ms)                                                                          \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"                                                           \
    "profiles:\n"                                                                                  \
    "- schedulerName: default-scheduler\n"                                                         \
    "  plugins:\n"                                                                                 \
    "    permit: {enabled: [{name: Waiter}]}\n"                                                    \
    "  pluginConfig:\n"                                                                            \
    "  - name: Waiter\n"                                                                           \
    "    args: {timeoutMs: " #ms "}\n"

Test(sched_metrics, permit_wait_allowed)
{
    start(WAITER_CONFIG(60000));
    node("n1", "2");
    pod("w", "1");
    cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
    ks_metric_family *f = t.m.framework_extension_point_duration;
    cr_expect_eq(hcount(f, "Permit", "Wait", PROFILE), 1);
    cr_expect_eq(ks_permit_allow("uid-w", "Waiter"), 0);
    ks__scheduler_wait_bindings(t.s);
    cr_expect_eq(t.binds, 1);
    cr_expect_eq(hcount(t.m.permit_wait_duration, "Success", NULL, NULL), 1);
    cr_expect_eq(counter(t.m.schedule_attempts, "scheduled", PROFILE, NULL), 1);
}

Test(sched_metrics, permit_wait_timed_out)
{
    start(WAITER_CONFIG(50));
    node("n1", "2");
    pod("w", "1");
    cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
    ks__scheduler_wait_bindings(t.s); /* the permit timer rejects it after 50 ms */
    cr_expect_eq(t.binds, 0);
    cr_expect_eq(hcount(t.m.permit_wait_duration, "Unschedulable", NULL, NULL), 1);
    cr_expect_geq(ks__metrics_sum(KS_METRICS_WITH(t.m.permit_wait_duration, "Unschedulable")),
                  0.05);
    cr_expect_eq(counter(t.m.schedule_attempts, "unschedulable", PROFILE, NULL), 1);
    cr_expect_eq(hcount(t.m.framework_extension_point_duration, "Unreserve", "Success", PROFILE),
                 1);
    cr_expect_eq(counter(t.m.unschedulable_pods, "Waiter", PROFILE, NULL), 1);
}

/* An assigned pod's update that changes its labels and lowers its request is two events, as
 * upstream's PodSchedulingPropertiesChange list: the scale-down one (NodeResourcesFit's) moves the
 * pod it rejected, and is counted under its own label. */
Test(sched_metrics, assigned_pod_update_is_one_event_per_change)
{
    start(NULL);
    node("n1", "2");
    const char *bound =
        "{'metadata':{'name':'b','namespace':'default','uid':'uid-b','labels':{'app':"
        "'%s'}},'spec':{'nodeName':'n1','containers':[{'name':'c','image':'i',"
        "'resources':{'requests':{'cpu':'%s'}}}]}}";
    char json[512];
    snprintf(json, sizeof(json), bound, "x", "1500m");
    ks_pod *old = th_pod(json);
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, old), 0);
    pod("big", "1");
    drain();
    cr_assert_eq(counter(t.m.unschedulable_pods, "NodeResourcesFit", PROFILE, NULL), 1);
    snprintf(json, sizeof(json), bound, "y", "500m");
    ks_pod *smaller = th_pod(json);
    cr_assert_eq(ks__scheduler_on_pod_update(t.s, old, smaller, 1), 0);
    ks_metric_family *in = t.m.queue_incoming_pods;
    cr_expect_eq(counter(in, "backoff", "AssignedPodUpdatePodScaleDown", NULL), 1);
    cr_expect_eq(hcount(t.m.queueing_hint_execution_duration, "NodeResourcesFit",
                        "AssignedPodUpdatePodScaleDown", "Queue"),
                 1);
    t.now += 2 * SEC;
    ks__queue_flush_backoff(ks__scheduler_queue(t.s));
    drain();
    cr_expect_eq(t.binds, 1, "big fits next to the smaller pod");
}
