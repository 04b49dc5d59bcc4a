/*
 * A tiny HTTP/1.1 server for the health and metrics endpoints of live mode, on a thread of its
 * own:
 *
 *   GET /healthz           the health checks (opts.health_checks; "ping" when there are none, as
 *                          healthz.InstallHandler), listed and answered as /readyz is
 *   GET /livez             200 "ok" (the "ping" check; ?verbose lists it, as upstream)
 *   GET /readyz            200 "ok" when every readiness check passes; otherwise the upstream
 *                          listing, one line per check, "[+]<name> ok" or
 *                          "[-]<name> failed: reason withheld", then "readyz check failed", with
 *                          status 500 as k8s.io/apiserver's healthz does (opts.not_ready_status
 *                          changes it, e.g. to 503). ?verbose lists the checks on success too.
 *   GET /metrics           the registry in the text exposition format, Content-Type
 *                          "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
 *   GET /statusz           (with opts.zpages) kube-scheduler v1.37's ComponentStatusz page
 *                          (k8s.io/apiserver/pkg/server/statusz): text/plain by default (the
 *                          header, then Started / Up / Compiler version / Binary version /
 *                          Emulation version / Paths, with a delimiter picked at random per
 *                          request so that nobody parses it), or the structured object
 *                          config.k8s.io/v1beta1 (or the deprecated v1alpha1, with a Warning
 *                          header) Statusz for "Accept: application/json;as=Statusz;
 *                          g=config.k8s.io;v=v1beta1". "Go version" is upstream's field; kubesched
 *                          is C, so the text says "Compiler version" and the object leaves
 *                          goVersion out and carries annotation kubesched.io/compiler-version.
 *   GET /flagz             (with opts.zpages) ComponentFlagz: every command-line flag with its
 *                          value, sorted, as text/plain, or config.k8s.io/v1beta1 Flagz in JSON.
 *                          Both: an Accept that allows neither answers 406 with a JSON Status
 *                          "only the following media types are accepted: application/json,
 *                          text/plain" (upstream also offers application/yaml; kubesched not).
 *   anything else          404 "404 page not found"; a method other than GET or HEAD: 405
 *
 * The readiness checks are the caller's with the server's own "shutdown" (fails once
 * ks__httpserver_shutting_down was called) after the first opts.nready_before_shutdown of them
 * (upstream kube-scheduler without leader election: shutdown, sched-handler-sync; with it:
 * leaderElection, shutdown, sched-handler-sync).
 *
 * HTTPS when opts.tls is given (live mode always gives one: tlsserve.h), as upstream serves these
 * endpoints on 10259. With opts.authorize (live mode: delegated_auth.h) every request is first
 * authenticated and authorized as kube-scheduler's handler chain does (TokenReview,
 * SubjectAccessReview, /healthz /readyz /livez always allowed); without one every path is open
 * to whoever reaches the port. /configz and /debug/pprof are not served.
 *
 * Served by libmicrohttpd (httpserver.c says why): one thread per connection, at most 1024
 * connections and 256 from one client address, a connection idle for 10 s closed, a request
 * head larger than about 8 KiB refused (414/431). One request per connection, answered with
 * "Connection: close". So an idle or slow client, or a request waiting on the API server for its
 * authorization, holds its own thread and never delays a probe on another connection.
 *
 * Threads: start, shutting_down, port and stop may be called from any thread; stop must not race
 * with the other calls on the same server. Readiness callbacks and the authorizer run on the
 * connection threads, several at once.
 */
#ifndef KS_CORE_HTTPSERVER_H
#define KS_CORE_HTTPSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "util/metrics.h"
#include "live/tlsserve.h"

typedef struct ks_httpserver ks_httpserver;

/* One named readiness check, as upstream's healthz.NamedCheck ("sched-handler-sync"). */
typedef struct ks_http_check {
    const char *name; /* copied at start; [a-z0-9-]+ by convention */
    /* 1 when ready, 0 when not. Runs on a connection thread for every /readyz request, possibly
     * on several at once, so it must be cheap and thread-safe (read an atomic flag). */
    int (*ready)(void *ctx);
    void *ctx; /* borrowed: must stay valid until ks__httpserver_stop returns */
} ks_http_check;

/* One command-line flag for /flagz: its name without the dashes ("secure-port") and its value
 * as text ("10259"; the default when it was not given, as pflag's Value.String()). */
typedef struct ks_http_flag {
    const char *name, *value;
} ks_http_flag;

/* What /statusz and /flagz show. Strings are copied at start. */
typedef struct ks_http_zpages {
    const char *component;         /* the header line and metadata.name: "kubesched" */
    const char *binary_version;    /* kubesched's own version: "0.1.0" */
    const char *emulation_version; /* the Kubernetes minor whose kube-scheduler kubesched follows,
                                      "1.37"; NULL or "": left out, as upstream does */
    const char *compiler_version;  /* in the place of upstream's Go version: NULL = this build's
                                      compiler ("gcc 13.2.0") */
    int64_t start_time;            /* process start, Unix seconds; 0: from /proc (as upstream's
                                      GetProcessStart), else the time of ks__httpserver_start */
    const ks_http_flag *flags;
    size_t nflags;
} ks_http_zpages;

/* The TLS client certificate of a request, as the server checked it against opts.client_ca_pem
 * (upstream's x509 request authenticator): only passed when a certificate came. */
typedef struct ks_http_peer {
    int verified;            /* it chains to the client CA, is valid now and allows client auth */
    const char *error;       /* why it is not verified (verified 0) */
    const char *common_name; /* the subject's CN ("" when it has none) */
    const char *const *organizations; /* the subject's O values, in order */
    size_t norganizations;
} ks_http_peer;

/* Authenticates and authorizes one request before it is routed. method: "GET"...; path: the
 * request path, percent-decoded, without the query; authorization: the Authorization header or
 * NULL; peer: the client certificate, NULL when none came (or no client CA is set). All
 * borrowed for the call. Returns 0 to serve the request, or the HTTP status to answer with (401,
 * 403, 500) with *body (malloc'd, NUL-terminated, taken by the server; may stay NULL) and
 * *content_type (a static string; NULL: text/plain). Runs on the request's connection thread,
 * several at once: it may block (an API call) and must be thread-safe. */
typedef int (*ks_http_authorize_fn)(void *ctx, const char *method, const char *path,
                                    const char *authorization, const ks_http_peer *peer,
                                    char **body, const char **content_type);

typedef struct ks_httpserver_opts {
    const char *bind_address; /* a numeric IPv4/IPv6 address or a host name; NULL or "": 0.0.0.0 */
    int port;                 /* 0: the kernel picks a free port (see ks__httpserver_port) */
    ks_metrics *metrics;      /* borrowed, must outlive the server; NULL: /metrics is 404 */
    const ks_http_check *ready_checks; /* copied at start */
    size_t nready_checks;
    int not_ready_status;               /* status of a failing /readyz; 0: 500 as upstream */
    size_t nready_before_shutdown;      /* ready checks listed before "shutdown" (0: none) */
    const ks_http_check *health_checks; /* /healthz (copied at start); none: "ping" */
    size_t nhealth_checks;
    ks_tls_ctx *tls;              /* borrowed, must outlive the server; NULL: plain HTTP (tests) */
    const ks_http_zpages *zpages; /* copied at start; NULL: /statusz and /flagz are 404 */
    /* PEM CA certificates (copied at start): with opts.tls, a client may present a certificate,
     * checked against them and handed to the authorizer (--client-ca-file). NULL: none asked. */
    const char *client_ca_pem;
    ks_http_authorize_fn authorize; /* NULL: every request is served */
    void *authorize_ctx;            /* borrowed, must outlive the server */
} ks_httpserver_opts;

/* Bind, listen and start the thread. 0; KS_EINVAL (bad options, an address that does not
 * resolve); KS_EIO (socket, bind or listen failed, or the daemon did not start: logged with the
 * address, port and reason); KS_ENOMEM. OUT: *out, to be released with ks__httpserver_stop. A call
 * that fails starts no thread and leaves nothing to release. */
int ks__httpserver_start(const ks_httpserver_opts *opts, ks_httpserver **out);

/* The port the server listens on (the one chosen when opts.port was 0). */
int ks__httpserver_port(const ks_httpserver *s);

/* From now on the "shutdown" readiness check fails: load balancers stop sending traffic while
 * the scheduler drains. The server keeps answering until stop. */
void ks__httpserver_shutting_down(ks_httpserver *s);

/* Stop accepting, close every connection (waiting for the requests being answered: an
 * authorizer's API call ends within its timeout), join the threads, close the socket and free
 * the server. NULL: no-op. */
void ks__httpserver_stop(ks_httpserver *s);

#endif
