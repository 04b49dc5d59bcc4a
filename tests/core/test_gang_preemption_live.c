/*
 * Workload-aware preemption as a live source sees it (victims_leave_on_delete_event, as the API
 * source): with GenericWorkload on and the default profile, a gang that cannot be placed evicts
 * its victims through the source's preempted_group with the PodGroup's uid (upstream's executor
 * for a podgroup preemptor), the victims stay counted on their nodes until their deletion
 * arrives, the members go back nominated with upstream's messages, and the gang is bound once
 * the victims are gone, without a second preemption.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api/intern.h"
#include "api/objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/cache.h"
#include "sched/features.h"
#include "sched/host_api.h"
#include "sched/sched_families.h"
#include "sched/scheduler.h"
#include "util/metrics.h"

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    int binds, group_evictions, in_memory, pod_evictions, failed, reports, reported_victims,
        nominations;
    char victims[256], uid[64], member[64];
    char messages[4][512], nominated[4][64], failed_pod[4][64];
    pthread_mutex_t mu;
    ks_metrics *r; /* GenericWorkload's families are registered: the gate is on */
    ks_sched_metrics m;
} W;

static ks_code source_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)pod, (void)node, (void)st;
    pthread_mutex_lock(&W.mu);
    W.binds++;
    pthread_mutex_unlock(&W.mu);
    return KS_SUCCESS;
}

static void source_failed(void *ctx, const ks_pod *pod, const char *reason, const char *message,
                          ks_sym nominated, const char *profile)
{
    (void)ctx, (void)reason, (void)profile;
    pthread_mutex_lock(&W.mu);
    int i = W.failed++ % 4;
    snprintf(W.failed_pod[i], sizeof(W.failed_pod[i]), "%s", pod->key);
    snprintf(W.messages[i], sizeof(W.messages[i]), "%s", message);
    snprintf(W.nominated[i], sizeof(W.nominated[i]), "%s",
             nominated == KS_SYM_ABSENT ? "" : ks__sym_str(nominated));
    pthread_mutex_unlock(&W.mu);
}

static void source_evict(void *ctx, const ks_pod *victim, const ks_pod *preemptor, ks_sym node)
{
    (void)ctx, (void)victim, (void)preemptor, (void)node;
    W.pod_evictions++;
}

static void source_preempted_group(void *ctx, const ks_pod *victim, const ks_pod *member,
                                   const char *pg_uid, int in_memory)
{
    (void)ctx;
    W.group_evictions++;
    W.in_memory += in_memory;
    size_t l = strlen(W.victims);
    snprintf(W.victims + l, sizeof(W.victims) - l, "%s%s", l ? "," : "", victim->key);
    snprintf(W.uid, sizeof(W.uid), "%s", pg_uid);
    snprintf(W.member, sizeof(W.member), "%s", member->key);
}

/* The observer: one report of the preemption (the victims histogram), the other members'
 * nominations apart. */
static void obs_preempted(void *ctx, uint64_t seq, const ks_pod *pod, ks_sym node,
                          ks_pod *const *victims, size_t nvictims)
{
    (void)ctx, (void)seq, (void)pod, (void)node, (void)victims;
    W.reports++;
    W.reported_victims += (int)nvictims;
}

static void obs_nominated(void *ctx, uint64_t seq, const ks_pod *pod, ks_sym node)
{
    (void)ctx, (void)seq, (void)pod, (void)node;
    W.nominations++;
}

static void setup(void)
{
    char err[1024] = "";
    memset(&W, 0, sizeof(W));
    pthread_mutex_init(&W.mu, NULL);
    ks__host_init();
    cr_assert_eq(ks__feature_gates_set("GenericWorkload=true", err, sizeof(err)), 0, "%s", err);
    W.reg = th_registry_new();
    cr_assert_eq(ks__config_default(W.reg, &W.cfg, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(W.cfg, W.reg, &W.plans, err, sizeof(err)), 0, "%s", err);
    W.r = ks__metrics_create();
    cr_assert_eq(ks__metrics_register_scheduler(W.r, &W.m), 0);
    ks_scheduler_opts o = {.metrics = &W.m,
                           .cfg = W.cfg,
                           .plans = W.plans,
                           .seed = 1,
                           .binding_workers = 2,
                           .source = {.bind = source_bind,
                                      .failed = source_failed,
                                      .evict = source_evict,
                                      .preempted_group = source_preempted_group},
                           .observer = {.preempted = obs_preempted, .nominated = obs_nominated},
                           .victims_leave_on_delete_event = 1};
    cr_assert_eq(ks__scheduler_new(&o, &W.s, err, sizeof(err)), 0, "%s", err);
}

static void teardown(void)
{
    ks__scheduler_free(W.s);
    ks__config_plans_free(W.plans, W.cfg->nprofiles);
    ks__config_free(W.cfg);
    ks__registry_free(W.reg);
    ks__metrics_destroy(W.r);
    pthread_mutex_destroy(&W.mu);
}

/* A pod group attempt's count by result, for the default profile. */
static double group_attempts(const char *result)
{
    return ks__metrics_value(
        KS_METRICS_WITH(W.m.podgroup_schedule_attempts, result, "default-scheduler"));
}

TestSuite(gang_preemption_live, .init = setup, .fini = teardown);

static void add_node(const char *name)
{
    char json[512], err[256];
    ks_node *node;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":\"%s\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"1\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
             name, name);
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__node_from_json(o, &node, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_node_add(W.s, node), 0);
    ks__node_unref(node);
}

/* A pod of 800m: bound to node ("" pending), priority, in group ("" none). refs = 1. */
static ks_pod *mkpod(const char *name, const char *node, int priority, const char *group)
{
    char json[1024], err[256], sg[128] = "";
    ks_pod *pod;
    if (group[0])
        snprintf(sg, sizeof(sg), "\"schedulingGroup\":{\"podGroupName\":\"%s\"},", group);
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"default\",\"uid\":\"uid-%s\"},\"spec\":{\"nodeName\":\"%s\",\"priority\":%d,%s"
             "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"800m\"}}}]}}",
             name, name, node, priority, sg);
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "bad test JSON: %s", json);
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_pod_add(W.s, pod), 0, "add %s", name);
    return pod;
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

static const char *message_of(const char *key)
{
    for (int i = W.failed - 1; i >= 0 && i >= W.failed - 4; i--)
        if (!strcmp(W.failed_pod[i % 4], key))
            return W.messages[i % 4];
    return "";
}

static const char *nominated_of(const char *key)
{
    for (int i = W.failed - 1; i >= 0 && i >= W.failed - 4; i--)
        if (!strcmp(W.failed_pod[i % 4], key))
            return W.nominated[i % 4];
    return "";
}

Test(gang_preemption_live, the_gang_evicts_as_a_podgroup_and_is_bound_once_the_victims_are_gone)
{
    add_node("n1");
    add_node("n2");
    ks_pod *low1 = mkpod("low1", "n1", 0, ""), *low2 = mkpod("low2", "n2", 0, "");
    char err[512], label[256];
    cJSON *pg = cJSON_Parse("{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
                            "\"metadata\":{\"name\":\"g\",\"namespace\":\"default\",\"uid\":"
                            "\"pg-uid\"},\"spec\":{\"priority\":100,\"schedulingPolicy\":{\"gang\":"
                            "{\"minCount\":2}}}}");
    cr_assert_eq(ks__scheduler_apply_podgroup(W.s, pg, 0, 0, label, err, sizeof(err)), 0, "%s",
                 err);
    cJSON_Delete(pg);
    ks_pod *m1 = mkpod("m1", "", 100, "g"), *m2 = mkpod("m2", "", 100, "g");

    /* one PodGroup cycle: m1 fits nowhere, m2 is never tried, the preemption finds room */
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    ks__scheduler_wait_bindings(W.s);
    cr_expect_eq(W.group_evictions, 2);
    cr_expect_eq(W.in_memory, 0, "bound victims are deleted, not rejected in memory");
    cr_expect_eq(W.pod_evictions, 0, "a pod group preemptor is not reported as a pod");
    cr_expect_str_eq(W.victims, "default/low1,default/low2");
    cr_expect_str_eq(W.uid, "pg-uid", "the Preempted event names the PodGroup's uid");
    cr_expect_eq(node_cpu("n1"), 800, "the victims stay counted until their deletion arrives");
    cr_expect_eq(node_cpu("n2"), 800);
    cr_assert_eq(W.failed, 2);
    cr_expect_str_eq(message_of("default/m1"), "0/2 nodes are available: 2 Insufficient cpu.");
    cr_expect_str_eq(message_of("default/m2"),
                     "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining");
    cr_expect_str_neq(nominated_of("default/m1"), "", "m1 is nominated");
    cr_expect_str_neq(nominated_of("default/m2"), "", "m2 is nominated");
    cr_expect_str_neq(nominated_of("default/m1"), nominated_of("default/m2"));
    cr_expect_eq(W.binds, 0);
    cr_expect_eq(W.reports, 1, "one preemption, observed once");
    cr_expect_eq(W.reported_victims, 2);
    cr_expect_eq(W.nominations, 1, "the other member's nomination");
    /* GenericWorkload's metrics, as upstream's podGroupCycle and executor record them */
    cr_expect_eq(group_attempts("waiting_on_preemption"), 1);
    cr_expect_eq(group_attempts("unschedulable"), 0);
    cr_expect_eq(ks__metrics_count(KS_METRICS_WITH(W.m.podgroup_scheduling_attempt_duration,
                                                   "waiting_on_preemption", "default-scheduler")),
                 1);
    cr_expect_eq(ks__metrics_count(KS_METRICS_SOLO(W.m.podgroup_scheduling_algorithm_duration)), 1);
    cr_expect_eq(ks__metrics_value(KS_METRICS_WITH(W.m.workload_preemption_attempts, "Success")),
                 1);
    cr_expect_eq(ks__metrics_count(KS_METRICS_SOLO(W.m.workload_preemption_victims)), 1);
    cr_expect_eq(ks__metrics_sum(KS_METRICS_SOLO(W.m.workload_preemption_victims)), 2);
    cr_expect_eq(ks__metrics_count(W.m.preemption_victims_solo), 0, "not a pod's preemption");
    cr_expect_eq(ks__metrics_count(
                     KS_METRICS_WITH(W.m.preemption_evaluation_duration, "podgroup", "Success")),
                 1);
    cr_expect_eq(
        ks__metrics_count(KS_METRICS_WITH(W.m.preemption_workload_disruptions, "podgroup")), 0,
        "the victims are single pods, no pod group is disrupted");

    /* the deletions arrive: the gang moves and is bound whole, with no second preemption */
    cr_assert_eq(ks__scheduler_on_pod_delete(W.s, low1), 0);
    cr_assert_eq(ks__scheduler_on_pod_delete(W.s, low2), 0);
    for (int i = 0; i < 50 && W.binds < 2; i++) {
        ks__queue_flush_backoff(ks__scheduler_queue(W.s));
        if (ks__scheduler_schedule_one(W.s, 0) == 1)
            ks__scheduler_wait_bindings(W.s);
        else
            usleep(100 * 1000); /* backoff is real time */
    }
    cr_expect_eq(W.binds, 2, "both members bound");
    cr_expect_eq(W.group_evictions, 2, "no second preemption");
    cr_expect_eq(group_attempts("scheduled"), 1);
    cr_expect_eq(node_cpu("n1"), 800);
    cr_expect_eq(node_cpu("n2"), 800);
    ks__pod_unref(low1);
    ks__pod_unref(low2);
    ks__pod_unref(m1);
    ks__pod_unref(m2);
}

/* upstream prepareCandidate: a victim whose graceful deletion already started gets no second API
 * call (and no event); the others are evicted. */
Test(gang_preemption_live, a_victim_already_terminating_is_not_evicted_again)
{
    add_node("n1");
    add_node("n2");
    ks_pod *low1 = mkpod("low1", "n1", 0, ""), *low2 = mkpod("low2", "n2", 0, "");
    ks_pod *leaving = ks__pod_with_node(low1, ks__intern("n1"));
    cr_assert_not_null(leaving);
    leaving->terminating = 1;
    cr_assert_eq(ks__scheduler_on_pod_update(W.s, low1, leaving, 1), 0);
    char err[512], label[256];
    cJSON *pg = cJSON_Parse("{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
                            "\"metadata\":{\"name\":\"g\",\"namespace\":\"default\",\"uid\":"
                            "\"pg-uid\"},\"spec\":{\"priority\":100,\"schedulingPolicy\":{\"gang\":"
                            "{\"minCount\":2}}}}");
    cr_assert_eq(ks__scheduler_apply_podgroup(W.s, pg, 0, 0, label, err, sizeof(err)), 0, "%s",
                 err);
    cJSON_Delete(pg);
    ks_pod *m1 = mkpod("m1", "", 100, "g"), *m2 = mkpod("m2", "", 100, "g");
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    ks__scheduler_wait_bindings(W.s);
    cr_expect_eq(W.reported_victims, 2, "both are the preemption's victims");
    cr_expect_eq(W.group_evictions, 1, "only the one not yet terminating is evicted");
    cr_expect_str_eq(W.victims, "default/low2");
    ks__pod_unref(low1);
    ks__pod_unref(leaving);
    ks__pod_unref(low2);
    ks__pod_unref(m1);
    ks__pod_unref(m2);
}
