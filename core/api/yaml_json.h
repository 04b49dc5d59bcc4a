/*
 * libyaml node trees to cJSON, as sigs.k8s.io/yaml's YAMLToJSON, for plugin args in the scheduler
 * configuration: what does not convert is refused with the field path. (Manifests and kubeconfig
 * files are read from text by yaml_read.h, which builds cJSON directly.)
 *
 * Threads: any; no shared state.
 */
#ifndef KS_CORE_YAML_JSON_H
#define KS_CORE_YAML_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <yaml.h>

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
