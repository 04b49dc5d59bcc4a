/*
 * The storage kinds' changes as cluster events (upstream eventhandlers.go: the PersistentVolume,
 * PersistentVolumeClaim, StorageClass, CSINode, CSIDriver and CSIStorageCapacity handlers): a
 * change filed in the store (ks__store_apply_ex) moves the parked pods whose rejecting plugins'
 * hints say Queue, the objects handed to the hints in ks_event_info.old_obj / new_obj.
 *
 * Threads: any (the informer threads in live mode); the queue locks itself.
 */
#ifndef KS_CORE_VOLUME_EVENTS_H
#define KS_CORE_VOLUME_EVENTS_H

#include "api/store.h"
#include "sched/scheduler.h"

/* Sends the change as {resource of its kind, Add / Update / Delete} and releases its references
 * (chg is empty after; the queue holds its own while it keeps the event for pods in flight). Writes
 * upstream's label of the event ("PersistentVolumeClaimAdd") to label (room for 64 bytes) when
 * label is not NULL. Returns the pods moved. */
size_t ks__scheduler_on_volume_change(ks_scheduler *s, ks_store_change *chg, char *label);

/* The same for a DRA kind's change (ks__store_apply_dra): {ResourceClaim / ResourceSlice /
 * DeviceClass, Add / Update / Delete}; a claim's hint gets the claims in old_obj / new_obj (the
 * other kinds: NULL). A DeviceTaintRule's change is a ResourceSlice Update (upstream's slice
 * tracker reports the slices it taints as updated). Releases
 * chg's references. Writes the event's label ("resource.k8s.io/ResourceClaimUpdate"; "" for no
 * event) to label (64 bytes) when label is not NULL. Returns the pods moved. */
size_t ks__scheduler_on_dra_change(ks_scheduler *s, ks_dra_change *chg, char *label);

/* The event resource of a storage kind (KS_RES_PERSISTENT_VOLUME, ...). */
ks_event_resource ks__volume_event_resource(ks_vol_kind k);

#endif
