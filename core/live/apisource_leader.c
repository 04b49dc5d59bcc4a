/*
 * Live mode with leaderElection.leaderElect (apisource_int.h): the glue between the elector
 * (leaderelect.h) and the run loop, as kube-scheduler's server.go wires its callbacks:
 * scheduling starts when this replica leads; losing the lease ends the process at once with
 * status 1 ("Leaderelection lost"), since another replica may already be scheduling; a stop
 * releases the lease after the bindings in flight are done and exits 0.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live/apisource_int.h"
#include "live/leaderelect.h"
#include "sched/plugin_guard.h"
#include "util/log.h"

/* Elector thread. */
static void on_started_leading(void *ud)
{
    ks_apisrc *s = ud;
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->leading, 1);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Elector thread. */
static void on_stopped_leading(void *ud, int lost)
{
    ks_apisrc *s = ud;
    if (!lost)
        return; /* a stop: ks__apisrc_lead_stop says so */
    if (atomic_load(&s->stop)) {
        /* Upstream exits 0 when the context was already cancelled; we are draining and make no
         * new scheduling attempts, so let the drain finish. */
        ks__log('W', "apisource",
                "leaderelection lost while shutting down; finishing the bindings in flight");
        return;
    }
    /* klog.FlushAndExit(ExitFlushTimeout, 1): no cleanup, no waiting for bindings: another
     * replica may be scheduling already. */
    ks__log('E', "apisource", "Leaderelection lost");
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

int ks__apisrc_leader_healthy(void *ctx)
{
    ks_apisrc *s = ctx;
    return ks__leaderelect_healthy(atomic_load(&s->le));
}

int ks__apisrc_lead(ks_apisrc *s, char *err, size_t errlen)
{
    const ks_config *c = s->o->cfg;
    const char *ns = c->leader_election.resource_namespace,
               *name = c->leader_election.resource_name;
    if (!strcmp(ns, "kube-system") && !strcmp(name, "kube-scheduler"))
        ks__log(
            'W', "apisource",
            "leaderElection: the Lease kube-system/kube-scheduler is the one the cluster's "
            "default scheduler campaigns for: kubesched will only schedule while kube-scheduler "
            "does not hold it. Set leaderElection.resourceName (or --leader-elect-resource-name) "
            "to a name of its own, e.g. kubesched");
    ks_leaderelect_opts lo = {
        .kc = s->kc,
        .qps = c->client_connection.qps,
        .burst = c->client_connection.burst,
        .ns = ns,
        .name = name,
        .hostname = s->hostname,
        .lease_duration_ms = c->leader_election.lease_duration_ms,
        .renew_deadline_ms = c->leader_election.renew_deadline_ms,
        .retry_period_ms = c->leader_election.retry_period_ms,
        /* Upstream records the LeaderElection events as the first profile's scheduler. */
        .event_component = c->nprofiles ? c->profiles[0].scheduler_name : "default-scheduler",
        .metrics = s->metrics,
        .on_started_leading = on_started_leading,
        .on_stopped_leading = on_stopped_leading,
        .ud = s,
    };
    ks_leaderelect *le;
    int rc = ks__leaderelect_start(&lo, &le, err, errlen);
    if (rc != 0)
        return rc;
    atomic_store(&s->le, le);
    ks__log('I', "apisource", "leader election: campaigning for Lease %s as %s",
            ks__leaderelect_describe(le), ks__leaderelect_identity(le));
    pthread_mutex_lock(&s->mu);
    while (!atomic_load(&s->leading) && !atomic_load(&s->stop))
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (atomic_load(&s->leading))
        ks__log('I', "apisource", "leading: scheduling starts");
    return 0;
}

void ks__apisrc_lead_stop(ks_apisrc *s)
{
    ks_leaderelect *le = atomic_load(&s->le);
    if (!le)
        return;
    ks__leaderelect_stop(le);
    ks__log('I', "apisource", "Requested to terminate, exiting");
}

void ks__apisrc_lead_free(ks_apisrc *s) { ks__leaderelect_free(atomic_exchange(&s->le, NULL)); }

int ks__apisrc_plugins_ready(void *ctx)
{
    ks_apisrc *s = ctx;
    return !atomic_load(&s->plugin_hung);
}

/* The watchdog thread (a crash: the faulting thread's signal handler, where only the report is
 * safe). The hung call keeps its thread; the scheduling loop is stuck behind it, so nothing new is
 * bound while the Lease is given back. */
void ks__apisrc_on_plugin_fatal(void *ctx, const ks_guard_report *r)
{
    ks_apisrc *s = ctx;
    if (r->sig || !s)
        return;
    atomic_store(&s->plugin_hung, 1);
    ks__log('E', "apisource",
            "plugin %s hung at %s: /readyz fails (plugin-watchdog); releasing the Lease so that "
            "a standby takes over, then exiting with status %d",
            r->plugin ? r->plugin : "(none)", r->point ? r->point : "?", KS_GUARD_EXIT_DEADLINE);
    ks__apisrc_lead_stop(s);
}
