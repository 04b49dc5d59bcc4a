/*
 * The binding pool grows when every binder is busy: a PreBind that waits (for a volume to be
 * provisioned, up to bindTimeoutSeconds) must not hold back the binding of other pods, as upstream
 * runs each binding cycle in its own goroutine. And ks_binding_sleep ends as soon as the pod
 * being bound is deleted (upstream checkBindings' "pod does not exist any more"), or when a
 * preemptor cancels the pod in PreBind (v1.37's PodInPreBind.CancelPod).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "api/objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/host_api.h"
#include "sched/scheduler.h"
#include "sched/scheduler_int.h"

/* Pods named slow-*: PreBind waits up to 30 s, as a PreBind polling a provisioner does. */
static ks_code sleeper_pre_bind(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                ks_status *st)
{
    (void)self, (void)node;
    if (strncmp(ks_sym_str(ks_pod_name(pod)), "slow-", 5) != 0)
        return KS_SUCCESS;
    int rc = ks_binding_sleep(cycle, 30LL * 1000000000LL);
    if (rc == KS_ENOTFOUND) {
        ks_status_reason(st, "pod gone");
        return KS_ERROR;
    }
    if (rc == KS_ECANCELED) {
        ks_status_reason(st, "context canceled");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

static const ks_plugin_desc sleeper_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Sleeper", .pre_bind = sleeper_pre_bind};

static struct {
    pthread_mutex_t mu;
    char bound[8][64];
    int nbound;
    char result_slow[256];
} W;

static ks_code source_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)node, (void)st;
    pthread_mutex_lock(&W.mu);
    if (W.nbound < 8)
        snprintf(W.bound[W.nbound++], sizeof(W.bound[0]), "%s", ks__sym_str(pod->name));
    pthread_mutex_unlock(&W.mu);
    return KS_SUCCESS;
}

static void obs_bind(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                     const char *result, ks_sym node, const char *message)
{
    (void)ctx, (void)seq, (void)profile, (void)node;
    pthread_mutex_lock(&W.mu);
    if (strncmp(ks__sym_str(pod->name), "slow-", 5) == 0)
        snprintf(W.result_slow, sizeof(W.result_slow), "%s: %s", result, message ? message : "");
    pthread_mutex_unlock(&W.mu);
}

static ks_pod *mk(const char *name, const char *node)
{
    char json[512], err[256];
    ks_pod *pod;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"nodeName\":\"%s\","
             "\"containers\":[{\"name\":\"c\"}]}}",
             name, name, node);
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    return pod;
}

static int bound(const char *name)
{
    pthread_mutex_lock(&W.mu);
    int found = 0;
    for (int i = 0; i < W.nbound; i++)
        found |= strcmp(W.bound[i], name) == 0;
    pthread_mutex_unlock(&W.mu);
    return found;
}

/* Polls cond for up to 5 s. */
static int within_5s(int (*cond)(const char *), const char *arg)
{
    for (int i = 0; i < 500; i++) {
        if (cond(arg))
            return 1;
        struct timespec d = {0, 10 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    return 0;
}

static int slow_finished(const char *unused)
{
    (void)unused;
    pthread_mutex_lock(&W.mu);
    int done = W.result_slow[0] != '\0';
    pthread_mutex_unlock(&W.mu);
    return done;
}

TestSuite(binding_pool, .init = th_init, .fini = th_fini);

static struct {
    ks_registry *reg;
    ks_config *cfg;
    ks_profile_plan *plans;
} E;

/* A scheduler with one binder, the Sleeper at PreBind, and node n1. */
static ks_scheduler *world(void)
{
    char err[1024] = "";
    memset(&W, 0, sizeof(W));
    pthread_mutex_init(&W.mu, NULL);
    ks__host_init();
    ks_registry *reg = th_registry_new();
    ks_config *cfg = NULL;
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__registry_add(reg, &sleeper_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(reg,
                                        "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                        "kind: KubeSchedulerConfiguration\n"
                                        "profiles:\n- schedulerName: default-scheduler\n"
                                        "  plugins:\n    preBind: {enabled: [{name: Sleeper}]}\n",
                                        "test.yaml", &cfg, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(ks__config_plan(cfg, reg, &plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler *s;
    ks_scheduler_opts o = {.cfg = cfg,
                           .plans = plans,
                           .seed = 1,
                           .binding_workers = 1, /* one binder: the slow pod takes it */
                           .source = {.ctx = &W, .bind = source_bind},
                           .observer = {&W, NULL, obs_bind}};
    cr_assert_eq(ks__scheduler_new(&o, &s, err, sizeof(err)), 0, "%s", err);
    cJSON *nj = cJSON_Parse("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{"
                            "\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}");
    ks_node *node;
    cr_assert_eq(ks__node_from_json(nj, &node, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(nj);
    cr_assert_eq(ks__scheduler_on_node_add(s, node), 0);
    ks__node_unref(node);
    E.reg = reg;
    E.cfg = cfg;
    E.plans = plans;
    return s;
}

static void world_free(ks_scheduler *s)
{
    ks__scheduler_free(s);
    ks__config_plans_free(E.plans, E.cfg->nprofiles);
    ks__config_free(E.cfg);
    ks__registry_free(E.reg);
    pthread_mutex_destroy(&W.mu);
}

Test(binding_pool, a_waiting_pre_bind_holds_back_no_other_binding_and_ends_when_its_pod_goes)
{
    ks_scheduler *s = world();
    ks_pod *slow = mk("slow-1", ""), *fast = mk("fast-1", "");
    cr_assert_eq(ks__scheduler_on_pod_add(s, slow), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    cr_assert_eq(ks__scheduler_on_pod_add(s, fast), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    cr_expect(within_5s(bound, "fast-1"),
              "fast-1 was not bound while slow-1's PreBind waits (the pool did not grow)");
    cr_expect(!bound("slow-1"), "slow-1 bound before its PreBind ended");

    /* the pod is deleted: its PreBind's sleep ends at once, its binding cycle fails */
    ks__scheduler_on_pod_delete(s, slow);
    cr_expect(within_5s(slow_finished, NULL), "slow-1's PreBind still sleeps after its delete");
    cr_expect_str_eq(W.result_slow, "Error: running PreBind plugin \"Sleeper\": pod gone");

    ks__pod_unref(slow);
    ks__pod_unref(fast);
    world_free(s);
}

/* A preemptor takes a victim in PreBind in memory: its binding cycle fails with the cause. */
Test(binding_pool, a_pod_in_pre_bind_is_cancelled_by_a_preemptor)
{
    ks_scheduler *s = world();
    ks_pod *slow = mk("slow-1", "");
    cr_assert_eq(ks__scheduler_on_pod_add(s, slow), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    int in_prebind = 0;
    for (int i = 0; i < 500 && !in_prebind; i++) {
        in_prebind = ks__binding_cancel_prebind(s, "uid-slow-1", "preempted by DefaultPreemption");
        if (!in_prebind) {
            struct timespec d = {0, 10 * 1000 * 1000};
            nanosleep(&d, NULL);
        }
    }
    cr_assert(in_prebind, "slow-1 never counted as in PreBind");
    cr_expect(within_5s(slow_finished, NULL), "slow-1's PreBind still sleeps after the cancel");
    /* upstream: the plugin's "context canceled" gives way to the cancel's cause */
    cr_expect_str_eq(W.result_slow,
                     "Error: running PreBind plugin \"Sleeper\": preempted by DefaultPreemption");
    cr_expect(!bound("slow-1"));
    /* the result is reported before the job leaves the pool: wait for the pool to drain (the
     * check raced it, about one CI run in twenty) */
    ks__scheduler_wait_bindings(s);
    cr_expect_eq(ks__binding_cancel_prebind(s, "uid-slow-1", "again"), 0,
                 "a finished binding cycle cannot be cancelled");
    ks__pod_unref(slow);
    world_free(s);
}

/* Shutdown ends a PreBind's wait at once (upstream's cancelled context), so stopping does not
 * wait bindTimeoutSeconds for the bindings in flight. */
Test(binding_pool, shutdown_ends_a_waiting_pre_bind)
{
    ks_scheduler *s = world();
    ks_pod *slow = mk("slow-1", "");
    cr_assert_eq(ks__scheduler_on_pod_add(s, slow), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    struct timespec d = {0, 200 * 1000 * 1000};
    nanosleep(&d, NULL); /* let it reach its sleep */
    ks__scheduler_stopping(s);
    cr_expect(within_5s(slow_finished, NULL), "slow-1's PreBind still sleeps after the stop");
    cr_expect_str_eq(W.result_slow, "Error: running PreBind plugin \"Sleeper\": context canceled");
    ks__pod_unref(slow);
    world_free(s);
}
