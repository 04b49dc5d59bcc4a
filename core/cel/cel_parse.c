/*
 * CEL's lexer and recursive-descent parser (cel-spec doc/langdef.md "Syntax"), with cel-go's
 * macros expanded into comprehensions at parse time exactly as cel-go's parser/macro.go does, so
 * that the evaluator's error and short-circuit semantics are those of upstream's expansion.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_internal.h"

enum tok {
    T_EOF,
    T_IDENT,
    T_INT,
    T_UINT,
    T_DOUBLE,
    T_STRING,
    T_BYTES,
    T_TRUE,
    T_FALSE,
    T_NULL,
    T_IN,
    T_LPAREN,
    T_RPAREN,
    T_LBRACKET,
    T_RBRACKET,
    T_LBRACE,
    T_RBRACE,
    T_DOT,
    T_COMMA,
    T_COLON,
    T_QUESTION,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_SLASH,
    T_PERCENT,
    T_NOT,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_AND,
    T_OR,
    T_ERR,
};

typedef struct parser {
    ks_mempool *pool;
    const char *src;
    size_t len, p;
    /* current token */
    enum tok t;
    int tpos;
    size_t tend;
    ks_cel_value tval;
    const char *tname;
    bool failed;
    ks_cel_error *err;
    int depth;
    int next_id; /* for macro-generated names */
} parser;

#define MAX_DEPTH 250

static void perr(parser *ps, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(parser *ps, int pos, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    ks__cel_position(ps->src, pos, &ps->err->line, &ps->err->column);
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    snprintf(ps->err->msg, sizeof ps->err->msg, "ERROR: <input>:%d:%d: %s", ps->err->line,
             ps->err->column + 1, buf);
    ps->t = T_ERR;
}

void ks__cel_position(const char *expr, int off, int *line, int *column)
{
    int l = 1, c = 0;
    for (int i = 0; i < off && expr[i]; i++) {
        unsigned char ch = (unsigned char)expr[i];
        if (ch == '\n') {
            l++;
            c = 0;
        } else if ((ch & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *column = c;
}

static char *pstrndup(ks_mempool *p, const char *s, size_t n)
{
    char *r = ks__mempool_alloc(p, n + 1);
    if (r)
        memcpy(r, s, n);
    return r;
}

/* ---- strings ------------------------------------------------------------------------------ */

static void put_utf8(char *out, size_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Lexes a string or bytes literal starting at ps->p (after any r/b prefix). */
static void lex_string(parser *ps, bool raw, bool bytes, int start)
{
    const char *s = ps->src;
    char q = s[ps->p];
    bool triple = ps->p + 2 < ps->len && s[ps->p + 1] == q && s[ps->p + 2] == q;
    size_t i = ps->p + (triple ? 3 : 1);
    char *out = ks__mempool_alloc(ps->pool, ps->len * 4 + 1);
    size_t o = 0;
    for (;;) {
        if (i >= ps->len) {
            perr(ps, start, "Syntax error: token recognition error at: '%.*s'",
                 (int)(ps->len - start), s + start);
            return;
        }
        char c = s[i];
        if (triple ? (c == q && i + 2 < ps->len + 0 && s[i + 1] == q && s[i + 2] == q) : c == q) {
            i += triple ? 3 : 1;
            break;
        }
        if (!triple && (c == '\n' || c == '\r')) {
            perr(ps, start, "Syntax error: token recognition error at: '%.*s'",
                 (int)(i - start + 1), s + start);
            return;
        }
        if (c != '\\' || raw) {
            out[o++] = c;
            i++;
            continue;
        }
        /* escape */
        if (i + 1 >= ps->len) {
            perr(ps, start, "Syntax error: token recognition error at: '%.*s'",
                 (int)(ps->len - start), s + start);
            return;
        }
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case 'a':
            out[o++] = '\a';
            break;
        case 'b':
            out[o++] = '\b';
            break;
        case 'f':
            out[o++] = '\f';
            break;
        case 'n':
            out[o++] = '\n';
            break;
        case 'r':
            out[o++] = '\r';
            break;
        case 't':
            out[o++] = '\t';
            break;
        case 'v':
            out[o++] = '\v';
            break;
        case '\\':
            out[o++] = '\\';
            break;
        case '\'':
            out[o++] = '\'';
            break;
        case '"':
            out[o++] = '"';
            break;
        case '`':
            out[o++] = '`';
            break;
        case '?':
            out[o++] = '?';
            break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
            int nd = (e == 'x' || e == 'X') ? 2 : e == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int k = 0; k < nd; k++) {
                int h = i + k < ps->len ? hexval(s[i + k]) : -1;
                if (h < 0) {
                    perr(ps, start, "Syntax error: token recognition error at: '%.*s'",
                         (int)(i + k - start + 1), s + start);
                    return;
                }
                v = v * 16 + (uint32_t)h;
            }
            i += nd;
            if (bytes && (e == 'x' || e == 'X')) {
                out[o++] = (char)v;
            } else {
                if (bytes && (e == 'u' || e == 'U')) {
                    perr(ps, start, "Syntax error: token recognition error at: '%.*s'",
                         (int)(i - start), s + start);
                    return;
                }
                if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
                    perr(ps, start, "Syntax error: invalid unicode code point");
                    return;
                }
                put_utf8(out, &o, v);
            }
            break;
        }
        default:
            if (e >= '0' && e <= '3' && i + 1 < ps->len && s[i] >= '0' && s[i] <= '7' &&
                s[i + 1] >= '0' && s[i + 1] <= '7') {
                uint32_t v = (uint32_t)((e - '0') * 64 + (s[i] - '0') * 8 + (s[i + 1] - '0'));
                i += 2;
                if (bytes)
                    out[o++] = (char)v;
                else
                    put_utf8(out, &o, v);
                break;
            }
            perr(ps, start, "Syntax error: token recognition error at: '%.*s'", (int)(i - start),
                 s + start);
            return;
        }
    }
    ps->p = i;
    ps->tend = i;
    if (!bytes && !ks__cel_utf8_valid(out, o)) {
        perr(ps, start, "Syntax error: invalid UTF-8 in string literal");
        return;
    }
    ps->t = bytes ? T_BYTES : T_STRING;
    ps->tval = ks__cel_str(ps->pool, out, o, bytes ? KS_CEL_BYTES : KS_CEL_STRING);
}

static const char *const reserved[] = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",    "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while", NULL};

static void lex(parser *ps)
{
    if (ps->failed) {
        ps->t = T_ERR;
        return;
    }
    const char *s = ps->src;
    for (;;) {
        while (ps->p < ps->len && (s[ps->p] == ' ' || s[ps->p] == '\t' || s[ps->p] == '\n' ||
                                   s[ps->p] == '\r' || s[ps->p] == '\f'))
            ps->p++;
        if (ps->p + 1 < ps->len && s[ps->p] == '/' && s[ps->p + 1] == '/') {
            while (ps->p < ps->len && s[ps->p] != '\n')
                ps->p++;
            continue;
        }
        break;
    }
    int start = (int)ps->p;
    ps->tpos = start;
    if (ps->p >= ps->len) {
        ps->t = T_EOF;
        ps->tend = ps->p;
        return;
    }
    char c = s[ps->p];
    char n1 = ps->p + 1 < ps->len ? s[ps->p + 1] : 0;
    /* string prefixes */
    if (c == 'r' || c == 'R' || c == 'b' || c == 'B') {
        size_t k = ps->p;
        bool raw = false, bytes = false;
        for (int m = 0; m < 2 && k < ps->len; m++) {
            char pc = s[k];
            if ((pc == 'r' || pc == 'R') && !raw) {
                raw = true;
                k++;
            } else if ((pc == 'b' || pc == 'B') && !bytes) {
                bytes = true;
                k++;
            } else {
                break;
            }
        }
        if (k < ps->len && (s[k] == '"' || s[k] == '\'')) {
            ps->p = k;
            lex_string(ps, raw, bytes, start);
            return;
        }
    }
    if (c == '"' || c == '\'') {
        lex_string(ps, false, false, start);
        return;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        size_t k = ps->p;
        while (k < ps->len && (isalnum((unsigned char)s[k]) || s[k] == '_'))
            k++;
        size_t n = k - ps->p;
        ps->p = k;
        ps->tend = k;
        const char *w = s + start;
#define KW(word) (n == strlen(word) && memcmp(w, word, n) == 0)
        if (KW("true")) {
            ps->t = T_TRUE;
        } else if (KW("false")) {
            ps->t = T_FALSE;
        } else if (KW("null")) {
            ps->t = T_NULL;
        } else if (KW("in")) {
            ps->t = T_IN;
        } else {
            ps->t = T_IDENT;
            ps->tname = pstrndup(ps->pool, w, n);
        }
#undef KW
        return;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)n1))) {
        size_t k = ps->p;
        if (c == '0' && (n1 == 'x' || n1 == 'X')) {
            k += 2;
            size_t ds = k;
            while (k < ps->len && isxdigit((unsigned char)s[k]))
                k++;
            bool u = k < ps->len && (s[k] == 'u' || s[k] == 'U');
            char *txt = pstrndup(ps->pool, s + ds, k - ds);
            errno = 0;
            unsigned long long v = strtoull(txt, NULL, 16);
            ps->p = k + (u ? 1 : 0);
            ps->tend = ps->p;
            if (k == ds || errno || (!u && v > INT64_MAX)) {
                /* the sign is applied by the parser: 0x8000000000000000 alone is out of range */
                if (k == ds || errno) {
                    perr(ps, start, "invalid int literal");
                    return;
                }
            }
            ps->t = u ? T_UINT : T_INT;
            ps->tval.kind = u ? KS_CEL_UINT : KS_CEL_INT;
            ps->tval.u = v;
            ps->tname = txt;
            return;
        }
        while (k < ps->len && isdigit((unsigned char)s[k]))
            k++;
        bool is_double = false;
        if (k + 1 < ps->len && s[k] == '.' && isdigit((unsigned char)s[k + 1])) {
            is_double = true;
            k++;
            while (k < ps->len && isdigit((unsigned char)s[k]))
                k++;
        }
        if (k < ps->len && (s[k] == 'e' || s[k] == 'E')) {
            size_t e = k + 1;
            if (e < ps->len && (s[e] == '+' || s[e] == '-'))
                e++;
            if (e < ps->len && isdigit((unsigned char)s[e])) {
                while (e < ps->len && isdigit((unsigned char)s[e]))
                    e++;
                k = e;
                is_double = true;
            }
        }
        char *txt = pstrndup(ps->pool, s + start, k - (size_t)start);
        ps->tname = txt;
        if (is_double) {
            ps->p = k;
            ps->tend = k;
            ps->t = T_DOUBLE;
            ps->tval.kind = KS_CEL_DOUBLE;
            ps->tval.d = strtod(txt, NULL);
            return;
        }
        bool u = k < ps->len && (s[k] == 'u' || s[k] == 'U');
        errno = 0;
        unsigned long long v = strtoull(txt, NULL, 10);
        ps->p = k + (u ? 1 : 0);
        ps->tend = ps->p;
        if (errno) {
            perr(ps, start, "invalid %s literal", u ? "uint" : "int");
            return;
        }
        ps->t = u ? T_UINT : T_INT;
        ps->tval.kind = u ? KS_CEL_UINT : KS_CEL_INT;
        ps->tval.u = v;
        return;
    }
    static const struct {
        const char *s;
        enum tok t;
    } ops[] = {{"==", T_EQ},    {"!=", T_NE},      {"<=", T_LE},      {">=", T_GE},
               {"&&", T_AND},   {"||", T_OR},      {"<", T_LT},       {">", T_GT},
               {"(", T_LPAREN}, {")", T_RPAREN},   {"[", T_LBRACKET}, {"]", T_RBRACKET},
               {"{", T_LBRACE}, {"}", T_RBRACE},   {".", T_DOT},      {",", T_COMMA},
               {":", T_COLON},  {"?", T_QUESTION}, {"+", T_PLUS},     {"-", T_MINUS},
               {"*", T_STAR},   {"/", T_SLASH},    {"%", T_PERCENT},  {"!", T_NOT}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t n = strlen(ops[k].s);
        if (ps->p + n <= ps->len && memcmp(s + ps->p, ops[k].s, n) == 0) {
            ps->p += n;
            ps->tend = ps->p;
            ps->t = ops[k].t;
            return;
        }
    }
    int cl = 1;
    while (ps->p + cl < ps->len && ((unsigned char)s[ps->p + cl] & 0xC0) == 0x80)
        cl++;
    perr(ps, start, "Syntax error: token recognition error at: '%.*s'", cl, s + start);
}

/* ---- nodes -------------------------------------------------------------------------------- */

static cel_node *mk(parser *ps, cel_node_kind k, int pos)
{
    cel_node *n = ks__mempool_alloc(ps->pool, sizeof *n);
    n->kind = k;
    n->pos = pos;
    n->fn = -1;
    return n;
}

static cel_node *mk_call(parser *ps, int pos, const char *name, bool target, cel_node **args,
                         size_t nargs)
{
    cel_node *n = mk(ps, N_CALL, pos);
    n->name = name;
    n->has_target = target;
    n->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * (nargs ? nargs : 1));
    if (nargs)
        memcpy(n->args, args, sizeof(cel_node *) * nargs);
    n->nargs = nargs;
    return n;
}

static cel_node *mk_call1(parser *ps, int pos, const char *name, cel_node *a)
{
    return mk_call(ps, pos, name, false, &a, 1);
}

static cel_node *mk_call2(parser *ps, int pos, const char *name, cel_node *a, cel_node *b)
{
    cel_node *args[2] = {a, b};
    return mk_call(ps, pos, name, false, args, 2);
}

static cel_node *mk_bin(parser *ps, cel_node_kind k, int pos, cel_node *a, cel_node *b)
{
    cel_node *n = mk(ps, k, pos);
    n->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * 2);
    n->args[0] = a;
    n->args[1] = b;
    n->nargs = 2;
    return n;
}

static cel_node *mk_ident(parser *ps, int pos, const char *name)
{
    cel_node *n = mk(ps, N_IDENT, pos);
    n->name = name;
    return n;
}

static cel_node *mk_const(parser *ps, int pos, ks_cel_value v)
{
    cel_node *n = mk(ps, N_CONST, pos);
    n->val = v;
    return n;
}

static cel_node *mk_cond(parser *ps, int pos, cel_node *c, cel_node *t, cel_node *f)
{
    cel_node *n = mk(ps, N_COND, pos);
    n->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * 3);
    n->args[0] = c;
    n->args[1] = t;
    n->args[2] = f;
    n->nargs = 3;
    return n;
}

static cel_node *mk_list(parser *ps, int pos, cel_node **items, size_t n)
{
    cel_node *l = mk(ps, N_LIST, pos);
    l->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * (n ? n : 1));
    if (n)
        memcpy(l->args, items, sizeof(cel_node *) * n);
    l->nargs = n;
    l->opt_flags = ks__mempool_alloc(ps->pool, n ? n : 1);
    return l;
}

/* ---- grammar ------------------------------------------------------------------------------ */

static cel_node *parse_expr(parser *ps);

static bool expect(parser *ps, enum tok t, const char *what)
{
    if (ps->t != t) {
        if (ps->t == T_EOF)
            perr(ps, ps->tpos, "Syntax error: mismatched input '<EOF>' expecting %s", what);
        else
            perr(ps, ps->tpos, "Syntax error: mismatched input '%.*s' expecting %s",
                 (int)(ps->tend - (size_t)ps->tpos), ps->src + ps->tpos, what);
        return false;
    }
    lex(ps);
    return true;
}

static void unexpected(parser *ps)
{
    if (ps->t == T_EOF)
        perr(ps, ps->tpos, "Syntax error: mismatched input '<EOF>' expecting an expression");
    else
        perr(ps, ps->tpos, "Syntax error: extraneous input '%.*s'",
             (int)(ps->tend - (size_t)ps->tpos), ps->src + ps->tpos);
}

/* Parses "expr, expr, ..." up to close; optional entries (?x) allowed when opt != NULL. */
static size_t parse_args(parser *ps, enum tok close, cel_node ***out, bool **opt)
{
    size_t cap = 4, n = 0;
    cel_node **v = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * cap);
    bool *o = ks__mempool_alloc(ps->pool, cap);
    while (ps->t != close && !ps->failed) {
        bool isopt = false;
        if (opt && ps->t == T_QUESTION) {
            isopt = true;
            lex(ps);
        }
        cel_node *e = parse_expr(ps);
        if (!e)
            return 0;
        if (n == cap) {
            cel_node **nv = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * cap * 2);
            bool *no = ks__mempool_alloc(ps->pool, cap * 2);
            memcpy(nv, v, sizeof(cel_node *) * n);
            memcpy(no, o, n);
            v = nv;
            o = no;
            cap *= 2;
        }
        o[n] = isopt;
        v[n++] = e;
        if (ps->t == T_COMMA) {
            lex(ps);
            if (ps->t == close && opt)
                break; /* trailing comma in list/map literals */
        } else {
            break;
        }
    }
    *out = v;
    if (opt)
        *opt = o;
    return n;
}

static const char *gen_name(parser *ps, const char *base)
{
    (void)ps;
    return base;
}

/* cel-go's macros (parser/macro.go). */
static cel_node *expand_macro(parser *ps, int pos, const char *fn, cel_node *target,
                              cel_node **args, size_t n, bool *handled)
{
    *handled = true;
    const char *accu = gen_name(ps, "@result");
    if (!target && strcmp(fn, "has") == 0 && n == 1) {
        if (args[0]->kind != N_SELECT || args[0]->optional) {
            perr(ps, args[0]->pos, "invalid argument to has() macro");
            return NULL;
        }
        args[0]->test_only = true;
        return args[0];
    }
    if (target && target->kind == N_IDENT && strcmp(target->name, "cel") == 0 &&
        strcmp(fn, "bind") == 0 && n == 3) {
        if (args[0]->kind != N_IDENT) {
            perr(ps, args[0]->pos, "cel.bind() variable names must be simple identifiers");
            return NULL;
        }
        cel_node *c = mk(ps, N_COMPREHENSION, pos);
        c->iter_var = "#unused";
        c->range = mk_list(ps, pos, NULL, 0);
        c->accu_var = args[0]->name;
        c->accu_init = args[1];
        c->loop_cond = mk_const(ps, pos, ks_cel_bool(false));
        c->loop_step = mk_ident(ps, pos, args[0]->name);
        c->result = args[2];
        return c;
    }
    bool quant = target && (strcmp(fn, "all") == 0 || strcmp(fn, "exists") == 0 ||
                            strcmp(fn, "exists_one") == 0 || strcmp(fn, "existsOne") == 0);
    bool mapf = target && (strcmp(fn, "map") == 0 || strcmp(fn, "filter") == 0);
    bool optm = target && (strcmp(fn, "optMap") == 0 || strcmp(fn, "optFlatMap") == 0);
    if (optm && n == 2) {
        if (args[0]->kind != N_IDENT) {
            perr(ps, args[0]->pos, "%s() variable name must be a simple identifier", fn);
            return NULL;
        }
        /* target.hasValue() ? optional.of(cel.bind(v, target.value(), e)) : optional.none() */
        cel_node *hv = mk_call(ps, pos, "hasValue", true, &target, 1);
        cel_node *val = mk_call(ps, pos, "value", true, &target, 1);
        cel_node *b = mk(ps, N_COMPREHENSION, pos);
        b->iter_var = "#unused";
        b->range = mk_list(ps, pos, NULL, 0);
        b->accu_var = args[0]->name;
        b->accu_init = val;
        b->loop_cond = mk_const(ps, pos, ks_cel_bool(false));
        b->loop_step = mk_ident(ps, pos, args[0]->name);
        b->result = args[1];
        cel_node *some = fn[3] == 'M' ? mk_call1(ps, pos, "optional.of", b) : b;
        cel_node *none = mk_call(ps, pos, "optional.none", false, NULL, 0);
        return mk_cond(ps, pos, hv, some, none);
    }
    bool transform =
        target && (strcmp(fn, "transformList") == 0 || strcmp(fn, "transformMap") == 0);
    if (transform && (n == 3 || n == 4)) {
        /* ext.TwoVarComprehensions: accumulate into a list (transformList) or a map keyed by the
         * first variable (transformMap), optionally filtered */
        if (args[0]->kind != N_IDENT || args[1]->kind != N_IDENT) {
            perr(ps, args[0]->pos, "argument must be a simple name");
            return NULL;
        }
        bool is_list = fn[9] == 'L';
        cel_node *c = mk(ps, N_COMPREHENSION, pos);
        c->iter_var = args[0]->name;
        c->iter_var2 = args[1]->name;
        c->range = target;
        c->accu_var = accu;
        cel_node *acc = mk_ident(ps, pos, accu);
        c->loop_cond = mk_const(ps, pos, ks_cel_bool(true));
        cel_node *body = args[n - 1], *step;
        if (is_list) {
            c->accu_init = mk_list(ps, pos, NULL, 0);
            step = mk_call2(ps, pos, "_+_", acc, mk_list(ps, pos, &body, 1));
        } else {
            c->accu_init = mk(ps, N_MAP, pos);
            c->accu_init->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *));
            cel_node *ins[3] = {acc, mk_ident(ps, pos, args[0]->name), body};
            step = mk_call(ps, pos, "cel.@mapInsert", false, ins, 3);
        }
        c->loop_step = n == 4 ? mk_cond(ps, pos, args[2], step, acc) : step;
        c->result = acc;
        return c;
    }
    if ((quant && (n == 2 || n == 3)) || (mapf && (n == 2 || (n == 3 && fn[0] == 'm')))) {
        bool twovar = quant && n == 3;
        if (args[0]->kind != N_IDENT || (twovar && args[1]->kind != N_IDENT)) {
            perr(ps, args[0]->pos, "argument must be a simple name");
            return NULL;
        }
        const char *v = args[0]->name;
        const char *v2 = twovar ? args[1]->name : NULL;
        if (strcmp(v, "@result") == 0 || (v2 && strcmp(v2, "@result") == 0)) {
            perr(ps, args[0]->pos, "iteration variable overwrites accumulator variable");
            return NULL;
        }
        cel_node *body = args[n - 1];
        cel_node *c = mk(ps, N_COMPREHENSION, pos);
        c->iter_var = v;
        c->iter_var2 = v2;
        c->range = target;
        c->accu_var = accu;
        cel_node *acc = mk_ident(ps, pos, accu);
        if (strcmp(fn, "all") == 0) {
            c->accu_init = mk_const(ps, pos, ks_cel_bool(true));
            c->loop_cond = mk(ps, N_NOT_STRICTLY_FALSE, pos);
            c->loop_cond->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *));
            c->loop_cond->args[0] = acc;
            c->loop_cond->nargs = 1;
            c->loop_step = mk_bin(ps, N_AND, pos, acc, body);
            c->result = acc;
        } else if (strcmp(fn, "exists") == 0) {
            c->accu_init = mk_const(ps, pos, ks_cel_bool(false));
            c->loop_cond = mk(ps, N_NOT_STRICTLY_FALSE, pos);
            c->loop_cond->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *));
            c->loop_cond->args[0] = mk_call1(ps, pos, "!_", acc);
            c->loop_cond->nargs = 1;
            c->loop_step = mk_bin(ps, N_OR, pos, acc, body);
            c->result = acc;
        } else if (fn[0] == 'e') { /* exists_one / existsOne */
            c->accu_init = mk_const(ps, pos, ks_cel_int(0));
            c->loop_cond = mk_const(ps, pos, ks_cel_bool(true));
            c->loop_step =
                mk_cond(ps, pos, body,
                        mk_call2(ps, pos, "_+_", acc, mk_const(ps, pos, ks_cel_int(1))), acc);
            c->result = mk_call2(ps, pos, "_==_", acc, mk_const(ps, pos, ks_cel_int(1)));
        } else {
            c->accu_init = mk_list(ps, pos, NULL, 0);
            c->loop_cond = mk_const(ps, pos, ks_cel_bool(true));
            cel_node *item = fn[0] == 'm' ? body : mk_ident(ps, pos, v);
            cel_node *app = mk_call2(ps, pos, "_+_", acc, mk_list(ps, pos, &item, 1));
            if (fn[0] == 'f')
                c->loop_step = mk_cond(ps, pos, body, app, acc);
            else if (n == 3)
                c->loop_step = mk_cond(ps, pos, args[1], app, acc);
            else
                c->loop_step = app;
            c->result = acc;
        }
        return c;
    }
    *handled = false;
    return NULL;
}

static cel_node *parse_member_tail(parser *ps, cel_node *e);

static cel_node *parse_primary(parser *ps)
{
    int pos = ps->tpos;
    switch (ps->t) {
    case T_INT: {
        cel_node *n = mk_const(ps, pos, ps->tval);
        if (ps->tval.u > INT64_MAX) {
            perr(ps, pos, "invalid int literal");
            return NULL;
        }
        lex(ps);
        return n;
    }
    case T_UINT:
    case T_DOUBLE:
    case T_STRING:
    case T_BYTES: {
        cel_node *n = mk_const(ps, pos, ps->tval);
        lex(ps);
        return n;
    }
    case T_TRUE:
    case T_FALSE: {
        cel_node *n = mk_const(ps, pos, ks_cel_bool(ps->t == T_TRUE));
        lex(ps);
        return n;
    }
    case T_NULL: {
        ks_cel_value v = {.kind = KS_CEL_NULL};
        lex(ps);
        return mk_const(ps, pos, v);
    }
    case T_LPAREN: {
        lex(ps);
        cel_node *e = parse_expr(ps);
        if (!e || !expect(ps, T_RPAREN, "')'"))
            return NULL;
        return e;
    }
    case T_LBRACKET: {
        lex(ps);
        cel_node **items;
        bool *opt;
        size_t n = parse_args(ps, T_RBRACKET, &items, &opt);
        if (ps->failed || !expect(ps, T_RBRACKET, "']'"))
            return NULL;
        cel_node *l = mk_list(ps, pos, items, n);
        memcpy(l->opt_flags, opt, n);
        return l;
    }
    case T_LBRACE: {
        lex(ps);
        size_t cap = 8, n = 0;
        cel_node **kv = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * cap * 2);
        bool *opt = ks__mempool_alloc(ps->pool, cap);
        while (ps->t != T_RBRACE && !ps->failed) {
            bool isopt = false;
            if (ps->t == T_QUESTION) {
                isopt = true;
                lex(ps);
            }
            cel_node *k = parse_expr(ps);
            if (!k || !expect(ps, T_COLON, "':'"))
                return NULL;
            cel_node *v = parse_expr(ps);
            if (!v)
                return NULL;
            if (n == cap) {
                cel_node **nkv = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * cap * 4);
                bool *no = ks__mempool_alloc(ps->pool, cap * 2);
                memcpy(nkv, kv, sizeof(cel_node *) * n * 2);
                memcpy(no, opt, n);
                kv = nkv;
                opt = no;
                cap *= 2;
            }
            kv[2 * n] = k;
            kv[2 * n + 1] = v;
            opt[n++] = isopt;
            if (ps->t != T_COMMA)
                break;
            lex(ps);
        }
        if (ps->failed || !expect(ps, T_RBRACE, "'}'"))
            return NULL;
        cel_node *m = mk(ps, N_MAP, pos);
        m->args = kv;
        m->nargs = n * 2;
        m->opt_flags = opt;
        return m;
    }
    case T_DOT:
    case T_IDENT: {
        bool leading_dot = false;
        for (int r = 0; ps->t == T_IDENT && reserved[r]; r++)
            if (strcmp(ps->tname, reserved[r]) == 0) {
                perr(ps, pos, "Syntax error: reserved identifier: %s", ps->tname);
                return NULL;
            }
        if (ps->t == T_DOT) {
            leading_dot = true;
            lex(ps);
            if (ps->t != T_IDENT) {
                unexpected(ps);
                return NULL;
            }
        }
        const char *name = ps->tname;
        if (leading_dot) {
            size_t l = strlen(name);
            char *q = ks__mempool_alloc(ps->pool, l + 2);
            q[0] = '.';
            memcpy(q + 1, name, l);
            name = q;
        }
        lex(ps);
        if (ps->t == T_LPAREN) {
            lex(ps);
            cel_node **args;
            size_t n = parse_args(ps, T_RPAREN, &args, NULL);
            if (ps->failed || !expect(ps, T_RPAREN, "')'"))
                return NULL;
            bool handled;
            cel_node *m = expand_macro(ps, pos, name, NULL, args, n, &handled);
            if (handled)
                return m;
            return mk_call(ps, pos, name, false, args, n);
        }
        if (ps->t == T_LBRACE) {
            perr(ps, ps->tpos,
                 "Syntax error: message construction (%s{...}) is not supported by this evaluator",
                 name);
            return NULL;
        }
        return mk_ident(ps, pos, name);
    }
    default:
        unexpected(ps);
        return NULL;
    }
}

static cel_node *parse_member_tail(parser *ps, cel_node *e)
{
    while (e && !ps->failed) {
        int pos = ps->tpos;
        if (ps->t == T_DOT) {
            lex(ps);
            bool opt = false;
            if (ps->t == T_QUESTION) {
                opt = true;
                lex(ps);
            }
            if (ps->t != T_IDENT) {
                if (ps->t == T_EOF)
                    perr(ps, ps->tpos,
                         "Syntax error: mismatched input '<EOF>' expecting IDENTIFIER");
                else
                    perr(ps, ps->tpos, "Syntax error: mismatched input '%.*s' expecting IDENTIFIER",
                         (int)(ps->tend - (size_t)ps->tpos), ps->src + ps->tpos);
                return NULL;
            }
            const char *name = ps->tname;
            int npos = ps->tpos;
            lex(ps);
            if (ps->t == T_LPAREN && !opt) {
                lex(ps);
                cel_node **args;
                size_t n = parse_args(ps, T_RPAREN, &args, NULL);
                if (ps->failed || !expect(ps, T_RPAREN, "')'"))
                    return NULL;
                bool handled;
                cel_node *m = expand_macro(ps, npos, name, e, args, n, &handled);
                if (ps->failed)
                    return NULL;
                if (handled) {
                    e = m;
                    continue;
                }
                cel_node **all = ks__mempool_alloc(ps->pool, sizeof(cel_node *) * (n + 1));
                all[0] = e;
                memcpy(all + 1, args, sizeof(cel_node *) * n);
                e = mk_call(ps, npos, name, true, all, n + 1);
                continue;
            }
            cel_node *s = mk(ps, N_SELECT, pos);
            s->args = ks__mempool_alloc(ps->pool, sizeof(cel_node *));
            s->args[0] = e;
            s->nargs = 1;
            s->name = name;
            s->optional = opt;
            e = s;
        } else if (ps->t == T_LBRACKET) {
            lex(ps);
            bool opt = false;
            if (ps->t == T_QUESTION) {
                opt = true;
                lex(ps);
            }
            cel_node *idx = parse_expr(ps);
            if (!idx || !expect(ps, T_RBRACKET, "']'"))
                return NULL;
            cel_node *x = mk_bin(ps, N_INDEX, pos, e, idx);
            x->optional = opt;
            e = x;
        } else {
            break;
        }
    }
    return e;
}

static cel_node *parse_unary(parser *ps)
{
    int pos = ps->tpos;
    if (ps->t == T_NOT || ps->t == T_MINUS) {
        enum tok op = ps->t;
        int count = 0;
        while (ps->t == op) {
            count++;
            lex(ps);
        }
        cel_node *e;
        if (op == T_MINUS && count == 1 && (ps->t == T_INT || ps->t == T_DOUBLE)) {
            /* cel-go's grammar reads "-1" as one literal (so -9223372036854775808 is valid); with
             * more than one sign the operators are taken greedily */
            int lpos = ps->tpos;
            ks_cel_value v = ps->tval;
            bool isint = ps->t == T_INT;
            lex(ps);
            if (isint) {
                if (v.u > (uint64_t)INT64_MAX + 1) {
                    perr(ps, lpos, "invalid int literal");
                    return NULL;
                }
                v.i = (int64_t)(0 - v.u);
            } else {
                v.d = -v.d;
            }
            return parse_member_tail(ps, mk_const(ps, pos, v));
        }
        if (++ps->depth > MAX_DEPTH) {
            perr(ps, pos, "expression recursion limit exceeded: %d", MAX_DEPTH);
            return NULL;
        }
        e = parse_member_tail(ps, parse_primary(ps));
        ps->depth--;
        /* cel-go: an even number of '!' or '-' leaves the operand as it is */
        if (count % 2 == 0 || !e)
            return e;
        return mk_call1(ps, pos, op == T_NOT ? "!_" : "-_", e);
    }
    return parse_member_tail(ps, parse_primary(ps));
}

static cel_node *parse_mul(parser *ps)
{
    cel_node *l = parse_unary(ps);
    while (l && (ps->t == T_STAR || ps->t == T_SLASH || ps->t == T_PERCENT)) {
        int pos = ps->tpos;
        const char *fn = ps->t == T_STAR ? "_*_" : ps->t == T_SLASH ? "_/_" : "_%_";
        lex(ps);
        cel_node *r = parse_unary(ps);
        if (!r)
            return NULL;
        l = mk_call2(ps, pos, fn, l, r);
    }
    return l;
}

static cel_node *parse_add(parser *ps)
{
    cel_node *l = parse_mul(ps);
    while (l && (ps->t == T_PLUS || ps->t == T_MINUS)) {
        int pos = ps->tpos;
        const char *fn = ps->t == T_PLUS ? "_+_" : "_-_";
        lex(ps);
        cel_node *r = parse_mul(ps);
        if (!r)
            return NULL;
        l = mk_call2(ps, pos, fn, l, r);
    }
    return l;
}

static cel_node *parse_rel(parser *ps)
{
    cel_node *l = parse_add(ps);
    for (;;) {
        if (!l)
            return NULL;
        const char *fn = NULL;
        switch (ps->t) {
        case T_EQ:
            fn = "_==_";
            break;
        case T_NE:
            fn = "_!=_";
            break;
        case T_LT:
            fn = "_<_";
            break;
        case T_LE:
            fn = "_<=_";
            break;
        case T_GT:
            fn = "_>_";
            break;
        case T_GE:
            fn = "_>=_";
            break;
        case T_IN:
            fn = "@in";
            break;
        default:
            return l;
        }
        int pos = ps->tpos;
        lex(ps);
        cel_node *r = parse_add(ps);
        if (!r)
            return NULL;
        l = mk_call2(ps, pos, fn, l, r);
    }
}

static cel_node *parse_and(parser *ps)
{
    cel_node *l = parse_rel(ps);
    while (l && ps->t == T_AND) {
        int pos = ps->tpos;
        lex(ps);
        cel_node *r = parse_rel(ps);
        if (!r)
            return NULL;
        l = mk_bin(ps, N_AND, pos, l, r);
    }
    return l;
}

static cel_node *parse_or(parser *ps)
{
    cel_node *l = parse_and(ps);
    while (l && ps->t == T_OR) {
        int pos = ps->tpos;
        lex(ps);
        cel_node *r = parse_and(ps);
        if (!r)
            return NULL;
        l = mk_bin(ps, N_OR, pos, l, r);
    }
    return l;
}

static cel_node *parse_expr(parser *ps)
{
    if (++ps->depth > MAX_DEPTH) {
        perr(ps, ps->tpos, "expression recursion limit exceeded: %d", MAX_DEPTH);
        return NULL;
    }
    cel_node *c = parse_or(ps);
    if (c && ps->t == T_QUESTION) {
        int pos = ps->tpos;
        lex(ps);
        cel_node *t = parse_or(ps);
        if (!t || !expect(ps, T_COLON, "':'"))
            return NULL;
        cel_node *f = parse_expr(ps);
        if (!f)
            return NULL;
        c = mk_cond(ps, pos, c, t, f);
    }
    ps->depth--;
    return ps->failed ? NULL : c;
}

cel_node *ks__cel_parse(ks_mempool *pool, const char *expr, size_t len, ks_cel_error *err)
{
    parser ps = {.pool = pool, .src = expr, .len = len, .err = err};
    lex(&ps);
    cel_node *root = parse_expr(&ps);
    if (root && ps.t != T_EOF && !ps.failed)
        perr(&ps, ps.tpos, "Syntax error: extraneous input '%.*s' expecting <EOF>",
             (int)(ps.tend - (size_t)ps.tpos), ps.src + ps.tpos);
    if (ps.failed)
        return NULL;
    return root;
}
