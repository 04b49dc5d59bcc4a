/*
 * HTTPS on the serving port (core/live/tlsserve.c with core/live/httpserver.c): the self-signed
 * identity made at start, certificate and key files, and the errors for files that do not fit.
 * libcurl is the client, as a probe or Prometheus would be; PEM files are made with the openssl
 * command (tests/install-deps.sh installs it).
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/httpserver.h"
#include "kubesched/plugin.h"
#include "live/tlsserve.h"

typedef struct body {
    char buf[4096];
    size_t len;
} body;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    body *b = ud;
    size_t k = size * n;
    if (b->len + k >= sizeof b->buf)
        k = sizeof b->buf - 1 - b->len;
    memcpy(b->buf + b->len, p, k);
    b->len += k;
    b->buf[b->len] = '\0';
    return size * n;
}

/* GET url; returns the status (0 if the request failed) and fills *b and, if asked, the
 * subject of the server's certificate. */
static long get(const char *url, const char *cafile, body *b, char *subject, size_t sublen)
{
    CURL *c = curl_easy_init();
    long status = 0;
    memset(b, 0, sizeof *b);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    if (cafile)
        curl_easy_setopt(c, CURLOPT_CAINFO, cafile);
    else
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, cafile ? 2L : 0L);
    if (curl_easy_perform(c) == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        struct curl_certinfo *ci = NULL;
        if (subject && curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci &&
            ci->num_of_certs > 0)
            for (struct curl_slist *s = ci->certinfo[0]; s; s = s->next)
                if (!strncmp(s->data, "Subject:", 8))
                    snprintf(subject, sublen, "%s", s->data + 8);
    }
    curl_easy_cleanup(c);
    return status;
}

static ks_httpserver *start_tls(ks_tls_ctx *tls)
{
    ks_httpserver *s = NULL;
    ks_httpserver_opts o = {.bind_address = "127.0.0.1", .tls = tls};
    cr_assert_eq(ks__httpserver_start(&o, &s), 0);
    return s;
}

static void init(void)
{
    signal(SIGPIPE, SIG_IGN); /* as kubesched's main does in live mode */
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

TestSuite(tlsserve, .init = init);

Test(tlsserve, self_signed_serves_healthz_over_https_for_localhost)
{
    char err[512] = "";
    ks_tls_ctx *tls = NULL;
    cr_assert_eq(ks__tls_ctx_create(NULL, NULL, &tls, err, sizeof err), 0, "%s", err);
    ks_httpserver *s = start_tls(tls);
    char url[64], subject[256] = "";
    body b;
    snprintf(url, sizeof url, "https://127.0.0.1:%d/healthz", ks__httpserver_port(s));
    cr_expect_eq(get(url, NULL, &b, subject, sizeof subject), 200);
    cr_expect_str_eq(b.buf, "ok");
    cr_expect(strstr(subject, "CN=localhost@") || strstr(subject, "CN = localhost@"), "subject: %s",
              subject);
    /* A plain-HTTP client gets no answer (the handshake fails), and the server keeps serving. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/healthz", ks__httpserver_port(s));
    cr_expect_eq(get(url, NULL, &b, NULL, 0), 0);
    snprintf(url, sizeof url, "https://127.0.0.1:%d/livez", ks__httpserver_port(s));
    cr_expect_eq(get(url, NULL, &b, NULL, 0), 200);
    ks__httpserver_stop(s);
    ks__tls_ctx_free(tls);
}

/* openssl req: a self-signed certificate for 127.0.0.1 and its key, in dir. */
static void make_pair(const char *dir, const char *name)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=%s "
             "-addext subjectAltName=IP:127.0.0.1 -keyout %s/%s.key -out %s/%s.crt >/dev/null 2>&1",
             name, dir, name, dir, name);
    cr_assert_eq(system(cmd), 0, "openssl req failed: is the openssl command installed?");
}

Test(tlsserve, files_are_served_and_verified_by_their_ca)
{
    char dir[] = "/tmp/ks-tls-XXXXXX", crt[128], key[128], url[64], err[512] = "";
    cr_assert_not_null(mkdtemp(dir));
    make_pair(dir, "serving");
    snprintf(crt, sizeof crt, "%s/serving.crt", dir);
    snprintf(key, sizeof key, "%s/serving.key", dir);
    ks_tls_ctx *tls = NULL;
    cr_assert_eq(ks__tls_ctx_create(crt, key, &tls, err, sizeof err), 0, "%s", err);
    ks_httpserver *s = start_tls(tls);
    body b;
    snprintf(url, sizeof url, "https://127.0.0.1:%d/readyz", ks__httpserver_port(s));
    /* Verified against the certificate itself as the CA: the server really presents it. */
    cr_expect_eq(get(url, crt, &b, NULL, 0), 200);
    cr_expect_str_eq(b.buf, "ok");
    ks__httpserver_stop(s);
    ks__tls_ctx_free(tls);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(tlsserve, files_that_do_not_fit_are_refused_with_the_flag_and_file)
{
    char dir[] = "/tmp/ks-tls-XXXXXX", a_crt[128], b_key[128], err[512] = "";
    cr_assert_not_null(mkdtemp(dir));
    make_pair(dir, "a");
    make_pair(dir, "b");
    snprintf(a_crt, sizeof a_crt, "%s/a.crt", dir);
    snprintf(b_key, sizeof b_key, "%s/b.key", dir);
    ks_tls_ctx *tls = NULL;

    cr_expect_eq(ks__tls_ctx_create(a_crt, b_key, &tls, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "does not match") && strstr(err, b_key), "%s", err);
    cr_expect_null(tls);

    cr_expect_eq(ks__tls_ctx_create(a_crt, NULL, &tls, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "--tls-private-key-file is missing"), "%s", err);

    cr_expect_eq(ks__tls_ctx_create("/nonexistent/x.crt", b_key, &tls, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "--tls-cert-file /nonexistent/x.crt"), "%s", err);

    /* A key file given as the certificate: not a certificate. */
    cr_expect_eq(ks__tls_ctx_create(b_key, b_key, &tls, err, sizeof err), KS_EINVAL);
    cr_expect(strstr(err, "cannot read a PEM certificate"), "%s", err);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A client that resets the connection as soon as it has sent its request: the server's answer
 * (and its close_notify) hit a dead socket. OpenSSL writes with write(2), so without care that
 * raises SIGPIPE: the server must survive it even where SIGPIPE is not ignored. */
Test(tlsserve, a_client_that_resets_does_not_kill_the_process_with_sigpipe)
{
    signal(SIGPIPE, SIG_DFL); /* a program that embeds the server and did not ignore it */
    char err[512] = "";
    ks_tls_ctx *tls = NULL;
    cr_assert_eq(ks__tls_ctx_create(NULL, NULL, &tls, err, sizeof err), 0, "%s", err);
    ks_httpserver *s = start_tls(tls);
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    cr_assert_not_null(cctx);
    for (int i = 0; i < 20; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)ks__httpserver_port(s)),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
        SSL *ssl = SSL_new(cctx);
        SSL_set_fd(ssl, fd);
        cr_assert_eq(SSL_connect(ssl), 1);
        const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
        cr_assert_gt(SSL_write(ssl, req, (int)strlen(req)), 0);
        struct linger lg = {1, 0}; /* close with RST */
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        SSL_free(ssl);
        close(fd);
        usleep(20000);
    }
    SSL_CTX_free(cctx);
    body b;
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/healthz", ks__httpserver_port(s));
    cr_expect_eq(get(url, NULL, &b, NULL, 0), 200);
    ks__httpserver_stop(s);
    ks__tls_ctx_free(tls);
}

/* A passphrase-protected key is refused at once, with a reason, never by asking for the
 * passphrase on the terminal (OpenSSL's default when no callback is set: a hang for a daemon
 * started from a shell). */
Test(tlsserve, an_encrypted_key_is_refused_without_asking_for_a_passphrase, .timeout = 20)
{
    char dir[] = "/tmp/ks-tls-XXXXXX", crt[128], key[128], cmd[512], err[512] = "";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(crt, sizeof crt, "%s/e.crt", dir);
    snprintf(key, sizeof key, "%s/e.key", dir);
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -passout pass:secret -days 1 -subj /CN=e "
             "-keyout %s -out %s >/dev/null 2>&1",
             key, crt);
    cr_assert_eq(system(cmd), 0, "openssl req failed: is the openssl command installed?");
    ks_tls_ctx *tls = NULL;
    cr_expect_eq(ks__tls_ctx_create(crt, key, &tls, err, sizeof err), KS_EINVAL);
    cr_expect_null(tls);
    cr_expect(strstr(err, "--tls-private-key-file") && strstr(err, key), "%s", err);
    cr_expect(strstr(err, "encrypted"), "%s", err);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Over TLS as live mode serves: 100 connections that never start the handshake and 10 that send
 * a byte of it every 20 ms do not delay an HTTPS /healthz (each handshake has its own thread). */
static atomic_int g_stop_slow;

static void *drip(void *arg)
{
    int *fds = arg;
    while (!atomic_load(&g_stop_slow)) {
        for (int k = 0; k < 10; k++)
            send(fds[k], "\x16", 1, MSG_NOSIGNAL); /* a TLS handshake record type, then more */
        usleep(20 * 1000);
    }
    return NULL;
}

static int connect_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

Test(tlsserve, https_healthz_within_100ms_with_idle_and_slow_clients, .timeout = 60)
{
    char err[512] = "", url[64];
    ks_tls_ctx *tls = NULL;
    cr_assert_eq(ks__tls_ctx_create(NULL, NULL, &tls, err, sizeof err), 0, "%s", err);
    ks_httpserver *s = start_tls(tls);
    int port = ks__httpserver_port(s), idle[100], slow[10];
    for (int i = 0; i < 100; i++)
        idle[i] = connect_port(port);
    for (int i = 0; i < 10; i++)
        slow[i] = connect_port(port);
    atomic_store(&g_stop_slow, 0);
    pthread_t t;
    pthread_create(&t, NULL, drip, slow);
    snprintf(url, sizeof url, "https://127.0.0.1:%d/healthz", port);
    double took[10], worst = 0;
    body b;
    for (int i = 0; i < 10; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long status = get(url, NULL, &b, NULL, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        took[i] = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        cr_assert_eq(status, 200);
        cr_assert_str_eq(b.buf, "ok");
        if (took[i] > worst)
            worst = took[i];
    }
    atomic_store(&g_stop_slow, 1);
    pthread_join(t, NULL);
    /* Each probe is a new connection with a full RSA handshake, which a loaded machine (the
     * sanitizer suite runs beside other builds) can slow on its own: the median must be under
     * 100 ms, the slowest under 500 ms. The hand-written server made the first probe wait 5 s
     * for each connection ahead of it. */
    for (int i = 1; i < 10; i++)
        for (int j = i; j > 0 && took[j - 1] > took[j]; j--) {
            double x = took[j];
            took[j] = took[j - 1];
            took[j - 1] = x;
        }
    double median = (took[4] + took[5]) / 2;
    cr_assert_lt(median, 0.100, "the median HTTPS /healthz took %.1f ms", median * 1e3);
    cr_assert_lt(worst, 0.500, "the slowest HTTPS /healthz took %.1f ms", worst * 1e3);
    cr_log_info("HTTPS /healthz with 100 idle and 10 slow clients: median %.2f ms, slowest %.2f ms",
                median * 1e3, worst * 1e3);
    for (int i = 0; i < 100; i++)
        close(idle[i]);
    for (int i = 0; i < 10; i++)
        close(slow[i]);
    ks__httpserver_stop(s);
    ks__tls_ctx_free(tls);
}
