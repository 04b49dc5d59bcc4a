/*
 * PodTopologySpreadArgs (upstream types_pluginargs.go, SetDefaults_PodTopologySpreadArgs,
 * ValidatePodTopologySpreadArgs): the schema kubesched checks and defaults while it loads the
 * configuration, and the rules across fields, with upstream's messages and field paths.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "podtopologyspread_int.h"
#include "../common/args.h"

static const ks_arg_field constraint_fields[] = {
    {"maxSkew", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
    {"topologyKey", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"whenUnsatisfiable", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"labelSelector", KS_ARG_ANY, NULL, NULL, 0, 0, 0},
    {"minDomains", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
    {"nodeAffinityPolicy", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"nodeTaintsPolicy", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"matchLabelKeys", KS_ARG_STRING_LIST, NULL, NULL, 0, 0, 0},
};
static const ks_args_schema constraint = KS_ARGS_SCHEMA(NULL, constraint_fields);
static const ks_arg_field fields[] = {
    {"defaultConstraints", KS_ARG_OBJECT_LIST, &constraint, NULL, 0, 0, 0},
    /* An empty string is System too, printed after the other keys as upstream's order has it. */
    {"defaultingType", KS_ARG_STRING, NULL, "\"System\"",
     KS_ARG_DEFAULT_IF_ZERO | KS_ARG_DEFAULT_LAST, 0, 0},
};
const ks_args_schema pts_args_schema = KS_ARGS_SCHEMA("PodTopologySpreadArgs", fields);

static int validate_constraint(const ks_args *a, size_t i, ks_args_error *err)
{
    char p[64], q[96];
    const char *key, *when, *why;
    int64_t skew;
    snprintf(p, sizeof(p), "defaultConstraints[%zu]", i);
    snprintf(q, sizeof(q), "%s.maxSkew", p);
    if ((skew = ks_h_args_int(a, q, 0)) <= 0)
        return ks_args_fail(err, q, "Invalid value: %" PRId64 ": not in valid range (0, inf)",
                            skew);
    snprintf(q, sizeof(q), "%s.topologyKey", p);
    key = ks_h_args_str(a, q);
    if (!key || !key[0])
        return ks_args_fail(err, q, "Required value: can not be empty");
    if ((why = ks_h_qualified_name_why(key)))
        return ks_args_invalid(err, q, "%s", why);
    snprintf(q, sizeof(q), "%s.whenUnsatisfiable", p);
    when = ks_h_args_str(a, q);
    if (!when || !when[0])
        return ks_args_fail(err, q, "Required value: can not be empty");
    if (strcmp(when, "DoNotSchedule") != 0 && strcmp(when, "ScheduleAnyway") != 0)
        return ks_args_fail(err, q,
                            "Unsupported value: \"%s\": supported values: \"DoNotSchedule\", "
                            "\"ScheduleAnyway\"",
                            when);
    snprintf(q, sizeof(q), "%s.labelSelector", p);
    if (ks_h_args_has(a, q))
        return ks_args_fail(err, q,
                            "Forbidden: constraint must not define a selector, as they deduced "
                            "for each pod");
    for (size_t j = 0; j < i; j++) {
        const char *ok, *ow;
        snprintf(q, sizeof(q), "defaultConstraints[%zu].topologyKey", j);
        ok = ks_h_args_str(a, q);
        snprintf(q, sizeof(q), "defaultConstraints[%zu].whenUnsatisfiable", j);
        ow = ks_h_args_str(a, q);
        if (ok && ow && strcmp(ok, key) == 0 && strcmp(ow, when) == 0)
            return ks_args_fail(err, p, "Duplicate value: \"{%s, %s}\"", key, when);
    }
    return 0;
}

int pts_validate_args(const ks_args *a, ks_args_error *err)
{
    const char *type = ks_h_args_str(a, "defaultingType");
    size_t n = ks_h_args_len(a, "defaultConstraints");
    if (!type || (strcmp(type, "System") != 0 && strcmp(type, "List") != 0))
        return ks_args_fail(err, "defaultingType",
                            "Unsupported value: \"%s\": supported values: \"System\", \"List\"",
                            type ? type : "");
    if (strcmp(type, "System") == 0 && n > 0)
        return ks_args_fail(err, "defaultingType",
                            "Invalid value: \"System\": when .defaultConstraints are not empty");
    for (size_t i = 0; i < n; i++)
        if (validate_constraint(a, i, err) != 0)
            return KS_EINVAL;
    return 0;
}
