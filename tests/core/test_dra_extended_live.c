/*
 * Live mode's writes for extended resources backed by DRA (core/sched/dra_extended_live.c)
 * against a scripted API server: createExtendedResourceClaimInAPI's POST to the collection with
 * generateName and the answer filed at once; deleteClaim's Update without the finalizer (retried
 * from a fresh GET on a conflict) then DELETE, a claim already gone being no error; upstream's
 * messages.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "api/store.h"
#include "sched/dra_manager.h"
#include "sched/framework.h"

typedef struct script {
    int n, at;
    int http[8];         /* 0: success */
    const char *body[8]; /* the answer (success) or the Status message (failure) */
    char asked[8][160];
    char *sent[8];
} script;

static ks_code fake_request(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                            const char *ctype, const char *body, char **out, int *http,
                            ks_status *st)
{
    script *s = ctx;
    cr_assert_lt(s->at, s->n, "unexpected request %s", method);
    int i = s->at++;
    snprintf(s->asked[i], sizeof(s->asked[i]), "%s %s/%s%s %s", method, ks__sym_str(ns),
             name == KS_SYM_ABSENT ? "(collection)" : ks__sym_str(name), status ? "/status" : "",
             ctype ? ctype : "-");
    s->sent[i] = body ? strdup(body) : NULL;
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
    for (int i = 0; i < 8; i++)
        free(s->sent[i]);
}

static ks_store *st;
static ks_pod *pod;

static void setup(void)
{
    char err[256];
    st = ks__store_new();
    cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"uid-p\"},"
                           "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
                           "{\"example.com/gpu\":\"1\"}}}]}}");
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
}

static void teardown(void)
{
    ks__pod_unref(pod);
    ks__store_free(st);
}

TestSuite(dra_extended_live, .init = setup, .fini = teardown);

#define CREATED(rv, fin)                                                                           \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":"    \
    "\"p-extended-resources-x7k2q\",\"generateName\":\"p-extended-resources-\",\"namespace\":"     \
    "\"ns\",\"uid\":\"uid-new\",\"resourceVersion\":\"" rv "\"" fin ",\"annotations\":{"           \
    "\"resource.kubernetes.io/extended-resource-claim\":\"true\"},\"ownerReferences\":[{"          \
    "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"uid-p\",\"controller\":"      \
    "true}]},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"container-0-request-0\","            \
    "\"exactly\":{\"deviceClassName\":\"gpu\",\"allocationMode\":\"ExactCount\",\"count\":1}}]}}}"
#define FIN ",\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]"

static const ks_resource_claim *in_memory_claim(void)
{
    ks_dra_extended_request r = {"container-0-request-0", "gpu", 1};
    const ks_resource_claim *c = ks__dra_extended_claim_new(pod, &r, 1);
    cr_assert_not_null(c);
    return c;
}

static void release(const ks_resource_claim *c)
{
    ks__draobj_unref(c ? (ks__draobj *)&c->h : NULL);
}

Test(dra_extended_live, create_posts_with_generate_name_and_files_the_answer)
{
    const ks_resource_claim *mem = in_memory_claim();
    script s = {.n = 1, .body = {CREATED("7", "")}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_dra_change chg = {0};
    const ks_resource_claim *created = NULL;
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_extended_claim_create_live(&io, st, mem, &created, &chg, &stt),
                 KS_SUCCESS);
    cr_assert_str_eq(s.asked[0], "POST ns/(collection) application/json");
    cJSON *sent = cJSON_Parse(s.sent[0]);
    const cJSON *meta = cJSON_GetObjectItem(sent, "metadata");
    cr_assert_null(cJSON_GetObjectItem(meta, "name"), "no name: %s", s.sent[0]);
    cr_assert_null(cJSON_GetObjectItem(meta, "uid"), "%s", s.sent[0]);
    cr_assert_null(cJSON_GetObjectItem(sent, "status"), "%s", s.sent[0]);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(meta, "generateName")),
                     "p-extended-resources-");
    cJSON_Delete(sent);
    cr_assert_not_null(created);
    cr_assert_str_eq(created->h.key, "ns/p-extended-resources-x7k2q");
    cr_assert(created->extended_resource_claim);
    cr_assert_not_null(chg.new_obj, "filed as the assume cache would");
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    release(created);
    release(mem);
    script_free(&s);
}

Test(dra_extended_live, create_failure_is_upstreams_message)
{
    const ks_resource_claim *mem = in_memory_claim();
    script s = {.n = 1, .http = {403}, .body = {"resourceclaims.resource.k8s.io is forbidden"}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_dra_change chg = {0};
    const ks_resource_claim *created = NULL;
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_extended_claim_create_live(&io, st, mem, &created, &chg, &stt), KS_ERROR);
    char msg[512];
    ks__status_message(&stt, msg, sizeof(msg));
    cr_assert_str_eq(msg, "create claim for extended resources ns/: resourceclaims.resource.k8s.io "
                          "is forbidden");
    cr_assert_null(created);
    release(mem);
    script_free(&s);
}

static const ks_resource_claim *filed(const char *json)
{
    char err[256];
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__store_apply_dra(st, o, 0, 0, NULL, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    return ks__dra_claim(
        ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, "ns/p-extended-resources-x7k2q"));
}

Test(dra_extended_live, delete_drops_the_finalizer_then_deletes)
{
    const ks_resource_claim *c = filed(CREATED("7", FIN));
    script s = {.n = 2, .body = {CREATED("8", ""), "{\"kind\":\"Status\"}"}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_delete_live(&io, c, &stt), KS_SUCCESS);
    cr_assert_str_eq(s.asked[0], "PUT ns/p-extended-resources-x7k2q application/json");
    cr_assert_null(strstr(s.sent[0], "delete-protection"), "%s", s.sent[0]);
    cr_assert(strstr(s.sent[0], "\"resourceVersion\":\"7\""), "%s", s.sent[0]);
    cr_assert_str_eq(s.asked[1], "DELETE ns/p-extended-resources-x7k2q -");
    release(c);
    script_free(&s);
}

Test(dra_extended_live, delete_retries_a_conflict_and_tolerates_not_found)
{
    const ks_resource_claim *c = filed(CREATED("7", FIN));
    script s = {.n = 4,
                .http = {409, 0, 0, 404},
                .body = {"the object has been modified", CREATED("9", FIN), CREATED("10", ""),
                         "not found"}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_delete_live(&io, c, &stt), KS_SUCCESS);
    cr_assert_str_eq(s.asked[1], "GET ns/p-extended-resources-x7k2q -");
    cr_assert_str_eq(s.asked[2], "PUT ns/p-extended-resources-x7k2q application/json");
    cr_assert(strstr(s.sent[2], "\"resourceVersion\":\"9\""), "%s", s.sent[2]);
    cr_assert_null(strstr(s.sent[2], "delete-protection"), "%s", s.sent[2]);
    cr_assert_str_eq(s.asked[3], "DELETE ns/p-extended-resources-x7k2q -");
    release(c);
    script_free(&s);
}

Test(dra_extended_live, delete_update_failure_is_upstreams_message)
{
    const ks_resource_claim *c = filed(CREATED("7", FIN));
    script s = {.n = 1, .http = {403}, .body = {"forbidden"}};
    ks_dra_claim_io io = {fake_request, &s};
    ks_status stt;
    ks__status_reset(&stt);
    cr_assert_eq(ks__dra_claim_delete_live(&io, c, &stt), KS_ERROR);
    char msg[512];
    ks__status_message(&stt, msg, sizeof(msg));
    cr_assert_str_eq(msg, "update resourceclaim ns/p-extended-resources-x7k2q: forbidden");
    release(c);
    script_free(&s);
}
