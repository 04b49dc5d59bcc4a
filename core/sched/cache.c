/*
 * Scheduler cache and snapshot; see cache.h.
 *
 * Node entries sit in a doubly linked list ordered by generation, most recently changed first,
 * so the snapshot update walks only the changed prefix (upstream cache.UpdateSnapshot).
 */
#include "sched/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/shared.h"
#include "util/strmap.h"

typedef struct cnode {
    ks_node_info info;
    struct cnode *prev, *next; /* generation list, head = newest */
    uint64_t seq;              /* insertion order, for the node list */
    ks_sym zone;               /* zone key while info.node is set (upstream nodeTree) */
    ks__symrefs name_ref;      /* holds info.name: the entry may outlive its node and pods */
} cnode;

typedef struct cpod {
    ks_pod *pod;
    ks_sym node;
    int assumed;
    int binding_finished;
} cpod;

struct ks_cache {
    pthread_mutex_t mu;
    ks_strmap nodes; /* name -> cnode */
    ks_strmap pods;  /* uid -> cpod */
    cnode *head;
    uint64_t generation;
    uint64_t list_generation; /* bumped when nodes are added or removed */
    uint64_t node_generation; /* bumped when any Node object is added, replaced or removed */
    uint64_t next_seq;
    size_t nassumed;
    /* Zones in the order they were created, each with its node count; a zone that empties is
     * dropped and comes back at the end (upstream nodeTree.zones). */
    struct czone {
        ks_sym key;
        size_t nodes;
    } *zones;
    size_t nzones, zones_cap;
    /* Image name -> its state (upstream cacheImpl.imageStates): the size of the Node that listed
     * the name first while no other did, and how many Nodes list it now. */
    ks_strmap images; /* name -> cimage */
};

typedef struct cimage {
    int64_t size;
    size_t nodes;
} cimage;

/* ---- NodeInfo ------------------------------------------------------------------------------ */

static int push_ptr(const ks_pod ***arr, size_t *n, size_t *cap, const ks_pod *p)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        const ks_pod **a = realloc(*arr, nc * sizeof(*a));
        if (!a)
            return KS_ENOMEM;
        *arr = a;
        *cap = nc;
    }
    (*arr)[(*n)++] = p;
    return 0;
}

static void drop_ptr(const ks_pod **arr, size_t *n, const ks_pod *p)
{
    for (size_t i = 0; i < *n; i++)
        if (arr[i] == p) {
            memmove(&arr[i], &arr[i + 1], (*n - i - 1) * sizeof(*arr));
            (*n)--;
            return;
        }
}

/* Inserts pod into its namespace group (groups sorted by namespace id). */
static int ns_insert(ks_node_info *ni, const ks_pod *pod)
{
    size_t g = 0;
    while (g < ni->nns_groups && ni->ns_groups[g].ns < pod->ns)
        g++;
    if (g == ni->nns_groups || ni->ns_groups[g].ns != pod->ns) {
        if (ni->nns_groups == ni->ns_groups_cap) {
            size_t cap = ni->ns_groups_cap ? ni->ns_groups_cap * 2 : 4;
            struct ks_ns_group *a = realloc(ni->ns_groups, cap * sizeof(*a));
            if (!a)
                return KS_ENOMEM;
            ni->ns_groups = a;
            ni->ns_groups_cap = cap;
        }
        uint32_t start = g < ni->nns_groups
                             ? ni->ns_groups[g].start
                             : (g ? ni->ns_groups[g - 1].start + ni->ns_groups[g - 1].count : 0);
        memmove(&ni->ns_groups[g + 1], &ni->ns_groups[g],
                (ni->nns_groups - g) * sizeof(*ni->ns_groups));
        ni->ns_groups[g] = (struct ks_ns_group){pod->ns, start, 0};
        ni->nns_groups++;
    }
    size_t total = ni->nns_groups ? ni->ns_groups[ni->nns_groups - 1].start +
                                        ni->ns_groups[ni->nns_groups - 1].count
                                  : 0;
    if (total + 1 > ni->ns_pods_cap) {
        size_t cap = ni->ns_pods_cap ? ni->ns_pods_cap * 2 : 8;
        const ks_pod **a = realloc(ni->ns_pods, cap * sizeof(*a));
        if (!a)
            return KS_ENOMEM;
        ni->ns_pods = a;
        ni->ns_pods_cap = cap;
    }
    size_t at = ni->ns_groups[g].start + ni->ns_groups[g].count;
    memmove(&ni->ns_pods[at + 1], &ni->ns_pods[at], (total - at) * sizeof(*ni->ns_pods));
    ni->ns_pods[at] = pod;
    ni->ns_groups[g].count++;
    for (size_t k = g + 1; k < ni->nns_groups; k++)
        ni->ns_groups[k].start++;
    return 0;
}

static void ns_remove(ks_node_info *ni, const ks_pod *pod)
{
    size_t g = 0;
    while (g < ni->nns_groups && ni->ns_groups[g].ns != pod->ns)
        g++;
    if (g == ni->nns_groups)
        return;
    size_t total =
        ni->ns_groups[ni->nns_groups - 1].start + ni->ns_groups[ni->nns_groups - 1].count;
    for (size_t i = ni->ns_groups[g].start; i < ni->ns_groups[g].start + ni->ns_groups[g].count;
         i++) {
        if (ni->ns_pods[i] != pod)
            continue;
        memmove(&ni->ns_pods[i], &ni->ns_pods[i + 1], (total - i - 1) * sizeof(*ni->ns_pods));
        ni->ns_groups[g].count--;
        for (size_t k = g + 1; k < ni->nns_groups; k++)
            ni->ns_groups[k].start--;
        if (ni->ns_groups[g].count == 0) {
            memmove(&ni->ns_groups[g], &ni->ns_groups[g + 1],
                    (ni->nns_groups - g - 1) * sizeof(*ni->ns_groups));
            ni->nns_groups--;
        }
        return;
    }
}

/* The derived per-node lists (ports, pods with affinity) for one pod. */
static int index_pod(ks_node_info *ni, const ks_pod *pod)
{
    if (pod->nports) {
        if (ni->nports + pod->nports > ni->ports_cap) {
            size_t nc = ni->ports_cap ? ni->ports_cap * 2 : 8;
            while (nc < ni->nports + pod->nports)
                nc *= 2;
            ks_host_port *p = realloc(ni->ports, nc * sizeof(*p));
            if (!p)
                return KS_ENOMEM;
            ni->ports = p;
            ni->ports_cap = nc;
        }
        memcpy(ni->ports + ni->nports, pod->host_ports, pod->nports * sizeof(ks_host_port));
        ni->nports += pod->nports;
    }
    if (ns_insert(ni, pod) != 0)
        return KS_ENOMEM;
    if (pod->pod_affinity &&
        push_ptr(&ni->with_affinity, &ni->naffinity, &ni->affinity_cap, pod) != 0)
        return KS_ENOMEM;
    if (pod->pod_affinity && pod->pod_affinity->nrequired_anti_affinity &&
        push_ptr(&ni->with_anti, &ni->nanti, &ni->anti_cap, pod) != 0)
        return KS_ENOMEM;
    return 0;
}

/* Removing a pod frees each of its host ports on the node even when another pod there uses the
 * same one: upstream's NodeInfo.UsedPorts is a set (HostPortInfo.Remove deletes the entry), so
 * two pods on one port (bound by someone who did not check) leave it free once either goes. The
 * differential test met it in a preemption dry run; kubesched keeps the quirk on purpose. */
static void unindex_pod(ks_node_info *ni, const ks_pod *pod)
{
    for (size_t k = 0; k < pod->nports; k++)
        for (size_t i = 0; i < ni->nports;) {
            if (memcmp(&ni->ports[i], &pod->host_ports[k], sizeof(ks_host_port)) != 0) {
                i++;
                continue;
            }
            memmove(&ni->ports[i], &ni->ports[i + 1], (ni->nports - i - 1) * sizeof(ks_host_port));
            ni->nports--;
        }
    drop_ptr(ni->with_affinity, &ni->naffinity, pod);
    drop_ptr(ni->with_anti, &ni->nanti, pod);
    ns_remove(ni, pod);
}

int ks__node_info_add_pod(ks_node_info *ni, ks_pod *pod)
{
    if (index_pod(ni, pod) != 0)
        return KS_ENOMEM;
    if (ni->npods == ni->cap) {
        size_t cap = ni->cap ? ni->cap * 2 : 8;
        ks_pod **p = realloc(ni->pods, cap * sizeof(*p));
        if (!p)
            return KS_ENOMEM;
        ni->pods = p;
        ni->cap = cap;
    }
    ni->pods[ni->npods++] = ks__pod_ref(pod);
    ks__resources_add(&ni->requested, &pod->requests.pub);
    ks__resources_add(&ni->nonzero_requested, &pod->node_nonzero_requests.pub);
    return 0;
}

int ks__node_info_remove_pod(ks_node_info *ni, const char *uid)
{
    for (size_t i = 0; i < ni->npods; i++) {
        ks_pod *p = ni->pods[i];
        if (strcmp(p->uid, uid) != 0)
            continue;
        ks__resources_sub(&ni->requested, &p->requests.pub);
        ks__resources_sub(&ni->nonzero_requested, &p->node_nonzero_requests.pub);
        unindex_pod(ni, p);
        /* Keep the order of the remaining pods (plugins may iterate them). */
        memmove(&ni->pods[i], &ni->pods[i + 1], (ni->npods - i - 1) * sizeof(ks_pod *));
        ni->npods--;
        ks__pod_unref(p);
        return 0;
    }
    return KS_ENOTFOUND;
}

static void node_info_clear(ks_node_info *ni)
{
    for (size_t i = 0; i < ni->npods; i++)
        ks__pod_unref(ni->pods[i]);
    free(ni->pods);
    free(ni->ports);
    free(ni->with_affinity);
    free(ni->with_anti);
    free(ni->ns_pods);
    free(ni->ns_groups);
    ks__node_unref(ni->node);
    ks__resources_free(&ni->requested);
    ks__resources_free(&ni->nonzero_requested);
    memset(ni, 0, sizeof(*ni));
}

/* dst (already cleared or fresh) becomes a copy of src. */
static int node_info_copy(ks_node_info *dst, const ks_node_info *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->node = ks__node_ref(src->node);
    dst->name = src->name;
    dst->generation = src->generation;
    dst->snap_index = src->snap_index;
    if (src->npods) {
        dst->pods = malloc(src->npods * sizeof(ks_pod *));
        if (!dst->pods)
            return KS_ENOMEM;
        for (size_t i = 0; i < src->npods; i++)
            dst->pods[i] = ks__pod_ref(src->pods[i]);
        dst->npods = dst->cap = src->npods;
    }
    /* The derived lists point at the same (shared, referenced) pods: copied as they are. */
#define COPY_ARRAY(field, n, capf)                                                                 \
    if (src->n) {                                                                                  \
        dst->field = malloc(src->n * sizeof(*dst->field));                                         \
        if (!dst->field)                                                                           \
            return KS_ENOMEM;                                                                      \
        memcpy((void *)dst->field, src->field, src->n * sizeof(*dst->field));                      \
        dst->n = dst->capf = src->n;                                                               \
    }
    COPY_ARRAY(ports, nports, ports_cap)
    COPY_ARRAY(with_affinity, naffinity, affinity_cap)
    COPY_ARRAY(with_anti, nanti, anti_cap)
    COPY_ARRAY(ns_groups, nns_groups, ns_groups_cap)
    COPY_ARRAY(ns_pods, npods, ns_pods_cap)
#undef COPY_ARRAY
    if (ks__resources_dup(&dst->requested, &src->requested) != 0 ||
        ks__resources_dup(&dst->nonzero_requested, &src->nonzero_requested) != 0)
        return KS_ENOMEM;
    return 0;
}

ks_node_info *ks__node_info_clone(const ks_node_info *ni)
{
    ks_node_info *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (node_info_copy(c, ni) != 0) {
        ks__node_info_free(c);
        return NULL;
    }
    return c;
}

void ks__node_info_free(ks_node_info *ni)
{
    if (!ni)
        return;
    node_info_clear(ni);
    free(ni);
}

/* ---- cache --------------------------------------------------------------------------------- */

ks_cache *ks__cache_new(void)
{
    ks_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    ks__strmap_init(&c->nodes);
    ks__strmap_init(&c->pods);
    ks__strmap_init(&c->images);
    return c;
}

void ks__cache_free(ks_cache *c)
{
    const char *k;
    void *v;
    if (!c)
        return;
    for (size_t it = 0; ks__strmap_next(&c->pods, &it, &k, &v);) {
        cpod *p = v;
        ks__pod_unref(p->pod);
        free(p);
    }
    for (size_t it = 0; ks__strmap_next(&c->nodes, &it, &k, &v);) {
        cnode *n = v;
        node_info_clear(&n->info);
        ks__symrefs_release(&n->name_ref);
        free(n);
    }
    for (size_t it = 0; ks__strmap_next(&c->images, &it, &k, &v);)
        free(v);
    ks__strmap_destroy(&c->pods);
    ks__strmap_destroy(&c->nodes);
    ks__strmap_destroy(&c->images);
    free(c->zones);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void list_unlink(ks_cache *c, cnode *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else if (c->head == n)
        c->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

/* Marks n changed: new generation, moved to the head. Under lock. */
static void touch(ks_cache *c, cnode *n)
{
    n->info.generation = ++c->generation;
    list_unlink(c, n);
    n->next = c->head;
    if (c->head)
        c->head->prev = n;
    c->head = n;
}

static ks_sym zone_key(const ks_node *node);

static int zone_add(ks_cache *c, ks_sym key)
{
    size_t i;
    for (i = 0; i < c->nzones && c->zones[i].key != key; i++)
        ;
    if (i == c->nzones) {
        if (c->nzones == c->zones_cap) {
            size_t cap = c->zones_cap ? c->zones_cap * 2 : 8;
            struct czone *z = realloc(c->zones, cap * sizeof(*z));
            if (!z)
                return KS_ENOMEM;
            c->zones = z;
            c->zones_cap = cap;
        }
        c->zones[c->nzones++] = (struct czone){key, 0};
    }
    c->zones[i].nodes++;
    return 0;
}

static void zone_remove(ks_cache *c, ks_sym key)
{
    for (size_t i = 0; i < c->nzones; i++) {
        if (c->zones[i].key != key)
            continue;
        if (--c->zones[i].nodes == 0) {
            memmove(&c->zones[i], &c->zones[i + 1], (c->nzones - i - 1) * sizeof(c->zones[0]));
            c->nzones--;
        }
        return;
    }
}

static cnode *node_entry(ks_cache *c, ks_sym name, int create)
{
    const char *key = ks__sym_str(name);
    cnode *n = ks__strmap_get(&c->nodes, key);
    if (n || !create)
        return n;
    n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->info.name = name;
    if (ks__strmap_put(&c->nodes, key, n, NULL) != 0) {
        free(n);
        return NULL;
    }
    ks__symrefs_hold(&n->name_ref, name);
    touch(c, n);
    return n;
}

/* Whether the node lists images[i].names[k] in an earlier entry or name: a node counts once per
 * name (upstream keeps a set of node names per image). */
static int listed_earlier(const ks_node *node, size_t i, uint32_t k)
{
    ks_sym name = node->images[i].names[k];
    for (size_t a = 0; a <= i; a++)
        for (uint32_t b = 0; b < (a == i ? k : node->images[a].nnames); b++)
            if (node->images[a].names[b] == name)
                return 1;
    return 0;
}

/* addNodeImageStates: a name no Node lists yet takes this node's size for that entry; a known
 * name keeps its size and gains the node. Under lock. */
static int image_states_add(ks_cache *c, const ks_node *node)
{
    for (size_t i = 0; i < node->nimages; i++)
        for (uint32_t k = 0; k < node->images[i].nnames; k++) {
            if (listed_earlier(node, i, k))
                continue;
            const char *name = ks__sym_str(node->images[i].names[k]);
            cimage *st = ks__strmap_get(&c->images, name);
            if (!st) {
                if (!(st = calloc(1, sizeof(*st))))
                    return KS_ENOMEM;
                st->size = node->images[i].size_bytes;
                if (ks__strmap_put(&c->images, name, st, NULL) != 0) {
                    free(st);
                    return KS_ENOMEM;
                }
            }
            st->nodes++;
        }
    return 0;
}

/* removeNodeImageStates: the node leaves each name it lists; a name no Node lists is dropped (and
 * takes the size of the next Node that lists it). Under lock. */
static void image_states_remove(ks_cache *c, const ks_node *node)
{
    for (size_t i = 0; node && i < node->nimages; i++)
        for (uint32_t k = 0; k < node->images[i].nnames; k++) {
            if (listed_earlier(node, i, k))
                continue;
            const char *name = ks__sym_str(node->images[i].names[k]);
            cimage *st = ks__strmap_get(&c->images, name);
            if (st && --st->nodes == 0)
                free(ks__strmap_remove(&c->images, name));
        }
}

int ks__cache_add_node(ks_cache *c, ks_node *node)
{
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    cnode *n = node_entry(c, node->name, 1);
    if (!n) {
        rc = KS_ENOMEM;
        goto out;
    }
    /* The node list keeps the order Nodes were added in (upstream nodeTree), not the order their
     * entries appeared (a pod may name a node before the Node arrives). A zone change moves the
     * node to the end of its new zone, as nodeTree.updateNode does; like upstream, the snapshot's
     * list picks that up at its next rebuild. */
    ks_sym zone = zone_key(node);
    if (!n->info.node || zone != n->zone) {
        if ((rc = zone_add(c, zone)) != 0)
            goto out;
        if (n->info.node)
            zone_remove(c, n->zone);
        else
            c->list_generation++;
        n->zone = zone;
        n->seq = ++c->next_seq;
    }
    /* AddNode / UpdateNode: the old object's images go first, then the new one's. */
    image_states_remove(c, n->info.node);
    if ((rc = image_states_add(c, node)) != 0)
        goto out;
    ks__node_unref(n->info.node);
    n->info.node = ks__node_ref(node);
    c->node_generation++;
    touch(c, n);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void drop_entry_if_empty(ks_cache *c, cnode *n)
{
    if (n->info.node || n->info.npods)
        return;
    list_unlink(c, n);
    ks__strmap_remove(&c->nodes, ks__sym_str(n->info.name));
    node_info_clear(&n->info);
    ks__symrefs_release(&n->name_ref);
    free(n);
}

int ks__cache_remove_node(ks_cache *c, ks_sym name)
{
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    cnode *n = node_entry(c, name, 0);
    if (!n || !n->info.node) {
        rc = KS_ENOTFOUND;
        goto out;
    }
    /* Pods still bound there keep the entry alive (upstream keeps a NodeInfo without a node). */
    zone_remove(c, n->zone);
    image_states_remove(c, n->info.node);
    ks__node_unref(n->info.node);
    n->info.node = NULL;
    c->node_generation++;
    c->list_generation++;
    touch(c, n);
    drop_entry_if_empty(c, n);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Adds pod to its node's NodeInfo. Under lock. */
static int place(ks_cache *c, ks_pod *pod)
{
    cnode *n = node_entry(c, pod->node_name, 1);
    int rc;
    if (!n)
        return KS_ENOMEM;
    if ((rc = ks__node_info_add_pod(&n->info, pod)) != 0)
        return rc;
    touch(c, n);
    return 0;
}

static void unplace(ks_cache *c, ks_pod *pod, ks_sym node)
{
    cnode *n = node_entry(c, node, 0);
    if (!n)
        return;
    ks__node_info_remove_pod(&n->info, pod->uid);
    touch(c, n);
    drop_entry_if_empty(c, n);
}

int ks__cache_add_pod(ks_cache *c, ks_pod *pod)
{
    int rc = 0;
    if (pod->node_name == KS_SYM_EMPTY)
        return KS_EINVAL;
    pthread_mutex_lock(&c->mu);
    cpod *p = ks__strmap_get(&c->pods, pod->uid);
    if (p) {
        /* Confirms an assumed pod (or a duplicate add): replace the object in place. */
        if (p->assumed) {
            p->assumed = 0;
            c->nassumed--;
        }
        unplace(c, p->pod, p->node);
        ks__pod_unref(p->pod);
    } else {
        p = calloc(1, sizeof(*p));
        if (!p || ks__strmap_put(&c->pods, pod->uid, p, NULL) != 0) {
            free(p);
            rc = KS_ENOMEM;
            goto out;
        }
    }
    p->pod = ks__pod_ref(pod);
    p->node = pod->node_name;
    rc = place(c, pod);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int ks__cache_update_pod(ks_cache *c, ks_pod *pod) { return ks__cache_add_pod(c, pod); }

static int remove_locked(ks_cache *c, const char *uid, int only_assumed)
{
    cpod *p = ks__strmap_get(&c->pods, uid);
    if (!p || (only_assumed && !p->assumed))
        return KS_ENOTFOUND;
    ks__strmap_remove(&c->pods, uid);
    if (p->assumed)
        c->nassumed--;
    unplace(c, p->pod, p->node);
    ks__pod_unref(p->pod);
    free(p);
    return 0;
}

int ks__cache_remove_pod(ks_cache *c, const char *uid)
{
    pthread_mutex_lock(&c->mu);
    int rc = remove_locked(c, uid, 0);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int ks__cache_assume_pod(ks_cache *c, ks_pod *assumed)
{
    int rc;
    pthread_mutex_lock(&c->mu);
    if (ks__strmap_get(&c->pods, assumed->uid)) {
        rc = KS_EEXIST;
        goto out;
    }
    cpod *p = calloc(1, sizeof(*p));
    if (!p || ks__strmap_put(&c->pods, assumed->uid, p, NULL) != 0) {
        free(p);
        rc = KS_ENOMEM;
        goto out;
    }
    p->pod = ks__pod_ref(assumed);
    p->node = assumed->node_name;
    p->assumed = 1;
    c->nassumed++;
    rc = place(c, assumed);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int ks__cache_forget_pod(ks_cache *c, const char *uid)
{
    pthread_mutex_lock(&c->mu);
    int rc = remove_locked(c, uid, 1);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int ks__cache_finish_binding(ks_cache *c, const char *uid)
{
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    cpod *p = ks__strmap_get(&c->pods, uid);
    if (p)
        p->binding_finished = 1;
    else
        rc = KS_ENOTFOUND;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

ks_pod *ks__cache_get_pod(ks_cache *c, const char *uid)
{
    pthread_mutex_lock(&c->mu);
    cpod *p = ks__strmap_get(&c->pods, uid);
    ks_pod *pod = p ? ks__pod_ref(p->pod) : NULL;
    pthread_mutex_unlock(&c->mu);
    return pod;
}

int ks__cache_has_pod(ks_cache *c, const char *uid)
{
    pthread_mutex_lock(&c->mu);
    int r = ks__strmap_get(&c->pods, uid) != NULL;
    pthread_mutex_unlock(&c->mu);
    return r;
}

size_t ks__cache_pods_all(ks_cache *c, ks_pod ***out)
{
    return ks__cache_pods_matching(c, KS_SYM_ABSENT, KS_SYM_ABSENT, KS_SYM_ABSENT, out);
}

size_t ks__cache_pods_matching(ks_cache *c, ks_sym ns, ks_sym key, ks_sym value, ks_pod ***out)
{
    *out = NULL;
    size_t n = 0, cap = 0;
    ks_pod **pods = NULL;
    pthread_mutex_lock(&c->mu);
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&c->pods, &it, &k, &v);) {
        ks_pod *p = ((cpod *)v)->pod;
        if (ns != KS_SYM_ABSENT &&
            (p->ns != ns || ks__labels_get(p->labels, p->nlabels, key) != value))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            ks_pod **np = realloc(pods, ncap * sizeof(*np));
            if (!np)
                break;
            pods = np;
            cap = ncap;
        }
        pods[n++] = ks__pod_ref(p);
    }
    pthread_mutex_unlock(&c->mu);
    *out = pods;
    return n;
}

int ks__cache_is_assumed(ks_cache *c, const char *uid)
{
    pthread_mutex_lock(&c->mu);
    cpod *p = ks__strmap_get(&c->pods, uid);
    int r = p && p->assumed;
    pthread_mutex_unlock(&c->mu);
    return r;
}

void ks__cache_counts(ks_cache *c, ks_cache_counts *out)
{
    pthread_mutex_lock(&c->mu);
    out->nodes = 0;
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&c->nodes, &it, &k, &v);)
        out->nodes += ((cnode *)v)->info.node != NULL;
    out->pods = c->pods.len;
    out->assumed = c->nassumed;
    pthread_mutex_unlock(&c->mu);
}

/* ---- snapshot ------------------------------------------------------------------------------ */

ks_snapshot *ks__snapshot_new(void) { return calloc(1, sizeof(ks_snapshot)); }

void ks__snapshot_free(ks_snapshot *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nnodes; i++)
        ks__node_info_free(s->nodes[i]);
    free(s->nodes);
    free(s->index);
    free(s->images);
    free(s->with_affinity);
    free(s->with_anti);
    free(s->changed);
    free(s);
}

static size_t sym_slot(ks_sym sym, size_t cap)
{
    return ((uint64_t)sym * 0x9E3779B97F4A7C15ull) >> 20 & (cap - 1);
}

const ks_node_info *ks__snapshot_find(const ks_snapshot *s, ks_sym name)
{
    if (!s->index_cap)
        return NULL;
    for (size_t i = sym_slot(name, s->index_cap);; i = (i + 1) & (s->index_cap - 1)) {
        uint32_t v = s->index[i];
        if (!v)
            return NULL;
        if (s->nodes[v - 1]->name == name)
            return s->nodes[v - 1];
    }
}

static int rebuild_index(ks_snapshot *s)
{
    size_t cap = 64;
    while (cap < s->nnodes * 2)
        cap *= 2;
    uint32_t *idx = calloc(cap, sizeof(uint32_t));
    if (!idx)
        return KS_ENOMEM;
    for (size_t n = 0; n < s->nnodes; n++) {
        size_t i = sym_slot(s->nodes[n]->name, cap);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = (uint32_t)n + 1;
    }
    free(s->index);
    s->index = idx;
    s->index_cap = cap;
    return 0;
}

typedef struct {
    ks_sym zone;
    cnode *n;
    size_t order;
} zone_item;

static ks_sym zone_key(const ks_node *node)
{
    /* upstream utilnode.GetZoneKey: region + ":\x00:" + zone, the deprecated failure-domain.beta
     * labels taking precedence over the topology ones; "" when both are empty or absent. */
    static ks_sym region_label = KS_SYM_ABSENT, zone_label, beta_region_label, beta_zone_label;
    if (region_label == KS_SYM_ABSENT) {
        zone_label = ks__intern("topology.kubernetes.io/zone");
        region_label = ks__intern("topology.kubernetes.io/region");
        beta_zone_label = ks__intern("failure-domain.beta.kubernetes.io/zone");
        beta_region_label = ks__intern("failure-domain.beta.kubernetes.io/region");
    }
    ks_sym z = ks__labels_get(node->labels, node->nlabels, beta_zone_label);
    ks_sym r = ks__labels_get(node->labels, node->nlabels, beta_region_label);
    if (z == KS_SYM_ABSENT)
        z = ks__labels_get(node->labels, node->nlabels, zone_label);
    if (r == KS_SYM_ABSENT)
        r = ks__labels_get(node->labels, node->nlabels, region_label);
    if ((z == KS_SYM_ABSENT || z == KS_SYM_EMPTY) && (r == KS_SYM_ABSENT || r == KS_SYM_EMPTY))
        return KS_SYM_EMPTY;
    char buf[512];
    const char *rs = r == KS_SYM_ABSENT ? "" : ks__sym_str(r);
    const char *zs = z == KS_SYM_ABSENT ? "" : ks__sym_str(z);
    int len = snprintf(buf, sizeof(buf), "%s:%c:%s", rs, 0, zs);
    return ks__intern_n(buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
}

static int cmp_zone_item(const void *a, const void *b)
{
    const zone_item *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Rebuilds the whole node list: nodes in insertion order within each zone, dealt round-robin
 * across the zones in the order they were created (upstream nodeTree.list). Under the cache lock.
 */
static int rebuild_list(ks_cache *c, ks_snapshot *s)
{
    size_t n = 0, cap = c->nodes.len;
    zone_item *items = calloc(cap ? cap : 1, sizeof(*items));
    const char *k;
    void *v;
    int rc = 0;
    if (!items)
        return KS_ENOMEM;
    for (size_t it = 0; ks__strmap_next(&c->nodes, &it, &k, &v);) {
        cnode *e = v;
        if (e->info.node)
            items[n++] = (zone_item){e->zone, e, e->seq};
    }
    /* Insertion order, then dealt round-robin over zones. */
    qsort(items, n, sizeof(*items), cmp_zone_item);
    size_t nz = c->nzones;
    size_t *zone_of = calloc(n ? n : 1, sizeof(size_t));
    if (!zone_of) {
        rc = KS_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        size_t z;
        for (z = 0; z < nz && c->zones[z].key != items[i].zone; z++)
            ;
        zone_of[i] = z; /* every listed node's zone is in c->zones */
    }
    /* Free old snapshot entries and build new ones. */
    for (size_t i = 0; i < s->nnodes; i++)
        ks__node_info_free(s->nodes[i]);
    s->nnodes = 0;
    if (s->cap < n) {
        ks_node_info **nn = realloc(s->nodes, n * sizeof(*nn));
        if (!nn) {
            rc = KS_ENOMEM;
            goto out;
        }
        s->nodes = nn;
        s->cap = n;
    }
    {
        size_t *cursor = calloc(nz ? nz : 1, sizeof(size_t));
        size_t placed = 0;
        if (!cursor) {
            rc = KS_ENOMEM;
            goto out;
        }
        while (placed < n) {
            size_t before = placed;
            for (size_t z = 0; z < nz; z++) {
                while (cursor[z] < n && zone_of[cursor[z]] != z)
                    cursor[z]++;
                if (cursor[z] >= n)
                    continue;
                ks_node_info *copy = ks__node_info_clone(&items[cursor[z]].n->info);
                if (!copy) {
                    free(cursor);
                    rc = KS_ENOMEM;
                    goto out;
                }
                copy->snap_index = (uint32_t)s->nnodes;
                s->nodes[s->nnodes++] = copy;
                cursor[z]++;
                placed++;
            }
            if (placed == before)
                break; /* cannot happen while every listed node's zone is counted */
        }
        free(cursor);
    }
    rc = rebuild_index(s);
out:
    free(items);
    free(zone_of);
    return rc;
}

static size_t image_slot(ks_sym sym, size_t cap)
{
    return ((uint64_t)sym * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

size_t ks__snapshot_image_nodes(const ks_snapshot *s, ks_sym image)
{
    if (!s->images_cap)
        return 0;
    for (size_t i = image_slot(image, s->images_cap);; i = (i + 1) & (s->images_cap - 1)) {
        if (s->images[i].nodes == 0)
            return 0;
        if (s->images[i].image == image)
            return s->images[i].nodes;
    }
}

int64_t ks__snapshot_image_size(const ks_snapshot *s, ks_sym image)
{
    if (!s->images_cap)
        return -1;
    for (size_t i = image_slot(image, s->images_cap);; i = (i + 1) & (s->images_cap - 1)) {
        if (s->images[i].nodes == 0)
            return -1;
        if (s->images[i].image == image)
            return s->images[i].size;
    }
}

/* Recounts, for each image name, the listed nodes that have it (upstream imageStates' NumNodes).
 * Only after a Node object changed: O(images in the cluster). */
static int count_images(const ks_cache *c, ks_snapshot *s)
{
    size_t total = 0;
    for (size_t n = 0; n < s->nnodes; n++)
        if (s->nodes[n]->node)
            for (size_t i = 0; i < s->nodes[n]->node->nimages; i++)
                total += s->nodes[n]->node->images[i].nnames;
    size_t cap = 64;
    while (cap < total * 2)
        cap *= 2;
    struct ks_image_count *t = calloc(cap, sizeof(*t));
    if (!t)
        return KS_ENOMEM;
    for (size_t n = 0; n < s->nnodes; n++) {
        const ks_node *node = s->nodes[n]->node;
        for (size_t i = 0; node && i < node->nimages; i++)
            for (uint32_t k = 0; k < node->images[i].nnames; k++) {
                ks_sym img = node->images[i].names[k];
                size_t j = image_slot(img, cap);
                while (t[j].nodes && t[j].image != img)
                    j = (j + 1) & (cap - 1);
                /* A node listing the same name twice counts once. */
                if (t[j].nodes && t[j].last_node == n + 1)
                    continue;
                if (!t[j].nodes) {
                    const cimage *st = ks__strmap_get(&c->images, ks__sym_str(img));
                    t[j].size = st ? st->size : node->images[i].size_bytes;
                }
                t[j].image = img;
                t[j].nodes++;
                t[j].last_node = (uint32_t)n + 1;
            }
    }
    free(s->images);
    s->images = t;
    s->images_cap = cap;
    return 0;
}

/* The two node lists of nodes holding affinity pods, in snapshot order. */
static int list_affinity_nodes(ks_snapshot *s)
{
    const ks_node_info **a = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*a));
    const ks_node_info **b = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*b));
    if (!a || !b) {
        free(a);
        free(b);
        return KS_ENOMEM;
    }
    s->nwith_affinity = s->nwith_anti = 0;
    for (size_t i = 0; i < s->nnodes; i++) {
        if (s->nodes[i]->naffinity)
            a[s->nwith_affinity++] = s->nodes[i];
        if (s->nodes[i]->nanti)
            b[s->nwith_anti++] = s->nodes[i];
    }
    free(s->with_affinity);
    free(s->with_anti);
    s->with_affinity = a;
    s->with_anti = b;
    return 0;
}

/* Workload-aware preemption's simulation on the snapshot itself (upstream's mutable snapshot
 * lister, RemovePod / AddPod between BackupSnapshot and its restore): the pod leaves or joins the
 * snapshot's copy of its node only. The snapshot then no longer matches the cache, so the next
 * update rebuilds it whole (the restore); change trackers start over. */
static int affinity_bits(const ks_node_info *ni)
{
    return (ni->naffinity != 0) | (ni->nanti != 0) << 1;
}

/* The node lists of affinity pods are rebuilt only when ni joins or leaves one (O(nodes)). */
static int snapshot_mutated(ks_snapshot *s, const ks_node_info *ni, int had, int rc)
{
    s->list_dirty = 1;
    s->version++;
    return rc == 0 && had != affinity_bits(ni) ? list_affinity_nodes(s) : rc;
}

int ks__snapshot_add_pod(ks_snapshot *s, ks_pod *pod)
{
    ks_node_info *ni = (ks_node_info *)ks__snapshot_find(s, pod->node_name);
    if (!ni)
        return KS_ENOTFOUND;
    int had = affinity_bits(ni);
    return snapshot_mutated(s, ni, had, ks__node_info_add_pod(ni, pod));
}

int ks__snapshot_remove_pod(ks_snapshot *s, const ks_pod *pod)
{
    ks_node_info *ni = (ks_node_info *)ks__snapshot_find(s, pod->node_name);
    if (!ni)
        return KS_ENOTFOUND;
    int had = affinity_bits(ni);
    return snapshot_mutated(s, ni, had, ks__node_info_remove_pod(ni, pod->uid));
}

int ks__cache_update_snapshot(ks_cache *c, ks_snapshot *s)
{
    int rc = 0, affinity_dirty = 0;
    pthread_mutex_lock(&c->mu);
    s->update_seq++;
    s->nchanged = 0;
    if (s->list_dirty || s->index_cap == 0 || c->list_generation != s->list_generation) {
        rc = rebuild_list(c, s);
        s->list_generation = c->list_generation;
        s->version++;
        affinity_dirty = 1;
    } else {
        for (cnode *e = c->head; e && e->info.generation > s->generation; e = e->next) {
            ks_node_info *dst = (ks_node_info *)ks__snapshot_find(s, e->info.name);
            if (!dst || !e->info.node)
                continue;
            uint32_t idx = dst->snap_index;
            int had = (dst->naffinity != 0) | (dst->nanti != 0) << 1;
            node_info_clear(dst);
            if ((rc = node_info_copy(dst, &e->info)) != 0)
                break;
            dst->snap_index = idx;
            if (s->nchanged == s->changed_cap) {
                size_t cap = s->changed_cap ? s->changed_cap * 2 : 64;
                uint32_t *a = realloc(s->changed, cap * sizeof(*a));
                if (!a) {
                    rc = KS_ENOMEM;
                    break;
                }
                s->changed = a;
                s->changed_cap = cap;
            }
            s->changed[s->nchanged++] = idx;
            /* The copy's pointers changed too, so any node on a list forces a relist. */
            if (had || dst->naffinity || dst->nanti)
                affinity_dirty = 1;
        }
    }
    if (rc == 0 && affinity_dirty)
        rc = list_affinity_nodes(s);
    if (rc == 0 && (s->images_cap == 0 || s->images_generation != c->node_generation)) {
        rc = count_images(c, s);
        s->images_generation = c->node_generation;
    }
    s->list_dirty = rc != 0;
    if (rc != 0)
        s->version++; /* a half-done update: make change trackers start over */
    s->generation = c->generation;
    pthread_mutex_unlock(&c->mu);
    /* A cycle begins: shared pod parts retired two cycles ago can no longer be compared by
     * pointer with a live one (shared.h). */
    ks__shared_snapshot_updated();
    return rc;
}
