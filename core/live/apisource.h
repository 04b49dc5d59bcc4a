/*
 * Live mode: `kubesched --config FILE [--kubeconfig FILE]`, the API-server cluster source.
 *
 * Connection: the kubeconfig kube-scheduler would use (clientConnection.kubeconfig, else the
 * --kubeconfig flag, else in-cluster; ks__kubeconfig_resolve), with clientConnection.qps/burst
 * as one token bucket shared by every API client of the process.
 *
 * Informers: one thread and one ks_api per resource (Nodes; Pods with fieldSelector
 * status.phase!=Succeeded,status.phase!=Failed; Namespaces, Services, ReplicationControllers,
 * ReplicaSets, StatefulSets, PodDisruptionBudgets for the store). Each lists (paginated), then
 * watches from the list's resourceVersion with bookmarks; 410 Gone relists and reconciles (what
 * the new list lacks is deleted; a Node or store object re-created under its name stays); other
 * errors reconnect with a backoff (1 s doubling to 30 s, back to 1 s after a list, or a watch
 * that delivered events or stayed open a second), each attempt logged with the request, the
 * server and the cause. A list whose continue token expired is taken again in one page. So an
 * API server that is down, refuses the credentials (401/403) or fails TLS verification is
 * retried, as kube-scheduler's informers retry: /healthz stays ok, /readyz is not ready until
 * every initial list is in, SIGTERM still exits 0. A kubeconfig that cannot be loaded ends the
 * run at once (exit status 1). Objects are decoded on the informer thread; one that does not
 * decode is logged and skipped. Scheduling starts once every initial list is in.
 *
 * Optional groups (ReplicaSets and StatefulSets, apps/v1; PodDisruptionBudgets, policy/v1): an
 * API server can run without them (--runtime-config), and kubesched serves v1.35 to v1.37 API
 * servers, so it asks discovery first (GET /apis) and treats a group/version that is not there,
 * or a 404 on the list, as "not served": logged once at -v=2 with what is missing and what that
 * turns off, the informer counts as synced with no objects, and it lists again every minute (a
 * server that starts serving it is watched from then on). Core v1 must be served.
 *
 * Updates: a Node update replaces it (on_node_update, which moves pods by what changed). A Pod
 * update goes to ks__scheduler_on_pod_update with the old and new objects: an assigned Pod is
 * replaced in the cache in place (upstream cache.UpdatePod) and its label / scale-down / toleration
 * changes wake parked pods; a Pod that became assigned (bound by us: confirms the assumed pod; by
 * someone else: accounted on its node) leaves the queue and enters the cache; a still unassigned
 * Pod goes to ks__queue_update only when more than its status / resourceVersion / managedFields /
 * generation / finalizers changed (upstream isPodUpdated), so the scheduler's own status patches
 * do not requeue it, and not while it is assumed (its binding cycle owns it). Pods of other
 * schedulers never enter the queue; a deleted queued Pod leaves it.
 *
 * Side effects (ks_source_ops), on the calling thread with a thread-local ks_api: bind = POST
 * pods/binding; Scheduled / FailedScheduling / Preempted events (events.k8s.io/v1,
 * reportingController "kubesched", reportingInstance "kubesched-<profile>-<hostname>");
 * PodScheduled=False status patch (strategic merge) on failure; preemption victims get the
 * DisruptionTarget condition, a DELETE (default grace period) and the Preempted event, as upstream
 * PreemptPod; they stay in the cache until the watch reports them gone, so the preemptor waits for
 * a Terminating victim.
 * Failed requests are logged with the request and the server's answer, never fatal.
 *
 * Threads: ks__apisource_run blocks SIGINT/SIGTERM/SIGHUP in every thread it starts and takes
 * them on a signal thread (SIGHUP: a configuration reload, reloader.h); the scheduling loop runs on
 * the calling thread, a ticker thread flushes backoffQ every second and unschedulablePods every 30
 * s. A signal closes the queue (no new pods), waits for in-flight bindings, stops the informers and
 * returns 0.
 *
 * Leader election (leaderElection.leaderElect, apisource_leader.c and leaderelect.h): the
 * informers sync as always, then the scheduling loop, the ticker and the effects thread wait
 * until this replica holds the Lease. Losing it ends the process at once with status 1; a signal
 * drains as above, then releases the Lease.
 */
#ifndef KS_CORE_APISOURCE_H
#define KS_CORE_APISOURCE_H

#include <stddef.h>

#include "config/config.h"
#include "live/httpserver.h"
#include "live/reloader.h"

typedef struct ks_apisource_opts {
    const ks_config *cfg;
    ks_profile_plan *plans;      /* cfg->nprofiles entries, borrowed */
    int have_config_file;        /* --config was given */
    const char *flag_kubeconfig; /* --kubeconfig, or NULL */
    /* /healthz, /livez, /readyz, /metrics over HTTPS: --bind-address (NULL: 0.0.0.0) and
     * --secure-port (upstream's names and default 10259; 0 turns serving off), with
     * --tls-cert-file / --tls-private-key-file, or a self-signed certificate when both are NULL. */
    const char *bind_address;
    int port;
    const char *tls_cert_file, *tls_key_file;
    /* /statusz and /flagz on that port (httpserver.h): kubesched's version ("0.1.0"), the
     * Kubernetes minor whose kube-scheduler it follows ("1.37"), and the command-line flags with
     * their values (borrowed; copied when the server starts). binary_version NULL: neither page
     * is served. */
    const char *binary_version, *emulation_version;
    const ks_http_flag *flags;
    size_t nflags;
    /* Delegated authentication and authorization of that port (delegated_auth.h), upstream's
     * flags: --authentication-kubeconfig / --authorization-kubeconfig (NULL or "": the in-cluster
     * config when in a cluster, else none, as upstream with RemoteKubeConfigFileOptional), the
     * cache TTLs (0: upstream's 10s) and --authorization-always-allow-paths (always_allow_paths
     * NULL: /healthz, /readyz, /livez; no_always_allow_paths: the flag was given empty). */
    const char *authn_kubeconfig, *authz_kubeconfig;
    const char *client_ca_file; /* --client-ca-file: client certificates authenticate; NULL: none */
    int64_t token_ttl_ns, authorized_ttl_ns, unauthorized_ttl_ns;
    const char *const *always_allow_paths;
    size_t nalways_allow_paths;
    int no_always_allow_paths;
    /* Configuration reload on SIGHUP and on a change of the --config file (reloader.h): the file
     * and how the program loads one (reload.load NULL: no reload). first_release(first_owner)
     * frees cfg's plugins (registry, shared objects, plans; not cfg itself, which keeps the
     * values a reload cannot change) once a reload replaced them and they drained, or at the end
     * (NULL: the caller frees them after the run). */
    const char *config_path;
    ks_config_loader reload;
    void (*first_release)(void *owner);
    void *first_owner;
} ks_apisource_opts;

/* Runs until SIGINT/SIGTERM: 0, or a negative code with a message in err (no kubeconfig, bad
 * credentials, scheduler creation failed). */
int ks__apisource_run(const ks_apisource_opts *o, char *err, size_t errlen);

#endif
