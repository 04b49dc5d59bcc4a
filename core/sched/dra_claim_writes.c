/*
 * DynamicResources' ResourceClaim writes in live mode, through the cluster source's
 * claim_request (upstream v1.37.2 dynamicresources.go: bindClaim for PreBind, the strategic
 * merge patch of Unreserve, the UpdateStatus of PostFilter's deallocation), and the assume
 * cache's part: the object a write returns is filed at once (ks__store_assume_dra), so the
 * next pod's allocator sees the devices taken before the watch brings the change.
 *
 * kubesched's own: PostFilter's deallocation is queued for the source's effects thread instead
 * of waiting on the scheduling thread; it carries the resourceVersion the cycle read, so it
 * fails as upstream's UpdateStatus does when the claim changed meanwhile (logged), and the
 * claim's update from the watch moves the pod back to the active queue as upstream's does.
 *
 * Threads: bind and unreserve on a binding thread (a rare unreserve after a failed Reserve or
 * Permit on the scheduling thread); deallocate on the scheduling thread, without waiting.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched/dra_manager.h"
#include "sched/framework.h"
#include "util/log.h"

#define FINALIZER "resource.kubernetes.io/delete-protection" /* resourceapi.Finalizer */
#define RETRY_STEPS 5                                        /* retry.DefaultRetry.Steps */
#define RETRY_SLEEP_NS 10000000L                             /* its Duration, 10 ms */
#define HTTP_CONFLICT 409

/* The claim as klog.KObj prints it. */
static void kobj(const ks_resource_claim *claim, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", ks__sym_str(claim->h.ns), ks__sym_str(claim->h.name));
}

static cJSON *status_of(cJSON *obj)
{
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    if (!cJSON_IsObject(status)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        status = cJSON_AddObjectToObject(obj, "status");
    }
    return status;
}

static int has_value(const cJSON *o, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    return v && !cJSON_IsNull(v);
}

/* slices.Contains(claim.Finalizers, resourceapi.Finalizer), else appended: 1 when appended. */
static int add_finalizer(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *fin = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
    const cJSON *f;
    cJSON_ArrayForEach(f, fin) if (cJSON_IsString(f) &&
                                   strcmp(f->valuestring, FINALIZER) == 0) return 0;
    if (!cJSON_IsArray(fin)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
        fin = cJSON_AddArrayToObject(meta, "finalizers");
    }
    cJSON_AddItemToArray(fin, cJSON_CreateString(FINALIZER));
    return 1;
}

/* claim.Status.ReservedFor = append(..., {Resource: "pods", Name, UID}) */
static void add_reservation(cJSON *status, const ks_pod *pod)
{
    cJSON *rf = cJSON_GetObjectItemCaseSensitive(status, "reservedFor");
    if (!cJSON_IsArray(rf)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "reservedFor");
        rf = cJSON_AddArrayToObject(status, "reservedFor");
    }
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "resource", "pods");
    cJSON_AddStringToObject(ref, "name", ks__sym_str(pod->name));
    cJSON_AddStringToObject(ref, "uid", pod->uid);
    cJSON_AddItemToArray(rf, ref);
}

/* With binding conditions (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus, both
 * on at v1.37) upstream stamps the allocation when it first writes it: metav1.Time, RFC 3339
 * in seconds, UTC. */
static void stamp_allocation(cJSON *alloc)
{
    if (has_value(alloc, "allocationTimestamp"))
        return;
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_DeleteItemFromObjectCaseSensitive(alloc, "allocationTimestamp");
    cJSON_AddStringToObject(alloc, "allocationTimestamp", ts);
}

/* One request of the source; the answer parsed into *answer when asked for. */
static ks_code claim_io(const ks_dra_claim_io *io, const ks_resource_claim *claim,
                        const char *method, int status, const char *ctype, const cJSON *body,
                        cJSON **answer, int *http, ks_status *st)
{
    char *text = body ? cJSON_PrintUnformatted(body) : NULL, *out = NULL;
    if (body && !text) {
        ks__status_add(st, "out of memory");
        return KS_ERROR;
    }
    *http = 0;
    ks_code code = io->request(io->ctx, method, claim->h.ns, claim->h.name, status, ctype, text,
                               &out, http, st);
    free(text);
    if (code == KS_SUCCESS && !(*answer = cJSON_Parse(out ? out : ""))) {
        ks__status_add(st, "the API server's answer is not a JSON object");
        code = KS_ERROR;
    }
    free(out);
    return code;
}

/* A failed request's status as upstream's wrapped error: fmt (with %s for the claim), ": ",
 * then the API server's message. */
static ks_code wrapped(ks_status *stt, const char *fmt, const char *claim, const ks_status *api)
{
    char apimsg[1024], what[700], msg[1800];
    ks__status_message(api, apimsg, sizeof(apimsg));
    snprintf(what, sizeof(what), fmt, claim);
    snprintf(msg, sizeof(msg), "%s: %s", what, apimsg);
    ks__status_add(stt, msg);
    return KS_ERROR;
}

static ks_code failed(ks_status *stt, const char *fmt, const char *claim)
{
    char msg[700];
    snprintf(msg, sizeof(msg), fmt, claim);
    ks__status_add(stt, msg);
    return KS_ERROR;
}

/* The server's object filed as the assume cache does; its change to chg. */
static void assume(ks_store *st, const cJSON *obj, const char *claim, ks_dra_change *chg)
{
    char err[512];
    if (ks__store_assume_dra(st, obj, chg, err, sizeof(err)) != 0 && ks__log_enabled(5))
        ks__log('I', "DynamicResources", "claim %s not stored in assume cache: %s", claim, err);
}

/* One try of bindClaim's retried function: 1 when a conflict asks for another try (refreshed
 * from the server first), else the try's code. */
typedef struct bind_try {
    const ks_dra_claim_io *io;
    const ks_resource_claim *claim;
    const ks_pod *pod;
    const cJSON *allocation; /* from Reserve, NULL for a claim allocated already */
    char name[600];
} bind_try;

static int bind_once(bind_try *t, cJSON **obj, ks_code *code, ks_status *stt)
{
    ks_status api;
    int http;
    ks__status_reset(&api);
    if (has_value(cJSON_GetObjectItemCaseSensitive(*obj, "metadata"), "deletionTimestamp")) {
        *code = failed(stt, "claim %s got deleted in the meantime", t->name);
        return 0;
    }
    cJSON *status = status_of(*obj);
    if (t->allocation) {
        if (has_value(status, "allocation")) {
            *code = failed(stt, "claim %s got allocated elsewhere in the meantime", t->name);
            return 0;
        }
        /* The finalizer needs a normal update, before the status one. */
        if (add_finalizer(*obj)) {
            cJSON *updated = NULL;
            if (claim_io(t->io, t->claim, "PUT", 0, "application/json", *obj, &updated, &http,
                         &api) != KS_SUCCESS) {
                *code = wrapped(stt, "add finalizer to claim %s", t->name, &api);
                return http == HTTP_CONFLICT;
            }
            cJSON_Delete(*obj);
            *obj = updated;
            status = status_of(*obj);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(status, "allocation");
        cJSON_AddItemToObject(status, "allocation", cJSON_Duplicate(t->allocation, 1));
    }
    add_reservation(status, t->pod);
    cJSON *alloc = cJSON_GetObjectItemCaseSensitive(status, "allocation");
    if (!cJSON_IsObject(alloc)) {
        *code = failed(stt, "claim %s got deallocated elsewhere in the meantime", t->name);
        return 0;
    }
    stamp_allocation(alloc);
    cJSON *updated = NULL;
    const char *what = t->allocation ? "add allocation and reservation to claim %s"
                                     : "add reservation to claim %s";
    if (claim_io(t->io, t->claim, "PUT", 1, "application/json", *obj, &updated, &http, &api) !=
        KS_SUCCESS) {
        *code = wrapped(stt, what, t->name, &api);
        return http == HTTP_CONFLICT;
    }
    cJSON_Delete(*obj);
    *obj = updated;
    *code = KS_SUCCESS;
    return 0;
}

/* GET the claim after a conflict (every try after the first starts from the server's copy). */
static int refresh(bind_try *t, cJSON **obj, ks_status *stt)
{
    ks_status api;
    int http;
    cJSON *fresh = NULL;
    ks__status_reset(&api);
    if (claim_io(t->io, t->claim, "GET", 0, NULL, NULL, &fresh, &http, &api) != KS_SUCCESS) {
        wrapped(stt, "get updated claim %s after conflict", t->name, &api);
        return -1;
    }
    cJSON_Delete(*obj);
    *obj = fresh;
    if (ks__log_enabled(5))
        ks__log('I', "DynamicResources", "retrying update after conflict: claim %s", t->name);
    return 0;
}

ks_code ks__dra_claim_bind_live(const ks_dra_claim_io *io, ks_store *st, const ks_pod *pod,
                                const ks_resource_claim *claim, const struct ks_dra_allocation *a,
                                size_t i, ks_dra_change *chg, ks_status *stt)
{
    bind_try t = {io, claim, pod, NULL, ""};
    kobj(claim, t.name, sizeof(t.name));
    cJSON *allocation = a && i < a->nclaims ? ks__dra_allocation_json(&a->out.results[i]) : NULL;
    cJSON *obj = cJSON_Parse(claim->h.json);
    if (!obj || (a && i < a->nclaims && !allocation)) {
        cJSON_Delete(obj);
        cJSON_Delete(allocation);
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    t.allocation = allocation;
    ks_code code = KS_ERROR;
    for (int step = 0; step < RETRY_STEPS; step++) {
        if (step > 0) {
            /* The conflict's message is kept only if the retries run out. */
            ks__status_reset(stt);
            nanosleep(&(struct timespec){0, RETRY_SLEEP_NS}, NULL);
            if (refresh(&t, &obj, stt) != 0)
                break;
        }
        if (!bind_once(&t, &obj, &code, stt))
            break;
    }
    if (code == KS_SUCCESS) {
        assume(st, obj, t.name, chg);
        if (ks__log_enabled(5))
            ks__log('I', "DynamicResources", "reserved: pod %s, resourceclaim %s", pod->key,
                    t.name);
    }
    cJSON_Delete(obj);
    cJSON_Delete(allocation);
    return code;
}

ks_code ks__dra_claim_unreserve_live(const ks_dra_claim_io *io, ks_store *st, const ks_pod *pod,
                                     const ks_resource_claim *claim, ks_dra_change *chg,
                                     ks_status *stt)
{
    const ks_resource_claim *cur =
        ks__dra_claim(ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, claim->h.key));
    const ks_resource_claim *c = cur ? cur : claim;
    if (!c->allocated || !ks__dra_claim_reserved_for(c, pod->uid)) {
        ks__draobj_unref(cur ? (ks__draobj *)&cur->h : NULL);
        return KS_SKIP;
    }
    /* A strategic merge patch removes the one entry without the latest list. */
    cJSON *patch = cJSON_CreateObject(), *ref = cJSON_CreateObject(), *obj = NULL;
    cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "uid", c->h.uid);
    cJSON_AddStringToObject(ref, "$patch", "delete");
    cJSON_AddStringToObject(ref, "uid", pod->uid);
    cJSON_AddItemToArray(
        cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "status"), "reservedFor"), ref);
    char name[600];
    kobj(c, name, sizeof(name));
    int http;
    ks_code code = claim_io(io, c, "PATCH", 1, "application/strategic-merge-patch+json", patch,
                            &obj, &http, stt);
    if (code == KS_SUCCESS)
        assume(st, obj, name, chg);
    cJSON_Delete(obj);
    cJSON_Delete(patch);
    ks__draobj_unref(cur ? (ks__draobj *)&cur->h : NULL);
    return code;
}

ks_code ks__dra_claim_deallocate_live(const ks_dra_claim_io *io, const ks_resource_claim *claim,
                                      ks_status *stt)
{
    /* UpdateStatus of the cycle's copy with reservedFor, allocation and devices cleared: the
     * same resourceVersion precondition, as a merge patch. */
    cJSON *patch = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
    cJSON_AddStringToObject(meta, "resourceVersion", claim->h.resource_version);
    cJSON *status = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddNullToObject(status, "reservedFor");
    cJSON_AddNullToObject(status, "allocation");
    cJSON_AddNullToObject(status, "devices");
    char *text = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    if (!text) {
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    ks_code code = io->request(io->ctx, "PATCH", claim->h.ns, claim->h.name, 1,
                               "application/merge-patch+json", text, NULL, NULL, stt);
    free(text);
    return code;
}
