/*
 * The Dynamic Resource Allocation kinds (resource.k8s.io/v1) as compact structs converted once
 * from their JSON when they arrive: ResourceSlice, DeviceClass, ResourceClaim, DeviceTaintRule.
 * The DynamicResources plugin and its allocator read these; nothing here allocates.
 *
 * The machinery is that of the storage kinds (volume_objects.h): each object is a view struct
 * behind a common header (a reference count, the key the store files it under, one mempool
 * holding every array and string, the counted symbols it holds). Objects are immutable after
 * parsing, so any thread may read them; an update replaces the object, and whoever holds a
 * reference keeps the old one valid until it lets go.
 *
 * Field names follow k8s.io/api/resource/v1 (v0.37.2). Qualified names ("gpu.example.com/model"
 * or "model") are kept as written plus split into domain ("" when unqualified: the driver's
 * domain applies, as in the allocator) and id. Quantities are kept exactly as the API's integer
 * readings (quantity.h): Value() rounded up, and MilliValue(), plus the text.
 *
 * Two modes, as for the storage kinds: ks__draobj_from_json reads what the API server stored
 * (lenient: decode errors only); ks__draobj_from_json_checked reads cluster files for `kubesched
 * simulate`: it applies the API server's defaults the scheduler depends on (allocationMode
 * ExactCount and count 1 for an ExactCount request, a toleration's operator Equal) and refuses
 * what pkg/apis/resource/validation refuses among the rules listed in dra_objects.c, with
 * upstream's field.Error wording and path. The lenient mode applies the same defaults (an object
 * the API server stored has them already; a hand-made informer fixture may not).
 *
 * Threads: parsing on any thread (no shared state but the symbol table); objects: any thread.
 */
#ifndef KS_CORE_DRA_OBJECTS_H
#define KS_CORE_DRA_OBJECTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/intern.h"
#include "util/mempool.h"

typedef enum ks_dra_kind {
    KS_DK_RESOURCE_SLICE = 0,
    KS_DK_DEVICE_CLASS,
    KS_DK_RESOURCE_CLAIM,
    KS_DK_DEVICE_TAINT_RULE,
    KS_DK_COUNT
} ks_dra_kind;

/* The header every DRA object starts with (the layout of ks__volobj). */
typedef struct ks__draobj {
    atomic_int refs;
    ks_dra_kind kind;
    ks_sym ns, name;        /* ns: KS_SYM_EMPTY for the cluster-scoped kinds (all but claims) */
    char *key;              /* "name" or "namespace/name" (pool) */
    char *uid;              /* metadata.uid, "" when absent (pool) */
    char *resource_version; /* (pool) */
    char *json;             /* compact JSON of the whole object (malloc'd) */
    ks_mempool pool;        /* every array and string of the object */
    ks__symrefs syms;       /* the counted symbols it holds */
} ks__draobj;

/* A resource.Quantity as the API's integers: value = Value() (rounded up), milli = MilliValue();
 * text as written (pool). */
typedef struct ks_dra_quantity {
    int64_t value, milli;
    const char *text;
} ks_dra_quantity;

/* A QualifiedName map key: name as written, domain ("" when none) and id (after the slash). */
typedef struct ks_dra_qname {
    const char *name, *domain, *id;
} ks_dra_qname;

typedef enum ks_dra_attr_type {
    KS_DRA_ATTR_BOOL = 0,
    KS_DRA_ATTR_INT,
    KS_DRA_ATTR_STRING,
    KS_DRA_ATTR_VERSION,
    KS_DRA_ATTR_BOOLS, /* the list forms (ints, bools, strings, versions) */
    KS_DRA_ATTR_INTS,
    KS_DRA_ATTR_STRINGS,
    KS_DRA_ATTR_VERSIONS,
    KS_DRA_ATTR_UNKNOWN /* lenient mode: no value this version knows (a newer API's type) */
} ks_dra_attr_type;

/* A device attribute: one of the scalar values, or one list (n entries in ints / bools / strs). */
typedef struct ks_dra_attribute {
    ks_dra_qname qname;
    ks_dra_attr_type type;
    int32_t b;
    int64_t i;
    const char *s; /* string and version */
    uint32_t n;
    const int64_t *ints;
    const uint8_t *bools;
    const char *const *strs;
} ks_dra_attribute;

/* A device capacity with its requestPolicy (consumable capacity). */
typedef struct ks_dra_capacity {
    ks_dra_qname qname;
    ks_dra_quantity value;
    int32_t has_policy, has_default, has_range, has_min, has_max, has_step;
    ks_dra_quantity dflt;
    uint32_t nvalid_values;
    const ks_dra_quantity *valid_values; /* validValues as listed */
    ks_dra_quantity min, max, step;      /* validRange */
} ks_dra_capacity;

typedef struct ks_dra_counter {
    const char *name;
    ks_dra_quantity value;
} ks_dra_counter;

/* A slice's sharedCounters[i], or a device's consumesCounters[i] (name: counterSet). */
typedef struct ks_dra_counter_set {
    const char *name;
    uint32_t ncounters;
    const ks_dra_counter *counters; /* sorted by name */
    /* consumesCounters[i].compatibilityGroups: how many (DRADeviceCompatibilityGroups, alpha;
     * the allocator ignores slices that use them while the feature is off) */
    uint32_t ncompatibility_groups;
} ks_dra_counter_set;

typedef enum ks_dra_taint_effect {
    KS_DRA_EFFECT_NONE_SET = 0, /* absent (a toleration: matches every effect) */
    KS_DRA_EFFECT_NO_SCHEDULE,
    KS_DRA_EFFECT_NO_EXECUTE,
    KS_DRA_EFFECT_NONE, /* "None": the taint is informational */
    KS_DRA_EFFECT_OTHER /* a value this version does not know (lenient mode only) */
} ks_dra_taint_effect;

typedef struct ks_dra_taint {
    const char *key, *value;
    ks_dra_taint_effect effect;
    const char *effect_text; /* as written */
    const char *time_added;  /* RFC 3339, "" when absent */
} ks_dra_taint;

typedef enum ks_dra_toleration_op { KS_DRA_TOL_EQUAL = 0, KS_DRA_TOL_EXISTS } ks_dra_toleration_op;

typedef struct ks_dra_toleration {
    const char *key, *value;
    ks_dra_toleration_op op;
    ks_dra_taint_effect effect;
    int32_t has_toleration_seconds;
    int64_t toleration_seconds;
} ks_dra_toleration;

/* Where a slice's or a device's devices are reachable (exactly one in a valid object). */
typedef struct ks_dra_node_selection {
    int32_t has_node_name, has_node_selector, all_nodes;
    ks_sym node_name;
    uint32_t nterms; /* nodeSelector.nodeSelectorTerms: ORed */
    const ks_node_selector_term *terms;
} ks_dra_node_selection;

typedef struct ks_dra_device {
    const char *name;
    uint32_t nattributes;
    const ks_dra_attribute *attributes; /* sorted by qualified name as written */
    uint32_t ncapacity;
    const ks_dra_capacity *capacity; /* sorted by qualified name as written */
    uint32_t nconsumes;
    const ks_dra_counter_set *consumes_counters; /* counterSet + counters */
    ks_dra_node_selection node;                  /* with perDeviceNodeSelection */
    uint32_t ntaints;
    const ks_dra_taint *taints;
    int32_t binds_to_node, allow_multiple_allocations;
    uint32_t nbinding_conditions, nbinding_failure_conditions;
    const char *const *binding_conditions;
    const char *const *binding_failure_conditions;
} ks_dra_device;

typedef struct ks_resource_slice {
    ks__draobj h;
    const char *driver;
    ks_sym driver_sym;
    const char *pool_name;
    int64_t pool_generation, pool_resource_slice_count;
    ks_dra_node_selection node; /* the slice's own: nodeName / nodeSelector / allNodes */
    int32_t per_device_node_selection;
    uint32_t ndevices;
    const ks_dra_device *devices; /* in the slice's order (the allocator's order) */
    uint32_t nshared_counters;
    const ks_dra_counter_set *shared_counters;
    /* The structured allocator's memo of CEL selector results for this slice's devices
     * (dra_allocator.c): KS_DRA_SELECTOR_MEMO words per device, made on first use and freed
     * with the slice; read and written with atomics from any thread. A slice's devices never
     * change (an update is a new object), so a result holds as long as the slice. */
    _Atomic(uint64_t *) selector_memo;
} ks_resource_slice;

#define KS_DRA_SELECTOR_MEMO 4 /* distinct selectors remembered per device */

/* A DeviceSelector: only CEL exists in v1. */
typedef struct ks_dra_selector {
    const char *cel_expression;
} ks_dra_selector;

/* DeviceClassConfiguration / DeviceClaimConfiguration: opaque driver parameters. */
typedef struct ks_dra_config {
    uint32_t nrequests; /* claims only: the requests it applies to (none: all) */
    const char *const *requests;
    const char *driver;     /* opaque.driver */
    const char *parameters; /* opaque.parameters as compact JSON, "" when absent */
} ks_dra_config;

typedef struct ks_device_class {
    ks__draobj h;
    uint32_t nselectors;
    const ks_dra_selector *selectors;
    uint32_t nconfig;
    const ks_dra_config *config;
    const char *extended_resource_name; /* NULL when absent */
    int64_t creation_ns;                /* metadata.creationTimestamp (Unix ns), 0 when absent: the
                                         * extended resource cache prefers the newest class */
} ks_device_class;

typedef enum ks_dra_alloc_mode {
    KS_DRA_ALLOC_EXACT_COUNT = 0,
    KS_DRA_ALLOC_ALL,
    KS_DRA_ALLOC_OTHER /* lenient mode: a value this version does not know */
} ks_dra_alloc_mode;

/* ExactDeviceRequest or DeviceSubRequest: what one (sub)request asks for. */
typedef struct ks_dra_exact_request {
    const char *name; /* the subrequest's name; for `exactly`, the request's */
    const char *device_class_name;
    uint32_t nselectors;
    const ks_dra_selector *selectors;
    ks_dra_alloc_mode allocation_mode;
    const char *allocation_mode_text; /* as written ("" when absent): the allocator's error for
                                       * a mode it does not know names it */
    int64_t count;                    /* 1 by default for ExactCount */
    int32_t admin_access, has_admin_access; /* has_: adminAccess set (true or false) */
    uint32_t ntolerations;
    const ks_dra_toleration *tolerations;
    uint32_t ncapacity_requests; /* capacity.requests, sorted by qualified name */
    const ks_dra_qname *capacity_request_names;
    const ks_dra_quantity *capacity_requests;
} ks_dra_exact_request;

typedef struct ks_dra_request {
    const char *name;
    int32_t has_exactly;
    ks_dra_exact_request exactly;
    uint32_t nfirst_available; /* prioritized list (exactly is then unset) */
    const ks_dra_exact_request *first_available;
} ks_dra_request;

typedef struct ks_dra_constraint {
    uint32_t nrequests;
    const char *const *requests;
    const char *match_attribute;    /* NULL when absent */
    const char *distinct_attribute; /* NULL when absent */
} ks_dra_constraint;

typedef struct ks_dra_result {
    const char *request, *driver, *pool, *device;
    int32_t admin_access;
    const char *share_id; /* NULL when absent */
    uint32_t nbinding_conditions, nbinding_failure_conditions;
    const char *const *binding_conditions;
    const char *const *binding_failure_conditions;
    uint32_t nconsumed_capacity;
    const ks_dra_qname *consumed_capacity_names;
    const ks_dra_quantity *consumed_capacity;
} ks_dra_result;

typedef struct ks_dra_consumer {
    const char *api_group, *resource, *name, *uid;
} ks_dra_consumer;

typedef struct ks_resource_claim {
    ks__draobj h;
    uint32_t nrequests;
    const ks_dra_request *requests;
    uint32_t nconstraints;
    const ks_dra_constraint *constraints;
    uint32_t nconfig;
    const ks_dra_config *config;
    int32_t deletion_requested; /* metadata.deletionTimestamp set */
    uint32_t nfinalizers;
    const char *const *finalizers;
    /* status.allocation */
    int32_t allocated;
    uint32_t nresults;
    const ks_dra_result *results;
    uint32_t nalloc_config;
    const ks_dra_config *alloc_config; /* status.allocation.devices.config (source in driver's
                                        * place is not kept) */
    uint32_t nalloc_terms;             /* status.allocation.nodeSelector terms (0: any node) */
    const ks_node_selector_term *alloc_terms;
    const char *allocation_timestamp; /* "" when absent */
    uint32_t nreserved_for;
    const ks_dra_consumer *reserved_for;
    /* What the SDK shows of it (ks_resource_claim_view_of): built with the rest (pool); uid is
     * metadata.uid, or "namespace/name" when the object has none (a hand-written cluster file). */
    ks_resource_claim_view view;
    /* metadata.annotations[resource.kubernetes.io/extended-resource-claim] == "true"
     * (DRAExtendedResource's claim), and the controller ownerReference's name (pool; NULL
     * when none) */
    int32_t extended_resource_claim;
    const char *controller_name;
} ks_resource_claim;

typedef struct ks_device_taint_rule {
    ks__draobj h;
    const char *driver, *pool, *device; /* spec.deviceSelector; NULL: any */
    int32_t has_device_selector;        /* 0: no spec.deviceSelector, which selects no device */
    ks_dra_taint taint;
} ks_device_taint_rule;

/* The kind named by an object's `kind` ("ResourceSlice", ...), or -1. */
int ks__draobj_kind(const char *kind);
/* The API kind name of k ("ResourceClaim"); "" for an unknown k. */
const char *ks__draobj_kind_name(ks_dra_kind k);
/* Whether objects of kind k live in a namespace (claims only). */
int ks__draobj_namespaced(ks_dra_kind k);

/* Parses obj, whose kind is one of the four, into a new object (refs = 1). KS_EPARSE with a
 * message naming the field ("spec.pool.resourceSliceCount: Invalid value: 0: must be greater
 * than zero"), KS_EINVAL when obj is of no such kind, KS_ENOMEM. */
int ks__draobj_from_json(const cJSON *obj, ks__draobj **out, char *err, size_t errlen);
int ks__draobj_from_json_checked(const cJSON *obj, ks__draobj **out, char *err, size_t errlen);

/* Reference counting; unref frees at zero; NULL is a no-op for both. Any thread. */
ks__draobj *ks__draobj_ref(ks__draobj *o);
void ks__draobj_unref(ks__draobj *o);

/* Typed views of a header (NULL when o is NULL or of another kind). */
const ks_resource_slice *ks__dra_slice(const ks__draobj *o);
const ks_device_class *ks__dra_class(const ks__draobj *o);
const ks_resource_claim *ks__dra_claim(const ks__draobj *o);
const ks_device_taint_rule *ks__dra_taint_rule(const ks__draobj *o);

/* The device's attribute / capacity named qname (as written, "domain/id" or "id"), or NULL.
 * Binary search: the arrays are sorted. */
const ks_dra_attribute *ks__dra_device_attribute(const ks_dra_device *d, const char *qname);
const ks_dra_capacity *ks__dra_device_capacity(const ks_dra_device *d, const char *qname);
/* The claim's request named name (a top-level request), or NULL. */
const ks_dra_request *ks__dra_claim_request(const ks_resource_claim *c, const char *name);
/* Whether the claim is reserved for the consumer with this uid. */
int ks__dra_claim_reserved_for(const ks_resource_claim *c, const char *uid);

#endif
