/*
 * Plugin test harness; see harness.h. Runs one plugin's extension points against a small cluster
 * built from JSON, through the real host table, cache and cycle state.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sched/cache.h"
#include "sched/dra_manager.h"
#include "sched/framework.h"
#include "sched/host_api.h"
#include "sched/loader.h"
#include "config/registry.h"
#include "in_tree.h"
#include "api/intern.h"
#include "api/objects.h"
#include "sched/queue.h"
#include "api/store.h"
#include "util/strmap.h"

/* Everything to release at th_fini. */
typedef struct cleanup {
    void (*fn)(void *);
    void *p;
} cleanup;

static cleanup *cleanups;
static size_t ncleanups, cap_cleanups;
static ks_strmap bound;           /* pod uid -> node name (strdup) */
static ks_loaded_module *in_tree; /* the in-tree module, so that its plugins have their ks_host */

/* Tests may make objects from several threads at once (dra_alloc's concurrent_calls). */
static pthread_mutex_t cleanups_mu = PTHREAD_MUTEX_INITIALIZER;

static void defer(void (*fn)(void *), void *p)
{
    pthread_mutex_lock(&cleanups_mu);
    if (ncleanups == cap_cleanups) {
        cap_cleanups = cap_cleanups ? cap_cleanups * 2 : 64;
        cleanups = realloc(cleanups, cap_cleanups * sizeof(*cleanups));
    }
    if (cleanups)
        cleanups[ncleanups++] = (cleanup){fn, p};
    pthread_mutex_unlock(&cleanups_mu);
    cr_assert_not_null(cleanups);
}

static ks_code harness_bind(void *ctx, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                            ks_status *st)
{
    void *old = NULL;
    (void)ctx;
    (void)cycle;
    (void)st;
    ks__strmap_put(&bound, pod->uid, strdup(ks__sym_str(node)), &old);
    free(old);
    return KS_SUCCESS;
}

/* th_filter_before_reserve: Filter on the chosen node between PreFilter and Reserve. */
static int filter_before_reserve;

void th_filter_before_reserve(int on) { filter_before_reserve = on; }

void th_init(void)
{
    char err[512];
    filter_before_reserve = 0;
    ks__host_init();
    cr_assert_eq(ks__loader_open_linked(&ks_in_tree_module, KS_IN_TREE_ORIGIN, ks__host_api(),
                                        &in_tree, err, sizeof(err)),
                 0, "%s", err);
    ks__strmap_init(&bound);
}

void th_fini(void)
{
    for (size_t i = ncleanups; i-- > 0;)
        cleanups[i].fn(cleanups[i].p);
    free(cleanups);
    cleanups = NULL;
    ncleanups = cap_cleanups = 0;
    const char *k;
    void *v;
    for (size_t it = 0; ks__strmap_next(&bound, &it, &k, &v);)
        free(v);
    ks__strmap_destroy(&bound);
    ks__loader_close(in_tree);
    in_tree = NULL;
}

ks_registry *th_registry_new(void)
{
    char err[512];
    ks_registry *reg;
    ks__host_init();
    reg = ks__registry_new();
    cr_assert_not_null(reg);
    cr_assert_eq(ks__loader_register_linked(reg, &ks_in_tree_module, KS_IN_TREE_ORIGIN,
                                            ks__host_api(), err, sizeof(err)),
                 0, "%s", err);
    return reg;
}

cJSON *th_json(const char *text)
{
    char *copy = strdup(text);
    cr_assert_not_null(copy);
    for (char *p = copy; *p; p++)
        if (*p == '\'')
            *p = '"';
    cJSON *obj = cJSON_Parse(copy);
    cr_assert_not_null(obj, "harness: invalid JSON: %s", copy);
    free(copy);
    return obj;
}

static void pod_unref_v(void *p) { ks__pod_unref(p); }
static void node_unref_v(void *p) { ks__node_unref(p); }

ks_pod *th_pod(const char *json)
{
    char err[512];
    ks_pod *pod;
    cJSON *obj = th_json(json);
    int rc = ks__pod_from_json(obj, &pod, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "harness: pod: %s", err);
    defer(pod_unref_v, pod);
    return pod;
}

ks_node *th_node(const char *json)
{
    char err[512];
    ks_node *node;
    cJSON *obj = th_json(json);
    int rc = ks__node_from_json(obj, &node, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "harness: node: %s", err);
    defer(node_unref_v, node);
    return node;
}

/* What the harness's cycles reach through the host table: its bind, and a cluster's store. */
static ks_cycle_hooks bind_only_hooks = {.bind = harness_bind};

struct th_cluster {
    ks_cycle_hooks hooks; /* bind and this cluster's store */
    ks_store *store;
    ks_cache *cache;
    ks_snapshot *snap;
    ks_sym order[256]; /* insertion order */
    size_t n;
    uint64_t last_rv; /* the store's resourceVersions for patches */
    int patches;      /* ks_storage_patch calls */
    int ticks;        /* ks_binding_sleep calls */
    int lag;          /* ks_storage_patch answers versions the store has not reached yet */
    th_tick_fn tick;
    void *tick_arg;
    int services; /* th_cluster_services set the host's scheduler services to this cluster */
};

static void cluster_free(void *p)
{
    th_cluster *c = p;
    if (c->services)
        ks__host_set_sched(NULL);
    ks__dra_manager_free(c->hooks.dra);
    ks__store_free(c->store);
    ks__snapshot_free(c->snap);
    ks__cache_free(c->cache);
    free(c);
}

static ks_code harness_patch_storage(void *ctx, const ks_pod *pod, int kind, ks_sym ns, ks_sym name,
                                     const char *patch, char *rv, ks_status *st)
{
    th_cluster *c = ctx;
    (void)pod;
    c->patches++;
    cJSON *p = cJSON_Parse(patch);
    cr_assert_not_null(p, "PreBind's patch is not JSON: %s", patch);
    char msg[1024];
    ks_store_change chg;
    int rc = ks__store_patch(c->store, (ks_vol_kind)kind, ns, name, p, &c->last_rv, rv, &chg, msg,
                             sizeof(msg));
    cJSON_Delete(p);
    if (rc) {
        ks__status_add(st, msg);
        return KS_ERROR;
    }
    ks__volobj_unref(chg.old_obj);
    ks__volobj_unref(chg.new_obj);
    if (c->lag) /* the API server's answer is ahead of what the informer has delivered */
        snprintf(rv, KS_RESOURCE_VERSION_MAX, "%llu", (unsigned long long)(c->last_rv + 1000));
    return KS_SUCCESS;
}

void th_cluster_lag(th_cluster *c, int on) { c->lag = on; }

void th_cluster_deliver(th_cluster *c, const char *kind, const char *ns, const char *name)
{
    c->last_rv += 1000; /* the next version is past every answer given so far */
    cr_assert_eq(th_cluster_patch(c, kind, ns, name, "{}"), 0);
}

static int harness_binding_sleep(void *ctx, const char *uid, int64_t ns)
{
    th_cluster *c = ctx;
    (void)uid;
    (void)ns;
    c->ticks++;
    return c->tick ? c->tick(c, c->ticks, c->tick_arg) : 0;
}

void th_cluster_binding(th_cluster *c, uint32_t flags, th_tick_fn tick, void *arg)
{
    c->hooks.source_flags = flags;
    c->tick = tick;
    c->tick_arg = arg;
}

int th_cluster_patches(th_cluster *c) { return c->patches; }

static ks_vol_kind kind_of(const char *kind)
{
    int k = ks__volobj_kind(kind);
    cr_assert_geq(k, 0, "not a storage kind: %s", kind);
    return (ks_vol_kind)k;
}

int th_cluster_patch(th_cluster *c, const char *kind, const char *ns, const char *name,
                     const char *patch_json)
{
    cJSON *p = th_json(patch_json);
    char msg[1024], rv[KS_RESOURCE_VERSION_MAX];
    ks_store_change chg;
    int rc = ks__store_patch(c->store, kind_of(kind), ns ? ks__intern(ns) : KS_SYM_EMPTY,
                             ks__intern(name), p, &c->last_rv, rv, &chg, msg, sizeof(msg));
    cJSON_Delete(p);
    if (rc == 0) {
        ks__volobj_unref(chg.old_obj);
        ks__volobj_unref(chg.new_obj);
    }
    return rc;
}

cJSON *th_cluster_object(th_cluster *c, const char *kind, const char *ns, const char *name)
{
    ks__volobj *o = ks__store_volobj_sym(c->store, kind_of(kind),
                                         ns ? ks__intern(ns) : KS_SYM_EMPTY, ks__intern(name));
    cJSON *j = o ? cJSON_Parse(o->json) : NULL;
    ks__volobj_unref(o);
    return j;
}

ks_code th_pre_bind(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name,
                    ks_code *preflight, char *reasons, size_t len);

th_cluster *th_cluster_new(void)
{
    th_cluster *c = calloc(1, sizeof(*c));
    cr_assert_not_null(c);
    c->cache = ks__cache_new();
    c->snap = ks__snapshot_new();
    c->store = ks__store_new();
    c->hooks = (ks_cycle_hooks){.bind = harness_bind,
                                .bind_ctx = c,
                                .store = c->store,
                                .patch_storage = harness_patch_storage,
                                .binding_sleep = harness_binding_sleep,
                                .dra = ks__dra_manager_new()};
    cr_assert_not_null(c->hooks.dra);
    defer(cluster_free, c);
    return c;
}

ks_cycle_hooks *th_cluster_hooks(th_cluster *c) { return &c->hooks; }

void th_cluster_services(th_cluster *c)
{
    c->services = 1;
    ks__host_set_sched(&(ks_host_sched){
        .store = c->store, .dra = c->hooks.dra, .source_flags = c->hooks.source_flags});
}

static void refresh(th_cluster *c)
{
    cr_assert_eq(ks__cache_update_snapshot(c->cache, c->snap), 0);
}

const ks_node_info *th_cluster_add_node(th_cluster *c, const char *node_json)
{
    ks_node *node = th_node(node_json);
    cr_assert_eq(ks__cache_add_node(c->cache, node), 0);
    cr_assert_lt(c->n, 256);
    c->order[c->n++] = node->name;
    refresh(c);
    return ks__snapshot_find(c->snap, node->name);
}

void th_cluster_add_pod(th_cluster *c, const char *pod_json)
{
    ks_pod *pod = th_pod(pod_json);
    cr_assert_neq(pod->node_name, KS_SYM_EMPTY, "harness: th_cluster_add_pod needs spec.nodeName");
    cr_assert_eq(ks__cache_add_pod(c->cache, pod), 0);
    refresh(c);
}

void th_cluster_add_object(th_cluster *c, const char *json)
{
    char err[512] = "";
    cJSON *obj = th_json(json);
    int rc = ks__store_apply(c->store, obj, 0, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "harness: object: %s", err);
}

const ks_node_info *th_cluster_node(th_cluster *c, const char *node_name)
{
    refresh(c);
    return ks__snapshot_find(c->snap, ks__intern(node_name));
}

struct th_plugin {
    const ks_plugin_desc *desc;
    void *self;
    struct ks_args args;
    cJSON *json;
};

void *th_plugin_self(th_plugin *p) { return p->self; }

static void plugin_free(void *p)
{
    th_plugin *pl = p;
    if (pl->desc->destroy && pl->self)
        pl->desc->destroy(pl->self);
    cJSON_Delete(pl->json);
    free(pl->args.text);
    free(pl);
}

th_plugin *th_plugin_try_new(const ks_plugin_desc *desc, const char *args_json, char *err,
                             size_t errlen)
{
    th_plugin *p = calloc(1, sizeof(*p));
    struct ks_error e = {{0}};
    cr_assert_not_null(p);
    p->desc = desc;
    if (args_json)
        p->json = th_json(args_json);
    p->args.json = p->json;
    if (desc->create) {
        p->self = desc->create(&p->args, &e);
        if (!p->self) {
            if (err)
                snprintf(err, errlen, "%s", e.msg);
            cJSON_Delete(p->json);
            free(p);
            return NULL;
        }
    }
    defer(plugin_free, p);
    return p;
}

th_plugin *th_plugin_new(const ks_plugin_desc *desc, const char *args_json)
{
    char err[512] = "";
    th_plugin *p = th_plugin_try_new(desc, args_json, err, sizeof(err));
    cr_assert_not_null(p, "harness: %s create failed: %s", desc->name, err);
    return p;
}

static void copy_reasons(const ks_status *st, char *out, size_t len)
{
    if (out && len)
        ks__status_message(st, out, len);
}

static void cycle_free_v(void *p) { ks__cycle_free(p); }

ks_code th_filter(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name, char *reasons,
                  size_t len)
{
    ks_status st;
    refresh(c);
    const ks_node_info *ni = ks__snapshot_find(c->snap, ks__intern(node_name));
    cr_assert_not_null(ni, "harness: no node %s in the cluster", node_name);
    ks_cycle *cycle = ks__cycle_new(c->snap, pod);
    cycle->hooks = &c->hooks;
    defer(cycle_free_v, cycle);
    if (reasons && len)
        reasons[0] = '\0';
    if (p->desc->pre_filter) {
        ks_prefilter_result r = {0};
        ks__status_reset(&st);
        ks_code code = p->desc->pre_filter(p->self, cycle, pod, &r, &st);
        int excluded = r.used;
        if (r.used) {
            excluded = 1;
            for (size_t i = 0; i < r.n; i++)
                if (r.nodes[i] == ni->name)
                    excluded = 0;
        }
        free(r.nodes);
        if (code == KS_SKIP)
            return KS_SUCCESS;
        if (code != KS_SUCCESS) {
            copy_reasons(&st, reasons, len);
            return code;
        }
        if (excluded) {
            if (reasons && len)
                snprintf(reasons, len, "node(s) didn't satisfy plugin(s) [%s]", p->desc->name);
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
    }
    if (!p->desc->filter)
        return KS_SUCCESS;
    ks__status_reset(&st);
    ks_code code = p->desc->filter(p->self, cycle, pod, ni, &st);
    copy_reasons(&st, reasons, len);
    return code;
}

ks_code th_filter_steps(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name,
                        const th_steps *o, ks_code *pre, char *pre_reasons, size_t plen,
                        char *reasons, size_t len)
{
    ks_status st;
    ks__status_reset(&st);
    refresh(c);
    const ks_node_info *ni = ks__snapshot_find(c->snap, ks__intern(node_name));
    cr_assert_not_null(ni, "harness: no node %s in the cluster", node_name);
    ks_cycle *cycle = ks__cycle_new(c->snap, pod);
    cycle->hooks = &c->hooks;
    defer(cycle_free_v, cycle);
    if (pre_reasons && plen)
        pre_reasons[0] = '\0';
    if (reasons && len)
        reasons[0] = '\0';
    *pre = KS_SUCCESS;
    if (p->desc->pre_filter) {
        ks_prefilter_result r = {0};
        ks__status_reset(&st);
        *pre = p->desc->pre_filter(p->self, cycle, pod, &r, &st);
        free(r.nodes);
        copy_reasons(&st, pre_reasons, plen);
    }
    if (*pre != KS_SUCCESS && !(o && o->filter_always))
        return KS_SUCCESS;
    for (int k = 0; o && k < 2; k++) {
        const ks_pod *other = k ? o->remove : o->add;
        if (!other)
            continue;
        ks__status_reset(&st);
        ks_code code = k ? p->desc->pre_filter_remove_pod(p->self, cycle, pod, other, ni, &st)
                         : p->desc->pre_filter_add_pod(p->self, cycle, pod, other, ni, &st);
        char msg[512];
        ks__status_message(&st, msg, sizeof(msg));
        cr_assert_eq(code, KS_SUCCESS, "harness: %s: %s", k ? "RemovePod" : "AddPod", msg);
    }
    if (!p->desc->filter)
        return KS_SUCCESS;
    ks__status_reset(&st);
    ks_code code = p->desc->filter(p->self, cycle, pod, ni, &st);
    copy_reasons(&st, reasons, len);
    return code;
}

ks_code th_post_filter(th_plugin *p, th_cluster *c, ks_pod *pod, char *reasons, size_t len)
{
    ks_status st;
    refresh(c);
    ks_cycle *cycle = ks__cycle_new(c->snap, pod);
    cycle->hooks = &c->hooks;
    defer(cycle_free_v, cycle);
    if (reasons && len)
        reasons[0] = '\0';
    ks_code pre = KS_SUCCESS;
    if (p->desc->pre_filter) {
        ks_prefilter_result r = {0};
        ks__status_reset(&st);
        pre = p->desc->pre_filter(p->self, cycle, pod, &r, &st);
        free(r.nodes);
    }
    for (size_t i = 0; pre == KS_SUCCESS && p->desc->filter && i < c->n; i++) {
        ks__status_reset(&st);
        (void)p->desc->filter(p->self, cycle, pod, ks__snapshot_find(c->snap, c->order[i]), &st);
    }
    cr_assert_not_null(p->desc->post_filter, "harness: %s has no PostFilter", p->desc->name);
    struct ks_post_filter_result r;
    memset(&r, 0, sizeof(r));
    r.nominated = KS_SYM_ABSENT;
    ks__status_reset(&st);
    ks_code code = p->desc->post_filter(p->self, cycle, pod, NULL, &r, &st);
    ks__post_filter_result_clear(&r);
    copy_reasons(&st, reasons, len);
    return code;
}

/* PreFilter (a Skip counts as success), then Reserve on node, in one cycle; st gets the reasons
 * of the first failure. */
static ks_code prefilter_then_reserve(th_plugin *p, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                                      ks_status *st)
{
    ks_code code = KS_SUCCESS;
    ks__status_reset(st);
    if (p->desc->pre_filter) {
        ks_prefilter_result r = {0};
        code = p->desc->pre_filter(p->self, cycle, pod, &r, st);
        free(r.nodes);
        if (code == KS_SKIP)
            code = KS_SUCCESS;
    }
    if (code == KS_SUCCESS && filter_before_reserve && p->desc->filter) {
        const ks_node_info *ni = ks__snapshot_find(cycle->snap, node);
        cr_assert_not_null(ni, "harness: no node %s", ks__sym_str(node));
        ks__status_reset(st);
        code = p->desc->filter(p->self, cycle, pod, ni, st);
    }
    if (code == KS_SUCCESS && p->desc->reserve) {
        ks__status_reset(st);
        code = p->desc->reserve(p->self, cycle, pod, node, st);
    }
    return code;
}

ks_code th_reserve(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name, int unreserve,
                   char *reasons, size_t len)
{
    ks_status st;
    refresh(c);
    ks_cycle *cycle = ks__cycle_new(c->snap, pod);
    cycle->hooks = &c->hooks;
    defer(cycle_free_v, cycle);
    if (reasons && len)
        reasons[0] = '\0';
    ks_code code = prefilter_then_reserve(p, cycle, pod, ks__intern(node_name), &st);
    copy_reasons(&st, reasons, len);
    if (unreserve && p->desc->unreserve)
        p->desc->unreserve(p->self, cycle, pod, ks__intern(node_name));
    return code;
}

ks_code th_pre_bind(th_plugin *p, th_cluster *c, ks_pod *pod, const char *node_name,
                    ks_code *preflight, char *reasons, size_t len)
{
    ks_status st;
    ks_sym node = ks__intern(node_name);
    refresh(c);
    ks_cycle *cycle = ks__cycle_new(c->snap, pod);
    cycle->hooks = &c->hooks;
    defer(cycle_free_v, cycle);
    if (reasons && len)
        reasons[0] = '\0';
    if (preflight)
        *preflight = KS_SUCCESS;
    ks_code code = prefilter_then_reserve(p, cycle, pod, node, &st);
    ks_code pf = KS_SUCCESS;
    if (code == KS_SUCCESS && p->desc->pre_bind_pre_flight) {
        ks_prebind_preflight res;
        memset(&res, 0, sizeof(res));
        ks__status_reset(&st);
        pf = p->desc->pre_bind_pre_flight(p->self, cycle, pod, node, &res, &st);
        if (preflight)
            *preflight = pf;
        if (pf != KS_SUCCESS && pf != KS_SKIP)
            code = pf;
    }
    if (code == KS_SUCCESS && pf != KS_SKIP && p->desc->pre_bind) {
        ks__status_reset(&st);
        code = p->desc->pre_bind(p->self, cycle, pod, node, &st);
        if (code != KS_SUCCESS && p->desc->unreserve)
            p->desc->unreserve(p->self, cycle, pod, node);
    }
    copy_reasons(&st, reasons, len);
    return code;
}

ks_code th_score(th_plugin *p, th_cluster *c, ks_pod *pod, int64_t *raw, int64_t *normalized)
{
    return th_score_steps(p, c, pod, 0, raw, normalized);
}

ks_code th_score_steps(th_plugin *p, th_cluster *c, ks_pod *pod, int with_pre_filter, int64_t *raw,
                       int64_t *normalized)
{
    ks_status st;
    const ks_node_info *nodes[256];
    ks_node_score scores[256];
    refresh(c);
    for (size_t i = 0; i < c->n; i++)
        nodes[i] = ks__snapshot_find(c->snap, c->order[i]);
    ks_cycle *cycle = ks__cycle_new(c->snap, pod);
    cycle->hooks = &c->hooks;
    defer(cycle_free_v, cycle);
    if (with_pre_filter && p->desc->pre_filter) {
        ks_prefilter_result r = {0};
        ks__status_reset(&st);
        ks_code code = p->desc->pre_filter(p->self, cycle, pod, &r, &st);
        free(r.nodes);
        if (code == KS_SKIP)
            code = KS_SUCCESS;
        if (code != KS_SUCCESS)
            return code;
    }
    for (size_t i = 0; with_pre_filter == 2 && p->desc->filter && i < c->n; i++) {
        ks__status_reset(&st);
        (void)p->desc->filter(p->self, cycle, pod, nodes[i], &st);
    }
    if (p->desc->pre_score) {
        ks__status_reset(&st);
        ks_code code = p->desc->pre_score(p->self, cycle, pod, nodes, c->n, &st);
        if (code == KS_SKIP) {
            for (size_t i = 0; i < c->n; i++) {
                if (raw)
                    raw[i] = 0;
                if (normalized)
                    normalized[i] = 0;
            }
            return KS_SUCCESS;
        }
        if (code != KS_SUCCESS)
            return code;
    }
    cr_assert_not_null(p->desc->score, "harness: %s has no Score", p->desc->name);
    for (size_t i = 0; i < c->n; i++) {
        int64_t v = 0;
        ks__status_reset(&st);
        ks_code code = p->desc->score(p->self, cycle, pod, nodes[i], &v, &st);
        if (code != KS_SUCCESS)
            return code;
        scores[i] = (ks_node_score){nodes[i], v};
        if (raw)
            raw[i] = v;
    }
    if (p->desc->normalize_score) {
        ks__status_reset(&st);
        ks_code code = p->desc->normalize_score(p->self, cycle, pod, scores, c->n, &st);
        if (code != KS_SUCCESS)
            return code;
    }
    for (size_t i = 0; normalized && i < c->n; i++)
        normalized[i] = scores[i].score;
    return KS_SUCCESS;
}

ks_code th_pre_enqueue(th_plugin *p, ks_pod *pod, char *reasons, size_t len)
{
    ks_status st;
    ks__status_reset(&st);
    cr_assert_not_null(p->desc->pre_enqueue, "harness: %s has no PreEnqueue", p->desc->name);
    ks_code code = p->desc->pre_enqueue(p->self, pod, &st);
    copy_reasons(&st, reasons, len);
    return code;
}

int th_less(th_plugin *p, ks_pod *a, int64_t ts_a, ks_pod *b, int64_t ts_b)
{
    ks_queued_pod qa, qb;
    memset(&qa, 0, sizeof(qa));
    memset(&qb, 0, sizeof(qb));
    qa.pod = a;
    qa.timestamp_ns = ts_a;
    qb.pod = b;
    qb.timestamp_ns = ts_b;
    cr_assert_not_null(p->desc->less, "harness: %s has no QueueSort", p->desc->name);
    return p->desc->less(p->self, &qa, &qb);
}

ks_code th_bind(th_plugin *p, ks_pod *pod, const char *node_name, char *reasons, size_t len)
{
    ks_status st;
    ks__status_reset(&st);
    cr_assert_not_null(p->desc->bind, "harness: %s has no Bind", p->desc->name);
    ks_cycle *cycle = ks__cycle_new(NULL, pod);
    cycle->hooks = &bind_only_hooks;
    defer(cycle_free_v, cycle);
    ks_code code = p->desc->bind(p->self, cycle, pod, ks__intern(node_name), &st);
    copy_reasons(&st, reasons, len);
    return code;
}

const char *th_bound_node(ks_pod *pod) { return ks__strmap_get(&bound, pod->uid); }
