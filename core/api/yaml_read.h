/*
 * YAML (and JSON, its subset) text to cJSON, one document at a time, built from libyaml's event
 * stream with the limits an untrusted file needs: for manifests and kubeconfig files.
 *
 * Why events and not libyaml's document loader: the loader parses the whole document before
 * anything can be checked, and its scanner slows down quadratically with nesting (10^6 nested
 * `[` never finishes). Building from events stops at the first value nested deeper than
 * KS_YAML_MAX_DEPTH, after reading only that far. Aliases are copied into the tree, so they are
 * counted: a "billion laughs" document stops at KS_YAML_MAX_ALIAS_VALUES copied values.
 *
 * Scalars become JSON the way sigs.k8s.io/yaml (kubectl, the API server) does it: quoted scalars
 * and `!!str` are strings; plain scalars are null (~, null, empty), booleans (true/false, yes/no,
 * on/off, y/n in YAML 1.1 spellings), numbers, else strings. A repeated key is an error (as
 * sigs.k8s.io/yaml's "key already set in map"); `<<` merge keys are applied; a key must be a
 * scalar.
 *
 * Threads: a reader is used by one thread at a time; different readers share nothing.
 */
#ifndef KS_CORE_YAML_READ_H
#define KS_CORE_YAML_READ_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* cJSON's own nesting limit for JSON text (CJSON_NESTING_LIMIT): the same for YAML. */
#define KS_YAML_MAX_DEPTH 1000
/* Values that aliases may copy into one document: far more than any real manifest uses, small
 * enough that a hostile one stays within a few hundred MB. */
#define KS_YAML_MAX_ALIAS_VALUES 1000000

typedef struct ks_yaml_read_opts {
    /* The position of text[0] in its file (1-based), when text is a part of a file. 0 = 1. */
    size_t base_line, base_col;
    /* Optional: told where each value from the text starts (1-based line and column), when the
     * value is complete. Values copied by an alias or a merge key are not reported. */
    void (*placed)(void *ctx, const cJSON *item, size_t line, size_t col);
    void *ctx;
} ks_yaml_read_opts;

typedef struct ks_yaml_doc {
    cJSON *root;      /* owned by the caller; a JSON null for an empty document */
    size_t offset;    /* where the document's text starts in the input (for reading it again) */
    size_t line, col; /* ... and that position, 1-based */
} ks_yaml_doc;

typedef struct ks_yaml_reader ks_yaml_reader;

/* A reader over text[0..len), which must stay valid and unchanged while the reader is used; o
 * may be NULL. NULL when out of memory. */
ks_yaml_reader *ks__yaml_reader_new(const char *text, size_t len, const ks_yaml_read_opts *o);

/* The next document: 1 and *doc; 0 at the end of the text; or a KS_E* code (KS_EPARSE for
 * syntax, repeated keys and bad aliases; KS_ERANGE for the depth and alias limits; KS_ENOMEM)
 * with "LINE:COL: message" in err. After an error the reader is done. */
int ks__yaml_reader_next(ks_yaml_reader *r, ks_yaml_doc *doc, char *err, size_t errlen);

void ks__yaml_reader_free(ks_yaml_reader *r); /* NULL is a no-op */

/* What a read value is, for messages in the file's own terms: "a string", "a number",
 * "a boolean", "a list", "a mapping" or "null". Static text; any thread. */
const char *ks__yaml_value_phrase(const cJSON *v);

/* Only the nesting check of the reader, for text that is then given to libyaml's document
 * loader (the configuration), whose scanner would take forever on deep nesting: 0, or KS_ERANGE
 * (or KS_EPARSE for a syntax error met first) with the position in *line, *col (1-based) and the
 * message without it in msg. */
int ks__yaml_check_depth(const char *text, size_t len, size_t *line, size_t *col, char *msg,
                         size_t msglen);

#endif
