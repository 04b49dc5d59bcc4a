/*
 * kubesched plugin SDK: the one public header a plugin includes.
 *
 * A plugin is a set of callbacks, one per upstream scheduling-framework extension point, in a
 * size-prefixed descriptor (ks_plugin_desc). A shared object exports one ks_module (data symbol
 * "ks_module_info", see KS_DEFINE_MODULE) listing its plugins; kubesched checks the module's ABI
 * major version, struct size and pointer width before it touches anything else, then hands it the
 * host function table (ks_host_api). In-tree plugins use exactly the same descriptor and API.
 *
 * Stability rules (the reason this file looks the way it does):
 *   - ks_module, ks_plugin_desc and ks_host_api only ever grow at their end; each appended field
 *     is marked with the ABI minor version that added it. A slot that is NULL is "not implemented"
 *     (in a descriptor) or "not offered by this host" (in the host table: a plugin that may run
 *     on an older kubesched tests KS_HOST_HAS(fn) before calling a slot of a newer block; the
 *     table's "--- ABI 1.x ---" markers say which minor added each slot).
 *   - The public data structs (ks_resources, ks_taint, ...) are frozen for a major version.
 *   - Error and status codes are never renumbered.
 *
 * Ownership words used below:
 *   borrowed(obj)  valid as long as obj is (pods and nodes: at least until the callback returns;
 *                  snapshot objects: until the scheduling cycle ends);
 *   borrowed(cycle) valid until the scheduling cycle of this pod ends (the binding cycle included);
 *   caller frees   free with ks_free().
 * Thread words: every callback says on which thread(s) it runs and what it may touch.
 */
#ifndef KUBESCHED_PLUGIN_H
#define KUBESCHED_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KS_ABI_MAJOR 1
#define KS_ABI_MINOR 11

#if defined(__GNUC__)
#define KS_EXPORT __attribute__((visibility("default")))
#define KS_HIDDEN __attribute__((visibility("hidden")))
#define KS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KS_EXPORT
#define KS_HIDDEN
#define KS_PRINTF(f, a)
#endif

/* ---------------------------------------------------------------------------------------------
 * Codes
 * ------------------------------------------------------------------------------------------- */

/* Scheduling verdicts, numbered exactly as upstream framework.Code. */
typedef enum ks_code {
    KS_SUCCESS = 0,
    KS_ERROR = 1,
    KS_UNSCHEDULABLE = 2,
    KS_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
    KS_WAIT = 4,
    KS_SKIP = 5,
    KS_PENDING = 6
} ks_code;

/* Infrastructure errors: 0 or a negative KS_E... value; ks_strerror() names them. */
#define KS_ERRNO_MAP(X)                                                                            \
    X(NOMEM, -1, "out of memory")                                                                  \
    X(INVAL, -2, "invalid argument")                                                               \
    X(NOTFOUND, -3, "not found")                                                                   \
    X(EXIST, -4, "already exists")                                                                 \
    X(TYPE, -5, "wrong type")                                                                      \
    X(RANGE, -6, "value out of range")                                                             \
    X(PARSE, -7, "parse error")                                                                    \
    X(IO, -8, "input/output error")                                                                \
    X(ABI, -9, "ABI mismatch")                                                                     \
    X(CANCELED, -10, "canceled") /* ABI 1.7: stopping, or the pod was preempted in PreBind */

enum {
#define KS_ERRNO_ENUM(name, val, text) KS_E##name = (val),
    KS_ERRNO_MAP(KS_ERRNO_ENUM)
#undef KS_ERRNO_ENUM
};

/* Interned string. Every label key and value, node name, resource name, taint key ... that the host
 * hands out is interned once, so plugins compare ids instead of strings in Filter and Score.
 * KS_SYM_EMPTY is "", KS_SYM_ABSENT means "no such value" (a label that is not set). */
typedef uint32_t ks_sym;
#define KS_SYM_EMPTY ((ks_sym)0)
#define KS_SYM_ABSENT ((ks_sym)0xFFFFFFFFu)

#define KS_MAX_NODE_SCORE 100
#define KS_MIN_NODE_SCORE 0

/* ---------------------------------------------------------------------------------------------
 * Opaque handles (all owned by the host)
 * ------------------------------------------------------------------------------------------- */
typedef struct ks_pod ks_pod;               /* a Pod, parsed once when it arrived */
typedef struct ks_node ks_node;             /* a Node object */
typedef struct ks_node_info ks_node_info;   /* a node plus what is placed on it (snapshot) */
typedef struct ks_snapshot ks_snapshot;     /* the cluster as this cycle sees it */
typedef struct ks_cycle ks_cycle;           /* per-pod scheduling-cycle state */
typedef struct ks_status ks_status;         /* where a callback writes its reasons */
typedef struct ks_args ks_args;             /* the plugin's pluginConfig args */
typedef struct ks_error ks_error;           /* where create() explains a failure */
typedef struct ks_queued_pod ks_queued_pod; /* a pod in the scheduling queue (QueueSort) */
typedef struct ks_prefilter_result ks_prefilter_result; /* PreFilter's node subset */
typedef struct ks_filter_outcome ks_filter_outcome;     /* per-node Filter verdicts (PostFilter) */
typedef struct ks_post_filter_result ks_post_filter_result; /* PostFilter's nomination */
/* ABI 1.5: storage objects, each parsed once when it arrived and immutable after (an update
 * replaces it); read through the *_view accessors. */
typedef struct ks_pv ks_pv;                       /* a PersistentVolume */
typedef struct ks_pvc ks_pvc;                     /* a PersistentVolumeClaim */
typedef struct ks_storage_class ks_storage_class; /* a storage.k8s.io/v1 StorageClass */
typedef struct ks_csi_node ks_csi_node;           /* a storage.k8s.io/v1 CSINode */
typedef struct ks_csi_driver ks_csi_driver;       /* a storage.k8s.io/v1 CSIDriver */
typedef struct ks_csi_storage_capacity ks_csi_storage_capacity; /* storage.k8s.io/v1 */
/* ABI 1.6: a storage.k8s.io/v1 VolumeAttachment (NodeVolumeLimits), as the kinds above. */
typedef struct ks_volume_attachment ks_volume_attachment;
/* ABI 1.10: a resource.k8s.io/v1 ResourceClaim (DynamicResources), parsed once when it arrived and
 * immutable after (read it through ks_resource_claim_view_of); and the allocator's answer for a
 * set of claims on one node. */
typedef struct ks_resource_claim ks_resource_claim;
typedef struct ks_dra_allocation ks_dra_allocation;
typedef struct ks_dra_allocator ks_dra_allocator;
/* ABI 1.9: a scheduling.k8s.io/v1beta1 PodGroup (GenericWorkload), parsed once when it arrived
 * and immutable after (an update replaces it); reference-counted (ks_host_api.pod_group_get). */
typedef struct ks_pod_group ks_pod_group;

/* ---------------------------------------------------------------------------------------------
 * Plain data shared with the host (frozen for ABI major 1)
 * ------------------------------------------------------------------------------------------- */

/* One extended / hugepages / other scalar resource. */
typedef struct ks_scalar {
    ks_sym name;   /* e.g. "nvidia.com/gpu" */
    int64_t value; /* units, as resource.Quantity.Value() (rounded up) */
} ks_scalar;

/* A resource list as integers, exactly as upstream's framework.Resource. */
typedef struct ks_resources {
    int64_t milli_cpu;         /* MilliValue() of cpu */
    int64_t memory;            /* bytes */
    int64_t ephemeral_storage; /* bytes */
    int64_t allowed_pods;      /* "pods" (node allocatable only) */
    uint32_t nscalar;
    const ks_scalar *scalar; /* sorted by name id; borrowed(owner) */
} ks_resources;

typedef enum ks_taint_effect {
    KS_EFFECT_ALL = 0, /* toleration only: empty effect matches every effect */
    KS_EFFECT_NO_SCHEDULE = 1,
    KS_EFFECT_PREFER_NO_SCHEDULE = 2,
    KS_EFFECT_NO_EXECUTE = 3
} ks_taint_effect;

typedef struct ks_taint {
    ks_sym key;
    ks_sym value;
    ks_taint_effect effect;
} ks_taint;

typedef enum ks_toleration_op { KS_TOL_EQUAL = 0, KS_TOL_EXISTS = 1 } ks_toleration_op;

typedef struct ks_toleration {
    ks_sym key; /* KS_SYM_EMPTY: any key (with Exists) */
    ks_toleration_op op;
    ks_sym value;
    ks_taint_effect effect; /* KS_EFFECT_ALL: any effect */
    int32_t has_seconds;
    int64_t toleration_seconds;
} ks_toleration;

typedef struct ks_label {
    ks_sym key;
    ks_sym value;
} ks_label;

typedef enum ks_selector_op {
    KS_OP_IN = 0,
    KS_OP_NOT_IN = 1,
    KS_OP_EXISTS = 2,
    KS_OP_DOES_NOT_EXIST = 3,
    KS_OP_GT = 4,
    KS_OP_LT = 5
} ks_selector_op;

/* One matchExpressions / matchFields entry of a node selector term. */
typedef struct ks_selector_req {
    ks_sym key;
    ks_selector_op op;
    uint32_t nvalues;
    const ks_sym *values;
} ks_selector_req;

typedef struct ks_node_selector_term {
    uint32_t nexprs;
    const ks_selector_req *exprs;
    uint32_t nfields; /* matchFields: upstream supports only key metadata.name */
    const ks_selector_req *fields;
} ks_node_selector_term;

typedef struct ks_preferred_term {
    int32_t weight;
    ks_node_selector_term term;
} ks_preferred_term;

/* spec.affinity.nodeAffinity, pre-parsed. */
typedef struct ks_node_affinity {
    int32_t has_required; /* requiredDuringSchedulingIgnoredDuringExecution present */
    uint32_t nrequired;   /* nodeSelectorTerms: ORed */
    const ks_node_selector_term *required;
    uint32_t npreferred;
    const ks_preferred_term *preferred;
} ks_node_affinity;

/* ks_pod_spec_flags() bits (ABI 1.4): what the pod's spec asks of its node. */
enum {
    KS_POD_SPEC_HOST_NETWORK = 1u << 0,     /* spec.hostNetwork: true */
    KS_POD_SPEC_HOST_USERS_FALSE = 1u << 1, /* spec.hostUsers set to false */
    /* a container or init container has a restartPolicyRules[] action RestartAllContainers */
    KS_POD_SPEC_RESTART_ALL_CONTAINERS = 1u << 2,
    /* a container, init or ephemeral container mounts a volume with bindMountOptions */
    KS_POD_SPEC_BIND_MOUNT_OPTIONS = 1u << 3,
};

typedef struct ks_host_port {
    ks_sym protocol; /* "TCP" when unset */
    ks_sym host_ip;  /* "0.0.0.0" when unset */
    int32_t port;
} ks_host_port;

typedef struct ks_node_image {
    uint32_t nnames;
    const ks_sym *names;
    int64_t size_bytes;
} ks_node_image;

/* One entry for NormalizeScore. */
typedef struct ks_node_score {
    const ks_node_info *node;
    int64_t score;
} ks_node_score;

/* --- ABI 1.1: label selectors, pod (anti-)affinity, topology spread constraints --- */

/* A metav1.LabelSelector. present == 0 is a nil selector (matches nothing); a present selector
 * with no entries matches everything. exprs use In, NotIn, Exists, DoesNotExist. */
typedef struct ks_label_selector {
    int32_t present;
    uint32_t nmatch_labels;
    const ks_label *match_labels;
    uint32_t nexprs;
    const ks_selector_req *exprs;
} ks_label_selector;

typedef struct ks_pod_affinity_term {
    ks_label_selector selector;
    uint32_t nnamespaces; /* none and no namespace_selector: the pod's own namespace */
    const ks_sym *namespaces;
    ks_label_selector namespace_selector; /* present == 0 when not set */
    ks_sym topology_key;
    uint32_t nmatch_label_keys;
    const ks_sym *match_label_keys;
    uint32_t nmismatch_label_keys;
    const ks_sym *mismatch_label_keys;
} ks_pod_affinity_term;

typedef struct ks_weighted_pod_affinity_term {
    int32_t weight;
    ks_pod_affinity_term term;
} ks_weighted_pod_affinity_term;

/* spec.affinity.podAffinity and podAntiAffinity, pre-parsed. */
typedef struct ks_pod_affinity {
    uint32_t nrequired_affinity;
    const ks_pod_affinity_term *required_affinity;
    uint32_t npreferred_affinity;
    const ks_weighted_pod_affinity_term *preferred_affinity;
    uint32_t nrequired_anti_affinity;
    const ks_pod_affinity_term *required_anti_affinity;
    uint32_t npreferred_anti_affinity;
    const ks_weighted_pod_affinity_term *preferred_anti_affinity;
} ks_pod_affinity;

typedef enum ks_unsatisfiable_action {
    KS_DO_NOT_SCHEDULE = 0,
    KS_SCHEDULE_ANYWAY = 1
} ks_unsatisfiable_action;

typedef enum ks_inclusion_policy {
    KS_POLICY_UNSET = 0,
    KS_POLICY_HONOR = 1,
    KS_POLICY_IGNORE = 2
} ks_inclusion_policy;

/* One spec.topologySpreadConstraints entry, pre-parsed. */
typedef struct ks_topology_spread_constraint {
    int32_t max_skew;
    ks_sym topology_key;
    ks_unsatisfiable_action when_unsatisfiable;
    ks_label_selector selector;
    int32_t min_domains; /* 0 when unset */
    ks_inclusion_policy node_affinity_policy;
    ks_inclusion_policy node_taints_policy;
    uint32_t nmatch_label_keys;
    const ks_sym *match_label_keys;
} ks_topology_spread_constraint;

/* --- ABI 1.2: preemption --- */

/* A PodDisruptionBudget as preemption sees it. */
typedef struct ks_pdb_info {
    ks_sym ns;
    ks_sym name;
    ks_label_selector selector;
    int32_t disruptions_allowed; /* status.disruptionsAllowed */
    uint32_t ndisrupted;         /* status.disruptedPods (names; they do not count again) */
    const ks_sym *disrupted;
} ks_pdb_info;

/* Cluster events a rejected pod may become schedulable on (upstream fwk.ClusterEvent). */
typedef enum ks_event_resource {
    KS_RES_POD = 1,
    KS_RES_ASSIGNED_POD = 2,
    KS_RES_UNSCHEDULED_POD = 3,
    KS_RES_NODE = 4,
    KS_RES_NAMESPACE = 5,
    KS_RES_SERVICE = 6,
    KS_RES_PDB = 7,
    KS_RES_REPLICASET = 8,
    KS_RES_STATEFULSET = 9,
    KS_RES_WILDCARD = 100
} ks_event_resource;

/* Action bits, same values as upstream fwk.ActionType. */
enum {
    KS_ACT_ADD = 1u << 0,
    KS_ACT_DELETE = 1u << 1,
    KS_ACT_UPDATE_NODE_ALLOCATABLE = 1u << 2,
    KS_ACT_UPDATE_NODE_LABEL = 1u << 3,
    KS_ACT_UPDATE_NODE_TAINT = 1u << 4,
    KS_ACT_UPDATE_NODE_CONDITION = 1u << 5,
    KS_ACT_UPDATE_NODE_ANNOTATION = 1u << 6,
    KS_ACT_UPDATE_POD_LABEL = 1u << 7,
    KS_ACT_UPDATE_POD_SCALE_DOWN = 1u << 8,
    KS_ACT_UPDATE_POD_TOLERATIONS = 1u << 9,
    KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1u << 10,
    KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1u << 11,
    KS_ACT_UPDATE = (1u << 12) - 4u, /* every update bit above (ABI 1.0-1.3 value) */
    KS_ACT_ALL = (1u << 12) - 1u,
    /* --- ABI 1.4 (Kubernetes v1.37 fwk.ActionType) --- */
    KS_ACT_UPDATE_POD_SCALE_UP = 1u << 12,
    KS_ACT_UPDATE_NODE_DECLARED_FEATURE = 1u << 13,
    KS_ACT_UPDATE_NODE_PREEMPTION_POLICY = 1u << 14,
    /* Every update bit, the ABI 1.4 ones included. A plugin built against 1.3 registered
     * KS_ACT_UPDATE / KS_ACT_ALL: the host reads those as "every update" too. */
    KS_ACT_UPDATE_ANY = KS_ACT_UPDATE | (7u << 12),
    KS_ACT_ALL_ANY = KS_ACT_ALL | (7u << 12)
};

typedef struct ks_cluster_event {
    ks_event_resource resource;
    uint32_t actions; /* KS_ACT_... bits */
} ks_cluster_event;

/* --- ABI 1.4: queueing hints (upstream fwk.QueueingHintFn) --- */

/* KS_RES_TARGET_POD: an update of the pending pod itself (upstream fwk.TargetPod, v1.37): the
 * queue asks only that pod's rejectors about it. An update of another pending pod is
 * KS_RES_UNSCHEDULED_POD, of a pod bound to a node KS_RES_ASSIGNED_POD. */
#define KS_RES_TARGET_POD ((ks_event_resource)10)

/* --- ABI 1.5: storage resources (upstream fwk.PersistentVolume, fwk.PersistentVolumeClaim,
 * fwk.StorageClass, fwk.CSINode, fwk.CSIDriver, fwk.CSIStorageCapacity). Their events carry the
 * parsed objects in ks_event_info.old_obj / new_obj. Only a host of ABI 1.5 or later delivers
 * them; a plugin that registers them on an older host is simply never called for them. */
#define KS_RES_PERSISTENT_VOLUME ((ks_event_resource)11)
#define KS_RES_PERSISTENT_VOLUME_CLAIM ((ks_event_resource)12)
#define KS_RES_STORAGE_CLASS ((ks_event_resource)13)
#define KS_RES_CSI_NODE ((ks_event_resource)14)
#define KS_RES_CSI_DRIVER ((ks_event_resource)15)
#define KS_RES_CSI_STORAGE_CAPACITY ((ks_event_resource)16)
/* --- ABI 1.6 (NodeVolumeLimits): upstream fwk.VolumeAttachment; old_obj / new_obj are
 * const ks_volume_attachment *. Only a host of ABI 1.6 or later delivers it. --- */
#define KS_RES_VOLUME_ATTACHMENT ((ks_event_resource)17)
/* --- ABI 1.9 (GenericWorkload): upstream fwk.PodGroup ("scheduling.k8s.io/PodGroup"); old_obj /
 * new_obj are const ks_pod_group *. Only a host of ABI 1.9 or later delivers it, and only while
 * the GenericWorkload feature gate is on. --- */
#define KS_RES_POD_GROUP ((ks_event_resource)18)
/* --- ABI 1.10 (DynamicResources): upstream fwk.ResourceClaim, fwk.ResourceSlice, fwk.DeviceClass;
 * old_obj / new_obj are const ks_resource_claim * for claims, NULL for the other two. kubesched's
 * `simulate` delivers the claim updates DynamicResources' PreBind and PostFilter make; live mode
 * delivers none of them yet. --- */
#define KS_RES_RESOURCE_CLAIM ((ks_event_resource)19)
#define KS_RES_RESOURCE_SLICE ((ks_event_resource)20)
#define KS_RES_DEVICE_CLASS ((ks_event_resource)21)

/* What a hint says about one event for one rejected pod. */
typedef enum ks_queueing_hint {
    KS_QUEUE_SKIP = 0, /* the event cannot make the pod schedulable: leave it where it is */
    KS_QUEUE = 1       /* it may: move the pod to the active or backoff queue */
} ks_queueing_hint;

/* One cluster event as a hint sees it (upstream's oldObj / newObj). Everything is borrowed for the
 * call: copy what must outlive it. The objects are NULL where the event has none (old_* of an
 * Add, new_* of a Delete) and where the resource is not of that kind; other kinds (Namespace,
 * Service, ...) come as compact JSON. event.actions is the one action of this change (a pod or
 * node update that changed several things is delivered once per action, in upstream's order), or
 * KS_ACT_UPDATE_ANY for an update that changed none of the specific things. For a
 * KS_RES_TARGET_POD event, new_pod is the pending pod's new object (also passed as `pod`) and
 * old_pod the one the queue held. */
typedef struct ks_event_info {
    ks_cluster_event event; /* the resource and the action bits that apply to this change */
    const ks_pod *old_pod, *new_pod;
    const ks_node *old_node, *new_node;
    const char *old_json, *new_json;
    /* --- ABI 1.5 --- Read these only in a hint for one of the storage resources above (only a
     * 1.5 host delivers those, and it always fills them): the old and new object as the handle
     * of its kind (const ks_pv * for KS_RES_PERSISTENT_VOLUME, const ks_pvc * for
     * KS_RES_PERSISTENT_VOLUME_CLAIM, const ks_storage_class *, const ks_csi_node *,
     * const ks_csi_driver *, const ks_csi_storage_capacity *; ABI 1.6: const ks_volume_attachment *
     * for KS_RES_VOLUME_ATTACHMENT), NULL where the event has none.
     * Borrowed for the call, like everything here; old_json / new_json are NULL for them. */
    const void *old_obj, *new_obj;
} ks_event_info;

/* A hint: may `ev` make `pod` (rejected by this plugin in its last attempt, or gated by its
 * PreEnqueue) schedulable? Runs on the thread that delivers the change (an informer thread, the
 * scheduling thread, a binding worker), under the scheduling queue's lock and no lock of the
 * plugin's, possibly concurrently with the plugin's other callbacks: it must be pure (read pod, ev
 * and the plugin's immutable configuration only), must not block and must not call back into the
 * queue (ks_permit_*, ...). When unsure, return KS_QUEUE: upstream queues the pod when a hint
 * fails. Any value other than KS_QUEUE / KS_QUEUE_SKIP counts as KS_QUEUE (the hint metric then
 * says "Error"). */
typedef ks_queueing_hint (*ks_queueing_hint_fn)(void *self, const ks_pod *pod,
                                                const ks_event_info *ev);

/* A registered event and its hint (upstream fwk.ClusterEventWithHint). hint NULL: always
 * KS_QUEUE, as a nil QueueingHintFn upstream. */
typedef struct ks_cluster_event_hint {
    ks_cluster_event event;
    ks_queueing_hint_fn hint;
} ks_cluster_event_hint;

/* --- ABI 1.4: pod signatures for opportunistic batching (upstream fwk.SignPlugin) --- */

/* Where sign() writes its fragments (upstream fwk.SignFragment): opaque, owned by the host. */
typedef struct ks_signature ks_signature;

/* Plugin flags (ks_plugin_desc.flags). */
enum {
    /* kubesched's own: this plugin's PreFilter, Filter, PreScore and Score read nothing but the
     * pod, the node's NodeInfo and the plugin's configuration (no other node, no cycle-wide
     * state across nodes, no cluster object besides these). Without a sign() slot the host
     * then signs the pod for it by its namespace, labels, annotations and whole spec, so the
     * plugin does not turn batching off for every pod as a missing SignPod does upstream. */
    KS_PLUGIN_NODE_LOCAL = 1u << 0
};

/* PreBindPreFlight's answer besides its code (upstream fwk.PreBindPreFlightResult). */
typedef struct ks_prebind_preflight {
    int allow_parallel; /* non-zero: this PreBind may run concurrently with its neighbours' */
} ks_prebind_preflight;

/* --- ABI 1.5: volumes --- */

/* What a volume of the pod's spec.volumes is (ks_pod_volume.source). The in-line sources listed
 * are those a scheduler plugin tells apart: VolumeRestrictions compares the identities of GCE
 * PD, AWS EBS, RBD and iSCSI volumes; NodeVolumeLimits counts the in-tree sources that CSI
 * migration translates (GCE PD, AWS EBS, Azure Disk, Cinder, vSphere, Portworx). */
typedef enum ks_volume_source {
    KS_VOLSRC_OTHER = 0,      /* any other source: emptyDir, configMap, secret, hostPath, nfs ... */
    KS_VOLSRC_PVC = 1,        /* persistentVolumeClaim: claim = claimName */
    KS_VOLSRC_EPHEMERAL = 2,  /* ephemeral: claim = "<pod name>-<volume name>" (upstream
                               * ephemeral.VolumeClaimName); the claim is the pod's only when
                               * its controller owner is the pod (ks_pvc_view.controller_uid) */
    KS_VOLSRC_GCE_PD = 3,     /* gcePersistentDisk: id = pdName */
    KS_VOLSRC_AWS_EBS = 4,    /* awsElasticBlockStore: id = volumeID */
    KS_VOLSRC_RBD = 5,        /* rbd: id = image, pool (default "rbd"), monitors */
    KS_VOLSRC_ISCSI = 6,      /* iscsi: id = iqn, pool = targetPortal, lun */
    KS_VOLSRC_AZURE_DISK = 7, /* azureDisk: id = diskURI */
    KS_VOLSRC_CINDER = 8,     /* cinder: id = volumeID */
    KS_VOLSRC_VSPHERE = 9,    /* vsphereVolume: id = volumePath */
    KS_VOLSRC_PORTWORX = 10,  /* portworxVolume: id = volumeID */
    KS_VOLSRC_CSI = 11        /* csi: id = driver (in a pod: an in-line ephemeral CSI volume; in a
                               * PV: id = volumeHandle, driver in ks_pv_view.csi_driver) */
} ks_volume_source;

/* One entry of the pod's spec.volumes, pre-parsed (ks_pod_volumes). Plain data; borrowed(pod). */
typedef struct ks_pod_volume {
    ks_sym name;       /* spec.volumes[].name */
    uint32_t source;   /* ks_volume_source */
    int32_t read_only; /* the source's readOnly (persistentVolumeClaim, gcePersistentDisk, rbd,
                        * iscsi, azureDisk, cinder, portworxVolume, csi); 0 when unset */
    ks_sym claim;      /* KS_VOLSRC_PVC / KS_VOLSRC_EPHEMERAL: the claim's name ("" when the
                        * spec has none); KS_SYM_EMPTY for other sources */
    ks_sym id;         /* the in-line identity (see ks_volume_source); KS_SYM_EMPTY otherwise */
    ks_sym pool;       /* rbd: pool; iscsi: targetPortal; else KS_SYM_EMPTY */
    int32_t lun;       /* iscsi: lun; else 0 */
    uint32_t nmonitors;
    const ks_sym *monitors; /* rbd: monitors, as listed */
    /* The source as compact JSON ({"persistentVolumeClaim":{"claimName":"data"}}), what upstream's
     * VolumesSigner marshals; NULL for configMap and secret volumes, which it leaves out. */
    const char *source_json;
} ks_pod_volume;

/* Access modes (ks_pv_view.access_modes, ks_pvc_view.access_modes): one bit each. */
enum {
    KS_ACCESS_READ_WRITE_ONCE = 1u << 0,     /* ReadWriteOnce */
    KS_ACCESS_READ_ONLY_MANY = 1u << 1,      /* ReadOnlyMany */
    KS_ACCESS_READ_WRITE_MANY = 1u << 2,     /* ReadWriteMany */
    KS_ACCESS_READ_WRITE_ONCE_POD = 1u << 3, /* ReadWriteOncePod */
    KS_ACCESS_UNKNOWN = 1u << 31             /* a mode this host does not know */
};

/* volumeMode (unset reads as Filesystem, as upstream CheckVolumeModeMismatches defaults it). */
typedef enum ks_volume_mode {
    KS_VOLUME_MODE_FILESYSTEM = 0,
    KS_VOLUME_MODE_BLOCK = 1
} ks_volume_mode;

/* StorageClass.volumeBindingMode. */
typedef enum ks_binding_mode {
    KS_BINDING_UNSET = 0, /* nil: upstream VolumeZone refuses it, VolumeBinding reads Immediate */
    KS_BINDING_IMMEDIATE = 1,
    KS_BINDING_WAIT_FOR_FIRST_CONSUMER = 2
} ks_binding_mode;

/* The views below are what the *_view accessors hand out: borrowed(object), immutable. Each
 * struct only ever grows at its end (ABI minor versions); `size` is sizeof the struct as the
 * host filled it, so a plugin built against a later minor checks size before reading a field
 * the host may not have. A storage quantity is given twice: Value() (bytes, rounded up, as
 * ks_resources) and MilliValue() (saturating at INT64_MAX); ks_storage_cmp compares two as
 * upstream's Quantity.Cmp does. */

/* A PersistentVolume. */
typedef struct ks_pv_view {
    uint32_t size;
    uint32_t access_modes; /* KS_ACCESS_* bits of spec.accessModes */
    ks_sym name;
    ks_sym storage_class;             /* upstream GetPersistentVolumeClass: the beta annotation
                                       * volume.beta.kubernetes.io/storage-class, else
                                       * spec.storageClassName, else "" */
    ks_sym volume_attributes_class;   /* spec.volumeAttributesClassName, "" when unset */
    ks_sym phase;                     /* status.phase ("Available", "Bound", ...), "" when unset */
    uint32_t volume_mode;             /* ks_volume_mode */
    int32_t terminating;              /* metadata.deletionTimestamp set */
    int64_t capacity, capacity_milli; /* spec.capacity.storage; 0 when unset */
    int32_t has_claim_ref;            /* spec.claimRef set */
    ks_sym claim_namespace, claim_name;
    const char *claim_uid; /* "" when the claimRef has none */
    /* spec.nodeAffinity.required.nodeSelectorTerms (ORed); has_node_affinity == 0: no
     * spec.nodeAffinity.required, which every node satisfies */
    int32_t has_node_affinity;
    uint32_t nnode_terms;
    const ks_node_selector_term *node_terms;
    uint32_t nlabels, nannotations;
    const ks_label *labels;      /* sorted by key id */
    const ks_label *annotations; /* sorted by key id */
    uint32_t source;             /* ks_volume_source of the PV's source (in-tree or csi) */
    ks_sym source_id;            /* the disk's identity as for ks_pod_volume.id; csi:
                                  * volumeHandle */
    ks_sym csi_driver;           /* csi: spec.csi.driver; else KS_SYM_EMPTY */
    const char *uid;
    const char *json; /* the whole object as compact JSON */
    /* --- ABI 1.7 (read only when size covers it) --- */
    const char *resource_version; /* metadata.resourceVersion, "" when absent */
} ks_pv_view;

/* A PersistentVolumeClaim. */
typedef struct ks_pvc_view {
    uint32_t size;
    uint32_t access_modes; /* KS_ACCESS_* bits of spec.accessModes */
    ks_sym ns, name;
    ks_sym storage_class;           /* upstream GetPersistentVolumeClaimClass: the beta
                                     * annotation, else spec.storageClassName, else "" */
    int32_t has_storage_class_name; /* spec.storageClassName set (even to "") */
    ks_sym volume_name;             /* spec.volumeName, "" when unbound */
    ks_sym volume_attributes_class; /* spec.volumeAttributesClassName, "" when unset */
    ks_sym phase;                   /* status.phase, "" when unset */
    uint32_t volume_mode;           /* ks_volume_mode */
    int32_t terminating;            /* metadata.deletionTimestamp set */
    int64_t request, request_milli; /* spec.resources.requests.storage; 0 when unset */
    ks_label_selector selector;     /* spec.selector; present == 0 when unset */
    uint32_t nlabels, nannotations;
    const ks_label *labels;      /* sorted by key id */
    const ks_label *annotations; /* sorted by key id (volume.kubernetes.io/selected-node, ...) */
    const char *controller_uid;  /* the uid of the ownerReference with controller: true, "" */
    const char *uid;
    const char *json;
    /* --- ABI 1.7 (read only when size covers it) --- */
    const char *resource_version; /* metadata.resourceVersion, "" when absent */
} ks_pvc_view;

/* A StorageClass. */
typedef struct ks_storage_class_view {
    uint32_t size;
    uint32_t binding_mode; /* ks_binding_mode of volumeBindingMode */
    ks_sym name;
    ks_sym provisioner;
    /* allowedTopologies: each term's matchLabelExpressions as In requirements (ORed terms);
     * nallowed_topologies == 0: no restriction */
    uint32_t nallowed_topologies;
    const ks_node_selector_term *allowed_topologies;
    uint32_t nlabels, nannotations;
    const ks_label *labels, *annotations; /* sorted by key id */
    const char *json;
} ks_storage_class_view;

/* One spec.drivers entry of a CSINode. */
typedef struct ks_csi_node_driver {
    ks_sym name;
    ks_sym node_id;
    int32_t has_allocatable_count; /* allocatable.count set */
    int32_t allocatable_count;
    uint32_t ntopology_keys;
    const ks_sym *topology_keys;
} ks_csi_node_driver;

/* A CSINode (named as its Node). */
typedef struct ks_csi_node_view {
    uint32_t size;
    uint32_t ndrivers;
    ks_sym name;
    const ks_csi_node_driver *drivers; /* spec order */
    uint32_t nannotations;
    const ks_label
        *annotations; /* sorted by key id (storage.alpha.kubernetes.io/migrated-plugins) */
    const char *json;
} ks_csi_node_view;

/* A CSIDriver. */
typedef struct ks_csi_driver_view {
    uint32_t size;
    int32_t attach_required;  /* spec.attachRequired, true when unset (API default) */
    int32_t storage_capacity; /* spec.storageCapacity, false when unset */
    ks_sym name;
    const char *json;
    /* --- ABI 1.6 (read only when size covers it) --- */
    int32_t prevent_pod_scheduling_if_missing; /* spec.preventPodSchedulingIfMissing, false when
                                                * unset */
} ks_csi_driver_view;

/* --- ABI 1.6 (NodeVolumeLimits) --- A VolumeAttachment. */
typedef struct ks_volume_attachment_view {
    uint32_t size;
    int32_t attached; /* status.attached, false when unset */
    ks_sym name;
    ks_sym attacher;  /* spec.attacher, "" when unset */
    ks_sym node_name; /* spec.nodeName, "" when unset */
    ks_sym pv_name;   /* spec.source.persistentVolumeName, KS_SYM_ABSENT when unset (an in-line
                       * volume's attachment) */
    const char *json;
} ks_volume_attachment_view;

/* A CSIStorageCapacity. */
typedef struct ks_csi_storage_capacity_view {
    uint32_t size;
    int32_t has_capacity; /* capacity set */
    ks_sym ns, name;
    ks_sym storage_class_name;
    ks_label_selector node_topology; /* present == 0 when unset (matches no node) */
    int64_t capacity, capacity_milli;
    int32_t has_maximum_volume_size;
    int64_t maximum_volume_size, maximum_volume_size_milli;
    const char *json;
} ks_csi_storage_capacity_view;

/* Per-cycle data a plugin stores with ks_cycle_write(). clone is needed when the framework
 * evaluates a node with nominated pods added (it copies the cycle state); NULL means "share the
 * pointer". cleanup runs when the cycle ends; NULL means the data came from ks_cycle_alloc(). */
typedef struct ks_state_ops {
    void *(*clone)(ks_cycle *into, const void *data);
    void (*cleanup)(void *data);
} ks_state_ops;

/* --- ABI 1.3: the schema of a plugin's args --- */

/* The type of one args field, as the configuration file writes it. */
typedef enum ks_arg_type {
    KS_ARG_ANY = 0,         /* anything; not checked */
    KS_ARG_INT32 = 1,       /* an integer that fits in 32 bits */
    KS_ARG_INT64 = 2,       /* an integer */
    KS_ARG_BOOL = 3,        /* true or false */
    KS_ARG_STRING = 4,      /* a string */
    KS_ARG_DURATION = 5,    /* a Go duration string: "10s", "1m30s", "100ms" */
    KS_ARG_QUANTITY = 6,    /* a resource quantity: a string ("500m", "2Gi") or a number */
    KS_ARG_OBJECT = 7,      /* a mapping, its fields in `object` (NULL: any fields) */
    KS_ARG_OBJECT_LIST = 8, /* a list of mappings, each with the fields in `object` */
    KS_ARG_STRING_LIST = 9  /* a list of strings */
} ks_arg_type;

/* ks_arg_field.flags */
enum {
    /* Apply default_json also when the field is set to its zero value ("", 0, false, an empty
     * list), as upstream's SetDefaults_* do for some fields. */
    KS_ARG_DEFAULT_IF_ZERO = 1u << 0,
    /* An integer field must lie in [min, max]; else "<path>: Invalid value: N: not in valid range
     * [min, max]". Checked after the defaults. */
    KS_ARG_BOUNDED = 1u << 1,
    /* With KS_ARG_DEFAULT_IF_ZERO: a zero value is removed and the default added after the
     * other keys (validate-config prints the args in key order). */
    KS_ARG_DEFAULT_LAST = 1u << 2
};

typedef struct ks_args_schema ks_args_schema;

/* One field of an args mapping. All pointers: static storage of the plugin (they must outlive
 * the module). Read by the host on the main thread only, while it loads the configuration. */
typedef struct ks_arg_field {
    const char *name; /* the key, e.g. "minCandidateNodesPercentage" */
    ks_arg_type type;
    const ks_args_schema *object; /* KS_ARG_OBJECT / KS_ARG_OBJECT_LIST: the item's fields */
    /* The default as JSON text ("10", "\"System\"", "{\"type\": \"LeastAllocated\"}"), set
     * when the field is absent (or zero, with KS_ARG_DEFAULT_IF_ZERO); NULL: none. A defaulted
     * mapping then gets its own fields' defaults. */
    const char *default_json;
    uint32_t flags;   /* KS_ARG_... bits */
    int64_t min, max; /* with KS_ARG_BOUNDED */
} ks_arg_field;

/* The fields of a mapping: the top level of a plugin's args, or a nested object. kubesched checks
 * the args of a plugin whose descriptor has one while it loads the configuration: an unknown key
 * or a value of the wrong type is refused with the file and the field path ("cfg.yaml:
 * profiles[0].pluginConfig[2].args: unknown field \"minCPUU\" (valid: minCPU, ...)"), a null
 * value counts as unset, the defaults are filled in (validate-config prints the result), then the
 * bounds are checked. At the top level `apiVersion`, `kind` and kubesched's `kubeschedPluginPath`
 * are always allowed (kubeschedPluginPath not for the in-tree plugins, whose args kubesched checks
 * as soon as it reads the file). Rules across fields go in the descriptor's validate_args (ABI
 * 1.3), with upstream's message and field path; create() may still refuse with ks_error_set,
 * which validate-config reports too. Static storage; read on the main thread only. */
struct ks_args_schema {
    const char *kind; /* top level: "MyPluginArgs"; a `kind` given must match. NULL: any */
    uint32_t nfields;
    const ks_arg_field *fields;
};

/* What a plugin's validate_args (ABI 1.3) reports: plain data the host hands in zeroed and reads
 * back when validate_args returns non-zero. The host prints "FILE: <args path>.<field>: <detail>"
 * ("profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: ..."), or, when
 * `invalid` is set, upstream's field.Invalid "FILE: <args path>.<field>: Invalid value: <the value
 * at field, as JSON>: <detail>". Fill it with ks_args_fail / ks_args_invalid below. */
typedef struct ks_args_error {
    uint32_t invalid; /* OUT: 1: field.Invalid (the host prints the value), 0: detail as is */
    char field[256];  /* OUT: the path inside args ("a.b[2].c"); "" for the args themselves */
    char detail[512]; /* OUT: what follows "<path>: " (or "Invalid value: <value>: ") */
} ks_args_error;

/* Fill *e and return KS_EINVAL, so that validate_args can `return ks_args_fail(...)`. field is
 * copied as is (build it with snprintf); the detail is a printf format. Static inline: no host
 * call. */
static inline int ks_args_error_setv_(ks_args_error *e, uint32_t invalid, const char *field,
                                      const char *fmt, va_list ap)
{
    e->invalid = invalid;
    snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
    vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
    return KS_EINVAL;
}
/* "<path>.<field>: <detail>", e.g. ks_args_fail(e, "scoringStrategy", "Required value: ..."). */
static inline KS_PRINTF(3, 4) int ks_args_fail(ks_args_error *e, const char *field, const char *fmt,
                                               ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = ks_args_error_setv_(e, 0, field, fmt, ap);
    va_end(ap);
    return rc;
}
/* "<path>.<field>: Invalid value: <value at field>: <detail>" (upstream field.Invalid). */
static inline KS_PRINTF(3, 4) int ks_args_invalid(ks_args_error *e, const char *field,
                                                  const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = ks_args_error_setv_(e, 1, field, fmt, ap);
    va_end(ap);
    return rc;
}

/* Which rule of a Kubernetes qualified name ("[prefix/]name": a label key, a resource name) a
 * string breaks, as upstream's validation.IsQualifiedName checks them in order: the prefix (before
 * the last '/') is a non-empty lowercase RFC 1123 subdomain of at most 253 characters, the name is
 * 1 to 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric. Each caller
 * words its own message for each rule. Pure; any thread. */
typedef enum ks_qname_rule {
    KS_QNAME_OK = 0,
    KS_QNAME_PREFIX_EMPTY = 1,    /* "/name" */
    KS_QNAME_PREFIX_TOO_LONG = 2, /* more than 253 characters */
    KS_QNAME_PREFIX_CHARS = 3,    /* not a lowercase RFC 1123 subdomain */
    KS_QNAME_NAME_EMPTY = 4,      /* "" or "prefix/" */
    KS_QNAME_NAME_TOO_LONG = 5,   /* more than 63 characters */
    KS_QNAME_NAME_CHARS = 6       /* a character outside [A-Za-z0-9-_.], or at an end */
} ks_qname_rule;

static inline ks_qname_rule ks_qualified_name_check(const char *s)
{
    const char *slash = NULL, *name;
    size_t nl;
    for (const char *c = s; *c; c++)
        if (*c == '/')
            slash = c;
    name = slash ? slash + 1 : s;
    for (nl = 0; name[nl]; nl++)
        ;
    if (slash) {
        size_t pl = (size_t)(slash - s);
        if (pl == 0)
            return KS_QNAME_PREFIX_EMPTY;
        if (pl > 253)
            return KS_QNAME_PREFIX_TOO_LONG;
        for (size_t i = 0; i < pl; i++) {
            char c = s[i];
            int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!alnum && !((c == '-' || c == '.') && i > 0 && i + 1 < pl))
                return KS_QNAME_PREFIX_CHARS;
        }
    }
    if (nl == 0)
        return KS_QNAME_NAME_EMPTY;
    if (nl > 63)
        return KS_QNAME_NAME_TOO_LONG;
    for (size_t i = 0; i < nl; i++) {
        char c = name[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < nl))
            return KS_QNAME_NAME_CHARS;
    }
    return KS_QNAME_OK;
}

/* A schema over a static array of fields: KS_ARGS_SCHEMA("MyArgs", my_fields). */
#define KS_ARGS_SCHEMA(kind, fields)                                                               \
    {                                                                                              \
        (kind), (uint32_t)(sizeof(fields) / sizeof((fields)[0])), (fields)                         \
    }

/* ---------------------------------------------------------------------------------------------
 * The plugin descriptor
 *
 * `self` is what create() returned. Every callback may be NULL (the plugin does not implement that
 * extension point). Statuses: return a ks_code, and add one or more reasons to `st` with
 * ks_status_reason(); a rejection without a reason is reported with the plugin's name.
 * ------------------------------------------------------------------------------------------- */
typedef struct ks_plugin_desc {
    uint32_t size;    /* sizeof(ks_plugin_desc) as the plugin was compiled */
    const char *name; /* upstream-style CamelCase name, unique in the scheduler */

    /* Builds the plugin for one profile. args: borrowed, valid until destroy. On failure return
     * NULL and explain with ks_error_set(err, ...). Main thread, before scheduling starts; in
     * live mode also the reloader's thread on a configuration reload, while the instances of the
     * running configuration keep scheduling (README "Reloading the configuration"). */
    void *(*create)(const ks_args *args, ks_error *err);
    /* Frees what create() returned; destroy(NULL) is a no-op. Main thread, after scheduling stops;
     * or, for the instances a reload replaced, the reloader's thread once their last binding
     * cycle ended, while the new instances schedule. */
    void (*destroy)(void *self);

    /* PreEnqueue: before a pod enters the active queue. Non-success parks it as gated.
     * Thread: the event thread that adds the pod; must not block. */
    ks_code (*pre_enqueue)(void *self, const ks_pod *pod, ks_status *st);

    /* QueueSort: non-zero when a must be popped before b. Under the queue lock; must be pure. */
    int (*less)(void *self, const ks_queued_pod *a, const ks_queued_pod *b);

    /* PreFilter: once per cycle, scheduling thread. May restrict the nodes to evaluate with
     * ks_prefilter_result_add_node(); KS_SKIP skips this plugin's Filter and AddPod/RemovePod. */
    ks_code (*pre_filter)(void *self, ks_cycle *cycle, const ks_pod *pod,
                          ks_prefilter_result *result, ks_status *st);
    /* PreFilter extensions: the framework tells the plugin's cycle state that `other` is (added) or
     * is not (removed) on `node`, for nominated pods and preemption dry runs. Scheduling thread or
     * Filter workers (on a cloned cycle state). */
    ks_code (*pre_filter_add_pod)(void *self, ks_cycle *cycle, const ks_pod *pod,
                                  const ks_pod *other, const ks_node_info *node, ks_status *st);
    ks_code (*pre_filter_remove_pod)(void *self, ks_cycle *cycle, const ks_pod *pod,
                                     const ks_pod *other, const ks_node_info *node, ks_status *st);

    /* Filter: called concurrently for different nodes from `parallelism` workers; the cycle state
     * is read-only here. Keep it to integer and ks_sym comparisons. */
    ks_code (*filter)(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                      ks_status *st);

    /* PostFilter: after no node passed Filter, scheduling thread. A plugin that makes room may
     * nominate a node with ks_post_filter_nominate(). */
    ks_code (*post_filter)(void *self, ks_cycle *cycle, const ks_pod *pod,
                           const ks_filter_outcome *outcome, ks_post_filter_result *result,
                           ks_status *st);

    /* PreScore: once per cycle with the feasible nodes (borrowed(cycle)); KS_SKIP skips Score. */
    ks_code (*pre_score)(void *self, ks_cycle *cycle, const ks_pod *pod,
                         const ks_node_info *const *nodes, size_t nnodes, ks_status *st);
    /* Score: concurrently for different nodes; write the raw score to *score. */
    ks_code (*score)(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *node,
                     int64_t *score, ks_status *st);
    /* NormalizeScore: once, scheduling thread; rewrite scores in place to [0, 100]. */
    ks_code (*normalize_score)(void *self, ks_cycle *cycle, const ks_pod *pod,
                               ks_node_score *scores, size_t nscores, ks_status *st);

    /* Reserve / Unreserve: scheduling thread (Unreserve also on a binding thread after a failure).
     * Unreserve must be idempotent and cannot fail. */
    ks_code (*reserve)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node, ks_status *st);
    void (*unreserve)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node);

    /* Permit: scheduling thread. KS_WAIT with *timeout_ms (capped at 15 minutes) parks the pod
     * until ks_permit_allow()/ks_permit_reject() or the timeout. */
    ks_code (*permit)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                      int64_t *timeout_ms, ks_status *st);

    /* PreBind / Bind / PostBind: a binding thread; may block (network calls belong here). Bind
     * returning KS_SKIP passes the pod to the next Bind plugin. PostBind is informational. */
    ks_code (*pre_bind)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node, ks_status *st);
    ks_code (*bind)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node, ks_status *st);
    void (*post_bind)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node);

    /* EnqueueExtensions: the events after which a pod this plugin rejected may fit. Fill at most
     * `cap` entries of out and return how many there are. NULL (and no events_with_hints):
     * every event. Main thread. Each registered event counts as KS_QUEUE (no hint); a 1.4 host
     * prefers events_with_hints when the plugin has it. An update set written as KS_ACT_UPDATE
     * (or KS_ACT_ALL) is read as KS_ACT_UPDATE_ANY (KS_ACT_ALL_ANY). */
    size_t (*events_to_register)(void *self, ks_cluster_event *out, size_t cap);

    /* --- ABI 1.3 --- */
    /* The schema of the plugin's pluginConfig args (see ks_args_schema), or NULL: the args reach
     * create() unchecked, as for every plugin built against ABI 1.2 or older. Borrowed: static
     * storage of the plugin; the host reads it on the main thread while loading the
     * configuration. */
    const ks_args_schema *args_schema;
    /* Rules across fields of the args (upstream's Validate<Kind>Args), run while kubesched loads
     * the configuration, after args_schema's shape check, defaults and bounds, so validate-config
     * and every command refuse bad args with the file and the field path before any create().
     * Read the args with the ks_args_get_... accessors; on a violation fill *err with
     * ks_args_fail() / ks_args_invalid() and return KS_EINVAL, else return 0. args and err:
     * borrowed for the call. Main thread; the module's init has run; no plugin instance exists
     * yet, so it must not touch anything but args. NULL: no such rules. */
    int (*validate_args)(const ks_args *args, ks_args_error *err);

    /* --- ABI 1.4 --- */
    /* EnqueueExtensions with queueing hints (upstream EventsToRegister): fill at most `cap`
     * entries and return how many there are (the host reads at most 64). Called once, right
     * after create(), on the main thread; the hint functions must stay callable until destroy().
     * When set, the host uses it instead of events_to_register (which a plugin may keep for
     * hosts older than ABI 1.4). A registration matches an event of the same resource (KS_RES_POD
     * covers AssignedPod, UnscheduledPod and TargetPod; KS_RES_WILDCARD with KS_ACT_ALL_ANY
     * everything) that has no action the registration lacks (upstream MatchClusterEvents): a
     * generic update (KS_ACT_UPDATE_ANY) only matches a registration of every update bit. */
    size_t (*events_with_hints)(void *self, ks_cluster_event_hint *out, size_t cap);
    /* SignPlugin: add the fragments of the pod that this plugin's Filter and Score results
     * depend on with ks_sign_add(); two pods with equal signatures (every plugin's fragments)
     * must get equal results on every node. Return KS_SUCCESS, or KS_UNSCHEDULABLE when the pod
     * cannot be signed (it depends on more than itself, e.g. on other pods): the pod is then
     * scheduled without batching. NULL: see KS_PLUGIN_NODE_LOCAL. Thread: the scheduling
     * thread, when the pod is popped for a cycle; pure, must not block. */
    ks_code (*sign)(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st);
    uint64_t flags; /* KS_PLUGIN_... bits (64 bits wide: keeps every slot 8-byte aligned) */
    /* PreBindPreFlight (upstream v1.36+): called on a binding thread at the start of the binding
     * cycle, before WaitOnPermit and PreBind, for a plugin that has pre_bind. Return KS_SUCCESS
     * when this plugin's PreBind will have work to do for pod on node, KS_SKIP when it will not
     * (its PreBind is then not called in this binding cycle), KS_ERROR on failure (the binding
     * cycle fails: `running PreBindPreFlight "<name>": <reasons>`); any other code is an error
     * too. When any plugin says KS_SUCCESS (or the pod will wait on Permit), the host sets the
     * pod's status.nominatedNodeName to node before going on (upstream
     * NominatedNodeNameForExpectation, on by default; off with --feature-gates
     * NominatedNodeNameForExpectation=false, which also skips this call). result: zeroed, the
     * plugin may set allow_parallel (this host still runs PreBind plugins one at a time). cycle,
     * pod, result, st: borrowed for the call. NULL with pre_bind set: counts as KS_SUCCESS. */
    ks_code (*pre_bind_pre_flight)(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                                   ks_prebind_preflight *result, ks_status *st);

    /* --- ABI 1.9 --- */
    /* PlacementFeasible (upstream framework.PlacementFeasiblePlugin, GenericWorkload): in a
     * PodGroup scheduling cycle, before the first member is tried and after each, whether the
     * group can still meet this plugin's constraints: KS_SUCCESS (met), KS_WAIT (not yet: members
     * remain to be tried), KS_UNSCHEDULABLE (cannot be: the cycle stops and the group is turned
     * away), with a reason in st; KS_ERROR fails the cycle. group: its PodGroup (borrowed for the
     * call); scheduled: its members assumed or bound, this cycle's included; remaining: the
     * members this cycle has yet to try. As upstream, the host asks only the profile's
     * GangScheduling. Scheduling thread; must not block. */
    ks_code (*placement_feasible)(void *self, const ks_pod_group *group, int32_t scheduled,
                                  int32_t remaining, ks_status *st);
} ks_plugin_desc;

/* --- ABI 1.7 --- The storage objects a PreBind plugin may write (ks_host_api.storage_patch). */
typedef enum ks_storage_kind {
    KS_STORAGE_PERSISTENT_VOLUME = 0,
    KS_STORAGE_PERSISTENT_VOLUME_CLAIM = 1
} ks_storage_kind;
/* A plugin's counter family in /metrics (ks_host_api.counter_new). Opaque, owned by the host. */
typedef struct ks_counter ks_counter;
/* Room for a metadata.resourceVersion with its NUL (the API server's are decimal uint64s). */
#define KS_RESOURCE_VERSION_MAX 64
/* ks_host_api.source_flags: `kubesched simulate`'s in-memory cluster, where no controller runs.
 * storage_patch completes a PersistentVolume's binding to a claim at once, as the
 * PersistentVolume controller would (the claim's spec.volumeName, its bind-completed and
 * bound-by-controller annotations, both objects' status.phase Bound); nothing provisions a
 * volume for a claim that names a selected node. */
#define KS_SOURCE_SIMULATED 0x1u

/* --- ABI 1.8: gang scheduling --- */
/* A pod waiting on Permit, as ks_host_api.waiting_pods_each hands it out: the pod (its assumed
 * copy, spec.nodeName set to the node it waits for) and the names of the Permit plugins that have
 * not allowed it yet. Everything borrowed for the callback. */
typedef struct ks_waiting_pod_info {
    const ks_pod *pod;
    const char *const *pending_plugins;
    size_t npending;
} ks_waiting_pod_info;
typedef void (*ks_waiting_pod_fn)(void *ctx, const ks_waiting_pod_info *wp);
/* A pod visited by ks_host_api.pods_each, borrowed for the callback. */
typedef void (*ks_pod_visit_fn)(void *ctx, const ks_pod *pod);
/* An API resource a plugin watches (ks_host_api.resource_watch): opaque, owned by the host,
 * valid until the plugin is destroyed. */
typedef struct ks_resource ks_resource;
/* One object of a watched resource: read-only, reference-counted (ks_host_api.object_release). */
typedef struct ks_object ks_object;
/* The resources a host can watch for plugins (each a distinct ks_event_resource, see
 * ks_host_api.resource_event) start here. */
#define KS_RES_CUSTOM_FIRST ((ks_event_resource)1000)

/* --- ABI 1.9: upstream's gang scheduling (KEP-4671, GenericWorkload gate) --- */
/* spec.schedulingPolicy: which member of the union is set (KS_PG_POLICY_NONE only for an object
 * the API server would have refused; a plugin treats it as Basic). */
typedef enum ks_pod_group_policy {
    KS_PG_POLICY_NONE = 0,
    KS_PG_POLICY_BASIC = 1,
    KS_PG_POLICY_GANG = 2
} ks_pod_group_policy;
/* What the scheduler reads of a PodGroup. Borrowed(the ks_pod_group). Grows at its end: read a
 * field only when size covers it. */
typedef struct ks_pod_group_view {
    uint32_t size; /* sizeof(ks_pod_group_view) of the host */
    ks_sym ns, name;
    const char *uid;                   /* metadata.uid, "" when absent */
    const char *resource_version;      /* metadata.resourceVersion, "" when absent */
    ks_pod_group_policy policy;        /* spec.schedulingPolicy */
    int32_t min_count;                 /* spec.schedulingPolicy.gang.minCount; 0 unless Gang */
    ks_sym parent_composite_pod_group; /* spec.parentCompositePodGroupName, or KS_SYM_ABSENT */
    ks_sym workload_name;              /* spec.workloadRef.workloadName, or KS_SYM_ABSENT */
    ks_sym template_name;              /* spec.workloadRef.templateName, or KS_SYM_ABSENT */
    int has_priority;                  /* spec.priority is set */
    int32_t priority;                  /* spec.priority */
    int64_t creation_unix_ns;          /* metadata.creationTimestamp (Unix ns), 0 when absent */
    const char *json;                  /* the whole object as compact JSON */
} ks_pod_group_view;
/* Where a member of a pod group is, as upstream's PodGroupState sorts its pods: not yet placed
 * (pending in this scheduler: queued, gated, in a cycle), assumed on a node by this scheduler
 * (waiting on Permit or in its binding cycle), or bound to a node (spec.nodeName set). */
typedef enum ks_pod_group_member_state {
    KS_PG_MEMBER_UNSCHEDULED = 0,
    KS_PG_MEMBER_ASSUMED = 1,
    KS_PG_MEMBER_ASSIGNED = 2
} ks_pod_group_member_state;
/* A member visited by ks_host_api.pod_group_members_each, borrowed for the callback. */
typedef void (*ks_pod_group_member_fn)(void *ctx, const ks_pod *pod,
                                       ks_pod_group_member_state state);

/* --- ABI 1.10: dynamic resource allocation (upstream fwk.SharedDRAManager, structured.Allocator)
 * --- */
/* One entry of the pod's spec.resourceClaims, with what status.resourceClaimStatuses says of it.
 * Plain data; borrowed(pod). */
typedef struct ks_pod_resource_claim {
    const char *name;                         /* spec.resourceClaims[].name */
    const char *resource_claim_name;          /* NULL when unset */
    const char *resource_claim_template_name; /* NULL when unset */
    int has_status;                           /* status.resourceClaimStatuses has this name */
    const char *status_claim_name; /* that entry's resourceClaimName; NULL when unset (the claim
                                    * was intentionally not created) */
} ks_pod_resource_claim;
/* One device request of a claim (spec.devices.requests[i]), as PreFilter checks its classes and
 * Score counts its subrequests. */
typedef struct ks_dra_request_view {
    const char *name;
    const char *device_class_name; /* `exactly`'s; NULL for a firstAvailable request */
    uint32_t nsubrequests;         /* firstAvailable */
    const char *const *subrequest_names;
    const char *const *subrequest_classes;
} ks_dra_request_view;
/* ABI 1.11: one condition of status.devices[].conditions (a metav1.Condition). */
typedef struct ks_dra_device_condition {
    const char *type, *status, *reason, *message; /* "" when absent */
} ks_dra_device_condition;
/* ABI 1.11: an allocated device (status.allocation.devices.results) that has binding conditions
 * (DRADeviceBindingConditions), with what status.devices says of it (the entry of the same
 * driver, pool and device). Borrowed(claim). */
typedef struct ks_dra_binding_device {
    const char *driver, *pool, *device;
    uint32_t nconditions, nfailure_conditions;
    const char *const *conditions;         /* bindingConditions */
    const char *const *failure_conditions; /* bindingFailureConditions */
    int32_t has_status;                    /* status.devices has the device */
    uint32_t nstatus_conditions;
    const ks_dra_device_condition *status_conditions;
} ks_dra_binding_device;
/* What the scheduler reads of a ResourceClaim. Borrowed(claim); grows at its end. */
typedef struct ks_resource_claim_view {
    uint32_t size; /* sizeof(ks_resource_claim_view) of the host */
    ks_sym ns, name;
    const char *uid;            /* metadata.uid ("namespace/name" in a cluster file without) */
    int deleting;               /* metadata.deletionTimestamp set */
    const char *controller_uid; /* the controller ownerReference's uid, NULL when none */
    int allocated;              /* status.allocation set */
    uint32_t nreserved_for;     /* status.reservedFor */
    const char *const *reserved_for_uids;
    uint32_t nrequests;
    const ks_dra_request_view *requests;
    /* status.allocation.nodeSelector's terms (ORed); 0: any node */
    uint32_t nalloc_terms;
    const ks_node_selector_term *alloc_terms;
    const char *json; /* the whole object as compact JSON */
    /* --- ABI 1.11 (size > offsetof(ks_resource_claim_view, nbinding_devices)) --- */
    uint32_t nbinding_devices; /* the allocated devices with binding conditions */
    const ks_dra_binding_device *binding_devices;
    int64_t allocation_unix; /* status.allocation.allocationTimestamp, Unix seconds; 0: absent */
} ks_resource_claim_view;
/* One allocated device (DeviceRequestAllocationResult), borrowed from its ks_dra_allocation. */
typedef struct ks_dra_device_result {
    const char *request; /* "req" or "req/subreq" */
    const char *driver, *pool, *device;
} ks_dra_device_result;
/* What ks_host_api.dra_allocate found (structured.Allocator.Allocate's outcome). */
typedef enum ks_dra_outcome {
    KS_DRA_OUT_ALLOCATED = 0,  /* every claim got devices */
    KS_DRA_OUT_UNSUITABLE = 1, /* no solution on this node */
    KS_DRA_OUT_NODE_ERROR = 2, /* ErrFailedAllocationOnNode: err says why, for this node only */
    KS_DRA_OUT_ERROR = 3,      /* fatal for the attempt (bad claim or class, CEL runtime error) */
    KS_DRA_OUT_TIMEOUT = 4     /* the deadline passed (context.DeadlineExceeded) */
} ks_dra_outcome;

/* --- ABI 1.11: extended resources backed by DRA (DRAExtendedResource; upstream
 * extendeddynamicresources.go) --- */
/* One scalar resource a container requests (resources.requests), as createRequestsAndMappings
 * reads it. Plain data; borrowed(pod). */
typedef struct ks_container_request {
    ks_sym name;          /* the resource name */
    int32_t sorted_index; /* its position among all the container's requests (cpu and memory
                           * too) sorted by name */
    int64_t value;        /* Quantity.AsInt64(); 0 when the quantity is not an integer */
} ks_container_request;
/* One container of the pod, init containers first (spec order), then the containers: index i of
 * this list is upstream's containerIndex. Plain data; borrowed(pod). */
typedef struct ks_pod_container {
    const char *name;
    int32_t init;    /* from spec.initContainers */
    int32_t sidecar; /* an init container with restartPolicy Always */
    uint32_t nrequests;
    const ks_container_request *requests; /* its scalar requests (not cpu, memory,
                                           * ephemeral-storage), sorted by name */
} ks_pod_container;
/* One device request of the claim DynamicResources makes for a pod's extended resources
 * (ExactDeviceRequest, allocationMode ExactCount). */
typedef struct ks_dra_extended_request {
    const char *name; /* "container-<i>-request-<j>" */
    const char *device_class_name;
    int64_t count;
} ks_dra_extended_request;
/* One entry of the pod's status.extendedResourceClaimStatus.requestMappings. */
typedef struct ks_extended_request_mapping {
    const char *container_name, *resource_name, *request_name;
} ks_extended_request_mapping;

/* ---------------------------------------------------------------------------------------------
 * The host function table. Plugins call the ks_... wrappers below, not the slots.
 * ------------------------------------------------------------------------------------------- */
typedef struct ks_host_api {
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t size; /* sizeof(ks_host_api) of the host */
    uint32_t reserved;

    /* --- ABI 1.0 --- */
    /* Memory and strings. */
    void *(*alloc)(size_t n); /* caller frees with free_ */
    void (*free_)(void *p);
    const char *(*strerror)(int err);
    ks_sym (*intern)(const char *s);     /* thread-safe; never fails; the id stays valid forever */
    ks_sym (*sym_lookup)(const char *s); /* KS_SYM_ABSENT if not interned now; else kept forever */
    const char *(*sym_str)(ks_sym sym);  /* "" for EMPTY, NULL for ABSENT; an id read from an
                                          * object is valid while the object is borrowed */

    /* Logging: the host prefixes the calling plugin's name. Any thread. */
    int (*log_enabled)(int verbosity);
    void (*logv)(int verbosity, const char *fmt, va_list ap);

    /* Errors and statuses. */
    void (*error_setv)(ks_error *err, const char *fmt, va_list ap);
    void (*status_reason)(ks_status *st, const char *reason); /* copies reason */
    void (*status_reasonv)(ks_status *st, const char *fmt, va_list ap);

    /* Plugin args (pluginConfig). Paths are dotted field names with [i] for array items, e.g.
     * "scoringStrategy.resources[0].name". Each getter returns 0, KS_ENOTFOUND or KS_ETYPE. */
    const char *(*args_json)(const ks_args *args); /* borrowed(args); "{}" when none */
    int (*args_get_string)(const ks_args *args, const char *path, const char **out);
    int (*args_get_int)(const ks_args *args, const char *path, int64_t *out);
    int (*args_get_double)(const ks_args *args, const char *path, double *out);
    int (*args_get_bool)(const ks_args *args, const char *path, int *out);
    int (*args_count)(const ks_args *args, const char *path, size_t *out); /* array length */
    int (*args_get_quantity)(const ks_args *args, const char *path, int milli, int64_t *out);

    /* Pods (all results borrowed(pod)). */
    ks_sym (*pod_name)(const ks_pod *pod);
    ks_sym (*pod_namespace)(const ks_pod *pod);
    const char *(*pod_uid)(const ks_pod *pod);
    ks_sym (*pod_scheduler_name)(const ks_pod *pod);
    ks_sym (*pod_node_name)(const ks_pod *pod);           /* KS_SYM_EMPTY when unassigned */
    ks_sym (*pod_nominated_node_name)(const ks_pod *pod); /* KS_SYM_EMPTY when none */
    int32_t (*pod_priority)(const ks_pod *pod);
    int (*pod_is_terminating)(const ks_pod *pod);                  /* deletionTimestamp set */
    size_t (*pod_labels)(const ks_pod *pod, const ks_label **out); /* sorted by key id */
    ks_sym (*pod_label)(const ks_pod *pod, ks_sym key);            /* KS_SYM_ABSENT if unset */
    size_t (*pod_annotations)(const ks_pod *pod, const ks_label **out);
    const ks_resources *(*pod_requests)(const ks_pod *pod); /* upstream PodRequests */
    /* The containers' requests, 100m cpu / 200Mi memory for a container without one, plus
     * overhead: upstream's scorer view (calculatePodResourceRequest with
     * NonMissingContainerRequests) as NodeResourcesFit scores in v1.37, which reads neither
     * pod-level requests nor a resized pod's status resources. */
    const ks_resources *(*pod_nonzero_requests)(const ks_pod *pod);
    size_t (*pod_tolerations)(const ks_pod *pod, const ks_toleration **out);
    size_t (*pod_node_selector)(const ks_pod *pod, const ks_label **out);
    const ks_node_affinity *(*pod_node_affinity)(const ks_pod *pod); /* NULL when none */
    size_t (*pod_images)(const ks_pod *pod, const ks_sym **out); /* init then regular containers */
    size_t (*pod_host_ports)(const ks_pod *pod, const ks_host_port **out); /* hostPort > 0 only */
    size_t (*pod_scheduling_gates)(const ks_pod *pod, const ks_sym **out);
    const char *(*pod_json)(const ks_pod *pod); /* the whole object as compact JSON */

    /* Nodes (results borrowed(node)). */
    ks_sym (*node_name)(const ks_node *node);
    size_t (*node_labels)(const ks_node *node, const ks_label **out); /* sorted by key id */
    ks_sym (*node_label)(const ks_node *node, ks_sym key);
    size_t (*node_annotations)(const ks_node *node, const ks_label **out);
    int (*node_unschedulable)(const ks_node *node);
    size_t (*node_taints)(const ks_node *node, const ks_taint **out); /* in spec order */
    const ks_resources *(*node_allocatable)(const ks_node *node);
    size_t (*node_images)(const ks_node *node, const ks_node_image **out);
    const char *(*node_json)(const ks_node *node);

    /* NodeInfo: a node and the pods placed on it in this cycle's snapshot (borrowed(cycle)). */
    const ks_node *(*node_info_node)(const ks_node_info *ni);
    size_t (*node_info_pod_count)(const ks_node_info *ni);
    const ks_pod *(*node_info_pod_at)(const ks_node_info *ni, size_t i);
    const ks_resources *(*node_info_requested)(const ks_node_info *ni);
    const ks_resources *(*node_info_nonzero_requested)(const ks_node_info *ni);

    /* Snapshot (borrowed(cycle)). The node order is the scheduler's, not sorted. */
    const ks_snapshot *(*cycle_snapshot)(ks_cycle *cycle);
    size_t (*snapshot_node_count)(const ks_snapshot *snap);
    const ks_node_info *(*snapshot_node_at)(const ks_snapshot *snap, size_t i);
    const ks_node_info *(*snapshot_node)(const ks_snapshot *snap, ks_sym name); /* NULL: none */

    /* Cycle state: key is the address of something of the plugin's (compare by pointer). */
    int (*cycle_write)(ks_cycle *cycle, const void *key, void *data, const ks_state_ops *ops);
    void *(*cycle_read)(ks_cycle *cycle, const void *key); /* NULL when not written */
    void *(*cycle_alloc)(ks_cycle *cycle, size_t n);       /* zeroed; freed with the cycle */

    /* Queue entries (QueueSort). */
    const ks_pod *(*queued_pod_pod)(const ks_queued_pod *qp);
    int64_t (*queued_pod_timestamp_ns)(const ks_queued_pod *qp); /* last (re)enqueue time */
    int32_t (*queued_pod_attempts)(const ks_queued_pod *qp);

    /* PreFilter result and PostFilter inputs/outputs. */
    void (*prefilter_result_add_node)(ks_prefilter_result *res, ks_sym node);
    ks_code (*filter_outcome_code)(const ks_filter_outcome *o, const ks_node_info *node);
    void (*post_filter_nominate)(ks_post_filter_result *res, ks_sym node);

    /* Permit: a pod waiting on Permit. permit_allow removes `plugin` from the plugins it waits
     * for (KS_ENOTFOUND when the pod does not wait, or not on that plugin); permit_reject ends the
     * wait as Unschedulable with message, naming `plugin` (upstream WaitingPod.Reject: since
     * ABI 1.8 any plugin may reject any waiting pod, as a gang plugin rejects its siblings;
     * older hosts answered KS_ENOTFOUND unless the pod waited on `plugin`). Any thread. 0 or
     * KS_ENOTFOUND. */
    int (*permit_allow)(const char *pod_uid, const char *plugin);
    int (*permit_reject)(const char *pod_uid, const char *plugin, const char *message);

    /* Binding through the cluster source (the API server, or memory in simulate). Binding thread.
     */
    ks_code (*bind_pod)(ks_cycle *cycle, const ks_pod *pod, ks_sym node, ks_status *st);

    /* --- ABI 1.1 --- */
    const ks_pod_affinity *(*pod_affinity)(const ks_pod *pod); /* NULL when none */
    size_t (*pod_topology_spread_constraints)(const ks_pod *pod,
                                              const ks_topology_spread_constraint **out);
    /* The host ports used by the pods on a node (borrowed(cycle)). */
    size_t (*node_info_host_ports)(const ks_node_info *ni, const ks_host_port **out);
    /* Pods on the node with any (anti-)affinity / with required anti-affinity. */
    size_t (*node_info_pods_with_affinity)(const ks_node_info *ni, const ks_pod *const **out);
    size_t (*node_info_pods_with_required_anti_affinity)(const ks_node_info *ni,
                                                         const ks_pod *const **out);
    /* Number of snapshot nodes whose status.images list the image name. */
    size_t (*snapshot_image_node_count)(const ks_snapshot *snap, ks_sym image);
    /* Labels of a Namespace known to the cluster source: 0, or KS_ENOTFOUND. Any thread. */
    int (*namespace_labels)(ks_cycle *cycle, ks_sym ns, const ks_label **out, size_t *n);
    /* The selectors of the Services, ReplicationControllers, ReplicaSets and StatefulSets in the
     * pod's namespace that select it (upstream helper.DefaultSelector's inputs). Borrowed(cycle).
     */
    size_t (*pod_owner_selectors)(ks_cycle *cycle, const ks_pod *pod,
                                  const ks_label_selector **out);

    /* --- ABI 1.2: what a preemption plugin (PostFilter) needs --- */
    int (*pod_preemption_never)(const ks_pod *pod);  /* spec.preemptionPolicy == Never */
    int64_t (*pod_start_time_ns)(const ks_pod *pod); /* status.startTime; 0 when unset */
    /* A mutable copy of a NodeInfo, freed with the cycle. Scheduling thread. */
    ks_node_info *(*node_info_clone)(ks_cycle *cycle, const ks_node_info *ni);
    /* Remove / add a pod on such a copy (sums and lists follow). 0 or KS_ENOTFOUND/KS_ENOMEM. */
    int (*node_info_remove_pod)(ks_node_info *copy, const ks_pod *pod);
    int (*node_info_add_pod)(ks_node_info *copy, const ks_pod *pod);
    /* A copy of the cycle state (each entry cloned with its ks_state_ops.clone), freed with the
     * original cycle; for dry runs that call AddPod/RemovePod. */
    ks_cycle *(*cycle_clone)(ks_cycle *cycle);
    /* Runs every Filter plugin of the pod's profile on ni, with the pods nominated to that node
     * (as upstream RunFilterPluginsWithNominatedPods), using `state` as the cycle state. */
    ks_code (*run_filters)(ks_cycle *state, const ks_pod *pod, const ks_node_info *ni,
                           ks_status *st);
    /* Runs every PreFilter plugin's AddPod / RemovePod extension (skipped plugins excepted). */
    ks_code (*run_prefilter_add_pod)(ks_cycle *state, const ks_pod *pod, const ks_pod *other,
                                     const ks_node_info *ni, ks_status *st);
    ks_code (*run_prefilter_remove_pod)(ks_cycle *state, const ks_pod *pod, const ks_pod *other,
                                        const ks_node_info *ni, ks_status *st);
    /* The PodDisruptionBudgets the cluster source knows (borrowed(cycle)). */
    size_t (*pdbs)(ks_cycle *cycle, const ks_pdb_info **out);
    /* PostFilter result: a victim to evict if the plugin returns Success (with a nomination). */
    void (*post_filter_add_victim)(ks_post_filter_result *res, const ks_pod *victim);
    /* A uniformly random integer in [0, n) from the scheduler's seeded generator (n > 0). */
    int64_t (*rand_below)(ks_cycle *cycle, int64_t n);
    /* Pods nominated to a node (after preemption), borrowed(cycle). */
    size_t (*nominated_pods)(ks_cycle *cycle, ks_sym node, const ks_pod *const **out);
    /* The snapshot nodes that have pods with any pod (anti-)affinity (required_anti_only == 0)
     * or with required anti-affinity (!= 0), in snapshot order (upstream
     * HavePodsWithAffinityList / HavePodsWithRequiredAntiAffinityList). borrowed(cycle). */
    size_t (*snapshot_nodes_with_affinity_pods)(const ks_snapshot *snap, int required_anti_only,
                                                const ks_node_info *const **out);
    /* A status of the plugin's own (e.g. to keep a dry run's Filter verdict), freed with the
     * cycle; and read access to any status: its code and reasons (borrowed(status)). */
    ks_status *(*status_new)(ks_cycle *cycle);
    ks_code (*status_code)(const ks_status *st);
    size_t (*status_reason_count)(const ks_status *st);
    const char *(*status_reason_at)(const ks_status *st, size_t i);
    /* The pods on a node that are in namespace ns (borrowed(cycle)); for plugins that count the
     * pods of one namespace, without touching the others. */
    size_t (*node_info_pods_in_namespace)(const ks_node_info *ni, ks_sym ns,
                                          const ks_pod *const **out);
    /* Change tracking, for plugins that keep per-node results from one cycle to the next
     * (scheduling thread, PreFilter/PreScore). The version changes whenever the node list is
     * rebuilt (node indexes mean something else then); *update_seq grows by one at every
     * snapshot update (once per cycle). */
    uint64_t (*snapshot_version)(const ks_snapshot *snap, uint64_t *update_seq);
    /* The indexes (for ks_snapshot_node_at) of the nodes whose NodeInfo the last update changed;
     * valid only when the version is unchanged. borrowed(cycle). */
    size_t (*snapshot_changed_nodes)(const ks_snapshot *snap, const uint32_t **indexes);

    /* --- ABI 1.4 --- */
    /* Adds one fragment to a pod signature: key (the upstream key, e.g. "v1.Pod.Spec.Tolerations",
     * or the plugin's own, prefixed with its name) and its value as JSON; both are copied. The
     * same key twice keeps the first. Any thread (the signature belongs to one call). */
    void (*sign_add)(ks_signature *sig, const char *key, const char *value_json);
    /* node.status.declaredFeatures (NodeDeclaredFeatures), in the order the node lists them (the
     * API server keeps the list sorted and unique); 0 when absent. borrowed(node); any thread. */
    size_t (*node_declared_features)(const ks_node *node, const ks_sym **out);
    /* Facts about the pod's spec that no other accessor gives: KS_POD_SPEC_* bits. Any thread. */
    uint32_t (*pod_spec_flags)(const ks_pod *pod);
    /* The references of the pod's image volumes (spec.volumes[].image.reference, KS_SYM_EMPTY for
     * an image volume without one), in spec order. borrowed(pod); any thread. */
    size_t (*pod_image_volumes)(const ks_pod *pod, const ks_sym **out);
    /* The size an image name is scored with on every node that lists it (upstream
     * ImageStateSummary.Size: what the Node that listed the name first reported, while no other
     * Node did), or -1 when no node of the snapshot lists it. Any thread. */
    int64_t (*snapshot_image_size)(const ks_snapshot *snap, ks_sym image);

    /* --- ABI 1.5: volumes --- */
    /* The pod's spec.volumes, pre-parsed, in spec order. borrowed(pod); any thread. */
    size_t (*pod_volumes)(const ks_pod *pod, const ks_pod_volume **out);
    /* The storage objects the cluster source knows now, looked up by name (upstream's listers):
     * NULL when there is none. The object is held by the cycle: borrowed(cycle), even when an
     * update replaces it or it is deleted meanwhile (look it up again for the newer one). Any
     * thread that runs a callback of this cycle, Filter workers included (thread-safe). */
    const ks_pvc *(*cycle_pvc)(ks_cycle *cycle, ks_sym ns, ks_sym name);
    const ks_pv *(*cycle_pv)(ks_cycle *cycle, ks_sym name);
    const ks_storage_class *(*cycle_storage_class)(ks_cycle *cycle, ks_sym name);
    const ks_csi_node *(*cycle_csi_node)(ks_cycle *cycle, ks_sym node_name);
    const ks_csi_driver *(*cycle_csi_driver)(ks_cycle *cycle, ks_sym name);
    /* The PersistentVolumes whose ks_pv_view.storage_class is storage_class (KS_SYM_ABSENT:
     * every one), ordered by name; the array and the objects borrowed(cycle). Same threads. */
    size_t (*cycle_pvs)(ks_cycle *cycle, ks_sym storage_class, const ks_pv *const **out);
    /* Every CSIStorageCapacity, ordered by namespace then name; borrowed(cycle). Same threads. */
    size_t (*cycle_csi_storage_capacities)(ks_cycle *cycle,
                                           const ks_csi_storage_capacity *const **out);
    /* upstream StorageInfos().IsPVCUsedByPods: non-zero when a pod of the snapshot (placed or
     * assumed on a node) has a persistentVolumeClaim volume of claim `name` in namespace ns.
     * Any thread; O(pods with such volumes) per call. */
    int (*snapshot_pvc_in_use)(const ks_snapshot *snap, ks_sym ns, ks_sym name);
    /* The fields of each object (see the *_view structs). borrowed(object); any thread. */
    const ks_pv_view *(*pv_view)(const ks_pv *pv);
    const ks_pvc_view *(*pvc_view)(const ks_pvc *pvc);
    const ks_storage_class_view *(*storage_class_view)(const ks_storage_class *sc);
    const ks_csi_node_view *(*csi_node_view)(const ks_csi_node *cn);
    const ks_csi_driver_view *(*csi_driver_view)(const ks_csi_driver *d);
    const ks_csi_storage_capacity_view *(*csi_storage_capacity_view)(
        const ks_csi_storage_capacity *c);

    /* --- ABI 1.6: VolumeAttachments (NodeVolumeLimits) --- */
    /* The VolumeAttachments whose spec.nodeName is node_name, ordered by name (upstream's
     * VolumeAttachment informer indexed by node); the array and the objects borrowed(cycle).
     * Any thread that runs a callback of this cycle, Filter workers included. */
    size_t (*cycle_volume_attachments)(ks_cycle *cycle, ks_sym node_name,
                                       const ks_volume_attachment *const **out);
    /* Its fields. borrowed(object); any thread. */
    const ks_volume_attachment_view *(*volume_attachment_view)(const ks_volume_attachment *va);

    /* --- ABI 1.7: PreBind writes to storage objects, and waits (VolumeBinding) --- */
    /* Writes a JSON merge patch (RFC 7386, e.g. {"spec":{"claimRef":{...}}}) to the
     * PersistentVolume `name` (ns ignored) or to the claim ns/name: a PATCH to the API server in
     * live mode, a change of the in-memory object in `simulate` (whose other pods see it at once).
     * Put metadata.resourceVersion in the patch to make the write conditional: it then fails
     * with a Conflict when the object changed meanwhile, as upstream's Update does. On success
     * the object's new metadata.resourceVersion is copied to rv (room for
     * KS_RESOURCE_VERSION_MAX bytes): the copy that cycle_pv / cycle_pvc return catches up with
     * it later in live mode (through the informer; compare with ks_resource_version_cmp).
     * KS_SUCCESS, or KS_ERROR with the API server's answer in st. merge_patch is copied.
     * Binding thread only (PreBind): it blocks on the network. */
    ks_code (*storage_patch)(ks_cycle *cycle, ks_storage_kind kind, ks_sym ns, ks_sym name,
                             const char *merge_patch, char *rv, ks_status *st);
    /* Sleeps ns nanoseconds (a PreBind plugin polling for a controller's answer, as upstream's
     * wait.Poll): 0 after the time; KS_ENOTFOUND as soon as the pod being bound has been
     * deleted; KS_ECANCELED as soon as the scheduler is stopping or a preemptor has taken the
     * pod's place in memory (v1.37 cancels pods in PreBind instead of deleting them): return
     * KS_ERROR then, and the pod's message names the cause ("preempted by DefaultPreemption"),
     * as upstream's framework puts the cancel's cause in place of "context canceled". In `simulate`
     * it returns 0 at once: nothing else changes the in-memory cluster while the plugin waits.
     * Binding thread only.
     */
    int (*binding_sleep)(ks_cycle *cycle, int64_t ns);
    /* KS_SOURCE_* bits: what the cluster source of this cycle is. Any thread. */
    uint32_t (*source_flags)(ks_cycle *cycle);
    /* A counter family with one label in the scheduler's /metrics (stability ALPHA, as upstream's
     * plugin metrics): name and help as given (an in-tree plugin gives upstream's; an
     * out-of-tree plugin should prefix the names with its own). The same name again (another
     * profile's instance) gives the same family. NULL when the scheduler serves no metrics
     * (`simulate`), or the name or label is not a valid Prometheus name. Owned by the host,
     * valid until the plugin is destroyed. Main thread (create). */
    ks_counter *(*counter_new)(const char *name, const char *help, const char *label);
    /* Adds 1 to the series whose label is value (created on first use). NULL counter:
     * nothing. Any thread; lock-free once the series exists. */
    void (*counter_inc)(ks_counter *counter, const char *value);

    /* --- ABI 1.8: what a gang-scheduling plugin needs (scheduler-plugins' Coscheduling is
     * written on these alone: plugins-oot/coscheduling) --- */
    /* Calls fn once for each pod waiting on Permit now (upstream IterateOverWaitingPods; one map
     * for every profile, as upstream shares it), in the order they began to wait. fn runs with
     * no host lock held: it may call ks_permit_allow / ks_permit_reject on any pod (upstream's
     * WaitingPod.Allow / Reject). A pod allowed or rejected meanwhile may still be visited.
     * cycle: the caller's, or NULL from a thread of the plugin's own. Returns how many pods
     * were visited. Any thread but a Filter/Score worker, QueueSort and a queueing hint. */
    size_t (*waiting_pods_each)(ks_cycle *cycle, ks_waiting_pod_fn fn, void *ctx);
    /* Asks for pod to be moved to the active queue (upstream's PodsToActivate in the cycle
     * state): recorded on the cycle and done, as upstream does, at the end of this scheduling
     * cycle when it succeeds (Permit said Success or Wait) and at the end of its binding cycle
     * when that succeeds. A pod in unschedulablePods or backoffQ goes to activeQ (PreEnqueue
     * still applies), one in activeQ stays, one in flight comes back through activeQ or backoffQ
     * instead of unschedulablePods (upstream's ForceActivate event). The uid is copied; pod is
     * borrowed. Scheduling thread (Permit, Reserve, PostFilter...) or the binding thread of the
     * cycle. */
    void (*activate_pod)(ks_cycle *cycle, const ks_pod *pod);
    /* The pods of namespace ns whose label key equals value (upstream's pod lister with that
     * label selector, `pods.Lister().Pods(ns).List(...)`): every pod the scheduler knows that has
     * not terminated: pending pods of this scheduler's profiles (queued, gated, being scheduled,
     * waiting on Permit) and assigned pods of any scheduler (bound, or assumed by this one), each
     * once. (Upstream's lister also has other schedulers' pending pods, which kubesched does not
     * keep.) fn per pod, borrowed for the call, no
     * order promised. Returns the count. The host indexes the pods by the label keys asked for,
     * so a call costs O(the matching pods). Any thread but a Filter/Score worker, QueueSort and a
     * queueing hint (those run under the queue's lock, which the lister takes). */
    size_t (*pods_each)(ks_cycle *cycle, ks_sym ns, ks_sym label_key, ks_sym label_value,
                        ks_pod_visit_fn fn, void *ctx);
    /* upstream QueuedPodInfo.InitialAttemptTimestamp (the first time the pod entered activeQ) as
     * Unix time in ns, to compare with an object's creationTimestamp (ks_object_get_time); 0
     * before it entered. Under the queue lock (QueueSort). */
    int64_t (*queued_pod_initial_attempt_unix_ns)(const ks_queued_pod *qp);
    /* Declares that this plugin reads objects of a resource the host does not know, e.g.
     * ("scheduling.x-k8s.io/v1alpha1", "PodGroup", "podgroups"): the host lists and watches
     * /apis/<group>/<version>/<plural> in live mode (the chart must grant list and watch on it),
     * and reads objects of that apiVersion and kind from the cluster file in `simulate`. The same
     * resource declared again (another profile, another plugin) gives the same handle. NULL with
     * err set when an argument is malformed. Main thread, in create(). */
    ks_resource *(*resource_watch)(const char *api_version, const char *kind, const char *plural,
                                   ks_error *err);
    /* The event resource of its changes (>= KS_RES_CUSTOM_FIRST), for events_with_hints: an add,
     * update or delete of such an object requeues the pods the plugin rejected as any other event
     * does; the hint's ev->old_obj / new_obj are then const ks_object *. Any thread. */
    ks_event_resource (*resource_event)(const ks_resource *res);
    /* The object ns/name (ns KS_SYM_EMPTY for a cluster-scoped resource) as the watch has it now,
     * with a reference for the caller (release it with object_release), or NULL when there is
     * none. Any thread, QueueSort included (a read lock and a reference count). */
    const ks_object *(*resource_get)(const ks_resource *res, ks_sym ns, ks_sym name);
    void (*object_release)(const ks_object *obj); /* NULL: no-op. Any thread. */
    /* Its fields, by the same dotted paths as the args getters ("spec.minMember",
     * "metadata.name"; ["key"] for a key with dots: "spec.minResources[\"nvidia.com/gpu\"]");
     * 0, KS_ENOTFOUND or KS_ETYPE (KS_EPARSE for a malformed quantity or
     * time). Strings borrowed(obj). object_get_time reads an RFC 3339 time ("2026-12-01T10:00:00Z",
     * as metav1.Time) as Unix ns. object_json is the object as compact JSON, borrowed(obj). Any
     * thread. */
    int (*object_get_string)(const ks_object *obj, const char *path, const char **out);
    int (*object_get_int)(const ks_object *obj, const char *path, int64_t *out);
    int (*object_get_quantity)(const ks_object *obj, const char *path, int milli, int64_t *out);
    int (*object_get_time)(const ks_object *obj, const char *path, int64_t *unix_ns);
    int (*object_count)(const ks_object *obj, const char *path,
                        size_t *out); /* array or map size */
    /* The key (a resource name) of entry i of the map at path (e.g. "spec.minResources"). */
    int (*object_key_at)(const ks_object *obj, const char *path, size_t i, const char **out);
    const char *(*object_json)(const ks_object *obj);
    /* The scheduler's clock in ns, for a plugin's own timeouts and expiring caches: monotonic
     * (an arbitrary origin) in live mode, the virtual clock in `simulate` (which jumps over
     * waits). Any thread. */
    int64_t (*clock_now_ns)(void);
    /* Writes a JSON merge patch (RFC 7386) to the object ns/name (ns KS_SYM_EMPTY: cluster
     * scoped) of a watched resource, or to its status subresource (status != 0), without
     * waiting: live mode queues a PATCH for the host's writer thread (a failure is logged with
     * the API server's answer, not retried: write again from a later event); `simulate` applies
     * it to the in-memory object at once, whose Update event follows as an informer's would.
     * 0 once queued or applied; KS_EINVAL when merge_patch is not a JSON object; KS_ENOTFOUND
     * in simulate when there is no such object; KS_ENOMEM. merge_patch is copied. Any thread but
     * a Filter/Score worker; never blocks on the network. */
    int (*object_patch)(const ks_resource *res, ks_sym ns, ks_sym name, int status,
                        const char *merge_patch);
    /* Records an Event about pod (events.k8s.io/v1: type "Normal" or "Warning", a CamelCase
     * reason, note cut to the API's 1 kB), reported by kubesched for the cycle's profile, without
     * waiting (queued in live mode; logged at -v 2 in `simulate`). 0 or KS_EINVAL / KS_ENOMEM.
     * cycle may be NULL (a plugin's own thread). Strings copied. Same threads as object_patch. */
    int (*pod_event)(ks_cycle *cycle, const ks_pod *pod, const char *type, const char *reason,
                     const char *note);

    /* --- ABI 1.9: upstream's gang scheduling (GenericWorkload; upstream fwk.PodGroupManager) ---
     * Every slot answers "none" (KS_SYM_ABSENT, NULL, 0) while the GenericWorkload feature gate is
     * off, as upstream, whose API server then drops spec.schedulingGroup and serves no PodGroup. */
    /* spec.schedulingGroup.podGroupName of pod, or KS_SYM_ABSENT when the pod names no group.
     * borrowed(pod). Any thread. */
    ks_sym (*pod_scheduling_group)(const ks_pod *pod);
    /* The PodGroup ns/name as the informer (live) or the cluster file (`simulate`) has it now,
     * with a reference for the caller (release it with pod_group_release), or NULL when there is
     * none. Any thread, PreEnqueue and hints included (a read lock and a reference count). */
    const ks_pod_group *(*pod_group_get)(ks_sym ns, ks_sym name);
    void (*pod_group_release)(const ks_pod_group *pg); /* NULL: no-op. Any thread. */
    /* Its fields, borrowed(pg). Any thread. */
    const ks_pod_group_view *(*pod_group_view)(const ks_pod_group *pg);
    /* Calls fn once for each pod of group ns/name the scheduler knows (upstream PodGroupState's
     * allPods: the pending pods of this scheduler's profiles and the pods on nodes, assumed or
     * bound; not terminated), with where it is; a group whose PodGroup object does not exist
     * may still have members. No order promised. fn runs with no host lock held (it may call
     * ks_permit_allow, activate_pod, ...). Returns the count. The same threads as pods_each
     * plus PreEnqueue (the host keeps the members in a table of their own, not in the queue). */
    size_t (*pod_group_members_each)(ks_sym ns, ks_sym name, ks_pod_group_member_fn fn, void *ctx);

    /* --- ABI 1.10: dynamic resource allocation (DynamicResources; upstream fwk.SharedDRAManager
     * and structured.Allocator). cycle may be NULL outside a cycle (PreEnqueue, hints): the
     * running scheduler's objects are read then. --- */
    /* The pod's spec.resourceClaims in spec order. borrowed(pod); any thread. */
    size_t (*pod_resource_claims)(const ks_pod *pod, const ks_pod_resource_claim **out);
    /* The claim ns/name as the store has it now (upstream's claim assume cache), with a reference
     * for the caller (release it with resource_claim_release), or NULL. Any thread. */
    const ks_resource_claim *(*resource_claim_get)(ks_cycle *cycle, ks_sym ns, const char *name);
    void (*resource_claim_release)(const ks_resource_claim *claim); /* NULL: no-op */
    const ks_resource_claim_view *(*resource_claim_view)(const ks_resource_claim *claim);
    /* Whether the DeviceClass exists. Any thread. */
    int (*device_class_exists)(ks_cycle *cycle, const char *name);
    /* In-flight allocations (upstream ClaimHasPendingAllocation / SignalClaimPendingAllocation /
     * RemoveClaimPendingAllocation): claim uid -> allocation, devices counted as taken by every
     * allocator made after the signal. signal copies what it keeps of claim i of alloc; remove
     * answers 1 when the uid was there. Scheduling and binding threads. */
    int (*dra_claim_pending)(ks_cycle *cycle, const char *claim_uid);
    int (*dra_signal_pending)(ks_cycle *cycle, const ks_resource_claim *claim,
                              const ks_dra_allocation *alloc, size_t i);
    int (*dra_remove_pending)(ks_cycle *cycle, const char *claim_uid);
    /* structured.NewAllocator: the slices, classes and DeviceTaintRules of now, and the devices
     * that allocated and in-flight claims hold. Freed with the cycle (borrowed(cycle)). NULL with
     * err set on failure. Scheduling thread (PreFilter). */
    ks_dra_allocator *(*dra_allocator_new)(ks_cycle *cycle, char *err, size_t errlen);
    /* Allocate: claims (none allocated) on node; deadline_ns on the ks_clock_now_ns clock's
     * monotonic origin (CLOCK_MONOTONIC), 0 for none. KS_DRA_OUT_ALLOCATED fills *out (free with
     * dra_allocation_free); the other outcomes leave *out NULL and NODE_ERROR / ERROR write the
     * reason to err. Negative: KS_ENOMEM. Any thread (Filter workers). */
    int (*dra_allocate)(ks_dra_allocator *a, const ks_node *node,
                        const ks_resource_claim *const *claims, size_t nclaims, int64_t deadline_ns,
                        ks_dra_allocation **out, char *err, size_t errlen);
    void (*dra_allocation_free)(ks_dra_allocation *alloc); /* NULL: no-op */
    /* The devices claim i of alloc got, in the result's order. borrowed(alloc). */
    size_t (*dra_allocation_devices)(const ks_dra_allocation *alloc, size_t i,
                                     const ks_dra_device_result **out);
    /* PreBind's write (upstream bindClaim): claim gets status.allocation (claim i of alloc; alloc
     * NULL: already allocated), the pod in status.reservedFor and the finalizer
     * resource.kubernetes.io/delete-protection. `simulate` changes the in-memory claim; live
     * mode answers KS_ERROR (kubesched does not write ResourceClaims to an API server yet).
     * Binding thread. */
    ks_code (*dra_claim_bind)(ks_cycle *cycle, const ks_pod *pod, const ks_resource_claim *claim,
                              const ks_dra_allocation *alloc, size_t i, ks_status *st);
    /* PostFilter's write: status.reservedFor and status.allocation cleared (UpdateStatus), as
     * dra_claim_bind for the sources. Scheduling thread. */
    ks_code (*dra_claim_deallocate)(ks_cycle *cycle, const ks_resource_claim *claim, ks_status *st);
    /* Unreserve's write: the pod taken out of the claim's status.reservedFor when the claim as
     * the store has it now lists it (upstream's strategic-merge-patch delete); a failure is only
     * logged. Scheduling or binding thread. */
    void (*dra_claim_unreserve)(ks_cycle *cycle, const ks_pod *pod, const ks_resource_claim *claim);

    /* --- ABI 1.10, gang scheduling ---
     * The counts of pod_group_members_each's members without visiting them (upstream
     * PodGroupState's AllPodsCount
     * and ScheduledPodsCount: assumed or assigned), for PreEnqueue and Permit, which upstream
     * answers in O(1): a walk there made adding a gang of n pods O(n^2) pod references. *all and
     * *scheduled may be NULL. Any thread; no pod is referenced, no callback runs. */
    void (*pod_group_member_counts)(ks_sym ns, ks_sym name, size_t *all, size_t *scheduled);
    /* --- ABI 1.11: extended resources backed by DRA (DRAExtendedResource; upstream
     * extendeddynamicresources.go and NodeResourcesFit's shouldDelegateResourceToDRA) --- */
    /* The pod's containers with their scalar requests, for a pod that requests an extended
     * resource or a deviceclass.resource.kubernetes.io/ one (0 for any other pod). borrowed(pod);
     * any thread. */
    size_t (*pod_containers)(const ks_pod *pod, const ks_pod_container **out);
    /* upstream DeviceClassResolver.GetDeviceClass: the DeviceClass an extended resource name maps
     * to (spec.extendedResourceName, or the implicit deviceclass.resource.kubernetes.io/<class>;
     * among classes naming the same resource, the newest by creationTimestamp, then the smallest
     * name), as the class's interned name, or KS_SYM_ABSENT. Any thread; cycle may be NULL. */
    ks_sym (*dra_extended_resource_class)(ks_cycle *cycle, ks_sym resource);
    /* findExtendedResourceClaim: the claim in the pod's namespace annotated
     * resource.kubernetes.io/extended-resource-claim: "true" whose controller is the pod, with a
     * reference for the caller (resource_claim_release), or NULL. Scheduling thread. */
    const ks_resource_claim *(*dra_extended_claim_find)(ks_cycle *cycle, const ks_pod *pod);
    /* The in-memory claim for the pod's extended resources: name "<extended-resources>",
     * generateName "<pod>-extended-resources-", the pod as controller, the annotation, and
     * spec.devices.requests from reqs (none: no requests). Not in the store; a reference for the
     * caller (resource_claim_release), or NULL when out of memory. Any thread. */
    const ks_resource_claim *(*dra_extended_claim_new)(ks_cycle *cycle, const ks_pod *pod,
                                                       const ks_dra_extended_request *reqs,
                                                       size_t n);
    /* PreBind's createExtendedResourceClaimInAPI: claim (from dra_extended_claim_new) created
     * with a generated name (live mode: a POST with generateName, the answer filed in the store
     * at once; `simulate`: generateName plus a deterministic suffix); *created gets the stored
     * claim with a reference for the caller. Binding thread. */
    ks_code (*dra_extended_claim_create)(ks_cycle *cycle, const ks_pod *pod,
                                         const ks_resource_claim *claim,
                                         const ks_resource_claim **created, ks_status *st);
    /* deleteClaim (PostFilter, Unreserve): the finalizer removed, then the claim deleted (a
     * claim already gone is no error). Scheduling or binding thread. */
    ks_code (*dra_claim_delete)(ks_cycle *cycle, const ks_resource_claim *claim, ks_status *st);
    /* patchPodExtendedResourceClaimStatus: the pod's status.extendedResourceClaimStatus
     * {requestMappings, resourceClaimName}. Binding thread. */
    ks_code (*pod_extended_claim_status)(ks_cycle *cycle, const ks_pod *pod, const char *claim_name,
                                         const ks_extended_request_mapping *mappings, size_t n,
                                         ks_status *st);
    /* NodeResourcesFit's scoring of a resource a DeviceClass maps (calculateDRAResourceTotals):
     * how many devices of the node's ResourceSlices match the class (capacity) and how many of
     * those the allocator's claims hold, allocated or in flight (allocated). 0; KS_EINVAL (both
     * 0) when a selector of the class fails; KS_ENOMEM. Any thread (Score workers). */
    int (*dra_class_device_counts)(ks_dra_allocator *a, const ks_node *node, ks_sym class_name,
                                   int64_t *capacity, int64_t *allocated);
} ks_host_api;

/* ---------------------------------------------------------------------------------------------
 * Modules (shared objects)
 * ------------------------------------------------------------------------------------------- */
typedef struct ks_module {
    uint32_t abi_major;    /* KS_ABI_MAJOR the module was built with */
    uint32_t abi_minor;    /* KS_ABI_MINOR the module was built with */
    uint32_t size;         /* sizeof(ks_module) */
    uint32_t pointer_size; /* sizeof(void *) */
    /* Called once after the checks pass, before any create(). Return 0, or non-zero after writing
     * a message to err (errlen bytes). Main thread. */
    int (*init)(const ks_host_api *host, char *err, size_t errlen);
    uint32_t nplugins;
    const ks_plugin_desc *const *plugins;
} ks_module;

#define KS_MODULE_SYMBOL "ks_module_info"

/* The host table every wrapper below calls through. Each module has its own copy (hidden
 * visibility), set by the init that KS_DEFINE_MODULE / KS_DEFINE_LINKED_MODULE define: the host
 * hands it over when it registers the module, before any create(). Written once on the main
 * thread, read-only afterwards. */
extern KS_HIDDEN const ks_host_api *ks_host;

/* The body both module macros share: the module's ks_host, its init, and the ks_module named
 * `symbol` (storage words in `storage`) listing the descriptors. */
#define KS_DEFINE_MODULE_AS_(storage, symbol, ...)                                                 \
    KS_HIDDEN const ks_host_api *ks_host;                                                          \
    static int ks_module_init_(const ks_host_api *host, char *err, size_t errlen)                  \
    {                                                                                              \
        (void)err;                                                                                 \
        (void)errlen;                                                                              \
        ks_host = host;                                                                            \
        return 0;                                                                                  \
    }                                                                                              \
    static const ks_plugin_desc *const ks_module_plugins_[] = {__VA_ARGS__};                       \
    storage const ks_module symbol = {                                                             \
        KS_ABI_MAJOR,                                                                              \
        KS_ABI_MINOR,                                                                              \
        (uint32_t)sizeof(ks_module),                                                               \
        (uint32_t)sizeof(void *),                                                                  \
        ks_module_init_,                                                                           \
        (uint32_t)(sizeof(ks_module_plugins_) / sizeof(ks_module_plugins_[0])),                    \
        ks_module_plugins_}

/* Defines the module of a shared object: use once, in one source file, listing the descriptors.
 *   KS_DEFINE_MODULE(&my_filter_plugin, &my_score_plugin);                                    */
#ifdef __cplusplus
#define KS_MODULE_DECLARE_ extern "C" KS_EXPORT const ks_module ks_module_info;
#define KS_MODULE_EXPORT_
#else
#define KS_MODULE_DECLARE_
#define KS_MODULE_EXPORT_ KS_EXPORT
#endif
#define KS_DEFINE_MODULE(...)                                                                      \
    KS_MODULE_DECLARE_                                                                             \
    KS_DEFINE_MODULE_AS_(KS_MODULE_EXPORT_, ks_module_info, __VA_ARGS__)

/* Defines a module that is linked into the program instead of loaded from a shared object (the
 * in-tree plugins, plugins/module.c): the same ks_module under the name `symbol`, which the
 * program hands to kubesched's loader in memory; the loader runs the same checks and init as for
 * a shared object. Use once per program, in one source file; the module must be declared
 * (`extern const ks_module symbol;`) where the program names it. */
#define KS_DEFINE_LINKED_MODULE(symbol, ...) KS_DEFINE_MODULE_AS_(, symbol, __VA_ARGS__)

/* True when the host offers `fn` (a slot name of ks_host_api). */
#define KS_HOST_HAS(fn)                                                                            \
    (ks_host != NULL && ks_host->size >= offsetof(ks_host_api, fn) + sizeof(ks_host->fn) &&        \
     ks_host->fn != NULL)

/* ---------------------------------------------------------------------------------------------
 * Wrappers (what plugins call). Threads and ownership as on the slot above.
 * ------------------------------------------------------------------------------------------- */
static inline void *ks_alloc(size_t n) { return ks_host->alloc(n); }
static inline void ks_free(void *p) { ks_host->free_(p); }
static inline const char *ks_strerror(int err) { return ks_host->strerror(err); }
static inline ks_sym ks_intern(const char *s) { return ks_host->intern(s); }
static inline ks_sym ks_sym_lookup(const char *s) { return ks_host->sym_lookup(s); }
static inline const char *ks_sym_str(ks_sym s) { return ks_host->sym_str(s); }

static inline int ks_log_enabled(int v) { return ks_host->log_enabled(v); }
static inline KS_PRINTF(2, 3) void ks_log(int v, const char *fmt, ...)
{
    va_list ap;
    if (!ks_host->log_enabled(v))
        return;
    va_start(ap, fmt);
    ks_host->logv(v, fmt, ap);
    va_end(ap);
}

static inline KS_PRINTF(2, 3) void ks_error_set(ks_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ks_host->error_setv(err, fmt, ap);
    va_end(ap);
}
static inline void ks_status_reason(ks_status *st, const char *r) { ks_host->status_reason(st, r); }
static inline KS_PRINTF(2, 3) void ks_status_reasonf(ks_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ks_host->status_reasonv(st, fmt, ap);
    va_end(ap);
}

static inline const char *ks_args_json(const ks_args *a) { return ks_host->args_json(a); }
static inline int ks_args_get_string(const ks_args *a, const char *p, const char **o)
{
    return ks_host->args_get_string(a, p, o);
}
static inline int ks_args_get_int(const ks_args *a, const char *p, int64_t *o)
{
    return ks_host->args_get_int(a, p, o);
}
static inline int ks_args_get_double(const ks_args *a, const char *p, double *o)
{
    return ks_host->args_get_double(a, p, o);
}
static inline int ks_args_get_bool(const ks_args *a, const char *p, int *o)
{
    return ks_host->args_get_bool(a, p, o);
}
static inline int ks_args_count(const ks_args *a, const char *p, size_t *o)
{
    return ks_host->args_count(a, p, o);
}
/* A quantity arg ("500m", "2Gi", 3): milli != 0 gives MilliValue(), else Value(). */
static inline int ks_args_get_quantity(const ks_args *a, const char *p, int milli, int64_t *o)
{
    return ks_host->args_get_quantity(a, p, milli, o);
}

static inline ks_sym ks_pod_name(const ks_pod *p) { return ks_host->pod_name(p); }
static inline ks_sym ks_pod_namespace(const ks_pod *p) { return ks_host->pod_namespace(p); }
static inline const char *ks_pod_uid(const ks_pod *p) { return ks_host->pod_uid(p); }
static inline ks_sym ks_pod_scheduler_name(const ks_pod *p)
{
    return ks_host->pod_scheduler_name(p);
}
static inline ks_sym ks_pod_node_name(const ks_pod *p) { return ks_host->pod_node_name(p); }
static inline ks_sym ks_pod_nominated_node_name(const ks_pod *p)
{
    return ks_host->pod_nominated_node_name(p);
}
static inline int32_t ks_pod_priority(const ks_pod *p) { return ks_host->pod_priority(p); }
static inline int ks_pod_is_terminating(const ks_pod *p) { return ks_host->pod_is_terminating(p); }
static inline size_t ks_pod_labels(const ks_pod *p, const ks_label **o)
{
    return ks_host->pod_labels(p, o);
}
static inline ks_sym ks_pod_label(const ks_pod *p, ks_sym k) { return ks_host->pod_label(p, k); }
static inline size_t ks_pod_annotations(const ks_pod *p, const ks_label **o)
{
    return ks_host->pod_annotations(p, o);
}
static inline const ks_resources *ks_pod_requests(const ks_pod *p)
{
    return ks_host->pod_requests(p);
}
static inline const ks_resources *ks_pod_nonzero_requests(const ks_pod *p)
{
    return ks_host->pod_nonzero_requests(p);
}
static inline size_t ks_pod_tolerations(const ks_pod *p, const ks_toleration **o)
{
    return ks_host->pod_tolerations(p, o);
}
static inline size_t ks_pod_node_selector(const ks_pod *p, const ks_label **o)
{
    return ks_host->pod_node_selector(p, o);
}
static inline const ks_node_affinity *ks_pod_node_affinity(const ks_pod *p)
{
    return ks_host->pod_node_affinity(p);
}
static inline size_t ks_pod_images(const ks_pod *p, const ks_sym **o)
{
    return ks_host->pod_images(p, o);
}
static inline size_t ks_pod_host_ports(const ks_pod *p, const ks_host_port **o)
{
    return ks_host->pod_host_ports(p, o);
}
static inline size_t ks_pod_scheduling_gates(const ks_pod *p, const ks_sym **o)
{
    return ks_host->pod_scheduling_gates(p, o);
}
static inline const char *ks_pod_json(const ks_pod *p) { return ks_host->pod_json(p); }

static inline ks_sym ks_node_name(const ks_node *n) { return ks_host->node_name(n); }
static inline size_t ks_node_labels(const ks_node *n, const ks_label **o)
{
    return ks_host->node_labels(n, o);
}
static inline ks_sym ks_node_label(const ks_node *n, ks_sym k) { return ks_host->node_label(n, k); }
static inline size_t ks_node_annotations(const ks_node *n, const ks_label **o)
{
    return ks_host->node_annotations(n, o);
}
static inline int ks_node_unschedulable(const ks_node *n) { return ks_host->node_unschedulable(n); }
static inline size_t ks_node_taints(const ks_node *n, const ks_taint **o)
{
    return ks_host->node_taints(n, o);
}
static inline const ks_resources *ks_node_allocatable(const ks_node *n)
{
    return ks_host->node_allocatable(n);
}
static inline size_t ks_node_images(const ks_node *n, const ks_node_image **o)
{
    return ks_host->node_images(n, o);
}
static inline const char *ks_node_json(const ks_node *n) { return ks_host->node_json(n); }

static inline const ks_node *ks_node_info_node(const ks_node_info *ni)
{
    return ks_host->node_info_node(ni);
}
static inline size_t ks_node_info_pod_count(const ks_node_info *ni)
{
    return ks_host->node_info_pod_count(ni);
}
static inline const ks_pod *ks_node_info_pod_at(const ks_node_info *ni, size_t i)
{
    return ks_host->node_info_pod_at(ni, i);
}
static inline const ks_resources *ks_node_info_requested(const ks_node_info *ni)
{
    return ks_host->node_info_requested(ni);
}
static inline const ks_resources *ks_node_info_nonzero_requested(const ks_node_info *ni)
{
    return ks_host->node_info_nonzero_requested(ni);
}

static inline const ks_snapshot *ks_cycle_snapshot(ks_cycle *c)
{
    return ks_host->cycle_snapshot(c);
}
static inline size_t ks_snapshot_node_count(const ks_snapshot *s)
{
    return ks_host->snapshot_node_count(s);
}
static inline const ks_node_info *ks_snapshot_node_at(const ks_snapshot *s, size_t i)
{
    return ks_host->snapshot_node_at(s, i);
}
static inline const ks_node_info *ks_snapshot_node(const ks_snapshot *s, ks_sym name)
{
    return ks_host->snapshot_node(s, name);
}

static inline int ks_cycle_write(ks_cycle *c, const void *key, void *data, const ks_state_ops *ops)
{
    return ks_host->cycle_write(c, key, data, ops);
}
static inline void *ks_cycle_read(ks_cycle *c, const void *key)
{
    return ks_host->cycle_read(c, key);
}
static inline void *ks_cycle_alloc(ks_cycle *c, size_t n) { return ks_host->cycle_alloc(c, n); }

static inline const ks_pod *ks_queued_pod_pod(const ks_queued_pod *q)
{
    return ks_host->queued_pod_pod(q);
}
static inline int64_t ks_queued_pod_timestamp_ns(const ks_queued_pod *q)
{
    return ks_host->queued_pod_timestamp_ns(q);
}
static inline int32_t ks_queued_pod_attempts(const ks_queued_pod *q)
{
    return ks_host->queued_pod_attempts(q);
}

static inline void ks_prefilter_result_add_node(ks_prefilter_result *r, ks_sym n)
{
    ks_host->prefilter_result_add_node(r, n);
}
static inline ks_code ks_filter_outcome_code(const ks_filter_outcome *o, const ks_node_info *n)
{
    return ks_host->filter_outcome_code(o, n);
}
static inline void ks_post_filter_nominate(ks_post_filter_result *r, ks_sym n)
{
    ks_host->post_filter_nominate(r, n);
}

static inline int ks_permit_allow(const char *uid, const char *plugin)
{
    return ks_host->permit_allow(uid, plugin);
}
static inline int ks_permit_reject(const char *uid, const char *plugin, const char *msg)
{
    return ks_host->permit_reject(uid, plugin, msg);
}
static inline ks_code ks_bind_pod(ks_cycle *c, const ks_pod *p, ks_sym node, ks_status *st)
{
    return ks_host->bind_pod(c, p, node, st);
}

/* ABI 1.1 wrappers: check KS_HOST_HAS(slot) first when the plugin may run on an older host. */
static inline const ks_pod_affinity *ks_pod_affinity_of(const ks_pod *p)
{
    return ks_host->pod_affinity(p);
}
static inline size_t ks_pod_topology_spread_constraints(const ks_pod *p,
                                                        const ks_topology_spread_constraint **o)
{
    return ks_host->pod_topology_spread_constraints(p, o);
}
static inline size_t ks_node_info_host_ports(const ks_node_info *ni, const ks_host_port **o)
{
    return ks_host->node_info_host_ports(ni, o);
}
static inline size_t ks_node_info_pods_with_affinity(const ks_node_info *ni,
                                                     const ks_pod *const **o)
{
    return ks_host->node_info_pods_with_affinity(ni, o);
}
static inline size_t ks_node_info_pods_with_required_anti_affinity(const ks_node_info *ni,
                                                                   const ks_pod *const **o)
{
    return ks_host->node_info_pods_with_required_anti_affinity(ni, o);
}
static inline size_t ks_snapshot_image_node_count(const ks_snapshot *s, ks_sym image)
{
    return ks_host->snapshot_image_node_count(s, image);
}
static inline int ks_namespace_labels(ks_cycle *c, ks_sym ns, const ks_label **o, size_t *n)
{
    return ks_host->namespace_labels(c, ns, o, n);
}
static inline size_t ks_pod_owner_selectors(ks_cycle *c, const ks_pod *p,
                                            const ks_label_selector **o)
{
    return ks_host->pod_owner_selectors(c, p, o);
}

/* ABI 1.2 wrappers (preemption). */
static inline int ks_pod_preemption_never(const ks_pod *p)
{
    return ks_host->pod_preemption_never(p);
}
static inline int64_t ks_pod_start_time_ns(const ks_pod *p)
{
    return ks_host->pod_start_time_ns(p);
}
static inline ks_node_info *ks_node_info_clone(ks_cycle *c, const ks_node_info *ni)
{
    return ks_host->node_info_clone(c, ni);
}
static inline int ks_node_info_remove_pod(ks_node_info *ni, const ks_pod *p)
{
    return ks_host->node_info_remove_pod(ni, p);
}
static inline int ks_node_info_add_pod(ks_node_info *ni, const ks_pod *p)
{
    return ks_host->node_info_add_pod(ni, p);
}
static inline ks_cycle *ks_cycle_clone(ks_cycle *c) { return ks_host->cycle_clone(c); }
static inline ks_code ks_run_filters(ks_cycle *state, const ks_pod *p, const ks_node_info *ni,
                                     ks_status *st)
{
    return ks_host->run_filters(state, p, ni, st);
}
static inline ks_code ks_run_prefilter_add_pod(ks_cycle *state, const ks_pod *p, const ks_pod *o,
                                               const ks_node_info *ni, ks_status *st)
{
    return ks_host->run_prefilter_add_pod(state, p, o, ni, st);
}
static inline ks_code ks_run_prefilter_remove_pod(ks_cycle *state, const ks_pod *p, const ks_pod *o,
                                                  const ks_node_info *ni, ks_status *st)
{
    return ks_host->run_prefilter_remove_pod(state, p, o, ni, st);
}
static inline size_t ks_pdbs(ks_cycle *c, const ks_pdb_info **o) { return ks_host->pdbs(c, o); }
static inline void ks_post_filter_add_victim(ks_post_filter_result *r, const ks_pod *v)
{
    ks_host->post_filter_add_victim(r, v);
}
static inline int64_t ks_rand_below(ks_cycle *c, int64_t n) { return ks_host->rand_below(c, n); }
static inline size_t ks_nominated_pods(ks_cycle *c, ks_sym node, const ks_pod *const **o)
{
    return ks_host->nominated_pods(c, node, o);
}
static inline size_t ks_node_info_pods_in_namespace(const ks_node_info *ni, ks_sym ns,
                                                    const ks_pod *const **o)
{
    return ks_host->node_info_pods_in_namespace(ni, ns, o);
}
static inline uint64_t ks_snapshot_version(const ks_snapshot *s, uint64_t *seq)
{
    return ks_host->snapshot_version(s, seq);
}
static inline size_t ks_snapshot_changed_nodes(const ks_snapshot *s, const uint32_t **idx)
{
    return ks_host->snapshot_changed_nodes(s, idx);
}
static inline ks_status *ks_status_new(ks_cycle *c) { return ks_host->status_new(c); }
static inline ks_code ks_status_code(const ks_status *st) { return ks_host->status_code(st); }
static inline size_t ks_status_reason_count(const ks_status *st)
{
    return ks_host->status_reason_count(st);
}
static inline const char *ks_status_reason_at(const ks_status *st, size_t i)
{
    return ks_host->status_reason_at(st, i);
}
static inline size_t ks_snapshot_nodes_with_affinity_pods(const ks_snapshot *s,
                                                          int required_anti_only,
                                                          const ks_node_info *const **o)
{
    return ks_host->snapshot_nodes_with_affinity_pods(s, required_anti_only, o);
}

/* Pure helpers on plain data (no host call). */

/* The body of an events_to_register callback with a fixed list: copies the first `cap` of the n
 * events into out (borrowed: the caller's array) and returns n, as the slot's contract asks. Any
 * thread; pure.
 *   static const ks_cluster_event ev[] = {{KS_RES_NODE, KS_ACT_ADD}};
 *   return ks_events_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);                            */
static inline size_t ks_events_copy(const ks_cluster_event *events, size_t n, ks_cluster_event *out,
                                    size_t cap)
{
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = events[i];
    return n;
}
/* The same for events_with_hints:
 *   static const ks_cluster_event_hint ev[] = {{{KS_RES_NODE, KS_ACT_ADD}, my_node_hint}};
 *   return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);                     */
static inline size_t ks_event_hints_copy(const ks_cluster_event_hint *events, size_t n,
                                         ks_cluster_event_hint *out, size_t cap)
{
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = events[i];
    return n;
}
/* ABI 1.4: adds a fragment to a pod signature (see ks_host_api.sign_add). Only called from a
 * sign() slot, which only a 1.4 host calls. */
static inline void ks_sign_add(ks_signature *sig, const char *key, const char *value_json)
{
    ks_host->sign_add(sig, key, value_json);
}
/* ABI 1.4: node.status.declaredFeatures, the pod's KS_POD_SPEC_* facts, its image volumes, an
 * image's cluster-wide size. */
static inline size_t ks_node_declared_features(const ks_node *n, const ks_sym **o)
{
    return ks_host->node_declared_features(n, o);
}
static inline uint32_t ks_pod_spec_flags(const ks_pod *p) { return ks_host->pod_spec_flags(p); }
static inline size_t ks_pod_image_volumes(const ks_pod *p, const ks_sym **o)
{
    return ks_host->pod_image_volumes(p, o);
}
static inline int64_t ks_snapshot_image_size(const ks_snapshot *s, ks_sym image)
{
    return ks_host->snapshot_image_size(s, image);
}
/* ABI 1.5 wrappers (volumes): check KS_HOST_HAS(pod_volumes) first on a host that may be older. */
static inline size_t ks_pod_volumes(const ks_pod *p, const ks_pod_volume **o)
{
    return ks_host->pod_volumes(p, o);
}
static inline const ks_pvc *ks_cycle_pvc(ks_cycle *c, ks_sym ns, ks_sym name)
{
    return ks_host->cycle_pvc(c, ns, name);
}
static inline const ks_pv *ks_cycle_pv(ks_cycle *c, ks_sym name)
{
    return ks_host->cycle_pv(c, name);
}
static inline const ks_storage_class *ks_cycle_storage_class(ks_cycle *c, ks_sym name)
{
    return ks_host->cycle_storage_class(c, name);
}
static inline const ks_csi_node *ks_cycle_csi_node(ks_cycle *c, ks_sym node)
{
    return ks_host->cycle_csi_node(c, node);
}
static inline const ks_csi_driver *ks_cycle_csi_driver(ks_cycle *c, ks_sym name)
{
    return ks_host->cycle_csi_driver(c, name);
}
static inline size_t ks_cycle_pvs(ks_cycle *c, ks_sym storage_class, const ks_pv *const **o)
{
    return ks_host->cycle_pvs(c, storage_class, o);
}
static inline size_t ks_cycle_csi_storage_capacities(ks_cycle *c,
                                                     const ks_csi_storage_capacity *const **o)
{
    return ks_host->cycle_csi_storage_capacities(c, o);
}
static inline int ks_snapshot_pvc_in_use(const ks_snapshot *s, ks_sym ns, ks_sym name)
{
    return ks_host->snapshot_pvc_in_use(s, ns, name);
}
static inline const ks_pv_view *ks_pv_view_of(const ks_pv *pv) { return ks_host->pv_view(pv); }
static inline const ks_pvc_view *ks_pvc_view_of(const ks_pvc *pvc)
{
    return ks_host->pvc_view(pvc);
}
static inline const ks_storage_class_view *ks_storage_class_view_of(const ks_storage_class *sc)
{
    return ks_host->storage_class_view(sc);
}
static inline const ks_csi_node_view *ks_csi_node_view_of(const ks_csi_node *cn)
{
    return ks_host->csi_node_view(cn);
}
static inline const ks_csi_driver_view *ks_csi_driver_view_of(const ks_csi_driver *d)
{
    return ks_host->csi_driver_view(d);
}
static inline const ks_csi_storage_capacity_view *
ks_csi_storage_capacity_view_of(const ks_csi_storage_capacity *c)
{
    return ks_host->csi_storage_capacity_view(c);
}
/* ABI 1.6 wrappers (VolumeAttachments): check KS_HOST_HAS(cycle_volume_attachments) first on a
 * host that may be older. */
static inline size_t ks_cycle_volume_attachments(ks_cycle *c, ks_sym node,
                                                 const ks_volume_attachment *const **o)
{
    return ks_host->cycle_volume_attachments(c, node, o);
}
static inline const ks_volume_attachment_view *
ks_volume_attachment_view_of(const ks_volume_attachment *va)
{
    return ks_host->volume_attachment_view(va);
}
/* ABI 1.7 wrappers (PreBind writes): check KS_HOST_HAS(storage_patch) first on a host that may
 * be older. */
static inline ks_code ks_storage_patch(ks_cycle *c, ks_storage_kind kind, ks_sym ns, ks_sym name,
                                       const char *merge_patch, char *rv, ks_status *st)
{
    return ks_host->storage_patch(c, kind, ns, name, merge_patch, rv, st);
}
static inline int ks_binding_sleep(ks_cycle *c, int64_t ns)
{
    return ks_host->binding_sleep(c, ns);
}
static inline uint32_t ks_source_flags(ks_cycle *c) { return ks_host->source_flags(c); }
static inline ks_counter *ks_counter_new(const char *name, const char *help, const char *label)
{
    return ks_host->counter_new(name, help, label);
}
static inline void ks_counter_inc(ks_counter *c, const char *value)
{
    ks_host->counter_inc(c, value);
}
/* upstream storage.APIObjectVersioner.CompareResourceVersion: resource versions as decimal
 * uint64s, -1, 0 or 1. An empty one counts as 0, as upstream's; so does one that is not such a
 * number (upstream panics there: the API server never makes one). Pure; no host call. */
static inline int ks_resource_version_cmp(const char *a, const char *b)
{
    uint64_t x = 0, y = 0;
    for (const char *p = a ? a : ""; *p; p++) {
        if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10) {
            x = 0;
            break;
        }
        x = x * 10 + (uint64_t)(*p - '0');
    }
    for (const char *p = b ? b : ""; *p; p++) {
        if (*p < '0' || *p > '9' || y > (UINT64_MAX - 9) / 10) {
            y = 0;
            break;
        }
        y = y * 10 + (uint64_t)(*p - '0');
    }
    return x < y ? -1 : x > y;
}
/* upstream Quantity.Cmp for two storage quantities given as (Value(), MilliValue()): -1, 0, 1.
 * Exact while both milli values are below INT64_MAX (under about 9 PB), else by whole bytes.
 * Pure; no host call. */
static inline int ks_storage_cmp(int64_t a, int64_t a_milli, int64_t b, int64_t b_milli)
{
    if (a_milli != INT64_MAX && b_milli != INT64_MAX)
        return a_milli < b_milli ? -1 : a_milli > b_milli;
    return a < b ? -1 : a > b;
}

static inline int64_t ks_resources_scalar(const ks_resources *r, ks_sym name)
{
    uint32_t lo = 0, hi = r->nscalar;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->scalar[mid].name == name)
            return r->scalar[mid].value;
        if (r->scalar[mid].name < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* --- ABI 1.8 --- (test with KS_HOST_HAS(waiting_pods_each) before calling on an older host) */
static inline size_t ks_waiting_pods_each(ks_cycle *cycle, ks_waiting_pod_fn fn, void *ctx)
{
    return ks_host->waiting_pods_each(cycle, fn, ctx);
}
static inline void ks_activate_pod(ks_cycle *cycle, const ks_pod *pod)
{
    ks_host->activate_pod(cycle, pod);
}
static inline size_t ks_pods_each(ks_cycle *cycle, ks_sym ns, ks_sym label_key, ks_sym label_value,
                                  ks_pod_visit_fn fn, void *ctx)
{
    return ks_host->pods_each(cycle, ns, label_key, label_value, fn, ctx);
}
static inline int64_t ks_queued_pod_initial_attempt_unix_ns(const ks_queued_pod *qp)
{
    return ks_host->queued_pod_initial_attempt_unix_ns(qp);
}
static inline ks_resource *ks_resource_watch(const char *api_version, const char *kind,
                                             const char *plural, ks_error *err)
{
    return ks_host->resource_watch(api_version, kind, plural, err);
}
static inline ks_event_resource ks_resource_event(const ks_resource *res)
{
    return ks_host->resource_event(res);
}
static inline const ks_object *ks_resource_get(const ks_resource *res, ks_sym ns, ks_sym name)
{
    return ks_host->resource_get(res, ns, name);
}
static inline void ks_object_release(const ks_object *obj) { ks_host->object_release(obj); }
static inline int ks_object_get_string(const ks_object *obj, const char *path, const char **out)
{
    return ks_host->object_get_string(obj, path, out);
}
static inline int ks_object_get_int(const ks_object *obj, const char *path, int64_t *out)
{
    return ks_host->object_get_int(obj, path, out);
}
static inline int ks_object_get_quantity(const ks_object *obj, const char *path, int milli,
                                         int64_t *out)
{
    return ks_host->object_get_quantity(obj, path, milli, out);
}
static inline int ks_object_get_time(const ks_object *obj, const char *path, int64_t *unix_ns)
{
    return ks_host->object_get_time(obj, path, unix_ns);
}
static inline int ks_object_count(const ks_object *obj, const char *path, size_t *out)
{
    return ks_host->object_count(obj, path, out);
}
static inline int ks_object_key_at(const ks_object *obj, const char *path, size_t i,
                                   const char **out)
{
    return ks_host->object_key_at(obj, path, i, out);
}
static inline const char *ks_object_json(const ks_object *obj) { return ks_host->object_json(obj); }
static inline int64_t ks_clock_now_ns(void) { return ks_host->clock_now_ns(); }
static inline int ks_object_patch(const ks_resource *res, ks_sym ns, ks_sym name, int status,
                                  const char *merge_patch)
{
    return ks_host->object_patch(res, ns, name, status, merge_patch);
}
static inline int ks_pod_event(ks_cycle *cycle, const ks_pod *pod, const char *type,
                               const char *reason, const char *note)
{
    return ks_host->pod_event(cycle, pod, type, reason, note);
}

/* ABI 1.9 wrappers (gang scheduling): check KS_HOST_HAS(pod_group_get) first on a host that may
 * be older. */
static inline ks_sym ks_pod_scheduling_group(const ks_pod *p)
{
    return ks_host->pod_scheduling_group(p);
}
static inline const ks_pod_group *ks_pod_group_get(ks_sym ns, ks_sym name)
{
    return ks_host->pod_group_get(ns, name);
}
static inline void ks_pod_group_release(const ks_pod_group *pg) { ks_host->pod_group_release(pg); }
static inline const ks_pod_group_view *ks_pod_group_view_of(const ks_pod_group *pg)
{
    return ks_host->pod_group_view(pg);
}
static inline size_t ks_pod_group_members_each(ks_sym ns, ks_sym name, ks_pod_group_member_fn fn,
                                               void *ctx)
{
    return ks_host->pod_group_members_each(ns, name, fn, ctx);
}
/* ABI 1.10: check KS_HOST_HAS(pod_group_member_counts) first on a host that may be older. */
static inline void ks_pod_group_member_counts(ks_sym ns, ks_sym name, size_t *all,
                                              size_t *scheduled)
{
    ks_host->pod_group_member_counts(ns, name, all, scheduled);
}

/* ABI 1.10 wrappers (dynamic resource allocation): check KS_HOST_HAS(dra_allocate) first on a
 * host that may be older. */
static inline size_t ks_pod_resource_claims(const ks_pod *p, const ks_pod_resource_claim **o)
{
    return ks_host->pod_resource_claims(p, o);
}
static inline const ks_resource_claim *ks_resource_claim_get(ks_cycle *c, ks_sym ns,
                                                             const char *name)
{
    return ks_host->resource_claim_get(c, ns, name);
}
static inline void ks_resource_claim_release(const ks_resource_claim *rc)
{
    ks_host->resource_claim_release(rc);
}
static inline const ks_resource_claim_view *ks_resource_claim_view_of(const ks_resource_claim *rc)
{
    return ks_host->resource_claim_view(rc);
}
static inline int ks_device_class_exists(ks_cycle *c, const char *name)
{
    return ks_host->device_class_exists(c, name);
}
static inline int ks_dra_claim_pending(ks_cycle *c, const char *uid)
{
    return ks_host->dra_claim_pending(c, uid);
}
static inline int ks_dra_signal_pending(ks_cycle *c, const ks_resource_claim *rc,
                                        const ks_dra_allocation *a, size_t i)
{
    return ks_host->dra_signal_pending(c, rc, a, i);
}
static inline int ks_dra_remove_pending(ks_cycle *c, const char *uid)
{
    return ks_host->dra_remove_pending(c, uid);
}
static inline ks_dra_allocator *ks_dra_allocator_new(ks_cycle *c, char *err, size_t errlen)
{
    return ks_host->dra_allocator_new(c, err, errlen);
}
static inline int ks_dra_allocate_claims(ks_dra_allocator *a, const ks_node *node,
                                         const ks_resource_claim *const *claims, size_t n,
                                         int64_t deadline_ns, ks_dra_allocation **out, char *err,
                                         size_t errlen)
{
    return ks_host->dra_allocate(a, node, claims, n, deadline_ns, out, err, errlen);
}
static inline void ks_dra_allocation_free(ks_dra_allocation *a) { ks_host->dra_allocation_free(a); }
static inline size_t ks_dra_allocation_devices(const ks_dra_allocation *a, size_t i,
                                               const ks_dra_device_result **o)
{
    return ks_host->dra_allocation_devices(a, i, o);
}
static inline ks_code ks_dra_claim_bind(ks_cycle *c, const ks_pod *pod, const ks_resource_claim *rc,
                                        const ks_dra_allocation *a, size_t i, ks_status *st)
{
    return ks_host->dra_claim_bind(c, pod, rc, a, i, st);
}
static inline ks_code ks_dra_claim_deallocate(ks_cycle *c, const ks_resource_claim *rc,
                                              ks_status *st)
{
    return ks_host->dra_claim_deallocate(c, rc, st);
}
static inline void ks_dra_claim_unreserve(ks_cycle *c, const ks_pod *pod,
                                          const ks_resource_claim *rc)
{
    ks_host->dra_claim_unreserve(c, pod, rc);
}

/* ABI 1.11 wrappers (extended resources backed by DRA): check KS_HOST_HAS(pod_containers) first
 * on a host that may be older. */
static inline size_t ks_pod_containers(const ks_pod *p, const ks_pod_container **o)
{
    return ks_host->pod_containers(p, o);
}
static inline ks_sym ks_dra_extended_resource_class(ks_cycle *c, ks_sym resource)
{
    return ks_host->dra_extended_resource_class(c, resource);
}
static inline const ks_resource_claim *ks_dra_extended_claim_find(ks_cycle *c, const ks_pod *pod)
{
    return ks_host->dra_extended_claim_find(c, pod);
}
static inline const ks_resource_claim *ks_dra_extended_claim_new(ks_cycle *c, const ks_pod *pod,
                                                                 const ks_dra_extended_request *r,
                                                                 size_t n)
{
    return ks_host->dra_extended_claim_new(c, pod, r, n);
}
static inline ks_code ks_dra_extended_claim_create(ks_cycle *c, const ks_pod *pod,
                                                   const ks_resource_claim *rc,
                                                   const ks_resource_claim **created, ks_status *st)
{
    return ks_host->dra_extended_claim_create(c, pod, rc, created, st);
}
static inline ks_code ks_dra_claim_delete(ks_cycle *c, const ks_resource_claim *rc, ks_status *st)
{
    return ks_host->dra_claim_delete(c, rc, st);
}
static inline ks_code ks_pod_extended_claim_status(ks_cycle *c, const ks_pod *pod,
                                                   const char *claim_name,
                                                   const ks_extended_request_mapping *m, size_t n,
                                                   ks_status *st)
{
    return ks_host->pod_extended_claim_status(c, pod, claim_name, m, n, st);
}

static inline int ks_dra_class_device_counts(ks_dra_allocator *a, const ks_node *node,
                                             ks_sym class_name, int64_t *capacity,
                                             int64_t *allocated)
{
    return ks_host->dra_class_device_counts(a, node, class_name, capacity, allocated);
}

/* Value of key in a label array sorted by key id (as the host hands them out), or KS_SYM_ABSENT. */
static inline ks_sym ks_labels_get(const ks_label *labels, size_t n, ks_sym key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (labels[mid].key == key)
            return labels[mid].value;
        if (labels[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return KS_SYM_ABSENT;
}

/* metav1.LabelSelectorAsSelector(sel).Matches(labels): labels sorted by key id. */
static inline int ks_label_selector_matches(const ks_label_selector *sel, const ks_label *labels,
                                            size_t n)
{
    if (!sel->present)
        return 0;
    for (uint32_t i = 0; i < sel->nmatch_labels; i++)
        if (ks_labels_get(labels, n, sel->match_labels[i].key) != sel->match_labels[i].value)
            return 0;
    for (uint32_t i = 0; i < sel->nexprs; i++) {
        const ks_selector_req *r = &sel->exprs[i];
        ks_sym v = ks_labels_get(labels, n, r->key);
        int in = 0;
        for (uint32_t k = 0; k < r->nvalues && v != KS_SYM_ABSENT; k++)
            in |= r->values[k] == v;
        switch (r->op) {
        case KS_OP_IN:
            if (!in)
                return 0;
            break;
        case KS_OP_NOT_IN:
            if (in)
                return 0;
            break;
        case KS_OP_EXISTS:
            if (v == KS_SYM_ABSENT)
                return 0;
            break;
        case KS_OP_DOES_NOT_EXIST:
            if (v != KS_SYM_ABSENT)
                return 0;
            break;
        default:
            return 0; /* Gt/Lt are not label-selector operators */
        }
    }
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* KUBESCHED_PLUGIN_H */
