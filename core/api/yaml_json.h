/*
 * YAML node trees to cJSON, as sigs.k8s.io/yaml's YAMLToJSON: the one conversion, for manifests
 * and kubeconfig files (loose: what does not convert is skipped) and for plugin args in the
 * scheduler configuration (strict: what does not convert is refused with the field path).
 *
 * Threads: any; no shared state.
 */
#ifndef KS_CORE_YAML_JSON_H
#define KS_CORE_YAML_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <yaml.h>

/* Loose (manifests, kubeconfig): quoted scalars are strings; plain scalars are null (~, null,
 * empty), booleans (true/false, yes/no, on/off, y/n), numbers, else strings. A key that is not a
 * scalar is skipped, a repeated key is kept twice (lookups find the first), a missing node is
 * null. The caller owns the result (cJSON_Delete); NULL only when out of memory. */
cJSON *ks__yaml_to_json(yaml_document_t *doc, yaml_node_t *node);

/* Strict (the configuration): the caller resolves scalars and reports errors. */
typedef struct ks_yaml_json_strict {
    /* A scalar's JSON value; NULL after reporting why through fail (a value JSON cannot hold)
     * or oom. */
    cJSON *(*scalar)(void *ctx, const yaml_node_t *n, const char *path);
    /* A refused document: the node, a KS_E* code and a message that starts with the path. */
    void (*fail)(void *ctx, const yaml_node_t *n, int code, const char *msg);
    void (*oom)(void *ctx);
    size_t *budget; /* nodes that may still be visited (aliases can expand a small file a lot) */
    int max_depth;  /* nesting below n */
    void *ctx;
    /* Optional: told where each value came from, so that later messages about it can name its
     * line and column: a mapping's field by its key node, a sequence's item (and n) by its own
     * node. Called after the item is complete and before it is linked into its parent. */
    void (*placed)(void *ctx, const cJSON *item, const yaml_node_t *where);
} ks_yaml_json_strict;

/* n's tree, refusing keys that are not scalars, repeated keys, nesting deeper than max_depth and
 * more nodes than *budget (which it decrements); path names n in the messages. The caller owns the
 * result; NULL after a report through o->fail or o->oom. */
cJSON *ks__yaml_to_json_strict(yaml_document_t *doc, const yaml_node_t *n, const char *path,
                               const ks_yaml_json_strict *o);

#endif
