/* Manifest loading (YAML / JSON / List); see manifest.h. */
#include "api/manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kubesched/plugin.h"

static int is_plain_null(const char *s) { return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"); }

static int parse_bool(const char *s, int *b)
{
    /* sigs.k8s.io/yaml (YAML 1.1 through go-yaml v2 rules for booleans it accepts) */
    static const char *t[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
    static const char *f[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"};
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

cJSON *ks__yaml_to_json(yaml_document_t *doc, yaml_node_t *node)
{
    if (!node)
        return cJSON_CreateNull();
    switch (node->type) {
    case YAML_SCALAR_NODE: {
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
    case YAML_SEQUENCE_NODE: {
        cJSON *arr = cJSON_CreateArray();
        for (yaml_node_item_t *it = node->data.sequence.items.start; arr && it < node->data.sequence.items.top; it++)
            cJSON_AddItemToArray(arr, ks__yaml_to_json(doc, yaml_document_get_node(doc, *it)));
        return arr;
    }
    case YAML_MAPPING_NODE: {
        cJSON *obj = cJSON_CreateObject();
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start; obj && p < node->data.mapping.pairs.top; p++) {
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

static int push(ks_manifest *m, cJSON *obj, const char *where)
{
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
    m->n++;
    return 0;
}

/* Adds obj, flattening a List (kind ends with "List" and has items). Takes ownership. */
static int add_object(ks_manifest *m, cJSON *obj, const char *where)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    cJSON *items = cJSON_GetObjectItemCaseSensitive(obj, "items");
    if (cJSON_IsNull(obj)) {
        cJSON_Delete(obj);
        return 0;
    }
    if (cJSON_IsString(kind) && strlen(kind->valuestring) >= 4 &&
        strcmp(kind->valuestring + strlen(kind->valuestring) - 4, "List") == 0 && cJSON_IsArray(items)) {
        int i = 0;
        while (items->child) {
            cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
            char w[64];
            snprintf(w, sizeof(w), "%s, items[%d]", where, i++);
            int rc = add_object(m, it, w);
            if (rc) {
                cJSON_Delete(obj);
                return rc;
            }
        }
        cJSON_Delete(obj);
        return 0;
    }
    int rc = push(m, obj, where);
    if (rc)
        cJSON_Delete(obj);
    return rc;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 131072;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, 65536, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

int ks__manifest_load(const char *path, ks_manifest *m, char *err, size_t errlen)
{
    size_t len;
    char *text;
    int rc = 0;
    memset(m, 0, sizeof(*m));
    if (!(text = read_file(path, &len, err, errlen)))
        return KS_EIO;
    /* JSON when the first non-space character opens an object or array. */
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p == '{' || *p == '[') {
        const char *end = NULL;
        cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
        if (!root) {
            size_t line = 1, col = 1;
            for (const char *q = text; end && q < end; q++) {
                if (*q == '\n') {
                    line++;
                    col = 1;
                } else
                    col++;
            }
            snprintf(err, errlen, "%s:%zu:%zu: invalid JSON", path, line, col);
            free(text);
            return KS_EPARSE;
        }
        if (cJSON_IsArray(root)) {
            int i = 0;
            while (root->child && rc == 0) {
                char w[64];
                snprintf(w, sizeof(w), "item %d", i++);
                rc = add_object(m, cJSON_DetachItemViaPointer(root, root->child), w);
            }
            cJSON_Delete(root);
        } else {
            rc = add_object(m, root, "document 1");
        }
        free(text);
        if (rc)
            ks__manifest_free(m);
        return rc;
    }

    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    for (int docno = 1;; docno++) {
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc)) {
            snprintf(err, errlen, "%s:%zu:%zu: %s%s%s", path, parser.problem_mark.line + 1,
                     parser.problem_mark.column + 1, parser.problem ? parser.problem : "YAML error",
                     parser.context ? " " : "", parser.context ? parser.context : "");
            rc = KS_EPARSE;
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            yaml_document_delete(&doc);
            break; /* end of stream */
        }
        char w[64];
        snprintf(w, sizeof(w), "line %zu", root->start_mark.line + 1);
        cJSON *obj = ks__yaml_to_json(&doc, root);
        yaml_document_delete(&doc);
        if (!obj) {
            rc = KS_ENOMEM;
            snprintf(err, errlen, "%s: out of memory", path);
            break;
        }
        if ((rc = add_object(m, obj, w)) != 0)
            break;
    }
    yaml_parser_delete(&parser);
    free(text);
    if (rc)
        ks__manifest_free(m);
    return rc;
}

void ks__manifest_free(ks_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        cJSON_Delete(m->objs[i].obj);
    free(m->objs);
    memset(m, 0, sizeof(*m));
}
