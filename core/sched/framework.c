/*
 * Framework runtime: plugin instances per profile and the run functions of each extension point,
 * with upstream's ordering and status semantics (framework/runtime/framework.go). See
 * framework.h for the threads each function runs on.
 */
#include "sched/framework.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/framework_metrics.h"
#include "api/objects.h"
#include "api/volume_objects.h"
#include "sched/batch.h"
#include "util/log.h"
#include "api/intern.h"
#include "util/parallel.h"
#include "sched/parallelize.h"
#include "sched/isolation.h"
#include "sched/plugin_guard.h"
#include "util/duration.h"
#include <pthread.h>

/* ---- statuses ------------------------------------------------------------------------------ */

void ks__status_reset(ks_status *st)
{
    st->code = KS_SUCCESS;
    st->plugin = NULL;
    st->nreasons = 0;
    st->used = 0;
    st->null_reason = 0;
}

/* The length of the valid UTF-8 sequence at p (1..4), 0 when p starts an invalid one (overlong
 * forms, surrogates and code points past U+10FFFF are invalid, as in Go). Never reads past a NUL.
 */
static size_t utf8_seq_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2)
        return 0;
    if ((p[1] & 0xC0) != 0x80)
        return 0;
    if (c < 0xE0)
        return 2;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (p[2] & 0xC0) != 0x80)
        return 0;
    if (c < 0xF0)
        return 3;
    if (c > 0xF4 || (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F) ||
        (p[3] & 0xC0) != 0x80)
        return 0;
    return 4;
}

#define TRUNCATED_MARK "\xe2\x80\xa6(truncated)" /* "…(truncated)" */

void ks__status_add(ks_status *st, const char *reason)
{
    if (!reason) {
        st->null_reason = 1;
        return;
    }
    if (st->used + 4 > KS_STATUS_BUF)
        return;
    char *dst = st->buf + st->used;
    size_t cap = KS_STATUS_BUF - st->used - 1, n = 0; /* room without the NUL */
    const unsigned char *p = (const unsigned char *)reason;
    int truncated = 0;
    while (*p) {
        const char *src = (const char *)p;
        size_t len = utf8_seq_len(p);
        if (len) {
            p += len;
        } else { /* a run of invalid bytes: one replacement character */
            src = "\xef\xbf\xbd";
            len = 3;
            while (*++p && !utf8_seq_len(p))
                ;
        }
        if (n + len > cap) {
            truncated = 1;
            break;
        }
        memcpy(dst + n, src, len);
        n += len;
    }
    if (truncated) { /* back to a character boundary with room for the mark */
        const size_t mark = sizeof(TRUNCATED_MARK) - 1;
        while (n > 0 && n + mark > cap)
            while (n > 0 && (dst[--n] & 0xC0) == 0x80)
                ;
        if (n + mark <= cap) {
            memcpy(dst + n, TRUNCATED_MARK, mark);
            n += mark;
        }
    }
    dst[n] = '\0';
    st->used = (uint16_t)(st->used + n + 1);
    st->nreasons++;
}

const char *ks__status_next(const ks_status *st, const char *prev)
{
    const char *p = prev ? prev + strlen(prev) + 1 : st->buf;
    return p < st->buf + st->used ? p : NULL;
}

void ks__status_message(const ks_status *st, char *out, size_t len)
{
    size_t off = 0;
    out[0] = '\0';
    for (const char *r = NULL; (r = ks__status_next(st, r));) {
        int n = snprintf(out + off, len - off, "%s%s", off ? ", " : "", r);
        if (n < 0 || (size_t)n >= len - off)
            break;
        off += (size_t)n;
    }
}

/* ---- cycle state --------------------------------------------------------------------------- */

struct ks_arena_block {
    struct ks_arena_block *next;
    size_t used, cap;
    max_align_t data[];
};

ks_cycle *ks__cycle_new(const ks_snapshot *snap, ks_pod *pod)
{
    ks_cycle *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->snap = snap;
    c->pod = pod;
    return c;
}

void ks__cycle_free(ks_cycle *c)
{
    if (!c)
        return;
    if (atomic_load_explicit(&c->iso_sessions, memory_order_relaxed))
        ks__iso_end_sessions(c);
    for (ks_cycle *k = c->clones, *n; k; k = n) {
        n = k->next_clone;
        ks__cycle_free(k);
    }
    for (struct ks_cycle_hold *h = atomic_load(&c->holds), *n; h; h = n) {
        n = h->next;
        for (size_t i = 0; i < h->n; i++)
            ks__volobj_unref(h->objs[i]);
        free(h);
    }
    for (size_t i = 0; i < c->nni_clones; i++)
        ks__node_info_free(c->ni_clones[i]);
    free(c->ni_clones);
    for (size_t i = 0; i < c->nentries; i++)
        if (c->entries[i].ops && c->entries[i].ops->cleanup)
            c->entries[i].ops->cleanup(c->entries[i].data);
    free(c->entries);
    for (struct ks_arena_block *b = c->arena, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(c);
}

struct ks_cycle_hold *ks__cycle_hold(ks_cycle *c, struct ks__volobj *const *objs, size_t n)
{
    struct ks_cycle_hold *h = malloc(sizeof(*h) + n * sizeof(h->objs[0]));
    if (!h) {
        for (size_t i = 0; i < n; i++)
            ks__volobj_unref(objs[i]);
        return NULL;
    }
    h->n = n;
    if (n)
        memcpy(h->objs, objs, n * sizeof(h->objs[0]));
    h->next = atomic_load_explicit(&c->holds, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&c->holds, &h->next, h, memory_order_release,
                                                  memory_order_relaxed))
        ;
    return h;
}

void *ks__cycle_alloc_impl(ks_cycle *c, size_t n)
{
    size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    struct ks_arena_block *b = c->arena;
    if (!b || b->used + need > b->cap) {
        size_t cap = need > 16384 ? need : 16384;
        b = malloc(sizeof(*b) + cap);
        if (!b)
            return NULL;
        b->next = c->arena;
        b->used = 0;
        b->cap = cap;
        c->arena = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += need;
    memset(p, 0, n);
    return p;
}

int ks__cycle_write_impl(ks_cycle *c, const void *key, void *data, const ks_state_ops *ops)
{
    for (size_t i = 0; i < c->nentries; i++) {
        if (c->entries[i].key == key) {
            if (c->entries[i].ops && c->entries[i].ops->cleanup && c->entries[i].data != data)
                c->entries[i].ops->cleanup(c->entries[i].data);
            c->entries[i].data = data;
            c->entries[i].ops = ops;
            return 0;
        }
    }
    if (c->nentries == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        ks_cycle_entry *e = realloc(c->entries, cap * sizeof(*e));
        if (!e)
            return KS_ENOMEM;
        c->entries = e;
        c->cap = cap;
    }
    c->entries[c->nentries++] = (ks_cycle_entry){key, data, ops};
    return 0;
}

void *ks__cycle_read_impl(ks_cycle *c, const void *key)
{
    for (size_t i = 0; i < c->nentries; i++)
        if (c->entries[i].key == key)
            return c->entries[i].data;
    return NULL;
}

ks_cycle *ks__cycle_clone(const ks_cycle *c)
{
    ks_cycle *n = ks__cycle_new(c->snap, c->pod);
    if (!n)
        return NULL;
    n->skip_filter = c->skip_filter;
    n->skip_score = c->skip_score;
    n->fw = c->fw;
    n->hooks = c->hooks;
    n->sampled = c->sampled;
    n->evals = c->evals;
    n->eval_rows = c->eval_rows;
    for (size_t i = 0; i < c->nentries; i++) {
        const ks_cycle_entry *e = &c->entries[i];
        void *data = e->data;
        const ks_state_ops *ops = e->ops;
        if (ops && ops->clone)
            data = ops->clone(n, e->data);
        else
            ops = NULL; /* shared pointer: the original owns the cleanup */
        if (ks__cycle_write_impl(n, e->key, data, ops) != 0) {
            ks__cycle_free(n);
            return NULL;
        }
    }
    return n;
}

/* ---- current plugin (log prefixes) -------------------------------------------------------- */

static _Thread_local const char *current_plugin;
const char *ks__fw_current_plugin(void) { return current_plugin; }
void ks__fw_set_current_plugin(const char *name) { current_plugin = name; }

/* Every plugin call: the log prefix, and this thread's guard slot (plugin_guard.h: crash reports
 * and the watchdog name the plugin, the point, the pod and the node) set for the call's duration:
 * a few thread-local stores. CALLV for the calls that return nothing. */
#define CALL(inst, ep, pod, node, expr)                                                            \
    __extension__({                                                                                \
        current_plugin = (inst)->name;                                                             \
        ks__guard_enter((inst), (ep), (pod), (node));                                              \
        __typeof__(expr) r_ = (expr);                                                              \
        ks__guard_leave();                                                                         \
        r_;                                                                                        \
    })
#define CALLV(inst, ep, pod, node, expr)                                                           \
    do {                                                                                           \
        current_plugin = (inst)->name;                                                             \
        ks__guard_enter((inst), (ep), (pod), (node));                                              \
        (expr);                                                                                    \
        ks__guard_leave();                                                                         \
    } while (0)

/* A plugin call; in a sampled cycle (only ever set when the framework has metrics) it is timed
 * into plugin_execution_duration_seconds, as upstream's run<Point>Plugin does. */
#define PCALL(fw, cycle, in, ep, pod, node, code, expr)                                            \
    do {                                                                                           \
        if ((cycle) && (cycle)->sampled) {                                                         \
            int64_t t0_ = ks__clock_now_ns();                                                      \
            (code) = CALL(in, ep, pod, node, expr);                                                \
            ks__fw_metrics_plugin((fw)->metrics, (in)->index, (ep), (code), t0_);                  \
        } else {                                                                                   \
            (code) = CALL(in, ep, pod, node, expr);                                                \
        }                                                                                          \
    } while (0)
/* The same for the calls that return nothing (upstream records them as Success). */
#define PCALL_VOID(fw, cycle, in, ep, pod, node, expr)                                             \
    do {                                                                                           \
        if ((cycle) && (cycle)->sampled) {                                                         \
            int64_t t0_ = ks__clock_now_ns();                                                      \
            CALLV(in, ep, pod, node, expr);                                                        \
            ks__fw_metrics_plugin((fw)->metrics, (in)->index, (ep), KS_SUCCESS, t0_);              \
        } else {                                                                                   \
            CALLV(in, ep, pod, node, expr);                                                        \
        }                                                                                          \
    } while (0)
/* upstream's instrumented plugins count every PreFilter/Filter/PreScore/Score call
 * (plugin_evaluation_total); here into this worker's row of the cycle's counters. */
#define COUNT_EVAL(cycle, kind, in)                                                                \
    do {                                                                                           \
        if ((cycle)->evals && (in)->index < KS_EVAL_STRIDE)                                        \
            (cycle)->evals[((size_t)(kind) * (cycle)->eval_rows + (size_t)ks__pool_worker_id()) *  \
                               KS_EVAL_STRIDE +                                                    \
                           (size_t)(in)->index]++;                                                 \
    } while (0)

/* ---- construction -------------------------------------------------------------------------- */

static ks_plugin_inst *find_inst(ks_framework *fw, const char *name)
{
    for (size_t i = 0; i < fw->ninst; i++)
        if (strcmp(fw->inst[i].name, name) == 0)
            return &fw->inst[i];
    return NULL;
}

/* kubeschedIsolation: process: in runs through a proxy that forwards its calls to a child process
 * (isolation.h). The in-process watchdog leaves it alone (deadline 0): the proxy enforces the
 * plugin's deadline on the child, and waiting for a batch of nodes is not one call. */
static int isolate(ks_framework *fw, ks_plugin_inst *in, char *err, size_t errlen)
{
    const ks_plugin_desc *proxy;
    int rc = ks__iso_new(fw->profile_name, in->name, in->origin, in->desc, in->self, in->args.json,
                         in->deadline_ns, &in->iso, &proxy, err, errlen);
    if (rc != 0)
        return rc;
    in->desc = proxy;
    in->self = in->iso;
    in->deadline_ns = 0;
    return 0;
}

int ks__framework_new(const ks_profile_plan *plan, ks_framework **out, char *err, size_t errlen)
{
    ks_framework *fw = calloc(1, sizeof(*fw));
    *out = NULL;
    if (!fw)
        return KS_ENOMEM;
    fw->plan = plan;
    fw->profile_name = plan->profile->scheduler_name;
    fw->scheduler_name = ks__intern(plan->profile->scheduler_name);
    fw->percentage_of_nodes_to_score = plan->profile->percentage_of_nodes_to_score;
    if (plan->ninstances > 64) {
        snprintf(err, errlen,
                 "profile \"%s\": %zu plugins; kubesched supports at most 64 per profile",
                 fw->profile_name, plan->ninstances);
        free(fw);
        return KS_ERANGE;
    }
    fw->inst = calloc(plan->ninstances ? plan->ninstances : 1, sizeof(ks_plugin_inst));
    if (!fw->inst) {
        free(fw);
        return KS_ENOMEM;
    }
    for (size_t i = 0; i < plan->ninstances; i++) {
        ks_plugin_inst *in = &fw->inst[i];
        in->name = plan->instances[i].name;
        in->desc = plan->instances[i].desc;
        in->args.json = plan->instances[i].args;
        in->index = (int)i;
        in->deadline_ns = -1;
        const cJSON *dl =
            cJSON_GetObjectItemCaseSensitive(plan->instances[i].args, "kubeschedCallDeadline");
        /* checked while the configuration loaded (config.c) */
        if (cJSON_IsString(dl) && ks__duration_parse(dl->valuestring, &in->deadline_ns) == 0 &&
            in->deadline_ns > 0 && ks__guard_watch(in->deadline_ns, err, errlen) != 0) {
            ks__framework_free(fw); /* the instances before this one */
            return KS_ENOMEM;
        }
        /* The loader keeps a normalised copy of the descriptor: its callbacks tell the .so. */
        const void *const code[] = {
            (const void *)in->desc->create,      (const void *)in->desc->filter,
            (const void *)in->desc->score,       (const void *)in->desc->pre_filter,
            (const void *)in->desc->pre_score,   (const void *)in->desc->post_filter,
            (const void *)in->desc->reserve,     (const void *)in->desc->permit,
            (const void *)in->desc->pre_bind,    (const void *)in->desc->bind,
            (const void *)in->desc->pre_enqueue, (const void *)in->desc->less};
        for (size_t c = 0; c < sizeof(code) / sizeof(code[0]) && !in->origin; c++)
            if (code[c])
                in->origin = ks__guard_origin_of(code[c]);
        fw->ninst = i + 1;
        if (in->desc->create) {
            struct ks_error e = {{0}};
            current_plugin = in->name;
            in->self = in->desc->create(&in->args, &e);
            current_plugin = NULL;
            if (!in->self) {
                snprintf(err, errlen, "profile \"%s\": plugin %s could not be created: %s",
                         fw->profile_name, in->name, e.msg[0] ? e.msg : "(no message)");
                ks__framework_free(fw);
                return KS_EINVAL;
            }
        }
        if (ks__iso_wanted(in->args.json) && isolate(fw, in, err, errlen) != 0) {
            ks__framework_free(fw);
            return KS_EINVAL;
        }
        if (in->desc->events_with_hints || in->desc->events_to_register) {
            ks_cluster_event_hint buf[64];
            size_t n;
            if (in->desc->events_with_hints) {
                n = in->desc->events_with_hints(in->self, buf, 64);
            } else {
                ks_cluster_event plain[64];
                n = in->desc->events_to_register(in->self, plain, 64);
                for (size_t e = 0; e < n && e < 64; e++)
                    buf[e] = (ks_cluster_event_hint){plain[e], NULL};
            }
            if (n > 64)
                n = 64;
            for (size_t e = 0; e < n; e++) {
                uint32_t *a = &buf[e].event.actions;
                if ((*a & KS_ACT_UPDATE) == KS_ACT_UPDATE)
                    *a |= KS_ACT_UPDATE_ANY;
            }
            in->events = calloc(n ? n : 1, sizeof(*in->events));
            if (!in->events) {
                ks__framework_free(fw);
                return KS_ENOMEM;
            }
            memcpy(in->events, buf, n * sizeof(*buf));
            in->nevents = n;
        } else {
            in->all_events = 1;
        }
    }
    for (int p = 0; p < KS_PT_COUNT; p++) {
        fw->n[p] = plan->npoint[p];
        fw->pt[p] = calloc(plan->npoint[p] ? plan->npoint[p] : 1, sizeof(ks_point_entry));
        if (!fw->pt[p]) {
            ks__framework_free(fw);
            return KS_ENOMEM;
        }
        for (size_t i = 0; i < plan->npoint[p]; i++) {
            fw->pt[p][i].inst = find_inst(fw, plan->point[p][i].name);
            fw->pt[p][i].weight = plan->point[p][i].weight > 0 ? plan->point[p][i].weight : 1;
            if (!fw->pt[p][i].inst) {
                snprintf(err, errlen,
                         "profile \"%s\": plugin %s is planned at %s but was not instantiated",
                         fw->profile_name, plan->point[p][i].name, ks__point_name((ks_point)p));
                ks__framework_free(fw);
                return KS_EINVAL;
            }
        }
    }
    *out = fw;
    return 0;
}

void ks__framework_free(ks_framework *fw)
{
    if (!fw)
        return;
    ks__fw_metrics_free(fw->metrics);
    for (size_t i = 0; i < fw->ninst; i++) {
        ks_plugin_inst *in = &fw->inst[i];
        if (in->iso)
            ks__iso_free(in->iso); /* destroys the plugin's own self */
        else if (in->self && in->desc->destroy)
            in->desc->destroy(in->self);
        free(in->events);
        free(in->args.text);
        free(in->origin);
    }
    for (int p = 0; p < KS_PT_COUNT; p++)
        free(fw->pt[p]);
    ks__batch_free(fw->batch);
    free(fw->signers);
    free(fw->inst);
    free(fw);
}

/* ---- run functions ------------------------------------------------------------------------- */

static void status_from(ks_status *st, ks_code code, const ks_plugin_inst *in)
{
    st->code = code;
    st->plugin = in->name;
}

/* The codes each extension point accepts (bit c for code c), as upstream's run functions handle
 * them; anything else from a plugin (an unknown code such as 42, Wait from Filter) is an Error
 * naming the plugin, the point and the value, and so is a NULL reason. PreBindPreFlight keeps
 * upstream's own message for a known code it does not accept. */
#define C(x) (1u << (x))
static const uint8_t k_accepts[KS_EP_COUNT] = {
    [KS_EP_PRE_ENQUEUE] = C(0) | C(1) | C(2) | C(3) | C(6),
    [KS_EP_PRE_FILTER] = C(0) | C(1) | C(2) | C(3) | C(5) | C(6),
    [KS_EP_PRE_FILTER_ADD_POD] = C(0) | C(1),
    [KS_EP_PRE_FILTER_REMOVE_POD] = C(0) | C(1),
    [KS_EP_FILTER] = C(0) | C(1) | C(2) | C(3) | C(6),
    [KS_EP_POST_FILTER] = C(0) | C(1) | C(2) | C(3) | C(6),
    [KS_EP_PRE_SCORE] = C(0) | C(1) | C(5),
    [KS_EP_SCORE] = C(0) | C(1),
    [KS_EP_SCORE_NORMALIZE] = C(0) | C(1),
    [KS_EP_RESERVE] = C(0) | C(1) | C(2) | C(3) | C(6),
    [KS_EP_PERMIT] = C(0) | C(1) | C(2) | C(3) | C(4) | C(6),
    [KS_EP_PRE_BIND] = C(0) | C(1) | C(2) | C(3) | C(5) | C(6),
    [KS_EP_BIND] = C(0) | C(1) | C(5),
    [KS_EP_PRE_BIND_PRE_FLIGHT] = 0x7f,
};
#undef C

/* code as returned by in at ep, or KS_ERROR with st rewritten when the status is invalid. Called
 * only for codes other than Success (a rejection in the Filter loop costs a shift and a test). */
static __attribute__((noinline, cold)) ks_code invalid_status(const ks_plugin_inst *in, ks_ep ep,
                                                              ks_code code, ks_status *st)
{
    int known = (unsigned)code <= KS_PENDING;
    char msg[KS_STATUS_BUF], why[200] = "", out[KS_STATUS_BUF + 320];
    ks__status_message(st, msg, sizeof(msg));
    if (!known) {
        snprintf(why, sizeof(why), "code %d at %s, which is not a status code (0..6)", (int)code,
                 ks__ep_label(ep));
    } else if (st->null_reason) {
        snprintf(why, sizeof(why), "%s at %s with a NULL reason", ks__code_label(code),
                 ks__ep_label(ep));
    } else {
        size_t off = (size_t)snprintf(why, sizeof(why), "%s at %s, which it does not accept (",
                                      ks__code_label(code), ks__ep_label(ep));
        for (int c = 0, first = 1; c <= KS_PENDING; c++)
            if (k_accepts[ep] >> c & 1) {
                off += (size_t)snprintf(why + off, sizeof(why) - off, "%s%s", first ? "" : ", ",
                                        ks__code_label((ks_code)c));
                first = 0;
            }
        snprintf(why + off, sizeof(why) - off, ")");
    }
    snprintf(out, sizeof(out), "plugin \"%s\" returned %s%s%s", in->name, why, msg[0] ? ": " : "",
             msg);
    ks__status_reset(st);
    st->code = KS_ERROR;
    st->plugin = in->name;
    ks__status_add(st, out);
    return KS_ERROR;
}

/* The check in the hot loops: inline, a table lookup; the message is built out of line. */
static inline ks_code check_code(const ks_plugin_inst *in, ks_ep ep, ks_code code, ks_status *st)
{
    if (__builtin_expect(
            (unsigned)code <= KS_PENDING && (k_accepts[ep] >> code & 1) && !st->null_reason, 1))
        return code;
    return invalid_status(in, ep, code, st);
}

static int is_rejection(ks_code c)
{
    return c == KS_UNSCHEDULABLE || c == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || c == KS_PENDING;
}

/* Turns a plugin's unexpected code into upstream's Error wrapping (fmt.Errorf with the plugin's
 * name as %q): `running "X" filter plugin: ..`. */
static void as_error(ks_status *st, const char *fmt, const char *plugin)
{
    char msg[KS_STATUS_BUF], wrapped[KS_STATUS_BUF + 64];
    ks__status_message(st, msg, sizeof(msg));
    snprintf(wrapped, sizeof(wrapped), fmt, plugin, msg[0] ? msg : "error");
    ks__status_reset(st);
    st->code = KS_ERROR;
    st->plugin = plugin;
    ks__status_add(st, wrapped);
}

static int cmp_sym(const void *a, const void *b)
{
    ks_sym x = *(const ks_sym *)a, y = *(const ks_sym *)b;
    return x < y ? -1 : x > y;
}

/* result := result ∩ r (both sorted & unique afterwards). */
static void intersect(ks_prefilter_result *acc, int *restricted, ks_prefilter_result *r)
{
    if (r->n) /* an empty set may come with nodes == NULL */
        qsort(r->nodes, r->n, sizeof(ks_sym), cmp_sym);
    size_t u = 0;
    for (size_t i = 0; i < r->n; i++)
        if (u == 0 || r->nodes[u - 1] != r->nodes[i])
            r->nodes[u++] = r->nodes[i];
    r->n = u;
    if (!*restricted) {
        ks_sym *copy = malloc((r->n ? r->n : 1) * sizeof(ks_sym));
        if (!copy)
            return;
        if (r->n)
            memcpy(copy, r->nodes, r->n * sizeof(ks_sym));
        free(acc->nodes);
        acc->nodes = copy;
        acc->n = acc->cap = r->n;
        *restricted = 1;
        return;
    }
    size_t i = 0, j = 0, k = 0;
    while (i < acc->n && j < r->n) {
        if (acc->nodes[i] == r->nodes[j]) {
            acc->nodes[k++] = acc->nodes[i];
            i++;
            j++;
        } else if (acc->nodes[i] < r->nodes[j])
            i++;
        else
            j++;
    }
    acc->n = k;
}

static ks_code run_pre_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                              ks_prefilter_result *result, int *restricted, ks_status *st)
{
    ks_status s, first_unsched;
    ks_prefilter_result r = {0};
    const char *narrowing[64];
    size_t nnarrowing = 0;
    int have_unsched = 0;
    *restricted = 0;
    ks__status_reset(st);
    ks__status_reset(&first_unsched);
    cycle->skip_filter = 0;
    for (size_t i = 0; i < fw->n[KS_PT_PRE_FILTER]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PRE_FILTER][i].inst;
        ks__status_reset(&s);
        r.used = 0;
        r.n = 0;
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_PRE_FILTER, pod, KS_SYM_ABSENT, code,
              in->desc->pre_filter(in->self, cycle, pod, &r, &s));
        if (code != KS_SKIP)
            COUNT_EVAL(cycle, KS_EVAL_PRE_FILTER, in);
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_PRE_FILTER, code, &s);
        if (code == KS_SKIP) {
            /* Its Filter (and AddPod/RemovePod) will not run. */
            cycle->skip_filter |= 1ull << in->index;
            continue;
        }
        if (code != KS_SUCCESS) {
            status_from(&s, code, in);
            if (code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
                *st = s;
                free(r.nodes);
                return code;
            }
            if (code == KS_UNSCHEDULABLE || code == KS_PENDING) {
                if (!have_unsched)
                    first_unsched = s;
                have_unsched = 1;
                continue;
            }
            as_error(&s, "running PreFilter plugin \"%s\": %s", in->name);
            *st = s;
            free(r.nodes);
            return KS_ERROR;
        }
        if (r.used) {
            intersect(result, restricted, &r);
            /* Kept sorted: upstream prints the plugins with sets.List (byte order), so a
             * NodeName + NodeAffinity conflict reads "[NodeAffinity NodeName]". */
            if (nnarrowing < 64) {
                size_t at = nnarrowing++;
                while (at > 0 && strcmp(narrowing[at - 1], in->name) > 0) {
                    narrowing[at] = narrowing[at - 1];
                    at--;
                }
                narrowing[at] = in->name;
            }
            if (result->n == 0) {
                char msg[KS_STATUS_BUF], list[KS_STATUS_BUF] = "";
                size_t off = 0;
                for (size_t k = 0; k < nnarrowing; k++)
                    off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", k ? " " : "",
                                            narrowing[k]);
                if (nnarrowing == 1)
                    snprintf(msg, sizeof(msg), "node(s) didn't satisfy plugin %s", list);
                else
                    snprintf(msg, sizeof(msg),
                             "node(s) didn't satisfy plugin(s) [%s] simultaneously", list);
                ks__status_reset(st);
                st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
                st->plugin = in->name;
                ks__status_add(st, msg);
                free(r.nodes);
                return st->code;
            }
        }
    }
    free(r.nodes);
    if (*restricted) {
        char list[160] = "";
        size_t off = 0;
        for (size_t k = 0; k < nnarrowing; k++)
            off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", k ? " " : "",
                                    narrowing[k]);
        snprintf(result->excluded_msg, sizeof(result->excluded_msg),
                 "node(s) didn't satisfy plugin(s) [%s]", list);
    }
    if (have_unsched) {
        *st = first_unsched;
        return st->code;
    }
    return KS_SUCCESS;
}

/* The per-node loop. instr is a constant at each call site below, so the compiler makes one copy
 * without any metrics code (every cycle without metrics, and unsampled ones without evaluation
 * counting) and one with it. */
static inline __attribute__((always_inline)) ks_code
run_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, const ks_node_info *ni, ks_status *st,
           uint16_t *passed_count, const int instr)
{
    uint16_t passed = 0;
    for (size_t i = 0; i < fw->n[KS_PT_FILTER]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_FILTER][i].inst;
        if (cycle->skip_filter & (1ull << in->index))
            continue;
        ks_code code;
        if (instr) {
            COUNT_EVAL(cycle, KS_EVAL_FILTER, in);
            PCALL(fw, cycle, in, KS_EP_FILTER, pod, ni->name, code,
                  in->desc->filter(in->self, cycle, pod, ni, st));
        } else {
            code = CALL(in, KS_EP_FILTER, pod, ni->name,
                        in->desc->filter(in->self, cycle, pod, ni, st));
        }
        if (code != KS_SUCCESS) {
            current_plugin = NULL;
            code = check_code(in, KS_EP_FILTER, code, st);
            if (passed_count)
                *passed_count = passed;
            status_from(st, code, in);
            if (!is_rejection(code)) {
                as_error(st, "running \"%s\" filter plugin: %s", in->name);
                return KS_ERROR;
            }
            if (st->nreasons == 0)
                ks__status_add(st, in->name);
            return code;
        }
        passed++;
    }
    current_plugin = NULL;
    if (passed_count)
        *passed_count = passed;
    return KS_SUCCESS;
}

/* Out of line, so that the plain path below keeps the register use of a loop without metrics. */
static __attribute__((noinline)) ks_code
run_filter_instrumented(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, const ks_node_info *ni,
                        ks_status *st, uint16_t *passed_count)
{
    return run_filter(fw, cycle, pod, ni, st, passed_count, 1);
}

ks_code ks__fw_run_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, const ks_node_info *ni,
                          ks_status *st, uint16_t *passed_count)
{
    if (__builtin_expect(cycle->evals != NULL || cycle->sampled, 0))
        return run_filter_instrumented(fw, cycle, pod, ni, st, passed_count);
    return run_filter(fw, cycle, pod, ni, st, passed_count, 0);
}

void ks__fw_iso_prefetch_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, size_t start,
                                size_t count)
{
    for (size_t i = 0; i < fw->n[KS_PT_FILTER]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_FILTER][i].inst;
        if (in->iso && !(cycle->skip_filter & (1ull << in->index)))
            ks__iso_prefetch_filter(in->iso, cycle, pod, start, count);
    }
}

void ks__post_filter_result_clear(ks_post_filter_result *r)
{
    for (size_t i = 0; i < r->nvictims; i++)
        ks__pod_unref(r->victims[i]);
    free(r->victims);
    r->victims = NULL;
    r->nvictims = r->victims_cap = 0;
    r->nominated = KS_SYM_ABSENT;
}

static ks_code run_post_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                               const ks_filter_outcome *o, ks_post_filter_result *result,
                               ks_status *st)
{
    ks_status s;
    char joined[KS_STATUS_BUF] = "";
    size_t off = 0;
    memset(result, 0, sizeof(*result));
    result->nominated = KS_SYM_ABSENT;
    ks__status_reset(st);
    st->code = KS_UNSCHEDULABLE;
    for (size_t i = 0; i < fw->n[KS_PT_POST_FILTER]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_POST_FILTER][i].inst;
        struct ks_post_filter_result r;
        memset(&r, 0, sizeof(r));
        r.nominated = KS_SYM_ABSENT;
        ks__status_reset(&s);
        ks_code code;
        int64_t t0 = fw->metrics ? ks__clock_now_ns() : 0;
        PCALL(fw, cycle, in, KS_EP_POST_FILTER, pod, KS_SYM_ABSENT, code,
              in->desc->post_filter(in->self, cycle, pod, o, &r, &s));
        if (fw->metrics &&
            in->index == fw->metrics->preemption_inst) { /* upstream: in the plugin */
            ks__metrics_inc(fw->metrics->m->preemption_attempts_solo);
            /* its Evaluator times evaluate(); here the whole call (GenericWorkload's family) */
            ks__metrics_observe(KS_METRICS_WITH(fw->metrics->m->preemption_evaluation_duration,
                                                "pod", ks__code_label(code)),
                                ks__seconds_since(t0));
        }
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_POST_FILTER, code, &s);
        if (code == KS_SUCCESS || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || code == KS_ERROR) {
            status_from(&s, code, in);
            *st = s;
            if (code == KS_SUCCESS) {
                ks__post_filter_result_clear(result);
                *result = r; /* the nomination (and victims) of the plugin that succeeded */
            } else {
                ks__post_filter_result_clear(&r);
            }
            return code;
        }
        /* upstream keeps the last non-noop nomination of the plugins that did not succeed */
        if (r.nominated != KS_SYM_ABSENT)
            result->nominated = r.nominated;
        ks__post_filter_result_clear(&r);
        char msg[KS_STATUS_BUF];
        ks__status_message(&s, msg, sizeof(msg));
        if (msg[0] && off < sizeof(joined))
            off +=
                (size_t)snprintf(joined + off, sizeof(joined) - off, "%s%s", off ? ", " : "", msg);
    }
    if (joined[0])
        ks__status_add(st, joined);
    return st->code;
}

static ks_code run_pre_score(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                             const ks_node_info *const *nodes, size_t n, ks_status *st)
{
    cycle->skip_score = 0;
    for (size_t i = 0; i < fw->n[KS_PT_PRE_SCORE]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PRE_SCORE][i].inst;
        ks__status_reset(st);
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_PRE_SCORE, pod, KS_SYM_ABSENT, code,
              in->desc->pre_score(in->self, cycle, pod, nodes, n, st));
        if (code != KS_SKIP)
            COUNT_EVAL(cycle, KS_EVAL_PRE_SCORE, in);
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_PRE_SCORE, code, st);
        if (code == KS_SKIP) {
            for (size_t s = 0; s < fw->n[KS_PT_SCORE] && s < 64; s++)
                if (fw->pt[KS_PT_SCORE][s].inst == in)
                    cycle->skip_score |= 1ull << s;
            continue;
        }
        if (code != KS_SUCCESS) {
            status_from(st, code, in);
            as_error(st, "running PreScore plugin \"%s\": %s", in->name);
            return KS_ERROR;
        }
    }
    ks__status_reset(st);
    return KS_SUCCESS;
}

static ks_code run_reserve(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                           ks_status *st)
{
    for (size_t i = 0; i < fw->n[KS_PT_RESERVE]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_RESERVE][i].inst;
        if (!in->desc->reserve)
            continue;
        ks__status_reset(st);
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_RESERVE, pod, node, code,
              in->desc->reserve(in->self, cycle, pod, node, st));
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_RESERVE, code, st);
        if (code != KS_SUCCESS) {
            status_from(st, code, in);
            if (!is_rejection(code)) {
                as_error(st, "running Reserve plugin \"%s\": %s", in->name);
                return KS_ERROR;
            }
            return code;
        }
    }
    ks__status_reset(st);
    return KS_SUCCESS;
}

static void run_unreserve(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node)
{
    for (size_t i = fw->n[KS_PT_RESERVE]; i-- > 0;) {
        ks_plugin_inst *in = fw->pt[KS_PT_RESERVE][i].inst;
        if (in->desc->unreserve)
            PCALL_VOID(fw, cycle, in, KS_EP_UNRESERVE, pod, node,
                       in->desc->unreserve(in->self, cycle, pod, node));
    }
    current_plugin = NULL;
}

#define MAX_PERMIT_TIMEOUT_MS (15LL * 60 * 1000)

static ks_code run_permit(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                          int64_t *timeout_ms, uint64_t *waiting, ks_status *st)
{
    *timeout_ms = 0;
    *waiting = 0;
    for (size_t i = 0; i < fw->n[KS_PT_PERMIT]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PERMIT][i].inst;
        int64_t t = 0;
        ks__status_reset(st);
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_PERMIT, pod, node, code,
              in->desc->permit(in->self, cycle, pod, node, &t, st));
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_PERMIT, code, st);
        if (code == KS_WAIT) {
            if (t > MAX_PERMIT_TIMEOUT_MS || t <= 0)
                t = MAX_PERMIT_TIMEOUT_MS;
            if (t > *timeout_ms)
                *timeout_ms = t;
            *waiting |= 1ull << i;
            continue;
        }
        if (code != KS_SUCCESS) {
            status_from(st, code, in);
            if (!is_rejection(code)) {
                as_error(st, "running Permit plugin \"%s\": %s", in->name);
                return KS_ERROR;
            }
            return code;
        }
    }
    ks__status_reset(st);
    return *waiting ? KS_WAIT : KS_SUCCESS;
}

static ks_code run_pre_bind_pre_flights(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                                        ks_status *st)
{
    ks_code result = KS_SKIP;
    cycle->skip_pre_bind = 0;
    for (size_t i = 0; i < fw->n[KS_PT_PRE_BIND]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PRE_BIND][i].inst;
        ks__status_reset(st);
        if (!in->desc->pre_bind_pre_flight) {
            result = KS_SUCCESS;
            continue;
        }
        /* AllowParallel is read but PreBind runs the plugins one after the other: the outcome is
         * the same, only slower when several have work. */
        ks_prebind_preflight pf = {0};
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_PRE_BIND_PRE_FLIGHT, pod, node, code,
              in->desc->pre_bind_pre_flight(in->self, cycle, pod, node, &pf, st));
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_PRE_BIND_PRE_FLIGHT, code, st);
        if (code == KS_SUCCESS) {
            result = KS_SUCCESS;
        } else if (code == KS_SKIP) {
            if (i < 64)
                cycle->skip_pre_bind |= 1ull << i;
        } else if (code == KS_ERROR) {
            status_from(st, code, in);
            as_error(st, "running PreBindPreFlight \"%s\": %s", in->name);
            return KS_ERROR;
        } else {
            char msg[KS_STATUS_BUF];
            snprintf(msg, sizeof(msg),
                     "PreBindPreFlight %s returned \"%s\", which is unsupported. It is supposed "
                     "to return Success, Skip, or Error status",
                     in->name, ks__code_label(code));
            ks__status_reset(st);
            st->code = KS_ERROR;
            st->plugin = in->name;
            ks__status_add(st, msg);
            return KS_ERROR;
        }
    }
    ks__status_reset(st);
    return result;
}

static ks_code run_pre_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                            ks_status *st)
{
    for (size_t i = 0; i < fw->n[KS_PT_PRE_BIND]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PRE_BIND][i].inst;
        if (i < 64 && (cycle->skip_pre_bind & (1ull << i)))
            continue;
        ks__status_reset(st);
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_PRE_BIND, pod, node, code,
              in->desc->pre_bind(in->self, cycle, pod, node, st));
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_PRE_BIND, code, st);
        if (code == KS_SKIP)
            continue;
        if (code != KS_SUCCESS) {
            status_from(st, code, in);
            if (!is_rejection(code)) {
                as_error(st, "running PreBind plugin \"%s\": %s", in->name);
                return KS_ERROR;
            }
            return code;
        }
    }
    ks__status_reset(st);
    return KS_SUCCESS;
}

static ks_code run_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node, ks_status *st)
{
    for (size_t i = 0; i < fw->n[KS_PT_BIND]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_BIND][i].inst;
        ks__status_reset(st);
        ks_code code;
        PCALL(fw, cycle, in, KS_EP_BIND, pod, node, code,
              in->desc->bind(in->self, cycle, pod, node, st));
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, KS_EP_BIND, code, st);
        if (code == KS_SKIP)
            continue;
        if (code != KS_SUCCESS) {
            status_from(st, code, in);
            as_error(st, "running Bind plugin \"%s\": %s", in->name);
            return KS_ERROR;
        }
        return KS_SUCCESS;
    }
    ks__status_reset(st);
    st->code = KS_SKIP;
    return KS_SKIP;
}

static void run_post_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node)
{
    for (size_t i = 0; i < fw->n[KS_PT_POST_BIND]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_POST_BIND][i].inst;
        PCALL_VOID(fw, cycle, in, KS_EP_POST_BIND, pod, node,
                   in->desc->post_bind(in->self, cycle, pod, node));
    }
    current_plugin = NULL;
}

static ks_code run_pre_enqueue(ks_framework *fw, ks_pod *pod, ks_status *st, int *plugin_index,
                               int sampled)
{
    *plugin_index = -1;
    for (size_t i = 0; i < fw->n[KS_PT_PRE_ENQUEUE]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PRE_ENQUEUE][i].inst;
        ks__status_reset(st);
        int64_t t0 = sampled ? ks__clock_now_ns() : 0;
        ks_code code = CALL(in, KS_EP_PRE_ENQUEUE, pod, KS_SYM_ABSENT,
                            in->desc->pre_enqueue(in->self, pod, st));
        if (sampled)
            ks__fw_metrics_plugin(fw->metrics, in->index, KS_EP_PRE_ENQUEUE, code, t0);
        current_plugin = NULL;
        if (code != KS_SUCCESS) {
            code = check_code(in, KS_EP_PRE_ENQUEUE, code, st);
            status_from(st, code, in);
            *plugin_index = in->index;
            return code;
        }
    }
    ks__status_reset(st);
    return KS_SUCCESS;
}

/* ---- dry runs: copies, nominated pods, PreFilter extensions -------------------------------- */

ks_node_info *ks__cycle_clone_node_info(ks_cycle *cycle, const ks_node_info *ni)
{
    if (cycle->nni_clones == cycle->ni_clones_cap) {
        size_t cap = cycle->ni_clones_cap ? cycle->ni_clones_cap * 2 : 8;
        ks_node_info **a = realloc(cycle->ni_clones, cap * sizeof(*a));
        if (!a)
            return NULL;
        cycle->ni_clones = a;
        cycle->ni_clones_cap = cap;
    }
    ks_node_info *copy = ks__node_info_clone(ni);
    if (copy)
        cycle->ni_clones[cycle->nni_clones++] = copy;
    return copy;
}

static ks_code prefilter_extension(ks_framework *fw, ks_cycle *cycle, const ks_pod *pod,
                                   const ks_pod *other, const ks_node_info *ni, ks_status *st,
                                   int add)
{
    for (size_t i = 0; i < fw->n[KS_PT_PRE_FILTER]; i++) {
        ks_plugin_inst *in = fw->pt[KS_PT_PRE_FILTER][i].inst;
        if (cycle->skip_filter & (1ull << in->index))
            continue;
        ks_code (*fn)(void *, ks_cycle *, const ks_pod *, const ks_pod *, const ks_node_info *,
                      ks_status *) =
            add ? in->desc->pre_filter_add_pod : in->desc->pre_filter_remove_pod;
        if (!fn)
            continue;
        ks__status_reset(st);
        ks_code code;
        PCALL(fw, cycle, in, add ? KS_EP_PRE_FILTER_ADD_POD : KS_EP_PRE_FILTER_REMOVE_POD, pod,
              ni->name, code, fn(in->self, cycle, pod, other, ni, st));
        current_plugin = NULL;
        if (code != KS_SUCCESS)
            code = check_code(in, add ? KS_EP_PRE_FILTER_ADD_POD : KS_EP_PRE_FILTER_REMOVE_POD,
                              code, st);
        if (code != KS_SUCCESS) {
            status_from(st, code, in);
            as_error(st,
                     add ? "running AddPod on PreFilter plugin \"%s\": %s"
                         : "running RemovePod on PreFilter plugin \"%s\": %s",
                     in->name);
            return KS_ERROR;
        }
    }
    ks__status_reset(st);
    return KS_SUCCESS;
}

ks_code ks__fw_run_prefilter_add_pod(ks_framework *fw, ks_cycle *cycle, const ks_pod *pod,
                                     const ks_pod *other, const ks_node_info *ni, ks_status *st)
{
    return prefilter_extension(fw, cycle, pod, other, ni, st, 1);
}

ks_code ks__fw_run_prefilter_remove_pod(ks_framework *fw, ks_cycle *cycle, const ks_pod *pod,
                                        const ks_pod *other, const ks_node_info *ni, ks_status *st)
{
    return prefilter_extension(fw, cycle, pod, other, ni, st, 0);
}

static const ks_nominated_set *nominated_for(const ks_cycle *cycle, ks_sym node)
{
    if (!cycle->hooks)
        return NULL;
    for (size_t i = 0; i < cycle->hooks->nnominated; i++)
        if (cycle->hooks->nominated[i].node == node)
            return &cycle->hooks->nominated[i];
    return NULL;
}

ks_code ks__fw_run_filter_with_nominated(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                         const ks_node_info *ni, ks_status *st,
                                         uint16_t *passed_count)
{
    const ks_nominated_set *set = nominated_for(cycle, ni->name);
    if (set) {
        /* Pass 1: with the nominated pods of equal or higher priority, on copies (only this
         * thread touches them: each worker evaluates its own node). */
        ks_node_info *copy = NULL;
        ks_cycle *state = NULL;
        int added = 0;
        ks_code code = KS_SUCCESS;
        for (size_t i = 0; i < set->n; i++) {
            const ks_pod *np = set->pods[i];
            if (np->priority < pod->priority || strcmp(np->uid, pod->uid) == 0)
                continue;
            if (!copy) {
                copy = ks__node_info_clone(ni);
                state = ks__cycle_clone(cycle);
                if (!copy || !state) {
                    ks__node_info_free(copy);
                    ks__cycle_free(state);
                    ks__status_reset(st);
                    ks__status_add(st, "out of memory evaluating nominated pods");
                    st->code = KS_ERROR;
                    return KS_ERROR;
                }
            }
            ks__node_info_add_pod(copy, (ks_pod *)np);
            code = ks__fw_run_prefilter_add_pod(fw, state, pod, np, copy, st);
            added = 1;
            if (code != KS_SUCCESS)
                break;
        }
        if (added && code == KS_SUCCESS)
            code = ks__fw_run_filter(fw, state, pod, copy, st, passed_count);
        ks__node_info_free(copy);
        ks__cycle_free(state);
        if (!added)
            return ks__fw_run_filter(fw, cycle, pod, ni, st, passed_count);
        if (code != KS_SUCCESS)
            return code;
    }
    /* Pass 2 (or the only pass): the node as it is. */
    return ks__fw_run_filter(fw, cycle, pod, ni, st, passed_count);
}

/* ---- Score (upstream RunScorePlugins) ------------------------------------------------------ */

typedef struct score_job {
    ks_framework *fw;
    ks_cycle *cycle;
    ks_pod *pod;
    const ks_node_info *const *nodes;
    size_t n;
    int64_t *scores; /* [plugin][node] */
    _Atomic int error;
    ks_status err_status; /* the first failure, under err_mu */
    pthread_mutex_t err_mu;
} score_job;

/* The first failing Score call wins the cycle's error (upstream: the parallel loop is cancelled
 * with the first error). */
static void score_failed(score_job *j, const ks_plugin_inst *in, const ks_status *st)
{
    pthread_mutex_lock(&j->err_mu);
    if (!j->error) {
        char msg[KS_STATUS_BUF], wrapped[KS_STATUS_BUF + 64];
        ks__status_message(st, msg, sizeof(msg));
        snprintf(wrapped, sizeof(wrapped), "running Score plugins: plugin \"%s\" failed with: %s",
                 in->name, msg);
        ks__status_reset(&j->err_status);
        ks__status_add(&j->err_status, wrapped);
        j->error = 1;
    }
    pthread_mutex_unlock(&j->err_mu);
}

/* One node's scores. instr is a constant at each call below: the copy the scheduler runs without
 * metrics (or in an unsampled cycle without evaluation counters) has no metrics code at all. The
 * evaluation counters use this worker's row. */
static inline __attribute__((always_inline)) int score_node(score_job *j, size_t i, int worker,
                                                            const int instr)
{
    ks_cycle *cycle = j->cycle;
    uint32_t *evals =
        instr && cycle->evals
            ? cycle->evals +
                  ((size_t)KS_EVAL_SCORE * cycle->eval_rows + (size_t)worker) * KS_EVAL_STRIDE
            : NULL;
    for (size_t p = 0; p < j->fw->n[KS_PT_SCORE]; p++) {
        int64_t v = 0;
        if (!(cycle->skip_score & (1ull << p))) {
            ks_plugin_inst *in = j->fw->pt[KS_PT_SCORE][p].inst;
            ks_status st;
            ks__status_reset(&st);
            ks_code code;
            if (instr && evals) /* plugin_evaluation_total */
                evals[in->index]++;
            if (instr)
                PCALL(j->fw, cycle, in, KS_EP_SCORE, j->pod, j->nodes[i]->name, code,
                      in->desc->score(in->self, cycle, j->pod, j->nodes[i], &v, &st));
            else
                code = CALL(in, KS_EP_SCORE, j->pod, j->nodes[i]->name,
                            in->desc->score(in->self, cycle, j->pod, j->nodes[i], &v, &st));
            current_plugin = NULL;
            if (code != KS_SUCCESS) {
                check_code(in, KS_EP_SCORE, code, &st);
                score_failed(j, in, &st);
                return 1;
            }
        }
        j->scores[p * j->n + i] = v;
    }
    return 0;
}

static __attribute__((noinline)) int score_one_instrumented(score_job *j, size_t i, int worker)
{
    return score_node(j, i, worker, 1);
}

static int score_one(void *ctx, size_t i, int worker)
{
    score_job *j = ctx;
    if (__builtin_expect(j->cycle->evals != NULL || j->cycle->sampled, 0))
        return score_one_instrumented(j, i, worker);
    return score_node(j, i, worker, 0);
}

/* NormalizeScore of score plugin p over its row (upstream: the plugin's ScoreExtensions). */
static ks_code normalize_row(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, size_t p,
                             const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                             ks_status *st)
{
    ks_plugin_inst *in = fw->pt[KS_PT_SCORE][p].inst;
    int64_t *row = &out->scores[p * n];
    for (size_t f = 0; f < n; f++)
        out->norm[f] = (ks_node_score){nodes[f], row[f]};
    ks__status_reset(st);
    ks_code code;
    PCALL(fw, cycle, in, KS_EP_SCORE_NORMALIZE, pod, KS_SYM_ABSENT, code,
          in->desc->normalize_score(in->self, cycle, pod, out->norm, n, st));
    current_plugin = NULL;
    if (code != KS_SUCCESS) {
        check_code(in, KS_EP_SCORE_NORMALIZE, code, st);
        char msg[KS_STATUS_BUF], w[KS_STATUS_BUF + 64];
        ks__status_message(st, msg, sizeof(msg));
        snprintf(w, sizeof(w), "running Normalize on Score plugins: plugin \"%s\" failed with: %s",
                 in->name, msg);
        ks__status_reset(st);
        ks__status_add(st, w);
        return KS_ERROR;
    }
    for (size_t f = 0; f < n; f++)
        row[f] = out->norm[f].score;
    return KS_SUCCESS;
}

/* The range check after NormalizeScore, then the weighted sum into the totals. */
static ks_code weigh_row(ks_framework *fw, size_t p, size_t n, ks_score_scratch *out, ks_status *st)
{
    ks_point_entry *pe = &fw->pt[KS_PT_SCORE][p];
    const int64_t *row = &out->scores[p * n];
    for (size_t f = 0; f < n; f++) {
        if (row[f] > KS_MAX_NODE_SCORE || row[f] < KS_MIN_NODE_SCORE) {
            char w[KS_STATUS_BUF];
            snprintf(w, sizeof(w),
                     "applying score defaultWeights on Score plugins: plugin \"%s\" returns an "
                     "invalid score %lld, it should in the range of [0, 100] after normalizing",
                     pe->inst->name, (long long)row[f]);
            ks__status_reset(st);
            ks__status_add(st, w);
            return KS_ERROR;
        }
        out->totals[f] += row[f] * pe->weight;
    }
    return KS_SUCCESS;
}

static ks_code normalize_scores(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                ks_status *st);

static ks_code run_score_plugins(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                 const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                 ks_status *st)
{
    score_job job = {
        .fw = fw, .cycle = cycle, .pod = pod, .nodes = nodes, .n = n, .scores = out->scores};
    cycle->iso_score_nodes = nodes; /* an isolated plugin scores them in one batch */
    cycle->iso_nscore_nodes = n;
    pthread_mutex_init(&job.err_mu, NULL);
    ks__parallelizer_until(fw->parallelizer, KS_OP_SCORE, n, score_one, &job);
    cycle->iso_score_nodes = NULL;
    cycle->iso_nscore_nodes = 0;
    pthread_mutex_destroy(&job.err_mu);
    if (job.error) {
        *st = job.err_status;
        return KS_ERROR;
    }
    if (out->raw)
        memcpy(out->raw, out->scores, fw->n[KS_PT_SCORE] * n * sizeof(*out->raw));
    return normalize_scores(fw, cycle, pod, nodes, n, out, st);
}

/* upstream normalizeScores: per non-skipped plugin NormalizeScore, then the range check and the
 * weighted sums (a skipped plugin contributes 0). */
static ks_code normalize_scores(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                ks_status *st)
{
    for (size_t f = 0; f < n; f++)
        out->totals[f] = 0;
    for (size_t p = 0; p < fw->n[KS_PT_SCORE]; p++) {
        if (cycle->skip_score & (1ull << p))
            continue; /* contributes 0 */
        ks_code code = KS_SUCCESS;
        if (fw->pt[KS_PT_SCORE][p].inst->desc->normalize_score)
            code = normalize_row(fw, cycle, pod, p, nodes, n, out, st);
        if (code == KS_SUCCESS)
            code = weigh_row(fw, p, n, out, st);
        if (code != KS_SUCCESS)
            return code;
    }
    return KS_SUCCESS;
}

/* ---- extension points with their duration (framework_extension_point_duration_seconds) ------ */

/* Runs one extension point, `code = call`, and, when the framework has metrics and `timed`,
 * observes how long it took with the status it ended with, as upstream's Run<Point>Plugins defers.
 */
#define RUN_POINT(fw, ep, timed, code, call)                                                       \
    do {                                                                                           \
        int64_t t0_ = (timed) ? ks__fw_metrics_ep_start((fw)->metrics) : 0;                        \
        (code) = (call);                                                                           \
        if (t0_)                                                                                   \
            ks__fw_metrics_ep((fw)->metrics, (ep), (code), t0_);                                   \
    } while (0)

ks_code ks__fw_run_pre_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                              ks_prefilter_result *result, int *restricted, ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_PRE_FILTER, 1, c, run_pre_filter(fw, cycle, pod, result, restricted, st));
    return c;
}

ks_code ks__fw_run_post_filter(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                               const ks_filter_outcome *o, ks_post_filter_result *result,
                               ks_status *st)
{
    /* upstream runs (and times) PostFilter only when the profile has PostFilter plugins */
    ks_code c;
    RUN_POINT(fw, KS_EP_POST_FILTER, fw->n[KS_PT_POST_FILTER] > 0, c,
              run_post_filter(fw, cycle, pod, o, result, st));
    return c;
}

ks_code ks__fw_run_pre_score(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                             const ks_node_info *const *nodes, size_t n, ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_PRE_SCORE, 1, c, run_pre_score(fw, cycle, pod, nodes, n, st));
    return c;
}

ks_code ks__fw_run_score_plugins(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                 const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                 ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_SCORE, 1, c, run_score_plugins(fw, cycle, pod, nodes, n, out, st));
    return c;
}

ks_code ks__fw_run_raw_score_plugins(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                     const ks_node_info *const *nodes, size_t n, int64_t *scores,
                                     ks_status *st)
{
    score_job job = {
        .fw = fw, .cycle = cycle, .pod = pod, .nodes = nodes, .n = n, .scores = scores};
    pthread_mutex_init(&job.err_mu, NULL);
    ks__parallelizer_until(fw->parallelizer, KS_OP_SCORE, n, score_one, &job);
    pthread_mutex_destroy(&job.err_mu);
    if (job.error) {
        *st = job.err_status;
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

ks_code ks__fw_normalize_scores(ks_framework *fw, ks_cycle *cycle, ks_pod *pod,
                                const ks_node_info *const *nodes, size_t n, ks_score_scratch *out,
                                ks_status *st)
{
    return normalize_scores(fw, cycle, pod, nodes, n, out, st);
}

ks_code ks__fw_run_reserve(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                           ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_RESERVE, 1, c, run_reserve(fw, cycle, pod, node, st));
    return c;
}

void ks__fw_run_unreserve(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node)
{
    ks_code c; /* upstream records the calls that return nothing as Success */
    RUN_POINT(fw, KS_EP_UNRESERVE, 1, c, (run_unreserve(fw, cycle, pod, node), KS_SUCCESS));
}

ks_code ks__fw_run_permit(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                          int64_t *timeout_ms, uint64_t *waiting, ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_PERMIT, 1, c, run_permit(fw, cycle, pod, node, timeout_ms, waiting, st));
    return c;
}

ks_code ks__fw_run_pre_bind_pre_flights(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                                        ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_PRE_BIND_PRE_FLIGHT, 1, c,
              run_pre_bind_pre_flights(fw, cycle, pod, node, st));
    return c;
}

ks_code ks__fw_run_pre_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node,
                            ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_PRE_BIND, 1, c, run_pre_bind(fw, cycle, pod, node, st));
    return c;
}

ks_code ks__fw_run_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node, ks_status *st)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_BIND, 1, c, run_bind(fw, cycle, pod, node, st));
    return c;
}

void ks__fw_run_post_bind(ks_framework *fw, ks_cycle *cycle, ks_pod *pod, ks_sym node)
{
    ks_code c;
    RUN_POINT(fw, KS_EP_POST_BIND, 1, c, (run_post_bind(fw, cycle, pod, node), KS_SUCCESS));
}

ks_code ks__fw_run_pre_enqueue(ks_framework *fw, ks_pod *pod, ks_status *st, int *plugin_index)
{
    if (!fw->metrics)
        return run_pre_enqueue(fw, pod, st, plugin_index, 0);
    /* upstream runPreEnqueuePlugins: plugins timed in a sampled share of runs, the point always;
     * its deferred observation reads a status variable that the loop shadows, so the point's
     * status is always Success. */
    int64_t t0 = ks__clock_now_ns();
    ks_code c = run_pre_enqueue(fw, pod, st, plugin_index, ks__fw_metrics_sample(fw->metrics));
    ks__fw_metrics_ep(fw->metrics, KS_EP_PRE_ENQUEUE, KS_SUCCESS, t0);
    return c;
}

/* ---- pod signatures (upstream computeBatchablePlugins, SignPod) ----------------------------- */

/* The key of the fragment the host adds for a KS_PLUGIN_NODE_LOCAL plugin without a sign slot
 * (kubesched's own; upstream has no such plugins). */
#define NODE_LOCAL_KEY "kubesched.NodeLocal(v1.Pod.Namespace,Labels,Annotations,Spec)"

static int is_node_local(const ks_plugin_inst *in)
{
    return !in->desc->sign && (in->desc->flags & KS_PLUGIN_NODE_LOCAL);
}

int ks__fw_setup_batching(ks_framework *fw, int on)
{
    if (!on)
        return 0;
    fw->batch = ks__batch_new(fw);
    fw->signers = calloc(fw->ninst ? fw->ninst : 1, sizeof(*fw->signers));
    if (!fw->batch || !fw->signers)
        return KS_ENOMEM;
    /* Every PreFilter, Filter, PreScore and Score plugin, once, in that order; one that cannot
     * sign turns signatures off for the profile (kubesched has no extenders, which upstream
     * also counts here). */
    static const int points[] = {KS_PT_PRE_FILTER, KS_PT_FILTER, KS_PT_PRE_SCORE, KS_PT_SCORE};
    uint64_t seen = 0;
    fw->enable_signatures = 1;
    for (size_t k = 0; k < sizeof(points) / sizeof(points[0]); k++)
        for (size_t i = 0; i < fw->n[points[k]]; i++) {
            ks_plugin_inst *in = fw->pt[points[k]][i].inst;
            if (seen & (1ull << in->index))
                continue;
            seen |= 1ull << in->index;
            if (in->desc->sign || is_node_local(in)) {
                fw->signers[fw->nsigners++] = in;
            } else {
                fw->enable_signatures = 0;
                if (ks__log_enabled(2))
                    ks__log('I', NULL,
                            "Disabling signatures for profile %s because plugin %s does not "
                            "support it (no sign slot and no KS_PLUGIN_NODE_LOCAL flag)",
                            fw->profile_name, in->name);
            }
        }
    return 0;
}

void ks__signature_add(ks_signature *sig, const char *key, const char *value_json)
{
    if (!sig || sig->oom || !key || !value_json)
        return;
    for (size_t i = 0; i < sig->n; i++)
        if (strcmp(sig->f[i].key, key) == 0)
            return; /* the same key from another plugin: the first stays (same value) */
    if (sig->n == sig->cap) {
        size_t cap = sig->cap ? 2 * sig->cap : 16;
        void *f = realloc(sig->f, cap * sizeof(*sig->f));
        if (!f) {
            sig->oom = 1;
            return;
        }
        sig->f = f;
        sig->cap = cap;
    }
    char *k = strdup(key), *v = strdup(value_json);
    if (!k || !v) {
        free(k);
        free(v);
        sig->oom = 1;
        return;
    }
    sig->f[sig->n++] = (struct ks_sign_fragment){k, v};
}

static void signature_clear(ks_signature *sig)
{
    for (size_t i = 0; i < sig->n; i++) {
        free(sig->f[i].key);
        free(sig->f[i].value);
    }
    free(sig->f);
}

/* The host's fragment for node-local plugins: the pod's namespace, labels, annotations and spec
 * as its JSON has them (two pods made from one template give the same text). */
static void sign_node_local(const ks_pod *pod, ks_signature *sig)
{
    cJSON *doc = pod->json ? cJSON_Parse(pod->json) : NULL;
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    cJSON *v = cJSON_CreateObject();
    char *text = NULL;
    if (doc && v) {
        static const char *const meta_keys[] = {"namespace", "labels", "annotations"};
        for (size_t i = 0; i < 3; i++) {
            cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(meta, meta_keys[i]);
            cJSON_AddItemToObject(v, meta_keys[i], it ? it : cJSON_CreateNull());
        }
        cJSON *spec = cJSON_DetachItemFromObjectCaseSensitive(doc, "spec");
        cJSON_AddItemToObject(v, "spec", spec ? spec : cJSON_CreateNull());
        text = cJSON_PrintUnformatted(v);
    }
    if (text)
        ks__signature_add(sig, NODE_LOCAL_KEY, text);
    else
        sig->oom = 1;
    cJSON_free(text);
    cJSON_Delete(v);
    cJSON_Delete(doc);
}

static int fragment_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ks_sign_fragment *)a)->key,
                  ((const struct ks_sign_fragment *)b)->key);
}

/* Appends s as a JSON string (keys are ASCII identifiers; escapes what JSON requires). */
static size_t put_json_string(char *out, const char *s)
{
    size_t n = 0;
    out[n++] = '"';
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[n++] = '\\';
            out[n++] = (char)ch;
        } else if (ch < 0x20) {
            n += (size_t)sprintf(out + n, "\\u%04x", ch);
        } else {
            out[n++] = (char)ch;
        }
    }
    out[n++] = '"';
    return n;
}

static ks_pod_sig *sign_pod(ks_framework *fw, const ks_pod *pod);

/* json.Marshal of the map: {"key":value,...} with the keys sorted. */
static ks_pod_sig *signature_encode(ks_signature *sig)
{
    qsort(sig->f, sig->n, sizeof(*sig->f), fragment_cmp);
    size_t len = 2;
    for (size_t i = 0; i < sig->n; i++)
        len += 6 * strlen(sig->f[i].key) + 2 + 1 + strlen(sig->f[i].value) + 1;
    ks_pod_sig *ps = malloc(sizeof(*ps) + len + 1);
    if (!ps)
        return NULL;
    atomic_init(&ps->refs, 1);
    size_t n = 0;
    ps->json[n++] = '{';
    for (size_t i = 0; i < sig->n; i++) {
        if (i)
            ps->json[n++] = ',';
        n += put_json_string(ps->json + n, sig->f[i].key);
        ps->json[n++] = ':';
        size_t vl = strlen(sig->f[i].value);
        memcpy(ps->json + n, sig->f[i].value, vl);
        n += vl;
    }
    ps->json[n++] = '}';
    ps->json[n] = '\0';
    ps->len = n;
    return ps;
}

ks_pod_sig *ks__fw_sign_pod(ks_framework *fw, const ks_pod *pod)
{
    /* upstream observes the Sign point on every call, signatures enabled or not, and always as
     * Success (its deferred observation reads a status variable the loop shadows). */
    int64_t t0 = ks__fw_metrics_ep_start(fw->metrics);
    ks_pod_sig *ps = sign_pod(fw, pod);
    ks__fw_metrics_ep(fw->metrics, KS_EP_SIGN, KS_SUCCESS, t0);
    return ps;
}

/* SignPod without its metric. */
static ks_pod_sig *sign_pod(ks_framework *fw, const ks_pod *pod)
{
    if (!fw->enable_signatures)
        return NULL;
    ks_signature sig = {0};
    char name[6 * 256 + 3]; /* a DNS subdomain, escaped */
    name[put_json_string(name, ks__sym_str(pod->scheduler_name))] = '\0';
    ks__signature_add(&sig, "v1.Pod.Spec.SchedulerName", name);
    int ok = 1;
    for (size_t i = 0; ok && i < fw->nsigners; i++) {
        ks_plugin_inst *in = fw->signers[i];
        if (!in->desc->sign) {
            sign_node_local(pod, &sig);
            continue;
        }
        ks_status st;
        ks__status_reset(&st);
        int64_t tp = fw->metrics ? ks__clock_now_ns() : 0;
        ks_code code =
            CALL(in, KS_EP_SIGN, pod, KS_SYM_ABSENT, in->desc->sign(in->self, pod, &sig, &st));
        current_plugin = NULL;
        if (tp) /* upstream: every call, not a sampled share */
            ks__fw_metrics_plugin(fw->metrics, in->index, KS_EP_SIGN, code, tp);
        if (code != KS_SUCCESS) {
            if (ks__log_enabled(5)) {
                char msg[KS_STATUS_BUF];
                ks__status_message(&st, msg, sizeof(msg));
                ks__log('I', NULL, "SignPod can't sign pod %s due to plugin %s: %s", pod->key,
                        in->name, msg);
            }
            ok = 0;
        }
    }
    ks_pod_sig *ps = ok && !sig.oom ? signature_encode(&sig) : NULL;
    signature_clear(&sig);
    return ps;
}
