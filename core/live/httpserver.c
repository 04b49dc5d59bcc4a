/*
 * The health and metrics HTTP server (see httpserver.h for the endpoints), on libmicrohttpd.
 *
 * Why a library rather than the hand-written loop this replaced: that loop served one connection
 * at a time with a 5 s read deadline, so four idle TCP connections to the port (nothing sent)
 * delayed /healthz by 19 s -- enough for a kubelet liveness probe to restart the scheduler.
 * libmicrohttpd (Debian's libmicrohttpd12, kept up to date by Debian security like GnuTLS under
 * it) brings what a server on a pod network needs and a hand-written one gets wrong: one thread
 * per connection (an idle, slow or TLS-stalled client, or a request waiting on a TokenReview,
 * holds only its own thread), a limit on connections in all and per client address, an
 * inactivity timeout on every connection, request-size limits, HTTP parsing, and TLS (GnuTLS).
 *
 * The listening socket is still ours (listen_on: the same address resolution, errors and
 * port 0), handed to the daemon. Every answer carries "Connection: close", as before: one
 * request per connection, so an idle keep-alive connection never holds a thread.
 * SIGPIPE: libmicrohttpd sends with MSG_NOSIGNAL; in addition its threads start with SIGPIPE
 * blocked (they inherit the mask ks__httpserver_start sets around MHD_start_daemon), so a client
 * that resets cannot kill a program that did not ignore SIGPIPE.
 */
#define _GNU_SOURCE /* strcasestr */
#include "live/httpserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "util/log.h"

/* Limits. Connections: thread per connection, so the limit bounds threads and memory (each
 * connection has a memory pool of CONN_MEMORY bytes for the request head and the answer's
 * headers); per client address well below the total, so that one client (a scraper gone wild,
 * an attacker on the pod network) cannot take every slot from the kubelet's probes. A request
 * head that does not fit in the pool (about 7.5 KiB of 8: the pool also holds the answer's
 * headers) is refused, 431 (414 when the request line alone is that long), as Go's server
 * refuses a head larger than MaxHeaderBytes; the hand-written server refused heads over 8 KiB.
 * A bearer token (a projected ServiceAccount token is about 1 KiB) fits. A connection that sends
 * nothing for IDLE_TIMEOUT_S is closed. */
#define CONN_LIMIT 1024
#define CONN_PER_IP_LIMIT 256
#define CONN_MEMORY (8 * 1024)
#define IDLE_TIMEOUT_S 10
#define THREAD_STACK (2 * 1024 * 1024) /* an authorizer's libcurl + OpenSSL call runs on it */

struct ks_httpserver {
    int listen_fd; /* ours until the daemon runs; the daemon closes it at stop */
    int port;
    struct MHD_Daemon *daemon;
    ks_metrics *metrics;
    ks_http_check *checks; /* readiness; names owned */
    size_t nchecks;
    size_t nready_before_shutdown;
    ks_http_check *hchecks; /* /healthz; names owned */
    size_t nhchecks;
    int not_ready_status;
    atomic_bool shutting_down;
    ks_http_authorize_fn authorize; /* NULL: every path open */
    void *authorize_ctx;
    char *client_ca_pem; /* owned; NULL: no client certificate asked for */
    /* /statusz and /flagz (zp.component NULL: not served); strings and flags owned, flags
     * sorted by name; paths: what /statusz lists. */
    ks_http_zpages zp;
    char paths[128];
    pthread_mutex_t rnd_mu; /* requests run on many threads; rand_r's state is shared */
    unsigned rnd;           /* rand_r state, for the text pages' delimiter */
};

/* --- responses ----------------------------------------------------------------------------- */

typedef struct response {
    int status;
    const char *content_type;
    const char *extra_headers; /* "Name: value\r\n"... or NULL */
    char *body;                /* malloc'd, or NULL when static_body is used */
    const char *static_body;
    size_t body_len;
} response;

static void respond_static(response *r, int status, const char *body)
{
    r->status = status;
    r->content_type = "text/plain; charset=utf-8";
    r->static_body = body;
    r->body_len = strlen(body);
}

/* apimachinery's isPrettyPrint: ?pretty=<bool> decides; else a User-Agent of curl, Wget or a
 * browser gets indented JSON. */
static bool pretty_wanted(struct MHD_Connection *conn)
{
    const char *p = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "pretty");
    if (p && *p) /* strconv.ParseBool; anything else is false */
        return !strcmp(p, "1") || !strcasecmp(p, "t") || !strcmp(p, "true") || !strcmp(p, "TRUE") ||
               !strcmp(p, "True");
    const char *ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT);
    return ua &&
           (!strncmp(ua, "curl", 4) || !strncmp(ua, "Wget", 4) || !strncmp(ua, "Mozilla/5.0", 11));
}

/* Compact JSON re-indented as Go's json.MarshalIndent(v, "", "  ") (empty objects and arrays
 * stay "{}" / "[]"; no newline at the end, as the pretty serializer writes it). NULL: no memory. */
static char *indent_json(const char *in, size_t len, size_t *outlen)
{
    size_t depth = 0, n = 0, cap = len * 2 + 64;
    char *out = malloc(cap);
    bool in_str = false;
    for (size_t i = 0; out && i < len; i++) {
        char c = in[i];
        if (n + 2 * depth + 8 > cap) {
            char *grown = realloc(out, cap = cap * 2 + 2 * depth + 8);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        if (in_str) {
            out[n++] = c;
            if (c == '\\' && i + 1 < len)
                out[n++] = in[++i];
            else if (c == '"')
                in_str = false;
            continue;
        }
        switch (c) {
        case '"':
            in_str = true;
            out[n++] = c;
            break;
        case '{':
        case '[':
            out[n++] = c;
            if (i + 1 < len && (in[i + 1] == '}' || in[i + 1] == ']')) {
                out[n++] = in[++i];
                break;
            }
            depth++;
            out[n++] = '\n';
            for (size_t d = 0; d < depth; d++)
                out[n++] = ' ', out[n++] = ' ';
            break;
        case '}':
        case ']':
            depth--;
            out[n++] = '\n';
            for (size_t d = 0; d < depth; d++)
                out[n++] = ' ', out[n++] = ' ';
            out[n++] = c;
            break;
        case ',':
            out[n++] = c;
            out[n++] = '\n';
            for (size_t d = 0; d < depth; d++)
                out[n++] = ' ', out[n++] = ' ';
            break;
        case ':':
            out[n++] = c;
            out[n++] = ' ';
            break;
        case '\n':
        case ' ':
        case '\t':
        case '\r':
            break; /* the compact form's newline at the end */
        default:
            out[n++] = c;
        }
    }
    if (out)
        out[n] = '\0';
    *outlen = n;
    return out;
}

/* Hands r to the daemon (which sends it, and for HEAD only its headers). r->body is taken. */
static enum MHD_Result send_response(struct MHD_Connection *conn, response *r)
{
    /* A JSON answer (a Status, a Statusz or Flagz object) indented for people, as upstream's
     * negotiated serializer does. */
    if (!strncmp(r->content_type, "application/json", 16) && r->body_len && pretty_wanted(conn)) {
        size_t n = 0;
        const char *src = r->body ? r->body : r->static_body;
        char *pretty = indent_json(src, r->body_len, &n);
        if (pretty) {
            free(r->body);
            r->body = pretty;
            r->body_len = n;
        }
    }
    struct MHD_Response *mr =
        r->body ? MHD_create_response_from_buffer(r->body_len, r->body, MHD_RESPMEM_MUST_FREE)
                : MHD_create_response_from_buffer(r->body_len, (void *)r->static_body,
                                                  MHD_RESPMEM_PERSISTENT);
    if (!mr) {
        free(r->body);
        return MHD_NO; /* out of memory: the daemon closes the connection */
    }
    r->body = NULL;
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
    /* kube-scheduler's handler chain has WithCacheControl: nothing on this port is cached */
    MHD_add_response_header(mr, "Cache-Control", "no-cache, private");
    for (const char *p = r->extra_headers; p && *p;) {
        const char *colon = strchr(p, ':'), *end = strstr(p, "\r\n");
        if (!colon || !end || colon > end)
            break;
        char name[64], value[256];
        const char *v = colon + 1;
        while (*v == ' ')
            v++;
        snprintf(name, sizeof name, "%.*s", (int)(colon - p), p);
        snprintf(value, sizeof value, "%.*s", (int)(end - v), v);
        MHD_add_response_header(mr, name, value);
        p = end + 2;
    }
    /* One request per connection (the daemon closes after the answer): no idle keep-alive
     * connection holds a thread. */
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)r->status, mr);
    MHD_destroy_response(mr);
    return ret;
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

typedef struct query_find {
    const char *key;
    bool found;
} query_find;

static enum MHD_Result query_key(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    (void)value;
    query_find *q = cls;
    if (key && strcmp(key, q->key) == 0) {
        q->found = true;
        return MHD_NO;
    }
    return MHD_YES;
}

/* True if the query string has the key (with or without a value), as url.Query()[key]. */
static bool query_has(struct MHD_Connection *conn, const char *key)
{
    query_find q = {key, false};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, query_key, &q);
    return q.found;
}

/* --- /statusz and /flagz --------------------------------------------------------------------- */

/* The delimiters upstream picks from at random for each text page, so that nobody parses it. */
static const char *const k_delims[] = {":", ": ", "=", " "};

/* One of k_delims at random; any thread. */
static const char *pick_delim(ks_httpserver *s)
{
    pthread_mutex_lock(&s->rnd_mu);
    int i = rand_r(&s->rnd) % 4;
    pthread_mutex_unlock(&s->rnd_mu);
    return k_delims[i];
}

static const char k_zheader[] =
    "\n%s %s\nWarning: This endpoint is not meant to be machine parseable, has no formatting "
    "compatibility guarantees and is for debugging purposes only.\n";

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
    const char *d = pick_delim(s);
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
    const char *d = pick_delim(s);
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

static void route(ks_httpserver *s, struct MHD_Connection *conn, const char *path, response *r)
{
    bool verbose = query_has(conn, "verbose");
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
        /* The first Accept header, trimmed (the daemon folds the names' case). */
        char accept[1024] = "";
        const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        if (a) {
            size_t n = strlen(a);
            while (*a == ' ' || *a == '\t')
                a++, n--;
            while (n && (a[n - 1] == ' ' || a[n - 1] == '\t'))
                n--;
            snprintf(accept, sizeof accept, "%.*s", (int)n, a);
        }
        if (path[1] == 's')
            statusz(s, accept, r);
        else
            flagz(s, accept, r);
    } else {
        respond_static(r, 404, "404 page not found\n");
    }
}

/* The client certificate of a TLS connection, checked as upstream's x509 authenticator does
 * (x509.Verify against the client CA with ExtKeyUsageClientAuth; CN the user, O the groups).
 * 0: none came; 1: *peer is filled (strings in the caller's buffers). */
#define PEER_ORGS 16
typedef struct peer_buf {
    char cn[256];
    char orgs[PEER_ORGS][128];
    const char *org_ptrs[PEER_ORGS];
    char error[160];
} peer_buf;

static int client_cert(struct MHD_Connection *conn, ks_http_peer *peer, peer_buf *b)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t session = ci ? (gnutls_session_t)ci->tls_session : NULL;
    unsigned int n = 0;
    const gnutls_datum_t *chain = session ? gnutls_certificate_get_peers(session, &n) : NULL;
    if (!chain || n == 0)
        return 0;
    *peer = (ks_http_peer){.common_name = b->cn, .organizations = b->org_ptrs};
    b->cn[0] = b->error[0] = '\0';
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    unsigned int status = 0;
    int rc = gnutls_certificate_verify_peers(session, &purpose, 1, &status);
    if (rc < 0 || status != 0) {
        gnutls_datum_t why = {NULL, 0};
        if (rc >= 0 &&
            gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0) == 0) {
            snprintf(b->error, sizeof b->error, "x509: %s", (const char *)why.data);
            gnutls_free(why.data);
        } else {
            snprintf(b->error, sizeof b->error, "x509: %s", gnutls_strerror(rc));
        }
        peer->error = b->error;
        return 1;
    }
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) < 0)
        return 0;
    if (gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) == 0) {
        size_t len = sizeof b->cn;
        if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, b->cn, &len) < 0)
            b->cn[0] = '\0';
        for (unsigned i = 0; i < PEER_ORGS; i++) {
            len = sizeof b->orgs[i];
            if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, 0,
                                              b->orgs[i], &len) < 0)
                break;
            b->org_ptrs[peer->norganizations++] = b->orgs[i];
        }
        peer->verified = 1;
    } else {
        snprintf(b->error, sizeof b->error, "x509: the certificate does not parse");
        peer->error = b->error;
    }
    gnutls_x509_crt_deinit(crt);
    return 1;
}

/* The daemon's request handler, on the connection's own thread, once the request head is in.
 * As kube-scheduler's handler chain: authentication and authorization first (the authorizer,
 * when there is one), then the method, then the path. A request body (none is expected) is
 * not read: the answer is queued on the first call and the connection closed after it. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)con_cls;
    ks_httpserver *s = cls;
    response r = {0};
    if (s->authorize) {
        const char *authz =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        char *body = NULL;
        const char *ctype = NULL;
        ks_http_peer peer;
        peer_buf pb;
        int have_peer = s->client_ca_pem ? client_cert(conn, &peer, &pb) : 0;
        int status = s->authorize(s->authorize_ctx, method, url, authz, have_peer ? &peer : NULL,
                                  &body, &ctype);
        if (status != 0) {
            r.status = status;
            r.content_type = ctype ? ctype : "text/plain; charset=utf-8";
            r.body = body;
            r.static_body = body ? NULL : "";
            r.body_len = body ? strlen(body) : 0;
            return send_response(conn, &r);
        }
        free(body);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        respond_static(&r, 405, "405 method not allowed\n");
        r.extra_headers = "Allow: GET, HEAD\r\n";
        return send_response(conn, &r);
    }
    route(s, conn, url, &r);
    return send_response(conn, &r);
}

/* The daemon's messages (a failed TLS handshake, a malformed request, a limit reached): at -v=4,
 * as Go's server logs such errors to its ErrorLog. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    if (!ks__log_enabled(4))
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    ks__log('I', "httpserver", "%s", msg);
}

/* --- lifecycle ----------------------------------------------------------------------------- */

static void server_free(ks_httpserver *s)
{
    if (!s)
        return;
    if (s->daemon)
        MHD_stop_daemon(s->daemon); /* closes the connections and the listening socket */
    else if (s->listen_fd >= 0)
        close(s->listen_fd);
    pthread_mutex_destroy(&s->rnd_mu);
    free(s->client_ca_pem);
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
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
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
    s->listen_fd = -1;
    pthread_mutex_init(&s->rnd_mu, NULL);
    s->metrics = o->metrics;
    s->authorize = o->authorize;
    s->authorize_ctx = o->authorize_ctx;
    if (o->tls && o->client_ca_pem && *o->client_ca_pem &&
        !(s->client_ca_pem = strdup(o->client_ca_pem))) {
        server_free(s);
        return KS_ENOMEM;
    }
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
    const char *addr = o->bind_address && *o->bind_address ? o->bind_address : "0.0.0.0";
    if ((rc = listen_on(s, addr, o->port)) != 0)
        goto fail;

    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem tls_opts[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(o->tls ? ks__tls_cert_pem(o->tls) : NULL)},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(o->tls ? ks__tls_key_pem(o->tls) : NULL)},
        /* TLS 1.2 and 1.3 only, component-base's minimum (tlsserve.h) */
        {MHD_OPTION_HTTPS_PRIORITIES, 0,
         (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE"},
        /* a client certificate is asked for (not required) only with a client CA */
        {s->client_ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, s->client_ca_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    if (o->tls)
        flags |= MHD_USE_TLS;
    /* The daemon's threads inherit this thread's signal mask: start them with SIGPIPE blocked. */
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    s->daemon = MHD_start_daemon(
        /* the logger first: the daemon logs with it from the next option on */
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, (void *)NULL,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONN_PER_IP_LIMIT,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONN_MEMORY, MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK, MHD_OPTION_ARRAY,
        o->tls ? tls_opts : tls_opts + 4, MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!s->daemon) {
        ks__log('E', "httpserver",
                "cannot start the HTTP server on %s:%d (libmicrohttpd refused its options%s)", addr,
                s->port, o->tls ? " or the TLS certificate and key" : "");
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

void ks__httpserver_stop(ks_httpserver *s) { server_free(s); }
