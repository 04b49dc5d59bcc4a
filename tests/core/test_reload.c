/*
 * Hot reload of the profiles (core/sched/reload.h): a new set built beside the running one is
 * swapped in between two scheduling cycles; the queue is kept and every queued pod starts over
 * under the new profiles; binding cycles that began under the old set (a pod waiting on Permit)
 * finish with the old plugin instances, which are destroyed, and their owner released, only once
 * the last of them is done; pods whose profile went away stay queued, gated, reported once.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "api/intern.h"
#include "api/objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/host_api.h"
#include "sched/loader.h"
#include "sched/reload.h"
#include "sched/scheduler.h"
#include "sched/scheduler_int.h"

/* ---- plugins ------------------------------------------------------------------------------- */

/* PreferNode: Score 100 on the node its args name, 0 elsewhere. Counts its live instances. */
static struct {
    pthread_mutex_t mu;
    int created, destroyed;
    int released;             /* owners released */
    int destroyed_at_release; /* `destroyed` when the last owner was released */
    char bound[16][64];       /* "pod@node" */
    int nbound;
    char failed[8][512]; /* "pod|reason|message|profile" from source.failed */
    int nfailed;
    int permit_wait; /* Holder: Permit says Wait */
} W;

typedef struct prefer {
    char node[64];
    int gen;
} prefer;

static void *prefer_create(const ks_args *args, ks_error *err)
{
    (void)err;
    prefer *p = calloc(1, sizeof(*p));
    const char *n = NULL;
    if (ks_args_get_string(args, "node", &n) == 0 && n)
        snprintf(p->node, sizeof(p->node), "%s", n);
    pthread_mutex_lock(&W.mu);
    W.created++;
    pthread_mutex_unlock(&W.mu);
    return p;
}

static void prefer_destroy(void *self)
{
    if (!self)
        return;
    pthread_mutex_lock(&W.mu);
    W.destroyed++;
    pthread_mutex_unlock(&W.mu);
    free(self);
}

static ks_code prefer_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                            int64_t *score, ks_status *st)
{
    (void)cycle, (void)pod, (void)st;
    const prefer *p = self;
    *score = strcmp(ks_sym_str(ks_node_name(ks_node_info_node(ni))), p->node) == 0 ? 100 : 0;
    return KS_SUCCESS;
}

static const ks_plugin_desc prefer_desc = {.size = sizeof(ks_plugin_desc),
                                           .name = "PreferNode",
                                           .create = prefer_create,
                                           .destroy = prefer_destroy,
                                           .score = prefer_score};

/* Holder: Permit waits (60 s) for pods named hold-*, while W.permit_wait. */
static ks_code holder_permit(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                             int64_t *timeout_ms, ks_status *st)
{
    (void)self, (void)cycle, (void)node, (void)st;
    if (strncmp(ks_sym_str(ks_pod_name(pod)), "hold-", 5) != 0)
        return KS_SUCCESS;
    *timeout_ms = 60000;
    return KS_WAIT;
}

static const ks_plugin_desc holder_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Holder", .permit = holder_permit};

/* Trigger: while it filters pod "trigger" (in the middle of a scheduling cycle), another thread
 * asks for a swap and waits 300 ms for it; what it got is recorded. */
static struct {
    ks_scheduler *s;
    ks_profile_set *set;
    int asked;
    int applied_mid_cycle;
    uint64_t generation_mid_cycle;
} T;

static void *ask_swap(void *arg)
{
    (void)arg;
    T.applied_mid_cycle = ks__scheduler_request_swap(T.s, T.set, 300, NULL);
    return NULL;
}

static ks_code trigger_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                              const ks_node_info *ni, ks_status *st)
{
    (void)self, (void)cycle, (void)ni, (void)st;
    if (strcmp(ks_sym_str(ks_pod_name(pod)), "trigger") != 0 ||
        __atomic_exchange_n(&T.asked, 1, __ATOMIC_SEQ_CST))
        return KS_SUCCESS;
    pthread_t t;
    pthread_create(&t, NULL, ask_swap, NULL);
    pthread_join(t, NULL);
    T.generation_mid_cycle = ks__scheduler_profiles_generation(T.s);
    return KS_SUCCESS;
}

static const ks_plugin_desc trigger_desc = {
    .size = sizeof(ks_plugin_desc), .name = "Trigger", .filter = trigger_filter};

/* ---- the source ---------------------------------------------------------------------------- */

static ks_code source_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)ctx, (void)st;
    pthread_mutex_lock(&W.mu);
    if (W.nbound < 16)
        snprintf(W.bound[W.nbound++], sizeof(W.bound[0]), "%s@%s", ks__sym_str(pod->name),
                 ks__sym_str(node));
    pthread_mutex_unlock(&W.mu);
    return KS_SUCCESS;
}

static void source_failed(void *ctx, const ks_pod *pod, const char *reason, const char *message,
                          ks_sym nominated, const char *profile)
{
    (void)ctx, (void)nominated;
    pthread_mutex_lock(&W.mu);
    if (W.nfailed < 8)
        snprintf(W.failed[W.nfailed++], sizeof(W.failed[0]), "%s|%s|%s|%s", ks__sym_str(pod->name),
                 reason, message, profile);
    pthread_mutex_unlock(&W.mu);
}

/* ---- configurations ------------------------------------------------------------------------ */

/* One loaded configuration: what a profile set borrows, released as an owner. */
typedef struct owned {
    ks_config *cfg;
    ks_profile_plan *plans;
    ks_registry *reg;        /* its own registry when it loaded shared objects (load_so) */
    ks_loaded_module **mods; /* those shared objects */
} owned;

static ks_registry *REG;

static owned *load(const char *yaml)
{
    char err[1024] = "";
    owned *o = calloc(1, sizeof(*o));
    cr_assert_eq(ks__config_load_string(REG, yaml, "reload.yaml", &o->cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(ks__config_plan(o->cfg, REG, &o->plans, err, sizeof(err)), 0, "%s", err);
    return o;
}

/* yaml with out-of-tree plugins, loaded as a reload does: a registry of its own (in-tree
 * plugins and the test's), the shared objects its pluginConfig names, their args checked. */
static owned *load_so(const char *yaml)
{
    char err[1024] = "";
    owned *o = calloc(1, sizeof(*o));
    o->reg = th_registry_new();
    cr_assert_eq(ks__registry_add(o->reg, &prefer_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(o->reg, yaml, "reload.yaml", &o->cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(
        ks__loader_load_config_plugins(o->cfg, o->reg, ks__host_api(), &o->mods, err, sizeof(err)),
        0, "%s", err);
    cr_assert_eq(ks__config_check_plugin_args(o->cfg, o->reg, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_plan(o->cfg, o->reg, &o->plans, err, sizeof(err)), 0, "%s", err);
    return o;
}

static void owned_free(owned *o)
{
    ks__config_plans_free(o->plans, o->cfg->nprofiles);
    ks__config_free(o->cfg);
    if (o->reg)
        ks__registry_free(o->reg);
    ks__loader_close_all(o->mods);
    free(o);
}

/* The owner release of a set: records how many instances were destroyed by then. */
static void release_owned(void *p)
{
    pthread_mutex_lock(&W.mu);
    W.released++;
    W.destroyed_at_release = W.destroyed;
    pthread_mutex_unlock(&W.mu);
    owned_free(p);
}

/* A profile that prefers node (PreferNode weight 50 beats the default scores, which tie on
 * identical nodes) and holds pods hold-* at Permit; a second profile `extra` when with_extra. */
static owned *config(const char *node, int with_extra)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "profiles:\n"
             "- schedulerName: default-scheduler\n"
             "  plugins:\n"
             "    score: {enabled: [{name: PreferNode, weight: 50}]}\n"
             "    permit: {enabled: [{name: Holder}]}\n"
             "    filter: {enabled: [{name: Trigger}]}\n"
             "  pluginConfig:\n"
             "  - name: PreferNode\n"
             "    args: {node: %s}\n"
             "%s",
             node,
             with_extra ? "- schedulerName: extra\n"
                          "  plugins:\n"
                          "    score: {enabled: [{name: PreferNode, weight: 50}]}\n"
                          "  pluginConfig:\n"
                          "  - name: PreferNode\n"
                          "    args: {node: n1}\n"
                        : "");
    return load(yaml);
}

static owned *FIRST;

static ks_scheduler *world(void)
{
    char err[1024] = "";
    memset(&W, 0, sizeof(W));
    pthread_mutex_init(&W.mu, NULL);
    ks__host_init();
    REG = th_registry_new();
    cr_assert_eq(ks__registry_add(REG, &prefer_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(REG, &holder_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__registry_add(REG, &trigger_desc, "test", err, sizeof(err)), 0, "%s", err);
    FIRST = config("n1", 1);
    ks_scheduler *s;
    ks_scheduler_opts o = {.cfg = FIRST->cfg,
                           .plans = FIRST->plans,
                           .seed = 1,
                           .binding_workers = 2,
                           .source = {.ctx = &W, .bind = source_bind, .failed = source_failed}};
    cr_assert_eq(ks__scheduler_new(&o, &s, err, sizeof(err)), 0, "%s", err);
    for (int i = 1; i <= 2; i++) {
        char nj[256];
        snprintf(nj, sizeof(nj),
                 "{'metadata':{'name':'n%d'},'status':{'allocatable':{'cpu':'4','memory':'8Gi',"
                 "'pods':'110'}}}",
                 i);
        ks_node *node = th_node(nj);
        cr_assert_eq(ks__scheduler_on_node_add(s, node), 0);
    }
    return s;
}

static void world_free(ks_scheduler *s)
{
    ks__scheduler_free(s);
    owned_free(FIRST); /* the first set's owner is the caller's, as main's */
    ks__registry_free(REG);
    pthread_mutex_destroy(&W.mu);
}

static ks_pod *mk(const char *name, const char *scheduler)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'uid-%s','namespace':'default'},"
             "'spec':{'schedulerName':'%s','containers':[{'name':'c'}]}}",
             name, name, scheduler);
    return th_pod(json);
}

static int bound_on(const char *pod, const char *node)
{
    char want[64];
    snprintf(want, sizeof(want), "%s@%s", pod, node);
    pthread_mutex_lock(&W.mu);
    int found = 0;
    for (int i = 0; i < W.nbound; i++)
        found |= strcmp(W.bound[i], want) == 0;
    pthread_mutex_unlock(&W.mu);
    return found;
}

static int times_bound(const char *pod)
{
    size_t n = strlen(pod);
    pthread_mutex_lock(&W.mu);
    int count = 0;
    for (int i = 0; i < W.nbound; i++)
        count += strncmp(W.bound[i], pod, n) == 0 && W.bound[i][n] == '@';
    pthread_mutex_unlock(&W.mu);
    return count;
}

static void settle(ks_scheduler *s) { ks__scheduler_wait_bindings_settled(s); }

/* Builds the set of cfg for s; the swap is requested without waiting (this thread is the
 * scheduling thread: its next schedule_one, woken, applies it). */
static ks_profile_set *prepare(ks_scheduler *s, owned *o)
{
    char err[1024] = "";
    ks_profile_set *set;
    cr_assert_eq(ks__profile_set_new(s, o->cfg, o->plans, release_owned, o, &set, err, sizeof(err)),
                 0, "%s", err);
    return set;
}

static void swap_now(ks_scheduler *s, ks_profile_set *set)
{
    cr_assert_eq(ks__scheduler_request_swap(s, set, 0, NULL), 0, "applied without a cycle end");
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1, "the woken pop did not swap");
}

TestSuite(reload, .init = th_init, .fini = th_fini);

Test(reload, the_next_decision_uses_the_new_profiles_and_the_queue_is_kept)
{
    ks_scheduler *s = world();
    ks_pod *a = mk("a", "default-scheduler"), *b = mk("b", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, a), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    settle(s);
    cr_expect(bound_on("a", "n1"), "a: not on n1 under the first configuration");
    /* b waits in the queue while the configuration changes */
    cr_assert_eq(ks__scheduler_on_pod_add(s, b), 0);
    cr_assert_eq(ks__scheduler_profiles_generation(s), 1);
    ks_profile_set *set = prepare(s, config("n2", 1));
    swap_now(s, set);
    cr_expect_eq(ks__scheduler_profiles_generation(s), 2);
    cr_expect_eq(s->last_swap.requeued, 1, "b was not requeued under the new profiles");
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1, "b is not in the queue after the swap");
    settle(s);
    cr_expect(bound_on("b", "n2"), "b: the new PreferNode (node n2) did not decide");
    cr_expect_eq(times_bound("a") + times_bound("b"), 2, "a pod was bound twice");
    /* nothing drains: the replaced set goes at the next reap (the first set's owner is the
     * caller's, as main's: only its instances go) */
    cr_expect_eq(W.destroyed, 0, "instances destroyed by the swap itself, not by the reaper");
    cr_expect_eq(ks__scheduler_reap_profiles(s), 0);
    cr_expect_eq(W.destroyed, 2, "the replaced set's two PreferNode instances were not destroyed");
    cr_expect_eq(W.released, 0);
    /* a second reload replaces a set that owns its configuration: released after its instances */
    swap_now(s, prepare(s, config("n1", 1)));
    cr_expect_eq(ks__scheduler_reap_profiles(s), 0);
    cr_expect_eq(W.released, 1, "the replaced set's owner was not released");
    cr_expect_eq(W.destroyed_at_release, 4,
                 "the owner was released before the old instances were destroyed");
    world_free(s);
}

static int wait_bound(const char *pod, const char *node)
{
    for (int i = 0; i < 500; i++) {
        if (bound_on(pod, node))
            return 1;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return 0;
}

Test(reload, a_binding_cycle_begun_before_the_swap_keeps_the_old_instances_until_it_ends)
{
    ks_scheduler *s = world();
    ks_pod *h = mk("hold-1", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, h), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1); /* assumed on n1, waits on Permit */
    settle(s);
    cr_assert_eq(times_bound("hold-1"), 0);
    int created = W.created;
    swap_now(s, prepare(s, config("n2", 1)));
    cr_expect_eq(W.created, created + 2, "the new set did not create its own instances");
    /* the waiting pod holds the old set: nothing is destroyed or released */
    cr_expect_eq(ks__scheduler_reap_profiles(s), 1, "the old set is not draining");
    cr_expect_eq(W.destroyed, 0, "old instances destroyed while a binding cycle uses them");
    /* allowed now: it binds where the old cycle put it, then the old set goes */
    cr_assert_eq(ks__permit_hook(s, "uid-hold-1", "Holder", 1, NULL), 0);
    cr_expect(wait_bound("hold-1", "n1"), "hold-1 was not bound on its assumed node");
    ks__scheduler_wait_bindings(s);
    cr_expect_eq(ks__scheduler_reap_profiles(s), 0, "the old set still drains");
    cr_expect_eq(W.destroyed, 2, "the drained set's instances were not destroyed");
    cr_expect_eq(times_bound("hold-1"), 1);
    world_free(s);
}

Test(reload, a_pod_rejected_after_the_swap_comes_back_under_the_new_profiles)
{
    ks_scheduler *s = world();
    ks_pod *h = mk("hold-2", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, h), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1); /* waits on Permit under the old set */
    settle(s);
    swap_now(s, prepare(s, config("n2", 1)));
    /* rejected: its binding cycle fails with the old instances, and the pod is requeued under
     * the new profile, without the old rejector bits */
    cr_assert_eq(ks__permit_hook(s, "uid-hold-2", "Holder", 0, "let go"), 0);
    ks__scheduler_wait_bindings(s);
    ks_queue_counts qc;
    ks__queue_counts(ks__scheduler_queue(s), &qc);
    cr_expect_eq(qc.active + qc.backoff, 1, "hold-2 was not requeued to activeQ/backoffQ");
    cr_expect_eq(ks__scheduler_reap_profiles(s), 0);
    cr_expect_eq(W.destroyed, 2);
    world_free(s);
}

Test(reload, a_pod_whose_profile_disappears_stays_queued_gated_and_is_reported_once)
{
    ks_scheduler *s = world();
    ks_pod *x = mk("x", "extra");
    /* no node fits: PreferNode scores, so make it unschedulable by removing both nodes */
    ks_node *n1 = th_node("{'metadata':{'name':'n1'}}"),
            *n2 = th_node("{'metadata':{'name':'n2'}}");
    ks__scheduler_on_node_delete(s, n1);
    ks__scheduler_on_node_delete(s, n2);
    cr_assert_eq(ks__scheduler_on_pod_add(s, x), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1); /* unschedulable: parked */
    int failed_before = W.nfailed;
    swap_now(s, prepare(s, config("n2", 0))); /* no `extra` profile any more */
    cr_expect_eq(s->last_swap.orphaned, 1);
    ks__scheduler_reap_profiles(s);
    cr_assert_eq(W.nfailed, failed_before + 1, "the pod without a profile was not reported");
    cr_expect(strstr(W.failed[failed_before], "x|Unschedulable|no profile with schedulerName "
                                              "\"extra\"") == W.failed[failed_before],
              "report: %s", W.failed[failed_before]);
    ks_queue_counts qc;
    ks__queue_counts(ks__scheduler_queue(s), &qc);
    cr_expect_eq(qc.gated, 1, "the pod is not kept gated in the queue");
    cr_expect_eq(ks__scheduler_schedule_one(s, 0), 0, "a pod without a profile was popped");
    /* events and the periodic flush do not move it; a second reload does not report it again */
    ks__queue_flush_unschedulable(ks__scheduler_queue(s));
    swap_now(s, prepare(s, config("n1", 0)));
    ks__scheduler_reap_profiles(s);
    cr_expect_eq(W.nfailed, failed_before + 1, "reported twice");
    ks__queue_counts(ks__scheduler_queue(s), &qc);
    cr_expect_eq(qc.gated, 1);
    /* the profile comes back: the pod leaves the gate */
    swap_now(s, prepare(s, config("n1", 1)));
    ks__queue_counts(ks__scheduler_queue(s), &qc);
    cr_expect_eq(qc.gated, 0, "the pod stayed gated after its profile came back");
    cr_expect_eq(qc.active + qc.backoff, 1);
    world_free(s);
}

Test(reload, a_newer_pending_set_replaces_one_not_yet_applied)
{
    ks_scheduler *s = world();
    cr_assert_eq(ks__scheduler_request_swap(s, prepare(s, config("n2", 1)), 0, NULL), 0);
    cr_expect_eq(W.released, 0);
    cr_assert_eq(ks__scheduler_request_swap(s, prepare(s, config("n1", 1)), 0, NULL), 0);
    cr_expect_eq(W.released, 1, "the replaced pending set was not discarded");
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    cr_expect_eq(ks__scheduler_schedule_one(s, 0), 0, "a second swap out of one request");
    cr_expect_eq(ks__scheduler_profiles_generation(s), 3);
    world_free(s);
}

/* A swap requested from another thread while the scheduling thread waits for pods: the waiting
 * pop wakes up, the swap happens there, the requester sees it done. */
static void *loop(void *arg)
{
    ks_scheduler *s = arg;
    while (ks__scheduler_schedule_one(s, 1))
        ;
    return NULL;
}

Test(reload, a_scheduling_thread_waiting_for_pods_swaps_at_once)
{
    ks_scheduler *s = world();
    pthread_t t;
    pthread_create(&t, NULL, loop, s);
    ks_swap_result res;
    ks_profile_set *set = prepare(s, config("n2", 1));
    cr_assert_eq(ks__scheduler_request_swap(s, set, 5000, &res), 1, "not swapped within 5 s");
    cr_expect_eq(res.generation, 2);
    cr_expect_lt(res.swap_ns, 1000000000LL);
    ks_pod *c = mk("c", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, c), 0);
    cr_expect(wait_bound("c", "n2"), "c was not bound by the new profiles");
    ks__queue_close(ks__scheduler_queue(s));
    pthread_join(t, NULL);
    world_free(s);
}

/* A pod of a schedulerName no profile had (ignored when it came) is picked up at its next update
 * once a reload added the profile. */
Test(reload, a_pending_pod_of_a_profile_a_reload_added_is_picked_up_at_its_next_update)
{
    ks_scheduler *s = world();
    ks_pod *y = mk("y", "late"), *y2 = mk("y", "late");
    cr_assert_eq(ks__scheduler_on_pod_add(s, y), KS_ENOTFOUND);
    cr_assert_eq(ks__scheduler_on_pod_update(s, y, y2, 0), KS_ENOTFOUND);
    owned *o = load("apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\n"
                    "profiles:\n- schedulerName: default-scheduler\n- schedulerName: late\n");
    swap_now(s, prepare(s, o));
    ks_pod *y3 = mk("y", "late");
    cr_assert_eq(ks__scheduler_on_pod_update(s, y2, y3, 0), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1, "y was not queued by its update");
    settle(s);
    cr_expect_eq(times_bound("y"), 1);
    /* another update of a pod the queue holds (or that is bound) does not add it twice */
    ks_pod *z = mk("z", "late"), *z2 = mk("z", "late");
    cr_assert_eq(ks__scheduler_on_pod_add(s, z), 0);
    cr_expect_eq(ks__scheduler_on_pod_update(s, z, z2, 0), 0);
    ks_queue_counts qc;
    ks__queue_counts(ks__scheduler_queue(s), &qc);
    cr_expect_eq(qc.active, 1);
    world_free(s);
}

/* A swap asked for in the middle of a scheduling cycle waits for the cycle's end: the cycle runs
 * to its end with the profiles it began with, and the swap happens before the next one. */
Test(reload, a_swap_asked_for_during_a_cycle_waits_for_its_end)
{
    ks_scheduler *s = world();
    memset(&T, 0, sizeof(T));
    T.s = s;
    T.set = prepare(s, config("n2", 1));
    ks_pod *p = mk("trigger", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, p), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    cr_assert_eq(T.asked, 1, "the Trigger filter did not run");
    cr_expect_eq(T.applied_mid_cycle, 0, "the swap happened in the middle of a cycle");
    cr_expect_eq(T.generation_mid_cycle, 1);
    settle(s);
    cr_expect(bound_on("trigger", "n1"), "the cycle did not finish with its own profiles");
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1, "the pending swap was not applied next");
    cr_expect_eq(ks__scheduler_profiles_generation(s), 2);
    world_free(s);
}

/* A profile with IsoDemo (tests/loader/fixtures/isodemo.c) isolated in a child process
 * (kubeschedIsolation: process) whose Filter rejects a node when a hash of it % pickyEvery is 0. */
static owned *isodemo_config(int picky_every, const char *isolation)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "profiles:\n"
             "- schedulerName: default-scheduler\n"
             "  plugins:\n"
             "    multiPoint: {enabled: [{name: IsoDemo}]}\n"
             "  pluginConfig:\n"
             "  - name: IsoDemo\n"
             "    args: {kubeschedPluginPath: %s, pickyEvery: %d, kubeschedIsolation: %s}\n",
             FIX_ISODEMO, picky_every, isolation);
    return load_so(yaml);
}

Test(reload, an_isolated_plugin_is_replaced_by_its_new_configuration)
{
    ks_scheduler *s = world();
    /* pickyEvery 1: the isolated Filter rejects every node */
    swap_now(s, prepare(s, isodemo_config(1, "process")));
    ks_pod *a = mk("a", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, a), 0);
    int failed_before = W.nfailed;
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    settle(s);
    cr_assert_eq(W.nfailed, failed_before + 1, "a was not reported unschedulable");
    cr_expect(strstr(W.failed[failed_before], "node(s) rejected by IsoDemo"), "report: %s",
              W.failed[failed_before]);
    cr_expect_eq(times_bound("a"), 0);
    /* a new child process runs the new instance: pickyEvery 1000000 rejects no node here */
    swap_now(s, prepare(s, isodemo_config(1000000, "process")));
    cr_expect_eq(s->last_swap.requeued, 1, "a was not requeued under the new profiles");
    /* no plugin of the new set rejected it: it waits out its backoff (1 s) as after an error */
    nanosleep(&(struct timespec){.tv_sec = 1, .tv_nsec = 100000000}, NULL);
    cr_expect_eq(ks__queue_flush_backoff(ks__scheduler_queue(s)), 1);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1, "a is not in the queue after the swap");
    settle(s);
    cr_expect_eq(times_bound("a"), 1, "a was not bound under the new isolated instance");
    /* and back in-process: the isolated instances of both replaced sets are released (their
     * shared blocks unmapped, their children reaped: the sanitizer build checks for leaks) */
    swap_now(s, prepare(s, isodemo_config(1, "none")));
    cr_expect_eq(ks__scheduler_reap_profiles(s), 0);
    ks_pod *b = mk("b", "default-scheduler");
    cr_assert_eq(ks__scheduler_on_pod_add(s, b), 0);
    cr_assert_eq(ks__scheduler_schedule_one(s, 0), 1);
    settle(s);
    cr_expect_eq(times_bound("b"), 0, "the in-process IsoDemo with pickyEvery 1 let b through");
    world_free(s);
}
