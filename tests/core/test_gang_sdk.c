/*
 * What plugin ABI 1.8 gives a gang-scheduling plugin, on a scheduler in memory (bindings succeed
 * at once, a fake queue clock): the waiting-pod walk (upstream IterateOverWaitingPods), Reject by
 * any plugin, activation at the end of a successful cycle (PodsToActivate), the pod lister, the
 * objects of a watched resource and their queue events, and Permit deadlines on a simulated
 * source's virtual clock.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/custom_objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/scheduler.h"

#define SEC 1000000000LL

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    int64_t now;
    int binds;
    const ks_resource *res; /* Gang's watched resource */
    int activate_on_permit; /* Gang's Permit asks to activate every pod named "parked-*" */
    int reject_at_permit;   /* ... and then rejects the pod itself */
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

/* Gang: Permit waits 5 s for pods labelled gang=wait; watches example.com/v1 Widget; rejects at
 * PreFilter pods labelled needs=widget while no Widget "w" exists (registered for Widget Add). */
static void *gang_create(const ks_args *args, ks_error *e)
{
    (void)args;
    t.res = ks_resource_watch("example.com/v1", "Widget", "widgets", e);
    return t.res ? (void *)&t : NULL;
}
static void gang_destroy(void *self) { (void)self; }

static void activate_parked(void *ctx, const ks_pod *pod)
{
    if (!strncmp(ks_sym_str(ks_pod_name(pod)), "parked-", 7))
        ks_activate_pod(ctx, pod);
}

static ks_code gang_pre_filter(void *self, ks_cycle *c, const ks_pod *p, ks_prefilter_result *r,
                               ks_status *st)
{
    (void)self, (void)c, (void)r;
    if (ks_pod_label(p, ks_intern("needs")) != ks_intern("widget"))
        return KS_SUCCESS;
    const ks_object *w = ks_resource_get(t.res, ks_pod_namespace(p), ks_intern("w"));
    ks_object_release(w);
    if (w)
        return KS_SUCCESS;
    ks_status_reason(st, "no widget");
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static ks_code gang_permit(void *self, ks_cycle *c, const ks_pod *p, ks_sym node,
                           int64_t *timeout_ms, ks_status *st)
{
    (void)self, (void)node;
    if (t.activate_on_permit)
        ks_pods_each(c, ks_pod_namespace(p), ks_intern("app"), ks_intern("x"), activate_parked, c);
    if (t.reject_at_permit) {
        ks_status_reason(st, "not now");
        return KS_UNSCHEDULABLE;
    }
    if (ks_pod_label(p, ks_intern("gang")) != ks_intern("wait"))
        return KS_SUCCESS;
    *timeout_ms = 5000;
    return KS_WAIT;
}

static size_t gang_events(void *self, ks_cluster_event *out, size_t cap)
{
    (void)self;
    if (cap >= 1)
        out[0] = (ks_cluster_event){ks_resource_event(t.res), KS_ACT_ADD};
    return 1;
}

static const ks_plugin_desc gang_desc = {.size = sizeof(ks_plugin_desc),
                                         .name = "Gang",
                                         .create = gang_create,
                                         .destroy = gang_destroy,
                                         .pre_filter = gang_pre_filter,
                                         .permit = gang_permit,
                                         .events_to_register = gang_events};

static const char *k_config = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "profiles:\n"
                              "- schedulerName: default-scheduler\n"
                              "  plugins:\n"
                              "    preFilter: {enabled: [{name: Gang}]}\n"
                              "    permit: {enabled: [{name: Gang}]}\n";

static void start(uint32_t source_flags)
{
    char err[512] = "";
    th_init();
    memset(&t, 0, sizeof(t));
    t.now = 100 * SEC;
    t.reg = th_registry_new();
    cr_assert_eq(ks__registry_add(t.reg, &gang_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(t.reg, k_config, "t.yaml", &t.cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = t.cfg,
                           .plans = t.plans,
                           .seed = 1,
                           .binding_workers = 2,
                           .now_ns = clock_now,
                           .source = {.bind = bind_ok, .flags = source_flags}};
    cr_assert_eq(ks__scheduler_new(&o, &t.s, err, sizeof(err)), 0, "%s", err);
}

static void teardown(void)
{
    ks__scheduler_free(t.s);
    ks__config_plans_free(t.plans, t.cfg->nprofiles);
    ks__config_free(t.cfg);
    ks__registry_free(t.reg);
    th_fini();
}

TestSuite(gang_sdk, .fini = teardown, .timeout = 60);

static void node(const char *name, const char *cpu)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'uid-%s','labels':{'kubernetes.io/hostname':'%s'}},"
             "'status':{'allocatable':{'cpu':'%s','memory':'8Gi','pods':'110'}}}",
             name, name, name, cpu);
    cr_assert_eq(ks__scheduler_on_node_add(t.s, th_node(json)), 0);
}

/* A pod in namespace ns with labels (JSON members, e.g. "'gang':'wait'"), requesting cpu. */
static void pod_in(const char *ns, const char *name, const char *cpu, const char *labels)
{
    char json[768];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'%s','uid':'uid-%s','labels':{%s}},"
             "'spec':{'containers':[{'name':'c','image':'i','resources':{'requests':{'cpu':'%s'}}}"
             "]}}",
             name, ns, name, labels, cpu);
    cr_assert_eq(ks__scheduler_on_pod_add(t.s, th_pod(json)), 0);
}
static void pod(const char *name, const char *cpu, const char *labels)
{
    pod_in("default", name, cpu, labels);
}

static void drain(void)
{
    while (ks__scheduler_schedule_one(t.s, 0))
        ks__scheduler_wait_bindings_settled(t.s);
}

static ks_queue_counts counts(void)
{
    ks_queue_counts c;
    ks__queue_counts(ks__scheduler_queue(t.s), &c);
    return c;
}

typedef struct seen {
    char names[8][32];
    size_t n;
    char pending[64];
    const char *allow; /* allow this pod from inside the walk */
} seen;

static void record_waiting(void *ctx, const ks_waiting_pod_info *wp)
{
    seen *s = ctx;
    const char *name = ks_sym_str(ks_pod_name(wp->pod));
    if (s->n < 8)
        snprintf(s->names[s->n++], 32, "%s", name);
    snprintf(s->pending, sizeof(s->pending), "%zu:%s", wp->npending,
             wp->npending ? wp->pending_plugins[0] : "");
    if (s->allow && !strcmp(name, s->allow))
        cr_expect_eq(ks_permit_allow(ks_pod_uid(wp->pod), "Gang"), 0);
}

/* The walk visits the waiting pods in the order they began to wait, with their pending plugin,
 * and may allow one from inside (no host lock is held). */
Test(gang_sdk, waiting_pods_walk_in_order_and_allow_inside)
{
    start(0);
    node("n1", "8");
    pod("a", "1", "'gang':'wait'");
    t.now += SEC; /* a entered the queue first */
    pod("b", "1", "'gang':'wait'");
    drain();
    seen s = {.allow = "a"};
    cr_expect_eq(ks_waiting_pods_each(NULL, record_waiting, &s), 2);
    cr_expect_str_eq(s.names[0], "a"); /* began to wait first */
    cr_expect_str_eq(s.names[1], "b");
    cr_expect_str_eq(s.pending, "1:Gang");
    ks__scheduler_wait_bindings_settled(t.s);
    cr_expect_eq(t.binds, 1, "the pod allowed inside the walk was bound");
    seen again = {0};
    cr_expect_eq(ks_waiting_pods_each(NULL, record_waiting, &again), 1);
    cr_expect_str_eq(again.names[0], "b");
}

/* upstream WaitingPod.Reject: any plugin, pending or not, ends the wait; Allow only removes a
 * plugin the pod waits for. */
Test(gang_sdk, any_plugin_rejects_only_pending_ones_allow)
{
    start(0);
    node("n1", "8");
    pod("w", "1", "'gang':'wait'");
    drain();
    cr_expect_eq(ks_permit_allow("uid-w", "Other"), KS_ENOTFOUND);
    cr_expect_eq(ks_permit_reject("uid-nope", "Other", "x"), KS_ENOTFOUND);
    cr_expect_eq(ks_permit_reject("uid-w", "Other", "the gang gave up"), 0);
    ks__scheduler_wait_bindings_settled(t.s);
    seen s = {0};
    cr_expect_eq(ks_waiting_pods_each(NULL, record_waiting, &s), 0, "still waiting");
    cr_expect_eq(t.binds, 0);
    ks_queue_counts c = counts();
    cr_expect_eq(c.unschedulable + c.backoff, 1, "the rejected pod went back to the queue");
}

/* PodsToActivate: asked during Permit, done at the end of the successful scheduling cycle: a pod
 * parked as unschedulable goes to activeQ. */
Test(gang_sdk, activation_at_the_end_of_a_successful_cycle)
{
    start(0);
    node("n1", "1");
    pod("parked-1", "4", "'app':'x'"); /* too big: NodeResourcesFit parks it */
    drain();
    cr_assert_eq(counts().unschedulable, 1);
    t.activate_on_permit = 1;
    /* it waits at Permit: no binding cycle ends, only the scheduling cycle can activate */
    pod("trigger", "100m", "'app':'x','gang':'wait'");
    cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
    ks__scheduler_wait_bindings_settled(t.s);
    ks_queue_counts c = counts();
    cr_expect_eq(c.unschedulable, 0, "still parked after the trigger's cycle succeeded");
    cr_expect_eq(c.active, 1);
}

/* ... and not when the cycle fails (upstream activates only after a successful Permit). */
Test(gang_sdk, no_activation_when_the_cycle_fails)
{
    start(0);
    node("n1", "1");
    pod("parked-1", "4", "'app':'x'");
    drain();
    t.activate_on_permit = 1;
    t.reject_at_permit = 1;
    pod("trigger", "100m", "'app':'x'");
    cr_assert_eq(ks__scheduler_schedule_one(t.s, 0), 1);
    ks__scheduler_wait_bindings_settled(t.s);
    cr_expect_eq(counts().active, 0);
}

typedef struct names {
    char list[256];
} names;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void collect(void *ctx, const ks_pod *pod)
{
    names *n = ctx;
    size_t len = strlen(n->list);
    snprintf(n->list + len, sizeof(n->list) - len, "%s%s", len ? " " : "",
             ks_sym_str(ks_pod_name(pod)));
}

/* The sorted names visited by ks_pods_each(ns, app=value). */
static void lister(const char *ns, const char *value, char *out, size_t len)
{
    names n = {{0}};
    ks_pods_each(NULL, ks_intern(ns), ks_intern("app"), ks_intern(value), collect, &n);
    char *v[16];
    size_t k = 0;
    for (char *tok = strtok(n.list, " "); tok && k < 16; tok = strtok(NULL, " "))
        v[k++] = tok;
    qsort(v, k, sizeof(*v), cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < k; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", v[i]);
}

/* The pod lister: pending and assigned pods of the namespace with the label, each once (a pod
 * waiting at Permit is both assumed in the cache and in flight in the queue). */
Test(gang_sdk, pods_each_lists_pending_and_assigned_once)
{
    start(0);
    node("n1", "2");
    pod("bound", "1", "'app':'x'");
    pod("waiting", "1", "'app':'x','gang':'wait'");
    drain();
    pod("pending", "8", "'app':'x'");
    pod("other-label", "1", "'app':'y'");
    pod_in("kube-system", "other-ns", "1", "'app':'x'");
    char got[256];
    lister("default", "x", got, sizeof(got));
    cr_expect_str_eq(got, "bound pending waiting");
    lister("kube-system", "x", got, sizeof(got));
    cr_expect_str_eq(got, "other-ns");
}

/* The lister's index follows the pods: a deleted pod leaves it, a relabelled one moves, a pod
 * added after the first question joins. */
Test(gang_sdk, pods_each_index_follows_pod_events)
{
    start(0);
    node("n1", "8");
    pod("a", "100m", "'app':'x'");
    pod("b", "100m", "'app':'x'");
    char got[256];
    lister("default", "x", got, sizeof(got)); /* builds the index for app */
    cr_expect_str_eq(got, "a b");
    pod("c", "100m", "'app':'x'");
    ks_pod *b = th_pod("{'metadata':{'name':'b','namespace':'default','uid':'uid-b','labels':"
                       "{'app':'x'}},'spec':{'containers':[{'name':'c','image':'i'}]}}");
    ks_pod *b2 = th_pod("{'metadata':{'name':'b','namespace':'default','uid':'uid-b','labels':"
                        "{'app':'y'}},'spec':{'containers':[{'name':'c','image':'i'}]}}");
    cr_assert_eq(ks__scheduler_on_pod_update(t.s, b, b2, 1), 0);
    lister("default", "x", got, sizeof(got));
    cr_expect_str_eq(got, "a c");
    lister("default", "y", got, sizeof(got));
    cr_expect_str_eq(got, "b");
    ks_pod *a = th_pod("{'metadata':{'name':'a','namespace':'default','uid':'uid-a','labels':"
                       "{'app':'x'}},'spec':{'containers':[{'name':'c','image':'i'}]}}");
    cr_assert_eq(ks__scheduler_on_pod_delete(t.s, a), 0);
    lister("default", "x", got, sizeof(got));
    cr_expect_str_eq(got, "c");
}

/* A watched resource: objects read by path (["key"] for dotted keys), times parsed, and an Add
 * of one is an event that requeues the pods the plugin rejected. */
Test(gang_sdk, watched_resource_objects_and_events)
{
    start(0);
    node("n1", "8");
    pod("needy", "1", "'needs':'widget'");
    drain();
    cr_assert_eq(counts().unschedulable, 1);
    const struct ks_resource *res = ks__custom_find("example.com/v1", "Widget");
    cr_assert_not_null(res);
    cr_expect_eq((const void *)res, (const void *)t.res);
    cr_expect_eq(ks_resource_event(t.res), KS_RES_CUSTOM_FIRST + res->index);
    cJSON *w = cJSON_Parse("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":"
                           "{\"name\":\"w\",\"namespace\":\"default\",\"creationTimestamp\":"
                           "\"2026-12-01T10:00:01Z\"},\"spec\":{\"size\":3,\"limits\":"
                           "{\"example.com/gpu\":\"2\"}}}");
    char err[256] = "";
    const char *label = NULL;
    cr_assert_eq(ks__scheduler_apply_custom(t.s, res, w, 0, &label, err, sizeof(err)), 0, "%s",
                 err);
    cr_expect_str_eq(label, "widgets.v1.example.comAdd");
    cr_expect_eq(counts().unschedulable, 0, "the Widget Add did not requeue the pod");
    const ks_object *o = ks_resource_get(t.res, ks_intern("default"), ks_intern("w"));
    cr_assert_not_null(o);
    int64_t v = 0;
    cr_expect_eq(ks_object_get_int(o, "spec.size", &v), 0);
    cr_expect_eq(v, 3);
    cr_expect_eq(ks_object_get_quantity(o, "spec.limits[\"example.com/gpu\"]", 1, &v), 0);
    cr_expect_eq(v, 2000);
    cr_expect_eq(ks_object_get_time(o, "metadata.creationTimestamp", &v), 0);
    cr_expect_eq(v, 1796119201LL * SEC);
    const char *key = NULL;
    cr_expect_eq(ks_object_key_at(o, "spec.limits", 0, &key), 0);
    cr_expect_str_eq(key, "example.com/gpu");
    cr_expect_eq(ks_object_get_string(o, "spec.size", &key), KS_ETYPE);
    ks_object_release(o);
    cr_assert_eq(ks__scheduler_apply_custom(t.s, res, w, 1, &label, err, sizeof(err)), 0);
    cr_expect_str_eq(label, "widgets.v1.example.comDelete");
    cr_expect_null(ks_resource_get(t.res, ks_intern("default"), ks_intern("w")));
    cJSON_Delete(w);
    ks_error e = {0};
    cr_expect_null(ks_resource_watch("v1", "Pod", "pods", &e), "the core group is refused");
    cr_expect_eq((const void *)ks_resource_watch("example.com/v1", "Widget", "widgets", &e),
                 (const void *)t.res, "the same resource twice is one handle");
}

/* With a simulated source, a Permit deadline is on the scheduler's (virtual) clock: nothing
 * expires before it, exactly at it the pod is rejected with upstream's timeout message. */
Test(gang_sdk, permit_deadline_on_the_virtual_clock)
{
    start(KS_SOURCE_SIMULATED);
    node("n1", "8");
    pod("w", "1", "'gang':'wait'");
    drain();
    int64_t deadline = ks__binding_next_permit_deadline(t.s);
    cr_assert_gt(deadline, t.now);
    cr_expect_eq(deadline - t.now, 5 * SEC);
    t.now = deadline - 1;
    cr_expect_eq(ks__binding_expire_permits(t.s), 0);
    t.now = deadline;
    cr_expect_eq(ks__binding_expire_permits(t.s), 1);
    ks__scheduler_wait_bindings(t.s);
    cr_expect_eq(t.binds, 0);
    cr_expect_eq(ks__binding_next_permit_deadline(t.s), -1);
}

/* ks_object_patch on a simulated source changes the in-memory object (status: only its status,
 * as the subresource), and the change is that resource's Update event; ks_pod_event checks its
 * type. */
Test(gang_sdk, object_patch_in_memory)
{
    start(KS_SOURCE_SIMULATED);
    const struct ks_resource *res = ks__custom_find("example.com/v1", "Widget");
    cJSON *w = cJSON_Parse("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":"
                           "{\"name\":\"w\",\"namespace\":\"default\"},\"spec\":{\"size\":3}}");
    char err[256] = "";
    cr_assert_eq(ks__scheduler_apply_custom(t.s, res, w, 0, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(w);
    ks_sym ns = ks_intern("default"), name = ks_intern("w");
    cr_expect_eq(ks_object_patch(t.res, ns, name, 1,
                                 "{\"spec\":{\"size\":9},\"status\":{\"phase\":\"Scheduled\"}}"),
                 0);
    const ks_object *o = ks_resource_get(t.res, ns, name);
    const char *phase = NULL;
    int64_t size = 0;
    cr_expect_eq(ks_object_get_string(o, "status.phase", &phase), 0);
    cr_expect_str_eq(phase, "Scheduled");
    cr_expect_eq(ks_object_get_int(o, "spec.size", &size), 0);
    cr_expect_eq(size, 3, "a status write changed the spec");
    ks_object_release(o);
    cr_expect_eq(ks_object_patch(t.res, ns, name, 0, "{\"spec\":{\"size\":9}}"), 0);
    o = ks_resource_get(t.res, ns, name);
    cr_expect_eq(ks_object_get_int(o, "spec.size", &size), 0);
    cr_expect_eq(size, 9);
    ks_object_release(o);
    cr_expect_eq(ks_object_patch(t.res, ns, ks_intern("nope"), 0, "{}"), KS_ENOTFOUND);
    cr_expect_eq(ks_object_patch(t.res, ns, name, 0, "[1]"), KS_EINVAL);
    ks_pod *p = th_pod("{'metadata':{'name':'e','namespace':'default','uid':'uid-e'}}");
    cr_expect_eq(ks_pod_event(NULL, p, "Normal", "GangReady", "all members placed"), 0);
    cr_expect_eq(ks_pod_event(NULL, p, "Info", "GangReady", "x"), KS_EINVAL);
}
