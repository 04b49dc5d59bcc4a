/* YAML node trees -> cJSON, strictly; see yaml_json.h. */
#include "api/yaml_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"

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
