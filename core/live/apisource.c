/*
 * Live mode (see apisource.h): informers, the scheduling loop, the ticker and shutdown. The
 * side effects are in apisource_ops.c.
 */
#include "live/apisource.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "live/apisource_int.h"
#include "live/delegated_auth.h"
#include "sched/plugin_guard.h"
#include "sched/framework_metrics.h" /* ks__seconds_since */
#include "util/clock.h"
#include "api/intern.h"
#include "util/errors.h"
#include "util/log.h"
#include "api/objects.h"
#include "sched/queue.h"
#include "api/store.h"
#include "sched/volume_events.h"

typedef struct inf_entry {
    void *obj; /* ks_pod * / ks_node * (a reference), or cJSON * for store kinds */
    unsigned gen;
} inf_entry;

static const char *const k_pod_selector = "status.phase!=Succeeded,status.phase!=Failed";

/* Interruptible sleep: returns early once s->stop is set. */
static void nap(ks_apisrc *s, int ms)
{
    for (int t = 0; t < ms && !atomic_load(&s->stop); t += 50) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static const char *meta_str(const cJSON *o, const char *k)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* List items carry no kind / apiVersion; the parsers and the store want them. Also drops
 * managedFields (upstream's informer transform). */
static void normalize(ks_informer *in, cJSON *o)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, "kind"))
        cJSON_AddStringToObject(o, "kind", in->name);
    if (!cJSON_GetObjectItemCaseSensitive(o, "apiVersion"))
        cJSON_AddStringToObject(o, "apiVersion", in->api_version);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    if (meta)
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
}

static void entry_free(ks_informer *in, inf_entry *e)
{
    if (!e)
        return;
    if (in->type == INF_POD)
        ks__pod_unref(e->obj);
    else if (in->type == INF_NODE)
        ks__node_unref(e->obj);
    else
        cJSON_Delete(e->obj);
    free(e);
}

static int pod_handled(ks_apisrc *s, const ks_pod *p)
{
    return ks__scheduler_profile_index(s->sched, p->scheduler_name) >= 0;
}

/* scheduler_event_handling_duration_seconds{event}: how long handing an informer event to the
 * scheduler took, labelled as upstream's event handlers label theirs (eventhandlers.go). */
static void event_handled(ks_apisrc *s, const char *event, int64_t t0)
{
    if (event)
        ks__metrics_observe(KS_METRICS_WITH(s->m.event_handling_duration, event),
                            ks__seconds_since(t0));
}

/* Whether another known object (another uid) has gone's name. The cache keeps Nodes and the
 * store keeps its kinds by name, so when an object was deleted and re-created under the same
 * name while we were not watching, the relist has already put the new one in place and the
 * old one's deletion must not remove it. O(known), for Node and store deletions only. */
static int name_reused(ks_informer *in, const inf_entry *gone)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (ks__strmap_next(&in->known, &it, &k, &v)) {
        const inf_entry *e = v;
        if (in->type == INF_NODE) {
            if (((const ks_node *)e->obj)->name == ((const ks_node *)gone->obj)->name)
                return 1;
            continue;
        }
        const char *n1 = meta_str(e->obj, "name"), *n2 = meta_str(gone->obj, "name");
        const char *s1 = meta_str(e->obj, "namespace"), *s2 = meta_str(gone->obj, "namespace");
        if (n1 && n2 && !strcmp(n1, n2) && !strcmp(s1 ? s1 : "", s2 ? s2 : ""))
            return 1;
    }
    return 0;
}

/* A DRA kind's add, update or delete, and its cluster event. ResourceClaims are filed as
 * upstream's assume cache files them: an update no newer than what the store holds (the answer
 * to DynamicResources' own write, filed already) is skipped. */
static int dra_store_change(ks_apisrc *s, const cJSON *obj, int deleted, char *err, size_t errlen,
                            int64_t t0)
{
    ks_store *st = ks__scheduler_store(s->sched);
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "kind"));
    ks_dra_change chg;
    int rc = !deleted && ks__draobj_kind(kind) == KS_DK_RESOURCE_CLAIM
                 ? ks__store_assume_dra(st, obj, &chg, err, errlen)
                 : ks__store_apply_dra(st, obj, deleted, 0, &chg, err, errlen);
    if (rc == 0 && (chg.old_obj || chg.new_obj)) {
        char label[64];
        ks__scheduler_on_dra_change(s->sched, &chg, label);
        event_handled(s, label[0] ? label : NULL, t0);
    }
    return rc;
}

/* A store kind's add, update or delete. The storage kinds (PersistentVolumes, claims, ...) are
 * also cluster events for the parked pods' hints, timed under upstream's label. */
static int store_change(ks_informer *in, const cJSON *obj, int deleted, char *err, size_t errlen,
                        int64_t t0)
{
    ks_apisrc *s = in->src;
    if (in->type == INF_CUSTOM) { /* a plugin's resource: filed, and its event for the queue */
        const char *label = NULL;
        int rc = ks__scheduler_apply_custom(s->sched, in->res, obj, deleted, &label, err, errlen);
        if (rc == 0)
            event_handled(s, label, t0);
        return rc;
    }
    if (in->type == INF_PODGROUP) { /* upstream's gang scheduling: filed, and its event */
        char label[64];
        int rc = ks__scheduler_apply_podgroup(s->sched, obj, deleted, 0, label, err, errlen);
        if (rc == 0 && label[0])
            event_handled(s, label, t0);
        return rc;
    }
    if (ks__draobj_kind(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "kind"))) >= 0)
        return dra_store_change(s, obj, deleted, err, errlen, t0);
    ks_store_change chg;
    int rc = ks__store_apply_ex(ks__scheduler_store(s->sched), obj, deleted, 0, &chg, err, errlen);
    if (rc == 0 && (chg.old_obj || chg.new_obj)) {
        char label[64];
        ks__scheduler_on_volume_change(s->sched, &chg, label);
        event_handled(s, label, t0);
    }
    return rc;
}

/* The object is gone: tell the scheduler and forget it. */
static void forget(ks_informer *in, const char *uid)
{
    ks_apisrc *s = in->src;
    inf_entry *e = ks__strmap_remove(&in->known, uid);
    if (!e)
        return;
    char err[512] = "";
    int64_t t0 = ks__clock_now_ns();
    if (in->type == INF_POD) {
        ks_pod *p = e->obj;
        ks__scheduler_on_pod_delete(s->sched, p);
        event_handled(s,
                      p->node_name != KS_SYM_EMPTY ? "AssignedPodDelete"
                      : pod_handled(s, p)          ? "UnscheduledPodDelete"
                                                   : NULL,
                      t0);
    } else if (name_reused(in, e)) {
        if (ks__log_enabled(2))
            ks__log('I', "apisource",
                    "%s %s (uid %s) was deleted and re-created under the same name", in->name,
                    in->type == INF_NODE ? ks__sym_str(((ks_node *)e->obj)->name)
                                         : meta_str(e->obj, "name"),
                    uid);
    } else if (in->type == INF_NODE) {
        ks__scheduler_on_node_delete(s->sched, e->obj);
        event_handled(s, "NodeDelete", t0);
    } else if (store_change(in, e->obj, 1, err, sizeof(err), t0) != 0) {
        ks__log('W', "apisource", "%s %s: delete: %s", in->name, uid, err);
    }
    entry_free(in, e);
}

/* upstream v1.37 updatePodInSchedulingQueue: only an update that carries the same object (the
 * same resourceVersion: a relist) is skipped; any other goes to the queue, status-only ones
 * included (the ResourceClaim controller names a template's claim in
 * status.resourceClaimStatuses: UpdatePodGeneratedResourceClaim). v1.34's isPodUpdated, which
 * ignored status changes, is gone. */
static int pod_changed(const ks_pod *prev, const ks_pod *pod)
{
    return !prev->resource_version || !pod->resource_version || !*pod->resource_version ||
           strcmp(prev->resource_version, pod->resource_version) != 0;
}

/* ADDED / MODIFIED / listed. Takes obj. */
static void upsert(ks_informer *in, cJSON *obj)
{
    ks_apisrc *s = in->src;
    char err[512] = "";
    normalize(in, obj);
    const char *uid = meta_str(obj, "uid"), *name = meta_str(obj, "name");
    const char *ns = meta_str(obj, "namespace");
    if (!uid || !name) {
        ks__log('W', "apisource", "%s without metadata.uid / metadata.name: skipped", in->name);
        cJSON_Delete(obj);
        return;
    }
    inf_entry *old = ks__strmap_get(&in->known, uid);
    int64_t t0 = ks__clock_now_ns();
    inf_entry *e = calloc(1, sizeof(*e));
    if (!e) {
        cJSON_Delete(obj);
        return;
    }
    e->gen = in->gen;
    if (in->type == INF_NODE) {
        ks_node *node;
        if (ks__node_from_json(obj, &node, err, sizeof(err)) != 0) {
            ks__log('W', "apisource", "Node %s: %s: skipped", name, err);
            free(e);
            cJSON_Delete(obj);
            return;
        }
        if (old) {
            /* The hints judge the update from both objects; upstream times it under the label
             * of each event it sent (NodeUpdateNodeLabel, ...), none when nothing relevant
             * changed. */
            ks_cluster_event evs[KS_NODE_CHANGE_MAX];
            size_t n = 0;
            ks__scheduler_on_node_update(s->sched, old->obj, node, evs, &n);
            for (size_t i = 0; i < n; i++)
                event_handled(s, ks__queue_event_label(&evs[i]), t0);
        } else {
            ks__scheduler_on_node_add(s->sched, node);
            event_handled(s, "NodeAdd", t0);
        }
        e->obj = node;
    } else if (in->type == INF_POD) {
        ks_pod *pod;
        if (ks__pod_from_json(obj, &pod, err, sizeof(err)) != 0) {
            ks__log('W', "apisource", "Pod %s/%s: %s: skipped", ns ? ns : "", name, err);
            free(e);
            cJSON_Delete(obj);
            return;
        }
        e->obj = pod;
        ks_pod *prev = old ? old->obj : NULL;
        int rc = prev ? ks__scheduler_on_pod_update(s->sched, prev, pod, pod_changed(prev, pod))
                      : ks__scheduler_on_pod_add(s->sched, pod);
        if (rc != 0 && rc != KS_ENOTFOUND && ks__log_enabled(4))
            ks__log('I', "apisource", "pod %s: %s: %s", pod->key, prev ? "update" : "add",
                    ks__strerror(rc));
        /* Labelled as upstream's handlers: a pending pod is the unschedulable-pod informer's, an
         * assigned one the assigned-pod informer's. A pod that became bound leaves the first
         * (a delete there) and enters the second (an add). */
        int assigned = pod->node_name != KS_SYM_EMPTY,
            was_assigned = prev && prev->node_name != KS_SYM_EMPTY;
        if (assigned && prev && !was_assigned)
            event_handled(s, pod_handled(s, prev) ? "UnscheduledPodDelete" : NULL, t0);
        event_handled(s,
                      assigned ? (was_assigned ? "AssignedPodUpdate" : "AssignedPodAdd")
                      : pod_handled(s, pod) ? (prev ? "UnscheduledPodUpdate" : "UnscheduledPodAdd")
                                            : NULL,
                      t0);
    } else {
        if (store_change(in, obj, 0, err, sizeof(err), t0) != 0) {
            ks__log('W', "apisource", "%s %s%s%s: %s: skipped", in->name, ns ? ns : "",
                    ns ? "/" : "", name, err);
            free(e);
            cJSON_Delete(obj);
            return;
        }
        e->obj = obj;
        obj = NULL;
    }
    /* uid points into obj (or into e->obj, which the entry keeps): insert before obj goes. */
    void *replaced = NULL;
    if (ks__strmap_put(&in->known, uid, e, &replaced) != 0) {
        entry_free(in, e);
        cJSON_Delete(obj);
        return;
    }
    cJSON_Delete(obj);
    entry_free(in, replaced);
}

static int on_list_item(cJSON *item, void *ud)
{
    ks_informer *in = ud;
    upsert(in, item);
    return atomic_load(&in->src->stop) ? KS_API_STOPPED : 0;
}

static int on_event(const char *type, cJSON *obj, void *ud)
{
    ks_informer *in = ud;
    in->events++;
    if (in->failures) {
        ks__log('I', "apisource", "%s informer: watching %s again after %d failed attempt(s)",
                in->name, in->path, in->failures);
        in->failures = 0;
    }
    if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
        upsert(in, obj);
    } else if (!strcmp(type, "DELETED")) {
        const char *uid = meta_str(obj, "uid");
        if (uid)
            forget(in, uid);
        else
            ks__log('W', "apisource",
                    "%s informer: DELETED event without metadata.uid (%s): skipped", in->name,
                    meta_str(obj, "name") ? meta_str(obj, "name") : "no name either");
        cJSON_Delete(obj);
    } else {
        cJSON_Delete(obj); /* BOOKMARK: the client keeps its resourceVersion */
    }
    return 0;
}

/* After a relist: what the new list lacks was deleted meanwhile. */
static void reconcile(ks_informer *in)
{
    size_t n = 0, cap = 0, it = 0;
    char **gone = NULL;
    const char *k;
    void *v;
    while (ks__strmap_next(&in->known, &it, &k, &v)) {
        if (((inf_entry *)v)->gen == in->gen)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **g = realloc(gone, cap * sizeof(*g));
            if (!g)
                break;
            gone = g;
        }
        gone[n++] = strdup(k);
    }
    for (size_t i = 0; i < n; i++) {
        if (gone[i])
            forget(in, gone[i]);
        free(gone[i]);
    }
    free(gone);
    if (n)
        ks__log('I', "apisource", "%s informer: %zu object(s) deleted while not watching", in->name,
                n);
}

/* The informer's handlers, for tests that feed them (apisource_int.h). */
int ks__informer_list_item(ks_informer *in, cJSON *item) { return on_list_item(item, in); }
int ks__informer_event(ks_informer *in, const char *type, cJSON *obj)
{
    return on_event(type, obj, in);
}
void ks__informer_begin_list(ks_informer *in) { in->gen++; }
void ks__informer_end_list(ks_informer *in) { reconcile(in); }
void ks__informer_clear(ks_informer *in)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (ks__strmap_next(&in->known, &it, &k, &v))
        entry_free(in, v);
    ks__strmap_destroy(&in->known);
    ks__strmap_init(&in->known);
}

/* Waits before the next attempt: the reflector's backoff, 1 s doubling to 30 s (reset after a
 * success), interruptible by stop. */
static void backoff_wait(ks_informer *in, int *backoff_ms)
{
    nap(in->src, *backoff_ms);
    *backoff_ms = *backoff_ms * 2 > 30000 ? 30000 : *backoff_ms * 2;
}

static void set_synced(ks_informer *in)
{
    ks_apisrc *s = in->src;
    pthread_mutex_lock(&s->mu);
    atomic_store(&in->synced, 1);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The API server does not serve this optional informer's resource (why: discovery, or the 404
 * of its list). Not an error: what was known of it is forgotten (as a relist that found
 * nothing), the informer counts as synced, and the one line at -v=2 per change says what is
 * missing and what that turns off. Then waits before the next list. */
static void not_served(ks_informer *in, const char *why)
{
    if (!in->absent) {
        in->absent = 1;
        if (ks__log_enabled(2))
            ks__log('I', "apisource",
                    "%s informer: the API server does not serve %s (%s) (%s): not watching it; "
                    "without it %s; listing it again every %d s",
                    in->name, in->api_version, in->path, why, in->without,
                    KS_ABSENT_RECHECK_MS / 1000);
        in->gen++;
        reconcile(in);
    }
    if (!atomic_load(&in->synced))
        set_synced(in);
    nap(in->src, KS_ABSENT_RECHECK_MS);
}

void *ks__informer_main(void *arg)
{
    ks_informer *in = arg;
    ks_apisrc *s = in->src;
    char *rv = NULL;
    int need_list = 1, unpaged = 0, backoff_ms = 1000;
    /* An optional group: does the server serve it at all? (one GET /apis, on this thread so
     * that a server that is down delays nothing but this informer) */
    if (ks__informer_discover(in) && !atomic_load(&s->stop))
        not_served(in, in->absent_why);
    while (!atomic_load(&s->stop)) {
        int rc;
        if (need_list) {
            char *lrv = NULL;
            /* After an expired continue token, one list in a single page, as the reflector
             * falls back to a full list. */
            ks_api_list_opts lo = {.field_selector = in->field_selector, .limit = unpaged ? -1 : 0};
            in->gen++;
            rc = ks__api_list(in->api, in->path, &lo, on_list_item, in, &lrv);
            if (rc == KS_API_STOPPED || atomic_load(&s->stop)) {
                free(lrv);
                break;
            }
            if (rc == KS_API_GONE && !unpaged) {
                free(lrv);
                ks__log('I', "apisource", "%s informer: %s; listing again in one page", in->name,
                        ks__api_error(in->api));
                unpaged = 1;
                continue;
            }
            if (rc == KS_ENOTFOUND && in->without) {
                free(lrv);
                not_served(in, ks__api_error(in->api));
                continue;
            }
            if (in->without && in->absent_if_forbidden && ks__api_last_status(in->api) == 403) {
                free(lrv);
                if (!in->absent)
                    ks__log('W', "apisource", "%s informer: %s; without it %s", in->name,
                            ks__api_error(in->api), in->without);
                not_served(in, "forbidden");
                continue;
            }
            if (rc != 0) {
                free(lrv);
                in->failures++;
                ks__log('W', "apisource",
                        "%s informer: list %s failed (attempt %d, retrying in %d ms): %s", in->name,
                        in->path, in->failures, backoff_ms, ks__api_error(in->api));
                backoff_wait(in, &backoff_ms);
                continue;
            }
            unpaged = 0;
            if (in->absent) {
                ks__log('I', "apisource", "%s informer: the API server serves %s now: watching it",
                        in->name, in->path);
                in->absent = 0;
            }
            reconcile(in);
            free(rv);
            rv = lrv;
            need_list = 0;
            backoff_ms = 1000;
            if (in->failures)
                ks__log('I', "apisource",
                        "%s informer: listed %s after %d failed attempt(s) (%zu objects, "
                        "resourceVersion %s)",
                        in->name, in->path, in->failures, in->known.len, rv ? rv : "");
            else if (atomic_load(&in->synced))
                ks__log('I', "apisource",
                        "%s informer: listed %s again (%zu objects, resourceVersion %s)", in->name,
                        in->path, in->known.len, rv ? rv : "");
            in->failures = 0;
            if (!atomic_load(&in->synced)) {
                if (ks__log_enabled(2))
                    ks__log('I', "apisource",
                            "%s informer synced (%zu objects, resourceVersion %s)", in->name,
                            in->known.len, rv ? rv : "");
                set_synced(in);
            }
        }
        char *nrv = NULL;
        ks_api_watch_opts wo = {.resource_version = rv, .field_selector = in->field_selector};
        int64_t watch_start = ks__clock_monotonic(NULL);
        in->events = 0;
        rc = ks__api_watch(in->api, in->path, &wo, on_event, in, &nrv);
        if (nrv && nrv[0]) {
            free(rv);
            rv = nrv;
        } else {
            free(nrv);
        }
        if (rc == KS_API_STOPPED || atomic_load(&s->stop))
            break;
        /* A watch that delivered events or stayed open a while was a success: the next failure
         * starts the backoff afresh. One closed within 1 s with no event counts as a failure,
         * as the reflector's "very short watch" (an API server shutting down does that). */
        int was_up = ks__api_last_status(in->api) == 200 &&
                     (in->events || ks__clock_monotonic(NULL) - watch_start >= 1000000000LL);
        if (was_up)
            backoff_ms = 1000;
        if (rc == 0 && was_up)
            continue; /* the server's watch timeout: resume */
        if (rc == 0)
            snprintf(in->api_err, sizeof(in->api_err),
                     "GET %s (watch): closed after less than a second "
                     "without an event (is the API server shutting down?)",
                     in->path);
        if (rc == KS_ENOTFOUND && in->without) {
            need_list = 1; /* no longer served? the list tells (and says so) */
            continue;
        }
        if (rc == KS_API_GONE) {
            ks__log('I', "apisource",
                    "%s informer: resourceVersion %s is too old (410 Gone): relisting", in->name,
                    rv ? rv : "");
            need_list = 1;
            continue;
        }
        in->failures++;
        ks__log('W', "apisource",
                "%s informer: watch %s failed (attempt %d, reconnecting in %d ms): %s", in->name,
                in->path, in->failures, backoff_ms, rc == 0 ? in->api_err : ks__api_error(in->api));
        backoff_wait(in, &backoff_ms);
        if (!rv || !rv[0])
            need_list = 1;
    }
    free(rv);
    return NULL;
}

/* ---- ticker, signals ----------------------------------------------------------------------- */

/* ---- endpoints and metrics ------------------------------------------------------------------- */

static int ready_synced(void *ctx)
{
    ks_apisrc *s = ctx;
    return atomic_load(&s->synced) != 0;
}

/* One queue's pods in scheduler_pending_pods {queue}, and its entities in
 * scheduler_queued_entities {queue, type} once that queue has held an entity of the type
 * (upstream's recorder makes an entity series at its first Add). Without GenericWorkload every
 * pod is its own entity; with it, a pod group's queued members are one "podgroup" entity and only
 * the other pods are "pod" ones (ks_queue_entity_counts). */
static void set_queue_gauges(ks_apisrc *s, const ks_queue_entity_counts *ec, int where,
                             const char *queue)
{
    ks__metrics_set(KS_METRICS_WITH(s->m.pending_pods, queue), (double)ec->pods[where]);
    if (ec->ever & (1u << where))
        ks__metrics_set(KS_METRICS_WITH(s->m.queued_entities, queue, KS_METRICS_ENTITY_POD),
                        (double)ec->pod_entities[where]);
    if (ec->ever_group & (1u << where))
        ks__metrics_set(KS_METRICS_WITH(s->m.queued_entities, queue, KS_METRICS_ENTITY_PODGROUP),
                        (double)ec->group_entities[where]);
}

/* The queue gauges and scheduler_cache_size {type}, refreshed every second. */
static void update_gauges(ks_apisrc *s)
{
    ks_queue_entity_counts ec;
    ks_cache_counts cc;
    if (!s->metrics)
        return;
    /* out of memory: this second's values are skipped, the last ones stay */
    if (ks__queue_entity_counts(ks__scheduler_queue(s->sched), &ec) == 0) {
        set_queue_gauges(s, &ec, KS_Q_ACTIVE, KS_METRICS_QUEUE_ACTIVE);
        set_queue_gauges(s, &ec, KS_Q_BACKOFF, KS_METRICS_QUEUE_BACKOFF);
        set_queue_gauges(s, &ec, KS_Q_UNSCHEDULABLE, KS_METRICS_QUEUE_UNSCHEDULABLE);
        set_queue_gauges(s, &ec, KS_Q_GATED, KS_METRICS_QUEUE_GATED);
        /* upstream's queue makes both series when it starts, the gate on or off (its
         * podGroupMemberPods are built either way): kube-scheduler v1.37.2 without the gate
         * serves them at 0 too */
        ks__metrics_set(KS_METRICS_WITH(s->m.pending_pods, KS_METRICS_QUEUE_INCOMPLETE),
                        (double)ec.incomplete);
        ks__metrics_set(KS_METRICS_WITH(s->m.pending_pods, KS_METRICS_QUEUE_PENDING),
                        (double)ec.pending);
    }
    ks__cache_counts(ks__scheduler_cache(s->sched), &cc);
    ks__metrics_set(KS_METRICS_WITH(s->m.cache_size, KS_METRICS_CACHE_NODES), (double)cc.nodes);
    ks__metrics_set(KS_METRICS_WITH(s->m.cache_size, KS_METRICS_CACHE_PODS), (double)cc.pods);
    ks__metrics_set(KS_METRICS_WITH(s->m.cache_size, KS_METRICS_CACHE_ASSUMED_PODS),
                    (double)cc.assumed);
}

static void *ticker_main(void *arg)
{
    ks_apisrc *s = arg;
    int ticks = 0;
    while (!atomic_load(&s->stop)) {
        nap(s, 1000);
        if (atomic_load(&s->stop))
            break;
        ks_queue *q = ks__scheduler_queue(s->sched);
        ks__queue_flush_backoff(q);
        if (++ticks % 30 == 0)
            ks__queue_flush_unschedulable(q);
        update_gauges(s);
    }
    return NULL;
}

static void request_stop(ks_apisrc *s)
{
    if (atomic_exchange(&s->stop, 1))
        return;
    if (s->sched) {
        ks__queue_close(ks__scheduler_queue(s->sched)); /* no new pods; pop returns NULL */
        ks__scheduler_stopping(s->sched);               /* waiting binding cycles end now */
    }
    pthread_mutex_lock(&s->mu);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *signal_main(void *arg)
{
    ks_apisrc *s = arg;
    sigset_t set;
    int sig = 0;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1); /* internal: the run ended without a signal */
    sigaddset(&set, SIGHUP);  /* a configuration reload (reloader.h) */
    while (sigwait(&set, &sig) == 0) {
        if (sig == SIGUSR1)
            break;
        if (sig == SIGHUP) {
            if (s->reloader)
                ks__reloader_trigger(s->reloader);
            else
                ks__log('W', "apisource",
                        "received SIGHUP: no configuration reload without a "
                        "--config file; ignored");
            continue;
        }
        ks__log('I', "apisource",
                "received %s: no new scheduling attempts; waiting for bindings in flight",
                sig == SIGINT ? "SIGINT" : "SIGTERM");
        request_stop(s);
        break;
    }
    return NULL;
}

/* ---- run ----------------------------------------------------------------------------------- */

typedef struct inf_def {
    const char *kind, *api_version, *path, *field_selector;
    int type;
    const char *without;     /* ks_informer.without: NULL when the server must serve it */
    int absent_if_forbidden; /* ks_informer.absent_if_forbidden */
} inf_def;

/* Core v1 is always served. The groups can be turned off on an API server (--runtime-config
 * apps/v1=false, policy/v1=false): then kubesched schedules without them, as it would in a
 * cluster that has none of those objects. */
static const inf_def k_informers[] = {
    {"Node", "v1", "/api/v1/nodes", NULL, INF_NODE, NULL, 0},
    {"Pod", "v1", "/api/v1/pods", NULL /* k_pod_selector, set below */, INF_POD, NULL, 0},
    {"Namespace", "v1", "/api/v1/namespaces", NULL, INF_STORE, NULL, 0},
    {"Service", "v1", "/api/v1/services", NULL, INF_STORE, NULL, 0},
    {"ReplicationController", "v1", "/api/v1/replicationcontrollers", NULL, INF_STORE, NULL, 0},
    {"ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets", NULL, INF_STORE,
     "PodTopologySpread's system default constraints do not see ReplicaSet selectors", 0},
    {"StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets", NULL, INF_STORE,
     "PodTopologySpread's system default constraints do not see StatefulSet selectors", 0},
    {"PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets", NULL, INF_STORE,
     "preemption does not respect PodDisruptionBudgets", 0},
    /* The volume plugins' kinds (upstream's informers for VolumeBinding, VolumeZone,
     * VolumeRestrictions and NodeVolumeLimits; VolumeAttachments for NodeVolumeLimits). */
    {"PersistentVolume", "v1", "/api/v1/persistentvolumes", NULL, INF_STORE, NULL, 0},
    {"PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims", NULL, INF_STORE, NULL, 0},
    {"StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses", NULL, INF_STORE,
     "VolumeZone does not see StorageClasses (claims waiting for their first consumer)", 0},
    {"CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes", NULL, INF_STORE,
     "no CSINode is known (the attach limits of CSI drivers)", 0},
    {"CSIDriver", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csidrivers", NULL, INF_STORE,
     "no CSIDriver is known", 0},
    {"CSIStorageCapacity", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csistoragecapacities",
     NULL, INF_STORE, "no CSIStorageCapacity is known", 0},
    {"VolumeAttachment", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/volumeattachments", NULL,
     INF_STORE, "NodeVolumeLimits does not count the volumes attached to a node", 0},
    /* Dynamic Resource Allocation (upstream's informers for DynamicResources): optional, a
     * cluster whose API server does not serve resource.k8s.io/v1 has no devices to allocate. */
    {"ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices", NULL,
     INF_STORE, "no ResourceSlice is known (no devices for Dynamic Resource Allocation)", 0},
    {"DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses", NULL, INF_STORE,
     "no DeviceClass is known", 0},
    {"ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims", NULL,
     INF_STORE, "no ResourceClaim is known", 0},
    /* upstream v1.37 watches them (DRADeviceTaintRules, GA and on). A v1.35 or v1.36 API server
     * does not serve them at v1 (404), and its system:kube-scheduler role, without the gate, does
     * not grant them (403, which would otherwise be retried forever and hold back the sync). */
    {"DeviceTaintRule", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/devicetaintrules", NULL,
     INF_STORE, "DeviceTaintRules do not taint devices", 1},
};

_Static_assert(sizeof(k_informers) / sizeof(k_informers[0]) + 1 /* PodGroup */ <=
                   KS_APISRC_FIXED_INFORMERS,
               "s->inf has no room for every fixed informer and the plugins' resources");

int ks__discovery_has(const cJSON *list, const char *group_version)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(list, "groups");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(list, "kind");
    if (!cJSON_IsArray(groups) || !cJSON_IsString(kind) ||
        strcmp(kind->valuestring, "APIGroupList"))
        return -1;
    const cJSON *g, *v;
    cJSON_ArrayForEach(g, groups)
    {
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(g, "versions"))
        {
            const cJSON *gv = cJSON_GetObjectItemCaseSensitive(v, "groupVersion");
            if (cJSON_IsString(gv) && !strcmp(gv->valuestring, group_version))
                return 1;
        }
    }
    return 0;
}

const char *ks__informer_discover(ks_informer *in)
{
    if (!in->without || !strchr(in->api_version, '/'))
        return NULL; /* required, or core v1 (under /api, never in /apis) */
    ks_api_response r = {0};
    int rc = ks__api_request(in->api, "GET", "/apis", NULL, NULL, &r);
    cJSON *list = rc == 0 ? cJSON_Parse(r.body ? r.body : "") : NULL;
    ks__api_response_free(&r);
    int has = list ? ks__discovery_has(list, in->api_version) : -1;
    cJSON_Delete(list);
    if (has < 0 && rc != KS_API_STOPPED && ks__log_enabled(2))
        ks__log('I', "apisource", "%s informer: discovery: %s; its list decides", in->name,
                rc != 0 ? ks__api_error(in->api) : "GET /apis: not an APIGroupList");
    in->absent_why = has == 0 ? "not in the API server's discovery, GET /apis" : NULL;
    return in->absent_why;
}

/* The threads ks__apisource_run starts besides the informers', joined when it stops. */
typedef struct run_threads {
    pthread_t sig, tick;
    int sig_started, tick_started;
} run_threads;

/* Every thread started from here on inherits the blocked signals; the signal thread takes them. */
static void block_signals(sigset_t *oldset)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, oldset);
}

/* The kubeconfig to use (flag, config file, in-cluster, ...) and the client's rate limiter. */
static int connect_client(ks_apisrc *s, char *err, size_t errlen)
{
    const ks_apisource_opts *o = s->o;
    const char *note = NULL;
    int rc;
    ks_kubeconfig_sources src = {
        .have_config_file = o->have_config_file,
        .config_kubeconfig = o->cfg->client_connection.kubeconfig,
        .flag_kubeconfig = o->flag_kubeconfig,
    };
    ks__kubeconfig_pick(&src, &note);
    if (note)
        ks__log('W', "apisource", "%s", note);
    if ((rc = ks__kubeconfig_resolve(&src, &s->kc, err, errlen)) != 0)
        return rc;
    double qps = o->cfg->client_connection.qps;
    int burst = o->cfg->client_connection.burst;
    if (qps > 0 &&
        (rc = ks__ratelimit_create(qps, burst > 0 ? burst : 1, NULL, NULL, &s->rl)) != 0) {
        snprintf(err, errlen, "clientConnection: cannot create the rate limiter (qps %g, burst %d)",
                 qps, burst);
        return rc;
    }
    s->aopts.qps = qps > 0 ? qps : -1;
    s->aopts.burst = burst;
    s->aopts.limiter = s->rl;
    ks__log('I', "apisource", "connecting to %s (%s), qps %g, burst %d", s->kc->server,
            s->kc->origin, qps, burst);
    return 0;
}

/* The metrics registry and the scheduler, wired to this source. */
static int create_scheduler(ks_apisrc *s, char *err, size_t errlen)
{
    const ks_apisource_opts *o = s->o;
    s->metrics = ks__metrics_create();
    if (!s->metrics || ks__metrics_register_scheduler(s->metrics, &s->m) != 0) {
        snprintf(err, errlen, "out of memory creating the metrics registry");
        return KS_ENOMEM;
    }
    ks_scheduler_opts so = {
        .cfg = o->cfg,
        .plans = o->plans,
        .seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32),
        .source = ks__apisrc_ops(s),
        .observer = {s, NULL, NULL, NULL},
        .metrics = &s->m, /* the scheduler fills attempts, durations, queue and framework metrics */
        .victims_leave_on_delete_event = 1, /* the watch reports each victim's deletion */
        .first_release = o->first_release,
        .first_owner = o->first_owner,
    };
    return ks__scheduler_new(&so, &s->sched, err, errlen);
}

/* Configuration reload (reloader.h), when the program gave a loader; a failure to start it is
 * logged and the run goes on without reloads. */
static void start_reloader(ks_apisrc *s)
{
    const ks_apisource_opts *o = s->o;
    if (!o->reload.load || !o->config_path)
        return;
    char err[256] = "";
    ks_reloader_opts ro = {.path = o->config_path,
                           .loader = o->reload,
                           .sched = s->sched,
                           .running = o->cfg,
                           .metrics = s->metrics};
    if (ks__reloader_start(&ro, &s->reloader, err, sizeof(err)) != 0)
        ks__log('W', "apisource", "no configuration reload: %s", err);
}

/* The client configuration of delegated authentication or authorization (`what`), as upstream's
 * getClient with RemoteKubeConfigFileOptional: the flag's file, else the in-cluster config,
 * else none (*out NULL, with upstream's warning). A file that does not load is an error. */
static int delegation_kubeconfig(const char *what, const char *path, ks_kubeconfig **out, char *err,
                                 size_t errlen)
{
    char why[1024] = "";
    *out = NULL;
    if (path && *path) {
        if (ks__kubeconfig_load(path, NULL, out, why, sizeof why) != 0) {
            snprintf(err, errlen, "failed to get delegated %s kubeconfig (--%s-kubeconfig %s): %s",
                     what, what, path, why);
            return KS_EINVAL;
        }
        return 0;
    }
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (host && *host && port && *port &&
        ks__kubeconfig_in_cluster(NULL, out, why, sizeof why) != 0) {
        ks__log('W', "apisource", "failed to read in-cluster kubeconfig for delegated %s: %s", what,
                why);
        *out = NULL;
    }
    if (!*out) {
        if (!strcmp(what, "authentication"))
            ks__log('W', "apisource",
                    "No authentication-kubeconfig provided and not in a cluster, so bearer tokens "
                    "are not reviewed: every request to the serving port is anonymous");
        else
            ks__log('W', "apisource",
                    "No authorization-kubeconfig provided, so SubjectAccessReview of "
                    "authorization tokens won't work: only --authorization-always-allow-paths and "
                    "group system:masters are allowed");
    }
    return 0;
}

/* /healthz, /livez, /readyz, /metrics (and /statusz, /flagz) over HTTPS, when a port is set. */
static int serve_endpoints(ks_apisrc *s, char *err, size_t errlen)
{
    const ks_apisource_opts *o = s->o;
    int rc;
    if (o->port <= 0)
        return 0;
    if ((rc = ks__tls_ctx_create(o->tls_cert_file, o->tls_key_file, &s->tls, err, errlen)) != 0)
        return rc;
    /* /metrics, /statusz and /flagz behind delegated authentication and authorization, as
     * kube-scheduler; the health paths always allowed. */
    ks_delegated_auth_opts ao = {.token_ttl_ns = o->token_ttl_ns,
                                 .authorized_ttl_ns = o->authorized_ttl_ns,
                                 .unauthorized_ttl_ns = o->unauthorized_ttl_ns,
                                 .always_allow_paths = o->always_allow_paths,
                                 .nalways_allow_paths = o->nalways_allow_paths,
                                 .no_always_allow_paths = o->no_always_allow_paths};
    if ((rc = delegation_kubeconfig("authentication", o->authn_kubeconfig, &ao.authn_kc, err,
                                    errlen)) != 0)
        return rc;
    if ((rc = delegation_kubeconfig("authorization", o->authz_kubeconfig, &ao.authz_kc, err,
                                    errlen)) != 0) {
        ks__kubeconfig_free(ao.authn_kc);
        return rc;
    }
    if ((rc = ks__delegated_auth_create(&ao, &s->auth, err, errlen)) != 0)
        return rc;
    char *client_ca = NULL; /* copied by the server */
    if (o->client_ca_file && *o->client_ca_file &&
        (rc = ks__tls_read_client_ca(o->client_ca_file, &client_ca, err, errlen)) != 0)
        return rc;
    /* Upstream with leader election: /healthz has the leaderElection check (and no ping),
     * /readyz lists leaderElection, shutdown, sched-handler-sync. */
    int le_on = o->cfg->leader_election.leader_elect;
    ks_http_check le_check = {"leaderElection", ks__apisrc_leader_healthy, s};
    ks_http_check ready[] = {le_check,
                             {"sched-handler-sync", ready_synced, s},
                             {"plugin-watchdog", ks__apisrc_plugins_ready, s}};
    ks_httpserver_opts ho = {
        .bind_address = o->bind_address,
        .port = o->port,
        .metrics = s->metrics,
        .ready_checks = ready + !le_on,
        .nready_checks = 2 + (size_t)le_on,
        .nready_before_shutdown = (size_t)le_on,
        .health_checks = le_on ? &le_check : NULL,
        .nhealth_checks = (size_t)le_on,
        .tls = s->tls,
        .client_ca_pem = client_ca,
        .authorize = ks__delegated_auth_check,
        .authorize_ctx = s->auth,
    };
    ks_http_zpages zp = {
        .component = "kubesched",
        .binary_version = o->binary_version,
        .emulation_version = o->emulation_version,
        .flags = o->flags,
        .nflags = o->nflags,
    };
    if (o->binary_version)
        ho.zpages = &zp;
    rc = ks__httpserver_start(&ho, &s->http);
    int have_ca = client_ca != NULL;
    free(client_ca);
    if (rc != 0) {
        snprintf(err, errlen,
                 "cannot serve /healthz and /metrics on %s:%d (see the log above); "
                 "choose another --secure-port, or 0 to turn serving off",
                 o->bind_address ? o->bind_address : "0.0.0.0", o->port);
        return rc;
    }
    ks__log('I', "apisource",
            "serving /healthz, /livez, /readyz, /metrics%s on https://%s:%d (%s; delegated "
            "authentication %s, authorization %s)",
            ho.zpages ? ", /statusz, /flagz" : "", o->bind_address ? o->bind_address : "0.0.0.0",
            ks__httpserver_port(s->http),
            o->tls_cert_file && *o->tls_cert_file ? o->tls_cert_file : "self-signed certificate",
            ao.authn_kc ? (have_ca ? "by client certificate and TokenReview" : "by TokenReview")
                        : (have_ca ? "by client certificate" : "off (anonymous)"),
            ao.authz_kc ? "by SubjectAccessReview" : "off (always-allowed paths only)");
    return 0;
}

/* The informer s->inf[s->ninf] (described by the caller) gets its known map, its API client and
 * its thread (list, then watch). */
static int launch_informer(ks_apisrc *s, ks_informer *in, char *err, size_t errlen)
{
    ks__strmap_init(&in->known);
    s->ninf++;
    ks_api_opts ao = s->aopts;
    int rc = ks__api_create(s->kc, &ao, &in->api, err, errlen);
    if (rc != 0)
        return rc;
    if (pthread_create(&in->thread, NULL, ks__informer_main, in) != 0) {
        snprintf(err, errlen, "cannot start the %s informer thread: %s", in->name, strerror(errno));
        return KS_ENOMEM;
    }
    in->started = 1;
    return 0;
}

/* What a plugin's resource informer says when its resource is not served (no CRD installed). */
static char k_custom_without[KS_MAX_CUSTOM_RESOURCES][256];

/* One informer per resource the plugins watch (ks_resource_watch), after the fixed ones: served
 * or not (a CRD not installed counts as a resource with no objects, rechecked every minute). */
static int start_custom_informers(ks_apisrc *s, char *err, size_t errlen)
{
    for (size_t i = 0, n = ks__custom_count(); i < n; i++) {
        const struct ks_resource *res = ks__custom_at(i);
        ks_informer *in = &s->inf[s->ninf];
        snprintf(k_custom_without[i], sizeof(k_custom_without[i]),
                 "the plugins that read %s objects see none (is its CRD installed?)", res->kind);
        in->src = s;
        in->name = res->kind;
        in->api_version = res->api_version;
        in->path = res->path;
        in->type = INF_CUSTOM;
        in->res = res;
        in->without = k_custom_without[i];
        int rc = launch_informer(s, in, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* One client and one thread per informer (list, then watch). */
static int start_informers(ks_apisrc *s, char *err, size_t errlen)
{
    int rc;
    for (size_t i = 0; i < sizeof(k_informers) / sizeof(k_informers[0]); i++) {
        ks_informer *in = &s->inf[s->ninf];
        const inf_def *d = &k_informers[i];
        in->src = s;
        in->name = d->kind;
        in->api_version = d->api_version;
        in->path = d->path;
        in->field_selector = d->type == INF_POD ? k_pod_selector : d->field_selector;
        in->type = d->type;
        in->without = d->without;
        in->absent_if_forbidden = d->absent_if_forbidden;
        if ((rc = launch_informer(s, in, err, errlen)) != 0)
            return rc;
    }
    if (ks__scheduler_generic_workload(s->sched)) {
        /* upstream's PodGroup informer exists only with GenericWorkload on; an API server that
         * does not serve scheduling.k8s.io/v1beta1 (its own gate off, or no --runtime-config)
         * has none: discovery says so once and the list is retried every minute, quietly. */
        ks_informer *in = &s->inf[s->ninf];
        in->src = s;
        in->name = "PodGroup";
        in->api_version = "scheduling.k8s.io/v1beta1";
        in->path = "/apis/scheduling.k8s.io/v1beta1/podgroups";
        in->type = INF_PODGROUP;
        in->without = "GangScheduling sees no PodGroup (the pods that name one wait at PreEnqueue)";
        if ((rc = launch_informer(s, in, err, errlen)) != 0)
            return rc;
    }
    return start_custom_informers(s, err, errlen);
}

/* Scheduling starts once every informer has its initial list (or a stop was asked for). */
static void wait_for_sync(ks_apisrc *s)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        size_t synced = 0;
        for (size_t i = 0; i < s->ninf; i++)
            synced += atomic_load(&s->inf[i].synced) != 0;
        if (synced == s->ninf || atomic_load(&s->stop))
            break;
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Synced: with leader election, wait for the lease (upstream starts informers before leader
 * election; scheduling waits for the lease). */
static int lead_once_synced(ks_apisrc *s, char *err, size_t errlen)
{
    if (atomic_load(&s->stop))
        return 0;
    atomic_store(&s->synced, 1);
    ks__log('I', "apisource", "caches synced (%zu informers); scheduling with %zu profile(s)",
            s->ninf, s->o->cfg->nprofiles);
    if (s->o->cfg->leader_election.leader_elect)
        return ks__apisrc_lead(s, err, errlen);
    return 0;
}

/* The scheduling loop on this thread, with the ticker and the effects thread beside it. */
static void schedule_until_stopped(ks_apisrc *s, run_threads *t)
{
    if (atomic_load(&s->stop))
        return;
    if (pthread_create(&t->tick, NULL, ticker_main, s) == 0)
        t->tick_started = 1;
    if (ks__apisrc_effects_start(s) != 0)
        ks__log(
            'W', "apisource",
            "no effects thread: status patches and events will be sent from the scheduling thread");
    while (!atomic_load(&s->stop) && ks__scheduler_schedule_one(s->sched, 1))
        ;
}

/* Drains and stops every thread, in the order the work depends on, then frees the scheduler and
 * the informers. */
static void stop_threads(ks_apisrc *s, run_threads *t)
{
    if (s->http)
        ks__httpserver_shutting_down(s->http); /* /readyz fails while we drain */
    request_stop(s);
    ks__reloader_stop(s->reloader); /* a reload in progress ends first; it uses the scheduler */
    s->reloader = NULL;
    if (s->sched)
        ks__scheduler_wait_bindings(s->sched);
    ks__apisrc_effects_stop(s); /* after the bindings: a binding failure queues effects too */
    ks__apisrc_lead_stop(s);    /* ReleaseOnCancel, once the work the lease guards is done */
    for (size_t i = 0; i < s->ninf; i++)
        if (s->inf[i].api)
            ks__api_stop(s->inf[i].api);
    for (size_t i = 0; i < s->ninf; i++)
        if (s->inf[i].started)
            pthread_join(s->inf[i].thread, NULL);
    if (t->tick_started)
        pthread_join(t->tick, NULL);
    if (t->sig_started) {
        pthread_kill(t->sig, SIGUSR1);
        pthread_join(t->sig, NULL);
    }
    ks__scheduler_free(s->sched); /* stops the binding pool */
    for (size_t i = 0; i < s->ninf; i++) {
        ks__informer_clear(&s->inf[i]);
        ks__strmap_destroy(&s->inf[i].known);
        ks__api_destroy(s->inf[i].api);
    }
}

/* What connect_client, create_scheduler and serve_endpoints made, and s itself. */
static void free_source(ks_apisrc *s)
{
    ks__delegated_auth_cancel(s->auth); /* a review in flight must not hold up the stop */
    ks__httpserver_stop(s->http);
    ks__delegated_auth_free(s->auth);
    ks__tls_ctx_free(s->tls);
    ks__apisrc_lead_free(s);
    ks__metrics_destroy(s->metrics);
    for (size_t i = 0; i < s->napis; i++)
        ks__api_destroy(s->apis[i]);
    free(s->apis);
    ks__ratelimit_destroy(s->rl);
    ks__kubeconfig_free(s->kc);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int ks__apisource_run(const ks_apisource_opts *o, char *err, size_t errlen)
{
    ks_apisrc *s = calloc(1, sizeof(*s));
    run_threads t = {0};
    sigset_t oldset;
    int rc;
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return KS_ENOMEM;
    }
    s->o = o;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (gethostname(s->hostname, sizeof(s->hostname) - 1) != 0 || !s->hostname[0])
        snprintf(s->hostname, sizeof(s->hostname), "localhost");
    block_signals(&oldset);

    if ((rc = connect_client(s, err, errlen)) != 0 ||
        (rc = create_scheduler(s, err, errlen)) != 0 || (rc = serve_endpoints(s, err, errlen)) != 0)
        goto out;
    start_reloader(s);
    if (pthread_create(&t.sig, NULL, signal_main, s) == 0)
        t.sig_started = 1;
    if ((rc = start_informers(s, err, errlen)) == 0) {
        wait_for_sync(s);
        if ((rc = lead_once_synced(s, err, errlen)) == 0) {
            ks__guard_set_fatal_hook(ks__apisrc_on_plugin_fatal, s);
            schedule_until_stopped(s, &t);
            ks__guard_set_fatal_hook(NULL, NULL);
        }
    }
    stop_threads(s, &t);
    if (rc == 0)
        ks__log('I', "apisource", "stopped");
out:
    free_source(s);
    pthread_sigmask(SIG_SETMASK, &oldset, NULL);
    return rc;
}
