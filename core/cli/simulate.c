/*
 * `kubesched simulate`; see simulate.h. The file source: objects from manifests, an in-memory
 * bind, a virtual queue clock (1 µs per reading, so pods of equal priority keep file order, and
 * jumps to the next backoff expiry when nothing else is runnable), and the report.
 */
#include "cli/simulate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "sched/framework.h"
#include "api/intern.h"
#include "util/log.h"
#include "api/manifest.h"
#include "api/objects.h"
#include "sched/scheduler.h"
#include "api/store.h"

typedef struct record {
    uint64_t seq;
    char *ns, *name, *profile;
    const char *result; /* static string */
    ks_sym node;
    char *message;
    cJSON *explain;   /* {"filter":..., "score":..., "finalScore":...} */
    ks_sym nominated; /* PostFilter's nomination, KS_SYM_ABSENT when none */
    cJSON *victims;   /* [{"namespace","name","node"}] evicted for this attempt */
} record;

typedef struct sim {
    const ks_simulate_opts *o;
    ks_scheduler *sched;
    ks_cache *cache;
    atomic_llong clock_ns;
    pthread_mutex_t mu; /* guards records (observer calls come from binding threads too) */
    record *recs;
    size_t nrecs, cap;
    ks_simulate_stats *stats;
    struct {
        char kind[64];
        size_t n;
    } unread[8]; /* kinds kubesched does not read, counted for the end-of-run line */
    size_t nunread;
} sim;

static int64_t sim_now(void *ctx)
{
    sim *s = ctx;
    return atomic_fetch_add(&s->clock_ns, 1000) + 1000;
}

/* ---- the in-memory cluster source ---------------------------------------------------------- */

static ks_code sim_bind(void *ctx, const ks_pod *pod, ks_sym node, ks_status *st)
{
    sim *s = ctx;
    (void)st;
    /* The bound pod is what an informer would deliver: it confirms the assumed one. */
    if (ks__scheduler_on_pod_add(s->sched, (ks_pod *)pod) != 0) {
        ks__status_add(st, "in-memory bind failed");
        return KS_ERROR;
    }
    (void)node;
    return KS_SUCCESS;
}

/* ---- records ------------------------------------------------------------------------------- */

/* Records reported after the run (pods with no profile, gated pods) sort after every attempt. */
#define LATE_SEQ (UINT64_MAX / 2)

static record *rec_new(sim *s, uint64_t seq)
{
    if (s->nrecs == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        record *r = realloc(s->recs, cap * sizeof(*r));
        if (!r)
            return NULL;
        s->recs = r;
        s->cap = cap;
    }
    record *r = &s->recs[s->nrecs++];
    memset(r, 0, sizeof(*r));
    r->seq = seq;
    r->nominated = KS_SYM_ABSENT;
    return r;
}

static record *rec_for(sim *s, uint64_t seq)
{
    for (size_t i = s->nrecs; i-- > 0;)
        if (s->recs[i].seq == seq)
            return &s->recs[i];
    return rec_new(s, seq);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void reasons_joined(const ks_status *st, char *out, size_t len)
{
    ks__status_message(st, out, len);
}

static cJSON *build_explain(const ks_explain *ex)
{
    cJSON *root = cJSON_CreateObject(), *filter = cJSON_AddObjectToObject(root, "filter");
    cJSON *score = cJSON_AddObjectToObject(root, "score"),
          *final = cJSON_AddObjectToObject(root, "finalScore");
    const ks_framework *fw = ex->fw;
    char msg[KS_STATUS_BUF + 64];
    if (ex->prefilter_status) {
        /* PreFilter rejected the pod: no node was evaluated; each node shows that verdict. */
        reasons_joined(ex->prefilter_status, msg, sizeof(msg));
        cJSON *pf = cJSON_AddObjectToObject(root, "preFilter");
        cJSON_AddStringToObject(
            pf, ex->prefilter_status->plugin ? ex->prefilter_status->plugin : "PreFilter", msg);
        return root;
    }
    for (size_t i = 0; i < ex->nevaluated; i++) {
        cJSON *n = cJSON_AddObjectToObject(filter, ks__sym_str(ex->evaluated[i]->name));
        uint16_t passed = ex->passed[i], seen = 0;
        for (size_t p = 0; p < fw->n[KS_PT_FILTER] && seen < passed; p++) {
            if (ex->skip_filter & (1ull << fw->pt[KS_PT_FILTER][p].inst->index))
                continue;
            cJSON_AddStringToObject(n, fw->pt[KS_PT_FILTER][p].inst->name, "passed");
            seen++;
        }
        if (ex->statuses[i].code != KS_SUCCESS) {
            reasons_joined(&ex->statuses[i], msg, sizeof(msg));
            cJSON_AddStringToObject(n, ex->statuses[i].plugin ? ex->statuses[i].plugin : "Filter",
                                    msg);
        }
    }
    if (ex->scored) {
        for (size_t f = 0; f < ex->nfeasible; f++) {
            const char *name = ks__sym_str(ex->feasible[f]->name);
            cJSON *n = cJSON_AddObjectToObject(score, name);
            for (size_t p = 0; p < fw->n[KS_PT_SCORE]; p++) {
                if (ex->skip_score & (1ull << p))
                    continue;
                cJSON_AddNumberToObject(n, fw->pt[KS_PT_SCORE][p].inst->name,
                                        (double)ex->scores[p * ex->nfeasible + f]);
            }
            cJSON_AddNumberToObject(final, name, (double)ex->totals[f]);
        }
    }
    return root;
}

static void on_cycle_done(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                          const char *result, ks_sym node, const char *message,
                          const ks_explain *ex)
{
    sim *s = ctx;
    pthread_mutex_lock(&s->mu);
    record *r = rec_new(s, seq);
    if (r) {
        r->ns = strdup(ks__sym_str(pod->ns));
        r->name = strdup(ks__sym_str(pod->name));
        r->profile = strdup(profile);
        r->result = result ? result : "Binding";
        r->node = result ? KS_SYM_ABSENT : node;
        r->message = dup_or_null(message);
        if (ex && s->o->explain)
            r->explain = build_explain(ex);
    }
    s->stats->attempts++;
    pthread_mutex_unlock(&s->mu);
}

static void on_bind_done(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                         const char *result, ks_sym node, const char *message)
{
    sim *s = ctx;
    (void)pod;
    (void)profile;
    pthread_mutex_lock(&s->mu);
    record *r = rec_for(s, seq);
    if (r) {
        r->result = strcmp(result, "Scheduled") == 0 ? "Scheduled"
                    : strcmp(result, "Error") == 0   ? "Error"
                                                     : "Unschedulable";
        r->node = node;
        free(r->message);
        r->message = dup_or_null(message);
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_preempted(void *ctx, uint64_t seq, const ks_pod *pod, ks_sym node,
                         ks_pod *const *victims, size_t nvictims)
{
    sim *s = ctx;
    (void)pod;
    pthread_mutex_lock(&s->mu);
    record *r = rec_for(s, seq);
    if (r) {
        r->nominated = node;
        r->victims = cJSON_CreateArray();
        for (size_t i = 0; r->victims && i < nvictims; i++) {
            cJSON *v = cJSON_CreateObject();
            cJSON_AddStringToObject(v, "namespace", ks__sym_str(victims[i]->ns));
            cJSON_AddStringToObject(v, "name", ks__sym_str(victims[i]->name));
            cJSON_AddStringToObject(v, "node", ks__sym_str(victims[i]->node_name));
            cJSON_AddItemToArray(r->victims, v);
        }
    }
    s->stats->preemptions++;
    pthread_mutex_unlock(&s->mu);
}

static int cmp_rec(const void *a, const void *b)
{
    const record *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- output -------------------------------------------------------------------------------- */

static void print_json(sim *s, FILE *out)
{
    fputs("{\"pods\": [", out);
    for (size_t i = 0; i < s->nrecs; i++) {
        record *r = &s->recs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "namespace", r->ns ? r->ns : "");
        cJSON_AddStringToObject(o, "name", r->name ? r->name : "");
        if (r->profile)
            cJSON_AddStringToObject(o, "profile", r->profile);
        else
            cJSON_AddNullToObject(o, "profile");
        cJSON_AddStringToObject(o, "result", r->result);
        if (r->node != KS_SYM_ABSENT && strcmp(r->result, "Scheduled") == 0)
            cJSON_AddStringToObject(o, "node", ks__sym_str(r->node));
        else
            cJSON_AddNullToObject(o, "node");
        cJSON_AddStringToObject(o, "message", r->message ? r->message : "");
        if (r->nominated != KS_SYM_ABSENT) {
            cJSON_AddStringToObject(o, "nominatedNode", ks__sym_str(r->nominated));
            cJSON_AddItemToObject(o, "victims", r->victims ? r->victims : cJSON_CreateArray());
            r->victims = NULL;
        }
        if (r->explain) {
            cJSON *ex = r->explain;
            cJSON_AddItemToObject(o, "filter", cJSON_DetachItemFromObject(ex, "filter"));
            cJSON_AddItemToObject(o, "score", cJSON_DetachItemFromObject(ex, "score"));
            cJSON_AddItemToObject(o, "finalScore", cJSON_DetachItemFromObject(ex, "finalScore"));
            cJSON *pf = cJSON_DetachItemFromObject(ex, "preFilter");
            if (pf)
                cJSON_AddItemToObject(o, "preFilter", pf);
        }
        char *text = cJSON_PrintUnformatted(o);
        fprintf(out, "%s\n  %s", i ? "," : "", text ? text : "{}");
        free(text);
        cJSON_Delete(o);
    }
    fputs("\n]}\n", out);
}

static void print_table(sim *s, FILE *out)
{
    size_t w_pod = 3, w_prof = 7, w_node = 4;
    for (size_t i = 0; i < s->nrecs; i++) {
        record *r = &s->recs[i];
        size_t l = strlen(r->ns ? r->ns : "") + 1 + strlen(r->name ? r->name : "");
        if (l > w_pod)
            w_pod = l;
        if (r->profile && strlen(r->profile) > w_prof)
            w_prof = strlen(r->profile);
        if (r->node != KS_SYM_ABSENT && strlen(ks__sym_str(r->node)) > w_node)
            w_node = strlen(ks__sym_str(r->node));
    }
    fprintf(out, "%-*s  %-*s  %-13s  %-*s  %s\n", (int)w_pod, "POD", (int)w_prof, "PROFILE",
            "RESULT", (int)w_node, "NODE", "MESSAGE");
    for (size_t i = 0; i < s->nrecs; i++) {
        record *r = &s->recs[i];
        char pod[512];
        snprintf(pod, sizeof(pod), "%s/%s", r->ns ? r->ns : "", r->name ? r->name : "");
        int scheduled = strcmp(r->result, "Scheduled") == 0;
        char extra[1024] = "";
        if (r->nominated != KS_SYM_ABSENT) {
            size_t off = (size_t)snprintf(
                extra, sizeof(extra),
                " [preemption: nominated node %s, victims:", ks__sym_str(r->nominated));
            const cJSON *v;
            cJSON_ArrayForEach(v, r->victims)
            {
                if (off < sizeof(extra))
                    off += (size_t)snprintf(extra + off, sizeof(extra) - off, " %s/%s",
                                            cJSON_GetObjectItem(v, "namespace")->valuestring,
                                            cJSON_GetObjectItem(v, "name")->valuestring);
            }
            if (off < sizeof(extra))
                snprintf(extra + off, sizeof(extra) - off, "]");
        }
        fprintf(out, "%-*s  %-*s  %-13s  %-*s  %s%s\n", (int)w_pod, pod, (int)w_prof,
                r->profile ? r->profile : "-", r->result, (int)w_node,
                scheduled ? ks__sym_str(r->node) : "-", r->message ? r->message : "", extra);
    }
    fprintf(out, "\n%zu attempts: %zu scheduled, %zu unschedulable, %zu errors", s->stats->attempts,
            s->stats->scheduled, s->stats->unschedulable, s->stats->errors);
    if (s->stats->unhandled)
        fprintf(out, ", %zu pods with no matching profile", s->stats->unhandled);
    fputc('\n', out);
}

/* ---- loading ------------------------------------------------------------------------------- */

static const char *kind_of(const cJSON *o)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
    return cJSON_IsString(k) ? k->valuestring : "";
}

static void add_unhandled(sim *s, const ks_pod *pod)
{
    char msg[512], profiles[300] = "";
    size_t off = 0;
    for (size_t i = 0; i < s->o->cfg->nprofiles; i++)
        off += (size_t)snprintf(
            profiles + off, sizeof(profiles) - (off < sizeof(profiles) ? off : sizeof(profiles)),
            "%s%s", i ? ", " : "", s->o->cfg->profiles[i].scheduler_name);
    snprintf(msg, sizeof(msg),
             "no profile has schedulerName \"%s\" (this configuration's profiles: %s); the pod was "
             "not scheduled",
             ks__sym_str(pod->scheduler_name), profiles);
    pthread_mutex_lock(&s->mu);
    record *r = rec_new(s, LATE_SEQ + s->nrecs);
    if (r) {
        r->ns = strdup(ks__sym_str(pod->ns));
        r->name = strdup(ks__sym_str(pod->name));
        r->profile = NULL;
        r->result = "Error";
        r->node = KS_SYM_ABSENT;
        r->message = strdup(msg);
    }
    pthread_mutex_unlock(&s->mu);
    s->stats->unhandled++;
}

/* Problems in the cluster file, as they are found: one line each on the warning stream. */
static void report_problem(void *ctx, const char *msg)
{
    const sim *s = ctx;
    fprintf(s->o->warn ? s->o->warn : stderr, "kubesched: %s\n", msg);
}

/* Counts an object of a kind kubesched does not read, by kind, for the summary line. */
static void tally_unread(sim *s, const char *kind)
{
    s->stats->skipped_objects++;
    for (size_t i = 0; i < s->nunread; i++)
        if (!strcmp(s->unread[i].kind, kind)) {
            s->unread[i].n++;
            return;
        }
    if (s->nunread < sizeof(s->unread) / sizeof(s->unread[0])) {
        snprintf(s->unread[s->nunread].kind, sizeof(s->unread[0].kind), "%s", kind);
        s->unread[s->nunread++].n = 1;
    }
}

static int load_node(sim *s, const ks_manifest_obj *mo, char *err, size_t errlen)
{
    char perr[400];
    ks_node *node;
    int rc = ks__node_from_json(mo->obj, &node, perr, sizeof(perr));
    if (rc) {
        snprintf(err, errlen, "%s (%s): Node: %s", s->o->cluster_path, mo->where, perr);
        return rc;
    }
    rc = ks__scheduler_on_node_add(s->sched, node);
    ks__node_unref(node);
    s->stats->nodes++;
    return rc;
}

/* Pass 1 adds the running pods, pass 2 the pending ones. */
static int load_pod(sim *s, const ks_manifest_obj *mo, int pass, char *err, size_t errlen)
{
    char perr[400];
    ks_pod *pod;
    int rc = ks__pod_from_json(mo->obj, &pod, perr, sizeof(perr));
    if (rc) {
        snprintf(err, errlen, "%s (%s): Pod: %s", s->o->cluster_path, mo->where, perr);
        return rc;
    }
    int assigned = pod->node_name != KS_SYM_EMPTY;
    /* Finished pods hold no resources (upstream's informer filters them out). */
    int finished = pod->phase == ks__intern("Succeeded") || pod->phase == ks__intern("Failed");
    if (!finished && pass == 1 && assigned) {
        rc = ks__scheduler_on_pod_add(s->sched, pod);
        s->stats->running_pods++;
    } else if (!finished && pass == 2 && !assigned) {
        rc = ks__scheduler_on_pod_add(s->sched, pod);
        if (rc == KS_ENOTFOUND) {
            add_unhandled(s, pod);
            rc = 0;
        } else if (rc == KS_EEXIST) {
            snprintf(err, errlen, "%s (%s): Pod %s: duplicate uid %s", s->o->cluster_path,
                     mo->where, pod->key, pod->uid);
        }
        s->stats->pending_pods++;
    }
    ks__pod_unref(pod);
    return rc;
}

static int load_other(sim *s, const ks_manifest_obj *mo, const char *kind, char *err, size_t errlen)
{
    char perr[400];
    if (!ks__store_wants(kind)) {
        tally_unread(s, kind);
        return 0;
    }
    /* Namespaces, Services, ReplicaSets, PDBs, ...: what the plugins read. */
    int rc = ks__store_apply(ks__scheduler_store(s->sched), mo->obj, 0, perr, sizeof(perr));
    if (rc)
        snprintf(err, errlen, "%s (%s): %s: %s", s->o->cluster_path, mo->where, kind, perr);
    return rc;
}

static int load(sim *s, char *err, size_t errlen)
{
    ks_manifest m;
    ks_manifest_opts mo = {.strict = s->o->strict, .report = report_problem, .ctx = s};
    int rc = ks__manifest_read(s->o->cluster_path, &mo, &m, err, errlen);
    s->stats->warnings = m.warnings;
    s->stats->unknown_kinds = m.unknown_kinds;
    if (rc)
        return rc;
    /* Nodes first, then running pods, then pending pods in file order. */
    for (int pass = 0; pass < 3 && rc == 0; pass++) {
        for (size_t i = 0; i < m.n && rc == 0; i++) {
            const char *kind = kind_of(m.objs[i].obj);
            if (!strcmp(kind, "Node"))
                rc = pass == 0 ? load_node(s, &m.objs[i], err, errlen) : 0;
            else if (!strcmp(kind, "Pod"))
                rc = pass > 0 ? load_pod(s, &m.objs[i], pass, err, errlen) : 0;
            else if (pass == 0)
                rc = load_other(s, &m.objs[i], kind, err, errlen);
        }
    }
    ks__manifest_free(&m);
    return rc;
}

/* The line a run ends with when the cluster file had objects that were not used or warnings:
 * nothing is left out without a word. */
static void print_skipped(const sim *s)
{
    const ks_simulate_stats *st = s->stats;
    FILE *w = s->o->warn ? s->o->warn : stderr;
    size_t skipped = st->skipped_objects + st->unknown_kinds, shown = 0;
    if (!skipped && !st->warnings)
        return;
    fprintf(w, "kubesched: %s: skipped %zu object%s", s->o->cluster_path, skipped,
            skipped == 1 ? "" : "s");
    if (st->skipped_objects) {
        fprintf(w, "; %zu of kinds kubesched does not read (", st->skipped_objects);
        for (size_t i = 0; i < s->nunread; i++, shown += s->unread[i - 1].n)
            fprintf(w, "%s%zu %s", i ? ", " : "", s->unread[i].n, s->unread[i].kind);
        if (shown < st->skipped_objects)
            fprintf(w, ", %zu of other kinds", st->skipped_objects - shown);
        fputc(')', w);
    }
    if (st->unknown_kinds)
        fprintf(w, "; %zu without a kind or of an unknown kind (warnings above)",
                st->unknown_kinds);
    if (st->warnings)
        fprintf(w, "; %zu warning%s about the file above (--strict makes them errors)",
                st->warnings, st->warnings == 1 ? "" : "s");
    fputc('\n', w);
}

static void report_gated(void *ctx, const ks_queued_pod *qp)
{
    sim *s = ctx;
    if (!qp->gating_plugin)
        return;
    record *r = rec_new(s, LATE_SEQ + s->nrecs);
    if (!r)
        return;
    r->ns = strdup(ks__sym_str(qp->pod->ns));
    r->name = strdup(ks__sym_str(qp->pod->name));
    r->profile = strdup(ks__sym_str(qp->pod->scheduler_name));
    r->result = "Unschedulable";
    r->node = KS_SYM_ABSENT;
    r->message = strdup(qp->gated_message);
}

int ks__simulate_run(const ks_simulate_opts *o, ks_simulate_stats *stats, char *err, size_t errlen)
{
    sim s;
    int rc;
    memset(&s, 0, sizeof(s));
    memset(stats, 0, sizeof(*stats));
    s.o = o;
    s.stats = stats;
    pthread_mutex_init(&s.mu, NULL);
    atomic_init(&s.clock_ns, 1000000000LL);
    ks_scheduler_opts so = {
        .cfg = o->cfg,
        .plans = o->plans,
        .seed = o->seed,
        .explain = o->explain,
        .binding_workers = 4, /* for pods a Permit plugin makes wait */
        .bind_inline = 1,
        .now_ns = sim_now,
        .clock_ctx = &s,
        .source = {&s, sim_bind, NULL, NULL, NULL},
        .observer = {&s, on_cycle_done, on_bind_done, on_preempted},
    };
    if ((rc = ks__scheduler_new(&so, &s.sched, err, errlen)) != 0)
        goto out;
    if ((rc = load(&s, err, errlen)) != 0)
        goto out;

    int64_t t0 = ks__clock_now_ns();
    ks_queue *q = ks__scheduler_queue(s.sched);
    /* A guard against plugins that keep a pod cycling (Pending forever): far beyond what
     * event-driven retries of a finite simulation need. */
    size_t limit = 100 + 20 * (stats->pending_pods + 1);
    size_t done = 0;
    for (;;) {
        if (ks__scheduler_schedule_one(s.sched, 0)) {
            ks__scheduler_wait_bindings_settled(s.sched);
            if (++done > limit) {
                ks__log('W', "simulate", "stopping after %zu attempts: pods keep being retried",
                        done);
                break;
            }
            continue;
        }
        ks__scheduler_wait_bindings(s.sched); /* a failed binding may requeue a pod */
        if (ks__scheduler_schedule_one(s.sched, 0)) {
            ks__scheduler_wait_bindings_settled(s.sched);
            done++;
            continue;
        }
        int64_t next = ks__queue_next_backoff_expiry(q);
        if (next < 0)
            break;
        /* Nothing runnable now: jump the virtual clock to the next backoff expiry. */
        long long now = atomic_load(&s.clock_ns);
        if (next > now)
            atomic_store(&s.clock_ns, next);
        ks__queue_flush_backoff(q);
    }
    ks__scheduler_wait_bindings(s.sched);
    stats->seconds = (double)(ks__clock_now_ns() - t0) / 1e9;
    ks__queue_each_parked(q, report_gated, &s);

    if (s.nrecs) /* no pods: recs is NULL, and qsort(NULL, 0, ...) is undefined */
        qsort(s.recs, s.nrecs, sizeof(record), cmp_rec);
    for (size_t i = 0; i < s.nrecs; i++) {
        if (strcmp(s.recs[i].result, "Scheduled") == 0)
            stats->scheduled++;
        else if (strcmp(s.recs[i].result, "Unschedulable") == 0)
            stats->unschedulable++;
        else if (s.recs[i].profile)
            stats->errors++;
    }
    if (o->output == KS_OUTPUT_JSON)
        print_json(&s, o->out);
    else if (o->output == KS_OUTPUT_TABLE)
        print_table(&s, o->out);
    print_skipped(&s);
out:
    ks__scheduler_free(s.sched);
    for (size_t i = 0; i < s.nrecs; i++) {
        free(s.recs[i].ns);
        free(s.recs[i].name);
        free(s.recs[i].profile);
        free(s.recs[i].message);
        cJSON_Delete(s.recs[i].explain);
        cJSON_Delete(s.recs[i].victims);
    }
    free(s.recs);
    pthread_mutex_destroy(&s.mu);
    return rc;
}
