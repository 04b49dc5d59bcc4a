/*
 * The field schema of the Kubernetes kinds kubesched reads from cluster files, and the checker
 * that holds a parsed object to it the way the kube-apiserver's strict JSON decoding does
 * (sigs.k8s.io/json, which the apiserver and kubectl use):
 *
 *   - a value of the wrong JSON type is an error, with upstream's Go text: `json: cannot
 *     unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container`;
 *   - an unknown field, at any depth, is upstream's warning: `unknown field "spec.foo"`;
 *   - null is accepted anywhere (the zero value).
 *
 * The tables (kube_schema.c) are generated from the Go types of k8s.io/api by
 * core/api/schema-gen; tests/check-schema.sh says whether the committed file is current.
 *
 * Threads: everything here is immutable static data or a pure function of its arguments; any
 * thread, no locking, no allocation that outlives a call.
 */
#ifndef KS_CORE_KUBE_SCHEMA_H
#define KS_CORE_KUBE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef enum {
    KS_KUBE_KIND_CHECKED, /* a built-in kind with a schema here: ks__kube_check validates it */
    KS_KUBE_KIND_BUILTIN, /* a built-in kind without a schema here (kubesched does not read it) */
    KS_KUBE_KIND_UNKNOWN, /* the group is built-in but it has no such (version, kind): `kind:
                           * Nodes` or `kind: pod` in v1, `apps/v9` */
    KS_KUBE_KIND_CUSTOM,  /* a group that is not built-in: a custom resource */
    KS_KUBE_KIND_MISSING, /* apiVersion or kind missing, empty or not a string */
} ks_kube_kind_class;

/* Classifies (api_version, kind); either may be NULL (MISSING). For UNKNOWN, *suggestion (when
 * suggestion is not NULL) is a built-in kind of that group/version that differs from kind only in
 * case, or by one edit ignoring case ("Pod" for "pod", "Node" for "Nodes"), else NULL; it points
 * into static data. Any thread. */
ks_kube_kind_class ks__kube_classify(const char *api_version, const char *kind,
                                     const char **suggestion);

/* The same from an object's own "apiVersion" and "kind" members (MISSING when obj is not an
 * object or either is not a non-empty string). Any thread. */
ks_kube_kind_class ks__kube_classify_obj(const cJSON *obj, const char **suggestion);

typedef enum {
    KS_KUBE_WRONG_TYPE,    /* a JSON value of the wrong type: upstream fails the decode */
    KS_KUBE_UNKNOWN_FIELD, /* a field the Go type does not have: upstream warns and drops it */
    KS_KUBE_OUT_OF_RANGE,  /* a number an integer field cannot hold (1.5, 3000000000 for int32) */
} ks_kube_problem;

/* Called once per problem, on the thread of ks__kube_check, during the call. item: the offending
 * value (WRONG_TYPE, OUT_OF_RANGE) or, for UNKNOWN_FIELD, the unknown field's value (its ->string
 * is the key); it belongs to the checked object. path: upstream's field path with list indexes and
 * map keys ("spec.containers[0].resoures"), cut short past 1023 bytes. msg: the whole message, as
 * upstream words it. path and msg are valid only during the call. */
typedef void (*ks_kube_report_fn)(void *ctx, const cJSON *item, ks_kube_problem what,
                                  const char *path, const char *msg);

/* Walks obj against the schema of its kind and reports every problem, in document order
 * (upstream stops at the first wrong type, and warns of unknown fields only when there is none;
 * reporting all of them lets one run fix a file). Returns the number reported: 0 = clean. An obj
 * whose kind is not KS_KUBE_KIND_CHECKED is not checked (returns 0). obj is only read; report may
 * be NULL (count only). Any thread; reentrant.
 *
 * Where kubesched's words differ from upstream's: a number is printed from its value (integers in
 * full, others in the shortest form that reads back) where Go quotes the source text ("1e3"); an
 * integral number written as a float ("80.0", "1e3") is accepted for an integer field, where Go
 * refuses it (cJSON keeps no source text); a Quantity given a bool, array or object gets the same
 * `cannot unmarshal ... of type resource.Quantity` message as the other types, where upstream
 * passes on the quantity parser's error, which names no field. */
size_t ks__kube_check(const cJSON *obj, ks_kube_report_fn report, void *ctx);

/* ---- The generated tables (kube_schema.c), read only by kube_check.c ---- */

/* What JSON a Go type takes. */
typedef enum {
    KS_KUBE_T_STRING, /* a JSON string */
    KS_KUBE_T_BOOL,   /* true or false */
    KS_KUBE_T_INT8,   /* an integral number within the Go type's range */
    KS_KUBE_T_INT16,
    KS_KUBE_T_INT32,
    KS_KUBE_T_INT64,
    KS_KUBE_T_UINT8,
    KS_KUBE_T_UINT16,
    KS_KUBE_T_UINT32,
    KS_KUBE_T_UINT64,
    KS_KUBE_T_FLOAT32,       /* any number within float32's range */
    KS_KUBE_T_FLOAT64,       /* any number */
    KS_KUBE_T_QUANTITY,      /* resource.Quantity: a string or a number (parsed elsewhere) */
    KS_KUBE_T_INT_OR_STRING, /* intstr.IntOrString: a string or an int32 */
    KS_KUBE_T_TEXT,          /* decodes itself from a string: metav1.Time, MicroTime, Duration */
    KS_KUBE_T_BYTES,         /* []byte: a base64 string */
    KS_KUBE_T_ANY,           /* interface{}, runtime.RawExtension, FieldsV1: any JSON */
    KS_KUBE_T_SLICE,         /* an array of ref */
    KS_KUBE_T_MAP,           /* an object with values of ref (keys are strings) */
    KS_KUBE_T_STRUCT,        /* an object with the fields of ks__kube_structs[ref] */
} ks_kube_type_kind;

typedef struct ks_kube_type {
    uint8_t kind;  /* ks_kube_type_kind */
    uint16_t ref;  /* SLICE, MAP: the element's type; STRUCT: the struct */
    uint32_t name; /* the Go type upstream's messages name: as Go prints it ("[]v1.Container");
                    * for IntOrString and Time, what their UnmarshalJSON decodes into (int32,
                    * string), which is what upstream's message names */
} ks_kube_type;

typedef struct ks_kube_struct {
    uint32_t name;        /* the Go type's bare name ("PodSpec"), as upstream's messages print it */
    uint16_t first_field; /* its fields: ks__kube_fields[first_field, first_field + n_fields), */
    uint16_t n_fields;    /* sorted by json name (strcmp) */
} ks_kube_struct;

typedef struct ks_kube_field {
    uint32_t json;    /* the JSON key */
    uint32_t err_seg; /* what upstream's error path adds for it: the key, after the Go names of the
                       * embedded structs it is promoted from ("TypeMeta.kind") */
    uint16_t type;    /* index in ks__kube_types (pointers looked through) */
} ks_kube_field;

typedef struct ks_kube_kind_row {
    uint32_t api_version; /* "v1", "apps/v1" */
    uint32_t kind;
    int32_t type; /* its schema in ks__kube_types, or -1 (a built-in kind without one) */
} ks_kube_kind_row;

/* Every name above (uint32_t) is an offset into ks__kube_strings, a pool of NUL-terminated
 * strings. ks__kube_kinds: every built-in (apiVersion, kind), sorted by apiVersion then kind
 * (strcmp). Immutable; any thread. */
extern const char ks__kube_strings[];
extern const ks_kube_type ks__kube_types[];
extern const ks_kube_struct ks__kube_structs[];
extern const ks_kube_field ks__kube_fields[];
extern const ks_kube_kind_row ks__kube_kinds[];
extern const size_t ks__kube_n_types, ks__kube_n_structs, ks__kube_n_fields, ks__kube_n_kinds;

#endif
