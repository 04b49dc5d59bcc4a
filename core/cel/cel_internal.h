/*
 * The CEL library's private declarations: the syntax tree the parser builds (macros already
 * expanded into comprehensions, as cel-go's parser does) and the evaluator reads.
 */
#ifndef KS_CORE_CEL_INTERNAL_H
#define KS_CORE_CEL_INTERNAL_H

#include "cel/cel.h"

typedef enum cel_node_kind {
    N_CONST,  /* val */
    N_IDENT,  /* name */
    N_SELECT, /* a.name; test_only: has(a.name); optional: a.?name */
    N_INDEX,  /* a[b]; optional: a[?b] */
    N_CALL,   /* fn(args) or target.fn(args) */
    N_LIST,   /* [a, ?b] */
    N_MAP,    /* {k: v, ?k: v} */
    N_AND,
    N_OR,
    N_COND,
    N_NOT_STRICTLY_FALSE, /* cel-go's @not_strictly_false: errors count as true */
    N_COMPREHENSION,
} cel_node_kind;

typedef struct cel_node cel_node;
struct cel_node {
    cel_node_kind kind;
    int pos; /* byte offset of the token in the expression */
    ks_cel_value val;
    const char *name; /* ident, field or function name (NUL-terminated, in the program's pool) */
    int fn;           /* N_CALL: function id (cel_fn_lookup) */
    bool has_target, test_only, optional;
    bool set_membership; /* x in [constant primitives]: cel-go's evalSetMembership (no cost) */
    unsigned char st;    /* static type (ST_*), as far as a light inference knows it */
    bool varargs;        /* N_CALL: cel-go's evalVarArgs (3+ arguments, or a dispatch between
                          * overloads at runtime): arguments stop at the first error, which is
                          * then not charged as a call */
    bool untyped_call;   /* N_CALL: cel-go would dispatch at runtime (dyn operands), not by a
                          * statically resolved overload: overload-specific costs do not apply */
    bool memo;           /* N_CALL of quantity() or semver() on constants that parsed: val is
                          * the result, computed once at compile time (in the program's pool);
                          * the call is still evaluated and charged as before, not re-parsed */
    cel_node **args;     /* call: [target,] args; list: items; map: k0 v0 k1 v1 ...; and/or: 2 */
    size_t nargs;
    bool *opt_flags; /* list/map: which entries are optional (?x) */
    /* comprehension */
    const char *iter_var, *iter_var2, *accu_var;
    cel_node *range, *accu_init, *loop_cond, *loop_step, *result;
    struct cel_regex *re; /* matches/find/findAll with a constant pattern: compiled once */
};

enum {
    ST_DYN,
    ST_BOOL,
    ST_INT,
    ST_UINT,
    ST_DOUBLE,
    ST_STRING,
    ST_BYTES,
    ST_LIST,
    ST_MAP,
    ST_OTHER
};

struct ks_cel_program {
    ks_mempool pool;
    cel_node *root;
    uint64_t cost_limit;
    struct cel_regex **regexes; /* owned: freed with the program */
    size_t nregexes;
};

/* Parses expr into a tree allocated in pool. Returns NULL with *err set. */
cel_node *ks__cel_parse(ks_mempool *pool, const char *expr, size_t len, ks_cel_error *err);
/* Function ids: the index of the name in the evaluator's table; -1 when unknown. */
int ks__cel_fn_lookup(const char *name, bool receiver);
/* Position (1-based line and column, counted in code points) of byte offset off in expr. */
void ks__cel_position(const char *expr, int off, int *line, int *column);

/* Equality as cel-go's types.Equal (lhs.Equal(rhs)): like ks_cel_equal, except that Kubernetes'
 * Quantity and Semver refuse other types (an error), and list elements that compare with an
 * error do not make lists unequal. Returns a bool or an error value. */
ks_cel_value ks__cel_go_equal(ks_mempool *a, const ks_cel_value *x, const ks_cel_value *y);

/* Values */
ks_cel_value ks__cel_err(ks_mempool *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
ks_cel_value ks__cel_str(ks_mempool *a, const char *s, size_t n, ks_cel_kind kind);
ks_cel_value ks__cel_type(const char *name);
const char *ks__cel_type_name(const ks_cel_value *v);
/* -2 unordered / error, -1, 0, 1 */
int ks__cel_compare(const ks_cel_value *a, const ks_cel_value *b, bool *ok);
size_t ks__cel_utf8_len(const char *s, size_t n);
bool ks__cel_utf8_valid(const char *s, size_t n);

/* Quantity and semver (cel_quantity.c, cel_semver.c) */
int ks__cel_quantity_parse(ks_mempool *a, const char *s, size_t n, ks_cel_value *out);
int ks__cel_quantity_cmp(const ks_cel_quantity *a, const ks_cel_quantity *b);
ks_cel_quantity *ks__cel_quantity_add(ks_mempool *a, const ks_cel_quantity *x,
                                      const ks_cel_quantity *y, bool sub);
ks_cel_quantity *ks__cel_quantity_from_int(ks_mempool *a, int64_t i);
bool ks__cel_quantity_as_int(const ks_cel_quantity *q, int64_t *out, bool *is_int);
double ks__cel_quantity_as_double(const ks_cel_quantity *q);
int ks__cel_semver_cmp(const ks_cel_semver *a, const ks_cel_semver *b);

/* Regular expressions (cel_regex.c): RE2 syntax through PCRE2. */
typedef struct cel_regex cel_regex;
cel_regex *ks__cel_regex_compile(const char *pat, size_t n, char *msg, size_t msglen);
void ks__cel_regex_free(cel_regex *r);
/* 1 match, 0 none, -1 error. The match span goes to so and eo when they are not NULL. */
int ks__cel_regex_search(cel_regex *r, const char *s, size_t n, size_t start, size_t *so,
                         size_t *eo);

#endif
