/*
 * `kubesched simulate --explain --output json`: each attempt's explanation is written out as text
 * when its cycle ends and copied into the output at the end, instead of being kept as a cJSON tree
 * per attempt until then (which made memory grow with the number of pods: 6 GB and more for 10,000
 * pods on 1,000 nodes). These tests check that the output is still complete, in order and printed
 * exactly as cJSON prints it, and that no explanation is held in memory until printing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie, malloc_usable_size */
#endif
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/simulate.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/"

/* The keys of an object, in order, joined by commas. */
static const char *keys_of(const cJSON *o, char *buf, size_t len)
{
    const cJSON *it;
    size_t off = 0;
    buf[0] = '\0';
    cr_assert(cJSON_IsObject(o), "not an object");
    cJSON_ArrayForEach(it, o)
    {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", it->string);
        cr_assert(off < len);
    }
    return buf;
}

/* One field of every attempt, joined by commas. */
static const char *column(const cJSON *pods, const char *field, char *buf, size_t len)
{
    const cJSON *it;
    size_t off = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(it, pods)
    {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
                                sim_field(it, field) ? sim_field(it, field) : "null");
        cr_assert(off < len);
    }
    return buf;
}

static const char *verdict(const cJSON *attempt, const char *node, const char *plugin)
{
    const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(attempt, "filter"), node);
    cr_assert_not_null(n, "no filter verdicts for node %s", node);
    return sim_field(n, plugin);
}

/* Every plugin but the last passed node; returns the last one's verdict. */
static const char *last_verdict(const cJSON *attempt, const char *node)
{
    const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(attempt, "filter"), node), *it,
                *last = NULL;
    cr_assert_not_null(n, "no filter verdicts for node %s", node);
    cJSON_ArrayForEach(it, n)
    {
        if (last)
            cr_assert_str_eq(last->valuestring, "passed", "%s on %s", last->string, node);
        last = it;
    }
    cr_assert_not_null(last, "no verdict on %s", node);
    return last->valuestring;
}

static char *run_text(const char *args)
{
    char *out, err[4096];
    int rc = sim_run(args, &out, err, sizeof(err));
    cr_assert_eq(rc, 0, "kubesched %s failed (%d): %s", args, rc, err);
    return out;
}

/* The document is printed one attempt a line, each exactly as cJSON_PrintUnformatted prints it
 * (the contract's format before explanations were written as text). */
static void expect_cjson_lines(const char *text, const cJSON *doc)
{
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods"), *it;
    size_t n = (size_t)cJSON_GetArraySize(pods), i = 0, cap = strlen(text) + 64;
    char *want = malloc(cap);
    size_t off = (size_t)snprintf(want, cap, "{\"pods\": [");
    cJSON_ArrayForEach(it, pods)
    {
        char *line = cJSON_PrintUnformatted(it);
        off += (size_t)snprintf(want + off, cap > off ? cap - off : 0, "%s\n  %s", i++ ? "," : "",
                                line);
        free(line);
    }
    snprintf(want + off, cap > off ? cap - off : 0, "\n]}\n");
    cr_assert_str_eq(text, want, "%zu attempts, not printed as cJSON prints them", n);
    free(want);
}

Test(explain_stream, every_attempt_is_explained_in_order)
{
    char *text = run_text("simulate --output json --explain --cluster " FIX "explain-retry.yaml");
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc, "not JSON: %s", text);
    expect_cjson_lines(text, doc);
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods");
    char buf[512];
    /* high fails and preempts low, web and conflict go while high backs off, high is retried;
     * the gated pod is reported last. */
    cr_assert_str_eq(column(pods, "name", buf, sizeof(buf)), "high,web,conflict,high,gated");
    cr_assert_str_eq(column(pods, "result", buf, sizeof(buf)),
                     "Unschedulable,Scheduled,Unschedulable,Scheduled,Unschedulable");

    const cJSON *high1 = cJSON_GetArrayItem(pods, 0);
    cr_assert_str_eq(sim_field(high1, "nominatedNode"), "a");
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(high1, "filter"), buf, sizeof(buf)), "a,b,t");
    cr_assert_str_eq(last_verdict(high1, "a"), "Insufficient cpu");
    cr_assert_str_eq(verdict(high1, "a", "NodeResourcesFit"), "Insufficient cpu");
    cr_assert_str_eq(verdict(high1, "b", "NodeAffinity"),
                     "node(s) didn't match Pod's node affinity/selector");
    cr_assert_str_eq(last_verdict(high1, "b"), "node(s) didn't match Pod's node affinity/selector");
    cr_assert_str_eq(last_verdict(high1, "t"), "node(s) had untolerated taint(s)");
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(high1, "score"), buf, sizeof(buf)), "");
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(high1, "finalScore"), buf, sizeof(buf)), "");

    const cJSON *web = cJSON_GetArrayItem(pods, 1);
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(web, "filter"), buf, sizeof(buf)), "a,b,t");
    cr_assert_str_eq(last_verdict(web, "a"), "passed");
    cr_assert_str_eq(last_verdict(web, "b"), "passed");
    cr_assert_str_eq(verdict(web, "t", "TaintToleration"), "node(s) had untolerated taint(s)");
    /* Scores for the feasible nodes only, and the one placed on has the best final score. */
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(web, "score"), buf, sizeof(buf)), "a,b");
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(web, "finalScore"), buf, sizeof(buf)), "a,b");
    const cJSON *fs = cJSON_GetObjectItem(web, "finalScore");
    double best = cJSON_GetObjectItem(fs, sim_field(web, "node"))->valuedouble;
    cr_assert_geq(best, cJSON_GetObjectItem(fs, "a")->valuedouble);
    cr_assert_geq(best, cJSON_GetObjectItem(fs, "b")->valuedouble);
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(web, "score"), "b"), "NodeResourcesFit")));

    const cJSON *conflict = cJSON_GetArrayItem(pods, 2);
    cr_assert_str_eq(sim_field(cJSON_GetObjectItem(conflict, "preFilter"), "NodeAffinity"),
                     "pod affinity terms conflict");
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(conflict, "filter"), buf, sizeof(buf)), "");
    cr_assert_str_eq(keys_of(cJSON_GetObjectItem(conflict, "score"), buf, sizeof(buf)), "");

    const cJSON *high2 = cJSON_GetArrayItem(pods, 3);
    cr_assert_str_eq(sim_field(high2, "node"), "a");
    cr_assert(cJSON_IsObject(cJSON_GetObjectItem(high2, "filter")));
    cr_assert(cJSON_IsObject(cJSON_GetObjectItem(high2, "finalScore")));
    cr_assert_null(cJSON_GetObjectItem(high2, "victims"), "the retry preempted nothing");

    const cJSON *gated = cJSON_GetArrayItem(pods, 4);
    cr_assert_null(cJSON_GetObjectItem(gated, "filter"), "a gated pod had no cycle to explain");
    cr_assert_null(cJSON_GetObjectItem(gated, "preFilter"));
    cJSON_Delete(doc);
    free(text);
}

/* The explanation only adds members at the end of each attempt: without them the two outputs are
 * the same document. */
Test(explain_stream, explanations_add_members_only)
{
    char *plain = run_text("simulate --output json --cluster " FIX "explain-retry.yaml");
    char *text = run_text("simulate --output json --explain --cluster " FIX "explain-retry.yaml");
    cJSON *doc = cJSON_Parse(text);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        const char *extra[] = {"filter", "score", "finalScore", "preFilter"};
        for (size_t k = 0; k < 4; k++)
            cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)it, extra[k]);
    }
    expect_cjson_lines(plain, doc);
    cJSON_Delete(doc);
    free(text);
    free(plain);
}

/* --explain in the table: the same lines, each attempt followed by indented lines that break
 * it down per evaluated node (rejected by which plugin, or the scores and the chosen node). */
Test(explain_stream, table_explains_each_attempt_per_node)
{
    char *plain = run_text("simulate --cluster " FIX "explain-retry.yaml");
    char *text = run_text("simulate --explain --cluster " FIX "explain-retry.yaml");
    /* without the indented lines it is the plain table */
    char *kept = malloc(strlen(text) + 1), *o = kept;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (strncmp(line, "    ", 4) != 0) {
            memcpy(o, line, n);
            o += n;
        }
        line += n;
    }
    *o = '\0';
    cr_assert_str_eq(kept, plain);
    cr_assert(strstr(text, "default/web       default-scheduler  Scheduled      b     \n"
                           "    a                 score 469 (TaintToleration 100, NodeResourcesFit "
                           "95, DynamicResources 0, NodeResourcesBalancedAllocation 74, "
                           "ImageLocality 0)\n"
                           "    b                 score 471 (TaintToleration 100, NodeResourcesFit "
                           "97, DynamicResources 0, NodeResourcesBalancedAllocation 74, "
                           "ImageLocality 0)  <- chosen\n"
                           "    t                 rejected by TaintToleration: node(s) had "
                           "untolerated taint(s)\n"),
              "%s", text);
    cr_assert(strstr(text, "    (PreFilter)       rejected by NodeAffinity: pod affinity terms "
                           "conflict\n"),
              "%s", text);
    free(kept);
    free(text);
    free(plain);
}

/* ---- memory -------------------------------------------------------------------------------- */

/* Bytes allocated through cJSON and not yet freed through it (every cJSON allocation of the
 * process goes through these hooks during the test). */
static atomic_llong cjson_live;
static long long live_at_print = -1;
static size_t printed;

static void *count_malloc(size_t n)
{
    void *p = malloc(n);
    if (p)
        atomic_fetch_add(&cjson_live, (long long)malloc_usable_size(p));
    return p;
}

static void count_free(void *p)
{
    if (p)
        atomic_fetch_sub(&cjson_live, (long long)malloc_usable_size(p));
    free(p);
}

/* The output: what cJSON holds when the first byte is printed (every attempt is over by then). */
static ssize_t sink_write(void *cookie, const char *buf, size_t len)
{
    (void)cookie, (void)buf;
    if (live_at_print < 0)
        live_at_print = atomic_load(&cjson_live);
    printed += len;
    return (ssize_t)len;
}

/* nodes nodes and pods pending pods that all fit: every attempt evaluates and scores every
 * node. */
static void write_cluster(const char *path, int nodes, int pods)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < nodes; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%03d}\n"
                "status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\"}}\n",
                i);
    for (int i = 0; i < pods; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%04d, namespace: default}\n"
                "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: 10m}}}]\n",
                i);
    fclose(f);
}

/* ks__simulate_run in this process, with the default configuration; its return code. */
static int simulate_here(const char *cluster, int explain, FILE *out, ks_simulate_stats *st,
                         char *err, size_t errlen)
{
    const char *yaml = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "kind: KubeSchedulerConfiguration\n";
    ks_registry *reg = th_registry_new();
    ks_config *cfg = NULL;
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__config_load_string(reg, yaml, "test.yaml", &cfg, err, errlen), 0, "%s", err);
    cr_assert_eq(ks__config_plan(cfg, reg, &plans, err, errlen), 0, "%s", err);
    ks_simulate_opts o = {cluster, cfg, plans, KS_OUTPUT_JSON, explain, 1, out, 0, NULL, 0};
    int rc = ks__simulate_run(&o, st, err, errlen);
    ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    ks__registry_free(reg);
    return rc;
}

/* cJSON bytes still held when printing starts, less those held before the run. */
static long long held_at_print(const char *cluster, int explain, size_t *out_bytes)
{
    char err[1024] = "";
    FILE *out = fopencookie(NULL, "w", (cookie_io_functions_t){.write = sink_write});
    cr_assert_not_null(out);
    setvbuf(out, NULL, _IONBF, 0); /* the first byte reaches sink_write at once */
    live_at_print = -1;
    printed = 0;
    long long before = atomic_load(&cjson_live);
    ks_simulate_stats st;
    cr_assert_eq(simulate_here(cluster, explain, out, &st, err, sizeof(err)), 0, "%s", err);
    fclose(out);
    cr_assert_eq(st.scheduled, 300);
    *out_bytes = printed;
    return live_at_print - before;
}

TestSuite(explain_stream_memory, .init = th_init, .fini = th_fini);

/* When printing starts every attempt's explanation is complete; a run that kept them as cJSON
 * trees (one node per filter verdict and score) held megabytes here, growing with the pods. */
Test(explain_stream_memory, explanations_are_not_held_until_printing)
{
    char path[] = "/tmp/ks-explain-mem-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    write_cluster(path, 40, 300);
    cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = count_malloc, .free_fn = count_free});
    size_t plain_bytes, explain_bytes;
    long long plain = held_at_print(path, 0, &plain_bytes);
    long long explained = held_at_print(path, 1, &explain_bytes);
    cJSON_InitHooks(NULL);
    unlink(path);
    /* 300 attempts x 40 nodes x (5 verdicts and 4 scores): megabytes of explanations printed. */
    cr_assert_gt(explain_bytes, plain_bytes + 1024 * 1024, "%zu vs %zu bytes printed",
                 explain_bytes, plain_bytes);
    cr_assert_leq(explained - plain, 16 * 1024,
                  "%lld more cJSON bytes held when printing starts with --explain (%lld without), "
                  "for %zu bytes of explanations",
                  explained - plain, plain, explain_bytes - plain_bytes);
}

/* The explanations need a temporary file: where it cannot be made, the run says which. */
Test(explain_stream_memory, an_unusable_tmpdir_is_named)
{
    char err[1024] = "", *buf = NULL;
    size_t len = 0;
    ks_simulate_stats st;
    FILE *out = open_memstream(&buf, &len);
    setenv("TMPDIR", "/nonexistent-ks-tmpdir", 1);
    int rc = simulate_here(FIX "explain-retry.yaml", 1, out, &st, err, sizeof(err));
    fclose(out);
    cr_assert_neq(rc, 0, "the run went on without its explanations");
    cr_assert(strstr(err, "/nonexistent-ks-tmpdir/kubesched-explain-XXXXXX"), "%s", err);
    cr_assert(strstr(err, "TMPDIR"), "%s", err);
    cr_assert_eq(len, 0, "nothing is printed: %s", buf);
    free(buf);
}
