/*
 * The configuration module's messages and small utilities (config_int.h), in one file that the
 * decoder, the defaulting and validation, and the plan all use (and that uses none of them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

static void vfail(cfg_load *L, const char *prefix, const char *fmt, va_list ap)
{
    int n;
    if (!L->err || L->errlen == 0)
        return;
    n = snprintf(L->err, L->errlen, "%s", prefix);
    if (n >= 0 && (size_t)n < L->errlen)
        vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
}

int ks__cfg_fail(cfg_load *L, int rc, const char *fmt, ...)
{
    va_list ap;
    char prefix[512];
    if (L->rc)
        return L->rc;
    ks__cfg_pathf(prefix, sizeof(prefix), "%s: ", L->file);
    va_start(ap, fmt);
    vfail(L, prefix, fmt, ap);
    va_end(ap);
    L->rc = rc;
    return rc;
}

int ks__cfg_fail_at(cfg_load *L, const yaml_node_t *node, int rc, const char *fmt, ...)
{
    va_list ap;
    char prefix[512];
    if (L->rc)
        return L->rc;
    ks__cfg_pathf(prefix, sizeof(prefix), "%s:%lu:%lu: ", L->file,
             (unsigned long)node->start_mark.line + 1, (unsigned long)node->start_mark.column + 1);
    va_start(ap, fmt);
    vfail(L, prefix, fmt, ap);
    va_end(ap);
    L->rc = rc;
    return rc;
}

int ks__cfg_oom(cfg_load *L) { return ks__cfg_fail(L, KS_ENOMEM, "out of memory"); }

char *ks__cfg_strdup(const char *s)
{
    size_t n;
    char *d;
    if (!s)
        return NULL;
    n = strlen(s) + 1;
    d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
