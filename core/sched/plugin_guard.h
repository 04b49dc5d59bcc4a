/*
 * Diagnostics for in-process plugins (issue 13): which plugin call is running on each thread, a
 * crash report naming it, and a watchdog for calls that run past their deadline.
 *
 * Every extension-point call of framework.c goes through ks__guard_enter / ks__guard_leave (its
 * CALL macros): a few stores into this thread's slot (_Thread_local, in the executable, so a
 * signal handler reads it safely), no lock, no atomic read-modify-write. The slot is registered
 * once per thread (the first call), so that the watchdog thread can look at it.
 *
 * Crash signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): the handler runs on the faulting
 * thread, so its slot names the plugin, its .so (or "in-tree"), the extension point, the pod and
 * the node; it writes that and a backtrace to stderr with write(2) and backtrace_symbols_fd only,
 * calls the fatal hook (simulate flushes its decisions), then re-raises with the default action,
 * so that the exit status stays 128+signal (a core dump where the system makes one).
 *
 * Watchdog: a thread that looks at every slot each tick (deadline/4, at least 10ms); a call that
 * has not returned for the deadline is reported once with the same names, then the fatal hook
 * runs (simulate flushes; live mode fails /readyz, releases the Lease) and the process exits
 * KS_GUARD_EXIT_DEADLINE. PreBind and Bind are not watched: they wait on the API server by design
 * (VolumeBinding up to bindTimeoutSeconds, 600s by default; DefaultBinder's binding call).
 */
#ifndef KS_SCHED_PLUGIN_GUARD_H
#define KS_SCHED_PLUGIN_GUARD_H

#include <stdatomic.h>
#include <stdint.h>

#include "kubesched/plugin.h"
#include "sched/framework_metrics.h"

struct ks_plugin_inst;

/* The exit status after a watchdog report (a crash keeps 128+signal). */
#define KS_GUARD_EXIT_DEADLINE 3
/* The default deadline of one plugin call: upstream has none per call; ten seconds is far beyond
 * what any in-tree plugin's scheduling-cycle call takes at 5000 nodes. */
#define KS_GUARD_DEFAULT_DEADLINE_NS (10LL * 1000 * 1000 * 1000)

/* One thread's running plugin call. Written only by its thread; read by that thread's signal
 * handler and (relaxed, validated by seq) by the watchdog. */
typedef struct ks_guard_slot {
    _Atomic(const struct ks_plugin_inst *) inst; /* NULL between calls */
    _Atomic(const ks_pod *) pod;                 /* NULL when the point has no pod */
    _Atomic ks_sym node;                         /* KS_SYM_ABSENT when none */
    _Atomic int ep;                              /* ks_ep */
    _Atomic uint64_t seq;                        /* +1 per call: the watchdog's "same call" */
    int registered;
    /* The watchdog's own view (watchdog thread only, under the registry lock). */
    uint64_t wd_seq;
    int64_t wd_since;
    int wd_reported;
    struct ks_guard_slot *next;
} ks_guard_slot;

extern _Thread_local ks_guard_slot ks__guard_tls;
void ks__guard_register(ks_guard_slot *s);

static inline void ks__guard_enter(const struct ks_plugin_inst *in, int ep, const ks_pod *pod,
                                   ks_sym node)
{
    ks_guard_slot *s = &ks__guard_tls;
    if (__builtin_expect(!s->registered, 0))
        ks__guard_register(s);
    atomic_store_explicit(&s->pod, pod, memory_order_relaxed);
    atomic_store_explicit(&s->node, node, memory_order_relaxed);
    atomic_store_explicit(&s->ep, ep, memory_order_relaxed);
    /* only this thread writes seq: a plain increment, no locked instruction */
    atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&s->inst, in, memory_order_release);
}

static inline void ks__guard_leave(void)
{
    atomic_store_explicit(&ks__guard_tls.inst, NULL, memory_order_relaxed);
}

/* The path of the shared object that holds addr (malloc'd, the caller frees), or NULL when it is
 * the executable itself (an in-tree plugin) or unknown. Any thread; not for signal handlers. */
char *ks__guard_origin_of(const void *addr);

/* What a report names; the strings are borrowed (valid while the process lives on). */
typedef struct ks_guard_report {
    int sig;             /* the signal; 0 for a watchdog report */
    const char *signame; /* "SIGSEGV", or "deadline" */
    const char *plugin;  /* NULL: no plugin call was running on the thread */
    const char *origin;  /* the .so path, or "in-tree" */
    const char *point;   /* "Filter", ... */
    const char *pod_ns;  /* NULL when the call has no pod */
    const char *pod_name;
    const char *node;   /* NULL when the call has no node */
    int64_t elapsed_ms; /* watchdog: how long the call has run */
} ks_guard_report;

/* Called once, after the report was written: on a crash from the signal handler (so only
 * async-signal-safe work, best effort), on a watchdog report from the watchdog thread (while the
 * plugin call still runs). It returns; the guard then re-raises or exits. */
typedef void (*ks_guard_fatal_fn)(void *ctx, const ks_guard_report *r);

/* Installs the crash handlers (idempotent; preloads backtrace()). deadline_ns > 0 starts the
 * watchdog with that deadline; 0 leaves it off. Returns 0, or KS_ENOMEM/KS_EINVAL with err. */
int ks__guard_install(int64_t deadline_ns, char *err, size_t errlen);
/* A plugin has its own deadline (args.kubeschedCallDeadline): the watchdog runs (even with
 * --plugin-call-deadline 0) and looks often enough for it. Main thread, at framework creation. */
int ks__guard_watch(int64_t deadline_ns, char *err, size_t errlen);
/* --plugin-call-deadline (0: none): what an isolated plugin's calls are held to when it has no
 * deadline of its own. Any thread. */
int64_t ks__guard_deadline(void);
/* Sets (or with fn NULL clears) the fatal hook. Main thread, before scheduling starts. */
void ks__guard_set_fatal_hook(ks_guard_fatal_fn fn, void *ctx);
/* Stops the watchdog thread (waits for it); handlers stay. */
void ks__guard_stop(void);

/* Async-signal-safe writers for fatal hooks: the whole buffer to fd (retrying short writes), and
 * s as a JSON string (quoted, escaped; bytes >= 0x80 copied: the caller gives valid UTF-8). */
void ks__guard_write(int fd, const char *s, size_t n);
void ks__guard_write_str(int fd, const char *s);
void ks__guard_write_json_str(int fd, const char *s);
void ks__guard_write_int(int fd, long long v);

#endif
