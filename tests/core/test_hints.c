/*
 * Queueing hints in the scheduler (upstream v1.37 isPodWorthRequeuing, MatchClusterEvents,
 * NodeSchedulingPropertiesChange): a scheduler with the default profile (plus two test plugins)
 * runs in memory, pods are rejected, and cluster events go through the rejectors' hints: a hint
 * that says QueueSkip leaves the pod unschedulable, Queue moves it, a plugin that registered
 * events without hints (an ABI <= 1.3 .so) still moves it on a registered event, a hint that
 * answers neither counts as Queue ("Error"), and every hint run is observed in
 * scheduler_queueing_hint_execution_duration_seconds{plugin, event, hint}.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/queue.h"
#include "sched/scheduler.h"
#include "util/metrics.h"

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

/* Rejects a node labelled `label` (Unschedulable, so the pod is parked with this plugin as its
 * rejector). */
static ks_code reject_labelled(const ks_node_info *ni, const char *label, ks_status *st)
{
    if (ks_node_label(ks_node_info_node(ni), ks_intern(label)) == KS_SYM_ABSENT)
        return KS_SUCCESS;
    ks_status_reason(st, label);
    return KS_UNSCHEDULABLE;
}

/* OldAbi: as a plugin built against ABI 1.3: events_to_register only (Node/UpdateNodeLabel). */
static ks_code old_abi_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                              ks_status *st)
{
    (void)self, (void)c, (void)p;
    return reject_labelled(ni, "old-abi-blocked", st);
}
static size_t old_abi_events(void *self, ks_cluster_event *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event ev[] = {{KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL}};
    return ks_events_copy(ev, 1, out, cap);
}
static const ks_plugin_desc old_abi_desc = {.size = sizeof(ks_plugin_desc),
                                            .name = "OldAbi",
                                            .filter = old_abi_filter,
                                            .events_to_register = old_abi_events};

/* Undecided: a hint that answers neither KS_QUEUE nor KS_QUEUE_SKIP (a failed hint). */
static ks_code undecided_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                                ks_status *st)
{
    (void)self, (void)c, (void)p;
    return reject_labelled(ni, "undecided-blocked", st);
}
static int undecided_calls;
static ks_queueing_hint undecided_hint(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self, (void)pod, (void)ev;
    undecided_calls++;
    return (ks_queueing_hint)7;
}
static size_t undecided_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL}, undecided_hint}};
    return ks_event_hints_copy(ev, 1, out, cap);
}
static const ks_plugin_desc undecided_desc = {.size = sizeof(ks_plugin_desc),
                                              .name = "Undecided",
                                              .filter = undecided_filter,
                                              .events_with_hints = undecided_events};

#define CONFIG                                                                                     \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"                                                           \
    "profiles:\n"                                                                                  \
    "- schedulerName: default-scheduler\n"                                                         \
    "  plugins:\n"                                                                                 \
    "    filter: {enabled: [{name: OldAbi}, {name: Undecided}]}\n"

static void setup(void)
{
    th_init();
    memset(&t, 0, sizeof(t));
    undecided_calls = 0;
    char err[512] = "";
    t.now = 100 * SEC;
    t.reg = th_registry_new();
    cr_assert_eq(ks__registry_add(t.reg, &old_abi_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(t.reg, &undecided_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(t.reg, CONFIG, "test.yaml", &t.cfg, err, sizeof(err)), 0,
                 "%s", err);
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

TestSuite(hints, .init = setup, .fini = teardown, .timeout = 60);

static ks_node *mknode(const char *name, const char *cpu, const char *labels, const char *extra)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'uid-%s','labels':{'kubernetes.io/hostname':'%s'%s}"
             "%s},'status':{'allocatable':{'cpu':'%s','memory':'8Gi','pods':'110'}}}",
             name, name, name, labels, extra, cpu);
    return th_node(json);
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

static void drain(void)
{
    while (ks__scheduler_schedule_one(t.s, 0))
        ;
    ks__scheduler_wait_bindings(t.s);
}

static ks_queue_counts counts(void)
{
    ks_queue_counts c;
    ks__queue_counts(ks__scheduler_queue(t.s), &c);
    return c;
}

static uint64_t hints_run(const char *plugin, const char *event, const char *hint)
{
    return ks__metrics_count(
        KS_METRICS_WITH(t.m.queueing_hint_execution_duration, plugin, event, hint));
}

Test(hints, skip_keeps_the_pod_unschedulable_and_queue_moves_it)
{
    ks_node *n1 = mknode("n1", "2", "", "");
    cr_assert_eq(ks__scheduler_on_node_add(t.s, n1), 0);
    pod("big", "4");
    drain();
    cr_assert_eq(counts().unschedulable, 1, "NodeResourcesFit rejected it");

    /* A node too small for it: NodeResourcesFit's hint says QueueSkip. */
    cr_assert_eq(ks__scheduler_on_node_add(t.s, mknode("small", "1", "", "")), 0);
    cr_expect_eq(counts().unschedulable, 1, "a node it cannot fit on leaves it parked");
    cr_expect_eq(hints_run("NodeResourcesFit", "NodeAdd", "QueueSkip"), 1);
    cr_expect_eq(hints_run("NodeResourcesFit", "NodeAdd", "Queue"), 0);

    /* n1's annotations change: no event NodeResourcesFit registered (no hint runs at all). */
    ks_node *n1_annotated = mknode("n1", "2", "", ",'annotations':{'a':'b'}");
    cr_assert_eq(ks__scheduler_on_node_update(t.s, n1, n1_annotated, NULL, NULL), 0);
    cr_expect_eq(counts().unschedulable, 1);
    cr_expect_eq(hints_run("NodeResourcesFit", "NodeUpdateNodeAnnotation", "QueueSkip") +
                     hints_run("NodeResourcesFit", "NodeUpdateNodeAnnotation", "Queue"),
                 0);

    /* n1 grows to 8 CPUs: UpdateNodeAllocatable, and the hint says Queue (backoffQ: still
     * backing off). */
    ks_node *n1_big = mknode("n1", "8", "", ",'annotations':{'a':'b'}");
    ks_cluster_event sent[KS_NODE_CHANGE_MAX];
    size_t nsent = 99;
    cr_assert_eq(ks__scheduler_on_node_update(t.s, n1_annotated, n1_big, sent, &nsent), 0);
    cr_assert_eq(nsent, 1, "only the allocatable changed");
    cr_expect_str_eq(ks__queue_event_label(&sent[0]), "NodeUpdateNodeAllocatable");
    cr_expect_eq(hints_run("NodeResourcesFit", "NodeUpdateNodeAllocatable", "Queue"), 1);
    ks_queue_counts c = counts();
    cr_expect_eq(c.unschedulable, 0);
    cr_expect_eq(c.backoff, 1);
    t.now += 2 * SEC;
    ks__queue_flush_backoff(ks__scheduler_queue(t.s));
    drain();
    cr_expect_eq(t.binds, 1);
}

Test(hints, old_abi_plugin_still_requeues_on_its_registered_events)
{
    ks_node *n1 = mknode("n1", "4", ",'old-abi-blocked':'x'", "");
    cr_assert_eq(ks__scheduler_on_node_add(t.s, n1), 0);
    pod("p", "1");
    drain();
    cr_assert_eq(counts().unschedulable, 1, "OldAbi rejected it");
    /* Node/Add is not among OldAbi's events: no move. */
    cr_assert_eq(ks__scheduler_on_node_add(t.s, mknode("n2", "4", ",'old-abi-blocked':'y'", "")),
                 0);
    cr_expect_eq(counts().unschedulable, 1);
    /* A label update it registered: no hint to ask, so Queue, as before ABI 1.4. */
    ks_node *n1_relabelled = mknode("n1", "4", ",'old-abi-blocked':'x','z':'1'", "");
    cr_assert_eq(ks__scheduler_on_node_update(t.s, n1, n1_relabelled, NULL, NULL), 0);
    cr_expect_eq(counts().unschedulable, 0);
    cr_expect_eq(counts().backoff, 1);
    cr_expect_eq(hints_run("OldAbi", "NodeUpdateNodeLabel", "Queue"), 1);
}

Test(hints, a_hint_that_cannot_decide_counts_as_queue)
{
    ks_node *n1 = mknode("n1", "4", ",'undecided-blocked':'x'", "");
    cr_assert_eq(ks__scheduler_on_node_add(t.s, n1), 0);
    pod("p", "1");
    drain();
    cr_assert_eq(counts().unschedulable, 1, "Undecided rejected it");
    ks_node *n1_relabelled = mknode("n1", "4", ",'undecided-blocked':'x','z':'1'", "");
    cr_assert_eq(ks__scheduler_on_node_update(t.s, n1, n1_relabelled, NULL, NULL), 0);
    cr_expect_eq(undecided_calls, 1);
    cr_expect_eq(counts().unschedulable, 0, "moved as upstream moves a pod whose hint failed");
    cr_expect_eq(hints_run("Undecided", "NodeUpdateNodeLabel", "Error"), 1);
}

Test(hints, only_the_rejectors_hints_run)
{
    ks_node *n1 = mknode("n1", "2", "", "");
    cr_assert_eq(ks__scheduler_on_node_add(t.s, n1), 0);
    pod("big", "4");
    drain();
    /* TaintToleration registered Node/UpdateNodeTaint, but did not reject the pod. */
    ks_node *tainted = th_node("{'metadata':{'name':'n1','uid':'uid-n1','labels':{'kubernetes.io/"
                               "hostname':'n1'}},'spec':{'taints':[{'key':'k','effect':"
                               "'NoSchedule'}]},'status':{'allocatable':{'cpu':'2','memory':"
                               "'8Gi','pods':'110'}}}");
    cr_assert_eq(ks__scheduler_on_node_update(t.s, n1, tainted, NULL, NULL), 0);
    cr_expect_eq(hints_run("TaintToleration", "NodeUpdateNodeTaint", "QueueSkip") +
                     hints_run("TaintToleration", "NodeUpdateNodeTaint", "Queue"),
                 0);
    cr_expect_eq(counts().unschedulable, 1);
}

/* upstream deletePodFromSchedulingQueue: a deleted pending pod that had a nominatedNodeName is an
 * AssignedPod/Delete of it, for the parked pods of lower or equal priority only
 * (getLEPriorityPreCheck); NodeResourcesFit's hint queues them (a nominated pod frees room). */
Test(hints, deleted_nominated_pod_moves_pods_of_lower_or_equal_priority)
{
    cr_assert_eq(ks__scheduler_on_node_add(t.s, mknode("n1", "2", "", "")), 0);
    pod("big", "4"); /* priority 0 */
    drain();
    cr_assert_eq(counts().unschedulable, 1);
    const char *other = "{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s'},"
                        "'spec':{'schedulerName':'other','priority':%d,'containers':[{'name':'c',"
                        "'image':'i'}]},'status':{'nominatedNodeName':'n1'}}";
    char json[512];
    snprintf(json, sizeof(json), other, "lower", "lower", -5);
    ks__scheduler_on_pod_delete(t.s, th_pod(json));
    cr_expect_eq(counts().unschedulable, 1, "its room never counted for a pod of higher priority");
    snprintf(json, sizeof(json), other, "higher", "higher", 10);
    ks__scheduler_on_pod_delete(t.s, th_pod(json));
    cr_expect_eq(counts().unschedulable, 0);
    cr_expect_eq(hints_run("NodeResourcesFit", "AssignedPodDelete", "Queue"), 1);
}

/* ---- matching and classification ------------------------------------------------------------ */

Test(hints, events_match_as_upstream_match_cluster_events)
{
    ks_cluster_event label = {KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL};
    ks_cluster_event generic = {KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_ANY};
    ks_cluster_event reg_label_add = {KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL};
    ks_cluster_event reg_pod_label = {KS_RES_POD, KS_ACT_UPDATE_POD_LABEL};
    ks_cluster_event reg_pod_update = {KS_RES_POD, KS_ACT_UPDATE_ANY};
    ks_cluster_event reg_all = {KS_RES_WILDCARD, KS_ACT_ALL_ANY};
    cr_expect(ks__event_matches(&reg_label_add, &label));
    cr_expect_not(ks__event_matches(&reg_pod_label, &label), "another resource");
    cr_expect_not(ks__event_matches(&reg_pod_label, &generic),
                  "a generic Update only wakes plugins that registered the generic Update");
    cr_expect(ks__event_matches(&reg_pod_update, &generic));
    cr_expect(ks__event_matches(&reg_all, &generic));
    ks_cluster_event target = {KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL};
    cr_expect(ks__event_matches(&reg_pod_label, &target), "Pod covers TargetPod");
    ks_cluster_event reg_assigned = {KS_RES_ASSIGNED_POD, KS_ACT_UPDATE_POD_LABEL};
    cr_expect_not(ks__event_matches(&reg_assigned, &target));
}

static size_t node_events(const char *old_json, const char *new_json, ks_cluster_event *out)
{
    return ks__node_change_events(th_node(new_json), th_node(old_json), out);
}

#define N(spec, status)                                                                            \
    "{'metadata':{'name':'n','resourceVersion':'%d'},'spec':{" spec "},'status':{" status "}}"

static size_t nev(const char *o, const char *n, ks_cluster_event *out)
{
    char a[1024], b[1024];
    snprintf(a, sizeof(a), o, 1);
    snprintf(b, sizeof(b), n, 2);
    return node_events(a, b, out);
}

Test(hints, node_updates_classified_as_node_scheduling_properties_change)
{
    ks_cluster_event ev[KS_NODE_CHANGE_MAX];
    cr_expect_eq(nev(N("", ""), N("", ""), ev), 0, "only the resourceVersion changed");
    cr_expect_eq(nev(N("'unschedulable':true", ""), N("", ""), ev), 1);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_NODE_TAINT, "uncordoned reads as UpdateNodeTaint");
    cr_expect_eq(nev(N("", ""), N("'unschedulable':true", ""), ev), 0, "cordoning moves nothing");
    cr_expect_eq(nev(N("", "'conditions':[{'type':'Ready','status':'False'}]"),
                     N("", "'conditions':[{'type':'Ready','status':'True'}]"), ev),
                 1);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_NODE_CONDITION);
    cr_expect_eq(nev(N("", "'conditions':[{'type':'Ready','status':'True','lastHeartbeatTime':"
                           "'2024-01-01T00:00:00Z'}]"),
                     N("", "'conditions':[{'type':'Ready','status':'True','lastHeartbeatTime':"
                           "'2024-01-01T00:00:10Z'}]"),
                     ev),
                 0, "a heartbeat is no condition change (type -> status only)");
    cr_expect_eq(nev(N("", ""), N("'podPreemptionPolicy':'Never'", ""), ev), 1);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_NODE_PREEMPTION_POLICY);
    cr_expect_eq(nev(N("", "'declaredFeatures':['A']"), N("", "'declaredFeatures':['A','B']"), ev),
                 1);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_NODE_DECLARED_FEATURE);
    cr_expect_eq(nev(N("", ""), N("", "'declaredFeatures':[]"), ev), 0, "nil equals empty");
    /* several at once, in upstream's order */
    cr_expect_eq(nev(N("'unschedulable':true", "'allocatable':{'cpu':'1'}"),
                     N("'taints':[{'key':'k','effect':'NoSchedule'}]", "'allocatable':{'cpu':'2'}"),
                     ev),
                 3);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_NODE_TAINT);
    cr_expect_eq(ev[1].actions, KS_ACT_UPDATE_NODE_ALLOCATABLE);
    cr_expect_eq(ev[2].actions, KS_ACT_UPDATE_NODE_TAINT);
}

Test(hints, pod_updates_classified_as_pod_scheduling_properties_change)
{
    ks_cluster_event ev[KS_POD_CHANGE_MAX];
    ks_pod *a = th_pod("{'metadata':{'name':'p','uid':'p','labels':{'x':'1'}},'spec':{'containers':"
                       "[{'name':'c','image':'i','resources':{'requests':{'cpu':'1'}}}]}}");
    ks_pod *b = th_pod("{'metadata':{'name':'p','uid':'p','labels':{'x':'2'}},'spec':{'containers':"
                       "[{'name':'c','image':'i','resources':{'requests':{'cpu':'2'}}}]}}");
    cr_assert_eq(ks__pod_change_events(b, a, KS_RES_TARGET_POD, ev), 2);
    cr_expect_eq(ev[0].resource, KS_RES_TARGET_POD);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_POD_LABEL);
    cr_expect_eq(ev[1].actions, KS_ACT_UPDATE_POD_SCALE_UP);
    cr_expect_str_eq(ks__queue_event_label(&ev[0]), "TargetPodUpdatePodLabel");
    cr_assert_eq(ks__pod_change_events(a, a, KS_RES_ASSIGNED_POD, ev), 1);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_ANY, "nothing specific: the generic Update");
    cr_expect_str_eq(ks__queue_event_label(&ev[0]), "AssignedPodUpdate");
    /* the generated claim's name appears in status.resourceClaimStatuses (DynamicResources) */
    ks_pod *t0 = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{'containers':[{'name':'c'}],"
                        "'resourceClaims':[{'name':'gpu','resourceClaimTemplateName':'t'}]}}");
    ks_pod *t1 = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{'containers':[{'name':'c'}],"
                        "'resourceClaims':[{'name':'gpu','resourceClaimTemplateName':'t'}]},"
                        "'status':{'resourceClaimStatuses':[{'name':'gpu','resourceClaimName':"
                        "'p-gpu-x1'}]}}");
    cr_assert_eq(ks__pod_change_events(t1, t0, KS_RES_TARGET_POD, ev), 1);
    cr_expect_eq(ev[0].actions, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM);
    cr_expect_str_eq(ks__queue_event_label(&ev[0]), "TargetPodUpdatePodGeneratedResourceClaim");
    ks_cluster_event df = {KS_RES_NODE, KS_ACT_UPDATE_NODE_DECLARED_FEATURE};
    cr_expect_str_eq(ks__queue_event_label(&df), "NodeUpdateNodeDeclaredFeature");
}
