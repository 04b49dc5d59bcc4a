/*
 * Live mode's configuration reloader (core/live/reloader.h) with a scheduler in memory: a change
 * of the watched file reloads (a ConfigMap-style "..data" swap included), an invalid file changes
 * nothing and is counted, SIGHUP reloads an unchanged file, and the settings a reload cannot
 * change are named.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/intern.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "live/reloader.h"
#include "sched/host_api.h"
#include "sched/reload.h"
#include "sched/scheduler.h"
#include "util/metrics.h"

static ks_registry *REG;
static char dir[256];

typedef struct bundle {
    ks_config_bundle b; /* first: the reloader hands this pointer to release */
    int *releases;
} bundle;

static int releases;

static int load(void *ctx, const char *path, ks_config_bundle **out, char *err, size_t errlen)
{
    (void)ctx;
    bundle *b = calloc(1, sizeof(*b));
    int rc = ks__config_load_file(REG, path, &b->b.cfg, err, errlen);
    if (rc == 0)
        rc = ks__config_plan(b->b.cfg, REG, &b->b.plans, err, errlen);
    if (rc != 0) {
        ks__config_free(b->b.cfg);
        free(b);
        return rc;
    }
    *out = &b->b;
    return 0;
}

static void release(void *p)
{
    bundle *b = p;
    ks__config_plans_free(b->b.plans, b->b.cfg->nprofiles);
    ks__config_free(b->b.cfg);
    free(b);
    releases++;
}

static const char *k_cfg = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "parallelism: %d\n"
                           "profiles:\n- schedulerName: %s\n";

static void write_file(const char *path, const char *text)
{
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(rename(tmp, path), 0);
}

static void write_cfg(const char *path, int parallelism, const char *name)
{
    char text[512];
    snprintf(text, sizeof(text), k_cfg, parallelism, name);
    write_file(path, text);
}

static void *loop(void *arg)
{
    ks_scheduler *s = arg;
    while (ks__scheduler_schedule_one(s, 1))
        ;
    return NULL;
}

static int within(int ms, int (*cond)(void *), void *arg)
{
    for (int i = 0; i < ms / 10; i++) {
        if (cond(arg))
            return 1;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return cond(arg);
}

static ks_scheduler *S;
static int gen_is(void *want) { return ks__scheduler_profiles_generation(S) == *(uint64_t *)want; }
static int named(void *name) { return ks__scheduler_profile_index(S, ks__intern(name)) >= 0; }

static ks_metric *metric(ks_metrics *m, const char *name, const char *label_value)
{
    ks_metric_family *f = ks__metrics_find(m, name);
    cr_assert_not_null(f, "%s is not registered", name);
    return label_value ? KS_METRICS_WITH(f, label_value) : KS_METRICS_SOLO(f);
}

TestSuite(reloader, .init = th_init, .fini = th_fini);

Test(reloader, file_changes_reload_an_invalid_file_changes_nothing_and_sighup_reloads)
{
    char err[1024] = "", path[512];
    releases = 0;
    ks__host_init();
    REG = th_registry_new();
    snprintf(dir, sizeof(dir), "/tmp/ks-reloader-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/config.yaml", dir);
    write_cfg(path, 16, "first");
    ks_config_bundle *first;
    cr_assert_eq(load(NULL, path, &first, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts so = {.cfg = first->cfg, .plans = first->plans, .seed = 1};
    cr_assert_eq(ks__scheduler_new(&so, &S, err, sizeof(err)), 0, "%s", err);
    pthread_t t;
    pthread_create(&t, NULL, loop, S);
    ks_metrics *m = ks__metrics_create();
    ks_reloader *r;
    ks_reloader_opts ro = {.path = path,
                           .loader = {NULL, load, release},
                           .sched = S,
                           .running = first->cfg,
                           .metrics = m};
    cr_assert_eq(ks__reloader_start(&ro, &r, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(ks__metrics_value(metric(m, "kubesched_config_generation", NULL)), 1);
    cr_expect_eq(ks__metrics_value(metric(m, "kubesched_config_last_reload_successful", NULL)), 1);

    /* an edit (renamed over): reloaded, the new profile name schedules */
    write_cfg(path, 16, "second");
    uint64_t g2 = 2;
    cr_expect(within(3000, gen_is, &g2), "no reload after the file changed");
    cr_expect(within(1000, named, "second"), "the new profile is not there");
    cr_expect(!named("first"));
    /* the reloader's thread counts the reload after the scheduling thread swapped: wait for it */
    ks_metric *successes = metric(m, "kubesched_config_reloads_total", "success");
    for (int i = 0; i < 300 && ks__metrics_value(successes) < 1; i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    cr_expect_eq(ks__metrics_value(successes), 1);
    cr_expect_eq(ks__metrics_value(metric(m, "kubesched_config_generation", NULL)), 2);
    cr_expect_gt(ks__metrics_value(
                     metric(m, "kubesched_config_last_reload_success_timestamp_seconds", NULL)),
                 1e9);

    /* invalid: nothing changes, counted */
    write_file(path, "apiVersion: kubescheduler.config.k8s.io/v1\n"
                     "kind: KubeSchedulerConfiguration\n"
                     "profiles:\n- schedulerName: third\n  plugins: {score: {enabled: "
                     "[{name: NoSuchPlugin}]}}\n");
    ks_metric *failures = metric(m, "kubesched_config_reloads_total", "failure");
    for (int i = 0; i < 300 && ks__metrics_value(failures) < 1; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    cr_expect_eq(ks__metrics_value(failures), 1, "the invalid file was not counted");
    cr_expect_eq(ks__metrics_value(metric(m, "kubesched_config_last_reload_successful", NULL)), 0);
    cr_expect_eq(ks__scheduler_profiles_generation(S), 2, "an invalid file changed the profiles");
    cr_expect(named("second"));

    /* the ConfigMap way: config.yaml -> ..data/config.yaml, ..data switched to a new directory */
    char d1[600], link[600], cmd[1400];
    snprintf(d1, sizeof(d1), "%s/..2026_v1", dir);
    snprintf(cmd, sizeof(cmd),
             "rm -f '%s' && ln -s ..data/config.yaml '%s' && "
             "ln -sfn ..2026_v1 '%s/..data'",
             path, path, dir);
    cr_assert_eq(mkdir(d1, 0755), 0);
    snprintf(link, sizeof(link), "%s/config.yaml", d1);
    write_cfg(link, 16, "third");
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    uint64_t g3 = 3;
    cr_expect(within(3000, gen_is, &g3), "no reload after the ..data swap");
    cr_expect(named("third"));
    char d2[600];
    snprintf(d2, sizeof(d2), "%s/..2026_v2", dir);
    cr_assert_eq(mkdir(d2, 0755), 0);
    snprintf(link, sizeof(link), "%s/config.yaml", d2);
    write_cfg(link, 16, "fourth");
    snprintf(cmd, sizeof(cmd),
             "ln -sfn ..2026_v2 '%s/..data_tmp' && mv -Tf '%s/..data_tmp' '%s/..data'", dir, dir,
             dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    uint64_t g4 = 4;
    cr_expect(within(3000, gen_is, &g4), "no reload after the second ..data swap");
    cr_expect(named("fourth"));

    /* SIGHUP with the file unchanged reloads too (a replaced .so) */
    ks__reloader_trigger(r);
    uint64_t g5 = 5;
    cr_expect(within(3000, gen_is, &g5), "SIGHUP did not reload");
    /* nothing reloads while nothing changes */
    nanosleep(&(struct timespec){1, 500 * 1000 * 1000}, NULL);
    cr_expect_eq(ks__scheduler_profiles_generation(S), 5, "an unchanged file was reloaded");
    cr_expect_eq(ks__metrics_value(metric(m, "kubesched_config_reloads_total", "success")), 4);

    ks__reloader_stop(r);
    ks__queue_close(ks__scheduler_queue(S));
    pthread_join(t, NULL);
    ks__scheduler_free(S);
    cr_expect_eq(releases, 4, "every reloaded configuration is released once");
    release(first);
    ks__metrics_destroy(m);
    ks__registry_free(REG);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(reloader, the_settings_a_reload_cannot_change_are_named)
{
    char err[1024] = "", out[512];
    ks__host_init();
    REG = th_registry_new();
    ks_config *a, *b;
    cr_assert_eq(ks__config_load_string(REG,
                                        "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                        "kind: KubeSchedulerConfiguration\n",
                                        "a.yaml", &a, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(
        ks__config_load_string(REG,
                               "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "parallelism: 8\npodMaxBackoffSeconds: 20\n"
                               "leaderElection: {leaseDuration: 30s, resourceName: other}\n"
                               "clientConnection: {qps: 99}\n"
                               "percentageOfNodesToScore: 30\n",
                               "b.yaml", &b, err, sizeof(err)),
        0, "%s", err);
    ks__reload_fixed_changes(a, b, out, sizeof(out));
    cr_expect_str_eq(out, "leaderElection.leaseDuration, leaderElection.resourceName, "
                          "clientConnection.qps, parallelism, podMaxBackoffSeconds");
    ks__reload_fixed_changes(a, a, out, sizeof(out));
    cr_expect_str_eq(out, "");
    ks__config_free(a);
    ks__config_free(b);
    ks__registry_free(REG);
}
