/*
 * The storage kinds' changes as cluster events (core/sched/volume_events.c): a change filed in the
 * store reaches the parked pods' rejectors' hints with both objects, under upstream's resource and
 * action, and its objects are retired into the store (the queue keeps a copy of the event for the
 * pods in flight) rather than freed at once. A scheduler with the default profile runs in memory.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/store.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/queue.h"
#include "sched/scheduler.h"
#include "sched/volume_events.h"

#define SEC 1000000000LL

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    int64_t now;
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

#define CONFIG                                                                                     \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"                                                           \
    "profiles:\n"                                                                                  \
    "- schedulerName: default-scheduler\n"

static void setup(void)
{
    th_init();
    memset(&t, 0, sizeof(t));
    char err[512] = "";
    t.now = 100 * SEC;
    t.reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(t.reg, CONFIG, "test.yaml", &t.cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(ks__config_plan(t.cfg, t.reg, &t.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = t.cfg,
                           .plans = t.plans,
                           .seed = 1,
                           .binding_workers = 1,
                           .now_ns = clock_now,
                           .source = {.bind = bind_ok}};
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

TestSuite(volume_events, .init = setup, .fini = teardown, .timeout = 60);

static ks_queue_counts counts(void)
{
    ks_queue_counts c;
    ks__queue_counts(ks__scheduler_queue(t.s), &c);
    return c;
}

static void drain(void)
{
    while (ks__scheduler_schedule_one(t.s, 0))
        ;
    ks__scheduler_wait_bindings(t.s);
}

/* Files obj in the scheduler's store and sends the change; returns the event's label. */
static const char *change(const char *json, int deleted, size_t *moved)
{
    static char label[64];
    char err[512] = "";
    ks_store_change chg;
    cJSON *obj = th_json(json);
    int rc = ks__store_apply_ex(ks__scheduler_store(t.s), obj, deleted, 1, &chg, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "%s", err);
    *moved = ks__scheduler_on_volume_change(t.s, &chg, label);
    cr_assert_null(chg.old_obj, "the change's references were taken over");
    cr_assert_null(chg.new_obj);
    return label;
}

Test(volume_events, a_claim_added_moves_only_the_pods_that_use_it)
{
    cr_assert_eq(ks__scheduler_on_node_add(
                     t.s, th_node("{'metadata':{'name':'n1'},'status':{'allocatable':{'cpu':'4',"
                                  "'memory':'8Gi','pods':'110'}}}")),
                 0);
    cr_assert_eq(ks__scheduler_on_pod_add(
                     t.s, th_pod("{'metadata':{'name':'db','namespace':'default','uid':'db'},"
                                 "'spec':{'containers':[{'name':'c'}],'volumes':[{'name':'d',"
                                 "'persistentVolumeClaim':{'claimName':'data'}}]}}")),
                 0);
    drain();
    cr_assert_eq(counts().unschedulable, 1, "its claim does not exist yet");
    size_t moved = 99;
    const char *label = change("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                               "'name':'other','namespace':'default'},'spec':{'accessModes':"
                               "['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}}}",
                               0, &moved);
    cr_expect_str_eq(label, "PersistentVolumeClaimAdd");
    cr_expect_eq(moved, 0, "another claim: the hint says QueueSkip");
    cr_expect_eq(counts().unschedulable, 1);
    label = change("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'data',"
                   "'namespace':'default'},'spec':{'accessModes':['ReadWriteOnce'],'resources':"
                   "{'requests':{'storage':'1Gi'}}}}",
                   0, &moved);
    cr_expect_eq(moved, 1, "its claim: the rejector's hint says Queue");
    cr_expect_eq(counts().unschedulable, 0);
    /* An update and a delete carry their own labels. */
    label = change("{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'data',"
                   "'namespace':'default'},'spec':{'accessModes':['ReadWriteOnce'],'volumeName':"
                   "'pv','resources':{'requests':{'storage':'1Gi'}}}}",
                   0, &moved);
    cr_expect_str_eq(label, "PersistentVolumeClaimUpdate");
    label = change("{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':"
                   "'s'},'provisioner':'p'}",
                   0, &moved);
    cr_expect_str_eq(label, "StorageClassAdd");
    label = change("{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':"
                   "'s'},'provisioner':'p'}",
                   1, &moved);
    cr_expect_str_eq(label, "StorageClassDelete");
    cr_expect_eq(ks__store_volobj_count(ks__scheduler_store(t.s), KS_VK_STORAGE_CLASS), 0);
}

/* The event objects outlive the change while a pod is in flight (the queue records the event for
 * it without references of its own); they are released once nothing is in flight. */
Test(volume_events, objects_of_an_event_outlive_the_store_while_a_pod_is_in_flight)
{
    ks_store *st = ks__scheduler_store(t.s);
    char err[512] = "";
    ks_store_change chg;
    cJSON *obj = th_json("{'kind':'PersistentVolume','metadata':{'name':'pv'},'spec':{}}");
    cr_assert_eq(ks__store_apply_ex(st, obj, 0, 0, &chg, err, sizeof(err)), 0, "%s", err);
    ks__volobj *held = ks__volobj_ref(chg.new_obj);
    cr_assert_eq(atomic_load(&held->refs), 3, "the store, the change and this test");
    ks__store_retire(st, &chg, 0); /* a pod in flight: kept */
    cr_assert_eq(ks__store_apply_ex(st, obj, 1, 0, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(obj);
    cr_expect_eq(atomic_load(&held->refs), 2, "deleted from the store, still retired");
    ks_store_change none = {0};
    ks__store_retire(st, &none, 1); /* nothing in flight any more: released */
    cr_expect_eq(atomic_load(&held->refs), 1, "only this test's reference is left");
    ks__volobj_unref(held);
}
