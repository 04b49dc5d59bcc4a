/*
 * scheduler-plugins' coscheduling unit tests (pkg/coscheduling/coscheduling_test.go: TestLess,
 * TestPermit, TestPostFilter; core_test.go's PreFilter rules), ported to examples/coscheduling
 * loaded as a .so into a scheduler in memory: the plugin's callbacks are called directly with the
 * cases' pods, PodGroups and placed pods, and the codes and messages are upstream's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/custom_objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/cache.h"
#include "sched/framework.h"
#include "sched/host_api.h"
#include "sched/loader.h"
#include "sched/queue.h"
#include "sched/scheduler.h"

#define SEC 1000000000LL

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_loaded_module **mods;
    ks_scheduler *s;
    const ks_plugin_desc *desc;
    void *self;
    int64_t now;
    int64_t unix_offset; /* Unix ns = queue clock ns + this */
    ks_snapshot *snap;
} t;

static int64_t clock_now(void *ctx)
{
    (void)ctx;
    return t.now;
}

static ks_code bind_ok(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)pod, (void)node, (void)st;
    return KS_SUCCESS;
}

static void setup(void)
{
    char err[1024] = "";
    th_init();
    memset(&t, 0, sizeof(t));
    t.now = 1000 * SEC;
    const char *yaml =
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  plugins:\n"
        "    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: \"*\"}]}\n"
        "    preFilter: {enabled: [{name: Coscheduling}]}\n"
        "    postFilter: {enabled: [{name: Coscheduling}]}\n"
        "    permit: {enabled: [{name: Coscheduling}]}\n"
        "    reserve: {enabled: [{name: Coscheduling}]}\n"
        "  pluginConfig:\n"
        "  - name: Coscheduling\n"
        "    args: {kubeschedPluginPath: " FIX_COSCHEDULING
        ", permitWaitingTimeSeconds: 10, podGroupBackoffSeconds: 1}\n";
    t.reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(t.reg, yaml, "c.yaml", &t.cfg, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(
        ks__loader_load_config_plugins(t.cfg, t.reg, ks__host_api(), &t.mods, err, sizeof(err)), 0,
        "%s", err);
    cr_assert_eq(ks__config_check_plugin_args(t.cfg, t.reg, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = t.cfg,
                           .plans = t.plans,
                           .seed = 1,
                           .binding_workers = 1,
                           .now_ns = clock_now,
                           .source = {.bind = bind_ok}};
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
    ks_framework *fw = ks__scheduler_framework(t.s, 0);
    for (size_t i = 0; i < fw->ninst; i++)
        if (!strcmp(fw->inst[i].name, "Coscheduling")) {
            t.desc = fw->inst[i].desc;
            t.self = fw->inst[i].self;
        }
    cr_assert_not_null(t.desc);
    ks_queued_pod probe = {.initial_attempt_ns = 1};
    t.unix_offset = ks_queued_pod_initial_attempt_unix_ns(&probe) - 1;
    t.snap = ks__snapshot_new();
    char node[] = "{'metadata':{'name':'node','uid':'uid-node'},'status':{'allocatable':"
                  "{'cpu':'4','memory':'8Gi','pods':'110'}}}";
    cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(node)), 0);
}

static void teardown(void)
{
    ks__snapshot_free(t.snap);
    ks__scheduler_free(t.s);
    ks__config_plans_free(t.plans, t.cfg->nprofiles);
    ks__config_free(t.cfg);
    ks__registry_free(t.reg);
    ks__loader_close_all(t.mods);
    th_fini();
}

TestSuite(coscheduling_unit, .init = setup, .fini = teardown, .timeout = 60);

/* st.MakePod().Name(name).Namespace(ns).UID(name) with a priority, an optional
 * scheduling.x-k8s.io/pod-group label and node. */
static ks_pod *mk_pod(const char *ns, const char *name, int prio, const char *group,
                      const char *node)
{
    char json[1024], labels[256] = "", nodename[128] = "";
    if (group)
        snprintf(labels, sizeof(labels), ",'labels':{'scheduling.x-k8s.io/pod-group':'%s'}", group);
    if (node)
        snprintf(nodename, sizeof(nodename), "'nodeName':'%s',", node);
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'%s','uid':'%s'%s},'spec':{%s'priority':%d,"
             "'containers':[{'name':'c','image':'i'}]}}",
             name, ns, name, labels, nodename, prio);
    return th_pod(json);
}

/* tu.MakePodGroup().Name(name).Namespace(ns).MinMember(min).Time(created) (created: Unix s). */
static void mk_pod_group(const char *ns, const char *name, int min, int64_t created_s)
{
    char json[512], ts[64];
    time_t c = (time_t)created_s;
    struct tm tm;
    gmtime_r(&c, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":"
             "{\"name\":\"%s\",\"namespace\":\"%s\",\"creationTimestamp\":\"%s\"},\"spec\":"
             "{\"minMember\":%d}}",
             name, ns, ts, min);
    cJSON *o = cJSON_Parse(json);
    char err[256];
    const struct ks_resource *res = ks__custom_find("scheduling.x-k8s.io/v1alpha1", "PodGroup");
    cr_assert_eq(ks__scheduler_apply_custom(t.s, res, o, 0, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
}

/* A cycle for pod over the current cluster (its snapshot taken now). */
static ks_cycle *mk_cycle(ks_pod *pod)
{
    ks__cache_update_snapshot(ks__scheduler_cache(t.s), t.snap);
    ks_cycle *c = ks__cycle_new(t.snap, pod);
    c->fw = ks__scheduler_framework(t.s, 0);
    return c;
}

/* ---- TestLess ------------------------------------------------------------------------------ */

typedef struct less_case {
    const char *name;
    int p1_prio, p2_prio;
    const char *p1_ns, *p2_ns, *p1_group, *p2_group;
    int p1_attempt_s, p2_attempt_s; /* InitialAttemptTimestamp: now + s; 0: unset */
    /* PodGroups: {ns, name, created: now + s} */
    struct {
        const char *ns, *name;
        int created_s;
    } pgs[2];
    int want;
} less_case;

Test(coscheduling_unit, less)
{
    enum { low = 10, high = 100 };
    static const less_case cases[] = {
        {"p1.priority less than p2.priority", low, high, "ns1", "ns2", NULL, NULL, 0, 0, {{0}}, 0},
        {"p1.priority greater than p2.priority",
         high,
         low,
         "ns1",
         "ns2",
         NULL,
         NULL,
         0,
         0,
         {{0}},
         1},
        {"equal priority. p1 is added to schedulingQ earlier than p2",
         high,
         high,
         "ns1",
         "ns2",
         NULL,
         NULL,
         1,
         2,
         {{0}},
         1},
        {"equal priority. p2 is added to schedulingQ earlier than p1",
         high,
         high,
         "ns1",
         "ns2",
         NULL,
         NULL,
         2,
         1,
         {{0}},
         0},
        {"p1.priority less than p2.priority, p1 belongs to pg1",
         low,
         high,
         "ns1",
         "ns2",
         "pg1",
         NULL,
         0,
         0,
         {{"ns1", "pg1", 0}},
         0},
        {"p1.priority greater than p2.priority, p1 belongs to pg1",
         high,
         low,
         "ns1",
         "ns2",
         "pg1",
         NULL,
         0,
         0,
         {{"ns1", "pg1", 0}},
         1},
        {"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
         high,
         high,
         "ns1",
         "ns2",
         "pg1",
         NULL,
         1,
         2,
         {{"ns1", "pg1", 1}},
         1},
        {"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
         high,
         high,
         "ns1",
         "ns2",
         "pg1",
         NULL,
         2,
         1,
         {{"ns1", "pg1", 2}},
         0},
        {"p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
         low,
         high,
         "ns1",
         "ns2",
         "pg1",
         "pg2",
         0,
         0,
         {{"ns1", "pg1", 1}, {"ns2", "pg2", 2}},
         0},
        {"p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
         high,
         low,
         "ns1",
         "ns2",
         "pg1",
         "pg1",
         0,
         0,
         {{"ns1", "pg1", 1}, {"ns2", "pg2", 2}},
         1},
        {"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 "
         "belongs to pg2",
         high,
         high,
         "ns1",
         "ns2",
         "pg1",
         "pg2",
         1,
         2,
         {{"ns1", "pg1", 1}, {"ns2", "pg2", 2}},
         1},
        {"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 "
         "belongs to pg1",
         low,
         high,
         "ns",
         "ns",
         "pg2",
         "pg1",
         1,
         2,
         {{"ns", "pg1", 1}, {"ns", "pg2", 2}},
         0},
        {"equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
         high,
         high,
         "ns1",
         "ns2",
         "pg2",
         "pg2",
         1,
         1,
         {{"ns1", "pg1", 1}, {"ns2", "pg2", 2}},
         1},
        {"equal priority and creation time, and p2 belong to pg2",
         high,
         high,
         "ns1",
         "ns2",
         NULL,
         "pg2",
         1,
         1,
         {{"ns2", "pg2", 2}},
         1},
    };
    /* upstream's `now`, a whole second so that the PodGroups' second-precision times are exact */
    int64_t now_s = (t.now + t.unix_offset) / SEC + 100;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const less_case *c = &cases[i];
        char n1[32], n2[32], g[2][32];
        snprintf(n1, sizeof(n1), "p1-%zu", i);
        snprintf(n2, sizeof(n2), "p2-%zu", i);
        /* each case its own PodGroups: names made unique per case */
        for (int k = 0; k < 2; k++)
            if (c->pgs[k].name) {
                snprintf(g[k], sizeof(g[k]), "%s-%zu", c->pgs[k].name, i);
                mk_pod_group(c->pgs[k].ns, g[k], 1, now_s + c->pgs[k].created_s);
            }
        char g1[32] = "", g2[32] = "";
        if (c->p1_group)
            snprintf(g1, sizeof(g1), "%s-%zu", c->p1_group, i);
        if (c->p2_group)
            snprintf(g2, sizeof(g2), "%s-%zu", c->p2_group, i);
        ks_queued_pod q1 = {.pod = mk_pod(c->p1_ns, n1, c->p1_prio, c->p1_group ? g1 : NULL, NULL)};
        ks_queued_pod q2 = {.pod = mk_pod(c->p2_ns, n2, c->p2_prio, c->p2_group ? g2 : NULL, NULL)};
        if (c->p1_attempt_s)
            q1.initial_attempt_ns = (now_s + c->p1_attempt_s) * SEC - t.unix_offset;
        if (c->p2_attempt_s)
            q2.initial_attempt_ns = (now_s + c->p2_attempt_s) * SEC - t.unix_offset;
        cr_expect_eq(t.desc->less(t.self, &q1, &q2), c->want, "%s", c->name);
    }
}

/* ---- TestPermit ---------------------------------------------------------------------------- */

static ks_code permit(ks_pod *pod, int64_t *timeout_ms, char *msg, size_t len)
{
    ks_cycle *c = mk_cycle(pod);
    ks_status *st = ks_status_new(c);
    *timeout_ms = 0;
    ks_code code = t.desc->permit(t.self, c, pod, ks_intern("node"), timeout_ms, st);
    msg[0] = '\0';
    for (size_t i = 0; i < ks_status_reason_count(st); i++)
        snprintf(msg + strlen(msg), len - strlen(msg), "%s%s", i ? ", " : "",
                 ks_status_reason_at(st, i));
    ks__cycle_free(c);
    return code;
}

Test(coscheduling_unit, permit)
{
    mk_pod_group("ns", "pg1", 1, 0);
    mk_pod_group("ns", "pg2", 2, 0);
    char msg[256];
    int64_t ms;
    /* pods do not belong to any podGroup */
    cr_expect_eq(permit(mk_pod("ns", "p", 0, NULL, NULL), &ms, msg, sizeof(msg)), KS_SUCCESS);
    /* pods belong to a pg1, but quorum not satisfied (pg2: minMember 2) */
    cr_expect_eq(permit(mk_pod("ns", "p", 0, "pg2", NULL), &ms, msg, sizeof(msg)), KS_WAIT);
    cr_expect_eq(ms, 10000, "permitWaitingTimeSeconds");
    /* pods belong to a podGroup, and quorum satisfied */
    cr_expect_eq(permit(mk_pod("ns", "p", 0, "pg1", NULL), &ms, msg, sizeof(msg)), KS_SUCCESS);
    /* a group that does not exist */
    cr_expect_eq(permit(mk_pod("ns", "p", 0, "nope", NULL), &ms, msg, sizeof(msg)),
                 KS_UNSCHEDULABLE);
    cr_expect_str_eq(msg, "PodGroup not found");
}

/* ---- TestPostFilter ------------------------------------------------------------------------ */

static ks_code post_filter(ks_pod *pod, char *msg, size_t len)
{
    ks_cycle *c = mk_cycle(pod);
    ks_status *st = ks_status_new(c);
    ks_post_filter_result res;
    memset(&res, 0, sizeof(res));
    ks_code code = t.desc->post_filter(t.self, c, pod, NULL, &res, st);
    msg[0] = '\0';
    for (size_t i = 0; i < ks_status_reason_count(st); i++)
        snprintf(msg + strlen(msg), len - strlen(msg), "%s%s", i ? ", " : "",
                 ks_status_reason_at(st, i));
    ks__cycle_free(c);
    return code;
}

Test(coscheduling_unit, post_filter)
{
    char msg[256];
    /* pod does not belong to any pod group */
    mk_pod_group("ns", "pg2", 2, 0);
    cr_expect_eq(post_filter(mk_pod("ns", "p", 0, NULL, NULL), msg, sizeof(msg)), KS_UNSCHEDULABLE);
    cr_expect_str_eq(msg, "can not find pod group");
    /* enough pods assigned, do not reject all (pg1: minMember 1, p1 on node) */
    mk_pod_group("ns", "pg1", 1, 0);
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, mk_pod("ns", "p1", 0, "pg1", "node")), 0);
    cr_expect_eq(post_filter(mk_pod("ns", "p", 0, "pg1", NULL), msg, sizeof(msg)),
                 KS_UNSCHEDULABLE);
    cr_expect_str_eq(msg, "");
    /* pod failed at filter phase, reject all pods (pg3: minMember 2, one placed) */
    mk_pod_group("ns", "pg3", 2, 0);
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, mk_pod("ns", "p3", 0, "pg3", "node")), 0);
    cr_expect_eq(post_filter(mk_pod("ns", "p", 0, "pg3", NULL), msg, sizeof(msg)),
                 KS_UNSCHEDULABLE);
    cr_expect_str_eq(msg, "PodGroup ns/pg3 gets rejected due to Pod p is unschedulable even after "
                          "PostFilter");
}

/* ---- TestPodGroupBackoffTime --------------------------------------------------------------- */

/* After PostFilter rejected a group with all its pods present, PreFilter refuses it for
 * podGroupBackoffSeconds: "podGroup ns/pg1 failed recently", UnschedulableAndUnresolvable. */
Test(coscheduling_unit, pod_group_backoff_time)
{
    mk_pod_group("ns", "pg1", 3, 0);
    ks_pod *pods[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "pod%d", i + 1);
        pods[i] = mk_pod("ns", name, 0, "pg1", NULL);
        cr_assert_eq(ks__scheduler_on_pod_add(t.s, pods[i]), 0);
    }
    char msg[256];
    cr_expect_eq(post_filter(pods[1], msg, sizeof(msg)), KS_UNSCHEDULABLE);
    ks_cycle *c = mk_cycle(pods[2]);
    ks_status *st = ks_status_new(c);
    ks_code code = t.desc->pre_filter(t.self, c, pods[2], NULL, st);
    cr_expect_eq(code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_expect_str_eq(ks_status_reason_at(st, 0), "podGroup ns/pg1 failed recently");
    ks__cycle_free(c);
    /* the backoff (1 s) passes on the scheduler's clock */
    t.now += 2 * SEC;
    c = mk_cycle(pods[2]);
    st = ks_status_new(c);
    cr_expect_eq(t.desc->pre_filter(t.self, c, pods[2], NULL, st), KS_SUCCESS);
    ks__cycle_free(c);
}

/* ---- kubesched's events: a pod leaving a node ------------------------------------------------ */

/* The plugin's hint for an assigned pod's delete: a pod of another group (or of none) makes room,
 * so the rejected member is queued; one of its own group does not (the group's own members are
 * forgotten when it is rejected: that must not send it straight back). A member of a same-named
 * group in another namespace is another group. */
Test(coscheduling_unit, pod_delete_hint_skips_the_group_own_members)
{
    ks_cluster_event_hint ev[8];
    size_t n = t.desc->events_with_hints(t.self, ev, 8);
    ks_queueing_hint_fn hint = NULL;
    for (size_t i = 0; i < n && i < 8; i++)
        if (ev[i].event.resource == KS_RES_ASSIGNED_POD && (ev[i].event.actions & KS_ACT_DELETE))
            hint = ev[i].hint;
    cr_assert_not_null(hint, "no hint for an assigned pod's delete");
    ks_pod *waiting = mk_pod("ns", "w", 0, "pg1", NULL);
    ks_pod *lone = mk_pod("ns", "lone", 0, NULL, NULL);
    struct {
        ks_pod *gone;
        ks_queueing_hint want;
    } cases[] = {
        {mk_pod("ns", "sibling", 0, "pg1", "node"), KS_QUEUE_SKIP},
        {mk_pod("ns", "other", 0, "pg2", "node"), KS_QUEUE},
        {mk_pod("ns", "plain", 0, NULL, "node"), KS_QUEUE},
        {mk_pod("other-ns", "namesake", 0, "pg1", "node"), KS_QUEUE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ks_event_info info = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE},
                              .old_pod = cases[i].gone};
        cr_expect_eq(hint(t.self, waiting, &info), cases[i].want, "case %zu", i);
    }
    /* a pod without a group is not Coscheduling's to hold back: any delete may help it */
    ks_pod *plain_gone = mk_pod("ns", "plain2", 0, NULL, "node");
    ks_event_info info = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, .old_pod = plain_gone};
    cr_expect_eq(hint(t.self, lone, &info), KS_QUEUE);
    /* the pods are th_pod's: th_fini releases them */
}
