/*
 * A small reader of protobuf text format, enough for cel-spec's conformance files
 * (tests/simple/testdata/NAME.textproto): fields with scalar or message values, adjacent string
 * literals concatenated, C escapes decoded, '#' comments. Test-only; the whole tree lives in one
 * malloc'd block list freed by tp_free.
 */
#ifndef KS_TESTS_CEL_TEXTPROTO_H
#define KS_TESTS_CEL_TEXTPROTO_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tp_node tp_node;
struct tp_node {
    const char *name;
    bool is_msg;
    bool is_string; /* the scalar was a quoted literal (decoded into str/len) */
    char *str;      /* scalar text (NUL-terminated; strings may contain NULs: use len) */
    size_t len;
    int line;
    tp_node *child; /* message fields */
    tp_node *next;
};

/* Parses text; NULL with *err (static text and a line) on malformed input. */
tp_node *tp_parse(const char *text, const char **err, int *line);
void tp_free(tp_node *root);
/* The first field named name among n's children, or NULL. */
const tp_node *tp_get(const tp_node *n, const char *name);

#endif
