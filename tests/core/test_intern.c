/*
 * Interned strings and shared pod parts are reclaimed when no object holds them any longer
 * (core/api/intern.c, core/api/shared.c), and only then.
 *
 * The churn goes through what a live scheduler runs: the informers' event handler
 * (core/live/apisource.c) parses each watch event into a pod, hands it to a real scheduler's queue
 * and cache, replaces it on update and drops it on delete. Every pod has label values, an
 * annotation, a topology spread selector and an anti-affinity selector of its own, so without
 * reclaiming each one would add to the tables for good.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/intern.h"
#include "api/shared.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "live/apisource_int.h"
#include "sched/cache.h"
#include "sched/host_api.h"
#include "sched/queue.h"
#include "sched/scheduler.h"

#define CHURN_PODS 100000
#define LIVE_WINDOW 200 /* pods alive at any time during the churn */
#define NODES 10

static struct {
    ks_snapshot *snap; /* the scheduling thread's: updated once per "cycle" */
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_apisrc src;
    ks_informer pods, nodes;
} W;

static void informer_init(ks_informer *in, const char *kind, const char *path, int type)
{
    in->src = &W.src;
    in->name = kind;
    in->api_version = "v1";
    in->path = path;
    in->type = type;
    ks__strmap_init(&in->known);
}

static void setup(void)
{
    char err[1024] = "";
    memset(&W, 0, sizeof(W));
    ks__host_init();
    /* Free a reclaimed string at once (no stale reader runs here), so the figures are exact. */
    ks__intern_set_grace_ns(0);
    W.reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(W.reg,
                                        "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                        "kind: KubeSchedulerConfiguration\n"
                                        "profiles:\n- schedulerName: kubesched\n",
                                        "test.yaml", &W.cfg, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(ks__config_plan(W.cfg, W.reg, &W.plans, err, sizeof(err)), 0, "%s", err);
    ks_scheduler_opts o = {.cfg = W.cfg, .plans = W.plans, .seed = 1};
    cr_assert_eq(ks__scheduler_new(&o, &W.src.sched, err, sizeof(err)), 0, "%s", err);
    informer_init(&W.pods, "Pod", "/api/v1/pods", INF_POD);
    informer_init(&W.nodes, "Node", "/api/v1/nodes", INF_NODE);
    W.snap = ks__snapshot_new();
}

static void teardown(void)
{
    ks__snapshot_free(W.snap);
    ks__informer_clear(&W.pods);
    ks__informer_clear(&W.nodes);
    ks__strmap_destroy(&W.pods.known);
    ks__strmap_destroy(&W.nodes.known);
    ks__scheduler_free(W.src.sched);
    ks__config_plans_free(W.plans, W.cfg->nprofiles);
    ks__config_free(W.cfg);
    ks__registry_free(W.reg);
    ks__intern_set_grace_ns(30LL * 1000000000LL);
}

static void event(ks_informer *in, const char *type, const char *text)
{
    cJSON *obj = cJSON_Parse(text);
    cr_assert(obj, "bad test JSON: %s", text);
    cr_assert_eq(ks__informer_event(in, type, obj), 0);
}

static void node_added(int i)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n%d\",\"uid\":"
             "\"node-%d\",\"resourceVersion\":\"1\",\"labels\":{\"topology.kubernetes.io/zone\":"
             "\"z%d\"}},\"status\":{\"allocatable\":{\"cpu\":\"1000\",\"memory\":\"1000Gi\","
             "\"pods\":\"100000\"}}}",
             i, i, i % 3);
    event(&W.nodes, "ADDED", text);
}

/* A pod of its own template: every label value, the annotation and both selectors are unique
 * to it. node NULL: pending. */
static void pod_event(const char *type, int i, const char *node)
{
    char text[2048], node_field[64] = "";
    if (node)
        snprintf(node_field, sizeof(node_field), "\"nodeName\":\"%s\",", node);
    snprintf(text, sizeof(text),
             "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"churn-%d\","
             "\"namespace\":\"default\",\"uid\":\"uid-%d\",\"resourceVersion\":\"%d\","
             "\"labels\":{\"app\":\"web\",\"run\":\"run-%d\",\"pod-template-hash\":\"h%x\"},"
             "\"annotations\":{\"note\":\"annotation-%d\"}},"
             "\"spec\":{\"schedulerName\":\"kubesched\",%s"
             "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"
             "\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\","
             "\"labelSelector\":{\"matchLabels\":{\"run\":\"run-%d\"}}}],"
             "\"affinity\":{\"podAntiAffinity\":{"
             "\"requiredDuringSchedulingIgnoredDuringExecution\":"
             "[{\"topologyKey\":\"kubernetes.io/hostname\",\"labelSelector\":{\"matchExpressions\":"
             "[{\"key\":\"run\",\"operator\":\"In\",\"values\":[\"run-%d\",\"other-%d\"]}]}}]}},"
             "\"containers\":[{\"name\":\"c\",\"image\":\"registry/image-%d:1\",\"resources\":"
             "{\"requests\":{\"cpu\":\"1m\",\"example.com/gpu\":\"1\"}}}]}}",
             i, i, node ? 2 * i + 1 : 2 * i, i, (unsigned)i * 2654435761u, i, node_field, i, i, i,
             i);
    event(&W.pods, type, text);
}

static void pod_deleted(int i)
{
    char text[256];
    snprintf(text, sizeof(text),
             "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"churn-%d\","
             "\"namespace\":\"default\",\"uid\":\"uid-%d\"},\"spec\":{}}",
             i, i);
    event(&W.pods, "DELETED", text);
}

/* A scheduling cycle's start: the snapshot takes the cache's changes (and lets go of what the
 * cache dropped). */
static void cycle(void)
{
    cr_assert_eq(ks__cache_update_snapshot(ks__scheduler_cache(W.src.sched), W.snap), 0);
}

/* A pod's life as the informers see it: created pending, bound (an update with nodeName). */
static void pod_created_and_bound(int i)
{
    char node[16];
    snprintf(node, sizeof(node), "n%d", i % NODES);
    pod_event("ADDED", i, NULL);
    cycle();
    pod_event("MODIFIED", i, node);
}

typedef struct figures {
    ks__intern_stats in;
    size_t shared_entries, shared_bytes;
} figures;

static figures measure(void)
{
    figures f;
    cycle();
    cycle(); /* parts retired by the churn are freed two cycles later */
    ks__intern_stats_get(&f.in);
    ks__shared_stats(&f.shared_entries, &f.shared_bytes);
    return f;
}

/* The value of label key on pod name as the snapshot shows it (KS_SYM_ABSENT if the pod is not
 * there). */
static ks_sym cached_label(const char *node, const char *name, const char *key)
{
    ks_sym found = KS_SYM_ABSENT;
    cycle();
    const ks_node_info *ni = ks__snapshot_find(W.snap, ks__intern(node));
    cr_assert(ni);
    for (size_t i = 0; i < ni->npods; i++) {
        const ks_pod *p = ni->pods[i];
        if (!strcmp(ks__sym_str(p->name), name))
            found = ks__labels_get(p->labels, p->nlabels, ks__intern(key));
    }
    return found;
}

Test(intern, churned_pods_leave_the_tables_as_they_found_them_and_live_pods_keep_theirs,
     .init = setup, .fini = teardown)
{
    for (int i = 0; i < NODES; i++)
        node_added(i);
    /* A pod that stays through the churn: its strings must survive it. */
    pod_created_and_bound(CHURN_PODS);
    ks_sym keeper_run = cached_label("n0", "churn-100000", "run");
    cr_assert_str_eq(ks__sym_str(keeper_run), "run-100000");
    /* Warm the tables (well-known names, the first ids) with a window of pods before measuring. */
    for (int i = 0; i < LIVE_WINDOW; i++)
        pod_created_and_bound(i);
    figures before = measure();

    for (int i = LIVE_WINDOW; i < CHURN_PODS; i++) {
        pod_created_and_bound(i);
        pod_deleted(i - LIVE_WINDOW);
    }
    figures during = measure();
    for (int i = CHURN_PODS - LIVE_WINDOW; i < CHURN_PODS; i++)
        pod_created_and_bound(i); /* the last window, at the same size as before */
    figures after = measure();

    fprintf(stderr,
            "intern churn of %d pods: symbols %zu -> %zu live (%zu pinned), string bytes %zu -> "
            "%zu, ids handed out %zu -> %zu, tables %zu -> %zu bytes; shared parts %zu -> %zu "
            "entries, %zu -> %zu bytes\n",
            CHURN_PODS, before.in.live, after.in.live, after.in.pinned, before.in.bytes,
            after.in.bytes, before.in.ids, after.in.ids, before.in.table_bytes,
            after.in.table_bytes, before.shared_entries, after.shared_entries, before.shared_bytes,
            after.shared_bytes);
    (void)during;
    /* The same number of pods alive before and after: the tables are back where they were (give
     * or take the lengths of the numbers in the strings). Without reclaiming they would hold
     * about 700,000 more strings and 200,000 more shared parts. */
    cr_assert_leq(after.in.live, before.in.live + 16, "%zu -> %zu", before.in.live, after.in.live);
    cr_assert_leq(after.in.bytes, before.in.bytes + before.in.bytes / 4, "%zu -> %zu",
                  before.in.bytes, after.in.bytes);
    cr_assert_leq(after.in.ids, before.in.ids + 2 * LIVE_WINDOW * 8, "ids are reused");
    cr_assert_eq(after.in.retired, 0);
    cr_assert_eq(after.shared_entries, before.shared_entries);
    cr_assert_leq(after.shared_bytes, before.shared_bytes + before.shared_bytes / 4);
    /* Nothing in use was reclaimed: the keeper's label still names its string. */
    cr_assert_eq(cached_label("n0", "churn-100000", "run"), keeper_run);
    cr_assert_str_eq(ks__sym_str(keeper_run), "run-100000");
}

Test(intern, a_deleted_pod_keeps_its_strings_while_a_snapshot_holds_it, .init = setup,
     .fini = teardown)
{
    node_added(0);
    pod_created_and_bound(0); /* on n0 */
    cycle();
    const ks_node_info *ni = ks__snapshot_find(W.snap, ks__intern("n0"));
    cr_assert(ni && ni->npods == 1);
    const ks_pod *pod = ni->pods[0];
    ks_sym run = ks__labels_get(pod->labels, pod->nlabels, ks__intern("run"));
    ks_sym note = ks__labels_get(pod->annotations, pod->nannotations, ks__intern("note"));
    ks_sym image = pod->images[0];
    ks_sym resource = pod->requests.scalar[0].name;
    size_t live = ks__intern_count();

    /* The informer lets go (the cache drops the pod); the snapshot, as during a cycle or a
     * binding, still holds it: every string it names stays. */
    pod_deleted(0);
    cr_assert_str_eq(ks__sym_str(run), "run-0");
    cr_assert_str_eq(ks__sym_str(note), "annotation-0");
    cr_assert_str_eq(ks__sym_str(image), "registry/image-0:1");
    cr_assert_eq(ks__intern_count(), live);

    /* The next cycle drops the last reference: the pod's own strings go at once. "run-0" is also
     * named by the pod's spread and anti-affinity selectors, whose shared parts wait one more
     * cycle (shared.h); resource names stay (pinned). */
    cr_assert_eq(ks__cache_update_snapshot(ks__scheduler_cache(W.src.sched), W.snap), 0);
    cr_assert_null(ks__sym_str(note));
    cr_assert_null(ks__sym_str(image));
    cr_assert_str_eq(ks__sym_str(run), "run-0");
    cr_assert_eq(ks__cache_update_snapshot(ks__scheduler_cache(W.src.sched), W.snap), 0);
    cr_assert_null(ks__sym_str(run));
    cr_assert_str_eq(ks__sym_str(resource), "example.com/gpu");
    cr_assert_lt(ks__intern_count(), live);
}

Test(intern, pinned_symbols_survive_their_objects_and_stale_ids_never_crash, .init = setup,
     .fini = teardown)
{
    ks__symrefs refs = {0};
    ks_sym counted = ks__symrefs_intern(&refs, "held-by-an-object");
    ks_sym pinned_later = ks__symrefs_intern(&refs, "pinned-by-a-plugin");
    cr_assert_eq(ks__intern("pinned-by-a-plugin"), pinned_later); /* what ks_intern does */
    cr_assert_eq(ks__symrefs_intern(&refs, ""), KS_SYM_EMPTY);
    cr_assert_eq(refs.n, 2, "pinned symbols are not recorded");
    ks__symrefs_release(&refs);
    cr_assert_str_eq(ks__sym_str(pinned_later), "pinned-by-a-plugin");
    cr_assert_eq(ks__sym_lookup("pinned-by-a-plugin"), pinned_later);
    /* The counted one is gone: not found, its id reads NULL, and holding it again is refused. */
    cr_assert_eq(ks__sym_lookup("held-by-an-object"), KS_SYM_ABSENT);
    cr_assert_null(ks__sym_str(counted));
    ks__symrefs_hold(&refs, counted);
    cr_assert_eq(refs.n, 0);
    /* Its id goes to the next new string; a stale holder reads that string, never freed memory. */
    ks_sym next = ks__symrefs_intern(&refs, "a-new-string");
    cr_assert_eq(next, counted);
    cr_assert_str_eq(ks__sym_str(counted), "a-new-string");
    ks__symrefs_release(&refs);
}

Test(intern, a_reclaimed_string_stays_readable_for_the_grace_period)
{
    ks__symrefs refs = {0};
    ks_sym s = ks__symrefs_intern(&refs, "stale-reader-target");
    ks__symrefs_release(&refs); /* default grace: 30 s */
    cr_assert_eq(ks__sym_lookup("stale-reader-target"), KS_SYM_ABSENT, "out of the table at once");
    cr_assert_str_eq(ks__sym_str(s), "stale-reader-target", "but readable by a stale holder");
    ks__symrefs_hold(&refs, s);
    cr_assert_eq(refs.n, 0, "and not held again");
    ks_sym again = ks__symrefs_intern(&refs, "stale-reader-target");
    cr_assert_neq(again, s, "the same string interned again gets another id");
    ks__symrefs_release(&refs);
}

static cJSON *parsed(const char *text)
{
    cJSON *obj = cJSON_Parse(text);
    cr_assert(obj, "bad test JSON: %s", text);
    return obj;
}

/* Parses a Node and a Pod, makes a copy of the pod naming the node (make), drops the originals:
 * the node's name must live exactly as long as the copy. */
static void copy_outlives_node(ks_pod *(*make)(const ks_pod *, ks_sym))
{
    char err[256];
    ks_node *node;
    ks_pod *pod;
    cJSON *n = parsed("{\"kind\":\"Node\",\"metadata\":{\"name\":\"short-lived-node\"}}");
    cJSON *p = parsed("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},"
                      "\"spec\":{\"containers\":[]}}");
    cr_assert_eq(ks__node_from_json(n, &node, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__pod_from_json(p, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(n);
    cJSON_Delete(p);
    ks_sym name = node->name;
    ks_pod *copy = make(pod, name);
    ks__pod_unref(pod); /* the copy keeps the base */
    ks__node_unref(node);
    cr_assert_str_eq(ks__sym_str(name), "short-lived-node");
    ks__pod_unref(copy);
    cr_assert_null(ks__sym_str(name));
    cr_assert_eq(ks__intern_count(), 1, "only \"\" is left, not %zu", ks__intern_count());
}

Test(intern, an_assumed_or_nominated_copy_holds_the_node_name_it_adds)
{
    ks__intern_set_grace_ns(0);
    copy_outlives_node(ks__pod_with_node);
    copy_outlives_node(ks__pod_with_nominated);
}

Test(intern, a_cache_entry_holds_its_name_until_it_is_dropped)
{
    char err[256];
    ks_pod *pod;
    ks__intern_set_grace_ns(0);
    ks__objects_init();
    cJSON *p = parsed("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\","
                      "\"uid\":\"u1\"},\"spec\":{\"nodeName\":\"node-without-object\","
                      "\"containers\":[]}}");
    cr_assert_eq(ks__pod_from_json(p, &pod, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(p);
    ks_cache *cache = ks__cache_new();
    cr_assert_eq(ks__cache_add_pod(cache, pod), 0);
    ks_sym name = pod->node_name;
    ks__pod_unref(pod);
    /* The pod leaves, and its entry (no Node object) with it. */
    cr_assert_eq(ks__cache_remove_pod(cache, "u1"), 0);
    cr_assert_null(ks__sym_str(name));
    ks_cache_counts cc;
    ks__cache_counts(cache, &cc);
    cr_assert_eq(cc.pods, 0);
    /* The same name again is a fresh entry, not the old one. */
    cJSON *again = parsed("{\"kind\":\"Node\",\"metadata\":{\"name\":\"node-without-object\"}}");
    ks_node *node;
    cr_assert_eq(ks__node_from_json(again, &node, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(again);
    cr_assert_eq(ks__cache_add_node(cache, node), 0);
    ks__cache_counts(cache, &cc);
    cr_assert_eq(cc.nodes, 1);
    /* The cache is the Node's last holder when it removes it: the entry must still find itself
     * by name after letting go of the Node, and only then let go of the name. */
    name = node->name;
    ks__node_unref(node);
    cr_assert_eq(ks__cache_remove_node(cache, name), 0);
    ks__cache_counts(cache, &cc);
    cr_assert_eq(cc.nodes, 0);
    cr_assert_null(ks__sym_str(name));
    ks__cache_free(cache);
}

Test(intern, a_symbol_a_plugin_looked_up_is_pinned)
{
    ks__symrefs refs = {0};
    ks__intern_set_grace_ns(0);
    ks_sym s = ks__symrefs_intern(&refs, "looked-up-by-a-plugin");
    cr_assert_eq(ks__sym_lookup("looked-up-by-a-plugin"), s);
    ks__symrefs_release(&refs);
    cr_assert_str_eq(ks__sym_str(s), "looked-up-by-a-plugin");
    cr_assert_eq(ks__sym_lookup("looked-up-by-a-plugin"), s);
}
