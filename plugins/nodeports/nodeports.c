/*
 * NodePorts (upstream plugins/nodeports/node_ports.go, v1.34).
 *
 *   PreFilter  the host ports the pod wants (containers and restartable init containers with
 *              hostPort > 0, protocol defaulted to TCP and hostIP to 0.0.0.0 by the host); none
 *              means Skip, so Filter never runs for the common pod without host ports.
 *   Filter     HostPortInfo.CheckConflict against the ports the node's pods already use: the same
 *              protocol and port, and the same hostIP or either side bound to 0.0.0.0 ->
 *              Unschedulable "node(s) didn't have free ports for the requested pod ports".
 *   Events     an assigned pod deleted (it may free a port) and a node added.
 */
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/sign.h"

#define ERR_REASON "node(s) didn't have free ports for the requested pod ports"

/* What create() builds: interned constants, read-only afterwards. */
typedef struct node_ports {
    ks_sym any_ip; /* "0.0.0.0" */
} node_ports;

/* PreFilter state, in the cycle arena; never changed after PreFilter, so Filter workers share it
 * and a cloned cycle state shares the pointer (upstream Clone returns itself). */
typedef struct prefilter_state {
    size_t n;
    ks_host_port want[];
} prefilter_state;

/* Cycle-state key: compared by address. */
static char prefilter_key;

/* create: main thread. */
static void *node_ports_create(const ks_args *args, ks_error *err)
{
    (void)args;
    node_ports *np = ks_alloc(sizeof(*np));
    if (!np) {
        ks_error_set(err, "NodePorts: %s", ks_strerror(KS_ENOMEM));
        return NULL;
    }
    np->any_ip = ks_intern("0.0.0.0");
    return np;
}

static void node_ports_destroy(void *self)
{
    if (self)
        ks_free(self);
}

/* pre_filter: scheduling thread, once per cycle. */
static ks_code node_ports_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                     ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)result;
    const ks_host_port *ports;
    size_t n = ks_pod_host_ports(pod, &ports);
    if (n == 0)
        return KS_SKIP;
    prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s) + n * sizeof(s->want[0]));
    if (!s) {
        ks_status_reason(st, "NodePorts: out of memory in PreFilter");
        return KS_ERROR;
    }
    s->n = n;
    memcpy(s->want, ports, n * sizeof(s->want[0]));
    if (ks_cycle_write(cycle, &prefilter_key, s, NULL) != 0) {
        ks_status_reason(st, "NodePorts: cannot write the PreFilter state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* Upstream HostPortInfo.CheckConflict: a wanted port bound to 0.0.0.0 conflicts with the same
 * (protocol, port) on any IP; a specific IP conflicts with the same IP or 0.0.0.0. */
static int conflicts(const node_ports *np, const ks_host_port *want, const ks_host_port *used,
                     size_t nused)
{
    if (want->port <= 0)
        return 0;
    for (size_t i = 0; i < nused; i++) {
        const ks_host_port *u = &used[i];
        if (u->port != want->port || u->protocol != want->protocol)
            continue;
        if (want->host_ip == np->any_ip || u->host_ip == np->any_ip || u->host_ip == want->host_ip)
            return 1;
    }
    return 0;
}

/* filter: called concurrently for different nodes; the PreFilter state is read-only here. */
static ks_code node_ports_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                 const ks_node_info *ni, ks_status *st)
{
    const node_ports *np = self;
    (void)pod;
    const prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    if (!s) {
        ks_status_reason(st, "reading \"PreFilterNodePorts\" from cycleState: not found");
        return KS_ERROR;
    }
    const ks_host_port *used;
    size_t nused = ks_node_info_host_ports(ni, &used);
    if (nused == 0)
        return KS_SUCCESS;
    for (size_t i = 0; i < s->n; i++) {
        if (conflicts(np, &s->want[i], used, nused)) {
            ks_status_reason(st, ERR_REASON);
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
}

/* upstream isSchedulableAfterAssignedPodDeleted (v1.37): Queue only when the deleted pod was
 * assigned or nominated and used a host port that conflicts with one the pod wants
 * (!fitsPorts(wantPorts, deleted pod's ports)). Event thread; pure. */
static ks_queueing_hint node_ports_after_assigned_pod_deleted(void *self, const ks_pod *pod,
                                                              const ks_event_info *ev)
{
    const node_ports *np = self;
    const ks_pod *deleted = ev->old_pod;
    if (!deleted)
        return KS_QUEUE; /* not a Pod delete: cannot tell */
    ks_sym nominated = ks_pod_nominated_node_name(deleted);
    if (ks_pod_node_name(deleted) == KS_SYM_EMPTY &&
        (nominated == KS_SYM_EMPTY || nominated == KS_SYM_ABSENT))
        return KS_QUEUE_SKIP;
    const ks_host_port *freed, *want;
    size_t nfreed = ks_pod_host_ports(deleted, &freed), nwant = ks_pod_host_ports(pod, &want);
    if (nfreed == 0)
        return KS_QUEUE_SKIP;
    for (size_t i = 0; i < nwant; i++)
        if (conflicts(np, &want[i], freed, nfreed))
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* upstream EventsToRegister (v1.37): pod updates cannot change ports (immutable), so only an
 * assigned pod deleted (with the hint above) or a node added (no hint: Queue) may help. */
static size_t node_ports_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, node_ports_after_assigned_pod_deleted},
        {{KS_RES_NODE, KS_ACT_ADD}, NULL},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream NodePorts.SignPod (HostPortsSigner): the sorted distinct host ports. Upstream keeps
 * only the port numbers although Filter also compares protocol and host IP; kubesched signs the
 * whole (hostIP, protocol, port) triples, sorted, so that 80/TCP and 80/UDP never share a
 * signature. */
static int node_ports_sign_cmp(const void *a, const void *b)
{
    const ks_host_port *x = (const ks_host_port *)a, *y = (const ks_host_port *)b;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    int c = strcmp(ks_sign_sym(x->protocol), ks_sign_sym(y->protocol));
    return c ? c : strcmp(ks_sign_sym(x->host_ip), ks_sign_sym(y->host_ip));
}

static ks_code node_ports_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    const ks_host_port *ports;
    size_t n = ks_pod_host_ports(pod, &ports);
    ks_jbuf b = {0};
    ks_host_port *sorted = (ks_host_port *)malloc((n ? n : 1) * sizeof(*sorted));
    if (!sorted)
        b.oom = 1;
    else if (n)
        memcpy(sorted, ports, n * sizeof(*sorted));
    if (sorted)
        qsort(sorted, n, sizeof(*sorted), node_ports_sign_cmp);
    ks_jb_put(&b, "[");
    for (size_t i = 0, out = 0; sorted && i < n; i++) {
        if (i > 0 && node_ports_sign_cmp(&sorted[i], &sorted[i - 1]) == 0)
            continue; /* a set, as upstream's */
        ks_jb_put(&b, out++ ? ",[" : "[");
        ks_jb_i64(&b, sorted[i].port);
        ks_jb_put(&b, ",");
        ks_jb_str(&b, ks_sign_sym(sorted[i].protocol));
        ks_jb_put(&b, ",");
        ks_jb_str(&b, ks_sign_sym(sorted[i].host_ip));
        ks_jb_put(&b, "]");
    }
    ks_jb_put(&b, "]");
    free(sorted);
    return ks_jb_sign(&b, sig, KS_SIGN_HOST_PORTS, st);
}

const ks_plugin_desc ks_plugin_node_ports = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodePorts",
    .create = node_ports_create,
    .destroy = node_ports_destroy,
    .pre_filter = node_ports_pre_filter,
    .filter = node_ports_filter,
    .events_with_hints = node_ports_events,
    .sign = node_ports_sign,
};
