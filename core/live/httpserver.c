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

#include <cjson/cJSON.h>
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
    /* /statusz and /flagz (zp.component NULL: not served); strings and flags owned, flags
     * sorted by name; paths: what /statusz lists. */
    ks_http_zpages zp;
    char paths[128];
    unsigned rnd; /* the server thread's rand_r state, for the text pages' delimiter */
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
    case 406:
        return "Not Acceptable";
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

/* --- /statusz and /flagz --------------------------------------------------------------------- */

/* The delimiters upstream picks from at random for each text page, so that nobody parses it. */
static const char *const k_delims[] = {":", ": ", "=", " "};

static const char k_zheader[] =
    "\n%s %s\nWarning: This endpoint is not meant to be machine parseable, has no formatting "
    "compatibility guarantees and is for debugging purposes only.\n";

/* The value of request header `name` (case-insensitive) in the header block `headers` (the lines
 * after the request line), trimmed, into out; false when absent. Repeated headers: the first. */
static bool header_value(const char *headers, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    for (const char *p = headers; p && *p;) {
        const char *end = strpbrk(p, "\r\n");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1, *e = p + n;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
            snprintf(out, outlen, "%.*s", (int)(e - v), v);
            return true;
        }
        if (!end)
            break;
        p = end + (end[0] == '\r' && end[1] == '\n' ? 2 : 1);
    }
    return false;
}

/* One clause of an Accept header, as goautoneg.ParseAccept reads it. */
typedef struct accept_clause {
    char type[32], subtype[32];
    double q;
    char as[32], g[32], v[32]; /* the conversion target (as=, g=, v=) */
    bool has_gvk, bad;         /* bad: stream= or sv= asked for, which these pages refuse */
    int order;
} accept_clause;

static void trim_copy(char *dst, size_t cap, const char *p, size_t n)
{
    while (n && *p == ' ')
        p++, n--;
    while (n && p[n - 1] == ' ')
        n--;
    snprintf(dst, cap, "%.*s", (int)n, p);
}

/* goautoneg's order: higher q first, then concrete types before wildcards; stable here. */
static int clause_less(const accept_clause *a, const accept_clause *b)
{
    if (a->q != b->q)
        return a->q > b->q;
    if (strcmp(a->type, "*") && !strcmp(b->type, "*"))
        return 1;
    if (strcmp(a->subtype, "*") && !strcmp(b->subtype, "*"))
        return 1;
    return 0;
}

static size_t parse_accept(const char *h, accept_clause *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = h; *p && n < cap;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char part[512];
        trim_copy(part, sizeof part, p, len);
        p = end ? end + 1 : p + len;
        accept_clause c = {.q = 1.0, .order = (int)n};
        char *semi = strchr(part, ';');
        if (semi)
            *semi = '\0';
        char *slash = strchr(part, '/');
        if (!slash) {
            if (strcmp(part, "*") != 0)
                continue; /* "type" alone is not a media range, except "*" */
            snprintf(c.type, sizeof c.type, "*");
            snprintf(c.subtype, sizeof c.subtype, "*");
        } else {
            if (strchr(slash + 1, '/'))
                continue;
            trim_copy(c.type, sizeof c.type, part, (size_t)(slash - part));
            trim_copy(c.subtype, sizeof c.subtype, slash + 1, strlen(slash + 1));
        }
        for (char *q = semi ? semi + 1 : NULL; q && *q;) {
            char *qe = strchr(q, ';');
            if (qe)
                *qe = '\0';
            char *eq = strchr(q, '=');
            if (eq && !strchr(eq + 1, '=')) {
                char key[32], val[64];
                trim_copy(key, sizeof key, q, (size_t)(eq - q));
                trim_copy(val, sizeof val, eq + 1, strlen(eq + 1));
                if (!strcmp(key, "q"))
                    c.q = strtod(val, NULL);
                else if (!strcmp(key, "as"))
                    c.has_gvk = true, snprintf(c.as, sizeof c.as, "%s", val);
                else if (!strcmp(key, "g"))
                    c.has_gvk = true, snprintf(c.g, sizeof c.g, "%s", val);
                else if (!strcmp(key, "v"))
                    c.has_gvk = true, snprintf(c.v, sizeof c.v, "%s", val);
                else if ((!strcmp(key, "stream") || !strcmp(key, "sv")) && val[0])
                    c.bad = true;
            }
            q = qe ? qe + 1 : NULL;
        }
        out[n++] = c;
    }
    /* insertion sort: stable, and n is small */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && clause_less(&out[j], &out[j - 1]); j--) {
            accept_clause t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

enum { Z_TEXT, Z_JSON, Z_NOT_ACCEPTABLE };

/* k8s.io/apiserver's NegotiateMediaTypeOptions over the media types these pages offer, in
 * upstream's order (application/json, then text/plain), with the zpages' restrictions: text/plain
 * only without a conversion target, JSON only with one of the recognized kinds
 * (config.k8s.io/v1beta1 or v1alpha1, kind `kind`). An empty Accept is text/plain. */
static int negotiate(const char *accept, const char *kind, const char **version)
{
    static const char *const offered[][2] = {{"application", "json"}, {"text", "plain"}};
    accept_clause cl[16];
    *version = NULL;
    if (!accept || !*accept)
        return Z_TEXT;
    size_t n = parse_accept(accept, cl, sizeof cl / sizeof cl[0]);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < 2; k++) {
            const char *t = offered[k][0], *st = offered[k][1];
            bool match = (!strcmp(cl[i].type, t) && !strcmp(cl[i].subtype, st)) ||
                         (!strcmp(cl[i].type, t) && !strcmp(cl[i].subtype, "*")) ||
                         (!strcmp(cl[i].type, "*") && !strcmp(cl[i].subtype, "*"));
            if (!match || cl[i].bad)
                continue;
            if (k == 1) {
                if (!cl[i].has_gvk)
                    return Z_TEXT;
                continue;
            }
            if (cl[i].has_gvk && !strcmp(cl[i].g, "config.k8s.io") && !strcmp(cl[i].as, kind) &&
                (!strcmp(cl[i].v, "v1beta1") || !strcmp(cl[i].v, "v1alpha1"))) {
                *version = !strcmp(cl[i].v, "v1beta1") ? "v1beta1" : "v1alpha1";
                return Z_JSON;
            }
        }
    }
    return Z_NOT_ACCEPTABLE;
}

/* responsewriters.ErrorNegotiated for the NotAcceptableError: a JSON Status. */
static void not_acceptable(response *r)
{
    respond_static(r, 406,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Failure\",\"message\":\"only the following media types are accepted: "
                   "application/json, text/plain\",\"reason\":\"NotAcceptable\",\"code\":406}\n");
    r->content_type = "application/json";
}

static void respond_json(response *r, cJSON *o, const char *version, const char *page)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    size_t n = text ? strlen(text) : 0;
    char *body = text ? realloc(text, n + 2) : NULL;
    if (!body) {
        free(text);
        respond_static(r, 500, "out of memory\n");
        return;
    }
    memcpy(body + n, "\n", 2); /* json.Encoder ends the document with a newline */
    r->status = 200;
    r->content_type = "application/json";
    r->body = body;
    r->body_len = n + 1;
    if (!strcmp(version, "v1alpha1"))
        r->extra_headers =
            !strcmp(page, "statusz")
                ? "Warning: 299 - \"This version of the statusz endpoint is deprecated. Please use "
                  "a newer version.\"\r\n"
                : "Warning: 299 - \"This version of the flagz endpoint is deprecated. Please use a "
                  "newer version.\"\r\n";
}

static cJSON *zobject(ks_httpserver *s, const char *kind, const char *version)
{
    cJSON *o = cJSON_CreateObject(), *meta = cJSON_CreateObject();
    char api_version[64];
    snprintf(api_version, sizeof api_version, "config.k8s.io/%s", version);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "apiVersion", api_version);
    cJSON_AddStringToObject(meta, "name", s->zp.component);
    cJSON_AddItemToObject(o, "metadata", meta);
    return o;
}

/* "%d hr %02d min %02d sec", as upstream's uptime(). */
static void uptime_text(int64_t up, char *buf, size_t len)
{
    snprintf(buf, len, "%lld hr %02lld min %02lld sec", (long long)(up / 3600),
             (long long)(up / 60 % 60), (long long)(up % 60));
}

static void statusz(ks_httpserver *s, const char *accept, response *r)
{
    const char *version;
    int how = negotiate(accept, "Statusz", &version);
    if (how == Z_NOT_ACCEPTABLE) {
        not_acceptable(r);
        return;
    }
    time_t start = (time_t)s->zp.start_time, now = time(NULL);
    int64_t up = now > start ? (int64_t)(now - start) : 0;
    if (how == Z_JSON) {
        cJSON *o = zobject(s, "Statusz", version);
        cJSON *ann = cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "metadata"), "annotations");
        cJSON_AddStringToObject(ann, "kubesched.io/compiler-version", s->zp.compiler_version);
        struct tm tm;
        char ts[32];
        gmtime_r(&start, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm); /* metav1.Time: RFC 3339, UTC */
        cJSON_AddStringToObject(o, "startTime", ts);
        cJSON_AddNumberToObject(o, "uptimeSeconds", (double)up);
        cJSON_AddStringToObject(o, "binaryVersion", s->zp.binary_version);
        if (s->zp.emulation_version && *s->zp.emulation_version)
            cJSON_AddStringToObject(o, "emulationVersion", s->zp.emulation_version);
        cJSON *paths = cJSON_AddArrayToObject(o, "paths");
        char copy[sizeof s->paths];
        snprintf(copy, sizeof copy, "%s", s->paths);
        char *save = NULL;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
            cJSON_AddItemToArray(paths, cJSON_CreateString(t));
        respond_json(r, o, version, "statusz");
        return;
    }
    const char *d = k_delims[rand_r(&s->rnd) % 4];
    struct tm tm;
    char started[64], upt[64], emu[96] = "", paths[sizeof s->paths + 16] = "";
    localtime_r(&start, &tm);
    strftime(started, sizeof started, "%a %b %e %H:%M:%S %Z %Y", &tm); /* time.UnixDate */
    uptime_text(up, upt, sizeof upt);
    if (s->zp.emulation_version && *s->zp.emulation_version)
        snprintf(emu, sizeof emu, "Emulation version%s %s", d, s->zp.emulation_version);
    if (s->paths[0])
        snprintf(paths, sizeof paths, "Paths%s %s", d, s->paths);
    size_t cap = 1024 + strlen(s->zp.component) + strlen(s->zp.compiler_version) +
                 strlen(s->zp.binary_version) + sizeof paths;
    char *body = malloc(cap);
    if (!body) {
        respond_static(r, 500, "out of memory\n");
        return;
    }
    int n = snprintf(body, cap, k_zheader, s->zp.component, "statusz");
    snprintf(body + n, cap - (size_t)n,
             "\nStarted%s %s\nUp%s %s\nCompiler version%s %s\nBinary version%s %s\n%s\n%s\n", d,
             started, d, upt, d, s->zp.compiler_version, d, s->zp.binary_version, emu, paths);
    r->status = 200;
    r->content_type = "text/plain; charset=utf-8";
    r->body = body;
    r->body_len = strlen(body);
}

static void flagz(ks_httpserver *s, const char *accept, response *r)
{
    const char *version;
    int how = negotiate(accept, "Flagz", &version);
    if (how == Z_NOT_ACCEPTABLE) {
        not_acceptable(r);
        return;
    }
    if (how == Z_JSON) {
        cJSON *o = zobject(s, "Flagz", version);
        if (s->zp.nflags) {
            cJSON *flags = cJSON_AddObjectToObject(o, "flags"); /* keys sorted, as Go's maps */
            for (size_t i = 0; i < s->zp.nflags; i++)
                cJSON_AddStringToObject(flags, s->zp.flags[i].name, s->zp.flags[i].value);
        }
        respond_json(r, o, version, "flagz");
        return;
    }
    const char *d = k_delims[rand_r(&s->rnd) % 4];
    size_t cap = 256 + strlen(s->zp.component);
    for (size_t i = 0; i < s->zp.nflags; i++)
        cap += strlen(s->zp.flags[i].name) + strlen(s->zp.flags[i].value) + 4;
    char *body = malloc(cap);
    if (!body) {
        respond_static(r, 500, "out of memory\n");
        return;
    }
    size_t n = (size_t)snprintf(body, cap, k_zheader, s->zp.component, "flagz");
    for (size_t i = 0; i < s->zp.nflags; i++)
        n += (size_t)snprintf(body + n, cap - n, "%s%s%s\n", s->zp.flags[i].name, d,
                              s->zp.flags[i].value);
    r->status = 200;
    r->content_type = "text/plain; charset=utf-8";
    r->body = body;
    r->body_len = n;
}

static void route(ks_httpserver *s, const char *path, const char *query, const char *headers,
                  response *r)
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
    } else if (s->zp.component && (!strcmp(path, "/statusz") || !strcmp(path, "/flagz"))) {
        char accept[1024] = "";
        header_value(headers, "Accept", accept, sizeof accept);
        if (path[1] == 's')
            statusz(s, accept, r);
        else
            flagz(s, accept, r);
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
    char *headers = eol + (eol[0] == '\r' && eol[1] == '\n' ? 2 : 1);
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
    route(s, target, query, headers, &r);

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
    free((char *)s->zp.component);
    free((char *)s->zp.binary_version);
    free((char *)s->zp.emulation_version);
    free((char *)s->zp.compiler_version);
    for (size_t i = 0; i < s->zp.nflags; i++) {
        free((char *)s->zp.flags[i].name);
        free((char *)s->zp.flags[i].value);
    }
    free((ks_http_flag *)s->zp.flags);
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

/* This build's compiler, for the place of upstream's "Go version". */
static const char *compiler_version(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown C compiler";
#endif
}

/* The process start time in Unix seconds, as prometheus/procfs (upstream's GetProcessStart):
 * btime of /proc/stat plus the starttime field of /proc/self/stat in clock ticks, truncated.
 * 0 when /proc cannot tell. */
static int64_t process_start(void)
{
    char buf[4096];
    long long btime = 0;
    unsigned long long ticks = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    while (fgets(buf, sizeof buf, f))
        if (sscanf(buf, "btime %lld", &btime) == 1)
            break;
    fclose(f);
    if (!(f = fopen("/proc/self/stat", "r")))
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* fields after the command (which may hold spaces): state is field 3, starttime field 22 */
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                     "%*d %*d %llu",
                     &ticks) != 1)
        return 0;
    long hz = sysconf(_SC_CLK_TCK);
    return btime > 0 && hz > 0 ? (int64_t)(btime + (double)ticks / (double)hz) : 0;
}

static int flag_cmp(const void *a, const void *b)
{
    return strcmp(((const ks_http_flag *)a)->name, ((const ks_http_flag *)b)->name);
}

/* "/flagz /healthz /livez /metrics /readyz": what upstream's statusz lists -- the first path
 * segment of every path the mux had when /statusz was installed (so not /statusz itself),
 * sorted. */
static void list_paths(ks_httpserver *s)
{
    snprintf(s->paths, sizeof s->paths, "/flagz /healthz /livez%s /readyz",
             s->metrics ? " /metrics" : "");
}

static int copy_zpages(ks_httpserver *s, const ks_http_zpages *z)
{
    if (!z->component || !*z->component || !z->binary_version) {
        ks__log('E', "httpserver", "zpages: a component name and a binary version are required");
        return KS_EINVAL;
    }
    s->zp.start_time = z->start_time ? z->start_time : process_start();
    if (!s->zp.start_time)
        s->zp.start_time = (int64_t)time(NULL);
    if (!(s->zp.component = strdup(z->component)) ||
        !(s->zp.binary_version = strdup(z->binary_version)) ||
        (z->emulation_version && !(s->zp.emulation_version = strdup(z->emulation_version))) ||
        !(s->zp.compiler_version =
              strdup(z->compiler_version ? z->compiler_version : compiler_version())))
        return KS_ENOMEM;
    if (z->nflags) {
        ks_http_flag *f = calloc(z->nflags, sizeof *f);
        if (!(s->zp.flags = f))
            return KS_ENOMEM;
        s->zp.nflags = z->nflags; /* zeroed: server_free frees what was copied */
        for (size_t i = 0; i < z->nflags; i++)
            if (!(f[i].name = strdup(z->flags[i].name ? z->flags[i].name : "")) ||
                !(f[i].value = strdup(z->flags[i].value ? z->flags[i].value : "")))
                return KS_ENOMEM;
        qsort(f, z->nflags, sizeof *f, flag_cmp);
    }
    list_paths(s);
    s->rnd = (unsigned)time(NULL) ^ (unsigned)getpid();
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
    if (o->zpages && (rc = copy_zpages(s, o->zpages)) != 0)
        goto fail;
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
