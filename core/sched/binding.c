/*
 * The binding cycle (upstream bindingCycle): PreBindPreFlight (and the nominatedNodeName it may
 * set), WaitOnPermit, PreBind, Bind, PostBind, on a pool of
 * binding threads so the scheduling thread never waits on the network. Also the Permit
 * waiting-pod map behind ks_permit_allow / ks_permit_reject.
 *
 * A pod that Permit told to wait does not hold a binding thread: its job is parked in the waiting
 * map and goes back to the job queue when the last waiting plugin allows it, when one rejects it,
 * or when the permit timer thread sees its deadline pass (upstream runs a goroutine per pod).
 *
 * The pool starts with ks_scheduler_opts.binding_workers threads and grows by one whenever a job
 * is queued while more jobs wait than binders are idle, up to KS_MAX_BINDERS: a PreBind may wait
 * minutes for a volume to be provisioned (upstream runs every binding cycle in its own goroutine),
 * and those waits must not hold back the bindings of other pods.
 *
 * Threads: ks__binding_submit is called by the scheduling thread; jobs run on binding threads;
 * the waiting map, the job list and the thread list are guarded by s->bind_mu.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/intern.h"
#include "api/podgroup_objects.h"
#include "util/clock.h"
#include "util/log.h"
#include "sched/scheduler_int.h"

#define KS_MAX_BINDERS 1024

struct ks_binding_job {
    ks_binding_job *next;
    ks_framework *fw;
    struct ks_profile_set *set; /* fw's, held until the job is freed (reload.h: drain) */
    ks_cycle *cycle;
    ks_queued_pod *qp;
    ks_pod *assumed;
    uint64_t seq;
    uint64_t waiting; /* permit plugins still to allow */
    int64_t deadline_ns;
    int64_t timeout_ms;
    int64_t submit_ns; /* when the binding cycle began (permit_wait_duration_seconds) */
    int waited;        /* Permit said Wait */
    int rejected;
    int parked; /* waiting on Permit, off the job queue (guarded by bind_mu) */
    int gone;   /* the pod was deleted while its binding cycle ran (guarded by bind_mu) */
    /* upstream podsInPreBind (guarded by bind_mu): the job runs PreBind plugins that
     * PreBindPreFlight said have work; a preemptor may cancel it (canceled, with cancel_msg, the
     * cause) until it is marked prebound after PreBind. */
    int in_prebind, canceled, prebound;
    int saw_cancel; /* its PreBind's ks_binding_sleep returned KS_ECANCELED for the cancel */
    char cancel_msg[128];
    /* PreBindPreFlight has run (it runs once, before the job may park on Permit), and what it
     * answered: KS_SUCCESS or KS_SKIP, or KS_ERROR with preflight_msg. Binding thread only. */
    int preflighted;
    ks_code preflight;
    char preflight_msg[KS_STATUS_BUF + 64];
    char reject_plugin[64];
    char reject_msg[KS_STATUS_BUF];
};

/* A duration as Go's time.Duration prints it ("50ms", "1.5s", "15m0s"), for upstream's message. */
static void go_duration(int64_t ms, char *out, size_t len)
{
    if (ms < 1000)
        snprintf(out, len, "%lldms", (long long)ms);
    else if (ms < 60000)
        snprintf(out, len, "%gs", (double)ms / 1000.0);
    else if (ms < 3600000)
        snprintf(out, len, "%lldm%gs", (long long)(ms / 60000), (double)(ms % 60000) / 1000.0);
    else
        snprintf(out, len, "%lldh%lldm%gs", (long long)(ms / 3600000),
                 (long long)(ms % 3600000 / 60000), (double)(ms % 60000) / 1000.0);
}

/* Under bind_mu: the job goes back to the front of the job queue (or, while a simulated
 * source's cycle runs, to the end of the held list). */
static void unpark(ks_scheduler *s, ks_binding_job *j)
{
    j->parked = 0;
    s->parked_bindings--;
    if (s->hold_released) {
        j->next = NULL;
        if (s->held_tail)
            s->held_tail->next = j;
        else
            s->held_head = j;
        s->held_tail = j;
        return;
    }
    j->next = s->jobs_head;
    s->jobs_head = j;
    if (!s->jobs_tail)
        s->jobs_tail = j;
    pthread_cond_signal(&s->jobs_cv);
}

/* Under bind_mu: upstream's "rejected due to timeout after waiting %v at plugin %v". */
static void reject_timeout(ks_binding_job *j)
{
    size_t bit = (size_t)__builtin_ctzll(j->waiting);
    const char *plugin = j->fw->pt[KS_PT_PERMIT][bit].inst->name;
    char d[32];
    go_duration(j->timeout_ms, d, sizeof(d));
    snprintf(j->reject_msg, sizeof(j->reject_msg),
             "rejected due to timeout after waiting %s at plugin %s", d, plugin);
    snprintf(j->reject_plugin, sizeof(j->reject_plugin), "%s", plugin);
    j->rejected = 1;
}

/* WaitOnPermit, once the job is back from parking. Under bind_mu. 0 = allowed. */
static int wait_on_permit(ks_scheduler *s, ks_binding_job *j)
{
    if (j->waiting && !j->rejected)
        reject_timeout(j); /* only reached when the deadline passed before a binder parked it */
    ks__strmap_remove(&s->waiting, j->assumed->uid);
    return j->rejected ? -1 : 0;
}

static int64_t expire_permits(ks_scheduler *s, int64_t now);

/* The clock of Permit deadlines: the monotonic clock, or with a simulated source the virtual
 * queue clock of `simulate` (which jumps to the next deadline when nothing else can happen, so a
 * timed-out gang costs no wall time). */
static int64_t permit_now(ks_scheduler *s)
{
    return (s->source.flags & KS_SOURCE_SIMULATED) ? ks__sched_now(s) : ks__clock_now_ns();
}

/* The permit timer: rejects parked jobs whose deadline passed (none runs with a simulated
 * source: `simulate` expires them itself, ks__binding_expire_permits). */
static void *permit_timer_main(void *arg)
{
    ks_scheduler *s = arg;
    pthread_mutex_lock(&s->bind_mu);
    while (!s->bind_quit) {
        int64_t now = ks__clock_now_ns(), next = expire_permits(s, now);
        if (next == INT64_MAX) {
            pthread_cond_wait(&s->bind_cv, &s->bind_mu);
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            int64_t ns = until.tv_nsec + (next - now);
            until.tv_sec += ns / 1000000000;
            until.tv_nsec = ns % 1000000000;
            pthread_cond_timedwait(&s->bind_cv, &s->bind_mu, &until);
        }
    }
    pthread_mutex_unlock(&s->bind_mu);
    return NULL;
}

int ks__permit_hook(void *ctx, const char *uid, const char *plugin, int allow, const char *msg)
{
    ks_scheduler *s = ctx;
    int rc = KS_ENOTFOUND;
    pthread_mutex_lock(&s->bind_mu);
    ks_binding_job *j = ks__strmap_get(&s->waiting, uid);
    if (j && allow) {
        for (size_t i = 0; i < j->fw->n[KS_PT_PERMIT] && i < 64; i++) {
            if ((j->waiting & (1ull << i)) &&
                strcmp(j->fw->pt[KS_PT_PERMIT][i].inst->name, plugin) == 0) {
                j->waiting &= ~(1ull << i);
                rc = 0;
            }
        }
    } else if (j) {
        /* upstream WaitingPod.Reject: any plugin ends the wait, the first rejection's message
         * wins (its channel takes one status) */
        rc = 0;
        if (!j->rejected) {
            j->rejected = 1;
            snprintf(j->reject_plugin, sizeof(j->reject_plugin), "%s", plugin);
            snprintf(j->reject_msg, sizeof(j->reject_msg), "%s", msg ? msg : "rejected");
        }
    }
    if (j && j->parked && (j->waiting == 0 || j->rejected))
        unpark(s, j);
    pthread_mutex_unlock(&s->bind_mu);
    return rc;
}

/* One waiting pod as ks__binding_waiting_each copies it out of the map. */
typedef struct waiting_copy {
    uint64_t seq;
    ks_pod *pod; /* a reference */
    const char *pending[64];
    size_t npending;
} waiting_copy;

static int cmp_waiting_seq(const void *a, const void *b)
{
    const waiting_copy *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Under bind_mu: the pods still waiting, copied (the callbacks run without the lock: they may
 * allow or reject pods, which takes it). */
static size_t copy_waiting(ks_scheduler *s, waiting_copy **out)
{
    size_t n = 0, cap = s->waiting.len;
    waiting_copy *w = cap ? malloc(cap * sizeof(*w)) : NULL;
    const char *k;
    void *v;
    for (size_t it = 0; w && ks__strmap_next(&s->waiting, &it, &k, &v) && n < cap;) {
        ks_binding_job *j = v;
        if (j->rejected || !j->waiting)
            continue;
        waiting_copy *c = &w[n++];
        c->seq = j->seq;
        c->pod = ks__pod_ref(j->assumed);
        c->npending = 0;
        for (size_t i = 0; i < j->fw->n[KS_PT_PERMIT] && i < 64; i++)
            if (j->waiting & (1ull << i))
                c->pending[c->npending++] = j->fw->pt[KS_PT_PERMIT][i].inst->name;
    }
    *out = w;
    return n;
}

size_t ks__binding_waiting_each(ks_scheduler *s, ks_waiting_pod_fn fn, void *ctx)
{
    if (!s->binders)
        return 0;
    waiting_copy *w = NULL;
    pthread_mutex_lock(&s->bind_mu);
    size_t n = copy_waiting(s, &w);
    pthread_mutex_unlock(&s->bind_mu);
    if (n > 1)
        qsort(w, n, sizeof(*w), cmp_waiting_seq); /* the order they began to wait */
    for (size_t i = 0; i < n; i++) {
        ks_waiting_pod_info wp = {w[i].pod, w[i].pending, w[i].npending};
        fn(ctx, &wp);
    }
    for (size_t i = 0; i < n; i++)
        ks__pod_unref(w[i].pod);
    free(w);
    return n;
}

static void run_job(ks_scheduler *s, ks_binding_job *j);
static void free_job(ks_scheduler *s, ks_binding_job *j);

void ks__binding_hold(ks_scheduler *s, int on)
{
    if (!s->binders || !(s->source.flags & KS_SOURCE_SIMULATED))
        return;
    pthread_mutex_lock(&s->bind_mu);
    if (on) {
        s->hold_released = 1;
        pthread_mutex_unlock(&s->bind_mu);
        return;
    }
    /* The held jobs run here, on the calling (scheduling) thread, in the order they were
     * released: no binder wakes up for them, and the jobs they release in turn (an Unreserve
     * rejecting a gang's other members) join the end of the list. */
    while (s->held_head) {
        ks_binding_job *j = s->held_head;
        s->held_head = j->next;
        if (!s->held_head)
            s->held_tail = NULL;
        pthread_mutex_unlock(&s->bind_mu);
        run_job(s, j);
        free_job(s, j);
        pthread_mutex_lock(&s->bind_mu);
        if (--s->inflight_bindings == s->parked_bindings)
            pthread_cond_broadcast(&s->bind_idle);
    }
    s->hold_released = 0;
    pthread_mutex_unlock(&s->bind_mu);
}

int64_t ks__binding_next_permit_deadline(ks_scheduler *s)
{
    int64_t next = -1;
    if (!s->binders)
        return next;
    pthread_mutex_lock(&s->bind_mu);
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&s->waiting, &it, &k, &v);) {
        ks_binding_job *j = v;
        if (j->parked && !j->rejected && (next < 0 || j->deadline_ns < next))
            next = j->deadline_ns;
    }
    pthread_mutex_unlock(&s->bind_mu);
    return next;
}

/* Under bind_mu: parked jobs whose deadline passed at now are rejected and go back to the job
 * queue. The earliest deadline still ahead, INT64_MAX when none. */
static int64_t expire_permits(ks_scheduler *s, int64_t now)
{
    int64_t next = INT64_MAX;
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&s->waiting, &it, &k, &v);) {
        ks_binding_job *j = v;
        if (!j->parked)
            continue;
        if (j->deadline_ns <= now) {
            reject_timeout(j);
            unpark(s, j);
        } else if (j->deadline_ns < next) {
            next = j->deadline_ns;
        }
    }
    return next;
}

size_t ks__binding_expire_permits(ks_scheduler *s)
{
    if (!s->binders)
        return 0;
    ks__binding_hold(s, 1); /* a simulated source's timed-out jobs run here, in order */
    pthread_mutex_lock(&s->bind_mu);
    size_t before = s->parked_bindings;
    expire_permits(s, permit_now(s));
    size_t expired = before - s->parked_bindings;
    pthread_mutex_unlock(&s->bind_mu);
    ks__binding_hold(s, 0);
    return expired;
}

int ks__binding_reject_waiting(ks_scheduler *s, const char *uid, const char *plugin,
                               const char *msg)
{
    pthread_mutex_lock(&s->bind_mu);
    ks_binding_job *j = ks__strmap_get(&s->waiting, uid);
    if (j && !j->rejected) {
        j->rejected = 1;
        snprintf(j->reject_plugin, sizeof(j->reject_plugin), "%s", plugin);
        snprintf(j->reject_msg, sizeof(j->reject_msg), "%s", msg);
        if (j->parked)
            unpark(s, j);
    }
    pthread_mutex_unlock(&s->bind_mu);
    return j != NULL;
}

int ks__binding_sleep(void *ctx, const char *uid, int64_t ns)
{
    ks_scheduler *s = ctx;
    if (s->source.flags & KS_SOURCE_SIMULATED)
        return 0; /* nothing else changes the in-memory cluster meanwhile */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    int64_t t = until.tv_nsec + (ns > 0 ? ns : 0);
    until.tv_sec += t / 1000000000;
    until.tv_nsec = t % 1000000000;
    int rc = 0;
    pthread_mutex_lock(&s->bind_mu);
    for (;;) {
        ks_binding_job *j = ks__strmap_get(&s->binding, uid);
        int stopping = s->bind_quit || s->bind_stopping;
        if (stopping || (j && (j->gone || j->canceled))) {
            rc = j && j->gone && !stopping && !j->canceled ? KS_ENOTFOUND : KS_ECANCELED;
            if (j && j->canceled)
                j->saw_cancel = 1;
            break;
        }
        if (pthread_cond_timedwait(&s->bind_cv, &s->bind_mu, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&s->bind_mu);
    return rc;
}

void ks__binding_pod_deleted(ks_scheduler *s, const char *uid)
{
    pthread_mutex_lock(&s->bind_mu);
    ks_binding_job *j = s->binders ? ks__strmap_get(&s->binding, uid) : NULL;
    if (j) {
        j->gone = 1;
        pthread_cond_broadcast(&s->bind_cv); /* a PreBind sleeping in ks__binding_sleep */
    }
    pthread_mutex_unlock(&s->bind_mu);
}

void ks__binding_stopping(ks_scheduler *s)
{
    if (!s->binders)
        return;
    pthread_mutex_lock(&s->bind_mu);
    s->bind_stopping = 1;
    /* upstream cancels the binding cycles' context: a Permit wait ends rejected */
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&s->waiting, &it, &k, &v);) {
        ks_binding_job *j = v;
        if (!j->parked || j->rejected)
            continue;
        j->rejected = 1;
        snprintf(j->reject_plugin, sizeof(j->reject_plugin), "%s", "");
        snprintf(j->reject_msg, sizeof(j->reject_msg), "%s", "the scheduler is stopping");
        unpark(s, j);
    }
    pthread_cond_broadcast(&s->bind_cv); /* PreBinds sleeping in ks__binding_sleep */
    pthread_mutex_unlock(&s->bind_mu);
}

int ks__binding_cancel_prebind(ks_scheduler *s, const char *uid, const char *msg)
{
    int canceled = 0;
    pthread_mutex_lock(&s->bind_mu);
    ks_binding_job *j = s->binders ? ks__strmap_get(&s->binding, uid) : NULL;
    if (j && j->in_prebind && !j->prebound) {
        if (!j->canceled) {
            j->canceled = 1;
            snprintf(j->cancel_msg, sizeof(j->cancel_msg), "%s", msg);
            pthread_cond_broadcast(&s->bind_cv); /* its PreBind's sleep ends */
        }
        canceled = 1;
    }
    pthread_mutex_unlock(&s->bind_mu);
    return canceled;
}

static void report_bind(ks_scheduler *s, ks_binding_job *j, const char *result, ks_sym node,
                        const char *msg)
{
    if (s->observer.bind_done)
        s->observer.bind_done(s->observer.ctx, j->seq, j->qp->pod, j->fw->profile_name, result,
                              node, msg);
}

/* handleBindingCycleError: Unreserve in reverse, forget the assumed pod, wake pods that an
 * assigned-pod deletion may help, and requeue this one. */
static void binding_failed(ks_scheduler *s, ks_binding_job *j, ks_code code, const char *msg,
                           uint64_t rejectors)
{
    ks_sym node = j->assumed->node_name;
    ks__fw_run_unreserve(j->fw, j->cycle, j->assumed, node);
    /* Only a forgotten pod frees room. When the watch already confirmed the pod bound (by another
     * scheduler: the 409 of a conflicting binding) the cache holds that binding instead, and the
     * queue has dropped the pod, so requeueing below does nothing (upstream: "Pod has been
     * assigned to node. Abort adding it back to queue."). */
    /* Upstream moves pods (AssignedPodDelete) before requeueing this one after an error, and after
     * it when it was rejected, leaving the pod itself alone: "it's always Unschedulable" (as an
     * event recorded while it was in flight, the forget would send it to backoffQ instead). */
    int rejected =
        code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || code == KS_PENDING;
    /* the forgotten pod goes to the hints as the deleted object (upstream passes assumedPod) */
    ks_event_info ev = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, .old_pod = j->assumed};
    int forgotten = ks__cache_forget_pod(s->cache, j->assumed->uid) == 0;
    ks__podgroup_member_forget(s->podgroups, j->assumed); /* upstream forgetPodGroupMember */
    if (forgotten && !rejected) {
        ks__queue_move_on_event_info(s->queue, &ev, NULL);
    } else if (!forgotten && ks__log_enabled(2)) {
        ks__log(
            'I', NULL,
            "pod %s: binding failed but the pod is no longer assumed (bound elsewhere, or deleted)",
            j->qp->pod->key);
    }
    report_bind(s, j, code == KS_ERROR ? "Error" : "Unschedulable", KS_SYM_ABSENT, msg);
    ks__handle_failure(s, j->fw, j->qp, code, msg, rejectors, 0, KS_SYM_ABSENT);
    /* j->qp may be popped again or freed by now; the job still holds the assumed pod (its uid) */
    if (forgotten && rejected)
        ks__queue_move_on_event_info(s->queue, &ev, j->assumed->uid);
}

/* upstream bindingCycle's start (NominatedNodeNameForExpectation, on by default since v1.35):
 * PreBindPreFlight, then, when PreBind will have work or the pod will wait on Permit, tell the
 * cluster where the pod is going (status.nominatedNodeName) before it waits. Gate off: no
 * preflight, every PreBind plugin runs. Binding thread, no lock held. */
static void pre_flight(ks_scheduler *s, ks_binding_job *j)
{
    j->preflighted = 1;
    j->preflight = KS_SUCCESS;
    if (!s->nnn_for_expectation)
        return;
    ks_status st;
    ks_sym node = j->assumed->node_name;
    j->preflight = ks__fw_run_pre_bind_pre_flights(j->fw, j->cycle, j->assumed, node, &st);
    if (j->preflight == KS_ERROR) {
        ks__status_message(&st, j->preflight_msg, sizeof(j->preflight_msg));
        return;
    }
    if ((j->preflight == KS_SUCCESS || j->waited) && j->assumed->nominated_node_name != node &&
        s->source.nominate)
        s->source.nominate(s->source.ctx, j->assumed, node);
}

/* upstream RunPreBindPlugins: a plugin error that comes from the cancelled context (here: its
 * sleep answered KS_ECANCELED because a preemptor cancelled the pod) is replaced by the cause,
 * "running PreBind plugin \"VolumeBinding\": preempted by DefaultPreemption". */
static void cancel_cause(ks_scheduler *s, ks_binding_job *j, ks_status *st)
{
    char msg[KS_STATUS_BUF];
    pthread_mutex_lock(&s->bind_mu);
    int replace = j->canceled && j->saw_cancel;
    if (replace)
        snprintf(msg, sizeof(msg), "running PreBind plugin \"%s\": %s",
                 st->plugin ? st->plugin : "", j->cancel_msg);
    pthread_mutex_unlock(&s->bind_mu);
    if (replace) {
        const char *plugin = st->plugin;
        ks__status_reset(st);
        st->code = KS_ERROR;
        st->plugin = plugin;
        ks__status_add(st, msg);
    }
}

static void run_job(ks_scheduler *s, ks_binding_job *j)
{
    ks_status st;
    ks_sym node = j->assumed->node_name;
    ks_code code;

    if (!j->preflighted)
        pre_flight(s, j);
    pthread_mutex_lock(&s->bind_mu);
    if (j->preflight == KS_ERROR) {
        /* upstream returns before WaitOnPermit; the pod leaves the waiting map with the job */
        ks__strmap_remove(&s->waiting, j->assumed->uid);
        pthread_mutex_unlock(&s->bind_mu);
        binding_failed(s, j, KS_ERROR, j->preflight_msg, 0);
        return;
    }
    int permit = wait_on_permit(s, j);
    pthread_mutex_unlock(&s->bind_mu);
    if (j->waited) /* upstream WaitOnPermit: the status code it ended with */
        ks__sched_metrics_permit_wait(s, permit == 0, j->submit_ns);
    if (permit != 0) {
        char *m = NULL;
        size_t len = strlen(j->reject_msg) + 64;
        m = malloc(len);
        if (m)
            snprintf(m, len, "0/1 nodes are available: 1 %s.",
                     j->reject_msg); /* FitError, one node */
        binding_failed(s, j, KS_UNSCHEDULABLE, m ? m : j->reject_msg,
                       ks__plugin_bit(j->fw, j->reject_plugin));
        free(m);
        return;
    }
    /* upstream AddPodInPreBind: a pod whose PreBind has work can be preempted in memory */
    pthread_mutex_lock(&s->bind_mu);
    j->in_prebind = s->nnn_for_expectation && j->preflight == KS_SUCCESS;
    pthread_mutex_unlock(&s->bind_mu);
    code = ks__fw_run_pre_bind(j->fw, j->cycle, j->assumed, node, &st);
    if (code == KS_ERROR && j->in_prebind)
        cancel_cause(s, j, &st);
    if (code == KS_SUCCESS && j->in_prebind) {
        /* upstream MarkPrebound: a preemptor that cancelled it meanwhile wins */
        pthread_mutex_lock(&s->bind_mu);
        if (j->canceled) {
            ks__status_reset(&st);
            ks__status_add(&st, j->cancel_msg);
            code = KS_ERROR;
        } else {
            j->prebound = 1;
        }
        pthread_mutex_unlock(&s->bind_mu);
    }
    if (code == KS_SUCCESS) {
        code = ks__fw_run_bind(j->fw, j->cycle, j->assumed, node, &st);
        if (code == KS_SKIP) {
            ks__status_add(&st, "no bind plugin bound the pod (every Bind plugin returned Skip)");
            code = KS_ERROR;
        }
    }
    if (code != KS_SUCCESS) {
        char msg[KS_STATUS_BUF + 64];
        ks__status_message(&st, msg, sizeof(msg));
        binding_failed(s, j, code == KS_ERROR ? KS_ERROR : code, msg,
                       code == KS_ERROR ? 0 : ks__plugin_bit(j->fw, st.plugin ? st.plugin : ""));
        return;
    }
    ks__cache_finish_binding(s->cache, j->assumed->uid);
    if (s->source.scheduled)
        s->source.scheduled(s->source.ctx, j->assumed, node, j->fw->profile_name);
    report_bind(s, j, "Scheduled", node, NULL);
    /* upstream bindingCycle: PodScheduled, attempts, SLI, before PostBind */
    ks__sched_metrics_attempt(s, j->fw, KS_RESULT_SCHEDULED, j->qp->attempt_start_ns);
    ks__sched_metrics_bound(s, j->qp);
    ks__fw_run_post_bind(j->fw, j->cycle, j->assumed, node);
    ks__sched_activate_requested(s, j->cycle); /* upstream: at the end of a binding cycle */
    ks__queue_done(s->queue, j->qp);
    j->qp = NULL;
}

/* A job whose binding cycle has ended: its cycle state, its hold on the assumed pod, the job. */
static void free_job(ks_scheduler *s, ks_binding_job *j)
{
    ks__sched_metrics_binding(s, -1);
    pthread_mutex_lock(&s->bind_mu);
    if (ks__strmap_get(&s->binding, j->assumed->uid) == j)
        ks__strmap_remove(&s->binding, j->assumed->uid);
    pthread_mutex_unlock(&s->bind_mu);
    ks__cycle_free(j->cycle);
    ks__pod_unref(j->assumed);
    ks__profiles_release(s, j->set); /* after the cycle: its state may belong to fw's plugins */
    free(j);
}

static void *binder_main(void *arg)
{
    ks_scheduler *s = arg;
    pthread_mutex_lock(&s->bind_mu);
    for (;;) {
        while (!s->jobs_head && !s->bind_quit) {
            s->idle_binders++;
            pthread_cond_wait(&s->jobs_cv, &s->bind_mu);
            s->idle_binders--;
        }
        if (!s->jobs_head && s->bind_quit)
            break;
        ks_binding_job *j = s->jobs_head;
        if (!j)
            continue;
        s->jobs_head = j->next;
        if (!s->jobs_head)
            s->jobs_tail = NULL;
        if (!j->preflighted) { /* before it may park: the nomination precedes the wait */
            pthread_mutex_unlock(&s->bind_mu);
            pre_flight(s, j);
            pthread_mutex_lock(&s->bind_mu);
        }
        if (j->waiting && !j->rejected && j->preflight != KS_ERROR &&
            j->deadline_ns > permit_now(s) && !s->bind_quit) {
            /* Permit said wait: park it (the timer thread learns of its deadline). */
            j->parked = 1;
            s->parked_bindings++;
            pthread_cond_broadcast(&s->bind_cv);
            pthread_cond_broadcast(&s->bind_idle); /* settled: every job done or parked */
            continue;
        }
        pthread_mutex_unlock(&s->bind_mu);

        run_job(s, j);
        free_job(s, j);

        pthread_mutex_lock(&s->bind_mu);
        if (--s->inflight_bindings == s->parked_bindings)
            pthread_cond_broadcast(&s->bind_idle); /* idle, or settled */
    }
    pthread_mutex_unlock(&s->bind_mu);
    return NULL;
}

/* Under bind_mu: one more binding thread, unless the pool is at KS_MAX_BINDERS or the system
 * refuses (the job then waits for a busy one, as before). */
static void add_binder(ks_scheduler *s)
{
    /* a simulated source's binders run what Permit released one at a time, in order */
    if (s->nbinders >= KS_MAX_BINDERS || s->bind_quit || (s->source.flags & KS_SOURCE_SIMULATED))
        return;
    if (s->nbinders == s->binders_cap) {
        int cap = s->binders_cap * 2;
        pthread_t *b = realloc(s->binders, (size_t)cap * sizeof(*b));
        if (!b)
            return;
        s->binders = b;
        s->binders_cap = cap;
    }
    if (pthread_create(&s->binders[s->nbinders], NULL, binder_main, s) == 0) {
        s->nbinders++;
        if (ks__log_enabled(4))
            ks__log('I', NULL, "binding pool: %d threads (every one was busy)", s->nbinders);
    }
}

int ks__binding_start(ks_scheduler *s, int workers)
{
    pthread_mutex_init(&s->bind_mu, NULL);
    pthread_cond_init(&s->bind_cv, NULL);
    pthread_cond_init(&s->jobs_cv, NULL);
    pthread_cond_init(&s->bind_idle, NULL);
    ks__strmap_init(&s->waiting);
    ks__strmap_init(&s->binding);
    s->binders = calloc((size_t)workers, sizeof(pthread_t));
    if (!s->binders)
        return KS_ENOMEM;
    s->binders_cap = workers;
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&s->binders[i], NULL, binder_main, s) != 0)
            return KS_ENOMEM;
        s->nbinders++;
    }
    if (s->source.flags & KS_SOURCE_SIMULATED)
        return 0; /* its Permit deadlines are on the virtual clock: simulate expires them */
    if (pthread_create(&s->permit_timer, NULL, permit_timer_main, s) != 0)
        return KS_ENOMEM;
    s->has_permit_timer = 1;
    return 0;
}

void ks__binding_stop(ks_scheduler *s)
{
    if (!s->binders)
        return;
    pthread_mutex_lock(&s->bind_mu);
    s->bind_quit = 1;
    {
        /* Pods still waiting on Permit are rejected so that their binding cycle ends. */
        const char *k;
        void *v;
        for (size_t it = 0; ks__strmap_next(&s->waiting, &it, &k, &v);) {
            ks_binding_job *j = v;
            if (!j->parked)
                continue;
            j->rejected = 1;
            snprintf(j->reject_plugin, sizeof(j->reject_plugin), "%s", "");
            snprintf(j->reject_msg, sizeof(j->reject_msg), "%s", "the scheduler is stopping");
            unpark(s, j);
        }
    }
    pthread_cond_broadcast(&s->jobs_cv);
    pthread_cond_broadcast(&s->bind_cv);
    pthread_mutex_unlock(&s->bind_mu);
    if (s->has_permit_timer)
        pthread_join(s->permit_timer, NULL);
    for (int i = 0; i < s->nbinders; i++)
        pthread_join(s->binders[i], NULL);
    free(s->binders);
    s->binders = NULL;
    ks__strmap_destroy(&s->waiting);
    ks__strmap_destroy(&s->binding);
    pthread_mutex_destroy(&s->bind_mu);
    pthread_cond_destroy(&s->bind_cv);
    pthread_cond_destroy(&s->jobs_cv);
    pthread_cond_destroy(&s->bind_idle);
}

void ks__binding_submit(ks_scheduler *s, ks_framework *fw, ks_cycle *cycle, ks_queued_pod *qp,
                        ks_pod *assumed, uint64_t seq, uint64_t waiting, int64_t timeout_ms)
{
    ks_binding_job *j = calloc(1, sizeof(*j));
    if (!j) {
        ks__fw_run_unreserve(fw, cycle, assumed, assumed->node_name);
        ks__cache_forget_pod(s->cache, assumed->uid);
        ks__podgroup_member_forget(s->podgroups, assumed);
        ks__handle_failure(s, fw, qp, KS_ERROR, "out of memory starting the binding cycle", 0, 0,
                           KS_SYM_ABSENT);
        ks__cycle_free(cycle);
        ks__pod_unref(assumed);
        return;
    }
    j->fw = fw;
    j->set = ks__profiles_hold(s); /* the scheduling thread: fw is the current set's */
    j->cycle = cycle;
    j->qp = qp;
    j->assumed = assumed;
    j->seq = seq;
    j->waiting = waiting;
    j->deadline_ns = permit_now(s) + timeout_ms * 1000000;
    j->timeout_ms = timeout_ms;
    j->waited = waiting != 0;
    j->submit_ns = s->metrics ? ks__clock_now_ns() : 0;
    ks__sched_metrics_binding(s, +1); /* upstream Goroutines{binding}: the binding goroutine */
    if (s->bind_inline && !waiting) {
        run_job(s, j);
        free_job(s, j);
        return;
    }
    pthread_mutex_lock(&s->bind_mu);
    if (waiting)
        ks__strmap_put(&s->waiting, assumed->uid, j, NULL);
    ks__strmap_put(&s->binding, assumed->uid, j, NULL);
    if (s->jobs_tail)
        s->jobs_tail->next = j;
    else
        s->jobs_head = j;
    s->jobs_tail = j;
    s->inflight_bindings++;
    /* More jobs waiting than idle binders to take them (a binder counts as idle until it wakes
     * up): every binder is busy, and a PreBind may wait long; one more. */
    size_t queued = 0;
    for (ks_binding_job *q = s->jobs_head; q && queued <= (size_t)s->idle_binders; q = q->next)
        queued++;
    if (queued > (size_t)s->idle_binders)
        add_binder(s);
    pthread_cond_signal(&s->jobs_cv); /* one job wakes one binder */
    pthread_mutex_unlock(&s->bind_mu);
}

void ks__scheduler_wait_bindings(ks_scheduler *s)
{
    pthread_mutex_lock(&s->bind_mu);
    while (s->inflight_bindings > 0)
        pthread_cond_wait(&s->bind_idle, &s->bind_mu);
    pthread_mutex_unlock(&s->bind_mu);
}

void ks__scheduler_wait_bindings_settled(ks_scheduler *s)
{
    pthread_mutex_lock(&s->bind_mu);
    while (s->inflight_bindings > s->parked_bindings)
        pthread_cond_wait(&s->bind_idle, &s->bind_mu);
    pthread_mutex_unlock(&s->bind_mu);
}
