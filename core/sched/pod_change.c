/*
 * What a Pod update changed, as cluster-event actions (upstream
 * framework.PodSchedulingPropertiesChange, pkg/scheduler/framework/events.go, v1.34): labels ->
 * UpdatePodLabel, a request lowered or removed -> UpdatePodScaleDown, the last scheduling gate
 * removed -> UpdatePodSchedulingGatesEliminated, the number of tolerations changed ->
 * UpdatePodToleration (the API only lets tolerations be added). Upstream's
 * UpdatePodGeneratedResourceClaim (status.resourceClaimStatuses) is not extracted: kubesched has no
 * DynamicResources plugin to care about it.
 */
#include "sched/scheduler.h"

#include "api/objects.h"

static int labels_differ(const ks_pod *a, const ks_pod *b)
{
    if (a->nlabels != b->nlabels)
        return 1;
    if (a->labels == b->labels)
        return 0;
    for (size_t i = 0; i < a->nlabels; i++) /* both sorted by key id */
        if (a->labels[i].key != b->labels[i].key || a->labels[i].value != b->labels[i].value)
            return 1;
    return 0;
}

/* upstream extractPodScaleDown: some request of old is missing in new or lower there. A request
 * of 0 reads as absent (the parsed form keeps no "present" flag). */
static int scaled_down(const ks_pod *n, const ks_pod *o)
{
    const ks_resources *nr = &n->requests.pub, * or = &o->requests.pub;
    if (nr->milli_cpu < or->milli_cpu || nr->memory < or->memory ||
        nr->ephemeral_storage < or->ephemeral_storage)
        return 1;
    for (uint32_t i = 0; i < or->nscalar; i++) {
        int64_t now = 0;
        for (uint32_t j = 0; j < nr->nscalar; j++)
            if (nr->scalar[j].name == or->scalar[i].name)
                now = nr->scalar[j].value;
        if (now < or->scalar[i].value)
            return 1;
    }
    return 0;
}

uint32_t ks__pod_change_actions(const ks_pod *new_pod, const ks_pod *old_pod)
{
    uint32_t a = 0;
    if (labels_differ(new_pod, old_pod))
        a |= KS_ACT_UPDATE_POD_LABEL;
    if (scaled_down(new_pod, old_pod))
        a |= KS_ACT_UPDATE_POD_SCALE_DOWN;
    if (new_pod->ngates == 0 && old_pod->ngates != 0)
        a |= KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
    if (new_pod->ntolerations != old_pod->ntolerations)
        a |= KS_ACT_UPDATE_POD_TOLERATIONS;
    return a;
}
