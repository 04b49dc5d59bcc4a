/*
 * NodeDeclaredFeatures (upstream plugins/nodedeclaredfeatures/nodedeclaredfeatures.go, v1.37; the
 * NodeDeclaredFeatures gate is GA and locked on, so the plugin is always enabled).
 *
 *   PreFilter  infers the features the pod needs, as k8s.io/component-helpers nodedeclaredfeatures
 *              v0.37.2 DefaultFramework.InferForPodScheduling does: a set over the framework's
 *              registry (the feature names sorted); none needed -> Skip.
 *   Filter     the needed set must be a subset of the node's status.declaredFeatures, mapped onto
 *              the registry as NodeInfo.SetNode does (FeatureMapper.TryMap: unknown names are
 *              dropped), else UnschedulableAndUnresolvable "node(s) didn't match Pod's required
 *              features". No Score, no PreFilter extensions.
 *
 * The registry of v0.37.2 (features.AllFeatures, sorted by name) and what each infers for
 * scheduling: only RestartAllContainersOnContainerExits (a container or init container has a
 * restartPolicyRules action RestartAllContainers), UserNamespacesHostNetworkSupport (hostNetwork
 * true and hostUsers false) and VolumeBindMountOptions (a container, init or ephemeral container
 * mounts with bindMountOptions) can be needed; the others infer false for scheduling, and no
 * feature has a MaxVersion, so the scheduler's version never drops one.
 */
#include <string.h>

#include "kubesched/plugin.h"

#include "../common/sign.h"

#define ERR_REASON "node(s) didn't match Pod's required features"

/* features.AllFeatures of component-helpers v0.37.2, sorted as nodedeclaredfeatures.New sorts
 * them (strings.Compare): a feature set is a bitmask over these indexes. */
static const char *const registry[] = {
    "DRANodeAllocatableResources",
    "DRAOptionalNodeOperations",
    "ExtendWebSocketsToKubelet",
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    "InPlacePodVerticalScalingMemoryBackedVolumes",
    "RestartAllContainersOnContainerExits",
    "UserNamespacesHostNetworkSupport",
    "VolumeBindMountOptions",
};
#define NFEATURES (sizeof(registry) / sizeof(registry[0]))
enum {
    F_RESTART_ALL_CONTAINERS = 6,
    F_USER_NAMESPACES_HOST_NETWORK = 7,
    F_VOLUME_BIND_MOUNT_OPTIONS = 8,
};

typedef uint32_t feature_set;

/* PreFilter state (cycle arena; read-only afterwards, shared by clones). */
typedef struct prefilter_state {
    feature_set reqs;
} prefilter_state;

static char prefilter_key;

/* InferForPodScheduling over the registry: each feature's InferForScheduling(spec). */
static feature_set infer_for_scheduling(const ks_pod *pod)
{
    uint32_t f = ks_pod_spec_flags(pod);
    feature_set reqs = 0;
    if (f & KS_POD_SPEC_RESTART_ALL_CONTAINERS)
        reqs |= 1u << F_RESTART_ALL_CONTAINERS;
    if ((f & KS_POD_SPEC_HOST_NETWORK) && (f & KS_POD_SPEC_HOST_USERS_FALSE))
        reqs |= 1u << F_USER_NAMESPACES_HOST_NETWORK;
    if (f & KS_POD_SPEC_BIND_MOUNT_OPTIONS)
        reqs |= 1u << F_VOLUME_BIND_MOUNT_OPTIONS;
    return reqs;
}

/* FeatureMapper.TryMap: one merge walk over the node's list (sorted by the API server) and the
 * sorted registry; a name that is not registered is skipped, and so is a registered one that an
 * unsorted list brings too late, exactly as upstream's walk does. */
static feature_set node_features(const ks_node *node)
{
    const ks_sym *names;
    size_t n = node ? ks_node_declared_features(node, &names) : 0;
    size_t i = 0, j = 0;
    feature_set s = 0;
    while (i < n && j < NFEATURES) {
        const char *name = ks_sym_str(names[i]);
        int c = strcmp(name ? name : "", registry[j]);
        if (c == 0) {
            s |= 1u << j;
            i++;
            j++;
        } else if (c < 0) {
            i++;
        } else {
            j++;
        }
    }
    return s;
}

/* pre_filter: scheduling thread, once per cycle. */
static ks_code ndf_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                              ks_prefilter_result *result, ks_status *st)
{
    (void)self;
    (void)result;
    feature_set reqs = infer_for_scheduling(pod);
    if (reqs == 0)
        return KS_SKIP;
    prefilter_state *s = ks_cycle_alloc(cycle, sizeof(*s));
    if (!s) {
        ks_status_reason(st, "NodeDeclaredFeatures: out of memory in PreFilter");
        return KS_ERROR;
    }
    s->reqs = reqs;
    if (ks_cycle_write(cycle, &prefilter_key, s, NULL) != 0) {
        ks_status_reason(st, "NodeDeclaredFeatures: cannot write the PreFilter state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* filter: called concurrently for different nodes; the PreFilter state is read-only here. */
static ks_code ndf_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                          ks_status *st)
{
    (void)self;
    (void)pod;
    const prefilter_state *s = ks_cycle_read(cycle, &prefilter_key);
    if (!s) {
        ks_status_reason(st, "error reading \"PreFilterNodeDeclaredFeatures\" from cycle-state: "
                             "not found");
        return KS_ERROR;
    }
    if ((s->reqs & ~node_features(ks_node_info_node(ni))) != 0) {
        ks_status_reason(st, ERR_REASON);
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

/* isSchedulableAfterNodeChange: a node whose declaredFeatures list is unchanged (slices.Equal,
 * order included) cannot help; a new node or any change may. Event thread, pure. */
static ks_queueing_hint ndf_node_hint(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    const ks_sym *a, *b;
    if (!ev->old_node || !ev->new_node)
        return KS_QUEUE;
    size_t na = ks_node_declared_features(ev->old_node, &a);
    size_t nb = ks_node_declared_features(ev->new_node, &b);
    if (na != nb)
        return KS_QUEUE;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i])
            return KS_QUEUE;
    return KS_QUEUE_SKIP;
}

/* isSchedulableAfterTargetPodUpdate: queue only when the inferred requirements changed. */
static ks_queueing_hint ndf_target_pod_hint(void *self, const ks_pod *pod, const ks_event_info *ev)
{
    (void)self;
    (void)pod;
    if (!ev->old_pod || !ev->new_pod)
        return KS_QUEUE;
    return infer_for_scheduling(ev->old_pod) == infer_for_scheduling(ev->new_pod) ? KS_QUEUE_SKIP
                                                                                  : KS_QUEUE;
}

/* EventsToRegister: Node Add|UpdateNodeDeclaredFeature and TargetPod Update. Main thread. */
static size_t ndf_events_with_hints(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_DECLARED_FEATURE}, ndf_node_hint},
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_ANY}, ndf_target_pod_hint},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream NodeDeclaredFeatures.SignPod: the features the pod requires (the inferred set; Filter
 * reads nothing else of the pod). Scheduling thread; pure. */
static ks_code ndf_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    ks_jbuf b = {0};
    ks_jb_i64(&b, (int64_t)infer_for_scheduling(pod));
    return ks_jb_sign(&b, sig, KS_SIGN_REQUIRED_FEATURES, st);
}

const ks_plugin_desc ks_plugin_node_declared_features = {
    .size = sizeof(ks_plugin_desc),
    .name = "NodeDeclaredFeatures",
    .pre_filter = ndf_pre_filter,
    .filter = ndf_filter,
    .events_with_hints = ndf_events_with_hints,
    .sign = ndf_sign,
};
