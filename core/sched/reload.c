/*
 * Profile sets and their swap (reload.h): building a complete new set of frameworks beside the
 * running one, swapping it in between two scheduling cycles, and freeing replaced sets once their
 * binding cycles have drained.
 *
 * Locks: set_mu guards s->pending, s->retired, s->orphans and every set's refs; it is a leaf lock
 * (nothing else is taken while it is held), so the queue hooks, which run under the queue's lock,
 * may take it. s->set / s->fw / s->nprofiles / s->cfg are written only by the scheduling thread,
 * inside ks__queue_reprofile (under the queue's lock) and under set_mu: the scheduling thread
 * reads them freely, the queue hooks under the queue's lock, other threads under set_mu
 * (ks__scheduler_profile_index).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "sched/features.h"
#include "sched/reload.h"
#include "sched/scheduler_int.h"
#include "util/clock.h"
#include "util/log.h"

struct ks_profile_set {
    ks_profile_set *next; /* on s->retired */
    const ks_config *cfg; /* borrowed (owner's) */
    size_t nprofiles;
    ks_framework **fw;
    int refs; /* the scheduler's while current, one per binding cycle begun under it (set_mu) */
    uint64_t generation;
    int64_t retired_ns; /* when it was replaced (drain time in the log) */
    void (*release)(void *owner);
    void *owner;
};

static void set_free(ks_profile_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; set->fw && i < set->nprofiles; i++)
        ks__framework_free(set->fw[i]);
    free(set->fw);
    /* Only now: the instances destroyed above ran the code of the shared objects owner holds. */
    if (set->release)
        set->release(set->owner);
    free(set);
}

void ks__profile_set_discard(ks_profile_set *set) { set_free(set); }

/* The frameworks of plans for s; the same steps as ks__scheduler_new took for the first set. */
static int build(ks_scheduler *s, ks_profile_set *set, ks_profile_plan *plans, char *err,
                 size_t errlen)
{
    int rc;
    for (size_t i = 0; i < set->nprofiles; i++) {
        if ((rc = ks__framework_new(&plans[i], &set->fw[i], err, errlen)) != 0 ||
            (rc = ks__fw_setup_batching(set->fw[i], s->batching)) != 0)
            return rc;
        set->fw[i]->parallelizer = &s->par;
        if (s->metrics) {
            if ((rc = ks__fw_metrics_attach(set->fw[i], s->metrics)) != 0)
                return rc;
            if (s->sample_percent > 0)
                set->fw[i]->metrics->sample_percent = s->sample_percent;
        }
    }
    if (set->nprofiles == 0 || set->fw[0]->n[KS_PT_QUEUE_SORT] != 1) {
        snprintf(err, errlen, "the first profile has no QueueSort plugin");
        return KS_EINVAL;
    }
    return 0;
}

int ks__profile_set_new(ks_scheduler *s, const ks_config *cfg, ks_profile_plan *plans,
                        void (*release)(void *owner), void *owner, ks_profile_set **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    ks_profile_set *set = calloc(1, sizeof(*set));
    if (set)
        set->fw = calloc(cfg->nprofiles ? cfg->nprofiles : 1, sizeof(*set->fw));
    if (!set || !set->fw) {
        free(set);
        snprintf(err, errlen, "out of memory building the profiles");
        return KS_ENOMEM;
    }
    set->cfg = cfg;
    set->nprofiles = cfg->nprofiles;
    int rc = build(s, set, plans, err, errlen);
    if (rc != 0) {
        if (rc == KS_ENOMEM && !err[0])
            snprintf(err, errlen, "out of memory building the profiles");
        set_free(set); /* release is not set yet: the caller keeps its owner */
        return rc;
    }
    set->release = release;
    set->owner = owner;
    *out = set;
    return 0;
}

/* ---- the scheduler's side (scheduler_int.h) ------------------------------------------------- */

int ks__profiles_init(ks_scheduler *s, const ks_config *cfg, ks_profile_plan *plans,
                      void (*release)(void *owner), void *owner, char *err, size_t errlen)
{
    pthread_mutex_init(&s->set_mu, NULL);
    pthread_cond_init(&s->set_cv, NULL);
    s->set_mu_ready = 1;
    ks_profile_set *set;
    int rc = ks__profile_set_new(s, cfg, plans, release, owner, &set, err, errlen);
    if (rc != 0)
        return rc;
    set->refs = 1;
    set->generation = 1;
    s->set = set;
    s->fw = set->fw;
    s->nprofiles = set->nprofiles;
    return 0;
}

void ks__profiles_destroy(ks_scheduler *s)
{
    if (!s->set_mu_ready)
        return;
    set_free(s->set);
    set_free(s->pending);
    while (s->retired) {
        ks_profile_set *r = s->retired;
        s->retired = r->next;
        set_free(r);
    }
    for (size_t i = 0; i < s->norphans; i++)
        ks__pod_unref(s->orphans[i]);
    free(s->orphans);
    s->set = s->pending = NULL;
    s->fw = NULL;
    s->nprofiles = 0;
    pthread_mutex_destroy(&s->set_mu);
    pthread_cond_destroy(&s->set_cv);
    s->set_mu_ready = 0;
}

ks_profile_set *ks__profiles_hold(ks_scheduler *s)
{
    pthread_mutex_lock(&s->set_mu);
    ks_profile_set *set = s->set;
    set->refs++;
    pthread_mutex_unlock(&s->set_mu);
    return set;
}

void ks__profiles_release(ks_scheduler *s, ks_profile_set *set)
{
    if (!set)
        return;
    pthread_mutex_lock(&s->set_mu);
    int last = --set->refs == 0;
    pthread_mutex_unlock(&s->set_mu);
    /* A retired set is freed by ks__scheduler_reap_profiles (not here: a binding thread must not
     * run plugin destructors and dlclose while holding up its next pod). */
    (void)last;
}

uint64_t ks__scheduler_profiles_generation(ks_scheduler *s)
{
    pthread_mutex_lock(&s->set_mu);
    uint64_t g = s->set->generation;
    pthread_mutex_unlock(&s->set_mu);
    return g;
}

int ks__scheduler_request_swap(ks_scheduler *s, ks_profile_set *set, int64_t timeout_ms,
                               ks_swap_result *res)
{
    ks_profile_set *dropped;
    pthread_mutex_lock(&s->set_mu);
    dropped = s->pending; /* never applied: a newer configuration replaces it */
    s->pending = set;
    set->generation = s->next_generation = (s->next_generation ? s->next_generation : 1) + 1;
    uint64_t want = set->generation;
    pthread_mutex_unlock(&s->set_mu);
    set_free(dropped);
    ks__queue_kick(s->queue); /* a pop waiting for pods returns: the swap happens now */

    int64_t deadline = ks__clock_now_ns() + timeout_ms * 1000000;
    pthread_mutex_lock(&s->set_mu);
    while (s->set->generation < want) {
        int64_t left = deadline - ks__clock_now_ns();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += left / 1000000000;
        ts.tv_nsec += left % 1000000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->set_cv, &s->set_mu, &ts);
    }
    int done = s->set->generation >= want;
    if (done && res)
        *res = s->last_swap;
    pthread_mutex_unlock(&s->set_mu);
    return done;
}

/* ks__queue_reprofile's publish: the new set becomes current (under the queue's lock). */
static void publish(void *ctx)
{
    ks_scheduler *s = ctx;
    pthread_mutex_lock(&s->set_mu);
    ks_profile_set *next = s->pending, *old = s->set;
    s->pending = NULL;
    s->set = next;
    s->fw = next->fw;
    s->nprofiles = next->nprofiles;
    s->cfg = next->cfg;
    next->refs++;
    old->retired_ns = ks__clock_now_ns();
    old->next = s->retired;
    s->retired = old;
    old->refs--; /* the scheduler's own reference */
    s->swap_from = old;
    pthread_mutex_unlock(&s->set_mu);
}

/* ks__queue_reprofile's remap, for every pod the queue holds (under the queue's lock; a pod that
 * was in its binding cycle at the swap comes here on a binding thread when it fails). */
static void remap(void *ctx, ks_queued_pod *qp)
{
    ks_scheduler *s = ctx;
    /* The plugins it counted for in scheduler_unschedulable_pods are the old profile's: taken
     * back through it during the swap (the reaper leaves swap_from alone), else dropped. */
    pthread_mutex_lock(&s->set_mu);
    const ks_profile_set *from = s->swap_from;
    if (qp->unschedulable_counted && from && qp->profile >= 0 &&
        (size_t)qp->profile < from->nprofiles && from->fw[qp->profile]->metrics)
        ks__fw_metrics_unschedulable(from->fw[qp->profile]->metrics, qp->unschedulable_counted, -1);
    pthread_mutex_unlock(&s->set_mu);
    qp->unschedulable_counted = 0;
    int had = qp->profile >= 0;
    if (!had || ks__scheduler_profile_index(s, qp->pod->scheduler_name) >= 0)
        return;
    /* Its profile is gone: reported once (ks__scheduler_reap_profiles, outside every lock). */
    pthread_mutex_lock(&s->set_mu);
    if (s->norphans == s->orphans_cap) {
        size_t ncap = s->orphans_cap ? s->orphans_cap * 2 : 16;
        ks_pod **n = realloc(s->orphans, ncap * sizeof(*n));
        if (n) {
            s->orphans = n;
            s->orphans_cap = ncap;
        }
    }
    if (s->norphans < s->orphans_cap)
        s->orphans[s->norphans++] = ks__pod_ref(qp->pod);
    s->orphans_seen++;
    pthread_mutex_unlock(&s->set_mu);
}

int ks__scheduler_apply_pending(ks_scheduler *s)
{
    pthread_mutex_lock(&s->set_mu);
    int pending = s->pending != NULL;
    size_t orphans_before = s->orphans_seen;
    pthread_mutex_unlock(&s->set_mu);
    if (!pending)
        return 0;
    int64_t t0 = ks__clock_now_ns();
    size_t moved = ks__queue_reprofile(s->queue, publish, remap, s);
    int64_t dt = ks__clock_now_ns() - t0;
    pthread_mutex_lock(&s->set_mu);
    s->swap_from = NULL;
    s->last_swap =
        (ks_swap_result){s->set->generation, dt, moved, s->orphans_seen - orphans_before};
    pthread_cond_broadcast(&s->set_cv);
    pthread_mutex_unlock(&s->set_mu);
    return 1;
}

/* Reports the pods found without a profile (the PodScheduled=False condition, once each). */
static void report_orphans(ks_scheduler *s)
{
    pthread_mutex_lock(&s->set_mu);
    ks_pod **pods = s->orphans;
    size_t n = s->norphans;
    s->orphans = NULL;
    s->norphans = s->orphans_cap = 0;
    pthread_mutex_unlock(&s->set_mu);
    for (size_t i = 0; i < n; i++) {
        char msg[384];
        const char *name = ks__sym_str(pods[i]->scheduler_name);
        snprintf(msg, sizeof(msg),
                 "no profile with schedulerName \"%s\" since the configuration was reloaded; the "
                 "pod stays pending until a profile of that name is configured again",
                 name);
        ks__log('W', "reload", "pod %s: %s", pods[i]->key, msg);
        if (s->source.failed)
            s->source.failed(s->source.ctx, pods[i], "Unschedulable", msg, KS_SYM_ABSENT, name);
        ks__pod_unref(pods[i]);
    }
    free(pods);
}

size_t ks__scheduler_reap_profiles(ks_scheduler *s)
{
    report_orphans(s);
    ks_profile_set *done = NULL;
    size_t draining = 0;
    pthread_mutex_lock(&s->set_mu);
    for (ks_profile_set **p = &s->retired; *p;) {
        ks_profile_set *r = *p;
        if (r->refs == 0 && r != s->swap_from) {
            *p = r->next;
            r->next = done;
            done = r;
        } else {
            draining++;
            p = &r->next;
        }
    }
    pthread_mutex_unlock(&s->set_mu);
    while (done) {
        ks_profile_set *r = done;
        done = r->next;
        if (ks__log_enabled(2))
            ks__log('I', "reload",
                    "profiles of generation %llu released (drained %.3f s after "
                    "the swap)",
                    (unsigned long long)r->generation,
                    (double)(ks__clock_now_ns() - r->retired_ns) / 1e9);
        set_free(r);
    }
    return draining;
}
