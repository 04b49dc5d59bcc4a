/*
 * The queue's side of a configuration reload (ks__queue_reprofile, ks__queue_kick): every pod is
 * given its profile again, forgets the old rejectors, goes through PreEnqueue again, and activeQ
 * is rebuilt with the QueueSort in force after the publish; a pod in flight is treated the same
 * when it comes back; a kicked pop returns NULL once without closing the queue.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/intern.h"
#include "api/objects.h"
#include "harness.h"
#include "sched/queue.h"

static struct {
    int reverse;      /* QueueSort: by name, reversed after the "reload" */
    int profiles;     /* 2: schedulerNames a and b; 1: only a (b's pods have none) */
    int published;    /* publish ran, under the lock, before any remap */
    int remapped;     /* remap calls */
    int remap_before; /* a remap ran before publish */
    int64_t now;
} Q;

static int by_name(void *ctx, const ks_queued_pod *a, const ks_queued_pod *b)
{
    (void)ctx;
    int c = strcmp(ks__sym_str(a->pod->name), ks__sym_str(b->pod->name));
    return Q.reverse ? c > 0 : c < 0;
}

static int profile_of(void *ctx, const ks_pod *pod)
{
    (void)ctx;
    const char *n = ks__sym_str(pod->scheduler_name);
    if (!strcmp(n, "a"))
        return 0;
    return !strcmp(n, "b") && Q.profiles == 2 ? 1 : -1;
}

static ks_code pre_enqueue(void *ctx, ks_queued_pod *qp)
{
    (void)ctx;
    if (qp->profile < 0) {
        snprintf(qp->gated_message, sizeof(qp->gated_message), "no profile");
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

static int64_t now(void *ctx)
{
    (void)ctx;
    return Q.now;
}

static void publish(void *ctx)
{
    (void)ctx;
    Q.published = 1;
    Q.reverse = 1;
    Q.profiles = 1;
}

static void remap(void *ctx, ks_queued_pod *qp)
{
    (void)ctx, (void)qp;
    if (!Q.published)
        Q.remap_before = 1;
    Q.remapped++;
}

static ks_queue *mkq(void)
{
    memset(&Q, 0, sizeof(Q));
    Q.profiles = 2;
    Q.now = 1000;
    ks_queue_opts o = {
        .initial_backoff_ns = 0, .max_backoff_ns = 0, .max_unschedulable_ns = 300LL * 1000000000};
    ks_queue_hooks h = {
        .less = by_name, .pre_enqueue = pre_enqueue, .profile_of = profile_of, .now_ns = now};
    return ks__queue_new(&o, &h);
}

static ks_pod *pod(const char *name, const char *sched)
{
    char json[256];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'u-%s'},'spec':{'schedulerName':'%s'}}", name, name,
             sched);
    return th_pod(json);
}

TestSuite(queue_reprofile, .init = th_init, .fini = th_fini);

Test(queue_reprofile, every_pod_is_requeued_under_the_new_profiles_and_queue_sort)
{
    ks_queue *q = mkq();
    ks_pod *p1 = pod("p1", "a"), *p2 = pod("p2", "a"), *p3 = pod("p3", "a"), *x = pod("x", "b"),
           *f = pod("f", "a");
    cr_assert_eq(ks__queue_add(q, f), 0);
    ks_queued_pod *inflight = ks__queue_pop(q, 0); /* f: in flight during the reload */
    cr_assert_str_eq(ks__sym_str(inflight->pod->name), "f");
    ks__queue_add(q, p1);
    ks__queue_add(q, p2);
    ks__queue_add(q, p3);
    ks__queue_add(q, x);
    /* x was rejected by plugin bit 3 of profile b: parked unschedulable */
    ks_queued_pod *popped[4], *qx = NULL;
    for (int i = 0; i < 4; i++) {
        popped[i] = ks__queue_pop(q, 0);
        cr_assert_not_null(popped[i]);
    }
    for (int i = 0; i < 4; i++) {
        if (!strcmp(ks__sym_str(popped[i]->pod->name), "x")) {
            qx = popped[i];
            continue;
        }
        ks__queue_requeue_failed(q, popped[i], 0); /* no rejector: an error, back to activeQ */
    }
    cr_assert_not_null(qx);
    qx->rejector_plugins = 1u << 3;
    ks__queue_requeue_failed(q, qx, 0);
    ks_queue_counts c;
    ks__queue_counts(q, &c);
    cr_assert_eq(c.unschedulable, 1);

    ks__queue_reprofile(q, publish, remap, NULL);
    cr_expect_eq(Q.remap_before, 0, "remap ran before publish");
    cr_expect_eq(Q.remapped, 4, "every queued pod (not the one in flight) is remapped now");
    ks__queue_counts(q, &c);
    cr_expect_eq(c.gated, 1, "x (its profile gone) is not gated");
    cr_expect_eq(c.unschedulable, 0);
    cr_expect_eq(c.active, 3);
    /* the new QueueSort: reversed names */
    const char *want[] = {"p3", "p2", "p1"};
    for (int i = 0; i < 3; i++) {
        ks_queued_pod *qp = ks__queue_pop(q, 0);
        cr_assert_not_null(qp);
        cr_expect_str_eq(ks__sym_str(qp->pod->name), want[i], "pop %d", i);
        cr_expect_eq(qp->rejector_plugins, 0);
        ks__queue_done(q, qp);
    }
    /* the pod in flight comes back (rejected by plugin bit 5 of the old profile): remapped,
     * without the old rejector, to activeQ rather than parked on an old plugin's events */
    inflight->rejector_plugins = 1u << 5;
    ks__queue_requeue_failed(q, inflight, 0);
    cr_expect_eq(Q.remapped, 5, "the pod in flight was not remapped when it came back");
    ks__queue_counts(q, &c);
    cr_expect_eq(c.unschedulable, 0, "the pod in flight was parked under the old rejectors");
    cr_expect_eq(c.active + c.backoff, 1);
    ks__queue_free(q);
}

Test(queue_reprofile, a_kicked_pop_returns_null_once_without_closing)
{
    ks_queue *q = mkq();
    ks_pod *p = pod("p", "a");
    ks__queue_kick(q);
    cr_expect_null(ks__queue_pop(q, 1), "a kicked blocking pop did not return");
    cr_assert_eq(ks__queue_add(q, p), 0);
    ks_queued_pod *qp = ks__queue_pop(q, 1);
    cr_assert_not_null(qp, "the queue stayed kicked or closed");
    ks__queue_done(q, qp);
    ks__queue_free(q);
}
