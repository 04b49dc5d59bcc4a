/*
 * ks__manifest_load (core/api/manifest.h) on the input as a file (a memfd), then every object as
 * `kubesched simulate` loads it (load() in core/cli/simulate.c): Nodes and Pods through
 * ks__node_from_json / ks__pod_from_json, the kinds the plugins read through ks__store_apply.
 */
#include "fuzz_common.h"

#include "api/manifest.h"
#include "api/objects.h"
#include "api/store.h"

static const char *kind_of(const cJSON *o)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
    return cJSON_IsString(k) ? k->valuestring : "";
}

static void convert(ks_store *st, const cJSON *o)
{
    const char *kind = kind_of(o);
    char err[400];
    if (strcmp(kind, "Node") == 0) {
        ks_node *node;
        if (ks__node_from_json(o, &node, err, sizeof(err)) == 0)
            ks__node_unref(node);
    } else if (strcmp(kind, "Pod") == 0) {
        ks_pod *pod;
        if (ks__pod_from_json(o, &pod, err, sizeof(err)) == 0)
            ks__pod_unref(pod);
    } else if (ks__store_wants(kind)) {
        (void)ks__store_apply(st, o, 0, err, sizeof(err));
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_intern_no_grace();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[2048];
    ks_manifest m;
    int fd = fz_memfd(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    if (ks__manifest_load(path, &m, err, sizeof(err)) == 0) {
        ks_store *st = ks__store_new();
        for (size_t i = 0; st && i < m.n; i++)
            convert(st, m.objs[i].obj);
        ks__store_free(st);
        ks__manifest_free(&m);
    }
    close(fd);
    return 0;
}
