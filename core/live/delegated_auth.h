/*
 * Delegated authentication and authorization of the serving port, as kube-scheduler v1.37 sets
 * up k8s.io/apiserver's DelegatingAuthenticationOptions and DelegatingAuthorizationOptions:
 *
 * Authentication (authenticatorfactory.DelegatingAuthenticatorConfig with anonymous enabled):
 *   - a TLS client certificate (with --client-ca-file: the HTTP server checks it, ks_http_peer):
 *     verified, with a CN: user CN, groups the O values, no API call; not verified: an error,
 *     which a good bearer token still overrides, else 401 (union, then FailOnError);
 *   - no "Authorization: Bearer <token>" header (none, another scheme, an empty token): the
 *     request is anonymous, user "system:anonymous", group "system:unauthenticated";
 *   - a bearer token: a TokenReview (authentication.k8s.io/v1) through the authentication
 *     kubeconfig; authenticated: that user, with "system:authenticated" added; not
 *     authenticated, or the review failed: 401 with the Status "Unauthorized" (union.FailOnError:
 *     a bad token never falls back to anonymous). Answers are cached for the token cache TTL
 *     (--authentication-token-webhook-cache-ttl, 10s), failed calls are not; the cache keys are
 *     salted SHA-256 digests, never the tokens.
 *   Without an authentication client (no --authentication-kubeconfig and not in a cluster) a
 *   bearer token is not looked at and every request is anonymous, as upstream.
 * Authorization (the union kube-scheduler builds, in this order):
 *   1. a user in one of the always-allowed groups ("system:masters") is allowed;
 *   2. a path in the always-allowed paths (--authorization-always-allow-paths, default
 *      /healthz,/readyz,/livez; "x*" is a prefix) is allowed, whoever asks (no API call);
 *   3. a SubjectAccessReview (authorization.k8s.io/v1, nonResourceAttributes: the path and the
 *      verb, the lowercased method, "get" for GET) through the authorization kubeconfig, cached
 *      for --authorization-webhook-cache-authorized-ttl / -unauthorized-ttl (10s each); without
 *      an authorization client there is no opinion.
 *   Allowed: served. No opinion or denied: 403 with upstream's Status ("forbidden: User \"u\"
 *   cannot get path \"/metrics\"", then ": <reason>" when the review gave one). A review that
 *   failed: 500 "Internal Server Error: \"/metrics\": <why>".
 * Calls are retried as upstream's DefaultAuthWebhookRetryBackoff (5 tries, 500 ms growing by 1.5)
 * on connection errors, 429 and 5xx, each within the request timeout (10 s, upstream's
 * TokenAccessReviewTimeout).
 *
 * Not here (upstream has them): the lookup of kube-system/extension-apiserver-authentication
 * for a client CA when --client-ca-file is not given, the front-proxy request headers
 * (--requestheader-*), token audiences, and the websocket protocol token.
 *
 * Threads: ks__delegated_auth_check may run on many threads at once (the HTTP server's
 * connection threads); each call that needs the API server takes a client from a pool (or makes
 * one), so a slow review delays only its own request. create and free on one thread, free after
 * the HTTP server stopped; cancel on any thread.
 */
#ifndef KS_CORE_DELEGATED_AUTH_H
#define KS_CORE_DELEGATED_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "live/httpserver.h"
#include "live/kubeconfig.h"

typedef struct ks_delegated_auth ks_delegated_auth;

typedef struct ks_delegated_auth_opts {
    /* The clients' configurations (taken: freed by ks__delegated_auth_free, also when create
     * fails). NULL: no TokenReview / no SubjectAccessReview (see above). */
    ks_kubeconfig *authn_kc, *authz_kc;
    int64_t token_ttl_ns;        /* 0: 10 s; < 0: no cache */
    int64_t authorized_ttl_ns;   /* 0: 10 s; < 0: not cached */
    int64_t unauthorized_ttl_ns; /* 0: 10 s; < 0: not cached */
    /* NULL: "/healthz", "/readyz", "/livez" (kube-scheduler's); copied. */
    const char *const *always_allow_paths;
    size_t nalways_allow_paths;
    int no_always_allow_paths;  /* 1: none at all (--authorization-always-allow-paths="") */
    long request_timeout_ms;    /* each call: 0: 10000 */
    long retry_initial_ms;      /* the first retry's wait: 0: 500; < 0: no retries (tests) */
    int64_t (*clock)(void *ud); /* monotonic ns for the caches; NULL: ks__clock_now_ns */
    void *clock_ud;
} ks_delegated_auth_opts;

/* 0; KS_EINVAL with a sentence in err (a path pattern with a '*' before its end, as upstream
 * refuses); KS_ENOMEM. */
int ks__delegated_auth_create(const ks_delegated_auth_opts *o, ks_delegated_auth **out, char *err,
                              size_t errlen);
void ks__delegated_auth_free(ks_delegated_auth *a); /* NULL: no-op */

/* Ends the reviews in flight at once (their requests fail: 401 or 500) and every later one, so
 * that stopping the HTTP server does not wait for the API server (upstream cancels the request
 * contexts). Any thread; call before ks__httpserver_stop. NULL: no-op. */
void ks__delegated_auth_cancel(ks_delegated_auth *a);

/* The ks_http_authorize_fn of httpserver.h (ctx: the ks_delegated_auth). */
int ks__delegated_auth_check(void *ctx, const char *method, const char *path,
                             const char *authorization, const ks_http_peer *peer, char **body,
                             const char **content_type);

/* TokenReviews and SubjectAccessReviews sent so far (tests: that a cache answered). */
uint64_t ks__delegated_auth_calls(const ks_delegated_auth *a, int authz);

#endif
