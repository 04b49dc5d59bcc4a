/*
 * What a Pod or Node update changed, as cluster events (upstream
 * framework.PodSchedulingPropertiesChange and NodeSchedulingPropertiesChange,
 * pkg/scheduler/framework/events.go, v1.37).
 *
 * Pods: labels -> UpdatePodLabel, a request lowered or removed -> UpdatePodScaleDown, a request
 * raised or added -> UpdatePodScaleUp, the last scheduling gate removed ->
 * UpdatePodSchedulingGatesEliminated, the number of tolerations changed -> UpdatePodToleration
 * (the API only lets tolerations be added), status.resourceClaimStatuses changed ->
 * UpdatePodGeneratedResourceClaim (DynamicResources: the claim made from a template now has a
 * name); none of them -> the generic Update.
 *
 * Nodes: what the parsed ks_node holds is compared directly; conditions, spec.podPreemptionPolicy
 * and status.declaredFeatures, which it does not parse, are compared in the two JSON texts (only
 * when the texts differ at all).
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "sched/queue.h"
#include "sched/scheduler.h"

#include "api/objects.h"

static int labels_differ(const ks_label *a, size_t na, const ks_label *b, size_t nb)
{
    if (na != nb)
        return 1;
    if (a == b)
        return 0;
    for (size_t i = 0; i < na; i++) /* both sorted by key id */
        if (a[i].key != b[i].key || a[i].value != b[i].value)
            return 1;
    return 0;
}

static int64_t scalar_of(const ks_resources *r, ks_sym name)
{
    for (uint32_t j = 0; j < r->nscalar; j++)
        if (r->scalar[j].name == name)
            return r->scalar[j].value;
    return 0;
}

/* upstream extractPodScaleDown (with o the old and n the new requests): some request of o is
 * missing in n or lower there. extractPodScaleUp is the same with the pods swapped. A request of
 * 0 reads as absent (the parsed form keeps no "present" flag). */
static int lowered(const ks_resources *n, const ks_resources *o)
{
    if (n->milli_cpu < o->milli_cpu || n->memory < o->memory ||
        n->ephemeral_storage < o->ephemeral_storage)
        return 1;
    for (uint32_t i = 0; i < o->nscalar; i++)
        if (scalar_of(n, o->scalar[i].name) < o->scalar[i].value)
            return 1;
    return 0;
}

static int str_differ(const char *a, const char *b)
{
    return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

/* upstream extractPodGeneratedResourceClaimChange: status.resourceClaimStatuses changed (as the
 * parsed pod keeps them: per spec.resourceClaims entry, whether it has a status and its name). */
static int claim_statuses_differ(const ks_pod *n, const ks_pod *o)
{
    if (n->nresource_claims != o->nresource_claims)
        return 1;
    for (size_t i = 0; i < n->nresource_claims; i++) {
        const ks_pod_resource_claim *x = &n->resource_claims[i], *y = &o->resource_claims[i];
        if (x->has_status != y->has_status ||
            str_differ(x->status_claim_name, y->status_claim_name))
            return 1;
    }
    return 0;
}

uint32_t ks__pod_change_actions(const ks_pod *new_pod, const ks_pod *old_pod)
{
    uint32_t a = 0;
    if (labels_differ(new_pod->labels, new_pod->nlabels, old_pod->labels, old_pod->nlabels))
        a |= KS_ACT_UPDATE_POD_LABEL;
    if (lowered(&new_pod->requests.pub, &old_pod->requests.pub))
        a |= KS_ACT_UPDATE_POD_SCALE_DOWN;
    if (lowered(&old_pod->requests.pub, &new_pod->requests.pub))
        a |= KS_ACT_UPDATE_POD_SCALE_UP;
    if (new_pod->ngates == 0 && old_pod->ngates != 0)
        a |= KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
    if (new_pod->ntolerations != old_pod->ntolerations)
        a |= KS_ACT_UPDATE_POD_TOLERATIONS;
    if (claim_statuses_differ(new_pod, old_pod))
        a |= KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM;
    return a;
}

size_t ks__pod_change_events(const ks_pod *new_pod, const ks_pod *old_pod, ks_event_resource res,
                             ks_cluster_event *out)
{
    /* upstream's extractor order */
    static const uint32_t order[] = {
        KS_ACT_UPDATE_POD_LABEL,       KS_ACT_UPDATE_POD_SCALE_DOWN,
        KS_ACT_UPDATE_POD_SCALE_UP,    KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        KS_ACT_UPDATE_POD_TOLERATIONS, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM};
    uint32_t acts = ks__pod_change_actions(new_pod, old_pod);
    size_t n = 0;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (acts & order[i])
            out[n++] = (ks_cluster_event){res, order[i]};
    if (n == 0) /* "should only trigger plugins registering a general Pod/Update event" */
        out[n++] = (ks_cluster_event){res, KS_ACT_UPDATE_ANY};
    return n;
}

/* ---- nodes --------------------------------------------------------------------------------- */

static int resources_differ(const ks_resources *a, const ks_resources *b)
{
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
        a->ephemeral_storage != b->ephemeral_storage || a->allowed_pods != b->allowed_pods ||
        a->nscalar != b->nscalar)
        return 1;
    for (uint32_t i = 0; i < a->nscalar; i++)
        if (a->scalar[i].name != b->scalar[i].name || a->scalar[i].value != b->scalar[i].value)
            return 1;
    return 0;
}

static int taints_differ(const ks_node *a, const ks_node *b)
{
    if (a->ntaints != b->ntaints)
        return 1;
    for (size_t i = 0; i < a->ntaints; i++)
        if (a->taints[i].key != b->taints[i].key || a->taints[i].value != b->taints[i].value ||
            a->taints[i].effect != b->taints[i].effect)
            return 1;
    return 0;
}

static const cJSON *path2(const cJSON *obj, const char *a, const char *b)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
}

/* The status of the last condition of type `type` in conds (a map from type to status, as
 * upstream's strip()), NULL when there is none. */
static const char *condition_status(const cJSON *conds, const char *type)
{
    const char *st = NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0) {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
            st = cJSON_IsString(s) ? s->valuestring : "";
        }
    }
    return st;
}

/* Whether every type of a has the same status in b. */
static int conditions_within(const cJSON *a, const cJSON *b)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, a)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        const char *type = cJSON_IsString(t) ? t->valuestring : "";
        const char *sa = condition_status(a, type), *sb = condition_status(b, type);
        if (!sb || strcmp(sa, sb) != 0)
            return 0;
    }
    return 1;
}

/* equality.Semantic.DeepEqual of two optional values; slices.Equal (nil == empty) when
 * empty_is_absent. */
static int json_differ(const cJSON *a, const cJSON *b, int empty_is_absent)
{
    if (empty_is_absent) {
        if (a && cJSON_IsArray(a) && cJSON_GetArraySize(a) == 0)
            a = NULL;
        if (b && cJSON_IsArray(b) && cJSON_GetArraySize(b) == 0)
            b = NULL;
    }
    if (!a || !b)
        return a != b;
    return !cJSON_Compare(a, b, 1);
}

size_t ks__node_change_events(const ks_node *nn, const ks_node *on, ks_cluster_event *out)
{
    size_t n = 0;
    /* upstream extractNodeSpecUnschedulableChange ("TODO: create UpdateNodeSpecUnschedulable") */
    if (nn->unschedulable != on->unschedulable && !nn->unschedulable)
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_TAINT};
    if (resources_differ(&nn->allocatable.pub, &on->allocatable.pub))
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_ALLOCATABLE};
    if (labels_differ(nn->labels, nn->nlabels, on->labels, on->nlabels))
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL};
    if (taints_differ(nn, on))
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_TAINT};
    cJSON *nj = NULL, *oj = NULL;
    int texts_differ = !nn->json || !on->json || strcmp(nn->json, on->json) != 0;
    if (texts_differ && nn->json && on->json) {
        nj = cJSON_Parse(nn->json);
        oj = cJSON_Parse(on->json);
    }
    if (nj && oj) {
        const cJSON *nc = path2(nj, "status", "conditions"),
                    *oc = path2(oj, "status", "conditions");
        if (!conditions_within(nc, oc) || !conditions_within(oc, nc))
            out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_CONDITION};
    }
    if (labels_differ(nn->annotations, nn->nannotations, on->annotations, on->nannotations))
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_ANNOTATION};
    if (nj && oj) {
        if (json_differ(path2(nj, "spec", "podPreemptionPolicy"),
                        path2(oj, "spec", "podPreemptionPolicy"), 0))
            out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_PREEMPTION_POLICY};
        if (json_differ(path2(nj, "status", "declaredFeatures"),
                        path2(oj, "status", "declaredFeatures"), 1))
            out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_DECLARED_FEATURE};
    } else if (texts_differ && nn->json && on->json) {
        /* A text that does not parse (out of memory): say the JSON-only fields changed rather
         * than leave a pod parked by a lost event. */
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_CONDITION};
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_PREEMPTION_POLICY};
        out[n++] = (ks_cluster_event){KS_RES_NODE, KS_ACT_UPDATE_NODE_DECLARED_FEATURE};
    }
    cJSON_Delete(nj);
    cJSON_Delete(oj);
    return n;
}
