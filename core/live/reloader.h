/*
 * Live mode's configuration reload: on SIGHUP, and when the --config file changes (an edit, a
 * rename over it, or the atomic "..data" symlink swap with which kubelet updates a mounted
 * ConfigMap), the file is loaded exactly as at start-up (parse, defaults, validation, plugins
 * loaded, args checked, profiles planned, every plugin instance created) on the reloader's thread
 * while the running configuration keeps scheduling; a valid one is swapped in between two
 * scheduling cycles (core/sched/reload.h), an invalid one changes nothing.
 *
 * Watching: inotify on the file's directory (a ConfigMap volume replaces files by renaming a
 * symlink, which a watch on the file itself would miss), with a poll of the file's content every
 * second as a fallback; a change is acted on once its content differs from what was last loaded,
 * 200 ms after the last event (editors and kubelet write in several steps). SIGHUP always loads,
 * even unchanged (a plugin .so may have been replaced).
 *
 * What a reload cannot change (kept, reported once per reload as a warning naming the field):
 * leaderElection, clientConnection, parallelism, podInitialBackoffSeconds /
 * podMaxBackoffSeconds, and the resources plugins watch (their informers start once). The
 * command-line flags (serving port, TLS, feature gates) are not in the file.
 *
 * Metrics (kubesched's own, in the live registry):
 *   kubesched_config_reloads_total{result="success"|"failure"}   counter
 *   kubesched_config_last_reload_successful                         gauge, 1 or 0
 *   kubesched_config_last_reload_success_timestamp_seconds          gauge, Unix time
 *   kubesched_config_generation                                     gauge, the profiles' generation
 *   kubesched_config_reload_duration_seconds                        gauge, trigger to swap
 *
 * Threads: one thread of its own (started by ks__reloader_start, joined by ks__reloader_stop);
 * ks__reloader_trigger from any thread (the signal thread).
 */
#ifndef KS_CORE_RELOADER_H
#define KS_CORE_RELOADER_H

#include <stddef.h>

#include "config/config.h"
#include "sched/scheduler.h"
#include "util/metrics.h"

/* A configuration loaded the way start-up loads it (the program's loader, core/cli/main.c). */
typedef struct ks_config_bundle {
    ks_config *cfg;
    ks_profile_plan *plans;
} ks_config_bundle;

typedef struct ks_config_loader {
    void *ctx;
    /* Loads path: 0 with *out, or an error code with one sentence in err naming the file, line
     * and field as start-up does. The reloader's thread. */
    int (*load)(void *ctx, const char *path, ks_config_bundle **out, char *err, size_t errlen);
    /* Releases a bundle and everything it loaded (registry, shared objects). Any thread, after
     * the plugin instances built from it are destroyed. */
    void (*release)(void *bundle);
} ks_config_loader;

typedef struct ks_reloader_opts {
    const char *path;         /* the --config file */
    ks_config_loader loader;  /* NULL load: no reloading */
    ks_scheduler *sched;      /* borrowed */
    const ks_config *running; /* the start-up configuration (the values a reload cannot change) */
    ks_metrics *metrics;      /* NULL: no metrics */
    int64_t swap_timeout_ms;  /* how long to wait for the swap (0: 2000) */
} ks_reloader_opts;

typedef struct ks_reloader ks_reloader;

/* Starts the thread. 0, or KS_ENOMEM / KS_EIO with err. */
int ks__reloader_start(const ks_reloader_opts *o, ks_reloader **out, char *err, size_t errlen);
/* Asks for a reload (SIGHUP). Any thread; async-signal-safe it is not (the signal thread calls
 * it). */
void ks__reloader_trigger(ks_reloader *r);
/* Stops and joins the thread (a reload in progress finishes first). NULL: no-op. */
void ks__reloader_stop(ks_reloader *r);

/* The names of the settings a reload cannot change that differ between a and b, ", "-separated,
 * in out (empty when none). Exposed for tests. */
void ks__reload_fixed_changes(const ks_config *a, const ks_config *b, char *out, size_t len);

#endif
