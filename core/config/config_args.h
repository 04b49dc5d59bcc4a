/*
 * The host side of an SDK ks_args (a plugin's pluginConfig args): a borrowed cJSON object. It lives
 * in the config layer because the configuration hands args to a plugin's validate_args while it
 * loads; core/sched's host table reads the same struct for create().
 */
#ifndef KS_CORE_CONFIG_CONFIG_ARGS_H
#define KS_CORE_CONFIG_CONFIG_ARGS_H

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"

struct ks_args {
    const cJSON *json; /* borrowed(config); may be NULL */
    char *text;        /* lazily printed JSON, owned; free() it with the struct */
};

/* Resolves "a.b[2].c" from root; NULL when any step is missing. */
const cJSON *ks__args_resolve(const cJSON *root, const char *path);

#endif
