/*
 * Plugin faults in `kubesched simulate` (issue 13, in-process diagnostics): the Faulty fixture
 * plugin (tests/loader/fixtures/faulty.c, built by tests/CMakeLists.txt) crashes, hangs or
 * returns invalid statuses for the pod "boom" of tests/fixtures/sim/plugin_faults.yaml. Each test
 * runs the real binary and checks the exit status, that stderr names the plugin, its .so, the
 * extension point, the pod and the node, and that stdout still holds the decisions made before the
 * fault as valid JSON (or the table).
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simrun.h"

#define CLUSTER KS_SOURCE_DIR "/tests/fixtures/sim/plugin_faults.yaml"

typedef struct run {
    int status; /* exit status; 128+signal when killed by one */
    char *out;  /* stdout (owned) */
    char err[16384];
    double seconds;
} run;

/* kubesched COMMAND (simulate ... or validate-config) with the Faulty plugin in mode, on every
 * extension point it has; extra: more lines of its args. */
static void run_cmd(run *r, const char *command, const char *mode, const char *extra,
                    const char *flags)
{
    char cfg[] = "/tmp/ks-faulty-cfg-XXXXXX", errpath[] = "/tmp/ks-faulty-err-XXXXXX";
    int fd = mkstemp(cfg);
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
            "      - name: Faulty\n"
            "  pluginConfig:\n"
            "  - name: Faulty\n"
            "    args:\n"
            "      kubeschedPluginPath: %s\n"
            "      mode: %s\n%s",
            FIX_FAULTY, mode, extra);
    fclose(f);
    fd = mkstemp(errpath);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[4096];
    /* exec: the status is kubesched's own (no shell in between); no core files */
    if (!strcmp(command, "simulate"))
        snprintf(cmd, sizeof(cmd), "ulimit -c 0; exec %s simulate --cluster %s --config %s %s 2>%s",
                 KS_KUBESCHED_BIN, CLUSTER, cfg, flags, errpath);
    else
        snprintf(cmd, sizeof(cmd), "exec %s %s %s 2>%s", KS_KUBESCHED_BIN, command, cfg, errpath);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 16, n = 0;
    r->out = malloc(cap);
    for (size_t k; (k = fread(r->out + n, 1, cap - n - 1, p)) > 0;) {
        n += k;
        if (n + 1 >= cap)
            r->out = realloc(r->out, cap *= 2);
    }
    r->out[n] = '\0';
    int st = pclose(p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    r->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    FILE *e = fopen(errpath, "r");
    size_t en = e ? fread(r->err, 1, sizeof(r->err) - 1, e) : 0;
    r->err[en] = '\0';
    if (e)
        fclose(e);
    unlink(errpath);
    unlink(cfg);
}

static void run_faulty(run *r, const char *mode, const char *flags)
{
    run_cmd(r, "simulate", mode, "", flags);
}

static const char *str_member(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The flushed JSON: p1 and p2 scheduled before the fault, nothing about p3, and the "aborted"
 * member naming the fault. Returns the document (caller deletes). */
static cJSON *check_flushed_json(const run *r, const char *reason, const char *point)
{
    cJSON *doc = cJSON_Parse(r->out);
    cr_assert_not_null(doc, "stdout is not a JSON document: %s", r->out);
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods"), *it;
    cr_assert(cJSON_IsArray(pods));
    int p1 = 0, p2 = 0;
    cJSON_ArrayForEach(it, pods)
    {
        const char *name = str_member(it, "name");
        cr_assert_str_eq(str_member(it, "result"), "Scheduled", "%s", r->out);
        cr_assert_not_null(str_member(it, "node"));
        cr_assert_str_eq(str_member(it, "profile"), "default-scheduler");
        p1 += !strcmp(name, "p1");
        p2 += !strcmp(name, "p2");
        cr_assert(strcmp(name, "p3") && strcmp(name, "boom"), "%s decided after the fault", name);
    }
    cr_assert(p1 == 1 && p2 == 1, "p1 and p2 were decided before the fault: %s", r->out);
    const cJSON *ab = cJSON_GetObjectItem(doc, "aborted");
    cr_assert(cJSON_IsObject(ab), "no aborted member: %s", r->out);
    cr_assert_str_eq(str_member(ab, "reason"), reason);
    cr_assert_str_eq(str_member(ab, "plugin"), "Faulty");
    cr_assert_str_eq(str_member(ab, "pluginPath"), FIX_FAULTY);
    cr_assert_str_eq(str_member(ab, "point"), point);
    cr_assert_str_eq(str_member(ab, "pod"), "default/boom");
    const char *node = str_member(ab, "node");
    cr_assert(node && (!strcmp(node, "node-a") || !strcmp(node, "node-b")), "node: %s",
              node ? node : "(none)");
    return doc;
}

/* stderr names the plugin, its .so, the point, the pod and a node. */
static void check_names(const run *r, const char *point)
{
    char want[512];
    snprintf(want, sizeof(want), "plugin \"Faulty\" (%s) at %s, pod default/boom, node node-",
             FIX_FAULTY, point);
    cr_assert(strstr(r->err, want), "stderr lacks <%s>: %s", want, r->err);
}

Test(plugin_faults, segfault_in_filter_is_named_and_flushes_valid_json)
{
    run r;
    run_faulty(&r, "segv", "--output json");
    cr_assert_eq(r.status, 128 + SIGSEGV, "exit status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "kubesched: fatal SIGSEGV (address 0x0) in plugin \"Faulty\""), "%s",
              r.err);
    check_names(&r, "Filter");
    cr_assert(strstr(r.err, "backtrace"), "%s", r.err);
    cr_assert(strstr(r.err, "libfix_faulty.so(+0x"), "no frame in the plugin: %s", r.err);
    cJSON *doc = check_flushed_json(&r, "signal", "Filter");
    cr_assert_str_eq(str_member(cJSON_GetObjectItem(doc, "aborted"), "signal"), "SIGSEGV");
    cJSON_Delete(doc);
    free(r.out);
}

Test(plugin_faults, stack_overflow_in_filter_is_still_named)
{
    run r;
    run_faulty(&r, "recurse", "--output json");
    cr_assert_eq(r.status, 128 + SIGSEGV, "exit status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "kubesched: fatal SIGSEGV (address 0x"), "%s", r.err);
    check_names(&r, "Filter");
    cJSON_Delete(check_flushed_json(&r, "signal", "Filter"));
    free(r.out);
}

Test(plugin_faults, abort_in_filter_flushes_the_table)
{
    run r;
    run_faulty(&r, "abort", "--output table");
    cr_assert_eq(r.status, 128 + SIGABRT, "exit status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "fatal SIGABRT in plugin \"Faulty\""), "%s", r.err);
    check_names(&r, "Filter");
    cr_assert(strstr(r.out, "POD "), "%s", r.out);
    cr_assert(strstr(r.out, "default/p1  default-scheduler  Scheduled"), "%s", r.out);
    cr_assert(strstr(r.out, "default/p2  default-scheduler  Scheduled"), "%s", r.out);
    cr_assert_null(strstr(r.out, "default/p3"), "%s", r.out);
    cr_assert(strstr(r.out, "aborted after 2 attempts: SIGABRT in plugin Faulty at Filter, pod "
                            "default/boom, node node-"),
              "%s", r.out);
    free(r.out);
}

Test(plugin_faults, division_by_zero_in_filter_is_named)
{
    run r;
    run_faulty(&r, "fpe", "--output json");
    cr_assert_eq(r.status, 128 + SIGFPE, "exit status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "fatal SIGFPE in plugin \"Faulty\""), "%s", r.err);
    check_names(&r, "Filter");
    cJSON_Delete(check_flushed_json(&r, "signal", "Filter"));
    free(r.out);
}

Test(plugin_faults, endless_filter_is_reported_past_its_deadline)
{
    run r;
    run_faulty(&r, "loop", "--output json --plugin-call-deadline 200ms");
    cr_assert_eq(r.status, 3, "exit status %d: %s", r.status, r.err);
    check_names(&r, "Filter");
    cr_assert(strstr(r.err, "past its deadline of 200ms (--plugin-call-deadline)"), "%s", r.err);
    /* reported once */
    cr_assert_null(strstr(strstr(r.err, "past its deadline") + 1, "past its deadline"), "%s",
                   r.err);
    cJSON *doc = check_flushed_json(&r, "deadline", "Filter");
    const cJSON *ms =
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "aborted"), "elapsedMilliseconds");
    cr_assert(cJSON_IsNumber(ms) && ms->valuedouble >= 200 && ms->valuedouble < 2000,
              "elapsedMilliseconds: %s", r.out);
    cr_assert_lt(r.seconds, 5.0, "the watchdog took %.1fs", r.seconds);
    cJSON_Delete(doc);
    free(r.out);
}

Test(plugin_faults, endless_score_is_reported_past_its_deadline)
{
    run r;
    run_faulty(&r, "score_loop", "--output json --plugin-call-deadline 200ms");
    cr_assert_eq(r.status, 3, "exit status %d: %s", r.status, r.err);
    check_names(&r, "Score");
    cJSON_Delete(check_flushed_json(&r, "deadline", "Score"));
    free(r.out);
}

Test(plugin_faults, a_plugins_own_deadline_overrides_the_flag)
{
    run r;
    run_cmd(&r, "simulate", "loop", "      kubeschedCallDeadline: 250ms\n",
            "--output json --plugin-call-deadline 0");
    cr_assert_eq(r.status, 3, "exit status %d: %s", r.status, r.err);
    check_names(&r, "Filter");
    cr_assert(strstr(r.err, "past its deadline of 250ms (its args' kubeschedCallDeadline)"), "%s",
              r.err);
    cJSON_Delete(check_flushed_json(&r, "deadline", "Filter"));
    free(r.out);
}

Test(plugin_faults, a_bad_own_deadline_is_refused_with_its_field)
{
    run r;
    run_cmd(&r, "validate-config", "none", "      kubeschedCallDeadline: soon\n", "");
    cr_assert_eq(r.status, 1, "exit status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "profiles[0].pluginConfig[0].args.kubeschedCallDeadline: expected a "
                            "duration such as \"30s\""),
              "%s", r.err);
    free(r.out);
}

Test(plugin_faults, fast_calls_never_trip_the_watchdog)
{
    run r;
    run_faulty(&r, "none", "--output json --plugin-call-deadline 50ms");
    cr_assert_eq(r.status, 0, "exit status %d: %s", r.status, r.err);
    cr_assert_null(strstr(r.err, "deadline"), "%s", r.err);
    cJSON *doc = cJSON_Parse(r.out);
    cr_assert_not_null(doc);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "pods")), 4);
    cr_assert_null(cJSON_GetObjectItem(doc, "aborted"));
    cJSON_Delete(doc);
    free(r.out);
}

Test(plugin_faults, bad_deadline_flag_is_refused)
{
    run r;
    run_faulty(&r, "none", "--plugin-call-deadline soon");
    cr_assert_eq(r.status, 2, "exit status %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "--plugin-call-deadline soon: expected a duration"), "%s", r.err);
    free(r.out);
}

/* boom's last entry in a run that completed normally. */
static const char *boom_message(const run *r, cJSON **doc, const char *result)
{
    cr_assert_eq(r->status, 0, "exit status %d: %s", r->status, r->err);
    *doc = cJSON_Parse(r->out);
    cr_assert_not_null(*doc, "stdout is not JSON (or not UTF-8): %.400s", r->out);
    const cJSON *e = sim_pod_entry(*doc, "default", "boom");
    cr_assert_str_eq(str_member(e, "result"), result, "%s", str_member(e, "message"));
    /* the other pods are not affected */
    cr_assert_str_eq(str_member(sim_pod_entry(*doc, "default", "p3"), "result"), "Scheduled");
    return str_member(e, "message");
}

static void expect_error(const char *mode, const char *want)
{
    run r;
    cJSON *doc;
    run_faulty(&r, mode, "--output json");
    const char *msg = boom_message(&r, &doc, "Error");
    cr_assert(strstr(msg, want), "%s: message <%s> lacks <%s>", mode, msg, want);
    cJSON_Delete(doc);
    free(r.out);
}

Test(plugin_faults, unknown_code_is_an_error_naming_plugin_point_and_value)
{
    expect_error("code42", "running \"Faulty\" filter plugin: plugin \"Faulty\" returned code 42 "
                           "at Filter, which is not a status code (0..6): forty-two");
}

Test(plugin_faults, wait_from_filter_is_an_error)
{
    expect_error("wait_in_filter",
                 "plugin \"Faulty\" returned Wait at Filter, which it does not accept (Success, "
                 "Error, Unschedulable, UnschedulableAndUnresolvable, Pending)");
}

Test(plugin_faults, skip_from_filter_is_an_error)
{
    expect_error("skip_in_filter", "plugin \"Faulty\" returned Skip at Filter, which it does not "
                                   "accept");
}

Test(plugin_faults, null_reason_is_an_error)
{
    expect_error("null_reason",
                 "plugin \"Faulty\" returned Unschedulable at Filter with a NULL reason");
}

/* Whether s is valid UTF-8 (as a strict decoder would say). */
static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s;
        int n = c < 0x80                ? 0
                : c >= 0xC2 && c < 0xE0 ? 1
                : c >= 0xE0 && c < 0xF0 ? 2
                : c >= 0xF0 && c < 0xF5 ? 3
                                        : -1;
        if (n < 0)
            return 0;
        for (int i = 1; i <= n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return 0;
        s += n + 1;
    }
    return 1;
}

Test(plugin_faults, reason_bytes_that_are_not_utf8_become_replacement_characters)
{
    run r;
    cJSON *doc;
    run_faulty(&r, "bad_utf8", "--output json");
    cr_assert(valid_utf8((const unsigned char *)r.out), "stdout is not valid UTF-8");
    const char *msg = boom_message(&r, &doc, "Unschedulable");
    cr_assert(strstr(msg, "2 bad \xef\xbf\xbd bytes and a cut \xef\xbf\xbd."), "%s", msg);
    cJSON_Delete(doc);
    free(r.out);
}

Test(plugin_faults, reason_cut_at_the_buffer_is_marked)
{
    run r;
    cJSON *doc;
    run_faulty(&r, "long_reason", "--output json");
    const char *msg = boom_message(&r, &doc, "Unschedulable");
    cr_assert(strstr(msg, "xxxx\xe2\x80\xa6(truncated)."), "%s", msg);
    cJSON_Delete(doc);
    free(r.out);
}

Test(plugin_faults, score_out_of_range_keeps_upstreams_message)
{
    expect_error("score_huge", "applying score defaultWeights on Score plugins: plugin \"Faulty\" "
                               "returns an invalid score 1000, it should in the range of [0, 100] "
                               "after normalizing");
}
