/*
 * `kubesched simulate`; see simulate.h. The file source: objects from manifests, an in-memory
 * bind, a virtual queue clock (1 µs per reading, so pods of equal priority keep file order, and
 * jumps to the next backoff expiry when nothing else is runnable), and the report.
 */
#include "cli/simulate.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "sched/framework.h"
#include "sched/plugin_guard.h"
#include "api/intern.h"
#include "util/log.h"
#include "api/manifest.h"
#include "api/objects.h"
#include "sched/scheduler.h"
#include "sched/volume_events.h"
#include "api/store.h"
#include "api/custom_objects.h"
#include "api/podgroup_objects.h"
#include "api/dra_objects.h"
#include "util/strmap.h"

typedef struct record {
    uint64_t seq;
    char *ns, *name, *profile;
    const char *result; /* static string */
    ks_sym node;
    char *message;
    /* --explain: where this attempt's `,"filter":...` members lie in the spill file (ex_len 0:
     * none). Only the place is kept: the text itself would make memory grow with the attempts. */
    uint64_t ex_off;
    size_t ex_len;
    ks_sym nominated; /* PostFilter's nomination, KS_SYM_ABSENT when none */
    cJSON *victims;   /* [{"namespace","name","node"}] evicted for this attempt */
    cJSON *volumes;   /* [{"claim","persistentVolume"|"selectedNode"}] PreBind's writes */
    cJSON *claims;    /* [{"name","resourceClaim","allocation"}] the pod's ResourceClaims */
    /* {"resourceClaim","requestMappings","allocation"}: the claim DynamicResources made for the
     * pod's extended resources (status.extendedResourceClaimStatus and the claim's allocation) */
    cJSON *ext_claim;
} record;

/* Compact JSON text being built (an explanation): grown by doubling, reused across cycles so
 * that its size is that of the largest single explanation. */
typedef struct jbuf {
    char *p;
    size_t len, cap;
    int oom; /* an allocation failed: the text is incomplete and must not be used */
} jbuf;

/* The explanations of a run, as text, in an unlinked temporary file: they are complete when their
 * cycle ends but printed only after the last attempt (records are finalised later), and kept in
 * memory they made --explain grow with the number of pods. */
typedef struct spill {
    FILE *f;         /* NULL: no explanation is kept (no --explain, or not JSON output) */
    char path[4096]; /* for messages; unlinked at once, so nothing is left behind */
    uint64_t size;   /* bytes written */
    int werr;        /* errno of the first failed write, 0 when none */
} spill;

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
    spill spill; /* --explain with JSON output: the explanations, in the order of the cycles */
    jbuf exbuf;  /* the explanation being written (scheduling thread only; reused) */
    /* PreBind's storage writes (sim_patch_storage): one at a time, under write_mu; the last
     * resourceVersion given out; and what each pod's binding cycle wrote ({uid: [entries]},
     * guarded by mu), moved to its record when it is bound. */
    pthread_mutex_t write_mu;
    uint64_t last_rv;
    cJSON *volume_writes;
    /* Pod status patches (sim_patch_pod_status: extendedResourceClaimStatus), {uid: status},
     * guarded by mu, moved to the record when the pod is bound. */
    cJSON *pod_status;
    /* --max-attempts: attempts per pod uid (scheduling thread), and the pods whose last
     * attempt reached the cap and failed, to be taken out of the queue after the cycle. */
    ks_strmap attempts;
    struct capped_pod {
        char *uid, *key;
    } *capped;
    size_t ncapped, capped_cap;
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

/* ---- the in-memory storage writes (PreBind) ------------------------------------------------- */

/* ks__store_patch under write_mu, the change sent to the parked pods as an informer's event.
 * *old_out / *new_out: the object before and after, referenced for the caller. */
static ks_code sim_apply_patch(sim *s, ks_vol_kind kind, ks_sym ns, ks_sym name, const cJSON *patch,
                               char *rv, ks__volobj **old_out, ks__volobj **new_out, ks_status *st)
{
    char msg[1024];
    ks_store_change chg;
    *old_out = *new_out = NULL;
    if (ks__store_patch(ks__scheduler_store(s->sched), kind, ns, name, patch, &s->last_rv, rv, &chg,
                        msg, sizeof(msg)) != 0) {
        ks__status_add(st, msg);
        return KS_ERROR;
    }
    *old_out = ks__volobj_ref(chg.old_obj);
    *new_out = ks__volobj_ref(chg.new_obj);
    ks__scheduler_on_volume_change(s->sched, &chg, NULL);
    return KS_SUCCESS;
}

/* The PersistentVolume controller's answer to a PV that now names a claim (its syncVolume /
 * bindClaimToVolume), at once: the claim gets spec.volumeName, the bind-completed annotation
 * (and bound-by-controller when it did not name the volume itself), status Bound with the
 * volume's access modes and capacity; the volume's status.phase becomes Bound. Under write_mu. */
static void sim_complete_pv_binding(sim *s, const ks_pv *pv)
{
    const ks_pv_view *v = &pv->v;
    ks__volobj *co = ks__store_volobj_sym(ks__scheduler_store(s->sched), KS_VK_PVC,
                                          v->claim_namespace, v->claim_name);
    const ks_pvc *claim = (const ks_pvc *)co;
    if (!claim || (v->claim_uid[0] && strcmp(v->claim_uid, claim->v.uid) != 0) ||
        (claim->v.volume_name != KS_SYM_EMPTY && claim->v.volume_name != v->name)) {
        ks__volobj_unref(co);
        return; /* the controller would unbind or wait; nothing completes here */
    }
    cJSON *pvj = cJSON_Parse(v->json);
    cJSON *cp = cJSON_CreateObject();
    cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(cp, "metadata"), "annotations");
    cJSON_AddStringToObject(ann, "pv.kubernetes.io/bind-completed", "yes");
    if (claim->v.volume_name == KS_SYM_EMPTY)
        cJSON_AddStringToObject(ann, "pv.kubernetes.io/bound-by-controller", "yes");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cp, "spec"), "volumeName",
                            ks__sym_str(v->name));
    cJSON *cst = cJSON_AddObjectToObject(cp, "status");
    cJSON_AddStringToObject(cst, "phase", "Bound");
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pvj, "spec");
    const cJSON *modes = cJSON_GetObjectItemCaseSensitive(spec, "accessModes");
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(spec, "capacity");
    if (modes)
        cJSON_AddItemToObject(cst, "accessModes", cJSON_Duplicate(modes, 1));
    if (cap)
        cJSON_AddItemToObject(cst, "capacity", cJSON_Duplicate(cap, 1));
    cJSON_Delete(pvj);
    char rv[KS_RESOURCE_VERSION_MAX];
    ks_status st;
    ks__status_reset(&st);
    ks__volobj *old_o, *new_o;
    if (sim_apply_patch(s, KS_VK_PVC, claim->v.ns, claim->v.name, cp, rv, &old_o, &new_o, &st) ==
        KS_SUCCESS) {
        ks__volobj_unref(old_o);
        ks__volobj_unref(new_o);
    }
    cJSON_Delete(cp);
    if (v->phase == KS_SYM_ABSENT || strcmp(ks__sym_str(v->phase), "Bound") != 0) {
        cJSON *pp = cJSON_Parse("{\"status\":{\"phase\":\"Bound\"}}");
        ks__status_reset(&st);
        if (pp && sim_apply_patch(s, KS_VK_PV, KS_SYM_EMPTY, v->name, pp, rv, &old_o, &new_o,
                                  &st) == KS_SUCCESS) {
            ks__volobj_unref(old_o);
            ks__volobj_unref(new_o);
        }
        cJSON_Delete(pp);
    }
    ks__volobj_unref(co);
}

/* What the write did for the report: a PV that now names a claim of the pod's namespace, or a
 * claim that now names a selected node. NULL when neither. */
static cJSON *sim_write_entry(const ks__volobj *old_o, const ks__volobj *new_o)
{
    cJSON *e = NULL;
    if (new_o->kind == KS_VK_PV) {
        const ks_pv_view *a = &((const ks_pv *)old_o)->v, *b = &((const ks_pv *)new_o)->v;
        if (b->has_claim_ref && (!a->has_claim_ref || a->claim_name != b->claim_name ||
                                 a->claim_namespace != b->claim_namespace)) {
            e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "claim", ks__sym_str(b->claim_name));
            cJSON_AddStringToObject(e, "persistentVolume", ks__sym_str(b->name));
        }
    } else if (new_o->kind == KS_VK_PVC) {
        const ks_pvc_view *a = &((const ks_pvc *)old_o)->v, *b = &((const ks_pvc *)new_o)->v;
        ks_sym key = ks__intern("volume.kubernetes.io/selected-node");
        ks_sym was = ks_labels_get(a->annotations, a->nannotations, key);
        ks_sym now = ks_labels_get(b->annotations, b->nannotations, key);
        if (now != KS_SYM_ABSENT && now != was) {
            e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "claim", ks__sym_str(b->name));
            cJSON_AddStringToObject(e, "selectedNode", ks__sym_str(now));
        }
    }
    return e;
}

/* ks_source_ops.patch_storage of the in-memory cluster (KS_SOURCE_SIMULATED). Binding thread
 * (or the scheduling thread, binding inline). */
static ks_code sim_patch_storage(void *ctx, const ks_pod *pod, ks_vol_kind kind, ks_sym ns,
                                 ks_sym name, const char *patch, char *rv, ks_status *st)
{
    sim *s = ctx;
    cJSON *p = cJSON_Parse(patch);
    if (!cJSON_IsObject(p)) {
        cJSON_Delete(p);
        ks__status_add(st, "the storage patch is not a JSON object");
        return KS_ERROR;
    }
    pthread_mutex_lock(&s->write_mu);
    ks__volobj *old_o, *new_o;
    ks_code code = sim_apply_patch(s, kind, ns, name, p, rv, &old_o, &new_o, st);
    cJSON *entry = NULL;
    if (code == KS_SUCCESS && new_o) {
        entry = sim_write_entry(old_o, new_o);
        if (kind == KS_VK_PV && ((const ks_pv *)new_o)->v.has_claim_ref)
            sim_complete_pv_binding(s, (const ks_pv *)new_o);
    }
    pthread_mutex_unlock(&s->write_mu);
    ks__volobj_unref(old_o);
    ks__volobj_unref(new_o);
    cJSON_Delete(p);
    if (entry) {
        pthread_mutex_lock(&s->mu);
        cJSON *list = cJSON_GetObjectItemCaseSensitive(s->volume_writes, pod->uid);
        if (!list)
            list = cJSON_AddArrayToObject(s->volume_writes, pod->uid);
        if (!list || !cJSON_AddItemToArray(list, entry))
            cJSON_Delete(entry);
        pthread_mutex_unlock(&s->mu);
    }
    return code;
}

/* ks_source_ops.patch_pod_status of the in-memory cluster: the pod's status merge patch
 * (DynamicResources' extendedResourceClaimStatus) kept for its record. Binding thread. */
static ks_code sim_patch_pod_status(void *ctx, const ks_pod *pod, const char *patch, ks_status *st)
{
    sim *s = ctx;
    cJSON *p = cJSON_Parse(patch);
    cJSON *status = cJSON_DetachItemFromObjectCaseSensitive(p, "status");
    cJSON_Delete(p);
    if (!cJSON_IsObject(status)) {
        cJSON_Delete(status);
        ks__status_add(st, "the pod status patch has no status object");
        return KS_ERROR;
    }
    pthread_mutex_lock(&s->mu);
    cJSON_DeleteItemFromObjectCaseSensitive(s->pod_status, pod->uid);
    cJSON_AddItemToObject(s->pod_status, pod->uid, status);
    pthread_mutex_unlock(&s->mu);
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

/* ---- --explain as text --------------------------------------------------------------------- */

static int jb_reserve(jbuf *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void jb_raw(jbuf *b, const char *s, size_t n)
{
    if (jb_reserve(b, n) == 0) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

#define JB_LIT(b, lit) jb_raw((b), (lit), sizeof(lit) - 1)

/* A JSON string exactly as cJSON_PrintUnformatted writes it (the output was cJSON's): ", \ and
 * the control characters escaped, \u00xx in lower case for those without a short form, bytes from
 * 0x7f up as they are. */
static void jb_str(jbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(s ? s : "");
    if (jb_reserve(b, 2 + 6 * n) != 0) /* the worst case: every byte as \u00xx */
        return;
    char *o = b->p + b->len;
    *o++ = '"';
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c >= 32 && *c != '"' && *c != '\\') {
            *o++ = (char)*c;
            continue;
        }
        *o++ = '\\';
        switch (*c) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[*c >> 4];
            *o++ = hex[*c & 15];
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->p);
}

/* A number exactly as cJSON writes the double it was given: an int's digits, and beyond int
 * cJSON's own %g forms (its printer does that rare case, so the two cannot differ). */
static void jb_num(jbuf *b, int64_t v)
{
    char buf[64];
    if (v >= INT_MIN && v <= INT_MAX) {
        jb_raw(b, buf, (size_t)snprintf(buf, sizeof(buf), "%d", (int)v));
        return;
    }
    cJSON n;
    memset(&n, 0, sizeof(n));
    n.type = cJSON_Number;
    cJSON_SetNumberHelper(&n, (double)v);
    if (cJSON_PrintPreallocated(&n, buf, (int)sizeof(buf), 0))
        jb_raw(b, buf, strlen(buf));
    else
        b->oom = 1;
}

/* "key": as the start of a member; first is cleared, so the next member gets its comma. */
static void jb_key(jbuf *b, int *first, const char *key)
{
    if (!*first)
        JB_LIT(b, ",");
    *first = 0;
    jb_str(b, key);
    JB_LIT(b, ":");
}

static void jb_str_member(jbuf *b, int *first, const char *key, const char *val)
{
    jb_key(b, first, key);
    jb_str(b, val);
}

static void reasons_joined(const ks_status *st, char *out, size_t len)
{
    ks__status_message(st, out, len);
}

/* One evaluated node's filter verdicts: the plugins it passed, then the one that rejected it. */
static void write_filter_node(jbuf *b, const ks_explain *ex, size_t i)
{
    const ks_framework *fw = ex->fw;
    int first = 1;
    uint16_t passed = ex->passed[i], seen = 0;
    JB_LIT(b, "{");
    for (size_t p = 0; p < fw->n[KS_PT_FILTER] && seen < passed; p++) {
        if (ex->skip_filter & (1ull << fw->pt[KS_PT_FILTER][p].inst->index))
            continue;
        jb_str_member(b, &first, fw->pt[KS_PT_FILTER][p].inst->name, "passed");
        seen++;
    }
    if (ex->statuses[i].code != KS_SUCCESS) {
        char msg[KS_STATUS_BUF + 64];
        reasons_joined(&ex->statuses[i], msg, sizeof(msg));
        jb_str_member(b, &first, ex->statuses[i].plugin ? ex->statuses[i].plugin : "Filter", msg);
    }
    JB_LIT(b, "}");
}

/* One feasible node's normalized scores, per Score plugin that ran. */
static void write_score_node(jbuf *b, const ks_explain *ex, size_t f)
{
    const ks_framework *fw = ex->fw;
    int first = 1;
    JB_LIT(b, "{");
    for (size_t p = 0; p < fw->n[KS_PT_SCORE]; p++) {
        if (ex->skip_score & (1ull << p))
            continue;
        jb_key(b, &first, fw->pt[KS_PT_SCORE][p].inst->name);
        jb_num(b, ex->scores[p * ex->nfeasible + f]);
    }
    JB_LIT(b, "}");
}

static void write_filter(jbuf *b, const ks_explain *ex)
{
    int first = 1;
    JB_LIT(b, ",\"filter\":{");
    for (size_t i = 0; !ex->prefilter_status && i < ex->nevaluated; i++) {
        jb_key(b, &first, ks__sym_str(ex->evaluated[i]->name));
        write_filter_node(b, ex, i);
    }
    JB_LIT(b, "}");
}

static void write_scores(jbuf *b, const ks_explain *ex)
{
    int scored = ex->scored && !ex->prefilter_status, first = 1;
    JB_LIT(b, ",\"score\":{");
    for (size_t f = 0; scored && f < ex->nfeasible; f++) {
        jb_key(b, &first, ks__sym_str(ex->feasible[f]->name));
        write_score_node(b, ex, f);
    }
    JB_LIT(b, "},\"finalScore\":{");
    first = 1;
    for (size_t f = 0; scored && f < ex->nfeasible; f++) {
        jb_key(b, &first, ks__sym_str(ex->feasible[f]->name));
        jb_num(b, ex->totals[f]);
    }
    JB_LIT(b, "}");
}

/* The explanation as the members that end the attempt's JSON object, written straight as
 * text: `,"filter":{...},"score":{...},"finalScore":{...}` and, when PreFilter rejected the pod
 * (no node was evaluated), `,"preFilter":{"Plugin":"reasons"}` after the three empty maps. This is
 * byte for byte what building the cJSON tree and printing it gave, without the tree: a node per
 * plugin verdict was most of --explain's time. */
static void write_explain(jbuf *b, const ks_explain *ex)
{
    write_filter(b, ex);
    write_scores(b, ex);
    if (ex->prefilter_status) {
        char msg[KS_STATUS_BUF + 64];
        int first = 1;
        reasons_joined(ex->prefilter_status, msg, sizeof(msg));
        JB_LIT(b, ",\"preFilter\":{");
        jb_str_member(b, &first,
                      ex->prefilter_status->plugin ? ex->prefilter_status->plugin : "PreFilter",
                      msg);
        JB_LIT(b, "}");
    }
}

/* ---- the spill file ------------------------------------------------------------------------ */

/* Creates the unlinked temporary file under $TMPDIR (or /tmp). */
static int spill_open(spill *sp, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(sp->path, sizeof(sp->path), "%s/kubesched-explain-XXXXXX", dir);
    int fd = mkstemp(sp->path);
    if (fd < 0 || !(sp->f = fdopen(fd, "w+b"))) {
        int e = errno;
        if (fd >= 0) {
            unlink(sp->path);
            close(fd);
        } else /* mkstemp leaves its last try in the name: say what was asked */
            snprintf(sp->path, sizeof(sp->path), "%s/kubesched-explain-XXXXXX", dir);
        snprintf(err, errlen,
                 "--explain: cannot create the temporary file %s for the explanations: %s (set "
                 "TMPDIR to a writable directory)",
                 sp->path, strerror(e));
        return KS_ERROR;
    }
    unlink(sp->path);
    return 0;
}

/* Appends text; returns where it starts. A failed write is remembered and reported before the
 * output, which would otherwise miss explanations. */
static uint64_t spill_write(spill *sp, const char *text, size_t len)
{
    uint64_t off = sp->size;
    if (!sp->werr && fwrite(text, 1, len, sp->f) != len)
        sp->werr = errno ? errno : EIO;
    sp->size += len;
    return off;
}

/* Makes what was written readable; nonzero (with the message) when some of it was lost. */
static int spill_finish(spill *sp, char *err, size_t errlen)
{
    if (!sp->werr && fflush(sp->f) != 0)
        sp->werr = errno ? errno : EIO;
    if (sp->werr)
        snprintf(err, errlen, "--explain: cannot write the temporary file %s (deleted): %s",
                 sp->path, strerror(sp->werr));
    return sp->werr ? KS_ERROR : 0;
}

/* Copies [off, off + len) of the spill file to out. */
static int spill_copy(spill *sp, uint64_t off, size_t len, FILE *out, char *err, size_t errlen)
{
    char buf[65536];
    int fd = fileno(sp->f);
    while (len > 0) {
        size_t want = len < sizeof(buf) ? len : sizeof(buf);
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got <= 0) {
            snprintf(err, errlen, "--explain: cannot read the temporary file %s (deleted): %s",
                     sp->path, got < 0 ? strerror(errno) : "unexpected end of file");
            return KS_ERROR;
        }
        fwrite(buf, 1, (size_t)got, out);
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

static void spill_close(spill *sp)
{
    if (sp->f)
        fclose(sp->f);
    sp->f = NULL;
}

/* The attempt's explanation into the spill file; its place in *off and *len (0: none). */
static void spill_explain(sim *s, const ks_explain *ex, uint64_t *off, size_t *len)
{
    *off = 0;
    *len = 0;
    if (!ex || !s->spill.f)
        return;
    s->exbuf.len = 0;
    s->exbuf.oom = 0;
    write_explain(&s->exbuf, ex);
    if (s->exbuf.oom) {
        /* Printed without it, as a tree that could not be built was before. */
        ks__log('W', "simulate", "--explain: out of memory: an attempt is reported unexplained");
        return;
    }
    *off = spill_write(&s->spill, s->exbuf.p, s->exbuf.len);
    *len = s->exbuf.len;
}

/* --max-attempts: the attempts of pod so far (on_cycle_done counts them). When an attempt fails,
 * in its scheduling cycle or later in its binding cycle (a Permit timeout, a rejection), and the
 * pod has had its share, it is noted to leave the queue once the cycle is over. Under s->mu (the
 * binding threads report failures too). */
static void count_attempt(sim *s, const ks_pod *pod)
{
    uintptr_t n = (uintptr_t)ks__strmap_get(&s->attempts, pod->uid) + 1;
    ks__strmap_put(&s->attempts, pod->uid, (void *)n, NULL);
}

static void cap_if_exhausted(sim *s, const ks_pod *pod)
{
    uintptr_t n = (uintptr_t)ks__strmap_get(&s->attempts, pod->uid);
    int max = s->o->max_attempts > 0 ? s->o->max_attempts : KS_SIM_MAX_ATTEMPTS;
    if (n < (uintptr_t)max)
        return;
    if (s->ncapped == s->capped_cap) {
        size_t cap = s->capped_cap ? s->capped_cap * 2 : 8;
        struct capped_pod *c = realloc(s->capped, cap * sizeof(*c));
        if (!c)
            return;
        s->capped = c;
        s->capped_cap = cap;
    }
    struct capped_pod *c = &s->capped[s->ncapped];
    c->uid = strdup(pod->uid);
    c->key = strdup(pod->key);
    if (c->uid && c->key) {
        s->ncapped++;
    } else {
        free(c->uid);
        free(c->key);
    }
}

/* The pods that reached --max-attempts leave the queue: they stay pending, and the line says
 * so (a pod bound meanwhile, or already gone, is no longer there to take out). */
static void drop_capped(sim *s)
{
    int max = s->o->max_attempts > 0 ? s->o->max_attempts : KS_SIM_MAX_ATTEMPTS;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ncapped; i++) {
        if (ks__queue_delete(ks__scheduler_queue(s->sched), s->capped[i].uid) == 0) {
            s->stats->capped++;
            ks__log('W', "simulate",
                    "pod %s: %d scheduling attempts, the most --max-attempts allows: it is not "
                    "retried and stays pending",
                    s->capped[i].key, max);
        }
        free(s->capped[i].uid);
        free(s->capped[i].key);
    }
    s->ncapped = 0;
    pthread_mutex_unlock(&s->mu);
}

static void on_cycle_done(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                          const char *result, ks_sym node, const char *message,
                          const ks_explain *ex)
{
    sim *s = ctx;
    uint64_t ex_off;
    size_t ex_len;
    /* Outside the lock: only this (the scheduling) thread writes explanations. */
    spill_explain(s, ex, &ex_off, &ex_len);
    pthread_mutex_lock(&s->mu);
    record *r = rec_new(s, seq);
    if (r) {
        r->ns = strdup(ks__sym_str(pod->ns));
        r->name = strdup(ks__sym_str(pod->name));
        r->profile = strdup(profile);
        r->result = result ? result : "Binding";
        r->node = result ? KS_SYM_ABSENT : node;
        r->message = dup_or_null(message);
        r->ex_off = ex_off;
        r->ex_len = ex_len;
    }
    s->stats->attempts++;
    count_attempt(s, pod);
    if (result) /* it failed; a pod handed to its binding cycle is judged when that ends */
        cap_if_exhausted(s, pod);
    pthread_mutex_unlock(&s->mu);
}

/* The bound pod's ResourceClaims as the in-memory cluster has them now (DynamicResources' PreBind
 * wrote their allocation): [{"name": the pod's entry, "resourceClaim": the claim,
 * "allocation": its status.allocation}]; NULL for a pod without claims. */
static cJSON *claims_of(sim *s, const ks_pod *pod)
{
    if (!pod->nresource_claims)
        return NULL;
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list && i < pod->nresource_claims; i++) {
        const ks_pod_resource_claim *pc = &pod->resource_claims[i];
        const char *name =
            pc->resource_claim_name ? pc->resource_claim_name : pc->status_claim_name;
        if (!name)
            continue;
        char key[600];
        snprintf(key, sizeof(key), "%s/%s", ks__sym_str(pod->ns), name);
        ks__draobj *o = ks__store_draobj(ks__scheduler_store(s->sched), KS_DK_RESOURCE_CLAIM, key);
        cJSON *e = cJSON_CreateObject(), *obj = o ? cJSON_Parse(o->json) : NULL;
        cJSON_AddStringToObject(e, "name", pc->name);
        cJSON_AddStringToObject(e, "resourceClaim", name);
        cJSON *alloc = cJSON_DetachItemFromObjectCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "status"), "allocation");
        cJSON_AddItemToObject(e, "allocation", alloc ? alloc : cJSON_CreateNull());
        cJSON_AddItemToArray(list, e);
        cJSON_Delete(obj);
        ks__draobj_unref(o);
    }
    return list;
}

/* The bound pod's claim for extended resources: {"resourceClaim", "requestMappings" (its
 * status.extendedResourceClaimStatus), "allocation"}; NULL when PreBind wrote none. */
static cJSON *ext_claim_of(sim *s, const ks_pod *pod, cJSON *status)
{
    cJSON *ers = cJSON_GetObjectItemCaseSensitive(status, "extendedResourceClaimStatus");
    const char *name =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ers, "resourceClaimName"));
    if (!name)
        return NULL;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ks__sym_str(pod->ns), name);
    ks__draobj *o = ks__store_draobj(ks__scheduler_store(s->sched), KS_DK_RESOURCE_CLAIM, key);
    cJSON *e = cJSON_CreateObject(), *obj = o ? cJSON_Parse(o->json) : NULL;
    cJSON_AddStringToObject(e, "resourceClaim", name);
    cJSON *maps = cJSON_DetachItemFromObjectCaseSensitive(ers, "requestMappings");
    cJSON_AddItemToObject(e, "requestMappings", maps ? maps : cJSON_CreateArray());
    cJSON *alloc = cJSON_DetachItemFromObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "status"), "allocation");
    cJSON_AddItemToObject(e, "allocation", alloc ? alloc : cJSON_CreateNull());
    cJSON_Delete(obj);
    ks__draobj_unref(o);
    return e;
}

static void on_bind_done(void *ctx, uint64_t seq, const ks_pod *pod, const char *profile,
                         const char *result, ks_sym node, const char *message)
{
    sim *s = ctx;
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
    if (strcmp(result, "Scheduled") != 0)
        cap_if_exhausted(s, pod);
    /* What PreBind wrote belongs to the attempt that bound the pod; a failed attempt's writes
     * are superseded by the next one's. */
    cJSON *writes = cJSON_DetachItemFromObjectCaseSensitive(s->volume_writes, pod->uid);
    cJSON *status = cJSON_DetachItemFromObjectCaseSensitive(s->pod_status, pod->uid);
    if (r && strcmp(result, "Scheduled") == 0) {
        cJSON_Delete(r->volumes);
        r->volumes = writes;
        cJSON_Delete(r->claims);
        r->claims = claims_of(s, pod);
        cJSON_Delete(r->ext_claim);
        r->ext_claim = ext_claim_of(s, pod, status);
    } else {
        cJSON_Delete(writes);
    }
    cJSON_Delete(status);
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

/* A PodGroup member nominated by its group's preemption that another member reported. */
static void on_nominated(void *ctx, uint64_t seq, const ks_pod *pod, ks_sym node)
{
    sim *s = ctx;
    (void)pod;
    pthread_mutex_lock(&s->mu);
    record *r = rec_for(s, seq);
    if (r)
        r->nominated = node;
    pthread_mutex_unlock(&s->mu);
}

static int cmp_rec(const void *a, const void *b)
{
    const record *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- output -------------------------------------------------------------------------------- */

/* The attempt's members as cJSON prints them, but the explanation (which was kept as text). */
static cJSON *rec_json(record *r)
{
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
    if (r->volumes) {
        cJSON_AddItemToObject(o, "volumes", r->volumes);
        r->volumes = NULL;
    }
    if (r->claims) {
        cJSON_AddItemToObject(o, "claims", r->claims);
        r->claims = NULL;
    }
    if (r->ext_claim) {
        cJSON_AddItemToObject(o, "extendedResourceClaim", r->ext_claim);
        r->ext_claim = NULL;
    }
    return o;
}

/* One attempt per line. Its explanation members end the object, so they are copied from the
 * spill file in place of the closing brace. */
static int print_json(sim *s, FILE *out, char *err, size_t errlen)
{
    if (s->spill.f && spill_finish(&s->spill, err, errlen) != 0)
        return KS_ERROR;
    fputs("{\"pods\": [", out);
    for (size_t i = 0; i < s->nrecs; i++) {
        record *r = &s->recs[i];
        cJSON *o = rec_json(r);
        char *text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        fputs(i ? ",\n  " : "\n  ", out);
        if (!text) {
            fputs("{}", out);
            continue;
        }
        size_t n = strlen(text);
        if (r->ex_len) {
            fwrite(text, 1, n - 1, out); /* without the closing brace */
            if (spill_copy(&s->spill, r->ex_off, r->ex_len, out, err, errlen) != 0) {
                free(text);
                return KS_ERROR;
            }
            fputc('}', out);
        } else
            fwrite(text, 1, n, out);
        free(text);
    }
    fputs("\n]}\n", out);
    return 0;
}

/* The table's column widths: the longest pod, profile and node names (at least the headers'). Only
 * strlen: the crash flush calls it from a signal handler too. */
static void table_widths(const sim *s, size_t *w_pod, size_t *w_prof, size_t *w_node)
{
    *w_pod = 3, *w_prof = 7, *w_node = 4;
    for (size_t i = 0; i < s->nrecs; i++) {
        const record *r = &s->recs[i];
        size_t l = strlen(r->ns ? r->ns : "") + 1 + strlen(r->name ? r->name : "");
        if (l > *w_pod)
            *w_pod = l;
        if (r->profile && strlen(r->profile) > *w_prof)
            *w_prof = strlen(r->profile);
        if (r->node != KS_SYM_ABSENT && strlen(ks__sym_str(r->node)) > *w_node)
            *w_node = strlen(ks__sym_str(r->node));
    }
}

/* --explain in the table: the attempt's explanation (its JSON members in the spill file) as
 * indented lines under it, one per evaluated node in the order the scheduler tried them:
 *     b       score 277 (TaintToleration 100, NodeResourcesFit 97, ...)   <- chosen
 *     t       rejected by TaintToleration: node(s) had untolerated taint(s)
 * or, when PreFilter refused the pod, the plugin and its reason. */
static void print_explanation(sim *s, const record *r, size_t w_pod, FILE *out)
{
    char *text = malloc(r->ex_len + 3);
    ssize_t got = text ? pread(fileno(s->spill.f), text + 1, r->ex_len, (off_t)r->ex_off) : -1;
    cJSON *ex = NULL;
    if (got == (ssize_t)r->ex_len) { /* the members start with ',': make them an object */
        text[0] = '{';
        text[1] = ' ';
        text[r->ex_len + 1] = '}';
        text[r->ex_len + 2] = '\0';
        ex = cJSON_Parse(text);
    }
    free(text);
    if (!ex) {
        fprintf(out, "    (explanation unavailable)\n");
        return;
    }
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(ex, "preFilter"), *it;
    cJSON_ArrayForEach(it, pre)
    {
        fprintf(out, "    %-*s  rejected by %s: %s\n", (int)w_pod, "(PreFilter)", it->string,
                cJSON_GetStringValue(it));
    }
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(ex, "score");
    const cJSON *final = cJSON_GetObjectItemCaseSensitive(ex, "finalScore");
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ex, "filter"))
    {
        const cJSON *last = it->child;
        while (last && last->next)
            last = last->next;
        const char *verdict = last ? cJSON_GetStringValue(last) : NULL;
        fprintf(out, "    %-*s  ", (int)w_pod, it->string);
        if (verdict && strcmp(verdict, "passed") != 0) {
            fprintf(out, "rejected by %s: %s\n", last->string, verdict);
            continue;
        }
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(final, it->string), *p;
        if (!cJSON_IsNumber(total)) {
            fprintf(out, "passed every filter\n");
            continue;
        }
        fprintf(out, "score %.0f (", total->valuedouble);
        const char *sep = "";
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(score, it->string))
        {
            fprintf(out, "%s%s %.0f", sep, p->string, p->valuedouble);
            sep = ", ";
        }
        int chosen = r->node != KS_SYM_ABSENT && !strcmp(ks__sym_str(r->node), it->string);
        fprintf(out, ")%s\n", chosen ? "  <- chosen" : "");
    }
    cJSON_Delete(ex);
}

static void print_table(sim *s, FILE *out)
{
    size_t w_pod, w_prof, w_node;
    table_widths(s, &w_pod, &w_prof, &w_node);
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
        if (r->volumes) { /* " [volumes: data -> pv-1, cache -> selected node node-b]" */
            size_t off = strlen(extra);
            const char *sep = " [volumes: ";
            const cJSON *v;
            cJSON_ArrayForEach(v, r->volumes)
            {
                const char *claim = cJSON_GetStringValue(cJSON_GetObjectItem(v, "claim"));
                const char *pv = cJSON_GetStringValue(cJSON_GetObjectItem(v, "persistentVolume"));
                const char *sel = cJSON_GetStringValue(cJSON_GetObjectItem(v, "selectedNode"));
                if (off < sizeof(extra))
                    off += (size_t)snprintf(extra + off, sizeof(extra) - off, "%s%s -> %s%s", sep,
                                            claim ? claim : "", pv ? "" : "selected node ",
                                            pv    ? pv
                                            : sel ? sel
                                                  : "");
                sep = ", ";
            }
            if (off < sizeof(extra))
                snprintf(extra + off, sizeof(extra) - off, "]");
        }
        if (r->claims) { /* " [claims: gpu -> gpu.example.com/pool/device, ...]" */
            size_t off = strlen(extra);
            const char *sep = " [claims: ";
            const cJSON *c, *d;
            cJSON_ArrayForEach(c, r->claims)
            {
                const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
                const cJSON *res = cJSON_GetObjectItem(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(c, "allocation"), "devices"),
                    "results");
                if (off < sizeof(extra))
                    off += (size_t)snprintf(extra + off, sizeof(extra) - off, "%s%s ->", sep,
                                            name ? name : "");
                cJSON_ArrayForEach(d, res)
                {
                    const char *dr = cJSON_GetStringValue(cJSON_GetObjectItem(d, "driver"));
                    const char *pl = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pool"));
                    const char *dv = cJSON_GetStringValue(cJSON_GetObjectItem(d, "device"));
                    if (off < sizeof(extra))
                        off += (size_t)snprintf(extra + off, sizeof(extra) - off, " %s/%s/%s",
                                                dr ? dr : "", pl ? pl : "", dv ? dv : "");
                }
                sep = ", ";
            }
            if (off < sizeof(extra))
                snprintf(extra + off, sizeof(extra) - off, "]");
        }
        if (r->ext_claim) { /* " [extended resources: claim -> driver/pool/device, ...]" */
            size_t off = strlen(extra);
            const char *name =
                cJSON_GetStringValue(cJSON_GetObjectItem(r->ext_claim, "resourceClaim"));
            const cJSON *d,
                *res = cJSON_GetObjectItem(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(r->ext_claim, "allocation"), "devices"),
                    "results");
            if (off < sizeof(extra))
                off += (size_t)snprintf(extra + off, sizeof(extra) - off,
                                        " [extended resources: %s ->", name ? name : "");
            cJSON_ArrayForEach(d, res)
            {
                const char *dr = cJSON_GetStringValue(cJSON_GetObjectItem(d, "driver"));
                const char *pl = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pool"));
                const char *dv = cJSON_GetStringValue(cJSON_GetObjectItem(d, "device"));
                if (off < sizeof(extra))
                    off += (size_t)snprintf(extra + off, sizeof(extra) - off, " %s/%s/%s",
                                            dr ? dr : "", pl ? pl : "", dv ? dv : "");
            }
            if (off < sizeof(extra))
                snprintf(extra + off, sizeof(extra) - off, "]");
        }
        fprintf(out, "%-*s  %-*s  %-13s  %-*s  %s%s\n", (int)w_pod, pod, (int)w_prof,
                r->profile ? r->profile : "-", r->result, (int)w_node,
                scheduled ? ks__sym_str(r->node) : "-", r->message ? r->message : "", extra);
        if (r->ex_len && s->spill.f)
            print_explanation(s, r, w_pod, out);
    }
    fprintf(out, "\n%zu attempts: %zu scheduled, %zu unschedulable, %zu errors", s->stats->attempts,
            s->stats->scheduled, s->stats->unschedulable, s->stats->errors);
    if (s->stats->unhandled)
        fprintf(out, ", %zu pods with no matching profile", s->stats->unhandled);
    fputc('\n', out);
}

/* ---- flushing before a fatal plugin fault ------------------------------------------------- */

/* The decisions recorded so far, written when a plugin crashes (from the signal handler) or runs
 * past its deadline (from the watchdog thread), then the process ends. Async-signal-safe as far as
 * it goes: write(2) only, no allocation, no stdio; the records are read under s->mu taken with
 * trylock (a binding thread may hold it for an instant; after 200ms of trying they are read
 * without it: best effort). What is left out: --explain's members, nominatedNode/victims and
 * PreBind's volumes (their text is built with allocations), the end-of-run counts. The JSON
 * document stays valid and ends with kubesched's own "aborted" member. */
static void flush_pad(int fd, const char *s, size_t width)
{
    static const char spaces[] = "                                                                ";
    size_t n = strlen(s);
    ks__guard_write(fd, s, n);
    while (n < width) {
        size_t k = width - n < sizeof(spaces) - 1 ? width - n : sizeof(spaces) - 1;
        ks__guard_write(fd, spaces, k);
        n += k;
    }
}

static void flush_member(int fd, const char *key, const char *val, int *first)
{
    ks__guard_write_str(fd, *first ? "" : ", ");
    *first = 0;
    ks__guard_write_json_str(fd, key);
    ks__guard_write_str(fd, ": ");
    if (val)
        ks__guard_write_json_str(fd, val);
    else
        ks__guard_write_str(fd, "null");
}

static void flush_json(const sim *s, int fd, const ks_guard_report *g)
{
    ks__guard_write_str(fd, "{\"pods\": [");
    for (size_t i = 0; i < s->nrecs; i++) {
        const record *r = &s->recs[i];
        int first = 1;
        ks__guard_write_str(fd, i ? ",\n  {" : "\n  {");
        flush_member(fd, "namespace", r->ns ? r->ns : "", &first);
        flush_member(fd, "name", r->name ? r->name : "", &first);
        flush_member(fd, "profile", r->profile, &first);
        flush_member(fd, "result", r->result, &first);
        flush_member(fd, "node",
                     r->node != KS_SYM_ABSENT && strcmp(r->result, "Scheduled") == 0
                         ? ks__sym_str(r->node)
                         : NULL,
                     &first);
        flush_member(fd, "message", r->message ? r->message : "", &first);
        ks__guard_write_str(fd, "}");
    }
    ks__guard_write_str(fd, "\n], \"aborted\": {");
    int first = 1;
    flush_member(fd, "reason", g->sig ? "signal" : "deadline", &first);
    if (g->sig)
        flush_member(fd, "signal", g->signame, &first);
    flush_member(fd, "plugin", g->plugin, &first);
    flush_member(fd, "pluginPath", g->plugin ? g->origin : NULL, &first);
    flush_member(fd, "point", g->point, &first);
    char pod[512] = "";
    if (g->pod_name && strlen(g->pod_ns) + strlen(g->pod_name) + 2 <= sizeof(pod)) {
        strcpy(pod, g->pod_ns);
        strcat(pod, "/");
        strcat(pod, g->pod_name);
    }
    flush_member(fd, "pod", pod[0] ? pod : NULL, &first);
    flush_member(fd, "node", g->node, &first);
    if (!g->sig) {
        ks__guard_write_str(fd, ", \"elapsedMilliseconds\": ");
        ks__guard_write_int(fd, g->elapsed_ms);
    }
    ks__guard_write_str(fd, "}}\n");
}

static void flush_table(const sim *s, int fd, const ks_guard_report *g)
{
    size_t w_pod, w_prof, w_node;
    table_widths(s, &w_pod, &w_prof, &w_node);
    flush_pad(fd, "POD", w_pod + 2);
    flush_pad(fd, "PROFILE", w_prof + 2);
    flush_pad(fd, "RESULT", 15);
    flush_pad(fd, "NODE", w_node + 2);
    ks__guard_write_str(fd, "MESSAGE\n");
    for (size_t i = 0; i < s->nrecs; i++) {
        const record *r = &s->recs[i];
        char pod[512];
        size_t nl = strlen(r->ns ? r->ns : ""), ml = strlen(r->name ? r->name : "");
        if (nl + ml + 2 > sizeof(pod))
            nl = ml = 0; /* cannot happen with Kubernetes names (253 + 253) */
        memcpy(pod, r->ns ? r->ns : "", nl);
        pod[nl] = '/';
        memcpy(pod + nl + 1, r->name ? r->name : "", ml);
        pod[nl + 1 + ml] = '\0';
        flush_pad(fd, pod, w_pod + 2);
        flush_pad(fd, r->profile ? r->profile : "-", w_prof + 2);
        flush_pad(fd, r->result, 15);
        int scheduled = strcmp(r->result, "Scheduled") == 0;
        flush_pad(fd, scheduled && r->node != KS_SYM_ABSENT ? ks__sym_str(r->node) : "-",
                  w_node + 2);
        ks__guard_write_str(fd, r->message ? r->message : "");
        ks__guard_write_str(fd, "\n");
    }
    ks__guard_write_str(fd, "\naborted after ");
    ks__guard_write_int(fd, (long long)s->nrecs);
    ks__guard_write_str(fd, g->sig ? " attempts: " : " attempts: deadline exceeded in ");
    if (g->sig) {
        ks__guard_write_str(fd, g->signame);
        ks__guard_write_str(fd, " in ");
    }
    if (g->plugin) {
        ks__guard_write_str(fd, "plugin ");
        ks__guard_write_str(fd, g->plugin);
        ks__guard_write_str(fd, " at ");
        ks__guard_write_str(fd, g->point);
        if (g->pod_name) {
            ks__guard_write_str(fd, ", pod ");
            ks__guard_write_str(fd, g->pod_ns);
            ks__guard_write_str(fd, "/");
            ks__guard_write_str(fd, g->pod_name);
        }
        if (g->node) {
            ks__guard_write_str(fd, ", node ");
            ks__guard_write_str(fd, g->node);
        }
    } else {
        ks__guard_write_str(fd, "kubesched itself");
    }
    ks__guard_write_str(fd, " (see stderr)\n");
}

static void on_fatal(void *ctx, const ks_guard_report *g)
{
    sim *s = ctx;
    int locked = 0;
    if (!s) /* the hook was being cleared as the run ended */
        return;
    for (int i = 0; i < 200 && !locked; i++) {
        locked = pthread_mutex_trylock(&s->mu) == 0;
        if (!locked) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    int fd = fileno(s->o->out);
    if (fd >= 0 && s->o->output == KS_OUTPUT_JSON)
        flush_json(s, fd, g);
    else if (fd >= 0 && s->o->output == KS_OUTPUT_TABLE)
        flush_table(s, fd, g);
    if (locked)
        pthread_mutex_unlock(&s->mu);
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

/* "ns/name" or "name" of an object, for messages. */
static const char *obj_name(const cJSON *obj, char *buf, size_t len)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    snprintf(buf, len, "%s%s%s", cJSON_IsString(ns) ? ns->valuestring : "",
             cJSON_IsString(ns) ? "/" : "", cJSON_IsString(name) ? name->valuestring : "");
    return buf;
}

/* An object the readers refused: at the position of the field its message starts with
 * ("spec.containers[0].ports[0].hostPort: Invalid value: ..."), found by reading its document
 * again, like the problems the manifest reader reports; else at its document's line. */
static void object_error(const sim *s, const ks_manifest_obj *mo, const char *kind, const char *msg,
                         char *err, size_t errlen)
{
    char name[256], field[512];
    size_t line, col, n = strcspn(msg, ":");
    obj_name(mo->obj, name, sizeof(name));
    snprintf(field, sizeof(field), "%.*s", (int)n, msg);
    if (msg[n] == ':' && !strchr(field, ' ') &&
        ks__manifest_locate(s->o->cluster_path, mo, field, &line, &col) == 0)
        snprintf(err, errlen, "%s:%zu:%zu: error: %s %s: %s", s->o->cluster_path, line, col, kind,
                 name, msg);
    else
        snprintf(err, errlen, "%s (%s): %s %s: %s", s->o->cluster_path, mo->where, kind, name, msg);
}

static int load_node(sim *s, const ks_manifest_obj *mo, char *err, size_t errlen)
{
    char perr[400];
    ks_node *node;
    int rc = ks__node_from_json_checked(mo->obj, &node, perr, sizeof(perr));
    if (rc) {
        object_error(s, mo, "Node", perr, err, errlen);
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
    int rc = ks__pod_from_json_checked(mo->obj, &pod, perr, sizeof(perr));
    if (rc) {
        object_error(s, mo, "Pod", perr, err, errlen);
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

/* A storage object without metadata.uid gets "namespace/name" (or "name"), as a manifest's pod
 * does: the API server gives every object one, and VolumeBinding's claimRef names the claim by
 * it (a claimRef without a uid reads as reset). */
static void give_uid(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(meta, "uid");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
    if (!cJSON_IsObject(meta) || (cJSON_IsString(uid) && *uid->valuestring) ||
        !cJSON_IsString(name))
        return;
    char buf[600];
    if (cJSON_IsString(ns) && *ns->valuestring)
        snprintf(buf, sizeof(buf), "%s/%s", ns->valuestring, name->valuestring);
    else
        snprintf(buf, sizeof(buf), "%s", name->valuestring);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
    cJSON_AddStringToObject(meta, "uid", buf);
}

static int load_other(sim *s, const ks_manifest_obj *mo, const char *kind, char *err, size_t errlen)
{
    char perr[400];
    const cJSON *av = cJSON_GetObjectItemCaseSensitive(mo->obj, "apiVersion");
    const struct ks_resource *res =
        cJSON_IsString(av) ? ks__custom_find(av->valuestring, kind) : NULL;
    if (res) { /* a resource a plugin watches (ks_resource_watch), e.g. a PodGroup */
        int rc = ks__scheduler_apply_custom(s->sched, res, mo->obj, 0, NULL, perr, sizeof(perr));
        if (rc)
            snprintf(err, errlen, "%s (%s): %s: %s", s->o->cluster_path, mo->where, kind, perr);
        return rc;
    }
    if (ks__podgroup_is(mo->obj) && ks__scheduler_generic_workload(s->sched)) {
        /* upstream's PodGroup (GenericWorkload): read as the API server would accept it, each
         * an Add event; without the gate the API server serves none, so it counts as unread */
        give_uid((cJSON *)mo->obj);
        int rc = ks__scheduler_apply_podgroup(s->sched, mo->obj, 0, 1, NULL, perr, sizeof(perr));
        if (rc)
            object_error(s, mo, kind, perr, err, errlen);
        return rc;
    }
    if (!ks__store_wants(kind)) {
        tally_unread(s, kind);
        return 0;
    }
    /* Namespaces, Services, ReplicaSets, PDBs, ...: what the plugins read. The storage kinds
     * (PersistentVolumes, claims, StorageClasses, CSI objects) are read as a cluster file's,
     * with the API server's defaults and rules (volume_objects.h), and a refusal points at its
     * field. So are the DRA kinds (ResourceSlices, DeviceClasses, claims, DeviceTaintRules,
     * dra_objects.h). */
    int objkind = ks__volobj_kind(kind) >= 0 || ks__draobj_kind(kind) >= 0;
    if (objkind)
        give_uid((cJSON *)mo->obj);
    int rc =
        ks__store_apply_ex(ks__scheduler_store(s->sched), mo->obj, 0, 1, NULL, perr, sizeof(perr));
    if (rc && objkind)
        object_error(s, mo, kind, perr, err, errlen);
    else if (rc)
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
    if (st->warnings > KS_MANIFEST_MAX_REPORTED)
        fprintf(w, "; only the first %d problems were printed", KS_MANIFEST_MAX_REPORTED);
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
    pthread_mutex_init(&s.write_mu, NULL);
    if (!(s.volume_writes = cJSON_CreateObject()) || !(s.pod_status = cJSON_CreateObject())) {
        snprintf(err, errlen, "out of memory");
        rc = KS_ENOMEM;
        goto out;
    }
    atomic_init(&s.clock_ns, 1000000000LL);
    ks__strmap_init(&s.attempts);
    /* The table shows no explanation: only JSON output keeps them. */
    if (o->explain && o->output != KS_OUTPUT_NONE && (rc = spill_open(&s.spill, err, errlen)) != 0)
        goto out;
    ks_scheduler_opts so = {
        .cfg = o->cfg,
        .plans = o->plans,
        .seed = o->seed,
        .explain = o->explain,
        .binding_workers = 1, /* pods a Permit plugin made wait, in the order released */
        .bind_inline = 1,
        .now_ns = sim_now,
        .clock_ctx = &s,
        .source = {.ctx = &s,
                   .bind = sim_bind,
                   .patch_storage = sim_patch_storage,
                   .flags = KS_SOURCE_SIMULATED,
                   .patch_pod_status = sim_patch_pod_status},
        .observer = {&s, on_cycle_done, on_bind_done, on_preempted, on_nominated},
    };
    if ((rc = ks__scheduler_new(&so, &s.sched, err, errlen)) != 0)
        goto out;
    if ((rc = load(&s, err, errlen)) != 0)
        goto out;
    /* From here until the report is printed, a crash or a hung plugin call flushes the records. */
    ks__guard_set_fatal_hook(on_fatal, &s);

    int64_t t0 = ks__clock_now_ns();
    ks_queue *q = ks__scheduler_queue(s.sched);
    for (;;) {
        if (ks__scheduler_schedule_one(s.sched, 0)) {
            /* pods a Permit plugin let go are bound before the next pod is popped; a failed
             * binding may requeue a pod */
            ks__scheduler_wait_bindings_settled(s.sched);
            drop_capped(&s);
            continue;
        }
        /* Nothing runnable now: jump the virtual clock to what happens next, a backoff expiry
         * or a Permit wait's timeout, so that waiting costs no wall time. */
        int64_t backoff = ks__queue_next_backoff_expiry(q);
        int64_t permit = ks__binding_next_permit_deadline(s.sched);
        if (backoff < 0 && permit < 0)
            break;
        int permit_first = permit >= 0 && (backoff < 0 || permit <= backoff);
        int64_t next = permit_first ? permit : backoff;
        long long now = atomic_load(&s.clock_ns);
        if (next > now)
            atomic_store(&s.clock_ns, next);
        if (permit_first) {
            stats->permit_timeouts += ks__binding_expire_permits(s.sched);
            ks__scheduler_wait_bindings_settled(s.sched);
            drop_capped(&s);
        } else {
            ks__queue_flush_backoff(q);
        }
    }
    ks__scheduler_wait_bindings(s.sched);
    ks__guard_set_fatal_hook(NULL, NULL);
    stats->seconds = (double)(ks__clock_now_ns() - t0) / 1e9;
    stats->podgroup_attempts = (size_t)ks__scheduler_podgroup_cycles(s.sched);
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
        rc = print_json(&s, o->out, err, errlen);
    else if (o->output == KS_OUTPUT_TABLE &&
             (!s.spill.f || (rc = spill_finish(&s.spill, err, errlen)) == 0))
        print_table(&s, o->out);
    print_skipped(&s);
out:
    ks__guard_set_fatal_hook(NULL, NULL);
    ks__scheduler_free(s.sched);
    for (size_t i = 0; i < s.nrecs; i++) {
        free(s.recs[i].ns);
        free(s.recs[i].name);
        free(s.recs[i].profile);
        free(s.recs[i].message);
        cJSON_Delete(s.recs[i].victims);
        cJSON_Delete(s.recs[i].volumes);
        cJSON_Delete(s.recs[i].claims);
        cJSON_Delete(s.recs[i].ext_claim);
    }
    cJSON_Delete(s.volume_writes);
    cJSON_Delete(s.pod_status);
    ks__strmap_destroy(&s.attempts);
    for (size_t i = 0; i < s.ncapped; i++) {
        free(s.capped[i].uid);
        free(s.capped[i].key);
    }
    free(s.capped);
    pthread_mutex_destroy(&s.write_mu);
    free(s.recs);
    spill_close(&s.spill);
    free(s.exbuf.p);
    pthread_mutex_destroy(&s.mu);
    return rc;
}
