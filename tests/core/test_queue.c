/*
 * The scheduling queue (core/sched/queue.c): ordering, backoff, parking and requeueing by events,
 * gating, updates and deletes of queued and in-flight pods, blocking pop.
 *
 * Pods are built by hand (calloc, refs = 1, uid, priority) so these tests do not depend on the
 * JSON parser; ks__pod_unref frees them. Time is a fake clock the tests move by hand.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/objects.h"
#include "sched/queue.h"

#define SEC 1000000000LL
#define MS 1000000LL

/* Plugin bits used by the tests. */
#define PL_FIT (1u << 0)      /* registered Node events */
#define PL_AFFINITY (1u << 1) /* registered assigned-Pod events (no TargetPod ones) */
#define PL_CLAIMS (1u << 2)   /* a Pending plugin, registered Node events too */
#define PL_GATES (1u << 5)    /* PreEnqueue plugin (scheduling gates) */
#define SCHEDULER_NONE 99u    /* a pod with this scheduler_name has no profile */

static const ks_cluster_event NODE_ADD = {KS_RES_NODE, KS_ACT_ADD};
static const ks_cluster_event POD_ADD = {KS_RES_ASSIGNED_POD, KS_ACT_ADD};
static const ks_cluster_event SERVICE_ADD = {KS_RES_SERVICE, KS_ACT_ADD};
static const ks_cluster_event GATES_GONE = {KS_RES_UNSCHEDULED_POD,
                                            KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED};
static const ks_cluster_event WILDCARD = {KS_RES_WILDCARD, KS_ACT_ALL};

static struct {
    ks_queue *q;
    int64_t now;
    uint64_t registered[KS_RES_WILDCARD + 1]; /* plugin bits that registered each resource */
    ks_pod *pods[4096];                       /* the tests' own references */
    size_t npods;
    int worth_calls;
    char incoming[512]; /* "where:event:new_entity " per incoming hook call */
} t;

static int64_t fake_now(void *ctx)
{
    (void)ctx;
    return t.now;
}

static int test_less(void *ctx, const ks_queued_pod *a, const ks_queued_pod *b)
{
    (void)ctx;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

/* Gates the pod while it has scheduling gates (ngates > 0), as SchedulingGates does. */
static ks_code test_pre_enqueue(void *ctx, ks_queued_pod *qp)
{
    (void)ctx;
    if (qp->pod->ngates == 0)
        return KS_SUCCESS;
    qp->gating_plugin = PL_GATES;
    snprintf(qp->gated_message, sizeof qp->gated_message, "waiting for scheduling gates");
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static int test_worth(void *ctx, const ks_queued_pod *qp, const ks_event_info *info)
{
    (void)ctx;
    const ks_cluster_event *ev = &info->event;
    t.worth_calls++;
    uint64_t reg = t.registered[ev->resource];
    if (qp->gating_plugin)
        return (qp->gating_plugin & reg) ? KS_QHINT_QUEUE : KS_QHINT_SKIP;
    return ((qp->rejector_plugins | qp->pending_plugins) & reg) ? KS_QHINT_QUEUE : KS_QHINT_SKIP;
}

static int test_profile_of(void *ctx, const ks_pod *pod)
{
    (void)ctx;
    return pod->scheduler_name == SCHEDULER_NONE ? -1 : 0;
}

/* Records what the metrics hook would count. */
static void test_incoming(void *ctx, const ks_queued_pod *qp, int where, const char *event,
                          int new_entity)
{
    (void)ctx, (void)qp;
    static const char *const names[] = {"none", "active", "backoff", "unschedulable", "gated"};
    size_t n = strlen(t.incoming);
    snprintf(t.incoming + n, sizeof t.incoming - n, "%s:%s:%d ", names[where], event, new_entity);
}

static ks_queue_hooks test_hooks(void)
{
    ks_queue_hooks h = {.less = test_less,
                        .pre_enqueue = test_pre_enqueue,
                        .worth_requeue = test_worth,
                        .profile_of = test_profile_of,
                        .now_ns = fake_now,
                        .incoming = test_incoming};
    return h;
}

static const ks_queue_opts OPTS = {
    .initial_backoff_ns = 1 * SEC, .max_backoff_ns = 10 * SEC, .max_unschedulable_ns = 300 * SEC};

static void setup(void)
{
    memset(&t, 0, sizeof t);
    t.now = 1000 * SEC;
    t.registered[KS_RES_NODE] = PL_FIT | PL_CLAIMS;
    t.registered[KS_RES_ASSIGNED_POD] = PL_AFFINITY;
    t.registered[KS_RES_UNSCHEDULED_POD] = PL_GATES;
    /* Updates of the pending pod itself (v1.37 TargetPod events): SchedulingGates' gate removal,
     * and a Fit-like plugin's scale-down. PL_AFFINITY registered none. */
    t.registered[KS_RES_TARGET_POD] = PL_GATES | PL_FIT;
    ks_queue_hooks h = test_hooks();
    t.q = ks__queue_new(&OPTS, &h);
    cr_assert_not_null(t.q);
}

/* Frees the queue and checks that it released everything it held: every pod is back to the
 * test's own reference. Runs at the end of each test body (Criterion does not count failures
 * in .fini), through QUEUE_TEST. */
static void finish(void)
{
    ks__queue_free(t.q);
    t.q = NULL;
    for (size_t i = 0; i < t.npods; i++) {
        cr_expect_eq(atomic_load(&t.pods[i]->refs), 1, "pod %s still referenced", t.pods[i]->uid);
        ks__pod_unref(t.pods[i]);
    }
    t.npods = 0;
}

/* Only for a test that stopped early on a failed assertion. */
static void teardown(void)
{
    ks__queue_free(t.q);
    for (size_t i = 0; i < t.npods; i++)
        ks__pod_unref(t.pods[i]);
}

TestSuite(queue, .init = setup, .fini = teardown, .timeout = 30);

/* Test(queue, name) whose body is followed by finish(). */
#define QUEUE_TEST(name)                                                                           \
    static void name##_body(void);                                                                 \
    Test(queue, name)                                                                              \
    {                                                                                              \
        name##_body();                                                                             \
        finish();                                                                                  \
    }                                                                                              \
    static void name##_body(void)

/* A pod owned by the test (released in teardown). */
static ks_pod *pod_new(const char *uid, int32_t priority)
{
    ks_pod *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    atomic_init(&p->refs, 1);
    p->uid = strdup(uid);
    p->priority = priority;
    cr_assert_lt(t.npods, sizeof t.pods / sizeof t.pods[0]);
    t.pods[t.npods++] = p;
    return p;
}

/* Adds a new pod 1 ns after the previous one, so equal priorities pop in the order added. */
static ks_pod *add(const char *uid, int32_t priority)
{
    ks_pod *p = pod_new(uid, priority);
    t.now += 1;
    cr_assert_eq(ks__queue_add(t.q, p), 0);
    return p;
}

static ks_queued_pod *pop(void)
{
    ks_queued_pod *qp = ks__queue_pop(t.q, 0);
    cr_assert_not_null(qp, "activeQ is empty");
    return qp;
}

static void expect_pop(const char *uid)
{
    ks_queued_pod *qp = pop();
    cr_expect_str_eq(qp->pod->uid, uid);
    ks__queue_done(t.q, qp);
}

/* Pops the head, which must be uid, and fails it as unschedulable by `rejectors` (of which
 * `pending` returned Pending). */
static ks_queued_pod *pop_expect(const char *uid)
{
    ks_queued_pod *qp = pop();
    cr_assert_str_eq(qp->pod->uid, uid);
    return qp;
}

static void fail(ks_queued_pod *qp, uint64_t rejectors, uint64_t pending, int err)
{
    qp->rejector_plugins = rejectors | pending;
    qp->pending_plugins = pending;
    ks__queue_requeue_failed(t.q, qp, err);
}

static ks_queue_counts counts(void)
{
    ks_queue_counts c;
    ks__queue_counts(t.q, &c);
    return c;
}

#define EXPECT_COUNTS(a, b, u, g, f)                                                               \
    do {                                                                                           \
        ks_queue_counts c_ = counts();                                                             \
        cr_expect_eq(c_.active, (a), "active %zu", c_.active);                                     \
        cr_expect_eq(c_.backoff, (b), "backoff %zu", c_.backoff);                                  \
        cr_expect_eq(c_.unschedulable, (u), "unschedulable %zu", c_.unschedulable);                \
        cr_expect_eq(c_.gated, (g), "gated %zu", c_.gated);                                        \
        cr_expect_eq(c_.in_flight, (f), "in_flight %zu", c_.in_flight);                            \
    } while (0)

/* ---- ordering ------------------------------------------------------------------------------ */

QUEUE_TEST(pops_higher_priority_first)
{
    add("low", 1);
    add("high", 100);
    add("mid", 50);
    expect_pop("high");
    expect_pop("mid");
    expect_pop("low");
    cr_expect_null(ks__queue_pop(t.q, 0));
}

QUEUE_TEST(pops_equal_priority_in_arrival_order)
{
    const char *uids[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++) {
        add(uids[i], 7);
        t.now += 1 * MS;
    }
    for (size_t i = 0; i < 5; i++)
        expect_pop(uids[i]);
}

QUEUE_TEST(default_order_is_priority_sort)
{
    ks_queue *q = ks__queue_new(NULL, &(ks_queue_hooks){.now_ns = fake_now});
    cr_assert_not_null(q);
    ks_pod *a = pod_new("a", 5), *b = pod_new("b", 9), *c = pod_new("c", 5);
    ks__queue_add(q, a);
    t.now += 1;
    ks__queue_add(q, b);
    t.now += 1;
    ks__queue_add(q, c);
    const char *want[] = {"b", "a", "c"};
    for (int i = 0; i < 3; i++) {
        ks_queued_pod *qp = ks__queue_pop(q, 0);
        cr_assert_not_null(qp);
        cr_expect_str_eq(qp->pod->uid, want[i]);
        ks__queue_done(q, qp);
    }
    ks__queue_free(q);
}

QUEUE_TEST(pop_counts_attempts_and_keeps_first_attempt_time)
{
    add("p", 0);
    int64_t added = t.now; /* upstream InitialAttemptTimestamp: the first move into activeQ */
    t.now += 5 * SEC;
    ks_queued_pod *qp = pop();
    cr_expect_eq(qp->attempts, 1);
    int64_t first = qp->initial_attempt_ns;
    cr_expect_eq(first, added);
    fail(qp, 0, 0, 1);
    t.now += 2 * SEC;
    ks__queue_flush_backoff(t.q);
    qp = pop();
    cr_expect_eq(qp->attempts, 2);
    cr_expect_eq(qp->initial_attempt_ns, first);
    ks__queue_done(t.q, qp);
}

QUEUE_TEST(nonblocking_pop_returns_null_when_empty) { cr_expect_null(ks__queue_pop(t.q, 0)); }

/* ---- backoff ------------------------------------------------------------------------------- */

QUEUE_TEST(backoff_is_zero_before_any_failure)
{
    ks_queued_pod qp = {0};
    cr_expect_eq(ks__queue_backoff_duration_ns(t.q, &qp), 0);
}

QUEUE_TEST(backoff_doubles_per_unschedulable_attempt_up_to_max)
{
    const int64_t want[] = {1, 2, 4, 8, 10, 10, 10};
    ks_queued_pod qp = {0};
    for (int i = 0; i < 7; i++) {
        qp.unschedulable_count = i + 1;
        cr_expect_eq(ks__queue_backoff_duration_ns(t.q, &qp), want[i] * SEC, "count %d", i + 1);
    }
}

QUEUE_TEST(backoff_counts_consecutive_errors_before_unschedulable_attempts)
{
    ks_queued_pod qp = {0};
    qp.unschedulable_count = 4; /* 8 s if it counted */
    const int64_t want[] = {1, 2, 4, 8, 10, 10};
    for (int i = 0; i < 6; i++) {
        qp.consecutive_errors = i + 1;
        cr_expect_eq(ks__queue_backoff_duration_ns(t.q, &qp), want[i] * SEC, "errors %d", i + 1);
    }
    qp.consecutive_errors = 0;
    cr_expect_eq(ks__queue_backoff_duration_ns(t.q, &qp), 8 * SEC);
}

QUEUE_TEST(backoff_does_not_overflow)
{
    ks_queue_opts o = {
        .initial_backoff_ns = 3, .max_backoff_ns = INT64_MAX, .max_unschedulable_ns = 1};
    ks_queue *q = ks__queue_new(&o, &(ks_queue_hooks){.now_ns = fake_now});
    ks_queued_pod qp = {.unschedulable_count = INT32_MAX};
    cr_expect_eq(ks__queue_backoff_duration_ns(q, &qp), INT64_MAX);
    qp.unschedulable_count = 3;
    cr_expect_eq(ks__queue_backoff_duration_ns(q, &qp), 12);
    ks__queue_free(q);
}

QUEUE_TEST(errors_back_off_1s_2s_4s_then_unschedulable_count_takes_over)
{
    add("p", 0);
    const int64_t want[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        ks_queued_pod *qp = pop_expect("p");
        fail(qp, 0, 0, KS_EIO);
        cr_expect_eq(qp->consecutive_errors, i + 1);
        cr_expect_eq(qp->where, KS_Q_BACKOFF);
        cr_expect_eq(ks__queue_next_backoff_expiry(t.q), t.now + want[i] * SEC);
        t.now += want[i] * SEC;
        cr_expect_eq(ks__queue_flush_backoff(t.q), 1);
    }
    /* An unschedulable verdict resets the errors; its own count (1) gives 1 s. */
    ks_queued_pod *qp = pop_expect("p");
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->consecutive_errors, 0);
    cr_expect_eq(qp->unschedulable_count, 1);
    cr_expect_eq(ks__queue_backoff_duration_ns(t.q, qp), 1 * SEC);
}

QUEUE_TEST(failure_without_rejector_plugins_counts_as_error)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    fail(qp, 0, 0, 0);
    cr_expect_eq(qp->consecutive_errors, 1);
    cr_expect_eq(qp->unschedulable_count, 0);
    EXPECT_COUNTS(0, 1, 0, 0, 0);
}

QUEUE_TEST(flush_backoff_moves_only_expired_pods)
{
    add("a", 0);
    add("b", 0);
    ks_queued_pod *a = pop_expect("a");
    ks_queued_pod *b = pop_expect("b");
    fail(a, 0, 0, 1); /* expires at +1 s */
    t.now += 500 * MS;
    fail(b, 0, 0, 1); /* expires at +1.5 s */
    cr_expect_eq(ks__queue_flush_backoff(t.q), 0);
    t.now += 499 * MS;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 0);
    t.now += 1 * MS;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 1);
    EXPECT_COUNTS(1, 1, 0, 0, 0);
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), t.now + 500 * MS);
    expect_pop("a");
    t.now += 500 * MS;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 1);
    expect_pop("b");
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), -1);
}

QUEUE_TEST(backoff_queue_releases_by_expiry_not_priority)
{
    add("low", 1);
    add("high", 9);
    add("late", 50);
    ks_queued_pod *late = pop_expect("late");
    ks_queued_pod *high = pop_expect("high");
    ks_queued_pod *low = pop_expect("low");
    int64_t t0 = t.now;
    fail(low, 0, 0, 1);
    fail(high, 0, 0, 1);
    t.now += 1;
    fail(late, 0, 0, 1); /* expires 1 ns later despite the highest priority */
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), t0 + 1 * SEC);
    t.now = t0 + 1 * SEC;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 2);
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), t0 + 1 * SEC + 1);
    expect_pop("high");
    expect_pop("low");
    t.now += 1;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 1);
    expect_pop("late");
}

/* ---- SchedulerPopFromBackoffQ (on by default since v1.33) --------------------------------------
 */

/* A rejected pod that an event moved to backoffQ: with activeQ empty, pop takes it before its
 * backoff is over, and counts it as entering activeQ by "PopFromBackoffQ". */
QUEUE_TEST(pop_takes_a_rejected_pod_from_backoff_while_active_is_empty)
{
    add("a", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    cr_assert_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1);
    EXPECT_COUNTS(0, 1, 0, 0, 0); /* backing off for 1 s */
    t.incoming[0] = '\0';
    ks_queued_pod *qp = pop_expect("a");
    cr_expect_str_eq(t.incoming, "active:PopFromBackoffQ:1 ");
    EXPECT_COUNTS(0, 0, 0, 0, 1);
    cr_expect_eq(qp->attempts, 2);
    ks__queue_done(t.q, qp);
}

/* activeQ first: the backoff heap is only a fallback. */
QUEUE_TEST(pop_prefers_active_over_backoff)
{
    add("a", 100);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    cr_assert_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1);
    add("b", 0); /* lower priority, but in activeQ */
    expect_pop("b");
    expect_pop("a");
}

/* A pod back from an error waits in its own heap for the flush (upstream entityErrorBackoffQ). */
QUEUE_TEST(pop_leaves_pods_back_from_an_error_to_the_flush)
{
    add("e", 0);
    fail(pop_expect("e"), 0, 0, 1);
    EXPECT_COUNTS(0, 1, 0, 0, 0);
    cr_expect_null(ks__queue_pop(t.q, 0));
    t.now += 1 * SEC;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 1);
    expect_pop("e");
}

/* --feature-gates SchedulerPopFromBackoffQ=false: backoffQ waits for the flush. */
QUEUE_TEST(pop_from_backoff_off_waits_for_the_flush)
{
    ks__queue_free(t.q);
    ks_queue_opts o = OPTS;
    o.no_pop_from_backoff = 1;
    ks_queue_hooks h = test_hooks();
    t.q = ks__queue_new(&o, &h);
    add("a", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    cr_assert_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1);
    cr_expect_null(ks__queue_pop(t.q, 0));
    t.now += 1 * SEC;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 1);
    expect_pop("a");
}

static void *blocking_pop(void *arg);

/* A blocked pop wakes when a rejected pod enters backoffQ. */
QUEUE_TEST(blocking_pop_wakes_for_a_pod_entering_backoff)
{
    add("a", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    pthread_t th;
    pthread_create(&th, NULL, blocking_pop, NULL);
    usleep(20000); /* let it block; if it has not yet, it finds the pod at once: same outcome */
    cr_assert_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1);
    void *got = NULL;
    pthread_join(th, &got);
    cr_assert_not_null(got);
    cr_expect_str_eq(((ks_queued_pod *)got)->pod->uid, "a");
    ks__queue_done(t.q, got);
}

/* ---- unschedulable pods and events ---------------------------------------------------------- */

QUEUE_TEST(unschedulable_pod_waits_for_an_event)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->where, KS_Q_UNSCHEDULABLE);
    EXPECT_COUNTS(0, 0, 1, 0, 0);
    t.now += 60 * SEC;
    cr_expect_eq(ks__queue_flush_backoff(t.q), 0);
    cr_expect_null(ks__queue_pop(t.q, 0));
}

QUEUE_TEST(move_on_event_moves_only_pods_worth_requeue)
{
    add("fit", 0);
    add("aff", 0);
    fail(pop_expect("fit"), PL_FIT, 0, 0);
    fail(pop_expect("aff"), PL_AFFINITY, 0, 0);
    t.now += 30 * SEC; /* both done backing off */

    cr_expect_eq(ks__queue_move_on_event(t.q, &SERVICE_ADD), 0);
    EXPECT_COUNTS(0, 0, 2, 0, 0);
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1);
    EXPECT_COUNTS(1, 0, 1, 0, 0);
    expect_pop("fit");
    cr_expect_eq(ks__queue_move_on_event(t.q, &POD_ADD), 1);
    expect_pop("aff");
}

QUEUE_TEST(move_on_event_respects_remaining_backoff)
{
    add("early", 0);
    add("late", 0);
    fail(pop_expect("early"), PL_FIT, 0, 0);
    t.now += 900 * MS;
    fail(pop_expect("late"), PL_FIT, 0, 0);
    t.now += 200 * MS; /* early's 1 s is over, late's is not */
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 2);
    EXPECT_COUNTS(1, 1, 0, 0, 0);
    expect_pop("early");
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), t.now + 800 * MS);
}

QUEUE_TEST(wildcard_event_moves_every_unschedulable_pod_without_asking)
{
    add("a", 0);
    add("b", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    fail(pop_expect("b"), PL_AFFINITY, 0, 0);
    t.worth_calls = 0;
    cr_expect_eq(ks__queue_move_on_event(t.q, &WILDCARD), 2);
    cr_expect_eq(t.worth_calls, 0);
    EXPECT_COUNTS(0, 2, 0, 0, 0);
}

QUEUE_TEST(event_received_in_flight_sends_pod_to_backoff_not_unschedulable)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    ks__queue_move_on_event(t.q, &NODE_ADD); /* arrives while p is being scheduled */
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->where, KS_Q_BACKOFF);
}

QUEUE_TEST(unrelated_event_received_in_flight_leaves_pod_unschedulable)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    ks__queue_move_on_event(t.q, &POD_ADD);
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->where, KS_Q_UNSCHEDULABLE);
}

QUEUE_TEST(only_events_after_the_pop_are_replayed)
{
    add("a", 1);
    add("b", 0);
    ks_queued_pod *a = pop_expect("a");
    ks__queue_move_on_event(t.q, &NODE_ADD); /* a is in flight, b is not yet */
    ks_queued_pod *b = pop_expect("b");
    fail(b, PL_FIT, 0, 0);
    cr_expect_eq(b->where, KS_Q_UNSCHEDULABLE);
    fail(a, PL_FIT, 0, 0);
    cr_expect_eq(a->where, KS_Q_BACKOFF);
    /* No one in flight: the next pod sees nothing of the past. */
    t.now += 20 * SEC;
    ks__queue_flush_backoff(t.q);
    a = pop_expect("a");
    fail(a, PL_FIT, 0, 0);
    cr_expect_eq(a->where, KS_Q_UNSCHEDULABLE);
}

QUEUE_TEST(pending_plugin_queue_skips_backoff)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    ks__queue_move_on_event(t.q, &NODE_ADD);
    fail(qp, 0, PL_CLAIMS, 0); /* only a Pending plugin rejected it */
    cr_expect_eq(qp->where, KS_Q_ACTIVE);
    expect_pop("p");
}

QUEUE_TEST(pending_pod_without_event_waits_in_unschedulable)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    fail(qp, 0, PL_CLAIMS, 0);
    cr_expect_eq(qp->where, KS_Q_UNSCHEDULABLE);
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1);
    EXPECT_COUNTS(1, 0, 0, 0, 0);
}

static int immediate_worth(void *ctx, const ks_queued_pod *qp, const ks_event_info *ev)
{
    (void)ctx;
    (void)ev;
    return qp->pending_plugins ? KS_QHINT_QUEUE_IMMEDIATELY : KS_QHINT_QUEUE;
}

QUEUE_TEST(framework_may_ask_for_immediate_requeue_of_mixed_rejectors)
{
    ks_queue_hooks h = test_hooks();
    h.worth_requeue = immediate_worth;
    ks_queue *q = ks__queue_new(&OPTS, &h);
    ks_pod *p = pod_new("p", 0);
    ks__queue_add(q, p);
    ks_queued_pod *qp = ks__queue_pop(q, 0);
    qp->rejector_plugins = PL_FIT | PL_CLAIMS;
    qp->pending_plugins = PL_CLAIMS;
    ks__queue_requeue_failed(q, qp, 0);
    cr_expect_eq(qp->where, KS_Q_UNSCHEDULABLE);
    cr_expect_eq(ks__queue_move_on_event(q, &NODE_ADD), 1);
    cr_expect_eq(qp->where, KS_Q_ACTIVE);
    ks__queue_free(q);
}

QUEUE_TEST(flush_unschedulable_moves_pods_parked_too_long)
{
    add("old", 0);
    add("new", 0);
    fail(pop_expect("old"), PL_FIT, 0, 0);
    t.now += 200 * SEC;
    fail(pop_expect("new"), PL_FIT, 0, 0);
    t.now += 100 * SEC; /* old: exactly 300 s, not more */
    cr_expect_eq(ks__queue_flush_unschedulable(t.q), 0);
    t.now += 1;
    cr_expect_eq(ks__queue_flush_unschedulable(t.q), 1);
    EXPECT_COUNTS(1, 0, 1, 0, 0);
    expect_pop("old");
    t.now += 200 * SEC;
    cr_expect_eq(ks__queue_flush_unschedulable(t.q), 1);
    expect_pop("new");
}

QUEUE_TEST(flush_unschedulable_keeps_pods_parked_exactly_the_limit)
{
    add("a", 0);
    add("b", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    t.now += 1;
    fail(pop_expect("b"), PL_FIT, 0, 0);
    t.now += 300 * SEC; /* a: 300 s + 1 ns, b: 300 s */
    cr_expect_eq(ks__queue_flush_unschedulable(t.q), 1);
    expect_pop("a");
    EXPECT_COUNTS(0, 0, 1, 0, 0);
}

static ks_pod *gated_pod(const char *uid);

/* upstream v1.37: a pod the flush woke but could not move (still gated) waits a whole period
 * from that flush, not from its last attempt, before the next flush offers it again; each offer
 * takes it out of the map and parks it again, an entry for queue_incoming_pods (and, the
 * wildcard's strategy naming backoffQ, for incoming entities too). */
QUEUE_TEST(flush_offers_a_still_gated_pod_once_per_period)
{
    ks__queue_add(t.q, gated_pod("g"));
    cr_expect_str_eq(t.incoming, "unschedulable:UnscheduledPodAdd:1 ");
    t.incoming[0] = '\0';
    t.now += 300 * SEC + 1;
    cr_expect_eq(ks__queue_flush_unschedulable(t.q), 0); /* offered, PreEnqueue still gates */
    cr_expect_str_eq(t.incoming, "unschedulable:UnschedulableTimeout:1 ");
    EXPECT_COUNTS(0, 0, 0, 1, 0);
    t.incoming[0] = '\0';
    t.now += 200 * SEC; /* 500 s after its add, 200 s after the flush */
    ks__queue_flush_unschedulable(t.q);
    cr_expect_str_eq(t.incoming, "");
    t.now += 100 * SEC + 1;
    ks__queue_flush_unschedulable(t.q);
    cr_expect_str_eq(t.incoming, "unschedulable:UnschedulableTimeout:1 ");
}

/* The flag behind scheduler_pod_scheduled_after_flush_total: set by the flush that moves a pod,
 * cleared when it comes back from an attempt, and by PreEnqueue gating it. */
QUEUE_TEST(flush_marks_the_pods_it_moves_until_their_next_attempt)
{
    add("a", 0);
    ks_queued_pod *qp = pop_expect("a");
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->flushed, 0);
    t.now += 300 * SEC + 1;
    cr_assert_eq(ks__queue_flush_unschedulable(t.q), 1);
    cr_expect_eq(qp->flushed, 1);
    cr_expect_eq(qp->flush_ns, t.now);
    cr_assert_eq(ks__queue_pop(t.q, 0), qp);
    cr_expect_eq(qp->flushed, 1); /* still set while it is being scheduled */
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->flushed, 0);
    cr_expect_eq(qp->flush_ns, 0);
}

/* Entities: counted unless the hint's strategy names the queue the pod went to. */
QUEUE_TEST(incoming_entities_follow_the_hinted_strategy)
{
    add("a", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    cr_expect_str_eq(t.incoming,
                     "active:UnscheduledPodAdd:1 unschedulable:ScheduleAttemptFailure:0 ");
    t.incoming[0] = '\0';
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 1); /* Queue, still backing off */
    cr_expect_str_eq(t.incoming, "backoff:NodeAdd:0 ");
}

/* ---- gated pods ---------------------------------------------------------------------------- */

static ks_pod *gated_pod(const char *uid)
{
    ks_pod *p = pod_new(uid, 0);
    p->ngates = 1;
    return p;
}

QUEUE_TEST(gated_pod_is_parked_until_an_update_removes_its_gates)
{
    ks_pod *p = gated_pod("g");
    cr_assert_eq(ks__queue_add(t.q, p), 0);
    EXPECT_COUNTS(0, 0, 0, 1, 0);
    cr_expect_null(ks__queue_pop(t.q, 0));

    ks_pod *still = gated_pod("g"); /* an update that keeps the gates */
    cr_expect_eq(ks__queue_update(t.q, still), 0);
    EXPECT_COUNTS(0, 0, 0, 1, 0);

    ks_pod *open = pod_new("g", 0);
    cr_expect_eq(ks__queue_update(t.q, open), 0);
    EXPECT_COUNTS(1, 0, 0, 0, 0);
    ks_queued_pod *qp = pop();
    cr_expect_eq(qp->pod, open);
    cr_expect_eq(qp->gating_plugin, 0);
    cr_expect_str_eq(qp->gated_message, "");
    ks__queue_done(t.q, qp);
}

static void remember_parked(void *ctx, const ks_queued_pod *qp)
{
    char *buf = ctx;
    strcat(buf, qp->pod->uid);
    strcat(buf, qp->where == KS_Q_GATED ? "(gated:" : "(unschedulable:");
    strcat(buf, qp->gated_message);
    strcat(buf, ")");
}

QUEUE_TEST(each_parked_visits_unschedulable_and_gated_pods)
{
    add("u", 0);
    fail(pop(), PL_FIT, 0, 0);
    ks__queue_add(t.q, gated_pod("g"));
    add("active", 0);
    char buf[256] = "";
    ks__queue_each_parked(t.q, remember_parked, buf);
    cr_expect_str_eq(buf, "u(unschedulable:)g(gated:waiting for scheduling gates)");
}

QUEUE_TEST(gated_pod_gets_pre_enqueue_again_on_event_its_gating_plugin_registered)
{
    ks_pod *p = gated_pod("g");
    ks__queue_add(t.q, p);
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 0);   /* not the gate's event */
    cr_expect_eq(ks__queue_move_on_event(t.q, &GATES_GONE), 0); /* still gated */
    EXPECT_COUNTS(0, 0, 0, 1, 0);
    p->ngates = 0; /* (tests only: objects are immutable in real life) */
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 0);
    cr_expect_eq(ks__queue_move_on_event(t.q, &GATES_GONE), 1);
    expect_pop("g");
}

QUEUE_TEST(requeued_pod_with_new_gates_is_parked_as_gated)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    ks__queue_update(t.q, gated_pod("p")); /* in flight: remembered */
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->where, KS_Q_GATED);
    EXPECT_COUNTS(0, 0, 0, 1, 0);
}

/* ---- updates and deletes ------------------------------------------------------------------- */

QUEUE_TEST(update_in_active_queue_reorders)
{
    add("a", 5);
    add("b", 4);
    ks__queue_update(t.q, pod_new("b", 6));
    expect_pop("b");
    expect_pop("a");
}

QUEUE_TEST(update_in_backoff_queue_replaces_pod_in_place)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    fail(qp, 0, 0, 1);
    int64_t expiry = ks__queue_next_backoff_expiry(t.q);
    ks_pod *p2 = pod_new("p", 3);
    cr_expect_eq(ks__queue_update(t.q, p2), 0);
    cr_expect_eq(qp->pod, p2);
    cr_expect_eq(qp->where, KS_Q_BACKOFF);
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), expiry);
}

QUEUE_TEST(update_of_unschedulable_pod_moves_it_by_its_backoff)
{
    add("a", 0);
    add("b", 0);
    fail(pop_expect("a"), PL_FIT, 0, 0);
    fail(pop_expect("b"), PL_FIT, 0, 0);
    ks__queue_update(t.q, pod_new("a", 0)); /* still backing off */
    EXPECT_COUNTS(0, 1, 1, 0, 0);
    t.now += 2 * SEC;
    ks__queue_update(t.q, pod_new("b", 0));
    EXPECT_COUNTS(1, 1, 0, 0, 0);
    expect_pop("b");
}

QUEUE_TEST(update_of_in_flight_pod_is_used_when_it_returns)
{
    ks_pod *p1 = add("p", 0);
    ks_queued_pod *qp = pop();
    ks_pod *p2 = pod_new("p", 1), *p3 = pod_new("p", 2);
    cr_expect_eq(ks__queue_update(t.q, p2), 0);
    cr_expect_eq(ks__queue_update(t.q, p3), 0);
    cr_expect_eq(qp->pod, p1, "the scheduling thread's object must not change under it");
    EXPECT_COUNTS(0, 0, 0, 0, 1);
    fail(qp, PL_FIT, 0, 0);
    cr_expect_eq(qp->pod, p3);
    cr_expect_eq(qp->where, KS_Q_BACKOFF, "an update counts as a change");
}

/* v1.37: an update is TargetPod events for the rejectors' hints; PL_AFFINITY registered none. */
QUEUE_TEST(update_of_unschedulable_pod_no_hint_cares_about_leaves_it_parked)
{
    add("a", 0);
    fail(pop_expect("a"), PL_AFFINITY, 0, 0);
    t.now += 2 * SEC;
    ks_pod *p2 = pod_new("a", 0);
    cr_expect_eq(ks__queue_update(t.q, p2), 0);
    EXPECT_COUNTS(0, 0, 1, 0, 0);
    /* the queue holds the new object all the same */
    cr_expect_eq(ks__queue_move_on_event(t.q, &WILDCARD), 1);
    ks_queued_pod *qp = pop();
    cr_expect_eq(qp->pod, p2);
    ks__queue_done(t.q, qp);
}

QUEUE_TEST(update_in_flight_no_hint_cares_about_leaves_it_unschedulable)
{
    add("p", 0);
    ks_queued_pod *qp = pop();
    ks_pod *p2 = pod_new("p", 1);
    cr_expect_eq(ks__queue_update(t.q, p2), 0);
    fail(qp, PL_AFFINITY, 0, 0);
    cr_expect_eq(qp->pod, p2, "the newest object comes back");
    cr_expect_eq(qp->where, KS_Q_UNSCHEDULABLE, "PL_AFFINITY registered no TargetPod event");
}

QUEUE_TEST(another_pods_update_in_flight_is_no_target_pod_event)
{
    add("a", 0);
    add("b", 0);
    ks_queued_pod *a = pop_expect("a"), *b = pop_expect("b");
    cr_expect_eq(ks__queue_update(t.q, pod_new("b", 1)), 0); /* TargetPod events of b */
    fail(a, PL_FIT, 0, 0);
    cr_expect_eq(a->where, KS_Q_UNSCHEDULABLE, "b's update cannot help a");
    fail(b, PL_FIT, 0, 0);
    cr_expect_eq(b->where, KS_Q_BACKOFF, "its own update goes to its hints (PL_FIT: Queue)");
}

static int not_interested_in_nodes(void *ctx, const ks_cluster_event *ev)
{
    (void)ctx;
    return ev->resource != KS_RES_NODE;
}

/* upstream isEventOfInterest: an event no plugin registered is neither offered to the parked pods
 * nor recorded for the pods in flight. */
QUEUE_TEST(event_of_no_interest_is_dropped_at_once)
{
    ks__queue_free(t.q);
    ks_queue_hooks h = test_hooks();
    h.interested = not_interested_in_nodes;
    t.q = ks__queue_new(&OPTS, &h);
    add("parked", 0);
    add("flying", 0);
    fail(pop_expect("parked"), PL_FIT, 0, 0);
    ks_queued_pod *flying = pop_expect("flying");
    int calls = t.worth_calls;
    cr_expect_eq(ks__queue_move_on_event(t.q, &NODE_ADD), 0);
    cr_expect_eq(t.worth_calls, calls, "no hint asked");
    fail(flying, PL_FIT, 0, 0);
    cr_expect_eq(flying->where, KS_Q_UNSCHEDULABLE, "not recorded in flight either");
    cr_expect_eq(ks__queue_move_on_event(t.q, &WILDCARD), 2, "wildcard events never ask");
}

QUEUE_TEST(update_of_unknown_pod_adds_it)
{
    cr_expect_eq(ks__queue_update(t.q, pod_new("p", 0)), 0);
    EXPECT_COUNTS(1, 0, 0, 0, 0);
    expect_pop("p");
}

QUEUE_TEST(delete_removes_pods_from_every_place)
{
    add("active", 0);
    add("backoff", 0);
    add("unsched", 0);
    ks__queue_add(t.q, gated_pod("gated"));
    /* activeQ pops in arrival order (same priority) */
    ks_queued_pod *x = pop_expect("active");
    ks__queue_done(t.q, x);
    fail(pop_expect("backoff"), 0, 0, 1);
    fail(pop_expect("unsched"), PL_FIT, 0, 0);
    add("active", 0); /* known again after done */
    EXPECT_COUNTS(1, 1, 1, 1, 0);
    const char *uids[] = {"active", "backoff", "unsched", "gated"};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(ks__queue_delete(t.q, uids[i]), 0, "%s", uids[i]);
    EXPECT_COUNTS(0, 0, 0, 0, 0);
    cr_expect_eq(ks__queue_delete(t.q, "active"), KS_ENOTFOUND);
    cr_expect_eq(ks__queue_delete(t.q, "never"), KS_ENOTFOUND);
    cr_expect_eq(ks__queue_next_backoff_expiry(t.q), -1);
    cr_expect_eq(ks__queue_move_on_event(t.q, &WILDCARD), 0);
}

QUEUE_TEST(delete_of_in_flight_pod_drops_it_when_it_returns)
{
    add("a", 0);
    add("b", 0);
    ks_queued_pod *a = pop_expect("a");
    ks_queued_pod *b = pop_expect("b");
    cr_expect_eq(ks__queue_delete(t.q, "a"), 0);
    cr_expect_eq(ks__queue_delete(t.q, "b"), 0);
    cr_expect_eq(ks__queue_delete(t.q, "a"), KS_ENOTFOUND);
    cr_expect_str_eq(a->pod->uid, "a"); /* still valid for the scheduling thread */
    fail(a, PL_FIT, 0, 0);              /* dropped, not parked */
    ks__queue_done(t.q, b);
    EXPECT_COUNTS(0, 0, 0, 0, 0);
    /* The uid may come back as a new pod. */
    add("a", 0);
    expect_pop("a");
}

QUEUE_TEST(add_refuses_known_uids_and_pods_without_profile)
{
    ks_pod *p = add("p", 0);
    cr_expect_eq(ks__queue_add(t.q, p), KS_EEXIST);
    ks_queued_pod *qp = pop();
    cr_expect_eq(ks__queue_add(t.q, pod_new("p", 0)), KS_EEXIST, "in flight is known");
    ks__queue_done(t.q, qp);
    ks_pod *orphan = pod_new("orphan", 0);
    orphan->scheduler_name = SCHEDULER_NONE;
    cr_expect_eq(ks__queue_add(t.q, orphan), KS_EINVAL);
    cr_expect_eq(ks__queue_update(t.q, orphan), KS_EINVAL);
    cr_expect_eq(atomic_load(&orphan->refs), 1);
    EXPECT_COUNTS(0, 0, 0, 0, 0);
}

QUEUE_TEST(counts_follow_pods_between_places)
{
    add("a", 3);
    add("b", 2);
    add("c", 1);
    ks__queue_add(t.q, gated_pod("g"));
    EXPECT_COUNTS(3, 0, 0, 1, 0);
    ks_queued_pod *a = pop_expect("a");
    ks_queued_pod *b = pop_expect("b");
    EXPECT_COUNTS(1, 0, 0, 1, 2);
    fail(a, PL_FIT, 0, 0);
    fail(b, 0, 0, 1);
    EXPECT_COUNTS(1, 1, 1, 1, 0);
    t.now += 1 * SEC;
    ks__queue_flush_backoff(t.q);
    ks__queue_move_on_event(t.q, &NODE_ADD);
    EXPECT_COUNTS(3, 0, 0, 1, 0);
}

QUEUE_TEST(many_pods_survive_map_growth_and_deletes)
{
    char uid[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(uid, sizeof uid, "pod-%d", i);
        add(uid, i);
    }
    for (int i = 0; i < 2000; i += 2) {
        snprintf(uid, sizeof uid, "pod-%d", i);
        cr_assert_eq(ks__queue_delete(t.q, uid), 0, "%s", uid);
    }
    for (int i = 1; i < 2000; i += 2) {
        snprintf(uid, sizeof uid, "pod-%d", i);
        cr_assert_eq(ks__queue_add(t.q, pod_new(uid, 0)), KS_EEXIST, "%s", uid);
    }
    EXPECT_COUNTS(1000, 0, 0, 0, 0);
    for (int i = 1999; i > 0; i -= 2) {
        snprintf(uid, sizeof uid, "pod-%d", i);
        expect_pop(uid);
    }
}

QUEUE_TEST(free_releases_pods_in_every_place)
{
    add("active", 5);
    add("backoff", 4);
    add("unsched", 3);
    add("flying", 2);
    add("deleted", 1);
    ks__queue_add(t.q, gated_pod("gated"));
    fail(pop_expect("active"), 0, 0, 1);
    fail(pop_expect("backoff"), 0, 0, 1);
    fail(pop_expect("unsched"), PL_FIT, 0, 0);
    ks_queued_pod *flying = pop_expect("flying");
    ks__queue_update(t.q, pod_new("flying", 9));
    pop_expect("deleted");
    ks__queue_delete(t.q, "deleted");
    ks__queue_move_on_event(t.q, &SERVICE_ADD); /* an in-flight event record */
    (void)flying;
    /* teardown frees the queue and checks every pod is back to refs == 1 */
}

/* ---- threads ------------------------------------------------------------------------------- */

static void *blocking_pop(void *arg)
{
    (void)arg;
    return ks__queue_pop(t.q, 1);
}

QUEUE_TEST(blocking_pop_is_woken_by_add_from_another_thread)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, blocking_pop, NULL), 0);
    usleep(50 * 1000);
    add("p", 0);
    void *res;
    pthread_join(th, &res);
    ks_queued_pod *qp = res;
    cr_assert_not_null(qp);
    cr_expect_str_eq(qp->pod->uid, "p");
    ks__queue_done(t.q, qp);
}

QUEUE_TEST(blocking_pop_is_woken_by_event_move)
{
    add("p", 0);
    fail(pop(), PL_FIT, 0, 0);
    t.now += 10 * SEC;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, blocking_pop, NULL), 0);
    usleep(50 * 1000);
    ks__queue_move_on_event(t.q, &NODE_ADD);
    void *res;
    pthread_join(th, &res);
    cr_assert_not_null(res);
    ks__queue_done(t.q, res);
}

QUEUE_TEST(close_wakes_every_blocked_pop_with_null)
{
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, blocking_pop, NULL), 0);
    usleep(50 * 1000);
    ks__queue_close(t.q);
    for (int i = 0; i < 3; i++) {
        void *res = (void *)1;
        pthread_join(th[i], &res);
        cr_expect_null(res);
    }
    add("p", 0);
    cr_expect_null(ks__queue_pop(t.q, 1), "closed: no more pops");
}

static void *adder(void *arg)
{
    ks_pod **pods = arg;
    for (int i = 0; i < 500; i++)
        ks__queue_add(t.q, pods[i]);
    return NULL;
}

QUEUE_TEST(concurrent_adds_and_pops_lose_nothing)
{
    static ks_pod *pods[2][500];
    char uid[32];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 500; i++) {
            snprintf(uid, sizeof uid, "t%d-%d", k, i);
            pods[k][i] = pod_new(uid, i % 7);
        }
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, adder, pods[k]);
    for (int n = 0; n < 1000; n++) {
        ks_queued_pod *qp = ks__queue_pop(t.q, 1);
        cr_assert_not_null(qp);
        if (n % 3 == 0)
            fail(qp, PL_FIT, 0, 0);
        else
            ks__queue_done(t.q, qp);
    }
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    ks_queue_counts c = counts();
    cr_expect_eq(c.unschedulable, 334);
    cr_expect_eq(c.active + c.backoff + c.in_flight, 0);
}
