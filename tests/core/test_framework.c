/*
 * Framework runtime and scheduling/binding cycle: extension-point order and status semantics,
 * checked with recording plugins (RecA, RecB) whose behaviour is set by their pluginConfig args.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "sched/host_api.h"
#include "api/intern.h"
#include "api/objects.h"
#include "api/store.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/features.h"
#include "sched/scheduler.h"

/* ---- recording plugins --------------------------------------------------------------------- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char call_log[8192];

static void record(const char *name, const char *point)
{
    pthread_mutex_lock(&log_mu);
    size_t off = strlen(call_log);
    snprintf(call_log + off, sizeof(call_log) - off, "%s%s.%s", off ? " " : "", name, point);
    pthread_mutex_unlock(&log_mu);
}

typedef struct rec {
    const char *name;
    const ks_args *args;
} rec;

/* args: {"<Point>": "<Code>[:reason]"}; Code one of Success, Skip, Unschedulable, Unresolvable,
 * Error, Wait, Pending; "filterNode" restricts a Filter rejection to one node name. */
static ks_code behaviour(rec *r, const char *point, ks_status *st)
{
    const char *v = NULL;
    if (ks_args_get_string(r->args, point, &v) != 0)
        return KS_SUCCESS;
    char code[32];
    const char *colon = strchr(v, ':');
    snprintf(code, sizeof(code), "%.*s", colon ? (int)(colon - v) : (int)strlen(v), v);
    if (colon)
        ks_status_reason(st, colon + 1);
    if (!strcmp(code, "Skip"))
        return KS_SKIP;
    if (!strcmp(code, "Unschedulable"))
        return KS_UNSCHEDULABLE;
    if (!strcmp(code, "Unresolvable"))
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    if (!strcmp(code, "Error"))
        return KS_ERROR;
    if (!strcmp(code, "Wait"))
        return KS_WAIT;
    if (!strcmp(code, "Pending"))
        return KS_PENDING;
    return KS_SUCCESS;
}

static void *rec_create(const char *name, const ks_args *args)
{
    rec *r = calloc(1, sizeof(*r));
    r->name = name;
    r->args = args;
    return r;
}
static void *reca_create(const ks_args *a, ks_error *e)
{
    (void)e;
    return rec_create("RecA", a);
}
static void *recb_create(const ks_args *a, ks_error *e)
{
    (void)e;
    return rec_create("RecB", a);
}
static void rec_destroy(void *self) { free(self); }

static ks_code rec_pre_filter(void *self, ks_cycle *c, const ks_pod *p, ks_prefilter_result *res,
                              ks_status *st)
{
    rec *r = self;
    const char *only = NULL;
    record(r->name, "PreFilter");
    if (ks_args_get_string(r->args, "preFilterNodes", &only) == 0) {
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", only);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
            ks_prefilter_result_add_node(res, ks_intern(t));
    }
    return behaviour(r, "PreFilter", st);
}

static ks_code rec_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                          ks_status *st)
{
    rec *r = self;
    const char *node = NULL;
    record(r->name, "Filter");
    if (ks_args_get_string(r->args, "filterNode", &node) == 0 &&
        strcmp(ks_sym_str(ks_node_name(ks_node_info_node(ni))), node) != 0)
        return KS_SUCCESS;
    return behaviour(r, "Filter", st);
}

static ks_code rec_post_filter(void *self, ks_cycle *c, const ks_pod *p, const ks_filter_outcome *o,
                               ks_post_filter_result *res, ks_status *st)
{
    rec *r = self;
    record(r->name, "PostFilter");
    return behaviour(r, "PostFilter", st);
}

static ks_code rec_pre_score(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *const *n,
                             size_t nn, ks_status *st)
{
    rec *r = self;
    record(r->name, "PreScore");
    return behaviour(r, "PreScore", st);
}

static ks_code rec_score(void *self, ks_cycle *c, const ks_pod *p, const ks_node_info *ni,
                         int64_t *score, ks_status *st)
{
    rec *r = self;
    int64_t v = 0;
    /* args "score_<node>": raw score for that node */
    char key[96];
    snprintf(key, sizeof(key), "score_%s", ks_sym_str(ks_node_name(ks_node_info_node(ni))));
    ks_args_get_int(r->args, key, &v);
    *score = v;
    return behaviour(r, "Score", st);
}

static ks_code rec_normalize(void *self, ks_cycle *c, const ks_pod *p, ks_node_score *s, size_t n,
                             ks_status *st)
{
    rec *r = self;
    int64_t mul = 1;
    record(r->name, "NormalizeScore");
    ks_args_get_int(r->args, "normalizeMultiply", &mul);
    for (size_t i = 0; i < n; i++)
        s[i].score *= mul;
    return behaviour(r, "NormalizeScore", st);
}

static ks_code rec_reserve(void *self, ks_cycle *c, const ks_pod *p, ks_sym node, ks_status *st)
{
    rec *r = self;
    record(r->name, "Reserve");
    return behaviour(r, "Reserve", st);
}

static void rec_unreserve(void *self, ks_cycle *c, const ks_pod *p, ks_sym node)
{
    rec *r = self;
    record(r->name, "Unreserve");
}

static ks_code rec_permit(void *self, ks_cycle *c, const ks_pod *p, ks_sym node, int64_t *timeout,
                          ks_status *st)
{
    rec *r = self;
    int64_t t = 0;
    record(r->name, "Permit");
    if (ks_args_get_int(r->args, "permitTimeoutMs", &t) == 0)
        *timeout = t;
    return behaviour(r, "Permit", st);
}

static ks_code rec_pre_bind(void *self, ks_cycle *c, const ks_pod *p, ks_sym node, ks_status *st)
{
    rec *r = self;
    record(r->name, "PreBind");
    return behaviour(r, "PreBind", st);
}

static ks_code rec_pre_bind_pre_flight(void *self, ks_cycle *c, const ks_pod *p, ks_sym node,
                                       ks_prebind_preflight *result, ks_status *st)
{
    rec *r = self;
    record(r->name, "PreBindPreFlight");
    return behaviour(r, "PreBindPreFlight", st);
}

static ks_code rec_bind(void *self, ks_cycle *c, const ks_pod *p, ks_sym node, ks_status *st)
{
    rec *r = self;
    record(r->name, "Bind");
    ks_code code = behaviour(r, "Bind", st);
    return code;
}

static void rec_post_bind(void *self, ks_cycle *c, const ks_pod *p, ks_sym node)
{
    rec *r = self;
    record(r->name, "PostBind");
}

#define REC_DESC(sym, NAME, CREATE_FN)                                                             \
    static const ks_plugin_desc sym = {.size = sizeof(ks_plugin_desc),                             \
                                       .name = NAME,                                               \
                                       .create = CREATE_FN,                                        \
                                       .destroy = rec_destroy,                                     \
                                       .pre_filter = rec_pre_filter,                               \
                                       .filter = rec_filter,                                       \
                                       .post_filter = rec_post_filter,                             \
                                       .pre_score = rec_pre_score,                                 \
                                       .score = rec_score,                                         \
                                       .normalize_score = rec_normalize,                           \
                                       .reserve = rec_reserve,                                     \
                                       .unreserve = rec_unreserve,                                 \
                                       .permit = rec_permit,                                       \
                                       .pre_bind = rec_pre_bind,                                   \
                                       .pre_bind_pre_flight = rec_pre_bind_pre_flight,             \
                                       .bind = rec_bind,                                           \
                                       .post_bind = rec_post_bind}
REC_DESC(reca_desc, "RecA", reca_create);
REC_DESC(recb_desc, "RecB", recb_create);

/* ---- a scheduler over a config ------------------------------------------------------------- */

typedef struct world {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_scheduler *s;
    pthread_mutex_t mu;
    char result[64];
    char message[1024];
    char node[64];
    int bound;
    int scheduled; /* bind_done with result Scheduled */
} world;

static world W;

static ks_code source_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    world *w = ctx;
    pthread_mutex_lock(&w->mu);
    w->bound++;
    pthread_mutex_unlock(&w->mu);
    return KS_SUCCESS;
}

/* The source's nominatedNodeName PATCH (NominatedNodeNameForExpectation), in the call log. */
static void source_nominate(void *ctx, const ks_pod *pod, ks_sym node)
{
    (void)ctx, (void)pod;
    record("Source", ks__sym_str(node));
}

static void obs_cycle(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                      const char *result, ks_sym node, const char *message, const ks_explain *ex)
{
    world *w = ctx;
    pthread_mutex_lock(&w->mu);
    snprintf(w->result, sizeof(w->result), "%s", result ? result : "Binding");
    snprintf(w->message, sizeof(w->message), "%s", message ? message : "");
    snprintf(w->node, sizeof(w->node), "%s", node == KS_SYM_ABSENT ? "" : ks__sym_str(node));
    pthread_mutex_unlock(&w->mu);
}

static void obs_bind(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                     const char *result, ks_sym node, const char *message)
{
    world *w = ctx;
    pthread_mutex_lock(&w->mu);
    w->scheduled += strcmp(result, "Scheduled") == 0;
    snprintf(w->result, sizeof(w->result), "%s", result);
    snprintf(w->message, sizeof(w->message), "%s", message ? message : "");
    pthread_mutex_unlock(&w->mu);
}

/* A profile with only PrioritySort, RecA, RecB (and DefaultBinder last unless told otherwise). */
/* Set by a test before world_new: RecB runs before RecA. */
static int recb_first;

static void world_new(const char *reca_args, const char *recb_args, int with_default_binder)
{
    char yaml[4096], err[1024] = "";
    memset(&W, 0, sizeof(W));
    memset(call_log, 0, sizeof(call_log));
    pthread_mutex_init(&W.mu, NULL);
    ks__host_init();
    snprintf(yaml, sizeof(yaml),
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "profiles:\n"
             "- schedulerName: default-scheduler\n"
             "  plugins:\n"
             "    multiPoint:\n"
             "      disabled: [{name: '*'}]\n"
             "      enabled: [{name: PrioritySort}, {name: %s}, {name: %s}%s]\n"
             "  pluginConfig:\n"
             "  - name: RecA\n"
             "    args: %s\n"
             "  - name: RecB\n"
             "    args: %s\n",
             recb_first ? "RecB" : "RecA", recb_first ? "RecA" : "RecB",
             with_default_binder ? ", {name: DefaultBinder}" : "", reca_args ? reca_args : "{}",
             recb_args ? recb_args : "{}");
    W.reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(W.reg, yaml, "test.yaml", &W.cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(ks__registry_add(W.reg, &reca_desc, "test", err, sizeof(err)), 0);
    cr_assert_eq(ks__registry_add(W.reg, &recb_desc, "test", err, sizeof(err)), 0);
    cr_assert_eq(ks__config_plan(W.cfg, W.reg, &W.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = W.cfg,
                           .plans = W.plans,
                           .seed = 1,
                           .binding_workers = 2,
                           .source = {.ctx = &W, .bind = source_bind, .nominate = source_nominate},
                           .observer = {&W, obs_cycle, obs_bind}};
    cr_assert_eq(ks__scheduler_new(&o, &W.s, err, sizeof(err)), 0, "%s", err);
}

static void world_free(void)
{
    ks__scheduler_free(W.s);
    ks__config_plans_free(W.plans, W.cfg->nprofiles);
    ks__config_free(W.cfg);
    ks__registry_free(W.reg);
    pthread_mutex_destroy(&W.mu);
}

static void add_node(const char *name, const char *cpu)
{
    char json[512], err[256];
    ks_node *node;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\","
             "\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
             name, cpu);
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__node_from_json(o, &node, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_node_add(W.s, node), 0);
    ks__node_unref(node);
}

static void add_pod(const char *name)
{
    char json[512], err[256];
    ks_pod *pod;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"containers\":[{"
             "\"name\":\"c\"}]}}",
             name, name);
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_pod_add(W.s, pod), 0);
    ks__pod_unref(pod);
}

/* As add_pod, with status.nominatedNodeName set. */
static void add_nominated_pod(const char *name, const char *nominated)
{
    char json[512], err[256];
    ks_pod *pod;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"containers\":[{"
             "\"name\":\"c\"}]},\"status\":{\"nominatedNodeName\":\"%s\"}}",
             name, name, nominated);
    cJSON *o = cJSON_Parse(json);
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_pod_add(W.s, pod), 0);
    ks__pod_unref(pod);
}

static void schedule(void)
{
    cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1, "no pod was queued");
    ks__scheduler_wait_bindings(W.s);
}

/* ---- tests --------------------------------------------------------------------------------- */

Test(framework, runs_extension_points_in_upstream_order_for_one_node)
{
    world_new(NULL, NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    /* One feasible node: no PreScore/Score (upstream takes it directly). */
    cr_assert_str_eq(
        call_log, "RecA.PreFilter RecB.PreFilter RecA.Filter RecB.Filter RecA.Reserve RecB.Reserve "
                  "RecA.Permit RecB.Permit RecA.PreBindPreFlight RecB.PreBindPreFlight Source.n1 "
                  "RecA.PreBind RecB.PreBind RecA.Bind RecA.PostBind RecB.PostBind");
    cr_assert_str_eq(W.result, "Scheduled");
    world_free();
}

Test(framework, post_filter_stops_at_first_success)
{
    world_new("{Filter: 'Unschedulable:full'}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.PostFilter"), "%s", call_log);
    cr_assert_null(strstr(call_log, "RecB.PostFilter"), "%s", call_log);
    cr_assert_str_eq(W.message, "0/1 nodes are available: 1 full.");
    world_free();
}

Test(framework, first_successful_bind_plugin_wins)
{
    world_new("{Bind: Success}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.Bind RecA.PostBind"), "%s", call_log);
    cr_assert_null(strstr(call_log, "RecB.Bind"), "%s", call_log);
    world_free();
}

Test(framework, bind_skip_passes_to_next_binder)
{
    world_new("{Bind: Skip}", "{Bind: Skip}", 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.Bind RecB.Bind RecA.PostBind"), "%s", call_log);
    cr_assert_eq(W.bound, 1, "DefaultBinder bound through the source");
    cr_assert_str_eq(W.result, "Scheduled");
    world_free();
}

Test(framework, scores_only_with_several_feasible_nodes_and_picks_the_best)
{
    world_new("{score_n1: 10, score_n2: 90, score_n3: 50}", NULL, 1);
    add_node("n1", "4");
    add_node("n2", "4");
    add_node("n3", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.PreScore RecB.PreScore"), "%s", call_log);
    cr_assert(strstr(call_log, "RecA.NormalizeScore RecB.NormalizeScore"), "%s", call_log);
    cr_assert_str_eq(W.node, "n2");
    world_free();
}

Test(framework, prefilter_skip_skips_that_plugins_filter)
{
    world_new("{PreFilter: Skip}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.PreFilter RecB.PreFilter RecB.Filter RecA.Reserve"), "%s",
              call_log);
    world_free();
}

Test(framework, prefilter_unresolvable_stops_and_reports_all_nodes)
{
    world_new("{PreFilter: 'Unresolvable:pod is not ready', PostFilter: Unschedulable}",
              "{PostFilter: Unschedulable}", 1);
    add_node("n1", "4");
    add_node("n2", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(call_log, "RecA.PreFilter RecA.PostFilter RecB.PostFilter");
    cr_assert_str_eq(W.result, "Unschedulable");
    cr_assert_str_eq(W.message, "0/2 nodes are available: pod is not ready.");
    world_free();
}

Test(framework, prefilter_node_subsets_intersect_and_name_the_plugins_when_empty)
{
    world_new("{preFilterNodes: 'n1,n2'}", "{preFilterNodes: 'n3'}", 1);
    add_node("n1", "4");
    add_node("n2", "4");
    add_node("n3", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable");
    cr_assert_str_eq(
        W.message,
        "0/3 nodes are available: node(s) didn't satisfy plugin(s) [RecA RecB] simultaneously.");
    world_free();
}

/* Upstream lists the plugins with sets.List (sorted), not in the order they ran: NodeName (run
 * first by default) and NodeAffinity read "[NodeAffinity NodeName]". */
Test(framework, prefilter_subset_conflict_names_the_plugins_sorted)
{
    recb_first = 1;
    world_new("{preFilterNodes: 'n1'}", "{preFilterNodes: 'n2'}", 1);
    recb_first = 0;
    add_node("n1", "4");
    add_node("n2", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecB.PreFilter RecA.PreFilter"), "%s", call_log);
    cr_assert_str_eq(
        W.message,
        "0/2 nodes are available: node(s) didn't satisfy plugin(s) [RecA RecB] simultaneously.");
    world_free();
}

Test(framework, prefilter_excluded_nodes_name_the_plugins_sorted)
{
    recb_first = 1;
    world_new("{preFilterNodes: 'n1,n2', Filter: 'Unschedulable:nope'}", "{preFilterNodes: 'n1'}",
              1);
    recb_first = 0;
    add_node("n1", "4");
    add_node("n2", "4");
    add_node("n3", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.message, "0/3 nodes are available: 1 nope, 2 node(s) didn't satisfy "
                                "plugin(s) [RecA RecB].");
    world_free();
}

Test(framework, prefilter_subset_limits_evaluated_nodes)
{
    world_new("{preFilterNodes: 'n2', score_n2: 1}", NULL, 1);
    add_node("n1", "4");
    add_node("n2", "4");
    add_node("n3", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.node, "n2");
    world_free();
}

Test(framework, rejections_of_every_node_are_counted)
{
    world_new("{Filter: 'Unschedulable:zeta', filterNode: ''}", "{Filter: 'Unresolvable:alpha'}",
              1);
    char name[16];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        add_node(name, "4");
    }
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable");
    /* filterNode '' matches no node name, so RecA passes every node and RecB rejects all 10 */
    cr_assert_str_eq(W.message, "0/10 nodes are available: 10 alpha.");
    world_free();
}

Test(framework, histogram_sorts_counts_as_strings)
{
    world_new("{Filter: 'Unschedulable:Insufficient cpu', filterNode: n0}",
              "{Filter: 'Unresolvable:node(s) had untolerated taint {a: b}'}", 1);
    char name[16];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        add_node(name, "4");
    }
    add_pod("p");
    schedule();
    /* n0 fails RecA (Insufficient cpu), the 11 others fail RecB: "1 Insufficient cpu" sorts before
     * "11 node(s)". */
    cr_assert_str_eq(
        W.message,
        "0/12 nodes are available: 1 Insufficient cpu, 11 node(s) had untolerated taint {a: b}.");
    world_free();
}

Test(framework, filter_error_is_wrapped_like_upstream)
{
    world_new(NULL, "{Filter: 'Error:boom'}", 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Error");
    cr_assert_str_eq(W.message, "running \"RecB\" filter plugin: boom");
    world_free();
}

Test(framework, reserve_failure_unreserves_in_reverse_order)
{
    world_new(NULL, "{Reserve: 'Unschedulable:no room'}", 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.Reserve RecB.Reserve RecB.Unreserve RecA.Unreserve"), "%s",
              call_log);
    cr_assert_str_eq(W.result, "Unschedulable");
    cr_assert_str_eq(W.message, "0/1 nodes are available: 1 no room.");
    world_free();
}

Test(framework, permit_rejection_unreserves)
{
    world_new("{Permit: 'Unschedulable:not now'}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert(strstr(call_log, "RecA.Permit RecB.Unreserve RecA.Unreserve"), "%s", call_log);
    cr_assert_null(strstr(call_log, "PreBind"));
    world_free();
}

Test(framework, permit_wait_times_out_with_upstream_message)
{
    world_new("{Permit: Wait, permitTimeoutMs: 50}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable");
    cr_assert_str_eq(
        W.message,
        "0/1 nodes are available: 1 rejected due to timeout after waiting 50ms at plugin RecA.");
    cr_assert(strstr(W.message, "at plugin RecA"), "%s", W.message);
    cr_assert(strstr(call_log, "RecB.Unreserve RecA.Unreserve"), "%s", call_log);
    world_free();
}

static void *allow_later(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        if (ks_permit_allow("uid-p", "RecA") == 0)
            return NULL;
        usleep(5000);
    }
    return NULL;
}

Test(framework, permit_wait_is_released_by_allow)
{
    pthread_t t;
    world_new("{Permit: Wait, permitTimeoutMs: 10000}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    pthread_create(&t, NULL, allow_later, NULL);
    schedule();
    pthread_join(t, NULL);
    cr_assert_str_eq(W.result, "Scheduled");
    cr_assert(strstr(call_log, "RecA.PreBind"), "%s", call_log);
    world_free();
}

Test(framework, prebind_failure_unreserves_and_requeues)
{
    world_new(NULL, "{PreBind: 'Error:volume not ready'}", 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Error");
    cr_assert_str_eq(W.message, "running PreBind plugin \"RecB\": volume not ready");
    cr_assert(strstr(call_log, "RecB.PreBind RecB.Unreserve RecA.Unreserve"), "%s", call_log);
    ks_queue_counts qc;
    ks__queue_counts(ks__scheduler_queue(W.s), &qc);
    cr_assert_eq(qc.active + qc.backoff + qc.unschedulable, 1, "the pod is queued again");
    world_free();
}

Test(framework, invalid_normalized_score_is_an_error)
{
    world_new("{score_n1: 60, score_n2: 70, normalizeMultiply: 2}", NULL, 1);
    add_node("n1", "4");
    add_node("n2", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Error");
    cr_assert_str_eq(W.message, "applying score defaultWeights on Score plugins: plugin \"RecA\" "
                                "returns an invalid score 120, it should in the range of [0, 100] "
                                "after normalizing");
    world_free();
}

Test(framework, no_nodes_message)
{
    world_new(NULL, NULL, 1);
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.message, "no nodes available to schedule pods");
    world_free();
}

Test(framework, num_feasible_nodes_to_find_matches_upstream)
{
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 10), 10);
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 99), 99);
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 100), 100);  /* 50-0=50% -> 50 -> min 100 */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 1000), 420); /* 50 - 8 = 42% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 5000), 500); /* 50 - 40 = 10% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(0, 6000), 300); /* 50 - 48 = 2% -> floor 5% */
    cr_assert_eq(ks__num_feasible_nodes_to_find(30, 1000), 300);
    cr_assert_eq(ks__num_feasible_nodes_to_find(1, 1000), 100);
    cr_assert_eq(ks__num_feasible_nodes_to_find(100, 1000), 1000);
}

/* More pods waiting on Permit than there are binding threads: waiting pods are parked, not held
 * by a thread. With 2 binding threads and 5 waiting pods, the 3 pods allowed first are bound
 * while the 2 others still wait (a thread per waiter would leave them stuck behind those two). */
Test(framework, permit_waiters_do_not_hold_binding_threads)
{
    char name[16], uid[32];
    world_new("{Permit: Wait, permitTimeoutMs: 20000}", NULL, 1); /* 2 binding threads */
    add_node("n1", "64");
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "w%d", i);
        add_pod(name);
    }
    for (int i = 0; i < 5; i++)
        cr_assert_eq(ks__scheduler_schedule_one(W.s, 0), 1);
    for (int i = 2; i < 5; i++) {
        snprintf(uid, sizeof(uid), "uid-w%d", i);
        cr_assert_eq(ks_permit_allow(uid, "RecA"), 0, "pod %s is waiting on RecA", uid);
    }
    int scheduled = 0;
    for (int tries = 0; tries < 400 && scheduled < 3; tries++) {
        usleep(5000);
        pthread_mutex_lock(&W.mu);
        scheduled = W.scheduled;
        pthread_mutex_unlock(&W.mu);
    }
    cr_assert_eq(scheduled, 3, "the allowed pods were bound while two others still wait");
    for (int i = 0; i < 2; i++) {
        snprintf(uid, sizeof(uid), "uid-w%d", i);
        cr_assert_eq(ks_permit_reject(uid, "RecA", "not these"), 0);
    }
    ks__scheduler_wait_bindings(W.s);
    cr_assert_eq(W.scheduled, 3);
    world_free();
}

/* ---- PreBindPreFlight and NominatedNodeNameForExpectation (upstream v1.36/v1.35) ----------- */

/* A plugin whose preflight says Skip is not called at PreBind; no plugin with work and no wait
 * on Permit: nothing is nominated (the pod is about to be bound anyway). */
Test(framework, preflight_skip_skips_that_prebind_and_nominates_nothing)
{
    world_new("{PreBindPreFlight: Skip}", "{PreBindPreFlight: Skip}", 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Scheduled");
    cr_assert(strstr(call_log, "RecA.PreBindPreFlight RecB.PreBindPreFlight RecA.Bind"), "%s",
              call_log);
    cr_assert_null(strstr(call_log, ".PreBind "), "%s", call_log);
    cr_assert_null(strstr(call_log, "Source."), "%s", call_log);
    world_free();
}

/* One plugin with work is enough to nominate; only the plugins that said Success run PreBind. */
Test(framework, preflight_success_nominates_before_prebind)
{
    world_new("{PreBindPreFlight: Skip}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Scheduled");
    cr_assert(strstr(call_log, "RecA.PreBindPreFlight RecB.PreBindPreFlight Source.n1 "
                               "RecB.PreBind RecA.Bind"),
              "%s", call_log);
    cr_assert_null(strstr(call_log, "RecA.PreBind "), "%s", call_log);
    world_free();
}

/* The pod already names the node (a preemptor nominated there): no PATCH to send. */
Test(framework, preflight_does_not_renominate_the_same_node)
{
    world_new(NULL, NULL, 1);
    add_node("n1", "4");
    add_nominated_pod("p", "n1");
    schedule();
    cr_assert_str_eq(W.result, "Scheduled");
    cr_assert(strstr(call_log, "RecB.PreBindPreFlight RecA.PreBind"), "%s", call_log);
    cr_assert_null(strstr(call_log, "Source."), "%s", call_log);
    world_free();
}

/* A pod that waits on Permit is nominated before the wait even when no PreBind has work. */
Test(framework, permit_wait_nominates_before_waiting)
{
    pthread_t t;
    world_new("{Permit: Wait, permitTimeoutMs: 10000, PreBindPreFlight: Skip}",
              "{PreBindPreFlight: Skip}", 1);
    add_node("n1", "4");
    add_pod("p");
    pthread_create(&t, NULL, allow_later, NULL);
    schedule();
    pthread_join(t, NULL);
    cr_assert_str_eq(W.result, "Scheduled");
    cr_assert(strstr(call_log, "RecB.PreBindPreFlight Source.n1 RecA.Bind"), "%s", call_log);
    world_free();
}

/* An error fails the binding cycle before PreBind, with upstream's wrapping; it unreserves and
 * requeues as any binding failure. */
Test(framework, preflight_error_fails_the_binding_cycle)
{
    world_new(NULL, "{PreBindPreFlight: 'Error:claim lookup failed'}", 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Error");
    cr_assert_str_eq(W.message, "running PreBindPreFlight \"RecB\": claim lookup failed");
    cr_assert(strstr(call_log, "RecB.PreBindPreFlight RecB.Unreserve RecA.Unreserve"), "%s",
              call_log);
    cr_assert_null(strstr(call_log, "Bind "), "%s", call_log);
    ks_queue_counts qc;
    ks__queue_counts(ks__scheduler_queue(W.s), &qc);
    cr_assert_eq(qc.active + qc.backoff + qc.unschedulable, 1, "the pod is queued again");
    world_free();
}

/* PreBindPreFlight may only say Success, Skip or Error. */
Test(framework, preflight_rejection_is_an_error)
{
    world_new("{PreBindPreFlight: 'Unschedulable:no'}", NULL, 1);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Error");
    cr_assert_str_eq(
        W.message, "PreBindPreFlight RecA returned \"Unschedulable\", which is unsupported. It is "
                   "supposed to return Success, Skip, or Error status");
    world_free();
}

/* --feature-gates NominatedNodeNameForExpectation=false: v1.34's binding cycle. */
Test(framework, gate_off_runs_no_preflight)
{
    char err[256];
    cr_assert_eq(ks__feature_gates_set("NominatedNodeNameForExpectation=false", err, sizeof(err)),
                 0, "%s", err);
    world_new("{PreBindPreFlight: Skip}", NULL, 1);
    cr_assert_eq(ks__feature_gates_set("NominatedNodeNameForExpectation=true", err, sizeof(err)),
                 0);
    add_node("n1", "4");
    add_pod("p");
    schedule();
    cr_assert_str_eq(W.result, "Scheduled");
    cr_assert(strstr(call_log, "RecB.Permit RecA.PreBind RecB.PreBind RecA.Bind"), "%s", call_log);
    cr_assert_null(strstr(call_log, "PreBindPreFlight"), "%s", call_log);
    cr_assert_null(strstr(call_log, "Source."), "%s", call_log);
    world_free();
}

/* ---- pods that need a plugin kubesched lacks ----------------------------------------------- */

static void add_pod_spec(const char *name, const char *spec_extra)
{
    char json[1024], err[256];
    ks_pod *pod;
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"containers\":[{"
             "\"name\":\"c\"}],%s}}",
             name, name, spec_extra);
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "%s", json);
    cr_assert_eq(ks__pod_from_json(o, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(o);
    cr_assert_eq(ks__scheduler_on_pod_add(W.s, pod), 0);
    ks__pod_unref(pod);
}

/* A pod with resource claims is refused, saying what is missing, and waits in unschedulablePods
 * (no event's hint moves it; not an error's backoff loop). */
Test(framework, pod_with_resource_claims_is_refused_without_dynamic_resources)
{
    world_new(NULL, NULL, 1);
    add_node("n1", "4");
    add_pod_spec("p", "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"gpu-0\"}]");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable");
    cr_assert_str_eq(W.message,
                     "0/1 nodes are available: pod uses spec.resourceClaims (dynamic resource "
                     "allocation), which only the DynamicResources plugin can place, and profile "
                     "default-scheduler has no DynamicResources plugin (enable DynamicResources in "
                     "the profile).");
    cr_assert_null(strstr(call_log, "PreFilter"), "no plugin ran: %s", call_log);
    cr_assert_eq(W.bound, 0);
    ks_queue_counts qc;
    ks__queue_counts(ks__scheduler_queue(W.s), &qc);
    cr_assert_eq(qc.unschedulable, 1, "parked as unschedulable (backoff %zu)", qc.backoff);
    /* a node event does not move it */
    add_node("n2", "4");
    ks__queue_counts(ks__scheduler_queue(W.s), &qc);
    cr_assert_eq(qc.unschedulable, 1);
    world_free();
}

/* A persistentVolumeClaim or a generic ephemeral volume: VolumeBinding's. */
Test(framework, pod_with_volume_claims_is_refused_without_volume_binding)
{
    world_new(NULL, NULL, 1);
    add_node("n1", "4");
    add_pod_spec(
        "p", "\"volumes\":[{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":\"data\"}}]");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable");
    cr_assert(strstr(W.message,
                     "pod uses PersistentVolumeClaims (persistentVolumeClaim or "
                     "ephemeral volumes), which only the VolumeBinding plugin can place"),
              "%s", W.message);
    add_pod_spec("q", "\"volumes\":[{\"name\":\"s\",\"ephemeral\":{\"volumeClaimTemplate\":{"
                      "\"spec\":{}}}},{\"name\":\"e\",\"emptyDir\":{}}]");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable");
    /* volumes that claim nothing are placed as before */
    add_pod_spec("r", "\"volumes\":[{\"name\":\"e\",\"emptyDir\":{}},{\"name\":\"c\","
                      "\"configMap\":{\"name\":\"x\"}}]");
    schedule();
    cr_assert_str_eq(W.result, "Scheduled");
    world_free();
}

/* A fake API server's ResourceClaims for the live source's claim_request: PUT checks the
 * resourceVersion (409 when stale) and answers the object with the next one; GET answers the
 * current object. */
#define FAKE_CLAIMS 2
static struct {
    pthread_mutex_t mu;
    char name[FAKE_CLAIMS][32];
    cJSON *obj[FAKE_CLAIMS];
    int rv;
    char log[8][96]; /* "PUT default/gpu-0/status" */
    int nlog;
} API = {.mu = PTHREAD_MUTEX_INITIALIZER};

static ks_code fake_claim_request(void *ctx, const char *method, ks_sym ns, ks_sym name, int status,
                                  const char *ctype, const char *body, char **out, int *http,
                                  ks_status *st)
{
    (void)ctx, (void)ctype;
    pthread_mutex_lock(&API.mu);
    int i = 0;
    while (i < FAKE_CLAIMS && strcmp(API.name[i], ks__sym_str(name)) != 0)
        i++;
    cr_assert_lt(i, FAKE_CLAIMS, "no claim %s", ks__sym_str(name));
    if (API.nlog < 8)
        snprintf(API.log[API.nlog++], 96, "%s %s/%s%s", method, ks__sym_str(ns), ks__sym_str(name),
                 status ? "/status" : "");
    ks_code code = KS_SUCCESS;
    if (strcmp(method, "PUT") == 0) {
        cJSON *b = cJSON_Parse(body);
        cJSON *meta = cJSON_GetObjectItem(b, "metadata");
        const char *rv = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "resourceVersion"));
        const char *cur = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(API.obj[i], "metadata"), "resourceVersion"));
        if (!rv || strcmp(rv, cur) != 0) {
            *http = 409;
            ks__status_add(st, "Operation cannot be fulfilled: the object has been modified");
            cJSON_Delete(b);
            code = KS_ERROR;
        } else {
            char next[16];
            snprintf(next, sizeof(next), "%d", ++API.rv);
            cJSON_ReplaceItemInObject(meta, "resourceVersion", cJSON_CreateString(next));
            cJSON_Delete(API.obj[i]);
            API.obj[i] = b;
        }
    }
    if (code == KS_SUCCESS)
        *out = cJSON_PrintUnformatted(API.obj[i]);
    pthread_mutex_unlock(&API.mu);
    return code;
}

static void add_dra_object(const char *json)
{
    char err[512];
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "%s", json);
    cr_assert_eq(ks__store_apply_dra(ks__scheduler_store(W.s), o, 0, 0, NULL, err, sizeof(err)), 0,
                 "%s", err);
    for (int i = 0; i < FAKE_CLAIMS; i++)
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind")), "ResourceClaim") == 0 &&
            !API.name[i][0]) {
            snprintf(API.name[i], sizeof(API.name[i]), "%s",
                     cJSON_GetStringValue(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "name")));
            API.obj[i] = o;
            return;
        }
    cJSON_Delete(o);
}

#define GPU_CLAIM(name)                                                                            \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":"    \
    "\"" name "\",\"namespace\":\"default\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"1\"},"  \
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"     \
    "\"gpu\"}}]}}}"

/* A profile that has a plugin of that name (the in-tree DynamicResources since it shipped)
 * takes the pod over: the guard steps aside, and the plugin decides. In live mode (this source
 * is not simulated) PreBind writes the claim through the source's claim_request as upstream's
 * bindClaim does (the finalizer by a PUT, then allocation and reservedFor by a PUT of the
 * status), and the answer is filed at once: the next pod's allocator sees the device taken. */
Test(framework, pod_with_claims_goes_to_a_profile_with_the_plugin)
{
    char err[1024] = "";
    ks_registry *reg = th_registry_new();
    ks_config *cfg = NULL;
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__config_load_string(reg,
                                        "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                        "kind: KubeSchedulerConfiguration\n"
                                        "profiles:\n- schedulerName: default-scheduler\n",
                                        "t.yaml", &cfg, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(ks__config_plan(cfg, reg, &plans, err, sizeof(err)), 0, "%s", err);
    memset(&W, 0, sizeof(W));
    memset(call_log, 0, sizeof(call_log));
    pthread_mutex_init(&W.mu, NULL);
    W.cfg = cfg, W.reg = reg, W.plans = plans;
    ks_scheduler_opts o = {
        .cfg = cfg,
        .plans = plans,
        .seed = 1,
        .binding_workers = 2,
        .source = {.ctx = &W, .bind = source_bind, .claim_request = fake_claim_request},
        .observer = {&W, obs_cycle, obs_bind}};
    cr_assert_eq(ks__scheduler_new(&o, &W.s, err, sizeof(err)), 0, "%s", err);
    API.rv = 1;
    add_dra_object("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
                   "\"metadata\":{\"name\":\"gpu\"},\"spec\":{}}");
    add_dra_object("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                   "\"metadata\":{\"name\":\"n1-gpu\"},\"spec\":{\"driver\":\"gpu.example.com\","
                   "\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\",\"generation\":1,"
                   "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-a\"}]}}");
    add_dra_object(GPU_CLAIM("gpu-0"));
    add_dra_object(GPU_CLAIM("gpu-1"));
    add_node("n1", "4");
    add_pod_spec("p", "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"gpu-0\"}]");
    schedule();
    cr_assert_str_eq(W.result, "Scheduled", "%s", W.message);
    cr_assert_eq(API.nlog, 2);
    cr_assert_str_eq(API.log[0], "PUT default/gpu-0");
    cr_assert_str_eq(API.log[1], "PUT default/gpu-0/status");
    char *text = cJSON_PrintUnformatted(API.obj[0]);
    cr_assert(strstr(text, "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]"), "%s",
              text);
    cr_assert(strstr(text, "\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
                           "\"pool\":\"n1\",\"device\":\"gpu-a\"}]"),
              "%s", text);
    cr_assert(strstr(text, "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\","
                           "\"uid\":\"uid-p\"}]"),
              "%s", text);
    cr_assert(strstr(text, "\"allocationTimestamp\":\""), "%s", text);
    free(text);
    /* the answer is in the store already (no watch here): the only device is taken */
    const ks_resource_claim *c = ks__dra_claim(
        ks__store_draobj(ks__scheduler_store(W.s), KS_DK_RESOURCE_CLAIM, "default/gpu-0"));
    cr_assert(c && c->allocated && ks__dra_claim_reserved_for(c, "uid-p"));
    cr_assert_str_eq(c->h.resource_version, "3");
    ks__draobj_unref((ks__draobj *)&c->h);
    add_pod_spec("q", "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"gpu-1\"}]");
    schedule();
    cr_assert_str_eq(W.result, "Unschedulable", "%s", W.message);
    cr_assert_str_eq(W.message,
                     "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 "
                     "nodes are available: 1 Preemption is not helpful for scheduling.");
    cr_assert_eq(API.nlog, 2, "q wrote nothing");
    world_free();
    for (int i = 0; i < FAKE_CLAIMS; i++)
        cJSON_Delete(API.obj[i]);
}
