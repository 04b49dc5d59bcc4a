/*
 * The strict YAML -> JSON walk of plugin args in the configuration (core/api/yaml_json.c): what
 * does not convert is refused, naming the field. (Manifests: test_yaml_read.c.)
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "api/yaml_json.h"
#include "kubesched/plugin.h"

static yaml_document_t doc;

static yaml_node_t *load(const char *text)
{
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    cr_assert(yaml_parser_load(&p, &doc), "bad test YAML");
    yaml_parser_delete(&p);
    return yaml_document_get_root_node(&doc);
}

typedef struct strict_result {
    char msg[1400];
    int code, ooms;
} strict_result;

static cJSON *scalar_as_string(void *ctx, const yaml_node_t *n, const char *path)
{
    (void)ctx;
    (void)path;
    return cJSON_CreateString((const char *)n->data.scalar.value);
}

static void record_fail(void *ctx, const yaml_node_t *n, int code, const char *msg)
{
    strict_result *r = ctx;
    (void)n;
    r->code = code;
    snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

static void record_oom(void *ctx) { ((strict_result *)ctx)->ooms++; }

/* text converted strictly with a budget of budget nodes and depth 3; the JSON text or NULL. */
static char *strict(const char *text, size_t budget, strict_result *r)
{
    memset(r, 0, sizeof(*r));
    ks_yaml_json_strict o = {scalar_as_string, record_fail, record_oom, &budget, 3, r, NULL};
    cJSON *j = ks__yaml_to_json_strict(&doc, load(text), "args", &o);
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    yaml_document_delete(&doc);
    return s;
}

Test(yaml_json, strict_converts_within_its_limits)
{
    strict_result r;
    char *s = strict("{a: [x, {b: y}]}", 5, &r); /* 5 nodes, depth 3 */
    cr_assert_str_eq(s, "{\"a\":[\"x\",{\"b\":\"y\"}]}");
    cr_assert_eq(r.code, 0);
    free(s);
}

Test(yaml_json, strict_refuses_naming_the_field)
{
    strict_result r;
    cr_assert_null(strict("{a: [x, {b: y}]}", 4, &r));
    cr_assert_str_eq(r.msg, "args.a[1].b: the document expands to too many values (aliases?)");
    cr_assert_eq(r.code, KS_ERANGE);
    cr_assert_null(strict("{a: [x, {b: [y]}]}", 100, &r));
    cr_assert_str_eq(r.msg, "args.a[1].b[0]: nested more than 3 levels deep");
    cr_assert_null(strict("{a: 1, [k]: 2}", 100, &r));
    cr_assert_str_eq(r.msg, "args: mapping keys must be scalars");
    cr_assert_eq(r.code, KS_ETYPE);
    cr_assert_null(strict("{a: 1, a: 2}", 100, &r));
    cr_assert_str_eq(r.msg, "args: duplicate field \"a\"");
    cr_assert_eq(r.code, KS_EINVAL);
    cr_assert_eq(r.ooms, 0);
}
