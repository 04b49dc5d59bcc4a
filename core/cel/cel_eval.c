/*
 * Compilation (name resolution over the parsed tree) and the tree-walking evaluator: CEL's
 * commutative error absorption for && and ||, strict calls, comprehensions as cel-go's macros
 * expand them, and cel-go's runtime cost tracker (interpreter/runtimecost.go) with its limit.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_internal.h"
#include "cel/cel_lib.h"

/* ---- function table ----------------------------------------------------------------------- */

static const char *const fn_names[] = {
#define X(id, name, how) name,
    CEL_FUNCTIONS(X)
#undef X
};

const char *ks__cel_fn_name(int fn)
{
    if (fn < 0 || (size_t)fn >= sizeof fn_names / sizeof fn_names[0])
        return "?";
    const char *n = fn_names[fn];
    if (!strcmp(n, "@in"))
        return "@in";
    return n;
}

int ks__cel_fn_lookup(const char *name, bool receiver)
{
    (void)receiver;
    for (size_t i = 0; i < sizeof fn_names / sizeof fn_names[0]; i++)
        if (strcmp(fn_names[i], name) == 0)
            return (int)i;
    return -1;
}

/* ---- compile: resolve names --------------------------------------------------------------- */

typedef struct rscope {
    const char *name;
    const struct rscope *next;
} rscope;

typedef struct resolver {
    ks_cel_program *prog;
    const ks_cel_env *env;
    const char *expr;
    ks_cel_error *err;
    ks_mempool *pool;
    bool failed;
} resolver;

static const char *const type_idents[] = {"int",  "uint", "double", "bool",      "string", "bytes",
                                          "list", "map",  "type",   "null_type", NULL};

static bool in_scope(const resolver *r, const rscope *sc, const char *name)
{
    for (; sc; sc = sc->next)
        if (strcmp(sc->name, name) == 0)
            return true;
    for (size_t i = 0; i < r->env->nvars; i++)
        if (strcmp(r->env->vars[i], name) == 0)
            return true;
    return false;
}

static void rerr(resolver *r, int pos, const char *fmt, const char *arg)
{
    if (r->failed)
        return;
    r->failed = true;
    ks__cel_position(r->expr, pos, &r->err->line, &r->err->column);
    char buf[200];
    snprintf(buf, sizeof buf, fmt, arg);
    snprintf(r->err->msg, sizeof r->err->msg, "ERROR: <input>:%d:%d: %s", r->err->line,
             r->err->column + 1, buf);
}

/* The dotted name of an ident/select chain ("optional", "sets"), or NULL. */
static const char *qualified(ks_mempool *pool, const cel_node *n)
{
    if (n->kind == N_IDENT)
        return n->name;
    if (n->kind == N_SELECT && !n->test_only && !n->optional) {
        const char *base = qualified(pool, n->args[0]);
        if (!base)
            return NULL;
        size_t a = strlen(base), b = strlen(n->name);
        char *q = ks__mempool_alloc(pool, a + b + 2);
        memcpy(q, base, a);
        q[a] = '.';
        memcpy(q + a + 1, n->name, b);
        return q;
    }
    return NULL;
}

static void resolve(resolver *r, cel_node *n, const rscope *sc)
{
    if (!n || r->failed)
        return;
    switch (n->kind) {
    case N_CONST:
        return;
    case N_IDENT: {
        const char *name = n->name[0] == '.' ? n->name + 1 : n->name;
        if (in_scope(r, n->name[0] == '.' ? NULL : sc, name)) {
            n->name = name;
            return;
        }
        for (int i = 0; type_idents[i]; i++)
            if (strcmp(type_idents[i], name) == 0) {
                n->kind = N_CONST;
                n->val = ks__cel_type(type_idents[i]);
                return;
            }
        if (strcmp(name, "optional_type") == 0) {
            n->kind = N_CONST;
            n->val = ks__cel_type("optional_type");
            return;
        }
        if (r->env->unchecked)
            return; /* a runtime error: "no such attribute(s)" */
        rerr(r, n->pos, "undeclared reference to '%s' (in container '')", name);
        return;
    }
    case N_CALL: {
        if (n->has_target) {
            /* a namespaced global function: optional.of(x), sets.contains(a, b), strings.quote(s)
             */
            const char *ns = qualified(r->pool, n->args[0]);
            const char *root = ns;
            const cel_node *t = n->args[0];
            while (t->kind == N_SELECT)
                t = t->args[0];
            if (t->kind == N_IDENT)
                root = t->name;
            if (ns && !in_scope(r, sc, root)) {
                size_t a = strlen(ns), b = strlen(n->name);
                char *q = ks__mempool_alloc(r->pool, a + b + 2);
                memcpy(q, ns, a);
                q[a] = '.';
                memcpy(q + a + 1, n->name, b);
                int id = ks__cel_fn_lookup(q, false);
                if (id >= 0) {
                    n->name = q;
                    n->fn = id;
                    n->has_target = false;
                    n->args++;
                    n->nargs--;
                    for (size_t i = 0; i < n->nargs; i++)
                        resolve(r, n->args[i], sc);
                    return;
                }
            }
        }
        const char *fname = n->name[0] == '.' ? n->name + 1 : n->name;
        n->fn = ks__cel_fn_lookup(fname, n->has_target);
        if (n->fn < 0 || !(ks__cel_fn_how(n->fn) & (n->has_target ? CEL_M : CEL_G))) {
            if (r->env->unchecked) {
                n->fn = -1; /* evaluates to "no such overload" */
                for (size_t i = 0; i < n->nargs; i++)
                    resolve(r, n->args[i], sc);
                return;
            }
            rerr(r, n->pos, "undeclared reference to '%s' (in container '')", fname);
            return;
        }
        for (size_t i = 0; i < n->nargs; i++)
            resolve(r, n->args[i], sc);
        /* cel.ValidateRegexLiterals: a constant pattern is checked (and compiled) here */
        if ((n->fn == FN_MATCHES || n->fn == FN_FIND || n->fn == FN_FINDALL) && n->nargs >= 2 &&
            n->args[1]->kind == N_CONST && n->args[1]->val.kind == KS_CEL_STRING && !r->failed) {
            char msg[300];
            cel_regex *re = ks__cel_regex_compile(n->args[1]->val.s.ptr, n->args[1]->val.s.len, msg,
                                                  sizeof msg);
            if (!re) {
                rerr(r, n->args[1]->pos, "%s", msg);
                return;
            }
            ks_cel_program *p = r->prog;
            cel_regex **nr = realloc(p->regexes, sizeof(cel_regex *) * (p->nregexes + 1));
            if (!nr) {
                ks__cel_regex_free(re);
                rerr(r, n->pos, "%s", "out of memory");
                return;
            }
            p->regexes = nr;
            p->regexes[p->nregexes++] = re;
            n->re = re;
        }
        return;
    }
    case N_COMPREHENSION: {
        resolve(r, n->range, sc);
        resolve(r, n->accu_init, sc);
        rscope accu = {n->accu_var, sc};
        rscope it = {n->iter_var, &accu};
        rscope it2 = {n->iter_var2 ? n->iter_var2 : "#unused2", &it};
        resolve(r, n->loop_cond, &it2);
        resolve(r, n->loop_step, &it2);
        resolve(r, n->result, &accu);
        return;
    }
    default:
        for (size_t i = 0; i < n->nargs; i++)
            resolve(r, n->args[i], sc);
        return;
    }
}

typedef struct escope escope;
static ks_cel_value eval(cel_ctx *c, const cel_node *n, const escope *sc);

/* cel-go's decOptimize (OptOptimize, which Kubernetes sets): list and map literals of constants
 * and type conversions of a constant become constants (no construction cost at runtime), and
 * `x in [constant primitives]` becomes a set membership test (no cost; an empty constant list
 * makes the whole test false without evaluating x). Bottom-up, after name resolution. */
static void fold(resolver *r, cel_node *n)
{
    if (!n || r->failed)
        return;
    if (n->kind == N_COMPREHENSION) {
        fold(r, n->range);
        fold(r, n->accu_init);
        fold(r, n->loop_cond);
        fold(r, n->loop_step);
        fold(r, n->result);
        return;
    }
    for (size_t i = 0; i < n->nargs; i++)
        fold(r, n->args[i]);
    bool all_const = true;
    for (size_t i = 0; i < n->nargs; i++)
        if (n->args[i]->kind != N_CONST)
            all_const = false;
    cel_ctx c = {.a = &r->prog->pool};
    if ((n->kind == N_LIST || n->kind == N_MAP) && all_const) {
        n->val = eval(&c, n, NULL);
        n->kind = N_CONST;
        return;
    }
    if (n->kind != N_CALL)
        return;
    bool conversion = n->fn == FN_INT || n->fn == FN_UINT || n->fn == FN_DOUBLE ||
                      n->fn == FN_STRING || n->fn == FN_BYTES || n->fn == FN_BOOL ||
                      n->fn == FN_TYPE || n->fn == FN_DYN;
    if (conversion && !n->has_target && n->nargs == 1 && all_const) {
        ks_cel_value v = eval(&c, n, NULL);
        if (v.kind == KS_CEL_ERROR) {
            char msg[300];
            snprintf(msg, sizeof msg, "%.*s", (int)v.s.len, v.s.ptr);
            rerr(r, n->pos, "%s", msg);
            return;
        }
        n->val = v;
        n->kind = N_CONST;
        return;
    }
    /* quantity("40Gi"), semver("1.2.3"[, true]) on literals: parsed once here instead of for
     * every device. Not a constant (cel-go does not fold them: the call keeps its cost and
     * stays a call), only its result is kept; an argument that does not parse keeps the
     * runtime path, so its error and cost are the same as before. */
    if ((n->fn == FN_QUANTITY || n->fn == FN_SEMVER) && !n->has_target && n->nargs >= 1 &&
        n->nargs <= 2 && all_const && n->args[0]->val.kind == KS_CEL_STRING) {
        ks_cel_value argv[2];
        for (size_t i = 0; i < n->nargs; i++)
            argv[i] = n->args[i]->val;
        ks_cel_value v = ks__cel_call(&c, n->fn, false, argv, n->nargs);
        if (v.kind == KS_CEL_QUANTITY || v.kind == KS_CEL_SEMVER) {
            n->val = v;
            n->memo = true;
        }
        return;
    }
    if (n->fn == FN_IN && n->nargs == 2 && n->args[1]->kind == N_CONST &&
        n->args[1]->val.kind == KS_CEL_LIST) {
        const ks_cel_list *l = n->args[1]->val.list;
        if (l->n == 0) {
            n->kind = N_CONST;
            n->val = ks_cel_bool(false);
            return;
        }
        for (size_t i = 0; i < l->n; i++) {
            ks_cel_kind k = l->items[i].kind;
            if (k != KS_CEL_BOOL && k != KS_CEL_INT && k != KS_CEL_UINT && k != KS_CEL_DOUBLE &&
                k != KS_CEL_STRING)
                return;
        }
        n->set_membership = true;
    }
}

static unsigned char st_of_kind(ks_cel_kind k)
{
    switch (k) {
    case KS_CEL_BOOL:
        return ST_BOOL;
    case KS_CEL_INT:
        return ST_INT;
    case KS_CEL_UINT:
        return ST_UINT;
    case KS_CEL_DOUBLE:
        return ST_DOUBLE;
    case KS_CEL_STRING:
        return ST_STRING;
    case KS_CEL_BYTES:
        return ST_BYTES;
    case KS_CEL_LIST:
        return ST_LIST;
    case KS_CEL_MAP:
        return ST_MAP;
    default:
        return ST_OTHER;
    }
}

/* A light static typing (the checker's view, where it is simple to know): enough to tell which
 * calls cel-go resolves to one overload and which it dispatches at runtime. DYN when unsure. */
static unsigned char type_of(resolver *r, cel_node *n, const rscope *sc)
{
    if (!n)
        return ST_DYN;
    unsigned char t = ST_DYN;
    switch (n->kind) {
    case N_CONST:
        t = st_of_kind(n->val.kind);
        break;
    case N_LIST:
    case N_MAP:
        for (size_t i = 0; i < n->nargs; i++)
            type_of(r, n->args[i], sc);
        t = n->kind == N_LIST ? ST_LIST : ST_MAP;
        break;
    case N_IDENT:
        t = ST_DYN;
        break;
    case N_SELECT:
    case N_INDEX: {
        unsigned char base = type_of(r, n->args[0], sc);
        if (n->kind == N_INDEX)
            type_of(r, n->args[1], sc);
        if (n->test_only) {
            t = ST_BOOL;
            break;
        }
        const cel_node *o = n->args[0];
        /* DRA's device: driver string, attributes/capacity map(string, map(string, ...)) */
        if (r->env->dra_device && n->kind == N_SELECT && o->kind == N_IDENT &&
            strcmp(o->name, "device") == 0 && !in_scope(r, sc, "device#local")) {
            if (!strcmp(n->name, "driver"))
                t = ST_STRING;
            else if (!strcmp(n->name, "attributes") || !strcmp(n->name, "capacity"))
                t = ST_MAP;
            else if (!strcmp(n->name, "allowMultipleAllocations"))
                t = ST_BOOL;
            break;
        }
        if (base == ST_MAP && (o->kind == N_SELECT) && o->args[0]->kind == N_IDENT &&
            r->env->dra_device && strcmp(o->args[0]->name, "device") == 0)
            t = ST_MAP; /* device.attributes[domain]: map(string, dyn) */
        else if (base == ST_MAP && (o->kind == N_SELECT || o->kind == N_INDEX) &&
                 r->env->dra_device && o->args[0]->kind == N_SELECT &&
                 o->args[0]->args[0]->kind == N_IDENT &&
                 !strcmp(o->args[0]->args[0]->name, "device") &&
                 !strcmp(o->args[0]->name, "capacity"))
            t = ST_OTHER; /* device.capacity[domain][id]: Quantity */
        break;
    }
    case N_AND:
    case N_OR:
    case N_NOT_STRICTLY_FALSE:
        for (size_t i = 0; i < n->nargs; i++)
            type_of(r, n->args[i], sc);
        t = ST_BOOL;
        break;
    case N_COND: {
        type_of(r, n->args[0], sc);
        unsigned char a = type_of(r, n->args[1], sc), b = type_of(r, n->args[2], sc);
        t = a == b ? a : ST_DYN;
        break;
    }
    case N_COMPREHENSION: {
        type_of(r, n->range, sc);
        unsigned char init = type_of(r, n->accu_init, sc);
        type_of(r, n->loop_cond, sc);
        type_of(r, n->loop_step, sc);
        unsigned char res = type_of(r, n->result, sc);
        t = (n->result->kind == N_IDENT && strcmp(n->result->name, n->accu_var) == 0) ? init : res;
        break;
    }
    case N_CALL: {
        unsigned char a[8] = {0};
        for (size_t i = 0; i < n->nargs && i < 8; i++)
            a[i] = type_of(r, n->args[i], sc);
        bool str_or_bytes =
            a[0] == ST_STRING || a[0] == ST_BYTES || a[1] == ST_STRING || a[1] == ST_BYTES;
        /* unresolved: the static types leave several overloads of this arity possible */
        bool unresolved = false;
        switch (n->fn) {
        case FN_INDEXOF:
        case FN_LASTINDEXOF:
        case FN_REVERSE:
            unresolved = a[0] == ST_DYN;
            break;
        case FN_ISGT:
        case FN_ISLT:
        case FN_COMPARETO:
            unresolved = a[0] == ST_DYN && a[1] == ST_DYN;
            break;
        default:
            break; /* (conversions and add/sub keep evalUnary/evalBinary: checked upstream) */
        }
        n->varargs = n->nargs >= 3 || unresolved;
        switch (n->fn) {
        case FN_IN:
            n->untyped_call = a[1] != ST_LIST;
            t = ST_BOOL;
            break;
        case FN_ADD:
            n->untyped_call = a[0] == ST_DYN && a[1] == ST_DYN;
            t = a[0] != ST_DYN ? a[0] : a[1];
            break;
        case FN_LT:
        case FN_LE:
        case FN_GT:
        case FN_GE:
            n->untyped_call = !str_or_bytes && a[0] == ST_DYN && a[1] == ST_DYN;
            t = ST_BOOL;
            break;
        case FN_STRING:
        case FN_BYTES:
            n->untyped_call = a[n->nargs ? 0 : 0] == ST_DYN;
            t = n->fn == FN_STRING ? ST_STRING : ST_BYTES;
            break;
        case FN_EQ:
        case FN_NE:
        case FN_NOT:
        case FN_CONTAINS:
        case FN_STARTS:
        case FN_ENDS:
        case FN_MATCHES:
        case FN_ISQUANTITY:
        case FN_ISSEMVER:
        case FN_ISGT:
        case FN_ISLT:
        case FN_ISINT:
        case FN_ISSORTED:
        case FN_INCLUDES:
        case FN_SETS_CONTAINS:
        case FN_SETS_EQUIV:
        case FN_SETS_INTERSECTS:
        case FN_HASVALUE:
        case FN_BOOL:
            t = ST_BOOL;
            break;
        case FN_SIZE:
        case FN_INT:
        case FN_INDEXOF:
        case FN_LASTINDEXOF:
        case FN_SIGN:
        case FN_COMPARETO:
        case FN_ASINT:
        case FN_MAJOR:
        case FN_MINOR:
        case FN_PATCH:
            t = ST_INT;
            break;
        case FN_UINT:
            t = ST_UINT;
            break;
        case FN_DOUBLE:
        case FN_ASFLOAT:
            t = ST_DOUBLE;
            break;
        case FN_CHARAT:
        case FN_LOWER:
        case FN_UPPER:
        case FN_REPLACE:
        case FN_SUBSTRING:
        case FN_TRIM:
        case FN_JOIN:
        case FN_QUOTE:
        case FN_FORMAT:
        case FN_FIND:
            t = ST_STRING;
            break;
        case FN_SPLIT:
        case FN_FINDALL:
        case FN_DISTINCT:
        case FN_FLATTEN:
        case FN_SLICE:
        case FN_SORT:
        case FN_LISTS_RANGE:
            t = ST_LIST;
            break;
        case FN_REVERSE:
            t = a[0];
            break;
        case FN_SUB:
        case FN_MUL:
        case FN_DIV:
        case FN_MOD:
        case FN_NEG:
            t = a[0] != ST_DYN ? a[0] : a[1];
            break;
        case FN_QUANTITY:
        case FN_QADD:
        case FN_QSUB:
        case FN_SEMVER:
        case FN_OPT_OF:
        case FN_OPT_NONE:
        case FN_OPT_OFNZ:
        case FN_TYPE:
            t = ST_OTHER;
            break;
        default:
            t = ST_DYN;
            break;
        }
        (void)str_or_bytes;
        break;
    }
    }
    if (n->kind == N_COMPREHENSION) {
        /* scopes only matter for the "device" shadowing check above */
    }
    n->st = t;
    return t;
}

ks_cel_program *ks_cel_compile(const char *expr, const ks_cel_env *env, ks_cel_error *err)
{
    return ks_cel_compile_n(expr, strlen(expr), env, err);
}

ks_cel_program *ks_cel_compile_n(const char *expr, size_t len, const ks_cel_env *env,
                                 ks_cel_error *err)
{
    memset(err, 0, sizeof *err);
    ks_cel_program *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    p->cost_limit = env->cost_limit;
    p->root = ks__cel_parse(&p->pool, expr, len, err);
    if (p->root) {
        resolver r = {.prog = p, .env = env, .expr = expr, .err = err, .pool = &p->pool};
        resolve(&r, p->root, NULL);
        fold(&r, p->root);
        unsigned char t = type_of(&r, p->root, NULL);
        /* DRA's compiler: "must evaluate to bool or the unknown type", for the scalar types our
         * light typing is sure of (other non-bool results fail at match time instead) */
        static const char *const scalar_names[] = {[ST_INT] = "int",
                                                   [ST_UINT] = "uint",
                                                   [ST_DOUBLE] = "double",
                                                   [ST_STRING] = "string",
                                                   [ST_BYTES] = "bytes"};
        if (!r.failed && env->dra_device && t >= ST_INT && t <= ST_BYTES) {
            snprintf(err->msg, sizeof err->msg, "must evaluate to bool or the unknown type, not %s",
                     scalar_names[t]);
            r.failed = true;
        }
        if (r.failed)
            p->root = NULL;
    }
    if (!p->root) {
        ks_cel_program_free(p);
        return NULL;
    }
    return p;
}

void ks_cel_program_free(ks_cel_program *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nregexes; i++)
        ks__cel_regex_free(p->regexes[i]);
    free(p->regexes);
    ks__mempool_free(&p->pool);
    free(p);
}

/* ---- evaluation --------------------------------------------------------------------------- */

struct escope {
    const char *name;
    ks_cel_value val;
    const struct escope *next;
};

bool ks__cel_charge(cel_ctx *c, uint64_t cost)
{
    c->cost += cost;
    if (c->limit && c->cost > c->limit)
        c->cancelled = true;
    return !c->cancelled;
}

static ks_cel_value cancelled(cel_ctx *c)
{
    return ks__cel_err(c->a, "operation cancelled: actual cost limit exceeded");
}

static ks_cel_value lookup(cel_ctx *c, const char *name, const escope *sc, int pos)
{
    for (; sc; sc = sc->next)
        if (strcmp(sc->name, name) == 0)
            return sc->val;
    for (size_t i = 0; i < c->nvars; i++)
        if (strcmp(c->vars[i].name, name) == 0)
            return c->vars[i].value;
    return ks__cel_err(c->a, "no such attribute(s): %s", name);
}

/* Map lookup with CEL's numeric key equivalence; NULL if absent. */
const ks_cel_value *ks__cel_map_get(const ks_cel_map *m, const ks_cel_value *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (ks_cel_equal(&m->keys[i], key))
            return &m->vals[i];
    return NULL;
}

static ks_cel_value opt_of(cel_ctx *c, ks_cel_value v)
{
    ks_cel_value *p = ks__mempool_alloc(c->a, sizeof *p);
    *p = v;
    ks_cel_value r = {.kind = KS_CEL_OPTIONAL, .opt = p};
    return r;
}

static const ks_cel_value opt_none = {.kind = KS_CEL_OPTIONAL, .opt = NULL};

/* operand.field (select) or operand[key] (index); optional: the .? / [?] forms. */
static ks_cel_value qualify(cel_ctx *c, ks_cel_value obj, const ks_cel_value *key, bool is_select,
                            bool optional, bool test_only)
{
    if (obj.kind == KS_CEL_ERROR)
        return obj;
    if (key->kind == KS_CEL_ERROR)
        return *key;
    if (obj.kind == KS_CEL_OPTIONAL) {
        /* qualifying an optional value keeps it optional (cel-go's optional chaining) */
        if (!obj.opt)
            return opt_none;
        ks_cel_value r = qualify(c, *obj.opt, key, is_select, true, test_only);
        return r;
    }
    if (obj.kind == KS_CEL_MAP) {
        if (!is_select && key->kind != KS_CEL_INT && key->kind != KS_CEL_UINT &&
            key->kind != KS_CEL_BOOL && key->kind != KS_CEL_STRING && key->kind != KS_CEL_DOUBLE)
            return ks__cel_err(c->a, "unsupported key type");
        const ks_cel_value *v = ks__cel_map_get(obj.map, key);
        if (test_only)
            return ks_cel_bool(v != NULL);
        if (!v && obj.map->missing_is_empty) {
            static const ks_cel_map empty_map = {0};
            ks_cel_value e = {.kind = KS_CEL_MAP, .map = &empty_map};
            return optional ? opt_of(c, e) : e;
        }
        if (!v) {
            if (optional)
                return opt_none;
            if (key->kind == KS_CEL_STRING)
                return ks__cel_err(c->a, "no such key: %.*s", (int)key->s.len, key->s.ptr);
            return ks__cel_err(c->a, "no such key: %s", ks_cel_format(c->a, key));
        }
        return optional ? opt_of(c, *v) : *v;
    }
    if (obj.kind == KS_CEL_LIST && !is_select) {
        int64_t idx;
        if (key->kind == KS_CEL_INT) {
            idx = key->i;
        } else if (key->kind == KS_CEL_UINT) {
            idx = key->u > INT64_MAX ? -1 : (int64_t)key->u;
        } else if (key->kind == KS_CEL_DOUBLE && key->d == floor(key->d) && fabs(key->d) < 9.2e18) {
            idx = (int64_t)key->d;
        } else if (key->kind == KS_CEL_DOUBLE) {
            return ks__cel_err(c->a, "unsupported index value %s in list",
                               ks_cel_format(c->a, key));
        } else {
            return ks__cel_err(c->a, "no such overload");
        }
        if (idx < 0 || (uint64_t)idx >= obj.list->n) {
            if (optional)
                return opt_none;
            return ks__cel_err(c->a, "index out of bounds: %" PRId64, idx);
        }
        return optional ? opt_of(c, obj.list->items[idx]) : obj.list->items[idx];
    }
    if (is_select)
        return ks__cel_err(c->a, "no such overload");
    return ks__cel_err(c->a, "no such overload");
}

static ks_cel_value eval_list(cel_ctx *c, const cel_node *n, const escope *sc)
{
    ks_cel_value *items = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (n->nargs ? n->nargs : 1));
    size_t k = 0;
    for (size_t i = 0; i < n->nargs; i++) {
        ks_cel_value v = eval(c, n->args[i], sc);
        if (v.kind == KS_CEL_ERROR) {
            ks__cel_charge(c, 10); /* cel-go's observer charges the construction anyway */
            return c->cancelled ? cancelled(c) : v;
        }
        if (n->opt_flags && n->opt_flags[i]) {
            if (v.kind != KS_CEL_OPTIONAL)
                return ks__cel_err(c->a, "no such overload");
            if (!v.opt)
                continue;
            v = *v.opt;
        }
        items[k++] = v;
    }
    if (!ks__cel_charge(c, 10))
        return cancelled(c);
    ks_cel_list *l = ks__mempool_alloc(c->a, sizeof *l);
    l->n = k;
    l->items = items;
    ks_cel_value r = {.kind = KS_CEL_LIST, .list = l};
    return r;
}

static ks_cel_value eval_map(cel_ctx *c, const cel_node *n, const escope *sc)
{
    size_t cnt = n->nargs / 2;
    ks_cel_value *keys = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (cnt ? cnt : 1));
    ks_cel_value *vals = ks__mempool_alloc(c->a, sizeof(ks_cel_value) * (cnt ? cnt : 1));
    size_t k = 0;
    for (size_t i = 0; i < cnt; i++) {
        ks_cel_value key = eval(c, n->args[2 * i], sc);
        ks_cel_value v = key;
        if (key.kind != KS_CEL_ERROR)
            v = eval(c, n->args[2 * i + 1], sc);
        if (v.kind == KS_CEL_ERROR) {
            ks__cel_charge(c, 30); /* as for lists: the construction is charged anyway */
            return c->cancelled ? cancelled(c) : v;
        }
        if (key.kind != KS_CEL_INT && key.kind != KS_CEL_UINT && key.kind != KS_CEL_BOOL &&
            key.kind != KS_CEL_STRING)
            return ks__cel_err(c->a, "unsupported key type");
        if (n->opt_flags && n->opt_flags[i]) {
            if (v.kind != KS_CEL_OPTIONAL)
                return ks__cel_err(c->a, "no such overload");
            if (!v.opt)
                continue;
            v = *v.opt;
        }
        for (size_t j = 0; j < k; j++)
            if (ks_cel_equal(&keys[j], &key))
                return ks__cel_err(c->a, "Failed with repeated key");
        keys[k] = key;
        vals[k++] = v;
    }
    if (!ks__cel_charge(c, 30))
        return cancelled(c);
    ks_cel_map *m = ks__mempool_alloc(c->a, sizeof *m);
    m->n = k;
    m->keys = keys;
    m->vals = vals;
    ks_cel_value r = {.kind = KS_CEL_MAP, .map = m};
    return r;
}

/* && and ||: cel-go's evalAnd/evalOr, commutative over errors: false && error == false. */
static ks_cel_value eval_logic(cel_ctx *c, const cel_node *n, const escope *sc, bool is_and)
{
    ks_cel_value err = {.kind = KS_CEL_NULL};
    bool have_err = false;
    for (size_t i = 0; i < 2; i++) {
        ks_cel_value v = eval(c, n->args[i], sc);
        if (c->cancelled)
            return cancelled(c);
        if (v.kind == KS_CEL_BOOL) {
            if (v.b != is_and)
                return v; /* false for &&, true for || decides */
            continue;
        }
        if (!have_err) {
            have_err = true;
            err = v.kind == KS_CEL_ERROR ? v : ks__cel_err(c->a, "no such overload");
        }
    }
    if (have_err)
        return err;
    return ks_cel_bool(is_and);
}

/* The Go type cel-go names in its messages. */
static const char *go_type_name(const ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_NULL:
        return "types.Null";
    case KS_CEL_BOOL:
        return "types.Bool";
    case KS_CEL_INT:
        return "types.Int";
    case KS_CEL_UINT:
        return "types.Uint";
    case KS_CEL_DOUBLE:
        return "types.Double";
    case KS_CEL_STRING:
        return "types.String";
    case KS_CEL_BYTES:
        return "types.Bytes";
    case KS_CEL_OPTIONAL:
        return "*types.Optional";
    case KS_CEL_TYPE:
        return "*types.Type";
    case KS_CEL_QUANTITY:
        return "cel.Quantity";
    case KS_CEL_SEMVER:
        return "cel.Semver";
    default:
        return ks__cel_type_name(v);
    }
}

static ks_cel_value eval_comprehension(cel_ctx *c, const cel_node *n, const escope *sc)
{
    ks_cel_value range = eval(c, n->range, sc);
    if (range.kind == KS_CEL_ERROR)
        return range;
    /* cel-go's evalFold does not stop on an erroring accumulator init: the loop and the result
     * see the error (same outcome, since everything strict propagates it; same cost) */
    ks_cel_value accu = eval(c, n->accu_init, sc);
    size_t cnt;
    if (range.kind == KS_CEL_LIST)
        cnt = range.list->n;
    else if (range.kind == KS_CEL_MAP)
        cnt = range.map->n;
    else
        return ks__cel_err(c->a, "got '%s', expected iterable type", go_type_name(&range));
    escope accu_sc = {n->accu_var, accu, sc};
    for (size_t i = 0; i < cnt; i++) {
        escope it, it2;
        if (range.kind == KS_CEL_LIST) {
            if (n->iter_var2) {
                it = (escope){n->iter_var, ks_cel_int((int64_t)i), &accu_sc};
                it2 = (escope){n->iter_var2, range.list->items[i], &it};
            } else {
                it = (escope){n->iter_var, range.list->items[i], &accu_sc};
                it2 = it;
            }
        } else {
            it = (escope){n->iter_var, range.map->keys[i], &accu_sc};
            it2 = n->iter_var2 ? (escope){n->iter_var2, range.map->vals[i], &it} : it;
        }
        const escope *inner = n->iter_var2 ? &it2 : &it;
        ks_cel_value cond = eval(c, n->loop_cond, inner);
        if (c->cancelled)
            return cancelled(c);
        if (cond.kind == KS_CEL_BOOL && !cond.b)
            break;
        if (cond.kind == KS_CEL_ERROR)
            return cond;
        accu_sc.val = eval(c, n->loop_step, inner);
        if (c->cancelled)
            return cancelled(c);
    }
    return eval(c, n->result, &accu_sc);
}

/* cel-go plans a.b[c] chains as one attribute: 1 for the attribute, 1 per qualifier. Rooted at
 * an identifier, the identifier's 1 is the attribute's; rooted at any other expression (a
 * literal, a call), it is a relative attribute whose own base cost comes on top. */
static bool relative_base(const cel_node *n)
{
    const cel_node *o = n->args[0];
    return !n->optional && o->kind != N_IDENT && o->kind != N_SELECT && o->kind != N_INDEX &&
           (n->kind == N_SELECT || n->args[1]->kind == N_CONST);
}

/* The cost of a qualifier: 1; an optional one (.?f, [?k]) is free in cel-go's tracker. */
static uint64_t qualifier_cost(const cel_node *n)
{
    return n->optional ? 0 : 1 + (uint64_t)relative_base(n);
}

static ks_cel_value eval(cel_ctx *c, const cel_node *n, const escope *sc)
{
    if (c->cancelled)
        return cancelled(c);
    switch (n->kind) {
    case N_CONST:
        return n->val;
    case N_IDENT:
        if (!ks__cel_charge(c, 1))
            return cancelled(c);
        return lookup(c, n->name, sc, n->pos);
    case N_SELECT: {
        ks_cel_value obj = eval(c, n->args[0], sc);
        /* an attribute's qualifiers stop at the first that fails (not charged after it) */
        if (obj.kind == KS_CEL_ERROR && !relative_base(n))
            return obj;
        /* PresenceTestHasCost(false): Kubernetes does not charge has(); a qualifier on an
         * operand that is not itself an attribute is a relative attribute, with a base cost */
        if (!n->test_only && !ks__cel_charge(c, qualifier_cost(n)))
            return cancelled(c);
        ks_cel_value key = {.kind = KS_CEL_STRING};
        key.s.ptr = n->name;
        key.s.len = strlen(n->name);
        if (n->test_only && obj.kind == KS_CEL_OPTIONAL) {
            /* has() through an optional: false when empty, else the test on the value */
            if (!obj.opt)
                return ks_cel_bool(false);
            obj = *obj.opt;
        }
        if (n->test_only && obj.kind != KS_CEL_MAP && obj.kind != KS_CEL_ERROR)
            return ks__cel_err(c->a, "no such overload");
        return qualify(c, obj, &key, true, n->optional, n->test_only);
    }
    case N_INDEX: {
        ks_cel_value obj = eval(c, n->args[0], sc);
        if (obj.kind == KS_CEL_ERROR && !relative_base(n))
            return obj; /* (as for selects: qualification stops there) */
        ks_cel_value key = eval(c, n->args[1], sc);
        if (!ks__cel_charge(c, qualifier_cost(n)))
            return cancelled(c);
        return qualify(c, obj, &key, false, n->optional, false);
    }
    case N_LIST:
        return eval_list(c, n, sc);
    case N_MAP:
        return eval_map(c, n, sc);
    case N_AND:
        return eval_logic(c, n, sc, true);
    case N_OR:
        return eval_logic(c, n, sc, false);
    case N_COND: {
        ks_cel_value cond = eval(c, n->args[0], sc);
        if (cond.kind == KS_CEL_ERROR)
            return cond;
        if (cond.kind != KS_CEL_BOOL)
            return ks__cel_err(c->a, "no such overload");
        const cel_node *branch = n->args[cond.b ? 1 : 2];
        ks_cel_value v = eval(c, branch, sc);
        /* cel-go plans every ternary as a conditional attribute: a branch that is itself an
         * attribute (a.b, a[k], x) is resolved inside it, so its own base cost (1) is never
         * charged, only its qualifiers */
        if ((branch->kind == N_IDENT || (branch->kind == N_SELECT && !branch->test_only) ||
             branch->kind == N_INDEX) &&
            c->cost > 0 && !c->cancelled)
            c->cost--;
        return v;
    }
    case N_NOT_STRICTLY_FALSE: {
        ks_cel_value v = eval(c, n->args[0], sc);
        if (c->cancelled)
            return cancelled(c);
        if (!ks__cel_charge(c, 1)) /* @not_strictly_false is a call: cost 1 */
            return cancelled(c);
        return ks_cel_bool(v.kind != KS_CEL_BOOL || v.b);
    }
    case N_COMPREHENSION:
        return eval_comprehension(c, n, sc);
    case N_CALL: {
        if ((n->fn == FN_OR || n->fn == FN_ORVALUE) && n->has_target && n->nargs == 2) {
            /* cel-go's evalOptionalOr/evalOptionalOrValue: not calls (no cost), and the
             * alternative is evaluated only when the optional is empty */
            ks_cel_value o = eval(c, n->args[0], sc);
            if (c->cancelled)
                return cancelled(c);
            if (o.kind == KS_CEL_ERROR)
                return o;
            if (o.kind != KS_CEL_OPTIONAL)
                return ks__cel_err(c->a, "no such overload: %s", n->fn == FN_OR ? "or" : "orValue");
            if (o.opt)
                return n->fn == FN_OR ? o : *o.opt;
            ks_cel_value alt = eval(c, n->args[1], sc);
            if (n->fn == FN_OR && alt.kind != KS_CEL_OPTIONAL && alt.kind != KS_CEL_ERROR)
                return ks__cel_err(c->a, "no such overload: or");
            return alt;
        }
        if (n->set_membership) {
            ks_cel_value x = eval(c, n->args[0], sc);
            if (x.kind == KS_CEL_ERROR)
                return x;
            /* upstream looks x up in a Go map: bytes ([]byte) and Kubernetes' Semver (slices
             * inside) cannot be hashed and Go panics, which cel-go reports as this error */
            if (x.kind == KS_CEL_BYTES || x.kind == KS_CEL_SEMVER)
                return ks__cel_err(c->a,
                                   "internal error: runtime error: hash of unhashable type %s",
                                   x.kind == KS_CEL_BYTES ? "types.Bytes" : "cel.Semver");
            const ks_cel_list *l = n->args[1]->val.list;
            for (size_t i = 0; i < l->n; i++)
                if (ks_cel_equal(&l->items[i], &x))
                    return ks_cel_bool(true);
            return ks_cel_bool(false);
        }
        ks_cel_value argv[8];
        size_t na = n->nargs < 8 ? n->nargs : 8;
        for (size_t i = 0; i < na; i++) {
            argv[i] = eval(c, n->args[i], sc);
            if (c->cancelled)
                return cancelled(c);
            if (n->varargs && argv[i].kind == KS_CEL_ERROR)
                return argv[i];
        }
        /* strict: the first error argument is the result (cel-go returns the first in order);
         * cel-go's cost tracker still charges the call */
        for (size_t i = 0; i < na; i++)
            if (argv[i].kind == KS_CEL_ERROR) {
                ks_cel_value e = argv[i];
                /* (a call with a precompiled regex is cel-go's specialised matcher, not observed
                 * as a call when its argument failed) */
                if (!n->re)
                    ks__cel_charge(c, ks__cel_call_cost(n->fn, argv, na, &e, n->untyped_call));
                return c->cancelled ? cancelled(c) : e;
            }
        if (n->memo) { /* what ks__cel_call returns and charges, without parsing again */
            ks__cel_charge(c, ks__cel_call_cost(n->fn, argv, na, &n->val, n->untyped_call));
            return c->cancelled ? cancelled(c) : n->val;
        }
        c->re = n->re;
        c->untyped = n->untyped_call;
        ks_cel_value r = ks__cel_call(c, n->fn, n->has_target, argv, na);
        c->re = NULL;
        if (c->cancelled)
            return cancelled(c);
        return r;
    }
    }
    return ks__cel_err(c->a, "internal error: unknown node");
}

int ks_cel_eval(const ks_cel_program *p, const ks_cel_binding *vars, size_t nvars,
                ks_mempool *arena, ks_cel_value *out, uint64_t *cost, ks_cel_error *err)
{
    cel_ctx c = {.a = arena, .vars = vars, .nvars = nvars, .limit = p->cost_limit};
    ks_cel_value v = eval(&c, p->root, NULL);
    if (cost)
        *cost = c.cost;
    if (c.cancelled)
        v = cancelled(&c);
    if (v.kind == KS_CEL_ERROR) {
        memset(err, 0, sizeof *err);
        snprintf(err->msg, sizeof err->msg, "%.*s", (int)v.s.len, v.s.ptr);
        return -1;
    }
    *out = v;
    return 0;
}
