/*
 * Delegated authentication and authorization of the serving port (core/live/delegated_auth.c
 * behind core/live/httpserver.c), against a fake API server (libmicrohttpd in this process)
 * that answers TokenReviews and SubjectAccessReviews from a fixed table and counts them:
 * 401 / 403 / 200 as upstream, the always-allowed paths, system:masters, the caches' TTLs on an
 * injected clock, failed reviews, and a slow review that must not delay /healthz.
 */
#include <criterion/criterion.h>

#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "live/delegated_auth.h"
#include "live/httpserver.h"
#include "live/kubeconfig.h"
#include "live/tlsserve.h"
#include "util/metrics.h"

#define PKI KS_SOURCE_DIR "/tests/fixtures/kubeconfig/pki/"

/* --- the fake API server ------------------------------------------------------------------- */

static struct {
    struct MHD_Daemon *d;
    int port;
    atomic_int token_reviews, access_reviews;
    atomic_int fail_sar, fail_tr; /* answer 500 */
    atomic_int sar_delay_ms;
    char last_sar[2048]; /* the last SubjectAccessReview's spec, JSON */
    pthread_mutex_t mu;
} F;

typedef struct upload {
    char *buf;
    size_t len;
} upload;

/* The users the fake TokenReview knows. */
static cJSON *user_of(const char *token)
{
    const char *name = NULL, *group = NULL;
    if (!strcmp(token, "tok-admin"))
        name = "admin", group = "system:masters";
    else if (!strcmp(token, "tok-reader"))
        name = "reader", group = "readers";
    else if (!strcmp(token, "tok-nobody"))
        name = "nobody", group = NULL;
    if (!name)
        return NULL;
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "username", name);
    cJSON_AddStringToObject(u, "uid", "uid-1");
    cJSON *g = cJSON_AddArrayToObject(u, "groups");
    if (group)
        cJSON_AddItemToArray(g, cJSON_CreateString(group));
    return u;
}

static char *answer(const char *url, const char *body, int *status)
{
    cJSON *req = cJSON_Parse(body), *spec = cJSON_GetObjectItem(req, "spec");
    cJSON *resp = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(resp, "status");
    *status = 201;
    if (strstr(url, "/tokenreviews")) {
        atomic_fetch_add(&F.token_reviews, 1);
        if (atomic_load(&F.fail_tr))
            *status = 500;
        const char *tok = cJSON_GetStringValue(cJSON_GetObjectItem(spec, "token"));
        cJSON *u = tok ? user_of(tok) : NULL;
        if (u) {
            cJSON_AddTrueToObject(st, "authenticated");
            cJSON_AddItemToObject(st, "user", u);
        } else {
            cJSON_AddFalseToObject(st, "authenticated");
            if (tok && !strcmp(tok, "tok-expired"))
                cJSON_AddStringToObject(st, "error", "token expired");
        }
    } else if (strstr(url, "/subjectaccessreviews")) {
        atomic_fetch_add(&F.access_reviews, 1);
        int delay = atomic_load(&F.sar_delay_ms);
        if (delay)
            usleep((useconds_t)delay * 1000);
        if (atomic_load(&F.fail_sar))
            *status = 500;
        char *s = cJSON_PrintUnformatted(spec);
        pthread_mutex_lock(&F.mu);
        snprintf(F.last_sar, sizeof F.last_sar, "%s", s ? s : "");
        pthread_mutex_unlock(&F.mu);
        free(s);
        const char *user = cJSON_GetStringValue(cJSON_GetObjectItem(spec, "user"));
        cJSON *nra = cJSON_GetObjectItem(spec, "nonResourceAttributes");
        const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(nra, "path"));
        const char *verb = cJSON_GetStringValue(cJSON_GetObjectItem(nra, "verb"));
        /* as RBAC with a ClusterRole granting get on nonResourceURL /metrics to "reader" */
        int ok = user && path && verb && !strcmp(user, "reader") && !strcmp(path, "/metrics") &&
                 !strcmp(verb, "get");
        cJSON_AddBoolToObject(st, "allowed", ok);
        if (!ok && user && !strcmp(user, "nobody"))
            cJSON_AddStringToObject(st, "reason", "no RBAC policy matched");
    } else {
        *status = 404;
    }
    char *out = cJSON_PrintUnformatted(resp);
    cJSON_Delete(resp);
    cJSON_Delete(req);
    return out;
}

static enum MHD_Result fake_api(void *cls, struct MHD_Connection *c, const char *url,
                                const char *method, const char *version, const char *data,
                                size_t *data_size, void **con_cls)
{
    (void)cls;
    (void)version;
    (void)method;
    upload *u = *con_cls;
    if (!u) {
        *con_cls = calloc(1, sizeof(upload));
        return MHD_YES;
    }
    if (*data_size) {
        u->buf = realloc(u->buf, u->len + *data_size + 1);
        memcpy(u->buf + u->len, data, *data_size);
        u->len += *data_size;
        u->buf[u->len] = '\0';
        *data_size = 0;
        return MHD_YES;
    }
    int status;
    char *body = answer(url, u->buf ? u->buf : "", &status);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static void fake_done(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    upload *u = *con_cls;
    if (u) {
        free(u->buf);
        free(u);
    }
    *con_cls = NULL;
}

static void fake_start(void)
{
    memset(&F, 0, sizeof F);
    pthread_mutex_init(&F.mu, NULL);
    F.d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL,
        NULL, fake_api, NULL, MHD_OPTION_NOTIFY_COMPLETED, fake_done, NULL, MHD_OPTION_END);
    cr_assert_not_null(F.d);
    F.port = MHD_get_daemon_info(F.d, MHD_DAEMON_INFO_BIND_PORT)->port;
}

/* --- the server under test ------------------------------------------------------------------- */

static _Atomic int64_t fake_now = 1000000000LL; /* advanced by several threads */
static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}

static char kcpath[64];

static ks_kubeconfig *kc(void)
{
    strcpy(kcpath, "/tmp/ks-dauth-kc-XXXXXX");
    int fd = mkstemp(kcpath);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "current-context: t\n"
            "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
            "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%d\"}}]\n"
            "users: [{name: u, user: {token: scheduler-token}}]\n",
            F.port);
    fclose(f);
    char err[512] = "";
    ks_kubeconfig *k = NULL;
    cr_assert_eq(ks__kubeconfig_load(kcpath, NULL, &k, err, sizeof err), 0, "%s", err);
    unlink(kcpath);
    return k;
}

static ks_delegated_auth *A;
static ks_httpserver *S;
static ks_metrics *M;
static ks_tls_ctx *T;           /* set: the server speaks HTTPS */
static const char *g_client_ca; /* with T: PEM of the client CA */
static const char *g_cert;      /* the client certificate (and .key beside it) curl presents */

/* A server with a registry (so /metrics is served) behind delegated auth; o may change the
 * defaults. */
static void start_with(ks_delegated_auth_opts *o)
{
    fake_start();
    o->authn_kc = o->authn_kc ? o->authn_kc : kc();
    o->authz_kc = o->authz_kc ? o->authz_kc : kc();
    o->clock = fake_clock;
    if (!o->retry_initial_ms)
        o->retry_initial_ms = 1;
    char err[256] = "";
    cr_assert_eq(ks__delegated_auth_create(o, &A, err, sizeof err), 0, "%s", err);
    M = ks__metrics_create();
    ks_httpserver_opts ho = {.bind_address = "127.0.0.1",
                             .metrics = M,
                             .tls = T,
                             .client_ca_pem = g_client_ca,
                             .authorize = ks__delegated_auth_check,
                             .authorize_ctx = A};
    cr_assert_eq(ks__httpserver_start(&ho, &S), 0);
}

static void start(void)
{
    ks_delegated_auth_opts o = {0};
    start_with(&o);
}

static void stop(void)
{
    ks__httpserver_stop(S);
    ks__delegated_auth_free(A);
    ks__metrics_destroy(M);
    if (F.d)
        MHD_stop_daemon(F.d);
    F.d = NULL;
    S = NULL;
    A = NULL;
    M = NULL;
    ks__tls_ctx_free(T);
    T = NULL;
    g_client_ca = g_cert = NULL;
}

typedef struct got {
    long status;
    char body[2048];
    char ctype[128];
} got;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    got *g = ud;
    size_t have = strlen(g->body), k = size * n;
    if (have + k >= sizeof g->body)
        k = sizeof g->body - 1 - have;
    memcpy(g->body + have, p, k);
    g->body[have + k] = '\0';
    return size * n;
}

static atomic_int g_may_fail; /* 1: a failed transfer is status 0, not a failed test */

/* GET path with the request header `header` (NULL: none). */
static got get_h(const char *header, const char *path)
{
    got g = {0};
    char url[128];
    snprintf(url, sizeof url, "%s://127.0.0.1:%d%s", T ? "https" : "http", ks__httpserver_port(S),
             path);
    CURL *c = curl_easy_init();
    if (T) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    char key[512];
    if (g_cert) {
        snprintf(key, sizeof key, "%.*s.key", (int)(strlen(g_cert) - 4), g_cert);
        curl_easy_setopt(c, CURLOPT_SSLCERT, g_cert);
        curl_easy_setopt(c, CURLOPT_SSLKEY, key);
    }
    struct curl_slist *h = header ? curl_slist_append(NULL, header) : NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &g);
    CURLcode rc = curl_easy_perform(c);
    if (!g_may_fail)
        cr_assert_eq(rc, CURLE_OK);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &g.status);
    char *ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    snprintf(g.ctype, sizeof g.ctype, "%s", ct ? ct : "");
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return g;
}

/* GET path with "Authorization: Bearer token" (token NULL: no header). */
static got get_as(const char *token, const char *path)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", token ? token : "");
    return get_h(token ? hdr : NULL, path);
}

static void init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

TestSuite(delegated_auth, .init = init, .fini = stop);

#define FORBIDDEN(user, path, reason)                                                              \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","           \
    "\"message\":\"forbidden: User \\\"" user "\\\" cannot get path \\\"" path "\\\"" reason       \
    "\",\"reason\":\"Forbidden\",\"details\":{},\"code\":403}\n"

static const char k_unauthorized[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
    "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

Test(delegated_auth, anonymous_is_forbidden_on_metrics_and_allowed_on_health_paths)
{
    start();
    for (const char *const *p = (const char *const[]){"/healthz", "/readyz", "/livez", NULL}; *p;
         p++) {
        got g = get_as(NULL, *p);
        cr_expect_eq(g.status, 200, "%s: %ld %s", *p, g.status, g.body);
        cr_expect_str_eq(g.body, "ok");
    }
    cr_expect_eq(atomic_load(&F.access_reviews), 0, "health paths need no review");
    got g = get_as(NULL, "/metrics");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
    cr_expect_str_eq(g.ctype, "application/json");
    cr_expect_eq(atomic_load(&F.token_reviews), 0, "no token, no TokenReview");
    cr_expect_eq(atomic_load(&F.access_reviews), 1);
    cr_expect(strstr(F.last_sar, "\"user\":\"system:anonymous\"") &&
                  strstr(F.last_sar, "\"groups\":[\"system:unauthenticated\"]") &&
                  strstr(F.last_sar, "\"nonResourceAttributes\":{\"path\":\"/metrics\","
                                     "\"verb\":\"get\"}"),
              "%s", F.last_sar);
    /* not a bearer token, or an empty one: anonymous too, never a TokenReview */
    g = get_h("Authorization: Basic YWRtaW46eA==", "/metrics");
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
    g = get_h("Authorization: Bearer ", "/metrics");
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
    cr_expect_eq(atomic_load(&F.token_reviews), 0);
    /* a path nobody serves: forbidden before it is found missing, as upstream's chain */
    g = get_as(NULL, "/nothing");
    cr_expect_eq(g.status, 403);
}

Test(delegated_auth, a_reader_gets_metrics_a_token_without_rights_403_a_bad_token_401)
{
    start();
    got g = get_as("tok-reader", "/metrics");
    cr_expect_eq(g.status, 200, "%ld %s", g.status, g.body);
    cr_expect(strstr(g.ctype, "text/plain; version=0.0.4"), "%s", g.ctype);
    cr_expect(strstr(F.last_sar, "\"user\":\"reader\"") &&
                  strstr(F.last_sar, "\"groups\":[\"readers\",\"system:authenticated\"]") &&
                  strstr(F.last_sar, "\"uid\":\"uid-1\""),
              "%s", F.last_sar);
    /* its rights stop at /metrics */
    g = get_as("tok-reader", "/statusz");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, FORBIDDEN("reader", "/statusz", ""));

    g = get_as("tok-nobody", "/metrics");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, FORBIDDEN("nobody", "/metrics", ": no RBAC policy matched"));

    g = get_as("tok-unknown", "/metrics");
    cr_expect_eq(g.status, 401);
    cr_expect_str_eq(g.body, k_unauthorized);
    /* a bad token fails authentication on every path, health too (union.FailOnError) */
    g = get_as("tok-unknown", "/healthz");
    cr_expect_eq(g.status, 401);
    g = get_as("tok-expired", "/metrics");
    cr_expect_eq(g.status, 401);
}

Test(delegated_auth, system_masters_is_allowed_without_a_review)
{
    start();
    got g = get_as("tok-admin", "/metrics");
    cr_expect_eq(g.status, 200, "%ld %s", g.status, g.body);
    g = get_as("tok-admin", "/flagz"); /* allowed, then not served (no zpages): 404 */
    cr_expect_eq(g.status, 404);
    cr_expect_eq(atomic_load(&F.access_reviews), 0);
    cr_expect_eq(atomic_load(&F.token_reviews), 1, "the second request used the cache");
}

Test(delegated_auth, answers_are_cached_for_their_ttl)
{
    ks_delegated_auth_opts o = {.token_ttl_ns = 10000000000LL,
                                .authorized_ttl_ns = 5000000000LL,
                                .unauthorized_ttl_ns = 2000000000LL};
    start_with(&o);
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200);
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200);
    cr_expect_eq(atomic_load(&F.token_reviews), 1);
    cr_expect_eq(atomic_load(&F.access_reviews), 1);
    cr_expect_eq(ks__delegated_auth_calls(A, 0), 1);
    cr_expect_eq(get_as("tok-nobody", "/metrics").status, 403);
    cr_expect_eq(atomic_load(&F.access_reviews), 2);
    cr_expect_eq(get_as("tok-unknown", "/metrics").status, 401);
    cr_expect_eq(get_as("tok-unknown", "/metrics").status, 401);
    cr_expect_eq(atomic_load(&F.token_reviews), 3, "not authenticated is cached too");

    fake_now += 2000000000LL; /* the denial expired, the allowance not */
    cr_expect_eq(get_as("tok-nobody", "/metrics").status, 403);
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200);
    cr_expect_eq(atomic_load(&F.access_reviews), 3);

    fake_now += 3000000000LL; /* 5 s: the allowance expired */
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200);
    cr_expect_eq(atomic_load(&F.access_reviews), 4);
    cr_expect_eq(atomic_load(&F.token_reviews), 3, "tokens of 10 s still cached");

    fake_now += 5000000000LL; /* 10 s: the tokens expired */
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200);
    cr_expect_eq(atomic_load(&F.token_reviews), 4);
    cr_expect_eq(ks__delegated_auth_calls(A, 1), 5);
}

Test(delegated_auth, failed_reviews_are_500_or_401_and_not_cached)
{
    start();
    atomic_store(&F.fail_sar, 1);
    got g = get_as("tok-reader", "/metrics");
    cr_expect_eq(g.status, 500);
    cr_expect(!strncmp(g.body, "Internal Server Error: \"/metrics\": ", 35), "%s", g.body);
    cr_expect_eq(atomic_load(&F.access_reviews), 5, "retried 5 times as upstream's backoff");
    atomic_store(&F.fail_sar, 0);
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200, "the failure was not cached");

    atomic_store(&F.fail_tr, 1);
    int before = atomic_load(&F.token_reviews);
    cr_expect_eq(get_as("tok-nobody", "/metrics").status, 401);
    cr_expect_eq(atomic_load(&F.token_reviews), before + 5);
    atomic_store(&F.fail_tr, 0);
    cr_expect_eq(get_as("tok-nobody", "/metrics").status, 403);
    /* a token error ("token expired") is not cached either */
    before = atomic_load(&F.token_reviews);
    get_as("tok-expired", "/metrics");
    get_as("tok-expired", "/metrics");
    cr_expect_eq(atomic_load(&F.token_reviews), before + 2);
}

Test(delegated_auth, always_allowed_paths_can_be_changed_and_take_a_prefix)
{
    static const char *const paths[] = {"/healthz", "/metr*"};
    ks_delegated_auth_opts o = {.always_allow_paths = paths, .nalways_allow_paths = 2};
    start_with(&o);
    cr_expect_eq(get_as(NULL, "/metrics").status, 200);
    cr_expect_eq(get_as(NULL, "/healthz").status, 200);
    cr_expect_eq(get_as(NULL, "/readyz").status, 403, "no longer in the list");
    stop();

    static const char *const bad[] = {"/a*b"};
    ks_delegated_auth_opts b = {.always_allow_paths = bad, .nalways_allow_paths = 1};
    char err[256] = "";
    ks_delegated_auth *x = NULL;
    cr_expect_eq(ks__delegated_auth_create(&b, &x, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "only trailing * allowed in \"/a*b\""), "%s", err);
}

/* Without an authentication client a bearer token is not looked at (anonymous), and without an
 * authorization client nothing outside the always-allowed paths is allowed but system:masters. */
Test(delegated_auth, without_clients_everyone_is_anonymous_and_forbidden)
{
    ks_delegated_auth_opts o = {0};
    char err[256] = "";
    cr_assert_eq(ks__delegated_auth_create(&o, &A, err, sizeof err), 0, "%s", err);
    M = ks__metrics_create();
    ks_httpserver_opts ho = {.bind_address = "127.0.0.1",
                             .metrics = M,
                             .authorize = ks__delegated_auth_check,
                             .authorize_ctx = A};
    cr_assert_eq(ks__httpserver_start(&ho, &S), 0);
    got g = get_as("tok-admin", "/metrics");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
    cr_expect_eq(get_as(NULL, "/healthz").status, 200);
}

/* A review that takes 2 s holds its own connection; /healthz keeps answering at once. */
static void *slow_scrape(void *arg)
{
    *(long *)arg = get_as("tok-reader", "/metrics").status;
    return NULL;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(delegated_auth, a_slow_review_does_not_delay_healthz, .timeout = 30)
{
    start();
    atomic_store(&F.sar_delay_ms, 2000);
    long st[3] = {0};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, slow_scrape, &st[i]);
    while (atomic_load(&F.access_reviews) < 1) /* a review is in flight */
        usleep(1000);
    double worst = 0;
    for (int i = 0; i < 10; i++) {
        double t0 = mono();
        got g = get_as(NULL, "/healthz");
        cr_assert_eq(g.status, 200);
        if (mono() - t0 > worst)
            worst = mono() - t0;
    }
    cr_expect_lt(worst, 0.100, "/healthz took %.1f ms during a 2 s review", worst * 1e3);
    cr_expect_gt(atomic_load(&F.access_reviews) + 0, 0);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(st[i], 200);
    }
}

/* Stopping: a review in flight is cancelled, so the server stops at once. Its request ends
 * without an answer (the daemon closes the connections it stops) or with the 500 of the failed
 * review, whichever comes first. */
Test(delegated_auth, cancel_ends_a_review_in_flight_so_stop_is_prompt, .timeout = 30)
{
    start();
    atomic_store(&g_may_fail, 1);
    atomic_store(&F.sar_delay_ms, 3000);
    long st = -1;
    pthread_t t;
    pthread_create(&t, NULL, slow_scrape, &st);
    while (atomic_load(&F.access_reviews) < 1)
        usleep(1000);
    usleep(20 * 1000); /* the request is on the wire */
    double t0 = mono();
    ks__delegated_auth_cancel(A);
    ks__httpserver_stop(S);
    S = NULL;
    double took = mono() - t0;
    pthread_join(t, NULL);
    cr_expect_lt(took, 1.0, "stop took %.2f s with a 3 s review in flight", took);
    cr_expect(st == 0 || st == 500, "the cancelled review's request: %ld", st);
    atomic_store(&g_may_fail, 0);
    cr_expect_eq(atomic_load(&F.access_reviews), 1, "no retry after the cancel");
}

/* Many clients at once, with the caches expiring under them: every answer is the right one (the
 * pool hands each thread its own API client; the caches lock). */
static atomic_int g_wrong;

static void *mixed_client(void *arg)
{
    long id = (long)arg;
    static const struct {
        const char *token, *path;
        long status;
    } k[] = {{"tok-reader", "/metrics", 200},  {"tok-nobody", "/metrics", 403},
             {"tok-admin", "/metrics", 200},   {NULL, "/healthz", 200},
             {"tok-unknown", "/metrics", 401}, {"tok-reader", "/statusz", 403}};
    for (int i = 0; i < 30; i++) {
        size_t c = (size_t)(id + i) % (sizeof k / sizeof k[0]);
        if (get_as(k[c].token, k[c].path).status != k[c].status)
            atomic_fetch_add(&g_wrong, 1);
        if (i % 10 == 9)
            fake_now += 4000000000LL; /* entries expire while others read them */
    }
    return NULL;
}

Test(delegated_auth, concurrent_requests_get_their_own_answers, .timeout = 60)
{
    start();
    atomic_store(&g_wrong, 0);
    pthread_t t[12];
    for (long i = 0; i < 12; i++)
        pthread_create(&t[i], NULL, mixed_client, (void *)i);
    for (int i = 0; i < 12; i++)
        pthread_join(t[i], NULL);
    cr_expect_eq(atomic_load(&g_wrong), 0, "%d of 360 answers were wrong", atomic_load(&g_wrong));
    cr_expect_lt(atomic_load(&F.access_reviews), 360, "the cache answered some");
}

/* --client-ca-file: a client certificate is the user (CN) and its groups (O), no TokenReview; one
 * the CA did not sign fails authentication (401) unless a good token stands in; without a client
 * CA a certificate is not asked for, so the request is anonymous. */
static char *read_text(const char *path)
{
    char *pem = NULL, err[256] = "";
    cr_assert_eq(ks__tls_read_client_ca(path, &pem, err, sizeof err), 0, "%s", err);
    return pem;
}

static void start_tls_with_ca(const char *ca_file)
{
    char err[256] = "";
    cr_assert_eq(ks__tls_ctx_create(NULL, NULL, &T, err, sizeof err), 0, "%s", err);
    static char *pem;
    free(pem);
    pem = ca_file ? read_text(ca_file) : NULL;
    g_client_ca = pem;
    start();
}

Test(delegated_auth, a_client_certificate_is_the_user_and_its_groups)
{
    start_tls_with_ca(PKI "ca.crt");
    g_cert = PKI "client.crt"; /* O=system:kube-scheduler, CN=system:kube-scheduler */
    got g = get_as(NULL, "/metrics");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, FORBIDDEN("system:kube-scheduler", "/metrics", ""));
    cr_expect(
        strstr(F.last_sar, "\"user\":\"system:kube-scheduler\"") &&
            strstr(F.last_sar, "\"groups\":[\"system:kube-scheduler\",\"system:authenticated\"]"),
        "%s", F.last_sar);
    cr_expect_eq(atomic_load(&F.token_reviews), 0, "a certificate needs no TokenReview");
    cr_expect_eq(get_as(NULL, "/healthz").status, 200);
}

Test(delegated_auth, a_certificate_the_ca_did_not_sign_is_401_unless_a_token_stands_in)
{
    start_tls_with_ca(PKI "other-ca.crt");
    g_cert = PKI "client.crt";
    got g = get_as(NULL, "/metrics");
    cr_expect_eq(g.status, 401);
    cr_expect_str_eq(g.body, k_unauthorized);
    cr_expect_eq(get_as(NULL, "/healthz").status, 401, "as upstream: authentication comes first");
    cr_expect_eq(get_as("tok-reader", "/metrics").status, 200, "the token's user");
    g_cert = NULL;
    cr_expect_eq(get_as(NULL, "/metrics").status, 403, "no certificate: anonymous");
}

Test(delegated_auth, without_a_client_ca_a_certificate_is_not_looked_at)
{
    start_tls_with_ca(NULL);
    g_cert = PKI "client.crt";
    got g = get_as(NULL, "/metrics");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
}

Test(delegated_auth, a_client_ca_file_that_is_not_pem_is_refused)
{
    char *pem = NULL, err[512] = "";
    cr_expect_eq(ks__tls_read_client_ca(PKI "client.key", &pem, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "--client-ca-file") && strstr(err, "no PEM certificate"), "%s", err);
    cr_expect_eq(ks__tls_read_client_ca("/nonexistent/ca.crt", &pem, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "/nonexistent/ca.crt"), "%s", err);
    cr_expect_null(pem);
}

/* Upstream's negotiated serializer indents JSON for curl, Wget and browsers, or ?pretty=true;
 * ?pretty=false keeps it compact. The text is kube-scheduler v1.37.2's for curl. */
Test(delegated_auth, json_answers_are_indented_for_curl_as_upstream)
{
    start();
    got g = get_h("User-Agent: curl/7.88.1", "/metrics");
    cr_expect_eq(g.status, 403);
    cr_expect_str_eq(g.body, "{\n"
                             "  \"kind\": \"Status\",\n"
                             "  \"apiVersion\": \"v1\",\n"
                             "  \"metadata\": {},\n"
                             "  \"status\": \"Failure\",\n"
                             "  \"message\": \"forbidden: User \\\"system:anonymous\\\" cannot get "
                             "path \\\"/metrics\\\"\",\n"
                             "  \"reason\": \"Forbidden\",\n"
                             "  \"details\": {},\n"
                             "  \"code\": 403\n"
                             "}");
    g = get_h("User-Agent: curl/7.88.1", "/metrics?pretty=false");
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
    g = get_h("User-Agent: prometheus/2.53", "/metrics?pretty=true");
    cr_expect(!strncmp(g.body, "{\n  \"kind\": \"Status\",\n", 22), "%s", g.body);
    g = get_h("User-Agent: prometheus/2.53", "/metrics");
    cr_expect_str_eq(g.body, FORBIDDEN("system:anonymous", "/metrics", ""));
}
