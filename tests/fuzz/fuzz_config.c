/*
 * ks__config_load_string (core/config/config.h) with the in-tree plugins registered, as
 * `kubesched --config` loads a file; an accepted configuration is also planned
 * (ks__config_plan), which runs the framework checks on what the loader let through.
 */
#include "fuzz_common.h"

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ks_registry *reg = fz_registry();
    char *yaml = fz_cstr(data, size), err[2048];
    ks_config *cfg = NULL;
    ks_profile_plan *plans = NULL;
    if (!yaml)
        return 0;
    if (ks__config_load_string(reg, yaml, "fuzz.yaml", &cfg, err, sizeof(err)) == 0 &&
        ks__config_plan(cfg, reg, &plans, err, sizeof(err)) == 0)
        ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    free(yaml);
    return 0;
}
