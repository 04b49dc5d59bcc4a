/* The SharedDRAManager side of DRA: in-flight allocations, allocator set-up, claim writes; see
 * dra_manager.h. */
#include "sched/dra_manager.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/intern.h"
#include "api/objects.h"
#include "util/strmap.h"
#include "sched/framework.h"

/* One in-flight allocation: the devices claim uid was given in Reserve (own copies). */
typedef struct inflight {
    char *uid;
    size_t ndev;
    ks_dra_device_ref *devs;
    uint8_t *shared; /* per device: has a share ID (allowMultipleAllocations) */
} inflight;

struct ks_dra_manager {
    pthread_mutex_t mu;
    inflight *v;
    size_t n, cap;
    ks_dra_cel_cache *cel; /* upstream's cel.Cache, shared by every allocator */
};

ks_dra_manager *ks__dra_manager_new(void)
{
    ks_dra_manager *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    if (!(m->cel = ks_dra_cel_cache_new())) {
        free(m);
        return NULL;
    }
    return m;
}

static void inflight_free(inflight *f)
{
    for (size_t i = 0; i < f->ndev; i++) {
        free((char *)f->devs[i].driver);
        free((char *)f->devs[i].pool);
        free((char *)f->devs[i].device);
    }
    free(f->devs);
    free(f->shared);
    free(f->uid);
}

void ks__dra_manager_free(ks_dra_manager *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        inflight_free(&m->v[i]);
    free(m->v);
    ks_dra_cel_cache_free(m->cel);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static size_t find_locked(ks_dra_manager *m, const char *uid)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].uid, uid) == 0)
            return i;
    return (size_t)-1;
}

int ks__dra_claim_pending(ks_dra_manager *m, const char *uid)
{
    if (!m || !uid)
        return 0;
    pthread_mutex_lock(&m->mu);
    int found = find_locked(m, uid) != (size_t)-1;
    pthread_mutex_unlock(&m->mu);
    return found;
}

int ks__dra_signal_pending(ks_dra_manager *m, const ks_resource_claim *claim,
                           const struct ks_dra_allocation *a, size_t i)
{
    if (!m || !claim || !a || i >= a->nclaims)
        return KS_EINVAL;
    const ks_dra_alloc_result *r = &a->out.results[i];
    inflight f = {0};
    f.uid = strdup(claim->view.uid);
    f.ndev = r->ndevices;
    f.devs = calloc(f.ndev ? f.ndev : 1, sizeof(*f.devs));
    f.shared = calloc(f.ndev ? f.ndev : 1, 1);
    int oom = !f.uid || !f.devs || !f.shared;
    for (size_t k = 0; !oom && k < f.ndev; k++) {
        f.devs[k].driver = strdup(r->devices[k].driver);
        f.devs[k].pool = strdup(r->devices[k].pool);
        f.devs[k].device = strdup(r->devices[k].device);
        f.shared[k] = r->devices[k].share_id != NULL;
        oom = !f.devs[k].driver || !f.devs[k].pool || !f.devs[k].device;
    }
    pthread_mutex_lock(&m->mu);
    if (!oom && m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        inflight *v = realloc(m->v, cap * sizeof(*v));
        if (v) {
            m->v = v;
            m->cap = cap;
        } else {
            oom = 1;
        }
    }
    if (!oom) {
        size_t at = find_locked(m, f.uid);
        if (at != (size_t)-1) {
            inflight_free(&m->v[at]); /* sync.Map.Store replaces */
            m->v[at] = f;
        } else {
            m->v[m->n++] = f;
        }
    }
    pthread_mutex_unlock(&m->mu);
    if (oom) {
        inflight_free(&f);
        return KS_ENOMEM;
    }
    return 0;
}

int ks__dra_remove_pending(ks_dra_manager *m, const char *uid)
{
    if (!m || !uid)
        return 0;
    pthread_mutex_lock(&m->mu);
    size_t at = find_locked(m, uid);
    if (at != (size_t)-1) {
        inflight_free(&m->v[at]);
        m->v[at] = m->v[--m->n];
    }
    pthread_mutex_unlock(&m->mu);
    return at != (size_t)-1;
}

/* ---- the allocator ----------------------------------------------------------------------------
 */

static const char *pstr(ks_mempool *p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ks__mempool_alloc(p, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

typedef struct refs {
    ks_dra_device_ref *v;
    size_t n, cap;
} refs;

/* p NULL: the strings stay valid as long as the allocator (a claim's, which it references),
 * and are not copied; else they are copied into p (an in-flight allocation's, which its owner
 * may drop as soon as the manager's lock is released). */
static int refs_add(refs *r, ks_mempool *p, const char *driver, const char *pool,
                    const char *device)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        ks_dra_device_ref *v = realloc(r->v, cap * sizeof(*v));
        if (!v)
            return KS_ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    ks_dra_device_ref *d = &r->v[r->n];
    if (!p) {
        *d = (ks_dra_device_ref){driver, pool, device};
        r->n++;
        return 0;
    }
    d->driver = pstr(p, driver);
    d->pool = pstr(p, pool);
    d->device = pstr(p, device);
    if (!d->driver || !d->pool || !d->device)
        return KS_ENOMEM;
    r->n++;
    return 0;
}

/* upstream GatherAllocatedState: the devices every allocated claim holds (exclusively or by a
 * share), and their consumed capacity, plus the in-flight allocations. */
static int gather_state(ks_dra_manager *m, ks_store *st, struct ks_dra_allocator *a)
{
    ks__draobj **claims = NULL;
    /* a set: the order of the claims does not matter, and sorting them cost a fifth of a cycle */
    size_t n = ks__store_draobjs_unordered(st, KS_DK_RESOURCE_CLAIM, &claims);
    refs excl = {0}, shared = {0};
    ks_dra_device_capacity *cap = NULL;
    size_t ncap = 0, capcap = 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const ks_resource_claim *c = ks__dra_claim(claims[i]);
        if (!c || !c->allocated)
            continue;
        for (uint32_t k = 0; !rc && k < c->nresults; k++) {
            const ks_dra_result *r = &c->results[k];
            rc = refs_add(r->share_id ? &shared : &excl, NULL, r->driver, r->pool, r->device);
            if (rc || !r->share_id || !r->nconsumed_capacity)
                continue;
            if (ncap == capcap) {
                size_t nc = capcap ? capcap * 2 : 16;
                ks_dra_device_capacity *v = realloc(cap, nc * sizeof(*v));
                if (!v) {
                    rc = KS_ENOMEM;
                    break;
                }
                cap = v;
                capcap = nc;
            }
            ks_dra_capacity_amount *am =
                ks__mempool_alloc(&a->pool, r->nconsumed_capacity * sizeof(*am));
            if (!am) {
                rc = KS_ENOMEM;
                break;
            }
            for (uint32_t q = 0; q < r->nconsumed_capacity; q++) {
                am[q].name = r->consumed_capacity_names[q].name;
                am[q].milli = r->consumed_capacity[q].milli;
                am[q].text = r->consumed_capacity[q].text;
            }
            cap[ncap++] =
                (ks_dra_device_capacity){shared.v[shared.n - 1], r->nconsumed_capacity, am};
        }
    }
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; !rc && i < m->n; i++)
        for (size_t k = 0; !rc && k < m->v[i].ndev; k++)
            rc = refs_add(m->v[i].shared[k] ? &shared : &excl, &a->pool, m->v[i].devs[k].driver,
                          m->v[i].devs[k].pool, m->v[i].devs[k].device);
    pthread_mutex_unlock(&m->mu);
    /* The capacity entries point at shared.v's entries by value (copied above), so a realloc of
     * shared.v does not matter to them. Claims stay referenced by the allocator: the amounts'
     * names point into them. */
    a->devices = excl.v;
    a->shared = shared.v;
    a->capacity = cap;
    a->state = (ks_dra_allocated_state){excl.n, excl.v, shared.n, shared.v, ncap, cap};
    a->claims = claims;
    a->nclaims = n;
    return rc;
}

/* One pool of the allocator's slices, and the allocated devices that belong to it. */
typedef struct idxv {
    size_t *v, n, cap;
} idxv;

struct dra_pool {
    ks_sym node; /* the nodeName all its slices name; KS_SYM_ABSENT: not node-local */
    idxv slices; /* indexes into a->slices, ascending */
    idxv excl, shared, capacity; /* indexes into the state's arrays; excl's in a->excl_index */
};

static int idxv_add(idxv *x, size_t i)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 4;
        size_t *v = realloc(x->v, cap * sizeof(*v));
        if (!v)
            return KS_ENOMEM;
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = i;
    return 0;
}

/* The pools of an allocator by driver and pool name: open addressing over an FNV-1a hash of
 * both names, looked up for every allocated device of the cluster in each cycle (no key is
 * built, no string copied). */
typedef struct pool_slot {
    uint64_t hash;
    const char *driver, *pool;
    struct dra_pool *p; /* NULL: free */
} pool_slot;

typedef struct pool_map {
    pool_slot *slots;
    size_t mask;
} pool_map;

static uint64_t pool_hash(const char *driver, const char *pool)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *c = (const unsigned char *)driver; *c; c++)
        h = (h ^ *c) * 1099511628211ULL;
    h = (h ^ 0x1f) * 1099511628211ULL; /* '\x1f' never occurs in a DNS subdomain */
    for (const unsigned char *c = (const unsigned char *)pool; *c; c++)
        h = (h ^ *c) * 1099511628211ULL;
    return h;
}

/* The slot of (driver, pool): its pool, or the free slot where it goes. */
static pool_slot *pool_slot_of(const pool_map *m, const char *driver, const char *pool)
{
    uint64_t h = pool_hash(driver, pool);
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        pool_slot *s = &m->slots[i];
        if (!s->p || (s->hash == h && !strcmp(s->driver, driver) && !strcmp(s->pool, pool))) {
            s->hash = h;
            return s;
        }
    }
}

static struct dra_pool *pool_find(const pool_map *m, const char *driver, const char *pool)
{
    return pool_slot_of(m, driver, pool)->p;
}

static void pools_free(struct ks_dra_allocator *a)
{
    for (size_t i = 0; i < a->npools; i++) {
        free(a->pools[i].slices.v);
        free(a->pools[i].shared.v);
        free(a->pools[i].capacity.v);
    }
    free(a->pools);
    free(a->excl_index);
    free(a->by_node);
}

typedef struct node_pool {
    ks_sym node;
    size_t pool;
} node_pool;

static int cmp_node_pool(const void *x, const void *y)
{
    const node_pool *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return a->pool < b->pool ? -1 : a->pool > b->pool;
}

/* a->by_node: the pools of no single node first (in pool order), then the others by node. */
static int order_pools_by_node(struct ks_dra_allocator *a)
{
    node_pool *v = malloc((a->npools + 1) * sizeof(*v));
    a->by_node = malloc((a->npools + 1) * sizeof(size_t));
    if (!v || !a->by_node) {
        free(v);
        return KS_ENOMEM;
    }
    size_t n = 0;
    a->nglobal_pools = 0;
    for (size_t i = 0; i < a->npools; i++)
        if (a->pools[i].node == KS_SYM_ABSENT)
            a->by_node[a->nglobal_pools++] = i;
        else
            v[n++] = (node_pool){a->pools[i].node, i};
    qsort(v, n, sizeof(*v), cmp_node_pool);
    for (size_t i = 0; i < n; i++)
        a->by_node[a->nglobal_pools + i] = v[i].pool;
    free(v);
    return 0;
}

/* Groups the slices by pool and files the allocated state's devices under their pools (a device
 * of no pool the allocator sees cannot matter to it). */
static int index_pools(struct ks_dra_allocator *a)
{
    size_t cap = 16;
    while (cap < 2 * (a->nslices + 1))
        cap *= 2;
    pool_map m = {calloc(cap, sizeof(pool_slot)), cap - 1};
    int rc = 0;
    a->pools = calloc(a->nslices + 1, sizeof(*a->pools));
    if (!a->pools || !m.slots)
        rc = KS_ENOMEM;
    for (size_t i = 0; !rc && i < a->nslices; i++) {
        const ks_resource_slice *sl = ks__dra_slice(a->slices[i]);
        pool_slot *slot = pool_slot_of(&m, sl->driver, sl->pool_name);
        ks_sym node = sl->node.has_node_name && sl->node.node_name != KS_SYM_EMPTY
                          ? sl->node.node_name
                          : KS_SYM_ABSENT;
        struct dra_pool *p = slot->p;
        if (!p) {
            p = slot->p = &a->pools[a->npools++];
            slot->driver = sl->driver;
            slot->pool = sl->pool_name;
            p->node = node;
        } else if (p->node != node) {
            p->node = KS_SYM_ABSENT;
        }
        rc = idxv_add(&p->slices, i);
    }
    /* The exclusive devices are most of them (every allocated claim's): counted per pool first,
     * then filed into one buffer, rather than grown pool by pool. */
    struct dra_pool **of = rc ? NULL : malloc((a->state.ndevices + 1) * sizeof(*of));
    if (!rc && !of)
        rc = KS_ENOMEM;
    for (size_t i = 0; !rc && i < a->state.ndevices; i++)
        if ((of[i] = pool_find(&m, a->state.devices[i].driver, a->state.devices[i].pool)))
            of[i]->excl.cap++;
    if (!rc && !(a->excl_index = malloc((a->state.ndevices + 1) * sizeof(size_t))))
        rc = KS_ENOMEM;
    for (size_t i = 0, at = 0; !rc && i < a->npools; i++) {
        a->pools[i].excl.v = a->excl_index + at;
        at += a->pools[i].excl.cap;
    }
    for (size_t i = 0; !rc && i < a->state.ndevices; i++)
        if (of[i])
            of[i]->excl.v[of[i]->excl.n++] = i;
    free(of);
    for (size_t i = 0; !rc && i < a->state.nshared; i++) {
        struct dra_pool *p = pool_find(&m, a->state.shared[i].driver, a->state.shared[i].pool);
        rc = p ? idxv_add(&p->shared, i) : 0;
    }
    for (size_t i = 0; !rc && i < a->state.ncapacity; i++) {
        struct dra_pool *p =
            pool_find(&m, a->state.capacity[i].id.driver, a->state.capacity[i].id.pool);
        rc = p ? idxv_add(&p->capacity, i) : 0;
    }
    free(m.slots);
    if (!rc)
        rc = order_pools_by_node(a);
    return rc;
}

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* The input of one node's Allocate: its pools' slices (in the input's order) and allocated
 * devices. Arrays malloc'd into *bufs (free each). */
typedef struct node_input {
    const ks_resource_slice **slices;
    ks_dra_device_ref *excl, *shared;
    ks_dra_device_capacity *capacity;
    size_t *order;
    ks_dra_allocated_state state;
    size_t nslices;
} node_input;

static void node_input_free(node_input *ni)
{
    free(ni->slices);
    free(ni->excl);
    free(ni->shared);
    free(ni->capacity);
    free(ni->order);
}

/* The pools a node's Allocate reads: those of no single node, then the node's own (found by
 * bisection in the pools ordered by node, not by a walk over every pool of the cluster). */
typedef struct node_pools {
    const size_t *global, *own;
    size_t nglobal, nown;
} node_pools;

static node_pools pools_of(const struct ks_dra_allocator *a, ks_sym node)
{
    node_pools np = {a->by_node, NULL, a->nglobal_pools, 0};
    size_t lo = a->nglobal_pools, hi = a->npools; /* by_node: the global ones first */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->pools[a->by_node[mid]].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    np.own = a->by_node + lo;
    while (lo + np.nown < a->npools && a->pools[a->by_node[lo + np.nown]].node == node)
        np.nown++;
    return np;
}

static int node_input_build(const struct ks_dra_allocator *a, ks_sym node, node_input *ni)
{
    size_t ns = 0, ne = 0, nsh = 0, nc = 0;
    memset(ni, 0, sizeof(*ni));
    node_pools np = pools_of(a, node);
    for (size_t j = 0; j < np.nglobal + np.nown; j++) {
        const struct dra_pool *p =
            &a->pools[j < np.nglobal ? np.global[j] : np.own[j - np.nglobal]];
        ns += p->slices.n;
        ne += p->excl.n;
        nsh += p->shared.n;
        nc += p->capacity.n;
    }
    ni->order = malloc((ns + 1) * sizeof(size_t));
    ni->slices = malloc((ns + 1) * sizeof(*ni->slices));
    ni->excl = malloc((ne + 1) * sizeof(*ni->excl));
    ni->shared = malloc((nsh + 1) * sizeof(*ni->shared));
    ni->capacity = malloc((nc + 1) * sizeof(*ni->capacity));
    if (!ni->order || !ni->slices || !ni->excl || !ni->shared || !ni->capacity) {
        node_input_free(ni);
        return KS_ENOMEM;
    }
    ns = ne = nsh = nc = 0;
    for (size_t j = 0; j < np.nglobal + np.nown; j++) {
        const struct dra_pool *p =
            &a->pools[j < np.nglobal ? np.global[j] : np.own[j - np.nglobal]];
        for (size_t k = 0; k < p->slices.n; k++)
            ni->order[ns++] = p->slices.v[k];
        for (size_t k = 0; k < p->excl.n; k++)
            ni->excl[ne++] = a->state.devices[p->excl.v[k]];
        for (size_t k = 0; k < p->shared.n; k++)
            ni->shared[nsh++] = a->state.shared[p->shared.v[k]];
        for (size_t k = 0; k < p->capacity.n; k++)
            ni->capacity[nc++] = a->state.capacity[p->capacity.v[k]];
    }
    qsort(ni->order, ns, sizeof(size_t), cmp_size); /* the input's order, as upstream's */
    for (size_t i = 0; i < ns; i++)
        ni->slices[i] = ks__dra_slice(a->slices[ni->order[i]]);
    ni->nslices = ns;
    ni->state = (ks_dra_allocated_state){ne, ni->excl, nsh, ni->shared, nc, ni->capacity};
    return 0;
}

static int ref_is(const ks_dra_device_ref *r, const ks_resource_slice *sl, const ks_dra_device *d)
{
    return strcmp(r->device, d->name) == 0 && strcmp(r->pool, sl->pool_name) == 0 &&
           strcmp(r->driver, sl->driver) == 0;
}

int ks__dra_class_device_counts(const struct ks_dra_allocator *a, const ks_node *node,
                                const char *class_name, int64_t *capacity, int64_t *allocated)
{
    *capacity = *allocated = 0;
    const ks_device_class *cls = NULL;
    for (size_t i = 0; i < a->nclasses && !cls; i++)
        if (strcmp(a->classes[i]->key, class_name) == 0)
            cls = ks__dra_class(a->classes[i]);
    if (!cls || !node)
        return 0;
    node_input ni;
    if (node_input_build(a, node->name, &ni) != 0)
        return KS_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < ni.nslices && rc == 0; i++) {
        const ks_resource_slice *sl = ni.slices[i];
        /* calculateDRAResourceTotals: the slice's node selection, or each device's */
        if (!sl->per_device_node_selection && !ks_dra_node_matches(node, &sl->node))
            continue;
        for (uint32_t k = 0; k < sl->ndevices; k++) {
            const ks_dra_device *d = &sl->devices[k];
            if (sl->per_device_node_selection && !ks_dra_node_matches(node, &d->node))
                continue;
            int m = ks_dra_device_matches_class(a->in.cel, sl, d, cls);
            if (m < 0) { /* upstream logs the error and counts nothing for the node */
                *capacity = *allocated = 0;
                rc = KS_EINVAL;
                break;
            }
            if (!m)
                continue;
            (*capacity)++;
            int taken = 0;
            for (size_t e = 0; e < ni.state.ndevices && !taken; e++)
                taken = ref_is(&ni.state.devices[e], sl, d);
            for (size_t e = 0; e < ni.state.nshared && !taken; e++)
                taken = ref_is(&ni.state.shared[e], sl, d);
            *allocated += taken;
        }
    }
    node_input_free(&ni);
    return rc;
}

struct ks_dra_allocator *ks__dra_allocator_new(ks_dra_manager *m, ks_store *st, char *err,
                                               size_t errlen)
{
    if (!m || !st) {
        snprintf(err, errlen, "dynamic resource allocation is not available in this scheduler");
        return NULL;
    }
    struct ks_dra_allocator *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&a->refs, 1);
    a->nslices = ks__store_draobjs(st, KS_DK_RESOURCE_SLICE, NULL, NULL, &a->slices);
    a->nclasses = ks__store_draobjs(st, KS_DK_DEVICE_CLASS, NULL, NULL, &a->classes);
    a->nrules = ks__store_draobjs(st, KS_DK_DEVICE_TAINT_RULE, NULL, NULL, &a->rules);
    if (gather_state(m, st, a) != 0 || index_pools(a) != 0) {
        ks__dra_allocator_free(a);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->in.features = ks_dra_features_default();
    a->in.slices = (const ks_resource_slice *const *)a->slices;
    a->in.nslices = a->nslices;
    a->in.classes = (const ks_device_class *const *)a->classes;
    a->in.nclasses = a->nclasses;
    a->in.taint_rules = (const ks_device_taint_rule *const *)a->rules;
    a->in.ntaint_rules = a->nrules;
    a->in.allocated = &a->state;
    a->in.cel = m->cel;
    return a;
}

static void unref_all(ks__draobj **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ks__draobj_unref(v[i]);
    free(v);
}

void ks__dra_allocator_free(struct ks_dra_allocator *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    unref_all(a->slices, a->nslices);
    unref_all(a->classes, a->nclasses);
    unref_all(a->rules, a->nrules);
    unref_all(a->claims, a->nclaims);
    free(a->devices);
    free(a->shared);
    free(a->capacity);
    pools_free(a);
    ks__mempool_free(&a->pool);
    free(a);
}

int ks__dra_allocate(struct ks_dra_allocator *a, const ks_node *node,
                     const ks_resource_claim *const *claims, size_t n, int64_t deadline_ns,
                     struct ks_dra_allocation **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = 0;
    struct ks_dra_allocation *r = calloc(1, sizeof(*r));
    if (!r)
        return KS_ENOMEM;
    ks_dra_alloc_input in = a->in;
    node_input ni;
    if (node_input_build(a, node ? node->name : KS_SYM_ABSENT, &ni) != 0) {
        free(r);
        return KS_ENOMEM;
    }
    in.node = node;
    in.deadline_ns = deadline_ns;
    in.slices = ni.slices;
    in.nslices = ni.nslices;
    in.allocated = &ni.state;
    int arc = ks_dra_allocate(&in, claims, n, &r->out);
    node_input_free(&ni);
    if (arc != 0) {
        free(r);
        return KS_ENOMEM;
    }
    int outcome;
    switch (r->out.status) {
    case KS_DRA_ALLOCATED:
        outcome = KS_DRA_OUT_ALLOCATED;
        break;
    case KS_DRA_UNSUITABLE:
        outcome = KS_DRA_OUT_UNSUITABLE;
        break;
    case KS_DRA_NODE_ERROR:
        outcome = KS_DRA_OUT_NODE_ERROR;
        break;
    default:
        outcome =
            strstr(r->out.err, "context deadline exceeded") ? KS_DRA_OUT_TIMEOUT : KS_DRA_OUT_ERROR;
        break;
    }
    if (outcome != KS_DRA_OUT_ALLOCATED) {
        if (err && errlen)
            snprintf(err, errlen, "%s", r->out.err);
        ks_dra_alloc_output_free(&r->out);
        free(r);
        return outcome;
    }
    r->nclaims = r->out.nresults;
    r->ndev = ks__mempool_alloc(&r->out.pool, (r->nclaims + 1) * sizeof(size_t));
    r->devs = ks__mempool_alloc(&r->out.pool, (r->nclaims + 1) * sizeof(*r->devs));
    if (!r->ndev || !r->devs) {
        ks_dra_alloc_output_free(&r->out);
        free(r);
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < r->nclaims; i++) {
        const ks_dra_alloc_result *res = &r->out.results[i];
        r->ndev[i] = res->ndevices;
        r->devs[i] = ks__mempool_alloc(&r->out.pool, (res->ndevices + 1) * sizeof(**r->devs));
        if (!r->devs[i]) {
            ks_dra_alloc_output_free(&r->out);
            free(r);
            return KS_ENOMEM;
        }
        for (uint32_t k = 0; k < res->ndevices; k++)
            r->devs[i][k] = (ks_dra_device_result){res->devices[k].request, res->devices[k].driver,
                                                   res->devices[k].pool, res->devices[k].device};
    }
    atomic_fetch_add(&a->refs, 1);
    r->owner = a;
    *out = r;
    return KS_DRA_OUT_ALLOCATED;
}

void ks__dra_allocation_free(struct ks_dra_allocation *a)
{
    if (!a)
        return;
    ks_dra_alloc_output_free(&a->out);
    ks__dra_allocator_free(a->owner);
    free(a);
}

/* ---- claim writes (the in-memory cluster) ------------------------------------------------------
 */

static const char *op_name(ks_selector_op op)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    return (unsigned)op < 6 ? names[op] : "In";
}

static cJSON *reqs_json(const ks_selector_req *r, uint32_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; arr && i < n; i++) {
        cJSON *e = cJSON_CreateObject(), *vals;
        cJSON_AddStringToObject(e, "key", ks__sym_str(r[i].key));
        cJSON_AddStringToObject(e, "operator", op_name(r[i].op));
        if (r[i].nvalues) {
            vals = cJSON_AddArrayToObject(e, "values");
            for (uint32_t k = 0; k < r[i].nvalues; k++)
                cJSON_AddItemToArray(vals, cJSON_CreateString(ks__sym_str(r[i].values[k])));
        }
        cJSON_AddItemToArray(arr, e);
    }
    return arr;
}

/* AllocationResult as the API writes it. */
cJSON *ks__dra_allocation_json(const ks_dra_alloc_result *r)
{
    cJSON *alloc = cJSON_CreateObject();
    cJSON *devs = cJSON_AddObjectToObject(alloc, "devices");
    cJSON *results = cJSON_AddArrayToObject(devs, "results");
    for (uint32_t i = 0; i < r->ndevices; i++) {
        const ks_dra_alloc_device *d = &r->devices[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "request", d->request);
        cJSON_AddStringToObject(e, "driver", d->driver);
        cJSON_AddStringToObject(e, "pool", d->pool);
        cJSON_AddStringToObject(e, "device", d->device);
        if (d->admin_access)
            cJSON_AddBoolToObject(e, "adminAccess", 1);
        if (d->share_id)
            cJSON_AddStringToObject(e, "shareID", d->share_id);
        if (d->nconsumed) {
            cJSON *cc = cJSON_AddObjectToObject(e, "consumedCapacity");
            for (uint32_t k = 0; k < d->nconsumed; k++)
                cJSON_AddStringToObject(cc, d->consumed[k].name, d->consumed[k].text);
        }
        if (d->nbinding_conditions) {
            cJSON *bc = cJSON_AddArrayToObject(e, "bindingConditions");
            for (uint32_t k = 0; k < d->nbinding_conditions; k++)
                cJSON_AddItemToArray(bc, cJSON_CreateString(d->binding_conditions[k]));
            bc = cJSON_AddArrayToObject(e, "bindingFailureConditions");
            for (uint32_t k = 0; k < d->nbinding_failure_conditions; k++)
                cJSON_AddItemToArray(bc, cJSON_CreateString(d->binding_failure_conditions[k]));
        }
        cJSON_AddItemToArray(results, e);
    }
    if (r->nconfig) {
        cJSON *cfg = cJSON_AddArrayToObject(devs, "config");
        for (uint32_t i = 0; i < r->nconfig; i++) {
            const ks_dra_alloc_config *c = &r->config[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "source", c->from_class ? "FromClass" : "FromClaim");
            if (c->nrequests) {
                cJSON *rq = cJSON_AddArrayToObject(e, "requests");
                for (uint32_t k = 0; k < c->nrequests; k++)
                    cJSON_AddItemToArray(rq, cJSON_CreateString(c->requests[k]));
            }
            cJSON *op = cJSON_AddObjectToObject(e, "opaque");
            cJSON_AddStringToObject(op, "driver", c->driver ? c->driver : "");
            cJSON *params = c->parameters && *c->parameters ? cJSON_Parse(c->parameters) : NULL;
            cJSON_AddItemToObject(op, "parameters", params ? params : cJSON_CreateObject());
            cJSON_AddItemToArray(cfg, e);
        }
    }
    if (r->node_selector) {
        cJSON *ns = cJSON_AddObjectToObject(alloc, "nodeSelector");
        cJSON *terms = cJSON_AddArrayToObject(ns, "nodeSelectorTerms");
        cJSON *t = cJSON_CreateObject();
        if (r->node_selector->nexprs)
            cJSON_AddItemToObject(t, "matchExpressions",
                                  reqs_json(r->node_selector->exprs, r->node_selector->nexprs));
        if (r->node_selector->nfields)
            cJSON_AddItemToObject(t, "matchFields",
                                  reqs_json(r->node_selector->fields, r->node_selector->nfields));
        cJSON_AddItemToArray(terms, t);
    }
    return alloc;
}

static ks_code replace_claim(ks_store *st, cJSON *obj, ks_dra_change *chg, ks_status *stt)
{
    char err[512];
    int rc = ks__store_apply_dra(st, obj, 0, 0, chg, err, sizeof(err));
    cJSON_Delete(obj);
    if (rc != 0) {
        ks__status_add(stt, rc == KS_ENOMEM ? "out of memory" : err);
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

static cJSON *object_of(const ks_resource_claim *claim, cJSON **status)
{
    cJSON *obj = cJSON_Parse(claim->h.json);
    if (!obj)
        return NULL;
    *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    if (!cJSON_IsObject(*status)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        *status = cJSON_AddObjectToObject(obj, "status");
    }
    return obj;
}

/* Claim writes are read-modify-write on the store's current object: one at a time (binding
 * threads of pods that share a claim), as the API server's resourceVersion check serializes
 * upstream's Updates. */
static pthread_mutex_t write_mu = PTHREAD_MUTEX_INITIALIZER;

/* The store's claim now (a reference), or NULL with the reason in stt. */
static const ks_resource_claim *current_claim(ks_store *st, const ks_resource_claim *claim,
                                              ks_status *stt)
{
    const ks_resource_claim *cur =
        ks__dra_claim(ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, claim->h.key));
    char msg[700];
    if (!cur || cur->deletion_requested) {
        snprintf(msg, sizeof(msg), "claim %s got deleted in the meantime", claim->h.key);
        ks__status_add(stt, msg);
        ks__draobj_unref(cur ? (ks__draobj *)&cur->h : NULL);
        return NULL;
    }
    return cur;
}

static ks_code claim_bind(ks_store *st, const ks_pod *pod, const ks_resource_claim *claim,
                          const struct ks_dra_allocation *a, size_t i, ks_dra_change *chg,
                          ks_status *stt)
{
    cJSON *status, *obj = object_of(claim, &status);
    if (!obj || !status) {
        cJSON_Delete(obj);
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    /* upstream bindClaim: the allocation (from Reserve), the finalizer with it, then the pod in
     * reservedFor. */
    if (a && i < a->nclaims) {
        if (claim->allocated) {
            char msg[512];
            snprintf(msg, sizeof(msg), "claim %s got allocated elsewhere in the meantime",
                     claim->h.key);
            cJSON_Delete(obj);
            ks__status_add(stt, msg);
            return KS_ERROR;
        }
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        cJSON *fin = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
        if (!cJSON_IsArray(fin))
            fin = cJSON_AddArrayToObject(meta, "finalizers");
        int has = 0;
        const cJSON *f;
        cJSON_ArrayForEach(f, fin) has |=
            cJSON_IsString(f) &&
            !strcmp(f->valuestring, "resource.kubernetes.io/delete-protection");
        if (!has)
            cJSON_AddItemToArray(fin,
                                 cJSON_CreateString("resource.kubernetes.io/delete-protection"));
        cJSON_DeleteItemFromObjectCaseSensitive(status, "allocation");
        cJSON_AddItemToObject(status, "allocation", ks__dra_allocation_json(&a->out.results[i]));
    } else if (!claim->allocated) {
        cJSON_Delete(obj);
        ks__status_add(stt, "claim is not allocated");
        return KS_ERROR;
    }
    cJSON *rf = cJSON_GetObjectItemCaseSensitive(status, "reservedFor");
    if (!cJSON_IsArray(rf))
        rf = cJSON_AddArrayToObject(status, "reservedFor");
    if (ks__dra_claim_reserved_for(claim, pod->uid)) {
        cJSON_Delete(obj); /* reserved already (a shared claim another attempt wrote) */
        return KS_SUCCESS;
    }
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "resource", "pods");
    cJSON_AddStringToObject(ref, "name", ks__sym_str(pod->name));
    cJSON_AddStringToObject(ref, "uid", pod->uid);
    cJSON_AddItemToArray(rf, ref);
    return replace_claim(st, obj, chg, stt);
}

ks_code ks__dra_claim_bind(ks_store *st, const ks_pod *pod, const ks_resource_claim *claim,
                           const struct ks_dra_allocation *a, size_t i, ks_dra_change *chg,
                           ks_status *stt)
{
    pthread_mutex_lock(&write_mu);
    const ks_resource_claim *cur = current_claim(st, claim, stt);
    ks_code code = cur ? claim_bind(st, pod, cur, a, i, chg, stt) : KS_ERROR;
    ks__draobj_unref(cur ? (ks__draobj *)&cur->h : NULL);
    pthread_mutex_unlock(&write_mu);
    return code;
}

static ks_code claim_deallocate(ks_store *st, const ks_resource_claim *claim, ks_dra_change *chg,
                                ks_status *stt)
{
    cJSON *status, *obj = object_of(claim, &status);
    if (!obj || !status) {
        cJSON_Delete(obj);
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(status, "reservedFor");
    cJSON_DeleteItemFromObjectCaseSensitive(status, "allocation");
    cJSON_DeleteItemFromObjectCaseSensitive(status, "devices");
    return replace_claim(st, obj, chg, stt);
}

ks_code ks__dra_claim_deallocate(ks_store *st, const ks_resource_claim *claim, ks_dra_change *chg,
                                 ks_status *stt)
{
    pthread_mutex_lock(&write_mu);
    const ks_resource_claim *cur = current_claim(st, claim, stt);
    ks_code code = cur ? claim_deallocate(st, cur, chg, stt) : KS_ERROR;
    ks__draobj_unref(cur ? (ks__draobj *)&cur->h : NULL);
    pthread_mutex_unlock(&write_mu);
    return code;
}

ks_code ks__dra_claim_unreserve(ks_store *st, const ks_pod *pod, const ks_resource_claim *claim,
                                ks_dra_change *chg, ks_status *stt)
{
    pthread_mutex_lock(&write_mu);
    const ks_resource_claim *cur = current_claim(st, claim, stt);
    ks_code code = cur ? KS_SKIP : KS_ERROR;
    if (cur && ks__dra_claim_reserved_for(cur, pod->uid)) {
        cJSON *status = NULL, *obj = object_of(cur, &status);
        cJSON *rf = cJSON_GetObjectItemCaseSensitive(status, "reservedFor");
        for (int i = cJSON_GetArraySize(rf) - 1; i >= 0; i--) {
            const char *uid =
                cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rf, i), "uid"));
            if (uid && strcmp(uid, pod->uid) == 0)
                cJSON_DeleteItemFromArray(rf, i);
        }
        if (obj)
            code = replace_claim(st, obj, chg, stt);
        else {
            ks__status_add(stt, "out of memory");
            code = KS_ERROR;
        }
    }
    ks__draobj_unref(cur ? (ks__draobj *)&cur->h : NULL);
    pthread_mutex_unlock(&write_mu);
    return code;
}
