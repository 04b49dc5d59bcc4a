/*
 * Delegated authentication and authorization (delegated_auth.h): TokenReview and
 * SubjectAccessReview through core/live/apiclient, with upstream's caches, union order and
 * answers.
 */
#include "live/delegated_auth.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "kubesched/plugin.h"
#include "live/apiclient.h"
#include "util/clock.h"
#include "util/log.h"

#define DEFAULT_TTL_NS (10LL * 1000000000LL) /* upstream's 10s, for all three caches */
#define CACHE_MAX 4096                       /* entries per cache; upstream's token cache size */
#define RETRY_STEPS 5                        /* wait.Backoff{500ms, 1.5, 0.2, Steps: 5} */

/* --- a small TTL cache, keyed by strings ------------------------------------------------------ */

typedef struct centry {
    char *key;
    cJSON *val; /* owned; the cached answer */
    int64_t expires;
    struct centry *next;
} centry;

typedef struct cache {
    pthread_mutex_t mu;
    centry *head;
    size_t n;
} cache;

static void centry_free(centry *e)
{
    free(e->key);
    cJSON_Delete(e->val);
    free(e);
}

/* A copy of the cached value for key, or NULL (absent or expired; expired entries go). */
static cJSON *cache_get(cache *c, const char *key, int64_t now)
{
    cJSON *out = NULL;
    pthread_mutex_lock(&c->mu);
    for (centry **pp = &c->head; *pp;) {
        centry *e = *pp;
        if (e->expires <= now) {
            *pp = e->next;
            centry_free(e);
            c->n--;
            continue;
        }
        if (!out && strcmp(e->key, key) == 0)
            out = cJSON_Duplicate(e->val, 1);
        pp = &e->next;
    }
    pthread_mutex_unlock(&c->mu);
    return out;
}

/* Stores a copy of val for ttl (newest first; past CACHE_MAX the oldest entry goes). */
static void cache_put(cache *c, const char *key, const cJSON *val, int64_t now, int64_t ttl)
{
    if (ttl <= 0)
        return;
    centry *e = calloc(1, sizeof *e);
    if (!e || !(e->key = strdup(key)) || !(e->val = cJSON_Duplicate(val, 1))) {
        if (e)
            centry_free(e);
        return; /* out of memory: not cached, the next request asks again */
    }
    e->expires = now + ttl;
    pthread_mutex_lock(&c->mu);
    for (centry **pp = &c->head; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->key, key) == 0) { /* replaced */
            centry *old = *pp;
            *pp = old->next;
            centry_free(old);
            c->n--;
            break;
        }
    e->next = c->head;
    c->head = e;
    if (++c->n > CACHE_MAX) {
        centry **pp = &c->head;
        while ((*pp)->next)
            pp = &(*pp)->next;
        centry_free(*pp);
        *pp = NULL;
        c->n--;
    }
    pthread_mutex_unlock(&c->mu);
}

static void cache_clear(cache *c)
{
    for (centry *e = c->head, *n; e; e = n) {
        n = e->next;
        centry_free(e);
    }
    c->head = NULL;
    pthread_mutex_destroy(&c->mu);
}

/* --- a pool of API clients (ks_api is one thread at a time) ----------------------------------- */

typedef struct pool {
    ks_kubeconfig *kc; /* owned; NULL: no client */
    ks_ratelimit *rl;  /* shared by the pool's clients: upstream's qps 200, burst 400 */
    pthread_mutex_t mu;
    ks_api **idle;
    size_t nidle, cap;
    ks_api **all; /* every client made, idle or in a call: cancel stops them all */
    size_t nall, allcap;
    atomic_bool stopping;
    atomic_uint_fast64_t calls;
} pool;

static ks_api *pool_take(pool *p, long timeout_ms, char *err, size_t errlen)
{
    ks_api *api = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->nidle)
        api = p->idle[--p->nidle];
    pthread_mutex_unlock(&p->mu);
    if (api)
        return api;
    ks_api_opts ao = {.limiter = p->rl,
                      .request_timeout_ms = timeout_ms,
                      .connect_timeout_ms = timeout_ms,
                      .max_retries = -1}; /* retried here, as upstream's webhook backoff */
    if (ks__api_create(p->kc, &ao, &api, err, errlen) != 0)
        return NULL;
    pthread_mutex_lock(&p->mu);
    if (p->nall == p->allcap) {
        size_t cap = p->allcap ? p->allcap * 2 : 8;
        ks_api **n = realloc(p->all, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&p->mu);
            ks__api_destroy(api);
            snprintf(err, errlen, "out of memory for an API client");
            return NULL;
        }
        p->all = n;
        p->allcap = cap;
    }
    p->all[p->nall++] = api;
    if (atomic_load(&p->stopping)) /* cancelled meanwhile: this call ends at once too */
        ks__api_stop(api);
    pthread_mutex_unlock(&p->mu);
    return api;
}

/* Ends every call in flight (KS_API_STOPPED) and every later one; any thread. */
static void pool_cancel(pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stopping, true);
    for (size_t i = 0; i < p->nall; i++)
        ks__api_stop(p->all[i]);
    pthread_mutex_unlock(&p->mu);
}

static void pool_give(pool *p, ks_api *api)
{
    pthread_mutex_lock(&p->mu);
    if (p->nidle == p->cap) { /* cannot fail to grow past nall: allcap bounds it */
        size_t cap = p->allcap;
        ks_api **n = realloc(p->idle, cap * sizeof *n);
        if (!n) { /* keep it in `all` only: freed at the end */
            pthread_mutex_unlock(&p->mu);
            return;
        }
        p->idle = n;
        p->cap = cap;
    }
    p->idle[p->nidle++] = api;
    pthread_mutex_unlock(&p->mu);
}

static void pool_free(pool *p)
{
    for (size_t i = 0; i < p->nall; i++) /* every client is idle by now */
        ks__api_destroy(p->all[i]);
    free(p->all);
    free(p->idle);
    ks__ratelimit_destroy(p->rl);
    ks__kubeconfig_free(p->kc);
    pthread_mutex_destroy(&p->mu);
}

/* --- the authenticator and authorizer --------------------------------------------------------- */

struct ks_delegated_auth {
    pool authn, authz;
    cache tokens, reviews;
    int64_t token_ttl, allow_ttl, deny_ttl;
    char **paths; /* exact paths, without the leading "/" */
    size_t npaths;
    char **prefixes; /* from "x*" patterns, without the leading "/" and the "*" */
    size_t nprefixes;
    long timeout_ms, retry_ms;
    int64_t (*clock)(void *ud);
    void *clock_ud;
    unsigned char salt[32]; /* for the token cache's keys */
};

static int64_t now_ns(const ks_delegated_auth *a)
{
    return a->clock ? a->clock(a->clock_ud) : ks__clock_now_ns();
}

/* POSTs body to path through the pool, retrying as upstream's webhook backoff does (connection
 * errors, 429, 5xx). 0 with *out the parsed answer; else -1 with a sentence in why. */
static int post_review(ks_delegated_auth *a, pool *p, const char *path, const char *body,
                       cJSON **out, char *why, size_t whylen)
{
    char err[512] = "";
    ks_api *api = pool_take(p, a->timeout_ms, err, sizeof err);
    if (!api) {
        snprintf(why, whylen, "%s", err);
        return -1;
    }
    long wait_ms = a->retry_ms;
    int rc = -1;
    for (int step = 0; step < RETRY_STEPS && !atomic_load(&p->stopping); step++) {
        ks_api_response r = {0};
        atomic_fetch_add(&p->calls, 1);
        int e = ks__api_request(api, "POST", path, body, "application/json", &r);
        if (e == 0) {
            why[0] = '\0'; /* an earlier try's failure is no longer the answer */
            *out = cJSON_Parse(r.body ? r.body : "");
            if (*out)
                rc = 0;
            else
                snprintf(why, whylen, "POST %s: the answer is not JSON", path);
            ks__api_response_free(&r);
            break;
        }
        snprintf(why, whylen, "%s", ks__api_error(api));
        bool retry = r.status == 0 || r.status == 429 || r.status >= 500;
        ks__api_response_free(&r);
        if (!retry || wait_ms < 0 || step == RETRY_STEPS - 1 || atomic_load(&p->stopping))
            break;
        /* jitter 0.2, as wait.Backoff */
        long jittered = wait_ms + (long)((double)wait_ms * 0.2 * ((double)rand() / RAND_MAX));
        struct timespec ts = {jittered / 1000, (jittered % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        wait_ms = wait_ms * 3 / 2;
    }
    pool_give(p, api);
    return rc;
}

/* The salted digest of a token, hex: the cache never holds tokens. */
static void token_key(const ks_delegated_auth *a, const char *token, char out[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
        EVP_DigestUpdate(ctx, a->salt, sizeof a->salt) != 1 ||
        EVP_DigestUpdate(ctx, token, strlen(token)) != 1 ||
        EVP_DigestFinal_ex(ctx, md, &mdlen) != 1)
        memset(md, 0, sizeof md), mdlen = 0;
    EVP_MD_CTX_free(ctx);
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", mdlen ? md[i] : 0);
}

/* The user of a token: an object {username, uid, groups, extra} (the caller deletes it), or
 * NULL with *failed set when the review failed (an error: 401, not cached). NULL without
 * *failed: not authenticated (cached as such). */
static cJSON *authenticate(ks_delegated_auth *a, const char *token, bool *failed)
{
    char key[65];
    *failed = false;
    token_key(a, token, key);
    int64_t now = now_ns(a);
    cJSON *hit = a->token_ttl > 0 ? cache_get(&a->tokens, key, now) : NULL;
    if (hit) {
        cJSON *user = cJSON_IsObject(hit) ? cJSON_DetachItemFromObject(hit, "user") : NULL;
        cJSON_Delete(hit);
        return user; /* a cached "not authenticated" is {} */
    }
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "apiVersion", "authentication.k8s.io/v1");
    cJSON_AddStringToObject(req, "kind", "TokenReview");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "spec"), "token", token);
    char *body = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    char why[1024] = "";
    cJSON *resp = NULL;
    int rc = body ? post_review(a, &a->authn, "/apis/authentication.k8s.io/v1/tokenreviews", body,
                                &resp, why, sizeof why)
                  : -1;
    if (body) /* it held the token */
        memset(body, 0, strlen(body));
    free(body);
    if (rc != 0) {
        ks__log('E', "delegated-auth", "Unable to authenticate the request: TokenReview: %s", why);
        *failed = true;
        return NULL;
    }
    cJSON *status = cJSON_GetObjectItem(resp, "status");
    cJSON *user = NULL;
    if (cJSON_IsTrue(cJSON_GetObjectItem(status, "authenticated"))) {
        user = cJSON_DetachItemFromObject(status, "user");
        if (!cJSON_IsObject(user)) {
            cJSON_Delete(user);
            user = cJSON_CreateObject();
        }
    } else {
        cJSON *e = cJSON_GetObjectItem(status, "error");
        if (cJSON_IsString(e) && e->valuestring[0]) {
            /* an error is not cached (cacheErrs false) */
            if (ks__log_enabled(2))
                ks__log('I', "delegated-auth", "Unable to authenticate the request: %s",
                        e->valuestring);
            cJSON_Delete(resp);
            *failed = true;
            return NULL;
        }
    }
    cJSON_Delete(resp);
    cJSON *entry = cJSON_CreateObject();
    if (entry && user)
        cJSON_AddItemToObject(entry, "user", cJSON_Duplicate(user, 1));
    if (entry)
        cache_put(&a->tokens, key, entry, now, a->token_ttl);
    cJSON_Delete(entry);
    return user;
}

static bool has_group(const cJSON *user, const char *group)
{
    const cJSON *g;
    cJSON_ArrayForEach(
        g, cJSON_GetObjectItem(user, "groups")) if (cJSON_IsString(g) &&
                                                    !strcmp(g->valuestring, group)) return true;
    return false;
}

/* path.NewAuthorizer: the path without its leading "/", exact or by prefix. */
static bool path_allowed(const ks_delegated_auth *a, const char *path)
{
    const char *p = path[0] == '/' ? path + 1 : path;
    for (size_t i = 0; i < a->npaths; i++)
        if (!strcmp(a->paths[i], p))
            return true;
    for (size_t i = 0; i < a->nprefixes; i++)
        if (!strncmp(a->prefixes[i], p, strlen(a->prefixes[i])))
            return true;
    return false;
}

typedef enum { NO_OPINION, ALLOW, DENY, FAILED } decision;

/* The SubjectAccessReview of the webhook authorizer, cached by its spec. */
static decision review(ks_delegated_auth *a, const cJSON *user, const char *path, const char *verb,
                       char *reason, size_t reasonlen, char *why, size_t whylen)
{
    cJSON *spec = cJSON_CreateObject();
    cJSON *nra = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
    cJSON_AddStringToObject(nra, "path", path);
    cJSON_AddStringToObject(nra, "verb", verb);
    const cJSON *v = cJSON_GetObjectItem(user, "username");
    cJSON_AddStringToObject(spec, "user", cJSON_IsString(v) ? v->valuestring : "");
    if (cJSON_IsArray(v = cJSON_GetObjectItem(user, "groups")) && cJSON_GetArraySize(v))
        cJSON_AddItemToObject(spec, "groups", cJSON_Duplicate(v, 1));
    if (cJSON_IsObject(v = cJSON_GetObjectItem(user, "extra")) && v->child)
        cJSON_AddItemToObject(spec, "extra", cJSON_Duplicate(v, 1));
    if (cJSON_IsString(v = cJSON_GetObjectItem(user, "uid")) && v->valuestring[0])
        cJSON_AddStringToObject(spec, "uid", v->valuestring);
    char *key = cJSON_PrintUnformatted(spec); /* upstream's key: json.Marshal(r.Spec) */
    int64_t now = now_ns(a);
    cJSON *status = key ? cache_get(&a->reviews, key, now) : NULL;
    if (!status && key) {
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "apiVersion", "authorization.k8s.io/v1");
        cJSON_AddStringToObject(req, "kind", "SubjectAccessReview");
        cJSON_AddItemToObject(req, "spec", cJSON_Duplicate(spec, 1));
        char *body = cJSON_PrintUnformatted(req);
        cJSON_Delete(req);
        cJSON *resp = NULL;
        int rc =
            body ? post_review(a, &a->authz, "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                               body, &resp, why, whylen)
                 : -1;
        free(body);
        if (rc != 0) {
            ks__log('E', "delegated-auth", "Failed to make webhook authorizer request: %s", why);
            cJSON_Delete(spec);
            free(key);
            return FAILED;
        }
        status = cJSON_DetachItemFromObject(resp, "status");
        cJSON_Delete(resp);
        if (!status)
            status = cJSON_CreateObject();
        bool allowed = cJSON_IsTrue(cJSON_GetObjectItem(status, "allowed"));
        cache_put(&a->reviews, key, status, now, allowed ? a->allow_ttl : a->deny_ttl);
    }
    cJSON_Delete(spec);
    free(key);
    if (!status) {
        snprintf(why, whylen, "out of memory");
        return FAILED;
    }
    bool allowed = cJSON_IsTrue(cJSON_GetObjectItem(status, "allowed"));
    bool denied = cJSON_IsTrue(cJSON_GetObjectItem(status, "denied"));
    const cJSON *r = cJSON_GetObjectItem(status, "reason");
    snprintf(reason, reasonlen, "%s", cJSON_IsString(r) ? r->valuestring : "");
    cJSON_Delete(status);
    if (allowed && denied) {
        snprintf(why, whylen,
                 "webhook subject access review returned both allow and deny response");
        return DENY; /* upstream: Deny, with the error (the filter answers 500 for an error
                        only when not allowed: a Deny with an error is a 500) */
    }
    return denied ? DENY : allowed ? ALLOW : NO_OPINION;
}

/* sanitizer of responsewriters: & < > escaped in messages that echo the request. */
static void sanitize(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (; *in && n + 6 < cap; in++) {
        const char *rep = *in == '&' ? "&amp;" : *in == '<' ? "&lt;" : *in == '>' ? "&gt;" : NULL;
        if (rep) {
            memcpy(out + n, rep, strlen(rep));
            n += strlen(rep);
        } else {
            out[n++] = *in;
        }
    }
    out[n] = '\0';
}

/* A Status object as apimachinery writes it (json.Encoder: a newline at the end). */
static char *status_json(int code, const char *reason, const char *message, bool details)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "Status");
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(o, "status", "Failure");
    cJSON_AddStringToObject(o, "message", message);
    cJSON_AddStringToObject(o, "reason", reason);
    if (details)
        cJSON_AddObjectToObject(o, "details");
    cJSON_AddNumberToObject(o, "code", code);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    memcpy(t + n, "\n", 2);
    return t;
}

/* bearertoken.New: the token of "Bearer <token>" (the scheme case-insensitive, the header
 * trimmed), or NULL: not a bearer token, so the request goes on as anonymous. */
static char *bearer_token(const char *h)
{
    if (!h)
        return NULL;
    while (isspace((unsigned char)*h))
        h++;
    if (strncasecmp(h, "bearer ", 7) != 0)
        return NULL;
    const char *t = h + 7, *e = strchr(t, ' '); /* strings.SplitN(auth, " ", 3)[1] */
    size_t n = e ? (size_t)(e - t) : strlen(t);
    while (!e && n && isspace((unsigned char)t[n - 1]))
        n--;
    if (n == 0)
        return NULL; /* "Bearer  x": an empty token, ignored as upstream does (with a warning) */
    char *tok = malloc(n + 1);
    if (tok) {
        memcpy(tok, t, n);
        tok[n] = '\0';
    }
    return tok;
}

/* x509.CommonNameUserConversion: the user of a verified certificate, or NULL (no CN: this
 * authenticator has no answer). */
static cJSON *cert_user(const ks_http_peer *peer)
{
    if (!peer->common_name || !peer->common_name[0])
        return NULL;
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "username", peer->common_name);
    cJSON *g = cJSON_AddArrayToObject(u, "groups");
    for (size_t i = 0; i < peer->norganizations; i++)
        cJSON_AddItemToArray(g, cJSON_CreateString(peer->organizations[i]));
    return u;
}

int ks__delegated_auth_check(void *ctx, const char *method, const char *path,
                             const char *authorization, const ks_http_peer *peer, char **body,
                             const char **content_type)
{
    ks_delegated_auth *a = ctx;
    *body = NULL;
    *content_type = NULL;
    /* Authentication: the union of the client certificate and the bearer token (the first that
     * knows the user wins; errors only count when none does), then anonymous unless one of them
     * failed (FailOnError). */
    cJSON *user = NULL;
    bool failed = peer && !peer->verified;
    if (peer && peer->verified)
        user = cert_user(peer);
    else if (failed && ks__log_enabled(2))
        ks__log('I', "delegated-auth", "Unable to authenticate the request: %s",
                peer->error ? peer->error : "x509: unverified certificate");
    char *token = !user && a->authn.kc ? bearer_token(authorization) : NULL;
    if (token) {
        bool token_failed = false;
        user = authenticate(a, token, &token_failed);
        memset(token, 0, strlen(token));
        free(token);
        failed = !user; /* an error or not authenticated: both fail (FailOnError) */
    }
    if (!user && failed) {
        *body = status_json(401, "Unauthorized", "Unauthorized", false);
        *content_type = "application/json";
        return 401;
    }
    if (user) {
        /* group.NewAuthenticatedGroupAdder */
        if (!has_group(user, "system:authenticated") &&
            !has_group(user, "system:unauthenticated")) {
            cJSON *groups = cJSON_GetObjectItem(user, "groups");
            if (!cJSON_IsArray(groups)) {
                cJSON_DeleteItemFromObject(user, "groups");
                groups = cJSON_AddArrayToObject(user, "groups");
            }
            cJSON_AddItemToArray(groups, cJSON_CreateString("system:authenticated"));
        }
    } else {
        user = cJSON_CreateObject(); /* anonymous.NewAuthenticator */
        cJSON_AddStringToObject(user, "username", "system:anonymous");
        cJSON *g = cJSON_AddArrayToObject(user, "groups");
        cJSON_AddItemToArray(g, cJSON_CreateString("system:unauthenticated"));
    }
    /* Authorization: privileged groups, always-allowed paths, then the webhook. */
    char verb[16];
    size_t i = 0;
    for (; method[i] && i < sizeof verb - 1; i++)
        verb[i] = (char)tolower((unsigned char)method[i]);
    verb[i] = '\0';
    decision d = NO_OPINION;
    char reason[512] = "", why[1024] = "";
    if (has_group(user, "system:masters") || path_allowed(a, path))
        d = ALLOW;
    else if (a->authz.kc)
        d = review(a, user, path, verb, reason, sizeof reason, why, sizeof why);
    const cJSON *un = cJSON_GetObjectItem(user, "username");
    char name[256];
    snprintf(name, sizeof name, "%s", cJSON_IsString(un) ? un->valuestring : "");
    cJSON_Delete(user);
    if (d == ALLOW)
        return 0;
    if (d == FAILED || why[0]) {
        /* responsewriters.InternalError */
        char msg[2048], clean[2048];
        snprintf(msg, sizeof msg, "Internal Server Error: \"%s\": %s", path, why);
        sanitize(msg, clean, sizeof clean - 1);
        size_t n = strlen(clean);
        clean[n] = '\n';
        clean[n + 1] = '\0';
        *body = strdup(clean);
        return 500;
    }
    if (ks__log_enabled(4))
        ks__log('I', "delegated-auth", "Forbidden: \"%s\", Reason: \"%s\"", path, reason);
    char msg[2048], clean[2048];
    /* forbiddenMessage for a non-resource request, then NewForbidden without a resource. */
    snprintf(msg, sizeof msg, "User \"%s\" cannot %s path \"%s\"%s%s", name, verb, path,
             reason[0] ? ": " : "", reason);
    sanitize(msg, clean, sizeof clean);
    snprintf(msg, sizeof msg, "forbidden: %s", clean);
    *body = status_json(403, "Forbidden", msg, true);
    *content_type = "application/json";
    return 403;
}

void ks__delegated_auth_cancel(ks_delegated_auth *a)
{
    if (!a)
        return;
    pool_cancel(&a->authn);
    pool_cancel(&a->authz);
}

uint64_t ks__delegated_auth_calls(const ks_delegated_auth *a, int authz)
{
    return atomic_load(authz ? &a->authz.calls : &a->authn.calls);
}

static int pool_init(pool *p, ks_kubeconfig *kc)
{
    p->kc = kc;
    pthread_mutex_init(&p->mu, NULL);
    atomic_init(&p->calls, 0);
    atomic_init(&p->stopping, false);
    /* upstream raises these clients' limits to qps 200, burst 400 */
    return kc ? ks__ratelimit_create(200, 400, NULL, NULL, &p->rl) : 0;
}

int ks__delegated_auth_create(const ks_delegated_auth_opts *o, ks_delegated_auth **out, char *err,
                              size_t errlen)
{
    *out = NULL;
    ks_delegated_auth *a = calloc(1, sizeof *a);
    if (!a) {
        ks__kubeconfig_free(o->authn_kc);
        ks__kubeconfig_free(o->authz_kc);
        snprintf(err, errlen, "out of memory creating the delegated authentication");
        return KS_ENOMEM;
    }
    pthread_mutex_init(&a->tokens.mu, NULL);
    pthread_mutex_init(&a->reviews.mu, NULL);
    int rc = pool_init(&a->authn, o->authn_kc);
    int rc2 = pool_init(&a->authz, o->authz_kc);
    if (rc || rc2) {
        ks__delegated_auth_free(a);
        snprintf(err, errlen, "out of memory creating the delegated authentication");
        return KS_ENOMEM;
    }
    a->token_ttl = o->token_ttl_ns ? o->token_ttl_ns : DEFAULT_TTL_NS;
    a->allow_ttl = o->authorized_ttl_ns ? o->authorized_ttl_ns : DEFAULT_TTL_NS;
    a->deny_ttl = o->unauthorized_ttl_ns ? o->unauthorized_ttl_ns : DEFAULT_TTL_NS;
    a->timeout_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 10000;
    a->retry_ms = o->retry_initial_ms ? o->retry_initial_ms : 500;
    a->clock = o->clock;
    a->clock_ud = o->clock_ud;
    if (RAND_bytes(a->salt, sizeof a->salt) != 1)
        for (size_t i = 0; i < sizeof a->salt; i++) /* no entropy: still keyed per process */
            a->salt[i] = (unsigned char)(rand() ^ (int)time(NULL));
    static const char *const k_default[] = {"/healthz", "/readyz", "/livez"};
    const char *const *paths = o->always_allow_paths ? o->always_allow_paths : k_default;
    size_t n = o->no_always_allow_paths ? 0 : o->always_allow_paths ? o->nalways_allow_paths : 3;
    a->paths = calloc(n + 1, sizeof *a->paths);
    a->prefixes = calloc(n + 1, sizeof *a->prefixes);
    if (!a->paths || !a->prefixes) {
        ks__delegated_auth_free(a);
        snprintf(err, errlen, "out of memory creating the delegated authentication");
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const char *p = paths[i][0] == '/' ? paths[i] + 1 : paths[i];
        size_t len = strlen(p);
        if (len > 1 && memchr(p, '*', len - 1)) {
            snprintf(err, errlen,
                     "--authorization-always-allow-paths: only trailing * allowed in \"%s\"",
                     paths[i]);
            ks__delegated_auth_free(a);
            return KS_EINVAL;
        }
        bool prefix = len && p[len - 1] == '*';
        char *copy = strndup(p, prefix ? len - 1 : len);
        if (!copy) {
            ks__delegated_auth_free(a);
            snprintf(err, errlen, "out of memory creating the delegated authentication");
            return KS_ENOMEM;
        }
        if (prefix)
            a->prefixes[a->nprefixes++] = copy;
        else
            a->paths[a->npaths++] = copy;
    }
    *out = a;
    return 0;
}

void ks__delegated_auth_free(ks_delegated_auth *a)
{
    if (!a)
        return;
    pool_free(&a->authn);
    pool_free(&a->authz);
    cache_clear(&a->tokens);
    cache_clear(&a->reviews);
    for (size_t i = 0; i < a->npaths; i++)
        free(a->paths[i]);
    for (size_t i = 0; i < a->nprefixes; i++)
        free(a->prefixes[i]);
    free(a->paths);
    free(a->prefixes);
    free(a);
}
