/*
 * The queue counted by entity (ks__queue_entity_counts), as upstream v1.37's PriorityQueue counts
 * it with GenericWorkload on for scheduler_pending_pods and scheduler_queued_entities: the queued
 * members of a pod group are one "podgroup" entity in one place, members whose PodGroup is not
 * known are incomplete, members of the group whose cycle runs are pending, and the entity series
 * appear at the first entity of their type in a place (the ever bits).
 *
 * Pods are built by hand as in test_queue.c; which PodGroups exist is the test's pod_group hook.
 */
#include <criterion/criterion.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/objects.h"
#include "sched/queue.h"

#define SEC 1000000000LL
#define PL_FIT (1u << 0)   /* registered Node events */
#define PL_GANG (1u << 3)  /* PreEnqueue: a gated pod (ngates > 0) waits for it */
#define BIT(w) (1u << (w)) /* an ever bit */

static const ks_cluster_event NODE_ADD = {KS_RES_NODE, KS_ACT_ADD};

static struct {
    ks_queue *q;
    int64_t now;
    ks_sym known[8]; /* the PodGroups the scheduler has (their names; namespace "ns") */
    size_t nknown;
    ks_pod *pods[64];
    size_t npods;
} t;

static int64_t fake_now(void *ctx)
{
    (void)ctx;
    return t.now;
}

static ks_code gate_pre_enqueue(void *ctx, ks_queued_pod *qp)
{
    (void)ctx;
    if (qp->pod->ngates == 0)
        return KS_SUCCESS;
    qp->gating_plugin = PL_GANG;
    snprintf(qp->gated_message, sizeof qp->gated_message, "waiting for minCount pods");
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* PL_FIT registered Node events: a Node add moves pods it rejected. */
static int fit_worth(void *ctx, const ks_queued_pod *qp, const ks_event_info *ev)
{
    (void)ctx;
    if (qp->gating_plugin)
        return KS_QHINT_SKIP;
    return ev->event.resource == KS_RES_NODE && (qp->rejector_plugins & PL_FIT) ? KS_QHINT_QUEUE
                                                                                : KS_QHINT_SKIP;
}

static int test_profile_of(void *ctx, const ks_pod *pod)
{
    (void)ctx, (void)pod;
    return 0;
}

static int test_pod_group(void *ctx, const ks_pod *pod)
{
    (void)ctx;
    if (pod->scheduling_group == KS_SYM_ABSENT)
        return KS_QPG_NONE;
    for (size_t i = 0; i < t.nknown; i++)
        if (t.known[i] == pod->scheduling_group)
            return KS_QPG_MEMBER;
    return KS_QPG_INCOMPLETE;
}

static void start(int generic_workload)
{
    ks_queue_hooks h = {.pre_enqueue = gate_pre_enqueue,
                        .worth_requeue = fit_worth,
                        .profile_of = test_profile_of,
                        .now_ns = fake_now,
                        .pod_group = generic_workload ? test_pod_group : NULL};
    static const ks_queue_opts opts = {.initial_backoff_ns = 1 * SEC,
                                       .max_backoff_ns = 10 * SEC,
                                       .max_unschedulable_ns = 300 * SEC};
    t.q = ks__queue_new(&opts, &h);
    cr_assert_not_null(t.q);
}

static void setup(void)
{
    memset(&t, 0, sizeof t);
    t.now = 1000 * SEC;
}

static void teardown(void)
{
    ks__queue_free(t.q);
    for (size_t i = 0; i < t.npods; i++)
        ks__pod_unref(t.pods[i]);
}

TestSuite(queue_entities, .init = setup, .fini = teardown, .timeout = 30);

static void podgroup_appears(const char *name) { t.known[t.nknown++] = ks__intern(name); }

/* Adds pod uid, a member of group (NULL: none), gated while `gated`. */
static ks_pod *add(const char *uid, const char *group, int gated)
{
    ks_pod *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    atomic_init(&p->refs, 1);
    p->uid = strdup(uid);
    p->ns = ks__intern("ns");
    p->scheduling_group = group ? ks__intern(group) : KS_SYM_ABSENT;
    p->ngates = gated ? 1 : 0; /* only gate_pre_enqueue reads it */
    cr_assert_lt(t.npods, sizeof t.pods / sizeof t.pods[0]);
    t.pods[t.npods++] = p;
    t.now += 1;
    cr_assert_eq(ks__queue_add(t.q, p), 0);
    return p;
}

static ks_queue_entity_counts counts(void)
{
    ks_queue_entity_counts c;
    cr_assert_eq(ks__queue_entity_counts(t.q, &c), 0);
    return c;
}

/* The pods, pod entities and pod group entities of place w. */
#define EXPECT_PLACE(c, w, npods, nsolo, ngroups)                                                  \
    do {                                                                                           \
        cr_expect_eq((c).pods[w], (size_t)(npods), #w ": pods %zu", (c).pods[w]);                  \
        cr_expect_eq((c).pod_entities[w], (size_t)(nsolo), #w ": pod entities %zu",                \
                     (c).pod_entities[w]);                                                         \
        cr_expect_eq((c).group_entities[w], (size_t)(ngroups), #w ": podgroup entities %zu",       \
                     (c).group_entities[w]);                                                       \
    } while (0)

/* Without the hook (GenericWorkload off) every pod is its own entity, named group or not. */
Test(queue_entities, gate_off_every_pod_is_an_entity)
{
    start(0);
    add("a", "g", 0);
    add("b", "g", 0);
    add("c", NULL, 1);
    ks_queue_entity_counts c = counts();
    EXPECT_PLACE(c, KS_Q_ACTIVE, 2, 2, 0);
    EXPECT_PLACE(c, KS_Q_GATED, 1, 1, 0);
    cr_expect_eq(c.incomplete, 0);
    cr_expect_eq(c.pending, 0);
    cr_expect_eq(c.ever, BIT(KS_Q_ACTIVE) | BIT(KS_Q_GATED));
    cr_expect_eq(c.ever_group, 0);
}

/* Members whose PodGroup is unknown are incomplete: in no queue, no entity series. Once it
 * appears they are one group in the place they sit. */
Test(queue_entities, incomplete_until_the_podgroup_appears)
{
    start(1);
    add("solo", NULL, 0);
    add("m1", "g", 1); /* kubesched's GangScheduling gates them meanwhile */
    add("m2", "g", 1);
    ks_queue_entity_counts c = counts();
    cr_expect_eq(c.incomplete, 2);
    EXPECT_PLACE(c, KS_Q_ACTIVE, 1, 1, 0);
    EXPECT_PLACE(c, KS_Q_GATED, 0, 0, 0);
    cr_expect_eq(c.ever, BIT(KS_Q_ACTIVE), "only the solo pod made a series");
    cr_expect_eq(c.ever_group, 0, "no podgroup series for an incomplete group");
    podgroup_appears("g");
    c = counts();
    cr_expect_eq(c.incomplete, 0);
    EXPECT_PLACE(c, KS_Q_GATED, 2, 0, 1);
    cr_expect_eq(c.ever_group, BIT(KS_Q_GATED));
}

/* A group short of minCount (its members gated): one gated podgroup entity with its pods. */
Test(queue_entities, gated_group)
{
    podgroup_appears("g");
    start(1);
    add("m1", "g", 1);
    add("m2", "g", 1);
    add("solo", NULL, 1);
    ks_queue_entity_counts c = counts();
    EXPECT_PLACE(c, KS_Q_GATED, 3, 1, 1);
    cr_expect_eq(c.ever, BIT(KS_Q_GATED));
    cr_expect_eq(c.ever_group, BIT(KS_Q_GATED));
    cr_expect_eq(c.incomplete, 0);
}

/* Queued members are one active entity; while the group's cycle runs (one member popped, the
 * others taken or still queued, new ones arriving) the queued ones are pending and the group is
 * no entity; after the cycle the members that came back are one unschedulable entity. */
Test(queue_entities, active_pending_unschedulable)
{
    podgroup_appears("g");
    start(1);
    add("m1", "g", 0);
    add("m2", "g", 0);
    add("m3", "g", 0);
    add("solo", NULL, 0);
    ks_queue_entity_counts c = counts();
    EXPECT_PLACE(c, KS_Q_ACTIVE, 4, 1, 1);
    cr_expect_eq(c.ever, BIT(KS_Q_ACTIVE));
    cr_expect_eq(c.ever_group, BIT(KS_Q_ACTIVE));

    ks_queued_pod *qp = ks__queue_pop(t.q, 0);
    cr_assert_not_null(qp);
    cr_assert_str_eq(qp->pod->uid, "m1");
    ks_queued_pod *m2 = ks__queue_take(t.q, "m2");
    cr_assert_not_null(m2);
    add("m4", "g", 0); /* arrives during the cycle */
    c = counts();
    cr_expect_eq(c.pending, 2, "m3 and m4 wait for the cycle: %zu", c.pending);
    EXPECT_PLACE(c, KS_Q_ACTIVE, 1, 1, 0);

    qp->rejector_plugins = m2->rejector_plugins = PL_FIT;
    ks__queue_requeue_failed(t.q, qp, 0);
    ks__queue_requeue_failed(t.q, m2, 0);
    c = counts();
    cr_expect_eq(c.pending, 4, "back from the attempt, still pending: %zu", c.pending);
    ks__queue_cycle_end(t.q);
    c = counts();
    cr_expect_eq(c.pending, 0);
    /* m1 and m2 unschedulable, m3 and m4 active: one group, in activeQ with its 4 pods */
    EXPECT_PLACE(c, KS_Q_ACTIVE, 5, 1, 1);
    EXPECT_PLACE(c, KS_Q_UNSCHEDULABLE, 0, 0, 0);

    /* the solo pod and the rest of the group go through a cycle and fail too */
    qp = ks__queue_pop(t.q, 0);
    cr_assert_not_null(qp);
    ks_queued_pod *rest[3];
    size_t nrest = 0;
    const char *uids[] = {"m1", "m2", "m3", "m4"};
    for (size_t i = 0; i < 4; i++)
        if (strcmp(uids[i], qp->pod->uid) && (rest[nrest] = ks__queue_take(t.q, uids[i])))
            nrest++;
    cr_expect_eq(nrest, 3, "the other three members are taken, wherever they sit");
    qp->rejector_plugins = PL_FIT;
    ks__queue_requeue_failed(t.q, qp, 0);
    for (size_t i = 0; i < nrest; i++) {
        rest[i]->rejector_plugins = PL_FIT;
        ks__queue_requeue_failed(t.q, rest[i], 0);
    }
    ks__queue_cycle_end(t.q);
    qp = ks__queue_pop(t.q, 0);
    cr_assert_not_null(qp);
    cr_assert_str_eq(qp->pod->uid, "solo");
    qp->rejector_plugins = PL_FIT;
    ks__queue_requeue_failed(t.q, qp, 0);
    ks__queue_cycle_end(t.q);
    c = counts();
    EXPECT_PLACE(c, KS_Q_UNSCHEDULABLE, 5, 1, 1);
    EXPECT_PLACE(c, KS_Q_ACTIVE, 0, 0, 0);
    cr_expect_eq(c.ever, BIT(KS_Q_ACTIVE) | BIT(KS_Q_UNSCHEDULABLE));
    cr_expect_eq(c.ever_group, BIT(KS_Q_ACTIVE) | BIT(KS_Q_UNSCHEDULABLE));

    /* a Node add: Fit's hint moves them all, still backing off: one backoff group */
    t.now += 1;
    ks__queue_move_on_event(t.q, &NODE_ADD);
    c = counts();
    EXPECT_PLACE(c, KS_Q_BACKOFF, 5, 1, 1);
    EXPECT_PLACE(c, KS_Q_UNSCHEDULABLE, 0, 0, 0);
    cr_expect_eq(c.ever_group, BIT(KS_Q_ACTIVE) | BIT(KS_Q_UNSCHEDULABLE) | BIT(KS_Q_BACKOFF));
}

/* A group whose members sit in different places counts once, where the first of them to leave
 * sits (backoff before unschedulable). */
Test(queue_entities, one_group_one_place)
{
    podgroup_appears("g");
    start(1);
    add("m1", "g", 0);
    add("m2", "g", 0);
    ks_queued_pod *a = ks__queue_pop(t.q, 0), *b = ks__queue_take(t.q, "m2");
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    a->rejector_plugins = PL_FIT;
    ks__queue_requeue_failed(t.q, a, 0); /* unschedulable */
    ks__queue_requeue_failed(t.q, b, 1); /* an error: backoff */
    ks__queue_cycle_end(t.q);
    ks_queue_entity_counts c = counts();
    EXPECT_PLACE(c, KS_Q_BACKOFF, 2, 0, 1);
    EXPECT_PLACE(c, KS_Q_UNSCHEDULABLE, 0, 0, 0);
    cr_expect_eq(c.pending + c.incomplete, 0);
}

/* Records the incoming hook's calls: "where:event:entity " (entity: 0 none, 1 pod, 2 podgroup). */
static char incoming[512];
static void record_incoming(void *ctx, const ks_queued_pod *qp, int where, const char *event,
                            int new_entity)
{
    (void)ctx, (void)qp;
    size_t n = strlen(incoming);
    snprintf(incoming + n, sizeof incoming - n, "%d:%s:%d ", where, event, new_entity);
}

/* Pops the group's first member and takes the others, as the PodGroup cycle does. */
static size_t pop_group(ks_queued_pod **out, size_t n, const char *const *uids)
{
    size_t k = 0;
    out[k] = ks__queue_pop(t.q, 0);
    cr_assert_not_null(out[k]);
    const char *first = out[k++]->pod->uid;
    for (size_t i = 0; i < n; i++)
        if (strcmp(uids[i], first) && (out[k] = ks__queue_take(t.q, uids[i])))
            k++;
    return k;
}

/* upstream AddAttemptedPodGroupIfNeeded: a group turned away backs off as one entity (its pods
 * in backoffQ, out of pop's reach before the expiry, the maximum times sqrt(size)); members back
 * from the cycle are pending until then, and the group's entry counts one podgroup entity. */
Test(queue_entities, rejected_group_backs_off_as_one)
{
    podgroup_appears("g");
    ks_queue_hooks h = {.pre_enqueue = gate_pre_enqueue,
                        .worth_requeue = fit_worth,
                        .profile_of = test_profile_of,
                        .now_ns = fake_now,
                        .incoming = record_incoming,
                        .pod_group = test_pod_group};
    static const ks_queue_opts opts = {.initial_backoff_ns = 1 * SEC,
                                       .max_backoff_ns = 10 * SEC,
                                       .max_unschedulable_ns = 300 * SEC};
    t.q = ks__queue_new(&opts, &h);
    cr_assert_not_null(t.q);
    incoming[0] = '\0';
    add("x1", "unknown", 1);
    cr_expect_str_eq(incoming, "", "a member of an unknown PodGroup enters no queue: %s", incoming);
    const char *uids[] = {"m1", "m2", "m3", "m4"};
    for (size_t i = 0; i < 4; i++)
        add(uids[i], "g", 0);
    cr_expect_str_eq(incoming,
                     "1:UnscheduledPodAdd:2 1:UnscheduledPodAdd:0 1:UnscheduledPodAdd:0 "
                     "1:UnscheduledPodAdd:0 ",
                     "the first member's add is the group's entry: %s", incoming);
    for (int attempt = 1; attempt <= 5; attempt++) {
        ks_queued_pod *qp[4];
        cr_assert_eq(pop_group(qp, 4, uids), 4, "attempt %d takes the whole group", attempt);
        incoming[0] = '\0';
        for (size_t i = 0; i < 4; i++) {
            qp[i]->rejector_plugins = PL_FIT;
            ks__queue_requeue_failed(t.q, qp[i], 0);
        }
        ks_queue_entity_counts c = counts();
        cr_expect_eq(c.pending, 4, "back from the attempt, pending: %zu", c.pending);
        cr_expect_str_eq(incoming, "", "pending members count no entry");
        cr_expect_eq(c.ever_group & BIT(KS_Q_UNSCHEDULABLE), 0);
        /* on a whole second: the expiry is aligned down to one (SchedulerPopFromBackoffQ) */
        t.now = (t.now / SEC + 1) * SEC;
        cr_expect_eq(ks__queue_requeue_group(t.q, ks__intern("ns"), ks__intern("g"), 0), 4);
        c = counts();
        EXPECT_PLACE(c, KS_Q_BACKOFF, 4, 0, 1);
        cr_expect_eq(c.pending, 0);
        /* activeQ's podgroup series came with the members' adds (no count saw them there) */
        cr_expect_eq(c.ever_group, BIT(KS_Q_ACTIVE) | BIT(KS_Q_BACKOFF));
        cr_expect_eq(c.ever, 0, "no pod entity series: every pod is a member");
        cr_expect_str_eq(incoming,
                         "2:ScheduleAttemptFailure:2 2:ScheduleAttemptFailure:0 "
                         "2:ScheduleAttemptFailure:0 2:ScheduleAttemptFailure:0 ",
                         "attempt %d: %s", attempt, incoming);
        cr_expect_null(ks__queue_pop(t.q, 0), "not popped before its expiry");
        /* backoff 1, 2, 4, 8 s, then 16 s: over the pod maximum (10 s), under 10 * sqrt(4);
         * the group leaves once the window of its (aligned) backoff time is over: 1 s later */
        int64_t want = (attempt < 5 ? (1LL << (attempt - 1)) * SEC : 16 * SEC) + SEC;
        t.now += want - 1;
        cr_expect_eq(ks__queue_flush_backoff(t.q), 0, "attempt %d: still backing off", attempt);
        t.now += 1;
        incoming[0] = '\0';
        cr_expect_eq(ks__queue_flush_backoff(t.q), 4, "attempt %d: out after %lld s", attempt,
                     (long long)(want / SEC));
        cr_expect_str_eq(incoming,
                         "1:BackoffComplete:2 1:BackoffComplete:0 1:BackoffComplete:0 "
                         "1:BackoffComplete:0 ",
                         "the group's backoff completes once: %s", incoming);
    }
    cr_expect_eq(counts().ever_group, BIT(KS_Q_ACTIVE) | BIT(KS_Q_BACKOFF),
                 "no unschedulable podgroup series: upstream never parks a turned-away group");
}

/* A group placed in its cycle: its members left over (rejected, or arrived meanwhile) go to
 * activeQ at once, without backoff. */
Test(queue_entities, scheduled_group_leftovers_go_active)
{
    podgroup_appears("g");
    start(1);
    add("m1", "g", 0);
    add("m2", "g", 0);
    const char *uids[] = {"m1", "m2"};
    ks_queued_pod *qp[2];
    cr_assert_eq(pop_group(qp, 2, uids), 2);
    ks__queue_done(t.q, qp[0]); /* placed */
    add("m3", "g", 0);          /* arrives during the cycle */
    qp[1]->rejector_plugins = PL_FIT;
    ks__queue_requeue_failed(t.q, qp[1], 0);
    cr_expect_eq(counts().pending, 2);
    cr_expect_eq(ks__queue_requeue_group(t.q, ks__intern("ns"), ks__intern("g"), 1), 2);
    ks_queue_entity_counts c = counts();
    EXPECT_PLACE(c, KS_Q_ACTIVE, 2, 0, 1);
    EXPECT_PLACE(c, KS_Q_UNSCHEDULABLE, 0, 0, 0);
    cr_expect_eq(c.pending, 0);
}

/* GangScheduling's hint for a gated member: another member's add may complete the gang. */
static int gang_worth(void *ctx, const ks_queued_pod *qp, const ks_event_info *ev)
{
    (void)ctx;
    return qp->gating_plugin && ev->event.resource == KS_RES_UNSCHEDULED_POD ? KS_QHINT_QUEUE
                                                                             : KS_QHINT_SKIP;
}

/* A gang completed by its last member: the first member's add is the group's (gated) entry; the
 * last one joins the gated group (no entry, and no pop of it alone before the others are
 * admitted); the event its add is moves the group to activeQ: one entry there (upstream: the
 * last member joins the gated group, the event moves the group). */
Test(queue_entities, a_gang_completed_by_its_last_member_enters_active_once)
{
    podgroup_appears("g");
    ks_queue_hooks h = {.pre_enqueue = gate_pre_enqueue,
                        .worth_requeue = gang_worth,
                        .profile_of = test_profile_of,
                        .now_ns = fake_now,
                        .incoming = record_incoming,
                        .pod_group = test_pod_group};
    t.q = ks__queue_new(NULL, &h);
    cr_assert_not_null(t.q);
    incoming[0] = '\0';
    ks_pod *m1 = add("m1", "g", 1); /* short of minCount: gated */
    add("m2", "g", 0);              /* the last member: PreEnqueue would admit it */
    cr_expect_null(ks__queue_pop(t.q, 0), "it waits with its group");
    EXPECT_PLACE(counts(), KS_Q_GATED, 2, 0, 1);
    m1->ngates = 0; /* GangScheduling would now admit m1 too */
    static const ks_cluster_event member_add = {KS_RES_UNSCHEDULED_POD, KS_ACT_ADD};
    ks_event_info ev = {.event = member_add};
    cr_expect_eq(ks__queue_move_on_event_info(t.q, &ev, NULL), 2);
    cr_expect_str_eq(
        incoming,
        "3:UnscheduledPodAdd:2 3:UnscheduledPodAdd:0 1:UnscheduledPodAdd:2 1:UnscheduledPodAdd:0 ",
        "%s", incoming);
    ks_queue_entity_counts c = counts();
    EXPECT_PLACE(c, KS_Q_ACTIVE, 2, 0, 1);
    cr_expect_eq(c.ever_group, BIT(KS_Q_ACTIVE) | BIT(KS_Q_GATED));
}

/* A member arriving while its group backs off joins it there, until the group's expiry
 * (upstream addToPodGroupIfExists: the group stays in backoffQ), instead of being popped alone. */
Test(queue_entities, a_member_joins_its_group_in_backoff)
{
    podgroup_appears("g");
    start(1);
    add("m1", "g", 0);
    add("m2", "g", 0);
    const char *uids[] = {"m1", "m2"};
    ks_queued_pod *qp[2];
    cr_assert_eq(pop_group(qp, 2, uids), 2);
    for (size_t i = 0; i < 2; i++) {
        qp[i]->rejector_plugins = PL_FIT;
        ks__queue_requeue_failed(t.q, qp[i], 0);
    }
    t.now = (t.now / SEC + 1) * SEC;
    cr_expect_eq(ks__queue_requeue_group(t.q, ks__intern("ns"), ks__intern("g"), 0), 2);
    add("m3", "g", 0);
    cr_expect_null(ks__queue_pop(t.q, 0), "m3 backs off with its group");
    EXPECT_PLACE(counts(), KS_Q_BACKOFF, 3, 0, 1);
    t.now += 2 * SEC; /* the group's first backoff, 1 s, and the rest of its window */
    cr_expect_eq(ks__queue_flush_backoff(t.q), 3);
    EXPECT_PLACE(counts(), KS_Q_ACTIVE, 3, 0, 1);
}
