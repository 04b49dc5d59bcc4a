/*
 * The health and metrics HTTP server (core/live/httpserver.c), over real sockets on 127.0.0.1: a
 * raw socket client that writes the request bytes itself (so malformed requests can be sent too)
 * and libcurl for one scrape the way a real client parses it. Every server binds port 0 and asks
 * which port it got, so tests never collide.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "live/httpserver.h"
#include "util/metrics.h"
#include "sched/sched_families.h" /* the scheduler's families moved to core/sched */

typedef struct reply {
    int status;
    char head[2048]; /* status line and headers, each ending in CRLF */
    char *body;      /* malloc'd, NUL-terminated */
    size_t body_len;
} reply;

static int connect_local(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0, "connect to port %d", port);
    return fd;
}

/* Sends `request` as is and reads the answer until the server closes. */
static reply raw(int port, const char *request)
{
    reply r = {0};
    int fd = connect_local(port);
    size_t n = strlen(request);
    cr_assert_eq(send(fd, request, n, MSG_NOSIGNAL), (ssize_t)n);
    size_t cap = 4096, len = 0;
    char *all = malloc(cap);
    for (;;) {
        if (len + 1024 > cap)
            all = realloc(all, cap *= 2);
        ssize_t got = recv(fd, all + len, cap - len - 1, 0);
        cr_assert_geq(got, 0, "recv failed (timeout?)");
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    all[len] = '\0';
    char *sep = strstr(all, "\r\n\r\n");
    cr_assert_not_null(sep, "no end of headers in %s", all);
    size_t hl = (size_t)(sep - all);
    cr_assert_lt(hl + 2, sizeof r.head);
    memcpy(r.head, all, hl + 2); /* keep the last header's CRLF */
    r.head[hl + 2] = '\0';
    cr_assert_eq(sscanf(all, "HTTP/1.1 %d ", &r.status), 1, "status line: %s", all);
    r.body_len = len - hl - 4;
    r.body = malloc(r.body_len + 1);
    memcpy(r.body, sep + 4, r.body_len + 1);
    free(all);
    /* Content-Length must match what came. */
    const char *cl = strstr(r.head, "\r\nContent-Length: ");
    cr_assert_not_null(cl);
    return r;
}

static reply get(int port, const char *path)
{
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\n\r\n",
             path);
    reply r = raw(port, req);
    size_t cl = 0;
    sscanf(strstr(r.head, "\r\nContent-Length: "), "\r\nContent-Length: %zu", &cl);
    cr_assert_eq(cl, r.body_len, "Content-Length %zu, body %zu bytes", cl, r.body_len);
    return r;
}

static void expect(int port, const char *path, int status, const char *body)
{
    reply r = get(port, path);
    cr_assert_eq(r.status, status, "GET %s: status %d, want %d", path, r.status, status);
    cr_assert_str_eq(r.body, body, "GET %s", path);
    free(r.body);
}

static ks_httpserver *start(const ks_httpserver_opts *o)
{
    ks_httpserver *s = NULL;
    cr_assert_eq(ks__httpserver_start(o, &s), 0);
    cr_assert_not_null(s);
    cr_assert_gt(ks__httpserver_port(s), 0);
    return s;
}

static int flag_ready(void *ctx) { return atomic_load((atomic_int *)ctx); }

Test(httpserver, health_endpoints_answer_ok)
{
    ks_httpserver_opts o = {.bind_address = "127.0.0.1"};
    ks_httpserver *s = start(&o);
    int port = ks__httpserver_port(s);
    expect(port, "/healthz", 200, "ok");
    expect(port, "/livez", 200, "ok");
    expect(port, "/healthz?verbose", 200, "[+]ping ok\nhealthz check passed\n");
    expect(port, "/livez?foo=1&verbose=true", 200, "[+]ping ok\nlivez check passed\n");
    expect(port, "/readyz", 200, "ok");
    reply r = get(port, "/healthz");
    cr_assert_not_null(strstr(r.head, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
    cr_assert_not_null(strstr(r.head, "\r\nConnection: close\r\n"));
    cr_assert_not_null(strstr(r.head, "\r\nCache-Control: no-cache, private\r\n"), "%s", r.head);
    free(r.body);
    ks__httpserver_stop(s);
}

Test(httpserver, readyz_follows_checks_and_shutdown)
{
    atomic_int synced = 0;
    ks_http_check checks[] = {{"sched-handler-sync", flag_ready, &synced}};
    ks_httpserver_opts o = {
        .bind_address = "127.0.0.1", .ready_checks = checks, .nready_checks = 1};
    ks_httpserver *s = start(&o);
    checks[0].name = "changed after start"; /* the server keeps its own copy */
    int port = ks__httpserver_port(s);

    expect(port, "/readyz", 500,
           "[+]shutdown ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n");
    expect(port, "/healthz", 200, "ok"); /* liveness does not depend on readiness */
    atomic_store(&synced, 1);
    expect(port, "/readyz", 200, "ok");
    expect(port, "/readyz?verbose", 200,
           "[+]shutdown ok\n[+]sched-handler-sync ok\nreadyz check passed\n");
    ks__httpserver_shutting_down(s);
    expect(port, "/readyz", 500,
           "[-]shutdown failed: reason withheld\n[+]sched-handler-sync ok\nreadyz check failed\n");
    expect(port, "/livez", 200, "ok");
    ks__httpserver_stop(s);

    /* The status of a failing /readyz can be chosen. */
    o.not_ready_status = 503;
    atomic_store(&synced, 0);
    s = start(&o);
    reply r = get(ks__httpserver_port(s), "/readyz");
    cr_assert_eq(r.status, 503);
    cr_assert_not_null(strstr(r.head, "HTTP/1.1 503 Service Unavailable\r\n"));
    free(r.body);
    ks__httpserver_stop(s);
}

/* kube-scheduler with leader election: /healthz has only the leaderElection check (no ping),
 * /readyz lists leaderElection, shutdown, sched-handler-sync; /livez stays ping. */
Test(httpserver, health_checks_and_checks_before_shutdown)
{
    atomic_int leader_ok = 1, synced = 1;
    ks_http_check le = {"leaderElection", flag_ready, &leader_ok};
    ks_http_check ready[] = {le, {"sched-handler-sync", flag_ready, &synced}};
    ks_httpserver_opts o = {.bind_address = "127.0.0.1",
                            .ready_checks = ready,
                            .nready_checks = 2,
                            .nready_before_shutdown = 1,
                            .health_checks = &le,
                            .nhealth_checks = 1};
    ks_httpserver *s = start(&o);
    int port = ks__httpserver_port(s);
    expect(port, "/healthz?verbose", 200, "[+]leaderElection ok\nhealthz check passed\n");
    expect(port, "/readyz?verbose", 200,
           "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\nreadyz check passed\n");
    atomic_store(&leader_ok, 0);
    expect(port, "/healthz", 500,
           "[-]leaderElection failed: reason withheld\nhealthz check failed\n");
    expect(port, "/readyz", 500,
           "[-]leaderElection failed: reason withheld\n[+]shutdown ok\n[+]sched-handler-sync ok\n"
           "readyz check failed\n");
    expect(port, "/livez", 200, "ok");
    ks__httpserver_stop(s);

    /* More checks before "shutdown" than there are checks: refused. */
    o.nready_before_shutdown = 3;
    ks_httpserver *bad = NULL;
    cr_assert_eq(ks__httpserver_start(&o, &bad), KS_EINVAL);
    cr_assert_null(bad);
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    char **buf = ud;
    size_t old = *buf ? strlen(*buf) : 0;
    *buf = realloc(*buf, old + size * n + 1);
    memcpy(*buf + old, p, size * n);
    (*buf)[old + size * n] = '\0';
    return size * n;
}

Test(httpserver, metrics_scraped_with_libcurl)
{
    ks_metrics *m = ks__metrics_create();
    ks_sched_metrics sm;
    cr_assert_eq(ks__metrics_register_scheduler(m, &sm), 0);
    ks__metrics_inc(KS_METRICS_WITH(sm.schedule_attempts, "scheduled", "default-scheduler"));
    ks_httpserver_opts o = {.bind_address = "127.0.0.1", .metrics = m};
    ks_httpserver *s = start(&o);

    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", ks__httpserver_port(s));
    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    char *body = NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK);
    long code = 0;
    char *ctype = NULL;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ctype);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(ctype, "text/plain; version=0.0.4; charset=utf-8; escaping=underscores");

    char *want = NULL;
    cr_assert_eq(ks__metrics_render(m, &want, NULL), 0);
    cr_assert_str_eq(body, want);
    cr_assert_not_null(strstr(body,
                              "scheduler_schedule_attempts_total{profile=\"default-scheduler\","
                              "result=\"scheduled\"} 1\n"));
    free(want);
    free(body);
    curl_easy_cleanup(c);
    ks__httpserver_stop(s);
    ks__metrics_destroy(m);
}

Test(httpserver, other_paths_methods_and_garbage)
{
    ks_httpserver_opts o = {.bind_address = "127.0.0.1"}; /* no registry: /metrics is 404 */
    ks_httpserver *s = start(&o);
    int port = ks__httpserver_port(s);
    expect(port, "/", 404, "404 page not found\n");
    expect(port, "/metrics", 404, "404 page not found\n");
    expect(port, "/healthz/extra", 404, "404 page not found\n");

    reply r = raw(port, "POST /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    cr_assert_eq(r.status, 405);
    cr_assert_not_null(strstr(r.head, "\r\nAllow: GET, HEAD\r\n"));
    free(r.body);

    r = raw(port, "HEAD /healthz HTTP/1.1\r\n\r\n");
    cr_assert_eq(r.status, 200);
    cr_assert_not_null(strstr(r.head, "\r\nContent-Length: 2\r\n"));
    cr_assert_eq(r.body_len, 0);
    free(r.body);

    r = raw(port, "hello there\r\n\r\n");
    cr_assert_eq(r.status, 400);
    free(r.body);
    r = raw(port, "GET /healthz SPDY/3\r\n\r\n");
    cr_assert_eq(r.status, 400);
    free(r.body);
    /* Bare LF line ends are accepted, as Go's server does. */
    r = raw(port, "GET /livez HTTP/1.0\n\n");
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "ok");
    free(r.body);

    /* A head larger than 8 KiB is refused, and the server keeps serving: 431 for its header
     * fields, 414 when the request line alone is that long (no end of line in 10000 bytes). */
    char *big = malloc(10000);
    memset(big, 'a', 9999);
    big[9999] = '\0';
    memcpy(big, "GET /healthz HTTP/1.1\r\nX-Big: ", 30);
    memcpy(big + 9995, "\r\n\r\n", 4);
    int fd = connect_local(port);
    send(fd, big, strlen(big), MSG_NOSIGNAL);
    char buf[256] = {0};
    cr_assert_gt(recv(fd, buf, sizeof buf - 1, 0), 0);
    cr_assert_not_null(strstr(buf, "HTTP/1.1 431 "), "%s", buf);
    close(fd);
    memset(big, 'a', 9999);
    memcpy(big, "GET /", 5);
    fd = connect_local(port);
    send(fd, big, strlen(big), MSG_NOSIGNAL);
    memset(buf, 0, sizeof buf);
    cr_assert_gt(recv(fd, buf, sizeof buf - 1, 0), 0);
    cr_assert_not_null(strstr(buf, "HTTP/1.1 414 "), "%s", buf);
    close(fd);
    free(big);
    expect(port, "/healthz", 200, "ok");
    ks__httpserver_stop(s);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* stop does not wait for a client that connected and sent nothing (or half a request). */
Test(httpserver, stop_is_prompt_with_idle_clients)
{
    ks_httpserver_opts o = {.bind_address = "127.0.0.1"};
    ks_httpserver *s = start(&o);
    int port = ks__httpserver_port(s);
    int idle = connect_local(port);
    int half = connect_local(port);
    send(half, "GET /hea", 8, MSG_NOSIGNAL);
    usleep(50 * 1000); /* let the server pick one of them up */
    double t0 = now_s();
    ks__httpserver_stop(s);
    cr_assert_lt(now_s() - t0, 1.0, "stop took %.3fs", now_s() - t0);
    /* The listening socket is closed: a new connection is refused. */
    char c;
    cr_assert_leq(recv(idle, &c, 1, 0), 0);
    close(idle);
    close(half);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_neq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd);
}

Test(httpserver, start_errors)
{
    ks_httpserver_opts o = {.bind_address = "127.0.0.1"};
    ks_httpserver *s = start(&o), *t = (ks_httpserver *)1;
    /* The port is taken. */
    o.port = ks__httpserver_port(s);
    cr_assert_eq(ks__httpserver_start(&o, &t), KS_EIO);
    cr_assert_null(t);
    o.port = 70000;
    cr_assert_eq(ks__httpserver_start(&o, &t), KS_EINVAL);
    o.port = 0;
    ks_http_check nameless = {NULL, flag_ready, NULL};
    o.ready_checks = &nameless;
    o.nready_checks = 1;
    cr_assert_eq(ks__httpserver_start(&o, &t), KS_EINVAL);
    ks__httpserver_stop(s);
    ks__httpserver_stop(NULL);
    ks__httpserver_shutting_down(NULL);
}

/* Scrapes and probes from several clients while another thread updates the registry. */
static struct {
    int port;
    ks_metric *counter;
    atomic_int stop;
    atomic_int failures;
} load;

static void *scraper(void *arg)
{
    const char *path = arg;
    for (int i = 0; i < 40; i++) {
        reply r = get(load.port, path);
        if (r.status != 200)
            atomic_fetch_add(&load.failures, 1);
        free(r.body);
    }
    return NULL;
}

static void *updater(void *arg)
{
    (void)arg;
    while (!atomic_load(&load.stop))
        ks__metrics_inc(load.counter);
    return NULL;
}

Test(httpserver, serves_clients_while_metrics_change)
{
    ks_metrics *m = ks__metrics_create();
    ks_sched_metrics sm;
    cr_assert_eq(ks__metrics_register_scheduler(m, &sm), 0);
    load.counter = KS_METRICS_WITH(sm.schedule_attempts, "scheduled", "p");
    ks_httpserver_opts o = {.bind_address = "127.0.0.1", .metrics = m};
    ks_httpserver *s = start(&o);
    load.port = ks__httpserver_port(s);
    pthread_t u, c[4];
    static const char *paths[] = {"/metrics", "/healthz", "/readyz", "/metrics"};
    pthread_create(&u, NULL, updater, NULL);
    for (int i = 0; i < 4; i++)
        pthread_create(&c[i], NULL, scraper, (void *)paths[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(c[i], NULL);
    atomic_store(&load.stop, 1);
    pthread_join(u, NULL);
    cr_assert_eq(atomic_load(&load.failures), 0);
    ks__httpserver_stop(s);
    ks__metrics_destroy(m);
}

/* --- /statusz and /flagz (kube-scheduler v1.37's ComponentStatusz / ComponentFlagz) ----------- */

static reply get_accept(int port, const char *path, const char *accept)
{
    char req[1024];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n%s%s%sUser-Agent: t\r\n\r\n",
             path, accept ? "aCCept:  " : "", accept ? accept : "", accept ? " \r\n" : "");
    return raw(port, req);
}

static const ks_http_flag k_flags[] = {{"v", "2"},
                                       {"bind-address", "127.0.0.1"},
                                       {"config", "/etc/ks.yaml"},
                                       {"leader-elect", "true"}};

/* A server with the zpages of a process started at 1000 s past the epoch minus nothing: the
 * start time is fixed so that the text can be compared. */
static ks_httpserver *zserver(ks_metrics *m, int64_t start_time)
{
    static ks_http_zpages zp;
    zp = (ks_http_zpages){.component = "kubesched",
                          .binary_version = "0.1.0",
                          .emulation_version = "1.37",
                          .compiler_version = "gcc 99.1",
                          .start_time = start_time,
                          .flags = k_flags,
                          .nflags = 4};
    ks_httpserver_opts o = {.bind_address = "127.0.0.1", .metrics = m, .zpages = &zp};
    return start(&o);
}

/* The delimiter the page used: what follows "Started" up to the value (upstream picks one of
 * ":", ": ", "=", " " at random and puts a space after it). */
static const char *delim_of(const char *body, const char *label, char *out)
{
    const char *p = strstr(body, label);
    cr_assert_not_null(p, "no %s in %s", label, body);
    p += strlen(label);
    const char *cands[] = {": ", ":", "=", " "}; /* longest first: ": " before ":" */
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(cands[i]);
        if (!strncmp(p, cands[i], n) && p[n] == ' ') {
            strcpy(out, cands[i]);
            return out;
        }
    }
    cr_assert_fail("no delimiter after %s in %s", label, body);
    return NULL;
}

Test(httpserver, statusz_text_is_upstreams_page_with_kubesched_fields)
{
    time_t start = time(NULL) - 3725; /* up 1 hr 02 min 05 sec */
    ks_metrics *m = ks__metrics_create();
    ks_httpserver *s = zserver(m, (int64_t)start);
    int port = ks__httpserver_port(s);
    for (int round = 0; round < 2; round++) {
        /* no Accept, then */ /* "*" "/" "*" (curl's), both text/plain */
        reply r = get_accept(port, "/statusz", round ? "*/*" : NULL);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_expect(strstr(r.head, "Content-Type: text/plain; charset=utf-8\r\n"), "%s", r.head);
        char d[4], started[64], want[1024];
        delim_of(r.body, "\nStarted", d);
        struct tm tm;
        localtime_r(&start, &tm);
        strftime(started, sizeof started, "%a %b %e %H:%M:%S %Z %Y", &tm);
        snprintf(want, sizeof want,
                 "\nkubesched statusz\nWarning: This endpoint is not meant to be machine "
                 "parseable, has no formatting compatibility guarantees and is for debugging "
                 "purposes only.\n\nStarted%s %s\nUp%s 1 hr 02 min 0",
                 d, started, d);
        cr_expect(strncmp(r.body, want, strlen(want)) == 0, "got:\n%s\nwant a start of:\n%s",
                  r.body, want);
        snprintf(want, sizeof want,
                 " sec\nCompiler version%s gcc 99.1\nBinary version%s 0.1.0\nEmulation "
                 "version%s 1.37\nPaths%s /flagz /healthz /livez /metrics /readyz\n",
                 d, d, d, d);
        size_t bl = strlen(r.body), wl = strlen(want);
        cr_expect(bl > wl && !strcmp(r.body + bl - wl, want), "got:\n%s\nwant an end of:\n%s",
                  r.body, want);
        free(r.body);
    }
    /* The delimiter is picked per request: in 40 requests, more than one shows up. */
    char first[4] = "", d[4];
    int differs = 0;
    for (int i = 0; i < 40 && !differs; i++) {
        reply r = get_accept(port, "/statusz", NULL);
        delim_of(r.body, "\nStarted", d);
        if (!first[0])
            strcpy(first, d);
        differs = strcmp(first, d) != 0;
        free(r.body);
    }
    cr_expect(differs, "the same delimiter '%s' 40 times", first);
    ks__httpserver_stop(s);
    ks__metrics_destroy(m);
}

Test(httpserver, statusz_json_is_the_config_k8s_io_object)
{
    time_t start = time(NULL) - 42;
    ks_httpserver *s = zserver(NULL, (int64_t)start);
    int port = ks__httpserver_port(s);
    reply r = get_accept(port, "/statusz", "application/json;v=v1beta1;g=config.k8s.io;as=Statusz");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_expect(strstr(r.head, "Content-Type: application/json\r\n"), "%s", r.head);
    cr_expect(!strstr(r.head, "Warning:"), "v1beta1 is current: %s", r.head);
    cJSON *o = cJSON_Parse(r.body);
    cr_assert_not_null(o, "%s", r.body);
    cr_expect_str_eq(cJSON_GetObjectItem(o, "kind")->valuestring, "Statusz");
    cr_expect_str_eq(cJSON_GetObjectItem(o, "apiVersion")->valuestring, "config.k8s.io/v1beta1");
    cJSON *meta = cJSON_GetObjectItem(o, "metadata");
    cr_expect_str_eq(cJSON_GetObjectItem(meta, "name")->valuestring, "kubesched");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "annotations"),
                                         "kubesched.io/compiler-version")
                         ->valuestring,
                     "gcc 99.1");
    char ts[32];
    struct tm tm;
    gmtime_r(&start, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cr_expect_str_eq(cJSON_GetObjectItem(o, "startTime")->valuestring, ts);
    double up = cJSON_GetObjectItem(o, "uptimeSeconds")->valuedouble;
    cr_expect(up >= 42 && up <= 45, "uptimeSeconds %g", up);
    cr_expect_null(cJSON_GetObjectItem(o, "goVersion"), "kubesched has no Go version");
    cr_expect_str_eq(cJSON_GetObjectItem(o, "binaryVersion")->valuestring, "0.1.0");
    cr_expect_str_eq(cJSON_GetObjectItem(o, "emulationVersion")->valuestring, "1.37");
    char *paths = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "paths"));
    cr_expect_str_eq(paths, "[\"/flagz\",\"/healthz\",\"/livez\",\"/readyz\"]",
                     "no /metrics without a registry");
    free(paths);
    cJSON_Delete(o);
    free(r.body);

    /* v1alpha1 still answers, deprecated. */
    r = get_accept(port, "/statusz", "application/json;as=Statusz;g=config.k8s.io;v=v1alpha1");
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body, "\"apiVersion\":\"config.k8s.io/v1alpha1\""), "%s", r.body);
    cr_expect(strstr(r.head, "\r\nWarning: 299 - \"This version of the statusz endpoint is "
                             "deprecated. Please use a newer version.\"\r\n"),
              "%s", r.head);
    free(r.body);
    ks__httpserver_stop(s);
}

Test(httpserver, zpages_content_negotiation_as_upstream)
{
    ks_httpserver *s = zserver(NULL, 1);
    int port = ks__httpserver_port(s);
    struct {
        const char *path, *accept;
        int status;
        const char *starts; /* the body's start */
    } cases[] = {
        {"/statusz", "text/plain", 200, "\nkubesched statusz\n"},
        {"/statusz", "text/*", 200, "\nkubesched statusz\n"},
        {"/statusz", "application/xml", 406, "{\"kind\":\"Status\""},
        {"/statusz", "application/json", 406, "{\"kind\":\"Status\""},
        {"/statusz", "application/json;v=v1beta1;g=config.k8s.io", 406, "{"},
        {"/statusz", "application/json;v=v1beta1;g=config.k8s.io;as=Flagz", 406, "{"},
        {"/statusz", "text/plain;as=Statusz;g=config.k8s.io;v=v1beta1", 406, "{"},
        {"/statusz", "application/json;v=foo;g=config.k8s.io;as=Statusz,*/*", 200, "\nkubesched"},
        /* q orders the clauses: JSON wins over text at q=1 vs 0.5 */
        {"/statusz", "text/plain;q=0.5, application/json;g=config.k8s.io;v=v1beta1;as=Statusz", 200,
         "{\"kind\":\"Statusz\""},
        {"/statusz", "application/json;stream=watch;g=config.k8s.io;v=v1beta1;as=Statusz", 406,
         "{"},
        {"/flagz", "application/json;g=config.k8s.io;v=v1beta1;as=Flagz", 200,
         "{\"kind\":\"Flagz\",\"apiVersion\":\"config.k8s.io/v1beta1\",\"metadata\":{\"name\":"
         "\"kubesched\"},\"flags\":{\"bind-address\":\"127.0.0.1\",\"config\":\"/etc/ks.yaml\","
         "\"leader-elect\":\"true\",\"v\":\"2\"}}\n"},
        {"/flagz", "application/json;g=config.k8s.io;v=v1beta1;as=Statusz", 406, "{"},
        {"/flagz", "application/yaml;g=config.k8s.io;v=v1beta1;as=Flagz", 406, "{"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reply r = get_accept(port, cases[i].path, cases[i].accept);
        cr_expect_eq(r.status, cases[i].status, "%s Accept %s: %d %s", cases[i].path,
                     cases[i].accept, r.status, r.body);
        cr_expect(!strncmp(r.body, cases[i].starts, strlen(cases[i].starts)),
                  "%s Accept %s: got %s", cases[i].path, cases[i].accept, r.body);
        if (r.status == 406)
            cr_expect_str_eq(r.body,
                             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                             "\"status\":\"Failure\",\"message\":\"only the following media "
                             "types are accepted: application/json, text/plain\",\"reason\":"
                             "\"NotAcceptable\",\"code\":406}\n");
        free(r.body);
    }
    ks__httpserver_stop(s);
}

Test(httpserver, flagz_text_lists_every_flag_sorted)
{
    ks_httpserver *s = zserver(NULL, 1);
    int port = ks__httpserver_port(s);
    reply r = get_accept(port, "/flagz", NULL);
    cr_assert_eq(r.status, 200);
    cr_expect(strstr(r.head, "Content-Type: text/plain; charset=utf-8\r\n"), "%s", r.head);
    const char *hdr = "\nkubesched flagz\nWarning: This endpoint is not meant to be machine "
                      "parseable, has no formatting compatibility guarantees and is for "
                      "debugging purposes only.\n";
    cr_assert(!strncmp(r.body, hdr, strlen(hdr)), "%s", r.body);
    /* the separator is one of upstream's, the same on every line (no space after it here) */
    const char *rest = r.body + strlen(hdr), *seps[] = {": ", ":", "=", " "};
    const char *sep = NULL;
    for (int i = 0; i < 4 && !sep; i++)
        if (!strncmp(rest + strlen("bind-address"), seps[i], strlen(seps[i])) &&
            !strncmp(rest + strlen("bind-address") + strlen(seps[i]), "127", 3))
            sep = seps[i];
    cr_assert_not_null(sep, "%s", rest);
    char want[512];
    snprintf(want, sizeof want,
             "bind-address%s127.0.0.1\nconfig%s/etc/ks.yaml\nleader-elect%strue\nv%s2\n", sep, sep,
             sep, sep);
    cr_expect_str_eq(rest, want);
    free(r.body);
    /* HEAD: the same headers, no body */
    r = raw(port, "HEAD /flagz HTTP/1.1\r\nHost: x\r\n\r\n");
    cr_expect_eq(r.status, 200);
    cr_expect_eq(r.body_len, 0);
    free(r.body);
    ks__httpserver_stop(s);
}

Test(httpserver, zpages_are_404_without_them)
{
    ks_httpserver_opts o = {.bind_address = "127.0.0.1"};
    ks_httpserver *s = start(&o);
    int port = ks__httpserver_port(s);
    expect(port, "/statusz", 404, "404 page not found\n");
    expect(port, "/flagz", 404, "404 page not found\n");
    ks__httpserver_stop(s);
}

/* --- idle and slow clients (issue 12) ----------------------------------------------------------
 * The hand-written server served one connection at a time: four idle TCP connections delayed
 * /healthz by 19 s. Now 100 idle connections (nothing sent) and 10 slow clients (a byte of a
 * request head every 20 ms, never finishing it) are open while /healthz is probed: it answers
 * within 100 ms (the median of 20; no probe over 500 ms). */
static struct {
    int fds[10];
    atomic_int stop;
    atomic_int sent; /* bytes the slow clients have sent so far */
} slow;

static void *slow_clients(void *arg)
{
    (void)arg;
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
    for (size_t i = 0; !atomic_load(&slow.stop); i++) {
        char c = i < sizeof head - 1 ? head[i] : 'a';
        for (int k = 0; k < 10; k++)
            if (send(slow.fds[k], &c, 1, MSG_NOSIGNAL) == 1)
                atomic_fetch_add(&slow.sent, 1);
        usleep(20 * 1000);
    }
    return NULL;
}

Test(httpserver, healthz_answers_within_100ms_with_idle_and_slow_clients, .timeout = 60)
{
    ks_httpserver_opts o = {.bind_address = "127.0.0.1"};
    ks_httpserver *s = start(&o);
    int port = ks__httpserver_port(s);
    int idle[100];
    for (int i = 0; i < 100; i++)
        idle[i] = connect_local(port);
    for (int i = 0; i < 10; i++)
        slow.fds[i] = connect_local(port);
    atomic_store(&slow.stop, 0);
    atomic_store(&slow.sent, 0);
    pthread_t t;
    pthread_create(&t, NULL, slow_clients, NULL);
    while (atomic_load(&slow.sent) < 10 * 5) /* every slow client is mid-request */
        usleep(1000);
    double took[20], worst = 0;
    for (int i = 0; i < 20; i++) {
        double t0 = now_s();
        reply r = get(port, "/healthz");
        took[i] = now_s() - t0;
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.body, "ok");
        free(r.body);
        if (took[i] > worst)
            worst = took[i];
    }
    /* The idle clients are still connected: nothing was dropped to make room. */
    for (int i = 0; i < 100; i += 33) {
        char c;
        errno = 0;
        cr_assert_eq(recv(idle[i], &c, 1, MSG_DONTWAIT), -1, "idle client %d was closed", i);
        cr_assert(errno == EAGAIN || errno == EWOULDBLOCK, "idle client %d: %s", i,
                  strerror(errno));
    }
    atomic_store(&slow.stop, 1);
    pthread_join(t, NULL);
    /* Typically about 1 ms. Under `ctest` other tests of this binary run beside it on a shared
     * machine (RSA key generation, 110-connection TLS tests): one probe in 20 was seen at 110 ms.
     * So: the median under 100 ms and every probe under 500 ms. The hand-written server made the
     * first probe wait 5 s for each of the 110 connections ahead of it. */
    for (int i = 1; i < 20; i++)
        for (int j = i; j > 0 && took[j - 1] > took[j]; j--) {
            double x = took[j];
            took[j] = took[j - 1];
            took[j - 1] = x;
        }
    double median = (took[9] + took[10]) / 2;
    cr_assert_lt(median, 0.100,
                 "the median /healthz took %.1f ms with 110 clients holding "
                 "connections open",
                 median * 1e3);
    cr_assert_lt(worst, 0.500, "the slowest /healthz took %.1f ms", worst * 1e3);
    cr_log_info("/healthz with 100 idle and 10 slow clients: median %.2f ms, slowest %.2f ms",
                median * 1e3, worst * 1e3);
    for (int i = 0; i < 100; i++)
        close(idle[i]);
    for (int i = 0; i < 10; i++)
        close(slow.fds[i]);
    ks__httpserver_stop(s);
}
