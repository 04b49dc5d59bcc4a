/*
 * The pods of a namespace by one label's value (ks_pods_each, upstream's pod lister with a label
 * selector), indexed for the label keys plugins ask about: a gang plugin counts its group's pods
 * several times per pod, and a walk over every pod each time made a 3000-gang run quadratic.
 *
 * The index maps "<ns>\x1f<key>\x1f<value>" to the uids of the pods that carry that label, for
 * every key asked about so far (the first question for a key builds its part from the cache and
 * the queue). It is kept by the pod events (ks__pod_index_add / _remove, called by the
 * scheduler's on_pod_add / update / delete); a lookup resolves each uid to the pod the cache holds
 * (bound or assumed) or else the one the queue holds, and skips a uid neither knows (a pod that
 * left the queue without an event, e.g. dropped by simulate's --max-attempts).
 *
 * Threads: any; the index has its own mutex, taken before the cache's or the queue's.
 */
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "sched/scheduler_int.h"

typedef struct uid_list {
    size_t n, cap;
    char **uids;
} uid_list;

static void group_key(ks_sym ns, ks_sym key, ks_sym value, char *out, size_t len)
{
    snprintf(out, len, "%u\x1f%u\x1f%u", (unsigned)ns, (unsigned)key, (unsigned)value);
}

static void list_add(ks_strmap *groups, const char *gk, const char *uid)
{
    uid_list *l = ks__strmap_get(groups, gk);
    if (!l) {
        if (!(l = calloc(1, sizeof(*l))) || ks__strmap_put(groups, gk, l, NULL) != 0) {
            free(l);
            return;
        }
    }
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->uids[i], uid))
            return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        char **u = realloc(l->uids, cap * sizeof(*u));
        if (!u)
            return;
        l->uids = u;
        l->cap = cap;
    }
    if ((l->uids[l->n] = strdup(uid)))
        l->n++;
}

static void list_remove(ks_strmap *groups, const char *gk, const char *uid)
{
    uid_list *l = ks__strmap_get(groups, gk);
    for (size_t i = 0; l && i < l->n; i++)
        if (!strcmp(l->uids[i], uid)) {
            free(l->uids[i]);
            l->uids[i] = l->uids[--l->n];
            return;
        }
}

/* Under ix->mu: files or unfiles pod under every indexed key it carries. */
static void index_pod(ks_pod_index *ix, const ks_pod *pod, int add)
{
    for (size_t k = 0; k < ix->nkeys; k++) {
        ks_sym v = ks__labels_get(pod->labels, pod->nlabels, ix->keys[k]);
        if (v == KS_SYM_ABSENT)
            continue;
        char gk[64];
        group_key(pod->ns, ix->keys[k], v, gk, sizeof(gk));
        if (add)
            list_add(&ix->groups, gk, pod->uid);
        else
            list_remove(&ix->groups, gk, pod->uid);
    }
}

void ks__pod_index_init(ks_pod_index *ix)
{
    pthread_mutex_init(&ix->mu, NULL);
    ks__strmap_init(&ix->groups);
    ix->nkeys = 0;
}

void ks__pod_index_destroy(ks_pod_index *ix)
{
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&ix->groups, &it, &k, &v);) {
        uid_list *l = v;
        for (size_t i = 0; i < l->n; i++)
            free(l->uids[i]);
        free(l->uids);
        free(l);
    }
    ks__strmap_destroy(&ix->groups);
    pthread_mutex_destroy(&ix->mu);
}

void ks__pod_index_add(ks_pod_index *ix, const ks_pod *pod)
{
    pthread_mutex_lock(&ix->mu);
    index_pod(ix, pod, 1);
    pthread_mutex_unlock(&ix->mu);
}

void ks__pod_index_remove(ks_pod_index *ix, const ks_pod *pod)
{
    pthread_mutex_lock(&ix->mu);
    index_pod(ix, pod, 0);
    pthread_mutex_unlock(&ix->mu);
}

/* Under ix->mu: key becomes indexed; every pod the cache and the queue know is filed under it.
 * 0, or KS_ENOMEM when no more keys fit (the caller then walks every pod). */
static int index_key(ks_scheduler *s, ks_pod_index *ix, ks_sym key)
{
    for (size_t k = 0; k < ix->nkeys; k++)
        if (ix->keys[k] == key)
            return 0;
    if (ix->nkeys == sizeof(ix->keys) / sizeof(ix->keys[0]))
        return KS_ENOMEM;
    ix->keys[ix->nkeys++] = key;
    ks_pod **pods = NULL;
    size_t n = ks__cache_pods_all(s->cache, &pods);
    for (size_t i = 0; i < n; i++) {
        index_pod(ix, pods[i], 1);
        ks__pod_unref(pods[i]);
    }
    free(pods);
    n = ks__queue_pods(s->queue, &pods);
    for (size_t i = 0; i < n; i++) {
        index_pod(ix, pods[i], 1);
        ks__pod_unref(pods[i]);
    }
    free(pods);
    return 0;
}

size_t ks__pod_index_each(ks_scheduler *s, ks_sym ns, ks_sym key, ks_sym value, ks_pod_visit_fn fn,
                          void *fctx)
{
    ks_pod_index *ix = &s->pod_index;
    char gk[64];
    group_key(ns, key, value, gk, sizeof(gk));
    pthread_mutex_lock(&ix->mu);
    if (index_key(s, ix, key) != 0) {
        pthread_mutex_unlock(&ix->mu);
        return (size_t)-1;
    }
    uid_list *l = ks__strmap_get(&ix->groups, gk);
    size_t n = l ? l->n : 0;
    ks_pod **pods = n ? malloc(n * sizeof(*pods)) : NULL;
    size_t found = 0;
    for (size_t i = 0; pods && i < n; i++) {
        ks_pod *p = ks__cache_get_pod(s->cache, l->uids[i]);
        if (!p)
            p = ks__queue_get_pod(s->queue, l->uids[i]);
        if (p)
            pods[found++] = p;
    }
    pthread_mutex_unlock(&ix->mu);
    /* outside the lock: fn may call back into the host */
    for (size_t i = 0; i < found; i++) {
        fn(fctx, pods[i]);
        ks__pod_unref(pods[i]);
    }
    free(pods);
    return found;
}
