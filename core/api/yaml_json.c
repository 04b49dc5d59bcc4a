/* YAML -> cJSON; see yaml_json.h. The loose and the strict walks share the shape of the tree
 * walk; they differ in what a value that does not convert becomes (skipped or refused). */
#include "api/yaml_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"

/* ---- loose ------------------------------------------------------------------------------- */

static int is_plain_null(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int parse_bool(const char *s, int *b)
{
    /* sigs.k8s.io/yaml (YAML 1.1 through go-yaml v2 rules for booleans it accepts) */
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
    /* Reject forms YAML does not treat as numbers here (hex etc. are rare in manifests). */
    for (const char *q = p; *q; q++)
        if (!strchr("0123456789.eE+-", *q))
            return 0;
    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0' && errno == 0;
}

static cJSON *loose_scalar(const yaml_node_t *node)
{
    const char *v = (const char *)node->data.scalar.value;
    int b;
    double d;
    if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(v);
    if (is_plain_null(v))
        return cJSON_CreateNull();
    if (parse_bool(v, &b))
        return cJSON_CreateBool(b);
    if (parse_number(v, &d))
        return cJSON_CreateNumber(d);
    return cJSON_CreateString(v);
}

cJSON *ks__yaml_to_json(yaml_document_t *doc, yaml_node_t *node)
{
    if (!node)
        return cJSON_CreateNull();
    switch (node->type) {
    case YAML_SCALAR_NODE:
        return loose_scalar(node);
    case YAML_SEQUENCE_NODE: {
        cJSON *arr = cJSON_CreateArray();
        yaml_node_item_t *top = node->data.sequence.items.top;
        for (yaml_node_item_t *it = node->data.sequence.items.start; arr && it < top; it++)
            cJSON_AddItemToArray(arr, ks__yaml_to_json(doc, yaml_document_get_node(doc, *it)));
        return arr;
    }
    case YAML_MAPPING_NODE: {
        cJSON *obj = cJSON_CreateObject();
        yaml_node_pair_t *top = node->data.mapping.pairs.top;
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start; obj && p < top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (!k || k->type != YAML_SCALAR_NODE)
                continue;
            cJSON_AddItemToObject(obj, (const char *)k->data.scalar.value,
                                  ks__yaml_to_json(doc, yaml_document_get_node(doc, p->value)));
        }
        return obj;
    }
    default:
        return cJSON_CreateNull();
    }
}

/* ---- strict ------------------------------------------------------------------------------ */

static KS_PRINTF(4, 5) cJSON *refuse(const ks_yaml_json_strict *o, const yaml_node_t *n, int code,
                                     const char *fmt, ...)
{
    char msg[1280];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    o->fail(o->ctx, n, code, msg);
    return NULL;
}

static cJSON *strict_node(yaml_document_t *doc, const yaml_node_t *n, const char *path, int depth,
                          const ks_yaml_json_strict *o);

static cJSON *strict_sequence(yaml_document_t *doc, const yaml_node_t *n, const char *path,
                              int depth, const ks_yaml_json_strict *o)
{
    size_t i = 0;
    cJSON *out = cJSON_CreateArray();
    if (!out) {
        o->oom(o->ctx);
        return NULL;
    }
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++, i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s[%zu]", path, i);
        const yaml_node_t *item = yaml_document_get_node(doc, *it);
        cJSON *c = strict_node(doc, item, p, depth + 1, o);
        if (!c) {
            cJSON_Delete(out);
            return NULL;
        }
        if (o->placed)
            o->placed(o->ctx, c, item);
        cJSON_AddItemToArray(out, c);
    }
    return out;
}

static cJSON *strict_mapping(yaml_document_t *doc, const yaml_node_t *n, const char *path,
                             int depth, const ks_yaml_json_strict *o)
{
    cJSON *out = cJSON_CreateObject();
    if (!out) {
        o->oom(o->ctx);
        return NULL;
    }
    for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
         pair++) {
        const yaml_node_t *k = yaml_document_get_node(doc, pair->key);
        char p[512];
        const char *key =
            k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : NULL;
        if (!key) {
            cJSON_Delete(out);
            return refuse(o, k, KS_ETYPE, "%s: mapping keys must be scalars", path);
        }
        if (cJSON_GetObjectItemCaseSensitive(out, key)) {
            cJSON_Delete(out);
            return refuse(o, k, KS_EINVAL, "%s: duplicate field \"%s\"", path, key);
        }
        snprintf(p, sizeof(p), "%s.%s", path, key);
        cJSON *c = strict_node(doc, yaml_document_get_node(doc, pair->value), p, depth + 1, o);
        if (!c) {
            cJSON_Delete(out);
            return NULL;
        }
        if (o->placed)
            o->placed(o->ctx, c, k);
        cJSON_AddItemToObject(out, key, c);
    }
    return out;
}

static cJSON *strict_node(yaml_document_t *doc, const yaml_node_t *n, const char *path, int depth,
                          const ks_yaml_json_strict *o)
{
    if (*o->budget == 0)
        return refuse(o, n, KS_ERANGE, "%s: the document expands to too many values (aliases?)",
                      path);
    (*o->budget)--;
    if (depth > o->max_depth)
        return refuse(o, n, KS_ERANGE, "%s: nested more than %d levels deep", path, o->max_depth);
    switch (n ? n->type : YAML_NO_NODE) {
    case YAML_SCALAR_NODE:
        return o->scalar(o->ctx, n, path);
    case YAML_SEQUENCE_NODE:
        return strict_sequence(doc, n, path, depth, o);
    case YAML_MAPPING_NODE:
        return strict_mapping(doc, n, path, depth, o);
    default:
        return refuse(o, n, KS_EINVAL, "%s: empty node", path);
    }
}

cJSON *ks__yaml_to_json_strict(yaml_document_t *doc, const yaml_node_t *n, const char *path,
                               const ks_yaml_json_strict *o)
{
    cJSON *out = strict_node(doc, n, path, 0, o);
    if (out && o->placed)
        o->placed(o->ctx, out, n);
    return out;
}
