/*
 * The API client's setup, its one transfer primitive and its error messages (see apiclient.h).
 * Every call goes through ks__api_transfer: rate limit, headers (the token is fetched each time,
 * so a rotated token file is honoured), a run of the multi handle that ks__api_stop can wake,
 * and the Retry-After retries. Messages about failures live here too, so that they read alike.
 */
#define _GNU_SOURCE /* asprintf, vasprintf */
#include "live/apiclient_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"

#define DEFAULT_QPS 50.0
#define DEFAULT_BURST 100
#define DEFAULT_TIMEOUT_MS 60000L
#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_RETRIES 10
#define MAX_RETRY_AFTER_S 60

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

void ks__api_seterr(ks_api *api, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(api->err, sizeof(api->err), fmt, ap);
    va_end(ap);
}

const char *ks__api_error(const ks_api *api) { return api->err; }

long ks__api_last_status(const ks_api *api) { return api->last_status; }

void ks__api_response_free(ks_api_response *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

/* --- curl callbacks ------------------------------------------------------------------------- */

static int buf_append(ks_api *api, const char *p, size_t n)
{
    if (api->len + n + 1 > api->cap) {
        size_t cap = api->cap ? api->cap : 16384;
        while (cap < api->len + n + 1)
            cap *= 2;
        char *nb = realloc(api->buf, cap);
        if (!nb)
            return KS_ENOMEM;
        api->buf = nb;
        api->cap = cap;
    }
    memcpy(api->buf + api->len, p, n);
    api->len += n;
    api->buf[api->len] = '\0';
    return 0;
}

size_t ks__api_on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    ks_api *api = ud;
    size_t n = size * nmemb;
    if (api->sink == SINK_STREAM && !api->status_seen) {
        long status = 0;
        curl_easy_getinfo(api->easy, CURLINFO_RESPONSE_CODE, &status);
        api->status_seen = 1;
        api->stream_ok = status == 200;
    }
    if (buf_append(api, p, n) != 0) {
        api->line_rc = KS_ENOMEM;
        return 0;
    }
    if (api->sink != SINK_STREAM || !api->stream_ok)
        return n;
    /* Hand over every complete line; keep the partial one. */
    size_t start = 0;
    for (size_t i = api->len - n; i < api->len; i++) {
        if (api->buf[i] != '\n')
            continue;
        api->buf[i] = '\0';
        int rc = api->on_line(api, api->buf + start, i - start, api->line_ud);
        start = i + 1;
        if (rc) {
            api->line_rc = rc;
            return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
        }
    }
    memmove(api->buf, api->buf + start, api->len - start);
    api->len -= start;
    if (api->buf)
        api->buf[api->len] = '\0';
    return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    ks_api *api = ud;
    size_t n = size * nmemb;
    if (n >= 5 && !strncmp(p, "HTTP/", 5)) {
        api->retry_after = -1; /* a new response (after 100 Continue, say) */
    } else if (n > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        char *end;
        long v = strtol(p + 12, &end, 10);
        if (end != p + 12 && v >= 0)
            api->retry_after = v;
    }
    return n;
}

/* --- setup ---------------------------------------------------------------------------------- */

/* Hands PEM material to libcurl: a file stays a file, data goes as a blob where libcurl can
 * take it, else through a private temp file. */
static int set_pem(ks_api *api, ks_kc_pem *pem, CURLoption file_opt, int blob_opt, const char *what,
                   int force_file, char *err, size_t errlen)
{
    if (!pem->file && !pem->data)
        return 0;
    if (pem->data && !force_file && blob_opt >= 0) {
        struct curl_blob blob = {.data = pem->data, .len = pem->len, .flags = CURL_BLOB_COPY};
        if (curl_easy_setopt(api->easy, (CURLoption)blob_opt, &blob) == CURLE_OK)
            return 0;
    }
    const char *path;
    int rc = ks__kubeconfig_pem_path(api->kc, pem, &path, err, errlen);
    if (rc)
        return rc;
    if (curl_easy_setopt(api->easy, file_opt, path) != CURLE_OK) {
        snprintf(err, errlen, "%s: this libcurl cannot use the %s from %s", api->kc->origin, what,
                 pem->desc);
        return KS_EINVAL;
    }
    return 0;
}

/* tls-server-name: verify the certificate against that name but connect to the server's host,
 * which libcurl does when the URL names the TLS name and CONNECT_TO maps it to the real host. */
static int setup_tls_server_name(ks_api *api, struct curl_slist **connect_to, char **base)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    int rc = KS_EINVAL;
    if (!u || curl_url_set(u, CURLUPART_URL, api->kc->server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
        goto out;
    char line[512];
    snprintf(line, sizeof(line), "%s:%s:%s:%s", api->kc->tls_server_name, port, host, port);
    *connect_to = curl_slist_append(NULL, line);
    if (curl_url_set(u, CURLUPART_HOST, api->kc->tls_server_name, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, base, 0) != CURLUE_OK || !*connect_to)
        goto out;
    rc = 0;
out:
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

static const char *base_url(ks_api *api)
{
    if (api->base) {
        size_t n = strlen(api->base);
        while (n && api->base[n - 1] == '/')
            api->base[--n] = '\0';
        return api->base;
    }
    return api->kc->server;
}

int ks__api_create(ks_kubeconfig *kc, const ks_api_opts *opts, ks_api **out, char *err,
                   size_t errlen)
{
    static const ks_api_opts defaults = {0};
    int rc = KS_ENOMEM;
    *out = NULL;
    if (!opts)
        opts = &defaults;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK) {
        snprintf(err, errlen, "libcurl failed to initialise: %s", curl_easy_strerror(curl_init_rc));
        return KS_EIO;
    }
    ks_api *api = calloc(1, sizeof(*api));
    if (!api)
        goto nomem;
    api->kc = kc;
    api->retry_after = -1;
    api->request_timeout_ms =
        opts->request_timeout_ms ? opts->request_timeout_ms : DEFAULT_TIMEOUT_MS;
    api->max_retries =
        opts->max_retries ? (opts->max_retries < 0 ? 0 : opts->max_retries) : DEFAULT_RETRIES;
    api->sleep = opts->sleep;
    api->sleep_ud = opts->sleep_ud;
    if (!(api->user_agent = strdup(opts->user_agent ? opts->user_agent : KS_API_USER_AGENT)))
        goto nomem;
    if (opts->limiter) {
        api->limiter = opts->limiter;
    } else if (opts->qps >= 0) {
        double qps = opts->qps > 0 ? opts->qps : DEFAULT_QPS;
        int burst = opts->burst > 0 ? opts->burst : DEFAULT_BURST;
        if ((rc = ks__ratelimit_create(qps, burst, opts->clock, opts->clock_ud,
                                       &api->own_limiter)) != 0) {
            snprintf(err, errlen, "clientConnection: qps %g and burst %d make no rate limit", qps,
                     burst);
            goto fail;
        }
        api->limiter = api->own_limiter;
    }
    rc = KS_ENOMEM;
    if (!(api->multi = curl_multi_init()) || !(api->easy = curl_easy_init()))
        goto nomem;

    CURL *e = api->easy;
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, api->curl_err);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, ks__api_on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, api);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, api);
    curl_easy_setopt(e, CURLOPT_USERAGENT, api->user_agent);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
                                                  : DEFAULT_CONNECT_TIMEOUT_MS);
    /* HTTP/2 over TLS when both ends speak it (a warning-free no-op on plain http://). */
    curl_version_info_data *vi = curl_version_info(CURLVERSION_NOW);
    if (vi->features & CURL_VERSION_HTTP2)
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    if (kc->proxy_url)
        curl_easy_setopt(e, CURLOPT_PROXY, kc->proxy_url);

    if (kc->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    int ca_blob = -1, cert_blob = -1, key_blob = -1;
#if LIBCURL_VERSION_NUM >= 0x074d00 /* 7.77.0 */
    ca_blob = CURLOPT_CAINFO_BLOB;
#endif
#if LIBCURL_VERSION_NUM >= 0x074700 /* 7.71.0 */
    cert_blob = CURLOPT_SSLCERT_BLOB;
    key_blob = CURLOPT_SSLKEY_BLOB;
#endif
    if ((rc = set_pem(api, &kc->ca, CURLOPT_CAINFO, ca_blob, "certificate authority",
                      opts->pem_files, err, errlen)) ||
        (rc = set_pem(api, &kc->cert, CURLOPT_SSLCERT, cert_blob, "client certificate",
                      opts->pem_files, err, errlen)) ||
        (rc = set_pem(api, &kc->key, CURLOPT_SSLKEY, key_blob, "client key", opts->pem_files, err,
                      errlen)))
        goto fail;
    if (kc->ca.file || kc->ca.data) /* only this CA, as client-go: not the system directory too */
        curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
    if (kc->cert.file || kc->cert.data) {
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (kc->tls_server_name) {
        if (setup_tls_server_name(api, &api->connect_to, &api->base) != 0) {
            snprintf(err, errlen, "%s: cannot use tls-server-name \"%s\" with server %s",
                     kc->origin, kc->tls_server_name, kc->server);
            rc = KS_EINVAL;
            goto fail;
        }
        curl_easy_setopt(e, CURLOPT_CONNECT_TO, api->connect_to);
    }
    *out = api;
    return 0;
nomem:
    rc = KS_ENOMEM;
    snprintf(err, errlen, "API client: out of memory");
fail:
    ks__api_destroy(api);
    return rc;
}

void ks__api_destroy(ks_api *api)
{
    if (!api)
        return;
    if (api->easy)
        curl_easy_cleanup(api->easy);
    if (api->multi)
        curl_multi_cleanup(api->multi);
    curl_slist_free_all(api->connect_to);
    curl_free(api->base);
    ks__ratelimit_destroy(api->own_limiter);
    free(api->user_agent);
    free(api->buf);
    free(api);
}

void ks__api_stop(ks_api *api)
{
    atomic_store(&api->stopped, 1);
    curl_multi_wakeup(api->multi);
}

void ks__api_set_request_timeout(ks_api *api, long ms)
{
    api->request_timeout_ms = ms < 0 ? -1 : ms > 0 ? ms : 1;
}

/* --- transfer ------------------------------------------------------------------------------ */

/* Sleeps ns, or less when stopped. Returns KS_API_STOPPED or 0. */
static int pause_for(ks_api *api, int64_t ns)
{
    if (ns <= 0)
        return atomic_load(&api->stopped) ? KS_API_STOPPED : 0;
    if (api->sleep) {
        api->sleep(ns, api->sleep_ud);
        return atomic_load(&api->stopped) ? KS_API_STOPPED : 0;
    }
    int64_t deadline = ks__clock_monotonic(NULL) + ns;
    for (;;) {
        if (atomic_load(&api->stopped))
            return KS_API_STOPPED;
        int64_t left = deadline - ks__clock_monotonic(NULL);
        if (left <= 0)
            return 0;
        /* No transfer is attached: this waits for the timeout or curl_multi_wakeup. */
        curl_multi_poll(api->multi, NULL, 0, (int)((left + 999999) / 1000000), NULL);
    }
}

int ks__api_query_add(ks_api *api, char **url, const char *name, const char *value)
{
    char *esc = curl_easy_escape(api->easy, value, 0);
    if (!esc)
        return KS_ENOMEM;
    char *n = NULL;
    int w = asprintf(&n, "%s%c%s=%s", *url, strchr(*url, '?') ? '&' : '?', name, esc);
    curl_free(esc);
    if (w < 0)
        return KS_ENOMEM;
    free(*url);
    *url = n;
    return 0;
}

/* The part of a path before its query, for messages. */
static int path_len(const char *path)
{
    const char *q = strchr(path, '?');
    return q ? (int)(q - path) : (int)strlen(path);
}

static int transport_error(ks_api *api, const char *method, const char *path, CURLcode cc);

/* One attempt: headers, run, result. */
static int run_once(ks_api *api, const char *method, const char *path, const char *body,
                    const char *content_type, long timeout_ms, long *status)
{
    CURL *e = api->easy;
    struct curl_slist *hdrs = NULL, *h;
    char *url = NULL, *token = NULL, *auth = NULL;
    int rc = KS_ENOMEM;
    CURLcode cc = CURLE_OK;

    if (asprintf(&url, "%s%s", base_url(api), path) < 0) {
        url = NULL;
        goto nomem;
    }
    if (ks__kubeconfig_token(api->kc, &token) != 0)
        goto nomem;
    if (token && ks__kubeconfig_token_ctl(token) >= 0) { /* would inject a header line */
        ks__api_seterr(api,
                       "%s %.*s: the bearer token from %s contains a control character; not "
                       "sending it",
                       method, path_len(path), path, ks__kubeconfig_token_desc(api->kc));
        rc = KS_EINVAL;
        goto out;
    }
    if (!(h = curl_slist_append(hdrs, "Accept: application/json")))
        goto nomem;
    hdrs = h;
    if (!(h = curl_slist_append(hdrs, "Expect:"))) /* no 100-continue round trip on HTTP/1.1 */
        goto nomem;
    hdrs = h;
    if (token) {
        if (asprintf(&auth, "Authorization: Bearer %s", token) < 0) {
            auth = NULL;
            goto nomem;
        }
        if (!(h = curl_slist_append(hdrs, auth)))
            goto nomem;
        hdrs = h;
    }
    if (!body && strcmp(method, "GET") && strcmp(method, "DELETE") && strcmp(method, "HEAD"))
        body = ""; /* POST/PUT/PATCH without a body still send Content-Length: 0 */
    if (body) {
        char ct[160];
        snprintf(ct, sizeof(ct), "Content-Type: %s",
                 content_type ? content_type : "application/json");
        if (!(h = curl_slist_append(hdrs, ct)))
            goto nomem;
        hdrs = h;
    }

    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 0L);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L); /* resets POST state from an earlier call */
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
    if (body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    }
    if (strcmp(method, "GET") && !(body && !strcmp(method, "POST")))
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);

    api->len = 0;
    if (api->buf)
        api->buf[0] = '\0';
    api->retry_after = -1;
    api->line_rc = 0;
    api->status_seen = 0;
    api->stream_ok = 0;
    api->curl_err[0] = '\0';
    api->last_status = 0;
    *status = 0;

    if (curl_multi_add_handle(api->multi, e) != CURLM_OK) {
        ks__api_seterr(api, "%s %.*s: libcurl refused the transfer", method, path_len(path), path);
        rc = KS_EIO;
        goto out;
    }
    int running = 1, stopped = 0;
    while (running) {
        if (atomic_load(&api->stopped)) {
            stopped = 1;
            break;
        }
        if (curl_multi_perform(api->multi, &running) != CURLM_OK || !running)
            break;
        curl_multi_poll(api->multi, NULL, 0, 1000, NULL);
    }
    CURLMsg *msg;
    int q;
    while ((msg = curl_multi_info_read(api->multi, &q)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == e)
            cc = msg->data.result;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    api->last_status = *status;
    curl_multi_remove_handle(api->multi, e);
    if (stopped) {
        ks__api_seterr(api, "%s %.*s: stopped", method, path_len(path), path);
        rc = KS_API_STOPPED;
    } else if (api->line_rc) {
        rc = api->line_rc;
        if (rc == KS_ENOMEM)
            ks__api_seterr(api, "%s %.*s: out of memory", method, path_len(path), path);
    } else if (cc != CURLE_OK) {
        rc = transport_error(api, method, path, cc);
    } else {
        rc = 0;
    }
    goto out;
nomem:
    ks__api_seterr(api, "%s %.*s: out of memory", method, path_len(path), path);
    rc = KS_ENOMEM;
out:
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    if (token) {
        memset(token, 0, strlen(token));
        free(token);
    }
    free(url);
    return rc;
}

int ks__api_transfer(ks_api *api, const char *method, const char *path, const char *body,
                     const char *content_type, api_sink sink, long timeout_ms, long *status)
{
    api->err[0] = '\0';
    api->sink = sink;
    for (int attempt = 0;; attempt++) {
        int rc;
        if (api->limiter && (rc = pause_for(api, ks__ratelimit_reserve(api->limiter))) != 0) {
            ks__api_seterr(api, "%s %.*s: stopped", method, path_len(path), path);
            return rc;
        }
        if ((rc = run_once(api, method, path, body, content_type, timeout_ms, status)) != 0)
            return rc;
        int retryable = *status == 429 || (*status >= 500 && *status <= 599);
        if (!retryable || api->retry_after < 0 || attempt >= api->max_retries)
            return 0;
        long secs = api->retry_after > MAX_RETRY_AFTER_S ? MAX_RETRY_AFTER_S : api->retry_after;
        if (ks__log_enabled(2))
            ks__log('I', "apiclient", "%s %.*s: %ld, retrying after %lds (attempt %d of %d)",
                    method, path_len(path), path, *status, secs, attempt + 1, api->max_retries);
        if ((rc = pause_for(api, (int64_t)secs * 1000000000LL)) != 0) {
            ks__api_seterr(api, "%s %.*s: stopped", method, path_len(path), path);
            return rc;
        }
    }
}

int ks__api_request(ks_api *api, const char *method, const char *path, const char *body,
                    const char *content_type, ks_api_response *resp)
{
    long status = 0;
    int rc = ks__api_transfer(api, method, path, body, content_type, SINK_BUFFER,
                              api->request_timeout_ms, &status);
    if (rc == 0 && (status < 200 || status > 299))
        rc = ks__api_http_error(api, method, path, status);
    if (resp) {
        resp->status = status;
        resp->len = api->len;
        resp->body = malloc(api->len + 1);
        if (!resp->body) {
            resp->len = 0;
            ks__api_seterr(api, "%s %.*s: out of memory", method, path_len(path), path);
            return KS_ENOMEM;
        }
        if (api->len)
            memcpy(resp->body, api->buf, api->len);
        resp->body[api->len] = '\0';
    }
    return rc;
}

/* --- messages ------------------------------------------------------------------------------- */

static const char *reason_phrase(long status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "Request Entity Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return status >= 500 ? "Server Error" : status >= 400 ? "Client Error" : "Unexpected";
    }
}

/* The Status message of a body, or a printable excerpt of a body that is not a Status. */
static void status_message(const char *body, size_t len, char *out, size_t outlen)
{
    cJSON *j = len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
    if (cJSON_IsString(m) && m->valuestring[0]) {
        snprintf(out, outlen, "%s", m->valuestring);
    } else if (!len) {
        snprintf(out, outlen, "(empty body)");
    } else {
        size_t o = 0, max = outlen > 200 ? 200 : outlen - 1;
        for (size_t i = 0; i < len && o < max; i++) {
            unsigned char c = (unsigned char)body[i];
            out[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
        }
        out[o] = '\0';
        if (o == max && len > max && o >= 3)
            memcpy(out + o - 3, "...", 3);
    }
    cJSON_Delete(j);
}

int ks__api_http_error(ks_api *api, const char *method, const char *path, long status)
{
    char msg[1200], hint[512] = "";
    status_message(api->buf ? api->buf : "", api->len, msg, sizeof(msg));
    const ks_kubeconfig *kc = api->kc;
    if (status == 403) {
        snprintf(hint, sizeof(hint), "; grant it with RBAC (ClusterRole system:kube-scheduler)");
    } else if (status == 401) {
        const char *tok = ks__kubeconfig_token_desc(kc);
        if (tok)
            snprintf(hint, sizeof(hint), "; the API server rejected the bearer token from %s", tok);
        else if (kc->cert.desc)
            snprintf(hint, sizeof(hint),
                     "; the API server rejected the client certificate from %s (is it signed by "
                     "the API server's --client-ca-file?)",
                     kc->cert.desc);
        else
            snprintf(hint, sizeof(hint), "; %s has no credentials (token or client certificate)",
                     kc->origin);
    } else if (status == 429) {
        snprintf(hint, sizeof(hint),
                 "; the API server is throttling this client (API Priority and Fairness)");
    }
    ks__api_seterr(api, "%s %.*s: %ld %s: %s%s", method, path_len(path), path, status,
                   reason_phrase(status), msg, hint);
    switch (status) {
    case 404:
        return KS_ENOTFOUND;
    case 409:
        return KS_EEXIST;
    case 400:
    case 422:
        return KS_EINVAL;
    case 410:
        return KS_API_GONE;
    default:
        return KS_EIO;
    }
}

static int transport_error(ks_api *api, const char *method, const char *path, CURLcode cc)
{
    const ks_kubeconfig *kc = api->kc;
    const char *detail = api->curl_err[0] ? api->curl_err : curl_easy_strerror(cc);
    const char *url = kc->server;
    int pl = path_len(path);
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
        ks__api_seterr(api,
                       "%s %.*s: cannot connect to %s (server of %s): %s; is kube-apiserver "
                       "running and listening there?",
                       method, pl, path, url, kc->origin, detail);
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        ks__api_seterr(api, "%s %.*s: cannot resolve the host of %s (server of %s): %s", method, pl,
                       path, url, kc->origin, detail);
        break;
    case CURLE_OPERATION_TIMEDOUT:
        ks__api_seterr(api, "%s %.*s: timed out talking to %s (server of %s): %s", method, pl, path,
                       url, kc->origin, detail);
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
        if (strstr(detail, "subject name") || strstr(detail, "host name") ||
            strstr(detail, "hostname"))
            ks__api_seterr(api,
                           "%s %.*s: TLS: the server's certificate does not name the host of %s "
                           "(server of %s): %s; use an address the certificate names, or set "
                           "tls-server-name",
                           method, pl, path, url, kc->origin, detail);
        else if (kc->ca.file || kc->ca.data)
            ks__api_seterr(api,
                           "%s %.*s: TLS: the server's certificate is not signed by the CA in %s "
                           "(server %s): %s; set certificate-authority (or -data) of %s%s%s in %s "
                           "to the CA that signed the API server's serving certificate",
                           method, pl, path, kc->ca.desc, url, detail,
                           kc->cluster ? "cluster \"" : "the cluster",
                           kc->cluster ? kc->cluster : "", kc->cluster ? "\"" : "", kc->origin);
        else
            ks__api_seterr(api,
                           "%s %.*s: TLS: the server's certificate is not signed by a CA in %s "
                           "(server %s): %s; set certificate-authority or "
                           "certificate-authority-data in %s",
                           method, pl, path, kc->ca.desc ? kc->ca.desc : "the system trust store",
                           url, detail, kc->origin);
        break;
    case CURLE_SSL_CERTPROBLEM:
        ks__api_seterr(api,
                       "%s %.*s: TLS: the client certificate %s or key %s could not be used: %s",
                       method, pl, path, kc->cert.desc ? kc->cert.desc : "(none)",
                       kc->key.desc ? kc->key.desc : "(none)", detail);
        break;
    case CURLE_SSL_CACERT_BADFILE:
        ks__api_seterr(api, "%s %.*s: TLS: the CA in %s could not be loaded: %s", method, pl, path,
                       kc->ca.desc ? kc->ca.desc : "(system trust store)", detail);
        break;
    case CURLE_SSL_CONNECT_ERROR:
        ks__api_seterr(api, "%s %.*s: TLS handshake with %s (server of %s) failed: %s; %s", method,
                       pl, path, url, kc->origin, detail,
                       strstr(detail, "wrong version number") || strstr(detail, "packet length")
                           ? "the port may speak plain HTTP (use http://) or another protocol"
                       : kc->cert.desc ? "the server may have rejected the client certificate"
                                       : "the port may not be the API server's");
        break;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        ks__api_seterr(api, "%s %.*s: the connection to %s broke: %s", method, pl, path, url,
                       detail);
        break;
    default:
        ks__api_seterr(api, "%s %.*s: talking to %s (server of %s): %s (libcurl error %d)", method,
                       pl, path, url, kc->origin, detail, (int)cc);
        break;
    }
    return cc == CURLE_OUT_OF_MEMORY ? KS_ENOMEM : KS_EIO;
}
