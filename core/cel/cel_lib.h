/*
 * The function library's table and the evaluation context it shares with the evaluator.
 * X(id, name, how): how = G (global call only), M (receiver call only), B (both).
 */
#ifndef KS_CORE_CEL_LIB_H
#define KS_CORE_CEL_LIB_H

#include "cel/cel_internal.h"

#define CEL_G 1
#define CEL_M 2
#define CEL_B 3

/* One function per line; clang-format does not keep this table stable. */
// clang-format off
#define CEL_FUNCTIONS(X) \
    X(ADD, "_+_", CEL_G) \
    X(SUB, "_-_", CEL_G) \
    X(MUL, "_*_", CEL_G) \
    X(DIV, "_/_", CEL_G) \
    X(MOD, "_%_", CEL_G) \
    X(NEG, "-_", CEL_G) \
    X(NOT, "!_", CEL_G) \
    X(EQ, "_==_", CEL_G) \
    X(NE, "_!=_", CEL_G) \
    X(LT, "_<_", CEL_G) \
    X(LE, "_<=_", CEL_G) \
    X(GT, "_>_", CEL_G) \
    X(GE, "_>=_", CEL_G) \
    X(IN, "@in", CEL_G) \
    X(SIZE, "size", CEL_B) \
    X(INT, "int", CEL_G) \
    X(UINT, "uint", CEL_G) \
    X(DOUBLE, "double", CEL_G) \
    X(STRING, "string", CEL_G) \
    X(BYTES, "bytes", CEL_G) \
    X(BOOL, "bool", CEL_G) \
    X(TYPE, "type", CEL_G) \
    X(DYN, "dyn", CEL_G) \
    X(CONTAINS, "contains", CEL_M) \
    X(STARTS, "startsWith", CEL_M) \
    X(ENDS, "endsWith", CEL_M) \
    X(MATCHES, "matches", CEL_B) \
    X(CHARAT, "charAt", CEL_M) \
    X(INDEXOF, "indexOf", CEL_M) \
    X(LASTINDEXOF, "lastIndexOf", CEL_M) \
    X(LOWER, "lowerAscii", CEL_M) \
    X(UPPER, "upperAscii", CEL_M) \
    X(REPLACE, "replace", CEL_M) \
    X(SPLIT, "split", CEL_M) \
    X(SUBSTRING, "substring", CEL_M) \
    X(TRIM, "trim", CEL_M) \
    X(JOIN, "join", CEL_M) \
    X(REVERSE, "reverse", CEL_M) \
    X(QUOTE, "strings.quote", CEL_G) \
    X(FORMAT, "format", CEL_M) \
    X(OPT_OF, "optional.of", CEL_G) \
    X(OPT_NONE, "optional.none", CEL_G) \
    X(OPT_OFNZ, "optional.ofNonZeroValue", CEL_G) \
    X(HASVALUE, "hasValue", CEL_M) \
    X(VALUE, "value", CEL_M) \
    X(ORVALUE, "orValue", CEL_M) \
    X(OR, "or", CEL_M) \
    X(QUANTITY, "quantity", CEL_G) \
    X(ISQUANTITY, "isQuantity", CEL_G) \
    X(SIGN, "sign", CEL_M) \
    X(ISGT, "isGreaterThan", CEL_M) \
    X(ISLT, "isLessThan", CEL_M) \
    X(COMPARETO, "compareTo", CEL_M) \
    X(QADD, "add", CEL_M) \
    X(QSUB, "sub", CEL_M) \
    X(ASINT, "asInteger", CEL_M) \
    X(ASFLOAT, "asApproximateFloat", CEL_M) \
    X(ISINT, "isInteger", CEL_M) \
    X(SEMVER, "semver", CEL_G) \
    X(ISSEMVER, "isSemver", CEL_G) \
    X(MAJOR, "major", CEL_M) \
    X(MINOR, "minor", CEL_M) \
    X(PATCH, "patch", CEL_M) \
    X(ISSORTED, "isSorted", CEL_M) \
    X(SUM, "sum", CEL_M) \
    X(MIN, "min", CEL_M) \
    X(MAX, "max", CEL_M) \
    X(INCLUDES, "includes", CEL_M) \
    X(FIND, "find", CEL_M) \
    X(FINDALL, "findAll", CEL_M) \
    X(SETS_CONTAINS, "sets.contains", CEL_G) \
    X(SETS_EQUIV, "sets.equivalent", CEL_G) \
    X(SETS_INTERSECTS, "sets.intersects", CEL_G) \
    X(DISTINCT, "distinct", CEL_M) \
    X(FLATTEN, "flatten", CEL_M) \
    X(SLICE, "slice", CEL_M) \
    X(SORT, "sort", CEL_M) \
    X(FIRST, "first", CEL_M) \
    X(LAST, "last", CEL_M) \
    X(LISTS_RANGE, "lists.range", CEL_G) \
    X(MAPINSERT, "cel.@mapInsert", CEL_G)
// clang-format on

enum {
#define X(id, name, how) FN_##id,
    CEL_FUNCTIONS(X)
#undef X
        FN_COUNT
};

/* One evaluation's state: the arena, the bindings, the cost so far. */
typedef struct cel_ctx {
    ks_mempool *a;
    const ks_cel_binding *vars;
    size_t nvars;
    uint64_t cost, limit;
    bool cancelled;
    cel_regex *re; /* the current call's precompiled pattern (constant patterns), or NULL */
    bool untyped;  /* the current call is dispatched at runtime (cel_node.untyped_call) */
} cel_ctx;

/* Adds cost; false (and c->cancelled) once the limit is passed. */
bool ks__cel_charge(cel_ctx *c, uint64_t cost);
/* Calls function fn on argv (argv[0] is the receiver when receiver); no argument is an error. */
ks_cel_value ks__cel_call(cel_ctx *c, int fn, bool receiver, const ks_cel_value *argv, size_t n);
/* The runtime cost of calling fn on argv with this result (cel-go's costCall with Kubernetes'
 * CostEstimator.CallCost). */
uint64_t ks__cel_call_cost(int fn, const ks_cel_value *argv, size_t n, const ks_cel_value *result,
                           bool untyped);
/* string.format(list) (cel_format.c) and Go's %g of a double (string(double)). */
ks_cel_value ks__cel_format(cel_ctx *c, const ks_cel_value *fmt, const ks_cel_list *args);
ks_cel_value ks__cel_go_g(cel_ctx *c, double d);
/* The function's name as cel-go's messages give it. */
const char *ks__cel_fn_name(int fn);
/* How fn may be called (CEL_G / CEL_M / CEL_B). */
int ks__cel_fn_how(int fn);
const ks_cel_value *ks__cel_map_get(const ks_cel_map *m, const ks_cel_value *key);

#endif
