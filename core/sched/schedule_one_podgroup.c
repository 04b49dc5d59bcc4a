/*
 * The PodGroup scheduling cycle's pieces that are not the per-pod algorithm (upstream
 * schedule_one_podgroup.go, v1.37.2, without CompositePodGroups and placements): which pods go
 * through it, the gang's pending siblings taken from the queue, GangScheduling's
 * PlacementFeasible rule, and the PodGroup's PodGroupInitiallyScheduled condition. The cycle
 * itself (one attempt per member on the snapshot the previous members' assumes updated, all
 * reverted when the group cannot be placed) is in schedule_one.c, next to the per-pod cycle whose
 * steps it reuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "api/custom_objects.h"
#include "api/intern.h"
#include "api/podgroup_objects.h"
#include "util/errors.h"
#include "util/log.h"
#include "sched/queue.h"
#include "sched/scheduler_int.h"

int ks__podgroup_cycle_wanted(ks_scheduler *s, ks_framework *fw, const ks_pod *pod,
                              ks__pg_cycle_group *g)
{
    g->pg = NULL;
    if (!s->podgroups || pod->scheduling_group == KS_SYM_ABSENT ||
        pod->scheduling_group == KS_SYM_EMPTY || ks__plugin_bit(fw, "GangScheduling") == 0)
        return 0;
    ks_pod_group *pg = ks__podgroup_store_get(s->podgroups, pod->ns, pod->scheduling_group);
    if (!pg)
        return 0; /* PreEnqueue holds such a pod; one that got here goes alone */
    g->ns = pod->ns;
    g->name = pod->scheduling_group;
    g->pg = pg; /* the cycle reads this one throughout (upstream: the snapshot's) */
    return 1;
}

typedef struct sibling_walk {
    const ks_pod *self;
    ks_sym scheduler_name;
    char **uids;
    size_t n, cap;
    int scheduled; /* upstream PodGroupState.ScheduledPodsCount(): assumed + assigned */
} sibling_walk;

static void sibling(void *ctx, const ks_pod *pod, ks_pod_group_member_state st)
{
    sibling_walk *w = ctx;
    if (st != KS_PG_MEMBER_UNSCHEDULED) {
        w->scheduled++;
        return;
    }
    if (!strcmp(pod->uid, w->self->uid) || pod->scheduler_name != w->scheduler_name)
        return;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        char **u = realloc(w->uids, cap * sizeof(*u));
        if (!u)
            return;
        w->uids = u;
        w->cap = cap;
    }
    if ((w->uids[w->n] = strdup(pod->uid)))
        w->n++;
}

size_t ks__podgroup_take_siblings(ks_scheduler *s, const ks__pg_cycle_group *g,
                                  const ks_queued_pod *qp, ks_queued_pod ***out, int *scheduled)
{
    sibling_walk w = {.self = qp->pod, .scheduler_name = qp->pod->scheduler_name};
    ks__podgroup_members_each(s->podgroups, g->ns, g->name, sibling, &w);
    *scheduled = w.scheduled;
    *out = NULL;
    size_t n = 0;
    ks_queued_pod **taken = w.n ? malloc(w.n * sizeof(*taken)) : NULL;
    for (size_t i = 0; i < w.n; i++) {
        ks_queued_pod *t = taken ? ks__queue_take(s->queue, w.uids[i]) : NULL;
        if (t)
            taken[n++] = t;
        free(w.uids[i]);
    }
    free(w.uids);
    *out = taken;
    return n;
}

ks_code ks__podgroup_placement_feasible(ks_framework *fw, const ks__pg_cycle_group *g,
                                        int scheduled, int remaining, char *msg, size_t len)
{
    msg[0] = '\0';
    const ks_plugin_inst *gs = NULL;
    for (size_t i = 0; i < fw->ninst; i++)
        if (!strcmp(fw->inst[i].desc->name, "GangScheduling"))
            gs = &fw->inst[i];
    if (!gs || !gs->desc->placement_feasible)
        return KS_SUCCESS; /* no PlacementFeasible plugin: nothing to enforce */
    ks_status st;
    ks__status_reset(&st);
    ks_code code = gs->desc->placement_feasible(gs->self, g->pg, scheduled, remaining, &st);
    ks__status_message(&st, msg, len);
    if (code != KS_SUCCESS && code != KS_WAIT && code != KS_UNSCHEDULABLE)
        code = KS_ERROR; /* upstream: an unexpected status is an error */
    return code;
}

/* The list/watch path of PodGroups, for the source's write_object (which reads only path). */
static const struct ks_resource k_podgroups = {
    .index = -1,
    .api_version = "scheduling.k8s.io/v1beta1",
    .kind = "PodGroup",
    .plural = "podgroups",
    .path = "/apis/scheduling.k8s.io/v1beta1/podgroups",
};

static void rfc3339_now(char *out, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void ks__podgroup_set_condition(ks_scheduler *s, const ks__pg_cycle_group *g, int scheduled,
                                const char *reason, const char *message)
{
    /* the API is written in live mode only (simulate prints decisions, not PodGroups) */
    if (!s->podgroups || !s->source.write_object || (s->source.flags & KS_SOURCE_SIMULATED))
        return;
    ks_pod_group *pg = ks__podgroup_store_get(s->podgroups, g->ns, g->name);
    if (!pg)
        return;
    cJSON *obj = cJSON_Parse(pg->v.json);
    ks__podgroup_unref(pg);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    cJSON *conds = cJSON_IsArray(old) ? cJSON_Duplicate(old, 1) : cJSON_CreateArray();
    cJSON *existing = NULL, *it;
    cJSON_ArrayForEach(it, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "type");
        if (cJSON_IsString(t) && !strcmp(t->valuestring, "PodGroupInitiallyScheduled"))
            existing = it;
    }
    const char *want = scheduled ? "True" : "False";
    double generation = cJSON_IsNumber(gen) ? gen->valuedouble : 0;
    const cJSON *es = cJSON_GetObjectItemCaseSensitive(existing, "status");
    const cJSON *er = cJSON_GetObjectItemCaseSensitive(existing, "reason");
    const cJSON *em = cJSON_GetObjectItemCaseSensitive(existing, "message");
    const cJSON *eg = cJSON_GetObjectItemCaseSensitive(existing, "observedGeneration");
    int es_true = cJSON_IsString(es) && !strcmp(es->valuestring, "True");
    /* upstream updatePodGroupCondition: a group once scheduled does not go back to False; and
     * apimeta.SetStatusCondition: nothing to write when nothing changed */
    int same = existing && cJSON_IsString(es) && !strcmp(es->valuestring, want) &&
               cJSON_IsString(er) && !strcmp(er->valuestring, reason) &&
               ((cJSON_IsString(em) && !strcmp(em->valuestring, message)) || (!em && !*message)) &&
               (cJSON_IsNumber(eg) ? eg->valuedouble : 0) == generation;
    if (!conds || (existing && es_true && !scheduled) || same) {
        cJSON_Delete(conds);
        cJSON_Delete(obj);
        return;
    }
    char now[32];
    rfc3339_now(now, sizeof(now));
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(existing, "lastTransitionTime");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", "PodGroupInitiallyScheduled");
    cJSON_AddStringToObject(c, "status", want);
    if (generation)
        cJSON_AddNumberToObject(c, "observedGeneration", generation);
    /* the transition time moves only when the status does */
    cJSON_AddStringToObject(c, "lastTransitionTime",
                            existing && cJSON_IsString(es) && !strcmp(es->valuestring, want) &&
                                    cJSON_IsString(lt)
                                ? lt->valuestring
                                : now);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message);
    if (existing)
        cJSON_ReplaceItemViaPointer(conds, existing, c);
    else
        cJSON_AddItemToArray(conds, c);
    cJSON *patch = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddItemToObject(st, "conditions", conds);
    char *text = cJSON_PrintUnformatted(patch);
    int rc = text ? s->source.write_object(s->source.ctx, &k_podgroups, g->ns, g->name, 1, text)
                  : KS_ENOMEM;
    if (rc != 0)
        ks__log('W', NULL, "Failed to update PodGroup status podGroup=%s/%s: %s",
                ks__sym_str(g->ns), ks__sym_str(g->name), ks__strerror(rc));
    free(text);
    cJSON_Delete(patch);
    cJSON_Delete(obj);
}
