/*
 * ks__manifest_read (core/api/manifest.h) on the input as a file (a memfd), with every problem
 * formatted, in strict mode for inputs of odd length; then every object as `kubesched simulate`
 * loads it (load() in core/cli/simulate.c: the _checked readers) and as live mode does (the
 * lenient ones), and the kinds the plugins read through ks__store_apply (the storage kinds, with
 * their pods' volumes, through both of their readers too).
 *
 * Invariant asserted: what the checked reader accepts, the lenient one accepts too (the checked
 * one only adds the API server's value rules).
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
        int lenient = ks__node_from_json(o, &node, err, sizeof(err));
        if (lenient == 0)
            ks__node_unref(node);
        if (ks__node_from_json_checked(o, &node, err, sizeof(err)) == 0) {
            ks__node_unref(node);
            if (lenient != 0)
                abort(); /* the checked reader accepted what the lenient one refused */
        }
    } else if (strcmp(kind, "Pod") == 0) {
        ks_pod *pod;
        int lenient = ks__pod_from_json(o, &pod, err, sizeof(err));
        if (lenient == 0)
            ks__pod_unref(pod);
        if (ks__pod_from_json_checked(o, &pod, err, sizeof(err)) == 0) {
            ks__pod_unref(pod);
            if (lenient != 0)
                abort();
        }
    } else if (ks__volobj_kind(kind) >= 0) {
        /* The storage kinds: both readers, the same invariant; then filed in the store as
         * simulate (checked) and live mode (lenient) file them. */
        ks__volobj *v;
        int lenient = ks__volobj_from_json(o, &v, err, sizeof(err));
        if (lenient == 0)
            ks__volobj_unref(v);
        if (ks__volobj_from_json_checked(o, &v, err, sizeof(err)) == 0) {
            ks__volobj_unref(v);
            if (lenient != 0)
                abort();
        }
        ks_store_change chg;
        if (ks__store_apply_ex(st, o, 0, 1, &chg, err, sizeof(err)) == 0) {
            ks__volobj_unref(chg.old_obj);
            ks__volobj_unref(chg.new_obj);
        }
        (void)ks__store_apply(st, o, 0, err, sizeof(err));
    } else if (ks__store_wants(kind)) {
        (void)ks__store_apply(st, o, 0, err, sizeof(err));
    }
}

/* Problems are formatted by the reader before this is called: nothing more to do with them. */
static void ignore_problem(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
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
    ks_manifest_opts o = {.strict = (int)(size & 1), .report = ignore_problem};
    if (ks__manifest_read(path, &o, &m, err, sizeof(err)) == 0) {
        ks_store *st = ks__store_new();
        for (size_t i = 0; st && i < m.n; i++)
            convert(st, m.objs[i].obj);
        ks__store_free(st);
        ks__manifest_free(&m);
    }
    close(fd);
    return 0;
}
