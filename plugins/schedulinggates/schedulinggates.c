/*
 * SchedulingGates (upstream plugins/schedulinggates/scheduling_gates.go, v1.34).
 *
 *   PreEnqueue  a pod that still carries spec.schedulingGates never enters the active queue: it is
 *               parked, UnschedulableAndUnresolvable "waiting for scheduling gates: [g1 g2]" (the
 *               gate names as Go's fmt prints a []string).
 *   Events      the pod's own update that removes its last gate
 * (UpdatePodSchedulingGatesEliminated).
 */
#include <string.h>

#include "kubesched/plugin.h"

#define PREFIX "waiting for scheduling gates: ["

/* pre_enqueue: the event thread that adds or updates the pod; no blocking, and no allocation
 * unless the gate names do not fit on the stack. */
static ks_code scheduling_gates_pre_enqueue(void *self, const ks_pod *pod, ks_status *st)
{
    (void)self;
    const ks_sym *gates;
    size_t n = ks_pod_scheduling_gates(pod, &gates);
    if (n == 0)
        return KS_SUCCESS;

    size_t len = sizeof(PREFIX) + 1; /* prefix, ']' and the terminating NUL */
    for (size_t i = 0; i < n; i++) {
        const char *g = ks_sym_str(gates[i]);
        len += (g ? strlen(g) : 0) + 1; /* the name and a separating space */
    }
    char stack[512];
    char *msg = len <= sizeof(stack) ? stack : ks_alloc(len);
    if (!msg) {
        ks_status_reason(st, "SchedulingGates: out of memory");
        return KS_ERROR;
    }
    size_t at = sizeof(PREFIX) - 1;
    memcpy(msg, PREFIX, at);
    for (size_t i = 0; i < n; i++) {
        const char *g = ks_sym_str(gates[i]);
        size_t gl = g ? strlen(g) : 0;
        if (i > 0)
            msg[at++] = ' ';
        memcpy(msg + at, g ? g : "", gl);
        at += gl;
    }
    msg[at++] = ']';
    msg[at] = '\0';
    ks_status_reason(st, msg);
    if (msg != stack)
        ks_free(msg);
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* upstream EventsToRegister (v1.37): only the pod's own update that removes its last gate
 * (TargetPod/UpdatePodSchedulingGatesEliminated), always Queue
 * (isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated; NULL hint). */
static size_t scheduling_gates_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED}, NULL},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

const ks_plugin_desc ks_plugin_scheduling_gates = {
    .size = sizeof(ks_plugin_desc),
    .name = "SchedulingGates",
    .pre_enqueue = scheduling_gates_pre_enqueue,
    .events_with_hints = scheduling_gates_events,
};
