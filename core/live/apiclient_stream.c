/*
 * Lists page by page and watches as a stream of events (see apiclient.h), both on top of
 * ks__api_transfer. A watch body is newline-delimited JSON, one {"type", "object"} per line, as
 * the API server's streaming JSON serializer writes it; lines are cut in the write callback, so
 * an event is handed over as soon as its newline arrives, whatever the chunking.
 */
#define _GNU_SOURCE /* asprintf, vasprintf */
#include "live/apiclient_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

#define DEFAULT_PAGE 500
#define DEFAULT_WATCH_TIMEOUT_S 300
/* The server ends a watch at timeoutSeconds; a silent connection is given up this much later. */
#define WATCH_GRACE_S 60

static const char *path_only(const char *path, int *len)
{
    const char *q = strchr(path, '?');
    *len = q ? (int)(q - path) : (int)strlen(path);
    return path;
}

static int add_selectors(ks_api *api, char **url, const char *label, const char *field)
{
    int rc = 0;
    if (label && *label)
        rc = ks__api_query_add(api, url, "labelSelector", label);
    if (!rc && field && *field)
        rc = ks__api_query_add(api, url, "fieldSelector", field);
    return rc;
}

static int replace_str(char **dst, const char *src)
{
    char *n = strdup(src);
    if (!n)
        return KS_ENOMEM;
    free(*dst);
    *dst = n;
    return 0;
}

/* --- list ----------------------------------------------------------------------------------- */

int ks__api_list_page(ks_api *api, const char *path, ks_api_item_fn fn, void *ud, char **last_rv,
                      char **cont)
{
    int pl, rc = 0;
    path_only(path, &pl);
    cJSON *page = cJSON_ParseWithLength(api->buf ? api->buf : "", api->len);
    if (!cJSON_IsObject(page)) {
        const char *at = cJSON_GetErrorPtr();
        long off = page || !at || !api->buf ? 0 : (long)(at - api->buf);
        ks__api_seterr(api, "GET %.*s: the response is not a JSON object (at byte %ld of %zu)", pl,
                       path, off, api->len);
        cJSON_Delete(page);
        return KS_EPARSE;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(page, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    if (cJSON_IsString(v) && replace_str(last_rv, v->valuestring))
        goto nomem;
    v = cJSON_GetObjectItemCaseSensitive(meta, "continue");
    free(*cont);
    *cont = NULL;
    if (cJSON_IsString(v) && v->valuestring[0] && !(*cont = strdup(v->valuestring)))
        goto nomem;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
    if (items && !cJSON_IsNull(items) && !cJSON_IsArray(items)) {
        ks__api_seterr(api, "GET %.*s: items is not a list", pl, path);
        rc = KS_EPARSE;
        goto out;
    }
    while (items && items->child) {
        cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
        if ((rc = fn(it, ud)) != 0)
            goto out;
    }
    goto out;
nomem:
    ks__api_seterr(api, "GET %.*s: out of memory", pl, path);
    rc = KS_ENOMEM;
out:
    cJSON_Delete(page);
    return rc;
}

int ks__api_list(ks_api *api, const char *path, const ks_api_list_opts *opts, ks_api_item_fn fn,
                 void *ud, char **rv)
{
    static const ks_api_list_opts none = {0};
    char *url = NULL, *cont = NULL, *last_rv = NULL;
    int rc = 0, pl;
    if (rv)
        *rv = NULL;
    if (!opts)
        opts = &none;
    path_only(path, &pl);
    long limit = opts->limit == 0 ? DEFAULT_PAGE : opts->limit;

    for (;;) {
        char num[32];
        long status = 0;
        free(url);
        if (!(url = strdup(path)))
            goto nomem;
        snprintf(num, sizeof(num), "%ld", limit);
        if ((limit > 0 && (rc = ks__api_query_add(api, &url, "limit", num))) ||
            (cont && (rc = ks__api_query_add(api, &url, "continue", cont))) ||
            /* a continuation carries its snapshot; resourceVersion goes with the first page */
            (!cont && opts->resource_version &&
             (rc = ks__api_query_add(api, &url, "resourceVersion", opts->resource_version))) ||
            (rc = add_selectors(api, &url, opts->label_selector, opts->field_selector)))
            goto nomem;
        if ((rc = ks__api_transfer(api, "GET", url, NULL, NULL, SINK_BUFFER,
                                   api->request_timeout_ms, &status)) != 0)
            goto out;
        if (status < 200 || status > 299) {
            rc = ks__api_http_error(api, "GET", url, status);
            if (rc == KS_API_GONE && cont) {
                size_t n = strlen(api->err);
                snprintf(api->err + n, sizeof(api->err) - n,
                         " (the continue token of a paginated list expired; relist)");
            }
            goto out;
        }
        if ((rc = ks__api_list_page(api, path, fn, ud, &last_rv, &cont)) != 0)
            goto out;
        if (!cont)
            break;
    }
    if (rv) {
        *rv = last_rv;
        last_rv = NULL;
    }
    goto out;
nomem:
    ks__api_seterr(api, "GET %.*s: out of memory", pl, path);
    rc = KS_ENOMEM;
out:
    free(url);
    free(cont);
    free(last_rv);
    return rc;
}

/* --- watch ---------------------------------------------------------------------------------- */

typedef struct watch_state {
    const char *path;
    int path_len;
    const ks_api_watch_opts *opts;
    ks_api_event_fn fn;
    void *ud;
    char *rv; /* last resourceVersion seen */
    long lineno;
} watch_state;

KS_PRINTF(2, 3) static void skip(watch_state *w, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (w->opts->on_skip)
        w->opts->on_skip(msg, w->opts->skip_ud);
    else
        ks__log('W', "apiclient", "%s", msg);
}

/* A printable excerpt of a line for messages. */
static void excerpt(const char *line, size_t len, char *out, size_t outlen)
{
    size_t o = 0, max = outlen - 1 < 80 ? outlen - 1 : 80;
    for (size_t i = 0; i < len && o < max; i++) {
        unsigned char c = (unsigned char)line[i];
        out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    out[o] = '\0';
    if (len > max && o >= 3)
        memcpy(out + o - 3, "...", 3);
}

static int on_event_line(ks_api *api, char *line, size_t len, void *ud)
{
    static const char *const types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"};
    watch_state *w = ud;
    char ex[96];
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        line[--len] = '\0';
    if (!len)
        return 0;
    w->lineno++;
    cJSON *ev = cJSON_ParseWithLength(line, len);
    if (!cJSON_IsObject(ev)) {
        excerpt(line, len, ex, sizeof(ex));
        skip(w, "GET %.*s (watch): skipped event %ld: not a JSON object: %s", w->path_len, w->path,
             w->lineno, ex);
        cJSON_Delete(ev);
        return 0;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "type");
    cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    const char *type = cJSON_IsString(t) ? t->valuestring : NULL;
    if (!type || !cJSON_IsObject(obj)) {
        excerpt(line, len, ex, sizeof(ex));
        skip(w, "GET %.*s (watch): skipped event %ld: %s: %s", w->path_len, w->path, w->lineno,
             !type ? "no type" : "no object", ex);
        cJSON_Delete(ev);
        return 0;
    }
    if (!strcmp(type, "ERROR")) {
        /* The object is a Status: 410 means the resourceVersion is too old (Expired/Gone). */
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        const cJSON *reason = cJSON_GetObjectItemCaseSensitive(obj, "reason");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
        int c = cJSON_IsNumber(code) ? code->valueint : 0;
        ks__api_seterr(
            api, "GET %.*s (watch from resourceVersion %s): ERROR event: %d %s: %s%s", w->path_len,
            w->path, w->rv ? w->rv : "(none)", c, cJSON_IsString(reason) ? reason->valuestring : "",
            cJSON_IsString(msg) ? msg->valuestring : "(no message)", c == 410 ? "; relist" : "");
        cJSON_Delete(ev);
        return c == 410 ? KS_API_GONE : KS_EIO;
    }
    const char *known = NULL;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcmp(type, types[i]))
            known = types[i];
    if (!known) {
        skip(w, "GET %.*s (watch): skipped event %ld: unknown type \"%.40s\"", w->path_len, w->path,
             w->lineno, type);
        cJSON_Delete(ev);
        return 0;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    if (cJSON_IsString(rv) && rv->valuestring[0] && replace_str(&w->rv, rv->valuestring)) {
        cJSON_Delete(ev);
        return KS_ENOMEM;
    }
    cJSON_DetachItemViaPointer(ev, obj);
    cJSON_Delete(ev);
    return w->fn(known, obj, w->ud);
}

int ks__api_watch(ks_api *api, const char *path, const ks_api_watch_opts *opts, ks_api_event_fn fn,
                  void *ud, char **rv)
{
    static const ks_api_watch_opts none = {0};
    watch_state w = {.path = path, .fn = fn, .ud = ud};
    char *url = NULL, num[32];
    long status = 0;
    int rc;
    if (!opts)
        opts = &none;
    w.opts = opts;
    path_only(path, &w.path_len);
    if (rv) {
        free(*rv);
        *rv = NULL;
    }
    int timeout = opts->timeout_seconds > 0 ? opts->timeout_seconds : DEFAULT_WATCH_TIMEOUT_S;
    snprintf(num, sizeof(num), "%d", timeout);
    if ((opts->resource_version && !(w.rv = strdup(opts->resource_version))) ||
        !(url = strdup(path)) || ks__api_query_add(api, &url, "watch", "1") ||
        (opts->resource_version &&
         ks__api_query_add(api, &url, "resourceVersion", opts->resource_version)) ||
        ks__api_query_add(api, &url, "allowWatchBookmarks", "true") ||
        ks__api_query_add(api, &url, "timeoutSeconds", num) ||
        add_selectors(api, &url, opts->label_selector, opts->field_selector)) {
        ks__api_seterr(api, "GET %.*s (watch): out of memory", w.path_len, path);
        rc = KS_ENOMEM;
        goto out;
    }
    api->on_line = on_event_line;
    api->line_ud = &w;
    rc = ks__api_transfer(api, "GET", url, NULL, NULL, SINK_STREAM,
                          (long)(timeout + WATCH_GRACE_S) * 1000, &status);
    api->on_line = NULL;
    if (rc != 0)
        goto out;
    if (status != 200) {
        rc = ks__api_http_error(api, "GET", url, status);
        if (rc == KS_API_GONE) {
            size_t n = strlen(api->err);
            snprintf(api->err + n, sizeof(api->err) - n,
                     " (watch from resourceVersion %s is too old; relist)", w.rv ? w.rv : "(none)");
        }
        goto out;
    }
    if (api->len) /* a last event without its newline */
        rc = on_event_line(api, api->buf, api->len, &w);
out:
    if (rv) {
        *rv = w.rv;
        w.rv = NULL;
    }
    free(w.rv);
    free(url);
    return rc;
}

int ks__api_watch_body(ks_api *api, const char *path, const ks_api_watch_opts *opts,
                       const char *body, size_t len, size_t chunk, ks_api_event_fn fn, void *ud,
                       char **rv)
{
    static const ks_api_watch_opts none = {0};
    watch_state w = {.path = path, .opts = opts ? opts : &none, .fn = fn, .ud = ud};
    int rc = 0;
    path_only(path, &w.path_len);
    /* What ks__api_transfer sets up for a stream whose status was 200. */
    api->sink = SINK_STREAM;
    api->status_seen = api->stream_ok = 1;
    api->line_rc = 0;
    api->len = 0;
    api->on_line = on_event_line;
    api->line_ud = &w;
    for (size_t off = 0, n; off < len && rc == 0; off += n) {
        n = chunk && len - off > chunk ? chunk : len - off;
        /* The callback only reads p: curl's prototype is what makes it non-const. */
        if (ks__api_on_write((char *)body + off, 1, n, api) != n)
            rc = api->line_rc ? api->line_rc : KS_EIO;
    }
    api->on_line = NULL;
    if (rc == 0 && api->len)
        rc = on_event_line(api, api->buf, api->len, &w);
    api->len = 0;
    if (rv) {
        free(*rv);
        *rv = w.rv;
    } else {
        free(w.rv);
    }
    return rc;
}
