/*
 * Workload-aware preemption's model (upstream framework/preemption/podgrouppreemption.go and
 * its victim and preemptor types, v1.37.2, GenericWorkload): the preemptor is a pod group, the
 * domain the whole cluster, and a victim is a preemption unit: one pod, or all the pods on nodes of
 * one PodGroup whose spec.disruptionMode is `all`, which leave together. This file holds the pieces
 * that need no framework: the group's priority, who may preempt (preemptorEligibleToPreemptOthers),
 * the lower-priority units of the snapshot (GetAllPossibleVictims and isPreemptionAllowed), their
 * order (moreImportantVictim) and the split by PodDisruptionBudget
 * (filterVictimsWithPDBViolation). The simulation that removes them, runs the group's algorithm
 * and reprieves what it can is in schedule_one.c, next to the PodGroup cycle it reruns.
 *
 * Scheduling thread only.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/podgroup_objects.h"
#include "util/errors.h"
#include "sched/cache.h"
#include "sched/scheduler_int.h"

int32_t ks__podgroup_priority(const ks_pod_group *pg)
{
    /* upstream util.PodGroupPriority: a nil priority is the static default, 0 */
    return pg && pg->v.has_priority ? pg->v.priority : 0;
}

/* upstream getPodPriority: a member of an existing PodGroup has its group's priority. *pg gets
 * a reference to that group (or NULL). */
static int32_t effective_priority(ks_scheduler *s, const ks_pod *p, ks_pod_group **pg)
{
    *pg = NULL;
    if (s->podgroups && p->scheduling_group != KS_SYM_ABSENT && p->scheduling_group != KS_SYM_EMPTY)
        *pg = ks__podgroup_store_get(s->podgroups, p->ns, p->scheduling_group);
    return *pg ? ks__podgroup_priority(*pg) : p->priority;
}

/* upstream PodTerminatingByPreemption: deletionTimestamp set and the DisruptionTarget condition
 * True with reason PreemptionByScheduler. */
static int terminating_by_preemption(const ks_pod *p)
{
    if (!p->terminating || !p->json)
        return 0;
    cJSON *obj = cJSON_Parse(p->json);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions"), *c;
    int yes = 0;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        if (!cJSON_IsString(t) || strcmp(t->valuestring, "DisruptionTarget") != 0)
            continue;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "reason");
        yes = cJSON_IsString(s) && !strcmp(s->valuestring, "True") && cJSON_IsString(r) &&
              !strcmp(r->valuestring, "PreemptionByScheduler");
        break;
    }
    cJSON_Delete(obj);
    return yes;
}

const char *ks__pg_preemptor_ineligible(ks_pod *const *members, size_t n)
{
    /* upstream resolvePreemptionPolicy without PodGroupPreemptionPolicy: Never when any member
     * says so */
    for (size_t i = 0; i < n; i++)
        if (members[i]->preemption_never)
            return "not eligible due to preemptionPolicy=Never.";
    return NULL;
}

int ks__pg_ongoing_preemption(ks_scheduler *s, const ks_snapshot *snap, int32_t priority,
                              ks_pod *const *members, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ks_sym nom = members[i]->nominated_node_name;
        if (nom == KS_SYM_ABSENT || nom == KS_SYM_EMPTY)
            continue;
        const ks_node_info *ni = ks__snapshot_find(snap, nom);
        for (size_t k = 0; ni && k < ni->npods; k++) {
            ks_pod_group *pg;
            int32_t prio = effective_priority(s, ni->pods[k], &pg);
            ks__podgroup_unref(pg);
            if (prio < priority && terminating_by_preemption(ni->pods[k]))
                return 1;
        }
    }
    return 0;
}

/* Whether the PodGroup's spec.disruptionMode is `all` (its pods leave together; nil or `single`:
 * one by one). A union of exactly one member, in the compact JSON cJSON printed. */
static int disruption_all(const ks_pod_group *pg)
{
    return pg && pg->v.json && strstr(pg->v.json, "\"disruptionMode\":{\"all\":") != NULL;
}

/* One lower-priority pod found on a node, before grouping. */
typedef struct found {
    ks_pod *pod;
    ks_sym
        group; /* the PodGroup whose pods leave together (disruptionMode all), or KS_SYM_ABSENT */
    int32_t priority;
    int group_type; /* upstream's victim type: PodGroup for a pod naming a group, else Pod */
    size_t order;   /* where it was found: keeps the units' order deterministic */
} found;

static int cmp_found(const void *a, const void *b)
{
    const found *x = a, *y = b;
    /* the members of one group together (namespace, then name), each group where its first
     * pod was found; single pods keep their own place */
    if (x->group != KS_SYM_ABSENT && y->group != KS_SYM_ABSENT) {
        if (x->pod->ns != y->pod->ns)
            return x->pod->ns < y->pod->ns ? -1 : 1;
        if (x->group != y->group)
            return x->group < y->group ? -1 : 1;
    }
    return x->order < y->order ? -1 : x->order > y->order;
}

static int64_t start_of(const ks_pod *p)
{
    /* upstream util.GetPodStartTime: a pod without status.startTime started now, after every
     * real start */
    return p->start_time_ns ? p->start_time_ns : INT64_MAX;
}

int ks__pg_victims_collect(ks_scheduler *s, const ks_snapshot *snap, int32_t priority,
                           ks__pg_victim **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t nf = 0, cap = 0;
    found *f = NULL;
    for (size_t i = 0; i < snap->nnodes; i++) {
        const ks_node_info *ni = snap->nodes[i];
        for (size_t k = 0; k < ni->npods; k++) {
            ks_pod_group *pg;
            const ks_pod *p = ni->pods[k];
            int32_t prio = effective_priority(s, p, &pg);
            int all = disruption_all(pg);
            ks__podgroup_unref(pg);
            if (prio >= priority) /* upstream isPreemptionAllowed */
                continue;
            if (nf == cap) {
                cap = cap ? cap * 2 : 64;
                found *g = realloc(f, cap * sizeof(*g));
                if (!g) {
                    free(f);
                    return KS_ENOMEM;
                }
                f = g;
            }
            /* upstream NewPodVictim: a pod that names a group is of the PodGroup type even alone
             * (its PodGroup missing, or disruptionMode single) */
            int group_type = s->podgroups && p->scheduling_group != KS_SYM_ABSENT &&
                             p->scheduling_group != KS_SYM_EMPTY;
            f[nf] = (found){ni->pods[k], all ? p->scheduling_group : KS_SYM_ABSENT, prio,
                            group_type, nf};
            nf++;
        }
    }
    if (nf == 0)
        return 0;
    /* group units by their first pod's place: sort members together, then order units */
    qsort(f, nf, sizeof(*f), cmp_found);
    ks__pg_victim *v = calloc(nf, sizeof(*v));
    ks_pod **pods = malloc(nf * sizeof(*pods));
    if (!v || !pods) {
        free(v);
        free(pods);
        free(f);
        return KS_ENOMEM;
    }
    size_t nv = 0;
    for (size_t i = 0; i < nf;) {
        size_t j = i + 1;
        if (f[i].group != KS_SYM_ABSENT)
            while (j < nf && f[j].group == f[i].group && f[j].pod->ns == f[i].pod->ns)
                j++;
        ks__pg_victim *u = &v[nv++];
        u->pods = &pods[i];
        u->npods = j - i;
        u->priority = f[i].priority;
        u->is_group = f[i].group_type;
        u->earliest_start = INT64_MAX;
        u->order = f[i].order;
        for (size_t k = i; k < j; k++) {
            pods[k] = ks__pod_ref(f[k].pod);
            if (start_of(f[k].pod) < u->earliest_start)
                u->earliest_start = start_of(f[k].pod);
            if (f[k].order < u->order)
                u->order = f[k].order;
        }
        i = j;
    }
    free(f);
    *out = v;
    *nout = nv;
    return 0;
}

void ks__pg_victims_free(ks__pg_victim *v, size_t n)
{
    if (!v)
        return;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].npods;
    /* the pods of every unit are one array, the first unit's */
    ks_pod **base = v[0].pods;
    for (size_t i = 0; i < n; i++)
        if (v[i].pods < base)
            base = v[i].pods;
    for (size_t i = 0; i < total; i++)
        ks__pod_unref(base[i]);
    free(base);
    free(v);
}

int ks__pg_more_important_victim(const ks__pg_victim *a, const ks__pg_victim *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->is_group != b->is_group) /* upstream victimRank: PodGroup 2, Pod 1 */
        return a->is_group;
    if (a->npods != b->npods)
        return a->npods > b->npods;
    return a->earliest_start < b->earliest_start;
}

static int cmp_importance(const void *pa, const void *pb)
{
    const ks__pg_victim *a = pa, *b = pb;
    if (ks__pg_more_important_victim(a, b))
        return -1;
    if (ks__pg_more_important_victim(b, a))
        return 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

void ks__pg_victims_sort(ks__pg_victim *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_importance);
}

static int in_disrupted(const ks_pdb *pdb, ks_sym name)
{
    for (uint32_t i = 0; i < pdb->ndisrupted; i++)
        if (pdb->disrupted[i] == name)
            return 1;
    return 0;
}

int ks__pg_victims_pdb(const ks__pg_victim *v, size_t n, const ks_pdb *pdbs, size_t npdbs,
                       uint8_t *violating)
{
    int32_t *allowed = npdbs ? malloc(npdbs * sizeof(*allowed)) : NULL;
    if (npdbs && !allowed)
        return KS_ENOMEM;
    for (size_t k = 0; k < npdbs; k++)
        allowed[k] = pdbs[k].disruptions_allowed;
    for (size_t i = 0; i < n; i++) {
        violating[i] = 0;
        for (size_t j = 0; j < v[i].npods; j++) {
            const ks_pod *p = v[i].pods[j];
            if (p->nlabels == 0) /* a pod without labels matches no budget */
                continue;
            for (size_t k = 0; k < npdbs; k++) {
                const ks_pdb *pdb = &pdbs[k];
                /* a nil or empty selector matches nothing (upstream skips selector.Empty()) */
                if (pdb->ns != p->ns || !pdb->selector.present ||
                    (pdb->selector.nmatch_labels == 0 && pdb->selector.nexprs == 0) ||
                    !ks_label_selector_matches(&pdb->selector, p->labels, p->nlabels) ||
                    in_disrupted(pdb, p->name))
                    continue;
                /* a unit violates when evicting any of its pods takes a budget below zero;
                 * upstream's podIsViolating stops at that budget (the later ones are not
                 * decremented for this pod) */
                if (--allowed[k] < 0) {
                    violating[i] = 1;
                    break;
                }
            }
        }
    }
    free(allowed);
    return 0;
}
