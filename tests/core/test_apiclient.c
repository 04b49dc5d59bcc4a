/*
 * The API client (core/apiclient*.c) against a small HTTP/1.1 server that each test starts on
 * 127.0.0.1 in a thread: headers and connection reuse, Status messages of failed requests,
 * Retry-After, paginated lists, chunked watch streams (events split across chunks, a malformed
 * line, bookmarks, ERROR 410, HTTP 410), stopping a watch from another thread, connection
 * refused, and the token bucket under an injected clock. TLS tests run `openssl s_server` with
 * the test PKI of tests/fixtures/kubeconfig/pki when the openssl binary is there.
 */
#define _GNU_SOURCE /* strcasestr */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "live/apiclient.h"
#include "live/kubeconfig.h"
#include "kubesched/plugin.h"

#define PKI KS_SOURCE_DIR "/tests/fixtures/kubeconfig/pki/"

/* --- a canned HTTP/1.1 server ---------------------------------------------------------------- */

typedef struct req {
    char method[16];
    char target[2048];
    char headers[4096];
    char body[4096];
} req;

struct srv;
/* Writes the whole response to fd. Returns 1 to close the connection, 0 to keep it. */
typedef int (*handler_fn)(struct srv *s, int fd, const req *r, int n);

typedef struct srv {
    int lfd, port, wake[2];
    pthread_t th;
    handler_fn handler;
    atomic_int nconn, nreq;
    pthread_t conns[16];
    req reqs[32];
} srv;

static srv S;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, int status, const char *reason, const char *extra, const char *body)
{
    char head[1024];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "%s\r\n",
                     status, reason, strlen(body), extra ? extra : "");
    write_all(fd, head, (size_t)n);
    write_all(fd, body, strlen(body));
}

static void chunk(int fd, const char *text)
{
    char head[32];
    int n = snprintf(head, sizeof(head), "%zx\r\n", strlen(text));
    write_all(fd, head, (size_t)n);
    write_all(fd, text, strlen(text));
    write_all(fd, "\r\n", 2);
}

static void stream_start(int fd)
{
    const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n";
    write_all(fd, h, strlen(h));
}

/* Waits until the peer closes fd or the server is told to stop. */
static void wait_for_close(int fd)
{
    struct pollfd p[2] = {{fd, POLLIN, 0}, {S.wake[0], POLLIN, 0}};
    char b[256];
    for (;;) {
        if (poll(p, 2, 10000) <= 0 || p[1].revents)
            return;
        if (p[0].revents && recv(fd, b, sizeof(b), 0) <= 0)
            return;
    }
}

/* Reads one request; 0 on EOF/stop. A TLS ClientHello gets a plain-text 400 and ends. */
static int read_req(int fd, req *r)
{
    char buf[16384];
    size_t n = 0;
    char *end = NULL;
    struct pollfd p[2] = {{fd, POLLIN, 0}, {S.wake[0], POLLIN, 0}};
    while (!end) {
        if (poll(p, 2, 10000) <= 0 || p[1].revents)
            return 0;
        ssize_t got = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
        if (got <= 0)
            return 0;
        if (n == 0 && (unsigned char)buf[0] == 0x16) {
            const char *no = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
            write_all(fd, no, strlen(no));
            return 0;
        }
        n += (size_t)got;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    memset(r, 0, sizeof(*r));
    sscanf(buf, "%15s %2047s", r->method, r->target);
    char *h = strstr(buf, "\r\n") + 2;
    snprintf(r->headers, sizeof(r->headers), "%.*s", (int)(end + 2 - h), h);
    size_t clen = 0;
    char *cl = strcasestr(r->headers, "Content-Length:");
    if (cl)
        clen = strtoul(cl + 15, NULL, 10);
    size_t have = n - (size_t)(end + 4 - buf);
    memcpy(r->body, end + 4, have < sizeof(r->body) ? have : sizeof(r->body) - 1);
    while (have < clen && have < sizeof(r->body) - 1) {
        ssize_t got = recv(fd, r->body + have, sizeof(r->body) - 1 - have, 0);
        if (got <= 0)
            return 0;
        have += (size_t)got;
    }
    return 1;
}

static void *serve_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    req r;
    while (read_req(fd, &r)) {
        int i = atomic_fetch_add(&S.nreq, 1);
        if (i < 32)
            S.reqs[i] = r;
        if (S.handler(&S, fd, &r, i))
            break;
    }
    close(fd);
    return NULL;
}

/* Accepts connections, one thread each (clients in a test may hold several keep-alive). */
static void *serve(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[2] = {{S.lfd, POLLIN, 0}, {S.wake[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 || p[1].revents)
            return NULL;
        int fd = accept(S.lfd, NULL, NULL);
        if (fd < 0)
            continue;
        int one = 1; /* no Nagle delay between a response's head and body */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        int i = atomic_fetch_add(&S.nconn, 1);
        if (i >= 16 || pthread_create(&S.conns[i], NULL, serve_conn, (void *)(intptr_t)fd) != 0)
            close(fd);
    }
}

static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(fd, 16), 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

static void srv_start(handler_fn h)
{
    memset(&S, 0, sizeof(S));
    S.handler = h;
    S.lfd = listen_any(&S.port);
    cr_assert_eq(pipe(S.wake), 0);
    cr_assert_eq(pthread_create(&S.th, NULL, serve, NULL), 0);
}

static void srv_stop(void)
{
    if (!S.handler)
        return;
    cr_assert_eq(write(S.wake[1], "x", 1), 1);
    pthread_join(S.th, NULL);
    for (int i = 0; i < atomic_load(&S.nconn) && i < 16; i++)
        pthread_join(S.conns[i], NULL);
    close(S.lfd);
    close(S.wake[0]);
    close(S.wake[1]);
    S.handler = NULL;
}

/* --- client helpers -------------------------------------------------------------------------- */

static char kcpath[256];
static ks_kubeconfig *KC;

static int64_t fake_now, slept;
static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}
static void fake_sleep(int64_t ns, void *ud)
{
    (void)ud;
    fake_now += ns;
    slept += ns;
}

/* Writes a kubeconfig for `server` with `user` fields and loads it. */
static ks_kubeconfig *kc_for(const char *server, const char *cluster_extra, const char *user)
{
    snprintf(kcpath, sizeof(kcpath), "/tmp/ks-apiclient-kc-XXXXXX");
    int fd = mkstemp(kcpath);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "current-context: t\n"
            "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
            "clusters: [{name: c, cluster: {server: \"%s\"%s%s}}]\n"
            "users: [{name: u, user: {%s}}]\n",
            server, cluster_extra ? ", " : "", cluster_extra ? cluster_extra : "", user);
    fclose(f);
    char err[1024] = "";
    ks_kubeconfig *kc = NULL;
    cr_assert_eq(ks__kubeconfig_load(kcpath, NULL, &kc, err, sizeof(err)), 0, "%s", err);
    return kc;
}

static ks_api *api_for(const char *cluster_extra, const char *user, const ks_api_opts *o)
{
    char url[64], err[1024] = "";
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", S.port);
    KC = kc_for(url, cluster_extra, user ? user : "token: test-token");
    ks_api *api = NULL;
    ks_api_opts d = {.sleep = fake_sleep, .clock = fake_clock};
    cr_assert_eq(ks__api_create(KC, o ? o : &d, &api, err, sizeof(err)), 0, "%s", err);
    return api;
}

static void teardown(void)
{
    srv_stop();
    if (KC)
        ks__kubeconfig_free(KC);
    KC = NULL;
    if (kcpath[0])
        unlink(kcpath);
}

static int has_header(const req *r, const char *line)
{
    return strcasestr(r->headers, line) != NULL;
}

/* --- requests -------------------------------------------------------------------------------- */

static int h_ok(srv *s, int fd, const req *r, int n)
{
    (void)s;
    (void)n;
    char body[256];
    snprintf(body, sizeof(body), "{\"method\":\"%s\"}", r->method);
    respond(fd, r->method[0] == 'P' && r->method[1] == 'O' ? 201 : 200, "OK", NULL, body);
    return 0;
}

Test(apiclient, requests_send_headers_and_reuse_one_connection, .fini = teardown)
{
    srv_start(h_ok);
    ks_api *api = api_for(NULL, NULL, NULL);
    ks_api_response resp = {0};
    cr_assert_eq(ks__api_request(api, "GET", "/api/v1/nodes/n1", NULL, NULL, &resp), 0, "%s",
                 ks__api_error(api));
    cr_expect_eq(resp.status, 200);
    cr_expect_str_eq(resp.body, "{\"method\":\"GET\"}");
    ks__api_response_free(&resp);
    const char *binding = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\"}";
    cr_assert_eq(
        ks__api_request(api, "POST", "/api/v1/namespaces/d/pods/p/binding", binding, NULL, &resp),
        0, "%s", ks__api_error(api));
    cr_expect_eq(resp.status, 201);
    ks__api_response_free(&resp);
    cr_assert_eq(ks__api_request(api, "PATCH", "/api/v1/namespaces/d/pods/p/status", "{}",
                                 "application/strategic-merge-patch+json", NULL),
                 0);
    cr_assert_eq(ks__api_request(api, "DELETE", "/api/v1/namespaces/d/pods/p", NULL, NULL, NULL),
                 0);
    cr_assert_eq(ks__api_request(api, "GET", "/api/v1/nodes", NULL, NULL, NULL), 0);

    cr_expect_eq(atomic_load(&S.nreq), 5);
    cr_expect_eq(atomic_load(&S.nconn), 1, "one keep-alive connection for every request");
    const req *g = &S.reqs[0];
    cr_expect_str_eq(g->method, "GET");
    cr_expect_str_eq(g->target, "/api/v1/nodes/n1");
    cr_expect(has_header(g, "User-Agent: kubesched/0.1\r\n"), "%s", g->headers);
    cr_expect(has_header(g, "Accept: application/json\r\n"), "%s", g->headers);
    cr_expect(has_header(g, "Authorization: Bearer test-token\r\n"), "%s", g->headers);
    const req *p = &S.reqs[1];
    cr_expect_str_eq(p->method, "POST");
    cr_expect_str_eq(p->body, binding);
    cr_expect(has_header(p, "Content-Type: application/json\r\n"), "%s", p->headers);
    cr_expect(!has_header(p, "Expect:"), "no 100-continue");
    cr_expect_str_eq(S.reqs[2].method, "PATCH");
    cr_expect(has_header(&S.reqs[2], "Content-Type: application/strategic-merge-patch+json\r\n"));
    cr_expect_str_eq(S.reqs[2].body, "{}");
    cr_expect_str_eq(S.reqs[3].method, "DELETE");
    cr_expect_str_eq(S.reqs[4].method, "GET", "a GET after a DELETE is a GET again");
    ks__api_destroy(api);
}

static int h_status(srv *s, int fd, const req *r, int n)
{
    (void)s;
    (void)n;
    if (strstr(r->target, "/nodes"))
        respond(fd, 403, "Forbidden", NULL,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                "\"message\":\"nodes is forbidden: User \\\"x\\\" cannot list resource "
                "\\\"nodes\\\" in API group \\\"\\\" at the cluster scope\",\"reason\":"
                "\"Forbidden\",\"details\":{\"kind\":\"nodes\"},\"code\":403}");
    else if (strstr(r->target, "/missing"))
        respond(fd, 404, "Not Found", NULL,
                "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods \\\"missing\\\" "
                "not found\",\"reason\":\"NotFound\",\"code\":404}");
    else if (strstr(r->target, "/binding"))
        respond(fd, 409, "Conflict", NULL,
                "{\"kind\":\"Status\",\"message\":\"pod p is already assigned to node "
                "\\\"n1\\\"\",\"reason\":\"Conflict\",\"code\":409}");
    else if (strstr(r->target, "/whoami"))
        respond(fd, 401, "Unauthorized", NULL,
                "{\"kind\":\"Status\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
                "\"code\":401}");
    else
        respond(fd, 502, "Bad Gateway", NULL, "<html>\n<b>upstream\tdown</b></html>");
    return 0;
}

Test(apiclient, http_errors_name_the_request_status_and_status_message, .fini = teardown)
{
    srv_start(h_status);
    ks_api *api = api_for(NULL, NULL, NULL);
    ks_api_response resp = {0};
    cr_expect_eq(ks__api_request(api, "GET", "/api/v1/nodes?limit=500", NULL, NULL, &resp), KS_EIO);
    cr_expect_eq(resp.status, 403);
    cr_expect(strstr(resp.body, "\"code\":403") != NULL);
    ks__api_response_free(&resp);
    cr_expect_str_eq(ks__api_error(api),
                     "GET /api/v1/nodes: 403 Forbidden: nodes is forbidden: User \"x\" cannot "
                     "list resource \"nodes\" in API group \"\" at the cluster scope; grant it "
                     "with RBAC (ClusterRole system:kube-scheduler)");
    cr_expect_eq(ks__api_request(api, "GET", "/api/v1/namespaces/d/pods/missing", NULL, NULL, NULL),
                 KS_ENOTFOUND);
    cr_expect_str_eq(ks__api_error(api), "GET /api/v1/namespaces/d/pods/missing: 404 Not Found: "
                                         "pods \"missing\" not found");
    cr_expect_eq(
        ks__api_request(api, "POST", "/api/v1/namespaces/d/pods/p/binding", "{}", NULL, NULL),
        KS_EEXIST);
    cr_expect_str_eq(ks__api_error(api), "POST /api/v1/namespaces/d/pods/p/binding: 409 Conflict: "
                                         "pod p is already assigned to node \"n1\"");
    cr_expect_eq(ks__api_request(api, "GET", "/whoami", NULL, NULL, NULL), KS_EIO);
    char want[512];
    snprintf(want, sizeof(want),
             "GET /whoami: 401 Unauthorized: Unauthorized; the API server rejected the bearer "
             "token from token of user \"u\" in kubeconfig %s",
             kcpath);
    cr_expect_str_eq(ks__api_error(api), want);
    cr_expect_eq(ks__api_request(api, "GET", "/other", NULL, NULL, NULL), KS_EIO);
    cr_expect_str_eq(ks__api_error(api),
                     "GET /other: 502 Bad Gateway: <html> <b>upstream down</b></html>");
    ks__api_destroy(api);
}

static int h_retry(srv *s, int fd, const req *r, int n)
{
    (void)s;
    (void)r;
    if (n == 0)
        respond(fd, 429, "Too Many Requests", "Retry-After: 3\r\n",
                "{\"kind\":\"Status\",\"message\":\"too many requests\",\"code\":429}");
    else if (n == 1)
        respond(fd, 503, "Service Unavailable", NULL, "{\"kind\":\"Status\",\"code\":503}");
    else
        respond(fd, 200, "OK", NULL, "{}");
    return 0;
}

Test(apiclient, retry_after_is_honoured_and_5xx_without_it_is_not, .fini = teardown)
{
    srv_start(h_retry);
    ks_api *api = api_for(NULL, NULL, NULL);
    slept = 0;
    cr_expect_eq(ks__api_request(api, "GET", "/x", NULL, NULL, NULL), KS_EIO,
                 "the 503 had no Retry-After");
    cr_expect_eq(atomic_load(&S.nreq), 2);
    cr_expect_geq(slept, 3000000000LL, "slept the 3s the server asked for");
    cr_expect_str_eq(ks__api_error(api), "GET /x: 503 Service Unavailable: {\"kind\":\"Status\","
                                         "\"code\":503}");
    cr_expect_eq(ks__api_request(api, "GET", "/x", NULL, NULL, NULL), 0);
    ks__api_destroy(api);
}

/* --- rate limiting --------------------------------------------------------------------------- */

Test(apiclient, token_bucket_starts_full_refills_at_qps_and_caps_at_burst)
{
    ks_ratelimit *rl;
    fake_now = 1000;
    cr_assert_eq(ks__ratelimit_create(2.0, 3, fake_clock, NULL, &rl), 0);
    cr_expect_eq(ks__ratelimit_reserve(rl), 0);
    cr_expect_eq(ks__ratelimit_reserve(rl), 0);
    cr_expect_eq(ks__ratelimit_reserve(rl), 0, "burst of 3");
    cr_expect_eq(ks__ratelimit_reserve(rl), 500000000, "then one every 1/qps");
    cr_expect_eq(ks__ratelimit_reserve(rl), 1000000000, "queued behind the previous one");
    fake_now += 1000000000; /* both promised tokens have arrived; the bucket is empty */
    cr_expect_eq(ks__ratelimit_reserve(rl), 500000000);
    fake_now += 100LL * 1000000000; /* a long idle time fills only up to burst */
    for (int i = 0; i < 3; i++)
        cr_expect_eq(ks__ratelimit_reserve(rl), 0);
    cr_expect_eq(ks__ratelimit_reserve(rl), 500000000);
    ks__ratelimit_destroy(rl);
    cr_expect_eq(ks__ratelimit_create(0, 1, NULL, NULL, &rl), KS_EINVAL);
    cr_expect_eq(ks__ratelimit_create(1, 0, NULL, NULL, &rl), KS_EINVAL);
    ks__ratelimit_destroy(NULL);
}

Test(apiclient, every_request_goes_through_the_limiter, .fini = teardown)
{
    srv_start(h_ok);
    fake_now = 0;
    slept = 0;
    ks_api_opts o = {.qps = 4, .burst = 2, .clock = fake_clock, .sleep = fake_sleep};
    ks_api *api = api_for(NULL, NULL, &o);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(ks__api_request(api, "GET", "/x", NULL, NULL, NULL), 0);
    /* 2 free, then 4 at 250ms each */
    cr_expect_eq(slept, 4 * 250000000LL, "slept %lld ns", (long long)slept);
    ks__api_destroy(api);

    /* A limiter shared by two clients holds both to one budget. */
    ks_ratelimit *rl;
    fake_now = 0;
    slept = 0;
    cr_assert_eq(ks__ratelimit_create(10, 1, fake_clock, NULL, &rl), 0);
    ks_api_opts shared = {.limiter = rl, .sleep = fake_sleep};
    char err[256];
    ks_api *a, *b;
    cr_assert_eq(ks__api_create(KC, &shared, &a, err, sizeof(err)), 0);
    cr_assert_eq(ks__api_create(KC, &shared, &b, err, sizeof(err)), 0);
    cr_assert_eq(ks__api_request(a, "GET", "/x", NULL, NULL, NULL), 0);
    cr_assert_eq(ks__api_request(b, "GET", "/x", NULL, NULL, NULL), 0);
    cr_assert_eq(ks__api_request(a, "GET", "/x", NULL, NULL, NULL), 0);
    cr_expect_eq(slept, 2 * 100000000LL);
    ks__api_destroy(a);
    ks__api_destroy(b);
    ks__ratelimit_destroy(rl);

    /* qps < 0: no limit at all. */
    slept = 0;
    ks_api_opts unlimited = {.qps = -1, .sleep = fake_sleep};
    cr_assert_eq(ks__api_create(KC, &unlimited, &a, err, sizeof(err)), 0);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(ks__api_request(a, "GET", "/x", NULL, NULL, NULL), 0);
    cr_expect_eq(slept, 0);
    ks__api_destroy(a);
}

/* --- lists ----------------------------------------------------------------------------------- */

static int h_pages(srv *s, int fd, const req *r, int n)
{
    (void)s;
    (void)n;
    if (strstr(r->target, "continue=tok2"))
        respond(fd, 200, "OK", NULL,
                "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":"
                "[{\"metadata\":{\"name\":\"d\"}}]}");
    else if (strstr(r->target, "continue=tok1"))
        respond(fd, 200, "OK", NULL,
                "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\",\"continue\":"
                "\"tok2\"},\"items\":[{\"metadata\":{\"name\":\"c\"}}]}");
    else if (strstr(r->target, "continue=old"))
        respond(fd, 410, "Gone", NULL,
                "{\"kind\":\"Status\",\"message\":\"The provided continue parameter is too old "
                "to display a consistent list result.\",\"reason\":\"Expired\",\"code\":410}");
    else if (strstr(r->target, "expire"))
        respond(fd, 200, "OK", NULL,
                "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"old\"},\"items\":"
                "[{\"metadata\":{\"name\":\"x\"}}]}");
    else if (strstr(r->target, "/empty"))
        respond(fd, 200, "OK", NULL, "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":null}");
    else if (strstr(r->target, "/garbage"))
        respond(fd, 200, "OK", NULL, "{\"items\": [1, 2,");
    else
        respond(fd, 200, "OK", NULL,
                "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\",\"continue\":"
                "\"tok1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":"
                "\"b\"}}]}");
    return 0;
}

typedef struct collected {
    char names[16][32];
    int n, stop_after;
} collected;

static int collect(cJSON *item, void *ud)
{
    collected *c = ud;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(item, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
    if (c->n < 16)
        snprintf(c->names[c->n], 32, "%s", cJSON_IsString(name) ? name->valuestring : "?");
    c->n++;
    cJSON_Delete(item); /* the item is ours */
    return c->stop_after && c->n >= c->stop_after ? 42 : 0;
}

Test(apiclient, list_follows_continue_tokens_and_returns_the_resource_version, .fini = teardown)
{
    srv_start(h_pages);
    ks_api *api = api_for(NULL, NULL, NULL);
    collected c = {0};
    char *rv = NULL;
    ks_api_list_opts o = {.limit = 2,
                          .label_selector = "app=web,tier in (a,b)",
                          .field_selector = "status.phase!=Succeeded",
                          .resource_version = "0"};
    cr_assert_eq(ks__api_list(api, "/api/v1/pods", &o, collect, &c, &rv), 0, "%s",
                 ks__api_error(api));
    cr_expect_eq(c.n, 4);
    cr_expect_str_eq(c.names[0], "a");
    cr_expect_str_eq(c.names[1], "b");
    cr_expect_str_eq(c.names[2], "c");
    cr_expect_str_eq(c.names[3], "d");
    cr_expect_str_eq(rv, "100");
    free(rv);
    cr_expect_eq(atomic_load(&S.nreq), 3);
    cr_expect_str_eq(S.reqs[0].target,
                     "/api/v1/pods?limit=2&resourceVersion=0&labelSelector=app%3Dweb%2Ctier%20in%"
                     "20%28a%2Cb%29&fieldSelector=status.phase%21%3DSucceeded");
    cr_expect_str_eq(S.reqs[1].target,
                     "/api/v1/pods?limit=2&continue=tok1&labelSelector=app%3Dweb%2Ctier%20in%20%"
                     "28a%2Cb%29&fieldSelector=status.phase%21%3DSucceeded",
                     "continuations carry no resourceVersion");

    /* Default page size 500; null items; a callback that stops the list. */
    cr_assert_eq(ks__api_list(api, "/api/v1/empty", NULL, collect, &c, &rv), 0);
    cr_expect_str_eq(S.reqs[3].target, "/api/v1/empty?limit=500");
    cr_expect_str_eq(rv, "7");
    free(rv);
    collected stop = {.stop_after = 3};
    cr_expect_eq(ks__api_list(api, "/api/v1/pods", &o, collect, &stop, &rv), 42);
    cr_expect_eq(stop.n, 3);
    cr_expect_null(rv);
    ks__api_destroy(api);
}

Test(apiclient, list_errors, .fini = teardown)
{
    srv_start(h_pages);
    ks_api *api = api_for(NULL, NULL, NULL);
    collected c = {0};
    char *rv = (char *)1;
    cr_expect_eq(ks__api_list(api, "/api/v1/expire", NULL, collect, &c, &rv), KS_API_GONE);
    cr_expect_null(rv);
    cr_expect_eq(c.n, 1);
    cr_expect_str_eq(ks__api_error(api),
                     "GET /api/v1/expire: 410 Gone: The provided continue parameter is too old "
                     "to display a consistent list result. (the continue token of a paginated "
                     "list expired; relist)");
    cr_expect_eq(ks__api_list(api, "/api/v1/garbage", NULL, collect, &c, NULL), KS_EPARSE);
    cr_expect_str_eq(ks__api_error(api),
                     "GET /api/v1/garbage: the response is not a JSON object (at byte 15 of 16)");
    ks__api_destroy(api);
}

/* --- watches --------------------------------------------------------------------------------- */

#define EV(type, name, rv)                                                                         \
    "{\"type\":\"" type "\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name           \
    "\",\"resourceVersion\":\"" rv "\"}}}\n"

static int h_watch(srv *s, int fd, const req *r, int n)
{
    (void)s;
    (void)n;
    if (strstr(r->target, "/gone")) {
        respond(fd, 410, "Gone", NULL,
                "{\"kind\":\"Status\",\"message\":\"too old resource version: 5 (120)\","
                "\"reason\":\"Expired\",\"code\":410}");
        return 0;
    }
    stream_start(fd);
    const char *added = EV("ADDED", "a", "101");
    size_t half = strlen(added) / 2;
    char first[256];
    snprintf(first, sizeof(first), "%.*s", (int)half, added);
    chunk(fd, first); /* one event split over two chunks */
    usleep(20000);
    chunk(fd, added + half);
    chunk(fd, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\n"); /* malformed */
    chunk(fd, EV("MODIFIED", "a", "102") "\n" EV(
                  "SURPRISE", "z",
                  "103") "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
                         "{\"resourceVersion\":\"150\"}}}\r\n");
    if (strstr(r->target, "/ends")) {
        chunk(fd, EV("DELETED", "a", "160")); /* and the server's timeout ends the stream */
        chunk(fd, "");
        return 0;
    }
    if (strstr(r->target, "/error500")) {
        chunk(fd, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"message\":\"etcd is "
                  "sad\",\"reason\":\"InternalError\",\"code\":500}}\n");
        wait_for_close(fd);
        return 1;
    }
    if (strstr(r->target, "/hang")) {
        wait_for_close(fd);
        return 1;
    }
    chunk(fd, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
              "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: "
              "100 (150)\",\"reason\":\"Expired\",\"code\":410}}\n");
    wait_for_close(fd);
    return 1;
}

typedef struct events {
    char seen[16][64];
    int n;
    char skipped[4][600];
    int nskip;
    ks_api *stop_api; /* when set, a thread stops this api after the first event */
    atomic_int first;
} events;

static int on_event(const char *type, cJSON *obj, void *ud)
{
    events *e = ud;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(m, "resourceVersion");
    if (e->n < 16)
        snprintf(e->seen[e->n], 64, "%s %s %s", type,
                 cJSON_IsString(name) ? name->valuestring : "-",
                 cJSON_IsString(rv) ? rv->valuestring : "-");
    e->n++;
    atomic_store(&e->first, 1);
    cJSON_Delete(obj);
    return 0;
}

static void on_skip(const char *msg, void *ud)
{
    events *e = ud;
    if (e->nskip < 4)
        snprintf(e->skipped[e->nskip], 600, "%s", msg);
    e->nskip++;
}

Test(apiclient, watch_streams_events_skips_bad_lines_and_reports_410, .fini = teardown)
{
    srv_start(h_watch);
    ks_api *api = api_for(NULL, NULL, NULL);
    events e = {0};
    char *rv = NULL;
    ks_api_watch_opts o = {.resource_version = "100",
                           .timeout_seconds = 30,
                           .field_selector = "spec.nodeName=",
                           .on_skip = on_skip,
                           .skip_ud = &e};
    cr_assert_eq(ks__api_watch(api, "/api/v1/pods", &o, on_event, &e, &rv), KS_API_GONE, "%s",
                 ks__api_error(api));
    cr_expect_str_eq(S.reqs[0].target, "/api/v1/pods?watch=1&resourceVersion=100&"
                                       "allowWatchBookmarks=true&timeoutSeconds=30&"
                                       "fieldSelector=spec.nodeName%3D");
    cr_expect(has_header(&S.reqs[0], "Authorization: Bearer test-token\r\n"));
    cr_expect_eq(e.n, 3);
    cr_expect_str_eq(e.seen[0], "ADDED a 101");
    cr_expect_str_eq(e.seen[1], "MODIFIED a 102");
    cr_expect_str_eq(e.seen[2], "BOOKMARK - 150");
    cr_expect_eq(e.nskip, 2);
    cr_expect_str_eq(e.skipped[0], "GET /api/v1/pods (watch): skipped event 2: not a JSON object: "
                                   "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",");
    cr_expect_str_eq(e.skipped[1],
                     "GET /api/v1/pods (watch): skipped event 4: unknown type \"SURPRISE\"");
    cr_expect_str_eq(rv, "150", "the bookmark's resourceVersion");
    cr_expect_str_eq(ks__api_error(api),
                     "GET /api/v1/pods (watch from resourceVersion 150): ERROR event: 410 "
                     "Expired: too old resource version: 100 (150); relist");
    free(rv);
    ks__api_destroy(api);
}

Test(apiclient, watch_ends_cleanly_at_the_server_timeout, .fini = teardown)
{
    srv_start(h_watch);
    ks_api *api = api_for(NULL, NULL, NULL);
    events e = {0};
    char *rv = NULL;
    ks_api_watch_opts o = {.resource_version = "100", .on_skip = on_skip, .skip_ud = &e};
    cr_assert_eq(ks__api_watch(api, "/api/v1/ends", &o, on_event, &e, &rv), 0, "%s",
                 ks__api_error(api));
    cr_expect_eq(e.n, 4);
    cr_expect_str_eq(e.seen[3], "DELETED a 160");
    cr_expect_str_eq(rv, "160", "where the next watch resumes");
    cr_expect(strstr(S.reqs[0].target, "timeoutSeconds=300") != NULL, "default timeout");
    /* The same connection serves the next call. */
    cr_assert_eq(ks__api_watch(api, "/api/v1/ends", &o, on_event, &e, &rv), 0);
    cr_expect_eq(atomic_load(&S.nconn), 1);
    free(rv);
    ks__api_destroy(api);
}

Test(apiclient, watch_http_410_and_other_error_events, .fini = teardown)
{
    srv_start(h_watch);
    ks_api *api = api_for(NULL, NULL, NULL);
    events e = {0};
    char *rv = NULL;
    ks_api_watch_opts o = {.resource_version = "5", .on_skip = on_skip, .skip_ud = &e};
    cr_expect_eq(ks__api_watch(api, "/api/v1/gone", &o, on_event, &e, &rv), KS_API_GONE);
    cr_expect_str_eq(ks__api_error(api),
                     "GET /api/v1/gone: 410 Gone: too old resource version: 5 (120) (watch from "
                     "resourceVersion 5 is too old; relist)");
    cr_expect_str_eq(rv, "5");
    cr_expect_eq(ks__api_watch(api, "/api/v1/error500", &o, on_event, &e, &rv), KS_EIO);
    cr_expect_str_eq(ks__api_error(api), "GET /api/v1/error500 (watch from resourceVersion 150): "
                                         "ERROR event: 500 InternalError: etcd is sad");
    cr_expect_str_eq(rv, "150");
    free(rv);
    ks__api_destroy(api);
}

static void *stopper(void *arg)
{
    events *e = arg;
    while (!atomic_load(&e->first))
        usleep(1000);
    usleep(50000);
    ks__api_stop(e->stop_api);
    return NULL;
}

static int64_t mono_ms(void) { return ks__clock_monotonic(NULL) / 1000000; }

Test(apiclient, watch_is_stopped_promptly_from_another_thread, .fini = teardown)
{
    srv_start(h_watch);
    ks_api_opts o = {.qps = -1};
    ks_api *api = api_for(NULL, NULL, &o);
    events e = {.stop_api = api};
    char *rv = NULL;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, stopper, &e), 0);
    ks_api_watch_opts wo = {.resource_version = "100", .on_skip = on_skip, .skip_ud = &e};
    int64_t t0 = mono_ms();
    cr_expect_eq(ks__api_watch(api, "/api/v1/hang", &wo, on_event, &e, &rv), KS_API_STOPPED);
    int64_t took = mono_ms() - t0;
    pthread_join(th, NULL);
    cr_expect_lt(took, 900, "stopped after %lld ms; curl's own poll interval is 1000",
                 (long long)took);
    cr_expect_str_eq(rv, "150");
    cr_expect_eq(ks__api_request(api, "GET", "/x", NULL, NULL, NULL), KS_API_STOPPED,
                 "stop is for shutting down: it sticks");
    free(rv);
    ks__api_destroy(api);
}

Test(apiclient, stop_interrupts_a_rate_limit_wait, .fini = teardown)
{
    srv_start(h_ok);
    ks_api_opts o = {.qps = 0.01, .burst = 1}; /* the second request would wait 100 s */
    ks_api *api = api_for(NULL, NULL, &o);
    cr_assert_eq(ks__api_request(api, "GET", "/x", NULL, NULL, NULL), 0);
    events e = {.stop_api = api};
    atomic_store(&e.first, 1);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, stopper, &e), 0);
    int64_t t0 = mono_ms();
    cr_expect_eq(ks__api_request(api, "GET", "/x", NULL, NULL, NULL), KS_API_STOPPED);
    cr_expect_lt(mono_ms() - t0, 900);
    pthread_join(th, NULL);
    ks__api_destroy(api);
}

/* --- connection failures --------------------------------------------------------------------- */

Test(apiclient, connection_refused_names_the_server_and_the_kubeconfig, .fini = teardown)
{
    int port;
    int fd = listen_any(&port);
    close(fd); /* nothing listens there now */
    char url[64], err[256], want[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    KC = kc_for(url, NULL, "token: t");
    ks_api *api;
    cr_assert_eq(ks__api_create(KC, NULL, &api, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(ks__api_request(api, "GET", "/api/v1/nodes?limit=1", NULL, NULL, NULL), KS_EIO);
    const char *m = ks__api_error(api);
    snprintf(want, sizeof(want),
             "GET /api/v1/nodes: cannot connect to %s (server of kubeconfig %s): ", url, kcpath);
    cr_expect(strncmp(m, want, strlen(want)) == 0, "%s", m);
    cr_expect(strstr(m, "; is kube-apiserver running and listening there?") != NULL, "%s", m);
    ks__api_destroy(api);
}

Test(apiclient, tls_to_a_plain_http_port_says_so, .fini = teardown)
{
    srv_start(h_ok);
    char url[64], err[256];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", S.port);
    KC = kc_for(url, "insecure-skip-tls-verify: true", "token: t");
    ks_api *api;
    cr_assert_eq(ks__api_create(KC, NULL, &api, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(ks__api_request(api, "GET", "/version", NULL, NULL, NULL), KS_EIO);
    const char *m = ks__api_error(api);
    char want[256];
    snprintf(want, sizeof(want),
             "GET /version: TLS handshake with %s (server of kubeconfig %s) failed: ", url, kcpath);
    cr_expect(strncmp(m, want, strlen(want)) == 0, "%s", m);
    cr_expect(strstr(m, "the port may speak plain HTTP (use http://)") != NULL, "%s", m);
    ks__api_destroy(api);
}

/* --- TLS against openssl s_server ------------------------------------------------------------ */

static pid_t tls_pid;
static int tls_port;

/* Starts `openssl s_server -www` with the test PKI; extra: more arguments or NULL. Returns 0
 * when the binary is missing (the test then skips). */
static int tls_start(const char *extra)
{
    if (access("/usr/bin/openssl", X_OK) != 0)
        return 0;
    int fd = listen_any(&tls_port);
    close(fd);
    char accept[32];
    snprintf(accept, sizeof(accept), "127.0.0.1:%d", tls_port);
    tls_pid = fork();
    cr_assert_geq(tls_pid, 0);
    if (tls_pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (extra)
            execl("/usr/bin/openssl", "openssl", "s_server", "-accept", accept, "-cert",
                  PKI "server.crt", "-key", PKI "server.key", "-www", "-naccept", "8", "-Verify",
                  "1", "-CAfile", PKI "ca.crt", (char *)NULL);
        else
            execl("/usr/bin/openssl", "openssl", "s_server", "-accept", accept, "-cert",
                  PKI "server.crt", "-key", PKI "server.key", "-www", "-naccept", "8",
                  (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500; i++) { /* up to 5 s for it to listen */
        int c = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(tls_port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int ok = connect(c, (struct sockaddr *)&a, sizeof(a)) == 0;
        close(c);
        if (ok)
            return 1;
        usleep(10000);
    }
    cr_assert_fail("openssl s_server did not start on %s", accept);
    return 0;
}

static void tls_teardown(void)
{
    if (tls_pid > 0) {
        kill(tls_pid, SIGTERM);
        waitpid(tls_pid, NULL, 0);
    }
    tls_pid = 0;
    teardown();
}

static char *b64_of(const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "base64 -w0 %s", path);
    FILE *p = popen(cmd, "r");
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, p);
    buf[n] = '\0';
    pclose(p);
    return strdup(buf);
}

static ks_api *tls_api(const char *cluster, const char *user, int pem_files)
{
    char url[64], err[512] = "";
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", tls_port);
    KC = kc_for(url, cluster, user);
    ks_api_opts o = {.pem_files = pem_files, .request_timeout_ms = 5000};
    ks_api *api = NULL;
    cr_assert_eq(ks__api_create(KC, &o, &api, err, sizeof(err)), 0, "%s", err);
    return api;
}

Test(apiclient, tls_with_ca_data_and_client_certificate_data, .fini = tls_teardown)
{
    if (!tls_start("mtls"))
        cr_skip_test("no openssl binary");
    char *ca = b64_of(PKI "ca.crt"), *crt = b64_of(PKI "client.crt"),
         *key = b64_of(PKI "client.key");
    char cluster[2048], user[4096];
    snprintf(cluster, sizeof(cluster), "certificate-authority-data: %s", ca);
    snprintf(user, sizeof(user), "client-certificate-data: %s, client-key-data: %s", crt, key);
    for (int files = 0; files < 2; files++) { /* blobs, then the temp-file fallback */
        ks_api *api = tls_api(cluster, user, files);
        ks_api_response r = {0};
        cr_expect_eq(ks__api_request(api, "GET", "/", NULL, NULL, &r), 0, "%s", ks__api_error(api));
        cr_expect_eq(r.status, 200);
        ks__api_response_free(&r);
        ks__api_destroy(api);
        ks__kubeconfig_free(KC);
        KC = NULL;
        unlink(kcpath);
    }
    free(ca);
    free(crt);
    free(key);
}

Test(apiclient, tls_ca_mismatch_names_the_ca_source, .fini = tls_teardown)
{
    if (!tls_start(NULL))
        cr_skip_test("no openssl binary");
    ks_api *api = tls_api("certificate-authority: " PKI "other-ca.crt", "token: t", 0);
    cr_expect_eq(ks__api_request(api, "GET", "/api", NULL, NULL, NULL), KS_EIO);
    const char *m = ks__api_error(api);
    char want[256];
    snprintf(want, sizeof(want),
             "GET /api: TLS: the server's certificate is not signed by the CA "
             "in " PKI "other-ca.crt (server https://127.0.0.1:%d): ",
             tls_port);
    cr_expect(strncmp(m, want, strlen(want)) == 0, "%s", m);
    snprintf(want, sizeof(want),
             "; set certificate-authority (or -data) of cluster \"%s\" in kubeconfig %s to the CA "
             "that signed the API server's serving certificate",
             KC->cluster, kcpath);
    cr_expect(strstr(m, want) != NULL, "%s\nlacks %s", m, want);
    ks__api_destroy(api);

    /* The right CA from a file works, and tls-server-name verifies against another name. */
    ks__kubeconfig_free(KC);
    unlink(kcpath);
    api = tls_api("certificate-authority: " PKI "ca.crt, tls-server-name: kubernetes.default.svc",
                  "token: t", 0);
    cr_expect_eq(ks__api_request(api, "GET", "/", NULL, NULL, NULL), 0, "%s", ks__api_error(api));
    ks__api_destroy(api);
    ks__kubeconfig_free(KC);
    unlink(kcpath);
    api = tls_api("certificate-authority: " PKI "ca.crt, tls-server-name: wrong.example",
                  "token: t", 0);
    cr_expect_eq(ks__api_request(api, "GET", "/", NULL, NULL, NULL), KS_EIO);
    cr_expect(strstr(ks__api_error(api), "TLS: the server's certificate does not name the host") !=
                  NULL,
              "%s", ks__api_error(api));
    ks__api_destroy(api);
}
