/*
 * Helpers shared by the in-tree plugins' validate_args (header-only, static inline, SDK only):
 * upstream's field-error words for a qualified name (validation.IsQualifiedName as
 * ValidateLabelName reports it, the wording kubesched's config checks use too), and small readers
 * over the args accessors. Out-of-tree plugins may copy this file.
 *
 * Threads: pure functions of their arguments.
 */
#ifndef KS_PLUGINS_COMMON_ARGS_H
#define KS_PLUGINS_COMMON_ARGS_H

#include <stdint.h>

#include "kubesched/plugin.h"

/* Why s is not a qualified name, in upstream's words; NULL when it is one. */
static inline const char *ks_h_qualified_name_why(const char *s)
{
    switch (ks_qualified_name_check(s)) {
    case KS_QNAME_OK:
        return NULL;
    case KS_QNAME_PREFIX_EMPTY:
        return "prefix part must be non-empty";
    case KS_QNAME_PREFIX_TOO_LONG:
        return "prefix part must be no more than 253 characters";
    case KS_QNAME_PREFIX_CHARS:
        return "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
               "alphanumeric characters, '-' or '.', and must start and end with an "
               "alphanumeric character";
    case KS_QNAME_NAME_EMPTY:
        return "name part must be non-empty";
    case KS_QNAME_NAME_TOO_LONG:
        return "name part must be no more than 63 characters";
    case KS_QNAME_NAME_CHARS:
        break;
    }
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', "
           "or '123-abc')";
}

/* An integer arg, or dflt when it is unset or not an integer. */
static inline int64_t ks_h_args_int(const ks_args *a, const char *path, int64_t dflt)
{
    int64_t v;
    return ks_args_get_int(a, path, &v) == 0 ? v : dflt;
}

/* A string arg, or NULL when it is unset or not a string. Borrowed(args). */
static inline const char *ks_h_args_str(const ks_args *a, const char *path)
{
    const char *v;
    return ks_args_get_string(a, path, &v) == 0 ? v : NULL;
}

/* The length of a list arg; 0 when it is unset or not a list. */
static inline size_t ks_h_args_len(const ks_args *a, const char *path)
{
    size_t n;
    return ks_args_count(a, path, &n) == 0 ? n : 0;
}

/* Whether the arg is set, whatever its type: args_count answers KS_ENOTFOUND only for an unset
 * (or null) one. */
static inline int ks_h_args_has(const ks_args *a, const char *path)
{
    size_t n;
    return ks_args_count(a, path, &n) != KS_ENOTFOUND;
}

#endif
