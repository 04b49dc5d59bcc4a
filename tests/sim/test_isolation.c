/*
 * Process isolation of out-of-tree plugins (kubeschedIsolation: process, core/sched/isolation.h),
 * end to end in `kubesched simulate`:
 *   - an isolated plugin decides exactly as the same plugin in-process (IsoDemo, a stateful
 *     plugin on PreFilter, Filter, PreScore, Score and NormalizeScore), on a cluster over 100
 *     nodes (node sampling) with preemption (Filter on copies of nodes: the one-shot children);
 *   - a crash or a hang in the isolated plugin costs that pod's attempt only: an Error naming the
 *     plugin, its .so, the point, the pod and the node; the other pods are decided as usual; the
 *     failure policy takes the plugin out after the error budget (fail: Errors; ignore: the
 *     profile runs without it);
 *   - a plugin that leaks memory leaks it into its children, not into kubesched;
 *   - the configuration's checks of the three keys.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simrun.h"

#define FAULTS KS_SOURCE_DIR "/tests/fixtures/sim/plugin_faults.yaml"

/* A config file with one profile that enables plugin (a .so at so) with these args. */
static void write_config(char *path, const char *plugin, const char *so, const char *args)
{
    strcpy(path, "/tmp/ks-iso-cfg-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            "profiles:\n"
            "- schedulerName: default-scheduler\n"
            "  plugins:\n"
            "    multiPoint:\n"
            "      enabled:\n"
            "      - name: %s\n"
            "        weight: 3\n"
            "  pluginConfig:\n"
            "  - name: %s\n"
            "    args: {kubeschedPluginPath: %s%s%s}\n",
            plugin, plugin, so, args[0] ? ", " : "", args);
    fclose(f);
}

/* 150 nodes of 1-4 CPUs in 3 zones, 40 pods already running at priority 10, then 150 pending
 * pods: some restricted to one node by IsoDemo's PreFilter, some at priority 1000 once the
 * cluster is full (preemption, nominated nodes). Deterministic. */
static void write_cluster(char *path)
{
    strcpy(path, "/tmp/ks-iso-cluster-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    unsigned seed = 7;
    for (int i = 0; i < 150; i++)
        fprintf(f,
                "apiVersion: v1\nkind: Node\nmetadata: {name: node-%03d, labels: "
                "{kubernetes.io/hostname: node-%03d, topology.kubernetes.io/zone: zone-%d}}\n"
                "status: {allocatable: {cpu: \"%d\", memory: 32Gi, pods: \"110\"}}\n---\n",
                i, i, i % 3, 1 + (int)(rand_r(&seed) % 4));
    for (int i = 0; i < 40; i++)
        fprintf(f,
                "apiVersion: v1\nkind: Pod\nmetadata: {name: run-%03d, namespace: default}\n"
                "spec: {nodeName: node-%03d, priority: 10, containers: [{name: c, image: x, "
                "resources: {requests: {cpu: 900m}}}]}\n"
                "status: {phase: Running, startTime: \"2024-01-01T00:00:00Z\"}\n---\n",
                i, (i * 7) % 150);
    for (int i = 0; i < 150; i++) {
        char labels[96] = "";
        if (i % 10 == 3)
            snprintf(labels, sizeof(labels), ", labels: {isodemo/only: node-%03d}",
                     (int)(rand_r(&seed) % 150));
        fprintf(f,
                "apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%03d, namespace: default%s}\n"
                "spec: {priority: %d, containers: [{name: c, image: x, resources: {requests: "
                "{cpu: %dm}}}]}\n---\n",
                i, labels, i >= 120 ? 1000 : 10, 500 + (int)(rand_r(&seed) % 4) * 500);
    }
    fclose(f);
}

static char *simulate(const char *cluster, const char *config, const char *flags, int *rc,
                      char *err, size_t errlen)
{
    char args[1024], *out;
    snprintf(args, sizeof(args), "simulate --cluster %s --config %s %s", cluster, config, flags);
    *rc = sim_run(args, &out, err, errlen);
    return out;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

Test(isolation, decisions_equal_the_in_process_plugin)
{
    char cluster[64], in_proc[64], isolated[64], err[8192];
    write_cluster(cluster);
    write_config(in_proc, "IsoDemo", FIX_ISODEMO, "kubeschedIsolation: none");
    write_config(isolated, "IsoDemo", FIX_ISODEMO, "kubeschedIsolation: process");
    int rc;
    char *a = simulate(cluster, in_proc, "--output json --explain", &rc, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    char *b = simulate(cluster, isolated, "--output json --explain", &rc, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    /* the run is not trivial: pods placed, turned away by IsoDemo's Filter and PreFilter, and
     * preemption with nominations */
    cr_assert_gt(count(a, "\"result\":\"Scheduled\""), 100);
    cr_assert_gt(count(a, "rejected by IsoDemo"), 0);
    cr_assert_gt(count(a, "didn't satisfy plugin(s) [IsoDemo]"), 0);
    cr_assert_gt(count(a, "\"nominatedNode\":\"node-"), 0, "no preemption in the run");
    cr_assert_str_eq(a, b, "the isolated plugin decided differently");
    cr_assert_eq(strstr(err, "isolation]"), NULL, "%s", err);
    free(a);
    free(b);
    unlink(cluster);
    unlink(in_proc);
    unlink(isolated);
}

/* The Faulty fixture (tests/loader/fixtures/faulty.c), isolated, in mode; extra args. */
static char *faulty(const char *mode, const char *extra, int *rc, char *err, size_t errlen,
                    double *seconds)
{
    char cfg[64], args[256];
    snprintf(args, sizeof(args), "mode: %s, kubeschedIsolation: process%s", mode, extra);
    write_config(cfg, "Faulty", FIX_FAULTY, args);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *out = simulate(FAULTS, cfg, "--output json", rc, err, errlen);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (seconds)
        *seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    unlink(cfg);
    return out;
}

/* The others are decided as usual; the output is valid JSON. */
static cJSON *check_others(const char *out)
{
    cJSON *doc = cJSON_Parse(out);
    cr_assert_not_null(doc, "not JSON: %s", out);
    const char *pods[] = {"p1", "p2", "p3"};
    for (size_t i = 0; i < 3; i++)
        cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", pods[i]), "result"), "Scheduled",
                         "%s", pods[i]);
    return doc;
}

static const char *first_boom_message(const cJSON *doc)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        if (!strcmp(sim_field(it, "name"), "boom"))
            return sim_field(it, "message");
    }
    cr_assert_fail("no entry for boom");
    return NULL;
}

Test(isolation, a_crash_costs_the_attempt_and_names_plugin_point_pod_node)
{
    const char *modes[][2] = {{"segv", "SIGSEGV"}, {"abort", "SIGABRT"}, {"fpe", "SIGFPE"}};
    for (size_t m = 0; m < 3; m++) {
        int rc;
        char err[16384];
        char *out = faulty(modes[m][0], "", &rc, err, sizeof(err), NULL);
        cr_assert_eq(rc, 0, "%s: the scheduler itself failed (%d): %s", modes[m][0], rc, err);
        cJSON *doc = check_others(out);
        char want[512];
        snprintf(want, sizeof(want),
                 "running \"Faulty\" filter plugin: plugin \"Faulty\" (isolated, %s) crashed with "
                 "%s at Filter, pod default/boom, node node-",
                 FIX_FAULTY, modes[m][1]);
        const char *msg = first_boom_message(doc);
        cr_expect(msg && strstr(msg, want) == msg, "want <%s>, got <%s>", want, msg);
        cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", "boom"), "result"), "Error");
        cr_expect(strstr(err, "(failure 1 of 3 allowed)"), "%s", err);
        cJSON_Delete(doc);
        free(out);
    }
}

Test(isolation, the_fail_policy_takes_the_plugin_out_after_the_budget)
{
    int rc;
    char err[16384];
    char *out = faulty("segv", ", kubeschedErrorBudget: 2", &rc, err, sizeof(err), NULL);
    cr_assert_eq(rc, 0, "%s", err);
    cJSON *doc = check_others(out);
    const char *last = sim_field(sim_pod_entry(doc, "default", "boom"), "message");
    cr_expect(strstr(last, "plugin \"Faulty\" is taken out after 2 failures "
                           "(kubeschedFailurePolicy: fail); the last: plugin \"Faulty\" (isolated"),
              "%s", last);
    cr_expect(strstr(err, "plugin Faulty is taken out after 2 failures (kubeschedFailurePolicy: "
                          "fail): the profile's pods stay pending"),
              "%s", err);
    cr_expect_null(strstr(err, "failure 3 of"), "no child after the plugin was taken out: %s", err);
    cJSON_Delete(doc);
    free(out);
}

Test(isolation, the_ignore_policy_runs_the_profile_without_the_plugin)
{
    int rc;
    char err[16384];
    char *out = faulty("segv", ", kubeschedFailurePolicy: ignore, kubeschedErrorBudget: 1", &rc,
                       err, sizeof(err), NULL);
    cr_assert_eq(rc, 0, "%s", err);
    cJSON *doc = check_others(out);
    const cJSON *boom = sim_pod_entry(doc, "default", "boom");
    cr_expect_str_eq(sim_field(boom, "result"), "Scheduled", "%s", out);
    cr_expect(strstr(err, "plugin Faulty is taken out after 1 failures (kubeschedFailurePolicy: "
                          "ignore): the profile runs without it"),
              "%s", err);
    cJSON_Delete(doc);
    free(out);
}

Test(isolation, a_hang_is_killed_at_the_deadline)
{
    const char *modes[][2] = {{"loop", "Filter"}, {"score_loop", "Score"}};
    for (size_t m = 0; m < 2; m++) {
        int rc;
        char err[16384];
        double secs;
        char *out =
            faulty(modes[m][0], ", kubeschedCallDeadline: 200ms", &rc, err, sizeof(err), &secs);
        cr_assert_eq(rc, 0, "%s: %s", modes[m][0], err);
        cJSON *doc = check_others(out);
        char want[512];
        snprintf(want, sizeof(want),
                 "plugin \"Faulty\" (isolated, %s) ran past its deadline of 200ms at %s, pod "
                 "default/boom, node node-",
                 FIX_FAULTY, modes[m][1]);
        const char *msg = first_boom_message(doc);
        cr_expect(msg && strstr(msg, want), "want <%s>, got <%s>", want, msg);
        cr_expect(msg && strstr(msg, "; its process was killed"), "%s", msg);
        /* three attempts of 200ms, then the plugin is out */
        cr_expect_lt(secs, 5.0, "%s took %.1fs", modes[m][0], secs);
        cJSON_Delete(doc);
        free(out);
    }
}

Test(isolation, an_invalid_status_is_still_named)
{
    int rc;
    char err[16384];
    char *out = faulty("code42", "", &rc, err, sizeof(err), NULL);
    cr_assert_eq(rc, 0, "%s", err);
    cJSON *doc = check_others(out);
    const char *msg = first_boom_message(doc);
    cr_expect(msg && strstr(msg, "plugin \"Faulty\" returned code 42 at Filter, which is not a "
                                 "status code (0..6): forty-two"),
              "%s", msg);
    cJSON_Delete(doc);
    free(out);
}

/* validate-config on a file with one profile and these pluginConfig args for plugin. */
static void expect_config_error(const char *plugin, const char *so, const char *args,
                                const char *want)
{
    char cfg[64], cmd[256], *out, err[8192];
    write_config(cfg, plugin, so, args);
    snprintf(cmd, sizeof(cmd), "validate-config %s", cfg);
    int rc = sim_run(cmd, &out, err, sizeof(err));
    cr_expect_neq(rc, 0, "accepted: %s", args);
    cr_expect(strstr(err, want) || strstr(out, want), "want <%s>: %s%s", want, out, err);
    free(out);
    unlink(cfg);
}

Test(isolation, the_configuration_is_checked)
{
    expect_config_error("IsoDemo", FIX_ISODEMO, "kubeschedIsolation: processes",
                        "profiles[0].pluginConfig[0].args.kubeschedIsolation: expected "
                        "\"process\"");
    expect_config_error("IsoDemo", FIX_ISODEMO,
                        "kubeschedIsolation: process, kubeschedFailurePolicy: retry",
                        "args.kubeschedFailurePolicy: expected \"fail\"");
    expect_config_error("IsoDemo", FIX_ISODEMO,
                        "kubeschedIsolation: process, kubeschedErrorBudget: 0",
                        "args.kubeschedErrorBudget: expected an integer >= 1");
    expect_config_error("IsoDemo", FIX_ISODEMO, "kubeschedFailurePolicy: ignore",
                        "args.kubeschedFailurePolicy: only with kubeschedIsolation: process");
    /* Writer's only point is PostBind: isolation cannot carry it */
    expect_config_error("Writer", FIX_WRITER, "kubeschedIsolation: process",
                        "profile \"default-scheduler\": plugin Writer: kubeschedIsolation: "
                        "process carries PreFilter, Filter, PreScore, Score and NormalizeScore "
                        "only; Writer also implements PostBind (run it in-process: remove "
                        "kubeschedIsolation)");
}

/* 2 roomy nodes and n pods that all fit. */
static void write_roomy_cluster(char *path, int n)
{
    strcpy(path, "/tmp/ks-iso-roomy-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 2; i++)
        fprintf(f,
                "apiVersion: v1\nkind: Node\nmetadata: {name: node-%d}\n"
                "status: {allocatable: {cpu: \"1000\", memory: 1Ti, pods: \"1000\"}}\n---\n",
                i);
    for (int i = 0; i < n; i++)
        fprintf(f,
                "apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, namespace: default}\n"
                "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 10m}}}]}\n"
                "---\n",
                i);
    fclose(f);
}

/* kubesched simulate run directly (no shell), its peak RSS in MiB; -1 when it failed. */
static long simulate_peak_rss_mib(const char *cluster, const char *config)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        /* the plugin leaks on purpose: LeakSanitizer would turn that into the exit status */
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        execl(KS_KUBESCHED_BIN, KS_KUBESCHED_BIN, "simulate", "--cluster", cluster, "--config",
              config, "--output", "json", (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return ru.ru_maxrss / 1024;
}

/* A plugin that leaks 1 MiB per Filter call: in-process kubesched keeps every leaked MiB; isolated,
 * each child takes its leak with it. */
Test(isolation, a_leaking_plugin_leaks_into_its_child_only)
{
    char cluster[64], in_proc[64], isolated[64];
    write_roomy_cluster(cluster, 150); /* 300 Filter calls: 300 MiB */
    write_config(in_proc, "Faulty", FIX_FAULTY, "mode: leak");
    write_config(isolated, "Faulty", FIX_FAULTY, "mode: leak, kubeschedIsolation: process");
    long a = simulate_peak_rss_mib(cluster, in_proc);
    long b = simulate_peak_rss_mib(cluster, isolated);
    cr_assert(a > 0 && b > 0, "a run failed: in-process %ld, isolated %ld", a, b);
    cr_expect_gt(a, 250, "in-process peak RSS %ld MiB: the fixture did not leak?", a);
    cr_expect_lt(b, a / 4, "isolated peak RSS %ld MiB against in-process %ld MiB", b, a);
    unlink(cluster);
    unlink(in_proc);
    unlink(isolated);
}
