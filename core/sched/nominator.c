/*
 * The nominator (upstream PodNominator): pods that preemption nominated to a node, with
 * status.nominatedNodeName, so that Filter counts them on that node while they wait for the
 * victims to leave. uid -> pod copy, one reference each.
 *
 * Threads: add/remove/clear_lower are called by the scheduling thread and by pod events (any
 * thread), under s->nom_mu; snapshot/release run on the scheduling thread around each cycle and
 * fill s->hooks, which the cycle's plugins and Filter workers read.
 */
#include <stdlib.h>

#include "sched/scheduler_int.h"

void ks__nominator_init(ks_scheduler *s)
{
    pthread_mutex_init(&s->nom_mu, NULL);
    ks__strmap_init(&s->nominated);
    s->nom_ready = 1;
}

void ks__nominator_destroy(ks_scheduler *s)
{
    if (s->nom_ready) {
        const char *k;
        void *v;
        for (size_t it = 0; ks__strmap_next(&s->nominated, &it, &k, &v);)
            ks__pod_unref(v);
        ks__strmap_destroy(&s->nominated);
        pthread_mutex_destroy(&s->nom_mu);
        s->nom_ready = 0;
    }
    free(s->nom_sets);
    free(s->nom_pods);
}

void ks__nominator_add(ks_scheduler *s, ks_pod *pod)
{
    void *old = NULL;
    pthread_mutex_lock(&s->nom_mu);
    if (ks__strmap_put(&s->nominated, pod->uid, ks__pod_ref(pod), &old) != 0)
        ks__pod_unref(pod);
    pthread_mutex_unlock(&s->nom_mu);
    ks__pod_unref(old);
}

void ks__nominator_remove(ks_scheduler *s, const char *uid)
{
    pthread_mutex_lock(&s->nom_mu);
    ks_pod *old = s->nominated.len ? ks__strmap_remove(&s->nominated, uid) : NULL;
    pthread_mutex_unlock(&s->nom_mu);
    ks__pod_unref(old);
}

void ks__nominator_clear_lower(ks_scheduler *s, ks_sym node, int32_t priority)
{
    const char *k;
    void *v;
    ks_pod *pods[64];
    size_t n = 0;
    pthread_mutex_lock(&s->nom_mu);
    for (size_t it = 0; n < 64 && ks__strmap_next(&s->nominated, &it, &k, &v);) {
        ks_pod *p = v;
        if (p->nominated_node_name == node && p->priority < priority)
            pods[n++] = ks__pod_ref(p);
    }
    pthread_mutex_unlock(&s->nom_mu);
    for (size_t i = 0; i < n; i++) {
        ks__nominator_remove(s, pods[i]->uid);
        /* upstream clearNominatedNodeName: the API object loses it too */
        if (s->source.clear_nominated)
            s->source.clear_nominated(s->source.ctx, pods[i]);
        ks__pod_unref(pods[i]);
    }
}

void ks__nominator_snapshot(ks_scheduler *s)
{
    const char *k;
    void *v;
    s->hooks.nnominated = 0;
    s->hooks.nominated = NULL;
    pthread_mutex_lock(&s->nom_mu);
    size_t n = s->nominated.len;
    if (n == 0) {
        pthread_mutex_unlock(&s->nom_mu);
        return;
    }
    if (n > s->nom_pods_cap) {
        free(s->nom_pods);
        free(s->nom_sets);
        s->nom_pods = malloc(n * sizeof(*s->nom_pods));
        s->nom_sets = malloc(n * sizeof(*s->nom_sets));
        s->nom_pods_cap = s->nom_sets_cap = (s->nom_pods && s->nom_sets) ? n : 0;
        if (!s->nom_pods_cap) {
            pthread_mutex_unlock(&s->nom_mu);
            return;
        }
    }
    /* Group by node: pods sorted by node id, one set per node. */
    size_t i = 0;
    for (size_t it = 0; ks__strmap_next(&s->nominated, &it, &k, &v);)
        s->nom_pods[i++] = ks__pod_ref(v);
    pthread_mutex_unlock(&s->nom_mu);
    for (size_t a = 1; a < n; a++) /* insertion sort: few nominated pods */
        for (size_t b = a;
             b > 0 && s->nom_pods[b - 1]->nominated_node_name > s->nom_pods[b]->nominated_node_name;
             b--) {
            const ks_pod *t = s->nom_pods[b];
            s->nom_pods[b] = s->nom_pods[b - 1];
            s->nom_pods[b - 1] = t;
        }
    size_t nsets = 0;
    for (size_t a = 0; a < n; a++) {
        if (nsets == 0 || s->nom_sets[nsets - 1].node != s->nom_pods[a]->nominated_node_name)
            s->nom_sets[nsets++] =
                (ks_nominated_set){s->nom_pods[a]->nominated_node_name, 0, &s->nom_pods[a]};
        s->nom_sets[nsets - 1].n++;
    }
    s->hooks.nnominated = nsets;
    s->hooks.nominated = s->nom_sets;
}

void ks__nominator_release(ks_scheduler *s)
{
    size_t total = 0;
    for (size_t i = 0; i < s->hooks.nnominated; i++)
        total += s->hooks.nominated[i].n;
    for (size_t i = 0; i < total; i++)
        ks__pod_unref((ks_pod *)s->nom_pods[i]);
    s->hooks.nnominated = 0;
    s->hooks.nominated = NULL;
}
