/*
 * A small kube-apiserver client over libcurl: plain requests, paginated lists and watches, with
 * the client-side rate limit of client-go (a token bucket, qps/burst, 50/100 for the scheduler)
 * in front of every request, including each page of a list, each watch and each retry.
 *
 * One ks_api owns one libcurl easy handle inside a multi handle: connections (HTTP/2 over TLS
 * where libcurl has it, else HTTP/1.1 keep-alive) are reused from one call to the next.
 * Requests send User-Agent "kubesched/0.1", Accept application/json, the kubeconfig's bearer
 * token (re-read from its file when that changes) and its client certificate.
 *
 * Return values (libuv style): 0 on success, a negative KS_E... code on failure with a sentence
 * in ks__api_error() naming the request, the HTTP status and the API server's Status message
 * (or the server URL and a hint for connection and TLS failures), or one of the positive
 * KS_API_* codes below. A callback that returns non-zero ends the call, which returns that value
 * (use a negative code or one of your own > 100).
 *
 * Threads: a ks_api is used by one thread at a time (one per thread, or the caller locks);
 * ks__api_stop is the exception and may be called from any thread. A ks_ratelimit may be shared
 * by any number of ks_api on any threads (it locks). The kubeconfig is shared read-only.
 */
#ifndef KS_CORE_APICLIENT_H
#define KS_CORE_APICLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "live/kubeconfig.h"

#define KS_API_USER_AGENT "kubesched/0.1"

enum {
    /* 410 Gone: the resourceVersion of a watch, or the continue token of a list, is too old
     * (HTTP 410 or an ERROR event with code 410). Relist from scratch, then watch again. */
    KS_API_GONE = 1,
    /* ks__api_stop was called: the call gave up as soon as it could. */
    KS_API_STOPPED = 2
};

/* --- rate limiter ----------------------------------------------------------------------------- */

/* client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter over x/time/rate): starts
 * full with `burst` tokens, refills at `qps` per second, never holds more than `burst`. Each
 * request takes one token; when none is left, the request waits for the time the bucket needs
 * to refill it (reservations queue up, so concurrent callers are served in turn). */
typedef struct ks_ratelimit ks_ratelimit;

/* qps > 0, burst >= 1; clock NULL: ks__clock_monotonic. 0, KS_EINVAL or KS_ENOMEM. */
int ks__ratelimit_create(double qps, int burst, ks_clock_fn clock, void *clock_ud,
                         ks_ratelimit **out);
void ks__ratelimit_destroy(ks_ratelimit *rl); /* NULL is a no-op */
/* Takes a token; returns how long (ns) the caller must wait before sending. Any thread. */
int64_t ks__ratelimit_reserve(ks_ratelimit *rl);

/* --- client --------------------------------------------------------------------------------- */

typedef struct ks_api ks_api;

typedef struct ks_api_opts {
    double qps;              /* 0: 50; < 0: no client-side limit (as client-go) */
    int burst;               /* 0: 100 */
    ks_ratelimit *limiter;   /* a limiter shared between clients (borrowed; must outlive them);
                                NULL: the client makes its own from qps and burst */
    const char *user_agent;  /* NULL: KS_API_USER_AGENT */
    long request_timeout_ms; /* whole request, except watches: 0: 60000; < 0: none */
    long connect_timeout_ms; /* 0: 10000 */
    int max_retries;         /* retries of a 429 / 5xx carrying Retry-After: 0: 10; < 0: none */
    ks_clock_fn clock;       /* for the own limiter; NULL: monotonic */
    void *clock_ud;
    /* Waits (rate limit, Retry-After): NULL sleeps and wakes early on ks__api_stop; tests pass
     * a function that advances their clock. */
    void (*sleep)(int64_t ns, void *ud);
    void *sleep_ud;
    int pem_files; /* hand `*-data` to libcurl as 0600 temp files even when blobs work (tests) */
} ks_api_opts;

/* kc is borrowed and must outlive the client. opts may be NULL. The TLS settings are checked
 * here (a libcurl that cannot take them is refused with a sentence); no connection is made. */
int ks__api_create(ks_kubeconfig *kc, const ks_api_opts *opts, ks_api **out, char *err,
                   size_t errlen);
void ks__api_destroy(ks_api *api); /* NULL is a no-op; not while a call runs */

/* The message of the last failed call ("" if none). Valid until the next call on api. */
const char *ks__api_error(const ks_api *api);

/* The HTTP status of the last response the last call got (0 if none came): 200 after a
 * watch that was established before it failed or ended. */
long ks__api_last_status(const ks_api *api);

/* Makes the call in progress (a watch, a list, a request, a rate-limit wait) return
 * KS_API_STOPPED promptly, and every later call too: it is for shutting down. Any thread. */
void ks__api_stop(ks_api *api);

/* Changes the whole-request timeout of the calls that follow (ms; < 0: none), as a per-call
 * context deadline does in client-go: the leader elector gives each renewal only what is left
 * of its renewDeadline. Same thread rules as a call. */
void ks__api_set_request_timeout(ks_api *api, long ms);

typedef struct ks_api_response {
    long status; /* HTTP status; 0 when no response came */
    char *body;  /* NUL-terminated, malloc'd (free with ks__api_response_free) */
    size_t len;
} ks_api_response;
void ks__api_response_free(ks_api_response *r);

/* method: "GET", "POST", "PUT", "PATCH", "DELETE". path: "/api/v1/nodes" (a query allowed),
 * appended to the server URL. body and content_type may be NULL. resp (may be NULL) gets the
 * status and body whatever the outcome; free it even on failure. Returns 0 for 2xx;
 * KS_ENOTFOUND (404), KS_EEXIST (409), KS_EINVAL (400, 422), KS_API_GONE (410), KS_EIO (any
 * other status, or no response), KS_ENOMEM, KS_API_STOPPED. 429 and 5xx responses that carry
 * Retry-After are retried up to max_retries times after the delay, as client-go does. */
int ks__api_request(ks_api *api, const char *method, const char *path, const char *body,
                    const char *content_type, ks_api_response *resp);

/* Called once per listed item or watched object. The object is the callee's (cJSON_Delete it or
 * keep it). Return 0 to go on. */
typedef int (*ks_api_item_fn)(cJSON *item, void *ud);

typedef struct ks_api_list_opts {
    const char *label_selector;   /* NULL: none */
    const char *field_selector;   /* NULL: none, e.g. "status.phase!=Succeeded" */
    const char *resource_version; /* NULL: the latest (a quorum read); "0": any, from cache */
    long limit;                   /* page size: 0: 500; < 0: one unpaged list */
} ks_api_list_opts;

/* GET path page by page (?limit=..&continue=..), calling fn for each item in order. *rv (may be
 * NULL) gets the list's resourceVersion (malloc'd; the caller frees), from which a watch starts.
 * An expired continue token (410) returns KS_API_GONE: items already delivered are stale, relist.
 */
int ks__api_list(ks_api *api, const char *path, const ks_api_list_opts *opts, ks_api_item_fn fn,
                 void *ud, char **rv);

/* One watch event: type is "ADDED", "MODIFIED", "DELETED" or "BOOKMARK" (a bookmark's object
 * carries only kind, apiVersion and metadata.resourceVersion). object as in ks_api_item_fn. */
typedef int (*ks_api_event_fn)(const char *type, cJSON *object, void *ud);
/* A line of the stream that was skipped (not JSON, no type, unknown type, no object). */
typedef void (*ks_api_skip_fn)(const char *msg, void *ud);

typedef struct ks_api_watch_opts {
    const char *resource_version; /* where to start: a list's resourceVersion */
    const char *label_selector;
    const char *field_selector;
    int timeout_seconds;    /* asked of the server (timeoutSeconds): 0: 300 */
    ks_api_skip_fn on_skip; /* NULL: skipped lines are logged as warnings */
    void *skip_ud;
} ks_api_watch_opts;

/* GET path?watch=1&resourceVersion=..&allowWatchBookmarks=true&timeoutSeconds=N and hands each
 * event to fn as it arrives. *rv (in/out, may be NULL) ends as the last resourceVersion seen
 * (events and bookmarks), where the next watch resumes; it starts as a copy of
 * opts->resource_version and is malloc'd (the caller frees, even on failure).
 * Returns 0 when the server ended the watch (its timeout: watch again from *rv), KS_API_GONE
 * (410: relist), KS_API_STOPPED, what fn returned, or a negative code (an ERROR event other than
 * 410, an HTTP error, the connection) with ks__api_error set. */
int ks__api_watch(ks_api *api, const char *path, const ks_api_watch_opts *opts, ks_api_event_fn fn,
                  void *ud, char **rv);

#endif
