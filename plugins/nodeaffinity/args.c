/*
 * NodeAffinityArgs (upstream types_pluginargs.go, ValidateNodeAffinityArgs): the schema kubesched
 * checks while it loads the configuration, and the rules of addedAffinity's node selector terms
 * (component-helpers' ValidateNodeSelectorRequirement / field selector requirements), with
 * upstream's messages and field paths. No defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/args.h"

extern const ks_args_schema na_args_schema; /* nodeaffinity.c's descriptor points at these */
int na_validate_args(const ks_args *a, ks_args_error *err);

static const ks_arg_field requirement_fields[] = {
    {"key", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"operator", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"values", KS_ARG_STRING_LIST, NULL, NULL, 0, 0, 0},
};
static const ks_args_schema requirement = KS_ARGS_SCHEMA(NULL, requirement_fields);
static const ks_arg_field term_fields[] = {
    {"matchExpressions", KS_ARG_OBJECT_LIST, &requirement, NULL, 0, 0, 0},
    {"matchFields", KS_ARG_OBJECT_LIST, &requirement, NULL, 0, 0, 0},
};
static const ks_args_schema term = KS_ARGS_SCHEMA(NULL, term_fields);
static const ks_arg_field node_selector_fields[] = {
    {"nodeSelectorTerms", KS_ARG_OBJECT_LIST, &term, NULL, 0, 0, 0},
};
static const ks_args_schema node_selector = KS_ARGS_SCHEMA(NULL, node_selector_fields);
static const ks_arg_field preferred_fields[] = {
    {"weight", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
    {"preference", KS_ARG_OBJECT, &term, NULL, 0, 0, 0},
};
static const ks_args_schema preferred = KS_ARGS_SCHEMA(NULL, preferred_fields);
static const ks_arg_field node_affinity_fields[] = {
    {"requiredDuringSchedulingIgnoredDuringExecution", KS_ARG_OBJECT, &node_selector, NULL, 0, 0,
     0},
    {"preferredDuringSchedulingIgnoredDuringExecution", KS_ARG_OBJECT_LIST, &preferred, NULL, 0, 0,
     0},
};
static const ks_args_schema node_affinity = KS_ARGS_SCHEMA(NULL, node_affinity_fields);
static const ks_arg_field fields[] = {
    {"addedAffinity", KS_ARG_OBJECT, &node_affinity, NULL, 0, 0, 0},
};
const ks_args_schema na_args_schema = KS_ARGS_SCHEMA("NodeAffinityArgs", fields);

#define PATH_LEN 256

static int is(const char *op, const char *a) { return op && strcmp(op, a) == 0; }

/* A matchFields requirement: metadata.name, In or NotIn, exactly one value. */
static int validate_field_requirement(const ks_args *a, const char *p, ks_args_error *err)
{
    char f[PATH_LEN];
    const char *key, *op;
    snprintf(f, sizeof(f), "%s.key", p);
    key = ks_h_args_str(a, f);
    if (!key || strcmp(key, "metadata.name") != 0)
        return ks_args_fail(err, f,
                            "Invalid value: \"%s\": not a valid field selector key (valid: "
                            "metadata.name)",
                            key ? key : "");
    snprintf(f, sizeof(f), "%s.operator", p);
    op = ks_h_args_str(a, f);
    if (!is(op, "In") && !is(op, "NotIn"))
        return ks_args_fail(
            err, f, "Unsupported value: \"%s\": supported values: \"In\", \"NotIn\"", op ? op : "");
    snprintf(f, sizeof(f), "%s.values", p);
    if (ks_h_args_len(a, f) != 1)
        return ks_args_fail(err, f,
                            "Required value: must be only one value when `operator` is 'In' or "
                            "'NotIn' for node field selector");
    return 0;
}

/* A matchExpressions requirement: a label name as key, values as the operator wants them. */
static int validate_label_requirement(const ks_args *a, const char *p, ks_args_error *err)
{
    char f[PATH_LEN], v[PATH_LEN + 8];
    const char *key, *op, *why;
    size_t nvalues;
    snprintf(f, sizeof(f), "%s.key", p);
    key = ks_h_args_str(a, f);
    if (!key || !key[0])
        return ks_args_fail(err, f, "Required value");
    if ((why = ks_h_qualified_name_why(key)))
        return ks_args_invalid(err, f, "%s", why);
    snprintf(f, sizeof(f), "%s.operator", p);
    op = ks_h_args_str(a, f);
    snprintf(f, sizeof(f), "%s.values", p);
    nvalues = ks_h_args_len(a, f);
    if (is(op, "In") || is(op, "NotIn")) {
        if (nvalues == 0)
            return ks_args_fail(err, f,
                                "Required value: for 'in', 'notin' operators, values set can't "
                                "be empty");
    } else if (is(op, "Exists") || is(op, "DoesNotExist")) {
        if (nvalues != 0)
            return ks_args_fail(err, f,
                                "Forbidden: values set must be empty for exists and does not "
                                "exist");
    } else if (is(op, "Gt") || is(op, "Lt")) {
        const char *v0;
        char *end = NULL;
        if (nvalues != 1)
            return ks_args_fail(err, f,
                                "Required value: for 'Gt', 'Lt' operators, exactly one value is "
                                "required");
        snprintf(v, sizeof(v), "%s[0]", f);
        v0 = ks_h_args_str(a, v);
        (void)strtoll(v0, &end, 10);
        if (!v0[0] || *end)
            return ks_args_fail(err, v,
                                "Invalid value: \"%s\": for 'Gt', 'Lt' operators, the value must "
                                "be an integer",
                                v0);
    } else {
        snprintf(f, sizeof(f), "%s.operator", p);
        return ks_args_fail(err, f,
                            "Unsupported value: \"%s\": supported values: \"DoesNotExist\", "
                            "\"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\"",
                            op ? op : "");
    }
    return 0;
}

/* A node selector term at `path`: its matchExpressions, then its matchFields. */
static int validate_term(const ks_args *a, const char *path, ks_args_error *err)
{
    char list[PATH_LEN], p[PATH_LEN];
    size_t n;
    snprintf(list, sizeof(list), "%s.matchExpressions", path);
    n = ks_h_args_len(a, list);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof(p), "%s[%zu]", list, i);
        if (validate_label_requirement(a, p, err) != 0)
            return KS_EINVAL;
    }
    snprintf(list, sizeof(list), "%s.matchFields", path);
    n = ks_h_args_len(a, list);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof(p), "%s[%zu]", list, i);
        if (validate_field_requirement(a, p, err) != 0)
            return KS_EINVAL;
    }
    return 0;
}

#define REQUIRED "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define PREFERRED "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"

/* The required terms in order, then each preferred term's preference. */
int na_validate_args(const ks_args *a, ks_args_error *err)
{
    char p[PATH_LEN];
    size_t n;
    if (!ks_h_args_has(a, "addedAffinity"))
        return 0;
    if (ks_h_args_has(a, REQUIRED)) {
        n = ks_h_args_len(a, REQUIRED ".nodeSelectorTerms");
        for (size_t i = 0; i < n; i++) {
            snprintf(p, sizeof(p), REQUIRED ".nodeSelectorTerms[%zu]", i);
            if (validate_term(a, p, err) != 0)
                return KS_EINVAL;
        }
    }
    n = ks_h_args_len(a, PREFERRED);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof(p), PREFERRED "[%zu].preference", i);
        if (ks_h_args_has(a, p) && validate_term(a, p, err) != 0)
            return KS_EINVAL;
    }
    return 0;
}
