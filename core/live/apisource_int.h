/* Private to apisource.c / apisource_ops.c: the live source's state. */
#ifndef KS_CORE_APISOURCE_INT_H
#define KS_CORE_APISOURCE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "api/custom_objects.h"
#include "live/apiclient.h"
#include "live/httpserver.h"
#include "util/metrics.h"
#include "live/apisource.h"
#include "sched/scheduler.h"
#include "util/strmap.h"

/* INF_CUSTOM: a resource a plugin watches (ks_resource_watch). */
/* INF_PODGROUP: scheduling.k8s.io/v1beta1 PodGroups, only with GenericWorkload on. */
enum { INF_NODE, INF_POD, INF_STORE, INF_CUSTOM, INF_PODGROUP };

typedef struct ks_apisrc ks_apisrc;

typedef struct ks_informer {
    ks_apisrc *src;
    const char *name; /* "Pod", "Node", "Service", ... (the kind) */
    const char *api_version;
    const char *path; /* "/api/v1/pods" */
    const char *field_selector;
    int type;                      /* INF_* */
    const struct ks_resource *res; /* INF_CUSTOM: the watched resource */
    /* NULL: the API server must serve this resource (core v1): a 404 is an error, retried.
     * Else what kubesched does without it ("preemption does not respect PodDisruptionBudgets"):
     * an API server that does not serve its group/version (absent from discovery, GET /apis)
     * or the resource (404 on the list) is not an error: the informer counts as synced with
     * no objects, says so once at -v=2, and lists again every KS_ABSENT_RECHECK_MS. */
    const char *without;
    /* With without: a 403 on the list also counts as not served (said once as a warning), for
     * a resource the system:kube-scheduler role of an older API server does not grant. */
    int absent_if_forbidden;
    const char *absent_why; /* set by ks__informer_discover when discovery lacks the group */
    int absent;             /* this informer's thread only: not served now */
    ks_api *api;
    pthread_t thread;
    int started;
    ks_strmap known;   /* uid -> struct inf_entry *; this informer's thread only */
    unsigned gen;      /* list generation, for reconciling after a relist */
    int failures;      /* failed lists / watches in a row, for the reconnect messages */
    long events;       /* events of the current watch */
    char api_err[128]; /* a failure the client did not report */
    atomic_int synced;
} ks_informer;

/* The fixed kinds (apisource.c k_informers) and the resources plugins may watch. */
#define KS_APISRC_FIXED_INFORMERS 32 /* room for apisource.c's k_informers (checked there) */
#define KS_APISRC_MAX_INFORMERS (KS_APISRC_FIXED_INFORMERS + KS_MAX_CUSTOM_RESOURCES)
/* How often an informer whose resource the API server does not serve lists it again. */
#define KS_ABSENT_RECHECK_MS 60000

struct ks_apisrc {
    const ks_apisource_opts *o;
    ks_kubeconfig *kc;
    ks_ratelimit *rl;
    ks_api_opts aopts;
    ks_scheduler *sched;
    ks_informer inf[KS_APISRC_MAX_INFORMERS];
    size_t ninf;
    atomic_int stop;
    pthread_mutex_t mu; /* apis, the sync wait */
    pthread_cond_t cv;
    ks_api **apis; /* side-effect clients made lazily, one per thread */
    size_t napis, capis;
    char hostname[128];
    /* The effects thread: status patches, events and evictions asked for by the scheduling
     * thread, which never waits on the network (tasks guarded by emu). */
    pthread_mutex_t emu;
    pthread_cond_t ecv;
    struct ks_effect *ehead, *etail;
    int equit;
    int estarted;
    pthread_t ethread;
    /* Endpoints and metrics. */
    atomic_int synced; /* every informer has its initial list */
    ks_metrics *metrics;
    ks_sched_metrics m;
    ks_httpserver *http;
    ks_tls_ctx *tls;                /* the serving port's certificate */
    struct ks_delegated_auth *auth; /* its authenticator/authorizer; freed after the server */
    /* Leader election (apisource_leader.c): the elector, published once started (the health
     * check on the HTTP thread reads it), and whether this replica leads (set by the elector's
     * thread under mu, waited for on cv). */
    struct ks_leaderelect *_Atomic le;
    atomic_int leading;
    /* A plugin call ran past its deadline (plugin_guard.h): /readyz's plugin-watchdog check
     * fails from then on, while the Lease is released and the process ends. */
    atomic_int plugin_hung;
    struct ks_reloader *reloader; /* configuration reload (reloader.h), NULL when off */
};

/* The guard's fatal hook in live mode (plugin_guard.h; ctx is the ks_apisrc): a watchdog report
 * fails /readyz (plugin-watchdog) and releases the Lease so that a standby takes over at once; a
 * crash (signal handler) does nothing more than the report: the Lease expires after its
 * leaseDuration. Exposed for tests. */
struct ks_guard_report;
void ks__apisrc_on_plugin_fatal(void *ctx, const struct ks_guard_report *r);
int ks__apisrc_plugins_ready(void *ctx);

/* The informer's handlers without the network (apisource.c), for unit tests: a listed item,
 * a watch event (the object is taken), the start and the end of a list (the end reconciles:
 * what that list lacked is deleted), and dropping every known object (not telling the
 * scheduler). The informer needs src (with sched), name, api_version, type and an initialised
 * known map. */
int ks__informer_list_item(ks_informer *in, cJSON *item);
int ks__informer_event(ks_informer *in, const char *type, cJSON *obj);
void ks__informer_begin_list(ks_informer *in);
void ks__informer_end_list(ks_informer *in);
void ks__informer_clear(ks_informer *in);

/* An informer's thread: list, then watch, until src->stop (exposed for tests, which run it
 * against a fake server). arg is the ks_informer. */
void *ks__informer_main(void *arg);

/* Discovery for an optional informer of a group (without set, api_version "group/version"):
 * GET /apis on in->api; when the APIGroupList lacks the group/version, sets and returns
 * in->absent_why (a phrase). NULL when it is served, when the informer is required or core v1,
 * or when /apis could not be read (logged at -v=2: then the list decides). Informer's thread. */
const char *ks__informer_discover(ks_informer *in);

/* Whether the APIGroupList body (JSON text of GET /apis) lists group_version
 * ("policy/v1"): 1 yes, 0 no, -1 not an APIGroupList. */
int ks__discovery_has(const cJSON *group_list, const char *group_version);

/* The calling thread's client for side effects (created on first use); NULL if that failed. */
ks_api *ks__apisrc_thread_api(ks_apisrc *s);
/* The ks_source_ops of the live source (ctx = s). */
ks_source_ops ks__apisrc_ops(ks_apisrc *s);
/* Starts / drains and stops the effects thread (start before scheduling, stop after the
 * bindings are done). */
int ks__apisrc_effects_start(ks_apisrc *s);
void ks__apisrc_effects_stop(ks_apisrc *s);

/* With leaderElection.leaderElect: starts the elector and waits until this replica leads or a
 * stop is requested. 0, or an error (bad timings, no client) with err set. Losing the lease
 * later ends the process at once with status 1, as kube-scheduler does. */
int ks__apisrc_lead(ks_apisrc *s, char *err, size_t errlen);
/* Once the bindings in flight are done: release the lease (when held) and stop campaigning. */
void ks__apisrc_lead_stop(ks_apisrc *s);
/* After the HTTP server is gone. */
void ks__apisrc_lead_free(ks_apisrc *s);
/* The "leaderElection" health check (ctx = s): healthy until an elector exists and leads
 * without having renewed for leaseDuration + 20 s. */
int ks__apisrc_leader_healthy(void *ctx);

#endif
