/*
 * The YAML reader of manifests and kubeconfig files (core/api/yaml_read.c): scalars as
 * sigs.k8s.io/yaml types them, documents and their positions, merge keys, and the limits an
 * untrusted file needs (nesting, aliases, repeated keys), with the position of each refusal.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/yaml_read.h"
#include "kubesched/plugin.h"

typedef struct read_result {
    int rc;
    char err[512];
    char *json; /* the documents, compact, one per line */
    size_t ndocs;
    size_t lines[8];
} read_result;

static read_result read_all(const char *text, size_t len)
{
    read_result out = {0};
    ks_yaml_reader *r = ks__yaml_reader_new(text, len, NULL);
    size_t cap = 0;
    FILE *f = open_memstream(&out.json, &cap);
    cr_assert_not_null(r);
    for (;;) {
        ks_yaml_doc doc;
        out.rc = ks__yaml_reader_next(r, &doc, out.err, sizeof(out.err));
        if (out.rc != 1)
            break;
        char *s = cJSON_PrintUnformatted(doc.root);
        fprintf(f, "%s\n", s);
        free(s);
        if (out.ndocs < 8)
            out.lines[out.ndocs] = doc.line;
        out.ndocs++;
        cJSON_Delete(doc.root);
    }
    fclose(f);
    ks__yaml_reader_free(r);
    return out;
}

static read_result read_str(const char *text) { return read_all(text, strlen(text)); }

Test(yaml_read, types_plain_scalars_as_sigs_k8s_io_yaml)
{
    read_result r = read_str("{a: 1, b: \"1\", c: yes, d: ~, e: x, f: [1.5, 'no'], g: !!str 12, "
                             "h: n, i: , j: -2e3}");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(r.json, "{\"a\":1,\"b\":\"1\",\"c\":true,\"d\":null,\"e\":\"x\",\"f\":[1.5,"
                             "\"no\"],\"g\":\"12\",\"h\":false,\"i\":null,\"j\":-2000}\n");
    free(r.json);
}

Test(yaml_read, reads_every_document_with_its_line_and_empty_ones_as_null)
{
    read_result r = read_str("# c\na: 1\n---\n---\nb: [x]\n...\n---\n- 1\n");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert_eq(r.ndocs, 4);
    cr_expect_str_eq(r.json, "{\"a\":1}\nnull\n{\"b\":[\"x\"]}\n[1]\n");
    cr_expect_eq(r.lines[0], 2);
    cr_expect_eq(r.lines[1], 3);
    cr_expect_eq(r.lines[2], 4);
    cr_expect_eq(r.lines[3], 7);
    free(r.json);
}

Test(yaml_read, refuses_a_repeated_key_naming_both_lines)
{
    read_result r = read_str("kind: Node\nmetadata:\n  name: a\n  labels: {}\n  name: b\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "5:3: duplicate field \"name\" (first at line 3)");
    free(r.json);
    /* Two objects without the --- between them: the message says what is likely missing. */
    r = read_str("kind: Node\nmetadata: {}\nkind: Node\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "3:1: duplicate field \"kind\" (first at line 1); is a --- missing "
                            "between two objects?");
    free(r.json);
}

Test(yaml_read, finds_a_repeated_key_among_many)
{
    /* Beyond the first few keys, keys are found through a table: the repeat is still caught. */
    char text[4096];
    size_t off = 0;
    for (int i = 0; i < 40; i++)
        off += (size_t)snprintf(text + off, sizeof(text) - off, "k%d: %d\n", i, i);
    snprintf(text + off, sizeof(text) - off, "k7: again\n");
    read_result r = read_str(text);
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "41:1: duplicate field \"k7\" (first at line 8); is a --- missing "
                            "between two objects?");
    free(r.json);
    text[off] = '\0';
    r = read_str(text);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    free(r.json);
}

Test(yaml_read, applies_merge_keys_with_explicit_keys_winning)
{
    read_result r = read_str("base: &b {cpu: 1, memory: 2}\nmore: &m {gpu: 3, cpu: 9}\n"
                             "x:\n  <<: [*b, *m]\n  memory: 5\n");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(r.json, "{\"base\":{\"cpu\":1,\"memory\":2},\"more\":{\"gpu\":3,\"cpu\":9},"
                             "\"x\":{\"memory\":5,\"cpu\":1,\"gpu\":3}}\n");
    free(r.json);
    r = read_str("x:\n  <<: 3\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "2:7: the value of a << merge key must be a mapping or a list of "
                            "mappings");
    free(r.json);
}

Test(yaml_read, copies_aliases_and_refuses_a_billion_laughs)
{
    read_result r = read_str("a: &x [1, {b: 2}]\nc: *x\n");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(r.json, "{\"a\":[1,{\"b\":2}],\"c\":[1,{\"b\":2}]}\n");
    free(r.json);
    /* 9 levels of 9 aliases each: 9^9 values from a few hundred bytes. */
    char bomb[2048];
    size_t off = (size_t)snprintf(bomb, sizeof(bomb),
                                  "l0: &l0 [lol, lol, lol, lol, lol, lol, "
                                  "lol, lol, lol]\n");
    for (int i = 1; i < 9; i++)
        off +=
            (size_t)snprintf(bomb + off, sizeof(bomb) - off,
                             "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
                             i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    r = read_str(bomb);
    cr_expect_eq(r.rc, KS_ERANGE);
    cr_expect(strstr(r.err, "aliases copy more than 1000000 values") != NULL, "%s", r.err);
    free(r.json);
}

Test(yaml_read, refuses_an_alias_inside_its_own_value_and_an_unknown_anchor)
{
    read_result r = read_str("a: &x [1, *x]\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "1:11: alias *x is inside the value it refers to");
    free(r.json);
    r = read_str("a: *nope\n");
    cr_expect_neq(r.rc, 0);
    free(r.json);
}

/* n nested `[` then as many `]`. */
static char *nested(size_t n)
{
    char *s = malloc(2 * n + 8);
    memcpy(s, "a: ", 3);
    memset(s + 3, '[', n);
    memset(s + 3 + n, ']', n);
    strcpy(s + 3 + 2 * n, "\n");
    return s;
}

Test(yaml_read, stops_at_the_nesting_limit_without_reading_further)
{
    /* 1000 levels are read; one more is refused where it opens. 10^6 levels used to take libyaml
     * forever (its scanner is quadratic in the nesting): refused as fast. */
    char *ok = nested(KS_YAML_MAX_DEPTH - 1), *deep = nested(KS_YAML_MAX_DEPTH),
         *huge = nested(1000000);
    read_result r = read_str(ok);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    free(r.json);
    r = read_str(deep);
    cr_expect_eq(r.rc, KS_ERANGE);
    cr_expect_str_eq(r.err, "1:1003: nested more than 1000 levels deep");
    free(r.json);
    r = read_str(huge);
    cr_expect_eq(r.rc, KS_ERANGE);
    cr_expect_str_eq(r.err, "1:1003: nested more than 1000 levels deep");
    free(r.json);
    size_t line = 0, col = 0;
    char msg[256];
    cr_expect_eq(ks__yaml_check_depth(huge, strlen(huge), &line, &col, msg, sizeof(msg)),
                 KS_ERANGE);
    cr_expect_eq(line, 1);
    cr_expect_eq(col, 1003);
    cr_expect_str_eq(msg, "nested more than 1000 levels deep");
    cr_expect_eq(ks__yaml_check_depth(ok, strlen(ok), &line, &col, msg, sizeof(msg)), 0);
    free(ok);
    free(deep);
    free(huge);
}

Test(yaml_read, an_alias_cannot_nest_past_the_limit)
{
    /* 600 levels anchored, copied 600 levels down: 1200 levels, refused at the alias. */
    size_t n = 600, off = 0;
    char *s = malloc(4 * n + 64);
    off += (size_t)sprintf(s, "a: &x ");
    memset(s + off, '[', n), off += n;
    memset(s + off, ']', n), off += n;
    off += (size_t)sprintf(s + off, "\nb: ");
    memset(s + off, '[', n), off += n;
    off += (size_t)sprintf(s + off, "*x");
    memset(s + off, ']', n), off += n;
    s[off] = '\0';
    read_result r = read_str(s);
    cr_expect_eq(r.rc, KS_ERANGE);
    cr_expect_str_eq(r.err, "2:604: alias *x nests more than 1000 levels deep");
    free(r.json);
    free(s);
}

Test(yaml_read, reader_errors_say_where_the_bad_byte_is)
{
    read_result r = read_str("a: 1\nb:\n  c: \"x\xff\"\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "3:8: invalid leading UTF-8 octet (byte 0xff)");
    free(r.json);
    r = read_str("a: [1, 2\nb: 3\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect(strncmp(r.err, "2:2: ", 5) == 0, "%s", r.err);
    free(r.json);
}

Test(yaml_read, a_key_must_be_a_scalar)
{
    read_result r = read_str("? [a]\n: b\n");
    cr_expect_eq(r.rc, KS_EPARSE);
    cr_expect_str_eq(r.err, "1:3: a mapping key must be a scalar");
    free(r.json);
}

typedef struct placed_log {
    char text[1024];
    size_t off;
} placed_log;

static void log_placed(void *ctx, const cJSON *item, size_t line, size_t col)
{
    placed_log *l = ctx;
    const char *what = item->string           ? item->string
                       : cJSON_IsArray(item)  ? "[]"
                       : cJSON_IsObject(item) ? "{}"
                                              : "v";
    l->off += (size_t)snprintf(l->text + l->off, sizeof(l->text) - l->off, "%s@%zu:%zu ", what,
                               line, col);
}

Test(yaml_read, places_fields_at_their_keys_and_items_at_themselves_from_a_base_position)
{
    /* Fields are reported when complete, before they are linked: item->string is not yet set,
     * so the log names values by shape; the order shows the positions. */
    placed_log l = {0};
    ks_yaml_read_opts o = {.base_line = 10, .base_col = 5, .placed = log_placed, .ctx = &l};
    const char *text = "a: 1\nb:\n  - x\n  - {c: 2}\n";
    ks_yaml_reader *r = ks__yaml_reader_new(text, strlen(text), &o);
    ks_yaml_doc doc;
    char err[256];
    cr_assert_eq(ks__yaml_reader_next(r, &doc, err, sizeof(err)), 1, "%s", err);
    cr_expect_str_eq(l.text, "v@10:5 v@12:5 v@13:6 {}@13:5 []@11:1 {}@10:5 ");
    cr_expect_eq(doc.line, 10);
    cr_expect_eq(doc.col, 5);
    cJSON_Delete(doc.root);
    ks__yaml_reader_free(r);
}
