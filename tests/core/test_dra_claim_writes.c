/*
 * DynamicResources' ResourceClaim writes in live mode (core/sched/dra_claim_writes.c) against a
 * scripted API server: upstream bindClaim's requests and retries on conflicts, its messages, the
 * assume cache's rule (an answer is filed, an older copy from the watch is not), Unreserve's
 * strategic merge patch and PostFilter's queued deallocation.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "api/store.h"
#include "sched/dra_manager.h"
#include "sched/framework.h"

/* What the fake server answers to each request, in order; what it was asked. */
typedef struct script {
    int n, at;
    int http[12];         /* 0: success */
    const char *body[12]; /* the answer's object (success) or the Status message (failure) */
    char asked[12][128];  /* "METHOD status?" */
    char *sent[12];       /* the bodies sent */
} script;

static ks_code fake_request(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                            const char *ctype, const char *body, char **out, int *http,
                            ks_status *st)
{
    script *s = ctx;
    cr_assert_lt(s->at, s->n, "unexpected request %s %s/%s", method, ks__sym_str(ns),
                 ks__sym_str(name));
    int i = s->at++;
    snprintf(s->asked[i], sizeof(s->asked[i]), "%s %s/%s%s %s", method, ks__sym_str(ns),
             ks__sym_str(name), status ? "/status" : "", ctype ? ctype : "-");
    s->sent[i] = body ? strdup(body) : NULL;
    if (!out) /* queued */
        return KS_SUCCESS;
    if (http)
        *http = s->http[i] ? s->http[i] : 200;
    if (s->http[i]) {
        ks__status_add(st, s->body[i]);
        return KS_ERROR;
    }
    *out = strdup(s->body[i]);
    return KS_SUCCESS;
}

static void script_free(script *s)
{
    for (int i = 0; i < 12; i++)
        free(s->sent[i]);
}

#define CLAIM(rv, extra_meta, status)                                                              \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":"    \
    "\"c\",\"namespace\":\"ns\",\"uid\":\"uid-c\",\"resourceVersion\":\"" rv "\"" extra_meta "},"  \
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":"       \
    "\"gpu\"}}]}},\"status\":{" status "}}"
#define ALLOCATED                                                                                  \
    "\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":"      \
    "\"p\",\"device\":\"dev\"}]}}"
#define FIN ",\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]"
#define CONFLICT                                                                                   \
    "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"c\": the object has been "  \
    "modified; please apply your changes to the latest version and try again"

static ks_store *st;
static ks_pod *pod;

static const ks_resource_claim *file_claim(const char *json)
{
    char err[512];
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "%s", json);
    cr_assert_eq(ks__store_apply_dra(st, o, 0, 0, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    return ks__dra_claim(ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, "ns/c"));
}

static const ks_resource_claim *stored(void)
{
    return ks__dra_claim(ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, "ns/c"));
}

static void release(const ks_resource_claim *c) { ks__draobj_unref((ks__draobj *)&c->h); }

static void setup(void)
{
    char err[256];
    st = ks__store_new();
    cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"uid-p\"},"
                           "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
}

static void teardown(void)
{
    ks__pod_unref(pod);
    ks__store_free(st);
}

TestSuite(dra_claim_writes, .init = setup, .fini = teardown);

static void message(ks_status *s, char *out, size_t n) { ks__status_message(s, out, n); }

/* An allocated claim: one PUT of the status adds the pod to reservedFor (and stamps the
 * allocation); the answer is filed and is the change. */
Test(dra_claim_writes, reserves_an_allocated_claim_with_one_status_update)
{
    const ks_resource_claim *c = file_claim(CLAIM("5", FIN, ALLOCATED));
    script s = {.n = 1,
                .body = {CLAIM("6", FIN,
                               ALLOCATED ",\"reservedFor\":[{\"resource\":"
                                         "\"pods\",\"name\":\"p\",\"uid\":"
                                         "\"uid-p\"}]")}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_dra_change chg = {0};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_bind_live(&io, st, pod, c, NULL, 0, &chg, &stt), KS_SUCCESS);
    cr_assert_str_eq(s.asked[0], "PUT ns/c/status application/json");
    cr_assert(strstr(s.sent[0], "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\","
                                "\"uid\":\"uid-p\"}]"),
              "%s", s.sent[0]);
    cr_assert(strstr(s.sent[0], "\"resourceVersion\":\"5\""), "%s", s.sent[0]);
    cr_assert(strstr(s.sent[0], "\"allocationTimestamp\":\""), "%s", s.sent[0]);
    cr_assert_not_null(chg.new_obj);
    cr_assert_str_eq(chg.new_obj->resource_version, "6");
    const ks_resource_claim *now = stored();
    cr_assert(ks__dra_claim_reserved_for(now, "uid-p"));
    release(now);
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    release(c);
    script_free(&s);
}

/* retry.RetryOnConflict: a conflict GETs the claim and tries again from the server's copy. */
Test(dra_claim_writes, a_conflict_is_retried_from_a_fresh_copy)
{
    const ks_resource_claim *c = file_claim(CLAIM("5", FIN, ALLOCATED));
    script s = {.n = 3,
                .http = {409, 0, 0},
                .body = {CONFLICT, CLAIM("7", FIN, ALLOCATED), CLAIM("8", FIN, ALLOCATED)}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_dra_change chg = {0};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_bind_live(&io, st, pod, c, NULL, 0, &chg, &stt), KS_SUCCESS);
    cr_assert_str_eq(s.asked[1], "GET ns/c -");
    cr_assert_str_eq(s.asked[2], "PUT ns/c/status application/json");
    cr_assert(strstr(s.sent[2], "\"resourceVersion\":\"7\""), "%s", s.sent[2]);
    cr_assert_str_eq(chg.new_obj->resource_version, "8");
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    release(c);
    script_free(&s);
}

/* Five tries (retry.DefaultRetry), then the last conflict in upstream's words. */
Test(dra_claim_writes, conflicts_run_out_after_five_tries)
{
    const ks_resource_claim *c = file_claim(CLAIM("5", FIN, ALLOCATED));
    script s = {.n = 9, .http = {409, 0, 409, 0, 409, 0, 409, 0, 409}};
    for (int i = 0; i < 9; i++)
        s.body[i] = i % 2 ? CLAIM("5", FIN, ALLOCATED) : CONFLICT;
    ks_dra_claim_io io = {fake_request, &s};
    ks_dra_change chg = {0};
    ks_status stt;
    char msg[1024];
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_bind_live(&io, st, pod, c, NULL, 0, &chg, &stt), KS_ERROR);
    cr_assert_eq(s.at, 9);
    message(&stt, msg, sizeof(msg));
    cr_assert_str_eq(msg, "add reservation to claim ns/c: " CONFLICT);
    cr_assert_null(chg.new_obj);
    release(c);
    script_free(&s);
}

/* Not retried: a claim allocated meanwhile, a claim being deleted, another failure. */
Test(dra_claim_writes, what_upstream_does_not_retry)
{
    const ks_resource_claim *c = file_claim(CLAIM("5", FIN, ALLOCATED));
    script s = {.n = 2,
                .http = {409, 0},
                .body = {CONFLICT, CLAIM("7", FIN ",\"deletionTimestamp\":\"2026-12-02T00:00:00Z\"",
                                         ALLOCATED)}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_dra_change chg = {0};
    ks_status stt;
    char msg[1024];
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_bind_live(&io, st, pod, c, NULL, 0, &chg, &stt), KS_ERROR);
    message(&stt, msg, sizeof(msg));
    cr_assert_str_eq(msg, "claim ns/c got deleted in the meantime");
    script_free(&s);

    script f = {.n = 1, .http = {403}, .body = {"forbidden"}};
    io.ctx = &f;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_bind_live(&io, st, pod, c, NULL, 0, &chg, &stt), KS_ERROR);
    message(&stt, msg, sizeof(msg));
    cr_assert_str_eq(msg, "add reservation to claim ns/c: forbidden");
    cr_assert_eq(f.at, 1);
    release(c);
    script_free(&f);

    /* an allocated claim that lost its allocation meanwhile */
    c = file_claim(CLAIM("9", FIN, ));
    script d = {.n = 0};
    io.ctx = &d;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_bind_live(&io, st, pod, c, NULL, 0, &chg, &stt), KS_ERROR);
    message(&stt, msg, sizeof(msg));
    cr_assert_str_eq(msg, "claim ns/c got deallocated elsewhere in the meantime");
    release(c);
}

/* The assume cache's rule: the watch's copy of what a write replaced (an older or the same
 * resourceVersion) does not take the answer back; a newer one is filed. */
Test(dra_claim_writes, the_watch_does_not_take_back_an_assumed_answer)
{
    char err[256];
    release(file_claim(CLAIM("6", FIN, ALLOCATED)));
    ks_dra_change chg = {0};
    cJSON *old = cJSON_Parse(CLAIM("5", , ));
    cr_assert_eq(ks__store_assume_dra(st, old, &chg, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(chg.new_obj);
    cr_assert_null(chg.old_obj);
    const ks_resource_claim *c = stored();
    cr_assert(c->allocated);
    release(c);
    cJSON_Delete(old);
    cJSON *same = cJSON_Parse(CLAIM("6", , ));
    cr_assert_eq(ks__store_assume_dra(st, same, &chg, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(chg.new_obj);
    c = stored();
    cr_assert(c->allocated);
    release(c);
    cJSON_Delete(same);
    cJSON *newer = cJSON_Parse(CLAIM("10", , ));
    cr_assert_eq(ks__store_assume_dra(st, newer, &chg, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(chg.new_obj);
    c = stored();
    cr_assert(!c->allocated);
    release(c);
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    cJSON_Delete(newer);
}

/* Unreserve: a strategic merge patch of the status deleting the pod's entry by uid, only when
 * the claim is allocated and reserved for the pod. */
Test(dra_claim_writes, unreserve_patches_out_the_pod_only_when_reserved)
{
    const ks_resource_claim *c = file_claim(CLAIM("5", FIN, ALLOCATED));
    script none = {.n = 0};
    ks_dra_claim_io io = {fake_request, &none};
    ks_dra_change chg = {0};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_unreserve_live(&io, st, pod, c, &chg, &stt), KS_SKIP);
    release(c);
    c = file_claim(CLAIM("6", FIN,
                         ALLOCATED ",\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\","
                                   "\"uid\":\"uid-p\"}]"));
    script s = {.n = 1, .body = {CLAIM("7", FIN, ALLOCATED)}};
    io.ctx = &s;
    cr_assert_eq(ks__dra_claim_unreserve_live(&io, st, pod, c, &chg, &stt), KS_SUCCESS);
    cr_assert_str_eq(s.asked[0], "PATCH ns/c/status application/strategic-merge-patch+json");
    cr_assert_str_eq(s.sent[0], "{\"metadata\":{\"uid\":\"uid-c\"},\"status\":{\"reservedFor\":"
                                "[{\"$patch\":\"delete\",\"uid\":\"uid-p\"}]}}");
    const ks_resource_claim *now = stored();
    cr_assert(!ks__dra_claim_reserved_for(now, "uid-p"));
    release(now);
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    release(c);
    script_free(&s);
}

/* PostFilter's deallocation: queued (no answer awaited), the cycle's resourceVersion as the
 * precondition, reservedFor, allocation and devices cleared; the store keeps the claim until the
 * watch brings the change. */
Test(dra_claim_writes, deallocation_is_queued_with_the_cycles_resource_version)
{
    const ks_resource_claim *c = file_claim(CLAIM("5", FIN, ALLOCATED));
    script s = {.n = 1};
    ks_dra_claim_io io = {fake_request, &s};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_deallocate_live(&io, c, &stt), KS_SUCCESS);
    cr_assert_str_eq(s.asked[0], "PATCH ns/c/status application/merge-patch+json");
    cr_assert_str_eq(s.sent[0], "{\"metadata\":{\"resourceVersion\":\"5\"},\"status\":{"
                                "\"reservedFor\":null,\"allocation\":null,\"devices\":null}}");
    const ks_resource_claim *now = stored();
    cr_assert(now->allocated);
    release(now);
    release(c);
    script_free(&s);
}
