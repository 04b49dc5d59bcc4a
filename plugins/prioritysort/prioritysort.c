/*
 * PrioritySort: the default QueueSort plugin (upstream plugins/queuesort/priority_sort.go).
 *
 * A pod with a higher spec.priority is popped first; among equal priorities the one that entered
 * the queue earlier (its last enqueue timestamp) goes first. No filter, no score.
 */
#include "kubesched/plugin.h"

/* less: called under the queue lock from whichever thread adds, pops or moves pods. Pure: reads
 * only the two entries, touches no state. */
static int priority_sort_less(void *self, const ks_queued_pod *a, const ks_queued_pod *b)
{
    (void)self;
    int32_t pa = ks_pod_priority(ks_queued_pod_pod(a));
    int32_t pb = ks_pod_priority(ks_queued_pod_pod(b));
    if (pa != pb)
        return pa > pb;
    return ks_queued_pod_timestamp_ns(a) < ks_queued_pod_timestamp_ns(b);
}

const ks_plugin_desc ks_plugin_priority_sort = {
    .size = sizeof(ks_plugin_desc),
    .name = "PrioritySort",
    .less = priority_sort_less,
};
