/*
 * The elector (leaderelect.h): its thread runs client-go's LeaderElector.Run: acquire, then
 * renew until lost or stopped, then release. The record logic is in leaderelect_record.c.
 *
 * Shared state: `stop` and `api_stopped` under mu (the controlling thread sets them, the elector
 * reads them between requests and sleeps on cv); `leader` and `observed_at_ms` are atomics read
 * by the health check on the HTTP thread. Everything else belongs to the elector's thread.
 */
#include "live/leaderelect.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"

#define JITTER_FACTOR 1.2            /* leaderelection.JitterFactor */
#define HEALTHZ_TOLERANCE_MS 20000   /* NewLeaderHealthzAdaptor(time.Second * 20) */
#define METRIC_NAME "kube-scheduler" /* LeaderElectionConfig.Name in kube-scheduler */

struct ks_leaderelect {
    ks_leaderelect_opts o; /* strings below are our copies */
    char *ns, *name, *event_component;
    char desc[512];
    char identity[KS_LE_ID_MAX];
    char *lease_path, *leases_path;
    ks_api_opts aopts;
    ks_api *api;
    long last_status; /* HTTP status of the last PUT / POST */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    int stop;          /* guarded by mu */
    int leading;       /* guarded by mu: past the acquire loop, so stop leaves the api alone */
    int api_stopped;   /* guarded by mu */
    int joined;        /* the controlling thread's: stop was done */
    atomic_int leader; /* the last observed record names us */
    _Atomic int64_t observed_at_ms;
    /* The elector's thread only. */
    ks_lease_record observed; /* observedRecord */
    ks_lease_record raw;      /* observedRawRecord: the record last read */
    int have_raw;
    cJSON *lease; /* the Lease last read or written (its metadata for a PUT) */
    uint64_t rng;
    ks_metric *master, *slowpath;
};

static int64_t now_ms(void) { return ks__clock_now_ms(); }

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int stopping(ks_leaderelect *le)
{
    pthread_mutex_lock(&le->mu);
    int s = le->stop;
    pthread_mutex_unlock(&le->mu);
    return s;
}

/* Sleeps ms, or less when stopped. Returns 1 when stopped. */
static int nap(ks_leaderelect *le, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&le->mu);
    while (!le->stop && pthread_cond_timedwait(&le->cv, &le->mu, &ts) != ETIMEDOUT)
        ;
    int s = le->stop;
    pthread_mutex_unlock(&le->mu);
    return s;
}

/* wait.Jitter(retryPeriod, 1.2): retryPeriod + rand[0,1) * 1.2 * retryPeriod. */
static int64_t jittered(ks_leaderelect *le, int64_t ms)
{
    le->rng ^= le->rng << 13;
    le->rng ^= le->rng >> 7;
    le->rng ^= le->rng << 17;
    double r = (double)(le->rng >> 11) / 9007199254740992.0;
    return ms + (int64_t)(r * JITTER_FACTOR * (double)ms);
}

static void set_observed(ks_leaderelect *le, const ks_lease_record *rec)
{
    le->observed = *rec;
    atomic_store(&le->observed_at_ms, now_ms());
    atomic_store(&le->leader, strcmp(rec->holder, le->identity) == 0);
}

static void keep_lease(ks_leaderelect *le, const char *body)
{
    cJSON *o = body ? cJSON_Parse(body) : NULL;
    if (!o)
        return; /* keep the old one: its resourceVersion makes the next PUT conflict, then GET */
    cJSON_Delete(le->lease);
    le->lease = o;
}

/* Sends rec as the Lease's spec: PUT over the Lease last seen (update) or POST a new one
 * (create), and keeps what the server answers. 0, or the client's code with ks__api_error set
 * (KS_EEXIST for 409 Conflict). */
static int lease_write(ks_leaderelect *le, const char *method, const cJSON *last, const char *path,
                       const ks_lease_record *rec)
{
    cJSON *o = ks__lease_encode(last, le->ns, le->name, rec);
    char *body = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!body)
        return KS_ENOMEM;
    ks_api_response r = {0};
    int rc = ks__api_request(le->api, method, path, body, "application/json", &r);
    le->last_status = r.status;
    free(body);
    if (rc == 0)
        keep_lease(le, r.body);
    ks__api_response_free(&r);
    return rc;
}

/* Lock.Update: PUT the Lease last seen with rec as its spec. */
static int lease_update(ks_leaderelect *le, const ks_lease_record *rec)
{
    if (!le->lease)
        return KS_EINVAL; /* "lease not initialized, call get or create first" */
    return lease_write(le, "PUT", le->lease, le->lease_path, rec);
}

/* Lock.Create: POST a new Lease. */
static int lease_create(ks_leaderelect *le, const ks_lease_record *rec)
{
    return lease_write(le, "POST", NULL, le->leases_path, rec);
}

/* What would fix a 403 on the Lease: upstream's system:kube-scheduler ClusterRole may create any
 * Lease but get and update only the one named kube-scheduler. */
static const char *forbidden_hint(const ks_leaderelect *le, long status)
{
    if (status != 403)
        return "";
    return " (grant get and update on this Lease: e.g. add its name to the resourceNames of the "
           "leases rule of the system:kube-scheduler ClusterRole, or bind a Role in its namespace)";
}

/* Gives the next request of a try the time left before deadline (0: no deadline of the try,
 * the client's timeout renewDeadline, as in the acquire loop). 0 when the deadline has passed:
 * upstream runs the whole try under the renewal's context, so no request of it, the fast path's
 * PUT, the GET and the PUT after it together, may outlast renewDeadline. */
static int arm(ks_leaderelect *le, int64_t deadline)
{
    if (!deadline) {
        ks__api_set_request_timeout(le->api, (long)le->o.renew_deadline_ms);
        return 1;
    }
    int64_t left = deadline - now_ms();
    if (left <= 0)
        return 0;
    ks__api_set_request_timeout(le->api, (long)left);
    return 1;
}

/* tryAcquireOrRenew, its requests bounded by deadline (see arm). 1 when we hold the lease
 * afterwards. */
static int try_acquire_or_renew(ks_leaderelect *le, int64_t deadline)
{
    char now[KS_LE_TIME_MAX], err[256] = "";
    int64_t mono = now_ms();
    ks_lease_record rec;
    ks__lease_microtime(wall_ns(), now, sizeof now);

    /* 1. The leader updates optimistically, assuming the Lease it saw is still current. */
    if (atomic_load(&le->leader) && le->lease &&
        atomic_load(&le->observed_at_ms) + (int64_t)le->observed.lease_duration_seconds * 1000 >
            mono) {
        if (!arm(le, deadline))
            return 0;
        ks__le_next_record(&le->observed, KS_LE_RENEW, le->identity, le->o.lease_duration_ms, now,
                           &rec);
        if (lease_update(le, &rec) == 0) {
            set_observed(le, &rec);
            return 1;
        }
        ks__log('E', "leaderelection",
                "Failed to update lock optimitically: %s, falling back to slow path",
                ks__api_error(le->api));
    }

    /* 2. Get or create the record. */
    if (!arm(le, deadline))
        return 0;
    ks_api_response r = {0};
    int rc = ks__api_request(le->api, "GET", le->lease_path, NULL, NULL, &r);
    if (rc == KS_ENOTFOUND) {
        ks__api_response_free(&r);
        ks__le_next_record(NULL, KS_LE_ACQUIRE, le->identity, le->o.lease_duration_ms, now, &rec);
        if (!arm(le, deadline))
            return 0;
        if ((rc = lease_create(le, &rec)) != 0) {
            if (rc != KS_API_STOPPED)
                ks__log('E', "leaderelection",
                        "error initially creating leader election record: %s%s",
                        ks__api_error(le->api), forbidden_hint(le, le->last_status));
            return 0;
        }
        set_observed(le, &rec);
        return 1;
    }
    if (rc != 0) {
        if (rc != KS_API_STOPPED)
            ks__log('E', "leaderelection", "error retrieving resource lock %s: %s%s", le->desc,
                    ks__api_error(le->api), forbidden_hint(le, r.status));
        ks__api_response_free(&r);
        return 0;
    }
    cJSON *lease = cJSON_Parse(r.body ? r.body : "");
    ks__api_response_free(&r);
    ks_lease_record old;
    if (ks__lease_decode(lease, &old, NULL, 0, err, sizeof err) != 0) {
        ks__log('E', "leaderelection", "error retrieving resource lock %s: GET %s: %s", le->desc,
                le->lease_path, err);
        cJSON_Delete(lease);
        return 0;
    }
    cJSON_Delete(le->lease);
    le->lease = lease;

    /* 3. The record changed since we last looked: it was renewed (or taken) just now, by our
     * clock. */
    if (!le->have_raw || !ks__lease_record_same(&le->raw, &old)) {
        set_observed(le, &old);
        le->raw = old;
        le->have_raw = 1;
    }
    ks_le_decision d =
        ks__le_decide(&le->observed, atomic_load(&le->observed_at_ms), mono, le->identity);
    if (d == KS_LE_WAIT) {
        if (ks__log_enabled(4))
            ks__log('I', "leaderelection", "lock is held by %s and has not yet expired",
                    old.holder);
        return 0;
    }
    /* 4. Renew (keep acquireTime and leaseTransitions) or take it over (one more transition). */
    if (d == KS_LE_RENEW)
        ks__metrics_inc(le->slowpath);
    ks__le_next_record(&old, d, le->identity, le->o.lease_duration_ms, now, &rec);
    if (!arm(le, deadline))
        return 0;
    if ((rc = lease_update(le, &rec)) != 0) {
        if (rc != KS_API_STOPPED)
            ks__log('E', "leaderelection", "Failed to update lock: %s%s", ks__api_error(le->api),
                    forbidden_hint(le, le->last_status));
        return 0;
    }
    set_observed(le, &rec);
    return 1;
}

/* Lock.RecordEvent: a core/v1 Event on the Lease, as the legacy recorder writes it. Best effort. */
static void record_event(ks_leaderelect *le, const char *what)
{
    if (!le->event_component || !le->lease)
        return;
    char msg[KS_LE_ID_MAX + 64], evname[512], ts[32];
    int64_t t = wall_ns();
    time_t sec = (time_t)(t / 1000000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(msg, sizeof msg, "%s %s", le->identity, what);
    snprintf(evname, sizeof evname, "%s.%llx", le->name, (unsigned long long)t);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(le->lease, "metadata");
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(meta, "uid");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    cJSON *ev = cJSON_CreateObject(), *m, *io, *src;
    if (!ev)
        return;
    cJSON_AddStringToObject(ev, "apiVersion", "v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    if ((m = cJSON_AddObjectToObject(ev, "metadata"))) {
        cJSON_AddStringToObject(m, "name", evname);
        cJSON_AddStringToObject(m, "namespace", le->ns);
    }
    if ((io = cJSON_AddObjectToObject(ev, "involvedObject"))) {
        cJSON_AddStringToObject(io, "kind", "Lease");
        cJSON_AddStringToObject(io, "namespace", le->ns);
        cJSON_AddStringToObject(io, "name", le->name);
        if (cJSON_IsString(uid))
            cJSON_AddStringToObject(io, "uid", uid->valuestring);
        cJSON_AddStringToObject(io, "apiVersion", "coordination.k8s.io/v1");
        if (cJSON_IsString(rv))
            cJSON_AddStringToObject(io, "resourceVersion", rv->valuestring);
    }
    cJSON_AddStringToObject(ev, "reason", "LeaderElection");
    cJSON_AddStringToObject(ev, "message", msg);
    if ((src = cJSON_AddObjectToObject(ev, "source")))
        cJSON_AddStringToObject(src, "component", le->event_component);
    cJSON_AddStringToObject(ev, "firstTimestamp", ts);
    cJSON_AddStringToObject(ev, "lastTimestamp", ts);
    cJSON_AddNumberToObject(ev, "count", 1);
    cJSON_AddStringToObject(ev, "type", "Normal");
    cJSON_AddStringToObject(ev, "reportingComponent", le->event_component);
    cJSON_AddStringToObject(ev, "reportingInstance", "");
    char *body = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    if (!body)
        return;
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", le->ns);
    ks__api_set_request_timeout(le->api, (long)le->o.renew_deadline_ms);
    int rc = ks__api_request(le->api, "POST", path, body, "application/json", NULL);
    if (rc != 0 && rc != KS_API_STOPPED)
        ks__log('W', "leaderelection", "event \"%s\" on Lease %s not recorded: %s", msg, le->desc,
                ks__api_error(le->api));
    free(body);
}

/* release: let go of the lease if we hold it (ReleaseOnCancel). */
static void release(ks_leaderelect *le)
{
    if (!atomic_load(&le->leader))
        return;
    pthread_mutex_lock(&le->mu);
    int fresh = le->api_stopped;
    le->api_stopped = 0;
    pthread_mutex_unlock(&le->mu);
    if (fresh) { /* stop came while we were still acquiring: the old client refuses every call */
        char err[256];
        ks_api *api = NULL;
        if (ks__api_create(le->o.kc, &le->aopts, &api, err, sizeof err) != 0) {
            ks__log('E', "leaderelection", "Failed to release lock: %s", err);
            return;
        }
        ks__api_destroy(le->api);
        le->api = api;
    }
    char now[KS_LE_TIME_MAX];
    ks_lease_record rec;
    ks__lease_microtime(wall_ns(), now, sizeof now);
    ks__le_release_record(&le->observed, now, &rec);
    ks__api_set_request_timeout(le->api, (long)le->o.renew_deadline_ms);
    if (lease_update(le, &rec) != 0) {
        ks__log('E', "leaderelection", "Failed to release lock: %s", ks__api_error(le->api));
        return;
    }
    set_observed(le, &rec);
    if (ks__log_enabled(2))
        ks__log('I', "leaderelection", "released lease %s", le->desc);
}

static void *elector_main(void *arg)
{
    ks_leaderelect *le = arg;
    ks__log('I', "leaderelection", "attempting to acquire leader lease %s...", le->desc);
    /* acquire: wait.JitterUntil(tryAcquireOrRenew, retryPeriod, 1.2, sliding) */
    for (;;) {
        if (stopping(le))
            return NULL;
        if (try_acquire_or_renew(le, 0))
            break;
        if (ks__log_enabled(4))
            ks__log('I', "leaderelection", "failed to acquire lease %s", le->desc);
        if (nap(le, jittered(le, le->o.retry_period_ms)))
            return NULL;
    }
    pthread_mutex_lock(&le->mu);
    le->leading = 1;
    int stopped = le->stop;
    pthread_mutex_unlock(&le->mu);
    ks__metrics_set(le->master, 1);
    ks__log('I', "leaderelection", "successfully acquired lease %s", le->desc);
    if (!stopped && le->o.on_started_leading)
        le->o.on_started_leading(le->o.ud);
    /* Upstream records this event before the log line, through an asynchronous broadcaster;
     * ours is a request, so it comes after scheduling was let go. */
    record_event(le, "became leader");

    /* renew: wait.Until(PollImmediateUntil(retryPeriod, tryAcquireOrRenew, renewDeadline),
     * retryPeriod) until a renewal times out or we are stopped. */
    int lost = 0;
    while (!stopping(le)) {
        int64_t deadline = now_ms() + le->o.renew_deadline_ms;
        int renewed = 0;
        for (;;) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                break;
            if (try_acquire_or_renew(le, deadline)) {
                renewed = 1;
                break;
            }
            left = deadline - now_ms();
            if (left <= 0 || nap(le, left < le->o.retry_period_ms ? left : le->o.retry_period_ms))
                break;
        }
        if (stopping(le))
            break; /* a stop, not a loss: release below */
        if (!renewed) {
            ks__metrics_set(le->master, 0);
            ks__log('I', "leaderelection",
                    "failed to renew lease %s: timed out waiting for the condition", le->desc);
            lost = 1;
            break;
        }
        if (ks__log_enabled(5))
            ks__log('I', "leaderelection", "successfully renewed lease %s", le->desc);
        if (nap(le, le->o.retry_period_ms))
            break;
    }
    if (lost) {
        /* The callback of kube-scheduler exits at once; releasing would only delay that. */
        if (le->o.on_stopped_leading)
            le->o.on_stopped_leading(le->o.ud, 1);
        return NULL;
    }
    release(le);
    ks__metrics_set(le->master, 0);
    record_event(le, "stopped leading");
    if (le->o.on_stopped_leading)
        le->o.on_stopped_leading(le->o.ud, 0);
    return NULL;
}

/* --- lifecycle ---------------------------------------------------------------------------------
 */

static void elector_free(ks_leaderelect *le)
{
    if (!le)
        return;
    ks__api_destroy(le->api);
    cJSON_Delete(le->lease);
    free(le->ns);
    free(le->name);
    free(le->event_component);
    free(le->lease_path);
    free(le->leases_path);
    pthread_cond_destroy(&le->cv);
    pthread_mutex_destroy(&le->mu);
    free(le);
}

static void register_metrics(ks_leaderelect *le, ks_metrics *m)
{
    static const char *const labels[] = {"name"};
    ks_metric_family *f = NULL;
    ks_metric_opts go = {
        KS_METRIC_GAUGE,
        "leader_election_master_status",
        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
        "indicates master. 'name' is the string used to identify the lease. Please make sure to "
        "group by name.",
        KS_STABILITY_ALPHA,
        labels,
        1,
        NULL,
        0};
    if (ks__metrics_register(m, &go, &f) == 0)
        le->master = KS_METRICS_WITH(f, METRIC_NAME);
    ks_metric_opts co = {
        KS_METRIC_COUNTER,
        "leader_election_slowpath_total",
        "Total number of slow path exercised in renewing leader leases. 'name' is the string used "
        "to identify the lease. Please make sure to group by name.",
        KS_STABILITY_ALPHA,
        labels,
        1,
        NULL,
        0};
    if (ks__metrics_register(m, &co, &f) == 0)
        le->slowpath = KS_METRICS_WITH(f, METRIC_NAME);
    ks__metrics_set(le->master, 0); /* NewLeaderElector: leaderOff(name) */
}

int ks__leaderelect_start(const ks_leaderelect_opts *o, ks_leaderelect **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    /* NewLeaderElector's checks, with its messages. */
    const char *bad = NULL;
    if (o->lease_duration_ms <= o->renew_deadline_ms)
        bad = "leaseDuration must be greater than renewDeadline";
    else if ((double)o->renew_deadline_ms <= JITTER_FACTOR * (double)o->retry_period_ms)
        bad = "renewDeadline must be greater than retryPeriod*JitterFactor";
    else if (o->lease_duration_ms < 1)
        bad = "leaseDuration must be greater than zero";
    else if (o->renew_deadline_ms < 1)
        bad = "renewDeadline must be greater than zero";
    else if (o->retry_period_ms < 1)
        bad = "retryPeriod must be greater than zero";
    else if (!o->ns || !o->ns[0] || !o->name || !o->name[0])
        bad = "the Lease needs a namespace and a name (leaderElection.resourceNamespace, "
              "resourceName)";
    if (bad) {
        snprintf(err, errlen,
                 "couldn't create leader elector: %s (leaderElection: leaseDuration %lldms, "
                 "renewDeadline %lldms, retryPeriod %lldms)",
                 bad, (long long)o->lease_duration_ms, (long long)o->renew_deadline_ms,
                 (long long)o->retry_period_ms);
        return KS_EINVAL;
    }
    ks_leaderelect *le = calloc(1, sizeof(*le));
    if (!le) {
        snprintf(err, errlen, "out of memory");
        return KS_ENOMEM;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&le->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&le->mu, NULL);
    le->o = *o;
    le->ns = strdup(o->ns);
    le->name = strdup(o->name);
    le->event_component = o->event_component ? strdup(o->event_component) : NULL;
    size_t plen = strlen(o->ns) + strlen(o->name) + 64;
    le->lease_path = malloc(plen);
    le->leases_path = malloc(plen);
    if (!le->ns || !le->name || (o->event_component && !le->event_component) || !le->lease_path ||
        !le->leases_path) {
        elector_free(le);
        snprintf(err, errlen, "out of memory");
        return KS_ENOMEM;
    }
    le->o.ns = le->ns;
    le->o.name = le->name;
    le->o.identity = NULL;
    le->o.hostname = NULL;
    le->o.event_component = le->event_component;
    snprintf(le->leases_path, plen, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", o->ns);
    snprintf(le->lease_path, plen, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", o->ns,
             o->name);
    snprintf(le->desc, sizeof le->desc, "%s/%s", o->ns, o->name);
    if (o->identity) {
        snprintf(le->identity, sizeof le->identity, "%s", o->identity);
    } else {
        char host[256] = "";
        if (o->hostname)
            snprintf(host, sizeof host, "%s", o->hostname);
        else if (gethostname(host, sizeof host - 1) != 0 || !host[0])
            snprintf(err, errlen, "unable to get hostname: %s", strerror(errno));
        if (!host[0] || ks__le_identity(host, le->identity, sizeof le->identity) != 0) {
            if (host[0])
                snprintf(err, errlen, "no random bytes for the leader election identity");
            elector_free(le);
            return KS_EIO;
        }
    }
    uint64_t seed = (uint64_t)wall_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)le;
    le->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
    /* NewFromKubeconfig: the client's timeout is renewDeadline; user agent ".../leader-election".
     */
    le->aopts.qps = o->qps > 0 ? o->qps : -1;
    le->aopts.burst = o->burst > 0 ? o->burst : 1;
    le->aopts.user_agent = KS_API_USER_AGENT "/leader-election";
    le->aopts.request_timeout_ms = (long)o->renew_deadline_ms;
    le->aopts.max_retries = -1; /* the elector's own loop retries, within its deadlines */
    char cerr[512] = "";
    if (ks__api_create(o->kc, &le->aopts, &le->api, cerr, sizeof cerr) != 0) {
        snprintf(err, errlen, "couldn't create resource lock: %s", cerr);
        elector_free(le);
        return KS_EINVAL;
    }
    if (o->metrics)
        register_metrics(le, o->metrics);
    int e = pthread_create(&le->thread, NULL, elector_main, le);
    if (e != 0) {
        snprintf(err, errlen, "cannot start the leader election thread: %s", strerror(e));
        elector_free(le);
        return KS_ENOMEM;
    }
    *out = le;
    return 0;
}

const char *ks__leaderelect_identity(const ks_leaderelect *le) { return le->identity; }

const char *ks__leaderelect_describe(const ks_leaderelect *le) { return le->desc; }

int ks__leaderelect_is_leader(const ks_leaderelect *le)
{
    return le && atomic_load(&((ks_leaderelect *)le)->leader);
}

int ks__leaderelect_healthy(void *ctx)
{
    ks_leaderelect *le = ctx;
    if (!le)
        return 1;
    int healthy = ks__le_check(atomic_load(&le->leader), atomic_load(&le->observed_at_ms), now_ms(),
                               le->o.lease_duration_ms, HEALTHZ_TOLERANCE_MS);
    if (!healthy && ks__log_enabled(2))
        ks__log('I', "leaderelection", "failed election to renew leadership on lease %s",
                METRIC_NAME);
    return healthy;
}

void ks__leaderelect_stop(ks_leaderelect *le)
{
    if (!le)
        return;
    pthread_mutex_lock(&le->mu);
    if (le->joined) {
        pthread_mutex_unlock(&le->mu);
        return;
    }
    le->stop = 1;
    if (!le->leading) { /* a standby gives up at once, even in the middle of a request */
        ks__api_stop(le->api);
        le->api_stopped = 1;
    }
    pthread_cond_broadcast(&le->cv);
    pthread_mutex_unlock(&le->mu);
    pthread_join(le->thread, NULL);
    le->joined = 1;
}

void ks__leaderelect_free(ks_leaderelect *le)
{
    if (!le)
        return;
    ks__leaderelect_stop(le);
    elector_free(le);
}
