/*
 * The scheduling queue: upstream's PriorityQueue (pkg/scheduler/backend/queue, v1.34) with
 * QueueingHints as v1.37 has them (always on; an update of a parked pod is TargetPod events for
 * its rejectors' hints, no longer isPodUpdated), reduced to what the framework hands us through
 * ks_queue_hooks.
 *
 * Every pod the queue knows is one `qentry`, found by uid in an open-addressing hash map, and is in
 * exactly one place, named by qp.where:
 *
 *   KS_Q_ACTIVE         in the `active` heap (hooks.less);
 *   KS_Q_BACKOFF        in the `backoff` heap (backoff expiry, then hooks.less);
 *   KS_Q_UNSCHEDULABLE  on the `parked` list, waiting for an event a rejector plugin registered;
 *   KS_Q_GATED          on the `parked` list too, because PreEnqueue rejected it;
 *   KS_Q_NONE           in flight: popped and not yet handed back (or detached for a moment while
 *                       it moves between the others).
 *
 * Upstream keeps unschedulable and gated pods in one map and iterates it on every cluster event;
 * here they share one intrusive list, so an event costs O(parked pods), not O(all pods).
 *
 * In-flight events (upstream activeQueue.inFlightPods / inFlightEvents): while any pod is in
 * flight, each event passed to ks__queue_move_on_event is appended to the `flight` list, and
 * each pop appends the pod's own marker. When a pod comes back through
 * ks__queue_requeue_failed, the events after its marker are exactly those that arrived while it
 * was being scheduled (with the objects they carried, held until no pod needs them; an update of
 * a pod in flight is its own TargetPod events, which only that pod replays); they are replayed
 * through the hints (isPodWorthRequeuing) to choose between unschedulablePods, backoffQ and
 * activeQ. When a pod leaves the list, events in front of
 * the oldest remaining marker can concern nobody and are freed.
 *
 * PreEnqueue runs whenever a pod enters activeQ or backoffQ from outside them (add, requeue after
 * a failure, move from unschedulablePods, update of a parked pod), and not when backoffQ flushes
 * into activeQ: that is SchedulerPopFromBackoffQ (on by default since v1.33), which checks gates
 * on the way into backoffQ. The rest of that gate: while activeQ is empty, pop takes the head of
 * the rejection backoff heap even before its backoff is over ("PopFromBackoffQ"); pods back
 * from an error wait in their own heap for the flush.
 *
 * Backoff is not truncated to 1 s windows (upstream 1.33+ backoffQOrderingWindowDuration): a pod is
 * backing off iff timestamp + duration > now, and flush_backoff moves exactly the expired ones.
 *
 * Memory: every heap has room reserved for every known pod (ks__heap_reserve on add), so moving a
 * pod between places never allocates and never fails. The only allocation after add is an
 * in-flight event record; when that fails, every in-flight pod is marked to come back through
 * backoffQ as if the event had mattered (never stuck in unschedulablePods by a lost event).
 */
#include "sched/queue.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "util/clock.h"
#include "util/heap.h"
#include "api/objects.h"
#include "api/volume_objects.h"
#include "api/custom_objects.h"
#include "api/podgroup_objects.h"
#include "api/dra_objects.h"

#define CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* What to do with a parked or returning pod (upstream queueingStrategy), in increasing order. */
typedef enum strategy {
    Q_SKIP = 0,          /* stay in (or go to) unschedulablePods */
    Q_AFTER_BACKOFF = 1, /* backoffQ while backing off, else activeQ */
    Q_IMMEDIATELY = 2    /* activeQ now (a Pending plugin said Queue) */
} strategy;

/* Circular doubly-linked list with a sentinel head. */
typedef struct dlink {
    struct dlink *prev, *next;
} dlink;

static void dl_init(dlink *n) { n->prev = n->next = n; }
static int dl_empty(const dlink *head) { return head->next == head; }

static void dl_append(dlink *head, dlink *n)
{
    n->prev = head->prev;
    n->next = head;
    head->prev->next = n;
    head->prev = n;
}

static void dl_unlink(dlink *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    dl_init(n);
}

struct qentry;

/* One element of the in-flight list: a popped pod's marker (entry != NULL, embedded in the
 * entry) or an event received while some pod was in flight (entry == NULL, malloc'd). */
typedef struct flight_node {
    dlink link;
    struct qentry *entry;
    /* The event with its objects, as the hints will see it when a pod in flight comes back
     * (upstream clusterEvent{event, oldObj, newObj}): the pods and nodes are held (one reference
     * each), the JSON texts are owned copies. */
    ks_event_info ev;
    const char *label; /* ev's label for the inflight hook (static), NULL without the hook */
} flight_node;

typedef struct qentry {
    ks_queued_pod qp;          /* first member: callers only ever see &qp */
    uint64_t hash;             /* of qp.pod->uid */
    int64_t backoff_expiry_ns; /* set when it enters backoffQ (the heap's key) */
    ks_pod *newer_pod;         /* update received while in flight; one reference */
    dlink park;                /* on q->parked while unschedulable or gated */
    flight_node mark;          /* on q->flight while in flight */
    unsigned in_flight : 1;
    unsigned deleted : 1;           /* deleted while in flight: dropped when it comes back */
    unsigned updated_in_flight : 1; /* ks__queue_update while in flight (newer_pod is set) */
    unsigned missed_events : 1;     /* an event for it could not be recorded (out of memory) */
    unsigned error_backoff : 1;     /* in the error backoff heap (its last attempt was an error) */
    unsigned reprofile : 1;         /* in flight at a reload: ks__queue_reprofile when it is back */
} qentry;

struct ks_queue {
    ks_queue_opts opts;
    ks_queue_hooks hooks;

    pthread_mutex_t mu;
    pthread_cond_t cond; /* activeQ (or the rejection backoff heap) became non-empty, or closed */
#ifndef NDEBUG
    pthread_t owner; /* guarded by mu: who holds it, for assert_held() */
    int owned;
#endif
    /* Everything below is guarded by mu. */
    int closed;
    int64_t cycle; /* pops so far (upstream schedulingCycle) */
    /* backoffQ is two heaps, as upstream's: pods back from a rejection (entityBackoffQ, which
     * pop may take from while activeQ is empty) and pods back from an error
     * (entityErrorBackoffQ, which only the flush empties). */
    ks_heap active, backoff, error_backoff;
    int pop_from_backoff; /* the SchedulerPopFromBackoffQ gate (ks_queue_opts) */
    dlink parked;
    dlink flight;
    qentry **slots; /* uid -> entry, open addressing with linear probing */
    size_t nslots, nentries;
    ks_queue_counts counts;
    int kicked; /* ks__queue_kick: the next pop returns NULL */
    /* The pod group of the pod last popped while its scheduling cycle runs (upstream
     * lastPoppedEntityKey when that entity is a pod group): popped_group KS_SYM_ABSENT when none
     * (an individual pod, or the cycle is over: ks__queue_cycle_end). Counts only. */
    ks_sym popped_ns, popped_group;
    /* The group of the last member whose entry was counted or joined: a member of that group
     * entering a place on its own (an add, an update, an activation) joins the group's entity
     * where it is (upstream addToPodGroupIfExists, which counts no new entity when the group
     * stays in its queue), so it counts no entry. Metrics only: a cheap stand-in for "a member
     * of its group is queued", wrong only when gangs' pods arrive interleaved. */
    ks_sym joined_ns, joined_group;
    /* The last ks__queue_reprofile's remap, for the pods that were in flight then. */
    void (*remap)(void *ctx, ks_queued_pod *qp);
    void *remap_ctx;
};

/* ---------------------------------------------------------------------------------------------
 * Lock
 * ------------------------------------------------------------------------------------------- */

static void lock(ks_queue *q)
{
    int rc = pthread_mutex_lock(&q->mu);
    (void)rc;
    /* EDEADLK (error-checking mutex in debug builds): a callback called back into the queue. */
    assert(rc == 0);
#ifndef NDEBUG
    q->owner = pthread_self();
    q->owned = 1;
#endif
}

static void unlock(ks_queue *q)
{
#ifndef NDEBUG
    q->owned = 0;
#endif
    pthread_mutex_unlock(&q->mu);
}

static void wait_cond(ks_queue *q)
{
#ifndef NDEBUG
    q->owned = 0;
#endif
    pthread_cond_wait(&q->cond, &q->mu);
#ifndef NDEBUG
    q->owner = pthread_self();
    q->owned = 1;
#endif
}

static void assert_held(const ks_queue *q)
{
#ifndef NDEBUG
    assert(q->owned && pthread_equal(q->owner, pthread_self()));
#else
    (void)q;
#endif
}

static int64_t now_ns(const ks_queue *q)
{
    if (q->hooks.now_ns)
        return q->hooks.now_ns(q->hooks.ctx);
    return ks__clock_now_ns();
}

/* ---------------------------------------------------------------------------------------------
 * uid -> entry map. Open addressing, linear probing, deletion by backward shift (no tombstones).
 * Keys are compared through the entry's current pod, whose uid never changes across updates.
 * ------------------------------------------------------------------------------------------- */

static uint64_t hash_uid(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static size_t map_find_slot(const ks_queue *q, const char *uid, uint64_t h)
{
    size_t mask = q->nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        qentry *e = q->slots[i];
        if (!e || (e->hash == h && strcmp(e->qp.pod->uid, uid) == 0))
            return i;
    }
}

static qentry *map_get(const ks_queue *q, const char *uid, uint64_t h)
{
    return q->slots[map_find_slot(q, uid, h)];
}

static int map_grow(ks_queue *q)
{
    size_t n = q->nslots * 2;
    qentry **slots = calloc(n, sizeof *slots);
    if (!slots)
        return KS_ENOMEM;
    for (size_t i = 0; i < q->nslots; i++) {
        qentry *e = q->slots[i];
        if (!e)
            continue;
        size_t j = e->hash & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = e;
    }
    free(q->slots);
    q->slots = slots;
    q->nslots = n;
    return 0;
}

/* e must not be in the map yet. 0 or KS_ENOMEM. */
static int map_put(ks_queue *q, qentry *e)
{
    /* Keep the load factor under 0.7 so that probe runs stay short. */
    if ((q->nentries + 1) * 10 > q->nslots * 7 && map_grow(q) != 0)
        return KS_ENOMEM;
    q->slots[map_find_slot(q, e->qp.pod->uid, e->hash)] = e;
    q->nentries++;
    return 0;
}

static void map_del(ks_queue *q, qentry *e)
{
    size_t mask = q->nslots - 1;
    size_t i = map_find_slot(q, e->qp.pod->uid, e->hash);
    if (q->slots[i] != e)
        return;
    q->slots[i] = NULL;
    q->nentries--;
    /* Shift back every following entry of the run whose home slot is not in (i, j]. */
    for (size_t j = (i + 1) & mask; q->slots[j]; j = (j + 1) & mask) {
        size_t home = q->slots[j]->hash & mask;
        int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        q->slots[i] = q->slots[j];
        q->slots[j] = NULL;
        i = j;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Orders
 * ------------------------------------------------------------------------------------------- */

/* Upstream PrioritySort, used when the framework supplies no less(). */
static int priority_sort_less(void *ctx, const ks_queued_pod *a, const ks_queued_pod *b)
{
    (void)ctx;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

static int active_less(void *ctx, const void *a, const void *b)
{
    const ks_queue *q = ctx;
    return q->hooks.less(q->hooks.ctx, &((const qentry *)a)->qp, &((const qentry *)b)->qp);
}

static int backoff_less(void *ctx, const void *a, const void *b)
{
    const ks_queue *q = ctx;
    const qentry *x = a, *y = b;
    if (x->backoff_expiry_ns != y->backoff_expiry_ns)
        return x->backoff_expiry_ns < y->backoff_expiry_ns;
    return q->hooks.less(q->hooks.ctx, &x->qp, &y->qp);
}

/* ---------------------------------------------------------------------------------------------
 * Backoff
 * ------------------------------------------------------------------------------------------- */

int64_t ks__queue_backoff_duration_ns(const ks_queue *q, const ks_queued_pod *qp)
{
    int32_t n = qp->consecutive_errors > 0 ? qp->consecutive_errors : qp->unschedulable_count;
    int64_t d = q->opts.initial_backoff_ns, max = q->opts.max_backoff_ns;
    if (n <= 0 || d <= 0 || max <= 0)
        return 0;
    /* d = initial * 2^(n-1), doubling by addition and stopping at max so nothing overflows. */
    for (int32_t i = 1; i < n && d < max; i++)
        d = d > max - d ? max : d + d;
    return d < max ? d : max;
}

static int backing_off(const ks_queue *q, const ks_queued_pod *qp, int64_t now)
{
    return qp->timestamp_ns + ks__queue_backoff_duration_ns(q, qp) > now;
}

/* ---------------------------------------------------------------------------------------------
 * Places. detach() takes an entry out of wherever it is; the put_* functions place a detached
 * entry. None of them allocate.
 * ------------------------------------------------------------------------------------------- */

static void detach(ks_queue *q, qentry *e)
{
    assert_held(q);
    switch (e->qp.where) {
    case KS_Q_ACTIVE:
        ks__heap_remove(&q->active, e->qp.heap_index);
        q->counts.active--;
        break;
    case KS_Q_BACKOFF:
        ks__heap_remove(e->error_backoff ? &q->error_backoff : &q->backoff, e->qp.heap_index);
        q->counts.backoff--;
        break;
    case KS_Q_UNSCHEDULABLE:
        dl_unlink(&e->park);
        q->counts.unschedulable--;
        break;
    case KS_Q_GATED:
        dl_unlink(&e->park);
        q->counts.gated--;
        break;
    case KS_Q_NONE:
        break;
    }
    e->qp.where = KS_Q_NONE;
}

/* Why a pod is being (re)queued: what upstream passes as the previous queueing strategy, which
 * decides whether scheduler_queue_incoming_entities_total counts the entry. */
typedef struct entry_cause {
    const char *event; /* upstream's event label; NULL: no metric wanted */
    /* upstream's `strategy` argument: the hint's queue (KS_Q_ACTIVE for QueueImmediately,
     * KS_Q_BACKOFF for Queue, KS_Q_UNSCHEDULABLE for QueueSkip), or KS_Q_NONE when it passes nil
     * (a new pod, backoff completion, an activation). */
    ks_queue_where hinted;
    /* The pod was taken out of unschedulablePods before being requeued (upstream
     * movePodsToActiveOrBackoffQueue deletes it first), so parking it again is a new entry. */
    int unparked;
    /* For a member of a pod group: KS_QENTITY_PODGROUP when this entry counts its group's entry,
     * -1 when another member's does (a group moved by ks__queue_requeue_group or by a walk: the
     * pods count, the entity once); 0 leaves it to note_incoming (a pod's own entry, or a
     * member's on its own). */
    int group_entity;
} entry_cause;

static const entry_cause *cause_new(entry_cause *c, const char *event)
{
    *c = (entry_cause){event, KS_Q_NONE, 0, 0};
    return c;
}

/* What the pod_group hook says of e's pod (KS_QPG_NONE without the hook). */
static int pod_group_of(const ks_queue *q, const qentry *e)
{
    if (!q->hooks.pod_group)
        return KS_QPG_NONE;
    return q->hooks.pod_group(q->hooks.ctx, e->qp.pod);
}

/* A member of the pod group whose scheduling cycle runs (upstream pendingPodGroupPods while the
 * group is the last popped entity). */
static int pending_member(const ks_queue *q, const qentry *e)
{
    return q->popped_group != KS_SYM_ABSENT && e->qp.pod->scheduling_group == q->popped_group &&
           e->qp.pod->ns == q->popped_ns;
}

/* e now sits in where: the series of scheduler_queued_entities for that place and e's entity
 * type exist from now on (upstream's recorder creates them at the entity's first Add). A member
 * whose PodGroup is unknown is not queued as an entity upstream (incompletePodGroupPods). */
static void note_ever(ks_queue *q, const qentry *e, ks_queue_where where)
{
    if (pending_member(q, e)) /* upstream holds it in pendingPodGroupPods, in no queue */
        return;
    switch (pod_group_of(q, e)) {
    case KS_QPG_NONE:
        q->counts.ever |= 1u << where;
        break;
    case KS_QPG_MEMBER:
        q->counts.ever_group |= 1u << where;
        break;
    default:
        break;
    }
}

/* The pod groups a walk over many pods (a flush, an event) has moved a member of: upstream moves
 * each group once, as one entity with all its pods, where kubesched moves its members one by
 * one. Past its room a group counts again (an entity too many, never a pod too few). */
typedef struct groups_moved {
    ks_sym ns[32], group[32];
    size_t n;
} groups_moved;

/* What e's move in such a walk counts as an entity: a pod of its own (0), its group's entry for
 * the first member moved (KS_QENTITY_PODGROUP), nothing for the others (-1). */
static int walk_entity(const ks_queue *q, const qentry *e, groups_moved *gm)
{
    if (pod_group_of(q, e) != KS_QPG_MEMBER)
        return 0;
    ks_sym ns = e->qp.pod->ns, group = e->qp.pod->scheduling_group;
    for (size_t i = 0; i < gm->n; i++)
        if (gm->ns[i] == ns && gm->group[i] == group)
            return -1;
    if (gm->n < sizeof(gm->ns) / sizeof(gm->ns[0])) {
        gm->ns[gm->n] = ns;
        gm->group[gm->n++] = group;
    }
    return KS_QENTITY_PODGROUP;
}

/* Tells the incoming hook (metrics) that e entered where because of c. */
static void note_incoming(ks_queue *q, const qentry *e, ks_queue_where where, const entry_cause *c)
{
    if (!q->hooks.incoming || !c->event)
        return;
    /* upstream: a member back from (or arriving during) its group's cycle waits in
     * pendingPodGroupPods, which counts no entry; ks__queue_requeue_group counts the group */
    if (pending_member(q, e))
        return;
    /* upstream keeps a member of an unknown PodGroup in incompletePodGroupPods: no queue */
    int pg = pod_group_of(q, e);
    if (pg == KS_QPG_INCOMPLETE)
        return;
    ks_queue_where label = where == KS_Q_GATED ? KS_Q_UNSCHEDULABLE : where;
    int is_new = c->hinted == KS_Q_NONE || c->hinted != label;
    if (pg == KS_QPG_MEMBER && c->group_entity >= 0) {
        /* A member on its own: its group's entry unless it joins the group (see joined_group;
         * a gang's last member, admitted to activeQ, joins upstream's gated group, which the
         * event its add is then moves). The first member of its group that a walk moves: the
         * group's entry (upstream re-evaluates the whole entity; a gated group that stays gated
         * is re-added to unschedulableEntities and counted again). */
        const ks_pod *p = e->qp.pod;
        int joins =
            c->group_entity == 0 && q->joined_group == p->scheduling_group && q->joined_ns == p->ns;
        q->joined_ns = p->ns;
        q->joined_group = p->scheduling_group;
        q->hooks.incoming(q->hooks.ctx, &e->qp, label, c->event,
                          is_new && !joins ? KS_QENTITY_PODGROUP : KS_QENTITY_NONE);
        return;
    }
    int entity = !is_new || c->group_entity < 0 ? KS_QENTITY_NONE
                 : c->group_entity              ? c->group_entity
                                                : KS_QENTITY_POD;
    q->hooks.incoming(q->hooks.ctx, &e->qp, label, c->event, entity);
}

static void put_active(ks_queue *q, qentry *e, const entry_cause *c)
{
    int rc = ks__heap_push(&q->active, e);
    (void)rc;
    assert(rc == 0); /* capacity reserved on add */
    e->qp.where = KS_Q_ACTIVE;
    q->counts.active++;
    note_ever(q, e, KS_Q_ACTIVE);
    if (e->qp.initial_attempt_ns == 0) /* upstream moveToActiveQ: InitialAttemptTimestamp */
        e->qp.initial_attempt_ns = now_ns(q);
    note_incoming(q, e, KS_Q_ACTIVE, c);
}

static void put_backoff(ks_queue *q, qentry *e, const entry_cause *c)
{
    e->backoff_expiry_ns = e->qp.timestamp_ns + ks__queue_backoff_duration_ns(q, &e->qp);
    /* upstream backoffQueue.add: no plugin to blame means the attempt ended in an error */
    e->error_backoff = (e->qp.rejector_plugins | e->qp.pending_plugins) == 0;
    if (!e->error_backoff && q->pop_from_backoff)
        pthread_cond_broadcast(&q->cond); /* a blocked pop may take it at once */
    int rc = ks__heap_push(e->error_backoff ? &q->error_backoff : &q->backoff, e);
    (void)rc;
    assert(rc == 0);
    e->qp.where = KS_Q_BACKOFF;
    q->counts.backoff++;
    note_ever(q, e, KS_Q_BACKOFF);
    note_incoming(q, e, KS_Q_BACKOFF, c);
}

/* upstream moveToBackoffQ of a pod group: its QueueingParams name no plugin (the members carry
 * them), so backoffQueue.add files it with the errors, which pop never takes before its expiry
 * (SchedulerPopFromBackoffQ) and the periodic flush moves at expiry_ns. */
static void put_backoff_group(ks_queue *q, qentry *e, int64_t expiry_ns, const entry_cause *c)
{
    e->backoff_expiry_ns = expiry_ns;
    e->error_backoff = 1;
    int rc = ks__heap_push(&q->error_backoff, e);
    (void)rc;
    assert(rc == 0);
    e->qp.where = KS_Q_BACKOFF;
    q->counts.backoff++;
    note_ever(q, e, KS_Q_BACKOFF);
    note_incoming(q, e, KS_Q_BACKOFF, c);
}

/* Parks e as unschedulable or gated. A pod already parked keeps its place in the list, so that
 * a walk over the list may re-park the pod it is looking at without meeting it again. */
static void put_parked(ks_queue *q, qentry *e, ks_queue_where where, const entry_cause *c)
{
    if (e->qp.where == KS_Q_UNSCHEDULABLE || e->qp.where == KS_Q_GATED) {
        if (e->qp.where == KS_Q_UNSCHEDULABLE)
            q->counts.unschedulable--;
        else
            q->counts.gated--;
        if (c->unparked) /* upstream deleted it from the map and adds it back */
            note_incoming(q, e, where, c);
    } else {
        detach(q, e);
        dl_append(&q->parked, &e->park);
        note_incoming(q, e, where, c); /* upstream counts only a pod new to the map */
    }
    e->qp.where = where;
    note_ever(q, e, where);
    if (where == KS_Q_UNSCHEDULABLE)
        q->counts.unschedulable++;
    else
        q->counts.gated++;
}

/* PreEnqueue. The hook sets gating_plugin / gated_message when it refuses. */
static int pre_enqueue_admits(ks_queue *q, qentry *e)
{
    if (q->hooks.pre_enqueue && q->hooks.pre_enqueue(q->hooks.ctx, &e->qp) != KS_SUCCESS)
        return 0;
    e->qp.gating_plugin = 0;
    e->qp.gated_message[0] = '\0';
    return 1;
}

/* Moves e from wherever it is by strategy s (upstream requeuePodWithQueueingStrategy with
 * moveToActiveQ / moveToBackoffQ): PreEnqueue first, so a gated pod is parked as gated. */
static ks_queue_where requeue(ks_queue *q, qentry *e, strategy s, int64_t now, const entry_cause *c)
{
    if (s == Q_SKIP) {
        put_parked(q, e, KS_Q_UNSCHEDULABLE, c);
        return KS_Q_UNSCHEDULABLE;
    }
    if (!pre_enqueue_admits(q, e)) {
        /* upstream moveToActiveQ/moveToBackoffQ: a gated pod never attempts, so a flush that
         * woke it is forgotten here rather than on a failure. */
        e->qp.flushed = 0;
        put_parked(q, e, KS_Q_GATED, c);
        return KS_Q_GATED;
    }
    detach(q, e);
    if (s == Q_AFTER_BACKOFF && backing_off(q, &e->qp, now))
        put_backoff(q, e, c);
    else
        put_active(q, e, c);
    return e->qp.where;
}

/* The cause of a move decided by strategy s (upstream requeuePodWithQueueingStrategy passes
 * the hint as the previous strategy). */
static const entry_cause *cause_hinted(entry_cause *c, const char *event, strategy s, int unparked)
{
    static const ks_queue_where queue_of[] = {KS_Q_UNSCHEDULABLE, KS_Q_BACKOFF, KS_Q_ACTIVE};
    *c = (entry_cause){event, queue_of[s], unparked, 0};
    return c;
}

/* ---------------------------------------------------------------------------------------------
 * Hints (upstream isPodWorthRequeuing)
 * ------------------------------------------------------------------------------------------- */

static strategy hint(ks_queue *q, const qentry *e, const ks_event_info *ev)
{
    const ks_queued_pod *qp = &e->qp;
    uint64_t rejectors = qp->rejector_plugins | qp->pending_plugins;
    /* No plugin to ask, or an event (UnschedulableTimeout, ForceActivate) meant for everyone. */
    if (rejectors == 0 || ev->event.resource == KS_RES_WILDCARD)
        return Q_AFTER_BACKOFF;
    int r = q->hooks.worth_requeue ? q->hooks.worth_requeue(q->hooks.ctx, qp, ev) : KS_QHINT_QUEUE;
    if (r == KS_QHINT_SKIP)
        return Q_SKIP;
    /* Queue from a Pending plugin skips backoff. When every rejector is Pending the Queue can only
     * have come from one of them; otherwise only the framework can tell, by saying so. */
    if (qp->pending_plugins &&
        (r == KS_QHINT_QUEUE_IMMEDIATELY || (rejectors & ~qp->pending_plugins) == 0))
        return Q_IMMEDIATELY;
    return Q_AFTER_BACKOFF;
}

/* A gated pod is worth another PreEnqueue when its gating plugin's hint says Queue; the
 * framework's worth_requeue answers that from qp->gating_plugin. */
static int gate_may_open(ks_queue *q, const qentry *e, const ks_event_info *ev)
{
    if (ev->event.resource == KS_RES_WILDCARD || !q->hooks.worth_requeue)
        return 1;
    return q->hooks.worth_requeue(q->hooks.ctx, &e->qp, ev) != KS_QHINT_SKIP;
}

/* What ev means for parked e: Q_SKIP leaves it where it is. */
static strategy parked_strategy(ks_queue *q, const qentry *e, const ks_event_info *ev)
{
    if (e->qp.where == KS_Q_GATED)
        return gate_may_open(q, e, ev) ? Q_AFTER_BACKOFF : Q_SKIP;
    return hint(q, e, ev);
}

/* Holds the objects of src in dst (a reference to each pod and node, copies of the texts).
 * 0, or KS_ENOMEM with nothing held. */
/* A storage event (ABI 1.5) carries its objects in old_obj / new_obj: counted ks__volobj's. */
static int is_storage_event(const ks_event_info *ev)
{
    return (ev->event.resource >= KS_RES_PERSISTENT_VOLUME &&
            ev->event.resource <= KS_RES_CSI_STORAGE_CAPACITY) ||
           ev->event.resource == KS_RES_VOLUME_ATTACHMENT;
}

/* A DRA event (ABI 1.10) carries counted ks__draobj's (the claims; NULL for the others). */
static int is_dra_event(const ks_event_info *ev)
{
    return ev->event.resource >= KS_RES_RESOURCE_CLAIM && ev->event.resource <= KS_RES_DEVICE_CLASS;
}

static int event_hold(ks_event_info *dst, const ks_event_info *src)
{
    *dst = *src;
    dst->old_json = dst->new_json = NULL;
    if ((src->old_json && !(dst->old_json = strdup(src->old_json))) ||
        (src->new_json && !(dst->new_json = strdup(src->new_json)))) {
        free((char *)dst->old_json);
        return KS_ENOMEM;
    }
    /* The objects are immutable; only their reference counts change. */
    if (dst->old_pod)
        ks__pod_ref((ks_pod *)dst->old_pod);
    if (dst->new_pod)
        ks__pod_ref((ks_pod *)dst->new_pod);
    if (dst->old_node)
        ks__node_ref((ks_node *)dst->old_node);
    if (dst->new_node)
        ks__node_ref((ks_node *)dst->new_node);
    if (is_storage_event(dst)) {
        ks__volobj_ref((ks__volobj *)dst->old_obj);
        ks__volobj_ref((ks__volobj *)dst->new_obj);
    } else if (is_dra_event(dst)) {
        ks__draobj_ref((ks__draobj *)dst->old_obj);
        ks__draobj_ref((ks__draobj *)dst->new_obj);
    } else if (dst->event.resource == KS_RES_POD_GROUP) {
        ks__podgroup_ref(dst->old_obj);
        ks__podgroup_ref(dst->new_obj);
    } else if (dst->event.resource >= KS_RES_CUSTOM_FIRST) {
        ks__object_ref(dst->old_obj);
        ks__object_ref(dst->new_obj);
    } else {
        dst->old_obj = dst->new_obj = NULL;
    }
    return 0;
}

static void event_release(ks_event_info *ev)
{
    ks__pod_unref((ks_pod *)ev->old_pod);
    ks__pod_unref((ks_pod *)ev->new_pod);
    if (ev->old_node)
        ks__node_unref((ks_node *)ev->old_node);
    if (ev->new_node)
        ks__node_unref((ks_node *)ev->new_node);
    if (is_storage_event(ev)) {
        ks__volobj_unref((ks__volobj *)ev->old_obj);
        ks__volobj_unref((ks__volobj *)ev->new_obj);
    } else if (is_dra_event(ev)) {
        ks__draobj_unref((ks__draobj *)ev->old_obj);
        ks__draobj_unref((ks__draobj *)ev->new_obj);
    } else if (ev->event.resource == KS_RES_POD_GROUP) {
        ks__podgroup_unref(ev->old_obj);
        ks__podgroup_unref(ev->new_obj);
    } else if (ev->event.resource >= KS_RES_CUSTOM_FIRST) {
        ks__object_unref(ev->old_obj);
        ks__object_unref(ev->new_obj);
    }
    free((char *)ev->old_json);
    free((char *)ev->new_json);
}

static void free_flight_event(flight_node *f)
{
    event_release(&f->ev);
    free(f);
}

/* ---------------------------------------------------------------------------------------------
 * In-flight pods and the events they saw
 * ------------------------------------------------------------------------------------------- */

/* The inflight hook (metrics): +1 / -1 for an event label or "PodPopped". */
static void note_inflight(ks_queue *q, const char *label, int delta)
{
    if (q->hooks.inflight && label && *label)
        q->hooks.inflight(q->hooks.ctx, label, delta);
}

static void record_in_flight_event(ks_queue *q, const ks_event_info *ev, const char *label)
{
    if (dl_empty(&q->flight))
        return;
    flight_node *n = malloc(sizeof *n);
    if (n && event_hold(&n->ev, ev) != 0) {
        free(n);
        n = NULL;
    }
    if (!n) {
        for (dlink *l = q->flight.next; l != &q->flight; l = l->next) {
            flight_node *f = CONTAINER_OF(l, flight_node, link);
            if (f->entry)
                f->entry->missed_events = 1;
        }
        return;
    }
    n->entry = NULL;
    n->label = q->hooks.inflight ? (label ? label : ks__queue_event_label(&ev->event)) : NULL;
    dl_append(&q->flight, &n->link);
    note_inflight(q, n->label, +1);
}

/* upstream determineSchedulingHintForInFlightPod */
static strategy in_flight_strategy(ks_queue *q, const qentry *e)
{
    const ks_queued_pod *qp = &e->qp;
    if ((qp->rejector_plugins | qp->pending_plugins) == 0)
        return Q_AFTER_BACKOFF;
    /* An event that could not be recorded may have mattered. (An update of the pod itself is one
     * of the recorded events: TargetPod events, which the hints judge as upstream v1.37 does.) */
    if (e->missed_events)
        return Q_AFTER_BACKOFF;
    strategy s = Q_SKIP;
    for (dlink *l = e->mark.link.next; l != &q->flight; l = l->next) {
        const flight_node *f = CONTAINER_OF(l, flight_node, link);
        if (f->entry)
            continue; /* another pod's marker */
        /* An update of another pod in flight is no TargetPod event for this one. (Upstream puts
         * it in the one in-flight list that every pod in flight replays; its v1.37 hints assume
         * the TargetPod is the pod they judge, so kubesched keeps it to its own pod.) */
        if (f->ev.event.resource == KS_RES_TARGET_POD && f->ev.new_pod &&
            strcmp(f->ev.new_pod->uid, qp->pod->uid) != 0)
            continue;
        strategy t = hint(q, e, &f->ev);
        if (t > s)
            s = t;
        /* Only a Pending plugin can raise Q_AFTER_BACKOFF further. */
        if (s == Q_IMMEDIATELY || (s == Q_AFTER_BACKOFF && qp->pending_plugins == 0))
            break;
    }
    return s;
}

/* The pod leaves the in-flight list; events older than the oldest remaining marker go. */
static void end_flight(ks_queue *q, qentry *e)
{
    dl_unlink(&e->mark.link);
    e->in_flight = 0;
    q->counts.in_flight--;
    note_inflight(q, "PodPopped", -1);
    while (!dl_empty(&q->flight)) {
        flight_node *f = CONTAINER_OF(q->flight.next, flight_node, link);
        if (f->entry)
            break;
        dl_unlink(&f->link);
        note_inflight(q, f->label, -1);
        free_flight_event(f);
    }
}

static void free_entry(qentry *e)
{
    ks__pod_unref(e->newer_pod);
    ks__pod_unref(e->qp.pod);
    free(e);
}

/* ---------------------------------------------------------------------------------------------
 * API
 * ------------------------------------------------------------------------------------------- */

ks_queue *ks__queue_new(const ks_queue_opts *opts, const ks_queue_hooks *hooks)
{
    ks_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    if (opts) {
        q->opts = *opts;
    } else {
        q->opts.initial_backoff_ns = 1000000000LL;
        q->opts.max_backoff_ns = 10 * 1000000000LL;
        q->opts.max_unschedulable_ns = 300 * 1000000000LL;
    }
    if (hooks)
        q->hooks = *hooks;
    q->popped_ns = q->popped_group = KS_SYM_ABSENT;
    q->joined_ns = q->joined_group = KS_SYM_ABSENT;
    if (!q->hooks.less)
        q->hooks.less = priority_sort_less;
    q->pop_from_backoff = !q->opts.no_pop_from_backoff;

    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
#ifndef NDEBUG
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
#endif
    int rc = pthread_mutex_init(&q->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) {
        free(q);
        return NULL;
    }
    if (pthread_cond_init(&q->cond, NULL) != 0) {
        pthread_mutex_destroy(&q->mu);
        free(q);
        return NULL;
    }
    ks__heap_init(&q->active, active_less, q, offsetof(qentry, qp.heap_index));
    ks__heap_init(&q->backoff, backoff_less, q, offsetof(qentry, qp.heap_index));
    ks__heap_init(&q->error_backoff, backoff_less, q, offsetof(qentry, qp.heap_index));
    dl_init(&q->parked);
    dl_init(&q->flight);
    q->nslots = 64;
    q->slots = calloc(q->nslots, sizeof *q->slots);
    if (!q->slots) {
        ks__queue_free(q);
        return NULL;
    }
    return q;
}

void ks__queue_free(ks_queue *q)
{
    if (!q)
        return;
    /* Events, and pods deleted while in flight (no longer in the map). Other in-flight pods are
     * in the map: whoever still holds one must not touch it after this. */
    for (dlink *l = q->flight.next, *next; l != &q->flight; l = next) {
        next = l->next;
        flight_node *f = CONTAINER_OF(l, flight_node, link);
        if (!f->entry)
            free_flight_event(f);
        else if (f->entry->deleted)
            free_entry(f->entry);
    }
    for (size_t i = 0; q->slots && i < q->nslots; i++)
        if (q->slots[i])
            free_entry(q->slots[i]);
    free(q->slots);
    ks__heap_destroy(&q->active);
    ks__heap_destroy(&q->backoff);
    ks__heap_destroy(&q->error_backoff);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static ks_queue_where group_place(unsigned in);

/* Where e's pod group waits (upstream's group is one entity in one place): the place of its
 * queued members but e (group_place), KS_Q_NONE when none is queued or e is no member of a known
 * group. *sib: one member there. A walk over the queue: only for members (GenericWorkload). */
static ks_queue_where group_waits(ks_queue *q, const qentry *e, const qentry **sib)
{
    *sib = NULL;
    if (pod_group_of(q, e) != KS_QPG_MEMBER || pending_member(q, e))
        return KS_Q_NONE;
    const qentry *by_place[5] = {NULL};
    unsigned in = 0;
    for (size_t i = 0; i < q->nslots; i++) {
        const qentry *o = q->slots[i];
        if (!o || o == e || o->deleted || o->in_flight || o->qp.where == KS_Q_NONE ||
            o->qp.pod->scheduling_group != e->qp.pod->scheduling_group ||
            o->qp.pod->ns != e->qp.pod->ns)
            continue;
        in |= 1u << o->qp.where;
        by_place[o->qp.where] = o;
    }
    ks_queue_where w = group_place(in);
    *sib = by_place[w];
    return w;
}

/* upstream addPodGroupMember / addToPodGroupIfExists: a new member of a group that waits parked
 * or backing off joins it there (the group stays where it is: a gated group is not re-examined
 * until an event moves it, so its last member is not scheduled before the others are admitted).
 * 1 when e was placed so, 0 when it goes the usual way (activeQ through PreEnqueue). */
static int join_group(ks_queue *q, qentry *e, const entry_cause *c)
{
    const qentry *sib;
    switch (group_waits(q, e, &sib)) {
    case KS_Q_GATED: /* the group's gating plugin holds it too, until the group is admitted */
        e->qp.gating_plugin = sib->qp.gating_plugin;
        snprintf(e->qp.gated_message, sizeof(e->qp.gated_message), "%s", sib->qp.gated_message);
        put_parked(q, e, KS_Q_GATED, c);
        return 1;
    case KS_Q_UNSCHEDULABLE: /* no rejector of its own: any event of interest moves it */
        put_parked(q, e, KS_Q_UNSCHEDULABLE, c);
        return 1;
    case KS_Q_BACKOFF: /* backs off with the group (PreEnqueue first, as moveToBackoffQ) */
        if (!pre_enqueue_admits(q, e)) {
            put_parked(q, e, KS_Q_GATED, c);
            return 1;
        }
        detach(q, e);
        put_backoff_group(q, e, sib->backoff_expiry_ns, c);
        return 1;
    default:
        return 0;
    }
}

static int add_locked(ks_queue *q, ks_pod *pod, int64_t now, const char *event)
{
    uint64_t h = hash_uid(pod->uid);
    if (map_get(q, pod->uid, h))
        return KS_EEXIST;
    int profile = q->hooks.profile_of ? q->hooks.profile_of(q->hooks.ctx, pod) : 0;
    if (profile < 0)
        return KS_EINVAL;
    /* Room in both heaps for every known pod: later moves cannot fail. */
    if (ks__heap_reserve(&q->active, q->nentries + 1) != 0 ||
        ks__heap_reserve(&q->backoff, q->nentries + 1) != 0 ||
        ks__heap_reserve(&q->error_backoff, q->nentries + 1) != 0)
        return KS_ENOMEM;
    qentry *e = calloc(1, sizeof *e);
    if (!e)
        return KS_ENOMEM;
    e->qp.pod = pod;
    e->qp.profile = profile;
    e->qp.timestamp_ns = now;
    e->qp.heap_index = KS_HEAP_NONE;
    e->qp.where = KS_Q_NONE;
    e->hash = h;
    dl_init(&e->park);
    dl_init(&e->mark.link);
    e->mark.entry = e;
    if (map_put(q, e) != 0) {
        free(e);
        return KS_ENOMEM;
    }
    ks__pod_ref(pod);
    entry_cause c;
    cause_new(&c, event);
    if (join_group(q, e, &c))
        return 0;
    if (requeue(q, e, Q_IMMEDIATELY, now, &c) == KS_Q_ACTIVE)
        pthread_cond_broadcast(&q->cond);
    return 0;
}

int ks__queue_add(ks_queue *q, ks_pod *pod)
{
    if (!q || !pod || !pod->uid)
        return KS_EINVAL;
    lock(q);
    int rc = add_locked(q, pod, now_ns(q), "UnscheduledPodAdd");
    unlock(q);
    return rc;
}

/* The TargetPod events of an update of e's pod to new_pod, recorded for replay when e is in
 * flight (upstream addEventsIfPodInFlight). old is what the queue held last. */
static void record_target_events(ks_queue *q, const ks_pod *old, ks_pod *new_pod)
{
    ks_cluster_event evs[KS_POD_CHANGE_MAX];
    size_t n = ks__pod_change_events(new_pod, old, KS_RES_TARGET_POD, evs);
    for (size_t i = 0; i < n; i++) {
        ks_event_info info = {.event = evs[i], .old_pod = old, .new_pod = new_pod};
        record_in_flight_event(q, &info, NULL);
    }
}

/* A pod in flight changed: keep the new object for its return and record the change. */
static void update_in_flight(ks_queue *q, qentry *e, ks_pod *new_pod)
{
    /* The scheduling thread reads qp.pod without the lock: keep it until the pod returns. */
    const ks_pod *old = e->newer_pod ? e->newer_pod : e->qp.pod;
    record_target_events(q, old, new_pod);
    ks__pod_unref(e->newer_pod);
    e->newer_pod = ks__pod_ref(new_pod);
    e->updated_in_flight = 1;
}

int ks__queue_update(ks_queue *q, ks_pod *new_pod)
{
    if (!q || !new_pod || !new_pod->uid)
        return KS_EINVAL;
    lock(q);
    int64_t now = now_ns(q);
    qentry *e = map_get(q, new_pod->uid, hash_uid(new_pod->uid));
    if (!e) {
        int rc = add_locked(q, new_pod, now, "UnscheduledPodUpdate");
        unlock(q);
        return rc;
    }
    if (e->in_flight) {
        update_in_flight(q, e, new_pod);
        unlock(q);
        return 0;
    }
    ks_pod *old = e->qp.pod;
    e->qp.pod = ks__pod_ref(new_pod);
    switch (e->qp.where) {
    case KS_Q_ACTIVE:
        ks__heap_fix(&q->active, e->qp.heap_index);
        break;
    case KS_Q_BACKOFF:
        ks__heap_fix(e->error_backoff ? &q->error_backoff : &q->backoff, e->qp.heap_index);
        break;
    case KS_Q_UNSCHEDULABLE:
    case KS_Q_GATED: {
        /* upstream PriorityQueue.Update (v1.37): each TargetPod event of the change goes through
         * the hints of the plugins that rejected (or gate) the pod; the first that moves it ends
         * the loop. An update that no hint queues leaves the pod where it is (with the new
         * object). */
        ks_cluster_event evs[KS_POD_CHANGE_MAX];
        size_t n = ks__pod_change_events(new_pod, old, KS_RES_TARGET_POD, evs);
        for (size_t i = 0; i < n; i++) {
            ks_event_info info = {.event = evs[i], .old_pod = old, .new_pod = new_pod};
            strategy s = parked_strategy(q, e, &info);
            if (s == Q_SKIP)
                continue;
            entry_cause c;
            ks_queue_where w =
                requeue(q, e, s, now, cause_hinted(&c, ks__queue_event_label(&evs[i]), s, 0));
            if (w == KS_Q_ACTIVE)
                pthread_cond_broadcast(&q->cond);
            if (w == KS_Q_ACTIVE || w == KS_Q_BACKOFF)
                break;
        }
        break;
    }
    case KS_Q_NONE:
        break;
    }
    ks__pod_unref(old);
    unlock(q);
    return 0;
}

int ks__queue_update_in_flight(ks_queue *q, ks_pod *new_pod)
{
    if (!q || !new_pod || !new_pod->uid)
        return 0;
    lock(q);
    qentry *e = map_get(q, new_pod->uid, hash_uid(new_pod->uid));
    int recorded = e && e->in_flight;
    if (recorded)
        update_in_flight(q, e, new_pod);
    unlock(q);
    return recorded;
}

int ks__queue_delete(ks_queue *q, const char *uid)
{
    if (!q || !uid)
        return KS_EINVAL;
    lock(q);
    qentry *e = map_get(q, uid, hash_uid(uid));
    if (!e) {
        unlock(q);
        return KS_ENOTFOUND;
    }
    map_del(q, e);
    if (e->in_flight) {
        /* The scheduling thread still holds it; requeue_failed will drop it, done frees it. */
        e->deleted = 1;
        unlock(q);
        return 0;
    }
    detach(q, e);
    unlock(q);
    free_entry(e);
    return 0;
}

/* What pop may take: activeQ's head, else (SchedulerPopFromBackoffQ) the head of the rejection
 * backoff heap, backing off or not (upstream activeQueue.unlockedPop). */
static int poppable(const ks_queue *q)
{
    return q->active.len > 0 || (q->pop_from_backoff && q->backoff.len > 0);
}

ks_queued_pod *ks__queue_pop(ks_queue *q, int block)
{
    lock(q);
    while (block && !q->closed && !q->kicked && !poppable(q))
        wait_cond(q);
    if (q->closed || q->kicked || !poppable(q)) {
        q->kicked = 0;
        unlock(q);
        return NULL;
    }
    qentry *e;
    if (q->active.len > 0) {
        e = ks__heap_pop(&q->active);
        q->counts.active--;
    } else {
        e = ks__heap_pop(&q->backoff);
        q->counts.backoff--;
        /* upstream counts it as entering activeQ on its way out (no strategy: a new entity) */
        entry_cause c;
        note_incoming(q, e, KS_Q_ACTIVE, cause_new(&c, "PopFromBackoffQ"));
    }
    e->qp.where = KS_Q_NONE;
    e->qp.attempts++;
    e->qp.move_request_cycle_seen = ++q->cycle;
    e->in_flight = 1;
    e->updated_in_flight = 0;
    e->missed_events = 0;
    dl_append(&q->flight, &e->mark.link);
    note_inflight(q, "PodPopped", +1); /* upstream PodPoppedInFlightEvent */
    q->counts.in_flight++;
    /* upstream pops the member's whole group: the group is the last popped entity */
    int member = pod_group_of(q, e) == KS_QPG_MEMBER;
    q->popped_ns = member ? e->qp.pod->ns : KS_SYM_ABSENT;
    q->popped_group = member ? e->qp.pod->scheduling_group : KS_SYM_ABSENT;
    unlock(q);
    return &e->qp;
}

/* upstream calculateBackoffDuration for an entity of `size` pods: as a pod's, with a maximum
 * multiplied by the square root of the size (a group waits longer than a pod, not size times). */
static int64_t entity_backoff_ns(const ks_queue *q, int32_t n, size_t size)
{
    int64_t d = q->opts.initial_backoff_ns, max = q->opts.max_backoff_ns;
    if (n <= 0 || d <= 0 || max <= 0)
        return 0;
    if (size > 1)
        max = (int64_t)((double)max * sqrt((double)size));
    for (int32_t i = 1; i < n && d < max; i++)
        d = d > max - d ? max : d + d;
    return d < max ? d : max;
}

static int group_member(const qentry *e, ks_sym ns, ks_sym group)
{
    return !e->deleted && !e->in_flight && e->qp.pod->scheduling_group == group &&
           e->qp.pod->ns == ns &&
           (e->qp.where == KS_Q_ACTIVE || e->qp.where == KS_Q_BACKOFF ||
            e->qp.where == KS_Q_UNSCHEDULABLE);
}

size_t ks__queue_requeue_group(ks_queue *q, ks_sym ns, ks_sym group, int scheduled)
{
    lock(q);
    /* the cycle is over: the members are no longer pending (their moves count below, the
     * group's entry always: upstream's group was out of every queue) */
    q->popped_ns = q->popped_group = KS_SYM_ABSENT;
    q->joined_ns = q->joined_group = KS_SYM_ABSENT;
    size_t n = 0;
    int32_t count = 0;
    for (size_t i = 0; i < q->nslots; i++) {
        const qentry *e = q->slots[i];
        if (!e || !group_member(e, ns, group))
            continue;
        n++;
        /* the group's attempts are its members': the member tried most often counts them */
        int32_t c =
            e->qp.consecutive_errors > 0 ? e->qp.consecutive_errors : e->qp.unschedulable_count;
        count = c > count ? c : count;
    }
    int64_t now = now_ns(q);
    /* upstream: the group's timestamp is now, its backoff time now + backoff aligned down to
     * the 1 s window of backoffQ's ordering when SchedulerPopFromBackoffQ is on; the flush takes
     * it once that window is over (isEntityBackingoff: not before the window now is in), so it
     * leaves 1 s after its aligned backoff time (kube-scheduler v1.37.2 tries a gang of 4 again
     * 1.25, 3 and 5 s after attempts at x.75, x.0, x.0) */
    int64_t backoff = entity_backoff_ns(q, count, n);
    int64_t expiry = now + backoff;
    if (q->pop_from_backoff)
        expiry = expiry - expiry % 1000000000LL + 1000000000LL;
    size_t moved = 0, first = 1, active = 0;
    for (size_t i = 0; n && i < q->nslots; i++) {
        qentry *e = q->slots[i];
        if (!e || !group_member(e, ns, group))
            continue;
        /* one entry of a "podgroup" entity, all its pods counted in queue_incoming_pods */
        entry_cause c = {"ScheduleAttemptFailure", KS_Q_NONE, 0, first ? KS_QENTITY_PODGROUP : -1};
        first = 0;
        if (!pre_enqueue_admits(q, e)) {
            e->qp.flushed = 0;
            put_parked(q, e, KS_Q_GATED, &c);
            continue;
        }
        detach(q, e);
        if (scheduled) /* upstream resets the placed group's counts (its backoff starts over) */
            e->qp.unschedulable_count = e->qp.consecutive_errors = 0;
        /* upstream: a group that was scheduled comes back at once (requeueWithoutBackoff);
         * otherwise isEntityBackingoff, true whenever it has a backoff (its expiry, aligned
         * down, is never before the window now is in) */
        if (!scheduled && backoff > 0) {
            put_backoff_group(q, e, expiry, &c);
        } else {
            put_active(q, e, &c);
            active++;
        }
        moved++;
    }
    if (active)
        pthread_cond_broadcast(&q->cond);
    unlock(q);
    return moved;
}

void ks__queue_cycle_end(ks_queue *q)
{
    lock(q);
    q->popped_ns = q->popped_group = KS_SYM_ABSENT;
    unlock(q);
}

ks_queued_pod *ks__queue_take(ks_queue *q, const char *uid)
{
    lock(q);
    qentry *e = map_get(q, uid, hash_uid(uid));
    if (!e || e->deleted || e->in_flight || q->closed ||
        (e->qp.where != KS_Q_ACTIVE && e->qp.where != KS_Q_BACKOFF &&
         e->qp.where != KS_Q_UNSCHEDULABLE)) {
        unlock(q);
        return NULL;
    }
    detach(q, e);
    /* as ks__queue_pop: one more attempt, in flight from now on */
    e->qp.attempts++;
    e->qp.move_request_cycle_seen = ++q->cycle;
    e->in_flight = 1;
    e->updated_in_flight = 0;
    e->missed_events = 0;
    dl_append(&q->flight, &e->mark.link);
    note_inflight(q, "PodPopped", +1);
    q->counts.in_flight++;
    unlock(q);
    return &e->qp;
}

/* A pod under the profiles a reload replaced: the remap hook, its profile again, no rejectors
 * (their bits numbered the old profile's plugins). Q_AFTER_BACKOFF: it moves as on a wildcard
 * event. */
static strategy reprofile_entry(ks_queue *q, qentry *e)
{
    e->reprofile = 0;
    if (q->remap)
        q->remap(q->remap_ctx, &e->qp);
    e->qp.profile = q->hooks.profile_of ? q->hooks.profile_of(q->hooks.ctx, e->qp.pod) : 0;
    e->qp.rejector_plugins = e->qp.pending_plugins = e->qp.gating_plugin = 0;
    return Q_AFTER_BACKOFF;
}

void ks__queue_requeue_failed(ks_queue *q, ks_queued_pod *qp, int err)
{
    if (!qp)
        return;
    qentry *e = (qentry *)qp;
    lock(q);
    assert(e->in_flight);
    if (e->deleted) {
        end_flight(q, e);
        unlock(q);
        free_entry(e);
        return;
    }
    if (e->newer_pod) {
        ks__pod_unref(qp->pod);
        qp->pod = e->newer_pod;
        e->newer_pod = NULL;
    }
    /* Upstream AddUnschedulableIfNotPresent: a failure no plugin is blamed for is an error. */
    if (err != 0 || (qp->rejector_plugins | qp->pending_plugins) == 0) {
        qp->rejector_plugins = qp->pending_plugins = 0;
        qp->consecutive_errors++;
    } else {
        qp->unschedulable_count++;
        qp->consecutive_errors = 0;
    }
    int64_t now = now_ns(q);
    qp->timestamp_ns = now;
    qp->flushed = 0; /* back from an attempt: a later flush counts from now */
    qp->flush_ns = 0;
    strategy s = in_flight_strategy(q, e);
    end_flight(q, e);
    if (e->reprofile) /* popped under the profiles a reload replaced: as ks__queue_reprofile */
        s = reprofile_entry(q, e);
    entry_cause c;
    if (requeue(q, e, s, now, cause_hinted(&c, "ScheduleAttemptFailure", s, 0)) == KS_Q_ACTIVE)
        pthread_cond_broadcast(&q->cond);
    unlock(q);
}

/* upstream PriorityQueue.Activate / activate: a pod in unschedulablePods (gated ones included)
 * or backoffQ goes to activeQ through PreEnqueue; a pod in flight gets the ForceActivate event
 * (a wildcard, which every pod then in flight replays, as upstream's one in-flight list). */
static const char k_force_activate[] = "ForceActivate";

int ks__queue_activate(ks_queue *q, const char *uid)
{
    static const ks_event_info force_activate = {.event = {KS_RES_WILDCARD, KS_ACT_ALL}};
    lock(q);
    qentry *e = map_get(q, uid, hash_uid(uid));
    int moved = 0;
    if (e && e->in_flight) {
        /* One wildcard event at the tail of the in-flight list already makes every pod in flight
         * come back through activeQ or backoffQ: another would change no decision, and a
         * gang of n pods activating its siblings would otherwise hold n^2 events (upstream
         * records each; its scheduler_inflight_events gauge counts them). */
        const flight_node *tail =
            dl_empty(&q->flight) ? NULL : CONTAINER_OF(q->flight.prev, flight_node, link);
        if (!tail || tail->entry || tail->ev.event.resource != KS_RES_WILDCARD)
            record_in_flight_event(q, &force_activate, k_force_activate);
    } else if (e && e->qp.where != KS_Q_ACTIVE && e->qp.where != KS_Q_NONE) {
        entry_cause c;
        cause_new(&c, k_force_activate);
        if (!pre_enqueue_admits(q, e)) {
            put_parked(q, e, KS_Q_GATED, &c);
        } else {
            detach(q, e);
            put_active(q, e, &c);
            pthread_cond_broadcast(&q->cond);
            moved = 1;
        }
    }
    unlock(q);
    return moved;
}

ks_pod *ks__queue_get_pod(ks_queue *q, const char *uid)
{
    lock(q);
    qentry *e = map_get(q, uid, hash_uid(uid));
    ks_pod *pod = e && !e->deleted ? ks__pod_ref(e->qp.pod) : NULL;
    unlock(q);
    return pod;
}

size_t ks__queue_pods(ks_queue *q, ks_pod ***out)
{
    *out = NULL;
    lock(q);
    size_t n = 0;
    ks_pod **pods = q->nentries ? malloc(q->nentries * sizeof(*pods)) : NULL;
    for (size_t i = 0; pods && i < q->nslots; i++) {
        qentry *e = q->slots[i];
        if (e && !e->deleted && n < q->nentries)
            pods[n++] = ks__pod_ref(e->qp.pod);
    }
    unlock(q);
    *out = pods;
    return n;
}

int ks__queue_deleted_in_flight(ks_queue *q, const ks_queued_pod *qp)
{
    lock(q);
    int deleted = ((const qentry *)qp)->deleted;
    unlock(q);
    return deleted;
}

void ks__queue_done(ks_queue *q, ks_queued_pod *qp)
{
    if (!qp)
        return;
    qentry *e = (qentry *)qp;
    lock(q);
    assert(e->in_flight);
    end_flight(q, e);
    if (!e->deleted)
        map_del(q, e);
    unlock(q);
    free_entry(e);
}

/* Whether qp has waited in unschedulablePods for longer than d at now: since its last attempt,
 * or since the last flush that woke it if that is later (upstream v1.37
 * flushUnschedulableEntitiesLeftover: a pod the flush could not move, e.g. still gated, waits
 * a whole period again instead of being offered every tick). */
static int parked_longer_than(const ks_queued_pod *qp, int64_t d, int64_t now)
{
    int64_t since = qp->flush_ns > qp->timestamp_ns ? qp->flush_ns : qp->timestamp_ns;
    return now - since > d;
}

/* Offers ev to every parked pod (only those the flush at flushed_at marked, when it is >= 0) and
 * moves the ones it concerns (upstream movePodsToActiveOrBackoffQueue). Returns how many reached
 * activeQ or backoffQ; a pod PreEnqueue still rejects stays parked, as gated. */
static size_t move_parked(ks_queue *q, const ks_event_info *ev, const char *event,
                          int64_t flushed_at, int64_t now, const char *except_uid,
                          const int32_t *max_priority)
{
    size_t moved = 0;
    int activated = 0;
    groups_moved gm = {.n = 0};
    for (dlink *l = q->parked.next, *next; l != &q->parked; l = next) {
        next = l->next;
        qentry *e = CONTAINER_OF(l, qentry, park);
        if (flushed_at >= 0 && e->qp.flush_ns != flushed_at)
            continue;
        if (except_uid && strcmp(e->qp.pod->uid, except_uid) == 0)
            continue;
        if (max_priority && e->qp.pod->priority > *max_priority)
            continue;
        strategy s = parked_strategy(q, e, ev);
        if (s == Q_SKIP)
            continue;
        entry_cause c;
        cause_hinted(&c, event, s, 1);
        c.group_entity = walk_entity(q, e, &gm);
        ks_queue_where w = requeue(q, e, s, now, &c);
        if (w == KS_Q_ACTIVE || w == KS_Q_BACKOFF)
            moved++;
        if (w == KS_Q_ACTIVE)
            activated = 1;
    }
    if (activated)
        pthread_cond_broadcast(&q->cond);
    return moved;
}

size_t ks__queue_move_on_event(ks_queue *q, const ks_cluster_event *ev)
{
    ks_event_info info = {.event = *ev};
    return ks__queue_move_on_event_info(q, &info, NULL);
}

size_t ks__queue_move_on_event_except(ks_queue *q, const ks_cluster_event *ev,
                                      const char *except_uid)
{
    ks_event_info info = {.event = *ev};
    return ks__queue_move_on_event_info(q, &info, except_uid);
}

static size_t move_on_event(ks_queue *q, const ks_event_info *ev, const char *except_uid,
                            const int32_t *max_priority)
{
    /* Asked without the lock (the hook guards itself: a reload may change the registrations). */
    if (q->hooks.interested && ev->event.resource != KS_RES_WILDCARD &&
        !q->hooks.interested(q->hooks.ctx, &ev->event))
        return 0;
    lock(q);
    size_t moved = move_parked(q, ev, q->hooks.incoming ? ks__queue_event_label(&ev->event) : NULL,
                               -1, now_ns(q), except_uid, max_priority);
    record_in_flight_event(q, ev, NULL);
    unlock(q);
    return moved;
}

size_t ks__queue_move_on_event_info(ks_queue *q, const ks_event_info *ev, const char *except_uid)
{
    return move_on_event(q, ev, except_uid, NULL);
}

size_t ks__queue_move_on_event_le_priority(ks_queue *q, const ks_event_info *ev, int32_t priority)
{
    return move_on_event(q, ev, NULL, &priority);
}

size_t ks__queue_flush_backoff(ks_queue *q)
{
    lock(q);
    int64_t now = now_ns(q);
    size_t moved = 0;
    groups_moved gm = {.n = 0};
    ks_heap *heaps[] = {&q->backoff, &q->error_backoff}; /* upstream's order */
    for (int h = 0; h < 2; h++)
        for (qentry *e; (e = ks__heap_peek(heaps[h])) && e->backoff_expiry_ns <= now;) {
            ks__heap_pop(heaps[h]);
            q->counts.backoff--;
            e->qp.where = KS_Q_NONE;
            entry_cause c;
            cause_new(&c, "BackoffComplete");
            c.group_entity = walk_entity(q, e, &gm);
            put_active(q, e, &c); /* PreEnqueue ran on the way in */
            moved++;
        }
    if (moved)
        pthread_cond_broadcast(&q->cond);
    unlock(q);
    return moved;
}

size_t ks__queue_flush_unschedulable(ks_queue *q)
{
    static const ks_event_info timeout = {
        .event = {KS_RES_WILDCARD, KS_ACT_ALL_ANY}}; /* UnschedulableTimeout */
    lock(q);
    int64_t now = now_ns(q);
    int any = 0;
    for (dlink *l = q->parked.next; l != &q->parked; l = l->next) {
        ks_queued_pod *qp = &CONTAINER_OF(l, qentry, park)->qp;
        if (parked_longer_than(qp, q->opts.max_unschedulable_ns, now)) {
            qp->flushed = 1; /* upstream sets both before offering the event */
            qp->flush_ns = now;
            any = 1;
        }
    }
    size_t moved = 0;
    if (any) {
        moved = move_parked(q, &timeout, "UnschedulableTimeout", now, now, NULL, NULL);
        /* As upstream: the timeout goes through movePodsToActiveOrBackoffQueue, which also
         * records it for the pods in flight. */
        record_in_flight_event(q, &timeout, "UnschedulableTimeout");
    }
    unlock(q);
    return moved;
}

int64_t ks__queue_next_backoff_expiry(ks_queue *q)
{
    lock(q);
    const qentry *e = ks__heap_peek(&q->backoff), *x = ks__heap_peek(&q->error_backoff);
    if (!e || (x && x->backoff_expiry_ns < e->backoff_expiry_ns))
        e = x;
    int64_t t = e ? e->backoff_expiry_ns : -1;
    unlock(q);
    return t;
}

void ks__queue_counts(ks_queue *q, ks_queue_counts *out)
{
    lock(q);
    *out = q->counts;
    unlock(q);
}

/* One queued member of a pod group, for ks__queue_entity_counts. */
typedef struct member_place {
    ks_sym ns, group;
    ks_queue_where where;
} member_place;

static int member_place_cmp(const void *a, const void *b)
{
    const member_place *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return 0;
}

/* The place of a group whose members sit in the places of bits `in` (1 << ks_queue_where): the
 * one its pods would leave first (see ks_queue_entity_counts). */
static ks_queue_where group_place(unsigned in)
{
    static const ks_queue_where order[] = {KS_Q_ACTIVE, KS_Q_BACKOFF, KS_Q_UNSCHEDULABLE,
                                           KS_Q_GATED};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (in & (1u << order[i]))
            return order[i];
    return KS_Q_NONE;
}

int ks__queue_entity_counts(ks_queue *q, ks_queue_entity_counts *out)
{
    memset(out, 0, sizeof(*out));
    lock(q);
    member_place *m = NULL;
    size_t nm = 0;
    if (q->hooks.pod_group && q->nentries && !(m = malloc(q->nentries * sizeof(*m)))) {
        out->ever = q->counts.ever;
        out->ever_group = q->counts.ever_group;
        unlock(q);
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < q->nslots; i++) {
        qentry *e = q->slots[i];
        if (!e || e->deleted || e->in_flight || e->qp.where == KS_Q_NONE)
            continue;
        ks_queue_where w = e->qp.where;
        switch (pod_group_of(q, e)) {
        case KS_QPG_NONE:
            out->pods[w]++;
            out->pod_entities[w]++;
            break;
        case KS_QPG_INCOMPLETE:
            out->incomplete++;
            break;
        default:
            if (pending_member(q, e))
                out->pending++; /* joins its group when the group's cycle is over */
            else if (nm < q->nentries)
                m[nm++] = (member_place){e->qp.pod->ns, e->qp.pod->scheduling_group, w};
            break;
        }
    }
    /* One entity per group, in the place its members decide. */
    if (nm)
        qsort(m, nm, sizeof(*m), member_place_cmp);
    for (size_t i = 0; i < nm;) {
        size_t j = i;
        unsigned in = 0;
        for (; j < nm && !member_place_cmp(&m[i], &m[j]); j++)
            in |= 1u << m[j].where;
        ks_queue_where w = group_place(in);
        out->pods[w] += j - i;
        out->group_entities[w]++;
        /* a group counted there was added there upstream, whichever way its members came */
        q->counts.ever_group |= 1u << w;
        i = j;
    }
    out->ever = q->counts.ever;
    out->ever_group = q->counts.ever_group;
    unlock(q);
    free(m);
    return 0;
}

void ks__queue_each_parked(ks_queue *q, void (*fn)(void *ctx, const ks_queued_pod *qp), void *ctx)
{
    lock(q);
    for (dlink *l = q->parked.next; l != &q->parked; l = l->next)
        fn(ctx, &CONTAINER_OF(l, qentry, park)->qp);
    unlock(q);
}

size_t ks__queue_reprofile(ks_queue *q, void (*publish)(void *ctx),
                           void (*remap)(void *ctx, ks_queued_pod *qp), void *ctx)
{
    static const char k_reload[] = "ConfigurationReload";
    size_t moved = 0;
    lock(q);
    if (publish)
        publish(ctx);
    q->remap = remap;
    q->remap_ctx = ctx;
    int64_t now = now_ns(q);
    /* Every entry once, by the uid map (detach and requeue do not change it). */
    for (size_t i = 0; i < q->nslots; i++) {
        qentry *e = q->slots[i];
        if (!e)
            continue;
        if (e->in_flight) {
            e->reprofile = 1;
            continue;
        }
        strategy st = reprofile_entry(q, e);
        detach(q, e); /* out of the heaps: activeQ is rebuilt with the new QueueSort */
        entry_cause c;
        ks_queue_where w = requeue(q, e, st, now, cause_new(&c, k_reload));
        if (w == KS_Q_ACTIVE || w == KS_Q_BACKOFF)
            moved++;
    }
    pthread_cond_broadcast(&q->cond);
    unlock(q);
    return moved;
}

void ks__queue_kick(ks_queue *q)
{
    lock(q);
    q->kicked = 1;
    pthread_cond_broadcast(&q->cond);
    unlock(q);
}

void ks__queue_close(ks_queue *q)
{
    lock(q);
    q->closed = 1;
    pthread_cond_broadcast(&q->cond);
    unlock(q);
}

/* ---------------------------------------------------------------------------------------------
 * Event labels (metrics)
 * ------------------------------------------------------------------------------------------- */

static const struct {
    ks_event_resource res;
    const char *name;
} k_resources[] = {
    {KS_RES_POD, "Pod"},
    {KS_RES_ASSIGNED_POD, "AssignedPod"},
    {KS_RES_UNSCHEDULED_POD, "UnscheduledPod"},
    {KS_RES_TARGET_POD, "TargetPod"},
    {KS_RES_NODE, "Node"},
    {KS_RES_NAMESPACE, "Namespace"},
    {KS_RES_SERVICE, "Service"},
    {KS_RES_PDB, "PodDisruptionBudget"},
    {KS_RES_REPLICASET, "ReplicaSet"},
    {KS_RES_STATEFULSET, "StatefulSet"},
    /* the storage kinds, with upstream's group prefix where fwk.EventResource has one */
    {KS_RES_PERSISTENT_VOLUME, "PersistentVolume"},
    {KS_RES_PERSISTENT_VOLUME_CLAIM, "PersistentVolumeClaim"},
    {KS_RES_STORAGE_CLASS, "storage.k8s.io/StorageClass"},
    {KS_RES_CSI_NODE, "storage.k8s.io/CSINode"},
    {KS_RES_CSI_DRIVER, "storage.k8s.io/CSIDriver"},
    {KS_RES_CSI_STORAGE_CAPACITY, "storage.k8s.io/CSIStorageCapacity"},
    {KS_RES_VOLUME_ATTACHMENT, "storage.k8s.io/VolumeAttachment"},
    {KS_RES_POD_GROUP, "scheduling.k8s.io/PodGroup"}, /* GenericWorkload */
    {KS_RES_RESOURCE_CLAIM, "resource.k8s.io/ResourceClaim"},
    {KS_RES_RESOURCE_SLICE, "resource.k8s.io/ResourceSlice"},
    {KS_RES_DEVICE_CLASS, "resource.k8s.io/DeviceClass"},
    {KS_RES_WILDCARD, "*"},
};

/* upstream fwk.ActionType.String() */
static const struct {
    uint32_t actions;
    const char *name;
} k_actions[] = {
    {KS_ACT_ADD, "Add"},
    {KS_ACT_DELETE, "Delete"},
    {KS_ACT_UPDATE_NODE_ALLOCATABLE, "UpdateNodeAllocatable"},
    {KS_ACT_UPDATE_NODE_LABEL, "UpdateNodeLabel"},
    {KS_ACT_UPDATE_NODE_TAINT, "UpdateNodeTaint"},
    {KS_ACT_UPDATE_NODE_CONDITION, "UpdateNodeCondition"},
    {KS_ACT_UPDATE_NODE_ANNOTATION, "UpdateNodeAnnotation"},
    {KS_ACT_UPDATE_NODE_DECLARED_FEATURE, "UpdateNodeDeclaredFeature"},
    {KS_ACT_UPDATE_NODE_PREEMPTION_POLICY, "UpdateNodePreemptionPolicy"},
    {KS_ACT_UPDATE_POD_LABEL, "UpdatePodLabel"},
    {KS_ACT_UPDATE_POD_SCALE_DOWN, "UpdatePodScaleDown"},
    {KS_ACT_UPDATE_POD_SCALE_UP, "UpdatePodScaleUp"},
    {KS_ACT_UPDATE_POD_TOLERATIONS, "UpdatePodToleration"},
    {KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "UpdatePodSchedulingGatesEliminated"},
    {KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM, "UpdatePodGeneratedResourceClaim"},
    {KS_ACT_UPDATE_ANY, "Update"},
    {KS_ACT_ALL_ANY, "All"},
    {KS_ACT_UPDATE, "Update"}, /* the ABI 1.0-1.3 values name the same sets */
    {KS_ACT_ALL, "All"},
};

#define N_RES (sizeof(k_resources) / sizeof(k_resources[0]))
#define N_ACT (sizeof(k_actions) / sizeof(k_actions[0]))
static char k_labels[N_RES][N_ACT][64]; /* filled once: "<resource><action>" */
static pthread_once_t k_labels_once = PTHREAD_ONCE_INIT;

static void labels_init(void)
{
    for (size_t r = 0; r < N_RES; r++)
        for (size_t a = 0; a < N_ACT; a++)
            snprintf(k_labels[r][a], sizeof(k_labels[r][a]), "%s%s", k_resources[r].name,
                     k_actions[a].name);
}

const char *ks__queue_event_label(const ks_cluster_event *ev)
{
    if (ev->resource >= KS_RES_CUSTOM_FIRST)
        return ks__custom_event_label(ev->resource, ev->actions);
    pthread_once(&k_labels_once, labels_init);
    for (size_t r = 0; r < N_RES; r++) {
        if (k_resources[r].res != ev->resource)
            continue;
        for (size_t a = 0; a < N_ACT; a++)
            if (k_actions[a].actions == ev->actions)
                return k_labels[r][a];
        break;
    }
    return "";
}
