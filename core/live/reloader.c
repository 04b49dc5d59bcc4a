/*
 * The configuration reloader of live mode (reloader.h): a thread that watches the --config file
 * and takes SIGHUP, loads a new configuration beside the running one and hands a complete new
 * profile set to the scheduler (core/sched/reload.h).
 */
#define _GNU_SOURCE /* pipe2 */

#include "live/reloader.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "sched/reload.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/readfile.h"

#define KS_RELOAD_MAX_FILE (16u << 20)

struct ks_reloader {
    ks_reloader_opts o;
    char *dir; /* the file's directory (inotify) */
    pthread_t thread;
    int started;
    int pipe[2];   /* wakes the thread: 'h' SIGHUP, 'q' quit */
    int inotify;   /* -1 when inotify is not available: polling only */
    uint64_t hash; /* of the content last loaded (or tried) */
    int have_hash;
    uint64_t waiting_generation; /* a swap handed over but not applied yet (standby), else 0 */
    int64_t waiting_since_ns;
    ks_metric *ok, *failed, *last_ok, *last_ok_time, *generation, *duration;
};

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- what a reload cannot change ----------------------------------------------------------- */

static int str_differs(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") != 0; }

static void add_name(char *out, size_t len, const char *name)
{
    size_t n = strlen(out);
    if (n + 1 < len)
        snprintf(out + n, len - n, "%s%s", n ? ", " : "", name);
}

void ks__reload_fixed_changes(const ks_config *a, const ks_config *b, char *out, size_t len)
{
    out[0] = '\0';
    if (a->leader_election.leader_elect != b->leader_election.leader_elect)
        add_name(out, len, "leaderElection.leaderElect");
    if (a->leader_election.lease_duration_ms != b->leader_election.lease_duration_ms)
        add_name(out, len, "leaderElection.leaseDuration");
    if (a->leader_election.renew_deadline_ms != b->leader_election.renew_deadline_ms)
        add_name(out, len, "leaderElection.renewDeadline");
    if (a->leader_election.retry_period_ms != b->leader_election.retry_period_ms)
        add_name(out, len, "leaderElection.retryPeriod");
    if (str_differs(a->leader_election.resource_lock, b->leader_election.resource_lock))
        add_name(out, len, "leaderElection.resourceLock");
    if (str_differs(a->leader_election.resource_name, b->leader_election.resource_name))
        add_name(out, len, "leaderElection.resourceName");
    if (str_differs(a->leader_election.resource_namespace, b->leader_election.resource_namespace))
        add_name(out, len, "leaderElection.resourceNamespace");
    if (str_differs(a->client_connection.kubeconfig, b->client_connection.kubeconfig))
        add_name(out, len, "clientConnection.kubeconfig");
    if (a->client_connection.qps != b->client_connection.qps)
        add_name(out, len, "clientConnection.qps");
    if (a->client_connection.burst != b->client_connection.burst)
        add_name(out, len, "clientConnection.burst");
    if (str_differs(a->client_connection.content_type, b->client_connection.content_type))
        add_name(out, len, "clientConnection.contentType");
    if (str_differs(a->client_connection.accept_content_types,
                    b->client_connection.accept_content_types))
        add_name(out, len, "clientConnection.acceptContentTypes");
    if (a->parallelism != b->parallelism)
        add_name(out, len, "parallelism");
    if (a->pod_initial_backoff_seconds != b->pod_initial_backoff_seconds)
        add_name(out, len, "podInitialBackoffSeconds");
    if (a->pod_max_backoff_seconds != b->pod_max_backoff_seconds)
        add_name(out, len, "podMaxBackoffSeconds");
}

/* ---- one reload ---------------------------------------------------------------------------- */

static void count(ks_reloader *r, int success)
{
    ks__metrics_inc(success ? r->ok : r->failed);
    ks__metrics_set(r->last_ok, success ? 1 : 0);
    if (success) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ks__metrics_set(r->last_ok_time, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
    }
}

/* A swap handed over earlier (a standby) was applied: say so once. */
static void note_applied(ks_reloader *r)
{
    if (!r->waiting_generation)
        return;
    uint64_t g = ks__scheduler_profiles_generation(r->o.sched);
    if (g < r->waiting_generation)
        return;
    ks__log('I', "reload",
            "the configuration validated %.1f s ago is now scheduling "
            "(profiles generation %llu)",
            (double)(ks__clock_now_ns() - r->waiting_since_ns) / 1e9, (unsigned long long)g);
    ks__metrics_set(r->generation, (double)g);
    r->waiting_generation = 0;
}

/* Loads the file, builds the profiles, swaps them in. why: "SIGHUP" or "file change". */
static void reload(ks_reloader *r, const char *why, const char *text, size_t len)
{
    int64_t t0 = ks__clock_now_ns();
    char err[2048] = "";
    ks_config_bundle *b = NULL;
    ks__log('I', "reload", "%s: loading %s", why, r->o.path);
    r->hash = fnv1a(text, len);
    r->have_hash = 1;
    int rc = r->o.loader.load(r->o.loader.ctx, r->o.path, &b, err, sizeof(err));
    ks_profile_set *set = NULL;
    if (rc == 0) {
        rc = ks__profile_set_new(r->o.sched, b->cfg, b->plans, r->o.loader.release, b, &set, err,
                                 sizeof(err));
        if (rc != 0)
            r->o.loader.release(b); /* not taken by a set that was not made */
    }
    if (rc != 0) {
        ks__log('E', "reload",
                "configuration reload failed, the running configuration is unchanged: %s",
                err[0] ? err : "invalid configuration");
        count(r, 0);
        return;
    }
    char fixed[512];
    ks__reload_fixed_changes(r->o.running, b->cfg, fixed, sizeof(fixed));
    if (fixed[0])
        ks__log('W', "reload",
                "%s: %s changed; these take effect only at a restart, the running values stay",
                r->o.path, fixed);
    int64_t built = ks__clock_now_ns();
    ks_swap_result res = {0};
    int64_t timeout = r->o.swap_timeout_ms > 0 ? r->o.swap_timeout_ms : 2000;
    uint64_t before = ks__scheduler_profiles_generation(r->o.sched);
    if (ks__scheduler_request_swap(r->o.sched, set, timeout, &res)) {
        int64_t done = ks__clock_now_ns();
        ks__log('I', "reload",
                "configuration reloaded from %s: profiles generation %llu, switched %.1f ms "
                "after the %s (loaded and built in %.1f ms, swapped in %.3f ms between two "
                "scheduling cycles; %zu queued pods requeued, %zu left without a profile)",
                r->o.path, (unsigned long long)res.generation, (double)(done - t0) / 1e6, why,
                (double)(built - t0) / 1e6, (double)res.swap_ns / 1e6, res.requeued, res.orphaned);
        ks__metrics_set(r->generation, (double)res.generation);
        ks__metrics_set(r->duration, (double)(done - t0) / 1e9);
        r->waiting_generation = 0;
    } else {
        ks__log('I', "reload",
                "configuration from %s validated (loaded and built in %.1f ms); it is swapped in "
                "between the next two scheduling cycles (this replica schedules nothing now)",
                r->o.path, (double)(built - t0) / 1e6);
        r->waiting_generation = before + 1;
        r->waiting_since_ns = t0;
    }
    count(r, 1);
}

/* The file's content now (NULL when unreadable: a ConfigMap swap in progress, logged at -v 2). */
static char *read_config(ks_reloader *r, size_t *len)
{
    char *text = NULL;
    if (ks__read_file(r->o.path, KS_RELOAD_MAX_FILE, &text, len) != 0) {
        if (ks__log_enabled(2))
            ks__log('I', "reload", "%s: cannot read it now: %s", r->o.path, strerror(errno));
        return NULL;
    }
    return text;
}

static void check(ks_reloader *r, const char *why, int force)
{
    size_t len = 0;
    char *text = read_config(r, &len);
    if (!text) {
        if (force) { /* SIGHUP: the load says what is wrong */
            reload(r, why, "", 0);
        }
        return;
    }
    if (force || !r->have_hash || fnv1a(text, len) != r->hash)
        reload(r, why, text, len);
    free(text);
}

/* ---- the thread ---------------------------------------------------------------------------- */

static void drain_inotify(ks_reloader *r)
{
    char buf[4096];
    while (r->inotify >= 0 && read(r->inotify, buf, sizeof(buf)) > 0)
        ;
}

static void *reloader_main(void *arg)
{
    ks_reloader *r = arg;
    int64_t last_poll = ks__clock_now_ns(), changed_at = -1;
    for (;;) {
        struct pollfd fds[2] = {{r->pipe[0], POLLIN, 0}, {r->inotify, POLLIN, 0}};
        int wait_ms = changed_at >= 0 ? 200 : 1000;
        int n = poll(fds, r->inotify >= 0 ? 2 : 1, wait_ms);
        int hup = 0, quit = 0;
        if (n > 0 && (fds[0].revents & POLLIN)) {
            char c;
            while (read(r->pipe[0], &c, 1) == 1) {
                if (c == 'q')
                    quit = 1;
                else if (c == 'h')
                    hup = 1;
            }
        }
        if (quit)
            break;
        if (n > 0 && r->inotify >= 0 && (fds[1].revents & POLLIN)) {
            drain_inotify(r);
            changed_at = ks__clock_now_ns(); /* acted on 200 ms after the last event */
        }
        int64_t now = ks__clock_now_ns();
        if (hup) {
            changed_at = -1;
            check(r, "SIGHUP", 1);
            last_poll = now;
        } else if (changed_at >= 0 && now - changed_at >= 200 * 1000000LL) {
            changed_at = -1;
            check(r, "file change", 0);
            last_poll = now;
        } else if (now - last_poll >= 1000 * 1000000LL) {
            check(r, "file change", 0); /* the fallback poll (no inotify, or a missed event) */
            last_poll = now;
        }
        note_applied(r);
        ks__scheduler_reap_profiles(r->o.sched); /* drained sets go, orphans are reported */
    }
    return NULL;
}

static ks_metric *family(ks_metrics *m, ks_metric_type type, const char *name, const char *help,
                         const char *label, const char *value)
{
    if (!m)
        return NULL;
    const char *labels[1] = {label};
    ks_metric_opts o = {.type = type,
                        .name = name,
                        .help = help,
                        .stability = KS_STABILITY_ALPHA,
                        .labels = label ? labels : NULL,
                        .nlabels = label ? 1 : 0};
    ks_metric_family *f = ks__metrics_find(m, name); /* the second label value's call */
    if (!f && ks__metrics_register(m, &o, &f) != 0)
        return NULL;
    return label ? KS_METRICS_WITH(f, value) : KS_METRICS_SOLO(f);
}

int ks__reloader_start(const ks_reloader_opts *o, ks_reloader **out, char *err, size_t errlen)
{
    *out = NULL;
    ks_reloader *r = calloc(1, sizeof(*r));
    char *copy = o->path ? strdup(o->path) : NULL;
    if (!r || !copy || !(r->dir = strdup(dirname(copy)))) {
        free(copy);
        free(r);
        snprintf(err, errlen, "out of memory starting the configuration reloader");
        return KS_ENOMEM;
    }
    free(copy);
    r->o = *o;
    r->pipe[0] = r->pipe[1] = -1;
    if (pipe2(r->pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
        snprintf(err, errlen, "configuration reloader: pipe: %s", strerror(errno));
        free(r->dir);
        free(r);
        return KS_EIO;
    }
    r->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (r->inotify >= 0 &&
        inotify_add_watch(r->inotify, r->dir,
                          IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB) < 0) {
        ks__log('W', "reload", "%s: cannot watch the directory (%s); polling %s every second",
                r->dir, strerror(errno), o->path);
        close(r->inotify);
        r->inotify = -1;
    }
    ks_metrics *m = o->metrics;
    const char *h_total = "Configuration reloads (SIGHUP or a change of the --config file), by "
                          "result: success (swapped in, or validated and pending) or failure "
                          "(the running configuration stayed).";
    r->ok = family(m, KS_METRIC_COUNTER, "kubesched_config_reloads_total", h_total, "result",
                   "success");
    r->failed = family(m, KS_METRIC_COUNTER, "kubesched_config_reloads_total", h_total, "result",
                       "failure");
    r->last_ok = family(m, KS_METRIC_GAUGE, "kubesched_config_last_reload_successful",
                        "1 when the last configuration reload succeeded (or none was tried), 0 "
                        "when it failed and an older configuration is running.",
                        NULL, NULL);
    r->last_ok_time =
        family(m, KS_METRIC_GAUGE, "kubesched_config_last_reload_success_timestamp_seconds",
               "Unix time of the last successful configuration reload.", NULL, NULL);
    r->generation = family(m, KS_METRIC_GAUGE, "kubesched_config_generation",
                           "The generation of the running profiles: 1 at start-up, +1 per reload "
                           "swapped in.",
                           NULL, NULL);
    r->duration = family(m, KS_METRIC_GAUGE, "kubesched_config_reload_duration_seconds",
                         "Time from the last reload's trigger to its swap (loading, validating, "
                         "creating the plugins, and the swap itself).",
                         NULL, NULL);
    ks__metrics_set(r->last_ok, 1);
    ks__metrics_set(r->generation, (double)ks__scheduler_profiles_generation(o->sched));
    /* What start-up loaded is the baseline: only a different content reloads. */
    size_t len = 0;
    char *text = read_config(r, &len);
    if (text) {
        r->hash = fnv1a(text, len);
        r->have_hash = 1;
        free(text);
    }
    if (pthread_create(&r->thread, NULL, reloader_main, r) != 0) {
        snprintf(err, errlen, "cannot start the configuration reloader thread");
        ks__reloader_stop(r);
        return KS_EIO;
    }
    r->started = 1;
    *out = r;
    return 0;
}

static void wake(ks_reloader *r, char c)
{
    ssize_t rc;
    do
        rc = write(r->pipe[1], &c, 1);
    while (rc < 0 && errno == EINTR);
}

void ks__reloader_trigger(ks_reloader *r)
{
    if (r)
        wake(r, 'h');
}

void ks__reloader_stop(ks_reloader *r)
{
    if (!r)
        return;
    if (r->started) {
        wake(r, 'q');
        pthread_join(r->thread, NULL);
    }
    if (r->inotify >= 0)
        close(r->inotify);
    close(r->pipe[0]);
    close(r->pipe[1]);
    free(r->dir);
    free(r);
}
