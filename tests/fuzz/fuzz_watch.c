/*
 * What the API server sends an informer, without a network: a list response and a watch stream
 * go through the API client's parsing layer (ks__api_list_page: the page and its items;
 * ks__api_watch_body: the write callback's line splitter and the event decoder) into the live
 * source's informer handlers (ks__informer_list_item / ks__informer_event) and a real scheduler's
 * queue, cache and store.
 *
 * Input: byte 0 picks the informer (its kind, as core/live/apisource.c's table), byte 1 the size
 * of the chunks the watch body is written in (0: one write; curl's chunking must not matter),
 * then the list response up to the first NUL byte (none: no list) and the watch body after it.
 */
#include "fuzz_common.h"

#include "config/config.h"
#include "live/apiclient_int.h"
#include "live/apisource_int.h"
#include "sched/scheduler.h"

/* The kinds core/live/apisource.c watches (k_informers there). */
static const struct {
    const char *kind, *api_version, *path;
    int type;
} k_kinds[] = {
    {"Node", "v1", "/api/v1/nodes", INF_NODE},
    {"Pod", "v1", "/api/v1/pods", INF_POD},
    {"Namespace", "v1", "/api/v1/namespaces", INF_STORE},
    {"Service", "v1", "/api/v1/services", INF_STORE},
    {"ReplicationController", "v1", "/api/v1/replicationcontrollers", INF_STORE},
    {"ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets", INF_STORE},
    {"StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets", INF_STORE},
    {"PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets", INF_STORE},
    {"PersistentVolume", "v1", "/api/v1/persistentvolumes", INF_STORE},
    {"PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims", INF_STORE},
    {"StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses", INF_STORE},
    {"CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes", INF_STORE},
    {"CSIDriver", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csidrivers", INF_STORE},
    {"CSIStorageCapacity", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csistoragecapacities",
     INF_STORE},
    {"VolumeAttachment", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/volumeattachments",
     INF_STORE},
    {"ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices", INF_STORE},
    {"DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses", INF_STORE},
    {"ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims", INF_STORE},
    {"DeviceTaintRule", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/devicetaintrules",
     INF_STORE},
};

/* The default configuration but for parallelism 1: each input gets a new scheduler, and the
 * default 16 Filter/Score workers it would start (and join) cost more than the parsing fuzzed. Made
 * once and kept (reachable, so not a leak). */
static const char k_config[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "parallelism: 1\n";
static ks_config *g_cfg;
static ks_profile_plan *g_plans;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[1024];
    const ks_registry *reg = fz_registry();
    fz_intern_no_grace();
    if (ks__config_load_string(reg, k_config, "fuzz_watch", &g_cfg, err, sizeof(err)) != 0 ||
        ks__config_plan(g_cfg, reg, &g_plans, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_watch: configuration: %s\n", err);
        abort();
    }
    return 0;
}

static int on_item(cJSON *item, void *ud) { return ks__informer_list_item(ud, item); }
static int on_event(const char *type, cJSON *obj, void *ud)
{
    return ks__informer_event(ud, type, obj);
}
/* Skipped events are expected by the thousand: their message is built but not logged. */
static void on_skip(const char *msg, void *ud) {}

static void feed(ks_informer *in, const char *list, size_t list_len, const char *watch,
                 size_t watch_len, size_t chunk)
{
    ks_api api = {0}; /* no connection: only the buffer and the error text are used */
    ks_api_watch_opts wo = {.on_skip = on_skip};
    char *rv = NULL, *cont = NULL;
    if (list) {
        ks__informer_begin_list(in);
        api.buf = malloc(list_len + 1);
        if (api.buf) {
            memcpy(api.buf, list, list_len);
            api.buf[list_len] = '\0';
            api.len = list_len;
            if (ks__api_list_page(&api, in->path, on_item, in, &rv, &cont) == 0)
                ks__informer_end_list(in);
        }
        free(api.buf);
        api.buf = NULL;
        api.len = api.cap = 0;
    }
    (void)ks__api_watch_body(&api, in->path, &wo, watch, watch_len, chunk, on_event, in, &rv);
    free(api.buf);
    free(rv);
    free(cont);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ks_apisrc src = {0};
    ks_informer in = {0};
    char err[1024];
    if (size < 2)
        return 0;
    size_t k = data[0] % (sizeof(k_kinds) / sizeof(k_kinds[0])), chunk = data[1];
    const char *body = (const char *)data + 2, *nul = memchr(body, '\0', size - 2);
    size_t body_len = size - 2;
    /* A fresh scheduler per input: the informer drops its objects without telling it. */
    ks_scheduler_opts o = {.cfg = g_cfg, .plans = g_plans, .seed = 1, .binding_workers = 1};
    if (ks__scheduler_new(&o, &src.sched, err, sizeof(err)) != 0)
        return 0;
    in.src = &src;
    in.name = k_kinds[k].kind;
    in.api_version = k_kinds[k].api_version;
    in.path = k_kinds[k].path;
    in.type = k_kinds[k].type;
    ks__strmap_init(&in.known);
    if (nul)
        feed(&in, body, (size_t)(nul - body), nul + 1, body_len - (size_t)(nul - body) - 1, chunk);
    else
        feed(&in, NULL, 0, body, body_len, chunk);
    ks__informer_clear(&in);
    ks__strmap_destroy(&in.known);
    ks__scheduler_free(src.sched);
    return 0;
}
