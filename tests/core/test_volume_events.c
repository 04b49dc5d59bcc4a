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
    cr_expect_str_eq(label, "storage.k8s.io/StorageClassAdd");
    label = change("{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':"
                   "'s'},'provisioner':'p'}",
                   1, &moved);
    cr_expect_str_eq(label, "storage.k8s.io/StorageClassDelete");
    cr_expect_eq(ks__store_volobj_count(ks__scheduler_store(t.s), KS_VK_STORAGE_CLASS), 0);
}

/* The event objects outlive the change while a pod is in flight: the queue keeps the event for
 * it with references of its own, released once no pod in flight predates it. */
Test(volume_events, objects_of_an_event_outlive_the_store_while_a_pod_is_in_flight)
{
    ks_store *st = ks__scheduler_store(t.s);
    ks_queue *q = ks__scheduler_queue(t.s);
    cr_assert_eq(ks__scheduler_on_pod_add(
                     t.s, th_pod("{'metadata':{'name':'p','namespace':'default','uid':'p'},"
                                 "'spec':{'containers':[{'name':'c'}]}}")),
                 0);
    ks_queued_pod *qp = ks__queue_pop(q, 0);
    cr_assert_not_null(qp);
    char err[512] = "";
    ks_store_change chg;
    cJSON *obj = th_json("{'kind':'PersistentVolume','metadata':{'name':'pv'},'spec':{}}");
    cr_assert_eq(ks__store_apply_ex(st, obj, 0, 0, &chg, err, sizeof(err)), 0, "%s", err);
    ks__volobj *held = ks__volobj_ref(chg.new_obj);
    cr_assert_eq(atomic_load(&held->refs), 3, "the store, the change and this test");
    ks__scheduler_on_volume_change(t.s, &chg, NULL); /* recorded for the pod in flight */
    cr_assert_eq(atomic_load(&held->refs), 3, "the store, the queue's event and this test");
    cr_assert_eq(ks__store_apply_ex(st, obj, 1, 0, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(obj);
    cr_expect_eq(atomic_load(&held->refs), 2, "deleted from the store, still held by the event");
    ks__queue_done(q, qp); /* nothing in flight any more: the event is dropped */
    cr_expect_eq(atomic_load(&held->refs), 1, "only this test's reference is left");
    ks__volobj_unref(held);
}

/* Each storage kind's events go out as its SDK resource (ABI 1.5; VolumeAttachment ABI 1.6). */
Test(volume_events, kinds_map_to_their_resources)
{
    static const ks_event_resource want[KS_VK_COUNT] = {
        KS_RES_PERSISTENT_VOLUME, KS_RES_PERSISTENT_VOLUME_CLAIM,
        KS_RES_STORAGE_CLASS,     KS_RES_CSI_NODE,
        KS_RES_CSI_DRIVER,        KS_RES_CSI_STORAGE_CAPACITY,
        KS_RES_VOLUME_ATTACHMENT};
    for (int k = 0; k < KS_VK_COUNT; k++)
        cr_expect_eq(ks__volume_event_resource((ks_vol_kind)k), want[k], "%s",
                     ks__volobj_kind_name((ks_vol_kind)k));
    cr_expect_eq(ks__volume_event_resource(KS_VK_COUNT), (ks_event_resource)0);
}
