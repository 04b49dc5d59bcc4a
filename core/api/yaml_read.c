/* YAML text -> cJSON from libyaml's events, with limits; see yaml_read.h. */
#include "api/yaml_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/strmap.h"
#include "kubesched/plugin.h"

/* Repeated keys are looked for by a scan of the mapping's fields up to this many, by a hash map
 * beyond (a ConfigMap can have thousands of keys). */
#define LINEAR_KEYS 16

/* An open sequence or mapping. */
typedef struct frame {
    cJSON *node;
    int is_map;
    int height;           /* levels of collections below it so far */
    size_t start_created; /* reader->created when it opened: its size for an anchor */
    char *anchor;         /* owned; NULL */
    size_t line, col;     /* where it starts */
    /* Mappings: the key whose value comes next (owned; NULL when a key comes next). */
    char *key;
    size_t key_line, key_col;
    int key_is_merge;
    size_t *key_lines; /* the line of each explicit key, in order (for "first at line N") */
    size_t nkeys, key_lines_cap;
    ks_strmap *key_index; /* key -> index + 1, once nkeys > LINEAR_KEYS */
    /* The mappings `<<` keys brought, merged when the mapping ends (borrowed from r->kept). */
    const cJSON **merges;
    size_t nmerges, merges_cap;
} frame;

/* A value with an anchor, for the aliases that copy it. */
typedef struct anchor {
    cJSON *node;
    size_t count; /* values in it */
    int height;   /* levels of collections in it */
    int complete; /* an alias inside its own anchored value would copy it forever */
} anchor;

struct ks_yaml_reader {
    yaml_parser_t parser;
    const char *text;
    size_t len;
    ks_yaml_read_opts o;
    int done;
    frame *stack;
    size_t depth, cap;
    ks_strmap anchors; /* name -> anchor *, for the current document */
    size_t created, alias_values;
    cJSON *root;
    /* The values of `<<` keys, kept until the document ends: an anchor may name one of them. */
    cJSON *kept;
    char *err;
    size_t errlen;
    size_t err_line, err_col, err_msg; /* the last error's position; its message at err + err_msg */
};

/* ---- positions and errors ------------------------------------------------------------------ */

static void pos_of_mark(const ks_yaml_reader *r, const yaml_mark_t *m, size_t *line, size_t *col)
{
    size_t bl = r->o.base_line ? r->o.base_line : 1, bc = r->o.base_col ? r->o.base_col : 1;
    *line = bl + m->line;
    *col = m->line == 0 ? bc + m->column : m->column + 1;
}

static size_t pos_line(const ks_yaml_reader *r, const yaml_mark_t *m)
{
    size_t line, col;
    pos_of_mark(r, m, &line, &col);
    return line;
}

static size_t pos_col(const ks_yaml_reader *r, const yaml_mark_t *m)
{
    size_t line, col;
    pos_of_mark(r, m, &line, &col);
    return col;
}

/* libyaml's reader errors (bad UTF-8, control characters) give a byte offset, not a mark. */
static void mark_of_offset(const ks_yaml_reader *r, size_t offset, yaml_mark_t *m)
{
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < offset && i < r->len; i++) {
        if (r->text[i] == '\n') {
            m->line++;
            m->column = 0;
        } else if (((unsigned char)r->text[i] & 0xC0) != 0x80) {
            m->column++; /* columns count characters, as libyaml's marks do */
        }
    }
    m->index = offset;
}

static KS_PRINTF(5, 6) int fail_pos(ks_yaml_reader *r, size_t line, size_t col, int code,
                                    const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int n = snprintf(r->err, r->errlen, "%zu:%zu: ", line, col);
    r->err_line = line;
    r->err_col = col;
    r->err_msg = n > 0 && (size_t)n < r->errlen ? (size_t)n : 0;
    snprintf(r->err + r->err_msg, r->errlen - r->err_msg, "%s", msg);
    r->done = 1;
    return code;
}

#define fail_at(r, m, code, ...)                                                                   \
    fail_pos((r), pos_line((r), (m)), pos_col((r), (m)), (code), __VA_ARGS__)

static int fail_oom(ks_yaml_reader *r)
{
    snprintf(r->err, r->errlen, "out of memory");
    r->done = 1;
    return KS_ENOMEM;
}

static int fail_syntax(ks_yaml_reader *r)
{
    yaml_parser_t *p = &r->parser;
    yaml_mark_t m = p->problem_mark;
    if (p->error == YAML_MEMORY_ERROR)
        return fail_oom(r);
    if (p->error == YAML_READER_ERROR) {
        mark_of_offset(r, p->problem_offset, &m);
        if (p->problem_value != -1)
            return fail_at(r, &m, KS_EPARSE, "%s (byte 0x%02x)",
                           p->problem ? p->problem : "invalid input", (unsigned)p->problem_value);
    }
    return fail_at(r, &m, KS_EPARSE, "%s%s%s", p->problem ? p->problem : "YAML error",
                   p->context ? " " : "", p->context ? p->context : "");
}

/* ---- scalars, as sigs.k8s.io/yaml resolves them --------------------------------------------- */

static int is_plain_null(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int parse_bool(const char *s, int *b)
{
    /* YAML 1.1 booleans, the spellings go-yaml v2 (under sigs.k8s.io/yaml) accepts */
    static const char *t[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                              "on",   "On",   "ON",   "y",   "Y"};
    static const char *f[] = {"false", "False", "FALSE", "no", "No", "NO",
                              "off",   "Off",   "OFF",   "n",  "N"};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (!strcmp(s, t[i])) {
            *b = 1;
            return 1;
        }
        if (!strcmp(s, f[i])) {
            *b = 0;
            return 1;
        }
    }
    return 0;
}

static int parse_number(const char *s, double *out)
{
    char *end;
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    for (const char *q = p; *q; q++)
        digits |= (*q >= '0' && *q <= '9');
    if (!digits)
        return 0;
    /* Decimal forms only (hex, octal and 1_000 are rare in manifests and stay strings). */
    for (const char *q = p; *q; q++)
        if (!strchr("0123456789.eE+-", *q))
            return 0;
    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0' && errno == 0;
}

static cJSON *scalar_value(const yaml_event_t *e)
{
    const char *v = (const char *)e->data.scalar.value;
    const char *tag = (const char *)e->data.scalar.tag;
    int b;
    double d;
    if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || (tag && !strcmp(tag, YAML_STR_TAG)))
        return cJSON_CreateString(v);
    if (is_plain_null(v))
        return cJSON_CreateNull();
    if (parse_bool(v, &b))
        return cJSON_CreateBool(b);
    if (parse_number(v, &d))
        return cJSON_CreateNumber(d);
    return cJSON_CreateString(v);
}

/* ---- frames ------------------------------------------------------------------------------------
 */

static void frame_clear(frame *f)
{
    free(f->anchor);
    free(f->key);
    free(f->key_lines);
    if (f->key_index) {
        ks__strmap_destroy(f->key_index);
        free(f->key_index);
    }
    free(f->merges);
    memset(f, 0, sizeof(*f));
}

/* The line of the first occurrence of key among f's explicit keys, 0 when it is new. */
static size_t key_seen(const frame *f, const char *key)
{
    if (f->key_index) {
        uintptr_t i = (uintptr_t)ks__strmap_get(f->key_index, key);
        return i ? f->key_lines[i - 1] : 0;
    }
    size_t i = 0;
    for (const cJSON *c = f->node->child; c && i < f->nkeys; c = c->next, i++)
        if (!strcmp(c->string, key))
            return f->key_lines[i];
    return 0;
}

static int key_remember(frame *f, const char *key, size_t line)
{
    if (f->nkeys == f->key_lines_cap) {
        size_t cap = f->key_lines_cap ? f->key_lines_cap * 2 : 8;
        size_t *l = realloc(f->key_lines, cap * sizeof(*l));
        if (!l)
            return KS_ENOMEM;
        f->key_lines = l;
        f->key_lines_cap = cap;
    }
    f->key_lines[f->nkeys++] = line;
    if (!f->key_index && f->nkeys > LINEAR_KEYS) {
        if (!(f->key_index = malloc(sizeof(*f->key_index))))
            return KS_ENOMEM;
        ks__strmap_init(f->key_index);
        size_t i = 0;
        for (const cJSON *c = f->node->child; c; c = c->next, i++)
            if (ks__strmap_put(f->key_index, c->string, (void *)(uintptr_t)(i + 1), NULL))
                return KS_ENOMEM;
        /* key itself is not linked yet: it is the next index */
        return ks__strmap_put(f->key_index, key, (void *)(uintptr_t)f->nkeys, NULL);
    }
    if (f->key_index)
        return ks__strmap_put(f->key_index, key, (void *)(uintptr_t)f->nkeys, NULL);
    return 0;
}

/* ---- building ----------------------------------------------------------------------------------
 */

static void placed(ks_yaml_reader *r, const cJSON *item, size_t line, size_t col)
{
    if (r->o.placed)
        r->o.placed(r->o.ctx, item, line, col);
}

static int merge_push(ks_yaml_reader *r, frame *f, const cJSON *src)
{
    if (f->nmerges == f->merges_cap) {
        size_t cap = f->merges_cap ? f->merges_cap * 2 : 4;
        const cJSON **m = realloc(f->merges, cap * sizeof(*m));
        if (!m)
            return fail_oom(r);
        f->merges = m;
        f->merges_cap = cap;
    }
    f->merges[f->nmerges++] = src;
    return 0;
}

static int add_merge_source(ks_yaml_reader *r, frame *f, cJSON *v, size_t line, size_t col)
{
    int ok = cJSON_IsObject(v);
    if (cJSON_IsArray(v)) {
        ok = 1;
        for (const cJSON *c = v->child; c; c = c->next)
            ok &= cJSON_IsObject(c);
    }
    if (!ok) {
        cJSON_Delete(v);
        return fail_pos(r, line, col, KS_EPARSE,
                        "the value of a << merge key must be a mapping or a list of mappings");
    }
    if (!r->kept && !(r->kept = cJSON_CreateArray())) {
        cJSON_Delete(v);
        return fail_oom(r);
    }
    cJSON_AddItemToArray(r->kept, v);
    if (cJSON_IsObject(v))
        return merge_push(r, f, v);
    for (const cJSON *c = v->child; c; c = c->next)
        if (merge_push(r, f, c))
            return KS_ENOMEM;
    return 0;
}

static size_t count_values(const cJSON *v)
{
    size_t n = 1;
    for (const cJSON *c = v->child; c; c = c->next)
        n += count_values(c);
    return n;
}

/* The fields that `<<` brought and that the mapping does not set itself, copied; earlier
 * sources win, as the YAML merge key specification says. Copies count as alias values. */
static int apply_merges(ks_yaml_reader *r, frame *f, size_t line, size_t col)
{
    for (size_t i = 0; i < f->nmerges; i++) {
        for (const cJSON *field = f->merges[i]->child; field; field = field->next) {
            if (cJSON_GetObjectItemCaseSensitive(f->node, field->string))
                continue;
            size_t n = count_values(field);
            if (n > KS_YAML_MAX_ALIAS_VALUES - r->alias_values)
                return fail_pos(r, line, col, KS_ERANGE,
                                "aliases copy more than %d values (a \"billion laughs\" document?)",
                                KS_YAML_MAX_ALIAS_VALUES);
            r->alias_values += n;
            r->created += n; /* an anchor on this mapping copies them again */
            cJSON *copy = cJSON_Duplicate(field, 1);
            if (!copy)
                return fail_oom(r);
            cJSON_AddItemToObject(f->node, field->string, copy);
        }
    }
    return 0;
}

/* Links the complete value v (height h: levels of collections in it), which starts at line:col,
 * where the open frame expects it, or makes it the root. Takes ownership of v. A mapping's field
 * is placed at its key, which is where a reader looks for it. */
static int attach(ks_yaml_reader *r, cJSON *v, int h, size_t line, size_t col)
{
    if (r->depth == 0) {
        placed(r, v, line, col);
        r->root = v;
        return 0;
    }
    frame *f = &r->stack[r->depth - 1];
    if (f->height < h + 1)
        f->height = h + 1;
    if (!f->is_map) {
        placed(r, v, line, col);
        cJSON_AddItemToArray(f->node, v);
        return 0;
    }
    char *key = f->key;
    f->key = NULL;
    if (f->key_is_merge) {
        f->key_is_merge = 0;
        free(key);
        return add_merge_source(r, f, v, line, col);
    }
    placed(r, v, f->key_line, f->key_col);
    cJSON_AddItemToObject(f->node, key, v); /* cJSON copies the key */
    free(key);
    return 0;
}

/* A scalar or an alias where a mapping expects a key. */
static int take_key(ks_yaml_reader *r, frame *f, const char *key, int plain, const yaml_mark_t *m)
{
    size_t line, col, first;
    pos_of_mark(r, m, &line, &col);
    if (plain && !strcmp(key, "<<")) {
        f->key_is_merge = 1;
    } else if ((first = key_seen(f, key)) != 0) {
        /* A repeated key at the left margin: usually a `---` missing between two objects. */
        return fail_at(r, m, KS_EPARSE, "duplicate field \"%s\" (first at line %zu)%s", key, first,
                       r->depth == 1 && col == 1 ? "; is a --- missing between two objects?" : "");
    } else if (key_remember(f, key, line)) {
        return fail_oom(r);
    }
    if (!(f->key = strdup(key)))
        return fail_oom(r);
    f->key_line = line;
    f->key_col = col;
    return 0;
}

static int expecting_key(const ks_yaml_reader *r)
{
    const frame *f = r->depth ? &r->stack[r->depth - 1] : NULL;
    return f && f->is_map && !f->key && !f->key_is_merge;
}

static int remember_anchor(ks_yaml_reader *r, const char *name, cJSON *node, size_t count,
                           int height, int complete)
{
    anchor *a = malloc(sizeof(*a)), *old = NULL;
    if (!a)
        return fail_oom(r);
    *a = (anchor){node, count, height, complete};
    if (ks__strmap_put(&r->anchors, name, a, (void **)&old)) {
        free(a);
        return fail_oom(r);
    }
    free(old); /* a name anchored again refers to the later value from here on */
    return 0;
}

static int on_scalar(ks_yaml_reader *r, const yaml_event_t *e)
{
    if (expecting_key(r))
        return take_key(r, &r->stack[r->depth - 1], (const char *)e->data.scalar.value,
                        e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE, &e->start_mark);
    cJSON *v = scalar_value(e);
    if (!v)
        return fail_oom(r);
    r->created++;
    if (e->data.scalar.anchor &&
        remember_anchor(r, (const char *)e->data.scalar.anchor, v, 1, 0, 1)) {
        cJSON_Delete(v);
        return KS_ENOMEM;
    }
    return attach(r, v, 0, pos_line(r, &e->start_mark), pos_col(r, &e->start_mark));
}

static int on_alias(ks_yaml_reader *r, const yaml_event_t *e)
{
    const char *name = (const char *)e->data.alias.anchor;
    anchor *a = ks__strmap_get(&r->anchors, name);
    if (!a)
        return fail_at(r, &e->start_mark, KS_EPARSE, "unknown anchor \"%s\" in alias *%s", name,
                       name);
    if (!a->complete)
        return fail_at(r, &e->start_mark, KS_EPARSE, "alias *%s is inside the value it refers to",
                       name);
    if (expecting_key(r)) {
        if (!cJSON_IsString(a->node))
            return fail_at(r, &e->start_mark, KS_EPARSE, "alias *%s: a key must be a string", name);
        return take_key(r, &r->stack[r->depth - 1], a->node->valuestring, 0, &e->start_mark);
    }
    if (r->depth + (size_t)a->height > KS_YAML_MAX_DEPTH)
        return fail_at(r, &e->start_mark, KS_ERANGE, "alias *%s nests more than %d levels deep",
                       name, KS_YAML_MAX_DEPTH);
    if (a->count > KS_YAML_MAX_ALIAS_VALUES - r->alias_values)
        return fail_at(r, &e->start_mark, KS_ERANGE,
                       "aliases copy more than %d values (a \"billion laughs\" document?)",
                       KS_YAML_MAX_ALIAS_VALUES);
    r->alias_values += a->count;
    cJSON *v = cJSON_Duplicate(a->node, 1);
    if (!v)
        return fail_oom(r);
    r->created += a->count;
    return attach(r, v, a->height, pos_line(r, &e->start_mark), pos_col(r, &e->start_mark));
}

static int on_collection_start(ks_yaml_reader *r, const yaml_event_t *e, int is_map)
{
    const yaml_char_t *anchor_name =
        is_map ? e->data.mapping_start.anchor : e->data.sequence_start.anchor;
    if (expecting_key(r))
        return fail_at(r, &e->start_mark, KS_EPARSE, "a mapping key must be a scalar");
    if (r->depth >= KS_YAML_MAX_DEPTH)
        return fail_at(r, &e->start_mark, KS_ERANGE, "nested more than %d levels deep",
                       KS_YAML_MAX_DEPTH);
    if (r->depth == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        frame *s = realloc(r->stack, cap * sizeof(*s));
        if (!s)
            return fail_oom(r);
        r->stack = s;
        r->cap = cap;
    }
    frame *f = &r->stack[r->depth];
    memset(f, 0, sizeof(*f));
    if (!(f->node = is_map ? cJSON_CreateObject() : cJSON_CreateArray()))
        return fail_oom(r);
    r->depth++;
    r->created++;
    f->is_map = is_map;
    f->start_created = r->created;
    pos_of_mark(r, &e->start_mark, &f->line, &f->col);
    if (anchor_name) {
        if (!(f->anchor = strdup((const char *)anchor_name)))
            return fail_oom(r);
        if (remember_anchor(r, f->anchor, f->node, 0, 0, 0))
            return KS_ENOMEM;
    }
    return 0;
}

static int on_collection_end(ks_yaml_reader *r, const yaml_event_t *e)
{
    frame *f = &r->stack[r->depth - 1];
    int rc = f->nmerges ? apply_merges(r, f, f->line, f->col) : 0;
    if (rc)
        return rc;
    if (f->anchor) {
        anchor *a = ks__strmap_get(&r->anchors, f->anchor);
        if (a && a->node == f->node) {
            a->count = r->created - f->start_created + 1;
            a->height = f->height + 1;
            a->complete = 1;
        }
    }
    cJSON *v = f->node;
    int h = f->height;
    size_t line = f->line, col = f->col;
    f->node = NULL;
    frame_clear(f);
    r->depth--;
    (void)e;
    return attach(r, v, h, line, col);
}

static void clear_document(ks_yaml_reader *r)
{
    while (r->depth) {
        frame *f = &r->stack[--r->depth];
        cJSON_Delete(f->node);
        f->node = NULL;
        frame_clear(f);
    }
    for (size_t i = 0;;) {
        const char *k;
        void *v;
        if (!ks__strmap_next(&r->anchors, &i, &k, &v))
            break;
        free(v);
    }
    ks__strmap_destroy(&r->anchors);
    ks__strmap_init(&r->anchors);
    cJSON_Delete(r->root);
    r->root = NULL;
    cJSON_Delete(r->kept);
    r->kept = NULL;
    r->alias_values = 0;
}

/* ---- the reader --------------------------------------------------------------------------------
 */

ks_yaml_reader *ks__yaml_reader_new(const char *text, size_t len, const ks_yaml_read_opts *o)
{
    ks_yaml_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    if (!yaml_parser_initialize(&r->parser)) {
        free(r);
        return NULL;
    }
    yaml_parser_set_input_string(&r->parser, (const unsigned char *)text, len);
    r->text = text;
    r->len = len;
    if (o)
        r->o = *o;
    ks__strmap_init(&r->anchors);
    return r;
}

static int on_event(ks_yaml_reader *r, const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        return on_scalar(r, e);
    case YAML_ALIAS_EVENT:
        return on_alias(r, e);
    case YAML_SEQUENCE_START_EVENT:
        return on_collection_start(r, e, 0);
    case YAML_MAPPING_START_EVENT:
        return on_collection_start(r, e, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_collection_end(r, e);
    default:
        return 0;
    }
}

int ks__yaml_reader_next(ks_yaml_reader *r, ks_yaml_doc *doc, char *err, size_t errlen)
{
    r->err = err;
    r->errlen = errlen;
    memset(doc, 0, sizeof(*doc));
    while (!r->done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&r->parser, &e)) {
            clear_document(r);
            return fail_syntax(r);
        }
        int rc = 0, type = e.type;
        if (type == YAML_DOCUMENT_START_EVENT) {
            doc->offset = e.start_mark.index;
            pos_of_mark(r, &e.start_mark, &doc->line, &doc->col);
        } else if (type == YAML_STREAM_END_EVENT) {
            r->done = 1;
        } else {
            rc = on_event(r, &e);
        }
        yaml_event_delete(&e);
        if (rc) {
            clear_document(r);
            return rc;
        }
        if (type == YAML_DOCUMENT_END_EVENT) {
            doc->root = r->root ? r->root : cJSON_CreateNull();
            r->root = NULL;
            clear_document(r);
            if (!doc->root)
                return fail_oom(r);
            return 1;
        }
    }
    return 0;
}

const char *ks__yaml_value_phrase(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsArray(v))
        return "a list";
    if (cJSON_IsObject(v))
        return "a mapping";
    return "null";
}

void ks__yaml_reader_free(ks_yaml_reader *r)
{
    if (!r)
        return;
    clear_document(r);
    ks__strmap_destroy(&r->anchors);
    free(r->stack);
    yaml_parser_delete(&r->parser);
    free(r);
}

int ks__yaml_check_depth(const char *text, size_t len, size_t *line, size_t *col, char *msg,
                         size_t msglen)
{
    char err[512];
    ks_yaml_reader *r = ks__yaml_reader_new(text, len, NULL);
    size_t depth = 0;
    int rc = 0;
    if (!r) {
        snprintf(msg, msglen, "out of memory");
        return KS_ENOMEM;
    }
    r->err = err;
    r->errlen = sizeof(err);
    while (!rc) {
        yaml_event_t e;
        if (!yaml_parser_parse(&r->parser, &e)) {
            rc = fail_syntax(r);
            break;
        }
        int type = e.type;
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > KS_YAML_MAX_DEPTH)
                rc = fail_at(r, &e.start_mark, KS_ERANGE, "nested more than %d levels deep",
                             KS_YAML_MAX_DEPTH);
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        yaml_event_delete(&e);
        if (type == YAML_STREAM_END_EVENT)
            break;
    }
    if (rc) {
        *line = r->err_line;
        *col = r->err_col;
        snprintf(msg, msglen, "%s", err + r->err_msg);
    }
    ks__yaml_reader_free(r);
    return rc;
}
