/*
 * Kinds and strict field checking against the generated schema (kube_schema.h says what and
 * why). The checker walks the cJSON tree and the schema side by side, keeping the two paths
 * upstream's messages use: the strict path of unknown-field warnings, with list indexes and map
 * keys ("spec.containers[0].resoures"), and the decoder's error path, without them but with the
 * Go names of embedded structs ("spec.containers.resources", "TypeMeta.kind").
 */
#include "api/kube_schema.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *str_at(uint32_t off) { return ks__kube_strings + off; }

/* ---- Kinds ---- */

/* The group of an apiVersion ("" for the core group's "v1"), as a length into api_version. */
static size_t group_len(const char *api_version)
{
    const char *slash = strchr(api_version, '/');
    return slash ? (size_t)(slash - api_version) : 0;
}

static int row_cmp(const ks_kube_kind_row *row, const char *api_version, const char *kind)
{
    int c = strcmp(str_at(row->api_version), api_version);
    return c ? c : strcmp(str_at(row->kind), kind);
}

/* The first row not ordered before (api_version, kind); ks__kube_n_kinds when there is none. */
static size_t lower_bound(const char *api_version, const char *kind)
{
    size_t lo = 0, hi = ks__kube_n_kinds;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (row_cmp(&ks__kube_kinds[mid], api_version, kind) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const ks_kube_kind_row *find_kind(const char *api_version, const char *kind)
{
    size_t i = lower_bound(api_version, kind);
    if (i < ks__kube_n_kinds && row_cmp(&ks__kube_kinds[i], api_version, kind) == 0)
        return &ks__kube_kinds[i];
    return NULL;
}

static int group_is_builtin(const char *api_version)
{
    size_t n = group_len(api_version);
    for (size_t i = 0; i < ks__kube_n_kinds; i++) {
        const char *av = str_at(ks__kube_kinds[i].api_version);
        if (group_len(av) == n && strncmp(av, api_version, n) == 0)
            return 1;
    }
    return 0;
}

/* Whether a and b are equal ignoring case, or one insertion, deletion or substitution apart. */
static int within_one_edit(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb)
        return within_one_edit(b, a);
    if (la - lb > 1)
        return 0;
    size_t i = 0;
    while (i < lb && tolower((unsigned char)a[i]) == tolower((unsigned char)b[i]))
        i++;
    if (i == lb)
        return 1; /* equal, or a has one more character at the end */
    /* The first difference is the edit: substitution (same lengths) or a deletion from a. */
    const char *ra = a + i + 1, *rb = la == lb ? b + i + 1 : b + i;
    return strcasecmp(ra, rb) == 0;
}

/* The kind of api_version closest to kind: equal ignoring case first, then one edit away. */
static const char *suggest(const char *api_version, const char *kind)
{
    size_t first = lower_bound(api_version, "");
    const char *near = NULL;
    for (size_t i = first; i < ks__kube_n_kinds; i++) {
        const ks_kube_kind_row *row = &ks__kube_kinds[i];
        if (strcmp(str_at(row->api_version), api_version) != 0)
            break;
        if (strcasecmp(str_at(row->kind), kind) == 0)
            return str_at(row->kind);
        if (!near && within_one_edit(str_at(row->kind), kind))
            near = str_at(row->kind);
    }
    return near;
}

ks_kube_kind_class ks__kube_classify(const char *api_version, const char *kind,
                                     const char **suggestion)
{
    if (suggestion)
        *suggestion = NULL;
    if (!api_version || !*api_version || !kind || !*kind)
        return KS_KUBE_KIND_MISSING;
    const ks_kube_kind_row *row = find_kind(api_version, kind);
    if (row)
        return row->type >= 0 ? KS_KUBE_KIND_CHECKED : KS_KUBE_KIND_BUILTIN;
    if (!group_is_builtin(api_version))
        return KS_KUBE_KIND_CUSTOM;
    if (suggestion)
        *suggestion = suggest(api_version, kind);
    return KS_KUBE_KIND_UNKNOWN;
}

static const char *string_member(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

ks_kube_kind_class ks__kube_classify_obj(const cJSON *obj, const char **suggestion)
{
    if (!cJSON_IsObject(obj)) {
        if (suggestion)
            *suggestion = NULL;
        return KS_KUBE_KIND_MISSING;
    }
    return ks__kube_classify(string_member(obj, "apiVersion"), string_member(obj, "kind"),
                             suggestion);
}

/* ---- Paths ---- */

/* Room for a path; a deeper one is cut short (the message stays readable, the check goes on). */
#define KS_KUBE_PATH_MAX 1024

typedef struct path {
    char s[KS_KUBE_PATH_MAX];
    size_t len;
} path;

/* Appends sep (left out at the start of the path) and part, cutting the path short when full. */
static void path_add(path *p, const char *sep, const char *part)
{
    size_t room = sizeof(p->s) - p->len;
    int n = snprintf(p->s + p->len, room, "%s%s", p->len ? sep : "", part);
    if (n > 0)
        p->len = (size_t)n < room ? p->len + (size_t)n : sizeof(p->s) - 1;
}

static void path_add_index(path *p, int i)
{
    char idx[24];
    snprintf(idx, sizeof(idx), "[%d]", i);
    path_add(p, "", idx);
}

static void path_cut(path *p, size_t len)
{
    p->len = len;
    p->s[len] = '\0';
}

/* ---- Checking ---- */

typedef struct walk {
    ks_kube_report_fn report;
    void *ctx;
    size_t problems;
    path strict;  /* "spec.containers[0].ports[1].hostPort": unknown-field warnings, callers */
    path decoder; /* "spec.containers.ports.hostPort": the decoder's type errors */
} walk;

static const ks_kube_type *type_at(uint16_t i) { return &ks__kube_types[i]; }

static void report(walk *w, const cJSON *item, ks_kube_problem what, const char *msg)
{
    w->problems++;
    if (w->report)
        w->report(w->ctx, item, what, w->strict.s, msg);
}

/* Go's words for the JSON type of a value in its type errors. */
static const char *json_type_name(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsNumber(v))
        return "number";
    if (cJSON_IsBool(v))
        return "bool";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    return "value";
}

/* A number as Go would quote it from its source: integers in full, others in the shortest form
 * that reads back exactly. */
static void format_number(double v, char *out, size_t n)
{
    if (v == floor(v) && fabs(v) < 1e21) {
        snprintf(out, n, "%.0f", v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* Go's UnmarshalTypeError text. value: "string", "number 1.5"...; struct_name: the innermost Go
 * struct whose field holds the value, NULL at the top (then upstream names no field). */
static void type_error(walk *w, const cJSON *item, ks_kube_problem what, const char *value,
                       const char *struct_name, const ks_kube_type *t)
{
    char msg[KS_KUBE_PATH_MAX + 256];
    if (struct_name)
        snprintf(msg, sizeof(msg),
                 "json: cannot unmarshal %s into Go struct field %s.%s of type %s", value,
                 struct_name, w->decoder.s, str_at(t->name));
    else
        snprintf(msg, sizeof(msg), "json: cannot unmarshal %s into Go value of type %s", value,
                 str_at(t->name));
    report(w, item, what, msg);
}

static void wrong_type(walk *w, const cJSON *item, const char *struct_name, const ks_kube_type *t)
{
    type_error(w, item, KS_KUBE_WRONG_TYPE, json_type_name(item), struct_name, t);
}

static void out_of_range(walk *w, const cJSON *item, const char *struct_name, const ks_kube_type *t)
{
    char value[64] = "number ";
    format_number(item->valuedouble, value + 7, sizeof(value) - 7);
    type_error(w, item, KS_KUBE_OUT_OF_RANGE, value, struct_name, t);
}

/* The integers a Go integer type holds, as [lo, hi): both bounds are exact doubles. */
static void int_range(ks_kube_type_kind kind, double *lo, double *hi)
{
    static const struct {
        double lo, hi;
    } ranges[] = {
        [KS_KUBE_T_INT8] = {-0x1p7, 0x1p7},
        [KS_KUBE_T_INT16] = {-0x1p15, 0x1p15},
        [KS_KUBE_T_INT32] = {-0x1p31, 0x1p31},
        [KS_KUBE_T_INT64] = {-0x1p63, 0x1p63},
        [KS_KUBE_T_UINT8] = {0, 0x1p8},
        [KS_KUBE_T_UINT16] = {0, 0x1p16},
        [KS_KUBE_T_UINT32] = {0, 0x1p32},
        [KS_KUBE_T_UINT64] = {0, 0x1p64},
        [KS_KUBE_T_INT_OR_STRING] = {-0x1p31, 0x1p31}, /* its int is an int32 */
    };
    *lo = ranges[kind].lo;
    *hi = ranges[kind].hi;
}

static int integer_fits(double v, ks_kube_type_kind kind)
{
    double lo, hi;
    int_range(kind, &lo, &hi);
    return isfinite(v) && v == floor(v) && v >= lo && v < hi;
}

static void check_value(walk *w, const cJSON *item, uint16_t type, const char *struct_name);

/* The field of struct s named key, by binary search (the generator sorts them by strcmp). */
static const ks_kube_field *find_field(const ks_kube_struct *s, const char *key)
{
    size_t lo = s->first_field, hi = (size_t)s->first_field + s->n_fields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(str_at(ks__kube_fields[mid].json), key);
        if (c == 0)
            return &ks__kube_fields[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The rune of the UTF-8 sequence at s and its length in *len, or -1 (length 1) for a byte that
 * starts no valid sequence (overlong, surrogate, beyond U+10FFFF, cut short). */
static long utf8_rune(const unsigned char *s, size_t *len)
{
    static const long min_of_len[] = {0, 0, 0x80, 0x800, 0x10000};
    size_t n = s[0] >= 0xf0 && s[0] < 0xf8 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    *len = 1;
    if (n == 0)
        return -1;
    long r = s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        r = r << 6 | (s[i] & 0x3f);
    }
    if (r < min_of_len[n] || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
        return -1;
    *len = n;
    return r;
}

/* Whether Go's strconv.Quote keeps rune r (>= 0x80) as it is: its unicode.IsPrint, less what would
 * need Unicode's tables (unassigned code points pass through here). Escaped: C1 controls, the
 * spaces other than U+0020, format characters (soft hyphen, zero-width and bidi marks, BOM),
 * private use and non-characters. */
static int go_prints(long r)
{
    static const long hidden[][2] = {
        {0x80, 0xa0},     {0xad, 0xad},       {0x600, 0x605},      {0x61c, 0x61c},
        {0x6dd, 0x6dd},   {0x70f, 0x70f},     {0x1680, 0x1680},    {0x180e, 0x180e},
        {0x2000, 0x200f}, {0x2028, 0x202f},   {0x205f, 0x206f},    {0x3000, 0x3000},
        {0xd800, 0xf8ff}, {0xfdd0, 0xfdef},   {0xfeff, 0xfeff},    {0xfff0, 0xfffb},
        {0xfffe, 0xffff}, {0xe0000, 0xe0fff}, {0xf0000, 0x10ffff},
    };
    for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
        if (r >= hidden[i][0] && r <= hidden[i][1])
            return 0;
    return (r & 0xfffe) != 0xfffe; /* U+xFFFE, U+xFFFF of every plane are non-characters */
}

/* strconv.Quote's escaping, which upstream's unknown-field warning applies to the path: quotes,
 * backslashes and ASCII controls as C escapes, runes Go does not print as \u or \U, bytes of no
 * valid UTF-8 as \x. out must hold 4 bytes per byte of s, plus 1. */
static void go_quote(const char *s, char *out, size_t n)
{
    static const char plain[] = "\"\\\a\b\f\n\r\t\v", escaped[] = "\"\\abfnrtv";
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    while (*u && o + 11 < n) {
        const char *hit = *u < 0x80 ? strchr(plain, *u) : NULL;
        size_t len = 1;
        long r = *u < 0x80 ? *u : utf8_rune(u, &len);
        if (hit) {
            out[o++] = '\\';
            out[o++] = escaped[hit - plain];
        } else if (r < 0 || r < 0x20 || r == 0x7f) {
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", *u);
        } else if (r >= 0x80 && !go_prints(r)) {
            o += (size_t)snprintf(out + o, n - o, r < 0x10000 ? "\\u%04lx" : "\\U%08lx", r);
        } else {
            memcpy(out + o, u, len);
            o += len;
        }
        u += len;
    }
    out[o] = '\0';
}

static void unknown_field(walk *w, const cJSON *item)
{
    char quoted[KS_KUBE_PATH_MAX * 4 + 1], msg[sizeof(quoted) + 32];
    go_quote(w->strict.s, quoted, sizeof(quoted));
    snprintf(msg, sizeof(msg), "unknown field \"%s\"", quoted);
    report(w, item, KS_KUBE_UNKNOWN_FIELD, msg);
}

static void check_struct(walk *w, const cJSON *obj, const ks_kube_type *t)
{
    const ks_kube_struct *s = &ks__kube_structs[t->ref];
    const cJSON *child;
    cJSON_ArrayForEach(child, obj)
    {
        const char *key = child->string ? child->string : "";
        size_t strict_len = w->strict.len, decoder_len = w->decoder.len;
        path_add(&w->strict, ".", key);
        const ks_kube_field *f = find_field(s, key);
        if (f) {
            path_add(&w->decoder, ".", str_at(f->err_seg));
            check_value(w, child, f->type, str_at(s->name));
        } else {
            unknown_field(w, child);
        }
        path_cut(&w->strict, strict_len);
        path_cut(&w->decoder, decoder_len);
    }
}

/* Elements of a list and values of a map keep the decoder's path and struct (upstream names the
 * field that holds the list), while the strict path adds the index or key. */
static void check_slice(walk *w, const cJSON *arr, const ks_kube_type *t, const char *struct_name)
{
    const cJSON *el;
    int i = 0;
    cJSON_ArrayForEach(el, arr)
    {
        size_t strict_len = w->strict.len;
        path_add_index(&w->strict, i++);
        check_value(w, el, t->ref, struct_name);
        path_cut(&w->strict, strict_len);
    }
}

static void check_map(walk *w, const cJSON *obj, const ks_kube_type *t, const char *struct_name)
{
    const cJSON *el;
    cJSON_ArrayForEach(el, obj)
    {
        size_t strict_len = w->strict.len;
        path_add(&w->strict, ".", el->string ? el->string : "");
        check_value(w, el, t->ref, struct_name);
        path_cut(&w->strict, strict_len);
    }
}

static void check_number(walk *w, const cJSON *item, const ks_kube_type *t, const char *struct_name)
{
    double v = item->valuedouble;
    switch ((ks_kube_type_kind)t->kind) {
    case KS_KUBE_T_FLOAT64:
        return;
    case KS_KUBE_T_FLOAT32:
        if (!isfinite(v) || fabs(v) > FLT_MAX)
            out_of_range(w, item, struct_name, t);
        return;
    default:
        if (!integer_fits(v, (ks_kube_type_kind)t->kind))
            out_of_range(w, item, struct_name, t);
    }
}

static void check_value(walk *w, const cJSON *item, uint16_t type, const char *struct_name)
{
    const ks_kube_type *t = type_at(type);
    if (cJSON_IsNull(item))
        return; /* the zero value, for every type */
    switch ((ks_kube_type_kind)t->kind) {
    case KS_KUBE_T_STRING:
    case KS_KUBE_T_TEXT:
    case KS_KUBE_T_BYTES:
        if (!cJSON_IsString(item))
            wrong_type(w, item, struct_name, t);
        return;
    case KS_KUBE_T_BOOL:
        if (!cJSON_IsBool(item))
            wrong_type(w, item, struct_name, t);
        return;
    case KS_KUBE_T_QUANTITY:
        if (!cJSON_IsString(item) && !cJSON_IsNumber(item))
            wrong_type(w, item, struct_name, t);
        return;
    case KS_KUBE_T_INT_OR_STRING:
        if (cJSON_IsNumber(item))
            check_number(w, item, t, struct_name);
        else if (!cJSON_IsString(item))
            wrong_type(w, item, struct_name, t);
        return;
    case KS_KUBE_T_ANY:
        return;
    case KS_KUBE_T_SLICE:
        if (cJSON_IsArray(item))
            check_slice(w, item, t, struct_name);
        else
            wrong_type(w, item, struct_name, t);
        return;
    case KS_KUBE_T_MAP:
        if (cJSON_IsObject(item))
            check_map(w, item, t, struct_name);
        else
            wrong_type(w, item, struct_name, t);
        return;
    case KS_KUBE_T_STRUCT:
        if (cJSON_IsObject(item))
            check_struct(w, item, t);
        else
            wrong_type(w, item, struct_name, t);
        return;
    default: /* the integer and float types */
        if (cJSON_IsNumber(item))
            check_number(w, item, t, struct_name);
        else
            wrong_type(w, item, struct_name, t);
        return;
    }
}

size_t ks__kube_check(const cJSON *obj, ks_kube_report_fn report_fn, void *ctx)
{
    if (ks__kube_classify_obj(obj, NULL) != KS_KUBE_KIND_CHECKED)
        return 0;
    const ks_kube_kind_row *row =
        find_kind(string_member(obj, "apiVersion"), string_member(obj, "kind"));
    walk w = {.report = report_fn, .ctx = ctx};
    check_value(&w, obj, (uint16_t)row->type, NULL);
    return w.problems;
}
