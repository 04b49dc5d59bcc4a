/* The storage kinds' changes as cluster events; see volume_events.h. */
#include "sched/volume_events.h"

#include <stdio.h>

#include "sched/queue.h"

ks_event_resource ks__volume_event_resource(ks_vol_kind k)
{
    static const ks_event_resource res[KS_VK_COUNT] = {
        KS_RES_PERSISTENT_VOLUME, KS_RES_PERSISTENT_VOLUME_CLAIM,
        KS_RES_STORAGE_CLASS,     KS_RES_CSI_NODE,
        KS_RES_CSI_DRIVER,        KS_RES_CSI_STORAGE_CAPACITY,
        KS_RES_VOLUME_ATTACHMENT};
    return (unsigned)k < KS_VK_COUNT ? res[k] : (ks_event_resource)0;
}

size_t ks__scheduler_on_volume_change(ks_scheduler *s, ks_store_change *chg, char *label)
{
    const ks__volobj *any = chg->new_obj ? chg->new_obj : chg->old_obj;
    if (label)
        label[0] = '\0';
    if (!any)
        return 0;
    ks_event_info ev = {0};
    ev.event.resource = ks__volume_event_resource(any->kind);
    /* upstream's handlers: an add, an update (the generic Update: no finer action exists for
     * these kinds) or a delete */
    ev.event.actions = !chg->old_obj   ? KS_ACT_ADD
                       : !chg->new_obj ? KS_ACT_DELETE
                                       : KS_ACT_UPDATE_ANY;
    ev.old_obj = chg->old_obj;
    ev.new_obj = chg->new_obj;
    ks_queue *q = ks__scheduler_queue(s);
    size_t moved = ks__queue_move_on_event_info(q, &ev, NULL);
    if (label) /* upstream ClusterEvent.Label(): "storage.k8s.io/CSINodeAdd", ... */
        snprintf(label, 64, "%s", ks__queue_event_label(&ev.event));
    /* the queue took its own references for the pods in flight */
    ks__volobj_unref(chg->old_obj);
    ks__volobj_unref(chg->new_obj);
    chg->old_obj = chg->new_obj = NULL;
    return moved;
}

size_t ks__scheduler_on_dra_change(ks_scheduler *s, ks_dra_change *chg, char *label)
{
    const ks__draobj *any = chg->new_obj ? chg->new_obj : chg->old_obj;
    size_t moved = 0;
    if (label)
        label[0] = '\0';
    if (any) {
        ks_event_info ev = {0};
        ev.event.resource = any->kind == KS_DK_RESOURCE_CLAIM ? KS_RES_RESOURCE_CLAIM
                            : any->kind == KS_DK_DEVICE_CLASS ? KS_RES_DEVICE_CLASS
                                                              : KS_RES_RESOURCE_SLICE;
        ev.event.actions = !chg->old_obj   ? KS_ACT_ADD
                           : !chg->new_obj ? KS_ACT_DELETE
                                           : KS_ACT_UPDATE_ANY;
        /* A DeviceTaintRule is no event of its own: upstream's slice tracker applies it to the
         * slices and reports those as updated (the taints they show changed). */
        if (any->kind == KS_DK_DEVICE_TAINT_RULE)
            ev.event.actions = KS_ACT_UPDATE_ANY;
        if (any->kind == KS_DK_RESOURCE_CLAIM) {
            ev.old_obj = chg->old_obj;
            ev.new_obj = chg->new_obj;
        }
        moved = ks__queue_move_on_event_info(ks__scheduler_queue(s), &ev, NULL);
        if (label)
            snprintf(label, 64, "%s", ks__queue_event_label(&ev.event));
    }
    ks__draobj_unref(chg->old_obj);
    ks__draobj_unref(chg->new_obj);
    chg->old_obj = chg->new_obj = NULL;
    return moved;
}
