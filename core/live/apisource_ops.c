/*
 * The live source's side effects (see apisource.h): bind, events, status patch, eviction.
 * Binding and the Scheduled event run on the binding thread that asks for them (it may block).
 * What the scheduling thread asks for (a failure's status patch and event, an eviction) is queued
 * to the effects thread, so the scheduling thread never waits on the network. Each thread uses
 * its own ks_api.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "live/apisource_int.h"
#include "api/custom_objects.h"
#include "api/intern.h"
#include "util/log.h"
#include "api/objects.h"

static __thread ks_api *tl_api;

ks_api *ks__apisrc_thread_api(ks_apisrc *s)
{
    if (tl_api)
        return tl_api;
    char err[512] = "";
    ks_api *api;
    if (ks__api_create(s->kc, &s->aopts, &api, err, sizeof(err)) != 0) {
        ks__log('E', "apisource", "cannot create an API client: %s", err);
        return NULL;
    }
    pthread_mutex_lock(&s->mu);
    if (s->napis == s->capis) {
        size_t cap = s->capis ? s->capis * 2 : 32;
        ks_api **a = realloc(s->apis, cap * sizeof(*a));
        if (!a) {
            pthread_mutex_unlock(&s->mu);
            ks__api_destroy(api);
            return NULL;
        }
        s->apis = a;
        s->capis = cap;
    }
    s->apis[s->napis++] = api;
    pthread_mutex_unlock(&s->mu);
    tl_api = api;
    return api;
}

/* One request; logs a failure with the request and the server's answer. 0 or the api code. */
static int request(ks_apisrc *s, const char *method, const char *path, const char *body,
                   const char *ctype, const char *what)
{
    ks_api *api = ks__apisrc_thread_api(s);
    if (!api)
        return KS_ENOMEM;
    ks_api_response resp = {0};
    int rc = ks__api_request(api, method, path, body, ctype, &resp);
    if (rc != 0 && rc != KS_API_STOPPED)
        ks__log('E', "apisource", "%s failed: %s %s: %s", what, method, path, ks__api_error(api));
    ks__api_response_free(&resp);
    return rc;
}

/* RFC 3339 with microseconds (metav1.MicroTime) or seconds (metav1.Time). */
static void fmt_time(char *out, size_t len, int micro)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        snprintf(out + n, len - n, ".%06ldZ", ts.tv_nsec / 1000);
    else
        snprintf(out + n, len - n, "Z");
}

static void add_ref(cJSON *o, const char *field, const ks_pod *pod)
{
    cJSON *r = cJSON_AddObjectToObject(o, field);
    cJSON_AddStringToObject(r, "kind", "Pod");
    cJSON_AddStringToObject(r, "namespace", ks__sym_str(pod->ns));
    cJSON_AddStringToObject(r, "name", ks__sym_str(pod->name));
    cJSON_AddStringToObject(r, "uid", pod->uid ? pod->uid : "");
    cJSON_AddStringToObject(r, "apiVersion", "v1");
    if (pod->resource_version && pod->resource_version[0])
        cJSON_AddStringToObject(r, "resourceVersion", pod->resource_version);
}

/* An events.k8s.io/v1 Event about pod (related may be NULL). */
static void post_event(ks_apisrc *s, const ks_pod *pod, const char *type, const char *reason,
                       const char *action, const char *note, const char *profile)
{
    char name[400], now[64], inst[256], path[512], nbuf[1025];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(name, sizeof(name), "%s.%llx", ks__sym_str(pod->name),
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    fmt_time(now, sizeof(now), 1);
    snprintf(inst, sizeof(inst), "kubesched-%s-%s", profile ? profile : "", s->hostname);
    snprintf(nbuf, sizeof(nbuf), "%s", note ? note : ""); /* the API's 1 kB limit on note */
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "apiVersion", "events.k8s.io/v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON *meta = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ks__sym_str(pod->ns));
    cJSON_AddStringToObject(ev, "eventTime", now);
    cJSON_AddStringToObject(ev, "reportingController", "kubesched");
    cJSON_AddStringToObject(ev, "reportingInstance", inst);
    cJSON_AddStringToObject(ev, "action", action);
    cJSON_AddStringToObject(ev, "reason", reason);
    add_ref(ev, "regarding", pod);
    cJSON_AddStringToObject(ev, "note", nbuf);
    cJSON_AddStringToObject(ev, "type", type);
    char *body = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events",
             ks__sym_str(pod->ns));
    if (body) {
        char what[600];
        snprintf(what, sizeof(what), "%s event for pod %s", reason, pod->key);
        request(s, "POST", path, body, "application/json", what);
    }
    free(body);
}

static ks_code api_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    ks_apisrc *s = ctx;
    char path[600], msg[1200];
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "apiVersion", "v1");
    cJSON_AddStringToObject(b, "kind", "Binding");
    cJSON *meta = cJSON_AddObjectToObject(b, "metadata");
    cJSON_AddStringToObject(meta, "name", ks__sym_str(pod->name));
    cJSON_AddStringToObject(meta, "namespace", ks__sym_str(pod->ns));
    cJSON_AddStringToObject(meta, "uid", pod->uid ? pod->uid : "");
    cJSON *t = cJSON_AddObjectToObject(b, "target");
    cJSON_AddStringToObject(t, "kind", "Node");
    cJSON_AddStringToObject(t, "name", ks__sym_str(node));
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", ks__sym_str(pod->ns),
             ks__sym_str(pod->name));
    ks_api *api = ks__apisrc_thread_api(s);
    if (!body || !api) {
        free(body);
        ks__status_add(st, "binding: out of memory");
        return KS_ERROR;
    }
    ks_api_response resp = {0};
    int rc = ks__api_request(api, "POST", path, body, "application/json", &resp);
    free(body);
    if (rc != 0) {
        snprintf(msg, sizeof(msg), "binding rejected: %s", ks__api_error(api));
        ks__log('E', "apisource", "bind %s to %s: %s", pod->key, ks__sym_str(node),
                ks__api_error(api));
        ks__status_add(st, msg);
        ks__api_response_free(&resp);
        return KS_ERROR;
    }
    ks__api_response_free(&resp);
    if (ks__log_enabled(2))
        ks__log('I', "apisource", "bound %s to %s", pod->key, ks__sym_str(node));
    return KS_SUCCESS;
}

static void api_scheduled(void *ctx, const ks_pod *pod, ks_sym node, const char *profile)
{
    char note[1024];
    snprintf(note, sizeof(note), "Successfully assigned %s to %s", pod->key, ks__sym_str(node));
    post_event(ctx, pod, "Normal", "Scheduled", "Binding", note, profile);
}

/* The pod's current PodScheduled condition (in its JSON), or NULL. */
static const cJSON *pod_scheduled_condition(const cJSON *pod)
{
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pod, "status"), "conditions");
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        if (cJSON_IsString(t) && !strcmp(t->valuestring, "PodScheduled"))
            return c;
    }
    return NULL;
}

static int str_field_is(const cJSON *o, const char *k, const char *v)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(f) ? !strcmp(f->valuestring, v ? v : "") : (!v || !v[0]);
}

static void do_failed(ks_apisrc *s, const ks_pod *pod, const char *reason, const char *message,
                      ks_sym nominated, const char *profile)
{
    post_event(s, pod, "Warning", "FailedScheduling", "Scheduling", message, profile);

    /* A later attempt has placed the pod meanwhile (a preemptor whose victim left in memory is
     * retried at once): upstream patched this status before that attempt, and the binding then
     * made it PodScheduled=True without a nominatedNodeName; patching it now would undo that
     * (and the API server refuses a nominatedNodeName on a bound pod). */
    if (ks__cache_has_pod(ks__scheduler_cache(s->sched), pod->uid)) {
        if (ks__log_enabled(4))
            ks__log('I', "apisource", "status patch of pod %s skipped: placed since", pod->key);
        return;
    }

    /* Upstream updatePod: PodScheduled=False with reason and message (lastTransitionTime kept
     * when the status does not change), nominatedNodeName; nothing to send when unchanged. */
    cJSON *cur = pod->json ? cJSON_Parse(pod->json) : NULL;
    const cJSON *old = pod_scheduled_condition(cur);
    const char *nom = nominated != KS_SYM_ABSENT ? ks__sym_str(nominated) : NULL;
    const char *cur_nom = "";
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cur, "status"), "nominatedNodeName");
    if (cJSON_IsString(cn))
        cur_nom = cn->valuestring;
    int same_status = old && str_field_is(old, "status", "False");
    if (same_status && str_field_is(old, "reason", reason) &&
        str_field_is(old, "message", message) && (!nom || !strcmp(nom, cur_nom))) {
        cJSON_Delete(cur);
        return;
    }
    char now[64];
    fmt_time(now, sizeof(now), 0);
    const cJSON *ltt =
        same_status ? cJSON_GetObjectItemCaseSensitive(old, "lastTransitionTime") : NULL;
    cJSON *p = cJSON_CreateObject(), *stj = cJSON_AddObjectToObject(p, "status");
    cJSON *conds = cJSON_AddArrayToObject(stj, "conditions"), *c = cJSON_CreateObject();
    cJSON_AddItemToArray(conds, c);
    cJSON_AddStringToObject(c, "type", "PodScheduled");
    /* CalculatePodConditionObservedGeneration: the pod's generation (PodObservedGenerationTracking,
     * on in 1.34). */
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cur, "metadata"), "generation");
    if (cJSON_IsNumber(gen) && gen->valuedouble > 0)
        cJSON_AddNumberToObject(c, "observedGeneration", gen->valuedouble);
    cJSON_AddStringToObject(c, "status", "False");
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message ? message : "");
    cJSON_AddNullToObject(c, "lastProbeTime");
    cJSON_AddStringToObject(c, "lastTransitionTime", cJSON_IsString(ltt) ? ltt->valuestring : now);
    if (nom)
        cJSON_AddStringToObject(stj, "nominatedNodeName", nom);
    char *body = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    cJSON_Delete(cur);
    if (!body)
        return;
    char path[600], what[600];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ks__sym_str(pod->ns),
             ks__sym_str(pod->name));
    snprintf(what, sizeof(what), "status patch of pod %s (PodScheduled=False, %s)", pod->key,
             reason);
    ks_api *api = ks__apisrc_thread_api(s);
    ks_api_response resp = {0};
    int rc = api ? ks__api_request(api, "PATCH", path, body,
                                   "application/strategic-merge-patch+json", &resp)
                 : KS_ENOMEM;
    /* The check above races the next attempt: placed and bound between the check and this
     * PATCH, the pod is refused a nominatedNodeName (422). Upstream's API dispatcher drops a
     * queued status patch once the pod's binding is queued; here it was late, nothing lost. */
    if (rc == KS_EINVAL && ks__cache_has_pod(ks__scheduler_cache(s->sched), pod->uid)) {
        if (ks__log_enabled(4))
            ks__log('I', "apisource", "%s refused: the pod was placed since", what);
    } else if (rc != 0 && rc != KS_API_STOPPED) {
        ks__log('E', "apisource", "%s failed: PATCH %s: %s", what, path,
                api ? ks__api_error(api) : "out of memory");
    }
    ks__api_response_free(&resp);
    free(body);
}

/* The pod's condition of type type (in its JSON), or NULL. */
static const cJSON *pod_condition(const cJSON *pod, const char *type)
{
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pod, "status"), "conditions");
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        if (str_field_is(c, "type", type))
            return c;
    }
    return NULL;
}

/* Upstream PreemptPod's condition: DisruptionTarget=True, reason PreemptionByScheduler, message
 * "<preemptor's schedulerName>: preempting to accommodate a higher priority pod",
 * observedGeneration the victim's metadata.generation (PodObservedGenerationTracking, on in 1.34).
 * Patched only when it changes (apipod.UpdatePodCondition; lastTransitionTime kept while the status
 * stays True). 0 when patched or nothing to patch. */
static int patch_disruption_target(ks_apisrc *s, const ks_pod *victim, const ks_pod *preemptor,
                                   const char *group_uid)
{
    char msg[600], now[64];
    snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority %s",
             ks__sym_str(preemptor->scheduler_name), group_uid ? "podgroup" : "pod");
    cJSON *cur = victim->json ? cJSON_Parse(victim->json) : NULL;
    const cJSON *old = pod_condition(cur, "DisruptionTarget");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cur, "metadata"), "generation");
    double generation = cJSON_IsNumber(gen) ? gen->valuedouble : 0;
    int same_status = old && str_field_is(old, "status", "True");
    if (same_status && str_field_is(old, "reason", "PreemptionByScheduler") &&
        str_field_is(old, "message", msg)) {
        cJSON_Delete(cur);
        return 0;
    }
    fmt_time(now, sizeof(now), 0);
    const cJSON *ltt =
        same_status ? cJSON_GetObjectItemCaseSensitive(old, "lastTransitionTime") : NULL;
    cJSON *p = cJSON_CreateObject(), *stj = cJSON_AddObjectToObject(p, "status");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(stj, "conditions"), c);
    cJSON_AddStringToObject(c, "type", "DisruptionTarget");
    cJSON_AddStringToObject(c, "status", "True");
    if (generation > 0)
        cJSON_AddNumberToObject(c, "observedGeneration", generation);
    cJSON_AddNullToObject(c, "lastProbeTime");
    cJSON_AddStringToObject(c, "lastTransitionTime", cJSON_IsString(ltt) ? ltt->valuestring : now);
    cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler");
    cJSON_AddStringToObject(c, "message", msg);
    char *body = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    cJSON_Delete(cur);
    if (!body)
        return KS_ENOMEM;
    char path[600], what[600];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ks__sym_str(victim->ns),
             ks__sym_str(victim->name));
    snprintf(what, sizeof(what),
             "status patch of preemption victim %s (DisruptionTarget=True, PreemptionByScheduler)",
             victim->key);
    int rc = request(s, "PATCH", path, body, "application/strategic-merge-patch+json", what);
    free(body);
    return rc;
}

/* The Preempted event on the victim (upstream's reason, action and note; " (in kube-scheduler
 * memory)." when the victim was waiting on Permit and rejected rather than deleted). No `related`
 * object: v1.37.2's executor hands the recorder a wrapper of the preemptor that no reference can
 * be made of, so the real binary records none (tests/e2e/test-preemption.sh). */
static void post_preempted(ks_apisrc *s, const ks_pod *victim, const ks_pod *preemptor, ks_sym node,
                           int in_memory, const char *group_uid)
{
    char note[1024];
    /* a pod group preemptor (workload-aware preemption): its uid, and the candidate's name,
     * "cluster", for the node */
    snprintf(note, sizeof(note), "Preempted by %s %s on node %s%s", group_uid ? "podgroup" : "pod",
             group_uid        ? group_uid
             : preemptor->uid ? preemptor->uid
                              : "",
             group_uid ? "cluster" : ks__sym_str(node),
             in_memory ? " (in kube-scheduler memory)." : "");
    post_event(s, victim, "Normal", "Preempted", "Preempting", note,
               ks__sym_str(preemptor->scheduler_name));
}

/* Upstream PreemptPod: the DisruptionTarget condition, then DELETE (default grace period: a
 * bound pod turns Terminating until its kubelet confirms), then the Preempted event. A failed
 * patch stops there (upstream returns the error; the preemptor retries); a victim already gone
 * (404) gets no event. */
static void do_evict(ks_apisrc *s, const ks_pod *victim, const ks_pod *preemptor, ks_sym node,
                     const char *group_uid)
{
    char path[600], what[600];
    int rc = patch_disruption_target(s, victim, preemptor, group_uid);
    if (rc == KS_ENOTFOUND) {
        ks__log('I', "apisource", "Victim Pod is already deleted: %s (preemptor %s, node %s)",
                victim->key, preemptor->key, ks__sym_str(node));
        return;
    }
    if (rc != 0) {
        ks__log('E', "apisource",
                "Could not add DisruptionTarget condition due to preemption: pod %s, preemptor %s",
                victim->key, preemptor->key);
        return;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ks__sym_str(victim->ns),
             ks__sym_str(victim->name));
    snprintf(what, sizeof(what), "deleting preemption victim %s (for %s)", victim->key,
             preemptor->key);
    ks_api *api = ks__apisrc_thread_api(s);
    ks_api_response resp = {0};
    rc = api ? ks__api_request(api, "DELETE", path, NULL, NULL, &resp) : KS_ENOMEM;
    ks__api_response_free(&resp);
    if (rc == KS_ENOTFOUND) {
        ks__log('I', "apisource", "Victim Pod is already deleted: %s (preemptor %s, node %s)",
                victim->key, preemptor->key, ks__sym_str(node));
        return;
    }
    if (rc != 0) {
        if (rc != KS_API_STOPPED)
            ks__log('E', "apisource", "%s failed: DELETE %s: %s", what, path,
                    api ? ks__api_error(api) : "no API client");
        return;
    }
    ks__log('I', "apisource",
            "Preemptor Pod preempted victim Pod: preemptor %s, victim %s, node %s", preemptor->key,
            victim->key, ks__sym_str(node));
    post_preempted(s, victim, preemptor, node, 0, group_uid);
}

/* upstream clearNominatedNodeName: the two-way merge patch of a status that loses
 * nominatedNodeName. */
static void do_clear_nomination(ks_apisrc *s, const ks_pod *pod)
{
    char path[600], what[600];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ks__sym_str(pod->ns),
             ks__sym_str(pod->name));
    snprintf(what, sizeof(what),
             "status patch of pod %s (nominatedNodeName cleared for a preemptor)", pod->key);
    int rc = request(s, "PATCH", path, "{\"status\":{\"nominatedNodeName\":null}}",
                     "application/strategic-merge-patch+json", what);
    if (rc == 0 && ks__log_enabled(2))
        ks__log('I', "apisource", "cleared the nominated node of %s", pod->key);
}

/* ---- the effects thread ---------------------------------------------------------------------- */

static void api_failure_message(ks_api *api, const ks_api_response *resp, char *out, size_t len);

typedef enum {
    EFFECT_FAILED,    /* status patch + FailedScheduling event */
    EFFECT_EVICT,     /* DisruptionTarget, DELETE, Preempted event */
    EFFECT_PREEMPTED, /* a victim that was waiting on Permit: rejected, the Preempted event only */
    EFFECT_CLEAR_NOMINATION, /* status.nominatedNodeName removed */
    EFFECT_PATCH_OBJECT,     /* a plugin's merge patch to an object of a watched resource */
    EFFECT_PLUGIN_EVENT      /* a plugin's Event about a pod */
} effect_kind;

struct ks_effect {
    struct ks_effect *next;
    effect_kind kind;
    ks_pod *pod;   /* the failed pod, or the victim (one reference) */
    ks_pod *other; /* the preemptor (one reference) */
    ks_sym node;
    ks__symrefs node_ref; /* holds node: the Node may be gone before the effect runs */
    char *reason, *message, *profile;
    /* EFFECT_PATCH_OBJECT: the request's path and the patch (in message) */
    char *path;
    /* EFFECT_PLUGIN_EVENT: the event's type (in reason: its reason, in message: its note);
     * EFFECT_EVICT and EFFECT_PREEMPTED: the uid of a pod group preemptor, NULL for a pod */
    char *type;
};

static void effect_free(struct ks_effect *e)
{
    ks__pod_unref(e->pod);
    ks__pod_unref(e->other);
    ks__symrefs_release(&e->node_ref);
    free(e->reason);
    free(e->message);
    free(e->profile);
    free(e->path);
    free(e->type);
    free(e);
}

/* A plugin's PATCH (ks_object_patch), on the effects thread; a failure is logged. */
static void do_patch_object(ks_apisrc *s, const char *path, const char *patch)
{
    ks_api *api = ks__apisrc_thread_api(s);
    if (!api)
        return;
    ks_api_response resp = {0};
    if (ks__api_request(api, "PATCH", path, patch, "application/merge-patch+json", &resp) != 0) {
        char msg[1200];
        api_failure_message(api, &resp, msg, sizeof(msg));
        ks__log('E', "apisource", "PATCH %s: %s", path, msg);
    } else if (ks__log_enabled(4)) {
        ks__log('I', "apisource", "a plugin patched %s", path);
    }
    ks__api_response_free(&resp);
}

static void enqueue(ks_apisrc *s, struct ks_effect *e)
{
    pthread_mutex_lock(&s->emu);
    if (s->etail)
        s->etail->next = e;
    else
        s->ehead = e;
    s->etail = e;
    pthread_cond_signal(&s->ecv);
    pthread_mutex_unlock(&s->emu);
}

static void *effects_main(void *arg)
{
    ks_apisrc *s = arg;
    pthread_mutex_lock(&s->emu);
    for (;;) {
        while (!s->ehead && !s->equit)
            pthread_cond_wait(&s->ecv, &s->emu);
        struct ks_effect *e = s->ehead;
        if (!e)
            break; /* quit, and drained */
        s->ehead = e->next;
        if (!s->ehead)
            s->etail = NULL;
        pthread_mutex_unlock(&s->emu);
        if (e->kind == EFFECT_FAILED)
            do_failed(s, e->pod, e->reason, e->message, e->node, e->profile);
        else if (e->kind == EFFECT_EVICT)
            do_evict(s, e->pod, e->other, e->node, e->type);
        else if (e->kind == EFFECT_CLEAR_NOMINATION)
            do_clear_nomination(s, e->pod);
        else if (e->kind == EFFECT_PATCH_OBJECT)
            do_patch_object(s, e->path, e->message);
        else if (e->kind == EFFECT_PLUGIN_EVENT)
            post_event(s, e->pod, e->type, e->reason, "Scheduling", e->message, e->profile);
        else
            post_preempted(s, e->pod, e->other, e->node, 1, e->type);
        effect_free(e);
        pthread_mutex_lock(&s->emu);
    }
    pthread_mutex_unlock(&s->emu);
    return NULL;
}

int ks__apisrc_effects_start(ks_apisrc *s)
{
    pthread_mutex_init(&s->emu, NULL);
    pthread_cond_init(&s->ecv, NULL);
    if (pthread_create(&s->ethread, NULL, effects_main, s) != 0)
        return KS_ENOMEM;
    s->estarted = 1;
    return 0;
}

void ks__apisrc_effects_stop(ks_apisrc *s)
{
    if (!s->estarted)
        return;
    pthread_mutex_lock(&s->emu);
    s->equit = 1;
    pthread_cond_signal(&s->ecv);
    pthread_mutex_unlock(&s->emu);
    pthread_join(s->ethread, NULL); /* drains what is queued first */
    s->estarted = 0;
    pthread_mutex_destroy(&s->emu);
    pthread_cond_destroy(&s->ecv);
}

static char *dup_or_empty(const char *v) { return strdup(v ? v : ""); }

/* Scheduling thread (or a binding thread after a binding failure): queued. */
static void api_failed(void *ctx, const ks_pod *pod, const char *reason, const char *message,
                       ks_sym nominated, const char *profile)
{
    ks_apisrc *s = ctx;
    struct ks_effect *e = calloc(1, sizeof(*e));
    if (!e || !(e->reason = dup_or_empty(reason)) || !(e->message = dup_or_empty(message)) ||
        !(e->profile = dup_or_empty(profile))) {
        ks__log('E', "apisource", "out of memory reporting the failure of pod %s", pod->key);
        if (e)
            effect_free(e);
        return;
    }
    e->kind = EFFECT_FAILED;
    e->pod = ks__pod_ref((ks_pod *)pod);
    e->node = nominated;
    ks__symrefs_hold(&e->node_ref, nominated);
    if (!s->estarted) { /* no effects thread (start failed): do it here */
        do_failed(s, e->pod, e->reason, e->message, e->node, e->profile);
        effect_free(e);
        return;
    }
    enqueue(s, e);
}

/* Scheduling thread: queued. The victim stays in the scheduler's cache until the watch reports
 * it deleted (victims_leave_on_delete_event). */
static void queue_victim(ks_apisrc *s, effect_kind kind, const ks_pod *victim,
                         const ks_pod *preemptor, ks_sym node, const char *group_uid)
{
    struct ks_effect *e = calloc(1, sizeof(*e));
    if (e && group_uid && !(e->type = strdup(group_uid))) {
        free(e);
        e = NULL;
    }
    if (!e) {
        ks__log('E', "apisource", "out of memory evicting pod %s", victim->key);
        return;
    }
    e->kind = kind;
    e->pod = ks__pod_ref((ks_pod *)victim);
    e->other = ks__pod_ref((ks_pod *)preemptor);
    e->node = node;
    ks__symrefs_hold(&e->node_ref, node);
    if (!s->estarted) {
        if (kind == EFFECT_EVICT)
            do_evict(s, e->pod, e->other, e->node, e->type);
        else
            post_preempted(s, e->pod, e->other, e->node, 1, e->type);
        effect_free(e);
        return;
    }
    enqueue(s, e);
}

static void api_evict(void *ctx, const ks_pod *victim, const ks_pod *preemptor, ks_sym node)
{
    queue_victim(ctx, EFFECT_EVICT, victim, preemptor, node, NULL);
}

static void api_preempted_waiting(void *ctx, const ks_pod *victim, const ks_pod *preemptor,
                                  ks_sym node)
{
    queue_victim(ctx, EFFECT_PREEMPTED, victim, preemptor, node, NULL);
}

/* Workload-aware preemption's victim: evicted (or, rejected in memory, only reported) for the
 * pod group pg_uid. */
static void api_preempted_group(void *ctx, const ks_pod *victim, const ks_pod *member,
                                const char *pg_uid, int in_memory)
{
    queue_victim(ctx, in_memory ? EFFECT_PREEMPTED : EFFECT_EVICT, victim, member,
                 victim->node_name, pg_uid ? pg_uid : "");
}

static void api_clear_nominated(void *ctx, const ks_pod *pod)
{
    ks_apisrc *s = ctx;
    struct ks_effect *e = calloc(1, sizeof(*e));
    if (!e) {
        ks__log('E', "apisource", "out of memory clearing the nominated node of pod %s", pod->key);
        return;
    }
    e->kind = EFFECT_CLEAR_NOMINATION;
    e->pod = ks__pod_ref((ks_pod *)pod);
    if (!s->estarted) {
        do_clear_nomination(s, e->pod);
        effect_free(e);
        return;
    }
    enqueue(s, e);
}

/* upstream's updatePod from the binding cycle (NominatedNodeNameForExpectation): a strategic
 * merge patch of the status, on this binding thread so that it lands before the binding. */
static void api_nominate(void *ctx, const ks_pod *pod, ks_sym node)
{
    ks_apisrc *s = ctx;
    char path[600], what[700], body[400];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ks__sym_str(pod->ns),
             ks__sym_str(pod->name));
    snprintf(what, sizeof(what),
             "status patch of pod %s (nominatedNodeName %s before its binding cycle waits)",
             pod->key, ks__sym_str(node));
    snprintf(body, sizeof(body), "{\"status\":{\"nominatedNodeName\":\"%s\"}}",
             ks__sym_str(node)); /* node names are DNS subdomains: nothing to escape */
    if (request(s, "PATCH", path, body, "application/strategic-merge-patch+json", what) == 0 &&
        ks__log_enabled(3))
        ks__log('I', "apisource",
                "nominated node %s for %s (the binding cycle waits or has PreBind work)",
                ks__sym_str(node), pod->key);
}

/* The API server's Status message of a failed request (what client-go's StatusError prints, and
 * so what upstream's PreBind reports: "Operation cannot be fulfilled on persistentvolumes ..."),
 * else kubesched's description of the failure. */
static void api_failure_message(ks_api *api, const ks_api_response *resp, char *out, size_t len)
{
    cJSON *j = resp->body ? cJSON_Parse(resp->body) : NULL;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0 && cJSON_IsString(m) &&
        *m->valuestring)
        snprintf(out, len, "%s", m->valuestring);
    else
        snprintf(out, len, "%s", ks__api_error(api));
    cJSON_Delete(j);
}

/* upstream VolumeBinding's PersistentVolume / claim Update from PreBind, as a JSON merge patch
 * that carries the resourceVersion it read (the same optimistic concurrency: a Conflict when
 * the object changed meanwhile). On this binding thread; the new resourceVersion to rv. */
static ks_code api_patch_storage(void *ctx, const ks_pod *pod, ks_vol_kind kind, ks_sym ns,
                                 ks_sym name, const char *patch, char *rv, ks_status *st)
{
    ks_apisrc *s = ctx;
    (void)pod;
    char path[600], msg[1200];
    if (kind == KS_VK_PV)
        snprintf(path, sizeof(path), "/api/v1/persistentvolumes/%s", ks__sym_str(name));
    else
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/persistentvolumeclaims/%s",
                 ks__sym_str(ns), ks__sym_str(name));
    ks_api *api = ks__apisrc_thread_api(s);
    if (!api) {
        ks__status_add(st, "storage patch: out of memory");
        return KS_ERROR;
    }
    ks_api_response resp = {0};
    int rc = ks__api_request(api, "PATCH", path, patch, "application/merge-patch+json", &resp);
    if (rc != 0) {
        api_failure_message(api, &resp, msg, sizeof(msg));
        ks__log('E', "apisource", "PATCH %s: %s", path, ks__api_error(api));
        ks__status_add(st, msg);
        ks__api_response_free(&resp);
        return KS_ERROR;
    }
    cJSON *obj = cJSON_Parse(resp.body ? resp.body : "");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
    snprintf(rv, KS_RESOURCE_VERSION_MAX, "%s", cJSON_IsString(v) ? v->valuestring : "");
    cJSON_Delete(obj);
    ks__api_response_free(&resp);
    if (ks__log_enabled(2))
        ks__log('I', "apisource", "patched %s (resourceVersion %s)", path, rv);
    return KS_SUCCESS;
}

/* ks_source_ops.claim_request: DynamicResources' ResourceClaim requests (upstream's clientset
 * calls), synchronous on the calling thread, or queued for the effects thread (out NULL). */
static ks_code api_claim_request(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                                 const char *content_type, const char *body, char **out,
                                 int *http_status, ks_status *st)
{
    ks_apisrc *s = ctx;
    char path[700], msg[1200];
    if (name == KS_SYM_ABSENT) /* the namespace's collection: a POST */
        snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims",
                 ks__sym_str(ns));
    else
        snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s%s",
                 ks__sym_str(ns), ks__sym_str(name), status ? "/status" : "");
    if (!out) { /* only PATCH is queued: the effects thread's plugin patches */
        struct ks_effect *e = calloc(1, sizeof(*e));
        if (!e || !(e->path = strdup(path)) || !(e->message = strdup(body ? body : "{}"))) {
            if (e)
                effect_free(e);
            ks__status_add(st, "out of memory");
            return KS_ERROR;
        }
        e->kind = EFFECT_PATCH_OBJECT;
        enqueue(s, e);
        return KS_SUCCESS;
    }
    *out = NULL;
    ks_api *api = ks__apisrc_thread_api(s);
    if (!api) {
        ks__status_add(st, "out of memory");
        return KS_ERROR;
    }
    ks_api_response resp = {0};
    int rc = ks__api_request(api, method, path, body, content_type, &resp);
    if (http_status)
        *http_status = (int)resp.status;
    if (rc != 0) {
        api_failure_message(api, &resp, msg, sizeof(msg));
        if (ks__log_enabled(2))
            ks__log('I', "apisource", "%s %s: %s", method, path, msg);
        ks__status_add(st, msg);
        ks__api_response_free(&resp);
        return KS_ERROR;
    }
    *out = resp.body; /* handed over */
    resp.body = NULL;
    ks__api_response_free(&resp);
    if (ks__log_enabled(3) && strcmp(method, "GET") != 0)
        ks__log('I', "apisource", "%s %s", method, path);
    return KS_SUCCESS;
}

/* ks_source_ops.patch_pod_status: DynamicResources' status.extendedResourceClaimStatus
 * (upstream schedutil.PatchPodStatus, a strategic merge patch), synchronous on the binding
 * thread. */
static ks_code api_patch_pod_status(void *ctx, const ks_pod *pod, const char *patch, ks_status *st)
{
    ks_apisrc *s = ctx;
    char path[600], msg[1200];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ks__sym_str(pod->ns),
             ks__sym_str(pod->name));
    ks_api *api = ks__apisrc_thread_api(s);
    if (!api) {
        ks__status_add(st, "out of memory");
        return KS_ERROR;
    }
    ks_api_response resp = {0};
    int rc =
        ks__api_request(api, "PATCH", path, patch, "application/strategic-merge-patch+json", &resp);
    if (rc != 0) {
        api_failure_message(api, &resp, msg, sizeof(msg));
        ks__log('E', "apisource", "PATCH %s: %s", path, ks__api_error(api));
        ks__status_add(st, msg);
        ks__api_response_free(&resp);
        return KS_ERROR;
    }
    ks__api_response_free(&resp);
    if (ks__log_enabled(3))
        ks__log('I', "apisource", "PATCH %s", path);
    return KS_SUCCESS;
}

/* ks_object_patch: the PATCH is queued for the effects thread. */
static int api_write_object(void *ctx, const struct ks_resource *res, ks_sym ns, ks_sym name,
                            int status, const char *patch)
{
    ks_apisrc *s = ctx;
    struct ks_effect *e = calloc(1, sizeof(*e));
    char path[1024];
    /* res->path is /apis/<group>/<version>/<plural>: the namespace goes before the plural */
    const char *plural = strrchr(res->path, '/');
    if (ns != KS_SYM_EMPTY && ns != KS_SYM_ABSENT)
        snprintf(path, sizeof(path), "%.*s/namespaces/%s%s/%s%s", (int)(plural - res->path),
                 res->path, ks__sym_str(ns), plural, ks__sym_str(name), status ? "/status" : "");
    else
        snprintf(path, sizeof(path), "%s/%s%s", res->path, ks__sym_str(name),
                 status ? "/status" : "");
    if (!e || !(e->path = strdup(path)) || !(e->message = strdup(patch))) {
        if (e)
            effect_free(e);
        return KS_ENOMEM;
    }
    e->kind = EFFECT_PATCH_OBJECT;
    enqueue(s, e);
    return 0;
}

/* ks_pod_event: the Event is queued for the effects thread. */
static int api_plugin_event(void *ctx, const ks_pod *pod, const char *type, const char *reason,
                            const char *note, const char *profile)
{
    ks_apisrc *s = ctx;
    struct ks_effect *e = calloc(1, sizeof(*e));
    if (!e)
        return KS_ENOMEM;
    e->kind = EFFECT_PLUGIN_EVENT;
    e->pod = ks__pod_ref((ks_pod *)pod);
    e->type = strdup(type);
    e->reason = strdup(reason);
    e->message = strdup(note);
    e->profile = strdup(profile);
    if (!e->type || !e->reason || !e->message || !e->profile) {
        effect_free(e);
        return KS_ENOMEM;
    }
    enqueue(s, e);
    return 0;
}

ks_source_ops ks__apisrc_ops(ks_apisrc *s)
{
    ks_source_ops ops = {s,
                         api_bind,
                         api_scheduled,
                         api_failed,
                         api_evict,
                         api_preempted_waiting,
                         api_clear_nominated,
                         api_nominate,
                         api_patch_storage,
                         0,
                         api_write_object,
                         api_plugin_event,
                         api_preempted_group,
                         api_claim_request,
                         api_patch_pod_status};
    return ops;
}
