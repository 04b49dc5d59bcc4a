/*
 * What the libFuzzer harnesses (tests/fuzz, docs/FUZZING.md) found, as plain tests: each
 * fixed crash's input fed to the same function, so that it stays fixed in the normal and the
 * sanitizer suites (findings in code being rewritten wait in tests/fuzz/crashes/). Also the parsing
 * entry points exposed for tests/fuzz/fuzz_watch.c (ks__api_list_page, ks__api_watch_body): a body
 * cut in any chunks yields the same events.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "api/store.h"
#include "live/apiclient_int.h"
#include "util/numconv.h"

/* --- fixed findings -------------------------------------------------------------------------- */

/* core/api/store.c converted status.disruptionsAllowed to int32 unchecked: 1e20 was undefined
 * behaviour (UBSan in the sanitizer suite). It saturates now. */
Test(fuzz_regress, pdb_disruptions_allowed_out_of_int32_range_saturates)
{
    static const char *const cases[][2] = {{"1e20", "2147483647"}, {"-1e20", "-2147483648"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char json[512], err[256];
        snprintf(json, sizeof(json),
                 "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\","
                 "\"metadata\":{\"name\":\"p\",\"namespace\":\"d\",\"uid\":\"u\"},"
                 "\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}}},"
                 "\"status\":{\"disruptionsAllowed\":%s}}",
                 cases[i][0]);
        cJSON *obj = cJSON_Parse(json);
        ks_store *st = ks__store_new();
        ks_pdb *pdbs = NULL;
        cr_assert_not_null(obj);
        cr_assert_eq(ks__store_apply(st, obj, 0, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(ks__store_pdbs(st, &pdbs), 1);
        cr_assert_eq(pdbs[0].disruptions_allowed, strtol(cases[i][1], NULL, 10), "%s", cases[i][0]);
        free(pdbs);
        ks__store_free(st);
        cJSON_Delete(obj);
    }
}

/* core/api/objects.c converted a Node's status.images[].sizeBytes to int64 unchecked: 1.0055e19
 * (fuzz_manifest, tests/fuzz/crashes at the time) was undefined behaviour. It saturates now, and so
 * do tolerationSeconds and hostPort, found by looking for the same conversion. */
Test(fuzz_regress, node_image_size_and_toleration_seconds_beyond_int64_saturate)
{
    char err[256];
    ks_node *node = NULL;
    ks_pod *pod = NULL;
    cJSON *n = cJSON_Parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"e\"},\"status\":{"
                           "\"images\":[{\"names\":[\"a\"],\"sizeBytes\":10055555555555550000},"
                           "{\"names\":[\"b\"],\"sizeBytes\":-1e30}]}}");
    cJSON *p = cJSON_Parse("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},"
                           "\"spec\":{\"containers\":[{\"name\":\"c\"}],\"tolerations\":[{"
                           "\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
                           "\"tolerationSeconds\":1e300}]}}");
    ks__objects_init();
    cr_assert_eq(ks__node_from_json(n, &node, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(node->nimages, 2);
    cr_expect_eq(node->images[0].size_bytes, INT64_MAX);
    cr_expect_eq(node->images[1].size_bytes, INT64_MIN);
    cr_assert_eq(ks__pod_from_json(p, &pod, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(pod->tolerations[0].toleration_seconds, INT64_MAX);
    ks__node_unref(node);
    ks__pod_unref(pod);
    cJSON_Delete(n);
    cJSON_Delete(p);
}

Test(fuzz_regress, saturating_conversions_of_doubles)
{
    cr_expect_eq(ks__sat_i64(1e19), INT64_MAX);
    cr_expect_eq(ks__sat_i64(9223372036854775808.0), INT64_MAX);
    cr_expect_eq(ks__sat_i64(9223372036854774784.0), 9223372036854774784LL);
    cr_expect_eq(ks__sat_i64(-9223372036854775808.0), INT64_MIN);
    cr_expect_eq(ks__sat_i64(-1e300), INT64_MIN);
    cr_expect_eq(ks__sat_i64(-2.9), -2);
    cr_expect_eq(ks__sat_i32(2147483648.0), INT32_MAX);
    cr_expect_eq(ks__sat_i32(2147483647.0), INT32_MAX);
    cr_expect_eq(ks__sat_i32(-2147483649.0), INT32_MIN);
    cr_expect_eq(ks__sat_i32(7.9), 7);
    cr_expect(ks__is_i64(-9223372036854775808.0));
    cr_expect(!ks__is_i64(9223372036854775808.0));
    cr_expect(!ks__is_i64(1e300));
    cr_expect(!ks__is_i64(0.5));
    cr_expect(ks__is_i64(42));
}

/* --- the watch body and the list page without a network ------------------------------------- */

typedef struct seen {
    char text[1024];
    size_t n;
} seen;

static void note(seen *s, const char *what, cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof(s->text) - len, "%s %s;", what,
             cJSON_IsString(name) ? name->valuestring : "?");
    s->n++;
    cJSON_Delete(obj);
}

static int on_event(const char *type, cJSON *obj, void *ud)
{
    note(ud, type, obj);
    return 0;
}

static int on_item(cJSON *item, void *ud)
{
    note(ud, "ITEM", item);
    return 0;
}

static void quiet(const char *msg, void *ud) {}

static const char k_body[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}\n"
    "not json\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"b\"}}}"; /* no last newline */

Test(fuzz_entry, watch_body_events_do_not_depend_on_the_chunking)
{
    ks_api_watch_opts wo = {.on_skip = quiet};
    seen whole = {0};
    char *rv = NULL;
    ks_api api = {0};
    cr_assert_eq(ks__api_watch_body(&api, "/api/v1/pods?x=1", &wo, k_body, strlen(k_body), 0,
                                    on_event, &whole, &rv),
                 0);
    cr_assert_str_eq(whole.text, "ADDED a;BOOKMARK ?;DELETED b;");
    cr_assert_str_eq(rv, "7");
    for (size_t chunk = 1; chunk < 40; chunk++) {
        seen part = {0};
        cr_assert_eq(ks__api_watch_body(&api, "/api/v1/pods", &wo, k_body, strlen(k_body), chunk,
                                        on_event, &part, &rv),
                     0);
        cr_assert_str_eq(part.text, whole.text, "chunk %zu", chunk);
    }
    free(rv);
    free(api.buf);
}

Test(fuzz_entry, watch_body_error_event_ends_the_watch)
{
    static const char body[] =
        "{\"type\":\"ERROR\",\"object\":{\"code\":410,\"reason\":\"Expired\"}}\n"
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"late\"}}}\n";
    seen s = {0};
    ks_api api = {0};
    cr_assert_eq(
        ks__api_watch_body(&api, "/api/v1/pods", NULL, body, strlen(body), 5, on_event, &s, NULL),
        KS_API_GONE);
    cr_assert_eq(s.n, 0);
    cr_assert(strstr(api.err, "410 Expired"), "%s", api.err);
    free(api.buf);
}

static int list_page(const char *text, seen *s, char **rv, char **cont, ks_api *api)
{
    api->buf = strdup(text);
    api->len = strlen(text);
    int rc = ks__api_list_page(api, "/api/v1/nodes", on_item, s, rv, cont);
    free(api->buf);
    api->buf = NULL;
    return rc;
}

Test(fuzz_entry, list_page_items_version_and_continue)
{
    ks_api api = {0};
    seen s = {0};
    char *rv = NULL, *cont = NULL;
    cr_assert_eq(list_page("{\"metadata\":{\"resourceVersion\":\"9\",\"continue\":\"t\"},"
                           "\"items\":[{\"metadata\":{\"name\":\"n1\"}},{\"metadata\":{}}]}",
                           &s, &rv, &cont, &api),
                 0);
    cr_assert_str_eq(s.text, "ITEM n1;ITEM ?;");
    cr_assert_str_eq(rv, "9");
    cr_assert_str_eq(cont, "t");
    /* The last page: no continue token; a missing resourceVersion keeps the previous one. */
    cr_assert_eq(list_page("{\"items\":null}", &s, &rv, &cont, &api), 0);
    cr_assert_null(cont);
    cr_assert_str_eq(rv, "9");
    cr_assert_eq(list_page("{\"items\":{}}", &s, &rv, &cont, &api), KS_EPARSE);
    cr_assert(strstr(api.err, "items is not a list"), "%s", api.err);
    cr_assert_eq(list_page("[1]", &s, &rv, &cont, &api), KS_EPARSE);
    cr_assert(strstr(api.err, "not a JSON object"), "%s", api.err);
    free(rv);
    free(cont);
}
