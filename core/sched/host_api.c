/*
 * The host function table (ks_host_api, ABI 1.0): thin accessors over the compact structs of
 * objects.h, cache.h and framework.h. Every slot is filled; plugins test newer ones with
 * KS_HOST_HAS. See sdk/kubesched/plugin.h for the contract of each slot.
 */
#include "util/numconv.h"
#include "sched/isolation.h"
#include "sched/host_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/cache.h"
#include "sched/framework.h"
#include "api/intern.h"
#include "util/errors.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/metrics.h"
#include "api/objects.h"
#include "api/quantity.h"
#include "sched/queue.h"
#include "api/store.h"
#include "api/custom_objects.h"
#include "api/podgroup_objects.h"
#include "api/dra_objects.h"
#include "sched/dra_manager.h"

/* The one process-wide hook: Permit's waiting pods. ks_permit_allow / ks_permit_reject name a pod
 * by uid and carry no cycle or scheduler handle (a plugin calls them from any thread, typically
 * its own, after the cycle that said Wait has ended), so the SDK gives no way to reach the
 * scheduler that waits on the pod; until it does, the running scheduler registers itself here.
 * Everything else a plugin reaches through its cycle (ks_cycle_hooks). Set before scheduling
 * starts, read-only afterwards. */
static ks_permit_hook permit_hook;
static void *permit_ctx;

void ks__host_set_permit_hook(ks_permit_hook hook, void *ctx)
{
    permit_hook = hook;
    permit_ctx = ctx;
}

static ks_metrics *plugin_metrics;
static ks_host_sched sched_services; /* zeroed: no scheduler */

void ks__host_set_sched(const ks_host_sched *hs)
{
    if (hs)
        sched_services = *hs;
    else
        memset(&sched_services, 0, sizeof(sched_services));
}

void ks__host_set_metrics(ks_metrics *r) { plugin_metrics = r; }

/* ---- plugin metrics (ABI 1.7) -------------------------------------------------------------- */

static ks_counter *h_counter_new(const char *name, const char *help, const char *label)
{
    if (!plugin_metrics || !name || !help || !*help || !label)
        return NULL;
    ks_metric_opts o = {.type = KS_METRIC_COUNTER,
                        .name = name,
                        .help = help,
                        .stability = KS_STABILITY_ALPHA,
                        .labels = &label,
                        .nlabels = 1};
    /* Another profile's instance, or the instance a configuration reload replaced, may have
     * registered it: the same family (registering again would log an error). */
    ks_metric_family *f = ks__metrics_find(plugin_metrics, name);
    int rc = f ? KS_EEXIST : ks__metrics_register(plugin_metrics, &o, &f);
    if (rc == KS_EEXIST) {
        f = ks__metrics_find(plugin_metrics, name);
        if (f &&
            (ks__metrics_family_type(f) != KS_METRIC_COUNTER || ks__metrics_family_nlabels(f) != 1))
            f = NULL;
    }
    return (ks_counter *)f;
}

static void h_counter_inc(ks_counter *c, const char *value)
{
    if (c)
        ks__metrics_inc(KS_METRICS_WITH((ks_metric_family *)c, value));
}

/* ---- memory, strings, logging, errors ------------------------------------------------------ */

static void *h_alloc(size_t n) { return malloc(n); }
static void h_free(void *p) { free(p); }

static int h_log_enabled(int v) { return ks__log_enabled(v); }
static void h_logv(int v, const char *fmt, va_list ap)
{
    (void)v;
    ks__logv('I', ks__fw_current_plugin(), fmt, ap);
}

static void h_error_setv(ks_error *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

/* NULL is passed on: the framework reports it as the plugin's error. */
static void h_status_reason(ks_status *st, const char *r) { ks__status_add(st, r); }
static void h_status_reasonv(ks_status *st, const char *fmt, va_list ap)
{
    char buf[2 * KS_STATUS_BUF]; /* longer than a status holds: ks__status_add marks the cut */
    vsnprintf(buf, sizeof(buf), fmt, ap);
    ks__status_add(st, buf);
}

/* ---- args ---------------------------------------------------------------------------------- */

static const char *h_args_json(const ks_args *a)
{
    struct ks_args *args = (struct ks_args *)a;
    if (!args || !args->json)
        return "{}";
    if (!args->text)
        args->text = cJSON_PrintUnformatted(args->json);
    return args->text ? args->text : "{}";
}

static const cJSON *arg(const ks_args *a, const char *path)
{
    return a && a->json ? ks__args_resolve(a->json, path) : NULL;
}

static int h_args_get_string(const ks_args *a, const char *path, const char **out)
{
    const cJSON *v = arg(a, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsString(v))
        return KS_ETYPE;
    *out = v->valuestring;
    return 0;
}

static int h_args_get_int(const ks_args *a, const char *path, int64_t *out)
{
    const cJSON *v = arg(a, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsNumber(v) || !ks__is_i64(v->valuedouble))
        return KS_ETYPE;
    *out = (int64_t)v->valuedouble;
    return 0;
}

static int h_args_get_double(const ks_args *a, const char *path, double *out)
{
    const cJSON *v = arg(a, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsNumber(v))
        return KS_ETYPE;
    *out = v->valuedouble;
    return 0;
}

static int h_args_get_bool(const ks_args *a, const char *path, int *out)
{
    const cJSON *v = arg(a, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsBool(v))
        return KS_ETYPE;
    *out = cJSON_IsTrue(v);
    return 0;
}

static int h_args_count(const ks_args *a, const char *path, size_t *out)
{
    const cJSON *v = arg(a, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsArray(v))
        return KS_ETYPE;
    *out = (size_t)cJSON_GetArraySize(v);
    return 0;
}

/* A quantity given as a JSON string ("500m") or number (2), in units or milli-units. */
static int json_quantity(const cJSON *v, int milli, int64_t *out)
{
    char buf[64];
    const char *text;
    int64_t value, mv;
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (cJSON_IsString(v))
        text = v->valuestring;
    else if (cJSON_IsNumber(v)) {
        snprintf(buf, sizeof(buf), "%.15g", v->valuedouble);
        text = buf;
    } else
        return KS_ETYPE;
    if (ks__quantity_parse(text, &value, &mv) != 0)
        return KS_EPARSE;
    *out = milli ? mv : value;
    return 0;
}

static int h_args_get_quantity(const ks_args *a, const char *path, int milli, int64_t *out)
{
    return json_quantity(arg(a, path), milli, out);
}

/* ---- pods ---------------------------------------------------------------------------------- */

static ks_sym p_name(const ks_pod *p) { return p->name; }
static ks_sym p_namespace(const ks_pod *p) { return p->ns; }
static const char *p_uid(const ks_pod *p) { return p->uid; }
static ks_sym p_scheduler_name(const ks_pod *p) { return p->scheduler_name; }
static ks_sym p_node_name(const ks_pod *p) { return p->node_name; }
static ks_sym p_nominated(const ks_pod *p) { return p->nominated_node_name; }
static int32_t p_priority(const ks_pod *p) { return p->priority; }
static int p_terminating(const ks_pod *p) { return p->terminating; }
static size_t p_labels(const ks_pod *p, const ks_label **o)
{
    *o = p->labels;
    return p->nlabels;
}
static ks_sym p_label(const ks_pod *p, ks_sym k)
{
    return ks__labels_get(p->labels, p->nlabels, k);
}
static size_t p_annotations(const ks_pod *p, const ks_label **o)
{
    *o = p->annotations;
    return p->nannotations;
}
static const ks_resources *p_requests(const ks_pod *p) { return &p->requests.pub; }
static const ks_resources *p_nonzero(const ks_pod *p) { return &p->nonzero_requests.pub; }
static size_t p_tolerations(const ks_pod *p, const ks_toleration **o)
{
    *o = p->tolerations;
    return p->ntolerations;
}
static size_t p_node_selector(const ks_pod *p, const ks_label **o)
{
    *o = p->node_selector;
    return p->nselector;
}
static const ks_node_affinity *p_node_affinity(const ks_pod *p) { return p->node_affinity; }
static size_t p_images(const ks_pod *p, const ks_sym **o)
{
    *o = p->images;
    return p->nimages;
}
static size_t p_host_ports(const ks_pod *p, const ks_host_port **o)
{
    *o = p->host_ports;
    return p->nports;
}
static size_t p_gates(const ks_pod *p, const ks_sym **o)
{
    *o = p->gates;
    return p->ngates;
}
static const char *p_json(const ks_pod *p) { return p->json; }
static uint32_t p_spec_flags(const ks_pod *p) { return p->spec_flags; }
static size_t p_image_volumes(const ks_pod *p, const ks_sym **o)
{
    *o = p->image_volumes;
    return p->nimage_volumes;
}

/* ---- nodes, node infos, snapshot ----------------------------------------------------------- */

static ks_sym n_name(const ks_node *n) { return n->name; }
static size_t n_labels(const ks_node *n, const ks_label **o)
{
    *o = n->labels;
    return n->nlabels;
}
static ks_sym n_label(const ks_node *n, ks_sym k)
{
    return ks__labels_get(n->labels, n->nlabels, k);
}
static size_t n_annotations(const ks_node *n, const ks_label **o)
{
    *o = n->annotations;
    return n->nannotations;
}
static int n_unschedulable(const ks_node *n) { return n->unschedulable; }
static size_t n_taints(const ks_node *n, const ks_taint **o)
{
    *o = n->taints;
    return n->ntaints;
}
static const ks_resources *n_allocatable(const ks_node *n) { return &n->allocatable.pub; }
static size_t n_images(const ks_node *n, const ks_node_image **o)
{
    *o = n->images;
    return n->nimages;
}
static const char *n_json(const ks_node *n) { return n->json; }
static size_t n_declared_features(const ks_node *n, const ks_sym **o)
{
    *o = n->declared_features;
    return n->ndeclared_features;
}

static const ks_node *ni_node(const ks_node_info *ni) { return ni->node; }
static size_t ni_pod_count(const ks_node_info *ni) { return ni->npods; }
static const ks_pod *ni_pod_at(const ks_node_info *ni, size_t i)
{
    if (i >= ni->npods)
        return NULL;
    if (i + 1 < ni->npods)
        __builtin_prefetch(ni->pods[i + 1]);
    return ni->pods[i];
}
static const ks_resources *ni_requested(const ks_node_info *ni) { return &ni->requested.pub; }
static const ks_resources *ni_nonzero(const ks_node_info *ni) { return &ni->nonzero_requested.pub; }

static const ks_snapshot *c_snapshot(ks_cycle *c) { return c->snap; }
static size_t s_count(const ks_snapshot *s) { return s->nnodes; }
/* Plugins walk the snapshot in order (PreFilter/PreScore passes over every node): fetch the
 * NodeInfos a few steps ahead, and what the next ones point to, so the misses overlap. */
static const ks_node_info *s_at(const ks_snapshot *s, size_t i)
{
    if (i >= s->nnodes)
        return NULL;
    if (i + 4 < s->nnodes)
        __builtin_prefetch(s->nodes[i + 4]);
    if (i + 2 < s->nnodes) {
        const ks_node_info *next = s->nodes[i + 2];
        __builtin_prefetch(next->node);
        __builtin_prefetch(next->pods);
        __builtin_prefetch(next->ns_groups);
    }
    if (i + 1 < s->nnodes && s->nodes[i + 1]->node)
        __builtin_prefetch(s->nodes[i + 1]->node->labels);
    return s->nodes[i];
}
static const ks_node_info *s_node(const ks_snapshot *s, ks_sym name)
{
    return ks__snapshot_find(s, name);
}

/* framework.c */
int ks__cycle_write_impl(ks_cycle *c, const void *key, void *data, const ks_state_ops *ops);
void *ks__cycle_read_impl(ks_cycle *c, const void *key);
void *ks__cycle_alloc_impl(ks_cycle *c, size_t n);

static const ks_pod *q_pod(const ks_queued_pod *q) { return q->pod; }
static int64_t q_ts(const ks_queued_pod *q) { return q->timestamp_ns; }
static int32_t q_attempts(const ks_queued_pod *q) { return q->attempts; }

static void pf_add_node(ks_prefilter_result *r, ks_sym node)
{
    r->used = 1;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        ks_sym *n = realloc(r->nodes, cap * sizeof(*n));
        if (!n)
            return;
        r->nodes = n;
        r->cap = cap;
    }
    r->nodes[r->n++] = node;
}

static ks_code fo_code(const ks_filter_outcome *o, const ks_node_info *node)
{
    if (o->all_nodes)
        return o->all_nodes->code;
    size_t i = node->snap_index;
    if (i >= o->snap->nnodes || o->snap->nodes[i]->name != node->name)
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    return o->evaluated[i] ? o->by_index[i].code : KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static void pf_nominate(ks_post_filter_result *r, ks_sym node) { r->nominated = node; }

static int h_permit_allow(const char *uid, const char *plugin)
{
    return permit_hook ? permit_hook(permit_ctx, uid, plugin, 1, NULL) : KS_ENOTFOUND;
}

static int h_permit_reject(const char *uid, const char *plugin, const char *msg)
{
    return permit_hook ? permit_hook(permit_ctx, uid, plugin, 0, msg) : KS_ENOTFOUND;
}

static ks_code h_bind_pod(ks_cycle *c, const ks_pod *pod, ks_sym node, ks_status *st)
{
    if (!c->hooks || !c->hooks->bind) {
        ks__status_add(st, "no cluster source to bind with");
        return KS_ERROR;
    }
    return c->hooks->bind(c->hooks->bind_ctx, c, pod, node, st);
}

/* The store behind the cycle: its scheduler's. NULL (no Namespaces, workloads or PDBs) for a
 * cycle made without hooks. */
static struct ks_store *store_of(const ks_cycle *c)
{
    return c && c->hooks ? c->hooks->store : NULL;
}

/* ---- ABI 1.1 ------------------------------------------------------------------------------- */

static const ks_pod_affinity *p_pod_affinity(const ks_pod *p) { return p->pod_affinity; }
static size_t p_spread(const ks_pod *p, const ks_topology_spread_constraint **o)
{
    *o = p->spread;
    return p->nspread;
}
static size_t ni_ports(const ks_node_info *ni, const ks_host_port **o)
{
    *o = ni->ports;
    return ni->nports;
}
static size_t ni_with_affinity(const ks_node_info *ni, const ks_pod *const **o)
{
    *o = ni->with_affinity;
    return ni->naffinity;
}
static size_t ni_with_anti(const ks_node_info *ni, const ks_pod *const **o)
{
    *o = ni->with_anti;
    return ni->nanti;
}
static size_t s_image_nodes(const ks_snapshot *s, ks_sym image)
{
    return ks__snapshot_image_nodes(s, image);
}
static int64_t s_image_size(const ks_snapshot *s, ks_sym image)
{
    return ks__snapshot_image_size(s, image);
}

static int h_namespace_labels(ks_cycle *c, ks_sym ns, const ks_label **out, size_t *n)
{
    struct ks_store *store = store_of(c);
    *out = NULL;
    *n = 0;
    return store ? ks__store_namespace_labels(store, ns, out, n) : KS_ENOTFOUND;
}

static size_t h_owner_selectors(ks_cycle *c, const ks_pod *pod, const ks_label_selector **out)
{
    ks_label_selector buf[16];
    struct ks_store *store = store_of(c);
    *out = NULL;
    if (!store)
        return 0;
    size_t n = ks__store_owner_selectors(store, pod->ns, pod->labels, pod->nlabels, buf, 16);
    ks_label_selector *all = n ? ks__cycle_alloc_impl(c, n * sizeof(*all)) : NULL;
    if (!all)
        return 0;
    if (n > 16) /* rare: ask again with room for all of them */
        n = ks__store_owner_selectors(store, pod->ns, pod->labels, pod->nlabels, all, n);
    else
        memcpy(all, buf, n * sizeof(*all));
    *out = all;
    return n;
}

/* ---- ABI 1.2: preemption ------------------------------------------------------------------- */

static int p_preemption_never(const ks_pod *p) { return p->preemption_never; }
static int64_t p_start_time(const ks_pod *p) { return p->start_time_ns; }
static ks_node_info *h_ni_clone(ks_cycle *c, const ks_node_info *ni)
{
    return ks__cycle_clone_node_info(c, ni);
}
static int h_ni_remove_pod(ks_node_info *ni, const ks_pod *p)
{
    return ks__node_info_remove_pod(ni, p->uid);
}
static int h_ni_add_pod(ks_node_info *ni, const ks_pod *p)
{
    return ks__node_info_add_pod(ni, (ks_pod *)p);
}

static ks_cycle *h_cycle_clone(ks_cycle *c)
{
    ks_cycle *k = ks__cycle_clone(c);
    if (k) {
        k->next_clone = c->clones;
        c->clones = k;
    }
    return k;
}

static ks_code h_run_filters(ks_cycle *state, const ks_pod *pod, const ks_node_info *ni,
                             ks_status *st)
{
    ks__status_reset(st);
    if (!state->fw) {
        ks__status_add(st, "run_filters: this cycle has no framework");
        return KS_ERROR;
    }
    return ks__fw_run_filter_with_nominated(state->fw, state, (ks_pod *)pod, ni, st, NULL);
}

static ks_code h_run_add_pod(ks_cycle *state, const ks_pod *pod, const ks_pod *other,
                             const ks_node_info *ni, ks_status *st)
{
    return state->fw ? ks__fw_run_prefilter_add_pod(state->fw, state, pod, other, ni, st)
                     : KS_ERROR;
}

static ks_code h_run_remove_pod(ks_cycle *state, const ks_pod *pod, const ks_pod *other,
                                const ks_node_info *ni, ks_status *st)
{
    return state->fw ? ks__fw_run_prefilter_remove_pod(state->fw, state, pod, other, ni, st)
                     : KS_ERROR;
}

static size_t h_pdbs(ks_cycle *c, const ks_pdb_info **out)
{
    ks_pdb *pdbs = NULL;
    struct ks_store *store = store_of(c);
    *out = NULL;
    if (!store)
        return 0;
    size_t n = ks__store_pdbs(store, &pdbs);
    ks_pdb_info *info = n ? ks__cycle_alloc_impl(c, n * sizeof(*info)) : NULL;
    for (size_t i = 0; info && i < n; i++)
        info[i] = (ks_pdb_info){pdbs[i].ns,         pdbs[i].name,
                                pdbs[i].selector,   pdbs[i].disruptions_allowed,
                                pdbs[i].ndisrupted, pdbs[i].disrupted};
    free(pdbs);
    *out = info;
    return info ? n : 0;
}

static void h_add_victim(ks_post_filter_result *r, const ks_pod *victim)
{
    if (r->nvictims == r->victims_cap) {
        size_t cap = r->victims_cap ? r->victims_cap * 2 : 8;
        ks_pod **v = realloc(r->victims, cap * sizeof(*v));
        if (!v)
            return;
        r->victims = v;
        r->victims_cap = cap;
    }
    r->victims[r->nvictims++] = ks__pod_ref((ks_pod *)victim);
}

static int64_t h_rand_below(ks_cycle *c, int64_t n)
{
    if (n <= 0)
        return 0;
    if (!c->hooks || !c->hooks->rand)
        return 0;
    return (int64_t)(c->hooks->rand(c->hooks->rand_ctx) % (uint64_t)n);
}

static size_t h_nominated_pods(ks_cycle *c, ks_sym node, const ks_pod *const **out)
{
    *out = NULL;
    for (size_t i = 0; c->hooks && i < c->hooks->nnominated; i++)
        if (c->hooks->nominated[i].node == node) {
            *out = c->hooks->nominated[i].pods;
            return c->hooks->nominated[i].n;
        }
    return 0;
}

static size_t s_affinity_nodes(const ks_snapshot *s, int anti_only, const ks_node_info *const **out)
{
    *out = anti_only ? s->with_anti : s->with_affinity;
    return anti_only ? s->nwith_anti : s->nwith_affinity;
}

static ks_status *h_status_new(ks_cycle *c)
{
    ks_status *st = ks__cycle_alloc_impl(c, sizeof(*st));
    if (st)
        ks__status_reset(st);
    return st;
}

static ks_code h_status_code(const ks_status *st) { return st->code; }
static size_t h_status_reason_count(const ks_status *st) { return st->nreasons; }

static const char *h_status_reason_at(const ks_status *st, size_t i)
{
    const char *r = NULL;
    for (size_t k = 0; k <= i; k++)
        if (!(r = ks__status_next(st, r)))
            return NULL;
    return r;
}

static size_t ni_pods_in_ns(const ks_node_info *ni, ks_sym ns, const ks_pod *const **out)
{
    *out = NULL;
    for (size_t g = 0; g < ni->nns_groups; g++) {
        if (ni->ns_groups[g].ns == ns) {
            *out = ni->ns_pods + ni->ns_groups[g].start;
            return ni->ns_groups[g].count;
        }
        if (ni->ns_groups[g].ns > ns)
            break;
    }
    return 0;
}

static uint64_t s_version(const ks_snapshot *s, uint64_t *seq)
{
    if (seq)
        *seq = s->update_seq;
    return s->version;
}

static size_t s_changed(const ks_snapshot *s, const uint32_t **idx)
{
    *idx = s->changed;
    return s->nchanged;
}

/* ---- ABI 1.5: volumes ---------------------------------------------------------------------- */

static ks_code h_storage_patch(ks_cycle *c, ks_storage_kind kind, ks_sym ns, ks_sym name,
                               const char *patch, char *rv, ks_status *st)
{
    if (kind != KS_STORAGE_PERSISTENT_VOLUME && kind != KS_STORAGE_PERSISTENT_VOLUME_CLAIM) {
        char m[64];
        snprintf(m, sizeof(m), "storage_patch: unknown kind %d", (int)kind);
        ks__status_add(st, m);
        return KS_ERROR;
    }
    if (!patch || !rv || name == KS_SYM_ABSENT || name == KS_SYM_EMPTY) {
        ks__status_add(st, "storage_patch: no object name, patch or rv buffer");
        return KS_ERROR;
    }
    if (!c->hooks || !c->hooks->patch_storage) {
        ks__status_add(st, "no cluster source to write storage objects with");
        return KS_ERROR;
    }
    rv[0] = '\0';
    int k = kind == KS_STORAGE_PERSISTENT_VOLUME ? KS_VK_PV : KS_VK_PVC;
    return c->hooks->patch_storage(c->hooks->bind_ctx, c->pod, k, ns, name, patch, rv, st);
}

static int h_binding_sleep(ks_cycle *c, int64_t ns)
{
    if (!c->hooks || !c->hooks->binding_sleep || !c->pod)
        return 0;
    return c->hooks->binding_sleep(c->hooks->bind_ctx, c->pod->uid, ns);
}

static uint32_t h_source_flags(ks_cycle *c) { return c && c->hooks ? c->hooks->source_flags : 0; }

static size_t p_volumes(const ks_pod *p, const ks_pod_volume **o)
{
    *o = p->volumes;
    return p->nvolumes;
}

/* One object of the store, held by the cycle (borrowed(cycle) for the plugin). */
static const ks__volobj *held_one(ks_cycle *c, ks_vol_kind k, ks_sym ns, ks_sym name)
{
    struct ks_store *store = store_of(c);
    if (!store || name == KS_SYM_ABSENT)
        return NULL;
    ks__volobj *o = ks__store_volobj_sym(store, k, ns, name);
    if (!o)
        return NULL;
    return ks__cycle_hold(c, &o, 1) ? o : NULL;
}

static const ks_pvc *h_cycle_pvc(ks_cycle *c, ks_sym ns, ks_sym name)
{
    return (const ks_pvc *)held_one(c, KS_VK_PVC, ns, name);
}
static const ks_pv *h_cycle_pv(ks_cycle *c, ks_sym name)
{
    return (const ks_pv *)held_one(c, KS_VK_PV, KS_SYM_EMPTY, name);
}
static const ks_storage_class *h_cycle_sc(ks_cycle *c, ks_sym name)
{
    return (const ks_storage_class *)held_one(c, KS_VK_STORAGE_CLASS, KS_SYM_EMPTY, name);
}
static const ks_csi_node *h_cycle_csi_node(ks_cycle *c, ks_sym name)
{
    return (const ks_csi_node *)held_one(c, KS_VK_CSI_NODE, KS_SYM_EMPTY, name);
}
static const ks_csi_driver *h_cycle_csi_driver(ks_cycle *c, ks_sym name)
{
    return (const ks_csi_driver *)held_one(c, KS_VK_CSI_DRIVER, KS_SYM_EMPTY, name);
}

static int pv_of_class(const ks__volobj *o, void *ctx)
{
    return ((const ks_pv *)o)->v.storage_class == *(const ks_sym *)ctx;
}

/* A list of the store's objects, held by the cycle; the hold's array is what the plugin gets. */
static size_t held_list(ks_cycle *c, ks_vol_kind k, int (*filter)(const ks__volobj *, void *),
                        void *ctx, const void *const **out)
{
    struct ks_store *store = store_of(c);
    ks__volobj **objs;
    *out = NULL;
    if (!store)
        return 0;
    size_t n = ks__store_volobjs(store, k, filter, ctx, &objs);
    if (!n)
        return 0;
    struct ks_cycle_hold *h = ks__cycle_hold(c, objs, n);
    free(objs);
    if (!h)
        return 0;
    *out = (const void *const *)h->objs;
    return n;
}

static size_t h_cycle_pvs(ks_cycle *c, ks_sym storage_class, const ks_pv *const **out)
{
    return held_list(c, KS_VK_PV, storage_class == KS_SYM_ABSENT ? NULL : pv_of_class,
                     &storage_class, (const void *const **)out);
}

static size_t h_cycle_capacities(ks_cycle *c, const ks_csi_storage_capacity *const **out)
{
    return held_list(c, KS_VK_CSI_STORAGE_CAPACITY, NULL, NULL, (const void *const **)out);
}

/* upstream snapshot.usedPVCSet (built from every node's PVCRefCounts: the pods'
 * persistentVolumeClaim volumes, not ephemeral ones), asked by scanning: only a pod with a
 * ReadWriteOncePod claim asks. */
static int s_pvc_in_use(const ks_snapshot *s, ks_sym ns, ks_sym name)
{
    for (size_t i = 0; i < s->nnodes; i++) {
        const ks_node_info *ni = s->nodes[i];
        for (size_t j = 0; j < ni->npods; j++) {
            const ks_pod *p = ni->pods[j];
            if (!p->nvolumes || p->ns != ns)
                continue;
            for (size_t v = 0; v < p->nvolumes; v++)
                if (p->volumes[v].source == KS_VOLSRC_PVC && p->volumes[v].claim == name)
                    return 1;
        }
    }
    return 0;
}

/* ---- ABI 1.6: VolumeAttachments ------------------------------------------------------------ */

/* upstream's VolumeAttachment indexer by spec.nodeName (the store keeps the index), held by the
 * cycle. */
static size_t h_cycle_vas(ks_cycle *c, ks_sym node, const ks_volume_attachment *const **out)
{
    struct ks_store *store = store_of(c);
    ks__volobj **objs;
    *out = NULL;
    if (!store)
        return 0;
    size_t n = ks__store_volume_attachments_on(store, node, &objs);
    if (!n)
        return 0;
    struct ks_cycle_hold *h = ks__cycle_hold(c, objs, n);
    free(objs);
    if (!h)
        return 0;
    *out = (const ks_volume_attachment *const *)h->objs;
    return n;
}

static const ks_volume_attachment_view *v_va(const ks_volume_attachment *o) { return &o->v; }

static const ks_pv_view *v_pv(const ks_pv *o) { return &o->v; }
static const ks_pvc_view *v_pvc(const ks_pvc *o) { return &o->v; }
static const ks_storage_class_view *v_sc(const ks_storage_class *o) { return &o->v; }
static const ks_csi_node_view *v_csi_node(const ks_csi_node *o) { return &o->v; }
static const ks_csi_driver_view *v_csi_driver(const ks_csi_driver *o) { return &o->v; }
static const ks_csi_storage_capacity_view *v_capacity(const ks_csi_storage_capacity *o)
{
    return &o->v;
}

/* ---- ABI 1.8: gang scheduling -------------------------------------------------------------- */

static size_t h_waiting_pods_each(ks_cycle *c, ks_waiting_pod_fn fn, void *ctx)
{
    (void)c; /* one waiting map for every profile, as upstream's */
    if (!fn || !sched_services.waiting_each || ks__iso_in_child)
        return 0; /* isolation.h: the lists' locks may have been held by another thread */
    return sched_services.waiting_each(sched_services.ctx, fn, ctx);
}

static void h_activate_pod(ks_cycle *c, const ks_pod *pod)
{
    if (!c || !pod)
        return;
    size_t n = strlen(pod->uid) + 1;
    struct ks_activate_req *r = ks__cycle_alloc_impl(c, sizeof(*r) + n);
    if (!r) {
        ks__log('W', NULL, "out of memory: pod %s is not activated", pod->key);
        return;
    }
    memcpy(r->uid, pod->uid, n);
    r->next = c->activate;
    c->activate = r;
}

static size_t h_pods_each(ks_cycle *c, ks_sym ns, ks_sym key, ks_sym value, ks_pod_visit_fn fn,
                          void *ctx)
{
    (void)c;
    if (!fn || !sched_services.pods_each || ks__iso_in_child)
        return 0; /* isolation.h */
    return sched_services.pods_each(sched_services.ctx, ns, key, value, fn, ctx);
}

static int64_t h_queued_pod_initial_attempt_unix_ns(const ks_queued_pod *qp)
{
    return qp->initial_attempt_ns ? qp->initial_attempt_ns + sched_services.unix_offset_ns : 0;
}

static KS_PRINTF(2, 3) void error_set(ks_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h_error_setv(err, fmt, ap);
    va_end(ap);
}

static ks_resource *h_resource_watch(const char *api_version, const char *kind, const char *plural,
                                     ks_error *err)
{
    char msg[256];
    const struct ks_resource *r = ks__custom_register(api_version, kind, plural, msg, sizeof(msg));
    if (!r)
        error_set(err, "ks_resource_watch: %s", msg);
    return (ks_resource *)r;
}

static ks_event_resource h_resource_event(const ks_resource *r)
{
    return (ks_event_resource)(KS_RES_CUSTOM_FIRST + r->index);
}

static const ks_object *h_resource_get(const ks_resource *r, ks_sym ns, ks_sym name)
{
    if (ks__iso_in_child)
        return NULL; /* isolation.h */
    return ks__custom_store_get(sched_services.custom, r, ns, name);
}

static void h_object_release(const ks_object *o) { ks__object_unref(o); }

static int h_object_get_string(const ks_object *o, const char *path, const char **out)
{
    const cJSON *v = ks__object_at(o, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsString(v))
        return KS_ETYPE;
    *out = v->valuestring;
    return 0;
}

static int h_object_get_int(const ks_object *o, const char *path, int64_t *out)
{
    const cJSON *v = ks__object_at(o, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsNumber(v) || !ks__is_i64(v->valuedouble))
        return KS_ETYPE;
    *out = (int64_t)v->valuedouble;
    return 0;
}

static int h_object_get_quantity(const ks_object *o, const char *path, int milli, int64_t *out)
{
    return json_quantity(ks__object_at(o, path), milli, out);
}

static int h_object_get_time(const ks_object *o, const char *path, int64_t *unix_ns)
{
    const cJSON *v = ks__object_at(o, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsString(v))
        return KS_ETYPE;
    int64_t t = ks__parse_time_ns(v->valuestring);
    if (t == 0 && strcmp(v->valuestring, "1970-01-01T00:00:00Z") != 0)
        return KS_EPARSE;
    *unix_ns = t;
    return 0;
}

static int h_object_count(const ks_object *o, const char *path, size_t *out)
{
    const cJSON *v = ks__object_at(o, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
        return KS_ETYPE;
    *out = (size_t)cJSON_GetArraySize(v);
    return 0;
}

static int h_object_key_at(const ks_object *o, const char *path, size_t i, const char **out)
{
    const cJSON *v = ks__object_at(o, path);
    if (!v || cJSON_IsNull(v))
        return KS_ENOTFOUND;
    if (!cJSON_IsObject(v))
        return KS_ETYPE;
    const cJSON *item = cJSON_GetArrayItem(v, (int)i);
    if (!item)
        return KS_ENOTFOUND;
    *out = item->string;
    return 0;
}

static const char *h_object_json(const ks_object *o) { return o ? o->text : NULL; }

static int h_object_patch(const ks_resource *r, ks_sym ns, ks_sym name, int status,
                          const char *patch)
{
    if (!r || !patch)
        return KS_EINVAL;
    if (!sched_services.object_patch)
        return KS_ENOTFOUND;
    return sched_services.object_patch(sched_services.ctx, r, ns, name, status, patch);
}

static int h_pod_event(ks_cycle *c, const ks_pod *pod, const char *type, const char *reason,
                       const char *note)
{
    if (!pod || !type || !reason || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0))
        return KS_EINVAL;
    if (!sched_services.pod_event)
        return 0;
    const char *profile = c && c->fw ? c->fw->profile_name : "";
    return sched_services.pod_event(sched_services.ctx, pod, type, reason, note ? note : "",
                                    profile);
}

static int64_t h_clock_now_ns(void)
{
    return sched_services.now ? sched_services.now(sched_services.ctx) : ks__clock_now_ns();
}

/* ---- ABI 1.9: upstream's gang scheduling (GenericWorkload) ------------------------------- */

/* The gate off, upstream's API server drops spec.schedulingGroup: no pod names a group. */
static ks_sym h_pod_scheduling_group(const ks_pod *p)
{
    if (!p || !sched_services.podgroups || p->scheduling_group == KS_SYM_EMPTY)
        return KS_SYM_ABSENT;
    return p->scheduling_group;
}

static const ks_pod_group *h_pod_group_get(ks_sym ns, ks_sym name)
{
    return ks__podgroup_store_get(sched_services.podgroups, ns, name);
}

static void h_pod_group_release(const ks_pod_group *pg) { ks__podgroup_unref(pg); }

static const ks_pod_group_view *h_pod_group_view(const ks_pod_group *pg)
{
    return pg ? &pg->v : NULL;
}

static size_t h_pod_group_members_each(ks_sym ns, ks_sym name, ks_pod_group_member_fn fn, void *ctx)
{
    return ks__podgroup_members_each(sched_services.podgroups, ns, name, fn, ctx);
}

/* ---- ABI 1.10: dynamic resource allocation ------------------------------------------------- */

static struct ks_store *dra_store(const ks_cycle *c)
{
    struct ks_store *st = store_of(c);
    return st ? st : sched_services.store;
}

static struct ks_dra_manager *dra_mgr(const ks_cycle *c)
{
    return c && c->hooks && c->hooks->dra ? c->hooks->dra : sched_services.dra;
}

static size_t h_pod_resource_claims(const ks_pod *p, const ks_pod_resource_claim **o)
{
    *o = p->resource_claims;
    return p->nresource_claims;
}

static const ks_resource_claim *h_resource_claim_get(ks_cycle *c, ks_sym ns, const char *name)
{
    struct ks_store *st = dra_store(c);
    if (!st || !name)
        return NULL;
    const char *nss = ks__sym_str(ns);
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", nss && *nss ? nss : "default", name);
    ks__draobj *o = ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, key);
    return o ? ks__dra_claim(o) : NULL;
}

static void h_resource_claim_release(const ks_resource_claim *rc)
{
    ks__draobj_unref(rc ? (ks__draobj *)&rc->h : NULL);
}

static const ks_resource_claim_view *h_resource_claim_view(const ks_resource_claim *rc)
{
    return rc ? &rc->view : NULL;
}

static int h_device_class_exists(ks_cycle *c, const char *name)
{
    struct ks_store *st = dra_store(c);
    ks__draobj *o = st && name ? ks__store_draobj(st, KS_DK_DEVICE_CLASS, name) : NULL;
    ks__draobj_unref(o);
    return o != NULL;
}

static int h_dra_claim_pending(ks_cycle *c, const char *uid)
{
    return ks__dra_claim_pending(dra_mgr(c), uid);
}

static int h_dra_signal_pending(ks_cycle *c, const ks_resource_claim *rc,
                                const ks_dra_allocation *a, size_t i)
{
    return ks__dra_signal_pending(dra_mgr(c), rc, a, i);
}

static int h_dra_remove_pending(ks_cycle *c, const char *uid)
{
    return ks__dra_remove_pending(dra_mgr(c), uid);
}

static void allocator_cleanup(void *a) { ks__dra_allocator_free(a); }
static const ks_state_ops allocator_ops = {NULL, allocator_cleanup};

static ks_dra_allocator *h_dra_allocator_new(ks_cycle *c, char *err, size_t errlen)
{
    ks_dra_allocator *a = ks__dra_allocator_new(dra_mgr(c), dra_store(c), err, errlen);
    if (!a || !c)
        return a;
    /* Held by the cycle under its own address as the key: every allocator made in the cycle
     * (DynamicResources' PreFilter, run again by a dry run; NodeResourcesFit's PreScore) lives
     * until the cycle ends, and its allocations keep it alive longer by their own references. */
    if (ks__cycle_write_impl(c, a, a, &allocator_ops) != 0) {
        ks__dra_allocator_free(a);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return a;
}

static int h_dra_allocate(ks_dra_allocator *a, const ks_node *node,
                          const ks_resource_claim *const *claims, size_t n, int64_t deadline_ns,
                          ks_dra_allocation **out, char *err, size_t errlen)
{
    return ks__dra_allocate(a, node, claims, n, deadline_ns, out, err, errlen);
}

static void h_dra_allocation_free(ks_dra_allocation *a) { ks__dra_allocation_free(a); }

static size_t h_dra_allocation_devices(const ks_dra_allocation *a, size_t i,
                                       const ks_dra_device_result **o)
{
    if (!a || i >= a->nclaims) {
        *o = NULL;
        return 0;
    }
    *o = a->devs[i];
    return a->ndev[i];
}

/* Where DynamicResources' claim writes go: the store itself (simulate's in-memory cluster),
 * the API server through the cluster source (live mode, io filled), or nowhere (a cycle
 * without a source that writes claims: st says so). */
typedef enum { DRA_WRITES_STORE, DRA_WRITES_API, DRA_WRITES_NONE } dra_writes;

static dra_writes dra_write_target(ks_cycle *c, ks_dra_claim_io *io)
{
    uint32_t flags = c && c->hooks ? c->hooks->source_flags : sched_services.source_flags;
    if (flags & KS_SOURCE_SIMULATED)
        return DRA_WRITES_STORE;
    if (c && c->hooks && c->hooks->claim_request) {
        io->request = c->hooks->claim_request;
        io->ctx = c->hooks->dra_ctx;
        return DRA_WRITES_API;
    }
    return DRA_WRITES_NONE;
}

/* The written claim's change as a cluster event (the scheduler's queue), or released. */
static void dra_changed(ks_cycle *c, ks_dra_change *chg)
{
    if (c && c->hooks && c->hooks->dra_changed) {
        c->hooks->dra_changed(c->hooks->dra_ctx, chg);
        return;
    }
    ks__draobj_unref(chg->old_obj);
    ks__draobj_unref(chg->new_obj);
}

static ks_code h_dra_claim_bind(ks_cycle *c, const ks_pod *pod, const ks_resource_claim *rc,
                                const ks_dra_allocation *a, size_t i, ks_status *st)
{
    ks_dra_change chg = {NULL, NULL};
    ks_dra_claim_io io;
    ks_code code;
    switch (dra_write_target(c, &io)) {
    case DRA_WRITES_STORE:
        code = ks__dra_claim_bind(dra_store(c), pod, rc, a, i, &chg, st);
        break;
    case DRA_WRITES_API:
        code = ks__dra_claim_bind_live(&io, dra_store(c), pod, rc, a, i, &chg, st);
        break;
    default:
        ks__status_add(st, "this cluster source does not write ResourceClaims");
        return KS_ERROR;
    }
    if (code == KS_SUCCESS)
        dra_changed(c, &chg);
    return code;
}

static ks_code h_dra_claim_deallocate(ks_cycle *c, const ks_resource_claim *rc, ks_status *st)
{
    ks_dra_change chg = {NULL, NULL};
    ks_dra_claim_io io;
    switch (dra_write_target(c, &io)) {
    case DRA_WRITES_STORE: {
        ks_code code = ks__dra_claim_deallocate(dra_store(c), rc, &chg, st);
        if (code == KS_SUCCESS)
            dra_changed(c, &chg);
        return code;
    }
    case DRA_WRITES_API: /* the watch brings the change */
        return ks__dra_claim_deallocate_live(&io, rc, st);
    default:
        ks__status_add(st, "this cluster source does not write ResourceClaims");
        return KS_ERROR;
    }
}

static void h_dra_claim_unreserve(ks_cycle *c, const ks_pod *pod, const ks_resource_claim *rc)
{
    ks_dra_change chg = {NULL, NULL};
    ks_dra_claim_io io;
    ks_status st;
    ks_code code;
    if (!pod || !rc)
        return;
    ks__status_reset(&st);
    switch (dra_write_target(c, &io)) {
    case DRA_WRITES_STORE:
        code = ks__dra_claim_unreserve(dra_store(c), pod, rc, &chg, &st);
        break;
    case DRA_WRITES_API:
        code = ks__dra_claim_unreserve_live(&io, dra_store(c), pod, rc, &chg, &st);
        break;
    default:
        return; /* nothing was written to take back */
    }
    if (code == KS_SUCCESS) {
        dra_changed(c, &chg);
    } else if (code == KS_ERROR) { /* upstream logs it too: the next attempt gets here again */
        char msg[1024];
        ks__status_message(&st, msg, sizeof(msg));
        ks__log('E', "DynamicResources", "unreserve: resourceclaim %s: %s", rc->h.key, msg);
    }
}

/* ---- ABI 1.11: extended resources backed by DRA -------------------------------------------- */

static size_t h_pod_containers(const ks_pod *p, const ks_pod_container **o)
{
    *o = p->containers;
    return p->ncontainers;
}

static ks_sym h_dra_extended_resource_class(ks_cycle *c, ks_sym resource)
{
    return ks__dra_extended_resource_class(dra_store(c), resource);
}

static const ks_resource_claim *h_dra_extended_claim_find(ks_cycle *c, const ks_pod *pod)
{
    return ks__dra_extended_claim_find(dra_store(c), pod);
}

static const ks_resource_claim *h_dra_extended_claim_new(ks_cycle *c, const ks_pod *pod,
                                                         const ks_dra_extended_request *reqs,
                                                         size_t n)
{
    (void)c;
    return pod ? ks__dra_extended_claim_new(pod, reqs, n) : NULL;
}

static ks_code h_dra_extended_claim_create(ks_cycle *c, const ks_pod *pod,
                                           const ks_resource_claim *rc,
                                           const ks_resource_claim **created, ks_status *st)
{
    ks_dra_change chg = {NULL, NULL};
    ks_dra_claim_io io;
    *created = NULL;
    switch (dra_write_target(c, &io)) {
    case DRA_WRITES_STORE: {
        ks_code code = ks__dra_extended_claim_create(dra_store(c), pod, rc, created, &chg, st);
        if (code == KS_SUCCESS)
            dra_changed(c, &chg);
        return code;
    }
    case DRA_WRITES_API: {
        ks_code code = ks__dra_extended_claim_create_live(&io, dra_store(c), rc, created, &chg, st);
        if (code == KS_SUCCESS)
            dra_changed(c, &chg);
        return code;
    }
    default:
        ks__status_add(st, "this cluster source does not write ResourceClaims");
        return KS_ERROR;
    }
}

static ks_code h_dra_claim_delete(ks_cycle *c, const ks_resource_claim *rc, ks_status *st)
{
    ks_dra_change chg = {NULL, NULL};
    ks_dra_claim_io io;
    switch (dra_write_target(c, &io)) {
    case DRA_WRITES_STORE: {
        ks_code code = ks__dra_claim_delete(dra_store(c), rc, &chg, st);
        if (code == KS_SUCCESS)
            dra_changed(c, &chg);
        return code;
    }
    case DRA_WRITES_API: /* the watch brings the deletion */
        return ks__dra_claim_delete_live(&io, rc, st);
    default:
        ks__status_add(st, "this cluster source does not write ResourceClaims");
        return KS_ERROR;
    }
}

static ks_code h_pod_extended_claim_status(ks_cycle *c, const ks_pod *pod, const char *claim_name,
                                           const ks_extended_request_mapping *m, size_t n,
                                           ks_status *st)
{
    if (!c || !c->hooks || !c->hooks->patch_pod_status) {
        ks__status_add(st, "this cluster source does not write pod status");
        return KS_ERROR;
    }
    char *patch = ks__pod_extended_claim_status_patch(claim_name, m, n);
    if (!patch) {
        ks__status_add(st, "out of memory");
        return KS_ERROR;
    }
    ks_code code = c->hooks->patch_pod_status(c->hooks->bind_ctx, pod, patch, st);
    free(patch);
    return code;
}

static int h_dra_class_device_counts(ks_dra_allocator *a, const ks_node *node, ks_sym cls,
                                     int64_t *capacity, int64_t *allocated)
{
    const char *name = ks__sym_str(cls);
    if (!a || !name) {
        *capacity = *allocated = 0;
        return KS_EINVAL;
    }
    return ks__dra_class_device_counts(a, node, name, capacity, allocated);
}

static void h_pod_group_member_counts(ks_sym ns, ks_sym name, size_t *all, size_t *scheduled)
{
    ks__podgroup_member_counts(sched_services.podgroups, ns, name, all, scheduled);
}

static const ks_host_api host_table = {
    .abi_major = KS_ABI_MAJOR,
    .abi_minor = KS_ABI_MINOR,
    .size = sizeof(ks_host_api),
    .alloc = h_alloc,
    .free_ = h_free,
    .strerror = ks__strerror,
    .intern = ks__intern,
    .sym_lookup = ks__sym_lookup,
    .sym_str = ks__sym_str,
    .log_enabled = h_log_enabled,
    .logv = h_logv,
    .error_setv = h_error_setv,
    .status_reason = h_status_reason,
    .status_reasonv = h_status_reasonv,
    .args_json = h_args_json,
    .args_get_string = h_args_get_string,
    .args_get_int = h_args_get_int,
    .args_get_double = h_args_get_double,
    .args_get_bool = h_args_get_bool,
    .args_count = h_args_count,
    .args_get_quantity = h_args_get_quantity,
    .pod_name = p_name,
    .pod_namespace = p_namespace,
    .pod_uid = p_uid,
    .pod_scheduler_name = p_scheduler_name,
    .pod_node_name = p_node_name,
    .pod_nominated_node_name = p_nominated,
    .pod_priority = p_priority,
    .pod_is_terminating = p_terminating,
    .pod_labels = p_labels,
    .pod_label = p_label,
    .pod_annotations = p_annotations,
    .pod_requests = p_requests,
    .pod_nonzero_requests = p_nonzero,
    .pod_tolerations = p_tolerations,
    .pod_node_selector = p_node_selector,
    .pod_node_affinity = p_node_affinity,
    .pod_images = p_images,
    .pod_host_ports = p_host_ports,
    .pod_scheduling_gates = p_gates,
    .pod_json = p_json,
    .node_name = n_name,
    .node_labels = n_labels,
    .node_label = n_label,
    .node_annotations = n_annotations,
    .node_unschedulable = n_unschedulable,
    .node_taints = n_taints,
    .node_allocatable = n_allocatable,
    .node_images = n_images,
    .node_json = n_json,
    .node_info_node = ni_node,
    .node_info_pod_count = ni_pod_count,
    .node_info_pod_at = ni_pod_at,
    .node_info_requested = ni_requested,
    .node_info_nonzero_requested = ni_nonzero,
    .cycle_snapshot = c_snapshot,
    .snapshot_node_count = s_count,
    .snapshot_node_at = s_at,
    .snapshot_node = s_node,
    .cycle_write = ks__cycle_write_impl,
    .cycle_read = ks__cycle_read_impl,
    .cycle_alloc = ks__cycle_alloc_impl,
    .queued_pod_pod = q_pod,
    .queued_pod_timestamp_ns = q_ts,
    .queued_pod_attempts = q_attempts,
    .prefilter_result_add_node = pf_add_node,
    .filter_outcome_code = fo_code,
    .post_filter_nominate = pf_nominate,
    .permit_allow = h_permit_allow,
    .permit_reject = h_permit_reject,
    .bind_pod = h_bind_pod,
    .pod_affinity = p_pod_affinity,
    .pod_topology_spread_constraints = p_spread,
    .node_info_host_ports = ni_ports,
    .node_info_pods_with_affinity = ni_with_affinity,
    .node_info_pods_with_required_anti_affinity = ni_with_anti,
    .snapshot_image_node_count = s_image_nodes,
    .namespace_labels = h_namespace_labels,
    .pod_owner_selectors = h_owner_selectors,
    .pod_preemption_never = p_preemption_never,
    .pod_start_time_ns = p_start_time,
    .node_info_clone = h_ni_clone,
    .node_info_remove_pod = h_ni_remove_pod,
    .node_info_add_pod = h_ni_add_pod,
    .cycle_clone = h_cycle_clone,
    .run_filters = h_run_filters,
    .run_prefilter_add_pod = h_run_add_pod,
    .run_prefilter_remove_pod = h_run_remove_pod,
    .pdbs = h_pdbs,
    .post_filter_add_victim = h_add_victim,
    .rand_below = h_rand_below,
    .nominated_pods = h_nominated_pods,
    .snapshot_nodes_with_affinity_pods = s_affinity_nodes,
    .status_new = h_status_new,
    .status_code = h_status_code,
    .status_reason_count = h_status_reason_count,
    .status_reason_at = h_status_reason_at,
    .node_info_pods_in_namespace = ni_pods_in_ns,
    .snapshot_version = s_version,
    .snapshot_changed_nodes = s_changed,
    /* ABI 1.4: pod signatures (framework.c ks__signature_add; any thread, one call's sig) */
    .sign_add = ks__signature_add,
    .node_declared_features = n_declared_features,
    .pod_spec_flags = p_spec_flags,
    .pod_image_volumes = p_image_volumes,
    .snapshot_image_size = s_image_size,
    /* ABI 1.5: volumes */
    .pod_volumes = p_volumes,
    .cycle_pvc = h_cycle_pvc,
    .cycle_pv = h_cycle_pv,
    .cycle_storage_class = h_cycle_sc,
    .cycle_csi_node = h_cycle_csi_node,
    .cycle_csi_driver = h_cycle_csi_driver,
    .cycle_pvs = h_cycle_pvs,
    .cycle_csi_storage_capacities = h_cycle_capacities,
    .snapshot_pvc_in_use = s_pvc_in_use,
    .pv_view = v_pv,
    .pvc_view = v_pvc,
    .storage_class_view = v_sc,
    .csi_node_view = v_csi_node,
    .csi_driver_view = v_csi_driver,
    .csi_storage_capacity_view = v_capacity,
    .cycle_volume_attachments = h_cycle_vas,
    .volume_attachment_view = v_va,
    .storage_patch = h_storage_patch,
    .binding_sleep = h_binding_sleep,
    .source_flags = h_source_flags,
    .counter_new = h_counter_new,
    .counter_inc = h_counter_inc,
    .waiting_pods_each = h_waiting_pods_each,
    .activate_pod = h_activate_pod,
    .pods_each = h_pods_each,
    .queued_pod_initial_attempt_unix_ns = h_queued_pod_initial_attempt_unix_ns,
    .resource_watch = h_resource_watch,
    .resource_event = h_resource_event,
    .resource_get = h_resource_get,
    .object_release = h_object_release,
    .object_get_string = h_object_get_string,
    .object_get_int = h_object_get_int,
    .object_get_quantity = h_object_get_quantity,
    .object_get_time = h_object_get_time,
    .object_count = h_object_count,
    .object_key_at = h_object_key_at,
    .object_json = h_object_json,
    .clock_now_ns = h_clock_now_ns,
    .object_patch = h_object_patch,
    .pod_event = h_pod_event,
    .pod_scheduling_group = h_pod_scheduling_group,
    .pod_group_get = h_pod_group_get,
    .pod_group_release = h_pod_group_release,
    .pod_group_view = h_pod_group_view,
    .pod_group_members_each = h_pod_group_members_each,
    .pod_resource_claims = h_pod_resource_claims,
    .resource_claim_get = h_resource_claim_get,
    .resource_claim_release = h_resource_claim_release,
    .resource_claim_view = h_resource_claim_view,
    .device_class_exists = h_device_class_exists,
    .dra_claim_pending = h_dra_claim_pending,
    .dra_signal_pending = h_dra_signal_pending,
    .dra_remove_pending = h_dra_remove_pending,
    .dra_allocator_new = h_dra_allocator_new,
    .dra_allocate = h_dra_allocate,
    .dra_allocation_free = h_dra_allocation_free,
    .dra_allocation_devices = h_dra_allocation_devices,
    .dra_claim_bind = h_dra_claim_bind,
    .dra_claim_deallocate = h_dra_claim_deallocate,
    .dra_claim_unreserve = h_dra_claim_unreserve,
    .pod_group_member_counts = h_pod_group_member_counts,
    /* ABI 1.11: extended resources backed by DRA */
    .pod_containers = h_pod_containers,
    .dra_extended_resource_class = h_dra_extended_resource_class,
    .dra_extended_claim_find = h_dra_extended_claim_find,
    .dra_extended_claim_new = h_dra_extended_claim_new,
    .dra_extended_claim_create = h_dra_extended_claim_create,
    .dra_claim_delete = h_dra_claim_delete,
    .pod_extended_claim_status = h_pod_extended_claim_status,
    .dra_class_device_counts = h_dra_class_device_counts,
};

void ks__host_init(void) { ks__objects_init(); }

const ks_host_api *ks__host_api(void) { return &host_table; }
