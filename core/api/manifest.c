/* Manifest loading (YAML / JSON / List); see manifest.h. */
#include "api/manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "api/yaml_json.h"
#include "util/readfile.h"
#include "kubesched/plugin.h"

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
        strcmp(kind->valuestring + strlen(kind->valuestring) - 4, "List") == 0 &&
        cJSON_IsArray(items)) {
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

int ks__manifest_load(const char *path, ks_manifest *m, char *err, size_t errlen)
{
    return ks__manifest_load_capped(path, KS_MANIFEST_MAX_BYTES, m, err, errlen);
}

int ks__manifest_load_capped(const char *path, size_t max, ks_manifest *m, char *err, size_t errlen)
{
    size_t len;
    char *text;
    int rc = 0;
    memset(m, 0, sizeof(*m));
    if (!(text = read_file(path, max, &len, &rc, err, errlen)))
        return rc;
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
