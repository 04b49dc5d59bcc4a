/*
 * A CEL (Common Expression Language) evaluator: the subset Kubernetes' Dynamic Resource Allocation
 * uses for device selectors (k8s.io/dynamic-resource-allocation/cel at v0.37.2 on cel-go v0.29.2),
 * written from the cel-spec language definition (cel.dev/expr v0.25.1). docs/CEL.md lists what is
 * covered, the conformance figures and what is out of scope (protobuf messages, timestamps and
 * durations, the static type checker).
 *
 * Use: ks_cel_compile() once per expression (the program is immutable afterwards), then
 * ks_cel_eval() any number of times, from any number of threads at once: each evaluation
 * allocates only in the arena its caller passes. Values are plain structs that point into an
 * arena (or into the caller's own storage for activation values); nothing is reference counted.
 */
#ifndef KS_CORE_CEL_H
#define KS_CORE_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/mempool.h"

/* DRA's runtime cost limit (resourceapi.CELSelectorExpressionMaxCost). */
#define KS_CEL_DRA_COST_LIMIT 1000000u

typedef enum ks_cel_kind {
    KS_CEL_NULL,
    KS_CEL_BOOL,
    KS_CEL_INT,
    KS_CEL_UINT,
    KS_CEL_DOUBLE,
    KS_CEL_STRING, /* UTF-8, not NUL-terminated (s.len counts bytes) */
    KS_CEL_BYTES,
    KS_CEL_LIST,
    KS_CEL_MAP,
    KS_CEL_OPTIONAL, /* opt == NULL: optional.none() */
    KS_CEL_TYPE,     /* s: the type's name ("int", "list", "kubernetes.Quantity", ...) */
    KS_CEL_QUANTITY, /* Kubernetes resource.Quantity (exact decimal) */
    KS_CEL_SEMVER,   /* Kubernetes Semver (blang/semver) */
    KS_CEL_ERROR, /* evaluation only: s is the message; ks_cel_eval never returns it as a value */
} ks_cel_kind;

typedef struct ks_cel_value ks_cel_value;
typedef struct ks_cel_list ks_cel_list;
typedef struct ks_cel_map ks_cel_map;
typedef struct ks_cel_quantity ks_cel_quantity;
typedef struct ks_cel_semver ks_cel_semver;

struct ks_cel_value {
    ks_cel_kind kind;
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const char *ptr;
            size_t len;
        } s;
        const ks_cel_list *list;
        const ks_cel_map *map;
        const ks_cel_value *opt;
        const ks_cel_quantity *q;
        const ks_cel_semver *sv;
    };
};

struct ks_cel_list {
    size_t n;
    const ks_cel_value *items;
};

/* Keys are int, uint, bool or string; lookups are linear (DRA's maps hold at most 32 entries). */
struct ks_cel_map {
    size_t n;
    const ks_cel_value *keys;
    const ks_cel_value *vals;
    /* DRA's device.attributes and device.capacity: m[k] and m.k of an absent key give an empty
     * map instead of "no such key" (dynamic-resource-allocation/cel's mapper.Find); `in` and
     * has() still see the key as absent. */
    bool missing_is_empty;
};

/* An exact decimal: value = (neg ? -1 : 1) * digits * 10^exp, digits a decimal string without
 * leading zeros ("" for zero). */
struct ks_cel_quantity {
    bool neg;
    int32_t exp;
    const char *digits;
    size_t ndigits;
    /* the result of add()/sub(), which upstream returns as *Quantity: Quantity.Equal refuses it
     * ("no such overload"), so quantity("1") == quantity("0").add(1) is an error upstream too */
    bool boxed;
    /* apimachinery's internal representation, which AsInt64 (asInteger/isInteger) depends on:
     * int64Amount{value, scale} (is_dec false) or inf.Dec (is_dec true: never an int64). */
    bool is_dec;
    int64_t i_value;
    int32_t i_scale;
};

struct ks_cel_semver {
    uint64_t major, minor, patch;
    const char *pre;   /* pre-release identifiers joined by '.', "" if none */
    const char *build; /* build metadata, "" if none (ignored by comparisons) */
};

/* A compile or evaluation error. line/column are 1-based positions in the expression (0 when the
 * error has no position). msg follows cel-go's wording where it has one. */
typedef struct ks_cel_error {
    int line, column;
    char msg[320];
} ks_cel_error;

/* The declarations an expression is compiled against. */
typedef struct ks_cel_env {
    const char *const *vars; /* variable names the expression may reference */
    size_t nvars;
    uint64_t cost_limit; /* runtime cost limit; 0: none */
    /* false (DRA): an undeclared variable or function is a compile error, as cel-go's checker
     * reports it. true: they are runtime errors instead, as cel-go without the checker
     * (the conformance tests marked disable_check). */
    bool unchecked;
    /* the "device" variable has DRA's declared type (driver: string, attributes/capacity: maps,
     * allowMultipleAllocations: bool), which decides which overloads cel-go resolves statically
     * and hence some runtime costs (docs/CEL.md, "Cost") */
    bool dra_device;
} ks_cel_env;

typedef struct ks_cel_program ks_cel_program;

/* Compiles expr (NUL-terminated) against env. Returns a program the caller frees with
 * ks_cel_program_free, or NULL with *err filled (syntax errors, undeclared references, unknown
 * functions, invalid literals). Thread: any; env is copied. */
ks_cel_program *ks_cel_compile(const char *expr, const ks_cel_env *env, ks_cel_error *err);
/* The same for an expression of len bytes that may contain NUL characters. */
ks_cel_program *ks_cel_compile_n(const char *expr, size_t len, const ks_cel_env *env,
                                 ks_cel_error *err);
void ks_cel_program_free(ks_cel_program *p);

/* A variable's value for one evaluation; the value (and what it points to) is borrowed. */
typedef struct ks_cel_binding {
    const char *name;
    ks_cel_value value;
} ks_cel_binding;

/* Evaluates p with the given bindings. Returns 0 and *out (allocated in arena, which the caller
 * owns and frees; the value may also point at the program's constants and at the bindings'
 * values, so it is valid while all three live) or -1 and *err (a runtime error: "no such key: x",
 * "integer overflow", "operation cancelled: actual cost limit exceeded", ...). *cost (may be NULL)
 * receives the runtime cost as cel-go's cost tracker counts it. Thread: any; p is only read. */
int ks_cel_eval(const ks_cel_program *p, const ks_cel_binding *vars, size_t nvars,
                ks_mempool *arena, ks_cel_value *out, uint64_t *cost, ks_cel_error *err);

/* Value helpers (arena allocations). */
ks_cel_value ks_cel_string(ks_mempool *a, const char *s);
ks_cel_value ks_cel_int(int64_t i);
ks_cel_value ks_cel_bool(bool b);
/* Parses a Kubernetes quantity ("80Gi", "1.5", "2e3"); false if malformed. */
bool ks_cel_quantity_parse(ks_mempool *a, const char *s, size_t n, ks_cel_value *out);
/* Parses a semantic version (strict semver 2.0.0 as blang/semver's Parse); false if malformed. */
bool ks_cel_semver_parse(ks_mempool *a, const char *s, size_t n, ks_cel_value *out);

/* ---- DRA ---------------------------------------------------------------------------------- */

/* The environment DRA compiles device selectors in: the one variable "device". */
extern const ks_cel_env ks_cel_dra_env;

/* One device attribute or capacity for ks_cel_dra_device: a qualified name ("model" for the
 * driver's own domain, or "other.example.com/model") and its value (int, bool, string, semver,
 * a list of those, or for capacity a quantity). Borrowed. */
typedef struct ks_cel_dra_entry {
    const char *name;
    ks_cel_value value;
} ks_cel_dra_entry;

/* Builds the "device" value as DeviceMatches does: {driver, allowMultipleAllocations,
 * attributes: {domain: {id: value}}, capacity: {domain: {id: quantity}}}, the two maps returning
 * an empty map for an unknown domain. Everything is allocated in a. */
ks_cel_value ks_cel_dra_device(ks_mempool *a, const char *driver, const ks_cel_dra_entry *attrs,
                               size_t nattrs, const ks_cel_dra_entry *capacity, size_t ncapacity,
                               bool allow_multiple_allocations);

/* Evaluates a device selector against device (from ks_cel_dra_device): 0 and *match, or -1 and
 * *err (a runtime error, or "CEL result of type T could not be converted to bool"). *cost may be
 * NULL. Thread: any. */
int ks_cel_dra_matches(const ks_cel_program *p, const ks_cel_value *device, ks_mempool *arena,
                       bool *match, uint64_t *cost, ks_cel_error *err);

/* CEL equality (heterogeneous numbers, structural lists and maps). */
bool ks_cel_equal(const ks_cel_value *a, const ks_cel_value *b);
/* A debug rendering of v, NUL-terminated, in the arena. */
const char *ks_cel_format(ks_mempool *a, const ks_cel_value *v);

#endif
