/*
 * The health and metrics HTTP server (see httpserver.h for the endpoints).
 *
 * One thread polls the listening socket and a wake-up pipe; it accepts a connection, reads the
 * request head (up to 8 KiB, within 5 seconds), writes the whole answer and closes. stop writes
 * a byte into the pipe, which every wait of the thread also watches, so shutdown never waits on
 * a slow client, and then joins the thread. A client that hangs up early must not raise SIGPIPE
 * in the scheduler: plain writes use MSG_NOSIGNAL, and since OpenSSL writes with write(2), the
 * thread keeps SIGPIPE blocked (a SIGPIPE a write raises stays pending on it, harmless).
 */
#define _GNU_SOURCE /* accept4, pipe2 */
#include "live/httpserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "util/clock.h"
#include "util/log.h"

#define REQUEST_MAX 8192
#define IO_TIMEOUT_MS 5000

struct ks_httpserver {
    int listen_fd;
    int wake[2]; /* pipe: stop writes, the thread polls the read end */
    int port;
    ks_metrics *metrics;
    ks_http_check *checks; /* readiness; names owned */
    size_t nchecks;
    size_t nready_before_shutdown;
    ks_http_check *hchecks; /* /healthz; names owned */
    size_t nhchecks;
    int not_ready_status;
    atomic_bool shutting_down;
    SSL_CTX *tls; /* borrowed; NULL: plain HTTP */
    pthread_t thread;
};

/* One accepted connection: a non-blocking socket, with TLS on it when the server has a context. */
typedef struct conn {
    ks_httpserver *s;
    int fd;
    SSL *ssl;
    bool ssl_failed; /* a fatal error (SSL_ERROR_SYSCALL / _SSL): no SSL_shutdown then */
} conn;

/* --- small helpers ------------------------------------------------------------------------- */

static int64_t now_ms(void) { return ks__clock_now_ms(); }

/* Waits until fd is ready for `events` or the deadline passes or stop is requested.
 * 1 ready, 0 timed out or stopping, -1 error. */
static int wait_fd(ks_httpserver *s, int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = s->wake[0], .events = POLLIN}};
        int n = poll(p, 2, (int)left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (p[1].revents)
            return 0;
        if (p[0].revents)
            return 1;
    }
}

/* After an OpenSSL call on c returned r <= 0: waits for what it needs. true: try again. */
static bool ssl_retry(conn *c, int r, int64_t deadline)
{
    switch (SSL_get_error(c->ssl, r)) {
    case SSL_ERROR_WANT_READ:
        return wait_fd(c->s, c->fd, POLLIN, deadline) == 1;
    case SSL_ERROR_WANT_WRITE:
        return wait_fd(c->s, c->fd, POLLOUT, deadline) == 1;
    case SSL_ERROR_SYSCALL:
    case SSL_ERROR_SSL:
        c->ssl_failed = true;
        /* fall through */
    default:
        ERR_clear_error(); /* the queue is per thread; leave it clean for the next connection */
        return false;
    }
}

static bool conn_send(conn *c, const char *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        if (c->ssl) {
            int w = SSL_write(c->ssl, p, n > 1 << 30 ? 1 << 30 : (int)n);
            if (w > 0) {
                p += w;
                n -= (size_t)w;
            } else if (!ssl_retry(c, w, deadline)) {
                return false;
            }
            continue;
        }
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(c->s, c->fd, POLLOUT, deadline) != 1)
                return false;
        } else {
            return false;
        }
    }
    return true;
}

/* Up to n bytes: > 0 read, 0 the client went away, timed out or failed. */
static size_t conn_recv(conn *c, char *p, size_t n, int64_t deadline)
{
    for (;;) {
        if (c->ssl) {
            int r = SSL_read(c->ssl, p, n > 1 << 30 ? 1 << 30 : (int)n);
            if (r > 0)
                return (size_t)r;
            if (!ssl_retry(c, r, deadline))
                return 0;
            continue;
        }
        ssize_t r = recv(c->fd, p, n, MSG_DONTWAIT);
        if (r > 0)
            return (size_t)r;
        if (r == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if ((errno != EAGAIN && errno != EWOULDBLOCK) ||
            wait_fd(c->s, c->fd, POLLIN, deadline) != 1)
            return 0;
    }
}

/* The TLS handshake, within the deadline. false: the client gave up or spoke no TLS. */
static bool conn_handshake(conn *c, int64_t deadline)
{
    ERR_clear_error(); /* SSL_get_error reads this thread's queue: it must start empty */
    if (!(c->ssl = SSL_new(c->s->tls)) || SSL_set_fd(c->ssl, c->fd) != 1)
        return false;
    for (;;) {
        int r = SSL_accept(c->ssl);
        if (r == 1)
            return true;
        if (!ssl_retry(c, r, deadline))
            return false;
    }
}

/* --- responses ----------------------------------------------------------------------------- */

typedef struct response {
    int status;
    const char *content_type;
    const char *extra_headers; /* "Name: value\r\n"... or NULL */
    char *body;                /* malloc'd, or NULL when static_body is used */
    const char *static_body;
    size_t body_len;
} response;

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

static void respond_static(response *r, int status, const char *body)
{
    r->status = status;
    r->content_type = "text/plain; charset=utf-8";
    r->static_body = body;
    r->body_len = strlen(body);
}

static void send_response(conn *c, const response *r, bool head_only)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\n"
                     "Content-Type: %s\r\n"
                     "Content-Length: %zu\r\n"
                     "X-Content-Type-Options: nosniff\r\n"
                     "%s"
                     "Connection: close\r\n"
                     "\r\n",
                     r->status, reason_phrase(r->status), r->content_type, r->body_len,
                     r->extra_headers ? r->extra_headers : "");
    int64_t deadline = now_ms() + IO_TIMEOUT_MS;
    if (n < 0 || (size_t)n >= sizeof head || !conn_send(c, head, (size_t)n, deadline))
        return;
    if (!head_only)
        conn_send(c, r->body ? r->body : r->static_body, r->body_len, deadline);
}

/* /healthz, /livez and /readyz, as k8s.io/apiserver's handleRootHealth. kind: 'h' /healthz
 * (its checks, or "ping" when it has none, as healthz.InstallHandler), 'l' /livez ("ping"),
 * 'r' /readyz (the readiness checks with "shutdown" among them). */
static void health(ks_httpserver *s, response *r, const char *name, char kind, bool verbose)
{
    const ks_http_check *list = kind == 'r' ? s->checks : kind == 'h' ? s->hchecks : NULL;
    size_t nlist = kind == 'r' ? s->nchecks : kind == 'h' ? s->nhchecks : 0;
    size_t shutdown_at = kind == 'r' ? s->nready_before_shutdown : (size_t)-1;
    size_t nchecks = kind == 'r' ? nlist + 1 : nlist ? nlist : 1;
    /* Lines "[+]x ok\n" / "[-]x failed: reason withheld\n", then the verdict. */
    size_t cap = 64 + strlen(name) + 40 * nchecks;
    for (size_t i = 0; i < nlist; i++)
        cap += strlen(list[i].name);
    char *body = malloc(cap);
    if (!body) {
        respond_static(r, 500, "out of memory\n");
        return;
    }
    size_t len = 0;
    bool failed = false;
    for (size_t i = 0, next = 0; i < nchecks; i++) {
        const char *cname;
        bool ok;
        if (kind == 'r' && i == shutdown_at) {
            cname = "shutdown";
            ok = !atomic_load(&s->shutting_down);
        } else if (next < nlist) {
            cname = list[next].name;
            ok = list[next].ready(list[next].ctx) != 0;
            next++;
        } else {
            cname = "ping";
            ok = true;
        }
        failed |= !ok;
        len += (size_t)snprintf(body + len, cap - len,
                                ok ? "[+]%s ok\n" : "[-]%s failed: reason withheld\n", cname);
    }
    if (failed) {
        /* http.Error: the message plus a newline. */
        snprintf(body + len, cap - len, "%s check failed\n", name);
        r->status = s->not_ready_status;
        if (ks__log_enabled(2))
            ks__log('I', "httpserver", "%s check failed", name);
    } else if (verbose) {
        snprintf(body + len, cap - len, "%s check passed\n", name);
        r->status = 200;
    } else {
        snprintf(body, cap, "ok");
        r->status = 200;
    }
    r->content_type = "text/plain; charset=utf-8";
    r->body = body;
    r->body_len = strlen(body);
}

/* True if the query string has the key (with or without a value), as url.Query()[key]. */
static bool query_has(const char *query, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = query; p && *p;) {
        const char *end = strchr(p, '&');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n >= kl && strncmp(p, key, kl) == 0 && (n == kl || p[kl] == '='))
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static void route(ks_httpserver *s, const char *path, const char *query, response *r)
{
    bool verbose = query_has(query, "verbose");
    if (strcmp(path, "/healthz") == 0) {
        health(s, r, "healthz", 'h', verbose);
    } else if (strcmp(path, "/livez") == 0) {
        health(s, r, "livez", 'l', verbose);
    } else if (strcmp(path, "/readyz") == 0) {
        health(s, r, "readyz", 'r', verbose);
    } else if (strcmp(path, "/metrics") == 0 && s->metrics) {
        char *text = NULL;
        size_t len = 0;
        if (ks__metrics_render(s->metrics, &text, &len) != 0) {
            respond_static(r, 500, "out of memory\n");
            return;
        }
        r->status = 200;
        r->content_type = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores";
        r->body = text;
        r->body_len = len;
    } else {
        respond_static(r, 404, "404 page not found\n");
    }
}

/* Reads the request head, answers, closes. */
static void serve(ks_httpserver *s, int fd)
{
    char req[REQUEST_MAX + 1];
    size_t len = 0;
    int64_t deadline = now_ms() + IO_TIMEOUT_MS;
    response r = {0};
    bool head_only = false;
    conn c = {s, fd, NULL, false};

    if (s->tls && !conn_handshake(&c, deadline))
        goto done;
    for (;;) {
        req[len] = '\0';
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
            break;
        if (len == REQUEST_MAX) {
            respond_static(&r, 431, "request head too large\n");
            goto answer;
        }
        size_t n = conn_recv(&c, req + len, REQUEST_MAX - len, deadline);
        if (n == 0)
            goto done; /* the client went away, timed out, or we are stopping */
        len += n;
    }

    /* Request line: METHOD SP target SP HTTP/1.x */
    char *eol = strpbrk(req, "\r\n");
    *eol = '\0';
    char *method = req, *target = strchr(req, ' ');
    char *version = target ? strchr(target + 1, ' ') : NULL;
    if (!target || !version || strncmp(version + 1, "HTTP/1.", 7) != 0 || target[1] != '/') {
        respond_static(&r, 400, "400 Bad Request\n");
        goto answer;
    }
    *target++ = '\0';
    *version = '\0';
    char *query = strchr(target, '?');
    if (query)
        *query++ = '\0';
    head_only = strcmp(method, "HEAD") == 0;
    if (!head_only && strcmp(method, "GET") != 0) {
        respond_static(&r, 405, "405 method not allowed\n");
        r.extra_headers = "Allow: GET, HEAD\r\n";
        goto answer;
    }
    route(s, target, query, &r);

answer:
    send_response(&c, &r, head_only);
    free(r.body);
done:
    if (c.ssl) {
        /* close_notify, without waiting for the client's; never after a fatal error or before
         * the handshake finished (SSL_shutdown(3)). */
        if (!c.ssl_failed && SSL_is_init_finished(c.ssl))
            SSL_shutdown(c.ssl);
        SSL_free(c.ssl);
    }
    ERR_clear_error();
    /* Half-close first so the client reads the whole answer before the FIN. */
    shutdown(fd, SHUT_WR);
    close(fd);
}

static void *server_main(void *arg)
{
    ks_httpserver *s = arg;
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
    for (;;) {
        struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN},
                              {.fd = s->wake[0], .events = POLLIN}};
        int n = poll(p, 2, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            ks__log('E', "httpserver", "poll: %s", strerror(errno));
            break;
        }
        if (p[1].revents)
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            /* ECONNABORTED, EMFILE and friends: keep serving; back off on fd exhaustion. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                poll(p + 1, 1, 100);
            continue;
        }
        serve(s, fd);
    }
    return NULL;
}

/* --- lifecycle ----------------------------------------------------------------------------- */

static void server_free(ks_httpserver *s)
{
    if (!s)
        return;
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->wake[0] >= 0)
        close(s->wake[0]);
    if (s->wake[1] >= 0)
        close(s->wake[1]);
    for (size_t i = 0; i < s->nchecks; i++)
        free((char *)s->checks[i].name);
    free(s->checks);
    for (size_t i = 0; i < s->nhchecks; i++)
        free((char *)s->hchecks[i].name);
    free(s->hchecks);
    free(s);
}

static int listen_on(ks_httpserver *s, const char *addr, int port)
{
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(addr, portstr, &hints, &res);
    if (gai != 0) {
        ks__log('E', "httpserver", "bind address \"%s\": %s (want an IP address or a host name)",
                addr, gai_strerror(gai));
        return KS_EINVAL;
    }
    int err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd =
            socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) {
            s->listen_fd = fd;
            break;
        }
        err = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (s->listen_fd < 0) {
        ks__log('E', "httpserver", "cannot listen on %s:%d: %s", addr, port, strerror(err));
        return KS_EIO;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(s->listen_fd, (struct sockaddr *)&ss, &sl) == 0)
        s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

int ks__httpserver_start(const ks_httpserver_opts *o, ks_httpserver **out)
{
    if (out)
        *out = NULL;
    if (!o || !out || o->port < 0 || o->port > 65535 || (o->nready_checks && !o->ready_checks)) {
        ks__log('E', "httpserver", "invalid options (port must be 0..65535)");
        return KS_EINVAL;
    }
    for (size_t i = 0; i < o->nready_checks; i++)
        if (!o->ready_checks[i].name || !*o->ready_checks[i].name || !o->ready_checks[i].ready) {
            ks__log('E', "httpserver", "ready_checks[%zu]: a check needs a name and a function", i);
            return KS_EINVAL;
        }
    if ((o->nhealth_checks && !o->health_checks) || o->nready_before_shutdown > o->nready_checks) {
        ks__log('E', "httpserver",
                "invalid options (health_checks missing, or nready_before_shutdown "
                "larger than nready_checks)");
        return KS_EINVAL;
    }
    for (size_t i = 0; i < o->nhealth_checks; i++)
        if (!o->health_checks[i].name || !*o->health_checks[i].name || !o->health_checks[i].ready) {
            ks__log('E', "httpserver", "health_checks[%zu]: a check needs a name and a function",
                    i);
            return KS_EINVAL;
        }

    ks_httpserver *s = calloc(1, sizeof *s);
    if (!s)
        return KS_ENOMEM;
    s->listen_fd = s->wake[0] = s->wake[1] = -1;
    s->metrics = o->metrics;
    s->tls = o->tls;
    s->not_ready_status = o->not_ready_status ? o->not_ready_status : 500;
    atomic_init(&s->shutting_down, false);
    int rc = KS_ENOMEM;
    if (o->nready_checks) {
        if (!(s->checks = calloc(o->nready_checks, sizeof *s->checks)))
            goto fail;
        for (size_t i = 0; i < o->nready_checks; i++) {
            s->checks[i] = o->ready_checks[i];
            if (!(s->checks[i].name = strdup(o->ready_checks[i].name)))
                goto fail;
            s->nchecks++;
        }
    }
    s->nready_before_shutdown = o->nready_before_shutdown;
    if (o->nhealth_checks) {
        if (!(s->hchecks = calloc(o->nhealth_checks, sizeof *s->hchecks)))
            goto fail;
        for (size_t i = 0; i < o->nhealth_checks; i++) {
            s->hchecks[i] = o->health_checks[i];
            if (!(s->hchecks[i].name = strdup(o->health_checks[i].name)))
                goto fail;
            s->nhchecks++;
        }
    }
    if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        ks__log('E', "httpserver", "pipe: %s", strerror(errno));
        rc = KS_EIO;
        goto fail;
    }
    const char *addr = o->bind_address && *o->bind_address ? o->bind_address : "0.0.0.0";
    if ((rc = listen_on(s, addr, o->port)) != 0)
        goto fail;
    int e = pthread_create(&s->thread, NULL, server_main, s);
    if (e != 0) {
        ks__log('E', "httpserver", "cannot start the server thread: %s", strerror(e));
        rc = KS_EIO;
        goto fail;
    }
    *out = s;
    return 0;

fail:
    server_free(s);
    return rc;
}

int ks__httpserver_port(const ks_httpserver *s) { return s ? s->port : 0; }

void ks__httpserver_shutting_down(ks_httpserver *s)
{
    if (s)
        atomic_store(&s->shutting_down, true);
}

void ks__httpserver_stop(ks_httpserver *s)
{
    if (!s)
        return;
    char c = 1;
    while (write(s->wake[1], &c, 1) < 0 && errno == EINTR) {
    }
    pthread_join(s->thread, NULL);
    server_free(s);
}
