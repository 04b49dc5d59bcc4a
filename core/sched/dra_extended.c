/*
 * Extended resources backed by DRA (upstream v1.37.2 DRAExtendedResource, GA): the host side of
 * DynamicResources' special ResourceClaim (pkg/scheduler/framework/plugins/dynamicresources/
 * extendeddynamicresources.go) and of the DeviceClass an extended resource name maps to
 * (k8s.io/dynamic-resource-allocation deviceclass/extendedresourcecache, what
 * DRAManager.DeviceClassResolver answers).
 *
 *   class lookup   spec.extendedResourceName, or the implicit name
 *                  deviceclass.resource.kubernetes.io/<class>; among classes naming the same
 *                  resource, the newest by creationTimestamp, then the smallest name (the cache's
 *                  tie rule). Computed from the store's classes at the time of the call, so the
 *                  answer does not depend on the order the classes arrived in (see below);
 *   find           findExtendedResourceClaim: a claim of the pod's namespace with the annotation
 *                  resource.kubernetes.io/extended-resource-claim: "true" whose controller is
 *                  the pod (name and uid);
 *   new            the in-memory claim "<extended-resources>" PreFilter and Filter allocate;
 *   create         PreBind's createExtendedResourceClaimInAPI on the in-memory cluster of
 *                  `kubesched simulate`: the API server's generateName, with a deterministic
 *                  suffix (kubesched's own: five characters of the API server's alphabet drawn
 *                  from an FNV-1a hash of the pod's uid, the next hash on a name taken);
 *   delete         deleteClaim on the in-memory cluster.
 *
 * Where upstream's cache is incremental it differs from a fresh lookup in one corner: a class
 * that arrives after an equally named, newer one is skipped whole by updateResourceName2class,
 * its implicit name included, until it is updated. kubesched maps the implicit name always.
 *
 * Threads: every function may run on any thread (the store has its lock).
 */
#include "sched/dra_manager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/intern.h"
#include "api/objects.h"
#include "sched/framework.h"

#define CLASS_PREFIX "deviceclass.resource.kubernetes.io/"
#define EXT_ANNOTATION "resource.kubernetes.io/extended-resource-claim"

typedef struct class_pick {
    const char *resource;
    const ks_device_class *best;
} class_pick;

/* Whether class c beats the current best for an explicit name (updateResourceName2class: a newer
 * creationTimestamp wins, an equal one goes to the smaller name). */
static int beats(const ks_device_class *c, const ks_device_class *best)
{
    if (!best)
        return 1;
    if (c->creation_ns != best->creation_ns)
        return c->creation_ns > best->creation_ns;
    return strcmp(c->h.key, best->h.key) < 0;
}

static int pick_class(const ks__draobj *o, void *ctx)
{
    class_pick *p = ctx;
    const ks_device_class *c = ks__dra_class(o);
    if (c && c->extended_resource_name && strcmp(c->extended_resource_name, p->resource) == 0 &&
        beats(c, p->best))
        p->best = c;
    return 0; /* nothing collected: the store's lock covers the comparison */
}

ks_sym ks__dra_extended_resource_class(ks_store *st, ks_sym resource)
{
    const char *r = ks__sym_str(resource);
    if (!st || !r || !*r)
        return KS_SYM_ABSENT;
    class_pick p = {r, NULL};
    ks__draobj **none = NULL;
    /* The filter runs under the store's read lock, with every class alive. */
    (void)ks__store_draobjs(st, KS_DK_DEVICE_CLASS, pick_class, &p, &none);
    free(none);
    if (p.best) /* the name is pinned: the answer outlives the class */
        return ks__intern(p.best->h.key);
    if (strncmp(r, CLASS_PREFIX, sizeof(CLASS_PREFIX) - 1) == 0) {
        ks__draobj *o = ks__store_draobj(st, KS_DK_DEVICE_CLASS, r + sizeof(CLASS_PREFIX) - 1);
        ks_sym s = o ? ks__intern(o->key) : KS_SYM_ABSENT;
        ks__draobj_unref(o);
        return s;
    }
    return KS_SYM_ABSENT;
}

typedef struct find_ctx {
    const ks_pod *pod;
} find_ctx;

static int is_pods_claim(const ks__draobj *o, void *ctx)
{
    const ks_pod *pod = ((find_ctx *)ctx)->pod;
    const ks_resource_claim *c = ks__dra_claim(o);
    return c && c->extended_resource_claim && c->h.ns == pod->ns && c->view.controller_uid &&
           strcmp(c->view.controller_uid, pod->uid) == 0 && c->controller_name &&
           strcmp(c->controller_name, ks__sym_str(pod->name)) == 0;
}

const ks_resource_claim *ks__dra_extended_claim_find(ks_store *st, const ks_pod *pod)
{
    if (!st || !pod)
        return NULL;
    find_ctx f = {pod};
    ks__draobj **v = NULL;
    size_t n = ks__store_draobjs(st, KS_DK_RESOURCE_CLAIM, is_pods_claim, &f, &v);
    /* Upstream returns the first of its informer's list; more than one is a broken cluster. */
    for (size_t i = 1; i < n; i++)
        ks__draobj_unref(v[i]);
    const ks_resource_claim *c = n ? ks__dra_claim(v[0]) : NULL;
    free(v);
    return c;
}

/* The claim object as the API would have it (metadata, spec), without name or uid. */
static cJSON *claim_object(const ks_pod *pod, const ks_dra_extended_request *reqs, size_t n)
{
    const char *ns = ks__sym_str(pod->ns), *pname = ks__sym_str(pod->name);
    char gen[400];
    snprintf(gen, sizeof(gen), "%s-extended-resources-", pname ? pname : "");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "resource.k8s.io/v1");
    cJSON_AddStringToObject(o, "kind", "ResourceClaim");
    cJSON *meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "namespace", ns && *ns ? ns : "default");
    cJSON_AddStringToObject(meta, "generateName", gen);
    cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
    cJSON_AddStringToObject(ann, EXT_ANNOTATION, "true");
    cJSON *refs = cJSON_AddArrayToObject(meta, "ownerReferences");
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "kind", "Pod");
    cJSON_AddStringToObject(ref, "name", pname ? pname : "");
    cJSON_AddStringToObject(ref, "uid", pod->uid);
    cJSON_AddBoolToObject(ref, "controller", 1);
    cJSON_AddItemToArray(refs, ref);
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON *devices = cJSON_AddObjectToObject(spec, "devices");
    if (n > 0) {
        cJSON *list = cJSON_AddArrayToObject(devices, "requests");
        for (size_t i = 0; i < n; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "name", reqs[i].name);
            cJSON *ex = cJSON_AddObjectToObject(r, "exactly");
            cJSON_AddStringToObject(ex, "deviceClassName", reqs[i].device_class_name);
            cJSON_AddStringToObject(ex, "allocationMode", "ExactCount");
            cJSON_AddNumberToObject(ex, "count", (double)reqs[i].count);
            cJSON_AddItemToArray(list, r);
        }
    }
    return o;
}

const ks_resource_claim *ks__dra_extended_claim_new(const ks_pod *pod,
                                                    const ks_dra_extended_request *reqs, size_t n)
{
    cJSON *o = claim_object(pod, reqs, n);
    if (!o)
        return NULL;
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    /* specialClaimInMemName, and a temporary uid for the in-flight table (upstream draws a
     * random one; this one is the pod's, so a pod has one at a time). */
    char uid[300];
    snprintf(uid, sizeof(uid), "%s/<extended-resources>", pod->uid);
    cJSON_AddStringToObject(meta, "name", "<extended-resources>");
    cJSON_AddStringToObject(meta, "uid", uid);
    ks__draobj *obj = NULL;
    char err[256];
    int rc = ks__draobj_from_json(o, &obj, err, sizeof(err));
    cJSON_Delete(o);
    return rc == 0 ? ks__dra_claim(obj) : NULL;
}

/* The API server's generateName suffix alphabet (k8s.io/apiserver names.SimpleNameGenerator:
 * utilrand.String, consonants and digits without look-alikes). */
static void name_suffix(const char *seed, unsigned round, char out[6])
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = seed; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    for (unsigned r = 0; r < round; r++)
        h = (h ^ 0x9e3779b97f4a7c15ULL) * 1099511628211ULL;
    for (int i = 0; i < 5; i++) {
        out[i] = alphabet[h % (sizeof(alphabet) - 1)];
        h /= sizeof(alphabet) - 1;
    }
    out[5] = 0;
}

ks_code ks__dra_extended_claim_create(ks_store *st, const ks_pod *pod,
                                      const ks_resource_claim *claim,
                                      const ks_resource_claim **created, ks_dra_change *chg,
                                      ks_status *stt)
{
    *created = NULL;
    cJSON *o = cJSON_Parse(claim->h.json);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    if (!o || !meta) {
        cJSON_Delete(o);
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    /* Clear fields which must or can not be set during creation. */
    cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
    const char *gen = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "generateName"));
    const char *ns = ks__sym_str(pod->ns);
    char name[400], key[700], suffix[6];
    /* The API server truncates the base to 58 characters (253 for claims is far off: names of
     * generated objects are limited by maxGeneratedNameLength 63 - 5). */
    for (unsigned round = 0;; round++) {
        name_suffix(pod->uid, round, suffix);
        snprintf(name, sizeof(name), "%.58s%s", gen ? gen : "", suffix);
        snprintf(key, sizeof(key), "%s/%s", ns && *ns ? ns : "default", name);
        ks__draobj *taken = ks__store_draobj(st, KS_DK_RESOURCE_CLAIM, key);
        ks__draobj_unref(taken);
        if (!taken || round > 64)
            break;
    }
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "uid", key); /* as a cluster file's claim without one */
    char err[512];
    int rc = ks__store_apply_dra(st, o, 0, 0, chg, err, sizeof(err));
    cJSON_Delete(o);
    if (rc != 0) {
        char msg[700];
        snprintf(msg, sizeof(msg), "create claim for extended resources %s: %s", key,
                 rc == KS_ENOMEM ? "out of memory" : err);
        ks__status_add(stt, msg);
        return KS_ERROR;
    }
    *created = ks__dra_claim(ks__draobj_ref(chg->new_obj));
    return KS_SUCCESS;
}

ks_code ks__dra_claim_delete(ks_store *st, const ks_resource_claim *claim, ks_dra_change *chg,
                             ks_status *stt)
{
    cJSON *o = cJSON_Parse(claim->h.json);
    if (!o) {
        ks__status_add(stt, "out of memory");
        return KS_ERROR;
    }
    char err[512];
    int rc = ks__store_apply_dra(st, o, 1, 0, chg, err, sizeof(err));
    cJSON_Delete(o);
    if (rc != 0) {
        ks__status_add(stt, rc == KS_ENOMEM ? "out of memory" : err);
        return KS_ERROR;
    }
    return KS_SUCCESS; /* a claim already gone is no error (IsNotFound) */
}

char *ks__pod_extended_claim_status_patch(const char *claim_name,
                                          const ks_extended_request_mapping *m, size_t n)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *status = cJSON_AddObjectToObject(p, "status");
    cJSON *ers = cJSON_AddObjectToObject(status, "extendedResourceClaimStatus");
    cJSON *list = cJSON_AddArrayToObject(ers, "requestMappings");
    for (size_t i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "containerName", m[i].container_name);
        cJSON_AddStringToObject(e, "resourceName", m[i].resource_name);
        cJSON_AddStringToObject(e, "requestName", m[i].request_name);
        cJSON_AddItemToArray(list, e);
    }
    cJSON_AddStringToObject(ers, "resourceClaimName", claim_name);
    char *text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    return text;
}
