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
#include "api/custom_objects.h"
#include "api/podgroup_objects.h"
#include "api/merge_patch.h"
#include "sched/dra_manager.h"
#include "sched/volume_events.h"

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
    if (qp->profile < 0 || (size_t)qp->profile >= s->nprofiles) {
        /* Its profile went away in a reload (reload.c): it waits, gated, for one to come back. */
        qp->gating_plugin = 0;
        snprintf(qp->gated_message, sizeof(qp->gated_message),
                 "no profile with schedulerName \"%s\" (removed by a configuration reload)",
                 ks__sym_str(qp->pod->scheduler_name));
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
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

/* upstream framework.MatchClusterEvents(reg, ev): reg is "*"/All, or its resource covers ev's (Pod
 * covers AssignedPod, UnscheduledPod and TargetPod) and ev is the same or more specific than
 * reg: they share an action and ev has none reg lacks (upstream's ev <= reg, for its action
 * values; a generic Update only matches a registration of every update). */
int ks__event_matches(const ks_cluster_event *reg, const ks_cluster_event *ev)
{
    if (reg->resource == KS_RES_WILDCARD && (reg->actions & KS_ACT_ALL_ANY) == KS_ACT_ALL_ANY)
        return 1;
    int res = reg->resource == ev->resource || reg->resource == KS_RES_WILDCARD ||
              (reg->resource == KS_RES_POD &&
               (ev->resource == KS_RES_ASSIGNED_POD || ev->resource == KS_RES_UNSCHEDULED_POD ||
                ev->resource == KS_RES_TARGET_POD));
    return res && (reg->actions & ev->actions) != 0 && (ev->actions & ~reg->actions) == 0;
}

/* upstream isPodWorthRequeuing (v1.37): the queueing hints of the plugins that rejected qp (or
 * the one that gates it) for the registered events ev matches. Any Queue from a Pending plugin:
 * KS_QHINT_QUEUE_IMMEDIATELY; any other Queue: KS_QHINT_QUEUE; QueueSkip from all (or nothing
 * registered): KS_QHINT_SKIP. A registration without a hint (events_to_register of an ABI <= 1.3
 * plugin, or hint NULL) answers Queue, as upstream's defaultQueueingHintFn; a hint that returns
 * neither KS_QUEUE nor KS_QUEUE_SKIP counts as Queue with the label "Error", as a hint that
 * failed upstream. Runs under the queue's lock, on whichever thread delivered the event. */
static int hook_worth_requeue(void *ctx, const ks_queued_pod *qp, const ks_event_info *ev)
{
    ks_scheduler *s = ctx;
    if (qp->profile < 0 || (size_t)qp->profile >= s->nprofiles)
        return KS_QHINT_SKIP; /* no profile (reload.c): only a reload moves it */
    ks_framework *fw = s->fw[qp->profile];
    uint64_t plugins = qp->gating_plugin ? qp->gating_plugin : qp->rejector_plugins;
    uint64_t pending = qp->gating_plugin ? 0 : qp->pending_plugins;
    if (!plugins || ev->event.resource == KS_RES_WILDCARD)
        return KS_QHINT_QUEUE;
    const char *label = NULL; /* looked up at the first hint run (metrics only) */
    int result = KS_QHINT_SKIP;
    for (size_t i = 0; i < fw->ninst; i++) {
        if (!(plugins & (1ull << i)))
            continue;
        ks_plugin_inst *in = &fw->inst[i];
        size_t n = in->all_events ? 1 : in->nevents;
        for (size_t e = 0; e < n; e++) {
            if (!in->all_events && !ks__event_matches(&in->events[e].event, &ev->event))
                continue;
            ks_queueing_hint_fn fn = in->all_events ? NULL : in->events[e].hint;
            if (fw->metrics && !label)
                label = ks__queue_event_label(&ev->event);
            int64_t t0 = fw->metrics ? ks__clock_now_ns() : 0;
            int h = fn ? (int)fn(in->self, qp->pod, ev) : KS_QUEUE;
            const char *hl = h == KS_QUEUE_SKIP ? "QueueSkip" : h == KS_QUEUE ? "Queue" : "Error";
            if (fw->metrics)
                ks__fw_metrics_hint(fw->metrics, (int)i, label, hl, t0);
            if (h == KS_QUEUE_SKIP)
                continue;
            if (pending & (1ull << i))
                return KS_QHINT_QUEUE_IMMEDIATELY; /* the highest: no need to ask further */
            if (!pending)
                return KS_QHINT_QUEUE; /* only a Pending plugin could say more */
            result = KS_QHINT_QUEUE;
        }
    }
    return result;
}

/* Whether the plugin can reject a pod (upstream shouldHaveEnqueueExtensions: PreEnqueue,
 * PreFilter, Filter, Reserve, Permit); only those plugins' events count. */
static int can_reject(const ks_plugin_desc *d)
{
    return d->pre_enqueue || d->pre_filter || d->filter || d->reserve || d->permit;
}

/* upstream isEventOfInterest: some plugin of some profile that can reject a pod registered an
 * event ev matches (one with no registration at all counts for every event, as upstream's
 * defaultEnqueueExtension). Any thread, with or without the queue's lock. */
static int hook_interested(void *ctx, const ks_cluster_event *ev)
{
    ks_scheduler *s = ctx;
    int found = 0;
    /* set_mu: the queue asks without its lock, and a reload may swap the profiles (reload.c) */
    pthread_mutex_lock(&s->set_mu);
    for (size_t p = 0; p < s->nprofiles && !found; p++) {
        const ks_framework *fw = s->fw[p];
        for (size_t i = 0; i < fw->ninst && !found; i++) {
            const ks_plugin_inst *in = &fw->inst[i];
            if (!can_reject(in->desc))
                continue;
            found = in->all_events;
            for (size_t e = 0; e < in->nevents && !found; e++)
                found = ks__event_matches(&in->events[e].event, ev);
        }
    }
    pthread_mutex_unlock(&s->set_mu);
    return found;
}

static int hook_profile_of(void *ctx, const ks_pod *pod)
{
    return ks__scheduler_profile_index(ctx, pod->scheduler_name);
}

int64_t ks__sched_now(ks_scheduler *s)
{
    if (s->now_ns)
        return s->now_ns(s->clock_ctx);
    return ks__clock_now_ns();
}

static int64_t hook_now(void *ctx) { return ks__sched_now(ctx); }

/* upstream isPodGroupMember (GenericWorkload on, spec.schedulingGroup set), and whether the
 * PodGroup is known (upstream's queue keeps the members of an unknown one in
 * incompletePodGroupPods). Set only with the gate on (s->podgroups). */
static int hook_pod_group(void *ctx, const ks_pod *pod)
{
    ks_scheduler *s = ctx;
    if (!s->podgroups || pod->scheduling_group == KS_SYM_ABSENT)
        return KS_QPG_NONE;
    ks_pod_group *pg = ks__podgroup_store_get(s->podgroups, pod->ns, pod->scheduling_group);
    if (!pg)
        return KS_QPG_INCOMPLETE;
    ks__podgroup_unref(pg);
    return KS_QPG_MEMBER;
}

static ks_code bind_through_source(void *ctx, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                   ks_status *st)
{
    ks_scheduler *s = ctx;
    (void)cycle;
    return s->source.bind(s->source.ctx, pod, node, st);
}

void ks__scheduler_stopping(ks_scheduler *s) { ks__binding_stopping(s); }

/* DynamicResources wrote a claim (simulate's in-memory cluster, or live mode's answer filed as
 * the assume cache does): the update is a cluster event, as upstream's assume cache handler
 * sends it. */
static void dra_changed(void *ctx, struct ks_dra_change *chg)
{
    ks__scheduler_on_dra_change(ctx, chg, NULL);
}

static ks_code claim_request_through_source(void *ctx, const char *method, ks_sym ns, ks_sym name,
                                            int status, const char *content_type, const char *body,
                                            char **out, int *http_status, ks_status *st)
{
    ks_scheduler *s = ctx;
    return s->source.claim_request(s->source.ctx, method, ns, name, status, content_type, body, out,
                                   http_status, st);
}

static ks_code pod_status_through_source(void *ctx, const ks_pod *pod, const char *patch,
                                         ks_status *st)
{
    ks_scheduler *s = ctx;
    return s->source.patch_pod_status(s->source.ctx, pod, patch, st);
}

static ks_code patch_through_source(void *ctx, const ks_pod *pod, int kind, ks_sym ns, ks_sym name,
                                    const char *patch, char *rv, ks_status *st)
{
    ks_scheduler *s = ctx;
    if (!s->source.patch_storage) {
        ks__status_add(st, "this cluster source cannot write storage objects");
        return KS_ERROR;
    }
    return s->source.patch_storage(s->source.ctx, pod, (ks_vol_kind)kind, ns, name, patch, rv, st);
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

/* ---- what a gang plugin reads (ABI 1.8) ---------------------------------------------------- */

static size_t sched_waiting_each(void *ctx, ks_waiting_pod_fn fn, void *fctx)
{
    return ks__binding_waiting_each(ctx, fn, fctx);
}

/* upstream's pod lister with a namespace and one label: the pods on nodes (bound or assumed),
 * then the pending ones the queue holds that are not on a node (a pod in its binding cycle is
 * both: assumed in the cache, in flight in the queue). */
static size_t sched_pods_each(void *ctx, ks_sym ns, ks_sym key, ks_sym value, ks_pod_visit_fn fn,
                              void *fctx)
{
    ks_scheduler *s = ctx;
    size_t n_indexed = ks__pod_index_each(s, ns, key, value, fn, fctx);
    if (n_indexed != (size_t)-1)
        return n_indexed;
    ks_pod **pods = NULL;
    size_t visited = 0, n = ks__cache_pods_matching(s->cache, ns, key, value, &pods);
    for (size_t i = 0; i < n; i++) {
        fn(fctx, pods[i]);
        ks__pod_unref(pods[i]);
    }
    visited += n;
    free(pods);
    n = ks__queue_pods(s->queue, &pods);
    for (size_t i = 0; i < n; i++) {
        ks_pod *p = pods[i];
        if (p->ns == ns && ks__labels_get(p->labels, p->nlabels, key) == value &&
            !ks__cache_has_pod(s->cache, p->uid)) {
            fn(fctx, p);
            visited++;
        }
        ks__pod_unref(p);
    }
    free(pods);
    return visited;
}

void ks__sched_activate_requested(ks_scheduler *s, ks_cycle *cycle)
{
    for (struct ks_activate_req *r = cycle->activate; r; r = r->next)
        ks__queue_activate(s->queue, r->uid);
    cycle->activate = NULL;
}

/* Unix time minus the scheduler's clock: QueueSort plugins compare a pod's initial attempt
 * (queue clock) with objects' creationTimestamps. */
static int64_t unix_offset(ks_scheduler *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - ks__sched_now(s);
}

int ks__scheduler_apply_custom(ks_scheduler *s, const struct ks_resource *res, const cJSON *obj,
                               int deleted, const char **label, char *err, size_t errlen)
{
    const struct ks_object *old_obj = NULL, *new_obj = NULL;
    int rc = ks__custom_store_apply(s->custom, res, obj, deleted, &old_obj, &new_obj, err, errlen);
    if (rc != 0)
        return rc;
    uint32_t action = deleted ? KS_ACT_DELETE : old_obj ? KS_ACT_UPDATE_ANY : KS_ACT_ADD;
    ks_event_info ev = {.event = {(ks_event_resource)(KS_RES_CUSTOM_FIRST + res->index), action},
                        .old_obj = old_obj,
                        .new_obj = new_obj};
    ks__queue_move_on_event_info(s->queue, &ev, NULL);
    if (label)
        *label = ks__custom_event_label(ev.event.resource, action);
    ks__object_unref(old_obj);
    ks__object_unref(new_obj);
    return 0;
}

/* ks_object_patch: a simulated source's object is patched in memory (its Update event follows);
 * any other goes to the source, which queues the PATCH. */
static int sched_object_patch(void *ctx, const struct ks_resource *res, ks_sym ns, ks_sym name,
                              int status, const char *patch_text)
{
    ks_scheduler *s = ctx;
    cJSON *patch = cJSON_Parse(patch_text);
    int rc = cJSON_IsObject(patch) ? 0 : KS_EINVAL;
    if (rc == 0 && !(s->source.flags & KS_SOURCE_SIMULATED))
        rc = s->source.write_object
                 ? s->source.write_object(s->source.ctx, res, ns, name, status, patch_text)
                 : KS_ENOTFOUND;
    else if (rc == 0) {
        /* a status write changes status alone, as the API server's status subresource does */
        const cJSON *p = status ? cJSON_GetObjectItemCaseSensitive(patch, "status") : patch;
        const struct ks_object *o = ks__custom_store_get(s->custom, res, ns, name);
        cJSON *doc = o ? cJSON_Duplicate(o->json, 1) : NULL;
        ks__object_unref(o);
        char err[256];
        if (!o)
            rc = KS_ENOTFOUND;
        else if (!doc)
            rc = KS_ENOMEM;
        else if (p && (status ? ks__json_merge_patch_member(doc, "status", p)
                              : ks__json_merge_patch(&doc, p)) != 0)
            rc = KS_ENOMEM;
        else
            rc = ks__scheduler_apply_custom(s, res, doc, 0, NULL, err, sizeof(err));
        cJSON_Delete(doc);
    }
    cJSON_Delete(patch);
    return rc;
}

static int sched_pod_event(void *ctx, const ks_pod *pod, const char *type, const char *reason,
                           const char *note, const char *profile)
{
    ks_scheduler *s = ctx;
    if (s->source.plugin_event)
        return s->source.plugin_event(s->source.ctx, pod, type, reason, note, profile);
    if (ks__log_enabled(2))
        ks__log('I', NULL, "event %s %s for pod %s (profile %s): %s", type, reason, pod->key,
                profile, note);
    return 0;
}

/* ---- construction -------------------------------------------------------------------------- */

int ks__scheduler_new(const ks_scheduler_opts *o, ks_scheduler **out, char *err, size_t errlen)
{
    ks_scheduler *s = calloc(1, sizeof(*s));
    int rc = KS_ENOMEM;
    *out = NULL;
    if (!s)
        return KS_ENOMEM;
    ks__pod_index_init(&s->pod_index); /* first: ks__scheduler_free destroys it */
    s->cfg = o->cfg;
    s->explain = o->explain;
    s->victims_leave_on_delete_event = o->victims_leave_on_delete_event;
    s->rng = o->seed;
    s->source = o->source;
    s->observer = o->observer;
    s->now_ns = o->now_ns;
    s->clock_ctx = o->clock_ctx;
    ks__host_set_metrics(o->metrics ? o->metrics->registry : NULL);
    s->batching = !o->disable_opportunistic_batching &&
                  ks__feature_enabled(KS_FEATURE_OPPORTUNISTIC_BATCHING);
    s->sample_percent = o->plugin_metrics_sample_percent;
    /* The first profile set (reload.c builds the later ones the same way). */
    if ((rc = ks__profiles_init(s, o->cfg, o->plans, o->first_release, o->first_owner, err,
                                errlen)) != 0)
        goto fail;
    rc = KS_ENOMEM;
    s->cache = ks__cache_new();
    s->store = ks__store_new();
    s->custom = ks__custom_store_new();
    if (ks__feature_enabled(KS_FEATURE_GENERIC_WORKLOAD) &&
        !(s->podgroups = ks__podgroup_store_new()))
        goto fail;
    s->snap = ks__snapshot_new();
    s->par.pool = ks__pool_new(o->cfg->parallelism);
    s->par.parallelism = o->cfg->parallelism > 0 ? (size_t)o->cfg->parallelism : 16;
    if (!s->cache || !s->store || !s->custom || !s->snap || !s->par.pool)
        goto fail;
    ks_queue_opts qo = {
        .initial_backoff_ns = o->cfg->pod_initial_backoff_seconds * 1000000000LL,
        .max_backoff_ns = o->cfg->pod_max_backoff_seconds * 1000000000LL,
        .max_unschedulable_ns = 5LL * 60 * 1000000000LL,
        .no_pop_from_backoff = !ks__feature_enabled(KS_FEATURE_SCHEDULER_POP_FROM_BACKOFF_Q),
    };
    ks_queue_hooks qh = {s,
                         hook_less,
                         hook_pre_enqueue,
                         hook_worth_requeue,
                         hook_interested,
                         hook_profile_of,
                         hook_now,
                         o->metrics ? ks__sched_metrics_incoming : NULL,
                         o->metrics ? ks__sched_metrics_inflight : NULL,
                         s->podgroups ? hook_pod_group : NULL};
    s->queue = ks__queue_new(&qo, &qh);
    if (!s->queue || ks__sched_metrics_init(s, o->metrics, o->plugin_metrics_sample_percent) != 0)
        goto fail;
    ks__nominator_init(s);
    s->hooks.rand = ks__sched_rand;
    s->hooks.rand_ctx = s;
    s->hooks.bind = bind_through_source;
    s->hooks.bind_ctx = s;
    s->hooks.store = s->store;
    s->hooks.patch_storage = patch_through_source;
    s->hooks.binding_sleep = ks__binding_sleep;
    s->hooks.source_flags = s->source.flags;
    if (!(s->dra = ks__dra_manager_new())) {
        rc = KS_ENOMEM;
        goto fail;
    }
    s->hooks.dra = s->dra;
    s->hooks.dra_changed = dra_changed;
    s->hooks.dra_ctx = s;
    if (s->source.claim_request)
        s->hooks.claim_request = claim_request_through_source;
    if (s->source.patch_pod_status)
        s->hooks.patch_pod_status = pod_status_through_source;
    s->bind_inline = o->bind_inline;
    s->nnn_for_expectation = ks__feature_enabled(KS_FEATURE_NOMINATED_NODE_NAME_FOR_EXPECTATION);
    if ((rc = ks__binding_start(s, o->binding_workers > 0 ? o->binding_workers : 16)) != 0)
        goto fail;
    if ((rc = ks__scheduler_podgroups_check_profiles(s, err, errlen)) != 0)
        goto fail;
    ks__host_set_permit_hook(ks__permit_hook, s);
    ks__host_set_sched(&(ks_host_sched){.ctx = s,
                                        .waiting_each = sched_waiting_each,
                                        .pods_each = sched_pods_each,
                                        .custom = s->custom,
                                        .podgroups = s->podgroups,
                                        .now = hook_now,
                                        .object_patch = sched_object_patch,
                                        .pod_event = sched_pod_event,
                                        .unix_offset_ns = unix_offset(s),
                                        .store = s->store,
                                        .dra = s->dra,
                                        .source_flags = s->source.flags});
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
    ks__host_set_sched(NULL);
    ks__queue_free(s->queue);
    ks__store_free(s->store);
    ks__dra_manager_free(s->dra);
    ks__custom_store_free(s->custom);
    ks__podgroup_store_free(s->podgroups);
    ks__pod_index_destroy(&s->pod_index);
    ks__pool_free(s->par.pool);
    ks__snapshot_free(s->snap);
    ks__cache_free(s->cache);
    ks__profiles_destroy(s); /* every profile set: current, pending, retired */
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
    int found = -1;
    /* set_mu: informer threads ask while a reload may swap the profiles (reload.c) */
    pthread_mutex_lock(&s->set_mu);
    for (size_t i = 0; i < s->nprofiles && found < 0; i++)
        if (s->fw[i]->scheduler_name == name)
            found = (int)i;
    pthread_mutex_unlock(&s->set_mu);
    return found;
}

/* ---- events -------------------------------------------------------------------------------- */

static int nominated(const ks_pod *pod)
{
    return pod->nominated_node_name != KS_SYM_EMPTY && pod->nominated_node_name != KS_SYM_ABSENT;
}

int ks__scheduler_on_pod_add(ks_scheduler *s, ks_pod *pod)
{
    ks__pod_index_add(&s->pod_index, pod);
    if (pod->node_name != KS_SYM_EMPTY || ks__scheduler_profile_index(s, pod->scheduler_name) >= 0)
        ks__podgroup_member_add(s->podgroups,
                                pod); /* upstream AddPodGroupMember (NULL: gate off) */
    if (pod->node_name != KS_SYM_EMPTY) {
        int rc = ks__cache_add_pod(s->cache, pod);
        ks_event_info ev = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_ADD}, .new_pod = pod};
        if (rc == 0)
            ks__queue_move_on_event_info(s->queue, &ev, NULL);
        return rc;
    }
    if (ks__scheduler_profile_index(s, pod->scheduler_name) < 0)
        return KS_ENOTFOUND;
    int rc = ks__queue_add(s->queue, pod);
    if (rc == 0 && s->podgroups) {
        /* upstream addPodToSchedulingQueue with GenericWorkload: the new pending pod may complete
         * a gang that PreEnqueue holds back (GangScheduling's UnscheduledPod/Add hint). */
        ks_event_info ev = {.event = {KS_RES_UNSCHEDULED_POD, KS_ACT_ADD}, .new_pod = pod};
        ks__queue_move_on_event_info(s->queue, &ev, NULL);
    }
    return rc;
}

int ks__scheduler_on_pod_delete(ks_scheduler *s, ks_pod *pod)
{
    ks__pod_index_remove(&s->pod_index, pod);
    ks__podgroup_member_remove(s->podgroups, pod);
    ks__nominator_remove(s, pod->uid);
    if (pod->node_name != KS_SYM_EMPTY) {
        int rc = ks__cache_remove_pod(s->cache, pod->uid);
        ks_event_info ev = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, .old_pod = pod};
        if (rc == 0)
            ks__queue_move_on_event_info(s->queue, &ev, NULL);
        return rc;
    }
    int rc = ks__queue_delete(s->queue, pod->uid);
    int assumed = ks__cache_is_assumed(s->cache, pod->uid);
    /* upstream deletePodFromSchedulingQueue: a pod waiting on Permit is rejected ("removed"), so
     * that its binding cycle forgets it (freeing its node) and moves pods as an AssignedPod
     * delete now, not when its Permit timeout runs out. */
    ks__binding_reject_waiting(s, pod->uid, "", "removed");
    ks__binding_pod_deleted(s, pod->uid);
    if (!assumed && nominated(pod)) {
        /* The room it was nominated to is free for the pods of lower or equal priority, which
         * counted it as taken (an assumed pod's forget moves pods from its binding cycle). */
        ks_event_info ev = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, .old_pod = pod};
        ks__queue_move_on_event_le_priority(s->queue, &ev, pod->priority);
    }
    return rc;
}

int ks__scheduler_on_pod_update(ks_scheduler *s, ks_pod *old_pod, ks_pod *new_pod, int changed)
{
    ks__pod_index_remove(&s->pod_index, old_pod); /* its labels may have changed */
    ks__pod_index_add(&s->pod_index, new_pod);
    if (new_pod->node_name != KS_SYM_EMPTY ||
        ks__scheduler_profile_index(s, new_pod->scheduler_name) >= 0)
        ks__podgroup_member_update(s->podgroups, old_pod, new_pod);
    int was = old_pod->node_name != KS_SYM_EMPTY, is = new_pod->node_name != KS_SYM_EMPTY;
    if (was && is) {
        int rc = ks__cache_update_pod(s->cache, new_pod);
        /* upstream updateAssignedPodInCache: one event per change, in upstream's order
         * (PodSchedulingPropertiesChange), each moving pods on its own with the old and new
         * objects for the hints; the generic AssignedPod/Update when nothing specific changed
         * (status, annotations, deletionTimestamp), which only a plugin registering the generic
         * Update (or All, as an older plugin may) is asked about. */
        ks_cluster_event evs[KS_POD_CHANGE_MAX];
        size_t n = ks__pod_change_events(new_pod, old_pod, KS_RES_ASSIGNED_POD, evs);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            ks_event_info ev = {.event = evs[i], .old_pod = old_pod, .new_pod = new_pod};
            ks__queue_move_on_event_info(s->queue, &ev, NULL);
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
        if (changed)
            ks__queue_update_in_flight(s->queue, new_pod);
        return 0;
    }
    int rc = 0;
    ks_pod *held = changed ? NULL : ks__queue_get_pod(s->queue, new_pod->uid);
    if (changed)
        rc = ks__queue_update(s->queue, new_pod);
    else if (!held) /* ignored when it came (no profile of its name), until a reload added one */
        rc = ks__queue_add(s->queue, new_pod);
    ks__pod_unref(held);
    if (nominated(old_pod) && old_pod->nominated_node_name != new_pod->nominated_node_name) {
        /* upstream hasNominatedNodeNameChanged: room reserved on the old node is free again, for
         * the pods of lower or equal priority (getLEPriorityPreCheck). */
        ks_event_info ev = {.event = {KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, .old_pod = old_pod};
        ks__queue_move_on_event_le_priority(s->queue, &ev, old_pod->priority);
    }
    return rc;
}

int ks__scheduler_on_node_add(ks_scheduler *s, ks_node *node)
{
    int rc = ks__cache_add_node(s->cache, node);
    ks_event_info ev = {.event = {KS_RES_NODE, KS_ACT_ADD}, .new_node = node};
    if (rc == 0)
        ks__queue_move_on_event_info(s->queue, &ev, NULL);
    return rc;
}

int ks__scheduler_on_node_update(ks_scheduler *s, ks_node *old_node, ks_node *new_node,
                                 ks_cluster_event *events, size_t *nevents)
{
    int rc = ks__cache_add_node(s->cache, new_node); /* replaces it by name */
    /* upstream updateNodeInCache: only the changes that may make a node more schedulable move
     * pods, one event at a time, with both objects for the hints. */
    ks_cluster_event evs[KS_NODE_CHANGE_MAX];
    size_t n = rc == 0 ? ks__node_change_events(new_node, old_node, evs) : 0;
    for (size_t i = 0; i < n; i++) {
        ks_event_info ev = {.event = evs[i], .old_node = old_node, .new_node = new_node};
        ks__queue_move_on_event_info(s->queue, &ev, NULL);
        if (events)
            events[i] = evs[i];
    }
    if (nevents)
        *nevents = n;
    return rc;
}

int ks__scheduler_on_node_delete(ks_scheduler *s, ks_node *node)
{
    /* upstream deleteNodeFromCache: Node/Delete goes to the hints before the node leaves. */
    ks_event_info ev = {.event = {KS_RES_NODE, KS_ACT_DELETE}, .old_node = node};
    ks__queue_move_on_event_info(s->queue, &ev, NULL);
    return ks__cache_remove_node(s->cache, node->name);
}
