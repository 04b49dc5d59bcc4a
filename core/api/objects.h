/*
 * Pods and Nodes as compact structs, converted once from their JSON (cJSON) form when they arrive.
 *
 * Everything the scheduler and the SDK accessors read is here pre-parsed: names and labels
 * interned, quantities as integers (upstream PodRequests, with and without the 100m/200Mi
 * defaults), taints, tolerations, node affinity. The original object is kept as compact JSON text
 * for plugins that need a field the SDK has no accessor for.
 *
 * Ownership: a ks_pod / ks_node owns all its arrays (one malloc'd block per array); free with
 * ks__pod_free / ks__node_free. Objects are immutable after parsing, so any thread may read them;
 * an update replaces the object (refcount, see ks__pod_ref). The symbols an object's fields name
 * are counted references that the object holds until its last reference goes (intern.h): they
 * stay valid for as long as the object is held.
 */
#ifndef KS_CORE_OBJECTS_H
#define KS_CORE_OBJECTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/intern.h"
#include "util/mempool.h"

/* A resource list that owns its scalar array. `pub` is what the SDK hands out. */
__extension__ typedef __int128 ks__i128;
typedef struct ks__resources {
    ks_resources pub;
    ks_scalar *scalar; /* == pub.scalar; owned; sorted by name id */
    /* The exact sums behind pub's values, which ks__resources_add/_sub saturate at INT64_MAX
     * (INT64_MIN): a node's requested that a huge pod pushed past the limit comes back exact
     * when that pod is removed. sum_scalar[i] belongs to scalar[i]; NULL while nscalar == 0.
     * A zeroed ks__resources is a valid empty sum. */
    ks__i128 sum_cpu, sum_memory, sum_eph;
    ks__i128 *sum_scalar;
} ks__resources;

struct ks_pod {
    /* First cache line: what the per-cycle passes over every pod of the cluster read
     * (InterPodAffinity, PodTopologySpread): keep these together. */
    ks_sym ns;
    int32_t terminating; /* metadata.deletionTimestamp set */
    size_t nlabels;
    const ks_label *labels;              /* sorted by key id; shared (shared.h), counted */
    const ks_pod_affinity *pod_affinity; /* NULL when neither podAffinity nor podAntiAffinity;
                                          * shared between identical specs (shared.h) */
    int32_t priority;
    atomic_int refs;
    ks_sym name, scheduler_name, node_name, nominated_node_name;
    char *uid;              /* owned */
    char *key;              /* "namespace/name", owned */
    char *resource_version; /* owned, may be "" */
    int preemption_never;   /* spec.preemptionPolicy: Never */
    int64_t start_time_ns;  /* status.startTime (Unix ns), 0 when unset */
    int64_t creation_ns;    /* metadata.creationTimestamp, 0 if absent */
    ks_sym phase;           /* status.phase, KS_SYM_EMPTY if absent */

    size_t nannotations;
    ks_label *annotations; /* sorted by key id */
    size_t nselector;
    ks_label *node_selector; /* spec.nodeSelector, sorted by key id */
    size_t ntolerations;
    ks_toleration *tolerations;
    size_t nimages;
    ks_sym *images; /* init containers first, then containers */
    size_t nports;
    ks_host_port *host_ports;
    size_t ngates;
    ks_sym *gates;
    /* spec.schedulingGroup.podGroupName (upstream's gang scheduling, GenericWorkload), or
     * KS_SYM_ABSENT when the pod names no group. */
    ks_sym scheduling_group;
    uint32_t spec_flags; /* KS_POD_SPEC_* (NodeDeclaredFeatures' inference reads them) */
    uint32_t uses;       /* KS__POD_USES_*: what only a particular plugin can place correctly */
    size_t nimage_volumes;
    ks_sym *image_volumes; /* spec.volumes[].image.reference, spec order; "" when unset */
    size_t nvolumes;
    ks_pod_volume *volumes; /* spec.volumes, pre-parsed (volume_objects.h); in volume_pool */
    ks_mempool volume_pool; /* the volumes' arrays and strings */
    /* spec.resourceClaims with status.resourceClaimStatuses (DynamicResources); in volume_pool */
    size_t nresource_claims;
    ks_pod_resource_claim *resource_claims;
    /* The containers with their scalar requests (init containers first), only for a pod that
     * requests an extended or deviceclass.resource.kubernetes.io/ resource (DynamicResources'
     * claim for extended resources); in volume_pool */
    size_t ncontainers;
    ks_pod_container *containers;

    ks_node_affinity *node_affinity; /* NULL when spec.affinity.nodeAffinity is absent */
    void *affinity_storage;          /* owned arrays behind node_affinity */
    size_t nspread;
    const ks_topology_spread_constraint *spread; /* shared (shared.h) */

    ks__resources requests; /* upstream PodRequests (status resources of a resized pod) */
    /* The containers' requests with 100m / 200Mi for those lacking cpu/memory, plus overhead, as
     * NodeResourcesFit's scorer sees the pod (upstream v1.37: no pod-level requests, no status
     * resources there). */
    ks__resources nonzero_requests;
    /* What the pod adds to its node's NonZeroRequested (PodInfo.CalculateResource): as
     * requests with the container defaults, except that with pod-level requests only a resource
     * the whole pod does not list gets them. */
    ks__resources node_nonzero_requests;

    char *json; /* compact JSON text of the whole object, owned */
    /* Set on an assumed copy (ks__pod_with_node): every array above is borrowed from base, which
     * the copy keeps a reference to; json still shows the original spec.nodeName. */
    ks_pod *base;
    int labels_owned; /* labels is still this pod's own array (only while parsing) */
    /* What this pod holds, released when it is freed: its counted symbols (intern.h) and its
     * shared parts (shared.h). An assumed copy holds only its node and nominated node names. */
    ks__symrefs syms;
    struct ks__shared *labels_ref, *affinity_ref, *spread_ref;
};

struct ks_node {
    atomic_int refs;
    ks_sym name;
    char *resource_version;
    int unschedulable;
    size_t nlabels;
    ks_label *labels; /* sorted by key id */
    size_t nannotations;
    ks_label *annotations; /* sorted by key id */
    size_t ntaints;
    ks_taint *taints; /* spec order */
    size_t nimages;
    ks_node_image *images;
    void *image_names; /* owned storage behind images[].names */
    ks__resources allocatable;
    size_t ndeclared_features;
    ks_sym *declared_features; /* status.declaredFeatures, as listed */
    char *json;
    ks__symrefs syms; /* the counted symbols it holds, released when it is freed (intern.h) */
};

/* What a pod uses that only a particular upstream plugin knows how to place (ks_pod.uses): the
 * scheduling cycle refuses such a pod when its profile lacks that plugin rather than place it as
 * if the claim were not there (core/sched/schedule_one.c). */
enum {
    KS__POD_USES_RESOURCE_CLAIMS = 1u << 0, /* spec.resourceClaims: DynamicResources */
    KS__POD_USES_VOLUME_CLAIMS = 1u << 1    /* a persistentVolumeClaim or ephemeral volume:
                                               VolumeBinding */
};

/* Parses a Pod (apiVersion v1, kind Pod) from its JSON object. On error returns KS_EPARSE (or
 * KS_ENOMEM) and writes a message naming the field path to err, e.g.
 * `spec.containers[0].resources.requests.cpu: invalid quantity "abc"`.
 *
 * Two modes; both refuse what cannot be read (a wrong type, a bad quantity, an operator or effect
 * with no meaning, a weight, maxSkew, minDomains, hostPort or priority that is no int32: converting
 * it would be undefined or would read another value).
 *
 * ks__pod_from_json / ks__node_from_json, lenient: for objects the API server stored (live mode,
 * core/live/apisource.c; the tests' harness). The API server validated them when they were
 * written, and upstream kube-scheduler never validates them again: a stored object that a
 * stricter or older rule of ours refused would be dropped, and its effect with it (an assigned
 * pod's usage no longer counted), changing decisions. Such objects get upstream's defensive
 * reading instead (a weight 0 adds nothing, no nodeSelectorTerms match no node, ...).
 *
 * ks__pod_from_json_checked / ks__node_from_json_checked: for objects read from cluster files
 * (`kubesched simulate`), which no API server has seen. They also apply the API server's value
 * rules (ValidatePod / ValidateNode, the fields kubesched reads) and refuse what it would refuse,
 * with its message (field.ErrorList wording) and kubesched's field path: a manifest that could
 * never exist in a cluster is reported, not simulated. On an object both accept, both give the
 * same result. */
int ks__pod_from_json(const cJSON *obj, ks_pod **out, char *err, size_t errlen);
int ks__node_from_json(const cJSON *obj, ks_node **out, char *err, size_t errlen);
int ks__pod_from_json_checked(const cJSON *obj, ks_pod **out, char *err, size_t errlen);
int ks__node_from_json_checked(const cJSON *obj, ks_node **out, char *err, size_t errlen);

/* A copy of pod with status.nominatedNodeName set to node (KS_SYM_EMPTY clears it). refs = 1. */
ks_pod *ks__pod_with_nominated(const ks_pod *pod, ks_sym node);
/* RFC 3339 time ("2024-05-01T10:00:00Z", fractions and offsets allowed) to Unix ns; 0 if bad. */
int64_t ks__parse_time_ns(const char *s);

/* Reference counting: the cache, the queue and a running cycle may hold the same object. */
ks_pod *ks__pod_ref(ks_pod *pod);
void ks__pod_unref(ks_pod *pod); /* frees at zero; NULL is a no-op */
ks_node *ks__node_ref(ks_node *node);
void ks__node_unref(ks_node *node);

/* A copy of pod with spec.nodeName set to node (what the scheduler "assumes"). refs = 1. */
ks_pod *ks__pod_with_node(const ks_pod *pod, ks_sym node);

/* upstream ValidateNodeSelectorRequirement for one matchExpressions entry (In and NotIn need
 * values, Exists and DoesNotExist take none, Gt and Lt exactly one, the key is not empty): NULL
 * when valid, else the message to append to the entry's field path (".values: Required value:
 * ..."). Shared by every parser of node selectors (pods, PersistentVolumes). Static strings. */
const char *ks__node_req_problem(ks_selector_op op, ks_sym key, int nvalues);

/* Lookup in a label array sorted by key id; KS_SYM_ABSENT when missing. */
ks_sym ks__labels_get(const ks_label *labels, size_t n, ks_sym key);

/* Resource helpers on owned lists. */
/* dst += src and dst -= src, saturating; dst starts zeroed or from _copy / _dup. */
void ks__resources_add(ks__resources *dst, const ks_resources *src); /* dst += src */
void ks__resources_sub(ks__resources *dst, const ks_resources *src); /* dst -= src */
int ks__resources_copy(ks__resources *dst, const ks_resources *src); /* dst = src (alloc) */
int ks__resources_dup(ks__resources *dst, const ks__resources *src); /* same, exact sums too */
void ks__resources_free(ks__resources *r);

/* Well-known symbols, interned at start-up (ks__objects_init). */
extern ks_sym ks__sym_cpu, ks__sym_memory, ks__sym_ephemeral_storage, ks__sym_pods;
void ks__objects_init(void);

#endif
