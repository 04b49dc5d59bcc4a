/*
 * GangScheduling (plugins/gangscheduling), ported from upstream v1.37.2 gangscheduling_test.go:
 * its events and hints (Test_isSchedulableAfterPodAdded, _PodGroupAdded, _PodGroupUpdated) and
 * TestGangSchedulingFlow (PreEnqueue, then Permit with siblings waiting), the CPG=false cases
 * (kubesched has no CompositePodGroup gate), messages word for word. The plugin reads the
 * PodGroups and members through the SDK: the tests give the host a PodGroup store of their own
 * (ks__host_set_sched), a Permit hook that records what was allowed, and a real cycle whose
 * activation requests they read.
 */
#include "../../common/tests/hint_test.h"
#include "api/podgroup_objects.h"
#include "sched/host_api.h"

extern const ks_plugin_desc ks_plugin_gang_scheduling;

static ks_podgroup_store *G;
static ks_pod *g_pods[32];
static int g_owned[32]; /* the assumed copies this file made; th_pod's are the harness's */
static size_t g_npods;
static ks_pod_group *g_groups[32];
static size_t g_ngroups;
/* The fake waiting-pod map: uids waiting on Permit, and those the plugin allowed. */
static char g_waiting[16][32], g_allowed[16][32];
static size_t g_nwaiting, g_nallowed;

static int fake_permit(void *ctx, const char *uid, const char *plugin, int allow, const char *msg)
{
    (void)ctx;
    (void)msg;
    cr_assert_str_eq(plugin, "GangScheduling");
    cr_assert(allow, "GangScheduling never rejects a waiting pod");
    for (size_t i = 0; i < g_nwaiting; i++)
        if (!strcmp(g_waiting[i], uid)) {
            snprintf(g_allowed[g_nallowed++], 32, "%s", uid);
            return 0;
        }
    return KS_ENOTFOUND; /* not waiting: upstream's GetWaitingPod returns nil */
}

static void gang_init(void)
{
    th_init();
    G = ks__podgroup_store_new();
    cr_assert_not_null(G);
    ks__host_set_sched(&(ks_host_sched){.podgroups = G});
    ks__host_set_permit_hook(fake_permit, NULL);
    g_npods = g_ngroups = g_nwaiting = g_nallowed = 0;
}

static void gang_fini(void)
{
    ks__host_set_sched(NULL);
    ks__host_set_permit_hook(NULL, NULL);
    ks__podgroup_store_free(G); /* its references to the pods first */
    G = NULL;
    for (size_t i = 0; i < g_npods; i++)
        if (g_owned[i])
            ks__pod_unref(g_pods[i]);
    for (size_t i = 0; i < g_ngroups; i++)
        ks__podgroup_unref(g_groups[i]);
    ht_fini();
}

TestSuite(gangscheduling, .init = gang_init, .fini = gang_fini);

/* st.MakePod().Namespace(ns).Name(name).UID(name).PodGroupName(group) (group NULL: none). */
static ks_pod *pod(const char *ns, const char *name, const char *group)
{
    char j[512];
    if (group)
        snprintf(j, sizeof(j),
                 "{'metadata':{'namespace':'%s','name':'%s','uid':'%s'},"
                 "'spec':{'schedulingGroup':{'podGroupName':'%s'}}}",
                 ns, name, name, group);
    else
        snprintf(j, sizeof(j), "{'metadata':{'namespace':'%s','name':'%s','uid':'%s'},'spec':{}}",
                 ns, name, name);
    ks_pod *p = th_pod(j); /* released by th_fini */
    cr_assert_lt(g_npods, 32);
    g_pods[g_npods] = p;
    g_owned[g_npods++] = 0;
    return p;
}

/* The assumed copy (spec.nodeName "some-node") of p, kept until the test ends. */
static ks_pod *assumed(ks_pod *p)
{
    ks_pod *a = ks__pod_with_node(p, ks__intern("some-node"));
    cr_assert_lt(g_npods, 32);
    g_pods[g_npods] = a;
    g_owned[g_npods++] = 1;
    return a;
}

/* st.MakePodGroup().Namespace(ns).Name(name).MinCount(min) (min 0: BasicPolicy()). */
static ks_pod_group *group_obj(const char *ns, const char *name, int min, const char *rv)
{
    char j[512], err[256] = "";
    if (min > 0)
        snprintf(j, sizeof(j),
                 "{'apiVersion':'scheduling.k8s.io/v1beta1','kind':'PodGroup','metadata':{"
                 "'namespace':'%s','name':'%s','resourceVersion':'%s'},'spec':{"
                 "'schedulingPolicy':{'gang':{'minCount':%d}}}}",
                 ns, name, rv, min);
    else
        snprintf(j, sizeof(j),
                 "{'apiVersion':'scheduling.k8s.io/v1beta1','kind':'PodGroup','metadata':{"
                 "'namespace':'%s','name':'%s','resourceVersion':'%s'},'spec':{"
                 "'schedulingPolicy':{'basic':{}}}}",
                 ns, name, rv);
    cJSON *o = th_json(j);
    ks_pod_group *pg = NULL;
    cr_assert_eq(ks__podgroup_from_json(o, &pg, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    g_groups[g_ngroups++] = pg;
    return pg;
}

/* Files a PodGroup in the store (cache.AddPodGroup). */
static void add_group(const char *ns, const char *name, int min)
{
    char j[512], err[256] = "";
    snprintf(j, sizeof(j),
             "{'apiVersion':'scheduling.k8s.io/v1beta1','kind':'PodGroup','metadata':{"
             "'namespace':'%s','name':'%s'},'spec':{'schedulingPolicy':%s}}",
             ns, name, min > 0 ? "{'gang':{'minCount':MIN}}" : "{'basic':{}}");
    char *at = strstr(j, "MIN");
    if (at) {
        char rest[512];
        snprintf(rest, sizeof(rest), "%d%s", min, at + 3);
        strcpy(at, rest);
    }
    cJSON *o = th_json(j);
    cr_assert_eq(ks__podgroup_store_apply(G, o, 0, 1, NULL, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
}

/* ---- EventsToRegister ------------------------------------------------------------------------ */

Test(gangscheduling, events_to_register)
{
    ht_plugin(&ks_plugin_gang_scheduling, NULL);
    cr_assert_eq(HT.n, 4);
    ht_expect_event(0, KS_RES_UNSCHEDULED_POD, KS_ACT_ADD, 1);
    ht_expect_event(1, KS_RES_ASSIGNED_POD, KS_ACT_ADD, 1);
    ht_expect_event(2, KS_RES_POD_GROUP, KS_ACT_ADD, 1);
    ht_expect_event(3, KS_RES_POD_GROUP, KS_ACT_UPDATE_ANY, 1);
    /* PodSchedulingGroup is immutable: no Pod/Update; a PodGroup delete makes nothing schedulable
     */
    cr_expect_not(ht_registered(KS_RES_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_LABEL));
    cr_expect_not(ht_registered(KS_RES_POD_GROUP, KS_ACT_DELETE));
}

/* ---- Test_isSchedulableAfterPodAdded (CPG=false) -------------------------------------------- */

Test(gangscheduling, is_schedulable_after_pod_added)
{
    ht_plugin(&ks_plugin_gang_scheduling, NULL);
    ks_pod *p = pod("ns1", "p", "pg1");
    struct {
        const char *name;
        ks_pod *added;
        ks_queueing_hint want;
    } cases[] = {
        {"add a newPod which matches the pod's scheduling group", pod("ns1", "new", "pg1"),
         KS_QUEUE},
        {"add a newPod with NodeName set which matches the pod's scheduling group",
         assumed(pod("ns1", "new2", "pg1")), KS_QUEUE},
        {"add a newPod which doesn't match the pod's namespace", pod("ns2", "new3", "pg1"),
         KS_QUEUE_SKIP},
        {"add a newPod which doesn't match the pod's pod group name", pod("ns1", "new4", "pg2"),
         KS_QUEUE_SKIP},
        {"add a newPod which belongs to a different scheduling group but matches the root CPG",
         pod("ns1", "new5", "pg2"), KS_QUEUE_SKIP},
        {"add a newPod which names no group", pod("ns1", "new6", NULL), KS_QUEUE_SKIP},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ks_event_resource res = cases[i].added->node_name != KS_SYM_EMPTY ? KS_RES_ASSIGNED_POD
                                                                          : KS_RES_UNSCHEDULED_POD;
        cr_expect_eq(ht_pod(p, res, KS_ACT_ADD, NULL, cases[i].added), cases[i].want, "%s",
                     cases[i].name);
    }
    /* a pending pod that names no group is never requeued by a member's arrival */
    cr_expect_eq(ht_pod(pod("ns1", "plain", NULL), KS_RES_UNSCHEDULED_POD, KS_ACT_ADD, NULL,
                        pod("ns1", "new7", "pg1")),
                 KS_QUEUE_SKIP);
}

/* ---- Test_isSchedulableAfterPodGroupAdded (CPG=false) --------------------------------------- */

Test(gangscheduling, is_schedulable_after_pod_group_added)
{
    ht_plugin(&ks_plugin_gang_scheduling, NULL);
    ks_pod *p = pod("ns1", "p", "pg1");
    cr_expect_eq(ht_obj(p, KS_RES_POD_GROUP, KS_ACT_ADD, NULL, group_obj("ns1", "pg1", 2, "1")),
                 KS_QUEUE, "add a pod group which matches the pod's pod group name");
    cr_expect_eq(ht_obj(p, KS_RES_POD_GROUP, KS_ACT_ADD, NULL, group_obj("ns1", "pg2", 2, "1")),
                 KS_QUEUE_SKIP,
                 "add a pod group which doesn't match the pod's scheduling group "
                 "name");
    cr_expect_eq(ht_obj(p, KS_RES_POD_GROUP, KS_ACT_ADD, NULL, group_obj("ns2", "pg1", 2, "1")),
                 KS_QUEUE_SKIP,
                 "add a pod group which doesn't match the pod's scheduling group "
                 "namespace");
    cr_expect_eq(ht_obj(pod("ns1", "plain", NULL), KS_RES_POD_GROUP, KS_ACT_ADD, NULL,
                        group_obj("ns1", "pg1", 2, "1")),
                 KS_QUEUE_SKIP, "a pod without a scheduling group");
}

/* ---- Test_isSchedulableAfterPodGroupUpdated (CPG=false) ------------------------------------- */

Test(gangscheduling, is_schedulable_after_pod_group_updated)
{
    ht_plugin(&ks_plugin_gang_scheduling, NULL);
    ks_pod *p = pod("ns1", "p", "pg1");
    struct {
        const char *name;
        ks_pod *pod;
        ks_pod_group *old_pg, *new_pg;
        ks_queueing_hint want;
    } cases[] = {
        {"minCount decreased matches target pod", p, group_obj("ns1", "pg1", 5, "1"),
         group_obj("ns1", "pg1", 3, "2"), KS_QUEUE},
        {"update Basic policy", p, group_obj("ns1", "pg1", 0, "1"), group_obj("ns1", "pg1", 0, "2"),
         KS_QUEUE_SKIP},
        {"minCount increased matches target pod", p, group_obj("ns1", "pg1", 3, "1"),
         group_obj("ns1", "pg1", 5, "2"), KS_QUEUE_SKIP},
        {"minCount unchanged matches target pod", p, group_obj("ns1", "pg1", 3, "1"),
         group_obj("ns1", "pg1", 3, "2"), KS_QUEUE_SKIP},
        {"minCount decreased but pod group name doesn't match target pod", p,
         group_obj("ns1", "pg2", 5, "1"), group_obj("ns1", "pg2", 3, "2"), KS_QUEUE_SKIP},
        {"minCount decreased but pod group namespace doesn't match target pod", p,
         group_obj("ns2", "pg1", 5, "1"), group_obj("ns2", "pg1", 3, "2"), KS_QUEUE_SKIP},
        {"pod without a scheduling group is skipped", pod("ns1", "plain", NULL),
         group_obj("ns1", "pg1", 5, "1"), group_obj("ns1", "pg1", 3, "2"), KS_QUEUE_SKIP},
        /* kubesched's: a gang that became basic (or the reverse) is no decrease of minCount */
        {"gang became basic", p, group_obj("ns1", "pg1", 5, "1"), group_obj("ns1", "pg1", 0, "2"),
         KS_QUEUE_SKIP},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(ht_obj(cases[i].pod, KS_RES_POD_GROUP, KS_ACT_UPDATE_ANY, cases[i].old_pg,
                            cases[i].new_pg),
                     cases[i].want, "%s", cases[i].name);
}

/* ---- TestGangSchedulingFlow (CPG=false) ------------------------------------------------------ */

typedef struct flow_case {
    const char *name;
    const char *pod;              /* p1, basic-pod or non-gang */
    const char *initial_pods;     /* space-separated names of the members known first */
    int groups;                   /* 1: pg1, pg2, pg3 filed; 2: pg1, pg2; 0: none */
    const char *waiting;          /* the members already waiting on Permit */
    const char *want_pre_enqueue; /* NULL: success */
    ks_code want_pre_enqueue_code;
    const char *want_permit;    /* NULL: success */
    const char *want_activated; /* space-separated, or NULL */
    const char *want_allowed;   /* space-separated, or NULL */
} flow_case;

/* The group of each of upstream's pods. */
static const char *group_of(const char *name)
{
    if (!strcmp(name, "p1") || !strcmp(name, "p2") || !strcmp(name, "p3"))
        return "pg1";
    if (!strcmp(name, "p4") || !strcmp(name, "p5"))
        return "pg2";
    if (!strcmp(name, "basic-pod"))
        return "pg3";
    return NULL;
}

static ks_pod *member_pod(const char *name)
{
    for (size_t i = 0; i < g_npods; i++)
        if (g_pods[i]->node_name == KS_SYM_EMPTY && !strcmp(ks__sym_str(g_pods[i]->name), name))
            return g_pods[i];
    return pod("ns1", name, group_of(name));
}

static void each_word(const char *list, void (*fn)(const char *w, void *ctx), void *ctx)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", list ? list : "");
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
        fn(w, ctx);
}

static void add_member(const char *w, void *ctx)
{
    (void)ctx;
    ks__podgroup_member_add(G, member_pod(w));
}

/* Another pod has already hit Permit and waits: assumed (cache.AssumePod), then its Permit
 * must say Wait. */
static void wait_on_permit(const char *w, void *ctx)
{
    ks_cycle *c = ctx;
    ks_pod *a = assumed(member_pod(w));
    ks__podgroup_member_assume(G, a);
    ks_status *st = ks_status_new(c);
    int64_t timeout = 0;
    cr_assert_eq(
        ks_plugin_gang_scheduling.permit(NULL, c, a, ks__intern("some-node"), &timeout, st),
        KS_WAIT, "Expected Wait status while permitting a pod %s", w);
    snprintf(g_waiting[g_nwaiting++], 32, "%s", w);
}

static void run_flow(const flow_case *tc)
{
    if (tc->groups) {
        add_group("ns1", "pg1", 3);
        add_group("ns1", "pg2", 4);
        if (tc->groups == 1)
            add_group("ns1", "pg3", 0);
    }
    each_word(tc->initial_pods, add_member, NULL);
    ks_pod *p = member_pod(tc->pod);
    ks__podgroup_member_add(G, p);

    ks_status pst;
    ks__status_reset(&pst);
    ks_code code = ks_plugin_gang_scheduling.pre_enqueue(NULL, p, &pst);
    char msg[512];
    ks__status_message(&pst, msg, sizeof(msg));
    if (tc->want_pre_enqueue) {
        cr_expect_eq(code, tc->want_pre_enqueue_code, "%s: PreEnqueue code %d", tc->name, code);
        cr_expect_str_eq(msg, tc->want_pre_enqueue, "%s", tc->name);
        return;
    }
    cr_assert_eq(code, KS_SUCCESS, "%s: PreEnqueue: %s", tc->name, msg);

    ks_status *st;
    ks_cycle *wc = ks__cycle_new(NULL, p);
    each_word(tc->waiting, wait_on_permit, wc);
    ks__cycle_free(wc); /* activations of the others' Permits are not asserted */

    ks_cycle *c = ks__cycle_new(NULL, p);
    ks_pod *a = assumed(p);
    ks__podgroup_member_assume(G, a); /* assumed in the cache, as a pod-by-pod cycle does */
    st = ks_status_new(c);
    int64_t timeout = 0;
    code = ks_plugin_gang_scheduling.permit(NULL, c, a, ks__intern("some-node"), &timeout, st);
    ks__status_message(st, msg, sizeof(msg));
    char got[256] = "";
    for (struct ks_activate_req *r = c->activate; r; r = r->next) {
        size_t n = strlen(got);
        snprintf(got + n, sizeof(got) - n, "%s%s", n ? " " : "", r->uid);
    }
    ks__cycle_free(c);
    if (tc->want_permit) {
        cr_expect_eq(code, KS_WAIT, "%s: Permit code %d", tc->name, code);
        cr_expect_str_eq(msg, tc->want_permit, "%s", tc->name);
        cr_expect_eq(timeout, 5 * 60 * 1000, "%s: permitTimeoutDuration", tc->name);
        /* kubesched also checks what upstream's test asserts only after a success */
        cr_expect_str_eq(got, tc->want_activated ? tc->want_activated : "", "%s: activated",
                         tc->name);
        return;
    }
    cr_expect_eq(code, KS_SUCCESS, "%s: Permit code %d: %s", tc->name, code, msg);
    cr_expect_str_eq(got, tc->want_activated ? tc->want_activated : "", "%s: activated", tc->name);
    char allowed[256] = "";
    for (size_t i = 0; i < g_nallowed; i++) {
        size_t n = strlen(allowed);
        snprintf(allowed + n, sizeof(allowed) - n, "%s%s", n ? " " : "", g_allowed[i]);
    }
    /* upstream wantAllowedPods lists p1 too, which is not waiting (GetWaitingPod nil) */
    cr_expect_str_eq(allowed, tc->want_allowed ? tc->want_allowed : "", "%s: allowed", tc->name);
}

#define UAU KS_UNSCHEDULABLE_AND_UNRESOLVABLE
static const flow_case k_flow[] = {
    {"non-gang pod succeeds immediately", "non-gang", NULL, 1, NULL, NULL, 0, NULL, NULL, NULL},
    {"basic policy pod succeeds immediately", "basic-pod", NULL, 1, NULL, NULL, 0, NULL, NULL,
     NULL},
    {"gang pod fails PreEnqueue when pod group is not yet created", "p1", "p2 p3 p4 p5", 0, NULL,
     "waiting for pods's pod group \"pg1\" to appear in scheduling queue", UAU, NULL, NULL, NULL},
    {"gang pod fails PreEnqueue when quorum is not met", "p1", "p2 p4 p5", 2, NULL,
     "waiting for minCount pods from a gang to appear in scheduling queue", UAU, NULL, NULL, NULL},
    {"gang pod passes PreEnqueue, but waits at Permit", "p1", "p2 p3 p4 p5", 2, "p2 p4 p5", NULL, 0,
     "waiting for minCount pods from a gang to be scheduled", "p3", NULL},
    {"final gang pod arrives at Permit and allows all waiting pods from a gang", "p1",
     "p2 p3 p4 p5", 2, "p2 p3 p4 p5", NULL, 0, NULL, NULL, "p2 p3"},
};

Test(gangscheduling, flow_non_gang) { run_flow(&k_flow[0]); }
Test(gangscheduling, flow_basic_policy) { run_flow(&k_flow[1]); }
Test(gangscheduling, flow_pod_group_not_created) { run_flow(&k_flow[2]); }
Test(gangscheduling, flow_quorum_not_met) { run_flow(&k_flow[3]); }
Test(gangscheduling, flow_waits_at_permit) { run_flow(&k_flow[4]); }
Test(gangscheduling, flow_final_pod_allows_the_gang) { run_flow(&k_flow[5]); }

/* A member already bound counts as scheduled (upstream assignedPods), and a PodGroup that is
 * gone by Permit is an Error with the lister's NotFound wrapped. */
Test(gangscheduling, bound_members_count_and_a_missing_group_is_an_error)
{
    add_group("ns1", "pg1", 2);
    ks_pod *bound = assumed(pod("ns1", "b", "pg1")); /* spec.nodeName set: bound */
    ks__podgroup_member_add(G, bound);
    ks_pod *p = pod("ns1", "p", "pg1");
    ks__podgroup_member_add(G, p);
    ks_cycle *c = ks__cycle_new(NULL, p);
    ks_pod *a = assumed(p);
    ks__podgroup_member_assume(G, a);
    ks_status *st = ks_status_new(c);
    int64_t timeout = 0;
    cr_expect_eq(ks_plugin_gang_scheduling.permit(NULL, c, a, ks__intern("n"), &timeout, st),
                 KS_SUCCESS);
    ks_pod *q = pod("ns1", "q", "pg9");
    ks__podgroup_member_add(G, q);
    st = ks_status_new(c);
    cr_expect_eq(
        ks_plugin_gang_scheduling.permit(NULL, c, assumed(q), ks__intern("n"), &timeout, st),
        KS_ERROR);
    char msg[256];
    ks__status_message(st, msg, sizeof(msg));
    cr_expect_str_eq(msg, "failed to get podGroup ns1/pg9: podgroup.scheduling.k8s.io \"pg9\" not "
                          "found");
    ks__cycle_free(c);
}

/* Forget (a Permit rejection, a binding failure) makes the member unscheduled again: the next
 * member's Permit waits instead of allowing. */
Test(gangscheduling, a_forgotten_member_no_longer_counts)
{
    add_group("ns1", "pg1", 2);
    ks_pod *p1 = pod("ns1", "p1", "pg1"), *p2 = pod("ns1", "p2", "pg1");
    ks__podgroup_member_add(G, p1);
    ks__podgroup_member_add(G, p2);
    ks_pod *a1 = assumed(p1);
    ks__podgroup_member_assume(G, a1);
    ks__podgroup_member_forget(G, a1);
    ks_cycle *c = ks__cycle_new(NULL, p2);
    ks_status *st = ks_status_new(c);
    int64_t timeout = 0;
    cr_expect_eq(
        ks_plugin_gang_scheduling.permit(NULL, c, assumed(p2), ks__intern("n"), &timeout, st),
        KS_WAIT);
    ks__cycle_free(c);
    /* a deleted member no longer counts for PreEnqueue either */
    add_group("ns1", "pg2", 2);
    ks_pod *q1 = pod("ns1", "q1", "pg2"), *q2 = pod("ns1", "q2", "pg2");
    ks__podgroup_member_add(G, q1);
    ks__podgroup_member_add(G, q2);
    ks_status pst;
    ks__status_reset(&pst);
    cr_expect_eq(ks_plugin_gang_scheduling.pre_enqueue(NULL, q1, &pst), KS_SUCCESS);
    ks__podgroup_member_remove(G, q2);
    cr_expect_eq(ks_plugin_gang_scheduling.pre_enqueue(NULL, q1, &pst), UAU);
}

/* ---- TestPlacementFeasible (isCPG=false, cpgFeatureGate=false) ------------------------------ */

#define S KS_SUCCESS
#define W KS_WAIT
#define U KS_UNSCHEDULABLE
Test(gangscheduling, placement_feasible)
{
    static const struct {
        const char *name;
        int min; /* 0: a basic policy (getMinCount: 1) */
        int children, initial;
        int npods;
        ks_code pods[3], want[3];
    } cases[] = {
        {"All pods succeed, minCount met at end", 2, 2, 0, 2, {S, S}, {W, S}},
        {"First pod fails, minCount not satisfiable", 3, 3, 0, 1, {U}, {U}},
        {"Second pod fails, minCount not satisfiable", 2, 2, 0, 2, {S, U}, {W, U}},
        {"Non-gang pod group with 0 scheduled pods fails", 0, 1, 0, 1, {U}, {U}},
        {"Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, 0, 1, {S}, {S}},
        {"Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, 1, 1, {U}, {S}},
        {"More than minCount pods, all succeed", 2, 3, 0, 3, {S, S, S}, {W, S, S}},
        {"More than minCount pods, first fails", 2, 3, 0, 3, {U, S, S}, {W, W, S}},
        {"More than minCount pods, minCount not satisfiable", 2, 3, 0, 2, {U, U}, {W, U}},
        {"1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, 1, 2, {S, S}, {W, S}},
        {"minCount already met by scheduled pods", 2, 1, 2, 1, {U}, {S}},
        {"1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining",
         3,
         2,
         1,
         1,
         {U},
         {U}},
        {"1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining",
         4,
         2,
         1,
         1,
         {S},
         {U}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        ks_pod_group *pg = group_obj("ns1", "pg", cases[c].min, "1");
        int scheduled = cases[c].initial;
        for (int i = 0; i < cases[c].npods; i++) {
            scheduled += cases[c].pods[i] == S;
            ks_status st;
            ks__status_reset(&st);
            ks_code got = ks_plugin_gang_scheduling.placement_feasible(
                NULL, pg, scheduled, cases[c].children - (i + 1), &st);
            cr_expect_eq(got, cases[c].want[i], "%s: step %d: %d", cases[c].name, i, got);
        }
    }
    /* the messages */
    ks_pod_group *pg = group_obj("ns1", "pg", 4, "1");
    const struct {
        int scheduled, remaining;
        ks_code want;
        const char *msg;
    } msgs[] = {
        {3, 0, U, "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"},
        {1, 3, W, "minCount (4) is not yet satisfied: 1 scheduled, 3 remaining"},
        {4, 0, S, ""},
    };
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
        ks_status st;
        ks__status_reset(&st);
        char msg[256];
        cr_expect_eq(ks_plugin_gang_scheduling.placement_feasible(NULL, pg, msgs[i].scheduled,
                                                                  msgs[i].remaining, &st),
                     msgs[i].want);
        ks__status_message(&st, msg, sizeof(msg));
        cr_expect_str_eq(msg, msgs[i].msg);
    }
}
