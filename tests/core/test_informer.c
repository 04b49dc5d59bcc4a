/*
 * The live source's informers (core/live/apisource.c) without a cluster: a watch stream served by a
 * one-shot HTTP server goes through the API client's stream reader (apiclient_stream.c) into
 * the informer's event handler and a real scheduler's queue and cache. Bad events (a line that
 * is not JSON, a Pod with a quantity that does not parse, objects without metadata.uid) are
 * logged and skipped and the events after them still land; a relist reconciles (what the new
 * list lacks is deleted, a Node re-created under the same name stays).
 */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/store.h"
#include "live/apiclient.h"
#include "live/apisource_int.h"
#include "sched/cache.h"
#include "config/config.h"
#include "sched/host_api.h"
#include "live/kubeconfig.h"
#include "sched/queue.h"
#include "config/registry.h"
#include "harness.h"
#include "sched/scheduler.h"
#include "util/log.h"

/* --- a one-shot HTTP server: one request, one canned 200 response, close ------------------ */

typedef struct once_srv {
    int lfd, port;
    const char *body;
    char target[2048];
    pthread_t th;
} once_srv;

static void *serve_once(void *arg)
{
    once_srv *o = arg;
    int fd = accept(o->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char buf[8192];
    size_t n = 0;
    while (n < sizeof(buf) - 1) {
        ssize_t got = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
        if (got <= 0)
            break;
        n += (size_t)got;
        buf[n] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    buf[n] = '\0';
    sscanf(buf, "%*s %2047s", o->target);
    char head[256];
    int h = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     strlen(o->body));
    send(fd, head, (size_t)h, MSG_NOSIGNAL);
    send(fd, o->body, strlen(o->body), MSG_NOSIGNAL);
    close(fd);
    return NULL;
}

static void once_start(once_srv *o, const char *body)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    o->body = body;
    o->lfd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_eq(bind(o->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(o->lfd, 4), 0);
    getsockname(o->lfd, (struct sockaddr *)&a, &len);
    o->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&o->th, NULL, serve_once, o), 0);
}

static void once_stop(once_srv *o)
{
    pthread_join(o->th, NULL);
    close(o->lfd);
}

/* --- a scheduler with the default plugins, one profile "kubesched" --------------------------- */

static struct {
    ks_config *cfg;
    ks_registry *reg;
    ks_profile_plan *plans;
    ks_apisrc src;
    ks_informer pods, nodes;
    char logpath[64];
    int saved_stderr;
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
    /* The log goes to stderr: capture it in a file. */
    snprintf(W.logpath, sizeof(W.logpath), "/tmp/ks-informer-log-XXXXXX");
    int fd = mkstemp(W.logpath);
    cr_assert(fd >= 0);
    fflush(stderr);
    W.saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

static void teardown(void)
{
    fflush(stderr);
    dup2(W.saved_stderr, 2);
    close(W.saved_stderr);
    unlink(W.logpath);
    ks__informer_clear(&W.pods);
    ks__informer_clear(&W.nodes);
    ks__strmap_destroy(&W.pods.known);
    ks__strmap_destroy(&W.nodes.known);
    ks__scheduler_free(W.src.sched);
    ks__config_plans_free(W.plans, W.cfg->nprofiles);
    ks__config_free(W.cfg);
    ks__registry_free(W.reg);
}

static char *log_text(void)
{
    fflush(stderr);
    FILE *f = fopen(W.logpath, "r");
    cr_assert(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static cJSON *json(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    cr_assert(j, "bad test JSON: %s", text);
    return j;
}

#define NODE(name, uid, cpu)                                                                       \
    "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\",\"uid\":\"" uid  \
    "\",\"resourceVersion\":\"1\"},\"status\":{\"allocatable\":{\"cpu\":\"" cpu                    \
    "\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}"
#define POD(name, uid, rv, node, cpu)                                                              \
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"default\",\"uid\":\"" uid "\",\"resourceVersion\":\"" rv "\"},"            \
    "\"spec\":{\"schedulerName\":\"kubesched\",\"nodeName\":\"" node                               \
    "\",\"containers\":[{\"name\":"                                                                \
    "\"c\",\"resources\":{\"requests\":{\"cpu\":\"" cpu "\"}}}]}}"

static int feed_event(const char *type, cJSON *obj, void *ud)
{
    return ks__informer_event(ud, type, obj);
}

static void counts(size_t *pending, size_t *assigned, size_t *nodes)
{
    ks_queue_counts qc;
    ks_cache_counts cc;
    ks__queue_counts(ks__scheduler_queue(W.src.sched), &qc);
    ks__cache_counts(ks__scheduler_cache(W.src.sched), &cc);
    *pending = qc.active + qc.backoff + qc.unschedulable + qc.gated;
    *assigned = cc.pods;
    *nodes = cc.nodes;
}

Test(informer, bad_watch_events_are_logged_and_skipped_and_later_ones_land, .init = setup,
     .fini = teardown)
{
    size_t pending, assigned, nodes;
    cr_assert_eq(ks__informer_event(&W.nodes, "ADDED", json(NODE("n1", "node-uid-1", "4"))), 0);

    /* One watch stream: the bad events come first, the good ones after them. */
    const char *stream =
        "this is not JSON\n"
        "{\"type\":\"ADDED\",\"object\":" POD(
            "bad-qty", "uid-bad", "10", "",
            "12x") "}\n"
                   "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"no-"
                   "uid\","
                   "\"namespace\":\"default\"},\"spec\":{\"schedulerName\":\"kubesched\","
                   "\"containers\":[]}}}\n"
                   "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":"
                   "\"gone\"}}}\n"
                   "{\"type\":\"ADDED\",\"object\":" POD(
                       "pending-1", "uid-p1", "11", "",
                       "100m") "}\n"
                               "{\"type\":\"ADDED\",\"object\":" POD(
                                   "bound-1", "uid-b1", "12", "n1",
                                   "1") "}\n"
                                        "{\"type\":\"ADDED\",\"object\":" POD(
                                            "bound-2", "uid-b2", "13", "n1",
                                            "1") "}\n"
                                                 "{\"type\":\"DELETED\",\"object\":" POD(
                                                     "bound-2", "uid-b2", "14", "n1",
                                                     "1") "}\n"
                                                          "{\"type\":\"BOOKMARK\",\"object\":{"
                                                          "\"kind\":\"Pod\",\"metadata\":{"
                                                          "\"resourceVersion\":\"20\"}}}\n";
    once_srv o;
    once_start(&o, stream);
    char *kcfile = NULL, err[512] = "";
    cr_assert(asprintf(&kcfile, "/tmp/ks-informer-kc-%d", (int)getpid()) > 0);
    FILE *f = fopen(kcfile, "w");
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
            "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%d\"}}]\n"
            "contexts: [{name: x, context: {cluster: c}}]\n",
            o.port);
    fclose(f);
    ks_kubeconfig *kc = NULL;
    cr_assert_eq(ks__kubeconfig_load(kcfile, NULL, &kc, err, sizeof(err)), 0, "%s", err);
    ks_api *api = NULL;
    ks_api_opts ao = {.qps = -1};
    cr_assert_eq(ks__api_create(kc, &ao, &api, err, sizeof(err)), 0, "%s", err);
    char *rv = NULL;
    ks_api_watch_opts wo = {.resource_version = "9"};
    int rc = ks__api_watch(api, "/api/v1/pods", &wo, feed_event, &W.pods, &rv);
    once_stop(&o);
    cr_expect_eq(rc, 0, "watch: %d %s", rc, ks__api_error(api));
    cr_expect_str_eq(rv ? rv : "(null)", "20", "the bookmark's resourceVersion is where to resume");
    cr_expect(strstr(o.target, "watch=1") && strstr(o.target, "resourceVersion=9") &&
                  strstr(o.target, "allowWatchBookmarks=true"),
              "%s", o.target);

    counts(&pending, &assigned, &nodes);
    cr_expect_eq(pending, 1, "pending-1 is queued (and nothing else): %zu", pending);
    cr_expect_eq(assigned, 1, "bound-1 is in the cache, bound-2 was added and deleted: %zu",
                 assigned);
    cr_expect_eq(W.pods.known.len, 2, "known: pending-1 and bound-1, got %zu", W.pods.known.len);

    const char *log = log_text();
    cr_expect(
        strstr(log,
               "GET /api/v1/pods (watch): skipped event 1: not a JSON object: this is not JSON"),
        "%s", log);
    cr_expect(strstr(log, "Pod default/bad-qty: ") && strstr(log, "12x") &&
                  strstr(log, ": skipped"),
              "%s", log);
    cr_expect(strstr(log, "Pod without metadata.uid / metadata.name: skipped"), "%s", log);
    cr_expect(strstr(log, "Pod informer: DELETED event without metadata.uid (gone): skipped"), "%s",
              log);

    free(rv);
    ks__api_destroy(api);
    ks__kubeconfig_free(kc);
    unlink(kcfile);
    free(kcfile);
}

Test(informer, relist_deletes_what_the_new_list_lacks_and_counts_nothing_twice, .init = setup,
     .fini = teardown)
{
    size_t pending, assigned, nodes;
    /* The first list. */
    ks__informer_begin_list(&W.nodes);
    ks__informer_list_item(&W.nodes, json(NODE("n1", "node-uid-1", "4")));
    ks__informer_list_item(&W.nodes, json(NODE("n2", "node-uid-2", "4")));
    ks__informer_end_list(&W.nodes);
    ks__informer_begin_list(&W.pods);
    ks__informer_list_item(&W.pods, json(POD("a", "uid-a", "5", "n1", "1")));
    ks__informer_list_item(&W.pods, json(POD("b", "uid-b", "6", "n1", "1")));
    ks__informer_list_item(&W.pods, json(POD("p", "uid-p", "7", "", "1")));
    ks__informer_list_item(&W.pods, json(POD("q", "uid-q", "8", "", "1")));
    ks__informer_end_list(&W.pods);
    counts(&pending, &assigned, &nodes);
    cr_assert_eq(nodes, 2);
    cr_assert_eq(assigned, 2);
    cr_assert_eq(pending, 2);

    /* While not watching: b and q were deleted, c created, p bound to n2 (now assigned), n2
     * deleted and created again (another uid, same name), and a pod re-created under a's name.
     * The relist after 410 Gone brings the new state. */
    ks__informer_begin_list(&W.nodes);
    ks__informer_list_item(&W.nodes, json(NODE("n1", "node-uid-1", "4")));
    ks__informer_list_item(&W.nodes, json(NODE("n2", "node-uid-2b", "8")));
    ks__informer_end_list(&W.nodes);
    ks__informer_begin_list(&W.pods);
    ks__informer_list_item(&W.pods, json(POD("a", "uid-a2", "20", "n1", "1")));
    ks__informer_list_item(&W.pods, json(POD("c", "uid-c", "21", "", "1")));
    ks__informer_list_item(&W.pods, json(POD("p", "uid-p", "22", "n2", "1")));
    ks__informer_end_list(&W.pods);

    counts(&pending, &assigned, &nodes);
    cr_expect_eq(nodes, 2, "n2 re-created under the same name stays in the cache: %zu nodes",
                 nodes);
    cr_expect_eq(assigned, 2, "a (new uid) and p: %zu assigned pods", assigned);
    cr_expect_eq(pending, 1, "only c is pending: %zu", pending);
    cr_expect_eq(W.pods.known.len, 3);
    cr_expect_eq(W.nodes.known.len, 2);
    const char *log = log_text();
    cr_expect(strstr(log, "Pod informer: 3 object(s) deleted while not watching"), "%s", log);
    cr_expect(strstr(log, "Node informer: 1 object(s) deleted while not watching"), "%s", log);

    /* Listing the same state again changes nothing. */
    ks__informer_begin_list(&W.pods);
    ks__informer_list_item(&W.pods, json(POD("a", "uid-a2", "20", "n1", "1")));
    ks__informer_list_item(&W.pods, json(POD("c", "uid-c", "21", "", "1")));
    ks__informer_list_item(&W.pods, json(POD("p", "uid-p", "22", "n2", "1")));
    ks__informer_end_list(&W.pods);
    counts(&pending, &assigned, &nodes);
    cr_expect_eq(assigned, 2, "no double count after a relist: %zu", assigned);
    cr_expect_eq(pending, 1, "%zu", pending);
}

/* --- optional groups: an API server that does not serve them (v1.35..v1.37 servers, or one
 * with --runtime-config policy/v1=false) ------------------------------------------------------ */

/* A server that answers up to 4 requests in turn, each on its own connection, with a canned
 * status and body, and records each request target. */
typedef struct seq_srv {
    int lfd, port, n;
    int status[4];
    const char *body[4];
    char target[4][512];
    atomic_int served;
    pthread_t th;
} seq_srv;

static void *serve_seq(void *arg)
{
    seq_srv *o = arg;
    for (int i = 0; i < o->n; i++) {
        int fd = accept(o->lfd, NULL, NULL);
        if (fd < 0)
            return NULL;
        char buf[8192];
        size_t n = 0;
        while (n < sizeof(buf) - 1) {
            ssize_t got = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
            if (got <= 0)
                break;
            n += (size_t)got;
            buf[n] = '\0';
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        buf[n] = '\0';
        sscanf(buf, "%*s %511s", o->target[i]);
        char head[256];
        int h = snprintf(head, sizeof(head),
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                         o->status[i], strlen(o->body[i]));
        send(fd, head, (size_t)h, MSG_NOSIGNAL);
        send(fd, o->body[i], strlen(o->body[i]), MSG_NOSIGNAL);
        close(fd);
        atomic_fetch_add(&o->served, 1);
    }
    return NULL;
}

#define GROUPS_WITHOUT_POLICY                                                                      \
    "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{\"name\":\"apps\","             \
    "\"versions\":[{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}]},{\"name\":\"policy\","      \
    "\"versions\":[{\"groupVersion\":\"policy/v1beta1\",\"version\":\"v1beta1\"}]}]}"
#define GROUPS_WITH_POLICY                                                                         \
    "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{\"name\":\"policy\","           \
    "\"versions\":[{\"groupVersion\":\"policy/v1\",\"version\":\"v1\"}]}]}"
#define NOT_FOUND_STATUS                                                                           \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"the server "  \
    "could not find the requested resource\",\"reason\":\"NotFound\",\"code\":404}"
#define PDB(name, uid)                                                                             \
    "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/"                                   \
    "v1\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"" uid            \
    "\"},\"spec\":{\"selector\":{\"matchLabels\":"                                                 \
    "{\"app\":\"x\"}}},\"status\":{\"disruptionsAllowed\":0}}"

/* An informer of W.src run on its own thread against a seq_srv (see ks__informer_main). */
typedef struct live_inf {
    seq_srv srv;
    char kcfile[64];
    ks_kubeconfig *kc;
    ks_informer *in;
    pthread_t th;
} live_inf;

static void live_start(live_inf *l, ks_informer *in)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    char err[512] = "";
    l->in = in;
    l->srv.lfd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_eq(bind(l->srv.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(l->srv.lfd, 8), 0);
    getsockname(l->srv.lfd, (struct sockaddr *)&a, &len);
    l->srv.port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&l->srv.th, NULL, serve_seq, &l->srv), 0);
    snprintf(l->kcfile, sizeof(l->kcfile), "/tmp/ks-informer-kc-%d", (int)getpid());
    FILE *f = fopen(l->kcfile, "w");
    cr_assert(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
            "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%d\"}}]\n"
            "contexts: [{name: x, context: {cluster: c}}]\n",
            l->srv.port);
    fclose(f);
    cr_assert_eq(ks__kubeconfig_load(l->kcfile, NULL, &l->kc, err, sizeof(err)), 0, "%s", err);
    ks_api_opts ao = {.qps = -1};
    cr_assert_eq(ks__api_create(l->kc, &ao, &in->api, err, sizeof(err)), 0, "%s", err);
    pthread_mutex_init(&W.src.mu, NULL);
    pthread_cond_init(&W.src.cv, NULL);
    cr_assert_eq(pthread_create(&l->th, NULL, ks__informer_main, in), 0);
}

/* Waits up to 5 s for cond(l). */
static int live_wait(live_inf *l, int (*cond)(live_inf *))
{
    for (int i = 0; i < 500; i++) {
        if (cond(l))
            return 1;
        usleep(10000);
    }
    return 0;
}

static void live_stop(live_inf *l)
{
    atomic_store(&W.src.stop, 1);
    ks__api_stop(l->in->api);
    pthread_join(l->th, NULL);
    /* the server may still wait for a request that will not come */
    shutdown(l->srv.lfd, SHUT_RDWR);
    close(l->srv.lfd);
    pthread_cancel(l->srv.th);
    pthread_join(l->srv.th, NULL);
    ks__api_destroy(l->in->api);
    l->in->api = NULL;
    ks__kubeconfig_free(l->kc);
    unlink(l->kcfile);
    pthread_cond_destroy(&W.src.cv);
    pthread_mutex_destroy(&W.src.mu);
}

static int is_synced(live_inf *l) { return atomic_load(&l->in->synced) != 0; }

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static size_t store_pdbs(void)
{
    ks_pdb *pdbs = NULL;
    size_t n = ks__store_pdbs(ks__scheduler_store(W.src.sched), &pdbs);
    free(pdbs);
    return n;
}

Test(informer, discovery_has_reads_an_apigrouplist)
{
    cJSON *with = cJSON_Parse(GROUPS_WITH_POLICY), *without = cJSON_Parse(GROUPS_WITHOUT_POLICY);
    cJSON *status = cJSON_Parse(NOT_FOUND_STATUS);
    cr_expect_eq(ks__discovery_has(with, "policy/v1"), 1);
    cr_expect_eq(ks__discovery_has(without, "policy/v1"), 0, "policy/v1beta1 is not policy/v1");
    cr_expect_eq(ks__discovery_has(without, "apps/v1"), 1);
    cr_expect_eq(ks__discovery_has(status, "policy/v1"), -1, "a Status is not an APIGroupList");
    cJSON_Delete(with);
    cJSON_Delete(without);
    cJSON_Delete(status);
}

Test(informer, optional_group_absent_from_discovery_is_synced_empty_and_said_once, .init = setup,
     .fini = teardown)
{
    int saved_v = ks__log_verbosity;
    ks__log_verbosity = 2;
    ks_informer pdb = {0};
    informer_init(&pdb, "PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", INF_STORE);
    pdb.api_version = "policy/v1";
    pdb.without = "preemption does not respect PodDisruptionBudgets";
    live_inf l = {.srv = {.n = 1, .status = {200}, .body = {GROUPS_WITHOUT_POLICY}}};
    live_start(&l, &pdb);
    int synced = live_wait(&l, is_synced);
    live_stop(&l);
    ks__log_verbosity = saved_v;
    cr_expect(synced, "an informer of a group the server lacks still counts as synced");
    cr_expect(pdb.absent);
    cr_expect_str_eq(l.srv.target[0], "/apis", "discovery first");
    cr_expect_eq(atomic_load(&l.srv.served), 1, "and no list of a group that is not there");
    const char *log = log_text();
    const char *want = "PodDisruptionBudget informer: the API server does not serve policy/v1 "
                       "(/apis/policy/v1/poddisruptionbudgets) (not in the API server's "
                       "discovery, GET /apis): not watching it; without it preemption does not "
                       "respect PodDisruptionBudgets; listing it again every 60 s";
    cr_expect_eq(count_of(log, want), 1, "said once, at -v=2:\n%s", log);
    cr_expect(!strstr(log, "failed"), "not an error:\n%s", log);
    ks__informer_clear(&pdb);
    ks__strmap_destroy(&pdb.known);
}

Test(informer, optional_resource_404_on_list_forgets_what_was_known_and_is_synced, .init = setup,
     .fini = teardown)
{
    int saved_v = ks__log_verbosity;
    ks__log_verbosity = 2;
    ks_informer pdb = {0};
    informer_init(&pdb, "PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", INF_STORE);
    pdb.api_version = "policy/v1";
    pdb.without = "preemption does not respect PodDisruptionBudgets";
    /* Known from an earlier list (the server stopped serving it since). */
    ks__informer_begin_list(&pdb);
    ks__informer_list_item(&pdb, json(PDB("pdb1", "pdb-uid-1")));
    ks__informer_end_list(&pdb);
    cr_assert_eq(store_pdbs(), 1);
    live_inf l = {
        .srv = {.n = 2, .status = {200, 404}, .body = {GROUPS_WITH_POLICY, NOT_FOUND_STATUS}}};
    live_start(&l, &pdb);
    int synced = live_wait(&l, is_synced);
    live_stop(&l);
    ks__log_verbosity = saved_v;
    cr_expect(synced);
    cr_expect(pdb.absent);
    cr_expect(strncmp(l.srv.target[1], "/apis/policy/v1/poddisruptionbudgets?", 37) == 0, "%s",
              l.srv.target[1]);
    cr_expect_eq(store_pdbs(), 0, "what the server no longer serves is gone from the store");
    cr_expect_eq(pdb.known.len, 0);
    const char *log = log_text();
    cr_expect_eq(count_of(log, "PodDisruptionBudget informer: the API server does not serve "
                               "policy/v1 (/apis/policy/v1/poddisruptionbudgets) (GET "
                               "/apis/policy/v1/poddisruptionbudgets"),
                 1, "%s", log);
    cr_expect(strstr(log, "404 Not Found: the server could not find the requested resource"), "%s",
              log);
    ks__informer_clear(&pdb);
    ks__strmap_destroy(&pdb.known);
}

Test(informer, required_resource_404_is_an_error_and_not_synced, .init = setup, .fini = teardown)
{
    /* Core v1 Nodes: no discovery, the 404 is retried with a warning, never synced. */
    live_inf l = {.srv = {.n = 1, .status = {404}, .body = {NOT_FOUND_STATUS}}};
    live_start(&l, &W.nodes);
    int saw = 0;
    for (int i = 0; i < 500 && !saw; i++, usleep(10000))
        saw = strstr(log_text(), "Node informer: list /api/v1/nodes failed (attempt 1") != NULL;
    int synced = is_synced(&l);
    live_stop(&l);
    cr_expect(saw, "%s", log_text());
    cr_expect(!synced, "a Node list that 404s is not a synced informer");
    cr_expect(!W.nodes.absent);
    cr_expect(strncmp(l.srv.target[0], "/api/v1/nodes?", 14) == 0, "%s", l.srv.target[0]);
}

/* --- Dynamic Resource Allocation ------------------------------------------------------------ */

#define CLAIM(rv, status)                                                                          \
    "{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":"    \
    "\"c\",\"namespace\":\"default\",\"uid\":\"claim-uid\",\"resourceVersion\":\"" rv "\"},"       \
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":"       \
    "\"gpu\"}}]}},\"status\":{" status "}}"
#define ALLOCATED                                                                                  \
    "\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":"      \
    "\"p\",\"device\":\"x\"}]}}"

static int claim_allocated(const char *rv)
{
    const ks_resource_claim *c = ks__dra_claim(
        ks__store_draobj(ks__scheduler_store(W.src.sched), KS_DK_RESOURCE_CLAIM, "default/c"));
    cr_assert_not_null(c);
    cr_expect_str_eq(c->h.resource_version, rv);
    int allocated = c->allocated;
    ks__draobj_unref((ks__draobj *)&c->h);
    return allocated;
}

/* The claim watch files claims as upstream's assume cache: PreBind's answer (rv 7) filed first,
 * the watch's copy of what that write replaced (rv 6) does not take it back; a newer one does. */
Test(informer, claim_watch_copies_no_newer_than_the_store_are_ignored, .init = setup,
     .fini = teardown)
{
    ks_informer claims = {0};
    informer_init(&claims, "ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", INF_STORE);
    claims.api_version = "resource.k8s.io/v1";
    cr_assert_eq(ks__informer_event(&claims, "ADDED", json(CLAIM("5", ))), 0);
    cr_expect_eq(claim_allocated("5"), 0);
    char err[256];
    cJSON *answer = json(CLAIM("7", ALLOCATED));
    ks_dra_change chg;
    cr_assert_eq(
        ks__store_assume_dra(ks__scheduler_store(W.src.sched), answer, &chg, err, sizeof(err)), 0,
        "%s", err);
    ks__draobj_unref(chg.old_obj);
    ks__draobj_unref(chg.new_obj);
    cJSON_Delete(answer);
    cr_assert_eq(ks__informer_event(&claims, "MODIFIED", json(CLAIM("6", ))), 0);
    cr_expect_eq(claim_allocated("7"), 1, "the older watch copy did not take the allocation back");
    cr_assert_eq(ks__informer_event(&claims, "MODIFIED", json(CLAIM("8", ))), 0);
    cr_expect_eq(claim_allocated("8"), 0, "a newer one is filed");
    cr_assert_eq(ks__informer_event(&claims, "DELETED", json(CLAIM("9", ))), 0);
    cr_expect_null(
        ks__store_draobj(ks__scheduler_store(W.src.sched), KS_DK_RESOURCE_CLAIM, "default/c"));
    ks__informer_clear(&claims);
    ks__strmap_destroy(&claims.known);
}

#define FORBIDDEN_STATUS                                                                           \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"               \
    "\"devicetaintrules.resource.k8s.io is forbidden: User \\\"system:kube-scheduler\\\" cannot "  \
    "list resource \\\"devicetaintrules\\\"\",\"reason\":\"Forbidden\",\"code\":403}"
#define GROUPS_WITH_RESOURCE                                                                       \
    "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{\"name\":\"resource.k8s.io\","  \
    "\"versions\":[{\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"}]}]}"

/* DeviceTaintRules, which the role of a v1.35 or v1.36 API server does not grant: a 403 on the
 * list leaves kubesched without them (synced, said once as a warning), not retrying forever. */
Test(informer, devicetaintrule_403_is_absent_and_said_once, .init = setup, .fini = teardown)
{
    ks_informer rules = {0};
    informer_init(&rules, "DeviceTaintRule", "/apis/resource.k8s.io/v1/devicetaintrules",
                  INF_STORE);
    rules.api_version = "resource.k8s.io/v1";
    rules.without = "DeviceTaintRules do not taint devices";
    rules.absent_if_forbidden = 1;
    live_inf l = {
        .srv = {.n = 2, .status = {200, 403}, .body = {GROUPS_WITH_RESOURCE, FORBIDDEN_STATUS}}};
    live_start(&l, &rules);
    int synced = live_wait(&l, is_synced);
    live_stop(&l);
    cr_expect(synced);
    cr_expect(rules.absent);
    const char *log = log_text();
    cr_expect_eq(count_of(log, "DeviceTaintRule informer: GET /apis/resource.k8s.io/v1/"
                               "devicetaintrules"),
                 1, "%s", log);
    cr_expect(strstr(log, "without it DeviceTaintRules do not taint devices"), "%s", log);
    ks__informer_clear(&rules);
    ks__strmap_destroy(&rules.known);
}
