/*
 * The scheduler object: builds one framework per profile, the cache, the snapshot, the queue (with
 * the framework's QueueSort, PreEnqueue and registered events as its hooks), the worker pool and
 * the binding pool; routes object events (upstream eventhandlers.go); and handles failures
 * (upstream handleSchedulingFailure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched/host_api.h"
#include "util/clock.h"
#include "api/intern.h"
#include "util/log.h"
#include "sched/scheduler_int.h"

/* ---- queue hooks --------------------------------------------------------------------------- */

static int hook_less(void *ctx, const ks_queued_pod *a, const ks_queued_pod *b)
{
    ks_scheduler *s = ctx;
    ks_framework *fw = s->fw[0]; /* QueueSort is the same in every profile (validated) */
    ks_plugin_inst *in = fw->pt[KS_PT_QUEUE_SORT][0].inst;
    return in->desc->less(in->self, a, b);
}

static ks_code hook_pre_enqueue(void *ctx, ks_queued_pod *qp)
{
    ks_scheduler *s = ctx;
    ks_framework *fw = s->fw[qp->profile];
    ks_status st;
    int idx;
    ks_code code = ks__fw_run_pre_enqueue(fw, qp->pod, &st, &idx);
    if (code != KS_SUCCESS) {
        qp->gating_plugin = idx >= 0 ? 1ull << idx : 0;
        /* upstream runPreEnqueuePlugin: the gating plugin counts in unschedulable_pods until the
         * next pop (counted once however often PreEnqueue runs again: upstream adds it to a set
         * but increments the gauge each time, which only ever grows). */
        if (fw->metrics && !(qp->unschedulable_counted & qp->gating_plugin)) {
            ks__fw_metrics_unschedulable(fw->metrics, qp->gating_plugin, +1);
            qp->unschedulable_counted |= qp->gating_plugin;
        }
        ks__status_message(&st, qp->gated_message, sizeof(qp->gated_message));
    } else {
        qp->gating_plugin = 0;
        qp->gated_message[0] = '\0';
    }
    return code;
}

static int event_matches(const ks_cluster_event *reg, const ks_cluster_event *ev)
{
    int res = reg->resource == ev->resource || reg->resource == KS_RES_WILDCARD ||
              ev->resource == KS_RES_WILDCARD ||
              (reg->resource == KS_RES_POD &&
               (ev->resource == KS_RES_ASSIGNED_POD || ev->resource == KS_RES_UNSCHEDULED_POD));
    return res && (reg->actions & ev->actions) != 0;
}

/* Whether ev concerns one of the plugins that rejected qp (upstream isPodWorthRequeuing without
 * queueing hints: a registered event means Queue). */
static int hook_worth_requeue(void *ctx, const ks_queued_pod *qp, const ks_cluster_event *ev)
{
    ks_scheduler *s = ctx;
    ks_framework *fw = s->fw[qp->profile];
    uint64_t plugins = qp->gating_plugin ? qp->gating_plugin : qp->rejector_plugins;
    if (!plugins || ev->resource == KS_RES_WILDCARD)
        return 1;
    for (size_t i = 0; i < fw->ninst; i++) {
        if (!(plugins & (1ull << i)))
            continue;
        ks_plugin_inst *in = &fw->inst[i];
        int64_t t0 = fw->metrics ? ks__mono_ns() : 0;
        int match = in->all_events;
        for (size_t e = 0; !match && e < in->nevents; e++)
            match = event_matches(&in->events[e], ev);
        if (match) {
            /* upstream times each queueing hint function it calls (a rejector plugin registered the
             * event); ours is the registration itself, whose answer is Queue. Gated pods are
             * PreEnqueue's business, not a hint's. */
            if (t0 && !qp->gating_plugin)
                ks__fw_metrics_hint(fw->metrics, (int)i, ks__queue_event_label(ev), t0);
            return 1;
        }
    }
    return 0;
}

static int hook_profile_of(void *ctx, const ks_pod *pod)
{
    return ks__scheduler_profile_index(ctx, pod->scheduler_name);
}

static int64_t hook_now(void *ctx)
{
    ks_scheduler *s = ctx;
    if (s->now_ns)
        return s->now_ns(s->clock_ctx);
    return ks__clock_now_ns();
}

static ks_code bind_through_source(void *ctx, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                   ks_status *st)
{
    ks_scheduler *s = ctx;
    (void)cycle;
    return s->source.bind(s->source.ctx, pod, node, st);
}

/* ---- construction -------------------------------------------------------------------------- */

int ks__scheduler_new(const ks_scheduler_opts *o, ks_scheduler **out, char *err, size_t errlen)
{
    ks_scheduler *s = calloc(1, sizeof(*s));
    int rc = KS_ENOMEM;
    *out = NULL;
    if (!s)
        return KS_ENOMEM;
    s->cfg = o->cfg;
    s->explain = o->explain;
    s->victims_leave_on_delete_event = o->victims_leave_on_delete_event;
    s->rng = o->seed;
    s->source = o->source;
    s->observer = o->observer;
    s->now_ns = o->now_ns;
    s->clock_ctx = o->clock_ctx;
    s->nprofiles = o->cfg->nprofiles;
    s->fw = calloc(s->nprofiles, sizeof(*s->fw));
    if (!s->fw)
        goto fail;
    for (size_t i = 0; i < s->nprofiles; i++)
        if ((rc = ks__framework_new(&o->plans[i], &s->fw[i], err, errlen)) != 0)
            goto fail;
    rc = KS_ENOMEM;
    if (s->nprofiles == 0 || s->fw[0]->n[KS_PT_QUEUE_SORT] != 1) {
        snprintf(err, errlen, "the first profile has no QueueSort plugin");
        rc = KS_EINVAL;
        goto fail;
    }
    s->cache = ks__cache_new();
    s->store = ks__store_new();
    s->snap = ks__snapshot_new();
    s->pool = ks__pool_new(o->cfg->parallelism);
    if (!s->cache || !s->store || !s->snap || !s->pool)
        goto fail;
    ks_queue_opts qo = {
        .initial_backoff_ns = o->cfg->pod_initial_backoff_seconds * 1000000000LL,
        .max_backoff_ns = o->cfg->pod_max_backoff_seconds * 1000000000LL,
        .max_unschedulable_ns = 5LL * 60 * 1000000000LL,
    };
    ks_queue_hooks qh = {s, hook_less, hook_pre_enqueue, hook_worth_requeue, hook_profile_of, hook_now,
                         o->metrics ? ks__sched_metrics_incoming : NULL, o->metrics ? ks__sched_metrics_inflight : NULL};
    s->queue = ks__queue_new(&qo, &qh);
    if (!s->queue || ks__sched_metrics_init(s, o->metrics, o->plugin_metrics_sample_percent) != 0)
        goto fail;
    pthread_mutex_init(&s->nom_mu, NULL);
    ks__strmap_init(&s->nominated);
    s->hooks.rand = ks__sched_rand;
    s->hooks.rand_ctx = s;
    if ((rc = ks__binding_start(s, o->binding_workers > 0 ? o->binding_workers : 16)) != 0)
        goto fail;
    ks__host_set_bind_hook(bind_through_source, s);
    ks__host_set_store(s->store);
    ks__host_set_permit_hook(ks__permit_hook, s);
    *out = s;
    return 0;
fail:
    if (rc == KS_ENOMEM && (!err[0]))
        snprintf(err, errlen, "out of memory creating the scheduler");
    ks__scheduler_free(s);
    return rc;
}

void ks__scheduler_free(ks_scheduler *s)
{
    if (!s)
        return;
    if (s->binders) {
        ks__scheduler_wait_bindings(s);
        ks__binding_stop(s);
    }
    ks__host_set_bind_hook(NULL, NULL);
    ks__host_set_permit_hook(NULL, NULL);
    ks__host_set_store(NULL);
    ks__queue_free(s->queue);
    ks__store_free(s->store);
    ks__pool_free(s->pool);
    ks__snapshot_free(s->snap);
    ks__cache_free(s->cache);
    for (size_t i = 0; s->fw && i < s->nprofiles; i++)
        ks__framework_free(s->fw[i]);
    free(s->fw);
    ks__scratch_free(&s->scratch);
    ks__sched_metrics_free(s);
    if (s->hooks.rand) {
        const char *k;
        void *v;
        for (size_t it = 0; ks__strmap_next(&s->nominated, &it, &k, &v);)
            ks__pod_unref(v);
        ks__strmap_destroy(&s->nominated);
        pthread_mutex_destroy(&s->nom_mu);
    }
    free(s->nom_sets);
    free(s->nom_pods);
    free(s);
}

/* ---- nominator ----------------------------------------------------------------------------- */

void ks__nominator_add(ks_scheduler *s, ks_pod *pod)
{
    void *old = NULL;
    pthread_mutex_lock(&s->nom_mu);
    if (ks__strmap_put(&s->nominated, pod->uid, ks__pod_ref(pod), &old) != 0)
        ks__pod_unref(pod);
    pthread_mutex_unlock(&s->nom_mu);
    ks__pod_unref(old);
}

void ks__nominator_remove(ks_scheduler *s, const char *uid)
{
    pthread_mutex_lock(&s->nom_mu);
    ks_pod *old = s->nominated.len ? ks__strmap_remove(&s->nominated, uid) : NULL;
    pthread_mutex_unlock(&s->nom_mu);
    ks__pod_unref(old);
}

void ks__nominator_clear_lower(ks_scheduler *s, ks_sym node, int32_t priority)
{
    const char *k;
    void *v;
    ks_pod *pods[64];
    size_t n = 0;
    pthread_mutex_lock(&s->nom_mu);
    for (size_t it = 0; n < 64 && ks__strmap_next(&s->nominated, &it, &k, &v);) {
        ks_pod *p = v;
        if (p->nominated_node_name == node && p->priority < priority)
            pods[n++] = ks__pod_ref(p);
    }
    pthread_mutex_unlock(&s->nom_mu);
    for (size_t i = 0; i < n; i++) {
        ks__nominator_remove(s, pods[i]->uid);
        /* upstream clearNominatedNodeName: the API object loses it too */
        if (s->source.clear_nominated)
            s->source.clear_nominated(s->source.ctx, pods[i]);
        ks__pod_unref(pods[i]);
    }
}

void ks__nominator_snapshot(ks_scheduler *s)
{
    const char *k;
    void *v;
    s->hooks.nnominated = 0;
    s->hooks.nominated = NULL;
    pthread_mutex_lock(&s->nom_mu);
    size_t n = s->nominated.len;
    if (n == 0) {
        pthread_mutex_unlock(&s->nom_mu);
        return;
    }
    if (n > s->nom_pods_cap) {
        free(s->nom_pods);
        free(s->nom_sets);
        s->nom_pods = malloc(n * sizeof(*s->nom_pods));
        s->nom_sets = malloc(n * sizeof(*s->nom_sets));
        s->nom_pods_cap = s->nom_sets_cap = (s->nom_pods && s->nom_sets) ? n : 0;
        if (!s->nom_pods_cap) {
            pthread_mutex_unlock(&s->nom_mu);
            return;
        }
    }
    /* Group by node: pods sorted by node id, one set per node. */
    size_t i = 0;
    for (size_t it = 0; ks__strmap_next(&s->nominated, &it, &k, &v);)
        s->nom_pods[i++] = ks__pod_ref(v);
    pthread_mutex_unlock(&s->nom_mu);
    for (size_t a = 1; a < n; a++) /* insertion sort: few nominated pods */
        for (size_t b = a; b > 0 && s->nom_pods[b - 1]->nominated_node_name > s->nom_pods[b]->nominated_node_name; b--) {
            const ks_pod *t = s->nom_pods[b];
            s->nom_pods[b] = s->nom_pods[b - 1];
            s->nom_pods[b - 1] = t;
        }
    size_t nsets = 0;
    for (size_t a = 0; a < n; a++) {
        if (nsets == 0 || s->nom_sets[nsets - 1].node != s->nom_pods[a]->nominated_node_name)
            s->nom_sets[nsets++] = (ks_nominated_set){s->nom_pods[a]->nominated_node_name, 0, &s->nom_pods[a]};
        s->nom_sets[nsets - 1].n++;
    }
    s->hooks.nnominated = nsets;
    s->hooks.nominated = s->nom_sets;
}

void ks__nominator_release(ks_scheduler *s)
{
    size_t total = 0;
    for (size_t i = 0; i < s->hooks.nnominated; i++)
        total += s->hooks.nominated[i].n;
    for (size_t i = 0; i < total; i++)
        ks__pod_unref((ks_pod *)s->nom_pods[i]);
    s->hooks.nnominated = 0;
    s->hooks.nominated = NULL;
}

ks_queue *ks__scheduler_queue(ks_scheduler *s) { return s->queue; }
ks_cache *ks__scheduler_cache(ks_scheduler *s) { return s->cache; }
struct ks_store *ks__scheduler_store(ks_scheduler *s) { return s->store; }
ks_framework *ks__scheduler_framework(ks_scheduler *s, int i) { return s->fw[i]; }

int ks__scheduler_profile_index(ks_scheduler *s, ks_sym name)
{
    for (size_t i = 0; i < s->nprofiles; i++)
        if (s->fw[i]->scheduler_name == name)
            return (int)i;
    return -1;
}

uint64_t ks__plugin_bit(ks_framework *fw, const char *name)
{
    for (size_t i = 0; name && i < fw->ninst; i++)
        if (strcmp(fw->inst[i].name, name) == 0)
            return 1ull << i;
    return 0;
}

/* ---- events -------------------------------------------------------------------------------- */

int ks__scheduler_on_pod_add(ks_scheduler *s, ks_pod *pod)
{
    if (pod->node_name != KS_SYM_EMPTY) {
        int rc = ks__cache_add_pod(s->cache, pod);
        ks_cluster_event ev = {KS_RES_ASSIGNED_POD, KS_ACT_ADD};
        if (rc == 0)
            ks__queue_move_on_event(s->queue, &ev);
        return rc;
    }
    if (ks__scheduler_profile_index(s, pod->scheduler_name) < 0)
        return KS_ENOTFOUND;
    return ks__queue_add(s->queue, pod);
}

int ks__scheduler_on_pod_delete(ks_scheduler *s, ks_pod *pod)
{
    ks__nominator_remove(s, pod->uid);
    if (pod->node_name != KS_SYM_EMPTY) {
        int rc = ks__cache_remove_pod(s->cache, pod->uid);
        ks_cluster_event ev = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE};
        if (rc == 0)
            ks__queue_move_on_event(s->queue, &ev);
        return rc;
    }
    int rc = ks__queue_delete(s->queue, pod->uid);
    /* upstream deletePodFromSchedulingQueue: a pod waiting on Permit is rejected ("removed"), so
     * that its binding cycle forgets it (freeing its node) and moves pods as an AssignedPod
     * delete now, not when its Permit timeout runs out. */
    ks__binding_reject_waiting(s, pod->uid, "", "removed");
    return rc;
}

int ks__scheduler_on_pod_update(ks_scheduler *s, ks_pod *old_pod, ks_pod *new_pod, int spec_changed)
{
    int was = old_pod->node_name != KS_SYM_EMPTY, is = new_pod->node_name != KS_SYM_EMPTY;
    if (was && is) {
        int rc = ks__cache_update_pod(s->cache, new_pod);
        /* Upstream sends its generic Pod/Update when nothing specific changed, and every in-tree
         * queueing hint skips it for an assigned pod (NodeResourcesFit wants a scale-down,
         * InterPodAffinity and PodTopologySpread a label change). Without hints it would wake
         * every parked pod on each status or deletionTimestamp update: nothing is sent. */
        uint32_t acts = ks__pod_change_actions(new_pod, old_pod);
        /* One event per change, in upstream's order (PodSchedulingPropertiesChange returns a list
         * and updatePodInCache moves pods once per event): each has its own label
         * ("AssignedPodUpdatePodLabel", ...) for the queue's metrics and hints. */
        static const uint32_t order[] = {KS_ACT_UPDATE_POD_LABEL, KS_ACT_UPDATE_POD_SCALE_DOWN,
                                         KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                                         KS_ACT_UPDATE_POD_TOLERATIONS};
        for (size_t i = 0; rc == 0 && i < sizeof(order) / sizeof(order[0]); i++) {
            ks_cluster_event ev = {KS_RES_ASSIGNED_POD, order[i]};
            if (acts & order[i])
                ks__queue_move_on_event(s->queue, &ev);
        }
        return rc;
    }
    if (!was && is) {
        ks__nominator_remove(s, old_pod->uid);
        ks__queue_delete(s->queue, old_pod->uid);
        int rc = ks__scheduler_on_pod_add(s, new_pod);
        /* It left upstream's unscheduled-pod informer (deletePodFromSchedulingQueue): a pod of ours
         * still waiting on Permit is rejected rather than bound (409) once allowed; its binding
         * cycle finds it no longer assumed and drops it. */
        ks__binding_reject_waiting(s, old_pod->uid, "", "removed");
        return rc;
    }
    if (was) { /* nodeName is immutable once set: a recreated object; treat it as one */
        ks__scheduler_on_pod_delete(s, old_pod);
        return ks__scheduler_on_pod_add(s, new_pod);
    }
    if (ks__scheduler_profile_index(s, new_pod->scheduler_name) < 0) {
        ks__queue_delete(s->queue, old_pod->uid); /* schedulerName is immutable: normally unknown */
        return KS_ENOTFOUND;
    }
    if (ks__cache_is_assumed(s->cache, new_pod->uid)) {
        /* Its binding cycle owns it (upstream skips the queue), but a binding failure requeues
         * the latest object (upstream handleSchedulingFailure takes the informer's copy), not the
         * one assumed: keep the change for that. */
        if (spec_changed)
            ks__queue_update_in_flight(s->queue, new_pod);
        return 0;
    }
    int rc = spec_changed ? ks__queue_update(s->queue, new_pod) : 0;
    if (old_pod->nominated_node_name != KS_SYM_EMPTY && old_pod->nominated_node_name != KS_SYM_ABSENT &&
        old_pod->nominated_node_name != new_pod->nominated_node_name) {
        /* upstream hasNominatedNodeNameChanged: room reserved on the old node is free again. */
        ks_cluster_event ev = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE};
        ks__queue_move_on_event(s->queue, &ev);
    }
    return rc;
}

int ks__scheduler_on_node_add(ks_scheduler *s, ks_node *node)
{
    int rc = ks__cache_add_node(s->cache, node);
    ks_cluster_event ev = {KS_RES_NODE, KS_ACT_ADD};
    if (rc == 0)
        ks__queue_move_on_event(s->queue, &ev);
    return rc;
}

int ks__scheduler_on_node_delete(ks_scheduler *s, ks_node *node)
{
    return ks__cache_remove_node(s->cache, node->name);
}

/* ---- failures ------------------------------------------------------------------------------ */

void ks__handle_failure(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, ks_code code,
                        const char *message, uint64_t rejectors, uint64_t pending,
                        ks_sym nominated)
{
    int rejected = code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || code == KS_PENDING;
    const char *reason = rejected ? "Unschedulable" : "SchedulerError";
    if (s->metrics) {
        /* upstream handleSchedulingFailure (PodUnschedulable / PodScheduleError), then
         * AddUnschedulableIfNotPresent: each rejector plugin counts in unschedulable_pods until
         * the next pop. */
        ks__sched_metrics_attempt(s, qp->profile, rejected ? KS_RESULT_UNSCHEDULABLE : KS_RESULT_ERROR,
                                  qp->attempt_start_ns);
        /* (upstream does not requeue, nor count, a pod deleted meanwhile) */
        uint64_t add = rejected && !ks__queue_deleted_in_flight(s->queue, qp)
                           ? (rejectors | pending) & ~qp->unschedulable_counted
                           : 0;
        ks__fw_metrics_unschedulable(fw->metrics, add, +1);
        qp->unschedulable_counted |= add;
    }
    if (s->source.failed)
        s->source.failed(s->source.ctx, qp->pod, reason, message ? message : "", nominated, fw->profile_name);
    if (ks__log_enabled(2))
        ks__log('I', NULL, "Unable to schedule pod %s: %s", qp->pod->key, message ? message : "");
    qp->rejector_plugins = rejected ? rejectors : 0;
    qp->pending_plugins = pending;
    ks__queue_requeue_failed(s->queue, qp, !rejected);
}
