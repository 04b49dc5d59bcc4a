/*
 * The scheduler object: builds one framework per profile, the cache, the snapshot, the queue (with
 * the framework's QueueSort, PreEnqueue and registered events as its hooks), the worker pool and
 * the binding pool; routes object events (upstream eventhandlers.go); and owns the seeded
 * generator of tie-breaks. The cycles live in schedule_one.c and binding.c, the failure path in
 * failure.c, the nominator in nominator.c.
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
#include "sched/features.h"

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
        int64_t t0 = fw->metrics ? ks__clock_now_ns() : 0;
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

/* ---- the seeded generator ----------------------------------------------------------------- */

/* splitmix64 over the seed: the plugins' rand_below (host selection draws none since v1.37), on the
 * scheduling thread (Filter and Score workers do not draw). */
uint64_t ks__sched_rand(void *ctx)
{
    ks_scheduler *s = ctx;
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
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
        if ((rc = ks__framework_new(&o->plans[i], &s->fw[i], err, errlen)) != 0 ||
            (rc = ks__fw_setup_batching(
                 s->fw[i], !o->disable_opportunistic_batching &&
                               ks__feature_enabled(KS_FEATURE_OPPORTUNISTIC_BATCHING))) != 0)
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
    s->par.pool = ks__pool_new(o->cfg->parallelism);
    s->par.parallelism = o->cfg->parallelism > 0 ? (size_t)o->cfg->parallelism : 16;
    if (!s->cache || !s->store || !s->snap || !s->par.pool)
        goto fail;
    ks_queue_opts qo = {
        .initial_backoff_ns = o->cfg->pod_initial_backoff_seconds * 1000000000LL,
        .max_backoff_ns = o->cfg->pod_max_backoff_seconds * 1000000000LL,
        .max_unschedulable_ns = 5LL * 60 * 1000000000LL,
    };
    ks_queue_hooks qh = {s,
                         hook_less,
                         hook_pre_enqueue,
                         hook_worth_requeue,
                         hook_profile_of,
                         hook_now,
                         o->metrics ? ks__sched_metrics_incoming : NULL,
                         o->metrics ? ks__sched_metrics_inflight : NULL};
    s->queue = ks__queue_new(&qo, &qh);
    if (!s->queue || ks__sched_metrics_init(s, o->metrics, o->plugin_metrics_sample_percent) != 0)
        goto fail;
    for (size_t i = 0; i < s->nprofiles; i++)
        s->fw[i]->parallelizer = &s->par;
    ks__nominator_init(s);
    s->hooks.rand = ks__sched_rand;
    s->hooks.rand_ctx = s;
    s->hooks.bind = bind_through_source;
    s->hooks.bind_ctx = s;
    s->hooks.store = s->store;
    s->bind_inline = o->bind_inline;
    if ((rc = ks__binding_start(s, o->binding_workers > 0 ? o->binding_workers : 16)) != 0)
        goto fail;
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
    ks__host_set_permit_hook(NULL, NULL);
    ks__queue_free(s->queue);
    ks__store_free(s->store);
    ks__pool_free(s->par.pool);
    ks__snapshot_free(s->snap);
    ks__cache_free(s->cache);
    for (size_t i = 0; s->fw && i < s->nprofiles; i++)
        ks__framework_free(s->fw[i]);
    free(s->fw);
    ks__scratch_free(&s->scratch);
    ks__sched_metrics_free(s);
    ks__nominator_destroy(s);
    free(s);
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
    if (old_pod->nominated_node_name != KS_SYM_EMPTY &&
        old_pod->nominated_node_name != KS_SYM_ABSENT &&
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
