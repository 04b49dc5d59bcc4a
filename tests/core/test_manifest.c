/*
 * Manifest files (core/api/manifest.c): multi-document YAML, a JSON object, a JSON array, List
 * documents as kubectl prints them, YAML scalar typing as sigs.k8s.io/yaml does it, and the
 * messages for syntax errors and missing files. Fixtures live in tests/fixtures/manifest/.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "api/manifest.h"
#include "api/yaml_json.h"

#define FIXTURE(name) KS_SOURCE_DIR "/tests/fixtures/manifest/" name

static ks_manifest load(const char *path)
{
    ks_manifest m;
    char err[512] = "";
    int rc = ks__manifest_load(path, &m, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s: %s", path, err);
    return m;
}

static const char *name_of(const ks_manifest *m, size_t i)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(m->objs[i].obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    return cJSON_IsString(name) ? name->valuestring : "(none)";
}

static const char *kind_of(const ks_manifest *m, size_t i)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(m->objs[i].obj, "kind");
    return cJSON_IsString(kind) ? kind->valuestring : "(none)";
}

static const cJSON *field(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    cr_assert_not_null(v, "missing field %s", key);
    return v;
}

static void expect_string(const cJSON *obj, const char *key, const char *want)
{
    const cJSON *v = field(obj, key);
    cr_expect(cJSON_IsString(v), "%s should be a string", key);
    if (cJSON_IsString(v))
        cr_expect_str_eq(v->valuestring, want, "%s", key);
}

static void expect_number(const cJSON *obj, const char *key, double want)
{
    const cJSON *v = field(obj, key);
    cr_expect(cJSON_IsNumber(v), "%s should be a number", key);
    cr_expect_eq(v->valuedouble, want, "%s = %g, want %g", key, v->valuedouble, want);
}

static void expect_bool(const cJSON *obj, const char *key, int want)
{
    const cJSON *v = field(obj, key);
    cr_expect(cJSON_IsBool(v), "%s should be a boolean", key);
    cr_expect_eq(cJSON_IsTrue(v) ? 1 : 0, want, "%s", key);
}

static void expect_null(const cJSON *obj, const char *key)
{
    cr_expect(cJSON_IsNull(field(obj, key)), "%s should be null", key);
}

Test(manifest, loads_every_document_of_a_yaml_stream)
{
    ks_manifest m = load(FIXTURE("multi.yaml"));
    cr_assert_eq(m.n, 3, "empty documents and comments are skipped");
    cr_expect_str_eq(kind_of(&m, 0), "Node");
    cr_expect_str_eq(name_of(&m, 0), "node-1");
    cr_expect_str_eq(name_of(&m, 1), "web");
    cr_expect_str_eq(name_of(&m, 2), "db");
    /* Where each object starts, for messages. */
    cr_expect_str_eq(m.objs[0].where, "line 3");
    cr_expect_str_eq(m.objs[1].where, "line 10");
    cr_expect_str_eq(m.objs[2].where, "line 21");
    const cJSON *spec = field(m.objs[1].obj, "spec");
    const cJSON *c0 = cJSON_GetArrayItem(field(spec, "containers"), 0);
    expect_string(c0, "image", "nginx");
    ks__manifest_free(&m);
    cr_expect_eq(m.n, 0);
    cr_expect_null(m.objs);
}

Test(manifest, loads_a_json_object)
{
    ks_manifest m = load(FIXTURE("object.json"));
    cr_assert_eq(m.n, 1);
    cr_expect_str_eq(name_of(&m, 0), "web");
    cr_expect_str_eq(m.objs[0].where, "line 1");
    const cJSON *labels = field(field(m.objs[0].obj, "metadata"), "labels");
    expect_string(labels, "app", "web");
    ks__manifest_free(&m);
}

Test(manifest, loads_a_json_array)
{
    ks_manifest m = load(FIXTURE("array.json"));
    cr_assert_eq(m.n, 2);
    cr_expect_str_eq(kind_of(&m, 0), "Node");
    cr_expect_str_eq(name_of(&m, 0), "n1");
    cr_expect_str_eq(kind_of(&m, 1), "Pod");
    cr_expect_str_eq(name_of(&m, 1), "p1");
    cr_expect_str_eq(m.objs[0].where, "line 2, [0]");
    cr_expect_str_eq(m.objs[1].where, "line 2, [1]");
    ks__manifest_free(&m);
}

Test(manifest, flattens_a_yaml_list_as_kubectl_prints_it)
{
    ks_manifest m = load(FIXTURE("list.yaml"));
    cr_assert_eq(m.n, 3);
    cr_expect_str_eq(name_of(&m, 0), "n1");
    cr_expect_str_eq(name_of(&m, 1), "n2");
    cr_expect_str_eq(name_of(&m, 2), "after-the-list");
    cr_expect_str_eq(kind_of(&m, 0), "Node");
    cr_expect(strstr(m.objs[1].where, "items[1]") != NULL, "where: %s", m.objs[1].where);
    const cJSON *labels = field(field(m.objs[0].obj, "metadata"), "labels");
    expect_string(labels, "topology.kubernetes.io/zone", "a");
    ks__manifest_free(&m);
}

Test(manifest, flattens_a_json_list)
{
    ks_manifest m = load(FIXTURE("list.json"));
    cr_assert_eq(m.n, 3);
    cr_expect_str_eq(name_of(&m, 0), "p1");
    cr_expect_str_eq(name_of(&m, 1), "p2");
    cr_expect_str_eq(name_of(&m, 2), "p3");
    cr_expect_str_eq(m.objs[2].where, "line 1, items[2]");
    ks__manifest_free(&m);
}

Test(manifest, flattens_typed_lists)
{
    ks_manifest m = load(FIXTURE("podlist.yaml"));
    cr_assert_eq(m.n, 2);
    cr_expect_str_eq(name_of(&m, 0), "a");
    cr_expect_str_eq(name_of(&m, 1), "b");
    ks__manifest_free(&m);
}

Test(manifest, loads_nothing_from_an_empty_list)
{
    ks_manifest m = load(FIXTURE("empty-list.yaml"));
    cr_expect_eq(m.n, 0);
    ks__manifest_free(&m);
}

Test(manifest, loads_nothing_from_empty_files)
{
    ks_manifest m = load(FIXTURE("empty.yaml"));
    cr_expect_eq(m.n, 0);
    ks__manifest_free(&m);
    m = load(FIXTURE("comments-only.yaml"));
    cr_expect_eq(m.n, 0);
    ks__manifest_free(&m);
}

Test(manifest, reads_json_after_a_comment_as_yaml)
{
    ks_manifest m = load(FIXTURE("flow.yaml"));
    cr_assert_eq(m.n, 1);
    cr_expect_str_eq(name_of(&m, 0), "flow");
    /* Double-quoted in the flow mapping: stays a string. */
    expect_string(field(field(m.objs[0].obj, "metadata"), "labels"), "tier", "1");
    ks__manifest_free(&m);
}

Test(manifest, types_yaml_scalars_like_sigs_k8s_io_yaml)
{
    ks_manifest m = load(FIXTURE("scalars.yaml"));
    cr_assert_eq(m.n, 1);
    const cJSON *o = m.objs[0].obj;
    /* Quoted scalars are strings whatever they look like. */
    expect_string(o, "quotedNumber", "123");
    expect_string(o, "singleQuoted", "45");
    expect_string(o, "quotedTrue", "true");
    expect_string(o, "quotedEmpty", "");
    expect_string(o, "quotedNull", "null");
    expect_string(o, "quotedOctal", "0755");
    /* Plain scalars: numbers, booleans, null, else strings. */
    expect_number(o, "plainInt", 123);
    expect_number(o, "negative", -7);
    expect_number(o, "plusSigned", 12);
    expect_number(o, "plainFloat", 1.5);
    expect_number(o, "leadingDot", 0.5);
    expect_number(o, "exponent", 1000);
    expect_bool(o, "plainTrue", 1);
    expect_bool(o, "capitalTrue", 1);
    expect_bool(o, "plainFalse", 0);
    /* YAML 1.1 booleans, as go-yaml v2 (behind sigs.k8s.io/yaml) reads them. */
    expect_bool(o, "yesWord", 1);
    expect_bool(o, "offWord", 0);
    expect_bool(o, "shortY", 1);
    expect_bool(o, "shortN", 0);
    expect_null(o, "nullWord");
    expect_null(o, "tilde");
    expect_null(o, "empty");
    expect_string(o, "text", "hello world");
    expect_string(o, "version", "1.2.3");
    expect_string(o, "quantity", "100m");
    /* Block scalars are not plain: strings, with their newline. */
    expect_string(o, "literal", "123\n");
    expect_string(o, "folded", "true\n");
    const cJSON *list = field(o, "list");
    cr_assert(cJSON_IsArray(list));
    cr_assert_eq(cJSON_GetArraySize(list), 4);
    cr_expect(cJSON_IsNumber(cJSON_GetArrayItem(list, 0)));
    cr_expect(cJSON_IsString(cJSON_GetArrayItem(list, 1)));
    cr_expect(cJSON_IsString(cJSON_GetArrayItem(list, 2)));
    cr_expect(cJSON_IsNull(cJSON_GetArrayItem(list, 3)));
    const cJSON *nested = field(o, "nested");
    expect_number(nested, "inner", 0);
    const cJSON *deeper = field(nested, "deeper");
    cr_assert(cJSON_IsArray(deeper));
    expect_number(cJSON_GetArrayItem(deeper, 0), "a", 1);
    ks__manifest_free(&m);
}

Test(manifest, reports_yaml_syntax_errors_with_file_line_and_column)
{
    ks_manifest m;
    char err[512] = "";
    int rc = ks__manifest_load(FIXTURE("bad.yaml"), &m, err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    /* "   labels: x" on line 5: the ':' is at column 10. */
    cr_expect(strstr(err, FIXTURE("bad.yaml") ":5:10: ") == err, "message: %s", err);
    cr_expect(strstr(err, "mapping values are not allowed") != NULL, "message: %s", err);
    cr_expect_eq(m.n, 0);
    cr_expect_null(m.objs);
}

Test(manifest, drops_earlier_documents_when_a_later_one_is_broken)
{
    ks_manifest m;
    char err[512] = "";
    int rc = ks__manifest_load(FIXTURE("bad-second-doc.yaml"), &m, err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    cr_expect(strncmp(err, FIXTURE("bad-second-doc.yaml") ":",
                      strlen(FIXTURE("bad-second-doc.yaml")) + 1) == 0,
              "message: %s", err);
    cr_expect(strstr(err, "unexpected end of stream") != NULL, "message: %s", err);
    cr_expect_eq(m.n, 0, "nothing is returned on error");
    cr_expect_null(m.objs);
}

Test(manifest, reports_json_syntax_errors_with_file_and_line)
{
    ks_manifest m;
    char err[512] = "";
    int rc = ks__manifest_load(FIXTURE("bad.json"), &m, err, sizeof(err));
    cr_expect_eq(rc, KS_EPARSE);
    cr_expect(strstr(err, FIXTURE("bad.json") ":3:") == err, "message: %s", err);
    cr_expect(strstr(err, "invalid JSON") != NULL, "message: %s", err);
    cr_expect_eq(m.n, 0);
}

Test(manifest, reports_a_missing_file)
{
    ks_manifest m;
    char err[512] = "";
    int rc = ks__manifest_load(FIXTURE("does-not-exist.yaml"), &m, err, sizeof(err));
    cr_expect_eq(rc, KS_EIO);
    cr_expect(strstr(err, FIXTURE("does-not-exist.yaml")) == err, "message: %s", err);
    cr_expect(strstr(err, "No such file") != NULL, "message: %s", err);
    cr_expect_eq(m.n, 0);
}

/* Writes text to a temporary file; returns its path (static). */
static const char *temp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/ks-manifest-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void expect_at(const char *path, const ks_manifest_obj *o, const char *field,
                      size_t want_line, size_t want_col)
{
    size_t line = 0, col = 0;
    cr_assert_eq(ks__manifest_locate(path, o, field, &line, &col), 0, "%s", field);
    cr_expect(line == want_line && col == want_col, "%s at %zu:%zu, want %zu:%zu", field, line, col,
              want_line, want_col);
}

Test(manifest, locates_a_field_of_an_object_after_loading)
{
    /* The second document is a List; its second item holds keys with dots and a list. */
    const char *path = temp_file("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
                                 "apiVersion: v1\nkind: List\nitems:\n"
                                 "- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n"
                                 "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\n"
                                 "    labels: {app.kubernetes.io/name: x, app: web}\n"
                                 "  spec:\n    containers:\n    - name: c\n"
                                 "    - name: d\n      ports: [{hostPort: 7}]\n");
    ks_manifest m;
    char err[512];
    cr_assert_eq(ks__manifest_read(path, NULL, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(m.n, 3);
    expect_at(path, &m.objs[0], "metadata.name", 3, 12);
    expect_at(path, &m.objs[1], "metadata", 8, 31);
    expect_at(path, &m.objs[2], "metadata.labels.app.kubernetes.io/name", 13, 14);
    expect_at(path, &m.objs[2], "metadata.labels.app", 13, 41);
    expect_at(path, &m.objs[2], "spec.containers[1].ports[0].hostPort", 18, 16);
    /* A path that goes further than the object: its deepest existing field. */
    expect_at(path, &m.objs[2], "spec.containers[1].resources.limits", 17, 7);
    ks__manifest_free(&m);
    unlink(path);
}

Test(manifest, locates_a_field_of_a_json_value)
{
    const char *path =
        temp_file("{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": "
                  "{\"name\": \"a\"}}\n  {\"apiVersion\": \"v1\", \"kind\": \"Node\",\n"
                  "   \"metadata\": {\"name\": \"b\"}}\n");
    ks_manifest m;
    char err[512];
    cr_assert_eq(ks__manifest_read(path, NULL, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(m.n, 2);
    expect_at(path, &m.objs[1], "metadata.name", 3, 17);
    expect_at(path, &m.objs[0], "kind", 1, 22);
    ks__manifest_free(&m);
    unlink(path);
}
