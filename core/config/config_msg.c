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
                  (unsigned long)node->start_mark.line + 1,
                  (unsigned long)node->start_mark.column + 1);
    va_start(ap, fmt);
    vfail(L, prefix, fmt, ap);
    va_end(ap);
    L->rc = rc;
    return rc;
}

int ks__cfg_oom(cfg_load *L) { return ks__cfg_fail(L, KS_ENOMEM, "out of memory"); }

/* The places of the args values: a flat list, searched only when a message is written. */
struct ks_cfg_marks {
    size_t n, cap;
    struct ks_cfg_mark {
        const cJSON *item;
        unsigned long line, col;
    } *v;
};

void ks__cfg_mark(ks_config *cfg, const cJSON *item, const yaml_node_t *where)
{
    struct ks_cfg_marks *m = cfg->arg_marks;
    if (!m && !(m = cfg->arg_marks = calloc(1, sizeof(*m))))
        return; /* out of memory: messages lose their line, nothing else */
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct ks_cfg_mark *v = realloc(m->v, cap * sizeof(*v));
        if (!v)
            return;
        m->v = v;
        m->cap = cap;
    }
    m->v[m->n++] = (struct ks_cfg_mark){item, (unsigned long)where->start_mark.line + 1,
                                        (unsigned long)where->start_mark.column + 1};
}

void ks__cfg_marks_free(struct ks_cfg_marks *m)
{
    if (m)
        free(m->v);
    free(m);
}

static const struct ks_cfg_mark *mark_of(const ks_config *cfg, const cJSON *item)
{
    const struct ks_cfg_marks *m = cfg ? cfg->arg_marks : NULL;
    for (size_t i = 0; m && item && i < m->n; i++)
        if (m->v[i].item == item)
            return &m->v[i];
    return NULL;
}

int ks__cfg_fail_item(cfg_load *L, const cJSON *item, int rc, const char *fmt, ...)
{
    va_list ap;
    char prefix[512];
    const struct ks_cfg_mark *at = mark_of(L->cfg, item);
    if (L->rc)
        return L->rc;
    if (at)
        ks__cfg_pathf(prefix, sizeof(prefix), "%s:%lu:%lu: ", L->file, at->line, at->col);
    else
        ks__cfg_pathf(prefix, sizeof(prefix), "%s: ", L->file);
    va_start(ap, fmt);
    vfail(L, prefix, fmt, ap);
    va_end(ap);
    L->rc = rc;
    return rc;
}

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
