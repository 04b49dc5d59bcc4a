/*
 * ks__kubeconfig_load (core/live/kubeconfig.h) on the input as a file (a memfd), with the
 * current-context; a loaded config also hands out its token and its PEM paths, the calls the
 * API client makes next.
 */
#include "fuzz_common.h"

#include "live/kubeconfig.h"

static void use(ks_kubeconfig *kc)
{
    char *token = NULL, err[512];
    const char *path;
    if (ks__kubeconfig_token(kc, &token) == 0 && token)
        (void)ks__kubeconfig_token_ctl(token);
    free(token);
    (void)ks__kubeconfig_token_desc(kc);
    ks_kc_pem *pems[] = {&kc->ca, &kc->cert, &kc->key};
    for (size_t i = 0; i < sizeof(pems) / sizeof(pems[0]); i++)
        (void)ks__kubeconfig_pem_path(kc, pems[i], &path, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[2048];
    ks_kubeconfig *kc = NULL;
    int fd = fz_memfd(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    if (ks__kubeconfig_load(path, NULL, &kc, err, sizeof(err)) == 0)
        use(kc);
    ks__kubeconfig_free(kc);
    close(fd);
    return 0;
}
