/*
 * Gang scheduling in `simulate` with examples/coscheduling (scheduler-plugins' Coscheduling
 * written on the SDK, loaded as a .so): PodGroups read from the cluster file, all-or-nothing
 * placement, Permit waits and their timeouts on the virtual clock, PostFilter's and Unreserve's
 * rejections, sibling activation, QueueSort by the group's creation, and the messages of
 * scheduler-plugins word for word.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "cli/simulate.h"
#include "config/config.h"
#include "config/registry.h"
#include "sched/host_api.h"
#include "sched/loader.h"

TestSuite(coscheduling, .init = th_init, .fini = th_fini);

typedef struct outcome {
    cJSON *doc; /* the JSON report */
    ks_simulate_stats st;
    double seconds; /* wall time of the whole run */
    char err[2048];
} outcome;

static const char *k_config = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "profiles:\n"
                              "- schedulerName: default-scheduler\n"
                              "  plugins:\n"
                              "    queueSort:\n"
                              "      enabled: [{name: Coscheduling}]\n"
                              "      disabled: [{name: \"*\"}]\n"
                              "    preFilter: {enabled: [{name: Coscheduling}]}\n"
                              "    postFilter: {enabled: [{name: Coscheduling}]}\n"
                              "    permit: {enabled: [{name: Coscheduling}]}\n"
                              "    reserve: {enabled: [{name: Coscheduling}]}\n"
                              "  pluginConfig:\n"
                              "  - name: Coscheduling\n"
                              "    args:\n"
                              "      kubeschedPluginPath: " FIX_COSCHEDULING "\n"
                              "      permitWaitingTimeSeconds: %d\n"
                              "      podGroupBackoffSeconds: %d\n";

/* simulate `cluster` (YAML text) with the Coscheduling profile; the JSON report in o->doc. */
static void simulate(const char *cluster, int wait_s, int backoff_s, int max_attempts, outcome *o)
{
    char path[] = "/tmp/ks-cosched-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(cluster, f);
    fclose(f);
    char yaml[2048];
    snprintf(yaml, sizeof(yaml), k_config, wait_s, backoff_s);
    ks_registry *reg = th_registry_new();
    ks_config *cfg = NULL;
    ks_profile_plan *plans = NULL;
    ks_loaded_module **mods = NULL;
    cr_assert_eq(ks__config_load_string(reg, yaml, "cosched.yaml", &cfg, o->err, sizeof(o->err)), 0,
                 "%s", o->err);
    cr_assert_eq(
        ks__loader_load_config_plugins(cfg, reg, ks__host_api(), &mods, o->err, sizeof(o->err)), 0,
        "%s", o->err);
    cr_assert_eq(ks__config_check_plugin_args(cfg, reg, o->err, sizeof(o->err)), 0, "%s", o->err);
    cr_assert_eq(ks__config_plan(cfg, reg, &plans, o->err, sizeof(o->err)), 0, "%s", o->err);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    ks_simulate_opts so = {path, cfg, plans, KS_OUTPUT_JSON, 0, 1, out, 0, NULL, max_attempts};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = ks__simulate_run(&so, &o->st, o->err, sizeof(o->err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fclose(out);
    o->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_eq(rc, 0, "%s", o->err);
    o->doc = cJSON_Parse(buf);
    cr_assert_not_null(o->doc, "not JSON: %s", buf);
    free(buf);
    unlink(path);
    ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    ks__registry_free(reg);
    ks__loader_close_all(mods);
}

static const char *member(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The attempts of pod `name`, in order: results joined by ',' into buf; the last message. */
static const char *attempts_of(const outcome *o, const char *name, char *buf, size_t len)
{
    const cJSON *it, *pods = cJSON_GetObjectItemCaseSensitive(o->doc, "pods");
    const char *msg = "";
    buf[0] = '\0';
    cJSON_ArrayForEach(it, pods)
    {
        if (strcmp(member(it, "name"), name) != 0)
            continue;
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%s", n ? "," : "", member(it, "result"));
        msg = member(it, "message") ? member(it, "message") : "";
    }
    return msg;
}

/* The message of pod `name`'s first attempt. */
static const char *first_message(const outcome *o, const char *name)
{
    const cJSON *it, *pods = cJSON_GetObjectItemCaseSensitive(o->doc, "pods");
    cJSON_ArrayForEach(it, pods)
    {
        if (!strcmp(member(it, "name"), name))
            return member(it, "message") ? member(it, "message") : "";
    }
    return "(no attempt)";
}

/* Which pod was scheduled first (the order of the report). */
static int scheduled_index(const outcome *o, const char *name)
{
    const cJSON *it, *pods = cJSON_GetObjectItemCaseSensitive(o->doc, "pods");
    int i = 0;
    cJSON_ArrayForEach(it, pods)
    {
        if (!strcmp(member(it, "result"), "Scheduled") && !strcmp(member(it, "name"), name))
            return i;
        i++;
    }
    return -1;
}

#define NODE(name, cpu)                                                                            \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                \
    "status: {allocatable: {cpu: \"" cpu "\", memory: 8Gi, pods: \"110\"}}\n"
#define GANG_POD(name, group, cpu)                                                                 \
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\n  namespace: default\n"          \
    "  labels: {scheduling.x-k8s.io/pod-group: " group "}\n"                                       \
    "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" cpu "\"}}}]\n"
#define POD_GROUP(name, min, extra)                                                                \
    "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " name      \
    "\n  namespace: default\n  creationTimestamp: \"2026-12-01T10:00:00Z\"\n"                      \
    "spec:\n  minMember: " #min "\n" extra

/* A group of 3 on 3 nodes that hold one member each: the first two wait at Permit, the third
 * completes the group and lets them go; all three are bound. */
Test(coscheduling, complete_group_is_bound_together)
{
    outcome o;
    simulate(NODE("n1", "1") NODE("n2", "1") NODE("n3", "1") POD_GROUP("g", 3, "")
                 GANG_POD("p1", "g", "1") GANG_POD("p2", "g", "1") GANG_POD("p3", "g", "1"),
             60, 0, 0, &o);
    char a[256];
    for (int i = 1; i <= 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        attempts_of(&o, name, a, sizeof(a));
        cr_expect_str_eq(a, "Scheduled", "%s: %s", name, a);
    }
    cr_expect_eq(o.st.scheduled, 3);
    cr_expect_eq(o.st.permit_timeouts, 0);
    cJSON_Delete(o.doc);
}

/* A group of 4 on a cluster that fits 3: never partly bound. The 4th member fits nowhere, and
 * PostFilter rejects the three waiting at Permit with upstream's words. Forgetting them sends
 * the 4th straight back (NodeResourcesFit's AssignedPodDelete); it now fits and waits, but the
 * group is held after its rejection (kubesched's Coscheduling), so it does not activate its
 * siblings: it times out alone and the group waits for an event. scheduler-plugins' plugin, on a
 * v1.33+ queue that pops backoffQ early when idle, spun here until --max-attempts stopped
 * every pod. */
Test(coscheduling, group_that_does_not_fit_is_never_partly_bound_nor_spins)
{
    outcome o;
    simulate(NODE("n1", "1") NODE("n2", "1") NODE("n3", "1") POD_GROUP("g", 4, "")
                 GANG_POD("p1", "g", "1") GANG_POD("p2", "g", "1") GANG_POD("p3", "g", "1")
                     GANG_POD("p4", "g", "1"),
             60, 0, 5, &o);
    cr_expect_eq(o.st.scheduled, 0, "a member was bound");
    cr_expect_eq(o.st.capped, 0, "the group kept retrying: %zu pods capped", o.st.capped);
    cr_expect_eq(o.st.permit_timeouts, 1);
    cr_expect_str_eq(first_message(&o, "p4"),
                     "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
                     "available: 3 No preemption victims found for incoming pod., PodGroup "
                     "default/g gets rejected due to Pod p4 is unschedulable even after "
                     "PostFilter");
    char a[256];
    for (int i = 1; i <= 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        cr_expect_str_eq(attempts_of(&o, name, a, sizeof(a)),
                         "0/1 nodes are available: 1 optimistic rejection in PostFilter.");
        cr_expect_str_eq(a, "Unschedulable", "%s: %s", name, a);
    }
    cr_expect_str_eq(attempts_of(&o, "p4", a, sizeof(a)),
                     "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at "
                     "plugin Coscheduling.");
    cr_expect_str_eq(a, "Unschedulable,Unschedulable");
    cJSON_Delete(o.doc);
}

/* A member that never comes (gated): the others wait scheduleTimeoutSeconds (the PodGroup's,
 * over the args') and time out, on the virtual clock: ten minutes of waiting take no wall time.
 * The first timeout's Unreserve rejects the other waiting member. Only the first member at
 * Permit activates its siblings, as upstream (PermitState.Activate, when none is assigned yet),
 * so neither comes back without an event: one round, one timeout. (The plugin once activated
 * them at every Permit, in flight too, and the two retried one round per timeout until
 * --max-attempts.) */
Test(coscheduling, permit_timeout_is_virtual_and_reported)
{
    outcome o;
    simulate(
        NODE("n1", "4") POD_GROUP("g", 3, "  scheduleTimeoutSeconds: 600\n")
            GANG_POD("p1", "g", "1") GANG_POD(
                "p2", "g",
                "1") "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p3\n  namespace: default\n"
                     "  labels: {scheduling.x-k8s.io/pod-group: g}\n"
                     "spec:\n  schedulingGates: [{name: example.com/hold}]\n"
                     "  containers: [{name: c, image: x}]\n",
        60, 0, 3, &o);
    cr_expect_eq(o.st.scheduled, 0);
    cr_expect_lt(o.seconds, 1.0, "10 minutes of Permit waits took %.2f s of wall time", o.seconds);
    cr_expect_eq(o.st.permit_timeouts, 1, "timeouts: %zu", o.st.permit_timeouts);
    cr_expect_eq(o.st.capped, 0);
    cr_expect_str_eq(first_message(&o, "p1"), "0/1 nodes are available: 1 rejected due to timeout "
                                              "after waiting 10m0s at plugin Coscheduling.");
    cr_expect_str_eq(first_message(&o, "p2"), "0/1 nodes are available: 1 rejection in Unreserve.");
    cJSON_Delete(o.doc);
}

/* Fewer pods than minMember: PreFilter refuses each, UnschedulableAndUnresolvable. */
Test(coscheduling, prefilter_counts_the_group_pods)
{
    outcome o;
    simulate(NODE("n1", "4") POD_GROUP("g", 3, "") GANG_POD("p1", "g", "1")
                 GANG_POD("p2", "g", "1"),
             60, 0, 0, &o);
    char a[256];
    const char *msg = attempts_of(&o, "p1", a, sizeof(a));
    cr_expect_str_eq(a, "Unschedulable");
    cr_expect_str_eq(msg, "0/1 nodes are available: pre-filter pod p1 cannot find enough sibling "
                          "pods, current pods number: 2, minMember of group: 3. preemption: 0/1 "
                          "nodes are available: 1 Preemption is not helpful for scheduling., "
                          "PodGroup default/g gets rejected due to Pod p1 is unschedulable even "
                          "after PostFilter");
    cJSON_Delete(o.doc);
}

/* minResources more than the cluster has: upstream's "resource gap", the remaining map as Go
 * prints it (after 4 cores free on n1: 6 cores missing, in milli-cores). */
Test(coscheduling, min_resources_gap)
{
    outcome o;
    simulate(NODE("n1", "4") POD_GROUP("g", 2, "  minResources: {cpu: \"10\"}\n")
                 GANG_POD("p1", "g", "1") GANG_POD("p2", "g", "1"),
             60, 0, 0, &o);
    char a[256];
    const char *msg = attempts_of(&o, "p1", a, sizeof(a));
    cr_expect(strstr(msg, "resource gap: map[cpu:{{6000 -3} {<nil>}  DecimalSI}]"), "%s", msg);
    cr_expect_eq(o.st.scheduled, 0);
    cJSON_Delete(o.doc);
}

/* A group named but not created: PreFilter lets it pass, Permit says "PodGroup not found". */
Test(coscheduling, missing_pod_group)
{
    outcome o;
    simulate(NODE("n1", "4") GANG_POD("p1", "nope", "1"), 60, 0, 0, &o);
    char a[256];
    const char *msg = attempts_of(&o, "p1", a, sizeof(a));
    cr_expect_str_eq(a, "Unschedulable");
    cr_expect(strstr(msg, "PodGroup not found"), "%s", msg);
    cJSON_Delete(o.doc);
}

/* QueueSort: equal priority, the group created first goes first, whatever the file order. */
Test(coscheduling, older_group_is_scheduled_first)
{
    outcome o;
    simulate(NODE("n1", "8") "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                             "metadata: {name: young, namespace: default, creationTimestamp: "
                             "\"2026-12-01T12:00:00Z\"}\nspec: {minMember: 1}\n"
                             "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                             "metadata: {name: old, namespace: default, creationTimestamp: "
                             "\"2026-11-01T12:00:00Z\"}\nspec: {minMember: 1}\n" GANG_POD(
                                 "y1", "young", "1") GANG_POD("o1", "old", "1"),
             60, 0, 0, &o);
    int y = scheduled_index(&o, "y1"), old = scheduled_index(&o, "o1");
    cr_assert(y >= 0 && old >= 0);
    cr_expect_lt(old, y, "the older group went second");
    cJSON_Delete(o.doc);
}

/* Backoff: after PostFilter rejected the group, PreFilter refuses it for podGroupBackoffSeconds
 * ("failed recently"). */
Test(coscheduling, pod_group_backoff)
{
    outcome o;
    simulate(NODE("n1", "1") POD_GROUP("g", 2, "") GANG_POD("p1", "g", "1")
                 GANG_POD("p2", "g", "1"),
             60, 30, 0, &o);
    cr_expect_eq(o.st.scheduled, 0);
    char a[256];
    const char *msg = attempts_of(&o, "p1", a, sizeof(a));
    (void)msg;
    const cJSON *it, *pods = cJSON_GetObjectItemCaseSensitive(o.doc, "pods");
    int failed_recently = 0;
    cJSON_ArrayForEach(it, pods)
    {
        const char *m = member(it, "message");
        failed_recently += m && strstr(m, "podGroup default/g failed recently") != NULL;
    }
    cr_expect_gt(failed_recently, 0, "no attempt was refused as backing off");
    cJSON_Delete(o.doc);
}
