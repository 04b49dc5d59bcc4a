/*
 * The structured DRA allocator (dra_allocator.h): a port of k8s.io/dynamic-resource-allocation
 * v0.37.2 structured/internal/incubating (allocator_incubating.go, pools_incubating.go,
 * constraint.go, consumable_capacity.go). Function names follow upstream's so the two read side by
 * side; comments say where the C differs and why.
 *
 * Memory: everything one call needs lives in an arena freed at its end; running out of memory
 * there unwinds with longjmp to ks_dra_allocate, which returns KS_ENOMEM.
 */
#include "sched/dra_allocator.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/intern.h"
#include "cel/cel.h"

/* resourceapi.AllocationResultsMaxSize */
#define MAX_RESULTS 32

/* Quantities in milli-units, exact: see qget. */
typedef __int128 qv;
#define QV_MAX ((qv)(((unsigned __int128)1 << 127) - 1))

ks_dra_features ks_dra_features_default(void)
{
    ks_dra_features f = {.admin_access = true,
                         .prioritized_list = true,
                         .partitionable_devices = true,
                         .device_taints = true,
                         .device_binding_and_status = true,
                         .consumable_capacity = true,
                         .fractional_capacity_range = false};
    return f;
}

/* ---- CEL cache ------------------------------------------------------------------------------ */

typedef struct cel_entry {
    char *expr;
    uint64_t id;          /* unique in the process: the key of the slices' selector memos */
    ks_cel_program *prog; /* NULL: err holds the compile error */
    char err[1024];
    struct cel_entry *next;
} cel_entry;

#define CEL_BUCKETS 256

struct ks_dra_cel_cache {
    pthread_mutex_t mu;
    cel_entry *buckets[CEL_BUCKETS];
};

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

ks_dra_cel_cache *ks_dra_cel_cache_new(void)
{
    ks_dra_cel_cache *c = calloc(1, sizeof(*c));
    if (c)
        pthread_mutex_init(&c->mu, NULL);
    return c;
}

void ks_dra_cel_cache_free(ks_dra_cel_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < CEL_BUCKETS; i++)
        for (cel_entry *e = c->buckets[i], *n; e; e = n) {
            n = e->next;
            ks_cel_program_free(e->prog);
            free(e->expr);
            free(e);
        }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* The compiler's error as apiserver/pkg/cel's Error() renders it: "compilation failed: " and
 * cel-go's issue text, whose ToDisplayString adds the source line and a caret under the column
 * ('.' per character before it, full-width dot and caret for multi-byte characters). */
static void compile_error_text(char *out, size_t n, const char *expr, const ks_cel_error *err)
{
    size_t l = (size_t)snprintf(out, n, "compilation failed: %s", err->msg);
    if (err->line < 1 || l >= n)
        return;
    const char *line = expr;
    for (int i = 1; i < err->line && line; i++) {
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    if (!line)
        return;
    size_t len = strcspn(line, "\n");
    char snippet[sizeof((ks_cel_error *)0)->msg];
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < sizeof snippet; i++)
        snippet[k++] = line[i] == '\t' ? ' ' : line[i];
    snippet[k] = 0;
    l += (size_t)snprintf(out + l, l < n ? n - l : 0, "\n | %s\n | ", snippet);
    const unsigned char *p = (const unsigned char *)snippet;
    for (int c = 0; c < err->column && *p && l < n; c++) { /* column: 0-based, as cel-go's */
        size_t sz = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
        l += (size_t)snprintf(out + l, n - l, "%s", sz > 1 ? "\uff0e" : ".");
        for (size_t j = 0; j < sz && *p; j++)
            p++;
    }
    if (l < n)
        snprintf(out + l, n - l, "%s", *p >= 0x80 ? "\uff3e" : "^");
}

/* cel.Cache.GetOrCompile: entries are never removed while the cache lives, so the returned
 * entry stays valid without the lock. NULL only when out of memory. */
static const cel_entry *cel_get(ks_dra_cel_cache *c, const char *expr)
{
    uint64_t h = fnv(expr, strlen(expr)) % CEL_BUCKETS;
    pthread_mutex_lock(&c->mu);
    for (cel_entry *e = c->buckets[h]; e; e = e->next)
        if (!strcmp(e->expr, expr)) {
            pthread_mutex_unlock(&c->mu);
            return e;
        }
    cel_entry *e = calloc(1, sizeof(*e));
    if (!e || !(e->expr = strdup(expr))) {
        free(e);
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    static atomic_uint_fast64_t next_id = 1;
    e->id = atomic_fetch_add(&next_id, 1);
    ks_cel_error err = {0};
    e->prog = ks_cel_compile(expr, &ks_cel_dra_env, &err);
    if (!e->prog)
        compile_error_text(e->err, sizeof e->err, expr, &err);
    e->next = c->buckets[h];
    c->buckets[h] = e;
    pthread_mutex_unlock(&c->mu);
    return e;
}

/* ---- small maps ----------------------------------------------------------------------------- */

/* Open addressing, keys are strings (device IDs) or pointers; values are pointers. */
typedef struct hent {
    const void *key; /* NULL: empty */
    size_t klen;     /* 0 for pointer keys */
    uint64_t hash;
    void *val;
} hent;

typedef struct hmap {
    hent *e;
    size_t cap, n;
} hmap;

typedef struct actx actx;
static void *amalloc(actx *a, size_t n);

static hent *hmap_slot(hmap *m, const void *key, size_t klen, uint64_t h)
{
    size_t i = h & (m->cap - 1);
    for (;;) {
        hent *e = &m->e[i];
        if (!e->key)
            return e;
        if (e->hash == h && e->klen == klen && (klen ? !memcmp(e->key, key, klen) : e->key == key))
            return e;
        i = (i + 1) & (m->cap - 1);
    }
}

static void *hmap_get(const hmap *m, const void *key, size_t klen)
{
    if (!m->cap)
        return NULL;
    uint64_t h = klen ? fnv(key, klen) : fnv(&key, sizeof key);
    hent *e = hmap_slot((hmap *)m, key, klen, h);
    return e->key ? e->val : NULL;
}

static void hmap_put(actx *a, hmap *m, const void *key, size_t klen, void *val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 16;
        hent *old = m->e;
        size_t ocap = m->cap;
        m->e = amalloc(a, ncap * sizeof(hent));
        m->cap = ncap;
        m->n = 0;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].key) {
                hent *e = hmap_slot(m, old[i].key, old[i].klen, old[i].hash);
                *e = old[i];
                m->n++;
            }
    }
    uint64_t h = klen ? fnv(key, klen) : fnv(&key, sizeof key);
    hent *e = hmap_slot(m, key, klen, h);
    if (!e->key) {
        e->key = key;
        e->klen = klen;
        e->hash = h;
        m->n++;
    }
    e->val = val;
}

/* ---- allocation state ----------------------------------------------------------------------- */

typedef struct pool pool;

/* PoolID plus what GatherPools learned about it. */
struct pool {
    const char *driver, *name;
    bool incomplete, invalid;
    const ks_resource_slice **slices; /* DeviceSlicesTargetingNode, sorted by name */
    size_t nslices;
    const ks_resource_slice **other; /* DeviceSlicesNotTargetingNode */
    size_t nother;
    const ks_dra_counter_set **csets; /* CounterSets */
    size_t ncsets;
    qv **avail;    /* availableCounters (computed on first use), [cset][counter] */
    qv **consumed; /* consumedCounters of the devices being allocated */
};

/* deviceWithID */
typedef struct cand {
    const ks_dra_device *dev;
    const ks_resource_slice *slice;
    pool *pool;
    const char *key; /* the DeviceID as a map key: driver \1 pool \1 device */
    size_t klen;
} cand;

typedef struct reqdata {
    const ks_dra_exact_request *req;
    const ks_dra_request *parent; /* NULL unless a subrequest */
    const ks_device_class *class;
    int64_t num_devices;
    int selected_sub;
    cand *all; /* "All" mode: the devices picked up front */
    size_t nall;
    hmap matches; /* deviceMatchesRequest: device -> (void *)1 no, (void *)2 yes */
} reqdata;

typedef struct constraint {
    bool distinct;
    uint32_t nrequests;
    const char *const *requests;
    const char *attr;
    const ks_dra_attribute *first; /* match: the first device's attribute */
    int num;
    const ks_dra_attribute **stack; /* distinct: the attributes in the set */
} constraint;

typedef struct devres {
    const char *request, *parent; /* parent "" unless a subrequest */
    cand c;
    const char *share_id;
    bool admin;
    qv *consumed; /* parallel to c.dev->capacity; NULL when none */
} devres;

typedef struct claimdata {
    const ks_resource_claim *claim;
    const char *kobj;
    reqdata **reqs; /* per request: one entry, or one per subrequest */
    uint32_t *nsub;
    constraint *cons;
    uint32_t ncons;
    devres res[MAX_RESULTS];
    int nres;
} claimdata;

/* A device's consumed capacity in the allocated state, summed over the entries that name it
 * (ConsumedCapacityCollection.Insert adds). */
struct aggcap {
    size_t n;
    const char **names;
    qv *vals;
};

/* The devices of the allocated state and of the current attempt, by DeviceID. */
typedef struct devstate {
    bool allocated, shared;
    const struct aggcap *aggregated; /* AggregatedCapacity[device], NULL when absent */
    int *claims;                     /* allocatingDevices: per claim index, how often (0/1) */
    int nclaims_using;
    bool cap_present; /* allocatingCapacity has an entry */
    qv *cap;          /* its amounts, parallel to the device's capacity */
} devstate;

struct actx {
    const ks_dra_alloc_input *in;
    ks_dra_features f;
    jmp_buf oom;
    ks_mempool arena;
    ks_dra_alloc_output *out;
    claimdata *claims;
    size_t nclaims;
    pool **pools;
    size_t npools;
    hmap devs;       /* device key -> devstate */
    hmap celdevs;    /* ks_dra_device * -> ks_cel_value * */
    hmap celents;    /* a selector's expression (its pointer) -> cel_entry *: the shared
                        cache's lock taken once per selector and call, not per device */
    hmap quantities; /* ks_dra_quantity * -> qinfo * */
    hmap devkeys;    /* ks_dra_device * -> its DeviceID key */
    uint64_t steps;
};

static void *amalloc(actx *a, size_t n)
{
    void *p = ks__mempool_alloc(&a->arena, n ? n : 1);
    if (!p)
        longjmp(a->oom, 1);
    return p;
}

static char *astrdup(actx *a, ks_mempool *mp, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ks__mempool_alloc(mp, n);
    if (!p)
        longjmp(a->oom, 1);
    memcpy(p, s, n);
    return p;
}

static void *oalloc(actx *a, size_t n)
{
    void *p = ks__mempool_alloc(&a->out->pool, n ? n : 1);
    if (!p)
        longjmp(a->oom, 1);
    return p;
}

/* The first error wins; returns -1 for `return fail(...)`. */
static int fail(actx *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->out->err, sizeof a->out->err, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *symstr(ks_sym s)
{
    const char *p = ks__sym_str(s);
    return p ? p : "";
}

static const char *slice_name(const ks_resource_slice *s) { return symstr(s->h.name); }

/* The DeviceID key: driver \1 pool \1 device (pool names may contain '/'). */
static const char *devkey(actx *a, const char *driver, const char *poolname, const char *device,
                          size_t *klen)
{
    size_t n1 = strlen(driver), n2 = strlen(poolname), n3 = strlen(device);
    char *k = amalloc(a, n1 + n2 + n3 + 3);
    memcpy(k, driver, n1);
    k[n1] = 1;
    memcpy(k + n1 + 1, poolname, n2);
    k[n1 + 1 + n2] = 1;
    memcpy(k + n1 + n2 + 2, device, n3);
    *klen = n1 + n2 + n3 + 2;
    return k;
}

static devstate *dev_state(actx *a, const char *key, size_t klen, bool create)
{
    devstate *d = hmap_get(&a->devs, key, klen);
    if (!d && create) {
        d = amalloc(a, sizeof(*d));
        d->claims = amalloc(a, sizeof(int) * (a->nclaims ? a->nclaims : 1));
        hmap_put(a, &a->devs, key, klen, d);
    }
    return d;
}

static void cand_init(actx *a, cand *c, const ks_resource_slice *s, const ks_dra_device *d, pool *p)
{
    c->dev = d;
    c->slice = s;
    c->pool = p;
    /* The key is built once per device and call: the search visits devices many times. */
    struct dkey {
        const char *k;
        size_t n;
    } *dk = hmap_get(&a->devkeys, d, 0);
    if (!dk) {
        dk = amalloc(a, sizeof(*dk));
        dk->k = devkey(a, s->driver, s->pool_name, d->name, &dk->n);
        hmap_put(a, &a->devkeys, d, 0, dk);
    }
    c->key = dk->k;
    c->klen = dk->n;
}

/* ---- node selection (pools_incubating.go NodeMatches) ------------------------------------- */

static int parse_i64(const char *s, int64_t *out)
{
    const char *p = s;
    char *end;
    if (!s || !*s)
        return -1;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = x;
    return 0;
}

/* component-helpers nodeaffinity: one requirement against a label value (ABSENT: missing). */
static bool req_matches(const ks_selector_req *r, ks_sym v)
{
    switch (r->op) {
    case KS_OP_IN:
        for (uint32_t i = 0; v != KS_SYM_ABSENT && i < r->nvalues; i++)
            if (r->values[i] == v)
                return true;
        return false;
    case KS_OP_NOT_IN:
        for (uint32_t i = 0; v != KS_SYM_ABSENT && i < r->nvalues; i++)
            if (r->values[i] == v)
                return false;
        return true;
    case KS_OP_EXISTS:
        return v != KS_SYM_ABSENT;
    case KS_OP_DOES_NOT_EXIST:
        return v == KS_SYM_ABSENT;
    case KS_OP_GT:
    case KS_OP_LT: {
        int64_t have, want;
        if (v == KS_SYM_ABSENT || r->nvalues != 1 || parse_i64(ks__sym_str(v), &have) ||
            parse_i64(ks__sym_str(r->values[0]), &want))
            return false;
        return r->op == KS_OP_GT ? have > want : have < want;
    }
    }
    return false;
}

static bool term_matches(const ks_node_selector_term *t, const ks_node *node)
{
    if (t->nexprs == 0 && t->nfields == 0)
        return false;
    for (uint32_t i = 0; i < t->nexprs; i++)
        if (!req_matches(&t->exprs[i],
                         ks__labels_get(node->labels, node->nlabels, t->exprs[i].key)))
            return false;
    for (uint32_t i = 0; i < t->nfields; i++) {
        const ks_selector_req *r = &t->fields[i];
        if (strcmp(symstr(r->key), "metadata.name") || (r->op != KS_OP_IN && r->op != KS_OP_NOT_IN))
            return false;
        if (!req_matches(r, node->name))
            return false;
    }
    return true;
}

bool ks_dra_node_matches(const ks_node *node, const ks_dra_node_selection *sel)
{
    if (sel->has_node_name && sel->node_name != KS_SYM_EMPTY)
        return node && node->name == sel->node_name;
    if (sel->all_nodes)
        return true;
    if (sel->has_node_selector) {
        for (uint32_t i = 0; node && i < sel->nterms; i++)
            if (term_matches(&sel->terms[i], node))
                return true;
        return false;
    }
    return false;
}

/* ---- GatherPools ---------------------------------------------------------------------------- */

typedef struct slist {
    const ks_resource_slice **s;
    size_t n, cap;
} slist;

static void slist_add(actx *a, slist *l, const ks_resource_slice *s)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 4;
        const ks_resource_slice **ns = amalloc(a, ncap * sizeof(*ns));
        if (l->n)
            memcpy(ns, l->s, l->n * sizeof(*ns));
        l->s = ns;
        l->cap = ncap;
    }
    l->s[l->n++] = s;
}

typedef struct gpool {
    const char *driver, *name;
    slist slices;
} gpool;

static int cmp_slice_name(const void *x, const void *y)
{
    return strcmp(slice_name(*(const ks_resource_slice *const *)x),
                  slice_name(*(const ks_resource_slice *const *)y));
}

static int cmp_pool(const void *x, const void *y)
{
    const pool *p = *(pool *const *)x, *q = *(pool *const *)y;
    int c = strcmp(p->driver, q->driver);
    return c ? c : strcmp(p->name, q->name);
}

/* addSlice: the newest generation of a pool replaces older slices. */
static void add_slice(actx *a, gpool **gp, size_t *ngp, const ks_resource_slice *s)
{
    for (size_t i = 0; i < *ngp; i++) {
        gpool *g = &(*gp)[i];
        if (strcmp(g->driver, s->driver) || strcmp(g->name, s->pool_name))
            continue;
        int64_t gen = g->slices.s[0]->pool_generation;
        if (s->pool_generation < gen)
            return;
        if (s->pool_generation > gen)
            g->slices.n = 0;
        slist_add(a, &g->slices, s);
        return;
    }
    gpool *ng = amalloc(a, (*ngp + 1) * sizeof(*ng));
    if (*ngp)
        memcpy(ng, *gp, *ngp * sizeof(*ng));
    ng[*ngp].driver = s->driver;
    ng[*ngp].name = s->pool_name;
    slist_add(a, &ng[*ngp].slices, s);
    *gp = ng;
    (*ngp)++;
}

static bool has_shared_counters(const ks_resource_slice *s) { return s->nshared_counters > 0; }

/* sliceUsesCompatibilityGroups: such slices are ignored (this allocator cannot check them), which
 * leaves their pool incomplete. */
static bool uses_compatibility_groups(const ks_resource_slice *s)
{
    for (uint32_t i = 0; i < s->ndevices; i++)
        for (uint32_t j = 0; j < s->devices[i].nconsumes; j++)
            if (s->devices[i].consumes_counters[j].ncompatibility_groups)
                return true;
    return false;
}

/* validateDeviceNames */
static const char *duplicate_device(actx *a, const slist *l)
{
    hmap seen = {0};
    for (size_t i = 0; i < l->n; i++)
        for (uint32_t j = 0; j < l->s[i]->ndevices; j++) {
            const char *n = l->s[i]->devices[j].name;
            if (hmap_get(&seen, n, strlen(n)))
                return n;
            hmap_put(a, &seen, n, strlen(n), (void *)1);
        }
    return NULL;
}

static const ks_dra_counter_set *find_cset(const pool *p, const char *name, size_t *idx)
{
    for (size_t i = 0; i < p->ncsets; i++)
        if (!strcmp(p->csets[i]->name, name)) {
            if (idx)
                *idx = i;
            return p->csets[i];
        }
    return NULL;
}

static int find_counter(const ks_dra_counter_set *cs, const char *name)
{
    for (uint32_t i = 0; i < cs->ncounters; i++)
        if (!strcmp(cs->counters[i].name, name))
            return (int)i;
    return -1;
}

/* validateDeviceCounterConsumption */
static bool counters_valid(const pool *p, const ks_resource_slice *const *sl, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < sl[i]->ndevices; j++) {
            const ks_dra_device *d = &sl[i]->devices[j];
            for (uint32_t k = 0; k < d->nconsumes; k++) {
                const ks_dra_counter_set *cs = find_cset(p, d->consumes_counters[k].name, NULL);
                if (!cs)
                    return false;
                for (uint32_t m = 0; m < d->consumes_counters[k].ncounters; m++)
                    if (find_counter(cs, d->consumes_counters[k].counters[m].name) < 0)
                        return false;
            }
        }
    return true;
}

/* buildPool: all is the whole pool when some of its slices do not target the node, else NULL. */
static pool *build_pool(actx *a, gpool *g, const slist *all)
{
    pool *p = amalloc(a, sizeof(*p));
    p->driver = g->driver;
    p->name = g->name;
    qsort(g->slices.s, g->slices.n, sizeof(*g->slices.s), cmp_slice_name);
    slist dev = {0}, cset = {0}, other = {0};
    for (size_t i = 0; i < g->slices.n; i++) {
        if (a->f.partitionable_devices && has_shared_counters(g->slices.s[i]))
            slist_add(a, &cset, g->slices.s[i]);
        else
            slist_add(a, &dev, g->slices.s[i]);
    }
    if (all && g->slices.n < all->n) {
        for (size_t i = 0; i < all->n; i++) {
            bool seen = false;
            for (size_t j = 0; j < g->slices.n && !seen; j++)
                seen = !strcmp(slice_name(g->slices.s[j]), slice_name(all->s[i]));
            if (seen)
                continue;
            if (a->f.partitionable_devices && has_shared_counters(all->s[i]))
                slist_add(a, &cset, all->s[i]);
            else
                slist_add(a, &other, all->s[i]);
        }
    }
    if (duplicate_device(a, &dev)) {
        p->invalid = true;
        return p;
    }
    p->slices = dev.s;
    p->nslices = dev.n;
    if (!a->f.partitionable_devices)
        return p;
    /* getAndValidateCounterSets */
    for (size_t i = 0; i < cset.n; i++)
        for (uint32_t j = 0; j < cset.s[i]->nshared_counters; j++) {
            const ks_dra_counter_set *cs = &cset.s[i]->shared_counters[j];
            if (find_cset(p, cs->name, NULL)) {
                p->invalid = true;
                p->slices = NULL;
                p->nslices = 0;
                return p;
            }
            const ks_dra_counter_set **n = amalloc(a, (p->ncsets + 1) * sizeof(*n));
            if (p->ncsets)
                memcpy(n, p->csets, p->ncsets * sizeof(*n));
            n[p->ncsets++] = cs;
            p->csets = n;
        }
    if (!counters_valid(p, dev.s, dev.n) || !counters_valid(p, other.s, other.n)) {
        p->invalid = true;
        p->slices = NULL;
        p->nslices = 0;
        return p;
    }
    p->other = other.s;
    p->nother = other.n;
    return p;
}

static bool pool_has_binding_conditions(const pool *p)
{
    for (size_t i = 0; i < p->nslices; i++)
        for (uint32_t j = 0; j < p->slices[i]->ndevices; j++)
            if (p->slices[i]->devices[j].nbinding_conditions)
                return true;
    return false;
}

static bool slice_node_set(const ks_resource_slice *s)
{
    return (s->node.has_node_name && s->node.node_name != KS_SYM_EMPTY) || s->node.all_nodes ||
           s->node.has_node_selector;
}

static void gather_pools(actx *a)
{
    const ks_dra_alloc_input *in = a->in;
    gpool *gp = NULL;
    size_t ngp = 0;
    /* slicesOnNode[node.Name] then slicesShared, each in the input's order */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < in->nslices; i++) {
            const ks_resource_slice *s = in->slices[i];
            bool on_node = s->node.has_node_name && s->node.node_name != KS_SYM_EMPTY;
            if (pass == 0 && !(on_node && in->node && s->node.node_name == in->node->name))
                continue;
            if (pass == 1 && on_node)
                continue;
            if (!a->f.partitionable_devices &&
                (s->per_device_node_selection || s->nshared_counters > 0))
                continue;
            if (uses_compatibility_groups(s))
                continue;
            bool relevant = false;
            if (slice_node_set(s)) {
                relevant = ks_dra_node_matches(in->node, &s->node);
            } else if (s->per_device_node_selection) {
                for (uint32_t j = 0; j < s->ndevices && !relevant; j++)
                    relevant = ks_dra_node_matches(in->node, &s->devices[j].node);
            } else {
                continue;
            }
            if (relevant)
                add_slice(a, &gp, &ngp, s);
        }
    pool **res = amalloc(a, (ngp + 1) * sizeof(*res)), **bc = amalloc(a, (ngp + 1) * sizeof(*bc));
    size_t nres = 0, nbc = 0;
    for (size_t i = 0; i < ngp; i++) {
        gpool *g = &gp[i];
        int64_t want = g->slices.s[0]->pool_resource_slice_count;
        pool *p;
        if ((int64_t)g->slices.n == want) {
            p = build_pool(a, g, NULL);
        } else {
            /* checkSlicesInPool */
            int64_t gen = g->slices.s[0]->pool_generation;
            slist all = {0};
            bool obsolete = false;
            for (size_t j = 0; j < in->nslices && !obsolete; j++) {
                const ks_resource_slice *s = in->slices[j];
                if (strcmp(s->driver, g->driver) || strcmp(s->pool_name, g->name))
                    continue;
                if (s->pool_generation == gen) {
                    /* slicesWithoutCompatibilityGroups */
                    if (!uses_compatibility_groups(s))
                        slist_add(a, &all, s);
                } else if (s->pool_generation > gen)
                    obsolete = true;
            }
            if (obsolete)
                continue;
            if ((int64_t)all.n != want) {
                p = amalloc(a, sizeof(*p));
                p->driver = g->driver;
                p->name = g->name;
                p->incomplete = true;
                res[nres++] = p;
                continue;
            }
            p = build_pool(a, g, &all);
        }
        if (pool_has_binding_conditions(p))
            bc[nbc++] = p;
        else
            res[nres++] = p;
    }
    qsort(res, nres, sizeof(*res), cmp_pool);
    qsort(bc, nbc, sizeof(*bc), cmp_pool);
    for (size_t i = 0; i < nbc; i++)
        res[nres++] = bc[i];
    a->pools = res;
    a->npools = nres;
}

/* ---- quantities and consumable capacity (consumable_capacity.go) --------------------------- */

/* A quantity as exact milli-units in 128 bits (MilliValue() without int64's limits): counters such
 * as 1e19 are summed and compared exactly, as resource.Quantity does. exact: MilliValue() is
 * lossless and fits int64 (safeMilliValue). Parsed once per quantity and call. */
typedef struct qinfo {
    qv v;
    bool exact;
} qinfo;

static const qinfo *qget(actx *a, const ks_dra_quantity *q)
{
    qinfo *qi = hmap_get(&a->quantities, q, 0);
    if (qi)
        return qi;
    qi = amalloc(a, sizeof(*qi));
    qi->v = q->milli;
    qi->exact = q->milli != INT64_MAX && q->milli != INT64_MIN;
    ks_cel_value v;
    if (q->text && ks_cel_quantity_parse(&a->arena, q->text, strlen(q->text), &v) &&
        v.kind == KS_CEL_QUANTITY) {
        const ks_cel_quantity *x = v.q;
        int32_t e = x->exp + 3; /* the milli exponent */
        qv m = 0;
        bool inexact = false, big = false;
        size_t keep = x->ndigits;
        if (e < 0) {
            keep = (size_t)-e >= x->ndigits ? 0 : x->ndigits - (size_t)-e;
            for (size_t i = keep; i < x->ndigits; i++)
                if (x->digits[i] != '0')
                    inexact = true;
        }
        for (size_t i = 0; i < keep && !big; i++) {
            if (m > QV_MAX / 10 - 10)
                big = true;
            else
                m = m * 10 + (x->digits[i] - '0');
        }
        for (int32_t i = 0; i < e && !big; i++) {
            if (m > QV_MAX / 10)
                big = true;
            else
                m *= 10;
        }
        if (big)
            m = QV_MAX / 2;
        if (x->neg)
            m = -m;
        else if (inexact)
            m += 1; /* MilliValue rounds up */
        qi->v = m;
        qi->exact = !inexact && !big && m <= INT64_MAX && m >= INT64_MIN;
    }
    hmap_put(a, &a->quantities, q, 0, qi);
    return qi;
}

static qv qm(actx *a, const ks_dra_quantity *q) { return qget(a, q)->v; }

/* v (milli-units) as an exact quantity: whole units in decimal, else milli-units with "m". */
static const char *qv_text(actx *a, qv v)
{
    char digits[64];
    int n = 0;
    bool neg = v < 0, milli = v % 1000 != 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    if (!milli)
        u /= 1000;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    char *s = oalloc(a, (size_t)n + 3), *o = s;
    if (neg)
        *o++ = '-';
    while (n)
        *o++ = digits[--n];
    if (milli)
        *o++ = 'm';
    *o = 0;
    return s;
}

/* Value() of a milli amount: rounded up to units. */
static qv units(qv milli) { return milli >= 0 ? (milli + 999) / 1000 : milli / 1000; }

/* useMilli */
static bool use_milli(actx *a, const ks_dra_capacity *c, bool frac)
{
    if (!frac)
        return false;
    if (c->has_min && !qget(a, &c->min)->exact)
        return false;
    if (c->has_max && !qget(a, &c->max)->exact)
        return false;
    if (c->has_step && (!qget(a, &c->step)->exact || qm(a, &c->step) < 1))
        return false;
    return true;
}

#define NOT_REPRESENTABLE "capacity request cannot be represented in the device's range arithmetic"

/* roundUpRange; 0 and *out (milli) or -1 with the error in msg. int64 bounds as upstream. */
static int round_up_range(actx *a, const ks_dra_quantity *req, const ks_dra_capacity *c, bool frac,
                          qv *out, char *msg, size_t msglen)
{
    qv r = qm(a, req), min = qm(a, &c->min);
    if (r < min) {
        *out = min;
        return 0;
    }
    if (!c->has_step) {
        *out = r;
        return 0;
    }
    if (use_milli(a, c, frac)) {
        if (!qget(a, req)->exact) {
            snprintf(msg, msglen, "%s: request %s is not a representable milli value",
                     NOT_REPRESENTABLE, req->text);
            return -1;
        }
        int64_t step = (int64_t)qm(a, &c->step), mn = (int64_t)min, added = (int64_t)r - mn;
        int64_t n = added / step;
        if (added % step)
            n++;
        if (n > (INT64_MAX - mn) / step) {
            snprintf(msg, msglen,
                     "%s: rounding request %s up to the next step passes the milli-value range",
                     NOT_REPRESENTABLE, req->text);
            return -1;
        }
        *out = (qv)mn + (qv)step * n;
        return 0;
    }
    if (r > (qv)INT64_MAX * 1000) {
        snprintf(msg, msglen, "%s: request %s exceeds MaxInt64", NOT_REPRESENTABLE, req->text);
        return -1;
    }
    int64_t ri = (int64_t)units(r), step = (int64_t)units(qm(a, &c->step)),
            mn = (int64_t)units(min), added = ri - mn;
    if (step == 0) { /* a zero step: upstream divides by zero; keep the minimum */
        *out = (qv)mn * 1000;
        return 0;
    }
    int64_t n = added / step;
    if (added % step)
        n++;
    if (mn >= 0 && n > (INT64_MAX - mn) / step) {
        snprintf(msg, msglen, "%s: rounding request %s up to the next step passes MaxInt64",
                 NOT_REPRESENTABLE, req->text);
        return -1;
    }
    *out = ((qv)mn + (qv)step * n) * 1000;
    return 0;
}

/* calculateConsumedCapacity: req NULL when the request names no amount for this capacity. */
static int consumed_capacity(actx *a, const ks_dra_quantity *req, const ks_dra_capacity *c,
                             bool frac, qv *out, char *msg, size_t msglen)
{
    if (!req) { /* fillEmptyRequest */
        *out = c->has_policy && c->has_default ? qm(a, &c->dflt) : qm(a, &c->value);
        return 0;
    }
    if (!c->has_policy) {
        *out = qm(a, req);
        return 0;
    }
    if (c->has_range && c->has_min)
        return round_up_range(a, req, c, frac, out, msg, msglen);
    for (uint32_t i = 0; i < c->nvalid_values; i++) /* roundUpValidValues */
        if (qm(a, req) <= qm(a, &c->valid_values[i])) {
            *out = qm(a, &c->valid_values[i]);
            return 0;
        }
    *out = qm(a, req);
    return 0;
}

/* violatesPolicy (upstream compares the default with Go's ==; here by value) */
static bool violates_policy(actx *a, qv v, const ks_dra_capacity *c, bool frac)
{
    if (!c->has_policy)
        return false;
    if (c->has_default && v == qm(a, &c->dflt))
        return false;
    if (c->has_range) {
        if (c->has_max && v > qm(a, &c->max))
            return true;
        if (c->has_step) {
            qv req, step, min;
            if (use_milli(a, c, frac)) {
                if (v > INT64_MAX || v < INT64_MIN)
                    return true;
                req = v;
                step = qm(a, &c->step);
                min = c->has_min ? qm(a, &c->min) : 0;
            } else {
                req = units(v);
                step = units(qm(a, &c->step));
                min = c->has_min ? units(qm(a, &c->min)) : 0;
            }
            if (step != 0 && (req - min) % step != 0)
                return true;
        }
        return false;
    }
    if (c->nvalid_values) {
        for (uint32_t i = 0; i < c->nvalid_values; i++)
            if (v == qm(a, &c->valid_values[i]))
                return false;
        return true;
    }
    return false;
}

/* The request's amount for capacity name (as written), or NULL. */
static const ks_dra_quantity *request_amount(const ks_dra_exact_request *r, const char *name)
{
    for (uint32_t i = 0; i < r->ncapacity_requests; i++)
        if (!strcmp(r->capacity_request_names[i].name, name))
            return &r->capacity_requests[i];
    return NULL;
}

static qv aggregated_amount(const struct aggcap *agg, const char *name)
{
    for (size_t i = 0; agg && i < agg->n; i++)
        if (!strcmp(agg->names[i], name))
            return agg->vals[i];
    return 0;
}

/* CmpRequestOverCapacity: 1 fits, 0 does not, -1 error (msg). agg: the allocated state's
 * aggregated capacity of the device (may be NULL); alloc: the attempt's amounts (NULL: none). */
static int cmp_request_over_capacity(actx *a, const ks_dra_exact_request *r, const ks_dra_device *d,
                                     const struct aggcap *agg, const qv *alloc, bool frac,
                                     char *msg, size_t msglen)
{
    for (uint32_t i = 0; i < r->ncapacity_requests; i++)
        if (!ks__dra_device_capacity(d, r->capacity_request_names[i].name))
            return 0; /* requestsContainNonExistCapacity */
    qv consumed[d->ncapacity ? d->ncapacity : 1];
    /* Every amount is resolved first, so that an unrepresentable one aborts whatever the order. */
    for (uint32_t i = 0; i < d->ncapacity; i++) {
        const ks_dra_capacity *c = &d->capacity[i];
        char m[400];
        if (consumed_capacity(a, request_amount(r, c->qname.name), c, frac, &consumed[i], m,
                              sizeof m)) {
            snprintf(msg, msglen, "capacity \"%s\": %s", c->qname.name, m);
            return -1;
        }
        if (consumed[i] < 0) {
            snprintf(msg, msglen, "capacity \"%s\": capacity value is negative", c->qname.name);
            return -1;
        }
    }
    for (uint32_t i = 0; i < d->ncapacity; i++) {
        const ks_dra_capacity *c = &d->capacity[i];
        if (violates_policy(a, consumed[i], c, frac))
            return 0;
        qv sum = aggregated_amount(agg, c->qname.name) + consumed[i];
        if (alloc)
            sum += alloc[i];
        if (sum > qm(a, &c->value))
            return 0;
    }
    return 1;
}

/* GetConsumedCapacityFromRequest (into out, parallel to d->capacity) */
static int consumed_from_request(actx *a, const ks_dra_exact_request *r, const ks_dra_device *d,
                                 bool frac, qv *out, char *msg, size_t msglen)
{
    for (uint32_t i = 0; i < d->ncapacity; i++) {
        char m[400];
        if (consumed_capacity(a, request_amount(r, d->capacity[i].qname.name), &d->capacity[i],
                              frac, &out[i], m, sizeof m)) {
            snprintf(msg, msglen, "capacity \"%s\": %s", d->capacity[i].qname.name, m);
            return -1;
        }
    }
    return 0;
}

/* ---- selectors --------------------------------------------------------------------------------
 */

static int attr_value_in(ks_mempool *m, const ks_dra_attribute *at, ks_cel_value *v);

/* One attribute as DeviceMatches sees it, in the call's arena (out of memory: the call's
 * longjmp); *ok false when it does not convert. */
static ks_cel_value attr_value(actx *a, const ks_dra_attribute *at, bool *ok)
{
    ks_cel_value v;
    int rc = attr_value_in(&a->arena, at, &v);
    if (rc < 0)
        longjmp(a->oom, 1);
    *ok = rc > 0;
    return v;
}

/* The device as DeviceMatches sees it, built once per device and call. NULL with msg on a
 * conversion error (upstream's "attribute %s: ..."). */
static const ks_cel_value *cel_device(actx *a, const cand *c, char *msg, size_t msglen)
{
    ks_cel_value *v = hmap_get(&a->celdevs, c->dev, 0);
    if (v)
        return v;
    const ks_dra_device *d = c->dev;
    ks_cel_dra_entry *attrs = amalloc(a, sizeof(*attrs) * (d->nattributes + 1));
    ks_cel_dra_entry *caps = amalloc(a, sizeof(*caps) * (d->ncapacity + 1));
    for (uint32_t i = 0; i < d->nattributes; i++) {
        bool ok;
        attrs[i].name = d->attributes[i].qname.name;
        attrs[i].value = attr_value(a, &d->attributes[i], &ok);
        if (!ok) {
            const char *why = d->attributes[i].type == KS_DRA_ATTR_UNKNOWN
                                  ? "unsupported attribute value"
                                  : "parse semantic version: invalid version";
            snprintf(msg, msglen, "attribute %s: %s", d->attributes[i].qname.name, why);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < d->ncapacity; i++) {
        const char *t = d->capacity[i].value.text ? d->capacity[i].value.text : "0";
        caps[i].name = d->capacity[i].qname.name;
        if (!ks_cel_quantity_parse(&a->arena, t, strlen(t), &caps[i].value)) {
            snprintf(msg, msglen, "capacity %s: invalid quantity %s", caps[i].name, t);
            return NULL;
        }
    }
    v = amalloc(a, sizeof(*v));
    *v = ks_cel_dra_device(&a->arena, c->slice->driver, attrs, d->nattributes, caps, d->ncapacity,
                           d->allow_multiple_allocations != 0);
    hmap_put(a, &a->celdevs, c->dev, 0, v);
    return v;
}

static void devid_str(const cand *c, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s/%s", c->slice->driver, c->slice->pool_name, c->dev->name);
}

/* The slice's memo of a selector's result on one of its devices (ks_resource_slice.
 * selector_memo): each word is (entry id << 2) | 2 * match | 1, 0 when free. A selector's value
 * depends on the device alone (its driver, attributes, capacities), so one evaluation serves
 * every later cycle that meets the device; only successes are kept (an error is evaluated again,
 * to be reported in upstream's words). -1: not remembered. */
static int memo_get(const ks_resource_slice *sl, const ks_dra_device *dev, uint64_t id)
{
    uint64_t *m =
        atomic_load_explicit(&((ks_resource_slice *)sl)->selector_memo, memory_order_acquire);
    if (!m)
        return -1;
    _Atomic uint64_t *w =
        (_Atomic uint64_t *)&m[(size_t)(dev - sl->devices) * KS_DRA_SELECTOR_MEMO];
    for (int i = 0; i < KS_DRA_SELECTOR_MEMO; i++) {
        uint64_t v = atomic_load_explicit(&w[i], memory_order_relaxed);
        if (v == 0)
            return -1;
        if (v >> 2 == id)
            return (int)((v >> 1) & 1);
    }
    return -1;
}

static void memo_put(const ks_resource_slice *slice, const ks_dra_device *dev, uint64_t id,
                     bool match)
{
    ks_resource_slice *sl = (ks_resource_slice *)slice; /* the memo is the slice's mutable part */
    uint64_t *m = atomic_load_explicit(&sl->selector_memo, memory_order_acquire);
    if (!m) {
        uint64_t *fresh = calloc((size_t)sl->ndevices * KS_DRA_SELECTOR_MEMO, sizeof(*fresh));
        if (!fresh)
            return; /* only a memo */
        if (atomic_compare_exchange_strong(&sl->selector_memo, &m, fresh))
            m = fresh;
        else
            free(fresh); /* another thread's won; m holds it */
    }
    _Atomic uint64_t *w =
        (_Atomic uint64_t *)&m[(size_t)(dev - sl->devices) * KS_DRA_SELECTOR_MEMO];
    uint64_t word = id << 2 | (uint64_t)match << 1 | 1;
    for (int i = 0; i < KS_DRA_SELECTOR_MEMO; i++) {
        uint64_t v = 0;
        if (atomic_compare_exchange_strong(&w[i], &v, word) || v >> 2 == id)
            return;
    }
}

/* selectorsMatch: 1 match, 0 not, -1 error. class NULL: the claim's request selectors. */
static int selectors_match(actx *a, int claim, const cand *c, const ks_device_class *class,
                           const ks_dra_selector *sels, uint32_t nsels)
{
    for (uint32_t i = 0; i < nsels; i++) {
        const cel_entry *e = hmap_get(&a->celents, sels[i].cel_expression, 0);
        if (!e) {
            if (!(e = cel_get(a->in->cel, sels[i].cel_expression)))
                longjmp(a->oom, 1);
            hmap_put(a, &a->celents, sels[i].cel_expression, 0, (void *)e);
        }
        if (!e->prog) {
            if (class)
                return fail(a, "class %s: selector #%u: CEL compile error: %s",
                            symstr(class->h.name), i, e->err);
            return fail(a, "claim %s: selector #%u: CEL compile error: %s", a->claims[claim].kobj,
                        i, e->err);
        }
        int memo = memo_get(c->slice, c->dev, e->id);
        if (memo == 0)
            return 0;
        if (memo == 1)
            continue;
        char msg[600] = "";
        const ks_cel_value *dv = cel_device(a, c, msg, sizeof msg);
        bool match = false;
        if (dv) {
            ks_mempool tmp = {0};
            ks_cel_error err = {0};
            int rc = ks_cel_dra_matches(e->prog, dv, &tmp, &match, NULL, &err);
            ks__mempool_free(&tmp);
            if (rc) {
                snprintf(msg, sizeof msg, "%s", err.msg);
                /* cel.EnhanceRuntimeError */
                if (strstr(msg, "no such key:"))
                    snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
                             ". consider using CEL optional chaining (.? followed by orValue()) "
                             "or guarding the check with has() for optional fields");
                dv = NULL;
            } else {
                memo_put(c->slice, c->dev, e->id, match);
            }
        }
        if (!dv) {
            char id[400];
            devid_str(c, id, sizeof id);
            if (class)
                return fail(a, "class %s: selector #%u on device %s: CEL runtime error: %s",
                            symstr(class->h.name), i, id, msg);
            return fail(a, "claim %s: selector #%u on device %s: CEL runtime error: %s",
                        a->claims[claim].kobj, i, id, msg);
        }
        if (!match)
            return 0;
    }
    return 1;
}

/* isSelectable: 1, 0 or -1 (error). */
static int is_selectable(actx *a, int claim, reqdata *rd, const cand *c)
{
    if (!a->f.device_binding_and_status && c->dev->nbinding_conditions)
        return 0;
    void *cached = hmap_get(&rd->matches, c->dev, 0);
    if (cached)
        return cached == (void *)2;
    int rc = 1;
    if (rd->class)
        rc = selectors_match(a, claim, c, rd->class, rd->class->selectors, rd->class->nselectors);
    if (rc == 1)
        rc = selectors_match(a, claim, c, NULL, rd->req->selectors, rd->req->nselectors);
    if (rc < 0)
        return rc;
    if (rc == 1 && c->slice->per_device_node_selection &&
        !ks_dra_node_matches(a->in->node, &c->dev->node))
        rc = 0;
    hmap_put(a, &rd->matches, c->dev, 0, rc ? (void *)2 : (void *)1);
    return rc;
}

/* ---- constraints (allocator_incubating.go, constraint.go) ---------------------------------- */

static const ks_dra_attribute *lookup_attribute(const cand *c, const char *name)
{
    const ks_dra_attribute *at = ks__dra_device_attribute(c->dev, name);
    if (at)
        return at;
    const char *slash = strchr(name, '/');
    if (!slash)
        return NULL;
    size_t dl = (size_t)(slash - name);
    if (strlen(c->slice->driver) != dl || strncmp(name, c->slice->driver, dl))
        return NULL;
    return ks__dra_device_attribute(c->dev, slash + 1);
}

static bool constraint_applies(const constraint *k, const char *req, const char *sub)
{
    if (!k->nrequests)
        return true;
    for (uint32_t i = 0; i < k->nrequests; i++) {
        const char *n = k->requests[i];
        if (!strcmp(n, req))
            return true;
        if (*sub) {
            size_t rl = strlen(req);
            if (!strncmp(n, req, rl) && n[rl] == '/' && !strcmp(n + rl + 1, sub))
                return true;
        }
    }
    return false;
}

/* The scalar comparison both constraints use: same type and value (lists: never). */
static bool scalar_equal(const ks_dra_attribute *x, const ks_dra_attribute *y)
{
    if (x->type != y->type)
        return false;
    switch (x->type) {
    case KS_DRA_ATTR_STRING:
    case KS_DRA_ATTR_VERSION:
        return !strcmp(x->s, y->s);
    case KS_DRA_ATTR_INT:
        return x->i == y->i;
    case KS_DRA_ATTR_BOOL:
        return x->b == y->b;
    default:
        return false;
    }
}

static bool scalar_type(const ks_dra_attribute *x)
{
    return x->type == KS_DRA_ATTR_STRING || x->type == KS_DRA_ATTR_VERSION ||
           x->type == KS_DRA_ATTR_INT || x->type == KS_DRA_ATTR_BOOL;
}

static bool constraint_add(actx *a, constraint *k, const char *req, const char *sub, const cand *c)
{
    if (!constraint_applies(k, req, sub))
        return true;
    const ks_dra_attribute *at = lookup_attribute(c, k->attr);
    if (!at)
        return false;
    if (!k->distinct) {
        if (k->num == 0) {
            k->first = at;
            k->num = 1;
            return true;
        }
        if (!scalar_type(at) || !scalar_equal(at, k->first))
            return false;
        k->num++;
        return true;
    }
    for (int i = 0; i < k->num; i++) {
        if (!scalar_type(at))
            return false;
        if (scalar_equal(at, k->stack[i]))
            return false;
    }
    k->stack[k->num++] = at;
    return true;
}

static void constraint_remove(constraint *k, const char *req, const char *sub)
{
    if (!constraint_applies(k, req, sub))
        return;
    k->num--;
}

/* ---- taints --------------------------------------------------------------------------------- */

static bool tolerates(const ks_dra_toleration *t, const ks_dra_taint *x)
{
    if (t->effect != KS_DRA_EFFECT_NONE_SET && t->effect != x->effect)
        return false;
    if (*t->key && strcmp(t->key, x->key))
        return false;
    if (t->op == KS_DRA_TOL_EXISTS)
        return true;
    return !strcmp(t->value ? t->value : "", x->value ? x->value : "");
}

static bool taint_blocks(const ks_dra_taint *x, const ks_dra_exact_request *r)
{
    if (x->effect != KS_DRA_EFFECT_NO_EXECUTE && x->effect != KS_DRA_EFFECT_NO_SCHEDULE)
        return false;
    for (uint32_t i = 0; i < r->ntolerations; i++)
        if (tolerates(&r->tolerations[i], x))
            return false;
    return true;
}

/* taintPreventsAllocation, with the DeviceTaintRules that select the device added to its taints */
static bool taint_prevents(actx *a, const cand *c, const ks_dra_exact_request *r)
{
    for (uint32_t i = 0; i < c->dev->ntaints; i++)
        if (taint_blocks(&c->dev->taints[i], r))
            return true;
    for (size_t i = 0; i < a->in->ntaint_rules; i++) {
        const ks_device_taint_rule *tr = a->in->taint_rules[i];
        if (!tr->has_device_selector) /* no selector matches no devices (tracker.applyPatches) */
            continue;
        if ((tr->driver && strcmp(tr->driver, c->slice->driver)) ||
            (tr->pool && strcmp(tr->pool, c->slice->pool_name)) ||
            (tr->device && strcmp(tr->device, c->dev->name)))
            continue;
        if (taint_blocks(&tr->taint, r))
            return true;
    }
    return false;
}

/* ---- counters (checkAvailableCounters) ------------------------------------------------------ */

static bool is_device_allocated(actx *a, const ks_resource_slice *s, const ks_dra_device *d)
{
    size_t kl;
    const char *k = devkey(a, s->driver, s->pool_name, d->name, &kl);
    devstate *st = dev_state(a, k, kl, false);
    return st && (st->allocated || st->shared || st->aggregated);
}

static void counters_init(actx *a, pool *p)
{
    p->avail = amalloc(a, sizeof(*p->avail) * (p->ncsets + 1));
    p->consumed = amalloc(a, sizeof(*p->consumed) * (p->ncsets + 1));
    for (size_t i = 0; i < p->ncsets; i++) {
        p->avail[i] = amalloc(a, sizeof(qv) * (p->csets[i]->ncounters + 1));
        p->consumed[i] = amalloc(a, sizeof(qv) * (p->csets[i]->ncounters + 1));
        for (uint32_t j = 0; j < p->csets[i]->ncounters; j++)
            p->avail[i][j] = qm(a, &p->csets[i]->counters[j].value);
    }
    for (int w = 0; w < 2; w++) {
        const ks_resource_slice **sl = w ? p->other : p->slices;
        size_t n = w ? p->nother : p->nslices;
        for (size_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < sl[i]->ndevices; j++) {
                const ks_dra_device *d = &sl[i]->devices[j];
                if (!d->nconsumes || !is_device_allocated(a, sl[i], d))
                    continue;
                for (uint32_t k = 0; k < d->nconsumes; k++) {
                    size_t ci;
                    const ks_dra_counter_set *cs = find_cset(p, d->consumes_counters[k].name, &ci);
                    for (uint32_t m = 0; cs && m < d->consumes_counters[k].ncounters; m++) {
                        int idx = find_counter(cs, d->consumes_counters[k].counters[m].name);
                        if (idx >= 0)
                            p->avail[ci][idx] -= qm(a, &d->consumes_counters[k].counters[m].value);
                    }
                }
            }
    }
}

static void counters_apply(actx *a, pool *p, const ks_dra_device *d, int sign)
{
    for (uint32_t k = 0; k < d->nconsumes; k++) {
        size_t ci;
        const ks_dra_counter_set *cs = find_cset(p, d->consumes_counters[k].name, &ci);
        for (uint32_t m = 0; cs && m < d->consumes_counters[k].ncounters; m++) {
            int idx = find_counter(cs, d->consumes_counters[k].counters[m].name);
            if (idx >= 0)
                p->consumed[ci][idx] += sign * qm(a, &d->consumes_counters[k].counters[m].value);
        }
    }
}

static bool check_available_counters(actx *a, const cand *c)
{
    pool *p = c->pool;
    if (!p->avail)
        counters_init(a, p);
    counters_apply(a, p, c->dev, 1);
    for (size_t i = 0; i < p->ncsets; i++)
        for (uint32_t j = 0; j < p->csets[i]->ncounters; j++)
            if (p->avail[i][j] < p->consumed[i][j]) {
                counters_apply(a, p, c->dev, -1);
                return false;
            }
    return true;
}

/* ---- allocateDevice ------------------------------------------------------------------------- */

typedef struct rollback {
    bool counters, marked, cap_inserted, cap_existed, result;
    uint32_t ncons;
    int prev_results;
    qv *consumed;
} rollback;

static bool cap_empty(const qv *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i])
            return false;
    return true;
}

static void rollback_device(actx *a, int claim, const cand *c, const char *req, const char *sub,
                            const rollback *st)
{
    claimdata *cd = &a->claims[claim];
    devstate *ds = dev_state(a, c->key, c->klen, true);
    if (st->result)
        cd->nres = st->prev_results;
    if (st->cap_inserted && ds->cap_present) {
        for (uint32_t i = 0; i < c->dev->ncapacity; i++)
            ds->cap[i] -= st->consumed[i];
        if (cap_empty(ds->cap, c->dev->ncapacity))
            ds->cap_present = false;
        if (st->cap_existed && !ds->cap_present) {
            ds->cap_present = true;
            memset(ds->cap, 0, sizeof(qv) * c->dev->ncapacity);
        }
    }
    if (st->marked) {
        ds->claims[claim]--;
        ds->nclaims_using--;
    }
    for (uint32_t i = st->ncons; i-- > 0;)
        constraint_remove(&cd->cons[i], req, sub);
    if (st->counters)
        counters_apply(a, c->pool, c->dev, -1);
}

static void gen_share_id(actx *a, char *buf)
{
    if (a->in->fixed_share_id) {
        snprintf(buf, 37, "%s", a->in->fixed_share_id);
        return;
    }
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        for (int i = 0; i < 16; i++)
            b[i] = (unsigned char)rand();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    snprintf(buf, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* allocateDevice: 1 allocated (*st records how to undo it), 0 not, -1 error. */
static int allocate_device(actx *a, int claim, int reqi, int subi, const cand *c, bool must,
                           rollback *st)
{
    claimdata *cd = &a->claims[claim];
    reqdata *rd = &cd->reqs[reqi][subi];
    const ks_dra_exact_request *r = rd->req;
    bool admin = rd->parent ? false : r->admin_access != 0;
    bool multi = a->f.consumable_capacity && c->dev->allow_multiple_allocations;
    devstate *ds = dev_state(a, c->key, c->klen, true);
    memset(st, 0, sizeof(*st));
    if (!multi && admin && ds->claims[claim] > 0)
        return 0;
    if (!admin && (ds->allocated || ds->nclaims_using > 0))
        return 0;
    if (!a->f.partitionable_devices && c->dev->nconsumes)
        return 0;
    bool cap_in_use = ds->aggregated || ds->shared || ds->cap_present;
    bool skip_counters = multi && cap_in_use;
    if (!skip_counters && c->dev->nconsumes) {
        if (!check_available_counters(a, c))
            return 0;
        st->counters = true;
    }
    const char *req = rd->parent ? rd->parent->name : r->name;
    const char *sub = rd->parent ? r->name : "";
    st->prev_results = cd->nres;
    if (a->f.device_taints && taint_prevents(a, c, r)) {
        rollback_device(a, claim, c, req, sub, st);
        return 0;
    }
    for (uint32_t i = 0; i < cd->ncons; i++) {
        if (!constraint_add(a, &cd->cons[i], req, sub, c)) {
            rollback_device(a, claim, c, req, sub, st);
            if (must) {
                char id[400];
                devid_str(c, id, sizeof id);
                return fail(a,
                            "claim %s, request %s: cannot add device %s because a claim "
                            "constraint would not be satisfied",
                            cd->kobj, r->name, id);
            }
            return 0;
        }
        st->ncons++;
    }
    if (!multi) {
        ds->claims[claim]++;
        ds->nclaims_using++;
        st->marked = true;
    }
    qv *consumed = NULL;
    const char *share = NULL;
    if (a->f.consumable_capacity) {
        char msg[600];
        char id[400];
        devid_str(c, id, sizeof id);
        int ok = cmp_request_over_capacity(a, r, c->dev, ds->aggregated,
                                           ds->cap_present ? ds->cap : NULL,
                                           a->f.fractional_capacity_range, msg, sizeof msg);
        if (ok < 0) {
            rollback_device(a, claim, c, req, sub, st);
            return fail(a, "claim %s, request %s: rechecking capacity for device %s: %s", cd->kobj,
                        r->name, id, msg);
        }
        if (!ok) {
            rollback_device(a, claim, c, req, sub, st);
            return 0;
        }
        if (multi) {
            consumed = amalloc(a, sizeof(qv) * (c->dev->ncapacity + 1));
            if (consumed_from_request(a, r, c->dev, a->f.fractional_capacity_range, consumed, msg,
                                      sizeof msg)) {
                rollback_device(a, claim, c, req, sub, st);
                return fail(a,
                            "claim %s, request %s: computing consumed capacity for device %s: %s",
                            cd->kobj, r->name, id, msg);
            }
            char *sid = amalloc(a, 37);
            gen_share_id(a, sid);
            share = sid;
            st->cap_existed = ds->cap_present;
            if (!ds->cap)
                ds->cap = amalloc(a, sizeof(qv) * (c->dev->ncapacity + 1));
            if (!ds->cap_present)
                memset(ds->cap, 0, sizeof(qv) * c->dev->ncapacity);
            for (uint32_t i = 0; i < c->dev->ncapacity; i++)
                ds->cap[i] += consumed[i];
            ds->cap_present = true;
            st->cap_inserted = true;
            st->consumed = consumed;
        }
    }
    devres *res = &cd->res[cd->nres++];
    memset(res, 0, sizeof(*res));
    res->request = r->name;
    res->parent = rd->parent ? rd->parent->name : "";
    res->c = *c;
    res->share_id = share;
    res->admin = admin;
    res->consumed = consumed && c->dev->ncapacity ? consumed : NULL;
    st->result = true;
    return 1;
}

/* ---- allocateOne ---------------------------------------------------------------------------- */

enum { R_MAXSIZE = -2, R_ERR = -1, R_NO = 0, R_YES = 1 };

typedef struct loc {
    size_t pool, slice;
    uint32_t device;
} loc;

static int aborted(actx *a)
{
    if (a->in->cancelled && atomic_load(a->in->cancelled))
        return fail(a, "filter operation aborted: context canceled");
    if (a->in->deadline_ns) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec >= a->in->deadline_ns)
            return fail(a, "filter operation aborted: context deadline exceeded");
    }
    return 0;
}

static int allocate_one(actx *a, int claim, int reqi, int subi, int devi, bool in_sub, loc start)
{
    a->steps++;
    if (aborted(a))
        return R_ERR;
    if ((size_t)claim >= a->nclaims)
        return R_YES;
    claimdata *cd = &a->claims[claim];
    if ((uint32_t)reqi >= cd->claim->nrequests) {
        int rc = allocate_one(a, claim + 1, 0, 0, 0, false, (loc){0});
        return rc == R_MAXSIZE ? R_NO : rc;
    }
    reqdata *rd = &cd->reqs[reqi][subi];
    if (!in_sub && rd->parent) {
        bool all_exceeded = true;
        for (uint32_t s = 0; s < cd->nsub[reqi]; s++) {
            int rc = allocate_one(a, claim, reqi, (int)s, devi, true, (loc){0});
            if (rc == R_MAXSIZE)
                continue;
            all_exceeded = false;
            if (rc == R_ERR)
                return rc;
            if (rc == R_YES) {
                cd->reqs[reqi][0].selected_sub = (int)s;
                return R_YES;
            }
        }
        return all_exceeded ? R_MAXSIZE : R_NO;
    }
    const ks_dra_exact_request *r = rd->req;
    bool all_mode = r->allocation_mode == KS_DRA_ALLOC_ALL;
    if (all_mode && rd->nall == 0)
        return R_NO;
    if (devi >= rd->num_devices)
        return allocate_one(a, claim, reqi + 1, 0, 0, false, (loc){0});
    int64_t remaining = rd->num_devices - devi, available = MAX_RESULTS - cd->nres;
    if (remaining > available)
        return R_MAXSIZE;
    bool admin = rd->parent ? false : r->admin_access != 0;
    if (all_mode) {
        rollback st;
        const cand *c = &rd->all[devi];
        int rc = allocate_device(a, claim, reqi, subi, c, true, &st);
        if (rc <= 0)
            return rc < 0 ? R_ERR : R_NO;
        rc = allocate_one(a, claim, reqi, subi, devi + 1, in_sub, (loc){0});
        if (rc != R_YES) {
            rollback_device(a, claim, c, rd->parent ? rd->parent->name : r->name,
                            rd->parent ? r->name : "", &st);
            return rc == R_NO ? R_NO : rc;
        }
        return R_YES;
    }
    for (size_t pi = start.pool; pi < a->npools; pi++) {
        pool *p = a->pools[pi];
        if (p->incomplete || p->invalid)
            continue;
        size_t s0 = pi == start.pool ? start.slice : 0;
        for (size_t si = s0; si < p->nslices; si++) {
            const ks_resource_slice *s = p->slices[si];
            uint32_t d0 = pi == start.pool && si == start.slice ? start.device : 0;
            for (uint32_t di = d0; di < s->ndevices; di++) {
                cand c;
                cand_init(a, &c, s, &s->devices[di], p);
                devstate *ds = dev_state(a, c.key, c.klen, false);
                if (admin && ds && ds->claims[claim] > 0)
                    continue;
                if (!admin && ds && (ds->allocated || ds->nclaims_using > 0))
                    continue;
                int rc = is_selectable(a, claim, rd, &c);
                if (rc < 0)
                    return R_ERR;
                if (!rc)
                    continue;
                if (a->f.consumable_capacity) {
                    char msg[600];
                    rc = cmp_request_over_capacity(a, r, c.dev, ds ? ds->aggregated : NULL,
                                                   ds && ds->cap_present ? ds->cap : NULL,
                                                   a->f.fractional_capacity_range, msg, sizeof msg);
                    if (rc < 0) {
                        char id[400];
                        devid_str(&c, id, sizeof id);
                        fail(a, "claim %s, request %s: checking capacity for device %s: %s",
                             cd->kobj, r->name, id, msg);
                        return R_ERR;
                    }
                    if (!rc)
                        continue;
                }
                rollback st;
                rc = allocate_device(a, claim, reqi, subi, &c, false, &st);
                if (rc < 0)
                    return R_ERR;
                if (!rc)
                    continue;
                rc = allocate_one(a, claim, reqi, subi, devi + 1, in_sub, (loc){pi, si, di + 1});
                if (rc == R_YES)
                    return R_YES;
                rollback_device(a, claim, &c, rd->parent ? rd->parent->name : r->name,
                                rd->parent ? r->name : "", &st);
                if (rc != R_NO)
                    return rc;
            }
        }
    }
    return R_NO;
}

/* ---- Allocate ------------------------------------------------------------------------------- */

static const ks_device_class *find_class(const ks_dra_alloc_input *in, const char *name)
{
    for (size_t i = 0; i < in->nclasses; i++)
        if (!strcmp(symstr(in->classes[i]->h.name), name))
            return in->classes[i];
    return NULL;
}

/* validateDeviceRequest */
static int validate_request(actx *a, int claim, reqdata *rd)
{
    claimdata *cd = &a->claims[claim];
    const ks_dra_exact_request *r = rd->req;
    for (uint32_t i = 0; i < r->nselectors; i++)
        if (!r->selectors[i].cel_expression || !*r->selectors[i].cel_expression)
            return fail(a,
                        "claim %s, request %s, selector #%u: CEL expression empty (unsupported "
                        "selector type?)",
                        cd->kobj, r->name, i);
    if (!a->f.admin_access && !rd->parent && r->has_admin_access)
        return fail(a,
                    "claim %s, request %s: admin access is requested, but the feature is disabled",
                    cd->kobj, r->name);
    if (!*r->device_class_name)
        return fail(a,
                    "claim %s, request %s: missing device class name (unsupported request type?)",
                    cd->kobj, r->name);
    rd->class = find_class(a->in, r->device_class_name);
    if (!rd->class)
        return fail(a,
                    "claim %s, request %s: could not retrieve device class %s: "
                    "deviceclass.resource.k8s.io \"%s\" not found",
                    cd->kobj, r->name, r->device_class_name, r->device_class_name);
    switch (r->allocation_mode) {
    case KS_DRA_ALLOC_EXACT_COUNT:
        /* "exact count %d is too large" cannot happen: count and numDevices are both 64 bits */
        rd->num_devices = r->count;
        return 0;
    case KS_DRA_ALLOC_ALL:
        break;
    default:
        return fail(a, "claim %s, request %s: unsupported count mode %s", cd->kobj, r->name,
                    r->allocation_mode_text ? r->allocation_mode_text : "");
    }
    size_t cap = 8;
    rd->all = amalloc(a, cap * sizeof(cand));
    for (size_t pi = 0; pi < a->npools; pi++) {
        pool *p = a->pools[pi];
        if (p->incomplete)
            return fail(a,
                        "claim %s, request %s: asks for all devices, but resource pool %s/%s is "
                        "currently being updated",
                        cd->kobj, r->name, p->driver, p->name);
        if (p->invalid)
            return fail(a,
                        "claim %s, request %s: asks for all devices, but resource pool %s/%s is "
                        "currently invalid",
                        cd->kobj, r->name, p->driver, p->name);
        for (size_t si = 0; si < p->nslices; si++)
            for (uint32_t di = 0; di < p->slices[si]->ndevices; di++) {
                cand c;
                cand_init(a, &c, p->slices[si], &p->slices[si]->devices[di], p);
                int rc = is_selectable(a, claim, rd, &c);
                if (rc < 0)
                    return -1;
                if (!rc)
                    continue;
                if (a->f.consumable_capacity) {
                    char msg[600];
                    rc = cmp_request_over_capacity(a, r, c.dev, NULL, NULL,
                                                   a->f.fractional_capacity_range, msg, sizeof msg);
                    if (rc < 0)
                        return fail(a, "claim %s, request %s: checking capacity for device %s: %s",
                                    cd->kobj, r->name, c.dev->name, msg);
                    if (!rc)
                        continue;
                }
                if (rd->nall == cap) {
                    cand *n = amalloc(a, cap * 2 * sizeof(cand));
                    memcpy(n, rd->all, cap * sizeof(cand));
                    rd->all = n;
                    cap *= 2;
                }
                rd->all[rd->nall++] = c;
            }
    }
    rd->num_devices = (int64_t)rd->nall;
    return 0;
}

static void load_allocated_state(actx *a)
{
    const ks_dra_allocated_state *s = a->in->allocated;
    if (!s)
        return;
    for (size_t i = 0; i < s->ndevices; i++) {
        size_t kl;
        const char *k =
            devkey(a, s->devices[i].driver, s->devices[i].pool, s->devices[i].device, &kl);
        dev_state(a, k, kl, true)->allocated = true;
    }
    for (size_t i = 0; i < s->nshared; i++) {
        size_t kl;
        const char *k = devkey(a, s->shared[i].driver, s->shared[i].pool, s->shared[i].device, &kl);
        dev_state(a, k, kl, true)->shared = true;
    }
    for (size_t i = 0; i < s->ncapacity; i++) {
        const ks_dra_device_ref *d = &s->capacity[i].id;
        size_t kl;
        const char *k = devkey(a, d->driver, d->pool, d->device, &kl);
        devstate *ds = dev_state(a, k, kl, true);
        struct aggcap *agg = (struct aggcap *)ds->aggregated;
        if (!agg) {
            agg = amalloc(a, sizeof(*agg));
            ds->aggregated = agg;
        }
        for (size_t j = 0; j < s->capacity[i].namounts; j++) {
            const ks_dra_capacity_amount *am = &s->capacity[i].amounts[j];
            size_t m;
            for (m = 0; m < agg->n && strcmp(agg->names[m], am->name); m++)
                ;
            if (m == agg->n) {
                const char **names = amalloc(a, sizeof(*names) * (agg->n + 1));
                qv *vals = amalloc(a, sizeof(*vals) * (agg->n + 1));
                if (agg->n) {
                    memcpy(names, agg->names, sizeof(*names) * agg->n);
                    memcpy(vals, agg->vals, sizeof(*vals) * agg->n);
                }
                names[m] = am->name;
                vals[m] = 0;
                agg->names = names;
                agg->vals = vals;
                agg->n++;
            }
            agg->vals[m] += am->milli;
        }
    }
}

static bool str_in(const char *const *l, uint32_t n, const char *s)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(l[i], s))
            return true;
    return false;
}

typedef struct cfgbuild {
    ks_dra_alloc_config *c;
    uint32_t n, cap;
} cfgbuild;

static ks_dra_alloc_config *cfg_add(actx *a, cfgbuild *b)
{
    if (b->n == b->cap) {
        uint32_t ncap = b->cap ? b->cap * 2 : 4;
        ks_dra_alloc_config *n = oalloc(a, ncap * sizeof(*n));
        if (b->n)
            memcpy(n, b->c, b->n * sizeof(*n));
        b->c = n;
        b->cap = ncap;
    }
    ks_dra_alloc_config *c = &b->c[b->n++];
    memset(c, 0, sizeof(*c));
    return c;
}

static const char *full_request_name(actx *a, const reqdata *rd)
{
    if (!rd->parent)
        return rd->req->name;
    size_t n = strlen(rd->parent->name) + strlen(rd->req->name) + 2;
    char *s = oalloc(a, n);
    snprintf(s, n, "%s/%s", rd->parent->name, rd->req->name);
    return s;
}

/* The selected entry of request i (the chosen subrequest's, for a prioritized list). */
static const reqdata *selected(const claimdata *cd, uint32_t i)
{
    const reqdata *rd = &cd->reqs[i][0];
    return rd->parent ? &cd->reqs[i][rd->selected_sub] : rd;
}

static void build_config(actx *a, const claimdata *cd, ks_dra_alloc_result *res)
{
    const ks_resource_claim *claim = cd->claim;
    cfgbuild b = {0};
    /* class configs, each class once; later requests of the class are appended */
    const ks_device_class **classes = amalloc(a, sizeof(*classes) * (claim->nrequests + 1));
    uint32_t *start = amalloc(a, sizeof(uint32_t) * (claim->nrequests + 1));
    uint32_t *end = amalloc(a, sizeof(uint32_t) * (claim->nrequests + 1));
    uint32_t nclasses = 0;
    for (uint32_t i = 0; i < claim->nrequests; i++) {
        const reqdata *rd = selected(cd, i);
        if (!rd->class)
            continue;
        const char *name = full_request_name(a, rd);
        uint32_t k;
        for (k = 0; k < nclasses && classes[k] != rd->class; k++)
            ;
        if (k < nclasses) {
            for (uint32_t j = start[k]; j < end[k]; j++) {
                const char **n = oalloc(a, sizeof(char *) * (b.c[j].nrequests + 1));
                memcpy(n, b.c[j].requests, sizeof(char *) * b.c[j].nrequests);
                n[b.c[j].nrequests++] = name;
                b.c[j].requests = n;
            }
            continue;
        }
        classes[nclasses] = rd->class;
        start[nclasses] = b.n;
        for (uint32_t j = 0; j < rd->class->nconfig; j++) {
            ks_dra_alloc_config *c = cfg_add(a, &b);
            const char **n = oalloc(a, sizeof(char *));
            n[0] = name;
            c->from_class = true;
            c->nrequests = 1;
            c->requests = n;
            c->driver = rd->class->config[j].driver;
            c->parameters = rd->class->config[j].parameters;
        }
        end[nclasses++] = b.n;
    }
    for (uint32_t j = 0; j < claim->nconfig; j++) {
        const ks_dra_config *cf = &claim->config[j];
        bool add = cf->nrequests == 0;
        for (uint32_t i = 0; !add && i < claim->nrequests; i++) {
            const ks_dra_request *rq = &claim->requests[i];
            if (str_in(cf->requests, cf->nrequests, rq->name)) {
                add = true;
                break;
            }
            const reqdata *rd = &cd->reqs[i][0];
            if (!rd->parent)
                continue;
            const reqdata *sel = selected(cd, i);
            if (str_in(cf->requests, cf->nrequests, full_request_name(a, sel)))
                add = true;
        }
        if (add) {
            ks_dra_alloc_config *c = cfg_add(a, &b);
            c->from_class = false;
            c->nrequests = cf->nrequests;
            c->requests = cf->requests;
            c->driver = cf->driver;
            c->parameters = cf->parameters;
        }
    }
    /* a config that applies to every request: empty means all */
    for (uint32_t j = 0; j < b.n; j++) {
        if (!b.c[j].nrequests)
            continue;
        bool all = true;
        for (uint32_t i = 0; all && i < claim->nrequests; i++) {
            if (str_in(b.c[j].requests, b.c[j].nrequests, claim->requests[i].name))
                continue;
            const reqdata *rd = &cd->reqs[i][0];
            if (rd->parent &&
                str_in(b.c[j].requests, b.c[j].nrequests, full_request_name(a, selected(cd, i))))
                continue;
            all = false;
        }
        if (all) {
            b.c[j].nrequests = 0;
            b.c[j].requests = NULL;
        }
    }
    res->config = b.c;
    res->nconfig = b.n;
}

static bool same_values(const ks_selector_req *x, const ks_selector_req *y)
{
    /* sets.Equal: every value of each is in the other */
    for (int w = 0; w < 2; w++) {
        const ks_selector_req *p = w ? y : x, *q = w ? x : y;
        for (uint32_t i = 0; i < p->nvalues; i++) {
            bool found = false;
            for (uint32_t j = 0; j < q->nvalues && !found; j++)
                found = p->values[i] == q->values[j];
            if (!found)
                return false;
        }
    }
    return true;
}

static void add_reqs(actx *a, const ks_selector_req *from, uint32_t nfrom, ks_selector_req **to,
                     uint32_t *nto)
{
    for (uint32_t i = 0; i < nfrom; i++) {
        bool have = false;
        for (uint32_t j = 0; j < *nto && !have; j++)
            have = (*to)[j].key == from[i].key && (*to)[j].op == from[i].op &&
                   same_values(&(*to)[j], &from[i]);
        if (have)
            continue;
        ks_selector_req *n = oalloc(a, sizeof(*n) * (*nto + 1));
        if (*nto)
            memcpy(n, *to, sizeof(*n) * *nto);
        n[(*nto)++] = from[i];
        *to = n;
    }
}

/* createNodeSelector: 0 with *out (NULL: any node) or -1 (error set). */
static int create_node_selector(actx *a, const claimdata *cd, const ks_node_selector_term **out)
{
    ks_selector_req *fields = NULL, *exprs = NULL;
    uint32_t nfields = 0, nexprs = 0;
    *out = NULL;
    for (int i = 0; i < cd->nres; i++) {
        const cand *c = &cd->res[i].c;
        const ks_dra_node_selection *sel =
            c->slice->per_device_node_selection ? &c->dev->node : &c->slice->node;
        if ((sel->has_node_name && sel->node_name != KS_SYM_EMPTY) || c->dev->binds_to_node) {
            ks_node_selector_term *t = oalloc(a, sizeof(*t));
            ks_selector_req *r = oalloc(a, sizeof(*r));
            ks_sym *v = oalloc(a, sizeof(*v));
            r->key = ks__intern("metadata.name");
            r->op = KS_OP_IN;
            v[0] = a->in->node ? a->in->node->name : KS_SYM_EMPTY;
            r->nvalues = 1;
            r->values = v;
            t->nfields = 1;
            t->fields = r;
            *out = t;
            return 0;
        }
        if (sel->has_node_selector) {
            if (sel->nterms == 1) {
                add_reqs(a, sel->terms[0].fields, sel->terms[0].nfields, &fields, &nfields);
                add_reqs(a, sel->terms[0].exprs, sel->terms[0].nexprs, &exprs, &nexprs);
            } else if (sel->nterms > 1) {
                return fail(a,
                            "create NodeSelector for claim %s: unsupported "
                            "ResourceSlice.NodeSelector with %u terms",
                            symstr(cd->claim->h.name), sel->nterms);
            }
        }
    }
    if (nfields || nexprs) {
        ks_node_selector_term *t = oalloc(a, sizeof(*t));
        t->nfields = nfields;
        t->fields = fields;
        t->nexprs = nexprs;
        t->exprs = exprs;
        *out = t;
    }
    return 0;
}

static int build_results(actx *a)
{
    ks_dra_alloc_output *out = a->out;
    out->nresults = a->nclaims;
    out->results = oalloc(a, sizeof(ks_dra_alloc_result) * (a->nclaims + 1));
    for (size_t ci = 0; ci < a->nclaims; ci++) {
        claimdata *cd = &a->claims[ci];
        ks_dra_alloc_result *res = &out->results[ci];
        res->ndevices = (uint32_t)cd->nres;
        res->devices = oalloc(a, sizeof(ks_dra_alloc_device) * (cd->nres + 1));
        for (int i = 0; i < cd->nres; i++) {
            devres *d = &cd->res[i];
            ks_dra_alloc_device *o = &res->devices[i];
            if (*d->parent) {
                size_t n = strlen(d->parent) + strlen(d->request) + 2;
                char *s = oalloc(a, n);
                snprintf(s, n, "%s/%s", d->parent, d->request);
                o->request = s;
            } else {
                o->request = d->request;
            }
            o->driver = d->c.slice->driver;
            o->pool = d->c.slice->pool_name;
            o->device = d->c.dev->name;
            o->admin_access = d->admin;
            o->share_id = d->share_id ? astrdup(a, &out->pool, d->share_id) : NULL;
            /* lookupRequest(claim).tolerations() */
            const ks_dra_request *rq =
                ks__dra_claim_request(cd->claim, *d->parent ? d->parent : d->request);
            if (rq && !*d->parent) {
                o->ntolerations = rq->exactly.ntolerations;
                o->tolerations = rq->exactly.tolerations;
            } else if (rq) {
                for (uint32_t j = 0; j < rq->nfirst_available; j++)
                    if (!strcmp(rq->first_available[j].name, d->request)) {
                        o->ntolerations = rq->first_available[j].ntolerations;
                        o->tolerations = rq->first_available[j].tolerations;
                        break;
                    }
            }
            if (a->f.device_binding_and_status) {
                o->nbinding_conditions = d->c.dev->nbinding_conditions;
                o->binding_conditions = d->c.dev->binding_conditions;
                o->nbinding_failure_conditions = d->c.dev->nbinding_failure_conditions;
                o->binding_failure_conditions = d->c.dev->binding_failure_conditions;
            }
            if (d->consumed) {
                ks_dra_capacity_amount *am = oalloc(a, sizeof(*am) * (d->c.dev->ncapacity + 1));
                for (uint32_t j = 0; j < d->c.dev->ncapacity; j++) {
                    am[j].name = d->c.dev->capacity[j].qname.name;
                    am[j].milli = d->consumed[j] > INT64_MAX   ? INT64_MAX
                                  : d->consumed[j] < INT64_MIN ? INT64_MIN
                                                               : (int64_t)d->consumed[j];
                    am[j].text = qv_text(a, d->consumed[j]);
                }
                o->nconsumed = d->c.dev->ncapacity;
                o->consumed = am;
            }
        }
        build_config(a, cd, res);
        if (create_node_selector(a, cd, &res->node_selector))
            return -1;
    }
    return 0;
}

static const char *kobj(actx *a, const ks_resource_claim *c)
{
    const char *ns = symstr(c->h.ns), *name = symstr(c->h.name);
    if (!*ns)
        return name;
    size_t n = strlen(ns) + strlen(name) + 2;
    char *s = amalloc(a, n);
    snprintf(s, n, "%s/%s", ns, name);
    return s;
}

static int prepare(actx *a, const ks_resource_claim *const *claims)
{
    for (size_t ci = 0; ci < a->nclaims; ci++) {
        claimdata *cd = &a->claims[ci];
        const ks_resource_claim *claim = claims[ci];
        cd->claim = claim;
        cd->kobj = kobj(a, claim);
        cd->reqs = amalloc(a, sizeof(*cd->reqs) * (claim->nrequests + 1));
        cd->nsub = amalloc(a, sizeof(*cd->nsub) * (claim->nrequests + 1));
        int64_t min_claim = 0;
        for (uint32_t i = 0; i < claim->nrequests; i++) {
            const ks_dra_request *rq = &claim->requests[i];
            bool has_sub = rq->nfirst_available > 0;
            if (!a->f.prioritized_list && has_sub)
                return fail(a,
                            "claim %s, request %s: has subrequests, but the DRAPrioritizedList "
                            "feature is disabled",
                            cd->kobj, rq->name);
            if (!a->f.consumable_capacity) {
                if (!has_sub && rq->has_exactly && rq->exactly.ncapacity_requests)
                    return fail(a,
                                "claim %s, request %s: has capacity requests, but the "
                                "DRAConsumableCapacity feature is disabled",
                                cd->kobj, rq->name);
                for (uint32_t s = 0; s < rq->nfirst_available; s++)
                    if (rq->first_available[s].ncapacity_requests)
                        return fail(a,
                                    "claim %s, subrequest %s: has capacity requests, but the "
                                    "DRAConsumableCapacity feature is disabled",
                                    cd->kobj, rq->first_available[s].name);
            }
            int64_t min_req;
            if (has_sub) {
                cd->nsub[i] = rq->nfirst_available;
                cd->reqs[i] = amalloc(a, sizeof(reqdata) * rq->nfirst_available);
                min_req = INT64_MAX;
                for (uint32_t s = 0; s < rq->nfirst_available; s++) {
                    reqdata *rd = &cd->reqs[i][s];
                    rd->req = &rq->first_available[s];
                    rd->parent = rq;
                    if (validate_request(a, (int)ci, rd))
                        return -1;
                    if (rd->num_devices < min_req)
                        min_req = rd->num_devices;
                }
            } else {
                cd->nsub[i] = 1;
                cd->reqs[i] = amalloc(a, sizeof(reqdata));
                cd->reqs[i][0].req = &rq->exactly;
                if (validate_request(a, (int)ci, &cd->reqs[i][0]))
                    return -1;
                min_req = cd->reqs[i][0].num_devices;
            }
            if (min_req > MAX_RESULTS - min_claim)
                return fail(a,
                            "claim %s, request %s: adding %" PRId64 " devices exceeds the claim "
                            "limit of %d, with %" PRId64 " already accounted for",
                            cd->kobj, rq->name, min_req, MAX_RESULTS, min_claim);
            min_claim += min_req;
        }
        cd->ncons = claim->nconstraints;
        cd->cons = amalloc(a, sizeof(constraint) * (claim->nconstraints + 1));
        for (uint32_t i = 0; i < claim->nconstraints; i++) {
            const ks_dra_constraint *k = &claim->constraints[i];
            constraint *c = &cd->cons[i];
            c->nrequests = k->nrequests;
            c->requests = k->requests;
            if (k->match_attribute) {
                c->attr = k->match_attribute;
            } else if (k->distinct_attribute) {
                c->attr = k->distinct_attribute;
                c->distinct = true;
                c->stack = amalloc(a, sizeof(*c->stack) * (MAX_RESULTS + 1));
            } else {
                return fail(a,
                            "claim %s, constraint #%u: empty constraint (unsupported constraint "
                            "type?)",
                            cd->kobj, i);
            }
        }
    }
    return 0;
}

int ks_dra_allocate(const ks_dra_alloc_input *in, const ks_resource_claim *const *claims,
                    size_t nclaims, ks_dra_alloc_output *out)
{
    memset(out, 0, sizeof(*out));
    actx *a = calloc(1, sizeof(*a));
    if (!a)
        return KS_ENOMEM;
    a->in = in;
    a->f = in->features;
    a->out = out;
    a->nclaims = nclaims;
    if (setjmp(a->oom)) {
        ks__mempool_free(&a->arena);
        ks_dra_alloc_output_free(out);
        free(a);
        return KS_ENOMEM;
    }
    a->claims = amalloc(a, sizeof(claimdata) * (nclaims + 1));
    load_allocated_state(a);
    gather_pools(a);
    if (prepare(a, claims)) {
        out->status = KS_DRA_ERROR;
    } else {
        int rc = allocate_one(a, 0, 0, 0, 0, false, (loc){0});
        if (rc == R_ERR) {
            out->status = KS_DRA_ERROR;
        } else if (rc == R_MAXSIZE) {
            /* upstream returns errAllocationResultMaxSizeExceeded itself from Allocate */
            out->status = KS_DRA_ERROR;
            snprintf(out->err, sizeof out->err, "allocation max size exceeded");
        } else if (rc != R_YES) {
            out->status = KS_DRA_UNSUITABLE;
            for (size_t i = 0; i < a->npools; i++)
                if (a->pools[i]->invalid) {
                    out->status = KS_DRA_NODE_ERROR;
                    snprintf(out->err, sizeof out->err, "invalid resource pools were encountered");
                    break;
                }
        } else if (build_results(a)) {
            out->status = KS_DRA_ERROR;
        } else {
            out->status = KS_DRA_ALLOCATED;
        }
    }
    out->allocate_one_calls = a->steps;
    if (out->status != KS_DRA_ALLOCATED) {
        out->nresults = 0;
        out->results = NULL;
    }
    ks__mempool_free(&a->arena);
    free(a);
    return 0;
}

void ks_dra_alloc_output_free(ks_dra_alloc_output *out)
{
    if (!out)
        return;
    ks__mempool_free(&out->pool);
    out->results = NULL;
    out->nresults = 0;
}

/* ---- deviceMatchesClass (NodeResourcesFit's DRA-backed scoring) ------------------------------
 */

/* One attribute as CEL sees it, in m: 1, 0 when it does not convert (an invalid semver, a type
 * this version does not know), -1 when out of memory. */
static int attr_value_in(ks_mempool *m, const ks_dra_attribute *at, ks_cel_value *v)
{
    memset(v, 0, sizeof(*v));
    switch (at->type) {
    case KS_DRA_ATTR_BOOL:
        *v = ks_cel_bool(at->b);
        return 1;
    case KS_DRA_ATTR_INT:
        *v = ks_cel_int(at->i);
        return 1;
    case KS_DRA_ATTR_STRING:
        v->kind = KS_CEL_STRING;
        v->s.ptr = at->s;
        v->s.len = strlen(at->s);
        return 1;
    case KS_DRA_ATTR_VERSION:
        return ks_cel_semver_parse(m, at->s, strlen(at->s), v) ? 1 : 0;
    case KS_DRA_ATTR_BOOLS:
    case KS_DRA_ATTR_INTS:
    case KS_DRA_ATTR_STRINGS:
    case KS_DRA_ATTR_VERSIONS: {
        ks_cel_list *l = ks__mempool_alloc(m, sizeof(*l));
        ks_cel_value *items = ks__mempool_alloc(m, sizeof(*items) * (at->n ? at->n : 1));
        if (!l || !items)
            return -1;
        for (uint32_t i = 0; i < at->n; i++) {
            memset(&items[i], 0, sizeof(items[i]));
            if (at->type == KS_DRA_ATTR_BOOLS)
                items[i] = ks_cel_bool(at->bools[i]);
            else if (at->type == KS_DRA_ATTR_INTS)
                items[i] = ks_cel_int(at->ints[i]);
            else if (at->type == KS_DRA_ATTR_STRINGS) {
                items[i].kind = KS_CEL_STRING;
                items[i].s.ptr = at->strs[i];
                items[i].s.len = strlen(at->strs[i]);
            } else if (!ks_cel_semver_parse(m, at->strs[i], strlen(at->strs[i]), &items[i]))
                return 0;
        }
        l->n = at->n;
        l->items = items;
        v->kind = KS_CEL_LIST;
        v->list = l;
        return 1;
    }
    default:
        return 0;
    }
}

int ks_dra_device_matches_class(ks_dra_cel_cache *cel, const ks_resource_slice *slice,
                                const ks_dra_device *d, const ks_device_class *cls)
{
    if (cls->nselectors == 0)
        return 1;
    ks_mempool m = {0};
    int out = 1;
    ks_cel_value dev;
    bool built = false;
    for (uint32_t i = 0; i < cls->nselectors && out == 1; i++) {
        const cel_entry *e = cel_get(cel, cls->selectors[i].cel_expression);
        if (!e || !e->prog) {
            out = -1; /* out of memory, or the class's compile error */
            break;
        }
        /* the allocator's memo of this selector on this device serves here too */
        int memo = memo_get(slice, d, e->id);
        if (memo >= 0) {
            out = memo;
            continue;
        }
        if (!built) {
            /* The device's attributes and capacities are converted only when some selector of
             * the class can read them: its text names the field, or builds a string at run time
             * (a '+'). A class selecting by driver alone (the usual mapping of an extended
             * resource) costs no quantity parsing per device and node. */
            int need_attrs = 0, need_caps = 0;
            for (uint32_t k = 0; k < cls->nselectors; k++) {
                const char *x = cls->selectors[k].cel_expression;
                int dyn = strchr(x, '+') != NULL;
                need_attrs |= dyn || strstr(x, "attributes") != NULL;
                need_caps |= dyn || strstr(x, "capacity") != NULL;
            }
            uint32_t nattrs = need_attrs ? d->nattributes : 0;
            uint32_t ncaps = need_caps ? d->ncapacity : 0;
            ks_cel_dra_entry *attrs = ks__mempool_alloc(&m, sizeof(*attrs) * (d->nattributes + 1));
            ks_cel_dra_entry *caps = ks__mempool_alloc(&m, sizeof(*caps) * (d->ncapacity + 1));
            if (!attrs || !caps) {
                out = -1;
                break;
            }
            for (uint32_t k = 0; k < nattrs && out == 1; k++) {
                attrs[k].name = d->attributes[k].qname.name;
                if (attr_value_in(&m, &d->attributes[k], &attrs[k].value) != 1)
                    out = -1;
            }
            for (uint32_t k = 0; k < ncaps && out == 1; k++) {
                const char *t = d->capacity[k].value.text ? d->capacity[k].value.text : "0";
                caps[k].name = d->capacity[k].qname.name;
                if (!ks_cel_quantity_parse(&m, t, strlen(t), &caps[k].value))
                    out = -1;
            }
            if (out != 1)
                break;
            dev = ks_cel_dra_device(&m, slice->driver, attrs, nattrs, caps, ncaps,
                                    d->allow_multiple_allocations != 0);
            built = true;
        }
        bool match = false;
        ks_cel_error err = {0};
        if (ks_cel_dra_matches(e->prog, &dev, &m, &match, NULL, &err) != 0) {
            out = -1;
            break;
        }
        memo_put(slice, d, e->id, match);
        if (!match)
            out = 0;
    }
    ks__mempool_free(&m);
    return out;
}
