/*
 * Process isolation of an out-of-tree plugin (kubesched's own: `kubeschedIsolation: process` in
 * the plugin's args; issue 13). The plugin's scheduling-cycle calls run in a child process, so a
 * crash or an endless loop in it costs the current attempt of the pod involved (an Error naming
 * the plugin, the point, the pod and the node; the pod is requeued), never the scheduler.
 *
 * How: for each pod's cycle, the first call of the plugin forks a child of the scheduler (a
 * "session"). The child shares, copy-on-write, everything the parent had at that moment: the
 * snapshot, the pod, the cycle state, the plugin's own memory; nothing is serialised and no
 * snapshot is copied. The parent then sends it small requests over a socket pair, one per
 * extension point and pod: PreFilter; Filter over every candidate node in one batch (the per-node
 * calls of the Filter workers then read the answers); PreScore; Score over the feasible nodes in
 * one batch; NormalizeScore. Answers come back through a shared memory block. The child ends with
 * the cycle. A call on a node that is not the snapshot's (a copy with nominated pods added, a
 * preemption dry run) forks a one-shot child from that moment, which runs the plugin's PreFilter
 * and then that one Filter.
 *
 * Which plugins: those whose only extension points are PreFilter, Filter, PreScore, Score and
 * NormalizeScore (checked at start-up). Their create() and destroy() run in the scheduler (once);
 * their queueing hints are not called (every registered event requeues, as a plugin without
 * hints); a call they make to the host's shared lists (ks_pods_each, ks_waiting_pods_each,
 * ks_resource_get) sees nothing in the child. The child keeps stderr (ks_log works); what it
 * writes to stdout is lost.
 *
 * Failures: a child that dies (a signal, an exit) or whose call runs past the plugin's deadline
 * (args.kubeschedCallDeadline, else --plugin-call-deadline; 0: none) is killed and reported. After
 * kubeschedErrorBudget failures (default 3) the plugin is taken out according to
 * kubeschedFailurePolicy: `fail` (default): each pod of its profile stays pending with an Error
 * that says why; `ignore`: the profile runs without it (its PreFilter and PreScore say Skip).
 *
 * Threads: sessions are started by the scheduling thread (PreFilter) or a Filter/Score worker;
 * one session is used by several workers at once (a mutex per session; each batch runs once).
 * One-shot children are forked by the Filter worker that needs them.
 */
#ifndef KS_SCHED_ISOLATION_H
#define KS_SCHED_ISOLATION_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

/* The args keys (kubesched's own, next to kubeschedPluginPath). */
#define KS_ISO_KEY "kubeschedIsolation"
#define KS_ISO_POLICY_KEY "kubeschedFailurePolicy"
#define KS_ISO_BUDGET_KEY "kubeschedErrorBudget"
#define KS_ISO_DEFAULT_BUDGET 3

typedef struct ks_iso_plugin ks_iso_plugin;

/* Whether args ask for isolation (kubeschedIsolation: process). Any thread. */
int ks__iso_wanted(const cJSON *args);

/* Wraps the created plugin (desc, self) for profile: on success *proxy is the descriptor the
 * framework runs instead of desc and *out owns self (ks__iso_free destroys it). deadline_ns is the
 * plugin's own deadline (-1: --plugin-call-deadline). Fails with a sentence in err when the plugin
 * has an extension point isolation does not carry. Main thread. */
int ks__iso_new(const char *profile, const char *name, const char *origin,
                const ks_plugin_desc *desc, void *self, const cJSON *args, int64_t deadline_ns,
                ks_iso_plugin **out, const ks_plugin_desc **proxy, char *err, size_t errlen);
/* Destroys the plugin (its destroy() in this process) and the wrapper. NULL is a no-op. Main
 * thread, after scheduling stopped. */
void ks__iso_free(ks_iso_plugin *ip);

/* Filter on count candidates of cycle->iso_filter_nodes from position start, in one request, so
 * that the Filter workers find their answers ready. A failure is kept for the workers to report.
 * Scheduling thread. */
void ks__iso_prefetch_filter(ks_iso_plugin *ip, struct ks_cycle *cycle, const ks_pod *pod,
                             size_t start, size_t count);

/* Registers kubesched_plugin_isolation_failures_total{plugin,profile,reason} and
 * kubesched_plugin_isolation_taken_out{plugin,profile} in r (once per registry) and resolves this
 * plugin's series. Main thread, before scheduling starts. 0 or KS_ENOMEM. */
struct ks_metrics;
int ks__iso_attach_metrics(ks_iso_plugin *ip, struct ks_metrics *r);

/* How many times the plugin failed, and whether its failure policy took it out. Any thread. */
int ks__iso_failures(const ks_iso_plugin *ip);
int ks__iso_disabled(const ks_iso_plugin *ip);

/* Non-zero in an isolation child process: the host's shared lists answer nothing there. */
extern int ks__iso_in_child;

#endif
