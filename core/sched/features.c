/*
 * Feature gates (features.h).
 */
#include "sched/features.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kubesched/plugin.h"
#include "config/config.h"

static struct {
    const char *name;
    int enabled;
} gates[KS_FEATURE_COUNT] = {
    [KS_FEATURE_OPPORTUNISTIC_BATCHING] = {"OpportunisticBatching", 1},
    [KS_FEATURE_NOMINATED_NODE_NAME_FOR_EXPECTATION] = {"NominatedNodeNameForExpectation", 1},
    [KS_FEATURE_SCHEDULER_POP_FROM_BACKOFF_Q] = {"SchedulerPopFromBackoffQ", 1},
    [KS_FEATURE_GENERIC_WORKLOAD] = {"GenericWorkload", 0},
};

int ks__feature_enabled(ks_feature f) { return f < KS_FEATURE_COUNT && gates[f].enabled; }

/* strconv.ParseBool, as upstream's featuregate.Set reads the values. */
static int parse_bool(const char *s, size_t n, int *out)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strlen(yes[i]) == n && !strncmp(s, yes[i], n))
            return *out = 1, 0;
        if (strlen(no[i]) == n && !strncmp(s, no[i], n))
            return *out = 0, 0;
    }
    return -1;
}

int ks__feature_gates_set(const char *spec, char *err, size_t errlen)
{
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq) {
            snprintf(err, errlen,
                     "--feature-gates: missing bool value for %.*s (write %.*s=true "
                     "or %.*s=false)",
                     (int)len, p, (int)len, p, (int)len, p);
            return KS_EINVAL;
        }
        size_t nlen = (size_t)(eq - p);
        int found = -1;
        for (int f = 0; f < KS_FEATURE_COUNT; f++)
            if (strlen(gates[f].name) == nlen && !strncmp(gates[f].name, p, nlen))
                found = f;
        if (found < 0) {
            snprintf(err, errlen,
                     "--feature-gates: unrecognized feature gate: %.*s (kubesched knows "
                     "OpportunisticBatching, NominatedNodeNameForExpectation, "
                     "SchedulerPopFromBackoffQ, GenericWorkload)",
                     (int)nlen, p);
            return KS_EINVAL;
        }
        int v;
        if (parse_bool(eq + 1, len - nlen - 1, &v) != 0) {
            snprintf(err, errlen,
                     "--feature-gates: invalid value of %.*s: %.*s, err: expected "
                     "true or false",
                     (int)nlen, p, (int)(len - nlen - 1), eq + 1);
            return KS_EINVAL;
        }
        gates[found].enabled = v;
        if (found == KS_FEATURE_GENERIC_WORKLOAD) /* the default profile depends on it */
            ks__cfg_set_generic_workload(v);
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}
