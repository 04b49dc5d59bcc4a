/*
 * Leader election with a coordination.k8s.io/v1 Lease, as kube-scheduler runs client-go's
 * leaderelection (tools/leaderelection/leaderelection.go with resourcelock/leaselock.go,
 * ReleaseOnCancel true, Name "kube-scheduler", a healthz adaptor with 20 s of tolerance).
 *
 * The elector runs on a thread of its own with a ks_api of its own (request timeout
 * renewDeadline, no Retry-After retries, its own qps/burst bucket, user agent
 * "kubesched/0.1/leader-election"), so a busy scheduler never delays a renewal:
 *
 *   acquire   every retryPeriod, jittered (wait.JitterUntil, factor 1.2: a pause between
 *             retryPeriod and 2.2 x retryPeriod), try to take the Lease until it succeeds;
 *   renew     every retryPeriod (wait.Until) renew it; a renewal retries every retryPeriod until
 *             renewDeadline has passed since it began (wait.PollImmediateUntil under a context
 *             with that deadline), and then leadership is lost;
 *   release   on a graceful stop (ks__leaderelect_stop) the leader writes holderIdentity "",
 *             leaseDurationSeconds 1, acquireTime = renewTime = now, keeping leaseTransitions,
 *             so that a standby takes over within about a second.
 *
 * One try (tryAcquireOrRenew): a leader whose lease is still valid first PUTs the Lease it last
 * saw with a fresh renewTime (the fast path); otherwise, or when that fails, GET the Lease: 404
 * creates it with POST; a record that changed since the last look is "observed" now (the local
 * monotonic clock, never the renewTime the holder wrote, so clocks need not agree); a lease held
 * by another identity that was observed less than its leaseDurationSeconds ago is left alone;
 * else PUT it with the Lease's resourceVersion (a 409 Conflict means another replica got there
 * first: the try failed, try again later). Taking the lease from another holder increments
 * leaseTransitions; renewing keeps acquireTime and leaseTransitions.
 *
 * Logs as upstream: "attempting to acquire leader lease NS/NAME...", "successfully acquired
 * lease NS/NAME", "failed to renew lease NS/NAME: timed out waiting for the condition"; at -v 4
 * "lock is held by ID and has not yet expired" and "failed to acquire lease NS/NAME". Events:
 * a core/v1 Event "LeaderElection" ("ID became leader", "ID stopped leading") on the Lease,
 * from the component event_component (upstream: the first profile's schedulerName).
 * Metrics (component-base clientgo/leaderelection, when a registry is given):
 * leader_election_master_status{name} and leader_election_slowpath_total{name}.
 *
 * Threads: ks__leaderelect_start / _stop from one controlling thread; _healthy and _is_leader
 * from any thread (atomics). The callbacks run on the elector's thread.
 */
#ifndef KS_CORE_LEADERELECT_H
#define KS_CORE_LEADERELECT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "live/apiclient.h"
#include "config/config.h"
#include "util/metrics.h"

/* --- the record (pure; unit-tested) ------------------------------------------------------ */

#define KS_LE_ID_MAX 320  /* a host name (<= 253) + "_" + a UUID (36) */
#define KS_LE_TIME_MAX 40 /* "2006-01-02T15:04:05.000000Z" and a little room */

/* resourcelock.LeaderElectionRecord, from / to a Lease's spec. */
typedef struct ks_lease_record {
    char holder[KS_LE_ID_MAX];         /* holderIdentity; "" when none */
    int lease_duration_seconds;        /* leaseDurationSeconds */
    char acquire_time[KS_LE_TIME_MAX]; /* MicroTime text as read; "" when absent */
    char renew_time[KS_LE_TIME_MAX];
    int lease_transitions;
} ks_lease_record;

/* metav1.MicroTime's text, RFC 3339 with microseconds in UTC: "2006-01-02T15:04:05.000000Z". */
void ks__lease_microtime(int64_t unix_ns, char *buf, size_t len);

/* The record of a Lease object (LeaseSpecToLeaderElectionRecord: absent fields read as empty or
 * 0); rv (may be NULL) gets metadata.resourceVersion. 0, or KS_EINVAL when lease is not a Lease
 * object (no spec object, a field of the wrong type) with the reason in err. */
int ks__lease_decode(const cJSON *lease, ks_lease_record *rec, char *rv, size_t rvlen, char *err,
                     size_t errlen);

/* The Lease to send: a copy of `seen` (the Lease last read or written, keeping its metadata and
 * so its resourceVersion, for a PUT) with its spec replaced, or, when seen is NULL, a new Lease
 * NS/NAME (for the POST). LeaderElectionRecordToLeaseSpec: every field written; empty times
 * are left out. NULL on out of memory. */
cJSON *ks__lease_encode(const cJSON *seen, const char *ns, const char *name,
                        const ks_lease_record *rec);

/* Whether the two records differ as upstream sees it (it compares the records marshalled with
 * metav1.Time, whole seconds): 1 when they are the same. */
int ks__lease_record_same(const ks_lease_record *a, const ks_lease_record *b);

typedef enum ks_le_decision {
    KS_LE_WAIT,   /* another holder, observed less than its leaseDurationSeconds ago */
    KS_LE_RENEW,  /* the holder is us: renew (keep acquireTime and leaseTransitions) */
    KS_LE_ACQUIRE /* no holder, or its lease expired: take it (leaseTransitions + 1) */
} ks_le_decision;

/* Step 3 of tryAcquireOrRenew, on the record just read: observed_at_ms is the local monotonic
 * time at which this record was first seen (when it last changed), now_ms the time now. */
ks_le_decision ks__le_decide(const ks_lease_record *observed, int64_t observed_at_ms,
                             int64_t now_ms, const char *identity);

/* The record to write after decision d on `old` (NULL: the Lease does not exist yet), at the
 * MicroTime now: holder identity, leaseDurationSeconds = lease_duration_ms / 1000 (as upstream
 * truncates), renewTime now, acquireTime now unless renewing, leaseTransitions old + 1 when
 * acquiring from an existing record. */
void ks__le_next_record(const ks_lease_record *old, ks_le_decision d, const char *identity,
                        int64_t lease_duration_ms, const char *now, ks_lease_record *out);

/* The record a leader writes when it lets go (release): no holder, leaseDurationSeconds 1,
 * acquireTime = renewTime = now, leaseTransitions kept. */
void ks__le_release_record(const ks_lease_record *observed, const char *now, ks_lease_record *out);

/* Whether the leader's last successful renewal (observed_at_ms) is more than
 * lease_duration_ms + tolerance_ms ago (LeaderElector.Check): 1 healthy, 0 not. */
int ks__le_check(int is_leader, int64_t observed_at_ms, int64_t now_ms, int64_t lease_duration_ms,
                 int64_t tolerance_ms);

/* "<hostname>_<random UUID v4>", as kube-scheduler's makeLeaderElectionConfig. 0 or KS_EIO
 * (no randomness). */
int ks__le_identity(const char *hostname, char *buf, size_t len);

/* --- flags (pure; unit-tested) ------------------------------------------------------------ */

/* One command-line argument, if it is a --leader-elect* flag: "--leader-elect[=BOOL]",
 * "--leader-elect-lease-duration=15s" or "--leader-elect-lease-duration 15s" (next is the
 * following argument or NULL). Durations in Go syntax, booleans as strconv.ParseBool.
 * Returns 0 when arg is not one of these flags, 1 when it was taken (*used_next = 1 when next
 * was its value), or KS_EINVAL with pflag's message in err ("invalid argument \"x\" for
 * \"--leader-elect-retry-period\" flag: time: invalid duration \"x\""). */
int ks__le_parse_flag(ks_leader_election_flags *f, const char *arg, const char *next,
                      int *used_next, char *err, size_t errlen);

/* --- the elector ------------------------------------------------------------------------- */

typedef struct ks_leaderelect ks_leaderelect;

typedef struct ks_leaderelect_opts {
    ks_kubeconfig *kc; /* borrowed; must outlive the elector */
    double qps;        /* its own bucket: clientConnection.qps (<= 0: unlimited) */
    int burst;
    const char *ns, *name; /* the Lease (leaderElection.resourceNamespace / resourceName) */
    const char *identity;  /* NULL: ks__le_identity(hostname) */
    const char *hostname;  /* for the identity; NULL: gethostname */
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    const char *event_component; /* source of the LeaderElection events; NULL: no events */
    ks_metrics *metrics;         /* NULL: no metrics; else the two families are registered */
    /* Called on the elector's thread once leadership is acquired. */
    void (*on_started_leading)(void *ud);
    /* Called on the elector's thread when leading ends: lost = 1 when a renewal failed for
     * renewDeadline (upstream kube-scheduler then exits 1 at once), 0 after a stop (and the
     * release). Not called when leadership was never acquired. */
    void (*on_stopped_leading)(void *ud, int lost);
    void *ud;
} ks_leaderelect_opts;

/* Checks the options (NewLeaderElector's: leaseDuration > renewDeadline > 1.2 x retryPeriod,
 * all > 0, a namespace, a name), makes the client and starts the thread. 0, or KS_EINVAL /
 * KS_ENOMEM / KS_EIO with the reason in err; nothing to release on failure. */
int ks__leaderelect_start(const ks_leaderelect_opts *o, ks_leaderelect **out, char *err,
                          size_t errlen);

/* The identity it campaigns with (valid until stop). */
const char *ks__leaderelect_identity(const ks_leaderelect *le);
/* "NS/NAME" (Lock.Describe()). */
const char *ks__leaderelect_describe(const ks_leaderelect *le);
/* 1 while this replica holds the lease (last observed record names us). Any thread. */
int ks__leaderelect_is_leader(const ks_leaderelect *le);
/* The healthz "leaderElection" check (HealthzAdaptor with 20 s): 0 when this replica leads but
 * has not renewed for leaseDuration + 20 s; else 1. Any thread; ctx is the ks_leaderelect. */
int ks__leaderelect_healthy(void *ctx);

/* Stops campaigning: a standby gives up at once (the request in flight is abandoned); a leader
 * finishes the renewal in flight, releases the Lease, calls on_stopped_leading(ud, 0). Joins
 * the thread; _is_leader and _healthy still answer afterwards. NULL: no-op. Call it only once
 * the work the lease guards is done (ReleaseOnCancel's contract). */
void ks__leaderelect_stop(ks_leaderelect *le);
/* Frees a stopped elector (after whatever calls _healthy is gone). NULL: no-op. */
void ks__leaderelect_free(ks_leaderelect *le);

#endif
