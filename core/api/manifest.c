/* Manifest loading (YAML / JSON / List) with the API server's strictness; see manifest.h.
 *
 * Positions cost memory for every value of a file, and problems are rare, so they are found
 * only when needed: each document (or JSON value) is read and checked once without positions;
 * only a document with problems is read a second time, with positions, to report them. */
#include "api/manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube_schema.h"
#include "api/yaml_read.h"
#include "util/readfile.h"
#include "util/strmap.h"
#include "kubesched/plugin.h"

/* ---- where values are: a pointer -> line:col table for one document ------------------------- */

typedef struct pos_slot {
    const cJSON *item;
    size_t line, col;
} pos_slot;

typedef struct pos_map {
    pos_slot *slots;
    size_t cap, len;
    int oom;
} pos_map;

static size_t pos_hash(const cJSON *item, size_t cap)
{
    uintptr_t h = (uintptr_t)item;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static void pos_put(void *ctx, const cJSON *item, size_t line, size_t col)
{
    pos_map *pm = ctx;
    if (pm->oom)
        return;
    if (2 * (pm->len + 1) > pm->cap) {
        size_t cap = pm->cap ? pm->cap * 2 : 256;
        pos_slot *s = calloc(cap, sizeof(*s));
        if (!s) {
            pm->oom = 1; /* problems are then reported at their object's position */
            return;
        }
        for (size_t i = 0; i < pm->cap; i++) {
            if (!pm->slots[i].item)
                continue;
            size_t j = pos_hash(pm->slots[i].item, cap);
            while (s[j].item)
                j = (j + 1) & (cap - 1);
            s[j] = pm->slots[i];
        }
        free(pm->slots);
        pm->slots = s;
        pm->cap = cap;
    }
    size_t j = pos_hash(item, pm->cap);
    while (pm->slots[j].item && pm->slots[j].item != item)
        j = (j + 1) & (pm->cap - 1);
    pm->len += !pm->slots[j].item;
    pm->slots[j] = (pos_slot){item, line, col};
}

static const pos_slot *pos_get(const pos_map *pm, const cJSON *item)
{
    if (!pm || !pm->cap)
        return NULL;
    size_t j = pos_hash(item, pm->cap);
    while (pm->slots[j].item) {
        if (pm->slots[j].item == item)
            return &pm->slots[j];
        j = (j + 1) & (pm->cap - 1);
    }
    return NULL;
}

/* ---- one load ---------------------------------------------------------------------------------
 */

typedef struct mload {
    const char *path;
    ks_manifest_opts o;
    ks_manifest *m;
    const char *text;
    size_t len;
    int reporting;            /* the second reading of a document: problems are reported */
    const pos_map *pos;       /* with it, where its values are; NULL when unknown */
    size_t problems;          /* found in the current reading */
    size_t obj_line, obj_col; /* where the object being checked starts (fallback position) */
    char label[160];          /* "Pod default/web: " for messages about it */
    size_t root_line;         /* the first reading: where the document's root value starts */
    size_t doc_offset, doc_line, doc_col; /* the current document's text, for re-reading */
} mload;

static void obj_label(mload *L, const cJSON *obj)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    L->label[0] = '\0';
    if (!cJSON_IsString(kind) || !cJSON_IsString(name))
        return;
    if (cJSON_IsString(ns))
        snprintf(L->label, sizeof(L->label), "%s %s/%s: ", kind->valuestring, ns->valuestring,
                 name->valuestring);
    else
        snprintf(L->label, sizeof(L->label), "%s %s: ", kind->valuestring, name->valuestring);
}

/* A problem of the current object about item (NULL: the object itself). */
static KS_PRINTF(4, 5) void problem(mload *L, const cJSON *item, int is_error, const char *fmt, ...)
{
    char msg[768], line[1024];
    va_list ap;
    L->problems++;
    if (!L->reporting)
        return;
    if (is_error)
        L->m->errors++;
    else
        L->m->warnings++;
    if (!L->o.report || L->m->errors + L->m->warnings > KS_MANIFEST_MAX_REPORTED)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const pos_slot *at = item ? pos_get(L->pos, item) : NULL;
    snprintf(line, sizeof(line), "%s:%zu:%zu: %s: %s%s", L->path, at ? at->line : L->obj_line,
             at ? at->col : L->obj_col, is_error ? "error" : "warning", L->label, msg);
    L->o.report(L->o.ctx, line);
}

static void on_schema_problem(void *ctx, const cJSON *item, ks_kube_problem what, const char *path,
                              const char *msg)
{
    mload *L = ctx;
    (void)path;
    problem(L, item, what != KS_KUBE_UNKNOWN_FIELD || L->o.strict, "%s", msg);
}

static const char *str_field(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Checks one object. Objects without a kind, or with a kind their apiVersion does not have, get
 * a warning here and are left out by add_object (nothing would read them: a typo such as `kind:
 * Nodes`); objects of a kind with a schema are checked against it. */
static void check_object(mload *L, const cJSON *obj)
{
    const char *api_version = str_field(obj, "apiVersion"), *kind = str_field(obj, "kind");
    const char *suggestion = NULL;
    const pos_slot *at = pos_get(L->pos, obj);
    if (at) {
        L->obj_line = at->line;
        L->obj_col = at->col;
    }
    obj_label(L, obj);
    switch (ks__kube_classify(api_version, kind, &suggestion)) {
    case KS_KUBE_KIND_MISSING: {
        const char *unset = kind && *kind ? "apiVersion" : "kind";
        problem(L, cJSON_GetObjectItemCaseSensitive(obj, unset), L->o.strict,
                "%s not set: the object is left out", unset);
        return;
    }
    case KS_KUBE_KIND_UNKNOWN:
        problem(L, cJSON_GetObjectItemCaseSensitive(obj, "kind"), L->o.strict,
                "no kind \"%s\" is registered for version \"%s\"%s%s%s: the object is left out",
                kind, api_version, suggestion ? " (did you mean \"" : "",
                suggestion ? suggestion : "", suggestion ? "\"?)" : "");
        return;
    case KS_KUBE_KIND_CHECKED:
        ks__kube_check(obj, on_schema_problem, L);
        return;
    default:
        return; /* kinds kubesched does not read: simulate counts them */
    }
}

static int is_list(const cJSON *v)
{
    const char *kind = str_field(v, "kind");
    size_t n = kind ? strlen(kind) : 0;
    return n >= 4 && !strcmp(kind + n - 4, "List") &&
           cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(v, "items"));
}

/* The items of a typed list (PodList from the API, `kubectl get --raw`) carry no kind of their
 * own: the list's kind without "List", in the list's apiVersion, as the API's decoder reads them.
 */
static void fill_typed_list_kinds(cJSON *root)
{
    const char *kind = str_field(root, "kind"), *api_version = str_field(root, "apiVersion");
    char item_kind[128];
    if (!is_list(root) || !api_version || !strcmp(kind, "List") ||
        strlen(kind) >= sizeof(item_kind))
        return;
    snprintf(item_kind, sizeof(item_kind), "%.*s", (int)(strlen(kind) - 4), kind);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
    for (cJSON *it = items->child; it; it = it->next) {
        if (!cJSON_IsObject(it))
            continue;
        if (!cJSON_HasObjectItem(it, "kind"))
            cJSON_AddStringToObject(it, "kind", item_kind);
        if (!cJSON_HasObjectItem(it, "apiVersion"))
            cJSON_AddStringToObject(it, "apiVersion", api_version);
    }
}

/* Checks each object the value holds: itself, a List's items, a top-level sequence's items (as
 * a JSON array of objects is read); reports what is not an object. */
static void check_objects(mload *L, const cJSON *v)
{
    const cJSON *items = cJSON_IsArray(v) ? v
                         : is_list(v)     ? cJSON_GetObjectItemCaseSensitive(v, "items")
                                          : NULL;
    if (cJSON_IsNull(v))
        return; /* an empty document */
    if (!items) {
        if (cJSON_IsObject(v)) {
            check_object(L, v);
            return;
        }
        L->label[0] = '\0';
        problem(L, v, 1, "expected an object (a Kubernetes manifest), got %s",
                ks__yaml_value_phrase(v));
        return;
    }
    size_t i = 0;
    for (const cJSON *it = items->child; it; it = it->next, i++) {
        if (cJSON_IsObject(it)) {
            check_object(L, it);
            continue;
        }
        L->label[0] = '\0';
        problem(L, it, 1, "items[%zu]: expected an object (a Kubernetes manifest), got %s", i,
                ks__yaml_value_phrase(it));
    }
}

/* JSON text can repeat a key, which cJSON keeps twice; the API server refuses it ("duplicate
 * field"), so a value that does it is read again by the YAML reader, which reports where. */
static int object_repeats_a_key(const cJSON *v)
{
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next)
        n++;
    if (n <= 16) { /* the usual object: a scan is cheaper than a table */
        for (const cJSON *c = v->child; c; c = c->next)
            for (const cJSON *d = v->child; d != c; d = d->next)
                if (!strcmp(c->string, d->string))
                    return 1;
        return 0;
    }
    ks_strmap seen;
    int dup = 0;
    ks__strmap_init(&seen);
    for (const cJSON *c = v->child; c && !dup; c = c->next)
        dup = ks__strmap_get(&seen, c->string) || ks__strmap_put(&seen, c->string, (void *)1, NULL);
    ks__strmap_destroy(&seen);
    return dup; /* out of memory counts as a repeat: the second reading then says what it finds */
}

static int has_duplicate_keys(const cJSON *v)
{
    if (cJSON_IsObject(v) && object_repeats_a_key(v))
        return 1;
    for (const cJSON *c = v->child; c; c = c->next)
        if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && has_duplicate_keys(c))
            return 1;
    return 0;
}

/* ---- adding the objects ------------------------------------------------------------------------
 */

static int push(mload *L, cJSON *obj, size_t item, const char *where)
{
    ks_manifest *m = L->m;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        ks_manifest_obj *o = realloc(m->objs, cap * sizeof(*o));
        if (!o)
            return KS_ENOMEM;
        m->objs = o;
        m->cap = cap;
    }
    m->objs[m->n].obj = obj;
    snprintf(m->objs[m->n].where, sizeof(m->objs[m->n].where), "%s", where);
    m->objs[m->n].doc_offset = L->doc_offset;
    m->objs[m->n].doc_line = L->doc_line;
    m->objs[m->n].doc_col = L->doc_col;
    m->objs[m->n].item = item;
    m->n++;
    return 0;
}

/* Moves obj (owned) into the manifest, unless its kind was left out (check_object). */
static int add_object(mload *L, cJSON *obj, const char *field, size_t i, const char *where)
{
    char w[64];
    const char *suggestion;
    ks_kube_kind_class k =
        ks__kube_classify(str_field(obj, "apiVersion"), str_field(obj, "kind"), &suggestion);
    if (k == KS_KUBE_KIND_MISSING || k == KS_KUBE_KIND_UNKNOWN) {
        L->m->unknown_kinds++;
        cJSON_Delete(obj);
        return 0;
    }
    if (i == SIZE_MAX)
        snprintf(w, sizeof(w), "%s", where);
    else
        snprintf(w, sizeof(w), "%s, %s[%zu]", where, field, i);
    int rc = push(L, obj, i, w);
    if (rc)
        cJSON_Delete(obj);
    return rc;
}

/* Moves the objects of a document (itself, or the items of a List or a top-level sequence) into
 * the manifest; what is not an object was reported by check_object's pass and is dropped. */
static int take_objects(mload *L, cJSON *root, const char *where)
{
    cJSON *items = cJSON_IsArray(root) ? root
                   : is_list(root)     ? cJSON_GetObjectItemCaseSensitive(root, "items")
                                       : NULL;
    if (!items) {
        if (!cJSON_IsObject(root)) {
            cJSON_Delete(root);
            return 0;
        }
        return add_object(L, root, "", SIZE_MAX, where);
    }
    int rc = 0;
    for (size_t i = 0; items->child && !rc; i++) {
        cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
        if (cJSON_IsObject(it))
            rc = add_object(L, it, items == root ? "" : "items", i, where);
        else
            cJSON_Delete(it);
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------------
 */

static void root_placed(void *ctx, const cJSON *item, size_t line, size_t col)
{
    mload *L = ctx;
    (void)item;
    (void)col;
    L->root_line = line; /* the root value is the last one placed */
}

/* Reads the document at text[offset..] again, with positions, and reports its problems. A JSON
 * value with a repeated key (dups) is refused by the YAML reader: that refusal, with its position,
 * is the problem to report. */
static void report_with_positions(mload *L, cJSON *first, size_t offset, size_t line, size_t col,
                                  int dups)
{
    pos_map pm = {0};
    ks_yaml_read_opts ro = {.base_line = line, .base_col = col, .placed = pos_put, .ctx = &pm};
    ks_yaml_reader *r = ks__yaml_reader_new(L->text + offset, L->len - offset, &ro);
    ks_yaml_doc doc = {0};
    char err[512];
    int rc = r ? ks__yaml_reader_next(r, &doc, err, sizeof(err)) : KS_ENOMEM;
    L->reporting = 1;
    if (rc == 1)
        fill_typed_list_kinds(doc.root);
    if (rc == 1 && !pm.oom) {
        L->pos = &pm;
        check_objects(L, doc.root);
    } else if (rc < 0 && rc != KS_ENOMEM && dups) {
        L->m->errors++;
        if (L->o.report) {
            char msg[768];
            snprintf(msg, sizeof(msg), "%s:%s", L->path, err);
            L->o.report(L->o.ctx, msg);
        }
    } else {
        check_objects(L, first); /* no positions: each problem at its document */
        if (dups) {              /* the reading with positions failed for want of memory */
            L->label[0] = '\0';
            problem(L, NULL, 1, "a repeated key (duplicate field)");
        }
    }
    L->pos = NULL;
    L->reporting = 0;
    cJSON_Delete(doc.root);
    ks__yaml_reader_free(r);
    free(pm.slots);
}

/* Checks one document (or JSON value) and moves its objects into the manifest; takes root. */
static int take_document(mload *L, cJSON *root, size_t offset, size_t line, size_t col,
                         int check_duplicates, const char *where)
{
    L->problems = 0;
    L->obj_line = line;
    L->obj_col = col;
    L->doc_offset = offset;
    L->doc_line = line;
    L->doc_col = col;
    fill_typed_list_kinds(root);
    check_objects(L, root);
    int dups = check_duplicates && has_duplicate_keys(root);
    if (L->problems || dups) {
        L->obj_line = line;
        L->obj_col = col;
        report_with_positions(L, root, offset, line, col, dups);
    }
    return take_objects(L, root, where);
}

/* Advances (line, col) over text[from..to). */
static void advance(const char *text, size_t from, size_t to, size_t *line, size_t *col)
{
    for (size_t i = from; i < to; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

/* Spaces, newlines and `---` separator lines between JSON values. */
static size_t skip_between_json(const char *t, size_t i, size_t len)
{
    for (;;) {
        while (i < len && strchr(" \t\r\n", t[i]))
            i++;
        if (i + 3 <= len && !memcmp(t + i, "---", 3)) {
            i += 3;
            continue;
        }
        return i;
    }
}

static int read_json(mload *L, char *err, size_t errlen)
{
    size_t i = skip_between_json(L->text, 0, L->len), at = 0, line = 1, col = 1;
    for (int n = 1; i < L->len; n++) {
        const char *end = NULL;
        char where[64];
        advance(L->text, at, i, &line, &col);
        at = i;
        cJSON *v = cJSON_ParseWithLengthOpts(L->text + i, L->len - i, &end, 0);
        if (!v) {
            size_t el = line, ec = col;
            if (end)
                advance(L->text, i, (size_t)(end - L->text), &el, &ec);
            snprintf(err, errlen, "%s:%zu:%zu: invalid JSON", L->path, el, ec);
            return KS_EPARSE;
        }
        snprintf(where, sizeof(where), "line %zu", line);
        int rc = take_document(L, v, i, line, col, 1, where);
        if (rc)
            return rc;
        i = skip_between_json(L->text, (size_t)(end - L->text), L->len);
    }
    return 0;
}

/* A document's text starts at its first token; read again from the start of that line, so that
 * its indentation means the same. */
static size_t line_start(const char *text, size_t offset, size_t *col)
{
    while (offset > 0 && *col > 1 && (text[offset - 1] == ' ' || text[offset - 1] == '\t')) {
        offset--;
        --*col;
    }
    return offset;
}

static int read_yaml(mload *L, char *err, size_t errlen)
{
    ks_yaml_read_opts ro = {.placed = root_placed, .ctx = L};
    ks_yaml_reader *r = ks__yaml_reader_new(L->text, L->len, &ro);
    int rc;
    if (!r)
        return KS_ENOMEM;
    for (;;) {
        ks_yaml_doc doc;
        char msg[512], where[64];
        rc = ks__yaml_reader_next(r, &doc, msg, sizeof(msg));
        if (rc == 0)
            break;
        if (rc < 0) {
            snprintf(err, errlen, "%s:%s", L->path, msg);
            break;
        }
        snprintf(where, sizeof(where), "line %zu", L->root_line ? L->root_line : doc.line);
        size_t col = doc.col, off = line_start(L->text, doc.offset, &col);
        rc = take_document(L, doc.root, off, doc.line, col, 0, where);
        if (rc)
            break;
    }
    ks__yaml_reader_free(r);
    return rc;
}

/* "1 GiB", "64 MiB" or "100 bytes", for the size-cap message. */
static void fmt_size(size_t n, char *buf, size_t len)
{
    if (n && n % ((size_t)1 << 30) == 0)
        snprintf(buf, len, "%zu GiB", n >> 30);
    else if (n && n % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else
        snprintf(buf, len, "%zu bytes", n);
}

static char *read_file(const char *path, size_t max, size_t *len, int *rcp, char *err,
                       size_t errlen)
{
    char *buf = NULL, cap[32];
    int rc = ks__read_file(path, max, &buf, len);
    if (rc)
        *rcp = rc == -ENOMEM ? KS_ENOMEM : KS_EIO;
    if (rc == -EFBIG) {
        fmt_size(max, cap, sizeof(cap));
        snprintf(err, errlen, "%s: larger than %s, the limit for a cluster file", path, cap);
    } else if (rc == -EISDIR) {
        snprintf(err, errlen, "%s: is a directory; expected a file of manifests (YAML or JSON)",
                 path);
    } else if (rc == -ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", path);
    } else if (rc == -EIO) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
    } else if (rc) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(-rc));
    }
    return rc ? NULL : buf;
}

/* A NUL byte ends C strings early: the rest of the file would be lost without a word. */
static int refuse_nul(const mload *L, char *err, size_t errlen)
{
    const char *nul = memchr(L->text, '\0', L->len);
    size_t line = 1, col = 1;
    if (!nul)
        return 0;
    advance(L->text, 0, (size_t)(nul - L->text), &line, &col);
    snprintf(err, errlen, "%s:%zu:%zu: a NUL byte: the file is not text (binary or corrupt)",
             L->path, line, col);
    return KS_EPARSE;
}

int ks__manifest_read(const char *path, const ks_manifest_opts *o, ks_manifest *m, char *err,
                      size_t errlen)
{
    mload L = {.path = path, .m = m};
    size_t len;
    char *text;
    int rc = 0;
    memset(m, 0, sizeof(*m));
    if (o)
        L.o = *o;
    if (!(text = read_file(path, L.o.max_bytes ? L.o.max_bytes : KS_MANIFEST_MAX_BYTES, &len, &rc,
                           err, errlen)))
        return rc;
    L.text = text;
    L.len = len;
    if (!(rc = refuse_nul(&L, err, errlen))) {
        /* JSON when the first non-space character opens an object or array. */
        size_t i = 0;
        while (i < len && strchr(" \t\r\n", text[i]))
            i++;
        rc = i < len && (text[i] == '{' || text[i] == '[') ? read_json(&L, err, errlen)
                                                           : read_yaml(&L, err, errlen);
    }
    if (rc == KS_ENOMEM)
        snprintf(err, errlen, "%s: out of memory", path);
    if (!rc && m->errors) {
        snprintf(err, errlen, "%s: %zu error%s in the objects (reported above)", path, m->errors,
                 m->errors == 1 ? "" : "s");
        rc = KS_EINVAL;
    }
    free(text);
    if (rc) {
        size_t errors = m->errors, warnings = m->warnings;
        ks__manifest_free(m);
        m->errors = errors;
        m->warnings = warnings;
    }
    return rc;
}

/* ---- locating a field after loading ------------------------------------------------------ */

/* The child of object v whose key starts p and ends where a path segment does ("." "[" or the
 * end): keys may hold dots themselves (label keys), so the longest such key wins. */
static const cJSON *child_at(const cJSON *v, const char *p, size_t *used)
{
    const cJSON *best = NULL;
    *used = 0;
    for (const cJSON *c = cJSON_IsObject(v) ? v->child : NULL; c; c = c->next) {
        size_t n = strlen(c->string);
        if (n > *used && !strncmp(p, c->string, n) && (!p[n] || p[n] == '.' || p[n] == '[')) {
            best = c;
            *used = n;
        }
    }
    return best;
}

/* The deepest value of v that field_path reaches. */
static const cJSON *follow(const cJSON *v, const char *p)
{
    while (*p && v) {
        const cJSON *next;
        size_t used;
        if (*p == '[') {
            char *end;
            unsigned long i = strtoul(p + 1, &end, 10);
            next = *end == ']' && cJSON_IsArray(v) ? cJSON_GetArrayItem(v, (int)i) : NULL;
            used = (size_t)(end - p) + 1;
        } else {
            next = child_at(v, p, &used);
        }
        if (!next)
            break;
        v = next;
        p += used;
        if (*p == '.')
            p++;
    }
    return v;
}

/* The object o is in the document root: itself, or its item. */
static const cJSON *object_in(const cJSON *root, const ks_manifest_obj *o)
{
    const cJSON *items = cJSON_IsArray(root) ? root
                         : is_list(root)     ? cJSON_GetObjectItemCaseSensitive(root, "items")
                                             : NULL;
    if (o->item == SIZE_MAX)
        return root;
    return items && o->item <= INT32_MAX ? cJSON_GetArrayItem(items, (int)o->item) : NULL;
}

int ks__manifest_locate(const char *path, const ks_manifest_obj *o, const char *field_path,
                        size_t *line, size_t *col)
{
    char *text = NULL, err[512];
    size_t len = 0;
    pos_map pm = {0};
    ks_yaml_doc doc = {0};
    int rc = ks__read_file(path, KS_MANIFEST_MAX_BYTES, &text, &len);
    if (rc)
        return rc == -ENOMEM ? KS_ENOMEM : KS_EIO;
    ks_yaml_read_opts ro = {
        .base_line = o->doc_line, .base_col = o->doc_col, .placed = pos_put, .ctx = &pm};
    ks_yaml_reader *r = o->doc_offset < len
                            ? ks__yaml_reader_new(text + o->doc_offset, len - o->doc_offset, &ro)
                            : NULL;
    rc = r ? ks__yaml_reader_next(r, &doc, err, sizeof(err)) : KS_EINVAL;
    const pos_slot *at = NULL;
    if (rc == 1 && !pm.oom) {
        const cJSON *obj = object_in(doc.root, o);
        at = obj ? pos_get(&pm, follow(obj, field_path)) : NULL;
    }
    if (at) {
        *line = at->line;
        *col = at->col;
    }
    cJSON_Delete(doc.root);
    ks__yaml_reader_free(r);
    free(pm.slots);
    free(text);
    return at ? 0 : KS_ENOTFOUND;
}

int ks__manifest_load(const char *path, ks_manifest *m, char *err, size_t errlen)
{
    return ks__manifest_read(path, NULL, m, err, errlen);
}

void ks__manifest_free(ks_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        cJSON_Delete(m->objs[i].obj);
    free(m->objs);
    memset(m, 0, sizeof(*m));
}
