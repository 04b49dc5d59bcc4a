/*
 * A whole `kubesched simulate` (ks__simulate_run, core/cli/simulate.h) on the input as the
 * cluster file (a memfd), with the default configuration, --explain JSON output to /dev/null.
 * Inputs over 64 KiB are refused: a big cluster only makes an execution slow.
 */
#include "fuzz_common.h"

#include "cli/simulate.h"
#include "config/config.h"

#define MAX_INPUT (64 * 1024)

static ks_config *g_cfg;
static ks_profile_plan *g_plans;
static FILE *g_null;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[1024];
    const ks_registry *reg = fz_registry();
    fz_intern_no_grace();
    if (ks__config_default(reg, &g_cfg, err, sizeof(err)) != 0 ||
        ks__config_plan(g_cfg, reg, &g_plans, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_simulate: default configuration: %s\n", err);
        abort();
    }
    if (!(g_null = fopen("/dev/null", "w")))
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[2048];
    ks_simulate_stats stats;
    if (size > MAX_INPUT)
        return -1; /* libFuzzer: do not add to the corpus */
    int fd = fz_memfd(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    ks_simulate_opts o = {.cluster_path = path,
                          .cfg = g_cfg,
                          .plans = g_plans,
                          .output = KS_OUTPUT_JSON,
                          .explain = 1,
                          .seed = 1,
                          .out = g_null,
                          .strict = (int)(size & 1),
                          .warn = g_null};
    (void)ks__simulate_run(&o, &stats, err, sizeof(err));
    close(fd);
    return 0;
}
