/*
 * The cel-spec conformance runner: reads cel.dev/expr's tests/simple/testdata/<file>.textproto,
 * compiles and evaluates each test's expression with core/cel, compares the value (strictly: an
 * int is not a uint) or the presence of an error, and prints per-file figures.
 *
 *   cel_conformance DATA_DIR EXCLUSIONS_FILE FILE...     (exit 1 on any failure not excluded)
 *   cel_conformance --expr 'EXPR'                          (evaluates one expression, for
 * debugging)
 *
 * The exclusions file (pattern, then two spaces or a tab, then the reason) lists "FILE/SECTION/TEST
 * reason", "FILE/SECTION/ALL reason" or "FILE/ALL reason" (ALL being a star) lines (docs/CEL.md
 * explains each); an excluded test that passes is reported, so the list cannot silently outlive the
 * gaps it describes. Tests whose expected value or bindings hold protobuf messages (object_value)
 * are counted apart as "messages": messages are out of scope.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "textproto.h"
#include "util/readfile.h"

typedef struct excl {
    char *pattern;
    char *reason;
    bool used;
} excl;

static excl *excls;
static size_t nexcl;
static bool verbose;

static void load_exclusions(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ')
            p++;
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        /* the pattern ends at a tab or at two spaces (test names contain single spaces) */
        char *sp = p;
        while (*sp && *sp != '\t' && *sp != '\n' && !(sp[0] == ' ' && sp[1] == ' '))
            sp++;
        if (*sp)
            *sp++ = 0;
        else
            sp = NULL;
        while (sp && (*sp == ' ' || *sp == '\t'))
            sp++;
        excls = realloc(excls, sizeof(excl) * (nexcl + 1));
        excls[nexcl].pattern = strdup(p);
        excls[nexcl].reason = strdup(sp ? sp : "");
        excls[nexcl].used = false;
        nexcl++;
    }
    fclose(f);
}

static excl *excluded(const char *file, const char *section, const char *test)
{
    char full[512], sec[512], all[512];
    snprintf(full, sizeof full, "%s/%s/%s", file, section, test);
    snprintf(sec, sizeof sec, "%s/%s/*", file, section);
    snprintf(all, sizeof all, "%s/*", file);
    for (size_t i = 0; i < nexcl; i++)
        if (strcmp(excls[i].pattern, full) == 0 || strcmp(excls[i].pattern, sec) == 0 ||
            strcmp(excls[i].pattern, all) == 0)
            return &excls[i];
    return NULL;
}

static bool has_field(const tp_node *n, const char *name)
{
    for (const tp_node *c = n ? n->child : NULL; c; c = c->next) {
        if (strcmp(c->name, name) == 0)
            return true;
        if (c->is_msg && has_field(c, name))
            return true;
    }
    return false;
}

/* A cel.expr.Value message to a ks_cel_value; false when it holds something out of scope. */
static bool to_value(ks_mempool *a, const tp_node *v, ks_cel_value *out)
{
    const tp_node *f = v ? v->child : NULL;
    if (!f)
        return false;
    memset(out, 0, sizeof *out);
    if (strcmp(f->name, "null_value") == 0) {
        out->kind = KS_CEL_NULL;
    } else if (strcmp(f->name, "bool_value") == 0) {
        out->kind = KS_CEL_BOOL;
        out->b = strcmp(f->str, "true") == 0;
    } else if (strcmp(f->name, "int64_value") == 0) {
        out->kind = KS_CEL_INT;
        out->i = strtoll(f->str, NULL, 10);
    } else if (strcmp(f->name, "uint64_value") == 0) {
        out->kind = KS_CEL_UINT;
        out->u = strtoull(f->str, NULL, 10);
    } else if (strcmp(f->name, "double_value") == 0) {
        out->kind = KS_CEL_DOUBLE;
        if (strcasecmp(f->str, "inf") == 0 || strcasecmp(f->str, "infinity") == 0)
            out->d = INFINITY;
        else if (strcasecmp(f->str, "-inf") == 0 || strcasecmp(f->str, "-infinity") == 0)
            out->d = -INFINITY;
        else if (strcasecmp(f->str, "nan") == 0)
            out->d = NAN;
        else
            out->d = strtod(f->str, NULL);
    } else if (strcmp(f->name, "string_value") == 0 || strcmp(f->name, "bytes_value") == 0) {
        char *p = ks__mempool_alloc(a, f->len + 1);
        memcpy(p, f->str, f->len);
        out->kind = f->name[0] == 's' ? KS_CEL_STRING : KS_CEL_BYTES;
        out->s.ptr = p;
        out->s.len = f->len;
    } else if (strcmp(f->name, "type_value") == 0) {
        out->kind = KS_CEL_TYPE;
        char *p = ks__mempool_alloc(a, f->len + 1);
        memcpy(p, f->str, f->len);
        out->s.ptr = p;
        out->s.len = f->len;
    } else if (strcmp(f->name, "list_value") == 0) {
        size_t n = 0;
        for (const tp_node *c = f->child; c; c = c->next)
            n++;
        ks_cel_value *items = ks__mempool_alloc(a, sizeof(ks_cel_value) * (n ? n : 1));
        size_t k = 0;
        for (const tp_node *c = f->child; c; c = c->next)
            if (!to_value(a, c, &items[k++]))
                return false;
        ks_cel_list *l = ks__mempool_alloc(a, sizeof *l);
        l->n = n;
        l->items = items;
        out->kind = KS_CEL_LIST;
        out->list = l;
    } else if (strcmp(f->name, "map_value") == 0) {
        size_t n = 0;
        for (const tp_node *c = f->child; c; c = c->next)
            n++;
        ks_cel_value *keys = ks__mempool_alloc(a, sizeof(ks_cel_value) * (n ? n : 1));
        ks_cel_value *vals = ks__mempool_alloc(a, sizeof(ks_cel_value) * (n ? n : 1));
        size_t k = 0;
        for (const tp_node *c = f->child; c; c = c->next, k++)
            if (!to_value(a, tp_get(c, "key"), &keys[k]) ||
                !to_value(a, tp_get(c, "value"), &vals[k]))
                return false;
        ks_cel_map *m = ks__mempool_alloc(a, sizeof *m);
        m->n = n;
        m->keys = keys;
        m->vals = vals;
        out->kind = KS_CEL_MAP;
        out->map = m;
    } else {
        return false; /* object_value, enum_value, ... */
    }
    return true;
}

/* Strict equality for test results: kinds must match (1 != 1u), NaN equals NaN. */
static bool same(const ks_cel_value *a, const ks_cel_value *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KS_CEL_DOUBLE:
        return (isnan(a->d) && isnan(b->d)) || (a->d == b->d && signbit(a->d) == signbit(b->d));
    case KS_CEL_LIST:
        if (a->list->n != b->list->n)
            return false;
        for (size_t i = 0; i < a->list->n; i++)
            if (!same(&a->list->items[i], &b->list->items[i]))
                return false;
        return true;
    case KS_CEL_MAP:
        if (a->map->n != b->map->n)
            return false;
        for (size_t i = 0; i < a->map->n; i++) {
            size_t j;
            for (j = 0; j < b->map->n; j++)
                if (same(&a->map->keys[i], &b->map->keys[j]))
                    break;
            if (j == b->map->n || !same(&a->map->vals[i], &b->map->vals[j]))
                return false;
        }
        return true;
    case KS_CEL_OPTIONAL:
        if (!a->opt || !b->opt)
            return a->opt == b->opt;
        return same(a->opt, b->opt);
    default:
        return ks_cel_equal(a, b);
    }
}

typedef struct figures {
    int run, pass, excluded, messages;
} figures;

static int failures, stale;

static void run_test(const char *file, const char *section, const tp_node *t, figures *fg)
{
    const tp_node *nm = tp_get(t, "name"), *ex = tp_get(t, "expr");
    const char *name = nm ? nm->str : "?";
    if (!ex)
        return;
    ks_mempool arena = {0};
    excl *x = excluded(file, section, name);
    bool messages = has_field(t, "object_value") || tp_get(t, "container") ||
                    tp_get(t, "unknown") || tp_get(t, "any_unknowns") || tp_get(t, "check_only");
    /* the environment: bindings and declared identifiers */
    const char *vars[64];
    ks_cel_binding binds[64];
    size_t nv = 0, nb = 0;
    for (const tp_node *c = t->child; c; c = c->next) {
        if (strcmp(c->name, "bindings") == 0 && nb < 64) {
            const tp_node *k = tp_get(c, "key"), *v = tp_get(tp_get(c, "value"), "value");
            if (!k || !v || !to_value(&arena, v, &binds[nb].value)) {
                messages = true;
                continue;
            }
            binds[nb].name = k->str;
            vars[nv++] = k->str;
            nb++;
        } else if (strcmp(c->name, "type_env") == 0 && nv < 64) {
            const tp_node *n = tp_get(c, "name");
            if (n && tp_get(c, "ident"))
                vars[nv++] = n->str;
        }
    }
    if (messages && !x) {
        fg->messages++;
        ks__mempool_free(&arena);
        return;
    }
    const tp_node *dc = tp_get(t, "disable_check");
    ks_cel_env env = {.vars = vars,
                      .nvars = nv,
                      .cost_limit = 0,
                      .unchecked = dc && strcmp(dc->str, "true") == 0};
    ks_cel_error err;
    ks_cel_value got = {0};
    bool got_err = false;
    char detail[600] = "";
    ks_cel_program *p = ks_cel_compile_n(ex->str, ex->len, &env, &err);
    if (!p) {
        got_err = true;
        snprintf(detail, sizeof detail, "compile: %s", err.msg);
    } else if (ks_cel_eval(p, binds, nb, &arena, &got, NULL, &err) != 0) {
        got_err = true;
        snprintf(detail, sizeof detail, "eval: %s", err.msg);
    }
    bool want_err = tp_get(t, "eval_error") || tp_get(t, "any_eval_errors");
    const tp_node *want_v = tp_get(t, "value");
    if (!want_v && tp_get(t, "typed_result"))
        want_v = tp_get(tp_get(t, "typed_result"), "result");
    ks_cel_value want = {.kind = KS_CEL_BOOL, .b = true}; /* no expectation: true */
    bool ok;
    if (want_err) {
        ok = got_err;
        if (!ok)
            snprintf(detail, sizeof detail, "want an error, got %s", ks_cel_format(&arena, &got));
    } else if (want_v && !to_value(&arena, want_v, &want)) {
        ok = false;
        snprintf(detail, sizeof detail, "expected value out of scope");
    } else {
        ok = !got_err && same(&got, &want);
        if (!got_err && !ok)
            snprintf(detail, sizeof detail, "got %s, want %s", ks_cel_format(&arena, &got),
                     ks_cel_format(&arena, &want));
    }
    if (x) {
        fg->excluded++;
        x->used = true;
        if (ok && !messages) {
            printf("  STALE EXCLUSION %s/%s/%s passes (excluded: %s)\n", file, section, name,
                   x->reason);
            stale++;
        }
    } else {
        fg->run++;
        if (ok) {
            fg->pass++;
        } else {
            failures++;
            printf("  FAIL %s/%s/%s: %s\n      expr: ", file, section, name, detail);
            for (size_t i = 0; i < ex->len; i++) {
                unsigned char ch = (unsigned char)ex->str[i];
                if (ch < 0x20)
                    printf("\\x%02x", ch);
                else
                    putchar(ch);
            }
            putchar('\n');
        }
    }
    if (verbose && ok)
        printf("  ok %s/%s/%s\n", file, section, name);
    ks_cel_program_free(p); /* after the comparison: values may point at the program's constants */
    ks__mempool_free(&arena);
}

static int eval_one(const char *expr)
{
    ks_cel_env env = {.cost_limit = KS_CEL_DRA_COST_LIMIT};
    ks_cel_error err;
    ks_cel_program *p = ks_cel_compile(expr, &env, &err);
    if (!p) {
        printf("compile error: %s\n", err.msg);
        return 1;
    }
    ks_mempool arena = {0};
    ks_cel_value v;
    uint64_t cost;
    int rc = ks_cel_eval(p, NULL, 0, &arena, &v, &cost, &err);
    if (rc)
        printf("eval error: %s (cost %" PRIu64 ")\n", err.msg, cost);
    else
        printf("%s (cost %" PRIu64 ")\n", ks_cel_format(&arena, &v), cost);
    ks__mempool_free(&arena);
    ks_cel_program_free(p);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--expr") == 0)
        return eval_one(argv[2]);
    int ai = 1;
    if (ai < argc && strcmp(argv[ai], "-v") == 0) {
        verbose = true;
        ai++;
    }
    if (argc - ai < 3) {
        fprintf(stderr, "usage: %s [-v] DATA_DIR EXCLUSIONS FILE...\n       %s --expr EXPR\n",
                argv[0], argv[0]);
        return 2;
    }
    const char *dir = argv[ai];
    load_exclusions(argv[ai + 1]);
    figures total = {0};
    printf("%-16s %6s %6s %9s %9s\n", "file", "run", "pass", "excluded", "messages");
    for (int i = ai + 2; i < argc; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.textproto", dir, argv[i]);
        char *text = NULL;
        size_t len = 0;
        if (ks__read_file(path, 64u << 20, &text, &len) != 0) {
            fprintf(stderr, "cannot read %s\n", path);
            return 2;
        }
        const char *perr;
        int line;
        tp_node *root = tp_parse(text, &perr, &line);
        free(text);
        if (!root) {
            fprintf(stderr, "%s:%d: %s\n", path, line, perr);
            return 2;
        }
        figures fg = {0};
        for (const tp_node *s = root->child; s; s = s->next) {
            if (strcmp(s->name, "section") != 0)
                continue;
            const tp_node *sn = tp_get(s, "name");
            for (const tp_node *t = s->child; t; t = t->next)
                if (strcmp(t->name, "test") == 0)
                    run_test(argv[i], sn ? sn->str : "?", t, &fg);
        }
        tp_free(root);
        printf("%-16s %6d %6d %9d %9d\n", argv[i], fg.run, fg.pass, fg.excluded, fg.messages);
        total.run += fg.run;
        total.pass += fg.pass;
        total.excluded += fg.excluded;
        total.messages += fg.messages;
    }
    printf("%-16s %6d %6d %9d %9d\n", "total", total.run, total.pass, total.excluded,
           total.messages);
    for (size_t i = 0; i < nexcl; i++)
        if (!excls[i].used)
            printf("  UNUSED EXCLUSION %s\n", excls[i].pattern);
    if (failures || stale)
        printf("%d failure(s), %d stale exclusion(s)\n", failures, stale);
    return failures || stale ? 1 : 0;
}
