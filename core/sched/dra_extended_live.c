/*
 * Live mode's writes for extended resources backed by DRA, through the cluster source's
 * claim_request (upstream v1.37.2 extendeddynamicresources.go): PreBind's
 * createExtendedResourceClaimInAPI (a POST to the namespace's collection with generateName; the
 * answer is filed at once, where upstream polls its assume cache until the informer has it) and
 * deleteClaim for Unreserve and PostFilter (the finalizer taken off with an Update, retried from a
 * fresh GET on a conflict, then DELETE; a claim already gone is no error).
 *
 * As upstream's, the deletion waits for the API server on the calling thread, which is the
 * scheduling thread for PostFilter: a rare path (a claim left by an earlier attempt whose
 * binding failed).
 *
 * Threads: create on a binding thread; delete on a binding or the scheduling thread.
 */
#include <stdio.h>
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
#define HTTP_NOT_FOUND 404

/* One request; the answer parsed into *answer when answer is not NULL. */
static ks_code request(const ks_dra_claim_io *io, const char *method, ks_sym ns, ks_sym name,
                       const cJSON *body, cJSON **answer, int *http, ks_status *st)
{
    char *text = body ? cJSON_PrintUnformatted(body) : NULL, *out = NULL;
    if (body && !text) {
        ks__status_add(st, "out of memory");
        return KS_ERROR;
    }
    *http = 0;
    ks_code code = io->request(io->ctx, method, ns, name, 0, body ? "application/json" : NULL, text,
                               &out, http, st);
    free(text);
    if (code == KS_SUCCESS && answer && !(*answer = cJSON_Parse(out ? out : ""))) {
        ks__status_add(st, "the API server's answer is not a JSON object");
        code = KS_ERROR;
    }
    free(out);
    return code;
}

/* fmt with the claim's namespace/name, ": ", the API server's message. */
static ks_code wrapped(ks_status *stt, const char *fmt, const char *ns, const char *name,
                       const ks_status *api)
{
    char apimsg[1024], what[700], msg[1800];
    ks__status_message(api, apimsg, sizeof(apimsg));
    snprintf(what, sizeof(what), fmt, ns, name);
    snprintf(msg, sizeof(msg), "%s: %s", what, apimsg);
    ks__status_add(stt, msg);
    return KS_ERROR;
}

ks_code ks__dra_extended_claim_create_live(const ks_dra_claim_io *io, ks_store *st,
                                           const ks_resource_claim *claim,
                                           const ks_resource_claim **created, ks_dra_change *chg,
                                           ks_status *stt)
{
    *created = NULL;
    cJSON *obj = cJSON_Parse(claim->h.json);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (!obj || !meta) {
        cJSON_Delete(obj);
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    /* Clear fields which must or can not be set during creation. */
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    ks_status api;
    ks__status_reset(&api);
    cJSON *answer = NULL;
    int http;
    ks_code code = request(io, "POST", claim->h.ns, KS_SYM_ABSENT, obj, &answer, &http, &api);
    cJSON_Delete(obj);
    if (code != KS_SUCCESS) /* klog.KObj of the claim without its name: "namespace/" */
        return wrapped(stt, "create claim for extended resources %s/%s", ks__sym_str(claim->h.ns),
                       "", &api);
    /* What the assume cache has once the informer brought it: the answer, filed now. */
    char err[512];
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(answer, "metadata"), "name"));
    if (!name) {
        cJSON_Delete(answer);
        ks__status_add(stt, "the API server's answer names no claim");
        return KS_ERROR;
    }
    if (ks__store_assume_dra(st, answer, chg, err, sizeof(err)) != 0 && ks__log_enabled(5))
        ks__log('I', "DynamicResources", "claim %s not stored in assume cache: %s", name, err);
    char key[700];
    snprintf(key, sizeof(key), "%s/%s", ks__sym_str(claim->h.ns), name);
    *created = ks__dra_claim(ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, key));
    if (!*created) { /* filed and deleted at once by the watch: track the answer itself */
        ks__draobj *o = NULL;
        if (ks__draobj_from_json(answer, &o, err, sizeof(err)) == 0)
            *created = ks__dra_claim(o);
    }
    cJSON_Delete(answer);
    if (!*created) {
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    if (ks__log_enabled(5))
        ks__log('I', "DynamicResources", "created claim for extended resources %s", key);
    return KS_SUCCESS;
}

/* slices.Delete of the finalizer, when present. */
static void drop_finalizer(cJSON *obj)
{
    cJSON *fin = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                  "finalizers");
    for (int i = cJSON_GetArraySize(fin) - 1; i >= 0; i--) {
        const cJSON *f = cJSON_GetArrayItem(fin, i);
        if (cJSON_IsString(f) && strcmp(f->valuestring, FINALIZER) == 0) {
            cJSON_DeleteItemFromArray(fin, i);
            break;
        }
    }
}

ks_code ks__dra_claim_delete_live(const ks_dra_claim_io *io, const ks_resource_claim *claim,
                                  ks_status *stt)
{
    const char *ns = ks__sym_str(claim->h.ns), *name = ks__sym_str(claim->h.name);
    cJSON *obj = cJSON_Parse(claim->h.json);
    if (!obj) {
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    ks_code code = KS_ERROR;
    for (int step = 0; step < RETRY_STEPS; step++) {
        ks_status api;
        int http;
        ks__status_reset(&api);
        if (step > 0) {
            ks__status_reset(stt); /* the conflict's message stays only if the retries run out */
            nanosleep(&(struct timespec){0, RETRY_SLEEP_NS}, NULL);
            cJSON *fresh = NULL;
            if (request(io, "GET", claim->h.ns, claim->h.name, NULL, &fresh, &http, &api) !=
                KS_SUCCESS) {
                code = wrapped(stt, "get resourceclaim %s/%s", ns, name, &api);
                break;
            }
            cJSON_Delete(obj);
            obj = fresh;
        }
        /* Remove the finalizer to unblock removal first. */
        drop_finalizer(obj);
        if (request(io, "PUT", claim->h.ns, claim->h.name, obj, NULL, &http, &api) == KS_SUCCESS) {
            code = KS_SUCCESS;
            break;
        }
        code = wrapped(stt, "update resourceclaim %s/%s", ns, name, &api);
        if (http != HTTP_CONFLICT)
            break;
    }
    cJSON_Delete(obj);
    if (code != KS_SUCCESS)
        return code;
    ks_status api;
    int http;
    ks__status_reset(&api);
    if (request(io, "DELETE", claim->h.ns, claim->h.name, NULL, NULL, &http, &api) != KS_SUCCESS &&
        http != HTTP_NOT_FOUND) {
        char msg[1024];
        ks__status_message(&api, msg, sizeof(msg));
        ks__status_add(stt, msg);
        return KS_ERROR;
    }
    if (ks__log_enabled(5))
        ks__log('I', "DynamicResources", "deleted resourceclaim %s/%s", ns, name);
    return KS_SUCCESS;
}
