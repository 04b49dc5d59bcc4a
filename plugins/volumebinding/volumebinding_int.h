/*
 * VolumeBinding's private header, for its white-box tests only (plugins/volumebinding/tests).
 *
 * ks__volume_binding_decisions is the same plugin as ks_plugin_volume_binding except for one
 * thing: it does not refuse, at PreFilter, the pods whose WaitForFirstConsumer claims still need
 * a PersistentVolume bound or provisioned. kubesched cannot do that binding yet (no PreBind), so
 * the registered plugin refuses those pods; the tests use this descriptor to check the decisions
 * (upstream's FindPodVolumes, Score, Reserve/Unreserve) that PreBind will act on. It is never
 * registered. Static storage; any thread may read it.
 */
#ifndef KS_PLUGINS_VOLUMEBINDING_INT_H
#define KS_PLUGINS_VOLUMEBINDING_INT_H

#include "kubesched/plugin.h"

extern const ks_plugin_desc ks__volume_binding_decisions;

/* The message the registered plugin refuses such a pod with (printf format: the claim's name). */
#define KS_VB_NO_BINDING_YET                                                                       \
    "persistentvolumeclaim \"%s\" needs a PersistentVolume bound or provisioned, which "           \
    "kubesched does not do yet (VolumeBinding has no PreBind): bind the claim first, or leave "    \
    "this pod to kube-scheduler"

#endif
