/*
 * The failure path shared by the scheduling and the binding cycle (upstream
 * handleSchedulingFailure): metrics, the source's FailedScheduling report, the log line, and the
 * pod back to the queue with the plugins that rejected it.
 *
 * Threads: the scheduling thread or a binding thread; the queue locks itself.
 */
#include <string.h>

#include "util/log.h"
#include "sched/scheduler_int.h"

uint64_t ks__plugin_bit(ks_framework *fw, const char *name)
{
    for (size_t i = 0; name && i < fw->ninst; i++)
        if (strcmp(fw->inst[i].name, name) == 0)
            return 1ull << i;
    return 0;
}

void ks__handle_failure(ks_scheduler *s, ks_framework *fw, ks_queued_pod *qp, ks_code code,
                        const char *message, uint64_t rejectors, uint64_t pending, ks_sym nominated)
{
    int rejected =
        code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || code == KS_PENDING;
    const char *reason = rejected ? "Unschedulable" : "SchedulerError";
    ks__sched_metrics_failure(s, fw, qp, rejected, rejectors | pending);
    if (s->source.failed)
        s->source.failed(s->source.ctx, qp->pod, reason, message ? message : "", nominated,
                         fw->profile_name);
    if (ks__log_enabled(2))
        ks__log('I', NULL, "Unable to schedule pod %s: %s", qp->pod->key, message ? message : "");
    qp->rejector_plugins = rejected ? rejectors : 0;
    qp->pending_plugins = pending;
    ks__queue_requeue_failed(s->queue, qp, !rejected);
}
