/*
 * The failure message of a pod that fits no node (upstream FitError.Error): "0/N nodes are
 * available: <count> <reason>, ... ." with the reasons counted over the node statuses and sorted
 * as text, or "0/N nodes are available: <PreFilter's message>."; then PostFilter's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/scheduler_int.h"

typedef struct reason_count {
    const char *reason;
    size_t count;
} reason_count;

typedef struct reason_counts {
    reason_count *rc;
    size_t n, cap;
} reason_counts;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void count_reason(reason_counts *c, const char *reason, size_t k)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->rc[i].reason, reason) == 0) {
            c->rc[i].count += k;
            return;
        }
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 16;
        reason_count *r = realloc(c->rc, nc * sizeof(*r));
        if (!r)
            return;
        c->rc = r;
        c->cap = nc;
    }
    c->rc[c->n++] = (reason_count){reason, k};
}

static char *prefilter_message(size_t num_all, const ks_status *prefilter, const char *post)
{
    char msg[KS_STATUS_BUF + 64];
    ks__status_message(prefilter, msg, sizeof(msg));
    size_t len = 256 + (post ? strlen(post) : 0) + strlen(msg);
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "0/%zu nodes are available: %s.%s%s", num_all, msg,
                 post && *post ? " " : "", post ? post : "");
    return out;
}

/* "<count> <reason>" for each counted reason, sorted as text (upstream sort.Strings). */
static char **counted_parts(const reason_counts *c, size_t *len)
{
    char **parts = calloc(c->n ? c->n : 1, sizeof(char *));
    for (size_t i = 0; parts && i < c->n; i++) {
        size_t l = strlen(c->rc[i].reason) + 24;
        parts[i] = malloc(l);
        if (parts[i])
            snprintf(parts[i], l, "%zu %s", c->rc[i].count, c->rc[i].reason);
        *len += l + 2;
    }
    if (parts)
        qsort(parts, c->n, sizeof(char *), cmp_str);
    return parts;
}

char *ks__fit_error_message(size_t num_all, const ks_status *prefilter, const ks_status *statuses,
                            size_t nstatuses, const ks_status *absent, size_t nabsent,
                            const char *post)
{
    if (prefilter)
        return prefilter_message(num_all, prefilter, post);
    reason_counts c = {0};
    for (size_t i = 0; i < nstatuses; i++)
        for (const char *r = NULL; (r = ks__status_next(&statuses[i], r));)
            count_reason(&c, r, 1);
    if (absent && nabsent)
        for (const char *r = NULL; (r = ks__status_next(absent, r));)
            count_reason(&c, r, nabsent);
    size_t len = 256 + (post ? strlen(post) : 0);
    char **parts = counted_parts(&c, &len);
    char *out = malloc(len);
    if (out) {
        size_t off = (size_t)snprintf(out, len, "0/%zu nodes are available:", num_all);
        for (size_t i = 0; parts && i < c.n; i++)
            off += (size_t)snprintf(out + off, len - off, "%s%s", i ? ", " : " ",
                                    parts[i] ? parts[i] : "");
        if (c.n)
            off += (size_t)snprintf(out + off, len - off, ".");
        if (post && *post)
            snprintf(out + off, len - off, " %s", post);
    }
    for (size_t i = 0; parts && i < c.n; i++)
        free(parts[i]);
    free(parts);
    free(c.rc);
    return out;
}
