/*
 * Process isolation of an out-of-tree plugin (see isolation.h for what and why).
 *
 * Shape of one session (one pod's cycle, one isolated plugin):
 *
 *   parent (scheduler)                          child (fork of the parent at the first call)
 *   ------------------                          ---------------------------------------------
 *   fills shm->idx[] with snapshot indexes
 *   write(req {op, n})          ------------>   runs the plugin on each: shm->cur, call_start
 *                                               answers in shm->code[] / score[] / st[]
 *   poll(): answer, EOF (died), or past the     write(int32 code)
 *   deadline (SIGKILL)          <------------
 *
 * shm is one MAP_SHARED anonymous mapping made before the fork, indexed by snapshot index, so
 * the Filter workers read their node's answer without a lock once its batch is done.
 */
#define _GNU_SOURCE
#include "sched/isolation.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/intern.h"
#include "api/store.h"
#include "sched/framework.h"
#include "sched/host_api.h"
#include "sched/plugin_guard.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/metrics.h"

int ks__iso_in_child;

enum { POLICY_FAIL, POLICY_IGNORE };
enum { OP_PRE_FILTER = 1, OP_FILTER, OP_PRE_SCORE, OP_SCORE, OP_NORMALIZE };
enum { SLOT_NONE, SLOT_DONE }; /* shm->state[] per snapshot index and point */
/* PreFilter's node names travel as text (a name the plugin interned in the child has no id in
 * the parent). */
#define NAMES_CAP (256 * 1024)

struct ks_iso_plugin {
    const char *profile, *name; /* borrowed from the plan */
    char *origin;               /* owned */
    const ks_plugin_desc *real;
    void *real_self;
    ks_plugin_desc proxy;
    int64_t own_deadline_ns; /* args.kubeschedCallDeadline; -1: --plugin-call-deadline */
    int policy, budget;
    atomic_int failures;
    atomic_int disabled;
    pthread_mutex_t mu; /* starting a session */
    char last_error[KS_STATUS_BUF];
    /* The last session's mapping, kept for the next (under mu): mapping and unmapping one per
     * pod costs page faults and TLB shootdowns on every thread. Its child is idle or gone.
     * Under spare_mu. */
    pthread_mutex_t spare_mu; /* a leaf lock: map_shm runs under mu */
    void *spare_map;
    size_t spare_len, spare_cap;
    /* live mode (ks__iso_attach_metrics): failures by reason, and 1 once taken out */
    ks_metric *m_crash, *m_deadline, *m_taken_out;
};

/* The block both processes see; the arrays of map_shm follow it. */
typedef struct iso_shm {
    _Atomic int32_t cur;           /* the snapshot index being evaluated; -1: none */
    _Atomic int64_t call_start_ns; /* when the running plugin call began; 0: none */
    int32_t pf_used, pf_n;         /* PreFilter result: restricted (-1: too many), how many */
    ks_status st1;                 /* the status of PreFilter / PreScore */
    /* Scoring (OP_PRE_SCORE / OP_SCORE): the nodes in the framework's order, then NormalizeScore
     * of the plugin run on them at once (norm_done), its code and status. */
    uint32_t nscored;
    int32_t norm_done, norm_code;
    ks_status norm_st;
} iso_shm;

typedef struct iso_session {
    struct iso_session *next; /* the cycle's list (ks_cycle.iso_sessions) */
    ks_iso_plugin *ip;
    ks_cycle *cycle;
    const ks_pod *pod;
    pid_t pid;
    int fd;
    int failed; /* under mu: the child is gone; err says why */
    ks_status err;
    pthread_mutex_t mu; /* one request at a time */
    size_t nnodes;
    /* A one-shot child's node: a copy the parent made (nominated pods added, a preemption dry
     * run), which the child has because it was forked after the copy was made. */
    const ks_node_info *one_shot_node;
    /* in the mapping, laid out for cap nodes (>= nnodes) */
    iso_shm *shm;
    size_t shm_len, cap;
    int reusable;     /* the session's own child used it: it may serve the next session */
    uint32_t *idx;    /* request: snapshot indexes */
    uint32_t *scored; /* the nodes scored, in the framework's order */
    _Atomic uint8_t *filter_state, *score_state;
    int32_t *filter_code, *score_code;
    int64_t *score;      /* raw scores by snapshot index */
    ks_node_score *norm; /* NormalizeScore's scores, in the order of scored[] */
    ks_status *st;       /* per snapshot index: the status of a non-Success answer */
    char *names;         /* PreFilter's node names, NUL-separated */
} iso_session;

/* ---- shared memory ------------------------------------------------------------------------- */

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Carves n bytes at *off of the mapping; returns the offset. */
static size_t carve(size_t *off, size_t n)
{
    size_t at = *off;
    *off = align8(*off + n);
    return at;
}

/* Lays the arrays out for cap nodes in the mapping m of len bytes; returns the length needed. */
static size_t layout(iso_session *s, char *b, size_t cap)
{
    size_t off = align8(sizeof(iso_shm));
    size_t o_idx = carve(&off, cap * sizeof(uint32_t));
    size_t o_scored = carve(&off, cap * sizeof(uint32_t));
    size_t o_fs = carve(&off, cap);
    size_t o_ss = carve(&off, cap);
    size_t o_fc = carve(&off, cap * sizeof(int32_t));
    size_t o_sc = carve(&off, cap * sizeof(int32_t));
    size_t o_score = carve(&off, cap * sizeof(int64_t));
    size_t o_norm = carve(&off, cap * sizeof(ks_node_score));
    size_t o_names = carve(&off, NAMES_CAP);
    size_t o_st = carve(&off, cap * sizeof(ks_status)); /* touched only where a node fails */
    if (!b)
        return off;
    s->shm = (iso_shm *)b;
    s->idx = (uint32_t *)(b + o_idx);
    s->scored = (uint32_t *)(b + o_scored);
    s->filter_state = (_Atomic uint8_t *)(b + o_fs);
    s->score_state = (_Atomic uint8_t *)(b + o_ss);
    s->filter_code = (int32_t *)(b + o_fc);
    s->score_code = (int32_t *)(b + o_sc);
    s->score = (int64_t *)(b + o_score);
    s->norm = (ks_node_score *)(b + o_norm);
    s->names = b + o_names;
    s->st = (ks_status *)(b + o_st);
    return off;
}

/* The session's shared block for n nodes: the plugin's spare one when it is large enough (its
 * header and answered-flags cleared), else a new mapping. */
static int map_shm(iso_session *s, ks_iso_plugin *ip, size_t n, int reusable)
{
    void *m = NULL;
    size_t len = 0, cap = n;
    if (reusable) {
        pthread_mutex_lock(&ip->spare_mu);
        if (ip->spare_map && ip->spare_cap >= n) {
            m = ip->spare_map;
            len = ip->spare_len;
            cap = ip->spare_cap;
            ip->spare_map = NULL;
        }
        pthread_mutex_unlock(&ip->spare_mu);
    }
    if (!m) {
        len = layout(s, NULL, cap);
        m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return KS_ENOMEM;
    }
    layout(s, m, cap);
    s->shm_len = len;
    s->cap = cap;
    s->reusable = reusable;
    memset(s->shm, 0, sizeof(*s->shm));
    memset((void *)s->filter_state, 0, cap);
    memset((void *)s->score_state, 0, cap);
    atomic_store(&s->shm->cur, -1);
    return 0;
}

/* Gives the session's mapping back to its plugin (one spare; a smaller one is unmapped). */
static void unmap_shm(iso_session *s)
{
    if (!s->shm)
        return;
    if (s->reusable) {
        ks_iso_plugin *ip = s->ip;
        pthread_mutex_lock(&ip->spare_mu);
        void *old = NULL;
        size_t old_len = 0;
        if (!ip->spare_map || ip->spare_cap < s->cap) {
            old = ip->spare_map;
            old_len = ip->spare_len;
            ip->spare_map = s->shm;
            ip->spare_len = s->shm_len;
            ip->spare_cap = s->cap;
            s->shm = NULL;
        }
        pthread_mutex_unlock(&ip->spare_mu);
        if (old)
            munmap(old, old_len);
    }
    if (s->shm)
        munmap(s->shm, s->shm_len);
    s->shm = NULL;
}

/* ---- the child ----------------------------------------------------------------------------- */

static const ks_node_info *snap_node(const iso_session *s, uint32_t i)
{
    return i < s->cycle->snap->nnodes ? s->cycle->snap->nodes[i] : NULL;
}

static void call_begin(iso_session *s, int32_t idx)
{
    atomic_store(&s->shm->cur, idx);
    atomic_store(&s->shm->call_start_ns, ks__clock_now_ns());
}

static void call_end(iso_session *s)
{
    atomic_store(&s->shm->call_start_ns, 0);
    atomic_store(&s->shm->cur, -1);
}

static ks_code child_pre_filter(iso_session *s)
{
    const ks_plugin_desc *d = s->ip->real;
    ks_prefilter_result r = {0};
    ks__status_reset(&s->shm->st1);
    if (!d->pre_filter)
        return KS_SUCCESS;
    call_begin(s, -1);
    ks_code code = d->pre_filter(s->ip->real_self, s->cycle, s->pod, &r, &s->shm->st1);
    call_end(s);
    size_t off = 0;
    s->shm->pf_used = r.used;
    s->shm->pf_n = 0;
    for (size_t i = 0; i < r.n; i++) {
        const char *nm = ks__sym_str(r.nodes[i]);
        size_t len = nm ? strlen(nm) + 1 : 0;
        if (!nm || off + len > NAMES_CAP)
            break; /* the parent sees fewer names than nodes: an error there */
        memcpy(s->names + off, nm, len);
        off += len;
        s->shm->pf_n++;
    }
    if ((size_t)s->shm->pf_n != r.n)
        s->shm->pf_used = -1;
    free(r.nodes);
    return code;
}

static void child_filter(iso_session *s, uint32_t n)
{
    const ks_plugin_desc *d = s->ip->real;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = s->idx[k];
        const ks_node_info *ni = s->one_shot_node ? s->one_shot_node : snap_node(s, i);
        if (!ni)
            continue;
        ks_status st;
        ks__status_reset(&st);
        call_begin(s, (int32_t)i);
        ks_code code = d->filter(s->ip->real_self, s->cycle, s->pod, ni, &st);
        call_end(s);
        s->filter_code[i] = code;
        if (code != KS_SUCCESS)
            s->st[i] = st;
        atomic_store(&s->filter_state[i], SLOT_DONE);
    }
}

/* Score on the nodes of scored[] (idx[] copied there), then, when every one succeeded,
 * NormalizeScore on them in that order: the framework asks for both on these nodes next. */
static void child_score(iso_session *s, uint32_t n)
{
    const ks_plugin_desc *d = s->ip->real;
    int all_ok = 1;
    memcpy(s->scored, s->idx, n * sizeof(*s->idx));
    s->shm->nscored = n;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = s->scored[k];
        const ks_node_info *ni = snap_node(s, i);
        if (!ni)
            continue;
        ks_status st;
        ks__status_reset(&st);
        int64_t v = 0;
        call_begin(s, (int32_t)i);
        ks_code code = d->score(s->ip->real_self, s->cycle, s->pod, ni, &v, &st);
        call_end(s);
        s->score_code[i] = code;
        s->score[i] = v;
        if (code != KS_SUCCESS) {
            s->st[i] = st;
            all_ok = 0;
        }
        atomic_store(&s->score_state[i], SLOT_DONE);
        s->norm[k] = (ks_node_score){ni, v};
    }
    if (!d->normalize_score || !all_ok)
        return;
    ks__status_reset(&s->shm->norm_st);
    call_begin(s, -1);
    s->shm->norm_code =
        d->normalize_score(s->ip->real_self, s->cycle, s->pod, s->norm, n, &s->shm->norm_st);
    call_end(s);
    s->shm->norm_done = 1;
}

static ks_code child_pre_score(iso_session *s, uint32_t n)
{
    const ks_node_info **nodes = calloc(n ? n : 1, sizeof(*nodes));
    if (!nodes)
        return KS_ERROR;
    size_t k = 0;
    for (uint32_t j = 0; j < n; j++)
        if ((nodes[k] = snap_node(s, s->idx[j])))
            k++;
    ks__status_reset(&s->shm->st1);
    call_begin(s, -1);
    ks_code code =
        s->ip->real->pre_score(s->ip->real_self, s->cycle, s->pod, nodes, k, &s->shm->st1);
    call_end(s);
    free(nodes);
    if (code == KS_SUCCESS && s->ip->real->score)
        child_score(s, n); /* the framework's Score calls read the answers */
    return code;
}

static ks_code child_normalize(iso_session *s, uint32_t n)
{
    ks__status_reset(&s->shm->st1);
    call_begin(s, -1);
    ks_code code =
        s->ip->real->normalize_score(s->ip->real_self, s->cycle, s->pod, s->norm, n, &s->shm->st1);
    call_end(s);
    return code;
}

typedef struct iso_req {
    int32_t op;
    uint32_t n;
} iso_req;

/* What every child does first: the scheduler's crash reports and signal handling are the
 * parent's business (a crash here is reported by the parent, and must not flush simulate's output
 * a second time); only the socket and stdin/stdout/stderr stay open. */
static void child_setup(int fd)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE,  SIGILL,  SIGABRT, SIGTERM,
                               SIGINT,  SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    ks__iso_in_child = 1;
    if (fd != 3) {
        dup2(fd, 3);
        close(fd);
    }
    close_range(4, ~0U, 0);
}

static int32_t child_run(iso_session *s, int op, uint32_t n)
{
    switch (op) {
    case OP_PRE_FILTER:
        return child_pre_filter(s);
    case OP_FILTER:
        child_filter(s, n);
        return KS_SUCCESS;
    case OP_PRE_SCORE:
        return child_pre_score(s, n);
    case OP_SCORE:
        child_score(s, n);
        return KS_SUCCESS;
    case OP_NORMALIZE:
        return child_normalize(s, n);
    default:
        _exit(2);
    }
}

/* first: the request the child answers before it reads any (0: none). */
static __attribute__((noreturn)) void child_main(iso_session *s, int fd, int first)
{
    child_setup(fd);
    iso_req rq = {first, 0};
    for (;;) {
        if (rq.op) {
            int32_t code = child_run(s, rq.op, rq.n);
            if (write(3, &code, sizeof(code)) != (ssize_t)sizeof(code))
                _exit(0);
        }
        if (read(3, &rq, sizeof(rq)) != (ssize_t)sizeof(rq))
            _exit(0); /* the parent closed its end: the cycle is over */
    }
}

/* fork() with the locks a plugin's host calls take held across it, so that the child never
 * inherits one locked by a thread it does not have: the store's (namespaces, PDBs, ...), then the
 * symbol table's (the order the rest of the scheduler takes them in). */
static pid_t fork_locked(const ks_cycle *cycle)
{
    struct ks_store *store = cycle->hooks ? cycle->hooks->store : NULL;
    if (store)
        ks__store_fork_prepare(store);
    ks__intern_fork_prepare();
    pid_t pid = fork();
    ks__intern_fork_after();
    if (store)
        ks__store_fork_after(store);
    return pid;
}

/* ---- reaping --------------------------------------------------------------------------------
 * A finished child is killed and reaped later (waitpid WNOHANG at the next fork, a blocking wait
 * when the plugin is freed): waiting for its address space to be torn down would hold up the
 * scheduling cycle. */

static pthread_mutex_t reap_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t *reap_pids;
static size_t reap_n, reap_cap;

static void reap_later(pid_t pid)
{
    kill(pid, SIGKILL);
    pthread_mutex_lock(&reap_mu);
    if (reap_n == reap_cap) {
        size_t cap = reap_cap ? reap_cap * 2 : 16;
        pid_t *p = realloc(reap_pids, cap * sizeof(*p));
        if (!p) {
            pthread_mutex_unlock(&reap_mu);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
            return;
        }
        reap_pids = p;
        reap_cap = cap;
    }
    reap_pids[reap_n++] = pid;
    pthread_mutex_unlock(&reap_mu);
}

/* block: wait for each; else only collect those already gone. */
static void reap_pending(int block)
{
    pthread_mutex_lock(&reap_mu);
    for (size_t i = 0; i < reap_n;) {
        pid_t r;
        while ((r = waitpid(reap_pids[i], NULL, block ? 0 : WNOHANG)) < 0 && errno == EINTR)
            ;
        if (r == 0) {
            i++;
            continue;
        }
        reap_pids[i] = reap_pids[--reap_n];
    }
    if (block) {
        free(reap_pids);
        reap_pids = NULL;
        reap_cap = 0;
    }
    pthread_mutex_unlock(&reap_mu);
}

/* ---- failures ------------------------------------------------------------------------------ */

static const char *point_name(int op)
{
    switch (op) {
    case OP_PRE_FILTER:
        return "PreFilter";
    case OP_FILTER:
        return "Filter";
    case OP_PRE_SCORE:
        return "PreScore";
    case OP_SCORE:
        return "Score";
    default:
        return "NormalizeScore";
    }
}

static int64_t deadline_of(const ks_iso_plugin *ip)
{
    return ip->own_deadline_ns >= 0 ? ip->own_deadline_ns : ks__guard_deadline();
}

/* One more failure of the plugin: logged, counted, and past the budget the policy applies. */
static void count_failure(ks_iso_plugin *ip, const char *msg, int hung)
{
    int n = atomic_fetch_add(&ip->failures, 1) + 1;
    ks__metrics_inc(hung ? ip->m_deadline : ip->m_crash);
    pthread_mutex_lock(&ip->mu);
    snprintf(ip->last_error, sizeof(ip->last_error), "%s", msg);
    pthread_mutex_unlock(&ip->mu);
    ks__log('E', "isolation", "profile \"%s\": %s (failure %d of %d allowed)", ip->profile, msg, n,
            ip->budget);
    if (n < ip->budget || atomic_exchange(&ip->disabled, 1))
        return;
    ks__metrics_set(ip->m_taken_out, 1);
    ks__log('E', "isolation",
            "profile \"%s\": plugin %s is taken out after %d failures "
            "(kubeschedFailurePolicy: %s): %s",
            ip->profile, ip->name, n, ip->policy == POLICY_IGNORE ? "ignore" : "fail",
            ip->policy == POLICY_IGNORE
                ? "the profile runs without it"
                : "the profile's pods stay pending with an Error until kubesched restarts "
                  "with a fixed plugin");
}

/* The child is gone or stuck: reaps it and words what happened into s->err. */
static void child_failed(iso_session *s, int op, int hung, int64_t deadline)
{
    int32_t cur = atomic_load(&s->shm->cur);
    if (hung)
        kill(s->pid, SIGKILL);
    int wst = 0;
    while (waitpid(s->pid, &wst, 0) < 0 && errno == EINTR)
        ;
    s->pid = -1;
    char what[96], node[300] = "";
    if (hung) {
        char dl[32];
        ks__duration_format(deadline, dl, sizeof(dl));
        snprintf(what, sizeof(what), "ran past its deadline of %s", dl);
    } else if (WIFSIGNALED(wst)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(wst));
        if (abbrev)
            snprintf(what, sizeof(what), "crashed with SIG%s", abbrev);
        else
            snprintf(what, sizeof(what), "crashed with signal %d", WTERMSIG(wst));
    } else {
        snprintf(what, sizeof(what), "exited with status %d", WEXITSTATUS(wst));
    }
    const ks_node_info *ni = s->one_shot_node ? s->one_shot_node
                             : cur >= 0       ? snap_node(s, (uint32_t)cur)
                                              : NULL;
    if (ni)
        snprintf(node, sizeof(node), ", node %s", ks__sym_str(ni->name));
    char msg[KS_STATUS_BUF];
    snprintf(msg, sizeof(msg), "plugin \"%s\" (isolated, %s) %s at %s, pod %s/%s%s%s", s->ip->name,
             s->ip->origin ? s->ip->origin : "in-tree", what, point_name(op),
             ks__sym_str(s->pod->ns), ks__sym_str(s->pod->name), node,
             hung ? "; its process was killed" : "");
    ks__status_reset(&s->err);
    ks__status_add(&s->err, msg);
    s->err.code = KS_ERROR;
    s->failed = 1;
    count_failure(s->ip, msg, hung);
}

/* Under s->mu: waits for the answer to the request op. 0 with *code, or -1 (s->failed). */
static int await_answer(iso_session *s, int op, int32_t *code)
{
    int64_t deadline = deadline_of(s->ip);
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    for (;;) {
        int r = poll(&p, 1, 20);
        if (r > 0) {
            if (read(s->fd, code, sizeof(*code)) == (ssize_t)sizeof(*code))
                return 0;
            child_failed(s, op, 0, 0);
            return -1;
        }
        if (r < 0 && errno != EINTR) {
            child_failed(s, op, 1, deadline);
            return -1;
        }
        int64_t t0 = atomic_load(&s->shm->call_start_ns);
        if (deadline > 0 && t0 && ks__clock_now_ns() - t0 > deadline) {
            child_failed(s, op, 1, deadline);
            return -1;
        }
    }
}

/* Under s->mu: sends one request and waits for its answer. 0 with *code, or -1 (s->failed). */
static int request(iso_session *s, int op, uint32_t n, int32_t *code)
{
    if (s->failed)
        return -1;
    iso_req rq = {op, n};
    /* MSG_NOSIGNAL: a child that died is an answer (EPIPE), not a SIGPIPE for the scheduler */
    if (send(s->fd, &rq, sizeof(rq), MSG_NOSIGNAL) != (ssize_t)sizeof(rq)) {
        child_failed(s, op, 0, 0);
        return -1;
    }
    return await_answer(s, op, code);
}

/* ---- sessions ------------------------------------------------------------------------------ */

static void session_free(iso_session *s)
{
    if (s->pid > 0)
        reap_later(s->pid);
    if (s->fd >= 0)
        close(s->fd);
    unmap_shm(s);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void ks__iso_end_sessions(ks_cycle *c)
{
    for (iso_session *s = atomic_load(&c->iso_sessions), *n; s; s = n) {
        n = s->next;
        session_free(s);
    }
    atomic_store(&c->iso_sessions, NULL);
}

static iso_session *find_session(ks_cycle *c, const ks_iso_plugin *ip)
{
    for (iso_session *s = atomic_load_explicit(&c->iso_sessions, memory_order_acquire); s;
         s = s->next)
        if (s->ip == ip)
            return s;
    return NULL;
}

/* A child of this moment for (ip, cycle, pod) that first answers the request first (0: none);
 * one_shot: the node a one-shot child evaluates. NULL with *err when it cannot be made. */
static iso_session *spawn(ks_iso_plugin *ip, ks_cycle *cycle, const ks_pod *pod, size_t nnodes,
                          const ks_node_info *one_shot, int first, ks_status *err)
{
    reap_pending(0);
    iso_session *s = calloc(1, sizeof(*s));
    int sv[2] = {-1, -1};
    if (s)
        s->ip = ip;
    /* A one-shot child may still run when the next session starts: its block is its own. */
    if (!s || map_shm(s, ip, nnodes ? nnodes : 1, one_shot == NULL) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        if (s)
            unmap_shm(s);
        free(s);
        ks__status_reset(err);
        ks__status_add(err, "isolation: cannot prepare the plugin's process (out of memory or "
                            "file descriptors)");
        err->code = KS_ERROR;
        return NULL;
    }
    s->ip = ip;
    s->cycle = cycle;
    s->pod = pod;
    s->nnodes = nnodes;
    s->one_shot_node = one_shot;
    s->fd = sv[0];
    pthread_mutex_init(&s->mu, NULL);
    pid_t pid = fork_locked(cycle);
    if (pid == 0) {
        close(sv[0]);
        child_main(s, sv[1], first);
    }
    close(sv[1]);
    if (pid < 0) {
        ks__status_reset(err);
        ks__status_add(err, "isolation: fork failed");
        err->code = KS_ERROR;
        s->pid = -1;
        session_free(s);
        return NULL;
    }
    s->pid = pid;
    return s;
}

/* The session of this cycle, started at the first call (with first as its first request). NULL
 * with *err when it cannot start; *started says this call started it. */
static iso_session *session_of(ks_iso_plugin *ip, ks_cycle *cycle, const ks_pod *pod, int first,
                               int *started, ks_status *err)
{
    *started = 0;
    iso_session *s = find_session(cycle, ip);
    if (s)
        return s;
    pthread_mutex_lock(&ip->mu);
    if (!(s = find_session(cycle, ip)) &&
        (s = spawn(ip, cycle, pod, cycle->snap ? cycle->snap->nnodes : 0, NULL, first, err))) {
        *started = 1;
        s->next = atomic_load(&cycle->iso_sessions);
        atomic_store_explicit(&cycle->iso_sessions, s, memory_order_release);
    }
    pthread_mutex_unlock(&ip->mu);
    return s;
}

/* ---- the proxy: what the framework calls --------------------------------------------------- */

/* Whether the plugin is out, and then what its policy answers (ignore: code_if_ignored). */
static int disabled_answer(ks_iso_plugin *ip, ks_code code_if_ignored, ks_status *st, ks_code *out)
{
    if (!atomic_load(&ip->disabled))
        return 0;
    if (ip->policy == POLICY_IGNORE) {
        *out = code_if_ignored;
        return 1;
    }
    char msg[KS_STATUS_BUF + 128];
    pthread_mutex_lock(&ip->mu);
    snprintf(msg, sizeof(msg),
             "plugin \"%s\" is taken out after %d failures (kubeschedFailurePolicy: fail); the "
             "last: %s",
             ip->name, atomic_load(&ip->failures), ip->last_error);
    pthread_mutex_unlock(&ip->mu);
    ks__status_add(st, msg);
    *out = KS_ERROR;
    return 1;
}

static ks_code failed_answer(const iso_session *s, ks_status *st)
{
    *st = s->err;
    return KS_ERROR;
}

static int is_snapshot_node(const ks_cycle *c, const ks_node_info *ni)
{
    return c->snap && ni->snap_index < c->snap->nnodes && c->snap->nodes[ni->snap_index] == ni;
}

/* PreFilter starts the session: the child runs it as soon as it exists. */
static ks_code proxy_pre_filter(void *self, ks_cycle *cycle, const ks_pod *pod,
                                ks_prefilter_result *result, ks_status *st)
{
    ks_iso_plugin *ip = self;
    ks_code out;
    if (disabled_answer(ip, KS_SKIP, st, &out))
        return out;
    int started;
    iso_session *s = session_of(ip, cycle, pod, OP_PRE_FILTER, &started, st);
    if (!s)
        return KS_ERROR;
    pthread_mutex_lock(&s->mu);
    int32_t code;
    int rc = started ? await_answer(s, OP_PRE_FILTER, &code) : request(s, OP_PRE_FILTER, 0, &code);
    if (rc == 0) {
        *st = s->shm->st1;
        if (s->shm->pf_used < 0) {
            ks__status_reset(st);
            ks__status_add(st, "isolation: the plugin's PreFilter result names more nodes than "
                               "kubesched carries back (256 KiB of names)");
            code = KS_ERROR;
        } else if (s->shm->pf_used) {
            result->used = 1; /* even with no node: "none of the nodes" */
            const char *nm = s->names;
            for (int32_t i = 0; i < s->shm->pf_n; i++, nm += strlen(nm) + 1)
                ks__host_api()->prefilter_result_add_node(result, ks__intern(nm));
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc == 0 ? (ks_code)code : failed_answer(s, st);
}

/* A one-shot child for a node that is not the snapshot's: PreFilter (its cycle state), then this
 * Filter. */
static ks_code filter_one_shot(ks_iso_plugin *ip, ks_cycle *cycle, const ks_pod *pod,
                               const ks_node_info *ni, ks_status *st)
{
    ks_status err;
    iso_session *s = spawn(ip, cycle, pod, 1, ni, OP_PRE_FILTER, &err);
    if (!s) {
        *st = err;
        return KS_ERROR;
    }
    int32_t code = KS_SUCCESS;
    int rc = await_answer(s, OP_PRE_FILTER, &code);
    ks_code res = KS_SUCCESS;
    if (rc == 0 && code != KS_SKIP) { /* Skip: its Filter does not run, as in the cycle */
        s->idx[0] = 0;
        rc = request(s, OP_FILTER, 1, &code);
        if (rc == 0 && (res = s->filter_code[0]) != KS_SUCCESS)
            *st = s->st[0];
    }
    if (rc != 0)
        res = failed_answer(s, st);
    session_free(s);
    return res;
}

/* The candidates' positions are in snapshot order (all nodes, or PreFilter's subset): where ni
 * stands among them, or -1. */
static long candidate_pos(const ks_cycle *c, const ks_node_info *ni)
{
    size_t lo = 0, hi = c->iso_nfilter_nodes;
    if (hi == c->snap->nnodes)
        return ni->snap_index;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t v = c->iso_filter_nodes[mid]->snap_index;
        if (v == ni->snap_index)
            return (long)mid;
        if (v < ni->snap_index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Under s->mu: the batch that answers ni: from ni on, in the order the Filter workers go (the
 * scheduling cycle lists the candidates before they start), up to FILTER_CHUNK nodes not yet
 * answered; without a list, ni alone. Node sampling stops the workers once enough nodes fit, so
 * the batches stay near the nodes upstream evaluates. */
#define FILTER_CHUNK 256
static uint32_t filter_batch(iso_session *s, const ks_cycle *c, const ks_node_info *ni)
{
    uint32_t n = 0;
    long pos = c->iso_filter_nodes ? candidate_pos(c, ni) : -1;
    if (pos < 0) {
        s->idx[n++] = ni->snap_index;
        return n;
    }
    size_t total = c->iso_nfilter_nodes;
    for (size_t k = 0; k < total && n < FILTER_CHUNK; k++) {
        uint32_t j = c->iso_filter_nodes[((size_t)pos + k) % total]->snap_index;
        if (j < s->nnodes && atomic_load(&s->filter_state[j]) != SLOT_DONE)
            s->idx[n++] = j;
    }
    return n;
}

void ks__iso_prefetch_filter(ks_iso_plugin *ip, ks_cycle *cycle, const ks_pod *pod, size_t start,
                             size_t count)
{
    size_t total = cycle->iso_nfilter_nodes;
    if (atomic_load(&ip->disabled) || !cycle->iso_filter_nodes || total == 0)
        return;
    ks_status err;
    int started;
    iso_session *s = session_of(ip, cycle, pod, 0, &started, &err);
    if (!s)
        return; /* the workers' calls say why */
    pthread_mutex_lock(&s->mu);
    uint32_t n = 0;
    for (size_t k = 0; k < total && n < count; k++) {
        uint32_t j = cycle->iso_filter_nodes[(start + k) % total]->snap_index;
        if (j < s->nnodes && atomic_load(&s->filter_state[j]) != SLOT_DONE)
            s->idx[n++] = j;
    }
    int32_t code;
    if (n && !s->failed)
        request(s, OP_FILTER, n, &code);
    pthread_mutex_unlock(&s->mu);
}

static ks_code proxy_filter(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                            ks_status *st)
{
    ks_iso_plugin *ip = self;
    ks_code out;
    if (disabled_answer(ip, KS_SUCCESS, st, &out))
        return out;
    if (!is_snapshot_node(cycle, ni))
        return filter_one_shot(ip, cycle, pod, ni, st);
    int started;
    iso_session *s = session_of(ip, cycle, pod, 0, &started, st);
    if (!s)
        return KS_ERROR;
    uint32_t i = ni->snap_index;
    if (atomic_load_explicit(&s->filter_state[i], memory_order_acquire) != SLOT_DONE) {
        pthread_mutex_lock(&s->mu);
        if (!s->failed && atomic_load(&s->filter_state[i]) != SLOT_DONE) {
            int32_t code;
            request(s, OP_FILTER, filter_batch(s, cycle, ni), &code);
        }
        pthread_mutex_unlock(&s->mu);
        if (s->failed)
            return failed_answer(s, st);
    }
    ks_code code = s->filter_code[i];
    if (code != KS_SUCCESS)
        *st = s->st[i];
    return code;
}

/* Under s->mu: nodes (the framework's order) as snapshot indexes in idx[]; how many. */
static uint32_t list_nodes(iso_session *s, const ks_cycle *cycle, const ks_node_info *const *nodes,
                           size_t nnodes)
{
    uint32_t n = 0;
    for (size_t k = 0; k < nnodes && n < s->nnodes; k++)
        if (is_snapshot_node(cycle, nodes[k]))
            s->idx[n++] = nodes[k]->snap_index;
    return n;
}

/* PreScore, and in the same request Score and NormalizeScore on the same nodes. */
static ks_code proxy_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                               const ks_node_info *const *nodes, size_t nnodes, ks_status *st)
{
    ks_iso_plugin *ip = self;
    ks_code out;
    if (disabled_answer(ip, KS_SKIP, st, &out))
        return out;
    int started;
    iso_session *s = session_of(ip, cycle, pod, 0, &started, st);
    if (!s)
        return KS_ERROR;
    pthread_mutex_lock(&s->mu);
    int32_t code;
    int rc = request(s, OP_PRE_SCORE, list_nodes(s, cycle, nodes, nnodes), &code);
    if (rc == 0)
        *st = s->shm->st1;
    pthread_mutex_unlock(&s->mu);
    return rc == 0 ? (ks_code)code : failed_answer(s, st);
}

static ks_code proxy_score(void *self, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                           int64_t *score, ks_status *st)
{
    ks_iso_plugin *ip = self;
    ks_code out;
    *score = 0;
    if (disabled_answer(ip, KS_SUCCESS, st, &out))
        return out;
    if (!is_snapshot_node(cycle, ni)) {
        ks__status_add(st, "isolation: Score on a node that is not the snapshot's");
        return KS_ERROR;
    }
    int started;
    iso_session *s = session_of(ip, cycle, pod, 0, &started, st);
    if (!s)
        return KS_ERROR;
    uint32_t i = ni->snap_index;
    if (atomic_load_explicit(&s->score_state[i], memory_order_acquire) != SLOT_DONE) {
        /* No PreScore ran (the plugin has none): the nodes the framework scores, listed before
         * its workers start, else this node alone. */
        pthread_mutex_lock(&s->mu);
        if (!s->failed && atomic_load(&s->score_state[i]) != SLOT_DONE) {
            uint32_t n = cycle->iso_score_nodes
                             ? list_nodes(s, cycle, cycle->iso_score_nodes, cycle->iso_nscore_nodes)
                             : 0;
            if (n == 0)
                s->idx[n++] = i;
            int32_t code;
            request(s, OP_SCORE, n, &code);
        }
        pthread_mutex_unlock(&s->mu);
        if (s->failed)
            return failed_answer(s, st);
    }
    ks_code code = s->score_code[i];
    *score = s->score[i];
    if (code != KS_SUCCESS)
        *st = s->st[i];
    return code;
}

/* Whether scores are the ones the child scored, in the same order (then its NormalizeScore of
 * them stands). */
static int same_as_scored(const iso_session *s, const ks_node_score *scores, size_t n)
{
    if (!s->shm->norm_done || n != s->shm->nscored)
        return 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = s->scored[k];
        if (!is_snapshot_node(s->cycle, scores[k].node) || scores[k].node->snap_index != i ||
            scores[k].score != s->score[i])
            return 0;
    }
    return 1;
}

static ks_code proxy_normalize(void *self, ks_cycle *cycle, const ks_pod *pod,
                               ks_node_score *scores, size_t nscores, ks_status *st)
{
    ks_iso_plugin *ip = self;
    ks_code out;
    if (disabled_answer(ip, KS_SUCCESS, st, &out))
        return out;
    int started;
    iso_session *s = session_of(ip, cycle, pod, 0, &started, st);
    if (!s)
        return KS_ERROR;
    if (nscores > s->nnodes) {
        ks__status_add(st, "isolation: more scores than nodes");
        return KS_ERROR;
    }
    pthread_mutex_lock(&s->mu);
    int32_t code;
    int rc = 0;
    if (same_as_scored(s, scores, nscores)) {
        code = s->shm->norm_code;
        *st = s->shm->norm_st;
    } else {
        memcpy(s->norm, scores, nscores * sizeof(*scores));
        if ((rc = request(s, OP_NORMALIZE, (uint32_t)nscores, &code)) == 0)
            *st = s->shm->st1;
    }
    if (rc == 0) /* only the scores come back: the node pointers are the parent's own */
        for (size_t k = 0; k < nscores; k++)
            scores[k].score = s->norm[k].score;
    pthread_mutex_unlock(&s->mu);
    return rc == 0 ? (ks_code)code : failed_answer(s, st);
}

/* The registered events, without their hints: a hint would run in the scheduler's process. */
static size_t proxy_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    ks_iso_plugin *ip = self;
    size_t n = 0;
    if (ip->real->events_with_hints) {
        n = ip->real->events_with_hints(ip->real_self, out, cap);
        for (size_t i = 0; i < n && i < cap; i++)
            out[i].hint = NULL;
    } else if (ip->real->events_to_register) {
        ks_cluster_event plain[64];
        n = ip->real->events_to_register(ip->real_self, plain, cap < 64 ? cap : 64);
        for (size_t i = 0; i < n && i < cap && i < 64; i++)
            out[i] = (ks_cluster_event_hint){plain[i], NULL};
    }
    return n;
}

/* ---- construction -------------------------------------------------------------------------- */

int ks__iso_wanted(const cJSON *args)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, KS_ISO_KEY);
    return cJSON_IsString(v) && strcmp(v->valuestring, "process") == 0;
}

/* The extension points isolation cannot carry that d implements, as "Reserve, Permit"; empty
 * when none. */
static void unsupported_points(const ks_plugin_desc *d, char *out, size_t len)
{
    const struct {
        const void *fn;
        const char *name;
    } pts[] = {{(const void *)d->pre_enqueue, "PreEnqueue"},
               {(const void *)d->less, "QueueSort"},
               {(const void *)d->pre_filter_add_pod, "PreFilter AddPod"},
               {(const void *)d->pre_filter_remove_pod, "PreFilter RemovePod"},
               {(const void *)d->post_filter, "PostFilter"},
               {(const void *)d->reserve, "Reserve"},
               {(const void *)d->unreserve, "Unreserve"},
               {(const void *)d->permit, "Permit"},
               {(const void *)d->pre_bind_pre_flight, "PreBindPreFlight"},
               {(const void *)d->pre_bind, "PreBind"},
               {(const void *)d->bind, "Bind"},
               {(const void *)d->post_bind, "PostBind"}};
    size_t off = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
        if (pts[i].fn && off < len)
            off += (size_t)snprintf(out + off, len - off, "%s%s", off ? ", " : "", pts[i].name);
}

int ks__iso_new(const char *profile, const char *name, const char *origin,
                const ks_plugin_desc *desc, void *self, const cJSON *args, int64_t deadline_ns,
                ks_iso_plugin **out, const ks_plugin_desc **proxy, char *err, size_t errlen)
{
    char bad[256];
    unsupported_points(desc, bad, sizeof(bad));
    if (bad[0]) {
        snprintf(err, errlen,
                 "profile \"%s\": plugin %s: " KS_ISO_KEY ": process carries PreFilter, Filter, "
                 "PreScore, Score and NormalizeScore only; %s also implements %s (run it "
                 "in-process: remove " KS_ISO_KEY ")",
                 profile, name, name, bad);
        return KS_EINVAL;
    }
    ks_iso_plugin *ip = calloc(1, sizeof(*ip));
    if (!ip || (origin && !(ip->origin = strdup(origin)))) {
        free(ip);
        return KS_ENOMEM;
    }
    ip->profile = profile;
    ip->name = name;
    ip->real = desc;
    ip->real_self = self;
    ip->own_deadline_ns = deadline_ns;
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(args, KS_ISO_POLICY_KEY);
    ip->policy =
        cJSON_IsString(pol) && !strcmp(pol->valuestring, "ignore") ? POLICY_IGNORE : POLICY_FAIL;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(args, KS_ISO_BUDGET_KEY);
    ip->budget = cJSON_IsNumber(b) ? (int)b->valuedouble : KS_ISO_DEFAULT_BUDGET;
    pthread_mutex_init(&ip->mu, NULL);
    pthread_mutex_init(&ip->spare_mu, NULL);
    /* The proxy has exactly the points the plugin has: the profile's plan was made from them. */
    ks_plugin_desc *p = &ip->proxy;
    p->size = sizeof(*p);
    p->name = desc->name;
    p->flags = desc->flags;
    p->args_schema = desc->args_schema;
    p->pre_filter = desc->pre_filter ? proxy_pre_filter : NULL;
    p->filter = desc->filter ? proxy_filter : NULL;
    p->pre_score = desc->pre_score ? proxy_pre_score : NULL;
    p->score = desc->score ? proxy_score : NULL;
    p->normalize_score = desc->normalize_score ? proxy_normalize : NULL;
    if (desc->events_with_hints || desc->events_to_register)
        p->events_with_hints = proxy_events;
    *out = ip;
    *proxy = p;
    return 0;
}

void ks__iso_free(ks_iso_plugin *ip)
{
    if (!ip)
        return;
    reap_pending(1);
    if (ip->spare_map)
        munmap(ip->spare_map, ip->spare_len);
    if (ip->real_self && ip->real->destroy)
        ip->real->destroy(ip->real_self);
    pthread_mutex_destroy(&ip->mu);
    pthread_mutex_destroy(&ip->spare_mu);
    free(ip->origin);
    free(ip);
}

/* The family name, registered by the first isolated plugin of the registry (or found). */
static ks_metric_family *family(ks_metrics *r, ks_metric_type type, const char *name,
                                const char *help, const char *const *labels, size_t nlabels)
{
    ks_metric_family *f = ks__metrics_find(r, name);
    if (f)
        return ks__metrics_family_type(f) == type && ks__metrics_family_nlabels(f) == nlabels
                   ? f
                   : NULL;
    ks_metric_opts o = {type, name, help, KS_STABILITY_ALPHA, labels, nlabels, NULL, 0};
    return ks__metrics_register(r, &o, &f) == 0 ? f : NULL;
}

int ks__iso_attach_metrics(ks_iso_plugin *ip, ks_metrics *r)
{
    static const char *const failure_labels[] = {"plugin", "profile", "reason"};
    static const char *const plugin_labels[] = {"plugin", "profile"};
    ks_metric_family *failures =
        family(r, KS_METRIC_COUNTER, "kubesched_plugin_isolation_failures_total",
               "kubesched: crashes (reason crash) and calls past their deadline (reason "
               "deadline) of plugins run with kubeschedIsolation: process.",
               failure_labels, 3);
    ks_metric_family *out =
        family(r, KS_METRIC_GAUGE, "kubesched_plugin_isolation_taken_out",
               "kubesched: 1 when an isolated plugin's failures used up its "
               "kubeschedErrorBudget and its kubeschedFailurePolicy took it out of the profile.",
               plugin_labels, 2);
    if (!failures || !out)
        return KS_ENOMEM;
    ip->m_crash = KS_METRICS_WITH(failures, ip->name, ip->profile, "crash");
    ip->m_deadline = KS_METRICS_WITH(failures, ip->name, ip->profile, "deadline");
    ip->m_taken_out = KS_METRICS_WITH(out, ip->name, ip->profile);
    ks__metrics_set(ip->m_taken_out, atomic_load(&ip->disabled));
    return 0;
}

int ks__iso_failures(const ks_iso_plugin *ip) { return atomic_load(&ip->failures); }
int ks__iso_disabled(const ks_iso_plugin *ip) { return atomic_load(&ip->disabled); }
