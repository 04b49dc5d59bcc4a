/*
 * scheduling.k8s.io/v1beta1 PodGroups as cluster events (upstream eventhandlers.go addPodGroup,
 * updatePodGroup, deletePodGroup with GenericWorkload on): the object is filed in the scheduler's
 * PodGroup store (podgroup_objects.h) and offered to the queue as a PodGroup Add, Update or
 * Delete event with both objects, for GangScheduling's hints.
 */
#include <stdio.h>
#include <string.h>

#include "api/podgroup_objects.h"
#include "util/log.h"
#include "sched/queue.h"
#include "sched/scheduler_int.h"

int ks__scheduler_apply_podgroup(ks_scheduler *s, const cJSON *obj, int deleted, int checked,
                                 char *label, char *err, size_t errlen)
{
    if (label)
        label[0] = '\0';
    if (!s->podgroups) {
        snprintf(err, errlen,
                 "a scheduling.k8s.io/v1beta1 PodGroup needs the GenericWorkload feature gate "
                 "(--feature-gates=GenericWorkload=true)");
        return KS_EINVAL;
    }
    ks_pod_group *old_pg = NULL, *new_pg = NULL;
    int rc = ks__podgroup_store_apply(s->podgroups, obj, deleted, checked, &old_pg, &new_pg, err,
                                      errlen);
    if (rc != 0)
        return rc;
    /* upstream updatePodGroup: a resync (same resourceVersion) is no event */
    int resync = old_pg && new_pg && old_pg->v.resource_version[0] &&
                 !strcmp(old_pg->v.resource_version, new_pg->v.resource_version);
    if (!resync && (old_pg || new_pg)) {
        uint32_t action = deleted ? KS_ACT_DELETE : old_pg ? KS_ACT_UPDATE_ANY : KS_ACT_ADD;
        ks_event_info ev = {
            .event = {KS_RES_POD_GROUP, action}, .old_obj = old_pg, .new_obj = new_pg};
        ks__queue_move_on_event_info(s->queue, &ev, NULL);
        if (label) /* upstream ClusterEvent.Label(): "scheduling.k8s.io/PodGroupAdd", ... */
            snprintf(label, 64, "%s", ks__queue_event_label(&ev.event));
    }
    ks__podgroup_unref(old_pg);
    ks__podgroup_unref(new_pg);
    return 0;
}

int ks__scheduler_generic_workload(const ks_scheduler *s) { return s->podgroups != NULL; }

int ks__scheduler_podgroups_check_profiles(const ks_scheduler *s, char *err, size_t errlen)
{
    if (!s->podgroups)
        return 0;
    for (size_t p = 0; p < s->nprofiles; p++) {
        const ks_framework *fw = s->fw[p];
        const ks_plugin_inst *gs = NULL;
        for (size_t i = 0; i < fw->ninst; i++)
            if (!strcmp(fw->inst[i].desc->name, "GangScheduling"))
                gs = &fw->inst[i];
        if (gs && !gs->desc->placement_feasible) {
            snprintf(err, errlen,
                     "profile %s: GenericWorkload is enabled, but GangScheduling plugin does not "
                     "fulfill PlacementFeasiblePlugin interface",
                     fw->profile_name);
            return KS_EINVAL;
        }
        /* upstream NewFramework: logged, not refused (a profile may mean to ignore gangs) */
        if (!gs)
            ks__log('E', NULL,
                    "GenericWorkload is enabled, but GangScheduling plugin is not set. Gang "
                    "scheduling using PodGroups may not work as expected. profile=%s",
                    fw->profile_name);
    }
    return 0;
}
