/*
 * Private to core/apiclient*.c: the client's state and the transfer primitive that lists and
 * watches build on. apiclient.c owns setup, requests and error messages; apiclient_stream.c
 * lists and watches; apiclient_ratelimit.c the token bucket.
 */
#ifndef KS_CORE_APICLIENT_INT_H
#define KS_CORE_APICLIENT_INT_H

#include <stdatomic.h>

#include <curl/curl.h>

#include "live/apiclient.h"
#include "kubesched/plugin.h"

/* What the write callback does with the body. */
typedef enum api_sink { SINK_BUFFER, SINK_STREAM } api_sink;

struct ks_api {
    ks_kubeconfig *kc;     /* borrowed */
    CURLM *multi;          /* holds the connection cache; curl_multi_wakeup serves stop */
    CURL *easy;            /* reused for every call */
    ks_ratelimit *limiter; /* NULL: unlimited */
    ks_ratelimit *own_limiter;
    char *user_agent;
    long request_timeout_ms;
    int max_retries;
    void (*sleep)(int64_t ns, void *ud);
    void *sleep_ud;
    atomic_int stopped;
    struct curl_slist *connect_to; /* tls-server-name mapping, or NULL */
    char *base;                    /* URL prefix when it is not kc->server (curl_free) */

    /* Per transfer. */
    api_sink sink;
    char *buf; /* SINK_BUFFER body, or the error body of a failed watch */
    size_t len, cap;
    long last_status; /* the status of the last response (0: none) */
    long retry_after; /* seconds from the Retry-After header, -1 if none */
    /* SINK_STREAM: called with each complete line; returns non-zero to abort the transfer. */
    int (*on_line)(ks_api *api, char *line, size_t len, void *ud);
    void *line_ud;
    int line_rc;     /* what on_line returned when it aborted */
    int stream_ok;   /* the response status was 200: lines go to on_line */
    int status_seen; /* the status was looked at */
    char curl_err[CURL_ERROR_SIZE];
    char err[2048];
};

/* One GET/..., rate limited, with the retries of ks__api_request. The body lands in api->buf
 * (SINK_BUFFER) or goes line by line to api->on_line (SINK_STREAM, when the status is 200).
 * *status gets the HTTP status (0: none). timeout_ms: 0 none. Returns 0 when a response came
 * (any status), KS_API_STOPPED, the on_line value, or KS_EIO/KS_ENOMEM with api->err set. */
int ks__api_transfer(ks_api *api, const char *method, const char *path, const char *body,
                     const char *content_type, api_sink sink, long timeout_ms, long *status);

/* The write callback of every transfer (apiclient.c): buffers the body, or with SINK_STREAM and a
 * 200 status cuts it into lines for api->on_line. Exposed for ks__api_watch_body. */
size_t ks__api_on_write(char *p, size_t size, size_t nmemb, void *ud);

/* One page of a list response held in api->buf: each item (detached, the callee's) to fn, the
 * page's metadata.resourceVersion to *last_rv (kept when absent) and its continue token to *cont
 * (NULL when none). 0, fn's non-zero value, or KS_EPARSE/KS_ENOMEM with api->err set. */
int ks__api_list_page(ks_api *api, const char *path, ks_api_item_fn fn, void *ud, char **last_rv,
                      char **cont);

/* The watch without the network (tests/fuzz/fuzz_watch.c): body, as a 200 response to a watch of
 * path, goes through ks__api_on_write `chunk` bytes at a time (0: in one write) into the event
 * decoder and fn, exactly as a transfer's body would; a last line without its newline counts, as
 * at the end of a real watch. Returns and sets *rv as ks__api_watch. api needs no connection. */
int ks__api_watch_body(ks_api *api, const char *path, const ks_api_watch_opts *opts,
                       const char *body, size_t len, size_t chunk, ks_api_event_fn fn, void *ud,
                       char **rv);

/* Sets api->err for a response with a non-2xx status, from its Status body in api->buf, and
 * returns the code ks__api_request documents for that status. */
int ks__api_http_error(ks_api *api, const char *method, const char *path, long status);

/* Appends "&name=value" (or "?...") to *url with value escaped. 0 or KS_ENOMEM. */
int ks__api_query_add(ks_api *api, char **url, const char *name, const char *value);

KS_PRINTF(2, 3) void ks__api_seterr(ks_api *api, const char *fmt, ...);

#endif
